"""`offctl mcp`'s writes end to end: the SDK's own client, over stdio, plans and applies against the real ZooKeeper
and broker, and answers the server's elicitation as a human would (yes, no), or cannot elicit at all.

The poison-message flow of docs/runbooks/poison-message.md, as an assistant runs it: find the stuck spout, peek,
plan a shift of one, a human confirms, apply, keep the undo (a restore plan of the backup), and undo."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from offctl.core.records.parse import commit_metadata_json
from tests.conftest import storm_record
from tests.e2e.seeds import fixture_config, on_each_broker, spout, storm_root
from tests.e2e.test_mcp_e2e import storm_groups_on, whole_fleet

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

STOPPED_ID = "orders-topology-3-1700000000"  # not under Storm's root: the running-topology guard passes
ZK_PASSWORD, KAFKA_SECRET = "zk-digest-pw-for-writes", "kafka-client-secret-for-writes"


def _stuck(zk, kafka, broker, zk_server, names, tmp_path):
    """A spout stuck at offset 2 of partition 0 (the poison message), its topology stopped, and a config file whose
    context `fixture` names the fixture servers, with a backup directory and an audit log of this test's own."""
    topic = names("orders")
    kafka.create_topic(topic, 2)
    kafka.produce_records(topic, 0, [{"value": b"m0"}, {"value": b"m1"}, {"value": b"\xff poison"}, {"value": b"m3"}])
    kafka.produce(topic, 1, 2)
    storm = storm_root(zk, names.root + "-storm")
    spout(zk, names.root, "orders-spout", topic, {0: 2, 1: 2}, topology_id=STOPPED_ID, broker=broker.address)
    config = fixture_config(
        tmp_path / "config.toml",
        zk_server,
        broker,
        names.root,
        storm,
        f"""\
backup-dir = "{tmp_path / "backups"}"
audit-log = "{tmp_path / "audit.log"}"
quiet-period = "0s"
zk-auth = "writer:{ZK_PASSWORD}"
kafka-config = ["client.id={KAFKA_SECRET}"]
""",
    )
    return {
        "topic": topic,
        "root": names.root,
        "storm_root": storm,
        "config": config,
        "tmp": tmp_path,
        "node": f"{names.root}/orders-spout/partition_0",
    }


stuck, stuck39 = on_each_broker("stuck", _stuck)


def offset_of(zk, path: str) -> int:
    return json.loads(zk.get(path)[0])["offset"]


