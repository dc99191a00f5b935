"""storm-kafka-client releases besides 1.2.4 and 2.8.3, run: the REAL KafkaSpout of each starts where offctl says
when told `--storm-kafka-client-release <that release>` (tests/oracle/test_spout_oracle_e2e.py runs 2.8.3 and 1.2.4).

    2.0.0  the oldest 2.x (doSeek, CommitMetadataManager and OffsetManager as in 2.8.3; kafka-clients 0.11.0.3)
    1.1.3  current 1.1.x (CommitMetadataManager from 1.1.2; kafka-clients 0.10.1.0)
    1.0.6  current 1.0.x (the 1.1.2 changes backported; kafka-clients 0.10.1.0)
    1.1.1  legacy 1.1.x: commits hold the last processed offset, UNCOMMITTED_* resume at committed + 1, metadata
           `{topic-partition=..., offset=..., numFails=..., thread='...'}`, NamedSubscription subscribes
           (kafka-clients 0.10.0.0)
    1.0.5  legacy 1.0.x: the same, configured through KafkaSpoutStreams and tuple builders (kafka-clients 0.9.0.1)

All on Kafka 3.9 (fixtures broker39/kafka39): Kafka 4.x refuses the request versions kafka-clients before 2.1 send
(KIP-896). The current lines run CLIENT (tests/oracle/test_spout_oracle_e2e.py) as it is; the legacy lines LEGACY_CLIENT
below, whose "own" commits are written as a legacy spout writes them (KafkaSpoutMessageId.getMetadata and
OffsetManager.findNextCommitOffset, v1.0.5 and v1.1.1: the last processed offset). Every line also runs a spout
that commits (emits the whole topic, acks) and a second spout of the same topology on that group ("restart",
acking nothing, so the commit stays the first one's): offctl, asked after the run, must say where the second one
started, and the first one's commit must be in the release's form. Each release's scenarios run in one JVM call
(tests/oracle/storm_client_spout.py); the JVM calls of the releases run side by side, each in a thread of its own.

Where the spout disagrees with offctl the scenario is a strict xfail citing the Storm source (DISAGREE: none now). A
release whose jars are missing or whose runner fails fails every one of its tests with the runner's own message.
"""

from __future__ import annotations

import json
import threading

import pytest

from offctl.core.storm.releases import LEGACY_METADATA
from tests.oracle.storm_client_spout import APIS
from tests.oracle.test_spout_oracle_e2e import CLIENT, STORM_ID, _agree, client_setup, inspect, metadata, verdicts

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

EXECUTOR_THREAD = "Thread-11-kafka-spout-executor[4 4]"  # the thread a worker's spout executor runs on


def legacy_metadata(topic: str, partition: int, offset: int) -> str:
    """A 1.0.0-1.0.5 / 1.1.0-1.1.1 spout's commit metadata (KafkaSpoutMessageId.getMetadata, v1.0.5 and v1.1.1)."""
    return f"{{topic-partition={topic}-{partition}, offset={offset}, numFails=0, thread='{EXECUTOR_THREAD}'}}"


OWN = legacy_metadata  # the metadata of the running topology's own commit, on a legacy line

