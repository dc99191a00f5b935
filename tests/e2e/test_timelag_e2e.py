"""Time lag end to end: inspect (the library call with a fixed now, and the real CLI), watch and serve against the
real ZooKeeper and broker, with messages produced at known timestamps; a LogAppendTime topic, where the broker's
clock replaces the producer's timestamp; a compacted gap, where the spout is handed the next message; a transaction's
commit marker, where no message waits; and a reset to a time, after which the spout is as far behind as that time.
Messages without a timestamp (message format v0, which Kafka 4 no longer writes) are in tests/unit/test_timelag.py, on
plain data."""

from __future__ import annotations

import re
import signal
import time

import pytest

from offctl.core.records.model import Thresholds
from offctl.core.rules.profiles import Profiles
from offctl.pipeline.inspect import inspect
from offctl.render.report import report_document
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Selection
from tests.conftest import T0, committed_transaction, compacted_at, compacted_topic, storm_record
from tests.e2e.test_serve import metric, scrape, start_serve, wait_for

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

NOW = T0 + 3_600_000  # an hour later: the capture time the library call is given


def ts(partition: int, offset: int) -> int:
    """When the test wrote message `offset` of `partition`: a minute apart per partition, a second per offset."""
    return T0 + partition * 60_000 + offset * 1000


@pytest.fixture
def timed(zk, kafka, names, zk_server, broker):
    """orders: 3 partitions of 5, 5 and 4 messages at ts(p, o), kept forever (retention.ms -1: written T0_DAYS_AGO
    days ago, they would be deleted by the broker's retention, and inspect would say so). An old spout resumes at 2
    (lag 3), 5 (lag 0, caught up) and 1 (lag 3); a group at 4 (lag 1) and 3 (lag 2), committed without Storm metadata
    (as a tool writes it: UNCOMMITTED_EARLIEST resumes from it all the same, and --all-groups of other tests leaves
    it out)."""
    return _timed(zk, kafka, names, zk_server, broker)


@pytest.fixture
def timed39(zk, kafka39, names, zk_server, broker39):
    """`timed` on Apache Kafka 3.9, the broker of the storm-kafka era, for the tests that read its old spout alone."""
    return _timed(zk, kafka39, names, zk_server, broker39)


def _timed(zk, kafka, names, zk_server, broker):
    topic = names("orders")
    kafka.create_topic(topic, 3, {"retention.ms": "-1"})
    for p, n in enumerate((5, 5, 4)):
        kafka.produce_records(topic, p, [{"value": b"m%d" % o, "timestamp": ts(p, o)} for o in range(n)])
    root = names.root + "/spouts"
    for p, offset in enumerate((2, 5, 1)):
        zk.create(f"{root}/orders/partition_{p}", storm_record(topic, p, offset), makepath=True)
    zk.ensure_path(names.root + "/storm/storms")
    group = names("group")
    kafka.commit(group, topic, {0: 4, 1: 3})

    class Timed:
        pass

    t = Timed()
    t.topic, t.group, t.root = topic, group, root
    t.conn = Connection(
        zk=zk_server.address, zk_roots=(root,), bootstrap_servers=broker.address, storm_root=names.root + "/storm"
    )
    t.flags = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        names.root + "/storm",
        "--spout",
        "orders",
        "--group",
        group,
    ]
    return t


def lags(doc: dict) -> dict[tuple, tuple]:
    return {(p["store"], p["partition"]): (p["lag"], p["time_lag_s"], p["time_lag_source"]) for p in doc["partitions"]}


def test_inspect_times_each_lagging_partition_from_the_message_it_resumes_at(timed):
    report = inspect(Reading(timed.conn, Selection(("orders",), (timed.group,)), Profiles(Thresholds())), now_ms=NOW)
    doc = report_document(report)
    assert lags(doc) == {
        ("zookeeper", 0): (3, (NOW - ts(0, 2)) / 1000, "message"),  # 3598.0: message 2 was written at T0 + 2 s
        ("zookeeper", 1): (0, 0.0, "caught-up"),  # nothing read for it
        ("zookeeper", 2): (3, (NOW - ts(2, 1)) / 1000, "message"),
        ("kafka", 0): (1, (NOW - ts(0, 4)) / 1000, "message"),
        ("kafka", 1): (2, (NOW - ts(1, 3)) / 1000, "message"),
    }
    assert {c["store"]: c["max_time_lag_s"] for c in doc["consumers"]} == {
        "zookeeper": (NOW - ts(0, 2)) / 1000,
        "kafka": (NOW - ts(0, 4)) / 1000,
    }
    assert not report.incomplete and not [n for n in report.notes if "time lag" in n]


