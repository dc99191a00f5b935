"""The argument grammar of Storm's storm-kafka-monitor (KafkaOffsetLagUtil), for `offctl storm-kafka-monitor`.

Source: apache/storm `external/storm-kafka-monitor/src/main/java/org/apache/storm/kafka/monitor/KafkaOffsetLagUtil.java`
(KOLU below): `buildOptions()` and the checks in `main()` at v1.2.4 (lines 84-140; v1.1.0 is the same less `-c`),
v2.0.0 (lines 59-65) and v2.8.8 (lines 62-69, adds `-m`). The parser is commons-cli's `DefaultParser`
(apache/commons-cli `DefaultParser.java@cli-1.3.1`, the version of Storm 1.x; 1.4-1.11.0 of Storm 2.x handle
the tokens used here the same way), ported below token by token; tests/unit/test_lagutil_args.py runs the same command
lines through Debian's commons-cli 1.5.0 jar and compares (identical on every row; the one Java runtime message,
`-=V`'s StringIndexOutOfBoundsException, is JDK 17's wording).

offctl accepts the union: every option of 1.x (old-spout mode `-o`) and of 2.x (`-m`). The checks are 1.x's,
which are a superset of 2.x's (2.x checks only `topics is required` and `groupid and bootstrap-brokers are
required`; a 2.x call is always a valid 1.x new-spout call). Two outcomes of the original:
- a failed check: the message, then the help, on stdout, exit 1 (`printUsageAndExit`, KOLU all tags);
- a parse error of commons-cli: caught by `main`'s `catch (Exception ex)`, printed as
  `Unable to get offset lags for kafka. Reason: ` and the stack trace, on stdout, exit 0 (KOLU all tags).
`LagUsage` carries which, the text and the exit code; the face prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# (short, long, has_arg), in buildOptions() order (KOLU@v1.2.4 lines 180-204, `-m` from KOLU@v2.8.8 line 126).
# The order matters only for the list an AmbiguousOptionException names (Options.longOpts is a LinkedHashMap).
OPTIONS: tuple[tuple[str, str, bool], ...] = (
    ("t", "topics", True),
    ("o", "old-spout", False),
    ("b", "bootstrap-brokers", True),
    ("g", "groupid", True),
    ("w", "wildcard-topic", False),
    ("p", "partitions", True),
    ("l", "leaders", True),
    ("z", "zk-servers", True),
    ("n", "zk-node", True),
    ("r", "zk-brokers-root-node", True),
    ("s", "security-protocol", True),
    ("c", "consumer-config", True),  # v1.2.3+ (STORM-3123)
    ("m", "sasl-mechanism", True),  # v2.6.0+ (STORM-3404); union choice: with it, `--s` is ambiguous as in 2.6+
)
_BY_SHORT = {s: (s, lng, arg) for s, lng, arg in OPTIONS}
_BY_LONG = {lng: (s, lng, arg) for s, lng, arg in OPTIONS}

# Java class names of the parse errors. Storm 1.x shades commons-cli (external/storm-kafka-monitor/pom.xml@v1.2.4
# relocates org.apache.commons.cli to org.apache.commons.cli.shaded); offctl prints 2.x's unshaded names (a choice:
# Storm UI only shows this text, it parses nothing in it).
_CLI = "org.apache.commons.cli."
REASON_PREFIX = "Unable to get offset lags for kafka. Reason: "  # KOLU@v1.2.4 line 149, @v2.8.8 line 80


@dataclass(frozen=True)
class LagQuery:
    """What a valid storm-kafka-monitor command line asks for. Lists are split as Java's String.split(",")."""

    mode: Literal["old", "new"]
    topics_arg: str  # -t as given: old mode uses it whole (a regex with -w), KOLU@v1.2.4 OldKafkaSpoutOffsetQuery
    topics: tuple[str, ...]  # -t split: new mode asks partitionsFor() of each (KOLU@v1.2.4 line 231), untrimmed
    wildcard: bool = False
    group: str | None = None
    bootstrap: str | None = None
    security_protocol: str | None = None
    sasl_mechanism: str | None = None
    consumer_config: str | None = None  # a path; v1.2.3+ accepts it in old mode too and does not use it there
    zk_servers: str | None = None
    zk_node: str | None = None
    zk_brokers_root: str | None = None
    partitions: tuple[str, ...] | None = None  # strings: the original parses them later (a runtime failure, exit 0)
    leaders: tuple[str, ...] | None = None


