"""storm-kafka-client's ProcessingGuarantee and commit period, table-driven over plain data (no servers).

Source: apache/storm external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/, at the tags in the
case ids. KafkaSpoutConfig.ProcessingGuarantee (AT_LEAST_ONCE, AT_MOST_ONCE, NO_GUARANTEE; no NONE) exists from
v1.0.6 and v1.1.2 on, to v2.8.8 and master 73da988d9 (3.0.0-SNAPSHOT, which offctl applies to 3.0.x and 3.1.x).
"""

from __future__ import annotations

import pytest

from offctl.core.records.model import Snapshot, Thresholds
from offctl.core.rules.analyze import analyze
from offctl.core.storm.commits import commit_behaviour
from offctl.core.storm.releases import Guarantee, SpoutProfile, StormKafkaClient, default_commit_period_ms
from offctl.core.time.history import OK, STALL, Observation, evaluate
from offctl.faces.audit.tasks import with_history
from offctl.faces.serve.monitor import Monitor
from offctl.render.report import partition_dict
from tests.unit.test_analyze import RUNNING, cluster, commit, rec

SEC = 1000


def profile(release: str, guarantee: Guarantee = Guarantee.AT_LEAST_ONCE) -> SpoutProfile:
    return SpoutProfile(
        client=StormKafkaClient.of_version(release),
        client_major=StormKafkaClient.major_of(release),
        guarantee=guarantee,
        commit_period_ms=default_commit_period_ms(release),
    )


A, M, N = Guarantee.AT_LEAST_ONCE, Guarantee.AT_MOST_ONCE, Guarantee.NO_GUARANTEE


@pytest.mark.parametrize(
    "release, guarantee, committed, commits, lag, restart, source",
    [
        pytest.param(
            "1.1.1",
            A,
            "last offset acked in order",
            "every offset.commit.period.ms (30000 ms)",
            "not yet acked",
            "replays from committed + 1",
            "KafkaSpout.java@v1.1.1",
            id="KafkaSpout.java@v1.1.1: no ProcessingGuarantee; commitSync of the last acked offset on the timer",
        ),
        pytest.param(
            "1.2.4",
            A,
            "first offset not yet acked",
            "commitSync of the acked offsets every",
            "in flight",
            "nothing is lost",
            "internal/OffsetManager.java@v1.2.4",
            id="KafkaSpout.java@v1.2.4 commitOffsetsForAckedTuples: AT_LEAST_ONCE commits the first unacked",
        ),
        pytest.param(
            "1.2.4",
            M,
            "next offset to poll",
            "commitSync of every assigned partition's position right after each poll",
            "not yet polled",
            "never processed",
            "KafkaSpout.java@v1.2.4",
            id="KafkaSpout.java@v1.2.4 pollKafkaBroker: AT_MOST_ONCE commitSync(position) after each poll",
        ),
        pytest.param(
            "1.2.4",
            N,
            "position at the last commit",
            "commitAsync",
            "up to one period old",
            "0, 1 or more times",
            "KafkaSpout.java@v1.2.4",
            id="KafkaSpout.java@v1.2.4 nextTuple: NO_GUARANTEE commitAsync(position) on the timer",
        ),
        pytest.param(
            "2.0.0",
            M,
            "next offset to poll",
            "offset.commit.period.ms is not used",
            "not yet polled",
            "failed tuples are not retried",
            "KafkaSpoutConfig.java@v2.8.8",
            id="KafkaSpout.java@v2.0.0 open: AT_MOST_ONCE has no commit timer",
        ),
        pytest.param(
            "2.8.8",
            A,
            "next offset to process",
            "on partition revocation, deactivate and close",
            "acked since the last commit",
            "processed again",
            "KafkaSpout.java@v2.8.8",
            id="KafkaSpout.java@v2.8.8 commitIfNecessary: AT_LEAST_ONCE also commits on deactivate and close",
        ),
        pytest.param(
            "2.8.8",
            N,
            "whatever was processed",
            "none on deactivate or close",
            "not yet polled at the last commit",
            "polled since are processed again",
            "KafkaSpout.java@v2.8.8",
            id="KafkaSpout.java@v2.8.8 commitIfNecessary: NO_GUARANTEE commits only on the timer",
        ),
        pytest.param(
            "3.1.0",
            M,
            "next offset to poll",
            "before its records are emitted",
            "not yet polled",
            "up to one poll",
            "KafkaSpout.java@v2.8.8",
            id="KafkaSpout.java@73da988d9 (3.0.0-SNAPSHOT): as v2.8.8, AT_MOST_ONCE commits before emitting",
        ),
    ],
)
def test_what_a_commit_means(release, guarantee, committed, commits, lag, restart, source):
    said = commit_behaviour(profile(release, guarantee))
    assert said.guarantee == guarantee.value
    assert committed in said.committed and commits in said.commits, said
    assert lag in said.lag and restart in said.restart and source in said.sources, said


