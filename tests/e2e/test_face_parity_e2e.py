"""Every face on one seeded state says what `offctl inspect -o json` says (issue 37, item 3).

One state on the real ZooKeeper and Apache Kafka 4.4 of the fixtures, read once by each face with the same options:
`offctl peek`, `offctl watch` (one refresh), `offctl serve` (a real process: /metrics and /status.json), the audit's
task (tasks.audit_chunk and chunk_outputs, as each Spark task runs them, on the settings `offctl audit` resolves), the
MCP tools (the SDK's client over stdio) and `storm-kafka-monitor`. Per consumer-partition each figure a face shows
must be inspect's: status, finding codes, lag, time lag and its source, retention headroom, commit expiry (each with
its source), `resumes_at`, `resumes`, `lost_to_retention`, and the catch-up with its rates; per consumer, the
aggregates a face shows. Every face reads once here, so the catch-up is `caught-up` at lag 0 and `no-history` above it
in each (serve and watch too: one cycle); tests/e2e/test_catch_up_e2e.py runs serve's and watch's cycles over moving
spouts and holds their outputs with history to one estimate. A face that leaves a figure out names it in LEFT_OUT, and
docs/contract.md ("What each face shows") names the same figures, face by face.

The figures in seconds move with the capture time (a time lag grows, a headroom or an expiry shrinks), and each face
reads at its own moment: they are compared at the face's own capture time, to the millisecond, where the face says
it (storm-kafka-monitor does not: it is held within the moments before and after its run).

The state: topic T of 5 partitions of 6 messages written 30 h ago (retention.ms 2 days), partition 4's log start moved
to 3 (DeleteRecords). An old storm-kafka spout `legacy` (its topology stopped) at 2, 6, 0 and 1 (below the log start),
none on partition 3; a storm-kafka-client group (its topology running, Storm's commit metadata) at 1, 4, 6 and 1, none
on 3 (partition 1's metadata a JSON null: CRASHING_COMMIT, the spout throws at start). Two JStorm Kafka spouts under
their own root (issue 47), records as PartitionConsumer.commitState writes them: `T/jstorm` at 1, 5, 9 and 1, none on
3 (it fetches the stored offset + 1: lag 4, caught up, waiting past the log end, every fetch failing below the log
start, and starting at the log end + 1), and `T/shared`, whose kafka.client.id two topologies share (ID_COLLISION),
at 3, a record naming another topic (TOPIC_MISMATCH) and a string offset (MALFORMED_RECORD), none on 3 and 4. The
spout settings given to every face change where three partitions resume (storm-kafka 0.9.6 ignores offset 0 and
starts at the log end; UNCOMMITTED_LATEST starts a partition without a commit at the log end); --lag-threshold 3
(from the config file's context: Storm UI's program takes no such flag) gives HIGH_LAG, --retention-horizon 1d
RETENTION_RISK and --commit-expiry-horizon 6d COMMIT_EXPIRY_RISK (the commits expire in about 5 d 18 h, outside the
default horizon of a day: a face that drops the option shows another set of codes).

The disagreements this test found when it was written (peek without inspect's figures; the MCP peek tool without the
run's commit-expiry options; storm-kafka-monitor without them, and placing a commit outside the log by the start-up
rule instead of the analysis's answer) are fixed; a new one fails its face's test.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import pytest

from offctl.adapters import servers
from offctl.core.records.model import ConsumerKey, Headroom, TimeLag
from offctl.core.storm import jstorm
from offctl.core.time.expiry import Expiry
from offctl.core.time.timelag import SOURCE_CODES
from offctl.render.formats import expiry_text, headroom_text, lost_text, time_lag_text
from tests.conftest import Names, Result, invoke
from tests.e2e.seeds import spout, storm_root

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

REPO = Path(__file__).resolve().parents[2]
H = 3_600_000
DAY = 24 * H
PARTITIONS, MESSAGES = 5, 6
AGE_MS = 30 * H  # how long ago the messages were written
RETENTION_MS = 2 * DAY  # the topic's retention.ms: the headroom is about 18 h, inside --retention-horizon 1d
RUNNING = "clicks-topology-2-1700000000"
STOPPED = "legacy-topology-1-1700000000"
SPOUT_ID = "legacy"
LEGACY_AT = {0: 2, 1: 6, 2: 0, 4: 1}  # partition 3 has no record
GROUP_AT = {0: 1, 1: 4, 2: 6, 4: 1}  # nor a commit
CRASHING = 1  # the group's partition whose commit metadata is a JSON null
JSTORM_AT = {0: 1, 1: 5, 2: 9, 4: 1}  # T/jstorm's stored offsets: it fetches each + 1; partition 3 has no node
JSTORM_SPOUTS = ("jstorm", "shared")  # the kafka.client.id of each JStorm spout of T
DELETED_BELOW = {4: 3}  # partition 4's log start, after DeleteRecords
SPOUT_SETTINGS = (
    "--storm-kafka-release",
    "0.9.6",
    "--storm-kafka-client-release",
    "2.8.8",
    "--first-poll-offset-strategy",
    "UNCOMMITTED_LATEST",
)
HORIZONS = ("--time-lag-budget", "30", "--retention-horizon", "1d", "--commit-expiry-horizon", "6d")
MONITOR_HORIZONS = HORIZONS  # storm-kafka-monitor takes every one of them
HANG_GUARD_S = 180  # a face's process ends long before this; it only keeps a hang from stalling the suite

# What each face shows per consumer-partition is compared figure by figure: these, as inspect's JSON names them.
FIGURES = (
    "status",
    "codes",
    "lag",
    "time_lag_s",
    "time_lag_source",
    "retention_headroom_s",
    "retention_source",
    "commit_expiry_s",
    "commit_expiry_source",
    "resumes_at",
    "resumes",
    "catch_up_s",
    "catch_up",
    "commit_rate",
    "log_rate",
    "lost_to_retention",
)
TIMED = {"time_lag_s": 1, "retention_headroom_s": -1, "commit_expiry_s": -1}  # how each moves with the capture time

# The one table of what a face leaves out (docs/contract.md, "What each face shows", says why): face -> figures.
# Every other figure of FIGURES the face shows, and the test compares it.
LEFT_OUT: dict[str, frozenset[str]] = {
    "offctl peek": frozenset(),
    "offctl watch": frozenset({"status", "resumes_at", "resumes", "catch_up_s", "catch_up", "commit_rate", "log_rate"}),
    "offctl serve /metrics": frozenset(
        {"status", "codes", "retention_source", "commit_expiry_source", "resumes_at", "resumes", "catch_up"}
    ),
    "offctl serve /status.json": frozenset(),
    "offctl audit": frozenset(),
    "offctl mcp": frozenset(),
    "storm-kafka-monitor": frozenset(
        {
            "status",
            "time_lag_source",
            "retention_headroom_s",
            "retention_source",
            "commit_expiry_s",
            "commit_expiry_source",
        }
    ),
}
CONTRACT_SECTION = "## What each face shows"


# --- the state, and inspect's reading of it ----------------------------------------------------------------------


def storm_metadata(topology_id: str) -> str:
    """Commit metadata as storm-kafka-client's CommitMetadataManager writes it (v1.2.4 to v2.8.8)."""
    return json.dumps(
        {"topologyId": topology_id, "taskId": 5, "threadName": "Thread-9-kafka-spout-executor[5 5]"},
        separators=(",", ":"),
    )


