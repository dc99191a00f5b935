"""Real faults, caused for real against real servers: ZooKeeper paused and killed in the middle of a reset of a
2,000-partition spout, a writer racing a forced reset, two resets racing, SIGINT and SIGTERM during a write,
black-hole servers, a backup directory that cannot be written. Each asserts: all or nothing per spout, the
backup exists before the first write, the documented exit code, and what ended the wait (the --timeout it gave,
a broken connection), never a wall time: each wait on offctl has a limit that only catches a hang, and the times
these faults take are benchmarks/bench_faults.py's figures (issue 28)."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from offctl.adapters import servers
from tests.conftest import storm_record
from tests.support.runbook_walker import undo_lines

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

PARTITIONS = 2000
TIMEOUT = "3"


@pytest.fixture
def own_zk(tmp_path):
    """A ZooKeeper of this test alone, so that it can be paused and killed (and started again on its data)."""
    data = tmp_path / "zk"
    server = servers.start_zookeeper(data)
    state = {"server": server}
    yield data, state
    servers.stop(state["server"].pid)


def _client(address: str) -> KazooClient:
    client = KazooClient(hosts=address, timeout=10)
    client.start(timeout=30)
    return client


@pytest.fixture(scope="module")
def big_topic(kafka39) -> str:
    """One topic of 2,000 empty partitions (log end 0) for every big_spout: the tests write ZooKeeper, never the
    topic, and a ZooKeeper-mode broker takes tens of seconds per 2,000-partition create on a loaded 2-core machine
    (one create per test once timed out two set-ups in a row)."""
    topic = f"faults-big-{time.time_ns()}"
    kafka39.create_topic(topic, PARTITIONS)
    return topic


@pytest.fixture
def big_spout(own_zk, big_topic, broker39, tmp_path):
    """A spout of 2,000 partitions at offset 5, on a topic of 2,000 empty partitions (log end 0)."""
    data, state = own_zk
    topic = big_topic
    zk = _client(state["server"].address)
    root = "/faults/spouts"
    tx = zk.transaction()
    for p in range(PARTITIONS):
        tx.create(f"{root}/big/partition_{p}", storm_record(topic, p, 5))
    zk.ensure_path(f"{root}/big")
    assert all(r is True or isinstance(r, str) for r in tx.commit())
    zk.ensure_path("/faults/storm/storms")
    zk.stop()
    zk.close()
    backups, audit = tmp_path / "backups", tmp_path / "audit.log"
    argv = [
        sys.executable,
        "-m",
        "offctl",
        "reset",
        "--zk",
        state["server"].address,
        "--zk-root",
        root,
        "--spout",
        "big",
        "--bootstrap-servers",
        broker39.address,
        "--storm-root",
        "/faults/storm",
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--timeout",
        TIMEOUT,
        "--execute",
        "--backup-dir",
        str(backups),
        "--audit-log",
        str(audit),
    ]
    return {"argv": argv, "root": root, "state": state, "data": data, "backups": backups, "audit": audit}


def _offsets(address: str, root: str) -> list[int]:
    zk = _client(address)
    try:
        return [json.loads(zk.get(f"{root}/big/partition_{p}")[0])["offset"] for p in range(PARTITIONS)]
    finally:
        zk.stop()
        zk.close()


class _Terminal:
    """The write end of a pseudo-terminal on the reset's standard input: offctl asks its question only where a
    terminal can answer it (without one, --execute without --yes is exit 8 at once)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self) -> None:
        """Nothing more to say. The terminal stays open until the reset ends (_finish): closed now, it would hang
        up before the reset read its answer."""


