"""The suite's small Java programs (tests/java/ConsumerView.java, tests/storm_runner/*/…Runner.java): compiled once
per session into a temporary directory against a classpath, and run with stdout kept for one JSON line.

Kafka's and Storm's jars bind slf4j to log4j2, whose default configuration writes ERRORs to stdout; each program
keeps stdout for its line anyway, and the configuration written here puts WARN and up on stderr, where a failure's
message shows them, each line prefixed by the program's name."""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

_LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = {prefix}: %p %c{{1}}: %m%n%ex
"""
JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")  # short runs: start fast, one GC thread


def tool(name: str, what: str, java_home: str | None = None) -> str:
    """The JDK's `name` (javac, java): from `java_home` where given, else on PATH."""
    found = str(Path(java_home) / "bin" / name) if java_home else shutil.which(name)
    if found is None or not Path(found).exists():
        raise AssertionError(f"{name} not found: {what} needs a JDK "
                             f"({java_home or 'apt-get install openjdk-17-jdk-headless'})")
    return found


def compile_java(source: Path, classpath: str, *, prefix: str, log_prefix: str, java_home: str | None = None,
                 files: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Compile `source` against `classpath` into a new temporary directory (removed at exit), with `files` (path
    relative to it -> text) written beside the classes; returns (the classpath to run it with, the log4j2 file)."""
    where = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    compiled = subprocess.run([tool("javac", source.stem, java_home), "-nowarn", "-Xlint:none", "-cp", classpath,
                               "-d", where, str(source)], capture_output=True, text=True, timeout=120)
    if compiled.returncode != 0:
        raise AssertionError(f"javac {source.name} failed ({compiled.returncode}): {compiled.stderr}")
    for name, text in (files or {}).items():
        path = Path(where) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    logging = Path(where) / "log4j2.properties"
    logging.write_text(_LOG4J2.format(prefix=log_prefix))
    return f"{where}:{classpath}", str(logging)


def run_json_line(name: str, argv: list[str], *, timeout: float, stdin: str | None = None):
    """Run `argv` and return the JSON value of the one line it prints; AssertionError, with its stderr, if it fails,
    prints anything else, or does not end within `timeout` seconds."""
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
        return json.loads(lines[0])
    except ValueError as exc:
        raise AssertionError(f"{name} printed no JSON ({exc}): {lines[0]!r}; stderr: {proc.stderr}") from None
