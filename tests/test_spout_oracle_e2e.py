"""Storm itself says what a spout does (issue 36): offctl's `resumes_at` and `resumes` held to the REAL spouts.

Each scenario is stored state, log state and spout settings, set up in the real stores. offctl inspects it first
(`offctl inspect -o json`: each partition's `resumes_at` and `resumes`, and a MISSING_PARTITION finding's); then the
real spout runs on the same stores (tests/storm_kafka_spout.py: storm-kafka 1.2.4's KafkaSpout on ZooKeeper and
Kafka 3.9; tests/storm_client_spout.py: storm-kafka-client's KafkaSpout, 2.8.3 on Kafka 4.4 and 1.2.4 on Kafka 3.9),
all scenarios of a family in one JVM. For every partition the two must agree on the first offset the spout emits:

    stored, stored+1, log-start, log-end   the spout emits resumes_at first (the topics have no gaps), or nothing
                                           when resumes_at is the log end
    waits-until-log-end-reaches, fetch-fails  it emits nothing
    time                                   not compared (resumes_at is null: only the broker's time index knows)

Where they disagreed, offctl was wrong and was fixed (docs/storm.md, "Run on the real spouts").
"""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

from tests.conftest import BROKER39_CHROOT, storm_record

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

STORM_ID = "orders-topology-1-1700000000"  # the running topology: the runner's context reports it
OTHER_ID = "orders-topology-7-1690000000"  # an earlier deployment
EARLIEST, LATEST = -2, -1
NO_EMIT = ("waits-until-log-end-reaches", "fetch-fails")


