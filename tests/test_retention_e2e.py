"""Retention risk end to end against the real ZooKeeper and the Tansu broker: the adapter's DescribeConfigs,
inspect (the library call with a fixed now, and the real CLI) and serve, with messages produced at known
timestamps (one record per request: Tansu's high watermark is wrong after a batch).

What Tansu answers to DescribeConfigs (confluent-kafka 2.16): the configs set when the topic was created, and
nothing else (no defaults, and an empty answer for a topic that does not exist); it never refuses. It keeps no
retention of its own. A refusal, cleanup.policy compact and the release-by-release behaviour are tested on
plain data in tests/test_retention.py."""

from __future__ import annotations

import signal
import time

import pytest

from offctl.config import Connection
from offctl.core.model import Thresholds, TopicRetention
from offctl.inspect import Selection, exit_code, inspect
from offctl.render import report_document
from tests.conftest import storm_record
from tests.test_serve import metric, scrape, start_serve, wait_for

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

H = 3_600_000
NOW = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z: the capture time the library call is given


def test_the_adapter_reads_what_the_broker_reports_and_none_where_it_does_not(kafka, broker, names):
    from offctl.adapters.kafka import KafkaStore

    kept, plain = names("kept"), names("plain")
    kafka.create_topic(kept, 1, {"retention.ms": "7200000", "retention.bytes": "1000000",
                                 "cleanup.policy": "compact,delete"})
    kafka.create_topic(plain, 1)
    store = KafkaStore(broker.address, timeout=10)
    try:
        got = store.read_topic_configs([kept, plain, names("absent"), "not a topic"])
    finally:
        store.close()
    assert got[kept] == TopicRetention(kept, 7_200_000, 1_000_000, "compact,delete")
    assert got[plain] == TopicRetention(plain)  # Tansu reports only what was set: not reported, no reason
    assert "not a topic" not in got  # never sent
    assert not store.notes


def test_a_broker_that_cannot_answer_gives_not_reported_with_the_reason():
    from offctl.adapters import servers
    from offctl.adapters.kafka import KafkaStore

    store = KafkaStore(f"127.0.0.1:{servers.free_port()}", timeout=1)  # nothing listens there
    try:
        got = store.read_topic_configs(["orders"])
    finally:
        store.close()
    assert got["orders"].retention_ms is None and "orders" in got["orders"].why


@pytest.fixture
def aging(zk, kafka, names, zk_server, broker):
    """Two topics of 4 messages each, written at NOW - 5 h 30 min + offset minutes. `kept` has retention.ms 6 h on
    the broker; `plain` none (the operator states it with --topic-retention). An old spout resumes at 1 on both
    (lag 3); a group at 3 on kept (lag 1)."""
    kept, plain = names("kept"), names("plain")
    kafka.create_topic(kept, 1, {"retention.ms": str(6 * H)})
    kafka.create_topic(plain, 1)
    for topic in (kept, plain):
        kafka.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": NOW - 5 * H - 30 * 60_000 + o * 60_000}
                                         for o in range(4)])
    root = names.root + "/spouts"
    zk.create(f"{root}/on-kept/partition_0", storm_record(kept, 0, 1), makepath=True)
    zk.create(f"{root}/on-plain/partition_0", storm_record(plain, 0, 1), makepath=True)
    zk.ensure_path(names.root + "/storm/storms")
    group = names("group")
    kafka.commit(group, kept, {0: 3})

    class Aging:
        pass

    a = Aging()
    a.kept, a.plain, a.group, a.root = kept, plain, group, root
    a.conn = Connection(zk=zk_server.address, zk_roots=(root,), bootstrap_servers=broker.address,
                        storm_root=names.root + "/storm")
    a.flags = ["--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", broker.address,
               "--storm-root", names.root + "/storm", "--group", group]
    return a


def rooms(doc: dict) -> dict:
    return {(p["consumer"], p["topic"]): (p["lag"], p["retention_headroom_s"], p["retention_source"])
            for p in doc["partitions"]}


def test_inspect_estimates_the_headroom_from_the_message_and_the_brokers_retention(aging):
    report = inspect(aging.conn, Selection((), (aging.group,)), Thresholds(topic_retention_ms={aging.plain: 6 * H}),
                     now_ms=NOW)
    doc = report_document(report)
    # message 1 was written at NOW - 5 h 29 min: 31 min left under 6 h; message 3 at NOW - 5 h 27 min: 33 min
    assert rooms(doc) == {
        ("on-kept", aging.kept): (3, 31 * 60.0, "broker"),
        ("on-plain", aging.plain): (3, 31 * 60.0, "option"),
        (aging.group, aging.kept): (1, 33 * 60.0, "broker"),
    }
    warned = {(f["consumer"], f["code"]): f["message"] for f in doc["findings"] if f["code"].startswith("RETENTION")}
    assert set(warned) == {("on-kept", "RETENTION_RISK"), ("on-plain", "RETENTION_RISK"),
                           (aging.group, "RETENTION_RISK")}
    assert "in 31m00s" in warned[("on-kept", "RETENTION_RISK")]
    assert "(the broker's)" in warned[("on-kept", "RETENTION_RISK")]
    assert "(--topic-retention)" in warned[("on-plain", "RETENTION_RISK")]
    assert "jumps to the log start" in warned[("on-kept", "RETENTION_RISK")]  # storm-kafka 1.2.4
    assert "auto.offset.reset says: 'earliest' (the log start)" in warned[(aging.group, "RETENTION_RISK")]  # AT_LEAST_ONCE
    assert {c["consumer"]: c["min_retention_headroom_s"] for c in doc["consumers"]}["on-kept"] == 31 * 60.0
    assert exit_code(report, "error") == 0  # warnings only


