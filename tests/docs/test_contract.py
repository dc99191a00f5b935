"""docs/contract.md is the contract: its option tables and JSON keys must be what the code has."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer.main

from offctl.commands.app import app
from offctl.core.records.findings import CATALOGUE
from offctl.core.records.model import KafkaCommit, PartitionLog, Snapshot
from offctl.core.rules.analyze import analyze
from offctl.render.report import report_document
from tests.conftest import storm_record

DOCS = Path(__file__).resolve().parents[2] / "docs"
CONTRACT = (DOCS / "contract.md").read_text()


def _section(heading: str) -> str:
    start = CONTRACT.index(heading)
    end = CONTRACT.find("\n#", start + len(heading))
    return CONTRACT[start : end if end >= 0 else None]


def _table_keys(text: str) -> set[str]:
    """The backticked names in the first column of a markdown table (`a`, `b` splits into both)."""
    keys: set[str] = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            keys |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return keys


def _options(command: str) -> set[str]:
    click_command = typer.main.get_command(app).commands[command]
    return {name for p in click_command.params for name in p.opts if name.startswith("--")}


@pytest.mark.parametrize("command", ["inspect", "audit"])
def test_every_documented_option_exists_and_every_reporting_option_is_documented(command):
    documented = set()
    for heading in ("### Connection", "### Selection and reporting", "### Spout settings"):
        documented |= _table_keys(_section(heading))
    options = _options(command)
    # inspect-only options are documented with the command that has them
    assert documented - options <= {"--per-partition"} if command == "audit" else documented <= options
    shared = {o for o in options if o in _options("inspect") and o in _options("audit")} - {"--help", "--output"}
    for heading in (
        "### Time lag",
        "### Retention risk",
        "### Commit expiry",
        "### Broker releases",
    ):  # after the analysis
        documented |= _table_keys(_section(heading))
    assert shared - documented - {"--force-from-start"} <= set(), shared - documented
    assert "--force-from-start" in _section("### Spout settings")


@pytest.mark.parametrize("command", ["inspect", "serve", "watch"])
def test_the_time_lag_options_are_documented_and_exist(command):
    documented = _table_keys(_section("### Time lag"))
    assert documented and documented <= _options(command)
    assert documented <= _options("audit")  # every audit task reads with the options inspect takes


@pytest.mark.parametrize("command", ["inspect", "serve"])
def test_the_commit_expiry_options_are_documented_and_exist(command):
    documented = _table_keys(_section("### Commit expiry"))
    assert documented == {"--commit-expiry-horizon", "--offsets-retention-minutes"}
    assert documented <= _options(command)
    assert documented <= _options("audit")  # every audit task reads with the options inspect takes


@pytest.mark.parametrize("command", ["inspect", "serve", "watch"])
def test_the_retention_options_are_documented_and_exist(command):
    documented = _table_keys(_section("### Retention risk"))
    assert documented == {"--retention-horizon", "--topic-retention"} and documented <= _options(command)
    assert documented <= _options("audit")  # every audit task reads with the options inspect takes


def _every_command(command=None, path=()) -> dict[str, set[str]]:
    """Every command of the CLI (a group's too, as `config show`), walking the tree: its long options."""
    command = command or typer.main.get_command(app)
    if hasattr(command, "commands"):
        return {
            name: options
            for sub_name, sub in command.commands.items()
            for name, options in _every_command(sub, (*path, sub_name)).items()
        }
    return {" ".join(path): {o for p in command.params for o in p.opts if o.startswith("--")}}


@pytest.mark.parametrize(
    "heading",
    ["### Selection and reporting", "### Time lag", "### Retention risk", "### Commit expiry", "### Spout settings"],
)
def test_an_option_groups_heading_names_the_commands_that_take_it(heading):
    """Issue 37: a heading names exactly the commands that take every option of its table; a row that says `only`
    names which of them take it. `config show` takes the settings to show where each comes from, as the
    Options section says, and is named there, not in the headings."""
    section = _section(heading)
    named = set(re.findall(r"`([^`]+)`", section.splitlines()[0]))
    commands = _every_command()
    assert named and named <= set(commands), named - set(commands)
    everywhere, only = set(), {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = line.split("|")
            keys, meaning = set(re.findall(r"`([^`]+)`", cells[1])), cells[-2].strip()
            if meaning.startswith("only "):
                for key in keys:
                    only[key] = set(re.findall(r"`([^`]+)`", meaning)) & set(commands)
            else:
                everywhere |= keys
    assert everywhere
    taking = {name for name, options in commands.items() if everywhere <= options}
    assert taking - {"config show"} == named, f"the commands that take every option: {sorted(taking)}"
    for key, takers in only.items():
        assert {name for name in named if key in commands[name]} == takers, key
    if "config show" in taking:
        assert "`offctl config show` also takes" in _section("## Options")


def _document() -> dict:
    nodes = __import__("offctl.core.records.model", fromlist=["ZkNode"]).ZkNode
    snapshot = Snapshot(
        0,
        zk_nodes=(nodes("/r", "s", "/r/s/partition_0", 0, None, storm_record("t", 0, 5), 1, 0),),
        commits=(KafkaCommit("g", "t", 0, 5, None),),
        cluster={"t": {0: PartitionLog(0, 9)}},
        running=frozenset(),
    )
    return json.loads(json.dumps(report_document(analyze(snapshot))))


def test_json_keys_are_the_documented_ones():
    doc = _document()
    section = _section("## The JSON document")
    assert set(doc["partitions"][0]) == _table_keys(section)
    for name in ("findings", "consumers", "summary"):
        listed = re.search(rf"`{name}`[^:]*:(.*?)\n\n", section, re.S).group(1)
        keys = set(re.findall(r"`([a-z_]+)`", re.sub(r"\([^)]*\)", "", listed)))
        item = doc[name][0] if isinstance(doc[name], list) else doc[name]
        assert set(item) == keys, name
    beside = re.search(r"Beside them:(.*?)(?:\n\n|$)", section, re.S).group(1)
    beside = re.sub(r"\([^)]*\)", "", beside)
    assert set(doc) - {"partitions", "findings", "consumers", "summary"} == set(re.findall(r"`([a-z_]+)`", beside))


def test_the_findings_page_lists_every_code_and_the_contract_links_it():
    findings_page = (DOCS / "findings.md").read_text()
    assert all(f"`{code}`" in findings_page for code in CATALOGUE)
    assert "[findings.md](findings.md)" in CONTRACT and "[storm.md](storm.md)" in CONTRACT


def test_readme_points_at_the_contract_in_docs():
    readme = (DOCS.parent / "README.md").read_text()
    assert "docs/contract.md" in readme and "shared/spec" not in readme


def test_the_plan_document_and_its_cost_keys_are_the_documented_ones():
    from offctl.core.plans.cost import plan_cost
    from offctl.core.plans.plan import Change, Plan
    from offctl.core.records.model import KAFKA, ConsumerKey, MessageRead
    from offctl.core.results.repair import RepairResult
    from offctl.render.plans import outcome_document

    plan = Plan("reset", ConsumerKey(KAFKA, "g"), "earliest", (Change("t", 0, 5, 0, after_metadata="m"),), 0)
    plan = Plan(
        "reset",
        plan.key,
        plan.target,
        plan.changes,
        0,
        cost=plan_cost(plan, {"t": {0: PartitionLog(0, 9)}}, MessageRead()),
    )
    doc = outcome_document(RepairResult(plan, undo="offctl restore b.json --execute"))
    safe, costs = _section("## Safe rewrite"), _section("## What a plan costs")
    consumer = re.search(r"One\s+consumer's document has(.*?)\n7\.", safe, re.S).group(1)
    named = set(re.findall(r"`([a-z_]+)`", consumer))
    cost_keys = _table_keys(costs)
    assert set(doc) <= named and set(doc["changes"][0]) - cost_keys <= named
    assert set(doc["changes"][0]) & cost_keys == cost_keys
    sums = re.sub(r"\([^)]*\)", "", re.search(r"a SUM has(.*?)\.\n", costs, re.S).group(1))
    for summed in (doc["cost"], doc["undo_cost"]):
        assert set(summed) == {"replay", "skip", "no_previous_position"} and f'"{"no_previous_position"}"' in costs
        assert set(summed["replay"]) == set(summed["skip"]) == set(re.findall(r"`([a-z_]+)`", sums))


def test_the_catch_up_states_are_the_documented_ones():
    """docs/contract.md's catch-up table names every state offctl.core.time.history gives `catch_up`, and no other."""
    from offctl.core.time.history import CATCH_UP_STATES

    documented = _table_keys(_section("## Catch-up: when a lagging spout will have caught up")) - {"catch_up"}
    assert documented == set(CATCH_UP_STATES)
