"""One answer per Storm behaviour (offctl/core/storm/): what a release does with a stored position, as a
structured outcome (where the spout lands, the sentence, the citation), one case per kind of outcome, each citing the
file and the release tag of apache/storm it was read from (its test id names them)."""

from __future__ import annotations

import pytest

from offctl.core.records.model import KAFKA, STORM_KAFKA, TRIDENT, ZOOKEEPER, ConsumerKey, OffsetRecord, PartitionRow
from offctl.core.rules.consumer import out_of_range_move
from offctl.core.storm.commits import IdleCommit, idle_commit, subscribes
from offctl.core.storm.outcomes import Lands, Resumes, Resumption, out_of_range_outcome, start_outcome, time_lands
from offctl.core.storm.releases import (
    EARLIEST_TIME,
    LATEST_TIME,
    FirstPoll,
    Guarantee,
    Library,
    SpoutProfile,
    StormKafka,
    StormKafkaClient,
    guarantees_of,
    release,
)
from offctl.core.storm.start import (
    configured_start,
    first_poll_start,
    ignored_start,
    starts_alike,
    storm_kafka_ignores,
    time_after,
)
from offctl.core.time.retention import END, FAILS, START, TIME, lands

PM = "external/storm-kafka/src/jvm/org/apache/storm/kafka/PartitionManager.java"
PM_0 = "external/storm-kafka/src/jvm/storm/kafka/PartitionManager.java"
KU_0 = "external/storm-kafka/src/jvm/storm/kafka/KafkaUtils.java"
KU = "external/storm-kafka/src/jvm/org/apache/storm/kafka/KafkaUtils.java"
TKE = "external/storm-kafka/src/jvm/org/apache/storm/kafka/trident/TridentKafkaEmitter.java"
TKE_0 = "external/storm-kafka/src/jvm/storm/kafka/trident/TridentKafkaEmitter.java"
KSC = "external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/KafkaSpoutConfig.java"
KS = "external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/KafkaSpout.java"

SK, TR, CL = Library.STORM_KAFKA, Library.STORM_KAFKA_TRIDENT, Library.STORM_KAFKA_CLIENT
AT_TIME = 1_700_000_000_000
# What Kafka answers storm-kafka's ListOffsets v0 for a timestamp (UnifiedLog.legacyFetchOffsetsBefore, apache/kafka
# 3.9.0: segment files' mtimes, not the time index), as the sentences say it where the capture time is not known; run
# on storm-kafka 1.2.4 and Kafka 3.9.2 in tests/oracle/test_spout_oracle_time_e2e.py.
V0 = (
    f"the offset Kafka answers for startOffsetTime {AT_TIME} (ListOffsets v0 reads segment files, not record "
    f"timestamps: UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0): the base offset, at least the log start, "
    f"of the last log segment whose file was last modified at or before then"
)
ANY_TIME = ", or the log end to a spout that starts before then"
NO_ANSWER = "; or, when every segment was modified later, none: the spout goes to -5 (KafkaUtils.NO_OFFSET) and "


def client(release_: str, guarantee: Guarantee = Guarantee.AT_LEAST_ONCE) -> SpoutProfile:
    return SpoutProfile(client=StormKafkaClient.of_version(release_), client_release=release_, guarantee=guarantee)


