"""`offctl reset`, `restore` and `migrate` as library calls: read, plan, guard, back up, write, verify, log.

Each call reads the consumer's current state, builds a Plan with the pure planner, checks the guards,
and stops there unless `execute` is set. Executing confirms, writes the before-image to a backup file,
writes through the store's safe writer (one versioned multi-op per spout in ZooKeeper; one commit request
per group in Kafka, after checking nothing moved), reads back to verify, and appends to the audit log.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from offctl import interrupts
from offctl.adapters.backup import (
    OffsetsFile,
    append_audit,
    audit_lines,
    load_backup,
    load_offsets_file,
    record_read_back,
    write_backup,
)
from offctl.core.plans.cost import Spout, cost_positions, plan_cost
from offctl.core.plans.guards import GuardFacts, changed_kafka, changed_zookeeper, with_guards
from offctl.core.plans.kafka import plan_kafka, plan_migrate
from offctl.core.plans.plan import Plan
from offctl.core.plans.restore import plan_restore_kafka, plan_restore_zookeeper
from offctl.core.plans.targets import Scope, Target
from offctl.core.plans.verify import verify_kafka, verify_zookeeper
from offctl.core.plans.zookeeper import plan_delete, plan_zookeeper
from offctl.core.records.model import (
    KAFKA,
    TRIDENT,
    ZK_STORES,
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    KafkaCommit,
    MessageRead,
    OffsetRecord,
    Snapshot,
    Thresholds,
    ZkNode,
)
from offctl.core.records.parse import parse_commit, parse_zk_node, storm_groups
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import (
    LEFT_OUT,
    NOT_CONFIRMED,
    Interrupted,
    InterruptedWrite,
    OffctlError,
    StoreUnavailable,
    UsageError,
    WriteConflict,
)
from offctl.pipeline import Selection, open_stores, read_snapshot
from offctl.ports import LogStore, LogWriter, SpoutStore, SpoutWriter
from offctl.settings.connection import STORM_ROOT, Connection, normalize_root
from offctl.settings.run import Safety, check_spout_id


@dataclass(frozen=True)
class ReadBack:
    """What a Kafka commit read back is judged against: whether a spout of `profile` resumes from it
    (verify.verify_kafka, the answer inspect gives), the topologies in `running` running and the one the operator
    named for the commits (`topology_id`, --topology-id) about to."""

    profile: SpoutProfile = SpoutProfile()
    running: frozenset[str] | None = None
    topology_id: str | None = None

    @property
    def counted_running(self) -> frozenset[str] | None:
        """The running topologies, with the one the commits are written for."""
        return (self.running or frozenset()) | {self.topology_id} if self.topology_id else self.running


@dataclass(frozen=True)
class RepairResult:
    """What a reset, restore, migrate or delete did with one plan: written or not, verified, and what went wrong."""

    plan: Plan
    executed: bool = False  # the write went to the store
    declined: bool = False  # the operator answered no at the prompt
    backup: Path | None = None
    verified: bool | None = None  # None: nothing was written
    problems: tuple[str, ...] = ()  # what verification found
    audit_log: Path | None = None
    notes: tuple[str, ...] = ()
    undo: str | None = None  # the command that puts the before-image back, to paste as it is
    interrupted: bool = False  # Ctrl-C or SIGTERM came once the write had landed: reported in full, exit 6
    error: str | None = None  # in a run over several consumers: why this one was not (fully) written
    error_code: int = 0  # and the exit code that error carries


def undo_command(plan: Plan, backup: Path, conn: Connection, safety: Safety) -> str:
    """`offctl restore BACKUP --execute` with every setting the write needed, so that it works pasted at once:
    its servers (--zk also for a group: the running-topology guard reads Storm's root there), Storm's root,
    the guards' settings (--quiet-period as given, the --force flags but changed-since, which holds for one run;
    a topology still running is still running), and its backup directory and audit log. Secrets (--zk-auth,
    --kafka-config) are never printed: give them as the write had them, or through OFFCTL_ZK_AUTH and
    OFFCTL_KAFKA_CONFIG."""
    parts = ["offctl", "restore", str(backup), "--execute", *server_flags(conn), *safety_flags(safety)]
    # changed-since is forced per run: what changed before this write says nothing of what changes after it
    for guard in sorted(g.guard for g in plan.guards if g.status == "overridden" and g.guard != "changed-since"):
        parts += ["--force", guard]
    return shlex.join(parts)


def server_flags(conn: Connection, roots: Sequence[str] = ()) -> list[str]:
    """The flags that name a write's servers on a command line an operator pastes: --zk, then `roots` (--zk-root
    or --trident-root and their values), --bootstrap-servers, and Storm's root when it is not the default; never a
    secret."""
    parts = ["--zk", conn.zk] if conn.zk else []
    parts += roots
    if conn.bootstrap_servers:
        parts += ["--bootstrap-servers", conn.bootstrap_servers]
    if conn.storm_root != STORM_ROOT:
        parts += ["--storm-root", conn.storm_root]
    return parts


def safety_flags(safety: Safety) -> list[str]:
    """The safety settings a write used that differ from the defaults: --quiet-period, --backup-dir, --audit-log."""
    defaults, parts = Safety(), []
    if safety.quiet_period_s != defaults.quiet_period_s:
        parts += ["--quiet-period", seconds(float(safety.quiet_period_s))]
    if safety.backup_dir != defaults.backup_dir:
        parts += ["--backup-dir", str(safety.backup_dir)]
    if safety.audit_log != defaults.audit_log:
        parts += ["--audit-log", str(safety.audit_log)]
    return parts


def seconds(value: float) -> str:
    """A number of seconds as an option takes it back: 0, 2.5, 3600."""
    return str(int(value)) if value.is_integer() else repr(value)


Confirm = Callable[[Sequence[Plan]], bool]  # shows the plans and asks once whether to write them all


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
    static_partitions: Mapping[str, frozenset[int]] = field(default_factory=dict)  # StaticHosts: id -> partitions

    @property
    def many(self) -> bool:
        """Several consumers asked for: the result is one document per consumer."""
        return self.all_groups or len(self.groups) > 1


def _now() -> int:
    return int(time.time() * 1000)


def _need(conn: Connection, *, zk: bool = False, kafka: bool = False, root: bool = False, why: str) -> None:
    if zk and not conn.zk:
        raise UsageError(f"{why} needs --zk (the ZooKeeper connect string)")
    if root and len(conn.zk_roots) != 1:
        raise UsageError(f"{why} needs exactly one --zk-root (got {len(conn.zk_roots)})")
    if kafka and not conn.bootstrap_servers:
        raise UsageError(f"{why} needs --bootstrap-servers (log offsets bound every target)")


def _check_consumer(spout: str | None, group: str | None) -> None:
    if spout is not None:
        check_spout_id(spout)
    if group is not None and not group:
        raise UsageError("--group '' is not a group id")


def _read(
    zk: SpoutStore | None,
    kafka: LogStore | None,
    roots: list[str],
    selection: Selection,
    storm_root: str,
    trident: ConsumerKey | None = None,
    profile: SpoutProfile | None = None,
) -> tuple[Snapshot, list[OffsetRecord]]:
    """The consumer's current state, raw and parsed; StoreUnavailable unless all of it could be read.
    `trident`: the Trident spout to read, under its root. `profile`: the written consumer's settings (a spout that
    reads committed has its topics' last stable offsets read: `--to latest` moves it there)."""
    if trident is not None:
        selection = replace(selection, tridents=(trident.consumer,))
    snapshot, records = read_snapshot(
        zk,
        kafka,
        roots,
        selection,
        storm_root,
        _now(),
        trident_roots=[trident.zk_root] if trident else (),
        judged_by=Thresholds(spout=profile) if profile is not None else None,
    )
    if snapshot.incomplete:
        raise StoreUnavailable("could not read everything a safe plan needs: " + "; ".join(snapshot.incomplete))
    return snapshot, [r for rs in records.values() for r in rs]


