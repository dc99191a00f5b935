"""offctl inspect."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from offctl.inspect import Selection, exit_code, inspect
from offctl.model import Thresholds
from offctl.render import write_notes, write_report

from .options import (BootstrapServers, FailOn, KafkaConfig, KafkaConfigFile, OutputFormat, StormRoot, Timeout,
                      Zk, ZkAuth, ZkRoot, connection, err_console, reported_errors)


def inspect_command(
    spout: Annotated[Optional[list[str]], typer.Option(
        "--spout", metavar="ID", help="spoutConfig.id to inspect (repeatable; default: every id under each --zk-root).")] = None,
    group: Annotated[Optional[list[str]], typer.Option(
        "--group", metavar="GROUP", help="Kafka consumer group (group.id) of a storm-kafka-client spout (repeatable).")] = None,
    topic: Annotated[Optional[str], typer.Option(
        "--topic", metavar="TOPIC", help="Topic the spouts should read: other topics in ZooKeeper records are TOPIC_MISMATCH; "
                        "narrows groups to this topic.")] = None,
    max_offset_behind: Annotated[Optional[int], typer.Option(
        "--max-offset-behind", metavar="N", min=0, help="The spouts' maxOffsetBehind: lag above it is reported.")] = None,
    lag_threshold: Annotated[Optional[int], typer.Option(
        "--lag-threshold", metavar="N", min=0, help="Report HIGH_LAG for lag at or above this.")] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Output format.")] = OutputFormat.table,
    fail_on: Annotated[FailOn, typer.Option(
        "--fail-on", help="Exit 1 when a finding is at or above this severity.")] = FailOn.error,
    per_partition: Annotated[bool, typer.Option(
        "--per-partition", help="Table output: list every partition, not just consumers and findings.")] = False,
    zk: Zk = None, zk_root: ZkRoot = None, bootstrap_servers: BootstrapServers = None,
    storm_root: StormRoot = "/storm", timeout: Timeout = 10.0, zk_auth: ZkAuth = None,
    kafka_config: KafkaConfig = None, kafka_config_file: KafkaConfigFile = None,
) -> None:
    """Show where each spout is, how far behind, and what is wrong.

    \b
    Example:
      offctl inspect --zk zk1:2181 --zk-root /kafka-spouts \\
        --bootstrap-servers k1:9092 --group orders-spout --output json
    """
    with reported_errors():
        conn = connection(zk, zk_root, bootstrap_servers, storm_root, timeout, zk_auth, kafka_config,
                          kafka_config_file)
        report = inspect(conn, Selection(tuple(spout or ()), tuple(group or ()), topic),
                         Thresholds(topic, max_offset_behind, lag_threshold))
    write_report(report, output.value, sys.stdout, per_partition=per_partition)
    write_notes(report, err_console)
    raise typer.Exit(exit_code(report, fail_on.value))
