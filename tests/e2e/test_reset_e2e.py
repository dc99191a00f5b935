"""reset, restore and migrate end to end: the real CLI against the real ZooKeeper and Apache Kafka.

Kafka keeps a commit's metadata as it is sent. A group written with --topology-id (reset, migrate) reads back
with the Storm metadata written, as storm-kafka-client's own commits do (CommitMetadataManager), so a spout of
that topology resumes from it whatever its first-poll strategy: the write is verified (exit 0) with no note. A
commit without Storm metadata (the fixtures' kafka.commit, --no-storm-metadata, a restored before-image) is
judged as the spout judges it (KafkaSpout.doSeek, v2.8.8): UNCOMMITTED_* resume from it, EARLIEST and LATEST
ignore it. What offctl does where a broker keeps other metadata than it was sent (the verification's note, the
backup's after-image rewritten) is tested on plain data: tests/unit/test_commit_verdict.py, tests/unit/test_plan.py.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from offctl.core.records.parse import commit_metadata_json
from tests.conftest import storm_record
from tests.e2e.seeds import leader, on_each_broker, orders_fleet

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

TOPOLOGY = "orders-topology-1-1700000000"  # storm_record's default
NEW_TOPOLOGY = "orders-new-2-1700000500"  # the storm-kafka-client topology a migrate names (--topology-id)


@pytest.fixture
def answer_yes_after(monkeypatch):
    """Answer the confirmation prompt with yes, after running `action`: a change made while the operator
    reads the plan, between planning and writing."""
    asked = []

    def install(action):
        def confirm(question, **kw):
            asked.append(question)
            action()
            return True

        monkeypatch.setattr("offctl.commands.reset.typer.confirm", confirm)
        monkeypatch.setattr("offctl.commands.options.stdin_is_terminal", lambda: True)  # an operator at a terminal
        return asked

    return install


def _fleet(zk, kafka, names, zk_server, broker, tmp_path):
    """A topic with 3 partitions of 10 messages, a spout at 4,5,6, an empty Storm root, and the flags."""
    f = orders_fleet(zk, kafka, names)
    f.backups, f.audit = tmp_path / "backups", tmp_path / "audit.log"
    f.conn = [
        "--zk",
        zk_server.address,
        "--zk-root",
        f.root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        f.storm_root,
    ]
    f.safe = ["--backup-dir", str(f.backups), "--audit-log", str(f.audit)]
    f.spout = [*f.conn, *f.safe, "--spout", "orders"]
    f.state = lambda: {p: zk.get(f.path(p)) for p in range(3)}
    return f


fleet, fleet39 = on_each_broker("fleet", _fleet)


def nodes(state) -> dict:
    return {p: (data, stat.version) for p, (data, stat) in state.items()}


def offset_of(data: bytes) -> int:
    return json.loads(data)["offset"]


def test_dry_run_prints_the_plan_and_changes_nothing(cli, fleet39):
    before = nodes(fleet39.state())
    result = cli("reset", *fleet39.spout, "--to", "earliest", "--quiet-period", "0", "-o", "json")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert doc["mode"] == "dry-run" and not doc["executed"] and doc["backup"] is None
    assert [(c["partition"], c["before"], c["after"], c["action"]) for c in doc["changes"]] == [
        (0, 4, 0, "write"),
        (1, 5, 0, "write"),
        (2, 6, 0, "write"),
    ]
    assert any("ignores a stored offset <= 0" in r for r in doc["changes"][0]["reasons"])
    assert "dry run" in result.stderr
    assert nodes(fleet39.state()) == before and not fleet39.backups.exists() and not fleet39.audit.exists()


def test_execute_writes_only_the_offset_of_the_planned_nodes_and_restore_puts_the_bytes_back(cli, fleet39, zk):
    odd = b'{"offset":4,  "topic":"%s","partition":0,"extra":{"k":[1,2]},"topology":{"id":"%s"}}' % (
        fleet39.topic.encode(),
        TOPOLOGY.encode(),
    )
    zk.set(fleet39.path(0), odd)
    zk.create(fleet39.root + "/other/partition_0", storm_record(fleet39.topic, 0, 9), makepath=True)
    before = nodes(fleet39.state())
    result = cli(
        "reset",
        *fleet39.spout,
        "--to",
        "offset",
        "--offset",
        "3",
        "--partitions",
        "0,1",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert (
        doc["executed"]
        and doc["verified"]
        and doc["summary"] == {"write": 2, "unchanged": 0, "skip": 0, "delete": 0, "left_out": 0}
    )
    after = nodes(fleet39.state())
    assert after[0] == (odd.replace(b'"offset":4', b'"offset":3'), before[0][1] + 1)
    assert after[1][0] == before[1][0].replace(b'"offset":5', b'"offset":3') and offset_of(after[1][0]) == 3
    assert after[2] == before[2]  # not selected
    assert zk.get(fleet39.root + "/other/partition_0")[0] == storm_record(fleet39.topic, 0, 9)
    audit = [json.loads(line) for line in fleet39.audit.read_text().splitlines()]
    # the intent is logged before the first write, the outcome after it
    assert [(a["phase"], a["path"], a["before"], a["after"], a["backup"], a.get("outcome")) for a in audit] == [
        ("intent", fleet39.path(0), 4, 3, doc["backup"], None),
        ("intent", fleet39.path(1), 5, 3, doc["backup"], None),
        ("done", fleet39.path(0), 4, 3, doc["backup"], "verified"),
        ("done", fleet39.path(1), 5, 3, doc["backup"], "verified"),
    ]
    assert oct(fleet39.audit.stat().st_mode & 0o777) == "0o600"
    assert oct(Path(doc["backup"]).stat().st_mode & 0o777) == "0o600"

    restored = cli(
        "restore",
        doc["backup"],
        *fleet39.conn,
        *fleet39.safe,
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert restored.exit_code == 0, restored.stderr
    assert restored.json()["operation"] == "restore" and restored.json()["verified"]
    assert {p: d for p, (d, _) in nodes(fleet39.state()).items()} == {p: d for p, (d, _) in before.items()}


def test_table_output_names_the_backup_and_how_to_undo(cli, fleet39):
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes")
    assert result.exit_code == 0, result.stderr
    assert "backup: " in result.stdout and "undo with: offctl restore " in result.stdout
    assert "verified" in result.stdout
    assert [offset_of(d) for d, _ in fleet39.state().values()] == [10, 10, 10]


def test_running_topology_refuses_and_force_overrides(cli, fleet39, zk):
    zk.create(f"{fleet39.storm_root}/storms/orders-topology-4-1700000400")  # redeployed: new id, same name
    before = nodes(fleet39.state())
    refused = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes")
    assert refused.exit_code == 4
    assert "running-topology" in refused.stderr and "orders-topology-4-1700000400 is running" in refused.stderr
    assert nodes(fleet39.state()) == before and not fleet39.backups.exists()
    forced = cli(
        "reset",
        *fleet39.spout,
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "--force",
        "running-topology",
        "-o",
        "json",
    )
    assert forced.exit_code == 0, forced.stderr
    guard = {g["guard"]: g for g in forced.json()["guards"]}["running-topology"]
    assert guard["status"] == "overridden" and "overridden by --force running-topology" in guard["message"]


def test_dry_run_reports_a_refusal_with_exit_4(cli, fleet39, zk):
    zk.create(f"{fleet39.storm_root}/storms/{TOPOLOGY}")
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "-o", "json")
    assert result.exit_code == 4 and result.json()["mode"] == "dry-run"


def test_unknown_storm_root_refuses(cli, fleet39):
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--storm-root", "/no-storm-here")
    assert result.exit_code == 4 and "cannot tell whether the owning topology runs" in result.stderr


def test_recent_write_refuses_within_the_quiet_period(cli, fleet39):
    before = nodes(fleet39.state())
    result = cli("reset", *fleet39.spout, "--to", "latest", "--execute", "--yes", "--quiet-period", "3600")
    assert result.exit_code == 4 and "recent-write" in result.stderr and "quiet period" in result.stderr
    assert nodes(fleet39.state()) == before
    forced = cli(
        "reset",
        *fleet39.spout,
        "--to",
        "latest",
        "--execute",
        "--yes",
        "--quiet-period",
        "3600",
        "--force",
        "recent-write",
    )
    assert forced.exit_code == 0, forced.stderr


def test_a_node_changed_between_plan_and_write_aborts_the_whole_spout(cli, fleet39, zk, answer_yes_after):
    before = nodes(fleet39.state())
    moved = storm_record(fleet39.topic, 1, 8)
    asked = answer_yes_after(lambda: zk.set(fleet39.path(1), moved))  # the spout commits while we are asked
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute")
    assert asked and result.exit_code == 5, result.stderr
    assert f"{fleet39.path(1)} changed since it was read" in result.stderr and "nothing was written" in result.stderr
    after = nodes(fleet39.state())
    assert after[0] == before[0] and after[2] == before[2]
    assert after[1][0] == moved
    # the audit log has the intent and what came of it: nothing written
    lines = [json.loads(line) for line in fleet39.audit.read_text().splitlines()]
    assert [a["phase"] for a in lines] == ["intent"] * 3 + ["failed"] * 3
    assert "nothing was written" in lines[-1]["outcome"]


def on_terminal(args: list[str], answer: bytes, timeout: float = 120) -> subprocess.CompletedProcess:
    """offctl in a real process whose stdin is a pseudo-terminal (an operator at a terminal), typing `answer`;
    stdout and stderr are pipes, read apart."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "offctl", *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(slave)
        os.write(master, answer)  # the terminal holds the line until offctl reads it
        out, err = proc.communicate(timeout=timeout)
    finally:
        os.close(master)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_declining_the_prompt_writes_nothing_and_exits_8(fleet39, zk_server):
    before = nodes(fleet39.state())
    proc = on_terminal(["reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute"], b"n\n")
    assert proc.returncode == 8, proc.stderr
    assert "offctl: not confirmed: nothing was written" in proc.stderr
    # the question names the operation, the consumer and the cluster; it goes to stderr
    assert (
        f"Reset 3 partitions of spout orders (zkRoot {fleet39.root}) on ZooKeeper {zk_server.address}?" in proc.stderr
    )
    assert proc.stdout.count("-> latest") == 1 and "-> latest" not in proc.stderr  # the plan once, on stdout
    assert nodes(fleet39.state()) == before and not fleet39.backups.exists()


def test_a_confirmed_json_run_keeps_stdout_one_document(fleet39):
    proc = on_terminal(
        ["reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "-o", "json"], b"y\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["executed"]  # stdout is the document and nothing else
    assert proc.stderr.count("-> latest") == 1  # the plan was shown once, on stderr, with the question


def test_a_delete_and_a_group_reset_say_what_they_do_where(fleet, kafka, names, zk_server, broker):
    proc = on_terminal(["delete", *fleet.spout, "--partitions", "1", "--quiet-period", "0", "--execute"], b"n\n")
    assert proc.returncode == 8, proc.stderr
    assert f"Delete 1 record of spout orders (zkRoot {fleet.root}) on ZooKeeper {zk_server.address}?" in proc.stderr
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 3})
    proc = on_terminal(
        [
            "reset",
            *fleet.conn,
            *fleet.safe,
            "--group",
            group,
            "--topology-id",
            TOPOLOGY,
            "--to",
            "earliest",
            "--execute",
        ],
        b"n\n",
    )
    assert proc.returncode == 8, proc.stderr
    assert f"Reset 1 partition of group {group} on Kafka {broker.address}?" in proc.stderr
    assert "(the sandbox)" not in proc.stderr
    assert commits(kafka, group) == {(fleet.topic, 0): (3, None)}


