"""Commit-expiry risk of storm-kafka-client groups: when the broker may delete a group's committed offset, and
what the spout does then. Pure: the clock, the broker's setting and the messages read are passed in.

What Kafka does (apache/kafka). A storm-kafka-client spout assigns its partitions (consumer.assign) and commits
with no generation, so its group has no members and no protocol type: a "simple" group. The broker expires each
of its offsets `offsets.retention.minutes` after that offset's own last commit:
  - 2.1 to 3.x: GroupMetadata.removeExpiredOffsets, `case None` (protocolType None, a standalone consumer):
    getExpiredOffsets(_.offsetAndMetadata.commitTimestamp), expired when
    `currentTimestamp - commitTimestamp >= offsetRetentionMs` (core/src/main/scala/kafka/coordinator/group/
    GroupMetadata.scala, 2.1.0 and 3.6.0; KIP-211).
  - 4.x, the new group coordinator: OffsetMetadataManager.validateOffsetCommit creates a classic group with no
    protocol type for a commit with generation -1, ClassicGroup.offsetExpirationCondition gives the commit
    timestamp as the base for it, and OffsetExpirationConditionImpl.isOffsetExpired applies the same test
    (group-coordinator/src/main/java/org/apache/kafka/coordinator/group/, trunk 1eb76443, 4.0.0-SNAPSHOT).
  - before 2.1 each commit carried expireTimestamp = commit time + retention, the same instant.
  The default offsets.retention.minutes is 10080 (7 days) since 2.0 (KIP-186; KafkaConfig.scala, 2.0.0), 1440
  before (1.1.1). The broker deletes expired offsets at its next check, every offsets.retention.check.interval.ms
  (600000 by default): the deletion comes at the expiry or up to that much later.

What the spout does (apache/storm, external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/
KafkaSpout.java, v1.2.4 and v2.8.8; 3.x: unchanged at master 73da988d9, the 3.0.0 and 3.1.0 tags not stored):
  1. AT_LEAST_ONCE: commitOffsetsForAckedTuples, on the commit timer, commits only the partitions whose
     OffsetManager.findNextCommitOffset finds a newly acked offset: an idle partition's commit is never
     rewritten, so its commit timestamp ages while the topology runs. This is the case reported.
  2. AT_MOST_ONCE: commitSync of every assigned partition's position after each poll, and the spout polls while
     it runs: the commit is refreshed. Not reported.
  3. NO_GUARANTEE: commitAsync of every assigned partition's position on the commit timer: refreshed. Not
     reported.
  4. storm-kafka-client 1.0.0-1.0.5 and 1.1.0-1.1.1 subscribe (KafkaSpout.subscribeKafkaConsumer, v1.0.5;
     NamedSubscription, v1.1.1): their group has members while the topology runs, and Kafka expires its
     offsets only after the group has been empty for the retention. Not reported (the time it went empty is
     not known here).
  When the commit is gone the running spout carries on from its position; its next start, or a reassignment,
  reads no commit and KafkaSpout.doSeek seeks by the first-poll strategy: EARLIEST and UNCOMMITTED_EARLIEST to
  the log start (replaying what was processed), LATEST and UNCOMMITTED_LATEST to the log end (skipping what was
  not).

When was the last commit? Kafka does not tell (OffsetFetch returns no commit time). Under AT_LEAST_ONCE the
committed offset C means the spout acked message C - 1; it polled that message after the broker appended it,
and committed after acking it. So the timestamp of message C - 1 is a lower bound of the last commit time
(exact for LogAppendTime up to the processing delay; for CreateTime, up to the producer's clock). A lower
bound of the commit gives a lower bound of the expiry: offctl may warn early, never late. `offctl serve` also
knows a later bound where it saw the committed offset move: the commit that moved it came after the cycle
before that one; the later of the two bounds is used.

Sources of the estimate (`commit_expiry_source`): message (the timestamp of message C - 1), moved (the cycle
before serve saw the offset move), or no figure: unread (not read: budget, refusal), no-timestamp (message
format v0), no-message (no message at C - 1: compacted away, a transaction marker, or below the log start).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from offctl.core.records.findings import finding
from offctl.core.records.messages import GAP, at_offset
from offctl.core.records.messages import MESSAGE as AT_MESSAGE
from offctl.core.records.model import (
    KAFKA,
    Finding,
    MessageRead,
    PartitionLog,
    PartitionRow,
    Position,
    Report,
    duration,
    iso_ms,
)
from offctl.core.storm.citations import COMMIT_ACKED, DO_SEEK_BOTH_LINES
from offctl.core.storm.commits import IdleCommit, idle_commit
from offctl.core.storm.releases import LEGACY_RELEASES, SpoutProfile
from offctl.core.time.history import Observation

SETTING = "offsets.retention.minutes"
KAFKA_DEFAULT_MINUTES = 10080  # since Kafka 2.0 (KIP-186); 1440 before
RETENTION_MINUTES_MAX = 2**31 - 1  # Kafka's type for the setting is an int
HORIZON_S = 86400.0  # --commit-expiry-horizon: a day, time to notice and act (a restart, a reset) before it
BROKER, OPTION, ASSUMED = "broker", "option", "assumed"
MESSAGE, MOVED, UNREAD, NO_TIMESTAMP, NO_MESSAGE = "message", "moved", "unread", "no-timestamp", "no-message"

DOSEEK = str(DO_SEEK_BOTH_LINES)


@dataclass(frozen=True, slots=True)
class Retention:
    """offsets.retention.minutes and where offctl has it from: the broker, the option, or Kafka's default."""

    minutes: int
    source: str  # BROKER, OPTION or ASSUMED
    why: str = ""  # why the broker did not report it

    @property
    def ms(self) -> int:
        return self.minutes * 60_000

    def text(self) -> str:
        if self.source == BROKER:
            return f"{SETTING}={self.minutes} (the broker's)"
        if self.source == OPTION:
            return f"{SETTING}={self.minutes} (--offsets-retention-minutes; the broker does not report it)"
        return (
            f"{SETTING}={self.minutes} (assumed: Kafka's default since 2.0; the broker does not report it, "
            f"give --offsets-retention-minutes)"
        )


