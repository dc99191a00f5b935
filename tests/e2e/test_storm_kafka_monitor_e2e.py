"""`storm-kafka-monitor` end to end: the installed program, as Storm UI runs it (a process, arguments as
TopologySpoutLag passes them, stdout and the exit code read), against the real ZooKeeper and broker.

TSL = storm-core/src/jvm/org/apache/storm/utils/TopologySpoutLag.java; KOLU = external/storm-kafka-monitor/src/main/
java/org/apache/storm/kafka/monitor/KafkaOffsetLagUtil.java (apache/storm). Old-spout arguments are TSL@v1.2.4's
getCommandLineOptionsForOldKafkaSpout (`-z` with a trailing comma); new-spout ones TSL@v2.8.8's.

Kafka keeps a commit's metadata as it is sent: a group committed with Storm metadata, as storm-kafka-client commits,
is judged by the topology it names (KafkaSpout.doSeek, v2.8.8); one committed without any reads as FOREIGN_COMMIT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from offctl.adapters import servers
from tests.conftest import storm_record
from tests.support.storm_ui import RELEASES, requires_storm_ui, storm_ui_reads

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

PROGRAM = str(Path(sys.executable).parent / "storm-kafka-monitor")
REASON = "Unable to get offset lags for kafka. Reason: "
RUNNING_ID = "orders-topology-7-1700000000"
HANG_GUARD_S = 120  # the run ends long before this; it only keeps a hang from stalling the suite


def monitor(*args: str, env: dict | None = None, deadline: str = "20s") -> subprocess.CompletedProcess:
    environ = {**os.environ, "OFFCTL_DEADLINE": deadline, **(env or {})}
    return subprocess.run([PROGRAM, *args], capture_output=True, text=True, env=environ, timeout=HANG_GUARD_S)


def rows(out: str) -> dict:
    doc = json.loads(out)
    assert isinstance(doc, dict) and all(isinstance(t, dict) for t in doc.values())
    return doc


@pytest.fixture
def topic(kafka, names):
    """Three partitions holding 4, 3 and 2 messages."""
    name = names("orders")
    kafka.create_topic(name, 3)
    for partition, count in {0: 4, 1: 3, 2: 2}.items():
        kafka.produce(name, partition, count)
    return name


# --- new spouts (storm-kafka-client): -t -g -b, TSL@v2.8.8 getCommandLineOptionsForNewKafkaSpout -------------------


def test_new_spout_every_partition_with_the_uncommitted_one_where_the_first_poll_puts_it(kafka, broker, topic, names):
    group = names("group")
    kafka.commit(group, topic, {0: 1, 1: 3})
    result = monitor("-t", topic, "-g", group, "-b", broker.address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not result.stdout.endswith("\n")  # KOLU prints with System.out.print
    doc = rows(result.stdout)
    p = doc[topic]
    assert sorted(p) == ["0", "1", "2"]
    assert {k: p["0"][k] for k in ("consumerCommittedOffset", "logHeadOffset", "lag")} == {
        "consumerCommittedOffset": 1,
        "logHeadOffset": 4,
        "lag": 3,
    }
    assert p["1"]["lag"] == 0 and p["1"]["timeLagSeconds"] == 0
    # no commit: KOLU shows committed -1 and lag head + 1; UNCOMMITTED_EARLIEST (the default) starts at the log
    # start (KafkaSpout.doSeek, v2.8.8), 0 here, so 2 messages are ahead of the spout
    assert p["2"]["consumerCommittedOffset"] == -1 and p["2"]["logHeadOffset"] == 2
    assert p["2"]["lag"] == 2 and p["2"]["originalLag"] == 3 and p["2"]["resumeOffset"] == 0
    assert "MISSING_PARTITION" in p["2"]["findings"] and "no committed offset" in p["2"]["why"]
    assert p["0"]["profile"] is None and "originalLag" not in p["0"]
    assert p["0"]["timeLagSeconds"] is not None and p["0"]["timeLagSeconds"] >= 0  # the message at offset 1 was read


def test_new_spout_first_poll_latest_from_the_context_profile(kafka, broker, topic, names, tmp_path):
    group = names("group")
    kafka.commit(group, topic, {0: 1})
    config = tmp_path / "config.toml"
    config.write_text(
        f'default-context = "ui"\n[contexts.ui]\ndeadline = "30s"\n'
        f'[[profiles]]\nname = "latest"\nmatch = "{group}"\nfirst-poll-offset-strategy = "LATEST"\n'
    )
    result = monitor("-t", topic, "-g", group, "-b", broker.address, env={"OFFCTL_CONFIG": str(config)})
    assert result.returncode == 0, result.stdout + result.stderr
    p = rows(result.stdout)[topic]
    assert p["0"]["profile"] == "latest"
    # LATEST: no commit, so the spout starts at the log end: nothing ahead of it (KafkaSpout.doSeek, v2.8.8)
    assert p["1"]["consumerCommittedOffset"] == -1 and p["1"]["lag"] == 0 and p["1"]["originalLag"] == 4


def storm_metadata(topology_id: str) -> str:
    """Commit metadata as storm-kafka-client's CommitMetadataManager writes it (v1.2.4 to v2.8.8)."""
    return json.dumps(
        {"topologyId": topology_id, "taskId": 5, "threadName": "Thread-9-kafka-spout-executor[5 5]"},
        separators=(",", ":"),
    )


