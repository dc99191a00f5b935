"""No function in offctl/ above cyclomatic complexity 15, as radon measures it (issue 37, item 4, at 20; issue 45
brought it to 15, comfortably inside rather than just under).

A function past the limit does several jobs in one body; split it along the jobs it mixes, each piece named for what
it decides. The measure is radon's `cc_visit` (McCabe's count: every branch, loop, boolean operator, `except`,
comprehension `if` and match case adds one), on every module of the library.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit

LIMIT = 15
ROOT = Path(__file__).resolve().parents[2] / "offctl"


def measured() -> list[tuple[str, str, int]]:
    """(file, function, complexity) for every function and method of offctl/."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            for item in [block, *getattr(block, "methods", ()), *getattr(block, "closures", ())]:
                out.append((str(path.relative_to(ROOT.parent)), f"{item.name}:{item.lineno}", item.complexity))
    return out


def test_radon_sees_the_library():
    """The measure reads every module (a wrong ROOT would pass every later test with nothing measured)."""
    found = measured()
    assert len({f for f, _, _ in found}) >= 40
    assert any(name.startswith("read_snapshot:") for _, name, _ in found)


def test_no_function_above_the_limit():
    over = sorted((c, f, n) for f, n, c in measured() if c > LIMIT)
    assert not over, "above the complexity limit:\n" + "\n".join(
        f"  {c:3d} > {LIMIT}  {f}  {n}" for c, f, n in reversed(over)
    )


def test_the_limit_bites():
    """A function of 16 branches is refused by the same measure."""
    source = "def f(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(16)) + "    return -1\n"
    assert cc_visit(source)[0].complexity == 17 > LIMIT