def retention_of(reported: Mapping[str, str], option: int | None, why: str = "") -> Retention:
    """The broker's value when it reports a usable one, else the option's, else Kafka's default, assumed.

    Apache Kafka reports every broker setting, its defaults included: a broker without the line in its
    server.properties reports 10080, the value it applies. So the broker's value is used whatever source it names,
    and the option (or the assumption) only where it is refused (no DescribeConfigs permission on the cluster) or
    has no DescribeConfigs (before Kafka 0.11)."""
    text = reported.get(SETTING)
    if text is not None and text.strip().isdigit() and 0 < int(text) <= RETENTION_MINUTES_MAX:
        return Retention(int(text), BROKER)
    why = why or (f"the broker reports {SETTING}={text[:40]!r}" if text is not None else f"no {SETTING}")
    if option is not None:
        return Retention(option, OPTION, why)
    return Retention(KAFKA_DEFAULT_MINUTES, ASSUMED, why)


def option_note(retention: Retention, option: int | None) -> str | None:
    """One line for stderr when --offsets-retention-minutes was given and the broker's own value is used instead;
    None otherwise."""
    if option is None or retention.source != BROKER:
        return None
    return f"--offsets-retention-minutes {option}: the broker reports {SETTING}={retention.minutes}, which is used"


@dataclass(frozen=True, slots=True)
class Expiry:
    """A partition's estimated commit expiry: `headroom_s` (the expiry minus now; negative once past), or why
    there is no figure."""

    headroom_s: float | None
    source: str  # MESSAGE, MOVED, UNREAD, NO_TIMESTAMP or NO_MESSAGE
    expires_ms: int | None = None
    committed_after_ms: int | None = None  # the lower bound of the last commit used
    why: str = ""