# (profile, library, side, lands, member, file, tags, the sentence at position 150, log start 100, log end 120 /
# position 90 below). Each behaviour was read at the tag named (apache/storm):
OUT_OF_RANGE = [
    pytest.param(
        SpoutProfile(),
        SK,
        "below",
        Lands.LOG_START,
        "PartitionManager.fill",
        PM,
        ("v1.2.4",),
        "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v1.2.4)",
        id="log-start:PartitionManager.fill@v1.2.4",
    ),
    pytest.param(
        SpoutProfile(),
        SK,
        "above",
        Lands.WAITS,
        "PartitionManager.fill",
        PM,
        ("v1.2.4",),
        "the spout emits nothing from this partition until the log end reaches 150; the 30 messages that "
        "arrive before then are never emitted (PartitionManager.fill, v1.2.4)",
        id="waits:PartitionManager.fill@v1.2.4(LatestTime,only-forward)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V1_0),
        SK,
        "above",
        Lands.WAITS,
        "PartitionManager.fill",
        PM,
        ("v1.0.7",),
        None,
        id="waits:PartitionManager.fill@v1.0.7(EarliestTime,only-forward)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_10),
        SK,
        "above",
        Lands.LOG_START,
        "PartitionManager.fill",
        "external/storm-kafka/src/jvm/storm/kafka/PartitionManager.java",
        ("v0.10.2",),
        "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v0.10.2)",
        id="log-start:PartitionManager.fill@v0.10.2",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_3),
        SK,
        "below",
        Lands.LOG_END,
        "PartitionManager.fill",
        PM_0,
        ("v0.9.6",),
        "the spout jumps to the log end (LatestTime: forceFromStart is false) (120) (PartitionManager.fill, v0.9.6)",
        id="log-end:PartitionManager.fill@v0.9.6(UpdateOffsetException)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_3, ignore_zk_offsets=True, start_offset_time=AT_TIME),
        SK,
        "below",
        Lands.TIME,
        "PartitionManager.fill",
        PM_0,
        ("v0.9.6",),
        f"the spout jumps to {V0}{ANY_TIME}{NO_ANSWER}every fetch is out of range, as its retry asks for "
        f"startOffsetTime again: it emits nothing (PartitionManager.fill, v0.9.6)",
        id="time:PartitionManager.fill@v0.9.6(forceFromStart)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=LATEST_TIME),
        SK,
        "below",
        Lands.LOG_END,
        "KafkaUtils.fetchMessages",
        KU_0,
        ("v0.9.2-incubating",),
        "the spout refetches from startOffsetTime, the log end (120) (KafkaUtils.fetchMessages, v0.9.2-incubating)",
        id="log-end:KafkaUtils.fetchMessages@v0.9.2-incubating(retry)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_0),
        SK,
        "above",
        Lands.WAITS,
        "PartitionManager.fill",
        PM_0,
        ("v0.9.2-incubating",),
        None,
        id="waits:PartitionManager.fill@v0.9.2-incubating",
    ),
    pytest.param(
        SpoutProfile(out_of_range_reset=False),
        SK,
        "below",
        Lands.FAILS,
        "KafkaUtils.fetchMessages",
        KU,
        ("v1.2.4",),
        "without useStartOffsetTimeIfOffsetOutOfRange every fetch fails (FailedFetchException, "
        "KafkaUtils.fetchMessages, v1.2.4) and the partition never emits from it again: those messages are "
        "gone; KafkaSpout.nextTuple retries the failing partition without moving on to the next (its "
        "_currPartitionIndex stays), so once the task reaches it, none of its partitions emits again "
        "(KafkaSpout.nextTuple, v1.2.4; run on storm-kafka 1.2.4)",
        id="fails:KafkaUtils.fetchMessages@v1.2.4(FailedFetchException)",
    ),
    pytest.param(
        SpoutProfile(),
        TR,
        "below",
        Lands.LOG_START,
        "TridentKafkaEmitter",
        TKE,
        ("v1.2.4",),
        "the emitter moves to the log start (EarliestTime, on TopicOffsetOutOfRangeException; "
        "TridentKafkaEmitter, v1.2.4)",
        id="log-start:TridentKafkaEmitter@v1.2.4",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_3),
        TR,
        "above",
        Lands.FAILS,
        "TridentKafkaEmitter",
        TKE_0,
        ("v0.9.6",),
        None,
        id="fails:TridentKafkaEmitter@v0.9.6(UpdateOffsetException-uncaught)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=EARLIEST_TIME),
        TR,
        "below",
        Lands.LOG_START,
        "TridentKafkaEmitter",
        TKE_0,
        ("v0.9.2-incubating",),
        "KafkaUtils.fetchMessages refetches from startOffsetTime (TridentKafkaEmitter, v0.9.2-incubating)",
        id="log-start:TridentKafkaEmitter@v0.9.2-incubating(retry)",
    ),
    pytest.param(
        client("1.1.1"),
        CL,
        "below",
        Lands.LOG_END,
        "KafkaSpoutConfig",
        KSC,
        ("v1.1.1",),
        None,
        id="log-end:KafkaSpoutConfig@v1.1.1(no-auto.offset.reset)",
    ),
    pytest.param(
        client("2.8.8"),
        CL,
        "above",
        Lands.LOG_START,
        "KafkaSpoutConfig",
        KSC,
        ("v1.2.4", "v2.8.8"),
        "the consumer moves where its auto.offset.reset says: 'earliest' (the log start), which "
        "KafkaSpoutConfig sets under AT_LEAST_ONCE unless the topology sets another (KafkaSpoutConfig, "
        "v1.2.4 and v2.8.8); but the spout counts its commits from the stored offset, so its first commit "
        "after acking a message from the log start throws IllegalStateException (the offset is below the "
        "current nextCommitOffset, OffsetManager.findNextCommitOffset, v1.2.4 and v2.8.8; run on "
        "storm-kafka-client 1.2.4 and 2.8.3). Thrown out of nextTuple at the first commit period, it ends the "
        "worker, which restarts into the same commit (read from the source): the commit never moves, and the "
        "messages from the log start are emitted again on every restart",
        id="log-start:KafkaSpoutConfig@v2.8.8(AT_LEAST_ONCE-earliest)",
    ),
    pytest.param(
        client("3.1.0", Guarantee.AT_MOST_ONCE),
        CL,
        "below",
        Lands.LOG_END,
        "KafkaSpoutConfig",
        KSC,
        ("v1.2.4", "v2.8.8"),
        None,
        id="log-end:KafkaSpoutConfig@v2.8.8(AT_MOST_ONCE-latest)",
    ),
]


