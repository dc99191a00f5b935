"""The Java Kafka client settings storm-kafka-monitor is given, as librdkafka settings (issue 29).

Storm UI runs the monitor with `-s <security.protocol>` and `-c <file>`: a java.util.Properties file of every
`config.*` entry of the spout's component configuration but topics, groupid, bootstrap.servers and
security.protocol, written by `Properties.store` (TopologySpoutLag.createExtraPropertiesFile,
storm-core/src/jvm/org/apache/storm/utils/TopologySpoutLag.java@v1.2.3, @v2.8.8:90-112). For a storm-kafka-client
spout those are its Kafka consumer properties (group.id, deserializers, sasl.jaas.config, ...); for a 1.x
storm-kafka spout, zkRoot, zkServers, zkNodeBrokers, partitions, leaders. KafkaOffsetLagUtil builds its consumer's
properties as bootstrap.servers=-b, group.id=-g, then security.protocol=-s, sasl.mechanism=-m (v2.6.0+), then
`props.putAll(Utils.loadProps(-c))`: the file overrides everything before it (KafkaOffsetLagUtil.java@v1.2.4:215-228,
@v2.8.8 getOffsetLags).

The reader: Python's standard library reads no .properties, and no dependency is added for one (`javaproperties`
and `jproperties` are on PyPI), so `parse_properties` is a minimal reader of java.util.Properties.load's format:
`key=value`, `key: value`, `key value`, `#`/`!` comments, line continuations, `\\` escapes and `\\uXXXX`.
Kafka's Utils.loadProps reads an InputStream, which Properties.load decodes as ISO-8859-1: `parse_properties_bytes`.

What is translated (librdkafka's CONFIGURATION.md names): security.protocol, sasl.mechanism (PLAIN, SCRAM-SHA-256,
SCRAM-SHA-512), sasl.jaas.config of PlainLoginModule or ScramLoginModule (username, password -> sasl.username,
sasl.password), a PEM truststore (ssl.truststore.type=PEM with ssl.truststore.location -> ssl.ca.location,
ssl.truststore.certificates -> ssl.ca.pem), ssl.endpoint.identification.algorithm. bootstrap.servers and group.id
in the file are returned apart: they override -b and -g as in the original. Every other ssl.*, sasl.* and
security.* setting, when the protocol uses it, is refused (a JKS/PKCS12 truststore, a keystore, Kerberos,
OAUTHBEARER, another login module); anything else does not change where or as whom offsets are read and is
ignored, named in `notes`. A refusal names keys, never a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from offctl.errors import UsageError
from offctl.inputs import secret

# --- java.util.Properties.load --------------------------------------------------------------------------------

_WS = " \t\f"  # Properties.load's whitespace (not newlines, which end a natural line)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _natural_lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)


def _logical_lines(text: str) -> list[str]:
    """Properties.LineReader: skip blank and comment lines (`#` or `!` first, after whitespace), drop each
    natural line's leading whitespace, join a line ending in an odd number of backslashes with the next."""
    out: list[str] = []
    current: str | None = None
    for raw in _natural_lines(text):
        line = raw.lstrip(_WS)
        if current is None and (not line or line[0] in "#!"):
            continue  # a comment line is never continued, even if it ends with a backslash
        trailing = len(line) - len(line.rstrip("\\"))
        continued = trailing % 2 == 1
        if continued:
            line = line[:-1]
        current = line if current is None else current + line
        if not continued:
            out.append(current)
            current = None
    if current is not None:  # a continuation at the end of the text: what was read is the line
        out.append(current)
    return out


