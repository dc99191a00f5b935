"""Issue 28, item 4: the planner reads behaviour's answer for where a spout starts a partition it leaves out, on plain
data. Given the written consumer's profile, a row says what THIS spout does (outcomes.start_outcome,
first_poll_start, client_start) and cites the Storm source behaviour names; without one, it names what each setting
does, still built from behaviour (tests/unit/test_plan.py pins that wording).

Sources (apache/storm): KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology (storm-kafka-client
v2.8.8; v1.1.1 for the pre-1.1.2 line), KafkaTridentSpoutEmitter.seek (v2.8.8), PartitionManager's constructor and
KafkaUtils.getOffset (storm-kafka v0.9.6: LatestTime unless forceFromStart; v1.2.4: startOffsetTime).
"""

from __future__ import annotations

import re

import pytest

from offctl.core.plans.kafka import plan_kafka, plan_migrate
from offctl.core.plans.targets import Scope, Target
from offctl.core.plans.zookeeper import plan_zookeeper
from offctl.core.records.model import (
    STORM_KAFKA_CLIENT,
    TRIDENT,
    ZOOKEEPER,
    ConsumerKey,
    KafkaCommit,
    PartitionLog,
    ZkNode,
)
from offctl.core.records.parse import commit_metadata_json
from offctl.core.storm.releases import LATEST_TIME, FirstPoll, SpoutProfile, StormKafka, StormKafkaClient
from offctl.faces.sandbox import client_trident_meta

TOPOLOGY_ID = "orders-1-1700000000"
CLUSTER = {"t": {0: PartitionLog(10, 100, "k1:9092"), 1: PartitionLog(10, 100, "k2:9092")}}
DO_SEEK = "(KafkaSpout.doSeek, v2.8.8)"
DO_SEEK_OURS = "(KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology, v2.8.8)"
STRATEGY = re.compile(r"\b(?:UNCOMMITTED_)?(?:EARLIEST|LATEST)\b")


def strategies(text: str) -> set[str]:
    """The first-poll strategies a text names (UNCOMMITTED_LATEST is not LATEST)."""
    return set(STRATEGY.findall(text))


def profile(strategy: FirstPoll, **kw) -> SpoutProfile:
    return SpoutProfile(first_poll=strategy, **kw)


def left_out(plan) -> str:
    return " ".join(r for c in plan.left_out for r in c.reasons)


# --- a group's partition without a commit: the first-poll strategy's edge (KafkaSpout.doSeek) --------------------


@pytest.mark.parametrize(
    "strategy, says",
    [
        (
            FirstPoll.LATEST,
            f"with no commit, the spout starts t/1 at the log end (100), as its firstPollOffsetStrategy "
            f"LATEST does {DO_SEEK}",
        ),
        (
            FirstPoll.UNCOMMITTED_LATEST,
            f"with no commit, the spout starts t/1 at the log end (100), as its "
            f"firstPollOffsetStrategy UNCOMMITTED_LATEST does {DO_SEEK}",
        ),
        (
            FirstPoll.EARLIEST,
            f"with no commit, the spout starts t/1 at the log start (10), as its "
            f"firstPollOffsetStrategy EARLIEST does {DO_SEEK}",
        ),
        (
            FirstPoll.UNCOMMITTED_EARLIEST,
            f"with no commit, the spout starts t/1 at the log start (10), as its "
            f"firstPollOffsetStrategy UNCOMMITTED_EARLIEST (the default) does {DO_SEEK}",
        ),
    ],
)
def test_a_partition_without_a_commit_says_where_this_spout_starts(strategy, says):
    plan = plan_kafka(
        "g",
        [KafkaCommit("g", "t", 0, 50, commit_metadata_json(TOPOLOGY_ID))],
        CLUSTER,
        Target("shift", by=1),
        scope=Scope({"t": None}),
        profile=profile(strategy),
    )
    assert [c.partition for c in plan.left_out] == [1]
    reasons = left_out(plan)
    assert says in reasons, reasons
    assert strategies(reasons) == {strategy.value}, reasons


# --- a commit without Storm metadata the plan leaves as it is: does this spout resume from it? -------------------


