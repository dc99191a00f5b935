"""One option of offctl and what it is made of: the Option record, the kinds of values an option takes and how
their text is parsed, the help panels, where the config file takes an option, and the defaults every face reads.
The table of every option is offctl.settings.options.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from offctl.core.records.model import duration
from offctl.inputs import parse_seconds

# --- the defaults every face reads -----------------------------------------------------------------------------

TIME_LAG_BUDGET_S = 5.0  # --time-lag-budget
DEADLINE_S = 10.0  # storm-kafka-monitor's --deadline: docs/storm-ui-lag.md says why
PEEK_MAX_COUNT = 1000  # peek's --count: messages per partition; peek is for looking, not for copying a log
PLAN_TTL_S = 600.0  # offctl mcp's --plan-ttl
SERVE_INTERVAL_S = 30.0  # offctl serve's --interval
WATCH_INTERVAL_S = 2.0  # offctl watch's --interval
HISTORY_WINDOW = 10  # --window: observations per partition for the history status

# --- the help panels -------------------------------------------------------------------------------------------

CONNECTION = "Connection"
SELECTION = "Selection"
SPOUTS = "Spout settings"
HORIZONS = "Thresholds and horizons"
OUTPUT = "Output"
SAFETY = "Safety"
MONITOR = "Storm UI"
SPARK = "Spark"
FILES = "Files, snapshots and history"
REPAIR = "Repair"

# --- where the config file takes an option ---------------------------------------------------------------------

IN_CONTEXT = "context"  # a context's connection key
IN_PROFILE = "profile"  # a profile's key (a spout setting, its topic, its lag threshold), and a context's default
IN_DEFAULTS = "defaults"  # a context's default only


# --- the kinds of values ----------------------------------------------------------------------------------------


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


class PlanOutput(str, Enum):
    table = "table"
    json = "json"


class AuditOutput(str, Enum):
    summary = "summary"
    json = "json"


class FileFormat(str, Enum):
    parquet = "parquet"
    json = "json"
    csv = "csv"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


class Guard(str, Enum):
    running_topology = "running-topology"
    recent_write = "recent-write"
    active_group = "active-group"
    changed_since = "changed-since"


class To(str, Enum):
    earliest = "earliest"
    latest = "latest"
    current = "current"
    offset = "offset"
    time = "time"
    shift = "shift"


def seconds(
    low: float | None = None, high: float | None = None, *, bare: float = 1.0, unit: str = "seconds"
) -> Callable[[Any], float]:
    """The parser of a duration option: `30s`, `90m`, `6h`, `7d`, `1h30m`, or a bare number of `unit` (what the
    option took before durations), checked to lie from `low` to `high` where given. Raises ValueError."""

    def parse(value: Any) -> float:
        s = parse_seconds(value, bare, unit)
        if (low is not None and not s >= low) or (high is not None and not s <= high):
            raise ValueError(
                f"expected a duration from {duration(low or 0)} to {duration(high)}"
                if high is not None
                else f"expected a duration of {duration(low)} or more"
            )
        return s

    parse.duration = True
    return parse


def minutes(low: int, high: int) -> Callable[[Any], int]:
    """The parser of a duration option counted in whole minutes (--offsets-retention-minutes): a bare number is
    minutes, as the broker's setting is."""
    in_seconds = seconds(low * 60, high * 60, bare=60, unit="minutes")

    def parse(value: Any) -> int:
        if isinstance(value, int):
            return value
        s = in_seconds(value)
        if s % 60:
            raise ValueError("expected whole minutes (the broker's setting counts minutes)")
        return int(s // 60)

    parse.duration = True
    return parse


def iso_duration(text: str) -> str:
    """--by-duration in the syntax of every duration option (30m, 6h, 1d12h) as the ISO-8601 duration
    kafka-consumer-groups takes (PT1800S); ISO-8601, and anything else, is left to offctl.core.plans.targets to
    judge."""
    cleaned = text.strip()
    if cleaned[:1].isdigit() and not cleaned.replace(".", "", 1).isdigit():  # has a unit: not ISO, not bare
        try:
            return f"PT{parse_seconds(cleaned):g}S"
        except ValueError:
            pass
    return text


@dataclass(frozen=True)
class Option:
    """One option: `name` is its parameter name (and, dashed, its config-file key)."""

    name: str
    flags: tuple[str, ...]
    help: str
    kind: type = str  # str, int, float, bool, Path, or an Enum
    default: Any = None
    many: bool = False  # repeatable
    metavar: str | None = None
    env: str | None = None
    panel: str | None = None
    parse: Callable[[Any], Any] | None = None  # a value from its text (durations); raises ValueError
    low: int | None = None
    high: int | None = None
    show_default: bool = True
    required: bool = False
    file: str | None = None  # IN_CONTEXT, IN_PROFILE, IN_DEFAULTS, or None: not a key of the config file
    file_kind: str | None = None  # what the file's value must be, where it differs from the kind's

    @property
    def key(self) -> str:
        return self.name.replace("_", "-")

    def but(self, **changes: Any) -> Option:
        """The option as one command takes it (one value, required, its own words): the flags stay the table's."""
        return replace(self, **changes)
