"""History rules (offctl/core/time/history.py), table-driven over plain observations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from offctl.core.time.history import OK, REWIND, STALL, STOP, WARN, Observation, evaluate, time_lag_s

MIN = 60_000


def series(*points, start=0, step=MIN, log_start=0, modified=None):
    """Observations every `step` ms from (committed, log_end) pairs."""
    return [Observation(start + i * step, c, log_start, e, modified) for i, (c, e) in enumerate(points)]


@pytest.mark.parametrize(
    "points, running, expected",
    [
        # 1. fewer than two observations with a lag
        ([(5, 10)], None, None),
        # 2. not moved for longer than the window it moved in, with lag
        ([(5, 10), (5, 12), (5, 14)], None, STOP),
        ([(5, 10), (5, 12), (5, 14)], False, STOP),
        ([(5, 10), (5, 12), (5, 14)], True, STALL),
        ([(5, 10), (5, 10)], True, STALL),  # lag constant and nothing new: still stuck with work to do
        # 3. caught up at some point
        ([(10, 10), (12, 15), (15, 20)], None, OK),
        # 4. went back
        ([(50, 60), (20, 61), (30, 62)], None, REWIND),
        # 5. moving, but the lag grows every interval
        ([(10, 20), (12, 25), (14, 30)], None, WARN),
        # 6. moving and keeping up
        ([(10, 20), (18, 25), (22, 30)], None, OK),
        # moved halfway: now - last move == last move - first, not more: not stopped; but the lag never
        # decreased (10, 10, 10): WARN, as Burrow's checkIfLagNotDecreasing (not "grew at every step")
        ([(10, 20), (15, 25), (15, 25)], None, WARN),
        # lag 0 now, never moved: OK (nothing to do)
        ([(7, 7), (7, 7), (7, 7)], None, OK),
    ],
)
def test_status_rules(points, running, expected):
    assert evaluate(series(*points), running=running).status == expected


def test_zookeeper_mtime_is_the_last_move():
    # Offsets moved between the first snapshots, but the record says it was written long before: the spout
    # has not written since (a ZooKeeper record's mtime is the spout's own commit time).
    obs = series((10, 20), (12, 25), (14, 30), modified=-10 * MIN)
    assert evaluate(obs, running=False).status == STOP
    fresh = series((10, 20), (12, 25), (14, 30), modified=2 * MIN)
    assert evaluate(fresh, running=False).status == WARN


def test_window_keeps_the_newest():
    old_rewind = series((50, 60), (20, 61), (25, 62), (30, 63), (35, 64))
    assert evaluate(old_rewind, running=None, window=5).status == REWIND
    # The last three: lag 37, 33, 29 and moving.
    assert evaluate(old_rewind, running=None, window=3).status == OK


def test_out_of_range_now_has_no_status():
    obs = series((10, 20), (12, 25)) + [Observation(2 * MIN, 99, 0, 30)]
    assert evaluate(obs, running=None).status is None
    assert evaluate(obs, running=None).time_lag_s is None


def test_order_of_observations_does_not_matter():
    obs = series((10, 20), (12, 25), (14, 30))
    assert evaluate(list(reversed(obs)), running=None) == evaluate(obs, running=None)


@pytest.mark.parametrize(
    "points, expected",
    [
        # log end 10 -> 20 in a minute; committed 15 was passed at 30 s; now is 60 s: 30 s behind
        ([(5, 10), (15, 20)], 30.0),
        # caught up
        ([(5, 10), (20, 20)], 0.0),
        # committed before the window: extrapolate at 10 messages a minute; 0 was passed at -60 s, now 60 s
        ([(0, 10), (0, 20)], 120.0),
        # the log did not grow: no rate to go by
        ([(5, 10), (5, 10)], None),
        # one observation: no growth seen
        ([(5, 10)], None),
        # the log end was 10 at 0 s, so message 10 arrived right after: 120 s ago
        ([(1, 10), (2, 20), (10, 30)], 120.0),
    ],
)
def test_time_lag(points, expected):
    assert time_lag_s(series(*points)) == expected


# --- Burrow's evaluator test cases (linkedin/Burrow core/internal/evaluator/caching_test.go, `tests`, 0-15) ---
#
# A Burrow case is a window of commits (offset, timestamp ms, lag at commit), the broker's recent log end
# offsets, the current lag, "now" and an allowed lag. As observations: one per commit (log end = offset +
# lag; a nil lag is an observation without a log end), then the broker's samples spread between the last
# commit and now at the last offset, then now; the record's mtime is the last commit (a Storm spout's
# write). Burrow's STOP is a consumer that stopped committing, its STALL one that commits the same offset:
# offctl tells them apart by whether the topology runs, so each case gives `running` as Burrow's scenario
# implies (STOP: not running; everything else: running).


def burrow(commits, broker, current_lag, now_s, allowed=0):
    last_offset, last_ts = commits[-1][0], commits[-1][1]
    obs = [Observation(ts, off, 0, None if lag is None else off + lag, last_ts) for off, ts, lag in commits]
    now = now_s * 1000
    step = (now - last_ts) / (len(broker) + 1)
    obs += [Observation(int(last_ts + (i + 1) * step), last_offset, 0, end, last_ts) for i, end in enumerate(broker)]
    obs.append(Observation(now, last_offset, 0, last_offset + current_lag, last_ts))
    return obs, allowed


RISING = [(1000, 100000, 0), (2000, 200000, 50), (3000, 300000, 100), (4000, 400000, 150), (5000, 500000, 200)]
STUCK = [(1000, 100000, 100), (1000, 200000, 150), (1000, 300000, 200), (1000, 400000, 250), (1000, 500000, 300)]
REWOUND = [(1000, 100000, 100), (2000, 200000, 150), (3000, 300000, 200), (2000, 400000, 1250)]
CAUGHT = [
    (792748079 + i, t, 0)
    for i, t in enumerate(
        [
            1512224618356,
            1512224619362,
            1512224620366,
            1512224621367,
            1512224622370,
            1512224623373,
            1512224624378,
            1512224625379,
            1512224626383,
            1512224627383,
            1512224628383,
            1512224629388,
            1512224630391,
            1512224631394,
            1512224632397,
        ]
    )
]


@pytest.mark.parametrize(
    "case, running, expected",
    [
        pytest.param(burrow(RISING, [5200], 200, 600), True, OK, id="burrow 0: zero lag somewhere"),
        pytest.param(burrow(RISING, [5200], 200, 900), True, OK, id="burrow 1: not stopped at equality"),
        pytest.param(
            burrow(RISING, [5200], 200, 1000), False, STOP, id="burrow 2: stopped despite early zero lag (#290)"
        ),
        pytest.param(
            burrow([(o, t, lag + 50) for o, t, lag in RISING], [5250], 250, 1000),
            False,
            STOP,
            id="burrow 3: stopped, lag never zero",
        ),
        pytest.param(
            burrow([(1000, t, lag) for _, t, lag in RISING], [1200], 200, 600),
            True,
            OK,
            id="burrow 4: same offset but zero lag in the window",
        ),
        pytest.param(burrow(STUCK, [1300], 300, 600), True, STALL, id="burrow 5: same offset, lag always non-zero"),
        pytest.param(
            burrow([(1000, t, 100) for _, t, _ in STUCK], [1100], 100, 600),
            True,
            STALL,
            id="burrow 6: same offset, lag constant",
        ),
        pytest.param(
            burrow(REWOUND + [(4000, 500000, 300)], [4300], 300, 600), True, OK, id="burrow 7: rewind recovered"
        ),
        pytest.param(
            burrow([(o, t, lag + 50) for o, t, lag in RISING], [5250], 0, 1000),
            False,
            OK,
            id="burrow 8: current lag zero",
        ),
        pytest.param(
            burrow(CAUGHT, [792749024, 792749000, 792748800, 792748600, 792748500], 931, 1512224650),
            False,
            STOP,
            id="burrow 9: zero lag at every commit, then new data and no commit (#290)",
        ),
        pytest.param(
            burrow(CAUGHT, [792748094, 792748093, 792748093, 792748093], 1, 1512224650),
            True,
            OK,
            id="burrow 10: caught up at the current offset since the last commit (#303)",
        ),
        pytest.param(
            burrow(
                [(o, t, lag) for o, t, lag in RISING for o, t, lag in ((o, t, lag), (o + 500, t + 50000, None))],
                [5700],
                200,
                600,
            ),
            True,
            OK,
            id="burrow 11: nil lags do not change case 0",
        ),
        pytest.param(
            burrow([(1000, 100000, 2), (2000, 200000, 1), (2000, 300000, 1)], [2001], 1, 550, allowed=1),
            True,
            OK,
            id="burrow 12: within the allowed lag",
        ),
        pytest.param(
            burrow(STUCK, [1300], 300, 600, allowed=99), True, STALL, id="burrow 13: case 5 with an allowed lag"
        ),
        pytest.param(
            burrow(REWOUND + [(4000, 500000, 300)], [4300], 300, 600, allowed=99),
            True,
            OK,
            id="burrow 14: case 7 with an allowed lag",
        ),
        pytest.param(
            burrow(REWOUND + [(2500, 500000, 300)], [4300], 300, 600),
            True,
            REWIND,
            id="burrow 15: rewind not recovered",
        ),
    ],
)
def test_burrows_evaluator_cases(case, running, expected):
    obs, allowed = case
    assert evaluate(obs, running=running, window=len(obs), allowed_lag=allowed).status == expected


def test_where_offctl_differs_on_purpose_stop_or_stall_by_the_running_topology():
    """Burrow calls a consumer that stopped committing STOP. A Storm spout writes only when its offset moves,
    so offctl asks Storm's root: the topology still runs -> STALL (stuck, e.g. on a poison message)."""
    obs, _ = burrow(RISING, [5200], 200, 1000)
    assert evaluate(obs, running=True, window=len(obs)).status == STALL
    assert evaluate(obs, running=None, window=len(obs)).status == STOP  # cannot tell: the worse


