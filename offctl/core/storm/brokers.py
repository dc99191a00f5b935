"""Kafka's broker registry in ZooKeeper, read as storm-kafka's ZkHosts and storm-kafka-monitor read it.

Two readers in apache/storm 1.x (both gone in 2.x with storm-kafka):
- the spout: `external/storm-kafka/src/jvm/org/apache/storm/kafka/DynamicBrokersReader.java` (DBR below; one blob,
  425d5c1f, at every tag v1.1.0-v1.2.4; lines are v1.2.4's): getBrokerInfo 76-105, getNumPartitions 107-115,
  getTopics 117-136, getLeaderFor 158-173, getBrokerHost 186-197;
- the monitor: `external/storm-kafka-monitor/src/main/java/org/apache/storm/kafka/monitor/KafkaOffsetLagUtil.java`
  (KOLU) getLeadersAndTopicPartitions, lines 306-349 at v1.2.4 (297-340 at v1.1.0, the same code).

Both read, for each topic, the children of `<root>/topics/<topic>/partitions`, then for `i in 0..count-1` (the
index, never the child names: DBR 83-85, KOLU@v1.2.4 328-329) the node `.../partitions/<i>/state`, its `leader` as
`((Number) value.get("leader")).intValue()` (DBR 163, KOLU 332), and the node `<root>/ids/<leader>` with
`(String) value.get("host")` and `((Long) value.get("port")).intValue()` (DBR 189-190, KOLU 335-336). `endpoints`
is read by neither. Both parse with json-simple's `JSONValue.parseWithException` (offctl.core.storm.jsonsimple).

Where they differ, and what each does on every odd case, is said in each `why` (and in the docstrings below):
the monitor fails its whole run on any of them (every exception reaches main's `catch (Exception ex)`, KOLU@v1.2.4
148-149: "Unable to get offset lags for kafka. Reason: ..."; it has no leader -1 check and reads `ids/-1`); the
spout leaves out a partition whose leader's broker node is missing (DBR 92-94), builds a broker with host null
without complaint (its consumer fails when it connects), and on everything else fails its whole refresh (DBR 98-99
wrap it in a RuntimeException, ZkCoordinator.refresh@v1.2.4 117-118 rethrows it out of KafkaSpout.nextTuple: the
executor dies) - for leader -1 with its own "No leader found for partition N" (DBR 164-165).
This module is pure: the adapter (offctl.adapters.zookeeper.ZkStore.read_broker_registry) reads the nodes.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from offctl.core.storm import javautf8, jsonsimple
from offctl.errors import UsageError
from offctl.inputs import printable

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
NO_LEADER = -1  # LeaderAndIsr.NoLeader (apache/kafka core/src/main/scala/kafka/api/LeaderAndIsr.scala@0.10.2.0)

_DBR = "DynamicBrokersReader@v1.2.4"
_KOLU = "KafkaOffsetLagUtil@v1.2.4"
# What the spout does when DBR.getBrokerInfo throws (anything but a missing broker id node).
_SPOUT_FAILS = (
    f"storm-kafka's ZkHosts fails its whole refresh ({_DBR} getBrokerInfo wraps it in a RuntimeException; "
    f"ZkCoordinator.refresh@v1.2.4 rethrows it and the spout's executor dies)"
)
_MONITOR_FAILS = f"storm-kafka-monitor fails the whole run ({_KOLU} main: 'Unable to get offset lags')"


class TopicPatternError(UsageError):
    """A wildcard topic (-w) that Python's re cannot read as java.util.regex would."""


@dataclass(frozen=True)
class PartitionLeader:
    """One partition of a topic as the registry gives it: its leader's host:port, or why there is none."""

    partition: int
    leader: str | None  # "host:port" as both readers build it (host + ":" + port)
    why: str | None = None  # set when leader is None: the fact, then what the spout and the monitor do


