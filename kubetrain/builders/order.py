"""Output order: what must exist before what (CRDs and namespaces first, workloads last), after
Helm's install order, as each kind's row in the catalogue ranks it
(:attr:`kubetrain.kube.catalog.Kind.rank`). Used for output order everywhere."""

from __future__ import annotations

from typing import Any

from ..kube import catalog

__all__ = ["UNRANKED", "installs_before", "sort_key"]

#: The rank of kinds the catalogue does not rank (custom resources): after every ranked kind.
UNRANKED = 1_000


def sort_key(obj: dict[str, Any]) -> tuple[int, str, str, str, str]:
    """Ranked kinds in rank order, then custom resources; ties by kind, apiVersion, namespace,
    name."""
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    rank = catalog.of(obj).rank
    return (
        UNRANKED if rank is None else rank,
        kind,
        obj.get("apiVersion", ""),
        meta.get("namespace") or "",
        meta.get("name") or "",
    )


def installs_before(obj: dict[str, Any], key: tuple[str, str]) -> bool:
    """Whether ``obj``'s kind is installed before the kind ``key`` (both ranked)."""
    rank, other = catalog.of(obj).rank, catalog.lookup(key).rank
    return rank is not None and other is not None and rank < other
