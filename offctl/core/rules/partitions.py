"""The rules over each readable partition of a consumer (the table RULES in offctl/core/rules/analyze.py runs
them): unknown partitions, ignored positions, lag beyond maxOffsetBehind, offsets out of range, high lag, stale
brokers."""

from __future__ import annotations

from offctl.core.records.model import KAFKA, STORM_KAFKA_CLIENT, OffsetRecord, PartitionLog, ranges
from offctl.core.records.stormjson import parse_storm_id
from offctl.core.rules.consumer import _at, _Consumer, _move, _plural, library_of
from offctl.core.storm import jstorm
from offctl.core.storm.outcomes import (
    Resumes,
    Resumption,
    committed_above_outcome,
    crashing,
    fresh_position,
    start_outcome,
    stored_citation,
    time_lands,
    trident_out_of_range_throws,
)
from offctl.core.storm.releases import LONG_MAX, Library, Position, SpoutProfile
from offctl.core.storm.start import (
    commit_is_ours,
    configured_start,
    first_poll_start,
    ignored_start,
    storm_kafka_ignores,
    trident_first_poll,
    trident_handed_on,
)


def readable_records(c: _Consumer) -> None:
    """Rules 7-12, per record the spout can read (partition_rules)."""
    for i, r in c.valid:
        partition_rules(c, i, r)


def partition_rules(c: _Consumer, i: int, r: OffsetRecord) -> None:
    """Rules 7-12 of one record the spout can read, against its partition's log: where it resumes, whether that
    is inside the log, its lag, and the broker it names."""
    topic = c.topic_of.get(i)
    if topic is None:
        return  # a tie: where the offset applies is unknown
    where = f"{topic}/{r.partition}"
    if unknown_partition(c, i, r, topic, where):
        return
    plog = c.logs.get(i)  # None: Kafka was not consulted
    start, end = (plog.log_start, plog.log_end) if plog is not None else (None, None)
    instead = ignored_position(c, i, r, topic, where, start, end)  # rule 8 (and where rules 6 and 14 say the same)
    if instead is not None:
        c.started.add(i)
        high_lag(c, i, r, topic, where, instead.offset, start, end)
        return
    position = _stored_position(c, i, r)
    c.lost[i] = lost_to_retention(position, start, end)
    if c.key.store == KAFKA and c.resumes[i].crashes:  # rule 6 says so: the lag counts from the commit, which stays
        c.resumption[i] = crashing()
        high_lag(c, i, r, topic, where, position, start, end)
        return
    c.resumption[i] = _stored_resumption(c, r, position)
    restart = None  # where rule 9 starts a restart instead of the stored offset
    if c.max_offset_behind != LONG_MAX and lag_beyond_max_offset_behind(c, i, r, topic, where, start, end):
        restart = c.resumption[i]
    if start is None or end is None:
        return
    if offset_out_of_range(c, i, r, topic, where, position, start, end, restart):
        high_lag(c, i, r, topic, where, position, start, end)
    if c.old and plog is not None:
        stale_broker(c, i, r, topic, where, plog)


def _stored_position(c: _Consumer, i: int, r: OffsetRecord) -> int | None:
    """Where the spout fetches first from the record it uses: where rule 6 puts a storm-kafka-client spout, the
    stored offset + 1 for JStorm's, else the stored offset."""
    if c.key.store == KAFKA:
        return c.resumes[i].at.offset
    return jstorm.resumes_at(r.committed) if c.jstorm else r.committed


def lost_to_retention(position: int | None, start: int | None, end: int | None) -> int | None:
    """How many offsets lie between `position`, where the spout fetches first from its stored record (the commit, the
    commit + 1 of storm-kafka-client's legacy lines, a Trident state's offset: before its out-of-range rule moves it),
    and the log start [start, end]: what retention deleted before the spout read it, at most that many messages
    (a transaction's markers take offsets too). 0 at or above the log start; None without a position or log range."""
    if position is None or start is None or end is None:
        return None
    return start - position if position < start else 0


def _stored_resumption(c: _Consumer, r: OffsetRecord, position: int | None) -> Resumption:
    """Where the spout resumes a record it uses: at `position`, the stored offset, or the commit + 1 (a
    storm-kafka-client line that resumes after its commit, JStorm's spout)."""
    plus_one = position != r.committed  # storm-kafka-client's legacy lines, JStorm's spout
    return Resumption(
        position,
        Resumes.STORED_PLUS_1 if plus_one else Resumes.STORED,
        stored_citation(c.profile, library_of(r), r.trident is not None),
    )


