"""What `offctl serve` exposes, as Prometheus metric families: the exporter's health and its latest cycle (the
report, each partition's history status and time lag). Made from those result objects, no I/O; the serve face
(offctl/faces/serve/monitor.py) keeps them between cycles and hands them over at each collect.

Every sample of a partition or a consumer carries the capture time of the cycle that read it. When a
cycle cannot read a store, the last good values are still served, with their old timestamps: Prometheus
sees them as old, never as fresh, and stops returning them once they pass its staleness limit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from offctl.core.records.model import CatchUp, ConsumerKey, Report, TimeLag
from offctl.core.time.history import NO_CATCH_UP, NOT_CATCHING_UP, STATUSES, catch_up_of, consumer_catch_ups
from offctl.core.time.retention import consumer_minima, headroom, lost_by_consumer
from offctl.core.time.timelag import NO_LAG, SOURCE_CODES, consumer_maxima

if TYPE_CHECKING:  # prometheus_client loads only when serve collects
    from prometheus_client.core import GaugeMetricFamily

# A status as a number, for alerting (worst last): no status yet is no sample.
STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}  # OK 0, WARN 1, STALL 2, STOP 3, REWIND 4
PARTITION_LABELS = ("store", "consumer", "zk_root", "topic", "partition", "topology")
CONSUMER_LABELS = ("store", "consumer", "zk_root")
PARTITION_FAMILIES = tuple(
    (f"offctl_partition_{name}", doc)
    for name, doc in (
        (
            "committed_offset",
            "The stored offset (Trident: the offset its state resumes from; JStorm: the spout fetches it + 1)",
        ),
        ("log_start_offset", "The partition's log start offset"),
        ("log_end_offset", "The partition's log end offset (high watermark)"),
        (
            "lag",
            "Log end (the last stable offset, where the spout reads committed) minus the offset the spout will "
            "resume from (the stored one, or where its start-up rule puts it when it does not use it), when inside "
            "the log",
        ),
        (
            "time_lag_seconds",
            "Seconds the message the spout resumes at has waited: from its timestamp, or "
            "estimated (offctl_partition_time_lag_source)",
        ),
        (
            "time_lag_source",
            "Where the time lag comes from: 0 the message's timestamp, 1 caught up (lag 0), "
            "2 estimated from the log end's growth",
        ),
        ("status", "History status: 0 OK, 1 WARN, 2 STALL, 3 STOP, 4 REWIND"),
        (
            "retention_headroom_seconds",
            "Seconds until the broker may delete the message the spout resumes at "
            "(its timestamp plus retention.ms; negative: past), where known",
        ),
        (
            "commit_expiry_seconds",
            "storm-kafka-client groups: seconds before the broker may delete the commit "
            "(offsets.retention.minutes after the last commit, estimated from below; "
            "negative once past)",
        ),
        (
            "last_stable_offset",
            "The partition's last stable offset, where the spout reads committed "
            "(--isolation-level read_committed): its lag counts to it",
        ),
        (
            "catch_up_seconds",
            "Seconds until the spout reaches lag 0 at the rates over the window (an estimate): 0 caught up, "
            "+Inf not catching up; no sample without an estimate",
        ),
        ("commit_rate", "Messages per second the committed offset of a lagging partition advanced over the window"),
        ("log_rate", "Messages per second the log end of a lagging partition advanced over the window"),
        (
            "lost_to_retention",
            "Offsets the broker deleted below the log start before the spout read them: the log start minus the "
            "stored offset the spout resumes from, 0 at or above it (at most as many messages: markers take offsets)",
        ),
    )
)


@dataclass
class Cycle:
    """One inspection as served: the report, each partition's history status and time lag (from the message at its
    resume offset where the cycle read it, else the history's estimate: offctl.core.time.timelag.served)."""

    report: Report
    statuses: Mapping[tuple, tuple[str | None, TimeLag]]


@dataclass(frozen=True)
class Health:
    """The exporter's own health at a collect: cycles run, read errors by store, the last success and error."""

    cycles: int
    read_errors: Mapping[str, int]
    last_success_s: float | None
    last_duration_s: float | None
    last_error: str | None


