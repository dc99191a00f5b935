"""storm.metadata_read and parse_commit_metadata on plain data: Storm's metadata as a Java client wrote it, from what
confluent-kafka 2.16 hands back (the bytes after it a C-string read can add, or the NUL a librdkafka write leaves);
end to end in tests/test_spout_oracle_e2e.py (the real spout's commit, read 100 times)."""

from __future__ import annotations

import pytest

from offctl.core.storm import metadata_read, parse_commit_metadata

STORM = '{"topologyId":"orders-1-1700000000","taskId":1,"threadName":"main"}'
LEGACY = "{topic-partition=orders-0, offset=41, numFails=0, thread='Thread-9-spout'}"


@pytest.mark.parametrize("read, written", [
    (STORM, STORM),
    (STORM + "strap", STORM),  # bytes of memory after it (seen)
    (STORM + "\\", STORM),
    (STORM + '{"x":1}', STORM),
    (" " + STORM + "aw", " " + STORM),
    (LEGACY, LEGACY),
    (LEGACY + "zz", LEGACY),
    ("a tool's note", "a tool's note"),  # not Storm's: returned as read
    ("{not json", "{not json"),
    ("", ""),
    (None, None),
], ids=["as-written", "memory-after", "backslash-after", "json-after", "leading-space", "legacy", "legacy-after",
        "a-tools-metadata", "broken-json", "empty", "none"])
def test_storm_metadata_ends_where_it_ends(read, written):
    assert metadata_read(read) == written


def test_the_spout_reads_what_follows_its_object_as_nothing():
    """Jackson's default readValue stops at the end of the object (FAIL_ON_TRAILING_TOKENS off): the real spout took
    its metadata followed by a NUL as its own (storm-kafka-client 1.2.4 and 2.8.3, tests/test_storm_client_spout.py)."""
    for tail in ("", "\x00", "garbage", " {"):
        assert parse_commit_metadata(STORM + tail).topology_id == "orders-1-1700000000"
    assert parse_commit_metadata('{"topologyId":"x","other":1}') is None  # FAIL_ON_UNKNOWN_PROPERTIES
