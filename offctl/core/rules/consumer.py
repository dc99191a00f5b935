"""The consumer the rules read: its records, its partitions' logs and rows, and the findings gathered for it;
what a stored position moves to, and which topics a spout applies to. Pure."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from offctl.core.records.findings import CATALOGUE, finding, new_finding
from offctl.core.records.frozen import builder
from offctl.core.records.model import (
    JSTORM,
    KAFKA,
    STORM_KAFKA,
    STORM_KAFKA_CLIENT,
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    Finding,
    OffsetRecord,
    PartitionLog,
    PartitionRow,
    Thresholds,
    is_topic_name,
)
from offctl.core.records.stormjson import parse_storm_id
from offctl.core.storm import jstorm
from offctl.core.storm.outcomes import (
    Outcome,
    Resumption,
    metadata_number_limit,
    out_of_range_outcome,
    trident_state_read_by_json_smart,
)
from offctl.core.storm.releases import LONG_MAX, Library, Position, SpoutProfile, isolation_level
from offctl.core.storm.start import Resume, client_start, commit_crash, commit_is_ours


def _consumer_path(key: ConsumerKey) -> str | None:
    if key.store == JSTORM:
        return f"{jstorm.spouts_path(key.zk_root)}/{key.consumer}"
    return f"{key.zk_root.rstrip('/')}/{key.consumer}" if key.store == ZOOKEEPER else None


def _partition_path(key: ConsumerKey, topic_folder: str | None, partition: int) -> str | None:
    if key.store == JSTORM:
        return jstorm.node_path(key.zk_root, key.consumer, partition)
    base = _consumer_path(key)
    if base is None:
        return None
    return f"{base}/{topic_folder}/partition_{partition}" if topic_folder else f"{base}/partition_{partition}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _counted(counts: Counter, word: str = "partition") -> str:
    return ", ".join(
        f"{name} ({_plural(n, word)})" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def _storm_id_epoch(storm_id: str) -> int:
    tail = storm_id.rsplit("-", 1)[-1]
    return int(tail) if parse_storm_id(storm_id) else 0


# --- layouts: which spout id a directory of partition nodes belongs to -----------------------------------


def resolve_layouts(
    grouped: Mapping[ConsumerKey, list[OffsetRecord]], cluster: Cluster | None = None
) -> dict[ConsumerKey, list[OffsetRecord]]:
    """Decide, per directory of partition nodes, between the two layouts storm-kafka writes.

    committedPath is zkRoot + "/" + id + "/" + Partition.getId(), and getId() is "partition_N" or, for
    wildcard topics, topic + "/partition_N" (PartitionManager.java, Partition.java, v1.0.0 to v1.2.4). Ids
    may contain '/', so <root>/a/b/partition_N is id 'a/b', or id 'a' reading topic 'b'. PartitionManager
    finds a record by its path and never reads its topic field, so offctl follows the path: id 'a' reading
    topic 'b', whatever topic the records name (rule 4 reports those that name another). A wildcard spout
    writes only folders of topics it found in the cluster (DynamicBrokersReader lists them), so id 'a/b' it
    is when 'b' is no legal topic name, or when the cluster is known, has no topic 'b', and the records name
    another topic. Otherwise, unless a record of the folder names 'b', id 'a/b' could have written the same
    nodes: that is said (rule 1).
    Records are ordered by folder, partition and path, so the same nodes give the same report."""
    out: dict[ConsumerKey, list[OffsetRecord]] = defaultdict(list)
    for key, records in grouped.items():
        if key.store != ZOOKEEPER:
            out[key].extend(records)
            continue
        _resolve_folders(key, records, cluster, out)
    return {
        k: sorted(rs, key=lambda r: (r.folder_topic or "", r.topic or "", r.partition, r.path or ""))
        for k, rs in sorted(out.items(), key=lambda kv: (kv[0].store != ZOOKEEPER, kv[0].zk_root or "", kv[0].consumer))
    }


def _resolve_folders(
    key: ConsumerKey,
    records: list[OffsetRecord],
    cluster: Cluster | None,
    out: dict[ConsumerKey, list[OffsetRecord]],
) -> None:
    """resolve_layouts for one ZooKeeper spout: each folder of its partition nodes into `out`, as the records of
    `key` reading topic `folder`, of the spout `key.consumer/folder`, or of `key` with the layout ambiguous."""
    by_folder: dict[str | None, list[OffsetRecord]] = defaultdict(list)
    for r in records:
        by_folder[r.folder_topic].append(r)
    for folder, rs in by_folder.items():
        if folder is None or any(r.topic == folder for r in rs):
            out[key].extend(rs)
        elif not is_topic_name(folder) or (cluster is not None and folder not in cluster and any(r.topic for r in rs)):
            flat = replace(key, consumer=f"{key.consumer}/{folder}")
            out[flat].extend(replace(r, key=flat, folder_topic=None) for r in rs)
        else:
            out[key].extend(replace(r, layout_ambiguous=True) for r in rs)


# --- the rules ---------------------------------------------------------------------------------------------


def _applied_topics(
    records: Sequence[OffsetRecord], thresholds: Thresholds
) -> tuple[dict[int, tuple[str, str]], Counter | None]:
    """Per record index: (the topic its offset is applied to, why). Also the counts of a tie, if the
    records of a flat layout name several topics equally often and no --topic decides."""
    applied: dict[int, tuple[str, str]] = {}
    tie = None
    flat = [(i, r) for i, r in enumerate(records) if r.folder_topic is None]
    if not _storm_kafka(records[0]):  # Kafka groups and storm-kafka-client Trident: the partition names its topic
        return {i: (r.topic, "") for i, r in enumerate(records)}, None
    if flat:
        topic, why, tie = _flat_topic(flat, thresholds)
        if topic:
            applied.update((i, (topic, why)) for i, _ in flat)
    for i, r in enumerate(records):
        if r.folder_topic is not None:
            applied[i] = (r.folder_topic, f"it sits in the folder '{r.folder_topic}/'")
    return applied, tie


def _flat_topic(flat: list[tuple[int, OffsetRecord]], thresholds: Thresholds) -> tuple[str | None, str, Counter | None]:
    """The topic the records of a flat layout apply to (None: a tie, or none named), why, and the counts of a tie:
    --topic where given, else the topic most of them name."""
    tie = None
    if thresholds.expected_topic:
        topic, why = thresholds.expected_topic, f"--topic is '{thresholds.expected_topic}'"
    else:
        counts = Counter(r.topic for _, r in flat if r.topic)
        top = counts.most_common(2)
        if not top:
            topic, why = None, ""
        elif len(top) == 2 and top[0][1] == top[1][1]:
            topic, why, tie = None, "", counts
        else:
            topic = top[0][0]
            why = f"{counts[topic]} of {sum(counts.values())} records of this spout name '{topic}'"
    return topic, why, tie


def _storm_kafka(record: OffsetRecord) -> bool:
    """A record of storm-kafka (ZooKeeper spout or Trident state) or of JStorm's spout: its offset applies to the
    spout's topic, whatever topic it names."""
    return record.key.store in (ZOOKEEPER, JSTORM) or record.trident == STORM_KAFKA


