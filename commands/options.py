"""The options as Typer parameters, made from the one table (offctl.settings.options), and the terminal's part of
a run: errors as one line and an exit code, and the question before a write.

A command lists the names of its own options; `shared(...)` adds the groups it shares (connection, selection, spout
settings, thresholds and horizons, output, safety) to its signature, each in its help panel, and hands the command
one `Given` (offctl.settings.resolve): every shared value by name, with where it came from. Click says which values
were flags and which came from the environment; everything else about settings is resolved in the library."""

from __future__ import annotations

import functools
import inspect as pyinspect
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from offctl.errors import NotConfirmed, OffctlError
from offctl.inputs import redact
from offctl.settings import resolve
from offctl.settings.connection import Connection
from offctl.settings.kinds import Option
from offctl.settings.options import OPTIONS
from offctl.settings.resolve import DEFAULT, FLAG, Given
from offctl.settings.run import Reading

# Names can contain brackets: no markup. Rich honours NO_COLOR by itself.
err_console = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)


def say(line: str) -> None:
    """A notice of the settings' resolution (the sandbox taken, a root kept), on stderr."""
    err_console.print(line)


# --- the table's options as Typer parameters -------------------------------------------------------------------


def _parser(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return run


def annotation(o: Option) -> Any:
    """The option as a Typer parameter's annotation."""
    kind: Any = list[o.kind] if o.many else o.kind
    if o.default is None and not o.required:
        kind = Optional[kind]
    extra: dict[str, Any] = {}
    if o.metavar:
        extra["metavar"] = o.metavar
    if o.env:
        extra["envvar"] = o.env
    if o.parse is not None:
        extra["parser"] = _parser(o.parse)
    if o.low is not None:
        extra["min"] = o.low
    if o.high is not None:
        extra["max"] = o.high
    return Annotated[
        kind, typer.Option(*o.flags, help=o.help, rich_help_panel=o.panel, show_default=o.show_default, **extra)
    ]


def parameter(o: Option) -> pyinspect.Parameter:
    default = pyinspect.Parameter.empty if o.required else o.default
    return pyinspect.Parameter(o.name, pyinspect.Parameter.KEYWORD_ONLY, annotation=annotation(o), default=default)


def pick(group: tuple[str, ...], *names: str) -> tuple[str, ...]:
    """The options of `group` named (a command that shares only part of a group)."""
    return tuple(name for name in group if name in names)


def without(group: tuple[str, ...], *names: str) -> tuple[str, ...]:
    return tuple(name for name in group if name not in names)


def given_of(ctx: typer.Context, values: dict[str, Any]) -> Given:
    """The values click parsed, with their sources (a flag, an environment variable, or the default), resolved
    with the config file below them (offctl.settings.resolve)."""
    params = {p.name: p for p in ctx.command.params}
    origins = {}
    for name in values:
        source = getattr(ctx.get_parameter_source(name), "name", None)
        origins[name] = (
            FLAG if source == "COMMANDLINE" else f"env {params[name].envvar}" if source == "ENVIRONMENT" else DEFAULT
        )
    return Given.from_options(values, origins)


def shared(
    *groups: tuple[str, ...], own: Iterable[str | Option] = (), errors: Callable[[], Any] | None = None
) -> Callable:
    """Add these groups of shared options to a command's signature, and call the command with `given=` the Given
    of them instead. `own`: the command's own options (a name of the table, or the table's option as this command
    takes it, `OPTIONS[name].but(...)`), added to the signature with the table's declaration and passed by name.
    `errors`: how an error of the settings (the config file, a context) is reported, reported_errors by default."""
    options = [OPTIONS[name] for group in groups for name in group]
    owned = [OPTIONS[o] if isinstance(o, str) else o for o in own]

    def wrap(command: Callable) -> Callable:
        signature = pyinspect.signature(command, eval_str=True)
        mine = {o.name for o in owned}
        kept = [p for p in signature.parameters.values() if p.name != "given" and p.name not in mine]
        takes_ctx = "ctx" in signature.parameters
        if not takes_ctx:  # the Given needs the click context (where each value came from)
            kept.insert(
                0, pyinspect.Parameter("ctx", pyinspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
            )
        added = [parameter(o) for o in owned + options]
        added.sort(key=lambda p: p.default is not pyinspect.Parameter.empty)  # required ones first

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            values = {o.name: kwargs.pop(o.name) for o in options}
            ctx = kwargs["ctx"] if takes_ctx else kwargs.pop("ctx")
            with (errors or reported_errors)():
                given = given_of(ctx, values)
            return command(*args, given=given, **kwargs)

        run.__signature__ = signature.replace(parameters=kept + added)
        run.__annotations__ = {p.name: p.annotation for p in kept + added}
        return run

    return wrap


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn offctl errors into one line on stderr and the documented exit code."""
    try:
        yield
    except OffctlError as exc:
        err_console.print(f"offctl: {redact(str(exc))}")
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("offctl: interrupted")
        raise typer.Exit(130) from None


# --- the library's resolution, with the terminal as the place for its notices -------------------------------------


def connection(given: Given) -> Connection:
    return resolve.connection(given, say)


def reading(given: Given) -> Reading:
    return resolve.reading(given, say)


NO_TERMINAL = (
    "not confirmed: --execute asks before writing, and there is no terminal to ask; add --yes to write "
    "without asking (nothing was written)"
)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def check_confirmable(execute: bool, yes: bool) -> None:
    """`--execute` without `--yes` asks on the terminal: with none (cron, a pipe), refuse at once, before anything
    is read (exit 8), rather than take end of input as an answer."""
    if execute and not yes and not stdin_is_terminal():
        raise NotConfirmed(NO_TERMINAL)


class Confirmation:
    """Shows the plans once and asks once whether to write them, naming the operation and the cluster; no answer
    (end of input) is no. `conn`: the servers the write goes to, set once the command has its connection.

    With table output the plans go to stdout, where the result then follows without repeating them
    (`shown`); otherwise to stderr, so stdout stays one clean document."""

    def __init__(self, yes: bool, output: str = "json", conn: Connection | None = None) -> None:
        self.yes, self.output, self.shown, self.conn = yes, output, False, conn

    def __call__(self, plans) -> bool:
        if self.yes:
            return True
        from offctl.render.formats import table_console

        self.shown = self.output == "table"
        return confirm_plans(False, plans, table_console(sys.stdout) if self.shown else err_console, conn=self.conn)


def confirm_plans(yes: bool, plans, console=None, *, conn: Connection | None = None) -> bool:
    """Show the plans (on stderr unless `console` says where) and ask once whether to write them."""
    if yes:
        return True
    from offctl.core.results.repair import RepairResult
    from offctl.render.plans import confirm_question, write_plan_table
    from offctl.settings.sandbox import is_sandbox

    for plan in plans:
        write_plan_table(RepairResult(plan), console or err_console)
    zk, kafka = (conn.zk, conn.bootstrap_servers) if conn else (None, None)
    question = confirm_question(plans, zk, kafka, sandbox=is_sandbox(zk, kafka))
    try:
        return typer.confirm(question, default=False, err=True)
    except typer.Abort:  # end of input (Ctrl-D, or a terminal that hung up before offctl read): no answer is no
        gone = terminal_gone(sys.stdin)
        err_console.print(f"\noffctl: the terminal went away before an answer ({gone})" if gone else "")
        return False
    except OSError as exc:  # the terminal hung up while offctl waited in the read (EIO): no answer either
        err_console.print(f"\noffctl: the terminal went away before an answer ({exc.strerror or exc})")
        return False


def terminal_gone(stream) -> str | None:
    """Why `stream`'s terminal is gone, or None while it is there. A terminal that hung up before the read gives
    end of input, as Ctrl-D does; only the hung-up one refuses its settings (Linux answers EIO to every ioctl on
    a hung-up tty: hung_up_tty_ioctl in drivers/tty/tty_io.c)."""
    import errno
    import termios

    try:
        termios.tcgetattr(stream.fileno())
    except termios.error as exc:
        return exc.args[1] if len(exc.args) > 1 and exc.args[0] == errno.EIO else None
    except (OSError, ValueError, AttributeError):  # closed, replaced or not a file: nothing to say
        return None
    return None
