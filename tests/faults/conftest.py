"""The faults suite reports how many examples each property ran, at the end of every run (CI included)."""

from __future__ import annotations

import functools
from collections import Counter

RAN: Counter = Counter()


def counted(test):
    """Count the examples hypothesis runs through a property (under @given)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        RAN[test.__name__] += 1
        return test(*args, **kwargs)

    return run


def pytest_terminal_summary(terminalreporter):
    if RAN:
        terminalreporter.section("faults: hypothesis examples per property")
        for name, n in sorted(RAN.items()):
            terminalreporter.write_line(f"{n:6d}  {name}")
