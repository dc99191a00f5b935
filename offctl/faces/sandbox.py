"""`offctl sandbox`: a local ZooKeeper and Apache Kafka 3.9 (ZooKeeper mode: BROKER) on free loopback ports,
remembered in a state file so other commands pick them up, seeded with a realistic fleet, and stopped by pid. Kafka
comes from the jars kafka/pom.xml fetches (offctl.adapters.servers.kafka_classpath says how when they are missing:
exit 3).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

from offctl.adapters import servers
from offctl.core.records.parse import storm_kafka_record
from offctl.core.storm import jstorm
from offctl.errors import OffctlError, StoreUnavailable, UsageError
from offctl.settings.sandbox import (
    JSTORM_ROOT,
    ROOT,
    SANDBOX_STORM_ROOT,
    TRIDENT_ROOT,
    Sandbox,
    active,
    load,
    sandbox_dir,
    save,
)


def up(directory: Path | None = None) -> tuple[Sandbox, bool]:
    """Start both servers (or find them running); returns the sandbox and whether it was started now."""
    directory = directory or sandbox_dir()
    found = active(directory)
    if found is not None:
        return found, False
    down(directory)  # whatever half of an old sandbox is left
    servers.kafka_classpath(BROKER)  # Kafka's jars fetched? (else how to fetch them) before anything starts
    directory.mkdir(parents=True, exist_ok=True)
    zk = servers.start_zookeeper(directory / "zookeeper")
    try:
        broker = servers.start_broker(
            directory / "broker", settings=BROKER_SETTINGS, version=BROKER, zookeeper=zk.address + BROKER_CHROOT
        )
    except OffctlError:
        servers.stop(zk.pid)
        raise
    sandbox = Sandbox(str(directory), zk.pid, zk.address, broker.pid, broker.address)
    save(sandbox)
    return sandbox, True


def down(directory: Path | None = None) -> Sandbox | None:
    """Stop what the sandbox started, by pid, and forget it (its data lives in memory and in its folder)."""
    directory = directory or sandbox_dir()
    sandbox = load(directory)
    if sandbox is not None:
        servers.stop(sandbox.broker_pid)
        servers.stop(sandbox.zk_pid)
    if directory.exists():
        shutil.rmtree(directory, ignore_errors=True)
    return sandbox


# --- topologies: stop and start them for rehearsing runbooks -----------------------------------------------------


def _zk(sandbox: Sandbox):
    from kazoo.client import KazooClient

    client = KazooClient(hosts=sandbox.zk, timeout=10)
    client.start(timeout=10)
    return client


def topology(sandbox: Sandbox, action: str, name: str) -> list[str]:
    """`stop`: remove the topology's storm ids from <storm root>/storms (what `storm kill` does to the
    running-topology guard); `start`: put back what stop removed. Returns the storm ids."""
    from kazoo.exceptions import KazooException, NoNodeError
    from kazoo.handlers.threading import KazooTimeoutError

    stopped = dict(sandbox.stopped or {})
    storms = f"{sandbox.storm_root}/storms"
    try:
        zk = _zk(sandbox)
    except KazooTimeoutError:
        raise StoreUnavailable(f"the sandbox ZooKeeper at {sandbox.zk} does not answer") from None
    try:
        if action == "stop":
            ids = [i for i in zk.get_children(storms) if i == name or i.rsplit("-", 2)[0] == name]
            if not ids:
                raise UsageError(f"no running topology named {name} in the sandbox (see {storms})")
            for storm_id in ids:
                zk.delete(f"{storms}/{storm_id}")
            stopped[name] = sorted(set(stopped.get(name, [])) | set(ids))
        else:
            ids = stopped.pop(name, [])
            if not ids:
                raise UsageError(f"topology {name} was not stopped with `offctl sandbox topology stop`")
            for storm_id in ids:
                zk.ensure_path(f"{storms}/{storm_id}")
    except (NoNodeError, KazooException) as exc:
        raise StoreUnavailable(f"the sandbox ZooKeeper at {sandbox.zk}: {type(exc).__name__}") from None
    finally:
        zk.stop()
        zk.close()
    save(replace(sandbox, stopped=stopped))
    return ids


# --- the seeded fleet ------------------------------------------------------------------------------------------

RUNNING = (
    "orders-etl-3-1763700000",
    "payments-5-1763700100",
    "clicks-client-2-1763700200",
    "reports-1-1763600000",
    "audit-2-1763600500",  # shared-id's two topologies run, as in its runbook
    "orders-trident-4-1763700300",
    "clicks-trident-6-1763700400",
)
TOPICS = {
    "orders": (4, 20),
    "payments": (2, 10),
    "clicks": (3, 30),
    "archive": (1, 12),  # partitions, messages
    "events": (2, 40),
    "audit-trail": (1, 15),
    "profiles": (1, 30),
    "ledger": (1, 0),
}
# Topic settings: audit-trail's timestamps are the broker's (LogAppendTime: a time lag counts from when the broker
# appended the message); profiles is compacted, its keys written three times each and its segments rolled at once,
# so that the broker's cleaner leaves gaps in its offsets soon after the seed (peek shows them, and a cost counts
# "up to N" there).
CONFIGS = {
    "audit-trail": {"message.timestamp.type": "LogAppendTime"},
    "profiles": {
        "cleanup.policy": "compact",
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "min.compaction.lag.ms": "0",
        "delete.retention.ms": "100",
    },
}
KEYS = {"profiles": 10}  # messages keyed key-0 .. key-9, round and round
# Retention has deleted the first 25 messages of each events partition (DeleteRecords, as a retention pass moves the
# log start): events-spout stored 10 and 30, so partition 0 resumes below the log start (OFFSET_BELOW_LOG_START).
DELETED = {"events": 25}
# archive's messages are written this long before the seed, a minute apart: group archive-client resumes at
# offset 2, 4 h 58 min old at the seed, so `--topic-retention archive=6h` leaves it about an hour (RETENTION_RISK).
# The topic has no retention.ms of its own: without the option, the sandbox's reports stay as they were.
AGED = {"archive": 5 * 3_600_000}
# ledger is written by a transactional producer (LEDGER: each transaction's records, and how it ends): committed,
# aborted, committed, then one left open, its records dated LEDGER_OPEN_AGE_MS before the seed. The producer exits with
# it open; the broker keeps it open for LEDGER_TIMEOUT_MS (transaction.max.timeout.ms is raised to allow it), so a
# read_committed spout at the last stable offset 16 waits behind it (OPEN_TRANSACTION). Offsets: committed 0-5,
# marker 6, aborted 7-9, marker 10, committed 11-14, marker 15, open 16-17.
LEDGER = ((6, "commit"), (3, "abort"), (4, "commit"), (2, "open"))
LEDGER_OPEN_AGE_MS = 10 * 60_000
LEDGER_TIMEOUT_MS = 7 * 86_400_000
BROKER_SETTINGS = {"transaction.max.timeout.ms": str(LEDGER_TIMEOUT_MS)}
# The fleet's broker: Apache Kafka 3.9 in ZooKeeper mode (its registry under BROKER_CHROOT in the sandbox's ZooKeeper,
# as storm-kafka's ZkHosts reads it), the last release that serves storm-kafka's spouts and storm-kafka-client 1.x
# (Kafka 4.0 refuses their request versions, KIP-896: docs/storm.md). `offctl inspect --kafka-release 4.0` shows which
# of them an upgrade would stop.
BROKER = servers.KAFKA_ZK
BROKER_CHROOT = "/kafka"
# payments-spout is stuck on payments/1 at offset 2 (lag 8): the message there is a poison one, binary with
# control characters (a terminal must not be driven by it) and a header, for `offctl peek` to show and save
POISON = ("payments", 1, 2, b'{"amount": 12.5, "currency": "\x1b[31mEUR\x00\xff"}')


def _record(topic: str, partition: int, offset: int, topology: str, broker: str) -> bytes:
    """As PartitionManager.commit writes it (v1.2.4): ImmutableMap order, json-simple's bytes."""
    host, port = broker.rsplit(":", 1)
    return storm_kafka_record(topology, topology.rsplit("-", 2)[0], offset, partition, host, int(port), topic)


