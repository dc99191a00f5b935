"""offctl storm-kafka-monitor: Storm UI's lag script, answered by offctl (docs/storm-ui-lag.md).

The command line after offctl's own options is KafkaOffsetLagUtil's, read as it reads it (offctl.faces.stormui.args);
what is printed and the exit code are the original's, so Storm UI reads them as it reads the original's: the JSON
object, or one failure line, on stdout, exit 0; a refused command line, its message and the help on stdout, exit 1
(the UI then leaves the spout out). The `storm-kafka-monitor` program installed with offctl runs this command with
every argument passed through (offctl.__main__.storm_kafka_monitor)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from offctl.errors import OffctlError
from offctl.inputs import redact
from offctl.settings import resolve
from offctl.settings.options import CONNECTION_OPTIONS, HORIZON_OPTIONS, MONITOR_OPTIONS, SPOUT_OPTIONS
from offctl.settings.resolve import Given

from .options import err_console, pick, say, shared

CONTEXT_SETTINGS = {"allow_extra_args": True, "ignore_unknown_options": True, "allow_interspersed_args": False}


@contextmanager
def failure_lines() -> Iterator[None]:
    """An offctl error (the config file, a context, a client setting) as the original reports any failure: one line
    on stdout, exit 0, so that Storm UI shows it as the spout's errorInfo instead of leaving the spout out."""
    from offctl.faces.stormui.monitor import failure_line

    try:
        yield
    except OffctlError as exc:
        sys.stdout.write(failure_line(exc))
        sys.stdout.flush()
        raise typer.Exit(0) from None


@shared(
    pick(
        CONNECTION_OPTIONS,
        "zk",
        "bootstrap_servers",
        "storm_root",
        "jstorm_root",
        "zk_auth",
        "kafka_config",
        "kafka_config_file",
        "config",
        "context",
    ),
    SPOUT_OPTIONS,
    pick(
        HORIZON_OPTIONS,
        "time_lag_budget",
        "topic_retention",
        "retention_horizon",
        "commit_expiry_horizon",
        "offsets_retention_minutes",
    ),
    MONITOR_OPTIONS,
    errors=failure_lines,
)
def storm_kafka_monitor_command(ctx: typer.Context, given: Given) -> None:
    """Storm UI's lag script (storm-kafka-monitor), answered by offctl within --deadline.

    \b
    offctl's own options come first; then KafkaOffsetLagUtil's arguments, as Storm UI passes them:
      offctl storm-kafka-monitor --context prod -t orders -g orders-spout -b k1:9092
      offctl storm-kafka-monitor -o -t orders -n /kafka-spouts/orders-spout -z zk1:2181 -r /brokers
    Prints one JSON object ({topic: {partition: {consumerCommittedOffset, logHeadOffset, lag, ...}}}) or one
    failure line, exit 0; a command line KafkaOffsetLagUtil refuses: its message and help, exit 1.
    `--zk` names Storm's ZooKeeper for new spouts (running topologies); `--bootstrap-servers` the brokers of an
    old spout on StaticHosts; `--jstorm-root` JStorm's roots, under which an old spout's -n is JStorm's Kafka spout.
    See docs/storm-ui-lag.md.
    """
    from offctl import STARTED
    from offctl.faces.stormui.args import LagUsage, help_text, parse_args
    from offctl.faces.stormui.monitor import MonitorSettings, answer_within

    query = parse_args(list(ctx.args))
    if isinstance(query, LagUsage):
        sys.stdout.write(query.message + "\n" + (help_text() if query.help else ""))
        sys.stdout.flush()
        raise typer.Exit(query.exit_code)
    with failure_lines():
        settings = MonitorSettings(resolve.reading(given, say, sandbox=False, checked=False), given.deadline)
    text, notes, finished = answer_within(query, settings, started=STARTED)
    sys.stdout.write(text)
    sys.stdout.flush()
    for note in notes:
        err_console.print(f"offctl: {redact(note)}")
    if not finished:
        # The deadline passed while a read still waits on a server: nothing it holds needs closing, and waiting
        # for it (librdkafka's threads, kazoo's) would be the hang this command exists to prevent.
        sys.stderr.flush()
        os._exit(0)
    raise typer.Exit(0)
