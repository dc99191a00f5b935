"""Options the commands share, each declared once here and read by name (spec section 3).

A command lists only its own options; `shared(...)` adds the groups it shares (connection, selection, spout
settings, thresholds and horizons, output, safety) to its signature, each in its help panel, and hands the
command one `Given`: every shared value by name, with where it came from (the command line, an environment
variable, a context of the config file, the sandbox, or the built-in default)."""

from __future__ import annotations

import functools
import inspect as pyinspect
import os
import sys
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Optional, get_args

import typer
import typer.main
from rich.console import Console

from offctl.settings import configfile as settings
from offctl.settings.connection import Connection, parse_kafka_config
from offctl.core.behaviour import CLIENT_RELEASE_DEFAULT, FirstPoll, Guarantee, Isolation
from offctl.core.expiry import HORIZON_S
from offctl.core.model import duration
from offctl.errors import NotConfirmed, OffctlError, UsageError
from offctl.inputs import (check_bootstrap_servers, check_quiet_period, check_timeout, check_zk_hosts, parse_seconds,
                           redact, secret)

# Names can contain brackets: no markup. Rich honours NO_COLOR by itself.
err_console = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)

CONNECTION = "Connection"
SELECTION = "Selection"
SPOUTS = "Spout settings"
HORIZONS = "Thresholds and horizons"
OUTPUT = "Output"
SAFETY = "Safety"
MONITOR = "Storm UI"

TIME_LAG_BUDGET_S = 5.0  # offctl.pipeline.TIME_LAG_BUDGET_S, inspect's default --time-lag-budget (not imported: it
# would load the read path for every command)


# --- durations: one syntax for every duration option (offctl.inputs.parse_seconds) ------------------------------

def seconds(low: float | None = None, high: float | None = None, *, bare: float = 1.0,
            unit: str = "seconds") -> Callable[[Any], float]:
    """The parser of a duration option: `30s`, `90m`, `6h`, `7d`, `1h30m`, or a bare number of `unit` (what the
    option took before durations), checked to lie from `low` to `high` where given."""

    def parse(value: Any) -> float:
        try:
            s = parse_seconds(value, bare, unit)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        if (low is not None and not s >= low) or (high is not None and not s <= high):
            raise typer.BadParameter(f"expected a duration from {duration(low or 0)} to {duration(high)}"
                                     if high is not None else f"expected a duration of {duration(low)} or more")
        return s

    return parse


def minutes(low: int, high: int) -> Callable[[Any], int]:
    """The parser of a duration option counted in whole minutes (--offsets-retention-minutes): a bare number is
    minutes, as the broker's setting is."""
    in_seconds = seconds(low * 60, high * 60, bare=60, unit="minutes")

    def parse(value: Any) -> int:
        if isinstance(value, int):
            return value
        s = in_seconds(value)
        if s % 60:
            raise typer.BadParameter("expected whole minutes (the broker's setting counts minutes)")
        return int(s // 60)

    return parse


# --- connection ------------------------------------------------------------------------------------------------

Zk = Annotated[Optional[str], typer.Option(
    "--zk", metavar="HOSTS", envvar="OFFCTL_ZK", rich_help_panel=CONNECTION,
    help="ZooKeeper connect string, host:port[,host:port]\\[/chroot].")]
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
    "--timeout", metavar="DURATION", envvar="OFFCTL_TIMEOUT", rich_help_panel=CONNECTION, parser=seconds(),
    help="How long to wait for a server to connect or answer before giving up (exit 3): 30s, 2m, or seconds.")]
ZkAuth = Annotated[Optional[str], typer.Option(
    "--zk-auth", metavar="USER:PASSWORD", envvar="OFFCTL_ZK_AUTH", rich_help_panel=CONNECTION, show_default=False,
    help="ZooKeeper digest credentials user:password (never printed).")]
KafkaConfig = Annotated[Optional[list[str]], typer.Option(
    "--kafka-config", metavar="KEY=VALUE", envvar="OFFCTL_KAFKA_CONFIG", rich_help_panel=CONNECTION, show_default=False,
    help="librdkafka setting KEY=VALUE, e.g. security.protocol=SASL_SSL (repeatable; never printed).")]