@pytest.mark.parametrize("profile, library, side, where, member, file, tags, sentence", OUT_OF_RANGE)
def test_out_of_range_outcome(profile, library, side, where, member, file, tags, sentence):
    said = out_of_range_outcome(profile, library, side)
    assert (said.lands, said.citation.member, said.citation.file, said.citation.tags) == (where, member, file, tags)
    text = said.sentence(150 if side == "above" else 90, 100, 120)
    assert str(said.citation) in text  # the sentence cites what the outcome cites
    if sentence is not None:
        assert text == sentence


# Where the spout starts without a stored position it can use: PartitionManager's constructor (`current`), or
# KafkaSpout.doSeek's first-poll strategy.
START_CASES = [
    pytest.param(
        SpoutProfile(),
        SK,
        Lands.LOG_START,
        "PartitionManager",
        PM,
        ("v1.2.4",),
        "startOffsetTime, the log start (100)",
        id="log-start:PartitionManager@v1.2.4(startOffsetTime)",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_3),
        SK,
        Lands.LOG_END,
        "PartitionManager",
        PM_0,
        ("v0.9.6",),
        "the log end (LatestTime: forceFromStart is false) (120)",
        id="log-end:PartitionManager@v0.9.6(LatestTime)",
    ),
    pytest.param(
        SpoutProfile(start_offset_time=AT_TIME),
        SK,
        Lands.TIME,
        "PartitionManager",
        PM,
        ("v1.2.4",),
        f"{V0}{ANY_TIME}{NO_ANSWER}its first fetch is out of range: it jumps to the log start (EarliestTime, "
        f"PartitionManager.fill, v1.2.4)",
        id="time:PartitionManager@v1.2.4",
    ),
    pytest.param(
        SpoutProfile(),
        CL,
        Lands.LOG_START,
        "KafkaSpout.doSeek",
        KS,
        ("v2.8.8",),
        "the log start (100)",
        id="log-start:KafkaSpout.doSeek@v2.8.8(UNCOMMITTED_EARLIEST)",
    ),
    pytest.param(
        SpoutProfile(first_poll=FirstPoll.LATEST),
        CL,
        Lands.LOG_END,
        "KafkaSpout.doSeek",
        KS,
        ("v2.8.8",),
        "the log end (120)",
        id="log-end:KafkaSpout.doSeek@v2.8.8(LATEST)",
    ),
]


