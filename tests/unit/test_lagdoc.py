"""offctl.render.lagdoc: the monitor's answer for Storm UI, over plain data (the analysis runs, no servers).

Each row's id names the Storm source deciding offctl's lag where it differs from KafkaOffsetLagUtil's (KOLU:
lag = logHeadOffset - consumerCommittedOffset, committed -1 where none). The commits of the running topology and of
another one with EARLIEST run end to end too, against Apache Kafka, which keeps their Storm metadata:
tests/e2e/test_storm_kafka_monitor_e2e.py::test_new_spout_earliest_ignores_the_commit_of_another_topology.
"""

from __future__ import annotations

import json

import pytest

from offctl.core.records.model import KAFKA, ZOOKEEPER, ConsumerKey, PartitionLog, Snapshot, Thresholds
from offctl.core.rules import judge
from offctl.core.rules.profiles import Profile, Profiles
from offctl.core.storm.releases import LATEST_TIME, FirstPoll, SpoutProfile, StormKafka
from offctl.render import lagdoc
from tests.unit.test_analyze import RUNNING, T, commit, meta, rec

OLD = ConsumerKey(ZOOKEEPER, "s", "/r")
NEW = ConsumerKey(KAFKA, "g")


def cluster(start: int = 100, end: int = 200, n: int = 3) -> dict:
    return {T: {p: PartitionLog(start, end, "kafka1:9092") for p in range(n)}}


def doc(zk=(), commits=(), *, th: Profiles = Profiles(), cl=None, key=OLD, folder=False, partitions=(0, 1, 2)):
    cl = cl if cl is not None else cluster()
    report = judge.analyze_each(Snapshot(0, tuple(zk), tuple(commits), cluster=cl, running=frozenset({RUNNING})), th)
    asked = lagdoc.Asked(key, old=key.store == ZOOKEEPER, partitions={T: list(partitions)}, folder=folder)
    out, notes = lagdoc.document(report, asked, th, cl)
    return out, notes


def three(entry: dict) -> tuple:
    return entry["consumerCommittedOffset"], entry["logHeadOffset"], entry["lag"]


CASES = [
    # (id, zk nodes, commits, thresholds, partition, (committed, head, lag), originalLag or None, a code)
    ("KOLU@v1.2.4: in range, the original's answer", [rec(0, 150)], [], Thresholds(), 0, (150, 200, 50), None, None),
    (
        "PartitionManager@v1.2.4 committed<=0: ignored, startOffsetTime earliest",
        [rec(0, 0)],
        [],
        Thresholds(),
        0,
        (0, 200, 100),
        200,
        "IGNORED_ZERO_OFFSET",
    ),
    (
        "PartitionManager@v1.2.4: no record, startOffsetTime earliest",
        [rec(0, 150)],
        [],
        Thresholds(),
        1,
        (-1, 200, 100),
        201,
        "MISSING_PARTITION",
    ),
    (
        "PartitionManager@v0.9.6: no record, the log end (LatestTime: forceFromStart false)",
        [rec(0, 150)],
        [],
        Thresholds(spout=SpoutProfile(StormKafka.V0_9_3)),
        1,
        (-1, 200, 0),
        201,
        "MISSING_PARTITION",
    ),
    (
        "PartitionManager@v1.2.4: no record, startOffsetTime latest",
        [rec(0, 150)],
        [],
        Thresholds(spout=SpoutProfile(start_offset_time=LATEST_TIME)),
        2,
        (-1, 200, 0),
        201,
        "MISSING_PARTITION",
    ),
    # fill() moves _emittedToOffset forward only: the reset's EarliestTime is below the stored offset, so the spout
    # waits there (outcomes.out_of_range_outcome; run on storm-kafka 1.2.4: test_spout_oracle_e2e, above-log-end)
    (
        "PartitionManager.fill@v1.2.4: past the log end, the spout waits at the stored offset",
        [rec(0, 250)],
        [],
        Thresholds(),
        0,
        (250, 200, -50),
        None,
        "OFFSET_ABOVE_LOG_END",
    ),
    (
        "PartitionManager.fill@v1.2.4: below the log start, to startOffsetTime earliest",
        [rec(0, 50)],
        [],
        Thresholds(),
        0,
        (50, 200, 100),
        150,
        "OFFSET_BELOW_LOG_START",
    ),
    (
        "KafkaSpout.doSeek@v2.8.8: no commit, UNCOMMITTED_EARLIEST at the log start",
        [],
        [commit(0, 150)],
        Thresholds(),
        1,
        (-1, 200, 100),
        201,
        "MISSING_PARTITION",
    ),
    (
        "KafkaSpout.doSeek@v2.8.8: no commit, UNCOMMITTED_LATEST at the log end",
        [],
        [commit(0, 150)],
        Thresholds(spout=SpoutProfile(first_poll=FirstPoll.UNCOMMITTED_LATEST)),
        1,
        (-1, 200, 0),
        201,
        "MISSING_PARTITION",
    ),
    (
        "KafkaSpout.doSeek@v2.8.8: EARLIEST ignores another topology's commit",
        [],
        [commit(0, 150, meta("other-topology-1-1600000000"))],
        Thresholds(spout=SpoutProfile(first_poll=FirstPoll.EARLIEST)),
        0,
        (150, 200, 100),
        50,
        None,
    ),
    (
        "KafkaSpout.doSeek@v2.8.8: EARLIEST keeps its own topology's commit",
        [],
        [commit(0, 150)],
        Thresholds(spout=SpoutProfile(first_poll=FirstPoll.EARLIEST)),
        0,
        (150, 200, 50),
        None,
        None,
    ),
]


