"""Kafka adapter: topic metadata, log offsets and group state (confluent-kafka), group commits (groups.py).

Metadata and group state come from confluent-kafka's AdminClient; a group's commits are read, written and deleted
through kafka-python (offctl/adapters/groups.py says why: librdkafka crashes on a coordinator that moves, and
carries commit metadata as C strings). Log start and end offsets come from a
Consumer's offsets_for_times with librdkafka's EARLIEST (-2) and LATEST (-1) as the timestamps: librdkafka
sends the partitions' offset fields as the ListOffsets timestamps, one request per leader for a whole list
(rd_kafka_offsets_for_times in src/rdkafka.c; rdkafka.h: "The timestamps to query are represented as offset
in offsets on input"), and Kafka's ListOffsets answers -2 with the log start and -1 with the log end. Where
AdminClient.list_offsets makes two Python futures per partition (at 100,000 partitions that bookkeeping
alone took longer than the broker's answers), this makes one call per list. The lookups run in
LOOKUP_THREADS background threads, which librdkafka's blocking call leaves free of the GIL, in lists of
REQUEST_PARTITIONS as topics are asked for, and are collected by logs().

The consumer never subscribes, joins or commits: confluent-kafka requires a group.id, and librdkafka only
looks up that group's coordinator. Its isolation level is read_uncommitted, so the log end is the high
watermark, as with AdminClient.list_offsets' default. The topics asked for with `stable` are also looked up by a
second consumer whose isolation level is read_committed: librdkafka sends ListOffsets (v2+) with the client's
isolation level, and Kafka answers LATEST with the last stable offset (LSO), where a read_committed consumer stops
(KIP-98).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from offctl.adapters.groups import COORDINATOR_ERRORS, Backoff, GroupClient, coordinator_waited, error_words
from offctl.core.model import (
    GROUP_TYPES,
    UNKNOWN_TYPE,
    Cluster,
    GroupState,
    KafkaCommit,
    LogMessage,
    MessageRead,
    PartitionLog,
    Position,
    TopicRetention,
    is_topic_name,
)
from offctl.errors import StoreUnavailable, UsageError, WriteConflict

_log = logging.getLogger("offctl.adapters.kafka")
_log.addHandler(logging.NullHandler())
_log.propagate = False  # librdkafka's connection chatter must not reach stderr

# Partitions per offsets lookup. librdkafka's cost per call grows with the square of its partitions
# (measured with confluent-kafka 2.16: 1,000 partitions 15 ms, 10,000 partitions 600 ms), so many
# calls of a few hundred partitions beat one large call.
REQUEST_PARTITIONS = 500
LOOKUP_THREADS = 2  # lookups in flight at once
EARLIEST, LATEST = -2, -1  # ListOffsets' special timestamps (librdkafka's RD_KAFKA_OFFSET_BEGINNING and _END)
# The log offsets looked up: what each is called in a note, its ListOffsets timestamp, whether read_committed asks it
LOG_START, LOG_END, LAST_STABLE = "log start", "log end", "last stable"
_LOOKUPS = {LOG_START: (EARLIEST, False), LOG_END: (LATEST, False), LAST_STABLE: (LATEST, True)}
LOOKUP_GROUP = "offctl-log-offsets"  # required by confluent-kafka's Consumer; never joined nor committed to
DESCRIBE_TOPICS = 200  # topics per describe-topics call of a targeted store
MESSAGE_PARTITIONS = 1000  # partitions one read of messages is assigned at once
_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}  # confluent_kafka.TIMESTAMP_CREATE_TIME, _LOG_APPEND_TIME

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
UNREACHABLE = {
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError._MSG_TIMED_OUT,
}


def _sendable_group(group: str) -> bool:
    """Whether librdkafka can name this group id: it takes C strings, so a NUL ends the id (another group's
    offsets would be read, or written), and confluent-kafka refuses an empty id (ValueError)."""
    return bool(group) and "\0" not in group


def kafka_error(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


class KafkaStore:
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
        self.bootstrap_servers = bootstrap_servers
        self.targeted = targeted
        self.timeout = timeout
        self._refused_login: str | None = None  # why the broker refused the credentials, once it has
        settings = {
            **(config or {}),
            "bootstrap.servers": bootstrap_servers,
            "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),  # librdkafka's minimum
            "logger": _log,
            "error_cb": self._client_error,
        }
        self._settings = settings
        self.admin = self._client(AdminClient, settings)
        self.groups = GroupClient(bootstrap_servers, config or {}, timeout)  # offsets, commits, deletion (groups.py)
        self._consumer: Consumer | None = None  # for log offsets, made when first needed
        self._committed_consumer: Consumer | None = None  # for last stable offsets (read_committed), likewise
        self._lookup_pool: ThreadPoolExecutor | None = None
        self._broken: str | None = None  # why the broker is unreachable, once a lookup has said so
        self.notes: list[str] = []  # partial read failures, reported with exit 3
        self._leaders: dict[str, dict[int, str | None]] | None = None
        self._metadata_future: Future | None = None
        self._requested: set[str] = set()
        self._waiting: dict[str, None] = {}  # topics asked for before the metadata arrived, in order
        self._undescribed: set[str] = set()
        self._unsent: list[tuple[str, int]] = []
        self._queued: dict[str, list[int]] = {}  # topic -> its partitions, once queued for lookup
        self._stable: set[str] = set()  # topics whose last stable offsets are asked for too
        self._unsent_stable: list[tuple[str, int]] = []
        self._pending: list[tuple[str, list[tuple[str, int]], Future]] = []  # (LOG_START..., partitions, lookup)
        self._group_types: dict[str, str] | None = None  # ListGroups' answer, once asked
        self._unlisted: list[str] = []  # the brokers ListGroups did not hear from (_listing)

    @staticmethod
    def _client(kind, settings: Mapping):
        try:
            return kind(settings)
        except (KafkaException, ValueError, TypeError) as exc:
            # librdkafka names the bad property, never its value; keep it that way.
            err = kafka_error(exc)
            raise UsageError(f"Kafka client settings: {(err.str() if err else str(exc)).strip()}") from None

    def close(self) -> None:
        """Stop the lookup threads, close the consumers and the group client (the admin client needs no closing)."""
        self.groups.close()
        if self._lookup_pool is not None:
            self._lookup_pool.shutdown(wait=True, cancel_futures=True)
            self._lookup_pool = None
        for consumer in (self._consumer, self._committed_consumer):
            if consumer is not None:
                try:
                    consumer.close()
                except (KafkaException, RuntimeError):
                    pass  # closing must never mask what went wrong before
        self._consumer = self._committed_consumer = None

    def _client_error(self, err: KafkaError) -> None:
        """librdkafka's error callback. A refused login is not a request's answer: the requests wait for a
        connection that never authenticates and end as time-outs, so it is kept here to say what they met."""
        if err.code() == KafkaError._AUTHENTICATION:
            self._refused_login = err.str()

    def _login_refused(self) -> StoreUnavailable | None:
        self.admin.poll(0)  # the admin client serves its callbacks only when polled
        if self._refused_login is None:
            return None
        return StoreUnavailable(
            f"Kafka at {self.bootstrap_servers} refused the credentials ({self._refused_login}): "
            f"check sasl.username and sasl.password (the context's kafka-config, "
            f"--kafka-config or --kafka-config-file)"
        )

    def _unavailable(self, what: str, exc: BaseException) -> StoreUnavailable:
        err = kafka_error(exc)
        if (err is None or err.code() in UNREACHABLE) and (refused := self._login_refused()) is not None:
            return refused
        if err is not None and err.code() in UNREACHABLE:
            return StoreUnavailable(
                f"Kafka at {self.bootstrap_servers} did not answer {what} within {self.timeout:g}s ({err.str()})"
            )
        detail = error_reason(err) if err is not None else (str(exc) or type(exc).__name__)
        return StoreUnavailable(f"Kafka at {self.bootstrap_servers}: {what} failed: {detail}")

    def _wait(self, future, what: str, *, isolate: bool = False):
        """The future's result. `isolate`: when the broker answered with a refusal of this one request (not a
        transport failure or time-out), note it (the read is partial) and return None instead of failing all."""
        try:
            return future.result(timeout=self.timeout + 5)
        except TimeoutError:
            raise self._login_refused() or StoreUnavailable(
                f"Kafka at {self.bootstrap_servers} did not answer {what} within {self.timeout:g}s"
            ) from None
        except KafkaException as exc:
            err = kafka_error(exc)
            if isolate and err is not None and err.code() not in UNREACHABLE:
                self.notes.append(f"{what} was refused: {error_reason(err)}")
                return None
            raise self._unavailable(what, exc) from None

    def prefetch(self) -> None:
        """Start the metadata request in the background, so it overlaps whatever is read next."""
        if self._leaders is None and self._metadata_future is None:
            executor = ThreadPoolExecutor(1, thread_name_prefix="offctl-metadata")
            self._metadata_future = executor.submit(self.admin.list_topics, timeout=self.timeout)
            executor.shutdown(wait=False)  # the request still runs; the thread ends with it

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
            if topic in self._stable:
                self._unsent_stable += [(topic, p) for p in partitions]
        self._send_full()

    def _send_full(self) -> None:
        """Send the lookups that have REQUEST_PARTITIONS partitions waiting."""
        while len(self._unsent) >= REQUEST_PARTITIONS:
            self._send(self._unsent[:REQUEST_PARTITIONS])
            del self._unsent[:REQUEST_PARTITIONS]
        while len(self._unsent_stable) >= REQUEST_PARTITIONS:
            self._pending.append(
                (
                    LAST_STABLE,
                    self._unsent_stable[:REQUEST_PARTITIONS],
                    self._submit(self._unsent_stable[:REQUEST_PARTITIONS], *_LOOKUPS[LAST_STABLE]),
                )
            )
            del self._unsent_stable[:REQUEST_PARTITIONS]

    def request_logs(self, topics: Iterable[str], *, stable: bool = False) -> None:
        """Ask for log start and end offsets of these topics' partitions; logs() collects the answers. `stable`:
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
        if stable:
            fresh = [t for t in dict.fromkeys(topics) if t not in self._stable]
            self._stable.update(fresh)
            self._unsent_stable += [(t, p) for t in fresh if t in self._queued for p in self._queued[t]]
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
            try:
                answers = (consumer or self._consumer).offsets_for_times(
                    [TopicPartition(t, p, timestamp) for t, p in asked], self.timeout
                )
            except KafkaException as exc:
                err = kafka_error(exc)
                if err is not None and err.code() in UNREACHABLE:
                    self._broken = err.str()
                if err is None or err.code() not in _LEADER_MOVING or not backoff.wait():
                    raise
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

    def _lookup_consumer(self, isolation: str) -> Consumer:
        return self._client(
            Consumer,
            {**self._settings, "group.id": LOOKUP_GROUP, "enable.auto.commit": False, "isolation.level": isolation},
        )

    def _submit(self, partitions: list[tuple[str, int]], timestamp: int, committed: bool = False) -> Future:
        """offsets_for_times of these partitions at `timestamp` in a lookup thread, read_committed if `committed`."""
        if self._consumer is None:
            self._consumer = self._lookup_consumer("read_uncommitted")
            self._lookup_pool = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="offctl-offsets")
        if committed and self._committed_consumer is None:
            self._committed_consumer = self._lookup_consumer("read_committed")
        return self._lookup_pool.submit(
            self._lookup, partitions, timestamp, self._committed_consumer if committed else None
        )

    def _send(self, partitions: list[tuple[str, int]]) -> None:
        for kind in (LOG_START, LOG_END):
            self._pending.append((kind, partitions, self._submit(partitions, *_LOOKUPS[kind])))

    def logs(self) -> Cluster:
        """Partitions, leaders and log offsets of every existing topic asked for, once all have answered."""
        if self._waiting:
            self._flush_waiting()
        if self._undescribed:
            self._flush_undescribed()
        if self._unsent:
            self._send(self._unsent)
            self._unsent = []
        if self._unsent_stable:
            self._pending.append(
                (LAST_STABLE, self._unsent_stable, self._submit(self._unsent_stable, *_LOOKUPS[LAST_STABLE]))
            )
            self._unsent_stable = []
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
        start, end, stable = offsets[LOG_START], offsets[LOG_END], offsets[LAST_STABLE]
        leaders = (self._leaders or {}) if self.targeted else self._metadata()
        return {
            topic: {
                p: PartitionLog(start.get((topic, p)), end.get((topic, p)), leader, stable.get((topic, p)))
                for p, leader in sorted(leaders[topic].items())
            }
            for topic in sorted(self._requested)
            if topic in leaders
        }

    def list_groups(self) -> list[str]:
        """Every consumer group the cluster knows (ListGroups), sorted; a broker that did not answer is noted (the
        groups it coordinates are not listed)."""
        listed = self._listing()
        self.notes += self._unlisted
        self._unlisted = []
        return sorted(listed)

    def _listing(self, *, isolate: bool = False) -> dict[str, str]:
        """group -> the type ListGroups gives it (v5, KIP-848: classic or consumer; unknown from an older broker),
        read once. confluent-kafka 2.16 lists no share group (Kafka 4.4 has them; its type has no name in the client),
        and describes one as a dead classic group: offctl cannot tell it yet. `isolate`: a refused listing is noted and
        read as no types. A broker that did not answer is kept in _unlisted, for list_groups to note: a group it
        coordinates is missing from the list, and a group named (group_states) takes its describe's type instead."""
        if self._group_types is None:
            try:
                future = self.admin.list_consumer_groups(request_timeout=self.timeout)
            except KafkaException as exc:
                raise self._unavailable("a list-groups request", exc) from None
            result = self._wait(future, "a list-groups request", isolate=isolate)
            if result is None:
                return {}
            self._unlisted = [
                f"listing consumer groups: {error.str() if hasattr(error, 'str') else error}"
                for error in result.errors or ()
            ]
            self._group_types = {g.group_id: _type_name(getattr(g, "type", None)) for g in result.valid}
        return self._group_types

    def group_commits(self, groups: Iterable[str]) -> list[KafkaCommit]:
        """Committed offsets with their metadata, byte for byte, for each group (groups.py: through kafka-python).
        A group the broker refuses (an invalid id, no authorization) is noted and the others are read; a coordinator
        that is loading or moving is waited out within the timeout, then StoreUnavailable."""
        import kafka.errors as errors

        commits = []
        for group in groups:
            if not _sendable_group(group):
                self.notes.append(
                    f"group {group!r}: not read: librdkafka cannot name a group id that is empty "
                    f"or holds a NUL character"
                )
                continue
            try:
                found = self._groups(lambda group=group: self.groups.offsets(group))
            except errors.BrokerResponseError as exc:
                self.notes.append(f"a request for the offsets of group {group} was refused: {_answered(exc)}")
                continue
            except errors.KafkaError as exc:
                raise StoreUnavailable(
                    f"Kafka at {self.bootstrap_servers}: a request for the offsets of group "
                    f"{group} failed: {error_words(exc)}"
                ) from None
            commits += [
                KafkaCommit(group, topic, partition, offset, metadata or None)
                for (topic, partition), (offset, metadata) in found.items()
                if offset >= 0
            ]
        commits.sort(key=lambda c: (c.group, c.topic, c.partition))
        return commits

    def _groups(self, call):
        """call()'s answer: a request of the group client (groups.py). When it gave up on a broker that never
        answered, and the broker refused confluent-kafka's login meanwhile, the refused login is the reason
        (kafka-python takes a refused SASL handshake as a broker it could not bootstrap from)."""
        try:
            return call()
        except StoreUnavailable:
            refused = self._login_refused()
            if refused is None:
                raise
            raise refused from None

    def _group_write(self, what: str, call):
        """call()'s answer: a write of the group client; WriteConflict when the broker refused it."""
        import kafka.errors as errors

        try:
            return self._groups(call)
        except errors.KafkaError as exc:
            raise WriteConflict(f"Kafka refused {what}: {_answered(exc)}") from None

    def group_states(self, groups: Iterable[str]) -> list[GroupState]:
        """State and members of each group; one the broker refuses is noted, one librdkafka cannot name
        (group_commits noted it) is left out. A coordinator that is loading or moving is asked again with Kafka's
        back-off (groups.Backoff) until the timeout, then StoreUnavailable: a group is never described as missing
        because its coordinator was not ready."""
        asked = [g for g in groups if _sendable_group(g)]
        if not asked:
            return []
        listed = self._listing(isolate=True)
        backoff, described = Backoff(self.timeout), {}
        while asked:
            waiting = {}
            for group, answer in self._describe_groups(asked).items():
                if isinstance(answer, KafkaError):
                    waiting[group] = answer
                elif answer is not None:
                    described[group] = answer
            asked = sorted(waiting)
            if asked and not backoff.wait():
                group, err = asked[0], waiting[asked[0]]
                raise StoreUnavailable(
                    coordinator_waited(
                        self.bootstrap_servers,
                        group,
                        COORDINATOR_ERRORS[err.name()],
                        None,
                        f"a request for the state of group {group}",
                        self.timeout,
                        err.name(),
                    )
                )
        states = []
        for group, desc in sorted(described.items()):
            # ListGroups' type is the broker's own word for the group; the describe's is which API librdkafka
            # got its answer from (ConsumerGroupDescribe or DescribeGroups), the fallback when the list has none.
            kind = listed.get(group, UNKNOWN_TYPE)
            if kind == UNKNOWN_TYPE:
                kind = _type_name(getattr(desc, "type", None))
            states.append(
                GroupState(
                    group,
                    desc.state.name.lower() if desc.state else "unknown",
                    len(desc.members),
                    kind,
                    desc.partition_assignor or None,
                )
            )
        return states

    def _describe_groups(self, groups: list[str]) -> dict:
        """group -> its description; its KafkaError when the coordinator was loading or moving (to ask again);
        None when the broker refused it otherwise (noted)."""
        try:
            futures = self.admin.describe_consumer_groups(groups, request_timeout=self.timeout)
        except KafkaException as exc:
            raise self._unavailable("a describe-groups request", exc) from None
        answers = {}
        for group, future in futures.items():
            what = f"a request for the state of group {group}"
            try:
                answers[group] = future.result(timeout=self.timeout + 5)
            except KafkaException as exc:
                err = kafka_error(exc)
                if err is not None and err.name() in COORDINATOR_ERRORS:
                    answers[group] = err
                    continue
                answers[group] = self._wait(_failed(exc), what, isolate=True)
            except TimeoutError:
                answers[group] = self._wait(_failed(TimeoutError()), what, isolate=True)
        return answers

    def read_topic_configs(self, topics: Iterable[str]) -> dict[str, TopicRetention]:
        """retention.ms, retention.bytes and cleanup.policy of each topic as the broker applies them (DescribeConfigs,
        one request). Apache Kafka reports every config of a topic, set on it or not, and the value is used whatever
        source the broker names: a topic without retention.ms reports the broker's log.retention.* or Kafka's 7 days,
        and Kafka 3.9 and 4.4 both call the first a default (DEFAULT_CONFIG; measured with confluent-kafka 2.16 and
        log.retention.hours 24 in server.properties). A topic the broker refuses (no DescribeConfigs permission) or
        does not know, or a broker that cannot answer, gives a TopicRetention that reports nothing and says why: the
        retention risk is then not estimated, the rest of the report stands. A setting not reported, or not a
        number, is None."""
        names = [t for t in dict.fromkeys(topics) if is_topic_name(t)]
        if not names:
            return {}
        try:
            futures = self.admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, t) for t in names], request_timeout=self.timeout
            )
        except (KafkaException, ValueError) as exc:
            why = f"the broker's topic configs were not read ({exc})"
            return {t: TopicRetention(t, why=why) for t in names}
        out: dict[str, TopicRetention] = {}
        for resource, future in futures.items():
            topic = resource.name
            try:
                entries = future.result(timeout=self.timeout + 5)
            except (KafkaException, TimeoutError) as exc:
                err = kafka_error(exc)
                out[topic] = TopicRetention(
                    topic,
                    why=f"the broker did not report topic {topic}'s configs ({err.str() if err else 'no answer'})",
                )
                continue
            out[topic] = TopicRetention(
                topic,
                _long(entries.get("retention.ms")),
                _long(entries.get("retention.bytes")),
                _value(entries.get("cleanup.policy")),
            )
        return out

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

    def read_messages(
        self, positions: Iterable[Position], *, count: int = 1, budget_s: float | None = None, committed: bool = False
    ) -> MessageRead:
        """Up to `count` messages from each (topic, partition, offset) on: the first at or after the offset,
        then the ones after it, up to the log end. Read-only: the consumer is assigned the partitions at those
        offsets and never subscribes, joins a group or commits (enable.auto.commit off, nothing stored).

        Partitions are read MESSAGE_PARTITIONS at a time; several positions of one partition are read in
        turns. Whatever is not read within `budget_s` seconds (default: the connection's timeout) is `unread`,
        with the reason, as is a position the broker refuses (an offset out of range, say).

        `committed`: read as a read_committed consumer does, up to the last stable offset, without the records of
        aborted transactions (default: every record up to the high watermark). Neither is handed the markers."""
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
                    turn[i : i + MESSAGE_PARTITIONS], count, deadline, budget, found, at_end, unread, committed
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
        committed: bool = False,
    ) -> None:
        position = {(t, p): (t, p, o) for t, p, o in chunk}  # one position per partition within a chunk
        pending = set(position)
        last_error = ""
        if time.monotonic() < deadline:
            consumer = self._client(
                Consumer,
                {
                    **self._settings,
                    "group.id": LOOKUP_GROUP,
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "auto.offset.reset": "error",
                    "enable.partition.eof": True,
                    "isolation.level": "read_committed" if committed else "read_uncommitted",
                    "fetch.wait.max.ms": 100,
                    "queued.min.messages": count,
                    # A partition whose queue holds `count` messages backs off its fetches, and when every fetched one
                    # has, the broker's fetcher sleeps that long before it asks for the others: librdkafka's default
                    # of 1000 ms stalled the first read of 1,000 partitions for 1-2 s (librdkafka >= 2.4).
                    "fetch.queue.backoff.ms": 50,
                },
            )

            def done(tp: tuple[str, int]) -> None:
                pending.discard(tp)
                consumer.pause([TopicPartition(*tp)])

            try:
                consumer.assign([TopicPartition(t, p, o) for t, p, o in chunk])
                while pending and (left := deadline - time.monotonic()) > 0:
                    # consume() returns when it has num_messages or at its timeout. Each pending partition gives
                    # at least one event (a message, its end, an error), so asking for no more than that many
                    # never waits out the timeout for events that will not come (it did: 0.5 s a call).
                    for msg in consumer.consume(num_messages=len(pending), timeout=min(left, 0.5)):
                        tp = (msg.topic(), msg.partition())
                        err = msg.error()
                        if tp not in pending:
                            if err is not None and msg.topic() is None:
                                last_error = err.str()  # the client's own trouble (the broker is down, say)
                            continue
                        if err is not None:
                            if err.code() == KafkaError._PARTITION_EOF:
                                at_end.add(position[tp])
                            else:
                                unread[position[tp]] = f"the broker refused the read ({err.str()})"
                            done(tp)
                            continue
                        if msg.offset() < position[tp][2]:
                            continue
                        messages = found.setdefault(position[tp], [])
                        messages.append(_log_message(msg))
                        if len(messages) >= count:
                            done(tp)
            except KafkaException as exc:
                raise self._unavailable("a read of messages", exc) from None
            finally:
                try:
                    consumer.close()
                except (KafkaException, RuntimeError):
                    pass
        why = f"not read within the time budget of {budget:g}s" + (f" ({last_error})" if last_error else "")
        unread.update({position[tp]: why for tp in pending})  # a position with some messages read says why not all

    def read_broker_config(self, names: Iterable[str]) -> tuple[dict[str, str], str]:
        """The broker settings `names` as one broker reports them (DescribeConfigs of a BROKER resource: the
        first broker DescribeCluster names), and why the others are not reported ("" when all are).

        Apache Kafka reports every broker setting, defaults included (offsets.retention.minutes 10080 where
        server.properties does not set it): the value it applies, used whatever source it names. Never fails: a
        broker that refuses (no DescribeConfigs permission on the cluster: CLUSTER_AUTHORIZATION_FAILED), lacks
        DescribeConfigs (before Kafka 0.11) or the setting, or does not answer in time leaves the setting
        unreported, with the reason, and the caller says what it assumes."""
        names = list(names)
        what = "a describe-configs request"
        try:
            cluster = self.admin.describe_cluster(request_timeout=self.timeout).result(timeout=self.timeout + 5)
            nodes = sorted(cluster.nodes or (), key=lambda n: n.id)
            if not nodes:
                return {}, "the broker named no broker to describe"
            resource = ConfigResource(ResourceType.BROKER, str(nodes[0].id))
            futures = self.admin.describe_configs([resource], request_timeout=self.timeout)
            entries = next(iter(futures.values())).result(timeout=self.timeout + 5)
        except TimeoutError:
            return {}, f"{what} was not answered within {self.timeout:g}s"
        except (KafkaException, ValueError, TypeError, AttributeError) as exc:
            err = kafka_error(exc)
            return {}, f"{what} failed: {(err.str() if err else str(exc) or type(exc).__name__).strip()}"
        found = {n: entries[n].value for n in names if n in entries and entries[n].value is not None}
        missing = [n for n in names if n not in found]
        return found, (f"broker {nodes[0].id} does not report {', '.join(missing)}" if missing else "")

    def commit(self, group: str, offsets: Iterable[tuple[str, int, int, str | None]]) -> None:
        """Commit (topic, partition, offset, metadata) for a group in one request.

        Raises WriteConflict when the broker refuses (for instance a group with active members) or
        refuses some partitions, naming them; StoreUnavailable when it cannot be reached; UsageError, sending
        nothing, for a group id librdkafka cannot name (the commit would land in another group).
        """
        if not _sendable_group(group):
            raise UsageError(
                f"nothing was written: librdkafka cannot name group {group!r} (it is empty or holds a NUL character)"
            )
        what = f"a commit to group {group}"
        refused = self._group_write(what, lambda: self.groups.commit(group, offsets))
        if refused:
            shown = [f"{t}/{p} ({KafkaError(code).str()})" for (t, p), code in sorted(refused.items())]
            raise WriteConflict(
                f"Kafka refused part of {what}: {', '.join(shown[:10])}"
                + (f" and {len(shown) - 10} more" if len(shown) > 10 else "")
            )

    def delete_group(self, group: str) -> None:
        """Delete the group and with it all its commits (DeleteGroups, KIP-229, Kafka 1.1.0). The broker deletes
        only a group without members (NON_EMPTY_GROUP otherwise) and answers GROUP_ID_NOT_FOUND for none.

        Raises WriteConflict when the broker refuses or does not answer, StoreUnavailable when it cannot be
        reached; UsageError, sending nothing, for a group id librdkafka cannot name."""
        if not _sendable_group(group):
            raise UsageError(
                f"nothing was written: librdkafka cannot name group {group!r} (it is empty or holds a NUL character)"
            )
        what = f"the deletion of group {group}"
        answer = self._group_write(what, lambda: self.groups.delete(group))
        if answer:
            raise WriteConflict(f"Kafka refused {what}: {KafkaError(answer).str()}")


