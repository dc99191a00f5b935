"""JStorm's Kafka spout: where it keeps its offsets, how it reads and writes them, and where it resumes. Pure: no
server, no clock.

Read in alibaba/jstorm, module jstorm-utility/jstorm-kafka, package com.alibaba.jstorm.kafka, at its last release tag
2.4.0 (master's tree is the same), and compared at 0.9.6.3, 2.1.0, 2.1.1 and 2.2.1: the classes below are the same at
those tags but for KafkaSpout.open, which at 2.1.1 and 2.2.1 applies the topology's settings
(KafkaSpoutConfig.configure) only to a KafkaSpoutConfig it makes itself, never to one given to its constructor (whose
public fields then hold what the topology's code set, without the defaults below); 0.9.6.3, 2.1.0 and 2.4.0 configure
both. The module's first release, 0.9.6.2, is another spout, replaced by b743b93 before 0.9.6.3 (MessageConsumer,
Partition): offsets at <kafka.zookeeper.root>/<topic>/id_<client id>/<N>/offset, partitions 0 to
kafka.broker.partitions-1 of every host of kafka.broker.hosts, a start at offset 0 without a record or with
kafka.fetch.from.beginning, and an out-of-range fetch that throws out of nextTuple; offctl does not read that layout.
Master's commits after 2.1.1 that changed the start, the first fetch and the out-of-range handling (563b09f, 92d8df0,
120ec43, ed48192, 188609c) are in the history of 2.2.1 and 2.4.0 but in neither tree: bd02651 ("upgrade to jstorm
2.2.1", not a merge) put PartitionConsumer, KafkaConsumer and KafkaSpout back as they were at 2.1.1, and pull request
#441, which restored them, was never merged. offctl follows the released code.

Not run: the module was never published to Maven Central (com.alibaba.jstorm publishes jstorm-core and jstorm-all
2.1.0-2.2.1; `mvn dependency:get` finds no com.alibaba.jstorm:jstorm-kafka), so the rules below are readings, cited. Its
record read is json-simple 1.1 (com.googlecode.json-simple:json-simple:1.1: the module's own dependency at 2.2.1 and
2.4.0, jstorm-client's before) and two casts, and its write json-simple's toJSONString of a HashMap:
tests/oracle/test_jstorm_record_differential.py runs both, copied, on json-simple's classes.

1. Where (PartitionConsumer.zkPath): <storm.zookeeper.root, default /jstorm>/kafka/offset/topic/<kafka.topic>/
   <kafka.client.id, default jstorm>/<partition>: the partition number alone, on the ZooKeeper of
   kafka.zookeeper.hosts (KafkaSpoutConfig.configure).
2. Which partitions (PartitionCoordinator.createPartitionConsumers): 0 to kafka.broker.partitions - 1 (default 1),
   dealt to the spout's tasks in turn; the topic's partition count is never asked.
3. The read (ZkState.readJSON, the PartitionConsumer constructor): `(Map) JSONValue.parse(new String(bytes,
   "UTF-8"))`, then `(Long) json.get("offset")`, inside `catch (Throwable)`. Anything else than a JSON object with a
   long `offset` (a parse error, another JSON type, no offset, a string or double offset) is no record. Nothing else
   in the record is read: not the topic, not the topology.
4. The start (the PartitionConsumer constructor): kafka.fetch.from.beginning (default false) takes the log start
   whatever is stored; otherwise the stored offset, or with none the log end. That offset is `emittingOffset`, and
   PartitionConsumer.fillMessages fetches from emittingOffset + 1: the spout fetches the stored offset + 1, the log
   start + 1, or the log end + 1 (the first message written after it starts is never emitted).
5. Out of range (KafkaConsumer.fetchMessages): an error answer returns null and emittingOffset stays; the
   resetOffsetIfOutOfRange branch assigns a local variable only (and configure() never sets it). Every fetch of a
   position below the log start fails for good; above the log end the partition emits nothing until the log end
   reaches it. The task's other partitions go on (KafkaSpout.nextTuple polls each in turn).
6. The commit (PartitionConsumer.commitState, every kafka.offset.update.interval.ms, default 2000): the lowest
   offset fetched and not yet acked (fillMessages adds each offset it fetches to pendingOffsets before it is emitted),
   or, with none pending, the last offset fetched (emittingOffset, then the last emitted); written only when it
   differs from the last written. A restart fetches that offset + 1, so a message in flight at the lowest pending
   offset is skipped. A failed tuple is never emitted again (fail() removes it from a set it never entered) and stays
   pending, holding the commit at its offset until the worker restarts.
7. The record (commitState): a HashMap of topology (the topology's *name*, topology.name), offset, partition, broker
   {host, port} and topic, written by json-simple's JSONValue.toJSONString in the HashMap's order: partition, offset,
   topology, topic, broker on Java 8 and later (RECORD_KEYS); on Java 7, the module's target, Java 7's HashMap
   (another hash spread, new entries first in a bucket) gives topic, partition, topology, broker, offset (read, not
   run). The read takes either. ZkState.writeBytes creates the node (persistent, parents as needed) when it is
   missing, else sets its data.
8. The running topologies (jstorm-core's StormZkClusterState.active_storms, Cluster.STORMS_ROOT):
   <storm.zookeeper.root>/topology/<topology id>, on JStorm's own ZooKeeper (storm.zookeeper.servers), each id
   `<name>-<counter>-<seconds>` (Common.topologyNameToId; ServiceHandler.submitTopology sets topology.name, which
   commitState writes).
"""

from __future__ import annotations

from offctl.core.storm.citations import Citation
from offctl.core.storm.jsonsimple import dumps_string

