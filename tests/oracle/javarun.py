"""The suite's small Java programs (tests/java/ConsumerView.java, tests/storm_runner/*/…Runner.java): compiled once
per session into a temporary directory against a classpath, each with tests/java/RunnerIO.java (RUNNER_IO: what they
share, plain Java), and run with stdout kept for one JSON line.

Kafka's and Storm's jars bind slf4j to log4j2, whose default configuration writes ERRORs to stdout; each program
keeps stdout for its line anyway, and the configuration written here puts WARN and up on stderr, where a failure's
message shows them, each line prefixed by the program's name."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

_LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = {prefix}: %p %c{{1}}: %m%n%ex
"""
RUNNER_IO = Path(__file__).parent.parent / "java" / "RunnerIO.java"
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")  # short runs: start fast, one GC thread


def tool(name: str, what: str, java_home: str | None = None) -> str:
    """The JDK's `name` (javac, java): from `java_home` where given, else on PATH."""
    found = str(Path(java_home) / "bin" / name) if java_home else shutil.which(name)
    if found is None or not Path(found).exists():
        raise AssertionError(
            f"{name} not found: {what} needs a JDK ({java_home or 'apt-get install openjdk-17-jdk-headless'})"
        )
    return found


def compile_java(
    source: Path | Sequence[Path],
    classpath: str,
    *,
    prefix: str,
    log_prefix: str,
    java_home: str | None = None,
    files: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """Compile `source` (one file, or several compiled together: the program first, e.g. (SOURCE, RUNNER_IO))
    against `classpath` into a new temporary directory (removed at exit), with `files` (path relative to it -> text)
    written beside the classes; returns (the classpath to run it with, the log4j2 file)."""
    sources = [source] if isinstance(source, Path) else list(source)
    where = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    compiled = subprocess.run(
        [
            tool("javac", sources[0].stem, java_home),
            "-nowarn",
            "-Xlint:none",
            "-cp",
            classpath,
            "-d",
            where,
            *map(str, sources),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if compiled.returncode != 0:
        names = " ".join(path.name for path in sources)
        raise AssertionError(f"javac {names} failed ({compiled.returncode}): {compiled.stderr}")
    for name, text in (files or {}).items():
        path = Path(where) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    logging = Path(where) / "log4j2.properties"
    logging.write_text(_LOG4J2.format(prefix=log_prefix))
    return f"{where}:{classpath}", str(logging)


def run_json_line(
    name: str, argv: list[str], *, timeout: float, stdin: str | None = None, log: list[str] | None = None
):
    """Run `argv` and return the JSON value of the one line it prints; AssertionError, with its stderr, if it fails,
    prints anything else, or does not end within `timeout` seconds. `log`, where given, gets the lines of its
    stderr (what its loggers wrote) when it succeeds."""
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr
        raise AssertionError(f"{name} did not end within {timeout} s; stderr: {stderr}") from None
    if proc.returncode != 0:
        raise AssertionError(f"{name} failed ({proc.returncode}): {proc.stderr}")
    lines = proc.stdout.splitlines()
    if len(lines) != 1:
        raise AssertionError(f"{name} printed {len(lines)} lines, not one: {proc.stdout!r}; stderr: {proc.stderr}")
    try:
        value = json.loads(lines[0])
    except ValueError as exc:
        raise AssertionError(f"{name} printed no JSON ({exc}): {lines[0]!r}; stderr: {proc.stderr}") from None
    if log is not None:
        log.extend(proc.stderr.splitlines())
    return value


def scenario_timeout(scenarios: list[dict], timeout: float | None) -> float:
    """`timeout`, by default 60 s plus each scenario's deadline_ms (20 s where it has none), once `scenarios` are
    checked: ValueError if there are none or two share a name."""
    if not scenarios:
        raise ValueError("no scenarios")
    names = [s.get("name") for s in scenarios]
    if len(set(names)) != len(names):
        raise ValueError(f"scenario names must be unique: {names}")
    return 60.0 + sum(s.get("deadline_ms", 20_000) for s in scenarios) / 1000 if timeout is None else timeout


def run_scenarios(
    name: str, argv: list[str], scenarios: list[dict], *, timeout: float, log: list[str] | None = None
) -> list[dict]:
    """Run `argv`, a runner that reads {"scenarios": [...]} on stdin and prints {"scenarios": [report, ...]}; returns
    the reports, in the scenarios' order. AssertionError (see run_json_line) if it prints none, or not one a
    scenario with its name. `log`: as run_json_line's."""
    answer = run_json_line(name, argv, timeout=timeout, stdin=json.dumps({"scenarios": scenarios}), log=log)
    reports = answer.get("scenarios") if isinstance(answer, dict) else None
    if not isinstance(reports, list):
        raise AssertionError(f"{name} printed no report: {answer!r}")
    names = [s.get("name") for s in scenarios]
    if [r.get("name") for r in reports] != names:
        raise AssertionError(f"{name} answered for {[r.get('name') for r in reports]}, not {names}")
    return reports
