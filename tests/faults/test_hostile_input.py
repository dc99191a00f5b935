"""Hostile input never crashes offctl, never prints a secret: property tests over node bytes, commit metadata,
files and command-line values (hypothesis). Each example ends in a finding, or in a clear message with the
documented exit code. The number of examples per property is EXAMPLES (set OFFCTL_FAULT_EXAMPLES)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from offctl.core.records.model import STORM_KAFKA, STORM_KAFKA_CLIENT, KafkaCommit, PartitionLog, Snapshot, ZkNode
from offctl.core.records.parse import parse_commit, parse_zk_node
from offctl.core.rules.analyze import analyze
from offctl.core.storm.outcomes import Resumes
from offctl.errors import UsageError
from offctl.render.report import write_report
from tests.faults.conftest import counted

EXAMPLES = int(os.environ.get("OFFCTL_FAULT_EXAMPLES", "300"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SURROGATE = re.compile("[\ud800-\udfff]")

# --- node data ------------------------------------------------------------------------------------------

# names with lone surrogates (what a "\ud800" escape in stored JSON decodes to) as well as ordinary text
names = st.one_of(
    st.text(max_size=12),
    st.builds(
        lambda a, s, b: a + s + b,
        st.text(max_size=4),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"]),
        st.text(max_size=4),
    ),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    names,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
KEYS = (
    "topology",
    "offset",
    "partition",
    "topic",
    "broker",
    "name",
    "id",
    "host",
    "port",
    "nextOffset",
    "firstOffset",
    "lastOffset",
    "topologyId",
    "tp",
)  # the last five: Trident state
records = st.dictionaries(
    st.sampled_from(KEYS) | st.text(max_size=5),
    json_values | st.fixed_dictionaries({"id": json_scalars, "name": json_scalars}),
    max_size=6,
)


@st.composite
def node_bytes(draw) -> bytes:
    kind = draw(st.sampled_from(["raw", "json", "mangled"]))
    if kind == "raw":
        return draw(st.binary(max_size=200))
    text = json.dumps(draw(records), ensure_ascii=draw(st.booleans()))
    if kind == "mangled":  # what json-simple and Python disagree on, and hand edits
        cut = draw(st.integers(0, len(text)))
        text = (
            text[:cut]
            + draw(
                st.sampled_from(
                    [
                        "NaN",
                        "Infinity",
                        "-Infinity",
                        "01",
                        '"\\ud800"',
                        "\f",
                        ",",
                        "9" * 25,
                        "\\",
                        '"',
                        "}",
                        "\x00",
                        "1e400",
                        "-0.0",
                        "1E2",
                        "9" * 18,
                        "-" + "9" * 19,
                        "\ufeff",
                    ]
                )
            )
            + text[cut:]
        )
    return text.encode("utf-8", "surrogatepass")


def _render_all(report) -> None:
    for fmt in ("json", "csv", "table"):
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="")
        write_report(report, fmt, out)  # strict UTF-8: a raw surrogate in any name would raise here
        out.flush()
        if fmt == "json":
            text = out.buffer.getvalue().decode("utf-8")
            doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON output"))
            assert not any(SURROGATE.search(s) for s in _strings(doc)), "a lone surrogate in the JSON document"


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _node(p: int, data: bytes, library: str | None) -> ZkNode:
    """A storm-kafka spout's node, or a Trident state of either library (txid 7), holding `data`."""
    if library is None:
        return ZkNode("/r", "s", f"/r/s/partition_{p}", p, None, data, 0, 0)
    folder = "t" if library == STORM_KAFKA_CLIENT else None
    pid = f"t@{p}" if folder else f"partition_{p}"
    return ZkNode("/r", "s", f"/r/s/user/{pid}/7", p, folder, data, 0, 0, trident=library, txid=7, txids=1)