KafkaConfigFile = Annotated[Optional[Path], typer.Option(
    "--kafka-config-file", metavar="FILE", envvar="OFFCTL_KAFKA_CONFIG_FILE", rich_help_panel=CONNECTION,
    help="Properties file of librdkafka settings (KEY=VALUE lines), e.g. SASL/SSL client settings.")]

ConfigFile = Annotated[Optional[Path], typer.Option(
    "--config", metavar="FILE", envvar="OFFCTL_CONFIG", rich_help_panel=CONNECTION, show_default=False,
    help="The config file of contexts and profiles \\[default: $XDG_CONFIG_HOME/offctl/config.toml].")]
ContextName = Annotated[Optional[str], typer.Option(
    "--context", metavar="NAME", envvar="OFFCTL_CONTEXT", rich_help_panel=CONNECTION, show_default=False,
    help="The config file's context to use (sandbox: the running sandbox) \\[default: the file's default-context].")]

# --- selection -------------------------------------------------------------------------------------------------

Spouts = Annotated[Optional[list[str]], typer.Option(
    "--spout", metavar="ID", rich_help_panel=SELECTION,
    help="spoutConfig.id (repeatable; default: every id under each --zk-root).")]
Groups = Annotated[Optional[list[str]], typer.Option(
    "--group", metavar="GROUP", rich_help_panel=SELECTION,
    help="Kafka consumer group (group.id) of a storm-kafka-client spout (repeatable).")]
Tridents = Annotated[Optional[list[str]], typer.Option(
    "--trident", metavar="TXSTATEID", rich_help_panel=SELECTION,
    help="Trident spout state (its stream's txStateId) under --trident-root (repeatable; default: every one).")]
ExpectedTopic = Annotated[Optional[str], typer.Option(
    "--topic", metavar="TOPIC", rich_help_panel=SELECTION,
    help="Topic the spouts should read: other topics in ZooKeeper records are TOPIC_MISMATCH; narrows groups to "
         "this topic.")]
AllGroups = Annotated[bool, typer.Option(
    "--all-groups", rich_help_panel=SELECTION,
    help="Also every consumer group whose commits carry Storm metadata (any release).")]

# --- what the user says of the spouts (offctl/core/behaviour.py): the findings say what such a spout will do ------

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
MaxOffsetBehind = Annotated[Optional[int], typer.Option(
    "--max-offset-behind", metavar="N", min=0, rich_help_panel=SPOUTS,
    help="The old spouts' maxOffsetBehind \\[default: the release's: 100000 in 0.9.0-0.9.2, else Long.MAX_VALUE].")]
StormKafkaClientRelease = Annotated[str, typer.Option(
    "--storm-kafka-client-release", metavar="VERSION", envvar="OFFCTL_STORM_KAFKA_CLIENT_RELEASE",
    rich_help_panel=SPOUTS, help="storm-kafka-client release of the new spouts (1.0.0 to 2.x, 3.0.x, 3.1.x).")]
FirstPollOption = Annotated[FirstPoll, typer.Option(
    "--first-poll-offset-strategy", rich_help_panel=SPOUTS,
    help="The new spouts' FirstPollOffsetStrategy.")]
GuaranteeOption = Annotated[Guarantee, typer.Option(
    "--processing-guarantee", envvar="OFFCTL_PROCESSING_GUARANTEE", rich_help_panel=SPOUTS,
    help="The new spouts' ProcessingGuarantee (storm-kafka-client 1.0.6+ and 1.1.2+): what a commit means.")]
IsolationOption = Annotated[Isolation, typer.Option(
    "--isolation-level", envvar="OFFCTL_ISOLATION_LEVEL", rich_help_panel=SPOUTS,
    help="The new spouts' Kafka consumer isolation.level: read_committed spouts stop at the last stable offset, "
         "so their lag counts to it, and one waiting behind an open transaction is OPEN_TRANSACTION.")]
CommitPeriod = Annotated[Optional[int], typer.Option(
    "--offset-commit-period-ms", metavar="MS", min=1, rich_help_panel=SPOUTS, show_default=False,
    help="The new spouts' offset.commit.period.ms \\[default: the release's: 15000 in 1.0.0-1.0.2, else 30000].")]
StaticPartitions = Annotated[Optional[list[str]], typer.Option(
    "--static-partitions", metavar="ID=LIST", rich_help_panel=SPOUTS, show_default=False,
    help="Spout ID reads only these partitions (StaticHosts), e.g. orders=0-3,7 (repeatable).")]

