"""The plans that write storm-kafka's and Trident's records in ZooKeeper: reset and delete. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from offctl.core.plans.firstpoll import DEFAULTS, _each_first_poll, _strategy
from offctl.core.plans.plan import (
    CREATE,
    UNKNOWN_TOPIC,
    Applied,
    Change,
    Plan,
    _applied,
    _by_choice,
    _file_rows_left,
    _log_of,
    _selected,
    _unrecorded,
    _warnings,
    target_offset,
)
from offctl.core.plans.rewrite import rewrite_node
from offctl.core.plans.targets import Scope, Target
from offctl.core.records.model import (
    STORM_KAFKA_CLIENT,
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    OffsetRecord,
    PartitionLog,
    ZkNode,
)
from offctl.core.records.parse import parse_zk_node, record_topology, storm_kafka_record
from offctl.core.storm.citations import NO_RECORD, NO_TRIDENT_STATE, TRIDENT_CLIENT_SEEK, storm_kafka_citation
from offctl.core.storm.outcomes import start_outcome
from offctl.core.storm.releases import Library, SpoutProfile, StormKafka
from offctl.core.storm.start import configured_start, first_poll_start
from offctl.inputs import printable

# A batch stored at or past the coordinator's currtx: a transactional Trident spout replays it before it resumes
# (trident.stored_from; run: tests/test_trident_transactional_e2e.py, repair-not-acked), so a reset rewrites it too, to
# the same empty batch at the target (rewrite.rewrite_node), which it replays as nothing before it goes on from there.
REPLAYED = (
    "txid {txid} holds a batch at or past the coordinator's currtx, which a transactional spout "
    "(TransactionalTridentKafkaSpout, KafkaTridentSpoutTransactional) replays first: rewritten to an empty "
    "batch at {after} too, so that it replays nothing and goes on from {after}; an opaque spout drops it"
)


ONLY_REPLAYED = (
    "no state below the coordinator's currtx: the batch stored at txid {txid} is rewritten to an empty "
    "batch at {after}, from which a transactional spout goes on, but an opaque spout drops it and "
    "starts {topic}/{partition} as with no state (offctl makes up no transaction): left out for an "
    "opaque spout"
)


ZERO_IGNORED = "target {after}: storm-kafka ignores a stored offset <= 0 and starts from startOffsetTime instead"


NEW_RECORD = (
    "no record: created as storm-kafka writes one (PartitionManager.commit), for topology {topology} with "
    "the leader {broker} as its broker"
)


def plan_zookeeper(
    key: ConsumerKey,
    nodes: Iterable[ZkNode],
    cluster: Cluster,
    target: Target,
    *,
    scope: Scope = Scope(),
    static: frozenset[int] | None = None,
    time_offsets: Mapping[tuple[str, int], int | None] = {},  # noqa: B006 - read only
    captured_ms: int = 0,
    profile: SpoutProfile | None = None,
    batches: Iterable[ZkNode] = (),
) -> Plan:
    """Move the selected partitions of one spout: only the value of `offset` changes in each node, and every
    partition of the topic it reads that has no node gets a record as storm-kafka writes one (not a Trident
    spout: its row says what the emitter does). `static`: the partitions a StaticHosts spout reads. `profile`:
    the spout's settings, so a row left out says where this spout starts (None: where each setting starts it).
    `batches`: a Trident spout's batches stored at or past currtx besides its nodes (ZkNode.ahead, as read now),
    each rewritten with its partition (REPLAYED)."""
    changes: list[Change] = []
    spout = _applied(nodes, scope)
    stored = {b.path: b for b in batches}
    for node, record, applied in spout:
        if not scope.includes(applied, node.node_partition):
            continue
        changes += _node_changes(node, record, applied, cluster, target, time_offsets, stored)
    rows, lines = _unrecorded(
        scope, spout, cluster, every=True, static=static, rows_of_file=target.offsets if target.kind == "file" else ()
    )
    new = _new_record(key, spout, cluster, target, time_offsets, profile)
    changes = sorted(changes + [new(*row) for row in rows], key=lambda c: (c.topic or "", c.partition))
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, "not planned")
    return Plan(
        "reset", key, target.describe(), tuple(changes), captured_ms, warnings=tuple(lines) + _warnings(changes)
    )


def _node_changes(
    node: ZkNode,
    record: OffsetRecord,
    applied: str | None,
    cluster: Cluster,
    target: Target,
    time_offsets: Mapping[tuple[str, int], int | None],
    stored: Mapping[str, ZkNode],
) -> list[Change]:
    """The changes that move one selected node (`applied`: the topic its offset applies to): its own row, left out
    where it cannot be moved, and the Trident batches stored past it (REPLAYED)."""
    base, after, reasons = moved_row(node, record, applied, cluster, target, time_offsets, record.committed)
    if after is None:
        return [base]
    why = base.reasons
    data = rewrite_node(node, after)
    if data is None:
        return [replace(base, left_out=True, reasons=why + (NOT_AN_OBJECT,))]
    if after <= 0 and not node.trident:
        reasons += (ZERO_IGNORED.format(after=after),)
    elif node.trident and parse_zk_node(replace(node, data=data)).malformed:
        reasons += ("the state stays unusable after the rewrite (see its finding): fix or delete it by hand",)
    only = record.replay_only  # moves a transactional spout only
    if only:
        reasons += (
            ONLY_REPLAYED.format(txid=node.replay_txid, after=after, topic=applied, partition=node.node_partition),
        )
    return [
        replace(base, after=after, after_data=data, reasons=why + reasons, left_out=only),
        *_replayed_batches(node, stored, base, after),
    ]


NOT_AN_OBJECT = "node data is not a JSON object: fix or delete it by hand"


def moved_row(
    node: ZkNode,
    record: OffsetRecord,
    applied: str | None,
    cluster: Cluster,
    target: Target,
    time_offsets: Mapping[tuple[str, int], int | None],
    position: int | None,
) -> tuple[Change, int | None, tuple[str, ...]]:
    """One selected node's row (its before-image, and why where the spout cannot use its record), where the target
    moves it (`position`: where the spout resumes from the record, None where it has none it uses) and the target's
    reasons; where the target does not move it, the row as it stays, saying why, and None."""
    why: tuple[str, ...] = (
        (f"the spout cannot use this record ({record.malformed}); only its offset is rewritten",)
        if record.malformed
        else ()
    )
    base = Change(
        applied,
        node.node_partition,
        record.committed,
        None,
        why,
        path=node.path,
        version=node.version,
        before_data=node.data,
    )
    if applied is None:
        return replace(base, left_out=True, reasons=why + (UNKNOWN_TOPIC,)), None, ()
    if target.kind == "current" and position is None:
        return replace(base, left_out=True, reasons=why + ("no offset the spout uses, so none to keep",)), None, ()
    log, missing = _log_of(cluster, applied, node.node_partition)
    if log is None:
        return replace(base, reasons=why + (missing,)), None, ()
    moved, reasons = target_offset(target, applied, node.node_partition, position, log, time_offsets)
    if moved is None:
        chosen = _by_choice(target, applied, node.node_partition)
        return replace(base, left_out=not chosen, reasons=why + reasons), None, ()
    return base, moved, reasons


def _replayed_batches(node: ZkNode, stored: Mapping[str, ZkNode], base: Change, after: int) -> list[Change]:
    """The changes of a Trident partition's batches stored at or past currtx other than `node` (REPLAYED); one the
    read did not find (gone since) is left alone, and the write's version checks catch any that moved."""
    folder = node.path.rsplit("/", 1)[0]
    out = []
    for txid in node.ahead:
        batch = stored.get(f"{folder}/{txid}")
        if batch is None or batch.path == node.path:
            continue
        data = rewrite_node(batch, after)
        if data is None:
            out.append(
                replace(
                    base,
                    before=None,
                    path=batch.path,
                    version=batch.version,
                    before_data=batch.data,
                    batch=txid,
                    left_out=True,
                    reasons=(
                        f"txid {txid} holds a batch at or past the coordinator's currtx, which a "
                        f"transactional spout replays first, and it is not a JSON object: fix or "
                        f"delete it by hand",
                    ),
                )
            )
            continue
        out.append(
            replace(
                base,
                before=None,
                after=after,
                path=batch.path,
                version=batch.version,
                before_data=batch.data,
                after_data=data,
                batch=txid,
                reasons=(REPLAYED.format(txid=txid, after=after),),
            )
        )
    return out


