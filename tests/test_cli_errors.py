"""Bad input never crashes offctl: a clear message on stderr and the documented exit code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import storm_record


@pytest.mark.parametrize("args, message", [
    ((), "nothing to inspect"),
    (("--zk", "h:1"), "nothing to inspect: give --zk-root"),
    (("--bootstrap-servers", "h:1"), "nothing to inspect: give --zk-root"),
    (("--zk-root", "/r"), "--zk-root and --spout need --zk"),
    (("--zk", "h:1", "--spout", "s"), "--spout needs --zk-root"),
    (("--group", "g"), "--group needs --bootstrap-servers"),
    (("--zk", "h:1", "--zk-root", "relative"), "must be an absolute ZooKeeper path"),
    (("--zk", "h:1", "--zk-root", "/r", "--spout", "a//b"), "is not a spout id"),  # ids may hold "/", not "//"
    (("--zk", "h:1", "--zk-root", "/r", "--spout", "../b"), "is not a spout id"),
    (("--bootstrap-servers", "h:1", "--storm-kafka-release", "0.8.2"), "storm-kafka 0.8.2 does not exist"),
    (("--bootstrap-servers", "h:1", "--group", "g", "--start-offset-time", "yesterday"), "expected earliest, latest"),
    (("--bootstrap-servers", "h:1", "--group", "g", "--static-partitions", "0-3"), "expected SPOUT_ID=PARTITIONS"),
    (("--bootstrap-servers", "h:1", "--group", "g", "--static-partitions", "s=x"), "--static-partitions 'x'"),
    (("--all-groups",), "--all-groups needs --bootstrap-servers"),
    (("--bootstrap-servers", "h:1", "--group", "g", "--kafka-config", "no-equals-sign"), "expected KEY=VALUE"),
    (("--bootstrap-servers", "h:1", "--group", "g", "--kafka-config", "no.such.property=1"),
     "No such configuration property"),
])
def test_usage_errors_exit_2_before_connecting(cli, args, message):
    result = cli("inspect", *args)
    assert result.exit_code == 2
    assert message in result.stderr and result.stdout == ""


@pytest.mark.parametrize("args", [
    ("--output", "xml"), ("--fail-on", "sometimes"), ("--lag-threshold", "-1"), ("--max-offset-behind", "x"),
    ("--timeout", "0"), ("--no-such-flag",),
])
def test_bad_flag_values_exit_2(cli, args):
    result = cli("inspect", "--zk", "h:1", "--zk-root", "/r", *args)
    assert result.exit_code == 2 and result.stdout == ""


def test_unreadable_kafka_config_file_exits_2(cli, tmp_path):
    result = cli("inspect", "--bootstrap-servers", "h:1", "--group", "g", "--kafka-config-file",
                 str(tmp_path / "missing.properties"))
    assert result.exit_code == 2 and "cannot read it" in result.stderr


def test_secrets_are_never_printed(cli, tmp_path):
    props = tmp_path / "client.properties"
    props.write_text("# SASL\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=storm\n"
                     "sasl.password=hunter2-in-file\nbad line without equals hunter2-bad\n")
    bad = cli("inspect", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--kafka-config-file", str(props))
    assert bad.exit_code == 2 and f"{props}:6: expected KEY=VALUE" in bad.stderr
    assert "hunter2" not in bad.stderr + bad.stdout
    props.write_text(props.read_text().replace("bad line without equals hunter2-bad\n", ""))
    result = cli("inspect", "--zk", "127.0.0.1:1", "--zk-auth", "storm:hunter2-zk", "--zk-root", "/r",
                 "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--kafka-config-file", str(props),
                 "--kafka-config", "sasl.password=hunter2-flag", "--timeout", "0.5")
    assert result.exit_code == 3
    assert "hunter2" not in result.stderr + result.stdout


def test_unreachable_zookeeper_exits_3_naming_it(cli):
    result = cli("inspect", "--zk", "127.0.0.1:1", "--zk-root", "/r", "--timeout", "0.5")
    assert result.exit_code == 3
    assert result.stderr.strip() == "offctl: ZooKeeper at 127.0.0.1:1 did not answer within 0.5s"
    assert result.stdout == ""


def test_unreachable_kafka_exits_3_naming_it(cli):
    result = cli("inspect", "--bootstrap-servers", "127.0.0.1:1", "--group", "g", "--timeout", "0.5")
    assert result.exit_code == 3
    assert result.stderr.startswith("offctl: Kafka at 127.0.0.1:1 did not answer")
    assert "Traceback" not in result.stderr


@pytest.mark.zookeeper
@pytest.mark.parametrize("data", [
    b"\xff" * 900_000,  # near ZooKeeper's 1 MiB node limit, not UTF-8
    b'{"offset": 1, "topic": "t", "partition": 0}' + b" " * 500_000,
    b"",
    b'{"offset": {"nested": [' + b"[" * 5000 + b"]" * 5000 + b"]}}",
    '{"topology": {"id": "t-1-1", "name": "t"}, "offset": 1, "topic": "t\u00e9\u2603", "partition": 0}'.encode(),
    b'{"offset": 1, "topic": "t", "partition": 0}',  # no topology object: PartitionManager cannot use it
    b'{"offset": 12345678901234567890123, "topic": "t", "partition": 0}',
])
def test_odd_node_data_is_a_finding_not_a_crash(cli, zk, zk_server, names, data):
    zk.create(f"{names.root}/s/partition_0", data, makepath=True)
    zk.create(f"{names.root}/s/partition_1", storm_record("t", 1, 5), makepath=True)
    result = cli("inspect", "--zk", zk_server.address, "--zk-root", names.root, "--output", "json")
    doc = result.json()
    by_partition = {r["partition"]: r for r in doc["partitions"]}
    assert by_partition[1]["committed"] == 5
    if data.startswith(b'{"topology"'):
        assert result.exit_code in (0, 1)  # a valid record with a non-ASCII topic name: parsed
        assert by_partition[0]["record_topic"] == "t\u00e9\u2603" and by_partition[0]["used"] is True
    else:
        assert result.exit_code == 1
        assert [f["code"] for f in doc["findings"] if f["partition"] == 0] == ["MALFORMED_RECORD"]


def test_entry_point_usage_error_has_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "offctl", "inspect", "--output", "xml"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stdout == ""


def test_version():
    proc = subprocess.run([sys.executable, "-m", "offctl", "--version"], capture_output=True, text=True, timeout=60)
    from offctl import __version__

    assert proc.returncode == 0 and proc.stdout.strip() == f"offctl {__version__}"


def test_json_schema_is_stable():
    """Scripts depend on these keys (spec section 3): adding is fine, renaming or dropping is not."""
    from offctl.core.analyze import analyze
    from offctl.core.model import KafkaCommit, PartitionLog, Snapshot, ZkNode
    from offctl.render import report_document

    node = ZkNode("/r", "s", "/r/s/partition_0", 0, None, storm_record("t", 0, 1), 4, 1700000000000)
    snapshot = Snapshot(0, (node,), (KafkaCommit("g", "t", 0, 9, None),),
                        cluster={"t": {0: PartitionLog(0, 5, "h:1")}}, running=frozenset())
    doc = json.loads(json.dumps(report_document(analyze(snapshot))))
    assert set(doc) >= {"partitions", "findings", "summary", "consumers", "notes", "incomplete", "checks_skipped"}
    assert set(doc["partitions"][0]) >= {"store", "consumer", "zk_root", "topic", "partition", "committed",
                                         "log_start", "log_end", "lag", "topology_id", "topology_name", "path"}
    assert set(doc["findings"][0]) >= {"code", "severity", "store", "consumer", "topic", "partition", "path",
                                       "message", "hint"}
    assert set(doc["summary"]) >= {"consumers", "partitions", "total_lag", "findings", "by_code", "status"}
    zk_row, kafka_row = doc["partitions"]
    assert (zk_row["store"], zk_row["consumer"], zk_row["zk_root"], zk_row["modified"]) == (
        "zookeeper", "s", "/r", "2023-11-14T22:13:20.000Z")
    assert (kafka_row["store"], kafka_row["consumer"], kafka_row["zk_root"]) == ("kafka", "g", None)


@pytest.fixture
def black_hole():
    """A server that accepts connections and never answers, like a hung process behind a live port."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