def test_a_terminal_that_hangs_up_at_the_question_is_not_confirmed(fleet39):
    """The operator's terminal goes away (ssh dropped) while offctl asks: no answer, so nothing is written, exit 8
    with a line saying why, never an internal error (reading the answer fails with EIO)."""
    import pty

    before = nodes(fleet39.state())
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "offctl", "reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute"],
        stdin=slave,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    os.close(slave)
    seen = b""
    while b"[y/N]" not in seen:
        chunk = proc.stderr.read1(65536)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    os.close(master)  # the hang-up
    err = seen.decode() + proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 8, err
    assert "the terminal went away before an answer" in err and "not confirmed: nothing was written" in err
    assert "internal error" not in err and "Traceback" not in err
    assert nodes(fleet39.state()) == before and not fleet39.backups.exists()


def test_a_hung_up_terminal_is_told_from_ctrl_d():
    """The hang-up above reaches offctl one of two ways, by timing: EIO while it waits in the read, or end of input
    when the terminal hung up before the read (Linux's hung_up_tty_read returns 0), which alone looks like Ctrl-D.
    The terminal's settings tell them apart: a hung-up tty answers EIO, a live one (Ctrl-D) answers."""
    import pty

    from offctl.commands.options import terminal_gone

    master, slave = pty.openpty()
    with os.fdopen(slave, "rb", buffering=0) as tty:
        os.write(master, b"\x04")  # Ctrl-D: end of input on a live terminal
        assert tty.read(1) == b""
        assert terminal_gone(tty) is None
        os.close(master)  # the hang-up, before any read
        assert tty.read(1) == b""  # end of input, as Ctrl-D gave
        assert terminal_gone(tty) == os.strerror(5)  # "Input/output error"
    read, write = os.pipe()
    with os.fdopen(read, "rb") as pipe:
        os.close(write)
        assert terminal_gone(pipe) is None  # not a terminal: nothing went away


@pytest.mark.parametrize("command", [["reset", "--to", "latest"], ["delete", "--partitions", "1"]])
def test_execute_without_yes_and_no_terminal_refuses_at_once_with_exit_8(fleet39, command):
    """cron, a pipe: no terminal to ask, so offctl does not prompt (end of input is no answer) and reads nothing."""
    before = nodes(fleet39.state())
    proc = subprocess.run(
        [sys.executable, "-m", "offctl", command[0], *fleet39.spout, *command[1:], "--quiet-period", "0", "--execute"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 8, proc.stderr
    assert proc.stderr == (
        "offctl: not confirmed: --execute asks before writing, and there is no terminal to ask; "
        "add --yes to write without asking (nothing was written)\n"
    )
    assert proc.stdout == "" and nodes(fleet39.state()) == before and not fleet39.backups.exists()


def test_from_file_plan_replays_a_saved_dry_run(cli, fleet39, tmp_path):
    plan = cli("reset", *fleet39.spout, "--to", "shift", "--by", "-2", "--quiet-period", "0", "-o", "json")
    saved = tmp_path / "plan.json"
    saved.write_text(plan.stdout)
    no_root = [a for i, a in enumerate(fleet39.conn) if a != "--zk-root" and fleet39.conn[i - 1] != "--zk-root"]
    result = cli(
        "reset", *no_root, *fleet39.safe, "--from-file", str(saved), "--quiet-period", "0", "--execute", "--yes"
    )  # the plan names its zkRoot
    assert result.exit_code == 0, result.stderr
    assert [offset_of(d) for d, _ in fleet39.state().values()] == [2, 3, 4]


# --- Kafka groups -------------------------------------------------------------------------------------------


def commits(kafka, group: str) -> dict:
    return {tp: (offset, metadata or None) for tp, (offset, metadata) in kafka.committed(group).items() if offset >= 0}


NOT_KEPT = "The broker did not keep the Storm metadata written on"


def expect_written(result, kept: dict, offsets: dict, topology: str = TOPOLOGY) -> None:
    """Offsets as planned; every partition written holds the Storm metadata written for `topology`, byte for
    byte, as Kafka kept it: verified (exit 0), with no note about metadata not kept."""
    assert {tp: o for tp, (o, _) in kept.items() if tp in offsets} == offsets
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert doc["verified"] is True and NOT_KEPT not in result.stderr + " ".join(doc["notes"]), result.stderr
    written = {(c["topic"], c["partition"]) for c in doc["changes"] if c["action"] == "write"}
    assert written and {tp: kept[tp][1] for tp in written} == dict.fromkeys(written, commit_metadata_json(topology))


# Issue 28: the row says what the written group's spout does with the commit as it is (firstpoll._client_start reads
# start.client_start for the run's profile): UNCOMMITTED_EARLIEST by default, the strategy given otherwise.
SPOUT_KEEPS = {
    (): ["at committed (4): UNCOMMITTED_EARLIEST resumes from any commit"],
    ("--first-poll-offset-strategy", "LATEST"): [
        "starts {topic}/1 at the log end",
        "LATEST applies to a commit that is not the running topology's",
    ],
}


@pytest.mark.parametrize("settings", list(SPOUT_KEEPS), ids=["default strategy", "LATEST"])
@pytest.mark.parametrize("execute", [[], ["--execute", "--yes"]], ids=["dry run", "execute"])
def test_a_group_reset_whose_partitions_are_all_skipped_exits_7_not_0(cli, fleet, kafka, names, execute, settings):
    """Issue 27, the poison-message runbook's group variant: a commit without Storm metadata to keep is not
    written, so the asked-for partition is left out (exit 7), naming the flags that make it writable; it was
    "nothing to change", exit 0."""
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 3, 1: 4})
    result = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topic",
        fleet.topic,
        "--partitions",
        "1",
        "--to",
        "shift",
        "--by",
        "1",
        *settings,
        *execute,
        "-o",
        "json",
    )
    assert result.exit_code == 7, result.stderr
    [change] = result.json()["changes"]
    assert (change["partition"], change["left_out"], change["action"]) == (1, True, "skip")
    why = " ".join(change["reasons"])
    assert "--topology-id STORM_ID" in why and "--no-storm-metadata" in why
    assert all(s.format(topic=fleet.topic) in why for s in SPOUT_KEEPS[settings]), why
    assert "firstPollOffsetStrategy" not in why and "EARLIEST" not in why.replace("UNCOMMITTED_EARLIEST", "")
    assert "left out" in result.stderr and not result.json()["executed"]
    assert commits(kafka, group) == {(fleet.topic, 0): (3, None), (fleet.topic, 1): (4, None)}
    assert not fleet.backups.exists()
    table = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topic",
        fleet.topic,
        "--partitions",
        "1",
        "--to",
        "shift",
        "--by",
        "1",
        *execute,
    )
    assert table.exit_code == 7 and "left out" in table.stdout + table.stderr


def test_kafka_group_reset_and_restore(cli, fleet, kafka, names):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 7, 1: 8})
    base = [*fleet.conn, *fleet.safe, "--group", group, "--topology-id", TOPOLOGY]
    dry = cli("reset", *base, "--to", "earliest", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert [(c["partition"], c["before"], c["after"]) for c in dry.json()["changes"]] == [(0, 7, 0), (1, 8, 0)]
    assert commits(kafka, group) == {(fleet.topic, 0): (7, None), (fleet.topic, 1): (8, None)}

    done = cli("reset", *base, "--to", "earliest", "--execute", "--yes", "-o", "json")
    expect_written(done, commits(kafka, group), {(fleet.topic, 0): 0, (fleet.topic, 1): 0})
    # The after-image is what the write left: Kafka kept the Storm metadata written for --topology-id, so the
    # backup keeps the commits as sent, not rewritten from the read-back
    meta = commit_metadata_json(TOPOLOGY)
    saved = json.loads(fleet.backups.joinpath(done.json()["backup"]).read_text())
    assert saved["kafka"] == [
        {
            "topic": fleet.topic,
            "partition": p,
            "offset": o,
            "metadata": None,
            "written": {"offset": 0, "metadata": meta},
        }
        for p, o in ((0, 7), (1, 8))
    ]
    assert saved["group_had_commits"] is True

    back = cli("restore", done.json()["backup"], *fleet.conn, *fleet.safe, "--execute", "--yes")
    assert back.exit_code == 0, back.stderr
    assert {tp: o for tp, (o, _) in commits(kafka, group).items()} == {(fleet.topic, 0): 7, (fleet.topic, 1): 8}


# A commit as storm-kafka-client's spout makes it (CommitMetadataManager, v1.2.4 to v2.8.8): its metadata is the
# CommitMetadata of the task that committed, as Jackson writes it
SPOUT_META = json.dumps(
    {"topologyId": TOPOLOGY, "taskId": 4, "threadName": "Thread-12-kafka-spout-executor[4 4]"}, separators=(",", ":")
)


def test_a_group_reset_keeps_the_storm_metadata_the_spout_committed(cli, fleet, kafka, names):
    """The poison-message runbook's group variant, on a group as its spout left it: Kafka kept the Storm metadata
    the spout committed with, so the shift needs no --topology-id. The partition is written with that metadata,
    byte for byte, verified with no note; the other partition is untouched, and the undo puts the offset back
    with the same metadata."""
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 3, 1: 4}, metadata=SPOUT_META)
    assert commits(kafka, group) == {(fleet.topic, 0): (3, SPOUT_META), (fleet.topic, 1): (4, SPOUT_META)}
    done = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topic",
        fleet.topic,
        "--partitions",
        "1",
        "--to",
        "shift",
        "--by",
        "1",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    doc = done.json()
    [change] = doc["changes"]
    assert (change["partition"], change["before"], change["after"], change["action"]) == (1, 4, 5, "write")
    assert doc["verified"] is True and not doc["notes"] and NOT_KEPT not in done.stderr
    assert commits(kafka, group) == {(fleet.topic, 0): (3, SPOUT_META), (fleet.topic, 1): (5, SPOUT_META)}
    [saved] = json.loads(Path(doc["backup"]).read_text())["kafka"]
    assert saved == {
        "topic": fleet.topic,
        "partition": 1,
        "offset": 4,
        "metadata": SPOUT_META,
        "written": {"offset": 5, "metadata": SPOUT_META},
    }
    undone = cli(*undo_argv(doc, "-o", "json"))
    assert undone.exit_code == 0 and undone.json()["verified"] is True, undone.stderr
    assert commits(kafka, group) == {(fleet.topic, 0): (3, SPOUT_META), (fleet.topic, 1): (4, SPOUT_META)}


NO_COMMITS = "has no commits: nothing to reset"


