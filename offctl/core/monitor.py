"""What `offctl serve` exposes: the latest inspection, a window of observations per partition for the
history status, and the exporter's own health, as Prometheus metric families. No I/O here: the command
runs the cycles and the HTTP server.

Every sample of a partition or a consumer carries the capture time of the cycle that read it. When a
cycle cannot read a store, the last good values are still served, with their old timestamps: Prometheus
sees them as old, never as fresh, and stops returning them once they pass its staleness limit.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from offctl.core.expiry import moved_after_ms
from offctl.core.history import (DEFAULT_WINDOW, STATUSES, Observation, PerWindow, commit_period_of, evaluate,
                                 falling_behind)
from offctl.core.model import ConsumerKey, Report, TimeLag
from offctl.core.retention import consumer_minima, headroom
from offctl.core.timelag import NO_LAG, SOURCE_CODES, consumer_maxima, served

# A status as a number, for alerting (worst last): no status yet is no sample.
STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}  # OK 0, WARN 1, STALL 2, STOP 3, REWIND 4
PARTITION_LABELS = ("store", "consumer", "zk_root", "topic", "partition", "topology")
CONSUMER_LABELS = ("store", "consumer", "zk_root")
PARTITION_FAMILIES = tuple((f"offctl_partition_{name}", doc) for name, doc in (
    ("committed_offset", "The stored offset (Trident: the offset its state resumes from)"),
    ("log_start_offset", "The partition's log start offset"),
    ("log_end_offset", "The partition's log end offset (high watermark)"),
    ("lag", "Log end (the last stable offset, where the spout reads committed) minus the offset the spout will "
            "resume from (the stored one, or where its start-up rule puts it when it does not use it), when inside "
            "the log"),
    ("time_lag_seconds", "Seconds the message the spout resumes at has waited: from its timestamp, or "
                         "estimated (offctl_partition_time_lag_source)"),
    ("time_lag_source", "Where the time lag comes from: 0 the message's timestamp, 1 caught up (lag 0), "
                        "2 estimated from the log end's growth"),
    ("status", "History status: 0 OK, 1 WARN, 2 STALL, 3 STOP, 4 REWIND"),
    ("retention_headroom_seconds", "Seconds until the broker may delete the message the spout resumes at "
                                   "(its timestamp plus retention.ms; negative: past), where known"),
    ("commit_expiry_seconds", "storm-kafka-client groups: seconds before the broker may delete the commit "
                              "(offsets.retention.minutes after the last commit, estimated from below; "
                              "negative once past)"),
    ("last_stable_offset", "The partition's last stable offset, where the spout reads committed "
                           "(--isolation-level read_committed): its lag counts to it")))


@dataclass
class Cycle:
    """One inspection as served: the report, each partition's history status and time lag (from the message at its
    resume offset where the cycle read it, else the history's estimate: offctl.core.timelag.served)."""

    report: Report
    statuses: Mapping[tuple, tuple[str | None, TimeLag]]


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
    commit_periods: Mapping[tuple, int] = field(default_factory=dict)  # the last report's, by (store, consumer, zk_root)
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
            if row.topic is None or row.record.committed is None:
                continue
            key = row.partition_key
            seen.add(key)
            window = self.observations.setdefault(key, deque(maxlen=self.window))
            window.append(Observation(report.captured_ms, row.record.committed, row.log_start, row.log_end,
                                      row.record.modified_ms))
            running = report_running(report, row.record.topology_id)
            h = evaluate(window, running=running, window=self.window, allowed_lag=self.allowed_lag,
                         commit_period_ms=commit_period_of(key[0], periods.get(key[:3], period) if periods else period))
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
        """Per partition, when its committed offset was last seen to move (offctl.core.expiry.moved_after_ms):
        the next cycle's commit-expiry estimate takes it where it is later than the message's. Worked out per
        partition when looked up (history.PerWindow)."""
        return PerWindow(self.observations, lambda key, window: moved_after_ms(window))

    def falling_behind(self) -> Mapping[tuple, float]:
        """Per partition, how fast the message it resumes at ages over its window (offctl.core.history
        .falling_behind), where the window shows it: the next cycle's RETENTION_RISK takes it (offctl.core.retention,
        rule 4). Worked out per partition when looked up (history.PerWindow)."""
        periods, period = self.commit_periods, self.kafka_commit_period_ms
        return PerWindow(self.observations, lambda key, window: falling_behind(
            window, commit_period_of(key[0], periods.get(key[:3], period) if periods else period)))

    def failed(self, message: str) -> None:
        """A cycle that could not read at all: count it; the last good cycle is served on, with its time."""
        with self.lock:
            self.cycles += 1
            self._error(message)

    def _error(self, message: str) -> None:  # the lock is held
        store = ("zookeeper" if "ZooKeeper" in message else
                 "kafka" if "Kafka" in message or "broker" in message else "other")
        self.read_errors[store] = self.read_errors.get(store, 0) + 1
        self.last_error = message

    def healthy(self, now_s: float, interval_s: float) -> bool:
        """The last cycle read everything, within three intervals."""
        return self.last_success_s is not None and self.last_error is None and now_s - self.last_success_s <= 3 * interval_s


