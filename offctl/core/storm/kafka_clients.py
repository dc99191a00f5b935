"""The Kafka clients Storm's spouts send their requests with: which client each Storm release builds with, and
which requests each client release sends, at which versions. Pure data, read from the sources and jars cited
(docs/storm.md, "Which brokers serve a spout").

storm-kafka (spout and Trident emitter) reads through the Kafka jar's SimpleConsumer (kafka_2.x, `provided` in
Storm's pom: the topology ships it); storm-kafka-client through kafka-clients' KafkaConsumer (Storm's pom pins it,
and a topology may ship another).
"""

from __future__ import annotations

import re
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


def storm_pins(library: Library, profile: SpoutProfile) -> str:
    """The Kafka client release the spout's Storm release builds with (its pom at the tag)."""
    if library in (Library.STORM_KAFKA, Library.STORM_KAFKA_TRIDENT):
        return STORM_KAFKA_PINS[profile.storm_kafka]
    return client_pin(profile.client_release)


def client_pin(client_release: str) -> str:
    """The kafka-clients release a storm-kafka-client release builds with: storm.kafka.client.version in Storm's
    root pom at its tag (the newest line CLIENT_PINS has at or below it)."""
    wanted = release(client_release)
    return next(pin for first, pin in CLIENT_PINS if wanted >= first)


def known_lines(kind: str) -> list[str]:
    return [line for k, line in CLIENTS if k == kind]


_NUMBER = re.compile(r"\d+")

# --- what Storm builds with ---------------------------------------------------------------------------------

STORM_KAFKA_PINS: Mapping[StormKafka, str] = {}
CLIENT_PINS: tuple[tuple[tuple[int, ...], str], ...] = ()

# --- what each client sends ---------------------------------------------------------------------------------

CLIENTS: Mapping[tuple[str, str], Client] = {}
