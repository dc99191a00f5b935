"""JStorm spouts repaired end to end, through the real CLI and MCP's plan tools, against the real ZooKeeper and the
Kafka 3.9 broker JStorm's spout (a Kafka 0.8 client) talks to: reset to every target, dry run and --execute, each
record written byte for byte as PartitionConsumer.commitState writes it and read back as the spout reads it; the
restore of its backup puts every node back byte for byte; delete and its restore; hostile backups; the guards.

JStorm's spout itself cannot be run (jstorm-kafka is on no Maven repository: offctl.core.storm.jstorm), so the records
are seeded with jstorm.record_bytes, the bytes commitState writes."""

from __future__ import annotations

import base64
import json
import shlex
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from offctl.adapters.backup import digest
from offctl.core.storm import jstorm
from offctl.faces.mcp.apply import WRITTEN, apply
from offctl.faces.mcp.plans import PlanStore, WriteTarget
from offctl.settings.connection import Connection
from tests.e2e.seeds import leader
from tests.unit.test_mcpplans import Human

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

TOPOLOGY = "clicks-topology"  # the name JStorm's nimbus gives topology.name, which commitState writes
BASE_MS = int(time.time() * 1000) - 3_600_000  # the messages' timestamps: an hour ago, one a second


@pytest.fixture
def world39(zk, kafka39, names, zk_server, broker39, tmp_path):
    """A topic of 3 partitions of 10 messages stamped BASE_MS + offset seconds; the JStorm spout TOPIC/jstorm with
    records at 3 and 5 on partitions 0 and 1 (it fetches 4 and 6) and none on 2; no JStorm topology running."""
    topic = names("clicks")
    kafka39.create_topic(topic, 3)
    for p in range(3):
        kafka39.produce_records(topic, p, [{"value": b"m%d" % i, "timestamp": BASE_MS + i * 1000} for i in range(10)])
    root = names.root + "/jstorm"
    w = SimpleNamespace(topic=topic, root=root, spout=f"{topic}/jstorm")
    w.folder = f"{jstorm.spouts_path(root)}/{w.spout}"
    w.path = lambda p: jstorm.node_path(root, w.spout, p)

    def record(p: int, offset: int, topology: str | None = TOPOLOGY) -> bytes:
        host, port = leader(kafka39, topic, p).rsplit(":", 1)
        return jstorm.record_bytes(topology, offset, p, host, int(port), topic)

    w.record = record
    for p, offset in ((0, 3), (1, 5)):
        zk.create(w.path(p), record(p, offset), makepath=True)
    zk.ensure_path(jstorm.topologies_path(root))  # JStorm's running topologies: none
    w.conn = ["--zk", zk_server.address, "--jstorm-root", root, "--bootstrap-servers", broker39.address]
    w.conn += ["--storm-root", names.root + "/storm"]
    w.safe = ["--backup-dir", str(tmp_path / "backups"), "--audit-log", str(tmp_path / "audit.log")]
    w.reset = [*w.conn, *w.safe, "--jstorm", w.spout]
    w.nodes = lambda: {kid: zk.get(f"{w.folder}/{kid}")[0] for kid in sorted(zk.get_children(w.folder))}
    w.run = WriteTarget(
        "test",
        Connection(
            zk=zk_server.address,
            jstorm_roots=(root,),
            bootstrap_servers=broker39.address,
            storm_root=names.root + "/storm",
        ),
        tmp_path / "backups",
        tmp_path / "audit.log",
        quiet_period_s=0,
    )
    return w


def rows(doc: dict) -> list[tuple]:
    return [(c["partition"], c["before"], c["after"], c["action"], c["new_record"]) for c in doc["changes"]]


def test_a_reset_to_latest_writes_commitstates_bytes_and_its_restore_puts_every_node_back(cli, world39):
    w = world39
    before = w.nodes()
    dry = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "0", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    doc = dry.json()
    assert (doc["store"], doc["consumer"], doc["zk_root"], doc["mode"]) == ("jstorm", w.spout, w.root, "dry-run")
    assert rows(doc) == [(0, 3, 9, "write", False), (1, 5, 9, "write", False), (2, None, 9, "write", True)]
    assert [c["path"] for c in doc["changes"]] == [w.path(p) for p in range(3)]
    assert all("writes offset 9, so JStorm's spout fetches 10 first" in c["reasons"][-1] for c in doc["changes"])
    assert "created as JStorm's spout writes one" in doc["changes"][2]["reasons"][0]
    # fetched 4 and 6, now the log end 10; partition 2 fetched the log end + 1 without a record
    assert (doc["cost"]["skip"]["partitions"], doc["cost"]["skip"]["messages"]) == (2, 10)
    assert w.nodes() == before
    table = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "0")
    assert table.exit_code == 0 and "reset jstorm /" in table.stdout
    assert "JStorm's spout fetches each + 1 first" in table.stdout and "create" in table.stdout

    done = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0 and done.json()["verified"], done.stderr
    assert w.nodes() == {str(p): w.record(p, 9) for p in range(3)}  # commitState's bytes, the new one too
    seen = cli("inspect", *w.conn, "--jstorm", w.spout, "-o", "json", "--fail-on", "never").json()
    assert [(r["partition"], r["committed"], r["resumes_at"]) for r in seen["partitions"]] == [
        (p, 9, 10) for p in range(3)
    ]

    undo = shlex.split(done.json()["undo"])[1:]
    assert "--jstorm-root" not in undo  # the backup names its root
    undone = cli(*undo, "--yes", "-o", "json")
    assert undone.exit_code == 0, undone.stderr
    assert [(c["partition"], c["action"]) for c in undone.json()["changes"]] == [
        (2, "delete"),
        (0, "write"),
        (1, "write"),
    ]
    assert w.nodes() == before  # every node, byte for byte; partition 2 absent again
    again = cli(*undo, "--yes", "-o", "json")
    assert again.exit_code == 0 and again.json()["result"] == "unchanged", again.stderr