def families(cycle: Cycle | None, health: Health, partition_metrics: bool = True) -> Iterator:
    """The metric families of the exporter's health and its latest cycle, for a prometheus_client collector."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    errors, success, duration = health.read_errors, health.last_success_s, health.last_duration_s
    yield _gauge(
        GaugeMetricFamily,
        "offctl_up",
        "1 when the last cycle read every store, else 0",
        [([], 0.0 if health.last_error or success is None else 1.0)],
    )
    yield CounterMetricFamily("offctl_cycles_total", "Inspection cycles run", value=health.cycles)
    errors_family = CounterMetricFamily(
        "offctl_read_errors_total", "Cycles that could not read a store", labels=["store"]
    )
    for store in ("zookeeper", "kafka", "other"):
        errors_family.add_metric([store], errors.get(store, 0))
    yield errors_family
    if duration is not None:
        yield _gauge(
            GaugeMetricFamily,
            "offctl_read_duration_seconds",
            "Time the last cycle took to read and analyze",
            [([], duration)],
        )
    if success is not None:
        yield _gauge(
            GaugeMetricFamily,
            "offctl_last_success_timestamp_seconds",
            "When the last cycle that read everything captured it",
            [([], success)],
        )
    if cycle is None:
        return
    report, at = cycle.report, cycle.report.captured_ms / 1000
    if partition_metrics:
        yield from _partitions(GaugeMetricFamily, cycle, at)
    yield from _consumers(GaugeMetricFamily, report, cycle, at)
    yield from _broker_support(GaugeMetricFamily, report, at)


def _partitions(gauge: type[GaugeMetricFamily], cycle: Cycle, at: float) -> Iterator:
    """The per-partition families. At 100,000 partitions they are 700,000 samples: each family's samples are
    made as the writer reads them (a generator, not a list), from one row of values per partition made once
    per collect and shared by the families. Nothing is kept from one collect to the next: objects kept
    would be allocated among the render's transient ones and keep their memory from being returned."""
    rows = _partition_rows(cycle)
    for column, (name, doc) in enumerate(PARTITION_FAMILIES):
        family = gauge(name, doc, labels=list(PARTITION_LABELS))
        family.samples = _samples(name, rows, column, at)
        yield family


def _consumers(gauge: type[GaugeMetricFamily], report: Report, cycle: Cycle, at: float) -> Iterator:
    total = gauge("offctl_consumer_lag_total", "Sum of the consumer's partition lags", labels=list(CONSUMER_LABELS))
    worst = gauge("offctl_consumer_lag_max", "The consumer's largest partition lag", labels=list(CONSUMER_LABELS))
    status = gauge(
        "offctl_consumer_status",
        "Worst history status of its partitions: 0 OK ... 4 REWIND",
        labels=list(CONSUMER_LABELS),
    )
    time_lag = gauge(
        "offctl_consumer_time_lag_max_seconds",
        "The consumer's largest partition time lag",
        labels=list(CONSUMER_LABELS),
    )
    time_lag_source = gauge(
        "offctl_consumer_time_lag_max_source",
        "Where that largest time lag comes from: 0 a message's timestamp, 1 caught up, 2 estimated",
        labels=list(CONSUMER_LABELS),
    )
    headroom_min = gauge(
        "offctl_consumer_retention_headroom_min_seconds",
        "The consumer's smallest partition "
        "retention headroom: seconds until the broker may delete a message it resumes at",
        labels=list(CONSUMER_LABELS),
    )
    catch_up = gauge(
        "offctl_consumer_catch_up_seconds",
        "Seconds until every lagging partition of the consumer reaches lag 0 at the rates over the window: 0 caught "
        "up, +Inf when one is not catching up; no sample when one has no estimate",
        labels=list(CONSUMER_LABELS),
    )
    commit_rate = gauge(
        "offctl_consumer_commit_rate",
        "Messages per second its committed offsets advanced over the window, summed over its lagging partitions",
        labels=list(CONSUMER_LABELS),
    )
    log_rate = gauge(
        "offctl_consumer_log_rate",
        "Messages per second the log ends of its lagging partitions advanced over the window, summed",
        labels=list(CONSUMER_LABELS),
    )
    lost = gauge(
        "offctl_consumer_lost_to_retention_total",
        "Sum of the consumer's partitions' offsets deleted below the log start before the spout read them",
        labels=list(CONSUMER_LABELS),
    )
    findings = gauge(
        "offctl_consumer_findings",
        "Findings of the consumer, by code and severity",
        labels=[*CONSUMER_LABELS, "code", "severity"],
    )
    worst_status: dict[ConsumerKey, int] = {}
    for row in report.rows:
        s, _ = cycle.statuses.get(row.partition_key, (None, None))
        if s is not None:
            k = row.record.key
            worst_status[k] = max(worst_status.get(k, 0), STATUS_CODES[s])
    maxima = consumer_maxima(
        report.rows, (cycle.statuses.get(row.partition_key, (None, NO_LAG))[1] for row in report.rows)
    )
    minima = consumer_minima(report.rows, report.headrooms) if report.headrooms else {}
    ups = consumer_catch_ups(report)
    lost_by = lost_by_consumer(report.rows)
    for c in report.consumers:
        labels = _labels(c.key)
        _add_catch_up((catch_up, commit_rate, log_rate), labels, ups.get(c.key, NO_CATCH_UP), at)
        if c.key in minima:
            headroom_min.add_metric(labels, minima[c.key], timestamp=at)
        if c.key in lost_by:
            lost.add_metric(labels, float(lost_by[c.key]), timestamp=at)
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
    yield from (
        total,
        worst,
        status,
        time_lag,
        time_lag_source,
        headroom_min,
        lost,
        catch_up,
        commit_rate,
        log_rate,
        findings,
    )


