"""tests/support/storm_ui.py: what Storm UI shows for canned storm-kafka-monitor outputs (no offctl involved).

Each row is a monitor's stdout and exit code, the UI release (StormUiLag.java: v1.2.4, v2.5.0 or v2.8.8) and the
UiView the page shows. TSL = storm-core/src/jvm/org/apache/storm/utils/TopologySpoutLag.java, KOLU =
external/storm-kafka-monitor/.../KafkaOffsetLagUtil.java, page = topology.html, all apache/storm at the tag named.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support.storm_ui import RELEASES, Row, UiView, requires_storm_ui, storm_ui_reads

REASON = "Unable to get offset lags for kafka. Reason: "
CAST_LONG = (
    "java.lang.ClassCastException: class java.lang.Long cannot be cast to class java.util.Map "
    "(java.lang.Long and java.util.Map are in module java.base of loader 'bootstrap')"
)
CAST_STRING = CAST_LONG.replace("Long", "String")
CAST_ARRAY = (
    "java.lang.ClassCastException: class org.json.simple.JSONArray cannot be cast to class java.util.Map "
    "(org.json.simple.JSONArray is in unnamed module of loader 'app'; java.util.Map is in module java.base "
    "of loader 'bootstrap')"
)
EXIT = "org.apache.storm.utils.ShellUtils$ExitCodeException: "  # its message is the monitor's stderr, not modelled
DEFAULT_1X = "Offset lags for kafka not supported for older versions. Please update kafka spout to latest version."
DEFAULT_2X = (
    "Make sure Kafka spout version is latest and config.topics, config.groupid & config.bootstrap.servers "
    "are not null for newer versions of Kafka spout."
)
UNDEFINED = (None, "undefined")


def L(n: int) -> tuple[int, str]:
    return (n, "Long")


def row(topic: str, partition: str, head: int, committed: int) -> Row:
    return Row(topic, partition, L(head), L(committed), L(head - committed))


# KOLU@v1.2.4:146-147 prints JSONValue.toJSONString(HashMap<String, HashMap<Integer, KafkaPartitionOffsetLag>>):
# json-simple 1.1 writes the maps and falls back to KafkaPartitionOffsetLag.toString() (KafkaPartitionOffsetLag.java
# @v1.2.4:65-70) for the values. This text is what fangyidong/json-simple@tag_release_1_1, compiled from source,
# printed for that map (HashMap order), byte for byte: spaces inside the inner objects only, no trailing newline.
V1_TEXT = (
    b'{"clicks":{"1":{"consumerCommittedOffset": 0, "logHeadOffset": 0, "lag": 0}},'
    b'"orders":{"0":{"consumerCommittedOffset": 74804998, "logHeadOffset": 74805483, "lag": 485},'
    b'"2":{"consumerCommittedOffset": -1, "logHeadOffset": 3, "lag": 4},'
    b'"10":{"consumerCommittedOffset": 7, "logHeadOffset": 7, "lag": 0}}}'
)
# the page lists a topic's partitions as JavaScript's for-in does: array-index keys ascending ("2" before "10")
V1_ROWS = (
    row("clicks", "1", 0, 0),
    row("orders", "0", 74805483, 74804998),
    row("orders", "2", 3, -1),
    row("orders", "10", 7, 7),
)
# KOLU@v2.6.0+ writes with json-smart's bean writer: compact, field order unspecified (brief §2.3, derived)
SMART_TEXT = (
    b'{"orders":{"0":{"lag":485,"logHeadOffset":74805483,"consumerCommittedOffset":74804998},'
    b'"10":{"logHeadOffset":7,"consumerCommittedOffset":7,"lag":0},'
    b'"2":{"consumerCommittedOffset":-1,"lag":4,"logHeadOffset":3}},'
    b'"clicks":{"1":{"lag":0,"consumerCommittedOffset":0,"logHeadOffset":0}}}'
)
EXTRA_KEYS = (
    b'{"orders":{"0":{"consumerCommittedOffset":5,"logHeadOffset":10,"lag":5,"timeLagSeconds":12.5,'
    b'"findings":["IGNORED_ZERO_OFFSET"],"profile":null,"resumeOffset":5}}}'
)
# KOLU@v1.2.4:148-150: print(REASON) then ex.printStackTrace(System.out), one println per line
STACK = (
    REASON + "java.lang.IllegalArgumentException: zk-node '/storm/spout' dose not exists.\n"
    "\tat org.apache.storm.kafka.monitor.KafkaOffsetLagUtil.getOldConsumerOffsetsFromZk(KafkaOffsetLagUtil.java:387)\n"
    "\tat org.apache.storm.kafka.monitor.KafkaOffsetLagUtil.main(KafkaOffsetLagUtil.java:144)\n"
)
USAGE = b"topics is required\nusage: storm-kafka-monitor\n -b,--bootstrap-brokers <arg> ...\n"
ROW_JSON = b'{"consumerCommittedOffset":5,"logHeadOffset":10,"lag":5}'

CASES = [
    # --- success: the rows, whatever the spacing, the key order or extra keys
    pytest.param(V1_TEXT, 0, "v1.2.4", UiView(rows=V1_ROWS), id="1.x-json-simple-text-KOLU@v1.2.4-page@v1.2.4"),
    pytest.param(V1_TEXT, 0, "v2.5.0", UiView(rows=V1_ROWS), id="1.x-json-simple-text-TSL@v2.5.0"),
    pytest.param(V1_TEXT, 0, "v2.8.8", UiView(rows=V1_ROWS), id="1.x-json-simple-text-TSL@v2.8.8"),
    pytest.param(SMART_TEXT, 0, "v1.2.4", UiView(rows=V1_ROWS), id="2.6+-json-smart-compact-KOLU@v2.6.0"),
    pytest.param(SMART_TEXT, 0, "v2.8.8", UiView(rows=V1_ROWS), id="2.6+-json-smart-compact-TSL@v2.8.8"),
    pytest.param(b"{}", 0, "v1.2.4", UiView(), id="empty-object-no-rows-no-errorInfo-page@v1.2.4:420-434"),
    pytest.param(b"{}", 0, "v2.8.8", UiView(), id="empty-object-TSL@v2.8.8"),
    pytest.param(
        EXTRA_KEYS,
        0,
        "v1.2.4",
        UiView(rows=(row("orders", "0", 10, 5),)),
        id="extra-keys-ignored-page-reads-three@v1.2.4:429-431",
    ),
    pytest.param(EXTRA_KEYS, 0, "v2.8.8", UiView(rows=(row("orders", "0", 10, 5),)), id="extra-keys-TSL@v2.8.8"),
    pytest.param(
        b'{"orders":{"0":{"consumerCommittedOffset":5,"logHeadOffset":10,"lag":5.0}}}',
        0,
        "v1.2.4",
        UiView(rows=(Row("orders", "0", L(10), L(5), (5.0, "Double")),)),
        id="a-double-stays-Double-Yylex-DOUBLE",
    ),
    pytest.param(
        b'{"orders":{"16":' + ROW_JSON + b',"9":' + ROW_JSON + b',"x":' + ROW_JSON + b"}}",
        0,
        "v1.2.4",
        UiView(rows=(row("orders", "9", 10, 5), row("orders", "16", 10, 5), row("orders", "x", 10, 5))),
        id="partitions-in-for-in-order-not-HashMap-order",
    ),
    pytest.param(
        b'{"orders":{"0":{"logHeadOffset":10}}}',
        0,
        "v1.2.4",
        UiView(rows=(Row("orders", "0", L(10), UNDEFINED, UNDEFINED),)),
        id="missing-keys-undefined-page",
    ),
    pytest.param(
        b'{"orders":{"0":{"lag":1,"lag":2,"logHeadOffset":2,"consumerCommittedOffset":0}}}',
        0,
        "v1.2.4",
        UiView(rows=(row("orders", "0", 2, 0),)),
        id="duplicate-key-last-wins-JSONParser-HashMap.put",
    ),
    pytest.param(
        b"\r\n " + V1_TEXT + b"\n", 0, "v1.2.4", UiView(rows=V1_ROWS), id="surrounding-whitespace-ok-Yylex-WS"
    ),
    # --- the failure text: a ParseException, so errorInfo is the whole output, stack and trailing newline kept
    pytest.param(STACK.encode(), 0, "v1.2.4", UiView(error_info=STACK), id="failure-with-stack-TSL@v1.2.4:211-214"),
    pytest.param(STACK.encode(), 0, "v2.5.0", UiView(error_info=STACK), id="failure-with-stack-TSL@v2.5.0"),
    pytest.param(STACK.encode(), 0, "v2.8.8", UiView(error_info=STACK), id="failure-with-stack-TSL@v2.8.8:183-185"),
    pytest.param((REASON + "boom").encode(), 0, "v1.2.4", UiView(error_info=REASON + "boom"), id="failure-no-stack"),
    pytest.param(b"", 0, "v1.2.4", UiView(error_info=""), id="empty-output-ParseException-errorInfo-empty"),
    pytest.param(b"", 0, "v2.8.8", UiView(error_info=""), id="empty-output-TSL@v2.8.8"),
    pytest.param(
        b'{"orders":{}} trailing',
        0,
        "v1.2.4",
        UiView(error_info='{"orders":{}} trailing'),
        id="json-then-text-JSONParser-S_IN_FINISHED_VALUE",
    ),
    pytest.param(b'{"orders":{}}{}', 0, "v2.8.8", UiView(error_info='{"orders":{}}{}'), id="two-objects"),
    pytest.param(b"\xef\xbb\xbf{}", 0, "v2.8.8", UiView(error_info="\ufeff{}"), id="bom-is-not-whitespace-Yylex-WS"),
    # --- a JSON value that is not an object: ClassCastException (spout omitted) before v2.8.8, errorInfo at v2.8.8
    pytest.param(b"5", 0, "v1.2.4", UiView(omitted=CAST_LONG), id="number-TSL@v1.2.4:210-ClassCastException"),
    pytest.param(b"5", 0, "v2.5.0", UiView(omitted=CAST_LONG), id="number-TSL@v2.5.0"),
    pytest.param(b"5", 0, "v2.8.8", UiView(error_info="5"), id="number-TSL@v2.8.8:175-181-instanceof"),
    pytest.param(b'"Unable"', 0, "v1.2.4", UiView(omitted=CAST_STRING), id="string-TSL@v1.2.4"),
    pytest.param(b'"Unable"', 0, "v2.8.8", UiView(error_info='"Unable"'), id="string-TSL@v2.8.8"),
    pytest.param(b"[" + ROW_JSON + b"]", 0, "v1.2.4", UiView(omitted=CAST_ARRAY), id="array-TSL@v1.2.4"),
    pytest.param(
        b"[" + ROW_JSON + b"]", 0, "v2.8.8", UiView(error_info="[" + ROW_JSON.decode() + "]"), id="array-TSL@v2.8.8"
    ),
    # null parses to a null result: the default message, not the output (v1.2.4/v2.5.0); not a Map at v2.8.8
    pytest.param(b"null", 0, "v1.2.4", UiView(error_info=DEFAULT_1X), id="null-default-message-TSL@v1.2.4:181,235-238"),
    pytest.param(b"null", 0, "v2.5.0", UiView(error_info=DEFAULT_2X), id="null-default-message-TSL@v2.5.0"),
    pytest.param(b"null", 0, "v2.8.8", UiView(error_info="null"), id="null-TSL@v2.8.8-instanceof"),
    # --- shapes inside the object that the page trips on or skips
    pytest.param(
        b'{"orders":{"0":null}}',
        0,
        "v1.2.4",
        UiView(page_error="TypeError: Cannot read properties of null (reading 'logHeadOffset')"),
        id="null-partition-TypeError-page@v1.2.4:429",
    ),
    pytest.param(
        b'{"orders":5,"clicks":{"1":' + ROW_JSON + b"}}",
        0,
        "v1.2.4",
        UiView(rows=(row("clicks", "1", 10, 5),)),
        id="topic-not-an-object-no-rows-page-for-in",
    ),
    pytest.param(
        b'{"orders":{"0":{"consumerCommittedOffset":0,"logHeadOffset":99999999999999999999,"lag":1}}}',
        0,
        "v1.2.4",
        UiView(omitted='java.lang.NumberFormatException: For input string: "99999999999999999999"'),
        id="beyond-long-NumberFormatException-Yylex-INT-Long.valueOf",
    ),
    # --- non-ASCII topic names
    pytest.param(
        b'{"\\u00e9v\\u00e9nements":{"0":' + ROW_JSON + b"}}",
        0,
        "v1.2.4",
        UiView(rows=(row("\u00e9v\u00e9nements", "0", 10, 5),)),
        id="unicode-escapes-Yylex",
    ),
    pytest.param(
        b'{"\\ud83d\\ude00":{"0":' + ROW_JSON + b"}}",
        0,
        "v1.2.4",
        UiView(rows=(row("\U0001f600", "0", 10, 5),)),
        id="surrogate-pair-escapes-Yylex-(char)",
    ),
    pytest.param(
        '{"événements":{"0":'.encode() + ROW_JSON + b"}}",
        0,
        "v1.2.4",
        UiView(rows=(row("événements", "0", 10, 5),)),
        id="raw-utf8-UI-default-charset-UTF-8-ShellUtils@v1.2.4",
    ),
    pytest.param(
        '{"événements":{"0":'.encode() + ROW_JSON + b"}}",
        0,
        "v2.8.8",
        UiView(rows=(row("événements", "0", 10, 5),)),
        id="raw-utf8-ShellUtils@v2.8.8-UTF_8",
    ),
    # --- a non-zero exit: ExitCodeException, the spout is left out whatever the output
    pytest.param(V1_TEXT, 1, "v1.2.4", UiView(omitted=EXIT), id="exit-1-with-json-ShellUtils@v1.2.4:222-223-TSL.lag"),
    pytest.param(V1_TEXT, 1, "v2.8.8", UiView(omitted=EXIT), id="exit-1-with-json-ShellUtils@v2.8.8:263-264"),
    pytest.param(USAGE, 1, "v1.2.4", UiView(omitted=EXIT), id="usage-exit-1-KOLU-printUsageAndExit"),
    pytest.param(STACK.encode(), 2, "v2.5.0", UiView(omitted=EXIT), id="failure-text-exit-2"),
]


def by_topic(view: UiView) -> UiView:
    """Topics come in the parsed HashMap's order (unspecified); a topic's partitions keep the page's order."""
    return replace(view, rows=tuple(sorted(view.rows, key=lambda r: r.topic)))


