"""`offctl audit`'s Spark-free task functions: chunks of work, what each Spark task runs on its chunk, what it hands
back (rows, totals, history), and the files' columns. Nothing here imports pyspark or drives Spark:
offctl/faces/audit/job.py is the driver, offctl/adapters/spark.py the adapter to Spark itself.

The driver lists the spout ids under each zkRoot and takes the --group list (cheap), and cuts them into chunks
(plan_chunks). Each Spark task reads one chunk with its own ZooKeeper and Kafka clients and runs inspect's pipeline on
it (audit_chunk: inspect's read_snapshot, asking Kafka about the chunk's own topics only, then inspect.assess), so
every rule has one implementation. A chunk's reads are a Snapshot: saved as they are, they can be analyzed again
later with no servers, and several saved snapshots give each partition a history.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter

from offctl.core.records.findings import CATALOGUE
from offctl.core.records.model import CatchUp, ConsumerKey, Report, Snapshot
from offctl.core.results.audit import Tally, partition_key
from offctl.core.rules.analyze import analyze
from offctl.core.rules.judge import expected_topics
from offctl.core.rules.profiles import Profiles
from offctl.core.time.history import NO_CATCH_UP, STATUSES, Observation, catch_up, commit_period_of, evaluate
from offctl.core.time.timelag import ESTIMATE
from offctl.errors import OffctlError
from offctl.pipeline.assess import assess
from offctl.pipeline.read import open_stores, read_snapshot
from offctl.render.report import (
    catch_up_fields,
    catch_up_from,
    consumer_dicts,
    finding_dict,
    partition_dicts,
    time_lags,
)
from offctl.settings.run import Reading

_CAPTURED = attrgetter("captured_ms")
MAX_CHUNK = 50  # consumers per task at most: enough tasks to spread the reads and show progress
TASKS_PER_CORE = 4


@dataclass(frozen=True)
class Chunk:
    """The consumers one Spark task reads: spout ids under one zkRoot, or Kafka groups."""

    index: int
    zk_root: str | None = None
    spout_ids: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    listed_groups: tuple[str, ...] = ()  # from --all-groups: kept only when their commits carry Storm metadata
    trident_root: str | None = None  # every Trident Kafka spout state under this transactional root
    jstorm_root: str | None = None  # every JStorm Kafka spout (those --jstorm names) under this JStorm root

    def describe(self) -> str:
        def some(names: Sequence[str]) -> str:
            return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")

        if self.spout_ids:
            return f"spout ids {some(self.spout_ids)} under {self.zk_root}"
        if self.trident_root:
            return f"Trident spouts under {self.trident_root}"
        if self.jstorm_root:
            return f"JStorm spouts under {self.jstorm_root}"
        return f"groups {some(self.groups + self.listed_groups)}"


def plan_chunks(
    spouts_by_root: Mapping[str, Sequence[str]],
    groups: Sequence[str],
    parallelism: int,
    listed_groups: Sequence[str] = (),
    trident_roots: Sequence[str] = (),
    jstorm_roots: Sequence[str] = (),
) -> list[Chunk]:
    """Cut the consumers into chunks: about TASKS_PER_CORE tasks per core, at most MAX_CHUNK consumers each;
    one chunk per Trident root and per JStorm root."""
    total = sum(len(ids) for ids in spouts_by_root.values()) + len(groups) + len(listed_groups)
    size = max(1, min(MAX_CHUNK, math.ceil(total / max(1, parallelism * TASKS_PER_CORE))))
    chunks: list[Chunk] = []
    for root, ids in spouts_by_root.items():
        for i in range(0, len(ids), size):
            chunks.append(Chunk(len(chunks), zk_root=root, spout_ids=tuple(ids[i : i + size])))
    for i in range(0, len(groups), size):
        chunks.append(Chunk(len(chunks), groups=tuple(groups[i : i + size])))
    for i in range(0, len(listed_groups), size):
        chunks.append(Chunk(len(chunks), listed_groups=tuple(listed_groups[i : i + size])))
    for root in trident_roots:
        chunks.append(Chunk(len(chunks), trident_root=root))
    for root in jstorm_roots:
        chunks.append(Chunk(len(chunks), jstorm_root=root))
    return chunks


def process_name() -> str:
    """host:pid of this process, as the audit reports who read and who drove it."""
    return f"{socket.gethostname()}:{os.getpid()}"


def audit_chunk(reading: Reading, chunk: Chunk, now_ms: int) -> tuple[Snapshot, Report]:
    """One Spark task: read one chunk with clients of its own, then inspect's pipeline on it (offctl.pipeline.assess:
    the analysis, then the time lag, retention headroom and commit expiry read with the same Kafka client), so the
    audit sees what inspect sees, each consumer judged by its own profile. Returns the chunk's reads (a snapshot to
    save) and its report. A store that cannot be reached makes the chunk's snapshot incomplete, naming the chunk; the
    other chunks go on."""
    roots = [chunk.zk_root] if chunk.zk_root else []
    conn, selection = reading.conn, reading.selection
    try:
        with open_stores(conn, targeted=True) as (zk, kafka):
            chunk_selection = replace(
                selection,
                groups=chunk.groups,
                listed_groups=chunk.listed_groups,
                log_topics=(*selection.log_topics, *expected_topics(reading.profiles)),
            )
            snapshot, records = read_snapshot(
                zk,
                kafka,
                roots,
                chunk_selection,
                conn.storm_root,
                now_ms,
                spouts_by_root={r: chunk.spout_ids for r in roots},
                trident_roots=[chunk.trident_root] if chunk.trident_root else (),
                profiles=reading.profiles,
                jstorm_roots=[chunk.jstorm_root] if chunk.jstorm_root else (),
            )
            snapshot = replace(snapshot, reader=process_name())
            return snapshot, assess(snapshot, kafka, reading, records)
    except OffctlError as exc:
        snapshot = Snapshot(captured_ms=now_ms, incomplete=(f"could not read {chunk.describe()}: {exc}",))
        return snapshot, assess(snapshot, None, reading)


# --- what each task hands back ----------------------------------------------------------------------------


def partition_rows(report: Report) -> Iterator[dict]:
    """Every row as inspect's document gives it (render.partition_dicts: its time lag, retention headroom and
    commit expiry included), with the codes of the findings on that partition and TASK_KEYS."""
    for row, d in zip(report.rows, partition_dicts(report, time_lags(report))):
        d.update(
            findings=list(row.codes),
            captured_ms=report.captured_ms,
            modified_ms=row.record.modified_ms,
            resumes_stored=row.resumes_stored,
        )
        yield d


def observation(row: Mapping) -> Observation:
    return Observation(row["captured_ms"], row["committed"], row["log_start"], row["log_end"], row["modified_ms"])


def observations(snapshot: Snapshot) -> Iterator[tuple[tuple, Observation]]:
    """What one saved snapshot says of each partition, for history."""
    for row in partition_rows(analyze(snapshot)):
        if row["topic"] is not None and row["committed"] is not None:
            yield partition_key(row), observation(row)


def with_history(
    row: dict,
    earlier: Iterable[Observation],
    running: frozenset[str] | None,
    window: int,
    allowed_lag: int = 0,
    kafka_commit_period_ms: int = 0,
) -> dict:
    """The row with its history_status from its earlier observations and itself. Where the message gave no time lag,
    the history's estimate stands in, as serve and watch show it (offctl.core.time.timelag.served): time_lag_source
    `estimate`. Its catch-up (offctl.core.time.history.catch_up) is estimated over the same window."""
    obs = [*earlier, observation(row)] if row["committed"] is not None else []
    tid = row["topology_id"]
    is_running = (tid in running) if running is not None and tid else None
    period = commit_period_of(row["store"], kafka_commit_period_ms)
    h = (
        evaluate(obs, running=is_running, window=window, allowed_lag=allowed_lag, commit_period_ms=period)
        if obs
        else None
    )
    out = {**row, "history_status": h.status if h else None}
    if h and h.time_lag_s is not None and row.get("time_lag_s") is None and row.get("resumes_stored"):
        out["time_lag_s"], out["time_lag_source"] = h.time_lag_s, ESTIMATE
    if obs and row["lag"] is not None and row["topic"] is not None:
        out.update(catch_up_fields(catch_up(sorted(obs, key=_CAPTURED)[-window:], row["lag"], period)))
    return out


def consumer_catch_up(row: Mapping) -> tuple[tuple, CatchUp]:
    """A partition row's catch-up, keyed by its consumer (store, consumer, zk_root), for a consumer's to be `joined`
    over its partitions."""
    return (row["store"], row["consumer"], row["zk_root"]), catch_up_from(row)


def with_catch_up(consumer: dict, up: CatchUp | None) -> dict:
    """A consumer dict with its catch-up over its partitions' history (`up`; None: it has no partition row)."""
    return {**consumer, **catch_up_fields(up or NO_CATCH_UP)}


