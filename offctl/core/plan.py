"""The safe-rewrite planner (spec section 4), pure: what a reset, restore or migrate would write, and
whether the guards allow it. Nothing here talks to a server.

A Plan holds one Change per partition: the committed offset before, the offset after, and why (clamped
to the log range, partition unknown, target 0 ignored by old spouts). For ZooKeeper a change also holds
the node's bytes and version as read and the bytes to write, where only the value of `offset` differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from offctl.errors import UsageError
from offctl.core.model import (KAFKA, STORM_KAFKA, STORM_KAFKA_CLIENT, Cluster, ConsumerKey, GroupState, KafkaCommit, OffsetRecord,
                          PartitionLog, ZkNode, iso_ms)
from offctl.core.analyze import applied_topics
from offctl.core.storm import commit_metadata_json, parse_commit_metadata, parse_storm_id, parse_zk_node

TARGETS = ("earliest", "latest", "current", "offset", "time", "shift")
GUARDS = ("running-topology", "recent-write", "active-group")
# Kafka accepts offset changes only for Empty or Dead groups; these states mean members are joined.
ACTIVE_GROUP_STATES = frozenset({"stable", "preparing_rebalance", "completing_rebalance", "assigning",
                                 "reconciling"})

WRITE, UNCHANGED, SKIP, DELETE = "write", "unchanged", "skip", "delete"
CREATE = -1  # the version of a change that creates its node: the multi-op fails if the node exists


# --- targets ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where to move each partition: `--to` with its value, or explicit offsets from a file."""

    kind: str  # earliest | latest | current | offset | time | shift | file | repair
    offset: int | None = None
    at_ms: int | None = None
    by: int | None = None
    offsets: Mapping[tuple[str, int], int] | None = None  # kind "file": (topic, partition) -> offset
    source: str | None = None  # "file": where the offsets came from; "repair": what; "time": a --by-duration
    repair: frozenset[tuple[str, int]] | None = None  # kind "repair": partitions found out of range

    def describe(self) -> str:
        if self.kind == "offset":
            return f"offset {self.offset}"
        if self.kind == "time":
            return f"time {iso_ms(self.at_ms)}" + (f" ({self.source} before now)" if self.source else "")
        if self.kind == "shift":
            return f"shift {self.by:+d}"
        if self.kind == "file":
            return f"offsets from {self.source}"
        if self.kind == "repair":
            return f"log start of partitions out of range ({self.source})"
        return self.kind


def make_target(to: str | None, offset: int | None, at: str | None, by: int | None,
                duration: str | None = None, now_ms: int = 0) -> Target:
    """Check `--to` and its value flags together; every mistake is a UsageError naming the flags.
    `--by-duration D` is `--to time` at now minus D, as kafka-consumer-groups --by-duration."""
    if duration is not None:
        if to not in (None, "time") or any(v is not None for v in (offset, at, by)):
            raise UsageError("--by-duration is a target of its own (--to time at now minus the duration): drop "
                             "the other --to, --offset, --at or --by")
        back = parse_duration(duration)
        at_ms = now_ms - back
        if at_ms < 0:
            raise UsageError(f"--by-duration {duration[:40]!r} reaches back before 1970")
        return Target("time", at_ms=at_ms, source=duration.strip().upper())
    given = {"--offset": offset is not None, "--at": at is not None, "--by": by is not None}
    needs = {"offset": "--offset", "time": "--at", "shift": "--by"}
    if to is None:
        raise UsageError("say where to move the offsets: --to earliest|latest|current|offset|time|shift, "
                         "--by-duration, or --from-file")
    if to not in TARGETS:
        raise UsageError(f"--to {to!r}: expected one of {', '.join(TARGETS)}")
    for flag, present in given.items():
        if present and needs.get(to) != flag:
            owner = next(k for k, v in needs.items() if v == flag)
            raise UsageError(f"{flag} goes with --to {owner}, not --to {to}")
    if to in needs and not given[needs[to]]:
        raise UsageError(f"--to {to} needs {needs[to]}")
    if to == "offset" and offset < 0:
        raise UsageError(f"--offset {offset}: an offset is 0 or more")
    return Target(to, offset=offset, at_ms=parse_time(at) if to == "time" else None, by=by)


def parse_duration(text: str) -> int:
    """An ISO-8601 duration as kafka-consumer-groups --by-duration takes it (Java's Duration.parse: days,
    hours, minutes, seconds; case-insensitive) -> milliseconds, more than zero."""
    import isodate

    cleaned = text.strip().upper()
    try:
        parsed = isodate.parse_duration(cleaned) if cleaned.lstrip("+-").startswith("P") else None
    except (isodate.ISO8601Error, ValueError, OverflowError):
        parsed = None
    if parsed is None:
        raise UsageError(f"--by-duration {text[:40]!r}: expected an ISO-8601 duration like PT30M, PT6H or P1DT12H")
    if not isinstance(parsed, timedelta):
        raise UsageError(f"--by-duration {text[:40]!r}: years and months have no fixed length; use days (P30D), "
                         f"as kafka-consumer-groups does")
    ms = int(parsed.total_seconds() * 1000)
    if ms <= 0:
        raise UsageError(f"--by-duration {text[:40]!r}: a duration back from now is more than zero")
    return ms


MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: the last time Python and Java can both name
MAX_PARTITIONS = 100_000  # Kafka's own guidance stops far below this per topic


def parse_time(text: str) -> int:
    """Epoch milliseconds, or ISO-8601 with a zone (2026-11-01T03:00:00Z, ...+02:00) -> epoch ms."""
    text = text.strip()
    if re.fullmatch(r"\d{1,15}", text):
        at_ms = int(text)
    else:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise UsageError(f"--at {text[:40]!r}: expected ISO-8601 with a zone (2026-11-01T03:00:00Z) or epoch "
                             f"milliseconds") from None
        if moment.tzinfo is None:
            raise UsageError(f"--at {text!r} has no zone: add Z or an offset like +02:00, so the time is not "
                             f"read in this machine's zone by mistake")
        try:
            at_ms = int(moment.timestamp() * 1000)
        except (OverflowError, ValueError):
            at_ms = -1
    # Kafka reads a negative time as "latest" (-1) or "earliest" (-2): never send one by mistake.
    if not 0 <= at_ms <= MAX_EPOCH_MS:
        raise UsageError(f"--at {text[:40]!r}: a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z")
    return at_ms


def parse_partitions(text: str | None, option: str = "--partitions") -> frozenset[int] | None:
    """'0,3,5' or '0-3,7' -> {0,1,2,3,7}; None means every partition."""
    if text is None:
        return None
    found: set[int] = set()
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise UsageError(f"{option} {text[:40]!r}: expected partition numbers like 0,3,5 or 0-7")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if last - first + 1 + len(found) > MAX_PARTITIONS:
            raise UsageError(f"{option} {text[:40]!r}: more than {MAX_PARTITIONS:,} partitions, more than a "
                             f"topic has")
        found.update(range(first, last + 1))
    return frozenset(found)


TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")  # Kafka's legal topic names (Topic.validate)


def parse_topics(values: Iterable[str] | None) -> dict[str, frozenset[int] | None]:
    """Repeated --topic: TOPIC, or TOPIC:PARTITIONS as kafka-consumer-groups takes it (orders:0-3,7).
    ':' is not legal in a topic name, so it always starts the partitions. {topic: partitions, None = all}."""
    topics: dict[str, frozenset[int] | None] = {}
    for value in values or ():
        name, sep, listed = value.partition(":")
        name = name.strip()
        if not TOPIC_NAME.fullmatch(name):
            raise UsageError(f"--topic {value[:60]!r}: a topic name is 1-249 of a-z A-Z 0-9 . _ -, optionally "
                             f"followed by :PARTITIONS (orders:0-3,7)")
        parts = parse_partitions(listed, f"--topic {name}:") if sep else None
        if name in topics:  # given twice: the union; "all" wins
            parts = None if parts is None or topics[name] is None else topics[name] | parts
        topics[name] = parts
    return topics


@dataclass(frozen=True)
class Scope:
    """Which partitions a reset touches: the --topic scopes (none: every topic the consumer has) and
    --partitions, which applies to topics named without their own partition list."""

    topics: Mapping[str, frozenset[int] | None] = field(default_factory=dict)
    partitions: frozenset[int] | None = None

    @property
    def one_topic(self) -> str | None:
        return next(iter(self.topics)) if len(self.topics) == 1 else None

    def partitions_of(self, topic: str | None) -> frozenset[int] | None:
        own = self.topics.get(topic) if topic is not None else None
        return own if own is not None else self.partitions

    def includes(self, topic: str | None, partition: int) -> bool:
        if self.topics and topic not in self.topics:
            return False
        wanted = self.partitions_of(topic)
        return wanted is None or partition in wanted

    def describe(self) -> str:
        parts = [t if p is None else f"{t}:{ranges(p)}" for t, p in self.topics.items()]
        if self.partitions is not None:
            parts.append(f"partitions {ranges(self.partitions)}")
        return ", ".join(parts)


