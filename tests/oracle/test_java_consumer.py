"""tests/oracle/java_consumer.py's reference, checked against what Kafka documents for transactions on the real broker:
a Java KafkaConsumer with isolation.level=read_committed ends at the last stable offset (the first offset of the
oldest open transaction) and is handed only committed records; read_uncommitted ends at the high watermark and is
handed every data record, aborted and open ones included; neither is ever handed a transaction marker, which takes
one offset in the log after each committed or aborted transaction."""

from __future__ import annotations

from tests.oracle.java_consumer import consumer_view


def _transactional_producer(kafka, transactional_id: str):
    from confluent_kafka import Producer

    # transaction.timeout.ms: the open transaction must outlive the test (the broker allows up to 15 minutes)
    producer = Producer(
        {
            "bootstrap.servers": kafka.bootstrap,
            "transactional.id": transactional_id,
            "transaction.timeout.ms": 600000,
            "linger.ms": 5,
        }
    )
    producer.init_transactions(60)
    return producer


def _written(producer, topic: str, count: int, tag: str) -> list[int]:
    """`count` records produced in the open transaction and flushed to the broker; their offsets, in order."""
    reports = []
    for i in range(count):
        producer.produce(
            topic,
            partition=0,
            value=f"{tag}{i}".encode(),
            on_delivery=lambda err, msg: reports.append((err, msg.offset())),
        )
    assert producer.flush(30) == 0, "records left unsent"
    assert [err for err, _ in reports] == [None] * count, reports
    return [offset for _, offset in reports]


def test_java_consumer_reads_committed_up_to_lso_and_uncommitted_up_to_hw(kafka, names):
    topic = names("txns")
    kafka.create_topic(topic, 1)
    producer = _transactional_producer(kafka, names("tx"))
    batches = {}
    open_transaction = False
    try:
        for tag, count, end in (
            ("committed-a", 3, "commit"),
            ("aborted", 2, "abort"),
            ("committed-b", 2, "commit"),
            ("open", 2, None),
        ):
            producer.begin_transaction()
            open_transaction = True
            batches[tag] = _written(producer, topic, count, tag)  # flushed: in the log, aborted or not
            if end == "commit":
                producer.commit_transaction(60)
            elif end == "abort":
                producer.abort_transaction(60)
            open_transaction = end is None

        # The log, from the delivery reports: each transaction's records are consecutive, and its marker (commit or
        # abort, a control record) takes the one offset after them
        committed_a, aborted, committed_b, still_open = (
            batches[t] for t in ("committed-a", "aborted", "committed-b", "open")
        )
        assert committed_a[0] == 0
        previous_end = None
        for offsets in (committed_a, aborted, committed_b, still_open):
            assert offsets == list(range(offsets[0], offsets[0] + len(offsets))), batches
            if previous_end is not None:
                assert offsets[0] == previous_end + 1, f"one marker before {offsets[0]}: {batches}"
            previous_end = offsets[-1] + 1  # the marker's offset
        markers = [committed_a[-1] + 1, aborted[-1] + 1, committed_b[-1] + 1]
        lso, hw = still_open[0], still_open[-1] + 1
        assert (markers, lso, hw) == ([3, 6, 9], 10, 12)  # what the relations above come to, for the record

        committed_view = consumer_view(kafka.bootstrap, topic, {0: 0})
        uncommitted_view = consumer_view(kafka.bootstrap, topic, {0: 0}, isolation_level="read_uncommitted")
        assert uncommitted_view[0]["end_offset"] > committed_view[0]["end_offset"]
        # read_committed: up to the last stable offset (the open transaction's first record), only the committed
        # records handed, its position past the last marker before the LSO
        assert committed_view == {0: {"end_offset": lso, "position": lso, "records": committed_a + committed_b}}
        # read_uncommitted: up to the high watermark, every data record handed (aborted and open ones too), no marker
        assert uncommitted_view == {
            0: {"end_offset": hw, "position": hw, "records": committed_a + aborted + committed_b + still_open}
        }

        # From the aborted transaction's first record: the aborted records are skipped, the committed ones after
        # them handed; from the marker before the LSO: nothing handed, the position moves past it to the LSO
        assert consumer_view(kafka.bootstrap, topic, {0: aborted[0]}) == {
            0: {"end_offset": lso, "position": lso, "records": committed_b}
        }
        assert consumer_view(kafka.bootstrap, topic, {0: markers[-1]}) == {
            0: {"end_offset": lso, "position": lso, "records": []}
        }
    finally:
        if open_transaction:
            producer.abort_transaction(60)
        producer.flush(10)
        del producer
