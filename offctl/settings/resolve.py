"""The settings of one run, resolved once for every face (the commands, `offctl mcp`, storm-kafka-monitor).

One rule: a flag on the command line, else its environment variable, else the chosen context of the config file,
else the built-in default (docs/contract.md, "Config file"); a per-spout profile sits between the context and
the environment. The face says which values it parsed and where each came from (a flag, an environment variable,
or nothing: the default); `Given.from_options` applies the config file below them, and the functions below make what
the library reads: a run's Reading (the Connection, the Selection, the Profiles each consumer is judged by, the
Estimates), checked once, and a write's Safety. Every option is read by its name in offctl.settings.options.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from enum import Enum
from pathlib import Path
from typing import Any

from offctl.core.plans.targets import parse_static_partitions
from offctl.core.records.model import ConsumerKey, Thresholds
from offctl.core.rules.profiles import Profile, Profiles
from offctl.core.storm import kafka_releases
from offctl.core.storm.releases import (
    EARLIEST_TIME,
    GUARANTEE_RELEASES,
    LATEST_TIME,
    FirstPoll,
    Guarantee,
    Isolation,
    SpoutProfile,
    StormKafka,
    StormKafkaClient,
    default_commit_period_ms,
    guarantees_of,
    release,
)
from offctl.core.time.retention import parse_span, parse_topic_retention
from offctl.errors import UsageError
from offctl.inputs import check_bootstrap_servers, check_quiet_period, check_timeout, check_zk_hosts, secret
from offctl.settings import configfile
from offctl.settings.connection import STORM_ROOT, TIMEOUT_S, Connection, parse_kafka_config
from offctl.settings.options import DEFAULTS, OPTIONS, SPOUT_OPTIONS, parse_value
from offctl.settings.run import Estimates, ExpiryOptions, Reading, Safety, Selection, validate

FLAG, DEFAULT = "flag", "default"
Say = Callable[[str], None]  # where a notice of the resolution goes (the commands: stderr)


class Given:
    """The options of one run, read by name (`given.zk`), and where each value came from: `flag`,
    `env VARIABLE`, `context NAME in FILE`, `sandbox`, or `default`."""

    def __init__(
        self,
        values: Mapping[str, Any],
        origins: Mapping[str, str],
        config: configfile.Config | None = None,
        context: configfile.Context | None = None,
    ) -> None:
        self.values, self.origins = dict(values), dict(origins)
        self.config, self.context = config or configfile.Config(), context

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def origin(self, name: str) -> str:
        return self.origins.get(name, DEFAULT)

    def flag(self, name: str) -> bool:
        return self.origin(name) == FLAG

    @classmethod
    def from_options(
        cls, values: Mapping[str, Any], origins: Mapping[str, str], environ: Mapping[str, str] = os.environ
    ) -> Given:
        """The values a face parsed, with their origins, and below them the chosen context's settings."""
        given = cls(values, origins)
        if "context" in values:
            given._from_config(environ)
        return given

    def _from_config(self, environ: Mapping[str, str]) -> None:
        """Below the flags and the environment, the chosen context's settings (offctl/settings/configfile.py)."""
        path, named = configfile.config_path(self.values.get("config"), environ)
        self.config = configfile.load(path, named)
        self.context = configfile.choose(self.config, self.values.get("context"), environ)
        if self.context is None:
            return
        if not self.values.get("context"):
            self.values["context"] = self.context.name
            self.origins["context"] = f"default-context in {self.config.path}"
        for name in SPOUT_OPTIONS + ("lag_threshold",):  # what profiles build on, in every command
            self.values.setdefault(name, DEFAULTS[name])
        self.apply_context()

    def apply_context(self) -> None:
        """The context's settings for every value still at its built-in default (flags and environment win)."""
        for name in self.values:
            key = name.replace("_", "-")
            if self.origins.setdefault(name, DEFAULT) == DEFAULT and key in self.context.settings:
                self.values[name] = parse_value(name, self.context.settings[key], self.context.lines.get(key))
                self.origins[name] = self.context.origin

    def of_context(self, context: configfile.Context) -> Given:
        """The settings of another context of the file, as `--context NAME` alone would give them: the context's
        settings over the built-in defaults (the command line's flags and environment belong to this run)."""
        values = {name: DEFAULTS.get(name) for name in self.values}
        values.update(config=self.values.get("config"), context=context.name)
        other = Given(values, {name: DEFAULT for name in values}, self.config, context)
        other.apply_context()
        return other

    def document(self) -> dict:
        """`config show -o json`'s document of these settings (offctl mcp's `settings` tool answers it too)."""
        rows = [(name.replace("_", "-"), _plain(value), self.origin(name)) for name, value in self.values.items()]
        own = self.context.profiles if self.context else ()
        tables = [
            (t, f"context {self.context.name}" if t in own else "top level")
            for t in configfile.profiles_of(self.config, self.context)
        ]
        return configfile.document(self.config, self.context, rows, tables)


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --- the connection ----------------------------------------------------------------------------------------------

