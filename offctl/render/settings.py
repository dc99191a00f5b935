"""`offctl config show`: the settings of a run, where each came from, and the profiles, as a table or as JSON, from
the document offctl.settings.resolve.Given.document makes (offctl mcp's `settings` tool answers the same one)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any


def write_settings(doc: Mapping[str, Any], output: str, stream: IO[str]) -> None:
    if output == "json":
        stream.write(json.dumps(doc, indent=2) + "\n")
        return
    from rich.table import Table

    from offctl.render.formats import table_console

    console = table_console(stream)
    console.print(f"config file: {doc['config'] or '(none)'}; context: {doc['context'] or '(none)'}")
    table = Table("setting", "value", "from")
    for row in doc["settings"]:
        value = row["value"]
        table.add_row(
            row["key"],
            "-" if value in (None, [], ()) else ", ".join(map(str, value)) if isinstance(value, list) else str(value),
            row["from"],
        )
    console.print(table)
    if doc["profiles"]:
        profiles = Table("profile", "match", "sets", "from")
        for p in doc["profiles"]:
            profiles.add_row(p["name"], p["match"], ", ".join(f"{k} = {v}" for k, v in p["sets"].items()), p["from"])
        console.print(profiles)
