"""Every option of offctl, declared once: its flags, help, kind, default, environment variable, and whether the
config file takes it (spec section 3; docs/contract.md, "Options").

The commands (commands/options.py) make their Typer parameters from this table, and the config file's keys
(offctl.settings.configfile) come from it too: a key is an option's long name without the dashes. Values from
the command line and from the file are parsed by the same function (`parse_value`), so `timeout = "30s"` in a
context means what `--timeout 30s` means. No Typer here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

from offctl.core.plans.guards import QUIET_PERIOD_S
from offctl.core.records.model import duration
from offctl.core.storm.releases import (
    CLIENT_RELEASE_DEFAULT,
    STORM_KAFKA_RELEASE_DEFAULT,
    FirstPoll,
    Guarantee,
    Isolation,
)
from offctl.core.time.expiry import HORIZON_S
from offctl.errors import UsageError
from offctl.inputs import parse_seconds
from offctl.settings.connection import DEFAULT_LISTEN, STORM_ROOT, TIMEOUT_S

# --- the defaults every face reads -----------------------------------------------------------------------------

TIME_LAG_BUDGET_S = 5.0  # --time-lag-budget
DEADLINE_S = 10.0  # storm-kafka-monitor's --deadline: docs/storm-ui-lag.md says why
PEEK_MAX_COUNT = 1000  # peek's --count: messages per partition; peek is for looking, not for copying a log
PLAN_TTL_S = 600.0  # offctl mcp's --plan-ttl
SERVE_INTERVAL_S = 30.0  # offctl serve's --interval
WATCH_INTERVAL_S = 2.0  # offctl watch's --interval
HISTORY_WINDOW = 10  # --window: observations per partition for the history status

# --- the help panels -------------------------------------------------------------------------------------------

CONNECTION = "Connection"
SELECTION = "Selection"
SPOUTS = "Spout settings"
HORIZONS = "Thresholds and horizons"
OUTPUT = "Output"
SAFETY = "Safety"
MONITOR = "Storm UI"
SPARK = "Spark"
FILES = "Files, snapshots and history"
REPAIR = "Repair"

# --- where the config file takes an option ---------------------------------------------------------------------

IN_CONTEXT = "context"  # a context's connection key
IN_PROFILE = "profile"  # a profile's key (a spout setting, its topic, its lag threshold), and a context's default
IN_DEFAULTS = "defaults"  # a context's default only


# --- the kinds of values ----------------------------------------------------------------------------------------


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class PlanOutput(str, Enum):
    table = "table"
    json = "json"


class AuditOutput(str, Enum):
    summary = "summary"
    json = "json"


class FileFormat(str, Enum):
    parquet = "parquet"
    json = "json"
    csv = "csv"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


class Guard(str, Enum):
    running_topology = "running-topology"
    recent_write = "recent-write"
    active_group = "active-group"
    changed_since = "changed-since"


class To(str, Enum):
    earliest = "earliest"
    latest = "latest"
    current = "current"
    offset = "offset"
    time = "time"
    shift = "shift"


def seconds(
    low: float | None = None, high: float | None = None, *, bare: float = 1.0, unit: str = "seconds"
) -> Callable[[Any], float]:
    """The parser of a duration option: `30s`, `90m`, `6h`, `7d`, `1h30m`, or a bare number of `unit` (what the
    option took before durations), checked to lie from `low` to `high` where given. Raises ValueError."""

    def parse(value: Any) -> float:
        s = parse_seconds(value, bare, unit)
        if (low is not None and not s >= low) or (high is not None and not s <= high):
            raise ValueError(
                f"expected a duration from {duration(low or 0)} to {duration(high)}"
                if high is not None
                else f"expected a duration of {duration(low)} or more"
            )
        return s

    parse.duration = True
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
            raise ValueError("expected whole minutes (the broker's setting counts minutes)")
        return int(s // 60)

    parse.duration = True
    return parse


def iso_duration(text: str) -> str:
    """--by-duration in the syntax of every duration option (30m, 6h, 1d12h) as the ISO-8601 duration
    kafka-consumer-groups takes (PT1800S); ISO-8601, and anything else, is left to offctl.core.plans.targets to
    judge."""
    cleaned = text.strip()
    if cleaned[:1].isdigit() and not cleaned.replace(".", "", 1).isdigit():  # has a unit: not ISO, not bare
        try:
            return f"PT{parse_seconds(cleaned):g}S"
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Option:
    """One option: `name` is its parameter name (and, dashed, its config-file key)."""

    name: str
    flags: tuple[str, ...]
    help: str
    kind: type = str  # str, int, float, bool, Path, or an Enum
    default: Any = None
    many: bool = False  # repeatable
    metavar: str | None = None
    env: str | None = None
    panel: str | None = None
    parse: Callable[[Any], Any] | None = None  # a value from its text (durations); raises ValueError
    low: int | None = None
    high: int | None = None
    show_default: bool = True
    required: bool = False
    file: str | None = None  # IN_CONTEXT, IN_PROFILE, IN_DEFAULTS, or None: not a key of the config file
    file_kind: str | None = None  # what the file's value must be, where it differs from the kind's

    @property
    def key(self) -> str:
        return self.name.replace("_", "-")

    def but(self, **changes: Any) -> Option:
        """The option as one command takes it (one value, required, its own words): the flags stay the table's."""
        return replace(self, **changes)