@pytest.mark.parametrize("execute", [False, True], ids=["dry run", "execute"])
def test_to_current_for_a_group_with_no_commits_is_an_empty_plan(cli, fleet, kafka, names, execute):
    """kafka-consumer-groups --reset-offsets --all-topics --to-current --execute plans nothing for a group with
    no commits and commits nothing (apache/kafka ResetConsumerGroupOffsetTest.testResetOffsetsNotExistingGroup,
    tools/src/test/java/org/apache/kafka/tools/consumer/group/): nothing to do is exit 0, not a usage error."""
    group = names("never-committed")
    base = ["reset", *fleet.conn, *fleet.safe, "--group", group, "--to", "current"]
    base += ["--execute", "--yes"] if execute else []
    doc_run = cli(*base, "-o", "json")
    assert doc_run.exit_code == 0, doc_run.stderr
    doc = doc_run.json()
    assert (doc["store"], doc["consumer"], doc["changes"], doc["result"], doc["executed"], doc["backup"]) == (
        "kafka",
        group,
        [],
        "unchanged",
        False,
        None,
    )
    assert doc["summary"] == {"write": 0, "unchanged": 0, "skip": 0, "delete": 0, "left_out": 0}
    assert any(f"group {group} {NO_COMMITS}" in w for w in doc["warnings"])
    note = f"nothing was written: group {group} {NO_COMMITS}"
    assert doc_run.stderr.startswith(note)
    table = cli(*base)  # the empty table with its warning; the outcome, a note, on stderr
    assert table.exit_code == 0 and table.stderr.startswith(note) and note not in table.stdout
    assert commits(kafka, group) == {} and not fleet.backups.exists() and not fleet.audit.exists()
    other = names("committed")
    kafka.commit(other, fleet.topic, {0: 3})
    both = cli("reset", *fleet.conn, *fleet.safe, "--group", other, "--group", group, "--to", "current", "-o", "json")
    assert both.exit_code == 0, both.stderr
    assert both.json()["results"] == {"unchanged": [other, group]}
    assert [NO_COMMITS in " ".join(d["warnings"]) for d in both.json()["consumers"]] == [False, True]


def test_a_group_with_no_commits_still_plans_a_named_topic_and_needs_one_otherwise(cli, fleet, kafka, names):
    """kafka-consumer-groups plans a named topic's partitions for a group without commits (--to-current: the log
    end, ResetConsumerGroupOffsetTest.testResetOffsetsExistingTopic for --to-offset); other targets with no
    topic to move stay a usage error that says to name one."""
    group = names("never-committed")
    base = ["reset", *fleet.conn, *fleet.safe, "--group", group, "--topology-id", TOPOLOGY, "-o", "json"]
    for to, after in (("earliest", 0), ("latest", 10), ("current", 10)):
        planned = cli(*base, "--to", to, "--topic", fleet.topic)
        assert planned.exit_code == 0, planned.stderr
        assert [(c["partition"], c["before"], c["after"], c["action"]) for c in planned.json()["changes"]] == [
            (p, None, after, "write") for p in range(3)
        ]
    refused = cli(*base, "--to", "earliest")
    assert refused.exit_code == 2 and "name the topic with --topic" in refused.stderr
    assert commits(kafka, group) == {}


def test_kafka_reset_from_kafka_consumer_groups_csv(cli, fleet, kafka, names, tmp_path):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 1, 1: 1, 2: 1})
    csv_file = tmp_path / "reset.csv"
    csv_file.write_text(f"{group},{fleet.topic},0,6\n{group},{fleet.topic},2,99\n")
    result = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--from-file",
        str(csv_file),
        "--topology-id",
        TOPOLOGY,
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    changes = {c["partition"]: c for c in result.json()["changes"]}
    assert changes[2]["after"] == 10 and "clamped" in changes[2]["reasons"][0]
    assert changes[1]["action"] == "skip"
    expect_written(result, commits(kafka, group), {(fleet.topic, 0): 6, (fleet.topic, 1): 1, (fleet.topic, 2): 10})


def test_kafka_commit_moved_between_plan_and_write_aborts(cli, fleet, kafka, names, answer_yes_after):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 2, 1: 2})
    asked = answer_yes_after(lambda: kafka.commit(group, fleet.topic, {1: 5}))
    result = cli(
        "reset", *fleet.conn, *fleet.safe, "--group", group, "--topology-id", TOPOLOGY, "--to", "latest", "--execute"
    )
    assert asked and result.exit_code == 5 and "changed since it was read" in result.stderr
    assert {tp: o for tp, (o, _) in commits(kafka, group).items()} == {(fleet.topic, 0): 2, (fleet.topic, 1): 5}


