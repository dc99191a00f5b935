"""Fixtures: a real ZooKeeper and the Tansu broker on free loopback ports, stopped by pid at the end.

Servers are started once per session; each test isolates itself with unique roots, topics and groups
(the `names` fixture). A server that cannot start fails the tests that need it: a skipped integration test
is not a pass. Set OFFCTL_ALLOW_SKIP=1 to skip them instead, on a machine without Java or ZooKeeper.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from offctl.adapters import servers
from offctl.errors import OffctlError

ALLOW_SKIP = os.environ.get("OFFCTL_ALLOW_SKIP") == "1"

# Backups, audit logs and the sandbox state go to a directory of this run, never the user's: a sandbox the
# developer has running must not answer the tests' commands.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="offctl-test-state-")
# Likewise the config file (offctl/settings.py): a developer's ~/.config/offctl/config.toml, or a context chosen in
# their shell, must not change what the tests' commands connect to or how they judge.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="offctl-test-config-")
os.environ.pop("OFFCTL_CONFIG", None)
os.environ.pop("OFFCTL_CONTEXT", None)


@pytest.fixture(autouse=True)
def _signals_given_back():
    """A test that leaves offctl's SIGINT/SIGTERM handling installed in this process, or either signal blocked,
    makes the programs the suite starts later inherit a blocked mask: they ignore SIGTERM (a served exporter then
    outlived its test). Such a test fails here, and what it left is put back so the next ones run as they should."""
    import signal

    from offctl import interrupts

    yield
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, []) & interrupts.SIGNALS
    installed = sorted(s.name for s in interrupts.SIGNALS if signal.getsignal(s) is interrupts.handler)
    if blocked or installed:
        interrupts.uninstall()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupts.SIGNALS)
        for sig in interrupts.SIGNALS:
            if signal.getsignal(sig) is interrupts.handler:
                signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        interrupts.start()
        pytest.fail(f"the test left {sorted(s.name for s in blocked)} blocked and offctl's handler on {installed}: "
                    f"call offctl through main(), which gives them back", pytrace=False)


@pytest.fixture(autouse=True)
def _fresh_secrets():
    """The values offctl remembers to redact (offctl.inputs.secret) are a process's: each offctl process starts
    with none. A test that runs offctl in this process must not leave its own (a SASL username "storm", say) to
    be redacted from the next test's messages."""
    from offctl import inputs

    saved = set(inputs._secrets)
    yield
    inputs._secrets.clear()
    inputs._secrets.update(saved)


def _unavailable(what: str, exc: Exception):
    if ALLOW_SKIP:
        pytest.skip(f"{what} not available (OFFCTL_ALLOW_SKIP=1): {exc}")
    pytest.fail(f"{what} could not start: {exc} (set OFFCTL_ALLOW_SKIP=1 to skip instead)", pytrace=False)


def _serve(what: str, start):
    """Start a server for the whole session and stop it by pid at the end."""
    try:
        server = start()
    except OffctlError as exc:
        _unavailable(what, exc)
    yield server
    servers.stop(server.pid)


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory):
    yield from _serve("ZooKeeper", lambda: servers.start_zookeeper(tmp_path_factory.mktemp("zookeeper")))


@pytest.fixture(scope="session")
def broker(tmp_path_factory):
    yield from _serve("Kafka broker", lambda: servers.start_broker(tmp_path_factory.mktemp("broker")))


@pytest.fixture(scope="session")
def spark():
    """Spark in local mode, started once: `offctl audit` in the tests uses it rather than its own."""
    from offctl.adapters import spark as adapter

    try:
        session, _ = adapter.start("local[2]", {"spark.sql.shuffle.partitions": "4"})
    except OffctlError as exc:
        _unavailable("Spark", exc)
    yield session
    adapter.stop(session)


@pytest.fixture(scope="session")
def zk(zk_server):
    from kazoo.client import KazooClient

    client = KazooClient(hosts=zk_server.address)
    client.start(timeout=30)
    yield client
    client.stop()
    client.close()


