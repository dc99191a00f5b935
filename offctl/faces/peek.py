"""`offctl peek` as a library call: inspect's read of the selected consumers, then the messages at the resume
offsets of the partitions chosen (offctl.core.records.peeked). It only reads: the consumer that fetches the messages is
assigned the partitions and never joins a group or commits (KafkaStore.read_messages)."""

from __future__ import annotations

import time

from offctl.core.records.model import MessageRead
from offctl.core.records.peeked import census, census_positions, peeked, positions, read_committed_positions, selected
from offctl.core.results.peek import PeekResult
from offctl.core.storm.releases import Isolation
from offctl.errors import OffctlError, UsageError
from offctl.pipeline.assess import assess, merged_reads
from offctl.pipeline.read import cyclic_gc_paused, open_stores, read_selected
from offctl.ports import LogStore
from offctl.settings.kinds import PEEK_MAX_COUNT as MAX_COUNT  # messages per partition
from offctl.settings.run import Reading


def peek(
    reading: Reading,
    *,
    partitions: frozenset[int] | None = None,
    count: int = 1,
    budget_s: float | None = None,
    now_ms: int | None = None,
) -> PeekResult:
    """The message at each chosen partition's resume offset, and `count` - 1 after it, with inspect's report of the
    consumers read: the one pipeline (inspect.assess), so its findings are inspect's on the same stores."""
    if not 1 <= count <= MAX_COUNT:
        raise UsageError(f"--count must be a whole number from 1 to {MAX_COUNT}")
    if budget_s is not None and not 0 < budget_s < float("inf"):
        raise UsageError("--budget must be a number of seconds above 0")
    if not reading.conn.bootstrap_servers:
        raise UsageError("peek reads messages from Kafka: give --bootstrap-servers")
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    with cyclic_gc_paused():
        with open_stores(reading.conn) as (zk, kafka):
            snapshot, records = read_selected(reading, zk, kafka, now_ms)
            report = assess(snapshot, kafka, reading, records)  # each consumer by its own profile
            rows = selected(report.rows, partitions)
            wanted = positions(rows)
            committed = read_committed_positions(rows)
            read = _read(kafka, [p for p in wanted if p not in committed], count, budget_s, Isolation.READ_UNCOMMITTED)
            if committed:
                spout_view = _read(
                    kafka, [p for p in wanted if p in committed], count, budget_s, Isolation.READ_COMMITTED
                )
                read = merged_reads([read, spout_view])
            counted = _census(kafka, rows, budget_s)
    return PeekResult(report, tuple(peeked(rows, read, counted)), count, now_ms)


def _read(kafka: LogStore, wanted: list, count: int, budget_s: float | None, level: Isolation) -> MessageRead:
    if not wanted:
        return MessageRead()
    return kafka.read_messages(wanted, count=count, budget_s=budget_s, isolation_level=level)


def _census(kafka, rows, budget_s: float | None) -> dict:
    """The census (offctl.core.records.peeked.Census) of the rows of spouts that read committed: their offsets from the
    commit to the last stable offset read twice, as a read_committed and as a read_uncommitted consumer reads them, and
    the topics' cleanup.policy (a compacted topic's missing offsets may be removed records, not markers)."""
    wanted, span = census_positions(rows)
    if not wanted:
        return {}
    committed = kafka.read_messages(wanted, count=span, budget_s=budget_s, isolation_level=Isolation.READ_COMMITTED)
    uncommitted = kafka.read_messages(wanted, count=span + 1, budget_s=budget_s)
    topics = sorted({t for t, _, _ in wanted})
    try:
        configs = kafka.read_topic_configs(topics)
    except OffctlError:
        configs = {}
    compacted = {t: "compact" in (getattr(configs.get(t), "cleanup_policy", None) or "compact") for t in topics}
    by_position = {(r.topic, r.record.partition, r.record.committed): r for r in rows}
    return {p: census(by_position[p], committed, uncommitted, compacted[p[0]]) for p in wanted}


def exit_code(result: PeekResult) -> int:
    """3 when a store or a message could not be read, 1 when a consumer named was not found, else 0."""
    if result.report.incomplete or result.unread:
        return 3
    if any(f.code == "CONSUMER_NOT_FOUND" for f in result.report.findings):
        return 1
    return 0
