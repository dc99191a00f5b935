"""One error hierarchy; each error carries the exit code of the spec's section 3."""

from __future__ import annotations

import signal

INTERNAL_ERROR = 70  # an unexpected exception: a bug (EX_SOFTWARE of sysexits.h), never 1, which means findings


class OffctlError(Exception):
    """Base of every error offctl reports; only the command layer turns it into an exit. It has no exit code of
    its own: a raise names its kind (a subclass, which carries the code), and a bare OffctlError, which no code
    raises (tests/unit/test_render.py checks), would be a bug's code, never 1, which means findings."""

    exit_code = INTERNAL_ERROR

    def __init_subclass__(cls, code: int | None = None, **kwargs) -> None:
        """`class X(OffctlError, code=N)`: X's exit code is N (a subclass without one keeps its base's)."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.exit_code = code


class UsageError(OffctlError, code=2):
    """The command line asks for something that cannot be done (exit 2)."""


class StoreUnavailable(OffctlError, code=3):
    """A store (ZooKeeper, Kafka) could not be reached or read (exit 3)."""


class GuardRefused(OffctlError, code=4):
    """A safety guard refused a change (exit 4)."""


class WriteConflict(OffctlError, code=5):
    """A write conflicted with a concurrent change or failed verification (exit 5)."""


class Interrupted(OffctlError, code=130):
    """Ctrl-C or SIGTERM; raised where offctl has something to say about what was under way (exit 130)."""


class InterruptedWrite(Interrupted, code=6):
    """Ctrl-C or SIGTERM once a write was sent: it was made, or may have been (exit 6)."""


class NotConfirmed(OffctlError, code=8):
    """`--execute` without `--yes` and no terminal to ask, or the operator answered no (exit 8)."""


class SparkUnavailable(OffctlError, code=3):
    """Spark could not start, or a Spark job of the audit failed (exit 3)."""


# The signals a crash inside a native library ends a process with, as offctl's messages name them: the supervisor
# of a command (offctl/__main__.py) and the Kafka client's child process (offctl/adapters/kafka_child.py).
CRASH_SIGNALS: dict[int, str] = {
    signal.SIGSEGV: "a segmentation fault (SIGSEGV)",
    signal.SIGABRT: "an abort (SIGABRT)",
    signal.SIGBUS: "a bus error (SIGBUS)",
    signal.SIGILL: "an illegal instruction (SIGILL)",
    signal.SIGFPE: "an arithmetic fault (SIGFPE)",
}

NOT_CONFIRMED = NotConfirmed.exit_code
LEFT_OUT = 7  # reset: the plan leaves a partition of its scope out; restore: one it cannot put back (the rest is
# planned or written)

# Every exit code of every command (spec section 3), with when it happens; docs/exit-codes.md is made from it.
EXIT_CODES: dict[int, str] = {
    0: "healthy: no finding at or above `--fail-on`; a dry run that would be allowed; a write that was verified; "
    "a reset with nothing to do (`--to current` for a group with no commits, `--execute` too: nothing is "
    "written); a write whose plan writes nothing, which no guard refuses: `restore` of a backup whose partitions "
    'all hold their before-image already ("nothing to change": the write it undoes was cut off before it '
    "landed, or a restore put them back before; a restore writes back only what differs from the before-image, so "
    "running it twice is safe); `serve` and `watch` stopped by SIGTERM or Ctrl-C (a store they cannot read is logged, "
    "not an exit); `storm-kafka-monitor`: the lag, and also every failure (a store unreachable or partly read, the "
    "deadline passed, a setting or the config file refused): one line on stdout starting `Unable to get offset lags "
    "for kafka. Reason: `, as KafkaOffsetLagUtil prints it, so that Storm UI shows it as the spout's errorInfo "
    "(docs/storm-ui-lag.md)",
    1: "`inspect`, `audit`: findings at or above `--fail-on` (default `error`); `audit --repair` keeps this "
    "meaning in a dry run too: it is an audit first (`--fail-on never` for 0); `peek`: a consumer named "
    "was not found; `storm-kafka-monitor`: a command line KafkaOffsetLagUtil refuses (its message and help on "
    "stdout, as the original's; Storm UI then leaves the spout out of its lag view)",
    2: "usage error: a wrong flag, value or combination (also a value that is not UTF-8, out of range, or a file "
    "larger than such a file can be), a file that cannot be read or is not what it should be, a backup of a "
    "format offctl does not write or that fails its checksum (refused before any store is read), a reset of one "
    "consumer whose selection matches no partition (`nothing matches`; but see 0); also a rehearsal shell "
    '(`OFFCTL_SANDBOX=1`, set by `eval "$(offctl sandbox env)"`) whose command would use servers that are not the '
    "running sandbox's, or when no sandbox runs: the message names both; nothing was written",
    3: "a store could not be reached or read, also when only part of it could be read (the report is "
    "partial); also when a group's coordinator was loading or moving (a broker restart, a rolling upgrade, a new "
    "broker's first seconds) for the whole `--timeout`: offctl asks again with Kafka's back-off until then, and "
    'the message says "the group coordinator of group G is loading" (or moving) and where (a write it gave up '
    "on this way was not applied: the coordinator refused it); also when the command's process died inside a native "
    "library it uses (a crash, SIGSEGV or SIGABRT, in librdkafka, the Kafka client): one message names the signal, and "
    "for a write it had begun, the restore that puts back whatever part of it landed (its backup and the audit log's "
    "intent line come before it); `serve`, `watch` and `mcp` do not exit on such a crash: their Kafka client runs in a "
    "child process, and the cycle, refresh or tool call it cut fails with that message (logged, drawn or answered) and "
    "the next one starts a new client; `audit`: also when Spark could not start or one of its jobs failed; `peek`: "
    "also when the message at a selected offset could not be read within `--budget`; `sandbox status`, `sandbox env`: "
    "no sandbox running; `sandbox up`: a server could not start: Java, Debian's ZooKeeper or Apache Kafka's jars are "
    "missing (the message says how to install or fetch them), or a server exited or did not answer in time (the "
    "message names its log); nothing is left running",
    4: "refused by a safety guard (running-topology, recent-write, active-group, changed-since: `restore` of a "
    "partition that changed since the write its backup undoes, to neither what the write left nor what it held "
    "before, or of a backup that cannot tell), also a dry run whose execution would be refused; never a plan that "
    "writes nothing (0); nothing was written (`audit --repair`, and "
    "`reset` over several groups: for that consumer; the others are written)",
    5: "a write conflicted (a node or commit changed since it was read: nothing was written), failed, or "
    "failed verification after writing, also when it landed but could not be read back (`restore`: also when the "
    "broker refused to delete the group it undoes); also when the backup "
    "or the audit log could not be written (nothing was written); `peek --save`: the messages could not be "
    "written (nothing is left half-saved). The message names the backup, and the undo line when the write was sent "
    "(it puts back whatever part of the write landed: exit 0 and nothing to change if none did). `reset` over "
    "several groups: the consumers after the failed one are not written, and the result says so. The most "
    "urgent code wins: 6, 130, 5, 3, 4, 8, then 7",
    6: "interrupted (Ctrl-C or SIGTERM) after a write was sent. Either the change was made: it is reported as any "
    "write is (backup, undo line, audit-log outcome, verified or not); or the interrupt came while offctl waited "
    "for the store's answer, and it may have been made: the message says so, names the backup, how to "
    "check and the undo line, which puts back whatever part of the write landed (exit 0 and nothing to change if "
    "none did), and the audit log records it. Once the write landed, offctl finishes its report before it exits "
    "(what it still waits for is bounded by --timeout) and a second Ctrl-C does not cut it short. `reset` over several "
    "consumers: once one of them was written; none is written after the interrupt",
    7: "`reset`: the plan leaves a partition of its scope out, in a dry run and after "
    "a verified write alike: a partition of the spout's topic without a record offctl can write (its records name no "
    "one topology, the partition has no leader; a Trident state is never created), or a record it cannot move (a "
    "Trident partition whose only state is a batch at the coordinator's currtx: the batch is rewritten, which moves a "
    "transactional spout, but an opaque spout drops it and starts the partition as with no state); for a "
    "Kafka group, an asked-for partition it skips (a commit without Storm metadata to keep: `--topology-id STORM_ID` "
    "or `--no-storm-metadata` makes it writable; no commit to shift from). A dry run whose asked-for partitions are "
    "all left out exits 7 too, never 0 (`--to current` for a group with no commits stays 0: it keeps what there is). "
    "`audit --repair`: a consumer it declines to repair, with the reason in its result. Its row (`left_out` in "
    "`--output json`) says why, and for a partition without a record where the spout starts it instead; every other "
    "partition was planned, or written and verified. `restore`: a partition it cannot put back, in a dry run and after "
    "a verified write alike: a Kafka partition that had no commit before the write (offctl cannot remove one "
    "partition's commit; it deletes the whole group only when the group had no commits before, holds only the write's "
    "commits and has no members), a record a hand-made "
    'file cannot give, a Trident partition the spout has moved past; its row says why, the plan warns "cannot '
    'be undone for N partition(s)", never "nothing to change" with 0. 2 to 6, 8 and 130 win over it',
    8: "not confirmed: `--execute` without `--yes` and no terminal to ask (offctl does not prompt then: add `--yes` "
    "to write without asking), or the operator answered no at the prompt; nothing was written (`audit --repair`: "
    "for any consumer)",
    70: "internal error: an unexpected exception, a bug in offctl (please report it): one line "
    "`offctl: internal error (a bug, please report it): TYPE: MESSAGE` on stderr, then the traceback. Never 1, "
    "which means findings",
    130: "interrupted (Ctrl-C or SIGTERM) before any write was sent: nothing was written (when the backup was "
    "already made, the message names it and says no restore is needed, and the audit log records the "
    "interrupt); also during start-up, "
    "while the command line loads: one line, never a traceback",
}
