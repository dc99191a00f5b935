"""The ZooKeeper adapter against a real server: layouts, multiRead and its fallback, chroot, ACLs."""

from __future__ import annotations

import pytest
from kazoo.exceptions import UnimplementedError
from kazoo.security import make_digest_acl

from offctl.adapters.zookeeper import BATCH, ZkStore
from offctl.errors import StoreUnavailable
from tests.conftest import storm_record

pytestmark = pytest.mark.zookeeper


def _seed(zk, root: str, n: int) -> None:
    tx = zk.transaction()
    zk.ensure_path(f"{root}/a/orders")
    for p in range(n):
        tx.create(f"{root}/a/partition_{p}", storm_record("orders", p, p + 1))
    tx.create(f"{root}/a/orders/partition_0", storm_record("orders", 0, 9))
    tx.create(f"{root}/a/orders/not-a-partition", b"x")
    tx.create(f"{root}/a/partition_x", b"ignored: not partition_<N>")
    tx.commit()


def _read(store: ZkStore, root: str) -> list[tuple]:
    ids = store.spout_ids(root)
    return [
        (n.spout_id, n.folder_topic, n.node_partition, n.data, n.version, n.mtime_ms)
        for n in store.read_partitions(root, ids)
    ]


def test_reads_both_layouts_in_batches(zk, zk_server, names):
    n = BATCH * 2 + 7  # several multiRead requests, the last one partial
    _seed(zk, names.root, n)
    with ZkStore(zk_server.address) as store:
        nodes = _read(store, names.root)
        assert store.multi_read  # ZooKeeper 3.8 has multiRead
    flat = [x for x in nodes if x[1] is None]
    assert sorted(x[2] for x in flat) == list(range(n))
    assert all(x[3] == storm_record("orders", x[2], x[2] + 1) for x in flat)
    assert [x[:5] for x in nodes if x[1] == "orders"] == [("a", "orders", 0, storm_record("orders", 0, 9), 0)]


def test_single_reads_give_the_same_nodes(zk, zk_server, names):
    """multiRead's own decoder (offctl's) and kazoo's getData agree on data, version and mtime, empty data too."""
    _seed(zk, names.root, 40)
    zk.create(f"{names.root}/b/partition_0", b"", makepath=True)
    zk.set(f"{names.root}/a/partition_3", storm_record("orders", 3, 7))  # version 1, a later mtime
    with ZkStore(zk_server.address) as batched, ZkStore(zk_server.address, multi_read=False) as single:
        nodes = _read(batched, names.root)
        assert nodes == _read(single, names.root)
    assert ("b", None, 0, b"", 0) in [x[:5] for x in nodes]
    assert [x[4] for x in nodes if x[:3] == ("a", None, 3)] == [1]
    assert all(x[5] > 1_600_000_000_000 for x in nodes)  # epoch milliseconds


def test_falls_back_when_the_server_has_no_multiread(zk, zk_server, names, monkeypatch):
    """ZooKeeper before 3.6 answers UNIMPLEMENTED to multiRead; offctl then reads node by node."""
    _seed(zk, names.root, 10)
    with ZkStore(zk_server.address) as store:

        def unimplemented(*batches):
            raise UnimplementedError()
            yield  # a generator, like the real one

        monkeypatch.setattr(store, "_multi_read_batches", unimplemented)
        assert len(_read(store, names.root)) == 11
        assert store.multi_read is False


def test_batched_and_single_listings_agree(zk, zk_server, names):
    """multiRead's getChildren results (offctl's decoder) are kazoo's get_children: names not ASCII, a node
    without children, a missing node left out, a path written with a trailing or doubled slash."""
    _seed(zk, names.root, 3)
    zk.create(f"{names.root}/spöut/\u00e9t\u00e9/partition_1", b"", makepath=True)
    paths = [
        names.root,
        f"{names.root}/a",
        f"{names.root}/a/orders/not-a-partition",
        f"{names.root}/gone",
        f"{names.root}/spöut/",
        f"{names.root}//spöut/\u00e9t\u00e9",
    ]
    with ZkStore(zk_server.address) as batched, ZkStore(zk_server.address, multi_read=False) as single:
        listed = batched.children(paths)
        assert listed == single.children(paths)
        assert batched.multi_read
    assert sorted(listed) == sorted(p for p in paths if not p.endswith("gone"))
    assert listed[f"{names.root}/a/orders/not-a-partition"] == []
    assert listed[f"{names.root}/spöut/"] == ["\u00e9t\u00e9"]


def test_nodes_deleted_after_listing_are_skipped(zk, zk_server, names):
    _seed(zk, names.root, 3)
    paths = [f"{names.root}/a/partition_0", f"{names.root}/a/gone", f"{names.root}/a/partition_2"]
    for multi in (True, False):
        with ZkStore(zk_server.address, multi_read=multi) as store:
            assert [p for p, *_ in store._read_data(paths)] == [paths[0], paths[2]]


