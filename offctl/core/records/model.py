"""Core data: what the stores gave us, and what offctl concludes from it.

Everything here is a frozen dataclass of plain values, so it can be built in tests from literals,
pickled to Spark executors and saved as a snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import IntEnum
from functools import lru_cache
from typing import NamedTuple

from offctl.core.storm.commits import CommitBehaviour
from offctl.core.storm.jstorm import spouts_path
from offctl.core.storm.outcomes import Resumption
from offctl.core.storm.releases import SpoutProfile

ZOOKEEPER = "zookeeper"
KAFKA = "kafka"
TRIDENT = "trident"  # a Trident Kafka spout's state under Storm's transactional root
STORM_KAFKA, STORM_KAFKA_CLIENT = "storm-kafka", "storm-kafka-client"  # which library wrote a Trident state
JSTORM = "jstorm"  # a JStorm Kafka spout's offsets under JStorm's root (offctl.core.storm.jstorm)
ZK_STORES = frozenset({ZOOKEEPER, TRIDENT, JSTORM})  # consumers whose offsets are ZooKeeper nodes


def iso_ms(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds, 2026-11-22T03:15:00.123Z."""
    if ms is None:
        return None
    seconds, millis = divmod(ms, 1000)
    return f"{_iso_seconds(seconds)}.{millis:03d}Z"


@lru_cache(maxsize=4096)  # a report's times share few seconds: formatting each once halves the JSON rows' cost
def _iso_seconds(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(timespec="seconds").removesuffix("+00:00")


def duration(seconds: float) -> str:
    """Seconds for people: 0s, 4.2s, 38s, 5m07s, 3h02m, 2d04h."""
    if seconds < 59.5:
        return "0s" if seconds == 0 else f"{seconds:.1f}s" if seconds < 9.95 else f"{seconds:.0f}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h" if days else f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def ranges(numbers: Iterable[int]) -> str:
    """0,1,2,3,5,7,8 -> '0-3,5,7-8'."""
    out: list[str] = []
    nums = sorted(set(numbers))
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(out)


_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]{1,249}")


def is_topic_name(name: str) -> bool:
    """Whether Kafka can have a topic of this name: 1 to 249 of a-z A-Z 0-9 . _ -, not "." or ".."
    (Topic.validate, clients/src/main/java/org/apache/kafka/common/internals/Topic.java in apache/kafka)."""
    return _TOPIC_CHARS.fullmatch(name) is not None and name not in (".", "..")


