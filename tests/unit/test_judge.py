"""Each consumer judged by its own profile (offctl.core.rules.judge) on plain data: one analyze per profile group,
merged in the order one analyze gives; the reads that follow (retention, commit expiry) per profile too."""

from __future__ import annotations

from dataclasses import replace

import pytest

from offctl.core.records.model import (
    KAFKA,
    ConsumerKey,
    KafkaCommit,
    PartitionLog,
    ReadFinding,
    Snapshot,
    Thresholds,
    ZkNode,
)
from offctl.core.rules.analyze import analyze
from offctl.core.rules.judge import analyze_each, assumptions, parts
from offctl.core.rules.profiles import Profile, Profiles
from offctl.core.storm.releases import LATEST_TIME, Guarantee, SpoutProfile, StormKafka
from tests.conftest import storm_record

RUNNING = "orders-topology-1-1700000000"
LEGACY = Thresholds(
    expected_topic="orders", spout=SpoutProfile(StormKafka.of_version("0.9.6"), start_offset_time=LATEST_TIME)
)
DEFAULTS = Thresholds(lag_threshold=3)
PROFILES = Profiles(DEFAULTS, (Profile("legacy", "legacy-*", LEGACY),))


def node(spout: str, partition: int, topic: str, offset: int, *, data: bytes | None = None) -> ZkNode:
    return ZkNode(
        "/spouts",
        spout,
        f"/spouts/{spout}/partition_{partition}",
        partition,
        None,
        data if data is not None else storm_record(topic, partition, offset, topology_id=RUNNING),
        1,
        0,
    )


def snapshot() -> Snapshot:
    nodes = (
        node("healthy", 0, "orders", 9),
        node("healthy", 1, "orders", 9),
        node("legacy-1", 0, "clicks", 2),
        node("legacy-1", 1, "clicks", 30),  # names clicks; out of range above
        node("legacy-2", 0, "orders", 1),
        node("legacy-2", 1, "orders", 0, data=b"{not json"),  # lagging; malformed
        node("stale", 0, "orders", 0, data=b"{not json"),
        node("stale", 1, "orders", 40),
    )
    cluster = {
        "orders": {0: PartitionLog(0, 9), 1: PartitionLog(0, 9)},
        "clicks": {0: PartitionLog(5, 9), 1: PartitionLog(0, 9)},
    }
    return Snapshot(
        1_763_776_800_000,
        zk_nodes=nodes,
        commits=(KafkaCommit("legacy-group", "orders", 0, 2, None), KafkaCommit("grp", "orders", 1, 3, None)),
        cluster=cluster,
        running=frozenset({RUNNING}),
        notes=("a note",),
        read_findings=(ReadFinding(ConsumerKey(KAFKA, "missing"), "group 'missing' has no committed offsets"),),
    )


def of(report, key):
    return ([r for r in report.rows if r.record.key == key], [f for f in report.findings if f.key == key])


def test_each_consumer_is_judged_by_its_own_profile_in_the_order_of_one_analyze():
    snap = snapshot()
    got = analyze_each(snap, PROFILES)
    plain = analyze(snap, DEFAULTS)
    assert [c.key for c in got.consumers] == [c.key for c in plain.consumers]
    assert [r.record.key for r in got.rows] == [r.record.key for r in plain.rows]
    differs = 0
    for c in got.consumers:
        name, thresholds = PROFILES.judging(c.key)
        assert c.profile == name == ("legacy" if c.key.consumer.startswith("legacy-") else None)
        own = analyze(snap, thresholds)
        assert of(got, c.key) == of(own, c.key), c.key
        assert replace(c, profile=None) == next(o for o in own.consumers if o.key == c.key)
        differs += of(own, c.key) != of(plain, c.key)
    assert differs >= 2  # the legacy profile changes the verdict on its consumers: the test can tell
    assert got.findings[-1].code == plain.findings[-1].code and got.findings[-1].key.consumer == "missing"
    assert len(got.findings) == sum(len(of(got, c.key)[1]) for c in got.consumers) + 1
    assert got.notes == ("a note",) and got.checks_skipped == plain.checks_skipped
    assert got.spout_settings == (
        f"profiles: legacy 3 consumers ({LEGACY.spout.describe()}, topic orders); "
        f"defaults 3 consumers ({DEFAULTS.spout.describe()})"
    )