@SETTINGS
@given(st.lists(node_bytes(), min_size=1, max_size=4), st.sampled_from([None, STORM_KAFKA, STORM_KAFKA_CLIENT]))
@counted
def test_any_node_data_ends_in_a_row_and_maybe_a_finding(datas, library):
    nodes = tuple(_node(p, d, library) for p, d in enumerate(datas))
    for node in nodes:
        r = parse_zk_node(node)
        if r.malformed is None:
            assert isinstance(r.committed, int) and -(2**63) <= r.committed < 2**63
    cluster = {"t": {p: PartitionLog(0, 10, "h:1") for p in range(4)}}
    report = analyze(Snapshot(0, nodes, cluster=cluster, running=frozenset()))
    assert len(report.rows) == len(nodes)
    for row in report.rows:
        if row.record.malformed is not None:
            # the spout cannot use the record: its lag, where it has one (the spout starts the partition elsewhere,
            # not where the emitter throws on every batch), counts from the log start (0) or end (10), never from
            # an unusable offset (docs/contract.md, lag)
            assert "MALFORMED_RECORD" in row.codes and row.lag in (None, 0, 10)
            assert row.lag is None or not row.resumes_stored
    _render_all(report)


def _replaying(p: int, data: bytes, replay: bytes | None, txid: int | None, library: str) -> ZkNode:
    """_node with `replay` stored at `txid` at or past currtx; txid None: stored at txid 9, with nothing below."""
    node = _node(p, data, library)
    if replay is None:
        return node
    if txid is None:
        return replace(
            node,
            path=node.path.rsplit("/", 1)[0] + "/9",
            data=replay,
            txid=None,
            replay_txid=9,
            replay_data=replay,
            ahead=(9,),
        )
    return replace(node, replay_txid=txid, replay_data=replay, ahead=(txid,))


@SETTINGS
@given(
    st.lists(
        st.tuples(node_bytes(), st.none() | node_bytes(), st.sampled_from([7, 8, 9, None])), min_size=1, max_size=4
    ),
    st.sampled_from([STORM_KAFKA, STORM_KAFKA_CLIENT]),
)
@counted
def test_any_batch_a_transactional_spout_would_replay_ends_in_a_row(states, library):
    """Trident state with any bytes at the txid read and at the txid a transactional spout replays (None: nothing
    stored at or past currtx; txid None: nothing stored below it, the node read is the replayed batch): a row each;
    where offctl cannot tell (TRIDENT_REPLAY) no lag, and no resume point unless another partition's meta makes every
    batch of the state throw (`crashes`, stuck_state)."""
    nodes = tuple(_replaying(p, data, replay, txid, library) for p, (data, replay, txid) in enumerate(states))
    for node in nodes:
        r = parse_zk_node(node)
        assert r.replay_from is None or -(2**63) <= r.replay_from < 2**63
    cluster = {"t": {p: PartitionLog(0, 10, "h:1") for p in range(4)}}
    report = analyze(Snapshot(0, nodes, cluster=cluster, running=frozenset()))
    assert len(report.rows) == len(nodes)
    for row in report.rows:
        if "TRIDENT_REPLAY" in row.codes:
            stuck = any(r.record.stuck for r in report.rows)
            assert row.lag is None and (row.resumes is None or stuck and row.resumes.kind is Resumes.CRASHES), row
    _render_all(report)


@SETTINGS
@given(
    st.text(max_size=120)
    | st.sampled_from(
        [
            "{topic-partition=t-0, offset=1, numFails=0, thread='x'}",
            '{"topologyId":"a-1-1","taskId":1,"threadName":"t"}',
            '{"topologyId":"\\ud800","taskId":1}',
            '{"topologyId":null}',
            "null",
            "[]",
        ]
    )
)
@counted
def test_any_commit_metadata_is_classified(metadata):
    record = parse_commit(KafkaCommit("g", "t", 0, 5, metadata))
    assert record.committed == 5
    assert not (record.legacy_metadata and record.topology_id)
    report = analyze(
        Snapshot(
            0,
            commits=(KafkaCommit("g", "t", 0, 5, metadata),),
            cluster={"t": {0: PartitionLog(0, 9)}},
            running=frozenset(),
        )
    )
    _render_all(report)


# --- files the user gives -------------------------------------------------------------------------------

file_texts = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda d: json.dumps(d).encode(),
        st.dictionaries(
            st.sampled_from(
                [
                    "format",
                    "version",
                    "store",
                    "consumer",
                    "zk_root",
                    "operation",
                    "zookeeper",
                    "kafka",
                    "changes",
                    "created_at",
                    "sha256",
                ]
            ),
            json_values,
            max_size=8,
        ),
    ),
    st.builds(
        lambda rows: "\n".join(",".join(map(str, r)) for r in rows).encode(),
        st.lists(st.lists(st.one_of(st.text(max_size=6), st.integers(-5, 2**64)), max_size=5), max_size=4),
    ),
)


