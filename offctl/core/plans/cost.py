"""What a plan costs: per written change, the messages the spout processes again or never, and when they were
written; summed per consumer. Pure: it takes the plan, the log offsets and a read of messages
(offctl.adapters.kafka.KafkaStore.read_messages), and reads nothing itself.

A stored offset is the next message the spout processes. storm-kafka's PartitionManager starts _emittedToOffset
at the stored offset and commits lastCompletedOffset, the first offset not yet acked (PartitionManager.java,
v1.2.4); storm-kafka-client seeks to the commit, "the first offset that is not marked as processed"
(KafkaSpout.doSeek, v2.8.8); a Trident state holds where the spout resumes (offctl.core.records.trident). So a change
from where the spout resumes now (`was`) to where it resumes after (`now`):

1. REPLAY (now < was): the spout processes [now, was) again. Under at-least-once (storm-kafka always,
   storm-kafka-client by default) those are duplicates downstream.
2. SKIP (now > was): [was, now) is never processed.
3. Only [log start, log end) holds messages. Below the log start retention removed them: they are neither
   replayed nor skipped. At and past the log end nothing is written yet.
4. Where the spout has no position of its own, the change counts from where it starts without one, under the
   default settings: storm-kafka without a record it can use, or with a stored offset <= 0 (PartitionManager
   replaces both with startOffsetTime, EarliestTime by default from 0.10.0 on): the log start. A
   storm-kafka-client group without a commit: its first-poll strategy's log start or end (UNCOMMITTED_EARLIEST,
   KafkaSpoutConfig's default, seeks to the beginning; KafkaSpout.doSeek, v2.8.8); with a commit the strategy
   ignores (EARLIEST/LATEST and a commit that is not the running topology's, or --topology-id's), the same:
   offctl.core.rules.consumer.commit_resume, inspect's and the read-back's answer. A deleted record counts the same
   way. A Trident spout without a state: no previous position, nothing counted. A JStorm spout resumes at the
   stored offset + 1 (offctl.core.storm.jstorm), and without a record it can use at the log end + 1; with
   kafka.fetch.from.beginning at the log start + 1, whatever is stored.
5. The count is the offsets of the range. Compaction removes records and transactions leave markers (offsets
   no consumer is handed), so on such topics it is an upper bound. offctl reads the first and the last offset
   of the range: when either holds no message it says "up to"; a gap between them is not seen.
6. The time span: the timestamps of the first message at or after the range's start and of the message at its
   last offset. When that last offset holds no message, the last message is earlier and unread: the span is
   partial. Not read (the time budget ran out, the broker refused): unknown, with why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from offctl.core.plans.plan import DELETE, WRITE, Change, Plan
from offctl.core.plans.plancost import (
    FULL,
    NONE,
    PARTIAL,
    REPLAY,
    SKIP,
    UNKNOWN,
    UNKNOWN_SPAN,
    ChangeCost,
    CostSum,
    PlanCost,
)
from offctl.core.records.messages import GAP, MESSAGE, at_offset
from offctl.core.records.model import (
    JSTORM,
    KAFKA,
    TRIDENT,
    ZOOKEEPER,
    Cluster,
    KafkaCommit,
    LogMessage,
    MessageRead,
    PartitionLog,
    Position,
    ZkNode,
    iso_ms,
)
from offctl.core.records.parse import parse_commit, parse_zk_node
from offctl.core.rules.consumer import commit_resume
from offctl.core.storm import jstorm
from offctl.core.storm.outcomes import fresh_position, start_outcome
from offctl.core.storm.releases import Library, SpoutProfile
from offctl.core.storm.releases import Position as Start
from offctl.core.storm.start import configured_start, first_poll_start, starts_alike, storm_kafka_ignores

DEFAULTS = SpoutProfile()  # the spouts' defaults (docs/storm.md): what a rule's words call the default


@dataclass(frozen=True, slots=True)
class Spout:
    """What a change's cost is judged against, as the write's read-back judges it (offctl.repair.reads.ReadBack): the
    written consumer's profile (where a spout with no usable position starts: storm-kafka's startOffsetTime and
    release, storm-kafka-client's first-poll strategy) and the topologies counted as running."""

    profile: SpoutProfile = DEFAULTS
    running: frozenset[str] | None = None


