"""`offctl mcp`'s writes, in two steps: plan tools that write nothing, and `apply`, which writes a plan only with a
human's yes (docs/mcp.md, "Plans and apply").

The plans are offctl.faces.mcp.plans': each bound to every before-value it saw and its guards' verdicts, kept in
memory for its lifetime (ten minutes). `apply` runs offctl.faces.mcp.apply.apply in a worker thread: the library
reads the stores again, compares, and calls back just before the write; the callback asks the human through MCP
elicitation (form mode), shown the plan's table and cost, and waits for the answer with the stores open. A client
that cannot elicit gets a refusal that names the offctl command line to run by hand."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ClientCapabilities, ElicitationCapability, FormElicitationCapability, ToolAnnotations
from pydantic import BaseModel, Field

from offctl.core.results.mcp import ApplyResult
from offctl.faces.mcp import plans as mcpplans
from offctl.faces.mcp.apply import apply
from offctl.faces.mcp.server import DATA_NOTE, ContextArg, Face, Run, answer, tool_errors
from offctl.render import mcp as documents

PLANNING = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=False, openWorldHint=False)
APPLYING = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)
Partitions = Annotated[str | None, Field(description="Only these partitions, as `offctl reset --partitions`: 0-3,7.")]
Topics = Annotated[list[str] | None, Field(description="Only these topics' partitions.")]
ZkRoot = Annotated[
    str | None,
    Field(
        description="The zkRoot (or Trident or JStorm root) among the context's; needed when the context has several."
    ),
]
PLAN_NOTE = (
    " Writes nothing: it returns a plan_id bound to the state it read, with the plan's changes, cost, guards "
    "and the command an operator would run; `apply` writes it, with a human's yes."
)


class Yes(BaseModel):
    """What the human is asked: a yes or no, nothing else (elicitation takes primitive fields only)."""

    apply: bool = Field(description="Write this plan to the cluster")


def plans_run(run: Run) -> mcpplans.WriteTarget:
    """The plans' view of a context: its servers, the spout profile of what is written, what a write keeps."""
    if run.safety is None:
        raise ValueError(f"context {run.name} has no safety settings")
    return mcpplans.WriteTarget(
        context=run.name,
        conn=run.conn,
        backup_dir=run.safety.backup_dir,
        audit_log=run.safety.audit_log,
        quiet_period_s=run.safety.quiet_period_s,
        profile=run.written_profile or mcpplans._no_profile,
        cli_context=run.cli_context,
    )


def can_elicit(ctx: Context) -> bool:
    """Whether this client said it can ask its user a form (the elicitation capability, form mode)."""
    try:
        return ctx.session.check_client_capability(
            ClientCapabilities(elicitation=ElicitationCapability(form=FormElicitationCapability()))
        )
    except Exception:  # noqa: BLE001 - a session that cannot say: treated as one that cannot ask
        return False


async def ask(ctx: Context, text: str) -> bool:
    """The human's answer to the plan: yes only for an accepted form with apply true; a decline, a cancel, or an
    elicitation that fails is no."""
    result = await ctx.elicit(f"offctl asks before it writes:\n\n{text}\n\nApply this plan?", schema=Yes)
    return result.action == "accept" and bool(getattr(result.data, "apply", False))