# --- thresholds and horizons -----------------------------------------------------------------------------------

LagThreshold = Annotated[Optional[int], typer.Option(
    "--lag-threshold", metavar="N", min=0, rich_help_panel=HORIZONS, help="Report HIGH_LAG for lag at or above this.")]
TimeLagBudget = Annotated[float, typer.Option(
    "--time-lag-budget", metavar="DURATION", envvar="OFFCTL_TIME_LAG_BUDGET", rich_help_panel=HORIZONS,
    parser=seconds(0, 3600),
    help="How long to spend reading the message each lagging partition resumes at, for its time lag: 5s, 1m, or "
         "seconds (0: do not read; serve and watch: at most half the interval).")]
TopicRetentionOption = Annotated[Optional[list[str]], typer.Option(
    "--topic-retention", metavar="TOPIC=DURATION", rich_help_panel=HORIZONS, show_default=False,
    help="The topic's retention.ms, e.g. orders=7d (6h, 90m, ms; -1: none), used where the broker does not report "
         "it (DescribeConfigs denied or missing); the broker's value wins (repeatable).")]
RetentionHorizon = Annotated[Optional[str], typer.Option(
    "--retention-horizon", metavar="DURATION", envvar="OFFCTL_RETENTION_HORIZON", rich_help_panel=HORIZONS,
    show_default=False,
    help="RETENTION_RISK when the message a lagging spout resumes at may be deleted within this (7d, 6h, 90m, ms) "
         "\\[default: within a quarter of the topic's retention, at most 6h; serve and watch also when the spout "
         "falls behind so that it would be deleted within 6h].")]
CommitExpiryHorizon = Annotated[float, typer.Option(
    "--commit-expiry-horizon", metavar="DURATION", envvar="OFFCTL_COMMIT_EXPIRY_HORIZON", rich_help_panel=HORIZONS,
    parser=seconds(0, 10 * 365 * 86400),
    help="Warn (COMMIT_EXPIRY_RISK) when a storm-kafka-client group's commit may expire within this: 12h, 2d, or "
         "seconds (default: a day).")]
OffsetsRetentionMinutes = Annotated[Optional[int], typer.Option(
    "--offsets-retention-minutes", metavar="DURATION", envvar="OFFCTL_OFFSETS_RETENTION_MINUTES",
    rich_help_panel=HORIZONS, show_default=False, parser=minutes(1, 2**31 - 1),
    help="The brokers' offsets.retention.minutes, where the broker does not report it (its own value wins): 7d, "
         "or minutes \\[default: assumed 10080, Kafka's since 2.0].")]


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


FailOnOption = Annotated[FailOn, typer.Option(
    "--fail-on", rich_help_panel=OUTPUT, help="Exit 1 when a finding is at or above this severity.")]

# --- safety (reset, restore, migrate, delete, audit --repair) ----------------------------------------------------


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
    "--quiet-period", metavar="DURATION", rich_help_panel=SAFETY, parser=seconds(),
    help="Refuse (recent-write) when a ZooKeeper record was written this recently: 10s, 5m, or seconds (0: do not "
         "check).")]
Force = Annotated[Optional[list[Guard]], typer.Option(
    "--force", metavar="GUARD", rich_help_panel=SAFETY, show_default=False,
    help="Override one guard (repeatable): running-topology, recent-write, active-group, changed-since "
         "(restore: a partition changed since the write the backup undoes).")]
BackupDir = Annotated[Optional[Path], typer.Option(
    "--backup-dir", metavar="DIR", envvar="OFFCTL_BACKUP_DIR", rich_help_panel=SAFETY, show_default=False,
    help="Where before-images are written \\[default: ~/.local/state/offctl/backups].")]
AuditLog = Annotated[Optional[Path], typer.Option(
    "--audit-log", metavar="FILE", envvar="OFFCTL_AUDIT_LOG", rich_help_panel=SAFETY, show_default=False,
    help="JSON-lines log of every change \\[default: ~/.local/state/offctl/audit.log].")]


# --- storm-kafka-monitor (Storm UI's lag view) ---------------------------------------------------------------

