"""pydantic's errors as kubetrain's messages: the real field path, the value quoted (never a
secret one), a did-you-mean or where an unknown key belongs."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from ...kube import schemas as k8s
from ..errors import PathPart, Problem
from ..secrets import (
    credential_value_message,
    looks_like_credential,
)
from ..source import (
    Document,
)


def kind_of(value: Any) -> str:
    """What ``value`` is, for a message that must not quote it (it may be a credential)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "a " + type(value).__name__


M = typing.TypeVar("M", bound=BaseModel)


def validated(
    cls: type[M],
    doc: Document,
    problems: list[Problem],
    *,
    data: Any = None,
    keymap: typing.Callable[[PathPart], PathPart] | None = None,
    secrets: Sequence[tuple[PathPart, ...]] = (),
) -> M | None:
    """``cls`` validated from ``doc``; its errors go to ``problems``. A message never quotes a
    value that may be secret: one at a sensitive path, or holding one of ``secrets`` (paths of
    credential material found in the document)."""
    value = doc.data if data is None else data
    try:
        return cls.model_validate(value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # A map key refused (a replica type that is none): what its value lacks or has too much
        # only follows from that, so it is not reported.
        bad_keys = [e["loc"][:-1] for e in errors if e["loc"][-1:] == ("[key]",)]
        for error in errors:
            raw = error["loc"]
            if any(raw[: len(k)] == k and raw != (*k, "[key]") for k in bad_keys):
                continue
            hint = _misplaced_key(cls, raw[:-1]) if raw[-1:] == ("[key]",) else ""
            loc = _real_path(value, error["loc"])
            secret = k8s.sensitive_path(doc.base + loc) or any(
                p[: len(loc)] == loc for p in secrets
            )
            if keymap is not None and loc:
                loc = (keymap(loc[0]), *loc[1:])
            problems.append(doc.problem(loc, _message(cls, error, quote=not secret) + hint))
        return None


def _misplaced_key(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """For a refused map key that is a field of the map's values (``template`` dedented to the
    level of the replica types): the hint that the indentation is the slip."""
    key = loc[-1] if loc else None
    values = _model_at(root, loc)
    if isinstance(key, str) and values is not None and key in _aliases(values):
        holder = _dotted([str(x) for x in loc[:-1]])
        return f"; {key!r} is a field of each entry of {holder}, not an entry: indent it under one"
    return ""


def _real_path(data: Any, loc: Sequence[Any]) -> tuple[PathPart, ...]:
    """pydantic's ``loc`` without the entries that name validators or union members."""
    path: list[PathPart] = []
    current = data
    for i, part in enumerate(loc):
        if isinstance(current, dict) and part not in current and isinstance(part, str):
            # A key the model normalised (replica types); Document.problem restores its spelling.
            part = next(
                (k for k in current if isinstance(k, str) and k.lower() == part.lower()), part
            )
        indexable = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if (isinstance(current, dict) and part in current) or indexable:
            current = current[part]
        elif part == "[key]":
            continue  # pydantic's marker for "the key itself", already in the path
        elif isinstance(current, dict) and i == len(loc) - 1 and isinstance(part, str):
            pass  # a missing or unknown key: keep it, it is the subject of the message
        else:
            continue
        path.append(part)
    return tuple(path)


def _message(root: type[BaseModel], error: Any, *, quote: bool = True) -> str:
    """pydantic's error as kubetrain's message; with ``quote=False`` (a value that may be secret
    material, see :func:`~kubetrain.kube.schemas.sensitive_path`) the value received is never
    shown."""
    kind, msg, value = error["type"], error["msg"], error.get("input")
    if not quote and kind not in ("missing", "extra_forbidden", "value_error"):
        return f"{msg}, got {k8s.value_shape(value)} (not shown)"
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        key = error["loc"][-1]
        if isinstance(key, str) and looks_like_credential(key):
            return credential_value_message()
        return _unknown_field(root, tuple(error["loc"][:-1]), key)
    if kind == "value_error":
        message = str(msg).removeprefix("Value error, ")
        # kubetrain's own checks end with ", got <value>" when they quote one.
        return message if quote else message.rpartition(", got ")[0] or message
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        op = {
            "greater_than_equal": ">=",
            "less_than_equal": "<=",
            "greater_than": ">",
            "less_than": "<",
        }
        bound = next(iter(error["ctx"].values()))
        return f"must be {op[kind]} {bound}, got {_quoted(value)}"
    if isinstance(value, str | int | float | bool) or value is None:
        return f"{msg}, got {_quoted(value)}"
    return f"{msg}, got {k8s.value_shape(value)}"


def _quoted(value: Any) -> str:
    """A value as messages show it: as YAML wrote it, ``true``, ``null``, ``'text'``, ``NaN``."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, float) and value != value:
        return "NaN"
    return repr(value)


def _unknown_field(root: type[BaseModel], parent: tuple[Any, ...], key: Any) -> str:
    here = _model_at(root, parent)
    message = f"unknown field {key!r}"
    if here is not None:
        allowed = sorted(_aliases(here))
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.75)
        if close:
            message += f"; did you mean {close[0]!r}?"
        belongs = [p for p in _where_defined(root, str(key)) if p != tuple(str(x) for x in parent)]
        above = [p for p in belongs if _is_above(p, parent)]
        if above and not close:
            # An indentation slip: the key is written under a sibling of where it belongs.
            p = max(above, key=len)
            where = _dotted((*p, str(key))) if p else "the top level of the document"
            under = _dotted([f"[{x}]" if isinstance(x, int) else str(x) for x in parent])
            message += f"; it belongs at {where}, not under {under}: check its indentation"
        elif belongs and not close:
            where = " or ".join(_dotted((*p, str(key))) for p in belongs[:3])
            message += f"; it belongs at {where}"
        if not close and not belongs:
            message += f"; allowed here: {', '.join(allowed)}"
    return message


def _is_above(path: tuple[str, ...], parent: tuple[Any, ...]) -> bool:
    """Whether ``path`` (with ``<key>`` / ``[*]`` placeholders) is a proper ancestor of the
    concrete ``parent`` path."""
    return len(path) < len(parent) and all(
        part in ("<key>", "[*]") or part == str(given)
        for part, given in zip(path, parent, strict=False)
    )


def _aliases(cls: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or n): f.annotation for n, f in cls.model_fields.items()}


def models_in(annotation: Any) -> Iterator[tuple[type[BaseModel], str]]:
    """Models reachable from a type annotation, and the key or index that precedes them, as a
    placeholder for messages (``<key>``, ``[*]``; empty when there is none)."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, ""
    elif origin in (list, tuple, dict):
        for arg in typing.get_args(annotation)[-1:]:
            for model, _ in models_in(arg):
                yield model, "<key>" if origin is dict else "[*]"
    elif origin in (typing.Union, types.UnionType, typing.Annotated):
        for arg in typing.get_args(annotation):
            yield from models_in(arg)


def _model_at(root: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    current: type[BaseModel] = root
    parts = list(path)
    while parts:
        part = parts.pop(0)
        annotation = _aliases(current).get(part)
        if annotation is None:
            return None
        found = next(iter(models_in(annotation)), None)
        if found is None:
            return None
        current, keyed = found
        if keyed and parts:
            parts.pop(0)
    return current


def _dotted(path: Sequence[str]) -> str:
    """``("spec", "replicaSpecs", "[*]", "tfPort")`` -> ``spec.replicaSpecs[*].tfPort``."""
    return "".join(p if p.startswith("[") or not i else f".{p}" for i, p in enumerate(path))


def _where_defined(root: type[BaseModel], key: str) -> list[tuple[str, ...]]:
    """Field paths of ``root`` (without map keys or indexes) that define the field ``key``."""
    out: list[tuple[str, ...]] = []
    seen: set[type[BaseModel]] = set()

    def walk(cls: type[BaseModel], path: tuple[str, ...]) -> None:
        if cls in seen:
            return
        seen.add(cls)
        fields = _aliases(cls)
        if key in fields:
            out.append(path)
        for alias, annotation in fields.items():
            for model, keyed in models_in(annotation):
                walk(model, (*path, alias, keyed) if keyed else (*path, alias))

    walk(root, ())
    return out
