"""offctl serve: the exporter's state on plain data, and the real command against real servers, scraped
over HTTP."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import replace

import pytest

from offctl.adapters import servers
from offctl.core.records.model import PartitionLog, Snapshot, ZkNode
from offctl.core.rules.analyze import analyze
from offctl.faces.serve.monitor import Collector, Monitor
from tests.conftest import storm_record


def snapshot(at_ms: int, offsets: dict[int, int], *, log_end: int = 100, incomplete=()) -> Snapshot:
    nodes = tuple(
        ZkNode("/r", "s", f"/r/s/partition_{p}", p, None, storm_record("t", p, o), 1, at_ms) for p, o in offsets.items()
    )
    return Snapshot(
        at_ms,
        zk_nodes=nodes,
        cluster={"t": {p: PartitionLog(0, log_end) for p in offsets}},
        running=frozenset(),
        incomplete=tuple(incomplete),
    )


def samples(monitor: Monitor) -> dict[tuple, tuple[float, float | None]]:
    out = {}
    for family in Collector(monitor).collect():
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = (s.value, s.timestamp)
    return out


def test_the_window_stays_bounded_and_forgets_partitions_that_are_gone():
    m = Monitor(window=3)
    for i in range(5):
        m.update(analyze(snapshot(i * 60_000, {0: 10, 1: 10})), 0.1)
    assert {len(w) for w in m.observations.values()} == {3}
    m.update(analyze(snapshot(400_000, {0: 10})), 0.1)
    assert len(m.observations) == 1


def test_statuses_follow_the_history_rules():
    m = Monitor(window=10)
    for i in range(4):  # never moves, lag 90, topology not running: STOP
        m.update(analyze(snapshot(i * 60_000, {0: 10})), 0.1)
    got = samples(m)
    status = [v for (name, labels), (v, _) in got.items() if name == "offctl_partition_status"]
    assert status == [3.0]  # STOP
    assert [v for (name, _), (v, _) in got.items() if name == "offctl_consumer_status"] == [3.0]


def test_the_pace_serve_gives_the_next_cycles_retention_risk_is_each_windows():
    """Issue 28, rule 4 of offctl.core.time.retention: partition 0 stands still while the log grows (its message ages
    with the clock: 1.0), partition 1 keeps pace (not falling behind: absent), 2 consumes a quarter of what comes."""
    m = Monitor(window=10)
    for i in range(4):
        m.update(analyze(snapshot(i * 60_000, {0: 10, 1: 10 + 20 * i, 2: 10 + 5 * i}, log_end=100 + 20 * i)), 0.1)
    assert m.falling_behind() == {("zookeeper", "s", "/r", "t", 0): 1.0, ("zookeeper", "s", "/r", "t", 2): 0.75}


def test_a_failed_read_keeps_the_last_values_with_their_old_time_and_says_so():
    m = Monitor()
    m.update(analyze(snapshot(60_000, {0: 10})), 0.1)
    before = samples(m)
    m.update(analyze(snapshot(120_000, {0: 50}, incomplete=("ZooKeeper at zk1:2181 did not answer",))), 0.1)
    m.failed("Kafka at k1:9092: broker down")
    after = samples(m)
    lag = [k for k in after if k[0] == "offctl_partition_lag"][0]
    assert after[lag] == before[lag] == (90.0, 60.0)  # the last good value, stamped with when it was read
    assert after[("offctl_up", ())][0] == 0.0
    assert after[("offctl_read_errors_total", (("store", "zookeeper"),))][0] == 1
    assert after[("offctl_read_errors_total", (("store", "kafka"),))][0] == 1
    assert not m.healthy(121.0, 30.0)


def test_time_lags_come_from_the_message_where_read_else_the_estimate_and_say_which():
    from dataclasses import replace

    from offctl.core.records.model import TimeLag

    m = Monitor()
    offsets = {0: 10, 1: 99, 2: 120}  # 2 reaches the log end (120) in the last cycle: caught up
    # the log end grows 100, 110, 120: the history has a rate to estimate from; the last cycle read 0's message
    reports = [analyze(snapshot(i * 60_000, offsets, log_end=100 + 10 * i)) for i in range(3)]
    for report in reports[:-1]:
        m.update(report, 0.1)
    m.update(replace(reports[-1], time_lags={("t", 0, 10): TimeLag(42.0, "message")}), 0.1)
    got = samples(m)

    def value(name: str, **labels) -> float | None:
        return next((v for (n, ls), (v, _) in got.items() if n == name and labels.items() <= dict(ls).items()), None)

    assert [value("offctl_partition_time_lag_seconds", partition=str(p)) for p in range(3)] == [42.0, 126.0, 0.0]
    assert [value("offctl_partition_time_lag_source", partition=str(p)) for p in range(3)] == [0.0, 2.0, 1.0]
    # the consumer's largest is partition 1's estimate, and says so
    assert (value("offctl_consumer_time_lag_max_seconds"), value("offctl_consumer_time_lag_max_source")) == (126.0, 2.0)


def test_the_per_partition_page_is_prometheus_clients_writer_over_add_metric_line_for_line():
    """The collector makes per-partition samples lazily, for speed at 100,000 partitions: its page must be what
    prometheus-client writes for families filled the documented way (add_metric), partitions without a value
    (out of range: no lag; no status yet) included."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily

    from offctl.core.time.timelag import NO_LAG, SOURCE_CODES
    from offctl.render.metrics import PARTITION_FAMILIES, PARTITION_LABELS, STATUS_CODES

    m = Monitor()
    for i in range(3):  # partition 2 out of range (no lag); 3 joins in the last cycle (no status yet)
        m.update(
            analyze(
                snapshot(i * 60_000, {0: 10, 1: 99 + i, 2: 150, **({3: 5} if i == 2 else {})}, log_end=100 + 10 * i)
            ),
            0.1,
        )
    report, at = m.cycle.report, m.cycle.report.captured_ms / 1000
    families = {name: GaugeMetricFamily(name, doc, labels=list(PARTITION_LABELS)) for name, doc in PARTITION_FAMILIES}
    for row in report.rows:
        r = row.record
        status, time_lag = m.cycle.statuses.get(row.partition_key, (None, NO_LAG))
        labels = [
            r.key.store,
            r.key.consumer,
            r.key.zk_root or "",
            row.topic or "",
            str(r.partition),
            r.topology_name or "",
        ]
        for name, value in (
            ("committed_offset", r.committed),
            ("log_start_offset", row.log_start),
            ("log_end_offset", row.log_end),
            ("lag", row.lag),
            ("time_lag_seconds", time_lag.seconds),
            ("time_lag_source", SOURCE_CODES.get(time_lag.source)),
            ("status", STATUS_CODES.get(status) if status else None),
            ("lost_to_retention", row.lost_to_retention),
        ):
            if value is not None:
                families[f"offctl_partition_{name}"].add_metric(labels, float(value), timestamp=at)
    reference = CollectorRegistry()
    reference.register(type("Reference", (), {"collect": lambda self: iter(families.values())})())
    served = CollectorRegistry()
    served.register(Collector(m))
    page = generate_latest(served).decode().splitlines()
    expected = generate_latest(reference).decode().splitlines()
    assert [line for line in page if "offctl_partition_" in line] == expected
    assert not any(line.startswith("offctl_partition_lag{") and 'partition="2"' in line for line in page)
    assert any(line.startswith("offctl_partition_committed_offset{") and 'partition="3"' in line for line in page)
    assert not any(line.startswith("offctl_partition_status{") and 'partition="3"' in line for line in page)


