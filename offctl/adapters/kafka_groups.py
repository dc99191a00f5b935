"""KafkaStore's reads and writes of consumer groups (kafka.py): the groups' list and states from confluent-kafka's
AdminClient; their commits read, written and deleted through kafka-python (groups.py says why).
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from confluent_kafka import KafkaError, KafkaException

from offctl.adapters.groups import COORDINATOR_ERRORS, Backoff, GroupClient, coordinator_waited, error_words
from offctl.adapters.kafka_client import KafkaClient, kafka_error
from offctl.core.records.model import GROUP_TYPES, UNKNOWN_TYPE, GroupState, KafkaCommit
from offctl.errors import StoreUnavailable, UsageError, WriteConflict


def _sendable_group(group: str) -> bool:
    """Whether librdkafka can name this group id: it takes C strings, so a NUL ends the id (another group's
    offsets would be read, or written), and confluent-kafka refuses an empty id (ValueError)."""
    return bool(group) and "\0" not in group


class KafkaGroups(KafkaClient):
    def __init__(self, bootstrap_servers: str, **client) -> None:
        """`client`: the connection's settings (KafkaClient)."""
        super().__init__(bootstrap_servers, **client)
        self._group_types: dict[str, str] | None = None  # ListGroups' answer, once asked
        self._unlisted: list[str] = []  # the brokers ListGroups did not hear from (_listing)
        self._api_versions: Future | None = None  # the brokers' API versions, once asked (prefetch_api_versions)

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

    def prefetch_api_versions(self) -> None:
        """Start asking the brokers their API versions (api_versions) in the background, so that kafka-python's
        start and the ask overlap what is read meanwhile; a group client of its own, so it never shares a
        connection with the group reads."""
        if self._api_versions is None:
            pool = ThreadPoolExecutor(1, thread_name_prefix="offctl-api-versions")
            self._api_versions = pool.submit(self._ask_api_versions)
            pool.shutdown(wait=False)  # the ask still runs; the thread ends with it

    def api_versions(self) -> tuple[dict[str, dict[str, tuple[int, int]]] | None, str]:
        """Each broker's API versions (groups.GroupClient.api_versions), or None and why not when a broker refused
        the request or did not answer: the verdicts that rest on it are not given, the read is not partial."""
        self.prefetch_api_versions()
        return self._api_versions.result()

    def _ask_api_versions(self) -> tuple[dict[str, dict[str, tuple[int, int]]] | None, str]:
        import kafka.errors as errors

        client = GroupClient(self.bootstrap_servers, self._config, self.timeout)
        try:
            return self._groups(client.api_versions), ""
        except errors.KafkaError as exc:
            return None, _answered(exc)
        except StoreUnavailable as exc:
            return None, str(exc)
        finally:
            client.close()

    def _wait_api_versions(self) -> None:
        """Let a background ask end before the connection closes (it is bounded by the timeout)."""
        if self._api_versions is not None:
            wait([self._api_versions], timeout=self.timeout + 5)

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


def _failed(exc: BaseException) -> Future:
    """A future that raises `exc`, for _wait to judge as it judges a request's own."""
    future: Future = Future()
    future.set_exception(exc)
    return future


def _type_name(kind) -> str:
    """classic, consumer, share or unknown, from a ConsumerGroupType (None: the client has no such field)."""
    name = getattr(kind, "name", None)
    return name.lower() if name and name.lower() in GROUP_TYPES else UNKNOWN_TYPE
