"""Kafka's broker registry as storm-kafka reads it (offctl.core.storm.brokers), over plain bytes: registration nodes as
each Kafka release writes them, partition state nodes, leader -1, malformed data, wildcard patterns, the 0..n-1 loop.

Sources: DynamicBrokersReader.java@v1.2.4 (same blob v1.1.0-v1.2.4), KafkaOffsetLagUtil.java@v1.2.4 306-349
(apache/storm); ZkUtils.registerBrokerInZk@0.8.2.1 and @0.9.0.0, KafkaHealthcheck.register@0.9.0.0/@0.10.2.0,
BrokerIdZNode.encode in kafka/zk/ZkData.scala@2.0.0-3.8.0 (apache/kafka)."""

from __future__ import annotations

import pytest

from offctl.core.storm import brokers
from offctl.core.storm.brokers import PartitionLeader, TopicPatternError
from offctl.errors import UsageError

# Registration nodes, byte for byte as each Kafka writes them (Json.encode: no spaces; order of its Map).
KAFKA_0_8_2 = b'{"jmx_port":-1,"timestamp":"1700000000000","host":"kafka-1.example","version":1,"port":9092}'
KAFKA_0_9 = (
    b'{"jmx_port":-1,"timestamp":"1700000000000","endpoints":["PLAINTEXT://kafka-2:9092","SSL://kafka-2:9093"],'
    b'"host":"kafka-2","version":2,"port":9092}'
)
KAFKA_0_10 = (
    b'{"jmx_port":-1,"timestamp":"1700000000000","endpoints":["SSL://kafka-3:9093","PLAINTEXT://kafka-3:9094"],'
    b'"host":"kafka-3","version":3,"port":9094,"rack":"dc1"}'
)
KAFKA_2_X_NAMED_PLAINTEXT = (
    b'{"listener_security_protocol_map":{"CLIENT":"PLAINTEXT","REPLICATION":"SSL"},'
    b'"endpoints":["CLIENT://kafka-4:19092","REPLICATION://kafka-4:19093"],"jmx_port":-1,'
    b'"host":"kafka-4","timestamp":"1700000000000","port":19092,"version":4}'
)
KAFKA_2_X_NO_PLAINTEXT = (
    b'{"features":{},"listener_security_protocol_map":{"SASL_SSL":"SASL_SSL"},'
    b'"endpoints":["SASL_SSL://kafka-5:9094"],"jmx_port":-1,"host":null,'
    b'"timestamp":"1700000000000","port":-1,"version":5}'
)


@pytest.mark.parametrize(
    ("data", "address", "why"),
    [
        pytest.param(KAFKA_0_8_2, "kafka-1.example:9092", None, id="kafka-0.8.2-v1"),
        pytest.param(KAFKA_0_9, "kafka-2:9092", None, id="kafka-0.9-v2-endpoints-not-read"),
        pytest.param(KAFKA_0_10, "kafka-3:9094", None, id="kafka-0.10-host-port-of-the-plaintext-listener"),
        pytest.param(
            KAFKA_2_X_NAMED_PLAINTEXT, "kafka-4:19092", None, id="kafka-2.x-named-listener-mapped-to-plaintext"
        ),
        pytest.param(
            KAFKA_2_X_NO_PLAINTEXT, None, "no PLAINTEXT listener (host null, port -1", id="kafka-2.x-host-null"
        ),
        pytest.param(b'{"port":9092}', None, "no PLAINTEXT listener (host null, port 9092", id="host-absent-is-null"),
        pytest.param(
            b'{"host":"k","port":9092.0}',
            None,
            "port is a Double, not a whole number: ClassCastException",
            id="port-double",
        ),
        pytest.param(b'{"host":"k","port":"9092"}', None, "port is a String", id="port-string"),
        pytest.param(b'{"host":"k","port":true}', None, "port is a Boolean", id="port-boolean"),
        pytest.param(b'{"host":"k"}', None, "no port: NullPointerException", id="port-absent"),
        pytest.param(b'{"host":"k","port":null}', None, "no port: NullPointerException", id="port-null"),
        pytest.param(b'{"host":7,"port":9092}', None, "host is a Long: ClassCastException", id="host-number"),
        pytest.param(b'{"host":"","port":9092}', None, "host is empty", id="host-empty"),
        pytest.param(b'{"host":"k","port":70000}', None, "port 70000 is not a TCP port", id="port-out-of-range"),
        pytest.param(b'{"host":"k","port":4294976388}', "k:9092", None, id="port-long-wraps-as-intValue"),
        pytest.param(b'{"host":"k",,"port":0009092,}', "k:9092", None, id="json-simple-leniency"),
        pytest.param(b"not json", None, "not JSON as json-simple reads it", id="not-json"),
        pytest.param(b"", None, "not JSON", id="empty-node"),
        pytest.param(b'["k",9092]', None, "not an object: ClassCastException", id="json-array"),
        pytest.param(b'{"host":"k","port":9092} x', None, "not JSON", id="trailing-text"),
        pytest.param(b'{"host":"k\xff","port":1}', "k\ufffd:1", None, id="invalid-utf8-replaced-as-new-String"),
    ],
)
def test_parse_broker(data, address, why):
    assert_parsed(brokers.parse_broker(data), address, why)


