"""What a spout does with what is stored, release by release. Pure: no server, no clock.

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
     release (out_of_range_outcome below); without it KafkaUtils.fetchMessages throws FailedFetchException on every
     fetch and the partition emits nothing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

LONG_MAX = 2**63 - 1
EARLIEST_TIME, LATEST_TIME = -2, -1  # kafka.api.OffsetRequest.EarliestTime() / LatestTime()


def release(text: str, library: str = "storm-kafka-client", example: str = "3.1.0") -> tuple[int, ...]:
    """A release as (major, minor[, patch]): "3.1" is (3, 1), "3.1.0" is (3, 1, 0), "0.9.2-incubating" is
    (0, 9, 2). Tuples order as releases do, and a rule can tell 3.0 from 3.1."""
    m = re.fullmatch(r"(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?(?:[.-][\w.-]{0,40})?", text.strip())
    if not m:
        raise ValueError(f"{text[:40]!r} is not a {library} release like {example}")
    return (int(m[1]), int(m[2])) if m[3] is None else (int(m[1]), int(m[2]), int(m[3]))


def _release(text: str, library: str, example: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a release number such as 1.2.4, 0.9.2-incubating or 1.0 (patch 0)."""
    major, minor, *patch = release(text, library, example)
    return major, minor, patch[0] if patch else 0


# Each line's releases, and the tag its rules are read from (StormKafka.releases, .tag).
_RELEASES = {
    "0.9.0": "0.9.0.1-0.9.2",
    "0.9.3": "0.9.3-0.9.7",
    "0.10": "0.10.0-0.10.2",
    "1.0": "1.0.0-1.0.7",
    "1.1": "1.1.0-1.2.4",
}
_TAGS = {"0.9.0": "v0.9.2-incubating", "0.9.3": "v0.9.6", "0.10": "v0.10.2", "1.0": "v1.0.7", "1.1": "v1.2.4"}


class StormKafka(str, Enum):
    """storm-kafka release lines whose start-up and out-of-range rules differ."""

    V0_9_0 = "0.9.0"  # 0.9.0.1 to 0.9.2-incubating
    V0_9_3 = "0.9.3"  # 0.9.3 to 0.9.7
    V0_10 = "0.10"  # 0.10.0 to 0.10.2
    V1_0 = "1.0"  # 1.0.0 to 1.0.7
    V1_X = "1.1"  # 1.1.0 to 1.2.4, the latest storm-kafka

    @property
    def releases(self) -> str:
        return _RELEASES[self._value_]

    @property
    def tag(self) -> str:
        """The release tag whose source the rules of this line are read from."""
        return _TAGS[self._value_]  # `_value_`, not `value`: Enum's descriptor is slow, and this is read per finding

    @property
    def before_0_10(self) -> bool:
        return self in (StormKafka.V0_9_0, StormKafka.V0_9_3)

    @property
    def names_a_uuid(self) -> bool:
        """Whether the line's spout writes and compares a random id, not the storm id: KafkaSpout._uuid
        (`UUID.randomUUID()`, a field set when the topology is built, so one per submission; KafkaSpout.java:54 at
        v0.9.2-incubating, v0.9.7 and v0.10.2), where 1.0.0 on take context.getStormId() (KafkaSpout.java:62 at
        v1.0.0). Run on 0.9.2-incubating, 0.9.7 and 0.10.2 (tests/test_storm_kafka_releases_e2e.py): with
        forceFromStart/ignoreZkOffsets a record naming the running storm id is ignored."""
        return self.before_0_10 or self is StormKafka.V0_10

    @property
    def ignore_setting(self) -> str:
        """The setting that makes the spout ignore another topology's stored offsets: KafkaConfig.forceFromStart
        before 0.10 (KafkaConfig.java, v0.9.6), KafkaConfig.ignoreZkOffsets from 0.10.0 on (v0.10.0 to v1.2.4)."""
        return "forceFromStart" if self.before_0_10 else "ignoreZkOffsets"

    @classmethod
    def of_version(cls, text: str) -> StormKafka:
        """The line of a release number: 0.9.2, 0.9.6, 0.10.1, 1.0.3, 1.2.4 (or a line name itself)."""
        major, minor, patch = _release(text, "storm-kafka", "1.2.4")
        if (major, minor) == (0, 9):
            return cls.V0_9_0 if patch <= 2 else cls.V0_9_3
        if (major, minor) == (0, 10):
            return cls.V0_10
        if (major, minor) == (1, 0):
            return cls.V1_0
        if major == 1 and minor in (1, 2):
            return cls.V1_X
        raise ValueError(f"storm-kafka {text} does not exist: its releases are 0.9.x to 1.2.x")


class FirstPoll(str, Enum):
    """storm-kafka-client's FirstPollOffsetStrategy (default UNCOMMITTED_EARLIEST in every release)."""

    EARLIEST = "EARLIEST"
    LATEST = "LATEST"
    UNCOMMITTED_EARLIEST = "UNCOMMITTED_EARLIEST"
    UNCOMMITTED_LATEST = "UNCOMMITTED_LATEST"

    @property
    def uncommitted(self) -> bool:
        return self in (FirstPoll.UNCOMMITTED_EARLIEST, FirstPoll.UNCOMMITTED_LATEST)

    @property
    def edge(self) -> str:
        return "log start" if self.from_log_start else "log end"

    @property
    def from_log_start(self) -> bool:
        """Whether the strategy starts a partition without a commit at the log start: EARLIEST and
        UNCOMMITTED_EARLIEST seekToBeginning, LATEST and UNCOMMITTED_LATEST seekToEnd (KafkaSpout.doSeek, v1.2.4 and
        v2.8.8; the Trident emitter likewise: KafkaTridentSpoutEmitter.seek, v2.8.8)."""
        return self in (FirstPoll.EARLIEST, FirstPoll.UNCOMMITTED_EARLIEST)


# The newest storm-kafka-client release offctl knows, the --storm-kafka-client-release default.
CLIENT_RELEASE_DEFAULT = "3.1.0"
STORM_KAFKA_RELEASE_DEFAULT = "1.2.4"  # --storm-kafka-release's default: the last storm-kafka release


