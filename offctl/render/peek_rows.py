"""`offctl peek`'s JSON rows: each partition read, and each message as its sizes, previews and digests, from the
core's Peeked results (offctl.core.records.peeked); the MCP peek tool answers with them too."""

from __future__ import annotations

from offctl.core.records.messages import UNREAD, age_ms
from offctl.core.records.model import iso_ms
from offctl.core.records.peeked import Census, Peeked, digest, preview


def census_dict(c: Census) -> dict:
    return {
        "offsets": c.offsets,
        "records": c.records,
        "aborted": c.aborted,
        "markers": c.markers,
        "markers_or_compacted": c.compacted,
    }


def message_dict(m, now_ms: int) -> dict:
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
