"""`offctl inspect` end to end: real ZooKeeper, the real broker, the real CLI, parsed JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from offctl.core.rules.profiles import Profiles
from offctl.settings.run import Reading, Selection
from tests.conftest import storm_record
from tests.e2e import seeds

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

RUNNING_ID = "orders-topology-7-1700000000"


def _fleet(zk, kafka, broker, names):
    """A topic with data, a Storm root, and spouts with one of each problem."""
    topic = names("orders")
    kafka.create_topic(topic, 4)
    for partition, count in {0: 5, 1: 3, 2: 1, 3: 2}.items():
        kafka.produce(topic, partition, count)
    storm_root = seeds.storm_root(zk, names.root + "-storm", RUNNING_ID)
    leader = broker.address

    def put(spout, partition, data, folder=None):
        base = f"{names.root}/{spout}" + (f"/{folder}" if folder else "")
        zk.create(f"{base}/partition_{partition}", data, makepath=True)

    # healthy: running topology, current leader, every partition in range
    for partition, offset in {0: 3, 1: 3, 2: 1, 3: 2}.items():
        put("healthy", partition, storm_record(topic, partition, offset, topology_id=RUNNING_ID, broker=leader))
    # broken: one problem per partition, partition 3 missing
    put("broken", 0, storm_record(topic, 0, 9, topology_id=RUNNING_ID, broker=leader))
    put("broken", 1, storm_record(topic, 1, 0, topology_id=RUNNING_ID, broker=leader))
    put("broken", 2, b"\xff\xfe not json")
    put("broken", 7, storm_record(topic, 7, 4, topology_id=RUNNING_ID, broker=leader))
    # shared: two topologies on one spout id, one writing another topic, an old broker
    put("shared", 0, storm_record(topic, 0, 1, topology_id="alpha-1-1600000000", broker=leader))
    put("shared", 1, storm_record(topic, 1, 1, topology_id="beta-2-1600000001", broker=leader))
    put("shared", 2, storm_record(names("payments"), 2, 1, topology_id="alpha-1-1600000000", broker=leader))
    put("shared", 3, storm_record(topic, 3, 1, topology_id="alpha-1-1600000000", broker="oldhost:9092"))
    # wildcard layout: <id>/<topic>/partition_N
    put("wild", 0, storm_record(topic, 0, 5, topology_id=RUNNING_ID, broker=leader), folder=topic)
    put("wild", 1, storm_record(names("other"), 1, 1, topology_id=RUNNING_ID, broker=leader), folder=topic)
    # a storm-kafka-client group with commits a tool wrote, without Storm metadata: they read as foreign
    group = names("group")
    kafka.commit(group, topic, {0: 2, 1: 3})
    return {"topic": topic, "root": names.root, "storm_root": storm_root, "group": group, "leader": leader}


fleet, fleet39 = seeds.on_each_broker("fleet", _fleet)


def _args(zk_server, broker, fleet, *extra):
    return (
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        fleet["root"],
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        fleet["storm_root"],
        "--group",
        fleet["group"],
        "--output",
        "json",
        *extra,
    )


def _codes(doc, consumer):
    return sorted((f["code"], f["topic"], f["partition"]) for f in doc["findings"] if f["consumer"] == consumer)


def test_inspect_reports_every_problem_with_numbers(cli, zk_server, broker, fleet):
    # storm-kafka 0.9.3-0.9.7 compares maxOffsetBehind with the log end (KafkaUtils.getOffset, v0.9.6)
    result = cli(
        *_args(
            zk_server,
            broker,
            fleet,
            "--lag-threshold",
            "2",
            "--max-offset-behind",
            "1",
            "--storm-kafka-release",
            "0.9.6",
        )
    )
    assert result.exit_code == 1, result.stderr
    doc = result.json()
    topic = fleet["topic"]

    rows = {(r["consumer"], r["partition"]): r for r in doc["partitions"] if r["consumer"] == "healthy"}
    assert {p: (r["committed"], r["log_start"], r["log_end"], r["lag"]) for (_, p), r in rows.items()} == {
        0: (3, 0, 5, 2),
        1: (3, 0, 3, 0),
        2: (1, 0, 1, 0),
        3: (2, 0, 2, 0),
    }
    assert rows[("healthy", 0)]["zk_root"] == fleet["root"]
    assert rows[("healthy", 0)]["path"] == f"{fleet['root']}/healthy/partition_0"
    assert rows[("healthy", 0)]["topology_name"] == "orders-topology"
    # every storm-kafka spout on Kafka 4.4: its SimpleConsumer's ListOffsets v0 and Fetch v0 are refused (KIP-896)
    refused = ("BROKER_INCOMPATIBLE", None, None)
    assert _codes(doc, "healthy") == [refused, ("HIGH_LAG", topic, 0), ("LAG_BEYOND_MAX_OFFSET_BEHIND", topic, 0)]

    assert _codes(doc, "broken") == sorted(
        [
            refused,
            ("OFFSET_ABOVE_LOG_END", topic, 0),
            ("IGNORED_ZERO_OFFSET", topic, 1),
            ("MALFORMED_RECORD", topic, 2),
            ("UNKNOWN_PARTITION", topic, 7),
            ("MISSING_PARTITION", topic, 3),
        ]
    )
    # the unreadable record applies to the spout's topic; it still counts as present, so partition 2 is not missing
    above = next(f for f in doc["findings"] if f["code"] == "OFFSET_ABOVE_LOG_END")
    assert "resumes at 9 > log end 5 (by 4); the spout jumps to the log end" in above["message"]
    assert above["severity"] == "error"
    malformed = next(f for f in doc["findings"] if f["code"] == "MALFORMED_RECORD")
    assert malformed["message"].endswith(
        f"the spout cannot use it and starts {topic}/2 from the log end (LatestTime: forceFromStart is false) (1)"
    )

    shared = _codes(doc, "shared")
    assert ("ID_COLLISION", None, None) in shared
    # the stray record names payments, but PartitionManager applies it to the spout's topic, where it sits
    assert ("TOPIC_MISMATCH", topic, 2) in shared
    shared_rows = {r["partition"]: r for r in doc["partitions"] if r["consumer"] == "shared"}
    assert (shared_rows[2]["topic"], shared_rows[2]["record_topic"], shared_rows[2]["lag"]) == (
        topic,
        fleet["topic"].replace("orders", "payments"),
        0,
    )
    assert ("STALE_BROKER", topic, 3) in shared
    stale = [f for f in doc["findings"] if f["code"] == "STALE_TOPOLOGY" and f["consumer"] == "shared"]
    assert sorted(f["message"].split(" committed by topology id ")[1].split(",")[0] for f in stale) == [
        "alpha-1-1600000000",
        "beta-2-1600000001",
    ]

    assert ("TOPIC_MISMATCH", topic, 1) in _codes(doc, "wild")

    group = _codes(doc, fleet["group"])
    # maxOffsetBehind is storm-kafka's: storm-kafka-client has none
    assert group == sorted(
        [
            ("FOREIGN_COMMIT", topic, 0),
            ("FOREIGN_COMMIT", topic, 1),
            ("HIGH_LAG", topic, 0),
            ("MISSING_PARTITION", topic, 2),
            ("MISSING_PARTITION", topic, 3),
        ]
    )
    group_rows = [r for r in doc["partitions"] if r["consumer"] == fleet["group"]]
    assert [(r["store"], r["partition"], r["committed"], r["lag"]) for r in group_rows] == [
        ("kafka", 0, 2, 3),
        ("kafka", 1, 3, 0),
    ]

    (group_summary,) = [c for c in doc["consumers"] if c["consumer"] == fleet["group"]]
    # storm-kafka-client assigns partitions itself: its group shows no members even while it runs
    assert (group_summary["store"], group_summary["group_state"], group_summary["members"]) == ("kafka", "empty", 0)

    assert doc["summary"]["findings"]["error"] == sum(f["severity"] == "error" for f in doc["findings"])
    assert doc["summary"]["partitions"] == len(doc["partitions"])


def test_healthy_spout_exits_zero_and_fail_on_escalates(cli, zk_server, broker39, fleet39):
    base = (
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        fleet39["root"],
        "--spout",
        "healthy",
        "--bootstrap-servers",
        broker39.address,
        "--storm-root",
        fleet39["storm_root"],
        "--output",
        "json",
    )
    assert cli(*base).exit_code == 0
    assert cli(*base, "--lag-threshold", "2").exit_code == 0  # HIGH_LAG is a warning
    assert cli(*base, "--lag-threshold", "2", "--fail-on", "warning").exit_code == 1
    assert cli(*base, "--lag-threshold", "3", "--fail-on", "warning").exit_code == 0  # lag 2 < 3


def test_table_and_csv_outputs(cli, zk_server, broker, fleet):
    args = list(_args(zk_server, broker, fleet))
    table = cli(*args[:-2], "--output", "table", "--per-partition")
    assert table.exit_code == 1
    assert "OFFSET_ABOVE_LOG_END" in table.stdout and "Consumers" in table.stdout
    csv_out = cli(*args[:-2], "--output", "csv")
    lines = csv_out.stdout.splitlines()
    assert lines[0].startswith("store,consumer,zk_root,topic,partition,committed")
    assert any(",broken," in line and "OFFSET_ABOVE_LOG_END" in line for line in lines)


def test_env_variables_replace_flags(cli, zk_server, broker39, fleet39):
    env = {
        "OFFCTL_ZK": zk_server.address,
        "OFFCTL_ZK_ROOT": fleet39["root"],
        "OFFCTL_BOOTSTRAP_SERVERS": broker39.address,
        "OFFCTL_STORM_ROOT": fleet39["storm_root"],
    }
    result = cli("inspect", "--spout", "healthy", "--output", "json", env=env)
    assert result.exit_code == 0, result.stderr
    assert {r["consumer"] for r in result.json()["partitions"]} == {"healthy"}


def test_zookeeper_only_skips_log_checks_and_says_so(cli, zk_server, fleet):
    result = cli(
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        fleet["root"],
        "--spout",
        "broken",
        "--storm-root",
        fleet["storm_root"],
        "--output",
        "json",
    )
    doc = result.json()
    assert {f["code"] for f in doc["findings"]} == {"MALFORMED_RECORD", "IGNORED_ZERO_OFFSET"}
    assert all(r["log_end"] is None and r["lag"] is None for r in doc["partitions"])
    assert "no --bootstrap-servers" in result.stderr
    assert result.exit_code == 1


def test_a_named_spout_that_does_not_exist_is_an_error_finding(cli, zk_server, fleet):
    result = cli(
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        fleet["root"],
        "--zk-root",
        "/nope",
        "--spout",
        "typo",
        "--output",
        "json",
    )
    assert result.exit_code == 1  # --fail-on error catches a typo in a runbook
    doc = result.json()
    assert doc["partitions"] == []
    assert [(f["code"], f["zk_root"], f["message"]) for f in doc["findings"]] == [
        ("CONSUMER_NOT_FOUND", fleet["root"], f"spout id 'typo' has no partition records under {fleet['root']}"),
        ("CONSUMER_NOT_FOUND", "/nope", "spout id 'typo': zkRoot /nope does not exist"),
    ]
    assert "zkRoot /nope does not exist" in result.stderr


def test_real_entry_point_pipes_json(zk_server, broker, fleet):
    """The installed console script, as a runbook calls it: JSON on stdout, nothing else."""
    proc = subprocess.run(
        [sys.executable, "-m", "offctl", *_args(zk_server, broker, fleet)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["summary"]["status"] == "error"


def test_offsets_for_times_finds_the_first_message_at_or_after_the_time(kafka, broker, names):
    """The adapter's timestamp lookup (ListOffsets by timestamp) against the broker's time index: the first offset
    whose timestamp is at or after the time asked, and None where no message is that late (an empty partition too)."""
    from offctl.adapters.kafka import KafkaStore

    t0 = 1_700_000_000_000
    topic = names("t")
    kafka.create_topic(topic, 2, {"retention.ms": "-1"})  # written in 2023: kept, not deleted by retention
    kafka.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": t0 + o * 1000} for o in range(3)])
    store = KafkaStore(broker.address)
    try:
        found = {
            at: store.offsets_for_times([(topic, 0), (topic, 1)], at)
            for at in (t0 - 1, t0, t0 + 1, t0 + 2000, t0 + 2001)
        }
    finally:
        store.close()
    assert {at: (f[(topic, 0)], f[(topic, 1)]) for at, f in found.items()} == {
        t0 - 1: (0, None),
        t0: (0, None),
        t0 + 1: (1, None),
        t0 + 2000: (2, None),
        t0 + 2001: (None, None),
    }


def test_the_cycle_collector_is_held_only_while_inspect_reads(zk_server, fleet):
    """inspect holds Python's cycle collector during its read and analysis, and gives it back as it was:
    after a report, after a store that cannot be read, and left off when the caller had it off."""
    import gc

    from offctl.core.records.model import Thresholds
    from offctl.errors import StoreUnavailable
    from offctl.pipeline.inspect import inspect
    from offctl.pipeline.read import cyclic_gc_paused
    from offctl.settings.connection import Connection

    seen = []
    with cyclic_gc_paused():
        seen.append(gc.isenabled())
    report = inspect(
        Reading(Connection(zk=zk_server.address, zk_roots=(fleet["root"],)), Selection(), Profiles(Thresholds()))
    )
    assert report.rows and seen == [False] and gc.isenabled()
    with pytest.raises(StoreUnavailable):
        inspect(Reading(Connection(zk="127.0.0.1:1", zk_roots=("/x",), timeout=1), Selection(), Profiles(Thresholds())))
    assert gc.isenabled()
    gc.disable()
    try:
        with cyclic_gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_wildcard_record_naming_another_topic_is_the_offset_of_its_folder(
    cli, zk, zk_server, kafka39, broker39, names
):
    """Issue 22: <id>/orders/partition_0 names clicks. PartitionManager reads committedPath = zkRoot + "/" + id +
    "/" + Partition.getId(), getId() = topic + "/partition_N" for a wildcard topic, and takes only topology.id
    and offset from it (PartitionManager.java, Partition.java, v1.0.0 to v1.2.4): orders/0's offset, and
    orders/1-3 have none. No flat spout '<id>/orders' reading clicks."""
    orders, clicks = kafka39.filled_topic(names("orders"), 4, 0), kafka39.filled_topic(names("clicks"), 4, 2)
    kafka39.produce(orders, 0, 5)
    spout = names("wild")
    base = f"{names.root}/{spout}"

    def put(folder: str, partition: int, offset: int) -> None:  # every record names clicks
        zk.create(
            f"{base}/{folder}/partition_{partition}",
            storm_record(clicks, partition, offset, topology_id=RUNNING_ID, broker=broker39.address),
            makepath=True,
        )

    put(orders, 0, 3)
    for p in range(4):
        put(clicks, p, 2)
    result = cli(
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        names.root,
        "--bootstrap-servers",
        broker39.address,
        "--output",
        "json",
    )
    doc = result.json()
    assert [c["consumer"] for c in doc["consumers"]] == [spout]
    (row,) = [r for r in doc["partitions"] if r["topic"] == orders]
    assert (
        row["consumer"],
        row["partition"],
        row["record_topic"],
        row["committed"],
        row["log_end"],
        row["lag"],
        row["path"],
    ) == (spout, 0, clicks, 3, 5, 2, f"{base}/{orders}/partition_0")
    assert _codes(doc, spout) == [
        ("AMBIGUOUS_SPOUT_ID", None, None),
        ("MISSING_PARTITION", orders, 1),
        ("MISSING_PARTITION", orders, 2),
        ("MISSING_PARTITION", orders, 3),
        ("TOPIC_MISMATCH", orders, 0),
    ]
    by_code = {f["code"]: f for f in doc["findings"]}
    assert by_code["TOPIC_MISMATCH"]["path"] == f"{base}/{orders}/partition_0"
    assert f"it sits in the folder '{orders}/'" in by_code["TOPIC_MISMATCH"]["message"]
    assert by_code["AMBIGUOUS_SPOUT_ID"]["path"] == f"{base}/{orders}"
    assert result.exit_code == 1, result.stderr


def test_processing_guarantee_says_what_the_group_commits_mean(cli, kafka, broker, names):
    """--processing-guarantee AT_MOST_ONCE: the committed offset is the next to poll (KafkaSpout.pollKafkaBroker,
    v2.8.8; 3.1.0 follows it). The commit carries the spout's metadata, which the broker keeps: no FOREIGN_COMMIT
    (the rest of what depends on the metadata: tests/unit/test_guarantee.py)."""
    topic, group = names("polled"), names("most-once")
    kafka.create_topic(topic, 1)
    kafka.produce(topic, 0, 4)
    kafka.commit(group, topic, {0: 1}, json.dumps({"topologyId": RUNNING_ID, "taskId": 1, "threadName": "t"}))
    args = (
        "inspect",
        "--bootstrap-servers",
        broker.address,
        "--group",
        group,
        "--storm-kafka-client-release",
        "3.1.0",
        "--processing-guarantee",
        "AT_MOST_ONCE",
    )
    doc = cli(*args, "--output", "json").json()
    said = doc["processing_guarantee"]
    assert said["guarantee"] == "AT_MOST_ONCE" and "next offset to poll" in said["committed_offset"]
    assert "right after each poll" in said["commits"] and "not yet polled" in said["lag"]
    assert "never processed" in said["restart"] and "KafkaSpout.java@v2.8.8" in said["sources"]
    assert [(r["committed"], r["lag"]) for r in doc["partitions"]] == [(1, 3)]  # 3 messages not yet polled
    assert "FOREIGN_COMMIT" not in doc["summary"]["by_code"]
    assert "processingGuarantee=AT_MOST_ONCE" in doc["spout_settings"]
    table = cli(*args)
    assert "storm-kafka-client groups under AT_MOST_ONCE" in table.stdout
    assert "committed offset: the consumer's position after the last poll" in table.stdout
    default = cli("inspect", "--bootstrap-servers", broker.address, "--group", group, "--output", "json").json()
    assert default["processing_guarantee"]["guarantee"] == "AT_LEAST_ONCE"


def test_a_group_another_consumer_joined_is_a_group_type_conflict(cli, kafka, broker, names):
    """A spout's group (Storm commit metadata) that a real confluent-kafka consumer joined with subscribe():
    the broker refuses the spout's generation -1 commits while the member is there, so inspect reports
    GROUP_TYPE_CONFLICT (error, exit 1) with the group's type, state and members in the consumer's JSON. With
    --storm-kafka-client-release 1.1.1 (whose default NamedSubscription subscribes) the member may be the spout
    itself: no finding. A KIP-848 consumer group: the next test; share groups: test_analyze's plain-data cases
    (confluent-kafka 2.16's admin client cannot name a share group's type)."""
    from tests.e2e.test_reset_e2e import joined

    topic = kafka.filled_topic(names("orders"), 1, 3)
    group = names("group")
    kafka.commit(group, topic, {0: 2}, json.dumps({"topologyId": RUNNING_ID, "taskId": 1, "threadName": "t"}))
    base = ("inspect", "--bootstrap-servers", broker.address, "--group", group, "--output", "json")
    before = cli(*base)
    with joined(kafka, broker, group, topic):
        during = cli(*base)
        legacy = cli(*base, "--storm-kafka-client-release", "1.1.1")
    assert before.exit_code == 0, before.stderr
    assert during.exit_code == 1, during.stderr
    doc = during.json()
    (conflict,) = [f for f in doc["findings"] if f["code"] == "GROUP_TYPE_CONFLICT"]
    assert conflict["severity"] == "error" and conflict["consumer"] == group
    assert "classic group with" in conflict["message"] and "UNKNOWN_MEMBER_ID" in conflict["message"]
    (consumer,) = doc["consumers"]
    assert (consumer["group_type"], consumer["group_state"], consumer["status"]) == ("classic", "stable", "error")
    assert "group_protocol" in consumer and "members" in consumer
    assert before.json()["consumers"][0]["group_type"] == "classic"
    # 1.1.1's kafka-clients 0.10.0.0 sends ListOffsets v0 and Fetch v2, which Kafka 4.4 refuses (docs/storm.md)
    assert legacy.exit_code == 1, legacy.stderr
    assert set(legacy.json()["summary"]["by_code"]) == {"BROKER_INCOMPATIBLE"}


def test_a_spout_group_a_kip848_consumer_joined_is_a_group_type_conflict(cli, kafka, broker, names):
    """A spout's group that a consumer joined with group.protocol=consumer (KIP-848) is a consumer group with a member:
    the broker refuses the spout's commits (no member id, epoch -1: UNKNOWN_MEMBER_ID from
    ConsumerGroup.validateOffsetCommit), so inspect reports GROUP_TYPE_CONFLICT with the group's type. Under
    storm-kafka-client 1.1.1, whose clients speak only the classic protocol, the member cannot be the spout: another
    application shares the group.id. Once the member has left, the group is an empty consumer group: no finding."""
    from tests.conftest import joined_as_consumer

    topic = kafka.filled_topic(names("orders"), 1, 3)
    group = names("group")
    kafka.commit(group, topic, {0: 2}, json.dumps({"topologyId": RUNNING_ID, "taskId": 1, "threadName": "t"}))
    base = ("inspect", "--bootstrap-servers", broker.address, "--group", group, "--output", "json")
    with joined_as_consumer(kafka, broker, group, topic):
        during = cli(*base)
        legacy = cli(*base, "--storm-kafka-client-release", "1.1.1")
    after = cli(*base)
    assert during.exit_code == 1, during.stderr
    doc = during.json()
    (conflict,) = [f for f in doc["findings"] if f["code"] == "GROUP_TYPE_CONFLICT"]
    assert conflict["severity"] == "error" and conflict["consumer"] == group
    assert "is a KIP-848 consumer group with 1 member joined (state stable" in conflict["message"]
    assert "UNKNOWN_MEMBER_ID" in conflict["message"] and "ConsumerGroup.validateOffsetCommit" in conflict["message"]
    (consumer,) = doc["consumers"]
    assert (consumer["group_type"], consumer["group_state"], consumer["members"]) == ("consumer", "stable", 1)
    assert legacy.exit_code == 1, legacy.stderr
    (old,) = [f for f in legacy.json()["findings"] if f["code"] == "GROUP_TYPE_CONFLICT"]
    assert "never use, so another application shares this group.id" in old["message"]
    assert after.exit_code == 0, after.stderr
    (consumer,) = after.json()["consumers"]
    assert (consumer["group_type"], consumer["group_state"], consumer["members"]) == ("consumer", "empty", 0)
    assert "GROUP_TYPE_CONFLICT" not in after.json()["summary"]["by_code"]
