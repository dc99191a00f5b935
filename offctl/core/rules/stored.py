"""The rules over a consumer's stored records (the table RULES in offctl/core/rules/analyze.py runs them): ids,
malformed and inconsistent records, topics, collisions, foreign commits, missing partitions, stale topologies."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

from offctl.core.records.model import KAFKA, TRIDENT, Cluster, OffsetRecord, PartitionLog
from offctl.core.records.stormjson import parse_storm_id
from offctl.core.rules.consumer import (
    _Consumer,
    _consumer_path,
    _counted,
    _partition_path,
    _plural,
    _storm_id_epoch,
    commit_resume,
    library_of,
)
from offctl.core.rules.partitions import high_lag
from offctl.core.storm import jstorm
from offctl.core.storm.outcomes import (
    CLIENT_1X_META,
    JSON_SMART,
    TRIDENT_BATCH,
    TRIDENT_STUCK,
    TRIDENT_TRANSACTIONAL,
    Resumption,
    crashing,
    fresh_position,
    start_outcome,
    stored_citation,
    stuck_trident_state,
)
from offctl.core.storm.releases import LEGACY_RELEASES, Library, Position, SpoutProfile
from offctl.core.storm.start import ignored_start, stale_commits_ignored


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
    profile, static = c.profile, c.static
    plog = _partition_log(c.cluster, topic, r.partition)
    log_start, log_end = (plog.log_start, plog.log_end) if plog is not None else (None, None)
    start = fresh_position(profile, library_of(r), log_start, log_end, c.now_ms)
    if _cannot_tell(c, i, r, topic, where, start if plog is not None else None):
        return
    outcome = start_outcome(profile, library_of(r), c.now_ms)
    landing = Resumption.landing(outcome.lands, outcome.citation, None, log_start, log_end, start.offset)
    if r.replay_only:  # a transactional spout replays the batch from where the opaque one starts (_cannot_tell)
        _only_replayed(c, i, r, topic, where, start, landing)
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


def _partition_log(cluster: Cluster | None, topic: str | None, partition: int) -> PartitionLog | None:
    """The log of the partition a record applies to (None: Kafka not consulted, or no topic)."""
    return (cluster.get(topic) or {}).get(partition) if cluster is not None and topic else None


def _only_replayed(
    c: _Consumer, i: int, r: OffsetRecord, topic: str | None, where: str, start: Position, landing: Resumption
) -> None:
    """MISSING_PARTITION for a Trident state whose only batch is one the opaque executor drops (malformed_record)."""
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
            else f"JStorm spout '{key.consumer}' (topic/kafka.client.id)"
            if c.jstorm
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
            at = fresh_position(profile, library, plog.log_start, plog.log_end, c.now_ms)
            start = at.text() if c.old else f"the {profile.first_poll.edge} ({profile.first_poll.value})"
            declared = (
                " (--static-partitions)"
                if static is not None
                else f" (a JStorm spout reads partitions 0 to kafka.broker.partitions - 1, default 1: declare those "
                f"it reads with --static-partitions, {jstorm.PARTITIONS})"
                if c.jstorm
                else ""
            )
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
        ignored = _next_deployment(c, profile)
        c.out.on_consumer(
            "STALE_TOPOLOGY",
            f"{_plural(n, 'partition')} committed by topology id {topology_id}, which is not running; {now}{ignored}",
        )


def _next_deployment(c: _Consumer, profile: SpoutProfile | None) -> str:
    """STALE_TOPOLOGY's clause on where the next deployment starts, where it ignores the stored offsets: a group's
    EARLIEST or LATEST, or ignoreZkOffsets; "" where it resumes from them (or the profile is not known)."""
    ignored = ""
    if c.key.store == KAFKA:
        said = stale_commits_ignored(profile) if profile is not None else None
        ignored = f"; {said}" if said else ""
    elif profile is not None and profile.ignore_zk_offsets:
        force = profile.storm_kafka.ignore_setting
        ignored = (
            f"; with {force} the next deployment ignores these offsets and starts from "
            f"{ignored_start(profile, None, None, c.now_ms).label} "
            f"({start_outcome(profile, Library.STORM_KAFKA).citation})"
        )
    return ignored