@pytest.fixture(scope="module")
def state(zk, zk_server, kafka, broker, tmp_path_factory):
    """The seeded state (module docstring), and the flags every face is given."""
    from confluent_kafka import TopicPartition

    names = Names(f"face-parity-{time.time_ns()}")
    now = int(time.time()) * 1000  # near the broker's clock: nothing here is old enough for it to delete
    topic = names("orders")
    kafka.create_topic(topic, PARTITIONS, {"retention.ms": str(RETENTION_MS)})
    for p in range(PARTITIONS):  # partition p's messages a minute apart from the others', o seconds apart
        kafka.produce_records(
            topic,
            p,
            [{"value": b"m%d" % o, "timestamp": now - AGE_MS + p * 60_000 + o * 1000} for o in range(MESSAGES)],
        )
    for future in kafka.admin.delete_records([TopicPartition(topic, p, o) for p, o in DELETED_BELOW.items()]).values():
        future.result(30)
    root = names.root + "/spouts"
    storm = storm_root(zk, names.root + "/storm", RUNNING)
    spout(zk, root, SPOUT_ID, topic, LEGACY_AT, topology_id=STOPPED, broker=broker.address)
    group = names("clicks")
    kafka.commit(group, topic, GROUP_AT, storm_metadata(RUNNING))
    kafka.commit(group, topic, {CRASHING: GROUP_AT[CRASHING]}, "null")  # the spout throws in activate() on it
    jroot = jstorm_spouts(zk, names.root + "/jstorm", topic, broker.address)
    config = tmp_path_factory.mktemp("face-parity") / "config.toml"
    config.write_text('default-context = "parity"\n\n[contexts.parity]\nlag-threshold = 3\n')
    config.chmod(0o600)
    connection = (
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker.address,
        "--storm-root",
        storm,
        "--jstorm-root",
        jroot,
    )
    return SimpleNamespace(
        topic=topic,
        root=root,
        jroot=jroot,
        storm=storm,
        group=group,
        zk=zk_server.address,
        bootstrap=broker.address,
        env={"OFFCTL_CONFIG": str(config)},
        flags=(*connection, "--group", group, *SPOUT_SETTINGS, *HORIZONS),
    )


def jstorm_spouts(zk, root: str, topic: str, broker: str) -> str:
    """The state's JStorm spouts of `topic` under JStorm's `root` (module docstring); returns the root."""
    host, port = broker.rsplit(":", 1)

    def node(client: str, partition: int, data: bytes) -> None:
        zk.create(jstorm.node_path(root, jstorm.consumer_id(topic, client), partition), data, makepath=True)

    for p, offset in JSTORM_AT.items():
        node("jstorm", p, jstorm.record_bytes("clicks-jstorm", offset, p, host, int(port), topic))
    node("shared", 0, jstorm.record_bytes("clicks-jstorm", 3, 0, host, int(port), topic))
    node("shared", 1, jstorm.record_bytes("audit-jstorm", 2, 1, host, int(port), topic + "-old"))
    quoted = jstorm.record_bytes("clicks-jstorm", 2, 2, host, int(port), topic).replace(
        b'"offset":2,', b'"offset":"2",'
    )
    node("shared", 2, quoted)  # a string offset: the (Long) cast throws, and the spout starts as with no record
    return root


def offctl(state, *args: str) -> Result:
    """The real CLI in this process, as the `cli` fixture runs it, with the state's config file."""
    result = invoke(list(args), env=state.env, catch_exceptions=False)
    return Result(result.exit_code, result.stdout, result.stderr)


def process_env(state) -> dict[str, str]:
    return {**os.environ, **state.env}


