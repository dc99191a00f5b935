"""Retention risk (offctl.core.time.retention) on plain data: durations, where retention.ms comes from, the headroom at
each resume position, the findings and what each spout release then does, and inspect's use of one read.

Each rule over every case is here; tests/e2e/test_retention_e2e.py runs against Apache Kafka what a broker shows: a
topic's own retention.ms, the broker's for a topic without one, cleanup.policy compact, a principal refused
DescribeConfigs (no figure, then --topic-retention) and a broker that does not answer. What none of them shows is
only here: an answer without retention.ms (Apache Kafka's always has it), gaps at the resume offset, and messages
without a timestamp (message format v0)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from offctl.core.records.model import (
    KAFKA,
    STORM_KAFKA,
    TRIDENT,
    ZOOKEEPER,
    ConsumerKey,
    ConsumerSummary,
    Headroom,
    LogMessage,
    MessageRead,
    OffsetRecord,
    PartitionRow,
    Report,
    Severity,
    TopicRetention,
)
from offctl.core.rules.analyze import with_findings
from offctl.core.rules.profiles import Profiles
from offctl.core.storm.releases import FirstPoll, Guarantee, SpoutProfile, StormKafka, StormKafkaClient
from offctl.core.time.retention import (
    BROKER,
    END,
    FAILS,
    NO_DELETION,
    OPTION,
    START,
    TIME,
    UNKNOWN,
    UNREAD,
    at_risk,
    consumer_minima,
    default_horizon_ms,
    findings,
    headroom,
    lands,
    measure,
    notes,
    parse_span,
    parse_topic_retention,
    retention_of,
)
from offctl.errors import UsageError

NOW = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z
H = 3_600_000
SPOUT, GROUP = ConsumerKey(ZOOKEEPER, "orders", "/spouts"), ConsumerKey(KAFKA, "orders-client")
TRIDENT_SPOUT = ConsumerKey(TRIDENT, "orders-tx", "/transactional")


def row(
    committed: int,
    lag: int | None,
    *,
    key: ConsumerKey = SPOUT,
    partition: int = 0,
    topic: str = "t",
    log_end: int = 20,
    trident: str | None = None,
) -> PartitionRow:
    return PartitionRow(OffsetRecord(key, partition, topic, committed, trident=trident), 0, log_end, lag, None, topic)


def msg(offset: int, ts: int | None, partition: int = 0) -> LogMessage:
    return LogMessage("t", partition, offset, ts, "CreateTime" if ts is not None else None, None, b"v")


# --- durations ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, ms",
    [
        ("7d", 7 * 24 * H),
        ("6h", 6 * H),
        ("90m", 90 * 60_000),
        ("30s", 30_000),
        ("500ms", 500),
        ("1d12h", 36 * H),
        ("604800000", 604_800_000),
        (" 6H ", 6 * H),
        ("0", 0),
    ],
)
def test_a_duration_is_read_as_retention_is_written(text, ms):
    assert parse_span(text, "--retention-horizon") == ms


@pytest.mark.parametrize(
    "text", ["", "abc", "6x", "-5", "1.5h", "h", "6 h", "-1", "9" * 20, "999999999999d", "1h" * 30, "7d\0"]
)
def test_a_hostile_duration_is_a_usage_error(text):
    with pytest.raises(UsageError, match="--retention-horizon"):
        parse_span(text, "--retention-horizon")


def test_topic_retention_takes_topic_equals_duration_and_minus_1():
    assert parse_topic_retention(["orders=7d", "clicks=-1", "audit.log=3600000"]) == {
        "orders": 7 * 24 * H,
        "clicks": -1,
        "audit.log": 3_600_000,
    }
    assert parse_topic_retention(None) == {}


@pytest.mark.parametrize(
    "values, says",
    [
        (["orders"], "TOPIC=DURATION"),
        (["=7d"], "TOPIC=DURATION"),
        (["bad topic=7d"], "TOPIC=DURATION"),
        (["o\0=7d"], "TOPIC=DURATION"),
        (["orders=7d", "orders=1d"], "twice"),
        (["orders=soon"], "a duration like"),
        (["orders=-2"], "a duration like"),
    ],
)
def test_a_hostile_topic_retention_is_a_usage_error(values, says):
    with pytest.raises(UsageError, match=says):
        parse_topic_retention(values)


# --- where retention.ms comes from -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reported, stated, expected",
    [
        (TopicRetention("t", 2 * H), {}, (2 * H, BROKER)),
        (TopicRetention("t", 2 * H), {"t": 9 * H}, (2 * H, BROKER)),  # the broker's value wins
        (TopicRetention("t"), {"t": 9 * H}, (9 * H, OPTION)),  # an answer without it (not Apache Kafka's)
        (None, {"t": 9 * H}, (9 * H, OPTION)),
        (
            TopicRetention("t", why="the broker did not report topic t's configs (Broker: Topic authorization failed)"),
            {"t": 9 * H},
            (9 * H, OPTION),
        ),  # refused (ACLs)
        (TopicRetention("t", why="refused (Topic authorization failed)"), {}, (None, UNKNOWN)),
        (None, {}, (None, UNKNOWN)),
        (TopicRetention("t", -1), {"t": 9 * H}, (None, NO_DELETION)),  # no time limit
        (TopicRetention("t"), {"t": -1}, (None, NO_DELETION)),
        (TopicRetention("t", 2 * H, cleanup_policy="compact"), {"t": 9 * H}, (None, NO_DELETION)),
        (TopicRetention("t", 2 * H, cleanup_policy="compact,delete"), {}, (2 * H, BROKER)),
        (TopicRetention("t", 2 * H, cleanup_policy="delete"), {}, (2 * H, BROKER)),
    ],
    ids=[
        "broker",
        "broker-wins",
        "option",
        "option-no-answer",
        "option-refused",
        "refused",
        "nothing",
        "minus-1",
        "option-minus-1",
        "compact",
        "compact-delete",
        "delete",
    ],
)
def test_where_retention_comes_from(reported, stated, expected):
    ms, source, said = retention_of("t", reported, stated)
    assert (ms, source) == expected
    if source == UNKNOWN:
        assert "--topic-retention t=DURATION" in said
        assert reported is None or not reported.why or reported.why in said  # the refusal is said


# --- the headroom at each lagging position ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "r, read, stated, expected",
    [
        # written 5 h ago, retention 6 h: 1 h left
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, NOW - 5 * H),)}), {"t": 6 * H}, Headroom(3600.0, OPTION)),
        # 7 h ago: 1 h past
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, NOW - 7 * H),)}), {"t": 6 * H}, Headroom(-3600.0, OPTION)),
        # a compacted gap at 12: message 15 is the one handed first, and at risk
        (
            row(12, 8),
            MessageRead({("t", 0, 12): (msg(15, NOW - 5 * H + 250),)}),
            {"t": 6 * H},
            Headroom(3600.25, OPTION, offset=15),
        ),
        # nothing from 18 to the log end (markers): nothing waits
        (row(18, 2), MessageRead(at_end=frozenset({("t", 0, 18)})), {"t": 6 * H}, Headroom(None, None)),
        # message format v0: no timestamp
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, None),)}), {"t": 6 * H}, Headroom(None, UNREAD)),
        # the time lag's read did not get there
        (
            row(12, 8),
            MessageRead(unread={("t", 0, 12): "not read within the time budget of 5s"}),
            {"t": 6 * H},
            Headroom(None, UNREAD),
        ),
        # no retention known: no figure, whatever the message
        (row(12, 8), MessageRead({("t", 0, 12): (msg(12, NOW - 7 * H),)}), {}, Headroom(None, UNKNOWN)),
    ],
    ids=["left", "past", "gap", "markers", "no-timestamp", "unread", "unknown"],
)
def test_the_headroom_of_a_lagging_partition(r, read, stated, expected):
    got = headroom(r, measure([r], read, {}, stated, NOW))
    assert got[:2] == expected[:2]
    if expected.seconds is not None:
        assert got.offset == (expected.offset if expected.offset is not None else 12)
        assert "--topic-retention" in got.why and "retention.ms 21600000 = 6h00m" in got.why
    else:
        assert got.why


def test_a_caught_up_or_unlagged_partition_has_no_headroom_and_is_never_at_risk():
    read = MessageRead({("t", 0, 20): (msg(20, NOW - 9 * H),)})
    rows = [row(20, 0), row(25, None, partition=1)]
    rooms = measure(rows, read, {}, {"t": H}, NOW)
    assert rooms == {} and [headroom(r, rooms) for r in rows] == [None, None]
    assert findings(rows, rooms, SpoutProfile(), 6 * H) == []


def test_each_position_is_measured_once_however_many_consumers_resume_there():
    rows = [row(12, 8), row(12, 8, key=GROUP)]
    rooms = measure(rows, MessageRead({("t", 0, 12): (msg(12, NOW - 5 * H),)}), {}, {"t": 6 * H}, NOW)
    assert list(rooms) == [("t", 0, 12)]
    assert consumer_minima(rows, rooms) == {SPOUT: 3600.0, GROUP: 3600.0}


# --- the findings, by horizon, and what each spout does ----------------------------------------------------------


def rooms_at(seconds: float | None, source: str | None = BROKER, offset: int = 12) -> dict:
    return {("t", 0, 12): Headroom(seconds, source, "message 12 of ..., retention.ms 1 (the broker's)", offset)}


@pytest.mark.parametrize(
    "seconds, code",
    [
        (6 * 3600.0, "RETENTION_RISK"),  # exactly at the horizon
        (6 * 3600.001, None),
        (0.0, "RETENTION_RISK"),
        (-0.001, "RETENTION_EXCEEDED"),
        (-86400.0, "RETENTION_EXCEEDED"),
        (None, None),
    ],
)
def test_the_horizon_decides_warning_or_error(seconds, code):
    got = findings([row(12, 8)], rooms_at(seconds), SpoutProfile(), 6 * H)
    assert [f.code for f in got] == ([code] if code else [])
    if code:
        f = got[0]
        assert f.severity == (Severity.ERROR if code == "RETENTION_EXCEEDED" else Severity.WARNING)
        assert (f.key, f.topic, f.partition) == (SPOUT, "t", 0)
        assert "(the broker's)" in f.message  # which retention it used
        assert ("past retention" in f.message) == (code == "RETENTION_EXCEEDED")


M = 60_000


@pytest.mark.parametrize(
    "behind_ms, retention_ms, horizon_ms, pace, rule",
    [
        # issue 28: the default was a fixed 6 h, so on a topic kept 6 h a spout a minute behind warned ("5h59m")
        (1 * M, 6 * H, None, None, ""),  # a minute behind on 6 h: no warning
        (5 * H + 40 * M, 6 * H, None, None, "share"),  # 5h40m behind: 20 min left, within a quarter (1h30m)
        (4 * H + 30 * M, 6 * H, None, None, "share"),  # exactly a quarter left
        (4 * H + 29 * M, 6 * H, None, None, ""),  # a minute more than a quarter left
        (1 * M, 1 * H, None, None, ""),  # a topic kept an hour: a quarter is 15 min
        (46 * M, 1 * H, None, None, "share"),  # 14 min left
        (1 * M, 7 * 24 * H, None, None, ""),  # a week: the cap, 6 h, as before
        (7 * 24 * H - 6 * H, 7 * 24 * H, None, None, "share"),  # 6 h left of a week
        (7 * 24 * H - 6 * H - 1, 7 * 24 * H, None, None, ""),
        (1 * M, None, None, None, "share"),  # retention.ms not known to the rule (a hand-made headroom): 6 h, as before
        (18 * H - 1, 24 * H, None, None, ""),
        # rule 4, serve and watch: the window shows the spout falling behind
        (1 * M, 6 * H, None, 1.0, "pace"),  # stands still a minute behind: deleted in 5h59m at that pace
        (1 * M, 6 * H, None, 0.025, ""),  # keeps pace but for 1 in 40: 239 h at that pace
        (3 * H, 6 * H, None, 0.5, "pace"),  # consumes half what is produced, 3 h left: 6 h at that pace
        (2 * H, 6 * H, None, 0.5, ""),  # 4 h left: 8 h at that pace
        (1 * M, 7 * 24 * H, None, 1.0, ""),  # stands still on a topic kept a week: 7 days left
        (7 * 24 * H - 6 * H + 1, 7 * 24 * H, None, 1.0, "share"),
        # --retention-horizon given: that, whatever the topic and the pace
        (1 * M, 6 * H, 6 * H, None, "horizon"),  # the old default, stated: warns as before
        (5 * H + 40 * M, 6 * H, 10 * M, None, ""),
        (5 * H + 40 * M, 6 * H, 10 * M, 1.0, ""),
        (5 * H + 55 * M, 6 * H, 10 * M, None, "horizon"),
        # past retention: always
        (6 * H + 1000, 6 * H, None, None, "exceeded"),
        (6 * H + 1000, 6 * H, 0, None, "exceeded"),
    ],
)
def test_the_default_risk_is_relative_to_the_retention_and_the_pace(behind_ms, retention_ms, horizon_ms, pace, rule):
    """The message was written `behind_ms` ago; its headroom is the retention left (6 h where not known)."""
    seconds = ((retention_ms if retention_ms is not None else 6 * H) - behind_ms) / 1000
    assert at_risk(seconds, retention_ms, horizon_ms, pace) == rule


@pytest.mark.parametrize(
    "retention_ms, horizon_ms",
    [(6 * H, 90 * M), (1 * H, 15 * M), (24 * H, 6 * H), (7 * 24 * H, 6 * H), (4 * M, M), (0, 0), (None, 6 * H)],
)
def test_the_default_horizon_is_a_quarter_of_the_retention_at_most_6h(retention_ms, horizon_ms):
    assert default_horizon_ms(retention_ms) == horizon_ms


def rooms_behind(behind_ms: int, retention_ms: int = 6 * H) -> dict:
    return {
        ("t", 0, 12): Headroom(
            (retention_ms - behind_ms) / 1000,
            BROKER,
            "message 12 of ..., retention.ms 21600000 = 6h00m (the broker's)",
            12,
            retention_ms,
        )
    }


def test_a_spout_a_minute_behind_on_a_topic_kept_6h_does_not_warn_one_5h40m_behind_does():
    """Issue 28, in findings: the default (no --retention-horizon), then the old 6 h stated, then serve's pace."""
    assert findings([row(12, 8)], rooms_behind(M), SpoutProfile()) == []
    [f] = findings([row(12, 8)], rooms_behind(5 * H + 40 * M), SpoutProfile())
    assert f.code == "RETENTION_RISK" and "in 20m00s" in f.message and "a quarter of the retention or less" in f.message
    [f] = findings([row(12, 8)], rooms_behind(M), SpoutProfile(), 6 * H)
    assert "in 5h59m" in f.message and "within --retention-horizon" in f.message
    [f] = findings([row(12, 8)], rooms_behind(M), SpoutProfile(), behind={row(12, 8).partition_key: 1.0})
    assert "falling behind: at the pace seen, deleted in 5h59m" in f.message
    assert findings([row(12, 8)], rooms_behind(M), SpoutProfile(), behind={("other",): 1.0}) == []


