"""`offctl peek`'s document: its `--output json` (each partition read, and each message as its sizes, previews
and digests, from the core's Peeked results, offctl.core.records.peeked, beside inspect's figures of its row) and its
text for people; the MCP peek tool answers with it too."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.text import Text

from offctl.core.records.messages import UNREAD, age_ms
from offctl.core.records.model import LogMessage, iso_ms
from offctl.core.records.peeked import Census, Peeked, digest, preview
from offctl.core.results.peek import PeekResult
from offctl.core.time.timelag import time_lag
from offctl.render.formats import dumps, lost_text, number, table_console
from offctl.render.report import partition_dicts


def census_dict(c: Census) -> dict:
    return {
        "offsets": c.offsets,
        "records": c.records,
        "aborted": c.aborted,
        "markers": c.markers,
        "markers_or_compacted": c.compacted,
    }


def message_dict(m: LogMessage, now_ms: int) -> dict:
    """A message as peek's JSON shows it: sizes, a preview and sha256 of key and value, headers previewed."""
    return {
        "offset": m.offset,
        "timestamp": iso_ms(m.timestamp_ms),
        "timestamp_type": m.timestamp_type,
        "age_ms": age_ms(m, now_ms),
        "key_size": None if m.key is None else len(m.key),
        "value_size": None if m.value is None else len(m.value),
        "key": preview(m.key),
        "value": preview(m.value),
        "key_sha256": digest(m.key),
        "value_sha256": digest(m.value),
        "headers": [
            {
                "key": preview(k.encode("utf-8", "surrogateescape")),
                "value": preview(v),
                "size": None if v is None else len(v),
            }
            for k, v in m.headers
        ],
    }


def peeked_dict(p: Peeked, now_ms: int) -> dict:
    """One partition of peek's JSON document."""
    r = p.row
    at = p.at
    state = at.kind if at is not None else UNREAD
    return {
        **r.record.key.fields(),
        "topic": r.topic,
        "partition": r.record.partition,
        "offset": p.offset,
        "log_start": r.log_start,
        "log_end": r.log_end,
        "last_stable_offset": r.last_stable,
        "lag": r.lag,
        "codes": list(r.codes),
        "to_last_stable": census_dict(p.census) if p.census is not None else None,
        "to_last_stable_why": p.census_why or None,
        "state": state,
        "next_offset": at.next_offset if at is not None else None,
        "why": p.why if at is None else at.why,
        "messages": [message_dict(m, now_ms) for m in (at.messages if at is not None else ())],
    }


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
    "catch_up_s",
    "catch_up",
    "commit_rate",
    "log_rate",
    "lost_to_retention",
)


def peek_document(result: PeekResult, saved: str | None = None) -> dict:
    """peek's `--output json` document (docs/contract.md, "offctl peek"): each partition with inspect's figures of
    its row (PEEK_FIGURES), from the report peek read."""
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


def write_peek(result: PeekResult, fmt: str, out: IO[str], *, saved: str | None = None) -> None:
    """peek's answer: its JSON document, or for people each partition read and its messages, and where it saved."""
    if fmt == "json":
        out.write(dumps(peek_document(result, saved)))
        out.write("\n")
        return
    console = table_console(out)
    if not result.peeked:
        console.print(
            "no partition selected: every partition of these consumers is caught up (name some with --partitions)"
        )
    for p in result.peeked:
        _write_peeked(p, result.captured_ms, console)
    if saved:
        console.print(Text(f"saved to {saved} (manifest.json lists every file with its sha256)"))


def _write_peeked(p: Peeked, now_ms: int, console: Console) -> None:
    """One peeked partition for people: its line, the offsets counted to the last stable offset (or why not), why
    no message was read, then each message read with its key, value and headers."""
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
        _write_message(m, now_ms, console)


def _write_message(m: LogMessage, now_ms: int, console: Console) -> None:
    """A message read for people: its offset, timestamp, age and sizes, then its key, value and headers previewed."""
    d = message_dict(m, now_ms)
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


def _peek_head(p: Peeked) -> Text:
    """A peeked partition's line: where the spout resumes (inspect's resumes_at; the stored offset beside it where they
    differ, and the offset whose message is shown where that is neither), the log, the lag and the codes."""
    r = p.row
    head = Text(f"{r.record.key}  {r.topic or '?'}/{r.record.partition}", style="bold")
    stable = f"  last stable {number(r.last_stable)}" if r.last_stable is not None else ""
    resumes = r.resumes.at if r.resumes is not None else None
    stored = r.record.committed if r.record.malformed is None else None
    where = f"resumes at {number(resumes)}" + (f" (stored {number(stored)})" if resumes != stored else "")
    if p.offset is not None and p.offset not in (resumes, stored):
        where += f" (shown: the message at {number(p.offset)}, which it fetches first)"
    lost = lost_text(r.lost_to_retention)
    head.append(
        f"  {where}  log {number(r.log_start)}-{number(r.log_end)}{stable}  lag {number(r.lag)}"
        + (f"  {lost}" if lost else "")
        + (f"  [{', '.join(r.codes)}]" if r.codes else ""),
        style="",
    )
    return head


def _size(n: int | None) -> str:
    return "null" if n is None else f"{n:,} B"
