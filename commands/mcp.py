"""offctl mcp: offctl as a Model Context Protocol server for an AI assistant (docs/mcp.md)."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import replace
from typing import Annotated, Optional

import typer

from offctl.errors import UsageError
from offctl.settings.configfile import SANDBOX, sandbox_context
from offctl.inputs import check_quiet_period, printable, secret

from .config import show_document
from .options import (CONNECTION_OPTIONS, DEFAULT, DEFAULTS, HORIZON_OPTIONS, SAFETY_OPTIONS, SELECTION_OPTIONS,
                      SPOUT_OPTIONS, Given, connection, err_console, expiry_options, judged_by, pick,
                      reported_errors, seconds, selection, shared, written_profile)

TOKEN_VARIABLE = "OFFCTL_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
COMMAND_LINE = "command-line"  # the run's name when no context names it (flags and environment alone)


def parse_http(text: str) -> tuple[str, int]:
    """--http HOST:PORT, [V6]:PORT, :PORT or PORT (the last two on 127.0.0.1) -> (host, port)."""
    m = re.fullmatch(r"(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):)?(\d{1,5})", text.strip())
    if not m or not 0 < int(m.group(2)) <= 65535:
        raise UsageError(f"--http {printable(text[:60])!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return (m.group(1) or "").strip("[]") or "127.0.0.1", int(m.group(2))


def bearer_token(host: str, context=None) -> str | None:
    """The token every HTTP request must carry: OFFCTL_MCP_TOKEN, else the chosen context's `mcp-token` (a secret:
    the file is refused unless only its owner can read it); required off loopback (exit 2 without it)."""
    token = os.environ.get(TOKEN_VARIABLE) or (context.settings.get("mcp-token") if context is not None else None) \
        or None
    if token is not None:
        secret(token)
        if len(token) < MIN_TOKEN_CHARS:
            raise UsageError(f"{TOKEN_VARIABLE} is shorter than {MIN_TOKEN_CHARS} characters: refused (a bearer "
                             f"token must not be guessable; e.g. `openssl rand -hex 32`)")
    if token is None and host not in LOOPBACK:
        raise UsageError(f"--http {host}: an address other than loopback ({', '.join(sorted(LOOPBACK))}) needs a "
                         f"bearer token in {TOKEN_VARIABLE} or the context's mcp-token: refused to start without one")
    return token


def _context_given(given: Given, context) -> Given:
    """The settings of another context of the file, as `--context NAME` alone would give them: the context's
    settings over the built-in defaults (the command line's flags and environment belong to the default run)."""
    values = {name: DEFAULTS.get(name) for name in given.values}
    values.update(config=given.values.get("config"), context=context.name)
    other = Given(values, {name: DEFAULT for name in values}, given.config, context)
    other.apply_context()
    return other


def _run(name: str, given: Given, chosen):
    """One resolved run: its connection (every root it names is read), what `fleet` reads, how it judges."""
    from offctl.pipeline import Selection, validate
    from offctl.faces.mcp.server import Run
    from offctl.repair.reset import Safety

    conn = connection(given)
    conn = replace(conn, default_roots=False, default_trident_roots=False)  # fleet reads every root it names
    fleet = replace(chosen or Selection(), all_groups=bool(conn.bootstrap_servers) or bool(chosen and chosen.all_groups))
    validate(conn, fleet)
    defaults = Safety()
    safety = Safety(quiet_period_s=check_quiet_period(given.quiet_period),
                    backup_dir=given.backup_dir or defaults.backup_dir, audit_log=given.audit_log or defaults.audit_log)
    return Run(name, conn, judged_by(given), fleet, given.time_lag_budget, expiry_options(given),
               show_document(given), safety, functools.partial(written_profile, given),
               given.context.name if given.context else name if name == SANDBOX else None)


def resolved_runs(given: Given) -> tuple[dict, str]:
    """Every run the server may reach, by name, and the default one: the run the command line gives (its
    context, or `command-line`), then each other context of the config file that names a server."""
    default = given.context.name if given.context else COMMAND_LINE
    if not given.context and COMMAND_LINE in given.config.contexts:
        raise UsageError(f"the config file has a context named {COMMAND_LINE!r}, the name offctl mcp gives the "
                         f"servers of the command line: give --context to choose one, or rename it")
    if not (given.zk or given.bootstrap_servers) and not given.context:
        if sandbox_context() is None:
            raise UsageError("no servers to reach: give --context NAME (or a default-context in the config file), "
                             "--zk and/or --bootstrap-servers, or start the sandbox")
        default = SANDBOX
    runs = {default: _run(default, given, selection(given))}
    for context in given.config.contexts.values():
        if context.name in runs:
            continue
        if not (context.settings.get("zk") or context.settings.get("bootstrap-servers")):
            err_console.print(f"offctl mcp: context {context.name} names no server (zk, bootstrap-servers): "
                              f"not served")
            continue
        runs[context.name] = _run(context.name, _context_given(given, context), None)
    return runs, default


@shared(CONNECTION_OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS, HORIZON_OPTIONS,
        pick(SAFETY_OPTIONS, "quiet_period", "backup_dir", "audit_log"))
def mcp_command(
    given: Given,
    http: Annotated[Optional[str], typer.Option(
        "--http", metavar="HOST:PORT",
        help="Serve streamable HTTP here (default: stdio). Off loopback it needs a bearer token in "
             "OFFCTL_MCP_TOKEN.")] = None,
    allow_writes: Annotated[bool, typer.Option(
        "--allow-writes", help="Let the apply tool write a plan a human confirmed (default: reads and plans only).")]
        = False,
    plan_ttl: Annotated[float, typer.Option(
        "--plan-ttl", metavar="DURATION", parser=seconds(1, 24 * 3600),
        help="How long a plan can be applied after it was made: 10m, 1h, or seconds.")] = 600.0,
) -> None:
    """Serve offctl to an AI assistant over the Model Context Protocol (stdio, or streamable HTTP).

    It reaches the config file's contexts and the servers the command line names, and no others. The
    assistant reads (fleet, consumer, peek, finding, settings); a write needs a plan, a human's yes, and
    --allow-writes.

    \b
    Example:
      offctl mcp --context prod
      OFFCTL_MCP_TOKEN=$(cat token) offctl mcp --context prod --http 0.0.0.0:8765
    """
    from offctl.faces.mcp.plans import PlanStore
    from offctl.faces.mcp.server import build_server, http_listener, serve_http
    from offctl.faces.mcp.writes import register_plan_tools

    with reported_errors():
        host, port = parse_http(http) if http is not None else (None, None)
        token = bearer_token(host, given.context) if host is not None else None
        sock = http_listener(host, port) if host is not None else None
        runs, default = resolved_runs(given)
        plans = PlanStore(ttl_s=plan_ttl)  # this process's plans: an id is valid only in the server that made it
        server = build_server(runs, default, allow_writes, bearer_token=token,
                              register=[lambda server, face: register_plan_tools(server, face, plans)])
    if host is None:
        server.run("stdio")
    else:
        err_console.print(f"offctl mcp: serving streamable HTTP on {host}:{port}/mcp "
                          f"({'bearer token required' if token else 'loopback only'}); contexts: "
                          f"{', '.join(runs)} (default {default})")
        serve_http(server, sock, host)
