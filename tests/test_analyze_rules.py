"""analyze_consumer is the list of its numbered rules (offctl/core/analyze.py's module docstring), one function per
rule, named after it, each with the rule's docstring, called in the rules' order."""

from __future__ import annotations

import inspect
import re

import pytest

from offctl.core import analyze

RULES = [  # (number, function, the codes its docstring names)
    (1, "ambiguous_spout_id", ("AMBIGUOUS_SPOUT_ID",)),
    (2, "malformed_record", ("MALFORMED_RECORD", "TRIDENT_REPLAY")),
    (3, "inconsistent_record", ("INCONSISTENT_RECORD",)),
    (4, "topic_mismatch", ("TOPIC_MISMATCH",)),
    (5, "id_collision", ("ID_COLLISION",)),
    (6, "foreign_commit", ("FOREIGN_COMMIT", "LEGACY_COMMIT_METADATA")),
    (7, "unknown_partition", ("UNREAD_PARTITION", "UNKNOWN_TOPIC", "UNKNOWN_PARTITION")),
    (8, "ignored_position", ("IGNORED_TRIDENT_STATE", "IGNORED_ZERO_OFFSET")),
    (9, "lag_beyond_max_offset_behind", ("LAG_BEYOND_MAX_OFFSET_BEHIND",)),
    (10, "offset_out_of_range", ("OFFSET_BELOW_LOG_START", "OFFSET_ABOVE_LOG_END")),
    (11, "high_lag", ("HIGH_LAG",)),
    (12, "stale_broker", ("STALE_BROKER",)),
    (13, "missing_partition", ("MISSING_PARTITION",)),
    (14, "stale_topology", ("STALE_TOPOLOGY",)),
]


@pytest.mark.parametrize("number, name, codes", RULES, ids=[f"{n}-{name}" for n, name, _ in RULES])
def test_each_rule_is_a_function_with_its_docstring(number, name, codes):
    rule = getattr(analyze, name)
    listed = re.search(rf"^ ?{number}\. (.*?)(?=^ ?{number + 1}\. )", analyze.__doc__, re.M | re.S)[1]
    for code in codes:
        assert code in rule.__doc__ and code in listed, (number, code)
    assert f"# {number}." in inspect.getsource(analyze).split(f"def {name}(")[0].rstrip().splitlines()[-1]


def test_analyze_consumer_calls_the_rules_in_order():
    body = inspect.getsource(analyze.analyze_consumer) + inspect.getsource(analyze.partition_rules)
    order = [body.index(f"{name}(c") for _, name, _ in RULES if name not in ("high_lag",)]
    consumer = [
        body.index(f"{name}(c")
        for _, name, _ in RULES
        if name
        in (
            "ambiguous_spout_id",
            "malformed_record",
            "inconsistent_record",
            "topic_mismatch",
            "id_collision",
            "foreign_commit",
            "missing_partition",
            "stale_topology",
        )
    ]
    assert consumer == sorted(consumer)
    per_record = [
        body.index(f"{name}(c", body.index("def partition_rules"))
        for name in (
            "unknown_partition",
            "ignored_position",
            "lag_beyond_max_offset_behind",
            "offset_out_of_range",
            "stale_broker",
        )
    ]
    assert per_record == sorted(per_record) and len(order) == len(RULES) - 1
    assert len(inspect.getsource(analyze.analyze_consumer).splitlines()) < 40


# A timestamp startOffsetTime (rules 2, 8, 9, 13): Kafka answers storm-kafka's ListOffsets v0 from its segment files'
# mtimes (UnifiedLog.legacyFetchOffsetsBefore, apache/kafka 3.9.0), which offctl cannot read; after the capture time,
# with the log end. PartitionManager (v1.2.4) starts a partition without a record, with offset <= 0, or
# (ignoreZkOffsets) with another topology's record there, and one more than maxOffsetBehind behind it. Run on
# storm-kafka 1.2.4 and Kafka 3.9.2 in tests/test_spout_oracle_time_e2e.py.
CAPTURED = 1_800_000_000_000


def _time_report(records, profile, captured=CAPTURED):
    from offctl.core.model import Snapshot, Thresholds
    from tests.test_analyze import RUNNING, cluster

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
    from offctl.core.behaviour import SpoutProfile
    from tests.test_analyze import rec

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
    from offctl.core.behaviour import SpoutProfile
    from tests.test_analyze import rec

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
    at the log start the out-of-range jump would take it to (run: tests/test_spout_oracle_time_e2e.py, the
    max-offset-behind-below-log-start scenarios). The OFFSET_BELOW_LOG_START finding stays, saying both."""
    from offctl.core.behaviour import SpoutProfile
    from tests.test_analyze import rec

    report = _time_report([rec(0, 50)], SpoutProfile(start_offset_time=at, max_offset_behind=10))
    assert _resumes(report)[0] == want
    below = next(f for f in report.findings if f.code == "OFFSET_BELOW_LOG_START")
    assert "while it runs; a restart never fetches it (maxOffsetBehind sends it to" in below.message, below.message
