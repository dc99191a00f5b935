"""JStorm's Kafka spouts in the Spark audit (issue 47): Spark local mode against the real ZooKeeper and broker of the
fixtures. The audit gives each --jstorm-root a chunk of its own; its document is inspect's, its files hold the JStorm
rows with the documented schema, its summary for people names the spouts as every face names them, and a snapshot it
saves reads back as JStorm's (the `nodes` table's `jstorm` column). Every other face, figure by figure:
tests/e2e/test_face_parity_e2e.py."""

from __future__ import annotations

import time

import pytest

from offctl.core.storm import jstorm
from offctl.faces.audit.job import FILES
from tests.e2e.test_audit_e2e import FROM_MESSAGES, _sorted, sees_what_inspect_sees

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

WIDE = {"COLUMNS": "250"}  # the summary's tables unfolded, so a consumer's name is one cell line


@pytest.fixture(scope="module")
def jstorm_fleet(zk, zk_server, kafka, broker):
    """Two JStorm spouts of a topic of 3 partitions of 10 messages: `jstorm` at 4 (lag 5), 9 (caught up) and 30 (past
    the log end), `shared` written by two topologies, one record a string offset."""
    from tests.conftest import Names

    names = Names(f"jstorm-audit-{time.time_ns()}")
    topic = kafka.filled_topic(names("clicks"), 3, 10)
    root = names.root + "/jstorm"
    host, port = broker.address.rsplit(":", 1)

    def node(client: str, partition: int, data: bytes) -> None:
        zk.create(jstorm.node_path(root, jstorm.consumer_id(topic, client), partition), data, makepath=True)

    for p, offset in {0: 4, 1: 9, 2: 30}.items():
        node("jstorm", p, jstorm.record_bytes("clicks-jstorm", offset, p, host, int(port), topic))
    node("shared", 0, jstorm.record_bytes("clicks-jstorm", 2, 0, host, int(port), topic))
    node("shared", 1, jstorm.record_bytes("audit-jstorm", 2, 1, host, int(port), topic))
    quoted = jstorm.record_bytes("audit-jstorm", 7, 2, host, int(port), topic)
    node("shared", 2, quoted.replace(b'"offset":7,', b'"offset":"7",'))  # a string offset: MALFORMED_RECORD
    flags = ["--zk", zk_server.address, "--bootstrap-servers", broker.address, "--jstorm-root", root]
    return flags, topic, root


def test_the_audit_of_a_jstorm_root_is_inspects_and_its_summary_names_the_spouts(cli, spark, jstorm_fleet):
    flags, topic, root = jstorm_fleet
    inspected = cli("inspect", *flags, "-o", "json")
    audited = cli("audit", *flags, "-o", "json", env=WIDE)
    assert inspected.exit_code == audited.exit_code == 1, audited.stderr
    i, a = inspected.json(), audited.json()
    sees_what_inspect_sees(i, a)
    assert {(c["store"], c["consumer"], c["zk_root"]) for c in a["consumers"]} == {
        ("jstorm", jstorm.consumer_id(topic, "jstorm"), root),
        ("jstorm", jstorm.consumer_id(topic, "shared"), root),
    }
    rows = {(p["consumer"].rsplit("/", 1)[1], p["partition"]): p for p in a["partitions"]}
    fetched = [rows["jstorm", p] for p in (0, 1, 2)]
    assert [(r["resumes"], r["resumes_at"], r["lag"]) for r in fetched] == [
        ("stored+1", 5, 5),
        ("stored+1", 10, 0),
        ("waits-until-log-end-reaches", 31, None),
    ]
    assert {"OFFSET_ABOVE_LOG_END", "ID_COLLISION", "MALFORMED_RECORD"} <= {f["code"] for f in a["findings"]}
    # the summary for people: its worst consumers, and the partition of each extreme, as ConsumerKey names them (a
    # JStorm spout is no group)
    labels = {f"jstorm {jstorm.spouts_path(root)}/{topic}/{client}" for client in ("jstorm", "shared")}
    assert set(worst_consumers(audited.stderr)) == {label.replace(" ", "") for label in labels}, audited.stderr
    extremes = next(line for line in audited.stderr.splitlines() if line.startswith("largest time lag "))
    assert any(f"({label} {topic}/" in extremes for label in labels), extremes
    assert "group " not in audited.stderr


def worst_consumers(summary: str) -> list[str]:
    """The Consumer column of the summary's "Worst consumers" table, each cell's folded lines joined (without the
    spaces a fold turns into line ends)."""
    table = summary.split("Worst consumers", 1)[1].split("└", 1)[0]
    names: list[str] = []
    for line in table.splitlines():
        if line.startswith("│"):
            cell = line.split("│")[1].strip()
            if cell == "jstorm" or cell.startswith("jstorm "):  # a consumer's first line: its store
                names.append("")
            names[-1] += cell.replace(" ", "")
    return names


def test_the_audits_files_and_snapshots_keep_jstorms_spouts(cli, spark, jstorm_fleet, tmp_path):
    flags, topic, root = jstorm_fleet
    out, snaps = tmp_path / "audit", tmp_path / "snaps"
    live = cli("audit", *flags, "--out", str(out), "--save-snapshot", str(snaps), "-o", "json", "--fail-on", "never")
    assert live.exit_code == 0, live.stderr
    from offctl.adapters.spark import schema as _schema

    schema = _schema((c, t) for c, t, _ in FILES["partitions"][1])
    files = spark.read.schema(schema).parquet(str(out / "partitions")).collect()
    assert {(r["store"], r["zk_root"]) for r in files} == {("jstorm", root)}
    by = {(r["consumer"], r["partition"]): r for r in files}
    first = by[jstorm.consumer_id(topic, "jstorm"), 0]
    assert (first["committed"], first["resumes_at"], first["resumes"], first["lag"]) == (4, 5, "stored+1", 5)
    assert first["path"] == jstorm.node_path(root, jstorm.consumer_id(topic, "jstorm"), 0)
    # read back with no server: the snapshot's nodes are JStorm's, judged as such
    offline = cli("audit", "--from-snapshots", str(snaps), "-o", "json", "--fail-on", "never")
    assert offline.exit_code == 0, offline.stderr
    saved, read = offline.json(), live.json()
    assert _sorted(saved["findings"]) == _sorted(f for f in read["findings"] if f["code"] not in FROM_MESSAGES)

    def where_it_fetches(doc: dict) -> set:
        return {(p["store"], p["consumer"], p["partition"], p["resumes"], p["resumes_at"]) for p in doc["partitions"]}

    assert where_it_fetches(saved) == where_it_fetches(read)
