"""The commands that inspect again and again: `offctl serve` (the result to Prometheus) and `offctl watch`
(the result in the terminal, refreshed in place).

serve's HTTP side serves /metrics as prometheus_client rendered it after the last cycle (in a forked child:
Rendered), beside /healthz and /status.json, on offctl's one HTTP stack (offctl.adapters.webserver: uvicorn with
the limits every offctl server shares; GET and HEAD only) in a thread of its own; the cycles run on the calling thread
until SIGTERM or Ctrl-C (then it stops cleanly, a running render's child with it). Both keep their window of
observations per partition in a monitor.Monitor.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import gc
import os
import re
import select
import signal
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NoReturn

from offctl.adapters.webserver import http_server, send_body
from offctl.adapters.webserver import listen as listen_on
from offctl.core.records.model import Report
from offctl.errors import OffctlError, UsageError
from offctl.faces.serve.monitor import Collector, Monitor
from offctl.pipeline.inspect import inspect
from offctl.pipeline.read import cyclic_gc_paused, kafka_in_child
from offctl.render.formats import dump_bytes
from offctl.render.report import report_document
from offctl.settings.connection import DEFAULT_LISTEN
from offctl.settings.run import Reading


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (HOST may be empty for every interface, or [v6]) -> (host, port)."""
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):(\d{1,5})", text.strip())
    if not m or not 0 <= int(m.group(2)) <= 65535:
        raise UsageError(f"--listen {text[:60]!r}: expected HOST:PORT, e.g. 0.0.0.0:9717 or 127.0.0.1:9717")
    return m.group(1).strip("[]") or "0.0.0.0", int(m.group(2))


METHODS = ("GET", "HEAD")  # serve answers these; any other is 405 (offctl.adapters.webserver.guarded)


def registry_of(monitor: Monitor, rendered: Rendered | None = None):
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry()
    registry.register(Collector(monitor))
    if rendered is not None:
        registry.register(_RenderCollector(rendered))
    return registry


