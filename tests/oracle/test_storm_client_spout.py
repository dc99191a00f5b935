"""tests/oracle/storm_client_spout.py's reference, checked on the real spout: storm-kafka-client's KafkaSpout (2.8.3 on
Apache Kafka 4.4, 1.2.4 on Kafka 3.9) starts where KafkaSpoutConsumerRebalanceListener#doSeek says (v2.8.3 and v1.2.4
KafkaSpout.java, identical there), and commits what CommitMetadataManager and OffsetManager say:

- a commit whose metadata names THIS topology (CommitMetadataManager#isOffsetCommittedByThisTopology: its JSON
  "topologyId" equals context.getStormId()) is resumed from, whatever the FirstPollOffsetStrategy, EARLIEST included;
- a commit by another topology, or one with no Storm metadata at all (a plain consumer's), is ignored by EARLIEST
  (seekToBeginning: the log start) and resumed from by the UNCOMMITTED_* strategies;
- no commit: UNCOMMITTED_EARLIEST seeks to the log start, UNCOMMITTED_LATEST to the log end (nothing of what is
  there is emitted);
- a commit below the log start is seeked to, the fetch is out of range, and the consumer's auto.offset.reset
  (KafkaSpoutConfig.Builder sets "earliest" for AT_LEAST_ONCE) moves it to the log start;
- after acking, deactivate()/close() commit the offset after the last contiguous acked one, with the metadata
  {"topologyId": <storm id>, "taskId": <task id>, "threadName": <the thread that opened the spout>};
- two ways it breaks: a commit of this topology beyond the log end is reset to the log start (auto.offset.reset)
  but its OffsetManager still expects 50, so every commit after an ack throws IllegalStateException; JSON metadata
  without "topologyId" makes activate() throw NullPointerException.

Each line's scenarios run in one runner call (one JVM).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import ALLOW_SKIP
from tests.oracle.storm_client_spout import FETCH, MissingStormClient, lib_dir, run_client_spouts

pytestmark = pytest.mark.kafka

TOPOLOGY = "orders-7-1700000000"  # a storm id: <topology name>-<counter>-<launch time>
OTHER = "billing-3-1690000000"
P0, P1 = 10, 6  # messages in partitions 0 and 1 of the test topic
TRIMMED_START = 4  # the trimmed topic's log start, after DeleteRecords


def storm_metadata(topology_id: str, task_id: int = 1, thread: str = "main") -> str:
    """Commit metadata as CommitMetadataManager writes it (Jackson, creator properties in order, no spaces); the
    runner opens the spout on its main thread."""
    return json.dumps({"topologyId": topology_id, "taskId": task_id, "threadName": thread}, separators=(",", ":"))


def _need(line: str) -> None:
    try:
        lib_dir(line)
    except MissingStormClient as exc:
        if ALLOW_SKIP:
            pytest.skip(f"{exc} (OFFCTL_ALLOW_SKIP=1)")
        pytest.fail(str(exc), pytrace=False)


def _trim(kafka, topic: str, partition: int, before: int) -> None:
    """DeleteRecords: the partition's log start becomes `before`."""
    from confluent_kafka import TopicPartition

    for future in kafka.admin.delete_records([TopicPartition(topic, partition, before)]).values():
        future.result(30)