@dataclass(frozen=True)
class Registry:
    """The broker registry under one root, for the topics storm-kafka-monitor would ask about.

    `topics` holds every topic it would read (the one named, or the children of <root>topics the pattern fully
    matches), by name, each with partitions 0..n-1, n the COUNT of the children of its `partitions` node.
    `missing` holds the topics, or for -w the topics node itself (key: its path), that cannot be listed, and why.
    `brokers` is the host:port of every registered broker that has one, by id; `notes` says what else was seen
    (a broker with no host:port, partition names the 0..n-1 loop never reads)."""

    root: str  # the brokers root as the monitor uses it, with a trailing '/'
    topics: Mapping[str, tuple[PartitionLeader, ...]] = field(default_factory=dict)
    missing: Mapping[str, str] = field(default_factory=dict)
    brokers: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


# --- paths ----------------------------------------------------------------------------------------------------


def path_problem(path: str) -> str | None:
    """Why ZooKeeper refuses `path` (PathUtils.validatePath, which Curator and the ZooKeeper client call before
    any request: IllegalArgumentException), or None: it must start with '/', and have no empty, '.' or '..'
    part, no trailing '/' (but the root) and no NUL."""
    if not path.startswith("/"):
        return "it does not start with '/'"
    if "\x00" in path:
        return "it holds a NUL character"
    if path != "/" and any(part in ("", ".", "..") for part in path[1:].split("/")):
        return "it has an empty, '.' or '..' part"
    return None


def brokers_root(root: str) -> str:
    """The root with one trailing '/' added if it has none, as KOLU@v1.2.4 309-311 does to -r.

    A root ZooKeeper would refuse (path_problem: the monitor fails with an IllegalArgumentException) is a
    UsageError: offctl never reads another node in its place."""
    rooted = root if root.endswith("/") else root + "/"
    why = path_problem(rooted[:-1] or "/")
    if why:
        raise UsageError(
            f"-r {printable(root)!r} is not a ZooKeeper path: {why} (storm-kafka-monitor fails on it "
            f"with an IllegalArgumentException)"
        )
    return rooted


def topics_path(root: str) -> str:
    return root + "topics"  # KOLU@v1.2.4 312; DBR topicsPath(): zkPath + "/topics"


def partitions_path(root: str, topic: str) -> str:
    return f"{topics_path(root)}/{topic}/partitions"  # KOLU@v1.2.4 327; DBR partitionPath()


def state_path(root: str, topic: str, partition: int) -> str:
    return f"{partitions_path(root, topic)}/{partition}/state"  # KOLU@v1.2.4 330; DBR 161


def ids_path(root: str) -> str:
    return root + "ids"  # KOLU@v1.2.4 333 (brokersZkNode + "ids/" + leader); DBR brokerPath()


def broker_path(root: str, broker_id: int | str) -> str:
    return f"{ids_path(root)}/{broker_id}"


# --- node data ------------------------------------------------------------------------------------------------


def _json_map(data: bytes, what: str) -> tuple[dict | None, str | None]:
    """The node's JSON object as `(Map) JSONValue.parseWithException(new String(data, "UTF-8"))` gives it."""
    try:
        value = jsonsimple.loads(javautf8.decode(data)[0])  # new String(bytes, UTF-8) replaces, as Java counts
    except (ValueError, RecursionError) as exc:
        return None, f"{what} is not JSON as json-simple reads it ({str(exc)[:80]}): ParseException"
    if not isinstance(value, dict):
        return None, f"{what} is JSON but not an object: ClassCastException on the (Map) cast"
    return value, None


def _java_type(value: object) -> str:
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        return "Long"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, str):
        return "String"
    return "JSONArray" if isinstance(value, list) else "JSONObject"


def _int_value(value: int | float) -> int:
    """Number.intValue(): a Long keeps its low 32 bits; a Double is truncated toward zero and saturates."""
    if isinstance(value, int):
        return (value + 2**31) % 2**32 - 2**31
    if value != value:  # NaN (json-simple never makes one; kept for the rule)
        return 0
    if value in (float("inf"), float("-inf")):
        return _INT_MAX if value > 0 else _INT_MIN
    return max(_INT_MIN, min(_INT_MAX, int(value)))


