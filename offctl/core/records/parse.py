"""What Storm writes, parsed defensively: storm-kafka node JSON, storm-kafka-client commit metadata,
storm ids. Nothing here raises on bad input; bad input becomes a `malformed` reason."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import orjson

from offctl.core.records.frozen import builder
from offctl.core.records.model import (
    KAFKA,
    STORM_KAFKA,
    STORM_KAFKA_CLIENT,
    TRIDENT,
    ZOOKEEPER,
    ConsumerKey,
    KafkaCommit,
    OffsetRecord,
    ZkNode,
)
from offctl.core.storm import jackson, javautf8, jsonsimple
from offctl.core.storm.releases import LEGACY_METADATA
from offctl.inputs import printable

# Offsets are Java longs; anything outside cannot have been written by Storm.
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
# A partition node holds ~200 bytes. ZooKeeper caps nodes at ~1 MiB; refuse to parse more than this.
# ZooKeeper's default jute.maxbuffer (0xfffff): the largest node a default server stores and a default client (Storm's
# Curator, offctl's kazoo) reads; offctl reads no larger one, which only a server and clients configured for it hold
MAX_NODE_BYTES = 0xFFFFF


def _is_int(value: object) -> bool:
    # JSON true/false parse to bool, which Python counts as int.
    return isinstance(value, int) and not isinstance(value, bool)


@lru_cache(maxsize=4096)  # a fleet has a few topology ids, each on many partition records
def parse_storm_id(storm_id: str | None) -> str | None:
    """Return the topology name of a storm id `<name>-<counter>-<epoch seconds>`, or None."""
    if not storm_id:
        return None
    parts = storm_id.rsplit("-", 2)
    if len(parts) == 3 and parts[0] and parts[1].isdigit() and parts[2].isdigit():
        return parts[0]
    return None


class _Rejected(ValueError):
    pass


def _reject_constant(name: str):
    raise _Rejected(f"{name} is not JSON")  # json-simple's lexer has no NaN or Infinity


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_ZEROS = b"0" * 19


def _has_long_digits(data: bytes) -> bool:
    """Whether the bytes hold a run of 19 digits, the shortest integer that can leave the long range. Found in
    C: every digit becomes 0, then a plain substring search (a regex scan of every position cost more than
    orjson's whole parse). JSON digits are single ASCII bytes, and U+FFFD is none, so the bytes answer for
    their decoded text too."""
    return _NINETEEN_ZEROS in data.translate(_DIGITS_AS_ZERO)


def _long(text: str) -> int:
    value = int(text)
    if not _LONG_MIN <= value <= _LONG_MAX:
        # json-simple's Yylex does Long.valueOf on every integer token: NumberFormatException fails the parse.
        raise _Rejected(f"integer {text[:24]}{'...' if len(text) > 24 else ''} {jsonsimple.OVERFLOW}")
    return value


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_LONG_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_long)


def load_json_simple(data: bytes) -> tuple[object, str | None, bool]:
    """(value, why it could not be parsed, whether the bytes were valid UTF-8), as ZkState.readJSON reads
    a node: `new String(bytes, "UTF-8")` (invalid bytes become U+FFFD, as many as Java makes: javautf8) then
    JSONValue.parse."""
    if len(data) > MAX_NODE_BYTES:
        return None, f"node data is {len(data)} bytes, more than ZooKeeper's default jute.maxbuffer allows a node", True
    if not _has_long_digits(data):
        # The fast path: orjson reads strict JSON (RFC 8259) in valid UTF-8 to the value json does, and fails
        # on all else (NaN, lone surrogates, invalid bytes, a BOM, trailing data, 1e400), which then takes the
        # path below. Only integers of 19 digits or more could differ (orjson makes floats of those beyond 64
        # bits), and they never come here. tests/faults: the two paths agree on any bytes.
        try:
            return orjson.loads(data), None, True
        except orjson.JSONDecodeError:
            pass
    return load_as_storm(data)


def load_as_storm(data: bytes) -> tuple[object, str | None, bool]:
    """load_json_simple without its fast path."""
    text, utf8 = javautf8.decode(data)  # new String(bytes, "UTF-8"): invalid bytes become U+FFFD as Java counts them
    try:
        # Only an integer of 19 digits or more can leave the long range: check those (rare) one by one.
        return (_LONG_DECODER if _has_long_digits(data) else _DECODER).decode(text), None, utf8
    except _Rejected as exc:
        return None, f"node data is not JSON as Storm parses it ({exc})", utf8
    except (ValueError, RecursionError):
        pass
    # What strict JSON refuses, json-simple may still read (leading zeros, skipped commas, raw control
    # characters in strings): read it as json-simple does.
    try:
        return jsonsimple.loads(text), None, utf8
    except (ValueError, RecursionError) as exc:
        return None, f"node data is not JSON as Storm parses it ({str(exc)[:80]})", utf8


def _is_str_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def _why_unusable(doc: object) -> str | None:
    """Why PartitionManager cannot take topology.id and offset from a parsed record, or None.

    PartitionManager (v0.9.2-incubating to v1.2.4): `jsonTopologyId = (String) ((Map) json.get("topology"))
    .get("id"); jsonOffset = (Long) json.get("offset");` inside a catch-all; either left null means "failed
    to parse JSON?" and the partition starts as if it had no record."""
    if doc is None:
        return "node data is JSON null"
    if not isinstance(doc, dict):
        return f"node data is JSON {type(doc).__name__}, not an object"
    topology = doc.get("topology")
    if not isinstance(topology, dict):
        return "record has no topology object" if topology is None else "topology is not an object"
    if not isinstance(topology.get("id"), str):
        return "topology.id is missing" if topology.get("id") is None else "topology.id is not a string"
    offset = doc.get("offset")
    if offset is None:
        return "record has no offset"
    if not _is_int(offset):
        return f"offset is {json.dumps(offset)[:40]}, not an integer"
    return None


def _inconsistencies(doc: dict, node: ZkNode, utf8: bool) -> tuple[str, ...]:
    """What a usable record says that is not as Storm writes it, and that Storm does not read."""
    found = []
    partition, topic = doc.get("partition"), doc.get("topic")
    if "partition" not in doc:
        found.append("no partition field")
    elif not _is_int(partition):
        found.append(f"partition is {json.dumps(partition)[:40]}, not an integer")
    elif partition != node.node_partition:
        found.append(f"partition field says {partition}, the node is partition_{node.node_partition}")
    if "topic" not in doc:
        found.append("no topic field")
    elif not isinstance(topic, str) or not topic:
        found.append(f"topic is {json.dumps(topic)[:40]}, not a topic name")
    if not isinstance(doc["topology"].get("name"), str):
        found.append("topology.name is not a string")
    broker = doc.get("broker")
    if broker is not None and not (
        isinstance(broker, dict)
        and _is_str_or_none(broker.get("host"))
        and (broker.get("port") is None or _is_int(broker.get("port")))
    ):
        found.append("broker is not an object with a string host and integer port")
    if not utf8:
        found.append("node data is not valid UTF-8 (Storm reads the bad bytes as U+FFFD)")
    return tuple(found)


@lru_cache(maxsize=4096)
def _zk_key(spout_id: str, zk_root: str) -> ConsumerKey:
    """One key object per spout, shared by its records (a spout has many partitions)."""
    return ConsumerKey(ZOOKEEPER, spout_id, zk_root)


_record = builder(OffsetRecord)  # OffsetRecord(...), at a quarter of the cost (offctl.core.records.frozen)

# A record as PartitionManager.commit writes it (storm_kafka_record), with names of printable ASCII without
# escapes and numbers of at most 18 digits (always a Java long): nearly every node of a fleet. Read straight
# from the bytes, it gives the record the general path gives (tests/faults/test_hostile_input.py holds the two
# to each other on canonical and near-canonical bytes); any other bytes take the general path.
_ASCII = r"[ !#-\[\]-~]"  # printable ASCII but " and \
_NUMBER = r"(0|-?[1-9][0-9]{0,17})"
_CANONICAL = re.compile(
    rf'\{{"topology":\{{"id":"({_ASCII}*)","name":"({_ASCII}*)"\}},"offset":{_NUMBER},'
    rf'"partition":{_NUMBER},"broker":\{{"host":"({_ASCII}*)","port":{_NUMBER}\}},'
    rf'"topic":"({_ASCII}+)"\}}'
)


def parse_zk_node(node: ZkNode) -> OffsetRecord:
    """Turn a storm-kafka partition node into an OffsetRecord, as PartitionManager reads it.

    `malformed` says why the spout cannot use the record (it then starts as with no record);
    `inconsistent` lists what it tolerates."""
    if node.trident:
        return parse_trident_node(node)
    # latin-1 maps each byte to one character: only bytes of the pattern's ASCII can match it
    m = _CANONICAL.fullmatch(node.data.decode("latin-1")) if len(node.data) <= MAX_NODE_BYTES else None
    if m is not None and int(m[4]) == node.node_partition:
        topology_id, name, offset, _, host, port, topic = m.groups()
        return _record(
            _zk_key(node.spout_id, node.zk_root),
            node.node_partition,
            topic,
            int(offset),
            topology_id,
            name or parse_storm_id(topology_id),
            node.path,
            node.mtime_ms,
            node.version,
            f"{host}:{port}" if host else None,
            node.folder_topic,
        )  # port as Long.toString wrote it
    return parse_any_zk_node(node)


def parse_any_zk_node(node: ZkNode) -> OffsetRecord:
    """parse_zk_node of a storm-kafka node without its fast path for canonical records."""
    key = _zk_key(node.spout_id, node.zk_root)
    doc, reason, utf8 = load_json_simple(node.data)
    if reason is None:
        reason = _why_unusable(doc)
    named = doc.get("topic") if isinstance(doc, dict) else None
    # Names go to every output: a lone surrogate (a "\ud800" escape) is written out, never printed raw.
    topic = printable(named) if isinstance(named, str) and named else None
    if reason is not None:
        # The stored number is shown (and rewritten by reset) even though the spout does not use it.
        offset = doc.get("offset") if isinstance(doc, dict) else None
        return _record(
            key,
            node.node_partition,
            topic,
            offset if _is_int(offset) else None,
            path=node.path,
            modified_ms=node.mtime_ms,
            version=node.version,
            folder_topic=node.folder_topic,
            malformed=reason,
        )
    topology = doc["topology"]
    broker = doc.get("broker") if isinstance(doc.get("broker"), dict) else {}
    host, port = broker.get("host"), broker.get("port")
    topology_id = printable(topology["id"])
    name = topology.get("name")
    return _record(
        key,
        node.node_partition,
        topic,
        doc["offset"],
        topology_id=topology_id,
        topology_name=printable(name) if isinstance(name, str) and name else parse_storm_id(topology_id),
        path=node.path,
        modified_ms=node.mtime_ms,
        version=node.version,
        broker=printable(f"{host}:{port}" if _is_int(port) else host) if isinstance(host, str) and host else None,
        folder_topic=node.folder_topic,
        inconsistent=_inconsistencies(doc, node, utf8),
    )


def record_topology(node: ZkNode) -> tuple[str, object] | None:
    """The topology (id, name) a storm-kafka record names, exactly as its JSON holds them (not made printable),
    or None when the spout cannot use the record."""
    doc, reason, _ = load_json_simple(node.data)
    if reason is not None or _why_unusable(doc) is not None:
        return None
    return doc["topology"]["id"], doc["topology"].get("name")


# JSONValue.escape (json-simple 1.1): these, and \\uXXXX (upper-case hex) for U+0000-001F, U+007F-009F, U+2000-20FF
_JSON_SIMPLE_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "/": "\\/",
}