def _add_catch_up(families: tuple, labels: list[str], up: CatchUp, at: float) -> None:
    """A consumer's catch-up samples (catch_up_seconds' value, the rates), each only where it has a value."""
    for family, value in zip(families, (catch_up_seconds(up), up.commit_rate, up.log_rate)):
        if value is not None:
            family.add_metric(labels, value, timestamp=at)


def catch_up_seconds(up: CatchUp) -> float | None:
    """A catch-up as a gauge's value: its seconds, +Inf where the spout is not catching up (an alert on a time
    over some figure fires on it too), None (no sample) where there is no estimate."""
    return math.inf if up.state == NOT_CATCHING_UP else up.seconds


def _broker_support(gauge: type[GaugeMetricFamily], report: Report, at: float) -> Iterator:
    """Whether the brokers serve each consumer's spout (offctl.core.storm.protocol): only the consumers judged."""
    served = gauge(
        "offctl_consumer_broker_served",
        "1 when the brokers (or the --kafka-release what-if) accept a version of every request the spout's Kafka "
        "client sends, 0 when they do not (BROKER_INCOMPATIBLE); absent when not judged",
        labels=list(CONSUMER_LABELS),
    )
    for key, support in report.broker_support.items():
        served.add_metric(_labels(key), 1.0 if support.serves else 0.0, timestamp=at)
    yield served


def _labels(key: ConsumerKey) -> list[str]:
    return [key.store, key.consumer, key.zk_root or ""]


def _partition_rows(cycle: Cycle) -> list[tuple[dict, tuple]]:
    """(labels, values in PARTITION_FAMILIES' order, None for no sample) per partition of the cycle."""
    statuses = cycle.statuses
    expiries = cycle.report.commit_expiry
    rooms = cycle.report.headrooms
    ups = cycle.report.catch_ups
    rows = []
    for row in cycle.report.rows:
        r = row.record
        expiry = expiries.get(row.partition_key)
        room = headroom(row, rooms) if rooms else None
        up = catch_up_of(row, ups)
        key = (
            r.key.store,
            r.key.consumer,
            r.key.zk_root or "",
            row.topic or "",
            str(r.partition),
            r.topology_name or "",
        )
        # One label dict per partition, shared by its samples (the writer only reads them): what
        # add_metric does, without a dict per sample.
        labels = dict(zip(PARTITION_LABELS, key))
        status, time_lag = statuses.get(row.partition_key, (None, NO_LAG))
        rows.append(
            (
                labels,
                tuple(
                    None if v is None else float(v)
                    for v in (
                        r.committed,
                        row.log_start,
                        row.log_end,
                        row.lag,
                        time_lag.seconds,
                        SOURCE_CODES.get(time_lag.source),
                        STATUS_CODES.get(status) if status else None,
                        room.seconds if room is not None else None,
                        expiry.headroom_s if expiry is not None else None,
                        row.last_stable,
                        catch_up_seconds(up),
                        up.commit_rate,
                        up.log_rate,
                        row.lost_to_retention,
                    )
                ),
            )
        )
    return rows


def _samples(name: str, rows: list[tuple[dict, tuple]], column: int, at: float) -> Iterator:
    """A family's samples, for its `samples` attribute: prometheus-client's writers only iterate it, once per
    collect, so a generator does; a list would hold 700,000 Sample tuples at 100,000 partitions."""
    from prometheus_client.samples import Sample

    for labels, values in rows:
        value = values[column]
        if value is not None:
            yield Sample(name, labels, value, at)


def _gauge(
    gauge: type[GaugeMetricFamily], name: str, doc: str, samples: Iterable[tuple[list[str], float | None]]
) -> GaugeMetricFamily:
    family = gauge(name, doc, labels=[])
    for labels, value in samples:
        family.add_metric(labels, value)
    return family
