"""The runs `offctl mcp` serves, and the address and bearer token it serves them on, resolved from the settings as
every command resolves its own: the run the command line gives (its context, or `command-line`), and each other
context of the config file that names a server."""

from __future__ import annotations

import functools
import os
import re

from offctl.errors import UsageError
from offctl.faces.mcp.server import Run
from offctl.inputs import printable, secret
from offctl.settings.configfile import SANDBOX, sandbox_context
from offctl.settings.resolve import Given, Say, fleet_reading, safety, written_profile

COMMAND_LINE = "command-line"  # the run's name when no context names it (flags and environment alone)
TOKEN_VARIABLE = "OFFCTL_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def parse_http(text: str) -> tuple[str, int]:
    """--http HOST:PORT, [V6]:PORT, :PORT or PORT (the last two on 127.0.0.1) -> (host, port)."""
    m = re.fullmatch(r"(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):)?(\d{1,5})", text.strip())
    if not m or not 0 < int(m.group(2)) <= 65535:
        raise UsageError(f"--http {printable(text[:60])!r}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    return (m.group(1) or "").strip("[]") or "127.0.0.1", int(m.group(2))


def bearer_token(host: str, context=None) -> str | None:
    """The token every HTTP request must carry: OFFCTL_MCP_TOKEN, else the chosen context's `mcp-token` (a secret:
    the file is refused unless only its owner can read it); required off loopback (exit 2 without it)."""
    token = (
        os.environ.get(TOKEN_VARIABLE) or (context.settings.get("mcp-token") if context is not None else None) or None
    )
    if token is not None:
        secret(token)
        if len(token) < MIN_TOKEN_CHARS:
            raise UsageError(
                f"{TOKEN_VARIABLE} is shorter than {MIN_TOKEN_CHARS} characters: refused (a bearer "
                f"token must not be guessable; e.g. `openssl rand -hex 32`)"
            )
    if token is None and host not in LOOPBACK:
        raise UsageError(
            f"--http {host}: an address other than loopback ({', '.join(sorted(LOOPBACK))}) needs a "
            f"bearer token in {TOKEN_VARIABLE} or the context's mcp-token: refused to start without one"
        )
    return token


def _run(name: str, given: Given, selected: bool, say: Say) -> Run:
    """One resolved run: what `fleet` reads (every root its connection names), how it judges, what a write keeps."""
    return Run(
        name,
        fleet_reading(given, say, selected=selected),
        given.document(),
        safety(given, execute=False),
        functools.partial(written_profile, given),
        given.context.name if given.context else name if name == SANDBOX else None,
    )


def resolved_runs(given: Given, say: Say) -> tuple[dict[str, Run], str]:
    """Every run the server may reach, by name, and the default one: the run the command line gives (its
    context, or `command-line`), then each other context of the config file that names a server."""
    default = given.context.name if given.context else COMMAND_LINE
    if not given.context and COMMAND_LINE in given.config.contexts:
        raise UsageError(
            f"the config file has a context named {COMMAND_LINE!r}, the name offctl mcp gives the "
            f"servers of the command line: give --context to choose one, or rename it"
        )
    if not (given.zk or given.bootstrap_servers) and not given.context:
        if sandbox_context() is None:
            raise UsageError(
                "no servers to reach: give --context NAME (or a default-context in the config file), "
                "--zk and/or --bootstrap-servers, or start the sandbox"
            )
        default = SANDBOX
    runs = {default: _run(default, given, True, say)}
    for context in given.config.contexts.values():
        if context.name in runs:
            continue
        if not (context.settings.get("zk") or context.settings.get("bootstrap-servers")):
            say(f"offctl mcp: context {context.name} names no server (zk, bootstrap-servers): not served")
            continue
        runs[context.name] = _run(context.name, given.of_context(context), False, say)
    return runs, default