NOT_CONSULTED = "Kafka was not consulted (no --bootstrap-servers)"


# --- where the spout resumes -------------------------------------------------------------------------------


def _resumes(
    store: str, offset: int | None, data: bytes | None, log: PartitionLog | None, *, gone: str, spout: Spout
) -> tuple[int | None, str]:
    """Where the spout resumes with this stored offset (ZooKeeper: these node bytes; Kafka: `data` is the
    commit's metadata), and the words when that is not the offset itself. `gone` names the absence: no record
    before, a record deleted."""
    if store == KAFKA:
        return _group_resumes(offset, data, log, gone, spout)
    if store == TRIDENT:
        return offset, "" if offset is not None else f"{gone}; a Trident spout then starts as its settings say"
    if store == JSTORM:
        return _jstorm_resumes(data, log, gone, spout)
    if store != ZOOKEEPER:
        return None, f"no previous position for a {store} consumer"
    return _record_resumes(data, log, gone, spout)


def _group_resumes(
    offset: int | None, data: bytes | None, log: PartitionLog | None, gone: str, spout: Spout
) -> tuple[int | None, str]:
    """_resumes for a storm-kafka-client group: from its commit (`data`: the commit's metadata), or, with none,
    where its first-poll strategy seeks."""
    start, end = (log.log_start, log.log_end) if log else (None, None)
    if offset is not None:
        return _commit_resumes(offset, data, start, end, spout)
    strategy = spout.profile.first_poll
    said = start_outcome(spout.profile, Library.STORM_KAFKA_CLIENT)
    rule = f"{strategy.value}, storm-kafka-client's default" if strategy is DEFAULTS.first_poll else strategy.value
    return _start(first_poll_start(spout.profile, start, end), gone, f"{rule}; {said.citation}")


def _record_resumes(data: bytes | None, log: PartitionLog | None, gone: str, spout: Spout) -> tuple[int | None, str]:
    """_resumes for a storm-kafka spout: from the record these node bytes hold, or, where it cannot use them (or
    there are none), where its settings start it."""
    why = gone
    if data is not None:
        record = parse_zk_node(ZkNode("", "", "", 0, None, data, 0, 0))  # as PartitionManager reads the bytes
        if record.malformed is None and record.committed is not None and not storm_kafka_ignores(record.committed):
            return record.committed, ""
        why = (
            "the spout cannot use the record"
            if record.malformed or record.committed is None
            else f"stored offset {record.committed} <= 0, which storm-kafka ignores"
        )
    # where this spout starts (its profile: the written consumer's, reset resolves it), as inspect says it
    profile = spout.profile
    said = start_outcome(profile, Library.STORM_KAFKA)
    rule = "storm-kafka's default" if starts_alike(profile, DEFAULTS) else "the spout's settings"
    return _start(
        configured_start(profile, log.log_start if log else None, log.log_end if log else None),
        why,
        f"{rule}; {said.citation}",
    )


FETCHED = "counted from the stored offset + 1, where JStorm's spout fetches"  # a JStorm spout's stored position


def _jstorm_resumes(data: bytes | None, log: PartitionLog | None, gone: str, spout: Spout) -> tuple[int | None, str]:
    """_resumes for a JStorm spout: the stored offset + 1 of the record these node bytes hold, as its spout reads them
    (jstorm rule 4); where it cannot use them (or there are none), or with kafka.fetch.from.beginning, where it
    starts: the log end + 1, or the log start + 1."""
    why = gone
    if data is not None:
        record = parse_zk_node(ZkNode("", "", "", 0, None, data, 0, 0, jstorm=True))
        if spout.profile.jstorm_from_beginning:
            why = "kafka.fetch.from.beginning: the spout starts at the log start + 1 whatever is stored"
        elif record.malformed is None and record.committed is not None:
            return jstorm.resumes_at(record.committed), FETCHED
        else:
            why = "the spout cannot use the record"
    start, end = (log.log_start, log.log_end) if log else (None, None)
    return _start(fresh_position(spout.profile, Library.JSTORM_KAFKA, start, end), why, str(jstorm.START))