def ms(iso: str) -> int:
    """offctl's ISO-8601 UTC with milliseconds (`captured_at`) as epoch milliseconds."""
    return round(datetime.strptime(iso, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp() * 1000)


def where(d: dict) -> tuple:
    """A consumer-partition, as every document names it."""
    return d["store"], d["consumer"], d["zk_root"], d["topic"], d["partition"]


def consumer_of(d: dict) -> tuple:
    return d["store"], d["consumer"], d["zk_root"]


WHOLE_CONSUMER = {"BROKER_INCOMPATIBLE"}  # a consumer's finding every one of its partitions carries (contract.md)


def codes_by_partition(findings: list[dict], partitions: list[dict]) -> dict[tuple, list[str]]:
    out: dict[tuple, set] = defaultdict(set)
    for f in findings:
        out[where(f)].add(f["code"])
        if f["code"] in WHOLE_CONSUMER:
            for p in partitions:
                if consumer_of(p) == consumer_of(f):
                    out[where(p)].add(f["code"])
    return {k: sorted(v) for k, v in out.items()}


def figures_of(doc_partitions: list[dict], findings: list[dict], codes: dict | None = None) -> dict[tuple, dict]:
    """FIGURES per consumer-partition of a document in inspect's shape; a partition's codes are its findings', and
    those of its consumer's findings that apply to every partition (or `codes`, where the face lists them on the
    partition)."""
    found = codes_by_partition(findings, doc_partitions)
    return {
        where(p): {
            **{k: p[k] for k in FIGURES if k != "codes"},
            "codes": sorted(set(codes[where(p)])) if codes is not None else found.get(where(p), []),
        }
        for p in doc_partitions
    }


@pytest.fixture(scope="module")
def reference(state):
    """inspect's document of the state: the reference every face is compared with."""
    result = offctl(state, "inspect", *state.flags, "-o", "json", "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert not doc["incomplete"], doc["incomplete"]
    return SimpleNamespace(
        doc=doc,
        captured_ms=ms(doc["captured_at"]),
        rows=figures_of(doc["partitions"], doc["findings"]),
        consumers={consumer_of(c): c for c in doc["consumers"]},
        missing={where(f): f for f in doc["findings"] if f["code"] == "MISSING_PARTITION"},
    )


def at(row: dict, delta_ms: int) -> dict:
    """inspect's figures of a row as they read `delta_ms` after inspect's capture: each figure in seconds is
    `(T - captured) / 1000` rounded to the millisecond for a fixed T, so it is rebuilt exactly."""
    out = dict(row)
    for name, sign in TIMED.items():
        value = row[name]
        if value is None or (name == "time_lag_s" and row["time_lag_source"] == "caught-up"):
            continue  # caught up: 0 whenever it is read
        out[name] = round((round(value * 1000) + sign * delta_ms) / 1000, 3)
    return out


class Mismatch(NamedTuple):
    face: str
    label: str  # which of the face's answers (the MCP tool, the monitor's consumer)
    key: tuple
    figure: str
    shown: object
    expected: object

    def __str__(self) -> str:
        return f"{self.label} {self.key} {self.figure}: {self.face} shows {self.shown!r}, inspect {self.expected!r}"


def compare(
    face: str, shown: dict[tuple, dict], reference, captured_ms, render=lambda key, row: row, label: str = ""
) -> list[Mismatch]:
    """Where a figure `face` shows of a consumer-partition is not inspect's, at the face's capture time (captured_ms:
    one for the face, or a function of the partition), as the face writes it (`render`). Every figure of FIGURES
    but LEFT_OUT's must be shown, of every partition inspect has."""
    assert set(shown) == set(reference.rows), f"{face}: partitions {sorted(shown)} != {sorted(reference.rows)}"
    wanted = set(FIGURES) - LEFT_OUT[face]
    wrong = []
    for key, figures in shown.items():
        assert set(figures) == wanted, f"{face} {key}: shows {sorted(figures)}, expected {sorted(wanted)}"
        captured = captured_ms(key) if callable(captured_ms) else captured_ms
        expected = render(key, at(reference.rows[key], captured - reference.captured_ms))
        for name in sorted(wanted):
            if figures[name] != expected[name]:
                wrong.append(Mismatch(face, label, key, name, figures[name], expected[name]))
    return wrong


def assert_agrees(face: str, mismatches: list[Mismatch]) -> None:
    assert not mismatches, f"{face} disagrees with inspect:\n" + "\n".join(map(str, mismatches))


def compare_findings(face: str, findings: list[dict], reference) -> None:
    """A face's finding objects are inspect's: code, severity, where, and where MISSING_PARTITION resumes (the
    messages quote times, which move with the capture)."""

    def key(f: dict) -> tuple:
        return (f["code"], f["severity"], *where(f), f.get("resumes_at"), f.get("resumes"))

    assert sorted(map(key, findings), key=repr) == sorted(map(key, reference.doc["findings"]), key=repr), face


CONSUMER_FIGURES = (
    "status",
    "finding_codes",
    "total_lag",
    "max_lag",
    "max_time_lag_s",
    "min_retention_headroom_s",
    "catch_up_s",
    "catch_up",
    "commit_rate",
    "log_rate",
    "lost_to_retention",
    "broker_served",
)


def compare_consumers(face: str, consumers: list[dict], reference, captured_ms) -> None:
    """A face's consumer objects have inspect's figures (the time lag and headroom at the face's capture:
    `captured_ms`, one for the face or a function of the consumer)."""
    got = {consumer_of(c): {k: c[k] for k in CONSUMER_FIGURES} for c in consumers}
    expected = {}
    for k, c in reference.consumers.items():
        e = {name: c[name] for name in CONSUMER_FIGURES}
        delta = (captured_ms(k) if callable(captured_ms) else captured_ms) - reference.captured_ms
        rows = [at(r, delta) for key, r in reference.rows.items() if key[:3] == k]
        e["max_time_lag_s"] = max((r["time_lag_s"] for r in rows if r["time_lag_s"] is not None), default=None)
        e["min_retention_headroom_s"] = min(
            (r["retention_headroom_s"] for r in rows if r["retention_headroom_s"] is not None), default=None
        )
        expected[k] = e
    assert got == expected, face


def peeked(partitions: list[dict]) -> dict[tuple, dict]:
    """FIGURES of peek's partitions (peek's own `codes` list a partition's finding codes)."""
    return {
        where(p): {k: p[k] for k in FIGURES if k != "codes"} | {"codes": sorted(set(p["codes"]))} for p in partitions
    }


def test_the_state_makes_every_figure_a_real_one(reference, state):
    """What the faces are compared on: findings of every kind the figures bring, time lags from messages and caught
    up, headroom and expiry figures, and spout settings that move three resume offsets from their defaults'."""
    doc, rows = reference.doc, reference.rows
    codes = {f["code"] for f in doc["findings"]}
    assert {
        "HIGH_LAG",
        "RETENTION_RISK",
        "COMMIT_EXPIRY_RISK",
        "IGNORED_ZERO_OFFSET",
        "OFFSET_BELOW_LOG_START",
        "MISSING_PARTITION",
        "STALE_TOPOLOGY",
    } <= codes, codes
    # warnings and errors; no partition is "ok" since Kafka 4.4 refuses the legacy spout: its caught-up partition 1
    # carries only BROKER_INCOMPATIBLE's error, as every partition of it does
    assert {r["status"] for r in rows.values()} >= {"warning", "error"}
    assert {r["time_lag_source"] for r in rows.values()} >= {"message", "caught-up", None}
    assert sum(r["retention_headroom_s"] is not None for r in rows.values()) >= 3
    assert sum(r["commit_expiry_s"] is not None for r in rows.values()) >= 3
    assert {r["resumes"] for r in rows.values()} >= {"stored", "log-end", "log-start"}
    # one read has no history: caught up at lag 0, no history above it, nothing without a lag
    assert {(r["catch_up_s"], r["catch_up"]) for r in rows.values()} == {
        (0.0, "caught-up"),
        (None, "no-history"),
        (None, None),
    }
    legacy, group = ("zookeeper", SPOUT_ID, state.root, state.topic), ("kafka", state.group, None, state.topic)
    assert rows[(*legacy, 2)]["resumes"] == "log-end"  # 0.9.6: offset 0 ignored, the log end (1.2.4: the start)
    assert reference.missing[(*group, 3)]["resumes"] == "log-end"  # UNCOMMITTED_LATEST (default: the log start)
    assert reference.missing[(*legacy, 3)]["resumes"] == "log-end"  # 0.9.6 without forceFromStart
    assert rows[(*group, CRASHING)]["resumes"] == "crashes" and "CRASHING_COMMIT" in codes
    # what retention took: partition 4 at 1 with its log from 3, for both; a stored 0 0.9.6 ignores counts nothing
    assert rows[(*legacy, 4)]["lost_to_retention"] == rows[(*group, 4)]["lost_to_retention"] == 2
    assert rows[(*legacy, 2)]["lost_to_retention"] is None and rows[(*group, 0)]["lost_to_retention"] == 0
    assert doc["summary"]["lost_to_retention"] == {state.topic: 5}  # and 1 of T/jstorm's, which fetches 2 (below)
    # which brokers serve which spout: Kafka 4.4 refuses storm-kafka's SimpleConsumer (ListOffsets v0, Fetch v0),
    # serves the group's kafka-clients 4.x: a verdict of each kind, and the refused spout's partitions all marked
    consumers = reference.consumers
    assert consumers[legacy[:3]]["broker_served"] is False and consumers[group[:3]]["broker_served"] is True
    assert "BROKER_INCOMPATIBLE" in codes
    assert all("BROKER_INCOMPATIBLE" in r["codes"] for key, r in rows.items() if key[:3] == legacy[:3])
    assert rows[(*legacy, 1)]["codes"] == ["BROKER_INCOMPATIBLE"] and rows[(*legacy, 1)]["status"] == "error"
    # JStorm's spouts: where each fetches first, by its own reading (offctl.core.storm.jstorm), and its findings
    js, shared = (("jstorm", jstorm.consumer_id(state.topic, c), state.jroot, state.topic) for c in JSTORM_SPOUTS)
    assert [(rows[(*js, p)]["resumes"], rows[(*js, p)]["resumes_at"], rows[(*js, p)]["lag"]) for p in (0, 1, 2, 4)] == [
        ("stored+1", 2, 4),
        ("stored+1", 6, 0),
        ("waits-until-log-end-reaches", 10, None),
        ("fetch-fails", None, None),
    ]
    assert rows[(*js, 4)]["lost_to_retention"] == 1  # it fetches 2, the log starts at 3
    assert reference.missing[(*js, 3)]["resumes"] == "log-end" and reference.missing[(*js, 3)]["resumes_at"] == 7
    assert {"OFFSET_ABOVE_LOG_END", "OFFSET_BELOW_LOG_START", "HIGH_LAG"} <= {
        c for p in JSTORM_AT for c in rows[(*js, p)]["codes"]
    }
    found = {f["code"] for f in doc["findings"] if f["consumer"] == shared[1]}
    assert {"ID_COLLISION", "TOPIC_MISMATCH", "MALFORMED_RECORD", "MISSING_PARTITION"} <= found


# --- offctl peek -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def peek_face(state, reference):
    result = offctl(
        state,
        "peek",
        *state.flags,
        "--partitions",
        ",".join(map(str, range(PARTITIONS))),
        "--budget",
        "30",
        "-o",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    return SimpleNamespace(
        doc=doc, mismatches=compare("offctl peek", peeked(doc["partitions"]), reference, ms(doc["captured_at"]))
    )


def test_peek_shows_inspects_figures(peek_face):
    assert_agrees("offctl peek", peek_face.mismatches)
    # the message peek shows at the resume offset is the one the time lag is read from
    for p in peek_face.doc["partitions"]:
        if p["offset"] == p["resumes_at"] and p["state"] == "message" and p["time_lag_source"] == "message":
            assert p["messages"][0]["age_ms"] == round(p["time_lag_s"] * 1000), where(p)


# --- offctl watch ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def watch_face(state, reference):
    """One refresh of `offctl watch`, its table read cell by cell (the table it prints, caught on its way out)."""
    from offctl.render import watch

    drawn = []
    table_of = watch.watch_table

    def spy(report, *rest):
        table = table_of(report, *rest)
        drawn.append((report.captured_ms, table))
        return table

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(watch, "watch_table", spy)
        result = offctl(state, "watch", *state.flags, "--count", "1", "--interval", "60")
    assert result.exit_code == 0, result.stderr
    assert len(drawn) == 1, "watch drew no table"
    captured_ms, table = drawn[0]
    cells = {c.header: [str(x) for x in c._cells] for c in table.columns}
    labels = {str(ConsumerKey(*k)): k for k in reference.consumers}
    shown = {}
    for i, label in enumerate(cells["Consumer"]):
        key = (*labels[label], cells["Topic"][i], int(cells["Partition"][i]))
        # the codes, then what retention took where it took something: `OFFSET_BELOW_LOG_START (lost 2)`
        findings, lost = re.fullmatch(r"(.*?)(?: \((lost [\d,]+)\))?", cells["Findings"][i]).groups()
        shown[key] = {
            "codes": sorted(set(findings.split(", "))) if findings else [],
            "lost_to_retention": lost or "",
            "lag": cells["Lag"][i],
            "time_lag_s": cells["Time lag"][i],
            "time_lag_source": cells["Time lag"][i],
            "retention_headroom_s": cells["Retention"][i],
            "retention_source": cells["Retention"][i],
            "commit_expiry_s": cells["Expiry"][i],
            "commit_expiry_source": cells["Expiry"][i],
        }
        assert cells["Time lag"][i] in result.stdout and cells["Expiry"][i] in result.stdout

    def rendered(_, row: dict) -> dict:  # inspect's figures as watch's cells write them
        lag = time_lag_text(TimeLag(row["time_lag_s"], row["time_lag_source"]))
        room = headroom_text(Headroom(row["retention_headroom_s"], row["retention_source"]))
        expiry = expiry_text(
            Expiry(row["commit_expiry_s"], row["commit_expiry_source"]) if row["commit_expiry_source"] else None
        )
        return {
            "codes": row["codes"],
            "lag": "-" if row["lag"] is None else f"{row['lag']:,}",
            "time_lag_s": lag,
            "time_lag_source": lag,
            "retention_headroom_s": room,
            "retention_source": room,
            "commit_expiry_s": expiry,
            "commit_expiry_source": expiry,
            "lost_to_retention": lost_text(row["lost_to_retention"]),
        }

    return SimpleNamespace(
        mismatches=compare("offctl watch", shown, reference, captured_ms, rendered), stdout=result.stdout
    )


def test_watch_shows_inspects_figures(watch_face, reference):
    assert_agrees("offctl watch", watch_face.mismatches)
    # the catch-up, a line per consumer under the table: inspect's consumer's, in words
    from offctl.core.records.model import CatchUp
    from offctl.render.formats import catch_up_text

    for k, c in reference.consumers.items():
        said = catch_up_text(CatchUp(c["catch_up_s"], c["catch_up"], c["commit_rate"], c["log_rate"]))
        assert f"  {ConsumerKey(*k)}: {said}" in watch_face.stdout, (k, said)


# --- offctl serve ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(state):
    """`offctl serve` as a process on a free port, its first cycle's /metrics and /status.json (the interval is
    long: one cycle, whose time-lag budget is the one given)."""
    port = servers.free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "offctl", "serve", *state.flags, "--listen", f"127.0.0.1:{port}", "--interval", "600"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=process_env(state),
        cwd=REPO,
    )
    try:
        status = until(lambda: _get(port, "/status.json"), proc)
        metrics = until(lambda: (m := _get(port, "/metrics")) and "offctl_partition_lag{" in m and m, proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 0, err
    return SimpleNamespace(status=json.loads(status), metrics=metrics)


def _get(port: int, path: str) -> str | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.read().decode()
    except (urllib.error.URLError, OSError):
        return None  # not listening yet, or 503 before the first cycle


def until(check, proc: subprocess.Popen, timeout_s: float = 120.0):
    """Poll `check` until it gives something, while `proc` runs, within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while (value := check()) is None or value is False:
        assert proc.poll() is None, f"offctl serve ended: {proc.communicate()[1]}"
        assert time.monotonic() < deadline, "offctl serve answered nothing in time"
        time.sleep(0.2)
    return value


SAMPLE = re.compile(r"^(\w+)\{(.*)\} (\S+) (\d+)$")
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def samples(text: str) -> dict[str, list[tuple[dict, float, int]]]:
    """The page's samples with labels and timestamps, by family: (labels, value, timestamp in ms)."""
    out: dict[str, list] = defaultdict(list)
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            out[m.group(1)].append((dict(LABEL.findall(m.group(2))), float(m.group(3)), int(m.group(4))))
    return out


def test_serve_status_json_is_inspects_document(served, reference):
    doc = served.status
    captured = ms(doc["captured_at"])
    assert_agrees(
        "offctl serve /status.json",
        compare("offctl serve /status.json", figures_of(doc["partitions"], doc["findings"]), reference, captured),
    )
    compare_findings("offctl serve /status.json", doc["findings"], reference)
    compare_consumers("offctl serve /status.json", doc["consumers"], reference, captured)


METRIC_FAMILIES = {
    "lag": "offctl_partition_lag",
    "time_lag_s": "offctl_partition_time_lag_seconds",
    "time_lag_source": "offctl_partition_time_lag_source",
    "retention_headroom_s": "offctl_partition_retention_headroom_seconds",
    "commit_expiry_s": "offctl_partition_commit_expiry_seconds",
    "catch_up_s": "offctl_partition_catch_up_seconds",
    "commit_rate": "offctl_partition_commit_rate",
    "log_rate": "offctl_partition_log_rate",
    "lost_to_retention": "offctl_partition_lost_to_retention",
}
CONSUMER_FAMILIES = {
    "total_lag": "offctl_consumer_lag_total",
    "max_lag": "offctl_consumer_lag_max",
    "max_time_lag_s": "offctl_consumer_time_lag_max_seconds",
    "min_retention_headroom_s": "offctl_consumer_retention_headroom_min_seconds",
    "catch_up_s": "offctl_consumer_catch_up_seconds",
    "commit_rate": "offctl_consumer_commit_rate",
    "log_rate": "offctl_consumer_log_rate",
    "lost_to_retention": "offctl_consumer_lost_to_retention_total",
    "broker_served": "offctl_consumer_broker_served",
}


def catch_up_sample(figures: dict) -> float | None:
    """A catch-up as its gauge's value: +Inf where not catching up, else the seconds (none: no sample)."""
    return float("inf") if figures["catch_up"] == "not-catching-up" else figures["catch_up_s"]


def test_serve_metrics_show_inspects_figures(served, reference):
    page = samples(served.metrics)
    (captured,) = {t for family in page.values() for _, _, t in family}  # every sample of a cycle: its capture
    assert captured == ms(served.status["captured_at"])
    shown: dict[tuple, dict] = {k: dict.fromkeys(METRIC_FAMILIES) for k in reference.rows}  # no sample: None
    for figure, family in METRIC_FAMILIES.items():
        for labels, value, _ in page[family]:
            key = (
                labels["store"],
                labels["consumer"],
                labels["zk_root"] or None,
                labels["topic"],
                int(labels["partition"]),
            )
            shown.setdefault(key, dict.fromkeys(METRIC_FAMILIES))[figure] = value

    def rendered(_, row: dict) -> dict:  # a figure as a sample's value; none: no sample
        values = {figure: row[figure] for figure in METRIC_FAMILIES}
        values["time_lag_source"] = SOURCE_CODES.get(row["time_lag_source"])
        values["catch_up_s"] = catch_up_sample(row)
        return {k: None if v is None else float(v) for k, v in values.items()}

    assert_agrees("offctl serve /metrics", compare("offctl serve /metrics", shown, reference, captured, rendered))
    # per consumer: the lags, the largest time lag, the smallest headroom, the findings by code and severity (the
    # consumer's status is the worst severity there)
    findings: dict[tuple, dict] = defaultdict(dict)
    for labels, value, _ in page["offctl_consumer_findings"]:
        findings[(labels["store"], labels["consumer"], labels["zk_root"] or None)][
            (labels["code"], labels["severity"])
        ] = value
    expected_findings: dict[tuple, dict] = defaultdict(lambda: defaultdict(float))
    for f in reference.doc["findings"]:
        expected_findings[consumer_of(f)][(f["code"], f["severity"])] += 1
    assert findings == {k: dict(v) for k, v in expected_findings.items()}
    got: dict[tuple, dict] = defaultdict(dict)
    for figure, family in CONSUMER_FAMILIES.items():
        for labels, value, _ in page[family]:
            got[(labels["store"], labels["consumer"], labels["zk_root"] or None)][figure] = value
    for k, c in reference.consumers.items():
        rows = [at(r, captured - reference.captured_ms) for key, r in reference.rows.items() if key[:3] == k]
        times = [r["time_lag_s"] for r in rows if r["time_lag_s"] is not None]
        rooms = [r["retention_headroom_s"] for r in rows if r["retention_headroom_s"] is not None]
        expected = {
            "total_lag": c["total_lag"],
            "max_lag": c["max_lag"],
            "max_time_lag_s": max(times, default=None),
            "min_retention_headroom_s": min(rooms, default=None),
            "catch_up_s": catch_up_sample(c),
            "commit_rate": c["commit_rate"],
            "log_rate": c["log_rate"],
            "lost_to_retention": c["lost_to_retention"],
            "broker_served": None if c["broker_served"] is None else float(c["broker_served"]),
        }
        assert got[k] == {name: v for name, v in expected.items() if v is not None}, k


# --- the audit's task --------------------------------------------------------------------------------------------


class _Resolved(Exception):
    """Raised in place of the Spark job, with what `offctl audit` resolved from its command line."""

    def __init__(self, conn, settings) -> None:
        super().__init__("resolved")
        self.conn, self.settings = conn, settings


@pytest.fixture(scope="module")
def audit_face(state, reference):
    """`offctl audit` resolves its options; then what each Spark task runs (the driver's listing and chunks,
    audit_chunk, chunk_outputs: offctl/faces/audit/job.py _live_source) runs here on those settings, without Spark."""
    from offctl.faces.audit import job
    from offctl.faces.audit.tasks import audit_chunk, chunk_outputs, plan_chunks
    from offctl.pipeline.read import jstorm_list, trident_list

    def resolved(settings, **_):
        raise _Resolved(settings.reading.conn, settings)

    with pytest.MonkeyPatch.context() as patch, pytest.raises(_Resolved) as got:
        patch.setattr(job, "audit", resolved)
        offctl(state, "audit", *state.flags, "-o", "json")
    conn, settings = got.value.conn, got.value.settings
    selection = settings.reading.selection
    spouts, listed, _ = job._list_consumers(conn, selection)
    chunks = plan_chunks(
        spouts,
        list(selection.groups),
        2,
        listed,
        trident_roots=trident_list(conn, selection),
        jstorm_roots=jstorm_list(conn, selection),
    )
    assert [c.jstorm_root for c in chunks if c.jstorm_root] == [state.jroot]  # a chunk of its own
    outputs = [chunk_outputs(audit_chunk(settings.reading, c, int(time.time() * 1000))[1]) for c in chunks]
    rows = [r for _, chunk_rows, _, _ in outputs for r in chunk_rows]
    captured = {where(r): r["captured_ms"] for r in rows}  # each task reads at its own moment
    shown = figures_of(rows, [], codes={where(r): r["findings"] for r in rows})
    return SimpleNamespace(
        outputs=outputs, rows=rows, mismatches=compare("offctl audit", shown, reference, captured.__getitem__)
    )


def test_the_audit_task_shows_inspects_figures(audit_face, reference):
    from offctl.core.results.audit import Tally

    assert_agrees("offctl audit", audit_face.mismatches)
    outputs, rows = audit_face.outputs, audit_face.rows
    compare_findings("offctl audit", [f for _, _, found, _ in outputs for f in found], reference)
    by_consumer = {where(r)[:3]: r["captured_ms"] for r in rows}
    compare_consumers(
        "offctl audit", [c for _, _, _, consumers in outputs for c in consumers], reference, by_consumer.__getitem__
    )
    # the summary's extremes, the soonest commit expiry among them: the partitions' figures at their captures
    summary = sum((tally for tally, _, _, _ in outputs), Tally()).summary()
    moved = [at(reference.rows[where(r)], r["captured_ms"] - reference.captured_ms) for r in rows]
    for name, pick, figure in (
        ("max_time_lag_s", max, "time_lag_s"),
        ("min_retention_headroom_s", min, "retention_headroom_s"),
        ("min_commit_expiry_s", min, "commit_expiry_s"),
    ):
        assert summary[name] == pick(r[figure] for r in moved if r[figure] is not None), name
    # what retention took, per topic: inspect's summary's, summed over the chunks
    assert summary["lost_to_retention"] == reference.doc["summary"]["lost_to_retention"]


# --- offctl mcp --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_face(state, reference, tmp_path_factory):
    """`offctl mcp` over stdio, driven by the SDK's client: fleet (the consumers), and for each consumer the
    consumer tool (its partitions and findings) and the peek tool (its partitions)."""
    import anyio

    answers = anyio.run(_mcp_answers, state, tmp_path_factory.mktemp("mcp"))
    mismatches = []
    for tool in ("consumer", "peek"):
        shown, captured = {}, {}
        for store, name in mcp_consumers(state):
            answer = answers[tool, store, name]
            assert answer["next_offset"] is None  # one page holds them all
            shown.update(
                figures_of(answer["partitions"], answer["findings"])
                if tool == "consumer"
                else peeked(answer["partitions"])
            )
            captured.update({where(p): ms(answer["captured_at"]) for p in answer["partitions"]})
        mismatches += compare("offctl mcp", shown, reference, captured.__getitem__, label=tool)
    return SimpleNamespace(answers=answers, mismatches=mismatches, state=state)


def mcp_consumers(state) -> list[tuple[str, str]]:
    """Each consumer of the state as the MCP tools name it: (store, consumer)."""
    return [
        ("zookeeper", SPOUT_ID),
        ("kafka", state.group),
        *(("jstorm", jstorm.consumer_id(state.topic, c)) for c in JSTORM_SPOUTS),
    ]


async def _mcp_answers(state, where_to_log: Path) -> dict:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "offctl", "mcp", *state.flags], env=process_env(state), cwd=str(REPO)
    )
    answers = {}
    with open(where_to_log / "mcp.stderr", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=HANG_GUARD_S) as s:
                await s.initialize()

                async def call(name: str, **args) -> dict:
                    result = await s.call_tool(name, args)
                    assert not result.is_error, (name, args, result.content)
                    return result.structured_content

                # the fleet reads every Storm group on the broker, the other tests' too: every page of it
                pages = [await call("fleet", limit=100)]
                while pages[-1]["next_offset"] is not None:
                    pages.append(await call("fleet", limit=100, offset=pages[-1]["next_offset"]))
                answers["fleet"] = [(ms(page["captured_at"]), c) for page in pages for c in page["consumers"]]
                everything = list(range(PARTITIONS))
                for store, name in mcp_consumers(state):
                    answers["consumer", store, name] = await call("consumer", consumer=name, store=store, limit=100)
                    answers["peek", store, name] = await call(
                        "peek", consumer=name, store=store, partitions=everything, limit=100
                    )
                # a JStorm spout named without its store: read in every store of the context, JStorm's among them
                js = jstorm.consumer_id(state.topic, JSTORM_SPOUTS[0])
                answers["consumer", None, js] = await call("consumer", consumer=js, limit=100)
    return answers


def test_the_mcp_tools_show_inspects_figures(mcp_face, reference):
    assert_agrees("offctl mcp", mcp_face.mismatches)
    answers = mcp_face.answers
    mine = {consumer_of(c): (captured, c) for captured, c in answers["fleet"] if consumer_of(c) in reference.consumers}
    compare_consumers("offctl mcp", [c for _, c in mine.values()], reference, lambda k: mine[k][0])
    compare_findings(
        "offctl mcp",
        [f for store, name in mcp_consumers(mcp_face.state) for f in answers["consumer", store, name]["findings"]],
        reference,
    )
    js = jstorm.consumer_id(mcp_face.state.topic, JSTORM_SPOUTS[0])
    unnamed, named = answers["consumer", None, js], answers["consumer", "jstorm", js]
    assert {where(p) for p in unnamed["partitions"]} == {where(p) for p in named["partitions"]}
    assert sorted(f["code"] for f in unnamed["findings"]) == sorted(f["code"] for f in named["findings"])


# --- storm-kafka-monitor -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def monitor_face(state, reference):
    """Storm UI's lag script for each consumer, as Storm UI runs it for a new spout (-t -g -b) and for an old one on
    StaticHosts (-o -t -n -z -p -l), and as a script asks it for a JStorm spout (an old spout whose -n is the spout's
    folder under --jstorm-root: docs/storm-ui-lag.md): every partition asked about, the one without a record where
    it starts. Its time lag is compared apart: it says no capture time, so it is held within inspect's figure at the
    moments before and after the run."""
    legacy = ("zookeeper", SPOUT_ID, state.root, state.topic)
    group = ("kafka", state.group, None, state.topic)
    partitions = ",".join(map(str, range(PARTITIONS)))

    def static_hosts(node: str) -> tuple[str, ...]:
        """KOLU's arguments for an old spout on StaticHosts whose offsets are under `node`: every partition, with
        the brokers of the context (--bootstrap-servers) for the log offsets."""
        leaders = ",".join([state.bootstrap] * PARTITIONS) + ","
        kolu = ("-o", "-t", state.topic, "-n", node, "-z", state.zk + ",", "-p", partitions + ",", "-l", leaders)
        return ("--bootstrap-servers", state.bootstrap, "--", *kolu)

    asked = {
        legacy: static_hosts(f"{state.root}/{SPOUT_ID}"),
        group: ("--", "-t", state.topic, "-g", state.group, "-b", state.bootstrap),
    }
    for client in JSTORM_SPOUTS:
        consumer = jstorm.consumer_id(state.topic, client)
        node = f"{jstorm.spouts_path(state.jroot)}/{consumer}"
        asked[("jstorm", consumer, state.jroot, state.topic)] = ("--jstorm-root", state.jroot, *static_hosts(node))
    shown, missing, timed = {}, {}, {}
    for consumer, args in asked.items():
        before = int(time.time() * 1000)
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "offctl",
                "storm-kafka-monitor",
                "--deadline",
                "60s",
                "--zk",
                state.zk,
                "--storm-root",
                state.storm,
                *SPOUT_SETTINGS,
                *MONITOR_HORIZONS,
                *args,
            ],
            capture_output=True,
            text=True,
            env=process_env(state),
            cwd=REPO,
            timeout=HANG_GUARD_S,
        )
        after = int(time.time() * 1000)
        assert result.returncode == 0, result.stdout + result.stderr
        doc = json.loads(result.stdout)
        assert list(doc) == [state.topic], result.stdout
        for p, entry in doc[state.topic].items():
            key = (*consumer, int(p))
            figures = {
                "codes": sorted(set(entry["findings"])),
                "lag": entry["lag"],
                "resumes_at": entry["resumeOffset"],
                "resumes": entry["resumes"],
                "catch_up_s": entry["catchUpSeconds"],
                "catch_up": entry["catchUp"],
                "commit_rate": entry["commitRate"],
                "log_rate": entry["logRate"],
                "lost_to_retention": entry["lostToRetention"],
            }
            if key in reference.missing:
                missing[key] = {**figures, "time_lag_s": entry["timeLagSeconds"]}
            else:
                shown[key] = {**figures, "time_lag_s": "held apart"}
                timed[key] = (entry["timeLagSeconds"], before, after)
    log_ends = {where(p): p["log_end"] for p in reference.doc["partitions"]}
    stored = {where(p): p["committed"] for p in reference.doc["partitions"]}

    def rendered(key: tuple, row: dict) -> dict:
        # Storm UI needs a number: where inspect has no lag (an offset outside the log), the lag counts from where
        # the spout goes instead, resumes_at; where it goes nowhere (every fetch fails), from the stored offset
        # (docs/storm-ui-lag.md, "What the page shows" and "Where offctl's lag differs")
        lag = row["lag"]
        if lag is None and row["resumes_at"] is not None:
            lag = log_ends[key] - row["resumes_at"]
        elif lag is None and row["resumes"] in ("fetch-fails", "crashes"):
            lag = log_ends[key] - stored[key]
        return {**row, "lag": lag, "time_lag_s": "held apart"}

    mismatches = []
    for consumer in asked:
        mine = {k: v for k, v in shown.items() if k[:4] == consumer}
        mismatches += compare(
            "storm-kafka-monitor",
            mine,
            SimpleNamespace(
                **{**vars(reference), "rows": {k: r for k, r in reference.rows.items() if k[:4] == consumer}}
            ),
            reference.captured_ms,
            rendered,
            label=consumer[0],
        )
    return SimpleNamespace(mismatches=mismatches, missing=missing, timed=timed)


