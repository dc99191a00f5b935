"""The safety guards of every write, pure: running-topology, recent-write and active-group, judged from the facts
a read gathered (with `now` in them), each overridable only by its own --force."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from offctl.core.model import GroupState
from offctl.core.storm import parse_storm_id

from offctl.core.plan import GuardCheck, Plan

GUARDS = ("running-topology", "recent-write", "active-group")


@dataclass(frozen=True)
class GuardFacts:
    """What the guards look at, read together with the plan."""

    topology_ids: frozenset[str]  # topologies that own or will own the consumer
    running: frozenset[str] | None  # storm ids under Storm's root; None = could not tell
    running_unknown_why: str = ""
    zk_modified_ms: Mapping[str, int] = field(default_factory=dict)  # path -> mtime, ZooKeeper only
    groups: tuple[GroupState, ...] = ()  # Kafka groups written to
    now_ms: int = 0
    quiet_period_s: float = 10.0


def check_guards(facts: GuardFacts, force: Iterable[str]) -> tuple[GuardCheck, ...]:
    forced = set(force)
    checks = (_running(facts), _recent(facts), _active(facts))

    def verdict(guard: str, refused: str | None, ok: str) -> GuardCheck:
        if refused is None:
            return GuardCheck(guard, "pass" if ok else "not-applicable", ok or "not applicable")
        if guard in forced:
            return GuardCheck(guard, "overridden", f"{refused} (overridden by --force {guard})")
        return GuardCheck(guard, "refused", f"{refused}; --force {guard} overrides")

    return tuple(verdict(g, refused, ok) for g, (refused, ok) in zip(GUARDS, checks, strict=True))


def _name(storm_id: str) -> str:
    return parse_storm_id(storm_id) or storm_id


def _running(f: GuardFacts) -> tuple[str | None, str]:
    if f.running is None:
        return f"cannot tell whether the owning topology runs: {f.running_unknown_why}", ""
    if not f.topology_ids:
        return None, "the records name no topology"
    names = {_name(t) for t in f.topology_ids}
    live = sorted(r for r in f.running if r in f.topology_ids or _name(r) in names)
    if live:
        return (f"topology {', '.join(live)} is running (listed under Storm's root) and would overwrite the "
                f"change within seconds: kill it, or deactivate it and wait for its last commit"), ""
    return None, f"no running topology named {', '.join(sorted(names))}"


def _recent(f: GuardFacts) -> tuple[str | None, str]:
    if not f.zk_modified_ms:
        return None, ""
    path, mtime = max(f.zk_modified_ms.items(), key=lambda kv: kv[1])
    age = (f.now_ms - mtime) / 1000
    if age < f.quiet_period_s:
        return (f"{path} was written {max(age, 0):.1f}s ago, within the quiet period of {f.quiet_period_s:g}s: "
                f"something is still committing"), ""
    return None, f"last write {age:.0f}s ago ({path})"


def _active(f: GuardFacts) -> tuple[str | None, str]:
    if not f.groups:
        return None, ""
    busy = [g for g in f.groups if g.active]
    if busy:
        return ", ".join(f"group {g.group} has {g.members or 'active'} member(s) (state {g.state}): a consumer "
                         f"using subscribe() would overwrite the commit" for g in busy), ""
    return None, ", ".join(f"group {g.group} has no members ({g.state})" for g in f.groups)


def with_guards(plan: Plan, facts: GuardFacts, force: Iterable[str]) -> Plan:
    return replace(plan, guards=check_guards(facts, force))