def commit_period(profiles: Profiles, row: Mapping) -> int:
    """The commit period of a partition row's consumer, by the profile that judges it (history's STALL rule)."""
    key = ConsumerKey(row["store"], row["consumer"], row["zk_root"])
    return profiles.judging(key)[1].spout.kafka_commit_period_ms


def without_history(row: dict) -> dict:
    return {**row, "history_status": None}


# --- totals ----------------------------------------------------------------------------------------------


def chunk_outputs(report: Report) -> tuple[Tally, list[dict], list[dict], list[dict]]:
    """A task's analyzed chunk: its tally, partition rows, findings and consumers, as plain dicts, as inspect's
    document gives them."""
    rows = list(partition_rows(report))
    return (
        Tally.of(report, rows),
        rows,
        [finding_dict(f) for f in report.findings],
        consumer_dicts(report, time_lags(report)),
    )


def worst_first(consumer: Mapping) -> tuple:
    """Sort key of consumers, worst first: by status, then total lag."""
    rank = {"error": 3, "warning": 2, "info": 1, "ok": 0}
    return -rank[consumer["status"]], -consumer["total_lag"], consumer["consumer"]


def lag_totals(rows: Iterable[Mapping], by: str) -> dict:
    """Lag per `by` (topic or topology_name) of some partition rows: partitions, total and max lag,
    consumers. Partial totals of chunks add up with `add_totals`."""
    out: dict = {}
    for row in rows:
        t = out.setdefault(row[by], {"partitions": 0, "total_lag": 0, "max_lag": None, "consumers": set()})
        t["partitions"] += 1
        t["consumers"].add((row["store"], row["consumer"], row["zk_root"]))
        if row["lag"] is not None:
            t["total_lag"] += row["lag"]
            t["max_lag"] = row["lag"] if t["max_lag"] is None else max(t["max_lag"], row["lag"])
    return out


