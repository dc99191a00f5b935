"""Every storm-kafka release line on its real spout: the OLD scenarios of tests/oracle/test_spout_oracle_e2e.py (stored
offsets inside, below and above the log, none, <= 0, malformed, another topology's, maxOffsetBehind, a missing
partition, a record naming another topic or partition; startOffsetTime earliest and latest; with and without
useStartOffsetTimeIfOffsetOutOfRange) run on the newest release of each line offctl tells apart
(offctl/core/storm/releases.py, StormKafka) that Maven Central serves, besides 1.2.4
(tests/oracle/test_spout_oracle_e2e.py):

    1.1.3             line 1.1-1.2.4      org.apache.storm.kafka.KafkaSpout, storm-core 1.1.3, kafka_2.10 0.8.2.1
    1.0.6             line 1.0.x          org.apache.storm.kafka.KafkaSpout, storm-core 1.0.6, kafka_2.10 0.8.2.1
    0.10.2            line 0.10.x         storm.kafka.KafkaSpout, storm-core 0.10.2, kafka_2.9.2 0.8.1.1
    0.9.7             line 0.9.3-0.9.7    storm.kafka.KafkaSpout, storm-core 0.9.7, kafka_2.9.2 0.8.1.1
    0.9.2-incubating  line 0.9.0-0.9.2    storm.kafka.KafkaSpout, storm-core 0.9.2-incubating, kafka_2.9.2 0.8.1.1

(tests/storm_runner/kafka/<release>/pom.xml says what each takes and why), on Kafka 3.9 and the test ZooKeeper.
Each release gets its own records (the spout writes them back) and `offctl inspect --storm-kafka-release <release>`
is asked first; all its scenarios then run in one JVM (tests/oracle/storm_kafka_spout.py), the releases' JVMs side by
side. On every partition the first offset the spout emits must be offctl's verdict (expected_first: resumes_at, or
nothing for waits-until-log-end-reaches and fetch-fails, or nothing when resumes_at is the log end). ignoreZkOffsets is
forceFromStart before 0.10, on both sides (old_flags passes --ignore-zk-offsets, offctl's name for either).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.oracle.test_spout_oracle_e2e import OLD, STORM_ID, old_agrees, old_setup, old_topics

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

RELEASES = ("0.9.2-incubating", "0.9.7", "0.10.2", "1.0.6", "1.1.3")  # set up and started in this order

# Besides OLD, with ignoreZkOffsets (forceFromStart before 0.10), which makes PartitionManager ignore a record whose
# topology.id is not the spout's own topology id: a record naming the running topology's storm id (Storm's root
# lists it; what 1.x writes), and one naming a random UUID (what 0.9.x and 0.10.x write: see UUID_ID below).
UUID_ID = "0b5e2f8c-7d1a-4c3e-9f60-2a8d4b7c1e95"
EXTRA = {
    "ignore-zk-offsets-same-topology": ({0: 4, 1: 4, 2: 4}, {"ignoreZkOffsets": True}, "orders", STORM_ID),
    "ignore-zk-offsets-uuid-record": ({0: 4, 1: 4, 2: 4}, {"ignoreZkOffsets": True}, "orders", UUID_ID),
    "uuid-record-kept": ({0: 4, 1: 4, 2: 4}, {}, "orders", UUID_ID),
}
SCENARIOS = {**OLD, **EXTRA}

# Before 1.0 the spout's topology id is not the storm id: KafkaSpout has `String _uuid = UUID.randomUUID().toString();`
# (KafkaSpout.java:54 at v0.9.2-incubating, v0.9.7 and v0.10.2), a field set when the topology's main() builds the
# spout, which TopologyBuilder.createTopology serializes into the topology (TopologyBuilder.java:111 at v0.9.7): one
# per submission, the same in every task and worker restart (read, not run). KafkaSpout.open passes it to the
# coordinators as the topology instance id (:92, :94), and each PartitionManager ignores the record when
# `!topologyInstanceId.equals(jsonTopologyId) && spoutConfig.forceFromStart` (PartitionManager.java:87 at
# v0.9.2-incubating, :88 at v0.9.7; `... && spoutConfig.ignoreZkOffsets`, :94 at v0.10.2) and writes the UUID as
# topology.id (:220, :253, :251). context.getStormId() took its place in 1.0.0 (KafkaSpout.java:62 at v1.0.0 and
# v1.0.6). So a record naming the storm id of the running topology, which offctl takes as the spout's own, is
# another topology's to these releases: with forceFromStart/ignoreZkOffsets they start at startOffsetTime (0 here).
# offctl said the stored offset there until these runs; it now says startOffsetTime (StormKafka.names_a_uuid).
# (release, scenario) -> why the spout disagrees with offctl, a strict xfail: none now.
DISAGREE: dict[tuple[str, str], str] = {}


@pytest.fixture(scope="module")
def releases(zk_server, zk, broker39, kafka39):
    """{release: (offctl's verdicts by scenario, the spout's reports by scenario, or the exception its run raised)}:
    the topics once; then each release's records and offctl's verdicts, its JVM started (javac first, once per
    release) as soon as they are there, while the next release is set up. Three JVMs at a time on two cores: a run
    spends much of its time waiting (idle_ms, the broker, ZooKeeper), and three finished the module sooner than two
    here (62-86 s against 110 s for the whole module, on a machine other test runs kept busy)."""
    from tests.oracle.storm_kafka_spout import run_old_spouts

    def run(release: str, scenarios: list[dict]):
        try:
            return {r["name"]: r for r in run_old_spouts(scenarios, release=release)}
        except AssertionError as exc:  # the jars are missing, javac or the JVM failed: that release's tests say so
            return exc

    started = time.monotonic()
    prefix = f"releases-{time.time_ns()}"
    topics = old_topics(kafka39, prefix)
    offctl, runs = {}, {}
    with ThreadPoolExecutor(max_workers=3) as pool:
        for release in RELEASES:
            scenarios, offctl[release] = old_setup(
                zk_server, zk, broker39, topics, prefix, f"/{prefix}/{release}", release, SCENARIOS
            )
            runs[release] = pool.submit(run, release, scenarios)
        prepared = time.monotonic()
        ran = {release: future.result() for release, future in runs.items()}
    print(
        f"\nstorm-kafka releases: set up and asked offctl in {prepared - started:.1f} s, all spouts done "
        f"{time.monotonic() - prepared:.1f} s later"
    )
    return {release: (offctl[release], ran[release]) for release in RELEASES}


def _cases():
    for release in RELEASES:
        for name in sorted(SCENARIOS):
            reason = DISAGREE.get((release, name))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(release, name, marks=marks, id=f"{release}-{name}")


@pytest.mark.parametrize(("release", "name"), list(_cases()))
def test_each_storm_kafka_release_starts_where_offctl_says(releases, release, name):
    offctl, ran = releases[release]
    if isinstance(ran, Exception):
        pytest.fail(f"storm-kafka {release}'s spout did not run: {ran}", pytrace=False)
    old_agrees(offctl, ran, name)
