"""The one safe writer of every repair: confirm, write the before-image to a backup file, write through the store's
safe writer (one versioned multi-op per spout in ZooKeeper; one commit request per group in Kafka, after checking
nothing moved), read back to verify, append to the audit log; and the exit code of what it did.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from offctl import interrupts
from offctl.adapters.backup import append_audit, audit_lines, write_backup
from offctl.core.plans.plan import Plan
from offctl.core.records.model import ZK_STORES, ConsumerKey
from offctl.core.results.repair import RepairResult
from offctl.errors import (
    LEFT_OUT,
    NOT_CONFIRMED,
    Interrupted,
    InterruptedWrite,
    OffctlError,
    StoreUnavailable,
    WriteConflict,
)
from offctl.ports import LogWriter, SpoutWriter
from offctl.repair.readback import check_unmoved, keep_after_image, undo_command, verify_write
from offctl.repair.reads import Confirm, ReadBack, clock_ms
from offctl.settings.connection import Connection
from offctl.settings.run import Safety


def execute_plan(
    plan: Plan,
    zk: SpoutWriter | None,
    kafka: LogWriter | None,
    conn: Connection,
    safety: Safety,
    confirm: Confirm,
    read_back: ReadBack = ReadBack(),
) -> RepairResult:
    """One plan through the safe writer: execute_all with one consumer, whose error is raised."""
    return execute_all([plan], zk, kafka, conn, safety, confirm, many=False, read_back=read_back)[0]


def execute_all(
    plans: Sequence[Plan],
    zk: SpoutWriter | None,
    kafka: LogWriter | None,
    conn: Connection,
    safety: Safety,
    confirm: Confirm,
    *,
    many: bool,
    read_back: ReadBack = ReadBack(),
) -> list[RepairResult]:
    """One confirmation for every plan that can be written, then each through the safe writer. With `many`,
    a consumer whose write fails is reported with its error and the ones after it are not written, nor are
    those after an interrupt; with one consumer the error is raised."""
    runnable = {i for i, p in enumerate(plans) if safety.execute and not p.refused and p.writes}
    if not runnable:
        return [RepairResult(p) for p in plans]
    if not confirm([plans[i] for i in sorted(runnable)]):
        return [RepairResult(p, declined=i in runnable) for i, p in enumerate(plans)]
    outcomes: list[RepairResult] = []
    failed: OffctlError | None = None
    failed_on = None
    for i, plan in enumerate(plans):
        stopped = RepairResult(plan) if i not in runnable else _stopped(plan, failed, failed_on)
        if stopped is not None:
            outcomes.append(stopped)
            continue
        try:
            outcomes.append(_write(plan, zk, kafka, conn, safety, read_back))
        except OffctlError as exc:
            if not many:
                raise
            failed, failed_on = exc, plan.key
            outcomes.append(RepairResult(plan, error=str(exc), error_code=exc.exit_code))
    return outcomes


def _stopped(plan: Plan, failed: OffctlError | None, failed_on: ConsumerKey | None) -> RepairResult | None:
    """A plan left unwritten: Ctrl-C came while an earlier consumer's write was reported, or an earlier consumer's
    write failed or was interrupted (`failed`, on `failed_on`). None: the plan may be written."""
    if failed is None and interrupts.received():  # Ctrl-C while an earlier consumer's write was reported
        return RepairResult(
            plan, error="not written: interrupted (Ctrl-C or SIGTERM)", error_code=Interrupted.exit_code
        )
    if failed is not None:
        why = "the interrupt" if isinstance(failed, Interrupted) else "the failure"
        return RepairResult(plan, error=f"not written: stopped after {why} on {failed_on}", error_code=failed.exit_code)
    return None


def _write(
    plan: Plan,
    zk: SpoutWriter | None,
    kafka: LogWriter | None,
    conn: Connection,
    safety: Safety,
    read_back: ReadBack = ReadBack(),
) -> RepairResult:
    """Back the plan up, log its intent, send it through its store's writer, read it back and log the outcome;
    a failure or an interrupt on the way is logged and raised saying what it left (_conflict, _unavailable,
    _cut_off)."""
    logged = sent = written = interrupted = False
    said: tuple[str, ...] = ()  # what the read-back notes (metadata the broker did not keep, still resumed from)
    try:
        with interrupts.deferred():  # the backup and the intent lines are written whole, a Ctrl-C or not
            backup = _back_up(plan, conn, safety)
            logged = True
        if interrupts.received():
            raise KeyboardInterrupt  # it came while the backup was written: the store is not touched
        if plan.key.store not in ZK_STORES:
            check_unmoved(plan, kafka)
        sent = True
        _send(plan, zk, kafka)
        written = True
        interrupts.landed()  # the store has the change: from here on an interrupt must not cut its report short
        problems, said, back = verify_write(plan, zk, kafka, read_back)
        said += keep_after_image(plan, backup, back)
    except WriteConflict as exc:  # its message says whether anything was written
        if not logged:
            raise  # no backup or no intent: it says so, and nothing was changed
        raise _conflict(exc, plan, backup, conn, safety, sent) from None
    except StoreUnavailable as exc:
        raise _unavailable(exc, plan, backup, conn, safety, sent=sent, written=written) from None
    except KeyboardInterrupt:
        if not logged:
            raise  # before the backup: nothing to say but that offctl was interrupted
        if not written:
            raise _cut_off(plan, backup, conn, safety, sent) from None
        interrupts.landed()
        interrupted, problems = True, []
    return _landed(plan, backup, conn, safety, problems, said, interrupted=interrupted)


def _server(plan: Plan, conn: Connection) -> str:
    """The servers a plan is written to, as the audit log names them."""
    return f"zookeeper {conn.zk}" if plan.key.store in ZK_STORES else f"kafka {conn.bootstrap_servers}"


def _back_up(plan: Plan, conn: Connection, safety: Safety) -> Path:
    """Write the plan's before-image to a backup file and its intent to the audit log, before anything is
    written: WriteConflict, with nothing changed, when the audit log cannot take it."""
    backup = write_backup(plan, safety.backup_dir, clock_ms())
    try:  # the intent is on disk before the first write, or nothing is written
        append_audit(
            safety.audit_log, audit_lines(plan, plan.writes, backup, clock_ms(), _server(plan, conn), phase="intent")
        )
    except OSError as exc:
        raise WriteConflict(
            f"could not write the audit log {safety.audit_log} ({exc.strerror or exc}); "
            f"nothing was changed. Choose another with --audit-log"
        ) from None
    return backup


def _send(plan: Plan, zk: SpoutWriter | None, kafka: LogWriter | None) -> None:
    """Send the plan's writes through its store's writer: one versioned multi-op in ZooKeeper; in Kafka one commit
    request for the group, or deleting the group where it had no commits before (plan_restore_kafka)."""
    if plan.key.store in ZK_STORES:
        zk.write_versioned([(c.path, c.after_data, c.version) for c in plan.writes])
    elif any(c.delete for c in plan.writes):
        kafka.delete_group(plan.key.consumer)
    else:
        kafka.commit(plan.key.consumer, [(c.topic, c.partition, c.after, c.after_metadata) for c in plan.writes])


def _log_failed(plan: Plan, backup: Path, conn: Connection, safety: Safety, outcome: str) -> None:
    """Append a write's failure to the audit log, if it can: its intent is there, and the error says the rest."""
    try:
        with interrupts.deferred():
            append_audit(
                safety.audit_log,
                audit_lines(
                    plan, plan.writes, backup, clock_ms(), _server(plan, conn), phase="failed", outcome=outcome
                ),
            )
    except OSError:
        pass  # the intent line is there; the message below says the rest


