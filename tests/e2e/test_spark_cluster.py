"""The audit on a real Spark cluster: a standalone master and worker (pyspark's own spark-class), the README's
spark-submit lines run as written, executors whose default Python has no offctl.

The lines are read from README.md, not copied. The executors get offctl only the way the README ships it
(the packed environment); a run without that step must fail, which shows the executors really run a Python
of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from offctl.adapters import servers
from tests.conftest import fresh_copy, readme_block
from tests.e2e.test_audit_e2e import fleet  # noqa: F401 - the same small fleet as the local-mode audit tests

pytestmark = [pytest.mark.zookeeper, pytest.mark.kafka, pytest.mark.spark]

BARE_PYTHON = "/usr/bin/python3.11"  # Debian's Python 3.11: no offctl, no kazoo, no confluent-kafka


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not Path(BARE_PYTHON).exists():
        pytest.fail(f"{BARE_PYTHON} is missing: the executors' bare Python (Debian's python3.11)")
    try:
        started = servers.start_spark_standalone(
            tmp_path_factory.mktemp("spark-cluster"), workers=1, cores=2, memory="1g"
        )
    except servers.OffctlError as exc:
        pytest.fail(f"Spark standalone did not start: {exc}")
    yield started
    started.stop()


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A copy of the project, with the test's venv as its .venv (the README's first command made it)."""
    where = fresh_copy(tmp_path_factory.mktemp("clone") / "offctl")
    (where / ".venv").symlink_to(Path(sys.prefix))
    return where


def submit(project: Path, cluster, flags: list[str], block: str) -> subprocess.CompletedProcess:
    zk, root, bootstrap, storm = (
        flags[flags.index(f) + 1] for f in ("--zk", "--zk-root", "--bootstrap-servers", "--storm-root")
    )
    # The cluster's defaults: executors run Debian's bare Python unless the submission ships one.
    conf = project / "cluster-conf"
    conf.mkdir(exist_ok=True)
    (conf / "spark-defaults.conf").write_text(f"spark.pyspark.python {BARE_PYTHON}\n")
    env = {
        **os.environ,
        "SPARK_MASTER": cluster.url,
        "OFFCTL_ZK": zk,
        "OFFCTL_ZK_ROOT": root,
        "OFFCTL_BOOTSTRAP_SERVERS": bootstrap,
        "OFFCTL_STORM_ROOT": storm,
        "SPARK_CONF_DIR": str(conf),
    }
    for var in ("VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME"):
        env.pop(var, None)
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block], cwd=project, env=env, capture_output=True, text=True, timeout=900
    )


def test_the_readme_spark_submit_lines_run_on_a_standalone_cluster(project, cluster, fleet, cli):  # noqa: F811
    flags, _ = fleet
    block = readme_block("### On a Spark cluster: spark-submit")
    proc = submit(project, cluster, flags, block)
    assert proc.returncode == 0, proc.stderr[-4000:]
    doc = json.loads((project / "audit.json").read_text())  # stdout was the document alone
    # the reads ran in executor processes, not in the driver
    assert doc["read_by"] and doc["driver"] and doc["driver"] not in doc["read_by"]
    # the findings are inspect's on the same data
    inspected = cli("inspect", *flags[: flags.index("--group")], "-o", "json", "--fail-on", "never").json()
    key = lambda f: (f["code"], f["consumer"], f["topic"], f["partition"], f["message"])  # noqa: E731
    assert sorted(map(key, doc["findings"])) == sorted(map(key, inspected["findings"]))
    assert doc["summary"]["partitions"] == inspected["summary"]["partitions"] == 7
    # Spark's own logging stays quiet: no INFO lines from the driver
    assert not [line for line in proc.stderr.splitlines() if " INFO " in line], proc.stderr[-2000:]


def test_without_the_packed_environment_the_executors_cannot_run_offctl(project, cluster, fleet):  # noqa: F811
    """The control: the same submission without shipping offctl fails on the executors' bare Python."""
    flags, _ = fleet
    block = readme_block("### On a Spark cluster: spark-submit")
    submit_line = next(line for line in block.splitlines() if line.startswith("spark-submit"))
    unshipped = submit_line.replace(
        "--archives offctl-env.tar.gz#env --conf spark.pyspark.python=./env/bin/python ", ""
    )
    assert unshipped != submit_line
    proc = submit(project, cluster, flags, ". .venv/bin/activate\n" + unshipped)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "No module named" in proc.stderr or "ModuleNotFoundError" in proc.stderr