Deadline = Annotated[float, typer.Option(
    "--deadline", metavar="DURATION", envvar="OFFCTL_DEADLINE", rich_help_panel=MONITOR, parser=seconds(1, 600),
    help="Always answer within this: the lag, or the failure line saying what was not read (Storm UI waits for the "
         "monitor with no time limit): 10s, 1m, or seconds.")]


class PlanOutput(str, Enum):
    table = "table"
    json = "json"


PlanFormat = Annotated[PlanOutput, typer.Option("--output", "-o", rich_help_panel=OUTPUT, help="Output format.")]


# --- the groups, and the decorator that adds them to a command -------------------------------------------------

@dataclass(frozen=True)
class Shared:
    """One shared option: its parameter name, its declaration above, its built-in default."""

    name: str
    kind: Any
    default: Any = None


CONNECTION_OPTIONS = (
    Shared("zk", Zk), Shared("zk_root", ZkRoot), Shared("trident_root", TridentRoot),
    Shared("bootstrap_servers", BootstrapServers), Shared("storm_root", StormRoot, "/storm"),
    Shared("timeout", Timeout, 10.0), Shared("zk_auth", ZkAuth), Shared("kafka_config", KafkaConfig),
    Shared("kafka_config_file", KafkaConfigFile), Shared("config", ConfigFile), Shared("context", ContextName))
SELECTION_OPTIONS = (Shared("spout", Spouts), Shared("group", Groups), Shared("trident", Tridents),
                     Shared("topic", ExpectedTopic), Shared("all_groups", AllGroups, False))
SPOUT_OPTIONS = (
    Shared("storm_kafka_release", StormKafkaRelease, "1.2.4"), Shared("start_offset_time", StartOffset, "earliest"),
    Shared("ignore_zk_offsets", IgnoreZkOffsets, False), Shared("no_out_of_range_reset", NoOutOfRangeReset, False),
    Shared("max_offset_behind", MaxOffsetBehind),
    Shared("storm_kafka_client_release", StormKafkaClientRelease, CLIENT_RELEASE_DEFAULT),
    Shared("first_poll_offset_strategy", FirstPollOption, FirstPoll.UNCOMMITTED_EARLIEST),
    Shared("processing_guarantee", GuaranteeOption, Guarantee.AT_LEAST_ONCE),
    Shared("isolation_level", IsolationOption, Isolation.READ_UNCOMMITTED),
    Shared("offset_commit_period_ms", CommitPeriod), Shared("static_partitions", StaticPartitions))
HORIZON_OPTIONS = (
    Shared("lag_threshold", LagThreshold), Shared("time_lag_budget", TimeLagBudget, TIME_LAG_BUDGET_S),
    Shared("commit_expiry_horizon", CommitExpiryHorizon, HORIZON_S),
    Shared("offsets_retention_minutes", OffsetsRetentionMinutes),
    Shared("topic_retention", TopicRetentionOption), Shared("retention_horizon", RetentionHorizon))
FAIL_ON_OPTIONS = (Shared("fail_on", FailOnOption, FailOn.error),)
SAFETY_OPTIONS = (
    Shared("execute", Execute, False), Shared("yes", Yes, False), Shared("quiet_period", QuietPeriod, 10.0),
    Shared("force", Force), Shared("backup_dir", BackupDir), Shared("audit_log", AuditLog))
MONITOR_OPTIONS = (Shared("deadline", Deadline, 10.0),)
GROUPS = (CONNECTION_OPTIONS, SELECTION_OPTIONS, SPOUT_OPTIONS, HORIZON_OPTIONS, FAIL_ON_OPTIONS, SAFETY_OPTIONS,
          MONITOR_OPTIONS)
EVERY_OPTION = {o.name: o for group in GROUPS for o in group}
DEFAULTS = {name: o.default for name, o in EVERY_OPTION.items()}


def pick(group: tuple[Shared, ...], *names: str) -> tuple[Shared, ...]:
    """The options of `group` named (a command that shares only part of a group)."""
    return tuple(o for o in group if o.name in names)


def without(group: tuple[Shared, ...], *names: str) -> tuple[Shared, ...]:
    return tuple(o for o in group if o.name not in names)


FLAG, DEFAULT = "flag", "default"