def test_without_a_retention_there_is_no_figure_and_an_hour_later_it_is_past(aging):
    report = inspect(aging.conn, Selection((), ()), Thresholds(), now_ms=NOW + H)
    doc = report_document(report)
    got = rooms(doc)
    assert got[("on-plain", aging.plain)] == (3, None, "unknown")  # not reported, not stated
    assert got[("on-kept", aging.kept)] == (3, -29 * 60.0, "broker")
    [past] = [f for f in doc["findings"] if f["code"].startswith("RETENTION")]
    assert (past["code"], past["severity"], past["consumer"]) == ("RETENTION_EXCEEDED", "error", "on-kept")
    assert "29m00s past retention" in past["message"] and exit_code(report, "error") == 1


def test_the_cli_takes_the_options_and_refuses_hostile_values(cli, aging):
    result = cli("inspect", *aging.flags, "-o", "json", "--topic-retention", f"{aging.plain}=6h",
                 "--topic-retention", f"{aging.kept}=1d", "--retention-horizon", "1d")
    assert result.exit_code == 1, result.stderr  # the messages are from 2025: long past retention
    doc = result.json()
    sources = {k: v[2] for k, v in rooms(doc).items()}
    assert sources == {("on-kept", aging.kept): "broker", ("on-plain", aging.plain): "option",
                       (aging.group, aging.kept): "broker"}
    assert f"--topic-retention {aging.kept}: the broker reports retention.ms 21600000, which is used" in result.stderr
    table = cli("inspect", *aging.flags, "--per-partition", "--topic-retention", f"{aging.plain}=6h")
    assert "Retention" in table.stdout and "RETENTION_EXCEEDED" in table.stdout
    for bad in (["--topic-retention", "orders"], ["--topic-retention", "orders=soon"],
                ["--topic-retention", "bad topic=1h"], ["--retention-horizon", "-6h"],
                ["--retention-horizon", "9" * 30]):
        refused = cli("inspect", *aging.flags, *bad)
        assert refused.exit_code == 2, (bad, refused.stderr)
        assert "Traceback" not in refused.stderr and refused.stdout == ""
    env = cli("inspect", *aging.flags, "-o", "json", env={"OFFCTL_RETENTION_HORIZON": "nonsense"})
    assert env.exit_code == 2 and "--retention-horizon" in env.stderr


def test_serve_exports_the_headroom_of_a_message_near_deletion(kafka, names, zk, zk_server, broker):
    """Written 5 h ago under retention.ms 6 h: about an hour left, from the broker's config, at serve's own clock."""
    topic = names("near")
    kafka.create_topic(topic, 1, {"retention.ms": str(6 * H)})
    written = int(time.time() * 1000) - 5 * H
    kafka.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": written} for o in range(3)])
    root = names.root + "/spouts"
    zk.create(f"{root}/near/partition_0", storm_record(topic, 0, 1), makepath=True)
    proc, port = start_serve("--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", broker.address,
                             "--storm-root", names.root + "/storm", "--interval", "4")
    try:
        text = wait_for(lambda: (t := scrape(port)[1]) and metric(
            t, "offctl_partition_retention_headroom_seconds", consumer="near") is not None and t, 60)
        left = metric(text, "offctl_partition_retention_headroom_seconds", consumer="near")
        assert 0 < left <= 3600
        assert metric(text, "offctl_consumer_retention_headroom_min_seconds", consumer="near") == left
        assert metric(text, "offctl_consumer_findings", consumer="near", code="RETENTION_RISK") == 1.0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_a_spout_a_minute_behind_on_a_topic_kept_6h_does_not_warn_by_default(cli, kafka, names, zk, zk_server, broker):
    """Issue 28: with the fixed 6 h default, every lagging partition of a topic kept 6 h or less warned ("may be
    deleted in 5h58m"). Now by default a quarter of the retention: a spout a minute behind is quiet, one 5h40m
    behind on the same retention warns; --retention-horizon 6h (or its variable) says the old rule explicitly."""
    fresh, old = names("fresh"), names("old")
    now = int(time.time() * 1000)
    root = names.root + "/spouts"
    for topic, written in ((fresh, now - 60_000), (old, now - 5 * H - 40 * 60_000)):
        kafka.create_topic(topic, 1, {"retention.ms": str(6 * H)})
        kafka.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": written} for o in range(3)])
        zk.create(f"{root}/on-{topic}/partition_0", storm_record(topic, 0, 1), makepath=True)
    flags = ["inspect", "--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", broker.address,
             "--storm-root", names.root + "/storm", "-o", "json"]

    def risks(result) -> dict:
        assert result.exit_code == 0, result.stderr  # warnings only
        doc = result.json()
        assert {p["consumer"]: p["retention_source"] for p in doc["partitions"]} == {
            f"on-{fresh}": "broker", f"on-{old}": "broker"}
        return {f["consumer"]: f["message"] for f in doc["findings"] if f["code"] == "RETENTION_RISK"}

    default = risks(cli(*flags))
    assert set(default) == {f"on-{old}"} and "a quarter of the retention or less left" in default[f"on-{old}"]
    told = risks(cli(*flags, "--retention-horizon", "6h"))
    assert set(told) == {f"on-{fresh}", f"on-{old}"} and "within --retention-horizon" in told[f"on-{fresh}"]
    assert set(risks(cli(*flags, env={"OFFCTL_RETENTION_HORIZON": "6h"}))) == {f"on-{fresh}", f"on-{old}"}
    assert risks(cli(*flags, "--retention-horizon", "10m")) == {}