def _facts(
    snapshot: Snapshot,
    conn: Connection,
    safety: Safety,
    *,
    topology_ids: set[str],
    zk_paths: bool,
    groups: tuple[str, ...],
) -> GuardFacts:
    if snapshot.running is not None:
        why = ""
    elif not conn.zk:
        why = "no --zk given, so Storm's root cannot be read (give --zk of Storm's ZooKeeper)"
    else:
        why = f"{conn.storm_root}/storms does not exist on {conn.zk} (set --storm-root)"
    return GuardFacts(
        topology_ids=frozenset(t for t in topology_ids if t),
        running=snapshot.running,
        running_unknown_why=why,
        zk_modified_ms={n.path: n.mtime_ms for n in snapshot.zk_nodes} if zk_paths else {},
        groups=tuple(g for g in snapshot.groups if g.group in groups),
        now_ms=_now(),
        quiet_period_s=safety.quiet_period_s,
    )


def _costed(
    plans: Sequence[Plan], kafka: LogWriter | None, cluster: Cluster | None, read_back: ReadBack = ReadBack()
) -> list[Plan]:
    """Each plan with what its writes replay and skip (offctl.core.plans.cost), a Kafka commit judged as its read-back
    will judge it. The messages at the ends of the ranges are read within --timeout; what is not read leaves
    counts without a time span, never a failed plan."""
    spout = Spout(read_back.profile, read_back.counted_running)
    positions = [p for plan in plans for p in cost_positions(plan, cluster, spout)]
    found = MessageRead()
    if positions and kafka is not None:
        try:
            found = kafka.read_messages(positions)
        except OffctlError as exc:
            found = MessageRead(unread=dict.fromkeys(positions, f"messages not read: {exc}"))
    return [replace(plan, cost=plan_cost(plan, cluster, found, spout)) for plan in plans]


