"""The renderer: one Report, three formats; the table stays readable at 10,000 partitions."""

from __future__ import annotations

import csv
import dataclasses
import io
import json

import pytest
from rich.console import Console

from offctl.core.records.findings import CATALOGUE
from offctl.core.records.model import PartitionLog, Snapshot, Thresholds, ZkNode, ranges
from offctl.core.rules.analyze import analyze
from offctl.render.report import write_report


def fleet_report(spouts: int, partitions: int):
    nodes = []
    for s in range(spouts):
        for p in range(partitions):
            # every spout is far behind on every partition, and one per spout is out of range
            offset = 500 if p else 5
            data = json.dumps(
                {"topic": f"t{s}", "partition": p, "offset": offset, "topology": {"id": "wc-1-1", "name": "wc"}}
            ).encode()
            nodes.append(ZkNode("/r", f"spout-[{s}]", f"/r/spout-[{s}]/partition_{p}", p, None, data, 0, 0))
    cluster = {f"t{s}": {p: PartitionLog(100, 1000) for p in range(partitions)} for s in range(spouts)}
    snapshot = Snapshot(0, tuple(nodes), cluster=cluster, running=frozenset({"wc-1-1"}))
    return analyze(snapshot, Thresholds(lag_threshold=100))


def render(report, fmt, **kw) -> str:
    out = io.StringIO()
    write_report(report, fmt, out, Console(file=out, width=120, markup=False, highlight=False), **kw)
    return out.getvalue()


def test_table_groups_findings_so_10000_partitions_stay_readable():
    report = fleet_report(100, 100)
    assert len(report.findings) == 10_000
    text = render(report, "table")
    lines = text.splitlines()
    # one row per consumer, two lines per (code, consumer) group, one hint per code: not 10,000 lines
    assert len(lines) < 100 * 2 + 100 * 2 * 2 + 20
    assert "HIGH_LAG  /r/spout-[7]  t7 [1-99]" in text
    assert "(+98 more like it)" in text
    assert "OFFSET_BELOW_LOG_START  /r/spout-[7]  t7 [0]" in text
    # what retention took (each spout's partition 0 at 5, the log from 100) in the findings' words and the total
    assert "95 messages (offsets 5 to 99) were deleted before the spout read them" in text
    assert (
        "100 consumers, 10,000 partitions, total lag 4,950,000, lost to retention 9,500; findings: 100 error, "
        "9900 warning, 0 info" in " ".join(text.split())  # the line wraps at the console's 120 columns
    )


def test_per_partition_table_lists_every_partition():
    text = render(fleet_report(2, 3), "table", per_partition=True)
    partitions_table = text.split("\nPartitions", 1)[1].split("\nFindings", 1)[0]
    assert sum(1 for line in partitions_table.splitlines() if "/r/spout-[" in line) == 6


def test_json_and_csv_carry_the_same_rows():
    report = fleet_report(3, 4)
    doc = json.loads(render(report, "json"))
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert len(rows) == len(doc["partitions"]) == 12
    for row, obj in zip(rows, doc["partitions"]):
        assert (row["consumer"], int(row["partition"]), int(row["committed"]), row["lag"]) == (
            obj["consumer"],
            obj["partition"],
            obj["committed"],
            "" if obj["lag"] is None else str(obj["lag"]),
        )
    assert rows[0]["findings"] == "OFFSET_BELOW_LOG_START" and rows[1]["findings"] == "HIGH_LAG"


def test_every_row_and_finding_names_its_consumer_as_consumer_key_fields_does():
    """partition_dict and finding_dict spell ConsumerKey.fields out (they run 300,000 times in a broken fleet of
    100,000 partitions): the same keys, in the same place, with the same values."""
    from offctl.render.report import finding_dict, partition_dict

    report = fleet_report(2, 3)
    for row in report.rows:
        assert list(partition_dict(row).items())[:3] == list(row.record.key.fields().items())
    assert report.findings
    for f in report.findings:
        assert list(finding_dict(f).items())[2:5] == list(f.key.fields().items())


