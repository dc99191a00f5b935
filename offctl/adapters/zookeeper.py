"""ZooKeeper adapter (kazoo): storm-kafka partition nodes and Storm's running topologies.

Node data is read with ZooKeeper's multiRead (3.6+): one request carries up to BATCH getData operations,
and several such requests are in flight at once. A server without multiRead (3.4, 3.5) answers
UNIMPLEMENTED and the reads fall back to kazoo's async getData, pipelined WINDOW requests deep. Either way
a root with thousands of partition nodes costs a few round trips of latency, not thousands.
"""

from __future__ import annotations

import logging
import struct
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace

from kazoo.client import KazooClient
from kazoo.exceptions import (
    EXCEPTIONS,
    AuthFailedError,
    BadVersionError,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    RolledBackError,
    UnimplementedError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import (
    GetChildren,
    GetData,
    int_struct,
    multiheader_struct,
    stat_struct,
)

from offctl.core.records.frozen import builder
from offctl.core.records.jstorm import node_partition as jstorm_partition
from offctl.core.records.model import STORM_KAFKA, ZkNode
from offctl.core.records.trident import (
    INIT_TXID,
    coordinator_txid,
    newest_txid,
    partition_node,
    stored_from,
    trident_partition,
)
from offctl.core.storm import brokers, jstorm
from offctl.errors import StoreUnavailable, WriteConflict

WINDOW = 2000  # single requests in flight
# A multi request must fit ZooKeeper's jute.maxbuffer (1 MiB by default), with room for the framing.
MAX_MULTI_BYTES = 900 * 1024
BATCH = 256  # getData operations per multiRead request
# Levels of folders below a listed spout id that are searched for partition nodes: ids may contain '/'
# (committedPath is zkRoot + "/" + id + "/" + partition id), and a wildcard spout adds a topic folder.
MAX_DEPTH = 4

# A Stat is czxid, mzxid, ctime, mtime, version, ... (kazoo's stat_struct): mtime and version only.
_STAT_MTIME_VERSION = struct.Struct("!24xqi")
_OP_AND_PATH = struct.Struct("!iBii")  # a MultiHeader (type, done, err), then the path's length
_END = multiheader_struct.pack(-1, True, -1)

_node = builder(ZkNode)  # ZkNode(...), at a quarter of the cost (one per partition node read)

_log = logging.getLogger("offctl.adapters.zookeeper")
_log.addHandler(logging.NullHandler())
_log.propagate = False  # kazoo's reconnect chatter must not reach stderr through the root logger


class _MultiRead(tuple):
    """ZooKeeper's multiRead request (opcode 22) of getData operations (of getChildren ones: _MultiChildren).

    kazoo sends any request object with `type`, `serialize()` and `deserialize()` through its connection,
    as it does its own Transaction. Unlike a multi, each operation succeeds or fails on its own: a result
    is (data, version, mtime), a list of children, or the exception of that one operation (NoNodeError for a
    deleted node). The format is ZooKeeper's MultiOperationRecord and MultiResponse (3.6+): each operation and
    each result behind a MultiHeader (type, done, err), the list closed by a header with done set.

    A response of BATCH nodes is decoded on kazoo's reader thread while the caller parses the last one, so it
    takes of each stat only what offctl keeps, with one unpack per field group, not kazoo's namedtuples; the
    request is packed the same way (kazoo's GetData object and its serialize cost more than the read).
    """

    type = 22
    op = GetData.type

    def serialize(self) -> bytes:
        parts = []
        for path in self:
            raw = path.encode("utf-8")
            parts += (_OP_AND_PATH.pack(self.op, False, -1, len(raw)), raw, b"\x00")  # the path, watch false
        parts.append(_END)
        return b"".join(parts)

    @classmethod
    def deserialize(cls, buffer, offset):
        results = []
        append = results.append
        header, length, stat = multiheader_struct, int_struct, _STAT_MTIME_VERSION
        while True:
            kind, done, _ = header.unpack_from(buffer, offset)
            offset += header.size
            if done:
                return results
            (size,) = length.unpack_from(buffer, offset)  # every result type starts with an int
            offset += 4
            if kind == GetData.type:
                data = buffer[offset : offset + size] if size > 0 else b""
                offset += max(size, 0)
                mtime, version = stat.unpack_from(buffer, offset)
                append((data, version, mtime))
                offset += stat_struct.size
            elif kind == GetChildren.type:
                children = []
                for _ in range(max(size, 0)):
                    (n,) = length.unpack_from(buffer, offset)
                    children.append(buffer[offset + 4 : offset + 4 + n].decode("utf-8") if n >= 0 else None)
                    offset += 4 + max(n, 0)
                append(children)
            elif kind == -1:
                append(EXCEPTIONS.get(size, KazooException)())  # an error result: its code
            else:
                raise ValueError(f"unexpected multiRead result type {kind}")


class _MultiChildren(_MultiRead):
    """A multiRead of getChildren operations: each result the list of a node's children."""

    op = GetChildren.type


def join(parent: str, child: str) -> str:
    return f"{parent.rstrip('/')}/{child}"


class ZkStore:
    """A connected, read-mostly view of one ZooKeeper ensemble."""

    def __init__(self, hosts: str, *, auth: str | None = None, timeout: float = 10.0, multi_read: bool = True) -> None:
        self.hosts = hosts
        self.timeout = timeout
        self.multi_read = multi_read  # turned off for good when the server answers UNIMPLEMENTED
        self.unread: list[tuple[str, str, str]] = []  # (spout id, path, why): nodes storm-kafka never reads
        self.trident_notes: list[str] = []  # what read_trident left out, and why
        auth_data = [("digest", auth)] if auth else None
        self.client = KazooClient(
            hosts=hosts,
            timeout=max(timeout, 4.0),
            auth_data=auth_data,
            logger=_log,
            connection_retry={"max_tries": 1, "max_delay": 1},
        )

    def __enter__(self) -> ZkStore:
        try:
            self.client.start(timeout=self.timeout)
        except KazooTimeoutError:
            self.close()
            raise StoreUnavailable(f"ZooKeeper at {self.hosts} did not answer within {self.timeout:g}s") from None
        except (AuthFailedError, KazooException, ValueError, OSError) as exc:
            self.close()
            raise StoreUnavailable(f"ZooKeeper at {self.hosts}: {exc or type(exc).__name__}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except Exception:  # noqa: BLE001 - closing a broken client must never mask the real error
            pass

    # --- pipelined reads ------------------------------------------------------------------------

    def _pipeline(
        self, paths: Iterable, start: Callable, window: int = WINDOW, name: Callable[[object], str] = str
    ) -> Iterator[tuple[object, object]]:
        """Yield (path, result) of start(path) in order, with at most `window` requests in flight.

        Nodes deleted between listing and reading are skipped: they are gone, not an error. `name` says in
        messages what a request read."""
        pending: deque = deque()
        for path in paths:
            pending.append((path, start(path)))
            if len(pending) >= window:
                yield from self._settle(*pending.popleft(), name)
        while pending:
            yield from self._settle(*pending.popleft(), name)

    def _settle(self, path, ar, name: Callable[[object], str] = str) -> Iterator[tuple[object, object]]:
        try:
            yield path, ar.get(timeout=self.timeout)
        except NoNodeError:
            return  # deleted between listing and reading: it is gone, not an error
        except UnimplementedError:
            raise  # the caller falls back from multiRead
        except (KazooException, KazooTimeoutError) as exc:
            raise self._error(name(path), exc) from None

    def _error(self, path: str, exc: Exception) -> StoreUnavailable:
        if isinstance(exc, NoAuthError):
            return StoreUnavailable(
                f"ZooKeeper at {self.hosts}: not allowed to read {path} (ACL; pass digest credentials with --zk-auth)"
            )
        if isinstance(exc, KazooTimeoutError):
            return StoreUnavailable(
                f"ZooKeeper at {self.hosts} did not answer a read of {path} within {self.timeout:g}s"
            )
        return StoreUnavailable(f"ZooKeeper at {self.hosts}: lost the connection reading {path} ({type(exc).__name__})")

    def _read_data(self, paths: list[str]) -> Iterator[tuple[str, bytes, int, int]]:
        """(path, data, version, mtime) of every existing node, in order: multiRead batches, or single gets."""
        if self.multi_read and paths:
            batches = [paths[i : i + BATCH] for i in range(0, len(paths), BATCH)]
            try:
                for batch, results in self._multi_read_batches(batches):
                    for path, result in zip(batch, results, strict=True):
                        if isinstance(result, NoNodeError):
                            continue
                        if isinstance(result, Exception):
                            raise self._error(path, result)
                        yield path, *result
                return
            except UnimplementedError:
                # Only the first batch can say so, before anything was yielded.
                self.multi_read = False  # ZooKeeper before 3.6: fall back to single reads
        for path, (data, stat) in self._pipeline(paths, self.client.get_async):
            yield path, data or b"", stat.version, stat.mtime

    def _multi_read_batches(
        self,
        batches: list[list[str]],
        request: type[_MultiRead] = _MultiRead,
        server_path: Callable[[str], str] | None = None,
    ) -> Iterator[tuple[list[str], list]]:
        chroot = self.client.chroot or ""
        server_path = server_path or (lambda p: chroot + p)

        def send(index: int):
            ar = self.client.handler.async_result()
            self.client._call(request(map(server_path, batches[index])), ar)
            return ar

        def what(index: int) -> str:
            batch = batches[index]
            return batch[0] + (f" and {len(batch) - 1} more nodes" if len(batch) > 1 else "")

        window = max(1, WINDOW // BATCH)
        for index, (_, results) in enumerate(self._pipeline(range(len(batches)), send, window=window, name=what)):
            yield batches[index], results

    def children(self, paths: Sequence[str]) -> dict[str, list[str]]:
        """The children of every existing node of `paths`: in multiRead batches (one request lists BATCH nodes),
        or one request each."""
        if self.multi_read and paths:
            listed: dict[str, list[str]] = {}
            batches = [list(paths[i : i + BATCH]) for i in range(0, len(paths), BATCH)]
            try:
                # each path as kazoo's get_children sends it: normalized, below the chroot
                for batch, results in self._multi_read_batches(
                    batches, _MultiChildren, lambda p: _prefix_root(self.client.chroot, p)
                ):
                    for path, result in zip(batch, results, strict=True):
                        if isinstance(result, Exception) and not isinstance(result, NoNodeError):
                            raise self._error(path, result)
                        if not isinstance(result, NoNodeError):
                            listed[path] = result
                return listed
            except UnimplementedError:
                self.multi_read = False  # ZooKeeper before 3.6: fall back to single reads
        return dict(self._pipeline(paths, self.client.get_children_async))  # type: ignore[arg-type]

    # --- what offctl asks --------------------------------------------------------------------------

    def spout_ids(self, root: str) -> list[str] | None:
        """Children of a zkRoot, or None when the root does not exist."""
        listed = self.children([root])
        return sorted(listed[root]) if root in listed else None

    def read_partitions(self, root: str, spout_ids: Sequence[str]) -> Iterator[ZkNode]:
        """Every partition node below the given spout ids, as they arrive.

        A node <root>/<id>/<f1>/.../<fk>/partition_N is returned as spout id "<id>/<f1>/.../<fk-1>" with
        folder topic <fk> (the wildcard reading); the core decides whether <fk> is a topic or part of the
        id (consumer.resolve_layouts)."""
        targets: dict[str, tuple[str, str | None, int]] = {}  # path -> (spout id, folder topic, partition)
        level = {join(root, sid): (sid, ()) for sid in spout_ids}
        for depth in range(MAX_DEPTH + 1):
            below: dict[str, tuple[str, tuple[str, ...]]] = {}
            for path, kids in self.children(list(level)).items():
                sid, folders = level[path]
                if not kids and folders:
                    self.unread.append(
                        (
                            sid,
                            path,
                            "not a partition node storm-kafka reads: Partition.getId() "
                            "names them partition_N, N a plain int, and the spout ignores "
                            "this one",
                        )
                    )
                spout, topic = "/".join((sid, *folders[:-1])), folders[-1] if folders else None
                for kid in kids:
                    partition = partition_node(kid)
                    if partition is not None:
                        targets[join(path, kid)] = (spout, topic, partition)
                    elif depth < MAX_DEPTH:
                        below[join(path, kid)] = (sid, (*folders, kid))
                    else:
                        self.unread.append(
                            (
                                sid,
                                join(path, kid),
                                f"more than {MAX_DEPTH} levels below the spout id: offctl does not read it",
                            )
                        )
            if not below:
                break
            level = below
        for path, data, version, mtime in self._read_data(list(targets)):
            sid, topic, partition = targets[path]
            yield _node(root, sid, path, partition, topic, data, version, mtime)

    def read_trident(self, root: str) -> Iterator[ZkNode]:
        """The state each Trident Kafka spout resumes from: for every txStateId under Storm's transactional
        root, <root>/<txStateId>/user/<partition id>/<txid>, the node of the highest txid of each partition but the
        txid its coordinator emits first (<root>/<txStateId>/coordinator/currtx: trident.newest_txid says why;
        RotatingTransactionalState.getLastState; TransactionalState.newUserState and newCoordinatorState).
        Partition ids are storm-kafka's partition_N or <topic>/partition_N (Partition.getId) and storm-kafka-client's
        <topic>@N (KafkaTridentSpoutTopicPartition.getId). A txStateId with none of them is noted in
        `trident_notes` and left out."""
        listed = self.children([root])
        if root not in listed:
            self.trident_notes.append(f"--trident-root {root} does not exist")
            return
        users = {join(join(root, sid), "user"): sid for sid in sorted(listed[root])}
        parts = self._trident_partitions(users)
        found = {sid for sid, _, _, _ in parts.values()}
        for sid in sorted(set(users.values()) - found):
            self.trident_notes.append(
                f"{join(root, sid)} holds no Kafka spout's state (no partition_N or <topic>@N under user/): left out"
            )
        currtx = {join(join(join(root, sid), "coordinator"), "currtx"): sid for sid in found}
        current = {currtx[path]: coordinator_txid(data) for path, data, _, _ in self._read_data(sorted(currtx))}
        newest, replays = self._txids(parts, current)
        replayed = {
            path: data
            for path, data, _, _ in self._read_data(
                sorted({join(folder, str(txid)) for folder, txid in replays.items()} - set(newest))
            )
        }
        for path, data, version, mtime in self._read_data(list(newest)):
            folder, txid, count, ahead = newest[path]
            sid, partition, topic, library = parts[folder]
            replay = ahead[0] if ahead else None
            # the replayed batch is the node read here when it is the only state or past currtx and the highest
            replay_data = (
                None
                if replay is None
                else data
                if path == join(folder, str(replay))
                else replayed.get(join(folder, str(replay)))
            )
            yield ZkNode(
                zk_root=root,
                spout_id=sid,
                path=path,
                node_partition=partition,
                folder_topic=topic,
                data=data,
                version=version,
                mtime_ms=mtime,
                trident=library,
                txid=txid,
                txids=count,
                replay_txid=replay,
                replay_data=replay_data,
                ahead=ahead,
            )

    def _trident_partitions(self, users: Mapping[str, str]) -> dict[str, tuple[str, int, str | None, str]]:
        """The partition dirs of read_trident, from `users` (each txStateId's user/ folder -> the txStateId): dir ->
        (txStateId, partition, topic, library). <topic>@N and partition_N sit in user/; storm-kafka's
        <topic>/partition_N (a wildcard topic) one folder below."""
        parts: dict[str, tuple[str, int, str | None, str]] = {}  # dir -> (txStateId, partition, topic, library)
        folders: dict[str, tuple[str, str]] = {}  # <topic>/ folder -> (txStateId, topic)
        for path, kids in self.children(list(users)).items():
            for kid in kids:
                found = trident_partition(kid)
                if found:
                    parts[join(path, kid)] = (users[path], *found)
                else:
                    folders[join(path, kid)] = (users[path], kid)
        for path, kids in self.children(list(folders)).items():
            for kid in kids:
                partition = partition_node(kid)
                if partition is not None:  # <topic>/partition_N: a wildcard topic
                    sid, topic = folders[path]
                    parts[join(path, kid)] = (sid, partition, topic, STORM_KAFKA)
        return parts

    def _txids(
        self, parts: Mapping[str, tuple[str, int, str | None, str]], current: Mapping[str, int]
    ) -> tuple[dict[str, tuple[str, int | None, int, tuple[int, ...]]], dict[str, int]]:
        """For each partition dir of read_trident: the node of the txid an opaque spout resumes from (txid node ->
        (partition dir, txid, txids present, the txids stored at or past currtx): trident.newest_txid), and the txid a
        transactional one replays (partition dir -> txid: trident.stored_from), by its txStateId's coordinator's
        currtx. A dir whose only txids are at or past currtx gives the replayed batch's node, with txid None."""
        newest: dict[str, tuple[str, int | None, int, tuple[int, ...]]] = {}
        replays: dict[str, int] = {}
        for path, kids in self.children(list(parts)).items():
            at = current.get(parts[path][0], INIT_TXID)
            ahead = stored_from(kids, at)
            found = newest_txid(kids, at)
            if found:
                newest[join(path, str(found[0]))] = (path, *found, ahead)
            elif ahead:
                newest[join(path, str(ahead[0]))] = (path, None, len(ahead), ahead)
            if ahead:
                replays[path] = ahead[0]
        return newest, replays

    def read_jstorm(self, root: str, consumers: Sequence[str]) -> Iterator[ZkNode]:
        """Every JStorm Kafka spout's partition node under JStorm's root, as they arrive:
        <root>/kafka/offset/topic/<topic>/<client id>/<N> (offctl.core.storm.jstorm rule 1), as spout
        "<topic>/<client id>" with folder topic <topic>; only the `consumers` named, when any. A node not named by
        a partition alone goes to `unread`; a missing root or folder is no spout."""
        base = jstorm.spouts_path(root)
        topics = self.children([base]).get(base, [])
        named = {jstorm.split_id(c) for c in consumers} - {None}
        wanted_topics = sorted({t for t, _ in named} & set(topics)) if consumers else sorted(topics)
        clients = self.children([join(base, t) for t in wanted_topics])
        folders = {
            join(path, client): jstorm.consumer_id(path.rsplit("/", 1)[1], client)
            for path, kids in clients.items()
            for client in sorted(kids)
            if not consumers or (path.rsplit("/", 1)[1], client) in named
        }
        targets: dict[str, tuple[str, str, int]] = {}
        for path, kids in self.children(list(folders)).items():
            consumer = folders[path]
            for kid in kids:
                partition = jstorm_partition(kid)
                if partition is None:
                    self.unread.append(
                        (
                            consumer,
                            join(path, kid),
                            "not a partition node JStorm's spout reads: PartitionConsumer.zkPath "
                            "names them by the partition number alone, and the spout ignores this one",
                        )
                    )
                else:
                    targets[join(path, kid)] = (consumer, consumer.split("/", 1)[0], partition)
        for path, data, version, mtime in self._read_data(sorted(targets)):
            consumer, topic, partition = targets[path]
            yield ZkNode(root, consumer, path, partition, topic, data, version, mtime, jstorm=True)

    def read_broker_registry(self, brokers_root: str, topic: str, wildcard: bool) -> brokers.Registry:
        """Kafka's broker registry under `brokers_root` (-r) for `topic` (-t; with `wildcard` (-w) a Java regex
        over the children of <root>topics), read as storm-kafka-monitor reads it (KafkaOffsetLagUtil@v1.2.4
        306-349): partitions 0..n-1 by the count of <root>topics/<t>/partitions, their leaders from
        .../partitions/<i>/state, their host:port from <root>ids/<leader>; and every registered broker. A missing
        node is a `missing` topic or a partition's `why`, never an error: brokers.resolve says what each Storm
        reader does then. Four batched round trips; a store that cannot be read raises StoreUnavailable; a root
        ZooKeeper would refuse is a UsageError, a pattern re cannot read as Java does a TopicPatternError."""
        root = brokers.brokers_root(brokers_root)
        topics_node, ids_node = brokers.topics_path(root), brokers.ids_path(root)
        listed = self.children([topics_node, ids_node] if wildcard else [ids_node])
        if wildcard:
            names = brokers.matching_topics(topic, listed.get(topics_node, ()))
        else:
            names = (topic,)
        wanted = [
            path
            for path in map(lambda t: brokers.partitions_path(root, t), names)
            if brokers.path_problem(path) is None
        ]
        partitions = self.children(wanted)
        states = self.read_data(
            [
                brokers.state_path(root, t, i)
                for t in names
                for i in range(len(partitions.get(brokers.partitions_path(root, t), ())))
            ]
        )
        registered = listed.get(ids_node)
        ids = dict.fromkeys(brokers.broker_path(root, b) for b in (registered or ()))
        ids.update(dict.fromkeys(brokers.broker_path(root, b) for b in sorted(brokers.leader_ids(states))))
        return brokers.resolve(
            root,
            names,
            partitions,
            states,
            self.read_data(list(ids)),
            registered,
            topics_listed=not wildcard or topics_node in listed,
        )

    def running_topologies(self, storm_root: str) -> frozenset[str] | None:
        """Storm ids under `<storm root>/storms`, or None when that node does not exist."""
        return self._names_under(join(storm_root, "storms"))

    def running_jstorm(self, root: str) -> frozenset[str] | None:
        """JStorm's running topology ids under `<root>/topology` (offctl.core.storm.jstorm rule 8), or None when that
        node does not exist."""
        return self._names_under(jstorm.topologies_path(root))

    def _names_under(self, path: str) -> frozenset[str] | None:
        """The children of `path`, or None when it does not exist."""
        listed = self.children([path])
        return frozenset(listed[path]) if path in listed else None

    # --- writes --------------------------------------------------------------------------------------

    def read_data(self, paths: Sequence[str]) -> dict[str, bytes]:
        """Current data of each existing node (for verification after a write)."""
        return {path: data for path, data, _, _ in self._read_data(list(paths))}

    def read_nodes(self, nodes: Sequence[ZkNode]) -> list[ZkNode]:
        """Each of `nodes` that still exists, as it is now (its data, version and mtime): the Trident batches a
        reset rewrites and a restore puts back, which read_trident does not give as nodes of their own."""
        by_path = {n.path: n for n in nodes}
        return [
            replace(by_path[path], data=data, version=version, mtime_ms=mtime)
            for path, data, version, mtime in self._read_data(list(by_path))
        ]

    def write_versioned(self, changes: Sequence[tuple[str, bytes | None, int]]) -> None:
        """Set every (path, data, version) in one multi-op: all of them, or none if any node's version moved.
        Data None deletes the node at that version; version -1 (plan.CREATE) creates it, and fails if it exists.

        Raises WriteConflict naming the nodes that changed since they were read, or when the outcome is
        unknown because the connection broke during the request.
        """
        size = sum(len(p) + len(d or b"") + 32 for p, d, _ in changes)
        if size > MAX_MULTI_BYTES:
            raise WriteConflict(
                f"{len(changes)} nodes ({size:,} bytes) do not fit one atomic ZooKeeper request "
                f"(about {MAX_MULTI_BYTES:,} bytes); nothing was written. Narrow the reset with "
                f"--partitions"
            )
        transaction = self._transaction(changes)
        try:
            results = transaction.commit_async().get(timeout=self.timeout)
        except NoAuthError:
            raise WriteConflict(
                f"ZooKeeper at {self.hosts}: not allowed to write {changes[0][0]} (ACL; pass "
                f"credentials with --zk-auth); nothing was written"
            ) from None
        except (KazooException, KazooTimeoutError) as exc:
            raise WriteConflict(
                f"ZooKeeper at {self.hosts}: the connection broke during the write "
                f"({type(exc).__name__}); it may or may not have been applied"
            ) from None
        failed = [
            (path, version, r)
            for (path, _, version), r in zip(changes, results, strict=True)
            if isinstance(r, Exception) and not isinstance(r, RolledBackError)
        ]
        if not failed:
            return
        why = [_refused(path, version, error) for path, version, error in failed]
        shown = "; ".join(why[:10]) + (f"; and {len(why) - 10} more nodes" if len(why) > 10 else "")
        raise WriteConflict("nothing was written: " + shown)

    def _transaction(self, changes: Sequence[tuple[str, bytes | None, int]]):
        """write_versioned's multi-op: a delete for data None, a create for version -1, else a set at the version."""
        transaction = self.client.transaction()
        for path, data, version in changes:
            if data is None:
                transaction.delete(path, version)
            elif version == -1:
                transaction.create(path, data)
            else:
                transaction.set_data(path, data, version)
        return transaction


def _refused(path: str, version: int, error: Exception) -> str:
    """Why ZooKeeper refused one node of a multi-op, in the operator's words."""
    if isinstance(error, BadVersionError):
        return f"{path} changed since it was read (version {version} then)"
    if isinstance(error, NoNodeError):
        return f"{path}'s parent no longer exists" if version == -1 else f"{path} was deleted since it was read"
    if isinstance(error, NodeExistsError):
        return f"{path} was created since it was read"
    if isinstance(error, NoAuthError):
        return f"{path} may not be written with these credentials (ACL; --zk-auth)"
    return f"{path}: {type(error).__name__}"
