"""Per-spout profiles: which spout settings judge which consumer (config file `[[profiles]]`, docs/contract.md).

A profile matches a consumer by its id (storm-kafka spout id, storm-kafka-client group id, Trident txStateId),
exactly or as a glob (fnmatch: `*`, `?`, `[...]`). Which profile wins when several match: an exact match
before any glob; among globs the first in order (a context's profiles come before the file's top-level ones,
each in file order). A consumer no profile matches is judged by the defaults (profile None)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from offctl.core.records.model import ConsumerKey, Thresholds
from offctl.core.storm.releases import Isolation

GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Profile:
    name: str  # as JSON names it (`profile`): the table's `name`, else its `match`
    match: str  # a spout id, group id or Trident txStateId: exact, or a glob
    thresholds: Thresholds  # the settings of the consumers it covers (command-line flags already applied)

    @property
    def exact(self) -> bool:
        return not GLOB_CHARS & set(self.match)

    def matches(self, consumer: str) -> bool:
        return consumer == self.match if self.exact else fnmatchcase(consumer, self.match)


@dataclass(frozen=True)
class Profiles:
    """The defaults and the profiles of one run, in the order that decides between globs."""

    default: Thresholds = Thresholds()
    profiles: tuple[Profile, ...] = ()

    def judging(self, key: ConsumerKey) -> tuple[str | None, Thresholds]:
        """The profile that judges `key` (its name, None for the defaults) and its settings."""
        exact = next((p for p in self.profiles if p.exact and p.matches(key.consumer)), None)
        chosen = exact or next((p for p in self.profiles if not p.exact and p.matches(key.consumer)), None)
        return (chosen.name, chosen.thresholds) if chosen else (None, self.default)

    def with_isolation_level(self, isolation_level: Isolation) -> Profiles:
        """These profiles with every spout's consumer isolation.level set to `isolation_level` (storm-kafka-monitor: the
        consumer properties Storm passes are the spout's own)."""

        def isolated(t: Thresholds) -> Thresholds:
            return replace(t, spout=replace(t.spout, isolation_level=isolation_level))

        return Profiles(
            isolated(self.default), tuple(replace(p, thresholds=isolated(p.thresholds)) for p in self.profiles)
        )