def test_json_to_stdout_goes_to_its_byte_buffer_and_reads_the_same():
    """write_json writes the document's bytes to a stream's buffer (stdout) instead of text: the same JSON, and
    after what the stream already held, whichever way it goes."""
    report = fleet_report(3, 4)
    text = render(report, "json")
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=False)
    stream.write("before\n")  # held in the text layer: must come out first
    write_report(report, "json", stream, Console(file=io.StringIO()))
    stream.flush()
    assert raw.getvalue().decode() == "before\n" + text
    assert json.loads(text)["summary"]["partitions"] == 12


def test_json_says_each_codes_hint_once():
    """Document version 2: each code's hint once in `hints`, none on the findings that have it; every finding's
    hint is still there to read (`.hint // .hints[code]`), the same text as in version 1."""
    report = fleet_report(3, 4)
    doc = json.loads(render(report, "json"))
    assert doc["document_version"] == 2
    assert doc["hints"] == {
        "HIGH_LAG": CATALOGUE["HIGH_LAG"].hint,
        "OFFSET_BELOW_LOG_START": CATALOGUE["OFFSET_BELOW_LOG_START"].hint,
    }
    assert len(doc["findings"]) == 12 and not any("hint" in f for f in doc["findings"])
    assert [f.get("hint", doc["hints"][f["code"]]) for f in doc["findings"]] == [f.hint for f in report.findings]
    assert json.loads(render(fleet_report(0, 0), "json"))["hints"] == {}


def test_a_finding_whose_hint_is_its_own_keeps_it():
    report = fleet_report(1, 2)
    own = dataclasses.replace(report.findings[0], hint="stop the topology first")
    doc = json.loads(render(dataclasses.replace(report, findings=(own, *report.findings[1:])), "json"))
    assert doc["findings"][0]["hint"] == "stop the topology first" and "hint" not in doc["findings"][1]
    assert doc["hints"][own.code] == CATALOGUE[own.code].hint


def test_names_with_brackets_are_not_markup():
    assert "spout-[0]" in render(fleet_report(1, 2), "table")


@pytest.mark.parametrize(
    "numbers, text",
    [
        ([], ""),
        ([3], "3"),
        ([0, 1, 2, 3, 5, 7, 8], "0-3,5,7-8"),
        ([5, 1, 2, 2], "1-2,5"),
    ],
)
def test_ranges(numbers, text):
    assert ranges(numbers) == text


@pytest.mark.parametrize("name", ["findings", "exit-codes", "audit-files"])
def test_reference_pages_are_generated_from_the_code(name):
    from pathlib import Path

    from offctl.faces.reference import PAGES

    page = Path(__file__).parents[2] / "docs" / f"{name}.md"
    assert page.read_text() == PAGES[name](), f"regenerate: python -m offctl.faces.reference {name} > docs/{name}.md"


def _kinds(cls) -> list[type]:
    return [cls, *(k for sub in cls.__subclasses__() for k in _kinds(sub))]


def test_every_exit_code_an_error_carries_is_documented():
    from offctl import errors
    from offctl.adapters import servers  # noqa: F401 - its errors are subclasses too

    assert {c.exit_code for c in _kinds(errors.OffctlError)} <= set(errors.EXIT_CODES)


def test_no_code_raises_the_bare_error_and_every_kind_names_its_own_code():
    """Issue 35: `offctl sandbox up` exited 1, the findings' code, when a server could not start: servers.py raised
    the bare OffctlError. The base carries the code of a bug; every raise names its kind."""
    import ast
    from pathlib import Path

    from offctl import errors
    from offctl.adapters import servers  # noqa: F401

    root = Path(__file__).parents[2]
    bare = [
        f"{path.relative_to(root)}:{node.lineno}"
        for tree in ("offctl", "commands")
        for path in (root / tree).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Raise)
        and isinstance(node.exc, ast.Call)
        and getattr(node.exc.func, "id", getattr(node.exc.func, "attr", None)) == "OffctlError"
    ]
    assert bare == []
    assert errors.OffctlError.exit_code == errors.INTERNAL_ERROR
    ours = [kind for kind in _kinds(errors.OffctlError)[1:] if kind.__module__.startswith("offctl")]
    assert [
        k for k in ours if k.exit_code == errors.INTERNAL_ERROR
    ] == []  # each has a kind's code, its own or its base's


