"""What a plan costs (offctl.core.plans.cost), on plain data: every case from a plan, the log offsets and a read, as a
table. Against Apache Kafka: tests/e2e/test_cost_e2e.py (records deleted below the log start, a compacted topic's gaps
counted "up to", timestamps looked up) and tests/e2e/test_reset_e2e.py. Reads that run out of time and messages without
a timestamp (a format Kafka 4 no longer writes) are made here only."""

from __future__ import annotations

import pytest

from offctl.core.plans.cost import (
    NOT_CONSULTED,
    Spout,
    cost_lines,
    cost_positions,
    describe,
    plan_cost,
    undo_cost,
    written,
)
from offctl.core.plans.plan import CREATE, Change, Plan
from offctl.core.plans.plancost import EMPTY, FULL, NONE, PARTIAL, REPLAY, SKIP, UNKNOWN, UNKNOWN_SPAN, ChangeCost
from offctl.core.records.model import (
    KAFKA,
    TRIDENT,
    ZOOKEEPER,
    ConsumerKey,
    LogMessage,
    MessageRead,
    PartitionLog,
    iso_ms,
)
from offctl.core.storm.releases import LATEST_TIME, SpoutProfile, StormKafka
from tests.conftest import storm_record

T0 = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z


def msg(offset: int, ts: int | None = None, partition: int = 0) -> LogMessage:
    """The message at `offset`, written `offset` seconds after T0 unless told; ts -1: none (message format v0)."""
    stamp = T0 + offset * 1000 if ts is None else None if ts == -1 else ts
    return LogMessage("t", partition, offset, stamp, "CreateTime" if stamp is not None else None, None, b"v")


def read(
    *found: tuple[int, LogMessage], at_end: tuple[int, ...] = (), unread: dict[int, str] | None = None
) -> MessageRead:
    """A read of partition 0 of t: (offset asked, first message at or after it)."""
    return MessageRead(
        {("t", 0, o): (m,) for o, m in found},
        frozenset(("t", 0, o) for o in at_end),
        {("t", 0, o): why for o, why in (unread or {}).items()},
    )


def every(*offsets: int) -> MessageRead:
    """A read that found the message at each offset asked for."""
    return read(*((o, msg(o)) for o in offsets))


def zk(
    before: int | None,
    after: int | None,
    *,
    delete: bool = False,
    before_data: bytes | None = None,
    after_data: bytes | None = None,
) -> Change:
    return Change(
        "t",
        0,
        before,
        after,
        path="/r/s/partition_0",
        version=CREATE if before is None else 1,
        before_data=before_data
        if before_data is not None
        else (storm_record("t", 0, before) if before is not None else None),
        after_data=None if delete else after_data if after_data is not None else storm_record("t", 0, after),
        delete=delete,
    )


def kafka(
    before: int | None, after: int | None, *, before_meta: str | None = "m", after_meta: str | None = "m"
) -> Change:
    return Change(
        "t",
        0,
        before,
        after,
        before_metadata=before_meta if before is not None else None,
        after_metadata=after_meta,
        had_commit=before is not None,
    )


def cost_of(store: str, change: Change, log: PartitionLog | None, found: MessageRead) -> ChangeCost:
    plan = Plan("reset", ConsumerKey(store, "c", "/r" if store != KAFKA else None), "x", (change,), 0)
    cluster = None if log is None else {"t": {0: log}}
    return plan_cost(plan, cluster, found).changes[0]


LOG = PartitionLog(0, 10)
START = "counted from startOffsetTime, the log start (storm-kafka's default; PartitionManager, v1.2.4)"