# falling_behind: how fast the message a spout resumes at ages, for RETENTION_RISK's rule 4 (issue 28)
@pytest.mark.parametrize(
    "points, period_ms, expected",
    [
        ([(5, 10)], 0, None),  # one observation: nothing to compare
        ([(5, 10), (5, 10), (5, 10)], 0, 1.0),  # stands still, nothing produced: its message ages with the clock
        ([(5, 10), (5, 20), (5, 30)], 0, 1.0),  # stands still while the producers write
        ([(10, 20), (15, 30), (20, 40)], 0, 0.5),  # consumes 10 of the 20 produced
        ([(10, 20), (29, 40), (48, 60)], 0, 0.05),  # keeps pace but for 1 in 20: ages 3 s a minute
        ([(10, 20), (20, 30), (30, 40)], 0, None),  # keeps pace
        ([(10, 20), (25, 30), (40, 40)], 0, None),  # gains on the producers
        ([(10, 20), (15, 20), (18, 20)], 0, None),  # works through a backlog the log did not add to: no rate to go by
        ([(50, 60), (20, 61), (30, 62)], 0, None),  # went back: a rewind, not a pace
        ([(5, 10), (5, 20)], MIN, None),  # a window no longer than one commit period (rule 3a): cannot tell
        ([(5, 10), (5, 20), (5, 30)], MIN, 1.0),  # longer: stood still for two periods
        ([(10, 10), (10, 20), (20, 30)], 0, 0.5),  # caught up in the first observation (lag 0): still a lag now
    ],
)
def test_falling_behind(points, period_ms, expected):
    from offctl.core.time.history import falling_behind

    got = falling_behind(series(*points), period_ms)
    assert got == (pytest.approx(expected) if expected is not None else None)


