"""Commit expiry of storm-kafka-client groups (offctl.core.time.expiry), on plain data: every guarantee, release line
and first-poll strategy, each source of the last commit time, the broker's setting against the option and the default,
and serve's last move. No broker expires offsets in a test's time, so the expiry itself is shown here, as are a
value no broker takes and a broker that lacks the setting (before Kafka 0.11, no DescribeConfigs). Against Apache
Kafka (tests/e2e/test_expiry_e2e.py): the broker's default and a value set in its server.properties, a principal refused
DescribeConfigs (the option, else the default assumed), LogAppendTime, a transaction marker at C - 1, the finding
and serve's move."""

from __future__ import annotations

from dataclasses import replace

import pytest

from offctl.core.records.model import (
    KAFKA,
    TRIDENT,
    ZOOKEEPER,
    ConsumerKey,
    ConsumerSummary,
    LogMessage,
    MessageRead,
    OffsetRecord,
    PartitionRow,
    Report,
    Severity,
)
from offctl.core.storm.releases import FirstPoll, Guarantee, SpoutProfile, StormKafkaClient
from offctl.core.time.expiry import (
    ASSUMED,
    BROKER,
    HORIZON_S,
    KAFKA_DEFAULT_MINUTES,
    MESSAGE,
    MOVED,
    NO_MESSAGE,
    NO_TIMESTAMP,
    OPTION,
    UNREAD,
    Expiry,
    Retention,
    acked_position,
    assess,
    estimate,
    expiry_finding,
    moved_after_ms,
    not_refreshed,
    positions,
    retention_of,
    unread_note,
)
from offctl.core.time.history import Observation

NOW = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z
MIN, HOUR, DAY = 60_000, 3_600_000, 86_400_000
GROUP = ConsumerKey(KAFKA, "orders-client")
WEEK = Retention(KAFKA_DEFAULT_MINUTES, BROKER)


def row(
    committed: int = 12,
    lag: int | None = 8,
    *,
    key: ConsumerKey = GROUP,
    partition: int = 0,
    log: tuple[int, int] = (0, 20),
    trident: str | None = None,
) -> PartitionRow:
    return PartitionRow(OffsetRecord(key, partition, "t", committed, trident=trident), *log, lag, None, "t")


def msg(offset: int, ts: int | None, partition: int = 0) -> LogMessage:
    return LogMessage("t", partition, offset, ts, "CreateTime" if ts is not None else None, None, b"v")


def acked(ts: int | None, offset: int = 11) -> MessageRead:
    return MessageRead({("t", 0, offset): (msg(offset, ts),)})


def profile(
    guarantee=Guarantee.AT_LEAST_ONCE, first_poll=FirstPoll.UNCOMMITTED_EARLIEST, client=StormKafkaClient.CURRENT
) -> SpoutProfile:
    return SpoutProfile(guarantee=guarantee, first_poll=first_poll, client=client)


# --- which spouts' commits age while they run (KafkaSpout, v1.2.4 and v2.8.8) ------------------------------------


@pytest.mark.parametrize(
    "guarantee, client, ages",
    [
        (Guarantee.AT_LEAST_ONCE, StormKafkaClient.CURRENT, True),  # commitOffsetsForAckedTuples: only new acks
        (Guarantee.AT_MOST_ONCE, StormKafkaClient.CURRENT, False),  # commitSync of every position after each poll
        (Guarantee.NO_GUARANTEE, StormKafkaClient.CURRENT, False),  # commitAsync of every position on the timer
        (Guarantee.AT_LEAST_ONCE, StormKafkaClient.LEGACY, False),  # 1.0.0-1.0.5, 1.1.0-1.1.1 subscribe: members
    ],
)
def test_only_at_least_once_spouts_of_the_assigning_releases_leave_an_idle_commit_to_age(guarantee, client, ages):
    p = profile(guarantee, client=client)
    assert (not_refreshed(p) is not None) == ages
    got, found = assess(Report(NOW, (row(),), (), ()), acked(NOW - 7 * DAY + HOUR), WEEK, p)
    assert bool(got) == ages and bool(found) == ages


# --- the broker's offsets.retention.minutes, the option, Kafka's default ------------------------------------------


