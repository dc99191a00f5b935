"""Rounds of a group coordinator that moves (issue 43), on a 3-node Kafka 4.4 cluster (tests/faults/cluster.py), while
offctl runs against it: `inspect` and `watch --count 1` again and again, one `serve` process scraped every half
second, one MCP session (the SDK's client over stdio) calling the consumer tool, and a `reset --execute` of the
group in the middle of each move. A round finds the group's coordinator, stops its node (SIGKILL, a crash; or
SIGTERM, Kafka's controlled shutdown, as a rolling restart does), lets the runs go on for MOVE_S seconds, starts the
node again, and waits until it is back.

What must hold, counted by `Counts`:
- no offctl process dies by a signal; serve answers every scrape and the MCP session every call;
- every inspect and watch run ends 0/1 with the group's offsets as they are (before or after the round's reset), or
  3 naming the coordinator or the broker that did not answer;
- a reset ends 0 (written and verified), 3 (not written: the coordinator refused it), or 5 with a backup; after the
  round the group holds what the outcome says, and a restore of a 5's backup puts back what it held before.

tests/faults/test_coordinator_moves.py runs two rounds (a kill, then a controlled shutdown) in the suite; more:

    .venv/bin/python -m tests.faults.coordinator_moves --rounds 20     # prints the counts, exit 1 if one failed
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.faults.cluster import KraftCluster, kraft_cluster

GROUP, TOPIC = "orders-client", "orders"
META = '{"topologyId":"orders-1-1700000000","taskId":1,"threadName":"main"}'
START = {0: 5, 1: 6, 2: 7}  # the group's commits before the first round
MOVE_S = 14.0  # how long the runs go on after the coordinator's node stops (Kafka fences a killed node after 9 s)
TIMEOUT = "10"  # offctl's --timeout in every run
OFFCTL = [sys.executable, "-m", "offctl"]


@dataclass
class Counts:
    runs: Counter = field(default_factory=Counter)  # (command, exit code) -> runs
    signals: list[str] = field(default_factory=list)  # a run that died by a signal: what it was
    wrong: list[str] = field(default_factory=list)  # an answer that is not the group's state, or an exit undocumented
    scrapes: Counter = field(default_factory=Counter)  # "answered" / "failed"
    mcp: Counter = field(default_factory=Counter)  # "answered" / "error result" / "failed"
    resets: Counter = field(default_factory=Counter)  # exit code -> resets
    restores: Counter = field(default_factory=Counter)  # exit code -> restores of a reset that ended 5
    reasons: Counter = field(default_factory=Counter)  # (command, why it ended 3), numbers and ports left out
    lock: threading.Lock = field(default_factory=threading.Lock)

    def failures(self) -> list[str]:
        failed = [*self.signals, *self.wrong]
        if self.scrapes["failed"]:
            failed.append(f"{self.scrapes['failed']} scrapes of serve failed")
        if self.mcp["failed"]:
            failed.append(f"{self.mcp['failed']} MCP calls failed (the session broke)")
        if any(code != 0 for code in self.restores.elements()):
            failed.append(f"restores: {dict(self.restores)}")
        return failed

    def summary(self) -> str:
        runs = ", ".join(f"{cmd} exit {code}: {n}" for (cmd, code), n in sorted(self.runs.items()))
        return (
            f"runs: {runs}; died by a signal: {len(self.signals)}; wrong: {len(self.wrong)}; "
            f"scrapes: {dict(self.scrapes)}; MCP calls: {dict(self.mcp)}; resets by exit: {dict(self.resets)}; "
            f"restores by exit: {dict(self.restores)}; exit 3 by reason: {dict(self.reasons)}"
        )


class Tier:
    """The cluster, the group's state as offctl's writes left it, and the runs against it."""

    def __init__(self, cluster: KraftCluster, work: Path) -> None:
        from tests.conftest import KafkaHelper

        self.cluster, self.work, self.counts = cluster, work, Counts()
        self.helper = KafkaHelper(cluster.bootstrap)
        self.helper.create_topic(TOPIC, 3, {"min.insync.replicas": "2"}, replicas=3)
        for p in range(3):
            self.helper.produce(TOPIC, p, 20)
        self.helper.commit(GROUP, TOPIC, START, META)
        self.states = [dict(START)]  # what the group may hold now: before and after a reset under way
        self.conn = ["--bootstrap-servers", cluster.bootstrap, "--timeout", TIMEOUT]

    def close(self) -> None:
        self.helper.close()

    def committed(self) -> dict[int, int]:
        return {p: o for (_, p), (o, _) in self.helper.committed(GROUP).items()}

    # --- the runs -----------------------------------------------------------------------------------------

    def run(self, name: str, argv: list[str]) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [*OFFCTL, *argv], capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "200"}
        )
        with self.counts.lock:
            self.counts.runs[(name, proc.returncode)] += 1
            if proc.returncode < 0:
                self.counts.signals.append(
                    f"{name} died by {signal.Signals(-proc.returncode).name}: {proc.stderr[-500:]}"
                )
            elif proc.returncode == 3:
                reason = _reason(proc.stderr)
                self.counts.reasons[(name, reason)] += 1
                if reason == "unnamed":
                    self.counts.wrong.append(f"{name} exit 3 without naming what it could not read: {proc.stderr}")
            elif proc.returncode not in (0, 1, 3):
                self.counts.wrong.append(f"{name} exit {proc.returncode}: {proc.stderr[-500:]}")
        return proc

    def inspect_once(self) -> None:
        proc = self.run(
            "inspect", ["inspect", *self.conn, "--group", GROUP, "--topic", TOPIC, "-o", "json", "--fail-on", "never"]
        )
        if proc.returncode == 0:
            seen = {p["partition"]: p["committed"] for p in json.loads(proc.stdout)["partitions"]}
            with self.counts.lock:
                if seen not in self.states:
                    self.counts.wrong.append(f"inspect said {seen}; the group held one of {self.states}")

    def watch_once(self) -> None:
        self.run("watch", ["watch", *self.conn, "--group", GROUP, "--topic", TOPIC, "--count", "1"])

    def reset(self, to: int) -> None:
        before = self.committed()
        after = dict.fromkeys(before, to)
        with self.counts.lock:
            self.states = [before, after]
        # no Storm here to tell a running topology, and the group was written a round ago: both guards forced
        proc = self.run(
            "reset",
            [
                "reset",
                *self.conn,
                "--group",
                GROUP,
                "--topic",
                TOPIC,
                "--to",
                "offset",
                "--offset",
                str(to),
                "--execute",
                "--yes",
                "--force",
                "running-topology",
                "--quiet-period",
                "0",
                "--backup-dir",
                str(self.work / "backups"),
                "--audit-log",
                str(self.work / "audit.jsonl"),
                "-o",
                "json",
            ],
        )
        with self.counts.lock:
            self.counts.resets[proc.returncode] += 1
        self.pending = (proc, before, after)

    def settle_reset(self) -> None:
        """After the round: the group holds what the reset's outcome says; a 5's backup restores what it held."""
        proc, before, after = self.pending
        held = self.committed()
        expected = {0: [after], 3: [before]}.get(proc.returncode, [before, after])
        if held not in expected:
            self.counts.wrong.append(f"reset exit {proc.returncode}: the group holds {held}, not one of {expected}")
        if proc.returncode == 5:
            backup = _backup_named(proc, self.work / "backups")
            if backup is None:
                self.counts.wrong.append(f"reset exit 5 named no backup: {proc.stderr}")
            else:
                restored = self.run(
                    "restore",
                    [
                        "restore",
                        backup,
                        *self.conn,
                        "--execute",
                        "--yes",
                        "--force",
                        "running-topology",
                        "--quiet-period",
                        "0",
                        "--audit-log",
                        str(self.work / "audit.jsonl"),
                        "-o",
                        "json",
                    ],
                )
                self.counts.restores[restored.returncode] += 1
                if restored.returncode == 0 and self.committed() != before:
                    self.counts.wrong.append(f"the restore left {self.committed()}, not {before}")
        with self.counts.lock:
            self.states = [self.committed()]

    # --- a round ------------------------------------------------------------------------------------------

    def round(self, crash: bool, to: int) -> None:
        node = self.cluster.coordinator_of(GROUP)
        stop = threading.Event()
        loops = [threading.Thread(target=_until, args=(stop, job)) for job in (self.inspect_once, self.watch_once)]
        for loop in loops:
            loop.start()
        time.sleep(1)
        (self.cluster.kill if crash else self.cluster.shut_down)(node)
        time.sleep(1)
        self.reset(to)
        time.sleep(max(0.0, MOVE_S - 2))
        self.cluster.start(node)
        stop.set()
        for loop in loops:
            loop.join()
        self.cluster.coordinator_of(GROUP, 60)  # the cluster answers for the group again
        self.settle_reset()


def _until(stop: threading.Event, job) -> None:
    while not stop.is_set():
        job()


def _backup_named(proc: subprocess.CompletedProcess, folder: Path) -> str | None:
    """The backup a failed write names: its JSON document's, else the path its message gives under `folder`."""
    try:
        return json.loads(proc.stdout)["backup"]
    except (ValueError, KeyError, TypeError):
        pass
    words = (w.strip("'\"(),.;:") for w in proc.stderr.split())
    return next((w for w in words if w.startswith(str(folder))), None)


