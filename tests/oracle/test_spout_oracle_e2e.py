"""Storm itself says what a spout does (issue 36): offctl's `resumes_at` and `resumes` held to the REAL spouts.

Each scenario is stored state, log state and spout settings, set up in the real stores. offctl inspects it first
(`offctl inspect -o json`: each partition's `resumes_at` and `resumes`, and a MISSING_PARTITION finding's); then the
real spout runs on the same stores (tests/oracle/storm_kafka_spout.py: storm-kafka 1.2.4's KafkaSpout on ZooKeeper and
Kafka 3.9; tests/oracle/storm_client_spout.py: storm-kafka-client's KafkaSpout, 2.8.3 on Kafka 4.4 and 1.2.4 on Kafka
3.9), all scenarios of a family in one JVM. For every partition the two must agree on the first offset the spout emits:

    stored, stored+1, log-start, log-end   the spout emits resumes_at first (the topics have no gaps), or nothing
                                           when resumes_at is the log end
    waits-until-log-end-reaches, fetch-fails  it emits nothing
    time                                   not compared here (resumes_at is null: Kafka answers storm-kafka from its
                                           segment files' mtimes; tests/oracle/test_spout_oracle_time_e2e.py runs it)

Where they disagreed, offctl was wrong and was fixed (docs/storm.md, "Run on the real spouts").
"""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import BROKER39_CHROOT, invoke, storm_record

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

STORM_ID = "orders-topology-1-1700000000"  # the running topology: the runner's context reports it
OTHER_ID = "orders-topology-7-1690000000"  # an earlier deployment
EARLIEST, LATEST = -2, -1
NO_EMIT = ("waits-until-log-end-reaches", "fetch-fails", "crashes")


def inspect(*args: str) -> dict:
    result = invoke(["inspect", *args, "--per-partition", "--fail-on", "never", "-o", "json"], catch_exceptions=False)
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
    "max-offset-behind-latest": (
        {0: 4, 1: 9, 2: 4},
        {"startOffsetTime": LATEST, "maxOffsetBehind": 2},
        "orders",
        STORM_ID,
    ),
    "max-offset-behind-earliest": (
        {0: 4, 1: 9, 2: 4},
        {"startOffsetTime": EARLIEST, "maxOffsetBehind": 2},
        "orders",
        STORM_ID,
    ),
    "missing-partition-earliest": ({0: 4, 1: 4}, {"startOffsetTime": EARLIEST}, "orders", STORM_ID),
    "missing-partition-latest": ({0: 4, 1: 4}, {"startOffsetTime": LATEST}, "orders", STORM_ID),
}


def old_flags(settings: dict, release: str = "1.2.4") -> list[str]:
    flags = ["--storm-kafka-release", release]
    at = settings.get("startOffsetTime", EARLIEST)
    flags += ["--start-offset-time", {EARLIEST: "earliest", LATEST: "latest"}.get(at, str(at))]
    if settings.get("ignoreZkOffsets"):
        flags.append("--ignore-zk-offsets")
    if "maxOffsetBehind" in settings:
        flags += ["--max-offset-behind", str(settings["maxOffsetBehind"])]
    if settings.get("useStartOffsetTimeIfOffsetOutOfRange") is False:
        flags.append("--no-out-of-range-reset")
    return flags


def old_topics(kafka39, prefix: str) -> dict[str, str]:
    """OLD's topics on Kafka 3.9 ("orders": 3 partitions, "orders1": 1, 10 records each; "trimmed": 1 partition,
    records 0-4 deleted), named <prefix>-<key>. The spouts only read them: runs of several releases share them."""
    from confluent_kafka import TopicPartition

    topics = {
        "orders": kafka39.filled_topic(f"{prefix}-orders", 3, 10),
        "orders1": kafka39.filled_topic(f"{prefix}-orders1", 1, 10),
        "trimmed": kafka39.filled_topic(f"{prefix}-trimmed", 1, 10),
    }
    (deleted,) = kafka39.admin.delete_records([TopicPartition(topics["trimmed"], 0, 5)]).values()
    deleted.result(30)
    return topics