@pytest.mark.parametrize(
    "ms, text",
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (1_763_781_300_123, "2025-11-22T03:15:00.123Z"),
        # far from 1970 a float of seconds loses the last millisecond; the integer arithmetic does not
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (-39_307_521_849_455, "0724-05-24T19:55:50.545Z"),
    ],
)
def test_times_are_iso_8601_utc_to_the_millisecond(ms, text):
    from offctl.core.records.model import iso_ms

    assert iso_ms(ms) == text


def _plan(operation, key, writes):
    from offctl.core.plans.plan import Change, Plan

    changes = tuple(Change("t", p, 5, 0, delete=operation == "delete") for p in range(writes))
    return Plan(operation, key, "earliest", changes, 0)


@pytest.mark.parametrize(
    "plans, sandbox, question",
    [
        (
            [("delete", ("zookeeper", "shared-id", "/sandbox/spouts"), 1)],
            True,
            "Delete 1 record of spout shared-id (zkRoot /sandbox/spouts) on ZooKeeper z:1 (the sandbox)?",
        ),
        (
            [("reset", ("kafka", "clicks-client", None), 1)],
            False,
            "Reset 1 partition of group clicks-client on Kafka k:2?",
        ),
        (
            [("restore", ("trident", "orders-trident", "/tx"), 3)],
            False,
            "Restore 3 partitions of Trident spout orders-trident (Trident root /tx) on ZooKeeper z:1?",
        ),
        ([("migrate", ("kafka", "g", None), 2)], False, "Migrate 2 partitions of group g on Kafka k:2?"),
        (
            [("reset", ("zookeeper", "a", "/r"), 2), ("reset", ("kafka", "g", None), 1)],
            False,
            "Reset 3 partitions of 2 consumers on ZooKeeper z:1 and Kafka k:2?",
        ),
    ],
)
def test_the_confirmation_names_the_operation_the_consumer_and_the_cluster(plans, sandbox, question):
    from offctl.core.records.model import ConsumerKey
    from offctl.render.plans import confirm_question

    built = [_plan(op, ConsumerKey(*key), n) for op, key, n in plans]
    assert confirm_question(built, "z:1", "k:2", sandbox=sandbox) == question


def _catching_up_report():
    """Two spouts of three partitions (offset 5 out of range on partition 0): spout-[0] catching up on partition 1 and
    caught up on 2 (lag 0: caught up whatever the report holds), spout-[1] not catching up on partition 1."""
    from offctl.core.records.model import CatchUp

    report = fleet_report(2, 3)
    rows = {(r.record.key.consumer, r.record.partition): r for r in report.rows}
    caught = dataclasses.replace(rows["spout-[0]", 2], lag=0)
    report = dataclasses.replace(report, rows=tuple(caught if r is rows["spout-[0]", 2] else r for r in report.rows))
    ups = {
        rows["spout-[0]", 1].partition_key: CatchUp(300.0, "catching-up", 2.5, 0.5),
        caught.partition_key: CatchUp(7.0, "catching-up", 0.5, 0.25),  # no estimate is made at lag 0: not read
        rows["spout-[1]", 1].partition_key: CatchUp(None, "not-catching-up", 0.0, 0.5),
    }
    return dataclasses.replace(report, catch_ups=ups)


