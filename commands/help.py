"""How `--help` reads: as Click's does. The app's Typer instances are `Typer` below (commands/app.py, sandbox.py,
config.py), so every command and group is made with these classes; tests/docs/test_help.py checks every help.

- A flag takes no value, so its type column is empty. Typer 0.29 shows `<bool>` there (`--allow-writes <bool>`,
  `--help <bool>`), where Click and Typer up to 0.28 show nothing; the type column shows an option's metavar
  when it has one, so a flag without one is given an empty one.
- A paragraph of help is reflowed to the width, as Click does: its single line breaks are spaces, except in a
  block marked `\\b` (the examples). Typer's rich markup keeps them, which cut sentences at the docstring's
  line ends.
"""

from __future__ import annotations

import inspect

import typer
from typer.core import TyperCommand, TyperGroup


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

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # the type column shows the metavar: nothing for a flag
        return params


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
