"""`offctl peek`, the pure part: which partitions to look at, what each shows, and safe previews. Pure.

A spout resumes a partition at its stored offset (storm-kafka's PartitionManager starts at the record's
offset, storm-kafka-client's KafkaSpout.doSeek seeks to the commit, a Trident emitter at the highest txid's
nextOffset or lastOffset + 1: docs/storm.md; JStorm's PartitionConsumer fetches the stored offset + 1), so the message
there is the one it is stuck on when a partition does not move. offctl.core.records.messages says what lies at that
offset.

A spout that reads committed (row.last_stable) is handed the first committed record at or after its offset, so its
partitions are read as a read_committed consumer reads them; and the offsets from its commit to the last stable
offset are counted (`Census`): the records it will be handed, the records of aborted transactions it skips, and the
transaction markers, which no consumer is handed. Its lag counts offsets, so a spout that has read everything still
lags by the markers and aborted records behind it: the census says how much of its lag that is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from hashlib import sha256

from offctl.core.records.messages import UNREAD, AtOffset, at_offset, needs_read
from offctl.core.records.model import JSTORM, MessageRead, OffsetRecord, PartitionLog, PartitionRow, Position
from offctl.core.storm import jstorm

HELD = "held"  # at or past the last stable offset, below the log end: an open transaction's records
PREVIEW_CHARS = 80  # characters of a text preview; a binary one shows half as many bytes, in hex
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


CENSUS_OFFSETS = 10_000  # the most offsets between a commit and the last stable offset that peek counts


@dataclass(frozen=True, slots=True)
class Census:
    """The offsets from a read_committed spout's commit to the last stable offset, by what is there."""

    offsets: int  # last stable offset - commit
    records: int  # committed records: the ones the spout will be handed
    aborted: int  # records of aborted transactions: read_committed skips them
    markers: int  # transaction markers (control records), or records compaction removed (`compacted`)
    compacted: bool = False  # the topic may be compacted: a missing offset is a marker or a removed record

    def text(self, last_stable: int) -> str:
        markers = "transaction markers or compacted records" if self.compacted else "transaction markers"
        return (
            f"to the last stable offset {last_stable}: {self.offsets:,} offsets, {self.records:,} committed "
            f"records the spout will be handed, {self.aborted:,} aborted records it skips, {self.markers:,} "
            f"{markers}"
        )


@dataclass(frozen=True, slots=True)
class Peeked:
    """One selected partition: where its spout resumes, and what is there."""

    row: PartitionRow
    offset: int | None  # the offset it fetches first from its stored one (fetched_first); None: none it can use
    at: AtOffset | None  # None when there is no offset to look at
    why: str = ""  # why there is nothing to look at
    census: Census | None = None  # a spout that reads committed: its offsets to the last stable offset, counted
    census_why: str = ""  # why they were not counted (a spout that reads committed only)


def fetched_first(record: OffsetRecord) -> int | None:
    """The offset whose message the spout fetches first from its stored record: the stored offset, or a JStorm spout's
    + 1 (jstorm.resumes_at: PartitionConsumer.fillMessages fetches emittingOffset + 1); None without one."""
    if record.committed is None:
        return None
    return jstorm.resumes_at(record.committed) if record.key.store == JSTORM else record.committed


def selected(rows: Iterable[PartitionRow], partitions: frozenset[int] | None) -> list[PartitionRow]:
    """The rows to peek at: the partitions named, or by default those not caught up (lag above 0, or no lag
    because the offset is out of range or unusable), in the report's order."""
    if partitions is not None:
        return [r for r in rows if r.record.partition in partitions]
    return [r for r in rows if r.lag is None or r.lag > 0]


def positions(rows: Sequence[PartitionRow]) -> list[Position]:
    """The offsets a read must fetch: each row's resume offset, where the log can hold a message there."""
    return [
        (r.topic, r.record.partition, fetched_first(r.record))
        for r in rows
        if r.topic is not None
        and r.record.committed is not None
        and r.record.malformed is None
        and needs_read(fetched_first(r.record), _log(r))
    ]


def read_committed_positions(rows: Sequence[PartitionRow]) -> frozenset[Position]:
    """The positions of `positions` where a spout that reads committed resumes: read as it reads them."""
    return frozenset(
        (r.topic, r.record.partition, r.record.committed)
        for r in rows
        if r.last_stable is not None
        and r.topic is not None
        and r.record.committed is not None
        and r.record.malformed is None
    )


def census_positions(rows: Sequence[PartitionRow]) -> tuple[list[Position], int]:
    """Where to count from (the commits of spouts that read committed, below the last stable offset by at most
    CENSUS_OFFSETS) and how many messages a read must be able to hand each."""
    wanted = [(r.topic, r.record.partition, r.record.committed) for r in rows if _countable(r) is None]
    span = max((r.last_stable - r.record.committed for r in rows if _countable(r) is None), default=0)
    return list(dict.fromkeys(wanted)), span


