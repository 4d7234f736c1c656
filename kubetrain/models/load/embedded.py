"""Embedded Kubernetes types (:class:`~kubetrain.models.base.K8sType` fields) against the stack's
Kubernetes version: their schema, then what the API server refuses of them once built."""

from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from ...kube import apiserver
from ...kube import schemas as k8s
from ..base import (
    K8sType,
)
from ..errors import PathPart, format_path
from ..resources import as_built
from ..stack import StackSettings


def embedded_problems(
    model: BaseModel, settings: StackSettings
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """Problems of every :class:`K8sType` field against the stack's Kubernetes version: its
    schema, then what the API server would refuse once the field is built into an object."""
    for name, alias, marker, annotation in _embedded_fields(type(model)):
        value = getattr(model, name)
        if value is not None:
            yield from embedded_value(value, annotation, marker, (alias,), settings)


@functools.cache
def _embedded_fields(cls: type[BaseModel]) -> tuple[tuple[str, str, K8sType | None, Any], ...]:
    """(attribute, key, marker, annotation) of the fields of ``cls`` that may hold an embedded
    Kubernetes type, at any depth (the others, scalars mostly, are not walked)."""
    out = []
    for name, info in cls.model_fields.items():
        marker = next((m for m in info.metadata if isinstance(m, K8sType)), None)
        if marker is not None or _may_embed(info.annotation, set()):
            out.append((name, info.alias or name, marker, info.annotation))
    return tuple(out)


def _may_embed(annotation: Any, seen: set[Any]) -> bool:
    """Whether a value of ``annotation`` may hold a :class:`K8sType` field."""
    if typing.get_origin(annotation) is typing.Annotated and any(
        isinstance(m, K8sType) for m in typing.get_args(annotation)[1:]
    ):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(
            any(isinstance(m, K8sType) for m in info.metadata) or _may_embed(info.annotation, seen)
            for info in annotation.model_fields.values()
        )
    return any(_may_embed(arg, seen) for arg in typing.get_args(annotation))


#: The findings of embedded Kubernetes values already checked, by what decides them (the
#: stack's version and GPU resource, the definition, where the value is and the value itself):
#: the job documents of a stack repeat the same pod templates hundreds of times.
_EMBEDDED: dict[tuple[Any, ...], tuple[tuple[tuple[PathPart, ...], str], ...]] = {}
_EMBEDDED_SIZE = 4096


def _embedded_found(
    value: Any, definition: str, path: tuple[PathPart, ...], settings: StackSettings
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """The schema's findings of an embedded Kubernetes value, then (only of a value the
    schema accepts: the checks read values of their types) what the API server checks beyond
    it, of the value as it is built into an object; remembered by the value's JSON."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):  # not plain data: checked, never remembered
        text = None
    key = (settings.version, settings.gpu_resource, definition, path, text)
    found = _EMBEDDED.get(key) if text is not None else None
    if found is None:
        version = settings.version
        validator = k8s.embedded_validator(version, definition)
        defs = k8s.definitions(version)["$defs"]
        schema = [
            (issue.path, _placed(definition, defs, issue.path, issue.message, path))
            for issue in k8s.schema_issues(validator, value, defs, base=path)
        ]
        found = tuple(
            schema
            or [
                (issue.path, issue.message)
                for issue in apiserver.embedded_issues(
                    definition, as_built(definition, value, settings.gpu_resource), version
                )
            ]
        )
        if text is not None:
            if len(_EMBEDDED) >= _EMBEDDED_SIZE:
                _EMBEDDED.clear()
            _EMBEDDED[key] = found
    for sub_path, message in found:
        yield (*path, *sub_path), message


def _placed(
    definition: str,
    defs: Mapping[str, Any],
    path: tuple[PathPart, ...],
    message: str,
    base: tuple[PathPart, ...] = (),
) -> str:
    """An unknown field of an embedded Kubernetes type, with where it belongs when an enclosing
    object of the type has it (``volumeMounts`` indented under ``resources`` belongs to the
    container): an indentation slip, not a misspelling."""
    if not message.startswith("unknown field ") or "did you mean" in message or not path:
        return message
    key = path[-1]
    if not isinstance(key, str):
        return message
    from ..fields import FieldNode  # the walker over Kubernetes' definitions

    root = FieldNode({"$ref": f"#/$defs/{definition}"}, defs)
    for depth in range(len(path) - 2, -1, -1):
        above = root.at(path[:depth])
        if above is not None and key in (above.schema.get("properties") or {}):
            where = format_path((*base, *path[:depth]))
            under = format_path((*base, *path[:-1]))
            return f"{message}; it belongs under {where}, not under {under}: check its indentation"
    return message


def embedded_value(
    value: Any,
    annotation: Any,
    marker: K8sType | None,
    path: tuple[PathPart, ...],
    settings: StackSettings,
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    if value is None:
        return
    if marker is None and typing.get_origin(annotation) is typing.Annotated:
        marker = next((m for m in typing.get_args(annotation)[1:] if isinstance(m, K8sType)), None)
    if marker is not None:
        yield from _embedded_found(value, marker.definition, path, settings)
    elif isinstance(value, BaseModel):
        for sub_path, message in embedded_problems(value, settings):
            yield (*path, *sub_path), message
    elif isinstance(value, dict | list):
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            args = tuple(a for a in args if a is not type(None))
            inner = args[0] if len(args) == 1 else None
            yield from embedded_value(value, inner, None, path, settings)
            return
        item_type = args[-1] if args else None
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from embedded_value(item, item_type, None, (*path, key), settings)