def register_plan_tools(server: MCPServer, face: Face, plans: mcpplans.PlanStore) -> None:
    """Add the plan tools (reset, restore, migrate, delete) and `apply` to the server."""

    def plan_reset(
        consumer: Annotated[
            str,
            Field(
                description="Spout id (zookeeper), group id (kafka), Trident txStateId (trident) or a JStorm spout's "
                "TOPIC/CLIENT_ID (jstorm)."
            ),
        ],
        to: Literal["earliest", "latest", "current", "offset", "time", "shift"],
        store: Annotated[
            Literal["zookeeper", "kafka", "trident", "jstorm"],
            Field(description="Where the consumer keeps its offsets."),
        ] = "zookeeper",
        value: Annotated[
            str | int | None,
            Field(description="offset: the offset; shift: +N or -N; time: ISO-8601 with a zone, or epoch ms."),
        ] = None,
        topics: Topics = None,
        partitions: Partitions = None,
        zk_root: ZkRoot = None,
        topology_id: Annotated[
            str | None, Field(description="kafka: the Storm topology id the commits are written for.")
        ] = None,
        no_storm_metadata: bool = False,
        context: ContextArg = None,
    ) -> dict[str, Any]:
        """Plan a reset of one spout, group, Trident or JStorm spout, as `offctl reset` plans it (the poison-message
        fix: to shift, value +1, one partition). A JStorm spout fetches its stored offset + 1: the target is where it
        fetches first."""
        with tool_errors():
            run = plans_run(face.run(context))
            return answer(
                documents.stored_plan(
                    plans.plan_reset(
                        run,
                        store=store,
                        consumer=consumer,
                        to=to,
                        value=value,
                        topics=topics,
                        partitions=partitions,
                        zk_root=zk_root,
                        topology_id=topology_id,
                        no_storm_metadata=no_storm_metadata,
                    )
                )
            )

    def plan_restore(
        backup: Annotated[
            str, Field(description="A backup's file name in the context's backup directory (an apply's `backup`).")
        ],
        context: ContextArg = None,
    ) -> dict[str, Any]:
        """Plan putting a backup's before-image back, as `offctl restore` does: the undo of an earlier write."""
        with tool_errors():
            return answer(documents.stored_plan(plans.plan_restore(plans_run(face.run(context)), backup=backup)))

    def plan_migrate(
        spout: str,
        group: str,
        topology_id: Annotated[str, Field(description="The storm-kafka-client topology's id.")],
        topic: str | None = None,
        partitions: Partitions = None,
        zk_root: ZkRoot = None,
        context: ContextArg = None,
    ) -> dict[str, Any]:
        """Plan moving a storm-kafka spout's offsets into the group of its storm-kafka-client successor, as
        `offctl migrate` does."""
        with tool_errors():
            return answer(
                documents.stored_plan(
                    plans.plan_migrate(
                        plans_run(face.run(context)),
                        spout=spout,
                        group=group,
                        topology_id=topology_id,
                        topic=topic,
                        partitions=partitions,
                        zk_root=zk_root,
                    )
                )
            )

    def plan_delete(
        spout: Annotated[str, Field(description="Spout id (zookeeper) or a JStorm spout's TOPIC/CLIENT_ID (jstorm).")],
        topics: Topics = None,
        partitions: Partitions = None,
        record_topic: Annotated[str | None, Field(description="Only records naming this topic.")] = None,
        written_by: Annotated[
            str | None, Field(description="Only records this topology (storm id or name) wrote.")
        ] = None,
        all_records: bool = False,
        zk_root: ZkRoot = None,
        store: Annotated[
            Literal["zookeeper", "jstorm"], Field(description="Where the spout keeps its offsets.")
        ] = "zookeeper",
        context: ContextArg = None,
    ) -> dict[str, Any]:
        """Plan deleting a storm-kafka or JStorm spout's records, as `offctl delete` does (a restore creates them
        again)."""
        with tool_errors():
            return answer(
                documents.stored_plan(
                    plans.plan_delete(
                        plans_run(face.run(context)),
                        spout=spout,
                        topics=topics,
                        partitions=partitions,
                        record_topic=record_topic,
                        written_by=written_by,
                        all_records=all_records,
                        zk_root=zk_root,
                        store=store,
                    )
                )
            )

    async def apply_plan(
        plan_id: Annotated[str, Field(description="The plan_id a plan tool returned.")], ctx: Context
    ) -> dict[str, Any]:
        """Write a plan: only on a server started with --allow-writes, before the plan expires, when every value
        it read is unchanged and its guards pass again, and after a human, shown the plan and its cost, says yes.
        Returns the backup, the audit-log lines and the undo (a restore plan, or the command line)."""
        elicit = can_elicit(ctx)

        def confirm(text: str) -> bool:
            return anyio.from_thread.run(ask, ctx, text)

        def write() -> ApplyResult:
            return apply(plans, plan_id, allow_writes=face.allow_writes, confirm=confirm if elicit else None)

        with tool_errors():
            result = await anyio.to_thread.run_sync(write)
            return answer(documents.apply_result(result))

    for fn, name, note, hints in (
        (plan_reset, "plan_reset", PLAN_NOTE, PLANNING),
        (plan_restore, "plan_restore", PLAN_NOTE, PLANNING),
        (plan_migrate, "plan_migrate", PLAN_NOTE, PLANNING),
        (plan_delete, "plan_delete", PLAN_NOTE, PLANNING),
        (apply_plan, "apply", "", APPLYING),
    ):
        description = " ".join((fn.__doc__ or "").split()) + note + DATA_NOTE
        server.add_tool(fn, name=name, description=description, annotations=hints, structured_output=True)
