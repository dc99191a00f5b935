"""`offctl restore` as a library call: a backup's before-image planned against the state read now (what changed
since the write), guarded and written back through the safe writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from offctl.adapters.backup import load_backup
from offctl.core.plans.guards import changed_kafka, changed_zookeeper, with_guards
from offctl.core.plans.restore import plan_restore_kafka, plan_restore_zookeeper
from offctl.core.records.model import JSTORM, TRIDENT, ZK_STORES, ZOOKEEPER, ConsumerKey, KafkaCommit, Snapshot
from offctl.core.records.parse import parse_commit, parse_zk_node
from offctl.core.results.repair import RepairResult
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import UsageError
from offctl.pipeline.read import open_stores
from offctl.repair.reads import (
    Confirm,
    ReadBack,
    costed,
    guard_facts,
    names_of,
    need_servers,
    read_state,
    topologies_of,
    trident_batches,
)
from offctl.repair.writer import execute_plan
from offctl.settings.connection import Connection, normalize_root
from offctl.settings.run import Safety, Selection


def restore(
    conn: Connection,
    path: Path,
    safety: Safety,
    confirm: Confirm,
    *,
    hand_made: bool = False,
    profile: SpoutProfile | None = None,
) -> RepairResult:
    """Put a backup's before-image back, byte for byte, through the same guards and writer. A backup must
    pass its checksum; a `hand_made` file need not, but what it says must pass the planner's checks."""
    backup = load_backup(path, hand_made=hand_made)
    key = backup.key
    own = key if key.store in (TRIDENT, JSTORM) else None
    roots, selection = _restore_reads(conn, path, key)
    with open_stores(replace(conn, zk_roots=tuple(roots))) as (zk, kafka):
        snapshot, records = read_state(zk, kafka, roots, selection, conn.storm_root, own, profile)
        batches = trident_batches(zk, snapshot.zk_nodes) if key.store == TRIDENT else []
        since = _since_write(backup, replace(snapshot, zk_nodes=(*snapshot.zk_nodes, *batches)), hand_made)
        if key.store in ZK_STORES:
            plan = plan_restore_zookeeper(
                key,
                backup.nodes,
                snapshot.zk_nodes,
                snapshot.cluster,
                source=str(path),
                captured_ms=snapshot.captured_ms,
                hand_made=hand_made,
                absent=() if hand_made else backup.absent,
                changed=since.changed,
                batches=batches,
            )
            saved = list(map(parse_zk_node, backup.nodes))
            js = key.store == JSTORM
            facts = guard_facts(
                snapshot,
                conn,
                safety,
                topology_ids=topologies_of(records) | topologies_of(saved),
                zk_paths=True,
                groups=(),
                jstorm_root=key.zk_root if js else None,
                topology_names=names_of([*records, *saved]) if js else (),
            )
            # offctl's own write, still untouched, is no sign that something else is committing
            own = backup.own_writes([*snapshot.zk_nodes, *batches])
            facts = replace(facts, zk_modified_ms={p: m for p, m in facts.zk_modified_ms.items() if p not in own})
        else:
            state = next((g for g in snapshot.groups if g.group == key.consumer), None)
            plan = plan_restore_kafka(
                key.consumer,
                backup.commits,
                snapshot.commits,
                snapshot.cluster,
                source=str(path),
                captured_ms=snapshot.captured_ms,
                hand_made=hand_made,
                had_commits=backup.group_had_commits,
                members=bool(state and state.active),
                changed=since.changed,
            )
            saved = topologies_of(parse_commit(c) for c in backup.commits if isinstance(c, KafkaCommit))
            facts = guard_facts(
                snapshot,
                conn,
                safety,
                topology_ids=topologies_of(records) | saved,
                zk_paths=False,
                groups=(key.consumer,),
            )
        facts = replace(
            facts,
            restore=True,
            changed_since=since.lines,
            changed_since_unknown=since.unknown,
            changed_since_na=since.na,
        )
        plan = with_guards(plan, facts, safety.force)
        judged = ReadBack(profile or SpoutProfile(), snapshot.running)
        return execute_plan(
            costed([plan], kafka, snapshot.cluster, judged)[0], zk, kafka, conn, safety, confirm, judged
        )


def _restore_reads(conn: Connection, path: Path, key: ConsumerKey) -> tuple[list[str], Selection]:
    """What a restore of `key` reads (the zkRoots and the selection), once the servers it needs are given and a
    spout's backup is of the zkRoot named."""
    if key.store == TRIDENT:
        need_servers(conn, zk=True, why=f"restoring {key}")
        return [], Selection()
    if key.store == JSTORM:
        need_servers(conn, zk=True, why=f"restoring {key}")
        if conn.jstorm_roots and normalize_root(conn.jstorm_roots[0], "--jstorm-root") != key.zk_root:
            raise UsageError(f"{path} is for JStorm root {key.zk_root}, not {conn.jstorm_roots[0]}")
        return [], Selection()
    if key.store == ZOOKEEPER:
        need_servers(conn, zk=True, why=f"restoring {key}")
        if conn.zk_roots and normalize_root(conn.zk_roots[0]) != key.zk_root:
            raise UsageError(f"{path} is for zkRoot {key.zk_root}, not {conn.zk_roots[0]}")
        return [key.zk_root], Selection(spouts=(key.consumer,))
    need_servers(conn, kafka=True, why=f"restoring {key}")
    return [], Selection(groups=(key.consumer,))


@dataclass(frozen=True)
class _Since:
    """What changed since the write a backup undoes: per row (path or (topic, partition)) for the plan, as lines
    for the guard; or why offctl cannot tell (`unknown`), or why the guard does not apply (`na`)."""

    changed: dict = field(default_factory=dict)
    lines: tuple[str, ...] | None = None
    unknown: str = ""
    na: str = ""


def _since_write(backup, snapshot: Snapshot, hand_made: bool) -> _Since:
    """Compare the store now with the after-image and the before-image the backup keeps (the changed-since guard:
    a partition holding either is no later work)."""
    if hand_made:
        return _Since(
            na="a hand-made file: offctl trusts no after-image in it, so it cannot tell what changed "
            "since a write (the planner's checks still apply)"
        )
    if backup.key.store in ZK_STORES:
        after = backup.after or {}
        changed = changed_zookeeper(after, snapshot.zk_nodes, backup.before)
        lines = tuple(f"{path}: {what}" for path, what in changed.items())
        where = [p for p in backup.before if p not in after]
    else:
        if backup.commits_after is None:
            return _Since(
                unknown=f"the backup (format {backup.format}) keeps no after-image of a Kafka write; "
                f"--force changed-since restores it as it is"
            )
        group = backup.key.consumer
        changed = changed_kafka(
            backup.commits_after, [c for c in snapshot.commits if c.group == group], backup.commits_before
        )
        lines = tuple(f"{t}/{p}: {what}" for (t, p), what in changed.items())
        where = []
    if where:
        return _Since(
            changed,
            unknown=f"the backup keeps no after-image of {', '.join(where[:10])}"
            f"{f' and {len(where) - 10} more' if len(where) > 10 else ''}",
        )
    return _Since(changed, lines)
