"""One commit, one verdict: migrate's read-back (verify.verify_kafka) and inspect (rule 6, the lag) say the same
thing of the same commit, for every storm-kafka-client line, first-poll strategy and metadata the broker keeps.
Plain data, one table. Apache Kafka hands back the metadata written ("kept"): those rows run end to end in
tests/e2e/test_reset_e2e.py::test_migrate_and_inspect_give_one_verdict. A broker that hands back none ("dropped") or
another topology's ("foreign") in place of what it was sent cannot be made of Apache Kafka, so those rows, and
what offctl then does to the backup (reset._keep_after_image), are tested here only.

What the spout does (KafkaSpout.doSeek; CommitMetadataManager.isOffsetCommittedByThisTopology from v1.2.4):
  v1.1.1 (1.0.0-1.0.5, 1.1.0-1.1.1): a commit exists -> EARLIEST/LATEST seek to the beginning/end, whatever
         its metadata; UNCOMMITTED_* seek to committed + 1.
  v1.2.4, v2.8.8 (3.x: master 73da988d9, unchanged): metadata naming the running topology -> the commit;
         anything else (none, unreadable, another topology's) -> EARLIEST/LATEST the beginning/end,
         UNCOMMITTED_* the commit.
"""

from __future__ import annotations

import json

import pytest

from offctl.core.plans.kafka import plan_migrate
from offctl.core.plans.verify import verify_kafka
from offctl.core.records.model import ZOOKEEPER, ConsumerKey, KafkaCommit, PartitionLog, Snapshot, Thresholds, ZkNode
from offctl.core.rules.analyze import analyze
from offctl.core.storm.releases import FirstPoll, SpoutProfile, StormKafkaClient

TOPOLOGY = "orders-client-7-1763780000"  # the storm id migrate writes (--topology-id), running
OTHER = "orders-client-6-1763700000"  # an earlier deployment, not running
LOG = PartitionLog(100, 200, "k1:9092")

# Release line -> first-poll strategies that resume from the commit, per metadata the broker kept
ALL, UNCOMMITTED = set(FirstPoll), {FirstPoll.UNCOMMITTED_EARLIEST, FirstPoll.UNCOMMITTED_LATEST}
RESUMES = {
    # v1.1.1 doSeek: EARLIEST/LATEST ignore every commit
    ("1.1.1", "kept"): UNCOMMITTED,
    ("1.1.1", "dropped"): UNCOMMITTED,
    ("1.1.1", "foreign"): UNCOMMITTED,
    # v1.2.4 and v2.8.8 doSeek, isOffsetCommittedByThisTopology
    ("1.2.4", "kept"): ALL,
    ("1.2.4", "dropped"): UNCOMMITTED,
    ("1.2.4", "foreign"): UNCOMMITTED,
    ("2.8.8", "kept"): ALL,
    ("2.8.8", "dropped"): UNCOMMITTED,
    ("2.8.8", "foreign"): UNCOMMITTED,
    # 3.x: as v2.8.8 (master 73da988d9; docs/storm.md)
    ("3.1.0", "kept"): ALL,
    ("3.1.0", "dropped"): UNCOMMITTED,
    ("3.1.0", "foreign"): UNCOMMITTED,
}
CASES = [
    pytest.param(release, strategy, kept, strategy in resumes, id=f"{release}-{strategy.value}-{kept}")
    for (release, kept), resumes in RESUMES.items()
    for strategy in FirstPoll
]


def stored_metadata(kept: str, written: str | None) -> str | None:
    """What the broker hands back: the metadata written, none (a broker that drops it), or another topology's."""
    return {
        "kept": written,
        "dropped": "",
        "foreign": json.dumps({"topologyId": OTHER, "taskId": 3, "threadName": "t"}),
    }[kept]


def profile_of(release: str, strategy: FirstPoll) -> SpoutProfile:
    return SpoutProfile(
        client=StormKafkaClient.of_version(release),
        first_poll=strategy,
        client_major=StormKafkaClient.major_of(release),
        client_release=release,
    )


