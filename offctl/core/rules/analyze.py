"""Detection rules: records + log offsets -> per-partition rows and findings.

`analyze_consumer` is the one implementation of every rule: it runs the table RULES in order, one function per
rule (or per pass of several); `analyze` applies it to a snapshot, and the
Spark audit applies it per consumer on the executors. What a spout does with a record follows Storm's
source release by release: offctl/core/storm/ answers it once (an Outcome: where the spout lands, the
sentence, the file and tag it cites), and the rules read that answer.
A Trident spout's state follows the storm-kafka or storm-kafka-client rules of the library that wrote it.
The rules, in the order they run for each consumer, are the table RULES at the end of this module: each one's
number, codes, what it finds and the function that runs it (rules_text() lists them; docs/findings.md shows that
list, generated).
"""

from __future__ import annotations

import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from offctl.core.records.findings import CATALOGUE, finding, new_finding
from offctl.core.records.frozen import builder
from offctl.core.records.model import (
    CONSUMER,
    KAFKA,
    SHARE,
    STORM_KAFKA,
    STORM_KAFKA_CLIENT,
    TRIDENT,
    UNKNOWN_TYPE,
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    ConsumerSummary,
    Finding,
    GroupState,
    OffsetRecord,
    PartitionLog,
    PartitionRow,
    Report,
    Severity,
    Snapshot,
    Thresholds,
    is_topic_name,
    ranges,
)
from offctl.core.records.parse import parse_commit, parse_storm_id, parse_zk_node
from offctl.core.storm.commits import commit_behaviour, subscribes
from offctl.core.storm.outcomes import (
    CLIENT_1X_META,
    JSON_SMART,
    TRIDENT_BATCH,
    TRIDENT_STUCK,
    TRIDENT_TRANSACTIONAL,
    Outcome,
    Resumes,
    Resumption,
    committed_above_outcome,
    crashing,
    metadata_number_limit,
    out_of_range_outcome,
    start_outcome,
    stored_citation,
    stuck_trident_state,
    time_lands,
    trident_out_of_range_throws,
    trident_state_read_by_json_smart,
)
from offctl.core.storm.releases import LEGACY_RELEASES, LONG_MAX, Library, Position, SpoutProfile, reads_committed
from offctl.core.storm.start import (
    Resume,
    client_start,
    commit_crash,
    commit_is_ours,
    configured_start,
    first_poll_start,
    ignored_start,
    stale_commits_ignored,
    storm_kafka_ignores,
    trident_first_poll,
    trident_handed_on,
)


def _consumer_path(key: ConsumerKey) -> str | None:
    return f"{key.zk_root.rstrip('/')}/{key.consumer}" if key.store == ZOOKEEPER else None


def _partition_path(key: ConsumerKey, topic_folder: str | None, partition: int) -> str | None:
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
        by_folder: dict[str | None, list[OffsetRecord]] = defaultdict(list)
        for r in records:
            by_folder[r.folder_topic].append(r)
        for folder, rs in by_folder.items():
            if folder is None or any(r.topic == folder for r in rs):
                out[key].extend(rs)
            elif not is_topic_name(folder) or (
                cluster is not None and folder not in cluster and any(r.topic for r in rs)
            ):
                flat = replace(key, consumer=f"{key.consumer}/{folder}")
                out[flat].extend(replace(r, key=flat, folder_topic=None) for r in rs)
            else:
                out[key].extend(replace(r, layout_ambiguous=True) for r in rs)
    return {
        k: sorted(rs, key=lambda r: (r.folder_topic or "", r.topic or "", r.partition, r.path or ""))
        for k, rs in sorted(out.items(), key=lambda kv: (kv[0].store != ZOOKEEPER, kv[0].zk_root or "", kv[0].consumer))
    }


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
        if topic:
            applied.update((i, (topic, why)) for i, _ in flat)
    for i, r in enumerate(records):
        if r.folder_topic is not None:
            applied[i] = (r.folder_topic, f"it sits in the folder '{r.folder_topic}/'")
    return applied, tie


def _storm_kafka(record: OffsetRecord) -> bool:
    """A storm-kafka record (ZooKeeper spout or Trident state): its offset applies to the spout's topic."""
    return record.key.store == ZOOKEEPER or record.trident == STORM_KAFKA


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
    and the read-back of migrate, reset --group and restore (plan.verify_kafka) both ask it, so the two never
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
        self.old = _storm_kafka(records[0])  # storm-kafka: PartitionManager or TridentKafkaEmitter
        self.reads_committed = reads_committed(self.profile, library_of(records[0]))  # stops at the last stable offset
        # a storm-kafka-client Trident state read by json-smart (storm-client 2.6+): what it may read otherwise than
        # json-simple is unknown; so is, under a 1.x release, a meta 1.x's emitter reads otherwise than 2.x's
        client = records[0].trident == STORM_KAFKA_CLIENT
        self.json_smart = client and trident_state_read_by_json_smart(self.profile)
        self.client_1x = client and self.profile.client_major < 2
        # storm-client 2.x's transactional executor replays every partition of a task when one has a batch stored at
        # the txid it emits, and throws on one without (PartitionedTridentSpoutExecutor.Emitter.emitBatch, v2.8.3)
        self.replaying = client and not self.client_1x and any(r.replay_txid is not None for r in records)
        self.replay_all = self.replaying and any(r.replay_txid is None for r in records)
        self.out = _Collector(key)
        self.on_record = self.out.on_record  # (index, record, topic, code, message): a finding on a record
        self.applied, self.tie = _applied_topics(records, thresholds)
        self.topic_of = {i: self.applied[i][0] for i in self.applied}
        self.valid = [
            (i, r) for i, r in enumerate(records) if r.malformed is None and not r.replay_only and not self.unsure(r)
        ]
        self.static = thresholds.static_partitions.get(key.consumer) if self.zk else None
        self.max_offset_behind = self.profile.effective_max_offset_behind if self.zk else LONG_MAX
        self.lags: dict[int, int] = {}
        self.logs: dict[int, PartitionLog] = {}
        self.started: set[int] = set()  # records the spout does not resume from: it starts where its start-up rule says
        self.resumes: dict[int, Resume] = {}  # rule 6: where a storm-kafka-client spout resumes each commit
        self.resumption: dict[int, Resumption] = {}  # where the spout fetches each record's partition first
        self.unreadable = False  # a Trident state json-smart may read otherwise than json-simple (rule 2)
        self.throws = False  # a Trident state the emitter throws on: every batch of the state fails (rules 2, 10)
        self.moves: dict[tuple[str | None, str], Outcome] = {}  # out_of_range_outcome, once per library and side

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
                    plog.last_stable if plog is not None and self.reads_committed else None,
                    self.resumption.get(i),
                )
            )
        return rows


