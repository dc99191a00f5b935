"""Retention risk end to end against the real ZooKeeper and Apache Kafka: the adapter's DescribeConfigs, inspect
(the library call with a given now, and the real CLI) and serve, with messages produced at known timestamps.

What Apache Kafka answers to DescribeConfigs of a topic: every config, set on the topic or not. A topic without
retention.ms reports the one the broker applies: Kafka's default, 7 days, on the session's broker; log.retention.hours
6 from the server.properties of `guarded` (tests/conftest.py), which also refuses DescribeConfigs to a
principal: there --topic-retention is used, else there is no figure. cleanup.policy compact is real too. The
messages are written hours before the broker's own clock, not years: a broker deletes a segment older than its
retention at its next check (every 5 minutes), which would move the log start under a test. The rules on every
figure, each spout release's behaviour, and a broker that has no answer are tested on plain data in
tests/unit/test_retention.py."""

from __future__ import annotations

import signal
import time

import pytest

from offctl.core.records.model import Thresholds, TopicRetention
from offctl.core.rules.profiles import Profiles
from offctl.pipeline.inspect import exit_code, inspect
from offctl.render.report import report_document
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Selection
from tests.conftest import storm_record
from tests.e2e.test_serve import metric, scrape, start_serve, wait_for

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

H = 3_600_000
M = 60_000
WEEK = 7 * 24 * H  # Kafka's default retention.ms (log.retention.hours 168)


def test_the_adapter_reads_what_the_broker_applies_defaults_included(kafka, broker, names, guarded, guarded_kafka):
    """KafkaStore.read_topic_configs: what is set on the topic, and for the rest the value the broker applies,
    which it reports as a default (DEFAULT_CONFIG) even where it comes from its server.properties; a topic that
    does not exist and a principal refused DescribeConfigs say why; a name Kafka cannot have is never sent."""
    from offctl.adapters.kafka import KafkaStore

    kept, plain, compacted, forever = names("kept"), names("plain"), names("compacted"), names("forever")
    kafka.create_topic(
        kept, 1, {"retention.ms": "7200000", "retention.bytes": "1000000", "cleanup.policy": "compact,delete"}
    )
    kafka.create_topic(plain, 1)
    kafka.create_topic(compacted, 1, {"cleanup.policy": "compact"})
    kafka.create_topic(forever, 1, {"retention.ms": "-1"})
    absent = names("absent")
    store = KafkaStore(broker.address, timeout=10)
    try:
        got = store.read_topic_configs([kept, plain, compacted, forever, absent, "not a topic"])
    finally:
        store.close()
    assert got[kept] == TopicRetention(kept, 7_200_000, 1_000_000, "compact,delete")
    assert got[plain] == TopicRetention(plain, WEEK, -1, "delete")  # Kafka's defaults, as the broker applies them
    assert got[compacted] == TopicRetention(compacted, WEEK, -1, "compact")
    assert got[forever] == TopicRetention(forever, -1, -1, "delete")  # no time limit
    assert got[absent].retention_ms is None and "Unknown topic or partition" in got[absent].why
    assert "not a topic" not in got  # never sent
    assert not store.notes

    there = names("there")
    guarded_kafka.create_topic(there, 1)
    for address, config, expected in (
        (guarded.broker.address, None, TopicRetention(there, 6 * H, -1, "delete")),  # log.retention.hours 6
        (guarded.sasl, guarded.storm_config, None),
    ):
        store = KafkaStore(address, timeout=10, config=config)
        try:
            got = store.read_topic_configs([there])
        finally:
            store.close()
        if expected is not None:
            assert got == {there: expected}
        else:
            assert got[there].retention_ms is None and got[there].cleanup_policy is None
            assert got[there].why.startswith(f"the broker did not report topic {there}'s configs (")
            assert "Topic authorization failed" in got[there].why


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
    """Three topics of 4 messages each, written at `now` - 5 h 30 min + offset minutes (`now`: the start of the
    test, near the broker's clock). `kept` has retention.ms 6 h; `plain` none of its own (the broker's default
    applies, 7 days); `compacted` cleanup.policy compact. An old spout resumes at 1 on each (lag 3); a group at 3
    on kept (lag 1)."""
    return _aging(zk, kafka, names, zk_server, broker)