class Severity(IntEnum):
    """Finding severity; the order is what `--fail-on` compares."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return _SEVERITY_LABELS[self]  # not self.name.lower(): Enum's `name` is a slow descriptor, read per finding

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


_SEVERITY_LABELS = ("", "info", "warning", "error")  # by value: a tuple indexed by the IntEnum, no hashing


# --- What the stores return ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ZkNode:
    """One storm-kafka partition node, exactly as read from ZooKeeper."""

    zk_root: str
    spout_id: str
    path: str
    node_partition: int  # N of the node name partition_N
    folder_topic: str | None  # the <topic>/ folder in the wildcard layout, else None
    data: bytes
    version: int
    mtime_ms: int
    # Trident (spout_id is the txStateId, path the node of the highest txid): which library wrote it, the
    # txid, and how many txids the partition holds
    trident: str | None = None
    txid: int | None = None
    txids: int = 0
    # Trident: the lowest txid at or past the coordinator's currtx, and its node's bytes: the batch a transactional
    # spout (PartitionedTridentSpoutExecutor) replays first, where the opaque one resumes from `txid`
    # (trident.stored_from) `txid` None: the partition has no state but such batches, so an opaque spout starts it as
    # with none, and `path` and `data` are the replayed batch's
    replay_txid: int | None = None
    replay_data: bytes | None = None
    # Trident: every txid stored at or past currtx, ascending (replay_txid is the first): the batches a reset rewrites
    # with the partition (ZkStore.read_trident; not kept in Spark snapshots, which only analysis reads)
    ahead: tuple[int, ...] = ()
    # a JStorm Kafka spout's node, <zk_root>/kafka/offset/topic/<topic>/<client id>/<N>: spout_id is
    # "<topic>/<client id>" (jstorm.consumer_id), folder_topic the topic
    jstorm: bool = False


@dataclass(frozen=True, slots=True)
class KafkaCommit:
    """One committed offset of a Kafka consumer group, with its raw commit metadata."""

    group: str
    topic: str
    partition: int
    offset: int
    metadata: str | None


# Group types Kafka names in ListGroups v5 and the describe APIs (KIP-848, KIP-932); "unknown": the broker or
# client did not say (a broker before ListGroups v5 has classic groups only).
CLASSIC, CONSUMER, SHARE, UNKNOWN_TYPE = "classic", "consumer", "share", "unknown"
GROUP_TYPES = frozenset({CLASSIC, CONSUMER, SHARE, UNKNOWN_TYPE})
# Kafka accepts a commit without generation or member id only from an Empty group; these states mean members
# are joined (classic: GroupCoordinator.validateOffsetCommit, KIP-848: ConsumerGroup.validateOffsetCommit).
ACTIVE_GROUP_STATES = frozenset({"stable", "preparing_rebalance", "completing_rebalance", "assigning", "reconciling"})


@dataclass(frozen=True, slots=True)
class GroupState:
    group: str
    state: str
    members: int
    type: str = UNKNOWN_TYPE  # classic, consumer (KIP-848), share (KIP-932) or unknown
    protocol: str | None = None  # the classic group's protocol (assignor), or a consumer group's assignor

    @property
    def active(self) -> bool:
        """Members are joined (a broker may list none while the state says so)."""
        return self.members > 0 or self.state in ACTIVE_GROUP_STATES


@dataclass(frozen=True, slots=True)
class PartitionLog:
    """Log offsets and leader of one topic partition; None where the broker did not say."""

    log_start: int | None
    log_end: int | None  # the high watermark
    leader: str | None = None  # "host:port" of the current leader
    # the last stable offset (KIP-98), where a read_committed consumer stops: the first offset of the oldest open
    # transaction, else the high watermark. None: not asked for (no spout of the partition reads committed)
    last_stable: int | None = None


@dataclass(frozen=True, slots=True)
class LogMessage:
    """One message of a partition's log, exactly as the broker returned it."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None  # None: the message carries no timestamp (message format v0)
    timestamp_type: str | None  # "CreateTime" or "LogAppendTime" (the topic's message.timestamp.type)
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


# (topic, partition, offset): a position in a log that messages were asked for
Position = tuple[str, int, int]


@dataclass(frozen=True)
class MessageRead:
    """What a read of messages found at each position asked for: up to `count` messages, the first at or after
    the position (a compacted gap or transaction markers lie between them), or why none was read."""

    messages: Mapping[Position, tuple[LogMessage, ...]] = field(default_factory=dict)
    at_end: frozenset[Position] = frozenset()  # the log ended before `count` messages (or before any)
    unread: Mapping[Position, str] = field(default_factory=dict)  # why nothing could be read there


class TimeLag(NamedTuple):
    """How long the next message a spout is handed has waited, and where the figure comes from
    (offctl.core.time.timelag says which sources there are)."""

    seconds: float | None
    source: str | None
    why: str = ""  # why there is no figure (source unread)


@dataclass(frozen=True, slots=True)
class TopicRetention:
    """A topic's deletion settings as the broker reported them (DescribeConfigs); None where it did not report
    one, and `why` when it reported nothing (the request was refused, the broker has no such answer)."""

    topic: str
    retention_ms: int | None = None  # retention.ms: -1 keeps messages without a time limit
    retention_bytes: int | None = None  # retention.bytes of each partition: -1 no size limit
    cleanup_policy: str | None = None  # cleanup.policy: delete, compact or compact,delete
    why: str = ""


