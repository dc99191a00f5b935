"""The TRANSACTIONAL (non-opaque) Trident Kafka spouts held to offctl, which models the opaque executor only.

Storm's PartitionedTridentSpoutExecutor around storm-kafka 1.2.4's TransactionalTridentKafkaSpout (Kafka 3.9) and
around storm-kafka-client 2.8.3's KafkaTridentSpoutTransactional (Kafka 4.4), driven as a topology drives them
(tests/oracle/storm_trident_spout.py, "executor": "transactional"; one JVM per library for the scenarios, and one before
it for the opaque spout that writes the hand-over states), on Trident state seeded as the spouts write it
(tests/oracle/test_trident_oracle_e2e.seed), with `offctl inspect --trident-root R --trident SID --per-partition` asked
first and the first offset each partition emits held to it by tests/oracle/test_spout_oracle_e2e.expected_first's rule.

What the transactional executor does (PartitionedTridentSpoutExecutor.Emitter.emitBatch; RotatingTransactionalState):
per partition, at storm-core v1.2.4 (:131-148): the state of the txid being emitted, if there is one, is that batch,
and it is emitted again exactly (getStateOrCreate answers it; emitPartitionBatch, TridentKafkaEmitter
.reEmitPartitionBatch: [offset, nextOffset)); else, when no later txid has state, a new batch from the highest
state below the txid (getState(txid, init), :83-110: emitPartitionBatchNew(..., prevData)), its meta written at
once, before any commit (there is none: the Emitter is no ICommitterTridentSpout.Emitter); else (a later txid has
state) the partition skips the txid and null is written. At storm-client v2.8.3 (:143-175) it is decided for the
task's partitions together: if any of them has state at the txid, every one is replayed from its state at the txid
(reEmitPartitionBatch, KafkaTridentSpoutEmitter :106-162, [firstOffset, lastOffset]); else emitBatchNew from each
one's getPreviousState(txid), the highest state below the txid. In the opaque executor the state of the txid being
emitted is dropped first (removeState) and the batch always starts from the highest other state
(OpaquePartitionedTridentSpoutExecutor v1.2.4 :135-145): so where the coordinator's currtx is one past every state
both agree, and where a state exists at currtx (a batch emitted, and for the transactional executor written, but
its commit never acked) or above it, they do not.

Scenarios (both libraries; two-txids and below-log-start storm-kafka's only): normal (currtx one past the highest
txid), two-txids, commit-not-acked (currtx == the highest txid), emit-interrupted (currtx == the highest txid, which
one partition lacks: a worker that died while the executor wrote the metas one by one), emitted-ahead (states above
currtx: batches emitted, never committed), no-state (nothing under user/), no-state-some-partitions, out-of-range
replays, a replay of another deployment's batch, the opaque spout's state read by the transactional spout (acked, and
with its last ack lost), and offctl's reset followed by the transactional spout. Where they disagree the scenario is
xfail(strict=True) with the reason (OLD_DISAGREE, CLIENT_DISAGREE); none is left. The runs changed offctl: it reads
every batch stored at or past currtx and, where the transactional replay begins elsewhere than the opaque resume (or,
storm-kafka-client 2.x, the batch is not empty: its single replay poll may come back empty), says it cannot tell
(TRIDENT_REPLAY); a partition whose only state is at currtx is one the opaque spout starts as with none
(MISSING_PARTITION where the replay begins there too); and a reset rewrites the batches at or past currtx with the
txid below, so that both executors go on from the target.
"""

from __future__ import annotations

import json
import time

import pytest

from offctl.faces.sandbox import client_trident_meta, trident_meta
from tests.conftest import BROKER39_CHROOT
from tests.oracle.test_spout_oracle_e2e import NO_EMIT, expected_first, inspect, old_flags
from tests.oracle.test_trident_oracle_e2e import (
    EARLIEST,
    LATEST,
    LOG_END,
    NEW_ID,
    OTHER_ID,
    REPAIRS,
    STORM_ID,
    TIMINGS,
    repaired,
    reset_stopped,
    seed,
    timed,
    topics_and_roots,
)

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

