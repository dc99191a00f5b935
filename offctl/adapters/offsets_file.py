"""`offctl reset --from-file`: the offsets file it reads, a plan's JSON (`--output json`) or a kafka-consumer-groups
CSV (`--export`), checked as hostile input: each refused with exit 2 and why."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from offctl.adapters.backup import parse_backup, read_json
from offctl.core.records.model import (
    JSTORM,
    KAFKA,
    TRIDENT,
    ZK_STORES,
    ZOOKEEPER,
    ConsumerKey,
    KafkaCommit,
)
from offctl.core.records.parse import parse_zk_node
from offctl.core.storm import jstorm
from offctl.errors import UsageError
from offctl.inputs import read_text


@dataclass(frozen=True)
class OffsetsFile:
    key: ConsumerKey | None  # whom the file is about, when it says (one consumer)
    offsets: dict[tuple[str, int], int]
    kind: str  # plan | backup | csv
    by_group: dict[str, dict[tuple[str, int], int]] | None = None  # a CSV with a group column: each group's rows

    def for_group(self, group: str) -> dict[tuple[str, int], int] | None:
        """The rows of `group` in a file with a group column (None when it has none)."""
        return None if self.by_group is None else self.by_group.get(group, {})


def load_offsets_file(path: Path) -> OffsetsFile:
    """Explicit target offsets from an offctl plan (`reset --output json`), an offctl backup, or a CSV as
    kafka-consumer-groups --export writes it (topic,partition,offset or group,topic,partition,offset). Each offset is
    where the spout fetches first: a JStorm spout's plan and backup keep the offsets it stores, and it fetches each
    + 1 (jstorm.resumes_at), which is what is taken from them."""
    doc = read_json(path)
    if isinstance(doc, dict) and "offctl_backup" in doc:
        backup = parse_backup(doc, path)
        if backup.nodes:
            offsets = {}
            for node in backup.nodes:
                record = parse_zk_node(node)
                if node.jstorm and record.committed is not None and record.malformed is None:
                    offsets[(node.folder_topic, node.node_partition)] = jstorm.resumes_at(record.committed)
                elif not node.jstorm and record.committed is not None and record.topic:
                    offsets[(record.topic, node.node_partition)] = record.committed
        else:
            offsets = {(c.topic, c.partition): c.offset for c in backup.commits if isinstance(c, KafkaCommit)}
        return OffsetsFile(backup.key, offsets, "backup")
    if isinstance(doc, dict) and isinstance(doc.get("changes"), list):
        return _plan_offsets(doc, path)
    return _csv_offsets(path)


def _plan_offsets(doc: dict, path: Path) -> OffsetsFile:
    store, consumer, root = doc.get("store"), doc.get("consumer"), doc.get("zk_root")
    if store not in (ZOOKEEPER, KAFKA, TRIDENT, JSTORM) or not isinstance(consumer, str):
        raise UsageError(f"{path}: a plan file names its store and consumer")
    if store == JSTORM and (jstorm.split_id(consumer) is None or not (isinstance(root, str) and root.startswith("/"))):
        raise UsageError(f"{path}: a JStorm spout's plan names its TOPIC/CLIENT_ID and its root")
    key = ConsumerKey(store, consumer, root if store in ZK_STORES else None)
    offsets = {}
    for c in doc["changes"]:
        if not isinstance(c, dict):
            raise UsageError(f"{path}: a change is not an object")
        if c.get("action") == "write":
            t, p, fetch = _written(c, store)
            if not (isinstance(t, str) and _whole(p, 2**31 - 1) and _whole(fetch, 2**63 - 1)):
                raise UsageError(
                    f"{path}: a change lacks topic, partition or after (whole numbers a Kafka "
                    f"partition and offset can be)"
                )
            offsets[(t, p)] = fetch
    return OffsetsFile(key, offsets, "plan")


def _written(change: dict, store: str) -> tuple[object, object, object]:
    """A written change's topic, partition and where the spout fetches first after it: its `after`, or for a JStorm
    spout, which stores where it fetches - 1 (-1 for 0), `after` + 1 (jstorm.resumes_at)."""
    after = change.get("after")
    fetch = jstorm.resumes_at(after) if store == JSTORM and type(after) is int else after
    return change.get("topic"), change.get("partition"), fetch


def _whole(value: object, most: int) -> bool:
    """A whole number from 0 to `most` (Kafka's partitions are Java ints, its offsets longs); not a bool."""
    return type(value) is int and 0 <= value <= most


def _digits(text: str, most: int) -> bool:
    """ASCII digits of a whole number from 0 to `most` (str.isdigit also takes '²', which int() refuses)."""
    return re.fullmatch(r"[0-9]{1,19}", text) is not None and int(text) <= most


def _csv_offsets(path: Path) -> OffsetsFile:
    by_group = _csv_by_group(path, _csv_rows(path))
    if "" in by_group:
        return OffsetsFile(None, by_group[""], "csv")
    key = ConsumerKey(KAFKA, next(iter(by_group))) if len(by_group) == 1 else None
    return OffsetsFile(key, next(iter(by_group.values())) if key else {}, "csv", by_group=by_group)


def _csv_rows(path: Path) -> list[list[str]]:
    """The file's lines that are not blank, as stripped cells, without a header line; UsageError for a file that is
    not CSV, holds no offsets, or mixes lines with a group column and lines without."""
    text = read_text(path, "file")
    try:
        rows = [
            [cell.strip() for cell in row]
            for row in csv.reader(io.StringIO(text, newline=""))
            if any(cell.strip() for cell in row)
        ]
    except csv.Error as exc:
        raise UsageError(f"cannot read {path} as CSV ({type(exc).__name__})") from None
    if rows and not rows[0][-1].lstrip("-").isdigit():
        rows = rows[1:]  # a header line
    if not rows:
        raise UsageError(
            f"{path}: no offsets in it (expected an offctl plan or backup, or CSV lines topic,partition,offset)"
        )
    if len({len(row) for row in rows}) > 1:
        raise UsageError(f"{path}: some lines have a group column and some do not")
    return rows


def _csv_by_group(path: Path, rows: list[list[str]]) -> dict[str, dict[tuple[str, int], int]]:
    """group ("" for lines without one) -> (topic, partition) -> offset; UsageError naming the first line that is not
    topic,partition,offset or group,topic,partition,offset with whole numbers."""
    by_group: dict[str, dict[tuple[str, int], int]] = {}
    for n, row in enumerate(rows, 1):
        if len(row) not in (3, 4) or not _digits(row[-2], 2**31 - 1) or not _digits(row[-1], 2**63 - 1):
            raise UsageError(
                f"{path} line {n}: expected topic,partition,offset or group,topic,partition,offset with whole numbers"
            )
        by_group.setdefault(row[0] if len(row) == 4 else "", {})[(row[-3], int(row[-2]))] = int(row[-1])
    return by_group
