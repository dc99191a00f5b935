"""The fault tier of a group coordinator that moves (issue 43), in the suite: two rounds on a 3-node Kafka 4.4 cluster,
the coordinator's node killed in the first and shut down cleanly in the second, while inspect, watch, serve, an MCP
session and a reset run (tests/faults/coordinator_moves.py says what each round does and what must hold). More rounds
run outside the suite: `.venv/bin/python -m tests.faults.coordinator_moves --rounds 20`."""

from __future__ import annotations

import pytest

from tests.faults.coordinator_moves import run_rounds

pytestmark = [pytest.mark.kafka]


def test_a_coordinator_that_moves_never_ends_offctl_and_every_run_is_right_or_says_why(tmp_path):
    counts = run_rounds(2, tmp_path)
    print(counts.summary())
    assert not counts.failures(), counts.failures()
    assert counts.scrapes["answered"] > 20 and counts.mcp["answered"] > 5, counts.summary()
    assert sum(n for (cmd, _), n in counts.runs.items() if cmd == "inspect") > 4, counts.summary()
    assert sum(counts.resets.values()) == 2, counts.summary()
