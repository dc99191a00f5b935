"""offctl serve: the Prometheus exporter."""

from __future__ import annotations

from offctl.inputs import printable
from offctl.settings.kinds import SERVE_INTERVAL_S
from offctl.settings.options import CONNECTION_OPTIONS, HORIZON_OPTIONS, OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS
from offctl.settings.resolve import Given

from .options import err_console, reading, reported_errors, shared


@shared(
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    CONNECTION_OPTIONS,
    own=("listen", OPTIONS["interval"].but(default=SERVE_INTERVAL_S), "window", "allowed_lag", "no_partition_metrics"),
)
def serve_command(
    given: Given, listen: str, interval: float, window: int, allowed_lag: int, no_partition_metrics: bool
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
        serve(
            reading(given),
            listen=listen,
            interval_s=interval,
            window=window,
            allowed_lag=allowed_lag,
            partition_metrics=not no_partition_metrics,
            log=lambda line: err_console.print(f"offctl serve: {printable(line)}"),
        )
