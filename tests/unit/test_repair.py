"""audit --repair on plain data: whom each finding's consumer is reset as, what a consumer that cannot be
planned becomes, and the exit code of the whole run."""

from __future__ import annotations

import pytest

from offctl.core.records.model import JSTORM, KAFKA, TRIDENT, ZOOKEEPER, ConsumerKey
from offctl.core.results.audit import Tally
from offctl.errors import StoreUnavailable, UsageError
from offctl.faces.audit import repairs as audit_repairs
from offctl.faces.audit.job import exit_code
from offctl.faces.audit.repairs import Repair, plan_repair, repair_request, repairs
from offctl.settings.connection import Connection
from offctl.settings.run import Safety


def finding(store, consumer, zk_root, partition, code="OFFSET_ABOVE_LOG_END"):
    return {
        "code": code,
        "store": store,
        "consumer": consumer,
        "zk_root": zk_root,
        "topic": "t",
        "partition": partition,
    }


@pytest.mark.parametrize(
    "store, zk_root, fields",
    [
        (ZOOKEEPER, "/spouts", {"spout": "c", "zk_root": "/spouts", "trident": None, "groups": ()}),
        (TRIDENT, "/transactional", {"trident": "c", "zk_root": "/transactional", "spout": None, "groups": ()}),
        (KAFKA, None, {"groups": ("c",), "spout": None, "trident": None, "zk_root": None}),
        (JSTORM, "/jstorm", {"jstorm": "c", "zk_root": "/jstorm", "spout": None, "trident": None, "groups": ()}),
    ],
)
def test_each_store_is_reset_as_its_own_reset_would(store, zk_root, fields):
    [repair] = repairs(
        [finding(store, "c", zk_root, 1), finding(store, "c", zk_root, 0)], frozenset({"OFFSET_ABOVE_LOG_END"})
    )
    request = repair_request(repair)
    assert {k: getattr(request, k) for k in fields} == fields
    assert request.scope.topics == {"t": frozenset({0, 1})} and request.target.kind == "repair"


@pytest.mark.parametrize(
    "error, code",
    [
        (UsageError("no Trident Kafka spout state 'c' under /t"), 2),
        (StoreUnavailable("ZooKeeper at z:1 does not answer"), 3),
    ],
)
def test_a_consumer_that_cannot_be_planned_is_declined_with_its_reason(monkeypatch, error, code):
    def fails(*args, **kwargs):
        raise error

    monkeypatch.setattr(audit_repairs, "reset", fails)
    repair = Repair(ConsumerKey(TRIDENT, "c", "/t"), frozenset({("t", 0)}), frozenset({"OFFSET_ABOVE_LOG_END"}))
    outcome, got = plan_repair(Connection(), repair, Safety())
    assert got == code and outcome.error == f"not repaired: {error}" and not outcome.plan.writes


@pytest.mark.parametrize(
    "codes, fail_on, worst, expected",
    [
        ([0, 0], "error", None, 0),
        ([], "never", "error", 0),
        ([7, 0], "never", "error", 7),  # a partition left out is not hidden by --fail-on never
        ([2, 0], "never", None, 7),  # a consumer declined (not planned)
        ([7], "error", "error", 1),  # the audit first: findings
        ([8, 7], "never", None, 8),
        ([4, 8], "never", None, 4),
        ([3, 4], "never", None, 3),
        ([5, 3, 130], "never", None, 130),
    ],
)
def test_exit_code_of_a_repair_run(codes, fail_on, worst, expected):
    from collections import Counter

    tally = Tally(by_severity=Counter({worst: 1}) if worst else Counter())
    assert exit_code(tally, fail_on, codes) == expected
