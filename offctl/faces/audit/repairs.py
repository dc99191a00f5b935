"""`offctl audit --repair`: which findings' partitions a repair moves (to the log start), each consumer's repair
planned with fresh reads and guards, and with --execute written through reset's safe writer (offctl.repair), one
confirmation for all, each consumer written only if its plan is still the one shown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from offctl import interrupts
from offctl.core.plans.targets import Scope, Target
from offctl.core.records.model import JSTORM, KAFKA, TRIDENT, ZOOKEEPER, ConsumerKey
from offctl.core.results.repair import RepairResult
from offctl.core.rules.profiles import Profiles
from offctl.core.storm.releases import SpoutProfile
from offctl.errors import NOT_CONFIRMED, Interrupted, InterruptedWrite, OffctlError, UsageError
from offctl.repair.reset import ResetRequest, reset
from offctl.repair.writer import outcome_exit_code
from offctl.settings.connection import Connection

# --repair values: the finding codes whose safe target is unambiguous (the log start), and a name for both.
REPAIRABLE = ("OFFSET_BELOW_LOG_START", "OFFSET_ABOVE_LOG_END")
REPAIR_CHOICES = {"out-of-range": REPAIRABLE, **{code: (code,) for code in REPAIRABLE}}

# --- repair ----------------------------------------------------------------------------------------------


def repair_codes(choices: Iterable[str]) -> frozenset[str]:
    codes: set[str] = set()
    for choice in choices:
        if choice not in REPAIR_CHOICES:
            raise UsageError(
                f"--repair {choice!r}: offctl repairs only where the safe target is unambiguous: "
                f"{', '.join(REPAIR_CHOICES)}. Fix other findings with `offctl reset`"
            )
        codes.update(REPAIR_CHOICES[choice])
    return frozenset(codes)


@dataclass(frozen=True)
class Repair:
    """The partitions of one consumer an audit found out of range."""

    key: ConsumerKey
    partitions: frozenset[tuple[str, int]]
    codes: frozenset[str]


def repairs(findings: Iterable[Mapping], codes: frozenset[str]) -> list[Repair]:
    """Group the findings to repair by consumer (finding dicts as the audit wrote them)."""
    found: dict[ConsumerKey, tuple[set, set]] = {}
    for f in findings:
        if f["code"] in codes and f["topic"] is not None and f["partition"] is not None:
            key = ConsumerKey(f["store"], f["consumer"], f["zk_root"])
            parts, seen = found.setdefault(key, (set(), set()))
            parts.add((f["topic"], f["partition"]))
            seen.add(f["code"])
    return [
        Repair(key, frozenset(parts), frozenset(seen))
        for key, (parts, seen) in sorted(found.items(), key=lambda kv: (kv[0].store, str(kv[0])))
    ]


def repair_request(repair: Repair) -> ResetRequest:
    """The reset request that moves one consumer's out-of-range partitions to the log start."""
    topics: dict[str, set[int]] = {}
    for t, p in repair.partitions:
        topics.setdefault(t, set()).add(p)
    target = Target("repair", repair=repair.partitions, source="audit --repair " + ",".join(sorted(repair.codes)))
    common = dict(scope=Scope({t: frozenset(ps) for t, ps in sorted(topics.items())}), target=target)
    if repair.key.store == ZOOKEEPER:
        return ResetRequest(spout=repair.key.consumer, zk_root=repair.key.zk_root, **common)
    if repair.key.store == TRIDENT:  # as `offctl reset --trident ID --trident-root ROOT` plans it
        return ResetRequest(trident=repair.key.consumer, zk_root=repair.key.zk_root, **common)
    if repair.key.store == JSTORM:  # as `offctl reset --jstorm TOPIC/CLIENT_ID --jstorm-root ROOT` plans it
        return ResetRequest(jstorm=repair.key.consumer, zk_root=repair.key.zk_root, **common)
    if repair.key.store == KAFKA:
        return ResetRequest(groups=(repair.key.consumer,), **common)
    raise UsageError(f"{repair.key}: offctl does not know how to repair a consumer of store {repair.key.store!r}")


def _declined(repair: Repair, exc: OffctlError):
    """A consumer the repair cannot plan: an empty plan whose result says why, with the error's exit code."""
    from offctl.core.plans.plan import Plan

    request_target = Target(
        "repair", repair=repair.partitions, source="audit --repair " + ",".join(sorted(repair.codes))
    )
    why = f"not repaired: {exc}"
    return RepairResult(
        Plan("reset", repair.key, request_target.describe(), (), 0, warnings=(why,)),
        error=why,
        error_code=exc.exit_code,
    )


