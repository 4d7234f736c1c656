"""Keyed lists, as server-side apply reads them: the items of a list with
``x-kubernetes-list-type: map`` are unique by their ``x-kubernetes-list-map-keys`` (two env vars
named ``DUP``, two volumes ``data``, two ports 8080/TCP), and a ``set`` holds no value twice.
The server refuses such an object before it validates it ("duplicate entries for key").

The plan of which lists to look at is read from the Kubernetes schemas once per definition and
version, so every built-in kind is covered without listing its keyed lists here. The same plan
marks where an object embeds an ObjectMeta (a pod template's, a claim template's), whose times
the same walk checks for the caller who asks (:func:`check_keyed_lists`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .. import schemas as k8s
from .field import Errors, Path, quote
from .meta import validate_meta_times

__all__ = ["check_keyed_lists"]

#: Keys the server defaults before it compares items (SetDefaults_ContainerPort, ...).
_KEY_DEFAULTS = {"protocol": "TCP"}
#: The definition of the metadata every object and template has.
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@dataclass
class _Node:
    """Where keyed lists sit below one schema node."""

    properties: dict[str, _Node] = field(default_factory=dict)
    items: _Node | None = None
    values: _Node | None = None  # additionalProperties (a map of objects)
    map_keys: tuple[str, ...] = ()
    is_set: bool = False
    meta: bool = False  # an ObjectMeta

    @property
    def empty(self) -> bool:
        return not (
            self.properties
            or self.items
            or self.values
            or self.map_keys
            or self.is_set
            or self.meta
        )


def _resolve(defs: dict[str, Any], schema: Any) -> tuple[str | None, dict[str, Any]]:
    if not isinstance(schema, dict):
        return None, {}
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return _resolve(defs, schema["allOf"][0])
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        return name, defs.get(name, {})
    return None, schema


def _build(
    defs: dict[str, Any], schema: Any, building: dict[str, _Node | None], memo: dict[str, _Node]
) -> _Node | None:
    name, schema = _resolve(defs, schema)
    if name is not None:
        if name in memo:
            return memo[name]
        if name in building:
            return None  # a recursive definition: Kubernetes' own types have none worth following
        building[name] = None
    node = _Node(meta=name == _OBJECT_META)
    for key, sub in (schema.get("properties") or {}).items():
        child = _build(defs, sub, building, memo)
        if child is not None and not child.empty:
            node.properties[key] = child
    if "items" in schema:
        item = _build(defs, schema["items"], building, memo)
        node.items = item if item is not None and not item.empty else None
        if schema.get("x-kubernetes-list-type") == "map":
            node.map_keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        node.is_set = schema.get("x-kubernetes-list-type") == "set"
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        values = _build(defs, extra, building, memo)
        node.values = values if values is not None and not values.empty else None
    if name is not None:
        del building[name]
        memo[name] = node
    return node


@cache
def _plan(version: tuple[int, int], definition: str) -> _Node | None:
    defs = k8s.definitions(version)["$defs"]
    if definition not in defs:
        return None
    return _build(defs, {"$ref": f"#/$defs/{definition}"}, {}, {})


def _key(item: dict[str, Any], keys: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(item[k] if item.get(k) is not None else _KEY_DEFAULTS.get(k) for k in keys)


def _scalar_key(ident: Any) -> bool:
    parts = ident if isinstance(ident, tuple) else (ident,)
    return all(p is None or isinstance(p, str | int | float | bool) for p in parts)


def _duplicates(node: _Node, data: list[Any], path: Path, errs: Errors) -> None:
    if node.map_keys:
        seen: dict[Any, int] = {}
        single = node.map_keys[0] if len(node.map_keys) == 1 else None
        for i, item in enumerate(data):
            if item is None:
                # Server-side apply's typed object (structured-merge-diff v6).
                errs.add(
                    path, f"element {i}: associative list with keys may not have a null element"
                )
                continue
            if type(item) is not dict:
                continue
            ident = item.get(single) if single is not None else _key(item, node.map_keys)
            if not _scalar_key(ident):
                continue  # a key of the wrong type ({} for a port): the schema reports it
            if ident is not None and ident in seen:
                idents = ident if single is None else (ident,)
                shown = ", ".join(
                    f"{k}={quote(v)}" for k, v in zip(node.map_keys, idents, strict=True)
                )
                errs.add(path, f"duplicate entries for key {shown}: items {seen[ident]} and {i}")
            elif ident is not None:
                seen[ident] = i
    elif node.is_set:
        first: dict[Any, int] = {}
        for i, item in enumerate(data):
            if isinstance(item, str | int | float | bool):
                if item in first:
                    errs.add(path, f"duplicate entries for value {quote(item)}: items "
                                   f"{first[item]} and {i}")  # fmt: skip
                first.setdefault(item, i)


def _walk(node: _Node, data: Any, path: Path, errs: Errors, times: int) -> None:
    """The keyed lists below ``node``, and the times of each ObjectMeta ``times`` levels or
    more below the start (-1: none)."""
    if type(data) is dict:
        if node.meta and 0 <= times <= len(path):
            validate_meta_times(errs, data, path)
        for key, child in node.properties.items():
            value = data.get(key)
            if value is not None:
                _walk(child, value, (*path, key), errs, times)
        if node.values is not None:
            for key, value in data.items():
                _walk(node.values, value, (*path, key), errs, times)
    elif type(data) is list:
        if data:
            _duplicates(node, data, path, errs)
        if node.items is not None:
            for i, item in enumerate(data):
                _walk(node.items, item, (*path, i), errs, times)


def check_keyed_lists(
    errs: Errors, definition: str, data: Any, path: Path = (), *, template_times: bool = False
) -> None:
    """Report every keyed list of ``data`` (an instance of Kubernetes ``definition``) whose
    items repeat a key; with ``template_times``, also the times of every ObjectMeta the
    object embeds below its own (``validate_meta_times``: a pod template's, a claim
    template's, a CronJob's job template's are decoded with the object)."""
    plan = _plan(errs.version, definition)
    if plan is not None:
        _walk(plan, data, path, errs, len(path) + 2 if template_times else -1)
