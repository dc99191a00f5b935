"""offctl reset, restore, migrate and delete: the commands that write, all through the same safe writer
(offctl.repair, imported when one of them runs: other commands do not pay for it)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from offctl.core.results.repair import RepairResult

from offctl.core.plans.targets import Scope, make_target, parse_partitions, parse_static_partitions, parse_topics
from offctl.render.plans import outcome_errors, write_outcome, write_outcomes
from offctl.settings.connection import Connection
from offctl.settings.kinds import PlanOutput, To
from offctl.settings.options import CONNECTION_OPTIONS, OPTIONS, SAFETY_OPTIONS, SPOUT_OPTIONS
from offctl.settings.resolve import Given, safety, written_profile

from .options import Confirmation, check_confirmable, connection, err_console, pick, reported_errors, shared, without

CLIENT_SPOUT_OPTIONS = pick(
    SPOUT_OPTIONS, "storm_kafka_client_release", "first_poll_offset_strategy", "isolation_level"
)
JSTORM_SPOUT_OPTIONS = pick(SPOUT_OPTIONS, "jstorm_from_beginning")  # where a JStorm spout starts, in a plan's words
NO_TRIDENT = without(CONNECTION_OPTIONS, "trident_root")


def _finish(outcomes: list[RepairResult], output: PlanOutput, confirm: Confirmation, *, many: bool = False) -> None:
    if many:
        write_outcomes(outcomes, output.value, sys.stdout, err_console, plan_shown=confirm.shown)
    else:
        write_outcome(outcomes[0], output.value, sys.stdout, err_console, plan_shown=confirm.shown)
    for outcome in outcomes:
        for line in outcome_errors(outcome):
            err_console.print(f"offctl: {line}")
    from offctl.repair.writer import outcome_exit_code, outcomes_exit_code

    raise typer.Exit(outcomes_exit_code(outcomes) if many else outcome_exit_code(outcomes[0]))


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


OUTPUT = OPTIONS["output"].but(kind=PlanOutput, default=PlanOutput.table)
ONE_SPOUT = OPTIONS["spout"].but(many=False, required=True)
TOPICS = OPTIONS["topic"].but(many=True, metavar="TOPIC[:PARTITIONS]")


@shared(
    CLIENT_SPOUT_OPTIONS,
    JSTORM_SPOUT_OPTIONS,
    SAFETY_OPTIONS,
    CONNECTION_OPTIONS,
    own=(
        OPTIONS["spout"].but(many=False),
        "group",
        "all_groups",
        OPTIONS["trident"].but(many=False),
        OPTIONS["jstorm"].but(many=False),
        TOPICS,
        "partitions",
        "static_partitions",
        "to",
        "by_duration",
        "offset",
        "at",
        "by",
        "from_file",
        "topology_id",
        "no_storm_metadata",
        OUTPUT,
    ),
)
def reset_command(
    given: Given,
    spout: str | None,
    group: list[str] | None,
    all_groups: bool,
    trident: str | None,
    jstorm: str | None,
    topic: list[str] | None,
    partitions: str | None,
    static_partitions: list[str] | None,
    to: To | None,
    by_duration: str | None,
    offset: int | None,
    at: str | None,
    by: int | None,
    from_file: Path | None,
    topology_id: str | None,
    no_storm_metadata: bool,
    output: PlanOutput,
) -> None:
    """Move a spout's or groups' offsets: plan (dry run), then --execute with backup and checks.

    A JStorm spout (--jstorm TOPIC/CLIENT_ID) fetches its stored offset + 1: each target is where it fetches
    first, and its records store the target - 1.

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
        profile = _profile(given, spout, trident, jstorm, *(group or ()))
        asked = any(v is not None for v in (to, offset, at, by, by_duration))
        target = (
            make_target(to.value if to else None, offset, at, by, by_duration, int(time.time() * 1000))
            if asked or from_file is None
            else None
        )
        request = ResetRequest(
            spout=spout,
            groups=tuple(group or ()),
            all_groups=all_groups,
            scope=Scope(parse_topics(topic), parse_partitions(partitions)),
            target=target,
            from_file=from_file,
            topology_id=topology_id,
            plain=no_storm_metadata,
            trident=trident,
            jstorm=jstorm,
            static_partitions=parse_static_partitions(static_partitions),
        )
        outcomes = reset(conn, request, safety(given), confirm, profile)
    _finish(outcomes, output, confirm, many=request.many or len(outcomes) > 1)


