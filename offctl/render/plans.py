"""The plans of reset, restore, migrate and delete: their `--output json` documents, their tables for people (rows,
cost, guards, warnings), what happened in words, and the confirmation question asked before a write."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from offctl.core.plans.cost import cost_lines, describe, undo_cost
from offctl.core.plans.plan import DELETE, SKIP, UNCHANGED, WRITE, Change, Plan
from offctl.core.plans.plancost import ChangeCost, CostSum, PlanCost
from offctl.core.records.model import JSTORM, KAFKA, TRIDENT, ZK_STORES, ZOOKEEPER, ConsumerKey, iso_ms
from offctl.core.results.repair import RepairResult
from offctl.render.formats import dumps, number, plural, table_console


def change_dict(c: Change) -> dict:
    """A change's row in the plans' JSON (`--output json` of reset, restore, migrate, delete and audit --repair,
    and the MCP plan answers), before its undone_by and cost keys."""
    return {
        "topic": c.topic,
        "partition": c.partition,
        "path": c.path,
        "before": c.before,
        "after": c.after,
        "delta": c.delta,
        "action": c.action,
        "reasons": list(c.reasons),
        "new_record": c.new_record,
        "left_out": c.left_out,
        "batch": c.batch,
    }


COST_FIELDS = ("direction", "messages", "messages_up_to", "first_timestamp", "last_timestamp", "span", "cost")


def cost_dict(cost: ChangeCost | None) -> dict:
    """A change's cost, beside its change_dict: every key null for a change that is not written."""
    if cost is None:
        return dict.fromkeys(COST_FIELDS)
    return {
        "direction": cost.direction,
        "messages": cost.messages,
        "messages_up_to": cost.up_to,
        "first_timestamp": iso_ms(cost.first_ms),
        "last_timestamp": iso_ms(cost.last_ms),
        "span": cost.span,
        "cost": describe(cost),
    }


def _sum_dict(s: CostSum) -> dict:
    return {
        "partitions": s.partitions,
        "messages": s.messages,
        "messages_up_to": s.up_to,
        "first_timestamp": iso_ms(s.first_ms),
        "last_timestamp": iso_ms(s.last_ms),
        "spans_unknown": s.spans_unknown,
    }


def plan_cost_dict(cost: PlanCost | None) -> dict | None:
    """A consumer's cost summed per direction, and the partitions with no previous position."""
    if cost is None:
        return None
    return {
        **{s.direction: _sum_dict(s) for s in (cost.replay, cost.skip)},
        "no_previous_position": cost.no_previous_position,
    }


def outcome_document(outcome: RepairResult) -> dict:
    """The `--output json` document of reset, restore and migrate (one shape for all three)."""
    plan = outcome.plan
    actions = Counter(c.action for c in plan.changes)
    costs = plan.cost.changes if plan.cost else (None,) * len(plan.changes)
    return {
        "operation": plan.operation,
        **plan.key.fields(),
        "from": str(plan.source) if plan.source else None,
        "target": plan.target,
        "captured_at": iso_ms(plan.captured_ms),
        "mode": "execute" if outcome.executed or outcome.declined else "dry-run",
        "executed": outcome.executed,
        "declined": outcome.declined,
        "changes": [
            {**change_dict(c), "undone_by": plan.undone_by(c), **cost_dict(cost)}
            for c, cost in zip(plan.changes, costs, strict=True)
        ],
        "cost": plan_cost_dict(plan.cost),
        "guards": [{"guard": g.guard, "status": g.status, "message": g.message} for g in plan.guards],
        "warnings": list(plan.warnings),
        "summary": {
            "write": actions[WRITE],
            "unchanged": actions[UNCHANGED],
            "skip": actions[SKIP],
            "delete": actions[DELETE],
            "left_out": len(plan.left_out),
        },
        "backup": str(outcome.backup) if outcome.backup else None,
        "verified": outcome.verified,
        "problems": list(outcome.problems),
        "notes": list(outcome.notes),
        "audit_log": str(outcome.audit_log) if outcome.audit_log else None,
        "undo": outcome.undo,
        "undo_cost": plan_cost_dict(undo_cost(plan)) if outcome.undo else None,
        "result": outcome_result(outcome),
        "error": outcome.error,
    }


def outcome_result(outcome: RepairResult) -> str:
    """One word for what happened to a consumer: written, verification-failed, failed, refused, declined,
    unchanged (nothing to write) or dry-run."""
    if outcome.error:
        return "failed"
    if outcome.executed:
        return "written" if outcome.verified else "verification-failed"
    if outcome.plan.refused:
        return "refused"
    if outcome.declined:
        return "declined"
    return "dry-run" if outcome.plan.writes else "unchanged"