@pytest.mark.parametrize("profile, library, where, member, file, tags, sentence", START_CASES)
def test_start_outcome(profile, library, where, member, file, tags, sentence):
    said = start_outcome(profile, library)
    assert (said.lands, said.citation.member, said.citation.file, said.citation.tags) == (where, member, file, tags)
    assert said.sentence(0, 100, 120) == sentence


def _row(store: str, trident: str | None = None) -> PartitionRow:
    key = ConsumerKey(store, "c", "/r" if store != KAFKA else None)
    return PartitionRow(OffsetRecord(key, 0, "t", 90, trident=trident), 100, 120, None, None, "t")


@pytest.mark.parametrize(
    "profile, row, library",
    [
        (SpoutProfile(storm_kafka=StormKafka.V0_9_3), _row(ZOOKEEPER), SK),
        (SpoutProfile(storm_kafka=StormKafka.V0_9_3), _row(TRIDENT, STORM_KAFKA), TR),
        (SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=AT_TIME), _row(ZOOKEEPER), SK),
        (SpoutProfile(out_of_range_reset=False), _row(ZOOKEEPER), SK),
        (client("1.1.1"), _row(KAFKA), CL),
        (client("2.8.8", Guarantee.NO_GUARANTEE), _row(KAFKA), CL),
        (SpoutProfile(), _row(KAFKA), CL),
    ],
    ids=["0.9.6", "trident-0.9.6", "0.9.2-time", "no-reset", "client-1.1.1", "client-no-guarantee", "client"],
)
def test_findings_and_retention_read_one_outcome(profile, row, library):
    """The finding's sentence and retention's landing place are the outcome's, for every library."""
    said = out_of_range_outcome(profile, library, "below")
    assert out_of_range_move(profile, row.record, "below", 90, 100, 120) == said.sentence(90, 100, 120)
    assert lands(profile, row) == {Lands.LOG_START: START, Lands.LOG_END: END, Lands.TIME: TIME}.get(said.lands, FAILS)


@pytest.mark.parametrize(
    "text, version",
    [
        ("3.1", (3, 1)),
        ("3.1.0", (3, 1, 0)),
        ("3.0.0", (3, 0, 0)),
        ("0.9.2-incubating", (0, 9, 2)),
        ("1.2.4", (1, 2, 4)),
    ],
)
def test_releases_are_tuples(text, version):
    """A release is (major, minor[, patch]): 3.0 and 3.1 stay apart, and tuples order as releases do."""
    assert release(text) == version
    assert SpoutProfile(client_release=text).client_version == version


def test_release_order_tells_3_0_from_3_1():
    assert release("3.0.0") < release("3.1.0") and release("3.0") != release("3.1")
    assert SpoutProfile(client_release="3.0.0").client_version != SpoutProfile(client_release="3.1.0").client_version


TKSE = "external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/trident/KafkaTridentSpoutEmitter.java"


@pytest.mark.parametrize(
    "name, text, file",
    [
        ("DO_SEEK", "KafkaSpout.doSeek, v2.8.8", KS),
        ("DO_SEEK_OURS", "KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology, v2.8.8", KS),
        ("DO_SEEK_BOTH_LINES", "KafkaSpout.doSeek, v1.2.4 and v2.8.8", KS),
        ("COMMIT_ACKED", "KafkaSpout.commitOffsetsForAckedTuples, v1.2.4 and v2.8.8", KS),
        ("TRIDENT_CLIENT_SEEK", "KafkaTridentSpoutEmitter.seek, v2.8.8", TKSE),
        ("NO_RECORD", "the PartitionManager constructor, v0.9.6 and v1.2.4", PM_0),
        ("NO_TRIDENT_STATE", "TridentKafkaEmitter.doEmitNewPartitionBatch, v0.9.6 and v1.2.4", TKE_0),
    ],
    ids=lambda v: v if isinstance(v, str) and v.isupper() else None,
)
def test_the_citation_table(name, text, file):
    """The citations messages outside behaviour name (plan, analyze, expiry): each file exists at its first tag in
    apache/storm (read there), under storm/kafka/ before 1.0."""
    from offctl.core.storm import citations

    cite = getattr(citations, name)
    assert (str(cite), cite.file) == (text, file)


