"""`offctl peek --save DIR`: each message's exact key, value and headers, with a manifest, written whole or not at all.

Everything is written into a new temporary folder beside DIR, flushed, then renamed to DIR in one step: DIR
either does not exist or holds every file and the manifest. An existing DIR that is not empty is refused, so no
file is ever overwritten. Files are named by topic, partition and offset (characters outside Kafka's topic
alphabet replaced), readable by their owner only: a message may hold anything.

- `<topic>-<partition>-<offset>.key` / `.value`: the exact bytes; absent for a null key or value (the
  manifest says null), empty for an empty one.
- `<topic>-<partition>-<offset>.headers.json`: the headers in order, each `{"key": ..., "value_base64": ...}`
  (`null` for a null value), when the message has any.
- `manifest.json`: per message, its consumer, topic, partition, offset, timestamp and its type, and for the key
  and value their file, size and sha256.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from offctl.core.records.model import LogMessage, iso_ms
from offctl.core.records.peeked import Peeked, digest
from offctl.errors import UsageError, WriteConflict

MANIFEST = "manifest.json"
FORMAT = 1  # "offctl_peek" in the manifest


def _stem(m: LogMessage) -> str:
    return f"{re.sub(r'[^A-Za-z0-9._-]', '_', m.topic)}-{m.partition}-{m.offset}"


def _write(path: Path, data: bytes) -> None:
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _part(folder: Path, name: str, data: bytes | None) -> dict | None:
    if data is None:
        return None
    _write(folder / name, data)
    return {"file": name, "size": len(data), "sha256": digest(data)}


def _entry(folder: Path, p: Peeked, m: LogMessage) -> dict:
    """One message's manifest entry; its headers, key and value written into `folder` beside it."""
    stem = _stem(m)
    headers = None
    if m.headers:
        body = [{"key": k, "value_base64": None if v is None else base64.b64encode(v).decode()} for k, v in m.headers]
        headers = _part(folder, f"{stem}.headers.json", json.dumps(body, indent=1).encode() + b"\n")
    return {
        **p.row.record.key.fields(),
        "topic": m.topic,
        "partition": m.partition,
        "offset": m.offset,
        "resume_offset": p.offset,
        "timestamp": iso_ms(m.timestamp_ms),
        "timestamp_ms": m.timestamp_ms,
        "timestamp_type": m.timestamp_type,
        "key": _part(folder, f"{stem}.key", m.key),
        "value": _part(folder, f"{stem}.value", m.value),
        "headers": headers and {**headers, "count": len(m.headers)},
    }


def save_messages(directory: Path, peeked: list[Peeked] | tuple[Peeked, ...], saved_ms: int) -> Path:
    """Write every message read into `directory` (which must not exist, or be empty); return it."""
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(
            f"--save {directory}: it exists and is not an empty folder; nothing is overwritten, name a new folder"
        )
    parent = directory.resolve().parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp", dir=parent))
    except OSError as exc:
        raise WriteConflict(f"--save {directory}: cannot write in {parent} ({exc.strerror or exc})") from None
    try:
        entries = [_entry(tmp, p, m) for p in peeked for m in (p.at.messages if p.at is not None else ())]
        _write(
            tmp / MANIFEST,
            json.dumps({"offctl_peek": FORMAT, "saved_at": iso_ms(saved_ms), "messages": entries}, indent=1).encode()
            + b"\n",
        )
        if directory.exists():
            directory.rmdir()  # empty (checked above): the rename puts the whole folder in its place
        os.rename(tmp, directory)
        fd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)  # nothing half-written is left behind
        raise WriteConflict(
            f"--save {directory}: could not write the messages ({exc.strerror or exc}); nothing was saved"
        ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory
