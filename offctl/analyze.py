"""Detection rules: records + log offsets -> per-partition rows and findings.

`analyze_consumer` is the one implementation of every rule; `analyze` applies it to a snapshot, and the
Spark audit applies it per consumer on the executors. Rules run in this order for each consumer:

 1. MALFORMED_RECORD    the record could not be parsed; no other rule looks at it
 2. TOPIC_MISMATCH      record topic != expected topic (user's, folder's, or the spout's majority)
 3. ID_COLLISION        one spout id / group names more than one topology name
 4. FOREIGN_COMMIT      Kafka commit without Storm metadata, or from another topology id than the rest
 5. UNKNOWN_TOPIC / UNKNOWN_PARTITION          (needs Kafka)
 6. IGNORED_ZERO_OFFSET a ZooKeeper record <= 0; it has no position, so 7 and 8 are skipped
 7. OFFSET_BELOW_LOG_START / OFFSET_ABOVE_LOG_END  (needs Kafka); only in-range offsets get a lag
 8. LAG_BEYOND_MAX_OFFSET_BEHIND, HIGH_LAG     (needs a lag and the user's thresholds)
 9. STALE_BROKER        recorded broker is not the current leader (ZooKeeper records, needs Kafka)
10. MISSING_PARTITION   topic partitions without a record (needs Kafka)
11. STALE_TOPOLOGY      the writing topology id is not running (needs Storm's root)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from offctl.findings import finding
from offctl.model import (
    ZOOKEEPER,
    Cluster,
    ConsumerKey,
    ConsumerSummary,
    Finding,
    GroupState,
    OffsetRecord,
    PartitionLog,
    PartitionRow,
    Report,
    Severity,
    Snapshot,
    Thresholds,
)
from offctl.storm import parse_commit, parse_storm_id, parse_zk_node


def _partition_path(key: ConsumerKey, topic_folder: str | None, partition: int) -> str | None:
    if key.store != ZOOKEEPER:
        return None
    base = f"{key.zk_root.rstrip('/')}/{key.consumer}"
    return f"{base}/{topic_folder}/partition_{partition}" if topic_folder else f"{base}/partition_{partition}"


def _consumer_path(key: ConsumerKey) -> str | None:
    return f"{key.zk_root.rstrip('/')}/{key.consumer}" if key.store == ZOOKEEPER else None


def _majority(counts: Counter, tie_break: dict) -> str:
    """The most common value; ties go to the highest tie_break (most recent write)."""
    return max(counts, key=lambda v: (counts[v], tie_break.get(v, 0), v))


def _counted(counts: Counter) -> str:
    return ", ".join(f"{name} ({n} partition{'s' if n != 1 else ''})" for name, n in counts.most_common())


def _storm_id_epoch(storm_id: str) -> int:
    tail = storm_id.rsplit("-", 1)[-1]
    return int(tail) if parse_storm_id(storm_id) else 0


class _Collector:
    """Findings of one consumer, remembering which record each partition-level finding is about."""

    def __init__(self, key: ConsumerKey) -> None:
        self.key = key
        self.findings: list[Finding] = []
        self.by_record: dict[int, Severity] = {}

    def on_record(self, index: int, record: OffsetRecord, code: str, message: str, **kw) -> None:
        f = finding(code, self.key, message, topic=record.topic, partition=record.partition,
                    path=record.path, **kw)
        self.findings.append(f)
        self.by_record[index] = max(self.by_record.get(index, f.severity), f.severity)

    def on_consumer(self, code: str, message: str, **kw) -> None:
        kw.setdefault("path", _consumer_path(self.key))
        self.findings.append(finding(code, self.key, message, **kw))


def _expected_topics(records: Sequence[OffsetRecord], thresholds: Thresholds) -> tuple[dict[int, tuple[str, str]], str | None]:
    """Per record index: (expected topic, why). Also the flat-layout consensus topic, if any."""
    expected: dict[int, tuple[str, str]] = {}
    flat = [(i, r) for i, r in enumerate(records) if r.malformed is None and r.folder_topic is None]
    consensus = None
    if records and records[0].key.store == ZOOKEEPER:
        if thresholds.expected_topic:
            consensus, why = thresholds.expected_topic, f"the expected topic is '{thresholds.expected_topic}'"
        elif flat:
            counts = Counter(r.topic for _, r in flat)
            latest: dict[str, int] = defaultdict(int)
            for _, r in flat:
                latest[r.topic] = max(latest[r.topic], r.modified_ms or 0)
            consensus = _majority(counts, latest)
            why = f"{counts[consensus]} of {len(flat)} records of this spout name '{consensus}'"
        for i, _ in flat:
            if consensus:
                expected[i] = (consensus, why)
    for i, r in enumerate(records):
        if r.malformed is None and r.folder_topic is not None:
            expected[i] = (r.folder_topic, f"it sits in the folder '{r.folder_topic}/'")
    return expected, consensus


def analyze_consumer(records: Sequence[OffsetRecord], cluster: Cluster | None,
                     running: frozenset[str] | None, thresholds: Thresholds
                     ) -> tuple[list[PartitionRow], list[Finding]]:
    """Apply every rule to the records of one consumer (one spout id under one root, or one group)."""
    if not records:
        return [], []
    key = records[0].key
    out = _Collector(key)
    valid = [(i, r) for i, r in enumerate(records) if r.malformed is None]

    # 1. MALFORMED_RECORD
    for i, r in enumerate(records):
        if r.malformed is not None:
            out.on_record(i, r, "MALFORMED_RECORD", f"{r.path or f'partition {r.partition}'}: {r.malformed}")

    # 2. TOPIC_MISMATCH
    expected, consensus = _expected_topics(records, thresholds)
    for i, r in valid:
        want = expected.get(i)
        if want and r.topic != want[0]:
            out.on_record(i, r, "TOPIC_MISMATCH",
                          f"record names topic '{r.topic}' but {want[1]}: a spout reading '{want[0]}' "
                          f"applies offset {r.committed} to {want[0]}/{r.partition}")

    # 3. ID_COLLISION
    names = Counter(r.topology_name for _, r in valid if r.topology_name)
    if len(names) > 1:
        what = f"spout id '{key.consumer}'" if key.store == ZOOKEEPER else f"group '{key.consumer}'"
        out.on_consumer("ID_COLLISION", f"{what} holds offsets of {len(names)} topologies: {_counted(names)}")

    # 4. FOREIGN_COMMIT
    if key.store != ZOOKEEPER:
        ids = Counter(r.topology_id for _, r in valid if r.has_storm_metadata)
        owner = _majority(ids, {t: _storm_id_epoch(t) for t in ids}) if ids else None
        for i, r in valid:
            if not r.has_storm_metadata:
                out.on_record(i, r, "FOREIGN_COMMIT",
                              f"commit {r.committed} on {r.topic}/{r.partition} has no Storm metadata "
                              f"(written by a tool or another client)")
            elif len(ids) > 1 and r.topology_id != owner:
                out.on_record(i, r, "FOREIGN_COMMIT",
                              f"commit {r.committed} on {r.topic}/{r.partition} was written by topology "
                              f"id {r.topology_id}; {ids[owner]} other partitions by {owner}")

    # 5-9, per record
    lags: dict[int, int] = {}
    logs: dict[int, PartitionLog] = {}
    for i, r in valid:
        where = f"{r.topic}/{r.partition}"
        plog = None
        if cluster is not None:
            partitions = cluster.get(r.topic)
            if partitions is None:
                out.on_record(i, r, "UNKNOWN_TOPIC", f"topic '{r.topic}' does not exist (offset {r.committed} "
                                                     f"for partition {r.partition})")
                continue
            plog = partitions.get(r.partition)
            if plog is None:
                out.on_record(i, r, "UNKNOWN_PARTITION",
                              f"{where} does not exist: the topic has {len(partitions)} partitions")
                continue
            logs[i] = plog
        if key.store == ZOOKEEPER and r.committed <= 0:
            out.on_record(i, r, "IGNORED_ZERO_OFFSET",
                          f"{where} stores offset {r.committed}; the spout ignores it and starts from "
                          f"startOffsetTime")
        elif plog is not None and plog.log_start is not None and plog.log_end is not None:
            if r.committed < plog.log_start:
                out.on_record(i, r, "OFFSET_BELOW_LOG_START",
                              f"{where} committed {r.committed} < log start {plog.log_start}: "
                              f"{plog.log_start - r.committed} messages were deleted before they were processed")
            elif r.committed > plog.log_end:
                out.on_record(i, r, "OFFSET_ABOVE_LOG_END",
                              f"{where} committed {r.committed} > log end {plog.log_end} "
                              f"(by {r.committed - plog.log_end})")
            else:
                lag = lags[i] = plog.log_end - r.committed
                mob = thresholds.max_offset_behind
                if mob is not None and lag > mob:
                    out.on_record(i, r, "LAG_BEYOND_MAX_OFFSET_BEHIND",
                                  f"{where} lag {lag} > maxOffsetBehind {mob}")
                if thresholds.lag_threshold is not None and lag >= thresholds.lag_threshold:
                    out.on_record(i, r, "HIGH_LAG", f"{where} lag {lag} >= threshold {thresholds.lag_threshold}")
        if (key.store == ZOOKEEPER and plog is not None and plog.leader and r.broker
                and r.broker.lower() != plog.leader.lower()):
            out.on_record(i, r, "STALE_BROKER", f"{where} record names broker {r.broker}; the leader is {plog.leader}")

    # 10. MISSING_PARTITION
    if cluster is not None:
        _missing_partitions(out, records, cluster, consensus)

    # 11. STALE_TOPOLOGY
    if running is not None:
        _stale_topologies(out, valid, running)

    rows = [
        PartitionRow(record=r, log_start=logs[i].log_start if i in logs else None,
                     log_end=logs[i].log_end if i in logs else None, lag=lags.get(i),
                     status=out.by_record.get(i))
        for i, r in enumerate(records)
    ]
    return rows, out.findings


def _missing_partitions(out: _Collector, records: Sequence[OffsetRecord], cluster: Cluster,
                        consensus: str | None) -> None:
    present: dict[tuple[str, str | None], set[int]] = defaultdict(set)
    for r in records:
        if r.folder_topic is not None:
            present[(r.folder_topic, r.folder_topic)].add(r.partition)
        elif out.key.store == ZOOKEEPER:
            if consensus:
                present[(consensus, None)].add(r.partition)
        elif r.topic is not None:
            present[(r.topic, None)].add(r.partition)
    for (topic, folder), have in present.items():
        partitions = cluster.get(topic)
        if partitions is None:
            continue
        for p in sorted(set(partitions) - have):
            out.on_consumer("MISSING_PARTITION",
                            f"{topic}/{p} has no committed offset ({len(have)} of {len(partitions)} "
                            f"partitions have one)",
                            topic=topic, partition=p, path=_partition_path(out.key, folder, p))


def _stale_topologies(out: _Collector, valid: Iterable[tuple[int, OffsetRecord]], running: frozenset[str]) -> None:
    by_id = Counter(r.topology_id for _, r in valid if r.topology_id)
    running_by_name: dict[str, list[str]] = defaultdict(list)
    for storm_id in running:
        running_by_name[parse_storm_id(storm_id) or storm_id].append(storm_id)
    for topology_id, n in by_id.most_common():
        if topology_id in running:
            continue
        name = parse_storm_id(topology_id) or topology_id
        others = sorted(running_by_name.get(name, []))
        now = (f"topology '{name}' is running as {', '.join(others)}" if others
               else f"no topology named '{name}' is running")
        out.on_consumer("STALE_TOPOLOGY",
                        f"{n} partition{'s' if n != 1 else ''} committed by topology id {topology_id}, "
                        f"which is not running; {now}")


def parse_snapshot(snapshot: Snapshot) -> dict[ConsumerKey, list[OffsetRecord]]:
    """Parse a snapshot's raw reads, grouped per consumer in the order they were read."""
    grouped: dict[ConsumerKey, list[OffsetRecord]] = {}
    for record in map(parse_zk_node, snapshot.zk_nodes):
        grouped.setdefault(record.key, []).append(record)
    for record in map(parse_commit, snapshot.commits):
        grouped.setdefault(record.key, []).append(record)
    return grouped


