"""Commit expiry end to end against Apache Kafka: messages produced with old timestamps, a storm-kafka-client
spout's commit after them (with the Storm metadata the spout writes, which the broker keeps), inspect (the library
call and the real CLI), serve, and the adapter's DescribeConfigs of a broker.

Where offsets.retention.minutes comes from, each case on a real broker: the session's broker reports Kafka's
default, 10080, which it applies without a line in its server.properties; `guarded` (below) has 1440 in its
server.properties, and a principal it refuses DescribeConfigs on the cluster, for which --offsets-retention-minutes
is used, else 10080 assumed and said to be. LogAppendTime and a transaction marker at C - 1 are real too. No broker
expires offsets in a test's time: the expiry itself, the other guarantees and releases, and a broker that lacks
the setting are tested on plain data in tests/unit/test_expiry.py."""

from __future__ import annotations

import json
import signal
import time

import pytest

from offctl.adapters import servers
from offctl.core.records.model import Thresholds, iso_ms
from offctl.core.rules.profiles import Profiles
from offctl.core.storm.releases import FirstPoll, SpoutProfile
from offctl.pipeline.inspect import inspect
from offctl.render.report import report_document
from offctl.settings.connection import Connection
from offctl.settings.run import Estimates, ExpiryOptions, Reading, Selection
from tests.conftest import KafkaHelper
from tests.e2e.test_serve import scrape, start_serve, wait_for

pytestmark = [pytest.mark.kafka]

DAY, HOUR = 86_400_000, 3_600_000
# The metadata storm-kafka-client's KafkaSpout commits with (CommitMetadata, v1.2.4 and v2.8.8): the broker keeps it
METADATA = json.dumps(
    {"topologyId": "orders-topology-1-1700000000", "taskId": 3, "threadName": "Thread-11-kafka-spout-executor[3 3]"},
    separators=(",", ":"),
)


# --- a spout's idle partition -------------------------------------------------------------------------------------


@pytest.fixture
def idle(kafka, names, broker):
    """orders: 2 partitions of 5 messages. Partition 0's were written a week less 2 h before `now`, partition 1's a
    day before; the spout committed 3 on partition 0 (acked message 2) and 5 on partition 1 (caught up). On the
    session's broker, or on `on` (a KafkaHelper) with the topic's `config`."""

    def make(now_ms: int, on: KafkaHelper = kafka, config: dict[str, str] | None = None):
        topic = names("orders")
        on.create_topic(topic, 2, config)
        for p, age in ((0, 7 * DAY - 2 * HOUR), (1, DAY)):
            on.produce_records(topic, p, [{"value": b"m%d" % o, "timestamp": now_ms - age + o} for o in range(5)])
        group = names("group")
        on.commit(group, topic, {0: 3, 1: 5}, METADATA)
        return topic, group, Connection(bootstrap_servers=on.bootstrap)

    return make


def by_partition(doc: dict) -> dict[int, tuple]:
    return {p["partition"]: (p["commit_expiry_s"], p["commit_expiry_source"]) for p in doc["partitions"]}