def old_setup(
    zk_server,
    zk,
    broker39,
    topics: dict[str, str],
    prefix: str,
    root: str,
    release: str = "1.2.4",
    scenarios: dict | None = None,
) -> tuple[list[dict], dict]:
    """The records of `scenarios` (OLD's form; default OLD) written under <root>/<name>/orders-spout (Storm's root
    at <root>/storm), and what `offctl inspect --storm-kafka-release release` says of each: (the runner's
    scenarios, {name: verdicts}). The spout writes the records back, so each run needs its own root.
    ignoreZkOffsets is given to the spout by the release's name for it (forceFromStart before 0.10)."""
    from offctl.core.storm.releases import StormKafka

    ignore = StormKafka.of_version(release).ignore_setting
    broker = broker39.address
    zk.create(f"{root}/storm/storms/{STORM_ID}", makepath=True)
    runs, offctl = [], {}
    for name, (stored, settings, on, writer) in (OLD if scenarios is None else scenarios).items():
        topic = topics[on]
        for p, value in stored.items():
            if isinstance(value, bytes):
                data = value
            elif isinstance(value, tuple):  # (what the record names, its partition field, its offset)
                named, field, offset = value
                data = storm_record(
                    topic if named == "node-says" else f"{prefix}-{named}",
                    field,
                    offset,
                    topology_id=writer,
                    broker=broker,
                )
            else:
                data = storm_record(topic, p, value, topology_id=writer, broker=broker)
            zk.create(f"{root}/{name}/orders-spout/partition_{p}", data, makepath=True)
        offctl[name] = verdicts(
            inspect(
                "--zk",
                zk_server.address,
                "--zk-root",
                f"{root}/{name}",
                "--spout",
                "orders-spout",
                "--topic",
                topic,
                "--storm-root",
                f"{root}/storm",
                "--bootstrap-servers",
                broker,
                *old_flags(settings, release),
            )
        )
        runs.append(
            {
                "name": name,
                "zookeeper": zk_server.address,
                "zk_root": f"{root}/{name}",
                "spout_id": "orders-spout",
                "topic": topic,
                "storm_id": STORM_ID,
                "idle_ms": 300,
                "hosts": {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"},
                "spout_config": {ignore if key == "ignoreZkOffsets" else key: value for key, value in settings.items()},
            }
        )
    return runs, offctl


def old_agrees(offctl: dict, ran: dict, name: str) -> None:
    """The first offset the spout emitted on each partition of scenario `name` is offctl's verdict (expected_first)."""
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


@pytest.fixture(scope="module")
def old_spouts(zk_server, zk, broker39, kafka39):
    from tests.oracle.storm_kafka_spout import run_old_spouts

    prefix = f"oracle-{time.time_ns()}"
    topics = old_topics(kafka39, prefix)
    scenarios, offctl = old_setup(zk_server, zk, broker39, topics, prefix, f"/{prefix}")
    ran = {r["name"]: r for r in run_old_spouts(scenarios)}
    return offctl, ran


@pytest.mark.parametrize("name", sorted(OLD))
def test_storm_kafka_1_2_4_starts_where_offctl_says(old_spouts, name):
    offctl, ran = old_spouts
    old_agrees(offctl, ran, name)


def test_one_partition_failing_its_fetches_stops_the_whole_task_as_offctl_says(old_spouts):
    """useStartOffsetTimeIfOffsetOutOfRange=false and one partition out of range: KafkaSpout.nextTuple (v1.2.4)
    retries that partition without moving on, so the task emits nothing more from any partition: the finding's
    sentence says so (it did not before the spout was run)."""
    from offctl.core.storm.outcomes import out_of_range_outcome
    from offctl.core.storm.releases import Library, SpoutProfile

    outcome = out_of_range_outcome(SpoutProfile(out_of_range_reset=False), Library.STORM_KAFKA, "above")
    assert "none of its partitions emits again" in outcome.sentence(50, 0, 10)


# --- storm-kafka-client: 2.8.3 on Kafka 4.4, 1.2.4 on Kafka 3.9 --------------------------------------------------


def metadata(topology_id: str) -> str:
    return json.dumps({"topologyId": topology_id, "taskId": 1, "threadName": "main"}, separators=(",", ":"))


LEGACY = "{topic-partition=orders-0, offset=2, numFails=0, thread='Thread-9-spout'}"
CLIENT = {  # name: (commits {partition: (offset, metadata)}, first-poll strategy, guarantee, topic)
    "own-commit": (
        {0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))},
        "UNCOMMITTED_EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    "tool-commit-earliest": ({0: (3, None), 1: (2, None)}, "EARLIEST", "AT_LEAST_ONCE", "orders"),
    "tool-commit-latest": ({0: (3, None), 1: (2, None)}, "LATEST", "AT_LEAST_ONCE", "orders"),
    "tool-commit-uncommitted-earliest": (
        {0: (3, None), 1: (2, None)},
        "UNCOMMITTED_EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    "tool-commit-uncommitted-latest": ({0: (3, None), 1: (2, None)}, "UNCOMMITTED_LATEST", "AT_LEAST_ONCE", "orders"),
    "other-topology-earliest": (
        {0: (3, metadata(OTHER_ID)), 1: (2, metadata(OTHER_ID))},
        "EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    "own-commit-earliest": (
        {0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))},
        "EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    "legacy-metadata-earliest": ({0: (3, LEGACY), 1: (2, LEGACY)}, "EARLIEST", "AT_LEAST_ONCE", "orders"),
    "legacy-metadata-uncommitted": (
        {0: (3, LEGACY), 1: (2, LEGACY)},
        "UNCOMMITTED_EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    "below-log-start": ({0: (2, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "trimmed"),
    "above-log-end": ({0: (50, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "trimmed"),
    "missing-partition": ({0: (3, metadata(STORM_ID))}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "orders"),
    "missing-partition-latest": ({0: (3, metadata(STORM_ID))}, "UNCOMMITTED_LATEST", "AT_LEAST_ONCE", "orders"),
    "at-most-once": (
        {0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))},
        "UNCOMMITTED_EARLIEST",
        "AT_MOST_ONCE",
        "orders",
    ),
    "no-guarantee": (
        {0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))},
        "UNCOMMITTED_EARLIEST",
        "NO_GUARANTEE",
        "orders",
    ),
    # metadata that binds with no topologyId: activate() throws NullPointerException (start.COMMIT_CRASH), on a
    # task given partition 0 alone (its fifth element: the task's partitions) and, below, on one given both
    "null-metadata-document": (
        {0: (3, "null"), 1: (2, metadata(STORM_ID))},
        "UNCOMMITTED_EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
        [0],
    ),
    "no-topology-id-earliest": (
        {0: (3, '{"taskId":1,"threadName":"main"}'), 1: (2, metadata(STORM_ID))},
        "EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
        [0],
    ),
    "null-topology-id-latest": ({0: (3, '{"topologyId":null,"taskId":1}')}, "LATEST", "AT_MOST_ONCE", "orders", [0]),
    "null-topology-id-whole-task": (
        {0: (3, metadata(STORM_ID)), 1: (2, ' {"topologyId" : null} ')},
        "UNCOMMITTED_LATEST",
        "AT_LEAST_ONCE",
        "orders",
        [0, 1],
    ),
}