@pytest.mark.parametrize("name,zk,commits,th,partition,expected,original,code", CASES, ids=[c[0] for c in CASES])
def test_the_lag_is_where_the_spout_resumes(name, zk, commits, th, partition, expected, original, code):
    out, _ = doc(zk, commits, th=Profiles(th), key=NEW if commits else OLD)
    entry = out[T][str(partition)]
    assert three(entry) == expected
    assert entry["resumeOffset"] == expected[1] - expected[2]
    if original is None:
        assert "originalLag" not in entry and "why" not in entry
    else:
        assert entry["originalLag"] == original and entry["why"]
    if code:
        assert code in entry["findings"]


def test_a_timestamp_start_offset_time_keeps_the_original_lag_and_says_why():
    out, _ = doc([rec(0, 150)], th=Profiles(Thresholds(spout=SpoutProfile(start_offset_time=1_700_000_000_000))))
    entry = out[T]["1"]
    assert three(entry) == (-1, 200, 201) and entry["resumeOffset"] is None
    assert "originalLag" not in entry


def test_wildcard_spouts_read_the_topic_folder_and_nothing_else():
    out, _ = doc([rec(0, 150, folder=T), rec(1, 120)], folder=True)
    assert three(out[T]["0"]) == (150, 200, 50)
    assert out[T]["1"]["consumerCommittedOffset"] == -1  # partition_1 outside <node>/<topic>/ is not the spout's


def test_a_partition_without_a_log_end_is_left_out_with_a_note():
    cl = {T: {0: PartitionLog(100, 200), 1: PartitionLog(None, None)}}
    out, notes = doc([rec(0, 150)], cl=cl, partitions=(0, 1, 7))
    assert list(out[T]) == ["0"]
    assert len(notes) == 2 and all("no log end" in n for n in notes)


def test_the_profile_that_judged_the_spout_is_named():
    th = Profiles(
        default=Thresholds(), profiles=(Profile("legacy", "s*", Thresholds(spout=SpoutProfile(StormKafka.V0_9_3))),)
    )
    out, _ = doc([rec(0, 150)], th=th)
    assert {e["profile"] for e in out[T].values()} == {"legacy"}
    assert out[T]["1"]["lag"] == 0  # the profile's release (0.9.x: the log end) decides, not the defaults'


def test_render_is_one_line_of_ascii_json_without_a_newline():
    hostile = 'ignore previous instructions"}\u2028\n{"x'
    text = lagdoc.render({hostile: {"0": {"consumerCommittedOffset": 1, "logHeadOffset": 2, "lag": 1}}})
    assert text.isascii() and "\n" not in text and not text.endswith("\n")
    assert json.loads(text) == {hostile: {"0": {"consumerCommittedOffset": 1, "logHeadOffset": 2, "lag": 1}}}


@pytest.mark.parametrize("message", ["one line", "two\nlines\tand  spaces", ""])
def test_failure_is_one_line_that_is_not_json(message):
    line = lagdoc.failure("offctl.StoreUnavailable", message)
    assert line.startswith(lagdoc.REASON) and line.endswith("\n") and line.count("\n") == 1
    with pytest.raises(ValueError):
        json.loads(line)


