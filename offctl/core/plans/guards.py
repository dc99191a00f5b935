"""The safety guards of every write, pure: running-topology, recent-write, active-group and changed-since, judged
from the facts a read gathered (with `now` in them), each overridable only by its own --force."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from offctl.core.plans.plan import CHANGED_SINCE, GuardCheck, Plan, named
from offctl.core.records.model import GroupState, KafkaCommit, ZkNode
from offctl.core.records.parse import parse_zk_node
from offctl.core.records.stormjson import parse_storm_id
from offctl.inputs import printable

GUARDS = ("running-topology", "recent-write", "active-group", "changed-since")


QUIET_PERIOD_S = 10.0  # --quiet-period's default: a ZooKeeper record written more recently refuses (recent-write)


@dataclass(frozen=True)
class GuardFacts:
    """What the guards look at, read together with the plan."""

    topology_ids: frozenset[str]  # topologies that own or will own the consumer
    running: frozenset[str] | None  # storm ids under Storm's root; None = could not tell
    running_unknown_why: str = ""
    zk_modified_ms: Mapping[str, int] = field(default_factory=dict)  # path -> mtime, ZooKeeper only
    groups: tuple[GroupState, ...] = ()  # Kafka groups written to
    now_ms: int = 0
    quiet_period_s: float = QUIET_PERIOD_S
    restore: bool = False  # the write is a restore: it undoes an earlier write
    # restore: each partition that changed since the write the backup undoes, "name: what changed" (changed_*
    # below); None: not a restore, or a file whose after-image is not trusted (changed_since_na says why)
    changed_since: tuple[str, ...] | None = None
    changed_since_unknown: str = ""  # why offctl cannot tell whether they changed (the guard refuses)
    changed_since_na: str = ""  # why the guard does not apply
    # topologies the records name by their name alone (JStorm's records): a running storm id of that name owns them
    topology_names: frozenset[str] = frozenset()
    listed_under: str = "Storm's root"  # where `running` was read, in words
    kill: str = "storm kill NAME"  # how an operator stops a topology listed there


def check_guards(facts: GuardFacts, force: Iterable[str]) -> tuple[GuardCheck, ...]:
    forced = set(force)
    checks = (_running(facts), _recent(facts), _active(facts), _changed(facts))
    why_na = {"changed-since": facts.changed_since_na or ("" if facts.restore else "not a restore")}

    def verdict(guard: str, refused: str | None, ok: str) -> GuardCheck:
        if refused is None:
            return GuardCheck(guard, "pass" if ok else "not-applicable", ok or why_na.get(guard) or "not applicable")
        if guard in forced:
            return GuardCheck(guard, "overridden", f"{refused} (overridden by --force {guard})")
        return GuardCheck(guard, "refused", f"{refused}; --force {guard} overrides")

    return tuple(verdict(g, refused, ok) for g, (refused, ok) in zip(GUARDS, checks, strict=True))


def _name(storm_id: str) -> str:
    return parse_storm_id(storm_id) or storm_id


# Why deactivating is not enough: a deactivated spout keeps its position in memory and, once activated again, goes on
# from it and commits it over the change. storm-kafka's KafkaSpout (v1.2.4) commits on deactivate and keeps its
# PartitionManagers; storm-kafka-client's (v2.8.3) commits on deactivate, keeps its consumer, and activate's
# refreshAssignment seeks only partitions newly assigned (KafkaSpout.activate/deactivate, initialize).
_DEACTIVATED = (
    "A deactivated topology is not enough: it stays listed, and once activated it goes on from the "
    "position it holds in memory and commits it over the change"
)


def _running(f: GuardFacts) -> tuple[str | None, str]:
    if f.running is None:
        return f"cannot tell whether the owning topology runs: {f.running_unknown_why}", ""
    if not f.topology_ids and not f.topology_names:
        return None, "the records name no topology"
    names = {_name(t) for t in f.topology_ids} | f.topology_names
    live = sorted(r for r in f.running if r in f.topology_ids or _name(r) in names)
    if live and f.restore:
        return (
            f"topology {', '.join(live)} is running (listed under {f.listed_under}): it was started again since "
            f"the write this backup undoes, and would overwrite the undo within seconds. Kill it again before the "
            f"undo ({f.kill}; in offctl's sandbox: offctl sandbox topology stop NAME), then run the undo "
            f"line again. {_DEACTIVATED}"
        ), ""
    if live:
        return (
            f"topology {', '.join(live)} is running (listed under {f.listed_under}) and would overwrite the "
            f"change within seconds: kill it ({f.kill}). {_DEACTIVATED}"
        ), ""
    return None, f"no running topology named {', '.join(sorted(names))}"


def _recent(f: GuardFacts) -> tuple[str | None, str]:
    if not f.zk_modified_ms:
        return None, ""
    path, mtime = max(f.zk_modified_ms.items(), key=lambda kv: kv[1])
    age = (f.now_ms - mtime) / 1000
    if age < f.quiet_period_s:
        return (
            f"{path} was written {max(age, 0):.1f}s ago, within the quiet period of {f.quiet_period_s:g}s: "
            f"something is still committing"
        ), ""
    return None, f"last write {age:.0f}s ago ({path})"


def _active(f: GuardFacts) -> tuple[str | None, str]:
    if not f.groups:
        return None, ""
    busy = [g for g in f.groups if g.active]
    if busy:
        return ", ".join(
            f"group {g.group} has {g.members or 'active'} member(s) (state {g.state}): a consumer "
            f"using subscribe() would overwrite the commit"
            for g in busy
        ), ""
    return None, ", ".join(f"group {g.group} has no members ({g.state})" for g in f.groups)


def _changed(f: GuardFacts) -> tuple[str | None, str]:
    if f.changed_since_unknown:
        return (
            f"offctl cannot tell whether the partitions changed since the write this backup undoes "
            f"({f.changed_since_unknown}): restoring could overwrite a later change"
        ), ""
    if f.changed_since is None:
        return None, ""
    if f.changed_since:
        return (
            f"{len(f.changed_since)} partition(s) {CHANGED_SINCE}, which restoring would overwrite: "
            f"{named(f.changed_since)}"
        ), ""
    return None, "every partition is as the write this backup undoes left it, or as it was before it"


# A restore puts back what differs from the before-image, and only that. A partition that holds its before-image
# byte for byte (the write never landed there: ZooKeeper stopped, Ctrl-C; or a restore put it back already) is
# done: no change since the write, and nothing for the restore to overwrite. Only a third value, neither what the
# write left nor what was there before it, is later work that the changed-since guard keeps.


def changed_zookeeper(
    left: Mapping[str, ZkNode | None], now: Iterable[ZkNode], before: Mapping[str, ZkNode | None]
) -> dict[str, str]:
    """path -> what changed since the write: `left` holds each node as the write left it (its bytes), None where
    the write deleted it; `before` each node as it was before the write, None where it did not exist. A node that
    holds its before-image (the same bytes; absent, where it was absent) is not counted. `now`: the spout's nodes
    as read (Trident: the newest txid of each partition)."""
    current = {n.path: n for n in now}
    newest = {n.path.rsplit("/", 1)[0]: n for n in current.values() if n.trident}  # Trident: by partition
    out = {}
    for path, was in left.items():
        node = current.get(path)
        if path in before and _data(node) == _data(before[path]):
            continue
        newer = newest.get(path.rsplit("/", 1)[0]) if was is not None and was.trident else None
        change = _node_change(was, node, newer)
        if change is not None:
            out[path] = change
    # A node written again since with the very bytes the write left loses nothing when the undo overwrites it:
    # only bytes count, not the version (the recent-write and running-topology guards watch for live writers)
    return out


def _node_change(was: ZkNode | None, node: ZkNode | None, newer: ZkNode | None) -> str | None:
    """What became of one node since the write left it as `was` (None: the write deleted it), now `node` (None:
    absent), `newer` the Trident state the spout has written since beside it; None where it holds what the write
    left."""
    if was is None:
        if node is not None:
            return f"the write deleted it; it was created again since, at {_zk_offset(node)}"
    elif node is None and newer is not None:
        return f"the write left {_zk_offset(was)}; the spout has written {newer.path} since"
    elif node is None:
        return f"the write left {_zk_offset(was)}; it was deleted since"
    elif node.data != was.data:
        then, now_at = _zk_offset(was), _zk_offset(node)
        return (
            f"the write left {then}, it is now {now_at.removeprefix('offset ')}"
            if then != now_at
            else f"the write left {then} (version {was.version}); other bytes are there now (version "
            f"{node.version}), {now_at}"
        )
    return None


def _data(node: ZkNode | None) -> bytes | None:
    return None if node is None else node.data


def _zk_offset(node: ZkNode) -> str:
    committed = parse_zk_node(node).committed
    return "bytes the spout cannot use" if committed is None else f"offset {committed}"


def changed_kafka(
    left: Mapping[tuple[str, int], KafkaCommit | None],
    now: Iterable[KafkaCommit],
    before: Mapping[tuple[str, int], KafkaCommit | None],
) -> dict[tuple[str, int], str]:
    """(topic, partition) -> what changed since the write: `left` holds each commit as the write left it
    (offset and metadata), None where the write removed it (a restore that deleted the group); `before` each
    commit as it was before the write, None where there was none. A partition that holds its before-image (the
    same offset and metadata; no commit, where it had none) is not counted."""
    current = {(c.topic, c.partition): c for c in now}
    out = {}
    for tp, was in left.items():
        commit = current.get(tp)
        if tp in before and _commit(commit) == _commit(before[tp]):
            continue
        if was is None:
            if commit is not None:
                out[tp] = f"the write removed its commit; it has offset {commit.offset} now"
        elif commit is None:
            out[tp] = f"the write left offset {was.offset}, it now has no commit"
        elif commit.offset != was.offset:
            out[tp] = f"the write left offset {was.offset}, it is now {commit.offset}"
        elif commit.metadata != was.metadata:
            out[tp] = f"the write left metadata {_meta(was.metadata)}, it is now {_meta(commit.metadata)}"
    return out


def _commit(commit: KafkaCommit | None) -> tuple[int, str | None] | None:
    return None if commit is None else (commit.offset, commit.metadata)


def _meta(metadata: str | None) -> str:
    if metadata is None:
        return "none"
    text = printable(metadata)
    return repr(text if len(text) <= 80 else text[:77] + "...")


WRITES_NOTHING = "the plan writes nothing"


def with_guards(plan: Plan, facts: GuardFacts, force: Iterable[str]) -> Plan:
    """The plan with its guards' verdicts. A guard keeps a write from overwriting something; a plan that writes
    nothing overwrites nothing, so no guard applies to it and none refuses it (a restore whose partitions all hold
    their before-image again is "nothing to change", exit 0)."""
    if not plan.writes:
        return replace(plan, guards=tuple(GuardCheck(g, "not-applicable", WRITES_NOTHING) for g in GUARDS))
    return replace(plan, guards=check_guards(facts, force))
