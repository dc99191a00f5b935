"""Spark adapter of `offctl audit`: the session, progress, the job itself, snapshots and output files.

The work runs as RDDs of offctl's own objects: one Spark partition per chunk of consumers, read and
analyzed in the same task (offctl/audit.py), so no read goes through the driver and no shuffle is needed
until history joins several snapshots on the partition. Files go through Spark's writers and Hadoop's
FileSystem, so `--out` and snapshot directories may be local paths or hdfs://, s3a://, ... on a cluster.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from importlib import resources

from offctl.audit import (FILES, TASK_KEYS, AuditSettings, Tally, add_totals, audit_chunk, chunk_outputs, flat,
                          commit_period, history_counts, lag_totals, observations, partition_key, plan_chunks, process_name,
                          totals_dict, with_history, without_history, worst_first)
from offctl.core.judge import assumptions
from offctl.inspect import assess
from offctl.config import Connection
from offctl.errors import OffctlError, SparkUnavailable, UsageError
from offctl.inspect import Selection, open_stores, spout_roots, trident_list
from offctl.render import DOCUMENT_VERSION, commits_dict, hints_dict, retention_dict
from offctl.core.model import (UNKNOWN_TYPE, ConsumerKey, GroupState, KafkaCommit, ReadFinding, PartitionLog, Snapshot, ZkNode,
                               iso_ms)

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
        raise SparkUnavailable(f"Spark did not start ({type(exc).__name__}: {str(exc).strip()[:300]}). Spark needs "
                               f"Java 17: apt-get install openjdk-17-jre-headless") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark, True


def stop(spark) -> None:
    try:
        spark.stop()
    except Exception:  # noqa: BLE001 - stopping must never mask the real outcome
        pass


@contextmanager
def _job(sc, name: str, track: Track) -> Iterator[None]:
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
    "chunks": (("chunk", "long"), ("captured_ms", "long"), ("kafka", "boolean"), ("running", "array<string>"),
               ("notes", "array<string>"), ("incomplete", "array<string>"), ("read_findings", "array<string>")),
    "nodes": (("chunk", "long"), ("zk_root", "string"), ("spout_id", "string"), ("path", "string"),
              ("node_partition", "long"), ("folder_topic", "string"), ("data", "binary"), ("version", "long"),
              ("mtime_ms", "long"), ("trident", "string"), ("txid", "long"), ("txids", "long")),
    "commits": (("chunk", "long"), ("group", "string"), ("topic", "string"), ("partition", "long"),
                ("offset", "long"), ("metadata", "string")),
    "groups": (("chunk", "long"), ("group", "string"), ("state", "string"), ("members", "long"), ("type", "string"),
               ("protocol", "string")),
    "logs": (("chunk", "long"), ("topic", "string"), ("partition", "long"), ("log_start", "long"),
             ("log_end", "long"), ("leader", "string")),
}


def _schema(columns: Iterable[tuple[str, str]]):
    from pyspark.sql import types as T

    kinds = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType(), "boolean": T.BooleanType(),
             "binary": T.BinaryType(), "array<string>": T.ArrayType(T.StringType())}
    return T.StructType([T.StructField(c, kinds[t], True) for c, t in columns])


def _snapshot_rows(table: str, chunk: int, s: Snapshot) -> list[tuple]:
    if table == "chunks":
        return [(chunk, s.captured_ms, s.cluster is not None, sorted(s.running) if s.running is not None else None,
                 list(s.notes), list(s.incomplete),
                 [json.dumps([m.key.store, m.key.consumer, m.key.zk_root, m.message, m.code, m.path])
                  for m in s.read_findings])]
    if table == "nodes":
        return [(chunk, n.zk_root, n.spout_id, n.path, n.node_partition, n.folder_topic, bytearray(n.data),
                 n.version, n.mtime_ms, n.trident, n.txid, n.txids) for n in s.zk_nodes]
    if table == "commits":
        return [(chunk, c.group, c.topic, c.partition, c.offset, c.metadata) for c in s.commits]
    if table == "groups":
        return [(chunk, g.group, g.state, g.members, g.type, g.protocol) for g in s.groups]
    return [(chunk, topic, p, log.log_start, log.log_end, log.leader)
            for topic, parts in (s.cluster or {}).items() for p, log in parts.items()]


def _snapshot_of(parts) -> Snapshot:
    """A chunk's Snapshot again, from its rows of each table (grouped by chunk)."""
    chunks, nodes, commits, groups, logs = (list(p) for p in parts)
    if not chunks:
        raise UsageError("a snapshot table names a chunk that its chunks table does not have: the snapshot is "
                         "damaged")
    head = chunks[0]
    cluster: dict[str, dict[int, PartitionLog]] | None = {} if head["kafka"] else None
    for r in logs:
        cluster.setdefault(r["topic"], {})[r["partition"]] = PartitionLog(r["log_start"], r["log_end"], r["leader"])
    return Snapshot(
        captured_ms=head["captured_ms"],
        # trident, txid, txids: null in snapshots saved before offctl read Trident state
        zk_nodes=tuple(sorted((ZkNode(r["zk_root"], r["spout_id"], r["path"], r["node_partition"], r["folder_topic"],
                                      bytes(r["data"]), r["version"], r["mtime_ms"], r["trident"], r["txid"],
                                      r["txids"] or 0) for r in nodes),
                              key=lambda n: n.path)),
        commits=tuple(sorted((KafkaCommit(r["group"], r["topic"], r["partition"], r["offset"], r["metadata"])
                              for r in commits), key=lambda c: (c.group, c.topic, c.partition))),
        # type, protocol: null in snapshots saved before offctl read the group's type
        groups=tuple(GroupState(r["group"], r["state"], r["members"], r["type"] or UNKNOWN_TYPE, r["protocol"])
                     for r in groups),
        cluster=cluster,
        running=frozenset(head["running"]) if head["running"] is not None else None,
        notes=tuple(head["notes"]), incomplete=tuple(head["incomplete"]),
        read_findings=tuple(ReadFinding(ConsumerKey(store, consumer, root), *rest)
                            for store, consumer, root, *rest in map(json.loads, head["read_findings"] or ())))


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
        spark.createDataFrame(rows, _schema(columns)).write.mode("overwrite").parquet(join(tmp, table))
    files.write_text(join(tmp, "snapshot.json"), json.dumps(meta, indent=1) + "\n")
    files.rename(tmp, final)
    return final


