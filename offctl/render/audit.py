"""`offctl audit`'s documents: its `--output json`, streamed from the rows still in Spark, and its summary for
people on stderr."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from offctl.core.records.findings import CATALOGUE
from offctl.core.records.model import ConsumerKey, Severity, duration, iso_ms
from offctl.core.results.audit import TASK_KEYS, AuditResult, Tally
from offctl.core.results.repair import RepairResult
from offctl.render.formats import SEVERITY_STYLE, catch_up_cell, dumps, number, status_style
from offctl.render.plans import outcome_document
from offctl.render.report import DOCUMENT_VERSION, catch_up_from, commits_dict, hints_dict, retention_dict


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


def audit_document_parts(result: AuditResult) -> tuple[dict, dict[str, Iterable[dict]], dict]:
    """inspect's JSON document of an audit, in parts to stream: head, sections of rows (still in Spark), tail."""

    def rows() -> Iterator[dict]:
        for r in result.rows.toLocalIterator():
            yield {k: v for k, v in r.items() if k not in TASK_KEYS}

    head = {"document_version": DOCUMENT_VERSION, "captured_at": iso_ms(result.captured_ms)}
    sections = {
        "partitions": rows(),
        "findings": result.findings.toLocalIterator(),
        "consumers": result.consumers.toLocalIterator(),
        "topics": result.topics.toLocalIterator(),
        "topologies": result.topologies.toLocalIterator(),
    }
    tail = {
        "hints": hints_dict(result.tally.by_code),
        "summary": result.summary(),
        "notes": result.tally.notes,
        "incomplete": result.tally.incomplete,
        "checks_skipped": result.tally.checks_skipped,
        "spout_settings": result.spout_settings,
        "processing_guarantee": commits_dict(result.tally.commits),
        "offsets_retention": retention_dict(result.tally.offsets_retention),
        "read_by": result.read_by,
        "driver": result.driver,
    }
    return head, sections, tail


def write_audit_json(
    result: AuditResult, out: IO[str], repairs: list[RepairResult] | None = None, repair_note: str | None = None
) -> None:
    """audit's `--output json` document: inspect's, streamed from the audit result's parts (audit_document_parts:
    head, sections of rows still in Spark, tail), then, when a repair was asked for (`repairs` not
    None), `repair` (each repair's outcome_document) and `repair_note` (why there was nothing to repair, or null)."""
    head, sections, tail = audit_document_parts(result)
    if repairs is not None:
        tail["repair"] = [outcome_document(o) for o in repairs]
        tail["repair_note"] = repair_note
    write_json_stream(head, sections, tail, out)


def consumer_label(d: dict) -> str:
    """A consumer dict named as ConsumerKey names it: `/root/spout`, `trident /root/id`, `jstorm /root/kafka/offset/
    topic/<topic>/<client id>` or `group g`."""
    return str(ConsumerKey(d["store"], d["consumer"], d["zk_root"]))


def _extreme_text(name: str, extreme: tuple) -> str:
    """One of the audit's extremes (offctl.core.results.audit.Tally): the figure, and the partition it is of."""
    seconds, (store, consumer, zk_root, topic, partition) = extreme
    where = f"{consumer_label({'store': store, 'consumer': consumer, 'zk_root': zk_root})} {topic}/{partition}"
    return f"{name} {duration(seconds)} ({where})" if seconds >= 0 else f"{name} {duration(-seconds)} past ({where})"


def write_audit_summary(result: AuditResult, console: Console, *, startup_s: float | None = None) -> None:
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
        console.print(_worst_table(result.worst, catch_up=result.history is not None))
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
    if s["lost_to_retention"]:
        console.print(lost_text(s["lost_to_retention"]), soft_wrap=True)
    _write_audit_outputs(result, console, startup_s)
    _write_audit_notes(result.tally, console)


LOST_TOPICS = 10  # the topics the summary for people names where retention took something, the most first


def lost_text(lost: dict[str, int]) -> str:
    """What retention already took, per topic (the summary's `lost_to_retention`), for people: the LOST_TOPICS topics
    that lost most, and how many more lost something."""
    top = sorted(lost.items(), key=lambda kv: (-kv[1], kv[0]))
    named = ", ".join(f"{topic} {n:,}" for topic, n in top[:LOST_TOPICS])
    more = f" (+{len(top) - LOST_TOPICS} more topics)" if len(top) > LOST_TOPICS else ""
    return f"lost to retention (deleted before the spouts read them): {sum(lost.values()):,}; by topic: {named}{more}"


def _codes_table(by_code: dict[str, int]) -> Table:
    """The findings counted by code, the most severe first, then the most frequent."""
    codes = Table(title="Findings by code", title_justify="left")
    codes.add_column("Code")
    codes.add_column("Severity")
    codes.add_column("Count", justify="right")
    for code, n in sorted(by_code.items(), key=lambda kv: (-CATALOGUE[kv[0]].severity, -kv[1], kv[0])):
        sev = CATALOGUE[code].severity
        codes.add_row(code, Text(sev.label, style=SEVERITY_STYLE[sev]), f"{n:,}")
    return codes


def _worst_table(worst: list[dict], *, catch_up: bool = False) -> Table:
    """The worst consumers, worst first: their topics, lag, status and finding codes; with `catch_up` (an audit with
    history), when each will have caught up at the rates over the snapshots."""
    table = Table(title=f"Worst consumers (top {len(worst)})", title_justify="left")
    table.add_column("Consumer", overflow="fold")
    table.add_column("Topics", overflow="fold")
    for col in ("Partitions", "Total lag", "Max lag", *(("Catch-up",) if catch_up else ())):
        table.add_column(col, justify="right")
    table.add_column("Status")
    table.add_column("Findings", overflow="fold")
    for c in worst:
        sev = Severity.parse(c["status"]) if c["status"] != "ok" else None
        label, style = status_style(sev)
        figures = [number(c["partitions"]), number(c["total_lag"]), number(c["max_lag"])]
        if catch_up:
            figures.append(catch_up_cell(catch_up_from(c)))
        table.add_row(
            consumer_label(c), ",".join(c["topics"]), *figures, Text(label, style=style), ",".join(c["finding_codes"])
        )
    return table


def _top_topics_table(top_topics: list[dict]) -> Table:
    """The topics with the most lag: their consumers, partitions and lag."""
    topics = Table(title="Lag by topic (top)", title_justify="left")
    topics.add_column("Topic", overflow="fold")
    for col in ("Consumers", "Partitions", "Total lag", "Max lag"):
        topics.add_column(col, justify="right")
    for t in top_topics:
        topics.add_row(
            t["topic"] or "?",
            number(t["consumers"]),
            number(t["partitions"]),
            number(t["total_lag"]),
            number(t["max_lag"]),
        )
    return topics


def _write_audit_outputs(result: AuditResult, console: Console, startup_s: float | None) -> None:
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


def _write_audit_notes(tally: Tally, console: Console) -> None:
    """The audit's notes as warnings, the checks it skipped, and the reads that failed (the audit is partial)."""
    for note in tally.notes:
        console.print(f"warning: {note}", soft_wrap=True)
    for skipped in tally.checks_skipped:
        console.print(f"note: not checked: {skipped}", soft_wrap=True)
    for problem in tally.incomplete:
        console.print(f"error: {problem}", soft_wrap=True)