def test_storm_kafka_monitor_shows_inspects_figures(monitor_face, reference):
    assert_agrees("storm-kafka-monitor", monitor_face.mismatches)
    # the time lag: inspect's, at a moment between the start and the end of the run
    for key, (seconds, before, after) in monitor_face.timed.items():
        low, high = (at(reference.rows[key], t - reference.captured_ms)["time_lag_s"] for t in (before, after))
        assert seconds == low if low is None or low == high else low <= seconds <= high, (key, seconds, low, high)
    # a partition without a record: where the spout starts, as inspect's MISSING_PARTITION says, the lag from there
    assert set(monitor_face.missing) == set(reference.missing)
    log_ends = {where(p)[:4]: p["log_end"] for p in reference.doc["partitions"]}
    codes = codes_by_partition(reference.doc["findings"], [*reference.doc["partitions"], *reference.missing.values()])
    for key, figures in monitor_face.missing.items():
        f = reference.missing[key]
        assert figures == {
            "codes": codes[key],
            # from where the spout starts; JStorm's start at the log end + 1 counts from the log end, as inspect counts
            "lag": log_ends[key[:4]] - min(f["resumes_at"], log_ends[key[:4]]),
            "time_lag_s": None,
            "resumes_at": f["resumes_at"],
            "resumes": f["resumes"],
            **dict.fromkeys(("catch_up_s", "catch_up", "commit_rate", "log_rate")),  # no row: no lag of inspect's
            "lost_to_retention": None,  # no record: nothing stored to count from
        }, key


# --- what is left out ------------------------------------------------------------------------------------------


def contract_faces() -> dict[str, frozenset[str]]:
    """docs/contract.md's table in "What each face shows": face -> the figures it names as left out."""
    text = (REPO / "docs" / "contract.md").read_text()
    assert CONTRACT_SECTION in text, f"docs/contract.md has no section {CONTRACT_SECTION!r}"
    section = text.split(CONTRACT_SECTION, 1)[1].split("\n## ", 1)[0]
    faces = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        faces[re.findall(r"`([^`]+)`", cells[0])[0]] = frozenset(re.findall(r"`([^`]+)`", cells[1]))
    return faces


def test_the_contract_names_what_each_face_leaves_out():
    """LEFT_OUT and docs/contract.md's table cannot drift: the same faces, each leaving out the same figures."""
    assert contract_faces() == LEFT_OUT
    assert all(figures <= set(FIGURES) for figures in LEFT_OUT.values())
