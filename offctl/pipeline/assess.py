"""The pipeline's assessment of what was read (`assess`): the analysis, then the reads that follow from it with the
stores still open (time lag, retention headroom, open transactions, commit expiry), within the time-lag budget."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from offctl.core.records.model import (
    KAFKA,
    ConsumerKey,
    Headroom,
    MessageRead,
    OffsetRecord,
    Position,
    Report,
    Snapshot,
    TopicRetention,
)
from offctl.core.rules import judge, served
from offctl.core.rules.analyze import with_findings
from offctl.core.rules.profiles import Profiles
from offctl.core.storm import kafka_releases
from offctl.core.storm.protocol import BROKERS, Brokers
from offctl.core.storm.releases import Isolation
from offctl.core.time import expiry, history, retention, timelag, transactions
from offctl.errors import OffctlError
from offctl.ports import LogStore
from offctl.settings.run import ExpiryOptions, Reading

NOT_READ = "not read (--time-lag-budget 0)"


def read_within(
    kafka: LogStore, wanted: list[Position], budget_s: float, read_committed: Collection[Position] = ()
) -> MessageRead:
    """The messages at `wanted`, read within `budget_s` seconds; none read (each `unread`, with why) when the
    budget is 0 or the broker refuses: the time lag and the estimates built on it never make a read partial.
    The positions also in `read_committed` are read as a read_committed consumer reads them (a spout that reads
    committed resumes there), in a read of their own after the others, within what is left of the budget."""
    if budget_s <= 0:
        return MessageRead(unread=dict.fromkeys(wanted, NOT_READ))
    started = time.monotonic()
    plain = [p for p in wanted if p not in read_committed] if read_committed else wanted
    committed = [p for p in wanted if p in read_committed] if read_committed else []
    reads = []
    for positions, level in ((plain, Isolation.READ_UNCOMMITTED), (committed, Isolation.READ_COMMITTED)):
        if positions:
            left = max(budget_s - (time.monotonic() - started), 0.001) if reads else budget_s
            reads.append(_read_messages(kafka, positions, left, level))
    return reads[0] if len(reads) == 1 else merged_reads(reads)


def _read_messages(kafka: LogStore, positions: list[Position], budget_s: float, level: Isolation) -> MessageRead:
    """The messages at `positions` within `budget_s` seconds, read at isolation level `level`; each `unread`, with
    why, when the broker refuses."""
    try:
        return kafka.read_messages(positions, budget_s=budget_s, isolation_level=level)
    except OffctlError as exc:
        return MessageRead(unread=dict.fromkeys(positions, f"messages not read: {exc}"))


def merged_reads(reads: Sequence[MessageRead]) -> MessageRead:
    """One read from reads of different positions."""
    return MessageRead(
        {k: v for r in reads for k, v in r.messages.items()},
        frozenset().union(*(r.at_end for r in reads)),
        {k: v for r in reads for k, v in r.unread.items()},
    )


def with_time_lags(
    report: Report,
    kafka: LogStore | None,
    budget_s: float,
    profiles: Profiles | None = None,
    behind: Mapping[tuple, float] | None = None,
) -> Report:
    """The report with the time lag of every lagging partition, from the message it resumes at
    (offctl.core.time.timelag), read within `budget_s` seconds (0: not read). Partitions with lag 0 cost nothing:
    nothing is read for them. What is not read is `unread` with a note, never a partial report: the offsets and lags are
    complete.

    With `profiles`, also the retention headroom of each (offctl.core.time.retention), from the same message and the
    topics' configs, and its findings, each consumer's by its own profile (`behind`: serve's and watch's pace per
    partition, for their default rule)."""
    wanted = timelag.positions(report.rows)
    if not wanted or kafka is None:
        return report
    read = read_within(kafka, wanted, budget_s, timelag.read_committed_positions(report.rows))
    if budget_s <= 0:
        report = replace(report, time_lags=timelag.unread(wanted, NOT_READ))
    else:
        lags = timelag.measure(report.rows, read, report.captured_ms)
        note = timelag.unread_note(lags)
        report = replace(report, time_lags=lags, notes=(*report.notes, note) if note else report.notes)
    return with_retention(report, kafka, read, profiles, behind) if profiles is not None else report


def with_retention(
    report: Report,
    kafka: LogStore,
    read: MessageRead,
    profiles: Profiles,
    behind: Mapping[tuple, float] | None = None,
) -> Report:
    """The report with each lagging partition's retention headroom and its RETENTION_* findings, each consumer's by
    its own profile's horizon and spout: the topics' configs in one request (a refusal reports nothing, never fails),
    the message's timestamp from `read`. The retention.ms stated per topic (--topic-retention) is the run's: a topic
    has one retention whoever reads it."""
    if not read.messages:  # no timestamp to start from (--time-lag-budget 0, refused): nothing to ask the broker
        why = "the message's timestamp is not known: the message was not read"
        return replace(
            report, headrooms={p: Headroom(None, retention.UNREAD, why) for p in timelag.positions(report.rows)}
        )
    topics = retention.topics(report.rows)
    try:
        configs = kafka.read_topic_configs(topics)
    except OffctlError as exc:
        configs = {t: TopicRetention(t, why=f"the broker's topic configs were not read ({exc})") for t in topics}
    stated = profiles.default.topic_retention_ms
    headrooms = retention.measure(report.rows, read, configs, stated, report.captured_ms)
    notes = retention.notes(configs, stated, topics)
    report = replace(report, headrooms=headrooms, notes=(*report.notes, *notes))
    return with_findings(
        report,
        [
            f
            for _, t, part in judge.parts(report, profiles)
            for f in retention.findings(part.rows, headrooms, t.spout, t.retention_horizon_ms, behind)
        ],
    )


def with_open_transactions(report: Report, kafka: LogStore | None, budget_s: float) -> Report:
    """The report with OPEN_TRANSACTION and HANGING_TRANSACTION (offctl.core.time.transactions) on the partitions where
    a spout that reads committed waits behind an open transaction: the first record of each read within `budget_s`
    seconds for its age, and the broker's transaction.max.timeout.ms asked only when one is a minute old. Nothing is
    read when no spout waits."""
    wanted = transactions.positions(report.rows)
    if not wanted or kafka is None:
        return report
    found = transactions.ages(report.rows, read_within(kafka, wanted, budget_s), report.captured_ms)
    limit = (
        transactions.max_timeout_ms(kafka.read_broker_config([transactions.MAX_TIMEOUT])[0])
        if transactions.old_enough(found)
        else (transactions.DEFAULT_MAX_TIMEOUT_MS, "")
    )
    new, notes = transactions.findings(report.rows, found, report.captured_ms, limit)
    report = with_findings(report, new)
    return replace(report, notes=(*report.notes, *notes)) if notes else report


def with_commit_expiry(
    report: Report, kafka: LogStore | None, profiles: Profiles, options: ExpiryOptions, budget_s: float
) -> Report:
    """The report with the estimated commit expiry of its storm-kafka-client groups' partitions and their
    COMMIT_EXPIRY_RISK findings (offctl.core.time.expiry), each group's by its own profile's spout. Reads the broker's
    offsets.retention.minutes and the message before each committed offset within `budget_s` seconds; what is not
    read leaves no figure and a note."""
    kafka_rows = [r for r in report.rows if r.record.key.store == KAFKA and r.lag is not None]
    if kafka is None or not kafka_rows:
        return report
    estimated, skipped = _expiry_parts(report, profiles, kafka_rows)
    if skipped:
        report = replace(report, checks_skipped=(*report.checks_skipped, *skipped))
    if not estimated:
        return report
    retention, read = _expiry_reads(report, kafka, estimated, options, budget_s)
    expiries, found = {}, []
    for spout, part, _ in estimated:
        e, f = expiry.assess(part, read, retention, spout, horizon_s=options.horizon_s, moved_after=options.moved_after)
        expiries.update(e)
        found += f
    notes = _expiry_notes(expiries, retention, options, found)
    report = with_findings(report, found)
    return replace(report, commit_expiry=expiries, offsets_retention=retention, notes=(*report.notes, *notes))


def _expiry_parts(report: Report, profiles: Profiles, kafka_rows: list) -> tuple[list[tuple], list[str]]:
    """Which profiles' groups get a commit-expiry estimate, as (spout, part of the report, its lagging Kafka rows):
    those whose spout stops refreshing its commits; and the check skipped, with why, for each of the others."""
    estimated, skipped = [], []
    parts = judge.parts(report, profiles)
    for name, t, part in parts:
        rows = (
            kafka_rows
            if len(parts) == 1
            else [r for r in part.rows if r.record.key.store == KAFKA and r.lag is not None]
        )
        if not rows:
            continue
        if expiry.not_refreshed(t.spout) is not None:
            estimated.append((t.spout, part, rows))
        else:
            whose = f" for profile {name or judge.DEFAULTS}'s groups" if len(parts) > 1 else ""
            skipped.append(f"COMMIT_EXPIRY_RISK ({expiry.skipped_because(t.spout)}){whose}")
    return estimated, skipped


def _expiry_reads(
    report: Report, kafka: LogStore, estimated: list[tuple], options: ExpiryOptions, budget_s: float
) -> tuple[expiry.Retention, MessageRead]:
    """What the estimate reads: the offsets retention (the broker's, else --offsets-retention-minutes, else Kafka's
    default) and the message before each committed offset, within `budget_s` seconds."""
    reported, why = kafka.read_broker_config([expiry.SETTING])
    retention = expiry.retention_of(reported, options.retention_minutes, why)
    members = {c.key: c.members for c in report.consumers}
    wanted = list(dict.fromkeys(p for _, _, rows in estimated for p in expiry.positions(rows, members)))
    read = read_within(kafka, wanted, budget_s) if wanted else MessageRead()
    return retention, read


def _expiry_notes(
    expiries: Mapping[tuple, expiry.Expiry], retention: expiry.Retention, options: ExpiryOptions, found: list
) -> list[str]:
    """What the estimate says of itself: the messages not read, the option given but not used, and the retention
    assumed when a finding rests on it."""
    notes = [n for n in (expiry.unread_note(expiries), expiry.option_note(retention, options.retention_minutes)) if n]
    if retention.source == expiry.ASSUMED and found:
        notes.append(
            f"commit expiry assumes {expiry.SETTING}={retention.minutes}, Kafka's default: {retention.why} "
            f"(give --offsets-retention-minutes)"
        )
    return notes


def assess(
    snapshot: Snapshot,
    kafka: LogStore | None,
    reading: Reading,
    records: Mapping[ConsumerKey, list[OffsetRecord]] | None = None,
) -> Report:
    """The pipeline every face runs on what it read (inspect, a watch refresh, a serve cycle, an audit task):
    analyze the snapshot, then the reads that follow from the analysis, with `kafka` still open: the time lag of
    the lagging partitions, their retention headroom, and the commit expiry of the storm-kafka-client groups'
    partitions, their messages read within the reading's time-lag budget in all (0: not read); and, from serve's and
    watch's earlier observations, when each lagging spout will have caught up. Each consumer is judged by the
    Thresholds of its own profile (offctl.core.rules.judge)."""
    profiles, estimates = reading.profiles, reading.estimates
    budget_s = estimates.time_lag_budget
    started = time.monotonic()
    report = with_time_lags(
        judge.analyze_each(snapshot, profiles, records), kafka, budget_s, profiles, estimates.behind
    )
    # The time lags come first; the open transactions, then the commit expiry, get what is left of the same budget.
    report = with_open_transactions(report, kafka, _left(budget_s, started))
    report = with_commit_expiry(report, kafka, profiles, estimates.expiry, _left(budget_s, started))
    report = with_catch_ups(report, estimates.earlier)
    return with_broker_support(report, snapshot, reading)


def with_catch_ups(report: Report, earlier: history.Earlier | None) -> Report:
    """The report with when each lagging partition's spout will have caught up (offctl.core.time.history.catch_ups),
    from `earlier`: serve's and watch's window of observations before this cycle (None: no history, as inspect's;
    every row then has catch_up_of's default). Nothing is read."""
    if earlier is None:
        return report
    return replace(report, catch_ups=history.catch_ups(report, earlier))


def with_broker_support(report: Report, snapshot: Snapshot, reading: Reading) -> Report:
    """The report with each consumer's verdict of whether the brokers serve its spout, and BROKER_INCOMPATIBLE where
    they do not (offctl.core.rules.served): judged against the Kafka release --kafka-release names (a what-if, from
    offctl's table: no broker needed), else against each broker's ApiVersions as the read found them (the snapshot's).
    Not judged, with a skipped check, when the brokers' versions were not read; nothing at all without consumers, or
    without Kafka and a what-if."""
    what_if = reading.estimates.kafka_release
    if not report.consumers:
        return report
    if what_if is not None:
        brokers = kafka_releases.what_if(what_if)
    elif snapshot.broker_apis is not None:
        brokers = Brokers(BROKERS, snapshot.broker_apis)
    elif snapshot.broker_apis_why:
        skipped = f"{served.CODE} (the brokers' API versions were not read: {snapshot.broker_apis_why})"
        return replace(report, checks_skipped=(*report.checks_skipped, skipped))
    else:
        return report
    supports, found, skipped = served.judged(report, reading.profiles, brokers)
    report = served.on_every_partition(with_findings(report, found), found)
    notes = (served.what_if_note(brokers, len(found)),) if brokers.what_if else ()
    return replace(
        report,
        broker_support=supports,
        checks_skipped=(*report.checks_skipped, *skipped),
        notes=(*report.notes, *notes),
    )


def _left(budget_s: float, started: float) -> float:
    """What is left of a budget of `budget_s` seconds started at `started` (monotonic): at least 1 ms, 0 when 0."""
    return max(budget_s - (time.monotonic() - started), 0.001) if budget_s > 0 else 0.0