def fleet(broker: str) -> tuple[dict[str, bytes], dict[str, dict[tuple[str, int], tuple[int, str | None]]], list[str]]:
    """(ZooKeeper nodes by path, Kafka commits by group, what each consumer shows), for the seed."""
    orders, payments = "orders-etl-3-1763700000", "payments-5-1763700100"
    nodes: dict[str, bytes] = {}

    def spout(sid: str, topic: str, offsets: dict[int, int], topology: str, at: str = broker, folder: bool = False):
        for p, o in offsets.items():
            path = f"{ROOT}/{sid}/{topic}/partition_{p}" if folder else f"{ROOT}/{sid}/partition_{p}"
            nodes[path] = _record(topic, p, o, topology, at)

    spout("orders-etl", "orders", {0: 18, 1: 19, 2: 20, 3: 17}, orders)  # healthy, small lag
    spout("payments-spout", "payments", {0: 10, 1: 2}, payments)  # partition 1 lags by 8
    spout("legacy-clicks", "clicks", {0: 500, 1: 0}, "legacy-clicks-1-1700000000", at="old-broker:9092")
    spout("shared-id", "orders", {0: 5, 2: 5}, "reports-1-1763600000")
    spout("shared-id", "payments", {1: 5}, "audit-2-1763600500")
    nodes[f"{ROOT}/broken-spout/partition_0"] = b"{not json"
    nodes[f"{ROOT}/broken-spout/partition_1"] = _record("orders", 3, 4, orders, broker)  # says 3, sits in 1
    spout("ghost-spout", "deleted-topic", {0: 7, 1: 7}, "ghost-1-1700000000")
    spout("shrunk-spout", "orders", {0: 20, 1: 20, 2: 20, 3: 20, 9: 7}, orders)  # orders had 10 partitions
    spout("wildcard-spout", "orders", {0: 20, 1: 20, 2: 20, 3: 20}, orders, folder=True)
    spout("events-spout", "events", {0: 10, 1: 30}, "events-1-1763600900")  # partition 0's offset: deleted by
    # retention while its topology was stopped (it is not running: the out-of-range runbook repairs it)
    spout("profiles-spout", "profiles", {0: 3}, orders)  # lags on a compacted topic
    meta = json.dumps(
        {"topologyId": RUNNING[2], "taskId": 4, "threadName": "Thread-12-kafka-spout"}, separators=(",", ":")
    )
    commits = {
        "clicks-client": {("clicks", p): (25 + p, meta) for p in range(3)},
        "payments-tool": {("payments", 0): (3, None), ("payments", 1): (4, None)},  # written by a tool
        "archive-client": {("archive", 0): (2, meta)},  # lag 10, on messages written 5 h before the seed
        "audit-client": {("audit-trail", 0): (5, meta)},  # lag 10, timed by the broker's append time
        "ledger-client": {("ledger", 0): (16, meta)},  # read_committed: at the last stable offset, behind the open one
        "ledger-reports": {("ledger", 0): (0, meta)},  # read_committed: lag 16 to the last stable offset, 18 to the end
    }
    shows = [
        "/sandbox/spouts/orders-etl       healthy",
        "/sandbox/spouts/payments-spout   lag 8 on payments/1 (HIGH_LAG with --lag-threshold 5), stuck on a "
        "poison message at offset 2 (offctl peek --spout payments-spout)",
        "/sandbox/spouts/legacy-clicks    OFFSET_ABOVE_LOG_END, IGNORED_ZERO_OFFSET, MISSING_PARTITION, "
        "STALE_TOPOLOGY, STALE_BROKER",
        "/sandbox/spouts/shared-id        ID_COLLISION, TOPIC_MISMATCH",
        "/sandbox/spouts/broken-spout     MALFORMED_RECORD (not JSON), INCONSISTENT_RECORD (partition field "
        "disagrees with the node name; Storm uses the record)",
        "/sandbox/spouts/ghost-spout      UNKNOWN_TOPIC",
        "/sandbox/spouts/shrunk-spout     UNKNOWN_PARTITION",
        "/sandbox/spouts/wildcard-spout   healthy, <topic>/partition_N layout",
        "/sandbox/spouts/events-spout     OFFSET_BELOW_LOG_START on events/0 (offset 10, retention deleted up "
        "to 25), STALE_TOPOLOGY (its topology is stopped)",
        "group clicks-client              healthy: committed with Storm's metadata, as storm-kafka-client writes it",
        "group payments-tool              FOREIGN_COMMIT (no Storm metadata)",
        "group audit-client               lag 10 on audit-trail, a LogAppendTime topic: its time lag is from the "
        "broker's append time",
        "/sandbox/spouts/profiles-spout   lag on profiles, a compacted topic: once the broker's cleaner has run "
        "(seconds after the seed) `offctl peek --spout profiles-spout --count 5` shows the gaps",
        "group ledger-client              read_committed (--isolation-level read_committed): lag 0 to the last "
        "stable offset 16, waiting behind a transaction open since 10 min before the seed (OPEN_TRANSACTION); "
        "read_uncommitted it lags 2",
        "group ledger-reports             read_committed: lag 16 to the last stable offset; `offctl peek --group "
        "ledger-reports --isolation-level read_committed` counts 10 committed records, 3 aborted, 3 markers",
        "group archive-client             lag 10 on archive, written 5 h before the seed: `offctl inspect --group "
        "archive-client --topic-retention archive=6h` gives RETENTION_RISK (about an hour left after the seed; "
        "RETENTION_EXCEEDED once it has passed)",
    ]
    return nodes, commits, shows


