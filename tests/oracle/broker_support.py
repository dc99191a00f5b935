"""Which broker releases really serve which spouts (issue 46): the REAL spout of a Storm release pointed at a REAL
broker, and what it did: fetched the topic's messages, wrote its position back, or was refused. The ground truth
offctl's verdict (BROKER_INCOMPATIBLE) is held to in tests/oracle/test_broker_support_e2e.py.

    seen = observe_all("storm-kafka-client", "1.2.4", [Target("4.4", broker, kafka), Target("3.9", broker39, kafka39)],
                       zk_server.address, zk)
    seen["4.4"].fetched, seen["4.4"].committed, seen["4.4"].error, seen["4.4"].refused_by_broker

Every target of one call runs in one JVM (tests/oracle/storm_kafka_spout.py's OldSpoutRunner for storm-kafka,
tests/oracle/storm_client_spout.py's ClientSpoutRunner for storm-kafka-client). Each target gets a topic of its own,
MESSAGES records in one partition, and a position stored before the spout opens, at SEEDED, as a spout running before
the upgrade would have left it: storm-kafka's node <zkRoot>/<id>/partition_0 written by the same topology,
storm-kafka-client's group commit with CommitMetadataManager's metadata of the same topology. A spout the broker
serves then emits SEEDED..MESSAGES-1 and stores MESSAGES (its deactivate() and close() commit: KafkaSpout.java at
v1.2.4 of storm-kafka, KafkaSpout.java at v1.2.4, v2.0.0 and v2.8.3 of storm-kafka-client); one it refuses leaves
the stored position where it was, which is what offctl then inspects (`inspect_args`).

How each spout is pointed at the broker:
  - storm-kafka on Kafka 3.9 (ZooKeeper mode): ZkHosts on the broker's own registry (<chroot>/brokers), as a Storm
    shop runs it; on Kafka 4.4 (KRaft) there is no registry in ZooKeeper, so StaticHosts names the broker (the only
    way the spout can even reach a KRaft cluster).
  - storm-kafka-client: bootstrap.servers, the spout's default AT_LEAST_ONCE and UNCOMMITTED_EARLIEST, one task.

What bounds a refused spout's cost: storm-kafka's SimpleConsumer (kafka_2.10 0.8.2.1) reconnects once after the broker
closes the connection, then throws (SimpleConsumer.sendRequest, core/src/main/scala/kafka/consumer/SimpleConsumer.scala
at Kafka's 0.8.2.1), out of KafkaUtils.getOffset and PartitionManager's constructor (KafkaUtils.java:81,
PartitionManager.java:135 at Storm's v1.2.4), which StaticCoordinator's constructor calls from KafkaSpout.open
(KafkaSpout.java:86-90): open() throws at once. kafka-clients 0.10.x never gives up: its consumer reconnects and sends
its fetch again every reconnect.backoff.ms (50 ms), nextTuple() throws nothing and emits nothing, so a client scenario
polls until CLIENT_POLL_MS after activate() (its "timed_out"). A served client scenario ends once it has emitted up to
the log end.

Its `error` is the first of: what a spout method threw (the runners' "errors"); what storm-kafka logged at WARN and
up; what kafka-clients logged of a failed request (LOG4J2 below: its NetworkClient's "Node N disconnected." and its
Fetcher's "Fetch request to ... failed", both at DEBUG, so that a client that retries silently says why), or null.
`refused_by_broker`: the distinct UnsupportedVersionException lines the broker wrote to its log while the call ran
(Kafka 4.4's SocketServer: "Received request for api with key 1 (Fetch) and unsupported version 3").
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from offctl.adapters.servers import Broker
    from tests.conftest import KafkaHelper

STORM_ID = "orders-topology-1-1700000000"  # the running topology, as the runners' TopologyContext reports it
SPOUT_ID = "orders-spout"
MESSAGES = 5  # in the topic's one partition
SEEDED = 2  # the position stored before the spout opens
# A client scenario polls for at most CLIENT_POLL_MS after activate(): what a refused client costs (a served one has
# emitted everything well within a second of it); CLIENT_DEADLINE_MS bounds the whole scenario, the JVM's
# warm-up in its first included (5 to 12 s for storm-kafka-client 2.8.3 on 2 busy cores).
CLIENT_POLL_MS = 5_000
CLIENT_DEADLINE_MS = 40_000
OLD_DEADLINE_MS = 20_000
LIBRARIES = ("storm-kafka", "storm-kafka-client")

# kafka-clients' failed requests at DEBUG, WARN and up of everything else, on stderr. XML, which every log4j2 release
# on the runners' classpaths reads (2.8.2 of Storm 1.x to 2.25.2 of Storm 2.8.3); one line per event, an exception
# as its first line only (kafka-clients 0.10.x logs a DisconnectException for every fetch it retries).
LOG4J2 = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration>
  <Appenders>
    <Console name="stderr" target="SYSTEM_ERR">
      <PatternLayout pattern="%p %c{1}: %m%replace{: %throwable{1}}{[\\r\\n]+|^: $}{}%n" alwaysWriteExceptions="false"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="org.apache.kafka.clients.NetworkClient" level="debug">
      <RegexFilter regex=".*disconnected.*" onMatch="ACCEPT" onMismatch="DENY"/>
    </Logger>
    <Logger name="org.apache.kafka.clients.consumer.internals.Fetcher" level="debug">
      <RegexFilter regex=".*failed.*" onMatch="ACCEPT" onMismatch="DENY"/>
    </Logger>
    <Root level="warn">
      <AppenderRef ref="stderr"/>
    </Root>
  </Loggers>
</Configuration>
"""
MARK = "ClientSpoutRunner: scenario "  # ClientSpoutRunner.SCENARIO_MARK
LOGGED = re.compile(r"(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) \S+: ")  # LOG4J2's layout
REFUSED = re.compile(r"UnsupportedVersionException: (.*)")
LOG_LINES = 5  # the first distinct lines kept of a scenario's log


