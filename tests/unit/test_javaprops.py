"""offctl.faces.stormui.javaprops: the -c properties file and -s/-m of storm-kafka-monitor, as librdkafka settings.

The reader's rows were checked once against the JDK (OpenJDK 17 java.util.Properties.store and .load, and a
java.io.StreamTokenizer set up as Kafka's JaasConfig does: clients/src/main/java/org/apache/kafka/common/security/
JaasConfig.java), run by hand; the expected values below are what the JDK gave.
"""

from __future__ import annotations

import pytest

from offctl.errors import UsageError
from offctl.faces.stormui.javaprops import (
    PLAIN_MODULE,
    SCRAM_MODULE,
    ClientSettings,
    jaas_section,
    parse_jaas,
    parse_properties,
    parse_properties_bytes,
    translate,
)
from offctl.inputs import redact

# --- the reader ----------------------------------------------------------------------------------------------

HAND = (
    "# c\n! c2\n  a = 1 \\\n   2\nb:3\nc 4\nd\n\\#e=5\nf=\\u0041\\q\nlong = x\\\\\ng=h\\\\\\\n  i\n#cont\\\nj=k\n  \n"
)
HAND_LOADED = {"#e": "5", "a": "1 2", "b": "3", "c": "4", "d": "", "f": "Aq", "g": "h\\i", "j": "k", "long": "x\\"}

# Properties.store's output of three entries (TopologySpoutLag writes -c so, @v2.8.8:102-105)
STORED = (
    b"#Kafka consumer extra properties\n#Tue Nov 24 09:56:38 UTC 2026\n\\ key\\ with\\ space=\\ lead\n"
    b"k\\=ey\\:=v\\tw\\\\z\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
    b'username\\="u ser" password\\="p\\\\"w\\=d\\\\nx\\:\\#\\!\\u00E9";\n'
)
JAAS_HOSTILE = PLAIN_MODULE + ' required username="u ser" password="p\\"w=d\\nx:#!\u00e9";'
PASSWORD = 'p"w=d\nx:#!\u00e9'  # a quote, `=`, a newline, `:#!` and a non-ASCII letter


@pytest.mark.parametrize(
    "text, want",
    [
        pytest.param(HAND, HAND_LOADED, id="jdk17-load-comments-continuations-escapes-separators"),
        pytest.param("a=1\na=2\n", {"a": "2"}, id="last-wins-Hashtable.put"),
        pytest.param("a=1\r\nb=2\rc=3", {"a": "1", "b": "2", "c": "3"}, id="crlf-cr-no-final-newline"),
        pytest.param("a=x\\", {"a": "x"}, id="continuation-at-end-of-text"),
        pytest.param("a==b", {"a": "=b"}, id="one-separator-only"),
        pytest.param("a  =  b  ", {"a": "b  "}, id="value-keeps-trailing-space"),
        pytest.param("a\\ b=c", {"a b": "c"}, id="escaped-space-in-key"),
        pytest.param("", {}, id="empty"),
    ],
)
def test_parse_properties(text, want):
    assert parse_properties(text) == want


def test_parse_what_properties_store_wrote():
    """The -c file as TopologySpoutLag writes it (ISO-8859-1, \\uXXXX) reads back to the values given."""
    assert parse_properties_bytes(STORED) == {
        " key with space": " lead",
        "k=ey:": "v\tw\\z",
        "sasl.jaas.config": JAAS_HOSTILE,
    }


def test_a_malformed_unicode_escape_is_refused_without_the_value():
    with pytest.raises(UsageError, match="malformed") as exc:
        parse_properties("sasl.jaas.config=secretvalue\\u12")
    assert "secretvalue" not in str(exc.value)


@pytest.mark.parametrize(
    "text, want",
    [
        pytest.param(
            JAAS_HOSTILE,
            [(PLAIN_MODULE, "required", {"username": "u ser", "password": PASSWORD})],
            id="jdk17-StreamTokenizer-escaped-quote-newline",
        ),
        pytest.param(
            'M required a=\'x\\101\\7y\' b=plain/c c="q" // comment\n d="e"; /* x */',
            [("M", "required", {"a": "xA\x07y", "b": "plain", "d": "e"})],
            id="jdk17-octal-comments",
        ),
        pytest.param(
            'M required a="unterminated\nb=c;',
            [("M", "required", {"a": "unterminated", "b": "c"})],
            id="jdk17-quote-ends-at-newline",
        ),
        pytest.param('M required a="x\\477";', [("M", "required", {"a": "x'7"})], id="jdk17-octal-at-most-377"),
        pytest.param(
            "A optional; B REQUIRED x=1;",
            [("A", "optional", {}), ("B", "REQUIRED", {"x": "1"})],
            id="two-entries-flag-any-case",
        ),
    ],
)
def test_parse_jaas(text, want):
    assert parse_jaas(text) == want


