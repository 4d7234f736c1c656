"""CustomResourceDefinitions generated from kubetrain's own job-kind models.

A kind whose CRD kubetrain owns is registered with :func:`register_crd` (names, status model,
printer columns). :func:`openapi_schema` turns its pydantic model into a *structural*
``openAPIV3Schema`` as the API server requires it:

* every node is typed, or is int-or-string, or keeps unknown fields;
* no ``$ref``/``$defs`` (models are inlined; a recursive model is an error), no ``anyOf`` with
  ``null`` from optional fields, no ``const``, no ``additionalProperties: false`` (the API server
  prunes unknown fields instead), no pydantic titles; defaults are kept (the API server applies
  them) except ``null`` ones;
* unions of an integer and a string become ``x-kubernetes-int-or-string``; so do Kubernetes
  quantities, which also get the quantity pattern;
* an embedded Kubernetes type (:class:`~kubetrain.models.base.K8sType`) is either described in full
  from the Kubernetes schema of the target version (the small, closed ones in
  :data:`DESCRIBED_K8S_TYPES`) or kept as an object that preserves unknown fields (pods, volumes);
  kubetrain's private ``x-kubetrain-k8s-definition`` key never reaches the output.

:func:`structural_problems` checks those rules (the generator asserts it), and
:func:`kubeconform_schema` turns a CRD version's schema into the JSON schema kubeconform and
``kubetrain validate --schema-location`` read.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..kube import schemas as k8s
from ..kube.apiextensions.structural import enum_type, structural_problems
from ..kube.quantity import QUANTITY_PATTERN
from ..models.base import K8S_DEFINITION_KEY, UPSTREAM_KEY, JobDocument
from .meta import MANAGED_BY, manifest, object_meta

__all__ = [
    "CRD_API_VERSION",
    "DESCRIBED_K8S_TYPES",
    "CRDError",
    "CRDInfo",
    "PrinterColumn",
    "crd_info",
    "custom_resource_definition",
    "kubeconform_schema",
    "openapi_schema",
    "owned_crds",
    "register_crd",
    "structural_problems",
]

CRD_API_VERSION = "apiextensions.k8s.io/v1"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

#: Embedded Kubernetes types described field by field in generated CRDs. Larger or open-ended
#: ones (pod templates, volumes) keep unknown fields instead: their full schemas are tens of
#: kilobytes each, and ``kubetrain render`` validates them strictly before anything is written.
DESCRIBED_K8S_TYPES = frozenset(
    {
        "io.k8s.api.core.v1.ResourceRequirements",
        "io.k8s.api.core.v1.VolumeMount",
        "io.k8s.api.core.v1.LocalObjectReference",
    }
)

#: Keys copied unchanged from a source schema node.
_COPIED = (
    "description",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-validations",
)
_INT_OR_STRING_ANYOF = [{"type": "integer"}, {"type": "string"}]


class CRDError(ValueError):
    """A model that has no structural schema (a programming error, not bad input)."""


@dataclass(frozen=True)
class PrinterColumn:
    """One column of ``kubectl get`` (``additionalPrinterColumns``)."""

    name: str
    type: str
    json_path: str
    description: str = ""
    priority: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.priority:
            out["priority"] = self.priority
        return out


@dataclass(frozen=True)
class CRDInfo:
    """What a CRD needs besides the model: names, status, printer columns, scope."""

    model: type[JobDocument]
    plural: str
    short_names: tuple[str, ...] = ()
    status: type[BaseModel] | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    categories: tuple[str, ...] = ()
    scope: str = "Namespaced"
    described: frozenset[str] = field(default=DESCRIBED_K8S_TYPES)

    @property
    def group(self) -> str:
        return k8s.split_api_version(self.model.API_VERSION)[0]

    @property
    def version(self) -> str:
        return k8s.split_api_version(self.model.API_VERSION)[1]

    @property
    def kind(self) -> str:
        return self.model.KIND

    @property
    def name(self) -> str:
        """``<plural>.<group>``, the CRD's object name."""
        return f"{self.plural}.{self.group}"


_CRDS: dict[type[JobDocument], CRDInfo] = {}


def register_crd(
    model: type[JobDocument],
    *,
    plural: str,
    short_names: Collection[str] = (),
    status: type[BaseModel] | None = None,
    printer_columns: Collection[PrinterColumn] = (),
    categories: Collection[str] = (),
    scope: str = "Namespaced",
) -> CRDInfo:
    """Declare that kubetrain owns the CRD of a job kind (the seed's ``RegisterResource``)."""
    if model in _CRDS:
        raise RuntimeError(f"CRD of {model.__name__} registered twice")
    info = CRDInfo(
        model,
        plural,
        tuple(short_names),
        status,
        tuple(printer_columns),
        tuple(categories),
        scope,
    )
    _CRDS[model] = info
    return info


