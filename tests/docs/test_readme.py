"""The README's set-up command, as written (read from README.md, not copied), in a fresh copy of the
project, on the test's own sandbox: once as root, once as a user with sudo.

apt-get is the one thing not run for real (a test must not install system packages): a stand-in on PATH
records what it was asked, and so does sudo. Everything else runs: the virtual environment, pip, the
sandbox's servers, inspect and the Spark audit.

The Debian packages it installs are the ones the suite's code runs (SUITE_PROGRAMS), .ci/run runs the
README's two commands as written, and the Dockerfile installs the packages offctl itself needs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, fresh_copy, readme_block
from tests.docs.test_runbooks import RUNBOOKS, steps

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

# What the suite's code runs from Debian, and the package that installs it. The README's first command
# installs exactly these packages and python3-venv (its own `python3 -m venv`).
SUITE_PROGRAMS = {
    "java": "openjdk-17-jre-headless",  # ZooKeeper, Kafka and Spark (offctl/adapters/servers.py, pyspark)
    "mvn": "maven",  # fetches Apache Kafka's jars from Maven Central (kafka/pom.xml; offctl/adapters/servers.py)
    "/usr/share/java/zookeeper.jar": "zookeeper",  # the tests' and the sandbox's ZooKeeper (offctl/adapters/servers.py)
    "promtool": "prometheus",  # docs/monitoring's rules and config (tests/docs/test_monitoring.py)
    "prometheus": "prometheus",  # a real Prometheus scrapes offctl serve (tests/docs/test_monitoring.py)
    "tmux": "tmux",  # offctl watch in a terminal (tests/e2e/test_serve.py)
    "/usr/bin/python3.11": "python3.11",  # the executors' bare Python (tests/e2e/test_spark_cluster.py)
    "jq": "jq",  # docs/runbooks/out-of-range.md's pipeline (tests/docs/test_runbooks.py)
    # storm-kafka-monitor's argument grammar against commons-cli's own parser (tests/unit/test_lagutil_args.py): the JDK
    # runs the Java source, and Debian's commons-cli comes with ZooKeeper (libzookeeper-java depends on it)
    "javac": "openjdk-17-jdk-headless",
    "/usr/share/java/commons-cli.jar": "zookeeper",
    # what Storm UI shows for a storm-kafka-monitor run (tests/support/storm_ui.py): TopologySpoutLag's org.json.simple
    # parser (Storm 1.x-2.5 pin json-simple 1.1; Debian's cliftonlabs 2.3.0 keeps that parser unchanged)
    "/usr/share/java/json-simple.jar": "libjson-simple-java",
}
# Every Debian system has these (essential packages); offctl is the project, `storm kill` is rehearsed.
BASE_PROGRAMS = {"bash", "sh", "id", "offctl", "storm"}
# What offctl itself needs, which the Dockerfile installs; the rest is for the suite.
RUNTIME_PACKAGES = {"python3-venv", "openjdk-17-jre-headless", "zookeeper"}


def setup_command() -> str:
    return readme_block("## Set up")


def readme_packages() -> list[str]:
    """The Debian packages the README's set-up command installs, in its order."""
    install = next(c for c in _commands(setup_command()) if "apt-get install" in c).split()
    return install[install.index("--no-install-recommends") + 1 :]


def programs_the_suite_runs() -> set[str]:
    """Programs the suite's code looks up (which, tool) or names by path, and those the runbooks' lines call."""
    code = [p for d in ("tests", "offctl", "commands") for p in (REPO / d).rglob("*.py")]
    pattern = r'\b(?:which|tool)\(\s*"([^"]+)"|"(/usr/(?:bin|share/java)/[^"]+)"'
    found = {a or b for p in code for a, b in re.findall(pattern, p.read_text())}
    for runbook in RUNBOOKS:
        for step in steps(runbook.read_text()):
            lexer = shlex.shlex(step.command, posix=True, punctuation_chars=True)
            words = list(lexer)
            found |= {w for prev, w in zip([";", *words], words) if prev in ("|", "||", "&&", ";")}
    return found


def test_the_readme_installs_every_program_the_suite_runs():
    assert programs_the_suite_runs() - BASE_PROGRAMS == set(SUITE_PROGRAMS)
    assert sorted(readme_packages()) == sorted({"python3-venv", *SUITE_PROGRAMS.values()})


