"""What offctl is given, made safe at the boundary: bounded file reads, text that is valid UTF-8, names from
stores that always print, and the secrets that no message may repeat."""

from __future__ import annotations

import math
import re
from pathlib import Path

from offctl.errors import UsageError

MAX_FILE_BYTES = 64 * 1024 * 1024  # a backup or plan of ~100,000 partitions is ~40 MB
MAX_CONFIG_BYTES = 1024 * 1024  # a properties file of client settings
MAX_TIMEOUT_S = 3600.0


def read_bounded(path: Path, option: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a file the user named, refusing one larger than `limit` (or endless, like /dev/zero)
    before reading more than that."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise UsageError(
            f"{option} {printable(str(path))}: cannot read it ({exc.strerror or type(exc).__name__})"
        ) from None
    if len(data) > limit:
        raise UsageError(f"{option} {printable(str(path))}: larger than {limit:,} bytes, which no file of this kind is")
    return data


def read_text(path: Path, option: str, limit: int = MAX_FILE_BYTES) -> str:
    data = read_bounded(path, option, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{option} {printable(str(path))}: not UTF-8 text (byte {exc.start})") from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """Text that always encodes as UTF-8: lone surrogates (invalid bytes on the command line, `\\ud800`
    escapes in stored JSON) are written out as the escape `\\udXXX`, so output never crashes and JSON stays
    strict."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def check_utf8(values: dict[str, list[str]]) -> None:
    """Refuse option values that are not valid UTF-8 (Python hands such bytes over as lone surrogates),
    naming the option, never the value."""
    for option, given in values.items():
        if any(_SURROGATE.search(v) for v in given):
            raise UsageError(f"the value of {option} is not valid UTF-8")


def check_timeout(seconds: float) -> float:
    if not math.isfinite(seconds) or not 0.1 <= seconds <= MAX_TIMEOUT_S:
        raise UsageError(f"--timeout must be a number of seconds from 0.1 to {MAX_TIMEOUT_S:g}")
    return seconds


def check_quiet_period(seconds: float) -> float:
    """0 turns the recent-write check off; infinity or NaN is no period an operator can wait out (an `infs`
    period would refuse forever), so they are refused like a negative number."""
    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(
            "--quiet-period must be a finite number of seconds, 0 or more (0: no recent-write "
            "check; --force recent-write overrides the check)"
        )
    return seconds


# --- ZooKeeper connect strings and Kafka bootstrap servers ------------------------------------------------

_HOST = re.compile(r"(?:\[(?P<v6>[0-9a-fA-F:.%]+)\]|(?P<name>[A-Za-z0-9._-]+))(?::(?P<port>[0-9]{1,5}))?")
MAX_LABEL = 63  # a host name's label, between dots (RFC 1035 section 2.3.4)


def _check_host_name(option: str, host: str) -> None:
    """Refuse a host name with an empty label or one longer than 63 characters, which no resolver takes:
    Python's (kazoo's) fails with a UnicodeError from the idna codec, librdkafka retries until --timeout."""
    for label in host.removesuffix(".").split("."):  # a trailing dot is the DNS root, not an empty label
        if not label:
            raise UsageError(f"{option}: a host name has an empty label (two dots in a row, or a leading dot)")
        if len(label) > MAX_LABEL:
            raise UsageError(
                f"{option}: a host name has a label of {len(label)} characters; a host name label "
                f"(between dots) has at most {MAX_LABEL}"
            )


def check_zk_hosts(hosts: str) -> str:
    """A ZooKeeper connect string `host[:port][,host[:port]...][/chroot]`, checked so that the client never
    fails on it later with an error of its own."""
    servers, slash, chroot = hosts.partition("/")
    if slash and (not chroot or any(seg in ("", ".", "..") for seg in chroot.rstrip("/").split("/"))):
        raise UsageError(f"--zk {hosts!r}: the chroot after the first '/' is not a ZooKeeper path")
    for server in servers.split(","):
        m = _HOST.fullmatch(server.strip())
        if not m:
            raise UsageError(
                f"--zk {hosts!r}: {server.strip()!r} is not host:port (an IPv6 address goes in brackets, [::1]:2181)"
            )
        if m.group("port") is not None and not 1 <= int(m.group("port")) <= 65535:
            raise UsageError(f"--zk {hosts!r}: port {m.group('port')} is not from 1 to 65535")
        if m.group("name"):
            _check_host_name("--zk", m.group("name"))
    return hosts


def check_bootstrap_servers(servers: str) -> str:
    """Kafka bootstrap servers `[protocol://]host[:port][,...]`, as librdkafka takes them: their host names
    are checked as --zk's are. The rest is librdkafka's to judge (what it cannot reach is exit 3)."""
    for server in servers.split(","):
        m = _HOST.fullmatch(re.sub(r"^[A-Za-z_]+://", "", server.strip()))
        if m and m.group("name"):
            _check_host_name("--bootstrap-servers", m.group("name"))
    return servers


# --- secrets ------------------------------------------------------------------------------------------------

_secrets: set[str] = set()


def secret(value: str) -> str:
    """Remember a value that might be a secret (a password, a key, any client setting), so that
    `redact` removes it from every message; return it unchanged."""
    if len(value) >= 3:  # shorter values are too common in text to hide without hiding the message
        _secrets.add(value)
    return value


def redact(message: str) -> str:
    """The message with every remembered secret replaced by ***, and made printable."""
    for value in sorted(_secrets, key=len, reverse=True):
        message = message.replace(value, "***")
    return printable(message)


# --- durations ----------------------------------------------------------------------------------------------

SECONDS_PER = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION_PART = re.compile(r"(\d{1,12}(?:\.\d{1,9})?)(ms|[smhd])")
_DURATION = re.compile(f"(?:{_DURATION_PART.pattern})+")


def parse_seconds(text: str | float, bare: float = 1.0, unit: str = "seconds") -> float:
    """A duration option's value in seconds: `30s`, `90m`, `6h`, `7d`, `1h30m` (every duration option takes this
    syntax), or a bare number, which keeps the option's meaning of old: `bare` seconds each (1 for the options
    that took seconds, 60 for --offsets-retention-minutes). A number given by the code (a default) is seconds.
    Raises ValueError saying what is expected, never repeating the value."""
    if isinstance(text, (int, float)):
        return float(text)
    cleaned = text.strip().lower()
    try:
        return float(cleaned) * bare
    except ValueError:
        pass
    if len(cleaned) <= 40 and _DURATION.fullmatch(cleaned):
        return sum(float(n) * SECONDS_PER[unit] for n, unit in _DURATION_PART.findall(cleaned))
    raise ValueError(f"expected a duration like 30s, 90m, 6h, 7d or 1h30m, or a number of {unit}")
