"""offctl sandbox end to end: its own ZooKeeper and broker, started, seeded, used and stopped by pid."""

from __future__ import annotations

import pytest

from offctl.adapters import servers
from offctl.faces import sandbox
from offctl.settings import sandbox as sandbox_state

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

EXPECTED = {
    "MALFORMED_RECORD",
    "TOPIC_MISMATCH",
    "ID_COLLISION",
    "OFFSET_ABOVE_LOG_END",
    "UNKNOWN_TOPIC",
    "UNKNOWN_PARTITION",
    "MISSING_PARTITION",
    "IGNORED_ZERO_OFFSET",
    "FOREIGN_COMMIT",
    "HIGH_LAG",
    "STALE_TOPOLOGY",
    "STALE_BROKER",
    "INCONSISTENT_RECORD",
    "OFFSET_BELOW_LOG_START",
}


# The sandbox's JStorm spouts and what each shows (offctl.faces.sandbox.jstorm_fleet; tests/unit/test_sandbox_jstorm.py
# judges the same nodes on plain data)
JSTORM_EXPECTED = {
    "orders/jstorm": set(),
    "events/jstorm": {"OFFSET_BELOW_LOG_START"},
    "clicks/jstorm": {"OFFSET_ABOVE_LOG_END", "MALFORMED_RECORD", "UNREAD_NODE"},
    "payments/jstorm": {"ID_COLLISION"},
    "archive/jstorm": {"TOPIC_MISMATCH"},
}


