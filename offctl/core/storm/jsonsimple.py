"""json-simple 1.1's reading of JSON, which storm-kafka uses for its partition records (ZkState.readJSON ->
JSONValue.parse). No Python library reads JSON the way it does, so this is that reading, from its lexer
(doc/json.lex) and JSONParser.parse, both at json-simple 1.1 (the version Storm's pom pins):

- the lexer: INT `-?[0-9]+` (leading zeros allowed, a Long: Long.valueOf fails the whole parse beyond a Java
  long), DOUBLE `INT((\\.[0-9]+)?([eE][-+]?[0-9]+)?)`, strings of any character but `"` and `\\` (raw control
  characters included) with the escapes \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX, and a backslash before anything
  else is itself (its last STRING_BEGIN rule, `\\\\ {sb.append('\\\\');}`: `"\\x"` is backslash, x), each the
  longest match with no going back (a DFA: `"a\\"` has no end), and a string the text ends inside is the end of
  the text (the lexer returns end of input in its string state: `{"a":1} "x` is `{"a":1}`), true, false, null,
  { } [ ] , :,
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
OVERFLOW = "does not fit a Java long"  # in the error of an integer token Long.valueOf refuses: NumberFormatException

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<num>-?[0-9]+(?P<frac>(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?))
  | (?P<str>"(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}|\\)*+")
  | (?P<lit>true|false|null)
  | (?P<punct>[{}\[\],:])
""",
    re.VERBOSE,
)
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))?')  # no escape after it: a backslash
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"true": True, "false": False, "null": None}
VALUE, EOF = "value", "eof"


_SURROGATES = re.compile("[\ud800-\udfff]")


def _unescape(body: str) -> str:
    text = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else _SIMPLE.get(m.group(2), "\\"), body)
    if _SURROGATES.search(text):
        # Java strings are UTF-16: a \ud83d\ude00 pair is one character; a lone half stays as it is.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def _tokens(text: str):
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None and text[pos] == '"':
            break  # a string the text ends inside: JFlex's end of input in STRING_BEGIN, the end of the tokens
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
                    raise ValueError(f"integer {m.group('num')[:24]} {OVERFLOW}")
                yield VALUE, value
        elif m.group("str") is not None:
            yield VALUE, _unescape(m.group("str")[1:-1])
        elif m.group("lit") is not None:
            yield VALUE, _LITERALS[m.group("lit")]
        else:
            yield m.group("punct"), None
    yield EOF, None


def _opened(kind: str, value: object) -> object:
    """The value a token gives: a new container for `{` or `[`, else the token's own value."""
    return {} if kind == "{" else [] if kind == "[" else value


def _after_key(stack: list[object], kind: str, value: object) -> None:
    """S_PASSED_PAIR_KEY: skip a colon, else set the key on top of `stack` to the value that follows it."""
    if kind == ":":
        return
    if kind not in (VALUE, "{", "["):
        raise ValueError(f"unexpected {kind!r} after a key")
    key = stack.pop()
    new = _opened(kind, value)
    stack[-1][key] = new
    if kind != VALUE:
        stack.append(new)


def _in_object(stack: list[object], kind: str, value: object) -> bool:
    """S_IN_OBJECT: skip a comma, push a string as the next key; True for the `}` that closes the object."""
    if kind == ",":
        return False
    if kind == VALUE and isinstance(value, str):
        stack.append(value)
        return False
    if kind != "}":
        raise ValueError(f"unexpected {kind!r} in an object")
    return True


def _in_array(stack: list[object], kind: str, value: object) -> bool:
    """S_IN_ARRAY: skip a comma, append a value (opening a container); True for the `]` that closes the array."""
    if kind == ",":
        return False
    if kind in (VALUE, "{", "["):
        new = _opened(kind, value)
        stack[-1].append(new)
        if kind != VALUE:
            stack.append(new)
        return False
    if kind != "]":
        raise ValueError(f"unexpected {kind!r} in an array")
    return True


def _inside(stack: list[object], kind: str, value: object) -> bool:
    """One token read inside the open containers of `stack`; True when it closes the outermost one."""
    top = stack[-1]
    if isinstance(top, str):  # S_PASSED_PAIR_KEY
        _after_key(stack, kind, value)
        return False
    closes = _in_object(stack, kind, value) if isinstance(top, dict) else _in_array(stack, kind, value)
    if not closes:
        return False
    stack.pop()  # a closing } or ]
    return not stack


def _start(stack: list[object], kind: str, value: object) -> tuple[object, bool]:
    """S_INIT: the top-level value, and whether it is already whole (a scalar) or opened on `stack`."""
    if kind == VALUE:
        return value, True
    if kind in ("{", "["):
        result = _opened(kind, value)
        stack.append(result)
        return result, False
    raise ValueError(f"unexpected {kind!r} at the start")


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
        if stack:
            done = _inside(stack, kind, value)
        else:
            result, done = _start(stack, kind, value)
    if done:
        return result
    raise ValueError("the text ends inside a value")


# JSONValue.escape (json-simple 1.1): these, and \\uXXXX (upper-case hex) for U+0000-001F, U+007F-009F, U+2000-20FF
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "/": "\\/",
}


def dumps_string(text: str) -> str:
    """A string as json-simple 1.1's JSONValue.toJSONString writes it (JSONValue.escape), quotes included: what
    storm-kafka's and JStorm's ZkState.writeJSON write."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch <= "\x1f" or "\x7f" <= ch <= "\x9f" or "\u2000" <= ch <= "\u20ff":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
