"""Partition status over time, in the manner of Burrow's evaluator, and an estimated time lag. Pure.

An Observation is what one snapshot (the audit) or one cycle (`offctl serve`) saw of one consumer-partition:
its committed offset, the log range and when it was captured. `evaluate` looks at a window of them (oldest
first, those with a lag) and applies these rules in order; the first that matches gives the status. They
follow Burrow's CachingEvaluator (core/internal/evaluator/caching.go: calculatePartitionStatus), and pass
its evaluator test cases (tests/unit/test_history.py); where offctl differs, it says why.

 1. (no status)  fewer than two observations with a lag: nothing to compare.
 2. OK           the latest lag is within --allowed-lag (default 0): caught up.
 3. STOP / STALL the committed offset has not moved for longer than the window in which it last moved
                 (Burrow: now - last commit > last commit - first commit), and no observation since that
                 move saw the spout caught up at it (Burrow #303: a quiet topic is not a stopped
                 consumer). Storm spouts write an offset only when it moves, so a commit time cannot tell a
                 dead spout from a stuck one as Burrow does; Storm's root can: STALL when the topology
                 that wrote the offset is running (alive and stuck, e.g. on a poison message), STOP when it
                 is not or when offctl cannot tell.
 3a.            A storm-kafka-client spout commits on a timer (offset.commit.period.ms, 30 s by default; not
                 under AT_MOST_ONCE, which commits after every poll; KafkaSpout.nextTuple, v1.2.4 and v2.8.8):
                 a commit that has not moved for less than `commit_period_ms` is not stuck, and a window shorter
                 than one period cannot show a lag trend (rule 5 is skipped, rule 6 says OK).
 4. REWIND       the committed offset went back, and has not come back to where it was since (Burrow: a
                 rewind is over once the offset is back past it).
 5. when the lag was above --allowed-lag in every observation of the window:
    STOP / STALL the committed offset never moved in the window (as rule 3 decides between the two);
    WARN         the lag never decreased from one observation to the next (not: grew at every step).
 6. OK           otherwise.

Time lag: how long ago the message at the committed offset reached the log, in seconds. The log end's
growth between snapshots tells when the log end passed the committed offset (interpolated linearly
between the two snapshots around it, or extrapolated at the window's average rate when it passed before
the first); the time lag is the latest capture time minus that moment. 0 when the lag is 0; none when
the log did not grow in the window (no rate to go by).

Falling behind (`falling_behind`, for RETENTION_RISK in serve and watch: offctl.core.time.retention): how fast the
message a spout resumes at ages, from how much it consumed against how much was produced over the window.

Catch-up (`catch_up`; serve's and watch's cycles, the audit's snapshots): when a lagging spout will have caught up.
Over the window (the history status's: the newest observations, the current one last), from the first and the
latest observation with a lag, the rate the committed offset advanced (`commit_rate`) and the rate the log end
advanced (`log_rate`), in messages a second; a committed offset or log end that went back (a reset, a rewind, a
topic created again) starts the measure again after it. Then, from the partition's lag as the pipeline counted it
(to the last stable offset for a spout that reads committed):
  caught-up        the lag is 0: 0 s (with or without history; nothing is measured, so no rates).
  catching-up      the spout gains (commit_rate > log_rate): lag / (commit_rate - log_rate) seconds.
  not-catching-up  it does not (commit_rate <= log_rate): no time; it will not catch up at these rates.
  no-history       fewer than two observations with a lag (since the last rewind): no rates, no time.
  short-window     the window spans one commit period or less (rule 3a: a storm-kafka-client group's commit moves
                   on a timer, so a shorter window cannot tell its rate): no rates, no time.
An estimate at the window's average rates, not a promise: bursts of production, a commit period's steps and a
topology rebalanced or restarted move it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter

from offctl.core.records.model import KAFKA, CatchUp, ConsumerKey, PartitionRow, Report

OK, WARN, STALL, STOP, REWIND = "OK", "WARN", "STALL", "STOP", "REWIND"
STATUSES = (OK, WARN, STALL, STOP, REWIND)
DEFAULT_WINDOW = 10  # observations per partition, as Burrow's default intervals
_CAPTURED = attrgetter("captured_ms")


@dataclass(frozen=True, slots=True)
class Observation:
    captured_ms: int
    committed: int | None
    log_start: int | None
    log_end: int | None
    modified_ms: int | None = None  # ZooKeeper mtime of the record: when the spout last wrote it
    # log end - committed for an offset inside the log range, as inspect computes it; else None. Set once here:
    # the rules read it about forty times per partition and cycle (a property cost serve 1 s at 100,000).
    lag: int | None = field(init=False)

    def __post_init__(self) -> None:
        committed, start, end = self.committed, self.log_start, self.log_end
        inside = committed is not None and start is not None and end is not None and start <= committed <= end
        object.__setattr__(self, "lag", end - committed if inside else None)


@dataclass(frozen=True, slots=True)
class History:
    status: str | None
    time_lag_s: float | None
    observations: int  # how many observations with a lag the status was computed from


def commit_period_of(store: str, kafka_commit_period_ms: int) -> int:
    """Rule 3a's period for a partition of this store: storm-kafka-client groups (Kafka) commit on a timer;
    the other stores' offsets are read as written, each write a move."""
    return kafka_commit_period_ms if store == KAFKA else 0


