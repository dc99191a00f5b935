"""What retention already took (issue 46, part 4): a partition's `lost_to_retention`, the log start minus the offset the
spout fetches first from its stored record, for every library (storm-kafka's spout and Trident emitter,
storm-kafka-client's current and legacy lines and its Trident emitter), with its edges; the finding's words; the
consumer's and the topic's totals; the metrics, the watch cell, peek's line and storm-kafka-monitor's key."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from offctl.core.records.model import Thresholds
from offctl.core.rules.partitions import lost_to_retention
from offctl.core.storm.releases import FirstPoll, SpoutProfile, StormKafkaClient
from offctl.core.time.retention import lost_by_consumer, lost_by_topic
from offctl.render.report import report_document, write_report
from tests.unit.test_analyze import LEGACY, T, cluster, commit, meta, rec, run
from tests.unit.test_trident import STORM_ID, client_meta, node
from tests.unit.test_trident import run as run_trident


@pytest.mark.parametrize(
    "position, start, end, lost",
    [
        (90, 100, 200, 10),
        (99, 100, 200, 1),
        (100, 100, 200, 0),  # at the log start: nothing was deleted that the spout had still to read
        (150, 100, 200, 0),
        (250, 100, 200, 0),  # above the log end: nothing below it was deleted either
        (0, 0, 0, 0),  # an empty log from 0
        (90, None, None, None),  # no log range read
        (90, 100, None, None),  # half a range: not read
        (None, 100, 200, None),  # no position
    ],
)
def test_the_count_is_the_log_start_minus_the_position_where_that_is_below_it(position, start, end, lost):
    assert lost_to_retention(position, start, end) == lost


def _profile(release: str, strategy: FirstPoll = FirstPoll.UNCOMMITTED_EARLIEST) -> SpoutProfile:
    return SpoutProfile(
        client=StormKafkaClient.of_version(release),
        first_poll=strategy,
        client_release=release,
        client_major=StormKafkaClient.major_of(release),
    )


@pytest.mark.parametrize(
    "zk, commits, cl, spout, lost, says",
    [
        pytest.param(
            [rec(0, 90)],
            [],
            cluster(1),
            SpoutProfile(),
            10,
            "orders/0 resumes at 90 < log start 100: 10 messages (offsets 90 to 99) were deleted before the spout "
            "read them",
            id="PartitionManager.java@v1.2.4: the stored offset",
        ),
        pytest.param(
            [rec(0, 99)],
            [],
            cluster(1),
            SpoutProfile(),
            1,
            "1 message (offset 99) was deleted before the spout read it",
            id="storm-kafka: one message",
        ),
        pytest.param([rec(0, 100)], [], cluster(1), SpoutProfile(), 0, None, id="storm-kafka: at the log start"),
        pytest.param([rec(0, 250)], [], cluster(1), SpoutProfile(), 0, None, id="storm-kafka: above the log end"),
        pytest.param([rec(0, 90)], [], None, SpoutProfile(), None, None, id="storm-kafka: no log range read"),
        pytest.param(
            [rec(0, 0)],
            [],
            cluster(1),
            SpoutProfile(),
            None,
            None,
            id="PartitionManager.java@v1.2.4: a stored 0 is replaced, not resumed from",
        ),
        pytest.param(
            [],
            [commit(0, 90)],
            cluster(1),
            _profile("2.8.8"),
            10,
            "orders/0 resumes at 90 < log start 100: 10 messages (offsets 90 to 99) were deleted",
            id="KafkaSpout.java@v2.8.8 doSeek: the commit",
        ),
        pytest.param(
            [],
            [commit(0, 90)],
            cluster(1),
            _profile("1.2.4"),
            10,
            "10 messages (offsets 90 to 99)",
            id="KafkaSpout.java@v1.2.4 doSeek: the commit",
        ),
        pytest.param(
            [],
            [commit(0, 90, LEGACY)],
            cluster(1),
            _profile("1.1.1"),
            9,
            "orders/0 resumes at 91 < log start 100: 9 messages (offsets 91 to 99) were deleted",
            id="KafkaSpout.java@v1.1.1 doSeek: committed + 1",
        ),
        pytest.param(
            [],
            [commit(0, 90, LEGACY)],
            cluster(1),
            _profile("1.0.5"),
            9,
            "9 messages (offsets 91 to 99)",
            id="KafkaSpout.java@v1.0.5 doSeek: committed + 1",
        ),
        pytest.param(
            [],
            [commit(0, 99, LEGACY)],
            cluster(1),
            _profile("1.1.1"),
            0,
            None,
            id="storm-kafka-client 1.1.1: committed + 1 at the log start",
        ),
        pytest.param(
            [], [commit(0, 250)], cluster(1), _profile("2.8.8"), 0, None, id="storm-kafka-client: above the log end"
        ),
        pytest.param([], [commit(0, 90)], None, _profile("2.8.8"), None, None, id="storm-kafka-client: no log range"),
        pytest.param(
            [],
            [commit(0, 90, meta("other-1-1"))],
            cluster(1),
            _profile("2.8.8", FirstPoll.EARLIEST),
            None,
            None,
            id="KafkaSpout.java@v2.8.8 doSeek: EARLIEST ignores another topology's commit",
        ),
        pytest.param(
            [],
            [commit(0, 90, "null")],
            cluster(1),
            _profile("2.8.8"),
            10,
            None,
            id="CRASHING_COMMIT: counted from the commit a repaired spout resumes from",
        ),
    ],
)
def test_each_library_counts_from_where_its_stored_record_sends_it(zk, commits, cl, spout, lost, says):
    report = run(zk, commits, cl=cl, th=Thresholds(spout=spout))
    (row,) = report.rows
    assert row.lost_to_retention == lost
    below = [f.message for f in report.findings if f.code == "OFFSET_BELOW_LOG_START"]
    assert bool(below) == (says is not None), below
    if says:
        assert says in below[0]
    doc = report_document(report)
    assert doc["partitions"][0]["lost_to_retention"] == lost
    assert doc["consumers"][0]["lost_to_retention"] == lost
    assert doc["summary"]["lost_to_retention"] == ({T: lost} if lost else {})


@pytest.mark.parametrize(
    "data, client, release, lost",
    [
        # TridentKafkaEmitter.java@v1.2.4: the state's nextOffset (4), the log from 10
        pytest.param(lambda: node_sk(3, 4), False, "2.8.8", 6, id="TridentKafkaEmitter.java@v1.2.4 nextOffset"),
        pytest.param(lambda: node_sk(9, 10), False, "2.8.8", 0, id="storm-kafka Trident: at the log start"),
        pytest.param(lambda: node_sk(150, 150), False, "2.8.8", 0, id="storm-kafka Trident: above the log end"),
        # KafkaTridentSpoutEmitter.java@v2.8.8: the batch's lastOffset + 1 (5)
        pytest.param(
            lambda: node(client_meta("2.8.8", 3, 4, STORM_ID), client=True, folder="orders"),
            True,
            "2.8.8",
            5,
            id="KafkaTridentSpoutEmitter.java@v2.8.8 lastOffset + 1",
        ),
        pytest.param(
            lambda: node(client_meta("1.2.4", 3, 4, STORM_ID), client=True, folder="orders"),
            True,
            "1.2.4",
            5,
            id="KafkaTridentSpoutEmitter.java@v1.2.4 lastOffset + 1",
        ),
    ],
)
def test_a_trident_state_counts_from_the_offset_it_resumes_from(data, client, release, lost):
    rows, found = run_trident(
        [data()], SpoutProfile(client_release=release, client_major=int(release[0])) if client else SpoutProfile()
    )
    assert rows[0].lost_to_retention == lost
    below = found.get(("OFFSET_BELOW_LOG_START", 0))
    assert (below is not None) == bool(lost)
    if lost:
        first = rows[0].record.committed
        assert f"{lost} messages (offsets {first} to 9) were deleted before the spout read them" in below


def node_sk(offset: int, next_offset: int):
    from offctl.faces.sandbox import trident_meta

    return node(trident_meta("orders", 0, offset, next_offset, STORM_ID, "k1:9092"))


def test_a_consumer_and_a_topic_sum_their_partitions_counts():
    """Each consumer's count sums its partitions' that are known; the summary's, per topic, over every consumer,
    only the topics where retention took something."""
    report = run(
        [rec(0, 90), rec(1, 100), rec(0, 50, topic="clicks", spout="c"), rec(1, 95, topic="clicks", spout="c")],
        [commit(0, 97), commit(1, 120)],
        cl={**cluster(2), **cluster(2, topic="clicks")},
    )
    lost = {(r.record.key.consumer, r.topic, r.record.partition): r.lost_to_retention for r in report.rows}
    assert lost == {
        ("s", T, 0): 10,
        ("s", T, 1): 0,
        ("c", "clicks", 0): 50,
        ("c", "clicks", 1): 5,
        ("g", T, 0): 3,
        ("g", T, 1): 0,
    }
    assert {k.consumer: n for k, n in lost_by_consumer(report.rows).items()} == {"s": 10, "c": 55, "g": 3}
    assert lost_by_topic(report.rows) == {"clicks": 55, T: 13}
    doc = report_document(report)
    assert {c["consumer"]: c["lost_to_retention"] for c in doc["consumers"]} == {"s": 10, "c": 55, "g": 3}
    assert doc["summary"]["lost_to_retention"] == {"clicks": 55, T: 13}
    # a consumer none of whose partitions has a count: null, and no topic of it in the summary
    unknown = report_document(run([rec(0, 90)], cl=None))
    assert unknown["consumers"][0]["lost_to_retention"] is None and unknown["summary"]["lost_to_retention"] == {}


def test_the_tables_say_it_in_the_findings_words_beside_the_codes_and_in_the_total():
    from offctl.render.watch import watch_table

    report = run([rec(0, 90), rec(1, 150)], cl=cluster())
    out = io.StringIO()
    write_report(report, "table", out, Console(file=out, width=200, markup=False, highlight=False))
    text = out.getvalue()
    assert "10 messages (offsets 90 to 99) were deleted before the spout read them" in text
    assert "total lag 50, lost to retention 10; findings" in text
    table = watch_table(report, {}, {}, 1)
    findings = {c.header: [str(x) for x in c._cells] for c in table.columns}["Findings"]
    assert findings == ["OFFSET_BELOW_LOG_START (lost 10)", ""]
    healthy = io.StringIO()
    write_report(run([rec(0, 150)], cl=cluster(1)), "table", healthy, Console(file=healthy, width=200))
    assert "lost to retention" not in healthy.getvalue()


def _metric_samples(report, partition_metrics: bool) -> dict[str, dict[tuple, float]]:
    from offctl.render.metrics import Cycle, Health, families

    out: dict[str, dict[tuple, float]] = {}
    for family in families(Cycle(report, {}), Health(1, {}, 0.0, 0.1, None), partition_metrics):
        for s in family.samples:
            out.setdefault(s.name, {})[(s.labels.get("consumer"), s.labels.get("partition"))] = s.value
    return out


def test_the_metrics_have_a_gauge_per_partition_and_the_total_per_consumer():
    report = run([rec(0, 90), rec(1, 150)], [commit(0, 50)], cl=cluster(2))
    got = _metric_samples(report, True)
    assert got["offctl_partition_lost_to_retention"] == {("s", "0"): 10.0, ("s", "1"): 0.0, ("g", "0"): 50.0}
    assert got["offctl_consumer_lost_to_retention_total"] == {("s", None): 10.0, ("g", None): 50.0}
    # without partition metrics, the consumer's total stays; no count known, no sample
    off = _metric_samples(report, False)
    assert "offctl_partition_lost_to_retention" not in off
    assert off["offctl_consumer_lost_to_retention_total"] == {("s", None): 10.0, ("g", None): 50.0}
    unknown = _metric_samples(run([rec(0, 90)], cl=None), True)
    assert not unknown.get("offctl_partition_lost_to_retention") and not unknown.get(
        "offctl_consumer_lost_to_retention_total"
    )


def test_peek_and_storm_kafka_monitor_carry_it():
    from offctl.core.records.model import ConsumerKey
    from offctl.core.records.peeked import Peeked
    from offctl.core.results.peek import PeekResult
    from offctl.core.rules.profiles import Profiles
    from offctl.render.lagdoc import Asked, document
    from offctl.render.peek import _peek_head, peek_document

    cl = cluster(2)
    report = run([rec(0, 90), rec(1, 150)], cl=cl)
    result = PeekResult(report, tuple(Peeked(row, row.record.committed, None) for row in report.rows), 1, 0)
    assert [p["lost_to_retention"] for p in peek_document(result)["partitions"]] == [10, 0]
    heads = [str(_peek_head(p)) for p in result.peeked]
    assert "lag -  lost 10  [OFFSET_BELOW_LOG_START]" in heads[0] and "lost" not in heads[1]
    asked = Asked(ConsumerKey("zookeeper", "s", "/r"), True, {T: [0, 1]})
    doc, _ = document(report, asked, Profiles(), cl)
    assert [doc[T][p]["lostToRetention"] for p in ("0", "1")] == [10, 0]
    assert json.loads(json.dumps(doc)) == doc


def test_the_audit_tally_totals_it_per_topic_over_chunks():
    from offctl.faces.audit.tasks import chunk_outputs
    from offctl.render.audit import lost_text

    a = chunk_outputs(run([rec(0, 90)], cl=cluster(1)))[0]
    b = chunk_outputs(
        run([rec(0, 50, topic="clicks", spout="c")], [commit(0, 98)], cl={**cluster(1), **cluster(1, topic="clicks")})
    )[0]
    empty = chunk_outputs(run([rec(0, 150)], cl=cluster(1)))[0]
    for total in (a + b + empty, empty + b + a):
        assert total.summary()["lost_to_retention"] == {"clicks": 50, T: 12}
    assert empty.summary()["lost_to_retention"] == {}
    assert lost_text({"clicks": 50, T: 12}) == (
        "lost to retention (deleted before the spouts read them): 62; by topic: clicks 50, orders 12"
    )
    many = lost_text({f"t{i:02d}": i + 1 for i in range(12)})
    assert many.endswith("t11 12, t10 11, t09 10, t08 9, t07 8, t06 7, t05 6, t04 5, t03 4, t02 3 (+2 more topics)")


def test_the_row_is_null_where_the_spout_does_not_resume_from_its_record():
    """A record the spout does not resume from (rules 6, 8, 14): retention took nothing it would have read; the row
    says null, and no finding counts anything."""
    profile = SpoutProfile(ignore_zk_offsets=True)
    report = run([rec(0, 90, topology_id="old-1-1")], cl=cluster(1), th=Thresholds(spout=profile))
    (row,) = report.rows
    assert not row.resumes_stored and row.lost_to_retention is None
    assert not [f for f in report.findings if f.code == "OFFSET_BELOW_LOG_START"]
