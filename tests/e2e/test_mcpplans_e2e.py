"""offctl.faces.mcp.plans against the real ZooKeeper and Apache Kafka: plans made and applied as the MCP face's tools
make and apply them, with the human's answer given by a function (the face asks through MCP elicitation).

Kafka keeps a commit's metadata as it is sent: a group reset or migrate is written with --topology-id's Storm
metadata and read back with it (verified), and a plan is bound to each commit's metadata as well as its offset.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from offctl.core.records.model import ZOOKEEPER
from offctl.core.records.parse import commit_metadata_json
from offctl.errors import UsageError
from offctl.faces.mcp.apply import DECLINED, FAILED, REFUSED, UNCHANGED, WRITTEN, apply
from offctl.faces.mcp.plans import PlanStore, WriteTarget
from offctl.settings.connection import Connection
from tests.conftest import storm_record
from tests.e2e.seeds import on_each_broker, orders_fleet
from tests.unit.test_mcpplans import Human

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

TOPOLOGY = "orders-topology-1-1700000000"  # storm_record's default


def _fleet(zk, kafka, names, zk_server, broker, tmp_path):
    """A topic of 3 partitions of 10 messages, the spout `orders` at 4, 5, 6, an empty Storm root, and the run
    the MCP face resolves for its context."""
    f = orders_fleet(zk, kafka, names)
    f.conn = Connection(
        zk=zk_server.address, zk_roots=(f.root,), bootstrap_servers=broker.address, storm_root=f.storm_root
    )
    f.run = WriteTarget("test", f.conn, tmp_path / "backups", tmp_path / "audit.log", quiet_period_s=0)
    f.state = lambda: {p: (zk.get(f.path(p))[0], zk.get(f.path(p))[1].version) for p in range(3)}
    f.store = PlanStore()
    return f


fleet, fleet39 = on_each_broker("fleet", _fleet)


def poison_fix(fleet):
    """The poison-message fix: shift partition 1 of the spout by one, past the message it is stuck on."""
    return fleet.store.plan_reset(
        fleet.run, store=ZOOKEEPER, consumer="orders", to="shift", value="+1", topics=[f"{fleet.topic}:1"]
    )


def offset_of(data: bytes) -> int:
    return json.loads(data)["offset"]


def test_the_poison_message_fix_is_written_with_a_yes_and_its_undo_puts_it_back(cli, fleet39):
    before = fleet39.state()
    plan = poison_fix(fleet39)
    assert plan.writes == 1 and plan.document["mode"] == "dry-run" and fleet39.state() == before
    assert [(c["partition"], c["before"], c["after"], c["action"]) for c in plan.document["changes"]] == [
        (1, 5, 6, "write")
    ]
    assert plan.document["cost"]["skip"]["messages"] == 1  # the one message skipped
    assert "Reset 1 partition of spout orders" in plan.text and "cost: " in plan.text
    assert plan.state[0].changes[0].before_data == before[1][0] and plan.state[0].changes[0].version == before[1][1]

    human = Human()
    result = apply(fleet39.store, plan.id, allow_writes=True, confirm=human)
    assert result.status == WRITTEN and result.written and result.verified, result.reason
    assert human.shown == [plan.text]
    after = fleet39.state()
    assert after[1] == (before[1][0].replace(b'"offset":5', b'"offset":6'), before[1][1] + 1)
    assert after[0] == before[0] and after[2] == before[2]
    assert Path(result.backup).is_file() and Path(result.backup).parent == fleet39.run.backup_dir
    assert [json.loads(line)["phase"] for line in result.audit] == ["intent", "done"]
    assert Path(result.audit_log).read_text().splitlines() == list(result.audit)
    done = json.loads(result.audit[-1])
    assert (done["path"], done["before"], done["after"], done["outcome"]) == (fleet39.path(1), 5, 6, "verified")
    assert result.undo.startswith(f"offctl restore {result.backup} --execute")
    assert result.document["executed"] and result.document["undo"] == result.undo
    assert shlex.split(result.command)[:2] == ["offctl", "reset"] and "--by" in result.command

    undone = cli(*shlex.split(result.undo)[1:], "--yes")  # --yes: the test has no terminal to answer
    assert undone.exit_code == 0, undone.stderr
    assert {p: d for p, (d, _) in fleet39.state().items()} == {p: d for p, (d, _) in before.items()}


def test_the_backup_an_apply_wrote_is_restored_through_a_plan(fleet39):
    before = fleet39.state()
    written = apply(fleet39.store, poison_fix(fleet39).id, allow_writes=True, confirm=Human())
    assert written.status == WRITTEN, written.reason
    edited = fleet39.store.plan_restore(fleet39.run, backup=written.backup)
    Path(written.backup).write_text(Path(written.backup).read_text() + " ")  # the file changed since its plan
    refused = apply(fleet39.store, edited.id, allow_writes=True, confirm=Human())
    assert refused.status == REFUSED and "the backup file is not what it was" in refused.reason
    Path(written.backup).write_text(Path(written.backup).read_text()[:-1])
    plan = fleet39.store.plan_restore(fleet39.run, backup=Path(written.backup).name)
    assert plan.kind == "restore" and plan.writes == 1
    assert {g["guard"]: g["status"] for g in plan.document["guards"]}["changed-since"] == "pass"
    restored = apply(fleet39.store, plan.id, allow_writes=True, confirm=Human())
    assert restored.status == WRITTEN and restored.verified, restored.reason
    assert {p: d for p, (d, _) in fleet39.state().items()} == {p: d for p, (d, _) in before.items()}


def nothing_to_restore(fleet, backup: str) -> None:
    """plan_restore of the backup finds every partition at its before-image: a plan that writes nothing, refused by
    no guard, whose apply says there is nothing to change (issue 34)."""
    plan = fleet.store.plan_restore(fleet.run, backup=Path(backup).name)
    assert plan.writes == 0 and not plan.refused and plan.document["result"] == "unchanged"
    assert [c["action"] for c in plan.document["changes"]] == ["unchanged"]
    assert {g["status"] for g in plan.document["guards"]} == {"not-applicable"}
    human = Human()
    result = apply(fleet.store, plan.id, allow_writes=True, confirm=human)
    assert result.status == UNCHANGED and not result.written and "nothing to change" in result.reason
    assert human.shown == []


def test_a_restore_planned_and_applied_twice_finds_nothing_to_change_the_second_time(fleet39):
    before = fleet39.state()
    written = apply(fleet39.store, poison_fix(fleet39).id, allow_writes=True, confirm=Human())
    assert written.status == WRITTEN, written.reason
    first = fleet39.store.plan_restore(fleet39.run, backup=Path(written.backup).name)
    assert apply(fleet39.store, first.id, allow_writes=True, confirm=Human()).status == WRITTEN
    backups = sorted(fleet39.run.backup_dir.iterdir())
    nothing_to_restore(fleet39, written.backup)
    assert sorted(fleet39.run.backup_dir.iterdir()) == backups
    assert {p: d for p, (d, _) in fleet39.state().items()} == {p: d for p, (d, _) in before.items()}


def test_the_restore_of_a_write_cut_off_before_it_landed_finds_nothing_to_change(fleet39, monkeypatch):
    """Ctrl-C while the apply waits for ZooKeeper's answer: the apply fails saying the write may or may not have
    been applied, with the undo line; the write never landed, so its restore plan writes nothing."""
    from offctl.adapters.zookeeper import ZkStore
    from tests.support.runbook_walker import undo_lines

    def cut(self, changes):
        raise KeyboardInterrupt

    before = fleet39.state()
    monkeypatch.setattr(ZkStore, "write_versioned", cut)
    failed = apply(fleet39.store, poison_fix(fleet39).id, allow_writes=True, confirm=Human())
    monkeypatch.undo()
    assert failed.status == FAILED and "may or may not have been applied" in failed.reason
    (undo,) = undo_lines(failed.reason)
    assert fleet39.state() == before
    nothing_to_restore(fleet39, shlex.split(undo)[2])


def test_a_backup_outside_the_contexts_backup_directory_is_refused(fleet39, tmp_path):
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("{}")
    for name in (str(elsewhere), "../elsewhere.json", "missing.json"):
        with pytest.raises(UsageError, match="is not a backup file in"):
            fleet39.store.plan_restore(fleet39.run, backup=name)


def test_a_no_writes_nothing(fleet39):
    before = fleet39.state()
    plan = poison_fix(fleet39)
    result = apply(fleet39.store, plan.id, allow_writes=True, confirm=Human(False))
    assert result.status == DECLINED and not result.written and "Nothing was written" in result.reason
    assert fleet39.state() == before and not fleet39.run.backup_dir.exists() and not fleet39.run.audit_log.exists()


def test_without_allow_writes_it_is_refused(fleet39):
    before = fleet39.state()
    plan = poison_fix(fleet39)
    human = Human()
    result = apply(fleet39.store, plan.id, allow_writes=False, confirm=human)
    assert result.status == REFUSED and "--allow-writes" in result.reason and human.shown == []
    assert fleet39.state() == before and not fleet39.run.backup_dir.exists()


def test_a_record_changed_between_plan_and_apply_is_refused(fleet39, zk):
    plan = poison_fix(fleet39)
    zk.set(fleet39.path(1), storm_record(fleet39.topic, 1, 7))  # the spout moved on meanwhile
    before = fleet39.state()
    human = Human()
    result = apply(fleet39.store, plan.id, allow_writes=True, confirm=human)
    assert result.status == REFUSED and human.shown == []
    assert result.reason.startswith("state changed since the plan: ") and "ask for a new plan" in result.reason
    assert f"{fleet39.path(1)}: offset 5 (version 0) then, offset 7 (version 1) now" in result.reason
    assert fleet39.state() == before and not fleet39.run.backup_dir.exists()


def test_an_expired_plan_is_refused(fleet39):
    before = fleet39.state()
    plan = poison_fix(fleet39)
    result = apply(fleet39.store, plan.id, allow_writes=True, confirm=Human(), now=plan.expires)
    assert result.status == REFUSED and "expired" in result.reason and fleet39.state() == before


def test_a_topology_started_since_the_plan_is_refused_by_the_guard(fleet39, zk):
    plan = poison_fix(fleet39)
    assert {g["guard"]: g["status"] for g in plan.document["guards"]}["running-topology"] == "pass"
    zk.create(f"{fleet39.storm_root}/storms/{TOPOLOGY}")
    before = fleet39.state()
    human = Human()
    result = apply(fleet39.store, plan.id, allow_writes=True, confirm=human)
    assert result.status == REFUSED and result.reason.startswith("refused by the guards: running-topology: ")
    assert f"{TOPOLOGY} is running" in result.reason and human.shown == [] and fleet39.state() == before


def test_a_kafka_group_reset_is_planned_and_applied(fleet, kafka, names):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 7, 1: 8})
    asked = []
    run = replace(fleet.run, profile=lambda consumers: asked.extend(consumers) or None)  # the face's profile
    plan = fleet.store.plan_reset(run, store="kafka", consumer=group, to="earliest", topology_id=TOPOLOGY)
    assert asked == [group]
    assert [(c["partition"], c["before"], c["after"]) for c in plan.document["changes"]] == [(0, 7, 0), (1, 8, 0)]
    assert "--group" in plan.command and f"--topology-id {TOPOLOGY}" in plan.command
    result = apply(fleet.store, plan.id, allow_writes=True, confirm=Human())
    assert result.status == WRITTEN and result.written and result.verified is True, result.reason
    assert not result.document["notes"]
    assert _group_commits(kafka, group, metadata=True) == {p: (0, commit_metadata_json(TOPOLOGY)) for p in (0, 1)}
    assert result.undo.startswith("offctl restore ") and Path(result.backup).is_file()


def spout_metadata(topology_id: str) -> str:
    """Commit metadata as storm-kafka-client's CommitMetadataManager writes it (v1.2.4 to v2.8.8)."""
    return json.dumps(
        {"topologyId": topology_id, "taskId": 4, "threadName": "Thread-12-kafka-spout-executor[4 4]"},
        separators=(",", ":"),
    )


