"""Whether brokers serve a spout (offctl.core.storm.protocol): the judgement on hand-made clients and brokers, every
edge of a version range; the tables themselves are held to the real brokers and spouts in
tests/e2e/test_broker_versions_e2e.py and tests/oracle/test_broker_support_e2e.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from offctl.core.records.model import (
    KAFKA,
    ZOOKEEPER,
    ConsumerKey,
    ConsumerSummary,
    OffsetRecord,
    PartitionRow,
    Report,
    Thresholds,
)
from offctl.core.rules import served
from offctl.core.rules.profiles import Profile, Profiles
from offctl.core.storm import kafka_clients, kafka_releases
from offctl.core.storm.kafka_clients import Client, client_line
from offctl.core.storm.protocol import BROKERS, Brokers, client_of, support
from offctl.core.storm.releases import Library, SpoutProfile, StormKafkaClient

FIXED = Client("old", False, {"Fetch": (3, 3), "ListOffsets": (0, 0)}, "test")
NEGOTIATING = Client("new", True, {"Fetch": (0, 11), "ListOffsets": (0, 5)}, "test")


def brokers(**accepts) -> Brokers:
    return Brokers(BROKERS, accepts)


def test_a_fixed_version_inside_every_brokers_range_is_served():
    verdict = support(FIXED, brokers(a={"Fetch": (0, 17), "ListOffsets": (0, 10)}))
    assert verdict.serves and verdict.refused == ()


def test_a_fixed_version_below_the_brokers_oldest_is_refused_with_what_each_side_has():
    verdict = support(FIXED, brokers(a={"Fetch": (4, 17), "ListOffsets": (1, 10)}))
    assert not verdict.serves
    assert [(r.api, r.sends, r.accepts, r.brokers) for r in verdict.refused] == [
        ("Fetch", (3, 3), (4, 17), ("a",)),
        ("ListOffsets", (0, 0), (1, 10), ("a",)),
    ]
    assert verdict.refused[0].text() == "Fetch v3 (a accepts v4-v17)"


def test_a_fixed_version_above_the_brokers_newest_is_refused():
    assert not support(FIXED, brokers(a={"Fetch": (0, 2), "ListOffsets": (0, 0)})).serves


def test_a_negotiating_client_is_served_while_any_version_is_shared():
    assert support(NEGOTIATING, brokers(a={"Fetch": (11, 17), "ListOffsets": (5, 10)})).serves
    verdict = support(NEGOTIATING, brokers(a={"Fetch": (12, 17), "ListOffsets": (1, 10)}))
    assert [(r.api, r.sends) for r in verdict.refused] == [("Fetch", (0, 11))]


def test_one_broker_refusing_is_enough_and_is_named():
    """A rolling upgrade: the spout's leaders and coordinator may be on any broker."""
    verdict = support(
        FIXED, brokers(old={"Fetch": (0, 16), "ListOffsets": (0, 9)}, new={"Fetch": (4, 17), "ListOffsets": (1, 10)})
    )
    assert [(r.api, r.brokers) for r in verdict.refused] == [("Fetch", ("new",)), ("ListOffsets", ("new",))]


def test_an_api_the_broker_does_not_know_is_refused():
    verdict = support(FIXED, brokers(a={"Fetch": (0, 17)}))
    assert [(r.api, r.accepts) for r in verdict.refused] == [("ListOffsets", None)]
    assert verdict.refused[0].text() == "ListOffsets v0 (a does not know it)"


@given(st.integers(0, 20), st.integers(0, 20), st.integers(0, 20), st.integers(0, 20), st.booleans())
def test_served_exactly_when_a_version_is_on_both_sides(c1, c2, b1, b2, negotiates):
    low, high = sorted((c1, c2))
    if not negotiates:
        low = high
    accepts = tuple(sorted((b1, b2)))
    verdict = support(Client("c", negotiates, {"Fetch": (low, high)}, "t"), brokers(a={"Fetch": accepts}))
    assert verdict.serves == any(accepts[0] <= v <= accepts[1] for v in range(low, high + 1))


@pytest.mark.parametrize(
    "text, line", [("0.10.1.0", "0.10.1"), ("0.9.0.1", "0.9.0"), ("2.8.1", "2.8"), ("4.1.0", "4.1"), ("3.9", "3.9")]
)
def test_client_lines(text, line):
    assert client_line(text) == line


def test_a_what_if_names_its_release_and_takes_the_tables_row():
    line = next(iter(kafka_releases.RELEASES))
    what_if = kafka_releases.what_if(f" {line}.1 ")
    assert what_if.what_if and what_if.release == f"{line}.1"
    assert list(what_if.accepts.values()) == [kafka_releases.RELEASES[line]]
    assert what_if.label() == f"Kafka {line}.1 (--kafka-release, a what-if)"


@pytest.mark.parametrize("text", ["5.0", "0.7", "four", "", "4.0; rm -rf /"])
def test_a_release_without_a_row_is_refused_with_the_rows_there_are(text):
    with pytest.raises(ValueError) as refused:
        kafka_releases.line_of(text)
    assert "4.0" in str(refused.value) or "is not a Kafka release" in str(refused.value)


