"""Options every command shares, each also read from the environment (spec section 3)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer
from rich.console import Console

from offctl.config import Connection, parse_kafka_config
from offctl.errors import NotConfirmed, OffctlError
from offctl.inputs import (check_bootstrap_servers, check_quiet_period, check_timeout, check_zk_hosts, redact,
                           secret)

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
TridentRoot = Annotated[Optional[list[str]], typer.Option(
    "--trident-root", metavar="PATH", envvar="OFFCTL_TRIDENT_ROOT", rich_help_panel=CONNECTION,
    help="transactional.zookeeper.root where Trident spouts keep their state, e.g. /transactional (repeatable).")]
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


def _source(ctx: typer.Context | None, param: str, value) -> str | None:
    """Where an option's value came from: COMMANDLINE, ENVIRONMENT, DEFAULT; without a ctx, a value given counts
    as the command line's."""
    if ctx is None or param not in ctx.params:
        return "COMMANDLINE" if value else None
    return getattr(ctx.get_parameter_source(param), "name", None)


ROOT_VARIABLES = (("zk_root", "OFFCTL_ZK_ROOT", "--zk-root"), ("trident_root", "OFFCTL_TRIDENT_ROOT", "--trident-root"),
                  ("storm_root", "OFFCTL_STORM_ROOT", "--storm-root"))


def connection(zk: str | None, zk_root: list[str] | None, bootstrap_servers: str | None, storm_root: str,
               timeout: float, zk_auth: str | None, kafka_config: list[str] | None,
               kafka_config_file: Path | None, ctx: typer.Context | None = None,
               trident_root: list[str] | None = None) -> Connection:
    """The connection the flags and environment name; with neither --zk nor --bootstrap-servers, the
    running sandbox (`offctl sandbox up`), said on stderr: its own roots, except those given on the command line
    (roots of the environment belong to the servers of the environment, and are not applied to the sandbox's;
    stderr says which). `ctx` tells a flag from an environment value (Connection.default_roots).
    In a rehearsal shell (OFFCTL_SANDBOX=1, `eval "$(offctl sandbox env)"`), servers that are not the running
    sandbox's are refused (exit 2), whatever set them."""
    values = {"zk_root": zk_root, "trident_root": trident_root, "storm_root": storm_root}
    source = {p: _source(ctx, p, values[p] if p != "storm_root" else storm_root != "/storm")
              for p, _, _ in ROOT_VARIABLES}
    if not (zk or bootstrap_servers):
        from offctl.sandbox import active

        sandbox = active()
        if sandbox is not None:
            zk, bootstrap_servers = sandbox.zk, sandbox.broker
            own = {"zk_root": [sandbox.zk_root], "trident_root": [sandbox.trident_root],
                   "storm_root": sandbox.storm_root}
            kept = {p: values[p] if source[p] == "COMMANDLINE" else own[p] for p, _, _ in ROOT_VARIABLES}
            zk_root, trident_root, storm_root = kept["zk_root"], kept["trident_root"], kept["storm_root"]
            err_console.print(f"offctl: using the sandbox (ZooKeeper {sandbox.zk}, Kafka {sandbox.broker}, "
                              f"zkRoot {', '.join(zk_root or ['-'])}, Trident root {', '.join(trident_root or ['-'])}); "
                              f"see `offctl sandbox status`")
            ignored = [var for p, var, _ in ROOT_VARIABLES if source[p] == "ENVIRONMENT"]
            if ignored:
                err_console.print(f"offctl: {', '.join(ignored)} not applied to the sandbox: the environment names "
                                  f"no servers, so its roots are not the sandbox's; the sandbox's own are used "
                                  f"(`eval \"$(offctl sandbox env)\"` sets every variable to the sandbox's)")
            given = [flag for p, _, flag in ROOT_VARIABLES[:2] if source[p] == "COMMANDLINE"]
            if len(given) == 1:
                other = "Trident root" if given[0] == "--zk-root" else "zkRoot"
                flag = "--trident-root" if given[0] == "--zk-root" else "--zk-root"
                err_console.print(f"offctl: {given[0]} given: the sandbox's {other} "
                                  f"{', '.join(trident_root if given[0] == '--zk-root' else zk_root)} is kept "
                                  f"(give {flag} to replace it)")
            source = {p: ("COMMANDLINE" if source[p] == "COMMANDLINE" else "SANDBOX") for p in source}
    if os.environ.get("OFFCTL_SANDBOX") == "1":
        _rehearsal(zk, bootstrap_servers)
    if zk_auth:
        secret(zk_auth)
        secret(zk_auth.partition(":")[2])
    if zk:
        check_zk_hosts(zk)
    if bootstrap_servers:
        check_bootstrap_servers(bootstrap_servers)
    check_timeout(timeout)
    return Connection(zk=zk or None, zk_roots=tuple(zk_root or ()), bootstrap_servers=bootstrap_servers or None,
                      storm_root=storm_root, timeout=timeout, zk_auth=zk_auth or None,
                      kafka_config=parse_kafka_config(kafka_config or (), kafka_config_file),
                      default_roots=source["zk_root"] != "COMMANDLINE",
                      default_trident_roots=source["trident_root"] != "COMMANDLINE",
                      trident_roots=tuple(trident_root or ()))