@contextmanager
def joined(kafka, broker, group: str, topic: str):
    """A consumer of `group` subscribed to `topic`, until the group shows it as a member."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": broker.address,
            "group.id": group,
            "session.timeout.ms": 10000,
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            consumer.poll(0.2)
            state = kafka.admin.describe_consumer_groups([group])[group].result(30).state.name.lower()
            if state not in ("empty", "dead", "unknown"):
                break
        yield consumer
    finally:
        consumer.close()


def test_active_group_refuses_while_a_consumer_is_joined(cli, fleet, kafka, names, broker):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 1})
    with joined(kafka, broker, group, fleet.topic):
        result = cli(
            "reset",
            *fleet.conn,
            *fleet.safe,
            "--group",
            group,
            "--topology-id",
            TOPOLOGY,
            "--to",
            "latest",
            "--execute",
            "--yes",
        )
    assert result.exit_code == 4 and "active-group" in result.stderr
    assert commits(kafka, group)[(fleet.topic, 0)][0] == 1


def test_migrate_copies_zookeeper_offsets_into_the_group(cli, fleet, kafka, names):
    group = names("group")
    base = [*fleet.spout, "--group", group, "--topology-id", NEW_TOPOLOGY, "--quiet-period", "0"]
    dry = cli("migrate", *base, "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert [(c["partition"], c["before"], c["after"]) for c in dry.json()["changes"]] == [
        (0, None, 4),
        (1, None, 5),
        (2, None, 6),
    ]
    assert commits(kafka, group) == {}
    done = cli("migrate", *base, "--execute", "--yes", "-o", "json")
    expect_written(
        done, commits(kafka, group), {(fleet.topic, 0): 4, (fleet.topic, 1): 5, (fleet.topic, 2): 6}, NEW_TOPOLOGY
    )
    assert done.json()["from"] == f"{fleet.root}/orders"


def inspect_group(cli, fleet, group: str, *settings: str) -> dict:
    """`offctl inspect` of the group, reading Storm's running topologies from the fleet's Storm root."""
    flags = dict(zip(fleet.conn[::2], fleet.conn[1::2]))
    seen = cli(
        "inspect",
        "--zk",
        flags["--zk"],
        "--storm-root",
        fleet.storm_root,
        "--bootstrap-servers",
        flags["--bootstrap-servers"],
        "--group",
        group,
        *settings,
        "-o",
        "json",
        "--fail-on",
        "never",
    )
    assert seen.exit_code == 0, seen.stderr
    return seen.json()


@pytest.mark.parametrize(
    "strategy, release, ignored",
    [
        ("UNCOMMITTED_EARLIEST", "2.8.8", False),
        ("EARLIEST", "2.8.8", False),  # isOffsetCommittedByThisTopology: the commit names the running topology
        ("LATEST", "2.8.8", False),
        ("EARLIEST", "1.1.1", True),  # v1.1.1 doSeek: EARLIEST ignores every commit, whatever its metadata
    ],
)
def test_migrate_and_inspect_give_one_verdict(cli, fleet, kafka, names, zk, strategy, release, ignored):
    """migrate's read-back and inspect judge the commits Kafka kept with the one rule (KafkaSpout.doSeek, v1.1.1,
    v2.8.8). They carry the Storm metadata of the topology migrate names, so once that topology runs, a spout of
    v1.2.4 on resumes from them whatever its first-poll strategy: verified with no note, and inspect counts the lag
    from the commit. v1.1.1 with EARLIEST ignores every commit: exit 5, and inspect's lag counts from the log start.
    A redeploy runs under a new storm id: its EARLIEST or LATEST spout ignores the commits
    (CommitMetadataManager.isOffsetCommittedByThisTopology), UNCOMMITTED_* resumes from them, and inspect's
    STALE_TOPOLOGY and lag say which."""
    group = names("group")
    settings = ["--first-poll-offset-strategy", strategy, "--storm-kafka-client-release", release]
    done = cli(
        "migrate",
        *fleet.spout,
        "--group",
        group,
        "--topology-id",
        NEW_TOPOLOGY,
        "--quiet-period",
        "0",
        *settings,
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    kept = commits(kafka, group)
    assert kept == {(fleet.topic, p): (4 + p, commit_metadata_json(NEW_TOPOLOGY)) for p in range(3)}
    assert done.json()["notes"] == [] and NOT_KEPT not in done.stderr
    if ignored:
        assert done.exit_code == 5, done.stderr
        assert done.json()["problems"] == [
            f"{fleet.topic}/{p}: the spout will ignore this commit: storm-kafka-client 1.0.0-1.0.5 or 1.1.0-1.1.1 "
            f"with EARLIEST ignores every commit and starts at the log start (KafkaSpout.doSeek, v1.1.1)."
            for p in range(3)
        ]
    else:
        assert done.exit_code == 0 and done.json()["verified"] is True, done.stderr

    zk.create(f"{fleet.storm_root}/storms/{NEW_TOPOLOGY}")  # the migrated topology runs
    doc = inspect_group(cli, fleet, group, *settings)
    assert [f["code"] for f in doc["findings"] if f["code"] in ("FOREIGN_COMMIT", "STALE_TOPOLOGY")] == []
    assert {r["partition"]: r["lag"] for r in doc["partitions"]} == {
        p: 10 - (0 if ignored else 4 + p) for p in range(3)
    }  # log start 0, log end 10

    zk.delete(f"{fleet.storm_root}/storms/{NEW_TOPOLOGY}")
    zk.create(f"{fleet.storm_root}/storms/orders-new-3-1700000900")  # redeployed: the same name, a new storm id
    doc = inspect_group(cli, fleet, group, *settings)
    [stale] = [f["message"] for f in doc["findings"] if f["code"] == "STALE_TOPOLOGY"]
    assert stale.startswith(
        f"3 partitions committed by topology id {NEW_TOPOLOGY}, which is not running; topology "
        f"'orders-new' is running as orders-new-3-1700000900"
    )
    edge = {"EARLIEST": 0, "LATEST": 10}.get(strategy)  # where a spout that ignores the commit starts
    if edge is not None and release == "2.8.8":
        assert f"with {strategy} the spout ignores these commits and starts at the log " in stale
    assert {r["partition"]: r["lag"] for r in doc["partitions"]} == {
        p: 10 - (4 + p if edge is None else edge) for p in range(3)
    }


@pytest.mark.parametrize(
    "strategy, release, reset_code, restore_code",
    [
        ("UNCOMMITTED_EARLIEST", "3.1.0", 0, 0),  # resumes from any commit (KafkaSpout.doSeek, v2.8.8)
        # resumes from the reset's commit, whose metadata names --topology-id; ignores the restored one, which has no
        # metadata (CommitMetadataManager.isOffsetCommittedByThisTopology, v2.8.8), and starts at the log end
        ("LATEST", "2.8.8", 0, 5),
        ("UNCOMMITTED_LATEST", "1.1.1", 0, 0),  # v1.1.1 doSeek: committed + 1, whatever the metadata
        ("EARLIEST", "1.1.1", 5, 5),  # v1.1.1 doSeek: EARLIEST ignores every commit
    ],
)
def test_group_reset_and_restore_verify_against_the_spout_settings_given(
    cli, fleet, kafka, names, strategy, release, reset_code, restore_code
):
    """Each write is verified as the spout of the settings given would take the commit Kafka kept; where it would
    ignore it (exit 5), inspect of the group with the same settings says so in the same words."""
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 7})
    settings = ["--first-poll-offset-strategy", strategy, "--storm-kafka-client-release", release]
    done = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topology-id",
        TOPOLOGY,
        "--to",
        "earliest",
        *settings,
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert commits(kafka, group) == {(fleet.topic, 0): (0, commit_metadata_json(TOPOLOGY))}
    assert done.exit_code == reset_code, done.stderr
    assert ("the spout will ignore this commit" in done.stderr) is bool(reset_code)
    # the backup holds the commit as it was, without metadata: the same settings judge it the same way
    back = cli(
        "restore", done.json()["backup"], *fleet.conn, *fleet.safe, *settings, "--execute", "--yes", "-o", "json"
    )
    assert back.exit_code == restore_code, back.stderr
    assert commits(kafka, group) == {(fleet.topic, 0): (7, None)}
    if restore_code:
        [problem] = back.json()["problems"]
        said = problem.split("the spout will ignore this commit: ")[1]
        doc = inspect_group(cli, fleet, group, *settings)
        [foreign] = [f["message"] for f in doc["findings"] if f["code"] == "FOREIGN_COMMIT"]
        assert said in foreign, (said, foreign)
        [row] = doc["partitions"]
        assert row["lag"] == row["log_end"] - (row["log_start"] if "EARLIEST" in strategy else row["log_end"])


# --- usage errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["reset", "--spout", "s", "--zk", "h:1", "--zk-root", "/r", "--bootstrap-servers", "h:2", "--to", "offset"],
            "--to offset needs --offset",
        ),
        (
            ["reset", "--group", "g", "--bootstrap-servers", "h:2", "--to", "earliest", "--offset", "5"],
            "--offset goes with --to offset",
        ),
        (["reset", "--spout", "s", "--group", "g", "--to", "earliest"], "exactly one of --spout"),
        (["reset", "--to", "earliest"], "exactly one of --spout"),
        (["reset", "--spout", "s", "--to", "latest"], "needs --zk"),
        (
            ["reset", "--spout", "s", "--zk", "h:1", "--zk-root", "/a", "--zk-root", "/b", "--to", "latest"],
            "exactly one --zk-root",
        ),
        (["reset", "--group", "g", "--to", "latest"], "needs --bootstrap-servers"),
        (["reset", "--group", "g", "--to", "time", "--at", "yesterday"], "ISO-8601"),
        (["reset", "--group", "g", "--to", "latest", "--partitions", "3-1"], "--partitions"),
        (["reset", "--spout", "s", "--to", "latest", "--topology-id", "x-1-2"], "--topology-id is for Kafka"),
        (["reset", "--group", "g", "--from-file", "/nonexistent/plan.csv"], "cannot read"),
        (
            ["reset", "--group", "g", "--from-file", "/nonexistent/plan.csv", "--to", "latest"],
            "either --to or --from-file",
        ),
        (["reset", "--group", "g", "--to", "latest", "--force", "everything"], "everything"),
        (["restore", "/nonexistent/backup.json"], "cannot read"),
        (
            ["migrate", "--spout", "s", "--group", "g", "--zk", "h:1", "--zk-root", "/r", "--bootstrap-servers", "h:2"],
            "--topology-id",
        ),
        (
            [
                "migrate",
                "--spout",
                "s",
                "--group",
                "g",
                "--topology-id",
                "x-1-2",
                "--storm-kafka-client-release",
                "9.9",
            ],
            "--storm-kafka-client-release: storm-kafka-client 9.9 is not a release offctl knows",
        ),
        (
            ["reset", "--group", "g", "--to", "latest", "--first-poll-offset-strategy", "FIRST"],
            "--first-poll-offset-strategy",
        ),
    ],
)
def test_bad_flags_exit_2_with_a_clear_message(cli, args, message):
    result = cli(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_unreachable_zookeeper_exits_3_and_writes_nothing(cli, tmp_path, broker39):
    from offctl.adapters.servers import free_port

    result = cli(
        "reset",
        "--zk",
        f"127.0.0.1:{free_port()}",
        "--zk-root",
        "/r",
        "--spout",
        "s",
        "--bootstrap-servers",
        broker39.address,
        "--to",
        "latest",
        "--timeout",
        "1",
        "--execute",
        "--yes",
        "--backup-dir",
        str(tmp_path / "b"),
    )
    assert result.exit_code == 3 and "ZooKeeper" in result.stderr
    assert not (tmp_path / "b").exists()


def test_an_edited_backup_is_refused_and_a_hand_made_one_is_checked(cli, fleet39):
    """A backup is offctl's own artefact: restore writes it back only while its checksum holds."""
    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    path = done.json()["backup"]
    doc = json.loads(open(path).read())
    saved = {e["partition"]: e for e in doc["zookeeper"]}
    saved[0]["data_base64"] = base64.b64encode(b"\x00garbage").decode()  # bytes no spout can use
    saved[1]["data_base64"] = base64.b64encode(storm_record(fleet39.topic, 1, 99)).decode()  # beyond the log end
    saved[2]["data_base64"] = base64.b64encode(storm_record(fleet39.topic, 2, 3)).decode()  # a fine record
    with open(path, "w") as f:
        json.dump(doc, f)
    before = nodes(fleet39.state())
    refused = cli("restore", path, *fleet39.conn, *fleet39.safe, "--quiet-period", "0", "--execute", "--yes")
    assert refused.exit_code == 2
    assert f"{path} is not a usable offctl backup: it fails its checksum" in refused.stderr
    assert nodes(fleet39.state()) == before  # nothing written

    hand = cli(
        "restore",
        path,
        "--hand-made",
        *fleet39.conn,
        *fleet39.safe,
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    # exit 7: the restore cannot put two partitions back (issue 27: it never reads as done)
    assert hand.exit_code == 7, hand.stderr
    actions = {c["partition"]: (c["action"], c["reasons"], c["left_out"]) for c in hand.json()["changes"]}
    assert actions[0][0] == "skip" and "cannot use" in actions[0][1][0] and actions[0][2]
    assert actions[1][0] == "skip" and "outside today's log range" in actions[1][1][0] and actions[1][2]
    assert actions[2][:1] == ("write",) and not actions[2][2]
    assert any(w.startswith("cannot be undone for 2 partition(s)") for w in hand.json()["warnings"])
    assert [g["status"] for g in hand.json()["guards"] if g["guard"] == "changed-since"] == ["not-applicable"]
    after = nodes(fleet39.state())
    assert (after[0], after[1]) == (before[0], before[1]) and offset_of(after[2][0]) == 3


@pytest.mark.parametrize("fmt", [4, "2", None, 2.0, True], ids=["4", "the string 2", "missing", "2.0", "true"])
@pytest.mark.parametrize("hand_made", [False, True], ids=["signed", "hand-made"])
def test_a_backup_format_offctl_does_not_write_is_refused_before_any_store(cli, fleet39, fmt, hand_made):
    """Only the formats offctl writes (3 and 2; 1 by hand) are read back: another, even correctly signed, is exit 2
    before a store is read or written, and no backup of the restore is made."""
    from offctl.adapters.backup import digest

    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    path = done.json()["backup"]
    doc = json.loads(open(path).read())
    doc.pop("offctl_backup") if fmt is None else doc.update(offctl_backup=fmt)
    doc["sha256"] = digest(doc)
    with open(path, "w") as f:
        json.dump(doc, f)
    before, backups = nodes(fleet39.state()), sorted(fleet39.backups.iterdir())
    # an unreachable ZooKeeper shows that no store is read: the format is refused first
    for conn in (fleet39.conn, ["--zk", "127.0.0.1:1", "--zk-root", fleet39.root, "--timeout", "0.5"]):
        refused = cli(
            "restore",
            path,
            *(["--hand-made"] if hand_made else []),
            *conn,
            *fleet39.safe,
            "--quiet-period",
            "0",
            "--execute",
            "--yes",
        )
        assert refused.exit_code == 2, refused.stderr
        assert refused.stderr.startswith(f"offctl: {path} is not a usable offctl backup: ")
        assert "format" in refused.stderr and refused.stdout == ""
    assert nodes(fleet39.state()) == before and sorted(fleet39.backups.iterdir()) == backups


def test_an_audit_log_that_cannot_be_written_stops_the_write(cli, fleet39, tmp_path):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    before = nodes(fleet39.state())
    result = cli(
        "reset",
        *fleet39.conn,
        "--backup-dir",
        str(fleet39.backups),
        "--audit-log",
        str(blocked / "audit.log"),
        "--spout",
        "orders",
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
    )
    assert result.exit_code == 5
    assert "could not write the audit log" in result.stderr and "nothing was changed" in result.stderr
    assert nodes(fleet39.state()) == before


def test_a_failed_read_back_after_the_write_says_the_write_landed(cli, fleet39, monkeypatch):
    """The write is applied, then ZooKeeper stops answering the read-back: the message, exit code and audit log
    say what landed, with the backup path."""
    from offctl.adapters.zookeeper import ZkStore
    from offctl.errors import StoreUnavailable

    def broken(self, paths):
        raise StoreUnavailable("ZooKeeper at z did not answer a read of /x within 1s")

    monkeypatch.setattr(ZkStore, "read_data", broken)
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes")
    assert result.exit_code == 5
    assert "the write was applied, but reading it back failed" in result.stderr
    assert "The before-image is in " in result.stderr and str(fleet39.audit) in result.stderr
    assert [offset_of(d) for d, _ in fleet39.state().values()] == [10, 10, 10]
    phases = [json.loads(line)["phase"] for line in fleet39.audit.read_text().splitlines()]
    assert phases == ["intent"] * 3 + ["failed"] * 3


def test_ctrl_c_before_the_read_back_reports_the_write_as_made(cli, fleet39, monkeypatch):
    """Issue 22: the multi-op was committed, then Ctrl-C (here raised where the read-back waits): the change is
    reported as made, with its backup, undo line and audit-log outcome, and exit 6, not 130."""
    from offctl.adapters.zookeeper import ZkStore

    def interrupted(self, paths):
        raise KeyboardInterrupt

    monkeypatch.setattr(ZkStore, "read_data", interrupted)
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert result.exit_code == 6, result.stderr
    doc = result.json()
    assert doc["executed"] and doc["verified"] is False and Path(doc["backup"]).is_file()
    assert doc["undo"].startswith(f"offctl restore {doc['backup']} --execute")
    assert "interrupted after the write was applied, before it was verified" in result.stderr
    assert "verified: read back as planned" not in result.stderr
    assert [offset_of(d) for d, _ in fleet39.state().values()] == [10, 10, 10]
    audit = [json.loads(line) for line in fleet39.audit.read_text().splitlines()]
    assert [a["phase"] for a in audit] == ["intent"] * 3 + ["done"] * 3
    assert audit[-1]["outcome"] == "interrupted after the write was applied, before it was verified"


def test_ctrl_c_after_a_kafka_commit_was_acknowledged_reports_it_as_made(cli, fleet, kafka, names, monkeypatch):
    """Kafka acknowledged the commit, then Ctrl-C during the read-back: it was made (not "may or may not")."""
    from offctl.adapters.kafka import KafkaStore

    group = names("group")
    kafka.commit(group, fleet.topic, {0: 2, 1: 3})
    acknowledged = []
    commit, group_commits = KafkaStore.commit, KafkaStore.group_commits

    def committed(self, *args):
        commit(self, *args)
        acknowledged.append(True)

    def read_back(self, groups):
        if acknowledged:
            raise KeyboardInterrupt
        return group_commits(self, groups)

    monkeypatch.setattr(KafkaStore, "commit", committed)
    monkeypatch.setattr(KafkaStore, "group_commits", read_back)
    result = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topic",
        f"{fleet.topic}:0-1",
        "--to",
        "latest",
        "--no-storm-metadata",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert result.exit_code == 6, result.stderr
    doc = result.json()
    assert doc["executed"] and doc["undo"].startswith(f"offctl restore {doc['backup']} --execute")
    assert "may or may not" not in result.stderr
    monkeypatch.undo()
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 10, 1: 10}
    assert json.loads(fleet.audit.read_text().splitlines()[-1])["outcome"].startswith("interrupted after the write")


