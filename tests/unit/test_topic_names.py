"""Kafka's topic name rules (Topic.validate, apache/kafka clients/src/main/java/org/apache/kafka/common/internals/
Topic.java), on plain data: what the Kafka adapter never sends, what --topic refuses, what cannot be a folder."""

from __future__ import annotations

import pytest

from offctl.core.plans.targets import parse_topics
from offctl.core.records.model import is_topic_name
from offctl.errors import UsageError


@pytest.mark.parametrize(
    "name, legal",
    [
        ("orders", True),
        ("a.b_c-D9", True),
        ("...", True),  # only "." and ".." are refused among dots
        (".hidden", True),
        ("x" * 249, True),
        ("", False),
        (".", False),
        ("..", False),
        ("x" * 250, False),
        ("bad topic", False),
        ("a\0b", False),
        ("\0", False),
        ("orders\n", False),
        ("t\u00e9", False),  # ASCII letters only
        ("a/b", False),
        ("orders:0", False),
    ],
)
def test_is_topic_name(name, legal):
    assert is_topic_name(name) is legal


@pytest.mark.parametrize("value", [".", "..", "bad topic", "x" * 250])
def test_topic_option_refuses_names_kafka_cannot_have(value):
    with pytest.raises(UsageError, match="a topic name is 1-249"):
        parse_topics([value])
