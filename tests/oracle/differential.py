"""What the differential tests of Storm's parsers share (issue 44): the example count, byte-level damage, and the
hypothesis run that asks a Storm oracle one input at a time (so that a disagreement shrinks to its smallest input)."""

from __future__ import annotations

import os
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("OFFCTL_DIFFERENTIAL_EXAMPLES", "1000"))  # per parser and line; 100,000 in main()
DAMAGE = (0x00, 0x22, 0x2C, 0x2E, 0x30, 0x3A, 0x5C, 0x7B, 0x7D, 0x80, 0xC3, 0xE2, 0xED, 0xF0, 0xFF)


def damaged(draw, data: bytes) -> bytes:
    """`data` with up to two bytes inserted, removed or replaced (invalid UTF-8, NULs, broken syntax)."""
    data = bytearray(data)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["insert", "remove", "replace"]))
        byte = draw(st.sampled_from(DAMAGE))
        if how == "insert":
            data.insert(at, byte)
        elif at < len(data):
            if how == "remove":
                del data[at]
            else:
                data[at] = byte
    return bytes(data)


def each_generated(inputs: st.SearchStrategy, check: Callable[[object], None], examples: int) -> None:
    """check() every one of `examples` inputs drawn from `inputs`, with a fixed seed (derandomize), no database."""

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(inputs)
    def one(case):
        check(case)

    one()


def full_run(module, examples: int, lines, open_oracle: Callable, title: Callable[[str], str]) -> None:
    """A module's full count (its main()): its corpus and `examples` generated inputs on each line, in one JVM per
    line, then each line's verdicts as the module counted them in its COUNTS[(line, verdict)]."""
    module.EXAMPLES = examples
    for line in lines:
        with open_oracle(line) as running:
            module.test_the_corpus_agrees(running)
            for name in sorted(dir(module)):
                if name.startswith("test_") and name != "test_the_corpus_agrees":
                    getattr(module, name)(running)
            print(
                f"{title(line)}: {running.asked:,} inputs asked, every verdict agreed: "
                + ", ".join(f"{verdict} {n:,}" for (ln, verdict), n in sorted(module.COUNTS.items()) if ln == line),
                flush=True,
            )