class StormKafkaClient(str, Enum):
    """storm-kafka-client lines: before CommitMetadataManager (commits hold the last processed offset and
    the spout seeks to committed + 1), and from it on (commits hold the next offset, metadata is JSON).

    3.0.x and 3.1.x follow the 2.x rules: external/storm-kafka-client/src/main at master 73da988d9
    (3.0.0-SNAPSHOT, 2026-07-01, the line 3.0.0 was released from) differs from v2.8.8 in one comment of
    KafkaSpout.java. The v3.0.0 and v3.1.0 tags themselves were not in the stored copy read (docs/storm.md)."""

    LEGACY = "legacy"  # 1.0.0-1.0.5, 1.1.0-1.1.1: KafkaSpout.doSeek, KafkaSpoutMessageId.getMetadata
    CURRENT = "current"  # 1.0.6+, 1.1.2+, 1.2.x, 2.x, 3.0.x, 3.1.x: internal/CommitMetadataManager.java

    @classmethod
    def of_version(cls, text: str) -> StormKafkaClient:
        major, minor, patch = _release(text, "storm-kafka-client", CLIENT_RELEASE_DEFAULT)
        if major not in (1, 2) and (major, minor) not in ((3, 0), (3, 1)):
            raise ValueError(f"storm-kafka-client {text} is not a release offctl knows: 1.0.0 to 2.x, 3.0.x and 3.1.x")
        if (major, minor) == (1, 0) and patch <= 5 or (major, minor) == (1, 1) and patch <= 1:
            return cls.LEGACY
        return cls.CURRENT

    @staticmethod
    def major_of(text: str) -> int:
        return _release(text, "storm-kafka-client", CLIENT_RELEASE_DEFAULT)[0]


class Isolation(str, Enum):
    """The Kafka consumer's isolation.level a storm-kafka-client spout is given in its Kafka properties
    (KafkaSpoutConfig.Builder.setProp): Storm neither sets nor reads it, so the consumer has kafka-clients'
    default, read_uncommitted, unless the topology sets it (reads_committed says which spouts it binds)."""

    READ_UNCOMMITTED = "read_uncommitted"
    READ_COMMITTED = "read_committed"


class Guarantee(str, Enum):
    """storm-kafka-client's KafkaSpoutConfig.ProcessingGuarantee: in 1.0.6+, 1.1.2+, 1.2.x, 2.x and 3.x
    (KafkaSpoutConfig.java, v1.0.6, v1.1.2 to v2.8.8, master 73da988d9), AT_LEAST_ONCE by default
    (DEFAULT_PROCESSING_GUARANTEE). No release read has a NONE. The releases before 1.0.6 and 1.1.2 have no
    such setting and behave as AT_LEAST_ONCE (KafkaSpout, v1.1.1)."""

    AT_LEAST_ONCE = "AT_LEAST_ONCE"
    AT_MOST_ONCE = "AT_MOST_ONCE"
    NO_GUARANTEE = "NO_GUARANTEE"


GUARANTEE_RELEASES = "1.0.6-1.0.7, 1.1.2+, 1.2.x, 2.x, 3.0.x and 3.1.x"


def guarantees_of(client: StormKafkaClient) -> tuple[Guarantee, ...]:
    """The ProcessingGuarantees a storm-kafka-client line can run under: every one from 1.0.6 and 1.1.2 on
    (KafkaSpoutConfig.ProcessingGuarantee, v1.0.6, v1.1.2 to v2.8.8); AT_LEAST_ONCE only before, which has no such
    setting and commits acked offsets only (KafkaSpout.java and KafkaSpoutConfig.java, v1.0.5 and v1.1.1)."""
    return (Guarantee.AT_LEAST_ONCE,) if client is StormKafkaClient.LEGACY else tuple(Guarantee)


def default_commit_period_ms(release: str) -> int:
    """KafkaSpoutConfig.DEFAULT_OFFSET_COMMIT_PERIOD_MS: 15000 in 1.0.0-1.0.2, 30000 from 1.0.3 on
    (KafkaSpoutConfig.java, v1.0.0 to v1.0.2; v1.0.3 to v2.8.8 and master 73da988d9)."""
    major, minor, patch = _release(release, "storm-kafka-client", CLIENT_RELEASE_DEFAULT)
    return 15_000 if (major, minor) == (1, 0) and patch <= 2 else 30_000


@dataclass(frozen=True)
class SpoutProfile:
    """What the user says of the spouts read (defaults: the latest releases, as configured by default)."""

    storm_kafka: StormKafka = StormKafka.V1_X
    start_offset_time: int = EARLIEST_TIME  # -2 earliest, -1 latest, else epoch ms
    ignore_zk_offsets: bool = False  # forceFromStart before 0.10
    max_offset_behind: int | None = None  # None: the release's default
    out_of_range_reset: bool = True  # useStartOffsetTimeIfOffsetOutOfRange
    client: StormKafkaClient = StormKafkaClient.CURRENT
    first_poll: FirstPoll = FirstPoll.UNCOMMITTED_EARLIEST
    client_major: int = 3  # storm-kafka-client 1.x Trident emitters treat EARLIEST/LATEST apart from 2.x and 3.x
    guarantee: Guarantee = Guarantee.AT_LEAST_ONCE
    commit_period_ms: int = 30_000  # offset.commit.period.ms (default_commit_period_ms of the release)
    client_release: str = CLIENT_RELEASE_DEFAULT  # --storm-kafka-client-release, as given (client is its line)
    isolation: Isolation = Isolation.READ_UNCOMMITTED  # the new spouts' consumer isolation.level

    @property
    def client_version(self) -> tuple[int, ...]:
        """--storm-kafka-client-release as (major, minor[, patch]): 3.0 and 3.1 stay apart (`client` is its line)."""
        return release(self.client_release)

    @property
    def effective_max_offset_behind(self) -> int:
        """maxOffsetBehind: 100000 by default in 0.9.0-0.9.2, Long.MAX_VALUE from 0.9.3 (KafkaConfig.java)."""
        if self.max_offset_behind is not None:
            return self.max_offset_behind
        return 100_000 if self.storm_kafka is StormKafka.V0_9_0 else LONG_MAX

    def start_time_label(self) -> str:
        if self.start_offset_time == EARLIEST_TIME:
            return "startOffsetTime (earliest)"
        if self.start_offset_time == LATEST_TIME:
            return "startOffsetTime (latest)"
        return f"startOffsetTime ({self.start_offset_time})"

    def describe(self) -> str:
        """One line for notes and docs: the settings the findings assume."""
        force = self.storm_kafka.ignore_setting
        mob = self.effective_max_offset_behind
        return (
            f"storm-kafka {self.storm_kafka.releases}, {self.start_time_label()}, {force}="
            f"{str(self.ignore_zk_offsets).lower()}, maxOffsetBehind={'Long.MAX_VALUE' if mob == LONG_MAX else mob}, "
            f"useStartOffsetTimeIfOffsetOutOfRange={str(self.out_of_range_reset).lower()}; storm-kafka-client "
            f"{self._client_named()}, "
            f"firstPollOffsetStrategy={self.first_poll.value}, processingGuarantee={self.guarantee.value}, "
            f"offset.commit.period.ms={self.commit_period_ms}, isolation.level={self.isolation.value}"
        )

    def _client_named(self) -> str:
        """The storm-kafka-client release given, or its line's releases where the profile names only a line."""
        if StormKafkaClient.of_version(self.client_release) is self.client:
            return self.client_release
        return LEGACY_RELEASES if self.client is StormKafkaClient.LEGACY else "1.0.6-1.0.7, 1.1.2+, 2.x, 3.x"

    @property
    def kafka_commit_period_ms(self) -> int:
        """How long a storm-kafka-client group's commit may stand still while the spout runs: the commit
        timer's period under AT_LEAST_ONCE and NO_GUARANTEE; 0 under AT_MOST_ONCE, which commits after every
        poll and has no commit timer (KafkaSpout.open and pollKafkaBroker, v1.2.4 and v2.8.8)."""
        return 0 if self.guarantee is Guarantee.AT_MOST_ONCE else self.commit_period_ms


