"""Applying a stored plan: only on a server that may write, a plan known, unexpired and not applied before, every
before-value and guard verdict read again unchanged, the library's guards passing, and the human's yes; then the
CLI's write (backup, audit log, versioned write, read-back, undo line) and what it did (ApplyResult)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from offctl.core.plans.plan import Plan
from offctl.core.results.mcp import ApplyResult, StoredPlan
from offctl.core.results.repair import RepairResult
from offctl.errors import OffctlError
from offctl.faces.mcp.compare import compare, state_of
from offctl.faces.mcp.plans import KeptPlan, PlanStore, digest_now
from offctl.render import mcp as documents

WRITTEN, VERIFICATION_FAILED, REFUSED, DECLINED, FAILED, UNCHANGED = (
    "written",
    "verification-failed",
    "refused",
    "declined",
    "failed",
    "unchanged",
)


NOT_WRITTEN = "Nothing was written."


def apply(
    store: PlanStore,
    plan_id: str,
    *,
    allow_writes: bool,
    confirm: Callable[[str], bool] | None,
    now: float | None = None,
) -> ApplyResult:
    """Apply a stored plan, only if the server may write, the plan is known, unexpired and not applied before,
    every before-value and guard verdict read again just before the write is what the plan saw, the library's
    guards pass, and the human, shown the plan's text by `confirm`, says yes. `confirm` None: this client cannot
    ask a human, so the result names the command line to run by hand."""
    stored = store.get(plan_id)
    command = stored.command if stored else None
    if not allow_writes:
        return ApplyResult(
            plan_id,
            REFUSED,
            "this offctl mcp server was started without --allow-writes: it "
            f"writes nothing. {NOT_WRITTEN}" + _by_hand(command),
            command=command,
        )
    entry, why = store._claim(plan_id, store.clock() if now is None else now)
    if entry is None:
        return ApplyResult(plan_id, REFUSED, f"{why}. {NOT_WRITTEN}", command=command)
    ended = "applying"  # an apply cut short by what offctl does not report (a bug, KeyboardInterrupt) is not retried
    try:
        result, ended = _apply(entry, confirm)
        return result
    finally:
        store._end(plan_id, ended)


def _by_hand(command: str | None) -> str:
    return f" An operator can run it by hand, and is asked before it writes: {command}" if command else ""


def _apply(entry: KeptPlan, confirm: Callable[[str], bool] | None) -> tuple[ApplyResult, str | None]:
    """Apply a claimed plan: refused before asking when it cannot be written, else the library call run again with
    the human asked in its Confirm, and judged by what it read again. Returns the result and what ended the plan."""
    stored = entry.plan
    unasked = _before_asking(stored, confirm)
    if unasked is not None:
        return unasked
    seen: dict = {}

    def check(plans: Sequence[Plan]) -> bool:
        """The library's Confirm: the plans as read just before the write, and then the human."""
        found = compare(stored.state, [state_of(p) for p in plans], follows_log=stored.follows_log)
        if not found.same:
            return False
        seen["asked"] = True
        try:
            seen["yes"] = bool(confirm(stored.text))
        except Exception as exc:  # the face's elicitation failed: no answer is no
            seen["error"] = f"could not ask the human ({type(exc).__name__}: {exc})"
            return False
        return seen["yes"]

    try:
        outcomes = entry.call(entry.run.safety(True), check)
    except OffctlError as exc:
        if seen.get("yes"):  # the library's message says what was and was not written
            return ApplyResult(stored.id, FAILED, str(exc), command=stored.command), "applied"
        return _refused(stored, f"the state could not be read again: {exc}")
    return _after_asking(stored, outcomes, seen)


def _refused(stored: StoredPlan, why: str, ended: str | None = None) -> tuple[ApplyResult, str | None]:
    """A refusal: nothing was written, and what ended the plan (None: it may be applied again)."""
    return ApplyResult(stored.id, REFUSED, f"{why}. {NOT_WRITTEN}", command=stored.command), ended


