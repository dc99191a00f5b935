"""read_committed spouts on Apache Kafka 4.4 (issue 35, item 5): lag to the last stable offset, the open transaction a
spout waits behind (OPEN_TRANSACTION, HANGING_TRANSACTION), peek's count of what lies between a commit and the last
stable offset, and storm-kafka-monitor with the spout's isolation.level; every figure held to what a real Java
KafkaConsumer (kafka-clients 4.4, tests/java/ConsumerView.java) is handed on the same broker.

The topic, one transactional producer, offsets from its delivery reports:

    partition 0: committed 0 1 2 | marker 3 | aborted 4 5 | marker 6 | committed 7 8 | marker 9 | open 10 11
                 last stable offset 10, high watermark 12; the open records dated 5 minutes back
    partition 1: committed 0 1 | marker 2 | open 3 4: last stable offset 3, high watermark 5; dated 2 hours back,
                 longer than the broker's transaction.max.timeout.ms (15 min): HANGING_TRANSACTION. A healthy
                 broker's coordinator aborts a transaction past its timeout, so a real hang cannot be made here; the
                 back-dated CreateTime stands in for its age (the rule only reads the first record's timestamp)
    partition 2: committed 0 1 2 | marker 3: last stable offset = high watermark = 4

The open transaction spans partitions 0 and 1 and stays open until the module's end (transaction.timeout.ms 10 min).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.oracle.java_consumer import consumer_view

pytestmark = [pytest.mark.kafka]

METADATA = '{"topologyId":"ledger-topology-1-1763780000","taskId":1,"threadName":"t"}'
RC = ("--isolation-level", "read_committed")


class Ledger:
    def __init__(self, topic: str, offsets: dict[int, list[int]], producer) -> None:
        self.topic, self.offsets, self.producer = topic, offsets, producer


@pytest.fixture(scope="module")
def ledger(kafka):
    from confluent_kafka import Producer

    topic = f"ledger-{os.getpid()}-{int(time.time())}"
    kafka.create_topic(topic, 3)
    producer = Producer(
        {"bootstrap.servers": kafka.bootstrap, "transactional.id": topic, "transaction.timeout.ms": 600_000}
    )
    producer.init_transactions(60)
    offsets: dict[int, list[int]] = {0: [], 1: [], 2: []}

    def delivered(err, msg):
        assert err is None, err
        offsets[msg.partition()].append(msg.offset())

    def transaction(records: dict[int, int], end, timestamp: int | None = None) -> None:
        producer.begin_transaction()
        for partition, count in records.items():
            for i in range(count):
                producer.produce(
                    topic,
                    value=b"p%d-%d" % (partition, i),
                    partition=partition,
                    on_delivery=delivered,
                    **({"timestamp": timestamp} if timestamp else {}),
                )
        producer.flush(30)  # abort_transaction drops what is not sent yet: the aborted records must be in the log
        if end is not None:
            end(60)

    transaction({0: 3, 1: 2, 2: 3}, producer.commit_transaction)
    transaction({0: 2}, producer.abort_transaction)
    transaction({0: 2}, producer.commit_transaction)
    now = int(time.time() * 1000)
    producer.begin_transaction()
    for partition, age_s in ((0, 300), (1, 7200)):
        for i in range(2):
            producer.produce(
                topic, value=b"open-%d" % i, partition=partition, on_delivery=delivered, timestamp=now - age_s * 1000
            )
    producer.flush(30)
    assert offsets == {0: [0, 1, 2, 4, 5, 7, 8, 10, 11], 1: [0, 1, 3, 4], 2: [0, 1, 2]}, offsets
    yield Ledger(topic, offsets, producer)
    producer.abort_transaction(60)
    producer.flush(30)


def partitions(doc: dict, group: str) -> dict[int, dict]:
    return {p["partition"]: p for p in doc["partitions"] if p["consumer"] == group}


def findings(doc: dict, group: str) -> dict[int, dict]:
    return {
        f["partition"]: f
        for f in doc["findings"]
        if f["consumer"] == group and f["code"] in ("OPEN_TRANSACTION", "HANGING_TRANSACTION")
    }


def test_a_read_committed_spout_lags_to_the_last_stable_offset_and_waits_behind_the_open_transaction(
    cli, kafka, broker, names, ledger
):
    group = names("waiting")
    kafka.commit(group, ledger.topic, {0: 10, 1: 3, 2: 3}, METADATA)
    base = ("inspect", "--bootstrap-servers", broker.address, "--group", group, "--per-partition", "-o", "json")
    run = cli(*base, *RC)
    doc = run.json()
    rows = partitions(doc, group)
    assert {p: (r["log_end"], r["last_stable_offset"], r["lag"]) for p, r in rows.items()} == {
        0: (12, 10, 0),
        1: (5, 3, 0),
        2: (4, 4, 1),
    }
    # partition 2's lag of 1 is its commit marker: nothing waits, so its time lag is 0
    assert (rows[2]["time_lag_s"], rows[2]["time_lag_source"]) == (0.0, "caught-up")
    found = findings(doc, group)
    assert set(found) == {0, 1}
    assert (found[0]["code"], found[0]["severity"]) == ("OPEN_TRANSACTION", "warning")
    assert "open since" in found[0]["message"] and "(5m0" in found[0]["message"], found[0]["message"]
    assert "the 2 offsets from there to the log end 12 are held back" in found[0]["message"]
    assert (found[1]["code"], found[1]["severity"]) == ("HANGING_TRANSACTION", "error")
    assert "(2h00m), longer than the broker's transaction.max.timeout.ms (15m00s)" in found[1]["message"]
    assert run.exit_code == 1  # --fail-on error: the hanging transaction
    assert "isolation.level=read_committed" in doc["spout_settings"]

    # What a Java read_committed consumer is handed from the same commits: nothing from 10 (0) and 3 (1), and from 3
    # on partition 2 (the marker) nothing either; its end offsets are offctl's last stable offsets.
    for partition, commit in {0: 10, 1: 3, 2: 3}.items():
        view = consumer_view(broker.address, ledger.topic, {partition: commit})[partition]
        assert (view["end_offset"], view["position"], view["records"]) == (
            rows[partition]["last_stable_offset"],
            rows[partition]["last_stable_offset"],
            [],
        ), partition

    # The same commits judged as read_uncommitted spouts: the high watermark, no finding of a transaction.
    plain = cli(*base, "--fail-on", "never").json()
    rows = partitions(plain, group)
    assert {p: (r["last_stable_offset"], r["lag"]) for p, r in rows.items()} == {
        0: (None, 2),
        1: (None, 2),
        2: (None, 1),
    }
    assert not findings(plain, group)
    uncommitted = consumer_view(broker.address, ledger.topic, {0: 10, 1: 3, 2: 3}, isolation_level="read_uncommitted")
    assert {p: v["end_offset"] for p, v in uncommitted.items()} == {p: r["log_end"] for p, r in rows.items()}


@pytest.mark.zookeeper
def test_the_real_spout_with_each_isolation_level_emits_what_offctl_counts_as_its_lag(
    cli, kafka, broker, names, ledger
):
    """storm-kafka-client 2.8.3's KafkaSpout run on the ledger (tests/oracle/storm_client_spout.py), given
    isolation.level through KafkaSpoutConfig.Builder#setProp as a topology sets it (Storm itself never sets it:
    docs/storm.md), from its own commits at 2, 0 and 0. read_committed: it emits the committed transactions' records
    between its commit and the last stable offset, never the aborted ones, and nothing of the open transaction, so
    it stops at the last stable offset that offctl's --isolation-level read_committed counts the lag to.
    read_uncommitted (Kafka's default): it emits every record up to the log end, aborted and open ones too, as
    offctl's lag to the log end counts them."""
    from tests.oracle.storm_client_spout import run_client_spouts

    topology = "ledger-topology-1-1763780000"  # METADATA's: the spout's own commits
    commits = {0: 2, 1: 0, 2: 0}
    groups = {level: names(level) for level in ("read_uncommitted", "read_committed")}  # the JVM warms up on the first
    said = {}
    for level, group in groups.items():
        kafka.commit(group, ledger.topic, commits, METADATA)
        doc = cli(
            "inspect",
            "--bootstrap-servers",
            broker.address,
            "--group",
            group,
            "--isolation-level",
            level,
            "--storm-kafka-client-release",
            "2.8.8",
            "--per-partition",
            "--fail-on",
            "never",
            "-o",
            "json",
        ).json()
        said[level] = {
            p: (r["resumes_at"], r["lag"], r["last_stable_offset"] or r["log_end"])
            for p, r in partitions(doc, group).items()
        }
    ran = {
        r["name"]: r
        for r in run_client_spouts(
            "2.8.3",
            [
                {
                    "name": level,
                    "bootstrap_servers": broker.address,
                    "topic": ledger.topic,
                    "group_id": group,
                    # "all" stops at the log end, which read_committed never reaches: it runs to its deadline, 8 s
                    "topology_id": topology,
                    "emit": "all",
                    "ack": False,
                    "deadline_ms": 8000,
                    "kafka_props": {"isolation.level": level},
                }
                for level, group in groups.items()
            ],
        )
    }
    # what the ledger holds from each commit (fixture `ledger`): committed 0-2 | marker 3 | aborted 4 5 | marker 6 |
    # committed 7 8 | marker 9 | open 10 11 on partition 0; committed 0 1 | marker 2 | open 3 4 on 1; 0-2 | 3 on 2
    expected = {
        "read_committed": {0: [2, 7, 8], 1: [0, 1], 2: [0, 1, 2]},
        "read_uncommitted": {0: [2, 4, 5, 7, 8, 10, 11], 1: [0, 1, 3, 4], 2: [0, 1, 2]},
    }
    for level, r in ran.items():
        assert not r["errors"], r
        assert r["start_position"] == commits, r
        assert r["emitted"] == expected[level], (level, r)
        for p, (resumes_at, lag, head) in said[level].items():
            # offctl: where the spout resumes, and the lag it counts to the head the spout can reach (the last
            # stable offset or the log end); the spout emitted from there and nothing at or past that head
            assert resumes_at == commits[p] and lag == head - commits[p], (level, p, said[level])
            assert r["emitted"][p][0] == resumes_at and r["emitted"][p][-1] < head, (level, p, said[level], r)


def test_a_profile_key_sets_the_isolation_level_of_the_spouts_it_matches(cli, kafka, broker, names, ledger, tmp_path):
    group, other = names("ledger-client"), names("other-client")
    kafka.commit(group, ledger.topic, {0: 10}, METADATA)
    kafka.commit(other, ledger.topic, {0: 10}, METADATA)
    config = tmp_path / "config.toml"
    config.write_text(f'[[profiles]]\nname = "ledger"\nmatch = "{group}"\nisolation-level = "read_committed"\n')
    doc = cli(
        "inspect",
        "--config",
        str(config),
        "--bootstrap-servers",
        broker.address,
        "--group",
        group,
        "--group",
        other,
        "--per-partition",
        "--fail-on",
        "never",
        "-o",
        "json",
    ).json()
    assert (partitions(doc, group)[0]["lag"], partitions(doc, group)[0]["last_stable_offset"]) == (0, 10)
    assert (partitions(doc, other)[0]["lag"], partitions(doc, other)[0]["last_stable_offset"]) == (2, None)
    assert set(findings(doc, group)) == {0} and not findings(doc, other)
    shown = cli("config", "show", "--config", str(config), "-o", "json").json()
    assert {"name": "ledger", "sets": {"isolation-level": "read_committed"}}.items() <= {
        k: v for k, v in shown["profiles"][0].items() if k in ("name", "sets")
    }.items()


def test_an_isolation_level_offctl_does_not_know_is_a_usage_error(cli, tmp_path):
    result = cli("inspect", "--bootstrap-servers", "127.0.0.1:9", "--isolation-level", "READ_COMMITTED")
    assert result.exit_code == 2 and "read_committed" in result.stderr


def test_peek_counts_the_committed_aborted_and_markers_between_the_commit_and_the_last_stable_offset(
    cli, kafka, broker, names, ledger
):
    group = names("behind")
    kafka.commit(group, ledger.topic, {0: 0, 1: 3}, METADATA)
    inspected = partitions(
        cli(
            "inspect",
            "--bootstrap-servers",
            broker.address,
            "--group",
            group,
            *RC,
            "--per-partition",
            "--fail-on",
            "never",
            "-o",
            "json",
        ).json(),
        group,
    )
    assert (inspected[0]["lag"], inspected[0]["last_stable_offset"], inspected[0]["log_end"]) == (10, 10, 12)
    assert inspected[0]["time_lag_source"] == "message"

    doc = cli(
        "peek",
        "--bootstrap-servers",
        broker.address,
        "--group",
        group,
        *RC,
        "--partitions",
        "0,1",
        "--count",
        "20",
        "-o",
        "json",
    ).json()
    peeked = {p["partition"]: p for p in doc["partitions"]}
    java = consumer_view(broker.address, ledger.topic, {0: 0})[0]
    # the messages a read_committed spout is handed from its commit: the Java consumer's, to the last stable offset
    assert [m["offset"] for m in peeked[0]["messages"]] == java["records"] == [0, 1, 2, 7, 8]
    assert java["end_offset"] == java["position"] == peeked[0]["last_stable_offset"] == 10
    assert peeked[0]["to_last_stable"] == {
        "offsets": 10,
        "records": 5,
        "aborted": 2,
        "markers": 3,
        "markers_or_compacted": False,
    }
    assert peeked[0]["to_last_stable"]["records"] == len(java["records"])
    # at the last stable offset, below the log end: the open transaction's records, none handed yet
    assert peeked[1]["state"] == "held" and peeked[1]["to_last_stable"] is None
    assert "open transaction" in peeked[1]["why"] and "last stable offset 3" in peeked[1]["to_last_stable_why"]

    table = cli("peek", "--bootstrap-servers", broker.address, "--group", group, *RC, "--partitions", "0").stdout
    assert (
        "to the last stable offset 10: 10 offsets, 5 committed records the spout will be handed, 2 aborted "
        "records it skips, 3 transaction markers"
    ) in table


PROGRAM = str(Path(sys.executable).parent / "storm-kafka-monitor")


def test_storm_kafka_monitor_takes_the_spouts_isolation_level_from_its_consumer_properties(
    kafka, broker, names, ledger, tmp_path
):
    """Storm UI passes the spout's Kafka properties to storm-kafka-monitor in -c (TopologySpoutLag, v2.8.8: the
    config.* keys KafkaSpout.getComponentConfiguration copies): KafkaOffsetLagUtil's consumer then has the spout's
    isolation.level, and its seekToEnd under read_committed lands on the last stable offset."""
    group = names("monitored")
    kafka.commit(group, ledger.topic, {0: 0, 1: 3, 2: 3}, METADATA)
    props = tmp_path / "consumer.properties"
    props.write_text("isolation.level=read_committed\n")

    def heads(*extra: str) -> dict:
        result = subprocess.run(
            [PROGRAM, "-t", ledger.topic, "-g", group, "-b", broker.address, *extra],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "OFFCTL_DEADLINE": "20s"},
        )
        assert result.returncode == 0, result.stderr
        rows = json.loads(result.stdout)[ledger.topic]
        return {int(p): (r["logHeadOffset"], r["lag"]) for p, r in rows.items()}

    java = consumer_view(broker.address, ledger.topic, {0: 0, 1: 3, 2: 3})
    assert (
        heads("-c", str(props))
        == {p: (v["end_offset"], v["end_offset"] - c) for (p, v), c in zip(sorted(java.items()), (0, 3, 3))}
        == {0: (10, 10), 1: (3, 0), 2: (4, 1)}
    )
    assert heads() == {0: (12, 12), 1: (5, 2), 2: (4, 1)}
    bad = tmp_path / "bad.properties"
    bad.write_text("isolation.level=READ_COMMITTED\n")
    result = subprocess.run(
        [PROGRAM, "-t", ledger.topic, "-g", group, "-b", broker.address, "-c", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # the original's KafkaConsumer refuses the value (ConfigException), and Storm UI is told so in its failure line
    assert result.stdout.startswith("Unable to get offset lags for kafka. Reason: ")
    assert "isolation.level (not read_committed or read_uncommitted)" in result.stdout


def test_the_audit_sees_the_last_stable_offset_and_the_open_transaction_as_inspect_does(
    cli, spark, kafka, broker, names, ledger
):
    group = names("audited")
    kafka.commit(group, ledger.topic, {0: 10, 1: 3, 2: 0}, METADATA)
    flags = ("--bootstrap-servers", broker.address, "--group", group, *RC, "--fail-on", "never", "-o", "json")
    inspected, audited = cli("inspect", *flags).json(), cli("audit", *flags).json()
    fields = ("partition", "log_end", "last_stable_offset", "lag", "status")
    assert (
        [tuple(p[k] for k in fields) for p in audited["partitions"]]
        == [tuple(p[k] for k in fields) for p in inspected["partitions"]]
        == [(0, 12, 10, 0, "warning"), (1, 5, 3, 0, "error"), (2, 4, 4, 4, "ok")]
    )
    assert (
        [(f["partition"], f["code"]) for f in audited["findings"]]
        == [(f["partition"], f["code"]) for f in inspected["findings"]]
        == [(0, "OPEN_TRANSACTION"), (1, "HANGING_TRANSACTION")]
    )


def test_a_reset_to_latest_of_a_read_committed_spout_stops_at_the_last_stable_offset(cli, kafka, broker, names, ledger):
    """--to latest moves a read_committed spout where its consumer's seekToEnd would (the last stable offset), not
    past the open transaction, whose records it would then skip once committed."""
    group = names("reset")
    kafka.commit(group, ledger.topic, {0: 0, 1: 0, 2: 0}, METADATA)
    flags = (
        "reset",
        "--bootstrap-servers",
        broker.address,
        "--group",
        group,
        "--topic",
        ledger.topic,
        "--to",
        "latest",
        "--quiet-period",
        "0",
        "--force",
        "running-topology",
        "-o",
        "json",
    )
    committed = cli(*flags, *RC)
    assert committed.exit_code == 0, committed.stderr
    after = {c["partition"]: c["after"] for c in committed.json()["changes"]}
    assert after == {0: 10, 1: 3, 2: 4}
    assert "the last stable offset: the spout reads committed" in committed.stdout
    plain = cli(*flags)
    assert {c["partition"]: c["after"] for c in plain.json()["changes"]} == {0: 12, 1: 5, 2: 4}
    done = cli(*flags, *RC, "--execute", "--yes")
    assert done.exit_code == 0, done.stderr
    doc = cli(
        "inspect",
        "--bootstrap-servers",
        broker.address,
        "--group",
        group,
        *RC,
        "--per-partition",
        "--fail-on",
        "never",
        "-o",
        "json",
    ).json()
    assert {p["partition"]: (p["committed"], p["lag"]) for p in doc["partitions"]} == {0: (10, 0), 1: (3, 0), 2: (4, 0)}


@pytest.mark.parametrize("targeted", [False, True], ids=["whole-cluster", "targeted"])
@pytest.mark.parametrize("order", ["stable-first", "stable-after-queued"])
def test_the_adapter_reads_the_last_stable_offset_of_the_topics_asked_for_only(
    kafka, broker, ledger, names, targeted, order
):
    """A topic asked for with last_stable=True gets its last stable offsets, whether it was already queued for its log
    offsets or not; another topic gets none (no read_committed lookup is made for it)."""
    from offctl.adapters.kafka import KafkaStore

    other = names("plain")
    kafka.create_topic(other, 1)
    kafka.produce(other, 0, 3)
    store = KafkaStore(broker.address, targeted=targeted)
    try:
        if order == "stable-first":
            store.request_logs([ledger.topic], last_stable=True)
            store.request_logs([ledger.topic, other])
        else:
            store.request_logs([ledger.topic, other])
            store.logs() if targeted else None  # targeted: queued and sent before the stable ask
            store.request_logs([ledger.topic], last_stable=True)
        logs = store.logs()
    finally:
        store.close()
    assert {p: (log.log_end, log.last_stable) for p, log in logs[ledger.topic].items()} == {
        0: (12, 10),
        1: (5, 3),
        2: (4, 4),
    }
    assert (logs[other][0].log_end, logs[other][0].last_stable) == (3, None)
    assert not store.notes
