"""The fields of every kind kubetrain reads, as a tree: job kinds (from the models' JSON
schemas) and Kubernetes' own kinds (from its schemas), one walker for both.

``kubetrain explain`` prints a node's documentation; strategic merge patches ask a list node for
its merge key (``x-kubernetes-patch-merge-key``: containers merge by ``name``), so a job's
embedded pod template is patched as Kubernetes patches a Deployment's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..kube import schemas as k8s
from .base import job_kinds
from .editor import kind_definitions

__all__ = ["FieldNode", "kind_node"]

_REF = "#/$defs/"


def _short(ref: str) -> str:
    """``#/$defs/io.k8s.api.core.v1.PodSpec`` -> ``PodSpec``; pydantic's module-qualified
    names (``kubetrain__models__tfjob__ReplicaSpec``) -> ``ReplicaSpec``."""
    name = ref.removeprefix(_REF)
    return name.rsplit("__", 1)[-1].rsplit(".", 1)[-1]


@dataclass(frozen=True)
class FieldNode:
    """One place in a kind's schema: the node as written (``raw``, maybe a ``$ref``) and the
    definitions it refers to."""

    raw: Mapping[str, Any]
    defs: Mapping[str, Any]

    @property
    def schema(self) -> Mapping[str, Any]:
        """The node with references followed and ``Optional`` unwrapped; the outer node's
        description wins over the referenced definition's."""
        node: Mapping[str, Any] = self.raw
        for _ in range(32):  # references never chain this deep; guards a cycle
            ref = node.get("$ref")
            options = [
                o for o in node.get("anyOf", node.get("oneOf", ())) if o.get("type") != "null"
            ]
            if isinstance(ref, str) and ref.startswith(_REF):
                target = self.defs.get(ref.removeprefix(_REF), {})
                node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            elif len(options) == 1 and ("anyOf" in node or "oneOf" in node):
                rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
                node = {**options[0], **rest}
            else:
                return node
        return node

    def _of(self, raw: Any) -> FieldNode | None:
        return FieldNode(raw, self.defs) if isinstance(raw, Mapping) else None

    def child(self, part: str | int) -> FieldNode | None:
        """The node of a key (mappings: a property, or any key of a map) or of a list item."""
        schema = self.schema
        if isinstance(part, int):
            return self._of(schema.get("items"))
        properties = schema.get("properties") or {}
        if part in properties:
            return self._of(properties[part])
        extra = schema.get("additionalProperties")
        return self._of(extra) if isinstance(extra, Mapping) else None

    def at(self, path: tuple[str | int, ...]) -> FieldNode | None:
        node: FieldNode | None = self
        for part in path:
            if node is None:
                return None
            node = node.child(part)
        return node

    @property
    def merge_key(self) -> str | None:
        """The key list items are merged by in a strategic merge patch (``None``: the list is
        replaced), following ``k8s.io/apimachinery/pkg/util/strategicpatch``'s
        ``patchStrategy: merge`` with ``patchMergeKey``."""
        schema = self.schema
        strategy = str(schema.get("x-kubernetes-patch-strategy", ""))
        key = schema.get("x-kubernetes-patch-merge-key")
        return key if "merge" in strategy.split(",") and isinstance(key, str) else None

    @property
    def description(self) -> str:
        return str(self.schema.get("description") or "")

    @property
    def type_name(self) -> str:
        """The type as ``kubectl explain`` names it: ``<PodSpec>``, ``[]Container``,
        ``map[string]ReplicaSpec``, ``integer``..."""
        raw = self.raw
        ref = raw.get("$ref")
        options = [o for o in raw.get("anyOf", raw.get("oneOf", ())) if o.get("type") != "null"]
        if isinstance(ref, str):
            return _short(ref)
        if len(options) == 1:
            return FieldNode(options[0], self.defs).type_name
        if options:
            return "IntOrString" if {o.get("type") for o in options} >= {"string"} else "Object"
        schema = self.schema
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "Object")
        if kind == "array" or "items" in schema:
            items = self.child(0)
            return f"[]{items.type_name if items else 'Object'}"
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and extra and not schema.get("properties"):
            inner = FieldNode(extra, self.defs).type_name
            return f"map[string]{inner}"
        if kind == "object" or "properties" in schema:
            return "Object"
        return str(kind) if kind else "Object"

    @property
    def enum(self) -> list[Any]:
        values = self.schema.get("enum")
        return list(values) if isinstance(values, list) else []

    def fields(self) -> Iterator[tuple[str, FieldNode, bool]]:
        """(key, node, required) of every property, sorted by key."""
        schema = self.schema
        required = set(schema.get("required") or ())
        for key, raw in sorted((schema.get("properties") or {}).items()):
            node = self._of(raw)
            if node is not None:
                yield key, node, key in required


def kind_node(api_version: str, kind: str, version: tuple[int, int]) -> FieldNode | None:
    """The root node of a job kind or of a built-in Kubernetes kind, or ``None``."""
    if (api_version, kind) in job_kinds():
        defs, names = kind_definitions(version)
        return FieldNode({"$ref": _REF + names[f"{api_version} {kind}"]}, defs)
    name = k8s.builtin_definition(version, api_version, kind)
    if name is None:
        return None
    return FieldNode({"$ref": _REF + name}, k8s.definitions(version)["$defs"])
