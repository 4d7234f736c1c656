"""JSON Schemas of kubetrain's input for editors: the stack file and a job document.

Generated from the same models that validate input, so an editor (VS Code with the YAML
extension, any yaml-language-server client, JetBrains IDEs) completes and checks
``stacks/Pulumi.<env>.yaml`` and job files while they are written. Embedded Kubernetes types
(pod templates, volumes, resources) refer to the strict Kubernetes schemas of the chosen
version, copied into the file, so the schema works offline. Every ``kubetrain:*`` key is
described; keys of other Pulumi config namespaces (``aws:region``) are allowed as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from ..kube import schemas as k8s
from .base import K8S_DEFINITION_KEY, UPSTREAM_KEY, job_kinds
from .stack import CONFIG_NAMESPACE, StackFile, StackSettings

__all__ = ["JSON_SCHEMA_DIALECT", "job_schema", "kind_definitions", "stack_schema"]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_JOB = "JobDocument"


class _EditorJsonSchema(GenerateJsonSchema):
    """Pydantic's generator, plus a property for every other accepted spelling of a field
    (``AliasChoices``), marked deprecated so editors steer towards the canonical key."""

    def model_fields_schema(self, schema: core_schema.ModelFieldsSchema) -> JsonSchemaValue:
        out = super().model_fields_schema(schema)
        properties = out.get("properties")
        if self.mode != "validation" or not isinstance(properties, dict):
            return out
        for field in schema["fields"].values():
            alias = field.get("validation_alias")
            if not isinstance(alias, list):
                continue
            choices = [a[0] for a in alias if isinstance(a, list) and len(a) == 1]
            canonical = choices[0] if choices else None
            if not isinstance(canonical, str) or canonical not in properties:
                continue
            for other in choices[1:]:
                if isinstance(other, str):
                    properties.setdefault(
                        other,
                        {
                            **properties[canonical],
                            "description": f"Another spelling of {canonical}.",
                            "deprecated": True,
                        },
                    )
        return out


def _definitions(version: tuple[int, int]) -> tuple[dict[str, Any], dict[str, str]]:
    """``$defs`` of the stack file, the settings and every job kind (plus the Kubernetes types
    they embed), and the definition name of each of those models."""
    models: list[Any] = [StackFile, StackSettings, *job_kinds().values()]
    keys, schema = models_json_schema(
        [(m, "validation") for m in models], by_alias=True, schema_generator=_EditorJsonSchema
    )
    names = {model.__name__: ref["$ref"].rsplit("/", 1)[-1] for (model, _), ref in keys.items()}
    defs: dict[str, Any] = _editor_nodes(schema.get("$defs", {}))
    needed = sorted(n for n in k8s.definition_refs(defs) if n.startswith("io.k8s."))
    defs.update(k8s.definition_closure(needed, version))
    kinds = sorted(job_kinds().items())
    defs[_JOB] = {
        "type": "object",
        "description": "A job document: apiVersion, kind, metadata and spec of one of the "
        "accepted kinds.",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"enum": sorted({a for (a, _), _ in kinds})},
            "kind": {"enum": sorted({k for (_, k), _ in kinds})},
        },
        "allOf": [
            {
                "if": {
                    "properties": {"apiVersion": {"const": a}, "kind": {"const": k}},
                    "required": ["apiVersion", "kind"],
                },
                "then": {"$ref": f"#/$defs/{names[model.__name__]}"},
            }
            for (a, k), model in kinds
        ],
    }
    return defs, names


def _editor_nodes(node: Any) -> Any:
    """Pydantic's schema made for editors: embedded Kubernetes types refer to their strict
    schema, and pydantic's generated titles (``Hostnetwork``) and what upstream CRDs say of a
    field (validation of custom resources only) are dropped."""
    if isinstance(node, list):
        return [_editor_nodes(n) for n in node]
    if not isinstance(node, dict):
        return node
    if K8S_DEFINITION_KEY in node:
        out: dict[str, Any] = {"$ref": f"#/$defs/{node[K8S_DEFINITION_KEY]}"}
        if node.get("description"):
            out["description"] = node["description"]
        return out
    return {
        key: (
            {k: _editor_nodes(v) for k, v in value.items()}
            if key in ("properties", "$defs", "patternProperties")
            else _editor_nodes(value)
        )
        for key, value in node.items()
        if key not in ("title", UPSTREAM_KEY)
    }


def stack_schema(version: tuple[int, int]) -> dict[str, Any]:
    """The JSON Schema of a stack file (``stacks/Pulumi.<env>.yaml``)."""
    defs, names = _definitions(version)
    settings = defs.pop(names["StackSettings"])
    stack_file = defs.pop(names["StackFile"])
    config: dict[str, Any] = {
        f"{CONFIG_NAMESPACE}:{key}": value for key, value in settings["properties"].items()
    }
    config[f"{CONFIG_NAMESPACE}:jobs"]["items"] = {"$ref": f"#/$defs/{_JOB}"}
    config[f"{CONFIG_NAMESPACE}:manifests"]["items"] = {
        "type": "object",
        "description": "A Kubernetes object (apiVersion, kind, metadata.name, ...).",
        "required": ["apiVersion", "kind", "metadata"],
    }
    top = dict(stack_file["properties"])
    top["config"] = {
        "type": "object",
        "description": "Stack configuration: kubetrain's keys, and keys of other namespaces "
        "(e.g. aws:region) for other Pulumi packages.",
        "properties": config,
        "patternProperties": {f"^(?!{CONFIG_NAMESPACE}:)[^:]+:": {}},
        "additionalProperties": False,
    }
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "kubetrain stack file (stacks/Pulumi.<env>.yaml)",
        "description": f"Pulumi stack settings read by kubetrain, Kubernetes {version[0]}."
        f"{version[1]} types. Generated by `kubetrain schema`.",
        "type": "object",
        "properties": top,
        "additionalProperties": False,
        "$defs": defs,
    }


def job_schema(version: tuple[int, int]) -> dict[str, Any]:
    """The JSON Schema of one job document (a file listed by ``kubetrain:jobFiles``)."""
    defs, names = _definitions(version)
    for model in ("StackSettings", "StackFile"):
        defs.pop(names[model])
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "kubetrain job document",
        "description": f"A job for kubetrain:jobs or kubetrain:jobFiles, Kubernetes "
        f"{version[0]}.{version[1]} types. Generated by `kubetrain schema`.",
        "$ref": f"#/$defs/{_JOB}",
        "$defs": _reachable(defs, _JOB),
    }


def _reachable(defs: dict[str, Any], root: str) -> dict[str, Any]:
    """``defs`` reduced to what ``root`` refers to, directly or not."""
    out: dict[str, Any] = {}
    todo = [root]
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out[name] = defs[name]
        for ref in _refs(out[name]):
            todo.append(ref)
    return dict(sorted(out.items()))


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref.rsplit("/", 1)[-1]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


@cache
def kind_definitions(version: tuple[int, int]) -> tuple[Mapping[str, Any], Mapping[str, str]]:
    """Every definition of the job kinds and the Kubernetes types they embed, and the
    definition name of each job kind's document class (computed once per version; do not
    modify)."""
    defs, names = _definitions(version)
    return defs, {
        f"{a} {k}": names[model.__name__] for (a, k), model in sorted(job_kinds().items())
    }
