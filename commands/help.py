"""How `--help` reads: as Click's does. The app's Typer instances are `Typer` below (commands/app.py, sandbox.py,
config.py), so every command and group is made with these classes; tests/docs/test_help.py checks every help.

- A flag takes no value, so its type column is empty. Typer 0.29 shows `<bool>` there (`--allow-writes <bool>`,
  `--help <bool>`), where Click and Typer up to 0.28 show nothing; the type column shows an option's metavar
  when it has one, so a flag without one is given an empty one.
- A paragraph of help is reflowed to the width, as Click does: its single line breaks are spaces, except in a
  block marked `\\b` (the examples). Typer's rich markup keeps them, which cut sentences at the docstring's
  line ends.
- An option's names, its metavar and its environment variable are never cut, at any width from 60 columns up
  (`WholeNamesTable`). Typer lays a panel out as a rich Table whose columns all wrap and end in an ellipsis, and
  lets nothing set a column: at 80 columns it printed `--storm-kafka-client-…` and `OFFCTL_STORM_KAFKA_REL…`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator

import typer
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

INDENT = 4  # an option's help, under its names when they and the help cannot stand side by side
HANG = 2  # in that layout, the indent of the names' and metavar's lines after their first


def reflowed(text: str | None) -> str | None:
    """Click's rule for help text: within a paragraph, a line break is a space, except in a block marked \\b."""
    if not text:
        return text
    return "\n\n".join(
        p if p.startswith("\b") else " ".join(line.strip() for line in p.split("\n"))
        for p in inspect.cleandoc(text).split("\n\n")
    )


class _ReadsAsClick:
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflowed(self.help)

    def format_help(self, ctx, formatter) -> None:
        from typer import rich_utils  # imported for a help or an error only, by Typer too

        typers_table = rich_utils.Table
        rich_utils.Table = WholeNamesTable  # Typer makes each panel's table by this name; nothing else sets a column
        try:
            super().format_help(ctx, formatter)
        finally:
            rich_utils.Table = typers_table

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # the type column shows the metavar: nothing for a flag
        return params


class WholeNamesTable(Table):
    """A panel of `--help` (options or commands) whose names, metavars and environment variables are never cut.

    Each column but the last (the required mark, the names, the metavar) keeps its width, and the last (the help,
    with its environment variable and default) is never narrower than its longest word; a column empty in every
    row (no option of the panel has a short name) takes no room. Where these cannot stand side by side within the
    width, each row is its names, then its help indented below them, as Click lays out an option whose names are
    long; a list of choices wider than a whole line breaks after a `|`, never inside a choice.
    """

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        *heads, text = self.columns
        heads = [column for column in heads if any(column.cells)]
        self.columns = [*heads, text]
        for index, column in enumerate(self.columns):
            column._index = index  # rich pads a column by its place: the first has no left padding
        for column in heads:
            column.no_wrap = True
            column.min_width = max(Measurement.get(console, options, cell).maximum for cell in column.cells)
        text.min_width = max((_longest_word(console, options, cell) for cell in text.cells), default=0)
        if self.__rich_measure__(console, options).minimum <= options.max_width:
            yield from super().__rich_console__(console, options)
            return
        for *names, helped in zip(*(column.cells for column in self.columns)):
            yield from _heading([Text(n) if isinstance(n, str) else n for n in names if n], options.max_width)
            yield Padding(helped, (0, 0, 0, INDENT))


def _longest_word(console: Console, options: ConsoleOptions, cell: RenderableType) -> int:
    """The narrowest a help cell can be without cutting a word. Typer's cell is rich Columns (the help, the
    environment variable, the default), which rich measures as able to shrink to nothing: its parts are measured."""
    parts = getattr(cell, "renderables", [cell])
    return max((Measurement.get(console, options, part).minimum for part in parts), default=0)


def _heading(cells: list[Text], width: int) -> Iterator[Text]:
    """A row's names and metavar, as many words to a line as fit, the lines after the first indented by HANG; a
    word too wide for such a line (a list of choices) starts a line of its own and breaks after a `|`."""
    pieces: list[tuple[Text, str, bool]] = []  # a piece, what joins it to the next, whether it starts a line
    for word in Text(" ").join(cells).split(" "):
        if word.cell_len <= width - HANG:
            pieces.append((word, " ", False))
            continue
        parts = word.divide([m.end() for m in re.finditer(r"\|", word.plain)])
        pieces += [(part, "" if part is not parts[-1] else " ", part is parts[0]) for part in parts]
    line, glue, empty = Text(), "", True
    for piece, after, fresh in pieces:
        if not empty and (fresh or line.cell_len + len(glue) + piece.cell_len > width):
            yield line
            line, glue, empty = Text(" " * HANG), "", True
        line.append(glue)
        line.append_text(piece)
        glue, empty = after, False
    yield line


class Command(_ReadsAsClick, TyperCommand):
    """A command whose help reads as Click's."""


class Group(_ReadsAsClick, TyperGroup):
    """A group (the app, `sandbox`, `config`) whose help reads as Click's."""


class Typer(typer.Typer):
    """typer.Typer whose group and commands are `Group` and `Command`, unless `cls` names another class."""

    def __init__(self, *args, cls: type[TyperGroup] = Group, **kwargs) -> None:
        super().__init__(*args, cls=cls, **kwargs)

    def command(self, *args, cls: type[TyperCommand] = Command, **kwargs):
        return super().command(*args, cls=cls, **kwargs)
