"""offctl's model of storm-kafka-client's commit metadata read (offctl/core/storm/jackson.py, verdict) held to Storm's
own CommitMetadataManager on generated input (issue 44): for each (storm id, metadata bytes), whether the spout takes
the commit as its own, as another's, or throws at start, on every storm-kafka-client line the suite has the jars of
(1.2.4: Jackson 2.9.4; 2.8.3: Jackson 2.20). The oracle is tests/storm_runner/client/MetadataOracle.java, one JVM per
line, asked one input at a time so that hypothesis shrinks a disagreement to its smallest input.

The inputs are JSON documents built from the pieces Jackson's bind treats differently (the three properties, unknown
and look-alike keys, duplicates, every JSON type in every property, numbers at and beyond int and long and 1,000
digits, numeric strings with signs, spaces and other scripts' digits, nulls, nesting, trailing bytes) and then,
often, damaged at the byte level (a byte inserted, removed or replaced: invalid UTF-8, NULs, broken syntax).

OFFCTL_DIFFERENTIAL_EXAMPLES examples per line (default 1,000 in the suite;
`python -m tests.oracle.test_metadata_differential 100000` runs that many per line and prints the counts).
tests/corpus/commit_metadata.txt is replayed first: the inputs that once disagreed, and the hand-picked ones."""

from __future__ import annotations

import base64
import collections
import json
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from offctl.core.storm.jackson import MAX_NUMBER_LENGTH
from offctl.core.storm.jackson import verdict as commit_verdict
from tests.oracle import differential
from tests.oracle.differential import damaged, each_generated
from tests.oracle.storm_metadata import MetadataOracle

EXAMPLES = differential.EXAMPLES
CORPUS = Path(__file__).parent.parent / "corpus" / "commit_metadata.txt"
IDS = ("orders-1-1700000000", "5", "-0", "1e2", "true", "", "null", "t\u00e9-1-1")  # storm ids, and ids as scalars
COUNTS: collections.Counter = collections.Counter()
JACKSON = {"1.2.4": "2.9", "2.8.3": "2.20"}  # the Jackson of each line's jars
# The lines the oracle runs on. Of the other releases tests/oracle/storm_client_spout.py runs, the legacy 1.0.5 and
# 1.1.1 never read metadata; 1.0.6, 1.1.3 (Jackson 2.6.3) and 2.0.0 (2.9.8) bind it with CommitMetadataManager as these
# do, but MetadataOracle.java does not compile against them (it names what they lack): their metadata is judged on
# the real spout's hand-picked scenarios only (tests/oracle/test_storm_kafka_client_releases_e2e.py), not on
# generated input.
ORACLE_LINES = sorted(JACKSON)


def ws() -> st.SearchStrategy[str]:
    return st.text(alphabet=" \t\r\n", max_size=2)