@dataclass(frozen=True, slots=True)
class Position:
    """An offset the spout starts from, as offctl can name it: `offset` None when it cannot be computed
    here (a timestamp startOffsetTime: Kafka answers it from its segment files' mtimes, _time_answer)."""

    offset: int | None
    label: str  # "the log end", "startOffsetTime (earliest)", ...

    def text(self) -> str:
        return f"{self.label} ({self.offset})" if self.offset is not None else self.label


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


# --- what a release does with a stored position outside the log: one structured answer --------------------------

STORM_KAFKA_DIR = {
    False: "external/storm-kafka/src/jvm/storm/kafka/",  # before 1.0
    True: "external/storm-kafka/src/jvm/org/apache/storm/kafka/",
}  # 1.0 on
CLIENT_DIR = "external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/"


@dataclass(frozen=True, slots=True)
class Citation:
    """The Storm source a behaviour follows: a class (and member) of a file of apache/storm, at release tags."""

    member: str  # "PartitionManager.fill", "KafkaSpoutConfig"
    file: str  # the file's path in apache/storm at the first tag
    tags: tuple[str, ...]  # the release tags read

    def __str__(self) -> str:
        return f"{self.member}, {self.tag_text}"

    @property
    def tag_text(self) -> str:
        return " and ".join(self.tags)


@functools.cache  # one immutable Citation per (member, tag, file): a fleet cites the same few per partition
def storm_kafka_citation(member: str, tag: str, file: str | None = None) -> Citation:
    """A file of storm-kafka at `tag`: under storm/kafka/ before 1.0, org/apache/storm/kafka/ from 1.0 on."""
    name = file or member.split(".")[0]
    return Citation(member, f"{STORM_KAFKA_DIR[not tag.startswith('v0.')]}{name}.java", (tag,))


@functools.cache
def client_citation(member: str, *tags: str, file: str | None = None) -> Citation:
    """A file of storm-kafka-client's spout package at `tags`."""
    return Citation(member, f"{CLIENT_DIR}{file or member.split('.')[0]}.java", tags)


# The Storm source the messages outside this module cite, named once (each read at its tags in apache/storm):
# where a storm-kafka-client spout seeks on its first poll of a partition, and whether a commit is its topology's
DO_SEEK = client_citation("KafkaSpout.doSeek", "v2.8.8")
DO_SEEK_OURS = client_citation(
    "KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology", "v2.8.8", file="KafkaSpout"
)
DO_SEEK_BOTH_LINES = client_citation("KafkaSpout.doSeek", "v1.2.4", "v2.8.8")
# when AT_LEAST_ONCE commits: only partitions with newly acked offsets
COMMIT_ACKED = client_citation("KafkaSpout.commitOffsetsForAckedTuples", "v1.2.4", "v2.8.8", file="KafkaSpout")
# where a storm-kafka-client Trident spout starts a partition without a state
TRIDENT_CLIENT_SEEK = client_citation(
    "KafkaTridentSpoutEmitter.seek", "v2.8.8", file="trident/KafkaTridentSpoutEmitter"
)
# where storm-kafka starts a partition without a record (startOffsetTime from 0.10.0 on, 0.9.x the log end without
# forceFromStart), its spout and its Trident emitter
NO_RECORD = Citation(
    "the PartitionManager constructor", f"{STORM_KAFKA_DIR[False]}PartitionManager.java", ("v0.9.6", "v1.2.4")
)
NO_TRIDENT_STATE = Citation(
    "TridentKafkaEmitter.doEmitNewPartitionBatch",
    f"{STORM_KAFKA_DIR[False]}trident/TridentKafkaEmitter.java",
    ("v0.9.6", "v1.2.4"),
)


class Library(str, Enum):
    """Which code reads the stored position: storm-kafka's spout (PartitionManager), storm-kafka's Trident emitter
    (TridentKafkaEmitter), or storm-kafka-client (its KafkaConsumer, spout or Trident)."""

    STORM_KAFKA = "storm-kafka"
    STORM_KAFKA_TRIDENT = "storm-kafka Trident"
    STORM_KAFKA_CLIENT = "storm-kafka-client"


def reads_committed(profile: SpoutProfile, library: Library) -> bool:
    """Whether the spout that reads with `library` stops at the last stable offset (KIP-98), so its lag counts to
    there: a storm-kafka-client spout (or Trident emitter) whose consumer is given isolation.level=read_committed.
    storm-kafka-client builds its KafkaConsumer from the topology's Kafka properties (KafkaSpoutConfig's kafkaProps,
    v1.2.4 to v2.8.8), and the Java consumer then reads committed records only, up to the last stable offset.
    storm-kafka's spout and Trident emitter fetch with the old SimpleConsumer (KafkaUtils.fetchMessages, v0.9.2 to
    v1.2.4), whose Fetch requests (v0 to v3) have no isolation level: Kafka answers them read_uncommitted, up to the
    high watermark, aborted records included."""
    return library is Library.STORM_KAFKA_CLIENT and profile.isolation is Isolation.READ_COMMITTED


