"""`--help` of every command and subcommand reads as Click's does (issue 37, item 8).

The commands are found by walking the command tree Typer builds from offctl.commands.app:app, never from a
list, and each help is rendered at 80 and 200 columns:

- a flag (an option that takes no value, `--help` included) has an empty type column: no `<bool>`, which
  Typer 0.29 shows where Click and Typer up to 0.28 show nothing;
- each paragraph of a command's help (its docstring, but for blocks marked `\\b`) is the paragraph's words in
  order, broken only where the next word did not fit the width: a line break of the docstring is no line
  break of the help (Typer's rich markup keeps the single line breaks of later paragraphs).
- an option's names (each long and short form), its metavar and its environment variable are whole, at 60, 80 and
  200 columns (issue 46, item 5): found in the option's own row, on no line cut with "…", and no line is wider
  than the width asked. A panel too narrow for the names and the help side by side lays each option out as its
  names, then its help below (commands/help.py, WholeNamesTable): the checks read both layouts. A made-up
  command with longer names than offctl's holds the same, so an option added later is held too.

Typer's rich console takes its width from COLUMNS (CliRunner's terminal_width is Click's, which Typer's rich help
does not read): each help is checked to be as wide as asked, so a help rendered at a default width fails.
"""

from __future__ import annotations

import enum
import inspect
import itertools
import re
from typing import Annotated

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from offctl.commands.app import app
from offctl.commands.help import HANG, INDENT, Typer

WIDTHS = (60, 80, 200)
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


def _help(path: tuple[str, ...], width: int, of=app) -> list[str]:
    result = CliRunner().invoke(
        of, [*path, "--help"], env={"COLUMNS": str(width), "NO_COLOR": "1"}, terminal_width=width
    )
    assert result.exit_code == 0, result.output
    lines = ANSI.sub("", result.stdout).splitlines()
    # as wide as asked: the panels' borders span the width (a help at a default width fails here), no line beyond
    assert {len(line) for line in lines if line.startswith(("╭", "╰"))} == {width}
    assert max(map(len, lines)) == width
    return lines


def _shown(param) -> list[str]:
    """The names the help shows for a parameter: an option's every long and short form, an argument's name."""
    if param.param_type_name == "argument":
        return [getattr(param, "display_name_raw", None) or param.human_readable_name]
    return [*param.opts, *param.secondary_opts]


def _params(command) -> list:
    """The parameters the help shows (options, the --help Click adds, arguments)."""
    ctx = command.context_class(command, info_name=command.name)
    return [p for p in command.get_params(ctx) if not p.hidden], ctx


def _flags(command) -> list:
    """The command's options that take no value, and the --help option Click adds."""
    params, _ = _params(command)
    return [p for p in params if p.param_type_name == "option" and getattr(p, "is_flag", False)]


def _starts_row(words: list[str], names: set[str]) -> bool:
    return bool(words) and all(part in names for part in words[0].split(",") if part)


def _entry(lines: list[str], param, params) -> tuple[list[str], list[str]]:
    """The parameter's row in its panel: the lines of its names and metavar (its first line, and in the stacked
    layout the lines indented by HANG below it), and every line of the row (to the next row or the panel's end),
    each without the panel's border and padding. A row starts at the left, after the required column's mark, with
    one of the parameter's names whole: a name cut short starts no row."""
    mine = set(_shown(param))
    everyone = {n for p in params for n in _shown(p)}
    start = None
    rows: list[str] = []
    for line in lines:
        if start is not None and (line.startswith("╰") or not line.startswith("│")):
            break
        content = line[2:-2].rstrip() if line.startswith("│") else ""
        words = content.split()
        words = words[1:] if words[:1] == ["*"] else words
        indent = len(content) - len(content.lstrip())
        at_left = indent <= 3  # the required column: its mark and the padding either side
        if start is None:
            if at_left and _starts_row(words, mine):
                start = content
                rows.append(content)
            continue
        if at_left and _starts_row(words, everyone - mine):
            break
        rows.append(content)
    assert rows, (_shown(param), "no row starts with the names whole", lines)
    heading = [rows[0]] + list(itertools.takewhile(lambda c: 0 < len(c) - len(c.lstrip()) < INDENT, rows[1:]))
    return heading, rows