# --- the translation -------------------------------------------------------------------------------------------


def jaas(module: str = PLAIN_MODULE, user: str = "alice", password: str = "s3cret-pw") -> str:
    esc = password.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'{module} required username="{user}" password="{esc}";'


SASL = {"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas()}

TRANSLATED = [
    pytest.param({}, None, None, {}, id="nothing"),
    pytest.param({}, "SSL", None, {"security.protocol": "SSL"}, id="s-only-KOLU@v1.2.4:222-224"),
    pytest.param({}, "ssl", None, {"security.protocol": "SSL"}, id="s-any-case-kafka:SecurityProtocol.forName"),
    pytest.param({}, "sasl_ssl", None, None, id="sasl-without-mechanism-refused"),
    pytest.param(
        SASL,
        "SASL_SSL",
        None,
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": "s3cret-pw",
        },
        id="plain-over-s",
    ),
    pytest.param(
        {**SASL, "security.protocol": "SASL_PLAINTEXT"},
        "SSL",
        None,
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": "s3cret-pw",
        },
        id="file-protocol-over-s-putAll-KOLU@v1.2.3:225-228",
    ),
    pytest.param(
        {"sasl.jaas.config": jaas(SCRAM_MODULE)},
        "SASL_SSL",
        "SCRAM-SHA-512",
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "alice",
            "sasl.password": "s3cret-pw",
        },
        id="scram-m-KOLU@v2.8.8",
    ),
    pytest.param(
        {**SASL, "sasl.mechanism": "SCRAM-SHA-256"},
        "SASL_SSL",
        "PLAIN",
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "alice",
            "sasl.password": "s3cret-pw",
        },
        id="file-mechanism-over-m",
    ),
    pytest.param(
        {
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": "/etc/ca.pem",
            "ssl.endpoint.identification.algorithm": "",
        },
        "SSL",
        None,
        {"security.protocol": "SSL", "ssl.ca.location": "/etc/ca.pem", "ssl.endpoint.identification.algorithm": "none"},
        id="pem-truststore-no-hostname-check",
    ),
    pytest.param(
        {"ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----x"},
        "SSL",
        None,
        {"security.protocol": "SSL", "ssl.ca.pem": "-----BEGIN CERTIFICATE-----x"},
        id="pem-inline",
    ),
    pytest.param(
        {"ssl.truststore.location": "/etc/ts.jks", "sasl.jaas.config": "whatever"},
        "PLAINTEXT",
        None,
        {"security.protocol": "PLAINTEXT"},
        id="ssl-and-sasl-keys-unused-by-plaintext-ignored",
    ),
]


@pytest.mark.parametrize("props, protocol, mechanism, want", TRANSLATED)
def test_translate(props, protocol, mechanism, want):
    if want is None:
        with pytest.raises(UsageError, match="sasl.mechanism"):
            translate(props, protocol, mechanism)
        return
    assert translate(props, protocol, mechanism).settings == want


def test_ignored_keys_are_named_in_the_notes():
    """A new spout's raw consumer properties and a 1.x old spout's keys, as TopologySpoutLag writes them into -c."""
    result = translate(
        {
            "key.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
            "max.poll.records": "500",
            "zkRoot": "/root/id",
            "leaders": "h:9092,",
            "client.id": "x",
        }
    )
    assert result.settings == {}
    assert [n.split(":")[0] for n in result.notes] == [
        "client.id",
        "key.deserializer",
        "leaders",
        "max.poll.records",
        "zkRoot",
    ]