@pytest.mark.parametrize(
    "target, stored",
    [
        pytest.param(["--to", "earliest"], [-1, -1, -1], id="earliest: -1, the spout fetches 0"),
        pytest.param(["--to", "offset", "--offset", "4"], [3, 3, 3], id="offset"),
        pytest.param(["--to", "shift", "--by", "-2", "--partitions", "0,1"], [1, 3], id="shift"),
        pytest.param(["--to", "time", "--at", str(BASE_MS + 6500)], [6, 6, 6], id="time"),
    ],
)
def test_every_target_is_where_the_spout_fetches_first_and_restores_byte_for_byte(cli, world39, target, stored):
    w = world39
    before = w.nodes()
    dry = cli("reset", *w.reset, *target, "--quiet-period", "0", "-o", "json")
    assert dry.exit_code == 0, dry.stderr
    assert [c["after"] for c in dry.json()["changes"]] == stored
    for c in dry.json()["changes"]:
        assert f"so JStorm's spout fetches {c['after'] + 1} first" in c["reasons"][-1]
    assert w.nodes() == before

    done = cli("reset", *w.reset, *target, "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0 and done.json()["verified"], done.stderr
    assert [w.nodes()[str(p)] for p in range(len(stored))] == [w.record(p, s) for p, s in enumerate(stored)]
    seen = cli("inspect", *w.conn, "--jstorm", w.spout, "-o", "json", "--fail-on", "never").json()
    assert [r["resumes_at"] for r in seen["partitions"]][: len(stored)] == [s + 1 for s in stored]
    undone = cli(*shlex.split(done.json()["undo"])[1:], "--yes")
    assert undone.exit_code == 0, undone.stderr
    assert w.nodes() == before


def test_from_file_takes_a_plan_of_the_spout_and_writes_its_stored_offsets_again(cli, world39, tmp_path):
    w = world39
    plan = tmp_path / "plan.json"
    plan.write_text(cli("reset", *w.reset, "--to", "earliest", "--quiet-period", "0", "-o", "json").stdout)
    again = cli("reset", *w.conn, *w.safe, "--from-file", str(plan), "--quiet-period", "0", "-o", "json")
    assert again.exit_code == 0, again.stderr
    assert (again.json()["consumer"], [c["after"] for c in again.json()["changes"]]) == (w.spout, [-1, -1, -1])
    (tmp_path / "rows.csv").write_text(f"{w.topic},0,7\n")  # a CSV's offset: where the spout fetches first
    csv = cli("reset", *w.reset, "--from-file", str(tmp_path / "rows.csv"), "--quiet-period", "0", "-o", "json")
    assert csv.exit_code == 0, csv.stderr
    assert [(c["partition"], c["after"]) for c in csv.json()["changes"] if c["action"] == "write"] == [(0, 6)]


def test_delete_and_its_restore_put_the_record_back_byte_for_byte(cli, world39):
    w = world39
    before = w.nodes()
    nothing = cli("delete", *w.reset, "--written-by", "another-topology", "--quiet-period", "0")
    assert nothing.exit_code == 2 and "nothing matches" in nothing.stderr
    done = cli("delete", *w.reset, "--partitions", "1", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0 and done.json()["verified"], done.stderr
    assert [(c["partition"], c["before"], c["action"]) for c in done.json()["changes"]] == [(1, 5, "delete")]
    assert "starts it at the log end + 1" in done.json()["changes"][0]["reasons"][0]
    assert "1" not in w.nodes() and w.nodes()["0"] == before["0"]
    undone = cli(*shlex.split(done.json()["undo"])[1:], "--yes", "-o", "json")
    assert undone.exit_code == 0, undone.stderr
    assert [(c["partition"], c["action"], c["new_record"]) for c in undone.json()["changes"]] == [(1, "write", True)]
    assert w.nodes() == before


def test_an_edited_or_hostile_backup_is_refused_with_exit_2_before_anything_is_read(cli, world39, zk):
    w = world39
    done = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "0", "--execute", "--yes", "-o", "json")
    assert done.exit_code == 0, done.stderr
    backup = Path(done.json()["backup"])
    written = w.nodes()
    doc = json.loads(backup.read_text())

    edited = dict(doc, zookeeper=[dict(doc["zookeeper"][0], data_base64=base64.b64encode(b'{"offset":0}').decode())])
    backup.write_text(json.dumps(edited))
    refused = cli("restore", str(backup), *w.conn, *w.safe, "--quiet-period", "0", "--execute", "--yes")
    assert refused.exit_code == 2 and "fails its checksum" in refused.stderr

    # a path outside the spout's partition nodes, with a checksum made for it: refused, hand-made or not
    hostile = dict(doc, zookeeper=[dict(doc["zookeeper"][0], path=jstorm.topologies_path(w.root) + "/0")])
    hostile["sha256"] = digest(hostile)
    backup.write_text(json.dumps(hostile))
    for extra in ([], ["--hand-made"]):
        out = cli("restore", str(backup), *w.conn, *w.safe, *extra, "--quiet-period", "0", "--execute", "--yes")
        assert out.exit_code == 2 and "is not a partition node of jstorm" in out.stderr, out.stderr
    assert w.nodes() == written and zk.get_children(jstorm.topologies_path(w.root)) == []


def test_the_guards_refuse_a_recent_write_and_a_running_topology(cli, world39, zk):
    w = world39
    before = w.nodes()
    recent = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "1h", "--execute", "--yes", "-o", "json")
    assert recent.exit_code == 4, recent.stderr
    guards = {g["guard"]: g for g in recent.json()["guards"]}
    assert guards["recent-write"]["status"] == "refused" and w.folder in guards["recent-write"]["message"]
    assert guards["running-topology"]["status"] == "pass" and w.nodes() == before

    storm_id = f"{TOPOLOGY}-3-1700000000"
    zk.create(f"{jstorm.topologies_path(w.root)}/{storm_id}", b"")
    running = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "0", "-o", "json")
    assert running.exit_code == 4
    message = {g["guard"]: g for g in running.json()["guards"]}["running-topology"]["message"]
    assert f"topology {storm_id} is running (listed under {jstorm.topologies_path(w.root)}" in message
    assert "jstorm kill NAME" in message
    forced = cli("reset", *w.reset, "--to", "latest", "--quiet-period", "0", "--force", "running-topology")
    assert forced.exit_code == 0, forced.stderr

    zk.delete(f"{jstorm.topologies_path(w.root)}/{storm_id}")
    zk.delete(jstorm.topologies_path(w.root))
    unknown = cli("delete", *w.reset, "--all-records", "--quiet-period", "0", "-o", "json")
    assert unknown.exit_code == 4
    message = {g["guard"]: g for g in unknown.json()["guards"]}["running-topology"]["message"]
    assert "cannot tell whether the owning topology runs: neither" in message and w.nodes() == before


