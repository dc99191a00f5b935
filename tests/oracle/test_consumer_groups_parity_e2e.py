"""offctl's figures for a group held to Apache Kafka's own tool (issue 35): kafka-consumer-groups --describe
(org.apache.kafka.tools.consumer.group.ConsumerGroupCommand, from the kafka-tools jar kafka/pom.xml fetches), run
on the same broker, gives each partition's committed offset, log end offset (the high watermark) and lag; offctl
inspect must give the same, on a group with Storm's metadata and one without, a partition with no commit left out
by both."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from offctl.adapters import servers

pytestmark = [pytest.mark.kafka]


def consumer_groups(bootstrap: str, group: str) -> dict[tuple[str, int], tuple[int | None, int, int | None]]:
    """(topic, partition) -> (current offset, log end offset, lag) as kafka-consumer-groups --describe prints them
    ("-" for none)."""
    java = shutil.which("java")
    proc = subprocess.run(
        [
            java,
            "-cp",
            servers.kafka_classpath(servers.KAFKA),
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            "--bootstrap-server",
            bootstrap,
            "--describe",
            "--group",
            group,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line.split() for line in proc.stdout.splitlines() if line.strip()]
    header = next(i for i, words in enumerate(lines) if words[:3] == ["GROUP", "TOPIC", "PARTITION"])
    columns = lines[header]

    def number(v: str) -> int | None:
        return None if v == "-" else int(v)

    rows = {}
    for words in lines[header + 1 :]:
        row = dict(zip(columns, words))
        rows[(row["TOPIC"], int(row["PARTITION"]))] = (
            number(row["CURRENT-OFFSET"]),
            int(row["LOG-END-OFFSET"]),
            number(row["LAG"]),
        )
    return rows


@pytest.mark.parametrize(
    "metadata",
    ['{"topologyId":"orders-client-1-1763780000","taskId":1,"threadName":"t"}', None],
    ids=["storm-metadata", "a-tools-commit"],
)
def test_committed_log_end_and_lag_agree_with_kafka_consumer_groups(cli, kafka, broker, names, metadata):
    topic, group = names("orders"), names("group")
    kafka.create_topic(topic, 3)
    for p, count in {0: 10, 1: 25, 2: 7}.items():
        kafka.produce(topic, p, count)
    kafka.commit(group, topic, {0: 4, 1: 25}, metadata)  # partition 2: no commit
    theirs = consumer_groups(broker.address, group)
    doc = cli(
        "inspect",
        "--bootstrap-servers",
        broker.address,
        "--group",
        group,
        "--topic",
        topic,
        "--per-partition",
        "--fail-on",
        "never",
        "-o",
        "json",
    ).json()
    ours = {(p["topic"], p["partition"]): p for p in doc["partitions"] if p["consumer"] == group}
    committed = {tp for tp, (current, _, _) in theirs.items() if current is not None}
    assert committed == {(topic, 0), (topic, 1)}
    for tp in committed:
        current, log_end, lag = theirs[tp]
        assert (ours[tp]["committed"], ours[tp]["log_end"], ours[tp]["lag"]) == (current, log_end, lag), tp
