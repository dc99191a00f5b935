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