@pytest.mark.parametrize(
    "store, change, log, found, expected, words",
    [
        # 1. back: [after, before) processed again
        (
            ZOOKEEPER,
            zk(8, 3),
            LOG,
            every(3, 7),
            ChangeCost(REPLAY, 5, first_ms=T0 + 3000, last_ms=T0 + 7000, span=FULL),
            "replays 5 messages written 2025-11-22T02:00:03.000Z to 02:00:07.000Z",
        ),
        # 2. forward by one: the one message at the old offset is never processed
        (
            ZOOKEEPER,
            zk(4, 5),
            LOG,
            every(4),
            ChangeCost(SKIP, 1, first_ms=T0 + 4000, last_ms=T0 + 4000, span=FULL),
            "skips 1 message written at 2025-11-22T02:00:04.000Z",
        ),
        # 3. below the log start nothing is left to replay
        (
            KAFKA,
            kafka(20, 2),
            PartitionLog(10, 30),
            every(10, 19),
            ChangeCost(
                REPLAY,
                10,
                first_ms=T0 + 10_000,
                last_ms=T0 + 19_000,
                span=FULL,
                notes=("offsets 2-9 below the log start 10: deleted, not counted",),
            ),
            "replays 10 messages written 2025-11-22T02:00:10.000Z to 02:00:19.000Z (offsets 2-9 below the log start 10",
        ),
        # 4. an out-of-range spout moved to the log start skips nothing: the messages below were gone already
        (
            ZOOKEEPER,
            zk(3, 10),
            PartitionLog(10, 30),
            MessageRead(),
            ChangeCost(SKIP, 0, notes=("offsets 3-9 below the log start 10: deleted, not counted",)),
            "skips no message",
        ),
        # 5. past the log end nothing is written yet (a restore never clamps)
        (
            KAFKA,
            kafka(5, 14),
            LOG,
            every(5, 9),
            ChangeCost(
                SKIP,
                5,
                first_ms=T0 + 5000,
                last_ms=T0 + 9000,
                span=FULL,
                notes=("offsets 10-13 at or past the log end 10: no message there, not counted",),
            ),
            "skips 5 messages",
        ),
        # 5b. from past the log end (a recreated topic): a replay, of messages the spout may never have processed
        (
            ZOOKEEPER,
            zk(15, 3),
            LOG,
            every(3, 9),
            ChangeCost(
                REPLAY,
                7,
                first_ms=T0 + 3000,
                last_ms=T0 + 9000,
                span=FULL,
                past_end=True,
                notes=(
                    "offsets 10-14 at or past the log end 10: no message there, not counted",
                    "the spout was at 15, past the log end: a recreated or truncated topic, whose messages it may "
                    "never have processed",
                ),
            ),
            "replays 7 messages",
        ),
        # 6. only the metadata changes
        (
            KAFKA,
            kafka(5, 5, before_meta=None),
            LOG,
            MessageRead(),
            ChangeCost(NONE, 0),
            "replays and skips nothing: the spout resumes where it did",
        ),
        # 7. a new record: without one the spout starts at startOffsetTime, the log start by default
        (
            ZOOKEEPER,
            zk(None, 6),
            PartitionLog(2, 10),
            every(2, 5),
            ChangeCost(
                SKIP, 4, first_ms=T0 + 2000, last_ms=T0 + 5000, span=FULL, notes=(f"no record before: {START}",)
            ),
            "skips 4 messages written 2025-11-22T02:00:02.000Z to 02:00:05.000Z (no record before: counted from",
        ),
        # 8. a new commit: without one the group starts at UNCOMMITTED_EARLIEST's log start
        (
            KAFKA,
            kafka(None, 3),
            LOG,
            every(0, 2),
            ChangeCost(
                SKIP,
                3,
                first_ms=T0,
                last_ms=T0 + 2000,
                span=FULL,
                notes=(
                    "no commit before: counted from the log start (UNCOMMITTED_EARLIEST, storm-kafka-client's "
                    "default; KafkaSpout.doSeek, v2.8.8)",
                ),
            ),
            "skips 3 messages",
        ),
        # 9. a stored 0 is replaced by startOffsetTime (PartitionManager, `_committedTo <= 0`)
        (
            ZOOKEEPER,
            zk(0, 5),
            PartitionLog(3, 10),
            every(3, 4),
            ChangeCost(
                SKIP,
                2,
                first_ms=T0 + 3000,
                last_ms=T0 + 4000,
                span=FULL,
                notes=(f"stored offset 0 <= 0, which storm-kafka ignores: {START}",),
            ),
            "skips 2 messages",
        ),
        # 10. a record the spout cannot use counts as none, before and after its offset is rewritten
        (
            ZOOKEEPER,
            zk(2, 7, before_data=b'{"offset":2}', after_data=b'{"offset":7}'),
            LOG,
            MessageRead(),
            ChangeCost(NONE, 0, notes=(f"the spout cannot use the record: {START}",)),
            "replays and skips nothing",
        ),
        # 11. a deleted record: the spout starts at startOffsetTime
        (
            ZOOKEEPER,
            zk(5, None, delete=True),
            LOG,
            every(0, 4),
            ChangeCost(
                REPLAY, 5, first_ms=T0, last_ms=T0 + 4000, span=FULL, notes=(f"the record is deleted: {START}",)
            ),
            "replays 5 messages",
        ),
        # 12. compaction removed the first offsets of the range: the count is an upper bound
        (
            ZOOKEEPER,
            zk(8, 3),
            LOG,
            read((3, msg(5)), (7, msg(7))),
            ChangeCost(REPLAY, 5, up_to=True, first_ms=T0 + 5000, last_ms=T0 + 7000, span=FULL),
            "replays up to 5 messages written",
        ),
        # 13. the last offset holds no message: the last one is earlier, unread
        (
            ZOOKEEPER,
            zk(8, 3),
            LOG,
            read((3, msg(3)), (7, msg(9))),
            ChangeCost(
                REPLAY,
                5,
                up_to=True,
                first_ms=T0 + 3000,
                span=PARTIAL,
                why="offset 7 holds no message, so the last one's time is not known",
            ),
            "replays up to 5 messages, the first written at 2025-11-22T02:00:03.000Z; time span partial (offset 7 "
            "holds",
        ),
        # 14. markers to the log end
        (
            ZOOKEEPER,
            zk(10, 3),
            LOG,
            read((3, msg(3)), at_end=(9,)),
            ChangeCost(
                REPLAY,
                7,
                up_to=True,
                first_ms=T0 + 3000,
                span=PARTIAL,
                why="offset 9 holds no message, so the last one's time is not known",
            ),
            "time span partial",
        ),
        # 15. no message at all in the range
        (
            ZOOKEEPER,
            zk(8, 3),
            LOG,
            read((3, msg(8))),
            ChangeCost(
                REPLAY, 0, notes=("offsets 3-7 hold no message (removed by compaction, or transaction markers)",)
            ),
            "replays no message (offsets 3-7 hold no message",
        ),
        # 16. not read in time: counts only
        (
            ZOOKEEPER,
            zk(8, 3),
            LOG,
            read(unread={3: "not read within the time budget of 10s", 7: "not read"}),
            ChangeCost(REPLAY, 5, span=UNKNOWN_SPAN, why="t/0 offset 3: not read within the time budget of 10s"),
            "replays 5 messages, time span unknown (t/0 offset 3: not read within the time budget of 10s)",
        ),
        # 17. message format v0: no timestamps
        (
            ZOOKEEPER,
            zk(8, 3),
            LOG,
            read((3, msg(3, -1)), (7, msg(7, -1))),
            ChangeCost(REPLAY, 5, span=UNKNOWN_SPAN, why="the messages carry no timestamp (message format v0)"),
            "time span unknown (the messages carry no timestamp",
        ),
        # 18. Kafka not consulted (a ZooKeeper restore without --bootstrap-servers): every offset, an upper bound
        (
            ZOOKEEPER,
            zk(8, 3),
            None,
            MessageRead(),
            ChangeCost(REPLAY, 5, up_to=True, span=UNKNOWN_SPAN, why=NOT_CONSULTED),
            "replays up to 5 messages, time span unknown (Kafka was not consulted",
        ),
        # 19. a new record without log offsets: the start is not known
        (
            ZOOKEEPER,
            zk(None, 6),
            None,
            MessageRead(),
            ChangeCost(
                UNKNOWN,
                notes=(
                    "no record before: the spout starts at startOffsetTime, the log start, not known "
                    "without log offsets",
                ),
            ),
            "no previous position (no record before",
        ),
        # 20. a Trident spout without a state
        (
            TRIDENT,
            Change("t", 0, None, 6, path="/tx/s/user/0/1", after_data=b"{}"),
            LOG,
            MessageRead(),
            ChangeCost(UNKNOWN, notes=("no record before; a Trident spout then starts as its settings say",)),
            "no previous position",
        ),
    ],
    ids=[
        "replay",
        "skip-one",
        "below-log-start",
        "out-of-range-to-start",
        "past-log-end",
        "from-past-log-end",
        "metadata-only",
        "new-record",
        "new-commit",
        "stored-zero",
        "unusable-record",
        "deleted",
        "compacted-start",
        "compacted-end",
        "markers-to-end",
        "all-compacted",
        "unread",
        "no-timestamps",
        "not-consulted",
        "new-record-no-log",
        "trident-no-state",
    ],
)
def test_change_cost(store, change, log, found, expected, words):
    cost = cost_of(store, change, log, found)
    assert cost == expected
    assert words in describe(cost)