def owned_crds() -> list[CRDInfo]:
    """Every CRD kubetrain owns, by name."""
    return sorted(_CRDS.values(), key=lambda info: info.name)


def crd_info(model: type[JobDocument]) -> CRDInfo:
    found = _CRDS.get(model)
    if found is None:
        raise KeyError(f"no CRD registered for {model.__name__}")
    return found


# --- model -> structural schema --------------------------------------------------------------


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
#: The metadata of an embedded object (a pod template's) in a CRD generated by controller-gen
#: (``crd:generateEmbeddedObjectMeta=true``, as the training operator, JobSet and the trainer
#: generate theirs): what a controller may set on the objects it creates, nothing else.
_EMBEDDED_META: dict[str, Any] = {
    "type": "object",
    "properties": {
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "name": {"type": "string"},
        "namespace": {"type": "string"},
    },
}


class _Converter:
    """Turns pydantic and Kubernetes JSON schemas into structural schema nodes."""

    def __init__(
        self,
        defs: Mapping[str, Any],
        version: tuple[int, int],
        described: frozenset[str],
        *,
        embedded_meta: bool = False,
    ) -> None:
        self.defs = defs
        self.k8s_defs: Mapping[str, Any] = k8s.definitions(version)["$defs"]
        self.described = described
        #: An ObjectMeta inside a Kubernetes type (a pod template's) as controller-gen writes
        #: it with generateEmbeddedObjectMeta: the five fields of :data:`_EMBEDDED_META`.
        self.embedded_meta = embedded_meta

    def convert(self, node: Mapping[str, Any], path: str, seen: tuple[str, ...] = ()) -> Any:
        if UPSTREAM_KEY in node:
            node = _as_upstream(node)
        if "$ref" in node:
            name = str(node["$ref"]).rsplit("/", 1)[-1]
            outer = {k: v for k, v in node.items() if k != "$ref"}
            if name == QUANTITY:
                target: Mapping[str, Any] = {"x-kubetrain-quantity": True}
            elif name in seen:
                raise CRDError(f"{path}: {name} is recursive; a structural schema cannot say so")
            elif name == _OBJECT_META and self._embedded_meta_at(path):
                return self._overlay(dict(_EMBEDDED_META), outer)
            else:
                target = self.defs.get(name) or self.k8s_defs.get(name) or {}
                if not target:
                    raise CRDError(f"{path}: unresolvable $ref {node['$ref']!r}")
            inner = self.convert(target, path, (*seen, name))
            return self._overlay(inner, outer)
        if node.get("x-kubetrain-quantity"):
            return {
                "anyOf": list(_INT_OR_STRING_ANYOF),
                "pattern": QUANTITY_PATTERN,
                "x-kubernetes-int-or-string": True,
            }
        if K8S_DEFINITION_KEY in node:
            return self._embedded(node, path, seen)
        union = node.get("anyOf") or node.get("oneOf")
        if union is not None:
            return self._union(node, union, path, seen)
        out: dict[str, Any] = {}
        kind = node.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if len(kinds) != 1:
                raise CRDError(f"{path}: a node of types {kind} has no structural schema")
            kind = kinds[0]
        if "const" in node:
            node = {**node, "enum": [node["const"]]}
        if "enum" in node:
            values = [v for v in node["enum"] if v is not None]
            out["enum"] = values
            kind = kind or _json_type(values)
        if kind is not None:
            out["type"] = kind
        for key in _COPIED:
            if key in node:
                out[key] = node[key]
        if "description" in out:
            # Docstrings use reStructuredText literals; kubectl explain shows plain text.
            out["description"] = out["description"].replace("``", "`")
        if "exclusiveMinimum" in node and not isinstance(node["exclusiveMinimum"], bool):
            out["minimum"], out["exclusiveMinimum"] = node["exclusiveMinimum"], True
        if "exclusiveMaximum" in node and not isinstance(node["exclusiveMaximum"], bool):
            out["maximum"], out["exclusiveMaximum"] = node["exclusiveMaximum"], True
        if node.get("uniqueItems"):
            raise CRDError(f"{path}: uniqueItems (a set) is not allowed in a structural schema")
        if node.get("default") is not None:
            out["default"] = node["default"]
        if "properties" in node:
            out["properties"] = {
                key: self.convert(value, f"{path}.{key}", seen)
                for key, value in node["properties"].items()
            }
            if required := [r for r in node.get("required", ()) if r in out["properties"]]:
                out["required"] = required
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping) and "properties" not in node:
            out["additionalProperties"] = self.convert(extra, f"{path}.*", seen)
        elif extra is True and "properties" not in node:
            out["x-kubernetes-preserve-unknown-fields"] = True
        if "items" in node:
            out["items"] = self.convert(node["items"], f"{path}[]", seen)
        if node.get("x-kubernetes-preserve-unknown-fields"):
            out["x-kubernetes-preserve-unknown-fields"] = True
        if "type" not in out:
            # Anything (pydantic's Any): keep it as it is.
            out["x-kubernetes-preserve-unknown-fields"] = True
        elif out["type"] == "object" and not ({"properties", "additionalProperties"} & out.keys()):
            out["x-kubernetes-preserve-unknown-fields"] = True
        return out

    def _embedded_meta_at(self, path: str) -> bool:
        """Whether an ObjectMeta at ``path`` is an embedded one (anything but the root's
        ``<Kind>.metadata``) of a CRD written by controller-gen."""
        return self.embedded_meta and path.count(".") > 1

    def _embedded(self, node: Mapping[str, Any], path: str, seen: tuple[str, ...]) -> Any:
        definition = str(node[K8S_DEFINITION_KEY])
        if definition == _OBJECT_META and self._embedded_meta_at(path):
            out = dict(_EMBEDDED_META)
        elif definition in self.described:
            out = self.convert({"$ref": f"#/$defs/{definition}"}, path, seen)
        else:
            target = self.k8s_defs.get(definition) or {}
            kind = target.get("type", "object")
            kind = (
                next((k for k in kind if k != "null"), "object") if isinstance(kind, list) else kind
            )
            out = {"type": kind, "x-kubernetes-preserve-unknown-fields": True}
        if node.get("description"):
            out["description"] = str(node["description"]).replace("``", "`")
        return out

    def _union(
        self, node: Mapping[str, Any], union: list[Any], path: str, seen: tuple[str, ...]
    ) -> Any:
        members = [m for m in union if not _is_null(m)]
        outer = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        if len(members) == 1:
            return self._overlay(self.convert(members[0], path, seen), outer)
        converted = [self.convert(m, path, seen) for m in members]
        kinds = {c.get("type") for c in converted}
        if kinds in ({"integer", "string"}, {"number", "string"}):
            out = {"anyOf": list(_INT_OR_STRING_ANYOF), "x-kubernetes-int-or-string": True}
            # A pattern of the string member (a quantity) holds for the strings of the union.
            patterns = [c["pattern"] for c in converted if "pattern" in c]
            if patterns:
                out["pattern"] = patterns[0]
            return self._overlay(out, outer)
        if kinds == {"object"} and all("properties" in c for c in converted):
            return self._overlay(_merged_objects(converted, path), outer)
        raise CRDError(f"{path}: a union of {sorted(map(str, kinds))} has no structural schema")

    @staticmethod
    def _overlay(inner: dict[str, Any], outer: Mapping[str, Any]) -> dict[str, Any]:
        """``inner`` with what is written beside a ``$ref`` or union: the description, the
        default, and the schema extensions of the field (its list type and keys, CEL rules, an
        integer's format), which belong to the value whichever member of the union it is."""
        out = dict(inner)
        if outer.get("description"):
            out["description"] = str(outer["description"]).replace("``", "`")
        if outer.get("default") is not None:
            out["default"] = outer["default"]
        for key in _COPIED:
            if key != "description" and key in outer and key not in out:
                out[key] = outer[key]
        return out


