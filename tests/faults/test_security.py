"""ZooKeeper digest auth and ACLs end to end against a ZooKeeper that enforces them, owner-only files, and no
secret in any output stream or file offctl writes, mistakes included."""

from __future__ import annotations

import pytest
from kazoo.security import make_digest_acl

from tests.conftest import storm_record

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

USER, SECRET = "offctl", "zk-Pa55-w0rd-42"


@pytest.fixture
def guarded(zk, names, kafka39, zk_server, broker39, tmp_path):
    """A spout whose nodes only USER (digest) may read and write."""
    topic = kafka39.filled_topic(names("orders"), 2, 3)
    acl = [make_digest_acl(USER, SECRET, all=True)]
    root = names.root + "/spouts"
    zk.ensure_path(f"{root}/orders")
    for p in range(2):
        zk.create(f"{root}/orders/partition_{p}", storm_record(topic, p, 0), acl=acl)
    zk.ensure_path(names.root + "/storm/storms")
    conn = [
        "--zk",
        zk_server.address,
        "--zk-root",
        root,
        "--bootstrap-servers",
        broker39.address,
        "--storm-root",
        names.root + "/storm",
    ]
    files = tmp_path / "state"
    safe = ["--backup-dir", str(files / "backups"), "--audit-log", str(files / "audit.log")]
    return {"conn": conn, "safe": safe, "files": files}


def _no_secret(result, files=None):
    assert SECRET not in result.stdout and SECRET not in result.stderr
    for path in files.rglob("*") if files else ():
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_reads_and_writes_through_an_authenticated_session(cli, guarded):
    denied = cli("inspect", *guarded["conn"], "--spout", "orders", "-o", "json")
    assert denied.exit_code == 3
    assert "not allowed to read" in denied.stderr and "--zk-auth" in denied.stderr
    read = cli("inspect", *guarded["conn"], "--spout", "orders", "--zk-auth", f"{USER}:{SECRET}", "-o", "json")
    assert read.exit_code in (0, 1), read.stderr
    assert [r["committed"] for r in read.json()["partitions"]] == [0, 0]
    _no_secret(read)
    done = cli(
        "reset",
        *guarded["conn"],
        *guarded["safe"],
        "--spout",
        "orders",
        "--zk-auth",
        f"{USER}:{SECRET}",
        "--to",
        "offset",
        "--offset",
        "1",
        "--quiet-period",
        "0",
        "--execute",
        "--yes",
        "-o",
        "json",
    )
    assert done.exit_code == 0, done.stderr
    assert done.json()["verified"] and [c["after"] for c in done.json()["changes"]] == [1, 1]
    _no_secret(done, guarded["files"])
    for path in guarded["files"].rglob("*"):
        if path.is_file():
            assert oct(path.stat().st_mode & 0o777) == "0o600", path  # backups and audit log: owner only


@pytest.mark.parametrize(
    "mistake",
    [
        ["--zk-auth", f"{USER}:wrong-{SECRET}"],
        ["--zk-auth", USER, SECRET],  # a space instead of ':': the secret is an extra argument
        ["--kafka-config", f"sasl.mechanism={SECRET}"],  # librdkafka's "Invalid value" names the value
        ["--kafka-config", "sasl.password", SECRET],
        ["--kafka-config", f"security.protocol={SECRET}"],
    ],
)
def test_a_secret_in_the_wrong_place_is_never_repeated(cli, guarded, mistake):
    import contextlib
    import io
    import sys

    from offctl.commands import app as app_module

    out, err = io.StringIO(), io.StringIO()
    argv = ["offctl", "inspect", *guarded["conn"], "--spout", "orders", "--timeout", "2", *mistake]
    old, sys.argv = sys.argv, argv
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
            app_module.main()
    finally:
        sys.argv = old
    assert exit_.value.code in (1, 2, 3), err.getvalue()
    assert SECRET not in out.getvalue() and SECRET not in err.getvalue(), err.getvalue()
    assert err.getvalue().startswith("offctl: ")
