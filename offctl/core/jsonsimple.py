"""json-simple 1.1's reading of JSON, which storm-kafka uses for its partition records (ZkState.readJSON ->
JSONValue.parse). No Python library reads JSON the way it does, so this is that reading, from its lexer
(doc/json.lex) and JSONParser.parse, both at json-simple 1.1 (the version Storm's pom pins):

- the lexer: INT `-?[0-9]+` (leading zeros allowed, a Long: Long.valueOf fails the whole parse beyond a Java
  long), DOUBLE `INT((\\.[0-9]+)?([eE][-+]?[0-9]+)?)`, strings of any character but `"` and `\\` (raw control
  characters included) with the escapes \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX, true, false, null, { } [ ] , :,
  whitespace [ \\t\\r\\n]; anything else ends the parse (no NaN, no Infinity);
- the parser: commas are skipped inside objects and arrays (`[1,,2]`, `[1 2]`, `{,"a":1,}`), colons are
  skipped after a key (`{"a"::1}`, `{"a" 1}`), a colon where a key belongs is an error, keys are strings,
  the last of duplicate keys wins, and the top-level value must end the text.

`loads` returns the value, or raises ValueError where json-simple's parse fails (JSONValue.parse then
returns null, and PartitionManager starts the partition as if it had no record).
"""

from __future__ import annotations

import re

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>-?[0-9]+(?P<frac>(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?))
  | (?P<str>"(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")
  | (?P<lit>true|false|null)
  | (?P<punct>[{}\[\],:])
""", re.VERBOSE)
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"true": True, "false": False, "null": None}
VALUE, EOF = "value", "eof"


_SURROGATES = re.compile("[\ud800-\udfff]")


def _unescape(body: str) -> str:
    text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else _SIMPLE[m.group(2)], body)
    if _SURROGATES.search(text):
        # Java strings are UTF-16: a \ud83d\ude00 pair is one character; a lone half stays as it is.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def _tokens(text: str):
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"json-simple cannot read the character at {pos}")
        pos = m.end()
        if m.group("ws"):
            continue
        if m.group("num") is not None:
            if m.group("frac"):
                yield VALUE, float(m.group("num"))  # Double.valueOf
            else:
                value = int(m.group("num"))
                if not _LONG_MIN <= value <= _LONG_MAX:
                    raise ValueError(f"integer {m.group('num')[:24]} does not fit a Java long")
                yield VALUE, value
        elif m.group("str") is not None:
            yield VALUE, _unescape(m.group("str")[1:-1])
        elif m.group("lit") is not None:
            yield VALUE, _LITERALS[m.group("lit")]
        else:
            yield m.group("punct"), None
    yield EOF, None


def loads(text: str) -> object:
    """The value json-simple 1.1's JSONParser.parse reads from `text`; ValueError where it fails."""
    stack: list[object] = []  # open containers; a str on top of a dict is a key waiting for its value
    done = False
    result: object = None
    for kind, value in _tokens(text):
        if done:
            if kind != EOF:
                raise ValueError("text after the value")
            return result
        if kind == EOF:
            raise ValueError("the text ends inside a value")
        top = stack[-1] if stack else None
        if isinstance(top, str):  # S_PASSED_PAIR_KEY
            if kind == ":":
                continue
            if kind not in (VALUE, "{", "["):
                raise ValueError(f"unexpected {kind!r} after a key")
            stack.pop()
            new = {} if kind == "{" else [] if kind == "[" else value
            stack[-1][top] = new
            if kind != VALUE:
                stack.append(new)
            continue
        if isinstance(top, dict):  # S_IN_OBJECT
            if kind == ",":
                continue
            if kind == VALUE and isinstance(value, str):
                stack.append(value)
                continue
            if kind != "}":
                raise ValueError(f"unexpected {kind!r} in an object")
        elif isinstance(top, list):  # S_IN_ARRAY
            if kind == ",":
                continue
            if kind in (VALUE, "{", "["):
                new = {} if kind == "{" else [] if kind == "[" else value
                top.append(new)
                if kind != VALUE:
                    stack.append(new)
                continue
            if kind != "]":
                raise ValueError(f"unexpected {kind!r} in an array")
        else:  # S_INIT
            if kind == VALUE:
                result, done = value, True
            elif kind in ("{", "["):
                result = {} if kind == "{" else []
                stack.append(result)
            else:
                raise ValueError(f"unexpected {kind!r} at the start")
            continue
        stack.pop()  # a closing } or ]
        if not stack:
            done = True
    if done:
        return result
    raise ValueError("the text ends inside a value")