def analyze_consumer(
    records: Sequence[OffsetRecord],
    cluster: Cluster | None,
    running: frozenset[str] | None,
    thresholds: Thresholds,
    now_ms: int | None = None,
) -> tuple[list[PartitionRow], list[Finding]]:
    """Apply every rule to the records of one consumer (one spout id under one root, or one group), in the order
    of RULES (those it does not run say where they run).
    `now_ms`: the capture time, against which a timestamp startOffsetTime is placed."""
    if not records:
        return [], []
    c = _Consumer(records, cluster, running, thresholds, now_ms)
    for rule in RULES:
        if rule.run is not None and rule.applies(c):
            rule.run(c)
    c.throws = c.throws or any(r.stuck and not c.unsure(r) for r in records)
    if c.key.store == TRIDENT and (c.unreadable or c.throws):
        stuck_state(c)  # rules 2 and 10, for the whole state
    return c.rows(), c.out.findings


def ambiguous_spout_id(c: _Consumer) -> None:
    """AMBIGUOUS_SPOUT_ID: <root>/a/b/partition_N is read by its path as id 'a' reading topic 'b', but no record
    names 'b', and spout id 'a/b' would write the same nodes (resolve_layouts)."""
    named: dict[str, set[str]] = defaultdict(set)  # ambiguous folder -> the topics its records name
    for r in c.records:
        if r.layout_ambiguous:
            named[r.folder_topic].update({r.topic} - {None})
    key = c.key
    for folder, topics in sorted(named.items()):
        base = _consumer_path(key)
        quoted = ", ".join(f"'{t}'" for t in sorted(topics))
        says = f"its records name {quoted}, not '{folder}'" if topics else "its records name no topic"
        c.out.on_consumer(
            "AMBIGUOUS_SPOUT_ID",
            f"{base}/{folder}/partition_N is read by its path, as PartitionManager reads it: spout id "
            f"'{key.consumer}' reading topic '{folder}' (wildcard layout); spout id "
            f"'{key.consumer}/{folder}' would write the same nodes, and {says}",
            path=f"{base}/{folder}",
        )


# PartitionedTridentSpoutExecutor.Emitter.emitBatch, storm-client v2.8.3 :143-175 (run: emit-interrupted)
SIBLING_REPLAYS = (
    "(storm-client 2.x) replays every partition of its task when another has a batch stored at the "
    "coordinator's currtx, and throws NullPointerException on this one, which has none"
)


def _replay_message(c: _Consumer, r: OffsetRecord, where: str, fresh: Position | None) -> str:
    """TRIDENT_REPLAY's sentence: where each executor starts the partition, and the Storm source. `fresh`: where
    the opaque spout starts a partition with no state."""
    if r.replay_only:
        start = fresh.text() if fresh is not None else "where its settings say"
        opaque = (
            f"no state is stored below the coordinator's currtx, and an opaque spout drops the state of the "
            f"txid it emits first ({TRIDENT_BATCH}): it starts {where} as with no state, from {start}"
        )
    elif r.committed is not None:
        opaque = f"an opaque spout resumes at {r.committed}, after txid {r.txid} ({TRIDENT_BATCH})"
    else:
        opaque = "an opaque spout starts it as with no state"
    if r.replay_txid is None:
        replay = f"a transactional one {SIBLING_REPLAYS}"
    else:
        start = f"from {r.replay_from}" if r.replay_from is not None else "(its meta is not one the emitter reads)"
        replay = f"a transactional one replays the batch stored at txid {r.replay_txid} {start}"
        if r.replay_after not in (None, r.replay_from):
            replay += (
                f", or, where the replay's single poll comes back empty, goes on from {r.replay_after} without "
                f"it (KafkaTridentSpoutEmitter.reEmitPartitionBatch, v2.8.3)"
            )
        if c.replay_all:
            replay += (
                ", and storm-client 2.x then throws NullPointerException, as another partition of its task has "
                "none there"
            )
    return (
        f"{r.path or where}: {opaque}; {replay} ({TRIDENT_TRANSACTIONAL}; run on storm-kafka 1.2.4 and "
        f"storm-kafka-client 2.8.3). The stored bytes do not say which spout wrote them: offctl cannot tell "
        f"where {where} resumes"
    )


def _cannot_tell(c: _Consumer, i: int, r: OffsetRecord, topic: str | None, where: str, fresh: Position | None) -> bool:
    """Rule 2's findings on a Trident state offctl cannot tell the spout's reading of (_Consumer.unsure): True when
    it said so, and the partition has no resumption and no lag. `fresh`: where the spout starts a partition with no
    state (None: not known without the log)."""
    if c.client_1x and r.differs_1x:
        c.on_record(
            i,
            r,
            topic,
            "MALFORMED_RECORD",
            (
                f"{r.path or where}: storm-kafka-client {c.profile.client_release}'s Trident emitter reads this meta "
                "otherwise than 2.x's, which offctl models (1.x's fromMap also reads a tp map of topic and partition, "
                f"and never topologyId: {CLIENT_1X_META}): offctl cannot tell whether the spout resumes from it, "
                f"starts {where} as with no state, or fails every batch of the spout"
            ),
        )
        c.unreadable = True
        return True
    if c.json_smart and r.unparsed:
        c.on_record(
            i,
            r,
            topic,
            "MALFORMED_RECORD",
            (
                f"{r.path or where}: it is not plain JSON, which json-simple and json-smart read alike; storm-client "
                f"{c.profile.client_release} reads Trident state with json-smart's permissive parser ({JSON_SMART}), "
                "which reads much that json-simple refuses (unquoted keys, a bare word, trailing text) and refuses "
                "some that json-simple reads (a missing colon): offctl cannot tell whether the spout resumes from it, "
                f"starts {where} as with no state, or fails every batch of the spout"
            ),
        )
        c.unreadable = True
        return True
    if c.replays(r, fresh.offset if fresh is not None else None):  # after the two above, which may stop every batch
        c.on_record(i, r, topic, "TRIDENT_REPLAY", _replay_message(c, r, where, fresh))
        return True
    return False


def record_rules(c: _Consumer) -> None:
    """Rules 2 and 3, record by record: MALFORMED_RECORD (or TRIDENT_REPLAY) on a record the spout cannot use, or
    offctl cannot tell it uses, else INCONSISTENT_RECORD on one that says what Storm would not write."""
    for i, r in enumerate(c.records):
        if r.malformed is not None or r.replay_only or c.unsure(r):
            malformed_record(c, i, r)
        elif r.inconsistent:
            inconsistent_record(c, i, r)


