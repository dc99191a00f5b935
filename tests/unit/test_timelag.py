"""Time lag from the message a spout resumes at (offctl.core.time.timelag), on plain data: every source from rows and a
read, as a table. Against Apache Kafka, compacted gaps, transaction markers and LogAppendTime topics:
tests/e2e/test_timelag_e2e.py; messages without a timestamp (a format Kafka 4 no longer writes) are made here only."""

from __future__ import annotations

import pytest

from offctl.core.records.model import (
    KAFKA,
    ZOOKEEPER,
    ConsumerKey,
    LogMessage,
    MessageRead,
    OffsetRecord,
    PartitionRow,
    TimeLag,
    duration,
)
from offctl.core.time.timelag import (
    CAUGHT_UP,
    ESTIMATE,
    MESSAGE,
    NO_TIMESTAMP,
    UNREAD,
    consumer_maxima,
    measure,
    positions,
    served,
    time_lag,
    unread,
    unread_note,
)
from offctl.render.formats import time_lag_text

NOW = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z
SPOUT, GROUP = ConsumerKey(ZOOKEEPER, "orders", "/spouts"), ConsumerKey(KAFKA, "orders-client")


def row(
    committed: int | None,
    lag: int | None,
    *,
    key: ConsumerKey = SPOUT,
    partition: int = 0,
    topic: str | None = "t",
    log: tuple[int, int] = (0, 20),
) -> PartitionRow:
    return PartitionRow(OffsetRecord(key, partition, topic, committed), *log, lag, None, topic)


def msg(offset: int, ts: int | None, kind: str | None = "CreateTime", partition: int = 0) -> LogMessage:
    return LogMessage("t", partition, offset, ts, kind if ts is not None else None, None, b"v")


@pytest.mark.parametrize(
    "r, read, expected",
    [
        # the message at the resume offset: its age at the capture time, to the millisecond
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, NOW - 65_250),)}), TimeLag(65.25, MESSAGE)),
        # LogAppendTime: the broker's clock; the figure is the same arithmetic on its timestamp
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, NOW - 3_000, "LogAppendTime"),)}), TimeLag(3.0, MESSAGE)),
        # a compacted gap (or markers) at 12: the spout is handed 15 first, so 15's age counts
        # (PartitionManager.fill skips offsets below the one it fetched from, v1.2.4)
        (row(12, 8), MessageRead({("t", 0, 12): (msg(15, NOW - 7_000),)}), TimeLag(7.0, MESSAGE)),
        # nothing from 18 to the log end 20 (markers): nothing waits
        (row(18, 2), MessageRead(at_end=frozenset({("t", 0, 18)})), TimeLag(0.0, CAUGHT_UP)),
        # a producer's clock ahead of ours: never negative
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, NOW + 5_000),)}), TimeLag(0.0, MESSAGE)),
        # message format v0: no timestamp, no figure
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, None),)}), TimeLag(None, NO_TIMESTAMP)),
        # the budget ran out: no figure, and why
        (
            row(12, 8),
            MessageRead(unread={("t", 0, 12): "not read within the time budget of 5s"}),
            TimeLag(None, UNREAD),
        ),
        # not asked for at all
        (row(12, 8), MessageRead(), TimeLag(None, UNREAD)),
    ],
    ids=[
        "message",
        "log-append-time",
        "compacted-gap",
        "markers-to-end",
        "clock-ahead",
        "no-timestamp",
        "budget",
        "not-read",
    ],
)
def test_the_time_lag_of_a_lagging_partition(r, read, expected):
    got = time_lag(r, measure([r], read, NOW))
    assert got[:2] == expected[:2]
    assert (got.why != "") == (expected.seconds is None)


def test_a_legacy_commit_is_timed_at_the_offset_the_spout_resumes_from():
    """storm-kafka-client before 1.1.2 committed the last processed offset: the analysis resumes one past it, and
    the lag (log end - that) says where; the message read is the one there, not at the stored offset."""
    legacy = row(11, 8, key=GROUP)  # committed 11, resumes at 12 (20 - 8)
    assert positions([legacy]) == [("t", 0, 12)]
    read = MessageRead({("t", 0, 12): (msg(12, NOW - 1_000),)})
    assert time_lag(legacy, measure([legacy], read, NOW)) == TimeLag(1.0, MESSAGE)


