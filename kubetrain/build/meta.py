"""Small metadata helpers: names, labels and the shape of a manifest.

Each helper has one meaning; :func:`manifest` assembles them. Builders write manifests in any
key order; :func:`canonical` gives every manifest one stable form (keys sorted, ``None`` dropped),
which is what both back ends receive.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spec.resources import normalize_gpus

__all__ = [
    "MANAGED_BY",
    "app_labels",
    "canonical",
    "manifest",
    "merge",
    "normalize_pod_gpus",
    "object_meta",
    "plain_copy",
]

#: Value of ``app.kubernetes.io/managed-by`` on everything kubetrain creates.
MANAGED_BY = "kubetrain"


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
    ``emptyDir: {}`` means something)."""
    if type(value) is dict:
        return {k: canonical(value[k]) for k in sorted(value) if value[k] is not None}
    if type(value) is list:
        return [canonical(v) for v in value]
    return value


def plain_copy(value: Any) -> Any:
    """Deep copy of plain data (dicts, lists, scalars); several times faster than ``deepcopy``."""
    if type(value) is dict:
        return {k: plain_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [plain_copy(v) for v in value]
    return value


def normalize_pod_gpus(pod_spec: dict[str, Any], gpu_resource: str) -> dict[str, Any]:
    """Rewrite, in place, every container's GPUs under ``gpu_resource`` with requests equal to
    limits (see :mod:`kubetrain.spec.resources`). Returns ``pod_spec``."""
    for field in ("initContainers", "containers"):
        for container in pod_spec.get(field) or ():
            if "resources" in container:
                container["resources"] = normalize_gpus(container["resources"], gpu_resource)
    return pod_spec
