"""storm-kafka-client's commit metadata as its spout reads it: `CommitMetadataManager.isOffsetCommittedByThisTopology`
binds the metadata with a default Jackson ObjectMapper (`new ObjectMapper()`, no feature changed) into
`CommitMetadata(@JsonProperty("topologyId") String, @JsonProperty("taskId") int, @JsonProperty("threadName")
String)`, catches the IOException of a failed bind (the commit is then not this topology's), and compares
`getTopologyId()` with the storm id, which throws a NullPointerException for a JSON null document or a null or
missing topologyId: the spout's start-up fails there (KafkaSpout.doSeek catches nothing). CommitMetadataManager.java
and CommitMetadata.java are the same files at v1.0.6 to v2.8.8; the Jackson is 2.6.3 (1.0.x, 1.1.x), 2.9.4 (1.2.x),
2.20 (2.8.3's jars) and 2.21 (2.8.8).

No Python library binds JSON the way Jackson does, so this is that bind, held to the real CommitMetadataManager on
generated input (tests/oracle/test_metadata_differential.py, on 1.2.4's Jackson 2.9.4 and 2.8.3's 2.20):

- the document: white space [ \\t\\r\\n], then one JSON value, strict JSON (no NaN, no comments, no leading zeros,
  no raw control characters in strings); what follows the value is not read (FAIL_ON_TRAILING_TOKENS is off), but
  a literal (`null`) followed by a character from '0' up that may continue a Java identifier is an invalid token
  (ReaderBasedJsonParser._matchToken); an empty document fails; a value other than an object or null fails;
- the object: its members bound in order, the last of a duplicate key winning, a key other than the three failing
  the bind (FAIL_ON_UNKNOWN_PROPERTIES);
- topologyId and threadName: a string; a number, true or false as the text written; null; an array or an
  object fails;
- taskId (a primitive int): a number within int's range (one with a fraction or an exponent truncated,
  ACCEPT_FLOAT_AS_INT); a string trimmed as String.trim() trims, "" and "null" being 0, else read by
  Integer/Long.parseLong (a sign, digits of any script) within int's range; null is 0; true, false, an array or an
  object fails.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Final

OWN: Final = "own"  # isOffsetCommittedByThisTopology answers true
OTHER: Final = "other"  # false: the bind failed, or another topology's id
CRASHES: Final = "throws java.lang.NullPointerException"  # the spout's start-up throws

_WHITE = " \t\r\n"
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_JAVA_TRIMMED = "".join(chr(c) for c in range(0x21))  # String.trim(): every character up to U+0020
UNBOUND: Final = object()  # bind(): the bind throws (an IOException, which CommitMetadataManager catches)
_DIGITS_BEYOND_LONG = 20  # a number written with more digits than this is beyond int's range, whatever its value


class _Number(str):
    """A JSON number as written: Jackson coerces one into a String as its text."""

    floating = False


class _Float(_Number):
    """A JSON number with a fraction or an exponent."""

    floating = True


class _Object(list):
    """A JSON object as its (key, value) members in order, duplicates kept: Jackson binds them one after another."""


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: ALLOW_NON_NUMERIC_NUMBERS is off


_DECODER = json.JSONDecoder(object_pairs_hook=_Object, parse_int=_Number, parse_float=_Float, parse_constant=_not_json)


def _java_identifier_part(char: str) -> bool:
    """Character.isJavaIdentifierPart of a Java char: a character beyond U+FFFF is two chars in Java, the first a
    high surrogate, which is not one."""
    code = ord(char)
    if code > 0xFFFF:
        return False
    if code <= 0x08 or 0x0E <= code <= 0x1B or 0x7F <= code <= 0x9F:
        return True  # isIdentifierIgnorable
    category = unicodedata.category(char)
    return category[0] == "L" or category in ("Sc", "Pc", "Nd", "Nl", "Mn", "Mc", "Cf")


def _java_long(text: str) -> int | None:
    """Long.parseLong(text) (Integer.parseInt agrees within int): an optional sign, then decimal digits of any
    script in the Basic Multilingual Plane (Character.digit of each Java char: a character beyond U+FFFF is a
    surrogate pair, no digit); None where it throws."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    values = [unicodedata.decimal(c, None) if ord(c) <= 0xFFFF else None for c in digits]  # Java's chars
    if not values or None in values:
        return None
    number = 0
    for value in values:
        number = number * 10 + value
    number = -number if text[0] == "-" else number
    return number if _LONG_MIN <= number <= _LONG_MAX else None


