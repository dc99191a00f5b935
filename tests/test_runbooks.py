"""Every runbook, walked as written against the sandbox, command by command: a step that no longer works
fails CI.

Each runbook gets a freshly seeded sandbox. The walker runs every line of its ```sh blocks in order, in a
shell (pipes and jq as written), answering "y" to offctl's one question. What it expects:
- `storm kill NAME ...` is rehearsed with `offctl sandbox topology stop NAME`, as docs/runbooks/README.md
  says.
- Confirm: exit 0 or 1 (findings), and every finding code named in the line's comment is in the output.
- Fix: exit 0 (inspect and audit: 0 or 1).
- Verify: exit 0, and a code the comment names after "no" is not in the output.
The sandbox's broker drops commit metadata (offctl.sandbox.LIMITS): there, and only with the message saying
so, a Kafka write carrying Storm metadata exits 5, and FOREIGN_COMMIT stays. Apache Kafka keeps it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from offctl.core.findings import CATALOGUE as CODES

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

RUNBOOKS = sorted(p for p in (Path(__file__).parent.parent / "docs" / "runbooks").glob("*.md")
                  if p.name != "README.md")
QUIET_PERIOD_S = 10.5  # reset's default guard: the seed's records must be older than that
METADATA_DROPPED = "the spout will ignore this commit"  # verify_kafka's words when the broker drops metadata


def steps(markdown: str) -> list[tuple[str, str, str]]:
    """(section, command, comment) for every line of the ```sh blocks, in order."""
    out, section, block, pending = [], "", False, ""
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            section = line[3:].split()[0].lower()
        elif line.startswith("```"):
            block = line == "```sh"
        elif block and line and not line.startswith("#"):
            if line.endswith("\\"):
                pending += line[:-1].rstrip() + " "
                continue
            command, _, comment = (pending + line).partition(" # ")
            out.append((section, command.strip(), comment.strip()))
            pending = ""
    return out


def rehearsed(command: str) -> str:
    m = re.fullmatch(r"storm kill (\S+)(?: .*)?", command)
    return f"offctl sandbox topology stop {m.group(1)}" if m else command


@pytest.fixture(scope="module")
def live_sandbox(tmp_path_factory):
    state = tmp_path_factory.mktemp("runbook-sandbox")
    env = {**os.environ, "XDG_STATE_HOME": str(state), "NO_COLOR": "1", "COLUMNS": "200",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for var in [v for v in env if v.startswith("OFFCTL_") and v not in ("OFFCTL_ALLOW_SKIP",)]:
        del env[var]  # the runbooks run against the sandbox, not whatever this shell points at
    up = subprocess.run([sys.executable, "-m", "offctl", "sandbox", "up"], env=env, capture_output=True, text=True,
                        timeout=180)
    assert up.returncode == 0, up.stderr
    try:
        yield env
    finally:
        subprocess.run([sys.executable, "-m", "offctl", "sandbox", "down"], env=env, capture_output=True, timeout=120)


def test_the_walker_reads_steps_and_rehearses_storm_kill():
    text = "## Fix\n```sh\nstorm kill orders -w 30\noffctl reset --spout a \\\n  --to earliest   # HIGH_LAG\n```\n"
    assert steps(text) == [("fix", "storm kill orders -w 30", ""), ("fix", "offctl reset --spout a --to earliest", "HIGH_LAG")]
    assert rehearsed("storm kill orders -w 30") == "offctl sandbox topology stop orders"


@pytest.mark.parametrize("runbook", RUNBOOKS, ids=[p.stem for p in RUNBOOKS])
def test_runbook_runs_as_written_against_the_sandbox(runbook, live_sandbox, tmp_path):
    seeded = subprocess.run([sys.executable, "-m", "offctl", "sandbox", "seed"], env=live_sandbox,
                            capture_output=True, text=True, timeout=180)
    assert seeded.returncode == 0, seeded.stderr
    time.sleep(QUIET_PERIOD_S)
    walked = steps(runbook.read_text())
    assert any(section == "fix" for section, _, _ in walked), f"{runbook.name} has no fix step to walk"
    for section, command, comment in walked:
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", rehearsed(command)], env=live_sandbox, input="y\n",
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)  # files it saves land here
        seen = proc.stdout + proc.stderr
        where = f"{runbook.name} [{section}] `{command}` exited {proc.returncode}:\n{seen[-3000:]}"
        reading = command.startswith(("offctl inspect", "offctl audit"))
        named = [c for c in re.findall(r"\b[A-Z][A-Z_]+[A-Z]\b", comment) if c in CODES]
        unwanted = {c for c in re.findall(r"\bno ([A-Z][A-Z_]+[A-Z])\b", comment) if c in CODES}
        if METADATA_DROPPED in proc.stderr and proc.returncode == 5:
            continue  # the sandbox broker's limit, said by offctl itself; Apache Kafka keeps the metadata
        if section == "verify":
            assert proc.returncode == 0, where
            shown = unwanted - {"FOREIGN_COMMIT"}  # the sandbox broker drops metadata: it stays there
            assert not [c for c in shown if c in proc.stdout], where
        elif section == "confirm":
            assert proc.returncode in (0, 1), where
            assert all(c in seen for c in named if c not in unwanted), where
        else:
            assert proc.returncode in ((0, 1) if reading else (0,)), where