def add_totals(a: dict, b: dict) -> dict:
    lags = [x for x in (a["max_lag"], b["max_lag"]) if x is not None]
    return {
        "partitions": a["partitions"] + b["partitions"],
        "total_lag": a["total_lag"] + b["total_lag"],
        "max_lag": max(lags) if lags else None,
        "consumers": a["consumers"] | b["consumers"],
    }


def totals_dict(name: str, value: str | None, t: Mapping) -> dict:
    return {
        name: value,
        "consumers": len(t["consumers"]),
        "partitions": t["partitions"],
        "total_lag": t["total_lag"],
        "max_lag": t["max_lag"],
    }


def history_counts(counts: Mapping[str | None, int]) -> dict:
    """Partitions per history status (none: no history), every status named."""
    return {s.lower(): counts.get(s, 0) for s in STATUSES}


# --- the files an audit writes (--out DIR); docs/audit-files.md is made from these -------------------------

# The columns that name a consumer, in the findings and consumers files alike.
_CONSUMER_COLUMNS = (
    ("store", "string", "zookeeper, kafka, trident or jstorm"),
    ("consumer", "string", "spout id, group id, txStateId or a JStorm spout's topic/kafka.client.id"),
    ("zk_root", "string", "zkRoot (zookeeper), Trident root (trident) or JStorm's root (jstorm)"),
)
# The lag over consumer-partitions, in the topics and topologies files alike.
_LAG_COLUMNS = (
    ("partitions", "long", "consumer-partitions"),
    ("total_lag", "long", "sum of their lag"),
    ("max_lag", "long", "largest partition lag"),
)
# When the spout will have caught up, over the snapshots' history (docs/contract.md, catch-up): partitions, consumers.
_CATCH_UP_COLUMNS = (
    (
        "catch_up_s",
        "double",
        "seconds until lag 0 at the rates over the snapshots (a consumer: until every lagging partition is); null when "
        "not catching up or without an estimate",
    ),
    ("catch_up", "string", "caught-up, catching-up, not-catching-up, no-history or short-window (null: no lag)"),
    ("commit_rate", "double", "messages per second the committed offset advanced over the snapshots (lagging)"),
    ("log_rate", "double", "messages per second the log end advanced over the snapshots (lagging)"),
)

