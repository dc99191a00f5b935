"""The detection rules are data: analyze.RULES numbers them, names their codes and the function that runs each one
(or the pass it shares, or where it runs outside analyze_consumer), analyze_consumer runs them in that order, and
docs/findings.md's list is generated from it (tests/unit/test_render.py holds the page). Every finding code of the
catalogue is found by exactly one rule."""

from __future__ import annotations

import inspect

import pytest

from offctl.core.records.findings import CATALOGUE
from offctl.core.rules import analyze, partitions, stored


def test_the_rules_are_numbered_in_order_and_cover_every_code_once():
    assert [r.number for r in analyze.RULES] == list(range(1, len(analyze.RULES) + 1))
    codes = [code for rule in analyze.RULES for code in rule.codes]
    assert sorted(codes) == sorted(set(codes)) == sorted(CATALOGUE)


@pytest.mark.parametrize("rule", analyze.RULES, ids=lambda r: f"{r.number}-{r.codes[0]}")
def test_each_rule_runs_somewhere_that_names_its_codes(rule):
    """A rule analyze_consumer runs has a function whose docstring names its codes; one it does not run says where it
    runs (another rule's pass: that rule has a function)."""
    if rule.run is not None:  # rule 7's pass: its own codes are unknown_partition's
        doc = (partitions.unknown_partition if rule.run is partitions.readable_records else rule.run).__doc__
        assert not rule.runs and all(code in doc for code in rule.codes), rule
    else:
        assert rule.runs, rule
        if rule.runs in (analyze.PER_RECORD, analyze.PER_READABLE):
            shared = analyze.RULES[2 - 1] if rule.runs == analyze.PER_RECORD else analyze.RULES[7 - 1]
            assert shared.run is not None and shared.number < rule.number


# the function of each rule that runs in rule 7's pass, in the order partition_rules calls them
READABLE = {
    7: "unknown_partition",
    8: "ignored_position",
    9: "lag_beyond_max_offset_behind",
    10: "offset_out_of_range",
    11: "high_lag",
    12: "stale_broker",
}


def test_the_pass_over_readable_records_runs_its_rules_in_order():
    assert {r.number for r in analyze.RULES if r.runs == analyze.PER_READABLE} == set(READABLE) - {7}
    body = inspect.getsource(partitions.partition_rules)
    first = [body.index(f"{READABLE[n]}(c") for n in sorted(READABLE) if n != 11]  # high_lag: in every branch
    assert first == sorted(first)
    for number, name in READABLE.items():
        rule = analyze.RULES[number - 1]
        assert all(code in getattr(partitions, name).__doc__ for code in rule.codes), (number, name)
    record = inspect.getsource(stored.record_rules)
    assert record.index("malformed_record(c") < record.index("inconsistent_record(c")
    assert "INCONSISTENT_RECORD" in stored.inconsistent_record.__doc__


def test_analyze_consumer_runs_the_table():
    """analyze_consumer calls no rule function by name: it runs RULES in order (and the whole-state step of rules 2
    and 10 for a Trident state)."""
    body = inspect.getsource(analyze.analyze_consumer)
    assert "for rule in RULES" in body
    called = [r.run.__name__ for r in analyze.RULES if r.run is not None]
    assert not [name for name in called if f"{name}(" in body]
    assert len(body.splitlines()) < 40


# A timestamp startOffsetTime (rules 2, 8, 9, 13): Kafka answers storm-kafka's ListOffsets v0 from its segment files'
# mtimes (UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0), which offctl cannot read; after the capture time,
# with the log end. PartitionManager (v1.2.4) starts a partition without a record, with offset <= 0, or
# (ignoreZkOffsets) with another topology's record there, and one more than maxOffsetBehind behind it. Run on
# storm-kafka 1.2.4 and Kafka 3.9.2 in tests/oracle/test_spout_oracle_time_e2e.py.
CAPTURED = 1_800_000_000_000


def _time_report(records, profile, captured=CAPTURED):
    from offctl.core.records.model import Snapshot, Thresholds
    from tests.unit.test_analyze import RUNNING, cluster

    return analyze.analyze(
        Snapshot(captured, tuple(records), cluster=cluster(3), running=frozenset({RUNNING})), Thresholds(spout=profile)
    )