@pytest.mark.parametrize(
    "release, strategy, said",
    [
        (
            "2.8.8",
            "EARLIEST",
            "with EARLIEST the spout ignores these commits and starts at the log start (KafkaSpout.doSeek "
            "and CommitMetadataManager.isOffsetCommittedByThisTopology",
        ),
        ("1.2.4", "LATEST", "with LATEST the spout ignores these commits and starts at the log end"),
        (
            "1.1.1",
            "EARLIEST",
            "with EARLIEST storm-kafka-client 1.0.0-1.0.5 or 1.1.0-1.1.1 ignores every commit, whoever "
            "wrote it, and starts at the log start (KafkaSpout.doSeek, v1.1.1)",
        ),
        ("1.1.1", "UNCOMMITTED_EARLIEST", None),
        ("2.8.8", "UNCOMMITTED_LATEST", None),
    ],
)
def test_what_the_next_deployment_does_with_a_stopped_topologys_commits(release, strategy, said):
    """STALE_TOPOLOGY's clause for a group, by release: the legacy line (no metadata check) is cited at v1.1.1, the
    current one at its tags, never the other's."""
    from offctl.core.storm.releases import FirstPoll, SpoutProfile, StormKafkaClient
    from offctl.core.storm.start import stale_commits_ignored

    profile = SpoutProfile(client=StormKafkaClient.of_version(release), first_poll=FirstPoll(strategy))
    got = stale_commits_ignored(profile)
    assert (got is None) if said is None else got.startswith(said)
    if got is not None and release == "1.1.1":
        assert "isOffsetCommittedByThisTopology" not in got


# A timestamp startOffsetTime placed against the capture time (`now_ms`): after it, Kafka answers ListOffsets v0 with
# the log end to a spout that starts before it (the (logEndOffset, the broker's now) entry, or an empty active
# segment's, of UnifiedLog.legacyFetchOffsetsBefore, UnifiedLog.scala:1381-1424 at apache/kafka 3.9.0); at or before
# it, the answer is the base offset of a segment chosen by its file's mtime, which offctl cannot read, or none (-5,
# KafkaUtils.getOffset, v1.2.4). Run on storm-kafka 1.2.4 and Kafka 3.9.2 in tests/oracle/test_spout_oracle_time_e2e.py.
FIRST_FETCH = "its first fetch is out of range: it jumps to the log start (EarliestTime, PartitionManager.fill, v1.2.4)"
TIME_CASES = [
    pytest.param(
        SpoutProfile(start_offset_time=AT_TIME),
        AT_TIME - 1,
        Lands.LOG_END,
        120,
        f"the log end, which Kafka answers for startOffsetTime {AT_TIME}, after now, to a spout that starts "
        f"before then (ListOffsets v0, UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0: the log end's "
        f"entry is dated the request's time; from then on, the last segment whose file was last modified at "
        f"or before it)",
        id="after-the-capture:log-end",
    ),
    pytest.param(
        SpoutProfile(start_offset_time=AT_TIME),
        AT_TIME,
        Lands.TIME,
        None,
        f"{V0}{NO_ANSWER}{FIRST_FETCH}",
        id="at-the-capture:the-segments-decide",
    ),
    pytest.param(
        SpoutProfile(start_offset_time=AT_TIME),
        None,
        Lands.TIME,
        None,
        f"{V0}{ANY_TIME}{NO_ANSWER}{FIRST_FETCH}",
        id="no-capture-time:either",
    ),
    pytest.param(
        SpoutProfile(start_offset_time=AT_TIME, out_of_range_reset=False),
        AT_TIME + 1,
        Lands.TIME,
        None,
        f"{V0}{NO_ANSWER}every fetch is out of range and fails (FailedFetchException): it emits nothing",
        id="before-the-capture:no-reset",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_10, start_offset_time=AT_TIME),
        AT_TIME + 1,
        Lands.TIME,
        None,
        f"{V0}{NO_ANSWER}its first fetch is out of range: it jumps to the log start (EarliestTime, "
        f"PartitionManager.fill, v0.10.2)",
        id="before-the-capture:v0.10.2",
    ),
    pytest.param(
        SpoutProfile(storm_kafka=StormKafka.V0_9_3, start_offset_time=AT_TIME),
        AT_TIME - 1,
        Lands.LOG_END,
        120,
        "the log end (LatestTime: forceFromStart is false)",
        id="v0.9.6-without-forceFromStart:LatestTime",
    ),
    pytest.param(
        SpoutProfile(start_offset_time=LATEST_TIME),
        AT_TIME,
        Lands.LOG_END,
        120,
        "startOffsetTime, the log end",
        id="latest:not-a-timestamp",
    ),
    pytest.param(
        SpoutProfile(start_offset_time=EARLIEST_TIME),
        AT_TIME,
        Lands.LOG_START,
        100,
        "startOffsetTime, the log start",
        id="earliest:not-a-timestamp",
    ),
]