def client_setup(
    line: str, zk_server, zk, kafka, broker_address: str, *, release: str | None = None, scenarios: dict | None = None
) -> tuple[list[dict], dict, dict]:
    """The stores of `scenarios` (CLIENT's form; default CLIENT) set up, and what offctl says of each, told
    `--storm-kafka-client-release release` (default: 2.8.8 for line 2.8.3, else the line): (the runner's scenarios,
    {name: verdicts}, {"topics": {"orders": ..., "trimmed": ...}, "storm_root": ..., "prefix": ...}). A commit's
    metadata may be a function of (topic, partition, offset), for metadata that names them."""
    from confluent_kafka import TopicPartition

    release = release or ("2.8.8" if line == "2.8.3" else line)
    prefix = f"oracle-client-{line}-{time.time_ns()}"
    topics = {
        "orders": kafka.filled_topic(f"{prefix}-orders", 2, 10),
        "trimmed": kafka.filled_topic(f"{prefix}-trimmed", 1, 10),
    }
    (deleted,) = kafka.admin.delete_records([TopicPartition(topics["trimmed"], 0, 4)]).values()
    deleted.result(30)
    storm_root = f"/{prefix}/storm"
    zk.create(f"{storm_root}/storms/{STORM_ID}", makepath=True)
    runs, offctl = [], {}
    for name, (commits, strategy, guarantee, on, *task) in (CLIENT if scenarios is None else scenarios).items():
        group = f"{prefix}-{name}"
        for p, (offset, meta) in commits.items():
            kafka.commit(group, topics[on], {p: offset}, meta(topics[on], p, offset) if callable(meta) else meta)
        offctl[name] = verdicts(
            inspect(
                "--zk",
                zk_server.address,
                "--storm-root",
                storm_root,
                "--bootstrap-servers",
                broker_address,
                "--group",
                group,
                "--topic",
                topics[on],
                "--storm-kafka-client-release",
                release,
                "--first-poll-offset-strategy",
                strategy,
                "--processing-guarantee",
                guarantee,
            )
        )
        runs.append(
            {
                "name": name,
                "bootstrap_servers": broker_address,
                "topic": topics[on],
                "group_id": group,
                "topology_id": STORM_ID,
                "first_poll_offset_strategy": strategy,
                "processing_guarantee": guarantee,
                **({"partitions": task[0]} if task else {}),
            }
        )
    return runs, offctl, {"topics": topics, "storm_root": storm_root, "prefix": prefix}


def client_run(line: str, zk_server, zk, kafka, broker_address: str) -> tuple[dict, dict]:
    from tests.oracle.storm_client_spout import run_client_spouts

    scenarios, offctl, _ = client_setup(line, zk_server, zk, kafka, broker_address)
    ran = {r["name"]: r for r in run_client_spouts(line, scenarios)}
    for scenario in scenarios:
        ran[scenario["name"]]["group_id"] = scenario["group_id"]
        ran[scenario["name"]]["task"] = scenario.get("partitions")
    return offctl, ran


@pytest.fixture(scope="module")
def client_2_8(zk_server, zk, broker, kafka):
    return client_run("2.8.3", zk_server, zk, kafka, broker.address)


@pytest.fixture(scope="module")
def client_1_2(zk_server, zk, broker39, kafka39):
    return client_run("1.2.4", zk_server, zk, kafka39, broker39.address)


def _agree(name: str, offctl: dict, ran: dict) -> None:
    r, said = ran[name], offctl[name]
    crashes = [p for p, (_, resumes, _) in said.items() if resumes == "crashes"]
    if crashes:  # the spout's own exception before it emits anything: from activate(), before any partition of the
        # task is read (a commit that binds with no topologyId: start.COMMIT_CRASH), or from nextTuple() before
        # the first emit (STORM-2844's check on a commit above the log end: outcomes.EMIT_CHECK); none emits
        assert "NullPointerException" in str(r["errors"].get("activate")) or "already been committed" in str(
            r["errors"].get("nextTuple")
        ), (name, r)
        assert not any(v is not None for v in r["first_emitted"].values()) and not any(r["emitted"].values()), (name, r)
        return
    for p in sorted((set(said) if r["task"] is None else set(r["task"])) | set(r["assigned"])):
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
    from offctl.core.storm.outcomes import out_of_range_outcome
    from offctl.core.storm.releases import Library, SpoutProfile

    said = out_of_range_outcome(SpoutProfile(), Library.STORM_KAFKA_CLIENT, "above").sentence(50, 4, 10)
    assert "throws IllegalStateException" in said


# --- the repairs, proven on the spout: the real storm-kafka-client 2.8.3 spout starts where the plan said ------------


@pytest.fixture
def repairs(zk_server, zk, broker, kafka, names, tmp_path):
    """A topic of 2 partitions of 10 messages, a group, Storm's root with nothing running, and the flags a write
    needs (its backups and audit log in tmp_path)."""
    topic, group, root = kafka.filled_topic(names("orders"), 2, 10), names("group"), f"/{names('root')}"
    zk.create(f"{root}/storm/storms", makepath=True)
    conn = [
        "--zk",
        zk_server.address,
        "--zk-root",
        f"{root}/spouts",
        "--storm-root",
        f"{root}/storm",
        "--bootstrap-servers",
        broker.address,
        "--backup-dir",
        str(tmp_path / "backups"),
        "--audit-log",
        str(tmp_path / "audit.jsonl"),
        "--quiet-period",
        "0",
    ]
    return {"topic": topic, "group": group, "root": root, "conn": conn, "broker": broker.address}


def write(*args: str, code: int = 0) -> dict:
    """The write's JSON document; `code`: the exit code it must end with (5: it wrote, and its read-back says the
    spout will not resume from what it wrote)."""
    result = invoke([*args, "--execute", "--yes", "-o", "json"], catch_exceptions=False)
    assert result.exit_code == code, result.stderr
    return json.loads(result.stdout)


def spout_starts(r: dict, strategy: str) -> dict[int, int | None]:
    from tests.oracle.storm_client_spout import run_client_spouts

    [got] = run_client_spouts(
        "2.8.3",
        [
            {
                "name": strategy,
                "bootstrap_servers": r["broker"],
                "topic": r["topic"],
                "group_id": r["group"],
                "topology_id": STORM_ID,
                "first_poll_offset_strategy": strategy,
                "ack": False,
            }
        ],
    )
    assert got["errors"] == {}, got
    return {p: got["first_emitted"].get(p) for p in got["assigned"]}