HANDOVER_MORE = 5  # records produced to each hand-over partition after the opaque spout ran
TX = {"executor": "transactional"}


def verdicts(doc: dict) -> dict[int, tuple[int | None, str | None, int | None]]:
    """tests/oracle/test_spout_oracle_e2e.verdicts, tolerating a MISSING_PARTITION finding without resumes_at."""
    out = {p["partition"]: (p["resumes_at"], p["resumes"], p["log_end"]) for p in doc["partitions"]}
    for f in doc["findings"]:
        if f["code"] == "MISSING_PARTITION":
            out[f["partition"]] = (f.get("resumes_at"), f.get("resumes"), None)
    return out


def currtx(zk, root: str, sid: str, value: int | None) -> None:
    """The coordinator's currtx set to `value` (None: the highest txid under user/, a lost ack)."""
    if value is None:
        user = f"{root}/{sid}/user"
        value = max(int(t) for folder in zk.get_children(user) for t in zk.get_children(f"{user}/{folder}"))
    zk.set(f"{root}/{sid}/coordinator/currtx", str(value).encode())


def agree(name: str, said: dict, ran: dict, log_end_default: int = LOG_END) -> None:
    """Per partition of offctl's answer and of the spout's coordinator: the first offset emitted is expected_first's;
    where offctl names a position and the partition's first batch was a new one, it started there (a replay starts
    where its stored batch did, and the spout may skip it: another deployment's, TridentKafkaEmitter v1.2.4 :167-168,
    KafkaTridentSpoutEmitter v2.8.3 :116-121); where offctl says the emitter throws, the run threw."""
    assert ran["partitions"], (name, ran)
    shown = {k: ran[k] for k in ("first_emitted", "started_at", "handed", "replayed", "errors", "written", "log")}
    for p in sorted(set(said) | set(ran["partitions"])):
        assert p in said, (name, p, "offctl gave no verdict", said, shown)
        resumes_at, resumes, log_end = said[p]
        want = expected_first(resumes_at, resumes, log_end_default if log_end is None else log_end)
        if want == "not compared":
            continue
        got = ran["first_emitted"].get(p)
        if resumes == "crashes":
            assert ran["errors"], (name, p, said[p], "offctl says the emitter throws; it did not", shown)
            continue
        assert got == want, (name, p, said[p], shown)
        if resumes not in NO_EMIT and resumes_at is not None and p not in ran["replayed"]:
            assert ran["started_at"].get(p) == resumes_at, (name, p, said[p], shown)


# --- storm-kafka 1.2.4: TransactionalTridentKafkaSpout, Kafka 3.9 ------------------------------------------------

