"""Files of the safe rewrite: backups (exact before-images), the audit log, and offset files for
`--from-file` (an offctl plan or backup, or a kafka-consumer-groups CSV export).

A backup is JSON: ZooKeeper nodes keep their exact bytes (base64) and version, Kafka commits their offset
and metadata; and each entry keeps what the write leaves (its after-image), so that the restore can tell
whether a partition changed since (the changed-since guard). It is written to a temporary name, flushed and
fsynced, then renamed, before any store is touched; `offctl restore` reads it back through the same planner and writer.
"""

from __future__ import annotations

import base64
import binascii
import errno
import fcntl
import getpass
import hashlib
import json
import os
import re
import secrets
import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from offctl.core.plans.plan import CREATE, Change, Plan
from offctl.core.records.jstorm import node_partition as jstorm_partition
from offctl.core.records.model import (
    JSTORM,
    KAFKA,
    STORM_KAFKA,
    STORM_KAFKA_CLIENT,
    TRIDENT,
    ZK_STORES,
    ZOOKEEPER,
    ConsumerKey,
    KafkaCommit,
    ZkNode,
    iso_ms,
)
from offctl.core.storm import jstorm
from offctl.errors import UsageError, WriteConflict
from offctl.inputs import read_text

FORMAT = 3  # 3 adds the after-image of every entry; 2 adds "sha256"; 1 (no checksum) is restored only as hand-made
FORMATS = (1, 2, FORMAT)
HAND_MADE_FLAG = "--hand-made"


def digest(doc: dict) -> str:
    """The backup's checksum: SHA-256 over its canonical JSON, every key but "sha256" itself."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def state_dir() -> Path:
    """Where backups and the audit log live by default: $XDG_STATE_HOME/offctl or ~/.local/state/offctl."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "offctl"


