"""The plans that write storm-kafka-client's commits in Kafka: reset, and migrate from ZooKeeper. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from offctl.core.plans.firstpoll import _client_start, _plain, _without_metadata
from offctl.core.plans.plan import (
    UNKNOWN_TOPIC,
    Change,
    Plan,
    _absent_line,
    _applied,
    _by_choice,
    _clamp,
    _file_rows_left,
    _kafka_change,
    _log_of,
    _unrecorded,
    _warnings,
    target_offset,
    with_undo_warnings,
)
from offctl.core.plans.targets import Scope, Target, ranges
from offctl.core.records.model import KAFKA, Cluster, ConsumerKey, KafkaCommit, ZkNode
from offctl.core.records.parse import commit_metadata_json, parse_commit_metadata
from offctl.core.storm.releases import SpoutProfile


def group_topology_id(commits: Iterable[KafkaCommit]) -> str | None:
    """The one topology id a group's Storm metadata names, or None when none or several."""
    ids = {m.topology_id for m in (parse_commit_metadata(c.metadata) for c in commits) if m}
    return ids.pop() if len(ids) == 1 else None


def _kafka_scope(
    scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster, target: Target
) -> tuple[list[tuple[str, int]], list[str]]:
    """The partitions a group's plan covers, and one line per part of the scope that names nothing.
    A named topic covers all of its partitions, as kafka-consumer-groups --topic does; no --topic covers
    the partitions the group has commits on. The rows of an offsets file are covered too, so a partition
    with no commit yet is planned."""
    tps, lines = (
        _named_topics(scope, current, cluster) if scope.topics else _committed_partitions(scope, current, target)
    )
    if target.kind == "file":
        tps |= set(target.offsets)
    return sorted(tp for tp in tps if scope.includes(*tp)), lines


def _named_topics(
    scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster
) -> tuple[set[tuple[str, int]], list[str]]:
    """The partitions of the topics --topic names, and a line for each part of them that does not exist."""
    tps: set[tuple[str, int]] = set()
    lines = []
    for t in scope.topics:
        found, line = _named_topic(t, scope, current, cluster)
        tps |= found
        if line:
            lines.append(line)
    return tps, lines


def _named_topic(
    t: str, scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster
) -> tuple[set[tuple[str, int]], str | None]:
    """One named topic's partitions (all it has, and those the group has commits on), and a line for the
    partitions asked for that it does not have, or for a topic that is not there at all."""
    have = cluster.get(t)
    ours = {tp for tp in current if tp[0] == t}
    if not have and not ours:
        return set(), f"topic {t} does not exist and the group has no commits on it: left out"
    tps = {(t, p) for p in (have or {})} | ours
    gone = sorted((scope.partitions_of(t) or frozenset()) - {p for _, p in tps})
    return tps, _absent_line(t, gone, have or {}) if gone else None


def _committed_partitions(
    scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], target: Target
) -> tuple[set[tuple[str, int]], list[str]]:
    """Without --topic: the partitions the group has commits on, and a line for --partitions it has none on."""
    tps = set(current)
    gone = sorted(
        (scope.partitions or frozenset())
        - {p for _, p in tps}
        - {p for _, p in (target.offsets or {}) if target.kind == "file"}
    )
    if gone:
        return tps, [
            f"the group has no commit on partition {ranges(gone)} of any topic: left out (name the "
            f"topic with --topic TOPIC:PARTITIONS to commit them)"
        ]
    return tps, []


def plan_kafka(
    group: str,
    commits: Iterable[KafkaCommit],
    cluster: Cluster,
    target: Target,
    *,
    scope: Scope = Scope(),
    topology_id: str | None = None,
    plain: bool = False,
    time_offsets: Mapping[tuple[str, int], int | None] = {},  # noqa: B006 - read only
    captured_ms: int = 0,
    profile: SpoutProfile | None = None,
) -> Plan:
    """Move a group's commits (see _kafka_scope for which). Each commit keeps its Storm metadata, or gets
    the metadata of --topology-id (or of the group's one topology) so the spout honours it; with `plain`,
    a commit that has none is written without it (--no-storm-metadata). `profile`: the spout's settings, so a
    row says what this spout does with the commit (None: what each first-poll strategy does)."""
    commits = [c for c in commits if c.group == group]
    current = {(c.topic, c.partition): c for c in commits}
    group_id = group_topology_id(commits)
    tps, lines = _kafka_scope(scope, current, cluster, target)
    changes: list[Change] = []
    for t, p in tps:
        commit = current.get((t, p))
        base = _kafka_change(t, p, commit)
        log, missing = _log_of(cluster, t, p)
        if log is None:
            changes.append(replace(base, reasons=(missing,)))
            continue
        after, reasons = target_offset(target, t, p, base.before, log, time_offsets)
        if after is None:
            chosen = _by_choice(target, t, p)  # an offsets file or a repair leaves it alone on purpose
            changes.append(
                replace(
                    base,
                    left_out=not chosen,
                    reasons=reasons
                    + (() if chosen else (f"left out; {_client_start(commit, f'{t}/{p}', log, profile)}",)),
                )
            )
            continue
        ok, meta, why = _storm_metadata(base.before_metadata, topology_id, group_id, plain, profile, after)
        if not ok and commit is not None and after == commit.offset:  # already there (--to current): kept as it is
            changes.append(replace(base, after=after, after_metadata=commit.metadata, reasons=reasons))
            continue
        if not ok:
            changes.append(
                replace(
                    base,
                    left_out=True,
                    reasons=reasons + (f"{why}: left out; {_client_start(commit, f'{t}/{p}', log, profile)}",),
                )
            )
            continue
        if commit is None:
            reasons += ("no commit before: a new commit is written",)
        changes.append(replace(base, after=after, after_metadata=meta, reasons=reasons + ((why,) if why else ())))
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, "not planned")
    return with_undo_warnings(
        Plan(
            "reset",
            ConsumerKey(KAFKA, group),
            target.describe(),
            tuple(changes),
            captured_ms,
            warnings=tuple(lines) + _warnings(changes),
            group_had_commits=bool(commits),
        )
    )


