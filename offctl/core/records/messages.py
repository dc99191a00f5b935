"""What lies at an offset of a partition's log: the message there, or why there is none.

Pure: it takes the log offsets and what a read of messages found (offctl.adapters.kafka.KafkaStore.read_messages)
and says which of these the offset is:

1. DELETED: below the log start. Retention (or DeleteRecords) removed it; the oldest message is at the log start.
2. NOT_WRITTEN: at or past the log end (the high watermark): no message is there yet.
3. MESSAGE: the message at that very offset.
4. GAP: no message at the offset, the first one after it is later. Within [log start, log end) that happens
   where log compaction removed records, or at transaction markers (control records, which the broker keeps
   in the log and no consumer is ever handed) and, under read_committed, aborted records.
5. UNREAD: the read did not say (the time budget ran out, the broker refused, or the log offsets are unknown).

Only offsets within [log start, log end) need a read: `needs_read` says which.
"""

from __future__ import annotations

from dataclasses import dataclass

from offctl.core.records.model import LogMessage, MessageRead, PartitionLog

MESSAGE, GAP, DELETED, NOT_WRITTEN, UNREAD = "message", "gap", "deleted", "not-written", "unread"


@dataclass(frozen=True, slots=True)
class AtOffset:
    """An offset of one partition and what is there."""

    topic: str
    partition: int
    offset: int
    kind: str  # MESSAGE, GAP, DELETED, NOT_WRITTEN or UNREAD
    messages: tuple[LogMessage, ...] = ()  # the messages read from the offset on (first: the one a consumer gets)
    why: str = ""  # the operator's sentence for every kind but MESSAGE

    @property
    def first(self) -> LogMessage | None:
        """The message a consumer resuming at this offset is handed first, if one was read."""
        return self.messages[0] if self.messages else None

    @property
    def next_offset(self) -> int | None:
        """GAP: the offset of the next message that exists."""
        return self.messages[0].offset if self.kind == GAP and self.messages else None


def needs_read(offset: int, log: PartitionLog | None) -> bool:
    """Whether a message can be at `offset`: only within [log start, log end) is there anything to read."""
    return (
        log is not None
        and log.log_start is not None
        and log.log_end is not None
        and log.log_start <= offset < log.log_end
    )


def at_offset(topic: str, partition: int, offset: int, log: PartitionLog | None, read: MessageRead) -> AtOffset:
    """What is at `offset`, from the log's offsets and the read (which need not have asked for it)."""
    where = f"{topic}/{partition}"
    if log is None or log.log_start is None or log.log_end is None:
        return AtOffset(topic, partition, offset, UNREAD, why=f"{where}: the broker gave no log offsets")
    if offset < log.log_start:
        return AtOffset(
            topic,
            partition,
            offset,
            DELETED,
            why=f"{where} offset {offset} is below the log start {log.log_start}: deleted by retention "
            f"(or DeleteRecords); the oldest message is at {log.log_start}",
        )
    if offset >= log.log_end:
        return AtOffset(
            topic,
            partition,
            offset,
            NOT_WRITTEN,
            why=f"{where} offset {offset} is at or past the log end {log.log_end}: not yet written",
        )
    position = (topic, partition, offset)
    messages = read.messages.get(position, ())
    if messages and messages[0].offset == offset:
        return AtOffset(topic, partition, offset, MESSAGE, messages)
    if messages:
        nxt = messages[0].offset
        return AtOffset(
            topic,
            partition,
            offset,
            GAP,
            messages,
            f"{where} has no message at offset {offset}: the next one is at {nxt} ({_span(offset, nxt - 1)}: "
            f"removed by compaction, or transaction markers, which no consumer is handed)",
        )
    if position in read.at_end:
        return AtOffset(
            topic,
            partition,
            offset,
            GAP,
            why=f"{where} has no message from offset {offset} to the log end {log.log_end} "
            f"(removed by compaction, or transaction markers, which no consumer is handed)",
        )
    why = read.unread.get(position, "not read")
    return AtOffset(topic, partition, offset, UNREAD, why=f"{where} offset {offset}: {why}")


def _span(first: int, last: int) -> str:
    return f"offset {first}" if first == last else f"offsets {first}-{last}"


def age_ms(message: LogMessage | None, now_ms: int) -> int | None:
    """How long ago the message was written, by its timestamp (never negative: producers' clocks run ahead);
    None without a message or a timestamp."""
    if message is None or message.timestamp_ms is None:
        return None
    return max(0, now_ms - message.timestamp_ms)
