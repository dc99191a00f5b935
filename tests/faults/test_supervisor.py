"""offctl/__main__.py runs each command in a child process it watches (issue 43): a crash inside a native library
(librdkafka is C) ends the child, not the operator's answer. The crashes here are real ones, in native code: a
read of address 0 through ctypes (SIGSEGV) and abort(3) (SIGABRT), made where the command would run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CRASH = """
import ctypes, os, signal, sys, time
import offctl.__main__ as entry
import offctl.commands.app as app

def crash():
    if sys.argv[1] in ("segv", "abort"):
        sys.stdout.write("partial output\\n"); sys.stdout.flush()
    if sys.argv[1] == "segv":
        ctypes.string_at(0)  # a read of address 0, in C
    elif sys.argv[1] == "abort":
        os.abort()
    elif sys.argv[1] == "sleep":
        signal.signal(signal.SIGHUP, signal.SIG_DFL)  # not the SIG_IGN a nohup'd test run would hand down
        print(os.getpid(), flush=True)
        time.sleep(60)
    elif sys.argv[1] == "exit":
        sys.exit(7)

app.main = crash
entry.main()
"""


def run(how: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CRASH, how], capture_output=True, text=True, timeout=60, env={**os.environ, **env}
    )


@pytest.mark.parametrize("how, said", [("segv", "a segmentation fault (SIGSEGV)"), ("abort", "an abort (SIGABRT)")])
def test_a_crash_in_native_code_is_one_message_and_exit_3(how, said):
    proc = run(how)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "partial output\n"  # what the command printed before it crashed is kept
    assert said in proc.stderr and "librdkafka" in proc.stderr and "offctl restore BACKUP" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_without_the_supervisor_the_crash_ends_the_process_as_before():
    """OFFCTL_SUPERVISOR=off: the command runs in the process started, which the crash kills (what the supervisor is
    for: without it, no word)."""
    proc = run("segv", OFFCTL_SUPERVISOR="off")
    assert proc.returncode == -signal.SIGSEGV and proc.stderr == ""


def test_the_commands_exit_code_is_the_processs():
    assert run("exit").returncode == 7


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_sent_to_offctl_reaches_the_command(sig):
    """A supervisor's SIGTERM (systemd, Kubernetes, a test's send_signal) goes to the process it started: the
    command, in the child, gets it. Here the command runs with offctl's start-up handling (SIGINT and SIGTERM: one
    line, exit 130) and SIGHUP's default, which ends it; offctl ends as the command did."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASH, "sleep"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    child = int(proc.stdout.readline())
    assert child != proc.pid
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    if sig == signal.SIGHUP:
        assert proc.returncode == -sig, err
    else:
        assert (proc.returncode, err) == (130, "offctl: interrupted\n")
    assert not Path(f"/proc/{child}").exists()


def test_a_sigkill_of_offctl_takes_the_command_with_it():
    proc = subprocess.Popen(
        [sys.executable, "-c", CRASH, "sleep"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    child = int(proc.stdout.readline())
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the kernel delivers the death signal as the parent exits; reaping is init's
    status = Path(f"/proc/{child}/status")
    assert not status.exists() or "zombie" in status.read_text(), "the command outlived offctl"
