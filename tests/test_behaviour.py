"""One answer per Storm behaviour (offctl.core.behaviour): what a release does with a stored position, as a structured
outcome (where the spout lands, the sentence, the citation), one case per kind of outcome, each citing the file and
the release tag of apache/storm it was read from (its test id names them)."""

from __future__ import annotations

import pytest

from offctl.core.analyze import out_of_range_move
from offctl.core.behaviour import (EARLIEST_TIME, LATEST_TIME, Guarantee, Lands, Library, SpoutProfile, StormKafka,
                                   StormKafkaClient, FirstPoll, out_of_range_outcome, release, start_outcome)
from offctl.core.model import KAFKA, STORM_KAFKA, TRIDENT, ZOOKEEPER, ConsumerKey, OffsetRecord, PartitionRow
from offctl.core.retention import END, FAILS, START, TIME, lands

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


def client(release_: str, guarantee: Guarantee = Guarantee.AT_LEAST_ONCE) -> SpoutProfile:
    return SpoutProfile(client=StormKafkaClient.of_version(release_), client_release=release_, guarantee=guarantee)


# (profile, library, side, lands, member, file, tags, the sentence at position 150, log start 100, log end 120 /
# position 90 below). Each behaviour was read at the tag named (apache/storm):
OUT_OF_RANGE = [
    pytest.param(SpoutProfile(), SK, "below", Lands.LOG_START, "PartitionManager.fill", PM, ("v1.2.4",),
                 "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v1.2.4)",
                 id="log-start:PartitionManager.fill@v1.2.4"),
    pytest.param(SpoutProfile(), SK, "above", Lands.WAITS, "PartitionManager.fill", PM, ("v1.2.4",),
                 "the spout emits nothing from this partition until the log end reaches 150; the 30 messages that "
                 "arrive before then are never emitted (PartitionManager.fill, v1.2.4)",
                 id="waits:PartitionManager.fill@v1.2.4(LatestTime,only-forward)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V1_0), SK, "above", Lands.WAITS, "PartitionManager.fill", PM,
                 ("v1.0.7",), None, id="waits:PartitionManager.fill@v1.0.7(EarliestTime,only-forward)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_10), SK, "above", Lands.LOG_START, "PartitionManager.fill",
                 "external/storm-kafka/src/jvm/storm/kafka/PartitionManager.java", ("v0.10.2",),
                 "the spout jumps to the log start (100; EarliestTime, PartitionManager.fill, v0.10.2)",
                 id="log-start:PartitionManager.fill@v0.10.2"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_3), SK, "below", Lands.LOG_END, "PartitionManager.fill",
                 PM_0, ("v0.9.6",),
                 "the spout jumps to the log end (LatestTime: forceFromStart is false) (120) "
                 "(PartitionManager.fill, v0.9.6)", id="log-end:PartitionManager.fill@v0.9.6(UpdateOffsetException)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_3, ignore_zk_offsets=True, start_offset_time=AT_TIME), SK,
                 "below", Lands.TIME, "PartitionManager.fill", PM_0, ("v0.9.6",),
                 f"the spout jumps to the offset at startOffsetTime {AT_TIME} (PartitionManager.fill, v0.9.6)",
                 id="time:PartitionManager.fill@v0.9.6(forceFromStart)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=LATEST_TIME), SK, "below",
                 Lands.LOG_END, "KafkaUtils.fetchMessages", KU_0, ("v0.9.2-incubating",),
                 "the spout refetches from startOffsetTime, the log end (120) (KafkaUtils.fetchMessages, "
                 "v0.9.2-incubating)", id="log-end:KafkaUtils.fetchMessages@v0.9.2-incubating(retry)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_0), SK, "above", Lands.WAITS, "PartitionManager.fill",
                 PM_0, ("v0.9.2-incubating",), None, id="waits:PartitionManager.fill@v0.9.2-incubating"),
    pytest.param(SpoutProfile(out_of_range_reset=False), SK, "below", Lands.FAILS, "KafkaUtils.fetchMessages", KU,
                 ("v1.2.4",), "without useStartOffsetTimeIfOffsetOutOfRange every fetch fails (FailedFetchException, "
                 "KafkaUtils.fetchMessages, v1.2.4) and the partition never emits from it again: those messages are "
                 "gone; KafkaSpout.nextTuple retries the failing partition without moving on to the next (its "
                 "_currPartitionIndex stays), so once the task reaches it, none of its partitions emits again "
                 "(KafkaSpout.nextTuple, v1.2.4; run on storm-kafka 1.2.4)",
                 id="fails:KafkaUtils.fetchMessages@v1.2.4(FailedFetchException)"),
    pytest.param(SpoutProfile(), TR, "below", Lands.LOG_START, "TridentKafkaEmitter", TKE, ("v1.2.4",),
                 "the emitter moves to the log start (EarliestTime, on TopicOffsetOutOfRangeException; "
                 "TridentKafkaEmitter, v1.2.4)", id="log-start:TridentKafkaEmitter@v1.2.4"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_3), TR, "above", Lands.FAILS, "TridentKafkaEmitter", TKE_0,
                 ("v0.9.6",), None, id="fails:TridentKafkaEmitter@v0.9.6(UpdateOffsetException-uncaught)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=EARLIEST_TIME), TR, "below",
                 Lands.LOG_START, "TridentKafkaEmitter", TKE_0, ("v0.9.2-incubating",),
                 "KafkaUtils.fetchMessages refetches from startOffsetTime (TridentKafkaEmitter, v0.9.2-incubating)",
                 id="log-start:TridentKafkaEmitter@v0.9.2-incubating(retry)"),
    pytest.param(client("1.1.1"), CL, "below", Lands.LOG_END, "KafkaSpoutConfig", KSC, ("v1.1.1",), None,
                 id="log-end:KafkaSpoutConfig@v1.1.1(no-auto.offset.reset)"),
    pytest.param(client("2.8.8"), CL, "above", Lands.LOG_START, "KafkaSpoutConfig", KSC, ("v1.2.4", "v2.8.8"),
                 "the consumer moves where its auto.offset.reset says: 'earliest' (the log start), which "
                 "KafkaSpoutConfig sets under AT_LEAST_ONCE unless the topology sets another (KafkaSpoutConfig, "
                 "v1.2.4 and v2.8.8); but the spout counts its commits from the stored offset, so its first commit "
                 "after acking a message from the log start throws IllegalStateException (the offset is below the "
                 "current nextCommitOffset, OffsetManager.findNextCommitOffset, v1.2.4 and v2.8.8; run on "
                 "storm-kafka-client 1.2.4 and 2.8.3). Thrown out of nextTuple at the first commit period, it ends the "
                 "worker, which restarts into the same commit (read from the source): the commit never moves, and the "
                 "messages from the log start are emitted again on every restart",
                 id="log-start:KafkaSpoutConfig@v2.8.8(AT_LEAST_ONCE-earliest)"),
    pytest.param(client("3.1.0", Guarantee.AT_MOST_ONCE), CL, "below", Lands.LOG_END, "KafkaSpoutConfig", KSC,
                 ("v1.2.4", "v2.8.8"), None, id="log-end:KafkaSpoutConfig@v2.8.8(AT_MOST_ONCE-latest)"),
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
    pytest.param(SpoutProfile(), SK, Lands.LOG_START, "PartitionManager", PM, ("v1.2.4",),
                 "startOffsetTime, the log start (100)",
                 id="log-start:PartitionManager@v1.2.4(startOffsetTime)"),
    pytest.param(SpoutProfile(storm_kafka=StormKafka.V0_9_3), SK, Lands.LOG_END, "PartitionManager", PM_0, ("v0.9.6",),
                 "the log end (LatestTime: forceFromStart is false) (120)",
                 id="log-end:PartitionManager@v0.9.6(LatestTime)"),
    pytest.param(SpoutProfile(start_offset_time=AT_TIME), SK, Lands.TIME, "PartitionManager", PM, ("v1.2.4",),
                 f"the offset at startOffsetTime {AT_TIME}", id="time:PartitionManager@v1.2.4"),
    pytest.param(SpoutProfile(), CL, Lands.LOG_START, "KafkaSpout.doSeek", KS, ("v2.8.8",), "the log start (100)",
                 id="log-start:KafkaSpout.doSeek@v2.8.8(UNCOMMITTED_EARLIEST)"),
    pytest.param(SpoutProfile(first_poll=FirstPoll.LATEST), CL, Lands.LOG_END, "KafkaSpout.doSeek", KS, ("v2.8.8",),
                 "the log end (120)", id="log-end:KafkaSpout.doSeek@v2.8.8(LATEST)"),
]