@pytest.fixture
def ctrl_c():
    """offctl's own SIGINT and SIGTERM handling in this process, as `offctl` installs it (commands/app.py main);
    returns what presses Ctrl-C: a real SIGINT to this process."""
    import os
    import signal

    from offctl import interrupts

    saved = {s: signal.getsignal(s) for s in interrupts.SIGNALS}
    interrupts.install()
    yield lambda: os.kill(os.getpid(), signal.SIGINT)
    for sig in saved:  # a signal offctl held back is dropped, not delivered to pytest
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupts.SIGNALS)
    for sig, handler in saved.items():
        signal.signal(sig, handler)
    interrupts.start()


def test_ctrl_c_while_the_backup_is_written_stops_before_the_store_is_touched(cli, fleet39, monkeypatch, ctrl_c):
    """The backup and its intent lines are written whole; then offctl stops, says nothing was written and names
    the backup (exit 130)."""
    from offctl.repair import writer as library

    write_backup = library.write_backup

    def pressed(*args):
        ctrl_c()
        return write_backup(*args)

    monkeypatch.setattr(library, "write_backup", pressed)
    before = nodes(fleet39.state())
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes")
    assert result.exit_code == 130, result.stderr
    assert "interrupted before the write: nothing was written" in result.stderr
    (backup,) = fleet39.backups.glob("*.json")
    assert f"The before-image is in {backup}" in result.stderr and not list(fleet39.backups.glob(".*.tmp"))
    assert result.stderr.rstrip().endswith("no restore is needed") and "undo with:" not in result.stderr
    assert len(json.loads(backup.read_text())["zookeeper"]) == 3
    assert nodes(fleet39.state()) == before
    phases = [json.loads(line)["phase"] for line in fleet39.audit.read_text().splitlines()]
    assert phases == ["intent"] * 3 + ["failed"] * 3


def _pressed_on_done_lines(monkeypatch, ctrl_c) -> None:
    """Ctrl-C while the write's outcome is appended to the audit log: the write has landed."""
    from offctl.repair import writer as library

    append_audit = library.append_audit

    def pressed(path, lines):
        if '"phase": "done"' in lines[0]:
            ctrl_c()
        append_audit(path, lines)

    monkeypatch.setattr(library, "append_audit", pressed)


def test_ctrl_c_while_the_outcome_is_logged_loses_nothing(cli, fleet39, monkeypatch, ctrl_c):
    """Issue 22: a Ctrl-C after the write landed printed only "offctl: interrupted". Now the report is whole:
    the result, backup, undo line and audit-log outcome, and exit 6."""
    _pressed_on_done_lines(monkeypatch, ctrl_c)
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes")
    assert result.exit_code == 6, result.stderr
    assert "wrote 3 partition(s)" in result.stdout and "verified: read back as planned" in result.stdout
    backup = next(fleet39.backups.glob("*.json"))
    assert f"backup: {backup}" in result.stdout and f"undo with: offctl restore {backup} --execute" in result.stdout
    assert "interrupted after the write was applied" in result.stderr
    assert [offset_of(d) for d, _ in fleet39.state().values()] == [10, 10, 10]
    audit = [json.loads(line) for line in fleet39.audit.read_text().splitlines()]
    assert [(a["phase"], a.get("outcome")) for a in audit] == [("intent", None)] * 3 + [("done", "verified")] * 3


def test_ctrl_c_after_one_group_was_written_writes_no_other(cli, fleet, kafka, names, monkeypatch, ctrl_c):
    a, b = names("ga"), names("gb")
    for group in (a, b):
        kafka.commit(group, fleet.topic, {0: 2})
    _pressed_on_done_lines(monkeypatch, ctrl_c)
    result = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        a,
        "--group",
        b,
        "--topic",
        f"{fleet.topic}:0",
        "--to",
        "latest",
        "--no-storm-metadata",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert result.exit_code == 6, result.stderr
    doc = result.json()
    assert doc["results"] == {"written": [a], "failed": [b]}
    # The SIGINT is process-directed: while the main thread holds it (landed), the kernel may hand it to another
    # thread (a client's), whose C handler trips Python's flag; the main thread runs offctl's handler a moment
    # later, before or after it looks again between consumers. Either way group b is not written, and says so.
    assert doc["consumers"][0]["undo"]
    assert doc["consumers"][1]["error"] == "not written: interrupted (Ctrl-C or SIGTERM)" or doc["consumers"][1][
        "error"
    ].startswith("interrupted before the write: nothing was written"), doc["consumers"][1]
    assert commits(kafka, a)[(fleet.topic, 0)][0] == 10 and commits(kafka, b)[(fleet.topic, 0)][0] == 2


def test_the_printed_undo_works_as_printed_right_after_the_reset(cli, fleet39, zk):
    """No --quiet-period 0 and no --force recent-write: offctl's own write, still untouched, is not a sign of
    something committing. A running topology forced for the reset is forced in the undo line too."""
    zk.create(f"{fleet39.storm_root}/storms/{TOPOLOGY}")  # the spout's topology is running
    before = nodes(fleet39.state())
    done = cli(
        "reset",
        *fleet39.spout,
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--force",
        "running-topology",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    undo = done.json()["undo"]
    assert undo.startswith("offctl restore ") and "--execute" in undo and "--force running-topology" in undo
    argv = shlex.split(undo)[1:] + ["--yes"]  # --yes: the test has no terminal to answer the prompt
    undone = cli(*argv)
    assert undone.exit_code == 0, undone.stderr
    assert {p: d for p, (d, _) in nodes(fleet39.state()).items()} == {p: d for p, (d, _) in before.items()}


def test_the_undo_still_waits_when_something_else_wrote_after_offctl(cli, fleet39, zk):
    """The undo checks for a live committer with the reset's own quiet period (here 4 s, once the fixture's
    writes are older than that): offctl's own write does not count, the spout's commit since does."""
    quiet = 4
    while time.time() * 1000 - max(stat.mtime for _, stat in fleet39.state().values()) < quiet * 1000 + 500:
        time.sleep(0.2)  # waits for the fixture's writes to age; asserts nothing about time
    done = cli(
        "reset", *fleet39.spout, "--to", "latest", "--quiet-period", str(quiet), "--execute", "--yes", "-o", "json"
    )
    assert done.exit_code == 0, done.stderr
    assert f"--quiet-period {quiet}" in done.json()["undo"]
    zk.set(fleet39.path(1), storm_record(fleet39.topic, 1, 9))  # the spout committed since
    again = cli(*shlex.split(done.json()["undo"])[1:], "--yes")
    assert again.exit_code == 4 and "recent-write" in again.stderr


def test_the_undo_of_a_reset_with_quiet_period_0_works_pasted_at_once(cli, fleet39):
    """Issue 22: the reset wrote partition 0; partitions 1 and 2 were written a moment ago (by the fixture, as a
    spout's commits would be). --quiet-period 0 let the reset through; its undo line carries it, as it carries
    --force, so pasting it at once puts the bytes back instead of exiting 4 on a node the reset did not touch."""
    before = nodes(fleet39.state())
    done = cli(
        "reset",
        *fleet39.spout,
        "--partitions",
        "0",
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    undo = done.json()["undo"]
    undone = cli(*shlex.split(undo)[1:], "--yes")  # --yes: the test has no terminal to answer the prompt
    assert undone.exit_code == 0, undone.stderr
    assert {p: d for p, (d, _) in nodes(fleet39.state()).items()} == {p: d for p, (d, _) in before.items()}
    assert "--quiet-period 0" in undo


def test_the_undo_of_a_group_reset_carries_the_zookeeper_its_guard_read(cli, fleet, kafka, names):
    """The running-topology guard of a group reads Storm's root in --zk: the undo line gives it too, or the
    restore could not tell whether the topology runs and would refuse (exit 4)."""
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 2, 1: 3})
    done = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topic",
        f"{fleet.topic}:0-1",
        "--to",
        "latest",
        "--no-storm-metadata",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 10, 1: 10}
    undo = shlex.split(done.json()["undo"])
    undone = cli(*undo[1:], "--yes")
    assert undone.exit_code == 0, undone.stderr
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 2, 1: 3}
    assert undo[undo.index("--zk") + 1] == fleet.conn[1]


@pytest.mark.parametrize(
    "value, text",
    [
        (0.0, "0"),
        (4.0, "4"),
        (2.5, "2.5"),
        (0.1, "0.1"),
        (1e-05, "1e-05"),
        (86400.0, "86400"),
        (1e20, "100000000000000000000"),
    ],
)
def test_the_undo_line_gives_the_quiet_period_as_the_option_takes_it(value, text):
    from offctl.repair.readback import seconds

    assert seconds(value) == text and float(text) == value


def test_a_huge_quiet_period_refuses_with_a_readable_message(cli, fleet39):
    result = cli("reset", *fleet39.spout, "--to", "latest", "--execute", "--yes", "--quiet-period", "1e300")
    assert result.exit_code == 4 and "within the quiet period of 1e+300s" in result.stderr


# --- parity with kafka-consumer-groups: several groups, scopes, --to current, files (issue 13) ---------------