@dataclass(frozen=True)
class LagUsage:
    """A command line the original refuses: `message` is the whole first line it prints on stdout; `help` says
    whether commons-cli's help follows (a failed check) or not (a parse error: the line is the start of the
    exception's report); `exit_code` is the original's."""

    message: str
    exit_code: int
    help: bool


def java_split(text: str) -> tuple[str, ...]:
    """`text.split(",")` as Java does it: trailing empty strings are dropped ("0,1," has 2 elements, "," none),
    but "" is one empty string (java.lang.String#split(String), limit 0)."""
    if text == "":
        return ("",)
    parts = text.split(",")
    while parts and parts[-1] == "":
        parts.pop()
    return tuple(parts)


class _ParseError(Exception):
    def __init__(self, java_class: str, message: str):
        super().__init__(message)
        self.java_class = java_class
        self.message = message


def _strip_hyphens(token: str) -> str:  # Util.stripLeadingHyphens@cli-1.3.1
    return token[2:] if token.startswith("--") else token[1:] if token.startswith("-") else token


def _strip_quotes(token: str) -> str:  # Util.stripLeadingAndTrailingQuotes@cli-1.3.1
    if len(token) > 1 and token.startswith('"') and token.endswith('"') and '"' not in token[1:-1]:
        return token[1:-1]
    return token


def _matching(opt: str) -> list[str]:  # Options.getMatchingOptions@cli-1.3.1: an exact long name, else prefixes
    opt = _strip_hyphens(opt)
    if opt in _BY_LONG:
        return [opt]
    return [lng for _, lng, _ in OPTIONS if lng.startswith(opt)]