class Given:
    """The shared options of one run, read by name (`given.zk`), and where each value came from: `flag`,
    `env VARIABLE`, `context NAME in FILE`, `sandbox`, or `default`."""

    def __init__(self, values: Mapping[str, Any], origins: Mapping[str, str], config: settings.Config | None = None,
                 context: settings.Context | None = None) -> None:
        self.values, self.origins = dict(values), dict(origins)
        self.config, self.context = config or settings.Config(), context

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def origin(self, name: str) -> str:
        return self.origins.get(name, DEFAULT)

    def flag(self, name: str) -> bool:
        return self.origin(name) == FLAG

    @classmethod
    def of(cls, ctx: typer.Context, values: Mapping[str, Any]) -> Given:
        """The values click parsed, with their sources: a flag, an environment variable, or the default."""
        params = {p.name: p for p in ctx.command.params}
        origins = {}
        for name in values:
            source = getattr(ctx.get_parameter_source(name), "name", None)
            origins[name] = (FLAG if source == "COMMANDLINE" else f"env {params[name].envvar}"
                             if source == "ENVIRONMENT" else DEFAULT)
        given = cls(values, origins)
        if "context" in values:
            given._from_config()
        return given

    def _from_config(self) -> None:
        """Below the flags and the environment, the chosen context's settings (offctl/settings/configfile.py)."""
        path, named = settings.config_path(self.values.get("config"), os.environ)
        self.config = settings.load(path, named)
        self.context = settings.choose(self.config, self.values.get("context"), os.environ)
        if self.context is None:
            return
        if not self.values.get("context"):
            self.values["context"] = self.context.name
            self.origins["context"] = f"default-context in {self.config.path}"
        for o in SPOUT_OPTIONS + pick(HORIZON_OPTIONS, "lag_threshold"):  # what profiles build on, in every command
            self.values.setdefault(o.name, o.default)
        self.apply_context()

    def apply_context(self) -> None:
        """The context's settings for every value still at its built-in default (flags and environment win)."""
        for name in self.values:
            key = name.replace("_", "-")
            if self.origins.setdefault(name, DEFAULT) == DEFAULT and key in self.context.settings:
                self.values[name] = from_file(name, self.context.settings[key], self.context.lines.get(key))
                self.origins[name] = self.context.origin


def _base_type(kind: Any) -> Any:
    """The Python type an option's values have (list[Guard] -> Guard, Optional[Path] -> Path)."""
    t = get_args(kind)[0]
    while get_args(t):
        t = next(a for a in get_args(t) if a is not type(None))
    return t


@functools.cache
def _click_params() -> dict[str, Any]:
    """Every shared option as click parses it: a value from the config file is parsed the same way."""
    probe = typer.Typer()

    @probe.command()
    @shared(*GROUPS)
    def every(given: Given) -> None:
        """Every shared option."""

    return {p.name: p for p in typer.main.get_command(probe).params}


def from_file(name: str, value: Any, where: str | None) -> Any:
    """A value of the config file for the option `name`, parsed as the same value on the command line would be;
    a value the option refuses is a usage error naming the key and its line."""
    param, key = _click_params()[name], name.replace("_", "-")
    try:
        parsed = param.process_value(_probe_context(), value)
    except typer.BadParameter as exc:
        raise UsageError(f"config {where or ''}: {key}: {exc.message}") from None
    base = _base_type(EVERY_OPTION[name].kind)
    convert = base if isinstance(base, type) and issubclass(base, (Enum, Path)) else (lambda v: v)
    return [convert(v) for v in parsed] if isinstance(parsed, (list, tuple)) else convert(parsed)


def shared(*groups: tuple[Shared, ...], errors: Callable[[], Any] | None = None) -> Callable:
    """Add these groups of shared options to a command's signature (after its own), and call the command with
    `given=` the Given of them instead: a command signature lists only what is its own. `errors`: how an error of
    the settings (the config file, a context) is reported, reported_errors by default."""
    options = [o for group in groups for o in group]

    def wrap(command: Callable) -> Callable:
        signature = pyinspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "given"]
        takes_ctx = "ctx" in signature.parameters
        if not takes_ctx:  # the Given needs the click context (where each value came from)
            own.insert(0, pyinspect.Parameter("ctx", pyinspect.Parameter.POSITIONAL_OR_KEYWORD,
                                              annotation=typer.Context))
        added = [pyinspect.Parameter(o.name, pyinspect.Parameter.KEYWORD_ONLY, annotation=o.kind, default=o.default)
                 for o in options]

        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            values = {o.name: kwargs.pop(o.name) for o in options}
            ctx = kwargs["ctx"] if takes_ctx else kwargs.pop("ctx")
            with (errors or reported_errors)():
                given = Given.of(ctx, values)
            return command(*args, given=given, **kwargs)

        run.__signature__ = signature.replace(parameters=own + added)
        run.__annotations__ = {p.name: p.annotation for p in own + added}
        return run

    return wrap