def test_several_groups_each_atomic_and_the_result_says_who_was_written(cli, fleet, kafka, names, broker):
    """Two groups written with --no-storm-metadata (their commits carry none, and stay so), a third refused by
    active-group: the other two are still written, and the result names each."""
    a, b, busy = names("ga"), names("gb"), names("gbusy")
    for g in (a, b, busy):
        kafka.commit(g, fleet.topic, {0: 2, 1: 3})
    with joined(kafka, broker, busy, fleet.topic):
        result = cli(
            "reset",
            *fleet.conn,
            *fleet.safe,
            "--group",
            a,
            "--group",
            b,
            "--group",
            busy,
            "--topic",
            f"{fleet.topic}:1-2,7",
            "--to",
            "current",
            "--no-storm-metadata",
            "--execute",
            "--yes",
            "-o",
            "json",
        )
    doc = result.json()
    assert result.exit_code == 4, result.stderr  # one consumer refused
    assert doc["results"] == {"written": [a, b], "refused": [busy]}
    for one in doc["consumers"][:2]:
        # --to current: partition 1 keeps its commit, partition 2 (no commit) gets the log end, as Kafka does
        assert [(c["partition"], c["after"], c["action"]) for c in one["changes"]] == [
            (1, 3, "unchanged"),
            (2, 10, "write"),
        ]
        assert one["warnings"][0] == f"{fleet.topic} has no partition 7 (it has 3): left out"
        assert one["undo"].startswith("offctl restore ")
    for g in (a, b):
        assert {tp[1]: o for tp, (o, _) in commits(kafka, g).items()} == {0: 2, 1: 3, 2: 10}
    assert {tp[1]: o for tp, (o, _) in commits(kafka, busy).items()} == {0: 2, 1: 3}
    assert "refused by active-group" in result.stderr


def test_a_multi_group_export_applies_each_groups_rows(cli, fleet, kafka, names, tmp_path):
    """kafka-consumer-groups --export of several groups: --group G takes G's rows; a row for a partition
    with no commit yet is planned; no --group applies every group of the file."""
    a, b = names("ga"), names("gb")
    kafka.commit(a, fleet.topic, {0: 1})
    kafka.commit(b, fleet.topic, {0: 1})
    export = tmp_path / "export.csv"
    export.write_text(
        f"GROUP,TOPIC,PARTITION,OFFSET\n{a},{fleet.topic},0,5\n{a},{fleet.topic},2,6\n{b},{fleet.topic},1,7\n"
    )
    one = cli(
        "reset", *fleet.conn, *fleet.safe, "--group", a, "--from-file", str(export), "--no-storm-metadata", "-o", "json"
    )
    assert one.exit_code == 0, one.stderr
    doc = one.json()
    assert [(c["partition"], c["before"], c["after"], c["action"]) for c in doc["changes"]] == [
        (0, 1, 5, "write"),
        (2, None, 6, "write"),
    ]
    assert any("1 row(s)" in w and "other groups" in w for w in doc["warnings"])
    both = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--from-file",
        str(export),
        "--no-storm-metadata",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert both.exit_code == 0, both.stderr
    assert both.json()["results"] == {"written": sorted([a, b])}
    assert {tp[1]: o for tp, (o, _) in commits(kafka, a).items()} == {0: 5, 2: 6}
    assert {tp[1]: o for tp, (o, _) in commits(kafka, b).items()} == {0: 1, 1: 7}


