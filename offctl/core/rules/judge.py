"""Each consumer judged by its own profile (offctl.core.rules.profiles; docs/contract.md, "Per-spout profiles"). Pure.

analyze judges a snapshot by one set of Thresholds. With profiles, the snapshot's consumers are grouped by the
profile that resolves for each (on the consumer ids analyze reports: a wildcard folder read as its own spout id is
matched as that id), analyze runs once per group with that group's Thresholds, and the reports are merged: rows,
findings and consumers in the order one analyze gives them, read findings last, notes once. A run without profiles
(or whose consumers all resolve to one) is one analyze, as before, so nothing changes in any output but each
consumer's `profile`.

The reads that follow the analysis (offctl.pipeline) judge each part of the report by its own profile: `parts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from offctl.core.records.model import KAFKA, ConsumerKey, OffsetRecord, Report, Snapshot, Thresholds
from offctl.core.rules.analyze import analyze, parse_snapshot
from offctl.core.rules.consumer import resolve_layouts
from offctl.core.rules.profiles import Profiles

DEFAULTS = "defaults"  # how the assumptions line names the consumers no profile matched


def analyze_each(
    snapshot: Snapshot, profiles: Profiles, records: Mapping[ConsumerKey, list[OffsetRecord]] | None = None
) -> Report:
    """analyze, each consumer by the Thresholds of the profile that resolves for it; each ConsumerSummary names
    its profile."""
    if not profiles.profiles:
        return analyze(snapshot, profiles.default, records)
    grouped = resolve_layouts(records if records is not None else parse_snapshot(snapshot), snapshot.cluster)
    groups: dict[str | None, tuple[Thresholds, dict[ConsumerKey, list[OffsetRecord]]]] = {}
    for key, rs in grouped.items():
        name, thresholds = profiles.judging(key)
        groups.setdefault(name, (thresholds, {}))[1][key] = rs
    if len(groups) <= 1:
        name, (thresholds, _) = next(iter(groups.items()), (None, (profiles.default, {})))
        report = analyze(snapshot, thresholds, grouped)
        return replace(report, consumers=tuple(replace(c, profile=name) for c in report.consumers)) if name else report
    parts = [
        (name, thresholds, analyze(replace(snapshot, read_findings=()), thresholds, rs))
        for name, (thresholds, rs) in groups.items()
    ]
    read = analyze(replace(snapshot, zk_nodes=(), commits=()), profiles.default, {})  # the read findings alone
    said = assumptions({name: len(report.consumers) for name, _, report in parts}, profiles)
    return replace(merged(list(grouped), parts, read), spout_settings=said)


def merged(
    order: Sequence[ConsumerKey], parts: Sequence[tuple[str | None, Thresholds, Report]], read: Report
) -> Report:
    """One report from the reports of the profile groups (`parts`, in the order their first consumer comes) and of
    the read findings (`read`): consumers in `order`, each with its rows and findings together as analyze gives
    them, the read's findings last."""
    rows, found, consumers = _by_consumer(parts)
    kafka, period, periods = _commit_periods(order, parts)
    return replace(
        read,
        rows=tuple(r for k in order for r in rows.get(k, ())),
        findings=_findings_in_order(order, found, read),
        consumers=tuple(consumers[k] for k in order if k in consumers),
        notes=tuple(dict.fromkeys(n for _, _, report in parts for n in report.notes)),
        commits=kafka.commits if kafka is not None else None,
        kafka_commit_period_ms=period,
        commit_periods=periods,
    )


def _by_consumer(
    parts: Sequence[tuple[str | None, Thresholds, Report]],
) -> tuple[dict[ConsumerKey, list], dict[ConsumerKey, list], dict]:
    """Each consumer's rows, findings and summary from the parts' reports, the summary named by its part's profile."""
    rows: dict[ConsumerKey, list] = {}
    found: dict[ConsumerKey, list] = {}
    consumers = {}
    for name, _, report in parts:
        for row in report.rows:
            rows.setdefault(row.record.key, []).append(row)
        for f in report.findings:
            found.setdefault(f.key, []).append(f)
        for c in report.consumers:
            consumers[c.key] = replace(c, profile=name)
    return rows, found, consumers


