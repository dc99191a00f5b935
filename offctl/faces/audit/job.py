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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from offctl import interrupts
from offctl.adapters import spark as adapter
from offctl.core.plans.targets import Scope, Target
from offctl.core.records.model import KAFKA, TRIDENT, ZOOKEEPER, ConsumerKey, Thresholds, iso_ms
from offctl.core.rules.judge import assumptions
from offctl.core.rules.profiles import Profiles
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import LEFT_OUT, NOT_CONFIRMED, Interrupted, InterruptedWrite, OffctlError, UsageError
from offctl.faces.audit.tasks import (
    FILES,
    TASK_KEYS,
    Tally,
    add_totals,
    audit_chunk,
    chunk_outputs,
    commit_period,
    flat,
    history_counts,
    lag_totals,
    observations,
    partition_key,
    plan_chunks,
    process_name,
    totals_dict,
    with_history,
    without_history,
    worst_first,
)
from offctl.pipeline import Estimates, Selection, assess, findings_exit_code, open_stores, spout_roots, trident_list
from offctl.render.output import DOCUMENT_VERSION, commits_dict, hints_dict, retention_dict
from offctl.repair.reset import ResetRequest, Safety, outcome_exit_code, reset
from offctl.settings.connection import Connection
from offctl.settings.run import validate

# --repair values: the finding codes whose safe target is unambiguous (the log start), and a name for both.
REPAIRABLE = ("OFFSET_BELOW_LOG_START", "OFFSET_ABOVE_LOG_END")
REPAIR_CHOICES = {"out-of-range": REPAIRABLE, **{code: (code,) for code in REPAIRABLE}}

# --- repair ----------------------------------------------------------------------------------------------


def repair_codes(choices: Iterable[str]) -> frozenset[str]:
    codes: set[str] = set()
    for choice in choices:
        if choice not in REPAIR_CHOICES:
            raise UsageError(
                f"--repair {choice!r}: offctl repairs only where the safe target is unambiguous: "
                f"{', '.join(REPAIR_CHOICES)}. Fix other findings with `offctl reset`"
            )
        codes.update(REPAIR_CHOICES[choice])
    return frozenset(codes)


@dataclass(frozen=True)
class Repair:
    """The partitions of one consumer an audit found out of range."""

    key: ConsumerKey
    partitions: frozenset[tuple[str, int]]
    codes: frozenset[str]


def repairs(findings: Iterable[Mapping], codes: frozenset[str]) -> list[Repair]:
    """Group the findings to repair by consumer (finding dicts as the audit wrote them)."""
    found: dict[ConsumerKey, tuple[set, set]] = {}
    for f in findings:
        if f["code"] in codes and f["topic"] is not None and f["partition"] is not None:
            key = ConsumerKey(f["store"], f["consumer"], f["zk_root"])
            parts, seen = found.setdefault(key, (set(), set()))
            parts.add((f["topic"], f["partition"]))
            seen.add(f["code"])
    return [
        Repair(key, frozenset(parts), frozenset(seen))
        for key, (parts, seen) in sorted(found.items(), key=lambda kv: (kv[0].store, str(kv[0])))
    ]


def repair_request(repair: Repair) -> ResetRequest:
    """The reset request that moves one consumer's out-of-range partitions to the log start."""
    topics: dict[str, set[int]] = {}
    for t, p in repair.partitions:
        topics.setdefault(t, set()).add(p)
    target = Target("repair", repair=repair.partitions, source="audit --repair " + ",".join(sorted(repair.codes)))
    common = dict(scope=Scope({t: frozenset(ps) for t, ps in sorted(topics.items())}), target=target)
    if repair.key.store == ZOOKEEPER:
        return ResetRequest(spout=repair.key.consumer, zk_root=repair.key.zk_root, **common)
    if repair.key.store == TRIDENT:  # as `offctl reset --trident ID --trident-root ROOT` plans it
        return ResetRequest(trident=repair.key.consumer, zk_root=repair.key.zk_root, **common)
    if repair.key.store == KAFKA:
        return ResetRequest(groups=(repair.key.consumer,), **common)
    raise UsageError(f"{repair.key}: offctl does not know how to repair a consumer of store {repair.key.store!r}")


