"""The one renderer: a rich table for people, JSON or CSV for machines, all from the same Report.

stdout gets data only; notes, skipped checks and partial-read warnings go to stderr.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import IO

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from offctl.core.plans.cost import cost_lines, describe, undo_cost
from offctl.core.plans.plan import DELETE, SKIP, UNCHANGED, WRITE, Change
from offctl.core.plans.plancost import ChangeCost, CostSum, PlanCost
from offctl.core.records.findings import CATALOGUE
from offctl.core.records.model import (
    KAFKA,
    ConsumerSummary,
    Finding,
    Headroom,
    PartitionRow,
    Report,
    Severity,
    TimeLag,
    duration,
    iso_ms,
    ranges,
)
from offctl.core.time.expiry import Expiry
from offctl.core.time.retention import consumer_minima, headroom
from offctl.core.time.timelag import ESTIMATE, consumer_maxima, time_lag

PARTITION_FIELDS = (
    "store",
    "consumer",
    "zk_root",
    "topic",
    "partition",
    "committed",
    "log_start",
    "log_end",
    "lag",
    "status",
    "topology_id",
    "topology_name",
    "path",
    "version",
    "modified",
    "broker",
    "record_topic",
    "used",
    "time_lag_s",
    "time_lag_source",
    "retention_headroom_s",
    "retention_source",
    "commit_expiry_s",
    "commit_expiry_source",
    "last_stable_offset",
    "resumes_at",
    "resumes",
    "resumes_citation",
)


def partition_dict(row: PartitionRow, lag: TimeLag | None = None, room: Headroom | None = None) -> dict:
    """`topic` is the topic the offset is applied to (null when offctl cannot tell: a tie), `record_topic`
    the one the record names; `used` whether the spout can use the stored offset at all. With its time `lag`
    (timelag.time_lag), also that and where it comes from (the audit's rows have their own time lag), and the
    retention headroom with its source (retention.headroom; null both without a lag)."""
    r = row.record
    k = r.key  # its fields() spelled out here and in finding_dict: 300,000 calls in a broken fleet of 100,000
    d = {
        "store": k.store,
        "consumer": k.consumer,
        "zk_root": k.zk_root,
        "topic": row.topic,
        "partition": r.partition,
        "committed": r.committed,
        "log_start": row.log_start,
        "log_end": row.log_end,
        "last_stable_offset": row.last_stable,
        "lag": row.lag,
        "status": row.status.label if row.status else "ok",
        "topology_id": r.topology_id,
        "topology_name": r.topology_name,
        "path": r.path,
        "version": r.version,
        "modified": iso_ms(r.modified_ms),
        "broker": r.broker,
        "record_topic": r.topic,
        "used": r.malformed is None,
        **resumes_fields(row.resumes),
    }
    if lag is not None:
        d["time_lag_s"], d["time_lag_source"] = lag.seconds, lag.source
        d["retention_headroom_s"], d["retention_source"] = (room.seconds, room.source) if room else (None, None)
    return d


def partition_dicts(report: Report, lags: Iterable[TimeLag], rows: Iterable[PartitionRow] | None = None) -> list[dict]:
    """Every row (or these `rows` of the report) as the JSON document and the CSV give it: partition_dict with its
    time lag and retention headroom, then expiry_fields."""
    rooms, expiries, out = report.headrooms, report.commit_expiry, []
    for row, lag in zip(report.rows if rows is None else rows, lags):
        d = partition_dict(row, lag, headroom(row, rooms) if rooms else None)
        # Looked up only where something was estimated (a storm-kafka-client group): the key is a tuple per row.
        d.update(expiry_fields(expiries.get(row.partition_key) if expiries else None))
        out.append(d)
    return out


def expiry_fields(e: Expiry | None) -> dict:
    """A partition's estimated commit expiry (offctl.core.time.expiry): the seconds left before the broker may delete
    its commit (negative once past) and what the estimate comes from; both null where not estimated."""
    return {"commit_expiry_s": e.headroom_s if e else None, "commit_expiry_source": e.source if e else None}


def retention_dict(retention) -> dict | None:
    """The offsets.retention.minutes the commit expiry assumes, and where it comes from; None when not estimated."""
    if retention is None:
        return None
    return {"minutes": retention.minutes, "source": retention.source, "why": retention.why or None}


# The JSON document's version (docs/contract.md, "Document version"). 2: each code's hint is said once, in
# `hints`, not on each of its findings; version 1 had no such key.
DOCUMENT_VERSION = 2


def resumes_fields(resumes) -> dict:
    """`resumes_at`, `resumes` and `resumes_citation` of a outcomes.Resumption (all null for none)."""
    if resumes is None:
        return {"resumes_at": None, "resumes": None, "resumes_citation": None}
    return {"resumes_at": resumes.at, "resumes": resumes.kind.value, "resumes_citation": resumes.citation_text()}


def finding_dict(f: Finding) -> dict:
    """A finding in the JSON document. Its `hint` only where it is not its code's (those are in `hints`, once
    per code): an all-broken fleet of 100,000 partitions otherwise repeats them 200,000 times, 43 MB."""
    k = f.key
    d = {
        "code": f.code,
        "severity": f.severity.label,
        "store": k.store,
        "consumer": k.consumer,
        "zk_root": k.zk_root,
        "topic": f.topic,
        "partition": f.partition,
        "path": f.path,
        "message": f.message,
    }
    if f.hint != CATALOGUE[f.code].hint:
        d["hint"] = f.hint
    if f.resumes is not None:  # MISSING_PARTITION: where the spout starts the partition it names
        d.update(resumes_fields(f.resumes))
    return d


def hints_dict(codes: Iterable[str]) -> dict[str, str]:
    """What to do, once for each of these codes: {code: hint}, sorted by code as summary.by_code is."""
    return {code: CATALOGUE[code].hint for code in sorted(set(codes))}


def consumer_dict(c: ConsumerSummary) -> dict:
    return {
        **c.key.fields(),
        "topics": list(c.topics),
        "partitions": c.partitions,
        "total_lag": c.total_lag,
        "max_lag": c.max_lag,
        "status": c.worst.label if c.worst else "ok",
        "finding_codes": list(c.finding_codes),
        "findings": dict(zip(("error", "warning", "info"), c.by_severity)),
        "group_state": c.group_state,
        "members": c.members,
        "group_type": c.group_type,
        "group_protocol": c.group_protocol,
        "profile": c.profile,
    }


def consumer_dicts(report: Report, lags: list[TimeLag]) -> list[dict]:
    """Every consumer as the JSON document gives it: consumer_dict with its largest time lag (`lags`: the rows', in
    their order) and its smallest retention headroom."""
    maxima = consumer_maxima(report.rows, lags)
    minima = consumer_minima(report.rows, report.headrooms)
    return [
        {
            **consumer_dict(c),
            "max_time_lag_s": maxima[c.key].seconds if c.key in maxima else None,
            "min_retention_headroom_s": minima.get(c.key),
        }
        for c in report.consumers
    ]


def summary_dict(report: Report) -> dict:
    by_severity = {s.label: 0 for s in sorted(Severity, reverse=True)}
    by_code: dict[str, int] = defaultdict(int)
    for f in report.findings:
        by_severity[f.severity.label] += 1
        by_code[f.code] += 1
    worst = report.worst()
    return {
        "consumers": len(report.consumers),
        "partitions": len(report.rows),
        "total_lag": sum(c.total_lag for c in report.consumers),
        "findings": by_severity,
        "by_code": dict(sorted(by_code.items())),
        "status": worst.label if worst else "ok",
    }


def report_document(report: Report) -> dict:
    """The `--output json` document (docs/contract.md); keys are snake_case and stable within a version."""
    lags = time_lags(report)
    return {
        "document_version": DOCUMENT_VERSION,
        "captured_at": iso_ms(report.captured_ms),
        "partitions": partition_dicts(report, lags),
        "findings": [finding_dict(f) for f in report.findings],
        "hints": hints_dict(f.code for f in report.findings),
        "consumers": consumer_dicts(report, lags),
        "summary": summary_dict(report),
        "notes": list(report.notes),
        "incomplete": list(report.incomplete),
        "checks_skipped": list(report.checks_skipped),
        "spout_settings": report.spout_settings,
        "processing_guarantee": commits_dict(report.commits),
        "offsets_retention": retention_dict(report.offsets_retention),
    }


def commits_dict(said) -> dict | None:
    """What the storm-kafka-client groups' commits mean (commits.CommitBehaviour); None without such groups."""
    if said is None:
        return None
    return {
        "guarantee": said.guarantee,
        "committed_offset": said.committed,
        "commits": said.commits,
        "lag": said.lag,
        "restart": said.restart,
        "out_of_range": said.out_of_range,
        "sources": list(said.sources),
    }