def _topologies(records: Iterable[OffsetRecord]) -> set[str]:
    """Storm ids named by records (ZooKeeper) or commit metadata (Kafka)."""
    return {r.topology_id for r in records if r.topology_id}


# --- reset ---------------------------------------------------------------------------------------------------


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
    if key.store == TRIDENT:
        return _file_trident(request, loaded)
    if key.store == ZOOKEEPER:
        return _file_spout(conn, request, loaded)
    if not request.groups and not request.all_groups and not request.spout and not request.trident:
        return replace(request, groups=(key.consumer,))
    return request


def _named_consumer(request: ResetRequest, zk_root: str | None) -> ConsumerKey | None:
    """The one consumer the command line names (--spout, --trident or one --group), if it names one."""
    return (
        ConsumerKey(ZOOKEEPER, request.spout, zk_root)
        if request.spout
        else ConsumerKey(TRIDENT, request.trident, zk_root)
        if request.trident
        else ConsumerKey(KAFKA, request.groups[0])
        if len(request.groups) == 1
        else None
    )


def _file_trident(request: ResetRequest, loaded: OffsetsFile) -> ResetRequest:
    """The request for the Trident spout a --from-file file is for: refused with --spout, --group or --all-groups."""
    key = loaded.key
    if request.groups or request.all_groups or request.spout:
        raise UsageError(f"{request.from_file} is a {loaded.kind} for {key}")
    return replace(request, trident=key.consumer, zk_root=key.zk_root)


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
    """Exactly one kind of consumer is named (a spout, a Trident spout, or groups), each by a valid id."""
    if [request.spout is not None, request.trident is not None, bool(request.groups or request.all_groups)].count(
        True
    ) != 1:
        raise UsageError(
            "reset needs exactly one of --spout (a storm-kafka spout in ZooKeeper), --trident (a "
            "Trident spout's txStateId) or --group/--all-groups (storm-kafka-client groups in Kafka)"
        )
    if request.trident is not None:
        check_spout_id(request.trident)
    _check_consumer(request.spout, None)
    for group in request.groups:
        _check_consumer(None, group)


def _check_metadata_options(request: ResetRequest) -> None:
    """--topology-id and --no-storm-metadata: for Kafka groups only, and not both."""
    if (request.spout or request.trident) is not None and (request.topology_id is not None or request.plain):
        raise UsageError(
            f"{'--topology-id' if request.topology_id is not None else '--no-storm-metadata'} is for "
            f"Kafka groups: a ZooKeeper record keeps its own topology"
        )
    if request.topology_id is not None and request.plain:
        raise UsageError("--topology-id writes Storm metadata and --no-storm-metadata writes none: give one")


def _check_static_partitions(request: ResetRequest) -> None:
    """--static-partitions: for the one spout (or Trident spout) the reset names, never for groups."""
    consumer = request.spout if request.spout is not None else request.trident
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
    trident, roots, selection = _reset_reads(conn, request, target)
    with open_stores(replace(conn, zk_roots=tuple(roots))) as (zk, kafka):
        snapshot, records = _read(zk, kafka, roots, selection, conn.storm_root, trident, profile)
        time_offsets = _time_offsets(target, snapshot.cluster or {}, kafka)
        guard = _Guard(snapshot, records, conn, safety)
        if request.spout is not None or trident is not None:
            key = trident or ConsumerKey(ZOOKEEPER, request.spout, roots[0])
            batches = _batches(zk, snapshot.zk_nodes) if trident is not None else []
            plans = [_plan_spout(key, request, target, snapshot, time_offsets, guard, profile, batches)]
        else:
            plans = [
                _plan_group(group, request, target, by_group, snapshot, time_offsets, guard, profile)
                for group in _reset_groups(request, snapshot)
            ]
        judged = ReadBack(profile or SpoutProfile(), snapshot.running, request.topology_id)
        plans = _costed(plans, kafka, snapshot.cluster, judged)
        return _execute_all(plans, zk, kafka, conn, safety, confirm, many=request.many, read_back=judged)


