"""Whether a CRD version's ``openAPIV3Schema`` is a structural schema the API server accepts.

Mirrors ``k8s.io/apiextensions-apiserver/pkg/apiserver/schema`` ``ValidateStructural`` (every
node typed, or int-or-string, or keeping unknown fields; nothing but value validations inside
``allOf``/``anyOf``/``oneOf``/``not``; ``metadata`` restricting only name and generateName) and
the parts of ``pkg/apis/apiextensions/validation`` ``ValidateCustomResourceDefinitionOpenAPISchema``
that concern single nodes: keywords v1 forbids, ``additionalProperties`` beside ``properties``,
list map keys that are required or defaulted, enum values of the node's type, and defaults
that validate against their node (``validateStructuralDefaults``: pruned and validated like an
object would be).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from .schema import compile_schema
from .validation import validate_value

__all__ = ["ALLOWED_KEYS", "enum_type", "structural_problems"]

_INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]

#: Keys a structural schema node may carry (``JSONSchemaProps`` minus what v1 CRDs forbid).
ALLOWED_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "default",
        "enum",
        "example",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "nullable",
        "externalDocs",
        "uniqueItems",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)

_FORBIDDEN = (
    "$ref",
    "$schema",
    "definitions",
    "dependencies",
    "id",
    "additionalItems",
    "patternProperties",
)
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
_NOT_IN_JUNCTORS = ("type", "description", "default", "additionalProperties", "nullable")


def structural_problems(schema: Mapping[str, Any]) -> list[str]:
    """Ways ``schema`` breaks the rules of a structural CRD schema (empty when it is one)."""
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append("(root): must be of type object")
    metadata = (schema.get("properties") or {}).get("metadata")
    if isinstance(metadata, Mapping):
        extra = set(metadata.get("properties") or {}) - {"name", "generateName"}
        if extra or set(metadata) - {"type", "description", "properties"}:
            problems.append("metadata: only restrictions of name and generateName are allowed")
    for path, node, in_junctor in _walk(schema, "(root)", False):
        problems.extend(_node_problems(path, node, in_junctor))
    return problems


def _walk(
    node: Mapping[str, Any], path: str, in_junctor: bool
) -> Iterator[tuple[str, Mapping[str, Any], bool]]:
    yield path, node, in_junctor
    for key, child in (node.get("properties") or {}).items():
        yield from _walk(child, f"{path}.{key}", in_junctor)
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from _walk(node["additionalProperties"], f"{path}.*", in_junctor)
    if isinstance(node.get("items"), Mapping):
        yield from _walk(node["items"], f"{path}[]", in_junctor)
    for junctor in _JUNCTORS:
        branches = node.get(junctor)
        for i, branch in enumerate(branches if isinstance(branches, list) else [branches]):
            if isinstance(branch, Mapping):
                yield from _walk(branch, f"{path}.{junctor}[{i}]", True)


def _node_problems(path: str, node: Mapping[str, Any], in_junctor: bool) -> Iterator[str]:
    unknown = sorted(set(node) - ALLOWED_KEYS - set(_FORBIDDEN))
    for key in unknown:
        yield f"{path}: {key!r} is not allowed in a CRD schema"
    for key in _FORBIDDEN:
        if key in node:
            yield f"{path}: {key!r} is not allowed in a structural schema"
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    if in_junctor:
        for key in _NOT_IN_JUNCTORS:
            if key in node and not (key == "type" and node == {"type": node["type"]}):
                yield f"{path}: {key!r} must not be set inside allOf/anyOf/oneOf/not"
    elif not (
        node.get("type") or int_or_string or node.get("x-kubernetes-preserve-unknown-fields")
    ):
        yield f"{path}: has no type"
    if int_or_string:
        if "type" in node:
            yield f"{path}: an int-or-string node must not have a type"
        if "anyOf" in node and node["anyOf"] != _INT_OR_STRING_ANYOF:
            yield f"{path}: an int-or-string node's anyOf must be [integer, string]"
    elif any(j in node for j in _JUNCTORS) and not in_junctor:
        branches = [b for j in ("allOf", "anyOf", "oneOf") for b in node.get(j) or ()]
        for branch in branches:
            if isinstance(branch, Mapping) and set(branch) & {"properties", "items"}:
                yield f"{path}: fields inside a junctor must also be specified outside it"
    if "properties" in node and node.get("additionalProperties") not in (None, False):
        yield f"{path}: properties and additionalProperties are mutually exclusive"
    if node.get("additionalProperties") is False:
        yield f"{path}: additionalProperties must not be false (unknown fields are pruned)"
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        yield f"{path}: x-kubernetes-preserve-unknown-fields must be true or absent"
    if node.get("uniqueItems") is True:
        yield f"{path}: uniqueItems must not be true"
    if "enum" in node and node.get("type") and node["enum"]:
        expected = enum_type(list(node["enum"]))
        if expected not in (node["type"], "integer" if node["type"] == "number" else None):
            yield f"{path}: enum values are not of type {node['type']}"
    if node.get("x-kubernetes-list-type") == "map":
        item = node.get("items") or {}
        item_props = item.get("properties") or {}
        for key in node.get("x-kubernetes-list-map-keys") or ():
            if key not in item_props:
                yield f"{path}: list map key {key!r} is not a property of the items"
            elif key not in (item.get("required") or ()) and "default" not in item_props[key]:
                yield f"{path}: list map key {key!r} must be required or have a default"
    if "default" in node:
        yield from _default_problems(path, node)


def enum_type(values: list[Any]) -> str:
    """The one JSON type of an enum's values (``mixed`` when they differ)."""
    kinds = {
        "boolean"
        if isinstance(v, bool)
        else "integer"
        if isinstance(v, int)
        else "number"
        if isinstance(v, float)
        else "string"
        for v in values
    }
    return kinds.pop() if len(kinds) == 1 else "mixed"


def _default_problems(path: str, node: Mapping[str, Any]) -> Iterator[str]:
    """A default must be valid where it stands (it is applied before validation)."""
    try:
        compiled = compile_schema({k: v for k, v in node.items() if k != "default"})
    except ValueError:
        return  # reported with the pattern or rule itself
    for issue in validate_value(compiled, node["default"]):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in issue.path)
        yield (
            f"{path}: default {json.dumps(node['default'])} does not match the schema"
            f" ({where.lstrip('.') or 'value'}: {issue.message})"
        )
        return
