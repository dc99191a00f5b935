"""A group's committed offsets, its commits and its deletion, through kafka-python (OffsetFetch, OffsetCommit as
Kafka's AlterConsumerGroupOffsets sends it, DeleteGroups).

The rest of the Kafka adapter (KafkaStore, kafka.py) uses confluent-kafka; these calls do not, for three defects of
confluent-kafka 2.16.1 on librdkafka 2.16 (docs/storm.md, "The group coordinator's client"):
- an admin ListConsumerGroupOffsets answered NOT_COORDINATOR, as a group's offsets are while its coordinator moves
  (a broker restart, a rolling upgrade, a new broker's first seconds), calls rd_kafka_cgrp_op on the admin client's
  NULL consumer group: the process dies by SIGSEGV (librdkafka issue 5040, open);
- the binding reads a commit's metadata as a C string (strdup): metadata a Java client wrote, with no NUL after it
  (every Storm spout's), comes back with whatever bytes follow it in memory (librdkafka issue 4649, open);
- it writes strlen + 1 bytes of metadata (py_to_c_parts), so every commit it makes ends with a NUL byte that Storm's
  spout reads back.
kafka-python is pure Python: it reads a string's length from the response and that many bytes, writes exactly the
UTF-8 bytes of the text, and nothing in it can end the process. It speaks Kafka 0.8 to 4.x, choosing each request's
version from the broker's ApiVersions answer.

A group's offsets are asked with RequireStable (OffsetFetch v7+, as Kafka's Java admin client asks them with
requireStable(true)). Without it Kafka 4's coordinator answers from a read at the last committed offset of
__consumer_offsets (GroupCoordinatorService.fetchAllOffsets, apache/kafka 4.x: "Otherwise, we use a read
operation"), and just after a coordinator moved, that offset can be behind the group's commits: a 3-node cluster
answered one read of ~100 made around a move with no commits at all. With it the coordinator reads all of them and
answers once they are committed; an older coordinator answers UNSTABLE_OFFSET_COMMIT while a transaction's offsets
are pending, which is waited out as below.

Coordinator errors are waited out within the timeout, as Kafka's Java admin client does (a retriable error is tried
again after retry.backoff.ms, 100 ms, doubling up to retry.backoff.max.ms, 1 s, with 20% jitter: KIP-580):
COORDINATOR_LOAD_IN_PROGRESS (the coordinator is loading the group's offsets after it moved), NOT_COORDINATOR and
COORDINATOR_NOT_AVAILABLE (it is moving), and a lost connection to it. After NOT_COORDINATOR the next try goes
through a new client, which finds the coordinator again. A group is never reported empty or missing because its
coordinator was not ready: when the timeout passes, StoreUnavailable (exit 3) says which group, that its coordinator
is loading or moving, and where.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from offctl.errors import StoreUnavailable, UsageError, WriteConflict

_log = logging.getLogger("kafka")  # kafka-python's loggers: their warnings must not reach stderr
_log.addHandler(logging.NullHandler())
_log.propagate = False

BACKOFF_S, BACKOFF_MAX_S, JITTER = 0.1, 1.0, 0.2  # Kafka's retry.backoff.ms, retry.backoff.max.ms (KIP-580)
LOADING, MOVING, UNREACHABLE = "loading", "moving", "not answering"
COORDINATOR_ERRORS = {
    "COORDINATOR_LOAD_IN_PROGRESS": LOADING,
    "NOT_COORDINATOR": MOVING,
    "COORDINATOR_NOT_AVAILABLE": MOVING,
}

# librdkafka's settings (--kafka-config) as kafka-python's: the connection and login. The others tune librdkafka
# alone (socket.*, debug, ...) and mean nothing to these calls.
_SETTINGS = {
    "client.id": "client_id",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
}
_SSL_SETTINGS = frozenset(
    {
        "ssl.ca.location",
        "ssl.ca.pem",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.key.password",
        "ssl.crl.location",
        "ssl.endpoint.identification.algorithm",
        "enable.ssl.certificate.verification",
    }
)

T = TypeVar("T")


class Backoff:
    """Kafka's retry back-off within a timeout: wait() sleeps retry.backoff.ms, doubling to retry.backoff.max.ms,
    each with 20% jitter (KIP-580), and says False, without sleeping, once the timeout has passed."""

    def __init__(self, timeout: float) -> None:
        self.deadline = time.monotonic() + timeout
        self._delay = BACKOFF_S

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def wait(self) -> bool:
        remaining = self.remaining()
        if remaining <= 0:
            return False
        time.sleep(min(remaining, self._delay * random.uniform(1 - JITTER, 1 + JITTER)))
        self._delay = min(self._delay * 2, BACKOFF_MAX_S)
        return True


def client_settings(config: Mapping[str, str]) -> dict:
    """kafka-python's settings for librdkafka's `config`; UsageError naming a security setting it cannot take
    (never its value)."""
    out: dict = {}
    for key, value in config.items():
        if key in _SETTINGS:
            out[_SETTINGS[key]] = value.upper() if key.startswith(("security.", "sasl.mech")) else value
        elif (
            key.startswith(("ssl.", "sasl.")) or key == "enable.ssl.certificate.verification"
        ) and key not in _SSL_SETTINGS:
            raise UsageError(
                f"Kafka client settings: {key} is not supported for the group coordinator's requests "
                f"(kafka-python); give the login as sasl.username/sasl.password or PEM files "
                f"(ssl.ca.location, ssl.certificate.location, ssl.key.location)"
            )
    if out.get("sasl_mechanism") == "OAUTHBEARER":
        raise UsageError(
            "Kafka client settings: sasl.mechanism OAUTHBEARER is not supported for the group "
            "coordinator's requests (kafka-python needs a token provider offctl does not have)"
        )
    if str(out.get("security_protocol", "")).endswith("SSL"):
        out["ssl_context"] = _ssl_context(config)
    return out


def _ssl_context(config: Mapping[str, str]) -> ssl.SSLContext:
    """The TLS context librdkafka's ssl.* settings describe (its defaults: verify the certificate and the host)."""
    ca = config.get("ssl.ca.location")
    if ca == "probe":  # librdkafka: the system's CA certificates, which a default context loads
        ca = None
    try:
        context = ssl.create_default_context(
            cafile=None if ca is None or os.path.isdir(ca) else ca,
            capath=ca if ca is not None and os.path.isdir(ca) else None,
            cadata=config.get("ssl.ca.pem"),
        )
        if config.get("ssl.certificate.location"):
            context.load_cert_chain(
                config["ssl.certificate.location"], config.get("ssl.key.location"), config.get("ssl.key.password")
            )
        if config.get("ssl.crl.location"):
            context.load_verify_locations(config["ssl.crl.location"])
            context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise UsageError(f"Kafka client settings: the TLS files could not be loaded ({type(exc).__name__})") from None
    if config.get("ssl.endpoint.identification.algorithm", "https").lower() == "none":
        context.check_hostname = False
    if config.get("enable.ssl.certificate.verification", "true").lower() == "false":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def error_name(exc: BaseException) -> str:
    """A kafka-python error as Kafka names it (GROUP_AUTHORIZATION_FAILED), or its class's name."""
    return getattr(exc, "message", None) or type(exc).__name__


