"""offctl peek."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from offctl.core.plans.targets import parse_partitions
from offctl.faces.peek import exit_code, peek
from offctl.render.peek import write_peek
from offctl.settings.kinds import OutputFormat
from offctl.settings.options import CONNECTION_OPTIONS, HORIZON_OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS
from offctl.settings.resolve import Given

from .options import err_console, reading, reported_errors, shared, without


@shared(
    without(SELECTION_OPTIONS, "all_groups"),
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    CONNECTION_OPTIONS,
    own=("partitions", "count", "budget", "save", "output"),
)
def peek_command(
    given: Given,
    partitions: str | None,
    count: int | None,
    budget: float | None,
    save: Path | None,
    output: OutputFormat,
) -> None:
    """Show the message each spout resumes at: the one it is stuck on.

    \b
    Reads only: it never commits and never joins a group.
    Example:
      offctl peek --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 \\
        --spout payments-spout --save ./poison
    """
    with reported_errors():
        if output.value == "csv":
            from offctl.errors import UsageError

            raise UsageError("peek writes --output table or json")
        result = peek(
            reading(given),
            partitions=parse_partitions(partitions),
            count=1 if count is None else count,
            budget_s=budget,
        )
        saved = None
        if save is not None:
            from offctl.adapters.saved import save_messages

            saved = str(save_messages(save, result.peeked, result.captured_ms))
    write_peek(result, output.value, sys.stdout, saved=saved)
    for note in result.report.notes:
        err_console.print(f"offctl: {note}")
    for what in result.report.incomplete:
        err_console.print(f"offctl: partial read: {what}")
    for f in result.report.findings:
        if f.code == "CONSUMER_NOT_FOUND":
            err_console.print(f"offctl: {f.message}")
    if result.unread:
        err_console.print(f"offctl: {result.unread} partition(s) not read: see `why`")
    raise typer.Exit(exit_code(result))
