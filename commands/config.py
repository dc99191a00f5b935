"""offctl config: the config file's contexts and profiles, and where each setting of a run comes from."""

from __future__ import annotations

import sys

from offctl.render.settings import write_settings
from offctl.settings.kinds import PlanOutput
from offctl.settings.options import (
    CONNECTION_OPTIONS,
    FAIL_ON_OPTIONS,
    HORIZON_OPTIONS,
    MONITOR_OPTIONS,
    OPTIONS,
    SAFETY_OPTIONS,
    SPOUT_OPTIONS,
)
from offctl.settings.resolve import Given

from .help import Typer
from .options import connection, pick, reported_errors, shared

app = Typer(
    name="config",
    no_args_is_help=True,
    rich_markup_mode="rich",
    help="The config file: contexts (servers and defaults by name) and per-spout profiles.",
)


@app.command("show")
@shared(
    CONNECTION_OPTIONS,
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    FAIL_ON_OPTIONS,
    pick(SAFETY_OPTIONS, "quiet_period", "backup_dir", "audit_log"),
    MONITOR_OPTIONS,
    own=(OPTIONS["output"].but(kind=PlanOutput, default=PlanOutput.table),),
)
def show_command(given: Given, output: PlanOutput) -> None:
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
        doc = given.document()
    write_settings(doc, output.value, sys.stdout)
