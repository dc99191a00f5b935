"""`offctl reset`, `restore` and `migrate` as library calls: read, plan, guard, back up, write, verify, log.

Each call reads the consumer's current state, builds a Plan with the pure planner, checks the guards,
and stops there unless `execute` is set. Executing confirms, writes the before-image to a backup file,
writes through the store's safe writer (one versioned multi-op per spout in ZooKeeper; one commit request
per group in Kafka, after checking nothing moved), reads back to verify, and appends to the audit log.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from offctl.backup import append_audit, audit_lines, load_backup, load_offsets_file, state_dir, write_backup
from offctl.config import Connection, normalize_root
from offctl.errors import Interrupted, StoreUnavailable, UsageError, WriteConflict
from offctl.inspect import LogStore, Selection, SpoutStore, check_spout_id, open_stores, read_snapshot
from offctl.model import KAFKA, ZOOKEEPER, ConsumerKey, KafkaCommit, OffsetRecord, Snapshot
from offctl.plan import (GuardFacts, Plan, Target, plan_kafka, plan_migrate, plan_restore_kafka,
                         plan_restore_zookeeper, plan_zookeeper, verify_kafka, verify_zookeeper, with_guards)
from offctl.storm import parse_commit, parse_zk_node


@dataclass(frozen=True)
class Safety:
    execute: bool = False
    force: frozenset[str] = frozenset()
    quiet_period_s: float = 10.0
    backup_dir: Path = field(default_factory=lambda: state_dir() / "backups")
    audit_log: Path = field(default_factory=lambda: state_dir() / "audit.log")


@dataclass(frozen=True)
class Outcome:
    plan: Plan
    executed: bool = False  # the write went to the store
    declined: bool = False  # the operator answered no at the prompt
    backup: Path | None = None
    verified: bool | None = None  # None: nothing was written
    problems: tuple[str, ...] = ()  # what verification found
    audit_log: Path | None = None
    notes: tuple[str, ...] = ()
    undo: str | None = None  # the command that puts the before-image back, to paste as it is


def undo_command(plan: Plan, backup: Path, conn: Connection, safety: Safety) -> str:
    """`offctl restore BACKUP --execute` with the flags the write needed: its servers, the guards it had to
    force (a topology still running is still running), and its backup directory and audit log."""
    parts = ["offctl", "restore", str(backup), "--execute"]
    if plan.key.store == ZOOKEEPER and conn.zk:
        parts += ["--zk", conn.zk]
    if conn.bootstrap_servers:
        parts += ["--bootstrap-servers", conn.bootstrap_servers]
    if conn.storm_root != "/storm":
        parts += ["--storm-root", conn.storm_root]
    defaults = Safety()
    if safety.backup_dir != defaults.backup_dir:
        parts += ["--backup-dir", str(safety.backup_dir)]
    if safety.audit_log != defaults.audit_log:
        parts += ["--audit-log", str(safety.audit_log)]
    for guard in sorted(g.guard for g in plan.guards if g.status == "overridden"):
        parts += ["--force", guard]
    return shlex.join(parts)


Confirm = Callable[[Plan], bool]


class SpoutWriter(SpoutStore, Protocol):
    def read_data(self, paths: Sequence[str]) -> dict[str, bytes]: ...
    def write_versioned(self, changes: Sequence[tuple[str, bytes, int]]) -> None: ...


class LogWriter(LogStore, Protocol):
    def offsets_for_times(self, partitions: Iterable[tuple[str, int]], at_ms: int) -> dict[tuple[str, int], int | None]: ...
    def commit(self, group: str, offsets: Iterable[tuple[str, int, int, str | None]]) -> None: ...


@dataclass(frozen=True)
class ResetRequest:
    spout: str | None = None
    group: str | None = None
    topic: str | None = None
    partitions: frozenset[int] | None = None
    target: Target | None = None
    from_file: Path | None = None
    topology_id: str | None = None
    zk_root: str | None = None  # from a --from-file plan or backup; else the one --zk-root


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


def _read(zk: SpoutStore | None, kafka: LogStore | None, roots: list[str], selection: Selection,
          storm_root: str) -> tuple[Snapshot, list[OffsetRecord]]:
    """The consumer's current state, raw and parsed; StoreUnavailable unless all of it could be read."""
    snapshot, records = read_snapshot(zk, kafka, roots, selection, storm_root, _now())
    if snapshot.incomplete:
        raise StoreUnavailable("could not read everything a safe plan needs: " + "; ".join(snapshot.incomplete))
    return snapshot, [r for rs in records.values() for r in rs]


