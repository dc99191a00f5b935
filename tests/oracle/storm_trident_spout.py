"""What Storm's REAL opaque Trident Kafka spouts do with the state under Storm's transactional root: where each
partition's first batch starts, what it emits, and the batch metas the executor writes back. Two runners, one per
library (their classpaths share nothing but Trident's interfaces):

    storm_runner/trident/OldTridentRunner.java     storm-kafka 1.2.4's OpaqueTridentKafkaSpout (TridentKafkaEmitter)
                                                   with storm-core 1.2.4's executor, on Kafka 3.9 (ZkHosts)
    storm_runner/trident/ClientTridentRunner.java  storm-kafka-client 2.8.3's KafkaTridentSpoutOpaque
                                                   (KafkaTridentSpoutEmitter) with storm-client 2.8.3's, on Kafka 4.4

Each wraps the spout in Storm's own OpaquePartitionedTridentSpoutExecutor and drives its Coordinator and Emitter as a
Trident topology does (initializeTransaction, emitBatch, commit, success, from the coordinator's stored currtx), with a
mocked TopologyContext and a recording TridentCollector; no LocalCluster. Compiled once per session into a temporary
directory, as tests/oracle/storm_kafka_spout.py compiles OldSpoutRunner; all scenarios of a call share one JVM:

    [a] = run_old_trident([{"name": "a", "zookeeper": zk_server.address, "transactional_root": "/r/transactional",
                            "tx_state_id": "sk", "storm_id": "orders-1-1700000000", "topic": topic,
                            "hosts": {"zk": zk_server.address + "/kafka39", "path": "/brokers"},
                            "spout_config": {"startOffsetTime": -2}}])
    assert a["first_emitted"] == {0: 4, 1: 0}     # partition 0's highest txid says nextOffset 4; 1 has no state

    [b] = run_client_trident([{"name": "b", "zookeeper": ..., "transactional_root": ..., "tx_state_id": "cl",
                               "storm_id": ..., "bootstrap_servers": broker.address, "topic": topic,
                               "first_poll_offset_strategy": "UNCOMMITTED_EARLIEST"}])

ClientTridentRunner also runs on storm-kafka-client 1.2.4's jars (client-1.2.4/lib: storm-core 1.2.4's Trident,
KafkaSpoutConfig, kafka-clients 0.10.1.0, so against the Kafka 3.9 broker), reaching what differs between the lines
by reflection (its header says how); compiled once a session per release:

    run_client_trident([...], release="1.2.4")        tests/oracle/test_trident_releases_e2e.py

And both runners take "executor": "transactional": Storm's PartitionedTridentSpoutExecutor around the library's
transactional (non-opaque) spout, storm-kafka 1.2.4's TransactionalTridentKafkaSpout and storm-kafka-client's
KafkaTridentSpoutTransactional (2.8.3's; 1.2.4's is a stub that answers null), without commit (its Emitter is no
committer), each replay noted under "replayed" (tests/oracle/test_trident_transactional_e2e.py).

A scenario's keys and the report's are listed at the top of each runner. Partition-keyed maps of the report
(first_emitted, started_at, emitted, handed, returned, and errors but its "batch" key) are keyed by int here.

The jars are those the plain spouts' runners use: <storm home>/kafka-1.2.4/lib (tests/storm_runner/kafka/pom.xml;
storm-core 1.2.4 holds Trident) and <storm home>/client-2.8.3/lib (tests/storm_runner/client/pom.xml; storm-client
2.8.3 holds Trident). Nothing else is fetched.

Java 17: storm-core 1.2.4's TransactionalState connects through the ZooKeeper 3.4.14 client Storm shades into
storm-core, whose StaticHostProvider.getHostString (release-3.4.14) takes the host from InetSocketAddress.toString(),
"127.0.0.1/<unresolved>" on JDK 14 and later, and looks that text up: the connection never succeeds
(ConnectionLossException out of TransactionalState's constructor). That runner's JVM is started with
-Djdk.net.hosts.file naming HOSTS below, which maps that text (and "localhost/<unresolved>", "localhost") to
127.0.0.1; the address it connects to is the one given (the storm-kafka-client runner needs none). Storm's code and
the bytes it reads and writes do not depend on it.

Measured here (2 cores, JDK 17, tests/oracle/test_trident_oracle_e2e.py): javac 2.3 s (OldTridentRunner) and 3.2 s
(ClientTridentRunner) once a session; a call spends 0.6-0.7 s outside its scenarios (JVM start, reading the input,
exit); the first scenario takes 0.7 s (1.2.4) and 1.8 s (2.8.3: kafka-clients and Mockito load), then a storm-kafka
scenario 0.1-0.4 s, a storm-kafka-client one 0.25-0.8 s, and 1.3 s when a partition emits nothing (the runner waits
three empty batches, each the emitter's 200 ms poll). 17 scenarios in 4.8 s (1.2.4), 16 in 15 s (2.8.3).
storm-kafka-client 1.2.4 (tests/oracle/test_trident_releases_e2e.py, machine shared, load 4-8): javac 4-6 s; 0.2 s a
scenario that fails at its first batch, 1.3-4.7 s one that emits (kafka-clients 0.10.1.0's first polls of each
partition often come back empty, 200 ms each, partition by partition); 26 scenarios in 23 s. Transactional
(tests/oracle/test_trident_transactional_e2e.py): storm-kafka 14 scenarios in 5-8.5 s, storm-kafka-client 2.8.3 12 in
17-22 s, each after a 2-scenario opaque call (5-9 s) that writes the hand-over states.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tests.oracle.javarun import JVM_FLAGS, RUNNER_IO, compile_java, run_scenarios, scenario_timeout, tool
from tests.oracle.storm_client_spout import lib_dir as client_lib_dir
from tests.oracle.storm_kafka_spout import lib_dir as old_lib_dir

HERE = Path(__file__).parent.parent / "storm_runner" / "trident"
OLD_SOURCE = HERE / "OldTridentRunner.java"
CLIENT_SOURCE = HERE / "ClientTridentRunner.java"
OLD_RELEASE, CLIENT_RELEASE = "1.2.4", "2.8.3"
CLIENT_RELEASES = ("2.8.3", "1.2.4")  # ClientTridentRunner runs on either line's jars (its header says how)

# jdk.net.hosts.file: what ZooKeeper 3.4.14's StaticHostProvider looks up on JDK 14+ (see above)
HOSTS = "127.0.0.1 127.0.0.1/<unresolved> localhost/<unresolved> localhost\n"

# Mockito 5 mocks TopologyContext (a plain class) by subclassing, without attaching its Java agent (as
# tests/oracle/storm_kafka_spout.py does).
_FILES = {
    "mockito-extensions/org.mockito.plugins.MockMaker": "mock-maker-subclass\n",
    "mockito-extensions/org.mockito.plugins.MemberAccessor": "member-accessor-reflection\n",
    "hosts": HOSTS,
}
PARTITIONED = ("first_emitted", "started_at", "emitted", "handed", "returned", "replayed")


@functools.cache
def _classes(which: str) -> tuple[str, str]:
    """A runner compiled against its library's jars once per session: (its classpath, the log4j2 file). `which`:
    "old" (storm-kafka 1.2.4), "client" (storm-kafka-client 2.8.3) or "client-<release>" (one of CLIENT_RELEASES)."""
    if which == "old":
        return compile_java(
            (OLD_SOURCE, RUNNER_IO),
            f"{old_lib_dir(OLD_RELEASE)}/*",
            prefix="old-trident-runner-",
            log_prefix="storm-kafka-trident",
            files=_FILES,
        )
    release = CLIENT_RELEASE if which == "client" else which.removeprefix("client-")
    if release not in CLIENT_RELEASES:
        raise ValueError(f"no ClientTridentRunner for storm-kafka-client {release!r}: one of {CLIENT_RELEASES}")
    tag = "" if release == CLIENT_RELEASE else f"-{release}"
    return compile_java(
        (CLIENT_SOURCE, RUNNER_IO),
        f"{client_lib_dir(release)}/*",
        prefix=f"client-trident-runner{tag}-",
        log_prefix=f"storm-kafka-client-trident{tag}",
        files=_FILES,
    )


def run_old_trident(scenarios: list[dict], *, timeout: float | None = None) -> list[dict]:
    """storm-kafka 1.2.4's OpaqueTridentKafkaSpout on each scenario, in order, in one JVM (OldTridentRunner.java)."""
    return _run("old", "OldTridentRunner", scenarios, timeout)


