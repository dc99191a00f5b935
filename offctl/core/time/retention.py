"""Retention risk: how long until the broker may delete the message a lagging spout resumes at. Pure.

Kafka deletes by time whole log segments, oldest first: a segment goes once its largest timestamp is more than
retention.ms older than the broker's clock (UnifiedLog.deleteRetentionMsBreachedSegments, `startMs -
segment.largestTimestamp > retentionMs`, core/src/main/scala/kafka/log/UnifiedLog.scala, apache/kafka 3.8.0), and
only where cleanup.policy includes `delete` (UnifiedLog.deleteOldSegments: `if (config.delete)`; LogConfig.delete,
storage/.../log/LogConfig.java, 3.8.0). retention.ms -1 sets no time limit (`if (retentionMs < 0) return 0`).

So the message at the resume offset, with timestamp T, can be deleted at T + retention.ms at the earliest: its
segment's largest timestamp is T or later. That is the estimate, and it is early on purpose: a segment holding
newer messages lives on until the newest is that old, the broker looks only every log.retention.check.interval.ms
(5 minutes by default: LogManager's cleanup task), and a producer's CreateTime may be off. It assumes retention.ms
does not change. retention.bytes deletes by size, which needs the partition's size (DescribeLogDirs), which
confluent-kafka does not offer: it is not estimated, and a note says so.

The timestamp is the one the time lag read (offctl.core.time.timelag): the first message at or after the resume offset,
read once for both. Each headroom says where its retention.ms comes from (`retention_source`):

1. broker       retention.ms as the broker reported it (DescribeConfigs): set on the topic, or else the broker's
                log.retention.* or Kafka's 7 days, which Apache Kafka reports as the topic's too, being what it
                applies. It wins over --topic-retention.
2. option       --topic-retention TOPIC=DURATION, for a topic whose retention.ms the broker did not report (a
                broker that denies DescribeConfigs to this principal, or has no such answer).
3. no-deletion  cleanup.policy without `delete` (the broker's), or retention.ms -1: nothing is deleted by time. No
                figure, no risk.
4. unknown      neither the broker nor --topic-retention says. No figure.
5. unread       the message's timestamp is not known (not read, or none: offctl.core.time.timelag). No figure.
None: the partition has no lag, or nothing waits: no message can be lost to retention.

When the headroom is a risk (`at_risk`), in order; the first that matches decides:

 1. RETENTION_EXCEEDED  the headroom is below 0: the message is older than retention.ms.
 2. --retention-horizon given: RETENTION_RISK when the headroom is at most that, whatever the topic.
 3. (the default) RETENTION_RISK when the headroom is at most a quarter of the topic's retention.ms, and at most
    6 h: the spout is three quarters of the retention or more behind. Fixed at 6 h, as before issue 28, every
    lagging partition of a topic kept 6 h or less warned, a spout a minute behind included ("may be deleted in
    5h58m"). A quarter leaves time to act on a short retention (1h30m at 6 h, 15 min at 1 h), and the cap keeps
    6 h for topics kept a day or more.
 4. (the default, serve and watch) RETENTION_RISK when the window shows the spout falling behind
    (offctl.core.time.history.falling_behind: the message it resumes at ages g seconds a second, 0 < g <= 1) and
    headroom / g, when the message is deleted at that pace, is at most 6 h. A spout that stands still (g = 1)
    warns 6 h before; one that keeps pace a minute behind has g about 0 and does not. Its time to catch up
    (lag / net consumption) is not the test: a spout that keeps pace never catches up and never loses a message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

from offctl.core.records.findings import finding
from offctl.core.records.messages import GAP, MESSAGE, at_offset
from offctl.core.records.model import (
    ConsumerKey,
    Finding,
    Headroom,
    MessageRead,
    PartitionLog,
    PartitionRow,
    Position,
    TopicRetention,
    duration,
    is_topic_name,
    iso_ms,
)
from offctl.core.rules.consumer import library_of
from offctl.core.storm.outcomes import Lands, Outcome, out_of_range_outcome
from offctl.core.storm.releases import SpoutProfile
from offctl.core.time.timelag import resume_position
from offctl.errors import UsageError

BROKER, OPTION, NO_DELETION, UNKNOWN, UNREAD = "broker", "option", "no-deletion", "unknown", "unread"
SOURCES = (BROKER, OPTION, NO_DELETION, UNKNOWN, UNREAD)
HORIZON_CAP_MS = 6 * 3_600_000  # the default horizon at most (rules 3 and 4 above)
HORIZON_SHARE = 0.25  # of the topic's retention.ms (rule 3)
LONG_MAX = 2**63 - 1  # retention.ms is a Java long

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_PART = re.compile(r"(\d{1,19})(ms|[smhd])")


def parse_span(text: str, option: str, *, unlimited: bool = False) -> int:
    """A duration as operators write retention: 7d, 6h, 90m, 30s, 1d12h, or milliseconds as Kafka's retention.ms
    (604800000) -> milliseconds. `unlimited`: also -1, Kafka's no time limit."""
    cleaned = text.strip().lower()
    if unlimited and cleaned == "-1":
        return -1
    if re.fullmatch(r"\d{1,19}", cleaned):
        ms = int(cleaned)
    elif len(cleaned) <= 40 and cleaned and re.fullmatch(f"(?:{_PART.pattern})+", cleaned):
        ms = sum(int(n) * _UNITS[unit] for n, unit in _PART.findall(cleaned))
    else:
        raise UsageError(
            f"{option} {text[:40]!r}: expected a duration like 7d, 6h, 90m, 1d12h or milliseconds"
            + (" (-1: no time limit)" if unlimited else "")
        )
    if ms > LONG_MAX:
        raise UsageError(f"{option} {text[:40]!r}: longer than Kafka's retention.ms can be (a Java long)")
    return ms


