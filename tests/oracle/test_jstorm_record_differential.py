"""offctl's model of JStorm's Kafka spout's record read and write (offctl/core/records/jstorm.py parse_jstorm_node over
json-simple's model, offctl/core/storm/jstorm.py record_bytes) held to json-simple 1.1's own classes on generated input
(issue 47). jstorm-kafka is not on Maven Central, so the oracle, tests/storm_runner/jstorm/JStormRecordOracle.java, runs
its lines copied from alibaba/jstorm 2.4.0 (ZkState.readJSON, the PartitionConsumer constructor's read, commitState's
map and ZkState.writeJSON) on json-simple's and Guava's real classes, one JVM asked one input at a time, so that
hypothesis shrinks a disagreement to its smallest input.

The read: for each record's bytes, whether the spout takes an offset and which ("use <offset>"), or starts the
partition as without a record ("none"). The inputs are the records JStorm writes (record_bytes), records near them
(an offset of every JSON type, integers at and beyond a Java long, doubles, leading zeros; a topology of any type;
other members, json-simple's tolerated commas, duplicate keys, trailing bytes), storm-kafka's records, and all of them
damaged at the byte level; the corpora tests/corpus/jstorm_records.txt and tests/corpus/storm_kafka_records.txt first.

The write: record_bytes for generated names (the topology's name or none, the host, the topic: escapes, control
characters, U+2000-U+20FF, lone surrogates and pairs) and numbers at Java's limits, against json-simple's
toJSONString of the HashMap commitState fills, encoded as Java's getBytes(UTF-8) encodes it.

OFFCTL_DIFFERENTIAL_EXAMPLES examples each (default 1,000 in the suite; `python -m
tests.oracle.test_jstorm_record_differential 100000` runs that many and prints the counts)."""

from __future__ import annotations

import base64
import collections
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from offctl.core.records.model import ZkNode
from offctl.core.records.parse import parse_zk_node
from offctl.core.storm import jstorm
from tests.oracle import differential
from tests.oracle.differential import damaged, each_generated
from tests.oracle.storm_metadata import JStormRecordOracle
from tests.oracle.test_record_differential import (
    NUMBERS,
    STRINGS,
    TRAILING,
    VALUES,
    member,
    ws,
)
from tests.oracle.test_record_differential import corpus as storm_kafka_corpus
from tests.oracle.test_record_differential import records as storm_kafka_records

EXAMPLES = differential.EXAMPLES
CORPUS = Path(__file__).parent.parent / "corpus" / "jstorm_records.txt"
COUNTS: collections.Counter = collections.Counter()
LINE = "jstorm-kafka 2.4.0"
ROOT, SPOUT = "/jstorm", jstorm.consumer_id("clicks", "jstorm")


def model(data: bytes) -> str:
    """offctl's verdict in the oracle's words: "use <offset>" where parse_zk_node takes the node's offset, else
    "none"."""
    node = ZkNode(ROOT, SPOUT, jstorm.node_path(ROOT, SPOUT, 0), 0, "clicks", data, 1, 0, jstorm=True)
    record = parse_zk_node(node)
    return "none" if record.malformed is not None else f"use {record.committed}"


NAMES = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=8),  # surrogates too
    st.text(
        st.sampled_from(
            '"\\/\b\f\n\r\t\x00\x1f\x7f\x80\x9f\xa0\u2000\u2028\u20ac\u20ff\u2100\ud800\udbff\udc00\udfff\U0001f600aé'
        ),
        max_size=6,
    ),
    st.sampled_from(["clicks-topo", "", "orders/1", "\ud83d\ude00", "\ude00\ud83d"]),
)


@st.composite
def written(draw) -> tuple[str | None, int, int, str, int, str]:
    """The fields commitState puts in its map: topology.name (a String, or null), a long offset, an int partition, the
    leader's host and int port, kafka.topic."""
    return (
        None if draw(st.integers(0, 5)) == 0 else draw(NAMES),
        draw(st.integers(-(2**63), 2**63 - 1) | st.sampled_from([0, -1, 2**63 - 1, -(2**63)])),
        draw(st.integers(-(2**31), 2**31 - 1) | st.integers(0, 64)),
        draw(NAMES),
        draw(st.integers(-(2**31), 2**31 - 1) | st.integers(0, 65535)),
        draw(NAMES),
    )


@st.composite
def documents(draw) -> str:
    """A record document near what JStorm writes (an offset of a drawn type, a topology string or anything) with other
    members, in any order, with json-simple's tolerated separators now and then; or any value."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(VALUES)
    if kind == 1:
        return draw(
            st.sampled_from(
                ["", "null", "{}", "[]", '"x"', "{,}", '{"offset"::5}', '{"offset" 5}', '{"offset":5,,}', "{:1}"]
            )
        )
    members = []
    if kind >= 3:
        members.append(f'"offset":{draw(NUMBERS) if draw(st.integers(0, 2)) else draw(VALUES)}')
    if kind >= 5:
        members.append(f'"topology":{draw(STRINGS) if draw(st.integers(0, 3)) else draw(VALUES)}')
    members += draw(st.lists(member(), max_size=3))
    members = draw(st.permutations(members))
    separator = draw(st.sampled_from([",", ",", ",", ",,", " ", ", "]))
    return "{" + separator.join(members) + draw(st.sampled_from(["", "", "", ","])) + "}"


@st.composite
def records(draw) -> bytes:
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return damaged(draw, jstorm.record_bytes(*draw(written())))
    if kind == 1:
        return draw(storm_kafka_records())
    return damaged(draw, (draw(ws()) + draw(documents()) + draw(TRAILING)).encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module")
def oracle():
    with JStormRecordOracle() as running:
        yield running


def agree(oracle: JStormRecordOracle, inputs: list[bytes]) -> None:
    said = oracle.ask(inputs)
    for data, answer in zip(inputs, said):
        verdict = answer if answer.startswith("use ") else "none"
        COUNTS[LINE, "use" if answer.startswith("use ") else answer] += 1
        assert model(data) == verdict, f"jstorm-kafka reads {data!r} as {answer!r}; offctl as {model(data)!r}"


def corpus() -> list[bytes]:
    own = [base64.b64decode(line) for line in CORPUS.read_text().splitlines() if line and not line.startswith("#")]
    return own + storm_kafka_corpus()


def test_the_corpus_agrees(oracle):
    agree(oracle, corpus())


def test_generated_records_agree(oracle):
    each_generated(records(), lambda data: agree(oracle, [data]), EXAMPLES)


def test_records_written_agree(oracle):
    """record_bytes against json-simple's toJSONString of commitState's HashMap, byte for byte; and the spout reads
    back the offset written."""

    def check(fields):
        [java] = oracle.write([fields])
        COUNTS[LINE, "written"] += 1
        assert jstorm.record_bytes(*fields) == java, f"commitState writes {java!r} for {fields!r}"
        assert model(java) == f"use {fields[1]}"

    each_generated(written(), check, EXAMPLES)


def main(examples: int) -> None:
    """Run `examples` generated inputs of each kind and print the verdicts' counts."""
    differential.full_run(
        sys.modules[__name__], examples, [LINE], lambda line: JStormRecordOracle(), lambda line: f"{line} records"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