@pytest.mark.parametrize(
    "spout, says",
    [
        (
            profile(FirstPoll.LATEST),
            [
                "the spout starts t/0 at the log end (100): LATEST applies to a commit that is not "
                f"the running topology's, and it starts at the log end {DO_SEEK_OURS}"
            ],
        ),
        (profile(FirstPoll.EARLIEST), ["the spout starts t/0 at the log start (10): EARLIEST applies to a commit"]),
        (
            profile(FirstPoll.UNCOMMITTED_LATEST),
            [
                "the spout resumes t/0 at committed (50): UNCOMMITTED_LATEST resumes "
                f"from any commit, whoever wrote it {DO_SEEK_OURS}"
            ],
        ),
        (profile(FirstPoll.UNCOMMITTED_EARLIEST), ["the spout resumes t/0 at committed (50): UNCOMMITTED_EARLIEST"]),
        # the pre-1.1.2 line: EARLIEST/LATEST ignore every commit, UNCOMMITTED_* resume after it (KafkaSpout.doSeek,
        # v1.1.1)
        (
            profile(FirstPoll.LATEST, client=StormKafkaClient.LEGACY, client_release="1.1.1"),
            [
                "the spout starts t/0 at the log end (100): storm-kafka-client 1.0.0-1.0.5 or 1.1.0-1.1.1 with LATEST "
                "ignores every commit and starts at the log end (KafkaSpout.doSeek, v1.1.1)"
            ],
        ),
        (
            profile(FirstPoll.UNCOMMITTED_LATEST, client=StormKafkaClient.LEGACY, client_release="1.1.1"),
            ["the spout resumes t/0 at committed + 1 (51)", "(KafkaSpout.doSeek, v1.1.1)"],
        ),
    ],
)
def test_a_commit_left_as_it_is_says_what_this_spout_does_with_it(spout, says):
    plan = plan_kafka("g", [KafkaCommit("g", "t", 0, 50, None)], CLUSTER, Target("shift", by=1), profile=spout)
    reasons = left_out(plan)
    assert "--topology-id STORM_ID" in reasons and all(s in reasons for s in says), reasons
    assert strategies(reasons) <= {spout.first_poll.value}, reasons  # the legacy line's sentence names none


@pytest.mark.parametrize(
    "strategy, honoured",
    [
        (FirstPoll.LATEST, False),
        (FirstPoll.EARLIEST, False),
        (FirstPoll.UNCOMMITTED_LATEST, True),
        (FirstPoll.UNCOMMITTED_EARLIEST, True),
    ],
)
def test_a_commit_written_without_metadata_says_whether_this_spout_honours_it(strategy, honoured):
    plan = plan_kafka(
        "g", [KafkaCommit("g", "t", 0, 50, None)], CLUSTER, Target("shift", by=1), plain=True, profile=profile(strategy)
    )
    (change,) = plan.changes
    why = change.reasons[-1]
    assert change.after == 51 and why.startswith("no Storm metadata (--no-storm-metadata): ")
    assert ("resumes from any commit" in why) is honoured and ("applies to a commit that is not" in why) is not honoured
    assert strategies(why) == {strategy.value}, why


def test_without_a_profile_the_rows_name_each_strategy():
    """The caller that does not know the spout's settings: the row names every strategy, as before issue 28."""
    plan = plan_kafka("g", [KafkaCommit("g", "t", 0, 50, None)], CLUSTER, Target("shift", by=1))
    assert strategies(left_out(plan)) == {s.value for s in FirstPoll}


# --- ZooKeeper: a partition without a record or a state -----------------------------------------------------------

SPOUT = ConsumerKey(ZOOKEEPER, "orders", "/spouts")


def spout_node(partition: int, offset: int) -> ZkNode:
    data = (
        '{"topology":{"id":"%s","name":"orders"},"offset":%d,"partition":%d,"broker":{"host":"k1","port":9092},'
        '"topic":"t"}' % (TOPOLOGY_ID, offset, partition)
    ).encode()
    return ZkNode("/spouts", "orders", f"/spouts/orders/partition_{partition}", partition, None, data, 3, 1_000)


