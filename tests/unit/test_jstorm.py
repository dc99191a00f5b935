"""JStorm's Kafka spout on literal nodes: where it resumes each partition, its lag, and the findings that apply
(offctl.core.storm.jstorm's rules, read in alibaba/jstorm at 2.4.0, jstorm-utility/jstorm-kafka). Each case's id
names the class and tag it follows. The record read itself is held to json-simple's classes in
tests/oracle/test_jstorm_record_differential.py; the ZooKeeper read in tests/e2e/test_jstorm_read_e2e.py."""

from __future__ import annotations

import pytest

from offctl.core.records.model import JSTORM, ConsumerKey, PartitionLog, Snapshot, Thresholds, ZkNode
from offctl.core.rules import served
from offctl.core.rules.analyze import analyze
from offctl.core.rules.profiles import Profiles
from offctl.core.storm import jstorm
from offctl.core.storm.kafka_releases import RELEASES
from offctl.core.storm.outcomes import Resumes
from offctl.core.storm.protocol import BROKERS, Brokers
from offctl.core.storm.releases import SpoutProfile

ROOT, TOPIC, CLIENT, LEADER = "/jstorm", "clicks", "jstorm", "k1:9092"
SPOUT = jstorm.consumer_id(TOPIC, CLIENT)  # "clicks/jstorm"
FROM_BEGINNING = SpoutProfile(jstorm_from_beginning=True)


def node(partition: int, data: bytes | str, topic: str = TOPIC, client: str = CLIENT) -> ZkNode:
    """A node of the spout of `topic` and `client` at <ROOT>/kafka/offset/topic/<topic>/<client>/<partition>."""
    spout = jstorm.consumer_id(topic, client)
    data = data.encode() if isinstance(data, str) else data
    return ZkNode(ROOT, spout, jstorm.node_path(ROOT, spout, partition), partition, topic, data, 1, 0, jstorm=True)


def record(partition: int, offset: int, *, topology: str | None = "clicks-topo", host: str = "k1", topic=TOPIC):
    """A record byte for byte as PartitionConsumer.commitState writes it (jstorm.record_bytes)."""
    return jstorm.record_bytes(topology, offset, partition, host, 9092, topic)


def logs(start: int, end: int, partitions: int = 2, topic: str = TOPIC) -> dict:
    return {topic: {p: PartitionLog(start, end, LEADER) for p in range(partitions)}}


def report(nodes, cluster, profile: SpoutProfile = SpoutProfile(), static=None):
    thresholds = Thresholds(spout=profile, static_partitions=static or {})
    return analyze(Snapshot(captured_ms=0, zk_nodes=tuple(nodes), cluster=cluster), thresholds)


def row(rep, partition: int = 0):
    [found] = [r for r in rep.rows if r.record.partition == partition]
    return found


def codes(rep) -> set[str]:
    return {f.code for f in rep.findings}


def test_the_node_is_read_as_a_jstorm_spout():
    """PartitionConsumer.zkPath@2.4.0: <root>/kafka/offset/topic/<kafka.topic>/<kafka.client.id>/<N>."""
    rep = report([node(0, record(0, 41))], logs(0, 50))
    r = row(rep).record
    assert r.key == ConsumerKey(JSTORM, "clicks/jstorm", ROOT)
    assert str(r.key) == "jstorm /jstorm/kafka/offset/topic/clicks/jstorm"
    assert r.path == "/jstorm/kafka/offset/topic/clicks/jstorm/0"
    assert (r.committed, r.topology_name, r.topology_id, r.broker, r.topic) == (
        41,
        "clicks-topo",
        None,
        "k1:9092",
        TOPIC,
    )


def test_resumes_at_the_stored_offset_plus_one_and_counts_lag_from_there():
    """PartitionConsumer.fillMessages@2.4.0 fetches emittingOffset + 1, emittingOffset being the stored offset."""
    rep = report([node(0, record(0, 41))], logs(0, 50, partitions=1))
    r = row(rep)
    assert (r.resumes.at, r.resumes.kind, r.resumes.citation) == (42, Resumes.STORED_PLUS_1, jstorm.STORED)
    assert (r.lag, r.lost_to_retention, r.resumes_stored) == (8, 0, True)
    assert rep.findings == ()