def _storm_metadata(
    before: str | None,
    topology_id: str | None,
    group_id: str | None,
    plain: bool = False,
    profile: SpoutProfile | None = None,
    offset: int = 0,
) -> tuple[bool, str | None, str]:
    """Whether to write, the metadata of a commit offctl writes, and a reason when it is new or missing."""
    if topology_id:
        meta = parse_commit_metadata(before)
        if meta and meta.topology_id == topology_id:
            return True, before, ""
        return True, commit_metadata_json(topology_id), f"Storm metadata for {topology_id} written"
    if parse_commit_metadata(before):
        return True, before, ""
    if plain:
        return True, None, _plain(profile, offset)
    if group_id:
        return True, commit_metadata_json(group_id), f"Storm metadata of the group's topology {group_id} written"
    plain_for = (
        "for a spout whose first-poll strategy is UNCOMMITTED_*, which honours any commit"
        if profile is None
        else f"a commit without it: {_without_metadata(profile, offset)}"
    )
    return (
        False,
        None,
        (
            "no Storm metadata to keep: give --topology-id STORM_ID (the running topology's storm id, "
            f"written as the commit's Storm metadata) or --no-storm-metadata ({plain_for}) to write it"
        ),
    )


def plan_migrate(
    spout: ConsumerKey,
    nodes: Iterable[ZkNode],
    group: str,
    commits: Iterable[KafkaCommit],
    cluster: Cluster,
    topology_id: str,
    *,
    scope: Scope = Scope(),
    captured_ms: int = 0,
    profile: SpoutProfile | None = None,
) -> Plan:
    """Copy a storm-kafka spout's ZooKeeper offsets into the Kafka group of its storm-kafka-client
    successor, with Storm metadata for `topology_id`, so the new spout starts where the old one stopped.
    `profile`: the new spout's settings, so a partition without a record says where that spout starts it."""
    current = {(c.topic, c.partition): c for c in commits if c.group == group}
    meta = commit_metadata_json(topology_id)
    changes: list[Change] = []
    every = _applied(nodes, scope)
    for node, record, applied in every:
        if not scope.includes(applied, node.node_partition):
            continue
        base = _kafka_change(applied, node.node_partition, current.get((applied, node.node_partition)))
        if applied is None:
            changes.append(replace(base, reasons=(UNKNOWN_TOPIC,)))
            continue
        if record.malformed:
            changes.append(
                replace(
                    base, reasons=(f"ZooKeeper record {node.path} is malformed ({record.malformed}): not migrated",)
                )
            )
            continue
        if record.committed <= 0:
            changes.append(
                replace(
                    base,
                    reasons=(
                        f"ZooKeeper offset {record.committed}: the old spout would "
                        f"start from startOffsetTime, so there is no position to "
                        f"migrate",
                    ),
                )
            )
            continue
        log, missing = _log_of(cluster, applied, record.partition)
        if log is None:
            changes.append(replace(base, reasons=(missing,)))
            continue
        after, reasons = _clamp(record.committed, log)
        reasons = (f"from {node.path}",) + reasons
        if base.had_commit and base.before != after:
            reasons += (f"replaces the group's commit {base.before}",)
        changes.append(replace(base, after=after, after_metadata=meta, reasons=reasons))
    rows, lines = _unrecorded(scope, every, cluster)
    changes += [
        Change(
            t,
            p,
            None,
            None,
            had_commit=False,
            reasons=("no ZooKeeper record for this partition",) + _new_spout_start(t, p, current, cluster, profile),
        )
        for t, p, _, _ in rows
    ]
    return with_undo_warnings(
        Plan(
            "migrate",
            ConsumerKey(KAFKA, group),
            f"offsets of {spout}",
            tuple(changes),
            captured_ms,
            source=spout,
            warnings=tuple(lines) + _warnings(changes),
            group_had_commits=bool(current),
        )
    )


def _new_spout_start(
    topic: str | None,
    partition: int,
    current: Mapping[tuple[str, int], KafkaCommit],
    cluster: Cluster,
    profile: SpoutProfile | None,
) -> tuple[str, ...]:
    """Where the new spout of `profile` starts a partition migrate leaves alone (none without a profile)."""
    log = _log_of(cluster, topic, partition)[0] if profile is not None else None
    if log is None:
        return ()
    return (_client_start(current.get((topic, partition)), f"{topic}/{partition}", log, profile),)