@dataclass(frozen=True)
class Target:
    """A broker to point the spout at: `name` (e.g. "4.4"), the broker (its address, its log and, in ZooKeeper
    mode, its registry's connect string) and a KafkaHelper on it."""

    name: str
    broker: Broker
    kafka: KafkaHelper


@dataclass(frozen=True)
class Observed:
    """What the spout did on one broker."""

    fetched: bool  # it emitted every message from the stored position to the log end
    committed: bool  # it wrote its position back: the log end, in its node or the group's commit
    error: str | None  # the first error it threw or logged (above), or None
    refused_by_broker: tuple[str, ...]  # the broker's UnsupportedVersionException lines while it ran
    log: tuple[str, ...]  # the first distinct lines the spout or its client logged (WARN and up, failed requests)
    emitted: tuple[int, ...]
    stored: int | None  # the position stored after the run (SEEDED if the spout wrote none)
    timed_out: bool
    inspect_args: tuple[str, ...]  # offctl inspect's options naming the state it left


def observe(library: str, release: str, target: Target, zookeeper: str, zk) -> Observed:
    """The spout of `library` `release` on one broker (observe_all's, alone)."""
    return observe_all(library, release, [target], zookeeper, zk)[target.name]


def observe_all(library: str, release: str, targets: list[Target], zookeeper: str, zk) -> dict[str, Observed]:
    """The spout of `library` (storm-kafka or storm-kafka-client) `release` on each target, all in one JVM; by
    target name. `zookeeper`: the test ZooKeeper's address, `zk` a kazoo client on it (storm-kafka keeps its
    position there; offctl reads Storm's root there)."""
    if library not in LIBRARIES:
        raise ValueError(f"no library {library!r}: one of {LIBRARIES}")
    prefix = f"support-{library}-{release}-{time.time_ns()}"
    zk.create(f"/{prefix}/storm/storms/{STORM_ID}", makepath=True)
    logs = {t.name: _log_size(t.broker.log) for t in targets}
    if library == "storm-kafka":
        seen = _storm_kafka(release, targets, prefix, zookeeper, zk)
    else:
        seen = _storm_kafka_client(release, targets, prefix, zookeeper)
    return {t.name: Observed(**seen[t.name], refused_by_broker=_refusals(t.broker.log, logs[t.name])) for t in targets}


# --- storm-kafka ----------------------------------------------------------------------------------------------------