@pytest.mark.parametrize("release, strategy, kept, resumes", CASES)
def test_migrate_verification_and_inspect_agree(release, strategy, kept, resumes):
    profile = profile_of(release, strategy)
    node = json.dumps(
        {
            "topology": {"id": "orders-1-1", "name": "orders"},
            "offset": 150,
            "partition": 0,
            "broker": {"host": "k1", "port": 9092},
            "topic": "t",
        }
    ).encode()
    plan = plan_migrate(
        ConsumerKey(ZOOKEEPER, "orders", "/spouts"),
        [ZkNode("/spouts", "orders", "/spouts/orders/partition_0", 0, None, node, 1, 0)],
        "g",
        [],
        {"t": {0: LOG}},
        TOPOLOGY,
    )
    (change,) = plan.writes
    back = stored_metadata(kept, change.after_metadata)

    # migrate: the topology it names is the one about to run; nothing else is running
    verified = verify_kafka(plan, {("t", 0): (change.after, back)}, profile, frozenset(), TOPOLOGY)
    # inspect of the group, the commit as the broker kept it, that topology running
    report = analyze(
        Snapshot(
            0,
            (),
            (KafkaCommit("g", "t", 0, change.after, back),),
            cluster={"t": {0: LOG}},
            running=frozenset({TOPOLOGY}),
        ),
        Thresholds(spout=profile),
    )
    (row,) = report.rows

    assert (not verified.problems) is resumes
    assert row.resumes_stored is resumes
    offset = change.after + (1 if release == "1.1.1" and resumes else 0)  # v1.1.1: seek(committed + 1)
    edge = LOG.log_start if strategy.edge == "log start" else LOG.log_end
    assert row.lag == LOG.log_end - (offset if resumes else edge)
    if not resumes:
        (problem,) = verified.problems
        assert "the spout will ignore this commit" in problem
        said = [f.message for f in report.findings if f.code in ("FOREIGN_COMMIT", "LEGACY_COMMIT_METADATA")]
        assert all(problem.split("the spout will ignore this commit: ")[1] in m for m in said), (problem, said)
    else:
        # metadata not kept but still resumed from: a note says what EARLIEST/LATEST would do
        assert bool(verified.notes) is (kept != "kept")
        assert all("EARLIEST or LATEST would ignore them" in n for n in verified.notes)
    if kept == "dropped":  # inspect says FOREIGN_COMMIT with the same sentence verification used
        (foreign,) = [f for f in report.findings if f.code == "FOREIGN_COMMIT"]
        assert ("The spout ignores this commit" in foreign.message) is not resumes


# Metadata that binds with no topologyId: isOffsetCommittedByThisTopology throws NullPointerException in activate()
# (start.COMMIT_CRASH; run on 1.2.4 and 2.8.3 in tests/oracle/test_spout_oracle_e2e.py). The legacy line never
# reads it.
CRASHING = ["null", " null\n", '{"taskId":3,"threadName":"t"}', '{"topologyId":null,"taskId":"7"}', "{}"]