def test_a_kafka_commit_whose_metadata_changed_since_the_plan_is_refused(fleet, kafka, names):
    """The plan is bound to each commit as Kafka keeps it, metadata included: a redeployed spout (a new storm id)
    that committed the same offset since the plan makes it stale. Its own plan, made again, keeps the new metadata."""
    group = names("group")
    first, redeployed = spout_metadata(TOPOLOGY), spout_metadata("orders-topology-2-1700000900")
    kafka.commit(group, fleet.topic, {0: 7, 1: 8}, metadata=first)
    plan = fleet.store.plan_reset(
        fleet.run, store="kafka", consumer=group, to="shift", value="+1", topics=[f"{fleet.topic}:0"]
    )
    assert [(c["partition"], c["before"], c["after"]) for c in plan.document["changes"]] == [(0, 7, 8)]
    kafka.commit(group, fleet.topic, {0: 7}, metadata=redeployed)
    human = Human()
    result = apply(fleet.store, plan.id, allow_writes=True, confirm=human)
    assert result.status == REFUSED and human.shown == [], result.reason
    assert (
        f"group {group} {fleet.topic}/0: offset 7, metadata {first!r} then, offset 7, metadata {redeployed!r} now"
        in result.reason
    )
    assert _group_commits(kafka, group, metadata=True) == {0: (7, redeployed), 1: (8, first)}
    again = fleet.store.plan_reset(
        fleet.run, store="kafka", consumer=group, to="shift", value="+1", topics=[f"{fleet.topic}:0"]
    )
    written = apply(fleet.store, again.id, allow_writes=True, confirm=human)
    assert written.status == WRITTEN and written.verified is True, written.reason
    assert _group_commits(kafka, group, metadata=True) == {0: (8, redeployed), 1: (8, first)}