@requires_storm_ui
@pytest.mark.parametrize("stdout, exit_code, release, want", CASES)
def test_what_storm_ui_shows(stdout, exit_code, release, want):
    assert by_topic(storm_ui_reads(stdout, exit_code, release)) == want


@requires_storm_ui
@pytest.mark.parametrize(
    "charset, topic",
    [("UTF-8", "événements"), ("ISO-8859-1", "Ã©vÃ©nements"), ("US-ASCII", "\ufffd\ufffdv\ufffd\ufffdnements")],
    ids=["UTF-8", "ISO-8859-1", "US-ASCII"],
)
def test_through_v2_5_0_the_ui_decodes_with_its_default_charset(charset, topic):
    """ShellUtils@v1.2.4:183-185 and @v2.5.0 read stdout with new InputStreamReader(in): file.encoding; v2.6.0+ reads
    UTF-8 (STORM-3762), so v2.8.8 ignores the UI's charset."""
    stdout = '{"événements":{"0":'.encode() + ROW_JSON + b"}}"
    for release in ("v1.2.4", "v2.5.0"):
        assert storm_ui_reads(stdout, 0, release, ui_default_charset=charset) == UiView(rows=(row(topic, "0", 10, 5),))
    assert storm_ui_reads(stdout, 0, "v2.8.8", ui_default_charset=charset) == UiView(
        rows=(row("événements", "0", 10, 5),)
    )


@requires_storm_ui
def test_error_info_comes_back_character_for_character():
    """Tabs, CR, quotes, backslashes and non-ASCII survive StormUiLag's one-line escaping."""
    text = REASON + 'x\t"y"\\z\r\n\u00e9\u4e2d\U0001f600 \x7f\x01'
    assert storm_ui_reads(text.encode(), 0, "v2.8.8") == UiView(error_info=text)


def test_an_unknown_release_is_refused():
    with pytest.raises(ValueError, match="v1.2.4"):
        storm_ui_reads(b"{}", 0, "v2.7.0")
    assert RELEASES == ("v1.2.4", "v2.5.0", "v2.8.8")