def _declined(repair: Repair, exc: OffctlError):
    """A consumer the repair cannot plan: an empty plan whose result says why, with the error's exit code."""
    from offctl.core.plans.plan import Plan
    from offctl.repair.reset import RepairResult

    request_target = Target(
        "repair", repair=repair.partitions, source="audit --repair " + ",".join(sorted(repair.codes))
    )
    why = f"not repaired: {exc}"
    return RepairResult(
        Plan("reset", repair.key, request_target.describe(), (), 0, warnings=(why,)),
        error=why,
        error_code=exc.exit_code,
    )


def plan_repair(conn: Connection, repair: Repair, safety, profile: SpoutProfile = SpoutProfile()) -> tuple[object, int]:
    """One consumer's repair planned as a dry run through reset (fresh reads, guards), or declined with the
    reason when it cannot be planned: one consumer's problem never stops the others (nor crashes the audit)."""
    try:
        outcome = reset(conn, repair_request(repair), replace(safety, execute=False), lambda plans: False, profile)[0]
    except (Interrupted, KeyboardInterrupt):
        raise
    except OffctlError as exc:
        outcome = _declined(repair, exc)
    return outcome, outcome_exit_code(outcome)


def nothing_to_repair(choices: Iterable[str]) -> str:
    """What `audit --repair` says when the audit found nothing it repairs (stderr, and the JSON's repair_note)."""
    return (
        f"nothing to repair: no {' or '.join(sorted(repair_codes(choices)))} finding in this audit; "
        f"nothing was planned or written"
    )


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


# --- repair through reset's safe writer ---------------------------------------------------------------------


def _writes(plan) -> list[tuple]:
    return [(c.path, c.topic, c.partition, c.before, c.after) for c in plan.writes]


def repair_all(
    conn: Connection, items: Sequence[Repair], safety, confirm_all, settings: SpoutProfile | Profiles = SpoutProfile()
) -> list[tuple[object, int]]:
    """Plan every consumer's repair (fresh reads, guards), and with safety.execute apply them: one confirmation for
    all, then each consumer through reset's safe writer, written only if its plan is still the one shown; a group's
    commits are verified against its spout profile (`settings`: one for all, or the Profiles each consumer's resolves
    from), as its findings were made. Returns (RepairResult, exit code) per consumer; one consumer's failure does not
    stop the others, an interrupt does."""
    profiles = [settings if isinstance(settings, SpoutProfile) else settings.resolve(r.key)[1].spout for r in items]
    planned = [plan_repair(conn, r, safety, p) for r, p in zip(items, profiles)]
    if not safety.execute:
        return planned
    dry = [o for o, _ in planned]
    runnable = _runnable(dry)
    if runnable and not confirm_all([dry[i].plan for i in sorted(runnable)]):
        return [(replace(o, declined=True), NOT_CONFIRMED) if i in runnable else planned[i] for i, o in enumerate(dry)]
    return _write_repairs(conn, items, planned, runnable, safety, profiles)


def _runnable(dry: Sequence) -> set[int]:
    """Which planned repairs (by index) would write: planned without an error or a refusal, with writes."""
    return {i for i, o in enumerate(dry) if not o.error and not o.plan.refused and o.plan.writes}


def _write_repairs(
    conn: Connection,
    items: Sequence[Repair],
    planned: list[tuple[object, int]],
    runnable: set[int],
    safety,
    profiles: Sequence[SpoutProfile],
) -> list[tuple[object, int]]:
    """Write the confirmed repairs one consumer after another; the others keep their plan's result, and after an
    interrupt none is written."""
    done = []
    for i, (item, (shown, _), profile) in enumerate(zip(items, planned, profiles)):
        if i not in runnable:
            done.append(planned[i])
        elif interrupts.received():  # Ctrl-C during or after an earlier repair: no more writes
            done.append(_interrupted(shown, wrote=any(o.executed for o, _ in done)))
        else:
            done.append(_write_repair(conn, item, shown, safety, profile))
    return done