# name: ({partition: {txid: nextOffset}} (each meta a one-record batch [nextOffset - 1, nextOffset), as
#        tests/oracle/test_trident_oracle_e2e's), TridentKafkaConfig settings, topic ("orders": 3 partitions, "trimmed":
#        1, log start 5), the topology that wrote the metas, currtx: True one past the highest txid, False the highest
#        txid, or a number)
OLD = {
    "normal": ({0: {8: 4}, 1: {8: 7}, 2: {8: 9}}, {}, "orders", STORM_ID, True),
    "two-txids": ({0: {9: 2, 10: 6}, 1: {9: 8, 10: 3}, 2: {10: 5}}, {}, "orders", STORM_ID, True),
    "commit-not-acked": ({0: {9: 2, 10: 6}, 1: {9: 8, 10: 3}, 2: {10: 5}}, {}, "orders", STORM_ID, False),
    "emit-interrupted": ({0: {9: 2, 10: 6}, 1: {9: 8, 10: 3}, 2: {9: 5}}, {}, "orders", STORM_ID, False),
    "emitted-ahead": (
        {0: {9: 2, 10: 4, 11: 6}, 1: {9: 8, 10: 9, 11: 3}, 2: {9: 1, 10: 2, 11: 5}},
        {},
        "orders",
        STORM_ID,
        10,
    ),
    "no-state": ({}, {"startOffsetTime": EARLIEST}, "orders", STORM_ID, True),
    "no-state-some-partitions": ({0: {8: 4}}, {"startOffsetTime": LATEST}, "orders", STORM_ID, True),
    "commit-not-acked-ignore-zk-offsets-other-topology": (
        {0: {9: 2, 10: 6}, 1: {9: 8, 10: 3}, 2: {10: 5}},
        {"ignoreZkOffsets": True},
        "orders",
        OTHER_ID,
        False,
    ),
    "below-log-start": ({0: {8: 2}}, {}, "trimmed", STORM_ID, True),
    "below-log-start-commit-not-acked": ({0: {8: 2}}, {}, "trimmed", STORM_ID, False),
}
# Where the transactional spout does something else than offctl says: nothing, since offctl reads the batches stored
# at or past currtx (TRIDENT_REPLAY, and a partition whose only state is there: stored.malformed_record) and a reset
# rewrites them. The scenarios that first showed it, with what the spout did (tags storm-core and storm-kafka
# v1.2.4): commit-not-acked (currtx 10 the highest txid: PartitionedTridentSpoutExecutor.Emitter.emitBatch :131-147
# replays txid 10's batches, 5, 2 and 4, through RotatingTransactionalState.getStateOrCreate :135-144 and
# TridentKafkaEmitter.reEmitPartitionBatch :165-188, where offctl said 9's nextOffset), handover-ack-lost (the only
# txid is currtx: the opaque executor drops it, OpaquePartitionedTridentSpoutExecutor :138-141, the transactional one
# replays it), below-log-start-commit-not-acked (the replay of [1, 2) below the log start 5 throws
# TopicOffsetOutOfRangeException, which reEmitPartitionBatch does not catch, on every attempt: it never moves) and
# repair-not-acked (a reset of txid 7 alone: txid 8's stored batch is replayed, and the reset does nothing).
OLD_DISAGREE: dict[str, str] = {}
OLD_REPAIR_DISAGREE: dict[str, str] = {}
OLD_HANDOVER = {"handover": True, "handover-ack-lost": False}  # the opaque spout's state; whether its ack stands


