"""Kubernetes' ``$(VAR)`` expansion of container environment values, as the kubelet does it.

Follows ``third_party/forked/golang/expansion/expand.go`` (``Expand``, ``MappingFuncFor``,
``tryReadVariableName``) and the order of ``makeEnvironmentVariables`` in
``pkg/kubelet/kubelet_pods.go``: ``envFrom`` entries first (never expanded), then each ``env``
entry in order, a ``value`` expanded against the variables defined before it (then the
service-link variables), a ``valueFrom`` resolved by the caller. Go's expansion works on bytes:
``$`` followed by a byte that starts neither ``$`` nor ``(`` is copied as ``$`` plus that byte
read as a code point (Go's ``string(byte)``), which re-encodes a non-ASCII byte; that is kept,
and undecodable bytes come back as surrogate escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["container_environment", "expand", "mapping_func_for"]

_OPERATOR = ord("$")
_OPENER = ord("(")
_CLOSER = ord(")")


def mapping_func_for(*contexts: Mapping[str, str]) -> Callable[[str], str]:
    """A mapping that looks ``name`` up in each context in turn and, when none defines it, keeps
    the reference as written, ``$(name)`` (``MappingFuncFor``)."""

    def mapping(name: str) -> str:
        for context in contexts:
            if name in context:
                return context[name]
        return f"$({name})"

    return mapping


def _try_read_variable_name(data: bytes) -> tuple[bytes, bool, int]:
    """(bytes read, whether they name a variable, bytes consumed) after a ``$``
    (``tryReadVariableName``)."""
    first = data[0]
    if first == _OPERATOR:
        return data[:1], False, 1  # $$: an escaped operator
    if first == _OPENER:
        for i in range(1, len(data)):
            if data[i] == _CLOSER:
                return data[1:i], True, i + 1
        return b"$(", False, 1  # an unclosed reference is kept as written
    return b"$" + chr(first).encode(), False, 1


def expand(text: str, mapping: Callable[[str], str]) -> str:
    """``text`` with each ``$(NAME)`` replaced by ``mapping(NAME)`` and ``$$`` by ``$``."""
    data = text.encode("utf-8", "surrogateescape")
    out = bytearray()
    checkpoint = 0
    cursor = 0
    while cursor < len(data):
        if data[cursor] == _OPERATOR and cursor + 1 < len(data):
            out += data[checkpoint:cursor]
            read, is_var, advance = _try_read_variable_name(data[cursor + 1 :])
            if is_var:
                name = read.decode("utf-8", "surrogateescape")
                out += mapping(name).encode("utf-8", "surrogateescape")
            else:
                out += read
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out += data[checkpoint:]
    return out.decode("utf-8", "surrogateescape")


def container_environment(
    container: Mapping[str, Any],
    value_from: Callable[[Mapping[str, Any]], str],
    source: Callable[[Mapping[str, Any]], Mapping[str, str]] | None = None,
    service_env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment a container's process sees, by name, in definition order.

    The cluster decides what the rendered object cannot say, so the caller supplies it:
    ``value_from`` resolves an ``env`` entry's ``valueFrom`` (called with the entry), ``source``
    the keys and values of an ``envFrom`` source (a ConfigMap's or Secret's data; none when not
    given), ``service_env`` the service-link variables (``<SERVICE>_SERVICE_HOST`` ...).
    """
    env: dict[str, str] = {}
    for entry in container.get("envFrom") or ():
        prefix = entry.get("prefix") or ""
        for key, value in (source(entry) if source else {}).items():
            env[f"{prefix}{key}"] = value
    mapping = mapping_func_for(env, service_env or {})
    for entry in container.get("env") or ():
        value = entry.get("value") or ""
        if value:
            value = expand(value, mapping)
        elif entry.get("valueFrom") is not None:
            value = value_from(entry)
        env[entry["name"]] = value
    return env
