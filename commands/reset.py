"""offctl reset, restore, migrate and delete: the commands that write, all through the same safe writer (offctl.repair.reset,
imported when one of them runs: other commands do not pay for it)."""

from __future__ import annotations

import sys
import time
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from offctl.repair.reset import Outcome

from offctl.core.targets import Scope, make_target, parse_partitions, parse_static_partitions, parse_topics
from offctl.render.output import outcome_errors, write_outcome, write_outcomes

from offctl.settings.connection import Connection
from offctl.inputs import parse_seconds

from .options import (CONNECTION_OPTIONS, SAFETY, SAFETY_OPTIONS, SELECTION, SPOUT_OPTIONS, Confirmation, Given,
                      PlanFormat, PlanOutput, StaticPartitions, check_confirmable, connection, err_console, pick,
                      reported_errors, safety, shared, without, written_profile)

CLIENT_SPOUT_OPTIONS = pick(SPOUT_OPTIONS, "storm_kafka_client_release", "first_poll_offset_strategy",
                            "isolation_level")
NO_TRIDENT = without(CONNECTION_OPTIONS, "trident_root")


class To(str, Enum):
    earliest = "earliest"
    latest = "latest"
    current = "current"
    offset = "offset"
    time = "time"
    shift = "shift"


def _finish(outcomes: list[Outcome], output: PlanOutput, confirm: Confirmation, *, many: bool = False) -> None:
    if many:
        write_outcomes(outcomes, output.value, sys.stdout, err_console, plan_shown=confirm.shown)
    else:
        write_outcome(outcomes[0], output.value, sys.stdout, err_console, plan_shown=confirm.shown)
    for outcome in outcomes:
        for line in outcome_errors(outcome):
            err_console.print(f"offctl: {line}")
    from offctl.repair.reset import outcome_exit_code, outcomes_exit_code

    raise typer.Exit(outcomes_exit_code(outcomes) if many else outcome_exit_code(outcomes[0]))


def _by_duration(text: str) -> str:
    """--by-duration in the syntax of every duration option (30m, 6h, 1d12h) as the ISO-8601 duration
    kafka-consumer-groups takes (PT1800S); ISO-8601, and anything else, is left to offctl.core.targets to judge."""
    cleaned = text.strip()
    if cleaned[:1].isdigit() and not cleaned.replace(".", "", 1).isdigit():  # has a unit: not ISO, not bare
        try:
            return f"PT{parse_seconds(cleaned):g}S"
        except ValueError:
            pass
    return text


def _writing(given: Given, output: PlanOutput) -> tuple[Confirmation, Connection]:
    """What every write starts with, before anything is read: `--execute` without `--yes` refused where there is no
    terminal to ask (exit 8), the shared options checked, the connection made and named in the question."""
    check_confirmable(given.execute, given.yes)
    confirm = Confirmation(given.yes, output.value)
    confirm.conn = connection(given)
    return confirm, confirm.conn


def _profile(given: Given, *consumers: str | None):
    """The spout profile the write is planned and its Kafka commits verified with: the consumer's profile of the
    config file, else the storm-kafka-client release and first-poll strategy given."""
    return written_profile(given, [c for c in consumers if c])


Topic = Annotated[Optional[str], typer.Option("--topic", rich_help_panel=SELECTION, metavar="TOPIC", help="Only this topic's partitions.")]
Topics = Annotated[Optional[list[str]], typer.Option(
    "--topic", rich_help_panel=SELECTION, metavar="TOPIC[:PARTITIONS]",
    help="Only this topic, or these of its partitions: orders, orders:0-3,7 (repeatable).")]
Partitions = Annotated[Optional[str], typer.Option(
    "--partitions", rich_help_panel=SELECTION, metavar="LIST", help="Only these partitions: 0,3,5 or 0-7.")]
TopologyId = Annotated[Optional[str], typer.Option(
    "--topology-id", metavar="STORM_ID",
    help="Kafka groups: write Storm metadata for this storm id, so the storm-kafka-client spout honours the "
         "commit.")]


