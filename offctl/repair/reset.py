"""`offctl reset` as a library call: resolve the request (from flags or an offsets file), read, plan each spout and
group, guard, and write through the safe writer (offctl/repair/writer.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from offctl.adapters.offsets_file import OffsetsFile, load_offsets_file
from offctl.core.plans.guards import with_guards
from offctl.core.plans.jstorm import plan_jstorm
from offctl.core.plans.kafka import plan_kafka
from offctl.core.plans.plan import Plan
from offctl.core.plans.targets import Scope, Target
from offctl.core.plans.zookeeper import plan_zookeeper
from offctl.core.records.model import (
    JSTORM,
    KAFKA,
    TRIDENT,
    ZK_STORES,
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    OffsetRecord,
    Snapshot,
    ZkNode,
)
from offctl.core.records.parse import storm_groups
from offctl.core.results.repair import RepairResult
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import UsageError
from offctl.pipeline.read import open_stores
from offctl.ports import LogWriter
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
    trident_batches,
)
from offctl.repair.writer import execute_all
from offctl.settings.connection import Connection, normalize_root
from offctl.settings.run import Safety, Selection, check_jstorm_id, check_spout_id


@dataclass(frozen=True)
class ResetRequest:
    spout: str | None = None
    groups: tuple[str, ...] = ()
    all_groups: bool = False  # every group with Storm commit metadata (parse.storm_groups)
    scope: Scope = Scope()
    target: Target | None = None
    from_file: Path | None = None
    topology_id: str | None = None
    plain: bool = False  # --no-storm-metadata
    zk_root: str | None = None  # from a --from-file plan or backup; else the one --zk-root
    trident: str | None = None  # a Trident spout's txStateId (under the one --trident-root)
    jstorm: str | None = None  # a JStorm spout's TOPIC/CLIENT_ID (under the one --jstorm-root)
    static_partitions: Mapping[str, frozenset[int]] = field(default_factory=dict)  # StaticHosts: id -> partitions

    @property
    def many(self) -> bool:
        """Several consumers asked for: the result is one document per consumer."""
        return self.all_groups or len(self.groups) > 1


def _resolve_request(conn: Connection, request: ResetRequest) -> tuple[ResetRequest, Target, dict | None]:
    """Check the command line and turn --from-file into explicit targets; UsageError on any mistake.
    The third value holds each group's rows of a CSV with a group column."""
    if request.from_file is not None and request.target is not None:
        raise UsageError("give either --to or --from-file, not both (--by-duration is a --to)")
    target, by_group = request.target, None
    if request.from_file is not None:
        request, target, by_group = _from_file(conn, request)
    if target is None:
        raise UsageError(
            "say where to move the offsets: --to earliest|latest|current|offset|time|shift, "
            "--by-duration, or --from-file"
        )
    _check_one_consumer(request)
    _check_metadata_options(request)
    _check_static_partitions(request)
    return request, target, by_group


def _from_file(conn: Connection, request: ResetRequest) -> tuple[ResetRequest, Target, dict | None]:
    """What --from-file moves: the consumer its file is for (_file_consumer), and its offsets, per group when the
    file has a group column."""
    loaded = load_offsets_file(request.from_file)
    if loaded.key is not None:
        request = _file_consumer(conn, request, loaded)
    by_group = None
    if loaded.by_group is not None:
        if request.spout:
            raise UsageError(f"{request.from_file} holds Kafka groups' offsets (a group column), not a spout's")
        by_group = loaded.by_group
        if not request.groups and not request.all_groups:  # the file names its groups
            request = replace(request, groups=tuple(sorted(by_group)))
    elif not loaded.offsets:
        raise UsageError(f"{request.from_file} holds no offsets to apply")
    return request, Target("file", offsets=loaded.offsets, source=str(request.from_file)), by_group


def _file_consumer(conn: Connection, request: ResetRequest, loaded: OffsetsFile) -> ResetRequest:
    """The consumer a plan or backup given to --from-file is for, refused when the command line names another:
    its spout, Trident spout or group becomes the request's when the command line names none."""
    key = loaded.key
    chosen = _named_consumer(request, key.zk_root)
    if chosen is not None and (chosen.store, chosen.consumer) != (key.store, key.consumer) and loaded.by_group is None:
        raise UsageError(f"{request.from_file} is a {loaded.kind} for {key}, not for {chosen}")
    if key.store in (TRIDENT, JSTORM):
        return _file_rooted(conn, request, loaded)
    if key.store == ZOOKEEPER:
        return _file_spout(conn, request, loaded)
    if (
        not request.groups
        and not request.all_groups
        and not request.spout
        and not request.trident
        and not request.jstorm
    ):
        return replace(request, groups=(key.consumer,))
    return request