def test_migrate_then_the_new_spout_resumes_at_the_old_spouts_offsets(repairs, zk, broker):
    """The migration runbook's headline: the old spout's ZooKeeper offsets copied into the group with the new
    topology's metadata, and the storm-kafka-client spout started on it resumes there, not at the log start, under
    EARLIEST too (isOffsetCommittedByThisTopology: the commit names the running topology)."""
    r = repairs
    for p, offset in {0: 4, 1: 7}.items():
        zk.create(
            f"{r['root']}/spouts/orders-spout/partition_{p}",
            storm_record(r["topic"], p, offset, topology_id=OTHER_ID, broker=broker.address),
            makepath=True,
        )
    plan = write("migrate", *r["conn"], "--spout", "orders-spout", "--group", r["group"], "--topology-id", STORM_ID)
    assert {c["partition"]: c["after"] for c in plan["changes"]} == {0: 4, 1: 7} and plan["verified"]
    assert spout_starts(r, "EARLIEST") == {0: 4, 1: 7}
    assert spout_starts(r, "UNCOMMITTED_EARLIEST") == {0: 4, 1: 7}


@pytest.mark.parametrize(
    "target, expected",
    [
        (("--to", "earliest"), {0: 0, 1: 0}),
        (("--to", "latest"), {0: None, 1: None}),
        (("--to", "offset", "--offset", "6"), {0: 6, 1: 6}),
        (("--to", "shift", "--by", "1"), {0: 4, 1: 3}),  # one past a poison message at the commit
    ],
    ids=["earliest", "latest", "offset", "shift-past-a-poison-message"],
)
def test_a_reset_then_the_spout_starts_where_the_plan_said(repairs, kafka, target, expected):
    r = repairs
    kafka.commit(r["group"], r["topic"], {0: 3, 1: 2}, metadata(STORM_ID))
    plan = write("reset", *r["conn"], "--group", r["group"], "--topic", r["topic"], "--topology-id", STORM_ID, *target)
    after = {c["partition"]: c["after"] for c in plan["changes"]}
    assert plan["verified"] and {p: (None if a == 10 else a) for p, a in after.items()} == expected
    assert spout_starts(r, "EARLIEST") == expected

    restored = write("restore", plan["backup"], *r["conn"])
    assert restored["verified"]
    assert spout_starts(r, "EARLIEST") == {0: 3, 1: 2}  # the restore put back the commits, metadata and all


def test_a_commit_that_crashes_the_spout_then_the_hinted_reset_then_it_resumes_there(repairs, kafka):
    """CRASHING_COMMIT's hint, run: commits whose metadata is a JSON null make the spout throw in activate() (the
    client_2_8 scenarios run that); `reset --to shift --by 0 --topology-id STORM_ID` rewrites their metadata, and
    the real spout then resumes from the same offsets, whatever its first-poll strategy."""
    r = repairs
    kafka.commit(r["group"], r["topic"], {0: 3, 1: 2}, "null")
    doc = inspect(*r["conn"][:8], "--group", r["group"], "--topic", r["topic"])
    assert {(p["partition"], p["resumes"], p["resumes_at"], p["lag"]) for p in doc["partitions"]} == {
        (0, "crashes", None, 7),
        (1, "crashes", None, 8),
    }
    assert [f["partition"] for f in doc["findings"] if f["code"] == "CRASHING_COMMIT"] == [0, 1]
    assert "--to shift --by 0 --topology-id STORM_ID" in doc["hints"]["CRASHING_COMMIT"]
    plan = write(
        "reset",
        *r["conn"],
        "--group",
        r["group"],
        "--topic",
        r["topic"],
        "--to",
        "shift",
        "--by",
        "0",
        "--topology-id",
        STORM_ID,
    )
    assert plan["verified"] and {c["partition"]: c["after"] for c in plan["changes"]} == {0: 3, 1: 2}
    assert spout_starts(r, "EARLIEST") == {0: 3, 1: 2}


METADATA_READS = 10_000


def test_offctl_reads_the_metadata_the_real_spout_committed_exactly_every_time(client_2_8, broker):
    """The spout (Java) writes its metadata with nothing after it. confluent-kafka 2.16 read metadata as a C string
    and handed back bytes of memory after it in 9 of 200 reads (librdkafka issue 4649); offctl reads a group's commits
    through kafka-python (offctl/adapters/groups.py), which reads the string's length and that many bytes: every one
    of METADATA_READS reads exact, none tried again, nothing noted."""
    from offctl.adapters.kafka import KafkaStore

    _, ran = client_2_8
    written = ran["own-commit"]["committed"]
    assert written[0]["offset"] > 3, written  # the spout's own commit (it acked past the seed's 3), not the seed
    expected = {p: w["metadata"] for p, w in written.items()}
    assert expected[0] == metadata(STORM_ID)  # as the Java client reads it back
    store = KafkaStore(broker.address)
    try:
        group = ran["own-commit"]["group_id"]
        wrong = [
            read
            for read in ({c.partition: c.metadata for c in store.group_commits([group])} for _ in range(METADATA_READS))
            if read != expected
        ]
        assert not store.notes, store.notes
    finally:
        store.close()
    assert not wrong, f"{len(wrong)} of {METADATA_READS} reads differ, the first: {wrong[0]!r}"


