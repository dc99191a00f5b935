"""The offctl command line."""

from __future__ import annotations

import os
import re
import sys
import traceback
from typing import Annotated, Optional

import typer
from typer.exceptions import TyperException

from offctl import __version__, interrupts
from offctl.errors import INTERNAL_ERROR, Interrupted, InterruptedWrite, OffctlError
from offctl.inputs import check_utf8, redact

from .audit import audit_command
from .config import app as config_app
from .help import Typer
from .inspect import inspect_command
from .lagmonitor import CONTEXT_SETTINGS as MONITOR_CONTEXT
from .lagmonitor import storm_kafka_monitor_command
from .mcp import mcp_command
from .options import err_console
from .peek import peek_command
from .reset import delete_command, migrate_command, reset_command, restore_command
from .sandbox import app as sandbox_app
from .serve import serve_command
from .watch import watch_command

app = Typer(
    name="offctl",
    help="Inspect and repair the consumer offsets of Apache Storm Kafka spouts.",
    no_args_is_help=True,
    # Tracebacks with locals could print credentials: never show them.
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"offctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = None,
) -> None:
    """Inspect and repair the consumer offsets of Apache Storm Kafka spouts."""


app.command("inspect")(inspect_command)
app.command("peek")(peek_command)
app.command("reset")(reset_command)
app.command("restore")(restore_command)
app.command("migrate")(migrate_command)
app.command("delete")(delete_command)
app.command("serve")(serve_command)
app.command("watch")(watch_command)
app.command("audit")(audit_command)
app.command("mcp")(mcp_command)
app.command("storm-kafka-monitor", context_settings=MONITOR_CONTEXT)(storm_kafka_monitor_command)
app.add_typer(sandbox_app)
app.add_typer(config_app)


def _option_of(argv: list[str], i: int) -> str:
    arg = argv[i]
    if arg.startswith("--") and "=" in arg:
        return arg.split("=", 1)[0]
    if i > 0 and argv[i - 1].startswith("-"):
        return argv[i - 1]
    return "an argument"


def _boundary_checks(argv: list[str]) -> None:
    """Values that are not valid UTF-8, on the command line or in OFFCTL_* variables, are refused before
    anything uses them, naming where they are and never what they are."""
    values: dict[str, list[str]] = {}
    for i, arg in enumerate(argv):
        values.setdefault(_option_of(argv, i), []).append(arg)
    values.update({name: [value] for name, value in os.environ.items() if name.startswith("OFFCTL_")})
    check_utf8(values)


def _usage_message(exc: TyperException, argv: list[str]) -> str:
    """Click's message without any value the user typed: a value in the wrong place may be a secret."""
    message = re.sub(
        r"Got unexpected extra argument(?:s|\(s\))? \((.*)\)",
        lambda m: (
            "got unexpected extra argument(s), not shown (a value may be a secret); a value "
            "with spaces needs quotes, and every option needs its own flag"
        ),
        exc.format_message(),
    )
    message = message.replace("Value error, ", "")  # pydantic's prefix on Typer's choice errors
    ctx = getattr(exc, "ctx", None)
    words = set(ctx.command_path.split()) if ctx else set()
    for value in sorted({a for a in argv if not a.startswith("-") and len(a) >= 3} - words, key=len, reverse=True):
        message = message.replace(value, "***")
    return message


def main() -> None:
    argv = sys.argv[1:]
    try:
        code = _run(argv)
    finally:
        interrupts.uninstall()  # a caller that goes on (a test, a script) gets its handlers and signal mask back
    sys.exit(code)


def internal_error(exc: BaseException) -> int:
    """An unexpected exception (a bug): one line saying so, then the traceback (without locals, redacted: a
    value in it may be a secret), on stderr; exit 70, never 1 (findings)."""
    err_console.print(
        f"offctl: internal error (a bug, please report it): {type(exc).__name__}: {redact(' '.join(str(exc).split()))}"
    )
    err_console.print(redact("".join(traceback.format_exception(exc))).rstrip())
    return INTERNAL_ERROR


def _run(argv: list[str]) -> int:
    """Run the command line, print what ends it, and return its exit code."""
    try:
        # SIGTERM ends offctl the way Ctrl-C does; once a write has landed, both wait for its report. Inside the
        # try: a Ctrl-C that came while the handlers were set is raised as install() ends (offctl/interrupts.py).
        interrupts.install()
        _boundary_checks(argv)
        code = app(standalone_mode=False)
    except OffctlError as exc:
        err_console.print(f"offctl: {redact(str(exc))}")
        code = exc.exit_code
    except TyperException as exc:  # Click's usage errors (exit 2) and the like, raised outside standalone mode
        ctx = getattr(exc, "ctx", None)
        hint = f"\nTry '{ctx.command_path} --help' for help." if ctx else ""
        err_console.print(f"offctl: {redact(_usage_message(exc, argv))}{hint}")
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("offctl: interrupted")
        code = 130
    except Exception as exc:  # noqa: BLE001 - a bug: cron and scripts must tell it from exit 1 (findings)
        code = internal_error(exc)
    code = code if isinstance(code, int) else 0
    interrupted = code in (Interrupted.exit_code, InterruptedWrite.exit_code)
    if interrupts.received() and interrupts.wrote() and not interrupted:
        err_console.print("offctl: interrupted after the change was written: what was done is reported above")
        code = InterruptedWrite.exit_code
    return code