def outcomes_document(outcomes: Sequence[RepairResult]) -> dict:
    """The `--output json` document of a reset over several consumers: each consumer's document, and who
    ended how."""
    by: dict[str, list[str]] = {}
    for o in outcomes:
        by.setdefault(outcome_result(o), []).append(o.plan.key.consumer)
    first = outcomes[0] if outcomes else None
    return {
        "operation": first.plan.operation if first else "reset",
        "target": first.plan.target if first else None,
        "mode": "execute" if any(o.executed or o.declined or o.error for o in outcomes) else "dry-run",
        "consumers": [outcome_document(o) for o in outcomes],
        "results": by,
    }


_ACTION_STYLE = {"write": "bold", "create": "bold green", "unchanged": "dim", "skip": "yellow", "delete": "bold red"}


_GUARD_STYLE = {"pass": "green", "refused": "bold red", "overridden": "yellow", "not-applicable": "dim"}


def write_plan_table(outcome: RepairResult, console: Console) -> None:
    """The plan of an outcome for people: write_plan."""
    write_plan(outcome.plan, console)


def write_plan(plan: Plan, console: Console) -> None:
    """The plan for people: one row per partition, its cost, then the guards and the warnings."""
    where = f" from {plan.source}" if plan.source else ""
    console.print(f"{plan.operation} {plan.key}{where} -> {plan.target}", style="bold")
    if plan.key.store == JSTORM:
        console.print(JSTORM_COLUMNS, soft_wrap=True)
    console.print(_changes_table(plan))
    _write_plan_notes(plan, console)


# offctl.core.plans.jstorm: a JStorm spout's plan keeps the offsets it stores, as inspect's `committed` does
JSTORM_COLUMNS = "  Before and After are the offsets stored: JStorm's spout fetches each + 1 first"


def _changes_table(plan: Plan) -> Table:
    """The plan's changes, one row per partition: before, after, delta, action, why, and the cost where costed."""
    table = Table(title_justify="left")
    table.add_column("Topic", overflow="fold")
    for col in ("Partition", "Before", "After", "Delta"):
        table.add_column(col, justify="right")
    table.add_column("Action")
    table.add_column("Why", overflow="fold")
    if plan.cost is not None:
        table.add_column("Cost", overflow="fold")
    costs = plan.cost.changes if plan.cost else ()
    for i, c in enumerate(plan.changes):
        delta = "-" if c.delta is None else f"{c.delta:+,}"
        cost = [describe(costs[i]) if costs[i] else ""] if costs else []
        action = "create" if c.new_record else c.action  # a write that creates the node (JSON: new_record)
        table.add_row(
            c.topic or "?",
            str(c.partition),
            number(c.before),
            number(c.after),
            delta,
            Text(action, style=_ACTION_STYLE[action]),
            "; ".join(c.reasons),
            *cost,
        )
    return table


def _write_plan_notes(plan: Plan, console: Console) -> None:
    """What follows the plan's table: its cost in words (when it writes), each guard's verdict, the warnings."""
    if plan.cost is not None and plan.writes:
        for line in cost_lines(plan.cost):
            console.print(f"  cost: {line}", style="bold", soft_wrap=True)
    for g in plan.guards:
        line = Text("  guard ")
        line.append(f"{g.guard:<17}", style="bold")
        line.append(f"{g.status:<15}", style=_GUARD_STYLE[g.status])
        line.append(g.message)
        console.print(line, soft_wrap=True)
    for w in plan.warnings:
        console.print(f"  warning: {w}", style="yellow", soft_wrap=True)


def outcome_lines(outcome: RepairResult) -> list[str]:
    """What happened, in words: after the plan (table) or on stderr (json)."""
    unwritten = _unwritten_lines(outcome)
    return unwritten if unwritten is not None else _written_lines(outcome)


def _unwritten_lines(outcome: RepairResult) -> list[str] | None:
    """Why nothing was written (a failure, a refusal, a no, nothing to change, a dry run); None when it was."""
    plan = outcome.plan
    n = len(plan.writes)
    if outcome.error:
        return [outcome.error]
    if plan.refused:
        return [f"nothing was written: {len(plan.refused)} guard(s) refused"]
    if outcome.declined:
        return []  # said on stderr (outcome_errors), exit 8
    if not plan.changes and plan.operation != "restore":  # why, when the plan says (e.g. a group with no commits)
        return [f"nothing was written: {'; '.join(plan.warnings) or f'nothing to {plan.operation}'}"]
    if not n:
        return _nothing_to_change(plan)
    if not outcome.executed:
        return [f"dry run: {n} partition(s) would change; nothing was written. Add --execute to apply"]
    return None


def _nothing_to_change(plan: Plan) -> list[str]:
    """Why a plan that writes nothing wrote nothing: partitions left out, or every one already where it goes."""
    if plan.left_out:
        if plan.operation == "restore":
            return [
                f"nothing was written: {len(plan.left_out)} partition(s) cannot be undone (see 'why'; exit 7); "
                f"the others are already as before the write"
            ]
        return [
            f"nothing to change: {len(plan.left_out)} asked-for partition(s) left out (see 'why'), "
            f"nothing was written (exit 7)"
        ]
    if plan.operation == "restore":  # a write cut off before it landed, or a restore run again
        return ["nothing to change: every partition holds its before-image already; nothing was written"]
    return ["nothing to change: every selected partition is already there or skipped"]


