"""The runbook walker's parts: read a runbook's steps, run one as an on-call engineer would (in bash, a
pseudo-terminal on its standard input so offctl asks its question and gets its "y"), and take the sandbox's
state to compare an undo with.

A step's comment may state what it exits with, `# exit 7: ...`, or name finding codes (`# HIGH_LAG`, `# no
OFFSET_ABOVE_LOG_END`); tests/docs/test_runbooks.py holds every step to what its runbook says.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

PROMPT = "[y/N]:"  # typer.confirm's question ends so, on stderr


@dataclass(frozen=True)
class Step:
    section: str  # the runbook's "## " heading, first word, lower case: confirm, fix, verify, undo
    command: str
    comment: str

    @property
    def exits(self) -> frozenset[int] | None:
        """The exit codes the comment states (`# exit 7`, `# exit 0 or 1`), or None when it states none."""
        m = re.match(r"exit (\d+(?:(?:,| or) \d+)*)\b", self.comment)
        return frozenset(int(n) for n in re.findall(r"\d+", m.group(1))) if m else None

    @property
    def writes(self) -> bool:
        """An offctl command that writes (its dry run does not)."""
        words = shlex.split(self.command.split("|")[0])
        return (
            words[:1] == ["offctl"]
            and "--execute" in words
            and (
                words[1:2] in (["reset"], ["restore"], ["migrate"], ["delete"])
                or words[1:2] == ["audit"]
                and "--repair" in words
            )
        )

    @property
    def asks(self) -> bool:
        """A write without --yes: offctl asks once before it writes."""
        return self.writes and not {"--yes", "-y"} & set(shlex.split(self.command.split("|")[0]))


def steps(markdown: str) -> list[Step]:
    """Every line of the ```sh blocks, in order, with its section; a line ending in a backslash goes on."""
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
            out.append(Step(section, command.strip(), comment.strip()))
            pending = ""
    return out


def rehearsed(command: str) -> str:
    """`storm kill NAME ...` is rehearsed as the sandbox's stand-in, as docs/runbooks/README.md says."""
    m = re.fullmatch(r"storm kill (\S+)(?: .*)?", command)
    return f"offctl sandbox topology stop {m.group(1)}" if m else command


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    prompts: int  # how many times offctl asked (and was answered)

    @property
    def seen(self) -> str:
        return self.stdout + self.stderr


def run(command: str, env: dict, cwd: Path, *, answer: str = "y", timeout: float = 300) -> Ran:
    """Run `command` in bash (pipefail), its standard input a pseudo-terminal: each confirmation offctl asks for
    on stderr is answered `answer`. Standard output and error are pipes, read as they come."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        ["bash", "-o", "pipefail", "-c", command],
        env=env,
        cwd=cwd,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    os.close(slave)
    out, err, prompts = bytearray(), bytearray(), 0
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err, master: None}
    deadline = time.monotonic() + timeout
    try:
        while proc.stdout.fileno() in streams or proc.stderr.fileno() in streams:
            left = deadline - time.monotonic()
            if left <= 0:
                proc.kill()
                raise TimeoutError(f"`{command}` ran over {timeout} s")
            ready, _, _ = select.select(list(streams), [], [], min(left, 1.0))
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # the terminal's other end is gone
                    chunk = b""
                if not chunk:
                    del streams[fd]
                    continue
                if streams[fd] is not None:
                    streams[fd].extend(chunk)
            if err.decode("utf-8", "replace").count(PROMPT) > prompts:
                prompts += 1
                os.write(master, (answer + "\n").encode())
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Ran(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), prompts)


UNDO = re.compile(r"undo with: (offctl restore .+?)(?:  # .*)?$", re.MULTILINE)


def undo_lines(text: str) -> list[str]:
    """The undo lines a write printed (`undo with: offctl restore BACKUP --execute ...`), or its JSON's `undo`."""
    found = UNDO.findall(text)
    found += [json.loads(f'"{s}"') for s in re.findall(r'"undo":\s*"((?:[^"\\]|\\.)*)"', text)]
    return list(dict.fromkeys(found))


# --- the sandbox's state: what an undo must give back ----------------------------------------------------------


def zk_state(client, roots: list[str]) -> dict[str, bytes]:
    """Every node's bytes below the roots (the spouts' records, the Trident states), by path."""
    state: dict[str, bytes] = {}

    def walk(path: str) -> None:
        data, _ = client.get(path)
        state[path] = data
        for child in client.get_children(path):
            walk(f"{path.rstrip('/')}/{child}")

    for root in roots:
        if client.exists(root):
            walk(root)
    return state


def kafka_state(bootstrap: str) -> dict[str, dict[tuple[str, int], tuple[int, str]]]:
    """Every consumer group's commits (offset and metadata), by group; a group with none is absent."""
    from confluent_kafka.admin import AdminClient

    from offctl.adapters.groups import GroupClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    groups = sorted(g.group_id for g in admin.list_consumer_groups(request_timeout=20).result(30).valid)
    state = {}
    client = GroupClient(bootstrap, {}, 20)  # the commits as the broker holds them, metadata byte for byte
    try:
        for group in groups:
            commits = {
                tp: (offset, metadata or "") for tp, (offset, metadata) in client.offsets(group).items() if offset >= 0
            }
            if commits:
                state[group] = commits
    finally:
        client.close()
    return state