def _rehearsal(zk: str | None, bootstrap_servers: str | None) -> None:
    """A rehearsal shell (OFFCTL_SANDBOX=1) reaches the running sandbox and nothing else: a flag or a variable set
    after `eval "$(offctl sandbox env)"` that points elsewhere is refused before anything connects."""
    from offctl.errors import UsageError
    from offctl.sandbox import active, foreign_servers

    sandbox = active()
    foreign = foreign_servers(sandbox, zk, bootstrap_servers)
    if sandbox is None:
        raise UsageError(f"OFFCTL_SANDBOX=1 (a rehearsal shell) but no sandbox is running: refused to use "
                         f"{' and '.join(foreign) or 'any server'}; start it with `offctl sandbox up`, or unset "
                         f"OFFCTL_SANDBOX to leave the rehearsal")
    if foreign:
        raise UsageError(f"OFFCTL_SANDBOX=1 (a rehearsal shell): this command would use {' and '.join(foreign)}, "
                         f"not the running sandbox's ZooKeeper {sandbox.zk} and Kafka {sandbox.broker}; refused, "
                         f"nothing was read or written (unset OFFCTL_SANDBOX to leave the rehearsal)")


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
        err_console.print(f"offctl: {redact(str(exc))}")
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
    changed_since = "changed-since"


Execute = Annotated[bool, typer.Option(
    "--execute", rich_help_panel=SAFETY, help="Apply the plan. Without it nothing is written (dry run).")]
Yes = Annotated[bool, typer.Option(
    "--yes", "-y", rich_help_panel=SAFETY, help="With --execute: do not ask for confirmation.")]
QuietPeriod = Annotated[float, typer.Option(
    "--quiet-period", metavar="SECONDS", rich_help_panel=SAFETY,
    help="Refuse (recent-write) when a ZooKeeper record was written this recently (0: do not check).")]
Force = Annotated[Optional[list[Guard]], typer.Option(
    "--force", metavar="GUARD", rich_help_panel=SAFETY, show_default=False,
    help="Override one guard (repeatable): running-topology, recent-write, active-group, changed-since "
         "(restore: a partition changed since the write the backup undoes).")]
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
    return Safety(execute=execute, force=frozenset(g.value for g in force or ()),
                  quiet_period_s=check_quiet_period(quiet_period),
                  backup_dir=backup_dir or defaults.backup_dir, audit_log=audit_log or defaults.audit_log)


NO_TERMINAL = ("not confirmed: --execute asks before writing, and there is no terminal to ask; add --yes to write "
               "without asking (nothing was written)")


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
        from offctl.render import table_console

        self.shown = self.output == "table"
        return confirm_plans(False, plans, table_console(sys.stdout) if self.shown else err_console, conn=self.conn)


