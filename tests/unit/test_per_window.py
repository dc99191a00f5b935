"""serve's per-partition figures from its windows (Monitor.falling_behind, Monitor.moved_after) are worked out for
the partitions a cycle looks up, not for every partition of the fleet each cycle (bench_fleet: 100,000 windows a
cycle), and say what the eager dict said."""

from __future__ import annotations

import pytest

from offctl.core.time.expiry import moved_after_ms
from offctl.core.time.history import Observation, PerWindow, falling_behind


def window(committed: list[int], log_end: list[int]) -> list[Observation]:
    return [Observation(i * 60_000, c, 0, e) for i, (c, e) in enumerate(zip(committed, log_end))]


WINDOWS = {
    ("zookeeper", "s", "/r", "t", 0): window([10, 10, 10], [100, 120, 140]),  # stands still: 1.0
    ("zookeeper", "s", "/r", "t", 1): window([10, 30, 50], [100, 120, 140]),  # keeps pace: absent
    ("zookeeper", "s", "/r", "t", 2): window([10, 15, 20], [100, 120, 140]),  # a quarter of what comes: 0.75
}


@pytest.mark.parametrize(
    "measure",
    [lambda key, w: falling_behind(w), lambda key, w: moved_after_ms(w)],
    ids=["falling_behind", "moved_after_ms"],
)
def test_per_window_is_the_eager_dict(measure):
    eager = {k: v for k, w in WINDOWS.items() if (v := measure(k, list(w))) is not None}
    assert eager  # something to compare
    lazy = PerWindow(WINDOWS, measure)
    assert lazy == eager and dict(lazy) == eager and len(lazy) == len(eager)
    for key in WINDOWS:
        assert lazy.get(key) == eager.get(key) and (key in lazy) == (key in eager)
    assert lazy.get(("zookeeper", "s", "/r", "t", 9)) is None


def test_only_the_partitions_looked_up_are_worked_out():
    asked = []
    lazy = PerWindow(WINDOWS, lambda key, w: asked.append(key) or falling_behind(w))
    assert lazy.get(("zookeeper", "s", "/r", "t", 2)) == 0.75
    assert lazy.get(("zookeeper", "s", "/r", "t", 2)) == 0.75  # once per key
    assert asked == [("zookeeper", "s", "/r", "t", 2)]
