"""The Kafka connection every read of KafkaStore shares: the clients' settings, the admin client, the group client
(groups.py), the notes of a partial read, and librdkafka's errors in offctl's words.

KafkaStore (kafka.py) is this connection with its reads, one module each: log offsets (kafka.py), messages
(kafka_messages.py), group states and commits (kafka_groups.py), topic and broker configs (kafka_configs.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from offctl.adapters.groups import GroupClient
from offctl.errors import StoreUnavailable, UsageError

_log = logging.getLogger("offctl.adapters.kafka")
_log.addHandler(logging.NullHandler())
_log.propagate = False  # librdkafka's connection chatter must not reach stderr

LOOKUP_GROUP = "offctl-log-offsets"  # required by confluent-kafka's Consumer; never joined nor committed to
UNREACHABLE = {
    KafkaError._TRANSPORT,
    KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError._MSG_TIMED_OUT,
}


def kafka_error(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


def error_reason(err: KafkaError) -> str:
    """librdkafka's words for an error, with its name where the words say nothing (a refused ConsumerGroupDescribe
    comes back as "ConsumerGroupDescribe:")."""
    text = err.str().strip()
    return text if text and not text.endswith(":") else f"{text} {err.name()}".strip()


class KafkaClient:
    def __init__(
        self, bootstrap_servers: str, *, config: Mapping[str, str] | None = None, timeout: float = 10.0
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
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
        self._config = dict(config or {})  # the connection's own settings, for another group client (kafka_groups)
        self.admin = self._client(AdminClient, settings)
        self.groups = GroupClient(bootstrap_servers, config or {}, timeout)  # offsets, commits, deletion (groups.py)
        self.notes: list[str] = []  # partial read failures, reported with exit 3

    @staticmethod
    def _client(kind, settings: Mapping):
        try:
            return kind(settings)
        except (KafkaException, ValueError, TypeError) as exc:
            # librdkafka names the bad property, never its value; keep it that way.
            err = kafka_error(exc)
            raise UsageError(f"Kafka client settings: {(err.str() if err else str(exc)).strip()}") from None

    def close(self) -> None:
        """Close the group client (the admin client needs no closing)."""
        self.groups.close()

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