def _json_simple_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _JSON_SIMPLE_ESCAPES:
            out.append(_JSON_SIMPLE_ESCAPES[ch])
        elif ch <= "\x1f" or "\x7f" <= ch <= "\x9f" or "\u2000" <= ch <= "\u20ff":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def storm_kafka_record(
    topology_id: str, topology_name: str, offset: int, partition: int, host: str, port: int, topic: str
) -> bytes:
    """A partition record byte for byte as storm-kafka writes it: PartitionManager.commit() (v0.9.6, v0.10.2,
    v1.0.6, v1.1.3, v1.2.4) builds an ImmutableMap {topology {id, name}, offset, partition, broker {host,
    port}, topic} (in that order; offset a long, partition and port ints) and ZkState.writeJSON writes
    JSONValue.toJSONString of it (json-simple 1.1: no spaces, JSONValue.escape) as UTF-8."""
    text = (
        f'{{"topology":{{"id":{_json_simple_string(topology_id)},"name":{_json_simple_string(topology_name)}}},'
        f'"offset":{offset},"partition":{partition},'
        f'"broker":{{"host":{_json_simple_string(host)},"port":{port}}},"topic":{_json_simple_string(topic)}}}'
    )
    # Java's String.getBytes("UTF-8"): a surrogate pair is one character, a lone surrogate becomes '?'
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text.encode("utf-8", "replace")