def malformed_record(c: _Consumer, i: int, r: OffsetRecord) -> None:
    """MALFORMED_RECORD: the spout cannot read topology.id and offset, so it starts as with no record
    (outcomes.start_outcome: PartitionManager's `current`, or the first-poll strategy's edge); the lag counts
    from there. TRIDENT_REPLAY: a Trident state whose batch at or past the coordinator's currtx a transactional
    spout replays where the opaque one resumes elsewhere (_Consumer.replays): offctl cannot tell, and counts no lag."""
    topic = c.topic_of.get(i)
    where = f"{topic}/{r.partition}" if topic else f"partition {r.partition}"
    cluster, profile, static = c.cluster, c.profile, c.static
    plog = (cluster.get(topic) or {}).get(r.partition) if cluster is not None and topic else None
    log_start, log_end = (plog.log_start, plog.log_end) if plog is not None else (None, None)
    start = (
        configured_start(profile, log_start, log_end, c.now_ms)
        if c.old
        else first_poll_start(profile, log_start, log_end)
    )
    if _cannot_tell(c, i, r, topic, where, start if plog is not None else None):
        return
    outcome = start_outcome(profile, library_of(r), c.now_ms)
    landing = Resumption.landing(outcome.lands, outcome.citation, None, log_start, log_end, start.offset)
    if r.replay_only:  # a transactional spout replays the batch from where the opaque one starts (_cannot_tell)
        also = (
            ""
            if c.client_1x
            else f", and a transactional spout replays that batch from {r.replay_from}, the "
            f"same offset ({TRIDENT_TRANSACTIONAL})"
        )
        c.on_record(
            i,
            r,
            topic,
            "MISSING_PARTITION",
            (
                f"{where} has no state an opaque spout reads: its only state is the batch stored at txid "
                f"{r.replay_txid}, at or past the coordinator's currtx, which the opaque executor drops "
                f"({TRIDENT_BATCH}); it starts from {start.text()}{also}"
            ),
            resumes=landing,
        )
    else:
        then = f", {TRIDENT_STUCK}" if r.stuck else f"; the spout cannot use it and starts {where} from {start.text()}"
        c.on_record(i, r, topic, "MALFORMED_RECORD", f"{r.path or where}: {r.malformed}{then}")
    if r.stuck:
        c.resumption[i] = crashing(stored_citation(profile, library_of(r), r.trident is not None))
    else:
        c.started.add(i)
        c.resumption[i] = landing
    if plog is not None and not r.stuck and (static is None or r.partition in static):
        c.logs[i] = plog
        high_lag(c, i, r, topic, where, start.offset, log_start, log_end)


def stuck_state(c: _Consumer) -> None:
    """Rule 2 for a whole Trident state: a meta the emitter throws on fails every batch, so no partition of the state
    resumes anywhere (outcomes.stuck_trident_state), those with a usable meta and those without any included; a
    meta json-smart may read otherwise (a bare word it reads as a String also fails every batch) leaves where every
    partition resumes unknown (null)."""
    stuck = stuck_trident_state() if c.throws else None
    for i in range(len(c.records)):
        if stuck is None:
            c.resumption.pop(i, None)  # the lag still counts from the stored position: stuck or not, it stays there
        else:
            c.resumption[i] = stuck
    c.out.findings[:] = [replace(f, resumes=stuck) if f.code == "MISSING_PARTITION" else f for f in c.out.findings]


def inconsistent_record(c: _Consumer, i: int, r: OffsetRecord) -> None:
    """INCONSISTENT_RECORD: fields Storm does not read disagree with where the record sits, or are missing."""
    topic = c.topic_of.get(i)
    applies = f"; the spout applies offset {r.committed} to {topic}/{r.partition}" if topic else ""
    c.on_record(i, r, topic, "INCONSISTENT_RECORD", f"{r.path}: {'; '.join(r.inconsistent)}{applies}")


def topic_mismatch(c: _Consumer) -> None:
    """TOPIC_MISMATCH: the topic a record names is not the topic it is applied to (--topic, its <topic>/ folder,
    or the topic most records of the spout name); a tie is reported as a tie, and its records get no lag."""
    if c.tie:
        c.out.on_consumer(
            "TOPIC_MISMATCH",
            f"records of spout id '{c.key.consumer}' name {len(c.tie)} topics equally often: "
            f"{_counted(c.tie, 'record')}; offctl cannot tell which topic the spout reads, so these "
            f"records get no lag, range or missing-partition check (give --topic)",
        )
    if not c.old:
        return
    applied, topic_of = c.applied, c.topic_of
    for i, r in c.valid:
        if i in applied and r.topic and r.topic != topic_of[i]:
            t = topic_of[i]
            c.on_record(
                i,
                r,
                t,
                "TOPIC_MISMATCH",
                f"record names topic '{r.topic}' but {applied[i][1]}: the spout applies offset "
                f"{r.committed} to {t}/{r.partition}",
            )


def id_collision(c: _Consumer) -> None:
    """ID_COLLISION: one spout id, Trident state or group names more than one topology name."""
    names = Counter(r.topology_name for _, r in c.valid if r.topology_name)
    if len(names) > 1:
        key = c.key
        what = (
            f"spout id '{key.consumer}'"
            if c.zk
            else f"Trident state '{key.consumer}'"
            if key.store == TRIDENT
            else f"group '{key.consumer}'"
        )
        c.out.on_consumer("ID_COLLISION", f"{what} holds offsets of {len(names)} topologies: {_counted(names)}")


def foreign_commit(c: _Consumer) -> None:
    """FOREIGN_COMMIT: a Kafka commit without Storm metadata, or from another topology id than the rest;
    CRASHING_COMMIT: one whose metadata names no topology id (the spout throws in activate());
    LEGACY_COMMIT_METADATA: a commit in storm-kafka-client's pre-1.1.2 format. Each says whether and where the
    spout resumes (commit_resume), which the lag follows."""
    ids = Counter(r.topology_id for _, r in c.valid if r.topology_id)
    owner = max(ids, key=lambda t: (ids[t], _storm_id_epoch(t), t)) if ids else None
    cluster = c.cluster
    for i, r in c.valid:
        plog = (cluster.get(r.topic) or {}).get(r.partition) if cluster is not None else None
        resume = c.resumes[i] = commit_resume(
            c.profile, r, c.running, plog.log_start if plog else None, plog.log_end if plog else None
        )
        where = f"{r.topic}/{r.partition}"
        if resume.crashes:
            c.on_record(
                i,
                r,
                r.topic,
                "CRASHING_COMMIT",
                f"Commit {r.committed} on {where} has metadata that names no topology id. {resume.why}",
            )
        elif r.legacy_metadata:
            c.on_record(
                i,
                r,
                r.topic,
                "LEGACY_COMMIT_METADATA",
                f"Commit {r.committed} on {where} was written by storm-kafka-client {LEGACY_RELEASES}. {resume.why}",
            )
        elif not r.has_storm_metadata:
            why = (
                f"has metadata with a number over 1,000 characters, which the Jackson of storm-kafka-client "
                f"{c.profile.client_release} refuses to bind (StreamReadConstraints, Jackson 2.15+, Storm 2.6.0 on), "
                f"so the spout takes it as another topology's"
                if r.number_limited
                else "has no Storm metadata (a tool or another client wrote it, or the broker dropped the metadata)"
            )
            c.on_record(i, r, r.topic, "FOREIGN_COMMIT", f"Commit {r.committed} on {where} {why}. {resume.why}")
        elif len(ids) > 1 and r.topology_id != owner:
            c.on_record(
                i,
                r,
                r.topic,
                "FOREIGN_COMMIT",
                f"Commit {r.committed} on {where} was written by topology id {r.topology_id}, and "
                f"{_plural(ids[owner], 'other partition')} by {owner}. {resume.why}",
            )


