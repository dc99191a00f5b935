"""inspect's documents: the `--output json` document and the CSV of every consumer-partition, and the tables for
people, all from the same Report (the audit, peek and serve reuse its rows).

stdout gets data only; notes, skipped checks and partial-read warnings go to stderr.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from offctl.core.records.findings import CATALOGUE
from offctl.core.records.model import (
    CatchUp,
    ConsumerSummary,
    Finding,
    Headroom,
    PartitionRow,
    Report,
    Severity,
    TimeLag,
    iso_ms,
    ranges,
)
from offctl.core.storm.commits import CommitBehaviour
from offctl.core.storm.outcomes import Resumption
from offctl.core.time.expiry import Expiry, Retention
from offctl.core.time.history import NO_CATCH_UP, catch_up_of, consumer_catch_ups
from offctl.core.time.retention import consumer_minima, headroom, lost_by_consumer, lost_by_topic
from offctl.core.time.timelag import consumer_maxima, time_lag
from offctl.render.formats import (
    SEVERITY_STYLE,
    dump_bytes,
    headroom_text,
    number,
    plural,
    status_style,
    table_console,
    time_lag_text,
    write_bytes,
)

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
    "catch_up_s",
    "catch_up",
    "commit_rate",
    "log_rate",
    "lost_to_retention",
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
        "lost_to_retention": row.lost_to_retention,
    }
    if lag is not None:
        d["time_lag_s"], d["time_lag_source"] = lag.seconds, lag.source
        d["retention_headroom_s"], d["retention_source"] = (room.seconds, room.source) if room else (None, None)
    return d


def partition_dicts(report: Report, lags: Iterable[TimeLag], rows: Iterable[PartitionRow] | None = None) -> list[dict]:
    """Every row (or these `rows` of the report) as the JSON document and the CSV give it: partition_dict with its
    time lag and retention headroom, then expiry_fields and catch_up_fields."""
    rooms, expiries, ups, out = report.headrooms, report.commit_expiry, report.catch_ups, []
    for row, lag in zip(report.rows if rows is None else rows, lags):
        d = partition_dict(row, lag, headroom(row, rooms) if rooms else None)
        # Looked up only where something was estimated (a storm-kafka-client group): the key is a tuple per row.
        d.update(expiry_fields(expiries.get(row.partition_key) if expiries else None))
        d.update(catch_up_fields(catch_up_of(row, ups)))
        out.append(d)
    return out


def catch_up_fields(c: CatchUp) -> dict:
    """When the spout will have caught up (offctl.core.time.history: catch-up): the seconds to lag 0 (null when it is
    not catching up or there is no estimate), the state that says which, and the rates it rests on (messages a
    second; null without history)."""
    return {"catch_up_s": c.seconds, "catch_up": c.state, "commit_rate": c.commit_rate, "log_rate": c.log_rate}


def catch_up_from(d: Mapping) -> CatchUp:
    """The catch-up a partition or consumer dict's catch_up_fields say (the audit's rows are dicts)."""
    return CatchUp(d["catch_up_s"], d["catch_up"], d["commit_rate"], d["log_rate"])


def expiry_fields(e: Expiry | None) -> dict:
    """A partition's estimated commit expiry (offctl.core.time.expiry): the seconds left before the broker may delete
    its commit (negative once past) and what the estimate comes from; both null where not estimated."""
    return {"commit_expiry_s": e.headroom_s if e else None, "commit_expiry_source": e.source if e else None}


def retention_dict(retention: Retention | None) -> dict | None:
    """The offsets.retention.minutes the commit expiry assumes, and where it comes from; None when not estimated."""
    if retention is None:
        return None
    return {"minutes": retention.minutes, "source": retention.source, "why": retention.why or None}


# The JSON document's version (docs/contract.md, "Document version"). 2: each code's hint is said once, in
# `hints`, not on each of its findings; version 1 had no such key.
DOCUMENT_VERSION = 2


def resumes_fields(resumes: Resumption | None) -> dict:
    """`resumes_at`, `resumes` and `resumes_citation` of an outcomes.Resumption (all null for none)."""
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
    their order), its smallest retention headroom and what retention already took of its partitions."""
    maxima = consumer_maxima(report.rows, lags)
    minima = consumer_minima(report.rows, report.headrooms)
    ups = consumer_catch_ups(report)
    lost = lost_by_consumer(report.rows)
    return [
        {
            **consumer_dict(c),
            "max_time_lag_s": maxima[c.key].seconds if c.key in maxima else None,
            "min_retention_headroom_s": minima.get(c.key),
            **catch_up_fields(ups.get(c.key, NO_CATCH_UP)),
            "lost_to_retention": lost.get(c.key),
            **support_dict(report.broker_support.get(c.key)),
        }
        for c in report.consumers
    ]