def test_without_partition_metrics_only_consumer_and_exporter_series_remain():
    m = Monitor(partition_metrics=False)
    m.update(analyze(snapshot(60_000, {p: 10 for p in range(50)})), 0.1)
    names = {name for name, _ in samples(m)}
    assert not {n for n in names if n.startswith("offctl_partition_")}
    assert {"offctl_consumer_lag_total", "offctl_consumer_lag_max", "offctl_up"} <= names


class InTheChild:
    """A collector that does, in the render's child, what `then` said when the child was forked: nothing, wait until
    the test opens the gate (a render that runs as long as the test needs, without timing), raise, or die. Unless
    it does nothing, it first says its pid."""

    def __init__(self) -> None:
        self.then = "nothing"
        self.r, self.w = os.pipe()
        self.pids_r, self.pids_w = os.pipe()

    def open(self) -> None:
        os.write(self.w, b"x")

    def pid(self) -> int:
        return int(os.read(self.pids_r, 20))

    def collect(self):
        if self.then != "nothing":
            os.write(self.pids_w, str(os.getpid()).encode())
        if self.then == "wait":
            os.read(self.r, 1)
        elif self.then == "raise":
            raise RuntimeError("the writer failed")
        elif self.then == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        return iter(())

    def close(self) -> None:
        for fd in (self.r, self.w, self.pids_r, self.pids_w):
            os.close(fd)