def list_snapshots(files: Files, directory: str) -> list[str]:
    """Complete snapshots under `directory`, oldest first (their names sort by capture time)."""
    return [join(directory, name) for name in files.children(directory)
            if name.startswith(SNAPSHOT_PREFIX) and files.exists(join(join(directory, name), "snapshot.json"))]


def load_snapshot(spark, files: Files, path: str):
    """(meta, RDD of (chunk, Snapshot)) of a saved snapshot."""
    try:
        meta = json.loads(files.read_text(join(path, "snapshot.json")))
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{path}/snapshot.json is not an offctl snapshot description") from None
    if meta.get("format") != SNAPSHOT_FORMAT or meta.get("version") != SNAPSHOT_VERSION:
        raise UsageError(f"{path} is not an offctl snapshot of version {SNAPSHOT_VERSION}")
    keyed = [spark.read.schema(_schema(cols)).parquet(join(path, table)).rdd.map(lambda r: (r["chunk"], r))
             for table, cols in SNAPSHOT_TABLES.items()]
    grouped = keyed[0].groupWith(*keyed[1:])
    return meta, grouped.map(lambda kv: (kv[0], _snapshot_of(kv[1])))


# --- the audit ---------------------------------------------------------------------------------------------


@dataclass
class AuditResult:
    """What an audit found: totals on the driver, rows still in Spark to stream or write."""

    captured_ms: int
    tally: Tally
    worst: list[dict]  # the worst consumers, worst first
    top_topics: list[dict]
    history: dict | None  # counts by history status, or None without history
    snapshots_used: int
    rows: object  # RDD of partition dicts (with history)
    findings: object  # RDD of finding dicts
    consumers: object  # RDD of consumer dicts
    topics: object  # RDD of topic totals
    topologies: object  # RDD of topology totals
    written: list[str] = field(default_factory=list)
    snapshot: str | None = None
    timings: dict = field(default_factory=dict)
    spout_settings: str = ""  # the settings the findings assume (SpoutProfile.describe)
    read_by: list[str] = field(default_factory=list)  # host:pid of every process that read a chunk
    driver: str = ""  # host:pid of the driver

    def document_parts(self) -> tuple[dict, dict[str, Iterable[dict]], dict]:
        """inspect's JSON document, in parts to stream: head, sections of rows, tail."""
        def rows() -> Iterator[dict]:
            for r in self.rows.toLocalIterator():
                yield {k: v for k, v in r.items() if k not in TASK_KEYS}

        head = {"document_version": DOCUMENT_VERSION, "captured_at": iso_ms(self.captured_ms)}
        sections = {"partitions": rows(), "findings": self.findings.toLocalIterator(),
                    "consumers": self.consumers.toLocalIterator(), "topics": self.topics.toLocalIterator(),
                    "topologies": self.topologies.toLocalIterator()}
        tail = {"hints": hints_dict(self.tally.by_code), "summary": self.summary(), "notes": self.tally.notes, "incomplete": self.tally.incomplete,
                "checks_skipped": self.tally.checks_skipped, "spout_settings": self.spout_settings,
                "processing_guarantee": commits_dict(self.tally.commits),
                "offsets_retention": retention_dict(self.tally.offsets_retention), "read_by": self.read_by, "driver": self.driver}
        return head, sections, tail

    def summary(self) -> dict:
        return {**self.tally.summary(), "history": self.history, "snapshots": self.snapshots_used}