# --- Trident state (TridentKafkaEmitter, KafkaTridentSpoutEmitter) --------------------------------------------

# Partition.getId() writes "partition_" + an int (Partition.java, v1.2.4): no sign, no leading zero.
_PARTITION = re.compile(r"partition_(0|[1-9][0-9]{0,9})")
_CLIENT_PARTITION = re.compile(r"([A-Za-z0-9._-]{1,249})@(0|[1-9][0-9]{0,9})")  # KafkaTridentSpoutTopicPartition.getId
_TXID = re.compile(r"0|[1-9][0-9]{0,18}")  # what RotatingTransactionalState writes: Long.toString of a txid
_INT_MAX = 2**31 - 1


@lru_cache(maxsize=4096)  # every spout has the same few partition_N children
def partition_node(name: str) -> int | None:
    """N of a node storm-kafka names partition_N (Partition.getId), or None for any other name."""
    m = _PARTITION.fullmatch(name)
    return int(m.group(1)) if m and int(m.group(1)) <= _INT_MAX else None


def trident_partition(name: str) -> tuple[int, str | None, str] | None:
    """A folder under user/ that is a Kafka partition's state: (partition, topic or None, library)."""
    c = _CLIENT_PARTITION.fullmatch(name)
    if (partition := partition_node(name)) is not None:
        return partition, None, STORM_KAFKA
    if c and int(c.group(2)) <= _INT_MAX:
        return int(c.group(2)), c.group(1), STORM_KAFKA_CLIENT
    return None