def unknown_partition(c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str) -> bool:
    """UNREAD_PARTITION: a record of a partition the spout does not read (--static-partitions);
    UNKNOWN_TOPIC / UNKNOWN_PARTITION: of the partition the offset applies to (needs Kafka). True when a finding ends
    the record's rules; else the partition's log is in c.logs, when Kafka was consulted."""
    static = c.static
    if static is not None and r.partition not in static:
        reader = (
            f"PartitionCoordinator reads partitions 0 to kafka.broker.partitions - 1 ({jstorm.PARTITIONS})"
            if c.jstorm
            else "StaticCoordinator never reads it"
        )
        c.on_record(
            i,
            r,
            topic,
            "UNREAD_PARTITION",
            f"{where} has a record, but the spout reads only partitions {ranges(static)} (--static-partitions): "
            f"{reader}",
        )
        return True
    cluster = c.cluster
    if cluster is None:
        return False
    partitions = cluster.get(topic)
    if partitions is None:
        c.on_record(
            i,
            r,
            topic,
            "UNKNOWN_TOPIC",
            f"topic '{topic}' does not exist (offset {r.committed} for partition {r.partition})",
        )
        return True
    plog = partitions.get(r.partition)
    if plog is None:
        c.on_record(
            i, r, topic, "UNKNOWN_PARTITION", f"{where} does not exist: the topic has {len(partitions)} partitions"
        )
        return True
    c.logs[i] = plog
    return False


def _another_topologys(profile: SpoutProfile, r: OffsetRecord, running: frozenset[str] | None) -> bool:
    """Whether storm-kafka's ignoreZkOffsets (forceFromStart) takes `r` for another topology's record, the running
    topologies being `running` (None: unknown). Before 1.0 the spout compares the record with its own random id
    (StormKafka.names_a_uuid), one per submission, never a storm id: a record naming a storm id, running or not, is
    another's; one naming another id is taken as the next deployment takes it, another's."""
    if profile.storm_kafka.names_a_uuid:
        return running is not None or parse_storm_id(r.topology_id or "") is not None
    return running is not None and r.topology_id not in running


def ignored_position(
    c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str, start: int | None, end: int | None
) -> Position | None:
    """IGNORED_TRIDENT_STATE: a storm-kafka-client Trident state EARLIEST/LATEST ignores (lag from the log start or
    end they seek to); IGNORED_ZERO_OFFSET: a ZooKeeper offset <= 0, replaced at start-up (lag from
    startOffsetTime). Returns where the spout starts instead of the stored offset when it does not use it (the lag
    counts from there): also for ignoreZkOffsets and another topology id (rule 14 says so) and a commit the
    first-poll strategy ignores (rule 6 says so). PartitionManager's constructor, storm-kafka v0.9.2-incubating
    to v1.2.4; KafkaSpout.doSeek, v2.8.8."""
    profile, running = c.profile, c.running
    if c.jstorm:
        return _from_beginning(c, i, start, end) if profile.jstorm_from_beginning else None
    if c.old and profile.ignore_zk_offsets and _another_topologys(profile, r, running):
        # rule 14 says so: the next deployment starts at startOffsetTime, which the `<= 0` and
        # maxOffsetBehind checks leave there (both compare with startOffsetTime too)
        instead = ignored_start(profile, start, end, c.now_ms)
        c.resumption[i] = Resumption.landing(
            time_lands(profile, c.now_ms),
            stored_citation(profile, library_of(r), r.trident is not None),
            None,
            start,
            end,
            instead.offset,
        )
        return instead
    if r.trident == STORM_KAFKA_CLIENT and (ignored := trident_first_poll(profile, r.topology_id, running)):
        instead = first_poll_start(profile, start, end)
        handed = trident_handed_on(profile, instead.offset, r.committed)
        c.on_record(
            i,
            r,
            topic,
            "IGNORED_TRIDENT_STATE",
            f"{where} resumes at {r.committed}, but firstPollOffsetStrategy {profile.first_poll.value} "
            f"ignores this state {ignored}: the spout starts from the {profile.first_poll.edge}"
            f"{_at(instead)}{handed}",
        )
        if handed:  # offctl cannot tell which: no resumption, no lag
            return Position(None, "not known")
        c.resumption[i] = Resumption(
            instead.offset,
            Resumes(profile.first_poll.edge.replace(" ", "-")),
            stored_citation(profile, library_of(r), r.trident is not None),
        )
        return instead
    if c.zk and storm_kafka_ignores(r.committed):
        instead = configured_start(profile, start, end, c.now_ms)
        c.on_record(
            i,
            r,
            topic,
            "IGNORED_ZERO_OFFSET",
            f"{where} stores offset {r.committed}; PartitionManager replaces an offset <= 0 and "
            f"starts from {instead.text()}",
        )
        outcome = start_outcome(profile, Library.STORM_KAFKA, c.now_ms)
        c.resumption[i] = Resumption.landing(outcome.lands, outcome.citation, None, start, end, instead.offset)
        return instead
    if c.key.store == KAFKA and not c.resumes[i].uses_commit:
        at = c.resumes[i].at  # rule 6 says why
        c.resumption[i] = Resumption(
            at.offset,
            Resumes(profile.first_poll.edge.replace(" ", "-")),
            stored_citation(profile, Library.STORM_KAFKA_CLIENT),
        )
        return at
    return None


