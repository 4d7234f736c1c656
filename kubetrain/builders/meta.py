"""Small metadata helpers: names, labels and the shape of a manifest.

Each helper has one meaning; :func:`manifest` assembles them. Builders write manifests in any
key order; :func:`canonical` gives every manifest one stable form (keys sorted, ``None`` dropped),
which is what both back ends receive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kube import catalog
from ..models.base import plain_copy
from ..models.resources import GPU_ALIASES, normalize_pod_gpus

__all__ = [
    "MANAGED_BY",
    "PULL_SECRET_COMPONENT",
    "app_labels",
    "canonical",
    "gpu_alias_warnings",
    "is_shared",
    "manifest",
    "merge",
    "normalize_pod_gpus",
    "object_meta",
    "plain_copy",
    "pod_gpu_alias_warnings",
    "to_selector",
]

#: Value of ``app.kubernetes.io/managed-by`` on everything kubetrain creates.
MANAGED_BY = "kubetrain"
#: ``app.kubernetes.io/component`` of image pull secrets, which several jobs may share.
PULL_SECRET_COMPONENT = "image-pull-secret"
#: ``app.kubernetes.io/component`` values of objects that jobs may share.
SHARED_COMPONENTS = frozenset({PULL_SECRET_COMPONENT})


def is_shared(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is an object that jobs may share (a CRD, a Namespace, a pull Secret), so
    it belongs to the stack however many of its jobs need it: its identity (its Pulumi URN, the
    job a rendered file names) does not move when a job that shares it comes or goes."""
    if catalog.of(obj).shared:  # one per cluster or namespace, whichever jobs need it
        return True
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/component") in SHARED_COMPONENTS


def app_labels(name: str, instance: str, component: str | None = None) -> dict[str, str]:
    """The recommended ``app.kubernetes.io/*`` labels.

    ``name`` is the job kind in lower case (``tfjob``), ``instance`` the job name and
    ``component`` the role inside the job (``worker``, ``pserver``, ``learner``).
    """
    labels = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }
    if component:
        labels["app.kubernetes.io/component"] = component
    return labels


def to_selector(labels: Mapping[str, str]) -> str:
    """A label selector string matching exactly ``labels`` (the seed's ``ToSelector``)."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def merge(*maps: Mapping[str, str] | None) -> dict[str, str]:
    """Later maps win; ``None`` maps are skipped."""
    out: dict[str, str] = {}
    for m in maps:
        if m:
            out.update(m)
    return out


def object_meta(
    name: str,
    namespace: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``metadata`` with empty parts left out."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def manifest(api_version: str, kind: str, metadata: dict[str, Any], **body: Any) -> dict[str, Any]:
    """A Kubernetes object: ``apiVersion``, ``kind``, ``metadata`` and the rest of ``body``."""
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **body}


def canonical(value: Any) -> Any:
    """A copy with mapping keys sorted and ``None`` values dropped (empty ``{}`` and ``[]`` stay:
    ``emptyDir: {}`` means something). Every manifest passes through here: scalars are handled
    inline rather than by a call each."""
    if type(value) is dict:
        return _canonical_map(value)
    if type(value) is list:
        return _canonical_list(value)
    return value


def _canonical_map(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in sorted(value):
        v = value[k]
        t = type(v)
        if t is dict:
            out[k] = _canonical_map(v)
        elif t is list:
            out[k] = _canonical_list(v)
        elif v is not None:
            out[k] = v
    return out


def _canonical_list(value: list[Any]) -> list[Any]:
    out = []
    for v in value:
        t = type(v)
        out.append(_canonical_map(v) if t is dict else _canonical_list(v) if t is list else v)
    return out


def gpu_alias_warnings(
    resources: Any, gpu_resource: str
) -> list[tuple[tuple[str | int, ...], str]]:
    """(path relative to ``resources``, message) for every GPU count written under another name
    than ``gpu_resource``: the builders write it under ``gpu_resource`` instead."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    if not isinstance(resources, dict):
        return out
    for part in ("limits", "requests"):
        values = resources.get(part)
        for name in GPU_ALIASES:
            if name != gpu_resource and isinstance(values, dict) and name in values:
                out.append(
                    (
                        (part, name),
                        f"GPUs given as {name} are written as {gpu_resource} "
                        "(kubetrain:gpuResource)",
                    )
                )
    return out


def pod_gpu_alias_warnings(
    pod_spec: Any, gpu_resource: str
) -> list[tuple[tuple[str | int, ...], str]]:
    """:func:`gpu_alias_warnings` of every container of a pod spec (paths relative to it)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    if not isinstance(pod_spec, dict):
        return out
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or ()):
            if isinstance(container, dict):
                for path, message in gpu_alias_warnings(container.get("resources"), gpu_resource):
                    out.append(((field, i, "resources", *path), message))
    return out
