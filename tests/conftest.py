"""Fixtures: a real ZooKeeper and Apache Kafka on free loopback ports, stopped by pid at the end: Kafka 4.4 in KRaft
mode (`broker`, the default) and Kafka 3.9 in ZooKeeper mode (`broker39`, registered in the test ZooKeeper under
/kafka39, for the storm-kafka era).

Servers are started once per session; each test isolates itself with unique roots, topics and groups
(the `names` fixture). A server that cannot start fails the tests that need it: a skipped integration test
is not a pass. Set OFFCTL_ALLOW_SKIP=1 to skip them instead, on a machine without Java or ZooKeeper.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import click.testing
import pytest

from offctl.adapters import servers
from offctl.errors import OffctlError

ALLOW_SKIP = os.environ.get("OFFCTL_ALLOW_SKIP") == "1"

# Backups, audit logs and the sandbox state go to a directory of this run, never the user's: a sandbox the
# developer has running must not answer the tests' commands.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="offctl-test-state-")
# Likewise the config file (offctl/settings/configfile.py): a developer's ~/.config/offctl/config.toml, or a context
# chosen in their shell, must not change what the tests' commands connect to or how they judge.
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
        pytest.fail(
            f"the test left {sorted(s.name for s in blocked)} blocked and offctl's handler on {installed}: "
            f"call offctl through main(), which gives them back",
            pytrace=False,
        )


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
    yield from _serve("Apache Kafka 4.4", lambda: servers.start_broker(tmp_path_factory.mktemp("broker")))


BROKER39_CHROOT = "/kafka39"


@pytest.fixture(scope="session")
def broker39(tmp_path_factory, zk_server):
    """Apache Kafka 3.9 in ZooKeeper mode: its broker registry is at BROKER39_CHROOT/brokers in the test ZooKeeper,
    as storm-kafka's ZkHosts and storm-kafka-monitor's old-spout mode read it."""
    yield from _serve(
        "Apache Kafka 3.9",
        lambda: servers.start_broker(
            tmp_path_factory.mktemp("broker39"), version=servers.KAFKA_ZK, zookeeper=zk_server.address + BROKER39_CHROOT
        ),
    )


@pytest.fixture(scope="session")
def kafka39(broker39):
    helper = KafkaHelper(broker39.address)
    yield helper
    helper.close()


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
    helper = KafkaHelper(broker.address)
    yield helper
    helper.close()  # before the broker stops: its clients would log every failed reconnect on stderr


class KafkaHelper:
    """Seeds a broker as producers do: records in batches, one flush per call."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self._producer = None

    def close(self) -> None:
        import gc

        self._producer = self.admin = None
        gc.collect()  # librdkafka's clients end when their Python objects go

    def create_topic(self, name: str, partitions: int, config: dict[str, str] | None = None, replicas: int = 1) -> None:
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        # A broker busy elsewhere (a ZooKeeper-mode controller writing thousands of partitions) may not answer one
        # request in time: ask again until the deadline, which only catches a hang; a topic that exists by then is
        # the earlier request's, landed.
        deadline, retry = time.monotonic() + 180, False
        while True:
            future = self.admin.create_topics(
                [NewTopic(name, partitions, replicas, config=config or {})], request_timeout=30
            )[name]
            try:
                future.result(timeout=35)
                break
            except KafkaException as exc:
                if retry and exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                    break
                if exc.args[0].code() != KafkaError._TIMED_OUT or time.monotonic() > deadline:
                    raise
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
            retry = True
        while time.monotonic() < deadline:  # until every partition has a leader that answers for it
            md = self.admin.list_topics(name, timeout=10)
            found = md.topics.get(name)
            if (
                found is not None
                and not found.error
                and len(found.partitions) == partitions
                and all(p.leader >= 0 for p in found.partitions.values())
                and self._offsets_answered(name)
            ):
                return
            time.sleep(0.1)
        raise AssertionError(f"topic {name} did not appear")

    def _offsets_answered(self, topic: str) -> bool:
        """A new topic's partitions answer ListOffsets once their leader has taken them on (a broker answers
        NOT_LEADER_OR_FOLLOWER before that)."""
        from confluent_kafka import KafkaException, TopicPartition
        from confluent_kafka.admin import OffsetSpec

        md = self.admin.list_topics(topic, timeout=10).topics[topic]
        asked = {TopicPartition(topic, p): OffsetSpec.latest() for p in md.partitions}
        try:
            for future in self.admin.list_offsets(asked, request_timeout=10).values():
                future.result(10)
        except KafkaException:
            return False
        return True

    def produce(self, topic: str, partition: int, count: int) -> None:
        self.produce_records(topic, partition, [{"value": b"m%d" % i} for i in range(count)])

    def produce_records(self, topic: str, partition: int, records: list[dict]) -> None:
        """Records with the fields given (value, key, timestamp, headers), in order, batched as a producer
        batches them; returns once the broker has them all."""
        from confluent_kafka import Producer

        if self._producer is None:
            self._producer = Producer(
                {
                    "bootstrap.servers": self.bootstrap,
                    "linger.ms": 5,
                    "acks": "all",
                    "max.in.flight.requests.per.connection": 1,
                }
            )  # in order, whatever the retries
        for record in records:
            # Stamped with Python's clock, which tests/clock/ahead moves and librdkafka's would not be.
            self._producer.produce(topic, partition=partition, **{"timestamp": int(time.time() * 1000), **record})
        assert self._producer.flush(30) == 0, "records left unsent"

    def filled_topic(self, name: str, partitions: int, messages: int) -> str:
        """A new topic with `messages` records in each partition; returns its name."""
        self.create_topic(name, partitions)
        for p in range(partitions):
            self.produce(name, p, messages)
        return name

    def commit(self, group: str, topic: str, offsets: dict[int, int], metadata: str | None = None) -> None:
        """Commit these offsets (with this metadata, byte for byte) as a tool does, through offctl's own group client
        (kafka-python: confluent-kafka adds a NUL to the metadata it writes)."""
        from offctl.adapters.groups import GroupClient

        client = GroupClient(self.bootstrap, {}, 30)
        try:
            refused = client.commit(group, [(topic, p, o, metadata) for p, o in offsets.items()])
        finally:
            client.close()
        assert not refused, refused

    def committed(self, group: str) -> dict[tuple[str, int], tuple[int, str | None]]:
        """(topic, partition) -> (offset, metadata) of the group's commits, exactly as the broker holds them."""
        from offctl.adapters.groups import GroupClient

        client = GroupClient(self.bootstrap, {}, 30)
        try:
            return client.offsets(group)
        finally:
            client.close()