def _commit_periods(
    order: Sequence[ConsumerKey], parts: Sequence[tuple[str | None, Thresholds, Report]]
) -> tuple[Report | None, int, dict[ConsumerKey, int]]:
    """The commit period the report states, the report whose commits go with it, and each Kafka consumer's own
    period where it differs."""
    # Report-level: the profile of the first storm-kafka-client group in the document's order (its commits' meaning, its
    # commit period); a group whose profile's period differs keeps its own in commit_periods.
    part_of = {c.key: (t, report) for _, t, report in parts for c in report.consumers}
    first = next((k for k in order if k.store == KAFKA and k in part_of), None)
    thresholds, kafka = part_of[first] if first is not None else (parts[0][1], None)
    period = thresholds.spout.kafka_commit_period_ms
    periods = {
        c.key: t.spout.kafka_commit_period_ms
        for _, t, report in parts
        for c in report.consumers
        if c.key.store == KAFKA and t.spout.kafka_commit_period_ms != period
    }
    return kafka, period, periods


def _findings_in_order(order: Sequence[ConsumerKey], found: dict[ConsumerKey, list], read: Report) -> tuple:
    """The findings consumer by consumer in `order`, then those of consumers not in it, then the read's."""
    found = dict(found)  # each consumer's taken once: popped, so what is left is the consumers not in `order`
    return (*(f for k in order for f in found.pop(k, ())), *(f for fs in found.values() for f in fs), *read.findings)


def assumptions(counts: Mapping[str | None, int], profiles: Profiles) -> str:
    """The settings the findings assume (Report.spout_settings), from the consumers each profile covered (`counts`,
    by profile name, None for the defaults): the one profile's SpoutProfile.describe, as a run without profiles says
    it; with several, how many consumers each covered and its settings (the expected topic when one is set), the
    profiles in their order, the defaults last."""
    thresholds = {p.name: p.thresholds for p in profiles.profiles}
    covered = [name for name in (*thresholds, None) if counts.get(name)]
    if len(covered) <= 1:
        return (thresholds.get(covered[0]) if covered and covered[0] else profiles.default).spout.describe()

    def said(t: Thresholds) -> str:
        return t.spout.describe() + (f", topic {t.expected_topic}" if t.expected_topic else "")

    return "profiles: " + "; ".join(
        f"{name or DEFAULTS} {counts[name]} consumer{'s' if counts[name] != 1 else ''} "
        f"({said(thresholds[name] if name else profiles.default)})"
        for name in covered
    )


def expected_topics(profiles: Profiles) -> tuple[str, ...]:
    """The topics the profiles say their spouts read (--topic, a profile's `topic`): a read that asks the broker about
    the topics it needs only (an audit task) asks about these too, as it does about the records' own."""
    return tuple(
        dict.fromkeys(
            t.expected_topic for t in (profiles.default, *(p.thresholds for p in profiles.profiles)) if t.expected_topic
        )
    )


def parts(report: Report, profiles: Profiles) -> list[tuple[str | None, Thresholds, Report]]:
    """The report cut by the profile of each consumer (ConsumerSummary.profile): (name, its Thresholds, the report
    with its rows and consumers only). Without profiles, or with one, the report itself, whole: no row is visited."""
    if not profiles.profiles:
        return [(None, profiles.default, report)]
    names = {c.key: c.profile for c in report.consumers}
    if len(set(names.values())) <= 1:
        name = next(iter(names.values()), None)
        return [(name, profiles.judging(next(iter(names)))[1] if names else profiles.default, report)]
    thresholds = {None: profiles.default, **{p.name: p.thresholds for p in profiles.profiles}}
    rows: dict[str | None, list] = {name: [] for name in dict.fromkeys(names.values())}
    for row in report.rows:
        rows.setdefault(names.get(row.record.key), []).append(row)
    return [
        (
            name,
            thresholds[name],
            replace(
                report, rows=tuple(rs), findings=(), consumers=tuple(c for c in report.consumers if c.profile == name)
            ),
        )
        for name, rs in rows.items()
    ]
