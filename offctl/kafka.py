"""Kafka adapter (confluent-kafka AdminClient): topic metadata, log offsets, group commits and state.

Log start and end offsets for all partitions go out as one batched ListOffsets call each (librdkafka
splits them per leader); group offsets go out for all groups at once and are awaited together.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from offctl.errors import StoreUnavailable, UsageError
from offctl.model import Cluster, GroupState, KafkaCommit, PartitionLog

_log = logging.getLogger("offctl.kafka")
_log.addHandler(logging.NullHandler())
_log.propagate = False  # librdkafka's connection chatter must not reach stderr

_UNREACHABLE = {KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN,
                KafkaError._RESOLVE, KafkaError._MSG_TIMED_OUT}


def _kafka_error(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


class KafkaStore:
    def __init__(self, bootstrap_servers: str, *, config: Mapping[str, str] | None = None,
                 timeout: float = 10.0) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.timeout = timeout
        settings = {
            **(config or {}),
            "bootstrap.servers": bootstrap_servers,
            "socket.connection.setup.timeout.ms": int(timeout * 1000),
            "logger": _log,
        }
        try:
            self.admin = AdminClient(settings)
        except (KafkaException, ValueError, TypeError) as exc:
            # librdkafka names the bad property, never its value; keep it that way.
            raise UsageError(f"Kafka client settings: {exc}") from None
        self.notes: list[str] = []  # partial read failures, reported with exit 3

    def _unavailable(self, what: str, exc: BaseException) -> StoreUnavailable:
        err = _kafka_error(exc)
        if err is not None and err.code() in _UNREACHABLE:
            return StoreUnavailable(f"Kafka at {self.bootstrap_servers} did not answer {what} within "
                                    f"{self.timeout:g}s ({err.str()})")
        detail = err.str() if err is not None else (str(exc) or type(exc).__name__)
        return StoreUnavailable(f"Kafka at {self.bootstrap_servers}: {what} failed: {detail}")

    def _wait(self, future, what: str):
        try:
            return future.result(timeout=self.timeout + 5)
        except TimeoutError:
            raise StoreUnavailable(f"Kafka at {self.bootstrap_servers} did not answer {what} within "
                                   f"{self.timeout:g}s") from None
        except KafkaException as exc:
            raise self._unavailable(what, exc) from None

    def cluster(self, topics: Iterable[str]) -> Cluster:
        """Partitions, leaders and log start/end offsets of the named topics that exist."""
        try:
            md = self.admin.list_topics(timeout=self.timeout)
        except KafkaException as exc:
            raise self._unavailable("a metadata request", exc) from None
        brokers = {b.id: f"{b.host}:{b.port}" for b in md.brokers.values()}
        leaders: dict[str, dict[int, str | None]] = {}
        for topic in sorted(set(topics)):
            tmd = md.topics.get(topic)
            if tmd is None or (tmd.error is not None and not tmd.partitions):
                continue  # does not exist: UNKNOWN_TOPIC is the core's call
            leaders[topic] = {p: brokers.get(pmd.leader) for p, pmd in tmd.partitions.items()}
        tps = [TopicPartition(t, p) for t, parts in leaders.items() for p in parts]
        start = self._list_offsets(tps, OffsetSpec.earliest(), "log start")
        end = self._list_offsets(tps, OffsetSpec.latest(), "log end")
        return {
            topic: {p: PartitionLog(start.get((topic, p)), end.get((topic, p)), leader)
                    for p, leader in sorted(parts.items())}
            for topic, parts in leaders.items()
        }

    def _list_offsets(self, tps: list[TopicPartition], spec: OffsetSpec, what: str) -> dict[tuple[str, int], int]:
        if not tps:
            return {}
        try:
            futures = self.admin.list_offsets({tp: spec for tp in tps}, request_timeout=self.timeout)
        except KafkaException as exc:
            raise self._unavailable(f"a {what} offsets request", exc) from None
        offsets: dict[tuple[str, int], int] = {}
        failed: dict[str, list[str]] = {}
        for tp, future in futures.items():
            try:
                offsets[(tp.topic, tp.partition)] = future.result(timeout=self.timeout + 5).offset
            except (KafkaException, TimeoutError) as exc:
                err = _kafka_error(exc)
                failed.setdefault(err.str() if err else "no answer", []).append(f"{tp.topic}/{tp.partition}")
        for reason, where in failed.items():
            shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
            self.notes.append(f"could not read the {what} offset of {shown}: {reason}")
        return offsets

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
            result = self._wait(future, f"a request for the offsets of group {group}")
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