class Headroom(NamedTuple):
    """How long until the broker may delete the message a spout resumes at, and where the retention.ms used comes
    from (offctl.core.time.retention says which sources there are)."""

    seconds: float | None  # negative: the message is already older than retention.ms
    source: str | None
    why: str = ""  # what the figure rests on, or why there is none
    offset: int | None = None  # the message's offset (the resume offset, or the first after a gap)
    retention_ms: int | None = None  # the topic's retention.ms the figure used (RETENTION_RISK's default horizon)


class CatchUp(NamedTuple):
    """When a lagging spout will have caught up, at the rates its history shows (offctl.core.time.history says how it
    is estimated and what each state means): the seconds to lag 0, the state, and the rates it rests on."""

    seconds: float | None  # 0 caught up; None: not catching up, or no estimate (the state says which)
    state: str | None  # caught-up, catching-up, not-catching-up, no-history, short-window; None: no lag
    commit_rate: float | None = None  # messages a second the committed offset advanced over the window
    log_rate: float | None = None  # messages a second the log end advanced over the window


# topic -> partition -> log. None as a whole means Kafka was not consulted.
Cluster = Mapping[str, Mapping[int, PartitionLog]]


@dataclass(frozen=True)
class Snapshot:
    """Everything one inspection read, with its capture time."""

    captured_ms: int
    zk_nodes: tuple[ZkNode, ...] = ()
    commits: tuple[KafkaCommit, ...] = ()
    groups: tuple[GroupState, ...] = ()
    cluster: Cluster | None = None
    running: frozenset[str] | None = None  # storm ids under Storm's root; None = unknown
    notes: tuple[str, ...] = ()  # for stderr
    incomplete: tuple[str, ...] = ()  # what could not be read: the report is partial (exit 3)
    read_findings: tuple[ReadFinding, ...] = ()  # what the read itself found: named consumers absent, nodes not read
    reader: str = ""  # host:pid of the process that read it (an audit task: a Spark executor's Python worker)
    # each broker's ApiVersions answer, "node N (host:port)" -> API name -> (oldest, newest) it accepts; None: not
    # read (no Kafka, or refused: `broker_apis_why` says why), for the verdicts of which spouts it serves
    broker_apis: Mapping[str, Mapping[str, tuple[int, int]]] | None = None
    broker_apis_why: str = ""


@dataclass(frozen=True, slots=True)
class ReadFinding:
    """A finding the read itself establishes: a --spout or --group the user named that the store does not
    have (CONSUMER_NOT_FOUND), a node below a spout that storm-kafka never reads (UNREAD_NODE)."""

    key: ConsumerKey
    message: str
    code: str = "CONSUMER_NOT_FOUND"
    path: str | None = None


# --- What offctl concludes ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConsumerKey:
    """A spout id under one zkRoot, a Trident spout's txStateId under a transactional root, a JStorm spout's
    "<topic>/<kafka.client.id>" under JStorm's root, or a Kafka consumer group."""

    store: str
    consumer: str
    zk_root: str | None = None

    def fields(self) -> dict:
        """store, consumer and zk_root, as every JSON document and file of offctl names a consumer."""
        return {"store": self.store, "consumer": self.consumer, "zk_root": self.zk_root}

    def __str__(self) -> str:
        if self.store == ZOOKEEPER:
            return f"{self.zk_root.rstrip('/')}/{self.consumer}" if self.zk_root else self.consumer
        if self.store == TRIDENT:
            return f"trident {self.zk_root.rstrip('/')}/{self.consumer}"
        if self.store == JSTORM:
            return f"jstorm {spouts_path(self.zk_root)}/{self.consumer}"
        return f"group {self.consumer}"