def java_json(pairs: dict) -> str:
    """JSONValue.toJSONString of a java.util.HashMap built from `pairs`: keys in HashMap iteration order
    (bucket of hashCode ^ hashCode >>> 16 in a table of 16, then insertion order), '/' escaped as '\\/'."""

    def bucket(key: str) -> int:
        h = 0
        for ch in key:
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & 15

    keys = sorted(pairs, key=lambda k: (bucket(k), list(pairs).index(k)))
    body = ",".join(
        json.dumps(k) + ":" + (v if isinstance(v, _Raw) else json.dumps(v, separators=(",", ":")))
        for k, v in ((k, pairs[k]) for k in keys)
    )
    return ("{" + body + "}").replace("/", "\\/")


class _Raw(str):
    """An already serialised JSON value (an ImmutableMap keeps its insertion order)."""


def trident_meta(topic: str, partition: int, offset: int, next_offset: int, storm_id: str, broker: str) -> bytes:
    """A state node as TridentKafkaEmitter.doEmitNewPartitionBatch (v1.2.4) writes it: a HashMap, with
    ImmutableMaps for broker (host, port) and topology (name, id)."""
    host, port = broker.rsplit(":", 1)
    return java_json(
        {
            "offset": offset,
            "nextOffset": next_offset,
            "instanceId": storm_id,
            "partition": partition,
            "broker": _Raw(json.dumps({"host": host, "port": int(port)}, separators=(",", ":"))),
            "topic": topic,
            "topology": _Raw(json.dumps({"name": storm_id.rsplit("-", 2)[0], "id": storm_id}, separators=(",", ":"))),
        }
    ).encode()