def _new_record(
    key: ConsumerKey,
    spout: Applied,
    cluster: Cluster,
    target: Target,
    time_offsets: Mapping[tuple[str, int], int | None],
    profile: SpoutProfile | None,
):
    """The change for a partition without a node: a record as PartitionManager.commit writes it, for the
    topology of the spout's other records and with the partition's leader as broker, at the target's offset
    (under the same rules as the others); else a row left out saying what the spout does without one."""
    topology, no_topology = _spout_topology(spout)
    library = {applied: node.trident for node, _, applied in reversed(spout)}  # Trident: who wrote the topic's state

    def change(topic: str | None, partition: int, parent: str | None, why: str | None) -> Change:
        if why is not None:
            return Change(topic, partition, None, None, left_out=True, reasons=(why,))
        path = f"{parent}/partition_{partition}" if key.store == ZOOKEEPER else None
        base = Change(topic, partition, None, None, path=path)
        log, missing = _log_of(cluster, topic, partition)
        if log is None:
            return replace(base, reasons=(missing,))
        starts = _start_without_record(library.get(topic), f"{topic}/{partition}", log, profile)
        if key.store != ZOOKEEPER:
            return replace(
                base,
                left_out=True,
                reasons=(f"no state, and offctl creates no Trident state (one per transaction): left out; {starts}",),
            )
        after, reasons = target_offset(target, topic, partition, None, log, time_offsets)
        if after is None:
            chosen = _by_choice(target, topic, partition)
            return replace(
                base, left_out=not chosen, reasons=reasons + (() if chosen else (f"no record: left out; {starts}",))
            )
        leader = (log.leader or "").rpartition(":")
        if no_topology or not leader[0] or not leader[2].isdigit():
            missing = no_topology or (
                f"the broker names no leader of {topic}/{partition} to write as its broker, as storm-kafka does"
            )
            return replace(base, left_out=True, reasons=(f"no record, and {missing}: left out; {starts}",))
        data = storm_kafka_record(*topology, after, partition, leader[0], int(leader[2]), topic)
        if after <= 0:
            reasons += (ZERO_IGNORED.format(after=after),)
        return replace(
            base,
            after=after,
            version=CREATE,
            after_data=data,
            reasons=(NEW_RECORD.format(topology=printable(topology[0]), broker=log.leader),) + reasons,
        )

    return change