def test_the_cli_gives_time_lags_in_json_and_the_per_partition_table(
    cli, timed39
):  # the old spout: Kafka 4.4 refuses it (BROKER_INCOMPATIBLE)
    result = cli("inspect", *timed39.flags, "-o", "json")
    assert result.exit_code == 0, result.stderr
    got = lags(result.json())
    assert {k: v[2] for k, v in got.items()} == {
        ("zookeeper", 0): "message",
        ("zookeeper", 1): "caught-up",
        ("zookeeper", 2): "message",
        ("kafka", 0): "message",
        ("kafka", 1): "message",
    }
    # one capture time for all: the figures differ by exactly the timestamps' difference
    assert round(got[("zookeeper", 0)][1] * 1000) - round(got[("kafka", 0)][1] * 1000) == ts(0, 4) - ts(0, 2)
    assert round(got[("zookeeper", 2)][1] * 1000) - round(got[("kafka", 1)][1] * 1000) == ts(1, 3) - ts(2, 1)
    table = cli("inspect", *timed39.flags, "--per-partition")
    assert table.exit_code == 0, table.stderr
    assert "Max time lag" in table.stdout and "Time lag" in table.stdout
    partitions = table.stdout.split("\nPartitions", 1)[1]
    assert re.search(r"│\s+5 │\s+0 │\s+0s │", partitions)  # the caught-up partition: log end 5, lag 0, 0s


def test_a_budget_of_0_reads_nothing_and_leaves_the_report_complete(
    cli, timed39
):  # the old spout: Kafka 4.4 refuses it (BROKER_INCOMPATIBLE)
    result = cli("inspect", *timed39.flags, "-o", "json", "--time-lag-budget", "0")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert lags(doc)[("zookeeper", 0)] == (3, None, "unread")
    assert lags(doc)[("zookeeper", 1)] == (0, 0.0, "caught-up")  # lag 0 needs no read
    assert {c["store"]: c["max_time_lag_s"] for c in doc["consumers"]} == {"zookeeper": 0.0, "kafka": None}
    assert not doc["incomplete"] and "time lag" not in result.stderr  # asked for: no note


def test_watch_shows_the_time_lag(cli, timed):
    result = cli("watch", *timed.flags, "--count", "1")
    assert result.exit_code == 0, result.stderr
    assert "Time lag" in result.stdout
    assert re.search(r"\b\d+d\d\dh\b", result.stdout)  # written T0_DAYS_AGO days ago: days behind, from the message


def test_watch_shows_the_commit_expiry_inspect_gives(cli, timed):
    """watch runs serve's cycle, the commit expiry included (issue 37: it had no expiry options and no column): its
    Expiry column shows inspect's estimate for the group's partitions, and none for the old spout's."""
    doc = cli("inspect", *timed.flags, "-o", "json", "--commit-expiry-horizon", "1h").json()
    sources = {(p["store"], p["partition"]): p["commit_expiry_source"] for p in doc["partitions"]}
    assert {sources[("kafka", 0)], sources[("kafka", 1)]} <= {"message", "moved"} and sources[("zookeeper", 0)] is None
    result = cli("watch", *timed.flags, "--count", "1", "--commit-expiry-horizon", "1h", env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "Consumer" in line)
    assert "Retention" in header and "Expiry" in header
    cells = {}
    for line in result.stdout.splitlines():
        parts = [c.strip() for c in line.split("│")[1:-1]]
        if len(parts) == 12 and parts[2].isdigit():  # a row's first line: Consumer, ..., Partition, ..., Expiry
            cells[("kafka" if parts[0].startswith("group") else "zookeeper", int(parts[2]))] = parts[9]
    kafka = [v for (store, _), v in cells.items() if store == "kafka"]
    assert kafka and all(re.fullmatch(r"-?\d+d\d\dh|-?\d+h\d\dm|-?\d+m\d\ds|-?\d+s", v) for v in kafka), cells
    assert all(v == "-" for (store, _), v in cells.items() if store == "zookeeper"), cells