@dataclass(frozen=True, slots=True)
class OffsetRecord:
    """A committed offset in store-neutral form; `malformed` says why it could not be parsed."""

    key: ConsumerKey
    partition: int
    topic: str | None
    committed: int | None
    topology_id: str | None = None
    topology_name: str | None = None
    path: str | None = None
    modified_ms: int | None = None
    version: int | None = None
    broker: str | None = None  # "host:port" recorded by storm-kafka
    folder_topic: str | None = None
    has_storm_metadata: bool = True
    legacy_metadata: bool = False  # storm-kafka-client before 1.1.2: the commit is the last processed offset
    crashes: bool = False  # Kafka: metadata CommitMetadataManager binds with no topologyId (activate() throws an NPE)
    # Kafka: metadata Jackson 2.15+ fails to bind (a number over 1,000 characters) where 2.9 binds it, as the fields
    # above say: outcomes.metadata_number_limit decides which the spout's release reads
    number_limited: bool = False
    malformed: str | None = None  # why the spout cannot use the record (it starts as if there were none)
    inconsistent: tuple[str, ...] = ()  # what the record says that Storm does not write but tolerates
    layout_ambiguous: bool = False  # <root>/a/b/partition_N read as id 'a', topic 'b', with nothing to confirm it
    trident: str | None = (
        None  # Trident state: storm-kafka or storm-kafka-client wrote it (committed: where it resumes)
    )
    txid: int | None = None  # Trident: the transaction whose state it resumes from
    stuck: bool = False  # Trident: the emitter throws on this state, so every batch of the whole state fails
    unparsed: bool = False  # storm-kafka-client Trident: json-smart (storm-client 2.6+) may read it otherwise
    differs_1x: bool = False  # storm-kafka-client Trident: its 1.x emitter uses it where 2.x's throws, or the reverse
    # Trident: a batch stored at or past the coordinator's currtx (its txid), which a transactional spout replays,
    # and the offset its replay starts at (None: not readable as a batch meta), and storm-kafka-client's lastOffset + 1,
    # where the next batch starts when the replay's single poll comes back empty: trident.replay_span
    replay_txid: int | None = None
    replay_from: int | None = None
    replay_after: int | None = None

    @property
    def replay_only(self) -> bool:
        """Trident: the partition's only state is batches at or past currtx: an opaque spout drops the one it emits
        and starts the partition as with no state; a transactional one replays it (trident.stored_from)."""
        return self.trident is not None and self.txid is None and self.replay_txid is not None


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    key: ConsumerKey
    topic: str | None
    partition: int | None
    path: str | None
    message: str
    hint: str
    resumes: Resumption | None = None  # MISSING_PARTITION: where the spout starts the partition it names


@dataclass(frozen=True, slots=True)
class PartitionRow:
    record: OffsetRecord
    log_start: int | None
    log_end: int | None
    lag: int | None
    status: Severity | None  # worst finding on this partition, None when healthy
    topic: str | None = None  # the topic the offset is applied to (None: cannot tell); record.topic is what it names
    codes: tuple[str, ...] = ()  # codes of the findings on this partition
    # False: the spout does not resume from the stored offset (a finding says why), and `lag` counts from where
    # its start-up rule puts it instead (startOffsetTime, the first-poll strategy's log start or end)
    resumes_stored: bool = True
    # where the spout reads committed (releases.isolation_level): the partition's last stable offset, which its lag
    # counts to instead of the log end; None otherwise, or when the broker did not say
    last_stable: int | None = None
    # where the spout will fetch this partition first, the kind of place, and the Storm source (outcomes.Resumption);
    # None where offctl cannot tell (no topic, an unknown partition, a partition the spout does not read)
    resumes: Resumption | None = None
    # how many offsets below the log start the stored position the spout resumes from lies: messages retention deleted
    # before the spout read them (partitions.lost_to_retention); 0 at or above the log start; None where offctl cannot
    # tell (no log range, no topic) or the spout does not resume from the stored position (resumes_stored False)
    lost_to_retention: int | None = None

    @property
    def lag_end(self) -> int | None:
        """The offset the lag counts to: the last stable offset where the spout reads committed, else the log end."""
        return self.log_end if self.last_stable is None else self.last_stable

    @property
    def partition_key(self) -> tuple:
        """The consumer-partition, as the exporter and `watch` follow it from one cycle to the next."""
        r = self.record
        return r.key.store, r.key.consumer, r.key.zk_root or "", self.topic, r.partition