def test_one_profile_changes_nothing_but_the_name():
    snap = snapshot()
    assert analyze_each(snap, Profiles(DEFAULTS)) == analyze(snap, DEFAULTS)
    only = Profiles(Thresholds(), (Profile("all", "*", DEFAULTS),))
    got = analyze_each(snap, only)
    assert got == replace(
        analyze(snap, DEFAULTS), consumers=tuple(replace(c, profile="all") for c in analyze(snap, DEFAULTS).consumers)
    )
    assert got.spout_settings == DEFAULTS.spout.describe()


def test_a_groups_commit_period_and_guarantee_follow_its_profile():
    slow = Thresholds(spout=SpoutProfile(commit_period_ms=120_000))
    most = Thresholds(spout=SpoutProfile(guarantee=Guarantee.AT_MOST_ONCE))
    got = analyze_each(snapshot(), Profiles(slow, (Profile("legacy", "legacy-*", most),)))
    # the document's first group (grp, the defaults) says what the commits mean; legacy-group keeps its own period
    assert got.kafka_commit_period_ms == 120_000 and got.commits.guarantee == "AT_LEAST_ONCE"
    assert got.commit_periods == {ConsumerKey(KAFKA, "legacy-group"): 0}  # AT_MOST_ONCE: no commit timer


@pytest.mark.parametrize(
    "counts, want",
    [
        ({None: 4}, DEFAULTS.spout.describe()),
        ({"legacy": 2}, LEGACY.spout.describe()),
        (
            {None: 1, "legacy": 2},
            f"profiles: legacy 2 consumers ({LEGACY.spout.describe()}, topic orders); "
            f"defaults 1 consumer ({DEFAULTS.spout.describe()})",
        ),
        ({}, DEFAULTS.spout.describe()),
    ],
)
def test_the_assumptions_line_says_how_many_consumers_each_profile_covered(counts, want):
    assert assumptions(counts, PROFILES) == want


def test_parts_cut_the_report_by_profile_and_leave_a_plain_run_whole():
    report = analyze_each(snapshot(), PROFILES)
    whole = analyze(snapshot(), DEFAULTS)
    assert parts(whole, Profiles(DEFAULTS)) == [(None, DEFAULTS, whole)]
    cut = parts(report, PROFILES)
    assert [(name, t) for name, t, _ in cut] == [(None, DEFAULTS), ("legacy", LEGACY)]
    for name, _, part in cut:
        assert {r.record.key for r in part.rows} == {c.key for c in part.consumers}
        assert all(c.profile == name for c in part.consumers)
    assert sum(len(p.rows) for _, _, p in cut) == len(report.rows)


def test_retention_and_commit_expiry_findings_follow_each_consumers_profile():
    """The reads after the analysis (offctl.pipeline): RETENTION_RISK by each profile's horizon, COMMIT_EXPIRY_RISK
    only for the groups whose profile's commit can age (AT_LEAST_ONCE), the other skipped with its profile named."""
    from offctl.core.records.model import LogMessage, MessageRead, TopicRetention
    from offctl.pipeline.assess import with_commit_expiry, with_time_lags
    from offctl.settings.run import ExpiryOptions
    from tests.unit.test_retention import Store

    H = 3_600_000
    snap = snapshot()
    now = snap.captured_ms
    told = Thresholds(retention_horizon_ms=7 * 24 * H, spout=SpoutProfile(guarantee=Guarantee.AT_MOST_ONCE))
    profiles = Profiles(Thresholds(), (Profile("told", "legacy-*", told),))
    report = analyze_each(snap, profiles)
    messages = {}
    for row in report.rows:
        if row.lag:
            at = row.log_end - row.lag
            messages[(row.topic, row.record.partition, at)] = (
                LogMessage(row.topic, row.record.partition, at, now - H, "CreateTime", None, b"v"),
            )
    store = Store(
        MessageRead(messages),
        {"orders": TopicRetention("orders", 3 * 24 * H), "clicks": TopicRetention("clicks", 3 * 24 * H)},
    )
    got = with_time_lags(report, store, 5.0, profiles)
    risky = {f.key.consumer for f in got.findings if f.code == "RETENTION_RISK"}
    assert risky and all(c.startswith("legacy-") for c in risky)  # only the profile whose horizon is 7 days
    store.read_broker_config = lambda names: ({}, "")
    expired = with_commit_expiry(got, store, profiles, ExpiryOptions(horizon_s=10 * 24 * 3600), 5.0)
    assert {k[1] for k in expired.commit_expiry} == {"grp"}  # legacy-group's profile: AT_MOST_ONCE, refreshed
    assert any("for profile told's groups" in s for s in expired.checks_skipped)