# The roots a sandbox brings its own of: (name, environment variable, flag), as the option table declares them.
ROOT_VARIABLES = tuple(
    (name, OPTIONS[name].env, OPTIONS[name].flags[0])
    for name in ("zk_root", "trident_root", "jstorm_root", "storm_root")
)
# The roots spouts are listed under, as the sandbox's notices name them (storm_root is Storm's own: no spout's).
SPOUT_ROOTS = {"zk_root": "zkRoot", "trident_root": "Trident root", "jstorm_root": "JStorm root"}


def connection(given: Given, say: Say, *, sandbox: bool = True) -> Connection:
    """The connection the flags and environment name; with neither --zk nor --bootstrap-servers, the
    running sandbox (`offctl sandbox up`), said through `say`: its own roots, except those given on the command line
    (roots of the environment belong to the servers of the environment, and are not applied to the sandbox's;
    `say` says which). The origins tell a flag from an environment value (Connection.default_roots).
    In a rehearsal shell (OFFCTL_SANDBOX=1, `eval "$(offctl sandbox env)"`), servers that are not the running
    sandbox's are refused (exit 2), whatever set them. `sandbox=False`: no sandbox is taken (storm-kafka-monitor, whose
    servers Storm UI names). An option the run does not take is its built-in default."""
    zk, bootstrap_servers = given.get("zk"), given.get("bootstrap_servers")
    if sandbox and not (zk or bootstrap_servers):
        running = configfile.sandbox_context()  # the built-in context, taken when nothing names a server
        if running is not None:
            _use_sandbox(given, running, say)
            zk, bootstrap_servers = given.zk, given.bootstrap_servers
    if os.environ.get("OFFCTL_SANDBOX") == "1":
        _rehearsal(zk, bootstrap_servers)
    zk_auth = given.get("zk_auth")
    if zk_auth:
        secret(zk_auth)
        secret(zk_auth.partition(":")[2])
    if zk:
        check_zk_hosts(zk)
    if bootstrap_servers:
        check_bootstrap_servers(bootstrap_servers)
    timeout = check_timeout(given.get("timeout", TIMEOUT_S))
    return Connection(
        zk=zk or None,
        zk_roots=tuple(given.get("zk_root") or ()),
        bootstrap_servers=bootstrap_servers or None,
        storm_root=given.get("storm_root", STORM_ROOT),
        timeout=timeout,
        zk_auth=zk_auth or None,
        kafka_config=parse_kafka_config(given.get("kafka_config") or (), given.get("kafka_config_file")),
        **_other_roots(given),
    )


def _other_roots(given: Given) -> dict:
    """The Connection's roots besides --zk-root's, and whether each came from elsewhere than the command line."""
    return {
        "default_roots": given.origin("zk_root") != FLAG,
        "default_trident_roots": given.origin("trident_root") != FLAG,
        "trident_roots": tuple(given.get("trident_root") or ()),
        "jstorm_roots": tuple(given.get("jstorm_root") or ()),
        "default_jstorm_roots": given.origin("jstorm_root") != FLAG,
    }


def named_servers(given: Given) -> Connection:
    """The servers and roots the options name, as they are: what a run that reads no server (an audit of saved
    snapshots) says it was given. No sandbox, no checks."""
    return Connection(
        zk=given.get("zk"), zk_roots=tuple(given.get("zk_root") or ()), bootstrap_servers=given.get("bootstrap_servers")
    )


