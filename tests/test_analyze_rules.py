"""analyze_consumer is the list of its numbered rules (offctl/core/analyze.py's module docstring), one function per
rule, named after it, each with the rule's docstring, called in the rules' order."""

from __future__ import annotations

import inspect
import re

import pytest

from offctl.core import analyze

RULES = [  # (number, function, the codes its docstring names)
    (1, "ambiguous_spout_id", ("AMBIGUOUS_SPOUT_ID",)),
    (2, "malformed_record", ("MALFORMED_RECORD",)),
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
    consumer = [body.index(f"{name}(c") for _, name, _ in RULES if name in (
        "ambiguous_spout_id", "malformed_record", "inconsistent_record", "topic_mismatch", "id_collision",
        "foreign_commit", "missing_partition", "stale_topology")]
    assert consumer == sorted(consumer)
    per_record = [body.index(f"{name}(c", body.index("def partition_rules")) for name in (
        "unknown_partition", "ignored_position", "lag_beyond_max_offset_behind", "offset_out_of_range", "stale_broker")]
    assert per_record == sorted(per_record) and len(order) == len(RULES) - 1
    assert len(inspect.getsource(analyze.analyze_consumer).splitlines()) < 40