def client_trident_meta(first: int, last: int, storm_id: str | None) -> bytes:
    """KafkaTridentSpoutBatchMetadata.toMap: {firstOffset, lastOffset, topologyId} in 2.x (v2.8.8)."""
    return java_json({"firstOffset": first, "lastOffset": last, "topologyId": storm_id}).encode()


def trident_fleet(broker: str) -> tuple[dict[str, bytes], list[str]]:
    """Trident state under TRIDENT_ROOT, as TransactionalState writes it: the user/ and partition folders
    (mkdir writes 7), a txid node per committed batch, two txids per partition (the older is cleaned up after
    the next success), and the coordinator's currtx."""
    nodes: dict[str, bytes] = {}
    orders, clicks = "orders-trident-4-1763700300", "clicks-trident-6-1763700400"

    def state(sid: str, partition_id: str, metas: dict[int, bytes]) -> None:
        base = f"{TRIDENT_ROOT}/{sid}"
        nodes.setdefault(f"{base}/user", b"")
        nodes[f"{base}/user/{partition_id}"] = b"7"
        nodes[f"{base}/coordinator/currtx"] = str(max(metas) + 1).encode()
        for txid, data in metas.items():
            nodes[f"{base}/user/{partition_id}/{txid}"] = data

    for p, at in {0: 18, 1: 19, 2: 20, 3: 16}.items():  # healthy, small lag
        state(
            "orders-trident",
            f"partition_{p}",
            {
                41: trident_meta("orders", p, at - 2, at - 1, orders, broker),
                42: trident_meta("orders", p, at - 1, at, orders, broker),
            },
        )
    state("orders-trident-broken", "partition_0", {7: b'{"offset":3,"instanceId":"x","topic":"orders"}'})
    state("orders-trident-broken", "partition_1", {7: b"{not json"})
    state("orders-trident-broken", "partition_2", {7: trident_meta("orders", 2, 90, 95, orders, broker)})
    for p in range(3):
        state(
            "clicks-trident",
            f"clicks@{p}",
            {8: client_trident_meta(20, 24 + p, clicks), 9: client_trident_meta(25 + p, 26 + p, clicks)},
        )
    state("clicks-trident-broken", "clicks@0", {3: b'{"firstOffset":5,"topologyId":"clicks-trident-6-1763700400"}'})
    state("clicks-trident-broken", "clicks@1", {3: client_trident_meta(40, 44, clicks)})
    nodes[f"{TRIDENT_ROOT}/word-counts/user/counts/5"] = b"{}"  # a Trident state that is not a Kafka spout's
    shows = [
        "trident orders-trident          storm-kafka Trident, healthy (lag 1 on orders/3)",
        "trident orders-trident-broken   MALFORMED_RECORD (no nextOffset: every batch fails; not JSON: starts "
        "fresh), OFFSET_ABOVE_LOG_END",
        "trident clicks-trident          storm-kafka-client Trident, healthy",
        "trident clicks-trident-broken   MALFORMED_RECORD (no lastOffset), OFFSET_ABOVE_LOG_END, MISSING_PARTITION",
        "trident word-counts             not a Kafka spout's state: left out with a note",
    ]
    return nodes, shows