def test_the_message_says_how_long_is_left_and_the_source():
    [f] = findings([row(12, 8)], rooms_at(5 * 3600 + 120.0, OPTION), SpoutProfile(), 6 * H)
    assert "may delete its message in 5h02m" in f.message
    [f] = findings([row(12, 8)], rooms_at(-4000.0), SpoutProfile(), 6 * H)
    assert "1h06m past retention" in f.message  # 4000 s: 1 h 6 min 40 s


CLIENT_LEGACY = SpoutProfile(client=StormKafkaClient.LEGACY)


@pytest.mark.parametrize(
    "r, profile, where, says",
    [
        # storm-kafka 0.10 on: EarliestTime, losing what was deleted (PartitionManager.fill)
        (
            row(12, 8),
            SpoutProfile(),
            START,
            "jumps to the log start (EarliestTime, PartitionManager.fill, v1.2.4), losing "
            "at least 1 message (offset 12",
        ),
        (row(12, 8), SpoutProfile(storm_kafka=StormKafka.V1_0), START, "v1.0.7"),
        (row(12, 8), SpoutProfile(storm_kafka=StormKafka.V0_10), START, "v0.10.2"),
        # 0.9.3-0.9.7: the configured start, LatestTime unless forceFromStart: everything waiting is skipped
        (
            row(12, 8),
            SpoutProfile(storm_kafka=StormKafka.V0_9_3),
            END,
            "skipping at least the 8 messages now between offset 12 and the log end 20",
        ),
        (row(12, 8), SpoutProfile(storm_kafka=StormKafka.V0_9_3, ignore_zk_offsets=True), START, "log start"),
        (row(12, 8), SpoutProfile(storm_kafka=StormKafka.V0_9_0), START, "refetches from startOffsetTime"),
        (
            row(12, 8),
            SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=1_700_000_000_000),
            TIME,
            "before the offset at startOffsetTime",
        ),
        # useStartOffsetTimeIfOffsetOutOfRange=false: every fetch fails
        (row(12, 8), SpoutProfile(out_of_range_reset=False), FAILS, "every fetch fails"),
        # Trident on storm-kafka: the emitter's own rules
        (row(12, 8, key=TRIDENT_SPOUT, trident=STORM_KAFKA), SpoutProfile(), START, "TridentKafkaEmitter, v1.2.4"),
        (
            row(12, 8, key=TRIDENT_SPOUT, trident=STORM_KAFKA),
            SpoutProfile(storm_kafka=StormKafka.V0_9_3),
            FAILS,
            "UpdateOffsetException",
        ),
        # storm-kafka-client: auto.offset.reset, 'earliest' under AT_LEAST_ONCE, Kafka's 'latest' otherwise
        (row(12, 8, key=GROUP), SpoutProfile(), START, "auto.offset.reset says: 'earliest' (the log start)"),
        (row(12, 8, key=GROUP), SpoutProfile(guarantee=Guarantee.AT_MOST_ONCE), END, "skipping at least the 8"),
        (row(12, 8, key=GROUP), SpoutProfile(guarantee=Guarantee.NO_GUARANTEE), END, "'latest'"),
        (row(12, 8, key=GROUP), CLIENT_LEGACY, END, "which the spout does not set: Kafka's default is 'latest'"),
        (row(12, 8, key=GROUP), SpoutProfile(first_poll=FirstPoll.LATEST), START, "AT_LEAST_ONCE"),
    ],
    ids=[
        "1.x",
        "1.0",
        "0.10",
        "0.9.3",
        "0.9.3-force",
        "0.9.0",
        "0.9.0-time",
        "no-reset",
        "trident",
        "trident-0.9.3",
        "client",
        "at-most-once",
        "no-guarantee",
        "client-legacy",
        "client-latest",
    ],
)
def test_what_the_spout_does_once_its_message_is_deleted(r, profile, where, says):
    assert lands(profile, r) == where
    [f] = findings([r], rooms_at(600.0), profile, 6 * H)
    assert says in f.message, f.message


