"""offctl watch: the inspect view, refreshed in place."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .options import (CONNECTION_OPTIONS, HORIZON_OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS, Given, expiry_options,
                      reading, reported_errors, seconds, shared)


@shared(SELECTION_OPTIONS, SPOUT_OPTIONS, HORIZON_OPTIONS, CONNECTION_OPTIONS)
def watch_command(
    given: Given,
    interval: Annotated[float, typer.Option(
        "--interval", "-n", metavar="DURATION", parser=seconds(0.5, 3600),
        help="Time between refreshes: 2s, 1m, or seconds.")] = 2.0,
    count: Annotated[Optional[int], typer.Option(
        "--count", metavar="N", min=1, help="Stop after N refreshes (default: until Ctrl-C).")] = None,
    allowed_lag: Annotated[int, typer.Option(
        "--allowed-lag", metavar="N", min=0, help="Lag that counts as caught up in the status.")] = 0,
) -> None:
    """Watch spouts move: committed offsets moving or stuck, lag and its trend, status, refreshed in place.

    For the engineer watching a fix take effect. Ctrl-C leaves.

    \b
    Example:
      offctl watch --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 --spout orders -n 5
    """
    from rich.console import Group
    from rich.live import Live
    from rich.text import Text

    from offctl.faces.serve.exporter import watch  # the exporter's modules load only when watching
    from offctl.render.output import table_console, watch_table

    with reported_errors():
        conn, selection, thresholds = reading(given)
        console = table_console(sys.stdout)

        def frame(report, previous, statuses, refreshed, error) -> Group:
            parts = [watch_table(report, previous, statuses, refreshed)] if report is not None else []
            if error:
                parts.append(Text(f"offctl: refresh {refreshed} could not read: {error}", style="yellow"))
            return Group(*parts)

        if not console.is_terminal:  # piped or logged: every refresh, one after the other
            watch(conn, selection, thresholds, lambda *a: console.print(frame(*a)), interval_s=interval, count=count,
                  allowed_lag=allowed_lag, time_lag_budget_s=given.time_lag_budget,
                  expiry_options=expiry_options(given))
            return
        with Live(console=console, auto_refresh=False, transient=False) as live:
            watch(conn, selection, thresholds, lambda *a: live.update(frame(*a), refresh=True), interval_s=interval,
                  count=count, allowed_lag=allowed_lag, time_lag_budget_s=given.time_lag_budget,
                  expiry_options=expiry_options(given))
