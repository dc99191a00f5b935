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
from offctl.core.plans.targets import Scope, Target, ranges
from offctl.core.records.model import (
    KAFKA,
    Cluster,
    ConsumerKey,
    KafkaCommit,
    OffsetRecord,
    PartitionLog,
    ZkNode,
    iso_ms,
)
from offctl.core.records.parse import parse_zk_node
from offctl.core.rules.consumer import applied_topics

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
        # a JStorm spout's folder is its topic by its layout (jstorm rule 1), whatever its records name
        named.setdefault(node.folder_topic, set()).add(node.folder_topic if node.jstorm else record.topic)
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


def _by_choice(target: Target, topic: str, partition: int) -> bool:
    """The target leaves this partition alone on purpose: not in the offsets file, or not for the repair."""
    return target.kind == "repair" or (target.kind == "file" and (topic, partition) not in target.offsets)


OUTSIDE = "outside today's log range"


def _range_note(
    offset: int | None,
    log: PartitionLog | None,
    kept: str = "restored as it was (a restore never clamps)",
    said: str | None = None,
) -> tuple[str, ...]:
    """The note on a position outside the log: `offset`, where the spout fetches first (`said`: the offset stored and
    where the spout fetches, when they differ)."""
    if offset is None or log is None or log.log_start is None or log.log_end is None:
        return ()
    if not log.log_start <= offset <= log.log_end:
        return (f"offset {said or offset} is {OUTSIDE} [{log.log_start}, {log.log_end}]: {kept}",)
    return ()


HAND_MADE_OUT_OF_RANGE = "a hand-made file's offset {offset} is outside today's log range [{start}, {end}]: not written"


def _hand_made_range(offset: int | None, log: PartitionLog | None, said: str | None = None) -> str | None:
    """Why a hand-made restore must not write this position (outside the log, or no log to check), or None: `offset`,
    where the spout fetches first (`said`: the offset stored and where the spout fetches, when they differ)."""
    if offset is None or log is None or log.log_start is None or log.log_end is None:
        return "a hand-made file's offset cannot be checked against the log: not written"
    if not log.log_start <= offset <= log.log_end:
        return HAND_MADE_OUT_OF_RANGE.format(offset=said or offset, start=log.log_start, end=log.log_end)
    return None


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
