"""Detection rules: records + log offsets -> per-partition rows and findings.

`analyze_consumer` is the one implementation of every rule: it runs the table RULES in order, one function per
rule (or per pass of several); `analyze` applies it to a snapshot, and the
Spark audit applies it per consumer on the executors. What a spout does with a record follows Storm's
source release by release: offctl/core/storm/ answers it once (an Outcome: where the spout lands, the
sentence, the file and tag it cites), and the rules read that answer.
A Trident spout's state follows the storm-kafka or storm-kafka-client rules of the library that wrote it.
The rules, in the order they run for each consumer, are the table RULES at the end of this module: each one's
number, codes, what it finds and the function that runs it (rules_text() lists them; docs/findings.md shows that
list, generated).
"""

from __future__ import annotations

import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from offctl.core.records.findings import finding
from offctl.core.records.model import (
    CONSUMER,
    KAFKA,
    SHARE,
    TRIDENT,
    UNKNOWN_TYPE,
    Cluster,
    ConsumerKey,
    ConsumerSummary,
    Finding,
    GroupState,
    OffsetRecord,
    PartitionRow,
    Report,
    Severity,
    Snapshot,
    Thresholds,
)
from offctl.core.records.parse import parse_commit, parse_zk_node
from offctl.core.rules.consumer import _Consumer, _consumer_path, _plural, resolve_layouts
from offctl.core.rules.partitions import readable_records
from offctl.core.rules.stored import (
    ambiguous_spout_id,
    foreign_commit,
    id_collision,
    missing_partition,
    record_rules,
    stale_topology,
    stuck_state,
    topic_mismatch,
)
from offctl.core.storm.commits import commit_behaviour, subscribes
from offctl.core.storm.releases import LEGACY_RELEASES, SpoutProfile


def analyze_consumer(
    records: Sequence[OffsetRecord],
    cluster: Cluster | None,
    running: frozenset[str] | None,
    thresholds: Thresholds,
    now_ms: int | None = None,
) -> tuple[list[PartitionRow], list[Finding]]:
    """Apply every rule to the records of one consumer (one spout id under one root, or one group), in the order
    of RULES (those it does not run say where they run).
    `now_ms`: the capture time, against which a timestamp startOffsetTime is placed."""
    if not records:
        return [], []
    c = _Consumer(records, cluster, running, thresholds, now_ms)
    for rule in RULES:
        if rule.run is not None and rule.applies(c):
            rule.run(c)
    c.throws = c.throws or any(r.stuck and not c.unsure(r) for r in records)
    if c.key.store == TRIDENT and (c.unreadable or c.throws):
        stuck_state(c)  # rules 2 and 10, for the whole state
    return c.rows(), c.out.findings


# --- the rules, in the order they run -----------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One detection rule: its number (the order rules run in), the codes it finds, what it finds, and the function
    analyze_consumer runs for it with the consumer (None: it runs in another rule's pass, or outside
    analyze_consumer, as `runs` says); `needs`: what the rule needs to run at all."""

    number: int
    codes: tuple[str, ...]
    finds: str
    run: Callable[[_Consumer], None] | None = None
    runs: str = ""
    needs: str = ""  # "a Kafka group", "Kafka's log offsets" or "Storm's root"

    def applies(self, c: _Consumer) -> bool:
        """Whether the rule runs on this consumer: it is a group's rule and c is a group, or what it needs was read."""
        if self.needs == NEEDS_GROUP:
            return c.key.store == KAFKA
        if self.needs == NEEDS_LOG:
            return c.cluster is not None
        if self.needs == NEEDS_STORM:
            return c.running is not None
        return True


NEEDS_GROUP, NEEDS_LOG, NEEDS_STORM = "a Kafka group", "Kafka's log offsets", "Storm's root"


PER_RECORD = "in rule 2's pass, record by record (record_rules)"


PER_READABLE = "in rule 7's pass, per record the spout can read (partition_rules)"