def test_by_duration_moves_each_partition_to_its_first_message_that_recent(cli, fleet, kafka, names):
    """kafka-consumer-groups --by-duration: each partition goes to the first message written within the duration
    (ListOffsets by timestamp, KIP-79), and one with no message that recent to its log end."""
    topic, group = names("timed"), names("group")
    kafka.create_topic(topic, 2)
    now, hour = int(time.time() * 1000), 3_600_000
    # partition 0: 4 messages written 2 hours ago, then 3 ten minutes ago; partition 1: 5 written 2 hours ago
    kafka.produce_records(
        topic,
        0,
        [{"value": b"old", "timestamp": now - 2 * hour + i} for i in range(4)]
        + [{"value": b"new", "timestamp": now - hour // 6 + i} for i in range(3)],
    )
    kafka.produce_records(topic, 1, [{"value": b"old", "timestamp": now - 2 * hour + i} for i in range(5)])
    kafka.commit(group, topic, {0: 1, 1: 2})
    base = ["reset", *fleet.conn, *fleet.safe, "--group", group, "--no-storm-metadata", "-o", "json"]
    wider = cli(*base, "--by-duration", "PT3H")
    assert wider.exit_code == 0, wider.stderr
    assert [(c["partition"], c["before"], c["after"]) for c in wider.json()["changes"]] == [(0, 1, 0), (1, 2, 0)]
    result = cli(*base, "--by-duration", "PT30M", "--execute", "--yes")
    assert result.exit_code == 0, result.stderr
    assert result.json()["target"].endswith("(PT30M before now)")
    assert [(c["partition"], c["before"], c["after"]) for c in result.json()["changes"]] == [(0, 1, 4), (1, 2, 5)]
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 4, 1: 5}
    bad = cli("reset", *fleet.conn, "--group", group, "--by-duration", "P1M")
    assert bad.exit_code == 2 and "years and months" in bad.stderr


def test_all_groups_without_storm_metadata_anywhere_is_a_clear_usage_error(cli, fleet, kafka, names, monkeypatch):
    """--all-groups takes the groups whose commits carry Storm metadata; none is a usage error. The session's
    broker holds the other tests' groups, Storm groups among them, so the cluster offctl lists here is this test's
    own groups (ListGroups' answer narrowed to its names): one without metadata, then one a spout committed."""
    from offctl.adapters.kafka import KafkaStore

    listed = KafkaStore.list_groups
    monkeypatch.setattr(KafkaStore, "list_groups", lambda self: [g for g in listed(self) if g.startswith(names.prefix)])
    plain, spout = names("plain"), names("spout")
    kafka.commit(plain, fleet.topic, {0: 5})  # no metadata: not a Storm group
    result = cli("reset", *fleet.conn, "--all-groups", "--to", "latest")
    assert result.exit_code == 2 and "no group on the cluster carries Storm commit metadata" in result.stderr
    kafka.commit(spout, fleet.topic, {0: 5, 1: 6}, metadata=SPOUT_META)  # as its spout commits, Kafka keeps it
    found = cli("reset", *fleet.conn, "--all-groups", "--to", "latest", "-o", "json")
    assert found.exit_code == 0, found.stderr
    assert [c["consumer"] for c in found.json()["consumers"]] == [spout]
    assert [(c["partition"], c["before"], c["after"]) for c in found.json()["consumers"][0]["changes"]] == [
        (0, 5, 10),
        (1, 6, 10),
    ]


# --- delete (issue 13): stale records go through the same plan, guards, backup and multi-op ------------------


def test_delete_removes_only_the_matching_records_and_restore_creates_them_again(cli, fleet39, zk):
    other = storm_record("payments", 1, 77, topology_id="reports-1-1700000000")
    zk.set(fleet39.path(1), other)  # a record another topology left under this id
    before = nodes(fleet39.state())
    dry = cli("delete", *fleet39.spout, "--record-topic", "payments", "--quiet-period", "0", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert [(c["partition"], c["action"]) for c in dry.json()["changes"]] == [(1, "delete")]
    assert nodes(fleet39.state()) == before

    nothing = cli("delete", *fleet39.spout, "--quiet-period", "0")
    assert nothing.exit_code == 2 and "say which records to delete" in nothing.stderr
    none_match = cli("delete", *fleet39.spout, "--written-by", "nobody", "--quiet-period", "0")
    assert none_match.exit_code == 2 and "nothing matches" in none_match.stderr

    done = cli(
        "delete", *fleet39.spout, "--written-by", "reports", "--quiet-period", "0", "--execute", "--yes", "-o", "json"
    )
    assert done.exit_code == 0, done.stderr
    assert done.json()["verified"] and not zk.exists(fleet39.path(1))
    assert zk.exists(fleet39.path(0)) and zk.exists(fleet39.path(2))
    lines = [json.loads(line) for line in fleet39.audit.read_text().splitlines()]
    assert [(line["phase"], line["operation"]) for line in lines] == [("intent", "delete"), ("done", "delete")]
    assert lines[1]["action"] == "delete" and lines[1]["version_written"] is None and lines[1]["version_read"] >= 1

    undo = done.json()["undo"]
    # --quiet-period 0: the fixture wrote the spout's other records moments ago, which the guard rightly sees
    back = cli(*shlex.split(undo)[1:], *fleet39.safe, "--yes", "--quiet-period", "0", "-o", "json")
    assert back.exit_code == 0, back.stderr
    assert zk.get(fleet39.path(1))[0] == other  # created again, byte for byte
    # and the undo of that restore deletes the node it created
    again = cli(*shlex.split(back.json()["undo"])[1:], *fleet39.safe, "--yes", "--quiet-period", "0", "-o", "json")
    assert again.exit_code == 0, again.stderr
    assert [c["action"] for c in again.json()["changes"]] == ["delete"] and not zk.exists(fleet39.path(1))


def test_delete_is_refused_while_the_writing_topology_runs(cli, fleet39, zk):
    zk.create(f"{fleet39.storm_root}/storms/{TOPOLOGY}")
    result = cli("delete", *fleet39.spout, "--partitions", "0", "--quiet-period", "0", "--execute", "--yes")
    assert result.exit_code == 4 and "running-topology" in result.stderr and zk.exists(fleet39.path(0))


# --- every partition in the plan (issue 20): a partition with no record ---------------------------------------


def test_a_partition_without_a_record_is_created_as_storm_kafka_writes_it_and_its_undo_deletes_it(
    cli, fleet39, zk, kafka39
):
    """A spout with records for partitions 0 and 1 of a 3-partition topic: the reset covers partition 2 too,
    with a record byte for byte as PartitionManager.commit writes one (v0.9.6 to v1.2.4), in the same
    versioned multi-op; the backup records its absence, so the undo deletes it again."""
    zk.delete(fleet39.path(2))
    before = {p: zk.get(fleet39.path(p))[0] for p in (0, 1)}
    dry = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    doc = dry.json()
    assert [
        (c["partition"], c["before"], c["after"], c["action"], c["new_record"], c["left_out"]) for c in doc["changes"]
    ] == [(0, 4, 10, "write", False, False), (1, 5, 10, "write", False, False), (2, None, 10, "write", True, False)]
    assert doc["changes"][2]["path"] == fleet39.path(2) and "no record: created" in doc["changes"][2]["reasons"][0]
    assert doc["summary"]["left_out"] == 0 and not zk.exists(fleet39.path(2))
    table = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0")
    assert table.exit_code == 0 and "create" in table.stdout

    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    assert done.json()["verified"]
    data, stat = zk.get(fleet39.path(2))
    assert data == storm_record(fleet39.topic, 2, 10, broker=leader(kafka39, fleet39.topic, 2)) and stat.version == 0
    # inspect reads it as the spout's own: no finding on partition 2 (missing, malformed, inconsistent, stale broker)
    seen = cli("inspect", *fleet39.conn, "--spout", "orders", "-o", "json", "--fail-on", "never").json()
    assert [f["code"] for f in seen["findings"] if f["partition"] == 2] == []
    assert [r["committed"] for r in seen["partitions"]] == [10, 10, 10]
    saved = json.loads(Path(done.json()["backup"]).read_text())
    assert [e for e in saved["zookeeper"] if e["path"] == fleet39.path(2)] == [
        {
            "path": fleet39.path(2),
            "topic": fleet39.topic,
            "partition": 2,
            "offset": None,
            "version": None,
            "data_base64": None,
            "written_base64": base64.b64encode(data).decode(),
            "written_version": 0,
            "absent": True,
        }
    ]
    intent = [json.loads(line) for line in fleet39.audit.read_text().splitlines()][2]
    assert (intent["path"], intent["new_record"], intent["version_read"], intent["version_written"]) == (
        fleet39.path(2),
        True,
        None,
        0,
    )

    undone = cli(*shlex.split(done.json()["undo"])[1:], "--yes", "-o", "json")  # the undo as printed
    assert undone.exit_code == 0, undone.stderr
    assert [(c["partition"], c["action"]) for c in undone.json()["changes"]] == [
        (2, "delete"),
        (0, "write"),
        (1, "write"),
    ]
    assert not zk.exists(fleet39.path(2)) and {p: zk.get(fleet39.path(p))[0] for p in (0, 1)} == before


@pytest.mark.parametrize(
    "records, why",
    [
        pytest.param(
            {1: storm_record("{topic}", 1, 5, topology_id="audit-2-1700000500")},
            "its records name 2 topologies",
            id="two topologies",
        ),
        pytest.param(
            {p: b'{"topic":"{topic}","partition":%d,"offset":"x"}' % p for p in (0, 1)},
            "none of the spout's records names a topology the spout can use",
            id="every record malformed",
        ),
    ],
)
def test_a_partition_offctl_cannot_write_is_left_out_and_the_exit_code_says_so(cli, fleet39, zk, records, why):
    for p, data in records.items():
        zk.set(fleet39.path(p), data.replace(b"{topic}", fleet39.topic.encode()))
    zk.delete(fleet39.path(2))
    dry = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "-o", "json")
    assert dry.exit_code == 7, dry.stderr
    doc = dry.json()
    (left,) = [c for c in doc["changes"] if c["left_out"]]
    assert (left["partition"], left["action"], left["path"]) == (2, "skip", fleet39.path(2))
    assert why in left["reasons"][0] and "starts " + fleet39.topic + "/2 from startOffsetTime" in left["reasons"][0]
    assert doc["summary"]["left_out"] == 1 and any("exit code 7" in w for w in doc["warnings"])
    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 7 and done.json()["verified"], done.stderr  # 0 and 1 written, 2 still left out
    assert [offset_of(zk.get(fleet39.path(p))[0]) for p in (0, 1)] == [10, 10] and not zk.exists(fleet39.path(2))


def test_the_wildcard_layout_gets_the_new_record_in_the_topics_folder(cli, fleet39, zk, kafka39):
    """Partition.getId (v1.0.6 to v1.2.4) with the topic in the path: <zkRoot>/<id>/<topic>/partition_N."""
    folder = f"{fleet39.root}/wild/{fleet39.topic}"
    for p in (0, 1):
        zk.create(f"{folder}/partition_{p}", storm_record(fleet39.topic, p, 3), makepath=True)
    done = cli(
        "reset",
        *fleet39.conn,
        *fleet39.safe,
        "--spout",
        "wild",
        "--to",
        "offset",
        "--offset",
        "7",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    assert [(c["path"], c["new_record"]) for c in done.json()["changes"]] == [
        (f"{folder}/partition_{p}", p == 2) for p in range(3)
    ]
    assert zk.get(f"{folder}/partition_2")[0] == storm_record(
        fleet39.topic, 2, 7, broker=leader(kafka39, fleet39.topic, 2)
    )


def test_static_partitions_bound_the_plan_to_the_partitions_the_spout_reads(cli, fleet39, zk):
    zk.delete(fleet39.path(2))
    dry = cli(
        "reset",
        *fleet39.spout,
        "--static-partitions",
        "orders=0-1",
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "-o",
        "json",
    )
    assert dry.exit_code == 0, dry.stderr
    assert [c["partition"] for c in dry.json()["changes"]] == [0, 1]
    other = cli("reset", *fleet39.spout, "--static-partitions", "billing=0-1", "--to", "latest")
    assert other.exit_code == 2 and "--static-partitions names another spout id" in other.stderr
    groups = cli("reset", *fleet39.conn, "--group", "g", "--static-partitions", "g=0", "--to", "latest")
    assert groups.exit_code == 2 and "not Kafka groups" in groups.stderr


def test_a_record_created_between_plan_and_write_aborts_the_whole_spout(cli, fleet39, zk, answer_yes_after):
    zk.delete(fleet39.path(2))
    before = {p: zk.get(fleet39.path(p))[0] for p in (0, 1)}
    theirs = storm_record(fleet39.topic, 2, 7)
    asked = answer_yes_after(lambda: zk.create(fleet39.path(2), theirs))  # the spout commits it meanwhile
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute")
    assert asked and result.exit_code == 5, result.stderr
    assert (
        f"{fleet39.path(2)} was created since it was read" in result.stderr and "nothing was written" in result.stderr
    )
    assert {p: zk.get(fleet39.path(p))[0] for p in (0, 1)} == before and zk.get(fleet39.path(2))[0] == theirs


# --- every undo undoes or says it cannot (issue 27) ------------------------------------------------------------


def undo_argv(doc: dict, *extra: str) -> list[str]:
    """The printed undo line as argv for the cli fixture, with --yes (the test has no terminal)."""
    return [*shlex.split(doc["undo"])[1:], "--yes", *extra]


def guard(doc: dict, name: str) -> dict:
    return next(g for g in doc["guards"] if g["guard"] == name)


def test_the_undo_of_a_delete_refuses_to_overwrite_a_record_written_since(cli, fleet39, zk):
    """Item 3: delete, then the spout (a later write) creates the node again: the undo would write the old record
    over the new one. It is refused (exit 4) naming the node and what changed, the new node is left, the dry run's
    row says it; --force changed-since restores the old record."""
    old = zk.get(fleet39.path(1))[0]
    done = cli("delete", *fleet39.spout, "--partitions", "1", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr and not zk.exists(fleet39.path(1))
    new = storm_record(fleet39.topic, 1, 9)
    zk.create(fleet39.path(1), new)  # the spout started again and committed

    dry = cli(
        *[a for a in shlex.split(done.json()["undo"])[1:] if a != "--execute"], "--quiet-period", "0", "-o", "json"
    )
    assert dry.exit_code == 4, dry.stderr
    said = f"{fleet39.path(1)}: the write deleted it; it was created again since, at offset 9"
    assert (
        guard(dry.json(), "changed-since")["status"] == "refused"
        and said in guard(dry.json(), "changed-since")["message"]
    )
    (row,) = dry.json()["changes"]
    assert row["reasons"][0] == "changed since the write this backup undoes: " + said.split(": ", 1)[1]

    undone = cli(*undo_argv(done.json(), "--quiet-period", "0"))
    assert undone.exit_code == 4 and "refused by changed-since" in undone.stderr and said in undone.stderr
    assert "--force changed-since overrides" in undone.stderr
    assert zk.get(fleet39.path(1))[0] == new  # left as the later write made it

    forced = cli(*undo_argv(done.json(), "--quiet-period", "0", "--force", "changed-since", "-o", "json"))
    assert forced.exit_code == 0, forced.stderr
    assert zk.get(fleet39.path(1))[0] == old and guard(forced.json(), "changed-since")["status"] == "overridden"
    assert "changed-since" not in forced.json()["undo"]  # forced for that run only: its own undo checks again


def test_the_undo_of_a_reset_refuses_when_the_record_moved_since_and_restores_byte_for_byte_when_not(cli, fleet39, zk):
    before = nodes(fleet39.state())
    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    zk.set(fleet39.path(2), storm_record(fleet39.topic, 2, 8))  # the spout committed since
    moved = cli(*undo_argv(done.json(), "-o", "json"))
    assert moved.exit_code == 4, moved.stderr
    message = guard(moved.json(), "changed-since")["message"]
    assert message.startswith(
        f"1 partition(s) changed since the write this backup undoes, which restoring would "
        f"overwrite: {fleet39.path(2)}: the write left offset 10, it is now 8"
    )
    assert nodes(fleet39.state())[0][0] == before[0][0].replace(b'"offset":4', b'"offset":10')  # nothing written

    state = nodes(fleet39.state())
    again = cli("reset", *fleet39.spout, "--to", "earliest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert again.exit_code == 0, again.stderr
    undone = cli(*undo_argv(again.json(), "-o", "json"))
    assert undone.exit_code == 0, undone.stderr
    assert guard(undone.json(), "changed-since")["status"] == "pass"
    assert {p: d for p, (d, _) in nodes(fleet39.state()).items()} == {p: d for p, (d, _) in state.items()}


def test_the_undo_refused_by_a_restarted_topology_says_to_stop_it_again(cli, fleet39, zk):
    """Item 9: the reset ran with the topology stopped; it was started again before the undo."""
    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    zk.create(f"{fleet39.storm_root}/storms/{TOPOLOGY}")
    undone = cli(*undo_argv(done.json()))
    assert undone.exit_code == 4, undone.stderr
    assert "refused by running-topology" in undone.stderr
    assert "it was started again since the write this backup undoes" in undone.stderr
    assert "storm kill NAME" in undone.stderr and "offctl sandbox topology stop NAME" in undone.stderr


def test_the_undo_of_a_migrate_into_a_group_without_commits_deletes_the_group(cli, fleet, kafka, names):
    """Item 2: the group had no commits before the migrate, so deleting it (DeleteGroups, KIP-229) puts back the
    state before the write; the plan says so before the write."""
    group = names("group")
    base = [*fleet.spout, "--group", group, "--topology-id", NEW_TOPOLOGY, "--quiet-period", "0"]
    dry = cli("migrate", *base, "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert [
        w
        for w in dry.json()["warnings"]
        if w.startswith(f"undone by deleting group {group}, which had no commits before")
    ]
    assert [c["undone_by"] for c in dry.json()["changes"]] == ["delete-group"] * 3
    done = cli("migrate", *base, "--execute", "--yes", "-o", "json")
    expect_written(
        done, commits(kafka, group), {(fleet.topic, 0): 4, (fleet.topic, 1): 5, (fleet.topic, 2): 6}, NEW_TOPOLOGY
    )
    assert json.loads(Path(done.json()["backup"]).read_text())["group_had_commits"] is False

    undone = cli(*undo_argv(done.json(), "-o", "json"))
    assert undone.exit_code == 0, undone.stderr
    doc = undone.json()
    assert [(c["partition"], c["action"]) for c in doc["changes"]] == [(0, "delete"), (1, "delete"), (2, "delete")]
    assert doc["verified"] and commits(kafka, group) == {}
    assert f"deleted group {group} and its 3 commit(s)" in undone.stderr and doc["result"] == "written"

    # and the undo of that undo commits them back: Kafka makes a simple group for a commit to a group that does not
    # exist (GroupCoordinator.handleCommitOffsets; the group coordinator of KIP-848 likewise)
    back = cli(*undo_argv(doc, "-o", "json"))
    assert back.exit_code == 0, back.stderr
    assert back.json()["verified"] and back.json()["result"] == "written"
    assert {tp: o for tp, (o, _) in commits(kafka, group).items()} == {
        (fleet.topic, 0): 4,
        (fleet.topic, 1): 5,
        (fleet.topic, 2): 6,
    }


def test_a_migrate_undo_that_cannot_delete_the_group_exits_7_naming_the_partitions(cli, fleet, kafka, names):
    """Something committed to another partition of the group since the migrate: deleting the group would remove
    it, so the undo leaves the migrate's commits, and says so (exit 7), not "nothing to change"."""
    group = names("group")
    done = cli(
        "migrate",
        *fleet.spout,
        "--group",
        group,
        "--topology-id",
        NEW_TOPOLOGY,
        "--partitions",
        "0",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    kafka.commit(group, fleet.topic, {2: 1})
    undone = cli(*undo_argv(done.json(), "-o", "json"))
    assert undone.exit_code == 7, undone.stderr
    (row,) = undone.json()["changes"]
    assert row["left_out"] and row["reasons"][-1].startswith(
        f"cannot be undone: had no commit before, and the group now has commits the write did not make "
        f"({fleet.topic}/2)"
    )
    assert "nothing was written: 1 partition(s) cannot be undone (see 'why'; exit 7)" in undone.stderr
    assert commits(kafka, group)[(fleet.topic, 0)][0] == 4


def test_a_reset_of_a_group_with_commits_on_some_partitions_says_its_undo_cannot_remove_the_new_ones(
    cli, fleet, kafka, names
):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 2})
    base = [
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--topic",
        f"{fleet.topic}:0-1",
        "--to",
        "latest",
        "--no-storm-metadata",
    ]
    dry = cli("reset", *base, "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    (said,) = [w for w in dry.json()["warnings"] if "undone" in w]
    assert said.startswith(f"cannot be undone for 1 partition(s): {fleet.topic}/1: they had no commit before")
    assert said.endswith(f"--delete-offsets --group {group} --topic {fleet.topic}:1")
    assert [c["undone_by"] for c in dry.json()["changes"]] == ["restore", "nothing"]
    done = cli("reset", *base, "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    undone = cli(*undo_argv(done.json(), "-o", "json"))
    assert undone.exit_code == 7, undone.stderr
    rows = {c["partition"]: c for c in undone.json()["changes"]}
    assert rows[0]["action"] == "write" and not rows[0]["left_out"]
    assert rows[1]["left_out"] and "the group had commits on other partitions before the write" in rows[1]["reasons"][0]
    assert any(w.startswith(f"cannot be undone for 1 partition(s): {fleet.topic}/1") for w in undone.json()["warnings"])
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 2, 1: 10}


def test_a_format_2_kafka_backup_cannot_tell_what_changed_since(cli, fleet, kafka, names):
    from offctl.adapters.backup import digest

    group = names("group")
    kafka.commit(group, fleet.topic, {0: 2})
    done = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--to",
        "latest",
        "--no-storm-metadata",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    path = Path(done.json()["backup"])
    doc = json.loads(path.read_text())
    doc = {k: v for k, v in doc.items() if k not in ("group_had_commits", "sha256")}
    doc.update(offctl_backup=2, kafka=[{k: v for k, v in e.items() if k != "written"} for e in doc["kafka"]])
    path.write_text(json.dumps({**doc, "sha256": digest(doc)}))
    refused = cli(*undo_argv(done.json()))
    assert refused.exit_code == 4 and "offctl cannot tell whether the partitions changed since" in refused.stderr
    assert "format 2" in refused.stderr
    forced = cli(*undo_argv(done.json(), "--force", "changed-since"))
    assert forced.exit_code == 0, forced.stderr
    assert commits(kafka, group)[(fleet.topic, 0)][0] == 2


def test_an_undo_whose_group_deletion_the_broker_refuses_exits_5_and_says_what_it_could_not_undo(
    cli, fleet, kafka, names, broker, answer_yes_after
):
    """A consumer joins the group while the operator reads the undo's plan, after the active-group guard found it
    empty: Kafka refuses the deletion, NON_EMPTY_GROUP (GroupCoordinator.handleDeleteGroups, 1.1.0). The restore
    exits 5 and names the backup, and the commits stay."""
    group = names("group")
    done = cli(
        "migrate",
        *fleet.spout,
        "--group",
        group,
        "--topology-id",
        NEW_TOPOLOGY,
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr

    with ExitStack() as members:
        asked = answer_yes_after(lambda: members.enter_context(joined(kafka, broker, group, fleet.topic)))
        undone = cli(*shlex.split(done.json()["undo"])[1:])  # no --yes: the operator is asked
    assert asked and undone.exit_code == 5, undone.stderr
    assert f"Kafka refused the deletion of group {group}: Broker: The group is not empty" in undone.stderr
    assert "The before-image is in" in undone.stderr
    assert {tp: o for tp, (o, _) in commits(kafka, group).items()} == {
        (fleet.topic, 0): 4,
        (fleet.topic, 1): 5,
        (fleet.topic, 2): 6,
    }


# --- a restore puts back what differs from the before-image, and only that (issue 34, item 1) ------------------


def restored(cli, doc: dict, *extra: str):
    """The printed undo line run as it is, with --yes and JSON output."""
    return cli(*undo_argv(doc, "-o", "json", *extra))


def nothing_to_change(result) -> None:
    """Exit 0, no write and no backup of the restore: every partition holds its before-image already, and no guard
    refuses a plan that writes nothing."""
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert doc["result"] == "unchanged" and not doc["executed"] and doc["backup"] is None, doc
    assert doc["summary"]["write"] == doc["summary"]["delete"] == 0
    assert {g["status"] for g in doc["guards"]} == {"not-applicable"}
    assert {g["message"] for g in doc["guards"]} == {"the plan writes nothing"}
    assert "nothing to change: every partition holds its before-image already" in result.stderr


def test_a_zookeeper_restore_run_twice_exits_0_both_times(cli, fleet39):
    before = nodes(fleet39.state())
    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    first = restored(cli, done.json())
    assert first.exit_code == 0 and first.json()["verified"], first.stderr
    backups = sorted(fleet39.backups.iterdir())
    second = restored(cli, done.json())
    nothing_to_change(second)
    assert [(c["partition"], c["action"]) for c in second.json()["changes"]] == [
        (0, "unchanged"),
        (1, "unchanged"),
        (2, "unchanged"),
    ]
    assert sorted(fleet39.backups.iterdir()) == backups  # nothing written, nothing backed up
    assert {p: d for p, (d, _) in nodes(fleet39.state()).items()} == {p: d for p, (d, _) in before.items()}


def test_a_group_restore_run_twice_exits_0_both_times(cli, fleet, kafka, names):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 7, 1: 8})
    done = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--to",
        "earliest",
        "--topology-id",
        TOPOLOGY,
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    expect_written(done, commits(kafka, group), {(fleet.topic, 0): 0, (fleet.topic, 1): 0})
    first = restored(cli, done.json())
    assert first.exit_code == 0 and first.json()["executed"], first.stderr
    nothing_to_change(restored(cli, done.json()))
    assert {tp: o for tp, (o, _) in commits(kafka, group).items()} == {(fleet.topic, 0): 7, (fleet.topic, 1): 8}


def test_a_zookeeper_write_that_landed_in_part_is_restored_and_a_third_value_refused(cli, fleet39, zk):
    """Partition 0 holds its before-image again (as if the write had not landed there), 1 and 2 what the write
    left: the restore writes back 1 and 2. With 1 moved to a third value instead, it is refused naming 1 alone."""
    before = nodes(fleet39.state())
    done = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    left = nodes(fleet39.state())
    zk.set(fleet39.path(0), before[0][0])  # by hand: the before bytes (another version)

    zk.set(fleet39.path(1), storm_record(fleet39.topic, 1, 8))  # later work: neither before nor after
    refused = restored(cli, done.json())
    assert refused.exit_code == 4, refused.stderr
    message = guard(refused.json(), "changed-since")["message"]
    assert message.startswith(
        f"1 partition(s) changed since the write this backup undoes, which restoring would "
        f"overwrite: {fleet39.path(1)}: the write left offset 10, it is now 8"
    )
    assert [(c["partition"], c["action"]) for c in refused.json()["changes"]] == [
        (0, "unchanged"),
        (1, "write"),
        (2, "write"),
    ]
    assert offset_of(zk.get(fleet39.path(1))[0]) == 8 and offset_of(zk.get(fleet39.path(2))[0]) == 10  # nothing written

    zk.set(fleet39.path(1), left[1][0])  # what the write left, again
    back = restored(cli, done.json())
    assert back.exit_code == 0 and back.json()["verified"], back.stderr
    assert [(c["partition"], c["action"]) for c in back.json()["changes"]] == [
        (0, "unchanged"),
        (1, "write"),
        (2, "write"),
    ]
    assert guard(back.json(), "changed-since")["status"] == "pass"
    assert {p: d for p, (d, _) in nodes(fleet39.state()).items()} == {p: d for p, (d, _) in before.items()}


def test_a_group_write_that_landed_in_part_is_restored_and_a_third_value_refused(cli, fleet, kafka, names):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 7, 1: 8, 2: 9})
    done = cli(
        "reset",
        *fleet.conn,
        *fleet.safe,
        "--group",
        group,
        "--to",
        "earliest",
        "--no-storm-metadata",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    kafka.commit(group, fleet.topic, {0: 7})  # by hand, with the same metadata (none): its before-value

    kafka.commit(group, fleet.topic, {1: 3})  # later work on partition 1
    refused = restored(cli, done.json())
    assert refused.exit_code == 4, refused.stderr
    assert guard(refused.json(), "changed-since")["message"].startswith(
        f"1 partition(s) changed since the write this backup undoes, which restoring would overwrite: "
        f"{fleet.topic}/1: the write left offset 0, it is now 3"
    )
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 7, 1: 3, 2: 0}

    kafka.commit(group, fleet.topic, {1: 0})  # what the write left, again
    back = restored(cli, done.json())
    assert back.exit_code == 0 and back.json()["executed"], back.stderr
    assert [(c["partition"], c["action"]) for c in back.json()["changes"]] == [
        (0, "unchanged"),
        (1, "write"),
        (2, "write"),
    ]
    assert {tp[1]: o for tp, (o, _) in commits(kafka, group).items()} == {0: 7, 1: 8, 2: 9}
    nothing_to_change(restored(cli, done.json()))


def test_a_write_cut_off_before_it_landed_names_its_undo_which_finds_nothing_to_change(cli, fleet39, monkeypatch):
    """Ctrl-C while offctl waits for ZooKeeper's answer, the write never having landed: exit 6, "may or may not
    have been applied", and the message ends with the undo line, which finds every node at its before-image."""
    from offctl.adapters.zookeeper import ZkStore
    from tests.support.runbook_walker import undo_lines

    def cut(self, changes):
        raise KeyboardInterrupt

    before = nodes(fleet39.state())
    monkeypatch.setattr(ZkStore, "write_versioned", cut)
    result = cli("reset", *fleet39.spout, "--to", "latest", "--quiet-period", "0", "--execute", "--yes")
    monkeypatch.undo()
    assert result.exit_code == 6, result.stderr
    (backup,) = fleet39.backups.glob("*.json")
    assert "may or may not have been applied; check with offctl inspect" in result.stderr
    assert (
        "puts back whatever part of the write landed; if none did, it finds nothing to change and exits 0"
        in result.stderr
    )
    (undo,) = undo_lines(result.stderr)
    assert undo.startswith(f"offctl restore {backup} --execute ")
    for _ in range(2):
        nothing_to_change(cli(*shlex.split(undo)[1:], "--yes", "-o", "json"))
    assert nodes(fleet39.state()) == before
