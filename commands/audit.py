"""offctl audit: inspect at fleet scale in Spark, with files, snapshots, history and repair."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Annotated, Optional

import typer

from offctl.settings.connection import Connection

from .options import (CONNECTION_OPTIONS, FAIL_ON_OPTIONS, HORIZON_OPTIONS, OUTPUT, SAFETY_OPTIONS, SELECTION_OPTIONS,
                      SPOUT_OPTIONS, Given, check_confirmable, confirm_plans, connection, err_console, expiry_options,
                      judged_by, reported_errors, safety, selection, shared, without)

SPARK = "Spark"
FILES = "Files, snapshots and history"
REPAIR = "Repair"


class AuditOutput(str, Enum):
    summary = "summary"
    json = "json"


class FileFormat(str, Enum):
    parquet = "parquet"
    json = "json"
    csv = "csv"


@contextmanager
def _progress(description: str) -> Iterator:
    """A progress bar of Spark tasks on stderr, when stderr is a terminal."""
    if not err_console.is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("tasks"),
                  TimeElapsedColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task(description, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


@shared(SELECTION_OPTIONS, SPOUT_OPTIONS, HORIZON_OPTIONS, FAIL_ON_OPTIONS,
        without(SAFETY_OPTIONS, "execute"), CONNECTION_OPTIONS)
def audit_command(
    given: Given,
    output: Annotated[AuditOutput, typer.Option(
        "--output", "-o", rich_help_panel=OUTPUT, help="summary: the summary on stderr only; json: also inspect's JSON document on stdout.")] = AuditOutput.summary,
    top: Annotated[int, typer.Option("--top", metavar="N", min=1, rich_help_panel=OUTPUT, help="Consumers and topics in the summary.")] = 10,
    out: Annotated[Optional[str], typer.Option(
        "--out", metavar="DIR", rich_help_panel=FILES,
        help="Write partitions, findings, consumers, topics, topologies and summary.json here (local path or "
             "hdfs://, s3a://...).")] = None,
    file_format: Annotated[FileFormat, typer.Option("--format", rich_help_panel=FILES, help="Format of --out files.")] = FileFormat.parquet,
    save_snapshot: Annotated[Optional[str], typer.Option(
        "--save-snapshot", metavar="DIR", rich_help_panel=FILES,
        help="Save what was read as a new snapshot under DIR; earlier snapshots there give each partition a "
             "history status and a time lag.")] = None,
    from_snapshots: Annotated[Optional[str], typer.Option(
        "--from-snapshots", metavar="DIR", rich_help_panel=FILES,
        help="Audit the newest snapshot under DIR, with history from the others, reading no server.")] = None,
    window: Annotated[int, typer.Option(
        "--window", metavar="N", rich_help_panel=FILES, help="Snapshots per partition history, newest first.")] = 10,
    allowed_lag: Annotated[int, typer.Option(
        "--allowed-lag", metavar="N", min=0, rich_help_panel=FILES,
        help="Lag that counts as caught up in the history status (Burrow's allowed-lag).")] = 0,
    master: Annotated[Optional[str], typer.Option(
        "--master", metavar="URL", envvar="OFFCTL_SPARK_MASTER", rich_help_panel=SPARK,
        help="Spark master \\[default: spark-submit's, else local[*]].")] = None,
    spark_conf: Annotated[Optional[list[str]], typer.Option(
        "--spark-conf", metavar="KEY=VALUE", rich_help_panel=SPARK, help="Spark setting (repeatable).")] = None,
    repair: Annotated[Optional[list[str]], typer.Option(
        "--repair", metavar="WHAT", rich_help_panel=REPAIR,
        help="Plan moving these findings' partitions to the log start: out-of-range (both codes), "
             "OFFSET_BELOW_LOG_START or OFFSET_ABOVE_LOG_END (repeatable).")] = None,
    execute: Annotated[bool, typer.Option(
        "--execute", rich_help_panel=REPAIR, help="Apply the repair. Without it nothing is written (dry run).")] = False,
) -> None:
    """Audit a whole fleet in Spark: lag, findings, history, files; repair out-of-range offsets.

    \b
    Example:
      offctl audit --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 \\
        --group orders-spout --out /data/offctl/audit --save-snapshot /data/offctl/snapshots
    """
    # Spark, the repair writer and their renderers load only when an audit runs (offctl --help, inspect and
    # the rest never pay for them)
    from offctl.faces.audit.job import AuditSettings, audit, exit_code, nothing_to_repair
    from offctl.pipeline import Estimates
    from offctl.render.output import (outcome_document, outcome_errors, outcome_lines, write_audit_summary,
                               write_json_stream, write_plan_table)

    with reported_errors():
        check_confirmable(execute and bool(repair), given.yes)
        if from_snapshots:
            # A snapshot audit reads no server: not the flags', not the sandbox's.
            conn = Connection(zk=given.zk, zk_roots=tuple(given.zk_root or ()),
                              bootstrap_servers=given.bootstrap_servers)
        else:
            conn = connection(given)
        settings = AuditSettings(
            selection=selection(given), thresholds=judged_by(given),
            estimates=Estimates(given.time_lag_budget, expiry_options(given)), out=out, file_format=file_format.value,
            save_snapshot=save_snapshot, from_snapshots=from_snapshots, window=window, allowed_lag=allowed_lag, top=top,
            master=master, spark_conf=tuple(spark_conf or ()), repair=tuple(repair or ()),
            safety=safety(given, execute))
        with audit(conn, settings, track=_progress, confirm_all=lambda plans: confirm_plans(given.yes, plans, conn=conn)) as done:
            outcomes = [o for o, _ in done.repairs]
            nothing = nothing_to_repair(settings.repair) if settings.repair and not outcomes else None
            if output is AuditOutput.json:
                head, sections, tail = done.result.document_parts()
                if settings.repair:
                    tail["repair"] = [outcome_document(o) for o in outcomes]
                    tail["repair_note"] = nothing
                write_json_stream(head, sections, tail, sys.stdout)
            if not err_console.is_terminal:
                err_console.width = 160  # tables in a log file: wide enough to read
            write_audit_summary(done.result, err_console, startup_s=done.startup_s)
    if nothing:
        err_console.print(f"offctl: {nothing}")
    for outcome in outcomes:
        write_plan_table(outcome, err_console)
        for line in outcome_lines(outcome) + [f"offctl: {e}" for e in outcome_errors(outcome)]:
            err_console.print(line, soft_wrap=True)
    raise typer.Exit(exit_code(done.result.tally, given.fail_on.value, [c for _, c in done.repairs]))