def _spout_topology(spout: Applied) -> tuple[tuple[str, str] | None, str]:
    """The topology (id, name) a new record of the spout is written for: the one its usable records name,
    exactly as they hold it; or why there is none to take (offctl does not guess between two)."""
    named = {
        found
        for node, record, _ in spout
        if not node.trident and record.malformed is None and (found := record_topology(node))
    }
    if not named:
        return None, "none of the spout's records names a topology the spout can use (every one is malformed)"
    ids = sorted({printable(i) for i, _ in named})
    if len(ids) > 1:
        return None, (
            f"its records name {len(ids)} topologies ({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}):"
            f" offctl does not guess whose record to write"
        )
    if len(named) > 1:
        return None, f"its records name topology {ids[0]} under {len(named)} names: offctl does not guess which"
    ((storm_id, name),) = named
    if not isinstance(name, str):
        return None, f"its records name topology {printable(storm_id)} without a name, which storm-kafka always writes"
    return (storm_id, name), ""


def _start_without_record(
    library: str | None, where: str, log: PartitionLog, profile: SpoutProfile | None = None
) -> str:
    """Where the spout starts a partition that has neither record nor state, in words, as behaviour decides it:
    with `profile`, where this spout starts (outcomes.start_outcome, first_poll_start); without, the default and
    what changes it."""
    if library == STORM_KAFKA_CLIENT:
        if profile is not None:
            start = first_poll_start(profile, log.log_start, log.log_end)
            return (
                f"with none, {TRIDENT_CLIENT_SEEK.member} starts {where} at {start.text()}, as its "
                f"firstPollOffsetStrategy {_strategy(profile.first_poll)} does ({TRIDENT_CLIENT_SEEK.tag_text})"
            )
        return (
            f"with none, {TRIDENT_CLIENT_SEEK.member} starts {where} at its firstPollOffsetStrategy: "
            f"{_each_first_poll(log)} ({TRIDENT_CLIENT_SEEK.tag_text})"
        )
    if profile is not None:
        outcome = start_outcome(profile, Library.STORM_KAFKA)  # the Trident emitter starts where the spout does
        cite = (
            outcome.citation
            if not library
            else storm_kafka_citation(
                "TridentKafkaEmitter.doEmitNewPartitionBatch", profile.storm_kafka.tag, "trident/TridentKafkaEmitter"
            )
        )
        return (
            f"with none, the spout (storm-kafka {profile.storm_kafka.releases}) starts {where} from "
            f"{outcome.sentence(0, log.log_start, log.log_end)} ({cite})"
        )
    cite = NO_TRIDENT_STATE if library else NO_RECORD
    start = configured_start(DEFAULTS, log.log_start, log.log_end)
    old = replace(DEFAULTS, storm_kafka=StormKafka.V0_9_3)  # 0.9.x without forceFromStart
    return (
        f"with none, the spout starts {where} from {start.label} ({start.offset}) by default, or in 0.9.x "
        f"without forceFromStart from the {start_outcome(old, Library.STORM_KAFKA).lands.value} "
        f"({configured_start(old, log.log_start, log.log_end).offset}) ({cite})"
    )