def _before_asking(stored: StoredPlan, confirm: Callable[[str], bool] | None) -> tuple[ApplyResult, str | None] | None:
    """Why a plan is not run again to be written (its guards refused it, it writes nothing, no human can be asked,
    the backup it restores changed); None when it is."""
    plan_id, command = stored.id, stored.command
    if stored.refused:
        return _refused(
            stored,
            "the plan's guards refused it when it was made ("
            + "; ".join(stored.refused)
            + "): an assistant cannot override a guard; once it passes, ask for a new plan",
            "stale",
        )
    if not stored.writes:  # nothing to change is no refusal: a restore after a write that never landed, or run twice
        return ApplyResult(
            plan_id, UNCHANGED, f"nothing to change: the plan writes nothing. {NOT_WRITTEN}", command=command
        ), "applied"
    if confirm is None:
        return _refused(stored, "this MCP client cannot ask a human for a yes (no elicitation)" + _by_hand(command))
    if stored.digest is not None and digest_now(Path(stored.request["backup"])) != stored.digest:
        return _refused(
            stored, "state changed since the plan: the backup file is not what it was; ask for a new plan", "stale"
        )
    return None


def _after_asking(
    stored: StoredPlan, outcomes: Sequence[RepairResult], seen: Mapping[str, str | bool]
) -> tuple[ApplyResult, str | None]:
    """What the run again came to: refused when the state read again differs, a guard refuses now, the human could
    not be asked or there was nothing to ask; declined on the human's no; else what the write did."""
    plan_id, command = stored.id, stored.command
    fresh = [o.plan for o in outcomes]
    found = compare(stored.state, [state_of(p) for p in fresh], follows_log=stored.follows_log)
    if found.changed:
        return _refused(stored, f"state changed since the plan: {_listed(found.changed)}; ask for a new plan", "stale")
    guards = [f"{g.guard}: {g.message}" for p in fresh for g in p.refused]
    if guards:  # the plan's own guards all passed (a refused plan is refused above): one refuses now
        return _refused(
            stored,
            "refused by the guards: "
            + "; ".join(guards)
            + " (an assistant cannot override a guard; once it passes, apply again or ask for a new plan)",
        )
    if found.guards:
        return _refused(stored, f"state changed since the plan: {_listed(found.guards)}; ask for a new plan", "stale")
    if "error" in seen:
        return _refused(stored, seen["error"] + _by_hand(command))
    if not seen.get("asked"):
        return _refused(stored, "the state read again has nothing to write; ask for a new plan", "stale")
    if not seen.get("yes"):
        return ApplyResult(
            plan_id, DECLINED, f"the human declined the plan. {NOT_WRITTEN}", command=command
        ), "declined"
    return _written(plan_id, outcomes, found.moved, command), "applied"


def _listed(lines: Sequence[str], most: int = 10) -> str:
    return "; ".join(lines[:most]) + (f"; and {len(lines) - most} more" if len(lines) > most else "")


def _written(plan_id: str, outcomes: Sequence[RepairResult], moved: Sequence[str], command: str) -> ApplyResult:
    from offctl.render.plans import outcome_lines

    outcome = outcomes[0]  # a plan is of one consumer
    status, reason = _write_status(outcomes)
    notes = tuple(f"the log moved since the plan: {m}" for m in moved) + tuple(n for o in outcomes for n in o.notes)
    return ApplyResult(
        plan_id,
        status,
        reason,
        written=any(o.executed for o in outcomes),
        document=documents.plan_document(outcomes),
        backup=str(outcome.backup) if outcome.backup else None,
        audit_log=str(outcome.audit_log) if outcome.audit_log else None,
        audit=tuple(_audit_lines(outcome)),
        undo=outcome.undo,
        verified=outcome.verified,
        problems=tuple(p for o in outcomes for p in o.problems),
        notes=notes,
        lines=tuple(line for o in outcomes for line in outcome_lines(o)),
        command=command,
    )


def _write_status(outcomes: Sequence[RepairResult]) -> tuple[str, str | None]:
    """A write's status (failed, written, or verification-failed when a read-back found problems) and its errors."""
    errors = [o.error for o in outcomes if o.error]
    status = FAILED if errors else WRITTEN if all(o.verified for o in outcomes if o.executed) else VERIFICATION_FAILED
    return status, "; ".join(errors) or None


def _audit_lines(outcome: RepairResult) -> list[str]:
    """The lines this write appended to the audit log (intent, then done), found by its backup."""
    if outcome.audit_log is None or outcome.backup is None:
        return []
    try:
        text = Path(outcome.audit_log).read_text(encoding="utf-8")
    except OSError:
        return []
    mine = []
    for line in text.splitlines():
        try:
            if json.loads(line).get("backup") == str(outcome.backup):
                mine.append(line)
        except ValueError:
            continue
    return mine
