"""The Kafka adapter against the test broker: log offsets of topics asked for before the metadata arrived."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from offctl.adapters.kafka import REQUEST_PARTITIONS, KafkaStore

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
        early: {0: (0, 2), 1: (0, 2), 2: (0, 2)}, late: {0: (0, 1), 1: (0, 1)}}
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


def _produce(kafka, topic: str, partition: int, records: list[dict]) -> None:
    """One record per request (Tansu's high watermark is wrong after a batch), with explicit timestamps."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap, "linger.ms": 0})
    for record in records:
        producer.produce(topic, partition=partition, **record)
        producer.flush(30)


def test_read_messages_gives_exact_bytes_timestamps_and_headers_and_stops_at_the_log_end(kafka, names):
    topic = names("msgs")
    kafka.create_topic(topic, 2)
    _produce(kafka, topic, 0, [
        {"value": b"first", "key": b"k0", "timestamp": 1_700_000_000_000},
        {"value": b"\x00\xff\x1b[2J", "key": None, "timestamp": 1_700_000_001_000,
         "headers": [("trace", b"\x01\x02"), ("empty", None)]},
        {"value": None, "key": b"tombstone", "timestamp": 1_700_000_002_000},
    ])
    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        read = store.read_messages([(topic, 0, 1), (topic, 0, 0), (topic, 1, 0)], count=2)
    finally:
        store.close()
    at1 = read.messages[(topic, 0, 1)]
    assert [(m.offset, m.key, m.value, m.timestamp_ms, m.timestamp_type) for m in at1] == [
        (1, None, b"\x00\xff\x1b[2J", 1_700_000_001_000, "CreateTime"),
        (2, b"tombstone", None, 1_700_000_002_000, "CreateTime")]
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
    # Past the log end Apache Kafka answers OFFSET_OUT_OF_RANGE ("the broker refused the read"); Tansu answers
    # empty fetches, so the budget runs out. Either way nothing is made up, and callers read only positions
    # within [log start, log end) (offctl.core.messages.needs_read).
    assert (topic, 0, 7) not in read.messages and read.unread[(topic, 0, 7)]
    from offctl.adapters.kafka import LOOKUP_GROUP

    offsets = kafka.admin.list_consumer_group_offsets([__import__("confluent_kafka").ConsumerGroupTopicPartitions(
        LOOKUP_GROUP, [__import__("confluent_kafka").TopicPartition(topic, 0)])])
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


def _refusing(store, method: str, refused: str, code: int):
    """Wrap an admin call: the real request, with `refused`'s answer replaced by the broker's refusal `code`
    (Tansu has no ACLs: an authorization refusal is shown on a real request with one answer made up)."""
    from confluent_kafka import KafkaError, KafkaException

    real = getattr(store.admin, method)

    def call(*args, **kwargs):
        futures = real(*args, **kwargs)
        failed: Future = Future()
        failed.set_exception(KafkaException(KafkaError(code)))
        return {k: failed if k == refused else f for k, f in futures.items()}

    setattr(store.admin, method, call)


def test_a_refused_describe_of_one_topic_leaves_the_others_of_its_request(kafka, names):
    """A broker refusal (here TOPIC_AUTHORIZATION_FAILED) is that topic's: the read is partial (noted), the
    other topics of the same describe-topics request keep their logs."""
    from confluent_kafka import KafkaError

    topic, secret = kafka.filled_topic(names("t"), 1, 2), kafka.filled_topic(names("secret"), 1, 1)
    store = KafkaStore(kafka.bootstrap, timeout=10, targeted=True)
    _refusing(store, "describe_topics", secret, KafkaError.TOPIC_AUTHORIZATION_FAILED)
    try:
        store.request_logs([topic, secret])
        cluster = store.logs()
    finally:
        store.close()
    assert _logs(cluster) == {topic: {0: (0, 2)}}
    [note] = store.notes
    assert secret in note and "refused" in note


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


def test_a_refused_describe_of_one_group_leaves_the_others(kafka, names):
    from confluent_kafka import KafkaError

    topic = kafka.filled_topic(names("t"), 1, 1)
    ok, secret = names("ok"), names("secret")
    for group in (ok, secret):
        kafka.commit(group, topic, {0: 1})
    store = KafkaStore(kafka.bootstrap, timeout=10)
    _refusing(store, "describe_consumer_groups", secret, KafkaError.GROUP_AUTHORIZATION_FAILED)
    try:
        states = store.group_states([ok, secret])
    finally:
        store.close()
    assert [s.group for s in states] == [ok]
    [note] = store.notes
    assert secret in note and "refused" in note


def test_a_group_with_a_live_classic_member_reads_as_classic_and_active(kafka, broker, names):
    """A real confluent-kafka consumer subscribed with the group's id makes it a classic group with a member
    (librdkafka's default group.protocol is classic). Tansu's ListGroups says classic while its describe answer
    (ConsumerGroupDescribe) says consumer: the list's word is taken. The broker refuses a commit without member id
    (UNKNOWN_MEMBER_ID) meanwhile, as Kafka's GroupCoordinator.validateOffsetCommit does (3.8.0)."""
    from offctl.errors import WriteConflict
    from tests.test_reset_e2e import joined

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
            for result in (answered.values() if isinstance(answered, dict) else [answered]):
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