def test_a_kafka_commit_moved_since_the_plan_is_refused(fleet, kafka, names):
    group = names("group")
    kafka.commit(group, fleet.topic, {0: 7, 1: 8})
    plan = fleet.store.plan_reset(fleet.run, store="kafka", consumer=group, to="earliest", no_storm_metadata=True)
    kafka.commit(group, fleet.topic, {0: 9})
    result = apply(fleet.store, plan.id, allow_writes=True, confirm=Human())
    assert result.status == REFUSED and f"group {group} {fleet.topic}/0: offset 7 then, offset 9 now" in result.reason
    assert _group_commits(kafka, group) == {0: 9, 1: 8}


def test_a_spouts_records_are_deleted_through_a_plan(fleet39, zk):
    plan = fleet39.store.plan_delete(fleet39.run, spout="orders", partitions="2")
    assert plan.writes == 1 and [c["action"] for c in plan.document["changes"]] == ["delete"]
    assert "--partitions 2" in plan.command and shlex.split(plan.command)[1] == "delete"
    result = apply(fleet39.store, plan.id, allow_writes=True, confirm=Human())
    assert result.status == WRITTEN and result.verified, result.reason
    assert not zk.exists(fleet39.path(2)) and zk.exists(fleet39.path(1))
    assert result.undo.startswith("offctl restore ")


def _group_commits(kafka, group: str, *, metadata: bool = False) -> dict[int, int | tuple[int, str | None]]:
    """partition -> offset committed, or (offset, metadata) with `metadata`."""
    return {
        partition: (offset, text or None) if metadata else offset
        for (_, partition), (offset, text) in kafka.committed(group).items()
        if offset >= 0
    }


def test_a_migrate_is_planned_and_applied(fleet, kafka, names):
    group = names("client-group")
    plan = fleet.store.plan_migrate(fleet.run, spout="orders", group=group, topology_id=TOPOLOGY)
    assert [(c["partition"], c["before"], c["after"]) for c in plan.document["changes"]] == [
        (0, None, 4),
        (1, None, 5),
        (2, None, 6),
    ]
    assert shlex.split(plan.command)[1] == "migrate" and f"--topology-id {TOPOLOGY}" in plan.command
    result = apply(fleet.store, plan.id, allow_writes=True, confirm=Human())
    assert result.status == WRITTEN and result.written and result.verified is True, result.reason
    assert _group_commits(kafka, group, metadata=True) == {p: (4 + p, commit_metadata_json(TOPOLOGY)) for p in range(3)}