def dumps(doc: object) -> str:
    """`doc` as compact, ASCII-only JSON: what json.dumps(doc, separators=(",", ":")) writes, value for value."""
    return dump_bytes(doc).decode("ascii")


def dump_bytes(doc: object) -> bytes:
    """dumps, as the ASCII bytes it writes.

    orjson writes it several times faster (100,000 partitions: 0.12 s, not 0.45 s) where its output is that
    document: ASCII text, integers within 64 bits. Anything else (a name with non-ASCII characters, an
    integer beyond 64 bits, a type orjson does not take) goes to json.dumps, which escapes non-ASCII, so
    stdout is ASCII whatever its encoding."""
    try:
        fast = orjson.dumps(doc)
    except TypeError:  # orjson.JSONEncodeError
        fast = None
    if fast is not None and fast.isascii():
        return fast
    return json.dumps(doc, separators=(",", ":")).encode("ascii")


def write_bytes(data: bytes, out: IO[str]) -> None:
    """ASCII `data` to a text stream: straight to its byte buffer where it has one (stdout), after what it holds
    (a document of 100,000 partitions is 130 MB: decoding it to text, then encoding it again, took 0.12 s)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode("ascii"))
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


def time_lags(report: Report) -> list[TimeLag]:
    """Each row's time lag, in the order of the rows."""
    measured = report.time_lags
    return [time_lag(row, measured) for row in report.rows]


