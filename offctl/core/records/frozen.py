"""Cheaper construction of the frozen, slotted dataclasses made once per partition (ZkNode, OffsetRecord).

A frozen dataclass's __init__ sets every field through object.__setattr__ (its own __setattr__ refuses), about
0.1 us a field: 2 us for OffsetRecord's 19 fields, four times orjson's parse of the node's JSON. `builder` gives
a function that fills an instance of an unfrozen twin dataclass (same fields, defaults and slots) with plain slot
stores, then makes it an instance of the frozen class: __class__ assignment, which Python allows between two
classes of the same slot layout. What it returns is an instance of the frozen class in every respect (type,
fields, equality, hash, repr, pickling; assignment raises FrozenInstanceError): tests/unit/test_frozen.py holds each
builder to the class's own constructor.
"""

from __future__ import annotations

from dataclasses import MISSING, field, fields, make_dataclass
from typing import Callable, TypeVar

T = TypeVar("T")


def builder(cls: type[T]) -> Callable[..., T]:
    """A function taking the arguments cls(...) takes and returning what it returns, built faster."""
    spec = []
    for f in fields(cls):  # type: ignore[arg-type]
        if f.default_factory is not MISSING or not f.init:
            raise TypeError(f"{cls.__name__}.{f.name}: builder copies plain fields and defaults only")
        spec.append((f.name, f.type) if f.default is MISSING else (f.name, f.type, field(default=f.default)))
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which builder would skip")

    def __post_init__(self) -> None:
        self.__class__ = cls  # the last step of the twin's __init__: from here on it is a frozen cls

    twin = make_dataclass(
        f"_Building{cls.__name__}", spec, namespace={"__post_init__": __post_init__}, slots=True, eq=False, repr=False
    )
    if twin.__slots__ != cls.__dict__.get("__slots__"):  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__} is not a slotted dataclass of plain fields")
    return twin