def _storm_kafka(release: str, targets: list[Target], prefix: str, zookeeper: str, zk) -> dict[str, dict]:
    from tests.conftest import storm_record
    from tests.oracle.storm_kafka_spout import run_old_spouts

    scenarios, topics = [], {}
    for t in targets:
        topic = topics[t.name] = t.kafka.filled_topic(f"{prefix}-{_slug(t.name)}", 1, MESSAGES)
        root = f"/{prefix}/{_slug(t.name)}"
        record = storm_record(topic, 0, SEEDED, topology_id=STORM_ID, broker=t.broker.address)
        zk.create(f"{root}/{SPOUT_ID}/partition_0", record, makepath=True)
        registry = t.broker.zookeeper  # ZooKeeper mode: where the broker registers; KRaft: None
        hosts = {"zk": registry, "path": "/brokers"} if registry else {"static": {"0": t.broker.address}}
        scenarios.append(
            {
                "name": t.name,
                "zookeeper": zookeeper,
                "zk_root": root,
                "spout_id": SPOUT_ID,
                "topic": topic,
                "storm_id": STORM_ID,
                "hosts": hosts,
                "idle_ms": 300,
                "deadline_ms": OLD_DEADLINE_MS,
            }
        )
    seen = {}
    for s, report in zip(scenarios, run_old_spouts(scenarios, release=release), strict=True):
        written = report["written"].get("0")
        stored = json.loads(written)["offset"] if written else SEEDED
        errors = [line for lines in report["errors"].values() for line in lines]
        seen[s["name"]] = _seen(
            report["emitted"].get("0", []),
            stored,
            errors,
            [line for line in report["log"] if line.startswith(("WARN", "ERROR"))],
            report["timed_out"],
            (
                *("--zk", zookeeper, "--zk-root", s["zk_root"], "--spout", SPOUT_ID),
                *("--storm-root", f"/{prefix}/storm", "--topic", s["topic"]),
                *("--bootstrap-servers", next(t.broker.address for t in targets if t.name == s["name"])),
                *("--storm-kafka-release", release),
            ),
        )
    return seen


# --- storm-kafka-client ---------------------------------------------------------------------------------------------


def _storm_kafka_client(release: str, targets: list[Target], prefix: str, zookeeper: str) -> dict[str, dict]:
    from tests.oracle.storm_client_spout import run_client_spouts

    metadata = json.dumps({"topologyId": STORM_ID, "taskId": 1, "threadName": "main"}, separators=(",", ":"))
    scenarios = []
    for t in targets:
        topic = t.kafka.filled_topic(f"{prefix}-{_slug(t.name)}", 1, MESSAGES)
        group = f"{prefix}-{_slug(t.name)}"
        t.kafka.commit(group, topic, {0: SEEDED}, metadata)
        scenarios.append(
            {
                "name": t.name,
                "bootstrap_servers": t.broker.address,
                "topic": topic,
                "group_id": group,
                "topology_id": STORM_ID,
                "emit": "all",
                "poll_ms": CLIENT_POLL_MS,
                "deadline_ms": CLIENT_DEADLINE_MS,
            }
        )
    with tempfile.TemporaryDirectory(prefix="broker-support-") as where:
        logging = Path(where) / "log4j2.xml"
        logging.write_text(LOG4J2)
        log: list[str] = []
        reports = run_client_spouts(release, scenarios, logging=logging, log=log)
    logged = _by_scenario(log)
    seen = {}
    for s, report in zip(scenarios, reports, strict=True):
        commit = report["committed"].get(0)
        seen[s["name"]] = _seen(
            report["emitted"].get(0, []),
            commit["offset"] if commit else None,
            [f"{phase}: {what}" for phase, what in report["errors"].items()],
            logged.get(s["name"], []),
            report["timed_out"],
            (
                *("--zk", zookeeper, "--storm-root", f"/{prefix}/storm"),
                *("--bootstrap-servers", s["bootstrap_servers"], "--group", s["group_id"], "--topic", s["topic"]),
                *("--storm-kafka-client-release", release),
            ),
        )
    return seen


def _by_scenario(lines: list[str]) -> dict[str, list[str]]:
    """The lines LOG4J2's layout wrote on the runner's stderr, by the scenario they were written in (after its MARK
    line); the JVM's warnings and the runner's own stack traces (its "errors" say what was thrown) are left out."""
    out: dict[str, list[str]] = {}
    current = None
    for line in lines:
        if line.startswith(MARK):
            current = out.setdefault(line[len(MARK) :], [])
        elif current is not None and LOGGED.match(line):
            current.append(line)
    return out


# --- both -------------------------------------------------------------------------------------------------------


def _seen(
    emitted: list[int], stored: int | None, thrown: list[str], logged: list[str], timed_out: bool, args: tuple
) -> dict:
    """Observed's fields but the broker's, from one report."""
    distinct = list(dict.fromkeys(logged))
    return {
        "fetched": emitted == list(range(SEEDED, MESSAGES)),
        "committed": stored == MESSAGES,
        "error": next(iter([*thrown, *distinct]), None),
        "log": tuple(distinct[:LOG_LINES]),
        "emitted": tuple(emitted),
        "stored": stored,
        "timed_out": timed_out,
        "inspect_args": args,
    }


def _log_size(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


def _refusals(log: Path, since: int) -> tuple[str, ...]:
    """The distinct UnsupportedVersionException messages in the broker's log after byte `since`."""
    if not log.exists():
        return ()
    with log.open("rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    return tuple(dict.fromkeys(m.group(1).strip() for m in REFUSED.finditer(text)))


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name)