def backup_document(plan: Plan, created_ms: int) -> dict:
    """The before-image of every partition the plan writes, and its after-image: what the write leaves."""
    doc = {
        "offctl_backup": FORMAT,
        "created_at": iso_ms(created_ms),
        "created_ms": created_ms,
        "operation": plan.operation,
        "target": plan.target,
        **plan.key.fields(),
    }
    if plan.key.store in ZK_STORES:
        # "written_base64" and "written_version": the bytes offctl is about to write and the version the write
        # gives the node (the version read + 1; 0 for a node it creates); both null for a node it deletes.
        # A node the plan creates did not exist: "absent", and its undo deletes it again.
        doc["zookeeper"] = [
            {
                "path": c.path,
                "topic": c.topic,
                "partition": c.partition,
                "offset": c.before,
                "version": None if c.before_data is None else c.version,
                "data_base64": _b64(c.before_data),
                "written_base64": _b64(c.after_data),
                "written_version": None if c.delete else 0 if c.version == CREATE else c.version + 1,
                **({"absent": True} if c.before_data is None else {}),
            }
            for c in plan.writes
        ]
    else:
        # "written": the commit the write leaves (null: it removes it, deleting the group); and whether the
        # group had any commit before, so that the undo knows whether deleting the group puts it back
        doc["kafka"] = [
            {
                "topic": c.topic,
                "partition": c.partition,
                "offset": c.before if c.had_commit else None,
                "metadata": c.before_metadata if c.had_commit else None,
                "written": None if c.delete else {"offset": c.after, "metadata": c.after_metadata},
            }
            for c in plan.writes
        ]
        doc["group_had_commits"] = plan.group_had_commits
    doc["sha256"] = digest(doc)
    return doc


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_backup(plan: Plan, directory: Path, now_ms: int) -> Path:
    """Write the plan's before-image, flushed to disk; return its path. Fails before any store is touched.

    Two offctl runs may back up at the same millisecond: each writes a temporary file of its own, then links
    it to the first free name (a link never replaces a file), so neither overwrites or removes the other's."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", plan.key.consumer)[:80]
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now_ms / 1000)) + f"{now_ms % 1000:03d}Z"
    body = json.dumps(backup_document(plan, now_ms), indent=1).encode() + b"\n"
    tmp = directory / f".{stamp}-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    created = False
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Readable by its owner only: it holds the exact node data, which may name hosts and topologies.
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            created = True
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        for n in range(1000):
            path = directory / f"{stamp}-{plan.operation}-{plan.key.store}-{slug}{f'-{n}' if n else ''}.json"
            try:
                os.link(tmp, path)
                break
            except FileExistsError:
                continue
        else:
            raise OSError(errno.EEXIST, "no free backup name")
        os.unlink(tmp)
        created = False
        _fsync_dir(directory)
    except OSError as exc:
        if created:
            tmp.unlink(missing_ok=True)  # a backup that failed half-way leaves nothing behind
        raise WriteConflict(
            f"could not write the backup to {directory} ({exc.strerror or exc}); nothing was "
            f"changed. Choose another place with --backup-dir"
        ) from None
    return path


def record_read_back(path: Path, kept: Mapping[tuple[str, int], tuple[int, str | None]]) -> None:
    """Rewrite a Kafka backup's after-image ("written") with the commits as the broker kept them, where they
    differ from what was sent, each marked "written_read_back": the write left those. The new file, with its
    checksum, replaces the old one whole (a temporary file, fsynced, renamed): a crash leaves one or the other.
    OSError when it cannot be written; the old file then stands."""
    doc = json.loads(path.read_bytes())
    for entry in doc["kafka"]:
        got = kept.get((entry["topic"], entry["partition"]))
        if got is not None:
            entry["written"] = {"offset": got[0], "metadata": got[1]}
            entry["written_read_back"] = True
    doc["sha256"] = digest(doc)
    tmp = path.with_name(f".{path.name}-{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(json.dumps(doc, indent=1).encode() + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


@dataclass(frozen=True)
class Backup:
    key: ConsumerKey
    operation: str
    created_ms: int
    path: Path
    nodes: tuple[ZkNode, ...] = ()  # ZooKeeper: exact bytes as they were
    commits: tuple[KafkaCommit | tuple[str, int], ...] = ()  # Kafka; (topic, partition) had no commit
    absent: tuple[str, ...] = ()  # ZooKeeper nodes that did not exist before (the operation created them)
    # The after-image, what the write left: ZooKeeper path -> the node (bytes, version) or None (deleted);
    # Kafka (topic, partition) -> the commit or None (removed). None: not known (a format-2 Kafka backup, a
    # hand-made file, whose claims are not trusted); a path missing from it: not known for that node.
    after: Mapping[str, ZkNode | None] | None = None
    commits_after: Mapping[tuple[str, int], KafkaCommit | None] | None = None
    group_had_commits: bool | None = None  # Kafka: the group had some commit before the write (None: not known)
    format: int = FORMAT

    @property
    def before(self) -> dict[str, ZkNode | None]:
        """The ZooKeeper before-image by path: each node as it was, None where it did not exist."""
        return {**{n.path: n for n in self.nodes}, **dict.fromkeys(self.absent)}

    @property
    def commits_before(self) -> dict[tuple[str, int], KafkaCommit | None]:
        """The Kafka before-image by (topic, partition): each commit as it was, None where there was none."""
        had = {(c.topic, c.partition): c for c in self.commits if isinstance(c, KafkaCommit)}
        return {**dict.fromkeys(c for c in self.commits if not isinstance(c, KafkaCommit)), **had}

    def own_writes(self, current: Iterable[ZkNode]) -> frozenset[str]:
        """Paths that still hold exactly what the operation this backup was made for wrote: the version it gave
        the node and the bytes it wrote. Nothing else has written them since."""
        after = self.after or {}
        return frozenset(
            n.path
            for n in current
            if (was := after.get(n.path)) is not None and (was.data, was.version) == (n.data, n.version)
        )


def _bad(path: Path, why: str) -> UsageError:
    return UsageError(f"{path} is not a usable offctl backup: {why}")


def read_json(path: Path) -> object:
    text = read_text(path, "file")
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def parse_backup(doc: dict, path: Path, *, hand_made: bool = False) -> Backup:
    """A backup, refused unless its checksum holds: it is offctl's own artefact, and a changed one must not be
    written back. `hand_made`: a file made or edited on purpose; no checksum is asked for (the planner's
    checks still apply)."""
    fmt = _format(doc, path)
    if not hand_made:
        _verify_checksum(doc, path, fmt)
    key = _backup_key(doc, path)
    created = doc.get("created_ms") if isinstance(doc.get("created_ms"), int) else 0
    try:
        images = (
            _zk_images(doc, key, fmt, hand_made) if key.store in ZK_STORES else _kafka_images(doc, key, fmt, hand_made)
        )
        return Backup(key, str(doc.get("operation")), created, path, **images, format=fmt)
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise _bad(path, f"an entry is damaged ({type(exc).__name__}: {exc})") from None


def _format(doc: dict, path: Path) -> int:
    """The backup's format, one offctl reads: the integers offctl writes, not 2.0, "2" or true."""
    fmt = doc.get("offctl_backup")
    if not _is_int(fmt) or fmt not in FORMATS:
        given = json.dumps(fmt)[:20] if "offctl_backup" in doc else "missing"
        raise _bad(
            path,
            f"unknown format (offctl_backup {given}); offctl reads formats "
            f"{', '.join(map(str, FORMATS[:-1]))} and {FORMAT}",
        )
    return fmt