def test_chroot_in_the_connect_string(zk, zk_server, names):
    _seed(zk, f"{names.root}/inner", 5)
    with ZkStore(f"{zk_server.address}{names.root}") as store:
        nodes = _read(store, "/inner")
    assert len(nodes) == 6


def test_acl_denied_read_is_store_unavailable_and_auth_fixes_it(zk, zk_server, names):
    acl = make_digest_acl("storm", "s3cret", all=True)
    zk.ensure_path(f"{names.root}/locked")
    zk.create(f"{names.root}/locked/partition_0", storm_record("orders", 0, 1), acl=[acl])
    for multi in (True, False):
        with ZkStore(zk_server.address, multi_read=multi) as store:
            with pytest.raises(StoreUnavailable, match="not allowed to read .*--zk-auth"):
                _read(store, names.root)
    with ZkStore(zk_server.address, auth="storm:s3cret") as store:
        assert len(_read(store, names.root)) == 1


def test_running_topologies(zk, zk_server, names):
    zk.create(f"{names.root}/storms/wc-1-1700000000", b"", makepath=True)
    with ZkStore(zk_server.address) as store:
        assert store.running_topologies(names.root) == frozenset({"wc-1-1700000000"})
        assert store.running_topologies(names.root + "/nope") is None


def test_unreachable_server_is_store_unavailable():
    with pytest.raises(StoreUnavailable, match=r"ZooKeeper at 127\.0\.0\.1:1 did not answer within 0\.5s"):
        with ZkStore("127.0.0.1:1", timeout=0.5):
            pass


def test_versioned_write_is_all_or_nothing(zk, zk_server, names):
    from offctl.errors import WriteConflict

    paths = [f"{names.root}/s/partition_{p}" for p in range(3)]
    for p, path in enumerate(paths):
        zk.create(path, b"v0-%d" % p, makepath=True)
    with ZkStore(zk_server.address) as store:
        store.write_versioned([(path, b"v1", 0) for path in paths])
        assert store.read_data(paths) == {path: b"v1" for path in paths}
        zk.set(paths[2], b"someone else")  # version 2 now
        with pytest.raises(WriteConflict, match=f"{paths[2]} changed since it was read"):
            store.write_versioned([(path, b"v2", 1) for path in paths])
        assert store.read_data(paths) == {paths[0]: b"v1", paths[1]: b"v1", paths[2]: b"someone else"}
        zk.delete(paths[1])
        with pytest.raises(WriteConflict, match=f"{paths[1]} was deleted"):
            store.write_versioned([(paths[0], b"v3", 1), (paths[1], b"v3", 1)])
        assert store.read_data(paths) == {paths[0]: b"v1", paths[2]: b"someone else"}


def test_versioned_write_creates_a_node_in_the_same_multi_op_and_fails_if_it_appeared(zk, zk_server, names):
    """plan.CREATE (-1): a create in the multi-op, persistent with an open ACL as ZkState.writeBytes (Curator's
    default); a node that appeared since it was read fails the whole request."""
    from kazoo.security import OPEN_ACL_UNSAFE

    from offctl.errors import WriteConflict

    kept, new = f"{names.root}/s/partition_0", f"{names.root}/s/partition_1"
    zk.create(kept, b"v0", makepath=True)
    with ZkStore(zk_server.address) as store:
        store.write_versioned([(kept, b"v1", 0), (new, b"created", -1)])
        assert store.read_data([kept, new]) == {kept: b"v1", new: b"created"}
        assert (
            zk.get(new)[1].version == 0
            and zk.get(new)[1].ephemeralOwner == 0
            and zk.get_acls(new)[0] == OPEN_ACL_UNSAFE
        )
        with pytest.raises(WriteConflict, match=f"nothing was written: {new} was created since it was read"):
            store.write_versioned([(kept, b"v2", 1), (new, b"again", -1)])
        gone = f"{names.root}/gone/partition_0"
        with pytest.raises(WriteConflict, match=f"{gone}'s parent no longer exists"):
            store.write_versioned([(kept, b"v2", 1), (gone, b"x", -1)])
        assert store.read_data([kept, new]) == {kept: b"v1", new: b"created"}


def test_versioned_write_too_large_for_one_request_writes_nothing(zk, zk_server, names):
    from offctl.errors import WriteConflict

    path = f"{names.root}/big/partition_0"
    zk.create(path, b"old", makepath=True)
    with ZkStore(zk_server.address) as store:
        with pytest.raises(WriteConflict, match="--partitions"):
            store.write_versioned([(path, b"x" * 500_000, 0), (path, b"y" * 500_000, 0)])
    assert zk.get(path)[0] == b"old"