def _root_origins(given: Given) -> dict[str, str]:
    return {p: given.origin(p) for p, _, _ in ROOT_VARIABLES}


ROOT_VARIABLES = (("zk_root", "OFFCTL_ZK_ROOT", "--zk-root"), ("trident_root", "OFFCTL_TRIDENT_ROOT", "--trident-root"),
                  ("storm_root", "OFFCTL_STORM_ROOT", "--storm-root"))


def connection(given: Given) -> Connection:
    """The connection the flags and environment name; with neither --zk nor --bootstrap-servers, the
    running sandbox (`offctl sandbox up`), said on stderr: its own roots, except those given on the command line
    (roots of the environment belong to the servers of the environment, and are not applied to the sandbox's;
    stderr says which). The origins tell a flag from an environment value (Connection.default_roots).
    In a rehearsal shell (OFFCTL_SANDBOX=1, `eval "$(offctl sandbox env)"`), servers that are not the running
    sandbox's are refused (exit 2), whatever set them."""
    zk, bootstrap_servers = given.zk, given.bootstrap_servers
    values = {"zk_root": given.zk_root, "trident_root": given.get("trident_root"), "storm_root": given.storm_root}
    source = _root_origins(given)
    zk_root, trident_root, storm_root = values["zk_root"], values["trident_root"], values["storm_root"]
    if not (zk or bootstrap_servers):
        sandbox = settings.sandbox_context()  # the built-in context, taken when nothing names a server
        if sandbox is not None:
            zk, bootstrap_servers = sandbox.settings["zk"], sandbox.settings["bootstrap-servers"]
            own = {p: sandbox.settings[p.replace("_", "-")] for p, _, _ in ROOT_VARIABLES}
            kept = {p: values[p] if source[p] == FLAG else own[p] for p, _, _ in ROOT_VARIABLES}
            zk_root, trident_root, storm_root = kept["zk_root"], kept["trident_root"], kept["storm_root"]
            err_console.print(f"offctl: using the sandbox (ZooKeeper {zk}, Kafka {bootstrap_servers}, "
                              f"zkRoot {', '.join(zk_root or ['-'])}, Trident root {', '.join(trident_root or ['-'])}); "
                              f"see `offctl sandbox status`")
            ignored = [var for p, var, _ in ROOT_VARIABLES if source[p].startswith("env ")]
            if ignored:
                err_console.print(f"offctl: {', '.join(ignored)} not applied to the sandbox: the environment names "
                                  f"no servers, so its roots are not the sandbox's; the sandbox's own are used "
                                  f"(`eval \"$(offctl sandbox env)\"` sets every variable to the sandbox's)")
            given_roots = [flag for p, _, flag in ROOT_VARIABLES[:2] if source[p] == FLAG]
            if len(given_roots) == 1:
                other = "Trident root" if given_roots[0] == "--zk-root" else "zkRoot"
                flag = "--trident-root" if given_roots[0] == "--zk-root" else "--zk-root"
                err_console.print(f"offctl: {given_roots[0]} given: the sandbox's {other} "
                                  f"{', '.join(trident_root if given_roots[0] == '--zk-root' else zk_root)} is kept "
                                  f"(give {flag} to replace it)")
            source = {p: (FLAG if source[p] == FLAG else sandbox.origin) for p in source}
            given.origins.update({"zk": sandbox.origin, "bootstrap_servers": sandbox.origin,
                                  **{p: o for p, o in source.items() if p in given.values}})
            given.values.update({"zk": zk, "bootstrap_servers": bootstrap_servers, "zk_root": zk_root,
                                 "storm_root": storm_root, **({"trident_root": trident_root}
                                                              if "trident_root" in given.values else {})})
    if os.environ.get("OFFCTL_SANDBOX") == "1":
        _rehearsal(zk, bootstrap_servers)
    zk_auth = given.zk_auth
    if zk_auth:
        secret(zk_auth)
        secret(zk_auth.partition(":")[2])
    if zk:
        check_zk_hosts(zk)
    if bootstrap_servers:
        check_bootstrap_servers(bootstrap_servers)
    check_timeout(given.timeout)
    return Connection(zk=zk or None, zk_roots=tuple(zk_root or ()), bootstrap_servers=bootstrap_servers or None,
                      storm_root=storm_root, timeout=given.timeout, zk_auth=zk_auth or None,
                      kafka_config=parse_kafka_config(given.kafka_config or (), given.kafka_config_file),
                      default_roots=source["zk_root"] != FLAG, default_trident_roots=source["trident_root"] != FLAG,
                      trident_roots=tuple(trident_root or ()))


