"""The Namespaces a stack creates, labelled with its Pod Security level.

A job's objects are applied into its namespace, which must exist first: on a fresh cluster Flux
and Argo CD fail the whole sync and ``pulumi up`` fails without it. So every namespace a stack's
objects use is part of the stack (``_cluster/namespace-<name>.yaml``; registered by Pulumi before
anything in it), unless

* the stack declares it external (``kubetrain:external.namespaces``: the platform team or another
  environment made it),
* it always exists (``default`` and the ``kube-*`` namespaces), or
* an object of the stack is that Namespace already (a Namespace shipped as a manifest wins over
  the one kubetrain would write).

Each is labelled for Pod Security admission with the stack's ``kubetrain:podSecurity`` level and
Kubernetes version (``pod-security.kubernetes.io/enforce``, ``-version``, and the same for
``audit`` and ``warn``), so the cluster enforces what ``validate`` checks. No engine ever deletes
one (see :mod:`.lifecycle`): retiring an environment ends with deleting its namespaces by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models.stack import StackSettings
from .meta import MANAGED_BY, manifest, object_meta

__all__ = [
    "ALWAYS_PRESENT",
    "POD_SECURITY_MODES",
    "namespace_manifest",
    "namespaces_created",
    "pod_security_labels",
]

#: Namespaces every cluster has: never created (nor labelled) by kubetrain.
ALWAYS_PRESENT = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
#: Pod Security admission modes, each labelled with the stack's level.
POD_SECURITY_MODES = ("enforce", "audit", "warn")
_PREFIX = "pod-security.kubernetes.io"


def pod_security_labels(settings: StackSettings) -> dict[str, str]:
    """The Pod Security admission labels of the stack's level, pinned to its Kubernetes version
    (``v1.33``), so a cluster upgrade does not change what is enforced."""
    version = f"v{settings.kubernetes_version}"
    labels: dict[str, str] = {}
    for mode in POD_SECURITY_MODES:
        labels[f"{_PREFIX}/{mode}"] = settings.pod_security
        labels[f"{_PREFIX}/{mode}-version"] = version
    return labels


def namespaces_created(objs: Iterable[dict[str, Any]], settings: StackSettings) -> list[str]:
    """The namespaces this stack creates, sorted: every namespace its objects are in, but those
    declared external, those that always exist and those a Namespace among ``objs`` creates."""
    used: set[str] = set()
    declared: set[str] = set()
    for obj in objs:
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
            declared.add(str(meta.get("name")))
        elif meta.get("namespace"):
            used.add(str(meta["namespace"]))
    return sorted(used - declared - ALWAYS_PRESENT - set(settings.external.namespaces))


def namespace_manifest(name: str, settings: StackSettings) -> dict[str, Any]:
    """The Namespace ``name`` as kubetrain creates it."""
    labels = {"app.kubernetes.io/managed-by": MANAGED_BY, **pod_security_labels(settings)}
    return manifest("v1", "Namespace", object_meta(name, labels=labels))
