"""What a reset, restore, migrate or delete came to for one plan (offctl.repair), as render/plans.py renders it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from offctl.core.plans.plan import Plan


@dataclass(frozen=True)
class RepairResult:
    """What a reset, restore, migrate or delete did with one plan: written or not, verified, and what went wrong."""

    plan: Plan
    executed: bool = False  # the write went to the store
    declined: bool = False  # the operator answered no at the prompt
    backup: Path | None = None
    verified: bool | None = None  # None: nothing was written
    problems: tuple[str, ...] = ()  # what verification found
    audit_log: Path | None = None
    notes: tuple[str, ...] = ()
    undo: str | None = None  # the command that puts the before-image back, to paste as it is
    interrupted: bool = False  # Ctrl-C or SIGTERM came once the write had landed: reported in full, exit 6
    error: str | None = None  # in a run over several consumers: why this one was not (fully) written
    error_code: int = 0  # and the exit code that error carries
