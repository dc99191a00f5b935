"""Storm itself says what a Trident spout does (issue 36): offctl's `resumes_at` and `resumes` for Trident state held
to Storm's REAL opaque Trident Kafka spouts.

Each scenario is Trident state written to the test ZooKeeper under its own transactional root as Storm writes it
(<root>/<txStateId>/user/<partition id>/<txid>, the batch meta as json-simple writes a HashMap, the partition folder
holding 7, the coordinator's currtx one past the highest txid: offctl.faces.sandbox.trident_meta and
client_trident_meta, held byte for byte to what the real spouts write in tests/oracle/test_storm_trident_spout.py), the
log state in the real broker, and the spout's settings. `offctl inspect --trident-root ... --trident ... --per-partition
-o json` speaks first; then the real spout runs on the same stores (tests/oracle/storm_trident_spout.py: Storm's
OpaquePartitionedTridentSpoutExecutor around storm-kafka 1.2.4's OpaqueTridentKafkaSpout on Kafka 3.9, and around
storm-kafka-client 2.8.3's KafkaTridentSpoutOpaque on Kafka 4.4; all scenarios of a library in one JVM), from the
coordinator's currtx on, until every partition has emitted or a few batches in a row emitted nothing new. For every
partition the first offset the spout emits must be what offctl said, by
tests/oracle/test_spout_oracle_e2e.expected_first's rule (resumes_at, or nothing when resumes_at is the log end or
offctl says nothing is emitted); where offctl names the log start or end or the stored offset, the spout's first batch
must also have started there (its meta's offset, or firstOffset / lastOffset + 1) and been committed (the executor wrote
its meta): a batch that throws is never committed, so partitions that emitted in it never get past it
(no-next-offset-last).

Then a repair per library: `offctl reset --trident sk|cl --to offset --offset N --execute` on a stopped topology's
state, and the spout of the next deployment starts every partition at N, as the plan said.

Where the spout did something else than offctl said, offctl was fixed (OLD_DISAGREE and CLIENT_DISAGREE say what
the runs showed); a scenario that disagrees again is to be marked xfail(strict=True) with the disagreement until
offctl is fixed. docs/storm.md, "Run on the real spouts", lists what ran.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from offctl.faces.sandbox import client_trident_meta, trident_meta
from tests.conftest import BROKER39_CHROOT, invoke
from tests.oracle.test_spout_oracle_e2e import NO_EMIT, expected_first, inspect, old_flags, verdicts

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

STORM_ID = "orders-trident-1-1700000000"  # the running topology: what the runner's context reports
OTHER_ID = "orders-trident-7-1690000000"  # an earlier deployment
NEW_ID = "orders-trident-2-1700009999"  # the deployment started after a repair
EARLIEST, LATEST = -2, -1
LOG_END = 10  # every partition of the test topics holds offsets up to 10
TIMINGS: dict[str, dict] = {}  # family -> the JVM call's wall time and each scenario's, printed at the end


def write(*args: str) -> dict:
    result = invoke([*args, "--execute", "--yes", "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def seed(zk, root: str, sid: str, folders: dict[str, dict[int, bytes]], acked: bool = True) -> None:
    """Trident state as the executor leaves it: each folder (mkdir writes 7) with its txid nodes, and the
    coordinator's currtx one past the highest txid (MasterBatchCoordinator.ack writes txid + 1); not `acked`: at
    the highest txid, as a worker that died between the commit of a batch and its ack leaves it."""
    zk.ensure_path(f"{root}/{sid}/user")
    highest = 0
    for folder, metas in folders.items():
        zk.create(f"{root}/{sid}/user/{folder}", b"7", makepath=True)
        for txid, data in metas.items():
            zk.create(f"{root}/{sid}/user/{folder}/{txid}", data)
            highest = max(highest, txid)
    zk.create(f"{root}/{sid}/coordinator/currtx", str(highest + acked).encode(), makepath=True)


def agree(name: str, said: dict, ran: dict) -> None:
    """The rule, per partition of the spout's coordinator and of offctl's answer; and a partition offctl says the
    spout resumes (stored, log-start, log-end) must have its first batch committed: the executor wrote its meta."""
    assert ran["partitions"], (name, ran)
    committed = {int(re.search(r"(\d+)$", folder).group(1)) for folder in ran["written"]}
    for p in sorted(set(said) | set(ran["partitions"])):
        assert p in said, (name, p, "offctl gave no verdict", said, ran)
        resumes_at, resumes, log_end = said[p]
        log_end = LOG_END if log_end is None else log_end
        want = expected_first(resumes_at, resumes, log_end)
        if want == "not compared":
            continue
        shown = {k: ran[k] for k in ("first_emitted", "started_at", "handed", "errors", "log")}
        got = ran["first_emitted"].get(p)
        if resumes == "crashes":  # the emitter throws, and it never moves: it emits nothing, or what it emitted
            assert ran["errors"], (name, p, said[p], "offctl says the emitter throws; it did not", shown)
            assert got is None or p not in committed, (name, p, said[p], "it moved", shown)  # before the throw is
            continue  # never committed
        got = ran["first_emitted"].get(p)
        assert got == want, (name, p, said[p], shown)
        if resumes in NO_EMIT:
            continue
        assert p in committed, (name, p, said[p], "its batch was never committed", shown)
        if resumes_at is not None:
            assert ran["started_at"].get(p) == resumes_at, (name, p, said[p], ran["started_at"], ran["returned"])


def reset_stopped(
    zk,
    zk_server,
    root: str,
    sid: str,
    folders: dict[str, dict[int, bytes]],
    acked: bool,
    broker: str,
    stopped: str,
    backups,
    offset: int,
) -> dict:
    """A stopped topology's Trident state seeded (seed), then `offctl reset --trident SID --to offset --offset N
    --execute --yes` on it, its backup and audit log under `backups`: the plan's JSON."""
    seed(zk, root, sid, folders, acked=acked)
    return write(
        "reset",
        "--zk",
        zk_server.address,
        "--trident-root",
        root,
        "--trident",
        sid,
        "--bootstrap-servers",
        broker,
        "--storm-root",
        stopped,
        "--backup-dir",
        str(backups / "backups"),
        "--audit-log",
        str(backups / "audit.jsonl"),
        "--quiet-period",
        "0",
        "--to",
        "offset",
        "--offset",
        str(offset),
    )


def timed(family: str, which: str, run, scenarios: list[dict]) -> list[dict]:
    """run(scenarios), its javac (once a session) timed apart from the JVM call, and each scenario's own time."""
    from tests.oracle.storm_trident_spout import _classes

    t0 = time.monotonic()
    _classes(which)
    t1 = time.monotonic()
    reports = run(scenarios)
    t2 = time.monotonic()
    seconds = {r["name"]: r["seconds"] for r in reports}
    TIMINGS[family] = {
        "javac_s": round(t1 - t0, 2),
        "call_s": round(t2 - t1, 2),
        "outside_scenarios_s": round(t2 - t1 - sum(seconds.values()), 2),
        "scenarios": len(reports),
        "per_scenario_s": seconds,
    }
    return reports


# --- storm-kafka 1.2.4: OpaqueTridentKafkaSpout (TridentKafkaEmitter), Kafka 3.9 --------------------------------


def no_next_offset(meta: bytes) -> bytes:
    """A meta as TridentKafkaEmitter writes it, without its nextOffset."""
    stripped = re.sub(rb',?"nextOffset":\d+', b"", meta)
    assert stripped != meta and b"nextOffset" not in stripped
    return stripped


# name: ({partition: {txid: nextOffset | bytes | "no nextOffset"}}, TridentKafkaConfig settings, topic: "orders"
#        (3 partitions) or "trimmed" (1 partition, log start 5), the topology that wrote the metas)
OLD = {
    "meta-inside": ({0: {8: 4}, 1: {8: 7}, 2: {8: 9}}, {}, "orders", STORM_ID),
    "two-txids-highest-wins": ({0: {9: 2, 10: 6}, 1: {9: 8, 10: 3}, 2: {10: 5}}, {}, "orders", STORM_ID),
    # currtx 10: txid 10 was committed, not acked; the executor emits 10 again, from 9's state (2 has none)
    "commit-not-acked": ({0: {9: 2, 10: 6}, 1: {9: 8, 10: 3}, 2: {10: 5}}, {}, "orders", STORM_ID),
    "no-meta-earliest": ({0: {8: 4}}, {"startOffsetTime": EARLIEST}, "orders", STORM_ID),
    "no-meta-latest": ({0: {8: 4}}, {"startOffsetTime": LATEST}, "orders", STORM_ID),
    "not-json": ({0: {8: b"{not json"}, 1: {8: 4}, 2: {8: 4}}, {}, "orders", STORM_ID),
    "not-json-latest": ({0: {8: b"{not json"}, 1: {8: 4}, 2: {8: 4}}, {"startOffsetTime": LATEST}, "orders", STORM_ID),
    "no-next-offset": ({0: {8: "no nextOffset"}, 1: {8: 4}, 2: {8: 4}}, {}, "orders", STORM_ID),
    "no-next-offset-last": ({0: {8: 4}, 1: {8: 4}, 2: {8: "no nextOffset"}}, {}, "orders", STORM_ID),
    "ignore-zk-offsets-other-topology": (
        {0: {8: 4}, 1: {8: 7}, 2: {8: 9}},
        {"ignoreZkOffsets": True},
        "orders",
        OTHER_ID,
    ),
    "ignore-zk-offsets-other-topology-latest": (
        {0: {8: 4}, 1: {8: 7}, 2: {8: 9}},
        {"ignoreZkOffsets": True, "startOffsetTime": LATEST},
        "orders",
        OTHER_ID,
    ),
    "ignore-zk-offsets-same-topology": (
        {0: {8: 4}, 1: {8: 7}, 2: {8: 9}},
        {"ignoreZkOffsets": True},
        "orders",
        STORM_ID,
    ),
    "other-topology-kept": ({0: {8: 4}, 1: {8: 7}, 2: {8: 9}}, {}, "orders", OTHER_ID),
    "below-log-start": ({0: {8: 2}}, {}, "trimmed", STORM_ID),
    "below-log-start-latest": ({0: {8: 2}}, {"startOffsetTime": LATEST}, "trimmed", STORM_ID),
    "above-log-end": ({0: {8: 50}, 1: {8: 4}, 2: {8: 4}}, {}, "orders", STORM_ID),
    "above-log-end-no-reset": (
        {0: {8: 50}, 1: {8: 4}, 2: {8: 4}},
        {"useStartOffsetTimeIfOffsetOutOfRange": False},
        "orders",
        STORM_ID,
    ),
}
# Where the real spout did something else than offctl said, and offctl was fixed (docs/storm.md, "Run on the real
# spouts"): a meta the emitter throws on (no nextOffset) stops every partition of the state, not its own only:
# OpaquePartitionedTridentSpoutExecutor.Emitter.emitBatch (storm-core v1.2.4, :135-143) emits every partition of the
# batch in one loop, TridentKafkaEmitter.doEmitNewPartitionBatch (v1.2.4, :117) throws NullPointerException, and the
# batch is never committed (no-next-offset: nothing emitted; no-next-offset-last: partitions 0 and 1 emit 4.. before
# the throw, never committed). offctl now says crashes for every partition (fetch-fails before issue 44).
OLD_DISAGREE: dict[str, str] = {}


def topics_and_roots(kafka, zk, prefix: str, trimmed_start: int) -> tuple[dict[str, str], str, str]:
    """The test topics, each partition LOG_END records: "orders" (3 partitions) and "trimmed" (1, its log start moved
    to `trimmed_start`); and two Storm roots under /<prefix>: a running topology's (STORM_ID), a stopped one's."""
    from confluent_kafka import TopicPartition

    topics = {
        "orders": kafka.filled_topic(f"{prefix}-orders", 3, LOG_END),
        "trimmed": kafka.filled_topic(f"{prefix}-trimmed", 1, LOG_END),
    }
    (deleted,) = kafka.admin.delete_records([TopicPartition(topics["trimmed"], 0, trimmed_start)]).values()
    deleted.result(30)
    running, stopped = f"/{prefix}/storm", f"/{prefix}/storm-stopped"
    zk.create(f"{running}/storms/{STORM_ID}", makepath=True)
    zk.ensure_path(f"{stopped}/storms")
    return topics, running, stopped


@pytest.fixture(scope="module")
def old_trident(zk_server, zk, broker39, kafka39, tmp_path_factory):
    from tests.oracle.storm_trident_spout import run_old_trident

    prefix = f"trident-oracle-{time.time_ns()}"
    topics, running, stopped = topics_and_roots(kafka39, zk, prefix, 5)
    broker = broker39.address
    hosts = {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"}

    def meta(topic: str, p: int, spec, writer: str) -> bytes:
        if isinstance(spec, bytes):
            return spec
        if spec == "no nextOffset":
            return no_next_offset(trident_meta(topic, p, 2, 4, writer, broker))
        return trident_meta(topic, p, max(spec - 1, 0), spec, writer, broker)

    scenarios, offctl = [], {}
    for name, (states, settings, on, writer) in OLD.items():
        topic, root = topics[on], f"/{prefix}/{name}/transactional"
        seed(
            zk,
            root,
            "sk",
            {
                f"partition_{p}": {txid: meta(topic, p, spec, writer) for txid, spec in metas.items()}
                for p, metas in states.items()
            },
            acked=name != "commit-not-acked",
        )
        offctl[name] = verdicts(
            inspect(
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
        )
        scenarios.append(
            {
                "name": name,
                "zookeeper": zk_server.address,
                "transactional_root": root,
                "tx_state_id": "sk",
                "storm_id": STORM_ID,
                "topic": topic,
                "hosts": hosts,
                "spout_config": settings,
            }
        )

    # the repair: a stopped topology's state reset to offset 6; the next deployment's spout starts there. Twice:
    # with txid 8 acked (currtx 9: the reset writes txid 8), and not (currtx 8: txid 8 is emitted again, from 7's
    # state, so the reset writes txid 7)
    plans = {}
    for name, acked in REPAIRS.items():
        root, backups = f"/{prefix}/{name}/transactional", tmp_path_factory.mktemp(f"old-trident-{name}")
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
        scenarios.append(
            {
                "name": name,
                "zookeeper": zk_server.address,
                "transactional_root": root,
                "tx_state_id": "sk",
                "storm_id": NEW_ID,
                "topic": topics["orders"],
                "hosts": hosts,
            }
        )
    ran = {r["name"]: r for r in timed("storm-kafka 1.2.4", "old", run_old_trident, scenarios)}
    return offctl, ran, plans


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=OLD_DISAGREE[n])) if n in OLD_DISAGREE else n
        for n in sorted(OLD)
    ],
)
def test_storm_kafka_1_2_4_trident_starts_where_offctl_says(old_trident, name):
    offctl, ran, _ = old_trident
    agree(name, offctl[name], ran[name])


REPAIRS = {"repair": True, "repair-not-acked": False}  # run name: whether the state's last commit was acked


def repaired(oracle, to: int, name: str) -> dict:
    """The repair run `name` of a fixture's (offctl, ran, plans), once its reset plan is checked (verified, every
    partition to offset `to`, written at the txid the next batch reads: 8, or 7 where currtx is 8, and then the batch
    stored at currtx 8 too, rewritten to an empty batch at `to`, which a transactional spout replays first) and the
    spout seen to start there with no error."""
    _, ran, plans = oracle
    plan = plans[name]
    own = [c for c in plan["changes"] if c["batch"] is None]
    after = {c["partition"]: c["after"] for c in own}
    assert plan["verified"] and after == {0: to, 1: to, 2: to} and not plan["summary"]["left_out"], plan
    assert {c["path"].rsplit("/", 1)[1] for c in own} == {"8" if REPAIRS[name] else "7"}, plan
    batches = [(c["partition"], c["batch"], c["after"]) for c in plan["changes"] if c["batch"] is not None]
    assert sorted(batches) == ([] if REPAIRS[name] else [(p, 8, to) for p in range(3)]), plan
    r = ran[name]
    assert r["errors"] == {} and r["first_emitted"] == after == r["started_at"], r
    return r


@pytest.mark.parametrize("name", sorted(REPAIRS))
def test_storm_kafka_trident_reset_then_the_spout_starts_where_the_plan_said(old_trident, name):
    r = repaired(old_trident, 6, name)
    assert {p: json.loads(m)["nextOffset"] for p, m in r["handed"].items()} == {0: 6, 1: 6, 2: 6}


# --- storm-kafka-client 2.8.3: KafkaTridentSpoutOpaque (KafkaTridentSpoutEmitter), Kafka 4.4 ---------------------

# name: ({partition: {txid: (firstOffset, lastOffset) | bytes}}, firstPollOffsetStrategy, topic: "orders"
#        (3 partitions) or "trimmed" (1 partition, log start 4), the topology that wrote the metas)
CLIENT = {
    "meta-inside": ({0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}}, "UNCOMMITTED_EARLIEST", "orders", STORM_ID),
    "two-txids-highest-wins": (
        {0: {9: (0, 1), 10: (4, 5)}, 1: {9: (6, 7), 10: (2, 2)}, 2: {10: (3, 4)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
    ),
    "commit-not-acked": (
        {0: {9: (0, 1), 10: (4, 5)}, 1: {9: (6, 7), 10: (2, 2)}, 2: {10: (3, 4)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
    ),
    "no-meta-uncommitted-earliest": ({0: {8: (2, 3)}}, "UNCOMMITTED_EARLIEST", "orders", STORM_ID),
    "no-meta-uncommitted-latest": ({0: {8: (2, 3)}}, "UNCOMMITTED_LATEST", "orders", STORM_ID),
    "not-json": ({0: {8: b"{not json"}, 1: {8: (2, 3)}, 2: {8: (2, 3)}}, "UNCOMMITTED_EARLIEST", "orders", STORM_ID),
    "not-json-bare-word": (
        {0: {8: b"not json"}, 1: {8: (2, 3)}, 2: {8: (2, 3)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
    ),
    "json-smart-unquoted-keys": (
        {
            0: {8: b'{firstOffset:2,lastOffset:3,topologyId:"' + STORM_ID.encode() + b'"}'},
            1: {8: (2, 3)},
            2: {8: (2, 3)},
        },
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
    ),
    "no-last-offset": (
        {0: {8: b'{"topologyId":"' + STORM_ID.encode() + b'","firstOffset":2}'}, 1: {8: (2, 3)}, 2: {8: (2, 3)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        STORM_ID,
    ),
    "earliest-other-deployment": ({0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}}, "EARLIEST", "orders", OTHER_ID),
    "earliest-same-deployment": ({0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}}, "EARLIEST", "orders", STORM_ID),
    "latest-other-deployment": ({0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}}, "LATEST", "orders", OTHER_ID),
    "latest-same-deployment": ({0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}}, "LATEST", "orders", STORM_ID),
    "uncommitted-earliest-other-deployment": (
        {0: {8: (2, 3)}, 1: {8: (2, 6)}, 2: {8: (5, 8)}},
        "UNCOMMITTED_EARLIEST",
        "orders",
        OTHER_ID,
    ),
    "below-log-start": ({0: {8: (0, 1)}}, "UNCOMMITTED_EARLIEST", "trimmed", STORM_ID),
    "above-log-end": ({0: {8: (40, 49)}}, "UNCOMMITTED_EARLIEST", "trimmed", STORM_ID),
}
# Where the real spout did something else than offctl said, and offctl was fixed:
# - no-last-offset: KafkaTridentSpoutEmitter.emitBatchNew (v2.8.3, :176) seeks every partition (seekAllPartitions,
#   :208-218) before its one poll, and KafkaTridentSpoutBatchMetadata.fromMap (:81-82) throws NullPointerException on
#   partition 0's meta: no partition emits, the batch is never committed (offctl said 1 and 2 resume at 4);
# - below-log-start, above-log-end: the Trident consumer is configured by KafkaTridentSpoutConfig
#   (CommonKafkaSpoutConfig, v2.0.0 to v2.8.8), which never sets auto.offset.reset, so Kafka's 'latest' moves it to
#   the log end (10) and it emits nothing (offctl said the log start, 'earliest', as KafkaSpoutConfig sets it).
CLIENT_DISAGREE: dict[str, str] = {}
# Data json-simple refuses, which storm-client 2.6.0 and later read with json-smart's permissive parser
# (TransactionalState.getData, v2.8.3 :176, shaded net.minidev): the spout did three different things, so offctl,
# which parses as json-simple, says it cannot tell (resumes null on every partition of the state):
JSON_SMART = {
    "not-json": "json-smart refuses '{not json' too: no state, partition 0 from the log start (0), 1 and 2 at 4",
    "not-json-bare-word": 'read as the String "not json": the cast to Map in seekAllPartitions (:214) throws '
    "ClassCastException, the whole batch fails: no partition emits",
    "json-smart-unquoted-keys": "read as a map: partition 0 resumes at lastOffset + 1 = 4 "
    "(KafkaTridentSpoutEmitter.seek, :267)",
}


@pytest.fixture(scope="module")
def client_trident(zk_server, zk, broker, kafka, tmp_path_factory):
    from tests.oracle.storm_trident_spout import run_client_trident

    prefix = f"trident-oracle-client-{time.time_ns()}"
    topics, running, stopped = topics_and_roots(kafka, zk, prefix, 4)

    def meta(spec, writer: str) -> bytes:
        return spec if isinstance(spec, bytes) else client_trident_meta(*spec, writer)

    def scenario(name: str, root: str, topic: str, strategy: str, storm_id: str = STORM_ID) -> dict:
        return {
            "name": name,
            "zookeeper": zk_server.address,
            "transactional_root": root,
            "tx_state_id": "cl",
            "storm_id": storm_id,
            "topic": topic,
            "bootstrap_servers": broker.address,
            "first_poll_offset_strategy": strategy,
        }

    scenarios, offctl = [], {}
    for name, (states, strategy, on, writer) in CLIENT.items():
        topic, root = topics[on], f"/{prefix}/{name}/transactional"
        seed(
            zk,
            root,
            "cl",
            {f"{topic}@{p}": {txid: meta(spec, writer) for txid, spec in metas.items()} for p, metas in states.items()},
            acked=name != "commit-not-acked",
        )
        offctl[name] = verdicts(
            inspect(
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
        )
        scenarios.append(scenario(name, root, topic, strategy))

    plans = {}
    for name, acked in REPAIRS.items():  # as storm-kafka's: txid 8 acked, and not
        root, backups = f"/{prefix}/{name}/transactional", tmp_path_factory.mktemp(f"client-trident-{name}")
        plans[name] = reset_stopped(
            zk,
            zk_server,
            root,
            "cl",
            {f"{topics['orders']}@{p}": {7: meta((0, 1), STORM_ID), 8: meta((2, 3 + p), STORM_ID)} for p in range(3)},
            acked,
            broker.address,
            stopped,
            backups,
            7,
        )
        scenarios.append(scenario(name, root, topics["orders"], "UNCOMMITTED_EARLIEST", NEW_ID))
    ran = {r["name"]: r for r in timed("storm-kafka-client 2.8.3", "client", run_client_trident, scenarios)}
    return offctl, ran, plans


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=CLIENT_DISAGREE[n])) if n in CLIENT_DISAGREE else n
        for n in sorted(CLIENT)
        if n not in JSON_SMART
    ],
)
def test_storm_kafka_client_2_8_trident_starts_where_offctl_says(client_trident, name):
    offctl, ran, _ = client_trident
    agree(name, offctl[name], ran[name])


@pytest.mark.parametrize("name", sorted(JSON_SMART))
def test_state_json_smart_reads_otherwise_is_said_unknown_and_the_runs_show_why(client_trident, name):
    """From storm-client 2.6.0 offctl says it cannot tell (null on every partition, the finding naming json-smart),
    and the real spout did what JSON_SMART says: three outcomes for three inputs json-simple refuses alike."""
    offctl, ran, _ = client_trident
    assert {p: v[:2] for p, v in offctl[name].items()} == {0: (None, None), 1: (None, None), 2: (None, None)}, name
    r = ran[name]
    emitted = {p: r["first_emitted"].get(p) for p in (0, 1, 2)}
    assert (
        emitted
        == {
            "not-json": {0: 0, 1: 4, 2: 4},
            "not-json-bare-word": {0: None, 1: None, 2: None},
            "json-smart-unquoted-keys": {0: 4, 1: 4, 2: 4},
        }[name]
    ), (name, r)


@pytest.mark.parametrize("name", sorted(REPAIRS))
def test_storm_kafka_client_trident_reset_then_the_spout_starts_where_the_plan_said(client_trident, name):
    r = repaired(client_trident, 7, name)
    assert {p: json.loads(m)["lastOffset"] for p, m in r["handed"].items()} == {0: 6, 1: 6, 2: 6}


def test_timings(old_trident, client_trident):
    """Not a check: the JVM calls' and scenarios' wall times, for `pytest -s`."""
    print(json.dumps(TIMINGS, indent=1))
