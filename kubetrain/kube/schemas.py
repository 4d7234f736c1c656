"""What kubetrain knows of the Kubernetes API: versions and the JSON schemas of built-in kinds.

The schemas are the strict variants bundled, one set per minor version, by the
``kubernetes-validate`` package; kubetrain reads the files directly and compiles them with
``jsonschema-rs`` once per process. A version newer than the newest bundled set, or older than
the oldest, is an input error rather than a silent fallback.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

__all__ = [
    "CLUSTER_SCOPED_KINDS",
    "DEFINITIONS_URI",
    "SchemaIssue",
    "builtin_definition",
    "builtin_kinds",
    "builtin_validator",
    "definition_closure",
    "definition_refs",
    "definitions",
    "definitions_registry",
    "embedded_validator",
    "parse_version",
    "schema_issues",
    "sensitive_path",
    "split_api_version",
    "supported_versions",
    "unknown_field_message",
    "version_dir",
]

DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"
_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.0-local-strict$")
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


def _schema_root() -> Path:
    return Path(str(resources.files("kubernetes_validate"))) / "kubernetes-json-schema"


@cache
def supported_versions() -> tuple[tuple[int, int], ...]:
    """Minor versions with bundled strict schemas, oldest first."""
    found = []
    for entry in _schema_root().iterdir():
        if m := _VERSION_DIR.match(entry.name):
            found.append((int(m[1]), int(m[2])))
    return tuple(sorted(found))


def parse_version(text: str) -> tuple[int, int] | str:
    """``"1.33"`` -> ``(1, 33)``; an unsupported or malformed version gives a message instead."""
    m = _VERSION.match(text.strip())
    if not m:
        return f'{text!r} is not a Kubernetes version; write it as MAJOR.MINOR, e.g. "1.33"'
    version = (int(m[1]), int(m[2]))
    known = supported_versions()
    if version not in known:
        low, high = known[0], known[-1]
        return (
            f"Kubernetes {version[0]}.{version[1]} has no bundled schemas; "
            f"supported: {low[0]}.{low[1]} to {high[0]}.{high[1]}"
        )
    return version


def version_dir(version: tuple[int, int]) -> Path:
    return _schema_root() / f"v{version[0]}.{version[1]}.0-local-strict"


@cache
def _definitions(version: tuple[int, int]) -> dict[str, Any]:
    with (version_dir(version) / "_definitions.json").open("rb") as f:
        defs: dict[str, Any] = json.load(f)
    return defs


def definitions(version: tuple[int, int]) -> dict[str, Any]:
    """Kubernetes' shared definitions of ``version`` (``{"$defs": {...}}``); do not modify."""
    return _definitions(version)


#: The range of each integer format of Kubernetes' schemas (Go's int32 and int64).
_INTEGER_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _bounded(node: Any) -> Any:
    """``node`` with ``minimum``/``maximum`` for every ``format: int32`` or ``int64`` integer:
    JSON Schema validators ignore formats, the API server refuses a ``replicas`` of 2**64."""
    if isinstance(node, dict):
        out = {key: _bounded(value) for key, value in node.items()}
        fmt = node.get("format")
        bounds = _INTEGER_BOUNDS.get(fmt) if isinstance(fmt, str) else None
        if bounds is not None and node.get("type") in ("integer", ["integer", "null"]):
            out.setdefault("minimum", bounds[0])
            out.setdefault("maximum", bounds[1])
        return out
    if isinstance(node, list):
        return [_bounded(value) for value in node]
    return node


@cache
def definitions_registry(version: tuple[int, int]) -> jsonschema_rs.Registry:
    """A registry holding the shared definitions every built-in schema refers to, with the
    ranges of their integer formats made explicit."""
    return jsonschema_rs.Registry([(DEFINITIONS_URI, _bounded(_definitions(version)))])