RULES: tuple[Rule, ...] = (
    Rule(
        1,
        ("AMBIGUOUS_SPOUT_ID",),
        "<root>/a/b/partition_N is read by its path as id 'a' reading topic 'b', but no "
        "record names 'b', and spout id 'a/b' would write the same nodes (resolve_layouts)",
        ambiguous_spout_id,
    ),
    Rule(
        2,
        ("MALFORMED_RECORD", "TRIDENT_REPLAY"),
        "the spout cannot read topology.id and offset (JStorm's: offset): it starts as with "
        "no record; a Trident state's batch at or past the coordinator's currtx, which a transactional spout replays "
        "where an opaque one resumes elsewhere: offctl cannot tell which wrote it",
        record_rules,
    ),
    Rule(
        3,
        ("INCONSISTENT_RECORD",),
        "fields Storm does not read disagree with where the record sits, or are missing",
        runs=PER_RECORD,
    ),
    Rule(
        4,
        ("TOPIC_MISMATCH",),
        "the topic a record names is not the topic it is applied to (--topic, its <topic>/ "
        "folder, or the topic most records of the spout name); a tie is reported as a tie, and its records get no "
        "lag",
        topic_mismatch,
    ),
    Rule(5, ("ID_COLLISION",), "one spout id or group names more than one topology name", id_collision),
    Rule(
        6,
        ("FOREIGN_COMMIT", "CRASHING_COMMIT", "LEGACY_COMMIT_METADATA"),
        "a Kafka commit without Storm metadata "
        "or from another topology id than the rest; one whose metadata names no topology id (the spout throws in "
        "activate()); one in storm-kafka-client's pre-1.1.2 format",
        foreign_commit,
        needs=NEEDS_GROUP,
    ),
    Rule(
        7,
        ("UNREAD_PARTITION", "UNKNOWN_TOPIC", "UNKNOWN_PARTITION"),
        "a record of a partition the spout does not "
        "read (--static-partitions); the topic or partition the offset applies to does not exist (needs Kafka)",
        readable_records,
    ),
    Rule(
        8,
        ("IGNORED_TRIDENT_STATE", "IGNORED_ZERO_OFFSET"),
        "a storm-kafka-client Trident state EARLIEST/LATEST "
        "ignores, a ZooKeeper offset <= 0 replaced at start-up: the lag counts from where the spout starts instead",
        runs=PER_READABLE,
    ),
    Rule(
        9,
        ("LAG_BEYOND_MAX_OFFSET_BEHIND",),
        "the start-up offset is more than maxOffsetBehind ahead of the stored "
        "one (the lag still counts from the stored offset: a running spout moves on from it)",
        runs=PER_READABLE,
    ),
    Rule(
        10,
        ("OFFSET_BELOW_LOG_START", "OFFSET_ABOVE_LOG_END"),
        "where the spout resumes is outside the log (needs Kafka). The lag is the log end (the last stable offset, "
        "where the spout reads committed: releases.isolation_level) minus where the spout resumes, when that is "
        "inside the log: the stored offset, or where the start-up rule puts it when the spout does not use it (rules "
        "2, 6, 8, 14; none for a timestamp startOffsetTime at or before the capture time, which Kafka answers from "
        "its segment files' mtimes: start._time_answer)",
        runs=PER_READABLE,
    ),
    Rule(11, ("HIGH_LAG",), "the lag is above the threshold", runs=PER_READABLE),
    Rule(
        12,
        ("STALE_BROKER",),
        "a ZooKeeper record's broker is not the partition's leader (needs Kafka)",
        runs=PER_READABLE,
    ),
    Rule(13, ("MISSING_PARTITION",), "a partition the spout reads has no record", missing_partition, needs=NEEDS_LOG),
    Rule(
        14,
        ("STALE_TOPOLOGY",),
        "the topology id that wrote the records is not running",
        stale_topology,
        needs=NEEDS_STORM,
    ),
    Rule(
        15,
        ("CONSUMER_NOT_FOUND", "UNREAD_NODE"),
        "what the read found: a named spout or group absent, nodes no spout reads",
        runs="in the read (offctl.pipeline), carried as the snapshot's read findings",
    ),
    Rule(
        16,
        ("GROUP_TYPE_CONFLICT",),
        "the group id is a share group, or a group with members joined: the broker refuses the spout's commits",
        runs="in analyze, from the group's state (group_type_conflict)",
        needs=NEEDS_GROUP,
    ),
    Rule(
        17,
        ("COMMIT_EXPIRY_RISK",),
        "a storm-kafka-client group under AT_LEAST_ONCE whose commit may expire within --commit-expiry-horizon: the "
        "last commit is no earlier than the timestamp of the message before the committed offset; Kafka expires it "
        "offsets.retention.minutes later (GroupMetadata.removeExpiredOffsets, Kafka 2.1.0-3.x; "
        "OffsetExpirationConditionImpl, 4.x), and the spout commits only partitions with newly acked offsets "
        "(KafkaSpout.commitOffsetsForAckedTuples, Storm v1.2.4, v2.8.8); once gone, KafkaSpout.doSeek seeks by the "
        "first-poll strategy",
        runs="after the analysis, from the messages before the commits (offctl.core.time.expiry)",
        needs=NEEDS_GROUP,
    ),
    Rule(
        18,
        ("RETENTION_RISK", "RETENTION_EXCEEDED"),
        "the message a lagging spout resumes at may be deleted soon, or is past retention.ms",
        runs="after the analysis, from the time lag's read and the topics' configs (offctl.core.time.retention)",
        needs=NEEDS_LOG,
    ),
    Rule(
        19,
        ("OPEN_TRANSACTION", "HANGING_TRANSACTION"),
        "a spout that reads committed waits behind a transaction "
        "open a minute or more, or longer than transaction.max.timeout.ms",
        runs="after the analysis, from the first record of the transaction (offctl.core.time.transactions)",
        needs=NEEDS_LOG,
    ),
    Rule(
        20,
        ("BROKER_INCOMPATIBLE",),
        "the brokers, or the Kafka release --kafka-release names, accept no version the spout's Kafka client can "
        "send of a request it sends (KIP-896, KIP-97)",
        runs="after the analysis, from the brokers' ApiVersions or the what-if's table (offctl.core.storm.protocol)",
    ),
)


