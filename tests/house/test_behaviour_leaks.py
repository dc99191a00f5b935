"""What a spout does is decided once, in the behaviour modules of offctl/core/storm/ (releases, citations, start,
outcomes, commits; docs: STYLE.md, "Settings and faces"): no other module of the library or command layer compares a
profile's settings with the members of Storm's setting enums (StormKafkaClient.LEGACY, Guarantee.AT_MOST_ONCE,
FirstPoll.EARLIEST, ...) to decide a behaviour; it reads the answer they give (subscribes, idle_commit, guarantees_of,
FirstPoll.from_log_start, ...). Naming a member to build a value (an option's default, a profile) is not a decision and
is allowed; so are imports and annotations."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BEHAVIOUR_MODULES = ("releases", "citations", "start", "outcomes", "commits")  # of offctl/core/storm/
BEHAVIOUR = {ROOT / "offctl" / "core" / "storm" / f"{m}.py" for m in BEHAVIOUR_MODULES}
BEHAVIOUR_DOTTED = {f"offctl.core.storm.{m}" for m in BEHAVIOUR_MODULES}
# The settings a profile holds, whose meaning only the behaviour modules decide.
SETTINGS = frozenset({"StormKafkaClient", "Guarantee", "FirstPoll", "StormKafka", "Isolation"})
# Issue 37 item 5 named these; every other module of offctl/ and commands/ is held to the same rule.
NAMED = (
    "offctl/core/time/expiry.py",
    "offctl/core/rules/analyze.py",
    "offctl/core/plans/cost.py",
    "offctl/settings/resolve.py",
)


def sources() -> list[Path]:
    return sorted(p for d in ("offctl", "commands") for p in (ROOT / d).rglob("*.py") if p not in BEHAVIOUR)


def _aliases(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names the settings' enums go by in this module, and the names the behaviour modules themselves go by."""
    names, modules = set(SETTINGS), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in BEHAVIOUR_DOTTED:
            names |= {a.asname for a in node.names if a.name in SETTINGS and a.asname}
        elif isinstance(node, ast.ImportFrom) and node.module == "offctl.core.storm":
            modules |= {a.asname or a.name for a in node.names if a.name in BEHAVIOUR_MODULES}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name in BEHAVIOUR_DOTTED and a.asname}
    return names, modules


def _member(node: ast.AST, names: set[str], modules: set[str]) -> str | None:
    """`Guarantee.AT_MOST_ONCE` (or releases.Guarantee.AT_MOST_ONCE) as text, or None for anything else."""
    if not isinstance(node, ast.Attribute):
        return None
    owner = node.value
    if isinstance(owner, ast.Name) and owner.id in names:
        return f"{owner.id}.{node.attr}"
    if (
        isinstance(owner, ast.Attribute)
        and owner.attr in SETTINGS
        and (not isinstance(owner.value, ast.Name) or owner.value.id in modules or owner.value.id == "offctl")
    ):
        return f"{owner.attr}.{node.attr}"
    return None


def _operands(node: ast.AST) -> list[ast.AST]:
    """A comparison's operand, or the elements of a literal tuple, list or set it tests membership in."""
    return list(node.elts) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]


def leaks(text: str, name: str = "<text>") -> list[str]:
    """Each comparison with, or match against, a member of a setting's enum: `line: member`."""
    tree = ast.parse(text, name)
    names, modules = _aliases(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            candidates = [o for side in (node.left, *node.comparators) for o in _operands(side)]
        elif isinstance(node, ast.MatchValue):
            candidates = [node.value]
        else:
            continue
        found += [f"{node.lineno}: {m}" for o in candidates if (m := _member(o, names, modules))]
    return found


def test_the_named_modules_are_read():
    read = {p.relative_to(ROOT).as_posix() for p in sources()}
    assert set(NAMED) <= read and not read & {p.relative_to(ROOT).as_posix() for p in BEHAVIOUR}


@pytest.mark.parametrize("path", sources(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_but_behaviour_decides_from_a_settings_member(path):
    assert leaks(path.read_text(encoding="utf-8"), str(path)) == [], (
        f"{path.relative_to(ROOT)} decides a Storm behaviour itself: ask the behaviour modules of "
        f"offctl/core/storm/ (add a named function there, citing the Storm source) and read its answer"
    )


@pytest.mark.parametrize(
    "text, want",
    [
        pytest.param("if p.client is StormKafkaClient.LEGACY:\n    pass\n", ["1: StormKafkaClient.LEGACY"], id="is"),
        pytest.param("x = p.guarantee is not Guarantee.AT_LEAST_ONCE\n", ["1: Guarantee.AT_LEAST_ONCE"], id="is-not"),
        pytest.param("x = Guarantee.AT_MOST_ONCE == g\n", ["1: Guarantee.AT_MOST_ONCE"], id="eq-on-the-left"),
        pytest.param(
            "x = s in (FirstPoll.EARLIEST, FirstPoll.UNCOMMITTED_EARLIEST)\n",
            ["1: FirstPoll.EARLIEST", "1: FirstPoll.UNCOMMITTED_EARLIEST"],
            id="in-a-tuple",
        ),
        pytest.param("x = p.storm_kafka not in [StormKafka.V0_9_0]\n", ["1: StormKafka.V0_9_0"], id="not-in-a-list"),
        pytest.param(
            "from offctl.core.storm.releases import Isolation as I\nx = i == I.READ_COMMITTED\n",
            ["2: I.READ_COMMITTED"],
            id="an-alias",
        ),
        pytest.param(
            "from offctl.core.storm import releases\nx = g is releases.Guarantee.NO_GUARANTEE\n",
            ["2: Guarantee.NO_GUARANTEE"],
            id="through-the-module",
        ),
        pytest.param(
            "match g:\n    case Guarantee.AT_MOST_ONCE:\n        pass\n", ["2: Guarantee.AT_MOST_ONCE"], id="match"
        ),
        pytest.param("from offctl.core.storm.releases import Guarantee, StormKafkaClient\n", [], id="an-import"),
        pytest.param("def f(g: Guarantee = Guarantee.AT_LEAST_ONCE) -> StormKafkaClient: ...\n", [], id="a-default"),
        pytest.param(
            "x = Shared('processing_guarantee', GuaranteeOption, Guarantee.AT_LEAST_ONCE)\n", [], id="an-option-default"
        ),
        pytest.param(
            "g = Guarantee(s['processing_guarantee'])\nok = g not in guarantees_of(client)\n",
            [],
            id="behaviours-answer",
        ),
        pytest.param("x = s is not DEFAULTS.first_poll\n", [], id="a-profiles-value"),
        pytest.param("x = p.isolation == other.isolation\n", [], id="two-settings"),
    ],
)
def test_the_check_finds_decisions_and_leaves_values_alone(text, want):
    assert leaks(text) == want
