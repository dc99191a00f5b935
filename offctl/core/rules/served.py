"""Rule 20, BROKER_INCOMPATIBLE: whether the brokers serve each consumer's spout (offctl.core.storm.protocol), each
consumer judged by its own profile's releases. Pure: the brokers' API versions are read by the pipeline, or taken
from the what-if's row (offctl.core.storm.kafka_releases)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from offctl.core.records.findings import finding
from offctl.core.records.model import ConsumerKey, Finding, Report, Severity
from offctl.core.rules import judge
from offctl.core.rules.consumer import library_of
from offctl.core.rules.profiles import Profiles
from offctl.core.storm import protocol
from offctl.core.storm.kafka_clients import kind_of, known_lines
from offctl.core.storm.releases import Library, SpoutProfile

CODE = "BROKER_INCOMPATIBLE"  # the finding, and the check checks_skipped names when it cannot judge


def judged(
    report: Report, profiles: Profiles, brokers: protocol.Brokers
) -> tuple[Mapping[ConsumerKey, protocol.Support], list[Finding], list[str]]:
    """Each consumer's Support against `brokers`, a BROKER_INCOMPATIBLE finding for each one refused, and what could
    not be judged (a client release offctl has no table for), as checks_skipped lines."""
    supports: dict[ConsumerKey, protocol.Support] = {}
    found: list[Finding] = []
    skipped: dict[str, None] = {}
    for _, thresholds, part in judge.parts(report, profiles):
        libraries = {row.record.key: library_of(row.record) for row in part.rows}
        for c in part.consumers:
            library = libraries.get(c.key)
            if library is None:
                continue
            client = protocol.client_of(library, thresholds.spout)
            if client is None:
                skipped[_unknown_client(library, thresholds.spout)] = None
                continue
            verdict = supports[c.key] = protocol.support(client, brokers)
            if not verdict.serves:
                found.append(finding(CODE, c.key, incompatible_text(library, verdict)))
    return supports, found, list(skipped)


def on_every_partition(report: Report, found: list[Finding]) -> Report:
    """The report with each refused consumer's partitions marked (their codes and status), as the faces that show
    partitions only (watch, peek, Storm UI's lag view) show a finding: none of them can be fetched. The finding
    itself is the consumer's, once (partition None)."""
    refused = {f.key for f in found}
    if not refused:
        return report
    rows = tuple(
        replace(row, codes=(*row.codes, CODE), status=Severity.ERROR) if row.record.key in refused else row
        for row in report.rows
    )
    return replace(report, rows=rows)


def what_if_note(brokers: protocol.Brokers, refused: int) -> str:
    """What a what-if says of itself: what the spouts were judged against, and how many the release would stop."""
    return (
        f"what-if: the spouts are judged against {brokers.label()}, offctl's table of its API versions, not against "
        f"the brokers: {refused} consumer{'' if refused == 1 else 's'} would be refused (BROKER_INCOMPATIBLE)"
    )


def incompatible_text(library: Library, verdict: protocol.Support) -> str:
    """The finding's words: the spout's client, what it sends that is refused, and by whom."""
    refused = "; ".join(r.text() for r in verdict.refused)
    return (
        f"{library.value} reads with {verdict.client.name}, which sends requests {verdict.against} do not accept: "
        f"{refused}. The spout cannot fetch or commit there ({verdict.client.source})"
    )


def _unknown_client(library: Library, spout: SpoutProfile) -> str:
    given = spout.kafka_clients_release or "the release Storm builds with"
    return (
        f"{CODE} for {library.value} (offctl has no table of the requests Kafka client {given} sends; it has "
        f"{', '.join(known_lines(kind_of(library)))})"
    )
