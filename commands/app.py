"""The offctl command line."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from offctl import __version__

from .audit import audit_command
from .inspect import inspect_command
from .reset import migrate_command, reset_command, restore_command
from .sandbox import app as sandbox_app

app = typer.Typer(
    name="offctl",
    help="Inspect and repair the consumer offsets of Apache Storm Kafka spouts.",
    no_args_is_help=True,
    # Tracebacks with locals could print credentials: never show them.
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"offctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = None,
) -> None:
    """Inspect and repair the consumer offsets of Apache Storm Kafka spouts."""


app.command("inspect")(inspect_command)
app.command("reset")(reset_command)
app.command("restore")(restore_command)
app.command("migrate")(migrate_command)
app.command("audit")(audit_command)
app.add_typer(sandbox_app)


def main() -> None:
    app()