def _written_lines(outcome: RepairResult) -> list[str]:
    """What a write did: what it wrote, its backup and undo line (with the undo's cost), audit log, read-back."""
    plan = outcome.plan
    n = len(plan.writes)
    done = (
        f"deleted {n} record(s) of {plan.key}"
        if plan.operation == "delete"
        else f"deleted {plan.key} and its {n} commit(s)"
        if plan.key.store == KAFKA and plan.writes[0].delete
        else f"wrote {n} partition(s) of {plan.key}"
    )
    undo = undo_cost(plan)
    cost = f"  # {'; '.join(cost_lines(undo, at_least_once=False))}" if undo else ""
    lines = [
        done,
        f"backup: {outcome.backup}",
        f"undo with: {outcome.undo or f'offctl restore {outcome.backup} --execute'}{cost}",
    ]
    if outcome.audit_log:
        lines.append(f"audit log: {outcome.audit_log}")
    return lines + (["verified: read back as planned"] if outcome.verified else [])


def outcome_errors(outcome: RepairResult) -> list[str]:
    """What went wrong, for stderr whatever the output format."""
    return (
        ([f"{outcome.plan.key}: {outcome.error}"] if outcome.error else [])
        + (["not confirmed: nothing was written"] if outcome.declined else [])
        + (
            [f"refused by {g.guard}: {g.message}" for g in outcome.plan.refused]
            + [f"verification failed: {p}" for p in outcome.problems[:10]]
            + (
                [f"verification failed on {len(outcome.problems) - 10} more partition(s)"]
                if len(outcome.problems) > 10
                else []
            )
            + list(outcome.notes)
        )
    )


def write_outcome(outcome: RepairResult, fmt: str, out: IO[str], err: Console, *, plan_shown: bool = False) -> None:
    """One consumer's plan and result. `plan_shown`: the confirmation already printed the plan on `out`."""
    if fmt == "json":
        out.write(dumps(outcome_document(outcome)) + "\n")
        for line in outcome_lines(outcome):
            err.print(line)
        return
    console = table_console(out)
    if not plan_shown:
        write_plan_table(outcome, console)
    for line in outcome_lines(outcome):  # a plan of no rows has no data: what happened is a note, on stderr
        (console if outcome.plan.changes else err).print(line, soft_wrap=True)


def write_outcomes(
    outcomes: Sequence[RepairResult], fmt: str, out: IO[str], err: Console, *, plan_shown: bool = False
) -> None:
    """Several consumers' plans and results, then one line per result saying which consumers."""
    doc = outcomes_document(outcomes)
    if fmt == "json":
        out.write(dumps(doc) + "\n")
        console = err
    else:
        console = table_console(out)
        for outcome in outcomes:
            if not plan_shown:
                write_plan_table(outcome, console)
            for line in outcome_lines(outcome):
                console.print(f"{outcome.plan.key}: {line}", soft_wrap=True)
    for result, names in doc["results"].items():
        console.print(f"{result}: {plural(len(names), 'consumer')} ({', '.join(names)})", soft_wrap=True)


_VERBS = {"reset": "Reset", "restore": "Restore", "migrate": "Migrate", "delete": "Delete"}


def consumer_words(key: ConsumerKey) -> str:
    """A consumer as the confirmation names it: spout ID (zkRoot R), Trident spout ID (Trident root R), JStorm spout
    TOPIC/CLIENT_ID (JStorm root R), group G."""
    if key.store == ZOOKEEPER:
        return f"spout {key.consumer} (zkRoot {key.zk_root})"
    if key.store == TRIDENT:
        return f"Trident spout {key.consumer} (Trident root {key.zk_root})"
    if key.store == JSTORM:
        return f"JStorm spout {key.consumer} (JStorm root {key.zk_root})"
    return f"group {key.consumer}"


def confirm_question(plans: Sequence[Plan], zk: str | None, kafka: str | None, sandbox: bool = False) -> str:
    """What the write does, to whom and on which cluster, asked once for every plan:
    'Reset 1 partition of group g on Kafka k1:9092?'; ' (the sandbox)' when those are the sandbox's servers."""
    operations = {p.operation for p in plans}
    verb = _VERBS.get(operations.pop(), "Write") if len(operations) == 1 else "Write"
    n = sum(len(p.writes) for p in plans)
    unit = "record" if all(p.operation == "delete" for p in plans) else "partition"
    whom = consumer_words(plans[0].key) if len(plans) == 1 else f"{len(plans)} consumers"
    servers = []
    if any(p.key.store in ZK_STORES for p in plans):
        servers.append(f"ZooKeeper {zk}")
    if any(p.key.store not in ZK_STORES for p in plans):
        servers.append(f"Kafka {kafka}")
    return f"{verb} {plural(n, unit)} of {whom} on {' and '.join(servers)}{' (the sandbox)' if sandbox else ''}?"