def _unescape(text: str) -> str:
    """Properties.loadConvert: `\\uXXXX`, `\\t \\n \\r \\f`, and a backslash before any other character
    stands for that character."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(text):  # cannot happen after _logical_lines (a lone trailing backslash continues)
            break
        c = text[i + 1]
        if c == "u":
            digits = text[i + 2 : i + 6]
            if len(digits) != 4 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise UsageError("the consumer properties have a malformed \\uxxxx escape")  # as Java: refused
            out.append(chr(int(digits, 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(c, c))
            i += 2
    return "".join(out)


def _split_key(line: str) -> tuple[str, str]:
    """Properties.load0: the key ends at the first unescaped `=`, `:` or whitespace; then whitespace, at most
    one `=` or `:`, whitespace; the rest, trailing whitespace included, is the value."""
    i, escaped, sep = 0, False, False
    while i < len(line):
        c = line[i]
        if not escaped and c in "=:":
            sep = True
            break
        if not escaped and c in _WS:
            break
        escaped = c == "\\" and not escaped
        i += 1
    key, j = line[:i], i + 1
    while j < len(line):
        c = line[j]
        if c not in _WS:
            if not sep and c in "=:":
                sep = True
            else:
                break
        j += 1
    return _unescape(key), _unescape(line[j:] if i < len(line) else "")


def parse_properties(text: str) -> dict[str, str]:
    """The properties of a java.util.Properties text, the last of a repeated key winning (Hashtable.put)."""
    return dict(_split_key(line) for line in _logical_lines(text))


def parse_properties_bytes(data: bytes) -> dict[str, str]:
    """A properties file as Kafka's Utils.loadProps reads it: Properties.load(InputStream) is ISO-8859-1
    (Properties.store writes anything else as \\uXXXX)."""
    return parse_properties(data.decode("iso-8859-1"))


# --- sasl.jaas.config --------------------------------------------------------------------------------------------

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_KNOWN_REFUSED_MODULES = {  # named in the refusal: they come from this list, never from the value
    "com.sun.security.auth.module.Krb5LoginModule": "Kerberos (GSSAPI)",
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule": "OAUTHBEARER",
}
_FLAGS = {"required", "requisite", "sufficient", "optional"}


class _JaasError(Exception):
    """A sasl.jaas.config that cannot be read; its message holds nothing of the value."""


def _jaas_tokens(text: str) -> list[tuple[str, str]]:
    """The tokens of Kafka's JaasConfig tokenizer (clients/src/main/java/org/apache/kafka/common/security/
    JaasConfig.java: a java.io.StreamTokenizer with wordChars 32-128 and 160-255, whitespace 0-32, ordinary `;`
    and `=`, quotes `"` and `'`, `/` a comment character, `//` and `/* */` comments), as (kind, text):
    kind "word", "quoted" or the ordinary character itself."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if ord(c) <= 32:
            i += 1
        elif c == "/":
            i = _jaas_comment_end(text, i)
        elif c in ";=":
            out.append((c, c))
            i += 1
        elif c in "\"'":
            value, i = _jaas_quoted(text, i)
            out.append(("quoted", value))
        elif _jaas_word_char(c):
            j = i
            while j < n and _jaas_word_char(text[j]) and text[j] not in ";=\"'/":
                j += 1
            out.append(("word", text[i:j]))
            i = j
        else:  # 129-159: an ordinary character of its own, which no JAAS entry has in its place
            raise _JaasError("it has a control character")
    return out


def _jaas_word_char(c: str) -> bool:
    """A word character of JaasConfig's tokenizer: 33-128, or 160 and above."""
    return 32 < ord(c) <= 128 or 160 <= ord(c)


def _jaas_comment_end(text: str, i: int) -> int:
    """Where the comment that starts at text[i] (a `/`) ends: after the `*/` of a `/*` (the text's end without one);
    for `//` or a lone `/` (a comment character), at the end of the line."""
    n = len(text)
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return n if end < 0 else end + 2
    return min((p for p in (text.find("\n", i), text.find("\r", i)) if p >= 0), default=n)


_QUOTE_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


def _jaas_quoted(text: str, i: int) -> tuple[str, int]:
    """StreamTokenizer's quoted string: to the same quote, or the end of the line or text; backslash escapes
    `\\a\\b\\f\\n\\r\\t\\v`, octal up to \\377, any other character stands for itself."""
    quote, i, n, out = text[i], i + 1, len(text), []
    while i < n and text[i] not in (quote, "\n", "\r"):
        c = text[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            out.append("\uffff")  # StreamTokenizer: read() gives -1, stored as (char) -1
            break
        c = text[i]
        if "0" <= c <= "7":
            m = re.match(r"[0-7]{1,3}" if c <= "3" else r"[0-7]{1,2}", text[i:])
            assert m is not None
            out.append(chr(int(m.group(), 8)))
            i += len(m.group())
        else:
            out.append(_QUOTE_ESCAPES.get(c, c))
            i += 1
    if i < n and text[i] == quote:
        i += 1
    return "".join(out), i


def parse_jaas(text: str) -> list[tuple[str, str, dict[str, str]]]:
    """The entries of a sasl.jaas.config, as Kafka's JaasConfig reads them: `module flag (key=value)* ;`..."""
    tokens = _jaas_tokens(text)
    entries, i = [], 0
    while i < len(tokens):
        kind, module = tokens[i]
        if kind in ";=":
            raise _JaasError("it has no login module class where one should be")
        if i + 1 >= len(tokens):
            raise _JaasError("its login module control flag is missing")
        flag = tokens[i + 1][1]
        if tokens[i + 1][0] in ";=" or flag.lower() not in _FLAGS:
            raise _JaasError("its login module control flag is not required, requisite, sufficient or optional")
        i += 2
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i][0] != ";":
            key = tokens[i][1]
            if tokens[i][0] == "=" or i + 2 >= len(tokens) or tokens[i + 1][0] != "=" or tokens[i + 2][0] in ";=":
                raise _JaasError("an option has no value")
            options[key] = tokens[i + 2][1]
            i += 3
        if i >= len(tokens):
            raise _JaasError("its entry is not terminated by a semicolon")
        i += 1
        entries.append((module, flag, options))
    if not entries:
        raise _JaasError("it names no login module")
    return entries


