"""The exporter's state between cycles (`offctl serve`, `offctl watch`): a window of observations per partition
for the history status, the latest cycle, and the exporter's own health. No I/O here: the face runs the cycles
and the HTTP server; offctl/render/metrics.py makes the metric families from what `Collector` hands it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from offctl.core.records.model import Report
from offctl.core.time.expiry import moved_after_ms
from offctl.core.time.history import (
    DEFAULT_WINDOW,
    Earlier,
    Observation,
    PerWindow,
    commit_period_of,
    evaluate,
    falling_behind,
)
from offctl.core.time.timelag import served
from offctl.render.metrics import Cycle, Health, families


@dataclass
class Monitor:
    """The exporter's state between cycles; `update` and `collect` may run on different threads."""

    window: int = DEFAULT_WINDOW
    allowed_lag: int = 0
    partition_metrics: bool = True
    cycle: Cycle | None = None
    observations: dict[tuple, deque] = field(default_factory=dict)
    read_errors: dict[str, int] = field(default_factory=dict)
    cycles: int = 0
    last_success_s: float | None = None
    last_duration_s: float | None = None
    last_error: str | None = None
    kafka_commit_period_ms: int = 0  # the last report's: how long a storm-kafka-client commit may stand still
    commit_periods: Mapping[tuple, int] = field(
        default_factory=dict
    )  # the last report's, by (store, consumer, zk_root)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, report: Report, duration_s: float) -> None:
        """Take a cycle's report: add each partition's observation to its window, evaluate its status.
        A report that could not read everything counts as a read error of the stores it names."""
        statuses = {}
        seen = set()
        self.kafka_commit_period_ms = report.kafka_commit_period_ms
        # with several profiles, a group's own commit period (Report.commit_periods), looked up by partition key
        self.commit_periods = {(k.store, k.consumer, k.zk_root or ""): ms for k, ms in report.commit_periods.items()}
        periods, period = self.commit_periods, report.kafka_commit_period_ms
        for row in report.rows:
            if row.topic is None:
                continue
            if row.record.committed is None:  # no stored offset to follow (an unusable record): no history, and the
                statuses[row.partition_key] = (None, served(row, report.time_lags, None))  # report's time lag
                continue
            key = row.partition_key
            seen.add(key)
            window = self.observations.setdefault(key, deque(maxlen=self.window))
            window.append(
                Observation(
                    report.captured_ms, row.record.committed, row.log_start, row.log_end, row.record.modified_ms
                )
            )
            running = report_running(report, row.record.topology_id)
            h = evaluate(
                window,
                running=running,
                window=self.window,
                allowed_lag=self.allowed_lag,
                commit_period_ms=commit_period_of(key[0], periods.get(key[:3], period) if periods else period),
            )
            statuses[key] = (h.status, served(row, report.time_lags, h.time_lag_s))
        with self.lock:
            for key in [k for k in self.observations if k not in seen]:
                del self.observations[key]  # partitions gone from the fleet: the window stays bounded
            self.cycles += 1
            self.last_duration_s = duration_s
            if report.incomplete:
                self._error(report.incomplete[0])
            else:
                self.last_success_s = report.captured_ms / 1000
                self.last_error = None
            if not report.incomplete or self.cycle is None:
                self.cycle = Cycle(report, statuses)

    def moved_after(self) -> Mapping[tuple, int]:
        """Per partition, when its committed offset was last seen to move (offctl.core.time.expiry.moved_after_ms):
        the next cycle's commit-expiry estimate takes it where it is later than the message's. Worked out per
        partition when looked up (history.PerWindow)."""
        return PerWindow(self.observations, lambda key, window: moved_after_ms(window))

    def falling_behind(self) -> Mapping[tuple, float]:
        """Per partition, how fast the message it resumes at ages over its window (offctl.core.time.history
        .falling_behind), where the window shows it: the next cycle's RETENTION_RISK takes it
        (offctl.core.time.retention, rule 4). Worked out per partition when looked up (history.PerWindow)."""
        periods, period = self.commit_periods, self.kafka_commit_period_ms
        return PerWindow(
            self.observations,
            lambda key, window: falling_behind(
                window, commit_period_of(key[0], periods.get(key[:3], period) if periods else period)
            ),
        )

    def earlier(self) -> Earlier:
        """Per partition, its window as the next cycle's catch-up estimate takes it (offctl.core.time.history
        .catch_ups): the newest `window - 1` observations, to which that cycle adds its own, so the estimate spans
        the window the history status does. The windows themselves, not a copy: read within the cycle that asked
        (run_cycle), before its update."""
        return Earlier(self.observations, max(self.window - 1, 0))

    def failed(self, message: str) -> None:
        """A cycle that could not read at all: count it; the last good cycle is served on, with its time."""
        with self.lock:
            self.cycles += 1
            self._error(message)

    def _error(self, message: str) -> None:  # the lock is held
        store = (
            "zookeeper" if "ZooKeeper" in message else "kafka" if "Kafka" in message or "broker" in message else "other"
        )
        self.read_errors[store] = self.read_errors.get(store, 0) + 1
        self.last_error = message

    def healthy(self, now_s: float, interval_s: float) -> bool:
        """The last cycle read everything, within three intervals."""
        return (
            self.last_success_s is not None
            and self.last_error is None
            and now_s - self.last_success_s <= 3 * interval_s
        )


def report_running(report: Report, topology_id: str | None) -> bool | None:
    """Whether the topology that wrote an offset runs (None: cannot tell), as the history rules ask."""
    if report.running is None or not topology_id:
        return None
    return topology_id in report.running


class Collector:
    """A prometheus_client collector over a Monitor: the metric families of its latest cycle."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor

    def collect(self) -> Iterator:
        m = self.monitor
        with m.lock:
            cycle = m.cycle
            health = Health(m.cycles, dict(m.read_errors), m.last_success_s, m.last_duration_s, m.last_error)
        yield from families(cycle, health, m.partition_metrics)
