"""Per-spout profiles through the library calls every face uses, against the real ZooKeeper and broker: inspect
(and so watch and serve) and the audit's tasks judge each consumer by its own profile and name it in JSON.

The command-line side (config files, `--context`) is the settings layer's: these tests build the Profiles object
a command would pass."""

from __future__ import annotations

import pytest

from offctl.core.records.model import Thresholds
from offctl.core.rules.profiles import Profile, Profiles
from offctl.core.storm.releases import LATEST_TIME, SpoutProfile, StormKafka
from offctl.pipeline.inspect import inspect
from offctl.render.audit import audit_document_parts
from offctl.render.report import report_document
from offctl.settings.connection import Connection
from offctl.settings.run import Reading, Selection
from tests.conftest import storm_record
from tests.e2e.test_settings import lab_profiles

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]


@pytest.fixture
def mixed(zk, zk_server, kafka39, names):
    """Spouts of two kinds under one root: legacy-* run storm-kafka 0.9.6 with startOffsetTime latest on the
    orders topic; the others the defaults."""
    orders, clicks = kafka39.filled_topic(names("orders"), 2, 5), kafka39.filled_topic(names("clicks"), 2, 5)
    root = names.root

    def put(spout, partition, data):
        zk.create(f"{root}/{spout}/partition_{partition}", data, makepath=True)

    put("legacy-1", 0, storm_record(clicks, 0, 1))  # names clicks: the profile says it reads orders
    put("legacy-1", 1, storm_record(clicks, 1, 1))
    put("legacy-2", 0, storm_record(orders, 0, 2))
    put("legacy-2", 1, b"{not json")  # the spout starts where startOffsetTime says: latest here
    put("plain", 0, storm_record(orders, 0, 2))
    put("plain", 1, b"{not json")  # earliest here
    legacy = Thresholds(
        expected_topic=orders, spout=SpoutProfile(StormKafka.of_version("0.9.6"), start_offset_time=LATEST_TIME)
    )
    profiles = Profiles(Thresholds(), (Profile("legacy", "legacy-*", legacy),))
    conn = Connection(zk=zk_server.address, zk_roots=(root,), bootstrap_servers=kafka39.bootstrap)
    return conn, profiles, legacy, {"orders": orders, "clicks": clicks}


def _judged(doc: dict, consumer: str) -> tuple:
    return (
        sorted(
            (f["code"], f["topic"], f["partition"], f["message"]) for f in doc["findings"] if f["consumer"] == consumer
        ),
        sorted(
            (p["topic"], p["partition"], p["lag"], p["status"]) for p in doc["partitions"] if p["consumer"] == consumer
        ),
    )


def test_inspect_judges_each_spout_by_its_own_profile_and_names_it(mixed):
    conn, profiles, legacy, topics = mixed
    doc = report_document(inspect(Reading(conn, Selection(), profiles)))
    assert {c["consumer"]: c["profile"] for c in doc["consumers"]} == {
        "legacy-1": "legacy",
        "legacy-2": "legacy",
        "plain": None,
    }
    # each consumer's findings and rows are what a run with its profile's settings alone gives it
    alone = {
        None: report_document(inspect(Reading(conn, Selection(), Profiles(Thresholds())))),
        "legacy": report_document(inspect(Reading(conn, Selection(), Profiles(legacy)))),
    }
    for c in doc["consumers"]:
        assert _judged(doc, c["consumer"]) == _judged(alone[c["profile"]], c["consumer"]), c["consumer"]
        other = alone["legacy" if c["profile"] is None else None]
        assert _judged(doc, c["consumer"]) != _judged(other, c["consumer"]), c["consumer"]  # the profile mattered
    lag = {(p["consumer"], p["partition"]): p["lag"] for p in doc["partitions"]}
    assert lag[("legacy-2", 1)] == 0 and lag[("plain", 1)] == 5  # startOffsetTime latest vs earliest
    assert {p["topic"] for p in doc["partitions"] if p["consumer"] == "legacy-1"} == {topics["orders"]}
    assert doc["spout_settings"] == (
        f"profiles: legacy 2 consumers ({legacy.spout.describe()}, topic "
        f"{topics['orders']}); defaults 1 consumer ({SpoutProfile().describe()})"
    )