def _seeded(kafka, names) -> tuple[list[dict], dict[str, dict]]:
    """The test topics on `kafka`'s broker, and the scenarios with what the real spout does in each:
    (scenarios, {name: expected subset of the answer}); "errors" maps a phase to the start of its error's text.

    Storm's commits (metadata by CommitMetadataManager) are made byte for byte by the runner's commit_first (a Java
    KafkaConsumer's commitSync), not by kafka.commit: librdkafka stores metadata with a trailing NUL byte, which a
    Java consumer reads back ("...}\\x00"); the spout still parses such a commit as its own (scenario
    own-librdkafka: Jackson stops at the closing brace)."""
    topic, trimmed = names("orders"), names("trimmed")
    kafka.create_topic(topic, 2)
    kafka.produce(topic, 0, P0)
    kafka.produce(topic, 1, P1)
    kafka.create_topic(trimmed, 1)
    kafka.produce(trimmed, 0, P0)
    _trim(kafka, trimmed, 0, TRIMMED_START)

    ours = storm_metadata(TOPOLOGY)
    # another topology's spout, opened on its executor thread (Executor#execute: "<component>-executor<[ids]>")
    others = storm_metadata(OTHER, task_id=4, thread="Thread-23-kafka-spout-executor[4, 4]")
    kafka.commit(names("plain-earliest"), topic, {0: 3})  # a plain consumer's commit: no metadata
    kafka.commit(names("own-librdkafka"), topic, {0: 3}, metadata=ours)

    def scenario(name, strategy, *, on=topic, partitions=(0,), commit=None, **more):
        first = (
            {"commit_first": {str(p): {"offset": o, "metadata": m} for p, (o, m) in commit.items()}} if commit else {}
        )
        return {
            "name": name,
            "bootstrap_servers": kafka.bootstrap,
            "topic": on,
            "group_id": names(name),
            "topology_id": TOPOLOGY,
            "first_poll_offset_strategy": strategy,
            "partitions": list(partitions) if partitions is not None else None,
            "deadline_ms": 15_000,
            **first,
            **more,
        }

    def done(offset):  # what the spout commits after its emits are acked: the offset after the last one
        return {"offset": offset, "metadata": ours}

    scenarios = [
        # (a) this topology's commit: resumed from; after acking 3 it commits 4
        scenario("own", "UNCOMMITTED_EARLIEST", commit={0: (3, ours)}),
        scenario("own-librdkafka", "UNCOMMITTED_EARLIEST"),
        # this topology's commit wins over EARLIEST too; every partition (RoundRobinManualPartitioner, one task),
        # emitted to the log end and acked: committed at the log end
        scenario("own-earliest", "EARLIEST", partitions=None, emit="all", commit={0: (3, ours), 1: (5, ours)}),
        # (b) another topology's commit: EARLIEST ignores it and starts at the log start
        scenario("other-earliest", "EARLIEST", commit={0: (3, others)}),
        # ... which UNCOMMITTED_EARLIEST resumes from
        scenario("other-uncommitted", "UNCOMMITTED_EARLIEST", commit={0: (3, others)}),
        # a commit with no metadata (not Storm's JSON): not this topology's, so EARLIEST ignores it
        scenario("plain-earliest", "EARLIEST"),
        # (c) no commit: the log start
        scenario("fresh-earliest", "UNCOMMITTED_EARLIEST"),
        scenario("fresh-trimmed", "UNCOMMITTED_EARLIEST", on=trimmed),
        # (d) no commit: the log end; nothing there is emitted, nothing acked, nothing committed
        scenario("fresh-latest", "UNCOMMITTED_LATEST"),
        # this topology's commit below the log start: seeked to, then auto.offset.reset=earliest (the Builder's for
        # AT_LEAST_ONCE) moves it to the log start; OffsetManager skips the offsets never emitted and commits
        scenario("below-start", "UNCOMMITTED_EARLIEST", on=trimmed, commit={0: (2, ours)}),
        # this topology's commit beyond the log end: seeked to, reset to the log start, re-emitted from there; but
        # OffsetManager started at 50, so committing the acked 0 throws (deactivate and close): it never commits
        scenario("beyond-end", "UNCOMMITTED_EARLIEST", commit={0: (50, ours)}),
        # JSON metadata without "topologyId": CommitMetadataManager catches IOException only, and
        # getTopologyId().equals(...) throws NullPointerException out of activate()
        scenario("no-topology-id", "EARLIEST", commit={0: (3, '{"taskId":1}')}),
    ]
    expected = {
        "own": {"start_position": {0: 3}, "first_emitted": {0: 3}, "emitted": {0: [3]}, "committed": {0: done(4)}},
        "own-librdkafka": {"start_position": {0: 3}, "first_emitted": {0: 3}, "committed": {0: done(4)}},
        "own-earliest": {
            "assigned": [0, 1],
            "start_position": {0: 3, 1: 5},
            "first_emitted": {0: 3, 1: 5},
            "emitted": {0: list(range(3, P0)), 1: list(range(5, P1))},
            "committed": {0: done(P0), 1: done(P1)},
        },
        "other-earliest": {"start_position": {0: 0}, "first_emitted": {0: 0}, "committed": {0: done(1)}},
        "other-uncommitted": {"start_position": {0: 3}, "first_emitted": {0: 3}, "committed": {0: done(4)}},
        "plain-earliest": {"start_position": {0: 0}, "first_emitted": {0: 0}, "committed": {0: done(1)}},
        "fresh-earliest": {"start_position": {0: 0}, "first_emitted": {0: 0}, "committed": {0: done(1)}},
        "fresh-trimmed": {
            "log_start": {0: TRIMMED_START},
            "start_position": {0: TRIMMED_START},
            "first_emitted": {0: TRIMMED_START},
            "committed": {0: done(TRIMMED_START + 1)},
        },
        "fresh-latest": {
            "start_position": {0: P0},
            "end_position": {0: P0},
            "first_emitted": {0: None},
            "emitted": {0: []},
            "committed": {0: None},
        },
        "below-start": {
            "log_start": {0: TRIMMED_START},
            "start_position": {0: 2},
            "first_emitted": {0: TRIMMED_START},
            "emitted": {0: [TRIMMED_START]},
            "committed": {0: done(TRIMMED_START + 1)},
        },
        "beyond-end": {
            "start_position": {0: 50},
            "first_emitted": {0: 0},
            "committed": {0: done(50)},
            "errors": {
                phase: "java.lang.IllegalStateException: The offset [0] is below the current nextCommitOffset [50]"
                for phase in ("deactivate", "close")
            },
        },
        "no-topology-id": {
            "start_position": {0: None},
            "first_emitted": {0: None},
            "committed": {0: {"offset": 3, "metadata": '{"taskId":1}'}},
            "errors": {"activate": "java.lang.NullPointerException"},
        },
    }
    return scenarios, expected