def test_the_catch_up_is_inspects_and_one_read_has_no_history():
    """catchUpSeconds, catchUp, commitRate, logRate are inspect's catch_up_s, catch_up, commit_rate, log_rate: a
    lagging partition has no history in one read, one at lag 0 is caught up, one with no lag (no record) has none;
    an estimate the report carries (serve's and watch's cycles) is shown as it is."""
    from dataclasses import replace

    from offctl.core.records.model import CatchUp

    zk = [rec(0, 150), rec(1, 200)]  # partition 2 has no record
    out, _ = doc(zk)
    keys = ("catchUpSeconds", "catchUp", "commitRate", "logRate")
    assert [tuple(out[T][p][k] for k in keys) for p in "012"] == [
        (None, "no-history", None, None),
        (0.0, "caught-up", None, None),
        (None, None, None, None),
    ]
    th = Profiles()
    cl = cluster()
    report = judge.analyze_each(Snapshot(0, tuple(zk), (), cluster=cl, running=frozenset({RUNNING})), th)
    estimated = replace(report, catch_ups={report.rows[0].partition_key: CatchUp(125.0, "catching-up", 0.6, 0.2)})
    shown, _ = lagdoc.document(estimated, lagdoc.Asked(OLD, old=True, partitions={T: [0]}), th, cl)
    assert tuple(shown[T]["0"][k] for k in keys) == (125.0, "catching-up", 0.6, 0.2)


# --- JStorm's Kafka spout: what the monitor answers when asked for one (docs/storm-ui-lag.md) ----------------------

JROOT = "/jstorm"
JSTORM_KEY = ConsumerKey("jstorm", f"{T}/jstorm", JROOT)


def jnode(partition: int, offset: int, data: bytes | None = None):
    """A JStorm spout's node as PartitionConsumer.commitState writes it (offctl.core.storm.jstorm.record_bytes)."""
    from offctl.core.records.model import ZkNode
    from offctl.core.storm import jstorm

    consumer = JSTORM_KEY.consumer
    data = jstorm.record_bytes("clicks-jstorm", offset, partition, "kafka1", 9092, T) if data is None else data
    path = jstorm.node_path(JROOT, consumer, partition)
    return ZkNode(JROOT, consumer, path, partition, T, data, 1, 1000, jstorm=True)


@pytest.mark.parametrize(
    "name,stored,profile,partition,expected,resumes",
    [
        ("PartitionConsumer: the stored offset + 1", {0: 150}, SpoutProfile(), 0, (150, 200, 49, 151), "stored+1"),
        ("caught up: the stored offset is the last one", {0: 199}, SpoutProfile(), 0, (199, 200, 0, 200), "stored+1"),
        ("no record: LatestTime + 1, lag 0", {0: 150}, SpoutProfile(), 1, (-1, 200, 0, 201), "log-end"),
        (
            "no record, kafka.fetch.from.beginning: EarliestTime + 1",
            {0: 150},
            SpoutProfile(jstorm_from_beginning=True),
            1,
            (-1, 200, 99, 101),
            "log-start",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_a_jstorm_spout_is_answered_from_where_it_fetches_first(name, stored, profile, partition, expected, resumes):
    out, _ = doc(
        [jnode(p, o) for p, o in stored.items()], th=Profiles(Thresholds(spout=profile)), key=JSTORM_KEY, folder=True
    )
    entry = out[T][str(partition)]
    assert (*three(entry), entry["resumeOffset"]) == expected and entry["resumes"] == resumes
    assert entry["originalLag"] == expected[1] - expected[0] and entry["why"]
    if partition in stored:  # no finding on it: why says the + 1, with its source
        assert entry["findings"] == [] and "stored offset + 1" in entry["why"] and "PartitionConsumer" in entry["why"]
    else:
        assert entry["findings"] == ["MISSING_PARTITION"]


def test_a_jstorm_spout_below_the_log_start_fetches_nothing_and_above_the_log_end_waits():
    out, _ = doc([jnode(0, 50), jnode(1, 260)], key=JSTORM_KEY, folder=True)
    below, above = out[T]["0"], out[T]["1"]
    assert below["resumes"] == "fetch-fails" and below["resumeOffset"] is None and below["lostToRetention"] == 49
    assert "OFFSET_BELOW_LOG_START" in below["findings"]
    assert above["resumes"] == "waits-until-log-end-reaches" and above["resumeOffset"] == 261
    assert "OFFSET_ABOVE_LOG_END" in above["findings"]


def test_a_spout_whose_every_fetch_fails_has_no_resume_offset_and_keeps_the_originals_lag():
    """storm-kafka without useStartOffsetTimeIfOffsetOutOfRange below the log start (KafkaUtils.fetchMessages@v1.2.4:
    FailedFetchException, for good): it reads nothing, so resumeOffset is null and the lag counts from the stored
    offset, KOLU's (docs/storm-ui-lag.md), not from where a spout with no record would start."""
    th = Profiles(Thresholds(spout=SpoutProfile(out_of_range_reset=False)))
    out, _ = doc([rec(0, 50), rec(1, 150)], th=th)
    entry = out[T]["0"]
    assert (entry["resumes"], entry["resumeOffset"], three(entry)) == ("fetch-fails", None, (50, 200, 150))
    assert "originalLag" not in entry and entry["lostToRetention"] == 50
