"""The Kafka clients Storm's spouts send their requests with: which client each Storm release builds with, and
which requests each client release sends, at which versions. Pure data, read from the sources and jars cited
(docs/storm.md, "Which brokers serve a spout").

storm-kafka (spout and Trident emitter) reads through the Kafka jar's SimpleConsumer (kafka_2.x, `provided` in
Storm's pom: the topology ships it); storm-kafka-client through kafka-clients' KafkaConsumer (Storm's pom pins it,
and a topology may ship another).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from offctl.core.storm.releases import Library, SpoutProfile, StormKafka, release


@dataclass(frozen=True)
class Client:
    """A Kafka client library at a release line, as a spout uses it."""

    name: str  # "kafka-clients 0.10.1", "Kafka 0.10.2 SimpleConsumer"
    negotiates: bool  # asks ApiVersions and sends the newest version both sides know (kafka-clients 0.10.2+, KIP-97)
    apis: Mapping[str, tuple[int, int]]  # API -> (oldest, newest) it sends; (v, v) when it does not negotiate
    source: str  # where the versions were read, or the jar they were run from


def client_line(text: str) -> str:
    """The release line a client release belongs to, as CLIENTS keys it: "0.10.1.0" is "0.10.1", "2.8.1" is "2.8"
    (Kafka numbered its releases major.minor.patch from 1.0, 0.major.minor.patch before)."""
    parts = release(text, "Kafka client", "0.10.1.0")
    return ".".join(map(str, parts[:3] if parts[0] == 0 else parts[:2]))


def kind_of(library: Library) -> str:
    """Which kind of client CLIENTS keys the library's rows by: "scala", the Kafka jar's SimpleConsumer (storm-kafka's
    spout and Trident emitter), or "java", kafka-clients (storm-kafka-client)."""
    return JAVA if library is Library.STORM_KAFKA_CLIENT else SCALA


SCALA, JAVA = "scala", "java"


def storm_pins(library: Library, profile: SpoutProfile) -> str:
    """The Kafka client release the spout's Storm release builds with (its pom at the tag)."""
    if library is Library.JSTORM_KAFKA:
        return JSTORM_PIN
    if kind_of(library) == SCALA:
        return STORM_KAFKA_PINS[profile.storm_kafka]
    return client_pin(profile.client_release)


def client_pin(client_release: str) -> str:
    """The kafka-clients release a storm-kafka-client release builds with: storm.kafka.client.version in Storm's
    root pom at its tag (the newest line CLIENT_PINS has at or below it)."""
    wanted = release(client_release)
    return next(pin for first, pin in CLIENT_PINS if wanted >= first)


def known_lines(kind: str) -> list[str]:
    return [line for k, line in CLIENTS if k == kind]


# --- what Storm builds with ---------------------------------------------------------------------------------

# storm-kafka's Kafka jar, `provided` in external/storm-kafka/pom.xml (the topology ships one): kafka_2.9.2 0.8.1.1
# at v0.9.2-incubating, v0.9.7 and v0.10.2; kafka_2.10 0.8.2.1 (storm.kafka.version, storm.kafka.artifact.id in the
# root pom.xml) at v1.0.7, v1.1.3 and v1.2.4.
# JStorm's spout: kafka_2.9.2 ${kafka.version} 0.8.1 (jstorm-utility/jstorm-kafka/pom.xml in alibaba/jstorm at 0.9.6.2
# to 2.4.0), not `provided`: the module ships it. Its SimpleConsumer sends ListOffsets v0, Fetch v0, and Metadata v0
# (TopicMetadataRequest, KafkaConsumer.findLeader: the only version before 0.10.0), which every release in
# offctl.core.storm.kafka_releases accepts.
JSTORM_PIN = "0.8.1"


STORM_KAFKA_PINS: Mapping[StormKafka, str] = {
    StormKafka.V0_9_0: "0.8.1.1",
    StormKafka.V0_9_3: "0.8.1.1",
    StormKafka.V0_10: "0.8.1.1",
    StormKafka.V1_0: "0.8.2.1",
    StormKafka.V1_X: "0.8.2.1",
}

# storm-kafka-client's kafka-clients: storm.kafka.client.version in Storm's root pom.xml at each tag (kafka.version at
# v1.0.0 and v1.0.1), newest first: a release takes the first row at or below it. 3.0 and 3.1 are master 73da988d9's
# (the line 3.0.0 was released from; docs/storm.md says why).
CLIENT_PINS: tuple[tuple[tuple[int, ...], str], ...] = (
    ((3, 0), "4.3.1"),
    ((2, 8, 6), "4.2.0"),
    ((2, 8, 4), "4.1.1"),
    ((2, 8, 3), "4.1.0"),
    ((2, 7, 1), "3.9.0"),
    ((2, 6, 1), "3.6.0"),
    ((2, 0), "0.11.0.3"),
    ((1, 2), "0.10.1.0"),
    ((1, 1, 2), "0.10.1.0"),
    ((1, 1), "0.10.0.0"),
    ((1, 0, 6), "0.10.1.0"),
    ((1, 0), "0.9.0.1"),
)