TAG = "alibaba/jstorm 2.4.0"
DIR = "jstorm-utility/jstorm-kafka/src/main/java/com/alibaba/jstorm/kafka/"
RELEASES = "0.9.6.3-2.4.0"  # the release tags whose jstorm-kafka reads, starts and commits alike
LAYOUT = "kafka/offset/topic"  # below storm.zookeeper.root
DEFAULT_ROOT = "/jstorm"  # storm.zookeeper.root's default (KafkaSpoutConfig.configure)
DEFAULT_CLIENT_ID = "jstorm"  # kafka.client.id's default


def citation(member: str, file: str | None = None) -> Citation:
    """A class of jstorm-kafka at its last release tag."""
    return Citation(member, f"{DIR}{file or member.split('.')[0]}.java", (TAG,))


STORED = citation("the PartitionConsumer constructor and PartitionConsumer.fillMessages", "PartitionConsumer")
START = citation("the PartitionConsumer constructor", "PartitionConsumer")
FETCH = citation("KafkaConsumer.fetchMessages")
COMMIT = citation("PartitionConsumer.commitState")
PARTITIONS = citation("PartitionCoordinator.createPartitionConsumers")
RUNNING = Citation(
    "StormZkClusterState.active_storms",
    "jstorm-core/src/main/java/com/alibaba/jstorm/cluster/StormZkClusterState.java",
    (TAG,),
)
TOPOLOGIES = "topology"  # Cluster.STORMS_ROOT, below storm.zookeeper.root: the running topologies' ids


def spouts_path(root: str) -> str:
    """The folder under which every JStorm Kafka spout of a root keeps its offsets: <root>/kafka/offset/topic."""
    return f"{root.rstrip('/')}/{LAYOUT}"


def consumer_id(topic: str, client_id: str) -> str:
    """offctl's name for one JStorm Kafka spout: its topic and kafka.client.id, as its path holds them."""
    return f"{topic}/{client_id}"


def split_id(consumer: str) -> tuple[str, str] | None:
    """(topic, kafka.client.id) of consumer_id's name; None when it is not one (no '/' between two names)."""
    topic, sep, client_id = consumer.partition("/")
    return (topic, client_id) if sep and topic and client_id and "/" not in client_id else None


def node_path(root: str, consumer: str, partition: int) -> str:
    """PartitionConsumer.zkPath: <root>/kafka/offset/topic/<topic>/<client id>/<partition>."""
    return f"{spouts_path(root)}/{consumer}/{partition}"


def resumes_at(committed: int) -> int:
    """Where the spout fetches first from a stored offset it reads: the offset + 1 (rule 4)."""
    return committed + 1


def stored_for(fetch: int) -> int:
    """The offset to store so that the spout fetches `fetch` first: resumes_at's inverse, `fetch` - 1 (rule 4; -1
    for 0, which json-simple reads as a Long like any other)."""
    return fetch - 1


def topologies_path(root: str) -> str:
    """Where JStorm lists its running topologies' ids (rule 8): <root>/topology."""
    return f"{root.rstrip('/')}/{TOPOLOGIES}"


def fresh_start(from_beginning: bool, log_start: int | None, log_end: int | None) -> tuple[int | None, str]:
    """Where the spout fetches first without a stored offset it can use, or, with kafka.fetch.from.beginning, whatever
    is stored (rule 4): the log start + 1 or the log end + 1, and the words for it."""
    if from_beginning:
        at = None if log_start is None else log_start + 1
        return at, "the log start + 1 (kafka.fetch.from.beginning: EarliestTime, then fillMessages' emittingOffset + 1)"
    at = None if log_end is None else log_end + 1
    return at, (
        "the log end + 1 (LatestTime, then fillMessages' emittingOffset + 1: the first message written after it "
        "starts is never emitted)"
    )


def lag_from(position: int | None, log_end: int | None) -> int | None:
    """The offset a lag counts from where the spout fetches `position` first: the log end for the log end + 1
    (fresh_start: no message the spout will emit lies behind it), else `position` itself."""
    if position is not None and log_end is not None and position == log_end + 1:
        return log_end
    return position


def _java_hash(key: str) -> int:
    """java.lang.String.hashCode of an ASCII key, spread as java.util.HashMap spreads it (Java 8 on: h ^ h >>> 16)."""
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h ^ (h >> 16)


# commitState's keys in a HashMap of default capacity 16, as Java 8 and later iterate them (by bucket: hash & 15;
# none collide): partition, offset, topology, topic, broker. tests/oracle/test_jstorm_record_differential.py holds
# record_bytes to json-simple's toJSONString of that HashMap, run on the JVM here.
RECORD_KEYS = tuple(sorted(("topology", "offset", "partition", "broker", "topic"), key=lambda k: _java_hash(k) & 15))


def record_bytes(topology: str | None, offset: int, partition: int, host: str, port: int, topic: str) -> bytes:
    """A record byte for byte as PartitionConsumer.commitState writes it (rule 7): json-simple's toJSONString of a
    HashMap (no spaces; `topology` the topology's name, JSON null where it has none), its broker an ImmutableMap
    {host, port}, as UTF-8 (String.getBytes: a lone surrogate becomes '?')."""
    values = {
        "topology": "null" if topology is None else dumps_string(topology),
        "offset": str(offset),
        "partition": str(partition),
        "broker": f'{{"host":{dumps_string(host)},"port":{port}}}',
        "topic": dumps_string(topic),
    }
    text = "{" + ",".join(f'"{k}":{values[k]}' for k in RECORD_KEYS) + "}"
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text.encode("utf-8", "replace")
