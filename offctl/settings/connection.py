"""Connection settings shared by every command. Secrets never appear in repr or messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from offctl.errors import UsageError
from offctl.inputs import MAX_CONFIG_BYTES, read_text, secret

STORM_ROOT = "/storm"  # --storm-root's default: storm.zookeeper.root's
TIMEOUT_S = 10.0  # --timeout's default
DEFAULT_LISTEN = "0.0.0.0:9717"  # offctl serve's address (the exporter's port, as Prometheus' registry of ports has it)


@dataclass(frozen=True)
class Connection:
    zk: str | None = None
    zk_roots: tuple[str, ...] = ()
    bootstrap_servers: str | None = None
    storm_root: str = STORM_ROOT
    timeout: float = TIMEOUT_S
    zk_auth: str | None = field(default=None, repr=False)
    kafka_config: Mapping[str, str] = field(default_factory=dict, repr=False)
    default_roots: bool = False  # zk_roots came from the environment or the sandbox, not the command line
    trident_roots: tuple[str, ...] = ()  # Storm's transactional roots to read Trident Kafka spouts under
    default_trident_roots: bool = False  # trident_roots came from the environment or the sandbox
    jstorm_roots: tuple[str, ...] = ()  # JStorm's roots (storm.zookeeper.root) to read its Kafka spouts under
    default_jstorm_roots: bool = False  # jstorm_roots came from the environment or the sandbox


def parse_kafka_config(pairs: Iterable[str], file: Path | None) -> dict[str, str]:
    """librdkafka settings from a Java-style properties file, then KEY=VALUE pairs (which win)."""
    config: dict[str, str] = {}
    lines: list[tuple[str, str]] = []
    if file is not None:
        text = read_text(file, "--kafka-config-file", MAX_CONFIG_BYTES)
        lines += [
            (f"{file}:{n}", line.strip())
            for n, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.strip().startswith(("#", "!"))
        ]
    lines += [("--kafka-config", pair) for pair in pairs]
    for where, line in lines:
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            # Say where, never what: the line may hold a password.
            raise UsageError(f"{where}: expected KEY=VALUE")
        # Any setting may hold a password: no message may repeat one (inputs.redact).
        config[key.strip()] = secret(value.strip())
    return config


def normalize_root(root: str, flag: str = "--zk-root") -> str:
    """A zkRoot as storm-kafka builds paths from it (or another root, as `flag` names it): absolute, no trailing
    slash ('/' stays '/')."""
    if not root.startswith("/"):
        raise UsageError(f"{flag} {root!r} must be an absolute ZooKeeper path, like /kafka-spouts")
    return root.rstrip("/") or "/"