def ranges(numbers: Iterable[int]) -> str:
    """{0,1,2,3,7} -> '0-3,7'."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


# --- rewriting only the offset of a storm-kafka node ----------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _top_level(text: str, keys: Iterable[str] = ("offset",)) -> tuple[list[tuple[int, int, str]], int] | None:
    """Spans of the values of every top-level key in `keys` (start, end, key), and the index of the closing
    brace."""
    keys = set(keys)
    i = _WS.match(text, 0).end()
    if text[i:i + 1] != "{":
        return None
    i = _WS.match(text, i + 1).end()
    spans: list[tuple[int, int, str]] = []
    if text[i:i + 1] == "}":
        return spans, i
    while True:
        if text[i:i + 1] != '"':
            return None
        key, i = json.decoder.scanstring(text, i + 1)
        i = _WS.match(text, i).end()
        if text[i:i + 1] != ":":
            return None
        start = _WS.match(text, i + 1).end()
        _, end = _DECODER.raw_decode(text, start)
        if key in keys:
            spans.append((start, end, key))
        i = _WS.match(text, end).end()
        if text[i:i + 1] == ",":
            i = _WS.match(text, i + 1).end()
        elif text[i:i + 1] == "}":
            return spans, i
        else:
            return None


def rewrite_offset(data: bytes, offset: int) -> bytes | None:
    """The node's bytes with only the value of "offset" replaced (added when absent), or None when the
    data is not a UTF-8 JSON object. Every other byte (keys, their order, spacing, escapes) stays."""
    return rewrite_fields(data, {"offset": offset})


def rewrite_fields(data: bytes, values: Mapping[str, int]) -> bytes | None:
    """The node's bytes with only the values of these top-level keys replaced (each added when absent), or
    None when the data is not a UTF-8 JSON object."""
    try:
        text = data.decode("utf-8")
        found = _top_level(text, values)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if found is None or text[found[1] + 1:].strip(" \t\n\r"):
        return None
    spans, close = found
    missing = [k for k in values if k not in {key for _, _, key in spans}]
    if missing:
        head = text[:close].rstrip(" \t\n\r")
        added = ",".join(f'"{k}":{values[k]}' for k in missing)
        text = head + ("" if head.endswith("{") else ",") + added + text[len(head):]
    for start, end, key in reversed(spans):  # every duplicate: Storm's parser keeps the last, json.loads too
        text = text[:start] + str(values[key]) + text[end:]
    return text.encode("utf-8")


def rewrite_node(node: ZkNode, offset: int) -> bytes | None:
    """A node that makes its spout resume at `offset`. storm-kafka: `offset`. Trident storm-kafka: the
    batch [offset, nextOffset) made empty at the target (TridentKafkaEmitter resumes at nextOffset).
    Trident storm-kafka-client: lastOffset = target - 1 (KafkaTridentSpoutEmitter seeks lastOffset + 1) and
    firstOffset = target, an empty batch, so a transactional re-emit emits nothing either."""
    if node.trident == STORM_KAFKA:
        return rewrite_fields(node.data, {"offset": offset, "nextOffset": offset})
    if node.trident == STORM_KAFKA_CLIENT:
        return rewrite_fields(node.data, {"firstOffset": offset, "lastOffset": offset - 1})
    return rewrite_offset(node.data, offset)


# --- plans ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One partition of a plan. `after` is None when the partition is skipped; `reasons` say why."""

    topic: str | None
    partition: int
    before: int | None
    after: int | None
    reasons: tuple[str, ...] = ()
    path: str | None = None  # ZooKeeper node
    version: int | None = None  # its version when read
    before_data: bytes | None = None
    after_data: bytes | None = None
    before_metadata: str | None = None  # Kafka commit metadata
    after_metadata: str | None = None
    had_commit: bool = True  # Kafka: False when the partition had no commit before
    delete: bool = False  # ZooKeeper: the node is deleted (offctl delete)

    @property
    def action(self) -> str:
        if self.delete:
            return DELETE
        if self.after is None and self.after_data is None:
            return SKIP
        if self.path is not None:
            return UNCHANGED if self.after_data == self.before_data else WRITE
        if self.had_commit and self.after == self.before and self.after_metadata == self.before_metadata:
            return UNCHANGED
        return WRITE

    @property
    def delta(self) -> int | None:
        return None if self.before is None or self.after is None else self.after - self.before


@dataclass(frozen=True)
class GuardCheck:
    guard: str
    status: str  # pass | refused | overridden | not-applicable
    message: str


@dataclass(frozen=True)
class Plan:
    operation: str  # reset | restore | migrate
    key: ConsumerKey  # the consumer written to
    target: str  # what the operator asked for, in words
    changes: tuple[Change, ...]
    captured_ms: int
    source: ConsumerKey | None = None  # migrate: the spout read from
    warnings: tuple[str, ...] = ()
    guards: tuple[GuardCheck, ...] = ()

    @property
    def writes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.action in (WRITE, DELETE))

    @property
    def refused(self) -> tuple[GuardCheck, ...]:
        return tuple(g for g in self.guards if g.status == "refused")


CLAMPED = ": clamped"  # the end of the reason of every change the planner clamped, and of no other


def _clamp(wanted: int, log: PartitionLog) -> tuple[int, tuple[str, ...]]:
    if log.log_start is not None and wanted < log.log_start:
        return log.log_start, (f"target {wanted} is below the log start {log.log_start}{CLAMPED}",)
    if log.log_end is not None and wanted > log.log_end:
        return log.log_end, (f"target {wanted} is past the log end {log.log_end}{CLAMPED}",)
    return wanted, ()