def assert_parsed(parsed: tuple, value, why: str | None) -> None:
    got, reason = parsed
    assert got == value
    assert reason is None if why is None else why in reason


@pytest.mark.parametrize(
    ("data", "leader", "why"),
    [
        pytest.param(
            b'{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}', 0, None, id="kafka-state-node"
        ),
        pytest.param(
            b'{"controller_epoch":9,"leader":-1,"version":1,"leader_epoch":4,"isr":[]}',
            -1,
            None,
            id="no-leader-is-returned-as-minus-one",
        ),
        pytest.param(b'{"leader":2,"leader_recovery_state":1,"version":1}', 2, None, id="kafka-3.x-recovery-state"),
        pytest.param(b'{"leader":1.9}', 1, None, id="double-truncated-as-intValue"),
        pytest.param(b'{"leader":-1.9}', -1, None, id="negative-double-truncated-toward-zero"),
        pytest.param(b'{"leader":1e400}', 2**31 - 1, None, id="infinite-double-saturates"),
        pytest.param(b'{"leader":4294967295}', -1, None, id="long-wraps-to-minus-one"),
        pytest.param(b'{"leader":"0"}', None, "leader is a String, not a number: ClassCastException", id="string"),
        pytest.param(b'{"leader":false}', None, "leader is a Boolean", id="boolean-is-not-a-Number"),
        pytest.param(b'{"isr":[0]}', None, "no leader: NullPointerException", id="absent"),
        pytest.param(b'{"leader":null}', None, "no leader: NullPointerException", id="null"),
        pytest.param(b'{"leader":[0]}', None, "leader is a JSONArray", id="array"),
        pytest.param(b"0", None, "not an object", id="bare-number"),
        pytest.param(b'{"leader":0', None, "not JSON", id="truncated"),
    ],
)
def test_parse_leader(data, leader, why):
    assert_parsed(brokers.parse_leader(data), leader, why)