@asynccontextmanager
async def session(stuck, *args: str, answers: list | None = None):
    """A client session with `offctl mcp ARGS`; with `answers`, it can elicit: each elicitation is answered with the
    next of them (True: accept with apply true; False: accept with apply false; "decline"), and its message kept."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mcp import types

    shown: list[str] = []

    async def elicit(context, params):
        shown.append(params.message)
        said = answers.pop(0)
        if said == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"apply": said})

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "offctl", "mcp", *args],
        env={"OFFCTL_CONFIG": str(stuck["config"])},
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    with open(stuck["tmp"] / "mcp.stderr", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(
                read, write, read_timeout_seconds=120, elicitation_callback=elicit if answers is not None else None
            ) as s:
                await s.initialize()
                s.shown = shown
                yield s


def structured(result) -> dict:
    assert not result.is_error, result.content[0].text if result.content else result
    return result.structured_content


def shift_one(s, stuck):
    return s.call_tool("plan_reset", {"consumer": "orders-spout", "to": "shift", "value": "+1", "partitions": "0"})


def test_the_poison_message_flow_with_a_yes_and_its_undo(zk, kafka39, stuck39):
    async def main():
        async with session(stuck39, "--allow-writes", answers=[True, True]) as s:
            fleet = [c for page in await whole_fleet(s) for c in structured(page)["consumers"]]
            peeked = structured(await s.call_tool("peek", {"consumer": "orders-spout", "partitions": [0]}))
            plan = structured(await shift_one(s, stuck39))
            written = structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]}))
            after = offset_of(zk, stuck39["node"])
            again = structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]}))
            undo = structured(await s.call_tool("plan_restore", {"backup": Path(written["backup"]).name}))
            undone = structured(await s.call_tool("apply", {"plan_id": undo["plan_id"]}))
            return fleet, peeked, plan, written, after, again, undo, undone, list(s.shown)

    fleet, peeked, plan, written, after, again, undo, undone, shown = anyio.run(main)
    said = json.dumps([fleet, peeked, plan, written, again, undo, undone, shown])
    logged = (stuck39["tmp"] / "mcp.stderr").read_text() + (stuck39["tmp"] / "audit.log").read_text()
    assert ZK_PASSWORD not in said + logged and KAFKA_SECRET not in said + logged
    # the stuck spout is the one under the context's root; the rest are the Storm groups on the context's broker
    # (the session's, which holds the other tests' groups)
    assert [c["consumer"] for c in fleet if c["store"] == "zookeeper"] == ["orders-spout"]
    assert {c["consumer"] for c in fleet if c["store"] == "kafka"} == storm_groups_on(kafka39)
    assert peeked["partitions"][0]["offset"] == 2 and peeked["partitions"][0]["messages"][0]["offset"] == 2
    # the plan: one change, 2 -> 3, its cost, its guards, bound to what it saw, and the command an operator runs
    assert plan["writes"] == 1 and plan["refused"] == [] and plan["kind"] == "reset"
    changes = [c for state in plan["state"] for c in state["changes"]]
    assert [(c["partition"], c["before"], c["after"]) for c in changes] == [(0, 2, 3)]
    assert plan["plan"]["cost"] is not None and plan["command"].startswith("offctl reset ")
    # the human was shown the plan's table and cost before anything was written
    assert len(shown) == 2 and "orders-spout" in shown[0] and "skips 1" in shown[0]
    assert written["status"] == "written" and written["written"] and written["verified"] is True
    assert after == 3 and Path(written["backup"]).is_file()
    assert written["undo"] and written["audit"] and all(json.loads(line) for line in written["audit"])
    assert again["status"] == "refused" and not again["written"]  # a plan is applied once
    assert [(c["partition"], c["before"], c["after"]) for state in undo["state"] for c in state["changes"]] == [
        (0, 3, 2)
    ]
    assert undone["status"] == "written" and offset_of(zk, stuck39["node"]) == 2


@pytest.mark.parametrize("said", [False, "decline"], ids=["answered-no", "declined"])
def test_a_human_who_says_no_writes_nothing(zk, stuck39, said):
    async def main():
        async with session(stuck39, "--allow-writes", answers=[said]) as s:
            plan = structured(await shift_one(s, stuck39))
            return structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]})), list(s.shown)

    result, shown = anyio.run(main)
    assert len(shown) == 1 and result["status"] == "declined" and not result["written"]
    assert offset_of(zk, stuck39["node"]) == 2 and not (stuck39["tmp"] / "backups").exists()


def test_without_allow_writes_nothing_is_written_and_the_command_is_named(zk, stuck39):
    async def main():
        async with session(stuck39, answers=[True]) as s:
            plan = structured(await shift_one(s, stuck39))
            return plan, structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]})), list(s.shown)

    plan, result, shown = anyio.run(main)
    assert (
        result["status"] == "refused" and "--allow-writes" in result["reason"] and plan["command"] in result["reason"]
    )
    assert shown == [] and offset_of(zk, stuck39["node"]) == 2


def test_a_client_that_cannot_elicit_gets_the_command_line_instead(zk, stuck39):
    async def main():
        async with session(stuck39, "--allow-writes") as s:
            plan = structured(await shift_one(s, stuck39))
            return plan, structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]}))

    plan, result = anyio.run(main)
    assert result["status"] == "refused" and not result["written"]
    assert plan["command"] in result["reason"] and offset_of(zk, stuck39["node"]) == 2


def test_a_record_changed_between_plan_and_apply_is_refused(zk, broker39, stuck39):
    async def main():
        async with session(stuck39, "--allow-writes", answers=[True]) as s:
            plan = structured(await shift_one(s, stuck39))
            # the spout (or another operator) moved on meanwhile
            zk.set(
                stuck39["node"], storm_record(stuck39["topic"], 0, 3, topology_id=STOPPED_ID, broker=broker39.address)
            )
            return structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]})), list(s.shown)

    result, shown = anyio.run(main)
    assert result["status"] == "refused" and "state changed since the plan" in result["reason"]
    assert shown == [] and offset_of(zk, stuck39["node"]) == 3  # not shifted from the new offset either


def test_an_expired_plan_is_refused(zk, stuck39):
    async def main():
        async with session(stuck39, "--allow-writes", "--plan-ttl", "1s", answers=[True]) as s:
            plan = structured(await shift_one(s, stuck39))
            await anyio.sleep(1.5)
            return structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]}))

    result = anyio.run(main)
    assert result["status"] == "refused" and "expired" in result["reason"]
    assert offset_of(zk, stuck39["node"]) == 2


def test_a_running_topology_refuses_at_apply(zk, stuck39):
    async def main():
        async with session(stuck39, "--allow-writes", answers=[True]) as s:
            plan = structured(await shift_one(s, stuck39))
            zk.create(f"{stuck39['storm_root']}/storms/{STOPPED_ID}", b"")  # the topology was started again
            return plan, structured(await s.call_tool("apply", {"plan_id": plan["plan_id"]})), list(s.shown)

    plan, result, shown = anyio.run(main)
    assert plan["refused"] == [] and result["status"] == "refused" and not result["written"]
    assert shown == [] and offset_of(zk, stuck39["node"]) == 2


def test_a_plan_outside_the_context_is_refused(stuck39):
    async def main():
        async with session(stuck39, "--allow-writes", answers=[]) as s:
            other_context = await s.call_tool(
                "plan_reset", {"consumer": "orders-spout", "to": "earliest", "context": "prod"}
            )
            other_root = await s.call_tool(
                "plan_reset", {"consumer": "orders-spout", "to": "earliest", "zk_root": "/elsewhere"}
            )
            unknown = structured(await s.call_tool("apply", {"plan_id": "not-a-plan"}))
            return other_context, other_root, unknown

    other_context, other_root, unknown = anyio.run(main)
    assert other_context.is_error and "no context 'prod'" in other_context.content[0].text
    assert other_root.is_error and "/elsewhere" in other_root.content[0].text
    assert unknown["status"] == "refused" and not unknown["written"]


def test_migrate_and_delete_through_the_tools(zk, kafka, stuck, names):
    group = names("client-group")

    async def main():
        async with session(stuck, "--allow-writes", answers=[True, True]) as s:
            migrate = structured(
                await s.call_tool(
                    "plan_migrate",
                    {"spout": "orders-spout", "group": group, "topology_id": "orders-client-1-1700000001"},
                )
            )
            migrated = structured(await s.call_tool("apply", {"plan_id": migrate["plan_id"]}))
            delete = structured(await s.call_tool("plan_delete", {"spout": "orders-spout", "partitions": "1"}))
            deleted = structured(await s.call_tool("apply", {"plan_id": delete["plan_id"]}))
            return migrate, migrated, delete, deleted

    migrate, migrated, delete, deleted = anyio.run(main)
    assert [(c["partition"], c["after"]) for c in migrate["plan"]["changes"]] == [(0, 2), (1, 2)]
    assert migrate["command"].startswith("offctl migrate ") and migrated["status"] == "written"
    assert migrated["verified"] is True  # Kafka kept the Storm metadata written for topology_id
    assert {p: found for (_, p), found in kafka.committed(group).items()} == {
        p: (2, commit_metadata_json("orders-client-1-1700000001")) for p in (0, 1)
    }
    assert delete["kind"] == "delete" and delete["writes"] == 1 and deleted["status"] == "written"
    assert not zk.exists(f"{stuck['root']}/orders-spout/partition_1") and zk.exists(stuck["node"])
    assert deleted["undo"] and Path(deleted["backup"]).is_file()