def _countable(r: PartitionRow) -> str | None:
    """Why the offsets from this row's commit to the last stable offset are not counted; None when they are."""
    c = r.record.committed
    if r.last_stable is None or r.topic is None or c is None or r.record.malformed is not None:
        return "not a spout that reads committed"
    if r.log_start is None or c < r.log_start:
        return "the commit is below the log start"
    if c >= r.last_stable:
        return f"the commit is at or past the last stable offset {r.last_stable}: nothing lies between"
    if r.last_stable - c > CENSUS_OFFSETS:
        return f"{r.last_stable - c:,} offsets lie between, more than the {CENSUS_OFFSETS:,} peek counts"
    return None


def census(
    r: PartitionRow, committed: MessageRead, uncommitted: MessageRead, compacted: bool = False
) -> tuple[Census | None, str]:
    """The census of a row's offsets from its commit to the last stable offset, from a read_committed and a
    read_uncommitted read of them; None and why where it cannot be made."""
    why = _countable(r)
    if why is not None:
        return None, why
    position = (r.topic, r.record.partition, r.record.committed)
    last_stable = r.last_stable
    records = [m for m in committed.messages.get(position, ()) if m.offset < last_stable]
    data = [m for m in uncommitted.messages.get(position, ()) if m.offset < last_stable]
    for read in (committed, uncommitted):
        seen_past = any(m.offset >= last_stable for m in read.messages.get(position, ()))
        if position in read.unread and not seen_past and position not in read.at_end:
            return None, f"not counted: {read.unread[position]}"
    offsets = last_stable - r.record.committed
    return Census(offsets, len(records), len(data) - len(records), offsets - len(data), compacted), ""


def peeked(
    rows: Sequence[PartitionRow], read: MessageRead, counted: dict[Position, tuple[Census | None, str]] | None = None
) -> list[Peeked]:
    """What is at each row's resume offset, from the read; `counted`: the census of the rows of spouts that read
    committed, by their position."""
    out = []
    counted = counted or {}
    for r in rows:
        rec = r.record
        if rec.malformed is not None:
            out.append(
                Peeked(
                    r,
                    None,
                    None,
                    f"the record is unusable ({rec.malformed}): the spout starts this "
                    f"partition as if it had none (see inspect's finding)",
                )
            )
        elif rec.committed is None:
            out.append(Peeked(r, None, None, "no stored offset"))
        elif r.topic is None:
            out.append(
                Peeked(r, rec.committed, None, "offctl cannot tell which topic the offset applies to (give --topic)")
            )
        elif r.last_stable is not None and r.log_end is not None and r.last_stable <= rec.committed < r.log_end:
            at = AtOffset(
                r.topic,
                rec.partition,
                rec.committed,
                HELD,
                why=f"{r.topic}/{rec.partition} offset {rec.committed} is at or past the last stable offset "
                f"{r.last_stable}: the records from there to the log end {r.log_end} are in an open "
                f"transaction, and a read_committed spout is handed none of them until it ends",
            )
            out.append(Peeked(r, rec.committed, at, census_why=_countable(r) or ""))
        else:
            found, why = counted.get((r.topic, rec.partition, rec.committed), (None, _countable(r) or ""))
            first = fetched_first(rec)
            out.append(
                Peeked(
                    r,
                    first,
                    at_offset(r.topic, rec.partition, first, _log(r), read),
                    census=found,
                    census_why=why if r.last_stable is not None else "",
                )
            )
    return out


def _log(row: PartitionRow) -> PartitionLog | None:
    """The log a spout reads: up to the last stable offset where it reads committed, else the log end."""
    return None if row.log_start is None and row.log_end is None else PartitionLog(row.log_start, row.lag_end)


def preview(data: bytes | None, limit: int = PREVIEW_CHARS) -> str:
    """What a terminal can show of a key or value without being driven by it: null, empty, text with every
    control or unprintable character escaped (\\n, \\x1b, \\u200b), or hex where the bytes are not UTF-8 text.
    Cut at `limit` characters with '...'."""
    if data is None:
        return "null"
    if not data:
        return "(empty)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and sum(ch.isprintable() or ch in _ESCAPES for ch in text) >= 0.9 * len(text):
        shown = "".join(ch if ch.isprintable() else _ESCAPES.get(ch) or _escape(ch) for ch in text[:limit])
        return shown + ("..." if len(text) > limit else "")
    half = max(1, limit // 2)
    return "hex:" + data[:half].hex() + ("..." if len(data) > half else "")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def digest(data: bytes | None) -> str | None:
    return None if data is None else sha256(data).hexdigest()


def unanswered(p: Peeked) -> bool:
    """Whether the read could not say what is at the resume offset (time budget, broker refusal, no log)."""
    return p.at is not None and p.at.kind == UNREAD
