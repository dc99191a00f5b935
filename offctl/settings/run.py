"""What the settings of a run make, for the library to use: what one run reads and how it judges it (Reading: the
Connection, the Selection, the Profiles and the Estimates), and a write's safety (Safety). offctl.settings.resolve
makes them from the options, and checks a Reading once; the pipeline and the repairs read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from offctl.adapters.backup import state_dir
from offctl.core.plans.guards import QUIET_PERIOD_S
from offctl.core.rules.profiles import Profiles
from offctl.core.storm import jstorm
from offctl.core.time import expiry
from offctl.core.time.history import Earlier
from offctl.errors import UsageError
from offctl.settings.connection import Connection
from offctl.settings.kinds import TIME_LAG_BUDGET_S


@dataclass(frozen=True)
class Selection:
    spouts: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    topic: str | None = None
    all_groups: bool = False  # every group whose commits carry Storm metadata, besides those named
    listed_groups: tuple[str, ...] | None = None  # --all-groups' listing, already made (an audit task's share)
    log_topics: tuple[str, ...] = ()  # topics whose log offsets to read besides the consumers' (reset scopes)
    tridents: tuple[str, ...] = ()  # Trident txStateIds to show (none: every one under each --trident-root)
    jstorms: tuple[str, ...] = ()  # JStorm spouts "<topic>/<client id>" to show (none: every one under --jstorm-root)


@dataclass(frozen=True)
class ExpiryOptions:
    """What the user says for the commit-expiry estimate (offctl.core.time.expiry)."""

    horizon_s: float = expiry.HORIZON_S  # --commit-expiry-horizon
    retention_minutes: int | None = None  # --offsets-retention-minutes: used where the broker does not report it
    moved_after: Mapping[tuple, int] | None = None  # serve: when it last saw each committed offset move


@dataclass(frozen=True)
class Estimates:
    """What the reads that follow the analysis are told: their time budget (0: nothing read), the commit-expiry
    options, serve's and watch's pace per partition (offctl.core.time.history.falling_behind) for RETENTION_RISK's
    default rule, their earlier observations per partition, for the catch-up estimate
    (offctl.core.time.history.catch_ups; None: no history, as inspect), and the Kafka release a what-if judges the
    spouts against instead of the brokers."""

    time_lag_budget: float = TIME_LAG_BUDGET_S  # seconds, --time-lag-budget
    expiry: ExpiryOptions = ExpiryOptions()
    behind: Mapping[tuple, float] | None = None
    earlier: Earlier | None = None
    kafka_release: str | None = None  # --kafka-release: the what-if's Kafka release (offctl.core.storm.kafka_releases)


@dataclass(frozen=True)
class Reading:
    """What one run reads and how it judges what it read: where (the connection), what (the selection), by which
    settings each consumer is judged (the profiles), and what the reads after the analysis are told (the
    estimates). Made and checked once, by offctl.settings.resolve; the pipeline takes it whole. A face that reads in
    cycles or in chunks derives its own with `replace` (serve's and watch's per-cycle budget, an audit task's
    chunk, storm-kafka-monitor's query)."""

    conn: Connection = Connection()
    selection: Selection = Selection()
    profiles: Profiles = Profiles()
    estimates: Estimates = Estimates()

    def within(self, time_lag_budget: float) -> Reading:
        """This reading with its time-lag budget at most `time_lag_budget` seconds (a cycle's share, a deadline's)."""
        budget = min(self.estimates.time_lag_budget, time_lag_budget)
        return replace(self, estimates=replace(self.estimates, time_lag_budget=budget))


@dataclass(frozen=True)
class Safety:
    execute: bool = False
    force: frozenset[str] = frozenset()
    quiet_period_s: float = QUIET_PERIOD_S
    backup_dir: Path = field(default_factory=lambda: state_dir() / "backups")
    audit_log: Path = field(default_factory=lambda: state_dir() / "audit.log")


def validate(reading: Reading) -> Reading:
    """The reading, once its command line is known to inspect something: refuse one that cannot, before connecting
    anywhere."""
    conn, selection = reading.conn, reading.selection
    _check_servers(conn, selection)
    _check_roots(conn, selection)
    if not (conn.zk_roots or conn.trident_roots or conn.jstorm_roots or selection.groups or selection.all_groups):
        raise UsageError(
            "nothing to inspect: give --zk-root (old spouts, with --zk) and/or --group or "
            "--all-groups (new spouts, with --bootstrap-servers)"
        )
    for spout in selection.spouts:
        check_spout_id(spout)
    for spout in selection.jstorms:
        check_jstorm_id(spout)
    for group in selection.groups:
        if not group.strip():
            raise UsageError("--group needs a group id, not an empty string")
    return reading


def _check_servers(conn: Connection, selection: Selection) -> None:
    """Refuse a ZooKeeper or Kafka option without the server it is read from."""
    if (conn.zk_roots or selection.spouts) and not conn.zk:
        raise UsageError("--zk-root and --spout need --zk (the ZooKeeper connect string)")
    if (selection.groups or selection.all_groups) and not conn.bootstrap_servers:
        raise UsageError(f"{'--group' if selection.groups else '--all-groups'} needs --bootstrap-servers")
    if conn.trident_roots and not conn.zk:
        raise UsageError("--trident-root needs --zk (the ZooKeeper connect string of Storm's transactional state)")
    if conn.jstorm_roots and not conn.zk:
        raise UsageError("--jstorm-root needs --zk (the ZooKeeper of the JStorm spouts' kafka.zookeeper.hosts)")


def _check_roots(conn: Connection, selection: Selection) -> None:
    """Refuse a spout named without the root it is under. Checked after the servers, so after --trident-root's
    --zk too: a command line lacking both that and a root here names --spout without --zk, refused first either
    way, so each command line is refused with the error it always was."""
    if selection.tridents and not conn.trident_roots:
        raise UsageError("--trident needs --trident-root (Storm's transactional.zookeeper.root)")
    if selection.spouts and not conn.zk_roots:
        raise UsageError("--spout needs --zk-root: storm-kafka has no default zkRoot")
    if selection.jstorms and not conn.jstorm_roots:
        raise UsageError("--jstorm needs --jstorm-root (JStorm's storm.zookeeper.root, /jstorm by default)")


def check_jstorm_id(spout: str) -> None:
    """A JStorm spout as --jstorm names it: its kafka.topic, '/', its kafka.client.id (jstorm.consumer_id), each a
    ZooKeeper node name."""
    named = jstorm.split_id(spout)
    if named is None or any(part in (".", "..") for part in named):
        raise UsageError(f"--jstorm {spout!r} is not TOPIC/CLIENT_ID (the spout's kafka.topic and kafka.client.id)")


def check_spout_id(spout: str) -> None:
    """A spoutConfig.id as it can stand in committedPath: ZooKeeper path segments, '/' between them (ids
    may contain '/': committedPath is zkRoot + "/" + id + "/" + partition id)."""
    if not spout or any(seg in ("", ".", "..") for seg in spout.split("/")):
        raise UsageError(f"--spout {spout!r} is not a spout id (ZooKeeper node names, '/' between them)")