def inspect(*args: str) -> dict:
    from offctl.commands.app import app

    result = CliRunner().invoke(app, ["inspect", *args, "--per-partition", "--fail-on", "never", "-o", "json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def verdicts(doc: dict) -> dict[int, tuple[int | None, str | None, int | None]]:
    """partition -> (resumes_at, resumes, log_end), from the rows and the MISSING_PARTITION findings."""
    out = {p["partition"]: (p["resumes_at"], p["resumes"], p["log_end"]) for p in doc["partitions"]}
    for f in doc["findings"]:
        if f["code"] == "MISSING_PARTITION":
            out[f["partition"]] = (f["resumes_at"], f["resumes"], None)
    return out


def expected_first(resumes_at: int | None, resumes: str | None, log_end: int) -> int | None | str:
    if resumes in NO_EMIT:
        return None
    if resumes is None or resumes_at is None:
        return "not compared"
    return None if resumes_at >= log_end else resumes_at


# --- storm-kafka 1.2.4, offsets in ZooKeeper, Kafka 3.9 ----------------------------------------------------------

OLD = {  # name: (stored offsets by partition, or bytes; settings as SpoutConfig fields; the topic: "orders" or
    #         "trimmed"; who wrote the records)
    "stored-inside": ({0: 4, 1: 7, 2: 9}, {}, "orders", STORM_ID),
    "above-log-end": ({0: 50, 1: 4, 2: 4}, {}, "orders", STORM_ID),
    "above-log-end-no-reset": ({0: 50}, {"useStartOffsetTimeIfOffsetOutOfRange": False}, "orders1", STORM_ID),
    "below-log-start": ({0: 2}, {}, "trimmed", STORM_ID),
    "below-log-start-latest": ({0: 2}, {"startOffsetTime": LATEST}, "trimmed", STORM_ID),
    "below-log-start-no-reset": ({0: 2}, {"useStartOffsetTimeIfOffsetOutOfRange": False}, "trimmed", STORM_ID),
    "stored-0-latest": ({0: 0, 1: 0, 2: 0}, {"startOffsetTime": LATEST}, "orders", STORM_ID),
    "stored-0-earliest": ({0: 0}, {"startOffsetTime": EARLIEST}, "trimmed", STORM_ID),
    "malformed-earliest": ({0: b"{not json", 1: 4, 2: 4}, {"startOffsetTime": EARLIEST}, "orders", STORM_ID),
    "malformed-latest": ({0: b"{not json", 1: 4, 2: 4}, {"startOffsetTime": LATEST}, "orders", STORM_ID),
    "partition-field-disagrees": ({0: 4, 1: ("node-says", 2, 6), 2: 8}, {}, "orders", STORM_ID),
    "names-another-topic": ({0: 4, 1: ("another-topic", 1, 6), 2: 8}, {}, "orders", STORM_ID),
    "ignore-zk-offsets-other-topology": ({0: 4, 1: 4, 2: 4}, {"ignoreZkOffsets": True}, "orders", OTHER_ID),
    "other-topology-kept": ({0: 4, 1: 4, 2: 4}, {}, "orders", OTHER_ID),
    "max-offset-behind-latest": ({0: 4, 1: 9, 2: 4}, {"startOffsetTime": LATEST, "maxOffsetBehind": 2}, "orders",
                                 STORM_ID),
    "max-offset-behind-earliest": ({0: 4, 1: 9, 2: 4}, {"startOffsetTime": EARLIEST, "maxOffsetBehind": 2},
                                   "orders", STORM_ID),
    "missing-partition-earliest": ({0: 4, 1: 4}, {"startOffsetTime": EARLIEST}, "orders", STORM_ID),
    "missing-partition-latest": ({0: 4, 1: 4}, {"startOffsetTime": LATEST}, "orders", STORM_ID),
}


def old_flags(settings: dict) -> list[str]:
    flags = ["--storm-kafka-release", "1.2.4"]
    at = settings.get("startOffsetTime", EARLIEST)
    flags += ["--start-offset-time", {EARLIEST: "earliest", LATEST: "latest"}.get(at, str(at))]
    if settings.get("ignoreZkOffsets"):
        flags.append("--ignore-zk-offsets")
    if "maxOffsetBehind" in settings:
        flags += ["--max-offset-behind", str(settings["maxOffsetBehind"])]
    if settings.get("useStartOffsetTimeIfOffsetOutOfRange") is False:
        flags.append("--no-out-of-range-reset")
    return flags


@pytest.fixture(scope="module")
def old_spouts(zk_server, zk, broker39, kafka39):
    from confluent_kafka import TopicPartition

    from tests.storm_kafka_spout import run_old_spouts

    prefix = f"oracle-{time.time_ns()}"
    topics = {"orders": kafka39.filled_topic(f"{prefix}-orders", 3, 10),
              "orders1": kafka39.filled_topic(f"{prefix}-orders1", 1, 10),
              "trimmed": kafka39.filled_topic(f"{prefix}-trimmed", 1, 10)}
    (deleted,) = kafka39.admin.delete_records([TopicPartition(topics["trimmed"], 0, 5)]).values()
    deleted.result(30)
    root, broker = f"/{prefix}", broker39.address
    zk.create(f"{root}/storm/storms/{STORM_ID}", makepath=True)
    scenarios, offctl = [], {}
    for name, (stored, settings, on, writer) in OLD.items():
        topic = topics[on]
        for p, value in stored.items():
            if isinstance(value, bytes):
                data = value
            elif isinstance(value, tuple):  # (what the record names, its partition field, its offset)
                named, field, offset = value
                data = storm_record(topic if named == "node-says" else f"{prefix}-{named}", field, offset,
                                    topology_id=writer, broker=broker)
            else:
                data = storm_record(topic, p, value, topology_id=writer, broker=broker)
            zk.create(f"{root}/{name}/orders-spout/partition_{p}", data, makepath=True)
        offctl[name] = verdicts(inspect("--zk", zk_server.address, "--zk-root", f"{root}/{name}", "--spout",
                                        "orders-spout", "--topic", topic, "--storm-root", f"{root}/storm",
                                        "--bootstrap-servers", broker, *old_flags(settings)))
        scenarios.append({"name": name, "zookeeper": zk_server.address, "zk_root": f"{root}/{name}",
                          "spout_id": "orders-spout", "topic": topic, "storm_id": STORM_ID, "idle_ms": 300,
                          "hosts": {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"},
                          "spout_config": settings})
    ran = {r["name"]: r for r in run_old_spouts(scenarios)}
    return offctl, ran


@pytest.mark.parametrize("name", sorted(OLD))
def test_storm_kafka_1_2_4_starts_where_offctl_says(old_spouts, name):
    offctl, ran = old_spouts
    r = ran[name]
    said = offctl[name]
    partitions = {int(p) for p in r["first_emitted"]} | set(said)
    for p in sorted(partitions):
        resumes_at, resumes, log_end = said[p]
        want = expected_first(resumes_at, resumes, log_end if log_end is not None else 10)
        if want == "not compared":
            continue
        got = r["first_emitted"].get(str(p))
        assert got == want, (name, p, said[p], r)


def test_one_partition_failing_its_fetches_stops_the_whole_task_as_offctl_says(old_spouts):
    """useStartOffsetTimeIfOffsetOutOfRange=false and one partition out of range: KafkaSpout.nextTuple (v1.2.4)
    retries that partition without moving on, so the task emits nothing more from any partition: the finding's
    sentence says so (it did not before the spout was run)."""
    from offctl.core.behaviour import Library, SpoutProfile, out_of_range_outcome

    outcome = out_of_range_outcome(SpoutProfile(out_of_range_reset=False), Library.STORM_KAFKA, "above")
    assert "none of its partitions emits again" in outcome.sentence(50, 0, 10)


# --- storm-kafka-client: 2.8.3 on Kafka 4.4, 1.2.4 on Kafka 3.9 --------------------------------------------------

def metadata(topology_id: str) -> str:
    return json.dumps({"topologyId": topology_id, "taskId": 1, "threadName": "main"}, separators=(",", ":"))


LEGACY = "{topic-partition=orders-0, offset=2, numFails=0, thread='Thread-9-spout'}"
CLIENT = {  # name: (commits {partition: (offset, metadata)}, first-poll strategy, guarantee, topic)
    "own-commit": ({0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST",
                   "AT_LEAST_ONCE", "orders"),
    "tool-commit-earliest": ({0: (3, None), 1: (2, None)}, "EARLIEST", "AT_LEAST_ONCE", "orders"),
    "tool-commit-latest": ({0: (3, None), 1: (2, None)}, "LATEST", "AT_LEAST_ONCE", "orders"),
    "tool-commit-uncommitted-earliest": ({0: (3, None), 1: (2, None)}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE",
                                         "orders"),
    "tool-commit-uncommitted-latest": ({0: (3, None), 1: (2, None)}, "UNCOMMITTED_LATEST", "AT_LEAST_ONCE",
                                       "orders"),
    "other-topology-earliest": ({0: (3, metadata(OTHER_ID)), 1: (2, metadata(OTHER_ID))}, "EARLIEST",
                                "AT_LEAST_ONCE", "orders"),
    "own-commit-earliest": ({0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))}, "EARLIEST", "AT_LEAST_ONCE",
                            "orders"),
    "legacy-metadata-earliest": ({0: (3, LEGACY), 1: (2, LEGACY)}, "EARLIEST", "AT_LEAST_ONCE", "orders"),
    "legacy-metadata-uncommitted": ({0: (3, LEGACY), 1: (2, LEGACY)}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE",
                                    "orders"),
    "below-log-start": ({0: (2, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "trimmed"),
    "above-log-end": ({0: (50, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "trimmed"),
    "missing-partition": ({0: (3, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "orders"),
    "missing-partition-latest": ({0: (3, metadata(STORM_ID))}, "UNCOMMITTED_LATEST", "AT_LEAST_ONCE", "orders"),
    "at-most-once": ({0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST",
                     "AT_MOST_ONCE", "orders"),
    "no-guarantee": ({0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST",
                     "NO_GUARANTEE", "orders"),
}


def client_run(line: str, zk_server, zk, kafka, broker_address: str) -> tuple[dict, dict]:
    from confluent_kafka import TopicPartition

    from tests.storm_client_spout import run_client_spouts

    prefix = f"oracle-client-{line}-{time.time_ns()}"
    topics = {"orders": kafka.filled_topic(f"{prefix}-orders", 2, 10),
              "trimmed": kafka.filled_topic(f"{prefix}-trimmed", 1, 10)}
    (deleted,) = kafka.admin.delete_records([TopicPartition(topics["trimmed"], 0, 4)]).values()
    deleted.result(30)
    storm_root = f"/{prefix}/storm"
    zk.create(f"{storm_root}/storms/{STORM_ID}", makepath=True)
    scenarios, offctl = [], {}
    for name, (commits, strategy, guarantee, on) in CLIENT.items():
        group = f"{prefix}-{name}"
        for p, (offset, meta) in commits.items():
            kafka.commit(group, topics[on], {p: offset}, meta)
        offctl[name] = verdicts(inspect(
            "--zk", zk_server.address, "--storm-root", storm_root, "--bootstrap-servers", broker_address, "--group",
            group, "--topic", topics[on], "--storm-kafka-client-release", "2.8.8" if line != "1.2.4" else "1.2.4",
            "--first-poll-offset-strategy", strategy, "--processing-guarantee", guarantee))
        scenarios.append({"name": name, "bootstrap_servers": broker_address, "topic": topics[on], "group_id": group,
                          "topology_id": STORM_ID, "first_poll_offset_strategy": strategy,
                          "processing_guarantee": guarantee})
    ran = {r["name"]: r for r in run_client_spouts(line, scenarios)}
    for scenario in scenarios:
        ran[scenario["name"]]["group_id"] = scenario["group_id"]
    return offctl, ran


@pytest.fixture(scope="module")
def client_2_8(zk_server, zk, broker, kafka):
    return client_run("2.8.3", zk_server, zk, kafka, broker.address)


@pytest.fixture(scope="module")
def client_1_2(zk_server, zk, broker39, kafka39):
    return client_run("1.2.4", zk_server, zk, kafka39, broker39.address)


def _agree(name: str, offctl: dict, ran: dict) -> None:
    r, said = ran[name], offctl[name]
    for p in sorted(set(said) | set(r["assigned"])):
        resumes_at, resumes, log_end = said[p]
        want = expected_first(resumes_at, resumes, r["log_end"][p] if log_end is None else log_end)
        if want == "not compared":
            continue
        assert r["first_emitted"].get(p) == want, (name, p, said[p], r)


@pytest.mark.parametrize("name", sorted(CLIENT))
def test_storm_kafka_client_2_8_starts_where_offctl_says(client_2_8, name):
    _agree(name, *client_2_8)


@pytest.mark.parametrize("name", sorted(CLIENT))
def test_storm_kafka_client_1_2_4_starts_where_offctl_says(client_1_2, name):
    _agree(name, *client_1_2)


@pytest.mark.parametrize("fixture", ["client_2_8", "client_1_2"])
def test_a_commit_above_the_log_end_breaks_the_spouts_commits_as_offctl_says(request, fixture):
    """Under AT_LEAST_ONCE the consumer re-reads from the log start but the spout counts its commits from the stored
    offset: its commit throws (OffsetManager.findNextCommitOffset), and the commit stays where it was."""
    offctl, ran = request.getfixturevalue(fixture)
    r = ran["above-log-end"]
    assert "IllegalStateException" in json.dumps(r["errors"]) and r["committed"][0]["offset"] == 50
    from offctl.core.behaviour import Library, SpoutProfile, out_of_range_outcome

    said = out_of_range_outcome(SpoutProfile(), Library.STORM_KAFKA_CLIENT, "above").sentence(50, 4, 10)
    assert "throws IllegalStateException" in said


# --- the repairs, proven on the spout: the real storm-kafka-client 2.8.3 spout starts where the plan said ------------

@pytest.fixture
def repairs(zk_server, zk, broker, kafka, names, tmp_path):
    """A topic of 2 partitions of 10 messages, a group, Storm's root with nothing running, and the flags a write
    needs (its backups and audit log in tmp_path)."""
    topic, group, root = kafka.filled_topic(names("orders"), 2, 10), names("group"), f"/{names('root')}"
    zk.create(f"{root}/storm/storms", makepath=True)
    conn = ["--zk", zk_server.address, "--zk-root", f"{root}/spouts", "--storm-root", f"{root}/storm",
            "--bootstrap-servers", broker.address, "--backup-dir", str(tmp_path / "backups"), "--audit-log",
            str(tmp_path / "audit.jsonl"), "--quiet-period", "0"]
    return {"topic": topic, "group": group, "root": root, "conn": conn, "broker": broker.address}


def write(*args: str) -> dict:
    from offctl.commands.app import app

    result = CliRunner().invoke(app, [*args, "--execute", "--yes", "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def spout_starts(r: dict, strategy: str) -> dict[int, int | None]:
    from tests.storm_client_spout import run_client_spouts

    [got] = run_client_spouts("2.8.3", [{"name": strategy, "bootstrap_servers": r["broker"], "topic": r["topic"],
                                         "group_id": r["group"], "topology_id": STORM_ID,
                                         "first_poll_offset_strategy": strategy, "ack": False}])
    assert got["errors"] == {}, got
    return {p: got["first_emitted"].get(p) for p in got["assigned"]}


def test_migrate_then_the_new_spout_resumes_at_the_old_spouts_offsets(repairs, zk, broker):
    """The migration runbook's headline: the old spout's ZooKeeper offsets copied into the group with the new
    topology's metadata, and the storm-kafka-client spout started on it resumes there, not at the log start, under
    EARLIEST too (isOffsetCommittedByThisTopology: the commit names the running topology)."""
    r = repairs
    for p, offset in {0: 4, 1: 7}.items():
        zk.create(f"{r['root']}/spouts/orders-spout/partition_{p}",
                  storm_record(r["topic"], p, offset, topology_id=OTHER_ID, broker=broker.address), makepath=True)
    plan = write("migrate", *r["conn"], "--spout", "orders-spout", "--group", r["group"], "--topology-id", STORM_ID)
    assert {c["partition"]: c["after"] for c in plan["changes"]} == {0: 4, 1: 7} and plan["verified"]
    assert spout_starts(r, "EARLIEST") == {0: 4, 1: 7}
    assert spout_starts(r, "UNCOMMITTED_EARLIEST") == {0: 4, 1: 7}


@pytest.mark.parametrize("target, expected", [
    (("--to", "earliest"), {0: 0, 1: 0}),
    (("--to", "latest"), {0: None, 1: None}),
    (("--to", "offset", "--offset", "6"), {0: 6, 1: 6}),
    (("--to", "shift", "--by", "1"), {0: 4, 1: 3}),  # one past a poison message at the commit
], ids=["earliest", "latest", "offset", "shift-past-a-poison-message"])
def test_a_reset_then_the_spout_starts_where_the_plan_said(repairs, kafka, target, expected):
    r = repairs
    kafka.commit(r["group"], r["topic"], {0: 3, 1: 2}, metadata(STORM_ID))
    plan = write("reset", *r["conn"], "--group", r["group"], "--topic", r["topic"], "--topology-id", STORM_ID,
                 *target)
    after = {c["partition"]: c["after"] for c in plan["changes"]}
    assert plan["verified"] and {p: (None if a == 10 else a) for p, a in after.items()} == expected
    assert spout_starts(r, "EARLIEST") == expected

    restored = write("restore", plan["backup"], *r["conn"])
    assert restored["verified"]
    assert spout_starts(r, "EARLIEST") == {0: 3, 1: 2}  # the restore put back the commits, metadata and all


def test_offctl_reads_the_metadata_the_real_spout_committed_exactly_every_time(client_2_8, broker):
    """The spout (Java) writes its metadata without a NUL after it; confluent-kafka 2.16 reads metadata as a C string
    and, in 9 of 200 reads, handed back bytes of memory after it, or bytes that are not UTF-8 (which crashed an
    --all-groups audit). offctl reads Storm's metadata to where it ends, and reads a group again when the client
    hands back bytes that are not UTF-8 (KafkaStore.group_commits, storm.metadata_read)."""
    from offctl.adapters.kafka import KafkaStore

    _, ran = client_2_8
    written = ran["own-commit"]["committed"]
    assert written[0]["metadata"] == metadata(STORM_ID)  # as a Java client reads it back
    store = KafkaStore(broker.address)
    try:
        group = ran["own-commit"]["group_id"]
        for _ in range(100):
            read = {c.partition: c.metadata for c in store.group_commits([group])}
            assert not store.notes, store.notes
            assert read == {p: w["metadata"] for p, w in written.items()}
    finally:
        store.close()
