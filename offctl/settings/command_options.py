"""The rows of the option table (offctl.settings.options) that the commands take for themselves: output,
safety, the repairs' targets, peek, serve and watch, Storm UI's lag script, offctl mcp, and the audit's files,
snapshots, Spark and repair. The rows every read shares (connection, selection, spout settings, thresholds and
horizons) are options.py's own.
"""

from __future__ import annotations

from pathlib import Path

from offctl.core.plans.guards import QUIET_PERIOD_S
from offctl.settings.connection import DEFAULT_LISTEN
from offctl.settings.kinds import (
    DEADLINE_S,
    FILES,
    IN_DEFAULTS,
    MONITOR,
    OUTPUT,
    PEEK_MAX_COUNT,
    PLAN_TTL_S,
    REPAIR,
    SAFETY,
    SPARK,
    FailOn,
    FileFormat,
    Guard,
    Option,
    OutputFormat,
    To,
    iso_duration,
    seconds,
)

COMMAND_ROWS = (
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