def _as_upstream(node: Mapping[str, Any]) -> dict[str, Any]:
    """A node as its upstream CRD has it (see ``models.base.upstream``): the keywords given
    replace pydantic's, on the node and on the members of an optional field's union."""
    overrides = node[UPSTREAM_KEY]

    def apply(target: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in target.items() if k not in overrides and k != UPSTREAM_KEY}
        if overrides.get("minimum", 0) is None:
            out.pop("exclusiveMinimum", None)
        if overrides.get("maximum", 0) is None:
            out.pop("exclusiveMaximum", None)
        if overrides.get("enum", 0) is None:
            out.pop("const", None)
        out.update({k: v for k, v in overrides.items() if v is not None})
        return out

    result = apply(node)
    for junctor in ("anyOf", "oneOf"):
        if isinstance(result.get(junctor), list):
            result[junctor] = [
                apply(m) if isinstance(m, Mapping) and not _is_null(m) else m
                for m in result[junctor]
            ]
    return result


def _merged_objects(variants: list[dict[str, Any]], path: str) -> dict[str, Any]:
    """One structural object for a union of objects (a discriminated union such as a Learner's
    data store: ``type: mount_cos`` or ``type: host_mount``): every variant's properties, enums
    of a property shared by several variants joined, required only what all variants require.
    The model still checks each variant exactly when kubetrain loads a document."""
    properties: dict[str, Any] = {}
    for variant in variants:
        for name, prop in variant["properties"].items():
            known = properties.get(name)
            if known is None:
                properties[name] = dict(prop)
            elif "enum" in known and "enum" in prop and known.get("type") == prop.get("type"):
                known["enum"] = sorted({*known["enum"], *prop["enum"]})
            elif {k: v for k, v in known.items() if k != "description"} != {
                k: v for k, v in prop.items() if k != "description"
            }:
                raise CRDError(f"{path}.{name}: the union's variants type this field differently")
    required = set.intersection(*(set(v.get("required", ())) for v in variants))
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = sorted(required)
    return out