def report_running(report: Report, topology_id: str | None) -> bool | None:
    """Whether the topology that wrote an offset runs (None: cannot tell), as the history rules ask."""
    if report.running is None or not topology_id:
        return None
    return topology_id in report.running


def _labels(key: ConsumerKey) -> list[str]:
    return [key.store, key.consumer, key.zk_root or ""]


class Collector:
    """A prometheus_client collector over a Monitor: the metric families of its latest cycle."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor

    def collect(self) -> Iterator:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        m = self.monitor
        with m.lock:
            cycle, errors = m.cycle, dict(m.read_errors)
            cycles, success, duration = m.cycles, m.last_success_s, m.last_duration_s
        yield _gauge(GaugeMetricFamily, "offctl_up", "1 when the last cycle read every store, else 0",
                     [([], 0.0 if m.last_error or success is None else 1.0)])
        yield CounterMetricFamily("offctl_cycles_total", "Inspection cycles run", value=cycles)
        errors_family = CounterMetricFamily("offctl_read_errors_total", "Cycles that could not read a store",
                                            labels=["store"])
        for store in ("zookeeper", "kafka", "other"):
            errors_family.add_metric([store], errors.get(store, 0))
        yield errors_family
        if duration is not None:
            yield _gauge(GaugeMetricFamily, "offctl_read_duration_seconds",
                         "Time the last cycle took to read and analyze", [([], duration)])
        if success is not None:
            yield _gauge(GaugeMetricFamily, "offctl_last_success_timestamp_seconds",
                         "When the last cycle that read everything captured it", [([], success)])
        if cycle is None:
            return
        report, at = cycle.report, cycle.report.captured_ms / 1000
        if m.partition_metrics:
            yield from self._partitions(GaugeMetricFamily, cycle, at)
        yield from self._consumers(GaugeMetricFamily, report, cycle, at)

    def _partitions(self, gauge, cycle: Cycle, at: float) -> Iterator:
        """The per-partition families. At 100,000 partitions they are 700,000 samples: each family's samples are
        made as the writer reads them (a generator, not a list), from one row of values per partition made once
        per collect and shared by the families. Nothing is kept from one collect to the next: objects kept
        would be allocated among the render's transient ones and keep their memory from being returned."""
        rows = _partition_rows(cycle)
        for column, (name, doc) in enumerate(PARTITION_FAMILIES):
            family = gauge(name, doc, labels=list(PARTITION_LABELS))
            family.samples = _samples(name, rows, column, at)
            yield family

    def _consumers(self, gauge, report: Report, cycle: Cycle, at: float) -> Iterator:
        total = gauge("offctl_consumer_lag_total", "Sum of the consumer's partition lags", labels=list(CONSUMER_LABELS))
        worst = gauge("offctl_consumer_lag_max", "The consumer's largest partition lag", labels=list(CONSUMER_LABELS))
        status = gauge("offctl_consumer_status", "Worst history status of its partitions: 0 OK ... 4 REWIND",
                       labels=list(CONSUMER_LABELS))
        time_lag = gauge("offctl_consumer_time_lag_max_seconds", "The consumer's largest partition time lag",
                         labels=list(CONSUMER_LABELS))
        time_lag_source = gauge("offctl_consumer_time_lag_max_source", "Where that largest time lag comes from: "
                                "0 a message's timestamp, 1 caught up, 2 estimated", labels=list(CONSUMER_LABELS))
        headroom_min = gauge("offctl_consumer_retention_headroom_min_seconds", "The consumer's smallest partition "
                             "retention headroom: seconds until the broker may delete a message it resumes at",
                             labels=list(CONSUMER_LABELS))
        findings = gauge("offctl_consumer_findings", "Findings of the consumer, by code and severity",
                         labels=[*CONSUMER_LABELS, "code", "severity"])
        worst_status: dict[ConsumerKey, int] = {}
        for row in report.rows:
            s, _ = cycle.statuses.get(row.partition_key, (None, None))
            if s is not None:
                k = row.record.key
                worst_status[k] = max(worst_status.get(k, 0), STATUS_CODES[s])
        maxima = consumer_maxima(report.rows, (cycle.statuses.get(row.partition_key, (None, NO_LAG))[1]
                                               for row in report.rows))
        minima = consumer_minima(report.rows, report.headrooms) if report.headrooms else {}
        for c in report.consumers:
            labels = _labels(c.key)
            if c.key in minima:
                headroom_min.add_metric(labels, minima[c.key], timestamp=at)
            total.add_metric(labels, float(c.total_lag), timestamp=at)
            if c.max_lag is not None:
                worst.add_metric(labels, float(c.max_lag), timestamp=at)
            if c.key in worst_status:
                status.add_metric(labels, float(worst_status[c.key]), timestamp=at)
            if c.key in maxima:
                time_lag.add_metric(labels, maxima[c.key].seconds, timestamp=at)
                time_lag_source.add_metric(labels, float(SOURCE_CODES[maxima[c.key].source]), timestamp=at)
        counts: dict[tuple, int] = {}
        for f in report.findings:
            k = (*_labels(f.key), f.code, f.severity.label)
            counts[k] = counts.get(k, 0) + 1
        for labels, n in sorted(counts.items()):
            findings.add_metric(list(labels), float(n), timestamp=at)
        yield from (total, worst, status, time_lag, time_lag_source, headroom_min, findings)