class Lands(str, Enum):
    """Where a spout goes when it does not resume from its stored position."""

    LOG_START = "log start"
    LOG_END = "log end"
    TIME = "time"  # the offset Kafka answers for a timestamp startOffsetTime (from segment mtimes: _time_answer)
    FAILS = "fails fetching"  # every fetch fails: the partition emits nothing (or every batch fails)
    WAITS = "waits"  # emits nothing until the log end reaches the stored offset
    CRASHES = "crashes"  # the spout throws before it emits: the worker dies, and restarts into the same position


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a release does with a stored position, decided once per profile, library and case: where the spout
    lands, the Storm source that says so, and the sentence (`say(position, log_start, log_end)`: a clause to
    follow a semicolon; the log offsets None where not known)."""

    lands: Lands
    citation: Citation
    say: Callable[[int, int | None, int | None], str] = field(compare=False, repr=False)

    def sentence(self, position: int, log_start: int | None, log_end: int | None) -> str:
        return self.say(position, log_start, log_end)


class Resumes(str, Enum):
    """Where the spout fetches a partition first, as the JSON's `resumes` names it (docs/contract.md)."""

    STORED = "stored"  # the stored offset
    STORED_PLUS_1 = "stored+1"  # the stored offset + 1 (storm-kafka-client 1.0.0-1.0.5, 1.1.0-1.1.1)
    LOG_START = "log-start"
    LOG_END = "log-end"
    TIME = "time"  # the offset Kafka answers for a timestamp startOffsetTime (from segment mtimes: _time_answer)
    WAITS = "waits-until-log-end-reaches"  # fetches the stored offset, past the log end: nothing until it is reached
    FETCH_FAILS = "fetch-fails"  # every fetch fails: nothing is emitted
    CRASHES = "crashes"  # the spout's start-up (or its Trident emitter) throws: the worker dies, and restarts into it


_RESUMES = {
    Lands.LOG_START: Resumes.LOG_START,
    Lands.LOG_END: Resumes.LOG_END,
    Lands.TIME: Resumes.TIME,
    Lands.WAITS: Resumes.WAITS,
    Lands.FAILS: Resumes.FETCH_FAILS,
    Lands.CRASHES: Resumes.CRASHES,
}


@dataclass(frozen=True, slots=True)
class Resumption:
    """Where the spout will fetch a partition first (`at`: None where it cannot be told, or nothing is fetched),
    what kind of place that is, and the Storm source that says so."""

    at: int | None
    kind: Resumes
    citation: Citation

    @classmethod
    def landing(
        cls,
        lands: Lands,
        citation: Citation,
        position: int | None,
        log_start: int | None,
        log_end: int | None,
        at: int | None = None,
    ) -> Resumption:
        """Where an Outcome's landing puts a spout whose stored position is `position`: the log start or end, the
        stored position it waits at, or none (a time, failing fetches). `at`: the offset where already known."""
        kind = _RESUMES[lands]
        if at is None:
            at = {Resumes.LOG_START: log_start, Resumes.LOG_END: log_end, Resumes.WAITS: position}.get(kind)
        return cls(at, kind, citation)

    def citation_text(self) -> str:
        """`Member (path at tag[ and tag])`, as the JSON's `resumes_citation` gives it."""
        return f"{self.citation.member} ({self.citation.file} at {self.citation.tag_text})"


def time_lands(profile: SpoutProfile, now_ms: int | None = None) -> Lands:
    """Where startOffsetTime puts the spout (_at_time): a timestamp after `now_ms` at the log end."""
    if time_after(profile, now_ms):
        return Lands.LOG_END
    return {EARLIEST_TIME: Lands.LOG_START, LATEST_TIME: Lands.LOG_END}.get(profile.start_offset_time, Lands.TIME)


def _configured_lands(profile: SpoutProfile, now_ms: int | None = None) -> Lands:
    """Where `current` puts the spout (configured_start)."""
    if profile.storm_kafka.before_0_10 and not profile.ignore_zk_offsets:
        return Lands.LOG_END
    return time_lands(profile, now_ms)


def _stuck(committed: int, log_end: int | None) -> str:
    return (
        f"the spout emits nothing from this partition until the log end reaches {committed}; the "
        f"{committed - log_end} messages that arrive before then are never emitted"
    )


def out_of_range_outcome(profile: SpoutProfile, library: Library, side: str, trident: bool = False) -> Outcome:
    """What the spout does with a stored position outside the log on `side` ("below" the log start, "above" the
    log end), by its library and release. storm-kafka: how PartitionManager.fill() leaves the offset with
    useStartOffsetTimeIfOffsetOutOfRange (without it KafkaUtils.fetchMessages throws FailedFetchException on every
    fetch). WAITS: _emittedToOffset does not move, every fetch is out of range again, and the partition emits
    nothing until the log end reaches the offset."""
    if library is Library.STORM_KAFKA_TRIDENT:
        return _trident_out_of_range(profile)
    if library is Library.STORM_KAFKA_CLIENT:
        return _client_trident_out_of_range(profile) if trident else _client_out_of_range(profile, side)
    line = profile.storm_kafka
    tag = line.tag
    fill = storm_kafka_citation("PartitionManager.fill", tag)
    if not profile.out_of_range_reset:
        fetch = storm_kafka_citation("KafkaUtils.fetchMessages", tag)
        stays = (
            "emits nothing until the log end reaches it"
            if side == "above"
            else "never emits from it again: those messages are gone"
        )
        spout = storm_kafka_citation("KafkaSpout.nextTuple", tag)
        text = (
            f"without useStartOffsetTimeIfOffsetOutOfRange every fetch fails (FailedFetchException, {fetch}) "
            f"and the partition {stays}; KafkaSpout.nextTuple retries the failing partition without moving on to "
            f"the next (its _currPartitionIndex stays), so once the task reaches it, none of its partitions emits "
            f"again ({spout}; run on storm-kafka 1.2.4)"
        )
        return Outcome(Lands.FAILS, fetch, lambda position, start, end: text)
    if line is StormKafka.V0_9_0:
        # KafkaUtils.fetchMessages retries at startOffsetTime; fill() then skips messages below the stored offset.
        if side == "above":
            return Outcome(
                Lands.WAITS,
                fill,
                lambda position, start, end: (
                    f"{_stuck(position, end)} (the retry at startOffsetTime returns only offsets below {position}, "
                    f"which fill skips; {fill})"
                ),
            )
        fetch = storm_kafka_citation("KafkaUtils.fetchMessages", tag)
        return Outcome(
            time_lands(profile),
            fetch,
            lambda position, start, end: f"the spout refetches from {_at_time(profile, start, end).text()} ({fetch})",
        )
    if line is StormKafka.V0_9_3:
        # UpdateOffsetException: _emittedToOffset = KafkaUtils.getOffset(..., spoutConfig), the configured start
        return Outcome(
            _configured_lands(profile),
            fill,
            lambda position, start, end: f"the spout jumps to {configured_start(profile, start, end).text()} ({fill})",
        )
    if line is StormKafka.V0_10 or side == "below":
        return Outcome(
            Lands.LOG_START,
            fill,
            lambda position, start, end: (
                f"the spout jumps to the log start ({f'{start}; ' if start is not None else ''}EarliestTime, {fill})"
            ),
        )
    # 1.0.x moves to EarliestTime, 1.1+ to LatestTime: both below the stored offset, and fill() only moves
    # _emittedToOffset forward (`if (offset > _emittedToOffset)`).
    return Outcome(Lands.WAITS, fill, lambda position, start, end: f"{_stuck(position, end)} ({fill})")


