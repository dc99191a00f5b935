"""Kafka adapter: KafkaStore, and here its topic metadata and log offsets (confluent-kafka).

KafkaStore is the connection of kafka_client.py with its reads, one room each: the log offsets here, messages
(kafka_messages.py), group states and commits (kafka_groups.py) and configs (kafka_configs.py). Metadata and group
state come from confluent-kafka's AdminClient; a group's commits are read, written and deleted through kafka-python
(offctl/adapters/groups.py says why: librdkafka crashes on a coordinator that moves, and carries commit metadata as
C strings). Log start and end offsets come from a Consumer's offsets_for_times with librdkafka's EARLIEST (-2) and
LATEST (-1) as the timestamps: librdkafka sends the partitions' offset fields as the ListOffsets timestamps, one
request per leader for a whole list (rd_kafka_offsets_for_times in src/rdkafka.c; rdkafka.h: "The timestamps to
query are represented as offset in offsets on input"), and Kafka's ListOffsets answers -2 with the log start and -1
with the log end. Where AdminClient.list_offsets makes two Python futures per partition (at 100,000 partitions that
bookkeeping alone took longer than the broker's answers), this makes one call per list. The lookups run in
LOOKUP_THREADS background threads, which librdkafka's blocking call leaves free of the GIL, in lists of
REQUEST_PARTITIONS as topics are asked for, and are collected by logs().

The consumer never subscribes, joins or commits: confluent-kafka requires a group.id, and librdkafka only
looks up that group's coordinator. Its isolation level is read_uncommitted, so the log end is the high
watermark, as with AdminClient.list_offsets' default. The topics asked for with `last_stable` are also looked up by a
second consumer whose isolation level is read_committed: librdkafka sends ListOffsets (v2+) with the client's
isolation level, and Kafka answers LATEST with the last stable offset (LSO), where a read_committed consumer stops
(KIP-98).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicCollection, TopicPartition

from offctl.adapters.groups import Backoff
from offctl.adapters.kafka_client import LOOKUP_GROUP, UNREACHABLE, kafka_error
from offctl.adapters.kafka_configs import KafkaConfigs
from offctl.adapters.kafka_groups import KafkaGroups
from offctl.adapters.kafka_messages import KafkaMessages
from offctl.core.records.model import Cluster, PartitionLog, is_topic_name
from offctl.core.storm.releases import Isolation
from offctl.errors import StoreUnavailable

# Partitions per offsets lookup. librdkafka's cost per call grows with the square of its partitions
# (measured with confluent-kafka 2.16: 1,000 partitions 15 ms, 10,000 partitions 600 ms), so many
# calls of a few hundred partitions beat one large call.
REQUEST_PARTITIONS = 500
LOOKUP_THREADS = 2  # lookups in flight at once
EARLIEST, LATEST = -2, -1  # ListOffsets' special timestamps (librdkafka's RD_KAFKA_OFFSET_BEGINNING and _END)
# The log offsets looked up: what each is called in a note, its ListOffsets timestamp, whether read_committed asks it
LOG_START, LOG_END, LAST_STABLE = "log start", "log end", "last stable"
_LOOKUPS = {
    LOG_START: (EARLIEST, Isolation.READ_UNCOMMITTED),
    LOG_END: (LATEST, Isolation.READ_UNCOMMITTED),
    LAST_STABLE: (LATEST, Isolation.READ_COMMITTED),
}
DESCRIBE_TOPICS = 200  # topics per describe-topics call of a targeted store

# A partition's leader that is moving: asked again until the timeout (_lookup). OFFSET_NOT_AVAILABLE: a new leader
# whose high watermark has not caught up yet (KIP-207); the leader epochs: a leader that changed under the request.
# librdkafka answers a whole lookup _UNKNOWN_PARTITION while its metadata gives a partition no leader (the metadata
# offctl read said the partition exists, so it is one whose leader is moving).
_LEADER_MOVING = {
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.REPLICA_NOT_AVAILABLE,
    KafkaError.OFFSET_NOT_AVAILABLE,
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.UNKNOWN_LEADER_EPOCH,
    KafkaError._UNKNOWN_PARTITION,
}


class KafkaStore(KafkaGroups, KafkaMessages, KafkaConfigs):
    def __init__(
        self,
        bootstrap_servers: str,
        *,
        config: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        targeted: bool = False,
    ) -> None:
        """`targeted`: describe only the topics asked for (an audit task), instead of reading the whole
        cluster's metadata once (inspect, which overlaps that read with ZooKeeper's)."""
        super().__init__(bootstrap_servers, config=config, timeout=timeout)
        self.targeted = targeted
        self._consumer: Consumer | None = None  # for log offsets, made when first needed
        self._read_committed_consumer: Consumer | None = None  # for last stable offsets (read_committed), likewise
        self._lookup_pool: ThreadPoolExecutor | None = None
        self._broken: str | None = None  # why the broker is unreachable, once a lookup has said so
        self._leaders: dict[str, dict[int, str | None]] | None = None
        self._metadata_future: Future | None = None
        self._requested: set[str] = set()
        self._waiting: dict[str, None] = {}  # topics asked for before the metadata arrived, in order
        self._undescribed: set[str] = set()
        self._unsent: list[tuple[str, int]] = []
        self._queued: dict[str, list[int]] = {}  # topic -> its partitions, once queued for lookup
        self._last_stable: set[str] = set()  # topics whose last stable offsets are asked for too
        self._unsent_last_stable: list[tuple[str, int]] = []
        self._pending: list[tuple[str, list[tuple[str, int]], Future]] = []  # (LOG_START..., partitions, lookup)

    def close(self) -> None:
        """Stop the lookup threads, close the consumers and the group client (the admin client needs no closing),
        once a background ask of the brokers' API versions has ended."""
        self._wait_api_versions()
        super().close()
        if self._lookup_pool is not None:
            self._lookup_pool.shutdown(wait=True, cancel_futures=True)
            self._lookup_pool = None
        for consumer in (self._consumer, self._read_committed_consumer):
            if consumer is not None:
                try:
                    consumer.close()
                except (KafkaException, RuntimeError):
                    pass  # closing must never mask what went wrong before
        self._consumer = self._read_committed_consumer = None

    def prefetch(self) -> None:
        """Start the metadata request, and the ask of the brokers' API versions, in the background, so they overlap
        whatever is read next."""
        if self._leaders is None and self._metadata_future is None:
            executor = ThreadPoolExecutor(1, thread_name_prefix="offctl-metadata")
            self._metadata_future = executor.submit(self.admin.list_topics, timeout=self.timeout)
            executor.shutdown(wait=False)  # the request still runs; the thread ends with it
            self.prefetch_api_versions()  # for the verdicts of which spouts the brokers serve (pipeline.assess)

    def _metadata(self) -> dict[str, dict[int, str | None]]:
        """topic -> partition -> leader "host:port", read once."""
        if self._leaders is None:
            self.prefetch()
            try:
                md = self._metadata_future.result()
            except KafkaException as exc:
                raise self._unavailable("a metadata request", exc) from None
            brokers = {b.id: f"{b.host}:{b.port}" for b in md.brokers.values()}
            self._leaders = {
                topic: {p: brokers.get(pmd.leader) for p, pmd in tmd.partitions.items()}
                for topic, tmd in md.topics.items()
                if tmd.error is None or tmd.partitions
            }
        return self._leaders

    def _describe(self, names: list[str]) -> dict[str, dict[int, str | None]]:
        """Partitions and leaders of just these topics; topics that do not exist are left out."""
        leaders: dict[str, dict[int, str | None]] = {}
        if not names:
            return leaders
        try:
            futures = self.admin.describe_topics(TopicCollection(names), request_timeout=self.timeout)
        except KafkaException as exc:
            raise self._unavailable("a describe-topics request", exc) from None
        for name, future in futures.items():
            try:
                desc = future.result(timeout=self.timeout + 5)
            except KafkaException as exc:
                err = kafka_error(exc)
                if err is not None and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                if err is None or err.code() in UNREACHABLE:
                    raise self._unavailable(f"a describe request for topic {name}", exc) from None
                # One topic the broker refuses (an invalid name, no authorization) must not sink the others:
                # it is left out, so its records are UNKNOWN_TOPIC, and the read is partial.
                self.notes.append(f"topic {name!r}: the broker refused to describe it ({err.str()})")
                continue
            except TimeoutError:
                raise StoreUnavailable(
                    f"Kafka at {self.bootstrap_servers} did not describe topic {name} within {self.timeout:g}s"
                ) from None
            leaders[name] = {p.id: f"{p.leader.host}:{p.leader.port}" if p.leader else None for p in desc.partitions}
        return leaders

    def _flush_undescribed(self) -> None:
        names, self._undescribed = sorted(self._undescribed), set()
        found = self._describe(names)
        self._leaders = {**(self._leaders or {}), **found}
        self._queue(found)

    def _queue(self, leaders: Mapping[str, Mapping[int, str | None]]) -> None:
        for topic, partitions in leaders.items():
            self._queued[topic] = list(partitions)
            self._unsent += [(topic, p) for p in partitions]
            if topic in self._last_stable:
                self._unsent_last_stable += [(topic, p) for p in partitions]
        self._send_full()

    def _send_full(self) -> None:
        """Send the lookups that have REQUEST_PARTITIONS partitions waiting."""
        while len(self._unsent) >= REQUEST_PARTITIONS:
            self._send(self._unsent[:REQUEST_PARTITIONS])
            del self._unsent[:REQUEST_PARTITIONS]
        while len(self._unsent_last_stable) >= REQUEST_PARTITIONS:
            self._pending.append(
                (
                    LAST_STABLE,
                    self._unsent_last_stable[:REQUEST_PARTITIONS],
                    self._submit(self._unsent_last_stable[:REQUEST_PARTITIONS], *_LOOKUPS[LAST_STABLE]),
                )
            )
            del self._unsent_last_stable[:REQUEST_PARTITIONS]

    def request_logs(self, topics: Iterable[str], *, last_stable: bool = False) -> None:
        """Ask for log start and end offsets of these topics' partitions; logs() collects the answers. `last_stable`:
        their last stable offsets too (what a read_committed consumer reads up to), asked for once per topic.

        Call it as topics turn up: requests go out once REQUEST_PARTITIONS partitions are waiting, so
        the broker answers while other reads go on. Until the cluster's metadata has arrived (at 100,000
        partitions, most of a second), topics wait here instead of blocking the caller. Topics that do
        not exist are left to the core (UNKNOWN_TOPIC), and so are names Kafka cannot have (is_topic_name):
        never sent to the broker, they have no log, whether the store is targeted or reads the whole
        cluster's metadata (confluent-kafka raises ValueError for a name starting with NUL, librdkafka
        reads "t\\0x" as topic t, the broker refuses the others).
        """
        topics = [t for t in topics if is_topic_name(t)]
        if last_stable:
            self._ask_last_stable(topics)
        if self.targeted:
            new = {t for t in topics if t not in self._requested}
            self._undescribed |= new
            self._requested |= new
            if len(self._undescribed) >= DESCRIBE_TOPICS:
                self._flush_undescribed()
            return
        self._waiting.update(dict.fromkeys(topics))
        if self._leaders is None:
            self.prefetch()
            if not self._metadata_future.done():
                return
        self._flush_waiting()

    def _ask_last_stable(self, topics: list[str]) -> None:
        """Ask for the last stable offsets of these topics too, once per topic: now for a topic already queued, with
        its log offsets (_queue) for the others."""
        fresh = [t for t in dict.fromkeys(topics) if t not in self._last_stable]
        self._last_stable.update(fresh)
        self._unsent_last_stable += [(t, p) for t in fresh if t in self._queued for p in self._queued[t]]

    def _flush_waiting(self) -> None:
        """Queue the waiting topics the cluster's metadata has. Those it has not are described by name, as a targeted
        store describes every topic: Apache Kafka leaves out of the whole cluster's metadata the topics this principal
        may not describe as well as those that do not exist, and only a request naming them tells a refusal (noted:
        the read is partial) from a topic that does not exist (left to the core)."""
        leaders = self._metadata()
        new = {t: leaders[t] for t in self._waiting if t in leaders and t not in self._requested}
        missing = {t for t in self._waiting if t not in leaders and t not in self._requested}
        self._waiting.clear()
        self._requested |= set(new) | missing
        self._undescribed |= missing
        self._queue(new)
        if len(self._undescribed) >= DESCRIBE_TOPICS:
            self._flush_undescribed()

    def _lookup(
        self, partitions: list[tuple[str, int]], timestamp: int, consumer: Consumer | None = None
    ) -> list[TopicPartition]:
        """offsets_for_times of these partitions at one timestamp (EARLIEST, LATEST or milliseconds), by `consumer`
        (default: the read_uncommitted one); raises KafkaException for the whole list. Once the broker proved
        unreachable, the rest fail at once, so a dead broker costs one time-out per thread, not one per list."""
        if self._broken is not None:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT, self._broken))
        backoff, asked, answered = Backoff(self.timeout), partitions, {}
        while True:
            answers = self._offsets_for_times(consumer or self._consumer, asked, timestamp, backoff)
            if answers is None:
                continue  # the whole list: librdkafka knows no leader for one of them yet
            answered.update({(tp.topic, tp.partition): tp for tp in answers})
            # A partition whose leader is moving (a broker restart, a rolling upgrade) is asked again with Kafka's
            # back-off until the timeout, as the Java consumer's offsets lookups are; librdkafka refreshes its
            # metadata on such an answer.
            asked = [
                (tp.topic, tp.partition) for tp in answers if tp.error is not None and tp.error.code() in _LEADER_MOVING
            ]
            if not asked or not backoff.wait():
                return [answered[tp] for tp in partitions if tp in answered]

    def _offsets_for_times(
        self, consumer: Consumer, asked: list[tuple[str, int]], timestamp: int, backoff: Backoff
    ) -> list[TopicPartition] | None:
        """One offsets_for_times call of _lookup. None when librdkafka refused the whole list for a leader that is
        moving and the back-off has waited (ask again); an unreachable broker is kept in _broken, for the lookups
        that follow to fail at once."""
        try:
            return consumer.offsets_for_times([TopicPartition(t, p, timestamp) for t, p in asked], self.timeout)
        except KafkaException as exc:
            err = kafka_error(exc)
            if err is not None and err.code() in UNREACHABLE:
                self._broken = err.str()
            if err is None or err.code() not in _LEADER_MOVING or not backoff.wait():
                raise
            return None

    def _lookup_consumer(self, isolation_level: Isolation) -> Consumer:
        settings = {"group.id": LOOKUP_GROUP, "enable.auto.commit": False, "isolation.level": isolation_level.value}
        return self._client(Consumer, {**self._settings, **settings})

    def _submit(
        self, partitions: list[tuple[str, int]], timestamp: int, isolation_level: Isolation = Isolation.READ_UNCOMMITTED
    ) -> Future:
        """offsets_for_times of these partitions at `timestamp` in a lookup thread, at `isolation_level`."""
        if self._consumer is None:
            self._consumer = self._lookup_consumer(Isolation.READ_UNCOMMITTED)
            self._lookup_pool = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="offctl-offsets")
        read_committed = isolation_level.stops_at_last_stable
        if read_committed and self._read_committed_consumer is None:
            self._read_committed_consumer = self._lookup_consumer(Isolation.READ_COMMITTED)
        return self._lookup_pool.submit(
            self._lookup, partitions, timestamp, self._read_committed_consumer if read_committed else None
        )

    def _send(self, partitions: list[tuple[str, int]]) -> None:
        for kind in (LOG_START, LOG_END):
            self._pending.append((kind, partitions, self._submit(partitions, *_LOOKUPS[kind])))

    def logs(self) -> Cluster:
        """Partitions, leaders and log offsets of every existing topic asked for, once all have answered."""
        self._send_the_rest()
        offsets = self._answers()
        start, end, last_stable = offsets[LOG_START], offsets[LOG_END], offsets[LAST_STABLE]
        leaders = (self._leaders or {}) if self.targeted else self._metadata()
        return {
            topic: {
                p: PartitionLog(start.get((topic, p)), end.get((topic, p)), leader, last_stable.get((topic, p)))
                for p, leader in sorted(leaders[topic].items())
            }
            for topic in sorted(self._requested)
            if topic in leaders
        }

    def _send_the_rest(self) -> None:
        """Send every lookup still waiting: the topics waiting for the metadata or a describe, and the lists short of
        REQUEST_PARTITIONS partitions."""
        if self._waiting:
            self._flush_waiting()
        if self._undescribed:
            self._flush_undescribed()
        if self._unsent:
            self._send(self._unsent)
            self._unsent = []
        if self._unsent_last_stable:
            self._pending.append(
                (LAST_STABLE, self._unsent_last_stable, self._submit(self._unsent_last_stable, *_LOOKUPS[LAST_STABLE]))
            )
            self._unsent_last_stable = []

    def _answers(self) -> dict[str, dict[tuple[str, int], int]]:
        """Each kind of lookup (LOG_START, LOG_END, LAST_STABLE) -> (topic, partition) -> its offset, from every
        lookup sent; the partitions not answered are noted, by kind and reason."""
        offsets: dict[str, dict[tuple[str, int], int]] = {kind: {} for kind in _LOOKUPS}
        failed: dict[tuple[str, str], list[str]] = {}
        for what, partitions, lookup in self._pending:
            try:
                answers = lookup.result(timeout=2 * self.timeout + 5)  # _lookup waits a moving leader out
            except (KafkaException, TimeoutError) as exc:
                err = kafka_error(exc)
                failed.setdefault((what, err.str() if err else "no answer"), []).extend(
                    f"{t}/{p}" for t, p in partitions
                )
                continue
            for tp in answers:
                if tp.error is not None:
                    failed.setdefault((what, tp.error.str()), []).append(f"{tp.topic}/{tp.partition}")
                else:
                    offsets[what][(tp.topic, tp.partition)] = tp.offset
        for (what, reason), where in failed.items():
            shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
            self.notes.append(f"could not read the {what} offset of {shown}: {reason}")
        return offsets

    def offsets_for_times(self, partitions: Iterable[tuple[str, int]], at_ms: int) -> dict[tuple[str, int], int | None]:
        """The first offset whose timestamp is at or after `at_ms`, per partition; None where no message is
        that late (the caller then uses the log end, as kafka-consumer-groups does)."""
        partitions = list(partitions)
        found: dict[tuple[str, int], int | None] = {}
        lookups = [
            self._submit(partitions[i : i + REQUEST_PARTITIONS], at_ms)
            for i in range(0, len(partitions), REQUEST_PARTITIONS)
        ]
        for lookup in lookups:
            for tp in self._wait(lookup, "an offsets-for-time request"):
                if tp.error is not None:
                    raise StoreUnavailable(
                        f"Kafka at {self.bootstrap_servers}: an offsets-for-time request for "
                        f"{tp.topic}/{tp.partition} failed: {tp.error.str()}"
                    )
                found[(tp.topic, tp.partition)] = tp.offset if tp.offset >= 0 else None
        return found