def test_new_spout_earliest_ignores_the_commit_of_another_topology(
    kafka, broker, zk, zk_server, topic, names, tmp_path
):
    """KafkaSpout.doSeek@v2.8.8 with EARLIEST: a commit whose Storm metadata names the running topology is resumed
    from; one the deployment before a redeploy made is not (CommitMetadataManager.isOffsetCommittedByThisTopology),
    and the spout starts at the log start, so the lag counts from there, KOLU's beside it. The running topology is
    read from Storm's ZooKeeper, which the context names."""
    storm_root = names.root + "-storm"
    zk.create(f"{storm_root}/storms/{RUNNING_ID}", b"", makepath=True)
    own, before = names("own"), names("redeployed")
    kafka.commit(own, topic, {0: 1, 1: 3}, metadata=storm_metadata(RUNNING_ID))
    kafka.commit(before, topic, {0: 1, 1: 3}, metadata=storm_metadata("orders-topology-6-1690000000"))
    config = tmp_path / "config.toml"
    config.write_text(
        f'default-context = "ui"\n[contexts.ui]\nzk = "{zk_server.address}"\n'
        f'storm-root = "{storm_root}"\ndeadline = "30s"\n[[profiles]]\nname = "earliest"\n'
        f'match = "{names.prefix}-*"\nfirst-poll-offset-strategy = "EARLIEST"\n'
    )
    env = {"OFFCTL_CONFIG": str(config)}
    answers = {g: monitor("-t", topic, "-g", g, "-b", broker.address, env=env) for g in (own, before)}
    assert all(r.returncode == 0 for r in answers.values()), {g: r.stdout + r.stderr for g, r in answers.items()}
    mine, theirs = (rows(answers[g].stdout)[topic] for g in (own, before))

    def three(entry: dict) -> tuple:
        return entry["consumerCommittedOffset"], entry["logHeadOffset"], entry["lag"]

    assert [three(mine[p]) for p in ("0", "1")] == [(1, 4, 3), (3, 3, 0)]  # resumed from: KOLU's lag
    assert "originalLag" not in mine["0"] and "originalLag" not in mine["1"] and mine["0"]["profile"] == "earliest"
    assert [three(theirs[p]) for p in ("0", "1")] == [(1, 4, 4), (3, 3, 3)]  # from the log start, 0
    assert [theirs[p]["originalLag"] for p in ("0", "1")] == [3, 0]
    assert [theirs[p]["resumeOffset"] for p in ("0", "1")] == [0, 0]
    # why: the consumer's STALE_TOPOLOGY, which says EARLIEST ignores the redeployed topology's commits
    assert all("ignores these commits and starts at the log start" in theirs[p]["why"] for p in ("0", "1"))
    assert all("no committed offset" not in theirs[p]["why"] for p in ("0", "1"))
    assert three(mine["2"]) == three(theirs["2"]) == (-1, 2, 2)  # no commit: EARLIEST starts at the log start


def test_new_spout_topics_listed_with_a_trailing_comma_and_an_unknown_topic(kafka, broker, topic, names):
    group = names("group")
    kafka.commit(group, topic, {0: 4, 1: 3, 2: 2})
    result = monitor("-t", f"{topic},{names('absent')},", "-g", group, "-b", broker.address)
    assert result.returncode == 0, result.stdout + result.stderr
    doc = rows(result.stdout)
    assert list(doc) == [topic]  # KOLU skips a topic partitionsFor does not know
    assert all(v["lag"] == 0 for v in doc[topic].values())
    assert "no such topic" in result.stderr


