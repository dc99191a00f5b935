"""The config file: named contexts and per-spout profiles, and where each setting of a run comes from.

One rule for every command: a flag on the command line, else its environment variable, else the chosen context,
else the built-in default (docs/contract.md, "Config file"). The command layer knows which values were flags and
which came from the environment (click's parameter source); this module reads the file, checks it, chooses the
context, and says for each setting whether the context sets it and on which line. No Typer here.

    default-context = "lab"

    [contexts.lab]
    zk = "zk1:2181"
    zk-root = ["/kafka-spouts"]
    bootstrap-servers = "k1:9092"
    timeout = "30s"

    [[contexts.lab.profiles]]
    match = "legacy-*"
    storm-kafka-release = "0.9.6"
    start-offset-time = "latest"

    [[profiles]]
    name = "orders"
    match = "orders-spout"
    topic = "orders"

A file that holds a secret (`zk-auth`, `kafka-config`) must be readable by its owner alone, as ssh requires of a
key: refused otherwise (exit 2). A file that is not TOML, or has a key offctl does not know or a value of the wrong
kind, is refused (exit 2) naming the key and its line; nothing in it is ever ignored.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offctl.errors import UsageError
from offctl.inputs import MAX_CONFIG_BYTES, printable, read_text, secret
from offctl.settings.kinds import IN_CONTEXT, IN_DEFAULTS, IN_PROFILE
from offctl.settings.options import BOOL, INT, STR, STR_OR_INT, STRS, keys

CONFIG_VARIABLE = "OFFCTL_CONFIG"
CONTEXT_VARIABLE = "OFFCTL_CONTEXT"
SANDBOX = "sandbox"  # the built-in context: the running sandbox's servers and roots (`offctl sandbox up`)

# The keys of a context: each a command-line option's long name without the dashes, from the one option table
# (offctl.settings.options: where the file takes each option, and what its value must be).
CONNECTION_KEYS = keys(IN_CONTEXT)
# The keys of a profile: the spout settings, the topic the spout should read, its lag threshold.
PROFILE_KEYS = keys(IN_PROFILE)
# A context's defaults: the profile's keys but the topic, and the thresholds, horizons and safety settings.
DEFAULT_KEYS = {k: v for k, v in keys(IN_PROFILE, IN_DEFAULTS).items() if k != "topic"}
SERVER_KEYS = {"mcp-token": STR}
CONTEXT_KEYS = {**CONNECTION_KEYS, **DEFAULT_KEYS, **SERVER_KEYS}
SECRET_KEYS = frozenset({"zk-auth", "kafka-config", "mcp-token"})


@dataclass(frozen=True)
class ProfileTable:
    """One `[[profiles]]` table as the file has it: its settings by key, checked for kind, not yet for meaning."""

    name: str
    match: str
    settings: Mapping[str, Any]
    where: str  # FILE:LINE of its header
    lines: Mapping[str, str] = field(default_factory=dict)  # key -> FILE:LINE


@dataclass(frozen=True)
class Context:
    name: str
    settings: Mapping[str, Any]
    origin: str  # as `config show` says where a value came from: "context lab in FILE"
    lines: Mapping[str, str] = field(default_factory=dict)  # key -> FILE:LINE ("" for the built-in sandbox)
    profiles: tuple[ProfileTable, ...] = ()


@dataclass(frozen=True)
class Config:
    path: Path | None = None  # None: no file (the default path does not exist)
    contexts: Mapping[str, Context] = field(default_factory=dict)
    default_context: str | None = None
    profiles: tuple[ProfileTable, ...] = ()  # the top-level ones


def config_path(flag: str | Path | None, environ: Mapping[str, str]) -> tuple[Path, bool]:
    """The config file to read and whether it was named (--config, OFFCTL_CONFIG: it must exist) or is the
    default, $XDG_CONFIG_HOME/offctl/config.toml (~/.config when unset), which may be absent."""
    if flag:
        return Path(flag), True
    if environ.get(CONFIG_VARIABLE):
        return Path(environ[CONFIG_VARIABLE]), True
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "offctl" / "config.toml", False


def load(path: Path, named: bool) -> Config:
    """The config file, checked: TOML, known keys, values of the right kind, owner-only when it holds a secret."""
    if not named and not path.exists():
        return Config()
    text = read_text(path, "--config", MAX_CONFIG_BYTES)
    where = printable(str(path))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"config {where}: not valid TOML: {exc}") from None
    lines = _Lines(text, where)
    unknown = set(data) - {"default-context", "contexts", "profiles"}
    if unknown:
        key = sorted(unknown)[0]
        raise UsageError(
            f"config {lines.at(key)}: unknown key {key!r} (a file holds default-context, [contexts.NAME] "
            f"and [[profiles]]; connection and default settings go in a context)"
        )
    default = data.get("default-context")
    if default is not None and not isinstance(default, str):
        raise UsageError(f"config {lines.at('default-context')}: default-context must be {STR}")
    tables = data.get("contexts", {})
    if not isinstance(tables, dict):
        raise UsageError(f"config {lines.at('contexts')}: contexts must be tables, [contexts.NAME]")
    contexts = {}
    for name, table in tables.items():
        if name == SANDBOX:
            raise UsageError(
                f"config {lines.header(f'contexts.{name}')}: the context name {SANDBOX!r} is offctl's "
                f"own (the running sandbox); choose another name"
            )
        if not isinstance(table, dict):
            raise UsageError(f"config {lines.at(name)}: contexts.{name} must be a table, [contexts.{name}]")
        start = lines.header_line(f"contexts.{name}")
        settings, keys = _checked(table, CONTEXT_KEYS, f"contexts.{name}", lines, start, extra={"profiles"})
        profiles = _profiles(table.get("profiles", []), f"contexts.{name}.profiles", lines)
        contexts[name] = Context(name, settings, f"context {name} in {where}", keys, profiles)
    config = Config(path, contexts, default, _profiles(data.get("profiles", []), "profiles", lines))
    _owner_only(path, config)
    return config


def choose(config: Config, flag: str | None, environ: Mapping[str, str]) -> Context | None:
    """The context of this run: --context, else OFFCTL_CONTEXT, else the file's default-context, else none."""
    name, said = (
        (flag, "--context")
        if flag
        else (environ.get(CONTEXT_VARIABLE), CONTEXT_VARIABLE)
        if environ.get(CONTEXT_VARIABLE)
        else (config.default_context, "default-context")
    )
    if not name:
        return None
    if name in config.contexts:
        return config.contexts[name]
    if name == SANDBOX:
        return sandbox_context(required=True)
    known = ", ".join(sorted(config.contexts) + [SANDBOX])
    raise UsageError(
        f"{said} {printable(name)!r}: no such context in "
        f"{printable(str(config.path)) if config.path else 'the config file (there is none)'} "
        f"(contexts: {known})"
    )


