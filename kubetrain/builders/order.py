"""One ordering table for kinds: what must exist before what (CRDs and namespaces first, workloads
last), after Helm's install order. Used for output order everywhere."""

from __future__ import annotations

from typing import Any

__all__ = ["KIND_ORDER", "sort_key"]

KIND_ORDER: tuple[str, ...] = (
    "Namespace",
    "CustomResourceDefinition",
    "PriorityClass",
    "RuntimeClass",
    "ResourceQuota",
    "LimitRange",
    "ServiceAccount",
    "SecretStore",
    "ExternalSecret",
    "Secret",
    "ConfigMap",
    "PersistentVolumeClaim",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "PodGroup",
    "Service",
    "Pod",
    "ReplicaSet",
    "Deployment",
    "StatefulSet",
    "Job",
    "CronJob",
)
_RANK = {kind: i for i, kind in enumerate(KIND_ORDER)}


def sort_key(obj: dict[str, Any]) -> tuple[int, str, str, str, str]:
    """Known kinds in table order, then custom resources; ties by kind, namespace, name."""
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    return (
        _RANK.get(kind, len(KIND_ORDER)),
        kind,
        obj.get("apiVersion", ""),
        meta.get("namespace") or "",
        meta.get("name") or "",
    )