def readable_records(c: _Consumer) -> None:
    """Rules 7-12, per record the spout can read (partition_rules)."""
    for i, r in c.valid:
        partition_rules(c, i, r)


def partition_rules(c: _Consumer, i: int, r: OffsetRecord) -> None:
    """Rules 7-12 of one record the spout can read, against its partition's log: where it resumes, whether that
    is inside the log, its lag, and the broker it names."""
    topic = c.topic_of.get(i)
    if topic is None:
        return  # a tie: where the offset applies is unknown
    where = f"{topic}/{r.partition}"
    if unknown_partition(c, i, r, topic, where):
        return
    plog = c.logs.get(i)  # None: Kafka was not consulted
    start, end = (plog.log_start, plog.log_end) if plog is not None else (None, None)
    instead = ignored_position(c, i, r, topic, where, start, end)  # rule 8 (and where rules 6 and 14 say the same)
    if instead is not None:
        c.started.add(i)
        high_lag(c, i, r, topic, where, instead.offset, start, end)
        return
    position = c.resumes[i].at.offset if c.key.store == KAFKA else r.committed
    if c.key.store == KAFKA and c.resumes[i].crashes:  # rule 6 says so: the lag counts from the commit, which stays
        c.resumption[i] = crashing()
        high_lag(c, i, r, topic, where, position, start, end)
        return
    plus_one = c.key.store == KAFKA and position != r.committed
    c.resumption[i] = Resumption(
        position,
        Resumes.STORED_PLUS_1 if plus_one else Resumes.STORED,
        stored_citation(c.profile, library_of(r), r.trident is not None),
    )
    restart = None  # where rule 9 starts a restart instead of the stored offset
    if c.max_offset_behind != LONG_MAX and lag_beyond_max_offset_behind(c, i, r, topic, where, start, end):
        restart = c.resumption[i]
    if start is None or end is None:
        return
    if offset_out_of_range(c, i, r, topic, where, position, start, end, restart):
        high_lag(c, i, r, topic, where, position, start, end)
    if c.old and plog is not None:
        stale_broker(c, i, r, topic, where, plog)


def unknown_partition(c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str) -> bool:
    """UNREAD_PARTITION: a record of a partition the spout does not read (--static-partitions);
    UNKNOWN_TOPIC / UNKNOWN_PARTITION: of the partition the offset applies to (needs Kafka). True when a finding ends
    the record's rules; else the partition's log is in c.logs, when Kafka was consulted."""
    static = c.static
    if static is not None and r.partition not in static:
        c.on_record(
            i,
            r,
            topic,
            "UNREAD_PARTITION",
            f"{where} has a record, but the spout reads only partitions {ranges(static)} "
            f"(--static-partitions): StaticCoordinator never reads it",
        )
        return True
    cluster = c.cluster
    if cluster is None:
        return False
    partitions = cluster.get(topic)
    if partitions is None:
        c.on_record(
            i,
            r,
            topic,
            "UNKNOWN_TOPIC",
            f"topic '{topic}' does not exist (offset {r.committed} for partition {r.partition})",
        )
        return True
    plog = partitions.get(r.partition)
    if plog is None:
        c.on_record(
            i, r, topic, "UNKNOWN_PARTITION", f"{where} does not exist: the topic has {len(partitions)} partitions"
        )
        return True
    c.logs[i] = plog
    return False


def _another_topologys(profile: SpoutProfile, r: OffsetRecord, running: frozenset[str] | None) -> bool:
    """Whether storm-kafka's ignoreZkOffsets (forceFromStart) takes `r` for another topology's record, the running
    topologies being `running` (None: unknown). Before 1.0 the spout compares the record with its own random id
    (StormKafka.names_a_uuid), one per submission, never a storm id: a record naming a storm id, running or not, is
    another's; one naming another id is taken as the next deployment takes it, another's."""
    if profile.storm_kafka.names_a_uuid:
        return running is not None or parse_storm_id(r.topology_id or "") is not None
    return running is not None and r.topology_id not in running


def ignored_position(
    c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str, start: int | None, end: int | None
) -> Position | None:
    """IGNORED_TRIDENT_STATE: a storm-kafka-client Trident state EARLIEST/LATEST ignores (lag from the log start or
    end they seek to); IGNORED_ZERO_OFFSET: a ZooKeeper offset <= 0, replaced at start-up (lag from
    startOffsetTime). Returns where the spout starts instead of the stored offset when it does not use it (the lag
    counts from there): also for ignoreZkOffsets and another topology id (rule 14 says so) and a commit the
    first-poll strategy ignores (rule 6 says so). PartitionManager's constructor, storm-kafka v0.9.2-incubating
    to v1.2.4; KafkaSpout.doSeek, v2.8.8."""
    profile, running = c.profile, c.running
    if c.old and profile.ignore_zk_offsets and _another_topologys(profile, r, running):
        # rule 14 says so: the next deployment starts at startOffsetTime, which the `<= 0` and
        # maxOffsetBehind checks leave there (both compare with startOffsetTime too)
        instead = ignored_start(profile, start, end, c.now_ms)
        c.resumption[i] = Resumption.landing(
            time_lands(profile, c.now_ms),
            stored_citation(profile, library_of(r), r.trident is not None),
            None,
            start,
            end,
            instead.offset,
        )
        return instead
    if r.trident == STORM_KAFKA_CLIENT and (ignored := trident_first_poll(profile, r.topology_id, running)):
        instead = first_poll_start(profile, start, end)
        handed = trident_handed_on(profile, instead.offset, r.committed)
        c.on_record(
            i,
            r,
            topic,
            "IGNORED_TRIDENT_STATE",
            f"{where} resumes at {r.committed}, but firstPollOffsetStrategy {profile.first_poll.value} "
            f"ignores this state {ignored}: the spout starts from the {profile.first_poll.edge}"
            f"{_at(instead)}{handed}",
        )
        if handed:  # offctl cannot tell which: no resumption, no lag
            return Position(None, "not known")
        c.resumption[i] = Resumption(
            instead.offset,
            Resumes(profile.first_poll.edge.replace(" ", "-")),
            stored_citation(profile, library_of(r), r.trident is not None),
        )
        return instead
    if c.zk and storm_kafka_ignores(r.committed):
        instead = configured_start(profile, start, end, c.now_ms)
        c.on_record(
            i,
            r,
            topic,
            "IGNORED_ZERO_OFFSET",
            f"{where} stores offset {r.committed}; PartitionManager replaces an offset <= 0 and "
            f"starts from {instead.text()}",
        )
        outcome = start_outcome(profile, Library.STORM_KAFKA, c.now_ms)
        c.resumption[i] = Resumption.landing(outcome.lands, outcome.citation, None, start, end, instead.offset)
        return instead
    if c.key.store == KAFKA and not c.resumes[i].uses_commit:
        at = c.resumes[i].at  # rule 6 says why
        c.resumption[i] = Resumption(
            at.offset,
            Resumes(profile.first_poll.edge.replace(" ", "-")),
            stored_citation(profile, Library.STORM_KAFKA_CLIENT),
        )
        return at
    return None