def _from_beginning(c: _Consumer, i: int, start: int | None, end: int | None) -> Position:
    """Where JStorm's spout with kafka.fetch.from.beginning starts, whatever is stored: the log start + 1
    (jstorm.fresh_start); the resumption says so, as the spout's setting, not the record, decides it."""
    instead = fresh_position(c.profile, Library.JSTORM_KAFKA, start, end)
    c.resumption[i] = Resumption(instead.offset, Resumes.LOG_START, jstorm.START)
    return instead


def lag_beyond_max_offset_behind(
    c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str, start: int | None, end: int | None
) -> bool:
    """LAG_BEYOND_MAX_OFFSET_BEHIND: the start-up offset is more than maxOffsetBehind ahead of the stored one.
    Only a start (or a reassignment) applies maxOffsetBehind: a running spout still moves on from the stored
    offset, so the lag counts from it, and the finding says where a restart goes. A timestamp startOffsetTime
    whose answer is not known here (start._time_answer) is at most the log end (or -5): within maxOffsetBehind
    of the log end the stored offset holds; further behind, where a start goes is not known (resumes `time`).
    True when a start goes elsewhere than the stored offset: the check comes before any fetch, so a stored offset
    out of range is never fetched by a restart (rule 10 says so)."""
    mob = c.max_offset_behind
    current = configured_start(c.profile, start, end, c.now_ms)
    if current.offset is None and end is not None and end - r.committed > mob:
        # PartitionManager (v1.2.4): `currentOffset - _committedTo > maxOffsetBehind` with currentOffset Kafka's answer
        c.resumption[i] = Resumption(None, Resumes.TIME, start_outcome(c.profile, Library.STORM_KAFKA).citation)
        return True
    if current.offset is not None and current.offset - r.committed > mob:
        outcome = start_outcome(c.profile, Library.STORM_KAFKA, c.now_ms)  # PartitionManager's constructor starts there
        c.resumption[i] = Resumption.landing(outcome.lands, outcome.citation, None, start, end, current.offset)
        c.on_record(
            i,
            r,
            topic,
            "LAG_BEYOND_MAX_OFFSET_BEHIND",
            f"{where} committed {r.committed} is {current.offset - r.committed} behind "
            f"{current.text()}, more than maxOffsetBehind {mob}: on restart the spout starts "
            f"from {current.offset}",
        )
        return True
    return False


