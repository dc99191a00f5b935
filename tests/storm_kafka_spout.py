"""What the real old storm-kafka spout does (org.apache.storm.kafka.KafkaSpout of storm-kafka 1.2.4, offsets as JSON
in ZooKeeper at <zkRoot>/<id>/partition_<N>): where it starts reading each partition, what it emits, and the nodes
it writes back. tests/storm_runner/kafka/OldSpoutRunner.java drives the spout, outside a worker, against a real
ZooKeeper and broker; it is compiled once per session into a temporary directory, as tests/java_consumer.py compiles
ConsumerView. Many scenarios share one JVM start:

    [a] = run_old_spouts([{"name": "a", "zookeeper": zk_server.address, "zk_root": "/r", "spout_id": "s",
                           "topic": topic, "hosts": {"zk": zk_server.address + "/kafka39", "path": "/brokers"},
                           "storm_id": "orders-1-1700000000", "spout_config": {"startOffsetTime": -2}}])
    assert a["first_emitted"] == {"0": 0, "1": 0}         # no node at /r/s/partition_<N>: startOffsetTime's offset
    assert a["written"]["0"] == storm_record(topic, 0, 10, topology_id="orders-1-1700000000", broker=...).decode()

The scenario's keys and the report's (started_at, first_emitted, visit_order, emitted, errors, written, nodes, log,
timed_out, seconds) are described at the top of OldSpoutRunner.java. Partition keys are strings, as in JSON.

The jars come from Maven Central through tests/storm_runner/kafka/pom.xml into
$OFFCTL_STORM_HOME/kafka-1.2.4/lib, else $XDG_DATA_HOME/offctl/storm/kafka-1.2.4/lib (~/.local/share/...):
FETCH_STORM_KAFKA is the command (about 12 s and 59 MB, 37 jars, from an empty Maven repository). javac takes
about 3 s once a session; a call about 1.2 s (the JVM, Storm's classes, the first ZooKeeper session) plus, per
scenario, idle_ms and 0.1-0.3 s (0.3-0.6 s a scenario at idle_ms 300, measured on JDK 17).

Java: the JDK on PATH, 17 here (25 works too). The lib/ holds ZooKeeper's 3.5.3-beta client, not Storm 1.2.4's
3.4.14, which cannot connect on JDK 14 and later (tests/storm_runner/kafka/1.2.4/pom.xml says why).
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from tests.javarun import JVM_FLAGS, RUNNER_IO, compile_java, run_scenarios, scenario_timeout, tool

RELEASE = "1.2.4"
ZOOKEEPER_CLIENT = "3.5.3-beta"  # tests/storm_runner/kafka/1.2.4/pom.xml says why not Storm's 3.4.14
RUNNER = Path(__file__).parent / "storm_runner" / "kafka"
SOURCE = RUNNER / "OldSpoutRunner.java"
FETCH_STORM_KAFKA = ('mvn -q -B -f tests/storm_runner/kafka/pom.xml package '
                     '-Dstorm.home="${XDG_DATA_HOME:-$HOME/.local/share}/offctl/storm"')

# storm-core 1.2.4 logs through slf4j bound to log4j2 (log4j-slf4j-impl 2.8.2); Kafka 0.8's log4j 1.x calls reach it
# through log4j-over-slf4j. OldSpoutRunner takes storm-kafka's own loggers itself (it prints their WARNs on stderr);
# tests/javarun.py's configuration puts every other WARN and up on stderr.

# Mockito 5 would mock TopologyContext with its inline mock maker and reach members through its instrumentation,
# both of which attach a Java agent to the running JVM (warnings on stderr from JDK 21 on); a subclass and plain
# reflection are all a non-final class needs.
MOCKITO_PLUGINS = {"org.mockito.plugins.MockMaker": "mock-maker-subclass\n",
                    "org.mockito.plugins.MemberAccessor": "member-accessor-reflection\n"}


def storm_home() -> Path:
    """Where tests/storm_runner/kafka/pom.xml copies each release's jars, as kafka-<version>/lib:
    OFFCTL_STORM_HOME, else $XDG_DATA_HOME/offctl/storm (~/.local/share/offctl/storm)."""
    if os.environ.get("OFFCTL_STORM_HOME"):
        return Path(os.environ["OFFCTL_STORM_HOME"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "offctl" / "storm"


def lib_dir(release: str = RELEASE) -> Path:
    """The jars of storm-kafka `release`, or AssertionError saying how to fetch them."""
    lib = storm_home() / f"kafka-{release}" / "lib"
    fetch = FETCH_STORM_KAFKA if shutil.which("mvn") else f"apt-get install maven, then {FETCH_STORM_KAFKA}"
    if not (lib / f"storm-kafka-{release}.jar").is_file():
        raise AssertionError(f"storm-kafka {release} is not in {lib}: fetch it and what its spout needs from Maven "
                             f"Central, in offctl's clone: {fetch}")
    # copy-dependencies only adds: a lib/ filled by an older pom keeps jars the current one dropped, and two
    # ZooKeeper clients on one classpath is a coin toss (3.4.14's cannot connect on JDK 14+: see the pom).
    clients = sorted(p.name for p in lib.glob("zookeeper-*.jar"))
    if clients != [f"zookeeper-{ZOOKEEPER_CLIENT}.jar"]:
        raise AssertionError(f"{lib} holds ZooKeeper client jars {clients}, not zookeeper-{ZOOKEEPER_CLIENT}.jar "
                             f"alone: remove {lib.parent} and fetch it again, in offctl's clone: {fetch}")
    return lib


@functools.cache
def _classes() -> tuple[str, str]:
    """OldSpoutRunner compiled once per session: (its classpath with the release's jars, the log4j2 file)."""
    return compile_java((SOURCE, RUNNER_IO), str(lib_dir() / "*"), prefix="old-spout-runner-", log_prefix="storm",
                        files={f"mockito-extensions/{plugin}": choice for plugin, choice in MOCKITO_PLUGINS.items()})


def run_old_spouts(scenarios: list[dict], *, timeout: float | None = None) -> list[dict]:
    """Run each scenario (OldSpoutRunner.java's format) on the real storm-kafka KafkaSpout, all in one JVM; returns
    their reports in order. AssertionError, with the program's stderr, if it fails, prints anything but one JSON
    document, or does not end within `timeout` seconds (by default 60 s plus each scenario's deadline_ms)."""
    timeout = scenario_timeout(scenarios, timeout)
    classpath, logging = _classes()
    argv = [tool("java", "OldSpoutRunner"), *JVM_FLAGS, "-Djava.net.preferIPv4Stack=true",
            f"-Dlog4j2.configurationFile={logging}", "-cp", classpath, "OldSpoutRunner", "-"]
    return run_scenarios("OldSpoutRunner", argv, scenarios, timeout=timeout)