@pytest.mark.parametrize("profile, now, where, offset, label", TIME_CASES)
def test_a_timestamp_start_offset_time_against_the_capture_time(profile, now, where, offset, label):
    said = start_outcome(profile, SK, now)
    at = configured_start(profile, 100, 120, now)
    assert (said.lands, at.offset, at.label) == (where, offset, label)
    assert said.sentence(0, 100, 120) == at.text()
    resumes = Resumption.landing(said.lands, said.citation, None, 100, 120, at.offset)
    assert (resumes.at, resumes.kind) == (
        offset,
        {Lands.TIME: Resumes.TIME, Lands.LOG_END: Resumes.LOG_END, Lands.LOG_START: Resumes.LOG_START}[where],
    )
    if profile.ignore_zk_offsets or not profile.storm_kafka.before_0_10:  # where ignoreZkOffsets sends another's record
        assert ignored_start(profile, 100, 120, now) == at and time_lands(profile, now) is where
    assert time_after(profile, now) is (where is Lands.LOG_END and profile.start_offset_time > 0)


def test_without_a_capture_time_a_timestamp_is_never_placed_after_it():
    """The rules' callers that know no capture time (cost, plan, lagdoc) name the rule, both answers included."""
    profile = SpoutProfile(start_offset_time=4_000_000_000_000)  # the year 2096
    assert time_lands(profile) is Lands.TIME and configured_start(profile, 100, 120).offset is None
    assert ANY_TIME in configured_start(profile, 100, 120).label


# --- one answer per question (issue 37, item 5): what expiry, analyze, cost and the options read ----------------------

ALL_GUARANTEES = (Guarantee.AT_LEAST_ONCE, Guarantee.AT_MOST_ONCE, Guarantee.NO_GUARANTEE)


@pytest.mark.parametrize(
    "release_, want",
    [
        pytest.param("1.0.0", (Guarantee.AT_LEAST_ONCE,), id="v1.0.0:no-setting"),
        pytest.param("1.0.5", (Guarantee.AT_LEAST_ONCE,), id="v1.0.5:no-setting"),
        pytest.param("1.0.6", ALL_GUARANTEES, id="KafkaSpoutConfig.ProcessingGuarantee:v1.0.6"),
        pytest.param("1.1.1", (Guarantee.AT_LEAST_ONCE,), id="v1.1.1:no-setting"),
        pytest.param("1.1.2", ALL_GUARANTEES, id="KafkaSpoutConfig.ProcessingGuarantee:v1.1.2"),
        pytest.param("2.8.8", ALL_GUARANTEES, id="KafkaSpoutConfig.ProcessingGuarantee:v2.8.8"),
        pytest.param("3.1.0", ALL_GUARANTEES, id="3.1.0:as-2.x"),
    ],
)
def test_the_guarantees_a_release_can_run_under(release_, want):
    assert guarantees_of(StormKafkaClient.of_version(release_)) == want