def rules_text() -> str:
    """The rules in the order they run, one paragraph each: docs/findings.md's list."""
    out = []
    for rule in RULES:
        head = f"{rule.number:>2}. {' / '.join(rule.codes)}"
        where = f" [{rule.runs}]" if rule.runs else ""
        needs = f" (needs {rule.needs})" if rule.needs else ""
        out.append(
            textwrap.fill(f"{head}: {rule.finds}{needs}{where}", 116, subsequent_indent="    ", break_on_hyphens=False)
        )
    return "\n".join(out)


def parse_snapshot(snapshot: Snapshot) -> dict[ConsumerKey, list[OffsetRecord]]:
    """Parse a snapshot's raw reads, grouped per consumer."""
    grouped: dict[ConsumerKey, list[OffsetRecord]] = {}
    for record in map(parse_zk_node, snapshot.zk_nodes):
        grouped.setdefault(record.key, []).append(record)
    for record in map(parse_commit, snapshot.commits):
        grouped.setdefault(record.key, []).append(record)
    return grouped


# What the broker does with the spout's commits. KafkaSpout never joins the group: 2.x assigns its partitions
# (TopicAssigner.assignPartitions calls consumer.assign, external/storm-kafka-client/.../subscription/
# TopicAssigner.java, v2.0.0 to v2.8.8), as does 1.0.6+/1.1.2+'s default ManualPartitionSubscription
# (KafkaSpoutConfig.Builder, v1.0.6, v1.1.2, v1.2.4). Its KafkaConsumer then commits with generation -1 and no
# member id (ConsumerCoordinator.sendOffsetCommitRequest, Generation.NO_GENERATION, apache/kafka 3.8.0).
# 1.0.0-1.0.5 call kafkaConsumer.subscribe() (KafkaSpout.subscribeKafkaConsumer) and 1.1.0-1.1.1 default to
# NamedSubscription/PatternSubscription, which subscribe: there the members are the spout's own executors.
_SIMPLE_COMMIT = (
    "the spout never joins the group and commits with no generation and no member id, which Kafka "
    "accepts only while the group is empty"
)


