"""Reference pages generated from the code, so the docs cannot drift from it."""

from __future__ import annotations

from offctl.analyze import __doc__ as RULES
from offctl.findings import CATALOGUE


def findings_markdown() -> str:
    """docs/findings.md: every finding code with its severity, when it fires and what to do."""
    lines = [
        "# Finding codes",
        "",
        "Generated from `offctl/findings.py` by `python -m offctl.reference`; a test fails when this page and",
        "the code disagree. Severities decide the exit code with `--fail-on` (default `error`).",
        "",
        "| code | severity | when | what to do |",
        "|---|---|---|---|",
    ]
    for code in CATALOGUE.values():
        lines.append(f"| `{code.code}` | {code.severity.label} | {code.when} | {code.hint} |")
    lines += [
        "",
        "## How the rules run",
        "",
        "Rules run per consumer (a spout id under one zkRoot, or a Kafka group), in this order:",
        "",
        "```",
        RULES.split("order for each consumer:", 1)[1].strip("\n"),
        "```",
        "",
        "Lag is `log_end - committed`, reported only for a position the spout will use: committed within",
        "[log start, log end], and for ZooKeeper records above 0. Everything else has lag `null` and a finding",
        "that says why.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(findings_markdown(), end="")
