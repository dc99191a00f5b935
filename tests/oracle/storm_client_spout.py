"""Where the REAL storm-kafka-client KafkaSpout starts, and what it commits, on a real broker: the reference that
offctl's "will resume at" verdicts for storm-kafka-client spouts are held to. tests/storm_runner/client/
ClientSpoutRunner.java drives the spout (open, activate, nextTuple, ack, deactivate, close) with a mocked
TopologyContext; it is compiled once per session and line into a temporary directory, as tests/oracle/java_consumer.py
compiles ConsumerView.

    [got] = run_client_spouts("2.8.3", [{"name": "resume", "bootstrap_servers": kafka.bootstrap, "topic": topic,
                                         "group_id": group, "topology_id": "orders-1-1700000000",
                                         "first_poll_offset_strategy": "UNCOMMITTED_EARLIEST"}])
    assert got["first_emitted"] == {0: 3}
    assert got["committed"][0]["offset"] == 4

A scenario's keys are ClientSpoutRunner's (its header lists them: bootstrap_servers, topic, group_id, topology_id
are required; first_poll_offset_strategy, processing_guarantee, offset_commit_period_ms, partitions, task_id,
commit_first, emit ("first" or "all"), run_ms, ack, deadline_ms, poll_ms, kafka_props are not). Each answer is the
runner's, with the partition-keyed maps (log_start, log_end, start_position, end_position, first_emitted, emitted,
committed) keyed by int:

    {"name": ..., "storm_line": "2.x", "assigned": [0], "log_start": {0: 0}, "log_end": {0: 10},
     "start_position": {0: 3}, "end_position": {0: 10}, "first_emitted": {0: 3}, "emitted": {0: [3]},
     "timed_out": False, "errors": {},
     "committed": {0: {"offset": 4, "metadata": '{"topologyId":"orders-1-1700000000","taskId":1,"threadName":"main"}'}},
     "elapsed_ms": 560}

errors: a spout call that threw, by phase (open, activate, nextTuple, ack, deactivate, close), as
"<exception class>: <message>"; the scenario still closes the spout and reads the group back.

Pass every scenario of a line in one call: they share one JVM. Measured here (2 cores): a call takes about 0.5 s of
JVM start, about 2 s for its first scenario (class loading, Mockito's inline mock maker), then about 0.6 s a
scenario that polls (50 ms one that has nothing to emit on 2.8.3); 12 scenarios in 7.5 s (2.8.3) and 9 s (1.2.4).

The jars are each line's runtime, fetched from Maven Central by tests/storm_runner/client/pom.xml (FETCH below) into
<storm home>/client-<version>/lib: OFFCTL_STORM_HOME, else $XDG_DATA_HOME/offctl/storm
(~/.local/share/offctl/storm).
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from tests.oracle.javarun import JVM_FLAGS, RUNNER_IO, compile_java, run_scenarios, scenario_timeout, tool

HERE = Path(__file__).parent.parent / "storm_runner" / "client"
SOURCE = HERE / "ClientSpoutRunner.java"
FETCH = (
    "mvn -q -B -f tests/storm_runner/client/pom.xml package "
    '-Dstorm.home="${XDG_DATA_HOME:-$HOME/.local/share}/offctl/storm"'
)

# The release lines tests/storm_runner/client/pom.xml fetches: line -> the JDK that runs it (None: java on PATH,
# Java 17 here). storm-kafka-client 2.8.3 is the newest 2.x Maven Central resolves (2.8.3/pom.xml says why; its
# KafkaSpout is v2.8.8's but for imports); 1.2.4 is the last 1.x, with kafka-clients 0.10.1.0, for Kafka 3.9. The
# others (tests/oracle/test_storm_kafka_client_releases_e2e.py): 2.0.0, the oldest 2.x (kafka-clients 0.11.0.3); 1.1.3
# and 1.0.6, the first "current" 1.x (CommitMetadataManager; kafka-clients 0.10.1.0); 1.1.1 and 1.0.5, the newest of
# the legacy lines (commits hold the last processed offset; kafka-clients 0.10.0.0 and 0.9.0.1). All but 2.8.3 talk
# to Kafka 3.9 only: Kafka 4.x refuses the request versions kafka-clients before 2.1 send (KIP-896).
LINES: dict[str, str | None] = {
    "2.8.3": None,
    "1.2.4": None,
    "2.0.0": None,
    "1.1.3": None,
    "1.0.6": None,
    "1.1.1": None,
    "1.0.5": None,
}
# The KafkaSpoutConfig API each line is driven through (ClientSpoutRunner's header; its answers' "api")
APIS = {
    "2.8.3": "2.x",
    "2.0.0": "2.x",
    "1.2.4": "1.x",
    "1.1.3": "1.x",
    "1.0.6": "1.x",
    "1.1.1": "1.1-legacy",
    "1.0.5": "1.0-legacy",
}
PARTITIONED = ("log_start", "log_end", "start_position", "end_position", "first_emitted", "emitted", "committed")


class MissingStormClient(AssertionError):
    """A line's jars are not where tests/storm_runner/client/pom.xml puts them; the message says how to fetch them."""