def test_after_a_gap_the_loss_counts_from_the_resume_offset_to_the_message_at_risk():
    [f] = findings([row(12, 8)], rooms_at(600.0, offset=15), SpoutProfile(), 6 * H)
    assert "losing at least 4 messages (offsets 12-15" in f.message


# --- the report: rows, consumers, notes --------------------------------------------------------------------------


def test_findings_made_after_the_analysis_reach_their_row_and_consumer():
    rows = (row(12, 8), row(3, 17, partition=1), row(9, 4, key=GROUP))
    summary = ConsumerSummary(SPOUT, ("t",), 2, 25, 17, Severity.WARNING, ("HIGH_LAG",), by_severity=(0, 1, 0))
    report = Report(NOW, rows, (), (summary, ConsumerSummary(GROUP, ("t",), 1, 4, 4, None, ())))
    found = findings(
        rows,
        {("t", 0, 12): Headroom(-5.0, BROKER, "", 12), ("t", 1, 3): Headroom(9.0, BROKER, "", 3)},
        SpoutProfile(),
        6 * H,
    )
    got = with_findings(report, found)
    assert [r.codes for r in got.rows] == [("RETENTION_EXCEEDED",), ("RETENTION_RISK",), ()]
    assert [r.status for r in got.rows] == [Severity.ERROR, Severity.WARNING, None]
    spout = got.consumers[0]
    assert spout.worst == Severity.ERROR and spout.by_severity == (1, 2, 0)  # the HIGH_LAG warning stays
    assert spout.finding_codes == ("HIGH_LAG", "RETENTION_EXCEEDED", "RETENTION_RISK")
    assert got.consumers[1] == report.consumers[1] and got.worst() == Severity.ERROR
    assert with_findings(report, []) is report