_REASONS = (
    "the group coordinator of group",
    "did not answer",
    "could not read the log",
    "could not be reached",
    "could not read",
    "listing consumer groups",
)


def _reason(stderr: str) -> str:
    """Why a run ended 3, as the first of _REASONS its message gives, with what follows on that line up to a colon
    (node numbers, addresses and offsets left out), or "unnamed"."""
    for line in stderr.splitlines():
        for reason in _REASONS:
            if reason in line:
                tail = line.split(reason, 1)[1]
                return re.sub(r"[\d.:,]+\d", "N", reason + tail)[:160]
    return "unnamed"


class Serve:
    """One `offctl serve` scraped every half second in a thread for the whole run."""

    def __init__(self, tier: Tier) -> None:
        from offctl.adapters import servers

        self.tier, self.port = tier, servers.free_port()
        self.proc = subprocess.Popen(
            [
                *OFFCTL,
                "serve",
                *tier.conn,
                "--group",
                GROUP,
                "--topic",
                TOPIC,
                "--listen",
                f"127.0.0.1:{self.port}",
                "--interval",
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._scrape)
        deadline = time.monotonic() + 30
        while not self._answered() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.thread.start()

    def _answered(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def _scrape(self) -> None:
        while not self.stop.is_set():
            self.tier.counts.scrapes["answered" if self._answered() else "failed"] += 1
            time.sleep(0.5)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        if self.proc.poll() is not None:
            self.tier.counts.signals.append(f"serve ended with {self.proc.returncode}: {self.proc.stderr.read()}")
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # counted, so that the run still prints what it saw
            self.proc.kill()
            _, err = self.proc.communicate()
            self.tier.counts.wrong.append(f"serve did not stop within 30 s of SIGTERM: {err[-1500:]}")
            return
        if self.proc.returncode != 0:
            self.tier.counts.wrong.append(f"serve stopped with {self.proc.returncode}: {err[-500:]}")


class Mcp:
    """One `offctl mcp` session over stdio (the SDK's client), calling the consumer tool every 2 s in a thread."""

    def __init__(self, tier: Tier) -> None:
        self.tier = tier
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        import anyio

        try:
            anyio.run(self._session)
        except BaseException as exc:  # noqa: BLE001 - the session broke: counted, never raised in a thread
            self.tier.counts.mcp["failed"] += 1
            self.tier.counts.wrong.append(f"the MCP session broke: {type(exc).__name__}: {exc}")

    async def _session(self) -> None:
        import anyio
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "offctl", "mcp", *self.tier.conn, "--group", GROUP],
            cwd=str(Path(__file__).resolve().parents[2]),
        )
        with open(self.tier.work / "mcp.stderr", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=120) as s:
                    await s.initialize()
                    while not self.stop.is_set():
                        result = await s.call_tool("consumer", {"consumer": GROUP, "store": "kafka"})
                        self.tier.counts.mcp["error result" if result.is_error else "answered"] += 1
                        await anyio.sleep(2)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=180)


def run_rounds(rounds: int, work: Path) -> Counts:
    """`rounds` rounds, a kill and a controlled shutdown in turn, on a new cluster; the counts."""
    with kraft_cluster(work / "cluster") as cluster:
        tier = Tier(cluster, work)
        serve, mcp = Serve(tier), Mcp(tier)
        try:
            for n in range(rounds):
                tier.round(crash=n % 2 == 0, to=8 + n % 5)
        finally:
            mcp.close()
            serve.close()
            tier.close()
    return tier.counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="offctl-coordinator-moves-") as work:
        counts = run_rounds(args.rounds, Path(work))
    print(f"{args.rounds} rounds in {time.monotonic() - started:.0f} s; {counts.summary()}")
    for failure in counts.failures():
        print("FAILED:", failure)
    return 1 if counts.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
