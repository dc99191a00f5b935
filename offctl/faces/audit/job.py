"""`offctl audit`, the driver: check the command line, start Spark (or take spark-submit's), run the job over the
fleet's chunks, add history and totals, write files and snapshots, and repair through reset's safe writer.

The work runs as RDDs of offctl's own objects: one Spark partition per chunk of consumers, read and analyzed in the
same task by the Spark-free functions of offctl/faces/audit/tasks.py (inspect's pipeline), so no read goes through the
driver and no shuffle is needed until history joins several snapshots on the partition. offctl/adapters/spark.py is
the adapter to Spark itself (the session, jobs and their progress, files, snapshots).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from offctl.adapters import spark as adapter
from offctl.core.records.model import iso_ms
from offctl.core.results.audit import AuditResult, Tally, partition_key
from offctl.core.rules.judge import assumptions
from offctl.core.time.history import joined
from offctl.errors import LEFT_OUT, NOT_CONFIRMED, Interrupted, InterruptedWrite, UsageError
from offctl.faces.audit.repairs import repair_all, repair_codes, repairs
from offctl.faces.audit.tasks import (
    FILES,
    add_totals,
    audit_chunk,
    chunk_outputs,
    commit_period,
    consumer_catch_up,
    flat,
    history_counts,
    lag_totals,
    observations,
    plan_chunks,
    process_name,
    totals_dict,
    with_catch_up,
    with_history,
    without_history,
    worst_first,
)
from offctl.pipeline.assess import assess
from offctl.pipeline.inspect import findings_exit_code
from offctl.pipeline.read import jstorm_list, open_stores, spout_roots, trident_list
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Safety, Selection


def exit_code(tally: Tally, fail_on: str, repair_codes: Iterable[int] = ()) -> int:
    """6 or 130 when the repairs were interrupted (after a write, or before any), 5 when a repair conflicted or
    failed verification, 3 when a consumer to repair could not be read, 4 when one was refused, 8 when the
    repair was not confirmed, else inspect's: 3 when part of a store could not be read, 1 on findings at or
    above `fail_on`; else 7 when a repair left a partition out, or a consumer could not be planned; 0."""
    codes = set(repair_codes)
    for code in (InterruptedWrite.exit_code, Interrupted.exit_code, 5, 3, 4, NOT_CONFIRMED):
        if code in codes:
            return code
    found = findings_exit_code(bool(tally.incomplete), tally.worst(), fail_on)
    return found or (LEFT_OUT if codes - {0} else 0)


def check_options(
    *,
    live: bool,
    from_snapshots: str | None,
    save_snapshot: str | None,
    repair: frozenset[str],
    execute: bool,
    window: int,
) -> None:
    """Refuse combinations that cannot work, before Spark starts."""
    if from_snapshots and live:
        raise UsageError(
            "--from-snapshots audits saved snapshots with no servers: drop --zk, --zk-root, "
            "--bootstrap-servers and --group, or drop --from-snapshots"
        )
    if from_snapshots and save_snapshot:
        raise UsageError("--save-snapshot saves what a live audit read; with --from-snapshots nothing is read")
    if repair and from_snapshots:
        raise UsageError("--repair needs the live stores: it re-reads and rewrites them")
    if execute and not repair:
        raise UsageError("--execute applies a repair: give --repair out-of-range")
    if window < 2:
        raise UsageError(f"--window {window}: history needs at least 2 snapshots")


# --- the whole audit ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditSettings:
    reading: Reading = Reading()  # each consumer judged by its own profile; the time-lag budget is each task's
    out: str | None = None
    file_format: str = "parquet"
    save_snapshot: str | None = None
    from_snapshots: str | None = None
    window: int = 10
    allowed_lag: int = 0  # lag that counts as caught up in the history rules
    top: int = 10
    master: str | None = None
    spark_conf: tuple[str, ...] = ()
    repair: tuple[str, ...] = ()
    safety: Safety | None = None  # None: dry run with the defaults


@dataclass
class Audited:
    result: AuditResult
    repairs: list  # (RepairResult, exit code) per consumer repaired
    startup_s: float | None  # Spark start-up, when offctl started Spark


def parse_spark_conf(pairs: Iterable[str]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--spark-conf {pair.split('=')[0]!r}...: expected KEY=VALUE")
        conf[key.strip()] = value.strip()
    return conf


@contextmanager
def audit(
    settings: AuditSettings, *, track=None, confirm_all: Callable[[list], bool] = lambda plans: False
) -> Iterator[Audited]:
    """Check the audit's own options, start Spark (or use spark-submit's), run the audit and any repair; Spark stays
    up inside the block so the caller can stream the rows, and stops after it if offctl started it."""
    codes = repair_codes(settings.repair)
    conn, sel = settings.reading.conn, settings.reading.selection
    live = bool(conn.zk or conn.zk_roots or conn.bootstrap_servers or sel.spouts or sel.groups)
    safety = settings.safety or Safety()
    check_options(
        live=live,
        from_snapshots=settings.from_snapshots,
        save_snapshot=settings.save_snapshot,
        repair=codes,
        execute=safety.execute,
        window=settings.window,
    )
    if codes and not conn.bootstrap_servers:
        raise UsageError("--repair needs --bootstrap-servers (log offsets bound every target)")
    conf = parse_spark_conf(settings.spark_conf)
    started = time.perf_counter()
    session, owned = adapter.start(settings.master, conf)
    startup = time.perf_counter() - started if owned else None
    try:
        result = run(session, settings, track or adapter.no_track)
        done: list = []
        if codes:
            found = result.findings.filter(lambda f: f["code"] in codes).collect()
            done = repair_all(conn, repairs(found, codes), safety, confirm_all, settings.reading.profiles)
        yield Audited(result, done, startup)
    finally:
        if owned:
            adapter.stop(session)


# --- the Spark job -----------------------------------------------------------------------------------------


def _list_consumers(conn: Connection, selection: Selection) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """spout ids per zkRoot (the driver's one cheap read: the roots' children), the groups --all-groups
    lists besides those named, and notes."""
    spouts: dict[str, list[str]] = {}
    notes: list[str] = []
    listed: list[str] = []
    if selection.all_groups and conn.bootstrap_servers:
        with open_stores(
            Connection(bootstrap_servers=conn.bootstrap_servers, kafka_config=conn.kafka_config, timeout=conn.timeout),
            targeted=True,
        ) as (_, kafka):
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


@dataclass(frozen=True)
class _Source:
    """What the audit reads from: its tasks (an RDD of (chunk index, ChunkRead, chunk outputs)), when it was
    captured, the running topologies when known already, the driver's notes, and the earlier snapshots that give
    history."""

    tasks: object
    captured_ms: int
    running: frozenset[str] | None
    notes: list[str]
    earlier: list[str]


def run(spark, settings: AuditSettings, track: adapter.Track = adapter.no_track) -> AuditResult:
    """Read (or load) a fleet's offsets, analyze them, add history, write files and snapshot; the result keeps
    its rows in Spark for the caller to stream."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    files = adapter.Files(spark)
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    if settings.from_snapshots:
        source = _saved_source(spark, files, settings)
    else:
        source = _live_source(sc, files, settings)
    tasks = source.tasks.persist(StorageLevel.MEMORY_AND_DISK)
    reads = tasks.map(lambda t: (t[0], t[1]))
    with adapter.job(
        sc, "reading ZooKeeper and Kafka" if not settings.from_snapshots else "loading the snapshot", track
    ):
        readers = sorted(r for r in reads.map(lambda kv: kv[1].reader).distinct().collect() if r)
    timings["read"] = time.perf_counter() - clock

    clock = time.perf_counter()
    analyzed, tally, running = _analyze(sc, tasks, reads, source.running, track)
    tally.notes[:0] = [n for n in source.notes if n not in tally.notes]
    timings["analyze"] = time.perf_counter() - clock

    clock = time.perf_counter()
    snapshot_path = None
    if settings.save_snapshot:
        meta = _snapshot_meta(settings.reading, source.captured_ms, running, tally.partitions)
        with adapter.job(sc, "saving the snapshot", track):
            snapshot_path = adapter.save_snapshot(spark, files, reads, settings.save_snapshot, meta)
        timings["snapshot"] = time.perf_counter() - clock

    clock = time.perf_counter()
    earlier = source.earlier[-(settings.window - 1) :]
    rows = _rows_with_history(spark, files, analyzed.flatMap(lambda o: o[1]), earlier, running, settings)
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    findings = analyzed.flatMap(lambda o: o[2])
    consumers = analyzed.flatMap(lambda o: o[3])
    if earlier:  # their catch-up over the snapshots' history, as their partitions'
        consumers = _consumers_with_catch_up(consumers, rows).persist(StorageLevel.MEMORY_AND_DISK)
    topics, topologies = _lag_totals(rows)
    with adapter.job(sc, "adding up lag per topic and topology" + (" and history" if earlier else ""), track):
        worst = consumers.takeOrdered(settings.top, key=worst_first)
        top_topics = topics.takeOrdered(settings.top, key=lambda t: (-t["total_lag"], t["topic"] or ""))
        history = history_counts(rows.map(lambda r: r["history_status"]).countByValue()) if earlier else None
    timings["history and totals" if earlier else "totals"] = time.perf_counter() - clock

    result = AuditResult(
        captured_ms=source.captured_ms,
        tally=tally,
        worst=worst,
        top_topics=top_topics,
        history=history,
        snapshots_used=len(earlier) + 1,
        rows=rows,
        findings=findings,
        consumers=consumers,
        topics=topics,
        topologies=topologies,
        snapshot=snapshot_path,
        timings=timings,
        spout_settings=assumptions(tally.profiles, settings.reading.profiles),
        read_by=readers,
        driver=process_name(),
    )
    if settings.out:
        clock = time.perf_counter()
        with adapter.job(sc, f"writing {settings.file_format} files to {settings.out}", track):
            result = replace(result, written=write_files(spark, files, result, settings.out, settings.file_format))
        timings["write"] = time.perf_counter() - clock
    return result