@pytest.fixture(scope="session")
def kafka(broker):
    return KafkaHelper(broker.address)


class KafkaHelper:
    """Seeds the broker. One record per produce call: Tansu's high watermark is wrong after batches."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self._producer = None

    def create_topic(self, name: str, partitions: int, config: dict[str, str] | None = None) -> None:
        from confluent_kafka.admin import NewTopic

        for future in self.admin.create_topics([NewTopic(name, partitions, 1, config=config or {})]).values():
            future.result(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            md = self.admin.list_topics(timeout=10)
            if name in md.topics and len(md.topics[name].partitions) == partitions:
                return
            time.sleep(0.1)
        raise AssertionError(f"topic {name} did not appear")

    def produce(self, topic: str, partition: int, count: int) -> None:
        self.produce_records(topic, partition, [{"value": b"m%d" % i} for i in range(count)])

    def produce_records(self, topic: str, partition: int, records: list[dict]) -> None:
        """Records with the fields given (value, key, timestamp, headers), one per request."""
        from confluent_kafka import Producer

        if self._producer is None:
            self._producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 0})
        for record in records:
            self._producer.produce(topic, partition=partition, **record)
            self._producer.flush(30)

    def filled_topic(self, name: str, partitions: int, messages: int) -> str:
        """A new topic with `messages` records in each partition; returns its name."""
        self.create_topic(name, partitions)
        for p in range(partitions):
            self.produce(name, p, messages)
        return name

    def commit(self, group: str, topic: str, offsets: dict[int, int], metadata: str | None = None) -> None:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        tps = [TopicPartition(topic, p, o, metadata) if metadata else TopicPartition(topic, p, o)
               for p, o in offsets.items()]
        for future in self.admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)]).values():
            future.result(timeout=30)


def storm_record(topic: str, partition: int, offset: int, *, topology_id: str = "orders-topology-1-1700000000",
                 topology_name: str | None = None, broker: str = "127.0.0.1:9092") -> bytes:
    """A node byte for byte as storm-kafka's PartitionManager.commit() writes it in every release
    (v0.9.2-incubating to v1.2.4): ImmutableMap key order, json-simple's JSONValue.toJSONString (no spaces,
    '/' escaped as '\\/')."""
    host, port = broker.rsplit(":", 1)
    return json.dumps({
        "topology": {"id": topology_id, "name": topology_name or topology_id.rsplit("-", 2)[0]},
        "offset": offset, "partition": partition,
        "broker": {"host": host, "port": int(port)}, "topic": topic,
    }, separators=(",", ":")).replace("/", "\\/").encode()


_counter = itertools.count()


@dataclass
class Names:
    prefix: str

    def __call__(self, what: str) -> str:
        return f"{self.prefix}-{what}"

    @property
    def root(self) -> str:
        return f"/{self.prefix}"


@pytest.fixture
def names(request) -> Names:
    """Unique names for this test's roots, topics and groups on the shared servers."""
    base = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40]
    return Names(f"{base}-{next(_counter)}")


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def cli():
    """Run the real offctl CLI in-process; returns exit code, stdout and stderr apart."""
    from offctl.commands.app import app

    runner = CliRunner()

    def run(*args: str, env: dict | None = None, input=None) -> Result:
        result = runner.invoke(app, list(args), env=env, input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return run


# --- the README, as written ---------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def readme_block(heading: str) -> str:
    """The first ```sh block after `heading` in README.md: tests run what the README says, not a copy."""
    m = re.search(re.escape(heading) + r".*?```sh\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert m, f"README.md has no sh block under {heading!r}"
    return m.group(1)


def fresh_copy(where: Path) -> Path:
    """The project as a fresh clone has it (no venv, no build or test leftovers), at `where`."""
    shutil.copytree(REPO, where, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build",
                                                               "offctl-env*", ".pytest_cache", ".hypothesis"))
    return where