def test_what_offctl_commits_the_spouts_java_client_reads_as_the_spout_writes_it(repairs, kafka, client_2_8):
    """offctl's reset and restore write Storm's metadata byte for byte (kafka-python: exactly the text's UTF-8 bytes;
    confluent-kafka wrote strlen + 1 bytes, a NUL the spout read back as "...}\u0000"). The real spout's Java client
    (storm-kafka-client 2.8.3, not acking: it commits nothing of its own) reads back what offctl wrote: the same
    string the spout itself commits."""
    from tests.oracle.storm_client_spout import run_client_spouts

    _, ran = client_2_8
    spouts_own = ran["own-commit"]["committed"][0]["metadata"]
    r = repairs
    kafka.commit(r["group"], r["topic"], {0: 3, 1: 2}, metadata(STORM_ID))

    def read_back_by_java() -> dict[int, tuple[int, str]]:
        [got] = run_client_spouts(
            "2.8.3",
            [
                {
                    "name": "read-back",
                    "bootstrap_servers": r["broker"],
                    "topic": r["topic"],
                    "group_id": r["group"],
                    "topology_id": STORM_ID,
                    "first_poll_offset_strategy": "UNCOMMITTED_EARLIEST",
                    "ack": False,
                }
            ],
        )
        assert got["errors"] == {}, got
        return {p: (c["offset"], c["metadata"]) for p, c in got["committed"].items()}

    plan = write(
        "reset",
        *r["conn"],
        "--group",
        r["group"],
        "--topic",
        r["topic"],
        "--topology-id",
        STORM_ID,
        "--to",
        "offset",
        "--offset",
        "5",
    )
    assert plan["verified"]
    assert read_back_by_java() == {0: (5, spouts_own), 1: (5, spouts_own)}
    restored = write("restore", plan["backup"], *r["conn"])
    assert restored["verified"]
    assert read_back_by_java() == {0: (3, spouts_own), 1: (2, spouts_own)}


# --- the remaining repairs, proven on the spouts (issue 36, item 4): reset --to time, a group's commits deleted,
# restore, on storm-kafka-client 2.8.3 and 1.2.4, and every repair of the old spout's ZooKeeper records -------------
#
# Each family sets up independent consumers (a group or a zkRoot each), makes its first repair on every one, runs the
# real spout on all of them in one JVM, makes its second step (the restore of the first write's backup; for a group
# the reset gave its first commits, that restore deletes the group), and runs the spout again: two JVMs a family. The
# spout never acks (ack false), so it writes nothing back and each restore finds what the write left. The spout must
# start every partition where the plan's row says (`after`); where the row says the spout will not start there (a
# ZooKeeper offset <= 0, a record deleted, a group deleted), where the statement it points to says: `offctl inspect`
# right after (`resumes_at`), or the row's cost (where it counts from). Never a constant of the test's own.

IGNORES_ZERO = "ignores a stored offset <= 0"


def timed_topic(kafka, name: str, base_ms: int) -> str:
    """2 partitions of 10 records: record o of partition p written at base_ms + o * 1000 * (p + 1), so one timestamp
    falls on a different offset in each (base_ms + 3500: 4 in partition 0, 2 in partition 1)."""
    kafka.create_topic(name, 2)
    for p in range(2):
        kafka.produce_records(
            name, p, [{"value": b"m%d" % o, "timestamp": base_ms + o * 1000 * (p + 1)} for o in range(10)]
        )
    return name


def trimmed_topic(kafka, name: str, log_start: int) -> str:
    """2 partitions of 10 records, partition 0's deleted below `log_start`."""
    from confluent_kafka import TopicPartition

    kafka.filled_topic(name, 2, 10)
    (deleted,) = kafka.admin.delete_records([TopicPartition(name, 0, log_start)]).values()
    deleted.result(30)
    return name


def safety(zk_server, bootstrap: str, storm_root: str, tmp) -> list[str]:
    return [
        "--zk",
        zk_server.address,
        "--storm-root",
        storm_root,
        "--bootstrap-servers",
        bootstrap,
        "--backup-dir",
        str(tmp / "backups"),
        "--audit-log",
        str(tmp / "audit.jsonl"),
        "--quiet-period",
        "0",
    ]


def rows(plan: dict) -> dict[int, dict]:
    return {c["partition"]: c for c in plan["changes"]}


def first(offset: int | None, log_end: int) -> int | None:
    """The first offset a spout that starts at `offset` emits on a topic without gaps: nothing at the log end."""
    return None if offset is None or offset >= log_end else offset


NEXT_ID = "orders-topology-2-1700000900"  # the deployment started after the restore (a new storm id)

# storm-kafka-client: name -> (topic, the commits before {partition: offset}, an earlier deployment's (OTHER_ID), or
# none; the spouts' first-poll strategy; the first repair's flags (every reset writes metadata for STORM_ID, the
# deployment then started); the second step: "restore" (the first write's backup; then NEXT_ID starts) or "produce"
# (one record to partition 0, which the commit at the log end points at; then STORM_ID starts again, a worker
# restarted), and the exit code the restore must end with)
CLIENT_REPAIRS = {
    # EARLIEST ignores the restored commits: they name OTHER_ID, and what starts next is NEXT_ID. The restore's
    # read-back says so (exit 5, "the spout will ignore this commit"), and inspect after it says the log start.
    "time": ("timed", {0: 8, 1: 8}, "EARLIEST", ("--to", "time", "--at", "{between}"), "restore", 5),
    "time-after-last": ("late", {0: 3, 1: 2}, "EARLIEST", ("--to", "time", "--at", "{after_last}"), "produce", 0),
    "offset": ("timed", {0: 3, 1: 2}, "UNCOMMITTED_EARLIEST", ("--to", "offset", "--offset", "6"), "restore", 0),
    "delete-uncommitted-earliest": (
        "trimmed",
        None,
        "UNCOMMITTED_EARLIEST",
        ("--to", "offset", "--offset", "6"),
        "restore",
        0,
    ),
    "delete-uncommitted-latest": (
        "trimmed",
        None,
        "UNCOMMITTED_LATEST",
        ("--to", "offset", "--offset", "6"),
        "restore",
        0,
    ),
}