def _facts(snapshot: Snapshot, conn: Connection, safety: Safety, *, topology_ids: set[str],
           zk_paths: bool, groups: tuple[str, ...]) -> GuardFacts:
    if snapshot.running is not None:
        why = ""
    elif not conn.zk:
        why = "no --zk given, so Storm's root cannot be read (give --zk of Storm's ZooKeeper)"
    else:
        why = f"{conn.storm_root}/storms does not exist on {conn.zk} (set --storm-root)"
    return GuardFacts(
        topology_ids=frozenset(t for t in topology_ids if t),
        running=snapshot.running, running_unknown_why=why,
        zk_modified_ms={n.path: n.mtime_ms for n in snapshot.zk_nodes} if zk_paths else {},
        groups=tuple(g for g in snapshot.groups if g.group in groups),
        now_ms=_now(), quiet_period_s=safety.quiet_period_s)


def _topologies(records: Iterable[OffsetRecord]) -> set[str]:
    """Storm ids named by records (ZooKeeper) or commit metadata (Kafka)."""
    return {r.topology_id for r in records if r.topology_id}


# --- reset ---------------------------------------------------------------------------------------------------


def _resolve_request(conn: Connection, request: ResetRequest) -> tuple[ResetRequest, Target]:
    """Check the command line and turn --from-file into explicit targets; UsageError on any mistake."""
    if request.from_file is not None and request.target is not None:
        raise UsageError("give either --to or --from-file, not both")
    target = request.target
    if request.from_file is not None:
        loaded = load_offsets_file(request.from_file)
        key = loaded.key
        if key is not None:
            chosen = (ConsumerKey(ZOOKEEPER, request.spout, key.zk_root) if request.spout else
                      ConsumerKey(KAFKA, request.group) if request.group else None)
            if chosen is not None and (chosen.store, chosen.consumer) != (key.store, key.consumer):
                raise UsageError(f"{request.from_file} is a {loaded.kind} for {key}, not for {chosen}")
            if key.store == ZOOKEEPER:
                if conn.zk_roots and normalize_root(conn.zk_roots[0]) != key.zk_root:
                    raise UsageError(f"{request.from_file} is for zkRoot {key.zk_root}, not {conn.zk_roots[0]}")
                request = replace(request, spout=key.consumer, zk_root=key.zk_root)
            else:
                request = replace(request, group=key.consumer)
        if not loaded.offsets:
            raise UsageError(f"{request.from_file} holds no offsets to apply")
        target = Target("file", offsets=loaded.offsets, source=str(request.from_file))
    if target is None:
        raise UsageError("say where to move the offsets: --to earliest|latest|offset|time|shift, or --from-file")
    if (request.spout is None) == (request.group is None):
        raise UsageError("reset needs exactly one of --spout (a storm-kafka spout in ZooKeeper) or --group "
                         "(a storm-kafka-client group in Kafka)")
    _check_consumer(request.spout, request.group)
    if request.spout is not None and request.topology_id is not None:
        raise UsageError("--topology-id is for Kafka groups: a ZooKeeper record keeps its own topology")
    return request, target


def reset(conn: Connection, request: ResetRequest, safety: Safety, confirm: Confirm) -> Outcome:
    """Plan (and with safety.execute, apply) a reset of one spout or group."""
    request, target = _resolve_request(conn, request)
    zk_spout = request.spout is not None
    if zk_spout:
        _need(conn, zk=True, root=request.zk_root is None, kafka=True, why="reset --spout")
        roots = [request.zk_root or normalize_root(conn.zk_roots[0])]
        key = ConsumerKey(ZOOKEEPER, request.spout, roots[0])
        selection = Selection(spouts=(request.spout,), topic=request.topic)
    else:
        _need(conn, kafka=True, why="reset --group")
        roots, key = [], ConsumerKey(KAFKA, request.group)
        selection = Selection(groups=(request.group,), topic=request.topic)
    with open_stores(replace(conn, zk_roots=tuple(roots))) as (zk, kafka):
        snapshot, records = _read(zk, kafka, roots, selection, conn.storm_root)
        cluster = snapshot.cluster or {}
        time_offsets = {}
        if target.kind == "time":
            wanted = {(t, p) for t in cluster for p in cluster[t]}
            time_offsets = kafka.offsets_for_times(sorted(wanted), target.at_ms)
        if zk_spout:
            if not snapshot.zk_nodes:
                raise UsageError(f"spout id '{request.spout}' has no partition records under {roots[0]}")
            plan = plan_zookeeper(key, snapshot.zk_nodes, cluster, target, topic=request.topic,
                                  partitions=request.partitions, time_offsets=time_offsets,
                                  captured_ms=snapshot.captured_ms)
            facts = _facts(snapshot, conn, safety, topology_ids=_topologies(records), zk_paths=True, groups=())
        else:
            if not snapshot.commits and not (request.topic and request.topic in cluster):
                raise UsageError(f"group '{request.group}' has no commits"
                                 + (f" on {request.topic}, and that topic does not exist" if request.topic else
                                    ": name the topic with --topic to commit offsets for it"))
            plan = plan_kafka(request.group, snapshot.commits, cluster, target, topic=request.topic,
                              partitions=request.partitions, topology_id=request.topology_id,
                              time_offsets=time_offsets, captured_ms=snapshot.captured_ms)
            topologies = _topologies(records) | {request.topology_id}
            facts = _facts(snapshot, conn, safety, topology_ids=topologies, zk_paths=False, groups=(request.group,))
        if not plan.changes:
            raise UsageError(f"nothing matches: {key} has no records"
                             + (f" on topic {request.topic}" if request.topic else "")
                             + (" in the given --partitions" if request.partitions is not None else ""))
        plan = with_guards(plan, facts, safety.force)
        return _execute(plan, zk, kafka, conn, safety, confirm)