def coordinator_waited(
    bootstrap: str, group: str, state: str, where: str | None, what: str, timeout: float, error: str
) -> str:
    """Why a request was not answered: the group's coordinator was loading or moving for the whole timeout."""
    return (
        f"Kafka at {bootstrap}: the group coordinator of group {group} is {state}"
        f"{f' ({where})' if where else ''}: {what} was not answered within --timeout {timeout:g}s ({error}); "
        f"try again once it has {'loaded' if state == LOADING else 'moved'}"
    )


def error_words(exc: BaseException) -> str:
    """A kafka-python error that is not a broker's answer (a lost connection, a time-out): its class and text. A
    broker's answer has its Kafka error code (errno), which kafka_groups.py words as librdkafka does."""
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


class GroupClient:
    """One kafka-python admin client for the group coordinator's requests, made when first needed."""

    def __init__(self, bootstrap_servers: str, config: Mapping[str, str], timeout: float) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.timeout = timeout
        self._settings = client_settings(config)
        self._admin = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            admin, self._admin = self._admin, None
        if admin is not None:
            _close(admin)

    def _client(self, remaining: float):
        """The admin client; a new one after close() or a coordinator that moved."""
        with self._lock:
            if self._admin is None:
                ms = max(1000, int(remaining * 1000))
                self._admin = _stable_admin_client()(
                    bootstrap_servers=self.bootstrap_servers.split(","),
                    request_timeout_ms=max(1000, int(self.timeout * 1000)),
                    bootstrap_timeout_ms=ms,
                    **self._settings,
                )
            return self._admin

    def call(self, what: str, group: str, send: Callable[[object], T], *, write: bool = False) -> T:
        """send(admin)'s answer, trying again on a coordinator error or a lost connection until the timeout.
        A broker's refusal of the request itself (kafka.errors.BrokerResponseError) is raised as it came."""
        import kafka.errors as errors

        backoff = Backoff(self.timeout)
        state, last, where = UNREACHABLE, None, None
        sent_unanswered = False  # a write was sent and its answer lost: it may have been applied
        while True:
            try:
                return send(self._client(backoff.remaining()))
            except errors.SaslAuthenticationFailedError as exc:
                raise StoreUnavailable(
                    f"Kafka at {self.bootstrap_servers} refused the credentials "
                    f"(Authentication failed: {error_name(exc)}): check sasl.username and "
                    f"sasl.password (the context's kafka-config, --kafka-config or "
                    f"--kafka-config-file)"
                ) from None
            except errors.KafkaError as exc:
                if not (exc.retriable or error_name(exc) in COORDINATOR_ERRORS):
                    raise
                where = self.coordinator(group) or where
                lost = isinstance(
                    exc, (errors.KafkaConnectionError, errors.KafkaTimeoutError, errors.RequestTimedOutError)
                )
                # a coordinator found and then lost is moving (its broker went: a restart, a crash)
                state = COORDINATOR_ERRORS.get(error_name(exc), MOVING if lost and where else UNREACHABLE)
                last = exc
                sent_unanswered = sent_unanswered or (write and lost)
                if state == MOVING or lost:
                    self.close()  # the next try finds the coordinator again
            if not backoff.wait():
                raise self._gave_up(what, group, state, where, last, write, sent_unanswered)

    def coordinator(self, group: str) -> str | None:
        """host:port (node N) of the group's coordinator as the client last found it; None before it has."""
        admin = self._admin
        try:
            cluster = admin._manager.cluster  # kafka-python keeps the coordinators it found there
            node = cluster.get_coordinator(group)
            broker = cluster.broker_metadata(node) if node is not None else None
        except AttributeError:
            return None
        return None if broker is None else f"{broker.host}:{broker.port} (node {node})"

    def _gave_up(self, what: str, group: str, state: str, where: str | None, exc, write: bool, maybe_applied: bool):
        """StoreUnavailable (exit 3): nothing was written; WriteConflict (exit 5) when a try of a write was sent and
        its answer lost, so that it may have been applied."""
        if state == UNREACHABLE:
            text = (
                f"Kafka at {self.bootstrap_servers} did not answer {what} within {self.timeout:g}s ({error_words(exc)})"
            )
        else:
            text = coordinator_waited(self.bootstrap_servers, group, state, where, what, self.timeout, error_name(exc))
        if maybe_applied:
            return WriteConflict(text + "; it may or may not have been applied")
        return StoreUnavailable(text + ("; nothing was written" if write else ""))

    # --- the requests --------------------------------------------------------------------------------------

    def offsets(self, group: str) -> dict[tuple[str, int], tuple[int, str | None]]:
        """(topic, partition) -> (offset, metadata) of every commit of the group; empty for a group without any."""
        found = self.call(
            f"a request for the offsets of group {group}", group, lambda admin: admin.list_group_offsets({group: None})
        )
        return {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in found.get(group, {}).items()}

    def commit(self, group: str, offsets: Iterable[tuple[str, int, int, str | None]]) -> dict[tuple[str, int], int]:
        """Commit (topic, partition, offset, metadata) in one request; (topic, partition) -> the Kafka error code the
        broker answered for each partition it refused."""
        import kafka.errors as errors
        from kafka.structs import OffsetAndMetadata, TopicPartition

        asked = {TopicPartition(t, p): OffsetAndMetadata(o, m, None) for t, p, o, m in offsets}

        def send(admin):
            answered = admin.alter_group_offsets(group, asked)
            # The coordinator answers its errors per partition: one that is loading or moving refuses them all,
            # and nothing was written, so the whole commit is tried again.
            waited = [err for err in answered.values() if getattr(err, "message", None) in COORDINATOR_ERRORS]
            if waited:
                raise waited[0]()
            return answered

        answered = self.call(f"a commit to group {group}", group, send, write=True)
        return {(tp.topic, tp.partition): err.errno for tp, err in answered.items() if err is not errors.NoError}

    def delete(self, group: str) -> int:
        """Delete the group: 0, or the Kafka error code the broker answered (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP)."""
        import kafka.errors as errors

        def send(admin):
            answer = admin.delete_groups([group]).get(group, "OK")
            if answer == "OK":
                return 0
            err = getattr(errors, answer, errors.UnknownError)  # kafka-python names the error's class
            if getattr(err, "message", None) in COORDINATOR_ERRORS:
                raise err()
            return err.errno

        return self.call(f"the deletion of group {group}", group, send, write=True)

    def api_versions(self) -> dict[str, dict[str, tuple[int, int]]]:
        """Every broker's ApiVersions answer: "node N (host:port)" -> API name -> (oldest, newest) version it accepts.
        kafka-python's admin client asks each broker ApiVersions when it connects (KIP-35), and keeps the answer."""
        from kafka.protocol.api_key import ApiKey

        def send(admin):
            answers = {}
            for broker in sorted(admin.describe_cluster()["brokers"], key=lambda b: b["broker_id"]):
                node = broker["broker_id"]
                versions = admin.get_broker_version_data(node).api_versions
                label = f"node {node} ({broker['host']}:{broker['port']})"
                answers[label] = {_api_name(ApiKey, k): (low, high) for k, (low, high) in sorted(versions.items())}
            return answers

        return self.call("a request for the brokers' API versions", "", send)


def _api_name(keys, key: int) -> str:
    """Kafka's name of an API key (kafka-python's ApiKey), or its number where kafka-python has none."""
    try:
        return keys(key).name
    except ValueError:
        return f"ApiKey{key}"


@functools.cache
def _stable_admin_client():
    """kafka-python's KafkaAdminClient, asking a group's offsets with RequireStable (the module's docstring says why);
    list_group_offsets does not take it, so the requests it builds are given it."""
    from kafka.admin import KafkaAdminClient

    class StableOffsetsAdminClient(KafkaAdminClient):
        def _list_group_offsets_requests(self, group_specs):
            for group_id, request in super()._list_group_offsets_requests(group_specs):
                request.require_stable = True  # OffsetFetch v7+; an older version does not carry it
                yield group_id, request

    return StableOffsetsAdminClient


def _close(admin) -> None:
    try:
        admin.close()
    except Exception:  # noqa: BLE001 - closing must never mask what went wrong before
        pass