def _commit_resumes(
    offset: int, data: bytes | None, start: int | None, end: int | None, spout: Spout
) -> tuple[int | None, str]:
    """Whether and where a storm-kafka-client spout of the profile resumes from this commit (`data`: its metadata):
    inspect's answer, and the words when that is not the commit itself."""
    metadata = data.decode("utf-8", "replace") if data is not None else None
    resume = commit_resume(
        spout.profile, parse_commit(KafkaCommit("", "", 0, offset, metadata)), spout.running, start, end
    )
    if resume.crashes:  # it reads nothing until the commit is rewritten, and then resumes from it
        return offset, f"{resume.why} Counted from the commit, where the spout resumes once it is rewritten."
    if resume.at.offset == offset:
        return offset, ""
    if resume.at.offset is None:
        return None, f"{resume.why} Not known without log offsets."
    return resume.at.offset, f"{resume.why} Counted from {resume.at.offset}."


def _start(start: Start, why: str, rule: str) -> tuple[int | None, str]:
    """Where a spout with no position starts, and the words."""
    if start.offset is None:
        return None, f"{why}: the spout starts at {start.label}, not known without log offsets"
    return start.offset, f"{why}: counted from {start.label} ({rule})"


def _was_and_now(
    store: str, c: Change, log: PartitionLog | None, spout: Spout
) -> tuple[int | None, int | None, tuple[str, ...]]:
    kafka = store == KAFKA
    was, before = _resumes(
        store,
        c.before,
        _encoded(c.before_metadata) if kafka else c.before_data if c.path else None,
        log,
        gone="no commit before" if kafka else "no record before",
        spout=spout,
    )
    now, after = _resumes(
        store,
        None if c.delete else c.after,
        _encoded(c.after_metadata) if kafka else None if c.delete else c.after_data,
        log,
        gone="the commit is removed (the group is deleted)" if kafka else "the record is deleted",
        spout=spout,
    )
    return was, now, tuple(n for n in dict.fromkeys((before, after)) if n)


def _offsets(first: int, last: int) -> str:
    return f"offset {first}" if first == last else f"offsets {first}-{last}"


def _encoded(metadata: str | None) -> bytes | None:
    return metadata.encode() if metadata is not None else None


def _bounds(
    store: str, c: Change, log: PartitionLog | None, consulted: bool, spout: Spout
) -> tuple[ChangeCost, tuple[int, int] | None]:
    """The cost as far as the log offsets tell, and the range [start, end) whose ends are still to read."""
    was, now, notes = _was_and_now(store, c, log if consulted else None, spout)
    why = NOT_CONSULTED if not consulted else "the broker gave no log offsets"
    if was is None or now is None:
        return ChangeCost(UNKNOWN, notes=notes or (why,)), None
    if was == now:
        return ChangeCost(NONE, 0, notes=notes), None
    direction = REPLAY if now < was else SKIP
    low, high = min(was, now), max(was, now)
    if not consulted or log is None or log.log_start is None or log.log_end is None:
        return ChangeCost(direction, high - low, up_to=True, span=UNKNOWN_SPAN, notes=notes, why=why), None
    start, end = max(low, log.log_start), min(high, log.log_end)
    notes += _uncounted(low, high, start, end, log)
    # A spout past the log end read a log that is gone (a recreated or truncated topic): what it replays now
    # may be new to it.
    # (JStorm's spout fetches the log end + 1 where it starts without a record: one past the end, no truncation)
    past_end = direction == REPLAY and was > log.log_end + (store == JSTORM)
    if past_end:
        notes += (
            f"the spout was at {was}, past the log end: a recreated or truncated topic, whose messages it "
            f"may never have processed",
        )
    cost = ChangeCost(direction, max(0, end - start), notes=notes, past_end=past_end)
    return cost, (start, end) if end > start else None


