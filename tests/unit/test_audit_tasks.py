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


def test_the_snapshots_history_gives_each_partition_and_consumer_its_catch_up():
    """with_history estimates each row's catch-up over the window; the driver joins a consumer's from its rows
    (consumer_catch_up, history.joined, with_catch_up: offctl/faces/audit/job.py _consumers_with_catch_up)."""
    import functools

    from offctl.core.time.history import NO_CATCH_UP, joined
    from offctl.faces.audit.tasks import consumer_catch_up, with_catch_up

    _, rows, _, consumers = chunk_outputs(report())
    # without history: caught up at lag 0, no history above it
    assert [(r["catch_up_s"], r["catch_up"]) for r in rows] == [
        (None, "no-history"),
        (0.0, "caught-up"),
        (None, "no-history"),
        (None, "no-history"),
    ]
    assert [(c["catch_up_s"], c["catch_up"]) for c in consumers] == [(None, "no-history"), (None, "no-history")]
    # the group's partitions two minutes ago: partition 2 at 3 of log end 14 (it gained 12 while the log grew 6: lag 5
    # left at 0.05/s), partition 3 at 10 of 14 (stood still while the log grew 6: not catching up)
    before = {2: Observation(NOW - 120_000, 3, 0, 14), 3: Observation(NOW - 120_000, 10, 0, 14)}
    group = [with_history(r, [before[r["partition"]]], None, 10) for r in rows[2:]]
    assert [(r["catch_up_s"], r["catch_up"], r["commit_rate"], r["log_rate"]) for r in group] == [
        (100.0, "catching-up", 0.1, 0.05),
        (None, "not-catching-up", 0.0, 0.05),
    ]
    # a window no longer than the group's commit period tells nothing
    assert with_history(rows[2], [before[2]], None, 10, 0, 120_000)["catch_up"] == "short-window"
    # the consumer: not catching up, since one of its partitions is not; its rates summed
    key, _ = consumer_catch_up(group[0])
    up = functools.reduce(joined, (consumer_catch_up(r)[1] for r in group), NO_CATCH_UP)
    assert key == ("kafka", "orders-client", None)
    joined_up = with_catch_up(consumers[1], up)
    assert (joined_up["catch_up_s"], joined_up["catch_up"], joined_up["commit_rate"], joined_up["log_rate"]) == (
        None,
        "not-catching-up",
        0.1,
        0.1,
    )
    assert with_catch_up(consumers[1], None)["catch_up"] is None  # no partition row: no figure