@pytest.mark.parametrize(
    "r, expected",
    [
        (row(20, 0), TimeLag(0.0, CAUGHT_UP)),  # lag 0: 0 exactly, nothing read
        (row(25, None), TimeLag(None, None)),  # above the log end: no lag, no time lag
        (row(None, None), TimeLag(None, None)),  # a record the spout cannot use
        (row(3, None, topic=None), TimeLag(None, None)),  # a tie of topics: no lag
    ],
)
def test_partitions_without_a_lag_above_0_are_never_read(r, expected):
    assert positions([r]) == []
    assert time_lag(r, {}) == expected


def test_consumers_at_one_position_share_one_read():
    rows = [row(12, 8), row(12, 8, key=GROUP), row(20, 0), row(5, 15, partition=1)]
    assert positions(rows) == [("t", 0, 12), ("t", 1, 5)]


@pytest.mark.parametrize(
    "exact, estimate, expected",
    [
        (TimeLag(4.0, MESSAGE), 9.5, TimeLag(4.0, MESSAGE)),  # the message wins over the estimate
        (TimeLag(None, UNREAD, "budget"), 9.5, TimeLag(9.5, ESTIMATE)),  # not read: the estimate, said so
        (TimeLag(None, NO_TIMESTAMP, "v0"), 9.5, TimeLag(9.5, ESTIMATE)),
        (TimeLag(None, UNREAD, "budget"), None, TimeLag(None, UNREAD, "budget")),  # neither: unread stays
    ],
)
def test_serve_falls_back_to_the_estimate_where_the_message_gave_no_figure(exact, estimate, expected):
    r = row(12, 8)
    assert served(r, {("t", 0, 12): exact}, estimate) == expected
    assert served(row(20, 0), {}, 3.0) == TimeLag(0.0, CAUGHT_UP)  # caught up is exact, whatever the estimate


def test_the_estimate_does_not_stand_in_where_the_lag_counts_from_elsewhere():
    # a stored offset the spout ignores (EARLIEST, KafkaSpout.doSeek v2.8.8): the lag counts from the log start,
    # 20 - 0; the history's estimate is the age of the stored offset 12, another message
    from dataclasses import replace

    ignored = replace(row(12, 20), resumes_stored=False)
    unread = TimeLag(None, UNREAD, "budget")
    assert served(ignored, {("t", 0, 0): unread}, 9.5) == unread
    assert served(replace(ignored, resumes_stored=True), {("t", 0, 0): unread}, 9.5) == TimeLag(9.5, ESTIMATE)


def test_each_consumer_gets_its_largest_time_lag_and_partitions_without_one_are_left_out():
    rows = [
        row(12, 8),
        row(5, 15, partition=1),
        row(9, 11, partition=2),
        row(20, 0, key=GROUP),
        row(25, None, key=ConsumerKey(KAFKA, "lost")),
    ]
    lags = {
        ("t", 0, 12): TimeLag(4.0, MESSAGE),
        ("t", 1, 5): TimeLag(60.0, MESSAGE),
        ("t", 2, 9): TimeLag(None, UNREAD, "budget"),
    }
    maxima = consumer_maxima(rows, [time_lag(r, lags) for r in rows])
    assert maxima == {SPOUT: TimeLag(60.0, MESSAGE), GROUP: TimeLag(0.0, CAUGHT_UP)}


def test_what_was_not_read_is_one_note_saying_why():
    lags = {
        **unread([("t", 0, 1), ("t", 1, 2)], "not read within the time budget of 5s"),
        ("t", 2, 3): TimeLag(1.0, MESSAGE),
    }
    assert unread_note(lags) == (
        "time lag unknown for 2 lagging partitions (time_lag_source unread): not read within the time budget of 5s"
    )
    assert unread_note({("t", 2, 3): TimeLag(1.0, MESSAGE)}) is None


@pytest.mark.parametrize(
    "lag, text",
    [
        (TimeLag(0.0, CAUGHT_UP), "0s"),
        (TimeLag(4.25, MESSAGE), "4.2s"),
        (TimeLag(59.9, MESSAGE), "1m00s"),
        (TimeLag(307.0, MESSAGE), "5m07s"),
        (TimeLag(10_925.0, ESTIMATE), "~3h02m"),
        (TimeLag(187_205.0, MESSAGE), "2d04h"),
        (TimeLag(None, UNREAD), "unread"),
        (TimeLag(None, NO_TIMESTAMP), "no timestamp"),
        (TimeLag(None, None), "-"),
        (None, "-"),
    ],
)
def test_time_lags_in_tables(lag, text):
    assert time_lag_text(lag) == text
    if lag is not None and lag.seconds is not None:
        assert duration(lag.seconds) == text.lstrip("~")