def parse_leader(data: bytes) -> tuple[int | None, str | None]:
    """(leader, None), or (None, why): the `leader` of a partition state node
    (`{"controller_epoch":1,"leader":0,"version":1,"leader_epoch":0,"isr":[0]}`, written by Kafka's
    ZkUtils.leaderAndIsrZkData@0.8.2.1 and TopicPartitionStateZNode.encode@2.0.0-3.8.0) as
    `((Number) value.get("leader")).intValue()` (DBR 162-163, KOLU@v1.2.4 331-332). A leader of -1 is returned as
    -1: what it means is the caller's (`resolve`). A double is truncated as Java does, a long wraps to 32 bits."""
    value, why = _json_map(data, "the state node")
    if value is None:
        return None, why
    leader = value.get("leader")
    if leader is None:
        return None, "the state node has no leader: NullPointerException on intValue()"
    if isinstance(leader, bool) or not isinstance(leader, (int, float)):
        return None, (
            f"the state node's leader is a {_java_type(leader)}, not a number: ClassCastException on the (Number) cast"
        )
    return _int_value(leader), None


def parse_broker(data: bytes) -> tuple[str | None, str | None]:
    """(host:port, None), or (None, why): a broker registration node `<root>ids/<id>` read as DBR.getBrokerHost
    (186-197) and KOLU@v1.2.4 334-337 read it: `(String) value.get("host")` and `((Long) value.get("port"))
    .intValue()`; `endpoints` is not read.

    What Kafka writes there: 0.8.x version 1 `{"version":1,"host":..,"port":..,"jmx_port":..,"timestamp":..}`
    (ZkUtils.registerBrokerInZk@0.8.2.1); from 0.9.0.0 also `endpoints` (version 2; 3 from 0.10.0 with `rack`; 4
    from 0.10.2 with `listener_security_protocol_map`; 5 from 2.7 with `features`, BrokerInfo in ZkData.scala@2.7.0),
    and `host`/`port` are those of the first listener whose security protocol is PLAINTEXT (whatever its name), or
    null and -1 when no listener is PLAINTEXT ("older clients will not be able to connect":
    KafkaHealthcheck.register@0.9.0.0 and @0.10.2.0, BrokerIdZNode.encode(BrokerInfo) in
    core/src/main/scala/kafka/zk/ZkData.scala@2.0.0, @2.8.0, @3.8.0)."""
    address, why, _ = _broker(data)
    return address, why


def _broker(data: bytes) -> tuple[str | None, str | None, bool]:
    """parse_broker, and whether the readers throw while reading the node (True) or only when they connect."""
    value, why = _json_map(data, "the broker node")
    if value is None:
        return None, why, True
    host, port = value.get("host"), value.get("port")
    if host is not None and not isinstance(host, str):
        return None, f"the broker node's host is a {_java_type(host)}: ClassCastException on the (String) cast", True
    if port is None:
        return None, "the broker node has no port: NullPointerException on intValue()", True
    if isinstance(port, bool) or not isinstance(port, int):
        return (
            None,
            (
                f"the broker node's port is a {_java_type(port)}, not a whole number: ClassCastException "
                f"on the (Long) cast"
            ),
            True,
        )
    port = _int_value(port)
    if host is None:
        # DBR builds Broker(null, port) without complaint; the consumer fails when it connects: Kafka 0.8.2's
        # BlockingChannel.connect does new InetSocketAddress(host, port), which throws IllegalArgumentException
        # "hostname can't be null". The monitor builds the key "null:" + port and asks host "null" ("port out of
        # range:-1" for -1). Both messages checked on JDK 17.
        return (
            None,
            (
                f"the broker registered no PLAINTEXT listener (host null, port {port}; Kafka 0.9+ writes that "
                f"when none of its listeners is PLAINTEXT, only `endpoints` names them): storm-kafka's "
                f"consumer fails to connect (IllegalArgumentException: hostname can't be null); "
                f"storm-kafka-monitor asks host 'null' and fails"
            ),
            False,
        )
    if not host:
        return None, "the broker node's host is empty (Java would ask the loopback address)", False
    if not 0 <= port <= 65535:
        return (
            None,
            (
                f"the broker node's port {port} is not a TCP port: both readers fail to connect "
                f"(IllegalArgumentException: port out of range)"
            ),
            False,
        )
    return f"{printable(host)}:{port}", None, False


# --- wildcard topics ------------------------------------------------------------------------------------------

_JAVA_ONLY_SET = ("Possible nested set", "Possible set intersection")