@pytest.fixture
def forked():
    """serve's forked render of a monitor after three cycles, with an InTheChild after the exporter's families;
    the lines it logged."""
    from offctl.faces.serve.exporter import Rendered, registry_of

    m, child, lines = three_cycles(3), InTheChild(), []

    def registry():
        r = registry_of(m, rendered)
        r.register(child)
        return r

    rendered = Rendered(m, log=lines.append, registry_factory=registry)
    yield rendered, child, lines
    rendered.close()
    child.close()


def reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child any more: reaped, no zombie
        return True
    return False


def three_cycles(partitions: int) -> Monitor:
    m = Monitor()
    for i in range(3):  # the last partition out of range (no lag), statuses from the second cycle on
        m.update(
            analyze(
                snapshot(
                    i * 60_000, {p: 10 + i for p in range(partitions - 1)} | {partitions - 1: 500}, log_end=100 + 10 * i
                )
            ),
            0.1,
        )
    return m


@pytest.mark.parametrize("partitions", [3, 2_000])  # 2,000: a page of many pipe buffers
def test_the_forked_render_is_the_in_process_render_of_the_same_state_line_for_line(partitions):
    from prometheus_client import generate_latest

    from offctl.faces.serve.exporter import Rendered, registry_of

    m = three_cycles(partitions)
    logged: list[str] = []
    rendered = Rendered(m, log=logged.append)
    expected = generate_latest(registry_of(m, rendered)).decode().splitlines()
    rendered.refresh()
    rendered.wait()
    assert rendered.body.decode().splitlines() == expected
    assert sum(line.startswith("offctl_partition_committed_offset{") for line in expected) == partitions
    assert rendered.child is None and rendered.failures == 0 and logged == []


def test_a_render_still_running_when_the_next_cycle_ends_skips_that_cycles_render(forked):
    rendered, child, lines = forked
    child.then = "wait"
    rendered.refresh()
    pid = child.pid()
    assert rendered.child == pid and rendered.body is None
    rendered.monitor.update(analyze(snapshot(180_000, {0: 50, 1: 50, 2: 500}, log_end=130)), 0.1)
    rendered.refresh()  # the child still waits at the gate: one render at a time
    assert rendered.skipped == 1 and rendered.child == pid and "skipped" in lines[-1]
    child.open()
    rendered.wait()
    assert reaped(pid) and rendered.failures == 0
    # the page is the state the child was forked with: before the fourth cycle
    assert metric(rendered.body.decode(), "offctl_partition_committed_offset", partition=0) == 12.0
    child.then = "nothing"
    rendered.refresh()
    rendered.wait()
    page = rendered.body.decode()
    assert metric(page, "offctl_partition_committed_offset", partition=0) == 50.0
    assert metric(page, "offctl_render_skipped_total") == 1.0
    assert metric(page, "offctl_render_duration_seconds") is not None