def shims(where: Path, *, root: bool) -> Path:
    """apt-get and sudo that record their arguments; as a non-root user, id -u says 1000."""
    where.mkdir()
    log = where / "calls"
    (where / "apt-get").write_text(f'#!/bin/sh\necho "apt-get $*" >> {log}\n')
    (where / "sudo").write_text(f'#!/bin/sh\necho "sudo $*" >> {log}\nexec "$@"\n')
    if not root:
        real_id = shutil.which("id")
        (where / "id").write_text(f'#!/bin/sh\nif [ "$1" = "-u" ]; then echo 1000; else exec {real_id} "$@"; fi\n')
    for f in where.iterdir():
        f.chmod(0o755)
    return log


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    where = fresh_copy(tmp_path_factory.mktemp("fresh-clone") / "offctl")
    state = tmp_path_factory.mktemp("xdg-state")
    yield where, state
    subprocess.run(
        [str(where / ".venv" / "bin" / "offctl"), "sandbox", "down"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
    )


@pytest.mark.parametrize("root", [True, False], ids=["as root without sudo", "as a user with sudo"])
def test_the_readme_setup_command_runs_as_written(project, tmp_path, root):
    where, state = project
    bin_dir = tmp_path / "bin"
    log = shims(bin_dir, root=root)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "XDG_STATE_HOME": str(state)}
    for var in [v for v in env if v.startswith("OFFCTL_") or v in ("VIRTUAL_ENV", "PYSPARK_PYTHON")]:
        del env[var]
    proc = subprocess.run(
        ["bash", "-c", setup_command()], cwd=where, env=env, capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    calls = log.read_text().splitlines()
    apt = ["apt-get update", "apt-get install -y --no-install-recommends " + " ".join(readme_packages())]
    # as root apt-get runs directly and sudo is never called; as a user, each apt-get goes through sudo
    assert calls == (apt if root else [line for c in apt for line in (f"sudo {c}", c)])
    assert "ID_COLLISION" in proc.stdout  # inspect's report of the seeded fleet
    assert "Worst consumers" in proc.stderr  # the audit's summary


def _commands(shell: str) -> list[str]:
    """The simple commands of a shell line, split at && and ; (enough for these lines: no quoting of them)."""
    return [c.strip() for c in re.split(r"&&|;", shell.replace("\\\n", " ")) if c.strip()]


def test_the_dockerfile_follows_the_readme_setup():
    """The image cannot be built here (no Docker engine): its RUN steps must be the README's set-up steps."""
    docker = (REPO / "Dockerfile").read_text()
    runs = [c for step in re.findall(r"^RUN (.*?)(?<!\\)$", docker, re.M | re.S) for c in _commands(step)]
    readme = _commands(setup_command())
    docker_install = next(c for c in runs if c.startswith("apt-get install")).split()
    # offctl's own packages, not the suite's; the slim image has no python3, which the README takes from Debian 12
    assert RUNTIME_PACKAGES <= set(readme_packages())
    assert set(docker_install[docker_install.index("--no-install-recommends") + 1 :]) == RUNTIME_PACKAGES | {"python3"}
    assert "apt-get update" in runs and not any("sudo" in c for c in runs)
    for step in ("python3 -m venv .venv", ".venv/bin/pip install -e '.[spark]'"):
        assert step in readme
        assert any(c.replace("--no-cache-dir ", "") == step for c in runs), step


def test_ci_runs_the_readme_commands_as_written(tmp_path):
    """.ci/run in a copy, its `bash -c` and offctl recorded rather than run: the README's two commands, read
    from README.md, with the demo's sandbox stopped before the suite."""
    section = (REPO / "README.md").read_text().split("\n## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = [b.rstrip("\n") for b in re.findall(r"```sh\n(.*?)```", section, re.S)]
    assert len(blocks) == 2 and blocks[0] == setup_command().rstrip("\n")
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    log, bash = tmp_path / "calls", shutil.which("bash")
    stand_ins = {
        tmp_path / "bin" / "bash": f'if [ "$1" = -c ]; then printf "bash -c %s\\0" "$2" >> {log}; '
        f'else exec {bash} "$@"; fi',
        tmp_path / ".venv" / "bin" / "offctl": f'printf "offctl %s\\0" "$*" >> {log}',
    }
    for path, body in stand_ins.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!{bash}\n{body}\n")
        path.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp_path)}
    proc = subprocess.run([bash, str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    # the last `sandbox down` is the exit trap's, which also stops the sandbox when a command fails
    assert log.read_text().split("\0")[:-1] == [
        f"bash -c {blocks[0]}",
        "offctl sandbox down",
        f"bash -c {blocks[1]}",
        "offctl sandbox down",
    ]
