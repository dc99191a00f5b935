"""KIP-848 consumer groups on Apache Kafka 4.4 (issue 35): a group a consumer joins with group.protocol=consumer is
read and described with its type, and a reset is refused while it has members, as for a classic group; once the
member has left, the reset is written. The classic group beside it is refused the same way."""

from __future__ import annotations

import json
import time

import pytest

pytestmark = [pytest.mark.kafka]


def _joined(bootstrap: str, group: str, topic: str, protocol: str):
    """A consumer of `topic` in `group` that has joined (it was assigned a partition); close it to leave."""
    from confluent_kafka import Consumer

    settings = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
    if protocol == "consumer":
        settings["group.protocol"] = "consumer"
    consumer = Consumer(settings)
    consumer.subscribe([topic])
    deadline = time.monotonic() + 60  # only ends a join that never happens
    while not consumer.assignment():
        assert time.monotonic() < deadline, f"{protocol} consumer did not join {group}"
        consumer.poll(0.2)
    return consumer


@pytest.mark.parametrize("protocol, kind", [("consumer", "consumer"), ("classic", "classic")])
def test_a_group_with_a_member_is_read_with_its_type_and_its_reset_refused(cli, kafka, broker, names, protocol, kind):
    topic, group = names("orders"), names(f"{protocol}-group")
    kafka.create_topic(topic, 2)
    kafka.produce(topic, 0, 5)
    kafka.commit(group, topic, {0: 2, 1: 0})
    consumer = _joined(broker.address, group, topic, protocol)
    try:
        seen = cli("inspect", "--bootstrap-servers", broker.address, "--group", group, "--topic", topic, "-o", "json")
        assert seen.exit_code in (0, 1), seen.stderr
        (state,) = [c for c in seen.json()["consumers"] if c["consumer"] == group]
        assert state["group_type"] == kind and state["members"] == 1, state
        refused = cli(
            "reset",
            "--bootstrap-servers",
            broker.address,
            "--group",
            group,
            "--topic",
            topic,
            "--to",
            "latest",
            "--no-storm-metadata",
            "--execute",
            "--yes",
            "--force",
            "running-topology",
        )
        assert refused.exit_code == 4, refused.stderr
        assert f"group {group} has 1 member(s)" in refused.stderr and "active-group" in refused.stderr
    finally:
        consumer.close()
    deadline = time.monotonic() + 60  # the member leaves on close; the broker answers Empty once it has
    while True:
        done = cli(
            "reset",
            "--bootstrap-servers",
            broker.address,
            "--group",
            group,
            "--topic",
            topic,
            "--to",
            "latest",
            "--no-storm-metadata",
            "--execute",
            "--yes",
            "--force",
            "running-topology",
            "-o",
            "json",
        )
        if done.exit_code != 4 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["verified"] is True