def not_refreshed(profile: SpoutProfile) -> str | None:
    """Why an idle partition's commit ages while the spout runs (module docstring, case 1), or None when the
    release and guarantee keep it fresh or the group has members (cases 2-4): commits.idle_commit."""
    if idle_commit(profile) is not IdleCommit.AGES:
        return None
    return f"under AT_LEAST_ONCE the spout commits a partition only when it acks a new message there ({COMMIT_ACKED})"


def skipped_because(profile: SpoutProfile) -> str:
    """One line on why commit expiry is not estimated for this profile (not_refreshed gave None)."""
    kept = idle_commit(profile)
    if kept is IdleCommit.MEMBERS:
        return (
            f"storm-kafka-client {LEGACY_RELEASES} subscribes: its group has members while it runs, and Kafka "
            f"expires its offsets only after the group has been empty for {SETTING}"
        )
    if kept is IdleCommit.EVERY_POLL:
        return (
            "AT_MOST_ONCE commits every assigned partition's position after each poll: the commit is refreshed "
            "while the spout runs"
        )
    return (
        "NO_GUARANTEE commits every assigned partition's position on the commit timer: the commit is "
        "refreshed while the spout runs"
    )


def acked_position(row: PartitionRow) -> Position | None:
    """The message a storm-kafka-client group acked last, C - 1 for resume offset C, for a partition it resumes
    inside the log and whose C - 1 is still in the log; None otherwise (nothing to read)."""
    r = row.record
    if (
        r.key.store != KAFKA
        or r.trident is not None
        or row.lag is None
        or not row.resumes_stored
        or row.topic is None
        or row.log_start is None
        or row.log_end is None
    ):
        return None
    acked = row.lag_end - row.lag - 1
    return (row.topic, r.partition, acked) if row.log_start <= acked < row.log_end else None


def positions(rows: Sequence[PartitionRow], members: Mapping[object, int | None]) -> list[Position]:
    """What to read: the acked message of each partition of a group with no members (`members` by consumer key)."""
    return list(
        dict.fromkeys(p for row in rows if not members.get(row.record.key) and (p := acked_position(row)) is not None)
    )


def estimate(
    row: PartitionRow, read: MessageRead, now_ms: int, retention: Retention, moved_after_ms: int | None = None
) -> Expiry | None:
    """The partition's commit expiry from the message read at C - 1 and, in serve, the time before the offset
    was seen to move; None for a partition this does not apply to (acked_position gave None and no move)."""
    position = acked_position(row)
    if position is None and moved_after_ms is None:
        return None
    after, source, why = None, NO_MESSAGE, "no message before the committed offset is in the log"
    if position is not None:
        at = at_offset(*position, PartitionLog(row.log_start, row.log_end), read)
        if at.kind == AT_MESSAGE:
            after, source = at.first.timestamp_ms, MESSAGE
            if after is None:
                source, why = NO_TIMESTAMP, f"{at.topic}/{at.partition} offset {at.offset} carries no timestamp"
        elif at.kind == GAP:
            why = f"{at.why}: no acked message to date the commit by"
        else:
            source, why = UNREAD, at.why
    if moved_after_ms is not None and (after is None or moved_after_ms > after):
        after, source = moved_after_ms, MOVED
    if after is None:
        return Expiry(None, source, why=why)
    expires = after + retention.ms
    return Expiry(round((expires - now_ms) / 1000, 3), source, expires, after)


def _duration(seconds: float) -> str:
    """A headroom for messages, in the one format every message uses (offctl.core.records.model.duration: 1h42m)."""
    return duration(abs(seconds))


def then(profile: SpoutProfile, row: PartitionRow) -> str:
    """What the spout does on its next start once the commit is gone (KafkaSpout.doSeek, no committed offset)."""
    committed = row.lag_end - row.lag
    if profile.first_poll.from_log_start:
        n = committed - row.log_start
        return (
            f"its next start (a restart, a redeploy, a reassignment) finds no commit and {profile.first_poll.value} "
            f"seeks to the log start ({row.log_start}): the {n} message{'s' if n != 1 else ''} it already "
            f"processed from there are replayed, and more as the log grows ({DOSEEK})"
        )
    return (
        f"its next start (a restart, a redeploy, a reassignment) finds no commit and {profile.first_poll.value} "
        f"seeks to the log end: the {row.lag} message{'s' if row.lag != 1 else ''} not yet processed now, and any "
        f"produced before it starts, are skipped ({DOSEEK})"
    )