def test_the_catch_up_in_json_metrics_and_watch_is_the_reports():
    from offctl.render.metrics import Cycle, Health, families
    from offctl.render.report import report_document
    from offctl.render.watch import catch_up_lines

    report = _catching_up_report()
    doc = report_document(report)
    shown = {(p["consumer"], p["partition"]): (p["catch_up_s"], p["catch_up"]) for p in doc["partitions"]}
    assert shown == {
        ("spout-[0]", 0): (None, None),  # out of range: no lag, no figure
        ("spout-[0]", 1): (300.0, "catching-up"),
        ("spout-[0]", 2): (0.0, "caught-up"),
        ("spout-[1]", 0): (None, None),
        ("spout-[1]", 1): (None, "not-catching-up"),
        ("spout-[1]", 2): (None, "no-history"),  # no estimate in the report: one read's default
    }
    consumers = {
        c["consumer"]: (c["catch_up_s"], c["catch_up"], c["commit_rate"], c["log_rate"]) for c in doc["consumers"]
    }
    # spout-[0]: until partition 1 has caught up, the rates summed; spout-[1]: one partition is not catching up
    assert consumers == {
        "spout-[0]": (300.0, "catching-up", 2.5, 0.5),
        "spout-[1]": (None, "not-catching-up", 0.0, 0.5),
    }
    # the metrics: +Inf where not catching up, no sample without an estimate
    samples = {
        (s.name, s.labels["consumer"], s.labels.get("partition")): s.value
        for family in families(Cycle(report, {}), Health(1, {}, None, None, None))
        for s in family.samples
        if "catch_up" in s.name or s.name.endswith("_rate")
    }
    assert samples == {
        ("offctl_partition_catch_up_seconds", "spout-[0]", "1"): 300.0,
        ("offctl_partition_catch_up_seconds", "spout-[0]", "2"): 0.0,
        ("offctl_partition_catch_up_seconds", "spout-[1]", "1"): float("inf"),
        ("offctl_partition_commit_rate", "spout-[0]", "1"): 2.5,
        ("offctl_partition_commit_rate", "spout-[1]", "1"): 0.0,
        ("offctl_partition_log_rate", "spout-[0]", "1"): 0.5,
        ("offctl_partition_log_rate", "spout-[1]", "1"): 0.5,
        ("offctl_consumer_catch_up_seconds", "spout-[0]", None): 300.0,
        ("offctl_consumer_catch_up_seconds", "spout-[1]", None): float("inf"),
        ("offctl_consumer_commit_rate", "spout-[0]", None): 2.5,
        ("offctl_consumer_commit_rate", "spout-[1]", None): 0.0,
        ("offctl_consumer_log_rate", "spout-[0]", None): 0.5,
        ("offctl_consumer_log_rate", "spout-[1]", None): 0.5,
    }
    # watch: a line per consumer, naming the partitions not catching up
    lines = [str(line) for line in catch_up_lines(report)]
    assert lines == [
        "Catch-up at the window's rates (an estimate)",
        "  /r/spout-[0]: catches up in ~5m00s (commits 2.5/s, log 0.5/s)",
        "  /r/spout-[1]: not catching up on t1 [1] (commits 0.0/s, log 0.5/s)",
    ]


def test_the_watch_lines_without_history_say_so():
    from offctl.render.watch import catch_up_lines

    report = fleet_report(1, 2)  # partition 0 out of range, 1 lagging: no estimate in one read
    assert [str(line) for line in catch_up_lines(report)][1:] == ["  /r/spout-[0]: no estimate yet (no history)"]


@pytest.mark.parametrize(
    "store,consumer,zk_root,label",
    [
        ("zookeeper", "orders", "/spouts/", "/spouts/orders"),
        ("kafka", "clicks", None, "group clicks"),
        ("trident", "orders-trident", "/transactional", "trident /transactional/orders-trident"),
        ("jstorm", "clicks/jstorm", "/jstorm", "jstorm /jstorm/kafka/offset/topic/clicks/jstorm"),
    ],
)
def test_the_audits_worst_consumers_are_named_as_every_face_names_them(store, consumer, zk_root, label):
    """The audit's summary (its worst consumers, its extremes) names a consumer of its files as ConsumerKey does:
    a Trident or JStorm spout is no group."""
    from offctl.core.records.model import ConsumerKey
    from offctl.render.audit import consumer_label

    assert consumer_label({"store": store, "consumer": consumer, "zk_root": zk_root}) == label
    assert label == str(ConsumerKey(store, consumer, zk_root))
