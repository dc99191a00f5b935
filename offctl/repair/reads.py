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
from offctl.core.records.model import Cluster, ConsumerKey, MessageRead, OffsetRecord, Snapshot, Thresholds, ZkNode
from offctl.core.rules.profiles import Profiles
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import OffctlError, StoreUnavailable, UsageError
from offctl.pipeline.read import read_snapshot
from offctl.ports import LogStore, LogWriter, SpoutStore, SpoutWriter
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
        clock_ms(),
        trident_roots=[trident.zk_root] if trident else (),
        profiles=Profiles(Thresholds(spout=profile)) if profile is not None else None,
    )
    if snapshot.incomplete:
        raise StoreUnavailable("could not read everything a safe plan needs: " + "; ".join(snapshot.incomplete))
    return snapshot, [r for rs in records.values() for r in rs]


def guard_facts(
    snapshot: Snapshot,
    conn: Connection,
    safety: Safety,
    *,
    topology_ids: set[str],
    zk_paths: bool,
    groups: tuple[str, ...],
) -> GuardFacts:
    """What the guards judge a plan by: the topologies it names, those running (or why unknown), the nodes'
    modification times, the groups' state, now, and the quiet period."""
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
        now_ms=clock_ms(),
        quiet_period_s=safety.quiet_period_s,
    )


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