def _rehearsal(zk: str | None, bootstrap_servers: str | None) -> None:
    """A rehearsal shell (OFFCTL_SANDBOX=1) reaches the running sandbox and nothing else: a flag or a variable set
    after `eval "$(offctl sandbox env)"` that points elsewhere is refused before anything connects."""
    from offctl.settings.sandbox import active, foreign_servers

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


# --- what the shared options make ------------------------------------------------------------------------------

def safety(given: Given, execute: bool | None = None):
    """The write's safety settings (reset, restore, migrate, delete; audit --repair has its own --execute)."""
    from offctl.repair.reset import Safety

    defaults = Safety()
    return Safety(execute=given.execute if execute is None else execute,
                  force=frozenset(g.value for g in given.force or ()),
                  quiet_period_s=check_quiet_period(given.quiet_period),
                  backup_dir=given.backup_dir or defaults.backup_dir, audit_log=given.audit_log or defaults.audit_log)


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
        from offctl.render.output import table_console

        self.shown = self.output == "table"
        return confirm_plans(False, plans, table_console(sys.stdout) if self.shown else err_console, conn=self.conn)


def confirm_plans(yes: bool, plans, console=None, *, conn: Connection | None = None) -> bool:
    """Show the plans (on stderr unless `console` says where) and ask once whether to write them."""
    if yes:
        return True
    from offctl.render.output import confirm_question, write_plan_table
    from offctl.repair.reset import Outcome
    from offctl.settings.sandbox import is_sandbox

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


def spout_thresholds(settings: Mapping[str, Any]):
    """The Thresholds (topic, lag threshold, spout profile, static partitions, retention) these settings describe,
    read by option name; a setting not given is its built-in default (DEFAULTS)."""
    from offctl.core.behaviour import (EARLIEST_TIME, GUARANTEE_RELEASES, LATEST_TIME, SpoutProfile, StormKafka,
                                       StormKafkaClient, default_commit_period_ms, guarantees_of)
    from offctl.core.model import Thresholds
    from offctl.core.retention import parse_span, parse_topic_retention
    from offctl.core.targets import parse_static_partitions

    s = {**DEFAULTS, **settings}
    try:
        line = StormKafka.of_version(s["storm_kafka_release"])
    except ValueError as exc:
        raise UsageError(f"--storm-kafka-release: {exc}") from None
    client_release = s["storm_kafka_client_release"]
    try:
        client = StormKafkaClient.of_version(client_release)
        major = StormKafkaClient.major_of(client_release)
    except ValueError as exc:
        raise UsageError(f"--storm-kafka-client-release: {exc}") from None
    guarantee = Guarantee(s["processing_guarantee"])
    if guarantee not in guarantees_of(client):
        raise UsageError(f"--processing-guarantee {guarantee.value}: storm-kafka-client {client_release} has no "
                         f"ProcessingGuarantee (it came in {GUARANTEE_RELEASES}; earlier releases commit acked "
                         f"offsets only, as AT_LEAST_ONCE)")
    times = {"earliest": EARLIEST_TIME, "latest": LATEST_TIME}
    start_offset_time = s["start_offset_time"]
    if start_offset_time in times:
        at = times[start_offset_time]
    elif start_offset_time.isdigit() and len(start_offset_time) <= 15:
        at = int(start_offset_time)
    else:
        raise UsageError(f"--start-offset-time {start_offset_time!r}: expected earliest, latest or epoch "
                         f"milliseconds")
    profile = SpoutProfile(storm_kafka=line, start_offset_time=at, ignore_zk_offsets=s["ignore_zk_offsets"],
                           max_offset_behind=s["max_offset_behind"], out_of_range_reset=not s["no_out_of_range_reset"],
                           client=client, first_poll=FirstPoll(s["first_poll_offset_strategy"]), client_major=major,
                           guarantee=guarantee,
                           commit_period_ms=s["offset_commit_period_ms"] or default_commit_period_ms(client_release),
                           client_release=client_release.strip(), isolation=Isolation(s["isolation_level"]))
    horizon = s["retention_horizon"]
    return Thresholds(expected_topic=s["topic"], lag_threshold=s["lag_threshold"], spout=profile,
                      static_partitions=parse_static_partitions(s["static_partitions"]),
                      retention_horizon_ms=parse_span(horizon, "--retention-horizon") if horizon is not None else None,
                      topic_retention_ms=parse_topic_retention(s["topic_retention"]))