def _plan(**change) -> bytes:
    return json.dumps(
        {
            "store": "zookeeper",
            "consumer": "s",
            "zk_root": "/r",
            "changes": [{"action": "write", "topic": "t", "partition": 0, "after": 5, **change}],
        }
    ).encode()


@SETTINGS
@given(file_texts)
@example(b"t,0,5\n")  # read: the loop's checks of what a loader gives run every time, not only when drawn
@example(_plan())
@example(b"t,0,18446744073709551615\n")  # beyond a Java long: no Kafka offset
@example("t,\u00b2,5\n".encode())  # a digit to str.isdigit, not to int()
@example(_plan(partition=-1))
@example(_plan(after=2**64))
@example(_plan(partition=True))
@counted
def test_any_plan_backup_or_csv_file_is_read_or_refused_with_exit_2(data):
    """Issue 28: this asserted nothing. Now: a file read gives what its loader promises (a Backup; offsets as
    (topic, partition) -> an offset Kafka can hold), a file refused is a UsageError (exit 2) naming the file."""
    from offctl.adapters.backup import Backup, load_backup
    from offctl.adapters.offsets_file import OffsetsFile, load_offsets_file

    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(data)
        f.flush()
        for load, kind in ((load_backup, Backup), (load_offsets_file, OffsetsFile)):
            try:
                loaded = load(Path(f.name))
            except UsageError as exc:
                assert exc.exit_code == 2 and f.name in str(exc), str(exc)
                continue
            assert isinstance(loaded, kind)
            if kind is OffsetsFile:
                assert loaded.kind in ("plan", "backup", "csv")
                for (topic, partition), offset in loaded.offsets.items():
                    assert isinstance(topic, str) and type(partition) is int and partition >= 0, (topic, partition)
                    assert type(offset) is int and 0 <= offset <= 2**63 - 1, offset


# --- command-line values -------------------------------------------------------------------------------------

SECRET = "s3cr3t-Pa55"


def run_main(argv: list[str]) -> tuple[int, str, str]:
    from offctl.commands import app as app_module

    out, err = io.StringIO(), io.StringIO()
    old = sys.argv
    sys.argv = ["offctl", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                app_module.main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old
    return code, out.getvalue(), err.getvalue()


hostile = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "inf",
            "-inf",
            "nan",
            "1e308",
            "0",
            "-1",
            "",
            " ",
            "h:99999",
            "[::1",
            ":2181",
            "a//b",
            "..",
            "0-1000000000",
            "99999-01-01T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "1969-12-31T00:00:00Z",
            "/dev/zero",
            "x=",
            "=x",
            "s=0-3",
            "0.8.2",
            "9.9.9",
            "\udcff\udcfe",
            "p\udcffq",
            "a" * 64 + ".example:2181",
            "a..b:1",
        ]
    ),
)  # host names no resolver takes (kazoo: UnicodeError)
OPTIONS = [
    "--timeout",
    "--zk",
    "--bootstrap-servers",
    "--zk-root",
    "--spout",
    "--group",
    "--topic",
    "--storm-root",
    "--partitions",
    "--at",
    "--offset",
    "--by",
    "--storm-kafka-release",
    "--start-offset-time",
    "--static-partitions",
    "--storm-kafka-client-release",
    "--lag-threshold",
    "--from-file",
    "--kafka-config-file",
    "--output",
]


@settings(max_examples=max(50, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["inspect", "reset"]),
    st.lists(st.tuples(st.sampled_from(OPTIONS), hostile), max_size=3),
    st.sampled_from(
        [
            ["--zk-auth", f"user:{SECRET}"],
            ["--kafka-config", f"sasl.password={SECRET}"],
            ["--kafka-config", f"security.protocol={SECRET}"],
            ["--zk-auth", "user", SECRET],
            ["--kafka-config", "sasl.password", SECRET],
            [],
        ]
    ),
)
@counted
def test_any_option_value_gives_a_documented_exit_and_no_secret(command, pairs, secret_args):
    argv = [command, "--zk", "127.0.0.1:1", "--zk-root", "/r", "--bootstrap-servers", "127.0.0.1:1", "--timeout", "0.2"]
    argv += ["--spout", "s", "--to", "latest"] if command == "reset" else ["--group", "g"]
    for option, value in pairs:
        argv += [option, value]
    argv += secret_args
    code, out, err = run_main(argv)
    assert code in (0, 1, 2, 3, 4, 5), (argv, code, err)
    assert "Traceback" not in err
    assert SECRET not in out and SECRET not in err, (argv, err)
    if code:
        assert err.startswith("offctl: "), err