class _Parser:
    """commons-cli 1.3.1 DefaultParser over KOLU's options, no required options, stopAtNonOption false."""

    def __init__(self) -> None:
        self.values: dict[str, list[str]] = {}  # long name -> values, in order; present = hasOption
        self.current: str | None = None  # the long name of an option still waiting for its argument
        self.skip = False

    def parse(self, argv: list[str]) -> dict[str, list[str]]:
        for token in argv:
            self.token(token)
        self.check_required_args()
        return self.values

    def check_required_args(self) -> None:  # an option with an argument still waiting for it
        if self.current is not None:
            raise _ParseError(
                _CLI + "MissingArgumentException", "Missing argument for option: " + _BY_LONG[self.current][0]
            )  # Option.getKey()

    def add_value(self, value: str) -> None:  # each option takes one value (hasArg: numberOfArgs 1)
        assert self.current is not None
        self.values[self.current][-1] = value
        self.current = None

    def handle_option(self, name: str) -> None:
        self.check_required_args()
        self.values.setdefault(name, [])
        if _BY_LONG[name][2]:
            self.values[name].append("")  # filled by add_value, or MissingArgumentException
            self.current = name
        else:
            self.current = None

    def token(self, token: str) -> None:
        if self.skip:
            return  # cmd.addArg: kept and ignored by KOLU
        if token == "--":
            self.skip = True
        elif self.current is not None and self.is_argument(token):
            self.add_value(_strip_quotes(token))
        elif token.startswith("--"):
            self.long_option(token)
        elif token.startswith("-") and token != "-":
            self.short_and_long_option(token)
        else:
            self.unknown(token)

    def is_argument(self, token: str) -> bool:
        if not self.is_option(token):
            return True
        try:  # isNegativeNumber: Double.parseDouble (close enough: float() takes what it takes for "-1", "-1.5")
            float(token)
            return True
        except ValueError:
            return False

    def is_option(self, token: str) -> bool:
        return self.is_long_option(token) or self.is_short_option(token)

    @staticmethod
    def is_short_option(token: str) -> bool:
        return token.startswith("-") and len(token) >= 2 and token[1] in _BY_SHORT

    @staticmethod
    def is_long_option(token: str) -> bool:
        if not token.startswith("-") or len(token) == 1:
            return False
        t = token.split("=", 1)[0]
        if _matching(t):
            return True
        return _long_prefix(token) is not None and not token.startswith("--")

    @staticmethod
    def unknown(token: str) -> None:
        if token.startswith("-") and len(token) > 1:
            raise _ParseError(_CLI + "UnrecognizedOptionException", "Unrecognized option: " + token)
        # a positional argument: cmd.addArg, never read by KOLU

    def long_option(self, token: str) -> None:
        if "=" not in token:
            self.long_without_equal(token, token)
        else:
            self.long_with_equal(token, token)

    def long_without_equal(self, token: str, current_token: str) -> None:
        found = _matching(token)
        if not found:
            self.unknown(current_token)
        elif len(found) > 1:
            raise _ParseError(_CLI + "AmbiguousOptionException", _ambiguous(token, found))
        else:
            self.handle_option(found[0])

    def long_with_equal(self, token: str, current_token: str) -> None:
        opt, _, value = token.partition("=")
        found = _matching(opt)
        if not found:
            self.unknown(current_token)
        elif len(found) > 1:
            raise _ParseError(_CLI + "AmbiguousOptionException", _ambiguous(opt, found))
        elif _BY_LONG[found[0]][2]:
            self.handle_option(found[0])
            self.add_value(value)
        else:
            self.unknown(current_token)  # `--old-spout=x`: a flag given a value

    def short_and_long_option(self, token: str) -> None:
        t = _strip_hyphens(token)
        if len(t) == 1:  # -S
            if t in _BY_SHORT:
                self.handle_option(_BY_SHORT[t][1])
            else:
                self.unknown(token)
        elif "=" not in t:
            if t in _BY_SHORT:
                self.handle_option(_BY_SHORT[t][1])
            elif _matching(t):  # -L or -l: a long name or prefix with one dash
                self.long_without_equal(token, token)
            else:
                prefix = _long_prefix(t)  # -LV: a whole long name followed by its value, e.g. -topicsfoo
                if prefix is not None and _BY_LONG[prefix][2]:
                    self.handle_option(prefix)
                    self.add_value(t[len(prefix) :])
                else:  # isJavaProperty is never true: no option of KOLU takes 2+ args
                    self.concatenated(token)
        else:
            opt, _, value = t.partition("=")
            if len(opt) == 1:  # -S=V
                if opt in _BY_SHORT and _BY_SHORT[opt][2]:
                    self.handle_option(_BY_SHORT[opt][1])
                    self.add_value(value)
                else:
                    self.unknown(token)
            elif not opt:  # `-=V`: isJavaProperty("") calls "".substring(0, 1) (cli-1.3.1, and 1.5.0 as run)
                raise _ParseError("java.lang.StringIndexOutOfBoundsException", "begin 0, end 1, length 0")
            else:  # -L=V or -l=V
                self.long_with_equal(token, token)

    def concatenated(self, token: str) -> None:  # handleConcatenatedOptions: -S1S2S3 or -S1S2V, e.g. -tfoo, -ow
        for i in range(1, len(token)):
            ch = token[i]
            if ch not in _BY_SHORT:
                self.unknown(token)
                return
            self.handle_option(_BY_SHORT[ch][1])
            if self.current is not None and len(token) != i + 1:
                self.add_value(token[i + 1 :])
                return


def _long_prefix(token: str) -> str | None:
    """DefaultParser.getLongPrefix@cli-1.3.1: the longest whole long name that `token` starts with, leaving at
    least two characters after it (the loop runs i from len-2 down to 2)."""
    t = _strip_hyphens(token)
    for i in range(len(t) - 2, 1, -1):
        if t[:i] in _BY_LONG:
            return t[:i]
    return None


