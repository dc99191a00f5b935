"""What the real old storm-kafka spout does (KafkaSpout of storm-kafka 1.2.4 by default, or of another release in
RELEASES; offsets as JSON in ZooKeeper at <zkRoot>/<id>/partition_<N>): where it starts reading each partition, what
it emits, and the nodes it writes back. tests/storm_runner/kafka/OldSpoutRunner.java drives the spout, outside a
worker, against a real ZooKeeper and broker; it is compiled once per session and release into a temporary directory,
as tests/oracle/java_consumer.py compiles ConsumerView. Many scenarios share one JVM start (one per call):

    [a] = run_old_spouts([{"name": "a", "zookeeper": zk_server.address, "zk_root": "/r", "spout_id": "s",
                           "topic": topic, "hosts": {"zk": zk_server.address + "/kafka39", "path": "/brokers"},
                           "storm_id": "orders-1-1700000000", "spout_config": {"startOffsetTime": -2}}])
    assert a["first_emitted"] == {"0": 0, "1": 0}         # no node at /r/s/partition_<N>: startOffsetTime's offset
    assert a["written"]["0"] == storm_record(topic, 0, 10, topology_id="orders-1-1700000000", broker=...).decode()

The scenario's keys and the report's (started_at, first_emitted, visit_order, emitted, errors, written, nodes, log,
timed_out, seconds) are described at the top of OldSpoutRunner.java. Partition keys are strings, as in JSON.

    [b] = run_old_spouts([...], release="0.9.7")     # storm.kafka.KafkaSpout of 0.9.7: same scenario format

The jars come from Maven Central through tests/storm_runner/kafka/pom.xml into
$OFFCTL_STORM_HOME/kafka-<release>/lib, else $XDG_DATA_HOME/offctl/storm/kafka-<release>/lib (~/.local/share/...),
one module per release in RELEASES: FETCH_STORM_KAFKA is the command (1.2.4 alone: about 12 s and 59 MB, 37 jars,
from an empty Maven repository; all six: about 67 s and 305 MB, 40-59 MB a release, on a busy machine). javac takes
about 3-5 s once a session and release; a call about 1.2 s (the JVM, Storm's classes, the first ZooKeeper session)
plus, per scenario, idle_ms and 0.1-0.3 s (0.3-0.6 s a scenario at idle_ms 300, measured on JDK 17; on 0.9.x and
0.10.x one scenario in three or so takes about 1 s more, not traced).

0.9.x and 0.10.x name their packages backtype.storm and storm.kafka: the runner is compiled from a copy of
OldSpoutRunner.java with those names put in (_source; OldSpoutRunner.java's header lists what else differs and how
it is handled).

Java: the JDK on PATH, 17 here (25 works too). Each lib/ holds the ZooKeeper client ZOOKEEPER_CLIENTS names: 1.2.4's
is 3.5.3-beta, not Storm 1.2.4's 3.4.14, which cannot connect on JDK 14 and later
(tests/storm_runner/kafka/1.2.4/pom.xml says why); the other releases' poms keep Storm's own.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

from tests.oracle.javarun import JVM_FLAGS, RUNNER_IO, compile_java, run_scenarios, scenario_timeout, tool

RELEASE = "1.2.4"  # the default: the last storm-kafka release
# Each release tests/storm_runner/kafka/pom.xml fetches (a module each), newest first, with the ZooKeeper client jar
# its pom puts in lib/: 1.2.4's pom says why not Storm 1.2.4's 3.4.14; the others are the release's own (root
# pom.xml at its tag), which connect on JDK 17.
ZOOKEEPER_CLIENTS = {
    "1.2.4": "3.5.3-beta",
    "1.1.3": "3.4.6",
    "1.0.6": "3.4.6",
    "0.10.2": "3.4.6",
    "0.9.7": "3.4.6",
    "0.9.2-incubating": "3.4.5",
}
RELEASES = tuple(ZOOKEEPER_CLIENTS)
ZOOKEEPER_CLIENT = ZOOKEEPER_CLIENTS[RELEASE]
RUNNER = Path(__file__).parent.parent / "storm_runner" / "kafka"
SOURCE = RUNNER / "OldSpoutRunner.java"
FETCH_STORM_KAFKA = (
    "mvn -q -B -f tests/storm_runner/kafka/pom.xml package "
    '-Dstorm.home="${XDG_DATA_HOME:-$HOME/.local/share}/offctl/storm"'
)

# storm-core logs through slf4j bound to log4j2 (log4j-slf4j-impl 2.8.2 in 1.2.4, 2.1 in 0.10.2; the 0.9.x poms put
# 0.10's 2.1 in place of logback, as they say); Kafka 0.8's log4j 1.x calls reach it through log4j-over-slf4j.
# OldSpoutRunner takes storm-kafka's own loggers itself (it prints their WARNs on stderr); tests/oracle/javarun.py's
# configuration puts every other WARN and up on stderr.

# Mockito 5 would mock TopologyContext with its inline mock maker and reach members through its instrumentation,
# both of which attach a Java agent to the running JVM (warnings on stderr from JDK 21 on); a subclass and plain
# reflection are all a non-final class needs.
MOCKITO_PLUGINS = {
    "org.mockito.plugins.MockMaker": "mock-maker-subclass\n",
    "org.mockito.plugins.MemberAccessor": "member-accessor-reflection\n",
}


def storm_home() -> Path:
    """Where tests/storm_runner/kafka/pom.xml copies each release's jars, as kafka-<version>/lib:
    OFFCTL_STORM_HOME, else $XDG_DATA_HOME/offctl/storm (~/.local/share/offctl/storm)."""
    if os.environ.get("OFFCTL_STORM_HOME"):
        return Path(os.environ["OFFCTL_STORM_HOME"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "offctl" / "storm"


def lib_dir(release: str = RELEASE) -> Path:
    """The jars of storm-kafka `release`, or AssertionError saying how to fetch them."""
    if release not in ZOOKEEPER_CLIENTS:
        raise ValueError(
            f"storm-kafka {release} is not fetched by tests/storm_runner/kafka/pom.xml: one of {', '.join(RELEASES)}"
        )
    lib = storm_home() / f"kafka-{release}" / "lib"
    fetch = FETCH_STORM_KAFKA if shutil.which("mvn") else f"apt-get install maven, then {FETCH_STORM_KAFKA}"
    if not (lib / f"storm-kafka-{release}.jar").is_file():
        raise AssertionError(
            f"storm-kafka {release} is not in {lib}: fetch it and what its spout needs from Maven "
            f"Central, in offctl's clone: {fetch}"
        )
    # copy-dependencies only adds: a lib/ filled by an older pom keeps jars the current one dropped, and two
    # ZooKeeper clients on one classpath is a coin toss (3.4.14's cannot connect on JDK 14+: see the pom).
    client = ZOOKEEPER_CLIENTS[release]
    clients = sorted(p.name for p in lib.glob("zookeeper-*.jar"))
    if clients != [f"zookeeper-{client}.jar"]:
        raise AssertionError(
            f"{lib} holds ZooKeeper client jars {clients}, not zookeeper-{client}.jar "
            f"alone: remove {lib.parent} and fetch it again, in offctl's clone: {fetch}"
        )
    return lib


def before_1_0(release: str) -> bool:
    """0.9.x and 0.10.x: packages backtype.storm and storm.kafka (org.apache.storm... from 1.0.0 on)."""
    return release.startswith("0.")


def _source(release: str) -> Path:
    """OldSpoutRunner.java as `release` compiles it: itself from 1.0 on; before, a copy in a temporary directory
    (removed at exit) with storm-kafka's package, storm.kafka, and storm-core's, backtype.storm, put in."""
    if not before_1_0(release):
        return SOURCE
    where = Path(tempfile.mkdtemp(prefix=f"old-spout-source-{release}-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    text = (
        SOURCE.read_text()
        .replace("org.apache.storm.kafka", "storm.kafka")
        .replace("org.apache.storm.", "backtype.storm.")
    )
    (where / SOURCE.name).write_text(text)
    return where / SOURCE.name


@functools.cache
def _classes(release: str = RELEASE) -> tuple[str, str]:
    """OldSpoutRunner compiled once per session and release: (its classpath with the release's jars, the log4j2
    file)."""
    return compile_java(
        (_source(release), RUNNER_IO),
        str(lib_dir(release) / "*"),
        prefix=f"old-spout-runner-{release}-",
        log_prefix="storm",
        files={f"mockito-extensions/{plugin}": choice for plugin, choice in MOCKITO_PLUGINS.items()},
    )


def run_old_spouts(scenarios: list[dict], *, release: str = RELEASE, timeout: float | None = None) -> list[dict]:
    """Run each scenario (OldSpoutRunner.java's format) on the real KafkaSpout of storm-kafka `release` (one of
    RELEASES), all in one JVM; returns their reports in order. AssertionError, with the program's stderr, if it
    fails, prints anything but one JSON document, or does not end within `timeout` seconds (by default 60 s plus
    each scenario's deadline_ms)."""
    timeout = scenario_timeout(scenarios, timeout)
    classpath, logging = _classes(release)
    argv = [
        tool("java", "OldSpoutRunner"),
        *JVM_FLAGS,
        "-Djava.net.preferIPv4Stack=true",
        f"-Dlog4j2.configurationFile={logging}",
        "-cp",
        classpath,
        "OldSpoutRunner",
        "-",
    ]
    return run_scenarios(f"OldSpoutRunner (storm-kafka {release})", argv, scenarios, timeout=timeout)
