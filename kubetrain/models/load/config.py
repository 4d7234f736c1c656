"""Decoding configuration: the ``kubetrain:*`` keys of a stack file or of Pulumi config, and
model attribute names (Pulumi inputs) as document keys."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..errors import InputError, PathPart, Problem
from ..source import (
    Document,
    load_documents,
)
from ..stack import CONFIG_NAMESPACE, StackSettings
from .messages import models_in


def document_keys(model: type[BaseModel], data: Any) -> Any:
    """``data`` with model attribute names (``tf_replica_specs``) renamed to the document keys
    (``tfReplicaSpecs``), following the model's nested models; keys already spelled as in the
    document and unknown keys are kept (validation reports the unknown ones). Embedded
    Kubernetes types are left alone: their keys are Kubernetes' own. A field holding one of
    several models (a Learner's data store: ``mount_cos`` or ``host_mount``) renames the keys
    of every one of them (``host_path`` -> ``hostPath``)."""
    return _document_keys((model,), data)


def _document_keys(models: tuple[type[BaseModel], ...], data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    fields: dict[str, tuple[str, Any]] = {}
    for model in models:
        for n, f in model.model_fields.items():
            fields.setdefault(n, (f.alias or n, f.annotation))
    by_key: dict[str, Any] = {}
    for alias, annotation in fields.values():
        by_key.setdefault(alias, annotation)
    out: dict[Any, Any] = {}
    for key, value in data.items():
        if key in by_key:
            target, annotation = key, by_key[key]
        elif key in fields and fields[key][0] not in data:
            target, annotation = fields[key]
        else:
            out[key] = value
            continue
        found = list(models_in(annotation))
        if not found:
            out[target] = value
            continue
        inner = tuple(dict.fromkeys(model for model, _ in found))
        keyed = found[0][1]
        if not keyed:
            out[target] = _document_keys(inner, value)
        elif isinstance(value, dict):
            out[target] = {k: _document_keys(inner, v) for k, v in value.items()}
        elif isinstance(value, list):
            out[target] = [_document_keys(inner, v) for v in value]
        else:
            out[target] = value
    return out


def config_keys() -> dict[str, bool]:
    """Every ``kubetrain:*`` key a stack may set (without the prefix), and whether Pulumi passes
    its value to programs as plain text (``True``) rather than JSON."""
    return {
        (field.alias or name): _is_text(field.annotation)
        for name, field in StackSettings.model_fields.items()
    }


def _is_text(annotation: Any) -> bool:
    """Whether a settings field holds a string (``str``, string literals, optional or not)."""
    if annotation is str:
        return True
    if isinstance(annotation, type) and issubclass(annotation, str):  # a StrEnum: Mode
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:  # DNSLabel and the like: a constrained str
        return _is_text(typing.get_args(annotation)[0])
    if origin is Literal:
        return all(isinstance(arg, str) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(_is_text(a) for a in args)
    return False


def decode_config_value(key: str, raw: str) -> Any:
    """A Pulumi config value as the stack file would hold it: strings stay strings, everything
    else is JSON (kept as text when it is not, so validation quotes what was given)."""
    if config_keys().get(key, False):
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


def lines_of_same_values(
    file: Path | None, config: Mapping[str, Any]
) -> dict[tuple[PathPart, ...], int]:
    """Line numbers from the stack file for the config keys whose value is written there as
    given (a value set elsewhere, e.g. in a Pulumi ESC environment, gets no line)."""
    if file is None or not file.is_file():
        return {}
    try:
        written = load_documents(file)
    except InputError:
        return {}
    if len(written) != 1 or not isinstance(written[0].data, dict):
        return {}
    in_file = written[0].data.get("config")
    if not isinstance(in_file, dict):
        return {}
    same = {key for key, value in config.items() if key in in_file and in_file[key] == value}
    return {
        path: line
        for path, line in written[0].lines.items()
        if len(path) >= 2 and path[0] == "config" and path[1] in same
    }


def prefixed(part: PathPart) -> PathPart:
    """Map a settings field path back to the stack file key (``namespace`` -> ``kubetrain:...``)."""
    return f"{CONFIG_NAMESPACE}:{part}"


def our_config(doc: Document) -> tuple[dict[str, Any], list[Problem]]:
    """The ``kubetrain:*`` keys without their prefix; other namespaces are someone else's."""
    config = doc.data.get("config") or {}
    ours: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in config.items():
        namespace, colon, rest = str(key).partition(":")
        if not colon:
            problems.append(
                doc.problem(
                    ("config", key),
                    f"config keys are namespaced, e.g. '{CONFIG_NAMESPACE}:{key}' "
                    "(Pulumi stack file)",
                )
            )
        elif namespace == CONFIG_NAMESPACE:
            ours[rest] = value
    return ours, problems
