"""Rewriting a storm-kafka or Trident node, pure: only the values of its top-level offset fields change, every
other byte stays as the spout (json-simple) wrote it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from offctl.core.records.model import STORM_KAFKA, STORM_KAFKA_CLIENT, ZkNode

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _top_level(text: str, keys: Iterable[str] = ("offset",)) -> tuple[list[tuple[int, int, str]], int] | None:
    """Spans of the values of every top-level key in `keys` (start, end, key), and the index of the closing
    brace."""
    keys = set(keys)
    i = _WS.match(text, 0).end()
    if text[i : i + 1] != "{":
        return None
    i = _WS.match(text, i + 1).end()
    spans: list[tuple[int, int, str]] = []
    if text[i : i + 1] == "}":
        return spans, i
    while True:
        if text[i : i + 1] != '"':
            return None
        key, i = json.decoder.scanstring(text, i + 1)
        i = _WS.match(text, i).end()
        if text[i : i + 1] != ":":
            return None
        start = _WS.match(text, i + 1).end()
        _, end = _DECODER.raw_decode(text, start)
        if key in keys:
            spans.append((start, end, key))
        i = _WS.match(text, end).end()
        if text[i : i + 1] == ",":
            i = _WS.match(text, i + 1).end()
        elif text[i : i + 1] == "}":
            return spans, i
        else:
            return None


def rewrite_offset(data: bytes, offset: int) -> bytes | None:
    """The node's bytes with only the value of "offset" replaced (added when absent), or None when the
    data is not a UTF-8 JSON object. Every other byte (keys, their order, spacing, escapes) stays."""
    return rewrite_fields(data, {"offset": offset})


def rewrite_fields(data: bytes, values: Mapping[str, int]) -> bytes | None:
    """The node's bytes with only the values of these top-level keys replaced (each added when absent), or
    None when the data is not a UTF-8 JSON object."""
    try:
        text = data.decode("utf-8")
        found = _top_level(text, values)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if found is None or text[found[1] + 1 :].strip(" \t\n\r"):
        return None
    spans, close = found
    missing = [k for k in values if k not in {key for _, _, key in spans}]
    if missing:
        head = text[:close].rstrip(" \t\n\r")
        added = ",".join(f'"{k}":{values[k]}' for k in missing)
        text = head + ("" if head.endswith("{") else ",") + added + text[len(head) :]
    for start, end, key in reversed(spans):  # every duplicate: Storm's parser keeps the last, json.loads too
        text = text[:start] + str(values[key]) + text[end:]
    return text.encode("utf-8")


def rewrite_node(node: ZkNode, offset: int) -> bytes | None:
    """A node that makes its spout resume at `offset`. storm-kafka: `offset`. Trident storm-kafka: the
    batch [offset, nextOffset) made empty at the target (TridentKafkaEmitter resumes at nextOffset).
    Trident storm-kafka-client: lastOffset = target - 1 (KafkaTridentSpoutEmitter seeks lastOffset + 1) and
    firstOffset = target, an empty batch, so a transactional re-emit emits nothing either."""
    if node.trident == STORM_KAFKA:
        return rewrite_fields(node.data, {"offset": offset, "nextOffset": offset})
    if node.trident == STORM_KAFKA_CLIENT:
        return rewrite_fields(node.data, {"firstOffset": offset, "lastOffset": offset - 1})
    return rewrite_offset(node.data, offset)