def _options(*options: Option) -> dict[str, Option]:
    return {o.name: o for o in options}


OPTIONS: Mapping[str, Option] = _options(
    # --- connection ---
    Option(
        "zk",
        ("--zk",),
        "ZooKeeper connect string, host:port[,host:port]\\[/chroot].",
        metavar="HOSTS",
        env="OFFCTL_ZK",
        panel=CONNECTION,
        file=IN_CONTEXT,
    ),
    Option(
        "zk_root",
        ("--zk-root",),
        "spoutConfig.zkRoot of old spouts (repeatable; no default, as in storm-kafka).",
        many=True,
        metavar="PATH",
        env="OFFCTL_ZK_ROOT",
        panel=CONNECTION,
        file=IN_CONTEXT,
    ),
    Option(
        "trident_root",
        ("--trident-root",),
        "transactional.zookeeper.root where Trident spouts keep their state, e.g. /transactional (repeatable).",
        many=True,
        metavar="PATH",
        env="OFFCTL_TRIDENT_ROOT",
        panel=CONNECTION,
        file=IN_CONTEXT,
    ),
    Option(
        "bootstrap_servers",
        ("--bootstrap-servers",),
        "Kafka bootstrap servers, host:port[,host:port].",
        metavar="HOSTS",
        env="OFFCTL_BOOTSTRAP_SERVERS",
        panel=CONNECTION,
        file=IN_CONTEXT,
    ),
    Option(
        "storm_root",
        ("--storm-root",),
        "storm.zookeeper.root, where Storm lists running topologies.",
        default=STORM_ROOT,
        metavar="PATH",
        env="OFFCTL_STORM_ROOT",
        panel=CONNECTION,
        file=IN_CONTEXT,
    ),
    Option(
        "timeout",
        ("--timeout",),
        "How long to wait for a server to connect or answer before giving up (exit 3): 30s, 2m, or seconds.",
        kind=float,
        default=TIMEOUT_S,
        metavar="DURATION",
        env="OFFCTL_TIMEOUT",
        panel=CONNECTION,
        parse=seconds(),
        file=IN_CONTEXT,
    ),
    Option(
        "zk_auth",
        ("--zk-auth",),
        "ZooKeeper digest credentials user:password (never printed).",
        metavar="USER:PASSWORD",
        env="OFFCTL_ZK_AUTH",
        panel=CONNECTION,
        show_default=False,
        file=IN_CONTEXT,
    ),
    Option(
        "kafka_config",
        ("--kafka-config",),
        "librdkafka setting KEY=VALUE, e.g. security.protocol=SASL_SSL (repeatable; never printed).",
        many=True,
        metavar="KEY=VALUE",
        env="OFFCTL_KAFKA_CONFIG",
        panel=CONNECTION,
        show_default=False,
        file=IN_CONTEXT,
    ),
    Option(
        "kafka_config_file",
        ("--kafka-config-file",),
        "Properties file of librdkafka settings (KEY=VALUE lines), e.g. SASL/SSL client settings.",
        kind=Path,
        metavar="FILE",
        env="OFFCTL_KAFKA_CONFIG_FILE",
        panel=CONNECTION,
        file=IN_CONTEXT,
    ),
    Option(
        "config",
        ("--config",),
        "The config file of contexts and profiles \\[default: $XDG_CONFIG_HOME/offctl/config.toml].",
        kind=Path,
        metavar="FILE",
        env="OFFCTL_CONFIG",
        panel=CONNECTION,
        show_default=False,
    ),
    Option(
        "context",
        ("--context",),
        "The config file's context to use (sandbox: the running sandbox) \\[default: the file's default-context].",
        metavar="NAME",
        env="OFFCTL_CONTEXT",
        panel=CONNECTION,
        show_default=False,
    ),
    # --- selection ---
    Option(
        "spout",
        ("--spout",),
        "spoutConfig.id of a storm-kafka spout, under --zk-root (the reads: repeatable; "
        "default: every id under each --zk-root; the writes: the one spout written).",
        many=True,
        metavar="ID",
        panel=SELECTION,
    ),
    Option(
        "group",
        ("--group",),
        "Kafka consumer group (group.id) of a storm-kafka-client spout (repeatable).",
        many=True,
        metavar="GROUP",
        panel=SELECTION,
    ),
    Option(
        "trident",
        ("--trident",),
        "Trident spout state (its stream's txStateId) under --trident-root (the "
        "reads: repeatable; default: every one; reset: the one state written, under the one --trident-root).",
        many=True,
        metavar="TXSTATEID",
        panel=SELECTION,
    ),
    Option(
        "topic",
        ("--topic",),
        "Topic the spouts should read: other topics in ZooKeeper records are "
        "TOPIC_MISMATCH; narrows groups to this topic. The writes: only this topic, or these of its partitions "
        "(reset, delete: orders:0-3,7, repeatable).",
        metavar="TOPIC",
        panel=SELECTION,
        file=IN_PROFILE,
    ),
    Option(
        "all_groups",
        ("--all-groups",),
        "Also every consumer group whose commits carry Storm metadata (any release).",
        kind=bool,
        default=False,
        panel=SELECTION,
    ),
    Option(
        "partitions",
        ("--partitions",),
        "Only these partitions: 0,3,5 or 0-7 (peek's default: every partition not caught up).",
        metavar="LIST",
        panel=SELECTION,
    ),
    Option(
        "record_topic",
        ("--record-topic",),
        "Only records that name this topic (TOPIC_MISMATCH shows them).",
        metavar="TOPIC",
        panel=SELECTION,
    ),
    Option(
        "written_by",
        ("--written-by",),
        "Only records written by this topology (name or storm id).",
        metavar="TOPOLOGY",
        panel=SELECTION,
    ),
    Option("all_records", ("--all-records",), "Every record of the spout.", kind=bool, default=False, panel=SELECTION),
    # --- what the user says of the spouts (offctl/core/storm/releases.py) ---
    Option(
        "storm_kafka_release",
        ("--storm-kafka-release",),
        "storm-kafka release of the old spouts (0.9.x to 1.2.x): start-up and out-of-range rules differ.",
        default=STORM_KAFKA_RELEASE_DEFAULT,
        metavar="VERSION",
        env="OFFCTL_STORM_KAFKA_RELEASE",
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "start_offset_time",
        ("--start-offset-time",),
        "spoutConfig.startOffsetTime of the old spouts.",
        default="earliest",
        metavar="earliest|latest|EPOCH_MS",
        panel=SPOUTS,
        file=IN_PROFILE,
        file_kind="str_or_int",
    ),
    Option(
        "ignore_zk_offsets",
        ("--ignore-zk-offsets", "--force-from-start"),
        "The old spouts set ignoreZkOffsets (forceFromStart before 0.10).",
        kind=bool,
        default=False,
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "no_out_of_range_reset",
        ("--no-out-of-range-reset",),
        "The old spouts set useStartOffsetTimeIfOffsetOutOfRange=false.",
        kind=bool,
        default=False,
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "max_offset_behind",
        ("--max-offset-behind",),
        "The old spouts' maxOffsetBehind \\[default: the release's: 100000 in 0.9.0-0.9.2, else Long.MAX_VALUE].",
        kind=int,
        metavar="N",
        low=0,
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "storm_kafka_client_release",
        ("--storm-kafka-client-release",),
        "storm-kafka-client release of the new spouts (1.0.0 to 2.x, 3.0.x, 3.1.x).",
        default=CLIENT_RELEASE_DEFAULT,
        metavar="VERSION",
        env="OFFCTL_STORM_KAFKA_CLIENT_RELEASE",
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "first_poll_offset_strategy",
        ("--first-poll-offset-strategy",),
        "The new spouts' FirstPollOffsetStrategy.",
        kind=FirstPoll,
        default=FirstPoll.UNCOMMITTED_EARLIEST,
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "processing_guarantee",
        ("--processing-guarantee",),
        "The new spouts' ProcessingGuarantee (storm-kafka-client 1.0.6+ and 1.1.2+): what a commit means.",
        kind=Guarantee,
        default=Guarantee.AT_LEAST_ONCE,
        env="OFFCTL_PROCESSING_GUARANTEE",
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "isolation_level",
        ("--isolation-level",),
        "The new spouts' Kafka consumer isolation.level: "
        "read_committed spouts stop at the last stable offset, so their lag counts to it, and one waiting behind "
        "an open transaction is OPEN_TRANSACTION.",
        kind=Isolation,
        default=Isolation.READ_UNCOMMITTED,
        env="OFFCTL_ISOLATION_LEVEL",
        panel=SPOUTS,
        file=IN_PROFILE,
    ),
    Option(
        "offset_commit_period_ms",
        ("--offset-commit-period-ms",),
        "The new spouts' offset.commit.period.ms \\[default: the release's: 15000 in 1.0.0-1.0.2, else 30000].",
        kind=int,
        metavar="MS",
        low=1,
        panel=SPOUTS,
        show_default=False,
        file=IN_PROFILE,
    ),
    Option(
        "static_partitions",
        ("--static-partitions",),
        "Spout ID reads only these partitions (StaticHosts), e.g. orders=0-3,7 (repeatable).",
        many=True,
        metavar="ID=LIST",
        panel=SPOUTS,
        show_default=False,
        file=IN_PROFILE,
    ),
    # --- thresholds and horizons ---
    Option(
        "lag_threshold",
        ("--lag-threshold",),
        "Report HIGH_LAG for lag at or above this.",
        kind=int,
        metavar="N",
        low=0,
        panel=HORIZONS,
        file=IN_PROFILE,
    ),
    Option(
        "time_lag_budget",
        ("--time-lag-budget",),
        "How long to spend reading the message each lagging "
        "partition resumes at, for its time lag: 5s, 1m, or seconds (0: do not read; serve and watch: at most "
        "half the interval).",
        kind=float,
        default=TIME_LAG_BUDGET_S,
        metavar="DURATION",
        env="OFFCTL_TIME_LAG_BUDGET",
        panel=HORIZONS,
        parse=seconds(0, 3600),
        file=IN_DEFAULTS,
    ),
    Option(
        "commit_expiry_horizon",
        ("--commit-expiry-horizon",),
        "Warn (COMMIT_EXPIRY_RISK) when a "
        "storm-kafka-client group's commit may expire within this: 12h, 2d, or seconds (default: a day).",
        kind=float,
        default=HORIZON_S,
        metavar="DURATION",
        env="OFFCTL_COMMIT_EXPIRY_HORIZON",
        panel=HORIZONS,
        parse=seconds(0, 10 * 365 * 86400),
        file=IN_DEFAULTS,
    ),
    Option(
        "offsets_retention_minutes",
        ("--offsets-retention-minutes",),
        "The brokers' offsets.retention.minutes, "
        "where the broker does not report it (its own value wins): 7d, or minutes \\[default: assumed 10080, "
        "Kafka's since 2.0].",
        kind=int,
        metavar="DURATION",
        env="OFFCTL_OFFSETS_RETENTION_MINUTES",
        panel=HORIZONS,
        show_default=False,
        parse=minutes(1, 2**31 - 1),
        file=IN_DEFAULTS,
    ),
    Option(
        "topic_retention",
        ("--topic-retention",),
        "The topic's retention.ms, e.g. orders=7d (6h, 90m, ms; -1: "
        "none), used where the broker does not report it (DescribeConfigs denied or missing); the broker's value "
        "wins (repeatable).",
        many=True,
        metavar="TOPIC=DURATION",
        panel=HORIZONS,
        show_default=False,
        file=IN_DEFAULTS,
    ),
    Option(
        "retention_horizon",
        ("--retention-horizon",),
        "RETENTION_RISK when the message a lagging spout resumes "
        "at may be deleted within this (7d, 6h, 90m, ms) \\[default: within a quarter of the topic's retention, "
        "at most 6h; serve and watch also when the spout falls behind so that it would be deleted within 6h].",
        metavar="DURATION",
        env="OFFCTL_RETENTION_HORIZON",
        panel=HORIZONS,
        show_default=False,
        file=IN_DEFAULTS,
    ),
    Option(
        "window",
        ("--window",),
        "Observations per partition for the history status (serve: cycles; audit: snapshots, newest first).",
        kind=int,
        default=HISTORY_WINDOW,
        metavar="N",
        low=2,
        high=1000,
    ),
    Option(
        "allowed_lag",
        ("--allowed-lag",),
        "Lag that counts as caught up in the history status (Burrow's allowed-lag).",
        kind=int,
        default=0,
        metavar="N",
        low=0,
    ),
    # --- output ---
    Option(
        "fail_on",
        ("--fail-on",),
        "Exit 1 when a finding is at or above this severity.",
        kind=FailOn,
        default=FailOn.error,
        panel=OUTPUT,
        file=IN_DEFAULTS,
    ),
    Option("output", ("--output", "-o"), "Output format.", kind=OutputFormat, default=OutputFormat.table, panel=OUTPUT),
    Option(
        "per_partition",
        ("--per-partition",),
        "Table output: list every partition, not just consumers and findings.",
        kind=bool,
        default=False,
        panel=OUTPUT,
    ),
    Option(
        "top",
        ("--top",),
        "Consumers and topics in the summary.",
        kind=int,
        default=10,
        metavar="N",
        low=1,
        panel=OUTPUT,
    ),
    # --- safety ---
    Option(
        "execute",
        ("--execute",),
        "Apply the plan. Without it nothing is written (dry run).",
        kind=bool,
        default=False,
        panel=SAFETY,
    ),
    Option(
        "yes", ("--yes", "-y"), "With --execute: do not ask for confirmation.", kind=bool, default=False, panel=SAFETY
    ),
    Option(
        "quiet_period",
        ("--quiet-period",),
        "Refuse (recent-write) when a ZooKeeper record was written this "
        "recently: 10s, 5m, or seconds (0: do not check).",
        kind=float,
        default=QUIET_PERIOD_S,
        metavar="DURATION",
        panel=SAFETY,
        parse=seconds(),
        file=IN_DEFAULTS,
    ),
    Option(
        "force",
        ("--force",),
        "Override one guard (repeatable): running-topology, recent-write, active-group, "
        "changed-since (restore: a partition changed since the write the backup undoes).",
        kind=Guard,
        many=True,
        metavar="GUARD",
        panel=SAFETY,
        show_default=False,
    ),
    Option(
        "backup_dir",
        ("--backup-dir",),
        "Where before-images are written \\[default: ~/.local/state/offctl/backups].",
        kind=Path,
        metavar="DIR",
        env="OFFCTL_BACKUP_DIR",
        panel=SAFETY,
        show_default=False,
        file=IN_DEFAULTS,
        file_kind="str",
    ),
    Option(
        "audit_log",
        ("--audit-log",),
        "JSON-lines log of every change \\[default: ~/.local/state/offctl/audit.log].",
        kind=Path,
        metavar="FILE",
        env="OFFCTL_AUDIT_LOG",
        panel=SAFETY,
        show_default=False,
        file=IN_DEFAULTS,
        file_kind="str",
    ),
    Option(
        "hand_made",
        ("--hand-made",),
        "BACKUP was made or edited by hand: restore it without its checksum. Only "
        "records the spout can use, with offsets inside today's log, are written.",
        kind=bool,
        default=False,
        panel=SAFETY,
    ),
    # --- reset's target ---
    Option(
        "to",
        ("--to",),
        "Where to move the offsets (current: the commit as it is; the log end where there is none).",
        kind=To,
    ),
    Option(
        "by_duration",
        ("--by-duration",),
        "To the first offset at or after now minus a duration: 30m, 6h, 1d12h, "
        "or ISO-8601 as kafka-consumer-groups takes it: PT30M, PT6H, P1DT12H.",
        metavar="DURATION",
        parse=iso_duration,
    ),
    Option("offset", ("--offset",), "With --to offset.", kind=int, metavar="N"),
    Option("at", ("--at",), "With --to time: ISO-8601 with a zone, or epoch milliseconds.", metavar="TIME"),
    Option("by", ("--by",), "With --to shift: move each partition by N.", kind=int, metavar="±N"),
    Option(
        "from_file",
        ("--from-file",),
        "Offsets from an offctl plan (reset --output json) or backup, or a kafka-consumer-groups CSV export.",
        kind=Path,
        metavar="FILE",
    ),
    Option(
        "topology_id",
        ("--topology-id",),
        "Kafka groups: write Storm metadata for this storm id, so the storm-kafka-client spout honours the commit.",
        metavar="STORM_ID",
    ),
    Option(
        "no_storm_metadata",
        ("--no-storm-metadata",),
        "Kafka groups: commit partitions that have no Storm "
        "metadata without it (a spout whose first-poll strategy is UNCOMMITTED_* honours any commit); commits that "
        "have it keep it.",
        kind=bool,
        default=False,
    ),
    # --- peek ---
    Option(
        "count",
        ("--count",),
        "How many: peek's messages per partition, from the resume offset on (1 to "
        f"{PEEK_MAX_COUNT}, default 1); watch's refreshes before it stops (default: until Ctrl-C).",
        kind=int,
        metavar="N",
    ),
    Option(
        "budget",
        ("--budget",),
        "Time to read the messages in: 5s, 1m, or seconds \\[default: --timeout].",
        kind=float,
        metavar="DURATION",
        parse=seconds(),
    ),
    Option(
        "save",
        ("--save",),
        "Write each message's exact key, value and headers, with manifest.json, to this new (or empty) folder.",
        kind=Path,
        metavar="DIR",
    ),
    # --- serve and watch ---
    Option(
        "listen",
        ("--listen",),
        "Where to serve /metrics, /healthz and /status.json.",
        default=DEFAULT_LISTEN,
        metavar="HOST:PORT",
        env="OFFCTL_LISTEN",
    ),
    Option(
        "interval",
        ("--interval", "-n"),
        "Time between inspections (serve) or refreshes (watch): 30s, 2s, 5m, or seconds.",
        kind=float,
        metavar="DURATION",
        env="OFFCTL_INTERVAL",
        parse=seconds(1, 86400),
    ),
    Option(
        "no_partition_metrics",
        ("--no-partition-metrics",),
        "Only per-consumer and exporter metrics: bounded series for huge fleets.",
        kind=bool,
        default=False,
    ),
    # --- storm-kafka-monitor ---
    Option(
        "deadline",
        ("--deadline",),
        "Always answer within this: the lag, or the failure line saying what was not "
        "read (Storm UI waits for the monitor with no time limit): 10s, 1m, or seconds.",
        kind=float,
        default=DEADLINE_S,
        metavar="DURATION",
        env="OFFCTL_DEADLINE",
        panel=MONITOR,
        parse=seconds(1, 600),
        file=IN_DEFAULTS,
    ),
    # --- mcp ---
    Option(
        "http",
        ("--http",),
        "Serve streamable HTTP here (default: stdio). Off loopback it needs a bearer token in OFFCTL_MCP_TOKEN.",
        metavar="HOST:PORT",
    ),
    Option(
        "allow_writes",
        ("--allow-writes",),
        "Let the apply tool write a plan a human confirmed (default: reads and plans only).",
        kind=bool,
        default=False,
    ),
    Option(
        "plan_ttl",
        ("--plan-ttl",),
        "How long a plan can be applied after it was made: 10m, 1h, or seconds.",
        kind=float,
        default=PLAN_TTL_S,
        metavar="DURATION",
        parse=seconds(1, 24 * 3600),
    ),
    # --- audit ---
    Option(
        "out",
        ("--out",),
        "Write partitions, findings, consumers, topics, topologies and summary.json here "
        "(local path or hdfs://, s3a://...).",
        metavar="DIR",
        panel=FILES,
    ),
    Option(
        "file_format", ("--format",), "Format of --out files.", kind=FileFormat, default=FileFormat.parquet, panel=FILES
    ),
    Option(
        "save_snapshot",
        ("--save-snapshot",),
        "Save what was read as a new snapshot under DIR; earlier snapshots "
        "there give each partition a history status and a time lag.",
        metavar="DIR",
        panel=FILES,
    ),
    Option(
        "from_snapshots",
        ("--from-snapshots",),
        "Audit the newest snapshot under DIR, with history from the others, reading no server.",
        metavar="DIR",
        panel=FILES,
    ),
    Option(
        "master",
        ("--master",),
        "Spark master \\[default: spark-submit's, else local[*]].",
        metavar="URL",
        env="OFFCTL_SPARK_MASTER",
        panel=SPARK,
    ),
    Option("spark_conf", ("--spark-conf",), "Spark setting (repeatable).", many=True, metavar="KEY=VALUE", panel=SPARK),
    Option(
        "repair",
        ("--repair",),
        "Plan moving these findings' partitions to the log start: out-of-range (both "
        "codes), OFFSET_BELOW_LOG_START or OFFSET_ABOVE_LOG_END (repeatable).",
        many=True,
        metavar="WHAT",
        panel=REPAIR,
    ),
)