def _reset_reads(
    conn: Connection, request: ResetRequest, target: Target
) -> tuple[ConsumerKey | None, list[str], Selection]:
    """Which store a reset reads, and what of it: the Trident spout and its root, the spout's zkRoot, or the
    groups, with the topics their plans need log offsets of; UsageError when a server or root it needs is not
    given."""
    scope = request.scope
    if request.trident is not None:
        _need(conn, zk=True, kafka=True, why="reset --trident")
        if request.zk_root is None and len(conn.trident_roots) != 1:
            raise UsageError(f"reset --trident needs exactly one --trident-root (got {len(conn.trident_roots)})")
        trident = ConsumerKey(TRIDENT, request.trident, request.zk_root or normalize_root(conn.trident_roots[0]))
        return trident, [], Selection(log_topics=tuple(scope.topics))
    if request.spout is not None:
        _need(conn, zk=True, root=request.zk_root is None, kafka=True, why="reset --spout")
        roots = [request.zk_root or normalize_root(conn.zk_roots[0])]
        return None, roots, Selection(spouts=(request.spout,), log_topics=tuple(scope.topics))
    _need(conn, kafka=True, why="reset --group" if request.groups else "reset --all-groups")
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
        """The plan with the guards' verdicts on it."""
        facts = _facts(
            self.snapshot, self.conn, self.safety, topology_ids=topology_ids, zk_paths=zk_paths, groups=groups
        )
        return with_guards(plan, facts, self.safety.force)


def _batches(zk: SpoutWriter, nodes: Sequence[ZkNode]) -> list[ZkNode]:
    """A Trident spout's batches stored at or past currtx besides the nodes read_trident gives (ZkNode.ahead), as
    they are now: a reset rewrites them with their partition (zookeeper.REPLAYED)."""
    wanted = [
        replace(
            n,
            path=f"{n.path.rsplit('/', 1)[0]}/{txid}",
            txid=txid,
            txids=0,
            replay_txid=None,
            replay_data=None,
            ahead=(),
        )
        for n in nodes
        for txid in n.ahead
    ]
    have = {n.path for n in nodes}
    return zk.read_nodes([n for n in wanted if n.path not in have]) if wanted else []


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
    """The guarded plan of a storm-kafka or Trident spout's records (`batches`: a Trident spout's, _batches);
    UsageError when it has none, or none in the scope."""
    if not snapshot.zk_nodes:
        raise UsageError(
            f"spout id '{request.spout}' has no partition records under {key.zk_root}"
            if key.store != TRIDENT
            else f"no Trident Kafka spout state '{key.consumer}' under {key.zk_root}"
        )
    plan = plan_zookeeper(
        key,
        snapshot.zk_nodes,
        snapshot.cluster or {},
        target,
        scope=request.scope,
        time_offsets=time_offsets,
        static=request.static_partitions.get(key.consumer),
        captured_ms=snapshot.captured_ms,
        profile=profile,
        batches=batches,
    )
    plan = guard.check(plan, topology_ids=_topologies(guard.records), zk_paths=True, groups=())
    return _nonempty(plan, request)


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
        plan, topology_ids=_topologies(group_records) | {request.topology_id}, zk_paths=False, groups=(group,)
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
        + ("records" if plan.key.store == ZOOKEEPER else "commits")
        + (f" in {scope}" if scope else "")
        + (
            f" ({'; '.join(plan.warnings)})"
            if plan.warnings
            else ""
            if plan.key.store == ZOOKEEPER
            else ": name the topic with --topic to commit offsets for it"
        )
    )