def _ambiguous(option: str, found: list[str]) -> str:  # AmbiguousOptionException.createMessage@cli-1.3.1
    return f"Ambiguous option: '{option}'  (could be: " + ", ".join(f"'{f}'" for f in found) + ")"


def _first(values: dict[str, list[str]], name: str) -> str | None:
    """CommandLine.getOptionValue: the first value given (CommandLine.getOptionValues@cli-1.3.1 collects every
    occurrence in order and returns values[0])."""
    given = values.get(name)
    return given[0] if given else None


def _usage(message: str) -> LagUsage:
    return LagUsage(message=message, exit_code=1, help=True)  # printUsageAndExit: println, printHelp, exit(1)


def parse_args(argv: list[str]) -> LagQuery | LagUsage:
    """Read a storm-kafka-monitor command line as KafkaOffsetLagUtil.main does, checks in its order."""
    try:
        given = _Parser().parse(argv)
    except _ParseError as exc:
        # KOLU main: catch (Exception ex) { print("Unable to get offset lags ..."); ex.printStackTrace(System.out) }
        # and no exit: 0. printStackTrace's first line is `<class>: <message>`.
        return LagUsage(message=f"{REASON_PREFIX}{exc.java_class}: {exc.message}", exit_code=0, help=False)

    if "topics" not in given:
        return _usage("topics is required")  # KOLU@v1.2.4:84-86, @v2.8.8:62-64
    topics_arg = _first(given, "topics")
    assert topics_arg is not None
    common = dict(
        topics_arg=topics_arg, topics=java_split(topics_arg), consumer_config=_first(given, "consumer-config")
    )
    if "old-spout" in given:  # KOLU@v1.2.4:87-127 (1.x only; 2.x has no -o: UnrecognizedOptionException there)
        return _old_spout(given, common)
    return _new_spout(given, common)


def _old_spout(given: dict[str, list[str]], common: dict[str, object]) -> LagQuery | LagUsage:
    """The old-spout checks (KOLU@v1.2.4:87-127) in their order, and the query a command line passing them asks."""
    has = given.__contains__
    if has("groupid") or has("bootstrap-brokers") or has("security-protocol"):
        return _usage("groupid or bootstrap-brokers or security-protocol is not accepted with option old-spout")
    if has("sasl-mechanism"):
        # Union choice: 1.x has no -m at all (it would be an UnrecognizedOptionException); refused like -s,
        # in the same words, since old mode never talks to a broker with SASL.
        return _usage("sasl-mechanism is not accepted with option old-spout")
    if not has("zk-servers") or not has("zk-node"):
        return _usage("zk-servers and zk-node are required  with old-spout")  # two spaces, as in the source
    if len(common["topics"]) > 1:  # type: ignore[arg-type]
        return _usage(
            "Multiple topics not supported with option old-spout. Either a single topic or a "
            "wildcard string for matching topics is supported"
        )
    old = dict(common, mode="old", zk_servers=_first(given, "zk-servers"), zk_node=_first(given, "zk-node"))
    if has("zk-brokers-root-node"):
        if has("partitions") or has("leaders"):
            return _usage("partitions or leaders is not accepted with zk-brokers-root-node")
        return LagQuery(
            **old,
            wildcard=has("wildcard-topic"),  # type: ignore[arg-type]
            zk_brokers_root=_first(given, "zk-brokers-root-node"),
        )
    return _static_hosts(given, old)


def _static_hosts(given: dict[str, list[str]], old: dict[str, object]) -> LagQuery | LagUsage:
    """An old spout without zk-brokers-root-node (StaticHosts): its partitions and their leaders, one for one."""
    has = given.__contains__
    if has("wildcard-topic"):
        return _usage("wildcard-topic is not supported without zk-brokers-root-node")
    if not has("partitions") or not has("leaders"):
        return _usage("partitions and leaders are required if zk-brokers-root-node is not provided")
    partitions = java_split(_first(given, "partitions") or "")
    leaders = java_split(_first(given, "leaders") or "")
    if len(partitions) != len(leaders):
        return _usage("partitions and leaders need to be of same size")
    return LagQuery(**old, partitions=partitions, leaders=leaders)  # type: ignore[arg-type]