def run_client_trident(
    scenarios: list[dict], *, timeout: float | None = None, release: str = CLIENT_RELEASE
) -> list[dict]:
    """storm-kafka-client `release`'s KafkaTridentSpoutOpaque (or, a scenario's "executor": "transactional", its
    KafkaTridentSpoutTransactional under PartitionedTridentSpoutExecutor) on each scenario, in order, in one JVM
    (ClientTridentRunner.java). 1.2.4 speaks kafka-clients 0.10.1.0: give it the Kafka 3.9 broker."""
    return _run(
        "client" if release == CLIENT_RELEASE else f"client-{release}", "ClientTridentRunner", scenarios, timeout
    )


def _run(which: str, main: str, scenarios: list[dict], timeout: float | None) -> list[dict]:
    """The runner's reports, in the scenarios' order. AssertionError, with its stderr, if it fails, prints anything
    but one JSON line, or does not end within `timeout` seconds (default: 60 s plus each scenario's deadline)."""
    timeout = scenario_timeout(scenarios, timeout)
    classpath, logging = _classes(which)
    # storm-core 1.2.4's shaded ZooKeeper 3.4.14 client (storm-kafka's runner and storm-kafka-client 1.2.4's)
    hosts = [f"-Djdk.net.hosts.file={Path(logging).parent / 'hosts'}"] if which in ("old", "client-1.2.4") else []
    argv = [
        tool("java", main),
        *JVM_FLAGS,
        "-Djava.net.preferIPv4Stack=true",
        *hosts,
        f"-Dlog4j2.configurationFile={logging}",
        "-cp",
        classpath,
        main,
        "-",
    ]
    reports = run_scenarios(main, argv, scenarios, timeout=timeout)
    for report in reports:
        for key in PARTITIONED:
            if key in report:
                report[key] = {int(p): v for p, v in report[key].items()}
        report["errors"] = {(int(p) if p.isdigit() else p): v for p, v in report["errors"].items()}
    return reports
