"""offctl reset, restore and migrate: the commands that write, all through the same safe writer."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from offctl.plan import make_target, parse_partitions
from offctl.render import outcome_errors, write_outcome
from offctl.reset import Outcome, ResetRequest, migrate, outcome_exit_code, reset, restore

from .options import (SAFETY, AuditLog, BackupDir, BootstrapServers, Execute, Force, KafkaConfig, KafkaConfigFile,
                      PlanFormat, PlanOutput, QuietPeriod, StormRoot, Timeout, Yes, Zk, ZkAuth, ZkRoot, connection,
                      confirm_plans, err_console, reported_errors, safety)


class To(str, Enum):
    earliest = "earliest"
    latest = "latest"
    offset = "offset"
    time = "time"
    shift = "shift"


def _confirm(yes: bool):
    return lambda plan: confirm_plans(yes, [plan])


def _finish(outcome: Outcome, output: PlanOutput) -> None:
    write_outcome(outcome, output.value, sys.stdout, err_console)
    for line in outcome_errors(outcome):
        err_console.print(f"offctl: {line}")
    raise typer.Exit(outcome_exit_code(outcome))


Topic = Annotated[Optional[str], typer.Option("--topic", metavar="TOPIC", help="Only this topic's partitions.")]
Partitions = Annotated[Optional[str], typer.Option(
    "--partitions", metavar="LIST", help="Only these partitions: 0,3,5 or 0-7.")]
TopologyId = Annotated[Optional[str], typer.Option(
    "--topology-id", metavar="STORM_ID",
    help="Kafka groups: write Storm metadata for this storm id, so the storm-kafka-client spout honours the "
         "commit.")]


def reset_command(
    spout: Annotated[Optional[str], typer.Option("--spout", metavar="ID", help="spoutConfig.id of a storm-kafka spout (in --zk-root).")] = None,
    group: Annotated[Optional[str], typer.Option("--group", metavar="GROUP", help="group.id of a storm-kafka-client spout.")] = None,
    topic: Topic = None, partitions: Partitions = None,
    to: Annotated[Optional[To], typer.Option("--to", help="Where to move the offsets.")] = None,
    offset: Annotated[Optional[int], typer.Option("--offset", metavar="N", help="With --to offset.")] = None,
    at: Annotated[Optional[str], typer.Option(
        "--at", metavar="TIME", help="With --to time: ISO-8601 with a zone, or epoch milliseconds.")] = None,
    by: Annotated[Optional[int], typer.Option("--by", metavar="±N", help="With --to shift: move each partition by N.")] = None,
    from_file: Annotated[Optional[Path], typer.Option(
        "--from-file", metavar="FILE",
        help="Offsets from an offctl plan (reset --output json) or backup, or a kafka-consumer-groups CSV export.")] = None,
    topology_id: TopologyId = None,
    execute: Execute = False, yes: Yes = False, quiet_period: QuietPeriod = 10.0, force: Force = None,
    backup_dir: BackupDir = None, audit_log: AuditLog = None, output: PlanFormat = PlanOutput.table,
    zk: Zk = None, zk_root: ZkRoot = None, bootstrap_servers: BootstrapServers = None,
    storm_root: StormRoot = "/storm", timeout: Timeout = 10.0, zk_auth: ZkAuth = None,
    kafka_config: KafkaConfig = None, kafka_config_file: KafkaConfigFile = None,
) -> None:
    """Move a spout's or group's offsets: plan (dry run), then --execute with backup and checks.

    Guards refuse (exit 4) while the owning topology runs, while records were written within
    --quiet-period, or while the group has members; --force GUARD overrides one.

    \b
    Example:
      offctl reset --zk zk1:2181 --zk-root /kafka-spouts --spout orders \\
        --bootstrap-servers k1:9092 --to earliest            # preview
      offctl reset ... --to earliest --execute               # apply; prints the backup
    """
    with reported_errors():
        conn = connection(zk, zk_root, bootstrap_servers, storm_root, timeout, zk_auth, kafka_config,
                          kafka_config_file)
        asked = to is not None or offset is not None or at is not None or by is not None
        target = make_target(to.value if to else None, offset, at, by) if asked or from_file is None else None
        request = ResetRequest(spout=spout, group=group, topic=topic, partitions=parse_partitions(partitions),
                               target=target, from_file=from_file, topology_id=topology_id)
        outcome = reset(conn, request, safety(execute, quiet_period, force, backup_dir, audit_log), _confirm(yes))
    _finish(outcome, output)


def restore_command(
    backup: Annotated[Path, typer.Argument(metavar="BACKUP", help="A backup file printed by reset, restore or migrate.")],
    hand_made: Annotated[bool, typer.Option(
        "--hand-made", rich_help_panel=SAFETY,
        help="BACKUP was made or edited by hand: restore it without its checksum. Only records the spout can "
             "use, with offsets inside today's log, are written.")] = False,
    execute: Execute = False, yes: Yes = False, quiet_period: QuietPeriod = 10.0, force: Force = None,
    backup_dir: BackupDir = None, audit_log: AuditLog = None, output: PlanFormat = PlanOutput.table,
    zk: Zk = None, zk_root: ZkRoot = None, bootstrap_servers: BootstrapServers = None,
    storm_root: StormRoot = "/storm", timeout: Timeout = 10.0, zk_auth: ZkAuth = None,
    kafka_config: KafkaConfig = None, kafka_config_file: KafkaConfigFile = None,
) -> None:
    """Put a backup's before-image back, byte for byte, through the same guards and writer.

    Restoring is itself backed up, so a restore can be undone too.

    \b
    Example:
      offctl restore ~/.local/state/offctl/backups/20261122T031500123Z-reset-zookeeper-orders.json \\
        --zk zk1:2181 --bootstrap-servers k1:9092 --execute
    """
    with reported_errors():
        conn = connection(zk, zk_root, bootstrap_servers, storm_root, timeout, zk_auth, kafka_config,
                          kafka_config_file)
        outcome = restore(conn, backup, safety(execute, quiet_period, force, backup_dir, audit_log), _confirm(yes),
                          hand_made=hand_made)
    _finish(outcome, output)


def migrate_command(
    spout: Annotated[str, typer.Option("--spout", metavar="ID", help="spoutConfig.id of the old storm-kafka spout.")],
    group: Annotated[str, typer.Option("--group", metavar="GROUP", help="group.id of the new storm-kafka-client spout.")],
    topology_id: TopologyId = None, topic: Topic = None, partitions: Partitions = None,
    execute: Execute = False, yes: Yes = False, quiet_period: QuietPeriod = 10.0, force: Force = None,
    backup_dir: BackupDir = None, audit_log: AuditLog = None, output: PlanFormat = PlanOutput.table,
    zk: Zk = None, zk_root: ZkRoot = None, bootstrap_servers: BootstrapServers = None,
    storm_root: StormRoot = "/storm", timeout: Timeout = 10.0, zk_auth: ZkAuth = None,
    kafka_config: KafkaConfig = None, kafka_config_file: KafkaConfigFile = None,
) -> None:
    """Copy an old spout's ZooKeeper offsets into the Kafka group of its storm-kafka-client successor.

    Commits carry Storm metadata for --topology-id, so the new spout resumes where the old one stopped.

    \b
    Example:
      offctl migrate --zk zk1:2181 --zk-root /kafka-spouts --spout orders \\
        --bootstrap-servers k1:9092 --group orders-spout --topology-id orders-7-1763780000
    """
    with reported_errors():
        conn = connection(zk, zk_root, bootstrap_servers, storm_root, timeout, zk_auth, kafka_config,
                          kafka_config_file)
        outcome = migrate(conn, spout, group, topology_id or "", safety(execute, quiet_period, force, backup_dir, audit_log),
                          _confirm(yes), topic=topic, partitions=parse_partitions(partitions))
    _finish(outcome, output)