def target_offset(target: Target, topic: str, partition: int, before: int | None, log: PartitionLog,
                  time_offsets: Mapping[tuple[str, int], int | None]) -> tuple[int | None, tuple[str, ...]]:
    """The offset a partition moves to, clamped to [log start, log end], with the reasons; None to skip."""
    kind = target.kind
    if kind == "earliest":
        wanted, why = log.log_start, ()
    elif kind == "latest":
        wanted, why = log.log_end, ()
    elif kind == "current":
        # ConsumerGroupCommand.resetToCurrent: the committed offset as it is (no range check), and the log
        # end where there is no commit.
        if before is None:
            if log.log_end is None:
                return None, ("the broker did not give this partition's log offsets",)
            return log.log_end, ("no commit: the log end, as kafka-consumer-groups --to-current does",)
        outside = _range_note(before, log, "kept as it is, as kafka-consumer-groups --to-current does")
        return before, outside
    elif kind == "offset":
        wanted, why = target.offset, ()
    elif kind == "shift":
        if before is None:
            return None, ("no valid committed offset to shift from",)
        wanted, why = before + target.by, ()
    elif kind == "time":
        found = time_offsets.get((topic, partition))
        if found is None:
            wanted, why = log.log_end, (f"no message at or after {iso_ms(target.at_ms)}: log end, as "
                                        f"kafka-consumer-groups does",)
        else:
            wanted, why = found, ()
    elif kind == "file":
        if (topic, partition) not in target.offsets:
            return None, (f"not in {target.source}",)
        wanted, why = target.offsets[(topic, partition)], ()
    elif kind == "repair":
        # Only what is still out of range when the plan is made: a spout may have moved since the audit.
        if (topic, partition) not in target.repair:
            return None, ("not found out of range by the audit",)
        if before is not None and log.log_start is not None and log.log_end is not None \
                and log.log_start <= before <= log.log_end:
            return None, (f"back in range [{log.log_start}, {log.log_end}] since the audit: left alone",)
        # The log start for both: below it the messages are gone; above the log end the topic was
        # recreated or truncated, and its messages from the start were never read. No loss either way.
        wanted, why = log.log_start, ("out of range: moved to the log start",)
    else:
        raise ValueError(f"unknown target {kind}")
    if wanted is None:
        return None, ("the broker did not give this partition's log offsets",)
    after, clamped = _clamp(wanted, log)
    return after, why + clamped


def _log_of(cluster: Cluster, topic: str | None, partition: int) -> tuple[PartitionLog | None, str | None]:
    if not topic:
        return None, "the record names no topic"
    if topic not in cluster:
        return None, f"topic {topic} does not exist"
    if partition not in cluster[topic]:
        return None, f"partition {partition} does not exist in {topic} ({len(cluster[topic])} partitions)"
    return cluster[topic][partition], None


def _selected(nodes: Iterable[ZkNode], scope: Scope) -> list[tuple[ZkNode, OffsetRecord, str | None]]:
    """The spout's nodes in `scope`, parsed, with the topic each applies to (analyze.applied_topics: its
    folder, the one --topic, or the spout's majority topic), in topic-folder and partition order."""
    ordered = sorted(nodes, key=lambda n: (n.folder_topic or "", n.node_partition))
    records = [parse_zk_node(n) for n in ordered]
    applied = applied_topics(records, scope.one_topic)
    return [(node, record, t) for node, record, t in zip(ordered, records, applied)
            if scope.includes(t, node.node_partition)]


def _asked_without_node(scope: Scope, picked: list[tuple[ZkNode, OffsetRecord, str | None]],
                        cluster: Cluster) -> tuple[list[tuple[str | None, int]], list[str]]:
    """Partitions named with --topic T:LIST or --partitions that have no node: those the topic has, as
    (topic, partition) rows, and one line per topic for those it does not have."""
    applied = {t for _, _, t in picked}
    asked: dict[str | None, frozenset[int]] = {}
    for t in scope.topics or ([applied.pop()] if len(applied) == 1 else [None]):
        if scope.partitions_of(t) is not None:
            asked[t] = scope.partitions_of(t)
    rows, lines = [], []
    for t, wanted in asked.items():
        missing = sorted(wanted - {node.node_partition for node, _, a in picked if a == t or t is None})
        have = cluster.get(t) if t else None
        gone = [p for p in missing if have is not None and p not in have]
        if gone:
            lines.append(_absent_line(t, gone, have))
        rows += [(t, p) for p in missing if p not in gone]
    return rows, lines


def _absent_line(topic: str, gone: Iterable[int], have: Mapping) -> str:
    return f"{topic} has no partition {ranges(gone)} (it has {len(have)}): left out"


def _file_rows_left(target: Target, planned: set[tuple[str | None, int]], scope: Scope,
                    reason: str) -> list[Change]:
    """Rows of an offsets file that no change covers: each still appears in the plan, with why."""
    if target.kind != "file":
        return []
    return [Change(t, p, None, None, had_commit=False,
                   reasons=(f"in {target.source}, outside the --topic/--partitions scope",) if not scope.includes(t, p)
                   else (reason,))
            for (t, p) in sorted(target.offsets) if (t, p) not in planned]


def _kafka_change(topic: str | None, partition: int, commit: KafkaCommit | None, **kw) -> Change:
    """A Kafka change whose before is the partition's current commit (or none)."""
    return Change(topic, partition, commit.offset if commit else None, None, had_commit=commit is not None,
                  before_metadata=commit.metadata if commit else None, **kw)


UNKNOWN_TOPIC = ("offctl cannot tell which topic this spout reads (its records name several topics equally "
                 "often, or none): give --topic")
ZERO_IGNORED = ("target {after}: storm-kafka ignores a stored offset <= 0 and starts from startOffsetTime "
                "instead")
NO_NODE = "no record for this partition: offctl changes existing storm-kafka records only"


