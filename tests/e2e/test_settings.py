"""Options declared once, durations, the config file (contexts, profiles) and where each setting comes from.

Precedence is flag > environment > context > built-in default for every command (offctl/settings/configfile.py,
commands/options.py); a profile sits between the context and the environment (docs/contract.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import typer.main

from offctl.commands.app import app
from offctl.inputs import parse_seconds
from tests.conftest import storm_record


def _param(command: str, option: str):
    group = typer.main.get_command(app)
    for word in command.split():
        group = group.commands[word]
    return next(p for p in group.params if option in p.opts)


def _parse(command: str, option: str, text: str):
    import typer.core

    return _param(command, option).process_value(typer.Context(typer.core.TyperCommand("offctl")), text)


# --- durations: one syntax for every duration option; a bare number keeps the option's old meaning --------------


@pytest.mark.parametrize(
    "command, option, text, expected",
    [
        ("inspect", "--timeout", "0.5", 0.5),  # bare: seconds, as before
        ("inspect", "--timeout", "30s", 30.0),
        ("inspect", "--timeout", "2m", 120.0),
        ("inspect", "--time-lag-budget", "5", 5.0),
        ("inspect", "--time-lag-budget", "1m", 60.0),
        ("inspect", "--commit-expiry-horizon", "86400", 86400.0),
        ("inspect", "--commit-expiry-horizon", "6h", 21600.0),
        ("inspect", "--commit-expiry-horizon", "7d", 604800.0),
        ("inspect", "--commit-expiry-horizon", "1h30m", 5400.0),
        ("inspect", "--offsets-retention-minutes", "10080", 10080),  # bare: minutes, as the broker's setting
        ("inspect", "--offsets-retention-minutes", "7d", 10080),
        ("inspect", "--offsets-retention-minutes", "90m", 90),
        ("serve", "--interval", "30", 30.0),
        ("serve", "--interval", "5m", 300.0),
        ("watch", "--interval", "0.5", 0.5),
        ("watch", "--interval", "2s", 2.0),
        ("peek", "--budget", "90s", 90.0),
        ("peek", "--budget", "3", 3.0),
        ("reset", "--quiet-period", "10", 10.0),
        ("reset", "--quiet-period", "1m30s", 90.0),
        ("delete", "--quiet-period", "0", 0.0),
        ("audit", "--quiet-period", "6h", 21600.0),
        ("reset", "--by-duration", "30m", "PT1800S"),  # as the ISO-8601 that kafka-consumer-groups takes
        ("reset", "--by-duration", "1d12h", "PT129600S"),
        ("reset", "--by-duration", "PT30M", "PT30M"),  # ISO-8601 as before
    ],
)
def test_every_duration_option_takes_the_one_syntax(command, option, text, expected):
    assert _parse(command, option, text) == expected


@pytest.mark.parametrize(
    "command, option, text",
    [
        ("inspect", "--timeout", "ten"),
        ("inspect", "--timeout", "5 h"),
        ("inspect", "--timeout", "5w"),
        ("inspect", "--commit-expiry-horizon", "-1"),
        ("inspect", "--commit-expiry-horizon", "nan"),
        ("inspect", "--commit-expiry-horizon", "inf"),
        ("inspect", "--commit-expiry-horizon", "11000d"),
        ("inspect", "--time-lag-budget", "2h"),
        ("inspect", "--offsets-retention-minutes", "0"),
        ("inspect", "--offsets-retention-minutes", "90s"),
        ("inspect", "--offsets-retention-minutes", "ten"),
        ("serve", "--interval", "0.5"),
        ("serve", "--interval", "2d"),
        ("watch", "--interval", "2h"),
    ],
)
def test_a_duration_out_of_syntax_or_range_is_refused(command, option, text):
    with pytest.raises(typer.BadParameter):
        _parse(command, option, text)


@pytest.mark.parametrize(
    "text, bare, expected",
    [
        ("30s", 1, 30.0),
        ("90m", 1, 5400.0),
        ("6h", 1, 21600.0),
        ("7d", 1, 604800.0),
        ("1d12h", 1, 129600.0),
        ("250ms", 1, 0.25),
        ("12", 1, 12.0),
        ("12", 60, 720.0),
        (" 6H ", 1, 21600.0),
        (3.5, 60, 3.5),
    ],
)
def test_parse_seconds(text, bare, expected):
    assert parse_seconds(text, bare) == expected


@pytest.mark.parametrize("text", ["", "h", "1x", "1h 30m", "--1s", "1" * 50 + "s"])
def test_parse_seconds_refuses(text):
    with pytest.raises(ValueError):
        parse_seconds(text)


def test_the_commit_expiry_message_prints_durations_as_every_message_does():
    """One format for durations in messages (offctl.core.records.model.duration): `1h42m`, never `1.7 h`."""
    from offctl.core.time.expiry import _duration

    assert _duration(6120) == "1h42m" and _duration(-6120) == "1h42m" and _duration(3 * 86400) == "3d00h"


# --- help panels ---------------------------------------------------------------------------------------------

PANELS = {
    "--zk": "Connection",
    "--timeout": "Connection",
    "--context": "Connection",
    "--config": "Connection",
    "--spout": "Selection",
    "--group": "Selection",
    "--topic": "Selection",
    "--storm-kafka-release": "Spout settings",
    "--first-poll-offset-strategy": "Spout settings",
    "--lag-threshold": "Thresholds and horizons",
    "--time-lag-budget": "Thresholds and horizons",
    "--retention-horizon": "Thresholds and horizons",
    "--output": "Output",
    "--fail-on": "Output",
}


@pytest.mark.parametrize("command", ["inspect", "serve", "watch", "audit", "peek"])
def test_shared_options_are_grouped_in_their_help_panels(command):
    params = {o: p for p in typer.main.get_command(app).commands[command].params for o in p.opts}
    for option, panel in PANELS.items():
        if option in params and not (command in ("serve", "watch") and option == "--output"):
            assert params[option].rich_help_panel == panel, (command, option)
    assert {"--zk", "--timeout", "--context"} <= set(params)


def test_help_shows_the_panels(cli):
    result = cli("inspect", "--help", env={"COLUMNS": "250"})
    assert result.exit_code == 0
    for panel in ("Connection", "Selection", "Spout settings", "Thresholds and horizons", "Output"):
        assert f"─ {panel} ─" in result.stdout, panel
    assert "[default: the release's" in result.stdout  # help text in brackets is not taken for markup


def test_one_enum_per_concept():
    from offctl.core.storm.releases import FirstPoll, Guarantee

    assert _parse("inspect", "--first-poll-offset-strategy", "LATEST") is FirstPoll.LATEST
    assert _parse("inspect", "--processing-guarantee", "AT_MOST_ONCE") is Guarantee.AT_MOST_ONCE
    assert _parse("reset", "--first-poll-offset-strategy", "EARLIEST") is FirstPoll.EARLIEST


# --- the config file -------------------------------------------------------------------------------------------


def _config(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


LAB = """
default-context = "lab"