def _verify_checksum(doc: dict, path: Path, fmt: int) -> None:
    """Refuse a backup that has no checksum, or fails it: changed or damaged since offctl wrote it."""
    if fmt == 1:
        raise _bad(
            path, f"it has no checksum (written by an older offctl): check it by hand, then pass {HAND_MADE_FLAG}"
        )
    if doc.get("sha256") != digest(doc):
        raise _bad(
            path,
            f"it fails its checksum: it was changed or damaged after offctl wrote it. Restore a "
            f"file made or edited on purpose with {HAND_MADE_FLAG}",
        )


def _backup_key(doc: dict, path: Path) -> ConsumerKey:
    """Whom the backup is of: its store and consumer, and the zk_root of a ZooKeeper or Trident one."""
    store, consumer, root = doc.get("store"), doc.get("consumer"), doc.get("zk_root")
    if store not in (ZOOKEEPER, KAFKA, TRIDENT, JSTORM) or not isinstance(consumer, str) or not consumer:
        raise _bad(path, "no store and consumer")
    if store in ZK_STORES and not (isinstance(root, str) and root.startswith("/")):
        raise _bad(path, "no zk_root")
    if store == JSTORM and jstorm.split_id(consumer) is None:
        raise _bad(path, f"consumer {consumer[:80]!r} is not a JStorm spout's TOPIC/CLIENT_ID")
    return ConsumerKey(store, consumer, root if store in ZK_STORES else None)


def _zk_images(doc: dict, key: ConsumerKey, fmt: int, hand_made: bool) -> dict:
    """A ZooKeeper or Trident backup's nodes as they were, the paths that did not exist, and what the write left."""
    entries = [e for e in doc["zookeeper"] if e.get("absent") is not True]
    absent = [e for e in doc["zookeeper"] if e.get("absent") is True]
    nodes = tuple(_saved_node(e, key) for e in entries)
    gone = tuple(_saved_path(e, key)[0] for e in absent)
    # A hand-made file's claim of what offctl wrote is not trusted: it could lift the recent-write and
    # changed-since guards.
    after = (
        None
        if hand_made
        else {
            _saved_path(e, key)[0]: _after_node(e, key, fmt, before)
            for e, before in [*zip(entries, nodes), *((e, None) for e in absent)]
            if fmt >= 3 or "written_base64" in e
        }
    )
    return {"nodes": nodes, "absent": gone, "after": after}


