"""Frozen dataclasses built from the plain dicts the native module returns (the C++ library's JSON keys).

A field is filled from the key of its name; a dataclass-typed field from a nested dict, a ``Tuple[X, ...]``
field from a list (of dicts when X is a dataclass), an enum-typed field from its value; a value that already is
the field's dataclass is kept. Keys the class does not name are ignored, as the C++ reader ignores them, and
absent keys keep the field's default.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from typing import Any, Dict, Mapping, Type, TypeVar

T = TypeVar("T")

_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _convert(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    if typing.get_origin(kind) is typing.Union:  # Optional[X]
        kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
    if typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_convert(item, element) for element in value)
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return value if isinstance(value, kind) else from_dict(kind, value)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(value)
    return value


def from_dict(cls: Type[T], data: Mapping[str, Any]) -> T:
    """An instance of dataclass ``cls`` from ``data`` (see the module's docstring)."""
    hints = _hints(cls)
    values = {
        field.name: _convert(hints[field.name], data[field.name])
        for field in dataclasses.fields(cls)  # type: ignore[arg-type]
        if field.init and field.name in data
    }
    return cls(**values)