# --- restore -------------------------------------------------------------------------------------------------


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
    trident = key if key.store == TRIDENT else None
    if trident is not None:
        _need(conn, zk=True, why=f"restoring {key}")
        roots, selection = [], Selection()
    elif key.store == ZOOKEEPER:
        _need(conn, zk=True, why=f"restoring {key}")
        if conn.zk_roots and normalize_root(conn.zk_roots[0]) != key.zk_root:
            raise UsageError(f"{path} is for zkRoot {key.zk_root}, not {conn.zk_roots[0]}")
        roots, selection = [key.zk_root], Selection(spouts=(key.consumer,))
    else:
        _need(conn, kafka=True, why=f"restoring {key}")
        roots, selection = [], Selection(groups=(key.consumer,))
    with open_stores(replace(conn, zk_roots=tuple(roots))) as (zk, kafka):
        snapshot, records = _read(zk, kafka, roots, selection, conn.storm_root, trident, profile)
        batches = _batches(zk, snapshot.zk_nodes) if trident is not None else []
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
            saved = _topologies(map(parse_zk_node, backup.nodes))
            facts = _facts(snapshot, conn, safety, topology_ids=_topologies(records) | saved, zk_paths=True, groups=())
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
            saved = _topologies(parse_commit(c) for c in backup.commits if isinstance(c, KafkaCommit))
            facts = _facts(
                snapshot,
                conn,
                safety,
                topology_ids=_topologies(records) | saved,
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
        return _execute(_costed([plan], kafka, snapshot.cluster, judged)[0], zk, kafka, conn, safety, confirm, judged)


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


# --- migrate -------------------------------------------------------------------------------------------------


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
    _check_consumer(spout, group)
    if not topology_id:
        raise UsageError(
            "migrate needs --topology-id: the storm id of the storm-kafka-client topology, so "
            "its spout honours the commits"
        )
    _need(conn, zk=True, root=True, kafka=True, why="migrate")
    root = normalize_root(conn.zk_roots[0])
    source = ConsumerKey(ZOOKEEPER, spout, root)
    with open_stores(replace(conn, zk_roots=(root,))) as (zk, kafka):
        snapshot, records = _read(zk, kafka, [root], Selection(spouts=(spout,), groups=(group,)), conn.storm_root)
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
        topologies = _topologies(records) | {topology_id}
        facts = _facts(snapshot, conn, safety, topology_ids=topologies, zk_paths=True, groups=(group,))
        plan = with_guards(plan, facts, safety.force)
        judged = ReadBack(profile or SpoutProfile(), snapshot.running, topology_id)
        return _execute(_costed([plan], kafka, snapshot.cluster, judged)[0], zk, kafka, conn, safety, confirm, judged)


# --- delete --------------------------------------------------------------------------------------------------


def delete(
    conn: Connection,
    spout: str,
    safety: Safety,
    confirm: Confirm,
    *,
    scope: Scope = Scope(),
    record_topic: str | None = None,
    written_by: str | None = None,
    every: bool = False,
) -> RepairResult:
    """Delete some of a storm-kafka spout's partition records (stale ones, left by another topology) through
    the same guards, backup, versioned multi-op and audit log; `offctl restore` creates them again."""
    check_spout_id(spout)
    chosen = scope.topics or scope.partitions is not None or record_topic is not None or written_by is not None
    if not chosen and not every:
        raise UsageError(
            "say which records to delete: --topic, --partitions, --record-topic or --written-by "
            "(all of them must match), or --all-records"
        )
    if chosen and every:
        raise UsageError("--all-records deletes every record of the spout: drop the other selectors")
    _need(conn, zk=True, root=True, why="delete")
    root = normalize_root(conn.zk_roots[0])
    key = ConsumerKey(ZOOKEEPER, spout, root)
    with open_stores(replace(conn, zk_roots=(root,), bootstrap_servers=None)) as (zk, kafka):
        snapshot, records = _read(zk, None, [root], Selection(spouts=(spout,)), conn.storm_root)
        if not snapshot.zk_nodes:
            raise UsageError(f"spout id '{spout}' has no partition records under {root}")
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
        facts = _facts(snapshot, conn, safety, topology_ids=_topologies(records), zk_paths=True, groups=())
        return _execute(with_guards(plan, facts, safety.force), zk, kafka, conn, safety, confirm)


# --- the safe writer ---------------------------------------------------------------------------------------


def _execute(
    plan: Plan,
    zk: SpoutWriter | None,
    kafka: LogWriter | None,
    conn: Connection,
    safety: Safety,
    confirm: Confirm,
    read_back: ReadBack = ReadBack(),
) -> RepairResult:
    return _execute_all([plan], zk, kafka, conn, safety, confirm, many=False, read_back=read_back)[0]


def _execute_all(
    plans: Sequence[Plan],
    zk: SpoutWriter | None,
    kafka: LogWriter | None,
    conn: Connection,
    safety: Safety,
    confirm: Confirm,
    *,
    many: bool,
    read_back: ReadBack = ReadBack(),
) -> list[RepairResult]:
    """One confirmation for every plan that can be written, then each through the safe writer. With `many`,
    a consumer whose write fails is reported with its error and the ones after it are not written, nor are
    those after an interrupt; with one consumer the error is raised."""
    runnable = {i for i, p in enumerate(plans) if safety.execute and not p.refused and p.writes}
    if not runnable:
        return [RepairResult(p) for p in plans]
    if not confirm([plans[i] for i in sorted(runnable)]):
        return [RepairResult(p, declined=i in runnable) for i, p in enumerate(plans)]
    outcomes: list[RepairResult] = []
    failed: OffctlError | None = None
    failed_on = None
    for i, plan in enumerate(plans):
        if i not in runnable:
            outcomes.append(RepairResult(plan))
        elif failed is None and interrupts.received():  # Ctrl-C while an earlier consumer's write was reported
            outcomes.append(
                RepairResult(
                    plan, error="not written: interrupted (Ctrl-C or SIGTERM)", error_code=Interrupted.exit_code
                )
            )
        elif failed is not None:
            why = "the interrupt" if isinstance(failed, Interrupted) else "the failure"
            outcomes.append(
                RepairResult(
                    plan, error=f"not written: stopped after {why} on {failed_on}", error_code=failed.exit_code
                )
            )
        else:
            try:
                outcomes.append(_write(plan, zk, kafka, conn, safety, read_back))
            except OffctlError as exc:
                if not many:
                    raise
                failed, failed_on = exc, plan.key
                outcomes.append(RepairResult(plan, error=str(exc), error_code=exc.exit_code))
    return outcomes


def _write(
    plan: Plan,
    zk: SpoutWriter | None,
    kafka: LogWriter | None,
    conn: Connection,
    safety: Safety,
    read_back: ReadBack = ReadBack(),
) -> RepairResult:
    """Back the plan up, log its intent, send it through its store's writer, read it back and log the outcome;
    a failure or an interrupt on the way is logged and raised saying what it left (_conflict, _unavailable,
    _cut_off)."""
    logged = sent = written = interrupted = False
    said: tuple[str, ...] = ()  # what the read-back notes (metadata the broker did not keep, still resumed from)
    try:
        with interrupts.deferred():  # the backup and the intent lines are written whole, a Ctrl-C or not
            backup = _back_up(plan, conn, safety)
            logged = True
        if interrupts.received():
            raise KeyboardInterrupt  # it came while the backup was written: the store is not touched
        if plan.key.store not in ZK_STORES:
            _unmoved(plan, kafka)
        sent = True
        _send(plan, zk, kafka)
        written = True
        interrupts.landed()  # the store has the change: from here on an interrupt must not cut its report short
        problems, said, back = _read_back(plan, zk, kafka, read_back)
        said += _keep_after_image(plan, backup, back)
    except WriteConflict as exc:  # its message says whether anything was written
        if not logged:
            raise  # no backup or no intent: it says so, and nothing was changed
        raise _conflict(exc, plan, backup, conn, safety, sent) from None
    except StoreUnavailable as exc:
        raise _unavailable(exc, plan, backup, conn, safety, sent=sent, written=written) from None
    except KeyboardInterrupt:
        if not logged:
            raise  # before the backup: nothing to say but that offctl was interrupted
        if not written:
            raise _cut_off(plan, backup, conn, safety, sent) from None
        interrupts.landed()
        interrupted, problems = True, []
    return _landed(plan, backup, conn, safety, problems, said, interrupted=interrupted)


def _server(plan: Plan, conn: Connection) -> str:
    """The servers a plan is written to, as the audit log names them."""
    return f"zookeeper {conn.zk}" if plan.key.store in ZK_STORES else f"kafka {conn.bootstrap_servers}"


def _back_up(plan: Plan, conn: Connection, safety: Safety) -> Path:
    """Write the plan's before-image to a backup file and its intent to the audit log, before anything is
    written: WriteConflict, with nothing changed, when the audit log cannot take it."""
    backup = write_backup(plan, safety.backup_dir, _now())
    try:  # the intent is on disk before the first write, or nothing is written
        append_audit(
            safety.audit_log, audit_lines(plan, plan.writes, backup, _now(), _server(plan, conn), phase="intent")
        )
    except OSError as exc:
        raise WriteConflict(
            f"could not write the audit log {safety.audit_log} ({exc.strerror or exc}); "
            f"nothing was changed. Choose another with --audit-log"
        ) from None
    return backup


def _send(plan: Plan, zk: SpoutWriter | None, kafka: LogWriter | None) -> None:
    """Send the plan's writes through its store's writer: one versioned multi-op in ZooKeeper; in Kafka one commit
    request for the group, or deleting the group where it had no commits before (plan_restore_kafka)."""
    if plan.key.store in ZK_STORES:
        zk.write_versioned([(c.path, c.after_data, c.version) for c in plan.writes])
    elif any(c.delete for c in plan.writes):
        kafka.delete_group(plan.key.consumer)
    else:
        kafka.commit(plan.key.consumer, [(c.topic, c.partition, c.after, c.after_metadata) for c in plan.writes])


def _log_failed(plan: Plan, backup: Path, conn: Connection, safety: Safety, outcome: str) -> None:
    """Append a write's failure to the audit log, if it can: its intent is there, and the error says the rest."""
    try:
        with interrupts.deferred():
            append_audit(
                safety.audit_log,
                audit_lines(plan, plan.writes, backup, _now(), _server(plan, conn), phase="failed", outcome=outcome),
            )
    except OSError:
        pass  # the intent line is there; the message below says the rest


def _conflict(
    exc: WriteConflict, plan: Plan, backup: Path, conn: Connection, safety: Safety, sent: bool
) -> WriteConflict:
    """A store's refusal after the backup, logged, with where the before-image is and, if it may have landed in
    part, how to undo it."""
    _log_failed(plan, backup, conn, safety, str(exc))
    # a conflict the store answered before changing anything says "nothing was written" (a versioned multi-op
    # rolled back, an ACL); any other, once sent, may have landed in part (a partition Kafka refused)
    return WriteConflict(f"{exc}{_trail(plan, backup, conn, safety, sent and NOTHING not in str(exc))}")


def _unavailable(
    exc: StoreUnavailable, plan: Plan, backup: Path, conn: Connection, safety: Safety, *, sent: bool, written: bool
) -> WriteConflict:
    """A store lost on the way, logged, saying whether the write was applied, may have been, or was not sent."""
    known = (
        "the write was applied, but reading it back failed"
        if written
        else "the write may or may not have been applied"
        if sent
        else NOTHING
    )
    _log_failed(plan, backup, conn, safety, f"{known}: {exc}")
    return WriteConflict(f"{known}: {exc}{_trail(plan, backup, conn, safety, sent)}")


def _cut_off(plan: Plan, backup: Path, conn: Connection, safety: Safety, sent: bool) -> Interrupted:
    """An interrupt before the store took the write, logged: Interrupted when nothing was sent, InterruptedWrite
    when the write may or may not have been applied."""
    interrupts.hold()  # a second Ctrl-C must not lose what follows: the audit log and the message
    known = (
        "interrupted during the write: it may or may not have been applied"
        if sent
        else f"interrupted before the write: {NOTHING}"
    )
    _log_failed(plan, backup, conn, safety, known)
    return (InterruptedWrite if sent else Interrupted)(f"{known}{_trail(plan, backup, conn, safety, sent)}")


def _landed(
    plan: Plan,
    backup: Path,
    conn: Connection,
    safety: Safety,
    problems: list[str],
    said: tuple[str, ...],
    *,
    interrupted: bool,
) -> RepairResult:
    """The outcome of a write the store took: verified or what the read-back found, appended to the audit log (a
    note says when it could not be), with its undo line."""
    outcome = (
        "interrupted after the write was applied, before it was verified"
        if interrupted
        else "verified"
        if not problems
        else "; ".join(problems)
    )
    try:
        append_audit(
            safety.audit_log, audit_lines(plan, plan.writes, backup, _now(), _server(plan, conn), outcome=outcome)
        )
        audit, notes = safety.audit_log, said
    except OSError as exc:
        audit = None
        notes = said + (
            f"the change was made but its outcome could not be appended to the audit log "
            f"{safety.audit_log} ({exc.strerror or exc}); its intent is there",
        )
    if interrupted:
        notes += (f"{outcome}: check it with offctl inspect",)
    elif interrupts.received():
        notes += ("interrupted after the write was applied: it is reported in full",)
    return RepairResult(
        plan,
        executed=True,
        backup=backup,
        verified=not problems and not interrupted,
        problems=tuple(problems),
        audit_log=audit,
        notes=notes,
        undo=undo_command(plan, backup, conn, safety),
        interrupted=interrupted or interrupts.received(),
    )


NOTHING = "nothing was written"


def _trail(plan: Plan, backup: Path, conn: Connection, safety: Safety, sent: bool) -> str:
    """What follows the message of a write that failed or was cut off: where its before-image and audit log are,
    and what to do. A write never sent needs no restore. One that was sent may have landed in whole, in part or
    not at all: its undo line (undo_command's, pasted as it is, last on the line as "undo with: " prints it)
    puts back what differs from the before-image, and only that, so it is right whichever happened."""
    kept = f". The before-image is in {backup}; the audit log {safety.audit_log} has the change"
    if not sent:
        return f"{kept}; no restore is needed"
    return (
        f"; check with offctl inspect{kept}; undo with: {undo_command(plan, backup, conn, safety)}  # puts back "
        f"whatever part of the write landed; if none did, it finds nothing to change and exits 0"
    )


def _read_back(
    plan: Plan, zk: SpoutWriter | None, kafka: LogWriter | None, read_back: ReadBack
) -> tuple[list[str], tuple[str, ...], dict[tuple[str, int], tuple[int, str | None]]]:
    """What reading the written change back finds wrong (nothing: verified), what it notes, and a group's
    commits as read back (empty for ZooKeeper, whose read-back must hold exactly the bytes written)."""
    if plan.key.store in ZK_STORES:
        problems = verify_zookeeper(plan, zk.read_data([c.path for c in plan.writes]))
        return (problems + _newer_txids(plan, zk) if plan.key.store == TRIDENT else problems), (), {}
    back = {(c.topic, c.partition): (c.offset, c.metadata) for c in kafka.group_commits([plan.key.consumer])}
    found = verify_kafka(plan, back, read_back.profile, read_back.running, read_back.topology_id)
    return list(found.problems), found.notes, back


def _keep_after_image(
    plan: Plan, backup: Path, back: Mapping[tuple[str, int], tuple[int, str | None]]
) -> tuple[str, ...]:
    """The backup's after-image is what the write left. Where the broker kept a commit other than the one sent
    (a broker that drops commit metadata; Apache Kafka keeps it, and then nothing is rewritten), the backup is
    rewritten with the commits as read back, so that its undo compares the group with what the write really
    left. Returns a note when the backup could not be rewritten."""
    kept = {
        (c.topic, c.partition): back[(c.topic, c.partition)]
        for c in plan.writes
        if not c.delete
        and (c.topic, c.partition) in back
        and back[(c.topic, c.partition)] != (c.after, c.after_metadata)
    }
    if not kept:
        return ()
    try:
        record_read_back(backup, kept)
    except OSError as exc:
        return (
            f"the backup {backup} keeps the commits as sent, not as the broker kept them "
            f"({exc.strerror or exc}): its undo will be refused by changed-since on "
            f"{len(kept)} partition(s) (--force changed-since overrides)",
        )
    return ()


def _newer_txids(plan: Plan, zk: SpoutWriter) -> list[str]:
    """A Trident spout resumes from its highest txid: a newer one written meanwhile overrides the change (a batch
    rewritten beside its partition's row is checked by its read-back alone)."""
    newest = {
        n.path.rsplit("/", 1)[0]: n.path for n in zk.read_trident(plan.key.zk_root) if n.spout_id == plan.key.consumer
    }
    return [
        f"{now} was written after {c.path}: the spout resumes from it, not from the change"
        for c in plan.writes
        if c.batch is None and (now := newest.get(c.path.rsplit("/", 1)[0], c.path)) != c.path
    ]


def _unmoved(plan: Plan, kafka: LogWriter) -> None:
    """Kafka has no conditional commit: read the group again just before writing and abort if a planned
    partition moved since the plan was made."""
    group = plan.key.consumer
    now = {(c.topic, c.partition): c for c in kafka.group_commits([group])}
    moved = []
    if any(c.delete for c in plan.writes):  # deleting the group: no commit may have appeared elsewhere
        planned = {(c.topic, c.partition) for c in plan.writes}
        moved += [f"{t}/{p} (was none, now {c.offset})" for (t, p), c in sorted(now.items()) if (t, p) not in planned]
    for c in plan.writes:
        commit = now.get((c.topic, c.partition))
        was = (c.before, c.before_metadata) if c.had_commit else None
        if ((commit.offset, commit.metadata) if commit else None) != was:
            moved.append(f"{c.topic}/{c.partition} (was {c.before}, now {commit.offset if commit else 'none'})")
    if moved:
        raise WriteConflict(f"nothing was written: group {group} changed since it was read: {', '.join(moved[:10])}")


def outcome_exit_code(outcome: RepairResult) -> int:
    """The error's code when the write failed, 6 when an interrupt came after the write landed, 4 when a guard
    refused, 8 when the prompt was answered no, 5 when verification failed, 7 when the plan leaves a partition of its
    scope out, else 0."""
    if outcome.error_code:
        return outcome.error_code
    if outcome.interrupted:
        return InterruptedWrite.exit_code
    if outcome.plan.refused:
        return 4
    if outcome.declined:
        return NOT_CONFIRMED
    if outcome.verified is False:
        return 5
    if outcome.plan.left_out:
        return LEFT_OUT
    return 0


# after an interrupt, what an SRE must see first: a failed write, unread, refused, a partition left out
EXIT_PRIORITY = (5, 3, 4, NOT_CONFIRMED, LEFT_OUT)


def outcomes_exit_code(outcomes: Iterable[RepairResult]) -> int:
    """The exit code of a run over several consumers: interrupted after one of them was written (6), or before
    (130), else the most urgent of theirs."""
    outcomes = list(outcomes)
    codes = {outcome_exit_code(o) for o in outcomes}
    if codes & {Interrupted.exit_code, InterruptedWrite.exit_code}:
        wrote = InterruptedWrite.exit_code in codes or any(o.executed for o in outcomes)
        return InterruptedWrite.exit_code if wrote else Interrupted.exit_code
    return next((c for c in EXIT_PRIORITY if c in codes), max(codes, default=0))