[contexts.lab]
zk = "ctx-zk:2181"
zk-root = ["/ctx-root"]
timeout = "30s"
first-poll-offset-strategy = "LATEST"

[contexts.other]
zk = "other-zk:2181"
"""


def _show(cli, *args, env=None) -> dict:
    result = cli("config", "show", "-o", "json", *args, env=env)
    assert result.exit_code == 0, result.stderr
    return {row["key"]: (row["value"], row["from"]) for row in json.loads(result.stdout)["settings"]}


@pytest.mark.parametrize(
    "args, env, key, value, origin",
    [
        ((), {}, "zk", "ctx-zk:2181", "context lab in {file}"),  # default-context
        ((), {"OFFCTL_ZK": "env-zk:1"}, "zk", "env-zk:1", "env OFFCTL_ZK"),  # environment over context
        (("--zk", "flag-zk:1"), {"OFFCTL_ZK": "env-zk:1"}, "zk", "flag-zk:1", "flag"),  # flag over environment
        (("--context", "other"), {}, "zk", "other-zk:2181", "context other in {file}"),  # --context over default
        ((), {"OFFCTL_CONTEXT": "other"}, "zk", "other-zk:2181", "context other in {file}"),
        (("--context", "lab"), {"OFFCTL_CONTEXT": "other"}, "zk", "ctx-zk:2181", "context lab in {file}"),
        ((), {}, "timeout", 30.0, "context lab in {file}"),  # a duration in the file
        ((), {"OFFCTL_TIMEOUT": "2m"}, "timeout", 120.0, "env OFFCTL_TIMEOUT"),
        (("--timeout", "5"), {}, "timeout", 5.0, "flag"),
        (("--context", "other"), {}, "timeout", 10.0, "default"),  # a context that does not set it: the default
        ((), {}, "first-poll-offset-strategy", "LATEST", "context lab in {file}"),
        ((), {}, "storm-root", "/storm", "default"),
        ((), {}, "zk-root", ["/ctx-root"], "context lab in {file}"),  # a repeatable option: a list
        (("--zk-root", "/a", "--zk-root", "/b"), {}, "zk-root", ["/a", "/b"], "flag"),
    ],
)
def test_precedence_is_flag_then_environment_then_context_then_default(cli, tmp_path, args, env, key, value, origin):
    path = _config(tmp_path, LAB)
    settings = _show(cli, "--config", str(path), *args, env=env)
    assert settings[key] == (value, origin.format(file=path))


def test_the_config_file_is_found_by_variable_and_by_xdg(cli, tmp_path):
    path = _config(tmp_path, LAB)
    assert _show(cli, env={"OFFCTL_CONFIG": str(path)})["zk"][0] == "ctx-zk:2181"
    (tmp_path / "xdg" / "offctl").mkdir(parents=True)
    _config(tmp_path / "xdg" / "offctl", LAB)
    assert _show(cli, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})["zk"][0] == "ctx-zk:2181"
    assert _show(cli, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})["zk"] == (None, "default")


@pytest.mark.parametrize(
    "text, said",
    [
        ("a = \n", "not valid TOML: Invalid value (at line 1, column 5)"),
        ('[contexts.lab]\nzk = "h:1"\nzkk = "x"\n', "config.toml:3: unknown key 'zkk' in [contexts.lab]"),
        ('colour = "red"\n', "config.toml:1: unknown key 'colour'"),
        (
            '[contexts.lab]\nzk = "h:1"\n\ntimeout = true\n',
            "config.toml:4: timeout in [contexts.lab] must be a duration",
        ),
        ('[contexts.lab]\nzk-root = "/r"\n', "config.toml:2: zk-root in [contexts.lab] must be a list of strings"),
        ('[contexts.lab]\ntimeout = "7x"\n', "config.toml:2: timeout: expected a duration"),
        ('[contexts.lab]\nfirst-poll-offset-strategy = "SOMETIMES"\n', "config.toml:2: first-poll-offset-strategy:"),
        ("[contexts.lab]\nlag-threshold = -1\n", "config.toml:2: lag-threshold:"),
        ('[[profiles]]\nname = "x"\nstorm-kafka-release = "0.9.6"\n', "config.toml:1: [[profiles]] needs match"),
        ('[[profiles]]\nmatch = "x"\n\nzk = "h:1"\n', "config.toml:4: unknown key 'zk' in [[profiles]]"),
        (
            '[contexts.lab]\nzk = "h:1"\n[[contexts.lab.profiles]]\nmatch = "x"\nmax-offset-behind = "many"\n',
            "config.toml:5: max-offset-behind in [[contexts.lab.profiles]] must be a whole number",
        ),
        (
            '[contexts.lab]\nzk = "h:1"\n[[profiles]]\nmatch = "x"\nstorm-kafka-release = "7.7"\n',
            "--storm-kafka-release",
        ),
        ('[contexts.sandbox]\nzk = "h:1"\n', "config.toml:1: the context name 'sandbox' is offctl's own"),
        ('default-context = "nope"\n', "default-context 'nope': no such context"),
        # two profiles of one name: the second's spouts would be judged by the first's settings
        # (offctl.core.rules.judge)
        (
            '[contexts.lab]\nzk = "h:1"\n[[profiles]]\nname = "p"\nmatch = "a-*"\n'
            '[[profiles]]\nname = "p"\nmatch = "b-*"\n',
            "config.toml:6: a profile named 'p' is already at",
        ),
        (
            '[contexts.lab]\nzk = "h:1"\n[[contexts.lab.profiles]]\nmatch = "a-*"\n[[profiles]]\nmatch = "a-*"\n',
            "config.toml:5: a profile named 'a-*' is already at",
        ),
    ],
)
def test_a_bad_config_file_is_a_usage_error_naming_key_and_line(cli, tmp_path, text, said):
    path = _config(tmp_path, text)
    result = (
        cli("inspect", "--config", str(path), "--context", "lab", "--zk", "h:1", "--zk-root", "/r")
        if "default-context" not in text
        else cli("inspect", "--config", str(path))
    )
    assert result.exit_code == 2 and said in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert result.stdout == ""


def test_a_named_config_file_that_is_missing_is_refused(cli, tmp_path):
    result = cli("config", "show", "--config", str(tmp_path / "missing.toml"))
    assert result.exit_code == 2 and "cannot read it" in result.stderr


SECRET = '[contexts.lab]\nzk = "h:1"\nzk-auth = "storm:hunter2-in-file"\nkafka-config = ["sasl.password=pw-in-file"]\n'


def test_a_config_file_with_a_secret_must_be_owner_only(cli, tmp_path):
    path = _config(tmp_path, SECRET, mode=0o640)
    result = cli("config", "show", "--config", str(path), "--context", "lab")
    assert result.exit_code == 2 and "readable by others (mode 0640)" in result.stderr and "chmod 600" in result.stderr
    assert "hunter2-in-file" not in result.stderr + result.stdout and "pw-in-file" not in result.stderr + result.stdout
    path.chmod(0o600)
    shown = _show(cli, "--config", str(path), "--context", "lab")
    assert shown["zk-auth"][0] == "***" and shown["kafka-config"][0] == ["sasl.password=***"]


def test_config_show_through_the_real_cli(tmp_path):
    """`offctl config show` as a user runs it: the default file under XDG_CONFIG_HOME, a table and JSON."""
    (tmp_path / "offctl").mkdir()
    path = _config(tmp_path / "offctl", LAB + PROFILES + SECRET.replace("[contexts.lab]", "[contexts.third]"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFCTL_")} | {
        "XDG_CONFIG_HOME": str(tmp_path),
        "OFFCTL_TIMEOUT": "45s",
    }

    def run(*a: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "offctl", "config", "show", *a], env=env, capture_output=True, text=True, timeout=60
        )

    table = run()
    assert table.returncode == 0, table.stderr
    assert "context lab in" in table.stdout and "env OFFCTL_TIMEOUT" in table.stdout and "legacy-*" in table.stdout
    doc = json.loads(run("-o", "json", "--lag-threshold", "3").stdout)
    assert doc["config"] == str(path) and doc["context"] == "lab"
    rows = {r["key"]: r for r in doc["settings"]}
    assert rows["timeout"]["value"] == 45.0 and rows["timeout"]["from"] == "env OFFCTL_TIMEOUT"
    assert rows["lag-threshold"] == {"key": "lag-threshold", "value": 3, "from": "flag"}
    assert rows["context"]["from"] == f"default-context in {path}"
    assert [(p["name"], p["match"], p["sets"]) for p in doc["profiles"]] == [
        ("legacy-*", "legacy-*", {"storm-kafka-release": "0.9.6", "start-offset-time": "latest", "topic": "orders"}),
        ("clients", "orders-*", {"lag-threshold": 100}),
    ]
    assert doc["profiles"][0]["from"].startswith("context lab at ")
    assert "hunter2-in-file" not in json.dumps(doc)


# --- profiles: each complete, built default < context < profile < environment < flag -------------------------


def lab_profiles(topic: str, clients: str, lag_threshold: int) -> str:
    """Two profiles of a config file (Issue 28): in context lab, legacy-* spouts run storm-kafka 0.9.6 with
    start-offset-time latest on `topic`; `clients`, a profile of every context, matches `clients` with its own lag
    threshold."""
    return f"""
