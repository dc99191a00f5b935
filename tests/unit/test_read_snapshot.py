"""Reading orchestration over in-memory stores that satisfy the core's Protocols (no servers)."""

from __future__ import annotations

import json

import pytest

from offctl.core.records.model import GroupState, KafkaCommit, PartitionLog, Thresholds, ZkNode
from offctl.core.rules.analyze import analyze, parse_snapshot
from offctl.pipeline.inspect import exit_code
from offctl.pipeline.read import read_snapshot
from offctl.settings.run import Selection


class MemoryZk:
    def __init__(self, nodes: list[ZkNode], running=frozenset()):
        self.nodes, self.running = nodes, running

    def spout_ids(self, root):
        ids = sorted({n.spout_id for n in self.nodes if n.zk_root == root})
        return ids or None

    def read_partitions(self, root, spout_ids):
        return iter([n for n in self.nodes if n.zk_root == root and n.spout_id in spout_ids])

    def running_topologies(self, storm_root):
        return self.running


class MemoryKafka:
    def __init__(self, commits: list[KafkaCommit], logs: dict):
        self.commits, self.all_logs, self.notes = commits, logs, []
        self.requested: list[str] = []

    def list_groups(self):
        return sorted({c.group for c in self.commits})

    def group_commits(self, groups):
        return [c for c in self.commits if c.group in groups]

    def group_states(self, groups):
        return [GroupState(g, "empty", 0) for g in groups]

    def request_logs(self, topics):
        self.requested += [t for t in topics if t in self.all_logs and t not in self.requested]

    def api_versions(self):  # no broker to ask: nothing is judged (offctl.pipeline.assess.with_broker_support)
        return None, ""

    def logs(self):
        return {t: self.all_logs[t] for t in self.requested}


def node(spout: str, topic: str, partition: int, offset: int, root: str = "/r") -> ZkNode:
    data = json.dumps(
        {"topology": {"id": "t-1-1", "name": "t"}, "offset": offset, "partition": partition, "topic": topic}
    ).encode()
    return ZkNode(root, spout, f"{root}/{spout}/partition_{partition}", partition, None, data, 0, 0)


LOGS = {t: {0: PartitionLog(0, 10), 1: PartitionLog(0, 10)} for t in ("orders", "other")}


def test_topic_narrows_groups_but_not_zookeeper_records():
    zk = MemoryZk([node("s", "orders", 0, 5), node("s", "other", 1, 5)])
    kafka = MemoryKafka([KafkaCommit("g", "orders", 0, 5, None), KafkaCommit("g", "other", 0, 5, None)], LOGS)
    snapshot, records = read_snapshot(zk, kafka, ["/r"], Selection(groups=("g",), topic="orders"), "/storm", 0)
    assert [(c.topic, c.partition) for c in snapshot.commits] == [("orders", 0)]
    assert len(snapshot.zk_nodes) == 2  # a record of another topic is a finding, not filtered out
    report = analyze(snapshot, Thresholds(expected_topic="orders"), records)
    # the record names 'other' but is applied to orders/1, where it sits (PartitionManager reads no topic)
    assert ("TOPIC_MISMATCH", "orders", 1) in {(f.code, f.topic, f.partition) for f in report.findings}


def test_logs_are_asked_only_for_topics_records_name():
    zk = MemoryZk([node("s", "orders", 0, 5)])
    kafka = MemoryKafka([], LOGS)
    snapshot, _ = read_snapshot(zk, kafka, ["/r"], Selection(), "/storm", 0)
    assert kafka.requested == ["orders"] and set(snapshot.cluster) == {"orders"}


