"""Which spouts the brokers serve, on the real brokers (issue 46, parts 1 and 2): offctl asks Apache Kafka 4.4 (KRaft)
and 3.9 (ZooKeeper mode) their ApiVersions through kafka-python, and the what-if's table (offctl.core.storm
.kafka_releases) holds, for the requests a spout sends, exactly what those brokers answered. Then inspect judges the
same spouts the same way against the real broker and against the what-if of its release, in the JSON and as
BROKER_INCOMPATIBLE. What the real spouts do on these brokers is tests/oracle/test_broker_support_e2e.py."""

from __future__ import annotations

import json

import pytest

from offctl.adapters.kafka import KafkaStore
from offctl.core.storm import kafka_releases
from offctl.core.storm.kafka_clients import CLIENTS
from tests.conftest import invoke
from tests.e2e.seeds import spout

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

SPOUT_APIS = sorted({api for client in CLIENTS.values() for api in client.apis})  # every request a spout sends


def answered(address: str) -> dict[str, dict[str, tuple[int, int]]]:
    store = KafkaStore(address, timeout=10)
    try:
        accepts, why = store.api_versions()
    finally:
        store.close()
    assert accepts is not None, why
    return accepts


@pytest.mark.parametrize("fixture, line", [("broker", "4.4"), ("broker39", "3.9")])
def test_the_tables_row_is_what_the_real_broker_answers(request, fixture, line):
    address = request.getfixturevalue(fixture).address
    accepts = answered(address)
    assert len(accepts) == 1
    ((label, apis),) = accepts.items()
    assert label.startswith("node ") and address.split(":")[-1] in label
    row = kafka_releases.RELEASES[line]
    assert {api: apis.get(api) for api in SPOUT_APIS} == {api: row.get(api) for api in SPOUT_APIS}


def inspect_json(zk_server, broker, root: str, *more: str) -> dict:
    result = invoke(
        [
            "inspect",
            "--zk",
            zk_server.address,
            "--zk-root",
            root,
            "--bootstrap-servers",
            broker.address,
            "--time-lag-budget",
            "0",
            "--fail-on",
            "never",
            "-o",
            "json",
            *more,
        ]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def old_spout(zk, kafka, kafka39, names):
    """A storm-kafka spout `orders` at offset 2 of a topic of 4 messages, on each broker."""
    root = names.root + "/spouts"
    for helper in (kafka, kafka39):
        topic = helper.filled_topic(names("orders"), 1, 4)
    spout(zk, root, "orders", topic, {0: 2})
    return root


def only_consumer(doc: dict) -> dict:
    (consumer,) = doc["consumers"]
    return consumer


def test_kafka_4_refuses_storm_kafka_and_says_which_requests(zk_server, broker, old_spout):
    consumer = only_consumer(inspect_json(zk_server, broker, old_spout))
    assert consumer["broker_served"] is False
    assert consumer["broker_against"].startswith("the brokers (node ")
    assert "BROKER_INCOMPATIBLE" in consumer["finding_codes"]
    assert any(r.startswith("ListOffsets v0 ") for r in consumer["broker_refused"])


def test_kafka_3_9_serves_storm_kafka(zk_server, broker39, old_spout):
    consumer = only_consumer(inspect_json(zk_server, broker39, old_spout))
    assert consumer["broker_served"] is True and consumer["broker_refused"] == []
    assert "BROKER_INCOMPATIBLE" not in consumer["finding_codes"]


def test_the_what_if_of_4_4_on_a_3_9_broker_gives_the_real_4_4_verdict(zk_server, broker, broker39, old_spout):
    real = only_consumer(inspect_json(zk_server, broker, old_spout))
    rehearsed = only_consumer(inspect_json(zk_server, broker39, old_spout, "--kafka-release", "4.4"))
    assert rehearsed["broker_against"] == "Kafka 4.4 (--kafka-release, a what-if)"
    assert rehearsed["broker_served"] is real["broker_served"] is False
    strip = [r.split(" (")[0] for r in real["broker_refused"]]
    assert [r.split(" (")[0] for r in rehearsed["broker_refused"]] == strip


def test_a_what_if_needs_no_broker(zk_server, zk, names):
    root = names.root + "/spouts"
    spout(zk, root, "orders", "orders", {0: 2})
    result = invoke(["inspect", "--zk", zk_server.address, "--zk-root", root, "--kafka-release", "4.0", "-o", "json"])
    assert result.exit_code == 1, result.output  # BROKER_INCOMPATIBLE is an error
    assert only_consumer(json.loads(result.stdout))["broker_served"] is False


def test_a_release_without_a_row_is_a_usage_error(zk_server, names):
    result = invoke(["inspect", "--zk", zk_server.address, "--zk-root", names.root, "--kafka-release", "9.9"])
    assert result.exit_code == 2
    assert "--kafka-release: Kafka 9.9 is not a release offctl has a table for" in result.output