def _named_consumer(request: ResetRequest, zk_root: str | None) -> ConsumerKey | None:
    """The one consumer the command line names (--spout, --trident, --jstorm or one --group), if it names one."""
    return (
        ConsumerKey(ZOOKEEPER, request.spout, zk_root)
        if request.spout
        else ConsumerKey(TRIDENT, request.trident, zk_root)
        if request.trident
        else ConsumerKey(JSTORM, request.jstorm, zk_root)
        if request.jstorm
        else ConsumerKey(KAFKA, request.groups[0])
        if len(request.groups) == 1
        else None
    )


def _file_rooted(conn: Connection, request: ResetRequest, loaded: OffsetsFile) -> ResetRequest:
    """The request for the Trident or JStorm spout a --from-file file is for: refused with another kind of consumer,
    or a JStorm root other than the file's."""
    key = loaded.key
    if request.groups or request.all_groups or request.spout:
        raise UsageError(f"{request.from_file} is a {loaded.kind} for {key}")
    if key.store == TRIDENT:
        return replace(request, trident=key.consumer, zk_root=key.zk_root)
    if conn.jstorm_roots and normalize_root(conn.jstorm_roots[0], "--jstorm-root") != key.zk_root:
        raise UsageError(f"{request.from_file} is for JStorm root {key.zk_root}, not {conn.jstorm_roots[0]}")
    return replace(request, jstorm=key.consumer, zk_root=key.zk_root)


def _file_spout(conn: Connection, request: ResetRequest, loaded: OffsetsFile) -> ResetRequest:
    """The request for the storm-kafka spout a --from-file file is for: refused with --group/--all-groups, or a
    --zk-root other than the file's."""
    key = loaded.key
    if request.groups or request.all_groups:
        raise UsageError(f"{request.from_file} is a {loaded.kind} for {key}, not for a Kafka group")
    if conn.zk_roots and normalize_root(conn.zk_roots[0]) != key.zk_root:
        raise UsageError(f"{request.from_file} is for zkRoot {key.zk_root}, not {conn.zk_roots[0]}")
    return replace(request, spout=key.consumer, zk_root=key.zk_root)


def _check_one_consumer(request: ResetRequest) -> None:
    """Exactly one kind of consumer is named (a spout, a Trident spout, a JStorm spout, or groups), each by a valid
    id."""
    named = (request.spout, request.trident, request.jstorm)
    if [*(n is not None for n in named), bool(request.groups or request.all_groups)].count(True) != 1:
        raise UsageError(
            "reset needs exactly one of --spout (a storm-kafka spout in ZooKeeper), --trident (a "
            "Trident spout's txStateId), --jstorm (a JStorm spout's TOPIC/CLIENT_ID) or --group/--all-groups "
            "(storm-kafka-client groups in Kafka)"
        )
    if request.trident is not None:
        check_spout_id(request.trident)
    if request.jstorm is not None:
        check_jstorm_id(request.jstorm)
    check_consumer(request.spout, None)
    for group in request.groups:
        check_consumer(None, group)


def _check_metadata_options(request: ResetRequest) -> None:
    """--topology-id and --no-storm-metadata: for Kafka groups only, and not both."""
    if (request.spout or request.trident or request.jstorm) is not None and (
        request.topology_id is not None or request.plain
    ):
        raise UsageError(
            f"{'--topology-id' if request.topology_id is not None else '--no-storm-metadata'} is for "
            f"Kafka groups: a ZooKeeper record keeps its own topology"
        )
    if request.topology_id is not None and request.plain:
        raise UsageError("--topology-id writes Storm metadata and --no-storm-metadata writes none: give one")


def _check_static_partitions(request: ResetRequest) -> None:
    """--static-partitions: for the one spout (Trident or JStorm spout) the reset names, never for groups."""
    consumer = next((c for c in (request.spout, request.trident, request.jstorm) if c is not None), None)
    if request.static_partitions and consumer is None:
        raise UsageError("--static-partitions describes a storm-kafka spout on StaticHosts, not Kafka groups")
    if set(request.static_partitions) - {consumer}:
        raise UsageError(
            "--static-partitions names another spout id: a reset moves the one spout it names "
            "(--static-partitions ID=LIST with the same ID)"
        )