def sandbox_context(required: bool = False) -> Context | None:
    """The built-in context `sandbox`: the running sandbox's servers and roots; None when none runs (an error when
    it was asked for by name)."""
    from offctl.settings import sandbox as sb

    running = sb.active()
    if running is None:
        if required:
            raise UsageError("context sandbox: no sandbox is running; start it with `offctl sandbox up`")
        return None
    return Context(
        SANDBOX,
        {
            "zk": running.zk,
            "bootstrap-servers": running.broker,
            "zk-root": [running.zk_root],
            "trident-root": [running.trident_root],
            "jstorm-root": [running.jstorm_root],
            "storm-root": running.storm_root,
        },
        "context sandbox (built-in)",
    )


def profiles_of(config: Config, context: Context | None) -> tuple[ProfileTable, ...]:
    """The run's profile tables in the order that decides between globs: the context's, then the top-level ones.
    Each has a name of its own: the JSON names the profile that judged each consumer, and the judgement groups
    consumers by it (offctl.core.rules.judge), so two profiles of one name would judge one's spouts by the other's."""
    run = (context.profiles if context else ()) + config.profiles
    seen: dict[str, ProfileTable] = {}
    for table in run:
        if table.name in seen:
            raise UsageError(
                f"config {table.where}: a profile named {table.name!r} is already at "
                f"{seen[table.name].where} (a profile without `name` is named by its `match`): give "
                f"each profile a name of its own"
            )
        seen[table.name] = table
    return run


def masked(key: str, value: Any) -> Any:
    """A value as `config show` prints it: a secret's value as ***, a librdkafka setting's value too."""
    if key in ("zk-auth", "mcp-token") and value:
        return "***"
    if key == "kafka-config" and value:
        return [f"{str(v).partition('=')[0]}=***" for v in value]
    return value