def summarize(key: ConsumerKey, rows: Sequence[PartitionRow], findings: Sequence[Finding],
              state: GroupState | None = None) -> ConsumerSummary:
    lags = [row.lag for row in rows if row.lag is not None]
    return ConsumerSummary(
        key=key,
        topics=tuple(sorted({row.record.topic for row in rows if row.record.topic})),
        partitions=len(rows),
        total_lag=sum(lags),
        max_lag=max(lags, default=None),
        worst=max((f.severity for f in findings), default=None),
        finding_codes=tuple(sorted({f.code for f in findings})),
        group_state=state.state if state else None,
        members=state.members if state else None,
    )


def analyze(snapshot: Snapshot, thresholds: Thresholds = Thresholds(),
            records: dict[ConsumerKey, list[OffsetRecord]] | None = None) -> Report:
    """Turn one snapshot into the report every output format renders.

    `records` is parse_snapshot(snapshot), for a caller that parsed while it was reading."""
    rows: list[PartitionRow] = []
    findings: list[Finding] = []
    consumers: list[ConsumerSummary] = []
    states = {g.group: g for g in snapshot.groups}
    for key, consumer_records in (records if records is not None else parse_snapshot(snapshot)).items():
        r, f = analyze_consumer(consumer_records, snapshot.cluster, snapshot.running, thresholds)
        rows.extend(r)
        findings.extend(f)
        consumers.append(summarize(key, r, f, states.get(key.consumer) if key.store != ZOOKEEPER else None))
    skipped = []
    if snapshot.cluster is None:
        skipped.append("log offsets, lag and range checks (no --bootstrap-servers)")
    if snapshot.running is None:
        skipped.append("STALE_TOPOLOGY (Storm's root was not readable)")
    return Report(captured_ms=snapshot.captured_ms, rows=tuple(rows), findings=tuple(findings),
                  consumers=tuple(consumers), notes=snapshot.notes,
                  incomplete=snapshot.incomplete, checks_skipped=tuple(skipped))
