"""The plans that put a backup back: storm-kafka's records in ZooKeeper, a group's commits in Kafka. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from offctl.core.plans.plan import (
    CREATE,
    DELETE_GROUP,
    NO_OFFSET_DELETE,
    Change,
    Plan,
    _hand_made_range,
    _kafka_change,
    _log_of,
    _range_note,
    _since,
    _warnings,
    delete_offsets_line,
    named,
    with_undo_warnings,
)
from offctl.core.records.model import KAFKA, Cluster, ConsumerKey, KafkaCommit, OffsetRecord, ZkNode
from offctl.core.records.parse import parse_zk_node
from offctl.core.storm import jstorm


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
                _topic(node, record),
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
    changes += [_restored(old, now, now_dirs, cluster, hand_made) for old in saved]
    changes = _restore_rows(changes, changed, {n.path for n in batches})
    return Plan(
        "restore", key, f"backup {source}", tuple(changes), captured_ms, warnings=_warnings(changes, restore=True)
    )


def _restored(
    old: ZkNode, now: Mapping[str, ZkNode], now_dirs: Mapping[str, ZkNode], cluster: Cluster | None, hand_made: bool
) -> Change:
    """The row that puts one saved node back: left out where the spout has written a newer Trident txid since, or
    where a hand-made file's bytes are refused; created again where the node is gone; else its bytes written over
    what is there now."""
    record = parse_zk_node(old)
    node = now.get(old.path)
    topic = _topic(old, record)
    log = _log_of(cluster, topic, old.node_partition)[0] if cluster is not None else None
    at, said = _position(old, record)
    newer = now_dirs.get(old.path.rsplit("/", 1)[0]) if old.trident else None
    if node is None and newer is not None:  # Trident: the spout committed a newer txid since
        return Change(
            topic,
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
    if node is None:  # deleted since (offctl delete, or by hand): created again with its saved bytes
        refused = _hand_made_range(at, log, said) if hand_made else None
        return Change(
            topic,
            old.node_partition,
            None,
            None if refused else record.committed,
            reasons=(refused,) if refused else ("the node no longer exists: created again",),
            left_out=refused is not None,
            path=old.path,
            version=CREATE,
            after_data=None if refused else old.data,
        )
    if hand_made:
        refused = (
            f"a hand-made file's bytes the spout cannot use ({record.malformed}): not written"
            if record.malformed
            else _hand_made_range(at, log, said)
        )
        if refused:
            return Change(
                topic,
                old.node_partition,
                parse_zk_node(node).committed,
                None,
                path=old.path,
                reasons=(refused,),
                left_out=True,
            )
    return Change(
        topic,
        old.node_partition,
        parse_zk_node(node).committed,
        record.committed,
        reasons=_range_note(at, log, said=said),
        path=old.path,
        version=node.version,
        before_data=node.data,
        after_data=old.data,
    )


def _topic(node: ZkNode, record: OffsetRecord) -> str | None:
    """The topic a saved node's offset applies to: its record's, or a JStorm spout's own (its path's: jstorm rule 1)."""
    return node.folder_topic if node.jstorm else record.topic


def _position(node: ZkNode, record: OffsetRecord) -> tuple[int | None, str | None]:
    """Where the spout fetches first from a saved record, checked against the log, and its words where that is not the
    offset stored (JStorm's spout fetches it + 1: jstorm rule 4)."""
    if not node.jstorm or record.committed is None:
        return record.committed, None
    at = jstorm.resumes_at(record.committed)
    return at, f"{record.committed} (the spout fetches {at} first)"


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