def lag_beyond_max_offset_behind(
    c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str, start: int | None, end: int | None
) -> bool:
    """LAG_BEYOND_MAX_OFFSET_BEHIND: the start-up offset is more than maxOffsetBehind ahead of the stored one.
    Only a start (or a reassignment) applies maxOffsetBehind: a running spout still moves on from the stored
    offset, so the lag counts from it, and the finding says where a restart goes. A timestamp startOffsetTime
    whose answer is not known here (start._time_answer) is at most the log end (or -5): within maxOffsetBehind
    of the log end the stored offset holds; further behind, where a start goes is not known (resumes `time`).
    True when a start goes elsewhere than the stored offset: the check comes before any fetch, so a stored offset
    out of range is never fetched by a restart (rule 10 says so)."""
    mob = c.max_offset_behind
    current = configured_start(c.profile, start, end, c.now_ms)
    if current.offset is None and end is not None and end - r.committed > mob:
        # PartitionManager (v1.2.4): `currentOffset - _committedTo > maxOffsetBehind` with currentOffset Kafka's answer
        c.resumption[i] = Resumption(None, Resumes.TIME, start_outcome(c.profile, Library.STORM_KAFKA).citation)
        return True
    if current.offset is not None and current.offset - r.committed > mob:
        outcome = start_outcome(c.profile, Library.STORM_KAFKA, c.now_ms)  # PartitionManager's constructor starts there
        c.resumption[i] = Resumption.landing(outcome.lands, outcome.citation, None, start, end, current.offset)
        c.on_record(
            i,
            r,
            topic,
            "LAG_BEYOND_MAX_OFFSET_BEHIND",
            f"{where} committed {r.committed} is {current.offset - r.committed} behind "
            f"{current.text()}, more than maxOffsetBehind {mob}: on restart the spout starts "
            f"from {current.offset}",
        )
        return True
    return False


def offset_out_of_range(
    c: _Consumer,
    i: int,
    r: OffsetRecord,
    topic: str,
    where: str,
    position: int,
    start: int,
    end: int,
    restart: Resumption | None = None,
) -> bool:
    """OFFSET_BELOW_LOG_START / OFFSET_ABOVE_LOG_END: where the spout resumes is outside the log, and what its
    release then does (outcomes.out_of_range_outcome, decided once per consumer). False when it is inside.
    `restart`: where rule 9 sends a restart instead (PartitionManager's constructor applies maxOffsetBehind before
    any fetch, v1.2.4): that stays the resumption, and the finding says the jump is what the running spout does."""
    if (position < start or position > end) and trident_out_of_range_throws(c.profile, library_of(r)):
        c.throws = True
    if position < start:
        outcome = _move(c.moves, c.profile, r, "below")
        jump = _running_jump(
            c,
            i,
            outcome.say(position, start, end),
            restart,
            Resumption.landing(outcome.lands, outcome.citation, position, start, end),
        )
        c.on_record(
            i,
            r,
            topic,
            "OFFSET_BELOW_LOG_START",
            f"{where} resumes at {position} < log start {start}: {start - position} messages were "
            f"deleted before they were processed; {jump}",
        )
        return False
    if position > end:
        outcome = _move(c.moves, c.profile, r, "above")
        if c.key.store == KAFKA and r.trident is None:  # STORM-2844's check, on the releases that have it
            outcome = committed_above_outcome(c.profile, commit_is_ours(r.topology_id, c.running)) or outcome
        jump = _running_jump(
            c,
            i,
            outcome.say(position, start, end),
            restart,
            Resumption.landing(outcome.lands, outcome.citation, position, start, end),
        )
        c.on_record(
            i,
            r,
            topic,
            "OFFSET_ABOVE_LOG_END",
            f"{where} resumes at {position} > log end {end} (by {position - end}); {jump}",
        )
        return False
    return True


def _running_jump(c: _Consumer, i: int, jump: str, restart: Resumption | None, landing: Resumption) -> str:
    """Rule 10's sentence and resumption: the release's jump, or, where rule 9 starts a restart elsewhere, the jump
    as what the running spout does and rule 9's start as where a restart resumes."""
    if restart is None:
        c.resumption[i] = landing
        return jump
    where = "where startOffsetTime's offset falls" if restart.at is None else str(restart.at)
    return f"{jump} while it runs; a restart never fetches it (maxOffsetBehind sends it to {where} first)"


def high_lag(
    c: _Consumer,
    i: int,
    r: OffsetRecord,
    topic: str,
    where: str,
    position: int | None,
    start: int | None,
    end: int | None,
) -> None:
    """The lag of a partition whose spout resumes at `position` (None: unknown, e.g. a time startOffsetTime),
    counted only when it is inside the log; and HIGH_LAG, at or above the user's --lag-threshold."""
    if position is None or start is None or end is None or not start <= position <= end:
        return
    stable = c.logs[i].last_stable if c.reads_committed and i in c.logs else None
    lag = c.lags[i] = end - position if stable is None else max(stable - position, 0)
    threshold = c.thresholds.lag_threshold
    if threshold is not None and lag >= threshold:
        behind = "the log end" if stable is None else "the last stable offset"
        c.on_record(
            i,
            r,
            topic,
            "HIGH_LAG",
            f"{where} lags {_plural(lag, 'message')} behind {behind} "
            f"({end if stable is None else stable}), at or above --lag-threshold "
            f"{threshold}",
        )


def stale_broker(c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str, plog: PartitionLog) -> None:
    """STALE_BROKER: the broker a ZooKeeper record names is not the partition's current leader."""
    if plog.leader and r.broker and r.broker.lower() != plog.leader.lower():
        c.on_record(i, r, topic, "STALE_BROKER", f"{where} record names broker {r.broker}; the leader is {plog.leader}")


