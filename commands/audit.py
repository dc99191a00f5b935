"""offctl audit: inspect at fleet scale in Spark, with files, snapshots, history and repair."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from offctl.settings import resolve
from offctl.settings.kinds import REPAIR, AuditOutput, FileFormat
from offctl.settings.options import (
    CONNECTION_OPTIONS,
    FAIL_ON_OPTIONS,
    HORIZON_OPTIONS,
    OPTIONS,
    SAFETY_OPTIONS,
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
)
from offctl.settings.resolve import Given, safety

from .options import check_confirmable, confirm_plans, err_console, reading, reported_errors, shared, without


@contextmanager
def _progress(description: str) -> Iterator:
    """A progress bar of Spark tasks on stderr, when stderr is a terminal."""
    if not err_console.is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("tasks"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _say_repairs(outcomes: list, nothing: str | None) -> None:
    """The repair's plans and outcomes on stderr, after the summary."""
    from offctl.render.plans import outcome_errors, outcome_lines, write_plan_table

    if nothing:
        err_console.print(f"offctl: {nothing}")
    for outcome in outcomes:
        write_plan_table(outcome, err_console)
        for line in outcome_lines(outcome) + [f"offctl: {e}" for e in outcome_errors(outcome)]:
            err_console.print(line, soft_wrap=True)


@shared(
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    FAIL_ON_OPTIONS,
    without(SAFETY_OPTIONS, "execute"),
    CONNECTION_OPTIONS,
    own=(
        OPTIONS["output"].but(
            kind=AuditOutput,
            default=AuditOutput.summary,
            help="summary: the summary on stderr only; json: also inspect's JSON document on stdout.",
        ),
        "top",
        "out",
        "file_format",
        "save_snapshot",
        "from_snapshots",
        OPTIONS["window"].but(low=None, high=None),
        "allowed_lag",
        "master",
        "spark_conf",
        "repair",
        OPTIONS["execute"].but(panel=REPAIR, help="Apply the repair. Without it nothing is written (dry run)."),
    ),
)
def audit_command(
    given: Given,
    output: AuditOutput,
    top: int,
    out: str | None,
    file_format: FileFormat,
    save_snapshot: str | None,
    from_snapshots: str | None,
    window: int,
    allowed_lag: int,
    master: str | None,
    spark_conf: list[str] | None,
    repair: list[str] | None,
    execute: bool,
) -> None:
    """Audit a whole fleet in Spark: lag, findings, history, files; repair out-of-range offsets.

    \b
    Example:
      offctl audit --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 \\
        --group orders-spout --out /data/offctl/audit --save-snapshot /data/offctl/snapshots
    """
    # Spark, the repair writer and their renderers load only when an audit runs (offctl --help, inspect and
    # the rest never pay for them)
    from offctl.faces.audit.job import AuditSettings, audit, exit_code
    from offctl.faces.audit.repairs import nothing_to_repair
    from offctl.render.audit import write_audit_json, write_audit_summary

    with reported_errors():
        check_confirmable(execute and bool(repair), given.yes)
        # A snapshot audit reads no server: not the flags', not the sandbox's.
        chosen = resolve.saved_reading(given) if from_snapshots else reading(given)
        conn = chosen.conn
        settings = AuditSettings(
            reading=chosen,
            out=out,
            file_format=file_format.value,
            save_snapshot=save_snapshot,
            from_snapshots=from_snapshots,
            window=window,
            allowed_lag=allowed_lag,
            top=top,
            master=master,
            spark_conf=tuple(spark_conf or ()),
            repair=tuple(repair or ()),
            safety=safety(given, execute),
        )
        confirm_all = lambda plans: confirm_plans(given.yes, plans, conn=conn)  # noqa: E731
        with audit(settings, track=_progress, confirm_all=confirm_all) as done:
            outcomes = [o for o, _ in done.repairs]
            nothing = nothing_to_repair(settings.repair) if settings.repair and not outcomes else None
            if output is AuditOutput.json:
                write_audit_json(done.result, sys.stdout, outcomes if settings.repair else None, nothing)
            if not err_console.is_terminal:
                err_console.width = 160  # tables in a log file: wide enough to read
            write_audit_summary(done.result, err_console, startup_s=done.startup_s)
    _say_repairs(outcomes, nothing)
    raise typer.Exit(exit_code(done.result.tally, given.fail_on.value, [c for _, c in done.repairs]))