@pytest.mark.parametrize("profile, library, where, member, file, tags, sentence", START_CASES)
def test_start_outcome(profile, library, where, member, file, tags, sentence):
    said = start_outcome(profile, library)
    assert (said.lands, said.citation.member, said.citation.file, said.citation.tags) == (where, member, file, tags)
    assert said.sentence(0, 100, 120) == sentence


def _row(store: str, trident: str | None = None) -> PartitionRow:
    key = ConsumerKey(store, "c", "/r" if store != KAFKA else None)
    return PartitionRow(OffsetRecord(key, 0, "t", 90, trident=trident), 100, 120, None, None, "t")


@pytest.mark.parametrize("profile, row, library", [
    (SpoutProfile(storm_kafka=StormKafka.V0_9_3), _row(ZOOKEEPER), SK),
    (SpoutProfile(storm_kafka=StormKafka.V0_9_3), _row(TRIDENT, STORM_KAFKA), TR),
    (SpoutProfile(storm_kafka=StormKafka.V0_9_0, start_offset_time=AT_TIME), _row(ZOOKEEPER), SK),
    (SpoutProfile(out_of_range_reset=False), _row(ZOOKEEPER), SK),
    (client("1.1.1"), _row(KAFKA), CL),
    (client("2.8.8", Guarantee.NO_GUARANTEE), _row(KAFKA), CL),
    (SpoutProfile(), _row(KAFKA), CL),
], ids=["0.9.6", "trident-0.9.6", "0.9.2-time", "no-reset", "client-1.1.1", "client-no-guarantee", "client"])
def test_findings_and_retention_read_one_outcome(profile, row, library):
    """The finding's sentence and retention's landing place are the outcome's, for every library."""
    said = out_of_range_outcome(profile, library, "below")
    assert out_of_range_move(profile, row.record, "below", 90, 100, 120) == said.sentence(90, 100, 120)
    assert lands(profile, row) == {Lands.LOG_START: START, Lands.LOG_END: END, Lands.TIME: TIME}.get(said.lands, FAILS)