def client_repairs(line: str, zk_server, zk, kafka, bootstrap: str, tmp) -> dict:
    from tests.oracle.storm_client_spout import run_client_spouts

    prefix = f"repairs-client-{line}-{time.time_ns()}"
    base = int(time.time() * 1000) - 3_600_000
    at = {"between": str(base + 3500), "after_last": str(base + 18_000 + 500)}
    topics = {
        "timed": timed_topic(kafka, f"{prefix}-timed", base),
        "late": timed_topic(kafka, f"{prefix}-late", base),
        "trimmed": trimmed_topic(kafka, f"{prefix}-trimmed", 4),
    }
    storm_root = f"/{prefix}/storm"
    zk.create(f"{storm_root}/storms", makepath=True)  # nothing runs: the guards let the writes through
    flags = safety(zk_server, bootstrap, storm_root, tmp)
    # 2.8.3's KafkaSpout is v2.8.8's (tests/oracle/storm_client_spout.py)
    release = "2.8.8" if line == "2.8.3" else "1.2.4"
    out: dict = {}

    def spout_settings(strategy: str) -> list[str]:
        return ["--storm-kafka-client-release", release, "--first-poll-offset-strategy", strategy]

    def run(step: str) -> None:
        ran = run_client_spouts(
            line,
            [
                {
                    "name": name,
                    "bootstrap_servers": bootstrap,
                    "topic": s["topic"],
                    "group_id": s["group"],
                    "topology_id": s["storm_id"],
                    "first_poll_offset_strategy": s["strategy"],
                    "ack": False,
                }
                for name, s in out.items()
            ],
        )
        for r in ran:
            out[r["name"]][step] = r

    for name, (on, commits, strategy, repair, _, _) in CLIENT_REPAIRS.items():
        group, topic = f"{prefix}-{name}", topics[on]
        if commits:
            kafka.commit(group, topic, commits, metadata(OTHER_ID))
        plan = write(
            "reset",
            *flags,
            "--group",
            group,
            "--topic",
            topic,
            "--topology-id",
            STORM_ID,
            *spout_settings(strategy),
            *(a.format(**at) for a in repair),
        )
        out[name] = {"group": group, "topic": topic, "strategy": strategy, "plan": plan, "storm_id": STORM_ID}
    run("first")
    for name, (_, _, strategy, _, second, code) in CLIENT_REPAIRS.items():
        s = out[name]
        if second == "produce":
            kafka.produce(s["topic"], 0, 1)
            continue
        s["restore"] = write("restore", s["plan"]["backup"], *flags, *spout_settings(strategy), code=code)
        s["inspected"] = inspect(
            "--zk",
            zk_server.address,
            "--storm-root",
            storm_root,
            "--bootstrap-servers",
            bootstrap,
            "--group",
            s["group"],
            "--topic",
            s["topic"],
            *spout_settings(strategy),
        )
        s["inspect"] = verdicts(s["inspected"])
        s["storm_id"] = NEXT_ID
    run("second")
    return out


@pytest.fixture(scope="module")
def client_repairs_2_8(zk_server, zk, broker, kafka, tmp_path_factory):
    return client_repairs("2.8.3", zk_server, zk, kafka, broker.address, tmp_path_factory.mktemp("repairs-2.8"))


@pytest.fixture(scope="module")
def client_repairs_1_2(zk_server, zk, broker39, kafka39, tmp_path_factory):
    return client_repairs("1.2.4", zk_server, zk, kafka39, broker39.address, tmp_path_factory.mktemp("repairs-1.2"))


def starts(r: dict) -> dict[int, int | None]:
    assert r["errors"] == {} and not r["timed_out"], r
    return {p: r["first_emitted"].get(p) for p in r["assigned"]}


def _client_first(s: dict) -> None:
    """The first repair was verified, and the spout started every partition at the plan's target."""
    plan, r = s["plan"], s["first"]
    assert plan["verified"] and plan["executed"], plan
    want = {p: first(c["after"], r["log_end"][p]) for p, c in rows(plan).items()}
    assert starts(r) == want, (plan["changes"], r)


def _client_second(s: dict, said: dict[int, int | None] | None = None) -> dict[int, int | None]:
    """Where the spout started after the second step: where `said` says (partition -> the offset it starts at), by
    default where `offctl inspect` said right after the restore (resumes_at)."""
    r = s["second"]
    if said is None:
        said = {p: resumes_at for p, (resumes_at, _, _) in s["inspect"].items()}
        assert set(said) == {0, 1} and None not in said.values(), json.dumps(s["inspected"])
    got = starts(r)
    assert got == {p: first(at, r["log_end"][p]) for p, at in said.items()}, (said, r)
    return got


def counted_from(change: dict) -> int:
    """Where a change's cost says the spout goes (docs/contract.md, "What a plan costs"): it replays [after, before)
    or skips [before, after), so after is before - messages or before + messages."""
    sign = {"replay": -1, "skip": 1, "none": 0}[change["direction"]]
    return change["before"] + sign * change["messages"]


@pytest.mark.parametrize("fixture", ["client_repairs_2_8", "client_repairs_1_2"])
def test_a_reset_to_a_time_then_the_client_spout_starts_at_the_plans_target(request, fixture):
    """--to time between the records: each partition's target is the first offset at or after it (the broker's time
    index; partition 1's records are twice as far apart), and the spout, under EARLIEST, starts there. The restore
    then puts back the earlier deployment's commits, which a new deployment under EARLIEST ignores: the restore's
    read-back says so (exit 5), inspect says the log start, and the spout starts there."""
    s = request.getfixturevalue(fixture)["time"]
    assert {p: c["after"] for p, c in rows(s["plan"]).items()} == {0: 4, 1: 2}, s["plan"]
    _client_first(s)
    restore = s["restore"]
    assert {p: c["after"] for p, c in rows(restore).items()} == {0: 8, 1: 8} and restore["verified"] is False
    assert (
        all(
            "the spout will ignore this commit" in problem and "starts at the log start" in problem
            for problem in restore["problems"]
        )
        and len(restore["problems"]) == 2
    ), restore["problems"]
    assert _client_second(s) == {0: 0, 1: 0}


