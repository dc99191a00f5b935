"""The faces that run for hours keep running through a crash of the Kafka client (issue 43): serve, watch and mcp
run it in a child process (offctl/adapters/kafka_child.py), so that a SIGSEGV inside librdkafka costs one cycle or
one tool call, and the next one works. The crashes here are real: a signal delivered to the child, and, in the
faces, a read of address 0 in C made where KafkaStore.logs waits on librdkafka (tests/crash/sitecustomize.py). A
one-shot command, which has its supervisor instead, ends with exit 3 under the same crash: the control that shows
the crash is real."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from offctl.adapters.kafka import KafkaStore
from offctl.adapters.kafka_child import ChildKafkaStore
from offctl.core.records.model import Thresholds
from offctl.core.rules.profiles import Profiles
from offctl.errors import StoreUnavailable, UsageError
from offctl.pipeline.inspect import inspect
from offctl.pipeline.read import kafka_in_child
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Selection
from tests.e2e.test_mcp_e2e import _stable, served, session  # noqa: F401 (served: a fixture)
from tests.e2e.test_serve import metric, scrape, start_serve, wait_for

pytestmark = [pytest.mark.kafka]

CRASH_DIR = str(Path(__file__).resolve().parents[1] / "crash")
METADATA = '{"topologyId":"t-1-1","taskId":3,"threadName":"Thread-5-kafka-spout-executor[3 3]"}'


def crashing_env(flag: Path, method: str = "logs") -> dict[str, str]:
    return {
        "PYTHONPATH": os.pathsep.join([CRASH_DIR, *filter(None, [os.environ.get("PYTHONPATH")])]),
        "OFFCTL_TEST_CRASH": str(flag),
        "OFFCTL_TEST_CRASH_IN": method,
    }


@pytest.fixture
def topic_and_group(kafka, names):
    topic = kafka.filled_topic(names("child"), 3, 5)
    group = names("child-group")
    kafka.commit(group, topic, {0: 1, 1: 4, 2: 5}, metadata=METADATA)
    return topic, group


def test_the_child_store_answers_every_call_as_the_store_in_process(kafka, topic_and_group):
    topic, group = topic_and_group
    here, there = KafkaStore(kafka.bootstrap, timeout=20), ChildKafkaStore(kafka.bootstrap, timeout=20)
    try:
        for store in (here, there):
            store.request_logs([topic])
        assert there.logs() == here.logs()
        assert there.group_commits([group]) == here.group_commits([group])
        assert there.group_states([group]) == here.group_states([group])
        assert group in there.list_groups()
        assert there.read_topic_configs([topic]) == here.read_topic_configs([topic])
        positions = [(topic, 1, 2)]
        assert there.read_messages(positions, count=2) == here.read_messages(positions, count=2)
        assert there.offsets_for_times([(topic, 0)], 0) == here.offsets_for_times([(topic, 0)], 0)
        there.commit(group, [(topic, 0, 3, METADATA)])  # written by the child, read back byte for byte
        assert kafka.committed(group)[(topic, 0)] == (3, METADATA)
        assert there.notes == here.notes
    finally:
        here.close()
        there.close()
    assert there._process.exitcode == 0  # closed, not killed


def test_an_error_in_the_child_is_the_same_error_here(kafka):
    with pytest.raises(UsageError, match="no.such.property"):
        ChildKafkaStore(kafka.bootstrap, config={"no.such.property": "x"})
    with pytest.raises(StoreUnavailable) as here:
        store = KafkaStore("127.0.0.1:1", timeout=1)
        store.request_logs(["t"])
        store.logs()
    with pytest.raises(StoreUnavailable) as there:
        store = ChildKafkaStore("127.0.0.1:1", timeout=1)
        try:
            store.request_logs(["t"])
            store.logs()
        finally:
            store.close()
    assert str(there.value) == str(here.value)


@pytest.mark.parametrize("call, said", [("logs", "nothing was written"), ("commit", "the write may have been sent")])
def test_a_child_that_crashes_is_store_unavailable_naming_the_signal_and_the_next_store_works(
    kafka, topic_and_group, call, said
):
    topic, group = topic_and_group
    store = ChildKafkaStore(kafka.bootstrap, timeout=20)
    os.kill(store._process.pid, signal.SIGSEGV)
    store._process.join(10)
    with pytest.raises(StoreUnavailable) as crashed:
        if call == "logs":
            store.request_logs([topic])
            store.logs()
        else:
            store.commit(group, [(topic, 0, 2, METADATA)])
    message = str(crashed.value)
    assert "a segmentation fault (SIGSEGV)" in message and said in message and "librdkafka" in message
    assert ("asking for log offsets" if call == "logs" else "writing a group's commits") in message
    store.close()
    again = ChildKafkaStore(kafka.bootstrap, timeout=20)
    try:
        again.request_logs([topic])
        assert set(again.logs()[topic]) == {0, 1, 2}  # a new child reads as the first would have
    finally:
        again.close()


def test_inspect_through_the_child_is_inspect_in_process(kafka, topic_and_group):
    topic, group = topic_and_group
    conn = Connection(bootstrap_servers=kafka.bootstrap, timeout=20)
    selection = Selection(groups=(group,))
    plain = inspect(Reading(conn, selection, Profiles(Thresholds())))
    with kafka_in_child():
        child = inspect(Reading(conn, selection, Profiles(Thresholds())))
    assert [(r.partition_key, r.record, r.lag) for r in child.rows] == [
        (r.partition_key, r.record, r.lag) for r in plain.rows
    ]
    assert [f.code for f in child.findings] == [f.code for f in plain.findings]


def test_a_one_shot_command_under_the_same_crash_exits_3(kafka, topic_and_group, tmp_path):
    """The control: the crash the faces below survive is real, and a one-shot command has its supervisor's answer."""
    topic, group = topic_and_group
    flag = tmp_path / "crash"
    flag.touch()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "offctl",
            "inspect",
            "--bootstrap-servers",
            kafka.bootstrap,
            "--group",
            group,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **crashing_env(flag)},
    )
    assert proc.returncode == 3 and "a segmentation fault (SIGSEGV)" in proc.stderr, proc.stderr
    assert not flag.exists()