def _use_sandbox(given: Given, sandbox: configfile.Context, say: Say) -> None:
    """The running sandbox's servers and roots into `given`, each root given on the command line kept."""
    source = {p: given.origin(p) for p, _, _ in ROOT_VARIABLES}
    kept = {
        p: given.get(p) if source[p] == FLAG else sandbox.settings[p.replace("_", "-")] for p, _, _ in ROOT_VARIABLES
    }
    zk, kafka = sandbox.settings["zk"], sandbox.settings["bootstrap-servers"]
    say(
        f"offctl: using the sandbox (ZooKeeper {zk}, Kafka {kafka}, {_roots_text(kept, SPOUT_ROOTS, ', ')}); see "
        f"`offctl sandbox status`"
    )
    _say_roots(source, kept, say)
    roots = {p: (FLAG if o == FLAG else sandbox.origin) for p, o in source.items() if p in given.values}
    given.origins.update({"zk": sandbox.origin, "bootstrap_servers": sandbox.origin, **roots})
    given.values.update(
        {
            "zk": zk,
            "bootstrap_servers": kafka,
            "zk_root": kept["zk_root"],
            "storm_root": kept["storm_root"],
            **{p: kept[p] for p in ("trident_root", "jstorm_root") if p in given.values},
        }
    )


def _roots_text(kept: Mapping[str, Any], names: Iterable[str], sep: str) -> str:
    """Spout roots as the sandbox's notices name them: `zkRoot /sandbox/spouts`, `-` for none."""
    return sep.join(f"{SPOUT_ROOTS[p]} {', '.join(kept[p] or ['-'])}" for p in names)


def _say_roots(source: Mapping[str, str], kept: Mapping[str, Any], say: Say) -> None:
    """What the sandbox's roots owe to the environment and the command line: the environment's not applied, and the
    other spout roots kept when some of --zk-root, --trident-root and --jstorm-root are given."""
    ignored = [var for p, var, _ in ROOT_VARIABLES if source[p].startswith("env ")]
    if ignored:
        say(
            f"offctl: {', '.join(ignored)} not applied to the sandbox: the environment names no servers, so its "
            f"roots are not the sandbox's; the sandbox's own are used (`eval \"$(offctl sandbox env)\"` sets every "
            f"variable to the sandbox's)"
        )
    given_roots = [p for p in SPOUT_ROOTS if source[p] == FLAG]
    others = [p for p in SPOUT_ROOTS if source[p] != FLAG]
    if given_roots and others:
        one = len(others) == 1
        say(
            f"offctl: {', '.join(OPTIONS[p].flags[0] for p in given_roots)} given: the sandbox's "
            f"{_roots_text(kept, others, ' and ')} {'is' if one else 'are'} kept (give "
            f"{' or '.join(OPTIONS[p].flags[0] for p in others)} to replace {'it' if one else 'them'})"
        )


def _rehearsal(zk: str | None, bootstrap_servers: str | None) -> None:
    """A rehearsal shell (OFFCTL_SANDBOX=1) reaches the running sandbox and nothing else: a flag or a variable set
    after `eval "$(offctl sandbox env)"` that points elsewhere is refused before anything connects."""
    from offctl.settings.sandbox import active, foreign_servers

    sandbox = active()
    foreign = foreign_servers(sandbox, zk, bootstrap_servers)
    if sandbox is None:
        raise UsageError(
            f"OFFCTL_SANDBOX=1 (a rehearsal shell) but no sandbox is running: refused to use "
            f"{' and '.join(foreign) or 'any server'}; start it with `offctl sandbox up`, or unset "
            f"OFFCTL_SANDBOX to leave the rehearsal"
        )
    if foreign:
        raise UsageError(
            f"OFFCTL_SANDBOX=1 (a rehearsal shell): this command would use {' and '.join(foreign)}, "
            f"not the running sandbox's ZooKeeper {sandbox.zk} and Kafka {sandbox.broker}; refused, "
            f"nothing was read or written (unset OFFCTL_SANDBOX to leave the rehearsal)"
        )


# --- what the settings make ----------------------------------------------------------------------------------------