def plan_repair(conn: Connection, repair: Repair, safety, profile: SpoutProfile = SpoutProfile()) -> tuple[object, int]:
    """One consumer's repair planned as a dry run through reset (fresh reads, guards), or declined with the
    reason when it cannot be planned: one consumer's problem never stops the others (nor crashes the audit)."""
    try:
        outcome = reset(conn, repair_request(repair), replace(safety, execute=False), lambda plans: False, profile)[0]
    except (Interrupted, KeyboardInterrupt):
        raise
    except OffctlError as exc:
        outcome = _declined(repair, exc)
    return outcome, outcome_exit_code(outcome)


def nothing_to_repair(choices: Iterable[str]) -> str:
    """What `audit --repair` says when the audit found nothing it repairs (stderr, and the JSON's repair_note)."""
    return (
        f"nothing to repair: no {' or '.join(sorted(repair_codes(choices)))} finding in this audit; "
        f"nothing was planned or written"
    )


# --- repair through reset's safe writer ---------------------------------------------------------------------


def _writes(plan) -> list[tuple]:
    return [(c.path, c.topic, c.partition, c.before, c.after) for c in plan.writes]


def repair_all(
    conn: Connection, items: Sequence[Repair], safety, confirm_all, profiles: Profiles = Profiles()
) -> list[tuple[object, int]]:
    """Plan every consumer's repair (fresh reads, guards), and with safety.execute apply them: one confirmation for
    all, then each consumer through reset's safe writer, written only if its plan is still the one shown; a group's
    commits are verified against its spout profile (the one `profiles` resolves for it), as its findings were
    made. Returns (RepairResult, exit code) per consumer; one consumer's failure does not
    stop the others, an interrupt does."""
    spouts = [profiles.judging(r.key)[1].spout for r in items]
    planned = [plan_repair(conn, r, safety, p) for r, p in zip(items, spouts)]
    if not safety.execute:
        return planned
    dry = [o for o, _ in planned]
    runnable = _runnable(dry)
    if runnable and not confirm_all([dry[i].plan for i in sorted(runnable)]):
        return [(replace(o, declined=True), NOT_CONFIRMED) if i in runnable else planned[i] for i, o in enumerate(dry)]
    return _write_repairs(conn, items, planned, runnable, safety, spouts)


def _runnable(dry: Sequence) -> set[int]:
    """Which planned repairs (by index) would write: planned without an error or a refusal, with writes."""
    return {i for i, o in enumerate(dry) if not o.error and not o.plan.refused and o.plan.writes}


def _write_repairs(
    conn: Connection,
    items: Sequence[Repair],
    planned: list[tuple[object, int]],
    runnable: set[int],
    safety,
    profiles: Sequence[SpoutProfile],
) -> list[tuple[object, int]]:
    """Write the confirmed repairs one consumer after another; the others keep their plan's result, and after an
    interrupt none is written."""
    done = []
    for i, (item, (shown, _), profile) in enumerate(zip(items, planned, profiles)):
        if i not in runnable:
            done.append(planned[i])
        elif interrupts.received():  # Ctrl-C during or after an earlier repair: no more writes
            done.append(_interrupted(shown, wrote=any(o.executed for o, _ in done)))
        else:
            done.append(_write_repair(conn, item, shown, safety, profile))
    return done


def _interrupted(shown, *, wrote: bool) -> tuple[object, int]:
    """A repair left unwritten by an interrupt: exit 6 when an earlier repair wrote, else 130."""
    return (
        replace(shown, problems=("not written: interrupted (Ctrl-C or SIGTERM)",)),
        InterruptedWrite.exit_code if wrote else Interrupted.exit_code,
    )


def _write_repair(conn: Connection, item: Repair, shown, safety, profile: SpoutProfile) -> tuple[object, int]:
    """One consumer's repair through reset's safe writer, written only if the plan read again is the one shown
    (exit 5 when it changed); a failure is this consumer's result, with its error's exit code."""
    try:
        outcome = reset(
            conn,
            repair_request(item),
            safety,
            lambda plans, want=_writes(shown.plan): _writes(plans[0]) == want,
            profile,
        )[0]
    except OffctlError as exc:
        return replace(shown, problems=(str(exc),)), exc.exit_code
    if outcome.declined:
        outcome = replace(
            outcome,
            declined=False,
            problems=(
                f"{outcome.plan.key} changed between the plan shown and the write: nothing was written for it; "
                f"run the audit again",
            ),
        )
        return outcome, 5
    return outcome, outcome_exit_code(outcome)