# --- the groups the commands share, by name --------------------------------------------------------------------

CONNECTION_OPTIONS = (
    "zk",
    "zk_root",
    "trident_root",
    "bootstrap_servers",
    "storm_root",
    "timeout",
    "zk_auth",
    "kafka_config",
    "kafka_config_file",
    "config",
    "context",
)
SELECTION_OPTIONS = ("spout", "group", "trident", "topic", "all_groups")
SPOUT_OPTIONS = (
    "storm_kafka_release",
    "start_offset_time",
    "ignore_zk_offsets",
    "no_out_of_range_reset",
    "max_offset_behind",
    "storm_kafka_client_release",
    "first_poll_offset_strategy",
    "processing_guarantee",
    "isolation_level",
    "offset_commit_period_ms",
    "static_partitions",
)
HORIZON_OPTIONS = (
    "lag_threshold",
    "time_lag_budget",
    "commit_expiry_horizon",
    "offsets_retention_minutes",
    "topic_retention",
    "retention_horizon",
)
FAIL_ON_OPTIONS = ("fail_on",)
SAFETY_OPTIONS = ("execute", "yes", "quiet_period", "force", "backup_dir", "audit_log")
MONITOR_OPTIONS = ("deadline",)
SHARED = (
    CONNECTION_OPTIONS,
    SELECTION_OPTIONS,
    SPOUT_OPTIONS,
    HORIZON_OPTIONS,
    FAIL_ON_OPTIONS,
    SAFETY_OPTIONS,
    MONITOR_OPTIONS,
)
DEFAULTS: Mapping[str, Any] = {name: OPTIONS[name].default for group in SHARED for name in group}

