"""Ctrl-C and SIGTERM around a write.

Until a store has taken a write, an interrupt stops offctl at once (KeyboardInterrupt): nothing was written.
Once it has (`landed()`), stopping half-way would lose what the operator must be told (that the change was
made, its backup, its undo line, the audit-log outcome), so later signals are held: offctl finishes its
report (every wait left is bounded by --timeout) and the exit code says it was interrupted after writing.
`hold()` does the same while an interrupt that already came is reported, `deferred()` for a moment only: a
backup and its audit-log lines are written whole.

Held signals are recorded by `handler` when another thread takes them, and blocked in the main thread, so
that none cuts one of its system calls short: a report written to a full pipe is not left half-written
(Python's buffered writers drop the rest of a write a signal interrupts). `install()` is the command line's
(offctl.commands.app.main), and `uninstall()` puts back what it found, so a process that calls main() and goes on
(a test, a script) keeps its own handlers and an unblocked signal mask, which the programs it starts inherit; called
as a library, without them, offctl sees Python's KeyboardInterrupt as before.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS = {signal.SIGINT, signal.SIGTERM}

_installed = False
_held = False
_wrote = False
_received: list[int] = []
_saved: tuple[dict, set] | None = None  # the handlers and signal mask install() found


def handler(signum: int, frame: object) -> None:
    _received.append(signum)
    if not _held:
        raise KeyboardInterrupt


def start() -> None:
    """A new run: nothing installed, held, written or received."""
    global _installed, _held, _wrote
    _installed = _held = _wrote = False
    _received.clear()


def install() -> None:
    """Handle SIGINT and SIGTERM as offctl does (call from the main thread, inside the try that turns
    KeyboardInterrupt into "offctl: interrupted").

    The signals are blocked while the handlers and the state they read are set, so one that comes meanwhile waits
    (issue 28: it raised KeyboardInterrupt between two signal.signal calls, half-installed, outside any try). It is
    delivered when the mask is put back, at the end, to the handler now in place: KeyboardInterrupt from here, with
    everything installed for uninstall() to undo."""
    global _installed, _saved
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        start()
        if _saved is None:
            _saved = {s: signal.getsignal(s) for s in SIGNALS}, mask
        for signum in SIGNALS:
            signal.signal(signum, handler)
        _installed = True
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def uninstall() -> None:
    """Put back the handlers and signal mask install() found. A signal held back until now has been reported
    (the run's exit code says it was interrupted) and is dropped, not delivered to the handler put back."""
    global _saved
    if _saved is None:
        return
    handlers, mask = _saved
    _saved = None
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    for signum, previous in handlers.items():
        signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
    start()


def hold() -> None:
    """From now on, for the rest of the run, hold SIGINT and SIGTERM instead of raising."""
    global _held
    _held = True
    if _installed:
        signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


def landed() -> None:
    """A store has taken a write: hold, and an interrupt from now on is one after writing."""
    global _wrote
    hold()
    _wrote = True


def wrote() -> bool:
    """Whether a write landed in this run."""
    return _wrote


@contextmanager
def deferred() -> Iterator[None]:
    """Record SIGINT and SIGTERM while the block runs; `received()` tells afterwards whether one came."""
    global _held
    was, _held = _held, True
    try:
        yield
    finally:
        _held = was


def received() -> bool:
    """Whether a SIGINT or SIGTERM came in this run: raised, recorded, or held back."""
    return bool(_received) or (_installed and _held and bool(signal.sigpending() & SIGNALS))
