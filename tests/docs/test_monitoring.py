"""docs/monitoring: the alert rules under promtool, the dashboard against the exporter's metric names, and a
real Prometheus scraping `offctl serve` against the real ZooKeeper and broker."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from offctl.adapters import servers
from offctl.core.rules.analyze import analyze
from offctl.faces.serve.monitor import Collector, Monitor
from tests.conftest import _unavailable, storm_record
from tests.e2e.test_serve import snapshot, start_serve, wait_for

MONITORING = Path(__file__).resolve().parents[2] / "docs" / "monitoring"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        _unavailable(name, FileNotFoundError(f"{name} not found: apt-get install prometheus"))
    return found


def test_the_alert_rules_pass_their_promtool_tests():
    promtool = tool("promtool")
    checked = subprocess.run([promtool, "check", "rules", "alerts.yml"], cwd=MONITORING, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run(
        [promtool, "test", "rules", "alerts_test.yml"], cwd=MONITORING, capture_output=True, text=True
    )
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
    config = subprocess.run(
        [promtool, "check", "config", "prometheus.yml"], cwd=MONITORING, capture_output=True, text=True
    )
    assert config.returncode == 0, config.stdout + config.stderr


def exporter_metric_names() -> set[str]:
    from dataclasses import replace

    from offctl.core.records.model import Headroom
    from offctl.core.time.timelag import positions

    m = Monitor()
    for i in range(3):
        report = analyze(snapshot(i * 60_000, {0: 10, 1: 99}, log_end=100 + 10 * i))  # a growing log
        m.update(replace(report, headrooms={p: Headroom(3600.0, "broker") for p in positions(report.rows)}), 0.1)
    return {s.name for family in Collector(m).collect() for s in family.samples}


def test_the_dashboard_and_alerts_use_only_metrics_the_exporter_serves():
    names = exporter_metric_names()
    exprs = [
        t["expr"]
        for p in json.loads((MONITORING / "grafana-dashboard.json").read_text())["panels"]
        for t in p["targets"]
    ]
    exprs += re.findall(r"expr: (.*)", (MONITORING / "alerts.yml").read_text())
    used = {n for e in exprs for n in re.findall(r"\b(offctl_[a-z_]+)", e)}
    assert used and used <= names, used - names


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_a_real_prometheus_follows_lag_status_and_findings(zk, kafka39, names, zk_server, tmp_path):
    prometheus = tool("prometheus")
    topic = kafka39.filled_topic(names("orders"), 2, 10)
    root = names.root + "/spouts"
    zk.create(f"{root}/s/partition_0", storm_record(topic, 0, 4), makepath=True)
    zk.create(f"{root}/s/partition_1", storm_record(topic, 1, 50), makepath=True)  # above the log end
    serve, port = start_serve("--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", kafka39.bootstrap)
    web = servers.free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"scrape_configs:\n  - job_name: offctl\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
    prom = None
    try:
        try:
            prom = servers._spawn_env(
                "Prometheus",
                [
                    prometheus,
                    f"--config.file={tmp_path / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'data'}",
                    f"--web.listen-address=127.0.0.1:{web}",
                ],
                web,
                tmp_path / "prometheus.log",
                60,
                None,
            )
        except servers.OffctlError as exc:
            _unavailable("Prometheus", exc)

        def query(q: str) -> dict:
            url = f"http://127.0.0.1:{web}/api/v1/query?" + urllib.parse.urlencode({"query": q})
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    result = json.load(r)["data"]["result"]
            except urllib.error.HTTPError as exc:
                if exc.code != 503:
                    raise
                return {}  # Prometheus listens before its storage is ready: not yet an answer
            return {tuple(sorted(s["metric"].items())): float(s["value"][1]) for s in result}

        def one(q: str):
            got = query(q)
            return next(iter(got.values())) if got else None

        assert wait_for(lambda: one('offctl_partition_lag{consumer="s",partition="0"}') == 6.0, 60)
        assert wait_for(lambda: one('offctl_consumer_findings{consumer="s",code="OFFSET_ABOVE_LOG_END"}') == 1.0)
        zk.set(f"{root}/s/partition_0", storm_record(topic, 0, 8))
        assert wait_for(lambda: one('offctl_partition_lag{consumer="s",partition="0"}') == 2.0, 60)
        # partition 0 moved and is within the log: it has a status now, from the exporter's own window
        assert wait_for(lambda: one('offctl_partition_status{consumer="s",partition="0"}') is not None, 60)
        assert one("offctl_up") == 1.0
        # the time lag of the message partition 0 resumes at, with its source as a gauge of its own (0: the
        # message), and docs/monitoring's query for exact figures only
        assert wait_for(lambda: one('offctl_partition_time_lag_source{consumer="s",partition="0"}') == 0.0, 60)
        assert (
            one(
                'offctl_partition_time_lag_seconds{consumer="s",partition="0"} >= 0 and on (store, consumer, '
                "zk_root, topic, partition) offctl_partition_time_lag_source < 2"
            )
            is not None
        )
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=30)
        if prom is not None:
            servers.stop(prom.pid)
