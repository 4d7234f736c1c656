"""CustomResourceDefinition objects: the versions they define, and whether the API server would
accept them.

:func:`validate_crd` mirrors ``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation``
``ValidateCustomResourceDefinition`` on create for ``apiextensions.k8s.io/v1``: the name is
``<plural>.<group>``, the group a DNS subdomain with at least one dot, the names DNS-1035 labels
(``kind`` and ``listKind`` lower-cased) with ``listKind`` different from ``kind``, the scope, the
versions (at least one, unique DNS-1035 names, exactly one storage version), a structural
schema per version (:mod:`.structural`) whose patterns and CEL rules compile, printer columns,
subresources and conversion; before all that, that the schema's numeric keywords decode into
their typed fields (:mod:`.decoding`). :func:`crd_versions` gives the versions a valid CRD
defines, each compiled once for :func:`~.validation.validate_custom_resource`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..names import DNS1035_LABEL, DNS1123_SUBDOMAIN
from ..schemas import SchemaIssue
from . import celcost
from .decoding import keyword_problems
from .schema import Node, compile_schema
from .structural import structural_problems

__all__ = ["CRD_API_VERSION", "CRDVersion", "crd_versions", "is_crd", "validate_crd"]

#: The newest Kubernetes minor version kubetrain knows (a CRD judged for no version in
#: particular is judged for it).
NEWEST_MINOR = 37

CRD_API_VERSION = "apiextensions.k8s.io/v1"
Path = tuple[str | int, ...]
_SCOPES = ("Namespaced", "Cluster")
_COLUMN_TYPES = ("integer", "number", "string", "boolean", "date")
_COLUMN_FORMATS = (
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
    "",
)


def is_crd(obj: Any) -> bool:
    return (
        isinstance(obj, Mapping)
        and obj.get("kind") == "CustomResourceDefinition"
        and str(obj.get("apiVersion", "")).startswith("apiextensions.k8s.io/")
    )


@dataclass(eq=False)
class CRDVersion:
    """One version of a custom resource as a CRD defines it; its schema compiled on first use."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    schema: Mapping[str, Any]
    source: str = ""
    #: The scale subresource's ``specReplicasPath`` (``.spec.replicas``), or ``""``.
    scale_replicas: str = ""
    #: Whether the status subresource is on (a create then drops ``status``).
    status: bool = False
    _node: Node | None = field(default=None, repr=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = compile_schema(self.schema)
        return self._node


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def crd_versions(crd: Mapping[str, Any], source: str = "") -> list[CRDVersion]:
    """Every version ``crd`` defines that has a schema (give only CRDs :func:`validate_crd`
    accepts)."""
    spec = _mapping(crd.get("spec"))
    names = _mapping(spec.get("names"))
    out = []
    for version in spec.get("versions") or ():
        version = _mapping(version)
        schema = _mapping(_mapping(version.get("schema")).get("openAPIV3Schema"))
        subresources = _mapping(version.get("subresources"))
        if schema:
            out.append(
                CRDVersion(
                    group=str(spec.get("group", "")),
                    version=str(version.get("name", "")),
                    kind=str(names.get("kind", "")),
                    plural=str(names.get("plural", "")),
                    namespaced=spec.get("scope") != "Cluster",
                    schema=schema,
                    source=source,
                    scale_replicas=str(
                        _mapping(subresources.get("scale")).get("specReplicasPath", "")
                    ),
                    status="status" in subresources,
                )
            )
    return out


def validate_crd(
    crd: Mapping[str, Any], version: tuple[int, int] | None = None
) -> list[SchemaIssue]:
    """Every reason the API server of Kubernetes ``version`` would refuse to create ``crd``
    (empty: it would accept it); ``None``: the newest kubetrain knows (the CEL features a rule
    may use depend on it, :mod:`.cellibs`)."""
    return list(_crd_problems(crd, version))


def _crd_problems(crd: Mapping[str, Any], version: tuple[int, int] | None) -> Iterator[SchemaIssue]:
    if crd.get("apiVersion") != CRD_API_VERSION:
        yield SchemaIssue(
            ("apiVersion",),
            f"Unsupported value: {crd.get('apiVersion')!r}: kubetrain checks {CRD_API_VERSION} "
            "CRDs (v1beta1 was removed in Kubernetes 1.22)",
        )
        return
    spec = crd.get("spec")
    if not isinstance(spec, Mapping):
        yield SchemaIssue(("spec",), "Required value")
        return
    group = spec.get("group")
    names = _mapping(spec.get("names"))
    plural = names.get("plural")
    name = _mapping(crd.get("metadata")).get("name")
    if isinstance(plural, str) and isinstance(group, str) and name != f"{plural}.{group}":
        yield SchemaIssue(
            ("metadata", "name"),
            f'Invalid value: {name!r}: must be spec.names.plural+"."+spec.group ({plural}.{group})',
        )
    yield from _group_problems(group)
    yield from _names_problems(names)
    if spec.get("scope") not in _SCOPES:
        yield SchemaIssue(
            ("spec", "scope"),
            f"Unsupported value: {spec.get('scope')!r}: supported values: "
            + ", ".join(f'"{s}"' for s in _SCOPES),
        )
    if spec.get("preserveUnknownFields") is True:
        yield SchemaIssue(
            ("spec", "preserveUnknownFields"),
            "Invalid value: true: must be false in order to use defaults in the schema "
            "(apiextensions.k8s.io/v1 refuses true)",
        )
    yield from _conversion_problems(_mapping(spec.get("conversion")))
    yield from _versions_problems(spec.get("versions"), version)


def _group_problems(group: Any) -> Iterator[SchemaIssue]:
    path: Path = ("spec", "group")
    if not isinstance(group, str) or not group:
        yield SchemaIssue(path, "Required value")
        return
    if problem := DNS1123_SUBDOMAIN.check(group):
        yield SchemaIssue(path, f"Invalid value: {group!r}: {problem}")
    if "." not in group:
        yield SchemaIssue(
            path, f"Invalid value: {group!r}: should be a domain with at least one dot"
        )


def _names_problems(names: Mapping[str, Any]) -> Iterator[SchemaIssue]:
    base: Path = ("spec", "names")
    for key in ("plural", "singular", "kind", "listKind"):
        value = names.get(key)
        if key in ("plural", "kind") and not value:
            yield SchemaIssue((*base, key), "Required value")
            continue
        if value is None:
            continue
        if not isinstance(value, str):
            yield SchemaIssue((*base, key), "Invalid value: must be a string")
            continue
        checked = value.lower() if key in ("kind", "listKind") else value
        if problem := DNS1035_LABEL.check(checked):
            yield SchemaIssue((*base, key), f"Invalid value: {value!r}: {problem}")
    if names.get("listKind") and names.get("listKind") == names.get("kind"):
        yield SchemaIssue(
            (*base, "listKind"), "Invalid value: kind and listKind cannot be the same"
        )
    for key in ("shortNames", "categories"):
        for i, value in enumerate(names.get(key) or ()):
            if not isinstance(value, str) or (problem := DNS1035_LABEL.check(value)):
                yield SchemaIssue((*base, key, i), f"Invalid value: {value!r}: {problem}")


def _conversion_problems(conversion: Mapping[str, Any]) -> Iterator[SchemaIssue]:
    strategy = conversion.get("strategy", "None")
    path: Path = ("spec", "conversion")
    if strategy not in ("None", "Webhook"):
        yield SchemaIssue(
            (*path, "strategy"),
            f'Unsupported value: {strategy!r}: supported values: "None", "Webhook"',
        )
    elif strategy == "Webhook":
        webhook = _mapping(conversion.get("webhook"))
        if not webhook.get("clientConfig"):
            yield SchemaIssue((*path, "webhook", "clientConfig"), "Required value")
        if not webhook.get("conversionReviewVersions"):
            yield SchemaIssue((*path, "webhook", "conversionReviewVersions"), "Required value")
    elif conversion.get("webhook"):
        yield SchemaIssue((*path, "webhook"), "Forbidden: should not be set when strategy is None")


def _versions_problems(versions: Any, kubernetes: tuple[int, int] | None) -> Iterator[SchemaIssue]:
    path: Path = ("spec", "versions")
    if not isinstance(versions, list) or not versions:
        yield SchemaIssue(
            path, "Invalid value: must have exactly one version marked as storage version"
        )
        return
    seen: set[str] = set()
    storage = 0
    for i, version in enumerate(versions):
        here = (*path, i)
        if not isinstance(version, Mapping):
            yield SchemaIssue(here, "Invalid value: must be an object")
            continue
        name = version.get("name")
        if not isinstance(name, str) or not name:
            yield SchemaIssue((*here, "name"), "Required value")
        else:
            if problem := DNS1035_LABEL.check(name):
                yield SchemaIssue((*here, "name"), f"Invalid value: {name!r}: {problem}")
            if name in seen:
                yield SchemaIssue((*here, "name"), f"Duplicate value: {name!r}")
            seen.add(name)
        storage += version.get("storage") is True
        for flag in ("served", "storage"):
            if not isinstance(version.get(flag), bool):
                yield SchemaIssue((*here, flag), "Required value: must be true or false")
        yield from _schema_problems(_mapping(version.get("schema")), (*here, "schema"), kubernetes)
        yield from _column_problems(version.get("additionalPrinterColumns"), here)
        yield from _subresource_problems(_mapping(version.get("subresources")), here)
    if storage != 1:
        yield SchemaIssue(
            path,
            f"Invalid value: must have exactly one version marked as storage version "
            f"(found {storage})",
        )
    if not any(isinstance(v, Mapping) and v.get("served") is True for v in versions):
        yield SchemaIssue(path, "Invalid value: must have at least one served version")


def _schema_problems(
    schema: Mapping[str, Any], path: Path, kubernetes: tuple[int, int] | None
) -> Iterator[SchemaIssue]:
    root = schema.get("openAPIV3Schema")
    here = (*path, "openAPIV3Schema")
    if not isinstance(root, Mapping):
        yield SchemaIssue(here, "Required value: schemas are required")
        return
    undecodable = [
        SchemaIssue((*here, *where), message) for where, message in keyword_problems(root)
    ]
    if undecodable:
        # Decoding the CRD into JSONSchemaProps fails first: nothing else is checked.
        yield from undecodable
        return
    for problem in structural_problems(root):
        where, _, message = problem.partition(": ")
        yield SchemaIssue((*here, *_problem_path(where)), message)
    try:
        compiled = compile_schema(root)
    except (ValueError, re.error) as exc:
        yield SchemaIssue(here, f"Invalid value: {exc}")
        return
    yield from _cel_problems(compiled, here, kubernetes)


def _cel_problems(
    root: Node, here: Path, kubernetes: tuple[int, int] | None = None
) -> Iterator[SchemaIssue]:
    """What the API server works out about the schema's CEL rules before it accepts the CRD
    (``validateCustomResourceDefinitionValidation`` with its ``CELSchemaContext``): each rule
    type-checks against the declaration of its node, and its estimated cost, times how many
    times its node can occur in one object, is within the per-expression budget; all rules
    together within the schema's."""
    total = 0
    expensive: list[tuple[int, Path]] = []
    issues: list[SchemaIssue] = []
    for node, path, cardinality in _rule_nodes(root, here):
        decl = celcost.decl_of(node, node is root or node.embedded)
        if decl is None:
            issues.append(
                SchemaIssue(
                    (*path, "x-kubernetes-validations"),
                    "Internal error: failed to construct type information for "
                    "x-kubernetes-validations rules: unable to convert structural schema to CEL "
                    "declarations",
                )
            )
            continue
        fallback = celcost.max_cardinality(decl.min_size)
        for i, rule in enumerate(node.rules):
            where = (*path, "x-kubernetes-validations", i)
            refusal = rule.refusal(kubernetes[1] if kubernetes is not None else NEWEST_MINOR)
            if refusal is not None:
                issues.append(SchemaIssue((*where, "rule"), f"Invalid value: {refusal}"))
                continue
            for program, key, what in (
                (rule.program, "rule", "estimated rule cost"),
                (rule.message_program, "messageExpression", "estimated messageExpression cost"),
            ):
                if program is None:
                    continue
                try:
                    cost = celcost.estimate(program.serialize(), decl)
                except ValueError as exc:
                    issues.append(SchemaIssue((*where, key), f"Invalid value: {exc}"))
                    continue
                if key == "rule":  # getExpressionCost; a messageExpression's is its own
                    cost = _times(cost, cardinality if cardinality is not None else fallback)
                if cost > celcost.PER_EXPRESSION_LIMIT:
                    message = celcost.cost_error_message(what, cost, celcost.PER_EXPRESSION_LIMIT)
                    issues.append(SchemaIssue((*where, key), f"Forbidden: {message}"))
                total = min(total + cost, 2**64 - 1)
                if cost >= celcost.TOTAL_LIMIT // 100:
                    expensive.append((cost, (*where, key)))
    yield from issues
    if total > celcost.TOTAL_LIMIT:
        for _, path in sorted(expensive, key=lambda pair: -pair[0])[:4]:
            yield SchemaIssue(
                path,
                "Forbidden: contributed to estimated rule cost total exceeding cost limit for "
                "entire OpenAPIv3 schema",
            )
        message = celcost.cost_error_message(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            total,
            celcost.TOTAL_LIMIT,
        )
        yield SchemaIssue(here, f"Forbidden: {message}")


def _times(cost: int, cardinality: int) -> int:
    """``multiplyWithOverflowGuard``."""
    return min(cost * cardinality, 2**64 - 1)


def _rule_nodes(
    node: Node, path: Path, cardinality: int | None = 1
) -> Iterator[tuple[Node, Path, int | None]]:
    """Every node with rules, its path and how many times it can occur in one object (the
    ``MaxCardinality`` of its ``CELSchemaContext``; ``None``: unbounded)."""
    if not node.subtree_rules:
        return
    if node.rules:
        yield node, path, cardinality
    if node.type == "object" and node.additional is not None:
        most = node.max_properties
    elif node.type == "array":
        most = node.max_items
    else:
        most = 1
    below = None if cardinality is None or most is None else _times(cardinality, max(most, 0))
    for name, child in node.properties.items():
        yield from _rule_nodes(child, (*path, "properties", name), below)
    if node.additional is not None:
        yield from _rule_nodes(node.additional, (*path, "additionalProperties"), below)
    if node.items is not None:
        yield from _rule_nodes(node.items, (*path, "items"), below)


def _problem_path(where: str) -> Path:
    """``(root).spec.items[].x`` -> ``("properties", "spec", "items", "x")``-like readable
    parts; kept simple: the dotted names."""
    text = where.removeprefix("(root)")
    return tuple(part for part in re.split(r"[.\[\]]+", text) if part)


def _column_problems(columns: Any, path: Path) -> Iterator[SchemaIssue]:
    for i, column in enumerate(columns or ()):
        here = (*path, "additionalPrinterColumns", i)
        column = _mapping(column)
        if not column.get("name"):
            yield SchemaIssue((*here, "name"), "Required value")
        if column.get("type") not in _COLUMN_TYPES:
            yield SchemaIssue(
                (*here, "type"),
                f"Unsupported value: {column.get('type')!r}: supported values: "
                + ", ".join(f'"{t}"' for t in _COLUMN_TYPES),
            )
        if column.get("format", "") not in _COLUMN_FORMATS:
            yield SchemaIssue((*here, "format"), f"Unsupported value: {column.get('format')!r}")
        if not column.get("jsonPath"):
            yield SchemaIssue((*here, "jsonPath"), "Required value")


def _subresource_problems(subresources: Mapping[str, Any], path: Path) -> Iterator[SchemaIssue]:
    scale = subresources.get("scale")
    if isinstance(scale, Mapping):
        here = (*path, "subresources", "scale")
        for key in ("specReplicasPath", "statusReplicasPath"):
            value = scale.get(key)
            if not isinstance(value, str) or not value.startswith("."):
                yield SchemaIssue(
                    (*here, key), "Invalid value: should be a JSON path starting with '.'"
                )