INIT_TXID = 1  # MasterBatchCoordinator.INIT_TXID: the first txid when the coordinator has no currtx


def newest_txid(children: Iterable[str], current: int = INIT_TXID) -> tuple[int, int] | None:
    """The txid a partition's state resumes from, and how many txids the folder holds; None without any.
    OpaquePartitionedTridentSpoutExecutor.Emitter.emitBatch (storm-core v1.2.4, storm-client v2.8.8) first removes
    the state of the txid it emits (RotatingTransactionalState.removeState), then takes getLastState: the highest
    of the others, as a long. A restarted topology's first txid is the coordinator's `current` (currtx,
    coordinator_txid), whose state exists when a worker died between a batch's commit and its ack."""
    txids = [int(c) for c in children if _TXID.fullmatch(c)]
    others = [t for t in txids if t != current]
    return (max(others), len(txids)) if others else None


def stored_from(children: Iterable[str], current: int = INIT_TXID) -> tuple[int, ...]:
    """The txids stored at or past the coordinator's `current`, ascending: the first is the batch a restarted
    TRANSACTIONAL Trident spout replays first, where the opaque one resumes from newest_txid, and the others follow.
    PartitionedTridentSpoutExecutor.Emitter.emitBatch (storm-core v1.2.4: per partition, through
    RotatingTransactionalState.getStateOrCreate) re-emits the very batch stored at the txid it emits and skips a txid
    that a later one has state past; only with nothing stored at or past it does a new batch start from the highest
    state below (storm-client v2.8.3 decides for the task's partitions together). Run on storm-kafka 1.2.4 and
    storm-kafka-client 2.8.3 (tests/test_trident_transactional_e2e.py)."""
    return tuple(sorted(t for t in map(int, filter(_TXID.fullmatch, children)) if t >= current))