def expiry_finding(
    row: PartitionRow,
    expiry: Expiry,
    retention: Retention,
    profile: SpoutProfile,
    now_ms: int,
    horizon_s: float = HORIZON_S,
) -> Finding | None:
    """COMMIT_EXPIRY_RISK when the estimated expiry is within `horizon_s` of `now_ms`, or past."""
    refreshed = not_refreshed(profile)
    if refreshed is None or expiry.headroom_s is None or expiry.headroom_s > horizon_s:
        return None
    r = row.record
    where = f"{row.topic}/{r.partition}"
    committed = row.lag_end - row.lag
    basis = (
        f"the timestamp of message {committed - 1}, the last one acked"
        if expiry.source == MESSAGE
        else "the last cycle before offctl serve saw the offset move"
    )
    if expiry.headroom_s > 0:
        when = f"may expire in {_duration(expiry.headroom_s)}, at {iso_ms(expiry.expires_ms)}"
    else:
        when = (
            f"may already have expired: the estimate was {_duration(expiry.headroom_s)} ago, at "
            f"{iso_ms(expiry.expires_ms)} (it is still there: the commit came later than estimated, or the "
            f"broker's next expiry check has not run)"
        )
    message = (
        f"{where}: commit {committed} of group {r.key.consumer} {when}; estimated from the last commit, no "
        f"earlier than {iso_ms(expiry.committed_after_ms)} ({basis}), and {retention.text()}. {refreshed[0].upper()}"
        f"{refreshed[1:]}, so an idle partition's commit is not renewed; {then(profile, row)}"
    )
    return finding("COMMIT_EXPIRY_RISK", r.key, message, topic=row.topic, partition=r.partition)


def assess(
    report: Report,
    read: MessageRead,
    retention: Retention,
    profile: SpoutProfile,
    *,
    horizon_s: float = HORIZON_S,
    moved_after: Mapping[tuple, int] | None = None,
) -> tuple[dict[tuple, Expiry], list[Finding]]:
    """Each storm-kafka-client partition's commit expiry (by partition_key) at the report's capture time, and the
    COMMIT_EXPIRY_RISK findings. Groups with members are left out (module docstring, case 4; a collision is
    GROUP_TYPE_CONFLICT). `moved_after`: serve's later bound per partition_key (moved_after_ms)."""
    if not_refreshed(profile) is None:
        return {}, []
    members = {c.key: c.members for c in report.consumers}
    moved_after = {} if moved_after is None else moved_after  # not `or`: a PerWindow's truth works out every key
    out: dict[tuple, Expiry] = {}
    found: list[Finding] = []
    for row in report.rows:
        if (
            members.get(row.record.key) or row.record.key.store != KAFKA or row.lag is None or not row.resumes_stored
        ):  # an ignored commit: its expiry changes nothing
            continue
        key = row.partition_key
        expiry = estimate(row, read, report.captured_ms, retention, moved_after.get(key))
        if expiry is None:
            continue
        out[key] = expiry
        f = expiry_finding(row, expiry, retention, profile, report.captured_ms, horizon_s)
        if f is not None:
            found.append(f)
    return out, found


def moved_after_ms(window: Sequence[Observation]) -> int | None:
    """When serve last saw the committed offset move: the capture time of the observation before the first one
    that saw the current offset (the commit that moved it came after that capture); None if it never moved in the
    window, oldest first."""
    for prev, cur in zip(reversed(window[:-1]), reversed(window)):
        if cur.committed != prev.committed:
            return prev.captured_ms
    return None


def unread_note(expiries: Mapping[tuple, Expiry]) -> str | None:
    """One line for stderr when some commits could not be dated; None when every one was."""
    missing = [e for e in expiries.values() if e.headroom_s is None and e.source == UNREAD]
    if not missing:
        return None
    n = len(missing)
    return f"commit expiry unknown for {n} partition{'s' if n != 1 else ''}: {missing[0].why}"