def test_consumer_properties_override_bootstrap_and_refuse_a_jks_truststore_without_the_secret(
    kafka, broker, topic, names, tmp_path
):
    group = names("group")
    kafka.commit(group, topic, {0: 4})
    props = tmp_path / "kafka-consumer-extra1props"
    # as TopologySpoutLag.createExtraPropertiesFile writes it (Properties.store: a comment, a date, escaped ':')
    props.write_text(
        f"#Kafka consumer extra properties\n#Tue Nov 24 10:00:00 UTC 2026\n"
        f"bootstrap.servers={broker.address.replace(':', chr(92) + ':')}\n"
        f"key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n"
    )
    result = monitor("-t", topic, "-g", group, "-b", "127.0.0.1:1", "-c", str(props))
    assert result.returncode == 0, result.stdout + result.stderr
    assert rows(result.stdout)[topic]["0"]["lag"] == 0  # the file's bootstrap.servers won over -b (putAll)

    secret = "s3cr3t-truststore-pw"
    props.write_text(
        f"ssl.truststore.location=/etc/kafka/truststore.jks\nssl.truststore.password={secret}\n"
        f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="storm" password="{secret}";\n'
    )
    result = monitor("-t", topic, "-g", group, "-b", broker.address, "-s", "SASL_SSL", "-c", str(props))
    assert result.returncode == 0
    assert result.stdout.startswith(REASON) and "ssl.truststore" in result.stdout
    assert secret not in result.stdout + result.stderr


# --- old spouts (storm-kafka): -o -t -n -z, then -r [-w] or -p -l, TSL@v1.2.4 ---------------------------------------


@pytest.fixture
def old_topic(kafka39, names):
    """On Apache Kafka 3.9 (ZooKeeper mode), the broker storm-kafka's spouts talk to: three partitions holding 4, 3
    and 2 messages, registered by the broker in its registry."""
    name = names("orders")
    kafka39.create_topic(name, 3)
    for partition, count in {0: 4, 1: 3, 2: 2}.items():
        kafka39.produce(name, partition, count)
    return name


@pytest.fixture
def registry(broker39):
    """Kafka's broker registry as Apache Kafka 3.9 writes it (/brokers/ids/<id>, /brokers/topics/<t>/partitions/<n>/
    state) in the test ZooKeeper, under its chroot: the root storm-kafka-monitor's -r names."""
    from tests.conftest import BROKER39_CHROOT

    return f"{BROKER39_CHROOT}/brokers"


