"""Plans an assistant may ask for, bound to the state they saw, and applied only with a human's yes (issue 30).

The MCP face's plan tools call `PlanStore.plan_reset / plan_restore / plan_migrate / plan_delete`: each runs the
very library call the CLI's dry run makes (offctl.repair.reset with Safety(execute=False)) and keeps what it saw: every
change's before-value (ZooKeeper bytes and version, Kafka offset and metadata), what it would write, and the
guards' verdicts. `apply` runs the same call again with Safety(execute=True); the library reads the state afresh
and hands the plans to its Confirm callback just before the write, where they are compared with the stored plan:
any difference refuses (the callback answers no: nothing is written). The library's guards judge again, never
forced. Only then is the human asked, shown the plan's table and cost; their no is a no. The write itself is the
CLI's: backup, audit log, versioned write, read-back, undo line.

No MCP here: plain Python over plain values (str, int, list), so that a tool's parameters map onto it and tests
need no client.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from offctl.core.plans.guards import QUIET_PERIOD_S
from offctl.core.plans.plan import Plan
from offctl.core.plans.targets import TARGETS, Scope, Target, make_target, parse_partitions, parse_topics
from offctl.core.records.model import KAFKA, TRIDENT, ZOOKEEPER, iso_ms
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import OffctlError, UsageError
from offctl.render import mcp as documents
from offctl.repair.reset import Confirm, RepairResult, ResetRequest, Safety, safety_flags, server_flags
from offctl.settings.connection import Connection, normalize_root

DEFAULT_TTL_S = 600.0  # a plan may be applied for 10 minutes after it was made
STORES = (ZOOKEEPER, KAFKA, TRIDENT)
# targets whose offsets follow the log (its start, its end): a re-read may move them, and the human approved the
# target, not the number. Every other target's offsets are fixed by what was read, so a different one is a change.
FOLLOWS_LOG = frozenset({"earliest", "latest"})


# --- what the face resolves per context -----------------------------------------------------------------------


def _no_profile(consumers: Sequence[str]) -> SpoutProfile | None:
    return None


@dataclass(frozen=True)
class WriteTarget:
    """Where one context's writes go and how: its servers and roots (`conn`), the spout profile of the consumers
    written (`profile`: offctl.settings.resolve.written_profile's answer for them), and the Safety settings a write
    keeps. `cli_context`: the --context an operator's offctl takes for these servers (None: they are only flags)."""

    context: str
    conn: Connection
    backup_dir: Path
    audit_log: Path
    quiet_period_s: float = QUIET_PERIOD_S
    profile: Callable[[Sequence[str]], SpoutProfile | None] = _no_profile
    cli_context: str | None = None

    def safety(self, execute: bool) -> Safety:
        """The write's safety settings: never a --force (an assistant has none to give)."""
        return Safety(
            execute=execute,
            force=frozenset(),
            quiet_period_s=float(self.quiet_period_s),
            backup_dir=self.backup_dir,
            audit_log=self.audit_log,
        )


# --- the state a plan saw, and how it is compared ---------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One change as the plan read and planned it: the before-value (bytes and version, or offset and metadata)
    and what it writes."""

    where: str  # the ZooKeeper path, or topic/partition
    topic: str | None
    partition: int
    path: str | None
    version: int | None
    before: int | None
    before_data: bytes | None
    before_metadata: str | None
    had_commit: bool
    action: str
    after: int | None
    after_data: bytes | None
    after_metadata: str | None


@dataclass(frozen=True)
class State:
    """One consumer's plan as bound: its changes and the guards' verdicts (statuses only: their messages carry
    ages that move with the clock)."""

    consumer: str
    changes: tuple[Seen, ...]
    guards: tuple[tuple[str, str], ...]
    group_had_commits: bool | None = None


def state_of(plan: Plan) -> State:
    """What a plan saw and would write, as it is bound."""
    return State(
        str(plan.key),
        tuple(
            Seen(
                c.path or f"{c.topic}/{c.partition}",
                c.topic,
                c.partition,
                c.path,
                c.version,
                c.before,
                c.before_data,
                c.before_metadata,
                c.had_commit,
                c.action,
                c.after,
                c.after_data,
                c.after_metadata,
            )
            for c in plan.changes
        ),
        tuple((g.guard, g.status) for g in plan.guards),
        plan.group_had_commits,
    )


@dataclass(frozen=True)
class Comparison:
    """What differs between the state a plan saw and the state read just before the write: `changed` refuses;
    `moved` (a target that follows the log, whose offsets moved with it) is said, not refused."""

    changed: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()  # guards whose verdict differs: the state they judge changed too
    moved: tuple[str, ...] = ()

    @property
    def same(self) -> bool:
        return not self.changed and not self.guards


def _offset_text(c: Seen) -> str:
    if c.path is not None:
        return f"offset {c.before} (version {c.version})" if c.version is not None and c.version >= 0 else "no record"
    return (
        f"offset {c.before}" + (f", metadata {c.before_metadata!r}" if c.before_metadata else "")
        if c.had_commit
        else "no commit"
    )


def compare(saw: Sequence[State], now: Sequence[State], *, follows_log: bool = False) -> Comparison:
    """Compare the states, consumer by consumer and change by change: a before-value that differs in any byte,
    version, offset or metadata; a change that appeared or is gone; a guard whose verdict differs; a different
    write (unless `follows_log`: then a different after-offset is only said)."""
    changed: list[str] = []
    guards: list[str] = []
    moved: list[str] = []
    was_by, now_by = {s.consumer: s for s in saw}, {s.consumer: s for s in now}
    changed += [f"{c}: no longer planned" for c in was_by if c not in now_by]
    changed += [f"{c}: planned now, not in the plan" for c in now_by if c not in was_by]
    for consumer in (c for c in was_by if c in now_by):
        was, is_ = was_by[consumer], now_by[consumer]
        differ, follow = _compare_changes(consumer, was, is_, follows_log)
        changed += differ + _group_commits_change(consumer, was, is_)
        moved += follow
        guards += _guard_changes(consumer, was, is_)
    return Comparison(tuple(changed), tuple(guards), tuple(moved))


def _compare_changes(consumer: str, was: State, is_: State, follows_log: bool) -> tuple[list[str], list[str]]:
    """One consumer's changes then and now, where by where: those gone or new, and those that differ (changed), or
    whose write only moved with the log (moved)."""
    old, new = {c.where: c for c in was.changes}, {c.where: c for c in is_.changes}
    changed = [f"{consumer} {w}: in the plan, gone now" for w in old if w not in new]
    changed += [f"{consumer} {w}: not in the plan, there now ({_offset_text(new[w])})" for w in new if w not in old]
    moved: list[str] = []
    for where in (w for w in old if w in new):
        said, only_moved = _compare_change(f"{consumer} {where}", old[where], new[where], follows_log)
        if said is not None:
            (moved if only_moved else changed).append(said)
    return changed, moved


def _compare_change(label: str, a: Seen, b: Seen, follows_log: bool) -> tuple[str | None, bool]:
    """What differs in one change, said (None: nothing), and whether it only moved with the log: the same action
    to another after-offset, for a target that follows the log. A different before-value always counts."""
    before_a = (a.version, a.before, a.before_data, a.before_metadata, a.had_commit)
    before_b = (b.version, b.before, b.before_data, b.before_metadata, b.had_commit)
    if before_a != before_b:
        why = (
            f"{_offset_text(a)} then, {_offset_text(b)} now"
            if _offset_text(a) != _offset_text(b)
            else "other bytes now"
        )
        return f"{label}: {why}", False
    if (a.action, a.after, a.after_data, a.after_metadata) != (b.action, b.after, b.after_data, b.after_metadata):
        return (
            f"{label}: planned {a.action} to {a.after}, now {b.action} to {b.after}",
            follows_log and a.action == b.action,
        )
    return None, False


def _group_commits_change(consumer: str, was: State, is_: State) -> list[str]:
    """Whether the group had commits then and has now, said when that differs."""
    if was.group_had_commits == is_.group_had_commits:
        return []
    return [
        f"{consumer}: the group {'had' if was.group_had_commits else 'had no'} commits then, "
        f"{'has' if is_.group_had_commits else 'has none'} now"
    ]


def _guard_changes(consumer: str, was: State, is_: State) -> list[str]:
    """The guards whose verdict now differs from the plan's (or that are not judged now)."""
    verdicts = dict(is_.guards)
    return [
        f"{consumer}: guard {g} was {s}, now {verdicts.get(g, 'not judged')}"
        for g, s in was.guards
        if verdicts.get(g) != s
    ]


# --- plans ----------------------------------------------------------------------------------------------------


Call = Callable[[Safety, Confirm], list[RepairResult]]  # the library call a plan re-runs: dry, then to write


@dataclass(frozen=True)
class StoredPlan:
    """A plan an assistant asked for: the library call it re-runs (`call`, with `request`, its arguments as
    given), what it saw (`state`), its dry run (`document`, render.outcome_document), the text a human is shown
    (`text`), the offctl command line an operator would run by hand (`command`), and its lifetime."""

    id: str
    kind: str  # reset | restore | migrate | delete
    context: str
    request: dict
    state: tuple[State, ...]
    document: dict
    text: str
    command: str
    created: float  # seconds since the epoch
    expires: float
    follows_log: bool = False
    refused: tuple[str, ...] = ()  # guards that refused the dry run: "guard: message"
    writes: int = 0  # how many changes it writes
    call: Call | None = field(default=None, repr=False, compare=False)
    run: WriteTarget | None = field(default=None, repr=False, compare=False)
    digest: str | None = None  # restore: the backup file's sha256 when planned


@dataclass
class _Entry:
    plan: StoredPlan
    used: str | None = None  # None | "applying" | what ended it: applied | declined | stale


class PlanStore:
    """The plans of one server process, in memory; `clock` (seconds since the epoch) is injectable for tests."""

    def __init__(self, *, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.time) -> None:
        self.ttl_s, self.clock = ttl_s, clock
        self._plans: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def get(self, plan_id: str) -> StoredPlan | None:
        entry = self._plans.get(plan_id)
        return entry.plan if entry else None

    def keep(
        self,
        kind: str,
        run: WriteTarget,
        request: dict,
        call: Call,
        *,
        follows_log: bool = False,
        digest: str | None = None,
    ) -> StoredPlan:
        """Run `call` as a dry run and keep its plan, bound to what it read."""
        outcomes = call(run.safety(False), _never)
        plans = [o.plan for o in outcomes]
        now = self.clock()
        plan_id = secrets.token_urlsafe(16)
        expires = now + self.ttl_s
        stored = StoredPlan(
            id=plan_id,
            kind=kind,
            context=run.context,
            request=request,
            state=tuple(map(state_of, plans)),
            document=documents.plan_document(outcomes),
            text=documents.plan_text(plans, run.conn, plan_id, expires),
            command=command_line(kind, request, run),
            created=now,
            expires=expires,
            follows_log=follows_log,
            refused=tuple(f"{g.guard}: {g.message}" for p in plans for g in p.refused),
            writes=sum(len(p.writes) for p in plans),
            call=call,
            run=run,
            digest=digest,
        )
        with self._lock:
            for old in [k for k, e in self._plans.items() if e.plan.expires < now - self.ttl_s]:
                del self._plans[old]  # long gone: a server running for weeks does not keep every plan
            self._plans[plan_id] = _Entry(stored)
        return stored

    # the four plan tools

    def plan_reset(
        self,
        run: WriteTarget,
        *,
        store: str,
        consumer: str,
        to: str,
        value: str | int | None = None,
        topics: Sequence[str] | None = None,
        partitions: str | None = None,
        zk_root: str | None = None,
        static_partitions: str | None = None,
        topology_id: str | None = None,
        no_storm_metadata: bool = False,
    ) -> StoredPlan:
        """Plan a reset of one consumer: a storm-kafka spout (store "zookeeper", its spout id), a Trident spout
        ("trident", its txStateId) or a storm-kafka-client group ("kafka", its group.id); `to` one of earliest,
        latest, current, offset (value: the offset), time (value: ISO-8601 with a zone, or epoch ms), shift (value:
        +N or -N); `topics` as --topic takes them (orders, orders:0-3), `partitions` as --partitions (0,3 or 0-7);
        `zk_root` the spout's root (its Trident root for "trident"), needed when the context has several;
        `static_partitions` the partitions a spout on StaticHosts reads (as --static-partitions ID=LIST takes
        LIST); `topology_id` or `no_storm_metadata` for a group, as the CLI's --topology-id and
        --no-storm-metadata. What the CLI takes beyond this (several groups, --all-groups, --from-file,
        --by-duration, --force) is the operator's, at the command line."""
        from offctl.repair.reset import reset

        if store not in STORES:
            raise UsageError(f"store {store!r}: expected one of {', '.join(STORES)}")
        target = _target(to, value, int(self.clock() * 1000))
        scope = Scope(parse_topics(list(topics or ())), parse_partitions(partitions))
        if store == KAFKA:
            if zk_root is not None or static_partitions is not None:
                raise UsageError("zk_root and static_partitions are for a storm-kafka or Trident spout, not a group")
        elif topology_id is not None or no_storm_metadata:
            raise UsageError(
                "topology_id and no_storm_metadata are for Kafka groups: a ZooKeeper record keeps its own topology"
            )
        conn = _rooted(run, zk_root, trident=store == TRIDENT) if store != KAFKA else run.conn
        static = {consumer: parse_partitions(static_partitions, "static_partitions")} if static_partitions else {}
        request = ResetRequest(
            spout=consumer if store == ZOOKEEPER else None,
            groups=(consumer,) if store == KAFKA else (),
            trident=consumer if store == TRIDENT else None,
            scope=scope,
            target=target,
            topology_id=topology_id,
            plain=no_storm_metadata,
            static_partitions=static,
        )
        asked = {
            "store": store,
            "consumer": consumer,
            "to": to,
            "value": value,
            "topics": list(topics or []),
            "partitions": partitions,
            "zk_root": _root_of(conn, store),
            "static_partitions": static_partitions,
            "topology_id": topology_id,
            "no_storm_metadata": no_storm_metadata,
        }
        if target.kind == "time":
            asked["at"] = iso_ms(target.at_ms)
        profile = run.profile([consumer])

        def call(safety: Safety, confirm: Confirm) -> list[RepairResult]:
            return reset(conn, request, safety, confirm, profile)

        return self.keep("reset", replace(run, conn=conn), asked, call, follows_log=target.kind in FOLLOWS_LOG)

    def plan_restore(self, run: WriteTarget, *, backup: str) -> StoredPlan:
        """Plan putting back a backup an earlier write kept, named by its file name (or path) in the context's
        backup directory. Hand-made files are the operator's, at the command line."""
        from offctl.adapters.backup import load_backup
        from offctl.repair.reset import restore

        path = _backup_path(run, backup)
        digest = _sha256(path)
        key = load_backup(path).key
        conn = replace(run.conn, zk_roots=(), trident_roots=())  # the backup names its root
        profile = run.profile([key.consumer])

        def call(safety: Safety, confirm: Confirm) -> list[RepairResult]:
            return [restore(conn, path, safety, confirm, profile=profile)]

        return self.keep("restore", replace(run, conn=conn), {"backup": str(path)}, call, digest=digest)

    def plan_migrate(
        self,
        run: WriteTarget,
        *,
        spout: str,
        group: str,
        topology_id: str,
        topic: str | None = None,
        partitions: str | None = None,
        zk_root: str | None = None,
    ) -> StoredPlan:
        """Plan copying a storm-kafka spout's ZooKeeper offsets into its storm-kafka-client successor's group,
        with Storm metadata for `topology_id`."""
        from offctl.repair.reset import migrate

        scope = Scope(parse_topics([topic] if topic else None), parse_partitions(partitions))
        conn = _rooted(run, zk_root)
        profile = run.profile([group])
        asked = {
            "spout": spout,
            "group": group,
            "topology_id": topology_id,
            "topic": topic,
            "partitions": partitions,
            "zk_root": conn.zk_roots[0] if conn.zk_roots else None,
        }

        def call(safety: Safety, confirm: Confirm) -> list[RepairResult]:
            return [migrate(conn, spout, group, topology_id, safety, confirm, scope=scope, profile=profile)]

        return self.keep("migrate", replace(run, conn=conn), asked, call)

    def plan_delete(
        self,
        run: WriteTarget,
        *,
        spout: str,
        topics: Sequence[str] | None = None,
        partitions: str | None = None,
        record_topic: str | None = None,
        written_by: str | None = None,
        all_records: bool = False,
        zk_root: str | None = None,
    ) -> StoredPlan:
        """Plan deleting some of a storm-kafka spout's partition records (all of the selectors given must match)."""
        from offctl.repair.reset import delete

        if record_topic is not None:
            parse_topics([record_topic])
        scope = Scope(parse_topics(list(topics or ())), parse_partitions(partitions))
        conn = _rooted(run, zk_root)
        asked = {
            "spout": spout,
            "topics": list(topics or []),
            "partitions": partitions,
            "record_topic": record_topic,
            "written_by": written_by,
            "all_records": all_records,
            "zk_root": conn.zk_roots[0] if conn.zk_roots else None,
        }

        def call(safety: Safety, confirm: Confirm) -> list[RepairResult]:
            return [
                delete(
                    conn,
                    spout,
                    safety,
                    confirm,
                    scope=scope,
                    record_topic=record_topic,
                    written_by=written_by,
                    every=all_records,
                )
            ]

        return self.keep("delete", replace(run, conn=conn), asked, call)

    # apply's bookkeeping: a plan is applied at most once

    def _claim(self, plan_id: str, now: float) -> tuple[StoredPlan | None, str | None]:
        with self._lock:
            entry = self._plans.get(plan_id)
            if entry is None:
                return None, (
                    f"no plan {_quoted(plan_id)} in this server (plans live in its memory for "
                    f"{self.ttl_s:g}s): ask for a new plan"
                )
            if entry.used is not None:
                said = {
                    "applying": "is being applied (or its apply broke off)",
                    "applied": "was already applied",
                    "declined": "was already declined by the human",
                    "stale": "no longer matches the state",
                }
                return None, f"plan {plan_id} {said[entry.used]}: a plan is applied at most once; ask for a new plan"
            if now >= entry.plan.expires:
                return None, (f"plan {plan_id} expired at {iso_ms(int(entry.plan.expires * 1000))}: ask for a new plan")
            entry.used = "applying"
            return entry.plan, None

    def _end(self, plan_id: str, used: str | None) -> None:
        with self._lock:
            self._plans[plan_id].used = used


def _never(plans: Sequence[Plan]) -> bool:  # a dry run has nothing to confirm
    return False


def _target(to: str, value: str | int | None, now_ms: int) -> Target:
    """`to` and its one value as the CLI's --to and --offset / --at / --by take them."""
    if to not in TARGETS:
        raise UsageError(
            f"to {to!r}: expected one of {', '.join(TARGETS)} (from-file and by-duration are the "
            f"command line's: give a time for to=time)"
        )
    needs = {"offset": "the offset", "time": "ISO-8601 with a zone or epoch milliseconds", "shift": "+N or -N"}
    if to in needs and value in (None, ""):
        raise UsageError(f"to={to} needs a value: {needs[to]}")
    if to not in needs and value not in (None, ""):
        raise UsageError(f"to={to} takes no value (got {str(value)[:40]!r})")
    number = None
    if to in ("offset", "shift"):
        try:
            number = int(str(value).strip())
        except ValueError:
            raise UsageError(f"to={to}: value {str(value)[:40]!r} is not a whole number") from None
    return make_target(
        to,
        number if to == "offset" else None,
        str(value) if to == "time" else None,
        number if to == "shift" else None,
        None,
        now_ms,
    )


def _rooted(run: WriteTarget, zk_root: str | None, *, trident: bool = False) -> Connection:
    """The context's connection with the one root a spout's write needs: `zk_root` if given (one of the context's
    roots, when it lists any), else the context's only one."""
    roots = run.conn.trident_roots if trident else run.conn.zk_roots
    what = "trident root" if trident else "zk_root"
    if zk_root is None:
        if len(roots) != 1:
            raise UsageError(
                f"context {run.context} has {len(roots)} {what}s: name one of them "
                f"({', '.join(roots) or 'none'}) with zk_root"
            )
        chosen = normalize_root(roots[0])
    else:
        chosen = normalize_root(zk_root)
        if roots and chosen not in {normalize_root(r) for r in roots}:
            raise UsageError(f"{what} {zk_root[:80]!r} is not one of context {run.context}'s: {', '.join(roots)}")
    return replace(run.conn, trident_roots=(chosen,)) if trident else replace(run.conn, zk_roots=(chosen,))


def _root_of(conn: Connection, store: str) -> str | None:
    roots = conn.trident_roots if store == TRIDENT else conn.zk_roots if store == ZOOKEEPER else ()
    return roots[0] if roots else None


def _backup_path(run: WriteTarget, backup: str) -> Path:
    """A backup file in the context's backup directory, by name or path: never a file elsewhere."""
    home = run.backup_dir.resolve()
    path = Path(backup)
    path = (path if path.is_absolute() else home / path).resolve()
    if path.parent != home or not path.is_file():
        raise UsageError(
            f"{_quoted(backup)} is not a backup file in {home} (context {run.context}'s backup "
            f"directory): name one that a write there printed"
        )
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _digest_now(path: Path) -> str | None:
    """The backup file's sha256 as it is now; None when it cannot be read (gone)."""
    try:
        return _sha256(path)
    except OSError:
        return None


def _quoted(text: str, most: int = 80) -> str:
    return json.dumps(text[:most] + ("..." if len(text) > most else ""))


# --- the command line ------------------------------------------------------------------------------------------


def _server_flags(conn: Connection, *, zk_root: bool = False, trident_root: bool = False) -> list[str]:
    roots = (["--zk-root", conn.zk_roots[0]] if zk_root and conn.zk_roots else []) + (
        ["--trident-root", conn.trident_roots[0]] if trident_root and conn.trident_roots else []
    )
    return server_flags(conn, roots)


def command_line(kind: str, request: Mapping, run: WriteTarget) -> str:
    """The offctl command line an operator runs by hand for this plan (it asks before writing), in the style of
    offctl.repair.reset.undo_command: every server, root and safety setting the write uses, never a secret (--zk-auth
    and --kafka-config come from the context named, or OFFCTL_ZK_AUTH and OFFCTL_KAFKA_CONFIG)."""
    conn = run.conn
    parts = ["offctl", kind]
    if run.cli_context:
        parts += ["--context", run.cli_context]
    r = dict(request)
    if kind == "reset":
        parts += _reset_args(conn, r)
    elif kind == "restore":
        parts[2:2] = [r["backup"]]
        parts += _server_flags(conn)
    elif kind == "migrate":
        parts += _migrate_args(conn, r)
    elif kind == "delete":
        parts += _delete_args(conn, r)
    return shlex.join(parts + safety_flags(run.safety(execute=True)) + ["--execute"])


def _reset_args(conn: Connection, r: Mapping) -> list[str]:
    """`offctl reset`'s servers, consumer, scope and target for a reset request."""
    store = r["store"]
    parts = _server_flags(conn, zk_root=store == ZOOKEEPER, trident_root=store == TRIDENT)
    parts += [{ZOOKEEPER: "--spout", KAFKA: "--group", TRIDENT: "--trident"}[store], r["consumer"]]
    for topic in r.get("topics") or ():
        parts += ["--topic", topic]
    if r.get("partitions"):
        parts += ["--partitions", r["partitions"]]
    if r.get("static_partitions"):
        parts += ["--static-partitions", f"{r['consumer']}={r['static_partitions']}"]
    parts += ["--to", r["to"]]
    flag = {"offset": "--offset", "time": "--at", "shift": "--by"}.get(r["to"])
    if flag:
        parts += [flag, r["at"] if r["to"] == "time" else str(r["value"]).strip()]
    if r.get("topology_id"):
        parts += ["--topology-id", r["topology_id"]]
    if r.get("no_storm_metadata"):
        parts.append("--no-storm-metadata")
    return parts


def _migrate_args(conn: Connection, r: Mapping) -> list[str]:
    """`offctl migrate`'s servers, spout, group, topology and scope for a migrate request."""
    parts = _server_flags(conn, zk_root=True)
    parts += ["--spout", r["spout"], "--group", r["group"], "--topology-id", r["topology_id"]]
    if r.get("topic"):
        parts += ["--topic", r["topic"]]
    if r.get("partitions"):
        parts += ["--partitions", r["partitions"]]
    return parts


def _delete_args(conn: Connection, r: Mapping) -> list[str]:
    """`offctl delete`'s servers, spout and the records chosen for a delete request."""
    parts = _server_flags(conn, zk_root=True)
    parts += ["--spout", r["spout"]]
    for topic in r.get("topics") or ():
        parts += ["--topic", topic]
    for key, flag in (
        ("partitions", "--partitions"),
        ("record_topic", "--record-topic"),
        ("written_by", "--written-by"),
    ):
        if r.get(key):
            parts += [flag, r[key]]
    if r.get("all_records"):
        parts.append("--all-records")
    return parts


# --- apply ----------------------------------------------------------------------------------------------------


WRITTEN, VERIFICATION_FAILED, REFUSED, DECLINED, FAILED, UNCHANGED = (
    "written",
    "verification-failed",
    "refused",
    "declined",
    "failed",
    "unchanged",
)


@dataclass(frozen=True)
class ApplyResult:
    """What apply did. `status`: written, verification-failed (written; the read-back found `problems`), refused
    (nothing written: `reason`), declined (the human said no: nothing written), failed (`reason` says whether
    the write landed) or unchanged (the plan writes nothing, so there was nothing to change: a restore whose
    partitions all hold their before-image already). `audit`: the audit-log lines the write appended, as the CLI
    writes them. `command`: the offctl command line an operator can run by hand instead."""

    plan_id: str
    status: str
    reason: str | None = None
    written: bool = False
    document: dict | None = None  # render.outcome_document of the run that wrote
    backup: str | None = None
    audit_log: str | None = None
    audit: tuple[str, ...] = ()
    undo: str | None = None
    verified: bool | None = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()  # render.outcome_lines: what happened, in words
    command: str | None = None


NOT_WRITTEN = "Nothing was written."


def apply(
    store: PlanStore,
    plan_id: str,
    *,
    allow_writes: bool,
    confirm: Callable[[str], bool] | None,
    now: float | None = None,
) -> ApplyResult:
    """Apply a stored plan, only if the server may write, the plan is known, unexpired and not applied before,
    every before-value and guard verdict read again just before the write is what the plan saw, the library's
    guards pass, and the human, shown the plan's text by `confirm`, says yes. `confirm` None: this client cannot
    ask a human, so the result names the command line to run by hand."""
    stored = store.get(plan_id)
    command = stored.command if stored else None
    if not allow_writes:
        return ApplyResult(
            plan_id,
            REFUSED,
            "this offctl mcp server was started without --allow-writes: it "
            f"writes nothing. {NOT_WRITTEN}" + _by_hand(command),
            command=command,
        )
    stored, why = store._claim(plan_id, store.clock() if now is None else now)
    if stored is None:
        return ApplyResult(plan_id, REFUSED, f"{why}. {NOT_WRITTEN}", command=command)
    ended = "applying"  # an apply cut short by what offctl does not report (a bug, KeyboardInterrupt) is not retried
    try:
        result, ended = _apply(stored, confirm)
        return result
    finally:
        store._end(plan_id, ended)


def _by_hand(command: str | None) -> str:
    return f" An operator can run it by hand, and is asked before it writes: {command}" if command else ""


def _apply(stored: StoredPlan, confirm: Callable[[str], bool] | None) -> tuple[ApplyResult, str | None]:
    plan_id, command = stored.id, stored.command

    def refused(why: str, ended: str | None = None) -> tuple[ApplyResult, str | None]:
        return ApplyResult(plan_id, REFUSED, f"{why}. {NOT_WRITTEN}", command=command), ended

    if stored.refused:
        return refused(
            "the plan's guards refused it when it was made ("
            + "; ".join(stored.refused)
            + "): an assistant cannot override a guard; once it passes, ask for a new plan",
            "stale",
        )
    if not stored.writes:  # nothing to change is no refusal: a restore after a write that never landed, or run twice
        return ApplyResult(
            plan_id, UNCHANGED, f"nothing to change: the plan writes nothing. {NOT_WRITTEN}", command=command
        ), "applied"
    if confirm is None:
        return refused("this MCP client cannot ask a human for a yes (no elicitation)" + _by_hand(command))
    if stored.digest is not None and _digest_now(Path(stored.request["backup"])) != stored.digest:
        return refused("state changed since the plan: the backup file is not what it was; ask for a new plan", "stale")
    seen: dict = {}

    def check(plans: Sequence[Plan]) -> bool:
        """The library's Confirm: the plans as read just before the write, and then the human."""
        found = compare(stored.state, [state_of(p) for p in plans], follows_log=stored.follows_log)
        if not found.same:
            return False
        seen["asked"] = True
        try:
            seen["yes"] = bool(confirm(stored.text))
        except Exception as exc:  # the face's elicitation failed: no answer is no
            seen["error"] = f"could not ask the human ({type(exc).__name__}: {exc})"
            return False
        return seen["yes"]

    try:
        outcomes = stored.call(stored.run.safety(True), check)
    except OffctlError as exc:
        if seen.get("yes"):  # the library's message says what was and was not written
            return ApplyResult(plan_id, FAILED, str(exc), command=command), "applied"
        return refused(f"the state could not be read again: {exc}")
    fresh = [o.plan for o in outcomes]
    found = compare(stored.state, [state_of(p) for p in fresh], follows_log=stored.follows_log)
    if found.changed:
        return refused(f"state changed since the plan: {_listed(found.changed)}; ask for a new plan", "stale")
    guards = [f"{g.guard}: {g.message}" for p in fresh for g in p.refused]
    if guards:  # the plan's own guards all passed (a refused plan is refused above): one refuses now
        return refused(
            "refused by the guards: "
            + "; ".join(guards)
            + " (an assistant cannot override a guard; once it passes, apply again or ask for a new plan)"
        )
    if found.guards:
        return refused(f"state changed since the plan: {_listed(found.guards)}; ask for a new plan", "stale")
    if "error" in seen:
        return refused(seen["error"] + _by_hand(command))
    if not seen.get("asked"):
        return refused("the state read again has nothing to write; ask for a new plan", "stale")
    if not seen.get("yes"):
        return ApplyResult(
            plan_id, DECLINED, f"the human declined the plan. {NOT_WRITTEN}", command=command
        ), "declined"
    return _written(plan_id, outcomes, found.moved, command), "applied"


def _listed(lines: Sequence[str], most: int = 10) -> str:
    return "; ".join(lines[:most]) + (f"; and {len(lines) - most} more" if len(lines) > most else "")


def _written(plan_id: str, outcomes: Sequence[RepairResult], moved: Sequence[str], command: str) -> ApplyResult:
    from offctl.render.output import outcome_lines

    outcome = outcomes[0]  # a plan is of one consumer
    errors = [o.error for o in outcomes if o.error]
    status = FAILED if errors else WRITTEN if all(o.verified for o in outcomes if o.executed) else VERIFICATION_FAILED
    notes = tuple(f"the log moved since the plan: {m}" for m in moved) + tuple(n for o in outcomes for n in o.notes)
    return ApplyResult(
        plan_id,
        status,
        "; ".join(errors) or None,
        written=any(o.executed for o in outcomes),
        document=documents.plan_document(outcomes),
        backup=str(outcome.backup) if outcome.backup else None,
        audit_log=str(outcome.audit_log) if outcome.audit_log else None,
        audit=tuple(_audit_lines(outcome)),
        undo=outcome.undo,
        verified=outcome.verified,
        problems=tuple(p for o in outcomes for p in o.problems),
        notes=notes,
        lines=tuple(line for o in outcomes for line in outcome_lines(o)),
        command=command,
    )


def _audit_lines(outcome: RepairResult) -> list[str]:
    """The lines this write appended to the audit log (intent, then done), found by its backup."""
    if outcome.audit_log is None or outcome.backup is None:
        return []
    try:
        text = Path(outcome.audit_log).read_text(encoding="utf-8")
    except OSError:
        return []
    mine = []
    for line in text.splitlines():
        try:
            if json.loads(line).get("backup") == str(outcome.backup):
                mine.append(line)
        except ValueError:
            continue
    return mine
