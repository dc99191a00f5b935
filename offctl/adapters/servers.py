"""Local ZooKeeper and Apache Kafka processes on free loopback ports, stopped by pid.

Used by the test fixtures and the sandbox. ZooKeeper is Debian's `zookeeper` package run as a standalone
ZooKeeperServerMain; Kafka is Apache Kafka itself, from the jars kafka/pom.xml fetches from Maven Central with
Debian's maven: 4.4.0 in KRaft mode by default, 3.9.2 in ZooKeeper mode for the Storm 1.x era.
"""

from __future__ import annotations

import base64
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from offctl.errors import OffctlError

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # its manifest carries the rest of the classpath


class MissingPrerequisite(OffctlError):
    """A program a local server needs is not installed; the message says how to install it (exit 3)."""

    exit_code = 3


class ServerFailed(OffctlError):
    """A local server did not start: it exited, or did not answer in time; the message names its log (exit 3)."""

    exit_code = 3


@dataclass(frozen=True)
class LocalServer:
    name: str
    pid: int
    host: str
    port: int
    log: Path

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PORT = 20000  # where free_port starts looking


def _ephemeral_low() -> int:
    """The lowest port the kernel gives an outgoing connection (net.ipv4.ip_local_port_range; Linux's default 32768)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A free loopback port for a server offctl starts, below the kernel's ephemeral range. A port bind(0) gives is
    one the kernel also hands to outgoing connections: between this check and the server's own bind, a client
    connection (Kafka's, ZooKeeper's, many a second) could take it, and the server would exit with the port in use.
    Below the range only another server's bind can take it. Falls back to bind(0) where the range leaves no room."""
    low = _ephemeral_low()
    rng = random.Random()
    for _ in range(200) if low - LOWEST_PORT >= 1000 else ():
        port = rng.randrange(LOWEST_PORT, low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_listening(proc: subprocess.Popen, name: str, port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise ServerFailed(f"{name} exited with code {proc.returncode} while starting; log {log}:\n{tail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    stop(proc.pid)
    raise ServerFailed(f"{name} did not listen on 127.0.0.1:{port} within {timeout:g}s; log {log}")


def _spawn(name: str, argv: list[str], port: int, log: Path, timeout: float) -> LocalServer:
    return _spawn_env(name, argv, port, log, timeout, dict(os.environ))


def start_zookeeper(data_dir: Path, port: int | None = None, timeout: float = 60.0) -> LocalServer:
    java = shutil.which("java")
    if java is None:
        raise MissingPrerequisite(
            "java not found: ZooKeeper needs it. Install it with `apt-get install openjdk-17-jre-headless`."
        )
    if not ZOOKEEPER_JAR.exists():
        raise MissingPrerequisite(
            f"{ZOOKEEPER_JAR} not found: install Debian's ZooKeeper with `apt-get install zookeeper`."
        )
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        java,
        "-Xmx256m",
        "-Dzookeeper.admin.enableServer=false",
        "-Dzookeeper.4lw.commands.whitelist=srvr",
        "-cp",
        str(ZOOKEEPER_JAR),
        "org.apache.zookeeper.server.ZooKeeperServerMain",
        str(port),
        str(data_dir),
    ]
    return _spawn("ZooKeeper", argv, port, data_dir / "zookeeper.log", timeout)


# --- Apache Kafka, from its jars on Maven Central (kafka/pom.xml) ------------------------------------------------

KAFKA = "4.4.0"  # the default broker: KRaft, combined mode
KAFKA_ZK = "3.9.2"  # ZooKeeper mode: the last release storm-kafka and storm-kafka-client 1.x talk to (KIP-896)
FETCH_KAFKA = 'mvn -q -B -f kafka/pom.xml package -Dkafka.home="${XDG_DATA_HOME:-$HOME/.local/share}/offctl/kafka"'


def kafka_home() -> Path:
    """Where kafka/pom.xml copies each release's jars, as <version>/lib: OFFCTL_KAFKA_HOME, else
    $XDG_DATA_HOME/offctl/kafka (~/.local/share/offctl/kafka)."""
    if os.environ.get("OFFCTL_KAFKA_HOME"):
        return Path(os.environ["OFFCTL_KAFKA_HOME"])
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "offctl" / "kafka"


def kafka_classpath(version: str) -> str:
    """The classpath of one Kafka release (its lib/*), or MissingPrerequisite saying how to fetch it."""
    lib = kafka_home() / version / "lib"
    if not any(lib.glob(f"kafka_2.13-{version}.jar")):
        fetch = FETCH_KAFKA if shutil.which("mvn") else f"apt-get install maven, then {FETCH_KAFKA}"
        raise MissingPrerequisite(
            f"Apache Kafka {version} is not in {lib}: fetch the releases offctl runs from "
            f"Maven Central, in offctl's clone: {fetch}"
        )
    return str(lib / "*")


@dataclass(frozen=True)
class Broker(LocalServer):
    """A broker of ours: its release, and for ZooKeeper mode the connect string (with its chroot) it registers in."""

    version: str = KAFKA
    zookeeper: str | None = None
    controller_port: int | None = None
    sasl_port: int | None = None  # the users' SASL_PLAINTEXT listener, where start_broker was given sasl_users

    @property
    def sasl_address(self) -> str | None:
        return None if self.sasl_port is None else f"{self.host}:{self.sasl_port}"


_LOG4J2 = """rootLogger.level = WARN
rootLogger.appenderRef.file.ref = file
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
"""
_LOG4J1 = """log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={log}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
"""

# One broker of a cluster of one: every internal topic at replication factor 1; a group's first join is not held
# back (a test's consumer would wait 3 s); four partitions of __consumer_offsets instead of 50 (faster to create).
_SINGLE = {
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "4",
    "group.initial.rebalance.delay.ms": "0",
}


def _java() -> str:
    """The java on the PATH; MissingPrerequisite when there is none."""
    java = shutil.which("java")
    if java is None:
        raise MissingPrerequisite(
            "java not found: Kafka needs it. Install it with `apt-get install openjdk-17-jre-headless`."
        )
    return java


def _kraft(port: int, controller: int) -> dict[str, str]:
    """The server.properties of KRaft's combined mode: broker and controller in one process, the controller on its
    own listener."""
    return {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
    }


def _sasl_listener(listeners: str, port: int, sasl_port: int, sasl_users: dict[str, str]) -> dict[str, str]:
    """The server.properties of start_broker's `sasl_users`, after `listeners`."""
    # A second listener, SASL_PLAINTEXT with PLAIN, for the users; the PLAINTEXT one stays the operator's (its
    # principal, ANONYMOUS, is the super user), as is the controller's
    users = " ".join(f'user_{u}="{p}"' for u, p in sasl_users.items())
    return {
        "listeners": f"{listeners},SASL://127.0.0.1:{sasl_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},SASL://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.name.sasl.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl.plain.sasl.jaas.config": (
            f"org.apache.kafka.common.security.plain.PlainLoginModule required {users};"
        ),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }


def _format_storage(jvm: list[str], config: Path, data: Path, version: str, timeout: float) -> None:
    """Format a KRaft broker's storage in `data`, as kafka-storage format --standalone does."""
    # A cluster id as kafka-storage random-uuid makes one: a UUID in URL-safe base64 (one that starts with "-"
    # is never made: Uuid.randomUuid skips them, as a command line would take it for an option)
    cluster = "-"
    while cluster.startswith("-"):
        cluster = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    formatted = subprocess.run(
        [*jvm, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster}", "-c", str(config), "--standalone"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if formatted.returncode != 0:
        raise ServerFailed(
            f"Kafka {version}'s storage could not be formatted in {data}: "
            f"{(formatted.stderr or formatted.stdout).strip()[-1000:]}"
        )


def start_broker(
    log_dir: Path,
    port: int | None = None,
    timeout: float = 90.0,
    *,
    version: str = KAFKA,
    zookeeper: str | None = None,
    settings: dict[str, str] | None = None,
    sasl_users: dict[str, str] | None = None,
    coordinator_ready: bool = True,
) -> Broker:
    """Apache Kafka `version` on a free loopback port, with its data and log under `log_dir`: KRaft in combined
    mode (broker and controller in one process), or, given `zookeeper` (HOST:PORT/CHROOT), ZooKeeper mode, which
    registers the broker under the chroot (/brokers/ids, /brokers/topics) as storm-kafka reads it. `settings`:
    more server.properties. `sasl_users` (KRaft): user -> password, who log in with PLAIN on a second listener,
    SASL_PLAINTEXT (`Broker.sasl_address`), under ACLs (StandardAuthorizer: nothing allowed without one); the
    PLAINTEXT listener stays the operator's, a super user. Returns once the broker answers requests, its group
    coordinator ready (with `coordinator_ready` False, once it listens: a new broker's first seconds, which the
    tests of a loading coordinator need)."""
    java = _java()
    classpath = kafka_classpath(version)
    port = port or free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    data = log_dir / "data"
    props = {
        "listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "log.dirs": str(data),
        **_SINGLE,
    }
    controller = None
    if zookeeper is None:
        controller = free_port()
        props.update(_kraft(port, controller))
    else:
        props.update({"broker.id": "0", "zookeeper.connect": zookeeper})
    sasl_port = None
    if sasl_users:
        sasl_port = free_port()
        props.update(_sasl_listener(props["listeners"], port, sasl_port, sasl_users))
    props.update(settings or {})
    config = log_dir / "server.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    log = log_dir / "broker.log"
    logging = log_dir / "log4j.properties"
    logging.write_text((_LOG4J2 if zookeeper is None else _LOG4J1).format(log=log))
    jvm = [
        java,
        "-Xms128m",
        "-Xmx768m",
        "-XX:+UseG1GC",
        "-Djava.awt.headless=true",
        f"-Dlog4j2.configurationFile={logging}",
        f"-Dlog4j.configuration=file:{logging}",
        "-cp",
        classpath,
    ]
    if zookeeper is None and not (data / "meta.properties").exists():
        _format_storage(jvm, config, data, version, timeout)
    name = f"Apache Kafka {version}" + (" (ZooKeeper mode)" if zookeeper else "")
    server = _spawn_env(
        name, [*jvm, "kafka.Kafka", str(config)], port, log_dir / "stdout.log", timeout, dict(os.environ)
    )
    broker = Broker(name, server.pid, server.host, server.port, log, version, zookeeper, controller, sasl_port)
    try:
        if coordinator_ready:
            _coordinator_ready(broker, timeout)
    except BaseException:
        stop(broker.pid)
        raise
    return broker


def _coordinator_ready(broker: Broker, timeout: float) -> None:
    """Until the broker's group coordinator answers. A new broker creates __consumer_offsets on the first
    FindCoordinator and loads it after; meanwhile an OffsetFetch answered NOT_COORDINATOR or
    COORDINATOR_LOAD_IN_PROGRESS crashes librdkafka's ListConsumerGroupOffsets (a NULL group handle:
    confluentinc/librdkafka#5040, open at librdkafka 2.16), so nothing reads a group's commits before this.
    DescribeGroups takes those answers as errors, and answers a group that does not exist once the coordinator
    is ready. Each try runs in a child process: after a DescribeGroups that timed out on a new Kafka 3.9 broker,
    librdkafka 2.16.1 sometimes aborts its process (rd_kafka_enq_once_del_source_return: "eonce->refcnt > 0"), which
    must end the try, not the caller."""
    deadline = time.monotonic() + timeout
    why = ""
    while True:
        try:
            tried = subprocess.run(
                [sys.executable, "-c", _COORDINATOR_PROBE, broker.address], capture_output=True, text=True, timeout=30
            )
            if tried.returncode == 0:
                return
            why = (tried.stderr.strip().splitlines() or [f"exit {tried.returncode}"])[-1]
        except subprocess.TimeoutExpired:
            why = "no answer within 30s"
        if time.monotonic() > deadline:
            raise ServerFailed(
                f"{broker.name}'s group coordinator did not answer within {timeout:g}s ({why}); log {broker.log}"
            )
        time.sleep(0.2)


_COORDINATOR_PROBE = """import sys
from confluent_kafka.admin import AdminClient
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
(future,) = admin.describe_consumer_groups(["offctl-coordinator-ready"], request_timeout=5).values()
future.result(10)
"""


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after timeout; reap the child when it is ours."""
    if not is_running(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            if not is_running(pid):
                return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


# --- a Spark standalone cluster (tests and benchmarks): pyspark's own Master and Worker ---------------------


@dataclass(frozen=True)
class SparkCluster:
    master: LocalServer
    workers: tuple[LocalServer, ...]
    web_port: int

    @property
    def url(self) -> str:
        return f"spark://{self.master.address}"

    def stop(self) -> None:
        for server in (*self.workers, self.master):
            stop_group(server.pid)


def start_spark_standalone(
    work_dir: Path,
    *,
    workers: int = 1,
    cores: int = 1,
    memory: str = "1g",
    env: dict[str, str] | None = None,
    timeout: float = 90.0,
) -> SparkCluster:
    """A Spark standalone master and `workers` workers on free loopback ports, started with pyspark's
    spark-class (org.apache.spark.deploy.master.Master, ...worker.Worker); `env` is the workers' environment
    (their executors inherit it). Stop it with .stop() (by pid)."""
    import json
    import urllib.request

    try:
        import pyspark
    except ImportError:
        raise MissingPrerequisite("pyspark is not installed: pip install 'offctl[spark]'") from None
    if shutil.which("java") is None:
        raise MissingPrerequisite("java not found: Spark needs it (apt-get install openjdk-17-jre-headless)")
    home = Path(pyspark.__file__).parent
    spark_class = str(home / "bin" / "spark-class")
    base = {
        **os.environ,
        **(env or {}),
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work_dir / "logs"),
    }
    port, web = free_port(), free_port()
    master = _spawn_env(
        "Spark master",
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(web),
        ],
        port,
        work_dir / "master.log",
        timeout,
        base,
    )
    started = []
    try:
        for n in range(workers):
            wport = free_port()
            argv = [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--port",
                str(wport),
                "--webui-port",
                str(free_port()),
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--work-dir",
                str(work_dir / f"worker-{n}"),
                f"spark://127.0.0.1:{port}",
            ]
            started.append(_spawn_env(f"Spark worker {n}", argv, wport, work_dir / f"worker-{n}.log", timeout, base))
        deadline = time.monotonic() + timeout
        while True:  # the master's status page says when every worker has registered
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{web}/json/", timeout=2) as page:
                    if json.load(page).get("aliveworkers", 0) >= workers:
                        break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise ServerFailed(
                    f"Spark workers did not register with the master within {timeout:g}s; logs in {work_dir}"
                )
            time.sleep(0.2)
    except BaseException:
        for server in (*started, master):
            stop_group(server.pid)
        raise
    return SparkCluster(master, tuple(started), web)


def _spawn_env(name: str, argv: list[str], port: int, log: Path, timeout: float, env: dict[str, str]) -> LocalServer:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        # A session of its own: a Ctrl-C in the terminal must not kill servers the sandbox keeps.
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, env=env
        )
    _wait_until_listening(proc, name, port, log, timeout)
    return LocalServer(name, proc.pid, "127.0.0.1", port, log)


def stop_group(pid: int, timeout: float = 10.0) -> None:
    """Stop a server and what it started (a Spark worker's executors): the session it leads, by pid."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return
    stop(pid, timeout)
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def black_hole() -> tuple[socket.socket, int]:
    """A listener on loopback that accepts connections and never answers (a hung server, a dropped firewall
    rule's far end), for the fault tests and benchmarks: its socket (close it to end the hole) and port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    held = []

    def accept() -> None:
        try:
            while True:
                held.append(sock.accept())
        except OSError:  # the listener was closed: the hole is gone
            pass

    threading.Thread(target=accept, name="black-hole", daemon=True).start()
    return sock, sock.getsockname()[1]