def jstorm_fleet(broker: str) -> tuple[dict[str, bytes], list[str]]:
    """JStorm's Kafka spouts under JSTORM_ROOT, each record as PartitionConsumer.commitState writes it
    (jstorm.record_bytes at jstorm.node_path): a healthy one, and one of each finding JStorm's spouts have."""
    host, port = broker.rsplit(":", 1)
    nodes: dict[str, bytes] = {}

    def spout(topic: str, client: str, offsets: dict[int, int], topology: str, named: str | None = None) -> str:
        consumer = jstorm.consumer_id(topic, client)
        for p, o in offsets.items():
            data = jstorm.record_bytes(topology, o, p, host, int(port), named or topic)
            nodes[jstorm.node_path(JSTORM_ROOT, consumer, p)] = data
        return consumer

    spout("orders", "jstorm", {0: 18, 1: 19, 2: 17, 3: 19}, "orders-jstorm")  # fetches 19, 20, 18, 20: lag 1, 0, 2, 0
    spout("events", "jstorm", {0: 10, 1: 30}, "events-jstorm")  # events/0 fetches 11: retention deleted up to 25
    clicks = spout("clicks", "jstorm", {0: 29, 1: 45}, "clicks-jstorm")  # clicks/1 fetches 46, past the log end 30
    quoted = jstorm.record_bytes("clicks-jstorm", 12, 2, host, int(port), "clicks").replace(
        b'"offset":12,', b'"offset":"12",'
    )
    nodes[jstorm.node_path(JSTORM_ROOT, clicks, 2)] = quoted  # a string offset: the (Long) cast throws
    nodes[f"{jstorm.spouts_path(JSTORM_ROOT)}/{clicks}/01"] = nodes[jstorm.node_path(JSTORM_ROOT, clicks, 1)]
    spout("payments", "jstorm", {0: 5}, "payments-jstorm")  # two topologies on the default kafka.client.id
    spout("payments", "jstorm", {1: 5}, "billing-jstorm")
    spout("archive", "jstorm", {0: 4}, "archive-jstorm", named="archive-2024")  # copied from another topic's spout
    shows = [
        "jstorm orders/jstorm            healthy: lag 1 on orders/0 and 2 on orders/2 (JStorm's spout fetches the "
        "stored offset + 1)",
        "jstorm events/jstorm            OFFSET_BELOW_LOG_START on events/0 (stored 10: the spout fetches 11, "
        "retention deleted up to 25, and every fetch fails)",
        "jstorm clicks/jstorm            OFFSET_ABOVE_LOG_END on clicks/1 (stored 45: waits until the log end reaches "
        "46), MALFORMED_RECORD on clicks/2 (a string offset), UNREAD_NODE (01: the spout never reads it)",
        "jstorm payments/jstorm          ID_COLLISION (two topologies on the default kafka.client.id jstorm)",
        "jstorm archive/jstorm           TOPIC_MISMATCH (its record names archive-2024)",
    ]
    return nodes, shows