def test_notes_say_what_the_estimate_leaves_out():
    configs = {
        "t": TopicRetention("t", 6 * H, 10**9),
        "c": TopicRetention("c", 6 * H, 10**9, "compact"),
        "r": TopicRetention("r", why="the broker did not report topic r's configs (authorization failed)"),
        "quiet": TopicRetention("quiet", 6 * H, 10**9),
    }
    got = notes(configs, {"t": H}, ["t", "c", "r"])
    assert any("t: retention.bytes 1000000000" in n and "DescribeLogDirs" in n for n in got)
    assert not any(n.startswith("c:") or "quiet" in n for n in got)  # compacted; not lagging
    assert any("--topic-retention t: the broker reports retention.ms 21600000, which is used" in n for n in got)
    assert any("authorization failed" in n for n in got)
    assert notes({"t": TopicRetention("t", 6 * H, -1)}, {}, ["t"]) == []


# --- inspect: one read for the time lag and the headroom ----------------------------------------------------------


class Store:
    """A LogStore's read_messages and read_topic_configs, answering as told and counting what was asked."""

    def __init__(self, read: MessageRead, configs: dict | None = None, refuse: bool = False) -> None:
        self.read, self.configs, self.refuse = read, configs or {}, refuse
        self.reads, self.described = [], []

    def read_messages(self, wanted, *, count=1, budget_s=None, isolation_level=None):
        self.reads.append(list(wanted))
        return self.read

    def read_topic_configs(self, topics):
        self.described.append(list(topics))
        if self.refuse:
            from offctl.errors import StoreUnavailable

            raise StoreUnavailable("Kafka at k1:9092: a describe-configs request failed")
        return {t: c for t, c in self.configs.items() if t in topics}


