"""Storm's releases of its Kafka spouts and a spout's settings (its profile), release by release: what each
setting may be and what it defaults to. Pure: no server, no clock."""

from __future__ import annotations

import re
from dataclasses import dataclass
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
    default, read_uncommitted, unless the topology sets it (isolation_level says which spouts it binds)."""

    READ_UNCOMMITTED = "read_uncommitted"
    READ_COMMITTED = "read_committed"

    @property
    def stops_at_last_stable(self) -> bool:
        """Whether a consumer at this level is handed nothing at or past the last stable offset (KIP-98), so a spout's
        lag counts to there: read_committed (KafkaConsumer's isolation.level, kafka-clients 0.11+)."""
        return self is Isolation.READ_COMMITTED


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
    isolation_level: Isolation = Isolation.READ_UNCOMMITTED  # the new spouts' consumer isolation.level
    # --kafka-clients-release: the Kafka client release the topology ships (kafka-clients, or storm-kafka's Kafka jar);
    # None: the one Storm's release builds with (offctl.core.storm.kafka_clients.storm_pins)
    kafka_clients_release: str | None = None
    jstorm_from_beginning: bool = False  # JStorm's kafka.fetch.from.beginning: the log start, whatever is stored

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
            f"offset.commit.period.ms={self.commit_period_ms}, isolation.level={self.isolation_level.value}; "
            f"jstorm-kafka kafka.fetch.from.beginning={str(self.jstorm_from_beginning).lower()}"
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


class Library(str, Enum):
    """Which code reads the stored position: storm-kafka's spout (PartitionManager), storm-kafka's Trident emitter
    (TridentKafkaEmitter), storm-kafka-client (its KafkaConsumer, spout or Trident), or JStorm's spout
    (PartitionConsumer)."""

    STORM_KAFKA = "storm-kafka"
    STORM_KAFKA_TRIDENT = "storm-kafka Trident"
    STORM_KAFKA_CLIENT = "storm-kafka-client"
    JSTORM_KAFKA = "jstorm-kafka"  # JStorm's spout (offctl.core.storm.jstorm)


def isolation_level(profile: SpoutProfile, library: Library) -> Isolation:
    """The isolation level the spout that reads with `library` reads at. READ_COMMITTED stops it at the last stable
    offset (KIP-98), so its lag counts to there: a storm-kafka-client spout (or Trident emitter) whose consumer is
    given isolation.level=read_committed.
    storm-kafka-client builds its KafkaConsumer from the topology's Kafka properties (KafkaSpoutConfig's kafkaProps,
    v1.2.4 to v2.8.8), and the Java consumer then reads committed records only, up to the last stable offset.
    storm-kafka's spout and Trident emitter fetch with the old SimpleConsumer (KafkaUtils.fetchMessages, v0.9.2 to
    v1.2.4), whose Fetch requests (v0 to v3) have no isolation level: Kafka answers them read_uncommitted, up to the
    high watermark, aborted records included."""
    return profile.isolation_level if library is Library.STORM_KAFKA_CLIENT else Isolation.READ_UNCOMMITTED


# --- storm-kafka-client commit metadata -----------------------------------------------------------------

# KafkaSpoutMessageId.getMetadata (v1.0.0 to v1.0.5, v1.1.0, v1.1.1):
#   "{topic-partition=" + topicPart + ", offset=" + offset + ", numFails=" + numFails + ", thread='" + name + "'}"
LEGACY_METADATA = re.compile(
    r"\{topic-partition=(?P<tp>.*), offset=(?P<offset>-?\d+), numFails=(?P<fails>\d+), "
    r"thread='(?P<thread>.*)'\}",
    re.DOTALL,
)


LEGACY_RELEASES = "1.0.0-1.0.5 or 1.1.0-1.1.1"