def trident_out_of_range_throws(profile: SpoutProfile, library: Library) -> bool:
    """Whether a Trident state outside the log makes the emitter throw, which stops the whole state (TRIDENT_BATCH):
    storm-kafka 0.9.3 to 0.9.7 with useStartOffsetTimeIfOffsetOutOfRange (UpdateOffsetException; read from the
    source, TridentKafkaEmitter at v0.9.6). Without it the fetch fails and the batch is empty, which moves nothing
    else."""
    return (
        library is Library.STORM_KAFKA_TRIDENT
        and profile.out_of_range_reset
        and profile.storm_kafka is StormKafka.V0_9_3
    )


def _trident_out_of_range(profile: SpoutProfile) -> Outcome:
    """What TridentKafkaEmitter does with a state outside the log (doEmitNewPartitionBatch, per line)."""
    line = profile.storm_kafka
    cite = storm_kafka_citation("TridentKafkaEmitter", line.tag, "trident/TridentKafkaEmitter")
    if not profile.out_of_range_reset:
        text = (
            f"without useStartOffsetTimeIfOffsetOutOfRange every fetch fails (FailedFetchException) and each "
            f"batch of this partition is empty: the spout never moves past it ({cite})"
        )
        lands = Lands.FAILS
    elif line is StormKafka.V0_9_0:
        text = f"KafkaUtils.fetchMessages refetches from startOffsetTime ({cite})"
        lands = time_lands(profile)
    elif line is StormKafka.V0_9_3:
        text = (
            f"KafkaUtils.fetchMessages throws UpdateOffsetException, which the emitter does not catch ({cite}), "
            f"{TRIDENT_STUCK}"
        )
        lands = Lands.FAILS
    else:
        text = f"the emitter moves to the log start (EarliestTime, on TopicOffsetOutOfRangeException; {cite})"
        lands = Lands.LOG_START
    return Outcome(lands, cite, lambda position, start, end: text)


# STORM-2844's check: under AT_LEAST_ONCE, KafkaSpout.emitOrRetryTuple reads the partition's commit before it emits a
# record and throws IllegalStateException ("Attempting to emit a message that has already been committed") when the
# commit is above the record and isOffsetCommittedByThisTopology; nothing catches it, so the worker dies. It is in
# 1.0.6-1.0.7, 1.1.2-1.1.3 and 1.2.0-1.2.2 (read at each tag); STORM-3102 removed it in 1.1.4 and 1.2.3, and no 2.x
# has it. A commit above the log end is where it fires: auto.offset.reset 'earliest' sends the consumer to the log
# start, below the commit. Run on storm-kafka-client 1.0.6 and 1.1.3 (tests/test_storm_kafka_client_releases_e2e.py):
# nextTuple threw before the first emit.
EMIT_CHECK = client_citation("KafkaSpout.emitOrRetryTuple", "v1.0.6", "v1.1.3", "v1.2.2", file="KafkaSpout")


def emit_check(profile: SpoutProfile) -> bool:
    """Whether the profile's storm-kafka-client release has STORM-2844's check (EMIT_CHECK) and it applies:
    AT_LEAST_ONCE on 1.0.6-1.0.7, 1.1.2-1.1.3 or 1.2.0-1.2.2."""
    if profile.client is not StormKafkaClient.CURRENT or profile.guarantee is not Guarantee.AT_LEAST_ONCE:
        return False
    version = profile.client_version
    return (1, 0, 6) <= version < (1, 1) or (1, 1, 2) <= version < (1, 1, 4) or (1, 2) <= version < (1, 2, 3)


def committed_above_outcome(profile: SpoutProfile, ours: bool | None) -> Outcome | None:
    """Where a storm-kafka-client commit above the log end sends a spout whose release has STORM-2844's check
    (emit_check): a commit that is the running topology's (`ours`: commit_is_ours) makes nextTuple throw before the
    first emit; one that is not, or that offctl cannot tell (None), re-reads from the log start, said with the
    condition. None where the check does not apply (_client_out_of_range answers)."""
    if not emit_check(profile) or ours is False:
        return None
    throws = (
        f"nextTuple throws IllegalStateException before it emits anything (the record at the log start is "
        f"below this topology's commit: STORM-2844's check, {EMIT_CHECK}; run on storm-kafka-client 1.0.6 and "
        f"1.1.3): the exception ends the worker, which restarts into the same commit, so the spout never emits "
        f"from this partition's task until the commit is moved (offctl reset)"
    )
    if ours:
        return Outcome(
            Lands.CRASHES,
            EMIT_CHECK,
            lambda position, start, end: (
                f"the consumer moves to the log start (auto.offset.reset 'earliest'), but {throws}"
            ),
        )
    moved = _client_out_of_range(profile, "above")
    return Outcome(
        moved.lands,
        moved.citation,
        lambda position, start, end: (
            f"{moved.sentence(position, start, end)}; if this commit is the running topology's, {throws}"
        ),
    )