@pytest.mark.parametrize("metadata", CRASHING)
@pytest.mark.parametrize("release", ["1.1.1", "1.2.4", "2.8.8", "3.1.0"])
@pytest.mark.parametrize("strategy", [FirstPoll.EARLIEST, FirstPoll.UNCOMMITTED_LATEST])
def test_a_commit_without_a_topology_id_crashes_every_current_line_and_both_verdicts_say_so(
    metadata, release, strategy
):
    profile = profile_of(release, strategy)
    crashes = release != "1.1.1"
    report = analyze(
        Snapshot(
            0, (), (KafkaCommit("g", "t", 0, 150, metadata),), cluster={"t": {0: LOG}}, running=frozenset({TOPOLOGY})
        ),
        Thresholds(spout=profile),
    )
    (row,) = report.rows
    codes = {f.code for f in report.findings}
    assert (row.resumes.kind.value == "crashes") is crashes and ("CRASHING_COMMIT" in codes) is crashes
    assert ("FOREIGN_COMMIT" in codes) is not crashes  # the legacy line reads it as any commit without metadata
    if crashes:  # nowhere; the lag counts from the commit, which stays; the finding cites the manager
        assert row.resumes.at is None and row.lag == LOG.log_end - 150 and row.status.name == "ERROR"
        (found,) = [f for f in report.findings if f.code == "CRASHING_COMMIT"]
        assert (
            "NullPointerException in activate()" in found.message
            and "CommitMetadataManager.isOffsetCommittedByThisTopology, v1.2.4 and v2.8.8" in found.message
        )
    # the read-back of a write the broker kept with such metadata is a problem wherever the spout throws on it
    plan = plan_migrate(
        ConsumerKey(ZOOKEEPER, "orders", "/spouts"),
        [
            ZkNode(
                "/spouts",
                "orders",
                "/spouts/orders/partition_0",
                0,
                None,
                json.dumps(
                    {"topology": {"id": "orders-1-1", "name": "orders"}, "offset": 150, "partition": 0, "topic": "t"}
                ).encode(),
                1,
                0,
            )
        ],
        "g",
        [],
        {"t": {0: LOG}},
        TOPOLOGY,
    )
    verified = verify_kafka(plan, {("t", 0): (150, metadata)}, profile, frozenset(), TOPOLOGY)
    assert any("NullPointerException" in p for p in verified.problems) is crashes, verified


def test_what_a_reset_of_a_crashing_commit_costs_and_says():
    """The cost counts from the commit (where a repaired spout resumes), and says the spout throws on it now."""
    from offctl.core.plans.cost import Spout, _resumes

    offset, note = _resumes(
        "kafka",
        150,
        b"null",
        LOG,
        gone="no commit before",
        spout=Spout(profile_of("2.8.8", FirstPoll.EARLIEST), frozenset({TOPOLOGY})),
    )
    assert offset == 150 and "NullPointerException in activate()" in note and "once it is rewritten" in note


META = '{"topologyId":"orders-client-7-1763780000","taskId":-1,"threadName":"offctl"}'


@pytest.mark.parametrize(
    "read_back, rewritten",
    [
        pytest.param({("t", 0): (5, META), ("t", 1): (6, META)}, {}, id="kept as sent (Apache Kafka)"),
        pytest.param({("t", 0): (5, ""), ("t", 1): (6, META)}, {0: (5, "")}, id="metadata dropped on one partition"),
        pytest.param({("t", 0): (5, None), ("t", 1): (6, None)}, {0: (5, None), 1: (6, None)}, id="dropped on both"),
        pytest.param({("t", 0): (5, META)}, {}, id="a partition not read back is left to the verification"),
    ],
)
def test_the_backups_after_image_is_the_commit_the_broker_kept(tmp_path, read_back, rewritten):
    """reset._keep_after_image: where the read-back differs from what was sent, the backup's after-image becomes
    what the broker kept, so its undo compares the group with what the write left; as sent, the file stays
    byte for byte."""
    from offctl.adapters.backup import load_backup, write_backup
    from offctl.core.plans.plan import Change, Plan
    from offctl.core.records.model import KAFKA
    from offctl.repair.readback import keep_after_image

    plan = Plan(
        "reset",
        ConsumerKey(KAFKA, "g"),
        "to 5",
        (Change("t", 0, 3, 5, after_metadata=META), Change("t", 1, 3, 6, after_metadata=META)),
        0,
        group_had_commits=True,
    )
    path = write_backup(plan, tmp_path, 1_700_000_000_000)
    sent = path.read_bytes()
    assert keep_after_image(plan, path, read_back) == ()
    entries = json.loads(path.read_text())["kafka"]
    assert {
        e["partition"]: (e["written"]["offset"], e["written"]["metadata"])
        for e in entries
        if e.get("written_read_back")
    } == rewritten
    assert (path.read_bytes() == sent) is not bool(rewritten)
    after = load_backup(path).commits_after  # the checksum holds either way
    assert {p: after[("t", p)].metadata for p in (0, 1)} == {p: rewritten.get(p, (0, META))[1] for p in (0, 1)}


