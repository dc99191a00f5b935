"""The safe-rewrite planner (spec section 4), pure: what a reset, restore or migrate would write, and
whether the guards allow it. Nothing here talks to a server.

A Plan holds one Change per partition: the committed offset before, the offset after, and why (clamped
to the log range, partition unknown, target 0 ignored by old spouts). For ZooKeeper a change also holds
the node's bytes and version as read and the bytes to write, where only the value of `offset` differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from offctl.core.plans.plancost import PlanCost
from offctl.core.plans.rewrite import rewrite_node
from offctl.core.plans.targets import Scope, Target, ranges
from offctl.core.records.model import (
    KAFKA,
    STORM_KAFKA_CLIENT,
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    KafkaCommit,
    OffsetRecord,
    PartitionLog,
    ZkNode,
    iso_ms,
)
from offctl.core.records.parse import (
    commit_metadata_json,
    parse_commit,
    parse_commit_metadata,
    parse_zk_node,
    record_topology,
    storm_kafka_record,
)
from offctl.core.rules.consumer import applied_topics, commit_resume
from offctl.core.storm.citations import (
    DO_SEEK,
    DO_SEEK_OURS,
    NO_RECORD,
    NO_TRIDENT_STATE,
    TRIDENT_CLIENT_SEEK,
    storm_kafka_citation,
)
from offctl.core.storm.outcomes import start_outcome
from offctl.core.storm.releases import FirstPoll, Library, Position, SpoutProfile, StormKafka
from offctl.core.storm.start import Resume, client_start, commit_is_ours, configured_start, first_poll_start
from offctl.inputs import printable

WRITE, UNCHANGED, SKIP, DELETE = "write", "unchanged", "skip", "delete"
CREATE = -1  # the version of a change that creates its node: the multi-op fails if the node exists


# --- plans ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One partition of a plan. `after` is None when the partition is skipped; `reasons` say why."""

    topic: str | None
    partition: int
    before: int | None
    after: int | None
    reasons: tuple[str, ...] = ()
    path: str | None = None  # ZooKeeper node
    version: int | None = None  # its version when read
    before_data: bytes | None = None
    after_data: bytes | None = None
    before_metadata: str | None = None  # Kafka commit metadata
    after_metadata: str | None = None
    had_commit: bool = True  # Kafka: False when the partition had no commit before
    delete: bool = False  # ZooKeeper: the node is deleted (offctl delete)
    left_out: bool = False  # skipped, though in the scope: the spout does not start this partition at the target
    # Trident: the txid of a batch stored at or past the coordinator's currtx, rewritten beside the partition's state
    # because a transactional spout replays it first; the partition's own row carries the cost
    batch: int | None = None

    @property
    def new_record(self) -> bool:
        """The change creates its node (a partition without a record, or one deleted since a backup)."""
        return self.version == CREATE and self.after_data is not None

    @property
    def action(self) -> str:
        if self.delete:
            return DELETE
        if self.after is None and self.after_data is None:
            return SKIP
        if self.path is not None:
            return UNCHANGED if self.after_data == self.before_data else WRITE
        if self.had_commit and self.after == self.before and self.after_metadata == self.before_metadata:
            return UNCHANGED
        return WRITE

    @property
    def delta(self) -> int | None:
        return None if self.before is None or self.after is None else self.after - self.before


@dataclass(frozen=True)
class GuardCheck:
    guard: str
    status: str  # pass | refused | overridden | not-applicable
    message: str


@dataclass(frozen=True)
class Plan:
    operation: str  # reset | restore | migrate
    key: ConsumerKey  # the consumer written to
    target: str  # what the operator asked for, in words
    changes: tuple[Change, ...]
    captured_ms: int
    source: ConsumerKey | None = None  # migrate: the spout read from
    warnings: tuple[str, ...] = ()
    guards: tuple[GuardCheck, ...] = ()
    cost: PlanCost | None = None  # the messages its writes replay and skip (offctl.core.plans.cost), once read
    group_had_commits: bool | None = None  # Kafka: whether the group had any commit when the plan was made

    def undone_by(self, c: Change) -> str | None:
        """How restoring this plan's backup undoes the change: "restore" (the before-image is written back),
        "delete-group" (the group had no commits before: the restore deletes it, see plan_restore_kafka) or
        "nothing" (it cannot be undone); None for a change that writes nothing."""
        if c.action not in (WRITE, DELETE):
            return None
        if self.key.store != KAFKA or c.had_commit:
            return "restore"
        return "delete-group" if self.group_had_commits is False else "nothing"

    @property
    def writes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.action in (WRITE, DELETE))

    @property
    def refused(self) -> tuple[GuardCheck, ...]:
        return tuple(g for g in self.guards if g.status == "refused")

    @property
    def left_out(self) -> tuple[Change, ...]:
        """Partitions in the scope that the plan cannot move: each row says what the spout does instead."""
        return tuple(c for c in self.changes if c.left_out)


CLAMPED = ": clamped"  # the end of the reason of every change the planner clamped, and of no other


def _clamp(wanted: int, log: PartitionLog) -> tuple[int, tuple[str, ...]]:
    if log.log_start is not None and wanted < log.log_start:
        return log.log_start, (f"target {wanted} is below the log start {log.log_start}{CLAMPED}",)
    if log.log_end is not None and wanted > log.log_end:
        return log.log_end, (f"target {wanted} is past the log end {log.log_end}{CLAMPED}",)
    return wanted, ()


def target_offset(
    target: Target,
    topic: str,
    partition: int,
    before: int | None,
    log: PartitionLog,
    time_offsets: Mapping[tuple[str, int], int | None],
) -> tuple[int | None, tuple[str, ...]]:
    """The offset a partition moves to, clamped to [log start, log end], with the reasons; None to skip."""
    if target.kind == "current":
        return _current(before, log)
    left = _left_alone(target, topic, partition, before, log)
    if left:
        return None, left
    wanted, why = _wanted(target, topic, partition, before, log, time_offsets)
    if wanted is None:
        return None, ("the broker did not give this partition's log offsets",)
    after, clamped = _clamp(wanted, log)
    return after, why + clamped


def _current(before: int | None, log: PartitionLog) -> tuple[int | None, tuple[str, ...]]:
    """Where --to current leaves a partition, unclamped."""
    # ConsumerGroupCommand.resetToCurrent: the committed offset as it is (no range check), and the log
    # end where there is no commit.
    if before is None:
        if log.log_end is None:
            return None, ("the broker did not give this partition's log offsets",)
        return log.log_end, ("no commit: the log end, as kafka-consumer-groups --to-current does",)
    outside = _range_note(before, log, "kept as it is, as kafka-consumer-groups --to-current does")
    return before, outside