def test_every_storm_pin_has_a_client_table():
    """A release Storm builds with that offctl cannot judge would be a silent gap: each pin resolves to a table."""
    pins = [("scala", pin) for pin in kafka_clients.STORM_KAFKA_PINS.values()]
    pins += [("java", pin) for _, pin in kafka_clients.CLIENT_PINS]
    assert len(pins) > 5
    for kind, pin in pins:
        assert (kind, client_line(pin)) in kafka_clients.CLIENTS, pin


# --- what each spout sends, judged per consumer ---------------------------------------------------------------


def client_spout(release: str) -> SpoutProfile:
    return replace(SpoutProfile(), client_release=release, client=StormKafkaClient.of_version(release))


@pytest.mark.parametrize(
    "library, profile, served_on_4_4",
    [
        (Library.STORM_KAFKA, SpoutProfile(), False),
        (Library.STORM_KAFKA_TRIDENT, SpoutProfile(), False),
        (Library.STORM_KAFKA_CLIENT, client_spout("1.2.4"), False),
        (Library.STORM_KAFKA_CLIENT, client_spout("2.0.0"), True),
        (Library.STORM_KAFKA_CLIENT, client_spout("2.8.3"), True),
    ],
)
def test_the_real_spouts_verdicts_on_4_4_and_3_9(library, profile, served_on_4_4):
    """What tests/oracle/test_broker_support_e2e.py saw the real spouts do, from the tables alone."""
    client = client_of(library, profile)
    assert support(client, kafka_releases.what_if("4.4")).serves is served_on_4_4
    assert support(client, kafka_releases.what_if("3.9")).serves


def test_a_spout_that_assigns_sends_no_group_requests_and_one_that_subscribes_does():
    assigns = client_of(Library.STORM_KAFKA_CLIENT, client_spout("1.2.4"))
    subscribes = client_of(Library.STORM_KAFKA_CLIENT, client_spout("1.1.1"))
    assert "JoinGroup" not in assigns.apis and subscribes.apis["JoinGroup"] == (0, 0)
    # 4.0.0 refuses JoinGroup v0-v1 (KIP-896), 4.0.1 takes them back (KAFKA-19444)
    refused = {r.api for r in support(subscribes, kafka_releases.what_if("4.0")).refused}
    assert "JoinGroup" in refused
    assert "JoinGroup" not in {r.api for r in support(subscribes, kafka_releases.what_if("4.0.1")).refused}


def test_a_negotiating_client_asks_api_versions_and_a_fixed_one_does_not():
    assert "ApiVersions" in client_of(Library.STORM_KAFKA_CLIENT, client_spout("2.8.3")).apis
    assert "ApiVersions" not in client_of(Library.STORM_KAFKA_CLIENT, client_spout("1.2.4")).apis
    assert set(client_of(Library.STORM_KAFKA, SpoutProfile()).apis) == {"ListOffsets", "Fetch"}


def test_the_topologys_own_client_release_is_the_one_judged():
    shipped = replace(client_spout("1.2.4"), kafka_clients_release="2.8.1")  # no table: not judged
    assert client_of(Library.STORM_KAFKA_CLIENT, shipped) is None
    newer = replace(client_spout("1.2.4"), kafka_clients_release="3.9.2")
    assert support(client_of(Library.STORM_KAFKA_CLIENT, newer), kafka_releases.what_if("4.4")).serves


def report_of(*consumers: tuple[ConsumerKey, str | None]) -> Report:
    rows = tuple(
        PartitionRow(OffsetRecord(key, 0, "t", 5, trident=trident), 0, 10, 5, None, "t") for key, trident in consumers
    )
    summaries = tuple(ConsumerSummary(key, ("t",), 1, 5, 5, None, ()) for key, _ in consumers)
    return Report(1, rows, (), summaries)


def test_each_consumer_is_judged_by_its_own_profile_and_refused_ones_get_one_finding():
    old, new = ConsumerKey(ZOOKEEPER, "orders", "/r"), ConsumerKey(KAFKA, "clicks")
    legacy_client = Profile("legacy", "clicks", replace(Thresholds(), spout=client_spout("1.2.4")))
    profiles = Profiles(Thresholds(), (legacy_client,))
    report = replace(
        report_of((old, None), (new, None)),
        consumers=tuple(
            replace(c, profile="legacy" if c.key == new else None)
            for c in report_of((old, None), (new, None)).consumers
        ),
    )
    supports, found, skipped = served.judged(report, profiles, kafka_releases.what_if("4.4"))
    assert {k: s.serves for k, s in supports.items()} == {old: False, new: False}
    assert [(f.code, f.key, f.partition) for f in found] == [
        ("BROKER_INCOMPATIBLE", old, None),
        ("BROKER_INCOMPATIBLE", new, None),
    ]
    assert "kafka-clients 0.10.1" in found[1].message and "Fetch v3" in found[1].message
    assert skipped == []
    marked = served.on_every_partition(report, found)
    assert all(r.codes == ("BROKER_INCOMPATIBLE",) for r in marked.rows)


def test_a_client_without_a_table_is_a_skipped_check_not_a_verdict():
    key = ConsumerKey(KAFKA, "clicks")
    profiles = Profiles(replace(Thresholds(), spout=replace(client_spout("2.8.3"), kafka_clients_release="2.8.1")))
    supports, found, skipped = served.judged(report_of((key, None)), profiles, kafka_releases.what_if("4.4"))
    assert supports == {} and found == []
    assert len(skipped) == 1 and "Kafka client 2.8.1" in skipped[0] and "4.3" in skipped[0]
