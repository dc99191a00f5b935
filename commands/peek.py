"""offctl peek."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from offctl.core.targets import parse_partitions
from offctl.faces.peek import MAX_COUNT, exit_code, peek
from offctl.render.output import write_peek

from .options import (CONNECTION_OPTIONS, HORIZON_OPTIONS, OUTPUT, SELECTION, SELECTION_OPTIONS, SPOUT_OPTIONS, Given,
                      OutputFormat, connection, err_console, estimates, judged_by, reported_errors, seconds, selection,
                      shared, without)


@shared(without(SELECTION_OPTIONS, "all_groups"), SPOUT_OPTIONS, HORIZON_OPTIONS, CONNECTION_OPTIONS)
def peek_command(
    given: Given,
    partitions: Annotated[Optional[str], typer.Option(
        "--partitions", metavar="LIST", rich_help_panel=SELECTION,
        help="Only these partitions: 0,3,5 or 0-7 \\[default: every partition not caught up].")] = None,
    count: Annotated[int, typer.Option(
        "--count", metavar="N", help=f"Messages per partition, from the resume offset on (1 to {MAX_COUNT}).")] = 1,
    budget: Annotated[Optional[float], typer.Option(
        "--budget", metavar="DURATION", parser=seconds(),
        help="Time to read the messages in: 5s, 1m, or seconds \\[default: --timeout].")] = None,
    save: Annotated[Optional[Path], typer.Option(
        "--save", metavar="DIR", help="Write each message's exact key, value and headers, with manifest.json, to "
                                      "this new (or empty) folder.")] = None,
    output: Annotated[OutputFormat, typer.Option(
        "--output", "-o", rich_help_panel=OUTPUT, help="Output format (table or json).")]
        = OutputFormat.table,
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
        result = peek(connection(given), selection(given), judged_by(given), partitions=parse_partitions(partitions),
                      count=count, budget_s=budget, estimates=estimates(given))
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