def _saved_source(spark, files: adapter.Files, settings: AuditSettings) -> _Source:
    """The audit of saved snapshots: the latest is analyzed again, with no servers (the reads that follow the
    analysis are not made: each lagging partition's time lag is `unread`); the ones before it give history."""
    reading = settings.reading
    saved = adapter.list_snapshots(files, settings.from_snapshots)
    if not saved:
        raise UsageError(f"--from-snapshots {settings.from_snapshots}: no complete snapshot there")
    *earlier, latest = saved
    meta, loaded = adapter.load_snapshot(spark, files, latest)
    tasks = loaded.map(lambda kv: (kv[0], kv[1], chunk_outputs(assess(kv[1], None, reading))))
    running = meta.get("running")
    return _Source(
        tasks,
        meta["captured_ms"],
        frozenset(running) if running is not None else None,
        [f"audited from snapshot {latest} (captured {meta['captured_at']}), no servers read"],
        earlier,
    )


def _live_source(sc, files: adapter.Files, settings: AuditSettings) -> _Source:
    """The audit of the live stores: the driver lists the consumers and plans their chunks, and each task reads
    its chunk and runs inspect's pipeline on it, with its own clients (audit_tasks.audit_chunk); the snapshots
    saved before under --save-snapshot give history."""
    reading = settings.reading
    conn, selection = reading.conn, reading.selection
    spouts, listed, driver_notes = _list_consumers(conn, selection)
    chunks = plan_chunks(
        spouts,
        list(selection.groups),
        sc.defaultParallelism,
        listed,
        trident_roots=trident_list(conn, selection),
        jstorm_roots=jstorm_list(conn, selection),
    )
    captured_ms = int(time.time() * 1000)
    tasks = (
        sc.parallelize([(c.index, c) for c in chunks], max(1, len(chunks)))
        .map(lambda ic: (ic[0], *audit_chunk(reading, ic[1], int(time.time() * 1000))))
        .map(lambda t: (t[0], t[1], chunk_outputs(t[2])))
    )
    earlier = adapter.list_snapshots(files, settings.save_snapshot) if settings.save_snapshot else []
    return _Source(tasks, captured_ms, None, driver_notes, earlier)