@pytest.mark.parametrize(
    "release, guarantee, reset",
    [
        pytest.param(
            "1.1.1", A, "'latest'", id="KafkaSpoutConfig.java@v1.1.1: auto.offset.reset not set, Kafka's latest"
        ),
        pytest.param("1.2.4", A, "'earliest'", id="KafkaSpoutConfig.java@v1.2.4: earliest under AT_LEAST_ONCE"),
        pytest.param(
            "2.8.8", M, "'latest'", id="KafkaSpoutConfig.java@v2.8.8: not set under AT_MOST_ONCE, Kafka's latest"
        ),
        pytest.param("3.1.0", N, "'latest'", id="KafkaSpoutConfig.java@73da988d9: not set under NO_GUARANTEE"),
    ],
)
def test_out_of_range_follows_the_guarantee(release, guarantee, reset):
    # the spout resumes below the log start: at 98, or 99 (committed + 1) in 1.1.1
    report = analyze(
        Snapshot(0, (), (commit(0, 98),), cluster=cluster(1), running=frozenset({RUNNING})),
        Thresholds(spout=profile(release, guarantee)),
    )
    below = [f.message for f in report.findings if f.code == "OFFSET_BELOW_LOG_START"]
    assert len(below) == 1 and "the consumer moves where its auto.offset.reset says" in below[0], below
    assert f"{reset} (the log {'start' if reset == repr('earliest') else 'end'})" in below[0], below


@pytest.mark.parametrize(
    "release, period",
    [
        pytest.param("1.0.0", 15_000, id="KafkaSpoutConfig.java@v1.0.0 DEFAULT_OFFSET_COMMIT_PERIOD_MS 15_000"),
        pytest.param("1.0.2", 15_000, id="KafkaSpoutConfig.java@v1.0.2 DEFAULT_OFFSET_COMMIT_PERIOD_MS 15_000"),
        pytest.param("1.0.3", 30_000, id="KafkaSpoutConfig.java@v1.0.3 DEFAULT_OFFSET_COMMIT_PERIOD_MS 30_000"),
        pytest.param("1.1.1", 30_000, id="KafkaSpoutConfig.java@v1.1.1 DEFAULT_OFFSET_COMMIT_PERIOD_MS 30_000"),
        pytest.param("2.8.8", 30_000, id="KafkaSpoutConfig.java@v2.8.8 DEFAULT_OFFSET_COMMIT_PERIOD_MS 30_000"),
        pytest.param("3.1.0", 30_000, id="KafkaSpoutConfig.java@73da988d9 DEFAULT_OFFSET_COMMIT_PERIOD_MS 30_000"),
    ],
)
def test_default_commit_period(release, period):
    assert default_commit_period_ms(release) == period


@pytest.mark.parametrize(
    "guarantee, still",
    [
        pytest.param(A, 30_000, id="KafkaSpout.java@v2.8.8 open: AT_LEAST_ONCE commits on the commitTimer"),
        pytest.param(N, 30_000, id="KafkaSpout.java@v2.8.8 nextTuple: NO_GUARANTEE commits on the commitTimer"),
        pytest.param(M, 0, id="KafkaSpout.java@v2.8.8 open: AT_MOST_ONCE has no commitTimer, commits every poll"),
    ],
)
def test_how_long_a_commit_may_stand_still(guarantee, still):
    assert profile("2.8.8", guarantee).kafka_commit_period_ms == still