def reset(
    conn: Connection, request: ResetRequest, safety: Safety, confirm: Confirm, profile: SpoutProfile | None = None
) -> list[RepairResult]:
    """Plan (and with safety.execute, apply) a reset of one spout, or of one or more groups: each consumer
    atomic on its own, one confirmation for all of them. `profile`: the written consumer's settings, which the
    plan's rows say where the spout starts by and a group's commits are verified against (None: the plan names
    each setting's start, and the read-back judges by the defaults)."""
    request, target, by_group = _resolve_request(conn, request)
    own, roots, selection = _reset_reads(conn, request, target)
    with open_stores(replace(conn, zk_roots=tuple(roots))) as (zk, kafka):
        snapshot, records = read_state(zk, kafka, roots, selection, conn.storm_root, own, profile)
        time_offsets = _time_offsets(target, snapshot.cluster or {}, kafka)
        guard = _Guard(snapshot, records, conn, safety)
        if request.spout is not None or own is not None:
            key = own or ConsumerKey(ZOOKEEPER, request.spout, roots[0])
            batches = trident_batches(zk, snapshot.zk_nodes) if key.store == TRIDENT else []
            plans = [_plan_spout(key, request, target, snapshot, time_offsets, guard, profile, batches)]
        else:
            plans = [
                _plan_group(group, request, target, by_group, snapshot, time_offsets, guard, profile)
                for group in _reset_groups(request, snapshot)
            ]
        judged = ReadBack(profile or SpoutProfile(), snapshot.running, request.topology_id)
        plans = costed(plans, kafka, snapshot.cluster, judged)
        return execute_all(plans, zk, kafka, conn, safety, confirm, many=request.many, read_back=judged)


def _reset_reads(
    conn: Connection, request: ResetRequest, target: Target
) -> tuple[ConsumerKey | None, list[str], Selection]:
    """Which store a reset reads, and what of it: the Trident or JStorm spout and its root, the spout's zkRoot, or
    the groups, with the topics their plans need log offsets of; UsageError when a server or root it needs is not
    given."""
    scope = request.scope
    if request.jstorm is not None:
        need_servers(conn, zk=True, kafka=True, why="reset --jstorm")
        if request.zk_root is None and len(conn.jstorm_roots) != 1:
            raise UsageError(f"reset --jstorm needs exactly one --jstorm-root (got {len(conn.jstorm_roots)})")
        root = request.zk_root or normalize_root(conn.jstorm_roots[0], "--jstorm-root")
        return ConsumerKey(JSTORM, request.jstorm, root), [], Selection(log_topics=tuple(scope.topics))
    if request.trident is not None:
        need_servers(conn, zk=True, kafka=True, why="reset --trident")
        if request.zk_root is None and len(conn.trident_roots) != 1:
            raise UsageError(f"reset --trident needs exactly one --trident-root (got {len(conn.trident_roots)})")
        trident = ConsumerKey(TRIDENT, request.trident, request.zk_root or normalize_root(conn.trident_roots[0]))
        return trident, [], Selection(log_topics=tuple(scope.topics))
    if request.spout is not None:
        need_servers(conn, zk=True, root=request.zk_root is None, kafka=True, why="reset --spout")
        roots = [request.zk_root or normalize_root(conn.zk_roots[0])]
        return None, roots, Selection(spouts=(request.spout,), log_topics=tuple(scope.topics))
    need_servers(conn, kafka=True, why="reset --group" if request.groups else "reset --all-groups")
    return (
        None,
        [],
        Selection(
            groups=request.groups,
            all_groups=request.all_groups,
            log_topics=tuple(scope.topics) + tuple({t for t, _ in target.offsets or {}}),
        ),
    )


def _time_offsets(target: Target, cluster: Cluster, kafka: LogWriter | None) -> dict[tuple[str, int], int | None]:
    """For --to time, the first offset at or after the time on every partition of the cluster read; else none."""
    if target.kind != "time":
        return {}
    wanted = {(t, p) for t in cluster for p in cluster[t]}
    return kafka.offsets_for_times(sorted(wanted), target.at_ms)


@dataclass(frozen=True)
class _Guard:
    """What a reset's guards judge its plans by: the state it read, and the run's safety settings."""

    snapshot: Snapshot
    records: list[OffsetRecord]
    conn: Connection
    safety: Safety

    def check(self, plan: Plan, *, topology_ids: set[str], zk_paths: bool, groups: tuple[str, ...]) -> Plan:
        """The plan with the guards' verdicts on it (a JStorm spout's: by its records' topology names, running under
        JStorm's root too)."""
        js = plan.key.store == JSTORM
        facts = guard_facts(
            self.snapshot,
            self.conn,
            self.safety,
            topology_ids=topology_ids,
            zk_paths=zk_paths,
            groups=groups,
            jstorm_root=plan.key.zk_root if js else None,
            topology_names=names_of(self.records) if js else (),
        )
        return with_guards(plan, facts, self.safety.force)