@pytest.fixture
def aging39(zk, kafka39, names, zk_server, broker39):
    """`aging` on Apache Kafka 3.9, the broker of the storm-kafka era, for the tests that read its old spouts alone."""
    return _aging(zk, kafka39, names, zk_server, broker39)


def _aging(zk, kafka, names, zk_server, broker):
    now = int(time.time()) * 1000
    kept, plain, compacted = names("kept"), names("plain"), names("compacted")
    kafka.create_topic(kept, 1, {"retention.ms": str(6 * H)})
    kafka.create_topic(plain, 1)
    kafka.create_topic(compacted, 1, {"cleanup.policy": "compact"})
    for topic in (kept, plain, compacted):
        kafka.produce_records(
            topic,
            0,
            [{"key": b"k%d" % o, "value": b"m%d" % o, "timestamp": now - 5 * H - 30 * M + o * M} for o in range(4)],
        )
    root = names.root + "/spouts"
    for spout, topic in (("on-kept", kept), ("on-plain", plain), ("on-compacted", compacted)):
        zk.create(f"{root}/{spout}/partition_0", storm_record(topic, 0, 1), makepath=True)
    zk.ensure_path(names.root + "/storm/storms")
    group = names("group")
    kafka.commit(group, kept, {0: 3})

    class Aging:
        pass

    a = Aging()
    a.now, a.kept, a.plain, a.compacted, a.group, a.root = now, kept, plain, compacted, group, root
    a.conn = Connection(
        zk=zk_server.address, zk_roots=(root,), bootstrap_servers=broker.address, storm_root=names.root + "/storm"
    )
    a.flags = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        names.root + "/storm",
        "--group",
        group,
    ]
    return a


def rooms(doc: dict) -> dict:
    return {
        (p["consumer"], p["topic"]): (p["lag"], p["retention_headroom_s"], p["retention_source"])
        for p in doc["partitions"]
    }


def test_inspect_estimates_the_headroom_from_the_message_and_the_brokers_retention(aging):
    """The broker reports every topic's retention.ms; --topic-retention for one of them changes nothing, and a note
    says the broker's is used."""
    report = inspect(
        Reading(
            aging.conn, Selection((), (aging.group,)), Profiles(Thresholds(topic_retention_ms={aging.plain: 6 * H}))
        ),
        now_ms=aging.now,
    )
    doc = report_document(report)
    # message 1 was written at now - 5 h 29 min: 31 min left under 6 h; message 3 at now - 5 h 27 min: 33 min;
    # on plain message 1 has a week less 5 h 29 min left
    assert rooms(doc) == {
        ("on-kept", aging.kept): (3, 31 * 60.0, "broker"),
        ("on-plain", aging.plain): (3, (WEEK - 5 * H - 29 * M) / 1000, "broker"),
        ("on-compacted", aging.compacted): (3, None, "no-deletion"),
        (aging.group, aging.kept): (1, 33 * 60.0, "broker"),
    }
    assert f"--topic-retention {aging.plain}: the broker reports retention.ms {WEEK}, which is used" in report.notes
    warned = {(f["consumer"], f["code"]): f["message"] for f in doc["findings"] if f["code"].startswith("RETENTION")}
    assert set(warned) == {("on-kept", "RETENTION_RISK"), (aging.group, "RETENTION_RISK")}
    assert "in 31m00s" in warned[("on-kept", "RETENTION_RISK")]
    assert "retention.ms 21600000 = 6h00m (the broker's)" in warned[("on-kept", "RETENTION_RISK")]
    assert "jumps to the log start" in warned[("on-kept", "RETENTION_RISK")]  # storm-kafka 1.2.4
    assert (
        "auto.offset.reset says: 'earliest' (the log start)" in warned[(aging.group, "RETENTION_RISK")]
    )  # AT_LEAST_ONCE
    assert {c["consumer"]: c["min_retention_headroom_s"] for c in doc["consumers"]}["on-kept"] == 31 * 60.0
    # warnings only, but for the old spouts' BROKER_INCOMPATIBLE: Kafka 4.4 refuses storm-kafka (aging39 serves it)
    assert {f.code for f in report.findings if f.severity.label == "error"} == {"BROKER_INCOMPATIBLE"}


