"""Reading objects that may not match their schema.

The checks run on objects exactly as written, also when the schema check has already found a
wrong type: every accessor returns an empty value of the expected type instead, so a check
never fails on input it was not meant for (the schema finding says what is wrong there).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_INT32", "among", "as_int", "as_list", "as_map", "as_str", "is_set"]

MAX_INT32 = 2**31 - 1


def as_map(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def as_list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def as_str(value: Any) -> str:
    return value if type(value) is str else ""


def among(value: Any, options: Any) -> bool:
    """``value in options`` for a value read as written: a list or a mapping where a string
    belongs (unhashable) is in no set of names (the schema check says what it is)."""
    try:
        return value in options
    except TypeError:
        return False


def as_int(value: Any) -> int | None:
    """An integer field's value; ``None`` when absent or not an integer (the schema says so)."""
    return value if type(value) is int else None


def is_set(mapping: dict[str, Any], key: str) -> bool:
    """Whether ``key`` is given a value (JSON ``null`` counts as absent, as it does in Go)."""
    return mapping.get(key) is not None