@pytest.mark.parametrize(
    "spout, says",
    [
        # v0.9.6 KafkaUtils.getOffset: LatestTime unless forceFromStart, whatever startOffsetTime says
        (
            SpoutProfile(StormKafka.V0_9_3),
            "with none, the spout (storm-kafka 0.9.3-0.9.7) starts t/1 from the log end "
            "(LatestTime: forceFromStart is false) (100) (PartitionManager, v0.9.6)",
        ),
        (
            SpoutProfile(StormKafka.V0_9_3, ignore_zk_offsets=True),
            "with none, the spout (storm-kafka 0.9.3-0.9.7) starts t/1 from startOffsetTime, the log start (10) "
            "(PartitionManager, v0.9.6)",
        ),
        # v1.2.4: startOffsetTime
        (
            SpoutProfile(),
            "with none, the spout (storm-kafka 1.1.0-1.2.4) starts t/1 from startOffsetTime, the log start "
            "(10) (PartitionManager, v1.2.4)",
        ),
        (
            SpoutProfile(start_offset_time=LATEST_TIME),
            "starts t/1 from startOffsetTime, the log end (100) (PartitionManager, v1.2.4)",
        ),
    ],
)
def test_a_storm_kafka_partition_without_a_record_says_where_this_release_starts(spout, says):
    plan = plan_zookeeper(SPOUT, [spout_node(0, 50)], CLUSTER, Target("shift", by=1), profile=spout)
    reasons = left_out(plan)
    assert [c.partition for c in plan.left_out] == [1] and says in reasons, reasons
    assert "by default" not in reasons and "0.9.x" not in reasons


@pytest.mark.parametrize(
    "strategy, says",
    [
        (
            FirstPoll.LATEST,
            "KafkaTridentSpoutEmitter.seek starts t/1 at the log end (100), as its firstPollOffsetStrategy "
            "LATEST does (v2.8.8)",
        ),
        (
            FirstPoll.UNCOMMITTED_LATEST,
            "starts t/1 at the log end (100), as its firstPollOffsetStrategy UNCOMMITTED_LATEST does",
        ),
        (FirstPoll.EARLIEST, "starts t/1 at the log start (10), as its firstPollOffsetStrategy EARLIEST does"),
    ],
)
def test_a_client_trident_partition_without_state_says_where_this_spout_starts(strategy, says):
    key = ConsumerKey(TRIDENT, "cl", "/tx")
    state = ZkNode(
        "/tx",
        "cl",
        "/tx/cl/user/t@0/6",
        0,
        "t",
        client_trident_meta(40, 60, TOPOLOGY_ID),
        0,
        0,
        trident=STORM_KAFKA_CLIENT,
        txid=6,
        txids=1,
    )
    plan = plan_zookeeper(key, [state], CLUSTER, Target("latest"), profile=profile(strategy))
    reasons = left_out(plan)
    assert says in reasons and strategies(reasons) == {strategy.value}, reasons


# --- migrate: a partition without a ZooKeeper record -------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy, says",
    [
        (FirstPoll.LATEST, "with no commit, the spout starts t/1 at the log end (100)"),
        (FirstPoll.EARLIEST, "with no commit, the spout starts t/1 at the log start (10)"),
    ],
)
def test_migrate_says_where_the_new_spout_starts_a_partition_without_a_record(strategy, says):
    plan = plan_migrate(
        SPOUT,
        [spout_node(0, 50)],
        "g",
        [],
        CLUSTER,
        TOPOLOGY_ID,
        scope=Scope({"t": frozenset({0, 1})}),
        profile=profile(strategy),
    )
    (row,) = [c for c in plan.changes if c.partition == 1]
    assert row.reasons[0] == "no ZooKeeper record for this partition" and says in row.reasons[1], row.reasons
    unknown = plan_migrate(
        SPOUT, [spout_node(0, 50)], "g", [], CLUSTER, TOPOLOGY_ID, scope=Scope({"t": frozenset({0, 1})})
    )
    assert [c.reasons for c in unknown.changes if c.partition == 1] == [("no ZooKeeper record for this partition",)]
