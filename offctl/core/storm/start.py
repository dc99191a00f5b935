"""Where a spout starts a partition with what is stored, release by release. Pure: no server, no clock.

Every rule cites the Storm source it follows (apache/storm, at the release tag named). Paths are under
external/storm-kafka/src/jvm/storm/kafka/ before 1.0 and .../org/apache/storm/kafka/ from 1.0 on, and
under external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/ for storm-kafka-client.

storm-kafka, PartitionManager's constructor (identical read in v0.9.2-incubating through v1.2.4):
  1. The record is read with json-simple; only `topology.id` (a string) and `offset` (a long) are taken.
     A record that cannot be read that way counts as no record ("failed to parse JSON?").
  2. No usable record: start at `current`, the offset KafkaUtils.getOffset(consumer, topic, partition,
     spoutConfig) gives: LatestTime unless forceFromStart, else startOffsetTime (v0.9.x KafkaUtils.java);
     startOffsetTime always (v0.10.0 on).
  3. ignoreZkOffsets (0.9.x: forceFromStart) and the record's topology.id is not the running one: start at
     the offset at startOffsetTime.
  4. Otherwise the stored offset, unless `current - committed > maxOffsetBehind || committed <= 0`: then
     `current`.
  5. On the first fetch an offset outside [log start, log end] gets OFFSET_OUT_OF_RANGE. With
     useStartOffsetTimeIfOffsetOutOfRange (default true) PartitionManager.fill() moves, differently by
     release (offctl.core.storm.outcomes.out_of_range_outcome); without it KafkaUtils.fetchMessages throws
     FailedFetchException on every fetch and the partition emits nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from offctl.core.storm.citations import DO_SEEK_OURS, client_citation, storm_kafka_citation
from offctl.core.storm.releases import (
    EARLIEST_TIME,
    LATEST_TIME,
    LEGACY_RELEASES,
    FirstPoll,
    Position,
    SpoutProfile,
    StormKafkaClient,
)

# A timestamp startOffsetTime. storm-kafka asks it with KafkaUtils.getOffset (every tag, v0.9.2-incubating to v1.2.4):
# SimpleConsumer.getOffsetsBefore, ListOffsets v0 with maxNumOffsets 1; an empty answer is NO_OFFSET, -5
# (KafkaUtils.java:57, 74-87 at v1.2.4). Kafka answers v0 from its segment files, not from record timestamps or the
# time index (apache/kafka 3.9.0, read at tag 3.9.0-rc3, "Bump version to 3.9.0"; the 3.9.2 jar has the same method):
# KafkaApis.handleListOffsetRequestV0 (KafkaApis.scala:1095-1150) -> Partition.legacyFetchOffsetsForTimestamp
# (Partition.scala:1644-1660, clamped to the high watermark) -> UnifiedLog.legacyFetchOffsetsBefore
# (UnifiedLog.scala:1381-1424): an entry per segment, (max(baseOffset, logStartOffset), its log file's lastModified),
# and (logEndOffset, the broker's now) when the active segment is not empty; the last entry whose time is <= the
# timestamp, or none. offctl reads Kafka with ListOffsets v1 and up (the time index) and sees no mtime, so it names
# that rule, except for a timestamp after the capture time: the last entry, the log end's (or an empty active
# segment's, which starts there), is dated before it for a request made before it.
# Run on storm-kafka 1.2.4 and Kafka 3.9.2: tests/test_spout_oracle_time_e2e.py.
KAFKA_V0 = "UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0"


def time_after(profile: SpoutProfile, now_ms: int | None) -> bool:
    """Whether startOffsetTime is a timestamp after `now_ms` (None: not known), so that Kafka answers it with the
    log end to a spout that starts before it."""
    at = profile.start_offset_time
    return now_ms is not None and at not in (EARLIEST_TIME, LATEST_TIME) and at > now_ms


def _time_answer(profile: SpoutProfile, now_ms: int | None) -> str:
    """What Kafka answers for a timestamp startOffsetTime at or before `now_ms` (None: at any time), and what the
    release then does with no answer: -5 is below every log start, so the first fetch is out of range."""
    at = profile.start_offset_time
    if profile.storm_kafka.before_0_10:
        # v0.9.2-incubating KafkaUtils.fetchMessages retries once at startOffsetTime; v0.9.6 PartitionManager.fill
        # moves to KafkaUtils.getOffset(startOffsetTime) again (forceFromStart): -5 both times (read, not run)
        none = "every fetch is out of range, as its retry asks for startOffsetTime again: it emits nothing"
    elif not profile.out_of_range_reset:
        none = "every fetch is out of range and fails (FailedFetchException): it emits nothing"
    else:
        fill = storm_kafka_citation("PartitionManager.fill", profile.storm_kafka.tag)
        none = f"its first fetch is out of range: it jumps to the log start (EarliestTime, {fill})"
    later = "" if now_ms is not None else ", or the log end to a spout that starts before then"
    return (
        f"the offset Kafka answers for startOffsetTime {at} (ListOffsets v0 reads segment files, not record "
        f"timestamps: {KAFKA_V0}): the base offset, at least the log start, of the last log segment whose file "
        f"was last modified at or before then{later}; or, when every segment was modified later, none: the spout "
        f"goes to -5 (KafkaUtils.NO_OFFSET) and {none}"
    )


def _at_time(profile: SpoutProfile, log_start: int | None, log_end: int | None, now_ms: int | None = None) -> Position:
    if profile.start_offset_time == EARLIEST_TIME:
        return Position(log_start, "startOffsetTime, the log start")
    if profile.start_offset_time == LATEST_TIME:
        return Position(log_end, "startOffsetTime, the log end")
    if time_after(profile, now_ms):
        at = profile.start_offset_time
        return Position(
            log_end,
            f"the log end, which Kafka answers for startOffsetTime {at}, after now, to a spout "
            f"that starts before then (ListOffsets v0, {KAFKA_V0}: the log end's entry is dated "
            f"the request's time; from then on, the last segment whose file was last modified "
            f"at or before it)",
        )
    return Position(None, _time_answer(profile, now_ms))


def configured_start(
    profile: SpoutProfile, log_start: int | None, log_end: int | None, now_ms: int | None = None
) -> Position:
    """`current`: where PartitionManager starts without a usable record, and what maxOffsetBehind and the
    `committed <= 0` check compare with. v0.9.x KafkaUtils.getOffset(..., KafkaConfig): LatestTime unless
    forceFromStart; v0.10.0 on: startOffsetTime. `now_ms`: the capture time, which places a timestamp
    startOffsetTime after it (the log end) or not (not known here)."""
    if profile.storm_kafka.before_0_10 and not profile.ignore_zk_offsets:
        return Position(log_end, "the log end (LatestTime: forceFromStart is false)")
    return _at_time(profile, log_start, log_end, now_ms)


def ignored_start(
    profile: SpoutProfile, log_start: int | None, log_end: int | None, now_ms: int | None = None
) -> Position:
    """Where ignoreZkOffsets (forceFromStart) sends a record of another topology id: startOffsetTime."""
    return _at_time(profile, log_start, log_end, now_ms)


def storm_kafka_ignores(committed: int) -> bool:
    """Whether storm-kafka's PartitionManager replaces a stored offset it read with `current` (configured_start)
    whatever maxOffsetBehind says: an offset <= 0 (`|| _committedTo <= 0`, PartitionManager's constructor,
    v0.9.2-incubating to v1.2.4)."""
    return committed <= 0


def starts_alike(a: SpoutProfile, b: SpoutProfile) -> bool:
    """Whether two profiles start a storm-kafka partition without a usable record at the same place: `current`
    (configured_start) follows the release line, startOffsetTime and ignoreZkOffsets (forceFromStart) only
    (KafkaUtils.getOffset(consumer, topic, partition, config), v0.9.6 and v1.2.4)."""
    return (a.storm_kafka, a.start_offset_time, a.ignore_zk_offsets) == (
        b.storm_kafka,
        b.start_offset_time,
        b.ignore_zk_offsets,
    )


def trident_first_poll(profile: SpoutProfile, topology_id: str | None, running: frozenset[str] | None) -> str | None:
    """When a storm-kafka-client Trident spout with EARLIEST or LATEST ignores its stored state on the first
    poll of a partition (KafkaTridentSpoutEmitter.seek), or None when it uses it. 1.x (v1.2.4): on every
    start of the executor. 2.x (v2.8.8) and 3.x (unchanged at master 73da988d9): when the meta's topologyId
    is not the running topology's, that is on a new deployment (isFirstPollSinceTopologyWasDeployed)."""
    if profile.first_poll.uncommitted:
        return None
    if profile.client_major < 2:
        return "on every start of its executor (KafkaTridentSpoutEmitter.seek, v1.2.4)"
    if topology_id is None:
        return "on its next start: the state names no topologyId (KafkaTridentSpoutEmitter.seek, v2.8.8)"
    if running is not None and topology_id not in running:
        return (
            f"on the next deployment: topology {topology_id} that wrote it is not running "
            f"(KafkaTridentSpoutEmitter.seek, v2.8.8)"
        )
    return None


