"""offctl mcp: offctl as a Model Context Protocol server for an AI assistant (docs/mcp.md)."""

from __future__ import annotations

from offctl.settings.options import (
    CONNECTION_OPTIONS,
    HORIZON_OPTIONS,
    SAFETY_OPTIONS,
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
)
from offctl.settings.resolve import Given

from .options import err_console, pick, reported_errors, say, shared


@shared(
    CONNECTION_OPTIONS,
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    pick(SAFETY_OPTIONS, "quiet_period", "backup_dir", "audit_log"),
    own=("http", "allow_writes", "plan_ttl"),
)
def mcp_command(given: Given, http: str | None, allow_writes: bool, plan_ttl: float) -> None:
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
    from offctl.faces.mcp.runs import bearer_token, parse_http, resolved_runs
    from offctl.faces.mcp.server import build_server, http_listener, serve_http
    from offctl.faces.mcp.writes import register_plan_tools
    from offctl.pipeline.read import kafka_in_child

    with reported_errors():
        host, port = parse_http(http) if http is not None else (None, None)
        token = bearer_token(host, given.context) if host is not None else None
        sock = http_listener(host, port) if host is not None else None
        runs, default = resolved_runs(given, say)
        plans = PlanStore(ttl_s=plan_ttl)  # this process's plans: an id is valid only in the server that made it
        server = build_server(
            runs,
            default,
            allow_writes,
            bearer_token=token,
            register=[lambda server, face: register_plan_tools(server, face, plans)],
        )
    with kafka_in_child():  # a crash inside librdkafka costs one tool call, not the session (pipeline.py)
        if host is None:
            server.run("stdio")
        else:
            err_console.print(
                f"offctl mcp: serving streamable HTTP on {host}:{port}/mcp "
                f"({'bearer token required' if token else 'loopback only'}); contexts: "
                f"{', '.join(runs)} (default {default})"
            )
            serve_http(server, sock, host)