@pytest.mark.parametrize(
    "reported, option, why, expected",
    [
        ({"offsets.retention.minutes": "1440"}, None, "", Retention(1440, BROKER)),
        ({"offsets.retention.minutes": "1440"}, 60, "", Retention(1440, BROKER)),  # the broker's own value wins
        (
            {},
            60,
            "broker 1 does not report offsets.retention.minutes",
            Retention(60, OPTION, "broker 1 does not report offsets.retention.minutes"),
        ),
        (
            {},
            None,
            "a describe-configs request failed: Broker: Cluster authorization failed",
            Retention(10080, ASSUMED, "a describe-configs request failed: Broker: Cluster authorization failed"),
        ),
        # a value no broker takes is not used: the option, else the default, and the reason names it
        (
            {"offsets.retention.minutes": "-5"},
            90,
            "",
            Retention(90, OPTION, "the broker reports offsets.retention.minutes='-5'"),
        ),
        (
            {"offsets.retention.minutes": "9" * 30},
            None,
            "",
            Retention(10080, ASSUMED, f"the broker reports offsets.retention.minutes={'9' * 30!r}"),
        ),
    ],
    ids=["broker", "broker-wins", "option", "assumed", "bad-value-option", "bad-value-assumed"],
)
def test_the_retention_comes_from_the_broker_then_the_option_then_kafkas_default(reported, option, why, expected):
    got = retention_of(reported, option, why)
    assert got == expected
    assert ("assumed" in got.text()) == (got.source == ASSUMED)


# --- the last commit, from below ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "r, read, moved, expected",
    [
        # the message before the committed offset: committed no earlier than its timestamp; expiry a week later
        (row(), acked(NOW - 2 * DAY), None, Expiry(5 * 86400.0, MESSAGE, NOW + 5 * DAY, NOW - 2 * DAY)),
        # past: negative headroom
        (row(), acked(NOW - 8 * DAY), None, Expiry(-86400.0, MESSAGE, NOW - DAY, NOW - 8 * DAY)),
        # caught up (lag 0): the acked message is the last one
        (row(20, 0), acked(NOW - DAY, 19), None, Expiry(6 * 86400.0, MESSAGE, NOW + 6 * DAY, NOW - DAY)),
        # serve saw the offset move later than the message's time: the later bound is used
        (row(), acked(NOW - 2 * DAY), NOW - HOUR, Expiry(7 * 86400.0 - 3600, MOVED, NOW + 7 * DAY - HOUR, NOW - HOUR)),
        # ... and an earlier move does not lower the estimate
        (row(), acked(NOW - 2 * DAY), NOW - 3 * DAY, Expiry(5 * 86400.0, MESSAGE, NOW + 5 * DAY, NOW - 2 * DAY)),
        # no figure: message format v0, a gap at C - 1 (compaction, a marker: the message after it is later than the
        # commit, no bound), not read
        (row(), acked(None), None, Expiry(None, NO_TIMESTAMP)),
        (row(), MessageRead({("t", 0, 11): (msg(12, NOW - DAY),)}), None, Expiry(None, NO_MESSAGE)),
        (
            row(),
            MessageRead(unread={("t", 0, 11): "not read within the time budget of 5s"}),
            None,
            Expiry(None, UNREAD),
        ),
        # C - 1 below the log start: nothing to read, but serve's move still dates it
        (
            row(12, 8, log=(12, 20)),
            MessageRead(),
            NOW - HOUR,
            Expiry(7 * 86400.0 - 3600, MOVED, NOW + 7 * DAY - HOUR, NOW - HOUR),
        ),
    ],
    ids=[
        "message",
        "past",
        "caught-up",
        "moved-later",
        "moved-earlier",
        "no-timestamp",
        "gap",
        "unread",
        "deleted-moved",
    ],
)
def test_the_expiry_is_the_last_commit_from_below_plus_the_retention(r, read, moved, expected):
    got = estimate(r, read, NOW, WEEK, moved)
    assert got is not None and got.headroom_s == expected.headroom_s and got.source == expected.source
    assert (got.expires_ms, got.committed_after_ms) == (expected.expires_ms, expected.committed_after_ms)
    assert (got.why != "") == (expected.headroom_s is None)