def write_json(report: Report, out: IO[str]) -> None:
    write_bytes(dump_bytes(report_document(report)), out)
    out.write("\n")


def write_csv(report: Report, out: IO[str]) -> None:
    """One line per consumer-partition, with the codes of its findings."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow((*PARTITION_FIELDS, "findings"))
    for row, d in zip(report.rows, partition_dicts(report, time_lags(report))):
        writer.writerow((*("" if d[k] is None else d[k] for k in PARTITION_FIELDS), ";".join(row.codes)))


# --- tables for people ------------------------------------------------------------------------------

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _status(severity: Severity | None) -> tuple[str, str]:
    return (severity.label, _STYLE[severity]) if severity else ("ok", "green")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def time_lag_text(lag: TimeLag | None) -> str:
    """A time lag in a table: the duration (~ when estimated), why there is none, or - without a lag."""
    if lag is None or lag.source is None:
        return "-"
    if lag.seconds is None:
        return lag.source.replace("-", " ")  # unread, no timestamp
    return ("~" if lag.source == ESTIMATE else "") + duration(lag.seconds)


def headroom_text(room: Headroom | None) -> str:
    """A retention headroom in a table: the time left, how long past (-), why there is none, or - without a lag."""
    if room is None or room.source is None:
        return "-"
    if room.seconds is None:
        return room.source.replace("-", " ")  # no deletion, unknown, unread
    return duration(room.seconds) if room.seconds >= 0 else f"-{duration(-room.seconds)}"


def expiry_text(e: Expiry | None) -> str:
    """A commit's expiry headroom in a table: the time left, how long past (-), why there is none, or - without an
    estimate (offctl.core.time.expiry)."""
    if e is None:
        return "-"
    if e.headroom_s is None:
        return e.source.lower().replace("_", " ")
    return duration(e.headroom_s) if e.headroom_s >= 0 else f"-{duration(-e.headroom_s)}"


def write_table(report: Report, console: Console, *, per_partition: bool = False) -> None:
    lags = time_lags(report)
    maxima = consumer_maxima(report.rows, lags)
    consumers = Table(title="Consumers", title_justify="left")
    consumers.add_column("Consumer", overflow="fold")
    consumers.add_column("Topics", overflow="fold")
    for col in ("Partitions", "Total lag", "Max lag", "Max time lag"):
        consumers.add_column(col, justify="right")
    consumers.add_column("Status")
    for c in report.consumers:
        label, style = _status(c.worst)
        # the count is of findings of the worst severity only, so "error (2)" means two errors
        n = dict(zip((Severity.ERROR, Severity.WARNING, Severity.INFO), c.by_severity)).get(c.worst, 0)
        consumers.add_row(
            str(c.key),
            ",".join(c.topics),
            _n(c.partitions),
            _n(c.total_lag),
            _n(c.max_lag),
            time_lag_text(maxima.get(c.key)),
            Text(f"{label} ({n})" if n else label, style=style),
        )
    console.print(consumers)

    if per_partition and report.rows:
        parts = Table(title="Partitions", title_justify="left")
        parts.add_column("Consumer", overflow="fold")
        parts.add_column("Topic", overflow="fold")
        for col in ("Partition", "Committed", "Log start", "Log end", "Lag", "Time lag", "Retention"):
            parts.add_column(col, justify="right")
        parts.add_column("Status")
        for row, lag in zip(report.rows, lags):
            r = row.record
            label, style = _status(row.status)
            end = (
                _n(row.log_end)
                if row.last_stable in (None, row.log_end)
                else f"{_n(row.log_end)} (stable {_n(row.last_stable)})"
            )  # the lag counts to the last stable offset
            parts.add_row(
                str(r.key),
                row.topic or "?",
                str(r.partition),
                _n(r.committed),
                _n(row.log_start),
                end,
                _n(row.lag),
                time_lag_text(lag),
                headroom_text(headroom(row, report.headrooms)),
                Text(label, style=style),
            )
        console.print(parts)

    if report.findings:
        _write_findings(report.findings, console)
    s = summary_dict(report)
    counts = ", ".join(f"{n} {label}" for label, n in s["findings"].items())
    console.print(
        f"{_plural(s['consumers'], 'consumer')}, {_plural(s['partitions'], 'partition')}, total lag "
        f"{s['total_lag']:,}; findings: {counts}"
    )
    if report.spout_settings:
        console.print(
            f"Findings assume {report.spout_settings} (see --storm-kafka-release and the other spout settings)",
            style="dim",
        )
    said = commits_dict(report.commits)
    if said:
        console.print(
            f"storm-kafka-client groups under {said['guarantee']} ({', '.join(said['sources'])}):", style="dim"
        )
        for key in ("committed_offset", "commits", "lag", "restart", "out_of_range"):
            console.print(f"  {key.replace('_', ' ')}: {said[key]}", style="dim")


def _write_findings(findings: Iterable[Finding], console: Console) -> None:
    """Findings grouped by severity, code, consumer and topic, so 10,000 partitions stay readable."""
    groups: dict[tuple, list[Finding]] = defaultdict(list)
    for f in findings:
        groups[(-f.severity, f.code, str(f.key), f.topic or "")].append(f)
    console.print("Findings", style="italic")
    for (_, code, consumer, topic), group in sorted(groups.items()):
        first = group[0]
        partitions = [f.partition for f in group if f.partition is not None]
        where = f"{topic} [{ranges(partitions)}]" if partitions else topic
        head = Text("  ")
        head.append(f"{first.severity.label.upper():<8}", style=_STYLE[first.severity])
        head.append(f" {code}  {consumer}" + (f"  {where}" if where else ""))
        console.print(head, soft_wrap=True)
        more = f" (+{len(group) - 1} more like it)" if len(group) > 1 else ""
        console.print(f"           {first.message}{more}", soft_wrap=True)
    console.print("What to do", style="italic")
    for code in sorted({code for _, code, _, _ in groups}, key=lambda c: (-CATALOGUE[c].severity, c)):
        console.print(f"  {code}: {CATALOGUE[code].hint}", soft_wrap=True)


def table_console(out: IO[str]) -> Console:
    """A console for tables: the terminal's width, or 160 columns when piped into a file or a pager."""
    probe = Console(file=out)
    return Console(file=out, markup=False, highlight=False, width=None if probe.is_terminal else 160)