# --- restore -------------------------------------------------------------------------------------------------


def restore(conn: Connection, path: Path, safety: Safety, confirm: Confirm, *, hand_made: bool = False) -> Outcome:
    """Put a backup's before-image back, byte for byte, through the same guards and writer. A backup must
    pass its checksum; a `hand_made` file need not, but what it says must pass the planner's checks."""
    backup = load_backup(path, hand_made=hand_made)
    key = backup.key
    if key.store == ZOOKEEPER:
        _need(conn, zk=True, why=f"restoring {key}")
        if conn.zk_roots and normalize_root(conn.zk_roots[0]) != key.zk_root:
            raise UsageError(f"{path} is for zkRoot {key.zk_root}, not {conn.zk_roots[0]}")
        roots, selection = [key.zk_root], Selection(spouts=(key.consumer,))
    else:
        _need(conn, kafka=True, why=f"restoring {key}")
        roots, selection = [], Selection(groups=(key.consumer,))
    with open_stores(replace(conn, zk_roots=tuple(roots))) as (zk, kafka):
        snapshot, records = _read(zk, kafka, roots, selection, conn.storm_root)
        if key.store == ZOOKEEPER:
            plan = plan_restore_zookeeper(key, backup.nodes, snapshot.zk_nodes, snapshot.cluster, source=str(path),
                                          captured_ms=snapshot.captured_ms, hand_made=hand_made)
            saved = _topologies(map(parse_zk_node, backup.nodes))
            facts = _facts(snapshot, conn, safety, topology_ids=_topologies(records) | saved, zk_paths=True,
                           groups=())
            # offctl's own write, still untouched, is no sign that something else is committing
            own = backup.own_writes(snapshot.zk_nodes)
            facts = replace(facts, zk_modified_ms={p: m for p, m in facts.zk_modified_ms.items() if p not in own})
        else:
            plan = plan_restore_kafka(key.consumer, backup.commits, snapshot.commits, snapshot.cluster,
                                      source=str(path), captured_ms=snapshot.captured_ms, hand_made=hand_made)
            saved = _topologies(parse_commit(c) for c in backup.commits if isinstance(c, KafkaCommit))
            facts = _facts(snapshot, conn, safety, topology_ids=_topologies(records) | saved, zk_paths=False,
                           groups=(key.consumer,))
        plan = with_guards(plan, facts, safety.force)
        return _execute(plan, zk, kafka, conn, safety, confirm)


# --- migrate -------------------------------------------------------------------------------------------------


def migrate(conn: Connection, spout: str, group: str, topology_id: str, safety: Safety, confirm: Confirm, *,
            topic: str | None = None, partitions: frozenset[int] | None = None) -> Outcome:
    """Copy a storm-kafka spout's ZooKeeper offsets into a storm-kafka-client group, with Storm metadata."""
    _check_consumer(spout, group)
    if not topology_id:
        raise UsageError("migrate needs --topology-id: the storm id of the storm-kafka-client topology, so "
                         "its spout honours the commits")
    _need(conn, zk=True, root=True, kafka=True, why="migrate")
    root = normalize_root(conn.zk_roots[0])
    source = ConsumerKey(ZOOKEEPER, spout, root)
    with open_stores(replace(conn, zk_roots=(root,))) as (zk, kafka):
        snapshot, records = _read(zk, kafka, [root], Selection(spouts=(spout,), groups=(group,)), conn.storm_root)
        if not snapshot.zk_nodes:
            raise UsageError(f"spout id '{spout}' has no partition records under {root}")
        plan = plan_migrate(source, snapshot.zk_nodes, group, snapshot.commits, snapshot.cluster or {}, topology_id,
                            topic=topic, partitions=partitions, captured_ms=snapshot.captured_ms)
        topologies = _topologies(records) | {topology_id}
        facts = _facts(snapshot, conn, safety, topology_ids=topologies, zk_paths=True, groups=(group,))
        plan = with_guards(plan, facts, safety.force)
        return _execute(plan, zk, kafka, conn, safety, confirm)