LEGACY_CLIENT = {  # CLIENT's form: (commits {partition: (offset, metadata)}, first-poll strategy, guarantee, topic)
    # the spout's own commits: the last offset processed; UNCOMMITTED_* resume after it, EARLIEST/LATEST ignore it
    "own-commit": ({0: (2, OWN), 1: (1, OWN)}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "orders"),
    "own-commit-uncommitted-latest": ({0: (2, OWN), 1: (1, OWN)}, "UNCOMMITTED_LATEST", "AT_LEAST_ONCE", "orders"),
    "own-commit-earliest": ({0: (2, OWN), 1: (1, OWN)}, "EARLIEST", "AT_LEAST_ONCE", "orders"),
    "own-commit-latest": ({0: (2, OWN), 1: (1, OWN)}, "LATEST", "AT_LEAST_ONCE", "orders"),
    # a tool's commit (no metadata) is read the same way: committed + 1
    **{
        name: CLIENT[name]
        for name in (
            "tool-commit-earliest",
            "tool-commit-latest",
            "tool-commit-uncommitted-earliest",
            "tool-commit-uncommitted-latest",
        )
    },
    # a 1.0.6+/1.1.2+ spout's JSON metadata (a downgrade): never read, committed + 1 all the same
    "current-metadata-uncommitted": (
        {0: (3, metadata(STORM_ID)), 1: (2, metadata(STORM_ID))},
        "UNCOMMITTED_EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    "other-topology-earliest": CLIENT["other-topology-earliest"],
    # metadata the current lines throw on (CLIENT's null-metadata-document): the legacy ones never read it
    "null-metadata-uncommitted": (
        {0: (3, "null"), 1: (2, '{"topologyId":null}')},
        "UNCOMMITTED_EARLIEST",
        "AT_LEAST_ONCE",
        "orders",
    ),
    # out of range: the spout seeks committed + 1 and leaves the rest to auto.offset.reset, which it does not set
    # (Kafka's default: latest)
    "below-log-start": ({0: (2, OWN)}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "trimmed"),
    "above-log-end": ({0: (50, OWN)}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "trimmed"),
    "missing-partition": ({0: (2, OWN)}, "UNCOMMITTED_EARLIEST", "AT_LEAST_ONCE", "orders"),
    "missing-partition-latest": ({0: (2, OWN)}, "UNCOMMITTED_LATEST", "AT_LEAST_ONCE", "orders"),
}

RESTART = {  # the spout's own commit, then the next start on it: (first-poll strategy, topic)
    "commits": ("UNCOMMITTED_EARLIEST", "orders"),
    "restart": ("UNCOMMITTED_EARLIEST", "orders"),
}

# release -> (its scenarios, legacy line)
RELEASES = {
    "2.0.0": (CLIENT, False),
    "1.1.3": (CLIENT, False),
    "1.0.6": (CLIENT, False),
    "1.1.1": (LEGACY_CLIENT, True),
    "1.0.5": (LEGACY_CLIENT, True),
}

# Where the spout disagreed with offctl, until offctl was fixed: (release, scenario) -> why, a strict xfail. The runs
# found one: STORM-2844's check (KafkaSpout.emitOrRetryTuple, v1.0.6 and v1.1.3) makes nextTuple throw on a commit
# above the log end before anything is emitted, where offctl said the spout re-reads from the log start; offctl now
# says `crashes` (outcomes.EMIT_CHECK), and above-log-end agrees on 1.0.6 and 1.1.3.
DISAGREE: dict[tuple[str, str], str] = {}


class Runs:
    """Every release's scenarios set up and asked of offctl in this thread, and run, each release's in one JVM
    call in a thread of its own started once they are set up; then the restart scenarios asked of offctl. A
    release that cannot run keeps its error (`errors`), which its tests report."""

    def __init__(self, zk_server, zk, kafka, broker_address: str):
        from tests.oracle.storm_client_spout import run_client_spouts

        self.offctl: dict[str, dict] = {}
        self.ran: dict[str, dict] = {}
        self.errors: dict[str, str] = {}

        def run(release: str) -> None:
            try:
                answers = run_client_spouts(release, setups[release][0])
            except Exception as exc:  # MissingStormClient, javac, the runner's exit or timeout: its own message
                self.errors[release] = f"{type(exc).__name__}: {exc}"
                return
            self.ran[release] = {r["name"]: r for r in answers}

        setups, threads = {}, []
        for release, (scenarios, _) in RELEASES.items():
            runs, said, where = client_setup(
                release, zk_server, zk, kafka, broker_address, release=release, scenarios=scenarios
            )
            group = f"{where['prefix']}-restart"
            for name, (strategy, on) in RESTART.items():
                runs.append(
                    {
                        "name": name,
                        "bootstrap_servers": broker_address,
                        "topic": where["topics"][on],
                        "group_id": group,
                        "topology_id": STORM_ID,
                        "first_poll_offset_strategy": strategy,
                        "emit": "all",
                        "ack": name == "commits",
                    }
                )
            setups[release] = (runs, said, where)
            # this release's spouts run while the next release's stores are set up and asked of offctl
            threads.append(threading.Thread(target=run, args=(release,), name=f"client-{release}"))
            threads[-1].start()
        for thread in threads:
            thread.join()
        for release, (runs, said, where) in setups.items():
            self.offctl[release] = said
            if release not in self.ran:
                continue
            for scenario in runs:
                self.ran[release][scenario["name"]]["group_id"] = scenario["group_id"]
                self.ran[release][scenario["name"]]["task"] = scenario.get("partitions")
                self.ran[release][scenario["name"]]["topic"] = scenario["topic"]
            strategy, on = RESTART["restart"]
            said["restart"] = verdicts(
                inspect(
                    "--zk",
                    zk_server.address,
                    "--storm-root",
                    where["storm_root"],
                    "--bootstrap-servers",
                    broker_address,
                    "--group",
                    f"{where['prefix']}-restart",
                    "--topic",
                    where["topics"][on],
                    "--storm-kafka-client-release",
                    release,
                    "--first-poll-offset-strategy",
                    strategy,
                )
            )

    def of(self, release: str) -> tuple[dict, dict]:
        if release in self.errors:
            pytest.fail(f"storm-kafka-client {release} did not run: {self.errors[release]}", pytrace=False)
        return self.offctl[release], self.ran[release]


@pytest.fixture(scope="module")
def releases(zk_server, zk, broker39, kafka39):
    return Runs(zk_server, zk, kafka39, broker39.address)


def _cases():
    for release, (scenarios, _) in RELEASES.items():
        for name in [*scenarios, "restart"]:
            reason = DISAGREE.get((release, name))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(release, name, marks=marks, id=f"{release}-{name}")


@pytest.mark.parametrize("release, name", list(_cases()))
def test_the_release_starts_where_offctl_says(releases, release, name):
    offctl, ran = releases.of(release)
    if name == "restart":  # nothing emitted since the log end: where offctl says it resumes must be the log end too
        for p, (resumes_at, _, log_end) in offctl[name].items():
            assert resumes_at == log_end == 10, (release, p, offctl[name])
    _agree(name, offctl, ran)


@pytest.mark.parametrize("release", list(RELEASES))
def test_the_spouts_own_commit_is_in_its_releases_form(releases, release):
    """What the spout commits after acking the whole topic: the last offset processed with KafkaSpoutMessageId's
    metadata on the legacy lines (OffsetManager.findNextCommitOffset, v1.0.5 and v1.1.1), which offctl reads as
    legacy (LEGACY_METADATA); the next offset with CommitMetadataManager's JSON on the others."""
    _, ran = releases.of(release)
    legacy = RELEASES[release][1]
    r = ran["commits"]
    # deactivate() closes the consumer (KafkaSpout.shutdown) in every 1.0.x and 1.1.x and before 1.2.3 (STORM-3013
    # keeps it open from there: read at v1.0.7, v1.1.4, v1.2.2, v1.2.3), so close() after it throws
    closed = {"close": "java.lang.IllegalStateException: This consumer has already been closed."}
    assert r["errors"] == ({} if release == "2.0.0" else closed), r
    assert r["api"] == APIS[release], r
    for p in (0, 1):
        commit = r["committed"][p]
        assert r["emitted"][p] == list(range(10)), r
        if legacy:
            assert commit["offset"] == 9, r
            assert LEGACY_METADATA.fullmatch(commit["metadata"]), r
            assert commit["metadata"] == f"{{topic-partition={r['topic']}-{p}, offset=9, numFails=0, thread='main'}}", r
        else:
            assert commit["offset"] == 10, r
            assert json.loads(commit["metadata"]) == {"topologyId": STORM_ID, "taskId": 1, "threadName": "main"}, r
    assert ran["restart"]["first_emitted"] == {0: None, 1: None}, ran["restart"]