@shared(CLIENT_SPOUT_OPTIONS, JSTORM_SPOUT_OPTIONS, SAFETY_OPTIONS, NO_TRIDENT, own=("hand_made", OUTPUT))
def restore_command(
    given: Given,
    backup: Annotated[
        Path, typer.Argument(metavar="BACKUP", help="A backup file printed by reset, restore or migrate.")
    ],
    hand_made: bool,
    output: PlanOutput,
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
    from offctl.repair.restore import restore

    with reported_errors():
        confirm, conn = _writing(given, output)
        safe = safety(given)  # checked before the backup is read
        profile = _profile(given, load_backup(backup, hand_made=hand_made).key.consumer)
        outcome = restore(conn, backup, safe, confirm, hand_made=hand_made, profile=profile)
    _finish([outcome], output, confirm)


@shared(
    CLIENT_SPOUT_OPTIONS,
    SAFETY_OPTIONS,
    NO_TRIDENT,
    own=(ONE_SPOUT, OPTIONS["group"].but(many=False, required=True), "topology_id", "topic", "partitions", OUTPUT),
)
def migrate_command(
    given: Given,
    spout: str,
    group: str,
    topology_id: str | None,
    topic: str | None,
    partitions: str | None,
    output: PlanOutput,
) -> None:
    """Copy an old spout's ZooKeeper offsets into the Kafka group of its storm-kafka-client successor.

    Commits carry Storm metadata for --topology-id, so the new spout resumes where the old one stopped.

    \b
    Example:
      offctl migrate --zk zk1:2181 --zk-root /kafka-spouts --spout orders \\
        --bootstrap-servers k1:9092 --group orders-spout --topology-id orders-7-1763780000
    """
    from offctl.repair.migrate import migrate

    with reported_errors():
        confirm, conn = _writing(given, output)
        profile = _profile(given, group)
        scope = Scope(parse_topics([topic] if topic else None), parse_partitions(partitions))
        outcome = migrate(conn, spout, group, topology_id or "", safety(given), confirm, scope=scope, profile=profile)
    _finish([outcome], output, confirm)


@shared(
    SAFETY_OPTIONS,
    NO_TRIDENT,
    own=(
        OPTIONS["spout"].but(many=False),
        OPTIONS["jstorm"].but(many=False),
        TOPICS,
        "partitions",
        "record_topic",
        "written_by",
        "all_records",
        OUTPUT,
    ),
)
def delete_command(
    given: Given,
    spout: str | None,
    jstorm: str | None,
    topic: list[str] | None,
    partitions: str | None,
    record_topic: str | None,
    written_by: str | None,
    all_records: bool,
    output: PlanOutput,
) -> None:
    """Delete a storm-kafka or JStorm spout's stale partition records: plan, guards, backup, one multi-op.

    The spout then starts those partitions as its start-up rules say (storm-kafka: startOffsetTime from 0.10
    on; JStorm: the log end + 1). `offctl restore BACKUP` creates them again, byte for byte.

    \b
    Example:
      offctl delete --zk zk1:2181 --zk-root /kafka-spouts --spout shared-id --record-topic payments
      offctl delete --zk zk1:2181 --jstorm-root /jstorm --jstorm clicks/jstorm --written-by old-topology
    """
    from offctl.repair.migrate import delete

    with reported_errors():
        confirm, conn = _writing(given, output)
        if record_topic is not None:
            parse_topics([record_topic])
        outcome = delete(
            conn,
            spout,
            safety(given),
            confirm,
            scope=Scope(parse_topics(topic), parse_partitions(partitions)),
            record_topic=record_topic,
            written_by=written_by,
            every=all_records,
            jstorm=jstorm,
        )
    _finish([outcome], output, confirm)