def parse_topic_retention(values: Iterable[str] | None) -> dict[str, int]:
    """--topic-retention TOPIC=DURATION, repeatable -> topic -> retention.ms (-1: no time limit)."""
    stated: dict[str, int] = {}
    for value in values or ():
        topic, sep, span = value.partition("=")
        topic = topic.strip()
        if not sep or not is_topic_name(topic):
            raise UsageError(
                f"--topic-retention {value[:60]!r}: expected TOPIC=DURATION, e.g. orders=7d, with a "
                f"topic name Kafka can have"
            )
        if topic in stated:
            raise UsageError(f"--topic-retention: topic {topic!r} is given twice")
        stated[topic] = parse_span(span, f"--topic-retention {topic}=", unlimited=True)
    return stated


def deletes(policy: str | None) -> bool:
    """Whether cleanup.policy deletes old segments (LogConfig.delete: the list holds `delete`); not reported:
    Kafka's default, delete."""
    return policy is None or "delete" in (p.strip().lower() for p in policy.split(","))


def retention_of(topic: str, reported: TopicRetention | None, stated: Mapping[str, int]) -> tuple[int | None, str, str]:
    """The retention.ms that deletes `topic`'s messages by time, where it comes from (a source above), and in words."""
    if reported is not None and not deletes(reported.cleanup_policy):
        return None, NO_DELETION, f"cleanup.policy {reported.cleanup_policy} (the broker): nothing is deleted by time"
    if reported is not None and reported.retention_ms is not None:
        ms, source, said = reported.retention_ms, BROKER, "the broker's"
    elif topic in stated:
        ms, source, said = stated[topic], OPTION, "--topic-retention"
    else:
        why = reported.why if reported is not None and reported.why else "the broker did not report retention.ms"
        return None, UNKNOWN, f"{why}; state it with --topic-retention {topic}=DURATION"
    if ms < 0:
        return None, NO_DELETION, f"retention.ms -1 ({said}): no time limit"
    return ms, source, f"retention.ms {ms} = {duration(ms / 1000)} ({said})"


def topics(rows: Iterable[PartitionRow]) -> list[str]:
    """The topics of the lagging partitions: only theirs need a retention."""
    return sorted({r.topic for r in rows if r.lag and r.topic is not None})