@dataclass(frozen=True, slots=True)
class ConsumerSummary:
    key: ConsumerKey
    topics: tuple[str, ...]
    partitions: int
    total_lag: int
    max_lag: int | None
    worst: Severity | None
    finding_codes: tuple[str, ...]
    group_state: str | None = None  # Kafka groups: empty, stable, ... (storm-kafka-client looks empty)
    members: int | None = None
    group_type: str | None = None  # Kafka groups: classic, consumer, share or unknown
    group_protocol: str | None = None  # Kafka groups: the protocol or assignor the broker names
    by_severity: tuple[int, int, int] = (0, 0, 0)  # findings: errors, warnings, infos
    profile: str | None = None  # the profile that judged it (offctl.core.rules.profiles), None for the defaults


@dataclass(frozen=True)
class Thresholds:
    """What the user told us of the spouts (their topic, release and settings) and what to warn about."""

    expected_topic: str | None = None
    lag_threshold: int | None = None
    spout: SpoutProfile = SpoutProfile()
    static_partitions: Mapping[str, frozenset[int]] = field(default_factory=dict)  # spout id -> partitions read
    # retention risk (offctl.core.time.retention): warn when deletion is this near (None: the default rule, relative to
    # the topic's retention and the spout's pace); retention.ms the user states per topic, used where the broker
    # does not report it
    retention_horizon_ms: int | None = None
    topic_retention_ms: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    captured_ms: int
    rows: tuple[PartitionRow, ...]
    findings: tuple[Finding, ...]
    consumers: tuple[ConsumerSummary, ...]
    notes: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = ()
    checks_skipped: tuple[str, ...] = ()
    spout_settings: str = ""  # the spout settings the findings assume (SpoutProfile.describe)
    running: frozenset[str] | None = None  # storm ids under Storm's root when read; None = unknown
    # storm-kafka-client groups in the report: what their commits mean (commits.commit_behaviour), and how
    # long a commit may stand still while the spout runs (SpoutProfile.kafka_commit_period_ms)
    commits: CommitBehaviour | None = None
    kafka_commit_period_ms: int = 0
    # with several profiles: the storm-kafka-client groups whose profile's commit period is not kafka_commit_period_ms
    commit_periods: Mapping[ConsumerKey, int] = field(default_factory=dict)
    # the time lag of each position a lagging partition resumes from (offctl.core.time.timelag); none read: empty
    time_lags: Mapping[Position, TimeLag] = field(default_factory=dict)
    # storm-kafka-client groups' estimated commit expiry per partition_key (offctl.core.time.expiry.Expiry), and the
    # offsets.retention.minutes it assumes (expiry.Retention); not estimated: empty and None
    commit_expiry: Mapping[tuple, object] = field(default_factory=dict)
    offsets_retention: object | None = None
    # how long until the broker may delete the message at each such position (offctl.core.time.retention); none: empty
    headrooms: Mapping[Position, Headroom] = field(default_factory=dict)
    # when each partition_key's spout will have caught up, from serve's and watch's earlier observations
    # (offctl.core.time.history.catch_ups); none estimated: empty (each row's figure is then catch_up_of's default)
    catch_ups: Mapping[tuple, CatchUp] = field(default_factory=dict)
    # whether the brokers (or the --kafka-release what-if) serve each consumer (offctl.core.storm.protocol.Support);
    # not judged: absent
    broker_support: Mapping[ConsumerKey, object] = field(default_factory=dict)

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), default=None)