def write_report(
    report: Report, fmt: str, out: IO[str], console: Console | None = None, *, per_partition: bool = False
) -> None:
    if fmt == "json":
        write_json(report, out)
    elif fmt == "csv":
        write_csv(report, out)
    else:
        write_table(report, console or table_console(out), per_partition=per_partition)


def write_notes(report: Report, err: Console) -> None:
    """What the reader of stdout should know but must not parse: to stderr."""
    for note in report.notes:
        err.print(f"warning: {note}")
    for skipped in report.checks_skipped:
        err.print(f"note: not checked: {skipped}")
    for problem in report.incomplete:
        err.print(f"error: {problem}")


# --- plans of reset, restore and migrate ----------------------------------------------------------------------


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


def outcome_document(outcome) -> dict:
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


def outcome_result(outcome) -> str:
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


def outcomes_document(outcomes) -> dict:
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


def write_plan_table(outcome, console: Console) -> None:
    """The plan of an outcome for people: write_plan."""
    write_plan(outcome.plan, console)


def write_plan(plan, console: Console) -> None:
    """The plan for people: one row per partition, its cost, then the guards and the warnings."""
    where = f" from {plan.source}" if plan.source else ""
    console.print(f"{plan.operation} {plan.key}{where} -> {plan.target}", style="bold")
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
            _n(c.before),
            _n(c.after),
            delta,
            Text(action, style=_ACTION_STYLE[action]),
            "; ".join(c.reasons),
            *cost,
        )
    console.print(table)
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