def report_of(*rows: PartitionRow) -> Report:
    keys = dict.fromkeys(r.record.key for r in rows)
    return Report(NOW, rows, (), tuple(ConsumerSummary(k, ("t",), 1, 0, 0, None, ()) for k in keys))


def test_inspect_reads_the_message_once_and_the_configs_of_lagging_topics_only():
    from offctl.core.records.model import Thresholds
    from offctl.core.time.timelag import time_lag
    from offctl.pipeline.assess import with_time_lags

    store = Store(MessageRead({("t", 0, 12): (msg(12, NOW - 5 * H),)}), {"t": TopicRetention("t", 6 * H)})
    caught_up = row(5, 0, topic="idle", log_end=5)
    got = with_time_lags(report_of(row(12, 8), caught_up), store, 5.0, Profiles(Thresholds()))
    assert store.reads == [[("t", 0, 12)]] and store.described == [["t"]]
    assert time_lag(got.rows[0], got.time_lags).seconds == 5 * 3600.0
    assert headroom(got.rows[0], got.headrooms)[:2] == (3600.0, BROKER)
    assert [f.code for f in got.findings] == ["RETENTION_RISK"] and got.rows[0].codes == ("RETENTION_RISK",)
    quiet = with_time_lags(report_of(row(12, 8)), store, 5.0, Profiles(Thresholds(retention_horizon_ms=30 * 60_000)))
    assert quiet.findings == () and headroom(quiet.rows[0], quiet.headrooms).seconds == 3600.0