# --- what each client sends ---------------------------------------------------------------------------------

_FIXED = "each request at its one version, ProtoUtils.latestVersion (Protocol.java): no ApiVersions negotiation"
_NEGOTIATED = "ApiKeys.oldestVersion() to latestVersion(false), negotiated with each broker's ApiVersions (KIP-97)"
_SIMPLE = "kafka.api.FetchRequest's and OffsetRequest's CurrentVersion (core/src/main/scala/kafka/api/ at Kafka {tag})"

# (kind, line) -> the client: "scala" the Kafka jar's SimpleConsumer (storm-kafka; the Scala client left Kafka in 2.0),
# "java" kafka-clients. The java rows were run: each jar's ApiKeys, printed by tests/storm_runner/ApiVersionsOf.java
# (held to the jars the suite fetches by tests/oracle/test_broker_support_e2e.py), and a recording proxy between each
# client and the real 3.9.2 and 4.4.0 brokers saw those versions on the wire (docs/storm.md).
CLIENTS: Mapping[tuple[str, str], Client] = {
    ("scala", "0.8.1"): Client(
        "Kafka 0.8.1 SimpleConsumer", False, {"Fetch": (0, 0), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.8.1.1")
    ),
    ("scala", "0.8.2"): Client(
        "Kafka 0.8.2 SimpleConsumer", False, {"Fetch": (0, 0), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.8.2.1")
    ),
    ("scala", "0.9.0"): Client(
        "Kafka 0.9.0 SimpleConsumer", False, {"Fetch": (1, 1), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.9.0.1")
    ),
    ("scala", "0.10.0"): Client(
        "Kafka 0.10.0 SimpleConsumer", False, {"Fetch": (2, 2), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.10.0.1")
    ),
    ("scala", "0.10.1"): Client(
        "Kafka 0.10.1 SimpleConsumer", False, {"Fetch": (3, 3), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.10.1.1")
    ),
    ("scala", "0.10.2"): Client(
        "Kafka 0.10.2 SimpleConsumer", False, {"Fetch": (3, 3), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.10.2.2")
    ),
    ("scala", "0.11.0"): Client(
        "Kafka 0.11.0 SimpleConsumer", False, {"Fetch": (3, 3), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="0.11.0.3")
    ),
    ("scala", "1.0"): Client(
        "Kafka 1.0 SimpleConsumer", False, {"Fetch": (3, 3), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="1.0.2")
    ),
    ("scala", "1.1"): Client(
        "Kafka 1.1 SimpleConsumer", False, {"Fetch": (3, 3), "ListOffsets": (0, 0)}, _SIMPLE.format(tag="1.1.1")
    ),
    ("java", "0.9.0"): Client(
        "kafka-clients 0.9.0",
        False,
        {
            "Metadata": (0, 0),
            "FindCoordinator": (0, 0),
            "JoinGroup": (0, 0),
            "SyncGroup": (0, 0),
            "Heartbeat": (0, 0),
            "LeaveGroup": (0, 0),
            "OffsetFetch": (1, 1),
            "OffsetCommit": (2, 2),
            "Fetch": (1, 1),
            "ListOffsets": (0, 0),
        },
        f"kafka-clients-0.9.0.1.jar: {_FIXED}",
    ),
    ("java", "0.10.0"): Client(
        "kafka-clients 0.10.0",
        False,
        {
            "Metadata": (1, 1),
            "FindCoordinator": (0, 0),
            "JoinGroup": (0, 0),
            "SyncGroup": (0, 0),
            "Heartbeat": (0, 0),
            "LeaveGroup": (0, 0),
            "OffsetFetch": (1, 1),
            "OffsetCommit": (2, 2),
            "Fetch": (2, 2),
            "ListOffsets": (0, 0),
        },
        f"kafka-clients-0.10.0.0.jar: {_FIXED}",
    ),
    ("java", "0.10.1"): Client(
        "kafka-clients 0.10.1",
        False,
        {
            "Metadata": (2, 2),
            "FindCoordinator": (0, 0),
            "JoinGroup": (1, 1),
            "SyncGroup": (0, 0),
            "Heartbeat": (0, 0),
            "LeaveGroup": (0, 0),
            "OffsetFetch": (1, 1),
            "OffsetCommit": (2, 2),
            "Fetch": (3, 3),
            "ListOffsets": (1, 1),
        },
        f"kafka-clients-0.10.1.0.jar: {_FIXED}",
    ),
    ("java", "0.11.0"): Client(
        "kafka-clients 0.11.0",
        True,
        {
            "ApiVersions": (0, 1),
            "Metadata": (0, 4),
            "FindCoordinator": (0, 1),
            "JoinGroup": (0, 2),
            "SyncGroup": (0, 1),
            "Heartbeat": (0, 1),
            "LeaveGroup": (0, 1),
            "OffsetFetch": (0, 3),
            "OffsetCommit": (0, 3),
            "Fetch": (0, 5),
            "ListOffsets": (0, 2),
        },
        f"kafka-clients-0.11.0.3.jar: {_NEGOTIATED}",
    ),
    ("java", "3.6"): Client(
        "kafka-clients 3.6",
        True,
        {
            "ApiVersions": (0, 3),
            "Metadata": (0, 12),
            "FindCoordinator": (0, 4),
            "JoinGroup": (0, 9),
            "SyncGroup": (0, 5),
            "Heartbeat": (0, 4),
            "LeaveGroup": (0, 5),
            "OffsetFetch": (0, 8),
            "OffsetCommit": (0, 8),
            "Fetch": (0, 15),
            "ListOffsets": (0, 8),
        },
        f"kafka-clients-3.6.0.jar: {_NEGOTIATED}",
    ),
    ("java", "3.9"): Client(
        "kafka-clients 3.9",
        True,
        {
            "ApiVersions": (0, 4),
            "Metadata": (0, 12),
            "FindCoordinator": (0, 6),
            "JoinGroup": (0, 9),
            "SyncGroup": (0, 5),
            "Heartbeat": (0, 4),
            "LeaveGroup": (0, 5),
            "OffsetFetch": (0, 9),
            "OffsetCommit": (0, 9),
            "Fetch": (0, 17),
            "ListOffsets": (0, 9),
        },
        f"kafka-clients-3.9.0.jar: {_NEGOTIATED}",
    ),
    ("java", "4.1"): Client(
        "kafka-clients 4.1",
        True,
        {
            "ApiVersions": (0, 4),
            "Metadata": (0, 13),
            "FindCoordinator": (0, 6),
            "JoinGroup": (0, 9),
            "SyncGroup": (0, 5),
            "Heartbeat": (0, 4),
            "LeaveGroup": (0, 5),
            "OffsetFetch": (1, 9),
            "OffsetCommit": (2, 9),
            "Fetch": (4, 18),
            "ListOffsets": (1, 10),
        },
        f"kafka-clients-4.1.0.jar: {_NEGOTIATED}",
    ),
    ("java", "4.2"): Client(
        "kafka-clients 4.2",
        True,
        {
            "ApiVersions": (0, 4),
            "Metadata": (0, 13),
            "FindCoordinator": (0, 6),
            "JoinGroup": (0, 9),
            "SyncGroup": (0, 5),
            "Heartbeat": (0, 4),
            "LeaveGroup": (0, 5),
            "OffsetFetch": (1, 10),
            "OffsetCommit": (2, 10),
            "Fetch": (4, 18),
            "ListOffsets": (1, 11),
        },
        f"kafka-clients-4.2.0.jar: {_NEGOTIATED}",
    ),
    ("java", "4.3"): Client(
        "kafka-clients 4.3",
        True,
        {
            "ApiVersions": (0, 4),
            "Metadata": (0, 13),
            "FindCoordinator": (0, 6),
            "JoinGroup": (0, 9),
            "SyncGroup": (0, 5),
            "Heartbeat": (0, 4),
            "LeaveGroup": (0, 5),
            "OffsetFetch": (1, 10),
            "OffsetCommit": (2, 10),
            "Fetch": (4, 18),
            "ListOffsets": (1, 11),
        },
        f"kafka-clients-4.3.1.jar: {_NEGOTIATED}",
    ),
    ("java", "4.4"): Client(
        "kafka-clients 4.4",
        True,
        {
            "ApiVersions": (0, 5),
            "Metadata": (0, 13),
            "FindCoordinator": (0, 6),
            "JoinGroup": (0, 9),
            "SyncGroup": (0, 5),
            "Heartbeat": (0, 4),
            "LeaveGroup": (0, 5),
            "OffsetFetch": (1, 10),
            "OffsetCommit": (2, 10),
            "Fetch": (4, 18),
            "ListOffsets": (1, 11),
        },
        f"kafka-clients-4.4.0.jar: {_NEGOTIATED}",
    ),
}