def _client_out_of_range(profile: SpoutProfile, side: str = "below") -> Outcome:
    """Where an out-of-range commit sends a storm-kafka-client consumer: its auto.offset.reset, which
    KafkaSpoutConfig sets to 'earliest' under AT_LEAST_ONCE (v1.2.4, v2.8.8) and not at all before 1.0.6/1.1.2.
    Above the log end under AT_LEAST_ONCE the spout's OffsetManager starts at the commit (KafkaSpout's
    onPartitionsAssigned: new OffsetManager(tp, fetchOffset)) while the consumer re-reads from the log start, so the
    first commit of what it acks throws (OffsetManager.findNextCommitOffset: "is below the current
    nextCommitOffset"), run on storm-kafka-client 1.2.4 and 2.8.3."""
    if profile.client is StormKafkaClient.LEGACY:
        cite = client_citation("KafkaSpoutConfig", "v1.1.1")
        text = (
            "the consumer moves where its auto.offset.reset says, which the spout does not set: Kafka's default "
            f"is 'latest' (the log end) unless the topology sets it ({cite})"
        )
        return Outcome(Lands.LOG_END, cite, lambda position, start, end: text)
    cite = client_citation("KafkaSpoutConfig", "v1.2.4", "v2.8.8")
    if profile.guarantee is Guarantee.AT_LEAST_ONCE:
        text = (
            "the consumer moves where its auto.offset.reset says: 'earliest' (the log start), which "
            f"KafkaSpoutConfig sets under AT_LEAST_ONCE unless the topology sets another ({cite})"
        )
        if side == "above":
            manager = client_citation(
                "OffsetManager.findNextCommitOffset", "v1.2.4", "v2.8.8", file="internal/OffsetManager"
            )
            text += (
                f"; but the spout counts its commits from the stored offset, so its first commit after acking "
                f"a message from the log start throws IllegalStateException (the offset is below the current "
                f"nextCommitOffset, {manager}; run on storm-kafka-client 1.2.4 and 2.8.3). Thrown out of nextTuple "
                f"at the first commit period, it ends the worker, which restarts into the same commit (read from "
                f"the source): the commit never moves, and the messages from the log start are emitted again "
                f"on every restart"
            )
        return Outcome(Lands.LOG_START, cite, lambda position, start, end: text)
    text = (
        f"the consumer moves where its auto.offset.reset says: Kafka's default is 'latest' (the log end) "
        f"unless the topology sets it, which {profile.guarantee.value} does not ({cite})"
    )
    return Outcome(Lands.LOG_END, cite, lambda position, start, end: text)


# A Trident state the emitter throws on fails the whole batch, so no partition of the spout's state moves, not only
# its own: OpaquePartitionedTridentSpoutExecutor.emitBatch (storm-core v1.2.4; storm-client v2.8.3) emits every
# partition of the batch in one loop and writes their metas only at the batch's commit; storm-kafka-client's
# KafkaTridentSpoutEmitter.emitBatchNew (v2.8.3) seeks every partition before its one poll, so it emits nothing at
# all. The exception leaves the executor (TridentBoltExecutor catches only FailedException), which ends the worker:
# read from the source. Run on storm-kafka 1.2.4 and storm-kafka-client 2.8.3 (tests/test_trident_oracle_e2e.py).
TRIDENT_BATCH = Citation(
    "OpaquePartitionedTridentSpoutExecutor.emitBatch",
    "storm-core/src/jvm/org/apache/storm/trident/spout/OpaquePartitionedTridentSpoutExecutor.java",
    ("v1.2.4", "v2.8.3"),
)
# Where a restarted Trident spout starts each partition: the opaque executor removes the state of the txid it emits
# (the coordinator's currtx) and resumes after the highest other one (TRIDENT_BATCH); the transactional one replays
# the batch stored at or past currtx and starts anew only where none is (storm.newest_txid, storm.stored_from).
TRIDENT_TRANSACTIONAL = Citation(
    "PartitionedTridentSpoutExecutor.Emitter.emitBatch",
    "storm-core/src/jvm/org/apache/storm/trident/spout/PartitionedTridentSpoutExecutor.java",
    ("v1.2.4", "v2.8.3"),
)
TRIDENT_STUCK = (
    "so every batch of the spout fails: the exception ends the worker, the next worker's try fails "
    "the same way, and no partition of this Trident state moves, this one or any other, until the state "
    f"is fixed ({TRIDENT_BATCH})"
)


# storm-client 2.6.0 and later read Trident state with json-smart (TransactionalState.getData: the shaded
# net.minidev JSONValue.parseWithException, v2.6.0 to v2.8.8; json-simple in storm-core 1.x and storm-client 2.0-2.5).
# json-smart's permissive mode reads much json-simple refuses: unquoted keys (a usable meta), a bare word (a String:
# ClassCastException, the whole state stuck), trailing text, NaN, empty data: run on storm-kafka-client 2.8.3
# (tests/test_trident_oracle_e2e.py). offctl parses as json-simple does; on data json-simple refuses, from 2.6 on it
# cannot tell what the spout does.
JSON_SMART = Citation(
    "TransactionalState.getData",
    "storm-client/src/jvm/org/apache/storm/trident/topology/state/TransactionalState.java",
    ("v2.6.0", "v2.8.8"),
)


# storm-kafka-client 1.1.2 to 1.2.x's Trident meta: fromMap reads a tp map besides the offsets, and no topologyId
CLIENT_1X_META = client_citation(
    "KafkaTridentSpoutBatchMetadata.fromMap", "v1.2.4", file="trident/KafkaTridentSpoutBatchMetadata"
)


def trident_state_read_by_json_smart(profile: SpoutProfile) -> bool:
    """Whether storm-kafka-client's Trident state is read by json-smart (storm-client 2.6.0 on, the Storm release
    that goes with --storm-kafka-client-release), not json-simple (JSON_SMART)."""
    return profile.client_version[:2] >= (2, 6)


def metadata_number_limit(profile: SpoutProfile) -> int | None:
    """The longest number Jackson reads in commit metadata under the spout's release (jackson.MAX_NUMBER_LENGTH):
    storm 2.6.0 and later ship Jackson 2.15.2 or later (pom.xml jackson.version at v2.6.0 to v2.8.3, 2.20.0 at
    v2.8.3, held to it: tests/test_metadata_differential.py), whose StreamReadConstraints refuse one over 1,000
    characters; v2.5.0 and before ship 2.9-2.10, which have no limit (1.2.4's 2.9.4, held to it)."""
    return 1000 if profile.client_version[:2] >= (2, 6) else None