def applied_topics(records: Sequence[OffsetRecord], expected_topic: str | None = None) -> list[str | None]:
    """For each record of one spout, the topic its offset is applied to (None: a tie, or no topic named)."""
    if not records:
        return []
    applied, _ = _applied_topics(records, Thresholds(expected_topic=expected_topic))
    return [applied[i][0] if i in applied else None for i in range(len(records))]


def _at(position: Position) -> str:
    return f" ({position.offset})" if position.offset is not None else ""


def commit_resume(
    profile: SpoutProfile,
    record: OffsetRecord,
    running: frozenset[str] | None,
    log_start: int | None = None,
    log_end: int | None = None,
) -> Resume:
    """Whether and where a storm-kafka-client spout of this profile resumes from this commit (parse_commit's
    record), the topologies in `running` running: start.client_start. Rule 6 (FOREIGN_COMMIT and the lag)
    and the read-back of migrate, reset --group and restore (verify.verify_kafka) both ask it, so the two never
    give two verdicts on one commit. A commit whose metadata makes the spout throw at start: start.commit_crash."""
    crash = commit_crash(profile, record.committed, record.crashes)
    if crash is not None:
        return crash
    return client_start(
        profile,
        record.committed,
        record.legacy_metadata,
        commit_is_ours(record.topology_id, running),
        log_start,
        log_end,
    )


_row = builder(PartitionRow)  # PartitionRow(...), made once per partition (offctl.core.records.frozen)


