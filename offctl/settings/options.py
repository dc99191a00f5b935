"""Every option of offctl, declared once: its flags, help, kind, default, environment variable, and whether the
config file takes it (spec section 3; docs/contract.md, "Options").

The commands (commands/options.py) make their Typer parameters from this table, and the config file's keys
(offctl.settings.configfile) come from it too: a key is an option's long name without the dashes. Values from
the command line and from the file are parsed by the same function (`parse_value`), so `timeout = "30s"` in a
context means what `--timeout 30s` means. No Typer here.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from offctl.core.storm.releases import (
    CLIENT_RELEASE_DEFAULT,
    STORM_KAFKA_RELEASE_DEFAULT,
    FirstPoll,
    Guarantee,
    Isolation,
)
from offctl.core.time.expiry import HORIZON_S
from offctl.errors import UsageError
from offctl.settings.command_options import COMMAND_ROWS
from offctl.settings.connection import STORM_ROOT, TIMEOUT_S
from offctl.settings.kinds import (
    CONNECTION,
    HISTORY_WINDOW,
    HORIZONS,
    IN_CONTEXT,
    IN_DEFAULTS,
    IN_PROFILE,
    SELECTION,
    SPOUTS,
    TIME_LAG_BUDGET_S,
    Option,
    minutes,
    seconds,
)


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
        "jstorm_root",
        ("--jstorm-root",),
        "storm.zookeeper.root of JStorm, e.g. /jstorm: its Kafka spouts keep offsets under <root>/kafka/offset/topic, "
        "on the ZooKeeper of their kafka.zookeeper.hosts (repeatable).",
        many=True,
        metavar="PATH",
        env="OFFCTL_JSTORM_ROOT",
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
        "jstorm",
        ("--jstorm",),
        "JStorm Kafka spout under --jstorm-root, named by its kafka.topic and kafka.client.id (the reads: repeatable; "
        "default: every one; reset: the one spout written).",
        many=True,
        metavar="TOPIC/CLIENT_ID",
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
        "jstorm_from_beginning",
        ("--jstorm-from-beginning",),
        "JStorm's spouts set kafka.fetch.from.beginning=true: they start at the log start whatever is stored.",
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
        "kafka_clients_release",
        ("--kafka-clients-release",),
        "The Kafka client release the spouts' topology ships (kafka-clients for the new spouts, the Kafka jar "
        "for the old), which decides the request versions they send \\[default: the one the Storm release builds "
        "with].",
        metavar="VERSION",
        env="OFFCTL_KAFKA_CLIENTS_RELEASE",
        panel=SPOUTS,
        show_default=False,
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
        "kafka_release",
        ("--kafka-release",),
        "What if the brokers ran this Kafka release (4.0, 3.9, ...): judge which spouts it serves from offctl's "
        "table of its API versions instead of asking the brokers (BROKER_INCOMPATIBLE).",
        metavar="VERSION",
        env="OFFCTL_KAFKA_RELEASE",
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
    *COMMAND_ROWS,
)

# --- the groups the commands share, by name --------------------------------------------------------------------

CONNECTION_OPTIONS = (
    "zk",
    "zk_root",
    "trident_root",
    "jstorm_root",
    "bootstrap_servers",
    "storm_root",
    "timeout",
    "zk_auth",
    "kafka_config",
    "kafka_config_file",
    "config",
    "context",
)
SELECTION_OPTIONS = ("spout", "group", "trident", "jstorm", "topic", "all_groups")
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
    "kafka_clients_release",
    "offset_commit_period_ms",
    "jstorm_from_beginning",
    "static_partitions",
)
HORIZON_OPTIONS = (
    "lag_threshold",
    "time_lag_budget",
    "commit_expiry_horizon",
    "offsets_retention_minutes",
    "topic_retention",
    "retention_horizon",
    "kafka_release",
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