[[contexts.lab.profiles]]
match = "legacy-*"
storm-kafka-release = "0.9.6"
start-offset-time = "latest"
topic = "{topic}"

[[profiles]]
name = "clients"
match = "{clients}"
lag-threshold = {lag_threshold}
"""


PROFILES = lab_profiles("orders", clients="orders-*", lag_threshold=100)


def _run_profiles(tmp_path, flags: dict, env: dict):
    """The Profiles of a run, built as the commands build them, from plain values and their origins."""
    from offctl.settings import configfile as settings
    from offctl.settings.options import DEFAULTS
    from offctl.settings.resolve import FLAG, Given, profiles

    path = _config(tmp_path, LAB + PROFILES)
    config = settings.load(path, True)
    context = config.contexts["lab"]
    values, origins = dict(DEFAULTS), {}
    for name, value in {**env, **flags}.items():
        values[name], origins[name] = value, FLAG if name in flags else f"env OFFCTL_{name.upper()}"
    given = Given(values, origins, config, context)
    for name in values:  # the context's values below the flags and the environment, as Given.of applies them
        key = name.replace("_", "-")
        if name not in origins and key in context.settings:
            from offctl.settings.options import parse_value

            given.values[name] = parse_value(name, context.settings[key], None)
            given.origins[name] = context.origin
    return profiles(given)


@pytest.mark.parametrize(
    "consumer, flags, env, profile, release, start, topic, lag, first_poll",
    [
        ("legacy-clicks", {}, {}, "legacy-*", "0.9.6", "LATEST", "orders", None, "LATEST"),
        ("orders-spout", {}, {}, "clients", "1.2.4", "EARLIEST", None, 100, "LATEST"),
        ("other", {}, {}, None, "1.2.4", "EARLIEST", None, None, "LATEST"),
        # the environment and a flag override every profile
        (
            "legacy-clicks",
            {},
            {"storm_kafka_release": "1.1.0"},
            "legacy-*",
            "1.1.0",
            "LATEST",
            "orders",
            None,
            "LATEST",
        ),
        ("legacy-clicks", {"topic": "payments"}, {}, "legacy-*", "0.9.6", "LATEST", "payments", None, "LATEST"),
        ("orders-spout", {"lag_threshold": 5}, {}, "clients", "1.2.4", "EARLIEST", None, 5, "LATEST"),
        (
            "orders-spout",
            {"first_poll_offset_strategy": "EARLIEST"},
            {},
            "clients",
            "1.2.4",
            "EARLIEST",
            None,
            100,
            "EARLIEST",
        ),
    ],
)
def test_profiles_are_complete_and_a_flag_overrides_every_profile(
    tmp_path, consumer, flags, env, profile, release, start, topic, lag, first_poll
):
    from offctl.core.records.model import ConsumerKey
    from offctl.core.storm.releases import EARLIEST_TIME, LATEST_TIME, StormKafka

    name, th = _run_profiles(tmp_path, flags, env).judging(ConsumerKey("zookeeper", consumer, "/r"))
    assert name == profile
    assert th.spout.storm_kafka == StormKafka.of_version(release)
    assert th.spout.start_offset_time == {"LATEST": LATEST_TIME, "EARLIEST": EARLIEST_TIME}[start]
    assert th.expected_topic == topic and th.lag_threshold == lag
    assert th.spout.first_poll.value == first_poll  # the context's setting reaches every profile


def test_a_write_takes_the_profile_of_the_consumer_it_writes(tmp_path, cli):
    from offctl.settings.resolve import written_profile

    path = _config(
        tmp_path,
        LAB + PROFILES + '\n[[profiles]]\nmatch = "late-group"\nfirst-poll-offset-strategy = "UNCOMMITTED_LATEST"\n',
    )
    from offctl.settings import configfile as settings
    from offctl.settings.options import DEFAULTS
    from offctl.settings.resolve import Given

    config = settings.load(path, True)
    given = Given(dict(DEFAULTS), {}, config, None)
    assert written_profile(given, ["late-group"]).first_poll.value == "UNCOMMITTED_LATEST"
    assert written_profile(given, ["other"]).first_poll.value == "UNCOMMITTED_EARLIEST"
    assert written_profile(given, []).first_poll.value == "UNCOMMITTED_EARLIEST"
    with pytest.raises(Exception, match="different profiles"):
        written_profile(given, ["late-group", "other"])


# --- the real CLI against ZooKeeper: a context and two profiles ------------------------------------------------


@pytest.mark.zookeeper
def test_a_context_connects_inspect_and_profiles_are_read(tmp_path, zk, zk_server, names):
    root = names.root
    for spout, offset in (("legacy-clicks", 3), ("orders-spout", 5)):
        zk.create(f"{root}/{spout}/partition_0", storm_record("orders", 0, offset), makepath=True)
    (tmp_path / "offctl").mkdir()
    _config(
        tmp_path / "offctl",
        f'[contexts.lab]\nzk = "{zk_server.address}"\nzk-root = ["{root}"]\ntimeout = "20s"\n' + PROFILES,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFCTL_")} | {
        "XDG_CONFIG_HOME": str(tmp_path),
        "OFFCTL_CONTEXT": "lab",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "offctl", "inspect", "-o", "json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    consumers = {c["consumer"]: c for c in doc["consumers"]}
    assert set(consumers) == {"legacy-clicks", "orders-spout"} and "using the sandbox" not in proc.stderr
    assert {c["zk_root"] for c in consumers.values()} == {root}
    if "profile" in consumers["legacy-clicks"]:  # the pipeline's field (issue 28 item 3), once merged
        assert consumers["legacy-clicks"]["profile"] == "legacy-*"
        assert consumers["orders-spout"]["profile"] == "clients"


def test_config_show_has_help_with_an_example(cli):
    result = cli("config", "show", "--help")
    assert result.exit_code == 0 and "Example:" in result.stdout and "offctl config show" in result.stdout


def test_the_monitor_deadline_comes_from_the_context_and_config_show_says_so(cli, tmp_path):
    """storm-kafka-monitor takes no option of its own from Storm UI: its deadline is the context's `deadline`."""
    path = _config(tmp_path, '[contexts.ui]\ndeadline = "4s"\n')
    doc = json.loads(cli("config", "show", "--config", str(path), "--context", "ui", "-o", "json").stdout)
    rows = {r["key"]: r for r in doc["settings"]}
    assert rows["deadline"]["value"] == 4.0 and rows["deadline"]["from"].startswith("context ui in ")
    bad = _config(tmp_path, '[contexts.ui]\ndeadline = "2h"\n')
    result = cli("config", "show", "--config", str(bad), "--context", "ui")
    assert result.exit_code == 2 and "deadline" in result.stderr
