"""The sandbox's JStorm Kafka spouts (offctl.faces.sandbox.jstorm_fleet), judged on plain data: the nodes it seeds,
read as ZkStore.read_jstorm reads them, against the logs the seed gives the topics (TOPICS, DELETED), show what
`offctl sandbox seed` says each shows. tests/e2e/test_sandbox.py reads them from the real sandbox."""

from __future__ import annotations

from collections import defaultdict

from offctl.core.records.jstorm import node_partition
from offctl.core.records.model import JSTORM, PartitionLog, Snapshot, ZkNode
from offctl.core.rules.analyze import analyze
from offctl.core.storm import jstorm
from offctl.faces import sandbox
from offctl.settings.sandbox import JSTORM_ROOT

BROKER = "127.0.0.1:9092"


def seeded() -> tuple[list[ZkNode], list[str], list[str]]:
    """The fleet's nodes as read (each <root>/kafka/offset/topic/<topic>/<client>/<N>), the paths the spout never
    reads (a name that is not a partition number), and the seed's lines."""
    nodes, shows = sandbox.jstorm_fleet(BROKER)
    base = jstorm.spouts_path(JSTORM_ROOT) + "/"
    read, unread = [], []
    for path, data in sorted(nodes.items()):
        assert path.startswith(base), path
        topic, client, name = path[len(base) :].split("/")
        partition = node_partition(name)
        if partition is None:
            unread.append(path)
            continue
        read.append(
            ZkNode(JSTORM_ROOT, jstorm.consumer_id(topic, client), path, partition, topic, data, 1, 0, jstorm=True)
        )
    return read, unread, shows


def cluster() -> dict:
    """The topics as the seed fills them: TOPICS' messages, DELETED's records gone below the log start."""
    return {
        topic: {p: PartitionLog(sandbox.DELETED.get(topic, 0), n, BROKER) for p in range(parts)}
        for topic, (parts, n) in sandbox.TOPICS.items()
    }


def test_the_sandboxs_jstorm_spouts_show_what_the_seed_says():
    nodes, unread, shows = seeded()
    report = analyze(Snapshot(0, tuple(nodes), cluster=cluster(), running=frozenset()))
    codes: dict[str, set[str]] = defaultdict(set)
    for f in report.findings:
        assert f.key.store == JSTORM and f.key.zk_root == JSTORM_ROOT
        codes[f.key.consumer].add(f.code)
    assert dict(codes) == {
        "events/jstorm": {"OFFSET_BELOW_LOG_START"},
        "clicks/jstorm": {"OFFSET_ABOVE_LOG_END", "MALFORMED_RECORD"},
        "payments/jstorm": {"ID_COLLISION"},
        "archive/jstorm": {"TOPIC_MISMATCH"},
    }  # orders/jstorm: healthy
    rows = {(r.record.key.consumer, r.record.partition): r for r in report.rows}
    healthy = [rows["orders/jstorm", p] for p in range(4)]
    assert [(r.record.committed, r.resumes.at, r.resumes.kind.value, r.lag) for r in healthy] == [
        (18, 19, "stored+1", 1),
        (19, 20, "stored+1", 0),
        (17, 18, "stored+1", 2),
        (19, 20, "stored+1", 0),
    ]
    below, above = rows["events/jstorm", 0], rows["clicks/jstorm", 1]
    assert (below.resumes.kind.value, below.lost_to_retention) == ("fetch-fails", 14)  # fetches 11, log from 25
    assert (above.resumes.kind.value, above.resumes.at) == ("waits-until-log-end-reaches", 46)
    malformed = rows["clicks/jstorm", 2]
    assert malformed.record.malformed and (malformed.resumes.at, malformed.lag) == (31, 0)  # the log end + 1
    # the node named 01: ZkStore.read_jstorm leaves it to UNREAD_NODE (tests/e2e/test_sandbox.py reads it)
    assert unread == [f"{jstorm.spouts_path(JSTORM_ROOT)}/clicks/jstorm/01"]
    said = " ".join(shows)
    assert all(code in said for found in codes.values() for code in found) and "UNREAD_NODE" in said
    assert all(f"jstorm {consumer} " in said for consumer in {r.record.key.consumer for r in report.rows})


def test_the_sandboxs_jstorm_records_are_the_spouts_bytes():
    """Every record the seed writes but the two broken on purpose is commitState's, byte for byte."""
    nodes, _, _ = seeded()
    for n in nodes:
        if n.spout_id == "clicks/jstorm" and n.node_partition == 2:
            assert b'"offset":"12"' in n.data  # the string offset the (Long) cast throws on
            continue
        record = analyze(Snapshot(0, (n,))).rows[0].record
        host, port = BROKER.rsplit(":", 1)
        topic = "archive-2024" if n.spout_id == "archive/jstorm" else n.folder_topic
        assert n.data == jstorm.record_bytes(
            record.topology_name, record.committed, n.node_partition, host, int(port), topic
        )
