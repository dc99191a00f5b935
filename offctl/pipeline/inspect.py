"""`offctl inspect` as a library call: read (offctl.pipeline.read), then assess (offctl.pipeline.assess); and the
exit code a report gives."""

from __future__ import annotations

import time

from offctl.core.records.model import Report, Severity
from offctl.pipeline.assess import assess
from offctl.pipeline.read import cyclic_gc_paused, open_stores, read_selected, spout_roots
from offctl.settings.run import Reading


def exit_code(report: Report, fail_on: str) -> int:
    """3 when part of a store could not be read (the report is partial), else 1 when a finding is at or
    above `fail_on` (error, warning, info; never: no finding fails), else 0."""
    return findings_exit_code(bool(report.incomplete), report.worst(), fail_on)


def findings_exit_code(incomplete: bool, worst: Severity | None, fail_on: str) -> int:
    """inspect's and audit's exit code: 3 for a partial read, 1 for a finding at or above fail_on, else 0."""
    if incomplete:
        return 3
    if fail_on != "never" and worst is not None and worst >= Severity.parse(fail_on):
        return 1
    return 0


def inspect(reading: Reading, now_ms: int | None = None) -> Report:
    """Read every selected spout and group, join with log offsets, and report rows and findings, with the reads
    that follow (assess): the time lag and retention headroom of the lagging partitions and the commit expiry of
    the storm-kafka-client groups' partitions, their messages read within the reading's time-lag budget in all (0:
    not read)."""
    roots = spout_roots(reading.conn, reading.selection)  # a root that is no ZooKeeper path: refused before connecting
    with cyclic_gc_paused():
        with open_stores(reading.conn) as (zk, kafka):
            now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
            snapshot, records = read_selected(reading, zk, kafka, now_ms, roots)
            return assess(snapshot, kafka, reading, records)
