"""Commit expiry end to end against the real broker: messages produced with old timestamps, a group's commit after
them, inspect (the library call with a fixed now, and the real CLI) and serve.

Tansu answers DescribeConfigs for a broker but reports no offsets.retention.minutes, so these runs use
--offsets-retention-minutes or Kafka's default, assumed; a broker that reports its own value, one that refuses
(ACLs), LogAppendTime, gaps and the other guarantees' rules are tested on plain data in tests/test_expiry.py.
Tansu also drops commit metadata (the commits read as FOREIGN_COMMIT; UNCOMMITTED_EARLIEST, the default, still
resumes from them)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from offctl.config import Connection
from offctl.core.behaviour import FirstPoll, SpoutProfile
from offctl.core.model import Thresholds
from offctl.inspect import ExpiryOptions, Selection, inspect
from offctl.render import report_document
from tests.test_serve import scrape, start_serve, wait_for

pytestmark = [pytest.mark.kafka]

DAY, HOUR = 86_400_000, 3_600_000
NOW = 1_763_776_800_000  # 2025-11-22T02:00:00.000Z: the library call's capture time


@pytest.fixture
def idle(kafka, names, broker):
    """orders: 2 partitions of 5 messages. Partition 0's were written a week less 2 h before `now`, partition 1's a
    day before; the group committed 3 on partition 0 (acked message 2) and 5 on partition 1 (caught up)."""

    def make(now_ms: int):
        topic = names("orders")
        kafka.create_topic(topic, 2)
        for p, age in ((0, 7 * DAY - 2 * HOUR), (1, DAY)):
            kafka.produce_records(topic, p, [{"value": b"m%d" % o, "timestamp": now_ms - age + o} for o in range(5)])
        group = names("group")
        kafka.commit(group, topic, {0: 3, 1: 5})
        return topic, group, Connection(bootstrap_servers=broker.address)

    return make


def by_partition(doc: dict) -> dict[int, tuple]:
    return {p["partition"]: (p["commit_expiry_s"], p["commit_expiry_source"]) for p in doc["partitions"]}


def test_inspect_warns_of_a_commit_that_expires_within_the_horizon(idle):
    topic, group, conn = idle(NOW)
    report = inspect(conn, Selection(groups=(group,)), Thresholds(), now_ms=NOW,
                     expiry_options=ExpiryOptions(retention_minutes=10080))
    doc = report_document(report)
    # partition 0: message 2 was written at NOW - 7 d + 2 h + 2 ms, so the commit expires 2 h (less 2 ms) from now;
    # partition 1: message 4 a day ago, 6 days left
    assert by_partition(doc) == {0: ((2 * HOUR + 2) / 1000, "message"), 1: ((6 * DAY + 4) / 1000, "message")}
    retention = doc["offsets_retention"]
    assert (retention["minutes"], retention["source"]) == (10080, "option")
    assert retention["why"].endswith("does not report offsets.retention.minutes")  # Tansu describes a broker, without it
    risks = [f for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"]
    assert [(f["topic"], f["partition"], f["severity"]) for f in risks] == [(topic, 0, "warning")]
    message = risks[0]["message"]
    assert f"{topic}/0: commit 3 of group {group} may expire in 2h00m, at 2025-11-22T04:00:00.002Z" in message
    assert "(--offsets-retention-minutes; the broker does not report it)" in message
    assert "UNCOMMITTED_EARLIEST seeks to the log start (0): the 3 messages it already processed" in message
    row = next(p for p in doc["partitions"] if p["partition"] == 0)
    assert row["status"] == "warning"  # the finding is on its row, and in the consumer's counts
    consumer = doc["consumers"][0]
    assert "COMMIT_EXPIRY_RISK" in consumer["finding_codes"] and consumer["findings"]["warning"] >= 1
    # a narrower horizon: nothing within it
    quiet = inspect(conn, Selection(groups=(group,)), Thresholds(), now_ms=NOW,
                    expiry_options=ExpiryOptions(horizon_s=3600, retention_minutes=10080))
    assert not [f for f in quiet.findings if f.code == "COMMIT_EXPIRY_RISK"]
    # LATEST: the message says what is skipped instead
    latest = inspect(conn, Selection(groups=(group,)),
                     Thresholds(spout=SpoutProfile(first_poll=FirstPoll.UNCOMMITTED_LATEST)), now_ms=NOW,
                     expiry_options=ExpiryOptions(retention_minutes=10080))
    said = [f.message for f in latest.findings if f.code == "COMMIT_EXPIRY_RISK"]
    assert len(said) == 1 and "UNCOMMITTED_LATEST seeks to the log end: the 2 messages not yet processed" in said[0]


def test_the_cli_assumes_kafkas_default_and_says_so_and_refuses_hostile_values(cli, idle, broker):
    topic, group, _ = idle(int(time.time() * 1000))
    flags = ["--bootstrap-servers", broker.address, "--group", group, "-o", "json"]
    result = cli("inspect", *flags)
    assert result.exit_code == 0, result.stderr  # a warning does not fail by default
    doc = result.json()
    assert doc["offsets_retention"]["minutes"] == 10080 and doc["offsets_retention"]["source"] == "assumed"
    got = by_partition(doc)
    assert got[0][1] == got[1][1] == "message"
    assert 2 * 3600 - 600 < got[0][0] <= 2 * 3600 and 6 * 86400 - 600 < got[1][0] <= 6 * 86400
    assert [f["partition"] for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"] == [0]
    assert "commit expiry assumes offsets.retention.minutes=10080" in result.stderr
    # the option: a day's retention puts partition 1 (a day old) past its expiry, partition 0 long past
    short = cli("inspect", *flags, "--offsets-retention-minutes", "1440", "--fail-on", "warning")
    assert short.exit_code == 1, short.stderr
    doc = short.json()
    assert doc["offsets_retention"]["source"] == "option"
    assert {f["partition"] for f in doc["findings"] if f["code"] == "COMMIT_EXPIRY_RISK"} == {0, 1}
    assert all(s < 0 for s, _ in by_partition(doc).values())
    # AT_MOST_ONCE commits after every poll: not estimated, and the skipped check says why
    most = cli("inspect", *flags, "--processing-guarantee", "AT_MOST_ONCE")
    assert most.exit_code == 0, most.stderr
    doc = most.json()
    assert set(by_partition(doc).values()) == {(None, None)} and doc["offsets_retention"] is None
    assert any(s.startswith("COMMIT_EXPIRY_RISK (AT_MOST_ONCE") for s in doc["checks_skipped"])
    for bad in (["--offsets-retention-minutes", "0"], ["--offsets-retention-minutes", "-5"],
                ["--offsets-retention-minutes", "2147483648"], ["--offsets-retention-minutes", "ten"],
                ["--commit-expiry-horizon", "-1"], ["--commit-expiry-horizon", "nan"],
                ["--commit-expiry-horizon", "inf"]):
        refused = cli("inspect", *flags, *bad)
        assert refused.exit_code == 2 and bad[0] in refused.stderr and not refused.stdout, bad


def test_a_budget_of_0_leaves_the_commits_undated_and_the_report_complete(cli, idle, broker):
    topic, group, _ = idle(int(time.time() * 1000))
    result = cli("inspect", "--bootstrap-servers", broker.address, "--group", group, "-o", "json",
                 "--time-lag-budget", "0")
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
            return next(((p["commit_expiry_s"], p["commit_expiry_source"]) for p in doc["partitions"]
                         if p["partition"] == partition and p["commit_expiry_source"]), None)

        first = wait_for(lambda: expiry(0), 60)
        assert first[1] == "message" and 2 * 3600 - 600 < first[0] <= 2 * 3600
        text = scrape(port)[1]
        assert "offctl_partition_commit_expiry_seconds{" in text
        kafka.commit(group, topic, {0: 4})  # the spout acked message 3
        moved = wait_for(lambda: (e := expiry(0)) and e[1] == "moved" and e, 60)
        assert 7 * 86400 - 120 < moved[0] <= 7 * 86400
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_the_adapter_says_why_the_broker_does_not_report_the_retention_and_never_fails(broker):
    """KafkaStore.read_broker_config: Tansu describes its broker without offsets.retention.minutes; a broker that
    does not answer leaves it unreported, with the reason, within the timeout; neither raises."""
    from offctl.adapters import servers
    from offctl.adapters.kafka import KafkaStore

    store = KafkaStore(broker.address, timeout=5)
    try:
        found, why = store.read_broker_config(["offsets.retention.minutes"])
    finally:
        store.close()
    assert found == {} and why.startswith("broker ") and why.endswith("does not report offsets.retention.minutes")
    gone = KafkaStore(f"127.0.0.1:{servers.free_port()}", timeout=1)  # nothing listens there
    try:
        found, why = gone.read_broker_config(["offsets.retention.minutes"])
    finally:
        gone.close()
    assert found == {} and why.startswith("a describe-configs request ") and not gone.notes