@pytest.mark.parametrize(
    "release_, want",
    [
        pytest.param("1.0.0", True, id="KafkaSpout.subscribeKafkaConsumer:v1.0.0"),
        pytest.param("1.0.5", True, id="KafkaSpout.subscribeKafkaConsumer:v1.0.5"),
        pytest.param("1.0.6", False, id="ManualPartitionSubscription:v1.0.6"),
        pytest.param("1.1.0", True, id="NamedSubscription:v1.1.0"),
        pytest.param("1.1.1", True, id="NamedSubscription:v1.1.1"),
        pytest.param("1.1.2", False, id="ManualPartitionSubscription:v1.1.2"),
        pytest.param("1.2.4", False, id="ManualPartitionSubscription:v1.2.4"),
        pytest.param("2.8.8", False, id="TopicAssigner.assignPartitions:v2.8.8"),
        pytest.param("3.1.0", False, id="3.1.0:as-2.x"),
    ],
)
def test_which_releases_subscribe(release_, want):
    assert subscribes(client(release_)) is want


@pytest.mark.parametrize(
    "release_, guarantee, want",
    [
        pytest.param("2.8.8", Guarantee.AT_LEAST_ONCE, IdleCommit.AGES, id="commitOffsetsForAckedTuples:v2.8.8"),
        pytest.param("1.2.4", Guarantee.AT_LEAST_ONCE, IdleCommit.AGES, id="commitOffsetsForAckedTuples:v1.2.4"),
        pytest.param("3.1.0", Guarantee.AT_LEAST_ONCE, IdleCommit.AGES, id="3.1.0:as-2.x"),
        pytest.param("2.8.8", Guarantee.AT_MOST_ONCE, IdleCommit.EVERY_POLL, id="pollKafkaBroker-commitSync:v2.8.8"),
        pytest.param("1.2.4", Guarantee.NO_GUARANTEE, IdleCommit.EVERY_PERIOD, id="nextTuple-commitAsync:v1.2.4"),
        pytest.param("1.1.1", Guarantee.AT_LEAST_ONCE, IdleCommit.MEMBERS, id="NamedSubscription:v1.1.1"),
        # a legacy profile built by hand with a guarantee it has no setting for: the group's members still decide
        pytest.param("1.0.5", Guarantee.NO_GUARANTEE, IdleCommit.MEMBERS, id="subscribeKafkaConsumer:v1.0.5"),
    ],
)
def test_what_keeps_an_idle_partitions_commit_fresh(release_, guarantee, want):
    assert idle_commit(client(release_, guarantee)) is want


@pytest.mark.parametrize(
    "strategy, want",
    [
        pytest.param(FirstPoll.EARLIEST, True, id="EARLIEST:seekToBeginning"),
        pytest.param(FirstPoll.UNCOMMITTED_EARLIEST, True, id="UNCOMMITTED_EARLIEST:seekToBeginning"),
        pytest.param(FirstPoll.LATEST, False, id="LATEST:seekToEnd"),
        pytest.param(FirstPoll.UNCOMMITTED_LATEST, False, id="UNCOMMITTED_LATEST:seekToEnd"),
    ],
)
def test_where_a_first_poll_strategy_starts_without_a_commit(strategy, want):
    """KafkaSpout.doSeek, v2.8.8: the one answer first_poll_start, the edge's words and expiry's `then` read."""
    assert strategy.from_log_start is want
    profile = SpoutProfile(first_poll=strategy)
    assert first_poll_start(profile, 3, 9).offset == (3 if want else 9)
    assert strategy.edge == ("log start" if want else "log end")


@pytest.mark.parametrize(
    "line, want",
    [
        pytest.param(StormKafka.V0_9_0, "forceFromStart", id="KafkaConfig:v0.9.2-incubating"),
        pytest.param(StormKafka.V0_9_3, "forceFromStart", id="KafkaConfig:v0.9.6"),
        pytest.param(StormKafka.V0_10, "ignoreZkOffsets", id="KafkaConfig:v0.10.0"),
        pytest.param(StormKafka.V1_0, "ignoreZkOffsets", id="KafkaConfig:v1.0.7"),
        pytest.param(StormKafka.V1_X, "ignoreZkOffsets", id="KafkaConfig:v1.2.4"),
    ],
)
def test_the_setting_that_ignores_another_topologys_offsets(line, want):
    assert line.ignore_setting == want
    assert f", {want}=false," in SpoutProfile(storm_kafka=line).describe()


