"""History rules (offctl/history.py), table-driven over plain observations."""

from __future__ import annotations

import pytest

from offctl.history import OK, REWIND, STALL, STOP, WARN, Observation, evaluate, time_lag_s

MIN = 60_000


def series(*points, start=0, step=MIN, log_start=0, modified=None):
    """Observations every `step` ms from (committed, log_end) pairs."""
    return [Observation(start + i * step, c, log_start, e, modified) for i, (c, e) in enumerate(points)]


@pytest.mark.parametrize("points, running, expected", [
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
    # moved halfway: now - last move == last move - first, not more: not stopped
    ([(10, 20), (15, 25), (15, 25)], None, OK),
    # lag 0 now, never moved: OK (nothing to do)
    ([(7, 7), (7, 7), (7, 7)], None, OK),
])
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


@pytest.mark.parametrize("points, expected", [
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
])
def test_time_lag(points, expected):
    assert time_lag_s(series(*points)) == expected
