"""`offctl peek`, the pure part: which partitions to look at, what each shows, and safe previews. Pure.

A spout resumes a partition at its stored offset (storm-kafka's PartitionManager starts at the record's
offset, storm-kafka-client's KafkaSpout.doSeek seeks to the commit, a Trident emitter at the highest txid's
nextOffset or lastOffset + 1: docs/storm.md), so the message there is the one it is stuck on when a partition
does not move. offctl.core.messages says what lies at that offset.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from hashlib import sha256

from offctl.core.messages import UNREAD, AtOffset, age_ms, at_offset, needs_read
from offctl.core.model import PartitionLog, PartitionRow, Position, MessageRead, iso_ms

PREVIEW_CHARS = 80  # characters of a text preview; a binary one shows half as many bytes, in hex
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


@dataclass(frozen=True, slots=True)
class Peeked:
    """One selected partition: where its spout resumes, and what is there."""

    row: PartitionRow
    offset: int | None  # the stored offset the spout resumes from; None: no offset it can use
    at: AtOffset | None  # None when there is no offset to look at
    why: str = ""  # why there is nothing to look at


def selected(rows: Iterable[PartitionRow], partitions: frozenset[int] | None) -> list[PartitionRow]:
    """The rows to peek at: the partitions named, or by default those not caught up (lag above 0, or no lag
    because the offset is out of range or unusable), in the report's order."""
    if partitions is not None:
        return [r for r in rows if r.record.partition in partitions]
    return [r for r in rows if r.lag is None or r.lag > 0]


def positions(rows: Sequence[PartitionRow]) -> list[Position]:
    """The offsets a read must fetch: each row's resume offset, where the log can hold a message there."""
    return [(r.topic, r.record.partition, r.record.committed) for r in rows
            if r.topic is not None and r.record.committed is not None and r.record.malformed is None
            and needs_read(r.record.committed, _log(r))]


def peeked(rows: Sequence[PartitionRow], read: MessageRead) -> list[Peeked]:
    """What is at each row's resume offset, from the read."""
    out = []
    for r in rows:
        rec = r.record
        if rec.malformed is not None:
            out.append(Peeked(r, None, None, f"the record is unusable ({rec.malformed}): the spout starts this "
                                             f"partition as if it had none (see inspect's finding)"))
        elif rec.committed is None:
            out.append(Peeked(r, None, None, "no stored offset"))
        elif r.topic is None:
            out.append(Peeked(r, rec.committed, None, "offctl cannot tell which topic the offset applies to "
                                                      "(give --topic)"))
        else:
            out.append(Peeked(r, rec.committed, at_offset(r.topic, rec.partition, rec.committed, _log(r), read)))
    return out


def _log(row: PartitionRow) -> PartitionLog | None:
    return None if row.log_start is None and row.log_end is None else PartitionLog(row.log_start, row.log_end)


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


def message_dict(m, now_ms: int) -> dict:
    """A message as peek's JSON shows it: sizes, a preview and sha256 of key and value, headers previewed."""
    return {
        "offset": m.offset, "timestamp": iso_ms(m.timestamp_ms), "timestamp_type": m.timestamp_type,
        "age_ms": age_ms(m, now_ms),
        "key_size": None if m.key is None else len(m.key), "value_size": None if m.value is None else len(m.value),
        "key": preview(m.key), "value": preview(m.value),
        "key_sha256": digest(m.key), "value_sha256": digest(m.value),
        "headers": [{"key": preview(k.encode("utf-8", "surrogateescape")), "value": preview(v),
                     "size": None if v is None else len(v)} for k, v in m.headers],
    }


def peeked_dict(p: Peeked, now_ms: int) -> dict:
    """One partition of peek's JSON document."""
    r = p.row
    at = p.at
    state = at.kind if at is not None else UNREAD
    return {
        **r.record.key.fields(), "topic": r.topic, "partition": r.record.partition, "offset": p.offset,
        "log_start": r.log_start, "log_end": r.log_end, "lag": r.lag, "codes": list(r.codes),
        "state": state, "next_offset": at.next_offset if at is not None else None,
        "why": p.why if at is None else at.why,
        "messages": [message_dict(m, now_ms) for m in (at.messages if at is not None else ())],
    }


def unanswered(p: Peeked) -> bool:
    """Whether the read could not say what is at the resume offset (time budget, broker refusal, no log)."""
    return p.at is not None and p.at.kind == UNREAD