def thresholds(given: Given):
    """The run's Thresholds, from the shared options by name."""
    return spout_thresholds(given.values)


def profiles(given: Given):
    """The run's Profiles: the defaults (thresholds(given)) and one Profile a `[[profiles]]` table of the config
    file, the context's first and then the top-level ones. Each is complete: built-in default < context < the
    profile's table < environment < flag (a flag overrides every profile)."""
    from offctl.core.profiles import Profile, Profiles

    out = []
    for table in settings.profiles_of(given.config, given.context):
        values = dict(given.values)
        for key, value in table.settings.items():
            name = key.replace("-", "_")
            origin = given.origin(name)
            if origin != FLAG and not origin.startswith("env "):
                values[name] = from_file(name, value, table.lines.get(key))
        out.append(Profile(table.name, table.match, spout_thresholds(values)))
    return Profiles(default=thresholds(given), profiles=tuple(out))


def judged_by(given: Given):
    """What the library judges the run's consumers by: the run's Profiles (each consumer by its own)."""
    return profiles(given)


def written_profile(given: Given, consumers: Iterable[str]):
    """The spout profile a write is planned and verified with (reset, restore, migrate): the profile of the
    consumers it writes (offctl.core.profiles' rule; a flag overrides every profile), the defaults for none named.
    Consumers of different profiles in one write are refused: each write has one spout's settings."""
    from offctl.core.model import ConsumerKey

    run = profiles(given)
    found: dict[str | None, list[str]] = {}
    chosen = run.default
    for consumer in consumers:
        name, chosen = run.resolve(ConsumerKey("", consumer))
        found.setdefault(name, []).append(consumer)
    if len(found) > 1:
        said = "; ".join(f"{', '.join(c)}: {'profile ' + n if n else 'the defaults'}" for n, c in found.items())
        raise UsageError(f"the consumers of this write are judged by different profiles ({said}): write each "
                         f"profile's consumers in a run of their own")
    return chosen.spout


def _probe_context() -> typer.Context:
    """A click context to parse file values in (the parsing does not depend on the command)."""
    import typer.core

    return typer.Context(typer.core.TyperCommand("offctl"))


def client_profile(client_release: str, first_poll: FirstPoll | str):
    """The spout profile a write's Kafka commits are verified against (reset --group, restore, migrate): the
    storm-kafka-client release and first-poll strategy given, every other setting as inspect's defaults."""
    return spout_thresholds({"storm_kafka_client_release": client_release,
                             "first_poll_offset_strategy": first_poll}).spout


def selection(given: Given):
    """What to read, from the selection options by name."""
    from offctl.pipeline import Selection

    return Selection(tuple(given.spout or ()), tuple(given.group or ()), given.topic, given.get("all_groups", False),
                     tridents=tuple(given.trident or ()))


def expiry_options(given: Given):
    from offctl.pipeline import ExpiryOptions

    return ExpiryOptions(given.commit_expiry_horizon, given.offsets_retention_minutes)


def estimates(given: Given):
    """What the reads after the analysis are told (inspect.Estimates): the time-lag budget and the expiry options."""
    from offctl.pipeline import Estimates

    return Estimates(given.time_lag_budget, expiry_options(given))


def reading(given: Given):
    """The connection, selection and spout settings of a command that reads like inspect (serve, watch),
    checked before anything connects."""
    from offctl.pipeline import validate

    conn, chosen = connection(given), selection(given)
    validate(conn, chosen)
    return conn, chosen, judged_by(given)
