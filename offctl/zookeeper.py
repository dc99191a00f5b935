"""ZooKeeper adapter (kazoo): storm-kafka partition nodes and Storm's running topologies.

Reads are pipelined through kazoo's async API: up to WINDOW requests are in flight at once, so a root
with thousands of partition nodes costs a few round trips of latency, not thousands.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NoNodeError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError

from offctl.errors import StoreUnavailable
from offctl.model import ZkNode

WINDOW = 2000
_PARTITION = re.compile(r"partition_(\d{1,9})")

_log = logging.getLogger("offctl.zookeeper")
_log.addHandler(logging.NullHandler())
_log.propagate = False  # kazoo's reconnect chatter must not reach stderr through the root logger


def join(parent: str, child: str) -> str:
    return f"{parent.rstrip('/')}/{child}"


class ZkStore:
    """A connected, read-mostly view of one ZooKeeper ensemble."""

    def __init__(self, hosts: str, *, auth: str | None = None, timeout: float = 10.0) -> None:
        self.hosts = hosts
        self.timeout = timeout
        auth_data = [("digest", auth)] if auth else None
        self.client = KazooClient(hosts=hosts, timeout=max(timeout, 4.0), auth_data=auth_data,
                                  logger=_log, connection_retry={"max_tries": 1, "max_delay": 1})

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

    def _pipeline(self, paths: Iterable[str], start: Callable[[str], object]) -> dict[str, object]:
        """Run start(path) for every path with at most WINDOW in flight; missing nodes are left out."""
        results: dict[str, object] = {}
        pending: deque = deque()
        it = iter(paths)

        def drain_one() -> None:
            path, ar = pending.popleft()
            try:
                results[path] = ar.get(timeout=self.timeout)
            except NoNodeError:
                pass  # deleted between listing and reading: it is gone, not an error
            except NoAuthError:
                raise StoreUnavailable(f"ZooKeeper at {self.hosts}: not allowed to read {path} "
                                       f"(ACL; pass digest credentials with --zk-auth)") from None
            except KazooTimeoutError:
                raise StoreUnavailable(f"ZooKeeper at {self.hosts} did not answer a read of {path} "
                                       f"within {self.timeout:g}s") from None
            except (ConnectionLoss, ConnectionClosedError, SessionExpiredError, KazooException) as exc:
                raise StoreUnavailable(f"ZooKeeper at {self.hosts}: lost the connection reading {path} "
                                       f"({type(exc).__name__})") from None

        for path in it:
            pending.append((path, start(path)))
            if len(pending) >= WINDOW:
                drain_one()
        while pending:
            drain_one()
        return results

    def children(self, paths: Sequence[str]) -> dict[str, list[str]]:
        return self._pipeline(paths, self.client.get_children_async)  # type: ignore[return-value]

    def data(self, paths: Sequence[str]) -> dict[str, tuple[bytes, object]]:
        return self._pipeline(paths, self.client.get_async)  # type: ignore[return-value]

    # --- what offctl asks --------------------------------------------------------------------------

    def spout_ids(self, root: str) -> list[str] | None:
        """Children of a zkRoot, or None when the root does not exist."""
        listed = self.children([root])
        return sorted(listed[root]) if root in listed else None

    def read_partitions(self, root: str, spout_ids: Sequence[str]) -> list[ZkNode]:
        """Every partition node of the given spout ids, flat and `<topic>/` layouts alike."""
        # (path, spout id, folder topic, partition) of every node to read
        targets: list[tuple[str, str, str | None, int]] = []
        folders: list[tuple[str, str, str]] = []
        spout_paths = {join(root, sid): sid for sid in spout_ids}
        for spout_path, kids in self.children(list(spout_paths)).items():
            sid = spout_paths[spout_path]
            for kid in kids:
                m = _PARTITION.fullmatch(kid)
                if m:
                    targets.append((join(spout_path, kid), sid, None, int(m.group(1))))
                else:
                    folders.append((join(spout_path, kid), sid, kid))
        folder_kids = self.children([path for path, _, _ in folders])
        for path, sid, topic in folders:
            for kid in folder_kids.get(path, ()):
                m = _PARTITION.fullmatch(kid)
                if m:
                    targets.append((join(path, kid), sid, topic, int(m.group(1))))
        read = self.data([t[0] for t in targets])
        nodes = []
        for path, sid, topic, partition in targets:
            if path in read:
                data, stat = read[path]
                nodes.append(ZkNode(zk_root=root, spout_id=sid, path=path, node_partition=partition,
                                    folder_topic=topic, data=data or b"", version=stat.version,
                                    mtime_ms=stat.mtime))
        return nodes

    def running_topologies(self, storm_root: str) -> frozenset[str] | None:
        """Storm ids under `<storm root>/storms`, or None when that node does not exist."""
        path = join(storm_root, "storms")
        listed = self.children([path])
        return frozenset(listed[path]) if path in listed else None
