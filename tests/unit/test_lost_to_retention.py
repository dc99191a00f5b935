"""What retention already took (issue 46, part 4): a partition's `lost_to_retention`, the log start minus the offset the
spout fetches first from its stored record, for every library (storm-kafka's spout and Trident emitter,
storm-kafka-client's current and legacy lines and its Trident emitter), with its edges; the finding's words; the
consumer's and the topic's totals."""

from __future__ import annotations

import pytest

from offctl.core.records.model import Thresholds
from offctl.core.rules.partitions import lost_to_retention
from offctl.core.storm.releases import FirstPoll, SpoutProfile, StormKafkaClient
from offctl.core.time.retention import lost_by_consumer, lost_by_topic
from offctl.render.report import report_document
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


def test_the_row_is_null_where_the_spout_does_not_resume_from_its_record():
    """A record the spout does not resume from (rules 6, 8, 14): retention took nothing it would have read; the row
    says null, and no finding counts anything."""
    profile = SpoutProfile(ignore_zk_offsets=True)
    report = run([rec(0, 90, topology_id="old-1-1")], cl=cluster(1), th=Thresholds(spout=profile))
    (row,) = report.rows
    assert not row.resumes_stored and row.lost_to_retention is None
    assert not [f for f in report.findings if f.code == "OFFSET_BELOW_LOG_START"]