def _at_the_prompt(argv: list[str]) -> subprocess.Popen:
    """Start the reset and return once it has read everything, planned and asks to write (stderr); the question
    is answered through `proc.stdin`, a terminal's."""
    # stdout (the plan and result of 2,000 partitions) is not read: it must not fill a pipe
    terminal = _Terminal()
    proc = subprocess.Popen(argv, stdin=terminal.slave, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(terminal.slave)
    proc.stdin = terminal
    seen = b""
    deadline = time.monotonic() + 120
    while not (b"Reset 2,000 partitions of spout big" in seen and b"[y/N]" in seen):
        chunk = proc.stderr.read1(65536)
        assert chunk and time.monotonic() < deadline, seen.decode(errors="replace")[-2000:]
        seen += chunk
    return proc


def _answer_yes(proc: subprocess.Popen, limit: float) -> tuple[int, str]:
    proc.stdin.write(b"y\n")
    proc.stdin.close()
    return _finish(proc, limit)


def _finish(proc: subprocess.Popen, limit: float) -> tuple[int, str]:
    """Wait for the process (what is left on stderr after the prompt is a few lines) and read its stderr."""
    try:
        proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    finally:
        if isinstance(proc.stdin, _Terminal):
            os.close(proc.stdin.master)
    return proc.returncode, proc.stderr.read().decode(errors="replace")


def _restart(fixture) -> None:
    state = fixture["state"]
    servers.stop(state["server"].pid)
    state["server"] = servers.start_zookeeper(fixture["data"], port=state["server"].port)


def _backup_written(fixture) -> Path:
    (backup,) = fixture["backups"].glob("*.json")
    doc = json.loads(backup.read_text())
    assert len(doc["zookeeper"]) == PARTITIONS
    assert not list(fixture["backups"].glob("*.tmp"))
    return backup


def _restore_twice(fixture, err: str) -> None:
    """Issue 34: run the undo line the message named, as it is (with --yes: no terminal to ask), twice. The first
    puts back whatever part of the write landed, or finds nothing to change when none did; the second finds nothing
    to change. Each exits 0, and every node is at 5 again, as before the reset."""
    backup = _backup_written(fixture)
    undos = undo_lines(err)
    if not undos:  # the store answered that nothing was written: the message says no restore is needed
        assert "no restore is needed" in err, err
        argv, wanted = (
            fixture["argv"],
            ("--zk", "--bootstrap-servers", "--storm-root", "--quiet-period", "--backup-dir", "--audit-log"),
        )  # the reset's own, as undo_command gives them
        flags = [x for i, a in enumerate(argv[:-1]) if a in wanted for x in (a, argv[i + 1])]
        undos = [shlex.join(["offctl", "restore", str(backup), "--execute", *flags])]
    (undo,) = undos
    assert undo.startswith(f"offctl restore {backup} --execute ")
    landed = set(_offsets(fixture["state"]["server"].address, fixture["root"])) == {0}
    for again in (False, True):
        proc = subprocess.run(
            [sys.executable, "-m", "offctl", *shlex.split(undo)[1:], "--yes", "-o", "json"],
            capture_output=True,
            timeout=300,
        )
        out, said = proc.stdout.decode(), proc.stderr.decode(errors="replace")
        assert proc.returncode == 0 and "Traceback" not in said, said[-3000:]
        doc = json.loads(out)
        if landed and not again:
            assert doc["executed"] and doc["verified"] and doc["summary"]["write"] == PARTITIONS, said[-3000:]
        else:
            assert doc["result"] == "unchanged" and not doc["executed"] and doc["summary"]["unchanged"] == PARTITIONS
            assert {g["status"] for g in doc["guards"]} == {"not-applicable"}
            assert "nothing to change" in said
        assert set(_offsets(fixture["state"]["server"].address, fixture["root"])) == {5}


def test_zookeeper_killed_between_plan_and_write(big_spout):
    proc = _at_the_prompt(big_spout["argv"])
    os.kill(big_spout["state"]["server"].pid, signal.SIGKILL)
    code, err = _answer_yes(proc, 60)
    assert code in (3, 5), err
    # what ended it: ZooKeeper's connection closed under the write (the 60 s limit above only catches a hang)
    assert "the connection broke during the write" in err or f"did not answer within {TIMEOUT}s" in err, err
    assert "Traceback" not in err and "before-image" in err
    _backup_written(big_spout)
    _restart(big_spout)
    assert set(_offsets(big_spout["state"]["server"].address, big_spout["root"])) == {5}  # nothing written
    phases = [json.loads(line)["phase"] for line in big_spout["audit"].read_text().splitlines()]
    assert phases[:PARTITIONS] == ["intent"] * PARTITIONS and set(phases[PARTITIONS:]) == {"failed"}
    _restore_twice(big_spout, err)


def test_zookeeper_paused_during_the_write_is_all_or_nothing(big_spout):
    proc = _at_the_prompt(big_spout["argv"])
    pid = big_spout["state"]["server"].pid
    os.kill(pid, signal.SIGSTOP)
    try:
        code, err = _answer_yes(proc, 60)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert code in (3, 5), err
    # what ended it: one of two timers of the ZooKeeper client, whichever runs out first (the 60 s limit above only
    # catches a hang). The request's own time-out (--timeout 3 s) says the server did not answer; the connection's
    # read time-out (kazoo: two thirds of the 4 s session time-out, from the last answered ping) drops the
    # connection, which the write reports as broken (ConnectionLoss). A paused server gives either, run by run.
    assert (
        "(KazooTimeoutError)" in err
        or f"did not answer within {TIMEOUT}s" in err
        or "the connection broke during the write (ConnectionLoss)" in err
    ), err
    assert "Traceback" not in err
    assert "may or may not have been applied" in err or "nothing was written" in err
    _backup_written(big_spout)
    time.sleep(1)
    offsets = set(_offsets(big_spout["state"]["server"].address, big_spout["root"]))
    assert offsets in ({5}, {0})  # one multi-op: every node or none
    _restore_twice(big_spout, err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_write_is_reported_with_the_backup(big_spout, sig):
    proc = _at_the_prompt(big_spout["argv"])
    pid = big_spout["state"]["server"].pid
    os.kill(pid, signal.SIGSTOP)  # the write hangs on ZooKeeper: the signal lands during it
    try:
        proc.stdin.write(b"y\n")
        proc.stdin.close()
        time.sleep(1.0)
        proc.send_signal(sig)
        code, err = _finish(proc, 60)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert code == 6, err  # a write was sent: not the 130 of "nothing was written"
    assert "interrupted during the write: it may or may not have been applied" in err and "before-image" in err
    assert "check with offctl inspect" in err
    backup = _backup_written(big_spout)
    assert str(backup) in err
    last = json.loads(big_spout["audit"].read_text().splitlines()[-1])
    assert last["phase"] == "failed" and last["outcome"].startswith("interrupted")
    time.sleep(1)
    assert set(_offsets(big_spout["state"]["server"].address, big_spout["root"])) in ({5}, {0})
    _restore_twice(big_spout, err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_after_the_write_landed_keeps_the_whole_report(big_spout, sig):
    """Issue 22: a Ctrl-C after the write landed printed only "offctl: interrupted". Here the write of 2,000
    nodes lands and is verified (the audit log has every outcome), and offctl is still reporting: its JSON
    document does not fit the pipe, which the test does not read yet. Two signals come then (the second as an
    impatient operator's); the report is whole, and the exit code says "interrupted after the change was
    written"."""
    argv = [*big_spout["argv"], "--yes", "-o", "json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _audit_phases(big_spout).count("done") < PARTITIONS:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        proc.send_signal(sig)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    err = err.decode(errors="replace")
    assert proc.returncode == 6, err
    assert "Traceback" not in err and "interrupted after the change was written" in err
    doc = json.loads(out)  # the whole document
    backup = _backup_written(big_spout)
    assert doc["executed"] and doc["verified"] and doc["backup"] == str(backup)
    assert doc["undo"].startswith(f"offctl restore {backup} --execute")
    assert doc["audit_log"] == str(big_spout["audit"])
    audit = [json.loads(line) for line in big_spout["audit"].read_text().splitlines()]
    assert [a["phase"] for a in audit] == ["intent"] * PARTITIONS + ["done"] * PARTITIONS
    assert {a["outcome"] for a in audit[PARTITIONS:]} == {"verified"}
    assert set(_offsets(big_spout["state"]["server"].address, big_spout["root"])) == {0}


def _audit_phases(fixture) -> list[str]:
    try:
        lines = fixture["audit"].read_text().splitlines()
    except FileNotFoundError:
        return []
    phases = []
    for line in lines:
        try:
            phases.append(json.loads(line)["phase"])
        except ValueError:
            break  # a line being appended
    return phases


def test_an_unversioned_writer_racing_a_forced_reset(big_spout):
    """The spout keeps committing (setData without a version) while a reset runs: the reset writes all of
    its nodes or none of them."""
    address = big_spout["state"]["server"].address
    proc = _at_the_prompt(big_spout["argv"] + ["--force", "recent-write"])
    stop = threading.Event()

    def writer():
        zk = _client(address)
        p = 0
        while not stop.is_set():
            zk.set(f"{big_spout['root']}/big/partition_{p % PARTITIONS}", storm_record("x", p % PARTITIONS, 7))
            p += 1
        zk.stop()
        zk.close()

    thread = threading.Thread(target=writer)
    thread.start()
    time.sleep(0.5)
    try:
        code, err = _answer_yes(proc, 60)
    finally:
        stop.set()
        thread.join()
    assert code == 5, err  # the writer moved nodes after they were read
    assert "changed since it was read" in err and "nothing was written" in err
    assert len(err) < 10_000  # at most ten nodes are named, however many moved
    assert 0 not in _offsets(address, big_spout["root"])  # not one node got the reset's offset


def test_two_resets_racing(big_spout):
    first = _at_the_prompt(big_spout["argv"])
    second = _at_the_prompt(big_spout["argv"][:-4] + ["--to", "offset", "--offset", "0", *big_spout["argv"][-4:]])
    results = []
    threads = [threading.Thread(target=lambda p=p: results.append(_answer_yes(p, 60))) for p in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(code for code, _ in results)
    assert codes == [0, 5], results  # both planned from the same versions: one multi-op wins, one conflicts
    assert set(_offsets(big_spout["state"]["server"].address, big_spout["root"])) == {0}


@pytest.mark.parametrize("store", ["zookeeper", "kafka"])
def test_black_hole_servers_end_in_exit_3_within_the_timeout(store):
    """Ended by --timeout 2, as its message says (the 60 s limit only catches a hang; the time it takes is
    benchmarks/bench_faults.py's)."""
    sock, port = servers.black_hole()
    try:
        args = (
            ["--zk", f"127.0.0.1:{port}", "--zk-root", "/r"]
            if store == "zookeeper"
            else ["--bootstrap-servers", f"127.0.0.1:{port}", "--group", "g"]
        )
        proc = subprocess.run(
            [sys.executable, "-m", "offctl", "inspect", *args, "--timeout", "2"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        sock.close()
    assert proc.returncode == 3, proc.stderr
    said = {
        "zookeeper": f"ZooKeeper at 127.0.0.1:{port} did not answer within 2s",
        "kafka": f"Kafka at 127.0.0.1:{port} did not answer a request for the offsets of group g within 2s",
    }
    assert said[store] in proc.stderr and "Traceback" not in proc.stderr


def test_a_backup_directory_that_cannot_be_written(big_spout, tmp_path):
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    argv = [a if a != str(big_spout["backups"]) else str(blocked / "backups") for a in big_spout["argv"]]
    proc = subprocess.run(argv + ["--yes"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 5, proc.stderr
    assert "could not write the backup" in proc.stderr and "nothing was changed" in proc.stderr
    assert set(_offsets(big_spout["state"]["server"].address, big_spout["root"])) == {5}
    assert not big_spout["audit"].exists()


@contextlib.contextmanager
def _own_broker(tmp_path, zk, zk_server, names, spout_partitions: dict[str, int]):
    """A broker of this test alone (so that it can be killed), topic "t", and spouts with records on it. The spouts
    are storm-kafka's: the broker is Apache Kafka 3.9 in ZooKeeper mode, as `broker39` (tests/conftest.py), registered
    under a chroot of this test's own."""
    from confluent_kafka.admin import AdminClient, NewTopic

    broker = servers.start_broker(
        tmp_path / "broker", version=servers.KAFKA_ZK, zookeeper=f"{zk_server.address}{names.root}-kafka"
    )
    try:
        admin = AdminClient({"bootstrap.servers": broker.address})
        for f in admin.create_topics([NewTopic("t", max(spout_partitions.values()), 1)]).values():
            f.result(30)
        for spout, n in spout_partitions.items():
            for p in range(n):
                zk.create(f"{names.root}/{spout}/partition_{p}", storm_record("t", p, 0), makepath=True)
        yield broker
    finally:
        servers.stop(broker.pid)


def _broker_killed_during(broker, zk_server, names, args: list[str], after_s: float, limit_s: float):
    """`offctl ARGS` against the test's own broker (--timeout 2), which is killed (SIGKILL) `after_s` seconds into
    the run; returns its exit code, stdout and stderr once it exits (`limit_s` only catches a hang)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "offctl",
            *args,
            "--zk",
            zk_server.address,
            "--zk-root",
            names.root,
            "--bootstrap-servers",
            broker.address,
            "--timeout",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(after_s)
    os.kill(broker.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=limit_s)
    return proc.returncode, out, err


def test_the_broker_killed_during_inspect(tmp_path, zk, zk_server, names):
    """A broker that dies while inspect reads: exit 3 (the report is partial or missing), in bounded time."""
    with _own_broker(tmp_path, zk, zk_server, names, {"s": 8}) as broker:
        code, out, err = _broker_killed_during(broker, zk_server, names, ["inspect", "--output", "json"], 0.3, 60)
    assert code in (0, 3), err  # 0 only if every answer came before the kill
    assert "Traceback" not in err
    if code == 3:
        assert "Kafka at" in err or json.loads(out)["incomplete"]


@pytest.mark.spark
def test_the_broker_killed_during_an_audit(tmp_path, zk, zk_server, names):
    """The audit runs in Spark (its own process here); its broker dies while it runs: exit 3, no traceback, and
    the failed reads named (the 300 s limit only catches a hang)."""
    with _own_broker(tmp_path, zk, zk_server, names, {f"s{i}": 1 for i in range(6)}) as broker:
        code, _, err = _broker_killed_during(broker, zk_server, names, ["audit", "--master", "local[2]"], 2, 300)
    assert code == 3, err[-3000:]
    assert "Traceback" not in err
    assert "Kafka at" in err or "could not read" in err


def test_a_backup_that_fails_half_way_leaves_no_tmp_file(tmp_path, monkeypatch):
    from offctl.adapters import backup as backup_module
    from offctl.core.plans.targets import Target
    from offctl.core.plans.zookeeper import plan_zookeeper
    from offctl.core.records.model import ZOOKEEPER, ConsumerKey, PartitionLog, ZkNode
    from offctl.errors import WriteConflict

    node = ZkNode("/r", "s", "/r/s/partition_0", 0, None, storm_record("t", 0, 5), 1, 0)
    plan = plan_zookeeper(
        ConsumerKey(ZOOKEEPER, "s", "/r"), [node], {"t": {0: PartitionLog(0, 9)}}, Target("offset", offset=2)
    )

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backup_module.os, "fsync", disk_full)
    with pytest.raises(WriteConflict, match="No space left on device"):
        backup_module.write_backup(plan, tmp_path / "b", 1)
    assert list((tmp_path / "b").iterdir()) == []