def _ledger(broker: str, now_ms: int) -> None:
    """ledger's transactions (LEDGER), from a transactional producer that exits with the last one open."""
    from confluent_kafka import Producer

    producer = Producer(
        {"bootstrap.servers": broker, "transactional.id": "sandbox-ledger", "transaction.timeout.ms": LEDGER_TIMEOUT_MS}
    )
    producer.init_transactions(30)
    for n, (count, end) in enumerate(LEDGER):
        producer.begin_transaction()
        dated = {"timestamp": now_ms - LEDGER_OPEN_AGE_MS} if end == "open" else {}
        for i in range(count):
            producer.produce("ledger", value=b"ledger-%d-%d" % (n, i), partition=0, **dated)
        if producer.flush(30):  # abort_transaction drops what is not sent: the aborted records must be in the log
            raise StoreUnavailable(f"the sandbox broker at {broker} did not take the ledger's records")
        if end == "commit":
            producer.commit_transaction(30)
        elif end == "abort":
            producer.abort_transaction(30)


def seed(sandbox: Sandbox) -> list[str]:
    """Write the fleet: ZooKeeper records are replaced each time; topics are created and filled once."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    nodes, commits, shows = fleet(sandbox.broker)
    trident_nodes, trident_shows = trident_fleet(sandbox.broker)
    jstorm_nodes, jstorm_shows = jstorm_fleet(sandbox.broker)
    try:
        admin = AdminClient({"bootstrap.servers": sandbox.broker})
        new = _create_topics(admin)
        _fill_topics(admin, sandbox.broker, new)
        _commit_groups(sandbox.broker, commits)
    except KafkaException as exc:
        raise StoreUnavailable(f"the sandbox broker at {sandbox.broker}: {exc}") from None
    _write_zookeeper(sandbox, {**nodes, **jstorm_nodes}, trident_nodes)
    save(replace(sandbox, seeded=True, stopped={}))
    return shows + trident_shows + jstorm_shows


def _create_topics(admin) -> list:
    """Create the fleet's topics the broker does not have yet (TOPICS, with CONFIGS); return them (NewTopic)."""
    from confluent_kafka.admin import NewTopic

    existing = set(admin.list_topics(timeout=10).topics)
    new = [NewTopic(t, n, 1, config=CONFIGS.get(t, {})) for t, (n, _) in TOPICS.items() if t not in existing]
    for future in admin.create_topics(new).values() if new else ():
        future.result(30)
    return new