# --- translation -----------------------------------------------------------------------------------------------

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")  # Kafka's SecurityProtocol (forName upper-cases)
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")  # the ones a username and password carry to librdkafka
# 1.x storm-kafka spouts' keys that TopologySpoutLag writes into -c (KafkaSpout.getComponentConfiguration,
# external/storm-kafka/src/jvm/org/apache/storm/kafka/KafkaSpout.java@v1.2.4:210-248): KafkaOffsetLagUtil does
# not read -c in old-spout mode.
OLD_SPOUT_KEYS = ("zkRoot", "zkServers", "zkNodeBrokers", "partitions", "leaders")
# Keys whose values are, or hold, secrets. Not every value: redact() would then hide "SASL_SSL" or "PLAIN" in
# every message offctl prints.
_SECRET_KEY = re.compile(r"password|jaas|secret|token|credential|\.key$|keystore\.key|certificate", re.IGNORECASE)


@dataclass(frozen=True)
class ClientSettings:
    """librdkafka settings for the monitor's consumer, the -b/-g overrides the properties make, and notes on
    what was ignored. `settings` may hold sasl.password: it is never in repr."""

    settings: dict[str, str] = field(default_factory=dict, repr=False)
    bootstrap: str | None = None  # the file's bootstrap.servers: overrides -b (putAll after it)
    group: str | None = None  # the file's group.id: overrides -g (putAll after it)
    notes: tuple[str, ...] = ()
    isolation_level: str | None = None  # the file's isolation.level: read_committed reads the log head at the LSO

    def __repr__(self) -> str:
        shown = {k: ("***" if k == "sasl.password" else v) for k, v in self.settings.items()}
        return (
            f"ClientSettings(settings={shown!r}, bootstrap={self.bootstrap!r}, group={self.group!r}, "
            f"notes={self.notes!r})"
        )


def translate(
    properties: Mapping[str, str],
    security_protocol: str | None = None,
    sasl_mechanism: str | None = None,
    *,
    jaas_file: str | None = None,
    given: Mapping[str, str] | None = None,
) -> ClientSettings:
    """KafkaOffsetLagUtil's consumer properties (-s, -m, then the -c file over them) as librdkafka settings;
    UsageError naming every key that matters for connecting and cannot be carried over.

    `jaas_file`: the text of the JAAS file the original's JVM is given (bin/storm-kafka-monitor passes
    $STORM_CONF_DIR/storm_jaas.conf as java.security.auth.login.config, at every tag): where sasl.jaas.config is not
    set, the Java client logs in with its `KafkaClient` section (JaasContext.loadClientContext, kafka clients 0.10.2+;
    0.10.1, Storm 1.2.x's, knows no sasl.jaas.config at all). `given`: librdkafka settings offctl's own config
    already holds (the context's kafka-config): a username and password there stand in for a login module."""
    props = _consumer_props(properties, security_protocol, sasl_mechanism)
    settings: dict[str, str] = {}
    refused: list[str] = []
    notes: list[str] = []

    protocol = _protocol(props, settings, refused)
    uses_sasl = protocol.startswith("SASL_")
    uses_ssl = protocol in ("SSL", "SASL_SSL")

    handled = {"security.protocol", "bootstrap.servers", "group.id", "isolation.level"}
    isolation_level = _isolation_level(props, refused)
    if uses_sasl:
        handled |= {"sasl.mechanism", "sasl.jaas.config"}
        _sasl(props, settings, refused, jaas_file, given or {})
    if uses_ssl:
        handled |= {
            "ssl.truststore.type",
            "ssl.truststore.location",
            "ssl.truststore.certificates",
            "ssl.endpoint.identification.algorithm",
            "ssl.keystore.type",
            "ssl.protocol",
            "ssl.enabled.protocols",
        }
        _ssl(props, settings, refused, notes)

    for key in sorted(props):
        if key not in handled:
            _unhandled(key, protocol, uses_ssl, uses_sasl, refused, notes)
    if refused:
        raise UsageError("storm-kafka-monitor: cannot connect as the Java client would: " + "; ".join(refused))
    notes += _file_overrides(properties, isolation_level)
    return ClientSettings(
        settings=settings,
        bootstrap=properties.get("bootstrap.servers"),
        group=properties.get("group.id"),
        notes=tuple(notes),
        isolation_level=isolation_level,
    )