def _last_move_ms(window: Sequence[Observation]) -> int:
    """When the committed offset last changed: the record's mtime when ZooKeeper gave one, else the capture
    time of the first observation that saw the current offset (Kafka has no commit time to read)."""
    latest = window[-1]
    if latest.modified_ms is not None:
        return latest.modified_ms
    moved = window[0].captured_ms
    for prev, cur in zip(window, window[1:]):
        if cur.committed != prev.committed:
            moved = cur.captured_ms
    return moved


def _caught_up_since(window: Sequence[Observation], last_move_ms: int, allowed_lag: int) -> bool:
    """Whether an observation after the last move saw the spout caught up at its current offset (Burrow #303)."""
    latest = window[-1].committed
    return any(o.captured_ms > last_move_ms and o.committed == latest and o.lag <= allowed_lag for o in window)


def status(
    window: Sequence[Observation], *, running: bool | None, allowed_lag: int = 0, commit_period_ms: int = 0
) -> str | None:
    """Rules 1-6 of the module docstring over observations with a lag, oldest first. `running`: whether the
    topology that wrote the latest offset is running (None: cannot tell). `commit_period_ms`: how long the
    spout may leave its commit unmoved while it runs (rule 3a; 0 for spouts that write on every move)."""
    if len(window) < 2:
        return None
    first, latest = window[0], window[-1]
    if latest.lag <= allowed_lag:
        return OK
    stuck = STALL if running else STOP
    if _stopped(window, allowed_lag, commit_period_ms):
        return stuck
    if _rewound(window):
        return REWIND
    if latest.captured_ms - first.captured_ms > commit_period_ms and all(o.lag > allowed_lag for o in window):
        if all(o.committed == first.committed for o in window):
            return stuck
        if not any(cur.lag < prev.lag for prev, cur in zip(window, window[1:])):
            return WARN
    return OK


def _stopped(window: Sequence[Observation], allowed_lag: int, commit_period_ms: int) -> bool:
    """Rule 3: the committed offset has not moved for longer than the window in which it last moved, nor for a
    commit period (3a), and no observation since that move saw the spout caught up at it."""
    first, latest = window[0], window[-1]
    last_move = _last_move_ms(window)
    still_ms = latest.captured_ms - last_move
    return (
        still_ms > last_move - first.captured_ms
        and still_ms > commit_period_ms
        and not _caught_up_since(window, last_move, allowed_lag)
    )


def _rewound(window: Sequence[Observation]) -> bool:
    """Rule 4: the committed offset went back, and has not come back to where it was since."""
    back = next((i for i in range(1, len(window)) if window[i].committed < window[i - 1].committed), None)
    return back is not None and not any(o.committed >= window[back - 1].committed for o in window[back:])


def time_lag_s(window: Sequence[Observation]) -> float | None:
    """Seconds since the message at the latest committed offset reached the log; see the module docstring."""
    latest = window[-1] if window else None
    if latest is None or latest.lag is None:
        return None
    if latest.lag == 0:
        return 0.0
    committed, now = latest.committed, latest.captured_ms
    points = [(o.captured_ms, o.log_end) for o in window if o.log_end is not None]
    for (t0, e0), (t1, e1) in zip(points, points[1:]):
        if e0 <= committed < e1:
            passed = t0 + (committed - e0) * (t1 - t0) / (e1 - e0)
            return round(max(now - passed, 0) / 1000, 3)
    (t_first, e_first), (t_last, e_last) = points[0], points[-1]
    if committed < e_first and t_last > t_first and e_last > e_first:
        rate = (e_last - e_first) / (t_last - t_first)  # messages per millisecond
        passed = t_first - (e_first - committed) / rate
        return round((now - passed) / 1000, 3)
    return None


