"""The real old storm-kafka spout (org.apache.storm.kafka.KafkaSpout, storm-kafka 1.2.4) against the test ZooKeeper
and the Kafka 3.9 broker, through tests/oracle/storm_kafka_spout.py: where it starts each partition from the node it
finds at <zkRoot>/<id>/partition_<N> and its SpoutConfig, what it emits, and what it writes back. These hold the runner
to the spout's source (each figure is explained by the Storm file and line at tag v1.2.4 cited beside it), so that
offctl's "will resume at" verdicts can in turn be held to the runner.

All scenarios run in one JVM (one runner call, in the module's fixture): a topic of 3 partitions of 10 messages
(offsets 0-9, log end 10), and a "trimmed" topic of 1 partition of 10 messages whose log start DeleteRecords moved
to 5. Nodes are written as PartitionManager.commit writes them (conftest.storm_record); the storm id the mocked
TopologyContext reports is STORM_ID unless a scenario says otherwise. Unless said, the runner acks every emitted
message and then deactivates the spout, which commits (KafkaSpout.java:196-198).

Citations: KafkaSpout.java, PartitionManager.java, KafkaUtils.java, ZkCoordinator.java, DynamicBrokersReader.java,
all under external/storm-kafka/src/jvm/org/apache/storm/kafka/ at v1.2.4.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.conftest import ALLOW_SKIP, BROKER39_CHROOT, storm_record
from tests.oracle.storm_kafka_spout import run_old_spouts

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

STORM_ID = "orders-topology-1-1700000000"
OTHER_ID = "orders-topology-7-1690000000"  # an earlier deployment of the same topology
EARLIEST, LATEST = -2, -1  # kafka.api.OffsetRequest.EarliestTime() / LatestTime()
PARTITIONS = ("0", "1", "2")
TRIMMED_START = 5


@pytest.fixture(scope="module")
def spouts(zk_server, zk, broker39, kafka39):
    """{scenario name: report} for every scenario below, from one run_old_spouts call; and the setting they ran in."""
    from confluent_kafka import TopicPartition

    prefix = f"old-spout-{time.time_ns()}"
    topic, trimmed = kafka39.filled_topic(f"{prefix}-orders", 3, 10), kafka39.filled_topic(f"{prefix}-trimmed", 1, 10)
    (deleted,) = kafka39.admin.delete_records([TopicPartition(trimmed, 0, TRIMMED_START)]).values()
    assert deleted.result(30).low_watermark == TRIMMED_START
    broker = broker39.address
    registry = {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"}
    root = f"/{prefix}"

    def node(on: str, partition: int, offset: int, topology_id: str = STORM_ID) -> bytes:
        return storm_record(on, partition, offset, topology_id=topology_id, broker=broker)

    scenarios, stored = [], {}

    def scenario(
        name: str, offsets: dict[int, int] | None = None, *, on: str = topic, written_by: str = STORM_ID, **settings
    ):
        for p, offset in (offsets or {}).items():
            stored[name, str(p)] = data = node(on, p, offset, written_by)
            zk.create(f"{root}/{name}/orders-spout/partition_{p}", data, makepath=True)
        scenarios.append(
            {
                "name": name,
                "zookeeper": zk_server.address,
                "zk_root": f"{root}/{name}",
                "spout_id": "orders-spout",
                "topic": on,
                "hosts": registry,
                "storm_id": STORM_ID,
                "idle_ms": 300,
                **settings,
            }
        )

    every = lambda offset: {p: offset for p in range(3)}  # noqa: E731
    scenario("stored-4", every(4))
    scenario("stored-4-unacked", every(4), ack=False)
    scenario("no-node-earliest", spout_config={"startOffsetTime": EARLIEST})
    scenario("no-node-latest", spout_config={"startOffsetTime": LATEST})
    scenario("above-log-end", every(50))
    scenario("above-log-end-no-reset", every(50), spout_config={"useStartOffsetTimeIfOffsetOutOfRange": False})
    for bad in range(3):
        scenario(
            f"one-above-log-end-no-reset-{bad}",
            {**every(4), bad: 50},
            spout_config={"useStartOffsetTimeIfOffsetOutOfRange": False},
        )
    scenario("one-above-log-end", {**every(4), 1: 50})
    scenario("below-log-start", {0: 2}, on=trimmed)
    scenario("below-log-start-latest", {0: 2}, on=trimmed, spout_config={"startOffsetTime": LATEST})
    scenario(
        "below-log-start-no-reset", {0: 2}, on=trimmed, spout_config={"useStartOffsetTimeIfOffsetOutOfRange": False}
    )
    scenario("stored-0-latest", every(0), spout_config={"startOffsetTime": LATEST})
    scenario("stored-0-earliest-trimmed", {0: 0}, on=trimmed, spout_config={"startOffsetTime": EARLIEST})
    scenario("static-hosts", every(4), hosts={"static": {p: broker for p in PARTITIONS}})
    scenario("registry-chroot-in-path", every(4), hosts={"zk": zk_server.address, "path": f"{BROKER39_CHROOT}/brokers"})
    scenario("max-behind-latest", every(4), spout_config={"startOffsetTime": LATEST, "maxOffsetBehind": 2})
    scenario("max-behind-earliest", every(4), spout_config={"startOffsetTime": EARLIEST, "maxOffsetBehind": 2})
    scenario("other-topology-ignored", every(4), written_by=OTHER_ID, spout_config={"ignoreZkOffsets": True})
    scenario("same-topology-ignored", every(4), spout_config={"ignoreZkOffsets": True})
    scenario("other-topology-kept", every(4), written_by=OTHER_ID)

    started = time.monotonic()
    reports = run_old_spouts(scenarios)
    took = time.monotonic() - started
    return {
        "by_name": {r["name"]: r for r in reports},
        "topic": topic,
        "trimmed": trimmed,
        "broker": broker,
        "stored": stored,
        "seconds": took,
        "node": node,
    }


@pytest.fixture(scope="module", autouse=True)
def _storm_kafka_jars():
    from tests.oracle.storm_kafka_spout import lib_dir

    try:
        lib_dir()
    except AssertionError as exc:
        if ALLOW_SKIP:
            pytest.skip(f"storm-kafka's jars not available (OFFCTL_ALLOW_SKIP=1): {exc}")
        raise


def _emitted(first: int, end: int = 10) -> list[int]:
    return list(range(first, end))


def test_a_stored_offset_inside_the_log_is_where_it_starts_and_the_acked_end_is_written_back(spouts):
    r, topic, node = spouts["by_name"]["stored-4"], spouts["topic"], spouts["node"]
    # PartitionManager.java:124-128 reads the node's topology id and offset; :144 keeps the offset (same topology);
    # :148 resets only past maxOffsetBehind (Long.MAX_VALUE by default, KafkaConfig.java:41) or at <= 0;
    # :156-157 starts there. fill() (:229-306) fetches from it; next() (:189-226) emits each message with a
    # KafkaMessageId(partition, offset).
    assert r["started_at"] == {p: 4 for p in PARTITIONS}
    assert r["first_emitted"] == {p: 4 for p in PARTITIONS}
    assert r["emitted"] == {p: _emitted(4) for p in PARTITIONS}
    assert r["errors"] == {} and not r["timed_out"]
    # Every id acked: _pending is empty, so lastCompletedOffset() is _emittedToOffset, the next offset after the
    # last fetched message (:298, :374-380); commit() (:349-368, called from deactivate, KafkaSpout.java:196-198)
    # writes it with the new topology's id and topology.name, json-simple's text (ZkState.java:68-71).
    assert r["written"] == {p: node(topic, int(p), 10).decode() for p in PARTITIONS}


def test_nothing_is_written_while_the_first_emitted_offset_is_unacked(spouts):
    r = spouts["by_name"]["stored-4-unacked"]
    assert r["first_emitted"] == {p: 4 for p in PARTITIONS} and r["emitted"] == {p: _emitted(4) for p in PARTITIONS}
    # lastCompletedOffset() is the first pending offset, 4 (PartitionManager.java:374-380), equal to _committedTo:
    # commit() writes nothing (:351), so the node keeps its bytes, old topology id and all.
    assert r["written"] == {}
    assert r["nodes"] == {p: spouts["stored"]["stored-4-unacked", p].decode() for p in PARTITIONS}


def test_b_no_node_and_earliest_start_at_the_log_start(spouts):
    r, topic, node = spouts["by_name"]["no-node-earliest"], spouts["topic"], spouts["node"]
    # No node: readJSON answers null (ZkState.java:88-98), so _committedTo is startOffsetTime's offset
    # (PartitionManager.java:135-139; KafkaUtils.getOffset, KafkaUtils.java:69-87: ListOffsets v0 for -2), 0 here.
    assert r["started_at"] == {p: 0 for p in PARTITIONS}
    assert r["first_emitted"] == {p: 0 for p in PARTITIONS}
    assert r["written"] == {p: node(topic, int(p), 10).decode() for p in PARTITIONS}


def test_c_no_node_and_latest_emit_nothing_that_is_there_and_write_no_node(spouts):
    r = spouts["by_name"]["no-node-latest"]
    # startOffsetTime -1: ListOffsets' latest, the log end 10 (PartitionManager.java:135-139).
    assert r["started_at"] == {p: 10 for p in PARTITIONS}
    assert r["first_emitted"] == {p: None for p in PARTITIONS} and r["emitted"] == {}
    # Nothing emitted: lastCompletedOffset() is _emittedToOffset 10, equal to _committedTo, so commit() never
    # writes (PartitionManager.java:351): the spout leaves no node at all until a message after 10 is acked.
    assert r["written"] == {} and r["nodes"] == {}
    assert r["errors"] == {}


def test_d_a_stored_offset_above_the_log_end_waits_there_and_is_never_rewritten(spouts):
    r = spouts["by_name"]["above-log-end"]
    # The node's 50 is kept (PartitionManager.java:144; 0 - 50 is not > maxOffsetBehind, :148).
    assert r["started_at"] == {p: 50 for p in PARTITIONS}
    # Fetch at 50: OFFSET_OUT_OF_RANGE, and useStartOffsetTimeIfOffsetOutOfRange (true by default) makes it a
    # TopicOffsetOutOfRangeException (KafkaUtils.java:210-215). fill() catches it (PartitionManager.java:243-277):
    # the log end 10 is below 50, so offset = 10 (:244-246), but _emittedToOffset only ever moves forward
    # (:270-274): 10 < 50, so it stays at 50. Not startOffsetTime's offset, despite the setting's name: the spout
    # fetches 50 again on every nextTuple, emits nothing until the log reaches 50, and never rewrites the node.
    assert r["first_emitted"] == {p: None for p in PARTITIONS} and r["emitted"] == {}
    for p in PARTITIONS:
        assert r["errors"][p] == [
            f"KafkaUtils: Partition{{host={spouts['broker']}, topic={spouts['topic']}, "
            f"partition={p}}} Got fetch request with offset out of range: [50]"
        ]
    assert "spout" not in r["errors"]
    assert r["written"] == {}
    assert r["nodes"] == {p: spouts["stored"]["above-log-end", p].decode() for p in PARTITIONS}


def test_d_without_the_reset_an_offset_out_of_range_stalls_the_spout_on_that_partition(spouts):
    r = spouts["by_name"]["above-log-end-no-reset"]
    first = str(r["visit_order"][0])
    assert r["started_at"] == {p: 50 for p in PARTITIONS}
    # useStartOffsetTimeIfOffsetOutOfRange=false: FailedFetchException (KafkaUtils.java:216-219), which nextTuple
    # catches and logs, then refreshes the coordinator (KafkaSpout.java:148-151) without moving _currPartitionIndex
    # (moved only after next() returns, :140-144): every call retries the same partition, the first it visits.
    assert r["emitted"] == {}
    assert list(r["errors"]) == [first]
    assert r["errors"][first] == [
        f"KafkaUtils: Error fetching data from [Partition{{host={spouts['broker']}, topic={spouts['topic']}, "
        f"partition={first}}}] for topic [{spouts['topic']}]: [OFFSET_OUT_OF_RANGE]",
        f"KafkaSpout: Fetch failed: org.apache.storm.kafka.FailedFetchException: Error fetching data from "
        f"[Partition{{host={spouts['broker']}, topic={spouts['topic']}, partition={first}}}] for topic "
        f"[{spouts['topic']}]: [OFFSET_OUT_OF_RANGE]",
    ]
    assert r["written"] == {}


@pytest.mark.parametrize("bad", [0, 1, 2])
def test_d_without_the_reset_one_partition_out_of_range_starves_those_visited_after_it(spouts, bad):
    r = spouts["by_name"][f"one-above-log-end-no-reset-{bad}"]
    order = [str(p) for p in r["visit_order"]]  # ZkCoordinator's HashMap order (ZkCoordinator.java:120)
    assert sorted(order) == list(PARTITIONS)
    before = order[: order.index(str(bad))]
    # nextTuple visits the managers in order (KafkaSpout.java:135-152); a partition before the bad one hands out
    # its one fetched batch (4-9) and moves the index on (:142-144); at the bad one every call fails and the index
    # stays (:148-151), so it never fetches again and the partitions after it are never fetched at all.
    assert r["emitted"] == {p: _emitted(4) for p in before}
    assert r["first_emitted"] == {p: (4 if p in before else None) for p in PARTITIONS}
    assert list(r["errors"]) == [str(bad)]
    # Acked: the partitions before it write 10; the rest write nothing.
    assert sorted(r["written"]) == sorted(before)


def test_d_with_the_reset_one_partition_out_of_range_does_not_hold_up_the_others(spouts):
    r = spouts["by_name"]["one-above-log-end"]
    # TopicOffsetOutOfRangeException is caught inside fill() (PartitionManager.java:243-277): next() answers
    # NO_EMITTED and nextTuple moves on (KafkaSpout.java:142-144).
    assert r["first_emitted"] == {"0": 4, "1": None, "2": 4}
    assert r["emitted"] == {"0": _emitted(4), "2": _emitted(4)}
    assert list(r["errors"]) == ["1"]
    assert sorted(r["written"]) == ["0", "2"]


def test_a_stored_offset_below_the_log_start_jumps_to_the_log_start_whatever_startoffsettime_says(spouts):
    trimmed, node = spouts["trimmed"], spouts["node"]
    for name in ("below-log-start", "below-log-start-latest"):
        r = spouts["by_name"][name]
        assert r["started_at"] == {"0": 2}, name  # the node's 2, kept (PartitionManager.java:144)
        # Out of range below the log start: the log end 10 is not below 2, so offset = the EARLIEST offset, 5
        # (PartitionManager.java:244-249), not startOffsetTime's (latest here would be 10); 5 > 2, so
        # _emittedToOffset moves to 5 (:270-274) and the next fill() fetches from there.
        assert r["first_emitted"] == {"0": TRIMMED_START}, name
        assert r["emitted"] == {"0": _emitted(TRIMMED_START)}, name
        partition = f"Partition{{host={spouts['broker']}, topic={trimmed}, partition=0}}"
        assert r["errors"] == {
            "0": [
                f"KafkaUtils: {partition} Got fetch request with offset out of range: [2]",
                f"PartitionManager: {partition} Using new offset: 5",
            ]
        }, name  # :273
        assert r["written"] == {"0": node(trimmed, 0, 10).decode()}, name


def test_a_stored_offset_below_the_log_start_without_the_reset_emits_nothing(spouts):
    r = spouts["by_name"]["below-log-start-no-reset"]
    assert r["started_at"] == {"0": 2} and r["emitted"] == {}  # FailedFetchException on every call (see above)
    assert any("[OFFSET_OUT_OF_RANGE]" in line for line in r["errors"]["0"])
    assert r["written"] == {}


def test_e_a_stored_0_counts_as_no_offset(spouts):
    r = spouts["by_name"]["stored-0-latest"]
    # `_committedTo <= 0` resets to startOffsetTime's offset (PartitionManager.java:148-154), as if there were no
    # node: with latest, the log end 10, though the node says 0 and messages 0-9 are there.
    assert r["started_at"] == {p: 10 for p in PARTITIONS}
    assert r["emitted"] == {}
    # And the node keeps its 0: nothing emitted, so nothing to commit (PartitionManager.java:351).
    assert r["written"] == {}
    assert r["nodes"] == {p: spouts["stored"]["stored-0-latest", p].decode() for p in PARTITIONS}
    trimmed = spouts["by_name"]["stored-0-earliest-trimmed"]
    # With earliest, the reset lands on the log start (5 on the trimmed topic) before any fetch.
    assert trimmed["started_at"] == {"0": TRIMMED_START} and trimmed["first_emitted"] == {"0": TRIMMED_START}
    assert trimmed["errors"] == {}


def test_f_static_hosts_and_either_registry_path_give_the_same_as_the_registry(spouts):
    reference = spouts["by_name"]["stored-4"]
    # StaticHosts: StaticCoordinator over the given GlobalPartitionInformation (StaticCoordinator.java:29-38); ZkHosts:
    # DynamicBrokersReader reads <brokerZkPath>/topics/<topic>/partitions and /ids/<leader> (:141-147, :186-197),
    # whether the chroot is in the connect string ("host:port/kafka39" with "/brokers") or the path
    # ("host:port" with "/kafka39/brokers"). The node records the partition's broker as host:port (:358-359).
    for name in ("static-hosts", "registry-chroot-in-path"):
        r = spouts["by_name"][name]
        for key in ("started_at", "first_emitted", "emitted", "errors", "written"):
            assert r[key] == reference[key], (name, key)


def test_max_offset_behind_is_measured_from_start_offset_times_offset_not_the_log_end(spouts):
    # PartitionManager.java:148: currentOffset - _committedTo > maxOffsetBehind, where currentOffset is
    # startOffsetTime's offset (:135), though the log line says "behind latest offset" (:152-153).
    latest = spouts["by_name"]["max-behind-latest"]
    assert latest["started_at"] == {p: 10 for p in PARTITIONS}  # 10 - 4 > 2: reset to the log end
    assert latest["emitted"] == {} and latest["written"] == {}
    earliest = spouts["by_name"]["max-behind-earliest"]
    assert earliest["started_at"] == {p: 4 for p in PARTITIONS}  # 0 - 4 is not > 2: kept, 6 behind the end
    assert earliest["first_emitted"] == {p: 4 for p in PARTITIONS}


def test_ignore_zk_offsets_applies_only_to_a_node_another_topology_wrote(spouts):
    topic, node = spouts["topic"], spouts["node"]
    other = spouts["by_name"]["other-topology-ignored"]
    # PartitionManager.java:140-142: ignoreZkOffsets and a different topology id: startOffsetTime's offset (0).
    assert other["started_at"] == {p: 0 for p in PARTITIONS}
    same = spouts["by_name"]["same-topology-ignored"]
    # Same topology id: the node's offset is kept (:143-145), ignoreZkOffsets or not.
    assert same["started_at"] == {p: 4 for p in PARTITIONS}
    kept = spouts["by_name"]["other-topology-kept"]
    # Not ignoring: another topology's offset is taken as it is, and the node written back carries this
    # topology's id (:353-360).
    assert kept["started_at"] == {p: 4 for p in PARTITIONS}
    assert kept["written"] == {p: node(topic, int(p), 10).decode() for p in PARTITIONS}


def test_one_jvm_runs_them_all(spouts):
    reports = spouts["by_name"].values()
    assert all(not r["timed_out"] and "spout" not in r["errors"] and "runner" not in r["errors"] for r in reports)
    assert spouts["seconds"] < 60, f"{len(reports)} scenarios took {spouts['seconds']:.1f} s"
    if os.environ.get("OFFCTL_SPOUT_TIMING"):
        print({r["name"]: r["seconds"] for r in reports}, f"total {spouts['seconds']:.1f} s")
