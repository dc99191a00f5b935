"""What a repair is asked to do, pure: the target (earliest, latest, current, an offset, a time, a shift) and
the scope (topics, partitions, a StaticHosts spout's partitions), parsed from the operator's words. Every value is
checked here, so a plan never starts from a flag it cannot honour (exit 2)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from offctl.core.records.model import is_topic_name, iso_ms
from offctl.errors import UsageError

TARGETS = ("earliest", "latest", "current", "offset", "time", "shift")


@dataclass(frozen=True)
class Target:
    """Where to move each partition: `--to` with its value, or explicit offsets from a file."""

    kind: str  # earliest | latest | current | offset | time | shift | file | repair
    offset: int | None = None
    at_ms: int | None = None
    by: int | None = None
    offsets: Mapping[tuple[str, int], int] | None = None  # kind "file": (topic, partition) -> offset
    source: str | None = None  # "file": where the offsets came from; "repair": what; "time": a --by-duration
    repair: frozenset[tuple[str, int]] | None = None  # kind "repair": partitions found out of range

    def describe(self) -> str:
        if self.kind == "offset":
            return f"offset {self.offset}"
        if self.kind == "time":
            return f"time {iso_ms(self.at_ms)}" + (f" ({self.source} before now)" if self.source else "")
        if self.kind == "shift":
            return f"shift {self.by:+d}"
        if self.kind == "file":
            return f"offsets from {self.source}"
        if self.kind == "repair":
            return f"log start of partitions out of range ({self.source})"
        return self.kind


def make_target(
    to: str | None, offset: int | None, at: str | None, by: int | None, duration: str | None = None, now_ms: int = 0
) -> Target:
    """Check `--to` and its value flags together; every mistake is a UsageError naming the flags.
    `--by-duration D` is `--to time` at now minus D, as kafka-consumer-groups --by-duration."""
    if duration is not None:
        return _by_duration(to, offset, at, by, duration, now_ms)
    if to is None:
        raise UsageError(
            "say where to move the offsets: --to earliest|latest|current|offset|time|shift, "
            "--by-duration, or --from-file"
        )
    if to not in TARGETS:
        raise UsageError(f"--to {to!r}: expected one of {', '.join(TARGETS)}")
    _check_value_flags(to, {"--offset": offset is not None, "--at": at is not None, "--by": by is not None})
    if to == "offset" and offset < 0:
        raise UsageError(f"--offset {offset}: an offset is 0 or more")
    return Target(to, offset=offset, at_ms=parse_time(at) if to == "time" else None, by=by)


def _by_duration(
    to: str | None, offset: int | None, at: str | None, by: int | None, duration: str, now_ms: int
) -> Target:
    """`--by-duration D`: `--to time` at now minus D, given alone."""
    if to not in (None, "time") or any(v is not None for v in (offset, at, by)):
        raise UsageError(
            "--by-duration is a target of its own (--to time at now minus the duration): drop "
            "the other --to, --offset, --at or --by"
        )
    back = parse_duration(duration)
    at_ms = now_ms - back
    if at_ms < 0:
        raise UsageError(f"--by-duration {duration[:40]!r} reaches back before 1970")
    return Target("time", at_ms=at_ms, source=duration.strip().upper())


def _check_value_flags(to: str, given: dict[str, bool]) -> None:
    """Each value flag given (`given`: flag -> present) goes with `to`, and `to` has the one it needs."""
    needs = {"offset": "--offset", "time": "--at", "shift": "--by"}
    for flag, present in given.items():
        if present and needs.get(to) != flag:
            owner = next(k for k, v in needs.items() if v == flag)
            raise UsageError(f"{flag} goes with --to {owner}, not --to {to}")
    if to in needs and not given[needs[to]]:
        raise UsageError(f"--to {to} needs {needs[to]}")


def parse_duration(text: str) -> int:
    """An ISO-8601 duration as kafka-consumer-groups --by-duration takes it (Java's Duration.parse: days,
    hours, minutes, seconds; case-insensitive) -> milliseconds, more than zero."""
    import isodate

    cleaned = text.strip().upper()
    try:
        parsed = isodate.parse_duration(cleaned) if cleaned.lstrip("+-").startswith("P") else None
    except (isodate.ISO8601Error, ValueError, OverflowError):
        parsed = None
    if parsed is None:
        raise UsageError(f"--by-duration {text[:40]!r}: expected an ISO-8601 duration like PT30M, PT6H or P1DT12H")
    if not isinstance(parsed, timedelta):
        raise UsageError(
            f"--by-duration {text[:40]!r}: years and months have no fixed length; use days (P30D), "
            f"as kafka-consumer-groups does"
        )
    ms = int(parsed.total_seconds() * 1000)
    if ms <= 0:
        raise UsageError(f"--by-duration {text[:40]!r}: a duration back from now is more than zero")
    return ms


MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z: the last time Python and Java can both name
MAX_PARTITIONS = 100_000  # Kafka's own guidance stops far below this per topic


def parse_time(text: str) -> int:
    """Epoch milliseconds, or ISO-8601 with a zone (2026-11-01T03:00:00Z, ...+02:00) -> epoch ms."""
    text = text.strip()
    if re.fullmatch(r"\d{1,15}", text):
        at_ms = int(text)
    else:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise UsageError(
                f"--at {text[:40]!r}: expected ISO-8601 with a zone (2026-11-01T03:00:00Z) or epoch milliseconds"
            ) from None
        if moment.tzinfo is None:
            raise UsageError(
                f"--at {text!r} has no zone: add Z or an offset like +02:00, so the time is not "
                f"read in this machine's zone by mistake"
            )
        try:
            at_ms = int(moment.timestamp() * 1000)
        except (OverflowError, ValueError):
            at_ms = -1
    # Kafka reads a negative time as "latest" (-1) or "earliest" (-2): never send one by mistake.
    if not 0 <= at_ms <= MAX_EPOCH_MS:
        raise UsageError(f"--at {text[:40]!r}: a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z")
    return at_ms


def parse_partitions(text: str | None, option: str = "--partitions") -> frozenset[int] | None:
    """'0,3,5' or '0-3,7' -> {0,1,2,3,7}; None means every partition."""
    if text is None:
        return None
    found: set[int] = set()
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise UsageError(f"{option} {text[:40]!r}: expected partition numbers like 0,3,5 or 0-7")
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if last - first + 1 + len(found) > MAX_PARTITIONS:
            raise UsageError(f"{option} {text[:40]!r}: more than {MAX_PARTITIONS:,} partitions, more than a topic has")
        found.update(range(first, last + 1))
    return frozenset(found)


def parse_topics(values: Iterable[str] | None) -> dict[str, frozenset[int] | None]:
    """Repeated --topic: TOPIC, or TOPIC:PARTITIONS as kafka-consumer-groups takes it (orders:0-3,7).
    ':' is not legal in a topic name, so it always starts the partitions. {topic: partitions, None = all}."""
    topics: dict[str, frozenset[int] | None] = {}
    for value in values or ():
        name, sep, listed = value.partition(":")
        name = name.strip()
        if not is_topic_name(name):
            raise UsageError(
                f"--topic {value[:60]!r}: a topic name is 1-249 of a-z A-Z 0-9 . _ - (not . or ..), "
                f"optionally followed by :PARTITIONS (orders:0-3,7)"
            )
        parts = parse_partitions(listed, f"--topic {name}:") if sep else None
        if name in topics:  # given twice: the union; "all" wins
            parts = None if parts is None or topics[name] is None else topics[name] | parts
        topics[name] = parts
    return topics


def parse_static_partitions(values: Iterable[str] | None) -> dict[str, frozenset[int]]:
    """Repeated --static-partitions ID=LIST (a spout on StaticHosts reads only these partitions) -> {id: LIST}."""
    static: dict[str, frozenset[int]] = {}
    for spec in values or ():
        spout, sep, listed = spec.rpartition("=")
        if not sep or not spout:
            raise UsageError(f"--static-partitions {spec!r}: expected SPOUT_ID=PARTITIONS, e.g. orders=0-3,7")
        static[spout] = parse_partitions(listed, "--static-partitions")
    return static


@dataclass(frozen=True)
class Scope:
    """Which partitions a reset touches: the --topic scopes (none: every topic the consumer has) and
    --partitions, which applies to topics named without their own partition list."""

    topics: Mapping[str, frozenset[int] | None] = field(default_factory=dict)
    partitions: frozenset[int] | None = None

    @property
    def one_topic(self) -> str | None:
        return next(iter(self.topics)) if len(self.topics) == 1 else None

    def partitions_of(self, topic: str | None) -> frozenset[int] | None:
        own = self.topics.get(topic) if topic is not None else None
        return own if own is not None else self.partitions

    def includes(self, topic: str | None, partition: int) -> bool:
        if self.topics and topic not in self.topics:
            return False
        wanted = self.partitions_of(topic)
        return wanted is None or partition in wanted

    def describe(self) -> str:
        parts = [t if p is None else f"{t}:{ranges(p)}" for t, p in self.topics.items()]
        if self.partitions is not None:
            parts.append(f"partitions {ranges(self.partitions)}")
        return ", ".join(parts)


def ranges(numbers: Iterable[int]) -> str:
    """{0,1,2,3,7} -> '0-3,7'."""
    out: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)