@pytest.fixture(scope="module")
def old_tx(zk_server, zk, broker39, kafka39, tmp_path_factory):
    from tests.oracle.storm_trident_spout import run_old_trident

    prefix = f"trident-tx-{time.time_ns()}"
    topics, running, stopped = topics_and_roots(kafka39, zk, prefix, 5)
    topics["handover"] = kafka39.filled_topic(f"{prefix}-handover", 3, LOG_END)
    broker = broker39.address
    hosts = {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"}

    def meta(topic: str, p: int, spec: int, writer: str) -> bytes:
        return trident_meta(topic, p, max(spec - 1, 0), spec, writer, broker)

    def scenario(name: str, root: str, topic: str, settings: dict, storm_id: str = STORM_ID, **more) -> dict:
        return {
            "name": name,
            "zookeeper": zk_server.address,
            "transactional_root": root,
            "tx_state_id": "sk",
            "storm_id": storm_id,
            "topic": topic,
            "hosts": hosts,
            "spout_config": settings,
            **more,
        }

    docs = {}

    def ask(root: str, topic: str, settings: dict) -> dict:
        doc = inspect(
            "--zk",
            zk_server.address,
            "--trident-root",
            root,
            "--trident",
            "sk",
            "--topic",
            topic,
            "--storm-root",
            running,
            "--bootstrap-servers",
            broker,
            *old_flags(settings),
        )
        docs[root.split("/")[2]] = doc
        return verdicts(doc)

    # the opaque spout writes the hand-over states (its own JVM: what it wrote must be read before the next call)
    writers = [scenario(name, f"/{prefix}/{name}/transactional", topics["handover"], {}) for name in OLD_HANDOVER]
    wrote = {
        r["name"]: r for r in timed("storm-kafka 1.2.4 opaque (hand-over writer)", "old", run_old_trident, writers)
    }
    for p in range(3):
        kafka39.produce(topics["handover"], p, HANDOVER_MORE)

    scenarios, offctl = [], {}
    for name, acked in OLD_HANDOVER.items():
        root = f"/{prefix}/{name}/transactional"
        if not acked:
            currtx(zk, root, "sk", None)
        offctl[name] = ask(root, topics["handover"], {})
        scenarios.append(scenario(name, root, topics["handover"], {}, **TX))
    for name, (states, settings, on, writer, acked) in OLD.items():
        topic, root = topics[on], f"/{prefix}/{name}/transactional"
        seed(
            zk,
            root,
            "sk",
            {
                f"partition_{p}": {txid: meta(topic, p, spec, writer) for txid, spec in metas.items()}
                for p, metas in states.items()
            },
            acked=acked is not False,
        )
        if not isinstance(acked, bool):
            currtx(zk, root, "sk", acked)
        offctl[name] = ask(root, topic, settings)
        scenarios.append(scenario(name, root, topic, settings, **TX))
    plans = {}
    for name, acked in REPAIRS.items():  # as tests/oracle/test_trident_oracle_e2e's, then the transactional spout
        root, backups = f"/{prefix}/{name}/transactional", tmp_path_factory.mktemp(f"old-tx-{name}")
        plans[name] = reset_stopped(
            zk,
            zk_server,
            root,
            "sk",
            {
                f"partition_{p}": {
                    7: meta(topics["orders"], p, 2, STORM_ID),
                    8: meta(topics["orders"], p, 3 + p, STORM_ID),
                }
                for p in range(3)
            },
            acked,
            broker,
            stopped,
            backups,
            6,
        )
        scenarios.append(scenario(name, root, topics["orders"], {}, NEW_ID, **TX))
    ran = {r["name"]: r for r in timed("storm-kafka 1.2.4 transactional", "old", run_old_trident, scenarios)}
    return offctl, ran, plans, wrote, docs, topics


def xfail(names, disagree: dict[str, str]) -> list:
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=disagree[n])) if n in disagree else n for n in names
    ]


@pytest.mark.parametrize("name", xfail(sorted(OLD_HANDOVER) + sorted(set(OLD) - {"no-state"}), OLD_DISAGREE))
def test_storm_kafka_1_2_4_transactional_starts_where_offctl_says(old_tx, name):
    offctl, ran, *_ = old_tx
    agree(name, offctl[name], ran[name])


@pytest.mark.parametrize("name", xfail(sorted(REPAIRS), OLD_REPAIR_DISAGREE))
def test_storm_kafka_transactional_reset_then_the_spout_starts_where_the_plan_said(old_tx, name):
    offctl, ran, plans, *_ = old_tx
    r = repaired((offctl, ran, plans), 6, name)
    assert {p: json.loads(m)["nextOffset"] for p, m in r["handed"].items()} == {0: 6, 1: 6, 2: 6}


def stored(r: dict, folder_of, txid: int) -> dict[int, dict]:
    """partition -> the meta stored at `txid` before the run, parsed."""
    return {folder_of(f): json.loads(nodes[str(txid)]) for f, nodes in r["nodes_before"].items() if str(txid) in nodes}


def replayed(r: dict) -> dict[int, dict]:
    return {p: json.loads(metas[0]) for p, metas in r["replayed"].items()}


def old_folder(folder: str) -> int:
    return int(folder.rsplit("_", 1)[1])


