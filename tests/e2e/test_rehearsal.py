"""Rehearsing on the sandbox can never reach a real cluster (issue 27, items 10 and 11): `offctl sandbox env`
points a shell at the sandbox over whatever production variables it had, OFFCTL_SANDBOX=1 refuses any other
server, and the implicit sandbox takes none of the environment's roots.

The sandbox here is the fixtures' ZooKeeper and broker, remembered in a state file of this test's own (as
`offctl sandbox up` remembers the servers it starts): never `offctl sandbox down` here, it would stop them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from offctl.core.storm import jstorm
from offctl.faces import sandbox as sb
from offctl.settings import sandbox as sandbox_state
from tests.conftest import storm_record
from tests.e2e.test_reset_e2e import on_terminal

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka]

NOWHERE = "127.0.0.1:1"  # nothing listens there: reaching it would be exit 3, never a report


@pytest.fixture
def rehearsal(zk, zk_server, broker39, kafka39, names, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in [n for n in os.environ if n.startswith("OFFCTL_")]:
        monkeypatch.delenv(name)
    directory = sandbox_state.sandbox_dir()
    directory.mkdir(parents=True)
    state = sandbox_state.Sandbox(
        str(directory),
        zk_server.pid,
        zk_server.address,
        broker39.pid,
        broker39.address,
        zk_root=names.root + "/spouts",
        storm_root=names.root + "/storm",
        trident_root=names.root + "/transactional",
        jstorm_root=names.root + "/jstorm",
        seeded=True,
    )
    sandbox_state.save(state)
    topic = kafka39.filled_topic(names("orders"), 2, 10)
    host, port = broker39.address.rsplit(":", 1)
    for p in range(2):
        zk.create(f"{state.zk_root}/orders/partition_{p}", storm_record(topic, p, 4), makepath=True)
        zk.create(
            jstorm.node_path(state.jstorm_root, jstorm.consumer_id(topic, "jstorm"), p),
            jstorm.record_bytes("orders-jstorm", 3, p, host, int(port), topic),
            makepath=True,
        )
        zk.create(
            f"{state.trident_root}/tx/user/partition_{p}/3",
            sb.trident_meta(topic, p, 2, 4, "tx-1-1700000000", broker39.address),
            makepath=True,
        )
    zk.create(f"{state.trident_root}/tx/coordinator/currtx", b"4", makepath=True)  # one past the last acked txid
    zk.ensure_path(f"{state.storm_root}/storms")
    assert sandbox_state.active() == state
    return state


def sh(script: str) -> subprocess.CompletedProcess:
    offctl = f"{sys.executable} -m offctl"
    return subprocess.run(
        ["sh", "-c", script.replace("offctl ", offctl + " ")], capture_output=True, text=True, timeout=300
    )


def test_sandbox_env_wins_over_exported_production_and_refuses_any_other_server(rehearsal):
    production = (
        f"export OFFCTL_ZK={NOWHERE} OFFCTL_ZK_ROOT=/kafka-spouts OFFCTL_BOOTSTRAP_SERVERS={NOWHERE} "
        f"OFFCTL_STORM_ROOT=/storm OFFCTL_TRIDENT_ROOT=/transactional OFFCTL_JSTORM_ROOT=/jstorm "
        f"OFFCTL_ZK_AUTH=ops:secret "
        f"OFFCTL_KAFKA_CONFIG=security.protocol=SASL_SSL"
    )
    proc = sh(
        f'{production}; eval "$(offctl sandbox env)" || exit 9; env | grep ^OFFCTL_ | sort; '
        f'offctl reset --spout orders --to earliest --quiet-period 0 -o json > plan.json.tmp; echo "reset=$?"; '
        f"cat plan.json.tmp; rm -f plan.json.tmp; "
        f'offctl inspect --zk {NOWHERE} --zk-root /kafka-spouts; echo "flag=$?"; '
        f'OFFCTL_BOOTSTRAP_SERVERS={NOWHERE} offctl inspect --group g; echo "variable=$?"'
    )
    out = proc.stdout
    assert "reset=0" in out and "flag=2" in out and "variable=2" in out, proc.stderr
    env = dict(line.split("=", 1) for line in out.splitlines() if line.startswith("OFFCTL_"))
    assert env == {
        "OFFCTL_ZK": rehearsal.zk,
        "OFFCTL_ZK_ROOT": rehearsal.zk_root,
        "OFFCTL_BOOTSTRAP_SERVERS": rehearsal.broker,
        "OFFCTL_STORM_ROOT": rehearsal.storm_root,
        "OFFCTL_TRIDENT_ROOT": rehearsal.trident_root,
        "OFFCTL_JSTORM_ROOT": rehearsal.jstorm_root,
        "OFFCTL_CONTEXT": "sandbox",
        "OFFCTL_SANDBOX": "1",
    }  # the credentials unset
    plan = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    assert (plan["consumer"], plan["zk_root"], len(plan["changes"])) == ("orders", rehearsal.zk_root, 2)
    refusals = [line for line in proc.stderr.splitlines() if "OFFCTL_SANDBOX=1" in line]
    assert len(refusals) == 2
    assert f"would use ZooKeeper {NOWHERE}, not the running sandbox's ZooKeeper {rehearsal.zk}" in refusals[0]
    assert f"would use Kafka {NOWHERE}, not the running sandbox's" in refusals[1]


def test_a_rehearsal_shell_refuses_a_write_elsewhere_before_asking(rehearsal, cli, zk_server):
    result = cli(
        "reset",
        "--zk",
        NOWHERE,
        "--zk-root",
        rehearsal.zk_root,
        "--bootstrap-servers",
        rehearsal.broker,
        "--spout",
        "orders",
        "--to",
        "earliest",
        "--execute",
        "--yes",
        env={"OFFCTL_SANDBOX": "1"},
    )
    assert result.exit_code == 2 and f"ZooKeeper {NOWHERE}" in result.stderr and rehearsal.zk in result.stderr


def test_sandbox_env_without_a_sandbox_exits_3_and_leaves_a_shell_that_refuses(rehearsal):
    sandbox_state.sandbox_dir().joinpath("sandbox.json").unlink()
    proc = sh(
        f'export OFFCTL_ZK={NOWHERE} OFFCTL_ZK_ROOT=/kafka-spouts; eval "$(offctl sandbox env)" && exit 9; '
        f'offctl inspect; echo "inspect=$?"'
    )
    assert "no sandbox is running" in proc.stderr and "inspect=2" in proc.stdout, proc.stderr
    assert proc.returncode == 0  # the eval failed (false) and the && stopped there


def test_roots_of_the_environment_are_not_applied_to_the_implicit_sandbox(rehearsal, cli):
    result = cli(
        "inspect",
        "-o",
        "json",
        "--fail-on",
        "never",
        env={"OFFCTL_ZK_ROOT": "/kafka-spouts", "OFFCTL_TRIDENT_ROOT": "/transactional", "OFFCTL_JSTORM_ROOT": "/js"},
    )
    assert result.exit_code == 0, result.stderr
    consumers = {(c["store"], c["consumer"], c["zk_root"]) for c in result.json()["consumers"]}
    assert consumers == {
        ("zookeeper", "orders", rehearsal.zk_root),
        ("trident", "tx", rehearsal.trident_root),
        ("jstorm", next(c for s, c, _ in consumers if s == "jstorm"), rehearsal.jstorm_root),
    }
    assert "OFFCTL_ZK_ROOT, OFFCTL_TRIDENT_ROOT, OFFCTL_JSTORM_ROOT not applied to the sandbox" in result.stderr
    assert f"JStorm root {rehearsal.jstorm_root})" in result.stderr  # "using the sandbox (..., JStorm root R)"


@pytest.mark.parametrize(
    "flag, kept",
    [
        ("--zk-root", "Trident root {trident} and JStorm root {jstorm} are kept (give --trident-root or --jstorm-root"),
        ("--trident-root", "zkRoot {zk} and JStorm root {jstorm} are kept (give --zk-root or --jstorm-root"),
        ("--jstorm-root", "zkRoot {zk} and Trident root {trident} are kept (give --zk-root or --trident-root"),
    ],
)
def test_an_explicit_root_keeps_the_sandboxs_other_roots_and_says_so(rehearsal, cli, flag, kept):
    roots = {"zk": rehearsal.zk_root, "trident": rehearsal.trident_root, "jstorm": rehearsal.jstorm_root}
    root = roots[flag.removeprefix("--").removesuffix("-root")]
    result = cli("inspect", flag, root, "-o", "json", "--fail-on", "never")
    assert result.exit_code == 0, result.stderr
    consumers = {c["consumer"] for c in result.json()["consumers"]}
    assert len(consumers) == 3 and {"orders", "tx"} < consumers  # README's demo: every root kept
    assert f"{flag} given: the sandbox's {kept.format(**roots)}" in result.stderr


def test_the_confirmation_says_when_the_cluster_is_the_sandbox(rehearsal):
    proc = on_terminal(["reset", "--spout", "orders", "--to", "earliest", "--quiet-period", "0", "--execute"], b"n\n")
    assert proc.returncode == 8, proc.stderr
    assert (
        f"Reset 2 partitions of spout orders (zkRoot {rehearsal.zk_root}) on ZooKeeper {rehearsal.zk} (the sandbox)?"
    ) in proc.stderr


def test_sandbox_env_sets_or_unsets_every_connection_variable():
    """A variable a connection option reads and the rehearsal shell left alone would reach production."""
    from offctl.settings.kinds import CONNECTION
    from offctl.settings.options import OPTIONS

    read = {o.env for o in OPTIONS.values() if o.panel == CONNECTION and o.env}
    assert read and read - {"OFFCTL_TIMEOUT"} == (
        set(sandbox_state.rehearsal_env(sandbox_state.Sandbox("", 0, "", 0, "")))
        | set(sandbox_state.UNSET_IN_REHEARSAL)
    ) - {"OFFCTL_SANDBOX", "OFFCTL_SPARK_MASTER"}