@SETTINGS
@given(
    st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            names,
            st.integers(-(2**70), 2**70),
            st.floats(allow_nan=False, allow_infinity=False),
        ),
        lambda kids: st.one_of(
            st.lists(kids, max_size=4), st.tuples(kids, kids), st.dictionaries(names, kids, max_size=4)
        ),
        max_leaves=30,
    )
)
@counted
def test_the_json_renderer_writes_what_json_dumps_writes(doc):
    """render.dumps (orjson where it can) gives json.dumps' document, value for value, in ASCII: names with
    lone surrogates or non-ASCII characters, integers beyond 64 bits and deep nesting included."""
    from offctl.render.formats import dumps

    text = dumps(doc)
    assert text.isascii()
    assert json.loads(text) == json.loads(json.dumps(doc, separators=(",", ":")))


@SETTINGS
@given(node_bytes())
@counted
def test_the_fast_json_path_reads_any_node_data_as_the_storm_path_does(data):
    """load_json_simple's orjson fast path gives the value, reason and UTF-8 flag its json/json-simple path
    gives, types included (1 is not 1.0), for any bytes."""
    from offctl.core.records.stormjson import load_as_storm, load_json_simple

    def typed(result):
        value, reason, utf8 = result
        return json.dumps(value, sort_keys=True), reason, utf8

    assert typed(load_json_simple(data)) == typed(load_as_storm(data))


@SETTINGS
@given(
    st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            names,
            st.integers(-(2**63), 2**63 - 1),
            st.floats(allow_nan=False, allow_infinity=False),
        ),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
        max_leaves=10,
    ),
    st.booleans(),
)
@counted
def test_the_json_simple_reader_agrees_with_strict_json_where_both_read(value, ascii_only):
    """offctl/core/storm/jsonsimple.py reads every strict JSON text to the same value Python's json does."""
    from offctl.core.storm import jsonsimple

    text = json.dumps(value, ensure_ascii=ascii_only)
    assert jsonsimple.loads(text) == json.loads(text)


# Values storm-kafka may write into a record, and some it never would: escapes (", \, /, controls, U+2000-20FF),
# non-ASCII, lone surrogates, numbers of 18, 19 and more digits, negative ones
# Values storm-kafka may write into a record, and some it never would: escapes (", \, /, controls, U+2000-20FF),
# non-ASCII, lone surrogates, numbers of 18, 19 and more digits, negative ones. `plain` ones are mostly what the
# fast path reads, a few not (" and \ among printable ASCII, 19 digits)
plain_texts = st.from_regex(r"[ -~]{0,8}", fullmatch=True) | st.sampled_from(["", "fleet-1-1700000000", "a-0-0"])
record_texts = st.one_of(
    st.text(max_size=8),
    st.text(alphabet='ab-1/\\"\x00\x7f\u2028é', max_size=6),
    st.sampled_from(["fleet-1-1700000000", "", " ", "orders", "h:1", "\ud800"]),
)
plain_numbers = st.one_of(
    st.integers(0, 200),
    st.integers(-(10**19), 10**19),
    st.sampled_from([10**17, 10**18 - 1, 10**18, -(10**18), 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**19, 2**64]),
)
record_numbers = st.integers(-(2**70), 2**70)
RECORD_KEYS = ("topology", "offset", "partition", "broker", "topic")
SPLICES = [
    " ",
    "\\/",
    "0",
    "00",
    "-",
    "-0",
    ".0",
    "e1",
    "\\u0041",
    '"',
    ",",
    "9" * 19,
    "é",
    "\x00",
    "\x7f",
    "}",
    '"x":1,',
    "\\",
    "null",
    "\ufeff",
]
NUMBERS = [
    "0",
    "-0",
    "007",
    "-01",
    "1.0",
    "1e2",
    "-",
    "9" * 18,
    "-" + "9" * 18,
    "9" * 19,
    "1" + "0" * 18,
    str(2**63),
    str(-(2**63)),
    "true",
    '"1"',
    "null",
]