def test_serve_times_lagging_partitions_from_the_message(zk, timed):
    """A cycle every 4 s reads within 2 s (half the interval): the message's figure, and the consumer's maximum,
    with their sources (0 message, 1 caught up)."""
    proc, port = start_serve(*timed.flags, "--interval", "4")
    try:
        text = wait_for(
            lambda: (
                (t := scrape(port)[1])
                and metric(t, "offctl_partition_time_lag_source", store="zookeeper", partition=0) is not None
                and t
            ),
            60,
        )
        assert metric(text, "offctl_partition_time_lag_source", store="zookeeper", partition=0) == 0.0
        assert metric(text, "offctl_partition_time_lag_source", store="zookeeper", partition=1) == 1.0
        assert metric(text, "offctl_partition_time_lag_seconds", store="zookeeper", partition=1) == 0.0
        behind = metric(text, "offctl_partition_time_lag_seconds", store="zookeeper", partition=0)
        assert behind > 300 * 86_400  # written T0_DAYS_AGO (330) days before the run
        assert metric(text, "offctl_consumer_time_lag_max_seconds", store="zookeeper") == behind
        assert metric(text, "offctl_consumer_time_lag_max_source", store="zookeeper") == 0.0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_serve_without_reads_falls_back_to_the_estimate_and_says_so(kafka, timed):
    """--time-lag-budget 0: no message is read; once the log end grows between cycles the history's estimate is
    served, with source 2; the caught-up partition stays exact (source 1)."""
    proc, port = start_serve(*timed.flags, "--time-lag-budget", "0")
    try:
        wait_for(lambda: metric(scrape(port)[1], "offctl_partition_lag", store="zookeeper", partition=0) == 3.0)
        assert metric(scrape(port)[1], "offctl_partition_time_lag_source", store="zookeeper", partition=0) is None
        kafka.produce_records(timed.topic, 0, [{"value": b"more"}])
        text = wait_for(
            lambda: (
                (t := scrape(port)[1])
                and metric(t, "offctl_partition_time_lag_source", store="zookeeper", partition=0) == 2.0
                and t
            ),
            60,
        )
        assert metric(text, "offctl_partition_time_lag_seconds", store="zookeeper", partition=0) >= 0
        assert metric(text, "offctl_partition_time_lag_source", store="zookeeper", partition=1) == 1.0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_after_a_reset_to_a_time_the_spout_is_as_far_behind_as_the_message_it_goes_to(cli, timed39, tmp_path):
    """reset --to time (the broker's timestamp lookup) then inspect: the time lag is the age of the first message at
    or after --at; one command's time is the other's."""
    done = cli(
        "reset",
        *timed39.flags[:8],
        "--spout",
        "orders",
        "--to",
        "time",
        "--at",
        str(ts(0, 1)),
        "--partitions",
        "0",
        "--execute",
        "--yes",
        "--quiet-period",
        "0",
        "--backup-dir",
        str(tmp_path / "backups"),
        "--audit-log",
        str(tmp_path / "audit.log"),
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    assert [(c["partition"], c["before"], c["after"]) for c in done.json()["changes"]] == [(0, 2, 1)]
    doc = report_document(inspect(Reading(timed39.conn, Selection(("orders",)), Profiles(Thresholds())), now_ms=NOW))
    assert lags(doc)[("zookeeper", 0)] == (4, (NOW - ts(0, 1)) / 1000, "message")


def _spout(zk, names, zk_server, broker, topic: str, offsets: dict[int, int]) -> Connection:
    """Spout `orders` of storm-kafka resuming `topic` at these offsets; the connection to inspect it."""
    root = names.root + "/spouts"
    for p, offset in offsets.items():
        zk.create(f"{root}/orders/partition_{p}", storm_record(topic, p, offset), makepath=True)
    return Connection(
        zk=zk_server.address, zk_roots=(root,), bootstrap_servers=broker.address, storm_root=names.root + "/storm"
    )


def test_on_a_log_append_time_topic_the_broker_clock_gives_the_time_lag(zk, kafka39, names, zk_server, broker39):
    """message.timestamp.type LogAppendTime: the broker stamps each message as it appends it, whatever the producer
    set (here T0, months ago): the time lag is counted from that, seconds, not a year."""
    topic = names("appended")
    kafka39.create_topic(topic, 1, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    kafka39.produce_records(topic, 0, [{"value": b"m%d" % o, "timestamp": ts(0, o)} for o in range(3)])
    after = int(time.time() * 1000)
    report = inspect(
        Reading(_spout(zk, names, zk_server, broker39, topic, {0: 1}), Selection(("orders",)), Profiles(Thresholds()))
    )
    lag, seconds, source = lags(report_document(report))[("zookeeper", 0)]
    assert (lag, source) == (2, "message")
    # the broker's clock is this machine's: appended between `before` and `after`, 1 s allowed for rounding
    assert (report.captured_ms - after) / 1000 - 1 <= seconds <= (report.captured_ms - before) / 1000 + 1
    assert seconds < 300 < (report.captured_ms - ts(0, 1)) / 1000


def test_a_spout_resuming_in_a_compacted_gap_is_timed_from_the_next_message(zk, kafka, names, zk_server, broker):
    """The compacted topic (tests/e2e/test_peek.py) keeps 1, 2, 4 and 5 of 0-5: a spout at 3 is handed 4 first, and a
    group at 0 is handed 1 (PartitionManager.fill skips offsets below the one it fetched from, v1.2.4)."""
    topic = compacted_topic(kafka)
    conn = _spout(zk, names, zk_server, broker, topic, {0: 3})
    group = names("group")
    kafka.commit(group, topic, {0: 0})
    doc = report_document(inspect(Reading(conn, Selection(("orders",), (group,)), Profiles(Thresholds())), now_ms=NOW))
    assert lags(doc) == {
        ("zookeeper", 0): (3, (NOW - compacted_at(4)) / 1000, "message"),
        ("kafka", 0): (6, (NOW - compacted_at(1)) / 1000, "message"),
    }


def test_a_spout_at_a_transaction_marker_has_lag_1_and_nothing_waiting(zk, kafka39, names, zk_server, broker39):
    """A committed transaction's marker takes the offset before the log end: the spout resuming there has lag 1 and
    no message to be handed, so its time lag is 0 (caught up); one resuming at a transaction's first message is
    timed from it."""
    topic = names("tx")
    kafka39.create_topic(topic, 2)
    marker = committed_transaction(kafka39, topic, 0, 3)
    before = int(time.time() * 1000)
    committed_transaction(kafka39, topic, 1, 3)
    report = inspect(
        Reading(
            _spout(zk, names, zk_server, broker39, topic, {0: marker, 1: 0}),
            Selection(("orders",)),
            Profiles(Thresholds()),
        )
    )
    got = lags(report_document(report))
    assert got[("zookeeper", 0)] == (1, 0.0, "caught-up")
    lag, seconds, source = got[("zookeeper", 1)]  # the producer stamped it between `before` and now
    assert (lag, source) == (4, "message") and 0 <= seconds <= (report.captured_ms - before) / 1000 + 1


def test_a_broker_gone_before_the_messages_are_read_leaves_time_lags_unread_within_the_budget():
    """The offsets were read, then the broker went away: the real adapter reads nothing within the budget, the
    lagging partitions say unread and why, and the report stays complete (no exit 3)."""
    from offctl.adapters import servers
    from offctl.adapters.kafka import KafkaStore
    from offctl.pipeline.assess import with_time_lags
    from offctl.pipeline.inspect import exit_code
    from tests.unit.test_timelag import report, row

    store = KafkaStore(f"127.0.0.1:{servers.free_port()}", timeout=1)  # nothing listens there
    try:
        got = with_time_lags(report(row(12, 8), row(20, 0, partition=1)), store, 1.0)
    finally:
        store.close()
    assert [lag.source for lag in got.time_lags.values()] == ["unread"]
    assert "time lag unknown for 1 lagging partition" in got.notes[-1]
    assert "not read within the time budget of 1s" in got.notes[-1]
    assert not got.incomplete and exit_code(got, "error") == 0