def _left_alone(target: Target, topic: str, partition: int, before: int | None, log: PartitionLog) -> tuple[str, ...]:
    """Why the target leaves this partition alone (nothing to shift, not in the file, not to repair); () to move it."""
    if target.kind == "shift" and before is None:
        return ("no valid committed offset to shift from",)
    if target.kind == "file" and (topic, partition) not in target.offsets:
        return (f"not in {target.source}",)
    if target.kind == "repair":
        return _repaired(target, topic, partition, before, log)
    return ()


def _repaired(target: Target, topic: str, partition: int, before: int | None, log: PartitionLog) -> tuple[str, ...]:
    """Why a repair leaves this partition alone: not out of range when the audit ran, or no longer; () to repair it."""
    # Only what is still out of range when the plan is made: a spout may have moved since the audit.
    if (topic, partition) not in target.repair:
        return ("not found out of range by the audit",)
    if (
        before is not None
        and log.log_start is not None
        and log.log_end is not None
        and log.log_start <= before <= log.log_end
    ):
        return (f"back in range [{log.log_start}, {log.log_end}] since the audit: left alone",)
    return ()


def _wanted(
    target: Target,
    topic: str,
    partition: int,
    before: int | None,
    log: PartitionLog,
    time_offsets: Mapping[tuple[str, int], int | None],
) -> tuple[int | None, tuple[str, ...]]:
    """The offset the target asks for on a partition it moves, before clamping, with the reasons."""
    kind = target.kind
    if kind == "earliest":
        return log.log_start, ()
    if kind == "latest":
        return _latest(log)
    if kind == "offset":
        return target.offset, ()
    if kind == "shift":
        return before + target.by, ()
    if kind == "time":
        return _at_time(target, time_offsets.get((topic, partition)), log)
    if kind == "file":
        return target.offsets[(topic, partition)], ()
    if kind == "repair":
        # The log start for both: below it the messages are gone; above the log end the topic was
        # recreated or truncated, and its messages from the start were never read. No loss either way.
        return log.log_start, ("out of range: moved to the log start",)
    raise ValueError(f"unknown target {kind}")


def _latest(log: PartitionLog) -> tuple[int | None, tuple[str, ...]]:
    """Where --to latest moves a partition: the log end, or the last stable offset below an open transaction."""
    if log.last_stable is not None and log.log_end is not None and log.last_stable < log.log_end:
        # a spout that reads committed: where its consumer's seekToEnd lands. The log end would skip the records
        # of the open transaction once it is committed.
        return log.last_stable, (
            f"the last stable offset: the spout reads committed, and the "
            f"{log.log_end - log.last_stable} offsets to the log end {log.log_end} "
            f"are an open transaction's, which it reads once committed",
        )
    return log.log_end, ()


def _at_time(target: Target, found: int | None, log: PartitionLog) -> tuple[int | None, tuple[str, ...]]:
    """Where --to time moves a partition: the first message at or after the time, else the log end."""
    if found is None:
        return log.log_end, (f"no message at or after {iso_ms(target.at_ms)}: log end, as kafka-consumer-groups does",)
    return found, ()


def _log_of(cluster: Cluster, topic: str | None, partition: int) -> tuple[PartitionLog | None, str | None]:
    if not topic:
        return None, "the record names no topic"
    if topic not in cluster:
        return None, f"topic {topic} does not exist"
    if partition not in cluster[topic]:
        return None, f"partition {partition} does not exist in {topic} ({len(cluster[topic])} partitions)"
    return cluster[topic][partition], None


Applied = list[tuple[ZkNode, OffsetRecord, str | None]]  # a spout's nodes, parsed, with the topic each applies to


def _applied(nodes: Iterable[ZkNode], scope: Scope) -> Applied:
    """Every node of the spout, parsed, with the topic each applies to (consumer.applied_topics: its folder,
    the one --topic, or the spout's majority topic), in topic-folder and partition order."""
    ordered = sorted(nodes, key=lambda n: (n.folder_topic or "", n.node_partition))
    records = [parse_zk_node(n) for n in ordered]
    return list(zip(ordered, records, applied_topics(records, scope.one_topic)))


def _selected(nodes: Iterable[ZkNode], scope: Scope) -> Applied:
    """The spout's nodes in `scope` (see _applied)."""
    return [(node, record, t) for node, record, t in _applied(nodes, scope) if scope.includes(t, node.node_partition)]


# A partition in scope without a node: (topic, partition, the node a new record goes under, why none can be)
Unrecorded = tuple[str | None, int, str | None, str | None]


def _unrecorded(
    scope: Scope,
    spout: Applied,
    cluster: Cluster,
    *,
    every: bool = False,
    static: frozenset[int] | None = None,
    rows_of_file: Iterable[tuple[str, int]] = (),
) -> tuple[list[Unrecorded], list[str]]:
    """The partitions in `scope` that have no node, and one line per topic for partitions asked for that it
    does not have (or that a StaticHosts spout does not read).

    Which: those named with --topic T:LIST or --partitions, and `rows_of_file`; with `every`, also every
    partition of each topic the spout's records apply to (only the `static` ones of a StaticHosts spout),
    as kafka-consumer-groups covers every partition of a named topic. A new record goes in the folder of the
    topic's records, beside them; a <topic>/ folder only when a record in it names that topic (the wildcard
    layout, Partition.getId, v1.2.4), else the folder may be part of a spout id (AMBIGUOUS_SPOUT_ID)."""
    read, named = _record_folders(spout, scope)
    from_file: dict[str, set[int]] = {}
    for t, p in rows_of_file:
        if scope.includes(t, p):
            from_file.setdefault(t, set()).add(p)
    rows: list[Unrecorded] = []
    lines: list[str] = []
    for (t, folder, _), (parent, have) in sorted(read.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2])):
        wanted, said = _asked_of_read_topic(t, have, scope, cluster, every=every, static=static)
        lines += said
        why = _folder_doubt(folder, named)
        rows += [
            (t, p, parent if why is None else None, why) for p in sorted((wanted | from_file.get(t, set())) - have)
        ]
    read_topics = {t for t, _, _ in read}
    for t in dict.fromkeys([*(scope.topics or ([] if read_topics else [None])), *from_file]):
        if t not in read_topics:
            more, said = _unread_topic(t, scope, cluster, spout, from_file.get(t, set()))
            rows += more
            lines += said
    return rows, list(dict.fromkeys(lines))  # each line once, in the order first said


# What a spout's records say of where they are: (applied topic, folder, spout id) -> (their parent path, the
# partitions with a record), and folder -> the topics its records name
RecordFolders = tuple[dict[tuple[str, str | None, str], tuple[str, set[int]]], dict[str | None, set[str]]]


