"""Time lag: how long the next message a spout is handed has waited, from that message's timestamp. Pure.

A partition's lag counts messages; its time lag says how old the oldest of them is: the capture time minus the
timestamp of the message the spout resumes at. That message is the first at or after the offset it resumes
from: storm-kafka's PartitionManager.fill fetches from that offset and skips anything below it
(PartitionManager.java, v1.2.4), storm-kafka-client seeks the consumer to it (KafkaSpout.doSeek, v2.8.8). Where
compaction removed records or transactions left markers (a gap), the next message is later, and its age is what
counts: it is the oldest one the spout still has to process.

Each figure says where it comes from (`time_lag_source`):

1. caught-up   the lag is 0 (or no message lies between the resume offset and the log end: compaction, markers):
               nothing waits, the time lag is 0. Nothing is read for it.
2. message     the capture time minus the timestamp of the message the spout resumes at (never negative: a
               producer's clock may run ahead). The timestamp is the topic's message.timestamp.type:
               LogAppendTime is the broker's clock when it appended the message; CreateTime (Kafka's default) is
               the producer's, as the producer set it.
3. estimate    `offctl serve` and `offctl watch` only, where the message gave no figure (4 and 5): interpolated
               from the log end's growth between cycles (offctl.core.time.history).
4. unread      the message was not read: the time budget ran out, the read was turned off, or the broker refused.
               No figure.
5. no-timestamp the message carries none (message format v0, before Kafka 0.10). No figure.
None: the partition has no lag (where the spout will resume is unknown or outside the log): no time lag.

Only partitions with lag > 0 are read, once per (topic, partition, offset) however many consumers resume there;
a report whose partitions are all caught up reads nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from offctl.core.records.messages import GAP, age_ms, at_offset
from offctl.core.records.messages import MESSAGE as AT_MESSAGE
from offctl.core.records.model import ConsumerKey, MessageRead, PartitionLog, PartitionRow, Position, TimeLag

CAUGHT_UP, MESSAGE, ESTIMATE, UNREAD, NO_TIMESTAMP = "caught-up", "message", "estimate", "unread", "no-timestamp"
SOURCES = (MESSAGE, CAUGHT_UP, ESTIMATE)  # the sources that come with a figure, in the order of their metric codes
SOURCE_CODES = {source: code for code, source in enumerate(SOURCES)}  # message 0, caught-up 1, estimate 2

NO_LAG = TimeLag(None, None)
NOTHING_WAITS = TimeLag(0.0, CAUGHT_UP)
NOT_READ = TimeLag(None, UNREAD, "not read")


def resume_position(row: PartitionRow) -> Position | None:
    """Where a lagging partition's spout resumes (the log end minus the lag: the offset the analysis measured
    from, which is not the stored one for a legacy storm-kafka-client commit, nor where the spout does not use
    the stored offset: row.resumes_stored); None unless the lag is above 0."""
    lag = row.lag
    if not lag or row.topic is None or row.lag_end is None:
        return None
    return row.topic, row.record.partition, row.lag_end - lag


def positions(rows: Iterable[PartitionRow]) -> list[Position]:
    """The positions whose message gives a time lag: one per lagging (topic, partition, offset). resume_position
    inlined: this runs over every row of every report, and a healthy one should cost next to nothing."""
    return list(
        dict.fromkeys((r.topic, r.record.partition, r.lag_end - r.lag) for r in rows if r.lag and r.topic is not None)
    )


def read_committed_positions(rows: Iterable[PartitionRow]) -> frozenset[Position]:
    """The positions of `positions` where a spout that reads committed resumes (row.last_stable): the message it
    is handed there is the first committed one, which a read_committed read finds."""
    return frozenset(
        (r.topic, r.record.partition, r.last_stable - r.lag)
        for r in rows
        if r.lag and r.topic is not None and r.last_stable is not None
    )


def measure(rows: Iterable[PartitionRow], read: MessageRead, now_ms: int) -> dict[Position, TimeLag]:
    """The time lag at each lagging partition's resume position, from what the read found, at `now_ms`."""
    lags: dict[Position, TimeLag] = {}
    for row in rows:
        position = resume_position(row)
        if position is None or position in lags:
            continue
        at = at_offset(*position, PartitionLog(row.log_start, row.lag_end), read)
        if at.kind in (AT_MESSAGE, GAP) and at.first is not None:
            age = age_ms(at.first, now_ms)
            lags[position] = (
                TimeLag(
                    None,
                    NO_TIMESTAMP,
                    f"{at.topic}/{at.partition} offset {at.first.offset}: the message carries no timestamp",
                )
                if age is None
                else TimeLag(round(age / 1000, 3), MESSAGE)
            )
        elif at.kind == GAP:
            lags[position] = NOTHING_WAITS  # no message from the offset to the log end: none waits
        else:  # UNREAD: a lagging row's offset is inside its log, so it is neither deleted nor unwritten
            lags[position] = TimeLag(None, UNREAD, at.why)
    return lags


def unread(positions: Iterable[Position], why: str) -> dict[Position, TimeLag]:
    """These positions' time lags, not read for one reason."""
    lag = TimeLag(None, UNREAD, why)
    return dict.fromkeys(positions, lag)


def time_lag(row: PartitionRow, lags: Mapping[Position, TimeLag]) -> TimeLag:
    """A partition's time lag: 0 when caught up, none without a lag, else what was measured at its position."""
    lag = row.lag
    if not lag:
        return NO_LAG if lag is None else NOTHING_WAITS
    return lags.get((row.topic, row.record.partition, row.lag_end - lag), NOT_READ)


def served(row: PartitionRow, lags: Mapping[Position, TimeLag], estimate_s: float | None) -> TimeLag:
    """What serve and watch show: the figure from the message where there is one, else the estimate. The
    estimate (offctl.core.time.history) follows the stored offset, so it stands in only where the lag counts from it
    (row.resumes_stored); elsewhere it would be the age of another message than the one the lag starts at."""
    exact = time_lag(row, lags)
    if exact.seconds is not None or estimate_s is None or not row.resumes_stored:
        return exact
    return TimeLag(estimate_s, ESTIMATE)


def consumer_maxima(rows: Iterable[PartitionRow], lags: Iterable[TimeLag]) -> dict[ConsumerKey, TimeLag]:
    """Each consumer's largest time lag, with its source, among its partitions that have one; `lags` are the
    rows' own, in their order (time_lag's for inspect, served's for serve). Partitions without one are left out."""
    out: dict[ConsumerKey, TimeLag] = {}
    for row, lag in zip(rows, lags):
        if lag.seconds is not None:
            key = row.record.key
            best = out.get(key)
            if best is None or lag.seconds > best.seconds:
                out[key] = lag
    return out


def unread_note(lags: Mapping[Position, TimeLag]) -> str | None:
    """One line for stderr when some time lags could not be had; None when every one was."""
    missing = [lag for lag in lags.values() if lag.seconds is None]
    if not missing:
        return None
    n = len(missing)
    return (
        f"time lag unknown for {n} lagging partition{'s' if n != 1 else ''} (time_lag_source "
        f"{'/'.join(sorted({m.source for m in missing}))}): {missing[0].why}"
    )