class Rendered:
    """/metrics as rendered after the last cycle, by prometheus-client's writer in a child process.

    At 100,000 partitions the writer takes seconds of CPU (about 6 us a sample, 900,000 samples), so it runs
    neither per scrape nor in the exporter: after each cycle the exporter forks, the child writes the page to a
    pipe and exits, and a thread here reads it and swaps `body` when it is whole. The exporter's own cost is the
    fork and the pipe read; a scrape gets the last whole page. A child that fails or outlives `timeout_s` is
    killed, reaped, counted and logged, and the last page is served on.

    One render at a time: a cycle that ends while the last render runs skips its render (counted), so the
    cycles keep their interval and a slow render never holds up the reads nor piles up children."""

    def __init__(
        self,
        monitor: Monitor,
        log: Callable[[str], None],
        timeout_s: float = 90.0,
        registry_factory: Callable[[], object] | None = None,
    ) -> None:
        from prometheus_client import generate_latest  # imported here, not first in a child

        self.monitor, self.timeout_s, self.log = monitor, timeout_s, log
        self.registry = registry_of(monitor, self)  # the live page, served until the first render
        self._registry_factory = registry_factory or (lambda: registry_of(monitor, self))
        self._generate = generate_latest
        self.body: bytes | None = None
        self.failures = self.skipped = 0
        self.last_failure: str | None = None  # why the last render failed, until one succeeds: for /healthz
        self.last: RenderStats | None = None
        self.child: int | None = None  # the running child's pid
        self._reader: threading.Thread | None = None
        self._reaping = threading.Lock()
        self._closing = False

    def refresh(self) -> None:
        """Start rendering the monitor's state in a child, unless the last render still runs."""
        if self.running():
            self.skipped += 1
            self.log("warning: the last /metrics render still runs: this cycle's is skipped")
            return
        read_fd, write_fd = os.pipe()
        with contextlib.suppress(OSError, AttributeError):  # Linux: a 1 MiB pipe, 16 times fewer reads than 64 KiB
            fcntl.fcntl(read_fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        started = time.monotonic()
        # Fork with no other thread inside the monitor (HTTP threads take its lock to read it), so the child's
        # copy is whole and its lock free once the child releases it. The collector stays off in the child: a
        # collection writes to every object it visits, which would copy the exporter's pages into the child.
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            with self.monitor.lock, warnings.catch_warnings():
                # Python 3.12+ warns of fork in a threaded process: the child runs only the writer over its copy
                # of the monitor and a registry of its own, takes no lock another thread may hold, and _exits.
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
                if pid == 0:
                    self.monitor.lock.release()
                    self._child(read_fd, write_fd)
        except OSError as exc:  # no fork (out of memory, process limit): the last page is served on
            os.close(read_fd)
            self._failed(f"cannot start ({exc})")
            return
        finally:
            os.close(write_fd)
            if gc_was_on:
                gc.enable()
        self.child = pid
        self._reader = threading.Thread(
            target=self._read,
            args=(pid, read_fd, started, time.monotonic() - started),
            name="offctl-serve-render",
            daemon=True,
        )
        self._reader.start()

    def _child(self, read_fd: int, write_fd: int) -> NoReturn:
        code = 1
        try:
            # Ctrl-C and SIGTERM reach the whole process group: the exporter ends its child itself (close), so the
            # child does not die first of them and look like a failed render.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            os.close(read_fd)
            # prometheus-client's text for one family at a time, written as made: generate_latest writes the
            # families one after the other with nothing around them, so the page is the one it writes for the
            # whole registry (tests/e2e/test_serve.py compares them), with one family's strings held at a time.
            with os.fdopen(write_fd, "wb") as pipe:
                for family in self._registry_factory().collect():
                    pipe.write(self._generate(_Family(family)))
            code = 0
        finally:  # whatever happens (an error, Ctrl-C), the child never returns into the exporter's code
            os._exit(code)

    def _read(self, pid: int, read_fd: int, started: float, fork_s: float) -> None:
        chunks, outcome = [], "ok"
        cpu_reading = time.thread_time()
        with os.fdopen(read_fd, "rb", buffering=0) as pipe:
            poller = select.poll()
            poller.register(pipe, select.POLLIN)
            while True:
                left = started + self.timeout_s - time.monotonic()
                if left <= 0 or not poller.poll(left * 1000):
                    outcome = f"timed out after {self.timeout_s:g}s"
                    os.kill(pid, signal.SIGKILL)
                    break
                chunk = pipe.read(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        with self._reaping:  # close() cannot signal the pid once it is reaped and may be another process's
            _, status, usage = os.wait4(pid, 0)
            self.child = None
        if outcome == "ok" and status != 0:
            outcome = (
                f"killed by signal {os.WTERMSIG(status)}"
                if os.WIFSIGNALED(status)
                else f"exit status {os.waitstatus_to_exitcode(status)}"
            )
        if self._closing:
            return
        if outcome != "ok":
            self._failed(outcome)
            return
        self.body = b"".join(chunks)  # one reference swapped: a scrape gets the old page or the new one, whole
        self.last_failure = None
        self.last = RenderStats(
            child_s=time.monotonic() - started,
            fork_s=fork_s,
            read_cpu_s=time.thread_time() - cpu_reading,
            child_peak_rss_kib=usage.ru_maxrss,
            size=len(self.body),
        )

    def _failed(self, why: str) -> None:
        # The count is in the pages of later renders; while none succeeds the page does not move, so /healthz
        # says so too.
        self.failures += 1
        self.last_failure = f"the /metrics render failed ({why}): serving the last page"
        self.log(f"warning: {self.last_failure}")

    def running(self) -> bool:
        return self._reader is not None and self._reader.is_alive()

    def wait(self, timeout_s: float | None = None) -> None:
        """Until the running render, if any, has ended."""
        if self._reader is not None:
            self._reader.join(timeout_s)

    def close(self) -> None:
        """End a running render (serve stops): its child is killed and reaped."""
        with self._reaping:
            self._closing = True
            if self.child is not None:
                os.kill(self.child, signal.SIGKILL)
        self.wait()


class _Family:
    """One metric family as a collector, for generate_latest."""

    def __init__(self, family) -> None:
        self.family = family

    def collect(self):
        return iter((self.family,))


@dataclass(frozen=True)
class RenderStats:
    """The last completed render, as the benchmark reports it: the child's wall time from the fork to its page
    read, the exporter's own time in the fork and CPU reading the pipe, the child's peak RSS (pages it shares
    with the exporter included), the page's size."""

    child_s: float
    fork_s: float
    read_cpu_s: float
    child_peak_rss_kib: int
    size: int


class _RenderCollector:
    """The render's own health, as of the render's fork."""

    def __init__(self, rendered: Rendered) -> None:
        self.rendered = rendered

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        r = self.rendered
        yield CounterMetricFamily(
            "offctl_render_failures_total",
            "/metrics renders that failed or timed out (the last page was served on)",
            value=r.failures,
        )
        yield CounterMetricFamily(
            "offctl_render_skipped_total",
            "Cycles whose /metrics render was skipped: the last one still ran",
            value=r.skipped,
        )
        if r.last is not None:
            yield GaugeMetricFamily(
                "offctl_render_duration_seconds",
                "Wall time of the last completed /metrics render, in its own process",
                value=r.last.child_s,
            )


Answer = tuple[int, list[tuple[bytes, bytes]], bytes]  # status, headers, body


def answer(monitor: Monitor, interval_s: float, rendered: Rendered, path: str) -> Answer:
    """What serve answers at `path`. /metrics is the last whole page (a reference read, never a render here);
    before the first render, the live registry's page, which a caller off the event loop makes (make_app)."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    text = [(b"content-type", b"text/plain")]
    if path == "/metrics":
        body = rendered.body
        if body is None:
            body = generate_latest(rendered.registry)
        return 200, [(b"content-type", CONTENT_TYPE_LATEST.encode())], body
    if path == "/healthz":
        failure = rendered.last_failure
        ok = monitor.healthy(time.time(), interval_s) and failure is None
        reason = failure or monitor.last_error or "no cycle has read everything yet"
        return (200, text, b"ok\n") if ok else (503, text, f"unhealthy: {reason}\n".encode())
    if path == "/status.json":
        with monitor.lock:
            cycle = monitor.cycle
        json = [(b"content-type", b"application/json")]
        if cycle is None:
            return 503, json, b'{"error":"no cycle has read the stores yet"}\n'
        return 200, json, dump_bytes(report_document(cycle.report)) + b"\n"
    return 404, text, b"offctl serve: /metrics, /healthz, /status.json\n"


def make_app(monitor: Monitor, interval_s: float, rendered: Rendered):
    """serve's ASGI application. The last rendered /metrics and /healthz are answered on the event loop (a
    reference read each); /status.json (built from the last report, under the monitor's lock, which a cycle holds
    while it updates) and the page before the first render are made in a worker thread, so that no request holds up
    the others. prometheus_client's own ASGI app is not used: it renders the registry on the event loop, seconds
    at 100,000 partitions, during which nothing else would be answered."""

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        path = scope["path"]
        if path == "/healthz" or (path == "/metrics" and rendered.body is not None):
            status, headers, body = answer(monitor, interval_s, rendered, path)
        else:
            status, headers, body = await asyncio.to_thread(answer, monitor, interval_s, rendered, path)
        await send_body(send, status, headers, body)

    return app


def cycle_reading(reading: Reading, interval_s: float) -> Reading:
    """The reading of each cycle: the time it may spend reading the messages lagging partitions resume at is the
    budget asked for, at most half the interval, so that reads and render fit between cycles."""
    return reading.within(interval_s / 2)


def render_timeout(interval_s: float) -> float:
    """How long a /metrics render may run before its child is killed: three intervals (the page is then as old
    as /healthz allows), at least a minute, so that only a wedged render is ever killed, never a slow one."""
    return max(3 * interval_s, 60.0)


def run_cycle(reading: Reading, monitor: Monitor) -> Report:
    """One cycle of serve before its render: inspect, then the monitor's window update. The commit expiry also dates
    a commit by the cycle before the one that saw its offset move; RETENTION_RISK's default rule takes each
    partition's pace over the window (Monitor.falling_behind), and the catch-up estimate its earlier observations
    (Monitor.earlier). The cycle collector is held throughout: what a
    cycle makes lives until the next, holds no cycle, and the collector's passes over it found nothing."""
    started = time.monotonic()
    with cyclic_gc_paused(), kafka_in_child():
        estimates = reading.estimates
        observed = replace(
            estimates,
            expiry=replace(estimates.expiry, moved_after=monitor.moved_after()),
            behind=monitor.falling_behind(),
            earlier=monitor.earlier(),
        )
        report = inspect(replace(reading, estimates=observed))
        monitor.update(report, time.monotonic() - started)
    return report


def serve(
    reading: Reading,
    *,
    listen: str = DEFAULT_LISTEN,
    interval_s: float = 30.0,
    window: int = 10,
    allowed_lag: int = 0,
    partition_metrics: bool = True,
    log: Callable[[str], None],
    stop: threading.Event | None = None,
) -> Monitor:
    """Run cycles every `interval_s` and serve them until `stop` is set, SIGTERM or Ctrl-C. A cycle that cannot
    read a store is logged and counted; the server keeps serving the last good values, with their time."""
    host, port = parse_listen(listen)
    monitor = Monitor(window=window, allowed_lag=allowed_lag, partition_metrics=partition_metrics)
    rendered = Rendered(monitor, log, render_timeout(interval_s))
    sock = listen_on(host, port)
    server = http_server(make_app(monitor, interval_s, rendered), sock, METHODS, "offctl serve").start(
        "offctl-serve-http"
    )
    log(f"serving http://{host}:{server.port}/metrics, /healthz, /status.json every {interval_s:g}s")
    stop = stop or threading.Event()
    cycle = cycle_reading(reading, interval_s)
    try:
        while not stop.is_set():
            started = time.monotonic()
            try:
                report = run_cycle(cycle, monitor)
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
        rendered.close()
        server.stop()
        log("stopped")
    return monitor


Draw = Callable[[object, dict, dict, int, str | None], None]


def watch(
    reading: Reading,
    draw: Draw,
    *,
    interval_s: float = 2.0,
    count: int | None = None,
    window: int = 10,
    allowed_lag: int = 0,
) -> int:
    """Run serve's cycle (run_cycle: the one pipeline, the commit expiry dated by when an offset was seen to move)
    every `interval_s` and call draw(report, previous, statuses, refresh, error) after each: the previous refresh's
    (committed, lag) per partition, each partition's history status and time lag. `count`: stop after that many
    refreshes. Ctrl-C stops it. A refresh that cannot read draws the last report with the error. Returns the number
    of refreshes."""
    monitor = Monitor(window=window, allowed_lag=allowed_lag, partition_metrics=False)
    previous: dict = {}
    shown = None
    refreshed = 0
    cycle = cycle_reading(reading, interval_s)
    try:
        while count is None or refreshed < count:
            started = time.monotonic()
            error = None
            try:
                report = run_cycle(cycle, monitor)
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