def _record_folders(spout: Applied, scope: Scope) -> RecordFolders:
    """Where the spout's records in the --topic scope are, per topic they apply to, folder and spout id, with the
    partitions they cover; and the topics each folder's records name."""
    read: dict[tuple[str, str | None, str], tuple[str, set[int]]] = {}
    named: dict[str | None, set[str]] = {}
    for node, record, t in spout:
        named.setdefault(node.folder_topic, set()).add(record.topic)
        if t is not None and (not scope.topics or t in scope.topics):
            parent = node.path.rsplit("/", 1)[0]
            read.setdefault((t, node.folder_topic, node.spout_id), (parent, set()))[1].add(node.node_partition)
    return read, named


def _asked_of_read_topic(
    t: str, have: set[int], scope: Scope, cluster: Cluster, *, every: bool, static: frozenset[int] | None
) -> tuple[set[int], list[str]]:
    """The partitions asked for of a topic the spout reads (with `every`, each it reads), and a line for those
    asked for that the topic does not have or a StaticHosts spout does not read."""
    asked, parts = scope.partitions_of(t), cluster.get(t)
    wanted = set(asked or ())
    if parts is None:
        return wanted, []
    lines = []
    if gone := sorted(wanted - set(parts) - have):  # a node of one is a row saying so
        lines.append(_absent_line(t, gone, parts))
    own = set(parts) if static is None else set(parts) & static
    if unread := sorted(wanted & set(parts) - own - have):
        lines.append(f"{t} partition {ranges(unread)}: not one the spout reads (--static-partitions): left out")
    return ((own if asked is None else own & asked) if every else wanted & own), lines


def _folder_doubt(folder: str | None, named: Mapping[str | None, set[str]]) -> str | None:
    """Why a new record cannot go in `folder` beside the records there (None: it can): a <topic>/ folder is one
    only when a record in it names that topic."""
    if folder is None or folder in named[folder]:
        return None
    return (
        f"no record, and no record in {folder}/ names topic {folder}: offctl cannot tell that it is a topic "
        f"folder (<topic>/partition_N) and not part of a spout id"
    )


def _unread_topic(
    t: str | None, scope: Scope, cluster: Cluster, spout: Applied, in_file: set[int]
) -> tuple[list[Unrecorded], list[str]]:
    """A topic asked for (--topic, an offsets file's rows) that none of the spout's records apply to: a row, which
    cannot be written, per partition asked for without a node, and a line for those the topic does not have."""
    wanted = set(scope.partitions_of(t) or ()) | in_file
    if not wanted:
        return [], []
    have = cluster.get(t) if t else None
    gone = sorted(p for p in scope.partitions_of(t) or () if have is not None and p not in have)
    why = (
        f"no record; {UNKNOWN_TOPIC}"
        if t is None
        else f"no record, and none of the spout's records is applied to {t}: offctl writes a new record only "
        f"for a topic the spout reads, beside its records"
    )
    on_node = {node.node_partition for node, _, a in spout if a == t}
    rows = [(t, p, None, why) for p in sorted(wanted - set(gone) - on_node)]
    return rows, [_absent_line(t, gone, have)] if gone else []


def _absent_line(topic: str, gone: Iterable[int], have: Mapping) -> str:
    return f"{topic} has no partition {ranges(gone)} (it has {len(have)}): left out"


def _file_rows_left(target: Target, planned: set[tuple[str | None, int]], scope: Scope, reason: str) -> list[Change]:
    """Rows of an offsets file that no change covers: each still appears in the plan, with why."""
    if target.kind != "file":
        return []
    return [
        Change(
            t,
            p,
            None,
            None,
            had_commit=False,
            reasons=(f"in {target.source}, outside the --topic/--partitions scope",)
            if not scope.includes(t, p)
            else (reason,),
        )
        for (t, p) in sorted(target.offsets)
        if (t, p) not in planned
    ]


def _kafka_change(topic: str | None, partition: int, commit: KafkaCommit | None, **kw) -> Change:
    """A Kafka change whose before is the partition's current commit (or none)."""
    return Change(
        topic,
        partition,
        commit.offset if commit else None,
        None,
        had_commit=commit is not None,
        before_metadata=commit.metadata if commit else None,
        **kw,
    )


UNKNOWN_TOPIC = (
    "offctl cannot tell which topic this spout reads (its records name several topics equally "
    "often, or none): give --topic"
)
# A batch stored at or past the coordinator's currtx: a transactional Trident spout replays it before it resumes
# (storm.stored_from; run: tests/test_trident_transactional_e2e.py, repair-not-acked), so a reset rewrites it too, to
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
        base = Change(
            applied,
            node.node_partition,
            record.committed,
            None,
            path=node.path,
            version=node.version,
            before_data=node.data,
        )
        why: tuple[str, ...] = (
            (f"the spout cannot use this record ({record.malformed}); only its offset is rewritten",)
            if record.malformed
            else ()
        )
        if applied is None:
            changes.append(replace(base, left_out=True, reasons=why + (UNKNOWN_TOPIC,)))
            continue
        if target.kind == "current" and record.committed is None:
            changes.append(replace(base, left_out=True, reasons=why + ("no offset the spout uses, so none to keep",)))
            continue
        log, missing = _log_of(cluster, applied, node.node_partition)
        if log is None:
            changes.append(replace(base, reasons=why + (missing,)))
            continue
        after, reasons = target_offset(target, applied, node.node_partition, record.committed, log, time_offsets)
        if after is None:
            changes.append(
                replace(base, left_out=not _by_choice(target, applied, node.node_partition), reasons=why + reasons)
            )
            continue
        data = rewrite_node(node, after)
        if data is None:
            changes.append(
                replace(
                    base, left_out=True, reasons=why + ("node data is not a JSON object: fix or delete it by hand",)
                )
            )
            continue
        if after <= 0 and not node.trident:
            reasons += (ZERO_IGNORED.format(after=after),)
        elif node.trident and parse_zk_node(replace(node, data=data)).malformed:
            reasons += ("the state stays unusable after the rewrite (see its finding): fix or delete it by hand",)
        only = record.replay_only  # moves a transactional spout only
        if only:
            reasons += (
                ONLY_REPLAYED.format(txid=node.replay_txid, after=after, topic=applied, partition=node.node_partition),
            )
        changes.append(replace(base, after=after, after_data=data, reasons=why + reasons, left_out=only))
        changes += _replayed_batches(node, stored, base, after)
    rows, lines = _unrecorded(
        scope, spout, cluster, every=True, static=static, rows_of_file=target.offsets if target.kind == "file" else ()
    )
    new = _new_record(key, spout, cluster, target, time_offsets, profile)
    changes = sorted(changes + [new(*row) for row in rows], key=lambda c: (c.topic or "", c.partition))
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, "not planned")
    return Plan(
        "reset", key, target.describe(), tuple(changes), captured_ms, warnings=tuple(lines) + _warnings(changes)
    )


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