def plan_zookeeper(key: ConsumerKey, nodes: Iterable[ZkNode], cluster: Cluster, target: Target, *,
                   scope: Scope = Scope(),
                   time_offsets: Mapping[tuple[str, int], int | None] = {},  # noqa: B006 - read only
                   captured_ms: int = 0) -> Plan:
    """Move the selected partition nodes of one spout: only the value of `offset` changes in each."""
    changes: list[Change] = []
    picked = _selected(nodes, scope)
    for node, record, applied in picked:
        base = Change(applied, node.node_partition, record.committed, None, path=node.path,
                      version=node.version, before_data=node.data)
        why: tuple[str, ...] = (f"the spout cannot use this record ({record.malformed}); only its offset is "
                                f"rewritten",) if record.malformed else ()
        if applied is None:
            changes.append(replace(base, reasons=why + (UNKNOWN_TOPIC,)))
            continue
        if target.kind == "current" and record.committed is None:
            changes.append(replace(base, reasons=why + ("no offset the spout uses, so none to keep",)))
            continue
        log, missing = _log_of(cluster, applied, node.node_partition)
        if log is None:
            changes.append(replace(base, reasons=why + (missing,)))
            continue
        after, reasons = target_offset(target, applied, node.node_partition, record.committed, log,
                                       time_offsets)
        if after is None:
            changes.append(replace(base, reasons=why + reasons))
            continue
        data = rewrite_node(node, after)
        if data is None:
            changes.append(replace(base, reasons=why + ("node data is not a JSON object: fix or delete it by "
                                                        "hand",)))
            continue
        if after <= 0 and not node.trident:
            reasons += (ZERO_IGNORED.format(after=after),)
        elif node.trident and parse_zk_node(replace(node, data=data)).malformed:
            reasons += ("the state stays unusable after the rewrite (see its finding): fix or delete it by hand",)
        changes.append(replace(base, after=after, after_data=data, reasons=why + reasons))
    rows, lines = _asked_without_node(scope, picked, cluster)
    changes += [Change(t, p, None, None, reasons=(NO_NODE,)) for t, p in rows]
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, NO_NODE)
    return Plan("reset", key, target.describe(), tuple(changes), captured_ms,
                warnings=tuple(lines) + _warnings(changes))


def group_topology_id(commits: Iterable[KafkaCommit]) -> str | None:
    """The one topology id a group's Storm metadata names, or None when none or several."""
    ids = {m.topology_id for m in (parse_commit_metadata(c.metadata) for c in commits) if m}
    return ids.pop() if len(ids) == 1 else None


def _kafka_scope(scope: Scope, current: Mapping[tuple[str, int], KafkaCommit], cluster: Cluster,
                 target: Target) -> tuple[list[tuple[str, int]], list[str]]:
    """The partitions a group's plan covers, and one line per part of the scope that names nothing.
    A named topic covers all of its partitions, as kafka-consumer-groups --topic does; no --topic covers
    the partitions the group has commits on. The rows of an offsets file are covered too, so a partition
    with no commit yet is planned."""
    lines = []
    if scope.topics:
        tps: set[tuple[str, int]] = set()
        for t in scope.topics:
            have = cluster.get(t)
            ours = {tp for tp in current if tp[0] == t}
            if not have and not ours:
                lines.append(f"topic {t} does not exist and the group has no commits on it: left out")
                continue
            tps |= {(t, p) for p in (have or {})} | ours
            wanted = scope.partitions_of(t)
            gone = sorted((wanted or frozenset()) - {p for topic, p in tps if topic == t})
            if gone:
                lines.append(_absent_line(t, gone, have or {}))
    else:
        tps = set(current)
        gone = sorted((scope.partitions or frozenset()) - {p for _, p in tps}
                      - {p for _, p in (target.offsets or {}) if target.kind == "file"})
        if gone:
            lines.append(f"the group has no commit on partition {ranges(gone)} of any topic: left out (name the "
                         f"topic with --topic TOPIC:PARTITIONS to commit them)")
    if target.kind == "file":
        tps |= set(target.offsets)
    return sorted(tp for tp in tps if scope.includes(*tp)), lines


def plan_kafka(group: str, commits: Iterable[KafkaCommit], cluster: Cluster, target: Target, *,
               scope: Scope = Scope(), topology_id: str | None = None, plain: bool = False,
               time_offsets: Mapping[tuple[str, int], int | None] = {},  # noqa: B006 - read only
               captured_ms: int = 0) -> Plan:
    """Move a group's commits (see _kafka_scope for which). Each commit keeps its Storm metadata, or gets
    the metadata of --topology-id (or of the group's one topology) so the spout honours it; with `plain`,
    a commit that has none is written without it (--no-storm-metadata)."""
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
            changes.append(replace(base, reasons=reasons))
            continue
        ok, meta, why = _storm_metadata(base.before_metadata, topology_id, group_id, plain)
        if not ok:
            changes.append(replace(base, reasons=reasons + (why,)))
            continue
        if commit is None:
            reasons += ("no commit before: a new commit is written",)
        changes.append(replace(base, after=after, after_metadata=meta, reasons=reasons + ((why,) if why else ())))
    changes += _file_rows_left(target, {(c.topic, c.partition) for c in changes}, scope, "not planned")
    return Plan("reset", ConsumerKey(KAFKA, group), target.describe(), tuple(changes), captured_ms,
                warnings=tuple(lines) + _warnings(changes))