def test_serve_keeps_serving_through_a_crash_in_one_cycle(kafka, topic_and_group, tmp_path):
    topic, group = topic_and_group
    flag = tmp_path / "crash"
    saved = dict(os.environ)
    os.environ.update(crashing_env(flag))  # start_serve's process inherits them
    try:
        proc, port = start_serve("--bootstrap-servers", kafka.bootstrap, "--group", group, "--timeout", "20")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        wait_for(lambda: metric(scrape(port)[1], "offctl_partition_lag", consumer=group, partition=0) == 4.0)
        cycles = metric(scrape(port)[1], "offctl_cycles_total")
        flag.touch()
        wait_for(lambda: not flag.exists())  # the next cycle's child crashed on it
        wait_for(lambda: metric(scrape(port)[1], "offctl_read_errors_total", store="kafka") == 1.0)
        # and the cycles after it read again: a new partition's lag shows up
        kafka.commit(group, topic, {0: 3}, metadata=METADATA)
        wait_for(lambda: metric(scrape(port)[1], "offctl_partition_lag", consumer=group, partition=0) == 2.0)
        assert metric(scrape(port)[1], "offctl_cycles_total") > cycles + 1
        assert scrape(port, "/healthz")[0] == 200
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "cycle failed" in err and "a segmentation fault (SIGSEGV)" in err and "Traceback" not in err, err


def test_watch_draws_the_crash_as_one_refreshs_error_and_goes_on(kafka, topic_and_group, tmp_path):
    topic, group = topic_and_group
    flag = tmp_path / "crash"
    flag.touch()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "offctl",
            "watch",
            "--bootstrap-servers",
            kafka.bootstrap,
            "--group",
            group,
            "--count",
            "3",
            "--interval",
            "0.5",
            "--timeout",
            "20",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **crashing_env(flag)},
    )
    assert proc.returncode == 0, proc.stderr
    frames = proc.stdout.split("refresh ")
    assert "segmentation fault" in frames[1] and "segmentation fault" not in frames[-1], proc.stdout
    assert len(frames) == 4 and "segmentation fault" not in frames[2] + frames[3], proc.stdout
    assert all("│   4 │" in frame and "│   1 │" in frame for frame in frames[2:]), proc.stdout  # the lags, read again


def test_mcp_keeps_its_session_through_a_crash_in_one_tool_call(served, tmp_path):  # noqa: F811
    flag = tmp_path / "crash"
    served = {**served, "env": {**served["env"], **crashing_env(flag)}}

    async def calls():
        async with session(served) as s:
            first = await s.call_tool("consumer", {"consumer": served["group"]})
            flag.touch()
            crashed = await s.call_tool("consumer", {"consumer": served["group"]})
            after = await s.call_tool("consumer", {"consumer": served["group"]})
            return first, crashed, after

    first, crashed, after = asyncio.run(calls())
    assert not first.is_error and not after.is_error
    assert crashed.is_error and "segmentation fault (SIGSEGV)" in json.dumps(crashed.model_dump())
    consumers = [[_stable(c) for c in r.structured_content["consumers"]] for r in (first, after)]
    assert consumers[0] == consumers[1] and consumers[0], consumers
    assert not flag.exists()


def test_a_reset_cut_by_a_crash_after_its_write_leaves_a_backup_an_intent_and_a_restore_that_works(
    kafka, topic_and_group, tmp_path
):
    """The worst moment: the group's commits were written, and the process died before it said so. The supervisor's
    message names the restore; the backup and the audit log's intent line are on disk; the restore puts the commits
    back, metadata and all."""
    topic, group = topic_and_group
    before = kafka.committed(group)
    flag, backups, audit = tmp_path / "crash", tmp_path / "backups", tmp_path / "audit.log"
    flag.touch()
    safe = [
        "--bootstrap-servers",
        kafka.bootstrap,
        "--backup-dir",
        str(backups),
        "--audit-log",
        str(audit),
        "--timeout",
        "20",
        "--force",
        "running-topology",
    ]  # no Storm ZooKeeper here to ask
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "offctl",
            "reset",
            *safe,
            "--group",
            group,
            "--to",
            "earliest",
            "--quiet-period",
            "0",
            "--execute",
            "--yes",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **crashing_env(flag, "commit:after")},
    )
    assert proc.returncode == 3, proc.stderr
    assert "a segmentation fault (SIGSEGV)" in proc.stderr and "offctl restore BACKUP" in proc.stderr, proc.stderr
    assert not flag.exists()  # the crash came, after the write
    assert {tp: o for tp, (o, _) in kafka.committed(group).items()} == {(topic, p): 0 for p in range(3)}
    [backup] = backups.iterdir()
    assert backup.name in audit.read_text()  # the intent line names it
    restored = subprocess.run(
        [sys.executable, "-m", "offctl", "restore", str(backup), *safe, "--quiet-period", "0", "--execute", "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert restored.returncode == 0, restored.stderr
    assert kafka.committed(group) == before