def safety(given: Given, execute: bool | None = None) -> Safety:
    """The write's safety settings (reset, restore, migrate, delete, mcp's apply; audit --repair has its own
    --execute). A setting the run does not take is its built-in default."""
    defaults = Safety()
    return Safety(
        execute=bool(given.get("execute", False) if execute is None else execute),
        force=frozenset(g.value for g in given.get("force") or ()),
        quiet_period_s=check_quiet_period(given.get("quiet_period", defaults.quiet_period_s)),
        backup_dir=given.get("backup_dir") or defaults.backup_dir,
        audit_log=given.get("audit_log") or defaults.audit_log,
    )


def spout_thresholds(settings: Mapping[str, Any]) -> Thresholds:
    """The Thresholds (topic, lag threshold, spout profile, static partitions, retention) these settings describe,
    read by option name; a setting not given is its built-in default (DEFAULTS)."""
    s = {**DEFAULTS, **settings}
    horizon = s["retention_horizon"]
    return Thresholds(
        expected_topic=s["topic"],
        lag_threshold=s["lag_threshold"],
        spout=_spout_profile(s),
        static_partitions=parse_static_partitions(s["static_partitions"]),
        retention_horizon_ms=parse_span(horizon, "--retention-horizon") if horizon is not None else None,
        topic_retention_ms=parse_topic_retention(s["topic_retention"]),
    )


def _spout_profile(s: Mapping[str, Any]) -> SpoutProfile:
    try:
        line = StormKafka.of_version(s["storm_kafka_release"])
    except ValueError as exc:
        raise UsageError(f"--storm-kafka-release: {exc}") from None
    client_release = s["storm_kafka_client_release"]
    try:
        client = StormKafkaClient.of_version(client_release)
        major = StormKafkaClient.major_of(client_release)
    except ValueError as exc:
        raise UsageError(f"--storm-kafka-client-release: {exc}") from None
    guarantee = Guarantee(s["processing_guarantee"])
    if guarantee not in guarantees_of(client):
        raise UsageError(
            f"--processing-guarantee {guarantee.value}: storm-kafka-client {client_release} has no "
            f"ProcessingGuarantee (it came in {GUARANTEE_RELEASES}; earlier releases commit acked "
            f"offsets only, as AT_LEAST_ONCE)"
        )
    return SpoutProfile(
        storm_kafka=line,
        start_offset_time=_start_offset_time(s["start_offset_time"]),
        ignore_zk_offsets=s["ignore_zk_offsets"],
        max_offset_behind=s["max_offset_behind"],
        out_of_range_reset=not s["no_out_of_range_reset"],
        client=client,
        first_poll=FirstPoll(s["first_poll_offset_strategy"]),
        client_major=major,
        guarantee=guarantee,
        commit_period_ms=s["offset_commit_period_ms"] or default_commit_period_ms(client_release),
        client_release=client_release.strip(),
        isolation_level=Isolation(s["isolation_level"]),
        kafka_clients_release=_kafka_clients_release(s["kafka_clients_release"]),
        jstorm_from_beginning=s["jstorm_from_beginning"],
    )


def _kafka_clients_release(text: str | None) -> str | None:
    """--kafka-clients-release as given, once it reads as a Kafka release (its table is looked up when judged)."""
    if text is None:
        return None
    try:
        release(text, "Kafka client", "2.8.1")
    except ValueError as exc:
        raise UsageError(f"--kafka-clients-release: {exc}") from None
    return text.strip()


def _start_offset_time(text: str) -> int:
    times = {"earliest": EARLIEST_TIME, "latest": LATEST_TIME}
    if text in times:
        return times[text]
    if text.isdigit() and len(text) <= 15:
        return int(text)
    raise UsageError(f"--start-offset-time {text!r}: expected earliest, latest or epoch milliseconds")


def thresholds(given: Given) -> Thresholds:
    """The run's Thresholds, from the shared options by name."""
    return spout_thresholds(given.values)


def profiles(given: Given) -> Profiles:
    """The run's Profiles: the defaults (thresholds(given)) and one Profile a `[[profiles]]` table of the config
    file, the context's first and then the top-level ones. Each is complete: built-in default < context < the
    profile's table < environment < flag (a flag overrides every profile)."""
    out = []
    for table in configfile.profiles_of(given.config, given.context):
        values = dict(given.values)
        for key, value in table.settings.items():
            name = key.replace("-", "_")
            origin = given.origin(name)
            if origin != FLAG and not origin.startswith("env "):
                values[name] = parse_value(name, value, table.lines.get(key))
        out.append(Profile(table.name, table.match, spout_thresholds(values)))
    return Profiles(default=thresholds(given), profiles=tuple(out))