def test_a_record_at_the_last_offset_has_no_lag():
    """The last message emitted and acked is the commit (commitState@2.4.0): the spout fetches the log end next."""
    r = row(report([node(0, record(0, 49))], logs(0, 50)))
    assert (r.resumes.at, r.lag) == (50, 0)


@pytest.mark.parametrize(
    "data, why",
    [
        pytest.param(
            '{"offset":"41","topic":"clicks"}', "not an integer", id="PartitionConsumer@2.4.0 (Long) of a String"
        ),
        pytest.param(
            '{"offset":41.0,"topic":"clicks"}', "not an integer", id="PartitionConsumer@2.4.0 (Long) of a Double"
        ),
        pytest.param(
            '{"topology":"clicks-topo","topic":"clicks"}', "no offset", id="PartitionConsumer@2.4.0 no offset"
        ),
        pytest.param("[41]", "not an object", id="ZkState.readJSON@2.4.0 (Map) of a JSONArray"),
        pytest.param("offset=41", "", id="ZkState.readJSON@2.4.0 JSONValue.parse answers null"),
        pytest.param("null", "null", id="ZkState.readJSON@2.4.0 JSON null"),
    ],
)
def test_a_record_it_cannot_read_starts_as_with_none(data, why):
    """No offset the constructor can take (`catch (Throwable)`): it starts at the log end, then fetches + 1."""
    rep = report([node(0, data), node(1, record(1, 20))], logs(10, 50))
    r = row(rep)
    assert why in r.record.malformed
    assert "MALFORMED_RECORD" in r.codes
    assert (r.resumes.at, r.resumes.kind, r.resumes.citation) == (51, Resumes.LOG_END, jstorm.START)
    assert (r.lag, r.resumes_stored) == (0, False)
    [finding] = [f for f in rep.findings if f.code == "MALFORMED_RECORD"]
    assert "log end + 1" in finding.message


def test_from_beginning_starts_at_the_log_start_plus_one_whatever_is_stored():
    """The PartitionConsumer constructor@2.4.0: kafka.fetch.from.beginning takes EarliestTime before the record."""
    rep = report([node(0, record(0, 41)), node(1, '{"offset":"x"}')], logs(10, 50), FROM_BEGINNING)
    stored, malformed = row(rep, 0), row(rep, 1)
    assert (stored.resumes.at, stored.resumes.kind, stored.resumes.citation) == (11, Resumes.LOG_START, jstorm.START)
    assert (stored.lag, stored.resumes_stored) == (39, False)
    assert (malformed.resumes.at, malformed.resumes.kind, malformed.lag) == (11, Resumes.LOG_START, 39)
    assert "kafka.fetch.from.beginning=true" in rep.spout_settings


def test_below_the_log_start_every_fetch_fails():
    """KafkaConsumer.fetchMessages@2.4.0 returns null on OffsetOutOfRange and emittingOffset never moves."""
    rep = report([node(0, record(0, 3)), node(1, record(1, 20))], logs(10, 100))
    r = row(rep)
    assert (r.resumes.kind, r.resumes.citation, r.lost_to_retention) == (Resumes.FETCH_FAILS, jstorm.FETCH, 6)
    [finding] = [f for f in rep.findings if f.code == "OFFSET_BELOW_LOG_START"]
    assert finding.partition == 0 and "resumes at 4 < log start 10" in finding.message
    assert "for good" in finding.message


def test_above_the_log_end_it_waits_for_the_log_end():
    """KafkaConsumer.fetchMessages@2.4.0: every fetch past the log end is out of range until the log end reaches it."""
    rep = report([node(0, record(0, 120)), node(1, record(1, 20))], logs(10, 100))
    r = row(rep)
    assert (r.resumes.at, r.resumes.kind, r.resumes.citation) == (121, Resumes.WAITS, jstorm.FETCH)
    [finding] = [f for f in rep.findings if f.code == "OFFSET_ABOVE_LOG_END"]
    assert "resumes at 121 > log end 100 (by 21)" in finding.message