@pytest.mark.parametrize("text, version", [
    ("3.1", (3, 1)), ("3.1.0", (3, 1, 0)), ("3.0.0", (3, 0, 0)), ("0.9.2-incubating", (0, 9, 2)), ("1.2.4", (1, 2, 4)),
])
def test_releases_are_tuples(text, version):
    """A release is (major, minor[, patch]): 3.0 and 3.1 stay apart, and tuples order as releases do."""
    assert release(text) == version
    assert SpoutProfile(client_release=text).client_version == version


def test_release_order_tells_3_0_from_3_1():
    assert release("3.0.0") < release("3.1.0") and release("3.0") != release("3.1")
    assert SpoutProfile(client_release="3.0.0").client_version != SpoutProfile(client_release="3.1.0").client_version


TKSE = "external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/trident/KafkaTridentSpoutEmitter.java"


@pytest.mark.parametrize("name, text, file", [
    ("DO_SEEK", "KafkaSpout.doSeek, v2.8.8", KS),
    ("DO_SEEK_OURS", "KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology, v2.8.8", KS),
    ("DO_SEEK_BOTH_LINES", "KafkaSpout.doSeek, v1.2.4 and v2.8.8", KS),
    ("COMMIT_ACKED", "KafkaSpout.commitOffsetsForAckedTuples, v1.2.4 and v2.8.8", KS),
    ("TRIDENT_CLIENT_SEEK", "KafkaTridentSpoutEmitter.seek, v2.8.8", TKSE),
    ("NO_RECORD", "the PartitionManager constructor, v0.9.6 and v1.2.4", PM_0),
    ("NO_TRIDENT_STATE", "TridentKafkaEmitter.doEmitNewPartitionBatch, v0.9.6 and v1.2.4", TKE_0),
], ids=lambda v: v if isinstance(v, str) and v.isupper() else None)
def test_the_citation_table(name, text, file):
    """The citations messages outside behaviour name (plan, analyze, expiry): each file exists at its first tag in
    apache/storm (read there), under storm/kafka/ before 1.0."""
    import offctl.core.behaviour as behaviour

    cite = getattr(behaviour, name)
    assert (str(cite), cite.file) == (text, file)


@pytest.mark.parametrize("release, strategy, said", [
    ("2.8.8", "EARLIEST", "with EARLIEST the spout ignores these commits and starts at the log start (KafkaSpout.doSeek "
                          "and CommitMetadataManager.isOffsetCommittedByThisTopology"),
    ("1.2.4", "LATEST", "with LATEST the spout ignores these commits and starts at the log end"),
    ("1.1.1", "EARLIEST", "with EARLIEST storm-kafka-client 1.0.0-1.0.5 or 1.1.0-1.1.1 ignores every commit, whoever "
                          "wrote it, and starts at the log start (KafkaSpout.doSeek, v1.1.1)"),
    ("1.1.1", "UNCOMMITTED_EARLIEST", None),
    ("2.8.8", "UNCOMMITTED_LATEST", None),
])
def test_what_the_next_deployment_does_with_a_stopped_topologys_commits(release, strategy, said):
    """STALE_TOPOLOGY's clause for a group, by release: the legacy line (no metadata check) is cited at v1.1.1, the
    current one at its tags, never the other's."""
    from offctl.core.behaviour import FirstPoll, SpoutProfile, StormKafkaClient, stale_commits_ignored

    profile = SpoutProfile(client=StormKafkaClient.of_version(release), first_poll=FirstPoll(strategy))
    got = stale_commits_ignored(profile)
    assert (got is None) if said is None else got.startswith(said)
    if got is not None and release == "1.1.1":
        assert "isOffsetCommittedByThisTopology" not in got