def stuck_trident_state() -> Resumption:
    """Where every partition of a Trident state resumes when the emitter throws on one partition's meta: nowhere
    (TRIDENT_BATCH): the exception ends the worker, which restarts into the same state."""
    return Resumption(None, Resumes.CRASHES, TRIDENT_BATCH)


def _client_trident_out_of_range(profile: SpoutProfile) -> Outcome:
    """Where an out-of-range Trident state sends storm-kafka-client's Trident consumer: its auto.offset.reset. From 2.0
    the Trident spout is configured by KafkaTridentSpoutConfig, whose CommonKafkaSpoutConfig never sets it (v2.0.0 to
    v2.8.8): Kafka's default 'latest', the log end, on either side, and no OffsetManager. In 1.2.x it takes a
    KafkaSpoutConfig, which sets 'earliest' under its default AT_LEAST_ONCE (setKafkaPropsForProcessingGuarantee,
    v1.2.4); before 1.0.6/1.1.2 nothing sets it. Run on storm-kafka-client 2.8.3's KafkaTridentSpoutOpaque
    (tests/test_trident_oracle_e2e.py: below the log start and above the log end, both at the log end)."""
    if profile.client is StormKafkaClient.LEGACY:
        return _client_out_of_range(profile)
    if profile.client_major < 2:
        cite = client_citation("KafkaSpoutConfig", "v1.2.4")
        text = (
            "the consumer moves where its auto.offset.reset says: 'earliest' (the log start), which the "
            f"KafkaSpoutConfig the Trident spout takes sets unless the topology sets another ({cite})"
        )
        return Outcome(Lands.LOG_START, cite, lambda position, start, end: text)
    cite = client_citation("CommonKafkaSpoutConfig", "v2.0.0", "v2.8.8", file="internal/CommonKafkaSpoutConfig")
    text = (
        "the consumer moves where its auto.offset.reset says: Kafka's default is 'latest' (the log end) unless "
        f"the topology sets it, which KafkaTridentSpoutConfig does not ({cite}; run on 2.8.3)"
    )
    return Outcome(Lands.LOG_END, cite, lambda position, start, end: text)


def stored_citation(profile: SpoutProfile, library: Library, trident: bool = False) -> Citation:
    """The Storm source that resumes a partition from its stored position: PartitionManager's constructor
    (storm-kafka), TridentKafkaEmitter.doEmitNewPartitionBatch (its Trident emitter), KafkaSpout.doSeek
    (storm-kafka-client; v1.1.1 for its legacy line) or KafkaTridentSpoutEmitter.seek (its Trident emitter)."""
    if library is Library.STORM_KAFKA:
        return storm_kafka_citation("PartitionManager", profile.storm_kafka.tag)
    if library is Library.STORM_KAFKA_TRIDENT:
        return storm_kafka_citation(
            "TridentKafkaEmitter.doEmitNewPartitionBatch", profile.storm_kafka.tag, "trident/TridentKafkaEmitter"
        )
    if trident:
        return client_citation(
            "KafkaTridentSpoutEmitter.seek", "v1.2.4", "v2.8.8", file="trident/KafkaTridentSpoutEmitter"
        )
    if profile.client is StormKafkaClient.LEGACY:
        return client_citation("KafkaSpout.doSeek", "v1.1.1")
    return DO_SEEK_BOTH_LINES