@cache
def _gvk_index(version: tuple[int, int]) -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> definition name, from ``x-kubernetes-group-version-kind``."""
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in _definitions(version)["$defs"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind", ()):
            index[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return index


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"apps/v1"`` -> ``("apps", "v1")``; ``"v1"`` -> ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def builtin_definition(version: tuple[int, int], api_version: str, kind: str) -> str | None:
    """The definition name of a built-in kind (``io.k8s.api.core.v1.ConfigMap``), or ``None``."""
    group, ver = split_api_version(api_version)
    return _gvk_index(version).get((group, ver, kind))


def builtin_kinds(version: tuple[int, int]) -> dict[str, list[str]]:
    """Kind -> the apiVersions Kubernetes serves it under (``{"Pod": ["v1"]}``), sorted."""
    out: dict[str, list[str]] = {}
    for group, ver, kind in sorted(_gvk_index(version)):
        out.setdefault(kind, []).append(f"{group}/{ver}" if group else ver)
    return out


#: Kinds that live outside namespaces: Kubernetes' own (``kubectl api-resources
#: --namespaced=false``) and the cluster-wide kinds of External Secrets Operator.
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "APIService", "CertificateSigningRequest", "ClusterRole", "ClusterRoleBinding",
        "ClusterTrustBundle", "ComponentStatus", "CSIDriver", "CSINode",
        "CustomResourceDefinition", "DeviceClass", "FlowSchema", "IngressClass",
        "IPAddress", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
        "MutatingWebhookConfiguration", "Namespace", "Node", "PersistentVolume",
        "PriorityClass", "PriorityLevelConfiguration", "RuntimeClass", "SelfSubjectAccessReview",
        "SelfSubjectReview", "SelfSubjectRulesReview", "ServiceCIDR", "StorageClass",
        "StorageVersion", "StorageVersionMigration", "SubjectAccessReview", "TokenReview",
        "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration", "VolumeAttachment", "VolumeAttributesClass",
        "ClusterSecretStore", "ClusterExternalSecret",
    }
)  # fmt: skip


@cache
def builtin_validator(
    version: tuple[int, int], api_version: str, kind: str
) -> jsonschema_rs.Validator | None:
    """The compiled strict schema of a built-in kind, or ``None`` if Kubernetes has no such kind."""
    name = builtin_definition(version, api_version, kind)
    if name is None:
        return None
    return embedded_validator(version, name)


@cache
def embedded_validator(version: tuple[int, int], definition: str) -> jsonschema_rs.Validator:
    """Compiled strict schema of one definition, e.g. ``io.k8s.api.core.v1.PodTemplateSpec``."""
    if definition not in _definitions(version)["$defs"]:
        raise KeyError(f"no Kubernetes definition {definition!r}")
    return jsonschema_rs.validator_for(
        {"$ref": f"{DEFINITIONS_URI}#/$defs/{definition}"},
        registry=definitions_registry(version),
    )


def definition_refs(node: Any, prefix: str = "#/$defs/") -> Iterator[str]:
    """Names of the definitions ``node`` refers to with ``$ref: <prefix><name>``."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(prefix):
            yield ref.removeprefix(prefix)
        for value in node.values():
            yield from definition_refs(value, prefix)
    elif isinstance(node, list):
        for value in node:
            yield from definition_refs(value, prefix)


def definition_closure(names: Iterable[str], version: tuple[int, int]) -> dict[str, Any]:
    """The Kubernetes definitions ``names`` and every definition they refer to, by name."""
    all_defs = _definitions(version)["$defs"]
    out: dict[str, Any] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in out:
            out[name] = all_defs[name]
            todo.extend(definition_refs(out[name]))
    return dict(sorted(out.items()))


@dataclass(frozen=True)
class SchemaIssue:
    """One JSON-schema violation: where in the instance, and what is wrong."""

    path: tuple[str | int, ...]
    message: str


_SENSITIVE_KEY = re.compile(
    r"(?i)(password|passwd|secret|token|api[-_]?key|access[-_]?key|credential)"
)


def sensitive_path(path: tuple[str | int, ...]) -> bool:
    """Whether a value at ``path`` may hold secret material: Secret data, env var values, and
    fields named like credentials."""
    return any(
        isinstance(part, str)
        and (part in ("data", "stringData", "value") or _SENSITIVE_KEY.search(part) is not None)
        for part in path
    )


def _allowed_fields(schema_path: list[Any], defs: Mapping[str, Any] | None) -> list[str]:
    """The properties of the Kubernetes definition an ``additionalProperties`` error came
    from (its schema path runs through ``$defs/<name>``), or ``[]`` when unknown."""
    if defs is None or "$defs" not in schema_path:
        return []
    at = len(schema_path) - 1 - schema_path[::-1].index("$defs")
    node: Any = defs.get(schema_path[at + 1]) if at + 1 < len(schema_path) else None
    for part in schema_path[at + 2 : -1]:
        node = node[part] if isinstance(node, dict | list) else None
    return sorted((node or {}).get("properties") or {}) if isinstance(node, dict) else []


def unknown_field_message(key: str, allowed: Iterable[str]) -> str:
    """``unknown field 'workingdir'; did you mean 'workingDir'?`` (the suggestion only when one
    of ``allowed`` is close)."""
    allowed = list(allowed)
    same = [name for name in allowed if name.lower() == key.lower()]
    close = same or difflib.get_close_matches(key, allowed, n=1, cutoff=0.75)
    return f"unknown field {key!r}" + (f"; did you mean {close[0]!r}?" if close else "")


def schema_issues(
    validator: jsonschema_rs.Validator,
    instance: Any,
    defs: Mapping[str, Any] | None = None,
) -> Iterator[SchemaIssue]:
    """Every violation of ``validator`` in ``instance``, most specific first, without repeats.

    ``oneOf`` failures (int-or-string values and quantities) get a message that says so; an
    unknown field is reported at its own path, with the closest known field when ``defs`` (the
    Kubernetes definitions the validator refers to) says which fields there are.
    """
    if validator.is_valid(instance):
        return
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for error in validator.iter_errors(instance):
        path = tuple(error.instance_path)
        unexpected = getattr(error.kind, "unexpected", None)
        if isinstance(unexpected, list):
            allowed = _allowed_fields(list(error.schema_path), defs)
            for key in unexpected:
                issue = ((*path, str(key)), unknown_field_message(str(key), allowed))
                if issue not in seen:
                    seen.add(issue)
                    yield SchemaIssue(*issue)
            continue
        message = error.message
        if "'oneOf'" in message:
            # Kubernetes uses oneOf only for int-or-string and quantities.
            message = f"{json.dumps(error.instance)} must be a string or a number"
        if sensitive_path(path) and not isinstance(error.instance, dict | list | bool | None):
            # Never repeat what may be a credential (Secret data, env values) in a report.
            message = message.replace(json.dumps(error.instance), "the value given")
        key = (path, message)
        if key not in seen:
            seen.add(key)
            yield SchemaIssue(*key)