# --- the safe writer ---------------------------------------------------------------------------------------


def _execute(plan: Plan, zk: SpoutWriter | None, kafka: LogWriter | None, conn: Connection, safety: Safety,
             confirm: Confirm) -> Outcome:
    if not safety.execute or plan.refused or not plan.writes:
        return Outcome(plan)
    if not confirm(plan):
        return Outcome(plan, declined=True)
    backup = write_backup(plan, safety.backup_dir, _now())
    server = f"zookeeper {conn.zk}" if plan.key.store == ZOOKEEPER else f"kafka {conn.bootstrap_servers}"
    trail = f"The before-image is in {backup}; the audit log {safety.audit_log} has the change"
    try:  # the intent is on disk before the first write, or nothing is written
        append_audit(safety.audit_log, audit_lines(plan, plan.writes, backup, _now(), server, phase="intent"))
    except OSError as exc:
        raise WriteConflict(f"could not write the audit log {safety.audit_log} ({exc.strerror or exc}); nothing "
                            f"was changed. Choose another with --audit-log") from None

    def failed(outcome: str) -> None:
        try:
            append_audit(safety.audit_log, audit_lines(plan, plan.writes, backup, _now(), server, phase="failed",
                                                       outcome=outcome))
        except OSError:
            pass  # the intent line is there; the message below says the rest

    written = False
    try:
        if plan.key.store == ZOOKEEPER:
            zk.write_versioned([(c.path, c.after_data, c.version) for c in plan.writes])
            written = True
            problems = verify_zookeeper(plan, zk.read_data([c.path for c in plan.writes]))
        else:
            problems = _write_kafka(plan, kafka)
    except WriteConflict as exc:  # its message says whether anything was written
        failed(str(exc))
        raise WriteConflict(f"{exc}. {trail}") from None
    except StoreUnavailable as exc:
        known = ("the write was applied, but reading it back failed" if written else
                 "the write may or may not have been applied")
        failed(f"{known}: {exc}")
        raise WriteConflict(f"{known}: {exc}. {trail}; check with offctl inspect") from None
    except KeyboardInterrupt:
        known = ("interrupted after the write was applied, before it was verified" if written else
                 "interrupted during the write: it may or may not have been applied")
        failed(known)
        raise Interrupted(f"{known}. {trail}; check with offctl inspect") from None
    notes: tuple[str, ...] = ()
    try:
        append_audit(safety.audit_log, audit_lines(plan, plan.writes, backup, _now(), server,
                                                   outcome="verified" if not problems else "; ".join(problems)))
        audit = safety.audit_log
    except OSError as exc:
        audit = None
        notes = (f"the change was made but its outcome could not be appended to the audit log {safety.audit_log} "
                 f"({exc.strerror or exc}); its intent is there",)
    return Outcome(plan, executed=True, backup=backup, verified=not problems, problems=tuple(problems),
                   audit_log=audit, notes=notes, undo=undo_command(plan, backup, conn, safety))


def _write_kafka(plan: Plan, kafka: LogWriter) -> list[str]:
    """Kafka has no conditional commit: read the group again just before writing and abort if a planned
    partition moved since the plan was made, then commit, then read back."""
    group = plan.key.consumer
    now = {(c.topic, c.partition): c for c in kafka.group_commits([group])}
    moved = []
    for c in plan.writes:
        commit = now.get((c.topic, c.partition))
        was = (c.before, c.before_metadata) if c.had_commit else None
        if ((commit.offset, commit.metadata) if commit else None) != was:
            moved.append(f"{c.topic}/{c.partition} (was {c.before}, now {commit.offset if commit else 'none'})")
    if moved:
        raise WriteConflict(f"nothing was written: group {group} changed since it was read: {', '.join(moved[:10])}")
    kafka.commit(group, [(c.topic, c.partition, c.after, c.after_metadata) for c in plan.writes])
    back = {(c.topic, c.partition): (c.offset, c.metadata) for c in kafka.group_commits([group])}
    return verify_kafka(plan, back)


def outcome_exit_code(outcome: Outcome) -> int:
    """4 when a guard refused or the prompt was declined, 5 when verification failed, else 0."""
    if outcome.plan.refused or outcome.declined:
        return 4
    if outcome.verified is False:
        return 5
    return 0
