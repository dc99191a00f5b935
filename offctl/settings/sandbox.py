"""The sandbox as settings see it: the state file `offctl sandbox up` leaves (servers, roots, pids), whether it
runs, whether servers are its own, and the rehearsal shell's variables. Starting, seeding and stopping the servers
is the face's (offctl/faces/sandbox.py).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from offctl.adapters import servers
from offctl.adapters.backup import state_dir

ROOT = "/sandbox/spouts"  # the seeded zkRoot
SANDBOX_STORM_ROOT = "/sandbox/storm"
TRIDENT_ROOT = "/sandbox/transactional"  # transactional.zookeeper.root of the seeded Trident spouts
JSTORM_ROOT = "/sandbox/jstorm"  # storm.zookeeper.root of the seeded JStorm Kafka spouts


@dataclass(frozen=True)
class Sandbox:
    directory: str
    zk_pid: int
    zk: str
    broker_pid: int
    broker: str
    zk_root: str = ROOT
    storm_root: str = SANDBOX_STORM_ROOT
    trident_root: str = TRIDENT_ROOT
    jstorm_root: str = JSTORM_ROOT  # a state file written before JStorm's spouts were seeded has none: this one
    seeded: bool = False
    stopped: dict = None  # topology name -> the storm ids `topology stop` removed, for `topology start`

    @property
    def running(self) -> dict[str, bool]:
        return {"zookeeper": servers.is_running(self.zk_pid), "broker": servers.is_running(self.broker_pid)}


def sandbox_dir() -> Path:
    return state_dir() / "sandbox"


def state_file(directory: Path) -> Path:
    return directory / "sandbox.json"


def load(directory: Path | None = None) -> Sandbox | None:
    """The remembered sandbox, or None. A damaged state file counts as none."""
    path = state_file(directory or sandbox_dir())
    try:
        return Sandbox(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def save(sandbox: Sandbox) -> None:
    path = state_file(Path(sandbox.directory))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(sandbox), indent=1) + "\n")
    tmp.replace(path)


def active(directory: Path | None = None) -> Sandbox | None:
    """The sandbox, when both of its servers are running."""
    sandbox = load(directory)
    return sandbox if sandbox is not None and all(sandbox.running.values()) else None


def _hosts(connect: str | None) -> frozenset[str]:
    """The host:port pairs of a connect string (its chroot dropped), as offctl's clients are given them."""
    return frozenset(h.strip() for h in (connect or "").split("/", 1)[0].split(",") if h.strip())


def foreign_servers(sandbox: Sandbox | None, zk: str | None, broker: str | None) -> list[str]:
    """The servers among these that are not the sandbox's (all of them when no sandbox runs), as
    'ZooKeeper h:p' / 'Kafka h:p'; empty when every one given is the sandbox's."""
    out = []
    if zk and (sandbox is None or not _hosts(zk) <= _hosts(sandbox.zk)):
        out.append(f"ZooKeeper {zk}")
    if broker and (sandbox is None or not _hosts(broker) <= _hosts(sandbox.broker)):
        out.append(f"Kafka {broker}")
    return out


def is_sandbox(zk: str | None, broker: str | None) -> bool:
    """Whether these servers (at least one given) are all the running sandbox's."""
    sandbox = active()
    return sandbox is not None and bool(zk or broker) and not foreign_servers(sandbox, zk, broker)


# What `offctl sandbox env` sets: every OFFCTL_ variable that names a server or a root, to the sandbox's; and what
# it unsets: credentials and client settings of other clusters (the sandbox needs none), and a Spark master
# (the rehearsal's audit runs locally). OFFCTL_TIMEOUT is kept: it names no cluster.
REHEARSAL_MARKER = "OFFCTL_SANDBOX"
# A named config file is unset too, and the context is the built-in `sandbox` (offctl/settings/configfile.py): no
# context of another cluster lends its credentials to the rehearsal.
UNSET_IN_REHEARSAL = (
    "OFFCTL_ZK_AUTH",
    "OFFCTL_KAFKA_CONFIG",
    "OFFCTL_KAFKA_CONFIG_FILE",
    "OFFCTL_SPARK_MASTER",
    "OFFCTL_CONFIG",
)


def rehearsal_env(sandbox: Sandbox) -> dict[str, str]:
    """The OFFCTL_ variables of a rehearsal shell: the sandbox's servers and roots, and the marker."""
    return {
        "OFFCTL_ZK": sandbox.zk,
        "OFFCTL_ZK_ROOT": sandbox.zk_root,
        "OFFCTL_BOOTSTRAP_SERVERS": sandbox.broker,
        "OFFCTL_STORM_ROOT": sandbox.storm_root,
        "OFFCTL_TRIDENT_ROOT": sandbox.trident_root,
        "OFFCTL_JSTORM_ROOT": sandbox.jstorm_root,
        "OFFCTL_CONTEXT": "sandbox",
        REHEARSAL_MARKER: "1",
    }


def env_script(sandbox: Sandbox) -> str:
    """POSIX shell lines for `eval "$(offctl sandbox env)"`."""
    import shlex

    lines = [
        f"# offctl sandbox env: this shell now rehearses on the sandbox (ZooKeeper {sandbox.zk}, Kafka "
        f"{sandbox.broker}); offctl refuses any other server while {REHEARSAL_MARKER}=1"
    ]
    lines += [f"export {name}={shlex.quote(value)}" for name, value in rehearsal_env(sandbox).items()]
    lines.append(f"unset {' '.join(UNSET_IN_REHEARSAL)}")
    return "\n".join(lines) + "\n"


def no_sandbox_script() -> str:
    """What `offctl sandbox env` prints when no sandbox runs: a shell that evaluates it anyway is a rehearsal
    shell with no server to use (every offctl command refuses, exit 2), never one left pointing at production;
    its last line fails, so `eval "$(offctl sandbox env)" && ...` stops there."""
    servers = [name for name in rehearsal_env(Sandbox("", 0, "", 0, "")) if name != REHEARSAL_MARKER]
    return (
        "\n".join(
            [
                f"# offctl sandbox env: no sandbox is running; with {REHEARSAL_MARKER}=1 offctl refuses every server "
                "until one runs (offctl sandbox up, then eval this again)",
                f"export {REHEARSAL_MARKER}=1",
                f"unset {' '.join(servers + list(UNSET_IN_REHEARSAL))}",
                "false",
            ]
        )
        + "\n"
    )