def _analyze(sc, tasks, reads, running: frozenset[str] | None, track: adapter.Track):
    """The analysis job: the tasks' outputs, their tally, and the running topologies (from the first chunk that
    read Storm's root, when the source did not say)."""
    analyzed = tasks.map(lambda t: t[2])
    with adapter.job(sc, "analyzing", track):
        tally = analyzed.map(lambda o: o[0]).fold(Tally(), lambda a, b: a + b)
        if running is None:
            # Every chunk read Storm's root; the union is what the history rules ask about.
            found = reads.map(lambda kv: kv[1].running).filter(lambda r: r is not None).take(1)
            running = found[0] if found else None
    return analyzed, tally, running


def _snapshot_meta(reading: Reading, captured_ms: int, running: frozenset[str] | None, partitions: int) -> dict:
    """What a saved snapshot says of itself: when and from where it was read, and what was selected."""
    conn, selection = reading.conn, reading.selection
    return {
        "format": adapter.SNAPSHOT_FORMAT,
        "version": adapter.SNAPSHOT_VERSION,
        "captured_ms": captured_ms,
        "captured_at": iso_ms(captured_ms),
        "zk": conn.zk,
        "zk_roots": list(conn.zk_roots),
        "trident_roots": list(conn.trident_roots),
        "jstorm_roots": list(conn.jstorm_roots),
        "bootstrap_servers": conn.bootstrap_servers,
        "storm_root": conn.storm_root,
        "groups": list(selection.groups),
        "spouts": list(selection.spouts),
        "topic": selection.topic,
        "running": sorted(running) if running is not None else None,
        "partitions": partitions,
    }


