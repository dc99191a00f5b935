"""A spout held back by an open transaction: OPEN_TRANSACTION and HANGING_TRANSACTION. Pure.

A Kafka consumer with isolation.level=read_committed is handed nothing at or past the partition's last stable
offset (LSO): the first offset of its oldest open transaction, or the high watermark when none is open (KIP-98;
the Java consumer's fetches, and ListOffsets' LATEST under READ_COMMITTED, stop there). A spout that reads committed
(releases.isolation_level: storm-kafka-client given that isolation level) whose lag to the LSO is 0 while the high
watermark is above it has read all it can: it waits until the producer commits or aborts that transaction, however
much is written after it.

The transaction's age is the capture time minus the timestamp of its first record, the record at the LSO (read as a
read_uncommitted consumer reads it: a read_committed read cannot see it). Two codes, by that age:

1. OPEN_TRANSACTION (warning): open for OPEN_AFTER_S or longer, kafka-clients' default transaction.timeout.ms
   (ProducerConfig, 60000 ms): a producer with the default timeout has committed, aborted or been aborted by then.
   A younger one is how every transactional topic looks between a producer's begin and commit: not reported.
2. HANGING_TRANSACTION (error): open longer than the broker's transaction.max.timeout.ms (default 900000 ms): no
   producer may ask for a longer timeout (InitProducerId is refused with INVALID_TRANSACTION_TIMEOUT), and the
   coordinator aborts a transaction once its timeout passes, so this one is not the coordinator's to end: a hanging
   transaction (KIP-664), which only an abort on the partition (kafka-transactions.sh abort, Kafka 3.0+) ends.

Where the record at the LSO was not read (the time budget ran out, --time-lag-budget 0), its age is not known and
no finding is made: a note says how many partitions wait, and why their age is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable

from offctl.core.records.findings import finding
from offctl.core.records.messages import GAP, MESSAGE, at_offset
from offctl.core.records.model import Finding, MessageRead, PartitionLog, PartitionRow, Position, duration, iso_ms

OPEN_AFTER_S = 60.0  # kafka-clients' default transaction.timeout.ms, in seconds
MAX_TIMEOUT = "transaction.max.timeout.ms"  # the broker setting: the longest timeout a producer may ask for
DEFAULT_MAX_TIMEOUT_MS = 900_000  # its default (TransactionStateManagerConfig, Kafka 3.x and 4.x)


def waits(row: PartitionRow) -> bool:
    """The row's spout reads committed, has read up to the last stable offset, and the log goes on past it."""
    return (
        row.last_stable is not None
        and row.lag == 0
        and row.log_end is not None
        and row.topic is not None
        and row.last_stable < row.log_end
    )


def positions(rows: Iterable[PartitionRow]) -> list[Position]:
    """The first record of each open transaction a spout waits behind: the record at the last stable offset."""
    return list(dict.fromkeys((r.topic, r.record.partition, r.last_stable) for r in rows if waits(r)))


def max_timeout_ms(reported: dict[str, str]) -> tuple[int, str]:
    """The broker's transaction.max.timeout.ms and how it is known ("the broker's" or Kafka's default)."""
    value = reported.get(MAX_TIMEOUT, "")
    if value.isdigit():
        return int(value), f"the broker's {MAX_TIMEOUT}"
    return DEFAULT_MAX_TIMEOUT_MS, f"{MAX_TIMEOUT}, Kafka's default (the broker did not report it)"


def ages(rows: Iterable[PartitionRow], read: MessageRead, now_ms: int) -> dict[Position, float | str]:
    """For each waiting row's transaction: its age in seconds, or why it is not known."""
    out: dict[Position, float | str] = {}
    for row in rows:
        if not waits(row):
            continue
        position = (row.topic, row.record.partition, row.last_stable)
        if position in out:
            continue
        at = at_offset(*position, PartitionLog(row.log_start, row.log_end), read)
        first = at.first if at.kind in (MESSAGE, GAP) else None
        if first is None or first.timestamp_ms is None:
            out[position] = at.why or f"offset {first.offset if first else row.last_stable} carries no timestamp"
        else:
            out[position] = max(now_ms - first.timestamp_ms, 0) / 1000
    return out


def old_enough(found: dict[Position, float | str]) -> bool:
    """Whether any transaction is old enough for a finding (the broker's setting is then worth asking for)."""
    return any(isinstance(age, float) and age >= OPEN_AFTER_S for age in found.values())


def findings(
    rows: Iterable[PartitionRow], found: dict[Position, float | str], now_ms: int, max_timeout: tuple[int, str]
) -> tuple[list[Finding], list[str]]:
    """OPEN_TRANSACTION or HANGING_TRANSACTION for each waiting row whose transaction's age is known and at least
    OPEN_AFTER_S; and a note for those whose age is not known."""
    out: list[Finding] = []
    unknown: dict[Position, str] = {}
    limit_ms, limit_source = max_timeout
    for row in rows:
        if not waits(row):
            continue
        r = row.record
        position = (row.topic, r.partition, row.last_stable)
        age = found.get(position, "not read")
        if isinstance(age, str):
            unknown[position] = age
            continue
        if age < OPEN_AFTER_S:
            continue
        where = f"{row.topic}/{r.partition}"
        held = row.log_end - row.last_stable
        since = iso_ms(now_ms - int(age * 1000))
        if age * 1000 > limit_ms:
            message = (
                f"{where} waits behind a transaction open since {since} ({duration(age)}), longer than "
                f"{limit_source} ({duration(limit_ms / 1000)}): no producer may keep a transaction open so "
                f"long, and the coordinator aborts one whose timeout passed, so this one hangs (KIP-664) "
                f"and will not end on its own. The spout reads committed and has read up to the last stable "
                f"offset {row.last_stable}, the transaction's first record; the {held} offsets from there to "
                f"the log end {row.log_end} are held back"
            )
            code = "HANGING_TRANSACTION"
        else:
            message = (
                f"{where} waits behind a transaction open since {since} ({duration(age)}): the spout reads "
                f"committed and has read up to the last stable offset {row.last_stable}, the transaction's "
                f"first record; the {held} offsets from there to the log end {row.log_end} are held back "
                f"until its producer commits or aborts it"
            )
            code = "OPEN_TRANSACTION"
        out.append(finding(code, r.key, message, topic=row.topic, partition=r.partition, path=r.path))
    notes = []
    if unknown:
        shown = sorted(unknown.items())
        named = ", ".join(f"{t}/{p}" for (t, p, _), _ in shown[:5]) + (
            f" and {len(shown) - 5} more" if len(shown) > 5 else ""
        )
        notes.append(
            f"{named}: a spout that reads committed waits behind an open transaction whose age is not "
            f"known ({shown[0][1]}): OPEN_TRANSACTION not checked there"
        )
    return out, notes
