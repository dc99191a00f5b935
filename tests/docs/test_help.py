"""`--help` of every command and subcommand reads as Click's does (issue 37, item 8).

The commands are found by walking the command tree Typer builds from offctl.commands.app:app, never from a
list, and each help is rendered at 80 and 200 columns:

- a flag (an option that takes no value, `--help` included) has an empty type column: no `<bool>`, which
  Typer 0.29 shows where Click and Typer up to 0.28 show nothing;
- each paragraph of a command's help (its docstring, but for blocks marked `\\b`) is the paragraph's words in
  order, broken only where the next word did not fit the width: a line break of the docstring is no line
  break of the help (Typer's rich markup keeps the single line breaks of later paragraphs).
"""

from __future__ import annotations

import inspect
import re

import pytest
import typer.main
from typer.testing import CliRunner

from offctl.commands.app import app

WIDTHS = (80, 200)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _commands(command, path=()):
    """(path, command) for the root and every command and group below it, walking the tree."""
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))
IDS = [" ".join(path) or "offctl" for path, _ in COMMANDS]


def test_the_walk_finds_every_command_and_subcommand():
    found = set(IDS)
    assert {"offctl", "inspect", "mcp", "storm-kafka-monitor", "sandbox", "sandbox up", "config show"} <= found
    assert len(found) == len(IDS) > 15


def _help(path: tuple[str, ...], width: int) -> list[str]:
    result = CliRunner().invoke(
        app, [*path, "--help"], env={"COLUMNS": str(width), "NO_COLOR": "1"}, terminal_width=width
    )
    assert result.exit_code == 0, result.output
    return ANSI.sub("", result.stdout).splitlines()


def _flags(command) -> list:
    """The command's options that take no value, and the --help option Click adds."""
    ctx = command.context_class(command, info_name=command.name)
    return [
        p
        for p in command.get_params(ctx)
        if p.param_type_name == "option" and getattr(p, "is_flag", False) and not p.hidden
    ]


def _rows(lines: list[str]) -> list[list[str]]:
    """The first line of each option's row in the help's panels, as words (the panel's border dropped)."""
    rows = []
    for line in lines:
        if line.startswith("│"):
            words = line.strip("│ ").split()
            if words and words[0] == "*":  # the required column
                words = words[1:]
            if words and words[0].startswith("-"):
                rows.append(words)
    return rows


def _names_and_rest(words: list[str], param) -> tuple[list[str], list[str]]:
    """A row's words split into the option's names (long, short, negative; maybe cut short with …) and the rest:
    the type column, then the help."""
    names = [*param.opts, *param.secondary_opts]
    i = 0
    while i < len(words) and all(
        any(n.startswith(part.rstrip("…")) for n in names) and part.startswith("-")
        for part in words[i].split(",")
        if part
    ):
        i += 1
    return words[:i], words[i:]


def _row_of(rows: list[list[str]], param) -> list[str]:
    names = [*param.opts, *param.secondary_opts]
    found = [
        words
        for words in rows
        if any(n.startswith(words[0].split(",")[0].rstrip("…")) for n in names)
        and (words[0].split(",")[0] in names or words[0].split(",")[0].endswith("…"))
    ]
    assert found, (param.opts, rows)
    return found[0]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path, command", COMMANDS, ids=IDS)
def test_a_flag_has_an_empty_type_column(path, command, width):
    lines = _help(path, width)
    assert not [line for line in lines if "<bool>" in line]
    rows = _rows(lines)
    flags = _flags(command)
    assert any("--help" in p.opts for p in flags)
    for param in flags:
        names, rest = _names_and_rest(_row_of(rows, param), param)
        first_help_word = (param.help or "").split()[:1]
        assert names, (param.opts, rest)
        # right after the names comes the help: nothing in the type column
        assert rest[:1] == [] if not first_help_word else rest and first_help_word[0].startswith(rest[0].rstrip("…")), (
            path,
            param.opts,
            rest,
        )


