"""The Kafka adapter against Apache Kafka 4.4: log offsets (of topics asked for before the metadata arrived, and of
topics an ACL refuses), reads of messages, and group states of classic and KIP-848 groups."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from offctl.adapters.kafka import REQUEST_PARTITIONS, KafkaStore
from tests.conftest import joined_as_consumer

pytestmark = pytest.mark.kafka


def test_topics_asked_for_before_the_metadata_arrived_wait_and_are_looked_up(kafka, names):
    """request_logs does not block on the cluster's metadata: the topics wait in the store (nothing is
    sent), and are looked up once the metadata is there, by a later request_logs or by logs()."""
    early, late = kafka.filled_topic(names("early"), 3, 2), kafka.filled_topic(names("late"), 2, 1)
    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        pending: Future = Future()
        store._metadata_future = pending  # the metadata request still under way
        store.request_logs([early])
        assert store._waiting == {early: None} and not store._pending and not store._unsent
        pending.set_result(store.admin.list_topics(timeout=10))
        store.request_logs([late])  # the metadata is in: both are queued now
        assert not store._waiting and len(store._unsent) == 5 < REQUEST_PARTITIONS
        cluster = store.logs()
    finally:
        store.close()
    assert {t: {p: (log.log_start, log.log_end) for p, log in ps.items()} for t, ps in cluster.items()} == {
        early: {0: (0, 2), 1: (0, 2), 2: (0, 2)},
        late: {0: (0, 1), 1: (0, 1)},
    }
    assert store.notes == []


def test_logs_waits_for_the_metadata_of_topics_still_waiting(kafka, names):
    topic = kafka.filled_topic(names("t"), 2, 1)
    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        pending: Future = Future()
        store._metadata_future = pending
        store.request_logs([topic, "no-such-topic-" + names.prefix])
        pending.set_result(store.admin.list_topics(timeout=10))
        cluster = store.logs()
    finally:
        store.close()
    assert {p: log.log_end for p, log in cluster[topic].items()} == {0: 1, 1: 1}
    assert set(cluster) == {topic}  # a topic that does not exist is left to the core (UNKNOWN_TOPIC)


def test_read_messages_gives_exact_bytes_timestamps_and_headers_and_stops_at_the_log_end(kafka, names):
    topic = names("msgs")
    kafka.create_topic(topic, 2, {"retention.ms": "-1"})  # timestamps of 2023: kept, not deleted by retention
    kafka.produce_records(
        topic,
        0,
        [
            {"value": b"first", "key": b"k0", "timestamp": 1_700_000_000_000},
            {
                "value": b"\x00\xff\x1b[2J",
                "key": None,
                "timestamp": 1_700_000_001_000,
                "headers": [("trace", b"\x01\x02"), ("empty", None)],
            },
            {"value": None, "key": b"tombstone", "timestamp": 1_700_000_002_000},
        ],
    )
    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        read = store.read_messages([(topic, 0, 1), (topic, 0, 0), (topic, 1, 0)], count=2)
    finally:
        store.close()
    at1 = read.messages[(topic, 0, 1)]
    assert [(m.offset, m.key, m.value, m.timestamp_ms, m.timestamp_type) for m in at1] == [
        (1, None, b"\x00\xff\x1b[2J", 1_700_000_001_000, "CreateTime"),
        (2, b"tombstone", None, 1_700_000_002_000, "CreateTime"),
    ]
    assert at1[0].headers == (("trace", b"\x01\x02"), ("empty", None))
    # the same partition at a second position is read in its own turn, from its own offset
    assert [m.value for m in read.messages[(topic, 0, 0)]] == [b"first", b"\x00\xff\x1b[2J"]
    # an empty partition: the log ends before any message, and that is said, not waited out
    assert (topic, 1, 0) not in read.messages and (topic, 1, 0) in read.at_end
    assert (topic, 0, 1) not in read.at_end and read.unread == {}


def test_read_messages_reports_what_it_could_not_read_and_never_joins_or_commits(kafka, names):
    topic = kafka.filled_topic(names("few"), 1, 2)
    store = KafkaStore(kafka.bootstrap, timeout=5)
    try:
        read = store.read_messages([(topic, 0, 1), (topic, 0, 7)], count=5, budget_s=3)
    finally:
        store.close()
    assert [m.offset for m in read.messages[(topic, 0, 1)]] == [1]
    assert (topic, 0, 1) in read.at_end and (topic, 0, 1) not in read.unread  # fewer than asked: the log ended
    # Past the log end the broker answers OFFSET_OUT_OF_RANGE, and auto.offset.reset=error makes that the read's
    # answer, at once: nothing is made up, the offset is not moved (callers read only positions within
    # [log start, log end): offctl.core.records.messages.needs_read)
    assert (topic, 0, 7) not in read.messages and (topic, 0, 7) not in read.at_end
    assert read.unread[(topic, 0, 7)].startswith("the broker refused the read (")
    assert "Broker: Offset out of range" in read.unread[(topic, 0, 7)]
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    from offctl.adapters.kafka_client import LOOKUP_GROUP

    offsets = kafka.admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(LOOKUP_GROUP, [TopicPartition(topic, 0)])]
    )
    committed = list(offsets.values())[0].result(timeout=30).topic_partitions[0].offset
    assert committed < 0  # nothing was committed for the partition read


def test_read_messages_within_a_budget_says_what_it_did_not_reach(kafka, names):
    topic = kafka.filled_topic(names("budget"), 1, 1)
    store = KafkaStore(kafka.bootstrap, timeout=5)
    try:
        read = store.read_messages([(topic, 0, 0)], budget_s=0)
    finally:
        store.close()
    assert read.messages == {} and "time budget of 0s" in read.unread[(topic, 0, 0)]


def _logs(cluster):
    return {t: {p: (log.log_start, log.log_end) for p, log in ps.items()} for t, ps in cluster.items()}


@pytest.mark.parametrize("targeted", [False, True], ids=["cluster-metadata", "targeted"])
def test_topic_names_kafka_cannot_have_are_never_sent_and_have_no_log(kafka, names, targeted):
    """Issue 22: an audit task's store (targeted, describe-topics) and inspect's (the whole cluster's metadata)
    give the same logs. Names Kafka cannot have (Topic.validate, apache/kafka common/internals/Topic.java) are
    never sent: confluent-kafka raises ValueError for one starting with NUL, librdkafka reads "t\\0b" as t
    (two such names fail the whole describe as duplicates), the broker refuses the others."""
    topic = kafka.filled_topic(names("t"), 2, 3)
    odd = ["", "\0b", "a\0b", topic + "\0b", "bad topic", "x" * 250, ".", "..", "t\u00e9", "a/b"]
    store = KafkaStore(kafka.bootstrap, timeout=10, targeted=targeted)
    try:
        store.request_logs([*odd, topic])
        cluster = store.logs()
    finally:
        store.close()
    assert _logs(cluster) == {topic: {0: (0, 3), 1: (0, 3)}}
    assert store.notes == []


@pytest.mark.parametrize("targeted", [False, True], ids=["cluster-metadata", "targeted"])
def test_a_refused_describe_of_one_topic_leaves_the_others_of_its_request(guarded, guarded_kafka, names, targeted):
    """An ACL refusing DESCRIBE of one topic: that topic's refusal (TOPIC_AUTHORIZATION_FAILED) is noted, so the read
    is partial, and the other topics of the same request keep their logs, whether the store describes the topics
    asked for (an audit task) or reads the cluster's metadata (inspect), which leaves a refused topic out as if it did
    not exist: the store asks for it by name to tell the two apart. A topic that does not exist is no note."""
    from confluent_kafka.admin import AclOperation, ResourceType

    topic, secret = guarded_kafka.filled_topic(names("t"), 1, 2), guarded_kafka.filled_topic(names("secret"), 1, 1)
    guarded.deny("storm", (ResourceType.TOPIC, secret, AclOperation.DESCRIBE))  # storm may read every other topic
    absent = names("absent")
    store = KafkaStore(guarded.sasl, config=guarded.storm_config, timeout=10, targeted=targeted)
    try:
        store.request_logs([topic, secret, absent])
        cluster = store.logs()
    finally:
        store.close()
    assert _logs(cluster) == {topic: {0: (0, 2)}}
    [note] = store.notes
    assert note == f"topic {secret!r}: the broker refused to describe it (Broker: Topic authorization failed)"
    assert absent not in guarded_kafka.admin.list_topics(timeout=10).topics  # asked for by name, never created


def test_group_ids_librdkafka_cannot_name_are_noted_never_sent(kafka, names):
    """A group id is a C string to librdkafka: "g\\0x" would read (or write) group g, and confluent-kafka
    raises ValueError for "". Such ids (a cluster may list them to --all-groups) are noted, and the other
    groups are read."""
    from offctl.errors import UsageError

    topic = kafka.filled_topic(names("t"), 1, 5)
    group = names("g")
    kafka.commit(group, topic, {0: 2})
    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        commits = store.group_commits(["", group + "\0x", group])
        states = store.group_states(["", group + "\0x", group])
        with pytest.raises(UsageError, match="nothing was written"):
            store.commit(group + "\0x", [(topic, 0, 4, None)])
        after = store.group_commits([group])
    finally:
        store.close()
    assert [(c.group, c.topic, c.partition, c.offset) for c in commits] == [(group, topic, 0, 2)]
    assert [s.group for s in states] == [group]
    assert len(store.notes) == 2 and all("librdkafka cannot name" in n for n in store.notes)
    assert [c.offset for c in after] == [2]  # group g was not written


def test_a_refused_describe_of_one_group_leaves_the_others(guarded, guarded_kafka, names):
    """An ACL refusing DESCRIBE of one group: its state and commits are refused (GROUP_AUTHORIZATION_FAILED) and noted,
    the other group's are read."""
    from confluent_kafka.admin import AclOperation, ResourceType

    topic = guarded_kafka.filled_topic(names("t"), 1, 1)
    ok, secret = names("ok"), names("secret")
    for group in (ok, secret):
        guarded_kafka.commit(group, topic, {0: 1})
    guarded.deny("storm", (ResourceType.GROUP, secret, AclOperation.DESCRIBE))  # storm may read every other group
    store = KafkaStore(guarded.sasl, config=guarded.storm_config, timeout=10)
    try:
        states = store.group_states([ok, secret])
        commits = store.group_commits([ok, secret])
    finally:
        store.close()
    assert [s.group for s in states] == [ok] and [c.group for c in commits] == [ok]
    assert len(store.notes) == 2 and all(secret in n and "Group authorization failed" in n for n in store.notes)


def test_a_group_with_a_live_classic_member_reads_as_classic_and_active(kafka, broker, names):
    """A real confluent-kafka consumer subscribed with the group's id makes it a classic group with a member
    (librdkafka's default group.protocol is classic): ListGroups and the describe answer both say classic. The broker
    refuses a commit without member id (UNKNOWN_MEMBER_ID) meanwhile, as Kafka's GroupCoordinator.validateOffsetCommit
    does (3.8.0)."""
    from offctl.errors import WriteConflict
    from tests.e2e.test_reset_e2e import joined

    topic = kafka.filled_topic(names("t"), 1, 3)
    group, idle = names("g"), names("idle")
    kafka.commit(group, topic, {0: 1})
    kafka.commit(idle, topic, {0: 1})
    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        with joined(kafka, broker, group, topic):
            states = {s.group: s for s in store.group_states([group, idle])}
            with pytest.raises(WriteConflict, match="UNKNOWN_MEMBER_ID|Unknown member"):
                store.commit(group, [(topic, 0, 2, None)])
    finally:
        store.close()
    assert (states[group].type, states[group].active) == ("classic", True)
    assert (states[idle].type, states[idle].state, states[idle].active) == ("classic", "empty", False)
    assert states[group].protocol is None or isinstance(states[group].protocol, str)  # what the broker named
    assert not store.notes


def test_a_group_with_a_live_kip848_member_reads_as_consumer_and_active(kafka, broker, names):
    """A consumer that joins with group.protocol=consumer makes a KIP-848 consumer group: ListGroups (v5) names its
    type consumer, and so does the describe (ConsumerGroupDescribe), with the broker-side assignor. The broker refuses
    a commit with no member id meanwhile (UNKNOWN_MEMBER_ID: ConsumerGroup.validateOffsetCommit takes epoch -1 only
    from an empty group), and takes it once the member has left; the group stays a consumer group, empty."""
    from offctl.errors import WriteConflict

    topic = kafka.filled_topic(names("t"), 2, 3)
    group = names("g")
    store, later = KafkaStore(kafka.bootstrap, timeout=10), KafkaStore(kafka.bootstrap, timeout=10)
    try:
        with joined_as_consumer(kafka, broker, group, topic):
            (during,) = store.group_states([group])
            with pytest.raises(WriteConflict, match="Unknown member"):
                store.commit(group, [(topic, 0, 2, None)])
        (after,) = later.group_states([group])  # a store lists the groups once: a new one for the group now
        later.commit(group, [(topic, 0, 2, "m")])
        commits = later.group_commits([group])
    finally:
        store.close()
        later.close()
    assert (during.type, during.state, during.members, during.active) == ("consumer", "stable", 1, True)
    assert during.protocol in ("uniform", "range")  # group.consumer.assignors: the broker's, not the client's
    assert (after.type, after.state, after.members, after.active) == ("consumer", "empty", 0, False)
    assert [(c.partition, c.offset, c.metadata) for c in commits] == [(0, 2, "m")]
    assert not store.notes and not later.notes


def test_a_broker_that_names_no_group_type_reads_as_unknown(kafka, names, monkeypatch):
    """ListGroups before v5 (Kafka before KIP-848) and describe answers without a type: 'unknown', no crash."""
    from confluent_kafka import ConsumerGroupType

    topic = kafka.filled_topic(names("t"), 1, 1)
    group = names("g")
    kafka.commit(group, topic, {0: 1})
    store = KafkaStore(kafka.bootstrap, timeout=10)
    real_list, real_describe = store.admin.list_consumer_groups, store.admin.describe_consumer_groups

    def untyped(future_of):
        def call(*args, **kwargs):
            answered = future_of(*args, **kwargs)
            for result in answered.values() if isinstance(answered, dict) else [answered]:
                value = result.result(20)
                for item in getattr(value, "valid", None) or [value]:
                    item.type = ConsumerGroupType.UNKNOWN
            return answered

        return call

    monkeypatch.setattr(store.admin, "list_consumer_groups", untyped(real_list))
    monkeypatch.setattr(store.admin, "describe_consumer_groups", untyped(real_describe))
    try:
        (state,) = store.group_states([group])
    finally:
        store.close()
    assert (state.group, state.type, state.active) == (group, "unknown", False)