@pytest.mark.parametrize(
    "committed, want",
    [
        pytest.param(-1, True, id="negative"),
        pytest.param(0, True, id="zero:PartitionManager-committedTo<=0"),
        pytest.param(1, False, id="one"),
        pytest.param(2**63 - 1, False, id="Long.MAX_VALUE"),
    ],
)
def test_which_stored_offsets_storm_kafka_replaces(committed, want):
    assert storm_kafka_ignores(committed) is want


@pytest.mark.parametrize(
    "other, want",
    [
        pytest.param(SpoutProfile(), True, id="the-same"),
        pytest.param(
            SpoutProfile(first_poll=FirstPoll.LATEST, guarantee=Guarantee.AT_MOST_ONCE),
            True,
            id="storm-kafka-client-settings-do-not-count",
        ),
        pytest.param(
            SpoutProfile(max_offset_behind=5, out_of_range_reset=False),
            True,
            id="maxOffsetBehind-and-out-of-range-do-not-count",
        ),
        pytest.param(SpoutProfile(start_offset_time=LATEST_TIME), False, id="startOffsetTime"),
        pytest.param(SpoutProfile(ignore_zk_offsets=True), False, id="ignoreZkOffsets"),
        pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_3), False, id="the-release-line"),
    ],
)
def test_which_profiles_start_storm_kafka_alike(other, want):
    assert starts_alike(SpoutProfile(), other) is want
    assert starts_alike(other, SpoutProfile()) is want


def test_profiles_that_start_alike_start_at_the_same_place():
    """starts_alike reads every setting configured_start does: alike profiles always give the same start."""
    profiles = [
        SpoutProfile(storm_kafka=line, start_offset_time=at, ignore_zk_offsets=ignore, max_offset_behind=mob)
        for line in StormKafka
        for at in (EARLIEST_TIME, LATEST_TIME, AT_TIME)
        for ignore in (False, True)
        for mob in (None, 5)
    ]
    for a in profiles:
        for b in profiles:
            if starts_alike(a, b):
                assert configured_start(a, 100, 120, AT_TIME - 1) == configured_start(b, 100, 120, AT_TIME - 1)


@pytest.mark.parametrize(
    "release_, has",
    [
        ("1.0.5", False),
        ("1.0.6", True),
        ("1.0.7", True),
        ("1.1.1", False),
        ("1.1.2", True),
        ("1.1.3", True),
        ("1.1.4", False),
        ("1.2.0", True),
        ("1.2.2", True),
        ("1.2.3", False),
        ("1.2.4", False),
        ("2.0.0", False),
        ("2.8.8", False),
        ("3.1.0", False),
    ],
)
def test_storm_2844s_check_is_in_the_releases_whose_source_has_it(release_, has):
    """KafkaSpout.emitOrRetryTuple's "already been committed" check, found by `git grep` at every 1.x tag
    (v1.0.6-v1.0.7, v1.1.2-v1.1.3, v1.2.0-v1.2.2; STORM-3102 removed it in v1.1.4 and v1.2.3; never in 2.x); run on
    1.0.6 and 1.1.3 (tests/oracle/test_storm_kafka_client_releases_e2e.py). Only AT_LEAST_ONCE reads it."""
    from offctl.core.storm.outcomes import committed_above_outcome, emit_check

    assert emit_check(client(release_)) is has
    assert emit_check(client(release_, Guarantee.AT_MOST_ONCE)) is False
    ours = committed_above_outcome(client(release_), True)
    assert (ours is not None and ours.lands is Lands.CRASHES) is has
    assert committed_above_outcome(client(release_), False) is None  # another topology's commit: no throw
    unknown = committed_above_outcome(client(release_), None)
    assert (
        unknown is not None
        and unknown.lands is Lands.LOG_START
        and "if this commit is the running topology's" in unknown.sentence(50, 4, 10)
    ) is has
    assert Resumption.landing(Lands.CRASHES, ours.citation, 50, 4, 10).kind is Resumes.CRASHES if has else True
