"""Spark adapter of `offctl audit`: the session, jobs with their progress, files through Hadoop's FileSystem, and
snapshots in Spark's tables. Thin: it knows Spark and the core's records, nothing of the audit itself
(offctl/faces/audit/job.py drives the job; the functions each task runs are offctl/faces/audit/tasks.py). Files go
through Spark's writers and Hadoop's FileSystem, so `--out` and snapshot directories may be local paths or hdfs://,
s3a://, ... on a cluster."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from importlib import resources

from offctl.core.records.model import (
    UNKNOWN_TYPE,
    ConsumerKey,
    GroupState,
    KafkaCommit,
    PartitionLog,
    ReadFinding,
    Snapshot,
    ZkNode,
    iso_ms,
)
from offctl.errors import OffctlError, SparkUnavailable, UsageError

# update(done, total) of a progress bar, within a context that shows it
Track = Callable[[str], AbstractContextManager[Callable[[int, int], None]]]

SNAPSHOT_PREFIX = "snapshot-"
SNAPSHOT_FORMAT = "offctl-snapshot"
SNAPSHOT_VERSION = 1


@contextmanager
def no_track(_: str) -> Iterator[Callable[[int, int], None]]:
    yield lambda done, total: None


# --- the session -------------------------------------------------------------------------------------------


def start(master: str | None, conf: Mapping[str, str]):
    """The running SparkSession (spark-submit's, or a test's), or a new one: `master`, else spark-submit's
    spark.master, else local[*]. Returns (session, whether offctl started it and must stop it)."""
    try:
        from pyspark import SparkConf
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("offctl audit needs PySpark: pip install 'offctl[spark]'") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    # Under spark-submit the JVM is already up (PySpark connects to it through PYSPARK_GATEWAY_PORT) and
    # holds spark-submit's master and settings; a SparkConf made before the SparkContext cannot see them,
    # so setting a default master here would override spark-submit's with local mode.
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    c = SparkConf()
    if master:
        c.setMaster(master)
    elif not submitted and not c.contains("spark.master"):
        c.setMaster("local[*]")
    if not submitted and not c.contains("spark.app.name"):
        c.setAppName("offctl audit")
    c.set("spark.ui.showConsoleProgress", "false")  # offctl draws its own progress on stderr
    if not submitted and c.get("spark.master", "").startswith("local"):
        # Local executors run this interpreter, where offctl and its clients are installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        c.setIfMissing("spark.ui.enabled", "false")
    # Spark's start-up chatter (log4j INFO and WARN lines) would bury offctl's own messages on stderr; the
    # driver JVM offctl starts here reads these settings (under spark-submit, --driver-java-options does).
    quiet = resources.files("offctl").joinpath("log4j2-quiet.properties")
    c.setIfMissing("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{quiet}")
    for key, value in conf.items():
        c.set(key, value)
    try:
        spark = SparkSession.builder.config(conf=c).getOrCreate()
    except Exception as exc:  # noqa: BLE001 - PySpark raises plain exceptions for a missing Java, bad master...
        raise SparkUnavailable(
            f"Spark did not start ({type(exc).__name__}: {str(exc).strip()[:300]}). Spark needs "
            f"Java 17: apt-get install openjdk-17-jre-headless"
        ) from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def stop(spark) -> None:
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - stopping must never mask the real outcome
        pass


@contextmanager
def job(sc, name: str, track: Track) -> Iterator[None]:
    """Run the Spark jobs of the block under one job group, with a progress bar of its tasks on stderr; a
    failed job becomes SparkUnavailable naming what was being done."""
    group = f"offctl-{name}-{time.monotonic_ns()}"
    sc.setJobGroup(group, name)
    done = threading.Event()
    with track(name) as update:
        tracker = sc.statusTracker()

        def report() -> None:
            finished = total = 0
            for job_id in tracker.getJobIdsForGroup(group):
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job else ():
                    stage = tracker.getStageInfo(stage_id)
                    if stage:
                        finished += stage.numCompletedTasks
                        total += stage.numTasks
            if total:
                update(finished, total)

        def poll() -> None:
            while not done.wait(0.25):
                report()

        poller = threading.Thread(target=poll, name="offctl-progress", daemon=True)
        poller.start()
        try:
            yield
        except OffctlError:
            raise
        except Exception as exc:  # noqa: BLE001 - Py4J and PySpark errors of a failed job
            raise SparkUnavailable(f"the Spark job failed while {name}: {_spark_error(exc)}") from None
        finally:
            done.set()
            poller.join()
        report()  # the bar ends full, however short the jobs were


def _spark_error(exc: Exception) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # A Python error in a task ends the Java trace with the Python exception line; show that.
    for line in reversed(lines):
        if "Error:" in line or "Exception:" in line:
            return line.strip()[:400]
    return (lines[-1] if lines else type(exc).__name__)[:400]


# --- files through Hadoop's FileSystem ---------------------------------------------------------------------


class Files:
    """Directories and small files on whatever file system a path names (local, HDFS, S3...)."""

    def __init__(self, spark) -> None:
        self.jvm = spark.sparkContext._jvm
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _path(self, path: str):
        p = self.jvm.org.apache.hadoop.fs.Path(path)
        return p, p.getFileSystem(self.conf)

    def exists(self, path: str) -> bool:
        p, fs = self._path(path)
        return bool(fs.exists(p))

    def children(self, path: str) -> list[str]:
        p, fs = self._path(path)
        if not fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(p))

    def write_text(self, path: str, text: str) -> None:
        p, fs = self._path(path)
        out = fs.create(p, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()

    def read_text(self, path: str) -> str:
        p, fs = self._path(path)
        stream = fs.open(p)
        try:
            return bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream)).decode("utf-8")
        finally:
            stream.close()

    def rename(self, src: str, dst: str) -> None:
        (s, fs), (d, _) = self._path(src), self._path(dst)
        if not fs.rename(s, d):
            raise UsageError(f"could not rename {src} to {dst}")

    def delete(self, path: str) -> None:
        p, fs = self._path(path)
        fs.delete(p, True)


def join(directory: str, name: str) -> str:
    return f"{directory.rstrip('/')}/{name}"


# --- snapshots ---------------------------------------------------------------------------------------------

# What a snapshot stores of each chunk's Snapshot, table by table (Spark SQL types).
SNAPSHOT_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "chunks": (
        ("chunk", "long"),
        ("captured_ms", "long"),
        ("kafka", "boolean"),
        ("running", "array<string>"),
        ("notes", "array<string>"),
        ("incomplete", "array<string>"),
        ("read_findings", "array<string>"),
        ("broker_apis", "string"),  # JSON: null before offctl read them (Snapshot.broker_apis)
        ("broker_apis_why", "string"),
    ),
    "nodes": (
        ("chunk", "long"),
        ("zk_root", "string"),
        ("spout_id", "string"),
        ("path", "string"),
        ("node_partition", "long"),
        ("folder_topic", "string"),
        ("data", "binary"),
        ("version", "long"),
        ("mtime_ms", "long"),
        ("trident", "string"),
        ("txid", "long"),
        ("txids", "long"),
        ("replay_txid", "long"),
        ("replay_data", "binary"),
        ("jstorm", "boolean"),  # null before offctl read JStorm's spouts
    ),
    "commits": (
        ("chunk", "long"),
        ("group", "string"),
        ("topic", "string"),
        ("partition", "long"),
        ("offset", "long"),
        ("metadata", "string"),
    ),
    "groups": (
        ("chunk", "long"),
        ("group", "string"),
        ("state", "string"),
        ("members", "long"),
        ("type", "string"),
        ("protocol", "string"),
    ),
    "logs": (
        ("chunk", "long"),
        ("topic", "string"),
        ("partition", "long"),
        ("log_start", "long"),
        ("log_end", "long"),
        ("leader", "string"),
        ("last_stable", "long"),
    ),  # last_stable: null before it was read
}


def schema(columns: Iterable[tuple[str, str]]):
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        "long": T.LongType(),
        "double": T.DoubleType(),
        "boolean": T.BooleanType(),
        "binary": T.BinaryType(),
        "array<string>": T.ArrayType(T.StringType()),
    }
    return T.StructType([T.StructField(c, kinds[t], True) for c, t in columns])


def _snapshot_rows(table: str, chunk: int, s: Snapshot) -> list[tuple]:
    if table == "chunks":
        return [
            (
                chunk,
                s.captured_ms,
                s.cluster is not None,
                sorted(s.running) if s.running is not None else None,
                list(s.notes),
                list(s.incomplete),
                [
                    json.dumps([m.key.store, m.key.consumer, m.key.zk_root, m.message, m.code, m.path])
                    for m in s.read_findings
                ],
                None if s.broker_apis is None else json.dumps(s.broker_apis),
                s.broker_apis_why,
            )
        ]
    if table == "nodes":
        return [
            (
                chunk,
                n.zk_root,
                n.spout_id,
                n.path,
                n.node_partition,
                n.folder_topic,
                bytearray(n.data),
                n.version,
                n.mtime_ms,
                n.trident,
                n.txid,
                n.txids,
                n.replay_txid,
                None if n.replay_data is None else bytearray(n.replay_data),
                n.jstorm,
            )
            for n in s.zk_nodes
        ]
    if table == "commits":
        return [(chunk, c.group, c.topic, c.partition, c.offset, c.metadata) for c in s.commits]
    if table == "groups":
        return [(chunk, g.group, g.state, g.members, g.type, g.protocol) for g in s.groups]
    return [
        (chunk, topic, p, log.log_start, log.log_end, log.leader, log.last_stable)
        for topic, parts in (s.cluster or {}).items()
        for p, log in parts.items()
    ]


def _snapshot_of(parts) -> Snapshot:
    """A chunk's Snapshot again, from its rows of each table (grouped by chunk)."""
    chunks, nodes, commits, groups, logs = (list(p) for p in parts)
    if not chunks:
        raise UsageError("a snapshot table names a chunk that its chunks table does not have: the snapshot is damaged")
    head = chunks[0]
    cluster: dict[str, dict[int, PartitionLog]] | None = {} if head["kafka"] else None
    for r in logs:
        cluster.setdefault(r["topic"], {})[r["partition"]] = PartitionLog(
            r["log_start"], r["log_end"], r["leader"], r["last_stable"]
        )
    return Snapshot(
        captured_ms=head["captured_ms"],
        # trident, txid, txids: null in snapshots saved before offctl read Trident state; replay_txid, replay_data
        # before it read what a transactional spout replays
        zk_nodes=tuple(
            sorted(
                (
                    ZkNode(
                        r["zk_root"],
                        r["spout_id"],
                        r["path"],
                        r["node_partition"],
                        r["folder_topic"],
                        bytes(r["data"]),
                        r["version"],
                        r["mtime_ms"],
                        r["trident"],
                        r["txid"],
                        r["txids"] or 0,
                        r["replay_txid"],
                        None if r["replay_data"] is None else bytes(r["replay_data"]),
                        jstorm=bool(r["jstorm"]),
                    )
                    for r in nodes
                ),
                key=lambda n: n.path,
            )
        ),
        commits=tuple(
            sorted(
                (KafkaCommit(r["group"], r["topic"], r["partition"], r["offset"], r["metadata"]) for r in commits),
                key=lambda c: (c.group, c.topic, c.partition),
            )
        ),
        # type, protocol: null in snapshots saved before offctl read the group's type
        groups=tuple(
            GroupState(r["group"], r["state"], r["members"], r["type"] or UNKNOWN_TYPE, r["protocol"]) for r in groups
        ),
        cluster=cluster,
        running=frozenset(head["running"]) if head["running"] is not None else None,
        notes=tuple(head["notes"]),
        incomplete=tuple(head["incomplete"]),
        read_findings=tuple(
            ReadFinding(ConsumerKey(store, consumer, root), *rest)
            for store, consumer, root, *rest in map(json.loads, head["read_findings"] or ())
        ),
        broker_apis=_broker_apis(head["broker_apis"]),
        broker_apis_why=_broker_apis_why(head),
    )


