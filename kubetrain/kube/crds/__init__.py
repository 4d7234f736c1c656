"""The real CRDs of the third-party kinds kubetrain renders or validates, as the API server
holds them: derived by :mod:`.derive` from the upstream CRDs (``../shared/crds``: Kubeflow's
training operator v1.9.0, MPI operator v0.8.0, Trainer v2.3.0, JobSet v0.9.1, Kueue v0.19.2,
Volcano and scheduler-plugins PodGroups, External Secrets, Flux, Argo CD) into ``data/``.

A custom resource of one of these kinds is judged by its real CRD's schema, subresources and
scope (``kubetrain validate`` without ``--crd``), never by a model that restates it. The pod
templates and other Kubernetes types a CRD embeds are those of the ``k8s.io/api`` it was
generated from, as written in it. ``tests/test_derived_crds.py`` derives again from
``../shared/crds`` and fails on any difference.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from .derive import SHARED_KEY

__all__ = ["DerivedCRD", "derived_crd", "derived_crds", "expand"]


@dataclass(frozen=True)
class DerivedCRD:
    """One derived CRD: enough of a CustomResourceDefinition for
    :func:`~kubetrain.kube.apiextensions.crd_versions` to read, and where it came from."""

    file: str
    source: str
    group: str
    kind: str
    plural: str
    scope: str
    versions: tuple[str, ...]

    def definition(self) -> dict[str, Any]:
        """The CRD (schemas with their shared subtrees put back), as an object."""
        data = _read(self.file)
        versions = [
            {
                "name": v["name"],
                "served": True,
                "storage": v["storage"],
                **({"schema": {"openAPIV3Schema": expand(v["schema"])}} if v["schema"] else {}),
                **({"subresources": v["subresources"]} if "subresources" in v else {}),
            }
            for v in data["versions"]
        ]
        return {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{self.plural}.{self.group}"},
            "spec": {
                "group": self.group,
                "names": {"kind": self.kind, "plural": self.plural},
                "scope": self.scope,
                "versions": versions,
            },
        }


def _data() -> Any:
    return resources.files(__package__) / "data"


@cache
def _read(rel: str) -> Any:
    text = (_data() / rel).read_text(encoding="utf-8")
    return json.loads(text)


@cache
def _shared() -> Mapping[str, Any]:
    table: Mapping[str, Any] = _read("shared.json")["shared"]
    return table


def expand(value: Any) -> Any:
    """``value`` with every shared subtree reference replaced by the subtree (one object per
    subtree: every place it occurs holds the same dict, so schemas compiled from it can be
    too)."""
    return _expand(value, _shared(), {})


def _expand(value: Any, table: Mapping[str, Any], done: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        ref = value.get(SHARED_KEY)
        if isinstance(ref, str) and len(value) == 1:
            if ref not in done:
                done[ref] = _expand(table[ref], table, done)
            return done[ref]
        return {k: _expand(v, table, done) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, table, done) for v in value]
    return value


@cache
def derived_crds() -> dict[tuple[str, str], DerivedCRD]:
    """Every derived CRD, by (apiVersion, kind) of each version it serves."""
    out: dict[tuple[str, str], DerivedCRD] = {}
    for group_dir in sorted(_data().iterdir(), key=lambda p: p.name):
        if not group_dir.is_dir():
            continue
        for entry in sorted(group_dir.iterdir(), key=lambda p: p.name):
            if not entry.name.endswith(".json"):
                continue
            rel = f"{group_dir.name}/{entry.name}"
            data = _read(rel)
            crd = DerivedCRD(
                rel,
                data["source"],
                data["group"],
                data["kind"],
                data["plural"],
                data["scope"],
                tuple(v["name"] for v in data["versions"]),
            )
            for version in crd.versions:
                out[(f"{crd.group}/{version}", crd.kind)] = crd
    return out


def derived_crd(api_version: str, kind: str) -> DerivedCRD | None:
    """The real CRD serving ``api_version`` ``kind``, or ``None``."""
    return derived_crds().get((api_version, kind))