@pytest.mark.parametrize(
    ("pattern", "names", "matched"),
    [
        pytest.param(
            "orders-.*",
            ["orders-eu", "orders-us", "my-orders-x", "orders"],
            ("orders-eu", "orders-us"),
            id="full-match-not-search",
        ),
        pytest.param("orders", ["orders", "orders-eu", "old-orders"], ("orders",), id="plain-name-is-exact"),
        pytest.param("orders.eu", ["orders.eu", "ordersXeu"], ("orders.eu", "ordersXeu"), id="dot-is-any-char"),
        pytest.param("a|b", ["a", "b", "ab"], ("a", "b"), id="alternation-whole"),
        pytest.param("t-\\d+", ["t-1", "t-\u0661"], ("t-1",), id="digit-is-ascii-as-java"),
        pytest.param("(?i)ORDERS", ["orders"], ("orders",), id="embedded-flag"),
        pytest.param("o++rders|x.*+", ["orders", "xy"], ("orders", "xy"), id="possessive-quantifiers"),
        pytest.param("(?>ord)ers", ["orders"], ("orders",), id="atomic-group"),
        pytest.param("[a-c]-t", ["a-t", "d-t"], ("a-t",), id="character-class"),
        pytest.param("(", [], (), id="bad-pattern-over-no-topic-is-no-error-as-java"),
    ],
)
def test_matching_topics(pattern, names, matched):
    assert brokers.matching_topics(pattern, names) == matched


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("orders-(", id="unclosed-group"),
        pytest.param("\\p{Alpha}+", id="posix-class"),
        pytest.param("\\Qorders.eu\\E", id="quote"),
        pytest.param("(?<region>eu)-orders", id="java-named-group"),
        pytest.param("[a-z&&[^x]]+", id="class-intersection-python-reads-otherwise"),
        pytest.param("[[a-c]d]", id="nested-class-python-reads-otherwise"),
        pytest.param("*orders", id="dangling-quantifier"),
        pytest.param("\\x{6f}rders", id="java-hex-escape"),
        pytest.param("(?U)orders", id="java-only-embedded-flag"),
        pytest.param("orders\\z", id="java-end-anchor"),
    ],
)
def test_patterns_re_cannot_read_as_java_are_a_clear_error(pattern):
    with pytest.raises(TopicPatternError, match="-w") as caught:
        brokers.matching_topics(pattern, ["orders"])
    assert isinstance(caught.value, UsageError) and caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("/brokers", "/brokers/"),
        ("/brokers/", "/brokers/"),
        ("/kafka/brokers", "/kafka/brokers/"),
        ("/", "/"),
        ("", "/"),  # "" does not end with '/': KOLU makes it "/", then reads /topics
    ],
)
def test_brokers_root_adds_one_slash_as_the_monitor(given, root):
    assert brokers.brokers_root(given) == root
    assert brokers.topics_path(root) == root + "topics"
    assert brokers.broker_path(root, 3) == root + "ids/3"


@pytest.mark.parametrize("given", ["brokers", "/brokers//", "/a//b", "/a/./b", "/a/../b", "/a\x00"])
def test_brokers_root_zookeeper_refuses_is_a_usage_error(given):
    with pytest.raises(UsageError, match="not a ZooKeeper path"):
        brokers.brokers_root(given)


# --- resolve: the registry from what was read ------------------------------------------------------------------

R = "/brokers/"


def _state(leader) -> bytes:
    return b'{"controller_epoch":1,"leader":%s,"version":1,"leader_epoch":0,"isr":[0]}' % str(leader).encode()


def _read(topics: dict[str, dict[str, bytes | None]], ids: dict[str, bytes]) -> dict:
    """What the adapter would have read: topics {topic: {child name: state bytes or None (no state node)}}."""
    partitions, states = {}, {}
    for topic, children in topics.items():
        partitions[brokers.partitions_path(R, topic)] = list(children)
        for name, data in children.items():
            if data is not None:
                states[f"{brokers.partitions_path(R, topic)}/{name}/state"] = data
    return dict(
        partitions=partitions,
        states=states,
        ids={brokers.broker_path(R, b): d for b, d in ids.items()},
        registered=list(ids),
    )


def test_resolve_plain_registry():
    read = _read(
        {"orders": {"0": _state(0), "1": _state(1), "2": _state(0)}},
        {"0": KAFKA_0_8_2, "1": KAFKA_0_9, "2": KAFKA_2_X_NO_PLAINTEXT},
    )
    got = brokers.resolve(R, ["orders"], **read)
    assert got.topics == {
        "orders": (
            PartitionLeader(0, "kafka-1.example:9092"),
            PartitionLeader(1, "kafka-2:9092"),
            PartitionLeader(2, "kafka-1.example:9092"),
        )
    }
    assert got.missing == {}
    assert got.brokers == ("kafka-1.example:9092", "kafka-2:9092")
    assert len(got.notes) == 1 and got.notes[0].startswith("broker 2: the broker registered no PLAINTEXT listener")