def written_profile(given: Given, consumers: Iterable[str]) -> SpoutProfile:
    """The spout profile a write is planned and verified with (reset, restore, migrate): the profile of the
    consumers it writes (offctl.core.rules.profiles' rule; a flag overrides every profile), the defaults for none named.
    Consumers of different profiles in one write are refused: each write has one spout's settings."""
    run = profiles(given)
    found: dict[str | None, list[str]] = {}
    chosen = run.default
    for consumer in consumers:
        name, chosen = run.judging(ConsumerKey("", consumer))
        found.setdefault(name, []).append(consumer)
    if len(found) > 1:
        said = "; ".join(f"{', '.join(c)}: {'profile ' + n if n else 'the defaults'}" for n, c in found.items())
        raise UsageError(
            f"the consumers of this write are judged by different profiles ({said}): write each "
            f"profile's consumers in a run of their own"
        )
    return chosen.spout


def client_profile(client_release: str, first_poll: FirstPoll | str) -> SpoutProfile:
    """The spout profile a write's Kafka commits are verified against (reset --group, restore, migrate): the
    storm-kafka-client release and first-poll strategy given, every other setting as inspect's defaults."""
    return spout_thresholds(
        {"storm_kafka_client_release": client_release, "first_poll_offset_strategy": first_poll}
    ).spout


def selection(given: Given) -> Selection:
    """What to read, from the selection options by name."""
    return Selection(
        tuple(given.get("spout") or ()),
        tuple(given.get("group") or ()),
        given.get("topic"),
        given.get("all_groups", False),
        tridents=tuple(given.get("trident") or ()),
        jstorms=tuple(given.get("jstorm") or ()),
    )


def expiry_options(given: Given) -> ExpiryOptions:
    return ExpiryOptions(given.commit_expiry_horizon, given.offsets_retention_minutes)


def estimates(given: Given) -> Estimates:
    """What the reads after the analysis are told (pipeline.Estimates): the time-lag budget, the expiry options and
    the what-if's Kafka release (checked against offctl's table)."""
    what_if = given.get("kafka_release")
    if what_if is not None:
        try:
            kafka_releases.line_of(what_if)
        except ValueError as exc:
            raise UsageError(f"--kafka-release: {exc}") from None
    return Estimates(given.time_lag_budget, expiry_options(given), kafka_release=what_if)


def reading(given: Given, say: Say, *, sandbox: bool = True, checked: bool = True) -> Reading:
    """What a run reads and how it judges it: the connection, the selection, the profiles and the estimates the
    options give, checked before anything connects. `sandbox=False`: no sandbox is taken (connection);
    `checked=False`: the selection is the face's own, made later from what it is asked (storm-kafka-monitor: Storm
    UI's arguments), and checked there."""
    made = Reading(connection(given, say, sandbox=sandbox), selection(given), profiles(given), estimates(given))
    return validate(made) if checked else made


def fleet_reading(given: Given, say: Say, *, selected: bool = True) -> Reading:
    """The reading of a whole fleet (offctl mcp's `fleet`): every root the connection names is read, not only the
    default ones, and every group Storm committed for when it reaches Kafka; the selection options given when
    `selected` (the command line's run), none for the config file's other contexts."""
    conn = replace(connection(given, say), default_roots=False, default_trident_roots=False, default_jstorm_roots=False)
    chosen = selection(given) if selected else Selection()
    chosen = replace(chosen, all_groups=bool(conn.bootstrap_servers) or chosen.all_groups)
    return validate(Reading(conn, chosen, profiles(given), estimates(given)))


def saved_reading(given: Given) -> Reading:
    """The reading of a run that reads no server (an audit of saved snapshots): the servers and roots as named
    (named_servers), the selection, profiles and estimates as given; nothing to check against a server."""
    return Reading(named_servers(given), selection(given), profiles(given), estimates(given))
