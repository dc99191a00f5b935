"""When a spout will have caught up, over real history (issue 46, part 3): serve's cycle (exporter.run_cycle: the one
pipeline on the real ZooKeeper and Apache Kafka 4.4 of the fixtures, then the monitor's window) run again and again
while spouts move, and `offctl watch` itself.

Between two cycles the test writes what spouts write: PRODUCED messages on each partition, a storm-kafka spout's
records in ZooKeeper (PartitionManager.commit's bytes) and storm-kafka-client groups' commits with Storm's metadata.
`catching` commits faster than the log grows on both its partitions, `behind` slower on one of them; group `fast`
does as `catching`, judged by a profile whose commit period is 1 ms, and `slow` the same with storm-kafka-client's
default of 30 s. The expected figures are worked out here from what each cycle's report captured (its capture time,
each partition's committed offset, log end and lag), by the formula docs/contract.md states; nothing rests on how
long a cycle took, only the window of `slow` (short-window while the cycles span 30 s or less) is read from the
captured times, as the rule does.

Every output of the cycle must say the same: /status.json's document (its partitions and consumers), the /metrics
families (+Inf where not catching up, no sample without an estimate) and watch's lines under its table.
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from offctl.core.records.model import Thresholds, duration
from offctl.core.rules.profiles import Profile, Profiles
from offctl.core.storm.releases import SpoutProfile
from offctl.faces.serve.exporter import cycle_reading, run_cycle
from offctl.faces.serve.monitor import Collector, Monitor
from offctl.render.report import report_document
from offctl.render.watch import catch_up_lines
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Selection
from tests.conftest import invoke, storm_record
from tests.e2e.seeds import spout, storm_root

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

RUNNING = "catch-up-topology-1-1700000000"
PARTITIONS, FIRST = 2, 100  # the topic's partitions, and the messages each holds before the first cycle
PRODUCED = 10  # messages written to each partition between two cycles
CYCLES = 4
# consumer -> partition -> (committed at the first cycle, how far it commits between two cycles)
SPOUTS = {"catching": {0: (10, 30), 1: (50, 20)}, "behind": {0: (60, 5), 1: (80, 15)}}
GROUPS = {"fast": {0: (20, 30), 1: (20, 30)}, "slow": {0: (20, 30), 1: (20, 30)}}
COMMIT_PERIOD_MS = {"zookeeper": 0, "fast": 1, "slow": 30_000}


def storm_metadata() -> str:
    """Commit metadata as storm-kafka-client's CommitMetadataManager writes it (v1.2.4 to v2.8.8)."""
    return json.dumps({"topologyId": RUNNING, "taskId": 5, "threadName": "Thread-9-spout"}, separators=(",", ":"))


@pytest.fixture
def moving(zk, zk_server, kafka, broker, names):
    """The topic, the spouts and groups at their first offsets, the reading serve would make of them, and `step(k)`:
    what the producers and the spouts write before cycle k."""
    topic = kafka.filled_topic(names("events"), PARTITIONS, FIRST)
    root = names.root + "/spouts"
    storm = storm_root(zk, names.root + "/storm", RUNNING)
    spout_ids = {name: names(name) for name in SPOUTS}
    groups = {name: names(name) for name in GROUPS}

    def offset(plan, p, k):
        start, step = plan[p]
        return start + step * k

    for name, plan in SPOUTS.items():
        spout(zk, root, spout_ids[name], topic, {p: offset(plan, p, 0) for p in plan}, topology_id=RUNNING)
    for name, plan in GROUPS.items():
        kafka.commit(groups[name], topic, {p: offset(plan, p, 0) for p in plan}, storm_metadata())

    def step(k: int) -> None:
        for p in range(PARTITIONS):
            kafka.produce(topic, p, PRODUCED)
        for name, plan in SPOUTS.items():
            for p in plan:
                node = f"{root}/{spout_ids[name]}/partition_{p}"
                zk.set(node, storm_record(topic, p, offset(plan, p, k), topology_id=RUNNING))
        for name, plan in GROUPS.items():
            kafka.commit(groups[name], topic, {p: offset(plan, p, k) for p in plan}, storm_metadata())

    fast = Profile("fast", groups["fast"], Thresholds(spout=SpoutProfile(commit_period_ms=1)))
    reading = Reading(
        Connection(zk=zk_server.address, zk_roots=(root,), bootstrap_servers=broker.address, storm_root=storm),
        Selection(spouts=tuple(spout_ids.values()), groups=tuple(groups.values())),
        Profiles(profiles=(fast,)),
    )
    names_of = {v: k for k, v in (*spout_ids.items(), *groups.items())}
    return SimpleNamespace(topic=topic, reading=reading, step=step, name=names_of.__getitem__, groups=groups)


