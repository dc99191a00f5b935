"""The README's set-up command, as written (read from README.md, not copied), in a fresh copy of the
project, on the test's own sandbox: once as root, once as a user with sudo.

apt-get is the one thing not run for real (a test must not install system packages): a stand-in on PATH
records what it was asked, and so does sudo. Everything else runs: the virtual environment, pip, the
sandbox's servers, inspect and the Spark audit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, fresh_copy, readme_block

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

SETUP_PACKAGES = ["python3-venv", "openjdk-17-jre-headless", "zookeeper"]


def setup_command() -> str:
    return readme_block("## Set up")


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
    subprocess.run([str(where / ".venv" / "bin" / "offctl"), "sandbox", "down"], capture_output=True, timeout=120,
                   env={**os.environ, "XDG_STATE_HOME": str(state)})


@pytest.mark.parametrize("root", [True, False], ids=["as root without sudo", "as a user with sudo"])
def test_the_readme_setup_command_runs_as_written(project, tmp_path, root):
    where, state = project
    bin_dir = tmp_path / "bin"
    log = shims(bin_dir, root=root)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "XDG_STATE_HOME": str(state)}
    for var in [v for v in env if v.startswith("OFFCTL_") or v in ("VIRTUAL_ENV", "PYSPARK_PYTHON")]:
        del env[var]
    proc = subprocess.run(["bash", "-c", setup_command()], cwd=where, env=env, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    calls = log.read_text().splitlines()
    apt = ["apt-get update", "apt-get install -y --no-install-recommends " + " ".join(SETUP_PACKAGES)]
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
    install = next(c for c in readme if "apt-get install" in c).split()
    packages = {w for w in install[install.index("--no-install-recommends") + 1:]}
    docker_install = next(c for c in runs if c.startswith("apt-get install")).split()
    # the slim image has no python3, which the README takes from Debian 12 itself
    assert set(docker_install[docker_install.index("--no-install-recommends") + 1:]) == packages | {"python3"}
    assert "apt-get update" in runs and not any("sudo" in c for c in runs)
    for step in ("python3 -m venv .venv", ".venv/bin/pip install -e '.[spark,sandbox]'"):
        assert step in readme
        assert any(c.replace("--no-cache-dir ", "") == step for c in runs), step