def _by_choice(target: Target, topic: str, partition: int) -> bool:
    """The target leaves this partition alone on purpose: not in the offsets file, or not for the repair."""
    return target.kind == "repair" or (target.kind == "file" and (topic, partition) not in target.offsets)


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


DEFAULTS = SpoutProfile()  # the settings a plan names as "the default" when it does not know the spout's


def _first_polls() -> list[FirstPoll]:
    """The first-poll strategies in the order a plan names them: the default first, UNCOMMITTED_* before the others."""
    return sorted(FirstPoll, key=lambda s: (s is not DEFAULTS.first_poll, not s.uncommitted))


def _strategy(strategy: FirstPoll) -> str:
    return f"{strategy.value} (the default)" if strategy is DEFAULTS.first_poll else strategy.value


def _either(positions: Iterable[Position]) -> str:
    """ "the log start (0) or end (5)": positions joined, the words they share with the first said once."""
    texts = [p.text() for p in positions]
    shared = "the log "
    if all(t.startswith(shared) for t in texts):
        return " or ".join(texts[:1] + [t.removeprefix(shared) for t in texts[1:]])
    return " or ".join(texts)


def _each_first_poll(log: PartitionLog) -> str:
    """Where each first-poll strategy starts a partition without a commit (start.first_poll_start), grouped by
    where: "the log start (0) with UNCOMMITTED_EARLIEST (the default) or EARLIEST, the log end (5) with ..."."""
    by: dict[Position, list[FirstPoll]] = {}
    for strategy in _first_polls():
        start = first_poll_start(replace(DEFAULTS, first_poll=strategy), log.log_start, log.log_end)
        by.setdefault(start, []).append(strategy)
    return ", ".join(f"{start.text()} with {' or '.join(map(_strategy, chosen))}" for start, chosen in by.items())


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


def group_topology_id(commits: Iterable[KafkaCommit]) -> str | None:
    """The one topology id a group's Storm metadata names, or None when none or several."""
    ids = {m.topology_id for m in (parse_commit_metadata(c.metadata) for c in commits) if m}
    return ids.pop() if len(ids) == 1 else None


def _kafka_scope(
    scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster, target: Target
) -> tuple[list[tuple[str, int]], list[str]]:
    """The partitions a group's plan covers, and one line per part of the scope that names nothing.
    A named topic covers all of its partitions, as kafka-consumer-groups --topic does; no --topic covers
    the partitions the group has commits on. The rows of an offsets file are covered too, so a partition
    with no commit yet is planned."""
    tps, lines = (
        _named_topics(scope, current, cluster) if scope.topics else _committed_partitions(scope, current, target)
    )
    if target.kind == "file":
        tps |= set(target.offsets)
    return sorted(tp for tp in tps if scope.includes(*tp)), lines


def _named_topics(
    scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster
) -> tuple[set[tuple[str, int]], list[str]]:
    """The partitions of the topics --topic names, and a line for each part of them that does not exist."""
    tps: set[tuple[str, int]] = set()
    lines = []
    for t in scope.topics:
        found, line = _named_topic(t, scope, current, cluster)
        tps |= found
        if line:
            lines.append(line)
    return tps, lines


def _named_topic(
    t: str, scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster
) -> tuple[set[tuple[str, int]], str | None]:
    """One named topic's partitions (all it has, and those the group has commits on), and a line for the
    partitions asked for that it does not have, or for a topic that is not there at all."""
    have = cluster.get(t)
    ours = {tp for tp in current if tp[0] == t}
    if not have and not ours:
        return set(), f"topic {t} does not exist and the group has no commits on it: left out"
    tps = {(t, p) for p in (have or {})} | ours
    gone = sorted((scope.partitions_of(t) or frozenset()) - {p for _, p in tps})
    return tps, _absent_line(t, gone, have or {}) if gone else None


def _committed_partitions(
    scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], target: Target
) -> tuple[set[tuple[str, int]], list[str]]:
    """Without --topic: the partitions the group has commits on, and a line for --partitions it has none on."""
    tps = set(current)
    gone = sorted(
        (scope.partitions or frozenset())
        - {p for _, p in tps}
        - {p for _, p in (target.offsets or {}) if target.kind == "file"}
    )
    if gone:
        return tps, [
            f"the group has no commit on partition {ranges(gone)} of any topic: left out (name the "
            f"topic with --topic TOPIC:PARTITIONS to commit them)"
        ]
    return tps, []


def plan_kafka(
    group: str,
    commits: Iterable[KafkaCommit],
    cluster: Cluster,
    target: Target,
    *,
    scope: Scope = Scope(),
    topology_id: str | None = None,
    plain: bool = False,
    time_offsets: Mapping[tuple[str, int], int | None] = {},  # noqa: B006 - read only
    captured_ms: int = 0,
    profile: SpoutProfile | None = None,
) -> Plan:
    """Move a group's commits (see _kafka_scope for which). Each commit keeps its Storm metadata, or gets
    the metadata of --topology-id (or of the group's one topology) so the spout honours it; with `plain`,
    a commit that has none is written without it (--no-storm-metadata). `profile`: the spout's settings, so a
    row says what this spout does with the commit (None: what each first-poll strategy does)."""
    commits = [c for c in commits if c.group == group]
    current = {(c.topic, c.partition): c for c in commits}
    group_id = group_topology_id(commits)
    tps, lines = _kafka_scope(scope, current, cluster, target)
    changes: list[Change] = []
    for t, p in tps:
        commit = current.get((t, p))
        base = _kafka_change(t, p, commit)
        log, missing = _log_of(cluster, t, p)
        if log is None:
            changes.append(replace(base, reasons=(missing,)))
            continue
        after, reasons = target_offset(target, t, p, base.before, log, time_offsets)
        if after is None:
            chosen = _by_choice(target, t, p)  # an offsets file or a repair leaves it alone on purpose
            changes.append(
                replace(
                    base,
                    left_out=not chosen,
                    reasons=reasons
                    + (() if chosen else (f"left out; {_client_start(commit, f'{t}/{p}', log, profile)}",)),
                )
            )
            continue
        ok, meta, why = _storm_metadata(base.before_metadata, topology_id, group_id, plain, profile, after)
        if not ok and commit is not None and after == commit.offset:  # already there (--to current): kept as it is
            changes.append(replace(base, after=after, after_metadata=commit.metadata, reasons=reasons))
            continue
        if not ok:
            changes.append(
                replace(
                    base,
                    left_out=True,
                    reasons=reasons + (f"{why}: left out; {_client_start(commit, f'{t}/{p}', log, profile)}",),
                )
            )
            continue
        if commit is None:
            reasons += ("no commit before: a new commit is written",)
        changes.append(replace(base, after=after, after_metadata=meta, reasons=reasons + ((why,) if why else ())))
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, "not planned")
    return with_undo_warnings(
        Plan(
            "reset",
            ConsumerKey(KAFKA, group),
            target.describe(),
            tuple(changes),
            captured_ms,
            warnings=tuple(lines) + _warnings(changes),
            group_had_commits=bool(commits),
        )
    )