def confirm_plans(yes: bool, plans, console=None, *, conn: Connection | None = None) -> bool:
    """Show the plans (on stderr unless `console` says where) and ask once whether to write them."""
    if yes:
        return True
    from offctl.render import confirm_question, write_plan_table
    from offctl.reset import Outcome
    from offctl.sandbox import is_sandbox

    for plan in plans:
        write_plan_table(Outcome(plan), console or err_console)
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


# --- the selectors of inspect and audit ------------------------------------------------------------------------

Spouts = Annotated[Optional[list[str]], typer.Option(
    "--spout", metavar="ID", help="spoutConfig.id (repeatable; default: every id under each --zk-root).")]
Groups = Annotated[Optional[list[str]], typer.Option(
    "--group", metavar="GROUP", help="Kafka consumer group (group.id) of a storm-kafka-client spout (repeatable).")]
Tridents = Annotated[Optional[list[str]], typer.Option(
    "--trident", metavar="TXSTATEID",
    help="Trident spout state (its stream's txStateId) under --trident-root (repeatable; default: every one).")]
ExpectedTopic = Annotated[Optional[str], typer.Option(
    "--topic", metavar="TOPIC", help="Topic the spouts should read: other topics in ZooKeeper records are "
                                     "TOPIC_MISMATCH; narrows groups to this topic.")]
MaxOffsetBehind = Annotated[Optional[int], typer.Option(
    "--max-offset-behind", metavar="N", min=0, rich_help_panel="Spout settings",
    help="The old spouts' maxOffsetBehind [default: the release's: 100000 in 0.9.0-0.9.2, else Long.MAX_VALUE].")]
LagThreshold = Annotated[Optional[int], typer.Option(
    "--lag-threshold", metavar="N", min=0, help="Report HIGH_LAG for lag at or above this.")]
FailOnOption = Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 when a finding is at or above this severity.")]
TimeLagBudget = Annotated[float, typer.Option(
    "--time-lag-budget", metavar="SECONDS", min=0, max=3600, envvar="OFFCTL_TIME_LAG_BUDGET",
    help="Seconds to spend reading the message each lagging partition resumes at, for its time lag (0: do not "
         "read; serve and watch: at most half the interval).")]
TopicRetentionOption = Annotated[Optional[list[str]], typer.Option(
    "--topic-retention", metavar="TOPIC=DURATION", show_default=False,
    help="The topic's retention.ms, e.g. orders=7d (6h, 90m, ms; -1: none), used where the broker does not report "
         "it (DescribeConfigs denied or missing); the broker's value wins (repeatable).")]
RetentionHorizon = Annotated[Optional[str], typer.Option(
    "--retention-horizon", metavar="DURATION", envvar="OFFCTL_RETENTION_HORIZON", show_default=False,
    help="RETENTION_RISK when the message a lagging spout resumes at may be deleted within this (7d, 6h, 90m, ms) "
         "[default: within a quarter of the topic's retention, at most 6h; serve and watch also when the spout "
         "falls behind so that it would be deleted within 6h].")]


CommitExpiryHorizon = Annotated[float, typer.Option(
    "--commit-expiry-horizon", metavar="SECONDS", min=0, max=10 * 365 * 86400, envvar="OFFCTL_COMMIT_EXPIRY_HORIZON",
    help="Warn (COMMIT_EXPIRY_RISK) when a storm-kafka-client group's commit may expire within this many seconds "
         "(default: a day).")]
OffsetsRetentionMinutes = Annotated[Optional[int], typer.Option(
    "--offsets-retention-minutes", metavar="N", min=1, max=2**31 - 1, envvar="OFFCTL_OFFSETS_RETENTION_MINUTES",
    show_default=False,
    help="The brokers' offsets.retention.minutes, where the broker does not report it (its own value wins) "
         "[default: assumed 10080, Kafka's since 2.0].")]


