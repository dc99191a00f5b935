"""Options every command shares, each also read from the environment (spec section 3)."""

from __future__ import annotations

from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer
from rich.console import Console

from offctl.config import Connection, parse_kafka_config
from offctl.errors import OffctlError

# Names can contain brackets: no markup. Rich honours NO_COLOR by itself.
err_console = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)

CONNECTION = "Connection"

Zk = Annotated[Optional[str], typer.Option(
    "--zk", metavar="HOSTS", envvar="OFFCTL_ZK", rich_help_panel=CONNECTION,
    help="ZooKeeper connect string, host:port[,host:port][/chroot].")]
ZkRoot = Annotated[Optional[list[str]], typer.Option(
    "--zk-root", metavar="PATH", envvar="OFFCTL_ZK_ROOT", rich_help_panel=CONNECTION,
    help="spoutConfig.zkRoot of old spouts (repeatable; no default, as in storm-kafka).")]
BootstrapServers = Annotated[Optional[str], typer.Option(
    "--bootstrap-servers", metavar="HOSTS", envvar="OFFCTL_BOOTSTRAP_SERVERS", rich_help_panel=CONNECTION,
    help="Kafka bootstrap servers, host:port[,host:port].")]
StormRoot = Annotated[str, typer.Option(
    "--storm-root", metavar="PATH", envvar="OFFCTL_STORM_ROOT", rich_help_panel=CONNECTION,
    help="storm.zookeeper.root, where Storm lists running topologies.")]
Timeout = Annotated[float, typer.Option(
    "--timeout", metavar="SECONDS", envvar="OFFCTL_TIMEOUT", min=0.1, rich_help_panel=CONNECTION,
    help="Seconds to wait for a server to connect or answer before giving up (exit 3).")]
ZkAuth = Annotated[Optional[str], typer.Option(
    "--zk-auth", metavar="USER:PASSWORD", envvar="OFFCTL_ZK_AUTH", rich_help_panel=CONNECTION, show_default=False,
    help="ZooKeeper digest credentials user:password (never printed).")]
KafkaConfig = Annotated[Optional[list[str]], typer.Option(
    "--kafka-config", metavar="KEY=VALUE", envvar="OFFCTL_KAFKA_CONFIG", rich_help_panel=CONNECTION, show_default=False,
    help="librdkafka setting KEY=VALUE, e.g. security.protocol=SASL_SSL (repeatable; never printed).")]
KafkaConfigFile = Annotated[Optional[Path], typer.Option(
    "--kafka-config-file", metavar="FILE", envvar="OFFCTL_KAFKA_CONFIG_FILE", rich_help_panel=CONNECTION,
    help="Properties file of librdkafka settings (KEY=VALUE lines), e.g. SASL/SSL client settings.")]