def plan_delete(
    key: ConsumerKey,
    nodes: Iterable[ZkNode],
    *,
    scope: Scope = Scope(),
    record_topic: str | None = None,
    written_by: str | None = None,
    captured_ms: int = 0,
) -> Plan:
    """Delete the spout's partition nodes that match every selector given: in `scope` (by the topic each
    offset applies to), naming `record_topic`, written by topology `written_by` (name or storm id). The
    spout then finds no offset for those partitions and starts them as its start-up rules say."""
    changes = []
    for node, record, applied in _selected(nodes, scope):
        if record_topic is not None and record.topic != record_topic:
            continue
        if written_by is not None and written_by not in (record.topology_id, record.topology_name):
            continue
        changes.append(
            Change(
                applied,
                node.node_partition,
                record.committed,
                None,
                path=node.path,
                version=node.version,
                before_data=node.data,
                delete=True,
                reasons=(DELETED,),
            )
        )
    what = (
        ", ".join(
            x
            for x in (
                scope.describe(),
                record_topic and f"records naming topic {record_topic}",
                written_by and f"written by {written_by}",
            )
            if x
        )
        or "every record"
    )
    return Plan("delete", key, f"delete {what}", tuple(changes), captured_ms)


# PartitionManager (storm-kafka v1.2.4): no record -> "No partition information found, using configuration to
# determine offset": startOffsetTime (0.10 on), the log end in 0.9.x (see docs/storm.md).
DELETED = (
    "deleted: the spout finds no offset for this partition and starts it as its start-up rules say "
    "(startOffsetTime from 0.10 on; see docs/storm.md)"
)
