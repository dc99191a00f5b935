"""A secured listener (issue 35): Apache Kafka 4.4 with SASL/PLAIN and ACLs (StandardAuthorizer, nothing allowed
without an ACL: the `guarded` broker of tests/conftest.py), offctl given each user's credentials by a context of
the config file. What a user may do is
answered; what an ACL refuses (describe, read, commit) is one clear line with its documented exit code, with
nothing half-written; a refused login says so; no secret is ever printed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import SASL_USERS

pytestmark = [pytest.mark.kafka]

META = json.dumps(
    {"topologyId": "orders-client-1-1763780000", "taskId": 4, "threadName": "Thread-4"}, separators=(",", ":")
)


@pytest.fixture(scope="module")
def secured(guarded, guarded_kafka, tmp_path_factory):
    """On the broker with an authorizer (tests/conftest.py, `guarded`): a topic (3 partitions, 10 messages each) and a
    group committed at 4 with Storm's metadata. storm may read every topic and group; reader may describe the
    group and read the topic but not read the group (a commit needs READ on the group); nobody may do nothing. A
    config file with a context per user, and one with storm's name and a wrong password."""
    from confluent_kafka.admin import AclOperation, ResourceType

    where = tmp_path_factory.mktemp("secured")
    topic, group = "acl-orders", "acl-orders-client"
    guarded_kafka.create_topic(topic, 3)
    for p in range(3):
        guarded_kafka.produce(topic, p, 10)
    for p in range(3):
        guarded_kafka.commit(group, topic, {p: 4}, META)
    guarded.allow(
        "reader", (ResourceType.TOPIC, topic, AclOperation.READ), (ResourceType.GROUP, group, AclOperation.DESCRIBE)
    )
    config = where / "config.toml"
    contexts = {name: guarded.config(name) for name in ("storm", "reader", "nobody")}
    contexts["wrong"] = guarded.config("storm", "not-" + SASL_USERS["storm"])
    config.write_text(
        "".join(
            f'[contexts.{name}]\nbootstrap-servers = "{guarded.sasl}"\ntimeout = "5s"\nkafka-config = ['
            + ", ".join(f'"{k}={v}"' for k, v in settings.items())
            + "]\n\n"
            for name, settings in contexts.items()
        )
    )
    config.chmod(0o600)
    return {"config": config, "topic": topic, "group": group, "kafka": guarded_kafka}


def offctl(secured, context: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFCTL_")}
    proc = subprocess.run(
        [sys.executable, "-m", "offctl", *args, "--config", str(secured["config"]), "--context", context],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for password in SASL_USERS.values():
        assert password not in proc.stdout and password not in proc.stderr, "a secret was printed"
    assert "Traceback" not in proc.stderr
    return proc


def commits(secured) -> dict[int, tuple[int, str | None]]:
    return {partition: found for (_, partition), found in secured["kafka"].committed(secured["group"]).items()}


def test_a_user_the_acls_allow_reads_the_group_with_the_contexts_credentials(secured):
    proc = offctl(secured, "storm", "inspect", "--group", secured["group"], "--topic", secured["topic"], "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    rows = {(p["topic"], p["partition"]): (p["committed"], p["lag"]) for p in doc["partitions"]}
    assert rows == {(secured["topic"], p): (4, 6) for p in range(3)}
    assert not [f for f in doc["findings"] if f["code"] == "FOREIGN_COMMIT"]  # the spout's own metadata, kept


def test_a_user_without_acls_is_refused_in_one_line_exit_3(secured):
    proc = offctl(secured, "nobody", "inspect", "--group", secured["group"], "--topic", secured["topic"])
    assert proc.returncode == 3, proc.stderr
    refusals = [line for line in proc.stderr.splitlines() if "authorization failed" in line.lower()]
    # each refusal one line, naming what was refused: the group's offsets and state, the topic's description
    assert refusals and all(
        f"group {secured['group']}" in line or f"topic '{secured['topic']}'" in line for line in refusals
    ), proc.stderr


def test_a_refused_login_says_so_not_that_the_broker_did_not_answer(secured):
    proc = offctl(secured, "wrong", "inspect", "--group", secured["group"], "--topic", secured["topic"])
    assert proc.returncode == 3, proc.stderr
    assert "refused the credentials" in proc.stderr and "Authentication failed" in proc.stderr
    assert "did not answer" not in proc.stderr


def test_a_commit_the_acls_refuse_writes_nothing_and_says_so(secured, tmp_path):
    """reader may describe the group and read the topic, so the plan is made; the commit needs READ on the group,
    which it lacks: exit 5, the group's commits as before, the backup named, no secret."""
    before = commits(secured)
    proc = offctl(
        secured,
        "reader",
        "reset",
        "--group",
        secured["group"],
        "--topic",
        secured["topic"],
        "--to",
        "latest",
        "--execute",
        "--yes",
        "--force",
        "running-topology",
        "--backup-dir",
        str(tmp_path / "backups"),
        "--audit-log",
        str(tmp_path / "audit.log"),
    )
    assert proc.returncode == 5, proc.stderr
    assert "authorization failed" in proc.stderr.lower() and str(tmp_path / "backups") in proc.stderr
    assert commits(secured) == before
    phases = [json.loads(line)["phase"] for line in (tmp_path / "audit.log").read_text().splitlines()]
    assert phases.count("intent") == 3 and phases.count("failed") == 3 and "done" not in phases


def test_the_same_commit_by_a_user_the_acls_allow_is_written_and_verified(secured, tmp_path):
    proc = offctl(
        secured,
        "storm",
        "reset",
        "--group",
        secured["group"],
        "--topic",
        secured["topic"],
        "--partitions",
        "0",
        "--to",
        "offset",
        "--offset",
        "5",
        "--execute",
        "--yes",
        "--force",
        "running-topology",
        "--backup-dir",
        str(tmp_path / "backups"),
        "--audit-log",
        str(tmp_path / "audit.log"),
        "-o",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verified"] is True
    assert commits(secured)[0] == (5, META)  # the Storm metadata kept