@pytest.mark.parametrize(
    "then, said", [("raise", "exit status 1"), ("die", "killed by signal 9"), ("wait", "timed out after 0.5s")]
)  # a gate never opened
def test_a_render_that_fails_or_times_out_leaves_the_last_page_is_counted_logged_and_reaped(forked, then, said):
    from offctl.faces.serve.exporter import answer

    rendered, child, lines = forked
    rendered.timeout_s = 0.5
    rendered.refresh()
    rendered.wait()
    last = rendered.body
    assert last is not None and rendered.failures == 0
    child.then = then
    rendered.refresh()
    rendered.wait()
    pid = child.pid()
    assert rendered.body is last and rendered.failures == 1
    assert said in lines[-1] and "serving the last page" in lines[-1]
    assert reaped(pid) and rendered.child is None
    status, _, health = answer(rendered.monitor, 30.0, rendered, "/healthz")
    assert status == 503 and said in health.decode()  # the page does not move until a render succeeds: not healthy
    child.then = "nothing"
    rendered.refresh()  # the next cycle's render is tried, and says what failed
    rendered.wait()
    assert metric(rendered.body.decode(), "offctl_render_failures_total") == 1.0
    assert rendered.last_failure is None


def test_closing_ends_a_running_render_quietly(forked):
    rendered, child, lines = forked
    child.then = "wait"
    rendered.refresh()
    pid = child.pid()
    rendered.close()  # serve stops (SIGTERM, Ctrl-C) while a render runs
    assert reaped(pid) and rendered.child is None
    assert rendered.body is None and rendered.failures == 0 and lines == []


# --- the real command --------------------------------------------------------------------------------------


def scrape(port: int, path: str = "/metrics") -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric(text: str, name: str, **labels) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0])) if "{" in line else {}
            if all(found.get(k) == str(v) for k, v in labels.items()):
                return float(line.split("}")[-1].split()[0] if "{" in line else line.split()[1])
    return None


def wait_for(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("timed out")


def start_serve(*args: str) -> tuple[subprocess.Popen, int]:
    port = servers.free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "offctl", "serve", "--listen", f"127.0.0.1:{port}", "--interval", "1", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: _listening(port), 30)
    return proc, port


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_serve_follows_the_spouts_and_stops_cleanly_on_sigterm(zk, kafka39, names, zk_server):
    topic = kafka39.filled_topic(names("orders"), 2, 10)
    root = names.root + "/spouts"
    for p in range(2):
        zk.create(f"{root}/s/partition_{p}", storm_record(topic, p, 4), makepath=True)
    proc, port = start_serve("--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", kafka39.bootstrap)
    try:
        first = wait_for(lambda: metric(scrape(port)[1], "offctl_partition_lag", consumer="s", partition=0))
        assert first == 6.0
        zk.set(f"{root}/s/partition_0", storm_record(topic, 0, 9))
        assert wait_for(lambda: metric(scrape(port)[1], "offctl_partition_lag", consumer="s", partition=0) == 1.0)
        text = scrape(port)[1]
        assert metric(text, "offctl_consumer_lag_total", consumer="s") == 7.0
        assert metric(text, "offctl_up") == 1.0
        assert scrape(port, "/healthz")[0] == 200
        status, body = scrape(port, "/status.json")
        assert status == 200 and '"consumer":"s"' in body
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "stopped" in err, err
    assert not _listening(port)


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_a_store_that_goes_away_is_a_metric_and_a_log_line_not_a_crash(kafka39, names, tmp_path):
    zk_server = servers.start_zookeeper(tmp_path / "zk")
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zk_server.address)
    client.start(timeout=30)
    topic = kafka39.filled_topic(names("orders"), 1, 5)
    client.create("/spouts/s/partition_0", storm_record(topic, 0, 2), makepath=True)
    client.stop()
    proc, port = start_serve(
        "--zk", zk_server.address, "--zk-root", "/spouts", "--bootstrap-servers", kafka39.bootstrap, "--timeout", "1"
    )
    try:
        wait_for(lambda: metric(scrape(port)[1], "offctl_partition_lag", consumer="s") == 3.0)
        stamped = [line for line in scrape(port)[1].splitlines() if line.startswith("offctl_partition_lag{")][0]
        servers.stop(zk_server.pid)
        wait_for(lambda: (metric(scrape(port)[1], "offctl_read_errors_total", store="zookeeper") or 0) >= 2, 60)
        text = scrape(port)[1]
        assert metric(text, "offctl_up") == 0.0
        assert stamped in text.splitlines()  # the last value, with the time it was read: not fresh
        assert scrape(port, "/healthz")[0] == 503
        assert proc.poll() is None  # still serving
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        servers.stop(zk_server.pid)
    assert "cycle failed" in err and proc.returncode == 0


