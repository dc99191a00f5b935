"""offctl's model of a Trident Kafka spout's stored state (offctl/core/records/trident.py parse_trident_node) held to
Storm's own classes on generated input (issue 44): for each state's bytes, whether the spout starts the partition as
with no state, resumes from it (the offset, and the topology id it compares), or fails every batch (the emitter, or
TransactionalState.getData itself, throws). The oracle is tests/storm_runner/trident/StateOracle.java (the real
getData over each line's JSON parser, then the emitter's reading), one JVM per line:

    storm-kafka 1.2.4          storm-core 1.2.4's json-simple; TridentKafkaEmitter's casts
    storm-kafka-client 1.2.4   storm-core 1.2.4's json-simple; the real 1.x KafkaTridentSpoutBatchMetadata.fromMap
                               (a tp map, no topologyId): where it reads a meta otherwise than 2.x's, which offctl
                               models, offctl says it cannot tell (counted, not compared)
    storm-kafka-client 2.8.3   storm-client 2.8.3's json-smart; the real KafkaTridentSpoutBatchMetadata.fromMap

From storm-client 2.6 the state is read by json-smart, which offctl does not model: where json-simple refuses the
bytes offctl says it cannot tell (those inputs are counted as "cannot tell", not compared); everywhere else its answer
must be json-smart's.

OFFCTL_DIFFERENTIAL_EXAMPLES examples per line (default 1,000 in the suite;
`python -m tests.oracle.test_state_differential 100000` runs that many per line and prints the counts).
tests/corpus/trident_states.txt is replayed first."""

from __future__ import annotations

import base64
import collections
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from offctl.core.records.model import STORM_KAFKA, STORM_KAFKA_CLIENT, ZkNode
from offctl.core.records.stormjson import load_json_simple
from offctl.core.records.trident import parse_trident_node
from offctl.inputs import printable
from tests.oracle import differential
from tests.oracle.differential import damaged, each_generated
from tests.oracle.storm_metadata import StateOracle
from tests.oracle.test_record_differential import INTEGERS, NUMBERS, STRINGS, TRAILING, VALUES, ws

EXAMPLES = differential.EXAMPLES
CORPUS = Path(__file__).parent.parent / "corpus" / "trident_states.txt"
LINES = ("storm-kafka 1.2.4", "storm-kafka-client 1.2.4", "storm-kafka-client 2.8.3")
COUNTS: collections.Counter = collections.Counter()
CANNOT_TELL = "cannot tell"


def model(data: bytes, line: str) -> str:
    """offctl's verdict in the oracle's words ("none", "use <offset> <id>", "throws"), or CANNOT_TELL."""
    client = "client" in line
    node = ZkNode(
        "/transactional",
        "spout",
        "/transactional/spout/user/partition_0/7",
        0,
        None,
        data,
        1,
        0,
        trident=STORM_KAFKA_CLIENT if client else STORM_KAFKA,
        txid=7,
    )
    record = parse_trident_node(node)
    json_smart, client_1x = line.endswith("2.8.3"), client and line.endswith("1.2.4")
    if json_smart and record.unparsed:
        return CANNOT_TELL  # storm-client 2.6+: json-smart may read what json-simple refuses, and refuse what it reads
    if client_1x and record.differs_1x:
        return CANNOT_TELL  # 1.x's fromMap reads a tp map and no topologyId: offctl models 2.x's
    if record.stuck:
        return "throws"
    if record.malformed is not None:
        return "none"
    doc = load_json_simple(data)[0]  # the id as stored (the record holds it made printable)
    raw = doc.get("topologyId") if client else (doc.get("topology") or {}).get("id")
    assert record.topology_id == (printable(raw) if raw or not client and raw is not None else None), (record, raw)
    if raw is None or client_1x:  # 1.x's meta has no topology id
        return f"use {record.committed} -"
    java = raw.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")  # getBytes(UTF_8)
    return f"use {record.committed} {base64.b64encode(java.encode('utf-8', 'replace')).decode()}"


KEYS = st.one_of(
    st.sampled_from(
        [
            '"nextOffset"',
            '"topology"',
            '"firstOffset"',
            '"lastOffset"',
            '"topologyId"',
            '"offset"',
            '"partition"',
            '"broker"',
            '"topic"',
            '"tp"',
            '"topicPartition"',
        ]
    ),
    st.sampled_from(['"NextOffset"', '"lastOffset "', '"last\\u004fffset"', '"id"', '"x"', '""']),
)