def storm_home() -> Path:
    if os.environ.get("OFFCTL_STORM_HOME"):
        return Path(os.environ["OFFCTL_STORM_HOME"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "offctl" / "storm"


def lib_dir(line: str) -> Path:
    """<storm home>/client-<line>/lib, or MissingStormClient saying how to fetch it."""
    if line not in LINES:
        raise ValueError(f"no storm-kafka-client line {line!r}: one of {sorted(LINES)}")
    lib = storm_home() / f"client-{line}" / "lib"
    if not (lib / f"storm-kafka-client-{line}.jar").is_file():
        fetch = FETCH if shutil.which("mvn") else f"apt-get install maven, then {FETCH}"
        raise MissingStormClient(
            f"storm-kafka-client {line} is not in {lib}: fetch it from the project's root with "
            f"`{fetch}` (or set OFFCTL_STORM_HOME to where it is)"
        )
    return lib


@functools.cache
def _classes(line: str, jars: Path) -> tuple[str, str]:
    """ClientSpoutRunner compiled against the line's jars, once per session: (its classpath, the log4j2 file)."""
    return compile_java(
        (SOURCE, RUNNER_IO),
        f"{jars}/*",
        prefix=f"client-spout-{line}-",
        log_prefix="storm-kafka-client",
        java_home=LINES[line],
    )


def run_client_spouts(
    line: str,
    scenarios: list[dict],
    *,
    timeout: float | None = None,
    logging: Path | None = None,
    log: list[str] | None = None,
) -> list[dict]:
    """Run each scenario's KafkaSpout of storm-kafka-client `line` (one of LINES), in order, in one JVM;
    returns the runner's answers in the same order, partition keys as ints. AssertionError, with the runner's
    stderr, if it fails, prints anything but one JSON line, or does not end within `timeout` seconds (default: 60 s
    plus every scenario's deadline). `logging`: a log4j2 configuration file in place of the one compiled with the
    runner (WARN and up on stderr); `log`: where given, gets the runner's stderr lines (each scenario's begin with
    "ClientSpoutRunner: scenario <name>")."""
    timeout = scenario_timeout(scenarios, timeout)
    classpath, compiled = _classes(line, lib_dir(line))
    logging = logging or compiled
    argv = [
        tool("java", "ClientSpoutRunner", LINES[line]),
        *JVM_FLAGS,
        # log4j 2.10 and later read log4j2.configurationFile; the 2.8.2 of Storm 1.x reads log4j.configurationFile
        # only (and else storm-core's own log4j2.xml: INFO and up on stdout, which the runner points at stderr)
        f"-Dlog4j2.configurationFile={logging}",
        f"-Dlog4j.configurationFile={logging}",
        "-cp",
        classpath,
        "ClientSpoutRunner",
    ]
    answers = run_scenarios(f"ClientSpoutRunner ({line})", argv, scenarios, timeout=timeout, log=log)
    for answer in answers:
        for key in PARTITIONED:
            answer[key] = {int(p): v for p, v in answer[key].items()}
    return answers
