"""offctl's model of storm-kafka's partition record read (offctl/core/records/parse.py parse_zk_node over
offctl/core/storm/jsonsimple.py and load_json_simple) held to storm-kafka's own classes on generated input (issue 44):
for each record's bytes, whether the spout takes the record, and if so the offset and topology id it takes, or starts
the partition as if it had none. The oracle is tests/storm_runner/kafka/RecordOracle.java (storm-kafka 1.2.4's real
ZkState.readJSON over json-simple 1.1, then PartitionManager's two casts), one JVM, asked one input at a time so that
hypothesis shrinks a disagreement to its smallest input.

The inputs are records built from the pieces json-simple and the casts treat differently (the canonical record
storm-kafka writes, the five keys and look-alikes, every JSON type in `offset`, `topology` and `id`, integers at and
beyond a Java long, doubles, leading zeros, escapes and surrogates, json-simple's tolerated commas and colons,
duplicate keys, nesting, whitespace it does and does not skip, trailing bytes) and then, often, damaged at the byte
level (a byte inserted, removed or replaced: invalid UTF-8, NULs, broken syntax).

OFFCTL_DIFFERENTIAL_EXAMPLES examples (default 1,000 in the suite; `python -m tests.oracle.test_record_differential
100000` runs that many and prints the counts). tests/corpus/storm_kafka_records.txt is replayed first: the inputs
that once disagreed, and the hand-picked ones."""

from __future__ import annotations

import base64
import collections
import json
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from offctl.core.records.model import ZkNode
from offctl.core.records.parse import parse_zk_node, record_topology, storm_kafka_record
from tests.oracle import differential
from tests.oracle.differential import damaged, each_generated
from tests.oracle.storm_metadata import RecordOracle

EXAMPLES = differential.EXAMPLES
CORPUS = Path(__file__).parent.parent / "corpus" / "storm_kafka_records.txt"
COUNTS: collections.Counter = collections.Counter()
LINE = "storm-kafka 1.2.4"


def model(data: bytes) -> str:
    """offctl's verdict in the oracle's words: "use <offset> <base64 of the topology id>" where parse_zk_node finds
    the record usable (the id as Java's getBytes(UTF_8) writes it: a lone surrogate is '?'), else "none"."""
    node = ZkNode("/zkRoot", "spout", "/zkRoot/spout/partition_0", 0, None, data, 1, 0)
    record = parse_zk_node(node)
    if record.malformed is not None:
        return "none"
    topology_id, _ = record_topology(node)
    java = topology_id.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return f"use {record.committed} {base64.b64encode(java.encode('utf-8', 'replace')).decode()}"


def ws() -> st.SearchStrategy[str]:
    return st.text(alphabet=" \t\r\n\f\v\x00\u00a0", max_size=2)  # json-simple skips the first four only


def json_string(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(text, st.booleans()).map(lambda t: json.dumps(t[0], ensure_ascii=t[1]))


TEXT = st.text(max_size=8) | st.sampled_from(["orders-1-1700000000", "", "\ud800", "\udc00x", "\U0001f600", "\\"])
STRINGS = json_string(TEXT) | st.sampled_from(
    ['"\\ud83d\\ude00"', '"\\ud800"', '"\\u00e9"', '"a\\/b"', '"\\x"', '"raw\ttab"', '"\\U0041"', "'single'"]
)
LONG = 2**63
INTEGERS = st.one_of(
    st.integers(-(2**70), 2**70), st.sampled_from([LONG - 1, LONG, -LONG, -LONG - 1, 0, -1, 1, 2**31, 10**18, 10**19])
).map(str)
NUMBERS = st.one_of(
    INTEGERS,
    INTEGERS,
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(
        [
            "007",
            "-0",
            "00",
            "1.0",
            "1e5",
            "1E+2",
            "5.",
            ".5",
            "+5",
            "-",
            "1e400",
            "0x10",
            "NaN",
            "Infinity",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "1_000",
            "５",
        ]
    ),
)
SCALARS = st.one_of(NUMBERS, STRINGS, st.sampled_from(["true", "false", "null", "nul", "True", "NULL"]))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(json_string(st.text(max_size=4)), inner), max_size=2).map(
            lambda members: "{" + ",".join(f"{k}:{v}" for k, v in members) + "}"
        ),
    ),
    max_leaves=4,
)
KEYS = st.one_of(
    st.sampled_from(['"topology"', '"offset"', '"partition"', '"broker"', '"topic"']),
    st.sampled_from(['"Offset"', '"offset "', '"off\\u0073et"', '"topolog\\u0079"', '"id"', '"x"', '""']),
    json_string(st.text(max_size=6)),
)


@st.composite
def topology(draw) -> str:
    """A `topology` value: mostly an object with an id (and a name), else any value."""
    if draw(st.integers(0, 3)) == 0:
        return draw(VALUES)
    members = [f'"id":{draw(STRINGS | SCALARS)}'] if draw(st.integers(0, 5)) else []
    members += draw(
        st.lists(st.sampled_from(['"name":"orders"', '"id":null', '"id":"other-2-2"', '"x":1']), max_size=2)
    )
    return "{" + ",".join(draw(st.permutations(members))) + "}"


