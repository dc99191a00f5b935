"""offctl/adapters/groups.py on plain data: librdkafka's settings as kafka-python's, Kafka's back-off, and what the
group coordinator's errors become (waited out, then one line naming the group, the state and the timeout). The
errors are kafka-python's own classes, raised by a stand-in for the request: a real broker answers
COORDINATOR_LOAD_IN_PROGRESS only in its first seconds, NOT_COORDINATOR only while a coordinator moves, which
tests/faults/test_coordinator_e2e.py makes happen; here each answer is given in the order a case needs."""

from __future__ import annotations

import ssl

import kafka.errors as errors
import pytest

from offctl.adapters import groups
from offctl.adapters.groups import Backoff, GroupClient, client_settings
from offctl.errors import StoreUnavailable, UsageError, WriteConflict

SECRET = "pw-s3cret-value"


@pytest.mark.parametrize(
    "config, expected",
    [
        ({}, {}),
        ({"client.id": "ops"}, {"client_id": "ops"}),
        (
            {
                "security.protocol": "sasl_plaintext",
                "sasl.mechanisms": "plain",
                "sasl.username": "storm",
                "sasl.password": SECRET,
            },
            {
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "PLAIN",
                "sasl_plain_username": "storm",
                "sasl_plain_password": SECRET,
            },
        ),
        ({"sasl.mechanism": "SCRAM-SHA-512"}, {"sasl_mechanism": "SCRAM-SHA-512"}),
        ({"socket.keepalive.enable": "true", "debug": "broker"}, {}),  # librdkafka's own tuning: nothing to these calls
    ],
    ids=["none", "client-id", "sasl-plain", "scram", "librdkafka-only"],
)
def test_librdkafka_settings_become_kafka_pythons(config, expected):
    assert client_settings(config) == expected


def test_tls_settings_make_a_context_that_verifies_as_librdkafka_does():
    made = client_settings({"security.protocol": "SSL"})
    context = made.pop("ssl_context")
    assert made == {"security_protocol": "SSL"}
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname  # librdkafka's defaults
    loose = client_settings({"security.protocol": "SASL_SSL", "ssl.endpoint.identification.algorithm": "none"})
    assert not loose["ssl_context"].check_hostname and loose["ssl_context"].verify_mode == ssl.CERT_REQUIRED
    off = client_settings({"security.protocol": "SSL", "enable.ssl.certificate.verification": "false"})
    assert off["ssl_context"].verify_mode == ssl.CERT_NONE


@pytest.mark.parametrize(
    "config, named",
    [
        ({"ssl.keystore.location": "/k.p12", "ssl.keystore.password": SECRET}, "ssl.keystore.location"),
        ({"sasl.oauthbearer.config": SECRET}, "sasl.oauthbearer.config"),
        ({"sasl.mechanism": "OAUTHBEARER"}, "OAUTHBEARER"),
        ({"security.protocol": "SSL", "ssl.ca.location": "/no/such/ca.pem"}, "TLS files"),
    ],
    ids=["pkcs12-keystore", "oauth-config", "oauthbearer", "missing-ca-file"],
)
def test_a_setting_the_group_client_cannot_take_is_refused_by_name_never_by_value(config, named):
    with pytest.raises(UsageError) as refused:
        client_settings(config)
    assert named in str(refused.value) and SECRET not in str(refused.value)


def test_the_backoff_doubles_from_100ms_to_1s_with_jitter_and_stops_at_the_timeout(monkeypatch):
    clock = [0.0]
    slept = []
    monkeypatch.setattr(groups.time, "monotonic", lambda: clock[0])

    def sleep(s: float) -> None:
        slept.append(s)
        clock[0] += s

    monkeypatch.setattr(groups.time, "sleep", sleep)
    backoff = Backoff(5.0)
    while backoff.wait():
        pass
    assert 0.08 <= slept[0] <= 0.12 and 0.16 <= slept[1] <= 0.24 and 0.32 <= slept[2] <= 0.48
    assert all(s <= 1.2 for s in slept) and sum(slept) == pytest.approx(5.0)  # the last wait ends at the timeout