# --- what the user says of the spouts (offctl/core/behaviour.py): the findings say what such a spout will do ------

SPOUTS = "Spout settings"


class StartOffsetTime(str, Enum):
    earliest = "earliest"
    latest = "latest"


class FirstPollStrategy(str, Enum):
    EARLIEST = "EARLIEST"
    LATEST = "LATEST"
    UNCOMMITTED_EARLIEST = "UNCOMMITTED_EARLIEST"
    UNCOMMITTED_LATEST = "UNCOMMITTED_LATEST"


StormKafkaRelease = Annotated[str, typer.Option(
    "--storm-kafka-release", metavar="VERSION", envvar="OFFCTL_STORM_KAFKA_RELEASE", rich_help_panel=SPOUTS,
    help="storm-kafka release of the old spouts (0.9.x to 1.2.x): start-up and out-of-range rules differ.")]
StartOffset = Annotated[str, typer.Option(
    "--start-offset-time", metavar="earliest|latest|EPOCH_MS", rich_help_panel=SPOUTS,
    help="spoutConfig.startOffsetTime of the old spouts.")]
IgnoreZkOffsets = Annotated[bool, typer.Option(
    "--ignore-zk-offsets", "--force-from-start", rich_help_panel=SPOUTS,
    help="The old spouts set ignoreZkOffsets (forceFromStart before 0.10).")]
NoOutOfRangeReset = Annotated[bool, typer.Option(
    "--no-out-of-range-reset", rich_help_panel=SPOUTS,
    help="The old spouts set useStartOffsetTimeIfOffsetOutOfRange=false.")]
StormKafkaClientRelease = Annotated[str, typer.Option(
    "--storm-kafka-client-release", metavar="VERSION", envvar="OFFCTL_STORM_KAFKA_CLIENT_RELEASE",
    rich_help_panel=SPOUTS, help="storm-kafka-client release of the new spouts (1.0.0 to 2.x, 3.0.x, 3.1.x).")]
FirstPollOption = Annotated[FirstPollStrategy, typer.Option(
    "--first-poll-offset-strategy", rich_help_panel=SPOUTS,
    help="The new spouts' FirstPollOffsetStrategy.")]
class ProcessingGuarantee(str, Enum):
    AT_LEAST_ONCE = "AT_LEAST_ONCE"
    AT_MOST_ONCE = "AT_MOST_ONCE"
    NO_GUARANTEE = "NO_GUARANTEE"


GuaranteeOption = Annotated[ProcessingGuarantee, typer.Option(
    "--processing-guarantee", envvar="OFFCTL_PROCESSING_GUARANTEE", rich_help_panel=SPOUTS,
    help="The new spouts' ProcessingGuarantee (storm-kafka-client 1.0.6+ and 1.1.2+): what a commit means.")]
CommitPeriod = Annotated[Optional[int], typer.Option(
    "--offset-commit-period-ms", metavar="MS", min=1, rich_help_panel=SPOUTS, show_default=False,
    help="The new spouts' offset.commit.period.ms [default: the release's: 15000 in 1.0.0-1.0.2, else 30000].")]
StaticPartitions = Annotated[Optional[list[str]], typer.Option(
    "--static-partitions", metavar="ID=LIST", rich_help_panel=SPOUTS, show_default=False,
    help="Spout ID reads only these partitions (StaticHosts), e.g. orders=0-3,7 (repeatable).")]
AllGroups = Annotated[bool, typer.Option(
    "--all-groups", help="Also every consumer group whose commits carry Storm metadata (any release).")]


