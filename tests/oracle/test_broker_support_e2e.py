"""Which broker releases serve which spouts (issue 46), run: the REAL spout of each Storm release on the REAL
brokers, Kafka 4.4 (KRaft, fixtures broker/kafka) and Kafka 3.9 (ZooKeeper mode, broker39/kafka39), each from a
position stored before it opens (tests/oracle/broker_support.py says how each is set up, pointed and bounded). What
each did is PAIRS: the ground truth offctl's verdict is held to, with the request the broker refused, as its log
says it. Run here (JDK 17):

    storm-kafka 1.2.4          (kafka_2.10 0.8.2.1)  4.4: refused  open() throws EOFException: its SimpleConsumer's
                                                           ListOffsets v0 (KafkaUtils.getOffset, from
                                                           PartitionManager's constructor) is closed on by the broker
                                                      3.9: served
    storm-kafka-client 1.2.4   (kafka-clients 0.10.1.0) 4.4: refused  Metadata v2, ListOffsets v1, OffsetFetch v1 are
                                                           answered; every Fetch v3 is closed on, and the consumer
                                                           reconnects and sends it again: nothing is emitted, nothing
                                                           thrown, the commit stays where it was
                                                      3.9: served
    storm-kafka-client 2.0.0   (kafka-clients 0.11.0.3) 4.4: served   it asks ApiVersions and sends the newest versions
                                                           both speak (Fetch v5, ListOffsets v2, Metadata v4), all
                                                           above what KIP-896 removed: older than 2.1, and served
                                                      3.9: served
    storm-kafka-client 2.8.3   (kafka-clients 4.1.0)    4.4 and 3.9: served

Each pair is one test: the observation first, then offctl's verdict on the state the spout left (offctl_verdict,
agrees): `broker_served` and BROKER_INCOMPATIBLE must say what the spout did, and where it was refused, the request the
broker closed on must be one offctl names.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import invoke
from tests.oracle.broker_support import SEEDED, Observed, Target, observe_all

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

REFUSED, SERVED = "refused", "served"
UNSUPPORTED = "Received request for api with key {} and unsupported version {}"  # Kafka 4.4's, in its log
# (library, release, broker) -> (what the spout did, the broker's refusal as its log words it, or None)
PAIRS = {
    ("storm-kafka", "1.2.4", "4.4"): (REFUSED, UNSUPPORTED.format("2 (ListOffsets)", 0)),
    ("storm-kafka", "1.2.4", "3.9"): (SERVED, None),
    ("storm-kafka-client", "1.2.4", "4.4"): (REFUSED, UNSUPPORTED.format("1 (Fetch)", 3)),
    ("storm-kafka-client", "1.2.4", "3.9"): (SERVED, None),
    ("storm-kafka-client", "2.0.0", "4.4"): (SERVED, None),
    ("storm-kafka-client", "2.0.0", "3.9"): (SERVED, None),
    ("storm-kafka-client", "2.8.3", "4.4"): (SERVED, None),
    ("storm-kafka-client", "2.8.3", "3.9"): (SERVED, None),
}
# What a refused spout says: storm-kafka's SimpleConsumer "Received -1 when reading from channel, socket has likely
# been closed." (EOFException); kafka-clients' "Node 1 disconnected." and "Fetch request to ... failed:
# DisconnectException"; a negotiating client's UnsupportedVersionException
REFUSAL = re.compile(r"EOFException|socket has likely been closed|[Dd]isconnect|UnsupportedVersion")
FINDING = "BROKER_INCOMPATIBLE"


class OffctlDisagrees(AssertionError):
    """offctl's verdict is not what the spout did."""


def offctl_verdict(seen: Observed, *more: str) -> dict:
    """offctl inspect's consumer object for the state the spout left (its node or its group, with the options that
    name its release: Observed.inspect_args), and `more` options."""
    result = invoke(["inspect", *seen.inspect_args, *more, "--fail-on", "never", "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (consumer,) = json.loads(result.stdout)["consumers"]
    return consumer


def agrees(consumer: dict, outcome: str, refusal: str | None) -> None:
    """OffctlDisagrees unless offctl's verdict on `consumer` is `outcome`: refused (`broker_served` false, with a
    BROKER_INCOMPATIBLE finding naming the request the broker's log closed on) or served (true, no finding)."""
    finding = FINDING in consumer["finding_codes"]
    said = {(False, True): REFUSED, (True, False): SERVED}.get((consumer["broker_served"], finding))
    if said != outcome:
        raise OffctlDisagrees(f"the spout was {outcome}; offctl says {said}: {consumer}")
    if refusal is not None:
        api, version = re.search(r"\((\w+)\) and unsupported version (\d+)", refusal).groups()
        if not any(r.startswith(f"{api} v{version} ") for r in consumer["broker_refused"]):
            raise OffctlDisagrees(f"the broker closed on {api} v{version}; offctl names {consumer['broker_refused']}")


class Runs:
    """Each (library, release) run once on both brokers, in one JVM, when a test first asks for it. One after
    another, never side by side: what a broker's log says while a run lasts is that run's (refused_by_broker)."""

    def __init__(self, targets: list[Target], zookeeper: str, zk) -> None:
        self.targets, self.zookeeper, self.zk = targets, zookeeper, zk
        self.seen: dict[tuple[str, str], dict[str, Observed]] = {}

    def of(self, library: str, release: str) -> dict[str, Observed]:
        if (library, release) not in self.seen:
            self.seen[library, release] = observe_all(library, release, self.targets, self.zookeeper, self.zk)
        return self.seen[library, release]


@pytest.fixture(scope="module")
def runs(zk_server, zk, broker, kafka, broker39, kafka39):
    return Runs([Target("4.4", broker, kafka), Target("3.9", broker39, kafka39)], zk_server.address, zk)


@pytest.mark.parametrize(
    ("library", "release", "on"),
    list(PAIRS),
)
def test_the_broker_serves_the_spout_as_offctl_says(runs, library, release, on):
    outcome, refusal = PAIRS[library, release, on]
    seen = runs.of(library, release)[on]
    if outcome == REFUSED:
        assert not seen.fetched and not seen.committed and seen.stored == SEEDED, seen
        assert seen.error is not None and REFUSAL.search(seen.error), seen
        assert seen.refused_by_broker == (refusal,), seen
    else:
        assert seen.fetched and seen.committed, seen
        assert seen.error is None and seen.refused_by_broker == (), seen
    agrees(offctl_verdict(seen), outcome, refusal)


@pytest.mark.parametrize(("library", "release", "on"), list(PAIRS))
def test_the_what_if_on_the_other_broker_says_the_same(runs, library, release, on):
    """The rehearsal: on the state the spout left on the OTHER broker (the cluster before its upgrade or rollback),
    `--kafka-release` naming this broker's release gives, from offctl's table, what this broker did."""
    outcome, refusal = PAIRS[library, release, on]
    other = next(target for target in ("4.4", "3.9") if target != on)
    consumer = offctl_verdict(runs.of(library, release)[other], "--kafka-release", on)
    assert consumer["broker_against"] == f"Kafka {on} (--kafka-release, a what-if)"
    agrees(consumer, outcome, refusal)
