"""Whether a kind that is not Kubernetes' own is namespaced: the scope of its CRD.

A plain manifest (``kubetrain:manifests``) without ``metadata.namespace`` goes to the stack's
namespace if its kind is namespaced and stays cluster-wide otherwise. For Kubernetes' own kinds
the catalogue tells (:attr:`kubetrain.kube.catalog.Kind.scope`); for a custom kind,
:func:`namespaced` asks, in this order, the CRDs the stack itself holds, the stack's declared
lists (``kubetrain:external.namespacedKinds`` / ``clusterScopedKinds``), and the catalogue: the
``spec.scope`` of the CRDs of the projects kubetrain works with, generated from
``../shared/crds`` (``tests/test_catalog.py``). A kind none of them knows has no answer, and
the loader says so rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from . import catalog

__all__ = ["kind_key", "namespaced"]


def kind_key(api_version: str, kind: str) -> str:
    """``<Kind>.<group>``, as the stack's declared lists write a kind (``Widget.example.com``)."""
    return f"{kind}.{api_version.rpartition('/')[0]}"


def namespaced(
    api_version: str,
    kind: str,
    crds: Mapping[tuple[str, str], bool] = {},
    declared_namespaced: Iterable[str] = (),
    declared_cluster: Iterable[str] = (),
) -> bool | None:
    """Whether objects of ``kind`` are namespaced: from ``crds`` ((group, kind) -> namespaced,
    the stack's own CRDs), the declared lists, then the catalogue; ``None`` if nothing says."""
    group = api_version.rpartition("/")[0]
    if (group, kind) in crds:
        return crds[(group, kind)]
    key = kind_key(api_version, kind)
    if key in set(declared_namespaced):
        return True
    if key in set(declared_cluster):
        return False
    return catalog.lookup((group, kind)).namespaced
