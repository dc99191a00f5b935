"""After a write: the read-back that verifies it, and the undo line that puts its before-image back."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from offctl.adapters.backup import record_read_back
from offctl.core.plans.plan import Plan
from offctl.core.plans.verify import verify_jstorm, verify_kafka, verify_zookeeper
from offctl.core.records.model import JSTORM, TRIDENT, ZK_STORES
from offctl.errors import WriteConflict
from offctl.ports import LogWriter, SpoutWriter
from offctl.repair.reads import ReadBack
from offctl.settings.connection import STORM_ROOT, Connection
from offctl.settings.run import Safety


def undo_command(plan: Plan, backup: Path, conn: Connection, safety: Safety) -> str:
    """`offctl restore BACKUP --execute` with every setting the write needed, so that it works pasted at once:
    its servers (--zk also for a group: the running-topology guard reads Storm's root there), Storm's root,
    the guards' settings (--quiet-period as given, the --force flags but changed-since, which holds for one run;
    a topology still running is still running), and its backup directory and audit log. Secrets (--zk-auth,
    --kafka-config) are never printed: give them as the write had them, or through OFFCTL_ZK_AUTH and
    OFFCTL_KAFKA_CONFIG."""
    parts = ["offctl", "restore", str(backup), "--execute", *server_flags(conn), *safety_flags(safety)]
    # changed-since is forced per run: what changed before this write says nothing of what changes after it
    for guard in sorted(g.guard for g in plan.guards if g.status == "overridden" and g.guard != "changed-since"):
        parts += ["--force", guard]
    return shlex.join(parts)


def server_flags(conn: Connection, roots: Sequence[str] = ()) -> list[str]:
    """The flags that name a write's servers on a command line an operator pastes: --zk, then `roots` (--zk-root
    or --trident-root and their values), --bootstrap-servers, and Storm's root when it is not the default; never a
    secret."""
    parts = ["--zk", conn.zk] if conn.zk else []
    parts += roots
    if conn.bootstrap_servers:
        parts += ["--bootstrap-servers", conn.bootstrap_servers]
    if conn.storm_root != STORM_ROOT:
        parts += ["--storm-root", conn.storm_root]
    return parts


def safety_flags(safety: Safety) -> list[str]:
    """The safety settings a write used that differ from the defaults: --quiet-period, --backup-dir, --audit-log."""
    defaults, parts = Safety(), []
    if safety.quiet_period_s != defaults.quiet_period_s:
        parts += ["--quiet-period", seconds(float(safety.quiet_period_s))]
    if safety.backup_dir != defaults.backup_dir:
        parts += ["--backup-dir", str(safety.backup_dir)]
    if safety.audit_log != defaults.audit_log:
        parts += ["--audit-log", str(safety.audit_log)]
    return parts


def seconds(value: float) -> str:
    """A number of seconds as an option takes it back: 0, 2.5, 3600."""
    return str(int(value)) if value.is_integer() else repr(value)


def verify_write(
    plan: Plan, zk: SpoutWriter | None, kafka: LogWriter | None, read_back: ReadBack
) -> tuple[list[str], tuple[str, ...], dict[tuple[str, int], tuple[int, str | None]]]:
    """What reading the written change back finds wrong (nothing: verified), what it notes, and a group's
    commits as read back (empty for ZooKeeper, whose read-back must hold exactly the bytes written)."""
    if plan.key.store in ZK_STORES:
        verify = verify_jstorm if plan.key.store == JSTORM else verify_zookeeper
        problems = verify(plan, zk.read_data([c.path for c in plan.writes]))
        return (problems + _newer_txids(plan, zk) if plan.key.store == TRIDENT else problems), (), {}
    back = {(c.topic, c.partition): (c.offset, c.metadata) for c in kafka.group_commits([plan.key.consumer])}
    found = verify_kafka(plan, back, read_back.profile, read_back.running, read_back.topology_id)
    return list(found.problems), found.notes, back


def keep_after_image(
    plan: Plan, backup: Path, back: Mapping[tuple[str, int], tuple[int, str | None]]
) -> tuple[str, ...]:
    """The backup's after-image is what the write left. Where the broker kept a commit other than the one sent
    (a broker that drops commit metadata; Apache Kafka keeps it, and then nothing is rewritten), the backup is
    rewritten with the commits as read back, so that its undo compares the group with what the write really
    left. Returns a note when the backup could not be rewritten."""
    kept = {
        (c.topic, c.partition): back[(c.topic, c.partition)]
        for c in plan.writes
        if not c.delete
        and (c.topic, c.partition) in back
        and back[(c.topic, c.partition)] != (c.after, c.after_metadata)
    }
    if not kept:
        return ()
    try:
        record_read_back(backup, kept)
    except OSError as exc:
        return (
            f"the backup {backup} keeps the commits as sent, not as the broker kept them "
            f"({exc.strerror or exc}): its undo will be refused by changed-since on "
            f"{len(kept)} partition(s) (--force changed-since overrides)",
        )
    return ()


def _newer_txids(plan: Plan, zk: SpoutWriter) -> list[str]:
    """A Trident spout resumes from its highest txid: a newer one written meanwhile overrides the change (a batch
    rewritten beside its partition's row is checked by its read-back alone)."""
    newest = {
        n.path.rsplit("/", 1)[0]: n.path for n in zk.read_trident(plan.key.zk_root) if n.spout_id == plan.key.consumer
    }
    return [
        f"{now} was written after {c.path}: the spout resumes from it, not from the change"
        for c in plan.writes
        if c.batch is None and (now := newest.get(c.path.rsplit("/", 1)[0], c.path)) != c.path
    ]


def check_unmoved(plan: Plan, kafka: LogWriter) -> None:
    """Kafka has no conditional commit: read the group again just before writing and abort if a planned
    partition moved since the plan was made."""
    group = plan.key.consumer
    now = {(c.topic, c.partition): c for c in kafka.group_commits([group])}
    moved = []
    if any(c.delete for c in plan.writes):  # deleting the group: no commit may have appeared elsewhere
        planned = {(c.topic, c.partition) for c in plan.writes}
        moved += [f"{t}/{p} (was none, now {c.offset})" for (t, p), c in sorted(now.items()) if (t, p) not in planned]
    for c in plan.writes:
        commit = now.get((c.topic, c.partition))
        was = (c.before, c.before_metadata) if c.had_commit else None
        if ((commit.offset, commit.metadata) if commit else None) != was:
            moved.append(f"{c.topic}/{c.partition} (was {c.before}, now {commit.offset if commit else 'none'})")
    if moved:
        raise WriteConflict(f"nothing was written: group {group} changed since it was read: {', '.join(moved[:10])}")