def test_positions_read_are_the_first_and_last_offset_of_each_range_within_the_log():
    changes = (
        zk(8, 3),
        Change("t", 1, 5, 5),
        Change(
            "t",
            2,
            2,
            30,
            path="/r/s/partition_2",
            version=1,
            before_data=storm_record("t", 2, 2),
            after_data=storm_record("t", 2, 30),
        ),
        Change(
            "t",
            3,
            4,
            5,
            path="/r/s/partition_3",
            version=1,
            before_data=storm_record("t", 3, 4),
            after_data=storm_record("t", 3, 5),
        ),
        Change("t", 4, 9, None, reasons=("skipped",)),
    )
    plan = Plan("reset", ConsumerKey(ZOOKEEPER, "s", "/r"), "x", changes, 0)
    cluster = {"t": {p: PartitionLog(0, 10) for p in range(5)}}
    # unchanged and skipped changes read nothing; a range of one offset reads it once (read_messages dedups)
    assert cost_positions(plan, cluster) == [
        ("t", 0, 3),
        ("t", 0, 7),
        ("t", 2, 2),
        ("t", 2, 9),
        ("t", 3, 4),
        ("t", 3, 4),
    ]
    assert cost_positions(plan, None) == []


def test_a_consumer_sums_its_costs_per_direction_and_its_undo_goes_the_other_way():
    changes = tuple(
        Change("t", p, b, a, had_commit=b is not None, after_metadata="m", before_metadata="m" if b else None)
        for p, (b, a) in enumerate([(8, 3), (9, 4), (2, 3), (None, 5), (6, 6)])
    )
    found = MessageRead(
        {
            ("t", 0, 3): (msg(3),),
            ("t", 0, 7): (msg(7),),
            ("t", 1, 4): (msg(4, partition=1),),
            ("t", 2, 2): (msg(2, ts=T0 + 3_600_000, partition=2),),
        },
        unread={("t", 1, 8): "not read within the time budget of 10s"},
    )
    plan = Plan("reset", ConsumerKey(KAFKA, "g"), "x", changes, 0)
    cluster = {"t": {p: PartitionLog(0, 10) for p in range(5)}}
    plan = Plan("reset", plan.key, "x", changes, 0, cost=plan_cost(plan, cluster, found))
    replay, skip = plan.cost.replay, plan.cost.skip
    assert (replay.partitions, replay.messages, replay.first_ms, replay.last_ms, replay.spans_unknown) == (
        2,
        10,
        T0 + 3000,
        T0 + 7000,
        1,
    )
    assert (skip.partitions, skip.messages, skip.first_ms, skip.last_ms, skip.spans_unknown) == (
        2,
        6,
        T0 + 3_600_000,
        T0 + 3_600_000,
        1,
    )
    assert cost_lines(plan.cost) == [
        "replays 10 messages written 2025-11-22T02:00:03.000Z to 02:00:07.000Z on 2 partitions: under at-least-once "
        "they are processed again (duplicates downstream); time span partial: not known on 1 partition "
        "(t/1 offset 8: not read within the time budget of 10s)",
        "skips 6 messages written at 2025-11-22T03:00:00.000Z on 2 partitions: under at-least-once they are never "
        "processed; time span partial: not known on 1 partition (t/3 offset 0: not read)",
    ]
    undo = undo_cost(plan)
    # the undo replays what the write skipped and skips what it replayed; a new commit stays (no undo for it)
    assert [c.direction if c else None for c in undo.changes] == [SKIP, SKIP, REPLAY, None, None]
    assert (undo.skip.messages, undo.replay.messages) == (10, 1)
    assert undo_cost(Plan("reset", plan.key, "x", changes, 0)) is None


