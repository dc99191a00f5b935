"""What a plan's writes cost, as records: a ChangeCost per written change, a CostSum per direction, a PlanCost
per plan (offctl.core.plans.plan.Plan.cost). offctl.core.plans.cost computes them; they live apart so that a Plan can
name its cost's type without the planner importing the module that reads plans."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

REPLAY, SKIP, NONE, UNKNOWN = "replay", "skip", "none", "unknown"  # directions
FULL, PARTIAL, UNKNOWN_SPAN, EMPTY = "full", "partial", "unknown", "none"  # time spans


@dataclass(frozen=True, slots=True)
class ChangeCost:
    """What one written change costs."""

    direction: str  # REPLAY, SKIP, NONE (the spout resumes where it did) or UNKNOWN (no previous position)
    messages: int | None = None  # offsets of the range within [log start, log end); None with UNKNOWN
    up_to: bool = False  # fewer messages than offsets: a gap seen at an end of the range, or no log offsets
    first_ms: int | None = None  # timestamp of the first message of the range
    last_ms: int | None = None  # and of the last
    span: str = EMPTY  # FULL, PARTIAL (one of the two), UNKNOWN_SPAN (neither), EMPTY (no message)
    notes: tuple[str, ...] = ()  # what it counts from, what it leaves out, why the span is not full
    why: str = ""  # why the span is partial or unknown
    past_end: bool = False  # a replay from past the log end: the messages may be new to the spout

    def reversed(self) -> ChangeCost:
        """The same range the other way: what putting the before-image back costs."""
        return replace(self, direction={REPLAY: SKIP, SKIP: REPLAY}.get(self.direction, self.direction), past_end=False)


@dataclass(frozen=True, slots=True)
class CostSum:
    """One direction's changes of a consumer, summed."""

    direction: str
    partitions: int = 0
    messages: int = 0
    up_to: bool = False
    first_ms: int | None = None  # the earliest timestamp read of any of them
    last_ms: int | None = None  # the latest
    spans_unknown: int = 0  # partitions whose span is partial or unknown
    why: str = ""  # the first of their reasons
    past_end: int = 0  # replays from past the log end


@dataclass(frozen=True)
class PlanCost:
    """A cost per change of the plan, in its order: None for a change that is not written."""

    changes: tuple[ChangeCost | None, ...]

    @property
    def replay(self) -> CostSum:
        return total(self.changes, REPLAY)

    @property
    def skip(self) -> CostSum:
        return total(self.changes, SKIP)

    @property
    def no_previous_position(self) -> int:
        return sum(1 for c in self.changes if c is not None and c.direction == UNKNOWN)


def total(costs: Iterable[ChangeCost | None], direction: str) -> CostSum:
    """The changes going `direction`, summed; the span from the earliest to the latest timestamp read."""
    chosen = [c for c in costs if c is not None and c.direction == direction]
    stamps = [t for c in chosen for t in (c.first_ms, c.last_ms) if t is not None]
    unknown = [c for c in chosen if c.span in (PARTIAL, UNKNOWN_SPAN)]
    return CostSum(
        direction,
        len(chosen),
        sum(c.messages or 0 for c in chosen),
        any(c.up_to for c in chosen),
        min(stamps, default=None),
        max(stamps, default=None),
        len(unknown),
        unknown[0].why if unknown else "",
        sum(c.past_end for c in chosen),
    )