def _conflict(
    exc: WriteConflict, plan: Plan, backup: Path, conn: Connection, safety: Safety, sent: bool
) -> WriteConflict:
    """A store's refusal after the backup, logged, with where the before-image is and, if it may have landed in
    part, how to undo it."""
    _log_failed(plan, backup, conn, safety, str(exc))
    # a conflict the store answered before changing anything says "nothing was written" (a versioned multi-op
    # rolled back, an ACL); any other, once sent, may have landed in part (a partition Kafka refused)
    return WriteConflict(f"{exc}{_trail(plan, backup, conn, safety, sent and NOTHING not in str(exc))}")


def _unavailable(
    exc: StoreUnavailable, plan: Plan, backup: Path, conn: Connection, safety: Safety, *, sent: bool, written: bool
) -> WriteConflict:
    """A store lost on the way, logged, saying whether the write was applied, may have been, or was not sent."""
    known = (
        "the write was applied, but reading it back failed"
        if written
        else "the write may or may not have been applied"
        if sent
        else NOTHING
    )
    _log_failed(plan, backup, conn, safety, f"{known}: {exc}")
    return WriteConflict(f"{known}: {exc}{_trail(plan, backup, conn, safety, sent)}")


def _cut_off(plan: Plan, backup: Path, conn: Connection, safety: Safety, sent: bool) -> Interrupted:
    """An interrupt before the store took the write, logged: Interrupted when nothing was sent, InterruptedWrite
    when the write may or may not have been applied."""
    interrupts.hold()  # a second Ctrl-C must not lose what follows: the audit log and the message
    known = (
        "interrupted during the write: it may or may not have been applied"
        if sent
        else f"interrupted before the write: {NOTHING}"
    )
    _log_failed(plan, backup, conn, safety, known)
    return (InterruptedWrite if sent else Interrupted)(f"{known}{_trail(plan, backup, conn, safety, sent)}")


