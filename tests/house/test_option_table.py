"""Every option declared once, in offctl.settings.options, and everything else made from that table (issue 37,
item 2): the commands' Typer parameters, the config file's keys, the defaults; commands/ only parses and renders.

Read from the source (ast) and from the CLI Click builds: a second declaration of a flag, a config-file key with no
option behind it, a default restated as a literal, or settings resolved in commands/ fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer.main

from offctl.commands.app import app
from offctl.settings import configfile
from offctl.settings.kinds import IN_CONTEXT, IN_DEFAULTS, IN_PROFILE
from offctl.settings.options import DEFAULTS, OPTIONS, SHARED, file_kind, parse_value

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ROOT / "commands"


def _commands(group=None, path=()):
    group = group or typer.main.get_command(app)
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_each_flag_is_declared_once_in_the_table():
    seen: dict[str, str] = {}
    for o in OPTIONS.values():
        for flag in o.flags:
            assert flag not in seen, f"{flag} is declared by {seen[flag]} and {o.name}"
            seen[flag] = o.name


def test_no_command_declares_a_flag_of_its_own():
    """commands/ makes its options from the table (commands/options.py: annotation); the root's --version, an eager
    callback of Typer's, is the one declaration there."""
    found = []
    for path in sorted(COMMANDS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Option":
                flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
                if path.name != "options.py" and flags != ["--version"]:
                    found.append(f"{path.name}:{node.lineno} {flags}")
    assert not found, found


def test_every_flag_of_the_cli_is_an_option_of_the_table():
    """What Click parses is what the table declares: each flag of each command is one of the table's options,
    under the option's name (a command may take it as one value, or required, never under other flags)."""
    wrong = []
    for name, command in _commands():
        for param in command.params:
            if param.param_type_name != "option" or param.name in ("help",):
                continue
            o = OPTIONS.get(param.name)
            if o is None or tuple(param.opts) != o.flags:
                wrong.append(f"{name}: {param.opts} ({param.name})")
    assert not wrong, wrong


def test_the_config_files_keys_are_the_tables():
    """A context's keys and a profile's keys come from the table (IN_CONTEXT, IN_PROFILE, IN_DEFAULTS), each value
    of the kind the option's own parsing takes; only the servers' own settings (mcp-token) are not options."""
    assert configfile.CONNECTION_KEYS == {o.key: file_kind(o) for o in OPTIONS.values() if o.file == IN_CONTEXT}
    assert configfile.PROFILE_KEYS == {o.key: file_kind(o) for o in OPTIONS.values() if o.file == IN_PROFILE}
    assert set(configfile.DEFAULT_KEYS) == {o.key for o in OPTIONS.values() if o.file in (IN_PROFILE, IN_DEFAULTS)} - {
        "topic"
    }
    assert set(configfile.CONTEXT_KEYS) - {o.key for o in OPTIONS.values() if o.file} == set(configfile.SERVER_KEYS)


@pytest.mark.parametrize("name", sorted(n for n, o in OPTIONS.items() if o.file))
def test_a_file_key_is_taken_by_a_command(name):
    """A key of the config file sets an option some command takes: none is a dead key."""
    assert any(name == p.name for _, command in _commands() for p in command.params), name


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("timeout", "30s", 30.0),
        ("timeout", 12, 12.0),
        ("offsets_retention_minutes", "7d", 10080),
        ("first_poll_offset_strategy", "LATEST", "LATEST"),
        ("start_offset_time", 1700000000000, "1700000000000"),
        ("zk_root", ["/a", "/b"], ["/a", "/b"]),
        ("max_offset_behind", 5, 5),
    ],
)
def test_a_file_value_is_parsed_as_the_same_flag_is(name, value, expected):
    parsed = parse_value(name, value)
    assert (parsed.value if hasattr(parsed, "value") else parsed) == expected


@pytest.mark.parametrize(
    "name, value, words",
    [
        ("timeout", "ten", "timeout"),
        ("max_offset_behind", -1, "x>=0"),
        ("first_poll_offset_strategy", "SOON", "is not one of"),
    ],
)
def test_a_file_value_the_option_refuses_names_the_key(name, value, words):
    from offctl.errors import UsageError

    with pytest.raises(UsageError, match=words):
        parse_value(name, value, "f.toml:3")


def test_the_shared_defaults_are_the_tables():
    assert DEFAULTS == {name: OPTIONS[name].default for group in SHARED for name in group}


def _assignments(name: str) -> list[str]:
    out = []
    for path in sorted(p for d in ("offctl", "commands") for p in (ROOT / d).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


@pytest.mark.parametrize(
    "constant",
    [
        "TIME_LAG_BUDGET_S",
        "DEADLINE_S",
        "QUIET_PERIOD_S",
        "TIMEOUT_S",
        "STORM_ROOT",
        "CLIENT_RELEASE_DEFAULT",
        "STORM_KAFKA_RELEASE_DEFAULT",
        "HORIZON_S",
    ],
)
def test_each_default_is_one_constant(constant):
    assert len(_assignments(constant)) == 1, _assignments(constant)


def test_storms_root_is_named_once():
    """The default storm.zookeeper.root is STORM_ROOT, never a literal restated."""
    found = [
        f"{p.relative_to(ROOT)}:{n.lineno}"
        for p in sorted(q for d in ("offctl", "commands") for q in (ROOT / d).rglob("*.py"))
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(n, ast.Constant) and n.value == "/storm"
    ]
    assert found == ["offctl/settings/connection.py:" + found[0].rsplit(":", 1)[1]] and len(found) == 1, found


def test_commands_resolve_no_settings():
    """commands/ parses and renders: it reads no config file, builds no Connection, Safety or other settings record
    (offctl.settings.resolve does), and keeps to 300 lines a module and 40 a function's body (after its docstring: a
    command's signature lists its options one per line, as ruff formats it)."""
    banned_modules = {"offctl.settings.configfile"}
    banned_names = {"Connection", "Safety", "Selection", "Estimates", "ExpiryOptions", "Profiles", "Thresholds"}
    wrong = []
    for path in sorted(COMMANDS.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 300, f"{path.name}: {len(text.splitlines())} lines"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
                length = node.end_lineno - body[0].lineno + 1
                if length > 40:
                    wrong.append(f"{path.name}:{node.lineno} {node.name} is {length} lines")
            if isinstance(node, ast.ImportFrom) and node.module in banned_modules:
                wrong.append(f"{path.name}:{node.lineno} imports {node.module}")
            if isinstance(node, ast.Import) and any(a.name in banned_modules for a in node.names):
                wrong.append(f"{path.name}:{node.lineno} imports {[a.name for a in node.names]}")
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in banned_names:
                wrong.append(f"{path.name}:{node.lineno} builds {node.func.id}")
    assert not wrong, wrong


def test_the_contract_lists_the_config_files_keys():
    """docs/contract.md's list of a context's keys is the table's (and mcp-token)."""
    import re

    text = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    paragraph = text[text.index("**Contexts.**") : text.index("A repeatable option", text.index("**Contexts.**"))]
    listed = set(re.findall(r"`([a-z][a-z-]*)`", paragraph)) - {"offctl", "sandbox"}
    assert listed == set(configfile.CONTEXT_KEYS)