@pytest.mark.parametrize(
    "r, position, estimated",
    [
        (row(), ("t", 0, 11), Expiry(None, UNREAD)),
        (row(12, 8, log=(12, 20)), None, None),  # C - 1 is below the log start: deleted (serve's move may date it)
        (row(12, None), None, None),  # no lag: the spout does not resume from this commit inside the log
        (row(key=ConsumerKey(ZOOKEEPER, "orders", "/spouts")), None, None),  # storm-kafka: no Kafka commit to expire
        (row(key=ConsumerKey(TRIDENT, "tx", "/transactional"), trident="storm-kafka-client"), None, None),
        (row(0, 20), None, None),  # committed at offset 0: nothing acked yet
        # a commit LATEST ignores (KafkaSpout.doSeek, v2.8.8): the lag counts from the log end (0), not the commit,
        # so log_end - lag - 1 is no acked message, and the commit's expiry changes nothing
        (replace(row(12, 0), resumes_stored=False), None, None),
    ],
)
def test_only_the_acked_message_of_a_storm_kafka_client_commit_inside_the_log_is_read(r, position, estimated):
    """Issue 28: the second assertion was `estimate(...) is None or position is not None`, true of every row here.
    Now each row's estimate with nothing read and no move seen: none where there is no acked message to read, else
    no figure, `unread`."""
    assert acked_position(r) == position
    got = estimate(r, MessageRead(), NOW, WEEK)
    if estimated is None:
        assert got is None
    else:
        assert got is not None and (got.headroom_s, got.source) == (estimated.headroom_s, estimated.source)


def test_a_group_with_members_is_not_read_or_reported():
    """Kafka expires a group with members by other rules (the spout's releases that subscribe, or a collision:
    GROUP_TYPE_CONFLICT); the estimate is for groups with no members only."""
    busy, idle = ConsumerKey(KAFKA, "busy"), ConsumerKey(KAFKA, "idle")
    rows = (row(key=busy), row(key=idle))
    assert positions(rows, {busy: 2, idle: 0}) == [("t", 0, 11)]
    consumers = tuple(ConsumerSummary(k, ("t",), 1, 8, 8, None, (), members=m) for k, m in ((busy, 2), (idle, None)))
    got, found = assess(Report(NOW, rows, (), consumers), acked(NOW - 7 * DAY), WEEK, profile())
    assert [f.key for f in found] == [idle] and set(got) == {rows[1].partition_key}


# --- the finding: when, and what the spout then does (KafkaSpout.doSeek with no commit) -------------------------


@pytest.mark.parametrize(
    "first_poll, says",
    [
        (
            FirstPoll.UNCOMMITTED_EARLIEST,
            "UNCOMMITTED_EARLIEST seeks to the log start (5): the 7 messages it already "
            "processed from there are replayed",
        ),
        (
            FirstPoll.EARLIEST,
            "EARLIEST seeks to the log start (5): the 7 messages it already processed from there are replayed",
        ),
        (
            FirstPoll.UNCOMMITTED_LATEST,
            "UNCOMMITTED_LATEST seeks to the log end: the 8 messages not yet processed now, "
            "and any produced before it starts, are skipped",
        ),
        (
            FirstPoll.LATEST,
            "LATEST seeks to the log end: the 8 messages not yet processed now, and any produced before "
            "it starts, are skipped",
        ),
    ],
)
def test_the_finding_says_when_and_what_each_first_poll_strategy_then_does(first_poll, says):
    r = row(12, 8, log=(5, 20))
    e = estimate(r, acked(NOW - 7 * DAY + 2 * HOUR), NOW, WEEK)
    f = expiry_finding(r, e, WEEK, profile(first_poll=first_poll), NOW)
    assert f.code == "COMMIT_EXPIRY_RISK" and f.severity is Severity.WARNING and (f.topic, f.partition) == ("t", 0)
    assert "t/0: commit 12 of group orders-client may expire in 2h00m, at 2025-11-22T04:00:00.000Z" in f.message
    assert "no earlier than 2025-11-15T04:00:00.000Z (the timestamp of message 11, the last one acked)" in f.message
    assert "offsets.retention.minutes=10080 (the broker's)" in f.message
    assert "KafkaSpout.commitOffsetsForAckedTuples, v1.2.4 and v2.8.8" in f.message
    assert says in f.message and "KafkaSpout.doSeek, v1.2.4 and v2.8.8" in f.message