def _uncounted(low: int, high: int, start: int, end: int, log: PartitionLog) -> tuple[str, ...]:
    """The notes on the offsets of [low, high) outside the log, which [start, end) leaves out: deleted below its
    start, not written at or past its end."""
    notes: tuple[str, ...] = ()
    if start > low:
        notes += (
            f"{_offsets(low, min(high, log.log_start) - 1)} below the log start {log.log_start}: deleted, not counted",
        )
    if end < high:
        notes += (
            f"{_offsets(max(low, log.log_end), high - 1)} at or past the log end {log.log_end}: no message "
            f"there, not counted",
        )
    return notes


def _log(cluster: Cluster | None, c: Change) -> PartitionLog | None:
    return (cluster or {}).get(c.topic, {}).get(c.partition) if c.topic else None


def _costed(plan: Plan) -> list[tuple[int, Change]]:
    """The changes that move a spout: every write but a Trident batch rewritten beside its partition's row."""
    return [(i, c) for i, c in enumerate(plan.changes) if c.action in (WRITE, DELETE) and c.batch is None]


def cost_positions(plan: Plan, cluster: Cluster | None, spout: Spout = Spout()) -> list[Position]:
    """The offsets to read messages at: the first and the last offset of each range within the log."""
    out: list[Position] = []
    for _, c in _costed(plan):
        _, span = _bounds(plan.key.store, c, _log(cluster, c), cluster is not None, spout)
        if span is not None:
            out += [(c.topic, c.partition, span[0]), (c.topic, c.partition, span[1] - 1)]
    return out


def plan_cost(plan: Plan, cluster: Cluster | None, read: MessageRead, spout: Spout = Spout()) -> PlanCost:
    """The cost of each written change, from the log offsets (None: Kafka was not consulted) and the read."""
    costs: list[ChangeCost | None] = [None] * len(plan.changes)
    for i, c in _costed(plan):
        log = _log(cluster, c)
        cost, span = _bounds(plan.key.store, c, log, cluster is not None, spout)
        costs[i] = cost if span is None else _spanned(cost, c, log, read, *span)
    return PlanCost(tuple(costs))


def _stamp(message: LogMessage | None) -> int | None:
    return message.timestamp_ms if message is not None else None


def _spanned(cost: ChangeCost, c: Change, log: PartitionLog, read: MessageRead, start: int, end: int) -> ChangeCost:
    """The range's cost with the timestamps of its first and last message, as far as the read found them."""
    first_at = at_offset(c.topic, c.partition, start, log, read)
    first = first_at.first if first_at.kind in (MESSAGE, GAP) else None
    if first_at.kind == GAP and (first is None or first.offset >= end):
        return replace(
            cost,
            messages=0,
            notes=cost.notes
            + (f"{_offsets(start, end - 1)} hold no message (removed by compaction, or transaction markers)",),
        )
    last_at = at_offset(c.topic, c.partition, end - 1, log, read)
    last = last_at.first if last_at.kind == MESSAGE else None
    why = ""
    if first is None:
        why = first_at.why
    elif last is None:
        why = (
            f"offset {end - 1} holds no message, so the last one's time is not known"
            if last_at.kind == GAP
            else last_at.why
        )
    elif first.timestamp_ms is None or last.timestamp_ms is None:
        why = "the messages carry no timestamp (message format v0)"
    stamps = (_stamp(first), _stamp(last))
    known = sum(t is not None for t in stamps)
    span = FULL if known == 2 else PARTIAL if known else UNKNOWN_SPAN
    return replace(
        cost, up_to=GAP in (first_at.kind, last_at.kind), first_ms=stamps[0], last_ms=stamps[1], span=span, why=why
    )