# --- what a real broker keeps: a compacted log, transaction markers, a KIP-848 member --------------------------

DAY_MS = 86_400_000
T0_DAYS_AGO = 330
# When the records the tests write with a timestamp of their own were written: 02:00 UTC, T0_DAYS_AGO days before
# the run's day. Old enough to be days behind and to roll a segment at once, young enough for a year's retention;
# always that old, because it is taken from the clock. A fixed date aged against today's clock until retention (and
# offctl's retention and expiry rules) judged its records otherwise, and the suite passed or failed by the calendar.
# tests/clock/machine-ahead runs the suite with the machine's clock a year ahead, tests/clock/ahead with Python's
# (README: what each shows).
T0 = (int(time.time() * 1000) // DAY_MS - T0_DAYS_AGO) * DAY_MS + 2 * 3_600_000
# A compacted partition: keys a b a c c at offsets 0-4, then d at 5 in a segment of its own. The cleaner keeps the
# last record of each key in the segments before the active one, so it removes 0 and 3 and keeps 1, 2, 4 and 5.
COMPACTED_KEYS = (b"a", b"b", b"a", b"c", b"c", b"d")
COMPACTED_KEPT = (1, 2, 4, 5)
_compacted: dict[str, str] = {}


def compacted_at(offset: int) -> int:
    """When message `offset` of the compacted topic was written."""
    return T0 + offset * 1000


def compacted_topic(kafka) -> str:
    """A topic of one partition that the broker's log cleaner has compacted as COMPACTED_KEYS says, message o written
    at compacted_at(o); made once per broker and shared (nothing writes to it after). segment.ms 100 and the
    records' timestamps (T0, months old) make each produce request after the first roll a new segment
    (UnifiedLog.maybeRoll: the segment's first timestamp is older than segment.ms), so the last record closes the
    segment holding 0-4, which the cleaner compacts (min.cleanable.dirty.ratio 0.01, min.compaction.lag.ms 0) within
    log.cleaner.backoff.ms (15 s) of its next look: about 10 s, measured."""
    if kafka.bootstrap not in _compacted:
        topic = f"compacted-{time.time_ns()}"
        kafka.create_topic(
            topic,
            1,
            {
                "cleanup.policy": "compact",
                "segment.ms": "100",
                "min.compaction.lag.ms": "0",
                "min.cleanable.dirty.ratio": "0.01",
            },
        )
        records = [{"key": k, "value": b"v%d" % o, "timestamp": compacted_at(o)} for o, k in enumerate(COMPACTED_KEYS)]
        kafka.produce_records(topic, 0, records[:-1])
        kafka.produce_records(topic, 0, records[-1:])
        deadline = time.monotonic() + 60
        while (left := _offsets(kafka, topic)) != COMPACTED_KEPT:
            assert time.monotonic() < deadline, f"the log cleaner did not compact {topic} within 60 s: {left}"
            time.sleep(0.5)
        _compacted[kafka.bootstrap] = topic
    return _compacted[kafka.bootstrap]


def _offsets(kafka, topic: str) -> tuple[int, ...]:
    """The offsets of every message partition 0 of `topic` holds, read by offctl's own reader."""
    from offctl.adapters.kafka import KafkaStore

    store = KafkaStore(kafka.bootstrap, timeout=10)
    try:
        read = store.read_messages([(topic, 0, 0)], count=100)
    finally:
        store.close()
    return tuple(m.offset for m in read.messages.get((topic, 0, 0), ()))


def committed_transaction(kafka, topic: str, partition: int, count: int) -> int:
    """`count` messages written to an empty partition in one transaction, then committed; returns the offset of its
    commit marker (a control record: in the log, never handed to a consumer), the last before the log end."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap, "transactional.id": f"{topic}-{partition}"})
    producer.init_transactions(60)
    producer.begin_transaction()
    for o in range(count):
        producer.produce(topic, partition=partition, value=b"t%d" % o)
    producer.commit_transaction(60)
    # EndTxn answers once the coordinator has logged PREPARE_COMMIT; it writes the commit marker to the partition
    # after that (TransactionMarkerChannelManager sends WriteTxnMarkers on its own thread). Until the marker is in,
    # the log end is `count`, not the marker's offset + 1, and a read in between sees no gap: wait for it.
    wait_for_log_end(kafka, topic, partition, count + 1)
    return count


def wait_for_log_end(kafka, topic: str, partition: int, end: int, timeout_s: float = 30.0) -> None:
    """Until the partition's log end (its high watermark, as ListOffsets LATEST answers) is at least `end`."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    tp = TopicPartition(topic, partition)
    deadline = time.monotonic() + timeout_s
    while (got := kafka.admin.list_offsets({tp: OffsetSpec.latest()})[tp].result(10).offset) < end:
        if time.monotonic() > deadline:
            raise AssertionError(f"{topic}-{partition}: log end {got} did not reach {end} within {timeout_s:g}s")
        time.sleep(0.05)


@contextmanager
def joined_as_consumer(kafka, broker, group: str, topic: str):
    """A consumer of `group` subscribed to `topic` with group.protocol=consumer (KIP-848: the broker assigns the
    partitions), until the group is stable with the partitions assigned to it."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            "bootstrap.servers": broker.address,
            "group.id": group,
            "group.protocol": "consumer",
            "enable.auto.commit": False,
        }
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while True:
            consumer.poll(0.2)
            desc = kafka.admin.describe_consumer_groups([group])[group].result(30)
            if desc.state.name == "STABLE" and any(m.assignment.topic_partitions for m in desc.members):
                break
            assert time.monotonic() < deadline, f"group {group} did not become stable: {desc.state}"
        yield consumer
    finally:
        consumer.close()


# --- a broker with an authorizer: Apache Kafka 4.4, PLAINTEXT for the operator, SASL/PLAIN for the users --------

SASL_USERS = {"storm": "storm-secret", "reader": "reader-s3cret-pw", "nobody": "nobody-s3cret-pw"}


@dataclass(frozen=True)
class Guarded:
    """Apache Kafka 4.4 started with offsets.retention.minutes 1440 and log.retention.hours 6 in its
    server.properties and the StandardAuthorizer (nothing allowed without an ACL). `broker.address` is its PLAINTEXT
    listener, where the client is ANONYMOUS, a super user: an operator. `sasl` is its SASL_PLAINTEXT listener, where
    user storm (`storm_config`) may read and describe every topic and group and describe the cluster, and has no
    DescribeConfigs permission (the broker answers CLUSTER_AUTHORIZATION_FAILED and TOPIC_AUTHORIZATION_FAILED);
    users reader and nobody have only the ACLs a test grants them."""

    broker: servers.Broker

    @property
    def sasl(self) -> str:
        return self.broker.sasl_address

    def config(self, user: str = "storm", password: str | None = None) -> dict[str, str]:
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": password or SASL_USERS[user],
        }

    @property
    def storm_config(self) -> dict[str, str]:
        return self.config()

    @property
    def storm_flags(self) -> list[str]:
        return [
            "--bootstrap-servers",
            self.sasl,
            *(a for k, v in self.storm_config.items() for a in ("--kafka-config", f"{k}={v}")),
        ]

    def allow(self, user: str, *grants) -> None:
        """ACLs for `user`: (resource type, name, operation), each a literal ALLOW."""
        from confluent_kafka.admin import AclPermissionType

        self._acls(user, AclPermissionType.ALLOW, grants)

    def deny(self, user: str, *refusals) -> None:
        """ACLs for `user`: (resource type, name, operation), each a literal DENY, which wins over any ALLOW."""
        from confluent_kafka.admin import AclPermissionType

        self._acls(user, AclPermissionType.DENY, refusals)

    def _acls(self, user: str, permission, entries) -> None:
        from confluent_kafka.admin import AclBinding, AdminClient, ResourcePatternType

        admin = AdminClient({"bootstrap.servers": self.broker.address})
        for future in admin.create_acls(
            [
                AclBinding(kind, name, ResourcePatternType.LITERAL, f"User:{user}", "*", op, permission)
                for kind, name, op in entries
            ]
        ).values():
            future.result(30)


def start_guarded(log_dir) -> Guarded:
    from confluent_kafka.admin import AclOperation, ResourceType

    broker = servers.start_broker(
        log_dir, sasl_users=SASL_USERS, settings={"offsets.retention.minutes": "1440", "log.retention.hours": "6"}
    )
    try:
        guarded = Guarded(broker)
        guarded.allow(
            "storm",
            (ResourceType.TOPIC, "*", AclOperation.READ),  # READ implies DESCRIBE
            (ResourceType.GROUP, "*", AclOperation.READ),
            (ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE),
        )
    except BaseException:
        servers.stop(broker.pid)
        raise
    return guarded


@pytest.fixture(scope="session")
def guarded(tmp_path_factory):
    """The Guarded broker, started once a session, stopped by pid at the end."""
    try:
        on = start_guarded(tmp_path_factory.mktemp("guarded"))
    except OffctlError as exc:
        _unavailable("Apache Kafka 4.4 with an authorizer", exc)
    yield on
    servers.stop(on.broker.pid)


@pytest.fixture(scope="session")
def guarded_kafka(guarded):
    helper = KafkaHelper(guarded.broker.address)
    yield helper
    helper.close()


def storm_record(
    topic: str,
    partition: int,
    offset: int,
    *,
    topology_id: str = "orders-topology-1-1700000000",
    topology_name: str | None = None,
    broker: str = "127.0.0.1:9092",
) -> bytes:
    """A node byte for byte as storm-kafka's PartitionManager.commit() writes it in every release
    (v0.9.2-incubating to v1.2.4): ImmutableMap key order, json-simple's JSONValue.toJSONString (no spaces,
    '/' escaped as '\\/')."""
    host, port = broker.rsplit(":", 1)
    return (
        json.dumps(
            {
                "topology": {"id": topology_id, "name": topology_name or topology_id.rsplit("-", 2)[0]},
                "offset": offset,
                "partition": partition,
                "broker": {"host": host, "port": int(port)},
                "topic": topic,
            },
            separators=(",", ":"),
        )
        .replace("/", "\\/")
        .encode()
    )


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

    def run(*args: str, env: dict | None = None, input=None) -> Result:
        result = invoke(list(args), env=env, input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return run


@functools.cache
def _offctl_command():
    """offctl's Click command, built from its Typer app once a session (typer's CliRunner builds it on every
    invoke: some 40 ms, thousands of times in the suite). Commands look the functions they call up when they run, so
    a test's monkeypatch of them still takes."""
    import typer.main

    from offctl.commands.app import app

    return typer.main.get_command(app)


def invoke(args: list[str], **kwargs):
    """CliRunner().invoke(app, args, **kwargs), on the command built once (_offctl_command)."""
    return click.testing.CliRunner().invoke(_offctl_command(), args, **kwargs)


# --- the README, as written ---------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def readme_block(heading: str) -> str:
    """The first ```sh block after `heading` in README.md: tests run what the README says, not a copy."""
    m = re.search(re.escape(heading) + r".*?```sh\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert m, f"README.md has no sh block under {heading!r}"
    return m.group(1)


def fresh_copy(where: Path) -> Path:
    """The project as a fresh clone has it (no venv, no build or test leftovers), at `where`."""
    shutil.copytree(
        REPO,
        where,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", "build", "offctl-env*", ".pytest_cache", ".hypothesis"
        ),
    )
    return where
