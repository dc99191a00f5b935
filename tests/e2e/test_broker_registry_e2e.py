"""ZkStore.read_broker_registry against a real ZooKeeper holding Kafka's broker registry as Kafka writes it: broker
nodes <root>/ids/<id> (ephemeral, ZkUtils.registerBrokerInZk@0.8.2.1 / BrokerIdZNode.encode@2.0.0), topic nodes
<root>/topics/<t> ({"version":1,"partitions":{...}}) and <root>/topics/<t>/partitions/<n>/state
(ZkUtils.leaderAndIsrZkData@0.8.2.1). What it must answer is what storm-kafka-monitor reads
(KafkaOffsetLagUtil@v1.2.4 306-349): partitions 0..n-1 by count, leaders' host:port; odd cases with the reasons of
offctl.core.storm.brokers.

The registry Apache Kafka 3.9 writes in ZooKeeper mode (the `broker39` fixture, under /kafka39) is read first, as the
broker left it. The registries written here by hand are the ones a live 3.9 broker never shows: the node formats of
older releases (version 1 nodes, Kafka 0.8.2), a listener map with no PLAINTEXT endpoint, and broken ones (a leader
of -1, a leader that is not registered, a gap in the partition names)."""

from __future__ import annotations

import json

import pytest

from offctl.adapters.zookeeper import ZkStore
from offctl.core.storm.brokers import PartitionLeader, TopicPatternError
from offctl.errors import UsageError

pytestmark = pytest.mark.zookeeper

V1 = {"jmx_port": -1, "timestamp": "1700000000000", "version": 1}  # Kafka 0.8.2
SASL_ONLY = {
    "listener_security_protocol_map": {"SASL_SSL": "SASL_SSL"},
    "endpoints": ["SASL_SSL://k9:9094"],
    "jmx_port": -1,
    "host": None,
    "timestamp": "1700000000000",
    "port": -1,
    "version": 4,
}