def _broker_apis(text: str | None) -> dict | None:
    """A snapshot's brokers' API versions, as Snapshot.broker_apis holds them (JSON keeps the spans as lists)."""
    if text is None:
        return None
    return {broker: {api: tuple(span) for api, span in apis.items()} for broker, apis in json.loads(text).items()}


def _broker_apis_why(head) -> str:
    """Why a snapshot that read Kafka holds no API versions: the read's reason, or its age (saved before offctl read
    them: the columns are null)."""
    if head["broker_apis_why"]:
        return head["broker_apis_why"]
    return "the snapshot was saved before offctl read them" if head["kafka"] and head["broker_apis"] is None else ""


def save_snapshot(spark, files: Files, reads, directory: str, meta: dict) -> str:
    """Write the chunks' reads as a new snapshot under `directory`; it appears (renamed into place) only
    once complete, so a failed save leaves no half snapshot for a later audit to read."""
    name = SNAPSHOT_PREFIX + iso_ms(meta["captured_ms"]).replace(":", "").replace("-", "")
    final, tmp = join(directory, name), join(directory, f".tmp-{name}")
    if files.exists(final):
        raise UsageError(f"{final} already exists")
    files.delete(tmp)
    for table, columns in SNAPSHOT_TABLES.items():
        rows = reads.flatMap(lambda kv, t=table: _snapshot_rows(t, *kv))
        spark.createDataFrame(rows, schema(columns)).write.mode("overwrite").parquet(join(tmp, table))
    files.write_text(join(tmp, "snapshot.json"), json.dumps(meta, indent=1) + "\n")
    files.rename(tmp, final)
    return final


def list_snapshots(files: Files, directory: str) -> list[str]:
    """Complete snapshots under `directory`, oldest first (their names sort by capture time)."""
    return [
        join(directory, name)
        for name in files.children(directory)
        if name.startswith(SNAPSHOT_PREFIX) and files.exists(join(join(directory, name), "snapshot.json"))
    ]


def load_snapshot(spark, files: Files, path: str):
    """(meta, RDD of (chunk, Snapshot)) of a saved snapshot."""
    try:
        meta = json.loads(files.read_text(join(path, "snapshot.json")))
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{path}/snapshot.json is not an offctl snapshot description") from None
    if meta.get("format") != SNAPSHOT_FORMAT or meta.get("version") != SNAPSHOT_VERSION:
        raise UsageError(f"{path} is not an offctl snapshot of version {SNAPSHOT_VERSION}")
    keyed = [
        spark.read.schema(schema(cols)).parquet(join(path, table)).rdd.map(lambda r: (r["chunk"], r))
        for table, cols in SNAPSHOT_TABLES.items()
    ]
    grouped = keyed[0].groupWith(*keyed[1:])
    return meta, grouped.map(lambda kv: (kv[0], _snapshot_of(kv[1])))