def _consumer_props(
    properties: Mapping[str, str], security_protocol: str | None, sasl_mechanism: str | None
) -> dict[str, str]:
    """KafkaOffsetLagUtil's consumer properties, -s and -m then the file over them; every secret among them redacted."""
    props: dict[str, str] = {}
    if security_protocol is not None:
        props["security.protocol"] = security_protocol
    if sasl_mechanism is not None:
        props["sasl.mechanism"] = sasl_mechanism
    props.update(properties)  # props.putAll(Utils.loadProps(file)): the file wins
    for key, value in props.items():
        if _SECRET_KEY.search(key):
            secret(value)  # redacted from every message (offctl.inputs.redact); the jaas password below too
    return props


def _protocol(props: Mapping[str, str], settings: dict[str, str], refused: list[str]) -> str:
    """The security protocol the consumer uses (PLAINTEXT where none is given, or one Kafka does not know)."""
    protocol = props.get("security.protocol", "PLAINTEXT")
    if protocol.upper() not in PROTOCOLS:
        refused.append("security.protocol (not one of " + ", ".join(PROTOCOLS) + ")")
        return "PLAINTEXT"
    protocol = protocol.upper()
    if "security.protocol" in props:
        settings["security.protocol"] = protocol
    return protocol


def _isolation_level(props: Mapping[str, str], refused: list[str]) -> str | None:
    """The consumer's isolation.level where one is given and the Java consumer takes it."""
    isolation_level = props.get("isolation.level")
    if isolation_level is not None and isolation_level not in ("read_committed", "read_uncommitted"):
        # the Java consumer's ConfigDef refuses it (ValidString: read_committed, read_uncommitted; case-sensitive)
        refused.append("isolation.level (not read_committed or read_uncommitted)")
        return None
    return isolation_level


def _unhandled(key: str, protocol: str, uses_ssl: bool, uses_sasl: bool, refused: list[str], notes: list[str]) -> None:
    """A key translate does not carry over: refused where it changes how the protocol connects, else a note."""
    if key.startswith(("ssl.", "sasl.", "security.")):
        if (
            (key.startswith("ssl.") and uses_ssl)
            or (key.startswith("sasl.") and uses_sasl)
            or key.startswith("security.")
        ):
            refused.append(f"{key} (a {key.split('.')[0].upper()} setting offctl cannot carry over to librdkafka)")
        else:
            notes.append(f"{key}: ignored, {protocol} does not use it (nor does the Java client)")
    elif key in OLD_SPOUT_KEYS:
        notes.append(f"{key}: ignored, a storm-kafka (old spout) setting that KafkaOffsetLagUtil does not read")
    else:
        notes.append(f"{key}: ignored, it does not change where or as whom offsets are read")


def _file_overrides(properties: Mapping[str, str], isolation_level: str | None) -> list[str]:
    """Notes on what the properties file decides over the command line: -b, -g, and the log head of read_committed."""
    notes = []
    if "bootstrap.servers" in properties:
        notes.append("bootstrap.servers: from the consumer properties, over -b, as KafkaOffsetLagUtil's putAll does")
    if "group.id" in properties:
        notes.append("group.id: from the consumer properties, over -g, as KafkaOffsetLagUtil's putAll does")
    if isolation_level == "read_committed":
        notes.append(
            "isolation.level=read_committed: the log head is the last stable offset, where the Java "
            "consumer's seekToEnd puts a read_committed consumer, and the lag counts to it"
        )
    return notes


def jaas_section(text: str, name: str = "KafkaClient") -> str | None:
    """The entries of one application's section of a JAAS login configuration file (`Name { entries };`, as the
    JDK's ConfigFile reads it: comments, quotes), or None when the file has no such section."""
    i, n, depth, start, current = 0, len(text), 0, -1, None
    word = re.compile(r"[^\s{};=\"'/]+")
    while i < n:
        c = text[i]
        if c in "\"'":
            _, i = _jaas_quoted(text, i)
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "{":
            depth += 1
            if depth == 1:
                start = i + 1
            i += 1
        elif c == "}":
            if depth == 1 and current == name:
                return text[start:i]
            depth = max(depth - 1, 0)
            i += 1
        elif depth == 0 and (m := word.match(text, i)):
            current = m.group()
            i = m.end()
        else:
            i += 1
    return None