def measure(
    rows: Iterable[PartitionRow],
    read: MessageRead,
    configs: Mapping[str, TopicRetention],
    stated: Mapping[str, int],
    now_ms: int,
) -> dict[Position, Headroom]:
    """The headroom at each lagging partition's resume position, from the message the time lag read there."""
    out: dict[Position, Headroom] = {}
    for row in rows:
        position = resume_position(row)
        if position is None or position in out:
            continue
        ms, source, said = retention_of(row.topic, configs.get(row.topic), stated)
        if ms is None:
            out[position] = Headroom(None, source, said)
            continue
        at = at_offset(*position, PartitionLog(row.log_start, row.lag_end), read)
        if at.kind not in (MESSAGE, GAP):
            out[position] = Headroom(None, UNREAD, f"the message's timestamp is not known: {at.why}")
        elif at.first is None:
            out[position] = Headroom(None, None, "no message waits")  # a gap up to the log end
        elif at.first.timestamp_ms is None:
            out[position] = Headroom(None, UNREAD, f"the message at offset {at.first.offset} carries no timestamp")
        else:
            out[position] = Headroom(
                round((at.first.timestamp_ms + ms - now_ms) / 1000, 3),
                source,
                f"message {at.first.offset} of {iso_ms(at.first.timestamp_ms)}, {said}",
                at.first.offset,
                ms,
            )
    return out


def headroom(row: PartitionRow, headrooms: Mapping[Position, Headroom]) -> Headroom | None:
    """A partition's headroom; None without a lag (nothing waits, nothing to lose)."""
    position = resume_position(row)
    return headrooms.get(position) if position is not None else None


def consumer_minima(rows: Sequence[PartitionRow], headrooms: Mapping[Position, Headroom]) -> dict:
    """Each consumer's smallest headroom among its partitions that have one."""
    out: dict = {}
    for row in rows:
        h = headroom(row, headrooms)
        if h is not None and h.seconds is not None:
            key = row.record.key
            if key not in out or h.seconds < out[key]:
                out[key] = h.seconds
    return out


def _lost_totals(rows: Iterable[PartitionRow], by: Callable[[PartitionRow], Hashable]) -> dict:
    """What retention already took (each row's `lost_to_retention`), summed by `by` over the rows that have a count; a
    group none of whose rows has one is absent."""
    out: dict = {}
    for row in rows:
        n = row.lost_to_retention
        if n is not None:
            k = by(row)
            out[k] = out.get(k, 0) + n
    return out


def lost_by_consumer(rows: Iterable[PartitionRow]) -> dict[ConsumerKey, int]:
    """Each consumer's `lost_to_retention`, over its partitions that have a count (none: absent)."""
    return _lost_totals(rows, lambda row: row.record.key)


def lost_by_topic(rows: Iterable[PartitionRow]) -> dict[str, int]:
    """What retention already took, per topic, over every consumer reading it: the topics where it took something,
    sorted by name (the summaries' `lost_to_retention`)."""
    totals = _lost_totals(rows, lambda row: row.topic)
    return {topic: totals[topic] for topic in sorted(t for t, n in totals.items() if n and t is not None)}


# Where a spout goes once its resume offset is deleted (below the new log start), by outcomes.out_of_range_outcome:
# the log start (it loses what was deleted), the log end (it skips all it had to do), the offset at a
# startOffsetTime, or nowhere (every fetch fails).
START, END, TIME, FAILS = "start", "end", "time", "fails"
_LANDS = {Lands.LOG_START: START, Lands.LOG_END: END, Lands.TIME: TIME}  # any other: FAILS


def _deleted(profile: SpoutProfile, row: PartitionRow) -> Outcome:
    """What the spout of `row` does once its resume offset falls below the log start."""
    return out_of_range_outcome(profile, library_of(row.record), "below", row.record.trident is not None)


def lands(profile: SpoutProfile, row: PartitionRow) -> str:
    """Where the spout of `row` lands when its offset falls below the log start (outcomes.out_of_range_outcome,
    which cites Storm): START, END, TIME or FAILS."""
    return _LANDS.get(_deleted(profile, row).lands, FAILS)


def _loss(where: str, row: PartitionRow, resume: int, at_risk: int) -> str:
    n = at_risk - resume + 1
    if where == START:
        return (
            f"losing at least {n:,} message{'s' if n != 1 else ''} (offset{'s' if n != 1 else ''} "
            f"{resume}{f'-{at_risk}' if n != 1 else ''}, and the rest of its log segment) before processing "
            f"{'them' if n != 1 else 'it'}"
        )
    if where == END:
        return f"skipping at least the {row.lag:,} messages now between offset {resume} and the log end {row.log_end}"
    if where == TIME:
        return "skipping the messages before the offset at startOffsetTime"
    return f"and the {row.lag:,} messages waiting there are never emitted"


def default_horizon_ms(retention_ms: int | None) -> int:
    """Rule 3's horizon: a quarter of the topic's retention.ms, at most 6 h (6 h where it is not known)."""
    return HORIZON_CAP_MS if retention_ms is None else min(int(retention_ms * HORIZON_SHARE), HORIZON_CAP_MS)