def spout_thresholds(topic: str | None, lag_threshold: int | None, max_offset_behind: int | None,
                     storm_kafka_release: str, start_offset_time: str, ignore_zk_offsets: bool,
                     no_out_of_range_reset: bool, client_release: str, first_poll: FirstPollStrategy,
                     static_partitions: list[str] | None,
                     guarantee: ProcessingGuarantee = ProcessingGuarantee.AT_LEAST_ONCE,
                     commit_period_ms: int | None = None, topic_retention: list[str] | None = None,
                     retention_horizon: str | None = None):
    """The Thresholds (topic, lag threshold, spout profile, static partitions) the flags describe."""
    from offctl.core.behaviour import (EARLIEST_TIME, GUARANTEE_RELEASES, LATEST_TIME, FirstPoll, Guarantee,
                                       SpoutProfile, StormKafka, StormKafkaClient, default_commit_period_ms)
    from offctl.errors import UsageError
    from offctl.core.model import Thresholds
    from offctl.core.retention import parse_span, parse_topic_retention
    from offctl.core.targets import parse_static_partitions

    try:
        line = StormKafka.of_version(storm_kafka_release)
    except ValueError as exc:
        raise UsageError(f"--storm-kafka-release: {exc}") from None
    try:
        client = StormKafkaClient.of_version(client_release)
        major = StormKafkaClient.major_of(client_release)
    except ValueError as exc:
        raise UsageError(f"--storm-kafka-client-release: {exc}") from None
    if client is StormKafkaClient.LEGACY and guarantee is not ProcessingGuarantee.AT_LEAST_ONCE:
        raise UsageError(f"--processing-guarantee {guarantee.value}: storm-kafka-client {client_release} has no "
                         f"ProcessingGuarantee (it came in {GUARANTEE_RELEASES}; earlier releases commit acked "
                         f"offsets only, as AT_LEAST_ONCE)")
    times = {"earliest": EARLIEST_TIME, "latest": LATEST_TIME}
    if start_offset_time in times:
        at = times[start_offset_time]
    elif start_offset_time.isdigit() and len(start_offset_time) <= 15:
        at = int(start_offset_time)
    else:
        raise UsageError(f"--start-offset-time {start_offset_time!r}: expected earliest, latest or epoch "
                         f"milliseconds")
    static = parse_static_partitions(static_partitions)
    profile = SpoutProfile(storm_kafka=line, start_offset_time=at, ignore_zk_offsets=ignore_zk_offsets,
                           max_offset_behind=max_offset_behind, out_of_range_reset=not no_out_of_range_reset,
                           client=client, first_poll=FirstPoll(first_poll.value), client_major=major,
                           guarantee=Guarantee(guarantee.value),
                           commit_period_ms=commit_period_ms or default_commit_period_ms(client_release),
                           client_release=client_release.strip())
    return Thresholds(expected_topic=topic, lag_threshold=lag_threshold, spout=profile, static_partitions=static,
                      retention_horizon_ms=(parse_span(retention_horizon, "--retention-horizon")
                                            if retention_horizon is not None else None),
                      topic_retention_ms=parse_topic_retention(topic_retention))


def client_profile(client_release: str, first_poll: FirstPollStrategy):
    """The spout profile a write's Kafka commits are verified against (reset --group, restore, migrate): the
    storm-kafka-client release and first-poll strategy given, every other setting as inspect's defaults."""
    return spout_thresholds(None, None, None, "1.2.4", "earliest", False, False, client_release, first_poll,
                            None).spout


def reading(ctx: typer.Context, spout, group, trident, topic, all_groups, zk, zk_root, trident_root,
            bootstrap_servers, storm_root, timeout, zk_auth, kafka_config, kafka_config_file, thresholds_args):
    """The connection, selection and spout settings of a command that reads like inspect (serve, watch),
    checked before anything connects."""
    from offctl.inspect import Selection, validate

    conn = connection(zk, zk_root, bootstrap_servers, storm_root, timeout, zk_auth, kafka_config,
                      kafka_config_file, ctx, trident_root)
    selection = Selection(tuple(spout or ()), tuple(group or ()), topic, all_groups, tridents=tuple(trident or ()))
    validate(conn, selection)
    return conn, selection, spout_thresholds(topic, *thresholds_args)