def _interrupted(shown, *, wrote: bool) -> tuple[object, int]:
    """A repair left unwritten by an interrupt: exit 6 when an earlier repair wrote, else 130."""
    return (
        replace(shown, problems=("not written: interrupted (Ctrl-C or SIGTERM)",)),
        InterruptedWrite.exit_code if wrote else Interrupted.exit_code,
    )


def _write_repair(conn: Connection, item: Repair, shown, safety, profile: SpoutProfile) -> tuple[object, int]:
    """One consumer's repair through reset's safe writer, written only if the plan read again is the one shown
    (exit 5 when it changed); a failure is this consumer's result, with its error's exit code."""
    try:
        outcome = reset(
            conn,
            repair_request(item),
            safety,
            lambda plans, want=_writes(shown.plan): _writes(plans[0]) == want,
            profile,
        )[0]
    except OffctlError as exc:
        return replace(shown, problems=(str(exc),)), exc.exit_code
    if outcome.declined:
        outcome = replace(
            outcome,
            declined=False,
            problems=(
                f"{outcome.plan.key} changed between the plan shown and the write: nothing was written for it; "
                f"run the audit again",
            ),
        )
        return outcome, 5
    return outcome, outcome_exit_code(outcome)


# --- the whole audit ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditSettings:
    selection: Selection = Selection()
    thresholds: Thresholds | Profiles = Thresholds()  # Profiles: each consumer judged by its own
    estimates: Estimates = Estimates()  # what each task's reads after the analysis are told (a budget per task)
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
    repairs: list  # (reset.RepairResult, exit code) per consumer repaired
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
    conn: Connection, settings: AuditSettings, *, track=None, confirm_all: Callable[[list], bool] = lambda plans: False
) -> Iterator[Audited]:
    """Check the command line, start Spark (or use spark-submit's), run the audit and any repair; Spark stays
    up inside the block so the caller can stream the rows, and stops after it if offctl started it."""
    codes = repair_codes(settings.repair)
    sel = settings.selection
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
    if not settings.from_snapshots:
        validate(conn, sel)
    if codes and not conn.bootstrap_servers:
        raise UsageError("--repair needs --bootstrap-servers (log offsets bound every target)")
    conf = parse_spark_conf(settings.spark_conf)
    started = time.perf_counter()
    session, owned = adapter.start(settings.master, conf)
    startup = time.perf_counter() - started if owned else None
    try:
        result = run(session, conn, settings, track or adapter.no_track)
        done: list = []
        if codes:
            found = result.findings.filter(lambda f: f["code"] in codes).collect()
            done = repair_all(conn, repairs(found, codes), safety, confirm_all, Profiles.of(settings.thresholds))
        yield Audited(result, done, startup)
    finally:
        if owned:
            adapter.stop(session)


# --- the Spark job -----------------------------------------------------------------------------------------


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
        sections = {
            "partitions": rows(),
            "findings": self.findings.toLocalIterator(),
            "consumers": self.consumers.toLocalIterator(),
            "topics": self.topics.toLocalIterator(),
            "topologies": self.topologies.toLocalIterator(),
        }
        tail = {
            "hints": hints_dict(self.tally.by_code),
            "summary": self.summary(),
            "notes": self.tally.notes,
            "incomplete": self.tally.incomplete,
            "checks_skipped": self.tally.checks_skipped,
            "spout_settings": self.spout_settings,
            "processing_guarantee": commits_dict(self.tally.commits),
            "offsets_retention": retention_dict(self.tally.offsets_retention),
            "read_by": self.read_by,
            "driver": self.driver,
        }
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