def missing_partition(c: _Consumer) -> None:
    """MISSING_PARTITION: partitions the spout reads without a record (needs Kafka)."""
    present: dict[tuple[str, str | None], set[int]] = defaultdict(set)
    stored: dict[tuple[str, str | None], set[int]] = defaultdict(set)  # not only a batch the opaque spout drops
    topic_of, cluster, static, profile = c.topic_of, c.cluster, c.static, c.profile
    for i, r in enumerate(c.records):
        if i in topic_of:
            present[(topic_of[i], r.folder_topic)].add(r.partition)
            if not r.replay_only:
                stored[(topic_of[i], r.folder_topic)].add(r.partition)
    for (topic, folder), have in present.items():
        partitions = cluster.get(topic)
        if partitions is None:
            continue
        wanted = set(partitions) if static is None else set(partitions) & static
        library = library_of(c.records[0])
        outcome = start_outcome(profile, library, c.now_ms)
        citation = stored_citation(profile, library, True) if c.key.store == TRIDENT and not c.old else outcome.citation
        for p in sorted(wanted - have):
            plog = partitions[p]
            at = (
                configured_start(profile, plog.log_start, plog.log_end, c.now_ms)
                if c.old
                else first_poll_start(profile, plog.log_start, plog.log_end)
            )
            start = at.text() if c.old else f"the {profile.first_poll.edge} ({profile.first_poll.value})"
            declared = " (--static-partitions)" if static is not None else ""
            said = (
                f"{topic}/{p} has no committed offset ({len(stored[(topic, folder)] & wanted)} of {len(wanted)} "
                f"partitions the spout reads{declared} have one): it starts from {start}"
            )
            resumes = Resumption.landing(outcome.lands, citation, None, plog.log_start, plog.log_end, at.offset)
            if c.replaying:  # Trident, storm-client 2.x: a sibling's batch at currtx makes the transactional one throw
                said += (
                    f" if the spout is opaque; a transactional one {SIBLING_REPLAYS} ({TRIDENT_TRANSACTIONAL}): "
                    f"offctl cannot tell which wrote the state"
                )
                resumes = None
            c.out.on_consumer(
                "MISSING_PARTITION",
                said,
                topic=topic,
                partition=p,
                path=_partition_path(c.key, folder, p),
                resumes=resumes,
            )


def stale_topology(c: _Consumer) -> None:
    """STALE_TOPOLOGY: the writing topology id is not running (needs Storm's root); with ignoreZkOffsets, or a
    group's EARLIEST/LATEST, where the next deployment starts instead."""
    running, key = c.running, c.key
    profile = c.profile if c.old or key.store == KAFKA else None
    by_id = Counter(r.topology_id for _, r in c.valid if r.topology_id)
    running_by_name: dict[str, list[str]] = defaultdict(list)
    for storm_id in running:
        running_by_name[parse_storm_id(storm_id) or storm_id].append(storm_id)
    for topology_id, n in sorted(by_id.items(), key=lambda kv: (-kv[1], kv[0])):
        if topology_id in running:
            continue
        name = parse_storm_id(topology_id) or topology_id
        others = sorted(running_by_name.get(name, []))
        now = (
            f"topology '{name}' is running as {', '.join(others)}"
            if others
            else f"no topology named '{name}' is running"
        )
        ignored = ""
        if key.store == KAFKA:
            said = stale_commits_ignored(profile) if profile is not None else None
            ignored = f"; {said}" if said else ""
        elif profile is not None and profile.ignore_zk_offsets:
            force = profile.storm_kafka.ignore_setting
            ignored = (
                f"; with {force} the next deployment ignores these offsets and starts from "
                f"{ignored_start(profile, None, None, c.now_ms).label} "
                f"({start_outcome(profile, Library.STORM_KAFKA).citation})"
            )
        c.out.on_consumer(
            "STALE_TOPOLOGY",
            f"{_plural(n, 'partition')} committed by topology id {topology_id}, which is not running; {now}{ignored}",
        )


# --- the rules, in the order they run -----------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One detection rule: its number (the order rules run in), the codes it finds, what it finds, and the function
    analyze_consumer runs for it with the consumer (None: it runs in another rule's pass, or outside
    analyze_consumer, as `runs` says); `needs`: what the rule needs to run at all."""

    number: int
    codes: tuple[str, ...]
    finds: str
    run: Callable[[_Consumer], None] | None = None
    runs: str = ""
    needs: str = ""  # "a Kafka group", "Kafka's log offsets" or "Storm's root"

    def applies(self, c: _Consumer) -> bool:
        """Whether the rule runs on this consumer: it is a group's rule and c is a group, or what it needs was read."""
        if self.needs == NEEDS_GROUP:
            return c.key.store == KAFKA
        if self.needs == NEEDS_LOG:
            return c.cluster is not None
        if self.needs == NEEDS_STORM:
            return c.running is not None
        return True


NEEDS_GROUP, NEEDS_LOG, NEEDS_STORM = "a Kafka group", "Kafka's log offsets", "Storm's root"
PER_RECORD = "in rule 2's pass, record by record (record_rules)"
PER_READABLE = "in rule 7's pass, per record the spout can read (partition_rules)"