def _honours_any(strategy: FirstPoll) -> bool:
    """Whether a spout with this first-poll strategy resumes from a commit without Storm metadata (client_start)."""
    return client_start(replace(DEFAULTS, first_poll=strategy), 0, False, commit_is_ours(None, None)).uses_commit


def _plain(profile: SpoutProfile | None, offset: int = 0) -> str:
    """Why a commit of `offset` written without Storm metadata (--no-storm-metadata) is or is not honoured: by this
    spout (start.client_start), or by the first-poll strategies that honour any commit."""
    if profile is not None:
        return f"no Storm metadata (--no-storm-metadata): {_without_metadata(profile, offset)}"
    honour = [s for s in FirstPoll if _honours_any(s)]
    return (
        f"no Storm metadata (--no-storm-metadata): only a spout whose first-poll strategy is "
        f"{' or '.join(s.value for s in honour)} honours this commit"
    )


PLAIN = _plain(None)


def _without_metadata(profile: SpoutProfile, offset: int) -> str:
    """What a spout of `profile` does with a commit of `offset` without Storm metadata, as a clause."""
    return _clause(client_start(profile, offset, False, commit_is_ours(None, None)).why)


def _clause(sentence: str) -> str:
    """behaviour's whole sentence (Resume.why) as a clause of a row's reason, which has said already whether the
    spout resumes: without its opening "The spout resumes from this commit: " or "... ignores this commit: ", lower
    case first, no full stop."""
    head, colon, rest = sentence.partition(": ")
    if colon and head.startswith("The spout ") and head.endswith(" this commit"):
        return rest.removesuffix(".")
    return sentence[:1].lower() + sentence[1:].removesuffix(".")


def _client_start(
    commit: KafkaCommit | None, where: str, log: PartitionLog, profile: SpoutProfile | None = None
) -> str:
    """Where a storm-kafka-client spout starts a partition offctl leaves as it is, in words, as behaviour decides
    it (client_start, start_outcome): with `profile`, where this spout starts; without, where each
    firstPollOffsetStrategy does (KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology,
    v2.8.8)."""
    if profile is not None and commit is None:
        outcome = start_outcome(profile, Library.STORM_KAFKA_CLIENT)
        return (
            f"with no commit, the spout starts {where} at {outcome.sentence(0, log.log_start, log.log_end)}, as "
            f"its firstPollOffsetStrategy {_strategy(profile.first_poll)} does ({outcome.citation})"
        )
    if profile is not None:
        resume = commit_resume(profile, parse_commit(commit), None, log.log_start, log.log_end)
        if resume.crashes:
            return f"the spout throws on {where}'s commit {commit.offset}: {_clause(resume.why)}"
        return (
            f"the spout {'resumes' if resume.uses_commit else 'starts'} {where} at {resume.at.text()}: "
            f"{_clause(resume.why)}"
        )
    if commit is None:
        return (
            f"with no commit, the spout starts {where} at its firstPollOffsetStrategy: {_each_first_poll(log)} "
            f"({DO_SEEK})"
        )
    verdicts: dict[FirstPoll, Resume] = {
        s: client_start(replace(DEFAULTS, first_poll=s), commit.offset, False, False, log.log_start, log.log_end)
        for s in _first_polls()
    }
    resume = [s for s, r in verdicts.items() if r.uses_commit]
    ignore = [s for s, r in verdicts.items() if not r.uses_commit]
    return (
        f"the spout resumes {where} from the commit as it is ({commit.offset}) with "
        f"{' or '.join(map(_strategy, resume))}; {' and '.join(s.value for s in ignore)} ignore a commit that "
        f"is not their topology's and start at {_either(verdicts[s].at for s in ignore)} ({DO_SEEK_OURS})"
    )