def _move(moves: dict[tuple[str | None, str], Outcome], profile: SpoutProfile, r: OffsetRecord, side: str) -> Outcome:
    """out_of_range_outcome for `r`'s library and `side`, decided once per consumer (a broken fleet asks it for
    every partition)."""
    found = moves.get((r.trident, side))  # one consumer's records share a store: r.trident tells the library
    if found is None:
        found = moves[(r.trident, side)] = out_of_range_outcome(profile, library_of(r), side, r.trident is not None)
    return found


def library_of(r: OffsetRecord) -> Library:
    """Which code reads this stored position (releases.Library): storm-kafka's spout, its Trident emitter, or
    storm-kafka-client."""
    if r.key.store == ZOOKEEPER:
        return Library.STORM_KAFKA
    if r.key.store == JSTORM:
        return Library.JSTORM_KAFKA
    return Library.STORM_KAFKA_TRIDENT if r.trident == STORM_KAFKA else Library.STORM_KAFKA_CLIENT


def out_of_range_move(
    profile: SpoutProfile, r: OffsetRecord, side: str, position: int, start: int | None, end: int | None
) -> str:
    """What the spout that wrote `r` does when `position` is out of the log on `side` (below, above), by its
    library and release (outcomes.out_of_range_outcome); also what offctl.core.time.retention says of a deletion to
    come."""
    return out_of_range_outcome(profile, library_of(r), side, r.trident is not None).sentence(position, start, end)


class _Collector:
    """Findings of one consumer, remembering which record each partition-level finding is about."""

    def __init__(self, key: ConsumerKey) -> None:
        self.key = key
        self.findings: list[Finding] = []
        self.by_record: dict[int, list[Finding]] = {}

    def on_record(
        self,
        index: int,
        record: OffsetRecord,
        topic: str | None,
        code: str,
        message: str,
        resumes: Resumption | None = None,
    ) -> None:
        entry = CATALOGUE[code]  # finding(), without its keywords: a broken fleet makes two per partition
        f = new_finding(code, entry.severity, self.key, topic, record.partition, record.path, message, entry.hint)
        if resumes is not None:
            f = replace(f, resumes=resumes)
        self.findings.append(f)
        found = self.by_record.get(index)
        if found is None:
            self.by_record[index] = [f]
        else:
            found.append(f)

    def on_consumer(self, code: str, message: str, **kw) -> None:
        kw.setdefault("path", _consumer_path(self.key))
        self.findings.append(finding(code, self.key, message, **kw))


def _unbound(r: OffsetRecord) -> OffsetRecord:
    """A commit whose metadata the spout's Jackson fails to bind: CommitMetadataManager takes it as another
    topology's (isOffsetCommittedByThisTopology catches the IOException), as it takes metadata that is not Storm's."""
    return replace(r, topology_id=None, topology_name=None, has_storm_metadata=False, crashes=False)


