"""What `offctl audit` came to (offctl.faces.audit): its tally and its rows, as render/audit.py renders them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from offctl.core.records.model import Report, Severity
from offctl.core.storm.commits import CommitBehaviour
from offctl.core.time.expiry import Retention
from offctl.core.time.retention import lost_by_topic


def partition_key(d: Mapping) -> tuple:
    """A consumer-partition, as the history of several snapshots is joined on."""
    return d["store"], d["consumer"], d["zk_root"], d["topic"], d["partition"]


# Keys of a task's partition rows that only travel to the driver (history, the files' captured_at): not in the document.
TASK_KEYS = ("captured_ms", "modified_ms", "resumes_stored")


@dataclass(frozen=True)
class Tally:
    """The counts of an audit, added up over chunks (small: it travels to the driver)."""

    consumers: int = 0
    partitions: int = 0
    total_lag: int = 0
    by_severity: Counter = field(default_factory=Counter)
    by_code: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    checks_skipped: list[str] = field(default_factory=list)
    # what storm-kafka-client groups' commits mean (Report.commits): the same in every chunk that has such groups
    commits: CommitBehaviour | None = None
    # the offsets.retention.minutes the commit expiry assumes (Report.offsets_retention): the broker's, the same in
    # every chunk that estimated it
    offsets_retention: Retention | None = None
    # the fleet's extremes of the partitions' figures (None: no partition has one): (seconds, consumer dict keys)
    max_time_lag: tuple[float, tuple] | None = None
    min_retention_headroom: tuple[float, tuple] | None = None
    min_commit_expiry: tuple[float, tuple] | None = None
    profiles: Counter = field(default_factory=Counter)  # consumers per profile that judged them (None: the defaults)
    # what retention already took, per topic: the partitions' lost_to_retention summed (retention.lost_by_topic)
    lost_to_retention: Counter = field(default_factory=Counter)

    @classmethod
    def of(cls, report: Report, rows: Iterable[Mapping] = ()) -> Tally:
        """The counts of one chunk's report; `rows`: its partition rows (partition_rows), for the extremes."""
        # A chunk that could not be read has no Kafka or Storm data because it failed, not because those
        # were not asked for: its failure is in `incomplete`, and it skipped no check.
        failed = bool(report.incomplete) and not report.rows
        return cls(
            len(report.consumers),
            len(report.rows),
            sum(c.total_lag for c in report.consumers),
            Counter(f.severity.label for f in report.findings),
            Counter(f.code for f in report.findings),
            list(report.notes),
            list(report.incomplete),
            [] if failed else list(report.checks_skipped),
            report.commits,
            report.offsets_retention,
            *extremes(rows),
            Counter(c.profile for c in report.consumers),
            Counter(lost_by_topic(report.rows)),
        )

    def __add__(self, other: Tally) -> Tally:
        def merged(a: list[str], b: list[str]) -> list[str]:
            return a + [x for x in b if x not in a]  # the same note from every chunk is said once

        return Tally(
            self.consumers + other.consumers,
            self.partitions + other.partitions,
            self.total_lag + other.total_lag,
            self.by_severity + other.by_severity,
            self.by_code + other.by_code,
            merged(self.notes, other.notes),
            merged(self.incomplete, other.incomplete),
            merged(self.checks_skipped, other.checks_skipped),
            self.commits or other.commits,
            self.offsets_retention or other.offsets_retention,
            _pick(max, self.max_time_lag, other.max_time_lag),
            _pick(min, self.min_retention_headroom, other.min_retention_headroom),
            _pick(min, self.min_commit_expiry, other.min_commit_expiry),
            self.profiles + other.profiles,
            self.lost_to_retention + other.lost_to_retention,
        )

    def worst(self) -> Severity | None:
        return max((Severity.parse(s) for s, n in self.by_severity.items() if n), default=None)

    def summary(self) -> dict:
        """inspect's summary block (render.summary_dict), from the tally (`lost_to_retention`: per topic, those where
        retention took something), with the fleet's largest time lag, smallest retention headroom and soonest commit
        expiry (null where no partition has one)."""
        worst = self.worst()
        return {
            "consumers": self.consumers,
            "partitions": self.partitions,
            "total_lag": self.total_lag,
            "findings": {s.label: self.by_severity.get(s.label, 0) for s in sorted(Severity, reverse=True)},
            "by_code": dict(sorted(self.by_code.items())),
            "status": worst.label if worst else "ok",
            "lost_to_retention": {topic: n for topic, n in sorted(self.lost_to_retention.items()) if n},
            "max_time_lag_s": self.max_time_lag[0] if self.max_time_lag else None,
            "min_retention_headroom_s": self.min_retention_headroom[0] if self.min_retention_headroom else None,
            "min_commit_expiry_s": self.min_commit_expiry[0] if self.min_commit_expiry else None,
        }


# The figures the tally keeps the fleet's extreme of: (partition row key, max or min), as inspect's rows name them.
EXTREMES = (("time_lag_s", max), ("retention_headroom_s", min), ("commit_expiry_s", min))


def extremes(rows: Iterable[Mapping]) -> tuple:
    """Per EXTREMES, the extreme figure of these partition rows and its partition (store, consumer, zk_root, topic,
    partition), or None when no row has one. One pass over the rows."""
    best: list = [None] * len(EXTREMES)
    for row in rows:
        for i, (key, pick) in enumerate(EXTREMES):
            value = row[key]
            if value is not None and (best[i] is None or pick(value, best[i][0]) != best[i][0]):
                best[i] = (value, partition_key(row))
    return tuple(best)


def _pick(pick, a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None or b is None:
        return a or b
    return a if pick(a[0], b[0]) == a[0] else b


class Rows(Protocol):
    """Rows still where they were made (an audit's are a Spark RDD of dicts), read one at a time on the driver."""

    def toLocalIterator(self) -> Iterator[dict]: ...


@dataclass(frozen=True)
class AuditResult:
    """What an audit found: totals on the driver, rows still in Spark to stream or write."""

    captured_ms: int
    tally: Tally
    worst: list[dict]  # the worst consumers, worst first
    top_topics: list[dict]
    history: dict | None  # counts by history status, or None without history
    snapshots_used: int
    rows: Rows  # partition dicts (with history)
    findings: Rows  # finding dicts
    consumers: Rows  # consumer dicts
    topics: Rows  # topic totals
    topologies: Rows  # topology totals
    written: list[str] = field(default_factory=list)
    snapshot: str | None = None
    timings: dict = field(default_factory=dict)
    spout_settings: str = ""  # the settings the findings assume (SpoutProfile.describe)
    read_by: list[str] = field(default_factory=list)  # host:pid of every process that read a chunk
    driver: str = ""  # host:pid of the driver

    def summary(self) -> dict:
        return {**self.tally.summary(), "history": self.history, "snapshots": self.snapshots_used}