def _whole(word: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def _metavar(param, ctx) -> str | None:
    """What the help shows in a parameter's type column: its metavar, or the choices, or its type (Typer's)."""
    if getattr(param, "is_flag", False):
        return None
    return param.display_type_rich(ctx=ctx) or None


def _env_vars(param) -> list[str]:
    if not getattr(param, "show_envvar", False) or not param.envvar:
        return []
    return [param.envvar] if isinstance(param.envvar, str) else list(param.envvar)


def _check_whole(lines: list[str], command, width: int) -> None:
    """Every parameter's names, metavar and environment variable whole in its row; no "…" in the help."""
    assert not [line for line in lines if "…" in line]
    params, ctx = _params(command)
    usable = width - 4  # the panel's border and padding
    for param in params:
        heading, rows = _entry(lines, param, params)
        names = "\n".join(heading)
        for name in _shown(param):
            assert _whole(name, names), (name, heading)
        metavar = _metavar(param, ctx)
        if metavar:
            if len(metavar) > usable - HANG:  # a list of choices wider than a line: it breaks after a `|` only
                names = re.sub(r"\|\n *", "|", names)
            assert _whole(metavar, names), (metavar, heading)
        for env in _env_vars(param):
            assert _whole(env, "\n".join(rows)), (env, rows)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path, command", COMMANDS, ids=IDS)
def test_every_name_metavar_and_environment_variable_is_whole(path, command, width):
    _check_whole(_help(path, width), command, width)


def test_the_check_reads_the_names_of_offctl():
    """The checks above find what they check: the longest names of offctl's options are among them."""
    params, ctx = _params(typer.main.get_command(app).commands["inspect"])
    names = [n for p in params for n in _shown(p)]
    envs = [e for p in params for e in _env_vars(p)]
    metavars = [m for p in params if (m := _metavar(p, ctx))]
    assert {"--storm-kafka-client-release", "--first-poll-offset-strategy", "--ignore-zk-offsets"} <= set(names)
    assert "OFFCTL_STORM_KAFKA_CLIENT_RELEASE" in envs
    assert max(map(len, metavars)) > 60 - 4 - HANG  # a list of choices that must break at 60 columns


class _Choice(str, enum.Enum):
    first = "AN_EXCEEDINGLY_LONG_CHOICE_NAME_NUMBER_ONE"
    second = "AN_EXCEEDINGLY_LONG_CHOICE_NAME_NUMBER_TWO"


_made_up = Typer(rich_markup_mode="rich")


@_made_up.command("long-names")
def _long_names(
    release: Annotated[
        str,
        typer.Option(
            "--a-made-up-option-with-a-forty-char-name",
            "-r",
            metavar="A_METAVAR_OF_TWENTY_SIX_CH",
            envvar="OFFCTL_A_MADE_UP_ENVIRONMENT_VARIABLE_OF_FORTY_FOUR",
            help="An option longer in every part than offctl's, and a word of forty characters: "
            "useStartOffsetTimeIfOffsetOutOfRange1234.",
        ),
    ] = "1.2.4",
    choice: Annotated[_Choice, typer.Option("--choice", help="Choices wider together than a line.")] = _Choice.first,
    on: Annotated[bool, typer.Option("--on/--off", help="A flag with its negative.")] = False,
) -> None:
    """A command whose names are longer than offctl's."""


@_made_up.command("other")
def _other() -> None:
    """A second command, so that the first is a subcommand."""


@pytest.mark.parametrize("width", WIDTHS)
def test_names_longer_than_offctls_are_whole(width):
    command = typer.main.get_command(_made_up).commands["long-names"]
    lines = _help(("long-names",), width, of=_made_up)
    _check_whole(lines, command, width)
    if width == 60:  # the choices break between two choices, each whole on its line
        assert [line for line in lines if "AN_EXCEEDINGLY_LONG_CHOICE_NAME_NUMBER_TWO>" in line]


def _after_names(lines: list[str], param, params) -> list[str]:
    """The first word after the parameter's names: its metavar, or the first word of its help (beside the names,
    or on the line below them in the stacked layout)."""
    heading, rows = _entry(lines, param, params)
    words = " ".join(heading).split()
    rest = [w for w in words if w != "*" and not all(part in _shown(param) for part in w.split(",") if part)]
    return rest[:1] or " ".join(rows[len(heading) :]).split()[:1]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path, command", COMMANDS, ids=IDS)
def test_a_flag_has_an_empty_type_column(path, command, width):
    lines = _help(path, width)
    assert not [line for line in lines if "<bool>" in line]
    params, _ = _params(command)
    flags = _flags(command)
    assert any("--help" in p.opts for p in flags)
    for param in flags:
        # right after the names comes the help: nothing in the type column
        assert _after_names(lines, param, params) == (param.help or "").split()[:1], (path, param.opts)


@pytest.mark.parametrize("width", WIDTHS)
def test_an_option_that_takes_a_value_keeps_its_type_column(width):
    """The check above reads the type column: an option with a metavar shows it there, and a flag beside it
    shows nothing."""
    lines = _help(("mcp",), width)
    params, _ = _params(typer.main.get_command(app).commands["mcp"])
    http = next(p for p in params if "--http" in p.opts)
    writes = next(p for p in params if "--allow-writes" in p.opts)
    assert _after_names(lines, http, params) == ["HOST:PORT"]
    assert _after_names(lines, writes, params) == ["Let"]


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
