"""Kafka adapter (confluent-kafka AdminClient): topic metadata, log offsets, group commits and state.

Log start and end offsets go out in ListOffsets calls of REQUEST_PARTITIONS partitions as topics are
asked for, all in flight at once, and are collected by logs(); group offsets go out for all groups at
once and are awaited together.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from offctl.errors import StoreUnavailable, UsageError, WriteConflict
from offctl.model import Cluster, GroupState, KafkaCommit, PartitionLog

_log = logging.getLogger("offctl.kafka")
_log.addHandler(logging.NullHandler())
_log.propagate = False  # librdkafka's connection chatter must not reach stderr

# Partitions per ListOffsets call. The client's cost per call grows with the square of its partitions
# (measured with confluent-kafka 2.16: 1,000 partitions 15 ms, 10,000 partitions 600 ms), so many
# calls of a few hundred partitions, all in flight at once, beat one large call.
REQUEST_PARTITIONS = 500
DESCRIBE_TOPICS = 200  # topics per describe-topics call of a targeted store

_UNREACHABLE = {KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN,
                KafkaError._RESOLVE, KafkaError._MSG_TIMED_OUT}


def _kafka_error(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


class KafkaStore:
    def __init__(self, bootstrap_servers: str, *, config: Mapping[str, str] | None = None,
                 timeout: float = 10.0, targeted: bool = False) -> None:
        """`targeted`: describe only the topics asked for (an audit task), instead of reading the whole
        cluster's metadata once (inspect, which overlaps that read with ZooKeeper's)."""
        self.bootstrap_servers = bootstrap_servers
        self.targeted = targeted
        self.timeout = timeout
        settings = {
            **(config or {}),
            "bootstrap.servers": bootstrap_servers,
            "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),  # librdkafka's minimum
            "logger": _log,
        }
        try:
            self.admin = AdminClient(settings)
        except (KafkaException, ValueError, TypeError) as exc:
            # librdkafka names the bad property, never its value; keep it that way.
            err = _kafka_error(exc)
            raise UsageError(f"Kafka client settings: {(err.str() if err else str(exc)).strip()}") from None
        self.notes: list[str] = []  # partial read failures, reported with exit 3
        self._leaders: dict[str, dict[int, str | None]] | None = None
        self._metadata_future: Future | None = None
        self._requested: set[str] = set()
        self._undescribed: set[str] = set()
        self._unsent: list[TopicPartition] = []
        self._pending: list[tuple[str, dict]] = []

    def _unavailable(self, what: str, exc: BaseException) -> StoreUnavailable:
        err = _kafka_error(exc)
        if err is not None and err.code() in _UNREACHABLE:
            return StoreUnavailable(f"Kafka at {self.bootstrap_servers} did not answer {what} within "
                                    f"{self.timeout:g}s ({err.str()})")
        detail = err.str() if err is not None else (str(exc) or type(exc).__name__)
        return StoreUnavailable(f"Kafka at {self.bootstrap_servers}: {what} failed: {detail}")

    def _wait(self, future, what: str, *, isolate: bool = False):
        """The future's result. `isolate`: when the broker answered with a refusal of this one request (not a
        transport failure or time-out), note it (the read is partial) and return None instead of failing all."""
        try:
            return future.result(timeout=self.timeout + 5)
        except TimeoutError:
            raise StoreUnavailable(f"Kafka at {self.bootstrap_servers} did not answer {what} within "
                                   f"{self.timeout:g}s") from None
        except KafkaException as exc:
            err = _kafka_error(exc)
            if isolate and err is not None and err.code() not in _UNREACHABLE:
                self.notes.append(f"{what} was refused: {err.str()}")
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
                err = _kafka_error(exc)
                if err is not None and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                if err is None or err.code() in _UNREACHABLE:
                    raise self._unavailable(f"a describe request for topic {name}", exc) from None
                # One topic the broker refuses (an invalid name, no authorization) must not sink the others:
                # it is left out, so its records are UNKNOWN_TOPIC, and the read is partial.
                self.notes.append(f"topic {name!r}: the broker refused to describe it ({err.str()})")
                continue
            except TimeoutError:
                raise StoreUnavailable(f"Kafka at {self.bootstrap_servers} did not describe topic {name} "
                                       f"within {self.timeout:g}s") from None
            leaders[name] = {p.id: f"{p.leader.host}:{p.leader.port}" if p.leader else None
                             for p in desc.partitions}
        return leaders

    def _flush_undescribed(self) -> None:
        names, self._undescribed = sorted(self._undescribed), set()
        found = self._describe(names)
        self._leaders = {**(self._leaders or {}), **found}
        self._queue(found)

    def _queue(self, leaders: Mapping[str, Mapping[int, str | None]]) -> None:
        for topic, partitions in leaders.items():
            self._unsent += [TopicPartition(topic, p) for p in partitions]
        while len(self._unsent) >= REQUEST_PARTITIONS:
            self._send(self._unsent[:REQUEST_PARTITIONS])
            del self._unsent[:REQUEST_PARTITIONS]

    def request_logs(self, topics: Iterable[str]) -> None:
        """Ask for log start and end offsets of these topics' partitions; logs() collects the answers.

        Call it as topics turn up: requests go out once REQUEST_PARTITIONS partitions are waiting, so
        the broker answers while other reads go on. Topics that do not exist are left to the core
        (UNKNOWN_TOPIC).
        """
        if self.targeted:
            new = {t for t in topics if t and t not in self._requested}
            self._undescribed |= new
            self._requested |= new
            if len(self._undescribed) >= DESCRIBE_TOPICS:
                self._flush_undescribed()
            return
        leaders = self._metadata()
        new = {t: leaders[t] for t in topics if t in leaders and t not in self._requested}
        self._requested.update(new)
        self._queue(new)

    def _send(self, tps: list[TopicPartition]) -> None:
        for spec, what in ((OffsetSpec.earliest(), "log start"), (OffsetSpec.latest(), "log end")):
            try:
                futures = self.admin.list_offsets({tp: spec for tp in tps}, request_timeout=self.timeout)
            except KafkaException as exc:
                raise self._unavailable(f"a {what} offsets request", exc) from None
            self._pending.append((what, futures))

    def logs(self) -> Cluster:
        """Partitions, leaders and log offsets of every existing topic asked for, once all have answered."""
        if self._undescribed:
            self._flush_undescribed()
        if self._unsent:
            self._send(self._unsent)
            self._unsent = []
        offsets: dict[str, dict[tuple[str, int], int]] = {"log start": {}, "log end": {}}
        failed: dict[tuple[str, str], list[str]] = {}
        for what, futures in self._pending:
            for tp, future in futures.items():
                try:
                    offsets[what][(tp.topic, tp.partition)] = future.result(timeout=self.timeout + 5).offset
                except (KafkaException, TimeoutError) as exc:
                    err = _kafka_error(exc)
                    failed.setdefault((what, err.str() if err else "no answer"), []).append(
                        f"{tp.topic}/{tp.partition}")
        self._pending.clear()
        for (what, reason), where in failed.items():
            shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
            self.notes.append(f"could not read the {what} offset of {shown}: {reason}")
        start, end = offsets["log start"], offsets["log end"]
        leaders = (self._leaders or {}) if self.targeted else self._metadata()
        return {
            topic: {p: PartitionLog(start.get((topic, p)), end.get((topic, p)), leader)
                    for p, leader in sorted(leaders[topic].items())}
            for topic in sorted(self._requested) if topic in leaders
        }

    def list_groups(self) -> list[str]:
        """Every consumer group the cluster knows (ListGroups), sorted."""
        try:
            future = self.admin.list_consumer_groups(request_timeout=self.timeout)
        except KafkaException as exc:
            raise self._unavailable("a list-groups request", exc) from None
        result = self._wait(future, "a list-groups request")
        for error in result.errors or ():
            self.notes.append(f"listing consumer groups: {error.str() if hasattr(error, 'str') else error}")
        return sorted({g.group_id for g in result.valid})

    def group_commits(self, groups: Iterable[str]) -> list[KafkaCommit]:
        """Committed offsets with their metadata, for each group (one request per group, all in flight)."""
        futures = {}
        for group in groups:
            try:
                futures.update(self.admin.list_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout))
            except KafkaException as exc:
                raise self._unavailable(f"a request for the offsets of group {group}", exc) from None
        commits = []
        for group, future in futures.items():
            # A group the broker refuses (an invalid id, no authorization) is noted; the others are read.
            result = self._wait(future, f"a request for the offsets of group {group}", isolate=True)
            if result is None:
                continue
            for tp in result.topic_partitions:
                if tp.error is not None:
                    self.notes.append(f"group {group}: could not read {tp.topic}/{tp.partition}: {tp.error.str()}")
                elif tp.offset >= 0:  # -1001: no commit for this partition
                    commits.append(KafkaCommit(group, tp.topic, tp.partition, tp.offset, tp.metadata or None))
        commits.sort(key=lambda c: (c.group, c.topic, c.partition))
        return commits

    def group_states(self, groups: Iterable[str]) -> list[GroupState]:
        groups = list(groups)
        if not groups:
            return []
        try:
            futures = self.admin.describe_consumer_groups(groups, request_timeout=self.timeout)
        except KafkaException as exc:
            raise self._unavailable("a describe-groups request", exc) from None
        states = []
        for group, future in futures.items():
            desc = self._wait(future, f"a request for the state of group {group}")
            states.append(GroupState(group, desc.state.name.lower() if desc.state else "unknown",
                                     len(desc.members)))
        return states

    def offsets_for_times(self, partitions: Iterable[tuple[str, int]], at_ms: int) -> dict[tuple[str, int], int | None]:
        """The first offset whose timestamp is at or after `at_ms`, per partition; None where no message is
        that late (the caller then uses the log end, as kafka-consumer-groups does)."""
        tps = [TopicPartition(t, p) for t, p in partitions]
        found: dict[tuple[str, int], int | None] = {}
        for i in range(0, len(tps), REQUEST_PARTITIONS):
            try:
                futures = self.admin.list_offsets({tp: OffsetSpec.for_timestamp(at_ms)
                                                   for tp in tps[i:i + REQUEST_PARTITIONS]},
                                                  request_timeout=self.timeout)
            except KafkaException as exc:
                raise self._unavailable("an offsets-for-time request", exc) from None
            for tp, future in futures.items():
                offset = self._wait(future, f"an offsets-for-time request for {tp.topic}/{tp.partition}").offset
                found[(tp.topic, tp.partition)] = offset if offset >= 0 else None
        return found

    def commit(self, group: str, offsets: Iterable[tuple[str, int, int, str | None]]) -> None:
        """Commit (topic, partition, offset, metadata) for a group in one request.

        Raises WriteConflict when the broker refuses (for instance a group with active members) or
        refuses some partitions, naming them; StoreUnavailable when it cannot be reached.
        """
        tps = [TopicPartition(t, p, o, m) if m is not None else TopicPartition(t, p, o) for t, p, o, m in offsets]
        what = f"a commit to group {group}"
        try:
            futures = self.admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)],
                                                              request_timeout=self.timeout)
            result = futures[group].result(timeout=self.timeout + 5)
        except TimeoutError:
            raise WriteConflict(f"Kafka at {self.bootstrap_servers} did not answer {what} within "
                                f"{self.timeout:g}s; it may or may not have been applied") from None
        except KafkaException as exc:
            err = _kafka_error(exc)
            if err is not None and err.code() in _UNREACHABLE:
                raise self._unavailable(what, exc) from None
            raise WriteConflict(f"Kafka refused {what}: {err.str() if err else exc}") from None
        refused = [f"{tp.topic}/{tp.partition} ({tp.error.str()})" for tp in result.topic_partitions
                   if tp.error is not None]
        if refused:
            raise WriteConflict(f"Kafka refused part of {what}: {', '.join(refused[:10])}"
                                + (f" and {len(refused) - 10} more" if len(refused) > 10 else ""))
