"""Every runbook, walked as written against the sandbox's real ZooKeeper and broker, command by command, as an
on-call engineer would: a step that no longer works, an exit code a runbook states wrongly, a verify step that
cannot fail, or an undo that does not undo fails CI.

The walk is a rehearsal in a shell whose environment points at production (addresses where nothing listens):
`eval "$(offctl sandbox env)"`, as docs/runbooks/README.md says, must make every step reach the sandbox and
nothing else. For each runbook, on a freshly seeded sandbox:
1. The verify steps run first, before the fix: each must fail. A verify step that passes before the fix cannot
   tell that the fix worked.
2. Confirm, fix and verify run in order (tests/support/runbook_walker.py): `storm kill NAME` is rehearsed with
   `offctl sandbox topology stop NAME`; offctl's question is answered "y" on a pseudo-terminal. A step exits
   with what its comment states (`# exit 7: ...`), else: confirm 0 or 1 (findings) and every finding code its
   comment names is shown; fix 0 (inspect and audit 0 or 1); verify 0, and no code its comment names after
   "no" is shown.
3. The topologies stopped are started again, as every runbook ends. The undo section then runs as written:
   it stops the topology again, and its `offctl restore BACKUP --execute` line stands for every undo line the
   writes printed, run last write first. Before each runs for real, a later change is made to one record it
   would put back: the undo must refuse it (changed-since, exit 4) and leave it; with the later change taken
   back, the undo must exit 0 and give back exactly the state before its write (every ZooKeeper node's bytes
   under the spouts' and Trident roots, every group's commits): each write the runbooks make can be undone. The
   restore is a write too: the undo line it prints must give back what the write had left, and the write's
   own undo line must then work again. Every undo line is run and checked so, and prints its own undo line; the
   later change and the second round (which wait out the recent-write guard's quiet period, 10 s each) are made
   on the first undo that puts ZooKeeper records back in the session's walk (they test restore, which is the same
   for every runbook's backups), and on every undo of a Kafka group's commits (which has no quiet period).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from offctl.core.records.findings import CATALOGUE as CODES
from offctl.errors import EXIT_CODES
from tests.support.runbook_walker import Step, kafka_state, rehearsed, run, steps, undo_lines, zk_state

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

DOCS = Path(__file__).parents[2] / "docs" / "runbooks"
RUNBOOKS = sorted(p for p in DOCS.glob("*.md") if p.name != "README.md")
QUIET_PERIOD_S = 10.5  # reset's default guard: the seed's records must be older than that
# What the environment of an on-call shell names: a production cluster (here, addresses where nothing listens).
PRODUCTION = {
    "OFFCTL_ZK": "127.0.0.1:1",
    "OFFCTL_ZK_ROOT": "/kafka-spouts",
    "OFFCTL_BOOTSTRAP_SERVERS": "127.0.0.1:1",
    "OFFCTL_STORM_ROOT": "/storm",
    "OFFCTL_TRIDENT_ROOT": "/transactional",
}


def offctl(*args: str, env: dict, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "offctl", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def live_sandbox(tmp_path_factory):
    """The sandbox, and the environment of a rehearsal shell: production exported, then `offctl sandbox env`."""
    state = tmp_path_factory.mktemp("runbook-sandbox")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFCTL_") or k == "OFFCTL_ALLOW_SKIP"}
    env.update(
        XDG_STATE_HOME=str(state),
        NO_COLOR="1",
        COLUMNS="200",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    up = offctl("sandbox", "up", env=env)
    assert up.returncode == 0, up.stderr
    try:
        shell = subprocess.run(
            ["bash", "-c", 'eval "$(offctl sandbox env)" && env -0'],
            env={**env, **PRODUCTION},
            capture_output=True,
            timeout=60,
        )
        assert shell.returncode == 0, shell.stderr
        rehearsal = dict(line.split("=", 1) for line in shell.stdout.decode().split("\0") if "=" in line)
        yield rehearsal
    finally:
        offctl("sandbox", "down", env=env, timeout=120)


def sandbox_of(env: dict):
    from offctl.settings import sandbox as sandbox_state

    found = sandbox_state.active(Path(env["XDG_STATE_HOME"]) / "offctl" / "sandbox")
    assert found is not None, "the sandbox is not running"
    return found


def test_the_walker_reads_steps_their_stated_exits_and_rehearses_storm_kill():
    text = (
        "## Fix\n```sh\nstorm kill orders -w 30\noffctl reset --spout a \\\n  --to earliest   # HIGH_LAG\n"
        "offctl reset --spout a --to earliest --execute --yes   # exit 7: partition 2 is left out\n```\n"
    )
    walked = steps(text)
    assert [(s.section, s.command, s.comment) for s in walked] == [
        ("fix", "storm kill orders -w 30", ""),
        ("fix", "offctl reset --spout a --to earliest", "HIGH_LAG"),
        ("fix", "offctl reset --spout a --to earliest --execute --yes", "exit 7: partition 2 is left out"),
    ]
    assert [s.exits for s in walked] == [None, None, frozenset({7})]
    assert [s.writes for s in walked] == [False, False, True] and not walked[2].asks
    assert Step("fix", "offctl delete --spout a --all-records --execute", "exit 0 or 1").exits == {0, 1}
    assert rehearsed("storm kill orders -w 30") == "offctl sandbox topology stop orders"


def test_the_walker_answers_offctls_question_on_a_terminal(tmp_path):
    """The runner gives the command a terminal and answers the question it asks; without a question, nothing."""
    script = "import sys, typer; ok = typer.confirm('Write?', err=True); print(ok, sys.stdin.isatty())"
    asked = run(f"{sys.executable} -c {json.dumps(script)}", dict(os.environ), tmp_path, timeout=60)
    assert (asked.code, asked.stdout.strip(), asked.prompts) == (0, "True True", 1)
    declined = run(f"{sys.executable} -c {json.dumps(script)}", dict(os.environ), tmp_path, answer="n", timeout=60)
    assert declined.stdout.strip() == "False True"


def test_every_exit_code_a_runbook_states_is_a_documented_one():
    for page in [*RUNBOOKS, DOCS / "README.md"]:
        for code in re.findall(r"\bexits? (?:code )?(\d+)\b", page.read_text()):
            assert int(code) in EXIT_CODES, f"{page.name} states exit {code}, which offctl does not have"


@pytest.mark.parametrize("landed", [False, True], ids=["nothing landed", "it landed"])
def test_the_steps_after_a_write_was_cut_off_run_as_written(
    landed, cli, zk, zk_server, broker39, kafka39, names, tmp_path, monkeypatch
):
    """README.md "When a write was cut off", as written (issue 34): a reset is cut off by Ctrl-C while offctl waits
    for ZooKeeper's answer (exit 6, "may or may not have been applied"), its write having landed or not. Each step
    then runs in bash on a terminal, BACKUP being the backup the message names, in a shell whose environment names
    the test's servers as the page says to set them: each exits as its comment says, and the spout is as before."""
    from offctl.adapters.zookeeper import ZkStore
    from tests.conftest import storm_record

    topic = kafka39.filled_topic(names("orders"), 3, 10)
    root = names.root + "/spouts"
    path = lambda p: f"{root}/orders/partition_{p}"  # noqa: E731
    for p in range(3):
        zk.create(path(p), storm_record(topic, p, 4 + p), makepath=True)
    zk.ensure_path(names.root + "/storm/storms")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFCTL_")}
    env.update(
        OFFCTL_ZK=zk_server.address,
        OFFCTL_ZK_ROOT=root,
        OFFCTL_BOOTSTRAP_SERVERS=broker39.address,
        OFFCTL_STORM_ROOT=names.root + "/storm",
        XDG_STATE_HOME=str(tmp_path),
        NO_COLOR="1",
        COLUMNS="200",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    before = {p: zk.get(path(p))[0] for p in range(3)}
    write = ZkStore.write_versioned

    def cut_off(self, changes):
        if landed:
            write(self, changes)
        raise KeyboardInterrupt  # while offctl waits for ZooKeeper's answer

    monkeypatch.setattr(ZkStore, "write_versioned", cut_off)
    reset = cli("reset", "--spout", "orders", "--to", "latest", "--quiet-period", "0", "--execute", "--yes", env=env)
    monkeypatch.undo()
    assert reset.exit_code == 6 and "may or may not have been applied" in reset.stderr, reset.stderr
    assert {offset_of(zk.get(path(p))[0]) for p in range(3)} == ({10} if landed else {4, 5, 6})
    (undo,) = undo_lines(reset.stderr)
    backup = shlex.split(undo)[2]

    walked = [s for s in steps((DOCS / "README.md").read_text()) if s.section == "when"]
    assert walked and all(s.command.startswith("offctl restore BACKUP --execute") for s in walked), walked
    for i, step in enumerate(walked):
        ran = run(step.command.replace("BACKUP", shlex.quote(backup)), env, tmp_path)
        assert ran.code in expected(step) and "Traceback" not in ran.stderr, f"`{step.command}`:\n{ran.seen[-3000:]}"
        if landed and i == 0:
            assert "wrote 3 partition(s)" in ran.seen and ran.prompts == 1, ran.seen[-3000:]
        else:
            assert "nothing to change" in ran.seen and ran.prompts == 0, ran.seen[-3000:]
        assert {p: zk.get(path(p))[0] for p in range(3)} == before


def guarded(step: Step) -> bool:
    """A command whose plan the recent-write guard judges, dry run or not: offctl reset, restore, migrate, delete,
    audit --repair."""
    words = shlex.split(step.command.split("|")[0])
    return words[:1] == ["offctl"] and (
        words[1:2] in (["reset"], ["restore"], ["migrate"], ["delete"])
        or words[1:2] == ["audit"]
        and "--repair" in words
    )


def offset_of(data: bytes) -> int:
    return json.loads(data)["offset"]


def expected(step: Step) -> frozenset[int]:
    if step.exits is not None:
        return step.exits
    reading = step.command.startswith(("offctl inspect", "offctl audit")) and not step.writes
    return frozenset({0, 1}) if reading and step.section in ("confirm", "fix") else frozenset({0})


def state(env: dict) -> tuple[dict, dict]:
    from kazoo.client import KazooClient

    sandbox = sandbox_of(env)
    client = KazooClient(hosts=sandbox.zk, timeout=10)
    client.start(timeout=10)
    try:
        nodes = zk_state(client, [sandbox.zk_root, sandbox.trident_root])
    finally:
        client.stop()
        client.close()
    return nodes, kafka_state(sandbox.broker)


def later_change(env: dict, undo: str):
    """Change one record the undo would put back, as a later writer would, and return how to take it back.
    None when the backup holds nothing offctl can change in ZooKeeper (a Kafka group's undo: see test_undo)."""
    from kazoo.client import KazooClient

    backup = json.loads(Path(undo.split()[2]).read_text())
    entries = backup.get("zookeeper") or []
    if not entries:
        return None
    entry = entries[0]
    client = KazooClient(hosts=sandbox_of(env).zk, timeout=10)
    client.start(timeout=10)
    path = entry["path"]
    before = client.get(path)[0] if client.exists(path) else None
    later = b'{"note":"written after the change the undo undoes"}'
    if before is None:
        client.create(path, later, makepath=True)
    else:
        client.set(path, later)

    def take_back() -> None:
        if before is None:
            client.delete(path)
        else:
            client.set(path, before)
        client.stop()
        client.close()

    return path, later, take_back, client


@pytest.mark.parametrize("runbook", RUNBOOKS, ids=[p.stem for p in RUNBOOKS])
def test_runbook_runs_as_written_against_the_sandbox(runbook, live_sandbox, tmp_path):
    env = live_sandbox
    seeded = offctl("sandbox", "seed", env=env)
    assert seeded.returncode == 0, seeded.stderr
    quiet_from = time.monotonic() + QUIET_PERIOD_S  # the seed's records are older than the quiet period from then
    walked = steps(runbook.read_text())
    assert any(s.section == "fix" for s in walked), f"{runbook.name} has no fix step to walk"
    assert any(s.section == "verify" for s in walked), f"{runbook.name} has no verify step to walk"

    for step in (s for s in walked if s.section == "verify"):
        ran = run(step.command, env, tmp_path)
        assert ran.code != 0, (
            f"{runbook.name}: verify step `{step.command}` passes before the fix, so it cannot "
            f"tell that the fix worked:\n{ran.seen[-2000:]}"
        )

    stopped: list[str] = []
    quiet = Quiet()
    writes: list[tuple[Step, tuple[dict, dict], list[str]]] = []
    for step in (s for s in walked if s.section in ("confirm", "fix", "verify")):
        if guarded(step):  # the steps before it read only: they run while the seed's records age
            time.sleep(max(0.0, quiet_from - time.monotonic()))
        before = state(env) if step.writes else None
        ran = run(rehearsed(step.command), env, tmp_path)
        where = f"{runbook.name} [{step.section}] `{step.command}` exited {ran.code}:\n{ran.seen[-3000:]}"
        assert ran.code in expected(step), where
        assert "Traceback" not in ran.stderr, where
        if step.asks and ran.code in (0, 7):
            assert ran.prompts == 1, f"{where}\n(offctl wrote without asking)"
        named = [c for c in re.findall(r"\b[A-Z][A-Z_]+[A-Z]\b", step.comment) if c in CODES]
        unwanted = {c for c in re.findall(r"\bno ([A-Z][A-Z_]+[A-Z])\b", step.comment) if c in CODES}
        if step.section == "confirm":
            assert all(c in ran.seen for c in named if c not in unwanted), where
        if step.section == "verify":
            assert not [c for c in unwanted if c in ran.stdout], where
        if m := re.fullmatch(r"storm kill (\S+)(?: .*)?", step.command):
            stopped.append(m.group(1))
        if step.writes:
            undos = undo_lines(ran.seen)
            assert undos or ran.code not in (0, 7), f"{where}\n(a write that printed no undo line)"
            for folder in filter(None, map(folder_of, undos)):
                quiet.wrote(folder)
            writes.append((step, before, undos))

    for name in stopped:  # every runbook ends by starting the topology again
        started = offctl("sandbox", "topology", "start", name, env=env)
        assert started.returncode == 0, started.stderr

    undo_steps = [s for s in walked if s.section == "undo"]
    assert undo_steps or not writes, f"{runbook.name} writes but has no undo section"
    for step in undo_steps:
        if not step.command.startswith("offctl restore BACKUP"):
            ran = run(rehearsed(step.command), env, tmp_path)
            assert ran.code in expected(step), f"{runbook.name} [undo] `{step.command}`: {ran.seen[-2000:]}"
            continue
        for write, before, undos in reversed(writes):
            for undo in reversed(undos):
                check_undo(runbook.name, write, undo, before, env, tmp_path, quiet)
            assert state(env) == before, f"{runbook.name}: the undo lines of `{write.command}` left another state"


THOROUGH: list[str] = []  # the runbook whose ZooKeeper undo was checked whole, once a session (the docstring)


class Quiet:
    """When the walker may next write each spout's ZooKeeper records without the recent-write guard's refusal: a
    record written a moment ago is refused (a writer may still be at work) until the quiet period has passed."""

    def __init__(self) -> None:
        self.written: dict[str, float] = {}  # a spout's folder -> when the walker or offctl last wrote under it
        self.thorough = not THOROUGH  # the later change and the second round are still to be made (the docstring)

    def wait(self, folder: str) -> None:
        time.sleep(max(0.0, self.written.get(folder, 0.0) + QUIET_PERIOD_S - time.monotonic()))

    def wrote(self, folder: str) -> None:
        self.written[folder] = time.monotonic()


def folder_of(undo: str) -> str | None:
    """The ZooKeeper folder of the spout (or Trident spout) whose records the undo puts back; None for a group's."""
    backup = json.loads(Path(shlex.split(undo)[2]).read_text())
    return None if backup["store"] == "kafka" else f"{backup['zk_root'].rstrip('/')}/{backup['consumer']}"


def of_consumer(found: tuple[dict, dict], undo: str) -> tuple[dict, dict]:
    """The part of the sandbox's state that the undo's backup is about: its spout's (or Trident spout's) nodes,
    or its group's commits. A write over several consumers (audit --repair) prints an undo line for each."""
    nodes, groups = found
    folder = folder_of(undo)
    if folder is None:
        backup = json.loads(Path(shlex.split(undo)[2]).read_text())
        return {}, {backup["consumer"]: groups.get(backup["consumer"])}
    return {p: d for p, d in nodes.items() if p == folder or p.startswith(folder + "/")}, {}


def check_undo(
    name: str, write: Step, undo: str, before: tuple[dict, dict], env: dict, cwd: Path, quiet: Quiet
) -> None:
    """Run one undo line as the module's docstring says. Before each run that puts a spout's ZooKeeper records
    back, the walker waits out what is left of the quiet period since it or offctl last wrote them. The first undo
    of the runbook that puts ZooKeeper records back is checked whole; the others are run and their own undo line
    checked for, not run (a Kafka group's undo is always checked whole: it waits for nothing)."""
    where = f"{name}: the undo `{undo}` of `{write.command}`"
    folder = folder_of(undo)
    thorough = folder is None or quiet.thorough
    if folder is not None:
        quiet.wait(folder)
    changed = later_change(env, undo) if thorough else None  # None for a Kafka group's undo
    if changed is not None:
        quiet.thorough = False
        THOROUGH.append(name)
        path, later, take_back, client = changed
        try:
            refused = run(undo, env, cwd)
            assert refused.code == 4 and "changed-since" in refused.seen, (
                f"{where} did not refuse a later change to {path}:\n{refused.seen[-3000:]}"
            )
            assert client.get(path)[0] == later, f"{where} overwrote a later change to {path}"
        finally:
            take_back()
            quiet.wrote(folder)
        quiet.wait(folder)
    written = of_consumer(state(env), undo)
    ran = run(undo, env, cwd)
    if folder is not None:
        quiet.wrote(folder)
    # Every write of the runbooks can be undone (offctl says before the write where one cannot: test_reset_e2e)
    assert ran.code == 0, f"{where} exited {ran.code}:\n{ran.seen[-3000:]}"
    assert of_consumer(state(env), undo) == of_consumer(before, undo), (
        f"{where} exited 0 but did not give back the state before the write"
    )
    # The restore is a write too: the undo line it printed gives back what the write had left, and the
    # write's own undo line then works again.
    redo = undo_lines(ran.seen)
    assert len(redo) == 1, f"{where} printed no undo line of its own:\n{ran.seen[-2000:]}"
    if not thorough:
        return
    again = run(redo[0], env, cwd)
    # Apache Kafka creates the group again for a commit to a group the undo deleted (a commit with no generation
    # makes a simple group: GroupCoordinator.handleCommitOffsets), so the undo of an undo that deleted one works too
    assert again.code == 0, f"{where}: its own undo `{redo[0]}` exited {again.code}:\n{again.seen[-2000:]}"
    assert of_consumer(state(env), undo) == written, (
        f"{where}: its own undo `{redo[0]}` did not give back the state after the write:\n{again.seen[-2000:]}"
    )
    if folder is not None:
        quiet.wrote(folder)
        quiet.wait(folder)
    last = run(undo, env, cwd)
    if folder is not None:
        quiet.wrote(folder)
    assert last.code == 0 and of_consumer(state(env), undo) == of_consumer(before, undo), (
        f"{where} did not undo again:\n{last.seen[-2000:]}"
    )