@pytest.mark.parametrize("store", ["zookeeper", "kafka"])
def test_hung_server_exits_3_instead_of_hanging(black_hole, store):
    args = (["--zk", black_hole, "--zk-root", "/r"] if store == "zookeeper"
            else ["--bootstrap-servers", black_hole, "--group", "g"])
    # The subprocess timeout only turns a hang into a failure; it asserts nothing about speed.
    proc = subprocess.run([sys.executable, "-m", "offctl", "inspect", *args, "--timeout", "1"],
                          capture_output=True, text=True, timeout=90)
    assert proc.returncode == 3, proc.stderr
    assert black_hole in proc.stderr and "did not answer" in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", [["inspect"], ["reset"], ["restore"], ["migrate"], ["delete"], ["serve"],
                                     ["watch"], ["sandbox", "up"],
                                     ["sandbox", "topology"],
                                     ["sandbox", "seed"], ["sandbox", "status"], ["sandbox", "down"]])
def test_every_command_has_help_with_an_example(cli, command):
    result = cli(*command, "--help")
    assert result.exit_code == 0 and "Example:" in result.stdout and "offctl " in result.stdout


def test_shell_completion_is_offered(cli, monkeypatch):
    # Typer detects the shell from the process tree (shellingham), which a detached test run may not have
    monkeypatch.setattr("typer.completion._get_shell_name", lambda: "bash")
    result = cli("--show-completion")
    assert result.exit_code == 0 and "complete" in result.stdout.lower()
