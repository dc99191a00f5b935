"""Trident spouts end to end: state seeded under a transactional root as each emitter writes it, then
inspected, audited, reset, verified and restored through the real CLI, against the real ZooKeeper and broker."""

from __future__ import annotations

import json
import shlex

import pytest

from offctl.faces.sandbox import client_trident_meta, trident_meta

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

SK_ID, CL_ID = "orders-trident-4-1700000300", "clicks-trident-6-1700000400"


@pytest.fixture
def world(zk, kafka, names, zk_server, broker, tmp_path):
    return _world(zk, kafka, names, zk_server, broker, tmp_path)


@pytest.fixture
def world39(zk, kafka39, names, zk_server, broker39, tmp_path):
    """The world on Apache Kafka 3.9, the broker of the storm-kafka era, for the tests that read storm-kafka's
    Trident spouts alone."""
    return _world(zk, kafka39, names, zk_server, broker39, tmp_path)


def _world(zk, kafka, names, zk_server, broker, tmp_path):
    topic = kafka.filled_topic(names("orders"), 3, 10)
    root = names.root + "/transactional"

    def put(path: str, data: bytes) -> None:
        zk.create(f"{root}/{path}", data, makepath=True)

    for p in range(3):  # storm-kafka, flat layout; txid 7 is an older batch the next success cleans up
        put(f"sk/user/partition_{p}", b"7")
        put(f"sk/user/partition_{p}/7", trident_meta(topic, p, 1, 2, SK_ID, broker.address))
        put(f"sk/user/partition_{p}/8", trident_meta(topic, p, 2, 3 + p, SK_ID, broker.address))
    put("sk/coordinator/currtx", b"9")
    put(f"skw/user/{topic}/partition_1/3", trident_meta(topic, 1, 4, 6, SK_ID, broker.address))  # wildcard
    put("skw/coordinator/currtx", b"4")  # as MasterBatchCoordinator leaves it: one past the last acked txid
    for p in range(2):  # storm-kafka-client 2.x
        put(f"cl/user/{topic}@{p}/5", client_trident_meta(0, 3, CL_ID))
        put(f"cl/user/{topic}@{p}/6", client_trident_meta(4, 6 + p, CL_ID))
    put("cl/coordinator/currtx", b"7")
    put("wordcount/user/counts/1", b"{}")
    zk.ensure_path(names.root + "/storm/storms")

    class World:
        pass

    w = World()
    w.topic, w.root = topic, root
    w.conn = [
        "--zk",
        zk_server.address,
        "--trident-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        names.root + "/storm",
    ]
    w.safe = ["--backup-dir", str(tmp_path / "backups"), "--audit-log", str(tmp_path / "audit.log")]
    w.get = lambda path: zk.get(f"{root}/{path}")[0]
    w.exists = lambda path: zk.exists(f"{root}/{path}") is not None
    w.put = put
    w.set = lambda path, data: zk.set(f"{root}/{path}", data)
    w.delete = lambda path: zk.delete(f"{root}/{path}")
    return w


def test_inspect_shows_every_trident_spout_with_where_it_resumes(cli, world):
    result = cli("inspect", *world.conn, "-o", "json", "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    rows = {
        (r["consumer"], r["topic"], r["partition"]): (r["store"], r["committed"], r["lag"], r["path"])
        for r in doc["partitions"]
    }
    t = world.topic
    assert rows[("sk", t, 2)] == ("trident", 5, 5, f"{world.root}/sk/user/partition_2/8")  # the highest txid
    assert rows[("skw", t, 1)][1:3] == (6, 4)
    assert rows[("cl", t, 1)][1:3] == (8, 2)  # lastOffset 7 + 1
    assert {c for c, _, _ in rows} == {"sk", "skw", "cl"}
    assert any("wordcount holds no Kafka spout's state" in n for n in doc["notes"])
    codes = {(f["consumer"], f["code"]) for f in doc["findings"]}
    assert ("cl", "MISSING_PARTITION") in codes and ("sk", "STALE_TOPOLOGY") in codes