class _Consumer:
    """One consumer's records, what it is judged by, and what the rules have found so far: the state the rule
    functions share, in the order analyze_consumer runs them."""

    def __init__(
        self,
        records: Sequence[OffsetRecord],
        cluster: Cluster | None,
        running: frozenset[str] | None,
        thresholds: Thresholds,
        now_ms: int | None = None,
    ) -> None:
        if records[0].key.store == KAFKA and metadata_number_limit(thresholds.spout) is not None:
            records = [_unbound(r) if r.number_limited else r for r in records]  # Jackson 2.15+ fails their bind
        self.records = records
        self.cluster = cluster
        self.running = running
        self.now_ms = now_ms  # the capture time: a timestamp startOffsetTime after it is the log end (_at_time)
        self.thresholds = thresholds
        self.profile = thresholds.spout
        self.key = key = records[0].key
        self.zk = key.store == ZOOKEEPER
        self.jstorm = key.store == JSTORM
        self.old = _storm_kafka(records[0])  # storm-kafka: PartitionManager or TridentKafkaEmitter
        self.isolation_level = isolation_level(self.profile, library_of(records[0]))  # READ_COMMITTED: stops at the LSO
        self._read_client_trident(records)
        self.out = _Collector(key)
        self.on_record = self.out.on_record  # (index, record, topic, code, message): a finding on a record
        self.applied, self.tie = _applied_topics(records, thresholds)
        self.topic_of = {i: self.applied[i][0] for i in self.applied}
        self.valid = [
            (i, r) for i, r in enumerate(records) if r.malformed is None and not r.replay_only and not self.unsure(r)
        ]
        self.static = thresholds.static_partitions.get(key.consumer) if self.zk or self.jstorm else None
        self.max_offset_behind = self.profile.effective_max_offset_behind if self.zk else LONG_MAX
        self.lags: dict[int, int] = {}
        self.logs: dict[int, PartitionLog] = {}
        self.started: set[int] = set()  # records the spout does not resume from: it starts where its start-up rule says
        self.resumes: dict[int, Resume] = {}  # rule 6: where a storm-kafka-client spout resumes each commit
        self.resumption: dict[int, Resumption] = {}  # where the spout fetches each record's partition first
        self.lost: dict[int, int | None] = {}  # offsets below the log start its stored position left (rule 10)
        self.unreadable = False  # a Trident state json-smart may read otherwise than json-simple (rule 2)
        self.throws = False  # a Trident state the emitter throws on: every batch of the state fails (rules 2, 10)
        self.moves: dict[tuple[str | None, str], Outcome] = {}  # out_of_range_outcome, once per library and side

    def _read_client_trident(self, records: Sequence[OffsetRecord]) -> None:
        """What offctl can tell of a storm-kafka-client Trident state's records (json_smart, client_1x) and whether
        its transactional spout replays them (replaying, replay_all); all False for any other consumer."""
        # a storm-kafka-client Trident state read by json-smart (storm-client 2.6+): what it may read otherwise than
        # json-simple is unknown; so is, under a 1.x release, a meta 1.x's emitter reads otherwise than 2.x's
        client = records[0].trident == STORM_KAFKA_CLIENT
        self.json_smart = client and trident_state_read_by_json_smart(self.profile)
        self.client_1x = client and self.profile.client_major < 2
        # storm-client 2.x's transactional executor replays every partition of a task when one has a batch stored at
        # the txid it emits, and throws on one without (PartitionedTridentSpoutExecutor.Emitter.emitBatch, v2.8.3)
        self.replaying = client and not self.client_1x and any(r.replay_txid is not None for r in records)
        self.replay_all = self.replaying and any(r.replay_txid is None for r in records)

    def unsure(self, r: OffsetRecord) -> bool:
        """Whether offctl cannot tell what this spout's release makes of the Trident state `r` (MALFORMED_RECORD
        says so): json-smart may read it otherwise, or a 1.x emitter reads it otherwise than 2.x's."""
        return (self.json_smart and r.unparsed) or (self.client_1x and r.differs_1x) or self.replays(r)

    def replays(self, r: OffsetRecord, fresh: int | None = None) -> bool:
        """Whether a transactional Trident spout would start `r`'s partition elsewhere than the opaque one offctl
        reads it as (TRIDENT_REPLAY says so): a batch stored at or past currtx that does not begin where the opaque
        spout resumes (`fresh`: where it starts a partition with no state, for a record with only such batches;
        None: not known), or, under storm-client 2.x, a sibling partition's such batch."""
        if r.malformed is not None:  # rule 2's MALFORMED_RECORD says what the spout makes of it
            return False
        if self.client_1x:  # storm-kafka-client 1.x's transactional spout is a stub: no batch is its
            return False
        if self.replay_all:
            return True
        if r.replay_txid is None:
            return False
        opaque = fresh if r.replay_only else r.committed
        # storm-kafka-client 2.x replays a batch with one poll, and one that comes back empty leaves it unemitted
        return opaque is None or r.replay_from != opaque or r.replay_after not in (None, r.replay_from)

    def rows(self) -> list[PartitionRow]:
        """A row per record: its log offsets, lag, worst finding and codes, and whether the spout resumes from it."""
        by_record, logs, lags, topic_of, started = (
            self.out.by_record,
            self.logs,
            self.lags,
            self.topic_of,
            self.started,
        )
        rows = []
        for i, r in enumerate(self.records):
            found = by_record.get(i)
            if found is None:
                status, codes = None, ()
            elif len(found) == 1:
                status, codes = found[0].severity, (found[0].code,)
            else:
                status, codes = max([f.severity for f in found]), tuple([f.code for f in found])
            plog = logs.get(i)
            rows.append(
                _row(
                    r,
                    plog.log_start if plog else None,
                    plog.log_end if plog else None,
                    lags.get(i),
                    status,
                    topic_of.get(i),
                    codes,
                    i not in started,
                    plog.last_stable if plog is not None and self.isolation_level.stops_at_last_stable else None,
                    self.resumption.get(i),
                    self.lost.get(i),
                )
            )
        return rows
