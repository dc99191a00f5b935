"""`offctl migrate` and `offctl delete` as library calls: move a spout's offsets to another store or consumer, or
delete its records, each planned, guarded and written through the safe writer.
"""

from __future__ import annotations

from dataclasses import replace

from offctl.core.plans.guards import with_guards
from offctl.core.plans.jstorm import delete_words
from offctl.core.plans.kafka import plan_migrate
from offctl.core.plans.targets import Scope
from offctl.core.plans.zookeeper import plan_delete
from offctl.core.records.model import JSTORM, ZOOKEEPER, ConsumerKey
from offctl.core.results.repair import RepairResult
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import UsageError
from offctl.pipeline.read import open_stores
from offctl.repair.reads import (
    Confirm,
    ReadBack,
    check_consumer,
    costed,
    guard_facts,
    names_of,
    need_servers,
    read_state,
    topologies_of,
)
from offctl.repair.writer import execute_plan
from offctl.settings.connection import Connection, normalize_root
from offctl.settings.run import Safety, Selection, check_jstorm_id, check_spout_id


def migrate(
    conn: Connection,
    spout: str,
    group: str,
    topology_id: str,
    safety: Safety,
    confirm: Confirm,
    *,
    scope: Scope = Scope(),
    profile: SpoutProfile | None = None,
) -> RepairResult:
    """Copy a storm-kafka spout's ZooKeeper offsets into a storm-kafka-client group, with Storm metadata.
    `profile`: the group's spout settings (None: the defaults judge the read-back)."""
    check_consumer(spout, group)
    if not topology_id:
        raise UsageError(
            "migrate needs --topology-id: the storm id of the storm-kafka-client topology, so "
            "its spout honours the commits"
        )
    need_servers(conn, zk=True, root=True, kafka=True, why="migrate")
    root = normalize_root(conn.zk_roots[0])
    source = ConsumerKey(ZOOKEEPER, spout, root)
    with open_stores(replace(conn, zk_roots=(root,))) as (zk, kafka):
        snapshot, records = read_state(zk, kafka, [root], Selection(spouts=(spout,), groups=(group,)), conn.storm_root)
        if not snapshot.zk_nodes:
            raise UsageError(f"spout id '{spout}' has no partition records under {root}")
        plan = plan_migrate(
            source,
            snapshot.zk_nodes,
            group,
            snapshot.commits,
            snapshot.cluster or {},
            topology_id,
            scope=scope,
            captured_ms=snapshot.captured_ms,
            profile=profile,
        )
        topologies = topologies_of(records) | {topology_id}
        facts = guard_facts(snapshot, conn, safety, topology_ids=topologies, zk_paths=True, groups=(group,))
        plan = with_guards(plan, facts, safety.force)
        judged = ReadBack(profile or SpoutProfile(), snapshot.running, topology_id)
        return execute_plan(
            costed([plan], kafka, snapshot.cluster, judged)[0], zk, kafka, conn, safety, confirm, judged
        )


def delete(
    conn: Connection,
    spout: str | None,
    safety: Safety,
    confirm: Confirm,
    *,
    scope: Scope = Scope(),
    record_topic: str | None = None,
    written_by: str | None = None,
    every: bool = False,
    jstorm: str | None = None,
) -> RepairResult:
    """Delete some of a storm-kafka spout's partition records (stale ones, left by another topology), or of a JStorm
    spout's (`jstorm`: its TOPIC/CLIENT_ID, under the one --jstorm-root), through the same guards, backup, versioned
    multi-op and audit log; `offctl restore` creates them again."""
    _check_deleted(spout, jstorm)
    _check_selectors(scope, record_topic, written_by, every)
    key = _deleted(conn, spout, jstorm)
    js = key.store == JSTORM
    roots = [] if js else [key.zk_root]
    selection = Selection() if js else Selection(spouts=(key.consumer,))
    with open_stores(replace(conn, zk_roots=tuple(roots), bootstrap_servers=None)) as (zk, kafka):
        snapshot, records = read_state(zk, None, roots, selection, conn.storm_root, key if js else None)
        if not snapshot.zk_nodes:
            raise UsageError(
                f"{'JStorm spout' if js else 'spout id'} '{key.consumer}' has no partition records under {key.zk_root}"
            )
        plan = plan_delete(
            key,
            snapshot.zk_nodes,
            scope=scope,
            record_topic=record_topic,
            written_by=written_by,
            captured_ms=snapshot.captured_ms,
        )
        if not plan.changes:
            raise UsageError(f"nothing matches: no record of {key} is {plan.target.removeprefix('delete ')}")
        facts = guard_facts(
            snapshot,
            conn,
            safety,
            topology_ids=topologies_of(records),
            zk_paths=True,
            groups=(),
            jstorm_root=key.zk_root if js else None,
            topology_names=names_of(records),
        )
        plan = delete_words(plan) if js else plan
        return execute_plan(with_guards(plan, facts, safety.force), zk, kafka, conn, safety, confirm)


def _check_deleted(spout: str | None, jstorm: str | None) -> None:
    """A delete names exactly one spout: --spout ID or --jstorm TOPIC/CLIENT_ID, each valid."""
    if (spout is None) == (jstorm is None):
        raise UsageError("delete needs exactly one of --spout (a storm-kafka spout) or --jstorm (a JStorm spout)")
    if jstorm is not None:
        check_jstorm_id(jstorm)
    else:
        check_spout_id(spout)


def _check_selectors(scope: Scope, record_topic: str | None, written_by: str | None, every: bool) -> None:
    """A delete says which records: some selectors (all must match), or --all-records alone."""
    chosen = scope.topics or scope.partitions is not None or record_topic is not None or written_by is not None
    if not chosen and not every:
        raise UsageError(
            "say which records to delete: --topic, --partitions, --record-topic or --written-by "
            "(all of them must match), or --all-records"
        )
    if chosen and every:
        raise UsageError("--all-records deletes every record of the spout: drop the other selectors")


def _deleted(conn: Connection, spout: str | None, jstorm: str | None) -> ConsumerKey:
    """The spout a delete names, under its one root: --spout ID under the one --zk-root, or --jstorm TOPIC/CLIENT_ID
    under the one --jstorm-root; UsageError when ZooKeeper or that root is not given."""
    if jstorm is not None:
        need_servers(conn, zk=True, why="delete")
        if len(conn.jstorm_roots) != 1:
            raise UsageError(f"delete --jstorm needs exactly one --jstorm-root (got {len(conn.jstorm_roots)})")
        return ConsumerKey(JSTORM, jstorm, normalize_root(conn.jstorm_roots[0], "--jstorm-root"))
    need_servers(conn, zk=True, root=True, why="delete")
    return ConsumerKey(ZOOKEEPER, spout, normalize_root(conn.zk_roots[0]))
