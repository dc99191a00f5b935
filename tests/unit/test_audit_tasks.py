"""What an audit task hands back (offctl.faces.audit.job) on plain data: inspect's figures per partition and consumer
(time lag, retention headroom, commit expiry), the fleet's extremes in the tally, and the history's estimate standing
in only where the message gave no time lag. tests/e2e/test_audit_e2e.py runs the audit against the real ZooKeeper and
broker and compares these figures with inspect's."""

from __future__ import annotations

from dataclasses import replace

from offctl.core.records.model import (
    KAFKA,
    ZOOKEEPER,
    ConsumerKey,
    ConsumerSummary,
    Headroom,
    OffsetRecord,
    PartitionRow,
    Report,
    TimeLag,
)
from offctl.core.results.audit import TASK_KEYS
from offctl.core.time.expiry import Expiry
from offctl.core.time.history import Observation
from offctl.faces.audit.tasks import chunk_outputs, with_history, without_history
from offctl.render.report import report_document

NOW = 1_763_776_800_000
SPOUT, GROUP = ConsumerKey(ZOOKEEPER, "orders", "/spouts"), ConsumerKey(KAFKA, "orders-client")


def row(key: ConsumerKey, partition: int, committed: int, lag: int, log_end: int = 20) -> PartitionRow:
    return PartitionRow(OffsetRecord(key, partition, "t", committed), 0, log_end, lag, None, "t")


def report() -> Report:
    rows = (row(SPOUT, 0, 12, 8), row(SPOUT, 1, 20, 0), row(GROUP, 2, 15, 5), row(GROUP, 3, 10, 10))
    consumers = tuple(ConsumerSummary(k, ("t",), 2, 0, 0, None, ()) for k in (SPOUT, GROUP))
    return Report(
        NOW,
        rows,
        (),
        consumers,
        time_lags={
            ("t", 0, 12): TimeLag(3600.0, "message"),
            ("t", 2, 15): TimeLag(60.0, "message"),
            ("t", 3, 10): TimeLag(None, "unread", "not read"),
        },
        headrooms={("t", 0, 12): Headroom(1800.0, "broker", "", 12), ("t", 2, 15): Headroom(-5.0, "broker", "", 15)},
        commit_expiry={
            rows[2].partition_key: Expiry(7200.0, "message"),
            rows[3].partition_key: Expiry(900.0, "message"),
        },
    )


def test_a_task_carries_inspects_figures_per_partition_and_consumer():
    r = report()
    tally, rows, _, consumers = chunk_outputs(r)
    doc = report_document(r)
    assert [{k: v for k, v in p.items() if k not in (*TASK_KEYS, "findings")} for p in rows] == doc["partitions"]
    assert consumers == doc["consumers"]
    assert [(p["time_lag_s"], p["time_lag_source"]) for p in rows] == [
        (3600.0, "message"),
        (0.0, "caught-up"),
        (60.0, "message"),
        (None, "unread"),
    ]
    assert [p["retention_headroom_s"] for p in rows] == [1800.0, None, -5.0, None]
    assert [p["commit_expiry_s"] for p in rows] == [None, None, 7200.0, 900.0]
    assert [(c["max_time_lag_s"], c["min_retention_headroom_s"]) for c in consumers] == [(3600.0, 1800.0), (60.0, -5.0)]
    s = tally.summary()
    assert (s["max_time_lag_s"], s["min_retention_headroom_s"], s["min_commit_expiry_s"]) == (3600.0, -5.0, 900.0)
    assert tally.min_retention_headroom[1] == ("kafka", "orders-client", None, "t", 2)


def test_the_tally_keeps_the_fleets_extremes_over_chunks():
    a, b = chunk_outputs(report())[0], chunk_outputs(replace(report(), time_lags={}, headrooms={}, commit_expiry={}))[0]
    for total in (a + b, b + a):
        assert (total.max_time_lag[0], total.min_retention_headroom[0], total.min_commit_expiry[0]) == (
            3600.0,
            -5.0,
            900.0,
        )
    empty = b.summary()
    assert (empty["max_time_lag_s"], empty["min_retention_headroom_s"], empty["min_commit_expiry_s"]) == (
        0.0,
        None,
        None,
    )


def test_the_history_estimate_stands_in_only_where_the_message_gave_no_figure():
    _, rows, _, _ = chunk_outputs(report())
    earlier = [Observation(NOW - 120_000, 10, 0, 10, None), Observation(NOW - 60_000, 10, 0, 15, None)]
    measured, unread = rows[2], rows[3]
    assert with_history(measured, [earlier[0]], None, 10)["time_lag_s"] == 60.0  # the message's, kept
    estimated = with_history(unread, earlier, None, 10)
    assert estimated["time_lag_source"] == "estimate" and estimated["time_lag_s"] is not None
    assert without_history(unread)["time_lag_s"] is None and without_history(unread)["time_lag_source"] == "unread"
    # where the lag does not count from the stored offset, the estimate (which follows it) is not this row's
    elsewhere = {**unread, "resumes_stored": False}
    assert with_history(elsewhere, earlier, None, 10)["time_lag_source"] == "unread"