def test_the_mcp_plan_tools_reset_and_delete_a_jstorm_spout(cli, world39):
    w = world39
    before = w.nodes()
    store = PlanStore()
    plan = store.plan_reset(w.run, store="jstorm", consumer=w.spout, to="offset", value=7)
    assert plan.writes == 3 and not plan.refused
    assert [c["after"] for c in plan.document["changes"]] == [6, 6, 6]
    assert f"Reset 3 partitions of JStorm spout {w.spout} (JStorm root {w.root})" in plan.text
    command = shlex.split(plan.command)
    assert command[command.index("--jstorm") + 1] == w.spout and w.root in command
    result = apply(store, plan.id, allow_writes=True, confirm=Human())
    assert result.status == WRITTEN and result.verified, result.reason
    assert w.nodes() == {str(p): w.record(p, 6) for p in range(3)}

    deleting = store.plan_delete(w.run, store="jstorm", spout=w.spout, partitions="2")
    assert [(c["partition"], c["action"]) for c in deleting.document["changes"]] == [(2, "delete")]
    assert shlex.split(deleting.command)[:2] == ["offctl", "delete"] and "--jstorm" in deleting.command
    deleted = apply(store, deleting.id, allow_writes=True, confirm=Human())
    assert deleted.status == WRITTEN and deleted.verified and set(w.nodes()) == {"0", "1"}, deleted.reason
    for undo in (deleted.undo, result.undo):  # the delete's undo, then the reset's
        undone = cli(*shlex.split(undo)[1:], "--yes")
        assert undone.exit_code == 0, undone.stderr
    assert w.nodes() == before