def _partition_rows(cycle: Cycle) -> list[tuple[dict, tuple]]:
    """(labels, values in PARTITION_FAMILIES' order, None for no sample) per partition of the cycle."""
    statuses = cycle.statuses
    expiries = cycle.report.commit_expiry
    rooms = cycle.report.headrooms
    rows = []
    for row in cycle.report.rows:
        r = row.record
        expiry = expiries.get(row.partition_key)
        room = headroom(row, rooms) if rooms else None
        key = (r.key.store, r.key.consumer, r.key.zk_root or "", row.topic or "", str(r.partition),
               r.topology_name or "")
        # One label dict per partition, shared by its samples (the writer only reads them): what
        # add_metric does, without a dict per sample.
        labels = dict(zip(PARTITION_LABELS, key))
        status, time_lag = statuses.get(row.partition_key, (None, NO_LAG))
        rows.append((labels, tuple(None if v is None else float(v) for v in (
            r.committed, row.log_start, row.log_end, row.lag, time_lag.seconds,
            SOURCE_CODES.get(time_lag.source), STATUS_CODES.get(status) if status else None,
            room.seconds if room is not None else None, expiry.headroom_s if expiry is not None else None,
            row.last_stable))))
    return rows


def _samples(name: str, rows: list[tuple[dict, tuple]], column: int, at: float) -> Iterator:
    """A family's samples, for its `samples` attribute: prometheus-client's writers only iterate it, once per
    collect, so a generator does; a list would hold 700,000 Sample tuples at 100,000 partitions."""
    from prometheus_client.samples import Sample

    for labels, values in rows:
        value = values[column]
        if value is not None:
            yield Sample(name, labels, value, at)


def _gauge(gauge, name: str, doc: str, samples) -> object:
    family = gauge(name, doc, labels=[])
    for labels, value in samples:
        family.add_metric(labels, value)
    return family
