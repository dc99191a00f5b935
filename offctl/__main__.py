"""`offctl` and `python -m offctl`. Ctrl-C and SIGTERM are offctl's from this module's first lines: importing
the command line takes a third of a second (Typer, rich, the store clients), and an interrupt then ends it
with the one line and the exit code of any other interrupt, not a traceback.

The command runs in a child process that this one watches (`_supervised`): a crash inside a native library that
offctl uses (librdkafka, the Kafka client, is C: a SIGSEGV or an abort there) ends the child, and this process says
so on stderr and exits 3, as the exit-code table documents, instead of dying without a word. The signals an operator
or a supervisor sends to this process (SIGTERM, SIGINT, SIGHUP) are passed on to the child; a Ctrl-C typed at the
terminal reaches both already, and is not passed twice. The child dies with this process (PR_SET_PDEATHSIG), so
that a SIGKILL here leaves nothing running. OFFCTL_SUPERVISOR=off runs the command in this process."""

import os
import signal


def _interrupted_at_start_up(signum, frame) -> None:
    os.write(2, b"offctl: interrupted\n")
    os._exit(130)  # nothing is written yet: no file to close, no buffer to flush


signal.signal(signal.SIGINT, _interrupted_at_start_up)
signal.signal(signal.SIGTERM, _interrupted_at_start_up)

from offctl.errors import CRASH_SIGNALS  # noqa: E402 (after the handlers: an interrupt is offctl's from the start)

_PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SI_KERNEL = 0x80  # siginfo's si_code for a signal the kernel sent: the terminal's Ctrl-C, which the child has too
_PR_SET_PDEATHSIG = 1
CRASHED = 3  # the exit code of a command whose process a native library crashed (docs/exit-codes.md)


def _crash_message(what: str) -> bytes:
    return (
        f"offctl: the command's process ended with {what} inside a native library it uses (librdkafka, the "
        f"Kafka client, most likely: offctl itself is Python). The command did not finish; what it printed "
        f"above is what it did. A write it had begun made its backup and the audit log's intent line first: "
        f"`offctl restore BACKUP` puts back whatever part of it landed (the audit log names the backup). Run the "
        f"command again.\n"
    ).encode()


def _supervised() -> None:
    """Return in a child process that runs the command; in this one, wait for it and exit as it did (or 3 after a
    crash). A platform without fork, or OFFCTL_SUPERVISOR=off, runs the command here."""
    if os.environ.get("OFFCTL_SUPERVISOR") == "off" or not hasattr(os, "fork"):
        return
    waited_for = {*_PASSED_ON, signal.SIGCHLD}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, waited_for)  # nothing lands between the fork and the wait
    parent = os.getpid()
    child = os.fork()
    if child == 0:
        _die_with(parent)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal passed on meanwhile is delivered here
        return
    while True:
        info = signal.sigwaitinfo(waited_for)
        if info.si_signo != signal.SIGCHLD:
            if info.si_code != _SI_KERNEL:
                os.kill(child, info.si_signo)
            continue
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            break
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig in CRASH_SIGNALS:
            os.write(2, _crash_message(CRASH_SIGNALS[sig]))
            os._exit(CRASHED)
        signal.signal(sig, signal.SIG_DFL)  # ended by a signal (SIGKILL, say): so does this process
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def _die_with(parent: int) -> None:
    """The child ends (SIGKILL) when the watching process does, whatever ended it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return  # no prctl (not Linux): the child outlives a SIGKILL of its parent
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(CRASHED)


def main() -> None:
    _supervised()
    from offctl.commands.app import main as run  # installs offctl's own handling (offctl/interrupts.py)

    run()


def storm_kafka_monitor() -> None:
    """The `storm-kafka-monitor` program: Storm UI's lag script, every argument KafkaOffsetLagUtil's
    (offctl/commands/lagmonitor.py)."""
    import sys

    sys.argv = [sys.argv[0], "storm-kafka-monitor", "--", *sys.argv[1:]]
    main()


if __name__ == "__main__":
    main()