PLAIN = ("no Storm metadata (--no-storm-metadata): only a spout whose first-poll strategy is UNCOMMITTED_EARLIEST "
         "or UNCOMMITTED_LATEST honours this commit")


def _storm_metadata(before: str | None, topology_id: str | None, group_id: str | None,
                    plain: bool = False) -> tuple[bool, str | None, str]:
    """Whether to write, the metadata of a commit offctl writes, and a reason when it is new or missing."""
    if topology_id:
        meta = parse_commit_metadata(before)
        if meta and meta.topology_id == topology_id:
            return True, before, ""
        return True, commit_metadata_json(topology_id), f"Storm metadata for {topology_id} written"
    if parse_commit_metadata(before):
        return True, before, ""
    if plain:
        return True, None, PLAIN
    if group_id:
        return True, commit_metadata_json(group_id), f"Storm metadata of the group's topology {group_id} written"
    return False, None, ("no Storm metadata to keep: pass --topology-id, or --no-storm-metadata for a spout that "
                         "honours any commit; else the spout ignores the commit (FOREIGN_COMMIT)")


def plan_delete(key: ConsumerKey, nodes: Iterable[ZkNode], *, scope: Scope = Scope(),
                record_topic: str | None = None, written_by: str | None = None, captured_ms: int = 0) -> Plan:
    """Delete the spout's partition nodes that match every selector given: in `scope` (by the topic each
    offset applies to), naming `record_topic`, written by topology `written_by` (name or storm id). The
    spout then finds no offset for those partitions and starts them as its start-up rules say."""
    changes = []
    for node, record, applied in _selected(nodes, scope):
        if record_topic is not None and record.topic != record_topic:
            continue
        if written_by is not None and written_by not in (record.topology_id, record.topology_name):
            continue
        changes.append(Change(applied, node.node_partition, record.committed, None, path=node.path,
                              version=node.version, before_data=node.data, delete=True, reasons=(DELETED,)))
    what = ", ".join(x for x in (scope.describe(), record_topic and f"records naming topic {record_topic}",
                                 written_by and f"written by {written_by}") if x) or "every record"
    return Plan("delete", key, f"delete {what}", tuple(changes), captured_ms)


# PartitionManager (storm-kafka v1.2.4): no record -> "No partition information found, using configuration to
# determine offset": startOffsetTime (0.10 on), the log end in 0.9.x (see docs/storm.md).
DELETED = ("deleted: the spout finds no offset for this partition and starts it as its start-up rules say "
           "(startOffsetTime from 0.10 on; see docs/storm.md)")


def plan_migrate(spout: ConsumerKey, nodes: Iterable[ZkNode], group: str, commits: Iterable[KafkaCommit],
                 cluster: Cluster, topology_id: str, *, scope: Scope = Scope(), captured_ms: int = 0) -> Plan:
    """Copy a storm-kafka spout's ZooKeeper offsets into the Kafka group of its storm-kafka-client
    successor, with Storm metadata for `topology_id`, so the new spout starts where the old one stopped."""
    current = {(c.topic, c.partition): c for c in commits if c.group == group}
    meta = commit_metadata_json(topology_id)
    changes: list[Change] = []
    picked = _selected(nodes, scope)
    for node, record, applied in picked:
        base = _kafka_change(applied, node.node_partition, current.get((applied, node.node_partition)))
        if applied is None:
            changes.append(replace(base, reasons=(UNKNOWN_TOPIC,)))
            continue
        if record.malformed:
            changes.append(replace(base, reasons=(f"ZooKeeper record {node.path} is malformed "
                                                  f"({record.malformed}): not migrated",)))
            continue
        if record.committed <= 0:
            changes.append(replace(base, reasons=(f"ZooKeeper offset {record.committed}: the old spout would "
                                                  f"start from startOffsetTime, so there is no position to "
                                                  f"migrate",)))
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
    rows, lines = _asked_without_node(scope, picked, cluster)
    changes += [Change(t, p, None, None, had_commit=False, reasons=("no ZooKeeper record for this partition",))
                for t, p in rows]
    return Plan("migrate", ConsumerKey(KAFKA, group), f"offsets of {spout}", tuple(changes), captured_ms,
                source=spout, warnings=tuple(lines) + _warnings(changes))


OUTSIDE = "outside today's log range"


def _range_note(offset: int | None, log: PartitionLog | None,
                kept: str = "restored as it was (a restore never clamps)") -> tuple[str, ...]:
    if offset is None or log is None or log.log_start is None or log.log_end is None:
        return ()
    if not log.log_start <= offset <= log.log_end:
        return (f"offset {offset} is {OUTSIDE} [{log.log_start}, {log.log_end}]: {kept}",)
    return ()


HAND_MADE_OUT_OF_RANGE = "a hand-made file's offset {offset} is outside today's log range [{start}, {end}]: not written"