# --- the config file's keys, from the table ----------------------------------------------------------------------

STR, STRS, BOOL, INT, DURATION = (
    "a string",
    "a list of strings",
    "true or false",
    "a whole number",
    'a duration ("30s", "90m", "6h", "7d") or a number',
)
STR_OR_INT = "a string or a whole number"


def file_kind(o: Option) -> str:
    """What the config file's value of an option must be (offctl.settings.configfile checks it)."""
    if o.file_kind is not None:
        return {"str": STR, "str_or_int": STR_OR_INT}[o.file_kind]
    if o.many:
        return STRS
    if o.kind is bool:
        return BOOL
    if getattr(o.parse, "duration", False):
        return DURATION
    return INT if o.kind is int else STR


def keys(*where: str) -> dict[str, str]:
    """The config file's keys of options the file takes in `where`, each with the kind its value must be."""
    return {o.key: file_kind(o) for o in OPTIONS.values() if o.file in where}


def parse_value(name: str, value: Any, where: str | None = None) -> Any:
    """A value for the option `name`, from the command line's text or the config file's value, parsed the one way
    (a repeatable option: each element); a value the option refuses is a UsageError naming the key and its line."""
    o = OPTIONS[name]
    try:
        if o.many and isinstance(value, (list, tuple)):
            return [_one(o, v) for v in value]
        return _one(o, value)
    except ValueError as exc:
        raise UsageError(f"config {where or ''}: {o.key}: {exc}") from None


def _one(o: Option, value: Any) -> Any:
    """One value of the option, or ValueError with the words the command line says (click's, for its own kinds)."""
    if o.parse is not None:
        return o.parse(value)
    if isinstance(o.kind, type) and issubclass(o.kind, Enum):
        choices = [m.value for m in o.kind]
        if str(value) not in choices:
            raise ValueError(f"{str(value)!r} is not one of {', '.join(repr(c) for c in choices)}.")
        return o.kind(str(value))
    if o.kind is int:
        number = _int(value)
        if (o.low is not None and number < o.low) or (o.high is not None and number > o.high):
            raise ValueError(_range_words(number, o.low, o.high))
        return number
    if o.kind is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{value!r} is not a valid boolean.")
        return value
    if o.kind is Path:
        return Path(str(value))
    return str(value)


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{value!r} is not a valid integer.")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a valid integer.") from None


def _range_words(number: int, low: int | None, high: int | None) -> str:
    if high is None:
        return f"{number} is not in the range x>={low}."
    if low is None:
        return f"{number} is not in the range x<={high}."
    return f"{number} is not in the range {low}<=x<={high}."