def test_a_backup_that_cannot_be_rewritten_is_said_in_a_note(tmp_path, monkeypatch):
    import errno

    from offctl.adapters.backup import write_backup
    from offctl.core.plans.plan import Change, Plan
    from offctl.core.records.model import KAFKA
    from offctl.repair import readback

    def full(path, kept):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(readback, "record_read_back", full)
    plan = Plan("reset", ConsumerKey(KAFKA, "g"), "to 5", (Change("t", 0, 3, 5, after_metadata=META),), 0)
    path = write_backup(plan, tmp_path, 1_700_000_000_000)
    assert readback.keep_after_image(plan, path, {("t", 0): (5, None)}) == (
        f"the backup {path} keeps the commits as sent, not as the broker kept them (No space left on device): its "
        f"undo will be refused by changed-since on 1 partition(s) (--force changed-since overrides)",
    )


@pytest.mark.parametrize(
    "release, text",
    [
        ("3.1.0", "storm-kafka-client 3.1.0,"),
        ("2.8.8", "storm-kafka-client 2.8.8,"),
        ("1.1.1", "storm-kafka-client 1.1.1,"),
        ("1.0.6", "storm-kafka-client 1.0.6,"),
    ],
)
def test_the_assumptions_footer_names_the_release_given(release, text):
    assert text in profile_of(release, FirstPoll.UNCOMMITTED_EARLIEST).describe()


def test_the_default_footer_names_the_default_release():
    from offctl.core.storm.releases import CLIENT_RELEASE_DEFAULT, FirstPoll
    from offctl.settings.resolve import client_profile

    assert "1.0.6+" not in SpoutProfile().describe()
    assert f"storm-kafka-client {CLIENT_RELEASE_DEFAULT}," in SpoutProfile().describe()
    assert (
        f"storm-kafka-client {CLIENT_RELEASE_DEFAULT},"
        in client_profile(CLIENT_RELEASE_DEFAULT, FirstPoll.UNCOMMITTED_EARLIEST).describe()
    )


@pytest.mark.parametrize(
    "release, own",
    [
        pytest.param("1.2.4", True, id="pom.xml@v1.2.4-jackson-2.9.4-binds-it"),
        pytest.param("2.5.0", True, id="pom.xml@v2.5.0-jackson-2.10.5-binds-it"),
        pytest.param("2.6.0", False, id="pom.xml@v2.6.0-jackson-2.15.2-refuses-it"),
        pytest.param("2.8.8", False, id="pom.xml@v2.8.3-jackson-2.20.0-refuses-it"),
    ],
)
def test_a_number_over_1000_characters_in_the_metadata_is_read_by_the_releases_jackson(release, own):
    """Jackson 2.15+ (StreamReadConstraints.maxNumberLength 1,000) refuses a number a String property would take as
    its text, and 2.9 binds it (held to both in tests/oracle/test_metadata_differential.py: 2.9.4 on 1.2.4, 2.20.0 on
    2.8.3). Storm ships 2.15.2 from 2.6.0 on, so from there the spout takes the commit as another topology's:
    EARLIEST starts at the log start, and the finding says why."""
    profile = profile_of(release, FirstPoll.EARLIEST)
    # an integer of 1,001 digits, and a fraction of 1,001 characters with no such run of digits
    for number in ("7" * 1001, "1." + "5" * 999):
        metadata = json.dumps({"topologyId": TOPOLOGY, "taskId": 3, "threadName": 0}, separators=(",", ":"))
        metadata = metadata.replace(":0}", ":" + number + "}")
        report = analyze(
            Snapshot(
                0,
                commits=(KafkaCommit("g", "t", 0, 150, metadata),),
                cluster={"t": {0: LOG}},
                running=frozenset({TOPOLOGY}),
            ),
            Thresholds(spout=profile),
        )
        (row,) = report.rows
        assert row.resumes.at == (150 if own else 100), (number[:3], row.resumes)
        said = [f.message for f in report.findings if f.code == "FOREIGN_COMMIT"]
        assert bool(said) is not own, said
        assert not said or "a number over 1,000 characters" in said[0] and release in said[0]
