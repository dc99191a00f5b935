"""offctl sandbox: local servers for trying offctl, remembered so other commands pick them up."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from offctl.settings import sandbox as state

from .help import Typer
from .options import err_console, reported_errors

app = Typer(
    name="sandbox",
    no_args_is_help=True,
    rich_markup_mode=None,
    help="A local ZooKeeper and Apache Kafka with a seeded fleet, for trying offctl.",
)


def _describe(s: state.Sandbox) -> None:
    from offctl.faces.sandbox import BROKER

    alive = s.running
    typer.echo(f"ZooKeeper  {s.zk}  pid {s.zk_pid}  {'running' if alive['zookeeper'] else 'STOPPED'}")
    typer.echo(
        f"Kafka      {s.broker}  pid {s.broker_pid}  {'running' if alive['broker'] else 'STOPPED'}  "
        f"(Apache Kafka {BROKER}, ZooKeeper mode)"
    )
    typer.echo(f"zkRoot     {s.zk_root}  (Storm's root {s.storm_root}){'' if s.seeded else '  not seeded yet'}")
    typer.echo(f"Trident    {s.trident_root}  (transactional.zookeeper.root)")
    typer.echo(
        f"JStorm     {s.jstorm_root}  (JStorm's storm.zookeeper.root: its Kafka spouts under kafka/offset/topic)"
    )
    typer.echo(f"state      {s.directory}")
    for name, ids in sorted((s.stopped or {}).items()):
        typer.echo(f"stopped    {name} ({', '.join(ids)}): `offctl sandbox topology start {name}`")


@app.command("up")
def up_command() -> None:
    """Start ZooKeeper and the broker on free loopback ports (or show the running ones).

    Other offctl commands use them when no --zk, --zk-root or --bootstrap-servers is given.

    \b
    Example:
      offctl sandbox up && offctl sandbox seed && offctl inspect
    """
    from offctl.faces import sandbox as sb  # imported when a sandbox command runs: it starts servers

    with reported_errors():
        sandbox, started = sb.up()
    typer.echo("sandbox started" if started else "sandbox already running")
    _describe(sandbox)


@app.command("seed")
def seed_command() -> None:
    """Write a realistic fleet: healthy spouts and each kind of problem offctl finds.

    \b
    Example:
      offctl sandbox seed && offctl inspect --lag-threshold 5
    """
    from offctl.faces import sandbox as sb  # imported when a sandbox command runs: it starts servers
    from offctl.settings import sandbox as state

    with reported_errors():
        sandbox = state.active()
        if sandbox is None:
            err_console.print("offctl: no sandbox is running: start it with `offctl sandbox up`")
            raise typer.Exit(3)
        shows = sb.seed(sandbox)
    typer.echo(
        f"seeded {sandbox.zk_root}, {sandbox.trident_root}, {sandbox.jstorm_root} and groups clicks-client, "
        f"payments-tool:"
    )
    for line in shows:
        typer.echo(f"  {line}")
    typer.echo(
        "next: offctl inspect --lag-threshold 5 --zk-root /sandbox/spouts --group clicks-client --group payments-tool"
    )


@app.command("status")
def status_command() -> None:
    """Show the sandbox's servers; exit 3 when it is not (fully) running.

    \b
    Example:
      offctl sandbox status
    """
    from offctl.settings import sandbox as state

    sandbox = state.load()
    if sandbox is None:
        typer.echo("no sandbox: start one with `offctl sandbox up`")
        raise typer.Exit(3)
    _describe(sandbox)
    raise typer.Exit(0 if all(sandbox.running.values()) else 3)


@app.command("env")
def env_command() -> None:
    """Print shell lines that point every OFFCTL_ variable at the running sandbox: a rehearsal shell.

    They set OFFCTL_ZK, OFFCTL_ZK_ROOT, OFFCTL_BOOTSTRAP_SERVERS, OFFCTL_STORM_ROOT, OFFCTL_TRIDENT_ROOT and
    OFFCTL_JSTORM_ROOT to the sandbox's, unset credentials and client settings, and set OFFCTL_SANDBOX=1: while it
    is set, offctl refuses (exit 2) any server that is not the running sandbox's. Exit 3 when no sandbox runs (the
    lines then unset the servers, set OFFCTL_SANDBOX=1 and end with `false`).

    \b
    Example:
      eval "$(offctl sandbox env)" && offctl reset --spout legacy-clicks --to earliest
    """
    from offctl.settings import sandbox as state

    sandbox = state.active()
    if sandbox is None:
        err_console.print(
            "offctl: no sandbox is running: start it with `offctl sandbox up` (the lines printed "
            "make a shell that evaluates them refuse every server)"
        )
        typer.echo(state.no_sandbox_script(), nl=False)
        raise typer.Exit(3)
    typer.echo(state.env_script(sandbox), nl=False)


@app.command("down")
def down_command() -> None:
    """Stop the sandbox's servers by pid and delete its data.

    \b
    Example:
      offctl sandbox down
    """
    from offctl.faces import sandbox as sb  # imported when a sandbox command runs: it starts servers

    with reported_errors():
        sandbox = sb.down()
    typer.echo("sandbox stopped" if sandbox else "no sandbox was running")


class TopologyAction(str, Enum):
    stop = "stop"
    start = "start"


@app.command("topology")
def topology_command(
    action: Annotated[TopologyAction, typer.Argument(help="stop (as `storm kill` would) or start it again.")],
    name: Annotated[str, typer.Argument(metavar="NAME", help="Topology name (or storm id), e.g. orders-etl.")],
) -> None:
    """Stop or start a sandbox topology: its entry under the sandbox's Storm root, which the running-topology
    guard reads. Rehearses a runbook's "stop the topology" step without --force.

    \b
    Example:
      offctl sandbox topology stop orders-etl && offctl reset --spout orders-etl --to earliest
    """
    from offctl.faces import sandbox as sb  # imported when a sandbox command runs: it starts servers
    from offctl.settings import sandbox as state

    with reported_errors():
        sandbox = state.active()
        if sandbox is None:
            err_console.print("offctl: no sandbox is running: start it with `offctl sandbox up`")
            raise typer.Exit(3)
        ids = sb.topology(sandbox, action.value, name)
    typer.echo(f"{'stopped' if action == TopologyAction.stop else 'started'} {name} ({', '.join(ids)})")