def test_an_hour_later_the_message_is_past_its_topics_retention_and_not_the_brokers_default(aging39):
    report = inspect(Reading(aging39.conn, Selection((), ()), Profiles(Thresholds())), now_ms=aging39.now + H)
    doc = report_document(report)
    got = rooms(doc)
    assert got[("on-kept", aging39.kept)] == (3, -29 * 60.0, "broker")
    assert got[("on-plain", aging39.plain)] == (3, (WEEK - 6 * H - 29 * M) / 1000, "broker")
    assert got[("on-compacted", aging39.compacted)] == (3, None, "no-deletion")  # nothing is deleted by time
    [past] = [f for f in doc["findings"] if f["code"].startswith("RETENTION")]
    assert (past["code"], past["severity"], past["consumer"]) == ("RETENTION_EXCEEDED", "error", "on-kept")
    assert "29m00s past retention" in past["message"] and exit_code(report, "error") == 1


def test_the_cli_takes_the_options_and_refuses_hostile_values(cli, aging):
    result = cli(
        "inspect",
        *aging.flags,
        "-o",
        "json",
        "--topic-retention",
        f"{aging.plain}=6h",
        "--topic-retention",
        f"{aging.kept}=1d",
        "--retention-horizon",
        "1d",
        "--fail-on",
        "warning",
    )
    assert result.exit_code == 1, result.stderr  # RETENTION_RISK on kept
    doc = result.json()
    sources = {k: v[2] for k, v in rooms(doc).items()}
    assert sources == {
        ("on-kept", aging.kept): "broker",
        ("on-plain", aging.plain): "broker",
        ("on-compacted", aging.compacted): "no-deletion",
        (aging.group, aging.kept): "broker",
    }
    assert {(f["consumer"], f["code"]) for f in doc["findings"] if f["code"].startswith("RETENTION")} == {
        ("on-kept", "RETENTION_RISK"),
        (aging.group, "RETENTION_RISK"),
    }
    assert f"--topic-retention {aging.kept}: the broker reports retention.ms 21600000, which is used" in result.stderr
    assert f"--topic-retention {aging.plain}: the broker reports retention.ms {WEEK}, which is used" in result.stderr
    table = cli("inspect", *aging.flags, "--per-partition")
    assert "Retention" in table.stdout and "RETENTION_RISK" in table.stdout
    for bad in (
        ["--topic-retention", "orders"],
        ["--topic-retention", "orders=soon"],
        ["--topic-retention", "bad topic=1h"],
        ["--retention-horizon", "-6h"],
        ["--retention-horizon", "9" * 30],
    ):
        refused = cli("inspect", *aging.flags, *bad)
        assert refused.exit_code == 2, (bad, refused.stderr)
        assert "Traceback" not in refused.stderr and refused.stdout == ""
    env = cli("inspect", *aging.flags, "-o", "json", env={"OFFCTL_RETENTION_HORIZON": "nonsense"})
    assert env.exit_code == 2 and "--retention-horizon" in env.stderr


def test_a_topic_without_retention_ms_has_the_brokers_and_a_principal_refused_its_configs_the_option(
    cli, names, guarded, guarded_kafka
):
    """On a broker with log.retention.hours 6 in its server.properties, a topic with no retention.ms of its own is
    kept 6 h, and offctl estimates from that (not from Kafka's 7 days). A principal without DescribeConfigs on the
    topic gets no figure and the reason, then what --topic-retention states."""
    now = int(time.time()) * 1000
    topic, group = names("orders"), names("group")
    guarded_kafka.create_topic(topic, 1)
    guarded_kafka.produce_records(
        topic, 0, [{"value": b"m%d" % o, "timestamp": now - 5 * H - 30 * M + o * M} for o in range(4)]
    )
    guarded_kafka.commit(group, topic, {0: 1})
    selection = Selection(groups=(group,))

    operator = report_document(
        inspect(
            Reading(Connection(bootstrap_servers=guarded.broker.address), selection, Profiles(Thresholds())), now_ms=now
        )
    )
    assert rooms(operator) == {(group, topic): (3, 31 * 60.0, "broker")}
    [risk] = [f["message"] for f in operator["findings"] if f["code"] == "RETENTION_RISK"]
    assert "retention.ms 21600000 = 6h00m (the broker's)" in risk

    storm = Connection(bootstrap_servers=guarded.sasl, kafka_config=guarded.storm_config)
    refused = inspect(Reading(storm, selection, Profiles(Thresholds())), now_ms=now)
    assert rooms(report_document(refused)) == {(group, topic): (3, None, "unknown")}
    assert not [f for f in refused.findings if f.code.startswith("RETENTION")] and not refused.incomplete
    [note] = [n for n in refused.notes if n.startswith("retention risk not estimated")]
    assert f"topic {topic}'s configs" in note and "Topic authorization failed" in note
    assert note.endswith("(state it with --topic-retention)")
    stated = cli("inspect", *guarded.storm_flags, "--group", group, "-o", "json", "--topic-retention", f"{topic}=6h")
    assert stated.exit_code == 0, stated.stderr  # a warning
    doc = stated.json()
    [(lag, seconds, source)] = rooms(doc).values()
    assert (lag, source) == (3, "option") and 0 < seconds <= 31 * 60.0
    [risk] = [f["message"] for f in doc["findings"] if f["code"] == "RETENTION_RISK"]
    assert "retention.ms 21600000 = 6h00m (--topic-retention)" in risk
    assert "retention risk not estimated" not in stated.stderr