def _is_null(node: Any) -> bool:
    return isinstance(node, Mapping) and node.get("type") == "null" and len(node) == 1


def _json_type(values: list[Any]) -> str:
    kind = enum_type(values)
    if kind == "mixed":
        kinds = sorted({k8s.json_type(v) for v in values})
        raise CRDError(f"an enum of mixed types {kinds} has no structural schema")
    return kind


def model_schema(
    model: type[BaseModel],
    version: tuple[int, int],
    described: frozenset[str],
    path: str,
    *,
    embedded_meta: bool = False,
) -> dict[str, Any]:
    """The structural schema of one pydantic model (as it is serialised, by alias);
    ``embedded_meta``: embedded ObjectMeta as controller-gen writes it (a third-party CRD)."""
    raw = model.model_json_schema(by_alias=True, mode="serialization")
    converter = _Converter(raw.get("$defs", {}), version, described, embedded_meta=embedded_meta)
    schema: dict[str, Any] = converter.convert({k: v for k, v in raw.items() if k != "$defs"}, path)
    return schema


def openapi_schema(info: CRDInfo, version: tuple[int, int]) -> dict[str, Any]:
    """The structural ``openAPIV3Schema`` of a registered kind for a Kubernetes version."""
    document = model_schema(info.model, version, info.described, info.kind)
    spec = document["properties"]["spec"]
    properties: dict[str, Any] = {
        "apiVersion": {
            "type": "string",
            "description": "APIVersion defines the versioned schema of this representation.",
        },
        "kind": {"type": "string", "description": "Kind is the type of this object."},
        "metadata": {"type": "object"},
        "spec": spec,
    }
    if info.status is not None:
        properties["status"] = model_schema(info.status, version, info.described, "status")
    schema = {"type": "object", "properties": properties, "required": ["spec"]}
    if description := document.get("description"):
        schema = {"description": description, **schema}
    problems = structural_problems(schema)
    if problems:
        raise CRDError(f"{info.name}: not a structural schema: " + "; ".join(problems))
    # A tree of its own: nothing shared with the Kubernetes definitions or between nodes.
    copied: dict[str, Any] = json.loads(json.dumps(schema))
    return copied


def custom_resource_definition(
    model: type[JobDocument], version: tuple[int, int]
) -> dict[str, Any]:
    """The ``CustomResourceDefinition`` of a registered kind for a Kubernetes version."""
    info = crd_info(model)
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": f"{info.kind}List",
        "plural": info.plural,
        "singular": info.kind.lower(),
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    if info.categories:
        names["categories"] = list(info.categories)
    served: dict[str, Any] = {
        "name": info.version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": openapi_schema(info, version)},
    }
    if info.status is not None:
        served["subresources"] = {"status": {}}
    if info.printer_columns:
        served["additionalPrinterColumns"] = [c.to_dict() for c in info.printer_columns]
    meta = object_meta(info.name, labels={"app.kubernetes.io/managed-by": MANAGED_BY})
    return manifest(
        CRD_API_VERSION,
        "CustomResourceDefinition",
        meta,
        spec={"group": info.group, "names": names, "scope": info.scope, "versions": [served]},
    )


# --- CRD schema -> kubeconform JSON schema ---------------------------------------------------


def kubeconform_schema(node: Any, *, strict: bool = True) -> Any:
    """The JSON schema kubeconform uses for a CRD version, from its ``openAPIV3Schema`` (what
    openapi2jsonschema does): OpenAPI's ``nullable`` and boolean exclusive bounds in JSON-schema
    form, and with ``strict``, objects without unknown fields closed by
    ``additionalProperties: false``."""
    if isinstance(node, list):
        return [kubeconform_schema(n, strict=strict) for n in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties",) and isinstance(value, Mapping):
            out[key] = {k: kubeconform_schema(v, strict=strict) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = kubeconform_schema(value, strict=strict)
        elif key not in ("nullable", "exclusiveMinimum", "exclusiveMaximum"):
            out[key] = value
    if node.get("nullable") and isinstance(node.get("type"), str):
        out["type"] = [node["type"], "null"]
    for bound, limit in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(bound) is True and limit in node:
            out[bound] = out.pop(limit)
    if (
        strict
        and "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out