def _kafka_images(doc: dict, key: ConsumerKey, fmt: int, hand_made: bool) -> dict:
    """A Kafka backup's commits as they were and, trusted in format 3, what the write left and whether it had any."""
    commits = tuple(_saved_commit(e, key.consumer) for e in doc["kafka"])
    if hand_made or fmt < 3:  # format 2 keeps no after-image of a Kafka write
        return {"commits": commits}
    had = doc["group_had_commits"]
    if not isinstance(had, bool):
        raise ValueError("group_had_commits is not true or false")
    commits_after = {(e["topic"], e["partition"]): _written_commit(e, key.consumer) for e in doc["kafka"]}
    return {"commits": commits, "commits_after": commits_after, "group_had_commits": had}


def _after_node(e: dict, key: ConsumerKey, fmt: int, before: ZkNode | None) -> ZkNode | None:
    """The node as the write left it, or None where the write deleted it (format 2: "written_base64" null
    means the same). Format 2 gives no version: a node the write set gets the saved version + 1, one it
    created 0, as ZooKeeper numbers them."""
    written = e["written_base64"]
    if written is None:
        return None
    data = base64.b64decode(written, validate=True)
    version = e["written_version"] if fmt >= 3 else 0 if before is None else before.version + 1
    if not _is_int(version) or version < 0:
        raise ValueError(f"written_version {str(version)[:20]!r} is not a node version")
    if before is not None:
        return replace(before, data=data, version=version)
    path, partition, rest = _saved_path(e, key)
    return _node(key, path, partition, rest, data, version)


def _written_commit(e: dict, group: str) -> KafkaCommit | None:
    written = e["written"]
    if written is None:
        return None
    commit = _saved_commit({"topic": e["topic"], "partition": e["partition"], **written}, group)
    if not isinstance(commit, KafkaCommit):
        raise ValueError("written has no offset")
    return commit


def _saved_path(e: dict, key: ConsumerKey) -> tuple[str, int, list[str]]:
    """The saved node's path, partition and the path segments below the consumer, checked to be one of
    its partition nodes (Trident: <root>/<txStateId>/user/<partition id>/<txid>; JStorm:
    <root>/kafka/offset/topic/<topic>/<client id>/<partition>)."""
    path, partition = e["path"], e["partition"]
    base = jstorm.spouts_path(key.zk_root) if key.store == JSTORM else key.zk_root.rstrip("/")
    prefix = base + "/" + key.consumer + ("/user/" if key.store == TRIDENT else "/")
    rest = path[len(prefix) :].split("/") if isinstance(path, str) and path.startswith(prefix) else []
    if not _is_int(partition) or not _partition_node(key, rest, partition):
        raise ValueError(f"path {path!r} is not a partition node of {key}")
    return path, partition, rest


def _partition_node(key: ConsumerKey, rest: list[str], partition: int) -> bool:
    if key.store == JSTORM:  # the partition number alone, as PartitionConsumer.zkPath writes it
        return len(rest) == 1 and jstorm_partition(rest[0]) == partition
    if key.store != TRIDENT:
        return 1 <= len(rest) <= 2 and rest[-1] == f"partition_{partition}"
    if len(rest) < 2 or not rest[-1].isdigit():
        return False
    ids = rest[:-1]
    return (ids[-1] == f"partition_{partition}" and len(ids) <= 2) or (
        len(ids) == 1 and ids[0].endswith(f"@{partition}")
    )


def _saved_node(e: dict, key: ConsumerKey) -> ZkNode:
    path, partition, rest = _saved_path(e, key)
    version = e["version"]
    if not _is_int(version) or version < 0:
        raise ValueError(f"version {str(version)[:20]!r} is not a node version")
    return _node(key, path, partition, rest, base64.b64decode(e["data_base64"], validate=True), version)


