"""KafkaStore's reads of messages (kafka.py): a consumer assigned the partitions at the offsets asked for, which
never subscribes, joins a group or commits.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from offctl.adapters.kafka_client import LOOKUP_GROUP, KafkaClient
from offctl.core.records.model import LogMessage, MessageRead, Position
from offctl.core.storm.releases import Isolation

MESSAGE_PARTITIONS = 1000  # partitions one read of messages is assigned at once
_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}  # confluent_kafka.TIMESTAMP_CREATE_TIME, _LOG_APPEND_TIME


class KafkaMessages(KafkaClient):
    def read_messages(
        self,
        positions: Iterable[Position],
        *,
        count: int = 1,
        budget_s: float | None = None,
        isolation_level: Isolation = Isolation.READ_UNCOMMITTED,
    ) -> MessageRead:
        """Up to `count` messages from each (topic, partition, offset) on: the first at or after the offset,
        then the ones after it, up to the log end. Read-only: the consumer is assigned the partitions at those
        offsets and never subscribes, joins a group or commits (enable.auto.commit off, nothing stored).

        Partitions are read MESSAGE_PARTITIONS at a time; several positions of one partition are read in
        turns. Whatever is not read within `budget_s` seconds (default: the connection's timeout) is `unread`,
        with the reason, as is a position the broker refuses (an offset out of range, say).

        `isolation_level`: READ_COMMITTED reads as a read_committed consumer does, up to the last stable offset, without
        the records of aborted transactions; READ_UNCOMMITTED (the default) every record up to the high watermark.
        Neither is handed the markers."""
        budget = self.timeout if budget_s is None else budget_s
        deadline = time.monotonic() + budget
        turns: list[list[Position]] = []
        turn_of: dict[tuple[str, int], int] = {}
        for position in dict.fromkeys(positions):
            turn = turn_of.get(position[:2], 0)
            turn_of[position[:2]] = turn + 1
            if turn == len(turns):
                turns.append([])
            turns[turn].append(position)
        found: dict[Position, list[LogMessage]] = {}
        at_end: set[Position] = set()
        unread: dict[Position, str] = {}
        for turn in turns:
            for i in range(0, len(turn), MESSAGE_PARTITIONS):
                self._read_chunk(
                    turn[i : i + MESSAGE_PARTITIONS], count, deadline, budget, found, at_end, unread, isolation_level
                )
        return MessageRead({p: tuple(m) for p, m in found.items() if m}, frozenset(at_end), unread)

    def _read_chunk(
        self,
        chunk: list[Position],
        count: int,
        deadline: float,
        budget: float,
        found: dict[Position, list[LogMessage]],
        at_end: set[Position],
        unread: dict[Position, str],
        isolation_level: Isolation = Isolation.READ_UNCOMMITTED,
    ) -> None:
        position = {(t, p): (t, p, o) for t, p, o in chunk}  # one position per partition within a chunk
        read = _ChunkRead(position, count, found, at_end, unread, set(position))
        if time.monotonic() < deadline:
            consumer = self._message_consumer(count, isolation_level)
            try:
                consumer.assign([TopicPartition(t, p, o) for t, p, o in chunk])
                while read.pending and (left := deadline - time.monotonic()) > 0:
                    # consume() returns when it has num_messages or at its timeout. Each pending partition gives
                    # at least one event (a message, its end, an error), so asking for no more than that many
                    # never waits out the timeout for events that will not come (it did: 0.5 s a call).
                    for msg in consumer.consume(num_messages=len(read.pending), timeout=min(left, 0.5)):
                        if (tp := read.take(msg)) is not None:
                            consumer.pause([TopicPartition(*tp)])
            except KafkaException as exc:
                raise self._unavailable("a read of messages", exc) from None
            finally:
                try:
                    consumer.close()
                except (KafkaException, RuntimeError):
                    pass
        why = f"not read within the time budget of {budget:g}s" + (f" ({read.last_error})" if read.last_error else "")
        unread.update({position[tp]: why for tp in read.pending})  # a position with some messages read says why not all

    def _message_consumer(self, count: int, isolation_level: Isolation) -> Consumer:
        """A consumer for one chunk of read_messages: assigned, never subscribed, storing and committing nothing."""
        return self._client(
            Consumer,
            {
                **self._settings,
                "group.id": LOOKUP_GROUP,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "error",
                "enable.partition.eof": True,
                "isolation.level": isolation_level.value,
                "fetch.wait.max.ms": 100,
                "queued.min.messages": count,
                # A partition whose queue holds `count` messages backs off its fetches, and when every fetched one
                # has, the broker's fetcher sleeps that long before it asks for the others: librdkafka's default
                # of 1000 ms stalled the first read of 1,000 partitions for 1-2 s (librdkafka >= 2.4).
                "fetch.queue.backoff.ms": 50,
            },
        )


@dataclass
class _ChunkRead:
    """One chunk of read_messages under way: the position each partition is read from, the partitions still pending,
    where what is read goes (read_messages' found, at_end and unread), and the client's last trouble of its own."""

    position: dict[tuple[str, int], Position]
    count: int
    found: dict[Position, list[LogMessage]]
    at_end: set[Position]
    unread: dict[Position, str]
    pending: set[tuple[str, int]]
    last_error: str = ""

    def take(self, msg) -> tuple[str, int] | None:
        """Keep one event of the consumer (a message, a partition's end, a refusal, the client's own error). Returns
        the partition it finishes (its `count` messages read, its end reached, refused), no longer pending, for the
        consumer to pause; None otherwise."""
        tp = (msg.topic(), msg.partition())
        err = msg.error()
        if tp not in self.pending:
            if err is not None and msg.topic() is None:
                self.last_error = err.str()  # the client's own trouble (the broker is down, say)
            return None
        if err is not None:
            if err.code() == KafkaError._PARTITION_EOF:
                self.at_end.add(self.position[tp])
            else:
                self.unread[self.position[tp]] = f"the broker refused the read ({err.str()})"
            return self._done(tp)
        if msg.offset() < self.position[tp][2]:
            return None
        messages = self.found.setdefault(self.position[tp], [])
        messages.append(_log_message(msg))
        return self._done(tp) if len(messages) >= self.count else None

    def _done(self, tp: tuple[str, int]) -> tuple[str, int]:
        self.pending.discard(tp)
        return tp


def _log_message(msg) -> LogMessage:
    kind, stamp = msg.timestamp()
    return LogMessage(
        msg.topic(),
        msg.partition(),
        msg.offset(),
        stamp if kind in _TIMESTAMP_TYPES else None,
        _TIMESTAMP_TYPES.get(kind),
        msg.key(),
        msg.value(),
        tuple(msg.headers() or ()),
    )
