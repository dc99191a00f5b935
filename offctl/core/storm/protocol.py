"""Whether Kafka's brokers serve a Storm spout: the requests its Kafka client sends, at which versions, against the
versions each broker accepts (its ApiVersions answer, or a Kafka release's row of offctl.core.storm.kafka_releases
for a what-if). Pure.

A spout talks to Kafka through the client library its topology ships: storm-kafka (spout and Trident emitter)
through the Kafka jar's SimpleConsumer, storm-kafka-client through kafka-clients' KafkaConsumer. Which requests each
sends, and at which versions, is the table CLIENTS (offctl.core.storm.kafka_clients: read from Storm's and Kafka's
sources at their tags, and run). A client that negotiates (kafka-clients 0.10.2 on, KIP-97) asks each broker its
ApiVersions and sends the newest version both know; one that does not sends its one version of each request, and a
broker that no longer accepts it closes the connection (Kafka 4.0 removed the versions older than Kafka 2.1's,
KIP-896). A spout is served when every broker accepts a version of every request it sends: its partitions' leaders
and its group's coordinator may be any of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from offctl.core.storm.commits import subscribes
from offctl.core.storm.kafka_clients import CLIENTS, SCALA, Client, client_line, kind_of, storm_pins
from offctl.core.storm.releases import Library, SpoutProfile

Apis = Mapping[str, tuple[int, int]]  # a Kafka API's name (Fetch, ListOffsets, ...) -> (oldest, newest) version


@dataclass(frozen=True)
class Brokers:
    """What the brokers accept, and where offctl learned it: `source` "brokers" (each broker's ApiVersions answer,
    by "node id (host:port)") or "what-if" (--kafka-release: one row of kafka_releases, named by `release`)."""

    source: str
    accepts: Mapping[str, Apis]  # broker -> its API versions
    release: str | None = None  # the what-if's Kafka release, as given

    @property
    def what_if(self) -> bool:
        return self.source == WHAT_IF

    def label(self) -> str:
        """How the verdicts name what they were judged against."""
        if self.what_if:
            return f"Kafka {self.release} (--kafka-release, a what-if)"
        return f"the brokers ({', '.join(self.accepts)})"


BROKERS, WHAT_IF = "brokers", "what-if"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One request a spout sends that brokers do not accept at the versions it can send."""

    api: str
    sends: tuple[int, int]  # the versions the client can send (one, (v, v), when it does not negotiate)
    accepts: tuple[int, int] | None  # what the brokers accept (the narrowest of those refusing); None: unknown API
    brokers: tuple[str, ...]  # the brokers that refuse it

    def text(self) -> str:
        one = len(self.brokers) == 1
        if self.accepts:
            accepts = f"{'accepts' if one else 'accept'} {_versions(self.accepts)}"
        else:
            accepts = "does not know it" if one else "do not know it"
        return f"{self.api} {_versions(self.sends)} ({', '.join(self.brokers)} {accepts})"


@dataclass(frozen=True, slots=True)
class Support:
    """Whether the brokers serve one spout, judged against `against` (Brokers.label)."""

    serves: bool
    client: Client
    against: str
    refused: tuple[Refusal, ...] = ()


def _versions(span: tuple[int, int]) -> str:
    low, high = span
    return f"v{low}" if low == high else f"v{low}-v{high}"


def client_of(library: Library, profile: SpoutProfile) -> Client | None:
    """The Kafka client the spout that reads with `library` sends its requests with, narrowed to the requests that
    spout sends: the release the topology ships (--kafka-clients-release), else the one Storm's release builds with
    (kafka_clients.storm_pins). None when offctl has no table for that release (kafka_clients.CLIENTS)."""
    kind = kind_of(library)
    release = profile.kafka_clients_release or storm_pins(library, profile)
    client = CLIENTS.get((kind, client_line(release)))
    if client is None:
        return None
    sends = SIMPLE_CONSUMER if kind == SCALA else (*CONSUMER, *(GROUP_MEMBER if subscribes(profile) else ()))
    if client.negotiates:
        sends = ("ApiVersions", *sends)
    return replace(client, apis={api: client.apis[api] for api in sends if api in client.apis})


# The requests each spout sends. storm-kafka (spout and Trident emitter): ListOffsets through
# SimpleConsumer.getOffsetsBefore (KafkaUtils.getOffset) and Fetch (KafkaUtils.fetchMessages), KafkaUtils.java at
# v0.9.2-incubating to v1.2.4; its brokers and partitions come from ZooKeeper (ZkHosts) or the topology (StaticHosts),
# never from a Metadata request. storm-kafka-client: KafkaConsumer's assign, committed, seek, poll and commitSync
# (KafkaSpout, v1.0.6 to v2.8.8): Metadata, FindCoordinator, OffsetFetch, OffsetCommit, ListOffsets and Fetch; the
# releases that subscribe (commits.subscribes) join the group too.
SIMPLE_CONSUMER = ("ListOffsets", "Fetch")
CONSUMER = ("Metadata", "FindCoordinator", "OffsetFetch", "OffsetCommit", "ListOffsets", "Fetch")
GROUP_MEMBER = ("JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")


def support(client: Client, brokers: Brokers) -> Support:
    """Whether every broker accepts a version of every request `client` sends."""
    refused = []
    for api, sends in client.apis.items():
        refusing = {}
        for broker, accepts in brokers.accepts.items():
            span = accepts.get(api)
            if span is None or not _overlap(sends, span, client.negotiates):
                refusing[broker] = span
        if refusing:
            known = [s for s in refusing.values() if s is not None]
            narrowest = max(known, key=lambda s: s[0]) if known else None
            refused.append(Refusal(api, sends, narrowest, tuple(refusing)))
    return Support(not refused, client, brokers.label(), tuple(refused))


def _overlap(sends: tuple[int, int], accepts: tuple[int, int], negotiates: bool) -> bool:
    """Whether a broker accepting `accepts` takes a request the client sends at `sends`: some version in both when
    the client negotiates; its one version inside the broker's range when it does not."""
    if negotiates:
        return sends[0] <= accepts[1] and accepts[0] <= sends[1]
    return accepts[0] <= sends[1] <= accepts[1]
