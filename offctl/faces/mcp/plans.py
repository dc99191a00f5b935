"""Plans an assistant may ask for, bound to the state they saw, and applied only with a human's yes (issue 30).

The MCP face's plan tools call `PlanStore.plan_reset / plan_restore / plan_migrate / plan_delete`: each runs the
very library call the CLI's dry run makes (offctl.repair with Safety(execute=False)) and keeps what it saw: every
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
from dataclasses import dataclass, replace
from pathlib import Path

from offctl.core.plans.guards import QUIET_PERIOD_S
from offctl.core.plans.plan import Plan
from offctl.core.plans.targets import TARGETS, Scope, Target, make_target, parse_partitions, parse_topics
from offctl.core.records.model import JSTORM, KAFKA, TRIDENT, ZOOKEEPER, iso_ms
from offctl.core.results.mcp import StoredPlan
from offctl.core.results.repair import RepairResult
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import UsageError
from offctl.faces.mcp.compare import state_of
from offctl.render import mcp as documents
from offctl.repair.readback import safety_flags, server_flags
from offctl.repair.reads import Confirm
from offctl.repair.reset import ResetRequest
from offctl.settings.connection import Connection, normalize_root
from offctl.settings.run import Safety

DEFAULT_TTL_S = 600.0  # a plan may be applied for 10 minutes after it was made


STORES = (ZOOKEEPER, KAFKA, TRIDENT, JSTORM)
NAMED = {ZOOKEEPER: "spout", KAFKA: "groups", TRIDENT: "trident", JSTORM: "jstorm"}  # ResetRequest's, by store
FLAGS = {ZOOKEEPER: "--spout", KAFKA: "--group", TRIDENT: "--trident", JSTORM: "--jstorm"}  # a consumer, by store


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


# --- plans ----------------------------------------------------------------------------------------------------


Call = Callable[[Safety, Confirm], list[RepairResult]]  # the library call a plan re-runs: dry, then to write


@dataclass
class KeptPlan:
    """A stored plan with the library call it re-runs (`call`, for the context `run`) and how far it got."""

    plan: StoredPlan
    call: Call
    run: WriteTarget
    used: str | None = None  # None | "applying" | what ended it: applied | declined | stale


class PlanStore:
    """The plans of one server process, in memory; `clock` (seconds since the epoch) is injectable for tests."""

    def __init__(self, *, ttl_s: float = DEFAULT_TTL_S, clock: Callable[[], float] = time.time) -> None:
        self.ttl_s, self.clock = ttl_s, clock
        self._plans: dict[str, KeptPlan] = {}
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
            digest=digest,
        )
        with self._lock:
            for old in [k for k, e in self._plans.items() if e.plan.expires < now - self.ttl_s]:
                del self._plans[old]  # long gone: a server running for weeks does not keep every plan
            self._plans[plan_id] = KeptPlan(stored, call, run)
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
        ("trident", its txStateId), a JStorm spout ("jstorm", its TOPIC/CLIENT_ID: the target is where it fetches
        first, its records store the target - 1) or a storm-kafka-client group ("kafka", its group.id); `to` one of
        earliest,
        latest, current, offset (value: the offset), time (value: ISO-8601 with a zone, or epoch ms), shift (value:
        +N or -N); `topics` as --topic takes them (orders, orders:0-3), `partitions` as --partitions (0,3 or 0-7);
        `zk_root` the spout's root (its Trident or JStorm root), needed when the context has several;
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
        conn = _rooted(run, zk_root, store) if store != KAFKA else run.conn
        static = {consumer: parse_partitions(static_partitions, "static_partitions")} if static_partitions else {}
        request = ResetRequest(
            **{NAMED[store]: (consumer,) if store == KAFKA else consumer},
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
        from offctl.repair.restore import restore

        path = _backup_path(run, backup)
        digest = _sha256(path)
        key = load_backup(path).key
        conn = replace(run.conn, zk_roots=(), trident_roots=(), jstorm_roots=())  # the backup names its root
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
        from offctl.repair.migrate import migrate

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
        store: str = ZOOKEEPER,
    ) -> StoredPlan:
        """Plan deleting some of a storm-kafka spout's partition records, or a JStorm spout's (store "jstorm", `spout`
        its TOPIC/CLIENT_ID): all of the selectors given must match."""
        from offctl.repair.migrate import delete

        if store not in (ZOOKEEPER, JSTORM):
            raise UsageError(f"store {store!r}: delete takes a zookeeper or jstorm spout")
        if record_topic is not None:
            parse_topics([record_topic])
        scope = Scope(parse_topics(list(topics or ())), parse_partitions(partitions))
        conn = _rooted(run, zk_root, store)
        js = store == JSTORM
        asked = {
            "store": store,
            "spout": spout,
            "topics": list(topics or []),
            "partitions": partitions,
            "record_topic": record_topic,
            "written_by": written_by,
            "all_records": all_records,
            "zk_root": _root_of(conn, store),
        }

        def call(safety: Safety, confirm: Confirm) -> list[RepairResult]:
            return [
                delete(
                    conn,
                    None if js else spout,
                    safety,
                    confirm,
                    scope=scope,
                    record_topic=record_topic,
                    written_by=written_by,
                    every=all_records,
                    jstorm=spout if js else None,
                )
            ]

        return self.keep("delete", replace(run, conn=conn), asked, call)

    # apply's bookkeeping: a plan is applied at most once

    def _claim(self, plan_id: str, now: float) -> tuple[KeptPlan | None, str | None]:
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
            return entry, None

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


ROOTS = {
    ZOOKEEPER: ("zk_roots", "zk_root"),
    TRIDENT: ("trident_roots", "trident root"),
    JSTORM: ("jstorm_roots", "jstorm root"),
}


def _rooted(run: WriteTarget, zk_root: str | None, store: str = ZOOKEEPER) -> Connection:
    """The context's connection with the one root a spout's write needs (its `store`'s: --zk-root, --trident-root or
    --jstorm-root): `zk_root` if given (one of the context's roots, when it lists any), else the context's only one."""
    field, what = ROOTS[store]
    roots = getattr(run.conn, field)
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
    return replace(run.conn, **{field: (chosen,)})


def _root_of(conn: Connection, store: str) -> str | None:
    roots = getattr(conn, ROOTS[store][0]) if store in ROOTS else ()
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


def digest_now(path: Path) -> str | None:
    """The backup file's sha256 as it is now; None when it cannot be read (gone)."""
    try:
        return _sha256(path)
    except OSError:
        return None


def _quoted(text: str, most: int = 80) -> str:
    return json.dumps(text[:most] + ("..." if len(text) > most else ""))


# --- the command line ------------------------------------------------------------------------------------------


def _server_flags(conn: Connection, store: str | None = None) -> list[str]:
    """The servers and the one root of `store` (None: no root) an operator's command line names."""
    roots = getattr(conn, ROOTS[store][0]) if store in ROOTS else ()
    flag = {ZOOKEEPER: "--zk-root", TRIDENT: "--trident-root", JSTORM: "--jstorm-root"}.get(store)
    return server_flags(conn, [flag, roots[0]] if roots else [])


def command_line(kind: str, request: Mapping, run: WriteTarget) -> str:
    """The offctl command line an operator runs by hand for this plan (it asks before writing), in the style of
    offctl.repair.readback.undo_command: every server, root and safety setting the write uses, never a secret (--zk-auth
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
    parts = _server_flags(conn, store)
    parts += [FLAGS[store], r["consumer"]]
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
    parts = _server_flags(conn, ZOOKEEPER)
    parts += ["--spout", r["spout"], "--group", r["group"], "--topology-id", r["topology_id"]]
    if r.get("topic"):
        parts += ["--topic", r["topic"]]
    if r.get("partitions"):
        parts += ["--partitions", r["partitions"]]
    return parts


def _delete_args(conn: Connection, r: Mapping) -> list[str]:
    """`offctl delete`'s servers, spout and the records chosen for a delete request."""
    store = r.get("store", ZOOKEEPER)
    parts = _server_flags(conn, store)
    parts += [FLAGS[store], r["spout"]]
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