def topic_matcher(pattern: str) -> Callable[[str], bool]:
    """A predicate that is Java's `topic.matches(pattern)` (a full match: DBR getTopics 126, KOLU@v1.2.4 319) for
    the patterns an operator writes, as Python's re.fullmatch with re.ASCII (Java's \\d \\w \\s \\b and (?i) are
    ASCII unless UNICODE_CHARACTER_CLASS/UNICODE_CASE is asked for; Kafka topic names are ASCII anyway).

    Where java.util.regex and re differ:
    - Read alike: . * + ? {m,n} | () [] [^] ^ $ \\d \\w \\s \\b, lazy quantifiers, lookaround, (?:..), (?i) (?s)
      (?m) (?x), and possessive quantifiers (a*+ a++) and atomic groups (?>..), which re has since Python 3.11.
    - Refused here with TopicPatternError (re cannot compile them, or reads them otherwise): \\p{..} \\P{..}
      classes (\\p{Alpha}, \\p{L}), \\Q..\\E quoting, named groups (?<name>..) (re spells (?P<name>..)), \\h \\H \\R
      \\X \\G \\z \\e \\x{..} \\cX, embedded flags re lacks ((?d) (?U)), and character-class union/intersection
      ([a-z&&[^x]], [[a]]): re compiles those, with a FutureWarning, to a different set, so they are refused.
    - Read differently, not detected: \\v (Java 8+: any vertical whitespace; re: the VT character) and \\Z (Java:
      before a final line terminator; re: the very end), neither of which matters for a legal topic name's
      characters ([a-zA-Z0-9._-]); a '{' that starts no quantifier (a{ , a{,3}): Java throws
      PatternSyntaxException, re reads a literal '{' (which no topic name holds) or {0,3}.
    Java compiles the pattern only when there is a topic to match it against (a bad pattern over an empty topics
    node is no error there); this refuses it at once: the caller compiles it only when it has names."""
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            compiled = re.compile(pattern, re.ASCII)
    except (re.error, OverflowError, RecursionError) as exc:
        raise TopicPatternError(
            f"-t {printable(pattern)!r} with -w is not a regular expression offctl can read as "
            f"Java's String.matches does ({exc}); java.util.regex forms that Python's re lacks "
            f"(\\p{{..}}, \\Q..\\E, (?<name>..)) must be rewritten"
        ) from None
    for warning in seen:
        if str(warning.message).startswith(_JAVA_ONLY_SET):
            raise TopicPatternError(
                f"-t {printable(pattern)!r} with -w: a character class union or intersection "
                f"(java.util.regex [a[b]], [a&&b]) that Python's re reads otherwise "
                f"({warning.message}); rewrite it without nested classes"
            )
    return lambda name: compiled.fullmatch(name) is not None


def matching_topics(pattern: str, names: Iterable[str]) -> tuple[str, ...]:
    """The names `pattern` fully matches, sorted (ZooKeeper lists children in no set order)."""
    names = sorted(names)
    if not names:
        return ()
    matches = topic_matcher(pattern)
    return tuple(n for n in names if matches(n))


# --- the registry ---------------------------------------------------------------------------------------------


def _why_no_leader(partition: int, path: str) -> str:
    return (
        f"no leader (leader -1 in its state node): storm-kafka's ZkHosts throws 'No leader found for partition "
        f"{partition}' ({_DBR} getLeaderFor 164-165) and fails its whole refresh; storm-kafka-monitor has no "
        f"such check, reads {path} and fails on its NoNodeException"
    )