def at_risk(seconds: float, retention_ms: int | None, horizon_ms: int | None, behind: float | None = None) -> str:
    """Which rule of the module docstring makes a headroom of `seconds` a risk: "exceeded", "horizon", "share",
    "pace", or "" (none). `horizon_ms`: --retention-horizon (None: the default rules); `behind`: how fast the
    message ages, from serve's or watch's window (offctl.core.time.history.falling_behind; None: not known)."""
    if seconds < 0:
        return "exceeded"
    if horizon_ms is not None:
        return "horizon" if seconds * 1000 <= horizon_ms else ""
    if seconds * 1000 <= default_horizon_ms(retention_ms):
        return "share"
    if behind is not None and behind > 0 and seconds / behind * 1000 <= HORIZON_CAP_MS:
        return "pace"
    return ""


def findings(
    rows: Iterable[PartitionRow],
    headrooms: Mapping[Position, Headroom],
    profile: SpoutProfile,
    horizon_ms: int | None = None,
    behind: Mapping[tuple, float] | None = None,
) -> list[Finding]:
    """RETENTION_RISK for a lagging partition whose resume message may be deleted soon (`at_risk`: within
    `horizon_ms` when given, else by the default rules, with `behind` per partition key from serve's or watch's
    window), RETENTION_EXCEEDED once it is older than retention.ms: what the spout then does, and what it loses."""
    out: list[Finding] = []
    behind = {} if behind is None else behind  # not `or`: a PerWindow's truth would work out every partition
    for row in rows:
        h = headroom(row, headrooms)
        if h is None or h.seconds is None:
            continue
        pace = behind.get(row.partition_key)
        rule = at_risk(h.seconds, h.retention_ms, horizon_ms, pace)
        if not rule:
            continue
        resume = row.lag_end - row.lag
        where = f"{row.topic}/{row.record.partition}"
        deleted = _deleted(profile, row)
        loss = _loss(_LANDS.get(deleted.lands, FAILS), row, resume, h.offset)
        then = f"{deleted.sentence(resume, None, None)}, {loss}"
        if h.seconds < 0:
            message = (
                f"{where} resumes at {resume} (lag {row.lag:,}), and its message ({h.why}) is "
                f"{duration(-h.seconds)} past retention: the broker may delete it at its next retention "
                f"check; once it does, {then}"
            )
            code = "RETENTION_EXCEEDED"
        else:
            why = {
                "horizon": "within --retention-horizon",
                "share": "a quarter of the retention or less left"
                if h.retention_ms is not None and default_horizon_ms(h.retention_ms) < HORIZON_CAP_MS
                else "within 6h",
                "pace": f"falling behind: at the pace seen, deleted in {duration(h.seconds / pace)}" if pace else "",
            }[rule]
            message = (
                f"{where} resumes at {resume} (lag {row.lag:,}), and the broker may delete its message in "
                f"{duration(h.seconds)} ({h.why}; {why}); once it does, {then}"
            )
            code = "RETENTION_RISK"
        out.append(
            finding(
                code, row.record.key, message, topic=row.topic, partition=row.record.partition, path=row.record.path
            )
        )
    return out


def notes(configs: Mapping[str, TopicRetention], stated: Mapping[str, int], lagging: Iterable[str]) -> list[str]:
    """What the estimate leaves out: retention.bytes (no partition sizes), --topic-retention the broker
    overrides, and why the broker reported nothing when it refused."""
    lagging = set(lagging)
    out = []
    for topic in sorted(lagging):
        c = configs.get(topic)
        if c is None:
            continue
        if c.retention_bytes is not None and c.retention_bytes >= 0 and deletes(c.cleanup_policy):
            out.append(
                f"{topic}: retention.bytes {c.retention_bytes} may delete messages sooner than retention.ms; "
                f"not estimated: the partitions' sizes are not known (DescribeLogDirs, which "
                f"confluent-kafka does not offer)"
            )
        if c.retention_ms is not None and topic in stated:
            out.append(f"--topic-retention {topic}: the broker reports retention.ms {c.retention_ms}, which is used")
    refused = sorted({c.why for t, c in configs.items() if c.why and t in lagging and t not in stated})
    if refused:
        out.append(f"retention risk not estimated for some topics: {refused[0]} (state it with --topic-retention)")
    return out