class Answers:
    """A stand-in request: raises the errors given, in order, then returns "answer"; counts the tries and the
    clients they went through."""

    def __init__(self, *raised: BaseException) -> None:
        self.raised = list(raised)
        self.clients: list[object] = []

    def __call__(self, admin) -> str:
        self.clients.append(admin)
        if self.raised:
            raise self.raised.pop(0)
        return "answer"


class Offline(GroupClient):
    """A GroupClient without a broker: its admin client is a new object after each close()."""

    def _client(self, remaining: float):
        if self._admin is None:
            self._admin = object()
        return self._admin

    def close(self) -> None:
        self._admin = None


@pytest.fixture
def client(monkeypatch):
    """An Offline client on a clock that moves only when it sleeps."""
    clock = [0.0]
    monkeypatch.setattr(groups.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(groups.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s))
    return Offline("k1:9092", {}, 10.0)


def test_a_loading_coordinator_is_waited_out_on_the_same_client(client):
    send = Answers(errors.CoordinatorLoadInProgressError(), errors.CoordinatorLoadInProgressError())
    assert client.call("a read", "g", send) == "answer"
    assert len(send.clients) == 3 and len(set(map(id, send.clients))) == 1


@pytest.mark.parametrize(
    "moved",
    [errors.NotCoordinatorError(), errors.CoordinatorNotAvailableError(), errors.KafkaConnectionError("reset by peer")],
    ids=["not-coordinator", "coordinator-not-available", "connection-lost"],
)
def test_a_coordinator_that_moved_is_found_again_through_a_new_client(client, moved):
    send = Answers(moved)
    assert client.call("a read", "g", send) == "answer"
    assert len(send.clients) == 2 and send.clients[0] is not send.clients[1]


def test_a_coordinator_loading_for_the_whole_timeout_is_exit_3_naming_group_state_and_timeout(client):
    send = Answers(*[errors.CoordinatorLoadInProgressError()] * 1000)
    with pytest.raises(StoreUnavailable) as gave_up:
        client.call("a request for the offsets of group g", "g", send)
    text = str(gave_up.value)
    assert gave_up.value.exit_code == 3 and len(send.clients) > 5
    assert "the group coordinator of group g is loading" in text and "--timeout 10s" in text
    assert "COORDINATOR_LOAD_IN_PROGRESS" in text and "k1:9092" in text


def test_a_write_whose_answer_was_lost_may_have_been_applied_and_says_so(client):
    send = Answers(errors.KafkaTimeoutError(), *[errors.NotCoordinatorError()] * 1000)
    with pytest.raises(WriteConflict) as gave_up:
        client.call("a commit to group g", "g", send, write=True)
    assert "is moving" in str(gave_up.value) and "may or may not have been applied" in str(gave_up.value)
    refused_only = Answers(*[errors.NotCoordinatorError()] * 1000)  # never sent past the coordinator: not written
    with pytest.raises(StoreUnavailable) as not_written:
        client.call("a commit to group g", "g", refused_only, write=True)
    assert str(not_written.value).endswith("; nothing was written")


def test_a_refusal_is_not_waited_out(client):
    send = Answers(errors.GroupAuthorizationFailedError())
    with pytest.raises(errors.GroupAuthorizationFailedError):
        client.call("a read", "g", send)
    assert len(send.clients) == 1


def test_a_refused_login_names_the_settings_never_the_password(client):
    with pytest.raises(StoreUnavailable) as refused:
        client.call("a read", "g", Answers(errors.SaslAuthenticationFailedError(SECRET)))
    assert "refused the credentials" in str(refused.value) and "Authentication failed" in str(refused.value)
    assert SECRET not in str(refused.value)