def risky(doc: dict) -> set[int]:
    return {f["partition"] for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"}


def test_inspect_warns_of_a_commit_that_expires_within_the_horizon(idle):
    """The broker reports offsets.retention.minutes 10080, Kafka's default, which it applies: that is used, and
    wins over the option given."""
    now = int(time.time()) * 1000  # near the broker's clock: messages older than the topic's retention may go
    topic, group, conn = idle(now)
    report = inspect(
        Reading(
            conn,
            Selection(groups=(group,)),
            Profiles(Thresholds()),
            Estimates(expiry=ExpiryOptions(retention_minutes=1440)),
        ),
        now_ms=now,
    )
    doc = report_document(report)
    # partition 0: message 2 was written at now - 7 d + 2 h + 2 ms, so the commit expires 2 h (less 2 ms) from now;
    # partition 1: message 4 a day ago, 6 days left
    assert by_partition(doc) == {0: ((2 * HOUR + 2) / 1000, "message"), 1: ((6 * DAY + 4) / 1000, "message")}
    assert doc["offsets_retention"] == {"minutes": 10080, "source": "broker", "why": None}
    assert (
        "--offsets-retention-minutes 1440: the broker reports offsets.retention.minutes=10080, which is used"
        in report.notes
    )
    assert not [f for f in doc["findings"] if f["code"] == "FOREIGN_COMMIT"]  # the broker kept the Storm metadata
    risks = [f for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"]
    assert [(f["topic"], f["partition"], f["severity"]) for f in risks] == [(topic, 0, "warning")]
    message = risks[0]["message"]
    assert f"{topic}/0: commit 3 of group {group} may expire in 2h00m, at {iso_ms(now + 2 * HOUR + 2)}" in message
    assert "offsets.retention.minutes=10080 (the broker's)" in message
    assert "UNCOMMITTED_EARLIEST seeks to the log start (0): the 3 messages it already processed" in message
    row = next(p for p in doc["partitions"] if p["partition"] == 0)
    assert row["status"] == "warning"  # the finding is on its row, and in the consumer's counts
    consumer = doc["consumers"][0]
    assert "COMMIT_EXPIRY_RISK" in consumer["finding_codes"] and consumer["findings"]["warning"] >= 1
    # a narrower horizon: nothing within it
    quiet = inspect(
        Reading(
            conn, Selection(groups=(group,)), Profiles(Thresholds()), Estimates(expiry=ExpiryOptions(horizon_s=3600))
        ),
        now_ms=now,
    )
    assert not [f for f in quiet.findings if f.code == "COMMIT_EXPIRY_RISK"]
    assert not [n for n in quiet.notes if "offsets.retention.minutes" in n]  # no option, nothing to say
    # LATEST: the message says what is skipped instead
    latest = inspect(
        Reading(
            conn,
            Selection(groups=(group,)),
            Profiles(Thresholds(spout=SpoutProfile(first_poll=FirstPoll.UNCOMMITTED_LATEST))),
        ),
        now_ms=now,
    )
    said = [f.message for f in latest.findings if f.code == "COMMIT_EXPIRY_RISK"]
    assert len(said) == 1 and "UNCOMMITTED_LATEST seeks to the log end: the 2 messages not yet processed" in said[0]


def test_the_cli_uses_the_brokers_retention_and_refuses_hostile_values(cli, idle, broker):
    topic, group, _ = idle(int(time.time() * 1000))
    flags = ["--bootstrap-servers", broker.address, "--group", group, "-o", "json"]
    result = cli("inspect", *flags)
    assert result.exit_code == 0, result.stderr  # a warning does not fail by default
    doc = result.json()
    assert doc["offsets_retention"] == {"minutes": 10080, "source": "broker", "why": None}
    got = by_partition(doc)
    assert got[0][1] == got[1][1] == "message"
    assert 2 * 3600 - 600 < got[0][0] <= 2 * 3600 and 6 * 86400 - 600 < got[1][0] <= 6 * 86400
    assert risky(doc) == {0}
    assert "offsets.retention.minutes" not in result.stderr  # nothing assumed, no option overridden
    # the option: the broker's own value wins, and stderr says so
    told = cli("inspect", *flags, "--offsets-retention-minutes", "1440", "--fail-on", "warning")
    assert told.exit_code == 1, told.stderr  # partition 0's warning
    doc = told.json()
    assert doc["offsets_retention"]["source"] == "broker" and risky(doc) == {0}
    assert "--offsets-retention-minutes 1440: the broker reports offsets.retention.minutes=10080" in told.stderr
    # AT_MOST_ONCE commits after every poll: not estimated, and the skipped check says why
    most = cli("inspect", *flags, "--processing-guarantee", "AT_MOST_ONCE")
    assert most.exit_code == 0, most.stderr
    doc = most.json()
    assert set(by_partition(doc).values()) == {(None, None)} and doc["offsets_retention"] is None
    assert any(s.startswith("COMMIT_EXPIRY_RISK (AT_MOST_ONCE") for s in doc["checks_skipped"])
    for bad in (
        ["--offsets-retention-minutes", "0"],
        ["--offsets-retention-minutes", "-5"],
        ["--offsets-retention-minutes", "2147483648"],
        ["--offsets-retention-minutes", "ten"],
        ["--commit-expiry-horizon", "-1"],
        ["--commit-expiry-horizon", "nan"],
        ["--commit-expiry-horizon", "inf"],
    ):
        refused = cli("inspect", *flags, *bad)
        assert refused.exit_code == 2 and bad[0] in refused.stderr and not refused.stdout, bad


def test_a_broker_set_to_a_day_is_read_and_a_principal_refused_its_config_gets_the_option_or_the_default(
    cli, idle, guarded, guarded_kafka
):
    """offsets.retention.minutes 1440 in the broker's server.properties: read, and both commits are past it. The
    same broker to a principal without DescribeConfigs on the cluster: --offsets-retention-minutes, else Kafka's
    default assumed (here wrongly: the broker expires them after a day), said in the document and on stderr."""
    topic, group, _ = idle(int(time.time() * 1000), guarded_kafka, {"retention.ms": str(30 * DAY)})
    operator = ["inspect", "--bootstrap-servers", guarded.broker.address, "--group", group, "-o", "json"]
    result = cli(*operator, "--offsets-retention-minutes", "10080", "--fail-on", "warning")
    assert result.exit_code == 1, result.stderr
    doc = result.json()
    assert doc["offsets_retention"] == {"minutes": 1440, "source": "broker", "why": None}
    assert risky(doc) == {0, 1} and all(s < 0 for s, _ in by_partition(doc).values())
    assert "--offsets-retention-minutes 10080: the broker reports offsets.retention.minutes=1440" in result.stderr

    storm = ["inspect", *guarded.storm_flags, "--group", group, "-o", "json"]
    assumed = cli(*storm)
    assert assumed.exit_code == 0, assumed.stderr  # a warning, and the rest of the report stands
    doc = assumed.json()
    retention = doc["offsets_retention"]
    assert (retention["minutes"], retention["source"]) == (10080, "assumed")
    assert retention["why"].startswith("a describe-configs request failed: ")
    assert "Cluster authorization failed" in retention["why"] and not doc["incomplete"]
    assert risky(doc) == {0} and by_partition(doc)[1][0] > 5 * 86400
    assert "commit expiry assumes offsets.retention.minutes=10080, Kafka's default" in assumed.stderr
    [finding] = [f["message"] for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"]
    assert "offsets.retention.minutes=10080 (assumed: Kafka's default since 2.0" in finding
    told = cli(*storm, "--offsets-retention-minutes", "1440")
    assert told.exit_code == 0, told.stderr
    doc = told.json()
    assert (doc["offsets_retention"]["minutes"], doc["offsets_retention"]["source"]) == (1440, "option")
    assert risky(doc) == {0, 1} and all(s < 0 for s, _ in by_partition(doc).values())
    assert "commit expiry assumes" not in told.stderr


def test_log_append_time_dates_the_commit_by_when_the_broker_wrote_the_message(kafka, names, broker):
    """message.timestamp.type LogAppendTime: the broker stamps each message with its own clock, whatever the
    producer said (a week ago here), so the acked message dates the commit by when it was written."""
    topic, group = names("appended"), names("group")
    kafka.create_topic(topic, 1, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    kafka.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": before - 7 * DAY} for o in range(3)])
    after = int(time.time() * 1000)
    kafka.commit(group, topic, {0: 2}, METADATA)
    report = inspect(
        Reading(Connection(bootstrap_servers=broker.address), Selection(groups=(group,)), Profiles(Thresholds())),
        now_ms=after,
    )
    [(seconds, source)] = by_partition(report_document(report)).values()
    assert source == "message" and (7 * DAY - (after - before)) / 1000 <= seconds <= 7 * DAY / 1000
    assert not [f for f in report.findings if f.code == "COMMIT_EXPIRY_RISK"]


def test_a_commit_after_a_transaction_marker_has_no_message_to_date_it_by(kafka, names, broker):
    """A transactional producer's 3 messages and its commit marker (offset 3, which no consumer is handed): a
    spout caught up commits 4, and C - 1 is the marker."""
    from confluent_kafka import Producer

    topic, group = names("transactional"), names("group")
    kafka.create_topic(topic, 1)
    producer = Producer({"bootstrap.servers": broker.address, "transactional.id": names("tx")})
    producer.init_transactions(30)
    producer.begin_transaction()
    for o in range(3):
        producer.produce(topic, b"m%d" % o, partition=0)
    producer.commit_transaction(30)
    kafka.commit(group, topic, {0: 4}, METADATA)
    doc = report_document(
        inspect(
            Reading(Connection(bootstrap_servers=broker.address), Selection(groups=(group,)), Profiles(Thresholds()))
        )
    )
    [row] = doc["partitions"]
    assert (row["log_end"], row["lag"]) == (4, 0)
    assert (row["commit_expiry_s"], row["commit_expiry_source"]) == (None, "no-message")
    assert not [f for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"]


def test_a_budget_of_0_leaves_the_commits_undated_and_the_report_complete(cli, idle, broker):
    topic, group, _ = idle(int(time.time() * 1000))
    result = cli(
        "inspect", "--bootstrap-servers", broker.address, "--group", group, "-o", "json", "--time-lag-budget", "0"
    )
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert set(by_partition(doc).values()) == {(None, "unread")} and not doc["incomplete"]
    assert not [f for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"]


def test_serve_exports_the_headroom_and_dates_a_commit_it_saw_move(kafka, idle, broker):
    """Cycles every 3 s: the headroom from the message first; once serve has seen the commit move, from the cycle
    before that (later than the week-old message), in /status.json's source."""
    topic, group, _ = idle(int(time.time() * 1000))
    proc, port = start_serve("--bootstrap-servers", broker.address, "--group", group, "--interval", "3")
    try:

        def expiry(partition: int):
            status, body = scrape(port, "/status.json")
            if status != 200:
                return None
            doc = json.loads(body)
            return next(
                (
                    (p["commit_expiry_s"], p["commit_expiry_source"])
                    for p in doc["partitions"]
                    if p["partition"] == partition and p["commit_expiry_source"]
                ),
                None,
            )

        first = wait_for(lambda: expiry(0), 60)
        assert first[1] == "message" and 2 * 3600 - 600 < first[0] <= 2 * 3600
        text = scrape(port)[1]
        assert "offctl_partition_commit_expiry_seconds{" in text
        kafka.commit(group, topic, {0: 4}, METADATA)  # the spout acked message 3
        moved = wait_for(lambda: (e := expiry(0)) and e[1] == "moved" and e, 60)
        assert 7 * 86400 - 120 < moved[0] <= 7 * 86400
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_the_adapter_reads_the_brokers_setting_and_says_why_where_it_cannot_and_never_fails(broker, guarded):
    """KafkaStore.read_broker_config: Kafka's default as the broker reports it, a value set in server.properties, a
    setting no broker has, a principal refused DescribeConfigs on the cluster, and no broker at all; none raises."""
    from offctl.adapters.kafka import KafkaStore

    def read(address: str, names: list[str], timeout: float = 10, config: dict | None = None) -> tuple[dict, str, list]:
        store = KafkaStore(address, timeout=timeout, config=config)
        try:
            return (*store.read_broker_config(names), store.notes)
        finally:
            store.close()

    assert read(broker.address, ["offsets.retention.minutes"]) == ({"offsets.retention.minutes": "10080"}, "", [])
    assert read(guarded.broker.address, ["offsets.retention.minutes"]) == (
        {"offsets.retention.minutes": "1440"},
        "",
        [],
    )
    found, why, _ = read(broker.address, ["offsets.retention.minutes", "offctl.no.such.setting"])
    assert found == {"offsets.retention.minutes": "10080"}
    assert why.startswith("broker ") and why.endswith("does not report offctl.no.such.setting")
    found, why, notes = read(guarded.sasl, ["offsets.retention.minutes"], config=guarded.storm_config)
    assert found == {} and why.startswith("a describe-configs request failed: ") and not notes
    assert "Cluster authorization failed" in why and "storm-secret" not in why
    found, why, notes = read(f"127.0.0.1:{servers.free_port()}", ["offsets.retention.minutes"], 1)  # none there
    assert found == {} and why.startswith("a describe-configs request ") and not notes