def _fill_topics(admin, broker: str, new: list) -> None:
    """Fill the topics just created, once: their messages, the compacted topic's rolled segment, the ledger's
    transactions, and the records retention has deleted (DELETED)."""
    from confluent_kafka import Producer, TopicPartition

    producer = Producer(
        {"bootstrap.servers": broker, "linger.ms": 5, "max.in.flight.requests.per.connection": 1}
    )  # in order, whatever the retries
    now_ms = int(time.time() * 1000)
    _produce_messages(producer, new, now_ms)
    if "profiles" in {t.topic for t in new}:  # one more, past segment.ms: the broker rolls the segment the
        producer.flush(30)  # cleaner then compacts (it never touches the active one)
        time.sleep(0.2)
        producer.produce("profiles", key=b"key-0", value=b"profiles-0-latest", partition=0)
    if producer.flush(30):
        raise StoreUnavailable(f"the sandbox broker at {broker} did not take the seed's messages")
    if "ledger" in {t.topic for t in new}:
        _ledger(broker, now_ms)
    deleted = [
        TopicPartition(t.topic, p, DELETED[t.topic])
        for t in new
        if t.topic in DELETED
        for p in range(TOPICS[t.topic][0])
    ]
    for future in admin.delete_records(deleted).values() if deleted else ():
        future.result(30)


def _produce_messages(producer, new: list, now_ms: int) -> None:
    """Each new topic's TOPICS messages per partition: aged where AGED says, keyed where KEYS says, and the poison
    message where POISON says."""
    for topic in (t.topic for t in new):
        partitions, messages = TOPICS[topic]
        for p in range(partitions):
            for i in range(messages):
                # CreateTime as the producer sets it (the broker keeps it): old messages where AGED says
                aged = {"timestamp": now_ms - AGED[topic] + i * 60_000} if topic in AGED else {}
                if (topic, p, i) == POISON[:3]:
                    producer.produce(
                        topic, key=b"order-1042", value=POISON[3], partition=p, headers=[("trace-id", b"\x8f\x01\x02")]
                    )
                else:
                    keyed = {"key": b"key-%d" % (i % KEYS[topic])} if topic in KEYS else {}
                    producer.produce(topic, value=b"%s-%d-%d" % (topic.encode(), p, i), partition=p, **aged, **keyed)


def _commit_groups(bootstrap: str, commits: dict) -> None:
    """Commit each seeded group's offsets (and Storm's commit metadata, where it has some, byte for byte)."""
    from offctl.adapters.groups import GroupClient

    client = GroupClient(bootstrap, {}, 30)
    try:
        for group, offsets in commits.items():
            refused = client.commit(group, [(t, p, o, m) for (t, p), (o, m) in offsets.items()])
            if refused:
                raise StoreUnavailable(
                    f"the sandbox broker at {bootstrap} refused the seed's commit to group {group}: "
                    f"{', '.join(sorted(set(refused.values())))}"
                )
    finally:
        client.close()


def _write_zookeeper(sandbox: Sandbox, nodes: dict[str, bytes], trident_nodes: dict[str, bytes]) -> None:
    """Replace the sandbox's ZooKeeper tree: the running topologies, the spouts' records (storm-kafka's and JStorm's),
    the Trident state."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import KazooException
    from kazoo.handlers.threading import KazooTimeoutError

    zk = KazooClient(hosts=sandbox.zk, timeout=10)
    try:
        zk.start(timeout=10)
        if zk.exists("/sandbox"):
            zk.delete("/sandbox", recursive=True)
        for storm_id in RUNNING:
            zk.create(f"{SANDBOX_STORM_ROOT}/storms/{storm_id}", makepath=True)
        for path, data in nodes.items():
            zk.create(path, data, makepath=True)
        for path in sorted(trident_nodes, key=lambda p: p.count("/")):  # folders (data 7) before their txids
            zk.create(path, trident_nodes[path], makepath=True)
    except (KazooException, KazooTimeoutError) as exc:
        raise StoreUnavailable(f"the sandbox ZooKeeper at {sandbox.zk}: {type(exc).__name__}") from None
    finally:
        zk.stop()
        zk.close()
