"""offctl.core.records.frozen: a builder makes what the frozen dataclass's own constructor makes."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offctl.core.records.frozen import builder
from offctl.core.records.model import ConsumerKey, Finding, OffsetRecord, PartitionRow, ZkNode

values = st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.tuples(st.text(max_size=3))


def _check(cls, args: list, kwargs: dict) -> None:
    made, built = cls(*args, **kwargs), builder(cls)(*args, **kwargs)
    assert type(built) is cls
    assert repr(built) == repr(made) and built == made and hash(built) == hash(made)
    assert pickle.loads(pickle.dumps(built)) == made
    assert dataclasses.replace(built) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, dataclasses.fields(cls)[-1].name, 1)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_built_records_and_nodes_are_what_their_constructors_make(data):
    for cls in (OffsetRecord, ZkNode, Finding, PartitionRow):
        names = [f.name for f in dataclasses.fields(cls)]
        required = sum(f.default is dataclasses.MISSING for f in dataclasses.fields(cls))
        n = data.draw(st.integers(required, len(names)))  # positional, then some of the rest by keyword
        args = data.draw(st.lists(values, min_size=n, max_size=n))
        rest = data.draw(st.dictionaries(st.sampled_from(names[n:]), values)) if n < len(names) else {}
        _check(cls, args, rest)


def test_a_record_built_as_the_parser_builds_it():
    _check(
        OffsetRecord,
        [ConsumerKey("zookeeper", "s", "/r"), 3, "t", 41],
        {"path": "/r/s/partition_3", "inconsistent": ("x",), "malformed": None},
    )


def test_a_builder_refuses_what_it_cannot_copy():
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        a: list = dataclasses.field(default_factory=list)

    for cls in (NoSlots, Factory):
        with pytest.raises(TypeError):
            builder(cls)
    with pytest.raises(TypeError):
        builder(ZkNode)(1, 2)  # missing arguments fail as the constructor's do