RULES: tuple[Rule, ...] = (
    Rule(
        1,
        ("AMBIGUOUS_SPOUT_ID",),
        "<root>/a/b/partition_N is read by its path as id 'a' reading topic 'b', but no "
        "record names 'b', and spout id 'a/b' would write the same nodes (resolve_layouts)",
        ambiguous_spout_id,
    ),
    Rule(
        2,
        ("MALFORMED_RECORD", "TRIDENT_REPLAY"),
        "the spout cannot read topology.id and offset: it starts as with "
        "no record; a Trident state's batch at or past the coordinator's currtx, which a transactional spout replays "
        "where an opaque one resumes elsewhere: offctl cannot tell which wrote it",
        record_rules,
    ),
    Rule(
        3,
        ("INCONSISTENT_RECORD",),
        "fields Storm does not read disagree with where the record sits, or are missing",
        runs=PER_RECORD,
    ),
    Rule(
        4,
        ("TOPIC_MISMATCH",),
        "the topic a record names is not the topic it is applied to (--topic, its <topic>/ "
        "folder, or the topic most records of the spout name); a tie is reported as a tie, and its records get no "
        "lag",
        topic_mismatch,
    ),
    Rule(5, ("ID_COLLISION",), "one spout id or group names more than one topology name", id_collision),
    Rule(
        6,
        ("FOREIGN_COMMIT", "CRASHING_COMMIT", "LEGACY_COMMIT_METADATA"),
        "a Kafka commit without Storm metadata "
        "or from another topology id than the rest; one whose metadata names no topology id (the spout throws in "
        "activate()); one in storm-kafka-client's pre-1.1.2 format",
        foreign_commit,
        needs=NEEDS_GROUP,
    ),
    Rule(
        7,
        ("UNREAD_PARTITION", "UNKNOWN_TOPIC", "UNKNOWN_PARTITION"),
        "a record of a partition the spout does not "
        "read (--static-partitions); the topic or partition the offset applies to does not exist (needs Kafka)",
        readable_records,
    ),
    Rule(
        8,
        ("IGNORED_TRIDENT_STATE", "IGNORED_ZERO_OFFSET"),
        "a storm-kafka-client Trident state EARLIEST/LATEST "
        "ignores, a ZooKeeper offset <= 0 replaced at start-up: the lag counts from where the spout starts instead",
        runs=PER_READABLE,
    ),
    Rule(
        9,
        ("LAG_BEYOND_MAX_OFFSET_BEHIND",),
        "the start-up offset is more than maxOffsetBehind ahead of the stored "
        "one (the lag still counts from the stored offset: a running spout moves on from it)",
        runs=PER_READABLE,
    ),
    Rule(
        10,
        ("OFFSET_BELOW_LOG_START", "OFFSET_ABOVE_LOG_END"),
        "where the spout resumes is outside the log (needs Kafka). The lag is the log end (the last stable offset, "
        "where the spout reads committed: releases.reads_committed) minus where the spout resumes, when that is "
        "inside the log: the stored offset, or where the start-up rule puts it when the spout does not use it (rules "
        "2, 6, 8, 14; none for a timestamp startOffsetTime at or before the capture time, which Kafka answers from "
        "its segment files' mtimes: start._time_answer)",
        runs=PER_READABLE,
    ),
    Rule(11, ("HIGH_LAG",), "the lag is above the threshold", runs=PER_READABLE),
    Rule(
        12,
        ("STALE_BROKER",),
        "a ZooKeeper record's broker is not the partition's leader (needs Kafka)",
        runs=PER_READABLE,
    ),
    Rule(13, ("MISSING_PARTITION",), "a partition the spout reads has no record", missing_partition, needs=NEEDS_LOG),
    Rule(
        14,
        ("STALE_TOPOLOGY",),
        "the topology id that wrote the records is not running",
        stale_topology,
        needs=NEEDS_STORM,
    ),
    Rule(
        15,
        ("CONSUMER_NOT_FOUND", "UNREAD_NODE"),
        "what the read found: a named spout or group absent, nodes no spout reads",
        runs="in the read (offctl.pipeline), carried as the snapshot's read findings",
    ),
    Rule(
        16,
        ("GROUP_TYPE_CONFLICT",),
        "the group id is a share group, or a group with members joined: the broker refuses the spout's commits",
        runs="in analyze, from the group's state (group_type_conflict)",
        needs=NEEDS_GROUP,
    ),
    Rule(
        17,
        ("COMMIT_EXPIRY_RISK",),
        "a storm-kafka-client group under AT_LEAST_ONCE whose commit may expire within --commit-expiry-horizon: the "
        "last commit is no earlier than the timestamp of the message before the committed offset; Kafka expires it "
        "offsets.retention.minutes later (GroupMetadata.removeExpiredOffsets, Kafka 2.1.0-3.x; "
        "OffsetExpirationConditionImpl, 4.x), and the spout commits only partitions with newly acked offsets "
        "(KafkaSpout.commitOffsetsForAckedTuples, Storm v1.2.4, v2.8.8); once gone, KafkaSpout.doSeek seeks by the "
        "first-poll strategy",
        runs="after the analysis, from the messages before the commits (offctl.core.time.expiry)",
        needs=NEEDS_GROUP,
    ),
    Rule(
        18,
        ("RETENTION_RISK", "RETENTION_EXCEEDED"),
        "the message a lagging spout resumes at may be deleted soon, or is past retention.ms",
        runs="after the analysis, from the time lag's read and the topics' configs (offctl.core.time.retention)",
        needs=NEEDS_LOG,
    ),
    Rule(
        19,
        ("OPEN_TRANSACTION", "HANGING_TRANSACTION"),
        "a spout that reads committed waits behind a transaction "
        "open a minute or more, or longer than transaction.max.timeout.ms",
        runs="after the analysis, from the first record of the transaction (offctl.core.time.transactions)",
        needs=NEEDS_LOG,
    ),
)


def rules_text() -> str:
    """The rules in the order they run, one paragraph each: docs/findings.md's list."""
    out = []
    for rule in RULES:
        head = f"{rule.number:>2}. {' / '.join(rule.codes)}"
        where = f" [{rule.runs}]" if rule.runs else ""
        needs = f" (needs {rule.needs})" if rule.needs else ""
        out.append(
            textwrap.fill(f"{head}: {rule.finds}{needs}{where}", 116, subsequent_indent="    ", break_on_hyphens=False)
        )
    return "\n".join(out)


def parse_snapshot(snapshot: Snapshot) -> dict[ConsumerKey, list[OffsetRecord]]:
    """Parse a snapshot's raw reads, grouped per consumer."""
    grouped: dict[ConsumerKey, list[OffsetRecord]] = {}
    for record in map(parse_zk_node, snapshot.zk_nodes):
        grouped.setdefault(record.key, []).append(record)
    for record in map(parse_commit, snapshot.commits):
        grouped.setdefault(record.key, []).append(record)
    return grouped


# What the broker does with the spout's commits. KafkaSpout never joins the group: 2.x assigns its partitions
# (TopicAssigner.assignPartitions calls consumer.assign, external/storm-kafka-client/.../subscription/
# TopicAssigner.java, v2.0.0 to v2.8.8), as does 1.0.6+/1.1.2+'s default ManualPartitionSubscription
# (KafkaSpoutConfig.Builder, v1.0.6, v1.1.2, v1.2.4). Its KafkaConsumer then commits with generation -1 and no
# member id (ConsumerCoordinator.sendOffsetCommitRequest, Generation.NO_GENERATION, apache/kafka 3.8.0).
# 1.0.0-1.0.5 call kafkaConsumer.subscribe() (KafkaSpout.subscribeKafkaConsumer) and 1.1.0-1.1.1 default to
# NamedSubscription/PatternSubscription, which subscribe: there the members are the spout's own executors.
_SIMPLE_COMMIT = (
    "the spout never joins the group and commits with no generation and no member id, which Kafka "
    "accepts only while the group is empty"
)
_REFUSED = (
    "KafkaSpout's commitSync throws CommitFailedException (AT_LEAST_ONCE, AT_MOST_ONCE: the executor "
    "dies and restarts from the last commit), NO_GUARANTEE's commitAsync loses the commits unseen"
)