def test_reset_moves_a_trident_spout_and_restore_puts_it_back_byte_for_byte(cli, world):
    before = {p: world.get(f"sk/user/partition_{p}/8") for p in range(3)}
    older = world.get("sk/user/partition_0/7")
    dry = cli(
        "reset",
        *world.conn,
        *world.safe,
        "--trident",
        "sk",
        "--to",
        "offset",
        "--offset",
        "1",
        "--quiet-period",
        "0",
        "-o",
        "json",
    )
    assert dry.exit_code == 0, dry.stderr
    assert [(c["partition"], c["before"], c["after"]) for c in dry.json()["changes"]] == [
        (0, 3, 1),
        (1, 4, 1),
        (2, 5, 1),
    ]
    done = cli(
        "reset",
        *world.conn,
        *world.safe,
        "--trident",
        "sk",
        "--to",
        "offset",
        "--offset",
        "1",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0 and done.json()["verified"], done.stderr
    for p in range(3):  # only offset and nextOffset of the highest txid change
        assert world.get(f"sk/user/partition_{p}/8") == before[p].replace(b'"offset":2', b'"offset":1').replace(
            f'"nextOffset":{3 + p}'.encode(), b'"nextOffset":1'
        )
    assert world.get("sk/user/partition_0/7") == older
    after = cli("inspect", *world.conn, "-o", "json", "--fail-on", "never").json()
    assert {r["committed"] for r in after["partitions"] if r["consumer"] == "sk"} == {1}

    undo = shlex.split(done.json()["undo"])[1:]
    back = cli(*undo, "--yes")
    assert back.exit_code == 0, back.stderr
    assert {p: world.get(f"sk/user/partition_{p}/8") for p in range(3)} == before

    # Issue 34: run again, the restore finds every state at its before-image: nothing to change, exit 0
    again = cli(*undo, "--yes", "-o", "json")
    assert again.exit_code == 0, again.stderr
    assert again.json()["result"] == "unchanged" and not again.json()["executed"]
    assert [(c["partition"], c["action"]) for c in again.json()["changes"]] == [
        (0, "unchanged"),
        (1, "unchanged"),
        (2, "unchanged"),
    ]
    assert {g["status"] for g in again.json()["guards"]} == {"not-applicable"}
    assert {p: world.get(f"sk/user/partition_{p}/8") for p in range(3)} == before


def test_a_trident_write_that_landed_in_part_is_restored_and_a_third_value_refused(cli, world39, zk):
    """By node path: partition 0's state holds its before-image again, 1 and 2 what the write left; 1 moved to a
    third value is refused alone, and once it holds what the write left the restore puts back 1 and 2."""
    path = lambda p: f"{world39.root}/sk/user/partition_{p}/8"  # noqa: E731
    before = {p: world39.get(f"sk/user/partition_{p}/8") for p in range(3)}
    done = cli(
        "reset",
        *world39.conn,
        *world39.safe,
        "--trident",
        "sk",
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
    left = {p: world39.get(f"sk/user/partition_{p}/8") for p in range(3)}
    zk.set(path(0), before[0])
    later = left[1].replace(b'"nextOffset":10', b'"nextOffset":9')
    assert later != left[1]
    zk.set(path(1), later)
    undo = [*shlex.split(done.json()["undo"])[1:], "--yes", "-o", "json"]  # with the reset's --quiet-period 0
    refused = cli(*undo)
    assert refused.exit_code == 4, refused.stderr
    (said,) = [g["message"] for g in refused.json()["guards"] if g["guard"] == "changed-since"]
    assert said.startswith(
        f"1 partition(s) changed since the write this backup undoes, which restoring would "
        f"overwrite: {path(1)}: the write left offset 10, it is now 9"
    )
    zk.set(path(1), left[1])
    back = cli(*undo)
    assert back.exit_code == 0 and back.json()["verified"], back.stderr
    assert [(c["partition"], c["action"]) for c in back.json()["changes"]] == [
        (0, "unchanged"),
        (1, "write"),
        (2, "write"),
    ]
    assert {p: world39.get(f"sk/user/partition_{p}/8") for p in range(3)} == before


def test_a_client_trident_reset_and_a_newer_txid_written_meanwhile(cli, world, monkeypatch):
    done = cli(
        "reset",
        *world.conn,
        *world.safe,
        "--trident",
        "cl",
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    # partition 2 has no state: offctl creates none (one per txid), and the row says what the emitter does
    assert done.exit_code == 7 and done.json()["verified"], done.stderr
    (left,) = [c for c in done.json()["changes"] if c["left_out"]]
    assert (left["partition"], left["action"], left["path"]) == (2, "skip", None)
    assert "KafkaTridentSpoutEmitter.seek starts" in left["reasons"][0] and "the log start (0)" in left["reasons"][0]
    assert not world.exists(f"cl/user/{world.topic}@2")
    assert json.loads(world.get(f"cl/user/{world.topic}@0/6")) == {
        "topologyId": CL_ID,
        "lastOffset": 9,
        "firstOffset": 10,
    }

    def confirm(question, **kw):  # the topology commits a new batch, and its commit is acked, while the operator
        world.put(f"cl/user/{world.topic}@1/7", client_trident_meta(10, 10, CL_ID))  # reads the plan
        world.set("cl/coordinator/currtx", b"8")
        return True

    monkeypatch.setattr("offctl.commands.options.typer.confirm", confirm)
    monkeypatch.setattr("offctl.commands.options.stdin_is_terminal", lambda: True)  # as an operator at a terminal
    raced = cli(
        "reset", *world.conn, *world.safe, "--trident", "cl", "--to", "earliest", "--quiet-period", "0", "--execute"
    )
    assert raced.exit_code == 5 and "/7 was written after" in raced.stderr


def test_a_storm_kafka_trident_partition_without_state_is_left_out_with_exit_6(cli, world39):
    """skw has state for partition 1 only; TridentKafkaEmitter.doEmitNewPartitionBatch (v1.2.4) starts the
    others from startOffsetTime, and offctl creates no transaction's state for them."""
    dry = cli(
        "reset", *world39.conn, *world39.safe, "--trident", "skw", "--to", "latest", "--quiet-period", "0", "-o", "json"
    )
    assert dry.exit_code == 7, dry.stderr
    rows = [(c["partition"], c["action"], c["left_out"]) for c in dry.json()["changes"]]
    assert rows == [(0, "skip", True), (1, "write", False), (2, "skip", True)]
    assert "TridentKafkaEmitter.doEmitNewPartitionBatch" in dry.json()["changes"][0]["reasons"][0]


def test_trident_usage_errors(cli, world):
    none = cli("reset", *world.conn, "--trident", "nope", "--to", "earliest")
    assert none.exit_code == 2 and "no Trident Kafka spout state 'nope'" in none.stderr
    two = cli("reset", *world.conn, "--trident-root", "/other", "--trident", "sk", "--to", "earliest")
    assert two.exit_code == 2 and "exactly one --trident-root" in two.stderr
    both = cli("reset", *world.conn, "--trident", "sk", "--group", "g", "--to", "earliest")
    assert both.exit_code == 2 and "exactly one of" in both.stderr


@pytest.mark.spark
def test_audit_reads_trident_spouts_too(cli, world, spark):
    result = cli("audit", *world.conn, "-o", "json", "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert {(r["consumer"], r["committed"]) for r in doc["partitions"] if r["consumer"] == "sk"} == {
        ("sk", 3),
        ("sk", 4),
        ("sk", 5),
    }
    assert all(r["store"] == "trident" for r in doc["partitions"])


def test_naming_a_trident_spout_shows_it_alone_and_a_wrong_name_fails(cli, world):
    one = cli("inspect", *world.conn, "--trident", "cl", "-o", "json", "--fail-on", "never")
    assert one.exit_code == 0, one.stderr
    assert {c["consumer"] for c in one.json()["consumers"]} == {"cl"}
    typo = cli("inspect", *world.conn, "--trident", "c1", "-o", "json")
    assert typo.exit_code == 1
    assert [f["code"] for f in typo.json()["findings"]] == ["CONSUMER_NOT_FOUND"]


def test_a_reset_rewrites_the_batches_stored_at_currtx_and_restore_puts_them_back(cli, world):
    """A worker died between txid 8's commit and its ack (currtx 8), and partition 2 kept only txid 8. A
    transactional spout replays the batch stored at currtx before it goes on (PartitionedTridentSpoutExecutor,
    v1.2.4; run: tests/oracle/test_trident_transactional_e2e.py repair-not-acked), so the reset rewrites txid 7, which
    an opaque spout resumes from, and txid 8 too, each to an empty batch at the target; partition 2, with nothing
    below currtx, is written for a transactional spout and left out for an opaque one (exit 7). Restore puts every
    node back byte for byte, and a second restore finds nothing to change."""
    world.set("sk/coordinator/currtx", b"8")
    world.delete("sk/user/partition_2/7")
    paths = [f"sk/user/partition_{p}/{t}" for p in range(3) for t in (7, 8) if (p, t) != (2, 7)]
    before = {path: world.get(path) for path in paths}
    done = cli(
        "reset",
        *world.conn,
        *world.safe,
        "--trident",
        "sk",
        "--to",
        "offset",
        "--offset",
        "1",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 7 and done.json()["verified"], done.stderr
    rows = [
        (c["partition"], c["path"].rsplit("/", 1)[1], c["batch"], c["after"], c["action"], c["left_out"])
        for c in done.json()["changes"]
    ]
    assert rows == [
        (0, "7", None, 1, "write", False),
        (0, "8", 8, 1, "write", False),
        (1, "7", None, 1, "write", False),
        (1, "8", 8, 1, "write", False),
        (2, "8", None, 1, "write", True),
    ], rows
    assert "an opaque spout drops it and starts" in " ".join(done.json()["changes"][4]["reasons"])
    for path in paths:  # an empty batch at 1: a transactional replay emits nothing, and both go on from 1
        meta = json.loads(world.get(path))
        assert (meta["offset"], meta["nextOffset"]) == (1, 1), (path, meta)
    doc = cli("inspect", *world.conn, "--trident", "sk", "-o", "json", "--fail-on", "never").json()
    said = {
        (f["partition"], f["code"]) for f in doc["findings"] if f["code"] in ("TRIDENT_REPLAY", "MISSING_PARTITION")
    }
    assert said == {(2, "TRIDENT_REPLAY")}, doc["findings"]  # the opaque spout starts 2 at the log start, 0
    assert {r["partition"]: r["resumes_at"] for r in doc["partitions"]} == {0: 1, 1: 1, 2: None}

    undo = shlex.split(done.json()["undo"])[1:]
    back = cli(*undo, "--yes", "-o", "json")
    assert back.exit_code == 0 and back.json()["verified"], back.stderr
    assert {path: world.get(path) for path in paths} == before
    assert [(c["partition"], c["path"].rsplit("/", 1)[1], c["batch"]) for c in back.json()["changes"]] == [
        (0, "7", None),
        (0, "8", 8),
        (1, "7", None),
        (1, "8", 8),
        (2, "8", None),
    ]
    again = cli(*undo, "--yes", "-o", "json")
    assert again.exit_code == 0 and again.json()["result"] == "unchanged", again.stderr