def _new_spout(given: dict[str, list[str]], common: dict[str, object]) -> LagQuery | LagUsage:
    """The new-spout checks in their order, and the query a command line passing them asks."""
    # KOLU@v1.2.4:128-144; 2.x (KOLU@v2.0.0:59-70, @v2.8.8:62-74) has none of the old options
    for old_option in ("wildcard-topic", "partitions", "leaders", "zk-servers", "zk-node", "zk-brokers-root-node"):
        if old_option in given:
            return _usage(f"{old_option} is not accepted without old-spout")
    if "groupid" not in given or "bootstrap-brokers" not in given:
        # 1.x's words (KOLU@v1.2.4:137-139); 2.x says only "groupid and bootstrap-brokers are required"
        # (KOLU@v2.0.0:63-64). Union choice: 1.x's, the grammar offctl accepts has old-spout.
        return _usage("groupid and bootstrap-brokers are required if old-spout is not specified")
    return LagQuery(
        **common,
        mode="new",
        group=_first(given, "groupid"),  # type: ignore[arg-type]
        bootstrap=_first(given, "bootstrap-brokers"),
        security_protocol=_first(given, "security-protocol"),
        sasl_mechanism=_first(given, "sasl-mechanism"),
    )


# What `buildOptions()` describes each option with (KOLU@v1.2.4 lines 180-204, `-c` @v1.2.4, `-m` @v2.8.8 line 126),
# for the help printUsageAndExit prints after a failed check.
DESCRIPTIONS = {
    "t": "REQUIRED Topics (comma separated list) for fetching log head and spout committed offset",
    "o": "Whether request is for old spout",
    "b": "Comma separated list of bootstrap broker hosts for new consumer/spout e.g. hostname1:9092,hostname2:9092",
    "g": "Group id of consumer (applicable only for new kafka spout) ",
    "w": "Whether topic provided is a wildcard as supported by ZkHosts in old spout",
    "p": "Comma separated list of partitions corresponding to leaders for old spout with StaticHosts",
    "l": "Comma separated list of broker leaders corresponding to partitions for old spout with StaticHosts e.g. "
    "hostname1:9092,hostname2:9092",
    "z": "Comma separated list of zk servers for fetching spout committed offsets  and/or topic metadata for ZkHosts "
    "e.g hostname1:2181,hostname2:2181",
    "n": "Zk node prefix where old kafka spout stores the committed offsets without the topic and partition nodes",
    "r": "Zk node prefix where kafka stores broker information e.g. /brokers (applicable only for old kafka spout) ",
    "s": "Security protocol to connect to kafka",
    "c": "Properties file with additional Kafka consumer properties",
    "m": "Sasl mechanism to connect to kafka, default is GSSAPI",
}


def help_text(width: int = 74) -> str:
    """The help printUsageAndExit prints after a failed check (`new HelpFormatter().printHelp("storm-kafka-monitor ",
    options)`), over the union of options, laid out as commons-cli's HelpFormatter lays it out (cli-1.3.1: `usage: `
    and the command, each option sorted by key ignoring case, ` -S,--long <arg>` padded to the longest plus three
    spaces, the description wrapped at `width` under itself). The wrapping is textwrap's, which can break a line
    one word apart from commons-cli's: the help is read by people, never parsed (Storm UI drops a spout whose
    monitor exits 1)."""
    import textwrap

    heads = {s: f" -{s},--{lng}" + (" <arg>" if arg else "") for s, lng, arg in OPTIONS}
    column = max(len(h) for h in heads.values()) + 3
    lines = ["usage: storm-kafka-monitor"]
    for key in sorted(heads, key=str.lower):
        wrapped = textwrap.wrap(DESCRIPTIONS[key], width - column) or [""]
        lines.append((heads[key].ljust(column) + wrapped[0]).rstrip())
        lines += [" " * column + more for more in wrapped[1:]]
    return "\n".join(lines) + "\n"
