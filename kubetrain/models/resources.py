"""Resources and accelerators, normalised in one place.

GPUs may be written under ``nvidia.com/gpu``, the pre-device-plugin ``alpha.kubernetes.io/
nvidia-gpu`` or the stack's ``gpuResource``. kubetrain reads them from either place, rejects
conflicts and fractions, and writes them once, under ``gpuResource``, with requests equal to
limits (Kubernetes does not overcommit extended resources).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from ..kube.quantity import parse_quantity
from .base import plain_copy

__all__ = [
    "GPU_ALIASES",
    "as_built",
    "gpu_count",
    "gpu_findings",
    "gpu_problems",
    "normalize_gpus",
    "normalize_pod_gpus",
    "pod_gpu_problems",
    "quantity_refusals",
]

#: Resource names that mean "NVIDIA GPUs" besides the stack's own gpuResource.
GPU_ALIASES = ("nvidia.com/gpu", "alpha.kubernetes.io/nvidia-gpu")

Path = tuple[str | int, ...]


@functools.cache
def _names(gpu_resource: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys((gpu_resource, *GPU_ALIASES)))


def _whole(value: Any) -> int | None:
    """A GPU count: a quantity whose value is a whole, non-negative number (``2``, ``"2"``,
    ``"1000m"``), compared by value as Kubernetes does; else ``None``."""
    try:
        quantity = parse_quantity(value)
    except ValueError:
        return None
    number = quantity.value
    return int(number) if number >= 0 and number.denominator == 1 else None


def _is_quantity(value: Any) -> bool:
    try:
        parse_quantity(value)
    except ValueError:
        return False
    return True


def _count_message(value: Any) -> str:
    """Why ``value`` is no GPU count: not a number at all, or not a whole one."""
    try:
        parse_quantity(value)
    except ValueError:
        return f"{value!r} is not a number of GPUs: give a whole number, e.g. 2"
    return f"GPUs are whole devices, got {value!r}"


def quantity_refusals(resources: Any) -> Iterator[tuple[Path, str]]:
    """(path below one container's ``resources``, message) of each request or limit the API
    server refuses in a pod (``ValidateResourceRequirements``: a quantity, not negative) or
    kubetrain cannot count (past 64 bits); a value of another type is the schema's to refuse."""
    if type(resources) is not dict and not isinstance(resources, Mapping):
        return
    for part in ("limits", "requests"):
        values = resources.get(part)
        for name, value in values.items() if isinstance(values, Mapping) else ():
            if type(value) not in (str, int):
                continue
            try:
                negative = parse_quantity(value).value < 0
            except ValueError as exc:
                yield (part, name), str(exc)
                continue
            if negative:
                yield (part, name), f"must be greater than or equal to 0, got {value!r}"


def gpu_findings(
    resources: Mapping[str, Any] | None, gpu_resource: str
) -> list[tuple[str, Path, str]]:
    """Problems with the GPUs of one container's ``resources`` as (code, path, message), paths
    relative to ``resources``. Codes: ``count`` (not a whole number, or conflicting counts under
    two names), ``requests`` (requests differ from limits) and ``limits`` (GPUs requested but not
    limited: Kubernetes takes extended resources from limits)."""
    problems: list[tuple[str, Path, str]] = []
    if type(resources) is not dict and not isinstance(resources, Mapping):
        return problems
    counts: dict[str, dict[str, int]] = {}
    for part in ("limits", "requests"):
        values = resources.get(part) or {}
        if type(values) is not dict and not isinstance(values, Mapping):
            continue
        for name in _names(gpu_resource):
            if name in values:
                n = _whole(values[name])
                if n is None:
                    problems.append(("count", (part, name), _count_message(values[name])))
                else:
                    counts.setdefault(part, {})[name] = n
    for part, found in counts.items():
        if len(set(found.values())) > 1:
            given = ", ".join(f"{k}: {v}" for k, v in found.items())
            problems.append(("count", (part,), f"conflicting GPU counts ({given}); give GPUs once"))
    limits = max(counts.get("limits", {}).values(), default=None)
    requests = max(counts.get("requests", {}).values(), default=None)
    if limits is not None and requests is not None and limits != requests:
        problems.append(
            (
                "requests",
                ("requests",),
                f"GPU requests must equal limits, got requests {requests}, limits {limits}",
            )
        )
    if limits is None and requests is not None:
        name = next(iter(counts["requests"]))
        problems.append(
            (
                "limits",
                ("requests", name),
                f"GPUs are requested ({name}: {requests}) but not limited; give them in limits",
            )
        )
    return problems


def normalize_pod_gpus(pod_spec: dict[str, Any], gpu_resource: str) -> dict[str, Any]:
    """Rewrite, in place, every container's GPUs under ``gpu_resource`` with requests equal to
    limits (see :func:`normalize_gpus`). Returns ``pod_spec``."""
    for field in ("initContainers", "containers"):
        for container in pod_spec.get(field) or ():
            if isinstance(container, dict) and isinstance(container.get("resources"), dict):
                container["resources"] = normalize_gpus(container["resources"], gpu_resource)
    return pod_spec


def as_built(definition: str, value: Any, gpu_resource: str) -> Any:
    """An embedded Kubernetes type (by definition name) as the builders emit it: GPUs once, under
    ``gpu_resource``, with requests equal to limits. What the API server will be given, so what
    load-time checks judge."""
    if definition == "io.k8s.api.core.v1.ResourceRequirements":
        return normalize_gpus(value, gpu_resource)
    if definition == "io.k8s.api.core.v1.PodTemplateSpec" and isinstance(value, dict):
        template = plain_copy(value)
        if isinstance(template.get("spec"), dict):
            normalize_pod_gpus(template["spec"], gpu_resource)
        return template
    return value


def gpu_problems(resources: Mapping[str, Any] | None, gpu_resource: str) -> list[tuple[Path, str]]:
    """Problems with the GPUs of one container's ``resources`` (paths relative to it) that a job
    document may not have: kubetrain itself copies GPUs that are only requested into limits."""
    return [
        (path, message)
        for code, path, message in gpu_findings(resources, gpu_resource)
        if code != "limits"
    ]


def gpu_count(resources: Mapping[str, Any] | None, gpu_resource: str) -> int:
    """GPUs of one container: from limits, else from requests (0 when none)."""
    if not isinstance(resources, Mapping):
        return 0
    for part in ("limits", "requests"):
        values = resources.get(part) or {}
        for name in _names(gpu_resource):
            if name in values and (n := _whole(values[name])) is not None:
                return n
    return 0


def normalize_gpus(resources: Mapping[str, Any] | None, gpu_resource: str) -> dict[str, Any] | None:
    """``resources`` with GPUs under ``gpu_resource`` only, requests equal to limits.

    Returns a shallow copy of the input when it has no GPUs, and ``None`` for ``None``.
    """
    if not isinstance(resources, Mapping):
        return None
    names = _names(gpu_resource)
    has = any(
        name in (resources.get(part) or {}) for part in ("limits", "requests") for name in names
    )
    counts = [
        v
        for part in ("limits", "requests")
        for name, v in (resources.get(part) or {}).items()
        if name in names
    ]
    if not has or not all(_is_quantity(v) for v in counts):
        # A count that is not even a quantity ("two") is left as written, for the checks to
        # name it rather than count it as none.
        return dict(resources)
    n = gpu_count(resources, gpu_resource)
    out = dict(resources)
    for part in ("limits", "requests"):
        values = {k: v for k, v in (resources.get(part) or {}).items() if k not in names}
        values[gpu_resource] = n
        out[part] = values
    return out


def pod_gpu_problems(
    pod_spec: Mapping[str, Any] | None, gpu_resource: str
) -> list[tuple[Path, str]]:
    """GPU problems of every container and init container of a pod spec (paths relative to it)."""
    problems: list[tuple[Path, str]] = []
    if not isinstance(pod_spec, Mapping):
        return problems
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or ()):
            if isinstance(container, Mapping):
                for path, message in gpu_problems(container.get("resources"), gpu_resource):
                    problems.append(((field, i, "resources", *path), message))
    return problems