def outcome_lines(outcome) -> list[str]:
    """What happened, in words: after the plan (table) or on stderr (json)."""
    unwritten = _unwritten_lines(outcome)
    return unwritten if unwritten is not None else _written_lines(outcome)


def _unwritten_lines(outcome) -> list[str] | None:
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


def _nothing_to_change(plan) -> list[str]:
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


def _written_lines(outcome) -> list[str]:
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


def outcome_errors(outcome) -> list[str]:
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


def write_outcome(outcome, fmt: str, out: IO[str], err: Console, *, plan_shown: bool = False) -> None:
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


def write_outcomes(outcomes, fmt: str, out: IO[str], err: Console, *, plan_shown: bool = False) -> None:
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
        console.print(f"{result}: {_plural(len(names), 'consumer')} ({', '.join(names)})", soft_wrap=True)


# --- offctl audit ---------------------------------------------------------------------------------------------


def write_json_stream(head: dict, sections: dict[str, Iterable[dict]], tail: dict, out: IO[str]) -> None:
    """One JSON document whose big lists are written as their rows arrive (an audit's are in Spark)."""
    out.write(dumps(head)[:-1])
    for name, rows in sections.items():
        out.write(f',"{name}":[')
        batch: list[str] = []
        first = True
        for row in rows:
            batch.append(dumps(row))
            if len(batch) >= 1000:
                out.write(("" if first else ",") + ",".join(batch))
                batch, first = [], False
        if batch:
            out.write(("" if first else ",") + ",".join(batch))
        out.write("]")
    for key, value in tail.items():
        out.write(f",{dumps(key)}:{dumps(value)}")
    out.write("}\n")


def write_audit_json(result, out: IO[str], repairs: list | None = None, repair_note: str | None = None) -> None:
    """audit's `--output json` document: inspect's, streamed from the audit result's parts (AuditResult.
    document_parts: head, sections of rows still in Spark, tail), then, when a repair was asked for (`repairs` not
    None), `repair` (each repair's outcome_document) and `repair_note` (why there was nothing to repair, or null)."""
    head, sections, tail = result.document_parts()
    if repairs is not None:
        tail["repair"] = [outcome_document(o) for o in repairs]
        tail["repair_note"] = repair_note
    write_json_stream(head, sections, tail, out)


def consumer_label(d: dict) -> str:
    """A consumer dict named as ConsumerKey names it."""
    if d["store"] == "zookeeper":
        return f"{(d['zk_root'] or '').rstrip('/')}/{d['consumer']}"
    return f"group {d['consumer']}"


def _extreme_text(name: str, extreme: tuple) -> str:
    """One of the audit's extremes (audit.Tally): the figure, and the partition it is of."""
    seconds, (store, consumer, zk_root, topic, partition) = extreme
    where = f"{consumer_label({'store': store, 'consumer': consumer, 'zk_root': zk_root})} {topic}/{partition}"
    return f"{name} {duration(seconds)} ({where})" if seconds >= 0 else f"{name} {duration(-seconds)} past ({where})"


