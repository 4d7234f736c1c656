"""What kubetrain knows of the Kubernetes API: versions and the JSON schemas of built-in kinds.

The schemas are the strict variants bundled, one set per minor version, by the
``kubernetes-validate`` package; kubetrain reads the files directly and compiles them with
``jsonschema-rs`` once per process. A version newer than the newest bundled set, or older than
the oldest, is an input error rather than a silent fallback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

__all__ = [
    "DEFINITIONS_URI",
    "SchemaIssue",
    "builtin_validator",
    "definition_closure",
    "definition_refs",
    "definitions",
    "definitions_registry",
    "embedded_validator",
    "parse_version",
    "schema_issues",
    "split_api_version",
    "supported_versions",
    "value_shape",
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


@cache
def definitions_registry(version: tuple[int, int]) -> jsonschema_rs.Registry:
    """A registry holding the shared definitions every built-in schema refers to."""
    return jsonschema_rs.Registry([(DEFINITIONS_URI, _definitions(version))])


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


@cache
def builtin_validator(
    version: tuple[int, int], api_version: str, kind: str
) -> jsonschema_rs.Validator | None:
    """The compiled strict schema of a built-in kind, or ``None`` if Kubernetes has no such kind."""
    group, ver = split_api_version(api_version)
    name = _gvk_index(version).get((group, ver, kind))
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


def _holds_sensitive(
    value: Any, path: tuple[str | int, ...], sensitive: Callable[[tuple[str | int, ...]], bool]
) -> bool:
    """Whether a mapping or list at ``path`` holds a key whose value is sensitive (an
    ``args: {password: ...}`` mapping where a list belongs)."""
    todo: list[tuple[Any, tuple[str | int, ...]]] = [(value, path)]
    while todo:
        node, at = todo.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if isinstance(key, str) and sensitive((*at, key)):
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


def schema_issues(
    validator: jsonschema_rs.Validator,
    instance: Any,
    *,
    sensitive: Callable[[tuple[str | int, ...]], bool],
) -> Iterator[SchemaIssue]:
    """Every violation of ``validator`` in ``instance``, most specific first, without repeats.

    ``oneOf`` failures (int-or-string values and quantities) get a message that says so. The
    message of a violation at a path where ``sensitive`` holds never shows the value, whatever
    its type (it may be a credential: Secret data, env values).
    """
    if validator.is_valid(instance):
        return
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for error in _specific(validator.iter_errors(instance)):
        path = tuple(error.instance_path)
        if sensitive(path) or _holds_sensitive(error.instance, path, sensitive):
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