# catch-up: when a lagging spout will have caught up, at the rates over the window (issue 46)
@pytest.mark.parametrize(
    "points, lag, period_ms, expected",
    [
        # committed 10 -> 40 and log end 100 -> 110 in a minute: 0.5/s against 1/6 per second, lag 70:
        # 70 / (1/2 - 1/6) = 210 s
        ([(10, 100), (40, 110)], 70, 0, (210.0, "catching-up", 0.5, 0.167)),
        # the first and the latest observation decide, whatever lies between: 0.25/s against 1/12 per second
        ([(10, 100), (11, 100), (40, 110)], 70, 0, (420.0, "catching-up", 0.25, 0.083)),
        # caught up now: 0, and nothing to measure
        ([(10, 40), (40, 40)], 0, 0, (0.0, "caught-up", None, None)),
        # keeps pace: never closes the gap
        ([(10, 20), (20, 30), (30, 40)], 10, 0, (None, "not-catching-up", 0.167, 0.167)),
        # stands still while the producers write
        ([(5, 10), (5, 20)], 15, 0, (None, "not-catching-up", 0.0, 0.167)),
        # stands still, nothing produced: it is not catching up either
        ([(5, 10), (5, 10)], 5, 0, (None, "not-catching-up", 0.0, 0.0)),
        # works through a backlog nothing is added to: lag 2 at 0.1/s
        ([(10, 20), (16, 20)], 4, 0, (40.0, "catching-up", 0.1, 0.0)),
        # one observation: no history (lag 0 still is caught up)
        ([(10, 20)], 10, 0, (None, "no-history", None, None)),
        ([(20, 20)], 0, 0, (0.0, "caught-up", None, None)),
        # rule 3a: a storm-kafka-client group's window no longer than its commit period cannot tell a rate
        ([(10, 100), (40, 110)], 70, MIN, (None, "short-window", None, None)),
        ([(10, 40), (40, 40)], 0, MIN, (0.0, "caught-up", None, None)),
        ([(10, 100), (25, 105), (40, 110)], 70, MIN, (420.0, "catching-up", 0.25, 0.083)),
        # a rewind (a reset back) starts the measure again after it: 2 -> 8 in the last minute, 0.1/s against
        # 1/60 per second (over the whole window the offset went back: no rate to go by)
        ([(50, 60), (2, 61), (8, 62)], 54, 0, (648.0, "catching-up", 0.1, 0.017)),
        ([(50, 60), (2, 61), (2, 62)], 60, 0, (None, "not-catching-up", 0.0, 0.017)),
        ([(50, 60), (40, 61), (47, 61)], 14, 0, (120.0, "catching-up", 0.117, 0.0)),
        # ... and a rewind at the latest observation leaves one: no history yet
        ([(20, 60), (30, 61), (2, 62)], 60, 0, (None, "no-history", None, None)),
        # the log end went back (the topic created again): what came before is another log
        ([(90, 100), (3, 10), (9, 13)], 4, 0, (80.0, "catching-up", 0.1, 0.05)),
    ],
)
def test_catch_up(points, lag, period_ms, expected):
    from offctl.core.time.history import catch_up

    seconds, state, commit_rate, log_rate = catch_up(series(*points), lag, period_ms)
    assert (seconds, state) == expected[:2]
    assert (commit_rate, log_rate) == expected[2:]