def _check(line: str, kafka, names) -> list[dict]:
    _need(line)
    scenarios, expected = _seeded(kafka, names)
    answers = run_client_spouts(line, scenarios)
    for answer in answers:
        want = dict(expected[answer["name"]])
        errors = want.pop("errors", {})
        got = {key: answer[key] for key in want}
        assert (got, answer["timed_out"]) == (want, False), answer
        assert sorted(answer["errors"]) == sorted(errors), answer
        for phase, start in errors.items():
            assert answer["errors"][phase].startswith(start), answer
        assert answer["log_end"] == ({0: P0, 1: P1} if answer["name"] == "own-earliest" else {0: P0}), answer
    return answers


def test_storm_kafka_client_2_8_on_kafka_4_4(kafka, names):
    answers = _check("2.8.3", kafka, names)
    assert {a["storm_line"] for a in answers} == {"2.x"}


def test_storm_kafka_client_1_2_4_on_kafka_3_9(kafka39, names):
    answers = _check("1.2.4", kafka39, names)
    assert {a["storm_line"] for a in answers} == {"1.x"}


def test_missing_jars_say_how_to_fetch_them(tmp_path, monkeypatch):
    monkeypatch.setenv("OFFCTL_STORM_HOME", str(tmp_path))
    with pytest.raises(MissingStormClient) as caught:
        run_client_spouts("2.8.3", [{"name": "x"}])  # before compiling or running anything
    assert FETCH in str(caught.value) and str(tmp_path / "client-2.8.3" / "lib") in str(caught.value)