def _hand_made_range(offset: int | None, log: PartitionLog | None) -> str | None:
    """Why a hand-made restore must not write this offset (outside the log, or no log to check), or None."""
    if offset is None or log is None or log.log_start is None or log.log_end is None:
        return "a hand-made file's offset cannot be checked against the log: not written"
    if not log.log_start <= offset <= log.log_end:
        return HAND_MADE_OUT_OF_RANGE.format(offset=offset, start=log.log_start, end=log.log_end)
    return None


def plan_restore_zookeeper(key: ConsumerKey, saved: Iterable[ZkNode], current: Iterable[ZkNode],
                           cluster: Cluster | None, *, source: str, captured_ms: int = 0,
                           hand_made: bool = False, absent: Iterable[str] = ()) -> Plan:
    """Put each saved node's exact bytes back, checked against the version read now (a node deleted since
    is created again); delete the `absent` nodes, which did not exist before. From a `hand_made` file, only
    bytes the spout can use, with an offset inside today's log, are written."""
    now = {n.path: n for n in current}
    now_dirs = {n.path.rsplit("/", 1)[0]: n for n in now.values() if n.trident}
    changes = []
    for path in absent:
        node = now.get(path)
        if node is None:
            continue  # gone already, as before
        record = parse_zk_node(node)
        changes.append(Change(record.topic, node.node_partition, record.committed, None, path=path,
                              version=node.version, before_data=node.data, delete=True,
                              reasons=("did not exist before: deleted again",)))
    for old in saved:
        record = parse_zk_node(old)
        node = now.get(old.path)
        log = _log_of(cluster, record.topic, old.node_partition)[0] if cluster is not None else None
        newer = now_dirs.get(old.path.rsplit("/", 1)[0]) if old.trident else None
        if node is None and newer is not None:  # Trident: the spout committed a newer txid since
            changes.append(Change(record.topic, old.node_partition, parse_zk_node(newer).committed, None,
                                  path=old.path, reasons=(f"the spout has written {newer.path} since, and resumes "
                                                          f"from it: reset the partition instead",)))
            continue
        if node is None:  # deleted since (offctl delete, or by hand): created again with its saved bytes
            refused = _hand_made_range(record.committed, log) if hand_made else None
            changes.append(Change(record.topic, old.node_partition, None, None if refused else record.committed,
                                  reasons=(refused,) if refused else ("the node no longer exists: created again",),
                                  path=old.path, version=CREATE, after_data=None if refused else old.data))
            continue
        if hand_made:
            refused = (f"a hand-made file's bytes the spout cannot use ({record.malformed}): not written"
                       if record.malformed else _hand_made_range(record.committed, log))
            if refused:
                changes.append(Change(record.topic, old.node_partition, parse_zk_node(node).committed, None,
                                      path=old.path, reasons=(refused,)))
                continue
        changes.append(Change(record.topic, old.node_partition, parse_zk_node(node).committed,
                              record.committed, reasons=_range_note(record.committed, log), path=old.path,
                              version=node.version, before_data=node.data, after_data=old.data))
    return Plan("restore", key, f"backup {source}", tuple(changes), captured_ms, warnings=_warnings(changes))


def plan_restore_kafka(group: str, saved: Iterable[KafkaCommit | tuple[str, int]], current: Iterable[KafkaCommit],
                       cluster: Cluster | None, *, source: str, captured_ms: int = 0, hand_made: bool = False) -> Plan:
    """Put each saved commit (offset and metadata) back. `saved` holds (topic, partition) for partitions
    that had no commit before: Kafka's admin API cannot delete one commit, so those are reported."""
    now = {(c.topic, c.partition): c for c in current if c.group == group}
    changes = []
    for old in saved:
        if isinstance(old, tuple):
            changes.append(_kafka_change(*old, now.get(old),
                                         reasons=("had no commit before; Kafka's admin API cannot remove a "
                                                  "single partition's commit, so it stays",)))
            continue
        log = _log_of(cluster, old.topic, old.partition)[0] if cluster is not None else None
        base = _kafka_change(old.topic, old.partition, now.get((old.topic, old.partition)))
        refused = _hand_made_range(old.offset, log) if hand_made else None
        if refused:
            changes.append(replace(base, reasons=(refused,)))
            continue
        changes.append(replace(base, after=old.offset, after_metadata=old.metadata,
                               reasons=_range_note(old.offset, log)))
    return Plan("restore", ConsumerKey(KAFKA, group), f"backup {source}", tuple(changes), captured_ms,
                warnings=_warnings(changes))


def _warnings(changes: Iterable[Change]) -> tuple[str, ...]:
    """Plan-level warnings: what the operator must read before executing."""
    out = []
    zero = [c for c in changes if c.action == WRITE and any("ignores a stored offset <= 0" in r for r in c.reasons)]
    if zero:
        out.append(f"{len(zero)} partition(s) would get offset <= 0, which storm-kafka ignores: the spout "
                   f"starts them from its startOffsetTime instead (see 'why')")
    clamped = [c for c in changes if any(r.endswith(CLAMPED) for r in c.reasons)]
    if clamped:
        out.append(f"{len(clamped)} partition(s) clamped to the log range")
    outside = [c for c in changes if c.action == WRITE and any(OUTSIDE in r for r in c.reasons)]
    if outside:
        out.append(f"{len(outside)} partition(s) written with an offset outside today's log range, not clamped "
                   f"(see 'why')")
    skipped = [c for c in changes if c.action == SKIP]
    if skipped:
        out.append(f"{len(skipped)} partition(s) skipped (see 'why')")
    return tuple(out)