def write_audit_summary(result, console: Console, *, startup_s: float | None = None) -> None:
    """The audit for people, on stderr: totals, findings by code, worst consumers, lag by topic, history."""
    s = result.summary()
    counts = ", ".join(f"{n} {label}" for label, n in s["findings"].items())
    console.print(
        f"audit of {s['consumers']:,} consumers, {s['partitions']:,} partitions, captured "
        f"{iso_ms(result.captured_ms)}: total lag {s['total_lag']:,}; findings: {counts}",
        style="bold",
    )
    if s["by_code"]:
        console.print(_codes_table(s["by_code"]))
    if result.worst:
        console.print(_worst_table(result.worst))
    if result.top_topics and any(t["total_lag"] for t in result.top_topics):
        console.print(_top_topics_table(result.top_topics))
    figures = [
        _extreme_text(name, extreme)
        for name, extreme in (
            ("largest time lag", result.tally.max_time_lag),
            ("smallest retention headroom", result.tally.min_retention_headroom),
            ("soonest commit expiry", result.tally.min_commit_expiry),
        )
        if extreme is not None
    ]
    if figures:
        console.print("; ".join(figures), soft_wrap=True)
    _write_audit_outputs(result, console, startup_s)
    _write_audit_notes(result.tally, console)


def _codes_table(by_code: dict[str, int]) -> Table:
    """The findings counted by code, the most severe first, then the most frequent."""
    codes = Table(title="Findings by code", title_justify="left")
    codes.add_column("Code")
    codes.add_column("Severity")
    codes.add_column("Count", justify="right")
    for code, n in sorted(by_code.items(), key=lambda kv: (-CATALOGUE[kv[0]].severity, -kv[1], kv[0])):
        sev = CATALOGUE[code].severity
        codes.add_row(code, Text(sev.label, style=_STYLE[sev]), f"{n:,}")
    return codes


def _worst_table(worst: list[dict]) -> Table:
    """The worst consumers, worst first: their topics, lag, status and finding codes."""
    table = Table(title=f"Worst consumers (top {len(worst)})", title_justify="left")
    table.add_column("Consumer", overflow="fold")
    table.add_column("Topics", overflow="fold")
    for col in ("Partitions", "Total lag", "Max lag"):
        table.add_column(col, justify="right")
    table.add_column("Status")
    table.add_column("Findings", overflow="fold")
    for c in worst:
        sev = Severity.parse(c["status"]) if c["status"] != "ok" else None
        label, style = _status(sev)
        table.add_row(
            consumer_label(c),
            ",".join(c["topics"]),
            _n(c["partitions"]),
            _n(c["total_lag"]),
            _n(c["max_lag"]),
            Text(label, style=style),
            ",".join(c["finding_codes"]),
        )
    return table


def _top_topics_table(top_topics: list[dict]) -> Table:
    """The topics with the most lag: their consumers, partitions and lag."""
    topics = Table(title="Lag by topic (top)", title_justify="left")
    topics.add_column("Topic", overflow="fold")
    for col in ("Consumers", "Partitions", "Total lag", "Max lag"):
        topics.add_column(col, justify="right")
    for t in top_topics:
        topics.add_row(t["topic"] or "?", _n(t["consumers"]), _n(t["partitions"]), _n(t["total_lag"]), _n(t["max_lag"]))
    return topics


def _write_audit_outputs(result, console: Console, startup_s: float | None) -> None:
    """What the audit kept and how long it took: the history it had, the snapshot and files it wrote, the timings."""
    if result.history is not None:
        console.print(
            f"history over {result.snapshots_used} snapshots: "
            + ", ".join(f"{k.upper()} {v:,}" for k, v in result.history.items()),
            soft_wrap=True,
        )
    else:
        console.print(
            "history: none yet (save snapshots with --save-snapshot DIR; statuses need two)",
            style="dim",
            soft_wrap=True,
        )
    if result.snapshot:
        console.print(f"snapshot saved: {result.snapshot}", soft_wrap=True)
    if result.written:
        console.print(f"files written: {', '.join(result.written)}", soft_wrap=True)
    times = ([f"Spark start-up {startup_s:.1f}s"] if startup_s is not None else []) + [
        f"{k} {v:.1f}s" for k, v in result.timings.items()
    ]
    console.print("timings: " + ", ".join(times), style="dim", soft_wrap=True)