@pytest.mark.parametrize(
    "first, last, text",
    [
        (T0, T0, "written at 2025-11-22T02:00:00.000Z"),
        (T0, T0 + 4_200_000, "written 2025-11-22T02:00:00.000Z to 03:10:00.000Z"),
        (T0, T0 + 86_400_000, "written 2025-11-22T02:00:00.000Z to 2025-11-23T02:00:00.000Z"),
        (T0, None, "written at 2025-11-22T02:00:00.000Z"),
        (None, None, ""),
    ],
)
def test_written(first, last, text):
    assert written(first, last) == text
    assert iso_ms(T0) == "2025-11-22T02:00:00.000Z"


def test_one_message_and_nothing_in_words():
    one = Plan("reset", ConsumerKey(ZOOKEEPER, "s", "/r"), "x", (zk(4, 5),), 0)
    one = Plan("reset", one.key, "x", one.changes, 0, cost=plan_cost(one, {"t": {0: LOG}}, every(4)))
    assert cost_lines(one.cost) == [
        "skips 1 message written at 2025-11-22T02:00:04.000Z: under at-least-once it is never processed"
    ]
    assert cost_lines(one.cost, at_least_once=False) == ["skips 1 message written at 2025-11-22T02:00:04.000Z"]
    none = Plan("reset", one.key, "x", (Change("t", 0, 4, None, reasons=("skipped",)),), 0)
    assert cost_lines(plan_cost(none, {"t": {0: LOG}}, MessageRead())) == ["replays and skips nothing"]
    assert EMPTY == ChangeCost(NONE).span


