"""What a Trident Kafka spout stores, parsed defensively: its partition folders, txids and the state of each (as
storm-kafka's TridentKafkaEmitter and storm-kafka-client's KafkaTridentSpoutEmitter read it). Nothing here raises
on bad input; bad input becomes a `malformed` reason."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import orjson

from offctl.core.records.model import STORM_KAFKA, STORM_KAFKA_CLIENT, TRIDENT, ConsumerKey, OffsetRecord, ZkNode
from offctl.core.records.stormjson import (
    _DECODER,
    _LONG_MIN,
    _inconsistencies,
    _is_int,
    _is_str_or_none,
    _java_long,
    load_json_simple,
    parse_storm_id,
)
from offctl.core.storm import javautf8, jsonsimple
from offctl.inputs import printable

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
