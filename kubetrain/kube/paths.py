"""Field paths of Kubernetes objects, written the way people read them.

A path is dotted (``spec.template.spec``); a list item is named by its ``name`` key when every
item of the list has one, as strategic merge and server-side apply key them
(``spec.containers[trainer].env``), and by its index otherwise (``spec.tolerations[0]``). These
are the paths ``kubetrain plan`` prints and the apiserver corpus records.

Comparisons follow ``apiequality.Semantic.DeepEqual`` of the API machinery on the decoded Go
structs: a field that is absent, ``null``, an empty list or map, an empty string or ``false``
decodes to the zero value, so those compare equal.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["differences", "first_difference", "is_zero", "leaves", "semantic_equal"]


def is_zero(value: Any) -> bool:
    """Whether ``value`` decodes to a Go zero value that omitempty drops (``0`` is not counted:
    most integers kubetrain writes are pointers, where 0 and nil differ)."""
    return value is None or value is False or value == "" or value == [] or value == {}


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    """``items`` by their ``name`` when every item is a mapping with a distinct string name."""
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            return None
        if item["name"] in out:
            return None
        out[item["name"]] = item
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar (and empty collection) of ``value`` with its path."""
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from leaves(item, _join(path, str(key)))
    elif isinstance(value, list) and value:
        keyed = _keyed(value)
        pairs = keyed.items() if keyed is not None else ((str(i), v) for i, v in enumerate(value))
        for key, item in pairs:
            yield from leaves(item, f"{path}[{key}]")
    else:
        yield path, value


def differences(before: Any, after: Any, path: str = "") -> Iterator[str]:
    """Paths where ``before`` and ``after`` differ, shallowest first within each branch."""
    if is_zero(before) and is_zero(after):
        return
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in sorted(set(before) | set(after)):
            yield from differences(before.get(key), after.get(key), _join(path, str(key)))
        return
    if isinstance(before, list) and isinstance(after, list):
        old, new = _keyed(before), _keyed(after)
        if old is not None and new is not None:
            if list(old) != list(new):
                # Items added, removed or reordered: the list itself changed.
                yield path or "."
                return
            for key in old:
                yield from differences(old[key], new[key], f"{path}[{key}]")
            return
        if len(before) != len(after):
            yield path or "."
            return
        for i, (a, b) in enumerate(zip(before, after, strict=True)):
            yield from differences(a, b, f"{path}[{i}]")
        return
    if before != after or type(before) is not type(after):
        yield path or "."


def first_difference(before: Any, after: Any, path: str = "") -> str | None:
    """The first path where ``before`` and ``after`` differ, or ``None`` if they are equal."""
    return next(differences(before, after, path), None)


def semantic_equal(before: Any, after: Any) -> bool:
    """Whether ``before`` and ``after`` decode to the same Go value (see the module docstring)."""
    return first_difference(before, after) is None