@pytest.mark.parametrize("fixture", ["client_repairs_2_8", "client_repairs_1_2"])
def test_a_reset_to_a_time_after_the_last_record_then_the_client_spout_waits_at_the_log_end(request, fixture):
    """--to time after every record: the plan's target is the log end; the spout emits nothing and the commit stays
    there; the next record produced is the first it emits."""
    s = request.getfixturevalue(fixture)["time-after-last"]
    r = s["first"]
    assert {p: c["after"] for p, c in rows(s["plan"]).items()} == r["log_end"] == {0: 10, 1: 10}, s["plan"]
    _client_first(s)
    assert {p: c["offset"] for p, c in r["committed"].items()} == {0: 10, 1: 10}, r
    assert starts(s["second"]) == {0: rows(s["plan"])[0]["after"], 1: None}, s["second"]


@pytest.mark.parametrize("fixture", ["client_repairs_2_8", "client_repairs_1_2"])
def test_a_reset_to_an_offset_then_restore_then_the_client_spout_starts_where_each_plan_said(request, fixture):
    s = request.getfixturevalue(fixture)["offset"]
    _client_first(s)
    restore = s["restore"]
    assert restore["verified"], restore
    assert _client_second(s) == {p: c["after"] for p, c in rows(restore).items()} == {0: 3, 1: 2}


@pytest.mark.parametrize("name", ["delete-uncommitted-earliest", "delete-uncommitted-latest"])
@pytest.mark.parametrize("fixture", ["client_repairs_2_8", "client_repairs_1_2"])
def test_a_groups_commits_deleted_then_the_client_spout_starts_where_offctl_says(request, fixture, name):
    """The only delete of a group's commits offctl makes: the restore of a write that gave a group with no commits its
    first ones deletes the group (docs/contract.md, safe rewrite rule 9). The spout then has no commit, and starts
    where the restore's plan says each row's cost counts from ("the commit is removed (the group is deleted):
    counted from the log start (UNCOMMITTED_EARLIEST ...)": partition 0's start is 4; "... the log end
    (UNCOMMITTED_LATEST ...)"). `offctl inspect` right after says CONSUMER_NOT_FOUND, and not where the spout
    starts, so the plan is the statement compared."""
    s = request.getfixturevalue(fixture)[name]
    _client_first(s)
    restore = s["restore"]
    assert restore["verified"] and {c["action"] for c in restore["changes"]} == {"delete"}, restore
    assert s["second"]["committed"] == {0: None, 1: None}, s["second"]  # the spout ran on no commit
    edge = "start" if s["strategy"].endswith("EARLIEST") else "end"
    assert all(
        f"the group is deleted): counted from the log {edge} ({s['strategy']}" in c["cost"] for c in restore["changes"]
    ), restore["changes"]
    _client_second(s, {p: counted_from(c) for p, c in rows(restore).items()})


# storm-kafka 1.2.4 (records in ZooKeeper, Kafka 3.9): name -> (topic, the records {partition: offset}, written by
# STORM_ID; SpoutConfig settings; the first repair: its command and flags; the second is the restore of its backup)
OLD_REPAIRS = {
    "offset": ("timed", {0: 4, 1: 7}, {}, ("reset", "--to", "offset", "--offset", "6")),
    # partition 1's log start is 0: the plan writes 0 and says the spout ignores it for startOffsetTime
    "earliest": ("trimmed", {0: 5, 1: 7}, {}, ("reset", "--to", "earliest")),
    "earliest-startoffsettime-latest": (
        "timed",
        {0: 4, 1: 7},
        {"startOffsetTime": LATEST},
        ("reset", "--to", "earliest"),
    ),
    "time": ("timed", {0: 8, 1: 8}, {}, ("reset", "--to", "time", "--at", "{between}")),
    "time-after-last": ("timed", {0: 3, 1: 2}, {}, ("reset", "--to", "time", "--at", "{after_last}")),
    "delete-one": ("trimmed", {0: 5, 1: 7}, {}, ("delete", "--partitions", "0")),
    "delete-all-startoffsettime-latest": (
        "timed",
        {0: 4, 1: 7},
        {"startOffsetTime": LATEST},
        ("delete", "--all-records"),
    ),
}


