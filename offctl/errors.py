"""One error hierarchy; each error carries the exit code of the spec's section 3."""

from __future__ import annotations


class OffctlError(Exception):
    """Base of every error offctl reports; only the command layer turns it into an exit."""

    exit_code = 1


class UsageError(OffctlError):
    """The command line asks for something that cannot be done (exit 2)."""

    exit_code = 2


class StoreUnavailable(OffctlError):
    """A store (ZooKeeper, Kafka) could not be reached or read (exit 3)."""

    exit_code = 3


class GuardRefused(OffctlError):
    """A safety guard refused a change (exit 4)."""

    exit_code = 4


class WriteConflict(OffctlError):
    """A write conflicted with a concurrent change or failed verification (exit 5)."""

    exit_code = 5
