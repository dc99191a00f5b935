"""The plans that write a JStorm Kafka spout's records (offctl.core.storm.jstorm): reset and delete. Pure.

A target is where the spout fetches first. JStorm's spout fetches the stored offset + 1 (jstorm.resumes_at), so a
reset stores the target - 1 (jstorm.stored_for): `--to latest` stores the log end - 1 and the spout fetches the log
end, the next message written; `--to earliest` stores the log start - 1 (-1 on a log that starts at 0, which the
spout reads as any Long and fetches 0); `--to offset X` stores X - 1 and the spout fetches X. `before` and `after` of
a change are the stored offsets, as inspect's `committed` is; every written row says what the spout fetches first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from offctl.core.plans.plan import (
    CREATE,
    Applied,
    Change,
    Plan,
    _applied,
    _by_choice,
    _file_rows_left,
    _log_of,
    _unrecorded,
    _warnings,
    target_offset,
)
from offctl.core.plans.rewrite import rewrite_offset
from offctl.core.plans.targets import Scope, Target
from offctl.core.plans.zookeeper import NOT_AN_OBJECT, moved_row
from offctl.core.records.jstorm import parse_jstorm_node
from offctl.core.records.model import Cluster, ConsumerKey, OffsetRecord, PartitionLog, ZkNode
from offctl.core.records.stormjson import load_json_simple
from offctl.core.storm import jstorm
from offctl.core.storm.outcomes import fresh_position
from offctl.core.storm.releases import Library, SpoutProfile
from offctl.inputs import printable

FETCHES = "writes offset {after}, so JStorm's spout fetches {fetch} first (the stored offset + 1: {cite})"


NEW_RECORD = (
    "no record: created as JStorm's spout writes one (PartitionConsumer.commitState: json-simple, HashMap order), "
    "for {topology}, with the leader {broker} as its broker"
)


AS_FETCHED = " (where JStorm's spout fetches first: each record stores it - 1)"  # a reset plan's target, in words


FROM_BEGINNING = (
    "the spout sets kafka.fetch.from.beginning (--jstorm-from-beginning): it starts every partition at the log "
    "start + 1 whatever is stored, so what this writes moves nothing it fetches until that setting is off ({cite})"
)


DELETED = (
    "deleted: JStorm's spout finds no offset for this partition and starts it at the log end + 1 (the log start + 1 "
    "with kafka.fetch.from.beginning) ({cite})"
)


def position_of(record: OffsetRecord) -> int | None:
    """Where the spout fetches first from the record, when it can use it (jstorm.resumes_at); None when it cannot."""
    return jstorm.resumes_at(record.committed) if record.malformed is None and record.committed is not None else None


def fetches(after: int) -> str:
    """The words of a row that stores `after`: what it writes and what the spout then fetches first."""
    return FETCHES.format(after=after, fetch=jstorm.resumes_at(after), cite=jstorm.STORED)


def plan_jstorm(
    key: ConsumerKey,
    nodes: Iterable[ZkNode],
    cluster: Cluster,
    target: Target,
    *,
    scope: Scope = Scope(),
    static: frozenset[int] | None = None,
    time_offsets: Mapping[tuple[str, int], int | None] = {},  # noqa: B006 - read only
    captured_ms: int = 0,
    profile: SpoutProfile | None = None,
) -> Plan:
    """Move the selected partitions of one JStorm spout so that it fetches the target first: each record keeps every
    byte but the value of `offset` (jstorm rule 7: for a record as commitState writes it, its bytes are then
    record_bytes' at the new offset), and every partition of its topic without a record (only the `static` ones,
    kafka.broker.partitions) gets one as commitState writes it. `profile`: the spout's settings (None: the defaults),
    which say where it starts a partition left out."""
    profile = profile or SpoutProfile()
    spout = _applied(nodes, scope)
    changes = [
        _node_change(node, record, applied, cluster, target, time_offsets)
        for node, record, applied in spout
        if scope.includes(applied, node.node_partition)
    ]
    rows, lines = _unrecorded(
        scope, spout, cluster, every=True, static=static, rows_of_file=target.offsets if target.kind == "file" else ()
    )
    topology = _spout_topology(spout)
    changes += [_new_record(key, row, cluster, target, time_offsets, profile, topology) for row in rows]
    changes = sorted(changes, key=lambda c: (c.topic or "", c.partition))
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, "not planned")
    warnings = tuple(lines) + _warnings(changes)
    if profile.jstorm_from_beginning and any(c.after is not None for c in changes):
        warnings += (FROM_BEGINNING.format(cite=jstorm.START),)
    return Plan("reset", key, f"{target.describe()}{AS_FETCHED}", tuple(changes), captured_ms, warnings=warnings)


def _node_change(
    node: ZkNode,
    record: OffsetRecord,
    applied: str | None,
    cluster: Cluster,
    target: Target,
    time_offsets: Mapping[tuple[str, int], int | None],
) -> Change:
    """The change that moves one record: the target is where the spout fetches first, and the record stores it - 1;
    left out where it cannot be moved."""
    base, fetch, reasons = moved_row(node, record, applied, cluster, target, time_offsets, position_of(record))
    if fetch is None:
        return base
    why = base.reasons
    after = jstorm.stored_for(fetch)
    data = rewrite_offset(node.data, after)
    if data is None:
        return replace(base, left_out=True, reasons=why + (NOT_AN_OBJECT,))
    read = parse_jstorm_node(replace(node, data=data))
    if read.malformed is not None or read.committed != after:
        return replace(
            base,
            left_out=True,
            reasons=why
            + (f"the spout could not use the record rewritten ({read.malformed}): fix or delete it by hand",),
        )
    return replace(base, after=after, after_data=data, reasons=why + reasons + (fetches(after),))


# The topology a new record names: its raw name (None: JSON null), and the words that say so
Topology = tuple[str | None, str]


def _spout_topology(spout: Applied) -> Topology:
    """The topology name a new record is written with: the one name the spout's usable records give, exactly as they
    hold it; else JSON null, which commitState writes where topology.name is unset (the spout never reads it, and its
    next commit writes its own), and why (offctl does not guess between two names)."""
    names = set()
    for node, record, _ in spout:
        doc = load_json_simple(node.data)[0] if record.malformed is None else None
        name = doc.get("topology") if isinstance(doc, dict) else None
        if isinstance(name, str):
            names.add(name)
    if len(names) == 1:
        (name,) = names
        return name, f"topology {printable(name)!r} (the name the spout's other records give)"
    why = (
        f"its records name {len(names)} topologies: offctl does not guess which"
        if names
        else "none of its records names a topology"
    )
    return None, f"no topology name (JSON null, as commitState writes without topology.name: {why})"


def _new_record(
    key: ConsumerKey,
    row: tuple[str | None, int, str | None, str | None],
    cluster: Cluster,
    target: Target,
    time_offsets: Mapping[tuple[str, int], int | None],
    profile: SpoutProfile,
    topology: Topology,
) -> Change:
    """The change for a partition without a record: one as commitState writes it (`topology`, the partition's leader
    as broker, the spout's topic), storing the target - 1; else a row left out saying where the spout starts."""
    topic, partition, parent, why = row
    if why is not None:
        return Change(topic, partition, None, None, left_out=True, reasons=(why,))
    base = Change(topic, partition, None, None, path=jstorm.node_path(key.zk_root, key.consumer, partition))
    log, missing = _log_of(cluster, topic, partition)
    if log is None:
        return replace(base, reasons=(missing,))
    fetch, reasons = target_offset(target, topic, partition, None, log, time_offsets)
    host, _, port = (log.leader or "").rpartition(":")
    if fetch is None or not host or not port.isdigit():
        chosen = fetch is None and _by_choice(target, topic, partition)
        missing = reasons if fetch is None else (f"the broker names no leader of {topic}/{partition} to write",)
        starts = _start_without_record(f"{topic}/{partition}", log, profile)
        return replace(
            base, left_out=not chosen, reasons=missing + (() if chosen else (f"no record: left out; {starts}",))
        )
    after = jstorm.stored_for(fetch)
    name, said = topology
    data = jstorm.record_bytes(name, after, partition, host, int(port), topic)
    return replace(
        base,
        after=after,
        version=CREATE,
        after_data=data,
        reasons=(NEW_RECORD.format(topology=said, broker=log.leader), *reasons, fetches(after)),
    )


def _start_without_record(where: str, log: PartitionLog, profile: SpoutProfile) -> str:
    """Where the spout starts a partition without a record, in words (outcomes.fresh_position, jstorm rule 4)."""
    start = fresh_position(profile, Library.JSTORM_KAFKA, log.log_start, log.log_end)
    return f"with none, JStorm's spout starts {where} at {start.text()} ({jstorm.START})"


def delete_words(plan: Plan) -> Plan:
    """A delete plan of a JStorm spout, its rows saying where the spout starts each partition instead."""
    said = DELETED.format(cite=jstorm.START)
    return replace(plan, changes=tuple(replace(c, reasons=(said,)) for c in plan.changes))