# --- inspect's read (offctl.pipeline.assess.with_time_lags) with a store that answers as told -------------------------


class Store:
    """A LogStore's read_messages: what a read within the budget found, or a failure."""

    def __init__(self, read: MessageRead | None = None, fails: bool = False) -> None:
        self.read, self.fails, self.asked = read or MessageRead(), fails, []

    def read_messages(self, wanted, *, count=1, budget_s=None, isolation_level=None):
        self.asked.append((list(wanted), budget_s))
        if self.fails:
            from offctl.errors import StoreUnavailable

            raise StoreUnavailable("Kafka at k1:9092 did not answer a read of messages within 10s")
        return self.read


def report(*rows: PartitionRow):
    from offctl.core.records.model import Report

    return Report(NOW, rows, (), (), notes=("an earlier note",))


def test_inspect_reads_only_lagging_positions_within_its_budget_and_notes_what_it_did_not_get():
    from offctl.pipeline.assess import with_time_lags
    from offctl.pipeline.inspect import exit_code

    store = Store(
        MessageRead(
            {("t", 0, 12): (msg(12, NOW - 2_000),)}, unread={("t", 1, 5): "not read within the time budget of 5s"}
        )
    )
    got = with_time_lags(report(row(12, 8), row(5, 15, partition=1), row(20, 0, partition=2)), store, 5.0)
    assert store.asked == [([("t", 0, 12), ("t", 1, 5)], 5.0)]
    assert time_lag(got.rows[0], got.time_lags) == TimeLag(2.0, MESSAGE)
    assert time_lag(got.rows[1], got.time_lags).source == UNREAD
    assert got.notes == (
        "an earlier note",
        "time lag unknown for 1 lagging partition (time_lag_source unread): "
        "t/1 offset 5: not read within the time budget of 5s",
    )
    assert not got.incomplete and exit_code(got, "error") == 0  # the offsets and lags are complete: no exit 3


def test_a_read_that_fails_leaves_the_time_lags_unread_not_the_report():
    from offctl.pipeline.assess import with_time_lags

    got = with_time_lags(report(row(12, 8)), Store(fails=True), 5.0)
    assert time_lag(got.rows[0], got.time_lags).source == UNREAD
    assert "did not answer a read of messages" in got.notes[-1] and not got.incomplete


def test_nothing_is_read_when_nothing_lags_or_the_budget_is_0():
    from offctl.pipeline.assess import with_time_lags

    store = Store()
    caught_up = report(row(20, 0), row(25, None, partition=1))
    assert with_time_lags(caught_up, store, 5.0) is caught_up and store.asked == []
    off = with_time_lags(report(row(12, 8)), store, 0)
    assert store.asked == [] and time_lag(off.rows[0], off.time_lags).source == UNREAD
    assert off.notes == ("an earlier note",)  # turned off on purpose: no note


@pytest.mark.parametrize("lag, expected", [(0, TimeLag(0.0, CAUGHT_UP)), (5, TimeLag(42.5, MESSAGE))])
def test_serve_and_watch_give_an_unusable_records_partition_inspects_time_lag(lag, expected):
    """A record the spout cannot use (MALFORMED_RECORD: no stored offset to follow, so no history) still has a lag,
    from where the spout starts instead: serve's and watch's cycle shows its time lag as inspect does, not none."""
    from dataclasses import replace

    from offctl.core.records.model import Report
    from offctl.faces.serve.monitor import Monitor

    unusable = replace(row(None, lag, log=(0, 20)), record=OffsetRecord(SPOUT, 0, "t", None, malformed="not JSON"))
    report = Report(NOW, (unusable,), (), (), time_lags={("t", 0, 20 - lag): TimeLag(42.5, MESSAGE)} if lag else {})
    m = Monitor()
    m.update(report, 0.1)
    assert m.cycle.statuses[unusable.partition_key] == (None, expected) == (None, time_lag(unusable, report.time_lags))
