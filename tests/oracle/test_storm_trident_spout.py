"""tests/oracle/storm_trident_spout.py's two runners, checked on the real Trident spouts: Storm's
OpaquePartitionedTridentSpoutExecutor (storm-core 1.2.4, storm-client 2.8.3) around storm-kafka 1.2.4's
OpaqueTridentKafkaSpout on Kafka 3.9 and storm-kafka-client 2.8.3's KafkaTridentSpoutOpaque on Kafka 4.4.

One state per library, as a topology leaves it: two txids in each partition folder (RotatingTransactionalState:
the older one is cleaned up after the next success), the coordinator's currtx one past them, one partition without
state. The runner must start at currtx (MasterBatchCoordinator.getStoredCurrTransaction), hand the emitter the
highest txid's meta (OpaquePartitionedTridentSpoutExecutor.Emitter.emitBatch: getLastState), emit from where that meta
says, write the new batch's meta at commit, delete the older txids at success and move currtx on. The metas it writes
are byte for byte what offctl.faces.sandbox.trident_meta and client_trident_meta make for the same values, which the
scenario table (tests/oracle/test_trident_oracle_e2e.py) seeds its states with.
"""

from __future__ import annotations

import json

import pytest

from offctl.faces.sandbox import client_trident_meta, trident_meta
from tests.conftest import BROKER39_CHROOT
from tests.oracle.storm_trident_spout import run_client_trident, run_old_trident

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

STORM_ID = "orders-trident-2-1700000200"


def _seed(zk, root: str, sid: str, folders: dict[str, dict[int, bytes]], currtx: int) -> None:
    for folder, metas in folders.items():
        zk.create(f"{root}/{sid}/user/{folder}", b"7", makepath=True)  # RotatingTransactionalState: mkdir writes 7
        for txid, data in metas.items():
            zk.create(f"{root}/{sid}/user/{folder}/{txid}", data)
    zk.create(f"{root}/{sid}/coordinator/currtx", str(currtx).encode(), makepath=True)


def test_storm_kafka_trident_resumes_from_the_highest_txid_and_writes_the_next_one(
    zk_server, zk, broker39, kafka39, names
):
    topic, root, broker = kafka39.filled_topic(names("orders"), 3, 10), names.root + "/transactional", broker39.address
    _seed(
        zk,
        root,
        "sk",
        {
            f"partition_{p}": {
                7: trident_meta(topic, p, 1, 2, STORM_ID, broker),
                8: trident_meta(topic, p, 2, 4 + p, STORM_ID, broker),
            }
            for p in range(2)
        },
        currtx=9,
    )
    [got] = run_old_trident(
        [
            {
                "name": "resume",
                "zookeeper": zk_server.address,
                "transactional_root": root,
                "tx_state_id": "sk",
                "storm_id": STORM_ID,
                "topic": topic,
                "hosts": {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"},
            }
        ]
    )
    assert got["errors"] == {} and got["txids"] == [9] and got["partitions"] == [0, 1, 2], got
    assert got["first_emitted"] == {0: 4, 1: 5, 2: 0}  # nextOffset of txid 8; no state: startOffsetTime (earliest)
    assert {p: json.loads(m)["nextOffset"] for p, m in got["handed"].items() if m} == {0: 4, 1: 5}
    assert got["handed"][2] is None
    assert got["emitted"] == {0: [[9, 4, 9, 6]], 1: [[9, 5, 9, 5]], 2: [[9, 0, 9, 10]]}
    # commit wrote txid 9, success deleted 7 and 8 (cleanupBefore), byte for byte as trident_meta makes them
    assert got["nodes_after"] == {
        f"partition_{p}": {"9": trident_meta(topic, p, start, 10, STORM_ID, broker).decode()}
        for p, start in {0: 4, 1: 5, 2: 0}.items()
    }
    assert got["written"] == got["nodes_after"]
    assert zk.get(f"{root}/sk/coordinator/currtx")[0] == b"10"  # MasterBatchCoordinator.ack


def test_storm_kafka_client_trident_resumes_after_the_highest_txid_and_writes_the_next_one(
    zk_server, zk, broker, kafka, names
):
    topic, root = kafka.filled_topic(names("orders"), 3, 10), names.root + "/transactional"
    _seed(
        zk,
        root,
        "cl",
        {
            f"{topic}@{p}": {10: client_trident_meta(0, 1, STORM_ID), 11: client_trident_meta(2, 3 + p, STORM_ID)}
            for p in range(2)
        },
        currtx=12,
    )
    [got] = run_client_trident(
        [
            {
                "name": "resume",
                "zookeeper": zk_server.address,
                "transactional_root": root,
                "tx_state_id": "cl",
                "storm_id": STORM_ID,
                "topic": topic,
                "bootstrap_servers": broker.address,
            }
        ]
    )
    assert got["errors"] == {} and got["txids"][0] == 12 and got["partitions"] == [0, 1, 2], got
    assert got["first_emitted"] == {0: 4, 1: 5, 2: 0}  # lastOffset + 1 of txid 11 ("11" > "10" as numbers too)
    assert {p: json.loads(m)["lastOffset"] for p, m in got["handed"].items() if m} == {0: 3, 1: 4}
    last = got["txids"][-1]
    assert got["nodes_after"] == {
        f"{topic}@{p}": {str(last): client_trident_meta(start, 9, STORM_ID).decode()}
        for p, start in {0: 4, 1: 5, 2: 0}.items()
    }, got
    assert zk.get(f"{root}/cl/coordinator/currtx")[0] == str(last + 1).encode()


def test_a_runner_that_cannot_set_up_fails_with_its_stderr(zk_server):
    with pytest.raises(AssertionError, match="OldTridentRunner failed"):
        run_old_trident(
            [
                {
                    "name": "no topic",
                    "zookeeper": zk_server.address,
                    "transactional_root": "/x",
                    "tx_state_id": "sk",
                    "storm_id": STORM_ID,
                    "hosts": {"zk": zk_server.address},
                }
            ]
        )