def test_storm_kafka_transactional_replays_the_batch_stored_at_currtx(old_tx):
    """The rule, where it differs from the opaque executor's: a partition with state at the txid emitted replays
    exactly that batch, [offset, nextOffset), and nothing is written for it (PartitionedTridentSpoutExecutor v1.2.4
    :134-147); one without state there emits anew from the highest state below (emit-interrupted's partition 2) and
    its meta is written at once, with no commit. After offctl's reset (repair-not-acked) the batch at currtx is the
    empty one at the target that the reset wrote: replayed as nothing, then the next batch starts there."""
    _, ran, *_ = old_tx
    for name, currtx_, replays in (
        ("commit-not-acked", 10, {0: 5, 1: 2, 2: 4}),
        ("emitted-ahead", 10, {0: 3, 1: 8, 2: 1}),
        ("handover-ack-lost", 1, {0: 0, 1: 0, 2: 0}),
        ("emit-interrupted", 10, {0: 5, 1: 2}),
        ("repair-not-acked", 8, {0: 6, 1: 6, 2: 6}),
    ):
        r = ran[name]
        assert replayed(r) == stored(r, old_folder, currtx_), (name, r["replayed"])
        assert {p: m["offset"] for p, m in replayed(r).items()} == replays, name
        assert {p: r["first_emitted"][p] for p in replays} == replays, (name, r["first_emitted"])
        assert not any(str(currtx_) in nodes for f, nodes in r["written"].items() if old_folder(f) in replays), name
    r = ran["emit-interrupted"]
    assert r["first_emitted"][2] == 5 and json.loads(r["written"]["partition_2"]["10"])["offset"] == 5, r
    r = ran["below-log-start-commit-not-acked"]
    assert r["written"] == {} and "TopicOffsetOutOfRangeException" in r["errors"]["batch"][0], r


def test_storm_kafka_transactional_no_state(old_tx):
    """No state at all: offctl names no partition (CONSUMER_NOT_FOUND), and the spout starts every partition as the
    opaque one would, from startOffsetTime (emitPartitionBatchNew with lastMeta null: the same
    doEmitNewPartitionBatch)."""
    offctl, ran, _, _, docs, _ = old_tx
    assert offctl["no-state"] == {} and [f["code"] for f in docs["no-state"]["findings"]] == ["CONSUMER_NOT_FOUND"]
    r = ran["no-state"]
    assert r["first_emitted"] == r["started_at"] == {0: 0, 1: 0, 2: 0} and r["replayed"] == {}, r


def test_storm_kafka_transactional_and_opaque_write_the_same_bytes(old_tx, broker39):
    """Every meta the transactional spout wrote, and every one the opaque spout wrote (the hand-over writers), is
    trident_meta of its own values byte for byte: both come from TridentKafkaEmitter.doEmitNewPartitionBatch
    (v1.2.4 :139-148; asTransactionalEmitter's emitPartitionBatchNew and asOpaqueEmitter's emitPartitionBatch both
    reach it). Nothing in a node tells which executor wrote it."""
    _, ran, _, wrote, _, _ = old_tx
    seen = 0
    for r in [*ran.values(), *wrote.values()]:
        for nodes in r["written"].values():
            for data in nodes.values():
                doc = json.loads(data)
                assert data.encode() == trident_meta(
                    doc["topic"],
                    doc["partition"],
                    doc["offset"],
                    doc["nextOffset"],
                    doc["instanceId"],
                    broker39.address,
                ), data
                seen += 1
    assert seen > 20


# --- storm-kafka-client 2.8.3: KafkaTridentSpoutTransactional, Kafka 4.4 -----------------------------------------