def connection(zk: str | None, zk_root: list[str] | None, bootstrap_servers: str | None, storm_root: str,
               timeout: float, zk_auth: str | None, kafka_config: list[str] | None,
               kafka_config_file: Path | None) -> Connection:
    """The connection the flags and environment name; with none of --zk, --zk-root and --bootstrap-servers,
    the running sandbox (`offctl sandbox up`), said on stderr."""
    if not (zk or zk_root or bootstrap_servers):
        from offctl.sandbox import active

        sandbox = active()
        if sandbox is not None:
            err_console.print(f"offctl: using the sandbox (ZooKeeper {sandbox.zk}, Kafka {sandbox.broker}, "
                              f"zkRoot {sandbox.zk_root}); see `offctl sandbox status`")
            zk, zk_root, bootstrap_servers = sandbox.zk, [sandbox.zk_root], sandbox.broker
            storm_root = sandbox.storm_root if storm_root == "/storm" else storm_root
    return Connection(zk=zk or None, zk_roots=tuple(zk_root or ()), bootstrap_servers=bootstrap_servers or None,
                      storm_root=storm_root, timeout=timeout, zk_auth=zk_auth or None,
                      kafka_config=parse_kafka_config(kafka_config or (), kafka_config_file))


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn offctl errors into one line on stderr and the documented exit code."""
    try:
        yield
    except OffctlError as exc:
        err_console.print(f"offctl: {exc}")
        raise typer.Exit(exc.exit_code) from None
    except KeyboardInterrupt:
        err_console.print("offctl: interrupted")
        raise typer.Exit(130) from None


# --- options of the commands that write (reset, restore, migrate) -------------------------------------------

SAFETY = "Safety"


class PlanOutput(str, Enum):
    table = "table"
    json = "json"


class Guard(str, Enum):
    running_topology = "running-topology"
    recent_write = "recent-write"
    active_group = "active-group"


Execute = Annotated[bool, typer.Option(
    "--execute", rich_help_panel=SAFETY, help="Apply the plan. Without it nothing is written (dry run).")]
Yes = Annotated[bool, typer.Option(
    "--yes", "-y", rich_help_panel=SAFETY, help="With --execute: do not ask for confirmation.")]
QuietPeriod = Annotated[float, typer.Option(
    "--quiet-period", metavar="SECONDS", min=0, rich_help_panel=SAFETY,
    help="Refuse (recent-write) when a ZooKeeper record was written this recently.")]
Force = Annotated[Optional[list[Guard]], typer.Option(
    "--force", metavar="GUARD", rich_help_panel=SAFETY, show_default=False,
    help="Override one guard (repeatable): running-topology, recent-write, active-group.")]
BackupDir = Annotated[Optional[Path], typer.Option(
    "--backup-dir", metavar="DIR", envvar="OFFCTL_BACKUP_DIR", rich_help_panel=SAFETY, show_default=False,
    help="Where before-images are written [default: ~/.local/state/offctl/backups].")]
AuditLog = Annotated[Optional[Path], typer.Option(
    "--audit-log", metavar="FILE", envvar="OFFCTL_AUDIT_LOG", rich_help_panel=SAFETY, show_default=False,
    help="JSON-lines log of every change [default: ~/.local/state/offctl/audit.log].")]
PlanFormat = Annotated[PlanOutput, typer.Option("--output", "-o", help="Output format.")]


def safety(execute: bool, quiet_period: float, force: list[Guard] | None, backup_dir: Path | None,
           audit_log: Path | None):
    from offctl.reset import Safety

    defaults = Safety()
    return Safety(execute=execute, force=frozenset(g.value for g in force or ()), quiet_period_s=quiet_period,
                  backup_dir=backup_dir or defaults.backup_dir, audit_log=audit_log or defaults.audit_log)


def confirm_plans(yes: bool, plans) -> bool:
    """Show the plans on stderr and ask once whether to write them; no answer (end of input) is no."""
    if yes:
        return True
    from offctl.render import write_plan_table
    from offctl.reset import Outcome

    for plan in plans:
        write_plan_table(Outcome(plan), err_console)
    n = sum(len(p.writes) for p in plans)
    what = f"{plans[0].key}" if len(plans) == 1 else f"{len(plans)} consumers"
    try:
        return typer.confirm(f"Write {n} partition(s) of {what}?", default=False, err=True)
    except typer.Abort:
        err_console.print("")
        return False


# --- the selectors of inspect and audit ------------------------------------------------------------------------

Spouts = Annotated[Optional[list[str]], typer.Option(
    "--spout", metavar="ID", help="spoutConfig.id (repeatable; default: every id under each --zk-root).")]
Groups = Annotated[Optional[list[str]], typer.Option(
    "--group", metavar="GROUP", help="Kafka consumer group (group.id) of a storm-kafka-client spout (repeatable).")]
ExpectedTopic = Annotated[Optional[str], typer.Option(
    "--topic", metavar="TOPIC", help="Topic the spouts should read: other topics in ZooKeeper records are "
                                     "TOPIC_MISMATCH; narrows groups to this topic.")]
MaxOffsetBehind = Annotated[Optional[int], typer.Option(
    "--max-offset-behind", metavar="N", min=0, help="The spouts' maxOffsetBehind: lag above it is reported.")]
LagThreshold = Annotated[Optional[int], typer.Option(
    "--lag-threshold", metavar="N", min=0, help="Report HIGH_LAG for lag at or above this.")]
FailOnOption = Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding is at or above this severity.")]