def expected_partition(history: list[tuple[int, int, int, int]], period_ms: int) -> tuple:
    """(catch_up_s, catch_up, commit_rate, log_rate) of a partition from its (captured_ms, committed, log_end, lag)
    in each cycle so far, oldest first, by docs/contract.md's catch-up: the first and the latest observation."""
    (t0, c0, e0, _), (t1, c1, e1, lag) = history[0], history[-1]
    if lag == 0:
        return (0.0, "caught-up", None, None)
    if len(history) < 2:
        return (None, "no-history", None, None)
    if t1 - t0 <= period_ms:
        return (None, "short-window", None, None)
    commit_rate, log_rate = (c1 - c0) * 1000 / (t1 - t0), (e1 - e0) * 1000 / (t1 - t0)
    rates = round(commit_rate, 3), round(log_rate, 3)
    if commit_rate <= log_rate:
        return (None, "not-catching-up", *rates)
    return (round(lag / (commit_rate - log_rate), 3), "catching-up", *rates)


def expected_consumer(parts: list[tuple]) -> tuple:
    """A consumer's figures from its partitions', as docs/contract.md says: not catching up when one is, no time when
    one has no estimate, else the longest time; the rates summed over the partitions that have them."""
    states = {state for _, state, _, _ in parts}
    rates = [sum(p[i] for p in parts if p[i] is not None) for i in (2, 3)]
    rates = [round(r, 3) if any(p[i] is not None for p in parts) else None for i, r in zip((2, 3), rates)]
    for state in ("not-catching-up", "no-history", "short-window"):
        if state in states:
            return (None, state, *rates)
    return (max(p[0] for p in parts), "catching-up" if "catching-up" in states else "caught-up", *rates)


FIGURES = ("catch_up_s", "catch_up", "commit_rate", "log_rate")


def test_a_spout_that_catches_up_and_one_that_falls_behind_over_serves_cycles(moving):
    monitor = Monitor(window=10)
    reading = cycle_reading(moving.reading, 60.0)
    seen: dict[tuple, list] = {}
    for k in range(CYCLES):
        if k:
            moving.step(k)
        report = run_cycle(reading, monitor)
        assert not report.incomplete, report.incomplete
        doc = report_document(monitor.cycle.report)  # /status.json
        expected: dict[tuple, tuple] = {}
        for row in report.rows:
            name = moving.name(row.record.key.consumer)
            seen.setdefault(row.partition_key, []).append(
                (report.captured_ms, row.record.committed, row.log_end, row.lag)
            )
            period = COMMIT_PERIOD_MS.get(name, COMMIT_PERIOD_MS["zookeeper"])
            expected[name, row.record.partition] = expected_partition(seen[row.partition_key], period)
        shown = {(moving.name(p["consumer"]), p["partition"]): tuple(p[f] for f in FIGURES) for p in doc["partitions"]}
        assert shown == expected, f"cycle {k + 1}"
        consumers = {moving.name(c["consumer"]): tuple(c[f] for f in FIGURES) for c in doc["consumers"]}
        assert consumers == {
            name: expected_consumer([v for (n, _), v in expected.items() if n == name]) for name in consumers
        }, f"cycle {k + 1}"
        assert_metrics_say(monitor, moving, expected, consumers)
        assert_watch_says(report, moving, consumers)
        if k == 0:  # one cycle: no history yet
            assert {state for _, state, _, _ in expected.values()} == {"no-history"}
    # what the spouts did, whatever the cycles took: `catching` and `fast` gain on the producers on every
    # partition, `behind` falls behind on partition 0; `slow`'s window is its commit period or less, or it gains
    assert consumers["catching"][1] == consumers["fast"][1] == "catching-up"
    assert expected["behind", 0][1] == consumers["behind"][1] == "not-catching-up"
    assert expected["behind", 1][1] == "catching-up"
    assert consumers["slow"][1] in ("short-window", "catching-up")
    # the estimate shrinks as the lag closes at a steady pace: the time left at the last cycle is the lag left
    assert consumers["catching"][0] == max(expected["catching", p][0] for p in range(PARTITIONS))