def _plan_spout(
    key: ConsumerKey,
    request: ResetRequest,
    target: Target,
    snapshot: Snapshot,
    time_offsets: Mapping[tuple[str, int], int | None],
    guard: _Guard,
    profile: SpoutProfile | None,
    batches: Sequence[ZkNode] = (),
) -> Plan:
    """The guarded plan of a storm-kafka, Trident or JStorm spout's records (`batches`: a Trident spout's,
    trident_batches); UsageError when it has none, or none in the scope."""
    if not snapshot.zk_nodes:
        raise UsageError(
            f"no Trident Kafka spout state '{key.consumer}' under {key.zk_root}"
            if key.store == TRIDENT
            else f"no JStorm Kafka spout '{key.consumer}' under {key.zk_root} (no record at {key})"
            if key.store == JSTORM
            else f"spout id '{request.spout}' has no partition records under {key.zk_root}"
        )
    planned = dict(
        scope=request.scope,
        time_offsets=time_offsets,
        static=request.static_partitions.get(key.consumer),
        captured_ms=snapshot.captured_ms,
        profile=profile,
    )
    if key.store == JSTORM:  # its records name no storm id: the guard knows it by name (_Guard.check)
        plan, ids = plan_jstorm(key, snapshot.zk_nodes, snapshot.cluster or {}, target, **planned), set()
    else:
        plan = plan_zookeeper(key, snapshot.zk_nodes, snapshot.cluster or {}, target, batches=batches, **planned)
        ids = topologies_of(guard.records)
    return _nonempty(guard.check(plan, topology_ids=ids, zk_paths=True, groups=()), request)


def _reset_groups(request: ResetRequest, snapshot: Snapshot) -> list[str]:
    """The groups a reset plans: those named, then with --all-groups every other group with Storm commit
    metadata; UsageError when --all-groups finds none."""
    groups = list(dict.fromkeys(request.groups))
    if request.all_groups:
        groups += sorted(storm_groups(snapshot.commits) - set(groups))
        if not groups:
            raise UsageError("--all-groups: no group on the cluster carries Storm commit metadata")
    return groups


def _plan_group(
    group: str,
    request: ResetRequest,
    target: Target,
    by_group: dict | None,
    snapshot: Snapshot,
    time_offsets: Mapping[tuple[str, int], int | None],
    guard: _Guard,
    profile: SpoutProfile | None,
) -> Plan:
    """The guarded plan of one group's commits; a single group's plan that covers nothing is a UsageError, but
    not a group --to current finds without commits (it has nothing to reset, which is no mistake)."""
    own = target
    if by_group is not None:
        own = replace(target, offsets=by_group.get(group) or {}, source=f"{target.source} (its rows for group {group})")
    plan = plan_kafka(
        group,
        snapshot.commits,
        snapshot.cluster or {},
        own,
        scope=request.scope,
        topology_id=request.topology_id,
        plain=request.plain,
        time_offsets=time_offsets,
        captured_ms=snapshot.captured_ms,
        profile=profile,
    )
    if by_group is not None:
        plan = replace(plan, warnings=_file_rows_warnings(group, request, by_group) + plan.warnings)
    group_records = [r for r in guard.records if r.key == ConsumerKey(KAFKA, group)]
    plan = guard.check(
        plan, topology_ids=topologies_of(group_records) | {request.topology_id}, zk_paths=False, groups=(group,)
    )
    # --to current keeps each commit: a group with none has nothing to reset, which is no mistake
    idle = own.kind == "current" and not plan.changes and all(c.group != group for c in snapshot.commits)
    if idle:
        plan = replace(plan, warnings=(f"group {group} {NO_COMMITS}", *plan.warnings))
    return plan if request.many or idle else _nonempty(plan, request)


def _file_rows_warnings(group: str, request: ResetRequest, by_group: Mapping[str, Mapping]) -> tuple[str, ...]:
    """What a --from-file CSV with a group column leaves of a group: no rows for it, or rows for other groups that
    a single-group reset does not apply."""
    others = sum(len(rows) for g, rows in by_group.items() if g != group)
    extra = (
        (f"{request.from_file} has no rows for group {group}: nothing planned for it",)
        if not by_group.get(group)
        else ()
    )
    if others and not request.many:
        extra += (f"{others} row(s) of {request.from_file} are for other groups: not applied to {group}",)
    return extra


# kafka-consumer-groups --reset-offsets --to-current plans nothing for such a group, and commits nothing with
# --execute (apache/kafka ResetConsumerGroupOffsetTest.testResetOffsetsNotExistingGroup)
NO_COMMITS = (
    "has no commits: nothing to reset (--to current keeps each commit as it is; to commit offsets for "
    "the group, name the topic with --topic)"
)


def _nonempty(plan: Plan, request: ResetRequest) -> Plan:
    """A single consumer's plan that covers nothing is a usage error, with the plan's lines as the reason."""
    if plan.changes:
        return plan
    scope = request.scope.describe()
    raise UsageError(
        f"nothing matches: {plan.key} has no "
        + ("records" if plan.key.store in ZK_STORES else "commits")
        + (f" in {scope}" if scope else "")
        + (
            f" ({'; '.join(plan.warnings)})"
            if plan.warnings
            else ""
            if plan.key.store in ZK_STORES
            else ": name the topic with --topic to commit offsets for it"
        )
    )