def _rows_with_history(
    spark, files: adapter.Files, rows, earlier: list[str], running: frozenset[str] | None, settings: AuditSettings
):
    """The partition rows with their history status, joined on the partition with their observations in the
    earlier snapshots; without any, each row says it has none."""
    if not earlier:
        return rows.map(without_history)
    window, allowed, profiles = settings.window, settings.allowed_lag, settings.reading.profiles
    past = None
    for path in earlier:
        _, snap = adapter.load_snapshot(spark, files, path)
        obs = snap.flatMap(lambda kv: observations(kv[1]))
        past = obs if past is None else past.union(obs)
    return (
        rows.map(lambda r: (partition_key(r), r))
        .leftOuterJoin(past.groupByKey())
        .map(
            lambda kv: with_history(
                kv[1][0], kv[1][1] or (), running, window, allowed, commit_period(profiles, kv[1][0])
            )
        )
    )


def _consumers_with_catch_up(consumers, rows):
    """The consumer dicts with their catch-up over the snapshots' history: their partition rows' (with_history),
    `joined` per consumer (offctl.core.time.history)."""
    ups = rows.map(consumer_catch_up).reduceByKey(joined)
    return (
        consumers.map(lambda c: ((c["store"], c["consumer"], c["zk_root"]), c))
        .leftOuterJoin(ups)
        .map(lambda kv: with_catch_up(*kv[1]))
    )


def _lag_totals(rows):
    """The lag totals per topic and per topology, as RDDs kept for the top figures and the files."""
    topics = (
        rows.mapPartitions(lambda it: lag_totals(it, "topic").items())
        .reduceByKey(add_totals)
        .map(lambda kv: totals_dict("topic", *kv))
        .persist()
    )
    topologies = (
        rows.mapPartitions(lambda it: lag_totals(it, "topology_name").items())
        .reduceByKey(add_totals)
        .map(lambda kv: totals_dict("topology_name", *kv))
        .persist()
    )
    return topics, topologies


def write_files(spark, files: adapter.Files, result: AuditResult, out: str, fmt: str) -> list[str]:
    """Each table of audit.FILES under `out` in `fmt`, then summary.json, last, as the mark of a complete audit."""
    files.delete(adapter.join(out, "summary.json"))  # a reader must not take an older summary for this audit
    sources = {
        "partitions": result.rows,
        "findings": result.findings,
        "consumers": result.consumers,
        "topics": result.topics,
        "topologies": result.topologies,
    }
    written = []
    for name, (_, columns) in FILES.items():
        table = sources[name].map(
            lambda row, n=name: flat(
                n, {**row, "captured_at": iso_ms(row.get("captured_ms"))} if n == "partitions" else row
            )
        )
        writer = spark.createDataFrame(table, adapter.schema((c, t) for c, t, _ in columns)).write.mode("overwrite")
        if fmt == "csv":
            writer = writer.option("header", True)
        writer.format(fmt).save(adapter.join(out, name))
        written.append(adapter.join(out, name))
    summary = {
        "captured_at": iso_ms(result.captured_ms),
        "format": fmt,
        "files": written,
        "summary": result.summary(),
        "notes": result.tally.notes,
        "incomplete": result.tally.incomplete,
        "checks_skipped": result.tally.checks_skipped,
    }
    files.write_text(adapter.join(out, "summary.json"), json.dumps(summary, indent=1) + "\n")
    return written + [adapter.join(out, "summary.json")]