def json_string(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(text, st.booleans()).map(lambda t: json.dumps(t[0], ensure_ascii=t[1]))


NUMERIC_TEXT = st.from_regex(r"\A[ \t\x01]?[+-]?[0-9\u0661\uff13]{0,12}(\.[0-9])?[ \t]?\Z") | st.sampled_from(
    [
        "",
        " ",
        "null",
        " null ",
        "3.0",
        "0x1",
        "1e2",
        "2147483648",
        "-2147483648",
        "9223372036854775808",
        "1_0",
        "\u20033",
        "NaN",
    ]
)
INTEGERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 0]),
)
NUMBERS = st.one_of(
    INTEGERS.map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(
        [
            "-0",
            "-0.0",
            "1e2",
            "1E+2",
            "2147483647.5",
            "2147483647.4",
            "-2147483648.9",
            "1e400",
            "0.5e1",
            "1.0",
            "01",
            "-",
            "1.",
            ".5",
            "+1",
            "NaN",
            "Infinity",
        ]
    ),
    st.integers(995, 1005).map(lambda n: "9" * n),
)
SCALARS = st.one_of(
    NUMBERS,
    json_string(st.text(max_size=12)),
    json_string(NUMERIC_TEXT),
    json_string(st.sampled_from(IDS)),
    st.sampled_from(["true", "false", "null", "nul", "truex"]),
)
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
    st.sampled_from(['"topologyId"', '"taskId"', '"threadName"']),
    st.sampled_from(
        ['"TopologyId"', '"topologyid"', '"topologyId "', '"topology\\u0049d"', '"task\\u0049d"', '"x"', '""']
    ),
    json_string(st.text(max_size=6)),
)
MEMBERS = st.tuples(ws(), KEYS, ws(), VALUES, ws()).map(lambda m: f"{m[0]}{m[1]}{m[2]}:{m[3]}{m[4]}")
OBJECTS = st.lists(MEMBERS, max_size=5).map(lambda members: "{" + ",".join(members) + "}")
ROOTS = st.one_of(
    OBJECTS,
    OBJECTS,
    OBJECTS,
    VALUES,
    st.sampled_from(["null", "null ", "nullx", "null\x00", "null}"]),
    st.integers(0, 1100).map(lambda n: "[" * n + "]" * n),
)
TRAILING = st.one_of(st.just(""), st.sampled_from(["\x00", " x", "}", ",", "garbage", "\ufffd"]), st.text(max_size=4))


@st.composite
def own_looking(draw, storm_id: str) -> str:
    """A document naming `storm_id` (as a string, or as the scalar it reads as), its other members drawn: most of
    what makes a commit the spout's own or not is decided here (taskId's and threadName's coercions, duplicates)."""
    named = draw(
        st.sampled_from(
            [json.dumps(storm_id), json.dumps(storm_id, ensure_ascii=False)]
            + ([storm_id] if storm_id in ("5", "-0", "1e2", "true") else [])
        )
    )
    members = [f'"topologyId":{named}', *draw(st.lists(MEMBERS, max_size=3))]
    return "{" + ",".join(draw(st.permutations(members))) + "}"


@st.composite
def cases(draw) -> tuple[str, bytes]:
    """(storm id, metadata): half of them built around the storm id, the rest any document."""
    storm_id = draw(st.sampled_from(IDS))
    root = draw(own_looking(storm_id)) if draw(st.booleans()) else draw(ROOTS)
    return storm_id, draw(metadata(root))


@st.composite
def metadata(draw, root: str | None = None) -> bytes:
    text = draw(ws()) + (root if root is not None else draw(ROOTS)) + draw(TRAILING)
    return damaged(draw, text.encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module", params=ORACLE_LINES)
def oracle(request):
    with MetadataOracle(request.param) as running:
        yield running


def agree(oracle: MetadataOracle, cases: list[tuple[str, bytes]]) -> None:
    storm = oracle.ask(cases)
    for (storm_id, data), said in zip(cases, storm):
        modelled = commit_verdict(data.decode("utf-8", "replace"), storm_id, MAX_NUMBER_LENGTH[JACKSON[oracle.line]])
        COUNTS[oracle.line, said] += 1
        assert modelled == said, (
            f"storm-kafka-client {oracle.line}: {data!r} with storm id {storm_id!r}: Storm "
            f"says {said}, offctl {modelled}"
        )


def corpus() -> list[tuple[str, bytes]]:
    cases = []
    for line in CORPUS.read_text().splitlines():
        if line and not line.startswith("#"):
            storm_id, data = line.split(" ")
            cases.append((base64.b64decode(storm_id).decode(), base64.b64decode(data)))
    return cases


def test_the_corpus_agrees(oracle):
    agree(oracle, corpus())


def test_generated_metadata_agrees(oracle):
    each_generated(cases(), lambda case: agree(oracle, [case]), EXAMPLES)


def main(examples: int) -> None:
    """Run `examples` generated inputs per line and print the verdicts' counts (the full count of issue 44)."""
    differential.full_run(
        sys.modules[__name__], examples, ORACLE_LINES, MetadataOracle, lambda line: f"storm-kafka-client {line}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