def test_catch_up_takes_the_lag_it_is_given_and_skips_observations_out_of_range():
    from offctl.core.time.history import NO_CATCH_UP, catch_up

    window = series((10, 100), (40, 110))
    # a read_committed spout's lag counts to the last stable offset: 35 messages, not log end - committed = 70
    assert catch_up(window, 35, 0).seconds == 105.0
    assert catch_up(window, None, 0) == NO_CATCH_UP  # no lag (an offset outside the log): no figure
    # an observation whose offset was outside the log has no lag, and is no end of the measure
    out = Observation(MIN // 2, 500, 0, 105)
    assert out.lag is None
    assert catch_up([window[0], out, window[1]], 70, 0) == catch_up(window, 70, 0)


def _catch_up_report(captured_ms, offsets, *, log_end, last_stable=None, group=False, commit_periods=None):
    """A report of one consumer's rows (partition -> committed), as the pipeline counts their lag."""
    from offctl.core.records.model import KAFKA, ZOOKEEPER, ConsumerKey, OffsetRecord, PartitionRow, Report

    key = ConsumerKey(KAFKA, "g") if group else ConsumerKey(ZOOKEEPER, "s", "/r")
    end = last_stable if last_stable is not None else log_end
    rows = tuple(
        PartitionRow(OffsetRecord(key, p, "t", c), 0, log_end, end - c, None, "t", last_stable=last_stable)
        for p, c in offsets.items()
    )
    return Report(
        captured_ms, rows, (), (), kafka_commit_period_ms=30_000 if group else 0, commit_periods=commit_periods or {}
    )


def test_catch_ups_over_a_report_take_each_rows_lag_and_its_groups_commit_period():
    from offctl.core.records.model import KAFKA, ConsumerKey
    from offctl.core.time.history import Earlier, catch_up_of, catch_ups

    earlier_report = _catch_up_report(0, {0: 10, 1: 10}, log_end=100)
    earlier = {row.partition_key: [Observation(0, 10, 0, 100)] for row in earlier_report.rows}
    # a read_committed spout: lag to the last stable offset 80 (not the log end 110), 40 messages at 1/3 per second
    now = _catch_up_report(MIN, {0: 40, 1: 40}, log_end=110, last_stable=80)
    got = catch_ups(now, Earlier({k: v for k, v in earlier.items() if k[-1] == 0}))  # partition 1 has none
    assert list(got) == [now.rows[0].partition_key]
    assert got[now.rows[0].partition_key].seconds == 120.0
    assert catch_up_of(now.rows[1], got) == (None, "no-history", None, None)
    # a storm-kafka-client group: its window of a minute is within the report's commit period of 30 s: measured
    group_earlier = {
        row.partition_key: [Observation(0, 10, 0, 100)]
        for row in _catch_up_report(0, {0: 10}, log_end=100, group=True).rows
    }
    group_now = _catch_up_report(MIN, {0: 40}, log_end=110, group=True)
    assert catch_ups(group_now, Earlier(group_earlier))[group_now.rows[0].partition_key].state == "catching-up"
    # ... but not within its own profile's period of 2 minutes
    slow = _catch_up_report(MIN, {0: 40}, log_end=110, group=True, commit_periods={ConsumerKey(KAFKA, "g"): 2 * MIN})
    assert catch_ups(slow, Earlier(group_earlier))[slow.rows[0].partition_key].state == "short-window"


def test_catch_up_of_without_an_estimate_says_what_the_lag_does():
    from offctl.core.time.history import catch_up_of

    report = _catch_up_report(0, {0: 100, 1: 40}, log_end=100)
    assert [catch_up_of(row, {}) for row in report.rows] == [
        (0.0, "caught-up", None, None),
        (None, "no-history", None, None),
    ]


A = (100.0, "catching-up", 2.0, 1.0)
B = (300.0, "catching-up", 1.5, 0.5)
DONE = (0.0, "caught-up", 0.25, 0.25)
NEVER = (None, "not-catching-up", 0.0, 1.0)
NEW = (None, "no-history", None, None)
SHORT = (None, "short-window", None, None)


@pytest.mark.parametrize(
    "parts, expected",
    [
        ([A, B], (300.0, "catching-up", 3.5, 1.5)),  # until every partition has caught up: the longest
        ([A, DONE], (100.0, "catching-up", 2.25, 1.25)),
        ([DONE, DONE], (0.0, "caught-up", 0.5, 0.5)),
        ([A, NEVER, NEW], (None, "not-catching-up", 2.0, 2.0)),  # one not catching up: the consumer is not
        ([A, NEW], (None, "no-history", 2.0, 1.0)),  # one with no estimate: no time for the consumer
        ([A, SHORT], (None, "short-window", 2.0, 1.0)),
        ([NEW, SHORT], (None, "no-history", None, None)),
        ([(None, None, None, None), DONE], DONE),  # a partition without a lag adds nothing
        ([(None, None, None, None)], (None, None, None, None)),
    ],
)
def test_a_consumers_catch_up_is_joined_from_its_partitions_in_any_order(parts, expected):
    import functools
    import itertools

    from offctl.core.records.model import CatchUp
    from offctl.core.time.history import NO_CATCH_UP, joined

    ups = [CatchUp(*p) for p in parts]
    for order in itertools.permutations(ups):
        assert functools.reduce(joined, order, NO_CATCH_UP) == CatchUp(*expected)
    # associative: the audit adds a consumer's partitions up in Spark, in any grouping
    if len(ups) == 3:
        a, b, c = ups
        assert joined(joined(a, b), c) == joined(a, joined(b, c))


def test_consumer_catch_ups_of_a_report():
    from dataclasses import replace

    from offctl.core.records.model import CatchUp
    from offctl.core.time.history import consumer_catch_ups

    report = _catch_up_report(MIN, {0: 40, 1: 100, 2: 90}, log_end=100)
    p0, _, p2 = (row.partition_key for row in report.rows)
    estimated = replace(report, catch_ups={p0: CatchUp(*B), p2: CatchUp(*A)})
    (key,) = consumer_catch_ups(estimated)
    # partition 1 is caught up (lag 0, no history): its 0 counts, no rates
    assert consumer_catch_ups(estimated)[key] == CatchUp(300.0, "catching-up", 3.5, 1.5)
    assert consumer_catch_ups(report)[key] == CatchUp(None, "no-history")


def test_catch_ups_take_the_newest_of_each_window_and_measure_an_offset_outside_the_log_as_catch_up_does():
    """serve's window holds `window` observations before a cycle; the estimate keeps the newest `window - 1` and adds
    the cycle's own (Earlier.keep), so it spans the window the history status does."""
    from offctl.core.time.history import Earlier, catch_up, catch_ups

    now = _catch_up_report(3 * MIN, {0: 40}, log_end=130)
    key = now.rows[0].partition_key
    window = series((0, 100), (10, 110), (25, 120))  # 0 -> 40 over 3 minutes; 10 -> 40 over the last 2
    assert catch_ups(now, Earlier({key: window}, keep=3))[key] == catch_up(
        [*window, Observation(3 * MIN, 40, 0, 130)], 90
    )
    two = catch_ups(now, Earlier({key: window}, keep=2))[key]
    assert (two.commit_rate, two.log_rate) == (0.25, 0.167)
    assert catch_ups(now, Earlier({key: window}, keep=0))[key].state == "no-history"
    # the cycle's offset outside the log (a row whose lag counts from elsewhere): measured from the window alone
    past = _catch_up_report(3 * MIN, {0: 40}, log_end=130)
    row = past.rows[0]
    outside = replace(past, rows=(replace(row, record=replace(row.record, committed=500)),))
    got = catch_ups(outside, Earlier({key: window}))[key]
    assert got == catch_up([*window, Observation(3 * MIN, 500, 0, 130)], 90)
    assert (got.commit_rate, got.log_rate) == (0.208, 0.167)  # 0 -> 25 and 100 -> 120 over 2 minutes