@pytest.mark.parametrize("width", WIDTHS)
def test_an_option_that_takes_a_value_keeps_its_type_column(width):
    """The check above reads the type column: an option with a metavar shows it there, and a flag beside it
    shows nothing."""
    rows = _rows(_help(("mcp",), width))
    http = next(words for words in rows if words[0] == "--http")
    writes = next(words for words in rows if words[0] == "--allow-writes")
    assert http[1] == "HOST:PORT" and writes[1] == "Let"


def _description(lines: list[str]) -> tuple[list[list[str]], int]:
    """The help's text between the usage line and the first panel, as blocks of lines split at blank lines
    (each line without the one column of padding on its left), and the width it was rendered at."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Usage:")) + 1
    end = next((i for i, line in enumerate(lines) if line.startswith("╭")), len(lines))
    width = len(lines[end]) if end < len(lines) else max(map(len, lines))
    blocks, block = [], []
    for line in lines[start:end]:
        text = line[1:].rstrip()
        if text:
            block.append(text)
        elif block:
            blocks.append(block)
            block = []
    if block:
        blocks.append(block)
    return blocks, width


def _paragraphs(command) -> list[str]:
    """The paragraphs of the command's help that are text (not blocks marked \\b), each on one line."""
    text = inspect.cleandoc(command.help or "").partition("\f")[0]
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip() and not p.startswith("\b")]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path, command", COMMANDS, ids=IDS)
def test_help_paragraphs_break_only_where_the_width_ends(path, command, width):
    blocks, rendered_width = _description(_help(path, width))
    usable = rendered_width - 2  # one column of padding on each side
    for paragraph in _paragraphs(command):
        lines = next((b for b in blocks if " ".join(b).startswith(paragraph[:40])), None)
        assert lines is not None, (paragraph, blocks)
        assert " ".join(" ".join(lines).split()) == paragraph  # what the help says is the docstring's text
        for line, following in zip(lines, lines[1:]):
            # a break of the rendering: the next word did not fit on the line; else the docstring's own
            assert len(line) + 1 + len(following.split()[0]) > usable, (
                f"{' '.join(path)} --help at {rendered_width} columns breaks a paragraph after {line!r}"
            )
        if len(paragraph) <= usable:
            assert lines == [paragraph]


def _listed(lines: list[str]) -> dict[str, tuple[list[str], int]]:
    """A group's Commands panel: each command's help there, as its lines, and the width of that column."""
    start = next(i for i, line in enumerate(lines) if line.startswith("╭─ Commands"))
    listed: dict[str, tuple[list[str], int]] = {}
    name = column = None
    for line in lines[start + 1 :]:
        if line.startswith("╰"):
            break
        inner = line[1:-1]
        if inner[1:2].strip():  # a command's first line: its name, then its help
            name = inner.split()[0]
            column = inner.index(inner.split()[1], len(name) + 1)
            listed[name] = ([], len(inner) - 1 - column)  # one column of padding on the right
        if name and inner[column:].strip():
            listed[name][0].append(inner[column:].rstrip())
    return listed


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "path, command",
    [(p, c) for p, c in COMMANDS if hasattr(c, "commands")],
    ids=[i for i, (_, c) in zip(IDS, COMMANDS) if hasattr(c, "commands")],
)
def test_a_groups_list_of_commands_breaks_only_where_the_width_ends(path, command, width):
    """A group's help lists each command with the first paragraph of the command's help."""
    listed = _listed(_help(path, width))
    assert set(listed) == set(command.commands)
    for name, sub in command.commands.items():
        lines, usable = listed[name]
        assert " ".join(" ".join(lines).split()) == " ".join((sub.short_help or _paragraphs(sub)[0]).split())
        for line, following in zip(lines, lines[1:]):
            assert len(line) + 1 + len(following.split()[0]) > usable, (
                f"{' '.join(path)} --help at {width} columns breaks the help of {name} after {line!r}"
            )