def group_type_conflict(state: GroupState, profile: SpoutProfile) -> str | None:
    """Why the broker refuses or races the spout's commits to this group, or None when it takes them."""
    name = f"group '{state.group}'"
    protocol = f", protocol {state.protocol}" if state.protocol else ""
    joined = (
        f"{_plural(state.members, 'member')} joined" if state.members else "members joined"
    ) + f" (state {state.state}{protocol})"
    if state.type == SHARE:
        # ShareGroup.validateOffsetCommit: UnsupportedOperationException in apache/kafka 3.9.0-rc3, GROUP_ID_NOT_FOUND
        # "is not a consumer group" on trunk (4.x); validateOffsetFetch likewise
        return (
            f"{name} is a share group (KIP-932, state {state.state}, {_plural(state.members, 'member')}): the "
            f"broker refuses every consumer offset commit and fetch for it (ShareGroup.validateOffsetCommit, "
            f"apache/kafka group-coordinator), so the spout can neither resume nor commit: {_REFUSED}"
        )
    if not state.active:
        return None
    joins = subscribes(profile)  # 1.0.0-1.0.5 / 1.1.0-1.1.1: the spout's executors are classic members
    if state.type == CONSUMER:
        if joins:
            return (
                f"{name} is a KIP-848 consumer group with {joined}: they speak a protocol the Kafka clients of "
                f"storm-kafka-client {LEGACY_RELEASES} never use, so another application shares this group.id "
                f"and the spout's partitions"
            )
        # ConsumerGroup.validateOffsetCommit (apache/kafka 3.9.0-rc3): epoch -1 passes only with no members,
        # else getOrMaybeCreateMember("", false) throws UnknownMemberIdException
        return (
            f"{name} is a KIP-848 consumer group with {joined}: {_SIMPLE_COMMIT}; the broker answers "
            f"UNKNOWN_MEMBER_ID (ConsumerGroup.validateOffsetCommit, apache/kafka 3.9) and the members' own "
            f"commits overwrite the spout's: {_REFUSED}"
        )
    if joins:
        return None  # the members are the spout's own executors
    kind = "a classic group" if state.type != UNKNOWN_TYPE else "a group of unknown type (read as classic)"
    # GroupCoordinator.validateOffsetCommit (core, apache/kafka 3.8.0) and ClassicGroup.validateOffsetCommit
    # (group-coordinator, 3.9.0-rc3): generation -1 and no member id on a non-Empty group is UNKNOWN_MEMBER_ID
    return (
        f"{name} is {kind} with {joined}: another consumer subscribed with this group.id; "
        f"{_SIMPLE_COMMIT} (storm-kafka-client 1.0.6+/1.1.2+ unless configured with the deprecated "
        f"NamedSubscription or PatternSubscription); the broker answers UNKNOWN_MEMBER_ID "
        f"(GroupCoordinator.validateOffsetCommit, apache/kafka 3.8.0) and the members' own commits overwrite "
        f"the spout's: {_REFUSED}"
    )


def summarize(
    key: ConsumerKey, rows: Sequence[PartitionRow], findings: Sequence[Finding], state: GroupState | None = None
) -> ConsumerSummary:
    lags = [row.lag for row in rows if row.lag is not None]
    severities = Counter([f.severity for f in findings])  # one pass: a broken fleet has two findings a partition
    return ConsumerSummary(
        key=key,
        topics=tuple(sorted({row.topic for row in rows if row.topic})),
        partitions=len(rows),
        total_lag=sum(lags),
        max_lag=max(lags, default=None),
        worst=max(severities, default=None),
        finding_codes=tuple(sorted({f.code for f in findings})),
        group_state=state.state if state else None,
        members=state.members if state else None,
        group_type=state.type if state else None,
        group_protocol=state.protocol if state else None,
        by_severity=(severities[Severity.ERROR], severities[Severity.WARNING], severities[Severity.INFO]),
    )


def analyze(
    snapshot: Snapshot,
    thresholds: Thresholds = Thresholds(),
    records: dict[ConsumerKey, list[OffsetRecord]] | None = None,
) -> Report:
    """Turn one snapshot into the report every output format renders.

    `records` is parse_snapshot(snapshot), for a caller that parsed while it was reading."""
    rows: list[PartitionRow] = []
    findings: list[Finding] = []
    consumers: list[ConsumerSummary] = []
    states = {g.group: g for g in snapshot.groups}
    grouped = resolve_layouts(records if records is not None else parse_snapshot(snapshot), snapshot.cluster)
    now_ms = snapshot.captured_ms if snapshot.captured_ms > 0 else None  # 0: a snapshot made without a clock
    for key, consumer_records in grouped.items():
        r, f = analyze_consumer(consumer_records, snapshot.cluster, snapshot.running, thresholds, now_ms)
        state = states.get(key.consumer) if key.store == KAFKA else None
        conflict = group_type_conflict(state, thresholds.spout) if state else None
        if conflict:
            f.append(finding("GROUP_TYPE_CONFLICT", key, conflict))
        rows.extend(r)
        findings.extend(f)
        consumers.append(summarize(key, r, f, state))
    for noted in snapshot.read_findings:
        findings.append(finding(noted.code, noted.key, noted.message, path=noted.path or _consumer_path(noted.key)))
    skipped = []
    if snapshot.cluster is None:
        skipped.append("log offsets, lag and range checks (no --bootstrap-servers)")
    if snapshot.running is None:
        skipped.append("STALE_TOPOLOGY (Storm's root was not readable)")
    return Report(
        captured_ms=snapshot.captured_ms,
        rows=tuple(rows),
        findings=tuple(findings),
        consumers=tuple(consumers),
        notes=snapshot.notes,
        incomplete=snapshot.incomplete,
        checks_skipped=tuple(skipped),
        spout_settings=thresholds.spout.describe(),
        running=snapshot.running,
        commits=commit_behaviour(thresholds.spout) if any(c.key.store == KAFKA for c in consumers) else None,
        kafka_commit_period_ms=thresholds.spout.kafka_commit_period_ms,
    )


def with_findings(report: Report, found: Sequence[Finding]) -> Report:
    """The report with findings made after the analysis (from messages read for it: offctl.core.time.retention,
    offctl.core.time.expiry), each on its partition's row (status, codes) and counted in its consumer's summary, as
    analyze_consumer would have put them."""
    if not found:
        return report
    by_row: dict[tuple, list[Finding]] = defaultdict(list)
    by_key: dict[ConsumerKey, list[Finding]] = defaultdict(list)
    for f in found:
        by_row[(f.key, f.topic, f.partition)].append(f)
        by_key[f.key].append(f)
    rows = []
    for row in report.rows:
        new = by_row.get((row.record.key, row.topic, row.record.partition))
        if new:
            worst = max(f.severity for f in new)
            row = replace(
                row,
                codes=(*row.codes, *(f.code for f in new)),
                status=worst if row.status is None else max(row.status, worst),
            )
        rows.append(row)
    consumers = []
    for c in report.consumers:
        new = by_key.get(c.key)
        if new:
            worst = max(f.severity for f in new)
            c = replace(
                c,
                worst=worst if c.worst is None else max(c.worst, worst),
                finding_codes=tuple(sorted({*c.finding_codes, *(f.code for f in new)})),
                by_severity=tuple(
                    n + sum(1 for f in new if f.severity == s)
                    for n, s in zip(c.by_severity, (Severity.ERROR, Severity.WARNING, Severity.INFO))
                ),
            )
        consumers.append(c)
    return replace(report, rows=tuple(rows), findings=(*report.findings, *found), consumers=tuple(consumers))
