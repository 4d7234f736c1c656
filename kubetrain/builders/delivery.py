"""GitOps delivery: the Flux and Argo CD objects that apply ``rendered/<env>`` to a cluster.

With ``kubetrain:gitops`` in a stack, render writes them to ``rendered/clusters/<env>/``, one
folder per engine (``flux/``, ``argocd/``) with a kustomization of its own, which a cluster is
bootstrapped with once (``flux create kustomization --path rendered/clusters/<env>/flux``, an
Argo CD app of apps, or ``kubectl apply -k rendered/clusters/<env>/argocd``): a cluster running
one engine never has to apply the other's kinds.

CRDs kubetrain renders (operator mode, for operators that do not install their own) must exist
before the custom resources that need them, so ``rendered/<env>`` keeps them apart:

* ``rendered/<env>/_crds/`` holds the CRDs and their own ``kustomization.yaml``; the top
  ``kustomization.yaml`` lists that folder first, so ``kubectl kustomize rendered/<env>`` still
  builds everything.
* Flux: a ``<name>-crds`` Kustomization applies ``_crds/`` and waits until the CRDs are ready; the
  main Kustomization applies ``rendered/<env>`` with ``dependsOn`` on it and a patch that drops the
  CRDs from its own build, so each object has exactly one owner (Flux does not support objects
  shared by two Kustomizations).
* Argo CD: one Application for ``rendered/<env>``; every CRD carries the sync-wave annotation
  ``-1`` (written by the builders, see :func:`crd_sync_wave`), so Argo CD applies the CRDs and
  waits for them before the rest (wave 0).

Both engines prune what leaves the folder; Argo CD also undoes changes made in the cluster.
"""

from __future__ import annotations

from typing import Any

from ..models.stack import GitOps
from .meta import app_labels, canonical, manifest, object_meta

#: Folder of a rendered tree that holds its CustomResourceDefinitions, with a kustomization of
#: its own (a name no namespace can have, so objects of a namespace never land in it).
CRDS_DIR = "_crds"

__all__ = [
    "ARGOCD_NAMESPACE",
    "CRDS_DIR",
    "FLUX_NAMESPACE",
    "IN_CLUSTER",
    "SYNC_WAVE_ANNOTATION",
    "crd_sync_wave",
    "delivery_name",
    "delivery_objects",
    "engine_of",
    "rendered_path",
]

FLUX_NAMESPACE = "flux-system"
ARGOCD_NAMESPACE = "argocd"
#: Argo CD's name for the cluster it runs in.
IN_CLUSTER = "https://kubernetes.default.svc"
SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
#: Sync wave of CRDs: before everything else (wave 0).
CRD_WAVE = "-1"
CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")

_DROP_CRDS = (
    "$patch: delete\n"
    "apiVersion: apiextensions.k8s.io/v1\n"
    "kind: CustomResourceDefinition\n"
    "metadata:\n"
    "  name: applied-by-the-crds-kustomization\n"
)


def crd_sync_wave(obj: dict[str, Any]) -> dict[str, Any]:
    """Give a CustomResourceDefinition the sync wave that makes Argo CD apply it first (in
    place); other objects are returned unchanged."""
    if (obj.get("apiVersion", "").rpartition("/")[0], obj.get("kind")) == CRD:
        annotations = obj.setdefault("metadata", {}).setdefault("annotations", {})
        annotations.setdefault(SYNC_WAVE_ANNOTATION, CRD_WAVE)
    return obj


def engine_of(obj: dict[str, Any]) -> str:
    """``argocd`` or ``flux``: the engine a delivery object belongs to (its folder)."""
    return "argocd" if obj["apiVersion"].startswith("argoproj.io/") else "flux"


def delivery_name(env: str) -> str:
    """Name of the delivery objects of environment ``env``."""
    return f"kubetrain-{env}"


def rendered_path(gitops: GitOps, env: str, folder: str = "") -> str:
    """``rendered/<env>[/<folder>]`` from the repository root (after ``projectDir``)."""
    parts = [p for p in (gitops.project_dir, "rendered", env, folder) if p]
    return "/".join(parts)


def _flux(gitops: GitOps, env: str, has_crds: bool) -> list[dict[str, Any]]:
    name = delivery_name(env)
    ns = gitops.namespace or FLUX_NAMESPACE
    labels = app_labels("gitops", name, "flux")
    source = {"kind": "GitRepository", "name": name}
    out = [
        manifest(
            "source.toolkit.fluxcd.io/v1",
            "GitRepository",
            object_meta(name, ns, labels),
            spec={
                "interval": gitops.interval,
                "url": gitops.repo_url,
                "ref": {"branch": gitops.branch},
            },
        )
    ]
    main: dict[str, Any] = {
        "interval": gitops.interval,
        "path": "./" + rendered_path(gitops, env),
        "prune": True,
        "sourceRef": source,
    }
    if has_crds:
        out.append(
            manifest(
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                object_meta(f"{name}-crds", ns, labels),
                spec={
                    "interval": gitops.interval,
                    "path": "./" + rendered_path(gitops, env, CRDS_DIR),
                    "prune": True,
                    "sourceRef": source,
                    "wait": True,
                },
            )
        )
        main["dependsOn"] = [{"name": f"{name}-crds"}]
        main["patches"] = [
            {
                "patch": _DROP_CRDS,
                "target": {"group": CRD[0], "kind": CRD[1]},
            }
        ]
    out.append(
        manifest(
            "kustomize.toolkit.fluxcd.io/v1",
            "Kustomization",
            object_meta(name, ns, labels),
            spec=main,
        )
    )
    return out


def _argocd(gitops: GitOps, env: str) -> dict[str, Any]:
    name = delivery_name(env)
    return manifest(
        "argoproj.io/v1alpha1",
        "Application",
        object_meta(
            name, gitops.namespace or ARGOCD_NAMESPACE, app_labels("gitops", name, "argocd")
        ),
        spec={
            "project": "default",
            "source": {
                "repoURL": gitops.repo_url,
                "targetRevision": gitops.branch,
                "path": rendered_path(gitops, env),
            },
            "destination": {"server": IN_CLUSTER},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
        },
    )


def delivery_objects(gitops: GitOps, env: str, has_crds: bool) -> list[dict[str, Any]]:
    """The delivery objects of environment ``env`` (see the module docstring)."""
    out: list[dict[str, Any]] = []
    if "flux" in gitops.engines:
        out += _flux(gitops, env, has_crds)
    if "argocd" in gitops.engines:
        out.append(_argocd(gitops, env))
    return [canonical(obj) for obj in out]