def test_bootstrap_and_group_of_the_file_override_b_and_g():
    """KOLU@v1.2.4:216-227: bootstrap.servers=-b, group.id=-g, then putAll(the file)."""
    result = translate({"bootstrap.servers": "k1:9092", "group.id": "g1"})
    assert (result.bootstrap, result.group, result.settings) == ("k1:9092", "g1", {})
    assert translate({}).bootstrap is None and translate({}).group is None


REFUSED = [
    pytest.param(
        {"ssl.truststore.location": "/etc/ts.jks", "ssl.truststore.password": "tspw-secret"},
        "SSL",
        None,
        ["ssl.truststore.location", "ssl.truststore.password"],
        id="jks-truststore",
    ),
    pytest.param(
        {"ssl.truststore.type": "PKCS12", "ssl.truststore.location": "/etc/ts.p12"},
        "SSL",
        None,
        ["ssl.truststore.location"],
        id="pkcs12-truststore",
    ),
    pytest.param(
        {"ssl.keystore.location": "/k.jks", "ssl.keystore.password": "kspw-secret", "ssl.key.password": "kpw-secret"},
        "SSL",
        None,
        ["ssl.key.password", "ssl.keystore.location", "ssl.keystore.password"],
        id="keystore",
    ),
    pytest.param(
        {"ssl.endpoint.identification.algorithm": "ldaps"},
        "SSL",
        None,
        ["ssl.endpoint.identification.algorithm"],
        id="endpoint-algorithm",
    ),
    pytest.param(
        {
            "sasl.mechanism": "GSSAPI",
            "sasl.kerberos.service.name": "kafka",
            "sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;",
        },
        "SASL_PLAINTEXT",
        None,
        ["sasl.mechanism", "sasl.jaas.config", "sasl.kerberos.service.name"],
        id="kerberos",
    ),
    pytest.param({"sasl.jaas.config": jaas()}, "SASL_SSL", None, ["sasl.mechanism"], id="no-mechanism-is-GSSAPI"),
    pytest.param(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
        },
        "SASL_SSL",
        None,
        ["sasl.mechanism", "sasl.jaas.config"],
        id="oauthbearer",
    ),
    pytest.param({"sasl.mechanism": "PLAIN"}, "SASL_SSL", None, ["sasl.jaas.config"], id="no-jaas-config-jaas-file"),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas("com.example.CustomLoginModule")},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="unknown-login-module",
    ),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas() + " " + jaas()},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="two-login-modules",
    ),
    pytest.param(
        {
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": SCRAM_MODULE + ' required username="a" password="s3cret-pw" tokenauth="true";',
        },
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="scram-delegation-token",
    ),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_MODULE + ' required username="a";'},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="no-password",
    ),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_MODULE + ' required password="s3cret-pw"'},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="no-semicolon",
    ),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_MODULE + ' maybe password="s3cret-pw";'},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="bad-flag",
    ),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": 's3cret-pw required password="s3cret-pw";'},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="secret-where-the-module-goes",
    ),
    pytest.param(
        {"sasl.mechanism": "PLAIN", "sasl.jaas.config": PLAIN_MODULE + " required password= ;"},
        "SASL_SSL",
        None,
        ["sasl.jaas.config"],
        id="option-without-value",
    ),
    pytest.param({}, "TLS", None, ["security.protocol"], id="unknown-protocol"),
    pytest.param(
        {"security.providers": "com.example.Provider"}, None, None, ["security.providers"], id="security-providers"
    ),
]


@pytest.mark.parametrize("props, protocol, mechanism, keys", REFUSED)
def test_refused_naming_every_key_never_a_value(props, protocol, mechanism, keys):
    with pytest.raises(UsageError) as exc:
        translate(props, protocol, mechanism)
    message = str(exc.value)
    for key in keys:
        assert key in message
    for value in [*props.values(), "s3cret-pw"]:
        if key_like(value):
            continue
        assert value not in message, value


def key_like(value: str) -> bool:
    """Values that are words of every refusal anyway (PLAIN, GSSAPI, ...), so their absence cannot be asked."""
    return value in ("PLAIN", "GSSAPI", "OAUTHBEARER", "SCRAM-SHA-256", "kafka", "PKCS12", "JKS")