@shared(CLIENT_SPOUT_OPTIONS, SAFETY_OPTIONS, CONNECTION_OPTIONS)
def reset_command(
    given: Given,
    spout: Annotated[Optional[str], typer.Option("--spout", rich_help_panel=SELECTION, metavar="ID", help="spoutConfig.id of a storm-kafka spout (in --zk-root).")] = None,
    group: Annotated[Optional[list[str]], typer.Option(
        "--group", rich_help_panel=SELECTION, metavar="GROUP", help="group.id of a storm-kafka-client spout (repeatable).")] = None,
    all_groups: Annotated[bool, typer.Option(
        "--all-groups", rich_help_panel=SELECTION, help="Every group whose commits carry Storm metadata.")] = False,
    trident: Annotated[Optional[str], typer.Option(
        "--trident", rich_help_panel=SELECTION, metavar="TXSTATEID",
        help="A Trident spout's txStateId (the stream name), under the one --trident-root.")] = None,
    topic: Topics = None, partitions: Partitions = None, static_partitions: StaticPartitions = None,
    to: Annotated[Optional[To], typer.Option(
        "--to", help="Where to move the offsets (current: the commit as it is; the log end where there is none).")] = None,
    by_duration: Annotated[Optional[str], typer.Option(
        "--by-duration", metavar="DURATION",
        parser=_by_duration,
        help="To the first offset at or after now minus a duration: 30m, 6h, 1d12h, or ISO-8601 as "
             "kafka-consumer-groups takes it: PT30M, PT6H, P1DT12H.")] = None,
    offset: Annotated[Optional[int], typer.Option("--offset", metavar="N", help="With --to offset.")] = None,
    at: Annotated[Optional[str], typer.Option(
        "--at", metavar="TIME", help="With --to time: ISO-8601 with a zone, or epoch milliseconds.")] = None,
    by: Annotated[Optional[int], typer.Option("--by", metavar="±N", help="With --to shift: move each partition by N.")] = None,
    from_file: Annotated[Optional[Path], typer.Option(
        "--from-file", metavar="FILE",
        help="Offsets from an offctl plan (reset --output json) or backup, or a kafka-consumer-groups CSV export.")] = None,
    topology_id: TopologyId = None,
    no_storm_metadata: Annotated[bool, typer.Option(
        "--no-storm-metadata",
        help="Kafka groups: commit partitions that have no Storm metadata without it (a spout whose first-poll "
             "strategy is UNCOMMITTED_* honours any commit); commits that have it keep it.")] = False,
    output: PlanFormat = PlanOutput.table,
) -> None:
    """Move a spout's or groups' offsets: plan (dry run), then --execute with backup and checks.

    Guards refuse (exit 4) while the owning topology runs, while records were written within
    --quiet-period, or while the group has members; --force GUARD overrides one.

    \b
    Example:
      offctl reset --zk zk1:2181 --zk-root /kafka-spouts --spout orders \\
        --bootstrap-servers k1:9092 --to earliest            # preview
      offctl reset ... --to earliest --execute               # apply; prints the backup
      offctl reset ... --group a --group b --topic orders:0-3 --by-duration PT30M
    """
    from offctl.repair.reset import ResetRequest, reset

    with reported_errors():
        confirm, conn = _writing(given, output)
        profile = _profile(given, spout, trident, *(group or ()))
        asked = any(v is not None for v in (to, offset, at, by, by_duration))
        target = (make_target(to.value if to else None, offset, at, by, by_duration, int(time.time() * 1000))
                  if asked or from_file is None else None)
        request = ResetRequest(spout=spout, groups=tuple(group or ()), all_groups=all_groups,
                               scope=Scope(parse_topics(topic), parse_partitions(partitions)), target=target,
                               from_file=from_file, topology_id=topology_id, plain=no_storm_metadata,
                               trident=trident, static_partitions=parse_static_partitions(static_partitions))
        outcomes = reset(conn, request, safety(given), confirm, profile)
    _finish(outcomes, output, confirm, many=request.many or len(outcomes) > 1)


