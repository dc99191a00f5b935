"""offctl serve: the Prometheus exporter."""

from __future__ import annotations

from typing import Annotated

import typer

from offctl.core.behaviour import CLIENT_RELEASE_DEFAULT
from offctl.core.expiry import HORIZON_S
from offctl.config import DEFAULT_LISTEN
from offctl.inspect import TIME_LAG_BUDGET_S, ExpiryOptions
from offctl.inputs import printable

from .options import (CommitExpiryHorizon, OffsetsRetentionMinutes, AllGroups, BootstrapServers, ExpectedTopic, CommitPeriod, FirstPollOption, GuaranteeOption, ProcessingGuarantee, FirstPollStrategy, Groups,
                      IgnoreZkOffsets, KafkaConfig, KafkaConfigFile, LagThreshold, MaxOffsetBehind,
                      NoOutOfRangeReset, Spouts, StartOffset, StaticPartitions, StormKafkaClientRelease,
                      StormKafkaRelease, StormRoot, TimeLagBudget, Timeout, TopicRetentionOption, RetentionHorizon, TridentRoot, Tridents, Zk, ZkAuth, ZkRoot,
                      err_console, reading, reported_errors)


def serve_command(
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
    listen: Annotated[str, typer.Option(
        "--listen", metavar="HOST:PORT", envvar="OFFCTL_LISTEN", help="Where to serve /metrics, /healthz and "
                                                                     "/status.json.")] = DEFAULT_LISTEN,
    interval: Annotated[float, typer.Option(
        "--interval", metavar="SECONDS", min=1, max=86400, envvar="OFFCTL_INTERVAL",
        help="Seconds between inspections.")] = 30.0,
    window: Annotated[int, typer.Option(
        "--window", metavar="N", min=2, max=1000, help="Cycles per partition for the history status.")] = 10,
    allowed_lag: Annotated[int, typer.Option(
        "--allowed-lag", metavar="N", min=0, help="Lag that counts as caught up in the history status.")] = 0,
    no_partition_metrics: Annotated[bool, typer.Option(
        "--no-partition-metrics", help="Only per-consumer and exporter metrics: bounded series for huge fleets.")] = False,
    time_lag_budget: TimeLagBudget = TIME_LAG_BUDGET_S,
    commit_expiry_horizon: CommitExpiryHorizon = HORIZON_S,
    offsets_retention_minutes: OffsetsRetentionMinutes = None,
    topic_retention: TopicRetentionOption = None, retention_horizon: RetentionHorizon = None,
    zk: Zk = None, zk_root: ZkRoot = None, trident_root: TridentRoot = None,
    bootstrap_servers: BootstrapServers = None,
    storm_root: StormRoot = "/storm", timeout: Timeout = 10.0, zk_auth: ZkAuth = None,
    kafka_config: KafkaConfig = None, kafka_config_file: KafkaConfigFile = None,
) -> None:
    """Inspect every --interval and serve Prometheus metrics, until SIGTERM or Ctrl-C.

    A cycle that cannot read a store is logged on stderr and counted (offctl_read_errors_total); the last
    good values are served on with the time they were read, so they are never taken for fresh ones.

    \b
    Example:
      offctl serve --zk zk1:2181 --zk-root /kafka-spouts --bootstrap-servers k1:9092 \\
        --group orders-spout --listen 0.0.0.0:9717 --interval 30
    """
    from offctl.exporter import serve  # the HTTP server and prometheus_client load only when serving

    with reported_errors():
        conn, selection, thresholds = reading(
            ctx, spout, group, trident, topic, all_groups, zk, zk_root, trident_root, bootstrap_servers, storm_root,
            timeout, zk_auth, kafka_config, kafka_config_file,
            (lag_threshold, max_offset_behind, storm_kafka_release, start_offset_time, ignore_zk_offsets,
             no_out_of_range_reset, storm_kafka_client_release, first_poll_offset_strategy, static_partitions,
             processing_guarantee, offset_commit_period_ms, topic_retention, retention_horizon))
        serve(conn, selection, thresholds, listen=listen, interval_s=interval, window=window,
              allowed_lag=allowed_lag, partition_metrics=not no_partition_metrics,
              time_lag_budget_s=time_lag_budget,
              expiry_options=ExpiryOptions(commit_expiry_horizon, offsets_retention_minutes),
              log=lambda line: err_console.print(f"offctl serve: {printable(line)}"))