def test_the_hostile_password_travels_intact_and_never_shows():
    """The password of the file Properties.store wrote, with a quote, `=`, a newline (JAAS-escaped), arrives
    whole in sasl.password; it is in no repr, is redacted from any message, and no refusal repeats it."""
    props = parse_properties_bytes(STORED)
    result = translate({"sasl.mechanism": "PLAIN", "sasl.jaas.config": props["sasl.jaas.config"]}, "SASL_SSL")
    assert result.settings["sasl.password"] == PASSWORD
    assert result.settings["sasl.username"] == "u ser"
    assert PASSWORD not in repr(result) and 'p\\"w' not in repr(result) and "***" in repr(result)
    assert PASSWORD not in redact(f"connecting with {PASSWORD} failed")
    with pytest.raises(UsageError) as exc:  # the same config, refused for another key
        translate({"sasl.jaas.config": props["sasl.jaas.config"], "ssl.keystore.location": "/k"}, "SASL_SSL")
    assert PASSWORD not in str(exc.value) and "u ser" not in str(exc.value)


def test_only_secret_values_are_registered_for_redaction():
    """redact() hides every registered value everywhere: a protocol name must stay readable."""
    translate(
        {
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": jaas(password="an0ther-pw"),
            "ssl.keystore.password": "ks-pw-1",
        },
        "SASL_PLAINTEXT",
    )
    assert redact("SASL_PLAINTEXT PLAIN an0ther-pw ks-pw-1") == "SASL_PLAINTEXT PLAIN *** ***"


def test_repr_of_a_result_hides_only_the_password():
    r = ClientSettings(settings={"sasl.password": "hunter2xx", "sasl.username": "bob"})
    assert "hunter2xx" not in repr(r) and "bob" in repr(r)


# --- the JAAS file bin/storm-kafka-monitor gives its JVM ($STORM_CONF_DIR/storm_jaas.conf) ---------------------

STORM_JAAS = """
/* as Storm's docs write it: several applications, comments, quotes */
StormServer {
   com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;
};
// the Kafka client's section: JaasContext.loadClientContext reads "KafkaClient" without sasl.jaas.config
KafkaClient {
   org.apache.kafka.common.security.plain.PlainLoginModule required
   username="storm-ui"
   password="p}w{d;";
};
"""


@pytest.mark.parametrize(
    "text, want",
    [
        pytest.param(
            STORM_JAAS,
            'org.apache.kafka.common.security.plain.PlainLoginModule required\n   username="storm-ui"'
            '\n   password="p}w{d;";',
            id="braces-and-semicolons-inside-quotes",
        ),
        pytest.param("StormClient { x required; };", None, id="no-KafkaClient-section"),
        pytest.param("KafkaClientX { x required; };", None, id="another-name"),
        pytest.param("KafkaClient{a required;};", "a required;", id="no-spaces"),
    ],
)
def test_jaas_section(text, want):
    got = jaas_section(text)
    assert (got.strip() if got is not None else None) == want


def test_a_jaas_file_logs_in_where_the_properties_have_no_jaas_config():
    got = translate({"sasl.mechanism": "PLAIN"}, "SASL_PLAINTEXT", jaas_file=STORM_JAAS).settings
    assert got == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "storm-ui",
        "sasl.password": "p}w{d;",
    }
    # sasl.jaas.config wins over the file, as in the Java client
    assert translate({**SASL}, "SASL_SSL", jaas_file=STORM_JAAS).settings["sasl.username"] == "alice"


def test_a_jaas_file_with_kerberos_only_is_refused_naming_the_file_never_the_secret():
    with pytest.raises(UsageError, match="sasl.jaas.config .not set, and no KafkaClient section") as exc:
        translate({"sasl.mechanism": "PLAIN"}, "SASL_PLAINTEXT", jaas_file="StormServer { x required; };")
    assert "storm_jaas.conf" in str(exc.value)
    kerberos = 'KafkaClient { com.sun.security.auth.module.Krb5LoginModule required keyTab="/k" principal="p"; };'
    with pytest.raises(UsageError, match="storm_jaas.conf's KafkaClient section"):
        translate({"sasl.mechanism": "PLAIN"}, "SASL_PLAINTEXT", jaas_file=kerberos)


def test_the_contexts_credentials_stand_in_for_a_login_module():
    got = translate(
        {"sasl.mechanism": "PLAIN"}, "SASL_PLAINTEXT", given={"sasl.username": "u", "sasl.password": "pw-from-context"}
    ).settings
    assert got == {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}
