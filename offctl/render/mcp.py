"""The documents `offctl mcp`'s tools answer with (docs/mcp.md), made from the result objects.

Every read answer is the JSON contract's documents (render.report.report_document, render.peek.peek_document, ...),
worst first and cut to a page; the plan and apply answers are the plan's dry run (render.plans.outcome_document), the
state it is bound to and what a human is shown. The MCP face (offctl.faces.mcp) reads, plans and applies, takes the
paging arguments and quotes what comes from the data (offctl.faces.mcp.quoting); the shape of what it answers is made
here.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from rich.console import Console

from offctl.core.plans.plan import Plan
from offctl.core.records.findings import Code
from offctl.core.records.model import Report, Severity, Thresholds, iso_ms
from offctl.core.results.mcp import ApplyResult, Seen, State, StoredPlan
from offctl.core.results.peek import PeekResult
from offctl.core.results.repair import RepairResult
from offctl.render.formats import dumps
from offctl.render.peek import peek_document
from offctl.render.plans import confirm_question, outcome_document, outcomes_document, write_plan
from offctl.render.report import report_document
from offctl.settings.connection import Connection

MAX_ITEMS = 100  # the items of a list an answer holds at most: a page (the server's MAX_LIMIT), or notes
MAX_HEADERS = 20  # headers a previewed message shows (a record may carry thousands)

_RANK = {s.label: int(s) for s in Severity}


class NamedContext(Protocol):
    """A context as `contexts` lists it (the MCP face's Run): its name and the connection it reads through."""

    @property
    def name(self) -> str: ...

    @property
    def conn(self) -> Connection: ...


def _rank(status: str | None) -> int:
    return _RANK.get(status or "ok", 0)


# --- pages, bounds and order ------------------------------------------------------------------------------------


def page(items: list[dict], limit: int, offset: int) -> dict[str, Any]:
    """One page of `items`: the items, how many in all, and the offset of the next page (None: the last)."""
    end = offset + limit
    return {
        "items": items[offset:end],
        "total": len(items),
        "offset": offset,
        "next_offset": end if end < len(items) else None,
    }


def few(lines: list[str], limit: int = MAX_ITEMS) -> list[str]:
    """At most `limit` lines of notes (the last one saying how many more there were): every answer is bounded."""
    return lines if len(lines) <= limit else [*lines[: limit - 1], f"... and {len(lines) - limit + 1} more"]


def few_headers(partitions: list[dict]) -> list[dict]:
    """Peek's partitions with at most MAX_HEADERS headers a message; `headers_total` where there were more."""
    for p in partitions:
        for m in p["messages"]:
            if len(m["headers"]) > MAX_HEADERS:
                m["headers_total"], m["headers"] = len(m["headers"]), m["headers"][:MAX_HEADERS]
    return partitions


def worst_consumers_first(consumers: list[dict]) -> list[dict]:
    """Worst status first, then the largest lag, then by name (ties stay put in the report's order)."""
    return sorted(consumers, key=lambda c: (-_rank(c["status"]), -(c["max_lag"] or 0), c["consumer"]))


def worst_partitions_first(partitions: list[dict]) -> list[dict]:
    return sorted(partitions, key=lambda p: (-_rank(p["status"]), -(p["lag"] or 0)))


def worst_findings_first(findings: list[dict]) -> list[dict]:
    return sorted(findings, key=lambda f: -_rank(f["severity"]))


def _found(consumer: str, store: str | None) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an object of a document (consumer, partition, finding) is this consumer's, in `store` if named."""

    def mine(d: Mapping[str, Any]) -> bool:
        return d["consumer"] == consumer and (store is None or d["store"] == store)

    return mine


def _later(*offsets: int | None) -> int | None:
    return max((o for o in offsets if o is not None), default=None)


# --- the read tools ---------------------------------------------------------------------------------------------


def fleet(context: str, report: Report, status: str | None, limit: int, offset: int) -> dict[str, Any]:
    """`fleet`: the report's consumers worst first (at or above `status`), one page of them, and the fleet's summary."""
    doc = report_document(report)
    consumers = worst_consumers_first(doc["consumers"])
    if status is not None:
        consumers = [c for c in consumers if _rank(c["status"]) >= _rank(status)]
    got = page(consumers, limit, offset)
    codes = {code for c in got["items"] for code in c["finding_codes"]}
    return {
        "context": context,
        "document_version": doc["document_version"],
        "captured_at": doc["captured_at"],
        "summary": doc["summary"],
        "consumers": got["items"],
        "total": got["total"],
        "offset": offset,
        "next_offset": got["next_offset"],
        "hints": {k: v for k, v in doc["hints"].items() if k in codes},
        "notes": few(doc["notes"]),
        "incomplete": few(doc["incomplete"]),
        "checks_skipped": few(doc["checks_skipped"]),
        "spout_settings": doc["spout_settings"],
        "processing_guarantee": doc["processing_guarantee"],
        "offsets_retention": doc["offsets_retention"],
    }


def consumer(
    context: str,
    report: Report,
    name: str,
    store: str | None,
    limit: int,
    offset: int,
    profile: tuple[str | None, Thresholds],
) -> dict[str, Any]:
    """`consumer`: one consumer of the report, its partitions and findings worst first (a page of each), and the
    `profile` that judges it (Profiles.resolve's answer: its name and thresholds)."""
    doc = report_document(report)
    mine = _found(name, store)
    consumers = [c for c in doc["consumers"] if mine(c)]
    findings = [f for f in doc["findings"] if mine(f)]
    if consumers:  # read in one store: the other stores' "not found" is no news
        findings = [f for f in findings if f["code"] != "CONSUMER_NOT_FOUND"]
    partitions = page(worst_partitions_first([p for p in doc["partitions"] if mine(p)]), limit, offset)
    findings_page = page(worst_findings_first(findings), limit, offset)
    profile_name, thresholds = profile
    return {
        "context": context,
        "document_version": doc["document_version"],
        "captured_at": doc["captured_at"],
        "consumers": consumers,
        "partitions": partitions["items"],
        "partitions_total": partitions["total"],
        "findings": findings_page["items"],
        "findings_total": findings_page["total"],
        "offset": offset,
        "next_offset": _later(partitions["next_offset"], findings_page["next_offset"]),
        "hints": {k: v for k, v in doc["hints"].items() if any(f["code"] == k for f in findings)},
        "profile": profile_name,
        "spout_settings": thresholds.spout.describe(),
        "processing_guarantee": doc["processing_guarantee"],
        "offsets_retention": doc["offsets_retention"],
        "notes": few(doc["notes"]),
        "incomplete": few(doc["incomplete"]),
        "checks_skipped": few(doc["checks_skipped"]),
    }


def peek(context: str, result: PeekResult, name: str, store: str | None, limit: int, offset: int) -> dict[str, Any]:
    """`peek`: the consumer's peeked partitions, largest lag first (a page), and the consumers not found."""
    doc = peek_document(result)
    mine = _found(name, store)
    got = page(sorted((p for p in doc["partitions"] if mine(p)), key=lambda p: -(p["lag"] or 0)), limit, offset)
    not_found = few([f.message for f in result.report.findings if f.code == "CONSUMER_NOT_FOUND"])
    return {
        "context": context,
        "captured_at": doc["captured_at"],
        "count": doc["count"],
        "partitions": few_headers(got["items"]),
        "total": got["total"],
        "offset": offset,
        "next_offset": got["next_offset"],
        "not_found": not_found if not doc["partitions"] else [],
        "notes": few(doc["notes"]),
        "incomplete": few(doc["incomplete"]),
    }


def finding(entry: Code) -> dict[str, Any]:
    """A finding code's catalogue entry (core.records.findings.CATALOGUE): `finding`, and each item of the catalogue."""
    return {"code": entry.code, "severity": entry.severity.label, "when": entry.when, "hint": entry.hint}


def catalogue(entries: Iterable[Code]) -> str:
    """The resource offctl://findings: the catalogue's entries as JSON."""
    return dumps([finding(c) for c in entries])


def settings(
    context: str,
    settings_doc: Mapping[str, Any],
    name: str | None = None,
    profile: tuple[str | None, Thresholds] | None = None,
) -> dict[str, Any]:
    """`settings`: the context's settings document (`offctl config show -o json`'s, secrets masked); with a consumer
    `name`, the `profile` that judges it (Profiles.resolve's answer)."""
    doc: dict[str, Any] = {"context": context, **settings_doc}
    if name is not None:
        profile_name, thresholds = profile
        doc["consumer"] = {
            "consumer": name,
            "profile": profile_name,
            "spout_settings": thresholds.spout.describe(),
            "topic": thresholds.expected_topic,
            "lag_threshold": thresholds.lag_threshold,
        }
    return doc


def contexts(default_context: str, allow_writes: bool, runs: Iterable[NamedContext]) -> dict[str, Any]:
    """`contexts`: each run's context by name (`name`, `conn`) with the stores it reaches (never their addresses or
    credentials)."""
    return {
        "default_context": default_context,
        "allow_writes": allow_writes,
        "contexts": [
            {
                "name": r.name,
                "zookeeper": bool(r.conn.zk),
                "kafka": bool(r.conn.bootstrap_servers),
                "zk_roots": list(r.conn.zk_roots),
                "trident_roots": list(r.conn.trident_roots),
                "jstorm_roots": list(r.conn.jstorm_roots),
            }
            for r in runs
        ],
    }


# --- the plan and apply tools -----------------------------------------------------------------------------------


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def seen_change(c: Seen) -> dict:
    """One change as a plan saw and planned it (offctl.core.results.mcp.Seen): before-values and what it writes."""
    return {
        "where": c.where,
        "topic": c.topic,
        "partition": c.partition,
        "path": c.path,
        "version": c.version,
        "before": c.before,
        "before_data": _b64(c.before_data),
        "before_metadata": c.before_metadata,
        "had_commit": c.had_commit,
        "action": c.action,
        "after": c.after,
        "after_data": _b64(c.after_data),
        "after_metadata": c.after_metadata,
    }


def plan_state(s: State) -> dict:
    """One consumer's plan as bound (offctl.core.results.mcp.State)."""
    return {
        "consumer": s.consumer,
        "changes": [seen_change(c) for c in s.changes],
        "guards": [{"guard": g, "status": st} for g, st in s.guards],
        "group_had_commits": s.group_had_commits,
    }


def stored_plan(p: StoredPlan) -> dict:
    """A plan tool's answer (offctl.core.results.mcp.StoredPlan): its id, lifetime, dry run, text and state."""
    return {
        "plan_id": p.id,
        "kind": p.kind,
        "context": p.context,
        "request": p.request,
        "created": iso_ms(int(p.created * 1000)),
        "expires": iso_ms(int(p.expires * 1000)),
        "plan": p.document,
        "text": p.text,
        "refused": list(p.refused),
        "writes": p.writes,
        "state": [plan_state(s) for s in p.state],
        "command": p.command,
    }


def apply_result(r: ApplyResult) -> dict:
    """`apply`'s answer (offctl.core.results.mcp.ApplyResult)."""
    return {
        "plan_id": r.plan_id,
        "status": r.status,
        "reason": r.reason,
        "written": r.written,
        "backup": r.backup,
        "audit_log": r.audit_log,
        "audit": list(r.audit),
        "undo": r.undo,
        "verified": r.verified,
        "problems": list(r.problems),
        "notes": list(r.notes),
        "lines": list(r.lines),
        "command": r.command,
        "result": r.document,
    }


def plan_document(outcomes: Sequence[RepairResult]) -> dict:
    """A plan's dry run, or the run that wrote it, as `--output json` gives it: one consumer's document, or the
    document of several."""
    return outcome_document(outcomes[0]) if len(outcomes) == 1 else outcomes_document(list(outcomes))


def plan_text(plans: Sequence[Plan], conn: Connection, plan_id: str | None = None, expires: float | None = None) -> str:
    """The plan as the CLI shows it before its question (render.plans.write_plan: rows, cost, guards, warnings),
    in plain text, then the question naming the cluster."""
    from offctl.settings.sandbox import is_sandbox

    out = io.StringIO()
    console = Console(file=out, width=160, markup=False, highlight=False, color_system=None, emoji=False)
    for plan in plans:
        write_plan(plan, console)
    text = out.getvalue().rstrip("\n")
    if plans and any(p.writes for p in plans):
        question = confirm_question(
            [p for p in plans if p.writes],
            conn.zk,
            conn.bootstrap_servers,
            sandbox=is_sandbox(conn.zk, conn.bootstrap_servers),
        )
        text += f"\n{question}"
    if plan_id is not None and expires is not None:
        text += f"\n(plan {plan_id}, valid until {iso_ms(int(expires * 1000))})"
    return text
