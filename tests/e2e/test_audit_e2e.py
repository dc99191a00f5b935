"""offctl audit end to end: Spark local mode against the real ZooKeeper and broker of the fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from offctl.core.records.findings import CATALOGUE
from offctl.faces.audit.job import FILES
from tests.conftest import storm_record
from tests.e2e import seeds

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

HISTORY_KEYS = ("findings", "history_status")  # the audit's own keys on a partition
# Figures in seconds that move with the capture time (the audit reads after inspect): compared by figures_agree; their
# sources are compared exactly with the rest of the row.
TIMED = ("time_lag_s", "retention_headroom_s", "commit_expiry_s", "max_time_lag_s", "min_retention_headroom_s")
# What a read with no servers (--from-snapshots) cannot have: the messages are not read.
ESTIMATES = (
    "time_lag_s",
    "time_lag_source",
    "retention_headroom_s",
    "retention_source",
    "commit_expiry_s",
    "commit_expiry_source",
    "max_time_lag_s",
    "min_retention_headroom_s",
)
# Findings only a read of messages gives (the timestamps commit expiry and retention are estimated from).
FROM_MESSAGES = ("COMMIT_EXPIRY_RISK", "RETENTION_RISK", "RETENTION_EXCEEDED")


def _fleet(zk, zk_server, kafka, names):
    """A small fleet with healthy spouts and problems: (connection flags, what was seeded)."""
    t1, t2 = kafka.filled_topic(names("t1"), 3, 10), kafka.filled_topic(names("t2"), 2, 4)
    root, running = names.root + "/spouts", "etl-1-1763700000"
    storm = seeds.storm_root(zk, names.root + "/storm", running)
    seeds.spout(zk, root, "healthy", t1, {0: 10, 1: 10, 2: 10}, topology_id=running)
    # out of range on 0 (above the log end), lagging on 1, partition 2 missing; its topology is stopped
    seeds.spout(zk, root, "broken", t1, {0: 50, 1: 3}, topology_id="old-1-1700000000")
    zk.create(f"{root}/mixed/partition_0", b"{not json", makepath=True)
    seeds.spout(zk, root, "mixed", t2, {1: 2}, topology_id=running)
    group = names("group")
    kafka.commit(group, t2, {0: 1, 1: 4})  # no Storm metadata: FOREIGN_COMMIT
    flags = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        kafka.bootstrap,
        "--storm-root",
        storm,
        "--group",
        group,
    ]
    return flags, {"root": root, "t1": t1, "t2": t2, "group": group, "storm": storm}


fleet, fleet39 = seeds.on_each_broker("fleet", _fleet)


def _sorted(rows, drop=()):
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True) for r in rows)


def sees_what_inspect_sees(i: dict, a: dict) -> None:
    """The audit's document `a` has inspect's `i` per partition and consumer: every key and finding, the time lag,
    retention headroom and commit expiry with their sources; the figures in seconds agree but for the time between
    the two reads (a time lag grows with it, a headroom shrinks)."""
    assert _sorted(a["findings"]) == _sorted(i["findings"])
    assert _sorted(a["partitions"], HISTORY_KEYS + TIMED) == _sorted(i["partitions"], TIMED)
    assert _sorted(a["consumers"], TIMED) == _sorted(i["consumers"], TIMED)
    assert figures_agree(i["partitions"], a["partitions"], ("topic", "partition"))
    assert figures_agree(i["consumers"], a["consumers"], ())


def expiring_a(doc: dict) -> list[dict]:
    return [p for p in doc["partitions"] if p["commit_expiry_s"] is not None]


def figures_agree(inspected: list[dict], audited: list[dict], where: tuple[str, ...]) -> bool:
    def key(d):
        return (d["store"], d["consumer"], d["zk_root"], *(d[k] for k in where))

    by_key = {key(d): d for d in audited}
    for d in inspected:
        other = by_key[key(d)]
        for name in TIMED:
            if name not in d:
                continue
            x, y = d[name], other[name]
            # both none, or both a figure: the reads are seconds apart, and a figure's source is the same
            if (x is None) != (y is None) or (x is not None and abs(x - y) > 120):
                raise AssertionError(f"{key(d)} {name}: inspect {x}, audit {y}")
    return True


def test_findings_identical_to_inspect(cli, spark, fleet):
    flags, _ = fleet
    inspected = cli("inspect", *flags, "--lag-threshold", "5", "-o", "json")
    audited = cli("audit", *flags, "--lag-threshold", "5", "-o", "json")
    assert inspected.exit_code == audited.exit_code == 1, audited.stderr
    i, a = inspected.json(), audited.json()
    sees_what_inspect_sees(i, a)
    assert {k: a["summary"][k] for k in i["summary"]} == i["summary"]
    # one document shape (docs/contract.md): inspect's keys, each code's hint once, plus the audit's own keys
    assert set(a) == set(i) | {"topics", "topologies", "read_by", "driver"}
    assert a["offsets_retention"] == i["offsets_retention"] and a["offsets_retention"]["minutes"]
    # the group's commit expiry is estimated in both, from the same message: the one before each commit
    expiring = [p for p in i["partitions"] if p["commit_expiry_source"] is not None]
    assert expiring and all(p["store"] == "kafka" and p["commit_expiry_source"] == "message" for p in expiring)
    # every lagging partition is timed from the message it resumes at, read from the broker by each audit task
    lagging = {(p["consumer"], p["partition"]): p["time_lag_source"] for p in a["partitions"] if p["lag"]}
    assert lagging and set(lagging.values()) == {"message"}
    # the summary says the fleet's extremes, the JSON one and the one for people
    assert a["summary"]["max_time_lag_s"] == max(
        p["time_lag_s"] for p in a["partitions"] if p["time_lag_s"] is not None
    )
    assert a["summary"]["min_commit_expiry_s"] == min(p["commit_expiry_s"] for p in expiring_a(a))
    assert "largest time lag" in audited.stderr and "soonest commit expiry" in audited.stderr
    codes = {f["code"] for f in a["findings"]}
    assert a["document_version"] == i["document_version"] == 2 and a["hints"] == i["hints"] and set(a["hints"]) == codes
    assert not any("hint" in f for f in a["findings"])
    assert a["processing_guarantee"] == i["processing_guarantee"] and a["processing_guarantee"]["guarantee"]
    assert {
        "OFFSET_ABOVE_LOG_END",
        "MALFORMED_RECORD",
        "MISSING_PARTITION",
        "FOREIGN_COMMIT",
        "HIGH_LAG",
        "STALE_TOPOLOGY",
    } <= codes
    # lag totals per topic and topology, over every consumer
    t1 = next(t for t in a["topics"] if t["topic"] == fleet[1]["t1"])
    assert t1["total_lag"] == 7 and t1["partitions"] == 5 and t1["consumers"] == 2
    # the summary on stderr names the worst consumers and the counts by code
    assert "Worst consumers" in audited.stderr and "OFFSET_ABOVE_LOG_END" in audited.stderr


def test_the_audit_reads_after_the_analysis_with_the_options_inspect_takes(cli, spark, fleet):
    """Issue 28: the time lag, retention and commit-expiry options reach every audit task as they reach inspect:
    a zero time-lag budget reads no message (source `unread`); a commit-expiry horizon past the group's
    offsets.retention.minutes warns of every commit that can expire (COMMIT_EXPIRY_RISK), which the default
    horizon does not."""
    flags, _ = fleet
    codes = lambda doc: {f["code"] for f in doc["findings"]}  # noqa: E731
    default = cli("audit", *flags, "-o", "json").json()
    assert {p["time_lag_source"] for p in default["partitions"] if p["lag"]} != {"unread"}
    for options in (["--time-lag-budget", "0s", "--retention-horizon", "1s"], ["--commit-expiry-horizon", "3650d"]):
        inspected = cli("inspect", *flags, *options, "-o", "json")
        audited = cli("audit", *flags, *options, "-o", "json")
        assert inspected.exit_code == audited.exit_code == 1, audited.stderr
        i, a = inspected.json(), audited.json()
        sees_what_inspect_sees(i, a)
        if options[0] == "--time-lag-budget":
            lagging = [p for p in a["partitions"] if p["lag"]]
            assert lagging and {p["time_lag_source"] for p in lagging} == {"unread"}
        else:
            assert "COMMIT_EXPIRY_RISK" in codes(a) - codes(default)


def test_a_wildcard_record_naming_another_topic_reads_as_in_inspect(cli, spark, zk, zk_server, kafka39, names):
    """Issue 22: the audit's tasks read a spout id and its topic folders together, with inspect's parser and
    rules: <id>/orders/partition_0 naming clicks is orders/0's offset (PartitionManager.java, v1.2.4)."""
    orders, clicks = kafka39.filled_topic(names("orders"), 2, 3), kafka39.filled_topic(names("clicks"), 2, 0)
    base = f"{names.root}/{names('wild')}"
    zk.create(f"{base}/{orders}/partition_0", storm_record(clicks, 0, 1), makepath=True)
    zk.create(f"{base}/{clicks}/partition_0", storm_record(clicks, 0, 1), makepath=True)
    flags = ["--zk", zk_server.address, "--zk-root", names.root, "--bootstrap-servers", kafka39.bootstrap, "-o", "json"]
    inspected, audited = cli("inspect", *flags).json(), cli("audit", *flags).json()
    sees_what_inspect_sees(inspected, audited)
    assert [c["consumer"] for c in audited["consumers"]] == [names("wild")]
    assert ("TOPIC_MISMATCH", orders, 0) in {(f["code"], f["topic"], f["partition"]) for f in audited["findings"]}