def _storm_metadata(
    before: str | None,
    topology_id: str | None,
    group_id: str | None,
    plain: bool = False,
    profile: SpoutProfile | None = None,
    offset: int = 0,
) -> tuple[bool, str | None, str]:
    """Whether to write, the metadata of a commit offctl writes, and a reason when it is new or missing."""
    if topology_id:
        meta = parse_commit_metadata(before)
        if meta and meta.topology_id == topology_id:
            return True, before, ""
        return True, commit_metadata_json(topology_id), f"Storm metadata for {topology_id} written"
    if parse_commit_metadata(before):
        return True, before, ""
    if plain:
        return True, None, _plain(profile, offset)
    if group_id:
        return True, commit_metadata_json(group_id), f"Storm metadata of the group's topology {group_id} written"
    plain_for = (
        "for a spout whose first-poll strategy is UNCOMMITTED_*, which honours any commit"
        if profile is None
        else f"a commit without it: {_without_metadata(profile, offset)}"
    )
    return (
        False,
        None,
        (
            "no Storm metadata to keep: give --topology-id STORM_ID (the running topology's storm id, "
            f"written as the commit's Storm metadata) or --no-storm-metadata ({plain_for}) to write it"
        ),
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


def plan_migrate(
    spout: ConsumerKey,
    nodes: Iterable[ZkNode],
    group: str,
    commits: Iterable[KafkaCommit],
    cluster: Cluster,
    topology_id: str,
    *,
    scope: Scope = Scope(),
    captured_ms: int = 0,
    profile: SpoutProfile | None = None,
) -> Plan:
    """Copy a storm-kafka spout's ZooKeeper offsets into the Kafka group of its storm-kafka-client
    successor, with Storm metadata for `topology_id`, so the new spout starts where the old one stopped.
    `profile`: the new spout's settings, so a partition without a record says where that spout starts it."""
    current = {(c.topic, c.partition): c for c in commits if c.group == group}
    meta = commit_metadata_json(topology_id)
    changes: list[Change] = []
    every = _applied(nodes, scope)
    for node, record, applied in every:
        if not scope.includes(applied, node.node_partition):
            continue
        base = _kafka_change(applied, node.node_partition, current.get((applied, node.node_partition)))
        if applied is None:
            changes.append(replace(base, reasons=(UNKNOWN_TOPIC,)))
            continue
        if record.malformed:
            changes.append(
                replace(
                    base, reasons=(f"ZooKeeper record {node.path} is malformed ({record.malformed}): not migrated",)
                )
            )
            continue
        if record.committed <= 0:
            changes.append(
                replace(
                    base,
                    reasons=(
                        f"ZooKeeper offset {record.committed}: the old spout would "
                        f"start from startOffsetTime, so there is no position to "
                        f"migrate",
                    ),
                )
            )
            continue
        log, missing = _log_of(cluster, applied, record.partition)
        if log is None:
            changes.append(replace(base, reasons=(missing,)))
            continue
        after, reasons = _clamp(record.committed, log)
        reasons = (f"from {node.path}",) + reasons
        if base.had_commit and base.before != after:
            reasons += (f"replaces the group's commit {base.before}",)
        changes.append(replace(base, after=after, after_metadata=meta, reasons=reasons))
    rows, lines = _unrecorded(scope, every, cluster)
    changes += [
        Change(
            t,
            p,
            None,
            None,
            had_commit=False,
            reasons=("no ZooKeeper record for this partition",) + _new_spout_start(t, p, current, cluster, profile),
        )
        for t, p, _, _ in rows
    ]
    return with_undo_warnings(
        Plan(
            "migrate",
            ConsumerKey(KAFKA, group),
            f"offsets of {spout}",
            tuple(changes),
            captured_ms,
            source=spout,
            warnings=tuple(lines) + _warnings(changes),
            group_had_commits=bool(current),
        )
    )


def _new_spout_start(
    topic: str | None,
    partition: int,
    current: Mapping[tuple[str, int], KafkaCommit],
    cluster: Cluster,
    profile: SpoutProfile | None,
) -> tuple[str, ...]:
    """Where the new spout of `profile` starts a partition migrate leaves alone (none without a profile)."""
    log = _log_of(cluster, topic, partition)[0] if profile is not None else None
    if log is None:
        return ()
    return (_client_start(current.get((topic, partition)), f"{topic}/{partition}", log, profile),)


OUTSIDE = "outside today's log range"


def _range_note(
    offset: int | None, log: PartitionLog | None, kept: str = "restored as it was (a restore never clamps)"
) -> tuple[str, ...]:
    if offset is None or log is None or log.log_start is None or log.log_end is None:
        return ()
    if not log.log_start <= offset <= log.log_end:
        return (f"offset {offset} is {OUTSIDE} [{log.log_start}, {log.log_end}]: {kept}",)
    return ()


HAND_MADE_OUT_OF_RANGE = "a hand-made file's offset {offset} is outside today's log range [{start}, {end}]: not written"


def _hand_made_range(offset: int | None, log: PartitionLog | None) -> str | None:
    """Why a hand-made restore must not write this offset (outside the log, or no log to check), or None."""
    if offset is None or log is None or log.log_start is None or log.log_end is None:
        return "a hand-made file's offset cannot be checked against the log: not written"
    if not log.log_start <= offset <= log.log_end:
        return HAND_MADE_OUT_OF_RANGE.format(offset=offset, start=log.log_start, end=log.log_end)
    return None


def plan_restore_zookeeper(
    key: ConsumerKey,
    saved: Iterable[ZkNode],
    current: Iterable[ZkNode],
    cluster: Cluster | None,
    *,
    source: str,
    captured_ms: int = 0,
    hand_made: bool = False,
    absent: Iterable[str] = (),
    changed: Mapping[str, str] = {},  # noqa: B006 - read only
    batches: Iterable[ZkNode] = (),
) -> Plan:
    """Put each saved node's exact bytes back, checked against the version read now (a node deleted since
    is created again); delete the `absent` nodes, which did not exist before. From a `hand_made` file, only
    bytes the spout can use, with an offset inside today's log, are written. `changed`: the nodes that changed
    since the write the backup undoes, with what changed (the changed-since guard), said on their rows.
    `batches`: a Trident spout's batches stored at or past currtx now, besides `current` (a reset rewrote them)."""
    batches = list(batches)
    now_dirs, now = _restore_reads(list(current), batches)
    changes = []
    for path in absent:
        node = now.get(path)
        if node is None:
            continue  # gone already, as before
        record = parse_zk_node(node)
        changes.append(
            Change(
                record.topic,
                node.node_partition,
                record.committed,
                None,
                path=path,
                version=node.version,
                before_data=node.data,
                delete=True,
                reasons=("did not exist before: deleted again",),
            )
        )
    for old in saved:
        record = parse_zk_node(old)
        node = now.get(old.path)
        log = _log_of(cluster, record.topic, old.node_partition)[0] if cluster is not None else None
        newer = now_dirs.get(old.path.rsplit("/", 1)[0]) if old.trident else None
        if node is None and newer is not None:  # Trident: the spout committed a newer txid since
            changes.append(
                Change(
                    record.topic,
                    old.node_partition,
                    parse_zk_node(newer).committed,
                    None,
                    path=old.path,
                    left_out=True,
                    reasons=(
                        f"cannot be undone: the spout has written {newer.path} since, and resumes "
                        f"from it: reset the partition instead",
                    ),
                )
            )
            continue
        if node is None:  # deleted since (offctl delete, or by hand): created again with its saved bytes
            refused = _hand_made_range(record.committed, log) if hand_made else None
            changes.append(
                Change(
                    record.topic,
                    old.node_partition,
                    None,
                    None if refused else record.committed,
                    reasons=(refused,) if refused else ("the node no longer exists: created again",),
                    left_out=refused is not None,
                    path=old.path,
                    version=CREATE,
                    after_data=None if refused else old.data,
                )
            )
            continue
        if hand_made:
            refused = (
                f"a hand-made file's bytes the spout cannot use ({record.malformed}): not written"
                if record.malformed
                else _hand_made_range(record.committed, log)
            )
            if refused:
                changes.append(
                    Change(
                        record.topic,
                        old.node_partition,
                        parse_zk_node(node).committed,
                        None,
                        path=old.path,
                        reasons=(refused,),
                        left_out=True,
                    )
                )
                continue
        changes.append(
            Change(
                record.topic,
                old.node_partition,
                parse_zk_node(node).committed,
                record.committed,
                reasons=_range_note(record.committed, log),
                path=old.path,
                version=node.version,
                before_data=node.data,
                after_data=old.data,
            )
        )
    changes = _restore_rows(changes, changed, {n.path for n in batches})
    return Plan(
        "restore", key, f"backup {source}", tuple(changes), captured_ms, warnings=_warnings(changes, restore=True)
    )


def _restore_reads(current: list[ZkNode], batches: list[ZkNode]) -> tuple[dict[str, ZkNode], dict[str, ZkNode]]:
    """What a restore compares with: the node each Trident partition resumes from now, by its folder, and every node
    read now (with the Trident batches at or past currtx), by path."""
    return ({n.path.rsplit("/", 1)[0]: n for n in current if n.trident}, {n.path: n for n in [*current, *batches]})


def _restore_rows(changes: list[Change], changed: Mapping[str, str], batches: set[str]) -> list[Change]:
    """The restore's rows with what changed since the write said on each, and a Trident batch's (a path in
    `batches`) marked as the reset's was, so that it is costed with its partition's own row."""
    return [
        _since(replace(c, batch=int(c.path.rsplit("/", 1)[1])) if c.path in batches else c, changed.get(c.path))
        for c in changes
    ]


def plan_restore_kafka(
    group: str,
    saved: Iterable[KafkaCommit | tuple[str, int]],
    current: Iterable[KafkaCommit],
    cluster: Cluster | None,
    *,
    source: str,
    captured_ms: int = 0,
    hand_made: bool = False,
    had_commits: bool | None = None,
    members: bool = False,
    changed: Mapping[tuple[str, int], str] = {},
) -> Plan:  # noqa: B006 - read only
    """Put each saved commit (offset and metadata) back. `saved` holds (topic, partition) for partitions
    that had no commit before: Kafka removes a single commit only with OffsetDelete, which offctl cannot send,
    so the restore deletes the whole group when that is a true undo (`had_commits` is False: the group had no
    commits at all before the write; it now holds commits only on those partitions; it has no `members`),
    and otherwise leaves them out, saying so (exit 7). `changed`: the partitions that changed since the write
    the backup undoes, with what changed (the changed-since guard), said on their rows."""
    now = {(c.topic, c.partition): c for c in current if c.group == group}
    deletable, why_not = _group_deletable(saved, now, had_commits, members, hand_made)
    changes = []
    for old in saved:
        if isinstance(old, tuple):
            commit = now.get(old)
            base = _kafka_change(*old, commit)
            if commit is None:
                changes.append(replace(base, reasons=("had no commit before, and has none now",)))
            elif deletable:
                changes.append(
                    replace(
                        base,
                        delete=True,
                        reasons=(
                            f"had no commit before: the restore deletes group {group}, which had no commits before the "
                            f"write and holds only the commits it made ({DELETE_GROUP})",
                        ),
                    )
                )
            else:
                changes.append(
                    replace(
                        base,
                        left_out=True,
                        reasons=(
                            f"cannot be undone: had no commit before, and {why_not}; {NO_OFFSET_DELETE}. By hand, with "
                            f"the group's consumers stopped: {delete_offsets_line(group, [old])}",
                        ),
                    )
                )
            continue
        log = _log_of(cluster, old.topic, old.partition)[0] if cluster is not None else None
        base = _kafka_change(old.topic, old.partition, now.get((old.topic, old.partition)))
        refused = _hand_made_range(old.offset, log) if hand_made else None
        if refused:
            changes.append(replace(base, reasons=(refused,), left_out=True))
            continue
        changes.append(
            replace(base, after=old.offset, after_metadata=old.metadata, reasons=_range_note(old.offset, log))
        )
    changes = [_since(c, changed.get((c.topic, c.partition))) for c in changes]
    plan = Plan(
        "restore",
        ConsumerKey(KAFKA, group),
        f"backup {source}",
        tuple(changes),
        captured_ms,
        warnings=_warnings(changes, restore=True),
        group_had_commits=bool(now),
    )
    return with_undo_warnings(plan)


def _group_deletable(
    saved: Iterable[KafkaCommit | tuple[str, int]],
    now: Mapping[tuple[str, int], KafkaCommit],
    had_commits: bool | None,
    members: bool,
    hand_made: bool,
) -> tuple[bool, str]:
    """Whether deleting the group puts back the state before the write, or why not."""
    saved = list(saved)
    if hand_made:
        return False, "a hand-made file's word on the group's commits before the write is not trusted"
    if had_commits is None:
        return False, "the backup (format 2) does not say whether the group had any commit before the write"
    if had_commits or any(not isinstance(old, tuple) for old in saved):
        return False, "the group had commits on other partitions before the write, so deleting it is no undo"
    made = {old for old in saved if isinstance(old, tuple)}
    others = sorted(tp for tp in now if tp not in made)
    if others:
        return False, (
            f"the group now has commits the write did not make ({named(f'{t}/{p}' for t, p in others)}), "
            f"which deleting the group would remove"
        )
    if members:
        return False, "the group has members now, and the broker deletes only a group without members"
    return True, ""


CHANGED_SINCE = "changed since the write this backup undoes"
AS_BEFORE = "holds its before-image already: nothing to put back"


def _since(c: Change, what: str | None) -> Change:
    """The change with what changed since the write it undoes first among its reasons (the changed-since guard);
    or, where it holds its before-image already (the write never landed there, or was undone), saying so."""
    if what is not None:
        return replace(c, reasons=(f"{CHANGED_SINCE}: {what}",) + c.reasons)
    return replace(c, reasons=(AS_BEFORE,) + c.reasons) if c.action == UNCHANGED else c


def named(items: Iterable[str], most: int = 10) -> str:
    """At most `most` items, then "and N more"."""
    items = list(items)
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more


def delete_offsets_line(group: str, partitions: Iterable[tuple[str, int]]) -> str:
    """The kafka-consumer-groups line that removes these commits (OffsetDelete, KIP-496, Kafka 2.4.0:
    --delete-offsets takes --topic T:P,Q, ConsumerGroupCommand.deleteOffsets at 2.4.0)."""
    by: dict[str, list[int]] = {}
    for t, p in sorted(partitions):
        by.setdefault(t, []).append(p)
    topics = " ".join(f"--topic {t}:{','.join(map(str, ps))}" for t, ps in by.items())
    return f"kafka-consumer-groups --bootstrap-server BROKERS --delete-offsets --group {group} {topics}"


# KIP-229 (Kafka 1.1.0) added DeleteGroups; the broker deletes only a group without members: Empty is deleted,
# any other live state answers NON_EMPTY_GROUP (GroupCoordinator.handleDeleteGroups, core/src/main/scala/kafka/
# coordinator/group/GroupCoordinator.scala at 1.1.0; from 3.7.0 ClassicGroup.validateDeleteGroup and
# ConsumerGroup.validateDeleteGroup in group-coordinator/). confluent-kafka's AdminClient sends it
# (delete_consumer_groups) but not OffsetDelete (KIP-496, Kafka 2.4.0), which removes one partition's commit.
DELETE_GROUP = "DeleteGroups, KIP-229, Kafka 1.1.0: the broker deletes only a group without members"
NO_OFFSET_DELETE = (
    "removing one partition's commit needs OffsetDelete (KIP-496, Kafka 2.4.0), which offctl's "
    "client (confluent-kafka's AdminClient) does not send"
)


def undo_warnings(plan: Plan) -> tuple[str, ...]:
    """What the undo of a Kafka plan cannot put back, said before the write: a commit written where the
    group had none is removed only by deleting the whole group, which the restore does only when the group
    had no commits at all before the write."""
    new = [c for c in plan.changes if plan.undone_by(c) in ("delete-group", "nothing")]
    if not new:
        return ()
    group = plan.key.consumer
    if plan.group_had_commits is False:
        return (
            f"undone by deleting group {group}, which had no commits before: its restore deletes the group "
            f"while it has no members and holds only the commits this write made ({DELETE_GROUP})",
        )
    cannot = [c for c in new if plan.undone_by(c) == "nothing"]
    return (
        f"cannot be undone for {len(cannot)} partition(s): {named(f'{c.topic}/{c.partition}' for c in cannot)}: "
        f"they had no commit before, and the group has commits elsewhere, so its restore cannot delete the "
        f"group; {NO_OFFSET_DELETE}. By hand, with the group's consumers stopped: "
        f"{delete_offsets_line(group, [(c.topic, c.partition) for c in cannot])}",
    )


def with_undo_warnings(plan: Plan) -> Plan:
    return replace(plan, warnings=plan.warnings + undo_warnings(plan))


def _warnings(changes: Iterable[Change], *, restore: bool = False) -> tuple[str, ...]:
    """Plan-level warnings: what the operator must read before executing."""
    changes = list(changes)
    return _offset_warnings(changes) + _unmoved_warnings(changes, restore=restore)


def _offset_warnings(changes: list[Change]) -> tuple[str, ...]:
    """What the offsets the plan writes mean: <= 0 (storm-kafka ignores them), clamped, outside the log range."""
    out = []
    zero = _written_with(changes, "ignores a stored offset <= 0")
    if zero:
        out.append(
            f"{len(zero)} partition(s) would get offset <= 0, which storm-kafka ignores: the spout "
            f"starts them from its startOffsetTime instead (see 'why')"
        )
    clamped = [c for c in changes if any(r.endswith(CLAMPED) for r in c.reasons)]
    if clamped:
        out.append(f"{len(clamped)} partition(s) clamped to the log range")
    outside = _written_with(changes, OUTSIDE)
    if outside:
        out.append(
            f"{len(outside)} partition(s) written with an offset outside today's log range, not clamped (see 'why')"
        )
    return tuple(out)


def _written_with(changes: list[Change], text: str) -> list[Change]:
    """The changes written whose reasons say `text`."""
    return [c for c in changes if c.action == WRITE and any(text in r for r in c.reasons)]


def _unmoved_warnings(changes: list[Change], *, restore: bool) -> tuple[str, ...]:
    """What the plan does not move: partitions skipped, and those left out (a restore cannot undo them)."""
    out = []
    skipped = [c for c in changes if c.action == SKIP]
    if skipped:
        out.append(f"{len(skipped)} partition(s) skipped (see 'why')")
    left = [c for c in changes if c.left_out]
    if left and restore:
        out.append(
            f"cannot be undone for {len(left)} partition(s): "
            f"{named(f'{c.topic}/{c.partition}' for c in left)} (see 'why'); exit code 7 unless a guard or the "
            f"write fails"
        )
    elif left:
        out.append(
            f"{len(left)} partition(s) left out: the plan cannot move them to the target (see 'why'); exit "
            f"code 7 unless a guard or the write fails"
        )
    return tuple(out)


# --- verification ---------------------------------------------------------------------------------------


def verify_zookeeper(plan: Plan, read_back: Mapping[str, bytes | None]) -> list[str]:
    """Problems found reading the written nodes back: each must hold exactly the planned bytes, and each
    deleted node must be gone."""
    return [
        f"{c.path} still exists after its deletion"
        if c.delete
        else f"{c.path} holds {_show(read_back.get(c.path))} instead of the planned offset {c.after}"
        for c in plan.writes
        if read_back.get(c.path) != c.after_data
    ]


@dataclass(frozen=True)
class KafkaReadBack:
    """What reading a group's commits back after a write finds: `problems` fail the verification (exit 5),
    `notes` are said with the result."""

    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def verify_kafka(
    plan: Plan,
    read_back: Mapping[tuple[str, int], tuple[int, str | None]],
    profile: SpoutProfile = SpoutProfile(),
    running: frozenset[str] | None = None,
    topology_id: str | None = None,
) -> KafkaReadBack:
    """Check the group's commits read back: the planned offset on each, and whether a spout of `profile`
    resumes from it as the broker kept it (consumer.commit_resume: the answer inspect gives). `topology_id`: the
    storm id the operator named for the commits (--topology-id), counted as running alongside `running`.
    Metadata the broker did not keep fails only where the spout would therefore ignore the commit; where it
    still resumes from it (UNCOMMITTED_*), a note says what a spout whose strategy ignores it would do."""
    if any(c.delete for c in plan.writes):  # the group was deleted: none of its commits may be left
        return KafkaReadBack(
            tuple(
                f"{t}/{p} still has commit {o} after group {plan.key.consumer} was deleted"
                for (t, p), (o, _) in sorted(read_back.items())
            )
        )
    if topology_id:
        running = (running or frozenset()) | {topology_id}
    problems, dropped = [], []
    for c in plan.writes:
        where = f"{c.topic}/{c.partition}"
        got = read_back.get((c.topic, c.partition))
        if got is None:
            problems.append(f"{where} has no commit after writing {c.after}")
            continue
        if got[0] != c.after:
            problems.append(f"{where} is at {got[0]}, not the planned {c.after}")
            continue
        verdict = commit_resume(
            profile, parse_commit(KafkaCommit(plan.key.consumer, c.topic, c.partition, got[0], got[1])), running
        )
        kept = got[1] == c.after_metadata
        if verdict.crashes:
            problems.append(f"{where}: the broker kept {_meta(got[1])}, on which {_clause(verdict.why)}")
        elif not verdict.uses_commit:
            lost = "" if kept else f"the broker kept {_meta(got[1])} instead of the Storm metadata written, and "
            problems.append(f"{where}: {lost}the spout will ignore this commit: {verdict.reason}")
        elif not kept:
            dropped.append((where, got[1]))
    notes = ()
    if dropped:
        kept_as = sorted({_meta(m) for _, m in dropped})
        ignore = [s for s in FirstPoll if not _honours_any(s)]
        edges = [first_poll_start(replace(DEFAULTS, first_poll=s), None, None) for s in ignore]
        notes = (
            f"The broker did not keep the Storm metadata written on {_listed([w for w, _ in dropped])} (it "
            f"kept {' or '.join(kept_as)}). A spout with {profile.first_poll.value} still resumes from these "
            f"commits; one with {' or '.join(s.value for s in ignore)} would ignore them and start at "
            f"{_either(edges)} ({DO_SEEK_OURS}).",
        )
    return KafkaReadBack(tuple(problems), notes)


def _meta(metadata: str | None) -> str:
    if not metadata:
        return "no metadata"
    return "metadata " + repr(metadata if len(metadata) <= 80 else metadata[:77] + "...")


def _listed(items: list[str], most: int = 10) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more partition(s)" if len(items) > most else "")


def _show(data: bytes | None) -> str:
    if data is None:
        return "nothing (node gone)"
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= 120 else text[:117] + "...")