def test_inspect_takes_the_default_rule_from_the_topics_retention_and_serves_pace():
    """Issue 28 through inspect's pipeline: a message a minute old on a topic kept 6 h warns only when told to
    (--retention-horizon 6h), or when serve's window says the spout stands still."""
    from offctl.core.records.model import Thresholds
    from offctl.pipeline.assess import with_time_lags

    def store():
        return Store(MessageRead({("t", 0, 12): (msg(12, NOW - M),)}), {"t": TopicRetention("t", 6 * H)})

    assert with_time_lags(report_of(row(12, 8)), store(), 5.0, Profiles(Thresholds())).findings == ()
    told = with_time_lags(report_of(row(12, 8)), store(), 5.0, Profiles(Thresholds(retention_horizon_ms=6 * H)))
    assert [f.code for f in told.findings] == ["RETENTION_RISK"]
    still = with_time_lags(
        report_of(row(12, 8)), store(), 5.0, Profiles(Thresholds()), behind={row(12, 8).partition_key: 1.0}
    )
    assert [f.code for f in still.findings] == ["RETENTION_RISK"]


def test_a_refused_describe_leaves_the_headroom_unknown_never_a_failed_inspect():
    from offctl.core.records.model import Thresholds
    from offctl.pipeline.assess import with_time_lags
    from offctl.pipeline.inspect import exit_code

    store = Store(MessageRead({("t", 0, 12): (msg(12, NOW - 7 * H),)}), refuse=True)
    got = with_time_lags(report_of(row(12, 8)), store, 5.0, Profiles(Thresholds()))
    assert headroom(got.rows[0], got.headrooms).source == UNKNOWN and not got.findings
    assert any("describe-configs request failed" in n for n in got.notes)
    assert not got.incomplete and exit_code(got, "error") == 0
    stated = with_time_lags(report_of(row(12, 8)), store, 5.0, Profiles(Thresholds(topic_retention_ms={"t": 6 * H})))
    assert headroom(stated.rows[0], stated.headrooms)[:2] == (-3600.0, OPTION)
    assert [f.code for f in stated.findings] == ["RETENTION_EXCEEDED"] and exit_code(stated, "error") == 1


