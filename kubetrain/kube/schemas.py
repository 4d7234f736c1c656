"""What kubetrain knows of the Kubernetes API: versions and the JSON schemas of built-in kinds.

The schemas are the strict variants bundled, one set per minor version, by the
``kubernetes-validate`` package; kubetrain reads the files directly and compiles them with
``jsonschema-rs`` once per process. A version newer than the newest bundled set, or older than
the oldest, is an input error rather than a silent fallback.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from .names import looks_like_credential

__all__ = [
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
    "holds_sensitive",
    "json_type",
    "parse_version",
    "schema_issues",
    "sensitive_path",
    "split_api_version",
    "supported_versions",
    "unknown_field_message",
    "value_shape",
    "version_dir",
]

DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"
_VERSION_DIR = re.compile(r"^v(\d+)\.(\d+)\.0-local-strict$")
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


@cache
def _schema_root() -> Path:
    # Found without importing kubernetes_validate, whose code kubetrain does not use (importing
    # it takes about 50 ms, a tenth of a small render).
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("kubernetes_validate", name="kubernetes_validate")
    return Path(spec.submodule_search_locations[0]) / "kubernetes-json-schema"


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


#: Fields Kubernetes' OpenAPI marks required that the API server never requires: a Go value
#: (not a pointer) that decodes to its zero value when absent, which validation then judges
#: (``k8s.io/api/core/v1`` ``SleepAction.Seconds int64``: ``sleep: {}`` is a sleep of 0 seconds,
#: accepted under PodLifecycleSleepActionAllowZero by upstream ``validateSleepAction``).
_ZERO_VALUE_REQUIRED: dict[str, frozenset[str]] = {
    "io.k8s.api.core.v1.SleepAction": frozenset({"seconds"}),
    # LimitRangeSpec.Limits []LimitRangeItem: no limits is a LimitRange limiting nothing.
    "io.k8s.api.core.v1.LimitRangeSpec": frozenset({"limits"}),
    # RoleRef.APIGroup string: empty, it is defaulted (rbac/v1 SetDefaults_RoleBinding).
    "io.k8s.api.rbac.v1.RoleRef": frozenset({"apiGroup"}),
}


def _exclusive_null(node: dict[str, Any]) -> dict[str, Any]:
    """A ``oneOf`` whose every branch also admits null (Quantity, IntOrString: ``[string,
    null] | [number, null]``) with null as a branch of its own: as written, null matches every
    branch and so fails ``oneOf``, though the server takes it (server-side apply reads a null as
    the field left out: a RuntimeClass's ``overhead.podFixed.cpu: null``)."""
    branches = node.get("oneOf")
    if not isinstance(branches, list) or not all(
        isinstance(b, dict) and isinstance(b.get("type"), list) and "null" in b["type"]
        for b in branches
    ):
        return node
    plain = [{**b, "type": [t for t in b["type"] if t != "null"]} for b in branches]
    plain = [{**b, "type": b["type"][0]} if len(b["type"]) == 1 else b for b in plain]
    return {**node, "oneOf": [*plain, {"type": "null"}]}


def _server_required(defs: dict[str, Any]) -> dict[str, Any]:
    """``defs`` without the ``required`` of :data:`_ZERO_VALUE_REQUIRED`, and with null a
    branch of its own in each ``oneOf`` (:func:`_exclusive_null`)."""
    table = {name: _exclusive_null(node) if isinstance(node, dict) else node
             for name, node in defs["$defs"].items()}  # fmt: skip
    for name, fields in _ZERO_VALUE_REQUIRED.items():
        node = table.get(name)
        if isinstance(node, dict) and node.get("required"):
            kept = [f for f in node["required"] if f not in fields]
            node = {k: v for k, v in node.items() if k != "required"}
            table[name] = {**node, "required": kept} if kept else node
    return {**defs, "$defs": table}


@cache
def definitions_registry(version: tuple[int, int]) -> jsonschema_rs.Registry:
    """A registry holding the shared definitions every built-in schema refers to, with the
    ranges of their integer formats made explicit and only the fields the server requires
    required."""
    defs = _server_required(_definitions(version))
    return jsonschema_rs.Registry([(DEFINITIONS_URI, _bounded(defs))])


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
    #: Not a refusal: a check kubetrain could not complete (reported as a warning).
    unchecked: bool = False


def value_shape(value: Any) -> str:
    """What a value is, for messages that must not show it: ``a string``, ``a number``,
    ``a mapping``..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    for kind, text in ((str, "a string"), (dict, "a mapping"), (list, "a list")):
        if isinstance(value, kind):
            return text
    return "null" if value is None else f"a {type(value).__name__}"


def _bound(word: str) -> Callable[[dict[str, Any]], str]:
    return lambda d: f"{word} {json.dumps(d.get('limit'))}"


# What a failed keyword says about a value without showing it.
_WITHOUT_VALUE: dict[str, Callable[[dict[str, Any]], str]] = {
    "type": lambda d: "is not of type " + " or ".join(map(str, d.get("types", []))),
    "enum": lambda d: f"is not one of {json.dumps(d.get('options'))}",
    "const": lambda d: f"is not {json.dumps(d.get('expected_value'))}",
    "maxLength": lambda d: f"is longer than {d.get('limit')} characters",
    "minLength": lambda d: f"is shorter than {d.get('limit')} characters",
    "pattern": lambda d: f"does not match {json.dumps(d.get('pattern'))}",
    "format": lambda d: f"is not a valid {d.get('format')}",
    "minimum": _bound("is less than the minimum of"),
    "maximum": _bound("is greater than the maximum of"),
    "exclusiveMinimum": _bound("is not greater than"),
    "exclusiveMaximum": _bound("is not less than"),
    "multipleOf": lambda d: f"is not a multiple of {d.get('multiple_of')}",
    "minItems": lambda d: f"has fewer than {d.get('limit')} items",
    "minProperties": lambda d: f"has fewer than {d.get('limit')} fields",
    "maxItems": lambda d: f"has more than {d.get('limit')} items",
    "uniqueItems": lambda d: "has repeated items",
    "oneOf": lambda d: "must be a string or a number",
    "anyOf": lambda d: "is not valid under any of the allowed schemas",
}
# Keywords whose messages name keys only, never a value.
_KEYS_ONLY = frozenset({"required", "additionalProperties", "unevaluatedProperties"})


def _without_value(error: Any) -> str:
    """The message of ``error`` without the value it is about (which may be a secret)."""
    kind = error.kind
    name = getattr(kind, "name", "")
    if name in _KEYS_ONLY:
        return str(error.message)
    try:
        details = kind.as_dict()
    except (AttributeError, TypeError, ValueError):
        details = {}
    explain = _WITHOUT_VALUE.get(name)
    rule = explain(details) if explain else f"breaks the schema's {name or 'rules'}"
    return f"the value given ({value_shape(error.instance)}, not shown) {rule}"


def holds_sensitive(value: Any, path: tuple[str | int, ...]) -> bool:
    """Whether a mapping or list at ``path`` holds a key whose value is sensitive (an
    ``args: {password: ...}`` mapping where a list belongs)."""
    todo: list[tuple[Any, tuple[str | int, ...]]] = [(value, path)]
    while todo:
        node, at = todo.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(key, str) and sensitive_path((*at, key)):
                    return True
                todo.append((item, (*at, key)))
        elif isinstance(node, list):
            todo += [(item, (*at, i)) for i, item in enumerate(node)]
    return False


def _specific(errors: Iterable[Any]) -> Iterator[Any]:
    """The errors, each ``anyOf`` failure replaced by the errors of the branch that got
    furthest into the value (an optional list's items rather than "not null"), when one did."""
    for error in errors:
        if getattr(error.kind, "name", "") != "anyOf":
            yield error
            continue
        try:
            branches = [list(b) for b in error.kind.as_dict().get("context", [])]
        except (AttributeError, TypeError, ValueError):
            branches = []
        depth = len(error.instance_path)
        deepest = max(
            branches,
            key=lambda b: max((len(e.instance_path) for e in b), default=0),
            default=[],
        )
        if any(len(e.instance_path) > depth for e in deepest):
            yield from _specific(deepest)
        else:
            yield error


#: Fields whose values a message never quotes: env vars (and any ``value``), Secret and
#: ConfigMap data, credentials.
_SENSITIVE_FIELDS = frozenset({"env", "value", "data", "stringData", "binaryData", "credentials"})


def sensitive_path(path: Sequence[str | int]) -> bool:
    """Whether a message about the value at ``path`` must not quote it, whatever its type: a
    whole document (a stack file that is one scalar), anything under an env entry, Secret or
    ConfigMap data, ``credentials`` or a credential-named key
    (:func:`~.names.looks_like_credential`, the rule job documents' credentials obey too)."""
    if not path:
        return True
    return any(
        isinstance(part, str) and (part in _SENSITIVE_FIELDS or looks_like_credential(part))
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
    *,
    base: tuple[str | int, ...] = (),
) -> Iterator[SchemaIssue]:
    """Every violation of ``validator`` in ``instance``, most specific first, without repeats.

    ``oneOf`` failures (int-or-string values and quantities) get a message that says so; an
    unknown field is reported at its own path, with the closest known field when ``defs`` (the
    Kubernetes definitions the validator refers to) says which fields there are. The message of
    a violation at a sensitive path (:func:`sensitive_path`; ``base`` is where ``instance``
    sits), or about a value holding one, never shows the value, whatever its type.
    """
    if validator.is_valid(instance):
        return
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for error in _specific(validator.iter_errors(instance)):
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
        where = (*base, *path)
        if sensitive_path(where) or holds_sensitive(error.instance, where):
            message = _without_value(error)
        elif "'oneOf'" in error.message:
            # Kubernetes uses oneOf only for int-or-string and quantities.
            message = f"{json.dumps(error.instance)} must be a string or a number"
        else:
            message = error.message
        key = (path, message)
        if key not in seen:
            seen.add(key)
            yield SchemaIssue(*key)


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, as schemas and the API server's messages name it."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "null"
