"""A 3-node Apache Kafka 4.4 cluster in KRaft mode for the faults that need more than one broker: a group coordinator
that moves when its broker is killed or shut down cleanly, as in a rolling restart (issue 43).

Each node runs broker and controller in one process (combined mode), with a static quorum of the three controllers
(controller.quorum.voters), its data under a folder of its own; __consumer_offsets has 6 partitions, replicated 3
times with min.insync.replicas 2, so a group's coordinator moves to another node when its node goes and the
group's offsets survive it. Nodes are stopped and started again by pid: `kill(n)` is SIGKILL (a crash), `shut_down(n)`
SIGTERM (Kafka's controlled shutdown: the node hands its leaderships over before it exits), `start(n)` starts it
again on the same ports and data.

    with kraft_cluster(tmp_path) as cluster:
        cluster.bootstrap                       # "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3"
        node = cluster.coordinator_of("g")      # the node id that coordinates group g now
        cluster.kill(node); cluster.start(node)

Started in about 15 s on 2 cores (three JVMs, about 400 MiB resident each).
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import subprocess
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from offctl.adapters import servers

NODES = 3
_SETTINGS = {
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "6",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": "3",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "group.initial.rebalance.delay.ms": "0",
    "controlled.shutdown.enable": "true",
}


@dataclass
class KraftCluster:
    root: Path
    ports: dict[int, int]  # node id -> its broker port
    controllers: dict[int, int]  # node id -> its controller port
    jvm: list[str]
    pids: dict[int, int] = field(default_factory=dict)  # node id -> pid, for the nodes running

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.ports.values())

    def address(self, node: int) -> str:
        return f"127.0.0.1:{self.ports[node]}"

    def start(self, *nodes: int, timeout: float = 90.0) -> None:
        """Start these nodes (all at once: a node's broker listens only once a quorum of controllers runs) and
        return when each listens."""
        started = {}
        for node in nodes:
            folder = self.root / f"node-{node}"
            with open(folder / "stdout.log", "ab") as out:
                started[node] = subprocess.Popen(
                    [*self.jvm, "kafka.Kafka", str(folder / "server.properties")],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            self.pids[node] = started[node].pid
        for node, proc in started.items():
            servers._wait_until_listening(
                proc, f"Kafka node {node}", self.ports[node], self.root / f"node-{node}" / "stdout.log", timeout
            )

    def kill(self, node: int) -> None:
        """SIGKILL: the node is gone at once, as in a crash."""
        pid = self.pids.pop(node)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)

    def shut_down(self, node: int, timeout: float = 60.0) -> None:
        """SIGTERM: Kafka's controlled shutdown, as a rolling restart stops a node."""
        servers.stop(self.pids.pop(node), timeout)

    def stop_all(self) -> None:
        for node in list(self.pids):
            servers.stop(self.pids.pop(node))

    def coordinator_of(self, group: str, timeout: float = 30.0) -> int:
        """The node id that coordinates `group` now (FindCoordinator, through kafka-python)."""
        from kafka.admin import KafkaAdminClient

        deadline = time.monotonic() + timeout
        while True:
            admin = KafkaAdminClient(
                bootstrap_servers=[self.address(n) for n in self.pids],
                request_timeout_ms=5000,
                bootstrap_timeout_ms=10000,
            )
            try:
                admin.list_group_offsets({group: None})  # finds the coordinator and asks it
                node = admin._manager.cluster.get_coordinator(group)
                if node is not None and node in self.pids:
                    return int(node)
            except Exception:  # noqa: BLE001 - the coordinator is moving: ask again
                if time.monotonic() > deadline:
                    raise
            finally:
                admin.close()
            time.sleep(0.5)


def _properties(root: Path, node: int, ports: dict[int, int], controllers: dict[int, int]) -> Path:
    folder = root / f"node-{node}"
    folder.mkdir(parents=True, exist_ok=True)
    voters = ",".join(f"{n}@127.0.0.1:{c}" for n, c in controllers.items())
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node),
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://127.0.0.1:{ports[node]},CONTROLLER://127.0.0.1:{controllers[node]}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{ports[node]}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(folder / "data"),
        **_SETTINGS,
    }
    config = folder / "server.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return config


@contextmanager
def kraft_cluster(root: Path, timeout: float = 120.0):
    """Start the three nodes, wait until the group coordinator answers, yield the cluster, stop every node."""
    java = shutil.which("java")
    if java is None:
        raise servers.MissingPrerequisite("java not found: Kafka needs it (apt-get install openjdk-17-jre-headless)")
    classpath = servers.kafka_classpath(servers.KAFKA)
    ports = {n: servers.free_port() for n in range(1, NODES + 1)}
    controllers = {n: servers.free_port() for n in range(1, NODES + 1)}
    logging = root / "log4j.properties"
    root.mkdir(parents=True, exist_ok=True)
    logging.write_text(servers._LOG4J2.format(log=root / "cluster.log"))
    jvm = [
        java,
        "-Xms128m",
        "-Xmx512m",
        "-XX:+UseG1GC",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={logging}",
        "-cp",
        classpath,
    ]
    cluster_id = "-"
    while cluster_id.startswith("-"):  # as kafka-storage random-uuid makes one (never starting with "-")
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    for node in ports:
        config = _properties(root, node, ports, controllers)
        formatted = subprocess.run(
            [*jvm, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(config)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if formatted.returncode != 0:
            raise servers.ServerFailed(
                f"node {node}'s storage could not be formatted: "
                f"{(formatted.stderr or formatted.stdout).strip()[-1000:]}"
            )
    cluster = KraftCluster(root, ports, controllers, jvm)
    try:
        cluster.start(*ports, timeout=timeout)
        cluster.coordinator_of("offctl-cluster-ready", timeout)
        yield cluster
    finally:
        cluster.stop_all()
