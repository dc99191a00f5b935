"""What offctl mcp's plan tools keep and answer (offctl.faces.mcp): a plan as stored, the state it saw, an
apply's result."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Seen:
    """One change as the plan read and planned it: the before-value (bytes and version, or offset and metadata)
    and what it writes."""

    where: str  # the ZooKeeper path, or topic/partition
    topic: str | None
    partition: int
    path: str | None
    version: int | None
    before: int | None
    before_data: bytes | None
    before_metadata: str | None
    had_commit: bool
    action: str
    after: int | None
    after_data: bytes | None
    after_metadata: str | None


@dataclass(frozen=True)
class State:
    """One consumer's plan as bound: its changes and the guards' verdicts (statuses only: their messages carry
    ages that move with the clock)."""

    consumer: str
    changes: tuple[Seen, ...]
    guards: tuple[tuple[str, str], ...]
    group_had_commits: bool | None = None


@dataclass(frozen=True)
class StoredPlan:
    """A plan an assistant asked for: its arguments as given (`request`), what it saw (`state`), its dry run
    (`document`, render.outcome_document), the text a human is shown (`text`), the offctl command line an operator
    would run by hand (`command`), and its lifetime. The library call it re-runs is kept beside it (KeptPlan)."""

    id: str
    kind: str  # reset | restore | migrate | delete
    context: str
    request: dict
    state: tuple[State, ...]
    document: dict
    text: str
    command: str
    created: float  # seconds since the epoch
    expires: float
    follows_log: bool = False
    refused: tuple[str, ...] = ()  # guards that refused the dry run: "guard: message"
    writes: int = 0  # how many changes it writes
    digest: str | None = None  # restore: the backup file's sha256 when planned


@dataclass(frozen=True)
class ApplyResult:
    """What apply did. `status`: written, verification-failed (written; the read-back found `problems`), refused
    (nothing written: `reason`), declined (the human said no: nothing written), failed (`reason` says whether
    the write landed) or unchanged (the plan writes nothing, so there was nothing to change: a restore whose
    partitions all hold their before-image already). `audit`: the audit-log lines the write appended, as the CLI
    writes them. `command`: the offctl command line an operator can run by hand instead."""

    plan_id: str
    status: str
    reason: str | None = None
    written: bool = False
    document: dict | None = None  # render.outcome_document of the run that wrote
    backup: str | None = None
    audit_log: str | None = None
    audit: tuple[str, ...] = ()
    undo: str | None = None
    verified: bool | None = None
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    lines: tuple[str, ...] = ()  # render.outcome_lines: what happened, in words
    command: str | None = None
