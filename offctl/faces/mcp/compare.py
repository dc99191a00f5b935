"""The state a stored plan saw, and how it is compared with the state read again just before its write: a
before-value, a change or a guard's verdict that differs refuses; an offset that only moved with the log is said."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from offctl.core.plans.plan import Plan
from offctl.core.results.mcp import Seen, State


def state_of(plan: Plan) -> State:
    """What a plan saw and would write, as it is bound."""
    return State(
        str(plan.key),
        tuple(
            Seen(
                c.path or f"{c.topic}/{c.partition}",
                c.topic,
                c.partition,
                c.path,
                c.version,
                c.before,
                c.before_data,
                c.before_metadata,
                c.had_commit,
                c.action,
                c.after,
                c.after_data,
                c.after_metadata,
            )
            for c in plan.changes
        ),
        tuple((g.guard, g.status) for g in plan.guards),
        plan.group_had_commits,
    )


@dataclass(frozen=True)
class Comparison:
    """What differs between the state a plan saw and the state read just before the write: `changed` refuses;
    `moved` (a target that follows the log, whose offsets moved with it) is said, not refused."""

    changed: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()  # guards whose verdict differs: the state they judge changed too
    moved: tuple[str, ...] = ()

    @property
    def same(self) -> bool:
        return not self.changed and not self.guards


def _offset_text(c: Seen) -> str:
    if c.path is not None:
        return f"offset {c.before} (version {c.version})" if c.version is not None and c.version >= 0 else "no record"
    return (
        f"offset {c.before}" + (f", metadata {c.before_metadata!r}" if c.before_metadata else "")
        if c.had_commit
        else "no commit"
    )


def compare(saw: Sequence[State], now: Sequence[State], *, follows_log: bool = False) -> Comparison:
    """Compare the states, consumer by consumer and change by change: a before-value that differs in any byte,
    version, offset or metadata; a change that appeared or is gone; a guard whose verdict differs; a different
    write (unless `follows_log`: then a different after-offset is only said)."""
    changed: list[str] = []
    guards: list[str] = []
    moved: list[str] = []
    was_by, now_by = {s.consumer: s for s in saw}, {s.consumer: s for s in now}
    changed += [f"{c}: no longer planned" for c in was_by if c not in now_by]
    changed += [f"{c}: planned now, not in the plan" for c in now_by if c not in was_by]
    for consumer in (c for c in was_by if c in now_by):
        was, is_ = was_by[consumer], now_by[consumer]
        differ, follow = _compare_changes(consumer, was, is_, follows_log)
        changed += differ + _group_commits_change(consumer, was, is_)
        moved += follow
        guards += _guard_changes(consumer, was, is_)
    return Comparison(tuple(changed), tuple(guards), tuple(moved))


def _compare_changes(consumer: str, was: State, is_: State, follows_log: bool) -> tuple[list[str], list[str]]:
    """One consumer's changes then and now, where by where: those gone or new, and those that differ (changed), or
    whose write only moved with the log (moved)."""
    old, new = {c.where: c for c in was.changes}, {c.where: c for c in is_.changes}
    changed = [f"{consumer} {w}: in the plan, gone now" for w in old if w not in new]
    changed += [f"{consumer} {w}: not in the plan, there now ({_offset_text(new[w])})" for w in new if w not in old]
    moved: list[str] = []
    for where in (w for w in old if w in new):
        said, only_moved = _compare_change(f"{consumer} {where}", old[where], new[where], follows_log)
        if said is not None:
            (moved if only_moved else changed).append(said)
    return changed, moved


def _compare_change(label: str, a: Seen, b: Seen, follows_log: bool) -> tuple[str | None, bool]:
    """What differs in one change, said (None: nothing), and whether it only moved with the log: the same action
    to another after-offset, for a target that follows the log. A different before-value always counts."""
    before_a = (a.version, a.before, a.before_data, a.before_metadata, a.had_commit)
    before_b = (b.version, b.before, b.before_data, b.before_metadata, b.had_commit)
    if before_a != before_b:
        why = (
            f"{_offset_text(a)} then, {_offset_text(b)} now"
            if _offset_text(a) != _offset_text(b)
            else "other bytes now"
        )
        return f"{label}: {why}", False
    if (a.action, a.after, a.after_data, a.after_metadata) != (b.action, b.after, b.after_data, b.after_metadata):
        return (
            f"{label}: planned {a.action} to {a.after}, now {b.action} to {b.after}",
            follows_log and a.action == b.action,
        )
    return None, False


def _group_commits_change(consumer: str, was: State, is_: State) -> list[str]:
    """Whether the group had commits then and has now, said when that differs."""
    if was.group_had_commits == is_.group_had_commits:
        return []
    return [
        f"{consumer}: the group {'had' if was.group_had_commits else 'had no'} commits then, "
        f"{'has' if is_.group_had_commits else 'has none'} now"
    ]


def _guard_changes(consumer: str, was: State, is_: State) -> list[str]:
    """The guards whose verdict now differs from the plan's (or that are not judged now)."""
    verdicts = dict(is_.guards)
    return [
        f"{consumer}: guard {g} was {s}, now {verdicts.get(g, 'not judged')}"
        for g, s in was.guards
        if verdicts.get(g) != s
    ]