def run(spark, conn: Connection, settings: AuditSettings, track: adapter.Track = adapter.no_track) -> AuditResult:
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
        source = _live_source(sc, files, conn, settings)
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
        meta = _snapshot_meta(conn, settings.selection, source.captured_ms, running, tally.partitions)
        with adapter.job(sc, "saving the snapshot", track):
            snapshot_path = adapter.save_snapshot(spark, files, reads, settings.save_snapshot, meta)
        timings["snapshot"] = time.perf_counter() - clock

    clock = time.perf_counter()
    earlier = source.earlier[-(settings.window - 1) :]
    rows = _rows_with_history(spark, files, analyzed.flatMap(lambda o: o[1]), earlier, running, settings)
    rows = rows.persist(StorageLevel.MEMORY_AND_DISK)
    findings = analyzed.flatMap(lambda o: o[2])
    consumers = analyzed.flatMap(lambda o: o[3])
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
        spout_settings=assumptions(tally.profiles, settings.thresholds),
        read_by=readers,
        driver=process_name(),
    )
    if settings.out:
        clock = time.perf_counter()
        with adapter.job(sc, f"writing {settings.file_format} files to {settings.out}", track):
            result.written = write_files(spark, files, result, settings.out, settings.file_format)
        timings["write"] = time.perf_counter() - clock
    return result


def _saved_source(spark, files: adapter.Files, settings: AuditSettings) -> _Source:
    """The audit of saved snapshots: the latest is analyzed again, with no servers (the reads that follow the
    analysis are not made: each lagging partition's time lag is `unread`); the ones before it give history."""
    thresholds = settings.thresholds
    saved = adapter.list_snapshots(files, settings.from_snapshots)
    if not saved:
        raise UsageError(f"--from-snapshots {settings.from_snapshots}: no complete snapshot there")
    *earlier, latest = saved
    meta, loaded = adapter.load_snapshot(spark, files, latest)
    tasks = loaded.map(lambda kv: (kv[0], kv[1], chunk_outputs(assess(kv[1], None, thresholds))))
    running = meta.get("running")
    return _Source(
        tasks,
        meta["captured_ms"],
        frozenset(running) if running is not None else None,
        [f"audited from snapshot {latest} (captured {meta['captured_at']}), no servers read"],
        earlier,
    )


def _live_source(sc, files: adapter.Files, conn: Connection, settings: AuditSettings) -> _Source:
    """The audit of the live stores: the driver lists the consumers and plans their chunks, and each task reads
    its chunk and runs inspect's pipeline on it, with its own clients (audit_tasks.audit_chunk); the snapshots
    saved before under --save-snapshot give history."""
    selection, thresholds, estimates = settings.selection, settings.thresholds, settings.estimates
    spouts, listed, driver_notes = _list_consumers(conn, selection)
    chunks = plan_chunks(
        spouts, list(selection.groups), sc.defaultParallelism, listed, trident_roots=trident_list(conn, selection)
    )
    captured_ms = int(time.time() * 1000)
    tasks = (
        sc.parallelize([(c.index, c) for c in chunks], max(1, len(chunks)))
        .map(lambda ic: (ic[0], *audit_chunk(conn, selection, ic[1], int(time.time() * 1000), thresholds, estimates)))
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


def _snapshot_meta(
    conn: Connection, selection: Selection, captured_ms: int, running: frozenset[str] | None, partitions: int
) -> dict:
    """What a saved snapshot says of itself: when and from where it was read, and what was selected."""
    return {
        "format": adapter.SNAPSHOT_FORMAT,
        "version": adapter.SNAPSHOT_VERSION,
        "captured_ms": captured_ms,
        "captured_at": iso_ms(captured_ms),
        "zk": conn.zk,
        "zk_roots": list(conn.zk_roots),
        "trident_roots": list(conn.trident_roots),
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
    window, allowed, thresholds = settings.window, settings.allowed_lag, settings.thresholds
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
                kv[1][0], kv[1][1] or (), running, window, allowed, commit_period(thresholds, kv[1][0])
            )
        )
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