def test_one_profile_for_every_spout_is_a_run_with_its_settings(mixed):
    conn, _, legacy, _ = mixed
    doc = report_document(inspect(Reading(conn, Selection(), Profiles(Thresholds(), (Profile("all", "*", legacy),)))))
    plain = report_document(inspect(Reading(conn, Selection(), Profiles(legacy))))
    assert {c["profile"] for c in doc["consumers"]} == {"all"} and {c["profile"] for c in plain["consumers"]} == {None}
    for key in ("findings", "summary", "spout_settings", "notes", "checks_skipped"):
        assert doc[key] == plain[key], key
    timed = ("max_time_lag_s", "min_retention_headroom_s")  # the message's age moves between the two reads
    assert [{**c, "profile": None, **dict.fromkeys(timed)} for c in doc["consumers"]] == [
        {**c, **dict.fromkeys(timed)} for c in plain["consumers"]
    ]


@pytest.mark.spark
def test_the_audits_tasks_judge_each_spout_by_its_own_profile(spark, mixed):
    from offctl.faces.audit.job import AuditSettings, audit

    conn, profiles, _, _ = mixed
    inspected = report_document(inspect(Reading(conn, Selection(), profiles)))
    with audit(AuditSettings(Reading(conn, profiles=profiles))) as done:
        result = done.result
        _, sections, tail = audit_document_parts(result)
        audited = {
            "findings": list(sections["findings"]),
            "partitions": list(sections["partitions"]),
            "consumers": list(sections["consumers"]),
        }
    assert {c["consumer"]: c["profile"] for c in audited["consumers"]} == {
        c["consumer"]: c["profile"] for c in inspected["consumers"]
    }
    for c in inspected["consumers"]:
        assert _judged(audited, c["consumer"]) == _judged(inspected, c["consumer"]), c["consumer"]
    assert tail["spout_settings"] == inspected["spout_settings"]


def _lab(tmp_path, conn: Connection, orders: str):
    """Issue 28's "done when": a config file with a context and two profiles, chosen by OFFCTL_CONTEXT."""
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[contexts.lab]
zk = "{conn.zk}"
zk-root = ["{conn.zk_roots[0]}"]
bootstrap-servers = "{conn.bootstrap_servers}"
"""
        + lab_profiles(orders, clients="plain", lag_threshold=1)
    )
    path.chmod(0o600)
    return {"OFFCTL_CONFIG": str(path), "OFFCTL_CONTEXT": "lab"}


def test_the_cli_judges_each_spout_by_its_config_profile(cli, mixed, tmp_path):
    conn, _, legacy, topics = mixed
    result = cli("inspect", "-o", "json", "--fail-on", "never", env=_lab(tmp_path, conn, topics["orders"]))
    assert result.exit_code == 0, result.stderr
    doc = result.json()
    assert {c["consumer"]: c["profile"] for c in doc["consumers"]} == {
        "legacy-1": "legacy-*",
        "legacy-2": "legacy-*",
        "plain": "clients",
    }
    lag = {(p["consumer"], p["partition"]): p["lag"] for p in doc["partitions"]}
    assert lag[("legacy-2", 1)] == 0 and lag[("plain", 1)] == 5  # startOffsetTime latest vs earliest
    high = {f["consumer"] for f in doc["findings"] if f["code"] == "HIGH_LAG"}
    assert high == {"plain"}  # only its profile sets a lag threshold
    assert {p["topic"] for p in doc["partitions"] if p["consumer"] == "legacy-1"} == {topics["orders"]}
    assert doc["spout_settings"].startswith(f"profiles: legacy-* 2 consumers ({legacy.spout.describe()}")
    assert "; clients 1 consumer (" in doc["spout_settings"]


@pytest.mark.spark
def test_the_cli_audit_judges_as_inspect_does(cli, spark, mixed, tmp_path):
    conn, _, _, topics = mixed
    env = _lab(tmp_path, conn, topics["orders"])
    inspected = cli("inspect", "-o", "json", "--fail-on", "never", env=env)
    audited = cli("audit", "-o", "json", "--fail-on", "never", env=env)
    assert audited.exit_code == inspected.exit_code == 0, audited.stderr
    i, a = inspected.json(), audited.json()
    assert {c["consumer"]: c["profile"] for c in a["consumers"]} == {
        c["consumer"]: c["profile"] for c in i["consumers"]
    }
    for c in i["consumers"]:
        assert _judged(a, c["consumer"]) == _judged(i, c["consumer"]), c["consumer"]
    assert a["spout_settings"] == i["spout_settings"]
    # the audit carries inspect's figures per partition: the time lag, with its source
    assert {(p["consumer"], p["partition"]): p["time_lag_source"] for p in a["partitions"]} == {
        (p["consumer"], p["partition"]): p["time_lag_source"] for p in i["partitions"]
    }