def test_old_spout_from_the_broker_registry(zk, zk_server, broker39, old_topic, registry, names):
    topic, root, broker = old_topic, registry, broker39
    spout = f"{names.root}/orders-spout"
    storm_root = names.root + "-storm"
    zk.create(f"{storm_root}/storms/{RUNNING_ID}", b"", makepath=True)
    zk.create(
        f"{spout}/partition_0", storm_record(topic, 0, 2, topology_id=RUNNING_ID, broker=broker.address), makepath=True
    )
    zk.create(f"{spout}/partition_1", storm_record(topic, 1, 0, topology_id=RUNNING_ID, broker=broker.address))
    zk.create(f"{spout}/partition_2", storm_record(topic, 2, 9, topology_id=RUNNING_ID, broker=broker.address))
    result = monitor(
        "-o", "-t", topic, "-n", spout, "-z", zk_server.address + ",", "-r", root, env={"OFFCTL_STORM_ROOT": storm_root}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    p = rows(result.stdout)[topic]
    assert {k: p["0"][k] for k in ("consumerCommittedOffset", "logHeadOffset", "lag")} == {
        "consumerCommittedOffset": 2,
        "logHeadOffset": 4,
        "lag": 2,
    }
    # offset 0: PartitionManager ignores a stored offset <= 0 and starts at startOffsetTime (earliest: 0 here)
    assert p["1"]["consumerCommittedOffset"] == 0 and p["1"]["findings"] == ["IGNORED_ZERO_OFFSET"]
    assert p["1"]["lag"] == 3 and "originalLag" not in p["1"]
    # past the log end: the fetch fails out of range and the reset (EarliestTime) lies below the stored offset, which
    # fill() never moves back: the spout waits at 9 (outcomes.out_of_range_outcome, PartitionManager.fill@v1.2.4;
    # run on the spout: test_spout_oracle_e2e, above-log-end), as inspect says; the lag is the original's
    assert p["2"]["consumerCommittedOffset"] == 9 and "OFFSET_ABOVE_LOG_END" in p["2"]["findings"]
    assert p["2"]["lag"] == -7 and "originalLag" not in p["2"] and p["2"]["resumeOffset"] == 9
    assert p["2"]["resumes"] == "waits-until-log-end-reaches"


def test_old_spout_wildcard_topics_from_the_registry(zk, zk_server, kafka39, broker39, registry, names):
    root, broker = registry, broker39
    first, second, other = names("clicks-a"), names("clicks-b"), names("views")
    for t in (first, second, other):
        kafka39.create_topic(t, 1)
        kafka39.produce(t, 0, 2)
    spout = f"{names.root}/clicks-spout"
    zk.create(f"{spout}/{first}/partition_0", storm_record(first, 0, 1, broker=broker.address), makepath=True)
    # a Java regex over the registry's topics, matched whole (String.matches, DynamicBrokersReader@v1.2.4)
    pattern = names("clicks-") + ".*"
    result = monitor("-o", "-t", pattern, "-n", spout, "-z", zk_server.address + ",", "-r", root, "-w")
    assert result.returncode == 0, result.stdout + result.stderr
    doc = rows(result.stdout)
    assert sorted(doc) == sorted([first, second])
    assert doc[first]["0"]["consumerCommittedOffset"] == 1 and doc[first]["0"]["lag"] == 1
    assert doc[second]["0"]["consumerCommittedOffset"] == -1 and doc[second]["0"]["originalLag"] == 3


def test_old_spout_static_hosts(zk, zk_server, broker39, old_topic, names):
    topic, broker = old_topic, broker39
    spout = f"{names.root}/static-spout"
    zk.create(f"{spout}/partition_1", storm_record(topic, 1, 1, broker=broker.address), makepath=True)
    # KafkaSpout.getComponentConfiguration@v1.2.4 writes partitions and leaders with trailing commas
    result = monitor(
        "-o",
        "-t",
        topic,
        "-n",
        spout,
        "-z",
        zk_server.address + ",",
        "-p",
        "1,2,",
        "-l",
        f"{broker.address},{broker.address},",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    p = rows(result.stdout)[topic]
    assert sorted(p) == ["1", "2"]
    assert p["1"]["consumerCommittedOffset"] == 1 and p["1"]["lag"] == 2
    assert p["2"]["consumerCommittedOffset"] == -1 and p["2"]["lag"] == 2


def test_old_spout_node_that_does_not_exist(zk_server, names):
    result = monitor(
        "-o", "-t", "t", "-n", f"{names.root}/nobody", "-z", zk_server.address, "-p", "0", "-l", "127.0.0.1:9092"
    )
    assert result.returncode == 0
    assert result.stdout.startswith(REASON) and "does not exist" in result.stdout
    assert result.stdout.count("\n") == 1


# --- bounded in time: black holes on loopback (accept, never answer) ----------------------------------------------


@pytest.fixture
def black_hole():
    sock, port = servers.black_hole()
    yield f"127.0.0.1:{port}"
    sock.close()


def test_black_holed_broker_answers_with_the_failure_line(black_hole, names):
    result = monitor("-t", "orders", "-g", names("group"), "-b", black_hole, deadline="3s")
    assert result.returncode == 0
    assert result.stdout.startswith(REASON) and black_hole in result.stdout
    assert result.stdout.count("\n") == 1


def test_black_holed_zookeeper_answers_with_what_was_not_read(black_hole, names):
    result = monitor(
        "-o", "-t", "orders", "-n", f"{names.root}/spout", "-z", black_hole + ",", "-r", "/brokers", deadline="3s"
    )
    assert result.returncode == 0
    assert result.stdout.startswith(REASON) and black_hole in result.stdout
    assert "consumerCommittedOffset" in result.stdout  # what was not read


def test_black_holed_broker_behind_a_working_zookeeper(zk, zk_server, black_hole, names):
    spout = f"{names.root}/spout"
    zk.create(f"{spout}/partition_0", storm_record("orders", 0, 1), makepath=True)
    result = monitor(
        "-o", "-t", "orders", "-n", spout, "-z", zk_server.address, "-p", "0", "-l", black_hole, deadline="3s"
    )
    assert result.returncode == 0
    assert result.stdout.startswith(REASON) and black_hole in result.stdout


# --- the command line, as KOLU refuses it -----------------------------------------------------------------------


def test_a_refused_command_line_prints_the_message_and_help_and_exits_1():
    result = monitor("-o", "-t", "a,b", "-n", "/x", "-z", "zk:2181")
    assert result.returncode == 1
    first, *rest = result.stdout.splitlines()
    assert first == (
        "Multiple topics not supported with option old-spout. Either a single topic or a wildcard "
        "string for matching topics is supported"
    )
    assert rest[0] == "usage: storm-kafka-monitor" and any(line.startswith(" -t,--topics <arg>") for line in rest)


def test_offctl_form_takes_its_own_options_first(zk_server, names):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "offctl",
            "storm-kafka-monitor",
            "--deadline",
            "5s",
            "-o",
            "-t",
            "t",
            "-n",
            f"{names.root}/nobody",
            "-z",
            zk_server.address,
            "-p",
            "0",
            "-l",
            "127.0.0.1:9092",
        ],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert result.returncode == 0 and result.stdout.startswith(REASON) and "does not exist" in result.stdout


def test_a_bad_config_file_is_a_failure_line_not_a_dropped_spout(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[contexts.ui\n")
    result = monitor("-t", "orders", "-g", "g", "-b", "127.0.0.1:9092", env={"OFFCTL_CONFIG": str(config)})
    assert result.returncode == 0
    assert result.stdout.startswith(REASON + "offctl.UsageError: config ")


# --- what Storm UI shows: the real outputs through TopologySpoutLag's parse and the page's loop
# (tests/support/storm_ui.py, Debian's json-simple; json-simple 1.1 reads these inputs the same,
# tests/java/StormUiLag.java says where it looked)


@requires_storm_ui
@pytest.mark.parametrize("release", RELEASES)
def test_storm_ui_shows_the_rows_the_error_line_or_drops_the_spout(release, kafka, broker, topic, zk_server, names):
    group = names("group")
    kafka.commit(group, topic, {0: 1, 1: 3})
    answered = monitor("-t", topic, "-g", group, "-b", broker.address)
    view = storm_ui_reads(answered.stdout.encode(), answered.returncode, release)
    doc = rows(answered.stdout)
    assert view.error_info is None and view.omitted is None and view.page_error is None
    shown = {(r.topic, r.partition): (r.log_head_offset, r.consumer_committed_offset, r.lag) for r in view.rows}
    assert shown == {
        (topic, p): ((e["logHeadOffset"], "Long"), (e["consumerCommittedOffset"], "Long"), (e["lag"], "Long"))
        for p, e in doc[topic].items()
    }
    assert len(shown) == 3

    failed = monitor(
        "-o", "-t", topic, "-n", f"{names.root}/nobody", "-z", zk_server.address + ",", "-p", "0", "-l", broker.address
    )
    view = storm_ui_reads(failed.stdout.encode(), failed.returncode, release)
    assert view.rows == () and view.omitted is None and view.error_info == failed.stdout

    refused = monitor("-t", topic, "-g", group)  # KOLU: groupid and bootstrap-brokers are required: exit 1
    view = storm_ui_reads(refused.stdout.encode(), refused.returncode, release)
    assert refused.returncode == 1 and view.omitted is not None and view.rows == () and view.error_info is None


def test_a_sasl_ssl_handshake_with_a_black_hole_ends_within_the_deadline_without_the_password(
    black_hole, tmp_path, names
):
    secret = "pw-for-the-black-hole"
    props = tmp_path / "extra.props"
    props.write_text(
        "sasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram."
        f"ScramLoginModule required username='storm' password='{secret}';\n"
    )
    result = monitor(
        "-t", "orders", "-g", names("group"), "-b", black_hole, "-s", "SASL_SSL", "-c", str(props), deadline="3s"
    )
    assert result.returncode == 0 and result.stdout.startswith(REASON)
    assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize("path", ["/nonexistent/kafka-consumer-extra", "/dev/zero", "/"])
def test_a_consumer_config_that_cannot_be_read_is_a_failure_line(path):
    result = monitor("-t", "orders", "-g", "g", "-b", "127.0.0.1:9", "-c", path)
    assert result.returncode == 0 and result.stdout.startswith(REASON + "offctl.UsageError: consumer-config")
    assert result.stdout.count("\n") == 1