def test_serve_exports_the_headroom_of_a_message_near_deletion(kafka39, names, zk, zk_server, broker39):
    """Written 5 h ago under retention.ms 6 h: about an hour left, from the broker's config, at serve's own clock."""
    topic = names("near")
    kafka39.create_topic(topic, 1, {"retention.ms": str(6 * H)})
    written = int(time.time() * 1000) - 5 * H
    kafka39.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": written} for o in range(3)])
    root = names.root + "/spouts"
    zk.create(f"{root}/near/partition_0", storm_record(topic, 0, 1), makepath=True)
    proc, port = start_serve(
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker39.address,
        "--storm-root",
        names.root + "/storm",
        "--interval",
        "4",
    )
    try:
        text = wait_for(
            lambda: (
                (t := scrape(port)[1])
                and metric(t, "offctl_partition_retention_headroom_seconds", consumer="near") is not None
                and t
            ),
            60,
        )
        left = metric(text, "offctl_partition_retention_headroom_seconds", consumer="near")
        assert 0 < left <= 3600
        assert metric(text, "offctl_consumer_retention_headroom_min_seconds", consumer="near") == left
        assert metric(text, "offctl_consumer_findings", consumer="near", code="RETENTION_RISK") == 1.0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_a_spout_a_minute_behind_on_a_topic_kept_6h_does_not_warn_by_default(
    cli, kafka39, names, zk, zk_server, broker39
):
    """Issue 28: with the fixed 6 h default, every lagging partition of a topic kept 6 h or less warned ("may be
    deleted in 5h58m"). Now by default a quarter of the retention: a spout a minute behind is quiet, one 5h40m
    behind on the same retention warns; --retention-horizon 6h (or its variable) says the old rule explicitly."""
    fresh, old = names("fresh"), names("old")
    now = int(time.time() * 1000)
    root = names.root + "/spouts"
    for topic, written in ((fresh, now - 60_000), (old, now - 5 * H - 40 * 60_000)):
        kafka39.create_topic(topic, 1, {"retention.ms": str(6 * H)})
        kafka39.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": written} for o in range(3)])
        zk.create(f"{root}/on-{topic}/partition_0", storm_record(topic, 0, 1), makepath=True)
    flags = [
        "inspect",
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker39.address,
        "--storm-root",
        names.root + "/storm",
        "-o",
        "json",
    ]

    def risks(result) -> dict:
        assert result.exit_code == 0, result.stderr  # warnings only
        doc = result.json()
        assert {p["consumer"]: p["retention_source"] for p in doc["partitions"]} == {
            f"on-{fresh}": "broker",
            f"on-{old}": "broker",
        }
        return {f["consumer"]: f["message"] for f in doc["findings"] if f["code"] == "RETENTION_RISK"}

    default = risks(cli(*flags))
    assert set(default) == {f"on-{old}"} and "a quarter of the retention or less left" in default[f"on-{old}"]
    told = risks(cli(*flags, "--retention-horizon", "6h"))
    assert set(told) == {f"on-{fresh}", f"on-{old}"} and "within --retention-horizon" in told[f"on-{fresh}"]
    assert set(risks(cli(*flags, env={"OFFCTL_RETENTION_HORIZON": "6h"}))) == {f"on-{fresh}", f"on-{old}"}
    assert risks(cli(*flags, "--retention-horizon", "10m")) == {}
