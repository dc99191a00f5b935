"""History rules (offctl/core/time/history.py), table-driven over plain observations."""

from __future__ import annotations

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
