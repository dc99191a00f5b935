"""The commands that inspect again and again: `offctl serve` (the result to Prometheus) and `offctl watch`
(the result in the terminal, refreshed in place).

serve's HTTP side is prometheus_client's WSGI app for /metrics, beside /healthz and /status.json, on a
threaded wsgiref server; the cycles run on the calling thread until SIGTERM or Ctrl-C (then it stops
cleanly). Both keep their window of observations per partition in a monitor.Monitor.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from offctl.config import DEFAULT_LISTEN, Connection
from offctl.errors import OffctlError, UsageError
from offctl.inspect import TIME_LAG_BUDGET_S, ExpiryOptions, Selection, inspect
from offctl.core.model import Thresholds
from offctl.core.monitor import Collector, Monitor
from offctl.render import dumps, report_document



def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST may be empty for every interface, or [v6]) -> (host, port)."""
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):(\d{1,5})", text.strip())
    if not m or not 0 <= int(m.group(2)) <= 65535:
        raise UsageError(f"--listen {text[:60]!r}: expected HOST:PORT, e.g. 0.0.0.0:9717 or 127.0.0.1:9717")
    return m.group(1).strip("[]") or "0.0.0.0", int(m.group(2))


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:  # a scrape every few seconds is not news
        pass


def registry_of(monitor: Monitor):
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(Collector(monitor))
    return registry


class Rendered:
    """/metrics as rendered after the last cycle: rendering 100,000 partitions takes seconds, so it is done
    once per cycle on the cycle's thread, not once per scrape."""

    def __init__(self, registry) -> None:
        self.registry, self.body = registry, None

    def refresh(self) -> None:
        from prometheus_client import generate_latest

        self.body = generate_latest(self.registry)


def make_app(monitor: Monitor, interval_s: float, rendered: Rendered | None = None):
    from prometheus_client import CONTENT_TYPE_LATEST, make_wsgi_app

    rendered = rendered or Rendered(registry_of(monitor))
    live = make_wsgi_app(rendered.registry)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            body = rendered.body
            if body is None:
                return live(environ, start_response)
            start_response("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
            return [body]
        if path == "/healthz":
            ok = monitor.healthy(time.time(), interval_s)
            body = (b"ok\n" if ok else f"unhealthy: {monitor.last_error or 'no cycle has read everything yet'}\n"
                    .encode())
            start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain")])
            return [body]
        if path == "/status.json":
            with monitor.lock:
                cycle = monitor.cycle
            if cycle is None:
                start_response("503 Service Unavailable", [("Content-Type", "application/json")])
                return [b'{"error":"no cycle has read the stores yet"}\n']
            start_response("200 OK", [("Content-Type", "application/json")])
            return [dumps(report_document(cycle.report)).encode() + b"\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"offctl serve: /metrics, /healthz, /status.json\n"]

    return app


def cycle_budget(time_lag_budget_s: float, interval_s: float) -> float:
    """The time a cycle may spend reading the messages lagging partitions resume at: the budget asked for, at most
    half the interval, so that reads and render fit between cycles."""
    return min(time_lag_budget_s, interval_s / 2)


def serve(conn: Connection, selection: Selection, thresholds: Thresholds, *, listen: str = DEFAULT_LISTEN,
          interval_s: float = 30.0, window: int = 10, allowed_lag: int = 0, partition_metrics: bool = True,
          time_lag_budget_s: float = TIME_LAG_BUDGET_S, log: Callable[[str], None] = print,
          stop: threading.Event | None = None, expiry_options: ExpiryOptions = ExpiryOptions()) -> Monitor:
    """Run cycles every `interval_s` and serve them until `stop` is set, SIGTERM or Ctrl-C. A cycle that cannot
    read a store is logged and counted; the server keeps serving the last good values, with their time."""
    host, port = parse_listen(listen)
    monitor = Monitor(window=window, allowed_lag=allowed_lag, partition_metrics=partition_metrics)
    rendered = Rendered(registry_of(monitor))
    try:
        server = make_server(host, port, make_app(monitor, interval_s, rendered), server_class=_Server,
                             handler_class=_QuietHandler)
    except OSError as exc:
        raise UsageError(f"--listen {listen}: cannot listen there ({exc.strerror or exc})") from None
    thread = threading.Thread(target=server.serve_forever, name="offctl-serve-http", daemon=True)
    thread.start()
    log(f"serving http://{host}:{server.server_port}/metrics, /healthz, /status.json every {interval_s:g}s")
    stop = stop or threading.Event()
    budget = cycle_budget(time_lag_budget_s, interval_s)
    try:
        while not stop.is_set():
            started = time.monotonic()
            try:
                # The commit expiry also dates a commit by the cycle before the one that saw its offset move.
                report = inspect(conn, selection, thresholds, time_lag_budget_s=budget,
                                 expiry_options=replace(expiry_options, moved_after=monitor.moved_after()))
                monitor.update(report, time.monotonic() - started)
                for problem in report.incomplete:
                    log(f"warning: partial read: {problem}")
            except OffctlError as exc:
                monitor.failed(str(exc))
                log(f"warning: cycle failed, serving the last values with their time: {exc}")
            rendered.refresh()
            stop.wait(max(0.0, interval_s - (time.monotonic() - started)))
    except KeyboardInterrupt:  # SIGTERM (main() turns it into this) or Ctrl-C: stop cleanly
        pass
    finally:
        server.shutdown()
        server.server_close()
        log("stopped")
    return monitor


Draw = Callable[[object, dict, dict, int, str | None], None]


def watch(conn: Connection, selection: Selection, thresholds: Thresholds, draw: Draw, *, interval_s: float = 2.0,
          count: int | None = None, window: int = 10, allowed_lag: int = 0,
          time_lag_budget_s: float = TIME_LAG_BUDGET_S) -> int:
    """Inspect every `interval_s` and call draw(report, previous, statuses, refresh, error) after each: the
    previous refresh's (committed, lag) per partition, each partition's history status and time lag. `count`:
    stop after that many refreshes. Ctrl-C stops it. A refresh that cannot read draws the last report with the
    error. Returns the number of refreshes."""
    monitor = Monitor(window=window, allowed_lag=allowed_lag, partition_metrics=False)
    previous: dict = {}
    shown = None
    refreshed = 0
    budget = cycle_budget(time_lag_budget_s, interval_s)
    try:
        while count is None or refreshed < count:
            started = time.monotonic()
            error = None
            try:
                report = inspect(conn, selection, thresholds, time_lag_budget_s=budget)
                monitor.update(report, time.monotonic() - started)
            except OffctlError as exc:
                error, report = str(exc), shown
            refreshed += 1
            statuses = dict(monitor.cycle.statuses) if monitor.cycle else {}
            draw(report, previous, statuses, refreshed, error)
            if report is not None and error is None:
                previous = {r.partition_key: (r.record.committed, r.lag) for r in report.rows}
                shown = report
            if count is not None and refreshed >= count:
                break
            time.sleep(max(0.0, interval_s - (time.monotonic() - started)))
    except KeyboardInterrupt:
        pass
    return refreshed