def test_a_bad_listen_address_is_a_usage_error(cli):
    result = cli("serve", "--zk", "127.0.0.1:1", "--zk-root", "/x", "--listen", "nowhere")
    assert result.exit_code == 2 and "--listen" in result.stderr


# --- offctl watch ------------------------------------------------------------------------------------------------


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_watch_shows_offsets_moving_and_leaves_cleanly_on_ctrl_c(zk, kafka39, names, zk_server):
    topic = kafka39.filled_topic(names("orders"), 1, 10)
    root = names.root + "/spouts"
    zk.create(f"{root}/w/partition_0", storm_record(topic, 0, 3), makepath=True)
    flags = ["--zk", zk_server.address, "--zk-root", root, "--bootstrap-servers", kafka39.bootstrap]
    proc = subprocess.Popen(
        [sys.executable, "-m", "offctl", "watch", *flags, "-n", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Every refresh is printed (stdout is a pipe): read them as they come, and move the offset only once a refresh
    # has shown 3 (a fixed sleep raced a slow start-up: the first refresh then read 7, and no move was shown).
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        wait_for(lambda: "refresh 1" in "".join(lines), 60)
        zk.set(f"{root}/w/partition_0", storm_record(topic, 0, 7))
        wait_for(lambda: "+4" in "".join(lines), 60)  # a refresh after the move shows it (7 - 3)
    finally:
        proc.send_signal(signal.SIGINT)
    err = proc.stderr.read()
    proc.wait(timeout=30)
    reader.join(timeout=30)
    out = "".join(lines)
    assert proc.returncode == 0, err
    # The consumer column wraps its name across lines, at a place that depends on how long the session's names have
    # grown (the test passed alone and failed after another file): the column's pieces, joined, hold it whole.
    consumers = "".join(line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│"))
    assert "offctl watch" in out and f"{root}/w" in consumers, out
    assert "+4" in out and "↓" in out  # the move, and the lag going down


def test_watch_stops_after_count(cli, zk_server, names, kafka39):
    result = cli(
        "watch",
        "--zk",
        zk_server.address,
        "--zk-root",
        names.root + "/none",
        "--bootstrap-servers",
        kafka39.bootstrap,
        "--count",
        "1",
    )
    assert result.exit_code == 0 and "refresh 1" in result.stdout


@pytest.mark.zookeeper
@pytest.mark.kafka
def test_watch_in_a_real_terminal_redraws_in_place_and_ctrl_c_leaves(zk, kafka39, names, zk_server, tmp_path):
    """tmux gives watch a terminal: rich Live redraws one table in place; Ctrl-C ends it with exit 0."""
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.fail("tmux is missing (apt-get install tmux)")
    topic = kafka39.filled_topic(names("orders"), 1, 10)
    root = names.root + "/spouts"
    zk.create(f"{root}/t/partition_0", storm_record(topic, 0, 3), makepath=True)
    rc = tmp_path / "rc"
    session = names("watch")
    command = (
        f"{sys.executable} -m offctl watch --zk {zk_server.address} --zk-root {root} --bootstrap-servers "
        f"{kafka39.bootstrap} -n 0.5; echo $? > {rc}"
    )
    subprocess.run([tmux, "new-session", "-d", "-s", session, "-x", "160", "-y", "40", command], check=True)
    try:
        screen = wait_for(
            lambda: (
                (
                    s := subprocess.run(
                        [tmux, "capture-pane", "-p", "-t", session], capture_output=True, text=True
                    ).stdout
                )
                and "refresh 3" in s
                and s
            ),
            60,
        )
        assert screen.count("offctl watch:") == 1  # redrawn in place, not appended
        subprocess.run([tmux, "send-keys", "-t", session, "C-c"], check=True)
        assert wait_for(lambda: rc.exists() and rc.read_text().strip(), 30) == "0"
    finally:
        subprocess.run([tmux, "kill-session", "-t", session], capture_output=True)


# --- serve's HTTP server (issue 28 item 9) ----------------------------------------------------------------------


@pytest.fixture
def http_server():
    """serve's HTTP server (its app on offctl's HTTP stack, as serve starts it) over a monitor that has seen one
    cycle, on a free loopback port, with a head deadline of 3 s and room for three connections."""
    from offctl.adapters.webserver import LIMITS, listen
    from offctl.adapters.webserver import http_server as stack
    from offctl.faces.serve.exporter import METHODS, Rendered, make_app

    monitor = Monitor(window=3)
    monitor.update(analyze(snapshot(1_000, {0: 40})), 0.1)
    limits = replace(LIMITS, head_s=3.0, max_connections=3)
    server = stack(
        make_app(monitor, 30.0, Rendered(monitor, log=lambda line: None)),
        listen("127.0.0.1", 0, limits),
        METHODS,
        "offctl serve",
        limits,
    )
    server.start("test-serve-http")
    yield server
    server.stop()


def raw(port: int, request: bytes) -> bytes:
    """Send `request` as is and read the answer until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(request)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("method", ["FOO", "POST", "PUT", "DELETE", "OPTIONS"])
@pytest.mark.parametrize("path", ["/metrics", "/healthz", "/status.json", "/nowhere"])
def test_a_method_other_than_get_or_head_is_405_with_allow(http_server, method, path):
    """Issue 28: `FOO /metrics` and `POST /metrics` were answered 200 with the page."""
    answer = raw(http_server.port, f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode())
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ", 2)[1] == b"405", answer[:300]
    assert b"\r\nallow: GET, HEAD" in head.lower().replace(b"get, head", b"GET, HEAD") and b"offctl_" not in body


def test_head_is_gets_status_and_headers_without_the_body(http_server):
    port = http_server.port
    get_head, _, get_body = raw(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").partition(b"\r\n\r\n")
    head, _, body = raw(port, b"HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n").partition(b"\r\n\r\n")
    assert b" 200 " in get_head.split(b"\r\n")[0] and b"offctl_" in get_body
    assert b" 200 " in head.split(b"\r\n")[0] and body == b""
    assert f"content-length: {len(get_body)}".encode() in head.lower().split(b"\r\n")


def test_clients_that_never_finish_the_request_are_dropped_and_a_scrape_is_still_served(http_server):
    """Issue 28: clients that sent half a request line held a thread each until they hung up. Two such clients
    (below the bound of three) hold their connections; a scrape meanwhile is answered; each slow client's connection
    is then closed by the server (its recv ends with EOF, not with the test's own 20 s timeout)."""
    port = http_server.port
    slow = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(2)]
    try:
        for s in slow:
            s.sendall(b"GET /metr")
        status, text = scrape(port)
        assert status == 200 and "offctl_" in text
        for s in slow:
            assert s.recv(65536) == b""  # closed by the server, nothing answered
    finally:
        for s in slow:
            s.close()
    assert scrape(port)[0] == 200


def test_beyond_the_bound_the_oldest_idle_connection_is_shed_and_the_scrape_served(http_server):
    """Issue 34: the bound of connections turned idle clients into a denial of service (the scrape was the one
    refused). With the three slots held by clients that sent half a request, a scrape sheds the oldest of them and
    is answered."""
    port = http_server.port
    slow = []
    try:
        for _ in range(3):
            slow.append(socket.create_connection(("127.0.0.1", port), timeout=20))
            slow[-1].sendall(b"GET /metr")
            wait_for(lambda: http_server.connections == len(slow), 10)
        assert scrape(port)[0] == 200
        assert http_server.protocol.shed == 1 and http_server.protocol.refused == 0
        assert slow[0].recv(65536) == b""  # closed: shed (counted above), not dropped by the deadline
    finally:
        for s in slow:
            s.close()
    assert scrape(port)[0] == 200


@pytest.mark.parametrize("sent", [b"GET /metrics HTTP/1.1\r\nHost: x\r\n", b""], ids=["headers-unfinished", "nothing"])
def test_a_request_whose_headers_never_end_is_dropped(http_server, sent):
    with socket.create_connection(("127.0.0.1", http_server.port), timeout=20) as s:
        s.sendall(sent)
        assert s.recv(65536) == b""


def test_a_client_that_trickles_its_request_is_dropped_by_the_deadline_not_kept_by_each_byte(http_server):
    """A byte every 0.2 s never lets a per-read timeout expire; the head's deadline (3 s here) does. The client
    stops after 200 bytes (40 s): the server must have closed the connection long before."""
    from tests.support import hostile

    assert hostile.trickle(http_server.port, b"GET /metrics HTTP/1.1\r\n" + b"X-Slow: " + b"a" * 200, 0.2)


def test_each_groups_commit_period_is_its_profiles_in_the_window_rules():
    """Profiles (offctl.core.rules.judge): a group whose profile commits every 10 minutes is not falling behind after 3
    minutes of standing still; one on the defaults (30 s) is."""
    from offctl.core.records.model import KafkaCommit, Thresholds
    from offctl.core.rules.judge import analyze_each
    from offctl.core.rules.profiles import Profile, Profiles
    from offctl.core.storm.releases import SpoutProfile

    profiles = Profiles(
        Thresholds(), (Profile("slow", "slow", Thresholds(spout=SpoutProfile(commit_period_ms=600_000))),)
    )
    m = Monitor(window=10)
    for i in range(4):
        snap = Snapshot(
            i * 60_000,
            commits=(KafkaCommit("fast", "t", 0, 10, None), KafkaCommit("slow", "t", 0, 10, None)),
            cluster={"t": {0: PartitionLog(0, 100 + 20 * i)}},
            running=frozenset(),
        )
        m.update(analyze_each(snap, profiles), 0.1)
    assert m.falling_behind() == {("kafka", "fast", "", "t", 0): 1.0}


def test_a_free_port_lies_below_the_ephemeral_range_where_no_client_connection_takes_it():
    """The race a fixture's server lost (ZooKeeper exiting 1 at start, port in use): a port bind(0) gives is one the
    kernel also hands to outgoing connections, which can take it before the server binds."""
    low = servers._ephemeral_low()
    ports = {servers.free_port() for _ in range(50)}
    assert all(servers.LOWEST_PORT <= p < low for p in ports) and len(ports) > 1
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free when handed out


def test_a_free_port_falls_back_to_the_kernels_where_the_range_leaves_no_room(monkeypatch):
    monkeypatch.setattr(servers, "_ephemeral_low", lambda: servers.LOWEST_PORT + 10)
    port = servers.free_port()
    assert not servers.LOWEST_PORT <= port < servers.LOWEST_PORT + 10  # bind(0)'s, not a pick from a range too small
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