FILES: dict[str, tuple[str, tuple[tuple[str, str, str], ...]]] = {
    "partitions": (
        "one row per consumer-partition",
        (
            (
                "store",
                "string",
                "zookeeper (storm-kafka), kafka (storm-kafka-client), trident (a Trident spout's state) or jstorm "
                "(JStorm's Kafka spout)",
            ),
            (
                "consumer",
                "string",
                "the spout id (zookeeper), the group id (kafka), the txStateId (trident) or <topic>/<kafka.client.id> "
                "(jstorm)",
            ),
            ("zk_root", "string", "the spout's zkRoot, the Trident root or JStorm's root; null for kafka"),
            ("topic", "string", "the topic the offset is applied to (null when offctl cannot tell: a tie of topics)"),
            ("partition", "long", "the partition"),
            ("committed", "long", "the committed offset (jstorm: the stored offset, which the spout fetches + 1)"),
            ("log_start", "long", "the partition's log start offset"),
            ("log_end", "long", "the partition's log end offset (high watermark)"),
            (
                "lag",
                "long",
                "log_end (last_stable_offset, where the spout reads committed) - the offset the spout will resume from "
                "(the stored one, or where its start-up rule puts it when it does not use it), when that is known and "
                "inside the log range",
            ),
            ("status", "string", "ok, info, warning or error: the worst finding on this partition"),
            ("topology_id", "string", "the storm id that wrote the offset"),
            ("topology_name", "string", "its topology name"),
            ("path", "string", "the ZooKeeper node (zookeeper, jstorm)"),
            ("version", "long", "the node's version (zookeeper, jstorm)"),
            ("modified", "string", "when the node was last written, ISO-8601 UTC (zookeeper, jstorm)"),
            ("broker", "string", "host:port the record names (zookeeper, jstorm)"),
            (
                "record_topic",
                "string",
                "the topic the record itself names (zookeeper, jstorm; may differ from topic)",
            ),
            ("used", "boolean", "false when the spout cannot use the record (MALFORMED_RECORD)"),
            ("findings", "string", "codes of the findings on this partition, ';'-separated"),
            ("history_status", "string", "OK, WARN, STALL, STOP or REWIND over the snapshots (null: no history)"),
            (
                "time_lag_s",
                "double",
                "seconds the message the spout resumes at has waited: from its timestamp, 0 when "
                "the lag is 0, else the estimate over the snapshots' history (null: no figure)",
            ),
            (
                "time_lag_source",
                "string",
                "where time_lag_s comes from: message, caught-up, estimate, unread or no-timestamp (null: no lag)",
            ),
            (
                "retention_headroom_s",
                "double",
                "seconds until the broker may delete the message the spout resumes at (negative: past), where known",
            ),
            (
                "retention_source",
                "string",
                "where the retention headroom comes from (docs/contract.md, retention risk)",
            ),
            (
                "commit_expiry_s",
                "double",
                "storm-kafka-client groups: seconds before the broker may delete the commit "
                "(negative once past), estimated",
            ),
            ("commit_expiry_source", "string", "what the commit expiry is estimated from (null: not estimated)"),
            (
                "last_stable_offset",
                "long",
                "the partition's last stable offset, where the spout reads committed "
                "(--isolation-level read_committed: its lag counts to it); null otherwise",
            ),
            ("resumes_at", "long", "the offset the spout will fetch first (null: not known, or nothing is fetched)"),
            (
                "resumes",
                "string",
                "where that is: stored, stored+1, log-start, log-end, time, waits-until-log-end-reaches, "
                "fetch-fails or crashes (docs/contract.md, where the spout resumes)",
            ),
            ("resumes_citation", "string", "the Storm source that says so: member (file at tag)"),
            *_CATCH_UP_COLUMNS,
            (
                "lost_to_retention",
                "long",
                "offsets below the log start where the spout resumes from its stored offset: deleted before it read "
                "them (at most that many messages); 0 at or above the log start; null where not known or not resumed",
            ),
            ("captured_at", "string", "when this partition was read, ISO-8601 UTC"),
        ),
    ),
    "findings": (
        "one row per finding",
        (
            ("code", "string", "the finding code (docs/findings.md)"),
            ("severity", "string", "error, warning or info"),
            *_CONSUMER_COLUMNS,
            ("topic", "string", "topic, when the finding is about one"),
            ("partition", "long", "partition, when the finding is about one"),
            ("path", "string", "ZooKeeper node or spout path (zookeeper, jstorm)"),
            ("message", "string", "what is wrong, with the numbers"),
            ("hint", "string", "what to do"),
            ("resumes_at", "long", "MISSING_PARTITION: the offset the spout will fetch the partition from first"),
            ("resumes", "string", "MISSING_PARTITION: where that is (log-start, log-end, time)"),
            ("resumes_citation", "string", "MISSING_PARTITION: the Storm source that says so"),
        ),
    ),
    "consumers": (
        "one row per spout id or group",
        (
            *_CONSUMER_COLUMNS,
            ("topics", "string", "topics of its records, ','-separated"),
            ("partitions", "long", "partitions with a record"),
            ("total_lag", "long", "sum of the partitions' lag"),
            ("max_lag", "long", "largest partition lag"),
            ("status", "string", "ok, info, warning or error: its worst finding"),
            ("finding_codes", "string", "codes of its findings, ','-separated"),
            ("max_time_lag_s", "double", "the largest time_lag_s of its partitions that have one"),
            ("min_retention_headroom_s", "double", "the smallest retention_headroom_s of its partitions that have one"),
            *_CATCH_UP_COLUMNS,
            ("group_state", "string", "the Kafka group's state (kafka)"),
            ("members", "long", "the Kafka group's members (kafka)"),
            ("group_type", "string", "the Kafka group's type: classic, consumer, share or unknown (kafka)"),
            ("group_protocol", "string", "the Kafka group's protocol or assignor, as the broker names it (kafka)"),
            ("profile", "string", "the profile that judged it (null: the defaults)"),
            (
                "broker_served",
                "boolean",
                "whether the brokers (or the --kafka-release what-if) accept every request its Kafka client sends "
                "(null: not judged)",
            ),
            ("broker_against", "string", "what it was judged against: the brokers, or the what-if's Kafka release"),
            ("broker_client", "string", "the Kafka client the spout sends its requests with, at its release line"),
            ("broker_refused", "string", "each request refused, ';'-separated: its versions and the brokers'"),
        ),
    ),
    "topics": (
        "lag per topic, over every consumer reading it",
        (
            ("topic", "string", "the topic"),
            ("consumers", "long", "consumers with records on it"),
            *_LAG_COLUMNS,
        ),
    ),
    "topologies": (
        "lag per topology name, over its consumers",
        (
            ("topology_name", "string", "the topology name the records name (null: none)"),
            ("consumers", "long", "consumers with records of it"),
            *_LAG_COLUMNS,
        ),
    ),
}


def flat(name: str, row: Mapping) -> tuple:
    """A row as the file `name` stores it: its columns in order, lists joined into strings."""
    sep = {"findings": ";", "topics": ",", "finding_codes": ",", "broker_refused": ";"}
    if name == "findings" and "hint" not in row:  # the files keep a hint per row; the JSON document says it per code
        row = {**row, "hint": CATALOGUE[row["code"]].hint}
    return tuple(
        sep[c].join(row[c]) if c in sep and isinstance(row.get(c), list) else row.get(c) for c, _, _ in FILES[name][1]
    )