def _resumes(report) -> dict[int, tuple]:
    said = {r.record.partition: (r.resumes.kind.value, r.resumes.at) for r in report.rows}
    said.update(
        {f.partition: (f.resumes.kind.value, f.resumes.at) for f in report.findings if f.code == "MISSING_PARTITION"}
    )
    return said


@pytest.mark.parametrize(
    "at, captured, want",
    [
        (CAPTURED + 1, CAPTURED, {0: ("log-end", 200), 1: ("stored", 150), 2: ("log-end", 200)}),
        (CAPTURED, CAPTURED, {0: ("time", None), 1: ("stored", 150), 2: ("time", None)}),
        (CAPTURED + 1, 0, {0: ("time", None), 1: ("stored", 150), 2: ("time", None)}),  # 0: a snapshot without a clock
    ],
    ids=["after-the-capture", "at-the-capture", "no-capture-time"],
)
def test_a_timestamp_after_the_capture_time_starts_at_the_log_end(at, captured, want):
    from offctl.core.storm.releases import SpoutProfile
    from tests.unit.test_analyze import rec

    report = _time_report([rec(0, 0), rec(1, 150)], SpoutProfile(start_offset_time=at), captured)  # 2: no record
    assert _resumes(report) == want
    zero = next(f for f in report.findings if f.code == "IGNORED_ZERO_OFFSET")
    assert ("after now" in zero.message) is (want[0][0] == "log-end"), zero.message
    assert "last modified at or before then" in zero.message or want[0][0] == "log-end", zero.message


@pytest.mark.parametrize(
    "stored, at, want, finding",
    [
        (150, CAPTURED, ("time", None), False),  # 200 - 150 > 10: the answer decides, and it is not known here
        (195, CAPTURED, ("stored", 195), False),  # 200 - 195 <= 10: no answer (at most the log end, or -5) exceeds it
        (150, CAPTURED + 1, ("log-end", 200), True),  # after the capture: the log end, 50 ahead
    ],
    ids=["not-known", "within-max-offset-behind-of-the-log-end", "after-the-capture"],
)
def test_max_offset_behind_against_a_timestamp(stored, at, want, finding):
    from offctl.core.storm.releases import SpoutProfile
    from tests.unit.test_analyze import rec

    report = _time_report([rec(0, stored)], SpoutProfile(start_offset_time=at, max_offset_behind=10))
    assert _resumes(report)[0] == want
    assert any(f.code == "LAG_BEYOND_MAX_OFFSET_BEHIND" for f in report.findings) is finding
    assert next(r.lag for r in report.rows if r.record.partition == 0) == 200 - stored  # lag from the stored offset


@pytest.mark.parametrize(
    "at, want",
    [
        (-1, ("log-end", 200)),  # LatestTime: 200 - 50 > 10
        (CAPTURED, ("time", None)),  # a timestamp: the answer decides, and it is not known here
        (CAPTURED + 1, ("log-end", 200)),  # after the capture: the log end
    ],
    ids=["latest", "timestamp", "after-the-capture"],
)
def test_max_offset_behind_comes_before_the_out_of_range_jump(at, want):
    """PartitionManager's constructor (v1.2.4) applies maxOffsetBehind before any fetch: a stored offset below the log
    start that is too far behind startOffsetTime's offset is never fetched, so a restart starts at that offset, not
    at the log start the out-of-range jump would take it to (run: tests/oracle/test_spout_oracle_time_e2e.py, the
    max-offset-behind-below-log-start scenarios). The OFFSET_BELOW_LOG_START finding stays, saying both."""
    from offctl.core.storm.releases import SpoutProfile
    from tests.unit.test_analyze import rec

    report = _time_report([rec(0, 50)], SpoutProfile(start_offset_time=at, max_offset_behind=10))
    assert _resumes(report)[0] == want
    below = next(f for f in report.findings if f.code == "OFFSET_BELOW_LOG_START")
    assert "while it runs; a restart never fetches it (maxOffsetBehind sends it to" in below.message, below.message