def trident_handed_on(profile: SpoutProfile, edge: int | None, resume: int | None) -> str:
    """What follows IGNORED_TRIDENT_STATE's sentence where storm-kafka-client 1.x's emitter may resume from the state
    after all, or "": its first poll of a partition seeks by EARLIEST/LATEST, and a poll that returns nothing hands
    the stored meta on (`currentBatch = lastBatchMeta`), so the next batch seeks its lastOffset + 1
    (KafkaTridentSpoutEmitter.emitPartitionBatch and seek, v1.2.4; run on 1.2.4 under LATEST, a quiet partition:
    tests/test_trident_releases_e2e.py). Whether a record arrives during that poll is timing: offctl cannot tell.
    2.x records where the first poll left the consumer (v2.8.3), and the log start's poll returns records."""
    if profile.client_major >= 2 or profile.first_poll is not FirstPoll.LATEST or resume is None or edge == resume:
        return ""
    return (
        f"; or, if no record reaches it during that first poll, storm-kafka-client {profile.client_release} "
        f"hands the stored meta on and the next batch resumes at {resume} (KafkaTridentSpoutEmitter, v1.2.4): "
        f"offctl cannot tell which"
    )


IGNORES = "The spout ignores this commit: "  # how Resume.why begins when the spout does not use the commit


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a storm-kafka-client spout resumes a partition that has a commit, and why, in one sentence."""

    uses_commit: bool  # False: the first-poll strategy ignores the commit
    at: Position  # the commit (+ 1 for a pre-1.1.2 line), or the log start or end the strategy seeks to
    why: str  # a whole sentence, with the Storm source it follows
    crashes: bool = False  # the spout throws before it seeks (commit_crash): `at` is where a repaired one resumes

    @property
    def reason(self) -> str:
        """Why the spout ignores the commit, as a clause to follow 'the spout will ignore this commit: '."""
        return self.why.removeprefix(IGNORES)


def first_poll_start(profile: SpoutProfile, log_start: int | None, log_end: int | None) -> Position:
    """Where a storm-kafka-client spout seeks when it does not resume from a commit (it has none, or its
    first-poll strategy ignores it): the log start for EARLIEST and UNCOMMITTED_EARLIEST, else the log end
    (KafkaSpout.doSeek, v1.2.4 and v2.8.8)."""
    edge = profile.first_poll.edge
    return Position(log_start if edge == "log start" else log_end, f"the {edge}")


# A commit whose metadata CommitMetadataManager.isOffsetCommittedByThisTopology binds with no topologyId (a JSON null
# document, or an object without topologyId or with a null one: offctl/core/storm/jackson.py, held to the real class)
# makes its `getTopologyId().equals(context.getStormId())` throw NullPointerException, which its `catch (IOException)`
# does not catch. KafkaSpout.doSeek asks it of every commit, whatever the firstPollOffsetStrategy, from
# onPartitionsAssigned, which activate() calls itself (ManualPartitionSubscription.refreshAssignment, the default
# subscription of 1.0.6-1.0.7, 1.1.2-1.1.4 and 1.2.x; TopicAssigner.assignPartitions, 2.x). The exception leaves
# activate(), and the executor's handler ends the worker (storm-core's executor.clj report-error-and-die, v1.2.4;
# storm-client's ReportErrorAndDie, v2.8.8), which Storm restarts into the same commit. Read at v1.0.6, v1.1.2,
# v1.2.4 and v2.8.8; run on storm-kafka-client 1.2.4 and 2.8.3 (tests/test_spout_oracle_e2e.py). The legacy line
# (1.0.0-1.0.5, 1.1.0-1.1.1) never reads the metadata.
COMMIT_CRASH = client_citation(
    "CommitMetadataManager.isOffsetCommittedByThisTopology", "v1.2.4", "v2.8.8", file="internal/CommitMetadataManager"
)


def commit_crash(profile: SpoutProfile, committed: int, crashes: bool) -> Resume | None:
    """Where a spout of this profile resumes a commit whose metadata binds with no topologyId (`crashes`:
    parse_commit's record says so): nowhere, it throws in activate() (COMMIT_CRASH). None where it does not throw
    (no such metadata, or the legacy line, which never reads it). `at` is the commit: where the spout resumes once the
    commit's metadata is rewritten for it, and what the lag counts from."""
    if not crashes or profile.client is StormKafkaClient.LEGACY:
        return None
    return Resume(
        True,
        Position(committed, "committed"),
        (
            "The spout throws NullPointerException in activate(), before it reads any partition: its metadata binds "
            "with no topologyId, and the check of whose commit it is calls getTopologyId().equals(...) on every "
            f"commit, whatever the firstPollOffsetStrategy ({COMMIT_CRASH}; run on 1.2.4 and 2.8.3). The exception "
            "ends the worker, which restarts into the same commit: no partition of the spout task given this one is "
            "read until the commit is rewritten."
        ),
        crashes=True,
    )


def commit_is_ours(topology_id: str | None, running: frozenset[str] | None) -> bool | None:
    """Whether CommitMetadataManager.isOffsetCommittedByThisTopology (v1.2.4, v2.8.8) holds for a commit whose
    Storm metadata names `topology_id` (None: no metadata it can read, which fails its Jackson read: False).
    None: the running topologies are unknown. (Its other branch, an AT_LEAST_ONCE OffsetManager that has
    committed, holds only inside a running spout, never on its first poll.)"""
    if not topology_id:
        return False
    return None if running is None else topology_id in running


def stale_commits_ignored(profile: SpoutProfile) -> str | None:
    """What the next deployment of a storm-kafka-client spout does with commits of a topology that no longer runs,
    where it ignores them (None: UNCOMMITTED_* resumes from them). The legacy line (KafkaSpout.doSeek, v1.1.1) has
    no metadata check: EARLIEST/LATEST ignore every commit; the current one (v1.2.4, v2.8.8) ignores a commit that
    isOffsetCommittedByThisTopology refuses, as another topology's."""
    strategy = profile.first_poll
    if strategy.uncommitted:
        return None
    if profile.client is StormKafkaClient.LEGACY:
        return (
            f"with {strategy.value} storm-kafka-client {LEGACY_RELEASES} ignores every commit, whoever wrote it, "
            f"and starts at the {strategy.edge} (KafkaSpout.doSeek, v1.1.1)"
        )
    return f"with {strategy.value} the spout ignores these commits and starts at the {strategy.edge} ({DO_SEEK_OURS})"


def client_start(
    profile: SpoutProfile,
    committed: int,
    legacy: bool,
    ours: bool | None,
    log_start: int | None = None,
    log_end: int | None = None,
) -> Resume:
    """Where a storm-kafka-client spout of this profile resumes a partition with this commit, and why: the one
    answer inspect's findings and lag, and the read-back of migrate, reset --group and restore give.

    `legacy`: the commit carries pre-1.1.2 metadata (it holds the last processed offset). `ours`:
    commit_is_ours. `log_start`, `log_end`: where EARLIEST and LATEST seek (None: unknown).
    Legacy line (KafkaSpout.doSeek, v1.1.1): EARLIEST/LATEST seek to the beginning/end whenever a commit
    exists; UNCOMMITTED_* seek to committed + 1.
    Current line (KafkaSpout.doSeek, v1.2.4 and v2.8.8; 3.x unchanged at master 73da988d9): a commit that
    isOffsetCommittedByThisTopology (its metadata names the running topology) is resumed from; any other is
    ignored by EARLIEST/LATEST and resumed from by UNCOMMITTED_*.
    """
    strategy = profile.first_poll
    edge = first_poll_start(profile, log_start, log_end)
    if profile.client is StormKafkaClient.LEGACY:
        if not strategy.uncommitted:
            return Resume(
                False,
                edge,
                (
                    f"{IGNORES}storm-kafka-client {LEGACY_RELEASES} with {strategy.value} "
                    f"ignores every commit and starts at the {strategy.edge} (KafkaSpout.doSeek, v1.1.1)."
                ),
            )
        return Resume(
            True,
            Position(committed + 1, "committed + 1"),
            (
                f"The spout resumes after this commit: storm-kafka-client {LEGACY_RELEASES} resumes at committed + 1 "
                f"= {committed + 1} (KafkaSpout.doSeek, v1.1.1)."
            ),
        )
    cite = DO_SEEK_OURS
    if ours is False and not strategy.uncommitted:
        return Resume(
            False,
            edge,
            (
                f"{IGNORES}{strategy.value} applies to a commit that is not the running "
                f"topology's, and it starts at the {strategy.edge} ({cite})."
            ),
        )
    if ours is True:
        why = f"The spout resumes from this commit: it names the running topology ({cite})."
    elif ours is None and not strategy.uncommitted:
        why = (
            f"The spout resumes from this commit only if the topology it names is the one running; otherwise "
            f"{strategy.value} starts at the {strategy.edge} ({cite})."
        )
    else:
        why = (
            f"The spout resumes from this commit: {strategy.value} resumes from any commit, whoever wrote it ({cite})."
        )
    if legacy:
        why += (
            f" This commit holds the last offset a {LEGACY_RELEASES} spout processed, so offset {committed} "
            f"is processed again."
        )
    return Resume(True, Position(committed, "committed"), why)