_REFUSED = (
    "KafkaSpout's commitSync throws CommitFailedException (AT_LEAST_ONCE, AT_MOST_ONCE: the executor "
    "dies and restarts from the last commit), NO_GUARANTEE's commitAsync loses the commits unseen"
)


def group_type_conflict(state: GroupState, profile: SpoutProfile) -> str | None:
    """Why the broker refuses or races the spout's commits to this group, or None when it takes them."""
    name = f"group '{state.group}'"
    protocol = f", protocol {state.protocol}" if state.protocol else ""
    joined = (
        f"{_plural(state.members, 'member')} joined" if state.members else "members joined"
    ) + f" (state {state.state}{protocol})"
    if state.type == SHARE:
        # ShareGroup.validateOffsetCommit: UnsupportedOperationException in apache/kafka 3.9.0-rc3, GROUP_ID_NOT_FOUND
        # "is not a consumer group" on trunk (4.x); validateOffsetFetch likewise
        return (
            f"{name} is a share group (KIP-932, state {state.state}, {_plural(state.members, 'member')}): the "
            f"broker refuses every consumer offset commit and fetch for it (ShareGroup.validateOffsetCommit, "
            f"apache/kafka group-coordinator), so the spout can neither resume nor commit: {_REFUSED}"
        )
    if not state.active:
        return None
    joins = subscribes(profile)  # 1.0.0-1.0.5 / 1.1.0-1.1.1: the spout's executors are classic members
    if state.type == CONSUMER:
        if joins:
            return (
                f"{name} is a KIP-848 consumer group with {joined}: they speak a protocol the Kafka clients of "
                f"storm-kafka-client {LEGACY_RELEASES} never use, so another application shares this group.id "
                f"and the spout's partitions"
            )
        # ConsumerGroup.validateOffsetCommit (apache/kafka 3.9.0-rc3): epoch -1 passes only with no members,
        # else getOrMaybeCreateMember("", false) throws UnknownMemberIdException
        return (
            f"{name} is a KIP-848 consumer group with {joined}: {_SIMPLE_COMMIT}; the broker answers "
            f"UNKNOWN_MEMBER_ID (ConsumerGroup.validateOffsetCommit, apache/kafka 3.9) and the members' own "
            f"commits overwrite the spout's: {_REFUSED}"
        )
    if joins:
        return None  # the members are the spout's own executors
    kind = "a classic group" if state.type != UNKNOWN_TYPE else "a group of unknown type (read as classic)"
    # GroupCoordinator.validateOffsetCommit (core, apache/kafka 3.8.0) and ClassicGroup.validateOffsetCommit
    # (group-coordinator, 3.9.0-rc3): generation -1 and no member id on a non-Empty group is UNKNOWN_MEMBER_ID
    return (
        f"{name} is {kind} with {joined}: another consumer subscribed with this group.id; "
        f"{_SIMPLE_COMMIT} (storm-kafka-client 1.0.6+/1.1.2+ unless configured with the deprecated "
        f"NamedSubscription or PatternSubscription); the broker answers UNKNOWN_MEMBER_ID "
        f"(GroupCoordinator.validateOffsetCommit, apache/kafka 3.8.0) and the members' own commits overwrite "
        f"the spout's: {_REFUSED}"
    )


def summarize(
    key: ConsumerKey, rows: Sequence[PartitionRow], findings: Sequence[Finding], state: GroupState | None = None
) -> ConsumerSummary:
    lags = [row.lag for row in rows if row.lag is not None]
    severities = Counter([f.severity for f in findings])  # one pass: a broken fleet has two findings a partition
    return ConsumerSummary(
        key=key,
        topics=tuple(sorted({row.topic for row in rows if row.topic})),
        partitions=len(rows),
        total_lag=sum(lags),
        max_lag=max(lags, default=None),
        worst=max(severities, default=None),
        finding_codes=tuple(sorted({f.code for f in findings})),
        group_state=state.state if state else None,
        members=state.members if state else None,
        group_type=state.type if state else None,
        group_protocol=state.protocol if state else None,
        by_severity=(severities[Severity.ERROR], severities[Severity.WARNING], severities[Severity.INFO]),
    )