@pytest.mark.parametrize(
    ("children", "ids", "expected"),
    [
        pytest.param(
            {"0": _state(-1)},
            {"0": KAFKA_0_8_2},
            "No leader found for partition 0' (DynamicBrokersReader@v1.2.4 getLeaderFor 164-165)",
            id="leader-minus-one",
        ),
        pytest.param(
            {"0": _state(-1)}, {"0": KAFKA_0_8_2}, "reads /brokers/ids/-1 and fails", id="monitor-reads-ids-minus-one"
        ),
        pytest.param(
            {"0": _state(7)},
            {"0": KAFKA_0_8_2},
            "broker 7, is not registered (/brokers/ids/7 does not exist): storm-kafka's ZkHosts logs "
            "'Node /brokers/ids/7 does not exist' and leaves the partition out",
            id="leader-id-node-missing",
        ),
        pytest.param(
            {"0": _state(5)},
            {"5": KAFKA_2_X_NO_PLAINTEXT},
            "broker 5: the broker registered no PLAINTEXT",
            id="leader-host-null",
        ),
        pytest.param(
            {"0": _state(5)}, {"5": b'{"host":"k","port":1.0}'}, "Double, not a whole number", id="leader-port-double"
        ),
        pytest.param(
            {"0": _state(5)},
            {"5": b'{"host":"k","port":1.0}'},
            "storm-kafka's ZkHosts fails its whole refresh",
            id="bad-broker-node-fails-the-spout-refresh",
        ),
        pytest.param(
            {"0": b'{"leader":"0"}'},
            {"0": KAFKA_0_8_2},
            "ClassCastException on the (Number) cast",
            id="leader-not-a-number",
        ),
        pytest.param(
            {"0": None}, {"0": KAFKA_0_8_2}, "/brokers/topics/t/partitions/0/state does not exist", id="no-state-node"
        ),
    ],
)
def test_resolve_partition_without_a_leader_says_why(children, ids, expected):
    got = brokers.resolve(R, ["t"], **_read({"t": children}, ids))
    (row,) = got.topics["t"]
    assert row.partition == 0 and row.leader is None
    assert expected in row.why


def test_resolve_loops_over_the_count_not_the_names():
    """Children 0, 2, 3: both readers read 0, 1, 2 (DBR 83-85, KOLU@v1.2.4 328-329): 1 has no state, 3 is never read."""
    read = _read({"t": {"0": _state(0), "2": _state(0), "3": _state(0)}}, {"0": KAFKA_0_8_2})
    got = brokers.resolve(R, ["t"], **read)
    assert [(r.partition, r.leader) for r in got.topics["t"]] == [
        (0, "kafka-1.example:9092"),
        (1, None),
        (2, "kafka-1.example:9092"),
    ]
    assert "partitions/1/state does not exist" in got.topics["t"][1].why
    assert got.notes == (
        "/brokers/topics/t/partitions has 3 children but not 0..2: both readers loop over the count "
        "(DynamicBrokersReader@v1.2.4 83-85, KafkaOffsetLagUtil@v1.2.4 328-329), so 3 is never read",
    )


def test_resolve_missing_topic_and_missing_topics_node():
    got = brokers.resolve(R, ["gone"], partitions={}, states={}, ids={}, registered=None, topics_listed=False)
    assert got.topics == {}
    assert set(got.missing) == {"gone", "/brokers/topics"}
    assert "/brokers/topics/gone/partitions does not exist" in got.missing["gone"]
    assert "getNumPartitions: NoNodeException" in got.missing["gone"]
    assert "getTopics: NoNodeException" in got.missing["/brokers/topics"]
    assert got.notes == ("/brokers/ids does not exist: no broker is registered under /brokers/",)


def test_resolve_topic_that_is_no_zookeeper_path():
    got = brokers.resolve(R, ["a//b"], partitions={}, states={}, ids={}, registered=[])
    assert "is not a ZooKeeper path" in got.missing["a//b"]


def test_leader_ids_are_the_brokers_to_read():
    states = {"a": _state(3), "b": _state(-1), "c": b"x", "d": _state(1), "e": _state(3)}
    assert brokers.leader_ids(states) == frozenset({1, 3})