def replay_span(data: bytes | None, client: bool) -> tuple[int | None, int | None]:
    """Where a transactional spout's replay of a stored batch starts, and, for storm-kafka-client, where the next
    batch starts when the replay emits nothing: (`offset`, None) for storm-kafka (TridentKafkaEmitter
    .reEmitPartitionBatch, v1.2.4, a Long); (`firstOffset`, `lastOffset` + 1) for storm-kafka-client
    (KafkaTridentSpoutEmitter.reEmitPartitionBatch, v2.8.3, any Number: it polls once, and a poll that comes back
    empty leaves the batch unemitted, after which the next txid's batch starts from its lastOffset + 1; run:
    tests/test_trident_transactional_e2e.py). None where the bytes are no such meta."""
    if data is None:
        return None, None
    doc, reason, _ = load_json_simple(data)
    if reason is not None or not isinstance(doc, dict):
        return None, None
    values = [doc.get(k) for k in (("firstOffset", "lastOffset") if client else ("offset",))]
    if any(isinstance(v, bool) or not isinstance(v, (int, float) if client else int) for v in values):
        return None, None
    if not client:
        return _java_long(values[0]), None
    first, last = map(_java_long, values)
    return first, (last + 1 - _LONG_MIN) % 2**64 + _LONG_MIN


def coordinator_txid(data: bytes | None) -> int:
    """The txid a restarted Trident topology emits first: its coordinator's currtx
    (MasterBatchCoordinator.getStoredCurrTransaction: a Number, v2.8.8; a Long, v1.2.4), else INIT_TXID. currtx
    is written as MasterBatchCoordinator acks a commit: the next txid."""
    if data is None:
        return INIT_TXID
    value, reason, _ = load_json_simple(data)
    if reason is not None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return INIT_TXID  # 2.x ignores what is not a Number (1.x's (Long) cast would throw: not modelled)
    return max(INIT_TXID, _java_long(value))


STUCK = "the emitter throws on it ({why})"  # what follows: outcomes.TRIDENT_STUCK


def parse_trident_node(node: ZkNode) -> OffsetRecord:
    """The state a Trident Kafka spout resumes a partition from: the meta of its highest txid, read as
    TransactionalState.getData reads it (json-simple; unparseable data is null) and as the emitter uses it.

    storm-kafka (TridentKafkaEmitter.doEmitNewPartitionBatch, v0.9.2-incubating to v1.2.4): resumes at
    `nextOffset`, a Long. storm-kafka-client (KafkaTridentSpoutEmitter.seek, v1.1.2 to v2.8.8): resumes at
    `lastOffset` + 1 (KafkaTridentSpoutBatchMetadata.fromMap: any Number). `malformed`: the spout cannot use
    it; with `stuck` the emitter throws on every batch, else it starts the partition as with no state."""
    key = ConsumerKey(TRIDENT, node.spout_id, node.zk_root)
    doc, reason, utf8 = load_json_simple(node.data)
    client = node.trident == STORM_KAFKA_CLIENT
    base = _trident_fields(node, doc, reason, client)
    if node.txid is None and node.replay_txid is not None:  # only batches at or past currtx: no state the opaque
        return _replay_only(key, node, None if reason or client else doc, base)  # executor reads
    unread = _unread_state(reason, doc)
    if unread is not None:
        malformed, stuck = unread
        return OffsetRecord(key, node.node_partition, node.folder_topic, None, stuck=stuck, malformed=malformed, **base)
    why = _trident_unusable(doc, client)
    if client and (why is None) != (_client_1x_unusable(doc) is None):
        base["differs_1x"] = True  # storm-kafka-client 1.x's emitter would use it where 2.x's throws, or the reverse
    if why is not None:
        return OffsetRecord(
            key, node.node_partition, node.folder_topic, None, stuck=True, malformed=STUCK.format(why=why), **base
        )
    if client:
        return _client_state(key, node, doc, base)
    return _kafka_state(key, node, doc, utf8, base)


