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


class Interrupted(OffctlError):
    """Ctrl-C or SIGTERM; raised where offctl has something to say about what was under way (exit 130)."""

    exit_code = 130


class SparkUnavailable(OffctlError):
    """Spark could not start, or a Spark job of the audit failed (exit 3)."""

    exit_code = 3


# Every exit code of every command (spec section 3), with when it happens; docs/exit-codes.md is made from it.
EXIT_CODES: dict[int, str] = {
    0: "healthy: no finding at or above `--fail-on`; a dry run that would be allowed; a write that was verified; "
       "`serve` and `watch` stopped by SIGTERM or Ctrl-C (a store they cannot read is logged, not an exit)",
    1: "`inspect`, `audit`: findings at or above `--fail-on` (default `error`); `audit --repair` keeps this "
       "meaning in a dry run too: it is an audit first (`--fail-on never` for 0)",
    2: "usage error: a wrong flag, value or combination (also a value that is not UTF-8, out of range, or a file "
       "larger than such a file can be), a file that cannot be read or is not what it should be, a backup that "
       "fails its checksum; nothing was written",
    3: "a store could not be reached or read, also when only part of it could be read (the report is "
       "partial); `audit`: also when Spark could not start or one of its jobs failed; `sandbox status`: no "
       "sandbox running",
    4: "refused by a safety guard (running-topology, recent-write, active-group), also a dry run whose "
       "execution would be refused, and a declined confirmation; nothing was written (`audit --repair`, and "
       "`reset` over several groups: for that consumer; the others are written)",
    5: "a write conflicted (a node or commit changed since it was read: nothing was written), failed, or "
       "failed verification after writing, also when it landed but could not be read back; also when the backup "
       "or the audit log could not be written (nothing was written). The message names the backup. `reset` over "
       "several groups: the consumers after the failed one are not written, and the result says so. The most "
       "urgent code wins: 130, 5, 3, then 4",
    130: "interrupted (Ctrl-C or SIGTERM); during a write, the message says what may have landed and names the "
         "backup, and the audit log records it",
}