def _json(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _register(zk, root: str, brokers: dict[int, dict], topics: dict[str, dict[str, int]]) -> None:
    """Write a registry as Kafka does: brokers {id: node}, topics {topic: {partition name: leader}}."""
    zk.ensure_path(f"{root}/ids")
    zk.ensure_path(f"{root}/topics")
    tx = zk.transaction()
    for broker_id, node in brokers.items():
        tx.create(f"{root}/ids/{broker_id}", _json(node), ephemeral=True)
    for topic, leaders in topics.items():
        tx.create(
            f"{root}/topics/{topic}",
            _json({"version": 1, "partitions": {p: [leader] for p, leader in leaders.items()}}),
        )
        tx.create(f"{root}/topics/{topic}/partitions")
        for name, leader in leaders.items():
            tx.create(f"{root}/topics/{topic}/partitions/{name}")
            tx.create(
                f"{root}/topics/{topic}/partitions/{name}/state",
                _json(
                    {
                        "controller_epoch": 1,
                        "leader": leader,
                        "version": 1,
                        "leader_epoch": 0,
                        "isr": [leader] if leader >= 0 else [],
                    }
                ),
            )
    results = tx.commit()
    assert not any(isinstance(r, Exception) for r in results), results


def _cluster(zk, root: str) -> None:
    _register(
        zk,
        root,
        {0: {**V1, "host": "k0", "port": 9092}, 1: {**V1, "host": "k1", "port": 9093}, 9: SASL_ONLY},
        {
            "orders-eu": {"0": 0, "1": 1, "2": 0},
            "orders-us": {"0": 1},
            "payments": {"0": 0, "1": 1},
            "no-leader": {"0": -1, "1": 0},
            "lost-leader": {"0": 7, "1": 1},
            "sasl": {"0": 9},
            "gap": {"0": 0, "2": 1},
        },
    )


@pytest.mark.kafka
@pytest.mark.parametrize("multi_read", [True, False], ids=["multiread", "single-reads"])
def test_the_registry_apache_kafka_3_9_writes(zk_server, broker39, kafka39, names, multi_read):
    """Topics made on the 3.9 broker: their partitions, each led by that broker, at the address it advertises; a
    wildcard over the topics it registered; and under the chroot it was given, as `-z host:port/kafka39 -r /brokers`
    reads it."""
    from tests.conftest import BROKER39_CHROOT

    eu, us = names("orders-eu"), names("orders-us")
    kafka39.create_topic(eu, 3)
    kafka39.create_topic(us, 1)
    leader = broker39.address
    with ZkStore(zk_server.address, multi_read=multi_read) as store:
        got = store.read_broker_registry(f"{BROKER39_CHROOT}/brokers", eu, False)
        both = store.read_broker_registry(f"{BROKER39_CHROOT}/brokers", f"{names.prefix}-orders-.*", True)
    assert got.topics == {eu: tuple(PartitionLeader(p, leader) for p in range(3))}
    assert got.missing == {} and got.notes == () and leader in got.brokers
    assert both.topics == {eu: got.topics[eu], us: (PartitionLeader(0, leader),)}
    with ZkStore(zk_server.address + BROKER39_CHROOT) as store:
        assert store.read_broker_registry("/brokers", eu, False).topics == got.topics


@pytest.mark.parametrize("multi_read", [True, False], ids=["multiread", "single-reads"])
def test_plain_topic(zk, zk_server, names, multi_read):
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(zk_server.address, multi_read=multi_read) as store:
        got = store.read_broker_registry(f"{names.root}/brokers", "orders-eu", False)
    assert got.root == f"{names.root}/brokers/"
    assert got.topics == {
        "orders-eu": (PartitionLeader(0, "k0:9092"), PartitionLeader(1, "k1:9093"), PartitionLeader(2, "k0:9092"))
    }
    assert got.missing == {}
    assert got.brokers == ("k0:9092", "k1:9093")
    assert len(got.notes) == 1 and got.notes[0].startswith("broker 9: the broker registered no PLAINTEXT listener")


def test_wildcard_is_a_full_match_over_the_topics_node(zk, zk_server, names):
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(zk_server.address) as store:
        got = store.read_broker_registry(f"{names.root}/brokers/", "orders-.*", True)
        anchored = store.read_broker_registry(f"{names.root}/brokers", "orders", True)
    assert got.topics == {
        "orders-eu": (PartitionLeader(0, "k0:9092"), PartitionLeader(1, "k1:9093"), PartitionLeader(2, "k0:9092")),
        "orders-us": (PartitionLeader(0, "k1:9093"),),
    }
    assert anchored.topics == {} and anchored.missing == {}  # String.matches: "orders" matches no child whole


def test_leader_minus_one_and_an_unregistered_leader(zk, zk_server, names):
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(zk_server.address) as store:
        got = store.read_broker_registry(f"{names.root}/brokers", "(no|lost)-leader|sasl", True)
    none, lost, sasl = got.topics["no-leader"], got.topics["lost-leader"], got.topics["sasl"]
    assert [r.leader for r in none] == [None, "k0:9092"]
    assert "No leader found for partition 0" in none[0].why
    assert f"reads {names.root}/brokers/ids/-1 and fails" in none[0].why
    assert [r.leader for r in lost] == [None, "k1:9093"]
    assert f"'Node {names.root}/brokers/ids/7 does not exist' and leaves the partition out" in lost[0].why
    assert sasl[0].leader is None and "broker 9: the broker registered no PLAINTEXT listener" in sasl[0].why


def test_partitions_are_counted_not_named(zk, zk_server, names):
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(zk_server.address) as store:
        got = store.read_broker_registry(f"{names.root}/brokers", "gap", False)
    assert [(r.partition, r.leader) for r in got.topics["gap"]] == [(0, "k0:9092"), (1, None)]
    assert "gap/partitions/1/state does not exist" in got.topics["gap"][1].why
    assert any(note.endswith("so 2 is never read") for note in got.notes)


def test_missing_topic_and_missing_registry(zk, zk_server, names):
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(zk_server.address) as store:
        gone = store.read_broker_registry(f"{names.root}/brokers", "gone", False)
        nothing = store.read_broker_registry(f"{names.root}/nowhere", ".*", True)
    assert gone.topics == {} and list(gone.missing) == ["gone"]
    assert f"{names.root}/brokers/topics/gone/partitions does not exist" in gone.missing["gone"]
    assert gone.brokers == ("k0:9092", "k1:9093")
    assert nothing.topics == {} and list(nothing.missing) == [f"{names.root}/nowhere/topics"]
    assert nothing.brokers == () and nothing.notes == (
        f"{names.root}/nowhere/ids does not exist: no broker is registered under {names.root}/nowhere/",
    )


def test_chroot_in_the_connect_string(zk, zk_server, names):
    """Kafka under a chroot (zookeeper.connect=host:port/kafka) and storm-kafka-monitor given -z host:port/kafka:
    the paths are the client's, below the chroot."""
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(f"{zk_server.address}{names.root}") as store:
        got = store.read_broker_registry("/brokers", "orders-.*", True)
    assert got.root == "/brokers/"
    assert sorted(got.topics) == ["orders-eu", "orders-us"]
    assert got.topics["orders-us"] == (PartitionLeader(0, "k1:9093"),)
    assert got.brokers == ("k0:9092", "k1:9093")


def test_a_pattern_re_reads_otherwise_and_a_bad_root_are_refused(zk, zk_server, names):
    _cluster(zk, f"{names.root}/brokers")
    with ZkStore(zk_server.address) as store:
        with pytest.raises(TopicPatternError, match="Java's String.matches"):
            store.read_broker_registry(f"{names.root}/brokers", "\\p{Alpha}+", True)
        with pytest.raises(UsageError, match="not a ZooKeeper path"):
            store.read_broker_registry("brokers", "orders-eu", False)