def offset_out_of_range(
    c: _Consumer,
    i: int,
    r: OffsetRecord,
    topic: str,
    where: str,
    position: int,
    start: int,
    end: int,
    restart: Resumption | None = None,
) -> bool:
    """OFFSET_BELOW_LOG_START / OFFSET_ABOVE_LOG_END: where the spout resumes is outside the log, and what its
    release then does (outcomes.out_of_range_outcome, decided once per consumer). False when it is inside.
    `restart`: where rule 9 sends a restart instead (PartitionManager's constructor applies maxOffsetBehind before
    any fetch, v1.2.4): that stays the resumption, and the finding says the jump is what the running spout does."""
    if (position < start or position > end) and trident_out_of_range_throws(c.profile, library_of(r)):
        c.throws = True
    if position < start:
        outcome = _move(c.moves, c.profile, r, "below")
        jump = _running_jump(
            c,
            i,
            outcome.say(position, start, end),
            restart,
            Resumption.landing(outcome.lands, outcome.citation, position, start, end),
        )
        c.on_record(
            i,
            r,
            topic,
            "OFFSET_BELOW_LOG_START",
            f"{where} resumes at {position} < log start {start}: {_deleted(c.lost[i], position)}; {jump}",
        )
        return False
    if position > end:
        outcome = _move(c.moves, c.profile, r, "above")
        if c.key.store == KAFKA and r.trident is None:  # STORM-2844's check, on the releases that have it
            outcome = committed_above_outcome(c.profile, commit_is_ours(r.topology_id, c.running)) or outcome
        jump = _running_jump(
            c,
            i,
            outcome.say(position, start, end),
            restart,
            Resumption.landing(outcome.lands, outcome.citation, position, start, end),
        )
        c.on_record(
            i,
            r,
            topic,
            "OFFSET_ABOVE_LOG_END",
            f"{where} resumes at {position} > log end {end} (by {position - end}); {jump}",
        )
        return False
    return True


def _deleted(lost: int, position: int) -> str:
    """What retention took below the log start, in OFFSET_BELOW_LOG_START's words: the row's `lost_to_retention`
    (lost_to_retention's count) and its offsets, from `position` on."""
    if lost == 1:
        return f"1 message (offset {position}) was deleted before the spout read it"
    return f"{lost} messages (offsets {position} to {position + lost - 1}) were deleted before the spout read them"


def _running_jump(c: _Consumer, i: int, jump: str, restart: Resumption | None, landing: Resumption) -> str:
    """Rule 10's sentence and resumption: the release's jump, or, where rule 9 starts a restart elsewhere, the jump
    as what the running spout does and rule 9's start as where a restart resumes."""
    if restart is None:
        c.resumption[i] = landing
        return jump
    where = "where startOffsetTime's offset falls" if restart.at is None else str(restart.at)
    return f"{jump} while it runs; a restart never fetches it (maxOffsetBehind sends it to {where} first)"


def high_lag(
    c: _Consumer,
    i: int,
    r: OffsetRecord,
    topic: str,
    where: str,
    position: int | None,
    start: int | None,
    end: int | None,
) -> None:
    """The lag of a partition whose spout resumes at `position` (None: unknown, e.g. a time startOffsetTime),
    counted only when it is inside the log; and HIGH_LAG, at or above the user's --lag-threshold."""
    position = _lag_from(c, position, start, end)
    if position is None:
        return
    last_stable = c.logs[i].last_stable if c.isolation_level.stops_at_last_stable and i in c.logs else None
    lag = c.lags[i] = end - position if last_stable is None else max(last_stable - position, 0)
    threshold = c.thresholds.lag_threshold
    if threshold is not None and lag >= threshold:
        behind = "the log end" if last_stable is None else "the last stable offset"
        c.on_record(
            i,
            r,
            topic,
            "HIGH_LAG",
            f"{where} lags {_plural(lag, 'message')} behind {behind} "
            f"({end if last_stable is None else last_stable}), at or above --lag-threshold "
            f"{threshold}",
        )


def _lag_from(c: _Consumer, position: int | None, start: int | None, end: int | None) -> int | None:
    """The offset a partition's lag counts from: `position` inside the log, or the log end for JStorm's start at the
    log end + 1 (jstorm.fresh_start: no message it will emit is behind it); None elsewhere, or unknown."""
    if c.jstorm:
        position = jstorm.lag_from(position, end)
    if position is None or start is None or end is None or not start <= position <= end:
        return None
    return position


def stale_broker(c: _Consumer, i: int, r: OffsetRecord, topic: str, where: str, plog: PartitionLog) -> None:
    """STALE_BROKER: the broker a ZooKeeper record names is not the partition's current leader."""
    if plog.leader and r.broker and r.broker.lower() != plog.leader.lower():
        c.on_record(i, r, topic, "STALE_BROKER", f"{where} record names broker {r.broker}; the leader is {plog.leader}")