def document(
    config: Config, context: Context | None, rows: list[tuple[str, Any, str]], profiles: list[tuple[ProfileTable, str]]
) -> dict:
    """What `offctl config show` prints: each setting (key, value with secrets masked, where it came from) and the
    run's profiles in the order that decides between globs, each with what it sets."""
    return {
        "config": str(config.path) if config.path else None,
        "context": context.name if context else None,
        "settings": [{"key": key, "value": masked(key, value), "from": origin} for key, value, origin in rows],
        "profiles": [
            {
                "name": t.name,
                "match": t.match,
                "from": f"{scope} at {t.where}",
                "sets": {k: masked(k, v) for k, v in t.settings.items()},
            }
            for t, scope in profiles
        ],
    }


# --- checks -------------------------------------------------------------------------------------------------


def _kind_ok(kind: str, value: Any) -> bool:
    if kind == STR:
        return isinstance(value, str)
    if kind == STRS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == STR_OR_INT:
        return isinstance(value, (str, int)) and not isinstance(value, bool)
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)  # DURATION


def _checked(
    table: dict, allowed: Mapping[str, str], name: str, lines: _Lines, start: int, extra: set[str] = frozenset()
) -> tuple[dict[str, Any], dict[str, str]]:
    settings, where = {}, {}
    for key, value in table.items():
        if key in extra:
            continue
        at = lines.at(key, start)
        if key not in allowed:
            hint = " (a profile's key: put it in [[profiles]])" if key in PROFILE_KEYS else ""
            raise UsageError(f"config {at}: unknown key {key!r} in [{name}]{hint}")
        if not _kind_ok(allowed[key], value):
            raise UsageError(f"config {at}: {key} in [{name}] must be {allowed[key]}")
        if key in SECRET_KEYS:
            for v in value if isinstance(value, list) else [value]:
                secret(v)
                secret(v.partition("=")[2] if key == "kafka-config" else v.partition(":")[2])
        settings[key], where[key] = (str(value) if allowed[key] == STR_OR_INT else value), at
    return settings, where


def _profiles(tables: Any, name: str, lines: _Lines) -> tuple[ProfileTable, ...]:
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise UsageError(f"config {lines.at(name.rsplit('.', 1)[-1])}: {name} must be tables, [[{name}]]")
    out = []
    for n, table in enumerate(tables):
        start = lines.header_line(name, n, array=True)
        header = f"{lines.where}:{(start or 0) + 1}"
        settings, where = _checked(table, {**PROFILE_KEYS, "match": STR, "name": STR}, f"[{name}]", lines, start)
        if "match" not in settings:
            raise UsageError(
                f'config {header}: [[{name}]] needs match = "SPOUT-ID, GROUP or TXSTATEID" (exact or '
                f'a glob such as "legacy-*")'
            )
        match = settings.pop("match")
        label = settings.pop("name", match)
        out.append(ProfileTable(label, match, settings, header, where))
    return tuple(out)


def _owner_only(path: Path, config: Config) -> None:
    """Refuse a file that holds a secret and that others may read, as ssh refuses such a key."""
    holders = [
        f"{key} in context {c.name}" for c in config.contexts.values() for key in c.settings if key in SECRET_KEYS
    ]
    if not holders:
        return
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        raise UsageError(
            f"config {printable(str(path))} holds a secret ({', '.join(holders)}) and is readable by "
            f"others (mode {mode:04o}): refused; make it readable by its owner alone "
            f"(chmod 600 {printable(str(path))})"
        )


class _Lines:
    """Finds the line of a key in the file's text, for messages: tomllib gives lines for syntax errors only."""

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?")

    def __init__(self, text: str, where: str) -> None:
        self.lines, self.where = text.splitlines(), where

    def header_line(self, dotted: str, nth: int = 0, array: bool = False) -> int | None:
        wanted = _canonical(dotted)
        seen = 0
        for i, line in enumerate(self.lines):
            m = self._HEADER.match(line)
            if m and _canonical(m.group(2)) == wanted and (m.group(1) == "[[") == array:
                if seen == nth:
                    return i
                seen += 1
        return None

    def header(self, dotted: str) -> str:
        return f"{self.where}:{(self.header_line(dotted) or 0) + 1}"

    def at(self, key: str, start: int | None = None) -> str:
        """FILE:LINE of `key = ...` in the table whose header is line `start` (None: the top level); the header's
        line when the key is written another way (a dotted key, an inline table)."""
        pattern = re.compile(rf"""^\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*[=.]""")
        for i in range(0 if start is None else start + 1, len(self.lines)):
            if self._HEADER.match(self.lines[i]):
                break
            if pattern.match(self.lines[i]):
                return f"{self.where}:{i + 1}"
        return f"{self.where}:{(start or 0) + 1}"


def _canonical(dotted: str) -> str:
    return ".".join(part.strip().strip("\"'") for part in dotted.split("."))