def support_dict(support) -> dict:
    """Whether the brokers serve a consumer's spout (offctl.core.storm.protocol.Support), as the JSON document and the
    audit's files give it: every key null when it was not judged."""
    if support is None:
        return dict.fromkeys(SUPPORT_KEYS)
    return {
        "broker_served": support.serves,
        "broker_against": support.against,
        "broker_client": support.client.name,
        "broker_refused": [r.text() for r in support.refused],
    }


SUPPORT_KEYS = ("broker_served", "broker_against", "broker_client", "broker_refused")


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
        "lost_to_retention": lost_by_topic(report.rows),
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


def commits_dict(said: CommitBehaviour | None) -> dict | None:
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
        label, style = status_style(c.worst)
        # the count is of findings of the worst severity only, so "error (2)" means two errors
        n = dict(zip((Severity.ERROR, Severity.WARNING, Severity.INFO), c.by_severity)).get(c.worst, 0)
        consumers.add_row(
            str(c.key),
            ",".join(c.topics),
            number(c.partitions),
            number(c.total_lag),
            number(c.max_lag),
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
            label, style = status_style(row.status)
            end = (
                number(row.log_end)
                if row.last_stable in (None, row.log_end)
                else f"{number(row.log_end)} (stable {number(row.last_stable)})"
            )  # the lag counts to the last stable offset
            parts.add_row(
                str(r.key),
                row.topic or "?",
                str(r.partition),
                number(r.committed),
                number(row.log_start),
                end,
                number(row.lag),
                time_lag_text(lag),
                headroom_text(headroom(row, report.headrooms)),
                Text(label, style=style),
            )
        console.print(parts)

    if report.findings:
        _write_findings(report.findings, console)
    console.print(_summary_line(summary_dict(report)))
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


def _summary_line(s: dict) -> str:
    """The table's last line: the counts, the total lag, what retention already took (where it took something) and
    the findings by severity."""
    counts = ", ".join(f"{n} {label}" for label, n in s["findings"].items())
    lost = sum(s["lost_to_retention"].values())
    return (
        f"{plural(s['consumers'], 'consumer')}, {plural(s['partitions'], 'partition')}, total lag {s['total_lag']:,}"
        + (f", lost to retention {lost:,}" if lost else "")
        + f"; findings: {counts}"
    )


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
        head.append(f"{first.severity.label.upper():<8}", style=SEVERITY_STYLE[first.severity])
        head.append(f" {code}  {consumer}" + (f"  {where}" if where else ""))
        console.print(head, soft_wrap=True)
        more = f" (+{len(group) - 1} more like it)" if len(group) > 1 else ""
        console.print(f"           {first.message}{more}", soft_wrap=True)
    console.print("What to do", style="italic")
    for code in sorted({code for _, code, _, _ in groups}, key=lambda c: (-CATALOGUE[c].severity, c)):
        console.print(f"  {code}: {CATALOGUE[code].hint}", soft_wrap=True)


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
