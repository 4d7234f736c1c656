"""The custom-resource walk's shortcuts find what the whole walk finds.

``kubetrain.kube.apiextensions.validation`` skips a value whose type its node accepts with
nothing else to check (``Node.accepts``), walks an object or a list of a node without enum or
junctors at once (``Node.simple``), and tells list-map keys and set items apart by their type
and value instead of their JSON text. Each is checked here against the walk without it, on the
schemas of the real CRDs and on values drawn from them, wrong ones included.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.kube.apiextensions.definition import crd_versions
from kubetrain.kube.apiextensions.schema import Node, compile_schema
from kubetrain.kube.apiextensions.validation import _scalars_key, validate_value

from conftest import UPSTREAM_CRDS, needs_upstream_crds


def _whole_walk(node: Node, seen: dict[int, Node] | None = None) -> Node:
    """A copy of ``node``'s tree in which no shortcut applies."""
    seen = {} if seen is None else seen
    if id(node) in seen:
        return seen[id(node)]
    twin = seen[id(node)] = copy.copy(node)
    twin.accepts, twin.int_range, twin.simple = (), None, False
    twin.properties = {k: _whole_walk(v, seen) for k, v in node.properties.items()}
    for name in ("additional", "items", "not_"):
        child = getattr(node, name)
        setattr(twin, name, None if child is None else _whole_walk(child, seen))
    for name in ("all_of", "any_of", "one_of"):
        setattr(twin, name, [_whole_walk(c, seen) for c in getattr(node, name)])
    return twin


def _roots() -> Iterator[Node]:
    for path in sorted(UPSTREAM_CRDS.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                for version in crd_versions(doc):
                    yield version.node


#: A schema of every scalar shortcut and its limits, under junctors too.
_SCALARS = compile_schema(
    {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "e": {"type": "string", "enum": ["a", "b"]},
            "p": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
            "f": {"type": "string", "format": "date"},
            "i": {"type": "integer"},
            "i32": {"type": "integer", "format": "int32"},
            "i64": {"type": "integer", "format": "int64", "minimum": 0},
            "u": {"type": "integer", "format": "uint32"},
            "n": {"type": "number", "format": "double"},
            "n32": {"type": "number", "format": "int32"},
            "b": {"type": "boolean"},
            "q": {"x-kubernetes-int-or-string": True},
            "q32": {"x-kubernetes-int-or-string": True, "format": "int32"},
            "qp": {"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+$"},
            "ns": {"type": "string", "nullable": True},
            "l": {"type": "array", "items": {"type": "integer", "format": "int32"}},
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {}},
            "m": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k", "j"],
                "items": {
                    "type": "object",
                    "properties": {"k": {"type": "string"}, "j": {"type": "integer"}},
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
            "o": {"type": "object", "additionalProperties": {"type": "string"}},
            "j": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "string"}},
                "anyOf": [{"properties": {"x": {"maximum": 3}}}, {"required": ["y"]}],
                "allOf": [{"properties": {"y": {"maxLength": 2}}}],
            },
        },
    }
)

_SCALAR_VALUES = [
    None, True, False, 0, 1, -1, 2**31 - 1, 2**31, -(2**31) - 1, 2**63, 2**64, 1.0, 1.5,
    -0.0, float("inf"), "", "a", "abcd", "1", "2024-01-01", "1Gi", [], {},
]  # fmt: skip


def _names(node: Node) -> list[str]:
    return sorted(node.properties) or ["x"]


def _value(node: Node | None, depth: int = 0) -> st.SearchStrategy[Any]:
    """Mostly a value of the node's shape, sometimes anything."""
    junk = st.sampled_from(_SCALAR_VALUES)
    if node is None or depth > 6:
        return junk
    shaped: st.SearchStrategy[Any]
    if node.properties or node.additional is not None:
        keys = st.sampled_from([*_names(node), "unknown"])
        shaped = st.dictionaries(keys, st.deferred(lambda: _child(node, depth)), max_size=4)
    elif node.items is not None:
        shaped = st.lists(st.deferred(lambda: _value(node.items, depth + 1)), max_size=3)
    else:
        shaped = junk
    return st.one_of(shaped, shaped, shaped, junk)


def _child(node: Node, depth: int) -> st.SearchStrategy[Any]:
    children = [*node.properties.values(), *([node.additional] if node.additional else [])]
    return st.one_of([_value(c, depth + 1) for c in children[:12]])


def _issues(node: Node, value: Any) -> list[tuple[Any, str]]:
    return [(i.path, i.message) for i in validate_value(node, value)]


def test_a_schema_of_every_shortcut_finds_what_the_whole_walk_finds() -> None:
    whole = _whole_walk(_SCALARS)
    checked = 0
    for key in _SCALARS.properties:
        for value in _SCALAR_VALUES:
            obj = {key: value}
            assert _issues(_SCALARS, obj) == _issues(whole, obj), obj
            checked += 1
    assert checked == len(_SCALARS.properties) * len(_SCALAR_VALUES)
    # The shortcuts are taken: a plain string, a boolean, an int32 within range.
    assert _SCALARS.properties["s"].accepts == (str,)
    assert _SCALARS.properties["i32"].int_range == (-(2**31), 2**31 - 1)
    assert _SCALARS.properties["p"].accepts == () and _SCALARS.properties["e"].accepts == ()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_drawn_values_of_the_shortcut_schema(data: st.DataObject) -> None:
    value = data.draw(_value(_SCALARS), label="value")
    assert _issues(_SCALARS, value) == _issues(_whole_walk(_SCALARS), value)


_ROOTS = list(_roots()) if UPSTREAM_CRDS.is_dir() else []


@needs_upstream_crds
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_real_crds_find_what_the_whole_walk_finds(data: st.DataObject) -> None:
    assert len(_ROOTS) > 20
    root = data.draw(st.sampled_from(_ROOTS), label="crd")
    value = data.draw(_value(root), label="value")
    assert _issues(root, value) == _issues(_whole_walk(root), value)


_KEY_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([0.0, 1.0, 1.5, "", "1", "a"]),
    st.lists(st.integers(0, 1), max_size=2), st.dictionaries(st.sampled_from("ab"), st.integers(0, 1)),
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from("kj"), _KEY_VALUES),
    st.dictionaries(st.sampled_from("kj"), _KEY_VALUES),
)
def test_list_map_keys_are_equal_when_their_json_is(a: dict[str, Any], b: dict[str, Any]) -> None:
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert (_scalars_key(a) == _scalars_key(b)) == same


@pytest.mark.parametrize(
    ("items", "duplicates"),
    [([1, True, 1.0, "1"], 0), ([1, 1], 1), ([None, None], 1), ([{"a": 1}, {"a": 1}], 1)],
)
def test_set_items_are_duplicates_when_their_json_is(items: list[Any], duplicates: int) -> None:
    node = _SCALARS.properties["set"]
    found = [i for i in validate_value(node, items) if i.message.startswith("Duplicate value")]
    assert len(found) == duplicates
