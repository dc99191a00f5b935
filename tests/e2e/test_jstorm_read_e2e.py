"""JStorm's Kafka spouts read from a real ZooKeeper: ZkStore.read_jstorm (the paths PartitionConsumer.zkPath writes at
alibaba/jstorm 2.4.0, the nodes the spout never reads, --jstorm's selection, a missing root) and the CLI over it
(`offctl inspect --jstorm-root`, without Kafka)."""

from __future__ import annotations

import pytest

from offctl.adapters.zookeeper import ZkStore
from offctl.core.storm import jstorm

pytestmark = pytest.mark.zookeeper


def _seed(zk, root: str) -> None:
    """Two spouts of topic clicks (client ids jstorm and audit) and one of orders, as commitState writes them, and
    nodes the spout never reads under the first."""
    base = jstorm.spouts_path(root)
    for path, data in [
        ("clicks/jstorm/0", jstorm.record_bytes("clicks-topo", 41, 0, "k1", 9092, "clicks")),
        ("clicks/jstorm/1", jstorm.record_bytes("clicks-topo", 7, 1, "k1", 9092, "clicks")),
        ("clicks/jstorm/partition_2", b'{"offset":3}'),  # storm-kafka's name: never PartitionConsumer.zkPath's
        ("clicks/jstorm/03", b'{"offset":3}'),  # a leading zero: Integer.toString never writes one
        ("clicks/audit/0", jstorm.record_bytes("audit-topo", 12, 0, "k1", 9092, "clicks")),
        ("orders/jstorm/0", b"not json"),
    ]:
        zk.create(f"{base}/{path}", data, makepath=True)


def _read(store: ZkStore, root: str, consumers=()) -> list[tuple]:
    return sorted(
        (n.spout_id, n.folder_topic, n.node_partition, n.path, n.data, n.jstorm)
        for n in store.read_jstorm(root, list(consumers))
    )


def test_reads_every_spout_under_the_root(zk, zk_server, names):
    _seed(zk, names.root)
    base = jstorm.spouts_path(names.root)
    with ZkStore(zk_server.address) as store:
        nodes = _read(store, names.root)
        unread = sorted(path for _, path, _ in store.unread)
    assert [n[:4] for n in nodes] == [
        ("clicks/audit", "clicks", 0, f"{base}/clicks/audit/0"),
        ("clicks/jstorm", "clicks", 0, f"{base}/clicks/jstorm/0"),
        ("clicks/jstorm", "clicks", 1, f"{base}/clicks/jstorm/1"),
        ("orders/jstorm", "orders", 0, f"{base}/orders/jstorm/0"),
    ]
    assert nodes[1][4] == jstorm.record_bytes("clicks-topo", 41, 0, "k1", 9092, "clicks")
    assert all(n[5] for n in nodes)
    assert unread == [f"{base}/clicks/jstorm/03", f"{base}/clicks/jstorm/partition_2"]


def test_reads_only_the_spouts_named(zk, zk_server, names):
    _seed(zk, names.root)
    with ZkStore(zk_server.address) as store:
        assert {n[0] for n in _read(store, names.root, ["clicks/jstorm"])} == {"clicks/jstorm"}
        assert {n[0] for n in _read(store, names.root, ["clicks/audit", "orders/jstorm"])} == {
            "clicks/audit",
            "orders/jstorm",
        }
        assert _read(store, names.root, ["clicks/nobody", "payments/jstorm"]) == []


def test_a_missing_root_is_no_spout(zk, zk_server, names):
    zk.ensure_path(f"{names.root}/kafka/offset")  # the folders down to topic/ are missing
    with ZkStore(zk_server.address) as store:
        assert _read(store, names.root) == []
        assert _read(store, names.root + "-none") == []
        assert store.unread == []


def test_inspect_reads_them_through_the_cli(cli, zk_server, zk, names):
    """Without Kafka: the records, the nodes never read (UNREAD_NODE) and a --jstorm with no node
    (CONSUMER_NOT_FOUND)."""
    _seed(zk, names.root)
    args = ["inspect", "--zk", zk_server.address, "--jstorm-root", names.root, "--output", "json", "--fail-on", "never"]
    doc = cli(*args).json()
    rows = {(p["consumer"], p["partition"]): p for p in doc["partitions"]}
    assert set(rows) == {("clicks/audit", 0), ("clicks/jstorm", 0), ("clicks/jstorm", 1), ("orders/jstorm", 0)}
    assert rows["clicks/jstorm", 0]["committed"] == 41
    unread = [f for f in doc["findings"] if f["code"] == "UNREAD_NODE"]
    assert sorted(f["path"].rsplit("/", 1)[1] for f in unread) == ["03", "partition_2"]
    doc = cli(*args, "--jstorm", "clicks/jstorm", "--jstorm", "payments/jstorm").json()
    assert {p["consumer"] for p in doc["partitions"]} == {"clicks/jstorm"}
    [missing] = [f for f in doc["findings"] if f["code"] == "CONSUMER_NOT_FOUND"]
    assert "payments/jstorm" in missing["message"]


def test_a_node_never_read_is_found_under_its_own_root(cli, zk_server, zk, names):
    """With two --jstorm-root, UNREAD_NODE names the root the node sits under, not the first one given."""
    first, second = names.root + "-a", names.root + "-b"
    zk.create(
        f"{jstorm.node_path(first, 'clicks/jstorm', 0)}",
        jstorm.record_bytes("t", 1, 0, "k", 1, "clicks"),
        makepath=True,
    )
    zk.create(f"{jstorm.spouts_path(second)}/orders/jstorm/01", b'{"offset":3}', makepath=True)
    doc = cli(
        "inspect",
        "--zk",
        zk_server.address,
        "--jstorm-root",
        first,
        "--jstorm-root",
        second,
        "--output",
        "json",
        "--fail-on",
        "never",
    ).json()
    [unread] = [f for f in doc["findings"] if f["code"] == "UNREAD_NODE"]
    assert unread["zk_root"] == second and unread["consumer"] == "orders/jstorm"