def _sasl(
    props: dict[str, str], settings: dict[str, str], refused: list[str], jaas_file: str | None, given: Mapping[str, str]
) -> None:
    _sasl_mechanism(props, settings, refused)
    jaas, where = props.get("sasl.jaas.config"), "sasl.jaas.config"
    if jaas is None and jaas_file is not None:
        jaas, where = jaas_section(jaas_file), "storm_jaas.conf's KafkaClient section"
    if jaas is None:
        if "sasl.username" in given and "sasl.password" in given:
            return  # the context's credentials
        refused.append(
            "sasl.jaas.config (not set, and no KafkaClient section in storm_jaas.conf: offctl reads the "
            "username and password from one of them, or from the context's kafka-config "
            "sasl.username and sasl.password)"
        )
        return
    options = _jaas_login(jaas, where, refused)
    if options is not None:
        settings["sasl.username"] = secret(options["username"])
        settings["sasl.password"] = secret(options["password"])


def _sasl_mechanism(props: dict[str, str], settings: dict[str, str], refused: list[str]) -> None:
    mechanism = props.get("sasl.mechanism")
    if mechanism is None:
        refused.append(
            "sasl.mechanism (not set: the Java client's default is GSSAPI, Kerberos, which offctl does not do)"
        )
    elif mechanism not in MECHANISMS:  # Kafka matches mechanism names exactly
        refused.append("sasl.mechanism (offctl does " + ", ".join(MECHANISMS) + "; not GSSAPI or OAUTHBEARER)")
    else:
        settings["sasl.mechanism"] = mechanism


def _jaas_login(jaas: str, where: str, refused: list[str]) -> dict[str, str] | None:
    """The options of the one login module of `jaas` (read from `where`): exactly a username and a password, for
    PlainLoginModule or ScramLoginModule. Anything else is refused, saying why in `refused`, and gives None."""
    try:
        entries = parse_jaas(jaas)
    except _JaasError as exc:
        refused.append(f"{where} (cannot be read: {exc})")
        return None
    if len(entries) != 1:  # JaasContext.loadClientContext: "should be 1 module"
        refused.append(f"{where} (it has {len(entries)} login modules; Kafka takes one)")
        return None
    module, _, options = entries[0]
    if module not in (PLAIN_MODULE, SCRAM_MODULE):
        what = _KNOWN_REFUSED_MODULES.get(module)
        refused.append(
            f"{where} ("
            + (
                f"its login module is {what}'s"
                if what
                else "its login module is neither PlainLoginModule nor ScramLoginModule"
            )
            + "; offctl does username and password logins only)"
        )
        return None
    other = sorted(set(options) - {"username", "password"})
    if other or "username" not in options or "password" not in options:
        refused.append(
            f"{where} (offctl takes exactly the options username and password of "
            + module.rsplit(".", 1)[1]
            + (f"; it has {len(other)} other" if other else "")
            + ")"
        )
        return None
    return options


def _ssl(props: dict[str, str], settings: dict[str, str], refused: list[str], notes: list[str]) -> None:
    store_type = props.get("ssl.truststore.type", "JKS")  # Kafka's default truststore type
    location = props.get("ssl.truststore.location")
    if location is not None:
        if store_type.upper() == "PEM":
            settings["ssl.ca.location"] = location
        else:
            refused.append(
                "ssl.truststore.location (a JKS or PKCS12 truststore, which librdkafka cannot read: "
                "give the CA certificates as PEM, ssl.truststore.type=PEM)"
            )
    if "ssl.truststore.certificates" in props:
        settings["ssl.ca.pem"] = props["ssl.truststore.certificates"]
    algorithm = props.get("ssl.endpoint.identification.algorithm")
    if algorithm is not None:
        if algorithm.lower() == "https":
            settings["ssl.endpoint.identification.algorithm"] = "https"
        elif algorithm == "":
            settings["ssl.endpoint.identification.algorithm"] = "none"
        else:
            refused.append("ssl.endpoint.identification.algorithm (neither https nor empty)")
    for key in ("ssl.protocol", "ssl.enabled.protocols"):
        if key in props:
            notes.append(f"{key}: ignored, librdkafka negotiates TLS with OpenSSL's own minimum version")
    if "ssl.keystore.type" in props and "ssl.keystore.location" not in props:
        notes.append("ssl.keystore.type: ignored, no keystore is given")
