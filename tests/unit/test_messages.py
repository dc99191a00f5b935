"""What lies at an offset (offctl.core.records.messages), on plain data: every kind from the log offsets and a read, as
a table. Against Apache Kafka, records deleted below the log start, a compacted topic's gaps and transaction markers:
tests/e2e/test_peek.py."""

from __future__ import annotations

import pytest

from offctl.core.records.messages import DELETED, GAP, MESSAGE, NOT_WRITTEN, UNREAD, age_ms, at_offset, needs_read
from offctl.core.records.model import LogMessage, MessageRead, PartitionLog


def _msg(offset: int, ts: int | None = 1_000) -> LogMessage:
    return LogMessage("t", 0, offset, ts, "CreateTime" if ts is not None else None, None, b"v")


LOG = PartitionLog(10, 20)


@pytest.mark.parametrize(
    "offset, log, read, kind, why",
    [
        (9, LOG, MessageRead(), DELETED, "below the log start 10: deleted by retention"),
        (20, LOG, MessageRead(), NOT_WRITTEN, "at or past the log end 20: not yet written"),
        (25, LOG, MessageRead(), NOT_WRITTEN, "not yet written"),
        (12, LOG, MessageRead({("t", 0, 12): (_msg(12),)}), MESSAGE, ""),
        (
            12,
            LOG,
            MessageRead({("t", 0, 12): (_msg(15),)}),
            GAP,
            "the next one is at 15 (offsets 12-14: removed by compaction",
        ),
        (
            12,
            LOG,
            MessageRead({("t", 0, 12): (_msg(13),)}),
            GAP,
            "(offset 12: removed by compaction, or transaction markers",
        ),
        (18, LOG, MessageRead(at_end=frozenset({("t", 0, 18)})), GAP, "no message from offset 18 to the log end 20"),
        (
            12,
            LOG,
            MessageRead(unread={("t", 0, 12): "not read within the time budget of 5s"}),
            UNREAD,
            "time budget of 5s",
        ),
        (12, LOG, MessageRead(), UNREAD, "not read"),
        (12, None, MessageRead(), UNREAD, "no log offsets"),
        (12, PartitionLog(None, 20), MessageRead(), UNREAD, "no log offsets"),
    ],
    ids=[
        "retention",
        "log-end",
        "past-log-end",
        "message",
        "compacted-gap",
        "one-offset-gap",
        "markers-to-end",
        "budget",
        "not-asked",
        "no-log",
        "no-log-start",
    ],
)
def test_what_lies_at_an_offset(offset, log, read, kind, why):
    at = at_offset("t", 0, offset, log, read)
    assert at.kind == kind and why in at.why
    assert needs_read(offset, log) == (log is not None and log.log_start is not None and 10 <= offset < 20)
    assert at.next_offset == (at.first.offset if kind == GAP and at.first else None)


@pytest.mark.parametrize(
    "message, now, age",
    [
        (_msg(1, 1_000), 61_000, 60_000),
        (_msg(1, 5_000), 1_000, 0),  # a producer's clock ahead of ours: never a negative age
        (_msg(1, None), 61_000, None),  # message format v0 has no timestamp
        (None, 61_000, None),
    ],
)
def test_age_of_a_message(message, now, age):
    assert age_ms(message, now) == age