def test_records_parsed_while_reading_equal_a_fresh_parse():
    zk = MemoryZk([node("a", "orders", 0, 5), node("b", "orders", 1, 7, root="/q"), node("a", "other", 1, 3)])
    kafka = MemoryKafka([KafkaCommit("g", "orders", 1, 2, None)], LOGS)
    snapshot, records = read_snapshot(zk, kafka, ["/r", "/q"], Selection(groups=("g",)), "/storm", 0)
    assert records == parse_snapshot(snapshot)
    assert analyze(snapshot, Thresholds(), records) == analyze(snapshot, Thresholds())


def test_missing_selections_become_findings():
    zk = MemoryZk([node("a", "orders", 0, 5)], running=None)
    kafka = MemoryKafka([], LOGS)
    snapshot, _ = read_snapshot(zk, kafka, ["/r", "/nope"], Selection(spouts=("a", "typo"), groups=("g",)), "/storm", 0)
    assert snapshot.notes == (
        "zkRoot /nope does not exist",
        "Storm's root /storm has no storms/ node: STALE_TOPOLOGY not checked (set --storm-root)",
    )
    assert [(m.key.consumer, m.key.zk_root, m.message) for m in snapshot.read_findings] == [
        ("g", None, "group 'g' has no committed offsets"),
        ("typo", "/r", "spout id 'typo' has no partition records under /r"),
        ("a", "/nope", "spout id 'a': zkRoot /nope does not exist"),
        ("typo", "/nope", "spout id 'typo': zkRoot /nope does not exist"),
    ]
    report = analyze(snapshot)
    assert [f.code for f in report.findings if f.code == "CONSUMER_NOT_FOUND"] == ["CONSUMER_NOT_FOUND"] * 4
    assert exit_code(report, "error") == 1


STORM = '{"topologyId":"t-1-1700000000","taskId":1,"threadName":"x"}'
LEGACY_META = "{topic-partition=orders-0, offset=4, numFails=0, thread='t'}"


def test_all_groups_keeps_the_groups_storm_wrote_and_those_named():
    commits = [
        KafkaCommit("storm", "orders", 0, 5, STORM),
        KafkaCommit("old-storm", "orders", 0, 5, LEGACY_META),
        KafkaCommit("app", "orders", 0, 5, None),
        KafkaCommit("named-app", "orders", 1, 5, ""),
    ]
    kafka = MemoryKafka(commits, LOGS)
    snapshot, records = read_snapshot(None, kafka, [], Selection(groups=("named-app",), all_groups=True), "/storm", 0)
    assert sorted({c.group for c in snapshot.commits}) == ["named-app", "old-storm", "storm"]
    assert snapshot.notes == ("--all-groups: 2 of 3 other groups carry Storm commit metadata and are included",)
    assert snapshot.read_findings == ()


def _report(offsets: list[int], incomplete: tuple[str, ...] = ()):
    nodes = [node("s", "orders", p, o) for p, o in enumerate(offsets)]
    logs = {"orders": {p: PartitionLog(5, 10) for p in range(len(offsets))}}
    snapshot, records = read_snapshot(
        MemoryZk(nodes, running=frozenset()), MemoryKafka([], logs), ["/r"], Selection(), "/storm", 0
    )
    from dataclasses import replace

    return analyze(replace(snapshot, incomplete=incomplete), Thresholds(lag_threshold=5), records)


@pytest.mark.parametrize(
    "offsets, incomplete, fail_on, code",
    [
        ([5, 10], (), "error", 0),  # lag 5 >= 5: a warning only
        ([5, 10], (), "warning", 1),
        ([5, 10], (), "info", 1),
        ([6, 10], (), "warning", 0),  # lag 4: healthy
        ([4, 10], (), "error", 1),  # below log start: an error
        ([4, 10], (), "never", 0),
        ([6, 10], ("could not read the log end offset of orders/1",), "error", 3),  # partial beats healthy
        ([4, 10], ("could not read the log end offset of orders/1",), "never", 3),  # and beats findings
    ],
)
def test_exit_code(offsets, incomplete, fail_on, code):
    assert exit_code(_report(offsets, incomplete), fail_on) == code
