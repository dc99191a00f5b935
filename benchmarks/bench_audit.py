"""Benchmark: `offctl audit` on Spark local[2] against single-process `offctl inspect`, at 10,000 and 100,000
partitions (spouts of 100 partitions, each on its own topic of 100 partitions), in one run.

Seeds a local ZooKeeper and broker with the first size, measures, grows the fleet to the second size,
measures again. For each size:
  - `offctl inspect --output json` as a new process (the single-process baseline);
  - `offctl audit --out DIR --format parquet` in this process, on a Spark session started once (its start-up
    is timed apart and excluded from the per-partition figures).
Targets (issue 4): the audit's time per partition at the larger size is at most 1.2x that at the smaller;
peak driver memory under 2 GiB (the Python driver and the Spark driver JVM, which in local mode also runs
the executor's JVM side).

Then, on the same data at the largest size, the audit on a Spark standalone cluster (issue 14): a master
and two workers of one core each, started with pyspark's spark-class, executors in processes of their own.
Its start-up (cluster and session) is reported apart.

    .venv/bin/python benchmarks/bench_audit.py [--sizes 10000,100000] [--master local[2]] [--no-standalone]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_inspect import ROOT, seed  # the same healthy fleet as the inspect benchmark
from kazoo.client import KazooClient

from offctl.adapters import servers

PARTITIONS = 100


def inspect_cli(zk: str, bootstrap: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "offctl",
            "inspect",
            "--zk",
            zk,
            "--zk-root",
            ROOT,
            "--bootstrap-servers",
            bootstrap,
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - t0
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and not doc["findings"], (proc.returncode, doc["summary"], proc.stderr[-500:])
    return elapsed, doc["summary"]["partitions"]


def audit_run(zk: str, bootstrap: str, out: str) -> tuple[float, int, dict]:
    from offctl.faces.audit.job import AuditSettings, audit
    from offctl.settings.connection import Connection
    from offctl.settings.run import Reading

    conn = Connection(zk=zk, zk_roots=(ROOT,), bootstrap_servers=bootstrap)
    t0 = time.perf_counter()
    with audit(AuditSettings(Reading(conn), out=out)) as done:
        result = done.result
    elapsed = time.perf_counter() - t0
    assert not result.tally.by_code and not result.tally.incomplete, (result.tally.summary(), result.tally.incomplete)
    return elapsed, result.tally.partitions, result.timings


def standalone(zk: str, bootstrap: str, size: int, tmp: Path, local_s: float, local_master: str) -> None:
    """The audit at `size` on a standalone master with two one-core workers (executors run this venv's
    Python, so offctl is there without packing: this measures Spark, not shipping)."""
    from offctl.adapters import spark as adapter

    t0 = time.perf_counter()
    cluster = servers.start_spark_standalone(tmp / "spark", workers=2, cores=1, memory="2g")
    cluster_s = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        session, _ = adapter.start(cluster.url, {"spark.pyspark.python": sys.executable, "spark.executor.memory": "1g"})
        session_s = time.perf_counter() - t0
        audit_s, n, phases = audit_run(zk, bootstrap, str(tmp / f"out-standalone-{size}"))
        assert n == size, (n, size)
        print(
            f"standalone cluster (master + 2 workers x 1 core): cluster start-up {cluster_s:.1f}s, session "
            f"{session_s:.1f}s (excluded below)"
        )
        print(
            f"  audit (standalone, parquet) at {size:,}: {audit_s:7.2f} s  {audit_s / size * 1e6:6.1f} us/partition  "
            + ", ".join(f"{k} {v:.1f}s" for k, v in phases.items())
        )
        print(f"  beside {local_master} on the same data: {local_s:7.2f} s ({audit_s / local_s:.2f}x)")
        adapter.stop(session)
    finally:
        cluster.stop()


def vm_hwm_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="partition counts, ascending, multiples of 100")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--no-standalone", action="store_true", help="skip the standalone-cluster run")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        zk_server = servers.start_zookeeper(Path(tmp) / "zk")
        broker = servers.start_broker(Path(tmp))
        try:
            from offctl.adapters import spark as adapter

            t0 = time.perf_counter()
            session, _ = adapter.start(args.master, {})
            startup = time.perf_counter() - t0
            jvm_pid = session.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
            print(f"Spark {session.version} on {args.master}: start-up {startup:.1f}s (excluded below)")
            zk = KazooClient(hosts=zk_server.address, timeout=30)
            zk.start()
            seeded, figures = 0, []
            for size in sizes:
                t0 = time.perf_counter()
                seed(zk, broker.address, size // PARTITIONS, PARTITIONS, first=seeded // PARTITIONS)
                seeded = size
                print(
                    f"seeded {size:,} partitions ({size // PARTITIONS} spouts and topics) in "
                    f"{time.perf_counter() - t0:.0f}s"
                )
                inspect_s, n_inspect = inspect_cli(zk_server.address, broker.address)
                audit_s, n_audit, phases = audit_run(zk_server.address, broker.address, f"{tmp}/out-{size}")
                assert n_inspect == n_audit == size, (n_inspect, n_audit, size)
                figures.append((size, inspect_s, audit_s))
                print(f"  inspect (one process)      : {inspect_s:7.2f} s  {inspect_s / size * 1e6:6.1f} us/partition")
                print(
                    f"  audit ({args.master}, parquet) : {audit_s:7.2f} s  {audit_s / size * 1e6:6.1f} us/partition  "
                    + ", ".join(f"{k} {v:.1f}s" for k, v in phases.items())
                )
            zk.stop()
            zk.close()
            (small, _, a_small), (large, _, a_large) = figures[0], figures[-1]
            ratio = (a_large / large) / (a_small / small)
            print(f"audit time per partition, {large:,} vs {small:,}: {ratio:.2f}x  (target <= 1.2x)")
            python_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            jvm_peak = vm_hwm_mib(jvm_pid)
            print(
                f"peak driver memory: Python {python_peak:.0f} MiB, Spark driver JVM {jvm_peak:.0f} MiB "
                f"(total {python_peak + jvm_peak:.0f} MiB; target < 2048 MiB)"
            )
            adapter.stop(session)
            if not args.no_standalone:
                standalone(zk_server.address, broker.address, large, Path(tmp), a_large, args.master)
        finally:
            servers.stop(broker.pid)
            servers.stop(zk_server.pid)


if __name__ == "__main__":
    main()
