"""offctl.core.time.transactions on plain data: which rows wait behind an open transaction, and which finding its age
makes. The same rules run end to end on Apache Kafka 4.4 in tests/oracle/test_read_committed_e2e.py; what only plain
data shows here: the edges of the two thresholds, a transaction whose first record was not read, a producer's clock
ahead of the capture, and the broker's transaction.max.timeout.ms as reported."""

from __future__ import annotations

import pytest

from offctl.core.records.model import KAFKA, ConsumerKey, LogMessage, MessageRead, OffsetRecord, PartitionRow
from offctl.core.time import transactions

NOW = 1_800_000_000_000
GROUP = ConsumerKey(KAFKA, "ledger-client")


def row(lag: int | None, last_stable: int | None, log_end: int = 12, partition: int = 0) -> PartitionRow:
    record = OffsetRecord(GROUP, partition, "ledger", 10)
    return PartitionRow(record, 0, log_end, lag, None, "ledger", last_stable=last_stable)


def read_at(offset: int, ts: int | None, partition: int = 0) -> MessageRead:
    return MessageRead(
        {("ledger", partition, offset): (LogMessage("ledger", partition, offset, ts, "CreateTime", None, b"v"),)}
    )


@pytest.mark.parametrize(
    "r, waits",
    [
        (row(0, 10), True),  # read up to the LSO, the log goes on: waits
        (row(0, 12), False),  # LSO = log end: no transaction open
        (row(2, 10), False),  # still reading below the LSO
        (row(0, None), False),  # a read_uncommitted spout (no last stable offset)
        (row(None, 10), False),  # no lag: where it resumes is unknown or outside the log
    ],
    ids=["waits", "no-open-transaction", "lagging", "read-uncommitted", "no-lag"],
)
def test_which_rows_wait(r, waits):
    assert transactions.waits(r) is waits
    assert transactions.positions([r]) == ([("ledger", 0, 10)] if waits else [])


@pytest.mark.parametrize(
    "age_s, code",
    [(59.999, None), (60, "OPEN_TRANSACTION"), (900, "OPEN_TRANSACTION"), (900.001, "HANGING_TRANSACTION")],
)
def test_the_age_decides_the_code(age_s, code):
    r = row(0, 10)
    found = transactions.ages([r], read_at(10, NOW - int(age_s * 1000)), NOW)
    made, notes = transactions.findings([r], found, NOW, transactions.max_timeout_ms({}))
    assert [f.code for f in made] == ([code] if code else []) and not notes
    if code:
        assert made[0].severity.label == ("error" if code == "HANGING_TRANSACTION" else "warning")
        assert "the 2 offsets from there to the log end 12 are held back" in made[0].message


def test_the_brokers_own_maximum_is_used_where_it_reports_one():
    r = row(0, 10)
    found = transactions.ages([r], read_at(10, NOW - 3_600_000), NOW)
    limit = transactions.max_timeout_ms({"transaction.max.timeout.ms": "86400000"})
    assert limit == (86_400_000, "the broker's transaction.max.timeout.ms")
    assert [f.code for f in transactions.findings([r], found, NOW, limit)[0]] == ["OPEN_TRANSACTION"]
    assert transactions.max_timeout_ms({"transaction.max.timeout.ms": "junk"})[0] == 900_000


def test_an_unread_first_record_is_a_note_not_a_finding():
    r = row(0, 10)
    found = transactions.ages([r], MessageRead(unread={("ledger", 0, 10): "not read within 0.5s"}), NOW)
    made, notes = transactions.findings([r], found, NOW, transactions.max_timeout_ms({}))
    assert made == [] and len(notes) == 1
    assert "ledger/0" in notes[0] and "not read within 0.5s" in notes[0] and "OPEN_TRANSACTION not checked" in notes[0]


def test_a_producer_clock_ahead_of_the_capture_is_no_age():
    r = row(0, 10)
    found = transactions.ages([r], read_at(10, NOW + 3_600_000), NOW)
    assert found == {("ledger", 0, 10): 0.0}
    assert transactions.findings([r], found, NOW, transactions.max_timeout_ms({})) == ([], [])
    assert not transactions.old_enough(found)