@shared(CLIENT_SPOUT_OPTIONS, SAFETY_OPTIONS, NO_TRIDENT)
def restore_command(
    given: Given,
    backup: Annotated[Path, typer.Argument(metavar="BACKUP", help="A backup file printed by reset, restore or migrate.")],
    hand_made: Annotated[bool, typer.Option(
        "--hand-made", rich_help_panel=SAFETY,
        help="BACKUP was made or edited by hand: restore it without its checksum. Only records the spout can "
             "use, with offsets inside today's log, are written.")] = False,
    output: PlanFormat = PlanOutput.table,
) -> None:
    """Put a backup's before-image back, byte for byte, through the same guards and writer.

    Refused (exit 4, changed-since) where a partition changed since the write the backup undoes; exit 7 where a
    partition cannot be put back (a Kafka commit made where there was none, unless deleting the group undoes it).
    Restoring is itself backed up, so a restore can be undone too.

    \b
    Example:
      offctl restore ~/.local/state/offctl/backups/20261122T031500123Z-reset-zookeeper-orders.json \\
        --zk zk1:2181 --bootstrap-servers k1:9092 --execute
    """
    from offctl.adapters.backup import load_backup
    from offctl.repair.reset import restore

    with reported_errors():
        confirm, conn = _writing(given, output)
        safe = safety(given)  # checked before the backup is read
        profile = _profile(given, load_backup(backup, hand_made=hand_made).key.consumer)
        outcome = restore(conn, backup, safe, confirm, hand_made=hand_made, profile=profile)
    _finish([outcome], output, confirm)


@shared(CLIENT_SPOUT_OPTIONS, SAFETY_OPTIONS, NO_TRIDENT)
def migrate_command(
    given: Given,
    spout: Annotated[str, typer.Option("--spout", rich_help_panel=SELECTION, metavar="ID", help="spoutConfig.id of the old storm-kafka spout.")],
    group: Annotated[str, typer.Option("--group", rich_help_panel=SELECTION, metavar="GROUP", help="group.id of the new storm-kafka-client spout.")],
    topology_id: TopologyId = None, topic: Topic = None, partitions: Partitions = None,
    output: PlanFormat = PlanOutput.table,
) -> None:
    """Copy an old spout's ZooKeeper offsets into the Kafka group of its storm-kafka-client successor.

    Commits carry Storm metadata for --topology-id, so the new spout resumes where the old one stopped.

    \b
    Example:
      offctl migrate --zk zk1:2181 --zk-root /kafka-spouts --spout orders \\
        --bootstrap-servers k1:9092 --group orders-spout --topology-id orders-7-1763780000
    """
    from offctl.repair.reset import migrate

    with reported_errors():
        confirm, conn = _writing(given, output)
        profile = _profile(given, group)
        scope = Scope(parse_topics([topic] if topic else None), parse_partitions(partitions))
        outcome = migrate(conn, spout, group, topology_id or "", safety(given), confirm, scope=scope,
                          profile=profile)
    _finish([outcome], output, confirm)


@shared(SAFETY_OPTIONS, NO_TRIDENT)
def delete_command(
    given: Given,
    spout: Annotated[str, typer.Option("--spout", rich_help_panel=SELECTION, metavar="ID", help="spoutConfig.id of a storm-kafka spout (in --zk-root).")],
    topic: Topics = None, partitions: Partitions = None,
    record_topic: Annotated[Optional[str], typer.Option(
        "--record-topic", rich_help_panel=SELECTION, metavar="TOPIC", help="Only records that name this topic (TOPIC_MISMATCH shows them).")] = None,
    written_by: Annotated[Optional[str], typer.Option(
        "--written-by", rich_help_panel=SELECTION, metavar="TOPOLOGY", help="Only records written by this topology (name or storm id).")] = None,
    all_records: Annotated[bool, typer.Option("--all-records", rich_help_panel=SELECTION, help="Every record of the spout.")] = False,
    output: PlanFormat = PlanOutput.table,
) -> None:
    """Delete a storm-kafka spout's stale partition records: plan, guards, backup, one multi-op.

    The spout then starts those partitions as its start-up rules say (startOffsetTime from 0.10 on).
    `offctl restore BACKUP` creates them again, byte for byte.

    \b
    Example:
      offctl delete --zk zk1:2181 --zk-root /kafka-spouts --spout shared-id --record-topic payments
    """
    from offctl.repair.reset import delete

    with reported_errors():
        confirm, conn = _writing(given, output)
        if record_topic is not None:
            parse_topics([record_topic])
        outcome = delete(conn, spout, safety(given), confirm,
                         scope=Scope(parse_topics(topic), parse_partitions(partitions)), record_topic=record_topic,
                         written_by=written_by, every=all_records)
    _finish([outcome], output, confirm)