# name: ({partition: {txid: (firstOffset, lastOffset)}}, firstPollOffsetStrategy, topic ("orders", or "trimmed":
#        1 partition, log start 4), the topology that wrote the metas, currtx as OLD's). Where currtx is one past every
#        state the executor calls the same emitBatchNew as the opaque one, from the same state (getPreviousState and
#        getLastState agree): "normal" stands for tests/oracle/test_trident_oracle_e2e's other such CLIENT scenarios.
CLIENT = {
    "normal": ({0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}}, "UNCOMMITTED_EARLIEST", "orders", STORM_ID, True),
    "commit-not-acked": (
        {0: {9: (0, 1), 10: (4, 5)}, 1: {9: (6, 7), 10: (2, 2)}, 2: {10: (3, 4)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
        False,
    ),
    "emit-interrupted": (
        {0: {9: (0, 1), 10: (4, 5)}, 1: {9: (6, 7), 10: (2, 2)}, 2: {9: (3, 4)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
        False,
    ),
    "emitted-ahead": (
        {
            0: {9: (0, 1), 10: (2, 3), 11: (4, 5)},
            1: {9: (6, 7), 10: (8, 8), 11: (2, 2)},
            2: {9: (0, 0), 10: (1, 1), 11: (3, 4)},
        },
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
        10,
    ),
    "no-state": ({}, "UNCOMMITTED_EARLIEST", "orders", STORM_ID, True),
    "no-state-some-partitions": ({0: {8: (2, 3)}}, "UNCOMMITTED_LATEST", "orders", STORM_ID, True),
    "commit-not-acked-earliest-other-deployment": (
        {0: {9: (0, 1), 10: (4, 5)}, 1: {9: (6, 7), 10: (2, 2)}, 2: {10: (3, 4)}},
        "EARLIEST",
        "orders",
        OTHER_ID,
        False,
    ),
    "below-log-start-commit-not-acked": ({0: {8: (0, 1)}}, "UNCOMMITTED_EARLIEST", "trimmed", STORM_ID, False),
}
# Tags storm-client and storm-kafka-client v2.8.3. A replay polls once (KafkaTridentSpoutEmitter :141, 200 ms) with the
# other partitions paused; after the first partition's replay the consumer's next fetch for it waits at the log end
# (fetch.max.wait.ms, 500 ms), so a later partition's replay may emit nothing, and the next txid then starts at its
# replayed meta's lastOffset + 1 (reEmitPartitionBatch records no first seek, :310-312, so that is the first poll's
# lastBatchMeta branch, :265-267): offctl says it cannot tell for a non-empty batch (trident.replay_span), which the
# runs first showed as disagreements: commit-not-acked (every partition's batch at 10 replayed, from 4, 2, 3, or, come
# back empty, 6, 3, 5 on the next txid), handover-ack-lost (partitions 0 and 2 skipped [0, 9] and began at 10),
# below-log-start-commit-not-acked (the replay of [0, 1] below the log start 4 moves the consumer to the log end,
# 10, with no auto.offset.reset set by KafkaTridentSpoutConfig), repair-not-acked (as storm-kafka's).
CLIENT_DISAGREE: dict[str, str] = {}
CLIENT_REPAIR_DISAGREE: dict[str, str] = {}
CLIENT_HANDOVER = {"handover": True, "handover-ack-lost": False}


@pytest.fixture(scope="module")
def client_tx(zk_server, zk, broker, kafka, tmp_path_factory):
    from tests.oracle.storm_trident_spout import run_client_trident

    prefix = f"trident-tx-client-{time.time_ns()}"
    topics, running, stopped = topics_and_roots(kafka, zk, prefix, 4)
    topics["handover"] = kafka.filled_topic(f"{prefix}-handover", 3, LOG_END)

    def scenario(name: str, root: str, topic: str, strategy: str, storm_id: str = STORM_ID, **more) -> dict:
        return {
            "name": name,
            "zookeeper": zk_server.address,
            "transactional_root": root,
            "tx_state_id": "cl",
            "storm_id": storm_id,
            "topic": topic,
            "bootstrap_servers": broker.address,
            "first_poll_offset_strategy": strategy,
            **more,
        }

    docs = {}

    def ask(root: str, strategy: str) -> dict:
        doc = inspect(
            "--zk",
            zk_server.address,
            "--trident-root",
            root,
            "--trident",
            "cl",
            "--storm-root",
            running,
            "--bootstrap-servers",
            broker.address,
            "--storm-kafka-client-release",
            "2.8.8",
            "--first-poll-offset-strategy",
            strategy,
        )
        docs[root.split("/")[2]] = doc
        return verdicts(doc)

    writers = [
        scenario(name, f"/{prefix}/{name}/transactional", topics["handover"], "UNCOMMITTED_EARLIEST")
        for name in CLIENT_HANDOVER
    ]
    wrote = {
        r["name"]: r
        for r in timed("storm-kafka-client 2.8.3 opaque (hand-over writer)", "client", run_client_trident, writers)
    }
    for p in range(3):
        kafka.produce(topics["handover"], p, HANDOVER_MORE)

    scenarios, offctl = [], {}
    for name, acked in CLIENT_HANDOVER.items():
        root = f"/{prefix}/{name}/transactional"
        if not acked:
            currtx(zk, root, "cl", None)
        offctl[name] = ask(root, "UNCOMMITTED_EARLIEST")
        scenarios.append(scenario(name, root, topics["handover"], "UNCOMMITTED_EARLIEST", **TX))
    for name, (states, strategy, on, writer, acked) in CLIENT.items():
        topic, root = topics[on], f"/{prefix}/{name}/transactional"
        seed(
            zk,
            root,
            "cl",
            {
                f"{topic}@{p}": {txid: client_trident_meta(*spec, writer) for txid, spec in metas.items()}
                for p, metas in states.items()
            },
            acked=acked is not False,
        )
        if not isinstance(acked, bool):
            currtx(zk, root, "cl", acked)
        offctl[name] = ask(root, strategy)
        scenarios.append(scenario(name, root, topic, strategy, **TX))
    plans = {}
    for name, acked in REPAIRS.items():
        root, backups = f"/{prefix}/{name}/transactional", tmp_path_factory.mktemp(f"client-tx-{name}")
        plans[name] = reset_stopped(
            zk,
            zk_server,
            root,
            "cl",
            {
                f"{topics['orders']}@{p}": {
                    7: client_trident_meta(0, 1, STORM_ID),
                    8: client_trident_meta(2, 3 + p, STORM_ID),
                }
                for p in range(3)
            },
            acked,
            broker.address,
            stopped,
            backups,
            7,
        )
        scenarios.append(scenario(name, root, topics["orders"], "UNCOMMITTED_EARLIEST", NEW_ID, **TX))
    ran = {
        r["name"]: r for r in timed("storm-kafka-client 2.8.3 transactional", "client", run_client_trident, scenarios)
    }
    return offctl, ran, plans, wrote, docs, topics


@pytest.mark.parametrize("name", xfail(sorted(CLIENT_HANDOVER) + sorted(set(CLIENT) - {"no-state"}), CLIENT_DISAGREE))
def test_storm_kafka_client_2_8_transactional_starts_where_offctl_says(client_tx, name):
    offctl, ran, *_ = client_tx
    agree(name, offctl[name], ran[name])


@pytest.mark.parametrize("name", xfail(sorted(REPAIRS), CLIENT_REPAIR_DISAGREE))
def test_storm_kafka_client_transactional_reset_then_the_spout_starts_where_the_plan_said(client_tx, name):
    offctl, ran, plans, *_ = client_tx
    r = repaired((offctl, ran, plans), 7, name)
    assert {p: json.loads(m)["lastOffset"] for p, m in r["handed"].items()} == {0: 6, 1: 6, 2: 6}


def client_folder(folder: str) -> int:
    return int(folder.rsplit("@", 1)[1])


def test_storm_kafka_client_transactional_replays_the_batches_stored_at_currtx(client_tx):
    """2.x's rule: if any partition of the task has state at the txid, every one is replayed from its state there
    (reEmitPartitionBatch, seek to firstOffset; null where it has none, which throws), nothing written; else
    emitBatchNew from each one's highest state below the txid (PartitionedTridentSpoutExecutor v2.8.3 :143-175).
    Which meta each replay was handed is checked, not what it emitted (see CLIENT_DISAGREE on the single poll)."""
    _, ran, *_ = client_tx
    for name, currtx_ in (
        ("commit-not-acked", 10),
        ("emitted-ahead", 10),
        ("handover-ack-lost", 1),
        ("repair-not-acked", 8),
    ):
        r = ran[name]
        assert replayed(r) == stored(r, client_folder, currtx_), (name, r["replayed"])
        assert set(replayed(r)) == {0, 1, 2} and r["errors"] == {}, (name, r)
        assert not any(str(currtx_) in nodes for nodes in r["written"].values()), name
        assert {p: r["started_at"][p] for p in (0, 1, 2)} == {p: m["firstOffset"] for p, m in replayed(r).items()}
    r = ran["emit-interrupted"]
    assert r["replayed"][2] == [None] and r["written"] == {}, r
    assert r["errors"]["batch"][0].startswith("emitBatch txid 10: java.lang.NullPointerException"), r["errors"]
    r = ran["below-log-start-commit-not-acked"]
    assert r["replayed"] and r["first_emitted"] == {0: None} and r["errors"] == {}, r


def test_storm_kafka_client_transactional_no_state(client_tx):
    offctl, ran, _, _, docs, _ = client_tx
    assert offctl["no-state"] == {} and [f["code"] for f in docs["no-state"]["findings"]] == ["CONSUMER_NOT_FOUND"]
    r = ran["no-state"]
    assert r["first_emitted"] == r["started_at"] == {0: 0, 1: 0, 2: 0} and r["replayed"] == {}, r


def test_storm_kafka_client_transactional_and_opaque_write_the_same_bytes(client_tx):
    """Both spouts' metas come from KafkaTridentSpoutEmitter.emitBatchNew (v2.8.3 :186-197,
    KafkaTridentSpoutBatchMetadata.toMap): client_trident_meta of its own values, byte for byte, whichever executor
    wrote it."""
    _, ran, _, wrote, _, _ = client_tx
    seen = 0
    for r in [*ran.values(), *wrote.values()]:
        for nodes in r["written"].values():
            for data in nodes.values():
                doc = json.loads(data)
                assert data.encode() == client_trident_meta(doc["firstOffset"], doc["lastOffset"], doc["topologyId"])
                seen += 1
    assert seen > 20


def test_timings(old_tx, client_tx):
    """Not a check: the JVM calls' and scenarios' wall times, for `pytest -s`."""
    print(json.dumps(TIMINGS, indent=1))


@pytest.mark.parametrize("fixture", ["old_tx", "client_tx"])
def test_a_reset_with_a_batch_stored_at_currtx_rewrites_it_and_says_so(request, fixture):
    """repair-not-acked: currtx 8 holds a batch, which the transactional spout replays before it goes on; the reset
    rewrites it too (its own row, `batch` 8, no cost of its own), and the spout then starts at the target (the
    repair test above); the acked repair has no such row."""
    _, _, plans, *_ = request.getfixturevalue(fixture)
    for name, acked in REPAIRS.items():
        rows = [c for c in plans[name]["changes"] if c["batch"] is not None]
        assert len(rows) == (0 if acked else 3), (name, plans[name]["changes"])
        for c in rows:
            assert c["path"].endswith("/8") and c["action"] == "write" and c["cost"] is None, c
            assert "txid 8 holds a batch at or past the coordinator's currtx" in " ".join(c["reasons"]), c
