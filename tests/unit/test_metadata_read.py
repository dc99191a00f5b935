"""parse_commit_metadata on plain data: what Storm's Jackson read makes of bytes after the metadata's object (a NUL
that confluent-kafka's writes used to leave, before offctl wrote commits through kafka-python). offctl reads and
writes metadata byte for byte (offctl/adapters/groups.py): end to end in tests/oracle/test_spout_oracle_e2e.py (the real
spout's commit read 10,000 times, and offctl's writes read back by the Java client)."""

from __future__ import annotations

from offctl.core.records.parse import parse_commit_metadata

STORM = '{"topologyId":"orders-1-1700000000","taskId":1,"threadName":"main"}'


def test_the_spout_reads_what_follows_its_object_as_nothing():
    """Jackson's default readValue stops at the end of the object (FAIL_ON_TRAILING_TOKENS off): the real spout took
    its metadata followed by a NUL as its own (storm-kafka-client 1.2.4 and 2.8.3,
    tests/oracle/test_storm_client_spout.py)."""
    for tail in ("", "\x00", "garbage", " {"):
        assert parse_commit_metadata(STORM + tail).topology_id == "orders-1-1700000000"
    assert parse_commit_metadata('{"topologyId":"x","other":1}') is None  # FAIL_ON_UNKNOWN_PROPERTIES