@st.composite
def canonical_bytes(draw) -> tuple[bytes, int]:
    """A record as PartitionManager.commit writes it (storm_kafka_record), or one changed a little: a number
    written otherwise, a splice or a cut anywhere, keys reordered or left out, the same map written by Python's
    json. With the partition of the node it sits in (mostly the record's own)."""
    from offctl.core.records.parse import storm_kafka_record

    plain = draw(st.integers(0, 3)) > 0
    tid, name, host, topic = (draw(plain_texts if plain else plain_texts | record_texts) for _ in range(4))
    offset, port = (draw(plain_numbers if plain else plain_numbers | record_numbers) for _ in range(2))
    partition = draw(st.integers(0, 200) if plain else plain_numbers | record_numbers)
    data = storm_kafka_record(tid, name, offset, partition, host, port, topic)
    kind = draw(st.sampled_from(["canonical", "canonical", "number", "number", "splice", "cut", "keys"]))
    if kind == "number":
        field = draw(st.sampled_from([b"offset", b"partition", b"port"]))
        data = re.sub(
            rb'"' + field + rb'":-?[0-9]+', b'"' + field + b'":' + draw(st.sampled_from(NUMBERS)).encode(), data
        )
    elif kind == "splice":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from(SPLICES)).encode("utf-8", "surrogatepass") + data[at:]
    elif kind == "cut":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + data[at + draw(st.integers(1, 4)) :]
    elif kind == "keys":
        record = {
            "topology": {"id": tid, "name": name},
            "offset": offset,
            "partition": partition,
            "broker": {"host": host, "port": port},
            "topic": topic,
        }
        keys = draw(st.lists(st.sampled_from(RECORD_KEYS), unique=True, max_size=5))
        data = json.dumps({k: record[k] for k in keys}, separators=(",", ":"), ensure_ascii=draw(st.booleans())).encode(
            "utf-8", "surrogatepass"
        )
    node_partition = partition if draw(st.integers(0, 3)) and 0 <= partition < 2**31 else draw(st.integers(0, 99))
    return data, node_partition


def _record(
    partition: int = 7,
    id: str = "fleet-1-1700000000",
    name: str = "fleet",
    offset: str = "41",
    host: str = "k1",
    port: str = "9092",
    topic: str = "orders",
) -> tuple[bytes, int]:
    """(record bytes with the given names and number texts, node partition 7)."""
    return (
        f'{{"topology":{{"id":"{id}","name":"{name}"}},"offset":{offset},"partition":{partition},'
        f'"broker":{{"host":"{host}","port":{port}}},"topic":"{topic}"}}'
    ).encode(), 7


@SETTINGS
@given(canonical_bytes(), st.sampled_from([None, "t"]))
# the edges of the fast path, always tried
@example(_record(), None)
@example(_record(partition=8), None)
@example(_record(name=""), None)
@example(_record(name="", id="x"), None)
@example(_record(host=""), None)
@example(_record(topic=""), None)
@example(_record(topic="a\\/b"), None)
@example(_record(id='a\\"b'), None)
@example(_record(offset="007"), None)
@example(_record(port="007"), None)
@example(_record(port="-0"), None)
@example(_record(offset="-0"), None)
@example(_record(offset="1.0"), None)
@example(_record(offset=str(10**18 - 1)), None)
@example(_record(offset=str(-(10**18) + 1)), None)
@example(_record(offset=str(2**63)), None)
@example(_record(offset=str(2**63 - 1)), None)
@example(_record(port=str(2**64)), None)
@example(_record(offset=str(-(2**63) - 1)), None)
@counted
def test_the_canonical_record_path_reads_a_node_as_the_general_path_does(case, folder):
    """parse_zk_node's fast path for the records storm-kafka writes gives the OffsetRecord its general path
    gives, field for field and type for type (repr tells 1 from 1.0 and True), on canonical and near-canonical
    bytes."""
    from offctl.core.records.parse import parse_any_zk_node, parse_zk_node

    data, partition = case
    node = ZkNode("/r", "s", f"/r/s/partition_{partition}", partition, folder, data, 3, 1700000000000)
    fast, general = parse_zk_node(node), parse_any_zk_node(node)
    assert repr(fast) == repr(general)
    assert fast == general
