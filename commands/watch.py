"""offctl watch: the inspect view, refreshed in place."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer
from offctl.core.behaviour import CLIENT_RELEASE_DEFAULT

from offctl.inspect import TIME_LAG_BUDGET_S

from .options import (AllGroups, BootstrapServers, ExpectedTopic, CommitPeriod, FirstPollOption, GuaranteeOption, ProcessingGuarantee, FirstPollStrategy, Groups,
                      IgnoreZkOffsets, KafkaConfig, KafkaConfigFile, LagThreshold, MaxOffsetBehind,
                      NoOutOfRangeReset, Spouts, StartOffset, StaticPartitions, StormKafkaClientRelease,
                      StormKafkaRelease, StormRoot, TimeLagBudget, Timeout, TopicRetentionOption, RetentionHorizon, TridentRoot, Tridents, Zk, ZkAuth, ZkRoot,
                      reading, reported_errors)


def watch_command(
    ctx: typer.Context,
    spout: Spouts = None, group: Groups = None, trident: Tridents = None, topic: ExpectedTopic = None,
    max_offset_behind: MaxOffsetBehind = None, lag_threshold: LagThreshold = None, all_groups: AllGroups = False,
    storm_kafka_release: StormKafkaRelease = "1.2.4", start_offset_time: StartOffset = "earliest",
    ignore_zk_offsets: IgnoreZkOffsets = False, no_out_of_range_reset: NoOutOfRangeReset = False,
    storm_kafka_client_release: StormKafkaClientRelease = CLIENT_RELEASE_DEFAULT,
    first_poll_offset_strategy: FirstPollOption = FirstPollStrategy.UNCOMMITTED_EARLIEST,
    processing_guarantee: GuaranteeOption = ProcessingGuarantee.AT_LEAST_ONCE,
    offset_commit_period_ms: CommitPeriod = None,
    static_partitions: StaticPartitions = None,
    interval: Annotated[float, typer.Option(
        "--interval", "-n", metavar="SECONDS", min=0.5, max=3600, help="Seconds between refreshes.")] = 2.0,
    count: Annotated[Optional[int], typer.Option(
        "--count", metavar="N", min=1, help="Stop after N refreshes (default: until Ctrl-C).")] = None,
    allowed_lag: Annotated[int, typer.Option(
        "--allowed-lag", metavar="N", min=0, help="Lag that counts as caught up in the status.")] = 0,
    time_lag_budget: TimeLagBudget = TIME_LAG_BUDGET_S,
    topic_retention: TopicRetentionOption = None, retention_horizon: RetentionHorizon = None,
    zk: Zk = None, zk_root: ZkRoot = None, trident_root: TridentRoot = None,
    bootstrap_servers: BootstrapServers = None,
    storm_root: StormRoot = "/storm", timeout: Timeout = 10.0, zk_auth: ZkAuth = None,
    kafka_config: KafkaConfig = None, kafka_config_file: KafkaConfigFile = None,
) -> None:
    """Watch spouts move: committed offsets moving or stuck, lag and its trend, status, refreshed in place.

    For the engineer watching a fix take effect. Ctrl-C leaves.

    \\b
    Example:
      offctl watch --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 --spout orders -n 5
    """
    from rich.console import Group
    from rich.live import Live
    from rich.text import Text

    from offctl.exporter import watch  # the exporter's modules load only when watching
    from offctl.render import table_console, watch_table

    with reported_errors():
        conn, selection, thresholds = reading(
            ctx, spout, group, trident, topic, all_groups, zk, zk_root, trident_root, bootstrap_servers, storm_root,
            timeout, zk_auth, kafka_config, kafka_config_file,
            (lag_threshold, max_offset_behind, storm_kafka_release, start_offset_time, ignore_zk_offsets,
             no_out_of_range_reset, storm_kafka_client_release, first_poll_offset_strategy, static_partitions,
             processing_guarantee, offset_commit_period_ms, topic_retention, retention_horizon))
        console = table_console(sys.stdout)

        def frame(report, previous, statuses, refreshed, error) -> Group:
            parts = [watch_table(report, previous, statuses, refreshed)] if report is not None else []
            if error:
                parts.append(Text(f"offctl: refresh {refreshed} could not read: {error}", style="yellow"))
            return Group(*parts)

        if not console.is_terminal:  # piped or logged: every refresh, one after the other
            watch(conn, selection, thresholds, lambda *a: console.print(frame(*a)), interval_s=interval, count=count,
                  allowed_lag=allowed_lag, time_lag_budget_s=time_lag_budget)
            return
        with Live(console=console, auto_refresh=False, transient=False) as live:
            watch(conn, selection, thresholds, lambda *a: live.update(frame(*a), refresh=True), interval_s=interval,
                  count=count, allowed_lag=allowed_lag, time_lag_budget_s=time_lag_budget)