def assert_metrics_say(monitor: Monitor, moving, expected: dict, consumers: dict) -> None:
    """/metrics: the partition and consumer families carry the document's figures; +Inf where not catching up, no
    sample where there is no estimate."""

    def value(figures: tuple) -> tuple:
        seconds, state, commit_rate, log_rate = figures
        return (math.inf if state == "not-catching-up" else seconds, commit_rate, log_rate)

    got: dict[tuple, list] = {}
    names = ("catch_up_seconds", "commit_rate", "log_rate")
    for family in Collector(monitor).collect():
        for s in family.samples:
            for scope in ("partition", "consumer"):
                for i, figure in enumerate(names):
                    if s.name == f"offctl_{scope}_{figure}":
                        partition = int(s.labels["partition"]) if scope == "partition" else None
                        got.setdefault((moving.name(s.labels["consumer"]), partition), [None] * 3)[i] = s.value
    want = {key: list(value(figures)) for key, figures in expected.items()}
    want.update({(name, None): list(value(figures)) for name, figures in consumers.items()})
    assert got == {key: v for key, v in want.items() if any(x is not None for x in v)}


def assert_watch_says(report, moving, consumers: dict) -> None:
    """watch's lines under its table: each consumer's catch-up in words, the partitions not catching up named."""
    lines = {line.split(": ", 1)[0].strip(): line for line in map(str, catch_up_lines(report)[1:])}
    for key in {row.record.key for row in report.rows}:
        seconds, state, commit_rate, log_rate = consumers[moving.name(key.consumer)]
        line = lines[str(key)]
        words = {
            "catching-up": f"catches up in ~{duration(seconds) if seconds is not None else ''}",
            "not-catching-up": f"not catching up on {moving.topic} [0]",
            "no-history": "no estimate yet",
            "short-window": "no estimate (the window spans one commit period or less)",
            "caught-up": "caught up",
        }[state]
        assert words in line, line
        assert ("commits " in line) == (commit_rate is not None), line


def test_watch_itself_says_a_spout_that_stands_still_is_not_catching_up(zk, zk_server, kafka, broker, names):
    """`offctl watch` (the command, three refreshes): the first has no history, the later ones see a lagging spout
    whose committed offset does not move while nothing is produced: not catching up, and its partition at lag 0
    caught up."""
    topic = kafka.filled_topic(names("still"), 2, 10)
    root = names.root + "/spouts"
    spout(zk, root, "still", topic, {0: 4, 1: 10})
    result = invoke(
        [
            "watch",
            "--zk",
            zk_server.address,
            "--zk-root",
            root,
            "--bootstrap-servers",
            broker.address,
            "--count",
            "3",
            "--interval",
            "0.5",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    refreshes = result.stdout.split("offctl watch:")[1:]
    assert len(refreshes) == 3, result.stdout
    consumer = f"{root}/still"
    assert f"{consumer}: no estimate yet (no history)" in refreshes[0]
    for later in refreshes[1:]:
        assert f"{consumer}: not catching up on {topic} [0] (commits 0.0/s, log 0.0/s)" in later, later
