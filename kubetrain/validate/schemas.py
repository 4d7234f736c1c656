"""Where the JSON schema of a kind comes from, in kubeconform's terms.

A catalog tries, in order: the schema locations given by the user (kubeconform's template
syntax, local paths or http(s) URLs), the strict Kubernetes schemas of the target version, and
the schemas kubetrain generates from its own models for the kinds it emits beyond Kubernetes.
Compiled validators are cached per catalog.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

from ..kube import schemas as k8s
from ..models.base import K8S_DEFINITION_KEY, resource_kinds
from ..models.errors import InputError
from ..models.limits import MAX_FILE_BYTES
from ..models.source import read_text

__all__ = ["DEFAULT_LOCATION", "SchemaCatalog", "location_path"]

#: The location keyword meaning "the built-in Kubernetes schemas", as in kubeconform.
DEFAULT_LOCATION = "default"
_VAR = re.compile(r"\{\{-?\s*\.(\w+)\s*-?\}\}")
_TEMPLATE_VARS = {
    "NormalizedKubernetesVersion",
    "StrictSuffix",
    "ResourceKind",
    "ResourceAPIVersion",
    "Group",
    "KindSuffix",
}
_DIRECTORY_LAYOUT = (
    "/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}"
    "/{{ .ResourceKind }}{{ .KindSuffix }}.json"
)


def location_path(
    template: str, api_version: str, kind: str, version: tuple[int, int], strict: bool = True
) -> str:
    """Expand one kubeconform schema location for a kind.

    A location without ``{{`` is a folder in kubeconform's standalone layout. The variables mean
    what they mean to kubeconform, including its quirks (``Group`` is ``v1`` for core kinds).
    """
    if "{{" not in template:
        template = template.rstrip("/") + _DIRECTORY_LAYOUT
    parts = api_version.split("/")
    group_first = parts[0].split(".")[0]
    kind_suffix = "-" + group_first.lower() + (f"-{parts[1].lower()}" if len(parts) > 1 else "")
    values = {
        "NormalizedKubernetesVersion": f"v{version[0]}.{version[1]}.0",
        "StrictSuffix": "-strict" if strict else "",
        "ResourceKind": kind.lower(),
        "ResourceAPIVersion": parts[-1],
        "Group": parts[0],
        "KindSuffix": kind_suffix,
    }

    def substitute(m: re.Match[str]) -> str:
        return values[m[1]]

    return _VAR.sub(substitute, template)


def check_location(template: str) -> str | None:
    """A message if ``template`` uses template syntax kubetrain does not understand."""
    if template == DEFAULT_LOCATION:
        return None
    unknown = sorted({m[1] for m in _VAR.finditer(template)} - _TEMPLATE_VARS)
    if unknown:
        return f"unknown template variable {', '.join(unknown)} in {template!r}"
    if "{{" in _VAR.sub("", template):
        return (
            f"unsupported template syntax in {template!r} (only {{{{ .Variable }}}} is supported)"
        )
    return None


#: Seconds a schema URL may take to answer (kubeconform's HTTP client has no timeout at all;
#: a CI job should not hang on a dead mirror).
FETCH_TIMEOUT = 5.0
# Hosts that did not answer: every other kind's URL there fails at once instead of waiting too.
_UNREACHABLE: dict[str, str] = {}


@cache
def _fetch(location: str) -> Any | None:
    """The JSON document at a path or URL, or ``None`` when there is none. A location that
    cannot be used raises :class:`OSError` with a message naming it."""
    if location.startswith(("http://", "https://")):
        return _fetch_url(location)
    path = Path(location.removeprefix("file://"))
    try:
        if not path.is_file():
            return None
        text = read_text(path, "a JSON schema")
    except InputError as exc:
        raise OSError(f"schema {location}: {exc.problems[0].message}") from None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise OSError(f"schema {location} is not JSON: {exc}") from None


def _fetch_url(location: str) -> Any | None:
    # Imported here: most runs read no schema over HTTP, and urllib.request (with ssl and
    # http.client) takes a tenth of validate's start.
    import socket
    import urllib.error
    import urllib.parse
    import urllib.request

    host = urllib.parse.urlsplit(location).netloc
    if host in _UNREACHABLE:
        raise OSError(f"cannot fetch schema {location}: {_UNREACHABLE[host]}")
    try:
        with urllib.request.urlopen(location, timeout=FETCH_TIMEOUT) as response:
            body = response.read(MAX_FILE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise OSError(f"cannot fetch schema {location}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:  # TimeoutError is an OSError
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError | socket.timeout) or "timed out" in str(reason):
            reason = f"no answer within {FETCH_TIMEOUT:g} s"
        _UNREACHABLE[host] = str(reason)
        raise OSError(f"cannot fetch schema {location}: {reason}") from None
    if len(body) > MAX_FILE_BYTES:
        raise OSError(f"schema {location} is over {MAX_FILE_BYTES // 2**20} MiB")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise OSError(f"schema {location} is not JSON: {exc}") from None


def _with_k8s_refs(schema: Any) -> Any:
    """Replace embedded Kubernetes types (see ``K8sType``) with refs to their strict schemas."""
    if isinstance(schema, dict):
        if K8S_DEFINITION_KEY in schema:
            return {"$ref": f"{k8s.DEFINITIONS_URI}#/$defs/{schema[K8S_DEFINITION_KEY]}"}
        return {k: _with_k8s_refs(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_with_k8s_refs(v) for v in schema]
    return schema


@cache
def model_schema(api_version: str, kind: str) -> dict[str, Any] | None:
    """JSON schema of a kind kubetrain emits, generated from its model, or ``None``."""
    model = resource_kinds().get((api_version, kind))
    if model is None:
        return None
    schema: dict[str, Any] = _with_k8s_refs(
        model.model_json_schema(by_alias=True, mode="validation")
    )
    return schema


class SchemaCatalog:
    """Compiled validators for one Kubernetes version and one list of schema locations."""

    def __init__(self, version: tuple[int, int], locations: Sequence[str] = ()) -> None:
        self.version = version
        self.locations = list(locations)
        self._cache: dict[tuple[str, str], tuple[jsonschema_rs.Validator | None, str]] = {}

    def lookup(self, api_version: str, kind: str) -> tuple[jsonschema_rs.Validator | None, str]:
        """The validator of a kind and where its schema came from (``None`` if nowhere)."""
        key = (api_version, kind)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._find(api_version, kind)
        return found

    def _find(self, api_version: str, kind: str) -> tuple[jsonschema_rs.Validator | None, str]:
        for location in self.locations:
            if location == DEFAULT_LOCATION:
                validator = k8s.builtin_validator(self.version, api_version, kind)
                if validator is not None:
                    return validator, "kubernetes"
                continue
            path = location_path(location, api_version, kind, self.version)
            schema = _fetch(path)
            if schema is not None:
                return self._compile(schema), path
        validator = k8s.builtin_validator(self.version, api_version, kind)
        if validator is not None:
            return validator, "kubernetes"
        schema = model_schema(api_version, kind)
        if schema is not None:
            return self._compile(schema), "kubetrain"
        return None, ""

    def _compile(self, schema: Any) -> jsonschema_rs.Validator:
        return jsonschema_rs.validator_for(schema, registry=k8s.definitions_registry(self.version))
