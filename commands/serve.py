"""offctl serve: the Prometheus exporter."""

from __future__ import annotations

from typing import Annotated

import typer

from offctl.settings.connection import DEFAULT_LISTEN
from offctl.inputs import printable

from .options import (CONNECTION_OPTIONS, HORIZON_OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS, Given, err_console,
                      expiry_options, reading, reported_errors, seconds, shared)


@shared(SELECTION_OPTIONS, SPOUT_OPTIONS, HORIZON_OPTIONS, CONNECTION_OPTIONS)
def serve_command(
    given: Given,
    listen: Annotated[str, typer.Option(
        "--listen", metavar="HOST:PORT", envvar="OFFCTL_LISTEN", help="Where to serve /metrics, /healthz and "
                                                                     "/status.json.")] = DEFAULT_LISTEN,
    interval: Annotated[float, typer.Option(
        "--interval", metavar="DURATION", envvar="OFFCTL_INTERVAL", parser=seconds(1, 86400),
        help="Time between inspections: 30s, 5m, or seconds.")] = 30.0,
    window: Annotated[int, typer.Option(
        "--window", metavar="N", min=2, max=1000, help="Cycles per partition for the history status.")] = 10,
    allowed_lag: Annotated[int, typer.Option(
        "--allowed-lag", metavar="N", min=0, help="Lag that counts as caught up in the history status.")] = 0,
    no_partition_metrics: Annotated[bool, typer.Option(
        "--no-partition-metrics", help="Only per-consumer and exporter metrics: bounded series for huge fleets.")] = False,
) -> None:
    """Inspect every --interval and serve Prometheus metrics, until SIGTERM or Ctrl-C.

    A cycle that cannot read a store is logged on stderr and counted (offctl_read_errors_total); the last
    good values are served on with the time they were read, so they are never taken for fresh ones.

    \b
    Example:
      offctl serve --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 \\
        --group orders-spout --listen 0.0.0.0:9717 --interval 30
    """
    from offctl.faces.serve.exporter import serve  # the HTTP server and prometheus_client load only when serving

    with reported_errors():
        conn, selection, thresholds = reading(given)
        serve(conn, selection, thresholds, listen=listen, interval_s=interval, window=window,
              allowed_lag=allowed_lag, partition_metrics=not no_partition_metrics,
              time_lag_budget_s=given.time_lag_budget, expiry_options=expiry_options(given),
              log=lambda line: err_console.print(f"offctl serve: {printable(line)}"))
