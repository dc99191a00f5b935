"""What every repair starts from: the question before the write (Confirm), the consumer's state read fresh with the
guards' facts and the plan's cost, and what a Kafka commit read back is judged against (ReadBack).

Each call reads the consumer's current state, builds a Plan with the pure planner, checks the guards, and stops there
unless `execute` is set; offctl/repair/writer.py writes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from offctl.core.plans.cost import Spout, cost_positions, plan_cost
from offctl.core.plans.guards import GuardFacts
from offctl.core.plans.plan import Plan
from offctl.core.records.model import (
    JSTORM,
    TRIDENT,
    Cluster,
    ConsumerKey,
    MessageRead,
    OffsetRecord,
    Snapshot,
    Thresholds,
    ZkNode,
)
from offctl.core.rules.profiles import Profiles
from offctl.core.storm import jstorm
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import OffctlError, StoreUnavailable, UsageError
from offctl.pipeline.read import read_snapshot
from offctl.ports import LogStore, LogWriter, SpoutWriter
from offctl.settings.connection import Connection
from offctl.settings.run import Safety, Selection, check_spout_id


@dataclass(frozen=True)
class ReadBack:
    """What a Kafka commit read back is judged against: whether a spout of `profile` resumes from it
    (plan.verify_kafka, the answer inspect gives), the topologies in `running` running and the one the operator
    named for the commits (`topology_id`, --topology-id) about to."""

    profile: SpoutProfile = SpoutProfile()
    running: frozenset[str] | None = None
    topology_id: str | None = None

    @property
    def counted_running(self) -> frozenset[str] | None:
        """The running topologies, with the one the commits are written for."""
        return (self.running or frozenset()) | {self.topology_id} if self.topology_id else self.running


Confirm = Callable[[Sequence[Plan]], bool]  # shows the plans and asks once whether to write them all


def clock_ms() -> int:
    """Now, in milliseconds since the epoch: when a repair reads and when its backup is written."""
    return int(time.time() * 1000)


def need_servers(conn: Connection, *, zk: bool = False, kafka: bool = False, root: bool = False, why: str) -> None:
    """The servers `why` needs, given: ZooKeeper, exactly one zkRoot, Kafka; UsageError naming the flag missing."""
    if zk and not conn.zk:
        raise UsageError(f"{why} needs --zk (the ZooKeeper connect string)")
    if root and len(conn.zk_roots) != 1:
        raise UsageError(f"{why} needs exactly one --zk-root (got {len(conn.zk_roots)})")
    if kafka and not conn.bootstrap_servers:
        raise UsageError(f"{why} needs --bootstrap-servers (log offsets bound every target)")


def check_consumer(spout: str | None, group: str | None) -> None:
    """A spout id and a group id as the command line gives them: a spout id Storm takes, no empty group id."""
    if spout is not None:
        check_spout_id(spout)
    if group is not None and not group:
        raise UsageError("--group '' is not a group id")


def read_state(
    zk: SpoutWriter | None,
    kafka: LogStore | None,
    roots: list[str],
    selection: Selection,
    storm_root: str,
    own: ConsumerKey | None = None,
    profile: SpoutProfile | None = None,
) -> tuple[Snapshot, list[OffsetRecord]]:
    """The consumer's current state, raw and parsed; StoreUnavailable unless all of it could be read.
    `own`: the Trident or JStorm spout to read, under its own root (a JStorm spout's running topologies are JStorm's
    too: jstorm_running). `profile`: the written consumer's settings (a spout that reads committed has its topics'
    last stable offsets read: `--to latest` moves it there)."""
    trident = own if own is not None and own.store == TRIDENT else None
    js = own if own is not None and own.store == JSTORM else None
    if own is not None:
        selection = (
            replace(selection, tridents=(own.consumer,)) if trident else replace(selection, jstorms=(own.consumer,))
        )
    snapshot, records = read_snapshot(
        zk,
        kafka,
        roots,
        selection,
        storm_root,
        clock_ms(),
        trident_roots=[trident.zk_root] if trident else (),
        profiles=Profiles(Thresholds(spout=profile)) if profile is not None else None,
        jstorm_roots=[js.zk_root] if js else (),
    )
    if snapshot.incomplete:
        raise StoreUnavailable("could not read everything a safe plan needs: " + "; ".join(snapshot.incomplete))
    if js is not None:
        snapshot = replace(snapshot, running=jstorm_running(zk, js.zk_root, snapshot.running))
    return snapshot, [r for rs in records.values() for r in rs]


def jstorm_running(zk: SpoutWriter, root: str, storm: frozenset[str] | None) -> frozenset[str] | None:
    """The topologies that may run a JStorm spout of `root`: JStorm's under <root>/topology (jstorm rule 8), with
    those under Storm's root (`storm`, already read); None when neither is there."""
    listed = zk.running_jstorm(root)
    if listed is None and storm is None:
        return None
    return (listed or frozenset()) | (storm or frozenset())