@st.composite
def documents(draw, client: bool, x1: bool = False) -> str:
    """A state: near what each emitter writes (its offsets, and a topology id, of drawn types) with other members, or
    any value, or what json-smart reads and json-simple does not (unquoted keys and words, single quotes). `x1`:
    storm-kafka-client 1.x's line, whose meta carries a tp map of its topic and partition: drawn most of the time,
    its members mostly as 1.x writes them, so that the meta 1.x's fromMap uses is common enough to test."""
    kind = draw(st.integers(0, 9))
    offsets = st.one_of(*[st.integers(-1, 10**6).map(str)] * 4, INTEGERS)  # at the edges of a long, now and then
    if kind == 0:
        return draw(VALUES)
    if kind == 1:
        return draw(
            st.sampled_from(
                [
                    "",
                    "null",
                    "{}",
                    "[]",
                    '"x"',
                    "{firstOffset:1,lastOffset:4}",
                    "nextOffset",
                    "{'nextOffset':5}",
                    '{"nextOffset":5,}',
                    "NaN",
                    '{"lastOffset":NaN}',
                ]
            )
        )
    members = []
    if kind >= 6:  # as the line's emitter writes it (now and then the other's), but for the values drawn
        if client != bool(draw(st.integers(0, 4))):
            members += [
                f'"nextOffset":{draw(offsets)}',
                f'"offset":{draw(offsets)}',
                f'"topology":{{"id":{draw(STRINGS)},"name":"orders"}}',
                '"partition":0',
                '"topic":"orders"',
            ]
        else:
            members += [
                f'"firstOffset":{draw(offsets)}',
                f'"lastOffset":{draw(offsets)}',
                f'"topologyId":{draw(STRINGS)}',
            ]
            if draw(st.integers(0, 4)) if x1 else draw(st.booleans()):  # 1.x's meta: its topic and partition
                # (KafkaTridentSpoutBatchMetadata.toMap, v1.2.4)
                topic = draw(st.one_of(*[st.just('"orders"')] * (6 if x1 else 3), STRINGS, VALUES))
                small = st.integers(0, 9).map(str)
                partition = draw(st.one_of(*[small] * (4 if x1 else 0), offsets, offsets, VALUES))
                members.append(f'"tp":{{"topic":{topic},"partition":{partition}}}')
    elif kind >= 3:
        number = NUMBERS if draw(st.integers(0, 2)) else VALUES
        if draw(st.booleans()):
            members.append(f'"nextOffset":{draw(number)}')
            members.append(f'"topology":{{"id":{draw(STRINGS | VALUES)},"name":"orders"}}')
        else:
            members.append(f'"firstOffset":{draw(number)}')
            members.append(f'"lastOffset":{draw(number)}')
            members.append(f'"topologyId":{draw(STRINGS | VALUES)}')
    members += [f"{draw(KEYS)}:{draw(VALUES)}" for _ in range(draw(st.integers(0, 2)))]
    members = [m for m in draw(st.permutations(members)) if draw(st.integers(0, 15))]  # now and then one left out
    return "{" + ",".join(members) + "}"


@st.composite
def states(draw, client: bool, x1: bool = False) -> bytes:
    lead = draw(ws()) if draw(st.integers(0, 4)) == 0 else draw(st.text(alphabet=" \t\r\n", max_size=2))
    data = (lead + draw(documents(client, x1)) + draw(st.one_of(st.just(""), TRAILING))).encode(
        "utf-8", "surrogatepass"
    )
    return damaged(draw, data) if draw(st.booleans()) else data


@pytest.fixture(scope="module", params=LINES)
def oracle(request):
    with StateOracle(request.param) as running:
        yield running


def agree(oracle: StateOracle, inputs: list[bytes]) -> None:
    storm = oracle.ask(inputs)
    for data, said in zip(inputs, storm):
        modelled = model(data, oracle.line)
        COUNTS[oracle.line, said.split(" ")[0] if modelled != CANNOT_TELL else CANNOT_TELL] += 1
        if modelled == CANNOT_TELL:
            continue
        assert modelled == said.split(" ")[0] if said.startswith("throws") else modelled == said, (
            f"{oracle.line} reads {data!r} as {said!r}; offctl as {modelled!r}"
        )


def corpus() -> list[bytes]:
    return [base64.b64decode(line) for line in CORPUS.read_text().splitlines() if line and not line.startswith("#")]


def test_the_corpus_agrees(oracle):
    agree(oracle, corpus())


def test_generated_states_agree(oracle):
    each_generated(
        states("client" in oracle.line, oracle.line == "storm-kafka-client 1.2.4"),
        lambda data: agree(oracle, [data]),
        EXAMPLES,
    )


def main(examples: int, only: str = "") -> None:
    """Run `examples` generated inputs per line (those whose name holds `only`) and print the verdicts' counts (the
    full count of issue 44)."""
    differential.full_run(
        sys.modules[__name__],
        examples,
        [line for line in LINES if only in line],
        StateOracle,
        lambda line: f"{line} Trident states",
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000, sys.argv[2] if len(sys.argv) > 2 else "")