def _node(key: ConsumerKey, path: str, partition: int, rest: list[str], data: bytes, version: int) -> ZkNode:
    if key.store == TRIDENT:
        client = "@" in rest[0]
        folder = rest[0].rsplit("@", 1)[0] if client else (rest[0] if len(rest) == 3 else None)
        return ZkNode(
            key.zk_root,
            key.consumer,
            path,
            partition,
            folder,
            data,
            version,
            0,
            trident=STORM_KAFKA_CLIENT if client else STORM_KAFKA,
            txid=int(rest[-1]),
            txids=1,
        )
    if key.store == JSTORM:
        topic = key.consumer.split("/", 1)[0]
        return ZkNode(key.zk_root, key.consumer, path, partition, topic, data, version, 0, jstorm=True)
    return ZkNode(key.zk_root, key.consumer, path, partition, rest[0] if len(rest) == 2 else None, data, version, 0)


def _saved_commit(e: dict, group: str) -> KafkaCommit | tuple[str, int]:
    topic, partition, offset, metadata = e["topic"], e["partition"], e["offset"], e.get("metadata")
    if not isinstance(topic, str) or not _is_int(partition) or partition < 0:
        raise ValueError("topic or partition of the wrong type")
    if offset is None:
        return (topic, partition)
    if not _is_int(offset) or offset < 0 or not (metadata is None or isinstance(metadata, str)):
        raise ValueError(f"offset {offset!r} or metadata of the wrong type")
    return KafkaCommit(group, topic, partition, offset, metadata)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def load_backup(path: Path, *, hand_made: bool = False) -> Backup:
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise _bad(path, "not a JSON object")
    return parse_backup(doc, path, hand_made=hand_made)


# --- the audit log -------------------------------------------------------------------------------------------


def who() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    sudo = os.environ.get("SUDO_USER")
    return f"{sudo} (as {user})" if sudo and sudo != user else user


def _logged(c: Change) -> dict:
    """A change's fields as the audit log records them (a file format of its own: the plans' JSON rows are
    offctl.render's)."""
    return {
        "topic": c.topic,
        "partition": c.partition,
        "path": c.path,
        "before": c.before,
        "after": c.after,
        "delta": c.delta,
        "action": c.action,
        "new_record": c.new_record,
        "left_out": c.left_out,
    }


def audit_lines(
    plan: Plan,
    written: Iterable[Change],
    backup: Path,
    now_ms: int,
    where: str,
    *,
    phase: str = "done",
    outcome: str | None = None,
) -> list[str]:
    """One JSON line per change. `phase`: "intent" before the first write, then "done" (with `outcome`:
    verified, or what verification found) or "failed" (with what is known of the outcome)."""
    base = {
        "time": iso_ms(now_ms),
        "who": who(),
        "host": socket.gethostname(),
        "phase": phase,
        "operation": plan.operation,
        "target": plan.target,
        **plan.key.fields(),
        "server": where,
        "backup": str(backup),
    }
    if outcome is not None:
        base["outcome"] = outcome
    if plan.source is not None:
        base["from"] = str(plan.source)
    return [json.dumps({**base, **_logged(c), **_versions(c)}) for c in written]


def _versions(c: Change) -> dict:
    """ZooKeeper: the node's version as read, and the version offctl's write gives it (None: deleted), so
    the log, like the backup, says what offctl wrote and at which version."""
    if c.path is None:
        return {}
    if c.delete:
        return {"version_read": c.version, "version_written": None}
    created = c.version == CREATE
    return {"version_read": None if created else c.version, "version_written": 0 if created else c.version + 1}


def append_audit(path: Path, lines: list[str]) -> None:
    """Append and fsync; the file is readable by its owner only (it names servers, users and offsets)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        fcntl.flock(fd, fcntl.LOCK_EX)  # two runs appending at once must not interleave their lines
        f.write("".join(line + "\n" for line in lines))
        f.flush()
        os.fsync(f.fileno())