def test_a_budget_of_0_asks_the_broker_nothing():
    from offctl.core.records.model import Thresholds
    from offctl.pipeline.assess import with_time_lags

    store = Store(MessageRead())
    got = with_time_lags(report_of(row(12, 8)), store, 0, Profiles(Thresholds(topic_retention_ms={"t": H})))
    assert store.reads == [] and store.described == []
    assert headroom(got.rows[0], got.headrooms).source == UNREAD and not got.findings


# --- output: JSON, table, metrics ---------------------------------------------------------------------------------


def test_the_json_rows_and_consumers_carry_the_headroom_and_its_source():
    from offctl.render.report import report_document

    r = replace(
        report_of(row(12, 8), row(5, 0, partition=1)), headrooms={("t", 0, 12): Headroom(3600.5, OPTION, "", 12)}
    )
    doc = report_document(r)
    assert [(p["retention_headroom_s"], p["retention_source"]) for p in doc["partitions"]] == [
        (3600.5, "option"),
        (None, None),
    ]
    assert doc["consumers"][0]["min_retention_headroom_s"] == 3600.5


def test_the_table_shows_the_headroom_per_partition():
    import io

    from rich.console import Console

    from offctl.render.formats import headroom_text
    from offctl.render.report import write_table

    assert [
        headroom_text(h)
        for h in (
            None,
            Headroom(None, None),
            Headroom(7500.0, BROKER),
            Headroom(-60.0, BROKER),
            Headroom(None, UNKNOWN),
            Headroom(None, NO_DELETION),
        )
    ] == ["-", "-", "2h05m", "-1m00s", "unknown", "no deletion"]
    out = io.StringIO()
    write_table(
        replace(report_of(row(12, 8)), headrooms={("t", 0, 12): Headroom(7500.0, BROKER, "", 12)}),
        Console(file=out, width=200),
        per_partition=True,
    )
    assert "Retention" in out.getvalue() and "2h05m" in out.getvalue()


def test_serve_exports_the_headroom_where_it_is_known():
    from offctl.faces.serve.monitor import Collector, Monitor

    rows = (row(12, 8), row(3, 17, partition=1), row(9, 4, key=GROUP))
    m = Monitor()
    m.update(
        replace(
            report_of(*rows),
            headrooms={
                ("t", 0, 12): Headroom(-30.0, BROKER, "", 12),
                ("t", 1, 3): Headroom(None, UNKNOWN),
                ("t", 0, 16): Headroom(7200.0, OPTION, "", 16),
            },
        ),
        0.1,
    )
    samples = [s for family in Collector(m).collect() for s in family.samples]
    per_partition = {
        (s.labels["store"], s.labels["partition"]): s.value
        for s in samples
        if s.name == "offctl_partition_retention_headroom_seconds"
    }
    assert per_partition == {("zookeeper", "0"): -30.0, ("kafka", "0"): 7200.0}  # unknown: no sample
    minima = {
        s.labels["consumer"]: s.value for s in samples if s.name == "offctl_consumer_retention_headroom_min_seconds"
    }
    assert minima == {"orders": -30.0, "orders-client": 7200.0}