def falling_behind(window: Sequence[Observation], commit_period_ms: int = 0) -> float | None:
    """How fast the message a spout resumes at ages, in seconds per second, over the window (oldest first):
    1 - consumed / produced, from the committed offset's and the log end's growth between the first and the latest
    observation with a lag; 1 when neither moved (it stands still). None when the window cannot tell (fewer than
    two observations, or no longer than one commit period: rule 3a), when the spout kept pace or gained on the
    producers, went back (a rewind), or moved while the log did not grow (the backlog's timestamps are not known
    from offsets). The estimate takes the backlog to have been written at the window's production rate."""
    with_lag = [o for o in window if o.lag is not None]
    if len(with_lag) < 2:
        return None
    first, latest = with_lag[0], with_lag[-1]
    if latest.captured_ms - first.captured_ms <= max(commit_period_ms, 0):
        return None
    consumed, produced = latest.committed - first.committed, latest.log_end - first.log_end
    if consumed < 0:
        return None
    if produced <= 0:
        return 1.0 if consumed == 0 else None
    return 1 - consumed / produced if consumed < produced else None


_UNKNOWN = object()


class PerWindow(Mapping):
    """Partition key -> what `measure(key, window)` makes of its window of observations (oldest first), for the
    keys where it makes something (None leaves the key out), each worked out at its first look-up: a cycle looks up
    only the partitions that need it (serve: the lagging ones), not every partition of the fleet every cycle.
    Read it before the windows change (serve: within the cycle that made it)."""

    def __init__(
        self, windows: Mapping[tuple, Sequence[Observation]], measure: Callable[[tuple, list[Observation]], object]
    ) -> None:
        self._windows, self._measure, self._known = windows, measure, {}

    def _value(self, key: tuple):
        value = self._known.get(key, _UNKNOWN)
        if value is _UNKNOWN:
            window = self._windows.get(key)
            value = self._known[key] = None if window is None else self._measure(key, list(window))
        return value

    def __getitem__(self, key: tuple):
        value = self._value(key)
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: tuple, default=None):  # without Mapping.get's KeyError for each partition that has none
        value = self._value(key)
        return default if value is None else value

    def __contains__(self, key: object) -> bool:
        return self._value(key) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[tuple]:
        return (key for key in list(self._windows) if key in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def evaluate(
    observations: Sequence[Observation],
    *,
    running: bool | None,
    window: int = DEFAULT_WINDOW,
    allowed_lag: int = 0,
    commit_period_ms: int = 0,
) -> History:
    """Status and time lag of one partition from its observations (any order; the newest `window` count)."""
    ordered = sorted(observations, key=_CAPTURED)[-window:]
    with_lag = [o for o in ordered if o.lag is not None]
    # The latest observation must have a lag: a partition out of range now has a finding, not a trend.
    if not ordered or ordered[-1].lag is None:
        return History(None, None, len(with_lag))
    return History(
        status(with_lag, running=running, allowed_lag=allowed_lag, commit_period_ms=commit_period_ms),
        time_lag_s(ordered),
        len(with_lag),
    )


# --- catch-up: when a lagging spout will have caught up (the module docstring) ---------------------------------------

CAUGHT_UP, CATCHING_UP, NOT_CATCHING_UP = "caught-up", "catching-up", "not-catching-up"
NO_HISTORY, SHORT_WINDOW = "no-history", "short-window"  # no estimate, and why
CATCH_UP_STATES = (CAUGHT_UP, CATCHING_UP, NOT_CATCHING_UP, NO_HISTORY, SHORT_WINDOW)
NO_CATCH_UP = CatchUp(None, None)  # no lag (an offset outside the log, or where the spout resumes is not known)
CAUGHT_UP_NOW = CatchUp(0.0, CAUGHT_UP)  # lag 0: nothing to catch up, nothing measured
NO_ESTIMATE = CatchUp(None, NO_HISTORY)
# a consumer's state is the most pressing of its partitions': not catching up, then no estimate, then the time
_URGENCY = {None: 0, CAUGHT_UP: 1, CATCHING_UP: 2, SHORT_WINDOW: 3, NO_HISTORY: 4, NOT_CATCHING_UP: 5}


def _run_start(newest_first: Iterable[Observation], committed: int, log_end: int) -> Observation | None:
    """The oldest of these earlier observations (newest first) with a lag from which the committed offset and the log
    end never went back up to `committed` and `log_end` (a reset, a rewind, a topic created again start another run,
    whose rates say nothing of this one); None when there is none."""
    first = None
    for o in newest_first:
        if o.lag is None:
            continue
        if o.committed > committed or o.log_end > log_end:
            break
        first, committed, log_end = o, o.committed, o.log_end
    return first


def _rated(first: Observation | None, now_ms: int, committed: int, log_end: int, lag: int, period_ms: int) -> CatchUp:
    """A lagging partition's catch-up from the first observation of its run to now (the module docstring)."""
    if first is None:
        return CatchUp(None, NO_HISTORY)
    span_ms = now_ms - first.captured_ms
    if span_ms <= max(period_ms, 0):
        return CatchUp(None, SHORT_WINDOW)
    commit_rate = (committed - first.committed) * 1000 / span_ms
    log_rate = (log_end - first.log_end) * 1000 / span_ms
    rates = round(commit_rate, 3), round(log_rate, 3)
    if commit_rate <= log_rate:
        return CatchUp(None, NOT_CATCHING_UP, *rates)
    return CatchUp(round(lag / (commit_rate - log_rate), 3), CATCHING_UP, *rates)


def catch_up(window: Sequence[Observation], lag: int | None, commit_period_ms: int = 0) -> CatchUp:
    """When the spout will have caught up (the module docstring): `window` oldest first, the current observation
    last; `lag` the partition's lag as the pipeline counted it (None: no lag, no figure; 0: caught up, nothing to
    measure); `commit_period_ms` rule 3a's period (a window no longer than it cannot tell a rate)."""
    if not lag:
        return NO_CATCH_UP if lag is None else CAUGHT_UP_NOW
    with_lag = [o for o in window if o.lag is not None]
    if not with_lag:
        return CatchUp(None, NO_HISTORY)
    latest = with_lag[-1]
    first = _run_start(reversed(with_lag[:-1]), latest.committed, latest.log_end)
    return _rated(first, latest.captured_ms, latest.committed, latest.log_end, lag, commit_period_ms)


@dataclass(frozen=True, slots=True)
class Earlier:
    """serve's and watch's observations before a cycle, as that cycle's catch-up estimate takes them: per partition
    key its window, oldest first, of which the newest `keep` (the history status's window but the cycle's own)."""

    windows: Mapping[tuple, Sequence[Observation]]
    keep: int = DEFAULT_WINDOW - 1


def catch_ups(report: Report, earlier: Earlier) -> dict[tuple, CatchUp]:
    """Per partition_key of the report's lagging rows, its catch-up over its `earlier` observations and this report's,
    by its consumer's commit period. A row at lag 0, without a lag or without an earlier observation is left out:
    catch_up_of gives it its figure. It runs every cycle over every lagging partition (a fleet of 100,000 where every
    spout is a few messages behind): one pass back over each window, nothing copied, no observation made."""
    out = {}
    windows, keep = earlier.windows, earlier.keep
    periods, period = report.commit_periods, report.kafka_commit_period_ms
    now_ms = report.captured_ms
    for row in report.rows:
        lag, r = row.lag, row.record
        if not lag or row.topic is None or r.committed is None:
            continue
        key = row.partition_key
        before = windows.get(key)
        if not before:
            continue
        ms = commit_period_of(r.key.store, periods.get(r.key, period) if periods else period)
        committed, start, end = r.committed, row.log_start, row.log_end
        if start is None or end is None or not start <= committed <= end:  # its offset is outside the log now
            kept = list(islice(reversed(before), keep))[::-1]
            out[key] = catch_up([*kept, Observation(now_ms, committed, start, end)], lag, ms)
            continue
        first = _run_start(islice(reversed(before), keep), committed, end)
        out[key] = _rated(first, now_ms, committed, end, lag, ms)
    return out


def catch_up_of(row: PartitionRow, estimated: Mapping[tuple, CatchUp]) -> CatchUp:
    """A row's catch-up: caught up at lag 0, none without a lag, else the report's estimate (Report.catch_ups), and
    without one no history."""
    lag = row.lag
    if not lag:
        return NO_CATCH_UP if lag is None else CAUGHT_UP_NOW
    found = estimated.get(row.partition_key) if estimated else None
    return found if found is not None else NO_ESTIMATE


def joined(a: CatchUp, b: CatchUp) -> CatchUp:
    """Two partitions' catch-up (or two parts of a consumer's) as one consumer's: caught up when all are; the most
    pressing state (not catching up, then no estimate, then catching up); the time until every one has caught up
    (the largest), while each has a time; the rates summed over the partitions that have them. Associative and
    commutative, with NO_CATCH_UP as its identity: the audit adds a consumer's partitions up in any order."""
    state = a.state if _URGENCY[a.state] >= _URGENCY[b.state] else b.state
    timed = state in (CAUGHT_UP, CATCHING_UP)
    seconds = max((s for s in (a.seconds, b.seconds) if s is not None), default=None) if timed else None
    return CatchUp(seconds, state, _summed(a.commit_rate, b.commit_rate), _summed(a.log_rate, b.log_rate))


def _summed(x: float | None, y: float | None) -> float | None:
    return x if y is None else y if x is None else round(x + y, 3)


def consumer_catch_ups(report: Report) -> dict[ConsumerKey, CatchUp]:
    """Each consumer's catch-up, `joined` over its rows' (catch_up_of): when all its lagging partitions will have
    caught up. A consumer whose partitions have no lag has NO_CATCH_UP."""
    out: dict[ConsumerKey, CatchUp] = {}
    ups = report.catch_ups
    for row in report.rows:
        k = row.record.key
        out[k] = joined(out.get(k, NO_CATCH_UP), catch_up_of(row, ups))
    return out