def _list_consumers(conn: Connection, selection: Selection) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """spout ids per zkRoot (the driver's one cheap read: the roots' children), the groups --all-groups
    lists besides those named, and notes."""
    spouts: dict[str, list[str]] = {}
    notes: list[str] = []
    listed: list[str] = []
    if selection.all_groups and conn.bootstrap_servers:
        with open_stores(Connection(bootstrap_servers=conn.bootstrap_servers, kafka_config=conn.kafka_config,
                                    timeout=conn.timeout), targeted=True) as (_, kafka):
            listed = [g for g in kafka.list_groups() if g not in selection.groups]
            notes += kafka.notes
    if not conn.zk:
        return spouts, listed, notes
    with open_stores(Connection(zk=conn.zk, zk_auth=conn.zk_auth, timeout=conn.timeout)) as (zk, _):
        for root in spout_roots(conn, selection):
            ids = zk.spout_ids(root)
            if ids is None:
                notes.append(f"zkRoot {root} does not exist")
            else:
                spouts[root] = list(selection.spouts) or ids
    return spouts, listed, notes


def run(spark, conn: Connection, settings: AuditSettings, track: Track = no_track) -> AuditResult:
    """Read (or load) a fleet's offsets, analyze them, add history, write files and snapshot; the result keeps
    its rows in Spark for the caller to stream."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    files = Files(spark)
    selection, thresholds, window, estimates = settings.selection, settings.thresholds, settings.window, settings.estimates
    allowed = settings.allowed_lag
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    earlier: list[str] = []
    if settings.from_snapshots:
        saved = list_snapshots(files, settings.from_snapshots)
        if not saved:
            raise UsageError(f"--from-snapshots {settings.from_snapshots}: no complete snapshot there")
        *earlier, latest = saved
        meta, loaded = load_snapshot(spark, files, latest)
        # no servers: the reads that follow the analysis are not made (each lagging partition's time lag `unread`)
        tasks = loaded.map(lambda kv: (kv[0], kv[1], chunk_outputs(assess(kv[1], None, thresholds))))
        captured_ms, running = meta["captured_ms"], meta.get("running")
        running = frozenset(running) if running is not None else None
        driver_notes = [f"audited from snapshot {latest} (captured {meta['captured_at']}), no servers read"]
    else:
        spouts, listed, driver_notes = _list_consumers(conn, selection)
        chunks = plan_chunks(spouts, list(selection.groups), sc.defaultParallelism, listed,
                             trident_roots=trident_list(conn, selection))
        captured_ms = int(time.time() * 1000)
        # each task reads its chunk and runs inspect's pipeline on it, with its own clients (audit.audit_chunk)
        tasks = (sc.parallelize([(c.index, c) for c in chunks], max(1, len(chunks)))
                 .map(lambda ic: (ic[0], *audit_chunk(conn, selection, ic[1], int(time.time() * 1000), thresholds,
                                                      estimates)))
                 .map(lambda t: (t[0], t[1], chunk_outputs(t[2]))))
        running = None
        if settings.save_snapshot:
            earlier = list_snapshots(files, settings.save_snapshot)
    tasks = tasks.persist(StorageLevel.MEMORY_AND_DISK)
    reads = tasks.map(lambda t: (t[0], t[1]))
    with _job(sc, "reading ZooKeeper and Kafka" if not settings.from_snapshots else "loading the snapshot", track):
        readers = sorted(r for r in reads.map(lambda kv: kv[1].reader).distinct().collect() if r)
    timings["read"] = time.perf_counter() - clock

    clock = time.perf_counter()
    analyzed = tasks.map(lambda t: t[2])
    with _job(sc, "analyzing", track):
        tally = analyzed.map(lambda o: o[0]).fold(Tally(), lambda a, b: a + b)
        if running is None:
            # Every chunk read Storm's root; the union is what the history rules ask about.
            found = reads.map(lambda kv: kv[1].running).filter(lambda r: r is not None).take(1)
            running = found[0] if found else None
    tally.notes[:0] = [n for n in driver_notes if n not in tally.notes]
    timings["analyze"] = time.perf_counter() - clock

    clock = time.perf_counter()
    snapshot_path = None
    if settings.save_snapshot:
        meta = {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION, "captured_ms": captured_ms,
                "captured_at": iso_ms(captured_ms), "zk": conn.zk, "zk_roots": list(conn.zk_roots),
                "trident_roots": list(conn.trident_roots),
                "bootstrap_servers": conn.bootstrap_servers, "storm_root": conn.storm_root,
                "groups": list(selection.groups), "spouts": list(selection.spouts), "topic": selection.topic,
                "running": sorted(running) if running is not None else None,
                "partitions": tally.partitions}
        with _job(sc, "saving the snapshot", track):
            snapshot_path = save_snapshot(spark, files, reads, settings.save_snapshot, meta)
        timings["snapshot"] = time.perf_counter() - clock

    clock = time.perf_counter()
    earlier = earlier[-(window - 1):]
    rows = analyzed.flatMap(lambda o: o[1])
    history = None
    if earlier:
        past = None
        for path in earlier:
            _, snap = load_snapshot(spark, files, path)
            obs = snap.flatMap(lambda kv: observations(kv[1]))
            past = obs if past is None else past.union(obs)
        rows = (rows.map(lambda r: (partition_key(r), r))
                .leftOuterJoin(past.groupByKey())
                .map(lambda kv: with_history(kv[1][0], kv[1][1] or (), running, window, allowed,
                                             commit_period(thresholds, kv[1][0]))))
    else:
        rows = rows.map(without_history)
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    findings = analyzed.flatMap(lambda o: o[2])
    consumers = analyzed.flatMap(lambda o: o[3])
    topics = (rows.mapPartitions(lambda it: lag_totals(it, "topic").items()).reduceByKey(add_totals)
              .map(lambda kv: totals_dict("topic", *kv)).persist())
    topologies = (rows.mapPartitions(lambda it: lag_totals(it, "topology_name").items()).reduceByKey(add_totals)
                  .map(lambda kv: totals_dict("topology_name", *kv)).persist())
    with _job(sc, "adding up lag per topic and topology" + (" and history" if earlier else ""), track):
        worst = consumers.takeOrdered(settings.top, key=worst_first)
        top_topics = topics.takeOrdered(settings.top, key=lambda t: (-t["total_lag"], t["topic"] or ""))
        if earlier:
            history = history_counts(rows.map(lambda r: r["history_status"]).countByValue())
    timings["history and totals" if earlier else "totals"] = time.perf_counter() - clock

    result = AuditResult(captured_ms=captured_ms, tally=tally, worst=worst, top_topics=top_topics, history=history,
                         snapshots_used=len(earlier) + 1, rows=rows, findings=findings, consumers=consumers,
                         topics=topics, topologies=topologies, snapshot=snapshot_path, timings=timings,
                         spout_settings=assumptions(tally.profiles, thresholds), read_by=readers,
                         driver=process_name())
    if settings.out:
        clock = time.perf_counter()
        with _job(sc, f"writing {settings.file_format} files to {settings.out}", track):
            result.written = write_files(spark, files, result, settings.out, settings.file_format)
        timings["write"] = time.perf_counter() - clock
    return result


def write_files(spark, files: Files, result: AuditResult, out: str, fmt: str) -> list[str]:
    """Each table of audit.FILES under `out` in `fmt`, then summary.json, last, as the mark of a complete audit."""
    files.delete(join(out, "summary.json"))  # a reader must not take an older summary for this audit
    sources = {"partitions": result.rows, "findings": result.findings, "consumers": result.consumers,
               "topics": result.topics, "topologies": result.topologies}
    written = []
    for name, (_, columns) in FILES.items():
        table = sources[name].map(lambda row, n=name: flat(n, {**row, "captured_at": iso_ms(row.get("captured_ms"))}
                                                        if n == "partitions" else row))
        writer = spark.createDataFrame(table, _schema((c, t) for c, t, _ in columns)).write.mode("overwrite")
        if fmt == "csv":
            writer = writer.option("header", True)
        writer.format(fmt).save(join(out, name))
        written.append(join(out, name))
    summary = {"captured_at": iso_ms(result.captured_ms), "format": fmt, "files": written,
               "summary": result.summary(), "notes": result.tally.notes, "incomplete": result.tally.incomplete,
               "checks_skipped": result.tally.checks_skipped}
    files.write_text(join(out, "summary.json"), json.dumps(summary, indent=1) + "\n")
    return written + [join(out, "summary.json")]