@st.composite
def member(draw) -> str:
    key = draw(KEYS)
    value = draw(topology()) if key == '"topology"' else draw(VALUES)
    return f"{draw(ws())}{key}{draw(ws())}:{draw(ws())}{value}{draw(ws())}"


@st.composite
def documents(draw) -> str:
    """A record document: near what storm-kafka writes (a topology and an offset, drawn types) with other members,
    in any order, with json-simple's tolerated separators now and then; or any value."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(VALUES)
    if kind == 1:
        return draw(
            st.sampled_from(
                ["", "null", "{}", "[]", '"x"', "{,}", '{"offset"::5}', '{"offset" 5}', "[1,,2]", "{:1}", '{"a":1,,}']
            )
        )
    members = []
    if kind >= 4:
        members.append(f'"topology":{draw(topology())}')
        members.append(f'"offset":{draw(NUMBERS) if draw(st.integers(0, 2)) else draw(VALUES)}')
    members += draw(st.lists(member(), max_size=3))
    members = draw(st.permutations(members))
    separator = draw(st.sampled_from([",", ",", ",", ",,", " ", ", "]))
    return "{" + separator.join(members) + draw(st.sampled_from(["", "", "", ","])) + "}"


@st.composite
def canonical(draw) -> bytes:
    """A record byte for byte as storm-kafka writes it (storm_kafka_record), which offctl reads on its fast path."""
    return storm_kafka_record(
        draw(st.sampled_from(["orders-1-1700000000", "t\u00e9-2-2", "\ud800", "", 'a"b'])),
        draw(st.sampled_from(["orders", "", "\u2028"])),
        draw(st.integers(-2, 2**63 - 1)),
        draw(st.integers(0, 2**31 - 1)),
        "k1",
        draw(st.integers(0, 65535)),
        draw(st.sampled_from(["orders", "t/1"])),
    )


TRAILING = st.one_of(
    st.just(""), st.just(""), st.sampled_from(["\x00", " x", "}", ",", "garbage", "\ufffd", " "]), st.text(max_size=3)
)


@st.composite
def records(draw) -> bytes:
    if draw(st.integers(0, 3)) == 0:
        return damaged(draw, draw(canonical()))
    return damaged(draw, (draw(ws()) + draw(documents()) + draw(TRAILING)).encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module")
def oracle():
    with RecordOracle() as running:
        yield running


def agree(oracle: RecordOracle, inputs: list[bytes]) -> None:
    storm = oracle.ask(inputs)
    for data, said in zip(inputs, storm):
        verdict = said if said.startswith("use ") else "none"
        COUNTS[LINE, said.split(" ")[0] if said.startswith("use") else said] += 1
        assert model(data) == verdict, f"storm-kafka 1.2.4 reads {data!r} as {said!r}; offctl as {model(data)!r}"


def corpus() -> list[bytes]:
    return [base64.b64decode(line) for line in CORPUS.read_text().splitlines() if line and not line.startswith("#")]


def test_the_corpus_agrees(oracle):
    agree(oracle, corpus())


def test_generated_records_agree(oracle):
    each_generated(records(), lambda data: agree(oracle, [data]), EXAMPLES)


@st.composite
def ids(draw) -> bytes:
    """Bytes for a topology id, any but the quote and the backslash (json-simple reads every other character in a
    string as itself): invalid UTF-8 above all, which Java replaces by its own count (offctl.core.storm.javautf8)."""
    parts = draw(
        st.lists(
            st.one_of(
                st.binary(max_size=4),
                st.sampled_from(
                    [
                        b"\xed\xa0\x80",
                        b"\xe2\x82",
                        b"\xf0\x9f\x98",
                        b"\xf4\x90\x80\x80",
                        b"\xc0\xaf",
                        b"\xe0\x80\xaf",
                        b"\xf5",
                        b"\x80\x80",
                    ]
                ),
                st.text(max_size=3).map(lambda t: t.encode("utf-8", "surrogatepass")),
            ),
            max_size=6,
        )
    )
    return b"".join(parts).replace(b'"', b"").replace(b"\\", b"")


def test_ids_of_any_bytes_read_as_java_reads_them(oracle):
    """new String(bytes, UTF_8) in the JVM, offctl.core.storm.javautf8 here: the id the spout compares, byte for
    byte."""
    each_generated(ids(), lambda raw: agree(oracle, [b'{"topology":{"id":"' + raw + b'"},"offset":3}']), EXAMPLES)


def main(examples: int) -> None:
    """Run `examples` generated inputs and print the verdicts' counts (the full count of issue 44)."""
    differential.full_run(
        sys.modules[__name__], examples, [LINE], lambda line: RecordOracle(), lambda line: f"{line} records"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