def test_all_groups_missing_consumers_and_release_rules_match_inspect(cli, spark, fleet, names, tmp_path):
    """The audit's tasks apply inspect's read path: --all-groups (listed on the driver, read in tasks), a
    named group that does not exist (CONSUMER_NOT_FOUND) and release-specific rules give the same report."""
    flags, seeded = fleet
    extra = ["--all-groups", "--group", names("typo"), "--storm-kafka-release", "0.9.6", "--max-offset-behind", "2"]
    inspected = cli("inspect", *flags, *extra, "-o", "json")
    audited = cli("audit", *flags, *extra, "-o", "json", "--save-snapshot", str(tmp_path / "snaps"))
    assert inspected.exit_code == audited.exit_code == 1, audited.stderr
    i, a = inspected.json(), audited.json()
    sees_what_inspect_sees(i, a)
    # the snapshot keeps the consumers that were named and not found. --all-groups takes every group of the shared
    # broker whose commits carry Storm metadata, other tests' too, and a commit of one may be older than
    # offsets.retention.minutes by its message: what needs a message read is the live audit's only
    offline = cli("audit", "--from-snapshots", str(tmp_path / "snaps"), *extra[-4:], "-o", "json")
    assert _sorted(offline.json()["findings"]) == _sorted(f for f in a["findings"] if f["code"] not in FROM_MESSAGES), (
        offline.stderr
    )
    codes = {f["code"] for f in a["findings"]}
    assert {"CONSUMER_NOT_FOUND", "LAG_BEYOND_MAX_OFFSET_BEHIND"} <= codes
    assert a["spout_settings"] == i["spout_settings"] and "0.9.3-0.9.7" in a["spout_settings"]


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_output_files_read_back_with_the_documented_schema(cli, spark, fleet, tmp_path, fmt):
    flags, seeded = fleet
    out = tmp_path / "audit"
    result = cli("audit", *flags, "--out", str(out), "--format", fmt, "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == fmt and summary["summary"]["partitions"] == 9
    from offctl.adapters.spark import schema as _schema

    for name, (_, columns) in FILES.items():
        names = [c for c, _, _ in columns]
        if fmt == "parquet":  # parquet carries its own schema: it must be the documented one
            df = spark.read.parquet(str(out / name))
            types = {"string": "string", "long": "bigint", "double": "double", "boolean": "boolean"}
            assert df.columns == names and [t for _, t in df.dtypes] == [types[t] for _, t, _ in columns], name
        elif fmt == "csv":
            [header] = {f.read_text().splitlines()[0] for f in (out / name).glob("part-*.csv")}
            assert header.split(",") == names, name
        else:
            keys = {
                k
                for f in (out / name).glob("part-*.json")
                for line in f.read_text().splitlines()
                for k in json.loads(line)
            }
            assert keys <= set(names), name  # JSON lines leave out null values
    schema = _schema((c, t) for c, t, _ in FILES["partitions"][1])
    reader = spark.read.schema(schema).format(fmt).option("header", True)
    rows = {(r["consumer"], r["partition"]): r for r in reader.load(str(out / "partitions")).collect()}
    broken = rows[("broken", 0)]
    assert "OFFSET_ABOVE_LOG_END" in broken["findings"] and broken["status"] == "error"
    assert rows[("broken", 1)]["lag"] == 7 and rows[("broken", 1)]["log_end"] == 10
    # the files keep a hint on every finding row (the JSON document says each code's once)
    schema = _schema((c, t) for c, t, _ in FILES["findings"][1])
    found = spark.read.schema(schema).format(fmt).option("header", True).load(str(out / "findings")).collect()
    assert found and all(f["hint"] == CATALOGUE[f["code"]].hint for f in found)


def test_repair_moves_out_of_range_offsets_with_backup_and_versioned_writes(cli, spark, fleet, zk, tmp_path):
    flags, seeded = fleet
    path = f"{seeded['root']}/broken/partition_0"
    before, stat = zk.get(path)
    common = [
        *flags,
        "--repair",
        "out-of-range",
        "--quiet-period",
        "0",
        "--backup-dir",
        str(tmp_path / "b"),
        "--audit-log",
        str(tmp_path / "audit.log"),
        "-o",
        "json",
        "--fail-on",
        "never",
    ]

    dry = cli("audit", *common)
    assert dry.exit_code == 0, dry.stderr
    [plan] = dry.json()["repair"]
    assert plan["mode"] == "dry-run" and plan["consumer"] == "broken"
    assert [(c["partition"], c["before"], c["after"], c["action"]) for c in plan["changes"]] == [(0, 50, 0, "write")]
    # what the repair costs: the 10 messages of today's log, which the spout, past the log end, may never have read
    [change] = plan["changes"]
    assert (change["direction"], change["messages"], change["span"]) == ("replay", 10, "full")
    assert change["first_timestamp"] and change["last_timestamp"] and "past the log end" in change["cost"]
    assert plan["cost"]["replay"]["messages"] == 10 and plan["undo_cost"] is None
    assert zk.get(path)[0] == before  # a dry run writes nothing

    done = cli("audit", *common, "--execute", "--yes")
    assert done.exit_code == 0, done.stderr
    [applied] = done.json()["repair"]
    assert applied["executed"] and applied["verified"] and Path(applied["backup"]).is_file()
    assert applied["undo_cost"]["skip"]["messages"] == 10  # the undo puts the spout past the log end again
    data, after_stat = zk.get(path)
    assert json.loads(data)["offset"] == 0 and after_stat.version == stat.version + 1
    # only the offset changed, byte for byte elsewhere
    assert data == before.replace(b'"offset":50', b'"offset":0')
    assert json.loads((tmp_path / "audit.log").read_text().splitlines()[0])["after"] == 0
    # the lagging partition 1 was in range and is untouched
    assert json.loads(zk.get(f"{seeded['root']}/broken/partition_1")[0])["offset"] == 3

    again = cli("audit", *flags, "-o", "json", "--fail-on", "never")
    assert "OFFSET_ABOVE_LOG_END" not in {f["code"] for f in again.json()["findings"]}


def test_repair_refused_while_the_topology_runs(cli, spark, fleet, zk):
    flags, seeded = fleet
    zk.create(f"{seeded['storm']}/storms/old-2-1763800000", makepath=True)  # 'old' was redeployed
    refused = cli(
        "audit", *flags, "--repair", "out-of-range", "--quiet-period", "0", "--execute", "--yes", "-o", "json"
    )
    assert refused.exit_code == 4, refused.stderr
    [plan] = refused.json()["repair"]
    assert not plan["executed"] and plan["guards"][0]["status"] == "refused"
    assert json.loads(zk.get(f"{seeded['root']}/broken/partition_0")[0])["offset"] == 50


def test_snapshot_only_audit(cli, spark, fleet, zk, tmp_path):
    flags, seeded = fleet
    snaps = tmp_path / "snapshots"
    live = cli("audit", *flags, "--save-snapshot", str(snaps), "-o", "json")
    assert live.exit_code == 1, live.stderr
    [saved] = list(snaps.iterdir())
    assert saved.name.startswith("snapshot-") and (saved / "snapshot.json").is_file()
    zk.delete(seeded["root"], recursive=True)  # the servers' state is gone; the snapshot holds it

    offline = cli("audit", "--from-snapshots", str(snaps), "-o", "json")
    assert offline.exit_code == 1, offline.stderr
    a, b = live.json(), offline.json()
    assert _sorted(b["findings"]) == _sorted(a["findings"])
    # with no servers no message is read: each lagging partition's time lag is unread, with no retention headroom
    assert _sorted(b["partitions"], ESTIMATES) == _sorted(a["partitions"], ESTIMATES)
    assert {p["time_lag_source"] for p in b["partitions"] if p["lag"]} == {"unread"}
    assert b["captured_at"] == a["captured_at"]
    assert any("no servers read" in n for n in b["notes"])


def test_history_statuses_over_snapshots_built_in_the_test(cli, spark, tmp_path):
    from offctl.adapters import spark as adapter
    from offctl.core.records.model import PartitionLog, Snapshot, ZkNode, iso_ms

    running = frozenset({"live-1-1763700000"})
    minute = 60_000
    t0 = 1_800_000_000_000

    def node(spout, offset, topology, mtime):
        return ZkNode(
            "/h",
            spout,
            f"/h/{spout}/partition_0",
            0,
            None,
            storm_record("ht", 0, offset, topology_id=topology),
            1,
            mtime,
        )

    # (spout, topology) -> committed offset at each of four snapshots, the log end growing 10 a minute
    plan = {
        ("keeps-up", "live-1-1763700000"): [10, 20, 30, 40],  # at the log end: OK
        ("stuck", "live-1-1763700000"): [5, 5, 5, 5],  # alive but not moving: STALL
        ("dead", "gone-1-1700000000"): [5, 5, 5, 5],  # its topology is not running: STOP
        ("replayed", "live-1-1763700000"): [9, 2, 5, 8],  # went back and not yet past 9 again: REWIND
        ("slipping", "live-1-1763700000"): [9, 15, 20, 24],  # moving, lag 1, 5, 10, 16: WARN
        ("catching", "live-1-1763700000"): [2, 14, 26, 38],  # gaining, lag 8, 6, 4, 2: OK
    }
    snaps = tmp_path / "snaps"
    files = adapter.Files(spark)
    for i in range(4):
        at = t0 + i * minute
        log_end = 10 * (i + 1)
        nodes = []
        for (spout, topology), offsets in plan.items():
            # a spout writes its node when its offset moves; mtime says when
            moved = max((j for j in range(i + 1) if j == 0 or offsets[j] != offsets[j - 1]), default=0)
            nodes.append(node(spout, offsets[i], topology, t0 - 10 * minute if moved == 0 else t0 + moved * minute))
        snap = Snapshot(
            captured_ms=at, zk_nodes=tuple(nodes), cluster={"ht": {0: PartitionLog(0, log_end)}}, running=running
        )
        meta = {
            "format": adapter.SNAPSHOT_FORMAT,
            "version": adapter.SNAPSHOT_VERSION,
            "captured_ms": at,
            "captured_at": iso_ms(at),
            "running": sorted(running),
        }
        adapter.save_snapshot(spark, files, spark.sparkContext.parallelize([(0, snap)], 1), str(snaps), meta)

    result = cli("audit", "--from-snapshots", str(snaps), "-o", "json", "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    status = {p["consumer"]: (p["history_status"], p["time_lag_s"]) for p in doc["partitions"]}
    assert {k: s for k, (s, _) in status.items()} == {
        "keeps-up": "OK",
        "stuck": "STALL",
        "dead": "STOP",
        "replayed": "REWIND",
        "slipping": "WARN",
        "catching": "OK",
    }
    # log end 40 at the last snapshot, growing 10 a minute: offset 5 passed 3.5 minutes before it
    assert status["stuck"][1] == pytest.approx(210.0)
    assert status["keeps-up"][1] == 0.0
    assert doc["summary"]["history"] == {"ok": 2, "warn": 1, "stall": 1, "stop": 1, "rewind": 1}
    assert doc["summary"]["snapshots"] == 4
    # the catch-up over the four snapshots: the log end grew 30 in 3 minutes (1/6 a second); 'catching' committed 36,
    # 0.2 a second, and has 2 left: 2 / (0.2 - 1/6) = 60 s. 'replayed' is measured from its rewind on (2 -> 8 in 2
    # minutes while the log grew 20): not catching up, as the spouts that stand still or slip
    figures = ("catch_up_s", "catch_up", "commit_rate", "log_rate")
    caught = {p["consumer"]: tuple(p[f] for f in figures) for p in doc["partitions"]}
    assert caught == {
        "keeps-up": (0.0, "caught-up", None, None),  # lag 0: nothing to measure
        "stuck": (None, "not-catching-up", 0.0, 0.167),
        "dead": (None, "not-catching-up", 0.0, 0.167),
        "replayed": (None, "not-catching-up", 0.05, 0.167),
        "slipping": (None, "not-catching-up", 0.083, 0.167),
        "catching": (60.0, "catching-up", 0.2, 0.167),
    }
    assert {c["consumer"]: tuple(c[f] for f in figures) for c in doc["consumers"]} == caught  # one partition each
    assert "Catch-up" in result.stderr  # the worst consumers' table has the column with history
    # a window of two sees only the last two snapshots: 'replayed' moved forward in both
    short = cli("audit", "--from-snapshots", str(snaps), "--window", "2", "-o", "json", "--fail-on", "never")
    assert {p["consumer"]: p["history_status"] for p in short.json()["partitions"]}["replayed"] != "REWIND"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--execute"], "--execute applies a repair"),
        (["--repair", "HIGH_LAG"], "safe target is unambiguous"),
        (["--window", "1"], "--window 1"),
        (["--from-snapshots", "x", "--zk", "127.0.0.1:1"], "--from-snapshots audits saved snapshots"),
        (["--spark-conf", "novalue"], "expected KEY=VALUE"),
    ],
)
def test_usage_errors_before_spark_starts(cli, args, message):
    result = cli("audit", "--group", "g", "--bootstrap-servers", "127.0.0.1:1", *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_unreachable_zookeeper_exits_3(cli, spark):
    result = cli("audit", "--zk", "127.0.0.1:1", "--zk-root", "/x", "--timeout", "1")
    assert result.exit_code == 3 and "ZooKeeper" in result.stderr


def test_missing_snapshot_directory_is_a_usage_error(cli, spark, tmp_path):
    result = cli("audit", "--from-snapshots", str(tmp_path / "none"))
    assert result.exit_code == 2 and "no complete snapshot" in result.stderr


def test_spark_submit_runs_the_audit(fleet, tmp_path):
    """spark-submit on a local master. spark-submit merges its Python driver's stderr into its stdout; the
    entry script sends offctl's messages to spark-submit's own stderr, so stdout stays data."""
    flags, _ = fleet
    from pyspark.find_spark_home import _find_spark_home

    import offctl.faces.audit.spark_submit as entry

    submit = Path(_find_spark_home()) / "bin" / "spark-submit"
    proc = subprocess.run(
        [
            str(submit),
            "--master",
            "local[1]",
            "--conf",
            f"spark.pyspark.python={sys.executable}",
            entry.__file__,
            *flags,
            "--out",
            str(tmp_path / "out"),
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["summary"]["partitions"] == 9
    assert "Worst consumers" in proc.stderr and "Worst consumers" not in proc.stdout


def test_progress_reports_tasks_of_each_phase(spark, fleet39, zk_server, kafka39):
    from contextlib import contextmanager

    from offctl.faces.audit.job import AuditSettings, audit
    from offctl.settings.connection import Connection
    from offctl.settings.run import Reading

    seen: dict[str, tuple[int, int]] = {}

    @contextmanager
    def track(phase):
        yield lambda done, total: seen.__setitem__(phase, (done, total))

    flags, seeded = fleet39
    conn = Connection(
        zk=zk_server.address,
        zk_roots=(seeded["root"],),
        bootstrap_servers=kafka39.bootstrap,
        storm_root=seeded["storm"],
    )
    with audit(AuditSettings(Reading(conn)), track=track) as done:
        assert (done.result.tally.consumers, done.result.tally.partitions) == (3, 7)  # the spouts; no group given
    reading = seen["reading ZooKeeper and Kafka"]
    assert reading[0] == reading[1] > 0  # every task of the read finished, and the bar says so
    assert "analyzing" in seen


def test_unreachable_broker_makes_the_audit_partial(cli, spark):
    result = cli("audit", "--group", "g", "--bootstrap-servers", "127.0.0.1:1", "--timeout", "1", "-o", "json")
    assert result.exit_code == 3, result.stderr
    doc = result.json()
    assert doc["incomplete"] and "could not read groups g" in doc["incomplete"][0]
    assert doc["checks_skipped"] == []  # the broker was given; it failed, which `incomplete` says


HEALTHY = "-ok \u00e9 #%\u200b"  # the healthy spouts' ids hold characters ZooKeeper allows in a node name


@pytest.fixture
def odd_fleet(zk, zk_server, kafka39, names):
    """Beside each spout whose records name an odd topic, in the same Spark task, a healthy spout with lag 2."""
    topic = kafka39.filled_topic(names("t"), 2, 5)
    root, storm = names.root + "/spouts", names.root + "/storm"
    running = "etl-1-1763700000"
    zk.create(f"{storm}/storms/{running}", makepath=True)
    # Names Kafka cannot have (Topic.validate, apache/kafka clients/.../common/internals/Topic.java: 1 to 249
    # of [a-zA-Z0-9._-], not "." or ".."), a legal name of no topic, and a NUL after an existing topic's name
    # (librdkafka reads a C string: up to the NUL, that topic).
    odd = {
        "empty": "",
        "nul": "a\u0000b",
        "nul-first": "\u0000b",
        "space": "bad topic",
        "long": "x" * 250,
        "dot": "..",
        "missing": names("missing"),
        "nul-prefix": topic + "\u0000b",
    }
    for i, (what, name) in enumerate(odd.items()):
        for p in range(2):
            zk.create(f"{root}/{i}-{what}/partition_{p}", storm_record(name, p, 1, topology_id=running), makepath=True)
            zk.create(
                f"{root}/{i}{HEALTHY}/partition_{p}", storm_record(topic, p, 3, topology_id=running), makepath=True
            )
    flags = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        kafka39.bootstrap,
        "--storm-root",
        storm,
    ]
    return flags, {"root": root, "topic": topic, "odd": odd}


def test_records_naming_topics_kafka_cannot_have_read_as_in_inspect(cli, spark, odd_fleet):
    """Issue 22: the audit reads what inspect reads. A topic name Kafka cannot have is never sent to the
    broker: it is a topic with no log, as in inspect's read of the whole cluster's metadata (UNKNOWN_TOPIC),
    and the healthy spout in the same task keeps its lag. Nothing is partial: exit 1, as inspect."""
    from offctl.faces.audit.tasks import plan_chunks

    flags, seeded = odd_fleet
    spouts = [f"{i}-{w}" for i, w in enumerate(seeded["odd"])] + [f"{i}{HEALTHY}" for i in range(len(seeded["odd"]))]
    # the layout this test relies on: each odd spout shares its Spark task (local[2]) with a healthy one
    chunks = plan_chunks({seeded["root"]: sorted(spouts)}, [], spark.sparkContext.defaultParallelism)
    assert all(
        len(c.spout_ids) == 2 and c.spout_ids[0].split("-")[0] == c.spout_ids[1].split("-")[0] for c in chunks
    ), chunks
    inspected = cli("inspect", *flags, "-o", "json")
    audited = cli("audit", *flags, "-o", "json")
    # A task that raises fails the job in local mode (exit 3, its traceback in Spark's log): exit 1 says none did.
    assert (audited.exit_code, inspected.exit_code) == (1, 1), audited.stderr
    assert "Traceback" not in audited.stderr
    i, a = inspected.json(), audited.json()
    assert a["incomplete"] == i["incomplete"] == []
    sees_what_inspect_sees(i, a)
    lag = {(r["consumer"], r["partition"]): r["lag"] for r in a["partitions"]}
    assert {k: v for k, v in lag.items() if k[0].endswith(HEALTHY)} == {
        (f"{n}{HEALTHY}", p): 2 for n in range(len(seeded["odd"])) for p in range(2)
    }
    unknown = {f["consumer"] for f in a["findings"] if f["code"] == "UNKNOWN_TOPIC"}
    assert unknown == {f"{i}-{w}" for i, w in enumerate(seeded["odd"]) if w != "empty"}


def test_repair_plans_trident_spouts_as_reset_trident_does(cli, spark, zk, zk_server, kafka, names, tmp_path):
    """Issue 27: a Trident spout out of range crashed the repair (an assert, exit 1). It is planned through the
    same reset as `offctl reset --trident ID --trident-root ROOT`, dry run and --execute --yes."""
    from offctl.faces.sandbox import client_trident_meta, trident_meta

    topic = kafka.filled_topic(names("orders"), 2, 10)
    root, storm = names.root + "/transactional", names.root + "/storm"
    zk.ensure_path(f"{storm}/storms")
    sk = "orders-trident-4-1700000300"  # stopped: the running-topology guard lets it be
    for p, (first, nxt) in {0: (3, 4), 1: (90, 95)}.items():  # partition 1 is past the log end (10)
        zk.create(f"{root}/sk/user/partition_{p}", b"7", makepath=True)
        zk.create(f"{root}/sk/user/partition_{p}/8", trident_meta(topic, p, first, nxt, sk, kafka.bootstrap))
    zk.create(f"{root}/cl/user/{topic}@0/6", client_trident_meta(40, 44, "clicks-1-1700000400"), makepath=True)
    for sid, currtx in (
        ("sk", b"9"),
        ("cl", b"7"),
    ):  # one past the last acked txid, as MasterBatchCoordinator leaves it
        zk.create(f"{root}/{sid}/coordinator/currtx", currtx, makepath=True)
    common = [
        "--zk",
        zk_server.address,
        "--trident-root",
        root,
        "--bootstrap-servers",
        kafka.bootstrap,
        "--storm-root",
        storm,
        "--repair",
        "out-of-range",
        "--quiet-period",
        "0",
        "--backup-dir",
        str(tmp_path / "b"),
        "--audit-log",
        str(tmp_path / "audit.log"),
        "-o",
        "json",
        "--fail-on",
        "never",
    ]
    before = zk.get(f"{root}/sk/user/partition_1/8")[0]

    dry = cli("audit", *common)
    assert dry.exit_code == 0, dry.stderr
    plans = {p["consumer"]: p for p in dry.json()["repair"]}
    assert set(plans) == {"sk", "cl"} and all(p["mode"] == "dry-run" for p in plans.values())
    assert [(c["partition"], c["before"], c["after"]) for c in plans["sk"]["changes"]] == [(1, 95, 0)]
    assert [(c["partition"], c["before"], c["after"]) for c in plans["cl"]["changes"]] == [(0, 45, 0)]
    assert zk.get(f"{root}/sk/user/partition_1/8")[0] == before

    done = cli("audit", *common, "--execute", "--yes")
    assert done.exit_code == 0, done.stderr
    applied = {p["consumer"]: p for p in done.json()["repair"]}
    assert all(p["executed"] and p["verified"] for p in applied.values()), done.stderr
    assert json.loads(zk.get(f"{root}/sk/user/partition_1/8")[0])["nextOffset"] == 0
    again = cli("audit", *common)
    assert again.json()["repair"] == [] and "nothing to repair" in again.stderr
    assert again.json()["repair_note"].startswith("nothing to repair") and dry.json()["repair_note"] is None