def undo_cost(plan: Plan) -> PlanCost | None:
    """What restoring the plan's backup costs: each written range the other way. A Kafka commit written where
    there was none is removed only when the restore deletes the group (Plan.undone_by): the spout then starts
    where it would without it, as before the write; where it cannot be undone, the undo costs nothing."""
    if plan.cost is None:
        return None
    return PlanCost(
        tuple(
            None if cost is None or plan.undone_by(c) == "nothing" else cost.reversed()
            for c, cost in zip(plan.changes, plan.cost.changes, strict=True)
        )
    )


# --- in words ----------------------------------------------------------------------------------------------

VERB = {REPLAY: "replays", SKIP: "skips"}
AT_LEAST_ONCE = {
    REPLAY: ("it is processed again", "they are processed again (duplicates downstream)"),
    SKIP: ("it is never processed", "they are never processed"),
}


def _count(n: int, up_to: bool) -> str:
    return f"{'up to ' if up_to else ''}{n:,} message{'' if n == 1 and not up_to else 's'}"


def written(first_ms: int | None, last_ms: int | None) -> str:
    """'written at T', 'written T1 to T2' (the date once when both fall on one day), or '' with neither."""
    if first_ms is None and last_ms is None:
        return ""
    if first_ms is None or last_ms is None or first_ms == last_ms:
        return f"written at {iso_ms(first_ms if last_ms is None else last_ms)}"
    a, b = iso_ms(first_ms), iso_ms(last_ms)
    return f"written {a} to {b[11:] if a[:11] == b[:11] else b}"


def describe(cost: ChangeCost) -> str:
    """One change's cost in the operator's words: 'skips 1 message written at 2026-11-22T02:00:00.000Z'."""
    if cost.direction == UNKNOWN:
        return f"no previous position ({'; '.join(cost.notes)})"
    if cost.direction == NONE:
        text = "replays and skips nothing: the spout resumes where it did"
    elif not cost.messages:
        text = f"{VERB[cost.direction]} no message"
    else:
        text = f"{VERB[cost.direction]} {_count(cost.messages, cost.up_to)}"
        if cost.span == FULL:
            text += " " + written(cost.first_ms, cost.last_ms)
        elif cost.span == PARTIAL:
            side = "first" if cost.first_ms is not None else "last"
            text += f", the {side} {written(cost.first_ms, cost.last_ms)}; time span partial ({cost.why})"
        else:
            text += f", time span unknown ({cost.why})"
    return text + (f" ({'; '.join(cost.notes)})" if cost.notes else "")


def sum_text(s: CostSum, *, at_least_once: bool = True) -> str:
    """'skips 870 messages written T1 to T2 on 3 partitions: under at-least-once they are never processed'."""
    one = s.messages == 1 and not s.up_to
    text = f"{VERB[s.direction]} {_count(s.messages, s.up_to) if s.messages else 'no message'}"
    when = written(s.first_ms, s.last_ms)
    text += f" {when}" if when else ""
    text += f" on {_partitions(s.partitions)}" if s.partitions > 1 else ""
    if at_least_once and s.messages:
        text += f": under at-least-once {AT_LEAST_ONCE[s.direction][0 if one else 1]}"
    if s.past_end:
        text += (
            f"; the spout was past the log end on {_partitions(s.past_end)} (a recreated or truncated topic): "
            f"those messages may be new to it"
        )
    if s.spans_unknown:
        text += f"; time span {'partial' if when else 'unknown'}: not known on {_partitions(s.spans_unknown)} ({s.why})"
    return text


def _partitions(n: int) -> str:
    return f"{n:,} partition{'' if n == 1 else 's'}"


def cost_lines(cost: PlanCost, *, at_least_once: bool = True) -> list[str]:
    """A consumer's cost, one line per direction that moves messages or partitions, and one for the rest."""
    lines = [sum_text(s, at_least_once=at_least_once) for s in (cost.replay, cost.skip) if s.partitions]
    if cost.no_previous_position:
        lines.append(f"{cost.no_previous_position:,} partition(s) with no previous position: not counted")
    return lines or ["replays and skips nothing"]