def _as_int(value):
    if value is None:
        return 0  # FAIL_ON_NULL_FOR_PRIMITIVES is off
    if isinstance(value, _Number):
        if not value.floating and len(value) > _DIGITS_BEYOND_LONG:
            return UNBOUND  # (and Python's int() refuses more than 4,300 digits)
        number = float(value) if value.floating else int(value)
        return int(number) if _INT_MIN <= number <= _INT_MAX else UNBOUND
    if isinstance(value, str):
        text = value.strip(_JAVA_TRIMMED)
        if text in ("", "null"):
            return 0
        number = _java_long(text)
        return number if number is not None and _INT_MIN <= number <= _INT_MAX else UNBOUND
    return UNBOUND


def _as_string(value, max_number_length: int | None = None):
    if isinstance(value, _Number) and max_number_length is not None and len(value.lstrip("-")) > max_number_length:
        return UNBOUND  # StreamReadConstraints (Jackson 2.15+): a number longer than maxNumberLength fails the read
    if value is None or isinstance(value, str):  # a _Number is its text
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return UNBOUND


_PROPERTIES = {"topologyId": _as_string, "taskId": _as_int, "threadName": _as_string}


# Jackson 2.15 and later refuse a number longer than 1,000 characters (StreamReadConstraints.maxNumberLength), even
# one a String property would take as its text; 2.9.4 (storm-kafka-client 1.2.x) takes it. Storm ships 2.15.2 from
# v2.6.0 on (outcomes.metadata_number_limit); 2.8.3's jars carry 2.20 (held to it), 1.2.4's 2.9.4.
MAX_NUMBER_LENGTH = {"2.9": None, "2.20": 1000}


def bind(metadata: str, max_number_length: int | None = None) -> dict | None | object:
    """`new ObjectMapper().readValue(metadata, CommitMetadata.class)`: the bound properties (topologyId, taskId,
    threadName), None for a JSON null document, or UNBOUND where the bind throws. `max_number_length`: the
    Jackson's (MAX_NUMBER_LENGTH), None for none."""
    text = metadata.lstrip(_WHITE)
    try:
        value, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return UNBOUND
    if value is None:
        follows = text[end : end + 1]
        return UNBOUND if follows >= "0" and follows not in "]}" and _java_identifier_part(follows) else None
    if not isinstance(value, _Object):
        return UNBOUND
    bound = {"topologyId": None, "taskId": 0, "threadName": None}
    for key, item in value:
        convert = _PROPERTIES.get(key)
        if convert is None:
            return UNBOUND
        item = convert(item) if convert is _as_int else convert(item, max_number_length)
        if item is UNBOUND:
            return UNBOUND
        bound[key] = item
    return bound


def names_no_topology(bound: dict | None | object) -> bool:
    """Whether metadata bound so (bind) makes isOffsetCommittedByThisTopology's getTopologyId().equals(...) throw
    NullPointerException: a JSON null document, or an object with no (or a null) topologyId."""
    return bound is None or (isinstance(bound, dict) and bound["topologyId"] is None)


def verdict(metadata: str | None, storm_id: str, max_number_length: int | None = None) -> str:
    """isOffsetCommittedByThisTopology's answer for a commit with this metadata (None: none, which kafka-clients
    reads as "") and a spout of this storm id, at start (no offset manager yet): OWN, OTHER or CRASHES."""
    bound = bind(metadata or "", max_number_length)
    if bound is UNBOUND:
        return OTHER
    if names_no_topology(bound):
        return CRASHES
    return OWN if bound["topologyId"] == storm_id else OTHER