def test_sandbox_lifecycle_and_other_commands_pick_it_up(cli, spark, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert cli("sandbox", "status").exit_code == 3
    assert cli("sandbox", "seed").exit_code == 3
    started = cli("sandbox", "up")
    try:
        assert started.exit_code == 0, started.stderr
        state = sandbox_state.load()
        assert state is not None and all(state.running.values())
        again = cli("sandbox", "up")
        assert "already running" in again.stdout and sandbox_state.load() == state

        seeded = cli("sandbox", "seed")
        assert seeded.exit_code == 0, seeded.stderr
        assert cli("sandbox", "seed").exit_code == 0  # seeding twice is fine

        report = cli(
            "inspect",
            "--lag-threshold",
            "5",
            "--zk-root",
            sandbox.ROOT,
            "--group",
            "clicks-client",
            "--group",
            "payments-tool",
            "-o",
            "json",
        )
        assert report.exit_code == 1 and "using the sandbox" in report.stderr
        doc = report.json()
        assert {f["code"] for f in doc["findings"]} == EXPECTED
        healthy = {c["consumer"] for c in doc["consumers"] if c["status"] == "ok"}
        assert healthy == {"orders-etl", "wildcard-spout"}  # clicks-client: its commits are its own, its lag 5 is high
        foreign = {(f["consumer"], f["code"]) for f in doc["findings"] if f["code"] == "FOREIGN_COMMIT"}
        assert foreign == {("payments-tool", "FOREIGN_COMMIT")}  # the group a tool committed to, and no other
        below = [f for f in doc["findings"] if f["code"] == "OFFSET_BELOW_LOG_START"]
        assert [(f["consumer"], f["topic"], f["partition"]) for f in below] == [("events-spout", "events", 0)]

        # the README's first command ends with the Spark audit of the sandbox: inspect's findings, a summary
        audited = cli(
            "audit",
            "--lag-threshold",
            "5",
            "--zk-root",
            sandbox.ROOT,
            "--group",
            "clicks-client",
            "--group",
            "payments-tool",
            "-o",
            "json",
        )
        # the Trident spouts it seeds, of both libraries, healthy and broken
        trident = cli(
            "inspect",
            "--trident",
            "orders-trident",
            "--trident",
            "clicks-trident",
            "--trident",
            "orders-trident-broken",
            "--trident",
            "clicks-trident-broken",
            "-o",
            "json",
        )
        found = {(f["consumer"], f["code"]) for f in trident.json()["findings"]}
        assert {
            ("orders-trident-broken", "MALFORMED_RECORD"),
            ("orders-trident-broken", "OFFSET_ABOVE_LOG_END"),
            ("clicks-trident-broken", "MALFORMED_RECORD"),
            ("clicks-trident-broken", "OFFSET_ABOVE_LOG_END"),
            ("clicks-trident-broken", "MISSING_PARTITION"),
        } <= found
        assert not {c for c, _ in found} & {"orders-trident", "clicks-trident"}  # healthy
        # a named group alone shows that group, not every spout of the sandbox's root as well
        alone = cli("inspect", "--group", "payments-tool", "-o", "json")
        assert {c["consumer"] for c in alone.json()["consumers"]} == {"payments-tool"}
        # the ledger's transactions: a read_committed spout waits behind the one the seed left open (issue 35)
        ledger = cli(
            "inspect",
            "--group",
            "ledger-client",
            "--group",
            "ledger-reports",
            "--isolation-level",
            "read_committed",
            "--per-partition",
            "-o",
            "json",
        ).json()
        assert {(p["consumer"], p["last_stable_offset"], p["log_end"], p["lag"]) for p in ledger["partitions"]} == {
            ("ledger-client", 16, 18, 0),
            ("ledger-reports", 16, 18, 16),
        }
        assert [(f["consumer"], f["code"]) for f in ledger["findings"]] == [("ledger-client", "OPEN_TRANSACTION")]
        counted = cli("peek", "--group", "ledger-reports", "--isolation-level", "read_committed", "-o", "json").json()
        assert counted["partitions"][0]["to_last_stable"] == {
            "offsets": 16,
            "records": 10,
            "aborted": 3,
            "markers": 3,
            "markers_or_compacted": False,
        }
        assert audited.exit_code == 1 and "Worst consumers" in audited.stderr
        assert {f["code"] for f in audited.json()["findings"]} == EXPECTED

        # JStorm's Kafka spouts under the sandbox's JStorm root, a healthy one and one of each finding (issue 47)
        status = cli("sandbox", "status")
        assert f"JStorm     {sandbox_state.JSTORM_ROOT}" in status.stdout
        jstorms = cli("inspect", *(f"--jstorm={c}" for c in JSTORM_EXPECTED), "-o", "json", "--fail-on", "never")
        assert jstorms.exit_code == 0, jstorms.stderr
        doc = jstorms.json()
        assert {c["consumer"] for c in doc["consumers"]} == set(JSTORM_EXPECTED)
        assert {(c["store"], c["zk_root"]) for c in doc["consumers"]} == {("jstorm", sandbox_state.JSTORM_ROOT)}
        found = {c: {f["code"] for f in doc["findings"] if f["consumer"] == c} for c in JSTORM_EXPECTED}
        assert found == JSTORM_EXPECTED
        healthy = sorted(
            (p["partition"], p["committed"], p["resumes_at"], p["resumes"], p["lag"])
            for p in doc["partitions"]
            if p["consumer"] == "orders/jstorm"
        )
        assert healthy == [
            (0, 18, 19, "stored+1", 1),
            (1, 19, 20, "stored+1", 0),
            (2, 17, 18, "stored+1", 2),
            (3, 19, 20, "stored+1", 0),
        ]
        (unread,) = [f for f in doc["findings"] if f["code"] == "UNREAD_NODE"]
        assert unread["path"] == f"{sandbox_state.JSTORM_ROOT}/kafka/offset/topic/clicks/jstorm/01"

        # a reset against the sandbox, with no connection flags: orders-etl's topology runs, so it is refused
        refused = cli("reset", "--spout", "orders-etl", "--to", "latest", "--quiet-period", "0")
        assert refused.exit_code == 4 and "orders-etl-3-1763700000 is running" in refused.stderr
        fixed = cli(
            "reset",
            "--spout",
            "legacy-clicks",
            "--to",
            "earliest",
            "--quiet-period",
            "0",
            "--execute",
            "--yes",
            "-o",
            "json",
        )
        assert fixed.exit_code == 0, fixed.stderr
        # clicks/2 has no record: the reset covers it too, with a record as storm-kafka writes one (issue 20)
        assert [(c["after"], c["new_record"]) for c in fixed.json()["changes"]] == [(0, False), (0, False), (0, True)]
    finally:
        stopped = cli("sandbox", "down")
    assert stopped.exit_code == 0 and "stopped" in stopped.stdout
    assert not servers.is_running(state.zk_pid) and not servers.is_running(state.broker_pid)
    assert sandbox_state.load() is None and cli("sandbox", "status").exit_code == 3


def test_fleet_names_every_finding_it_seeds():
    nodes, commits, shows = sandbox.fleet("127.0.0.1:9092")
    assert all(path.startswith(sandbox.ROOT + "/") for path in nodes)
    described = " ".join(shows)
    assert all(code in described for code in EXPECTED | {"OFFSET_BELOW_LOG_START"})
    jstorm_nodes, jstorm_shows = sandbox.jstorm_fleet("127.0.0.1:9092")
    assert all(path.startswith(sandbox_state.JSTORM_ROOT + "/kafka/offset/topic/") for path in jstorm_nodes)
    described = " ".join(jstorm_shows)
    assert all(code in described for codes in JSTORM_EXPECTED.values() for code in codes)


def test_without_kafkas_jars_sandbox_up_says_how_to_fetch_them_and_leaves_nothing_running(cli, tmp_path, monkeypatch):
    """Issue 35: the sandbox runs Apache Kafka from the jars kafka/pom.xml fetches. Without them: exit 3 (a server
    could not start), the line to fetch them, no traceback, and the ZooKeeper it had started is stopped."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("OFFCTL_KAFKA_HOME", str(tmp_path / "no-kafka"))
    result = cli("sandbox", "up")
    assert result.exit_code == 3, result.stderr
    lib = tmp_path / "no-kafka" / servers.KAFKA_ZK / "lib"
    assert f"Apache Kafka {servers.KAFKA_ZK} is not in {lib}" in result.stderr
    assert "mvn -q -B -f kafka/pom.xml package" in result.stderr and "Traceback" not in result.stderr
    assert sandbox_state.load() is None and cli("sandbox", "status").exit_code == 3