def _answered(exc: BaseException) -> str:
    """What kafka-python raised for a group's request, in librdkafka's words where it is a broker's answer ("Broker:
    Group authorization failed"), so that it reads as the rest of offctl's messages."""
    code = getattr(exc, "errno", None)
    return KafkaError(code).str() if isinstance(code, int) and code > 0 else error_words(exc)


def error_reason(err: KafkaError) -> str:
    """librdkafka's words for an error, with its name where the words say nothing (a refused ConsumerGroupDescribe
    comes back as "ConsumerGroupDescribe:")."""
    text = err.str().strip()
    return text if text and not text.endswith(":") else f"{text} {err.name()}".strip()


def _failed(exc: BaseException) -> Future:
    """A future that raises `exc`, for _wait to judge as it judges a request's own."""
    future: Future = Future()
    future.set_exception(exc)
    return future


def _type_name(kind) -> str:
    """classic, consumer, share or unknown, from a ConsumerGroupType (None: the client has no such field)."""
    name = getattr(kind, "name", None)
    return name.lower() if name and name.lower() in GROUP_TYPES else UNKNOWN_TYPE


def _value(entry) -> str | None:
    return None if entry is None or entry.value is None else str(entry.value)


def _long(entry) -> int | None:
    """A config entry's value as a Java long; None when absent or not a number (then it is not used)."""
    text = _value(entry)
    if text is None or not re.fullmatch(r"-?\d{1,19}", text.strip()):
        return None
    return int(text)


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