def _write_audit_notes(tally, console: Console) -> None:
    """The audit's notes as warnings, the checks it skipped, and the reads that failed (the audit is partial)."""
    for note in tally.notes:
        console.print(f"warning: {note}", soft_wrap=True)
    for skipped in tally.checks_skipped:
        console.print(f"note: not checked: {skipped}", soft_wrap=True)
    for problem in tally.incomplete:
        console.print(f"error: {problem}", soft_wrap=True)


# --- offctl watch -----------------------------------------------------------------------------------------------

_TREND = {1: ("↑", "red"), -1: ("↓", "green"), 0: ("→", "dim")}
_STATUS_STYLE = {"OK": "green", "WARN": "yellow", "STALL": "bold red", "STOP": "bold red", "REWIND": "magenta"}


def watch_frame(
    report: Report | None,
    previous: dict[tuple, tuple[int | None, int | None]],
    statuses: dict[tuple, tuple[str | None, TimeLag]],
    refreshed: int,
    error: str | None,
):
    """One refresh of the watch view: its table (none before the first read), and the refresh's read error."""
    from rich.console import Group
    from rich.text import Text

    parts = [watch_table(report, previous, statuses, refreshed)] if report is not None else []
    if error:
        parts.append(Text(f"offctl: refresh {refreshed} could not read: {error}", style="yellow"))
    return Group(*parts)


def watch_table(
    report: Report,
    previous: dict[tuple, tuple[int | None, int | None]],
    statuses: dict[tuple, tuple[str | None, TimeLag]],
    refreshed: int,
) -> Table:
    """The watch view: each partition's committed offset (moving or stuck since the last refresh), lag with
    its trend, time lag (~ when estimated), retention headroom, commit expiry and history status. `previous`:
    (committed, lag) by partition key from the last refresh."""
    table = Table(
        title=f"offctl watch: {iso_ms(report.captured_ms)} (refresh {refreshed}; Ctrl-C to leave)", title_justify="left"
    )
    for col in ("Consumer", "Topic"):
        table.add_column(col, overflow="fold")
    for col in ("Partition", "Committed", "Moved", "Lag"):
        table.add_column(col, justify="right")
    table.add_column("Trend")
    table.add_column("Time lag", justify="right")
    table.add_column("Retention", justify="right")
    table.add_column("Expiry", justify="right")
    table.add_column("Status")
    table.add_column("Findings", overflow="fold")
    expiries = report.commit_expiry or {}
    for row in report.rows:
        r = row.record
        before, lag_before = previous.get(row.partition_key, (None, None))
        moved = "-" if before is None or r.committed is None else f"{r.committed - before:+,}"
        moved_text = Text(moved, style="bold" if moved not in ("-", "+0") else "dim")
        if row.lag is None or lag_before is None:
            trend = Text("")
        else:
            sign = (row.lag > lag_before) - (row.lag < lag_before)
            trend = Text(*_TREND[sign])
        status, lag = statuses.get(row.partition_key, (None, None))
        table.add_row(
            str(r.key),
            row.topic or "?",
            str(r.partition),
            _n(r.committed),
            moved_text,
            _n(row.lag),
            trend,
            time_lag_text(lag),
            headroom_text(headroom(row, report.headrooms)),
            expiry_text(expiries.get(row.partition_key)),
            Text(status or "-", style=_STATUS_STYLE.get(status, "dim")),
            ", ".join(row.codes),
        )
    return table


# --- offctl peek ---------------------------------------------------------------------------------------------


# What a peeked partition carries of inspect's row (docs/contract.md, "What each face shows"): its figures from the
# one assessed report, beside peek's own keys.
PEEK_FIGURES = (
    "status",
    "time_lag_s",
    "time_lag_source",
    "retention_headroom_s",
    "retention_source",
    "commit_expiry_s",
    "commit_expiry_source",
    "resumes_at",
    "resumes",
    "resumes_citation",
)


