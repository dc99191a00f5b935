"""Reference pages generated from the code, so the docs cannot drift from it."""

from __future__ import annotations

from offctl.core.records.findings import CATALOGUE
from offctl.core.rules.analyze import rules_text
from offctl.errors import EXIT_CODES


def findings_markdown() -> str:
    """docs/findings.md: every finding code with its severity, when it fires and what to do."""
    lines = [
        "# Finding codes",
        "",
        "Generated from `offctl/core/records/findings.py` by `python -m offctl.faces.reference`; a test fails when "
        + "this page and",
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
        "Rules run per consumer (a spout id under one zkRoot, or a Kafka group), in this order (the table RULES in",
        "`offctl/core/rules/analyze.py`):",
        "",
        "```",
        rules_text(),
        "```",
        "",
        "Lag is `log_end - committed`, reported only for a position the spout will use: committed within",
        "[log start, log end], and for ZooKeeper records above 0. Everything else has lag `null` and a finding",
        "that says why.",
        "",
    ]
    return "\n".join(lines)


def exit_codes_markdown() -> str:
    """docs/exit-codes.md: what each exit code means, for scripts and runbooks."""
    lines = [
        "# Exit codes",
        "",
        "Generated from `offctl/errors.py` by `python -m offctl.faces.reference exit-codes`; a test fails when this",
        "page and the code disagree. Every command uses the same codes; the message is on stderr, data on stdout.",
        "",
        "| code | meaning |",
        "|---|---|",
        *(f"| {code} | {meaning} |" for code, meaning in EXIT_CODES.items()),
        "",
        "In a script, branch on the code, not on the text of the message:",
        "",
        "```sh",
        'offctl inspect --zk "$ZK" --zk-root /kafka-spouts --output json > report.json',
        "case $? in",
        "  0) echo healthy ;;",
        "  1) jq '.findings[] | select(.severity == \"error\")' report.json ;;",
        "  3) echo 'a store could not be read: the report is partial or missing' >&2 ;;",
        "  *) exit 1 ;;",
        "esac",
        "```",
        "",
        'After a write, 130 and 6 tell "interrupted, nothing written" from "interrupted after the write was sent":',
        "",
        "```sh",
        'offctl reset --zk "$ZK" --zk-root /kafka-spouts --spout orders --bootstrap-servers "$KAFKA" \\',
        "  --to latest --execute --yes --output json > result.json",
        "case $? in",
        "  0) jq -r .undo result.json ;;  # written and verified: the line that undoes it",
        "  130) echo 'interrupted: nothing was written' >&2 ;;",
        "  6) echo 'interrupted after the write was sent: see the message and the audit log' >&2; exit 1 ;;",
        "  *) exit 1 ;;",
        "esac",
        "```",
        "",
        "A spout's reset says whether its plan covers every partition of the topic the spout reads:",
        "",
        "```sh",
        'offctl reset --zk "$ZK" --zk-root /kafka-spouts --spout orders --bootstrap-servers "$KAFKA" --to earliest \\',
        "  --output json > plan.json",
        "case $? in",
        "  0) echo 'the plan covers every partition: run it again with --execute' ;;",
        "  7) jq -c '.changes[] | select(.left_out) | {topic, partition, reasons}' plan.json ;;",
        "  4) jq -c '.guards[] | select(.status == \"refused\")' plan.json ;;",
        "  *) exit 1 ;;",
        "esac",
        "```",
        "",
    ]
    return "\n".join(lines)


def audit_files_markdown() -> str:
    from offctl.faces.audit.tasks import FILES

    lines = [
        "# Files of `offctl audit --out DIR`",
        "",
        "Generated from `offctl/faces/audit/tasks.py` by `python -m offctl.faces.reference audit-files`; a test fails "
        "when this page and the code disagree.",
        "",
        "Each is a directory `DIR/<name>/` in the `--format` chosen (parquet, json lines, or csv with a "
        "header), plus `DIR/summary.json`, written last. The same columns in every format.",
        "",
    ]
    for name, (what, columns) in FILES.items():
        lines += [f"## {name}", "", what + ".", "", "| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c}` | {t} | {d} |" for c, t, d in columns]
        lines.append("")
    return "\n".join(lines)


PAGES = {"findings": findings_markdown, "exit-codes": exit_codes_markdown, "audit-files": audit_files_markdown}

if __name__ == "__main__":
    import sys

    print(PAGES[sys.argv[1] if len(sys.argv) > 1 else "findings"](), end="")