def start_outcome(profile: SpoutProfile, library: Library, now_ms: int | None = None) -> Outcome:
    """Where the spout starts a partition without a stored position it can use (none, a malformed one, a storm-kafka
    offset <= 0): storm-kafka at `current` (configured_start: PartitionManager's constructor), storm-kafka-client
    at its first-poll strategy's edge (first_poll_start: KafkaSpout.doSeek). The sentence names the position.
    `now_ms`: the capture time (configured_start)."""
    if library is Library.STORM_KAFKA_CLIENT:
        return Outcome(
            Lands.LOG_START if profile.first_poll.edge == "log start" else Lands.LOG_END,
            client_citation("KafkaSpout.doSeek", "v2.8.8"),
            lambda position, start, end: first_poll_start(profile, start, end).text(),
        )
    return Outcome(
        _configured_lands(profile, now_ms),
        storm_kafka_citation("PartitionManager", profile.storm_kafka.tag),
        lambda position, start, end: configured_start(profile, start, end, now_ms).text(),
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


# --- storm-kafka-client commit metadata -----------------------------------------------------------------

# KafkaSpoutMessageId.getMetadata (v1.0.0 to v1.0.5, v1.1.0, v1.1.1):
#   "{topic-partition=" + topicPart + ", offset=" + offset + ", numFails=" + numFails + ", thread='" + name + "'}"
LEGACY_METADATA = re.compile(
    r"\{topic-partition=(?P<tp>.*), offset=(?P<offset>-?\d+), numFails=(?P<fails>\d+), "
    r"thread='(?P<thread>.*)'\}",
    re.DOTALL,
)
LEGACY_RELEASES = "1.0.0-1.0.5 or 1.1.0-1.1.1"


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


def crashing(citation: Citation = COMMIT_CRASH) -> Resumption:
    """Where a spout whose start-up throws resumes a partition: nowhere (`crashes`)."""
    return Resumption(None, Resumes.CRASHES, citation)


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


# --- storm-kafka-client ProcessingGuarantee: what a commit means ------------------------------------------


@dataclass(frozen=True, slots=True)
class CommitBehaviour:
    """What a storm-kafka-client spout's committed offset means under its ProcessingGuarantee, in words."""

    guarantee: str  # AT_LEAST_ONCE, AT_MOST_ONCE, NO_GUARANTEE
    committed: str  # what the committed offset is
    commits: str  # when and how the spout commits
    lag: str  # what log end - committed counts
    restart: str  # what a restart, a crash or a reset replays or loses
    out_of_range: str  # where the consumer goes when the commit is outside the log
    sources: tuple[str, ...]  # file@tag, under external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/


def _cite(*files: str, tags: tuple[str, ...] = ("v1.2.4", "v2.8.8")) -> tuple[str, ...]:
    return tuple(f"{f}@{t}" for t in tags for f in files)


def _period(profile: SpoutProfile) -> str:
    return f"offset.commit.period.ms ({profile.commit_period_ms} ms)"


def commit_behaviour(profile: SpoutProfile) -> CommitBehaviour:
    """What the committed offset of a storm-kafka-client group means under the profile's release and
    ProcessingGuarantee (KafkaSpout.java and KafkaSpoutConfig.java at the tags named in `sources`)."""
    g = profile.guarantee
    if profile.client is StormKafkaClient.LEGACY:
        return CommitBehaviour(
            g.value,
            committed="the last offset acked in order (KafkaSpoutMessageId offsets); the spout resumes at "
            "committed + 1",
            commits=f"commitSync of the acked offsets every {_period(profile)}, on partition revocation, "
            f"deactivate and close; no ProcessingGuarantee setting in {LEGACY_RELEASES}",
            lag="messages not yet acked in order: not polled, in flight, failed and waiting for a retry, and "
            "those acked since the last commit (up to one period)",
            restart="replays from committed + 1: tuples in flight and those acked since the last commit are "
            "processed again; nothing is lost",
            out_of_range="the consumer's auto.offset.reset, which the spout does not set: Kafka's default "
            "'latest' unless the topology sets it",
            sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java", tags=("v1.1.1",)),
        )
    if g is Guarantee.AT_MOST_ONCE:
        return CommitBehaviour(
            g.value,
            committed="the consumer's position after the last poll: the next offset to poll, not the next to process",
            commits="commitSync of every assigned partition's position right after each poll, before its records "
            "are emitted; offset.commit.period.ms is not used (no commit timer)",
            lag="messages not yet polled; messages polled but not yet processed are not counted",
            restart="resumes at the commit: messages polled but not processed when the spout stopped (up to one "
            "poll, max.poll.records) are never processed, and failed tuples are not retried; nothing is "
            "processed twice",
            out_of_range="the consumer's auto.offset.reset: Kafka's default 'latest' unless the topology sets it "
            "(the spout warns about any but 'latest' or 'none')",
            sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java"),
        )
    if g is Guarantee.NO_GUARANTEE:
        return CommitBehaviour(
            g.value,
            committed="the consumer's position at the last commit: the next offset to poll then, whatever was "
            "processed",
            commits=f"commitAsync of every assigned partition's position every {_period(profile)}, unacknowledged "
            f"(a failed commit is not retried); none on deactivate or close",
            lag="messages not yet polled at the last commit, which is up to one period old",
            restart="resumes at the last periodic commit: messages polled since are processed again, those "
            "polled before it but not yet processed are never processed; a message may be processed 0, "
            "1 or more times",
            out_of_range="the consumer's auto.offset.reset: Kafka's default 'latest' unless the topology sets it",
            sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java"),
        )
    return CommitBehaviour(
        g.value,
        committed="the first offset not yet acked in order (OffsetManager.findNextCommitOffset): the next offset "
        "to process",
        commits=f"commitSync of the acked offsets every {_period(profile)}, on partition revocation, deactivate "
        f"and close (commitOffsetsForAckedTuples); at most maxUncommittedOffsets polled beyond it",
        lag="messages not yet acked in order: not polled, in flight, failed and waiting for a retry, and those "
        "acked since the last commit (up to one period)",
        restart="replays from the commit: tuples in flight and those acked since the last commit are processed "
        "again (duplicates downstream); nothing is lost",
        out_of_range="the consumer's auto.offset.reset: 'earliest' unless the topology sets it (KafkaSpoutConfig "
        "sets it under AT_LEAST_ONCE)",
        sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java", "internal/OffsetManager.java"),
    )


# --- storm-kafka-client: its group's members, and what keeps an idle partition's commit fresh ----------------------


def subscribes(profile: SpoutProfile) -> bool:
    """Whether the spout's KafkaConsumer subscribes, so its group has members (the spout's own executors, classic
    protocol) while the topology runs: storm-kafka-client 1.0.0-1.0.5 call kafkaConsumer.subscribe
    (KafkaSpout.subscribeKafkaConsumer, v1.0.5) and 1.1.0-1.1.1 default to NamedSubscription/PatternSubscription,
    which subscribe (KafkaSpoutConfig.Builder, v1.1.1). Later releases assign (ManualPartitionSubscription,
    v1.0.6, v1.1.2, v1.2.4; TopicAssigner.assignPartitions, v2.0.0 to v2.8.8) and commit with no generation."""
    return profile.client is StormKafkaClient.LEGACY


class IdleCommit(str, Enum):
    """What becomes of an idle partition's commit while a storm-kafka-client spout runs (KafkaSpout.java, v1.2.4
    and v2.8.8; 3.x unchanged at master 73da988d9; the legacy line: subscribes)."""

    AGES = "ages"  # AT_LEAST_ONCE: commitOffsetsForAckedTuples commits only partitions with a newly acked offset
    MEMBERS = "members"  # the group has members while the spout runs (subscribes): timed from when it empties
    EVERY_POLL = "every poll"  # AT_MOST_ONCE: commitSync of every assigned partition's position after each poll
    EVERY_PERIOD = "every period"  # NO_GUARANTEE: commitAsync of every assigned partition's position on the timer


def idle_commit(profile: SpoutProfile) -> IdleCommit:
    """Whether an idle partition's commit ages while the spout runs (AGES) or what keeps it from expiring: a group
    with members (subscribes: KafkaSpout.subscribeKafkaConsumer, v1.0.5; NamedSubscription, v1.1.1), AT_MOST_ONCE's
    commit after every poll (KafkaSpout.pollKafkaBroker, v1.2.4 and v2.8.8), NO_GUARANTEE's commit of every
    assigned partition on the commit timer (KafkaSpout.nextTuple, v1.2.4 and v2.8.8). Under AT_LEAST_ONCE
    KafkaSpout.commitOffsetsForAckedTuples commits only the partitions OffsetManager.findNextCommitOffset finds a
    newly acked offset for (v1.2.4 and v2.8.8)."""
    if subscribes(profile):
        return IdleCommit.MEMBERS
    if profile.guarantee is Guarantee.AT_MOST_ONCE:
        return IdleCommit.EVERY_POLL
    if profile.guarantee is Guarantee.NO_GUARANTEE:
        return IdleCommit.EVERY_PERIOD
    return IdleCommit.AGES
