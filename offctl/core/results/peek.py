"""What `offctl peek` came to (offctl.faces.peek), as render/peek.py renders it."""

from __future__ import annotations

from dataclasses import dataclass

from offctl.core.records.model import Report
from offctl.core.records.peeked import Peeked, unanswered


@dataclass(frozen=True)
class PeekResult:
    report: Report  # inspect's report of the consumers read (its findings say why a partition is stuck)
    peeked: tuple[Peeked, ...]
    count: int
    captured_ms: int

    @property
    def unread(self) -> int:
        """Partitions whose message the read could not give (time budget, broker refusal)."""
        return sum(unanswered(p) for p in self.peeked)