def resolve(
    root: str,
    topics: Iterable[str],
    partitions: Mapping[str, list[str]],
    states: Mapping[str, bytes],
    ids: Mapping[str, bytes],
    registered: Iterable[str] | None = None,
    *,
    topics_listed: bool = True,
) -> Registry:
    """The Registry from what was read under `root` (brokers_root's form, trailing '/').

    `topics`: the topics the monitor would read (the one named, or matching_topics over <root>topics);
    `partitions`: the children of each existing `partitions_path(root, topic)`, by that path;
    `states`: the data of each existing `state_path(...)` node, by path; `ids`: the data of each existing broker
    node, by path; `registered`: the children of `ids_path(root)` (None: that node does not exist);
    `topics_listed`: False when -w was given and <root>topics does not exist."""
    missing: dict[str, str] = {}
    notes: list[str] = []
    if not topics_listed:
        missing[topics_path(root)] = (
            f"{topics_path(root)} does not exist, so no topic can match: {_SPOUT_FAILS} "
            f"(getTopics: NoNodeException); {_MONITOR_FAILS} (NoNodeException)"
        )
    found: dict[str, tuple[PartitionLeader, ...]] = {}
    for topic in sorted(set(topics)):
        path = partitions_path(root, topic)
        bad = path_problem(path)
        if bad:
            missing[topic] = (
                f"{printable(path)} is not a ZooKeeper path ({bad}): both readers fail on it (IllegalArgumentException)"
            )
            continue
        if path not in partitions:
            missing[topic] = (
                f"{printable(path)} does not exist (no such topic under {root}): {_SPOUT_FAILS} "
                f"(getNumPartitions: NoNodeException); {_MONITOR_FAILS} (NoNodeException)"
            )
            continue
        children = partitions[path]
        count = len(children)
        indexes = {str(i) for i in range(count)}
        beyond = sorted((c for c in children if c not in indexes), key=lambda c: (len(c), c))
        if beyond:
            notes.append(
                f"{printable(path)} has {count} children but not 0..{count - 1}: both readers loop over the "
                f"count ({_DBR} 83-85, {_KOLU} 328-329), so {', '.join(beyond)} is never read"
            )
        found[topic] = tuple(_partition(root, topic, p, states, ids) for p in range(count))
    brokers = []
    if registered is None:
        notes.append(f"{ids_path(root)} does not exist: no broker is registered under {root}")
    else:
        for broker_id in sorted(registered, key=lambda b: (not b.lstrip("-").isdigit(), len(b), b)):
            data = ids.get(broker_path(root, broker_id))
            if data is None:
                continue  # gone between listing and reading
            address, why = parse_broker(data)
            if address is not None:
                brokers.append(address)
            else:
                notes.append(f"broker {printable(broker_id)}: {why}")
    return Registry(root=root, topics=found, missing=missing, brokers=tuple(brokers), notes=tuple(notes))


def _partition(
    root: str, topic: str, partition: int, states: Mapping[str, bytes], ids: Mapping[str, bytes]
) -> PartitionLeader:
    path = state_path(root, topic, partition)
    data = states.get(path)
    if data is None:
        return PartitionLeader(
            partition,
            None,
            (
                f"{printable(path)} does not exist (the partition names have a gap, or the partition has no state "
                f"yet): {_SPOUT_FAILS} (getLeaderFor: NoNodeException); {_MONITOR_FAILS} (NoNodeException)"
            ),
        )
    leader, why = parse_leader(data)
    if leader is None:
        return PartitionLeader(partition, None, f"{printable(path)}: {why}: {_SPOUT_FAILS}; {_MONITOR_FAILS}")
    node = broker_path(root, leader)
    if leader == NO_LEADER:
        return PartitionLeader(partition, None, _why_no_leader(partition, node))
    data = ids.get(node)
    if data is None:
        return PartitionLeader(
            partition,
            None,
            (
                f"its leader, broker {leader}, is not registered ({node} does not exist): storm-kafka's ZkHosts logs "
                f"'Node {node} does not exist' and leaves the partition out ({_DBR} 92-94); {_MONITOR_FAILS} "
                f"(NoNodeException)"
            ),
        )
    address, why, thrown = _broker(data)
    if address is None:
        tail = f": {_SPOUT_FAILS}; {_MONITOR_FAILS}" if thrown else ""
        return PartitionLeader(partition, None, f"its leader, broker {leader}: {why}{tail}")
    return PartitionLeader(partition, address)


def leader_ids(states: Mapping[str, bytes]) -> frozenset[int]:
    """The broker ids the state nodes name as leaders (-1 and unreadable ones left out): the broker nodes to read."""
    found = set()
    for data in states.values():
        leader, _ = parse_leader(data)
        if leader is not None and leader != NO_LEADER:
            found.add(leader)
    return frozenset(found)