def test_settings_line_names_the_guarantee():
    assert "processingGuarantee=AT_MOST_ONCE, offset.commit.period.ms=30000" in profile("3.1.0", M).describe()


def test_report_says_what_commits_mean_only_with_groups():
    th = Thresholds(spout=profile("3.1.0", M))
    groups = analyze(Snapshot(0, (), (commit(0, 150),), cluster=cluster(1)), th)
    assert groups.commits is not None and groups.commits.guarantee == "AT_MOST_ONCE"
    spouts = analyze(Snapshot(0, (rec(0, 150),), (), cluster=cluster(1)), th)
    assert spouts.commits is None


# --- history: a commit that does not move within offset.commit.period.ms is not a stall ---------------------


def obs(*points, step=10 * SEC):
    """Observations every `step` ms from (committed, log_end); the last one's capture time is `now`."""
    return [Observation(i * step, c, 0, e) for i, (c, e) in enumerate(points)]


@pytest.mark.parametrize(
    "points, period, expected",
    [
        # moved at 10 s, unmoved at 30 s: 20 s still > 10 s of moving, but within a 30 s period
        pytest.param(((5, 10), (15, 20), (15, 25), (15, 30)), 0, STALL, id="rule 3 without a period: STALL"),
        pytest.param(
            ((5, 10), (15, 20), (15, 25), (15, 30)),
            30_000,
            OK,
            id="rule 3a KafkaSpout.java@v2.8.8 commitTimer 30 s: 20 s unmoved is no STALL",
        ),
        # moved at 10 s, unmoved at 50 s: 40 s > 30 s
        pytest.param(
            ((5, 10), (15, 20), (15, 25), (15, 30), (15, 35), (15, 40)),
            30_000,
            STALL,
            id="rule 3a: unmoved for longer than the 30 s period: STALL",
        ),
        # never moved in a 20 s window, lag above 0 throughout (rule 5)
        pytest.param(((5, 10), (5, 12), (5, 14)), 0, STALL, id="rule 5 without a period: STALL"),
        pytest.param(((5, 10), (5, 12), (5, 14)), 30_000, OK, id="rule 3a: a 20 s window is shorter than the period"),
        pytest.param(
            ((5, 10), (5, 12), (5, 14)),
            15_000,
            STALL,
            id="rule 3a KafkaSpoutConfig.java@v1.0.0 period 15 s: a 20 s window is longer",
        ),
    ],
)
def test_history_respects_the_commit_period(points, period, expected):
    assert evaluate(obs(*points), running=True, commit_period_ms=period).status == expected


def test_serve_applies_the_period_to_groups_only():
    """offctl serve (Monitor): groups get the commit period of the spout settings, ZooKeeper spouts none."""
    monitor = Monitor()
    th = Thresholds(spout=profile("3.1.0", A))
    for i, (committed, end) in enumerate(((105, 110), (115, 120), (115, 125), (115, 130))):
        snap = Snapshot(
            i * 10 * SEC,
            (rec(0, committed),),
            (commit(0, committed),),
            cluster=cluster(1, start=100, end=end),
            running=frozenset({RUNNING}),
        )
        monitor.update(analyze(snap, th), 0.1)
    statuses = {key[0]: status for key, (status, _) in monitor.cycle.statuses.items()}
    assert statuses == {"kafka": OK, "zookeeper": STALL}
    th_most = Thresholds(spout=profile("3.1.0", M))  # AT_MOST_ONCE commits after every poll: no period
    assert analyze(snap, th_most).kafka_commit_period_ms == 0


def test_audit_applies_the_period_to_groups_only():
    report = analyze(Snapshot(30 * SEC, (rec(0, 115),), (commit(0, 115),), cluster=cluster(1, end=130)), Thresholds())
    earlier = obs((105, 110), (115, 120), (115, 125))
    out = {}
    for row in report.rows:
        d = {**partition_dict(row), "captured_ms": report.captured_ms, "modified_ms": None}
        out[d["store"]] = with_history(d, earlier, frozenset({RUNNING}), 10, 0, 30_000)["history_status"]
    assert out == {"kafka": OK, "zookeeper": STALL}