@pytest.fixture(scope="module")
def old_repairs(zk_server, zk, broker39, kafka39, tmp_path_factory):
    from tests.oracle.storm_kafka_spout import run_old_spouts

    prefix = f"repairs-old-{time.time_ns()}"
    base = int(time.time() * 1000) - 3_600_000
    at = {"between": str(base + 3500), "after_last": str(base + 18_000 + 500)}
    topics = {
        "timed": timed_topic(kafka39, f"{prefix}-timed", base),
        "trimmed": trimmed_topic(kafka39, f"{prefix}-trimmed", 3),
    }
    root, broker = f"/{prefix}", broker39.address
    zk.create(f"{root}/storm/storms", makepath=True)  # nothing runs
    flags = safety(zk_server, broker, f"{root}/storm", tmp_path_factory.mktemp("repairs-old"))
    out: dict = {}

    def said(name: str) -> dict:
        s = out[name]
        s["inspected"] = inspect(
            "--zk",
            zk_server.address,
            "--zk-root",
            s["zk_root"],
            "--spout",
            "orders-spout",
            "--topic",
            s["topic"],
            "--storm-root",
            f"{root}/storm",
            "--bootstrap-servers",
            broker,
            *old_flags(s["settings"]),
        )
        return verdicts(s["inspected"])

    def run(step: str) -> None:
        ran = run_old_spouts(
            [
                {
                    "name": name,
                    "zookeeper": zk_server.address,
                    "zk_root": s["zk_root"],
                    "spout_id": "orders-spout",
                    "topic": s["topic"],
                    "storm_id": STORM_ID,
                    "idle_ms": 300,
                    "hosts": {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"},
                    "spout_config": s["settings"],
                    "ack": False,
                }
                for name, s in out.items()
            ]
        )
        for r in ran:
            out[r["name"]][step] = r

    for name, (on, records, settings, (command, *repair)) in OLD_REPAIRS.items():
        topic, zk_root = topics[on], f"{root}/{name}"
        for p, offset in records.items():
            zk.create(
                f"{zk_root}/orders-spout/partition_{p}", storm_record(topic, p, offset, broker=broker), makepath=True
            )
        out[name] = {
            "topic": topic,
            "zk_root": zk_root,
            "settings": settings,
            "log_start": {0: 3 if on == "trimmed" else 0, 1: 0},
        }
        out[name]["plan"] = write(
            command, *flags, "--zk-root", zk_root, "--spout", "orders-spout", *(a.format(**at) for a in repair)
        )
        out[name]["inspect"] = said(name)
    run("first")
    for s in out.values():
        s["restore"] = write("restore", s["plan"]["backup"], *flags, "--zk-root", s["zk_root"])
    run("second")
    return out


def configured_start(s: dict, partition: int) -> int | None:
    """Where offctl's rule puts a storm-kafka 1.2.4 spout of the scenario's settings on a partition with no record
    (start.configured_start, what a MISSING_PARTITION finding says): startOffsetTime's offset, which the delete
    plan's rows name ("starts it as its start-up rules say (startOffsetTime from 0.10 on ...)")."""
    from offctl.core.storm.releases import SpoutProfile, StormKafka
    from offctl.core.storm.start import configured_start as start

    profile = SpoutProfile(
        storm_kafka=StormKafka.of_version("1.2.4"), start_offset_time=s["settings"].get("startOffsetTime", EARLIEST)
    )
    return start(profile, s["log_start"][partition], 10).offset


def old_starts(r: dict) -> dict[int, int | None]:
    assert not r["timed_out"] and not r["errors"], r
    return {int(p): offset for p, offset in r["first_emitted"].items()}


@pytest.mark.parametrize("name", sorted(OLD_REPAIRS))
def test_a_repair_of_the_old_spouts_records_then_the_old_spout_starts_where_offctl_said(old_repairs, name):
    """Each repair, then the real storm-kafka 1.2.4 spout: every partition starts at the plan's `after`; where the
    row says the spout does not start there (a target <= 0: "storm-kafka ignores a stored offset <= 0 and starts
    from startOffsetTime"; a record deleted: "starts it as its start-up rules say (startOffsetTime ...)"), at the
    `resumes_at` that `offctl inspect` gives right after the repair, with the spout's settings (after every record
    is deleted inspect says CONSUMER_NOT_FOUND instead: then startOffsetTime's offset as offctl's own rule puts it,
    configured_start). Then the restore of the repair's backup, and the spout starts at each restored record's
    offset."""
    s = old_repairs[name]
    plan, said, r = s["plan"], s["inspect"], s["first"]
    assert plan["executed"] and plan["verified"] and r["written"] == {}, (plan, r)
    if not said:  # every record deleted: inspect says CONSUMER_NOT_FOUND, not where the spout starts
        assert {c["action"] for c in plan["changes"]} == {"delete"}, json.dumps(s["inspected"])
        said = {p: (configured_start(s, p), None, None) for p in (0, 1)}
    assert set(said) == {0, 1}, json.dumps(s["inspected"])
    want = {p: first(resumes_at, 10) for p, (resumes_at, _, _) in said.items()}  # the partitions the plan leaves
    for p, c in rows(plan).items():
        resumes_at = said[p][0]
        if c["action"] == "delete" or any(IGNORES_ZERO in why for why in c["reasons"]):
            assert resumes_at is not None and "startOffsetTime" in " ".join(c["reasons"]), (c, said[p])
            want[p] = first(resumes_at, 10)
        else:
            assert resumes_at == c["after"], (c, said[p])  # inspect, right after, says the plan's target too
            want[p] = first(c["after"], 10)
    assert old_starts(r) == want, (plan["changes"], said, r)

    restore = s["restore"]
    assert restore["executed"] and restore["verified"], restore
    before = OLD_REPAIRS[name][1]  # the records before the repair; the restore puts back those it changed
    restored = {p: c["after"] for p, c in rows(restore).items()}
    assert restored == {p: before[p] for p in rows(plan)}, restore["changes"]
    assert old_starts(s["second"]) == {p: first(restored.get(p, offset), 10) for p, offset in before.items()}, (
        restore["changes"],
        s["second"],
    )


def test_the_old_spout_repairs_reach_what_they_were_meant_to(old_repairs):
    """The repairs above are the ones meant: the time falls between records on different offsets per partition,
    the earliest of the trimmed topic is its log start, the delete leaves startOffsetTime to decide."""
    after = {name: {p: c["after"] for p, c in rows(s["plan"]).items()} for name, s in old_repairs.items()}
    assert after["offset"] == {0: 6, 1: 6}
    assert after["earliest"] == {0: 3, 1: 0}
    assert after["earliest-startoffsettime-latest"] == {0: 0, 1: 0}
    assert after["time"] == {0: 4, 1: 2}
    assert after["time-after-last"] == {0: 10, 1: 10}
    assert {p: c["action"] for p, c in rows(old_repairs["delete-one"]["plan"]).items()} == {0: "delete"}
    assert {p: c["action"] for p, c in rows(old_repairs["delete-all-startoffsettime-latest"]["plan"]).items()} == {
        0: "delete",
        1: "delete",
    }
    said = {name: {p: v[:2] for p, v in s["inspect"].items()} for name, s in old_repairs.items()}
    assert said["earliest"][1] == (0, "log-start")
    assert said["earliest-startoffsettime-latest"] == {0: (10, "log-end"), 1: (10, "log-end")}
    assert said["delete-one"][0] == (3, "log-start")