def _landed(
    plan: Plan,
    backup: Path,
    conn: Connection,
    safety: Safety,
    problems: list[str],
    said: tuple[str, ...],
    *,
    interrupted: bool,
) -> RepairResult:
    """The outcome of a write the store took: verified or what the read-back found, appended to the audit log (a
    note says when it could not be), with its undo line."""
    outcome = (
        "interrupted after the write was applied, before it was verified"
        if interrupted
        else "verified"
        if not problems
        else "; ".join(problems)
    )
    try:
        append_audit(
            safety.audit_log, audit_lines(plan, plan.writes, backup, clock_ms(), _server(plan, conn), outcome=outcome)
        )
        audit, notes = safety.audit_log, said
    except OSError as exc:
        audit = None
        notes = said + (
            f"the change was made but its outcome could not be appended to the audit log "
            f"{safety.audit_log} ({exc.strerror or exc}); its intent is there",
        )
    if interrupted:
        notes += (f"{outcome}: check it with offctl inspect",)
    elif interrupts.received():
        notes += ("interrupted after the write was applied: it is reported in full",)
    return RepairResult(
        plan,
        executed=True,
        backup=backup,
        verified=not problems and not interrupted,
        problems=tuple(problems),
        audit_log=audit,
        notes=notes,
        undo=undo_command(plan, backup, conn, safety),
        interrupted=interrupted or interrupts.received(),
    )


NOTHING = "nothing was written"


def _trail(plan: Plan, backup: Path, conn: Connection, safety: Safety, sent: bool) -> str:
    """What follows the message of a write that failed or was cut off: where its before-image and audit log are,
    and what to do. A write never sent needs no restore. One that was sent may have landed in whole, in part or
    not at all: its undo line (undo_command's, pasted as it is, last on the line as "undo with: " prints it)
    puts back what differs from the before-image, and only that, so it is right whichever happened."""
    kept = f". The before-image is in {backup}; the audit log {safety.audit_log} has the change"
    if not sent:
        return f"{kept}; no restore is needed"
    return (
        f"; check with offctl inspect{kept}; undo with: {undo_command(plan, backup, conn, safety)}  # puts back "
        f"whatever part of the write landed; if none did, it finds nothing to change and exits 0"
    )


def outcome_exit_code(outcome: RepairResult) -> int:
    """The error's code when the write failed, 6 when an interrupt came after the write landed, 4 when a guard
    refused, 8 when the prompt was answered no, 5 when verification failed, 7 when the plan leaves a partition of its
    scope out, else 0."""
    if outcome.error_code:
        return outcome.error_code
    if outcome.interrupted:
        return InterruptedWrite.exit_code
    if outcome.plan.refused:
        return 4
    if outcome.declined:
        return NOT_CONFIRMED
    if outcome.verified is False:
        return 5
    if outcome.plan.left_out:
        return LEFT_OUT
    return 0


# after an interrupt, what an SRE must see first: a failed write, unread, refused, a partition left out
EXIT_PRIORITY = (5, 3, 4, NOT_CONFIRMED, LEFT_OUT)


def outcomes_exit_code(outcomes: Iterable[RepairResult]) -> int:
    """The exit code of a run over several consumers: interrupted after one of them was written (6), or before
    (130), else the most urgent of theirs."""
    outcomes = list(outcomes)
    codes = {outcome_exit_code(o) for o in outcomes}
    if codes & {Interrupted.exit_code, InterruptedWrite.exit_code}:
        wrote = InterruptedWrite.exit_code in codes or any(o.executed for o in outcomes)
        return InterruptedWrite.exit_code if wrote else Interrupted.exit_code
    return next((c for c in EXIT_PRIORITY if c in codes), max(codes, default=0))