def guard_facts(
    snapshot: Snapshot,
    conn: Connection,
    safety: Safety,
    *,
    topology_ids: set[str],
    zk_paths: bool,
    groups: tuple[str, ...],
    jstorm_root: str | None = None,
    topology_names: Iterable[str] = (),
) -> GuardFacts:
    """What the guards judge a plan by: the topologies it names (by storm id; `topology_names`: by name alone, as a
    JStorm spout's records do), those running (or why unknown: under `jstorm_root` too for a JStorm spout), the
    nodes' modification times, the groups' state, now, and the quiet period."""
    facts = GuardFacts(
        topology_ids=frozenset(t for t in topology_ids if t),
        running=snapshot.running,
        running_unknown_why=_why_unknown(snapshot, conn, jstorm_root),
        zk_modified_ms={n.path: n.mtime_ms for n in snapshot.zk_nodes} if zk_paths else {},
        groups=tuple(g for g in snapshot.groups if g.group in groups),
        now_ms=clock_ms(),
        quiet_period_s=safety.quiet_period_s,
        topology_names=frozenset(n for n in topology_names if n),
    )
    if jstorm_root is None:
        return facts
    listed = f"{jstorm.topologies_path(jstorm_root)} or {conn.storm_root}/storms"
    return replace(facts, listed_under=listed, kill="jstorm kill NAME, or storm kill NAME")


def _why_unknown(snapshot: Snapshot, conn: Connection, jstorm_root: str | None) -> str:
    """Why offctl cannot tell which topologies run ("" when it can)."""
    if snapshot.running is not None:
        return ""
    if not conn.zk:
        return "no --zk given, so Storm's root cannot be read (give --zk of Storm's ZooKeeper)"
    if jstorm_root is not None:
        return (
            f"neither {jstorm.topologies_path(jstorm_root)} (JStorm's running topologies, {jstorm.RUNNING}) nor "
            f"{conn.storm_root}/storms exists on {conn.zk}: JStorm's cluster may keep its state on another ZooKeeper "
            f"(storm.zookeeper.servers) than the spouts' kafka.zookeeper.hosts; check `jstorm list` there"
        )
    return f"{conn.storm_root}/storms does not exist on {conn.zk} (set --storm-root)"


def costed(
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


def topologies_of(records: Iterable[OffsetRecord]) -> set[str]:
    """Storm ids named by records (ZooKeeper) or commit metadata (Kafka)."""
    return {r.topology_id for r in records if r.topology_id}


def names_of(records: Iterable[OffsetRecord]) -> set[str]:
    """Topology names a JStorm spout's records give (they name no storm id: jstorm rule 7)."""
    return {r.topology_name for r in records if r.key.store == JSTORM and r.topology_name}


def trident_batches(zk: SpoutWriter, nodes: Sequence[ZkNode]) -> list[ZkNode]:
    """A Trident spout's batches stored at or past currtx besides the nodes read_trident gives (ZkNode.ahead), as
    they are now: a reset rewrites them with their partition (plan.REPLAYED)."""
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