def test_a_replay_from_past_the_log_end_says_the_messages_may_be_new_to_the_spout():
    plan = Plan("reset", ConsumerKey(ZOOKEEPER, "s", "/r"), "x", (zk(15, 3),), 0)
    cost = plan_cost(plan, {"t": {0: LOG}}, every(3, 9))
    assert cost_lines(cost) == [
        "replays 7 messages written 2025-11-22T02:00:03.000Z to 02:00:09.000Z: under at-least-once they are processed "
        "again (duplicates downstream); the spout was past the log end on 1 partition (a recreated or truncated "
        "topic): those messages may be new to it"
    ]
    assert not undo_cost(Plan("reset", plan.key, "x", plan.changes, 0, cost=cost)).changes[0].past_end


# A Kafka commit costs what the spout does with it (offctl.core.rules.consumer.commit_resume, inspect's and the
# read-back's answer; KafkaSpout.doSeek, v2.8.8): EARLIEST ignores a commit that is not the running topology's and
# starts at the log start, so moving such a commit from 8 to 2 (written for the topology about to run) replays from 2
# what it was going to replay from 0 anyway: it skips 0-1. UNCOMMITTED_EARLIEST resumes from any commit: it replays 2-7.
WRITTEN = '{"topologyId":"new-1-1","taskId":-1,"threadName":"offctl"}'


@pytest.mark.parametrize(
    "strategy, direction, messages",
    [
        ("UNCOMMITTED_EARLIEST", REPLAY, 6),
        ("EARLIEST", SKIP, 2),
        ("LATEST", REPLAY, 8),
    ],
)
def test_a_kafka_commit_costs_what_the_first_poll_strategy_does_with_it(strategy, direction, messages):
    from offctl.core.plans.cost import Spout
    from offctl.core.storm.releases import FirstPoll, SpoutProfile

    plan = Plan("reset", ConsumerKey(KAFKA, "c", None), "x", (kafka(8, 2, before_meta=None, after_meta=WRITTEN),), 0)
    spout = Spout(SpoutProfile(first_poll=FirstPoll(strategy)), frozenset({"new-1-1"}))
    (cost,) = plan_cost(plan, {"t": {0: LOG}}, every(0, 1, 2, 7, 9), spout).changes
    assert (cost.direction, cost.messages) == (direction, messages), cost


@pytest.mark.parametrize(
    "profile, offset, words",
    [
        (SpoutProfile(), 0, START),  # startOffsetTime EarliestTime (KafkaConfig.java, v1.2.4)
        (
            SpoutProfile(start_offset_time=LATEST_TIME),
            10,
            "counted from startOffsetTime, the log end (the spout's settings; PartitionManager, v1.2.4)",
        ),
        # 0.9.x without forceFromStart: LatestTime (KafkaUtils.getOffset, v0.9.6)
        (SpoutProfile(storm_kafka=StormKafka.of_version("0.9.6")), 10, "the log end (LatestTime"),
        (SpoutProfile(storm_kafka=StormKafka.of_version("0.9.6"), ignore_zk_offsets=True), 0, "the log start"),
    ],
)
def test_a_deleted_record_is_counted_from_where_the_written_spout_starts(profile, offset, words):
    """Issue 28: the cost of deleting a storm-kafka record counts from where this spout starts without one, by
    its profile (reset resolves the written consumer's), not from the defaults'."""
    plan = Plan("delete", ConsumerKey(ZOOKEEPER, "c", "/r"), "x", (zk(3, None, delete=True),), 0)
    cost = plan_cost(plan, {"t": {0: LOG}}, every(*range(10)), Spout(profile)).changes[0]
    assert cost.notes and words in " ".join(cost.notes), cost
    assert cost.messages == abs(offset - 3), cost