def _kafka_state(key: ConsumerKey, node: ZkNode, doc: dict, utf8: bool, base: dict) -> OffsetRecord:
    """A storm-kafka meta the emitter uses: where it resumes (nextOffset), its topic, topology and broker."""
    named = doc.get("topic")
    topology = doc.get("topology") if isinstance(doc.get("topology"), dict) else {}
    storm_id, name = topology.get("id"), topology.get("name")
    broker = doc.get("broker") if isinstance(doc.get("broker"), dict) else {}
    host, port = broker.get("host"), broker.get("port")
    return OffsetRecord(
        key,
        node.node_partition,
        printable(named) if isinstance(named, str) and named else None,
        doc["nextOffset"],
        topology_id=printable(storm_id) if isinstance(storm_id, str) else None,
        topology_name=printable(name) if isinstance(name, str) and name else parse_storm_id(storm_id),
        broker=printable(f"{host}:{port}" if _is_int(port) else host) if isinstance(host, str) and host else None,
        inconsistent=_inconsistencies(doc, node, utf8) if topology else (),
        **base,
    )


def _trident_fields(node: ZkNode, doc: object, reason: str | None, client: bool) -> dict:
    """The OffsetRecord fields every Trident state has, whatever its meta: where it is, and its replayed batch."""
    replay_from, replay_after = replay_span(node.replay_data, client)
    return dict(
        path=node.path,
        modified_ms=node.mtime_ms,
        version=node.version,
        folder_topic=node.folder_topic,
        trident=node.trident,
        txid=node.txid,
        replay_txid=node.replay_txid,
        replay_from=replay_from,
        replay_after=replay_after,
        unparsed=client and _json_smart_may_differ(node.data, reason, doc),
    )


def _replay_only(key: ConsumerKey, node: ZkNode, doc: object, base: dict) -> OffsetRecord:
    """A partition whose only state is batches at or past currtx (OffsetRecord.replay_only): no offset, and the
    topic its storm-kafka meta names (`doc`: the parsed meta, None where it is not one or is storm-kafka-client's)."""
    named = doc.get("topic") if isinstance(doc, dict) else None
    topic = printable(named) if isinstance(named, str) and named else node.folder_topic
    return OffsetRecord(key, node.node_partition, topic, None, **base)


def _unread_state(reason: str | None, doc: object) -> tuple[str, bool] | None:
    """Where TransactionalState.getData gives no state, or throws: (why, whether it throws), else None.
    getData catches ParseException only (v1.2.4, v2.8.8): Long.valueOf's NumberFormatException (json-simple: an
    integer beyond a long) leaves it, and every batch fails (json-smart, storm-client 2.6+, reads the integer);
    data that does not parse, and JSON null, are no state (run on storm-kafka 1.2.4 and storm-kafka-client 2.8.3:
    tests/test_state_differential.py)."""
    if reason is not None and jsonsimple.OVERFLOW in reason:
        return STUCK.format(why=f"{reason}: NumberFormatException out of TransactionalState.getData"), True
    if reason is not None:
        return f"{reason}: TransactionalState.getData reads it as no state", False
    if doc is None:
        return "the state is JSON null: TransactionalState.getData reads it as no state", False
    return None