def test_a_record_naming_another_topic_is_applied_to_the_folders():
    """The PartitionConsumer constructor@2.4.0 reads `offset` alone: the path's topic is the one fetched."""
    rep = report([node(0, record(0, 41, topic="payments")), node(1, record(1, 20))], logs(0, 50))
    r = row(rep)
    assert (r.topic, r.record.topic, r.resumes.at, r.lag) == (TOPIC, "payments", 42, 8)
    assert "TOPIC_MISMATCH" in r.codes


def test_two_topologies_on_one_client_id_collide():
    """commitState@2.4.0 writes topology.name; two names under one topic/kafka.client.id are two spouts' records."""
    rep = report([node(0, record(0, 41, topology="a")), node(1, record(1, 20, topology="b"))], logs(0, 50))
    [finding] = [f for f in rep.findings if f.code == "ID_COLLISION"]
    assert "JStorm spout 'clicks/jstorm'" in finding.message


def test_one_topology_and_a_record_without_one_do_not_collide():
    rep = report([node(0, record(0, 41, topology="a")), node(1, record(1, 20, topology=None))], logs(0, 50))
    assert "ID_COLLISION" not in codes(rep)


def test_a_broker_that_no_longer_leads_the_partition_is_stale():
    """commitState@2.4.0 writes the leader it fetched from (consumer.getLeaderBroker())."""
    rep = report([node(0, record(0, 41, host="k2")), node(1, record(1, 20))], logs(0, 50))
    assert "STALE_BROKER" in row(rep, 0).codes and "STALE_BROKER" not in row(rep, 1).codes


def test_static_partitions_say_which_it_reads():
    """PartitionCoordinator.createPartitionConsumers@2.4.0 reads 0 to kafka.broker.partitions - 1: declared 0-1, a
    record of partition 2 is never read and partition 1 without one starts at the log end + 1."""
    nodes = [node(0, record(0, 41)), node(2, record(2, 7))]
    rep = report(nodes, logs(0, 50, partitions=3), static={SPOUT: frozenset({0, 1})})
    assert "UNREAD_PARTITION" in row(rep, 2).codes and row(rep, 2).lag is None
    [missing] = [f for f in rep.findings if f.code == "MISSING_PARTITION"]
    assert missing.partition == 1
    assert (missing.resumes.at, missing.resumes.kind) == (51, Resumes.LOG_END)
    assert "(--static-partitions)" in missing.message


def test_without_static_partitions_a_partition_without_a_record_is_missing():
    """Without --static-partitions every partition of the topic is taken as read, and says how to declare them."""
    rep = report([node(0, record(0, 41))], logs(0, 50, partitions=2), FROM_BEGINNING)
    [missing] = [f for f in rep.findings if f.code == "MISSING_PARTITION"]
    assert (missing.partition, missing.resumes.at, missing.resumes.kind) == (1, 1, Resumes.LOG_START)
    assert "kafka.broker.partitions" in missing.message


def test_no_storm_kafka_rule_applies():
    """A stored 0 is used (no `<= 0` check), and no maxOffsetBehind or topology id: the constructor@2.4.0 has none."""
    rep = report([node(0, record(0, 0)), node(1, record(1, 20))], logs(0, 5_000_000))
    assert (row(rep).resumes.at, row(rep).lag) == (1, 4_999_999)
    assert not codes(rep) & {"IGNORED_ZERO_OFFSET", "LAG_BEYOND_MAX_OFFSET_BEHIND", "STALE_TOPOLOGY"}


@pytest.mark.parametrize("release, serves", [("4.4", False), ("4.0", False), ("3.9", True), ("0.10.2", True)])
def test_brokers_from_kafka_4_refuse_its_simple_consumer(release, serves):
    """jstorm-kafka's pom@2.4.0 ships kafka_2.9.2 0.8.1: ListOffsets v0 and Fetch v0, which Kafka 4.0 removed."""
    brokers = Brokers(BROKERS, {"node 1 (k1:9092)": RELEASES[release]})
    supports, found, skipped = served.judged(report([node(0, record(0, 41))], logs(0, 50, 1)), Profiles(), brokers)
    assert (supports[ConsumerKey(JSTORM, SPOUT, ROOT)].serves, skipped) == (serves, [])
    assert [f.code for f in found] == ([] if serves else ["BROKER_INCOMPATIBLE"])