@pytest.mark.parametrize(
    "age_ms, horizon_s, when",
    [
        (7 * DAY - 2 * HOUR, HORIZON_S, "may expire in 2h00m"),  # the last commit a week less 2 h ago: 2 h left
        (6 * DAY, HORIZON_S, "may expire in 1d00h"),  # exactly the horizon left: within
        (6 * DAY - 1000, HORIZON_S, None),  # a second more than the horizon left
        (5 * DAY, HORIZON_S, None),  # two days left
        (5 * DAY, 3 * 86400.0, "may expire in 2d00h"),  # a wider horizon
        (7 * DAY, HORIZON_S, "may already have expired"),  # at the expiry: Kafka's test is now - commit >= retention
        (8 * DAY, 0.0, "may already have expired: the estimate was 1d00h ago"),  # horizon 0: past only
        (6 * DAY + 1000, 0.0, None),
    ],
    ids=["2h-left", "horizon-left", "beyond-horizon", "2d-left", "wide-horizon", "at-expiry", "past-h0", "future-h0"],
)
def test_the_finding_fires_within_the_horizon_or_past(age_ms, horizon_s, when):
    r = row()
    f = expiry_finding(r, estimate(r, acked(NOW - age_ms), NOW, WEEK), WEEK, profile(), NOW, horizon_s)
    assert (f is not None) == (when is not None)
    if when is not None:
        assert when in f.message


def test_the_finding_names_the_source_of_the_retention_and_of_the_commit_time():
    r = row()
    assumed = retention_of({}, None, "broker 111 does not report offsets.retention.minutes")
    e = estimate(r, acked(NOW - 7 * DAY), NOW, assumed, NOW - 7 * DAY + 30 * MIN)
    f = expiry_finding(r, e, assumed, profile(), NOW)
    assert "offsets.retention.minutes=10080 (assumed: Kafka's default since 2.0" in f.message
    assert "(the last cycle before offctl serve saw the offset move)" in f.message
    option = retention_of({}, 1440, "no DescribeConfigs")
    f = expiry_finding(r, estimate(r, acked(NOW - DAY + HOUR), NOW, option), option, profile(), NOW)
    assert (
        "offsets.retention.minutes=1440 (--offsets-retention-minutes" in f.message
        and "may expire in 1h00m" in f.message
    )


@pytest.mark.parametrize("guarantee", [Guarantee.AT_MOST_ONCE, Guarantee.NO_GUARANTEE])
def test_no_finding_where_the_spout_refreshes_its_commit(guarantee):
    r = row()
    e = estimate(r, acked(NOW - 30 * DAY), NOW, WEEK)
    assert expiry_finding(r, e, WEEK, profile(guarantee), NOW) is None


# --- the report: findings on their rows and consumers, notes --------------------------------------------------------


def test_the_findings_are_put_on_their_rows_and_consumers():
    from offctl.core.rules.analyze import with_findings

    rows = (row(partition=0), row(partition=1))
    consumer = ConsumerSummary(GROUP, ("t",), 2, 16, 8, None, (), members=0)
    report = Report(NOW, rows, (), (consumer,))
    read = MessageRead({("t", 0, 11): (msg(11, NOW - 7 * DAY),), ("t", 1, 11): (msg(11, NOW - DAY, 1),)})
    got, found = assess(report, read, WEEK, profile())
    assert [f.partition for f in found] == [0] and got[rows[1].partition_key].headroom_s == 6 * 86400.0
    done = with_findings(report, found)
    assert done.rows[0].status is Severity.WARNING and done.rows[0].codes == ("COMMIT_EXPIRY_RISK",)
    assert done.rows[1].status is None and done.rows[1].codes == ()
    c = done.consumers[0]
    assert (c.worst, c.finding_codes, c.by_severity) == (Severity.WARNING, ("COMMIT_EXPIRY_RISK",), (0, 1, 0))
    assert with_findings(report, []) is report


def test_unread_commits_get_one_note():
    assert unread_note(
        {
            ("a",): Expiry(None, UNREAD, why="t/0 offset 11: not read (--time-lag-budget 0)"),
            ("b",): Expiry(None, NO_TIMESTAMP, why="x"),
            ("c",): Expiry(3.0, MESSAGE),
        }
    ) == ("commit expiry unknown for 1 partition: t/0 offset 11: not read (--time-lag-budget 0)")
    assert unread_note({("c",): Expiry(3.0, MESSAGE)}) is None


# --- serve: when it saw the committed offset move -----------------------------------------------------------------


@pytest.mark.parametrize(
    "committed, expected",
    [
        ((5, 5, 5), None),  # never moved in the window
        ((5, 6, 6), 1000),  # moved between the first and second capture: after the first
        ((5, 6, 7), 2000),  # the latest move counts
        ((5, 6, 5), 2000),  # a rewind is a commit too
        ((5,), None),
    ],
)
def test_serve_dates_a_commit_by_the_capture_before_it_was_seen_to_move(committed, expected):
    window = [Observation(1000 * (i + 1), c, 0, 20) for i, c in enumerate(committed)]
    assert moved_after_ms(window) == expected