def peek_document(result, saved: str | None = None) -> dict:
    """peek's `--output json` document (docs/contract.md, "offctl peek"): each partition with inspect's figures of
    its row (PEEK_FIGURES), from the report peek read."""
    from offctl.render.peek_rows import peeked_dict

    report = result.report
    rows = [p.row for p in result.peeked]  # rows of the report (offctl.faces.peek: selected(report.rows, ...))
    partitions = []
    for p, row in zip(result.peeked, partition_dicts(report, [time_lag(r, report.time_lags) for r in rows], rows)):
        d = peeked_dict(p, result.captured_ms)
        d.update((k, row[k]) for k in PEEK_FIGURES)
        partitions.append(d)
    return {
        "captured_at": iso_ms(result.captured_ms),
        "count": result.count,
        "partitions": partitions,
        "saved": saved,
        "notes": list(report.notes),
        "incomplete": list(report.incomplete),
    }


def write_peek(result, fmt: str, out: IO[str], *, saved: str | None = None) -> None:
    if fmt == "json":
        out.write(dumps(peek_document(result, saved)))
        out.write("\n")
        return
    from offctl.render.peek_rows import message_dict

    console = table_console(out)
    if not result.peeked:
        console.print(
            "no partition selected: every partition of these consumers is caught up (name some with --partitions)"
        )
    for p in result.peeked:
        r = p.row
        console.print(_peek_head(p))
        if p.census is not None:
            console.print(Text(f"  {p.census.text(r.last_stable)}"))
        elif p.census_why:
            console.print(Text(f"  offsets to the last stable offset not counted: {p.census_why}", style="yellow"))
        at = p.at
        if at is None or at.why:
            console.print(Text(f"  {p.why if at is None else at.why}", style="yellow"))
        for m in at.messages if at is not None else ():
            d = message_dict(m, result.captured_ms)
            age = f", {d['age_ms'] / 1000:,.0f}s ago" if d["age_ms"] is not None else ""
            console.print(
                Text(
                    f"  offset {m.offset}  {d['timestamp'] or 'no timestamp'} "
                    f"({m.timestamp_type or 'none'}{age})  key {_size(d['key_size'])}  value "
                    f"{_size(d['value_size'])}  headers {len(m.headers)}"
                )
            )
            console.print(Text(f"    key:   {d['key']}"))
            console.print(Text(f"    value: {d['value']}"))
            for h in d["headers"]:
                console.print(Text(f"    header {h['key']}: {h['value']}"))
    if saved:
        console.print(Text(f"saved to {saved} (manifest.json lists every file with its sha256)"))


def _peek_head(p) -> Text:
    """A peeked partition's line: where the spout resumes (inspect's resumes_at; the stored offset, whose message is
    shown, beside it where they differ), the log, the lag and the codes."""
    r = p.row
    head = Text(f"{r.record.key}  {r.topic or '?'}/{r.record.partition}", style="bold")
    stable = f"  last stable {_n(r.last_stable)}" if r.last_stable is not None else ""
    resumes = r.resumes.at if r.resumes is not None else None
    where = f"resumes at {_n(resumes)}" + (f" (stored {_n(p.offset)})" if resumes != p.offset else "")
    head.append(
        f"  {where}  log {_n(r.log_start)}-{_n(r.log_end)}{stable}  lag {_n(r.lag)}"
        + (f"  [{', '.join(r.codes)}]" if r.codes else ""),
        style="",
    )
    return head


def _size(n: int | None) -> str:
    return "null" if n is None else f"{n:,} B"


# --- the confirmation question -----------------------------------------------------------------------------------

_VERBS = {"reset": "Reset", "restore": "Restore", "migrate": "Migrate", "delete": "Delete"}


def consumer_words(key) -> str:
    """A consumer as the confirmation names it: spout ID (zkRoot R), Trident spout ID (Trident root R), group G."""
    from offctl.core.records.model import TRIDENT, ZOOKEEPER

    if key.store == ZOOKEEPER:
        return f"spout {key.consumer} (zkRoot {key.zk_root})"
    if key.store == TRIDENT:
        return f"Trident spout {key.consumer} (Trident root {key.zk_root})"
    return f"group {key.consumer}"


def confirm_question(plans, zk: str | None, kafka: str | None, sandbox: bool = False) -> str:
    """What the write does, to whom and on which cluster, asked once for every plan:
    'Reset 1 partition of group g on Kafka k1:9092?'; ' (the sandbox)' when those are the sandbox's servers."""
    from offctl.core.records.model import ZK_STORES

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
    return f"{verb} {_plural(n, unit)} of {whom} on {' and '.join(servers)}{' (the sandbox)' if sandbox else ''}?"