def analyze(
    snapshot: Snapshot,
    thresholds: Thresholds = Thresholds(),
    records: dict[ConsumerKey, list[OffsetRecord]] | None = None,
) -> Report:
    """Turn one snapshot into the report every output format renders.

    `records` is parse_snapshot(snapshot), for a caller that parsed while it was reading."""
    rows: list[PartitionRow] = []
    findings: list[Finding] = []
    consumers: list[ConsumerSummary] = []
    states = {g.group: g for g in snapshot.groups}
    grouped = resolve_layouts(records if records is not None else parse_snapshot(snapshot), snapshot.cluster)
    now_ms = snapshot.captured_ms if snapshot.captured_ms > 0 else None  # 0: a snapshot made without a clock
    for key, consumer_records in grouped.items():
        r, f = analyze_consumer(consumer_records, snapshot.cluster, snapshot.running, thresholds, now_ms)
        state = states.get(key.consumer) if key.store == KAFKA else None
        conflict = group_type_conflict(state, thresholds.spout) if state else None
        if conflict:
            f.append(finding("GROUP_TYPE_CONFLICT", key, conflict))
        rows.extend(r)
        findings.extend(f)
        consumers.append(summarize(key, r, f, state))
    for noted in snapshot.read_findings:
        findings.append(finding(noted.code, noted.key, noted.message, path=noted.path or _consumer_path(noted.key)))
    skipped = []
    if snapshot.cluster is None:
        skipped.append("log offsets, lag and range checks (no --bootstrap-servers)")
    if snapshot.running is None:
        skipped.append("STALE_TOPOLOGY (Storm's root was not readable)")
    return Report(
        captured_ms=snapshot.captured_ms,
        rows=tuple(rows),
        findings=tuple(findings),
        consumers=tuple(consumers),
        notes=snapshot.notes,
        incomplete=snapshot.incomplete,
        checks_skipped=tuple(skipped),
        spout_settings=thresholds.spout.describe(),
        running=snapshot.running,
        commits=commit_behaviour(thresholds.spout) if any(c.key.store == KAFKA for c in consumers) else None,
        kafka_commit_period_ms=thresholds.spout.kafka_commit_period_ms,
    )


def with_findings(report: Report, found: Sequence[Finding]) -> Report:
    """The report with findings made after the analysis (from messages read for it: offctl.core.time.retention,
    offctl.core.time.expiry), each on its partition's row (status, codes) and counted in its consumer's summary, as
    analyze_consumer would have put them."""
    if not found:
        return report
    by_row: dict[tuple, list[Finding]] = defaultdict(list)
    by_key: dict[ConsumerKey, list[Finding]] = defaultdict(list)
    for f in found:
        by_row[(f.key, f.topic, f.partition)].append(f)
        by_key[f.key].append(f)
    rows = []
    for row in report.rows:
        new = by_row.get((row.record.key, row.topic, row.record.partition))
        if new:
            worst = max(f.severity for f in new)
            row = replace(
                row,
                codes=(*row.codes, *(f.code for f in new)),
                status=worst if row.status is None else max(row.status, worst),
            )
        rows.append(row)
    consumers = [_summary_with(c, by_key.get(c.key)) for c in report.consumers]
    return replace(report, rows=tuple(rows), findings=(*report.findings, *found), consumers=tuple(consumers))


def _summary_with(c: ConsumerSummary, new: list[Finding] | None) -> ConsumerSummary:
    """A consumer's summary with the findings made after the analysis (`new`) counted in: its worst, its codes and
    its counts by severity."""
    if new:
        worst = max(f.severity for f in new)
        c = replace(
            c,
            worst=worst if c.worst is None else max(c.worst, worst),
            finding_codes=tuple(sorted({*c.finding_codes, *(f.code for f in new)})),
            by_severity=tuple(
                n + sum(1 for f in new if f.severity == s)
                for n, s in zip(c.by_severity, (Severity.ERROR, Severity.WARNING, Severity.INFO))
            ),
        )
    return c
