"""offctl watch: the inspect view, refreshed in place."""

from __future__ import annotations

import sys

from offctl.errors import UsageError
from offctl.settings.kinds import WATCH_INTERVAL_S, seconds
from offctl.settings.options import CONNECTION_OPTIONS, HORIZON_OPTIONS, OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS
from offctl.settings.resolve import Given

from .options import reading, reported_errors, shared


@shared(
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    CONNECTION_OPTIONS,
    own=(OPTIONS["interval"].but(default=WATCH_INTERVAL_S, parse=seconds(0.5, 3600), env=None), "count", "allowed_lag"),
)
def watch_command(given: Given, interval: float, count: int | None, allowed_lag: int) -> None:
    """Watch spouts move: committed offsets moving or stuck, lag and its trend, status, refreshed in place.

    For the engineer watching a fix take effect. Ctrl-C leaves.

    \b
    Example:
      offctl watch --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 --spout orders -n 5
    """
    from rich.live import Live

    from offctl.faces.serve.exporter import watch  # the exporter's modules load only when watching
    from offctl.render.formats import table_console
    from offctl.render.watch import watch_frame as frame

    with reported_errors():
        if count is not None and count < 1:
            raise UsageError("--count must be a whole number, 1 or more")
        chosen = reading(given)
        console = table_console(sys.stdout)

        if not console.is_terminal:  # piped or logged: every refresh, one after the other
            watch(
                chosen,
                lambda *a: console.print(frame(*a)),
                interval_s=interval,
                count=count,
                allowed_lag=allowed_lag,
            )
            return
        with Live(console=console, auto_refresh=False, transient=False) as live:
            watch(
                chosen,
                lambda *a: live.update(frame(*a), refresh=True),
                interval_s=interval,
                count=count,
                allowed_lag=allowed_lag,
            )
