"""offctl config: the config file's contexts and profiles, and where each setting of a run comes from."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from offctl.settings import configfile as settings

from .help import Typer
from .options import (CONNECTION_OPTIONS, FAIL_ON_OPTIONS, HORIZON_OPTIONS, MONITOR_OPTIONS, OUTPUT, SAFETY_OPTIONS,
                      SPOUT_OPTIONS, Given, connection, pick, reported_errors, shared)

app = Typer(name="config", no_args_is_help=True, rich_markup_mode="rich",
            help="The config file: contexts (servers and defaults by name) and per-spout profiles.")


class ShowFormat(str, Enum):
    table = "table"
    json = "json"


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def show_document(given: Given) -> dict:
    """`config show -o json`'s document of these settings (offctl mcp's `settings` tool answers it too)."""
    rows = [(name.replace("_", "-"), _plain(value), given.origin(name)) for name, value in given.values.items()]
    own = given.context.profiles if given.context else ()
    tables = [(t, f"context {given.context.name}" if t in own else "top level")
              for t in settings.profiles_of(given.config, given.context)]
    return settings.document(given.config, given.context, rows, tables)


@app.command("show")
@shared(CONNECTION_OPTIONS, SPOUT_OPTIONS, HORIZON_OPTIONS, FAIL_ON_OPTIONS,
        pick(SAFETY_OPTIONS, "quiet_period", "backup_dir", "audit_log"), MONITOR_OPTIONS)
def show_command(
    given: Given,
    output: Annotated[ShowFormat, typer.Option("--output", "-o", rich_help_panel=OUTPUT, help="Output format.")]
        = ShowFormat.table,
) -> None:
    """Show every effective setting, its value (secrets masked) and where it came from, and the profiles.

    Where: flag, env VARIABLE, context NAME in FILE, or default. Takes the same options as the other commands,
    so `offctl config show --context lab --timeout 30s` shows what `offctl inspect --context lab --timeout 30s`
    would use.

    \b
    Example:
      offctl config show --context lab
      OFFCTL_CONTEXT=lab offctl config show -o json
    """
    with reported_errors():
        connection(given)  # checked as every command checks it; with no server named, the sandbox's are shown
        doc = show_document(given)
    if output is ShowFormat.json:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    from rich.table import Table

    from offctl.render.output import table_console

    console = table_console(sys.stdout)
    console.print(f"config file: {doc['config'] or '(none)'}; context: {doc['context'] or '(none)'}")
    table = Table("setting", "value", "from")
    for row in doc["settings"]:
        value = row["value"]
        table.add_row(row["key"], "-" if value in (None, [], ()) else
                      ", ".join(map(str, value)) if isinstance(value, list) else str(value), row["from"])
    console.print(table)
    if doc["profiles"]:
        profiles = Table("profile", "match", "sets", "from")
        for p in doc["profiles"]:
            profiles.add_row(p["name"], p["match"], ", ".join(f"{k} = {v}" for k, v in p["sets"].items()), p["from"])
        console.print(profiles)