def _client_state(key: ConsumerKey, node: ZkNode, doc: dict, base: dict) -> OffsetRecord:
    """A storm-kafka-client meta fromMap reads: where seek puts the partition (lastOffset + 1), and its topology."""
    storm_id = doc.get("topologyId") if isinstance(doc.get("topologyId"), str) else None
    resume = (_java_long(doc["lastOffset"]) + 1 - _LONG_MIN) % 2**64 + _LONG_MIN  # seek(tp, lastOffset + 1), a long
    if resume < 0:  # KafkaConsumer.seek: "seek offset must not be a negative number"
        return OffsetRecord(
            key,
            node.node_partition,
            node.folder_topic,
            None,
            stuck=True,
            malformed=STUCK.format(
                why=f"lastOffset + 1 is {resume}: KafkaConsumer.seek throws IllegalArgumentException"
            ),
            **base,
        )
    return OffsetRecord(
        key,
        node.node_partition,
        node.folder_topic,
        resume,
        topology_id=printable(storm_id) if storm_id else None,
        topology_name=parse_storm_id(storm_id),
        **base,
    )


def _json_smart_may_differ(data: bytes, reason: str | None, doc: object) -> bool:
    """Whether json-smart (storm-client 2.6+) may read a storm-kafka-client state otherwise than json-simple: it
    reads alike only plain JSON, so json-simple refused it or read it by a leniency json-smart does not share; or
    json-smart makes a BigDecimal of a long decimal (its text over 18 characters), whose longValue is not the
    Double's (run on storm-client 2.8.3)."""
    return (
        reason is not None
        or not _plain_json(data)
        or isinstance(doc, dict)
        and isinstance(doc.get("lastOffset"), float)
    )


def _plain_json(data: bytes) -> bool:
    """Whether the bytes, as Java decodes them, are JSON by RFC 8259 (no NaN or Infinity) without a raw DEL, which
    json-simple and json-smart read alike; json-simple's leniency (skipped commas and colons, leading zeros, raw
    control characters) is not json-smart's, and json-smart's permissive mode drops a raw DEL (U+007F, which RFC
    8259 lets a string hold) from a string (found by tests/test_state_differential.py on storm-client 2.8.3)."""
    if b"\x7f" in data:
        return False
    try:
        orjson.loads(data)
        return True
    except orjson.JSONDecodeError:
        pass
    try:
        _DECODER.decode(javautf8.decode(data)[0])
        return True
    except (ValueError, RecursionError):
        return False


def _java_long(value: int | float) -> int:
    """Number.longValue(): a double is truncated toward zero and saturates at the long range."""
    if isinstance(value, int):
        return value
    if value != value:  # NaN
        return 0
    if value in (float("inf"), float("-inf")):
        return _LONG_MAX if value > 0 else _LONG_MIN
    return max(_LONG_MIN, min(_LONG_MAX, int(value)))


def _client_1x_unusable(doc: object) -> str | None:
    """Why storm-kafka-client 1.1.2 to 1.2.x's fromMap throws on this meta, or None: besides the offsets it reads a
    `tp` map, `new TopicPartition((String) tp.get("topic"), ((Number) tp.get("partition")).intValue())`, and never
    `topologyId` (KafkaTridentSpoutBatchMetadata.java, TopicPartitionSerializer.java at v1.2.4)."""
    tp = doc.get("tp") if isinstance(doc, dict) else None
    if not isinstance(tp, dict):
        return "no tp map"
    partition = tp.get("partition")
    if not _is_str_or_none(tp.get("topic")) or isinstance(partition, bool) or not isinstance(partition, (int, float)):
        return "tp's topic is not a string, or its partition not a number"
    return _trident_unusable({k: v for k, v in doc.items() if k != "topologyId"}, True)