# --- guards ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuardFacts:
    """What the guards look at, read together with the plan."""

    topology_ids: frozenset[str]  # topologies that own or will own the consumer
    running: frozenset[str] | None  # storm ids under Storm's root; None = could not tell
    running_unknown_why: str = ""
    zk_modified_ms: Mapping[str, int] = field(default_factory=dict)  # path -> mtime, ZooKeeper only
    groups: tuple[GroupState, ...] = ()  # Kafka groups written to
    now_ms: int = 0
    quiet_period_s: float = 10.0


def check_guards(facts: GuardFacts, force: Iterable[str]) -> tuple[GuardCheck, ...]:
    forced = set(force)
    checks = (_running(facts), _recent(facts), _active(facts))

    def verdict(guard: str, refused: str | None, ok: str) -> GuardCheck:
        if refused is None:
            return GuardCheck(guard, "pass" if ok else "not-applicable", ok or "not applicable")
        if guard in forced:
            return GuardCheck(guard, "overridden", f"{refused} (overridden by --force {guard})")
        return GuardCheck(guard, "refused", f"{refused}; --force {guard} overrides")

    return tuple(verdict(g, refused, ok) for g, (refused, ok) in zip(GUARDS, checks, strict=True))


def _name(storm_id: str) -> str:
    return parse_storm_id(storm_id) or storm_id


def _running(f: GuardFacts) -> tuple[str | None, str]:
    if f.running is None:
        return f"cannot tell whether the owning topology runs: {f.running_unknown_why}", ""
    if not f.topology_ids:
        return None, "the records name no topology"
    names = {_name(t) for t in f.topology_ids}
    live = sorted(r for r in f.running if r in f.topology_ids or _name(r) in names)
    if live:
        return (f"topology {', '.join(live)} is running (listed under Storm's root) and would overwrite the "
                f"change within seconds: kill it, or deactivate it and wait for its last commit"), ""
    return None, f"no running topology named {', '.join(sorted(names))}"


def _recent(f: GuardFacts) -> tuple[str | None, str]:
    if not f.zk_modified_ms:
        return None, ""
    path, mtime = max(f.zk_modified_ms.items(), key=lambda kv: kv[1])
    age = (f.now_ms - mtime) / 1000
    if age < f.quiet_period_s:
        return (f"{path} was written {max(age, 0):.1f}s ago, within the quiet period of {f.quiet_period_s:g}s: "
                f"something is still committing"), ""
    return None, f"last write {age:.0f}s ago ({path})"


def _active(f: GuardFacts) -> tuple[str | None, str]:
    if not f.groups:
        return None, ""
    busy = [g for g in f.groups if g.members > 0 or g.state in ACTIVE_GROUP_STATES]
    if busy:
        return ", ".join(f"group {g.group} has {g.members or 'active'} member(s) (state {g.state}): a consumer "
                         f"using subscribe() would overwrite the commit" for g in busy), ""
    return None, ", ".join(f"group {g.group} has no members ({g.state})" for g in f.groups)


def with_guards(plan: Plan, facts: GuardFacts, force: Iterable[str]) -> Plan:
    return replace(plan, guards=check_guards(facts, force))


# --- verification ---------------------------------------------------------------------------------------


def verify_zookeeper(plan: Plan, read_back: Mapping[str, bytes | None]) -> list[str]:
    """Problems found reading the written nodes back: each must hold exactly the planned bytes, and each
    deleted node must be gone."""
    return [f"{c.path} still exists after its deletion" if c.delete else
            f"{c.path} holds {_show(read_back.get(c.path))} instead of the planned offset {c.after}"
            for c in plan.writes if read_back.get(c.path) != c.after_data]


def verify_kafka(plan: Plan, read_back: Mapping[tuple[str, int], tuple[int, str | None]]) -> list[str]:
    """Problems found reading the group's commits back: planned offset and Storm metadata on each."""
    problems = []
    for c in plan.writes:
        got = read_back.get((c.topic, c.partition))
        if got is None:
            problems.append(f"{c.topic}/{c.partition} has no commit after writing {c.after}")
        elif got[0] != c.after:
            problems.append(f"{c.topic}/{c.partition} is at {got[0]}, not the planned {c.after}")
        elif got[1] != c.after_metadata:
            problems.append(f"{c.topic}/{c.partition}: the broker kept metadata {got[1]!r}, not the Storm "
                            f"metadata written; the spout will ignore this commit")
    return problems


def _show(data: bytes | None) -> str:
    if data is None:
        return "nothing (node gone)"
    text = data.decode("utf-8", "replace")
    return repr(text if len(text) <= 120 else text[:117] + "...")


def change_dict(c: Change) -> dict:
    """The JSON form of a change, shared by the renderer and the audit log."""
    return {"topic": c.topic, "partition": c.partition, "path": c.path, "before": c.before, "after": c.after,
            "delta": c.delta, "action": c.action, "reasons": list(c.reasons)}