def _trident_unusable(doc: object, client: bool) -> str | None:
    """Why the emitter throws on this meta (a cast or an unboxing fails), or None."""
    if not isinstance(doc, dict):
        return "the state is not a JSON object: ClassCastException to Map"
    if client:
        for field in ("firstOffset", "lastOffset"):
            value = doc.get(field)
            if value is None:
                return f"no {field}: NullPointerException in KafkaTridentSpoutBatchMetadata.fromMap"
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return f"{field} is not a number: ClassCastException in KafkaTridentSpoutBatchMetadata.fromMap"
        if not _is_str_or_none(doc.get("topologyId")):  # (String) map.get(TOPOLOGY_ID_KEY), v2.0.0 to v2.8.8
            return "topologyId is not a string: ClassCastException in KafkaTridentSpoutBatchMetadata.fromMap"
        return None
    topology = doc.get("topology")
    if topology is not None and not isinstance(topology, dict):
        return "topology is not an object: ClassCastException to Map"
    if isinstance(topology, dict) and not _is_str_or_none(topology.get("id")):
        return "topology.id is not a string: ClassCastException"
    offset = doc.get("nextOffset")
    if offset is None:
        return 'no nextOffset: NullPointerException unboxing (Long) lastMeta.get("nextOffset")'
    if not _is_int(offset):
        return "nextOffset is not a whole number: ClassCastException to Long"
    return None


@dataclass(frozen=True, slots=True)
class CommitMetadata:
    """storm-kafka-client's commit metadata: {"topologyId":..., "taskId":..., "threadName":...}."""

    topology_id: str
    task_id: int
    thread_name: str | None


def parse_commit_metadata(metadata: str | None) -> CommitMetadata | None:
    """Storm's commit metadata as CommitMetadataManager binds it (offctl/core/storm/jackson.py: a default Jackson
    ObjectMapper into CommitMetadata; held to the real class on generated input, storm-kafka-client 1.2.4 and 2.8.3),
    or None where it names no topology: the bind fails (the spout takes the commit as another topology's), binds
    no topologyId (the spout throws at start: jackson.names_no_topology), or an empty one."""
    return _metadata(jackson.bind(metadata or ""))


def _metadata(bound: dict | None | object) -> CommitMetadata | None:
    if bound is jackson.UNBOUND or bound is None or not bound["topologyId"]:
        return None
    return CommitMetadata(topology_id=bound["topologyId"], task_id=bound["taskId"], thread_name=bound["threadName"])


def is_legacy_metadata(metadata: str | None) -> bool:
    """Metadata written by storm-kafka-client before CommitMetadataManager (KafkaSpoutMessageId.getMetadata,
    v1.0.0 to v1.0.5 and v1.1.0 to v1.1.1): {topic-partition=orders-0, offset=41, numFails=0, thread='...'}."""
    return bool(metadata) and LEGACY_METADATA.fullmatch(metadata) is not None


def commit_metadata_json(topology_id: str, task_id: int = -1, thread_name: str = "offctl") -> str:
    """Storm metadata for a commit written by offctl, in the key order storm-kafka-client uses."""
    return json.dumps({"topologyId": topology_id, "taskId": task_id, "threadName": thread_name}, separators=(",", ":"))


def parse_commit(commit: KafkaCommit) -> OffsetRecord:
    """A Kafka commit as storm-kafka-client reads it, its metadata bound as Jackson 2.9 binds it; `number_limited`
    where Jackson 2.15+ would fail that bind (analyze reads it by the spout's release)."""
    bound = jackson.bind(commit.metadata or "")
    # a number over 1,000 characters needs metadata over that long: only then ask the model with the limit
    limited = bound is not jackson.UNBOUND and len(commit.metadata or "") > 1000
    meta = _metadata(bound)
    topology_id = printable(meta.topology_id) if meta else None
    legacy = meta is None and is_legacy_metadata(commit.metadata)
    return OffsetRecord(
        key=ConsumerKey(KAFKA, commit.group),
        partition=commit.partition,
        topic=commit.topic,
        committed=commit.offset,
        topology_id=topology_id,
        topology_name=parse_storm_id(topology_id) or topology_id,
        has_storm_metadata=meta is not None or legacy,
        legacy_metadata=legacy,
        crashes=jackson.names_no_topology(bound),
        number_limited=limited and jackson.bind(commit.metadata or "", 1000) is jackson.UNBOUND,
    )


def storm_groups(commits: Iterable[KafkaCommit]) -> set[str]:
    """The groups whose commits carry Storm metadata of any release (for --all-groups)."""
    return {c.group for c in commits if parse_commit_metadata(c.metadata) or is_legacy_metadata(c.metadata)}
