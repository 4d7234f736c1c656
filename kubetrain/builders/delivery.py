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
  ``-1`` (written by the builders, see :mod:`.lifecycle`), so Argo CD applies the CRDs and
  waits for them before the rest (wave 0).

Objects the API server checks when it admits a pod (ServiceAccounts, PriorityClasses,
RuntimeClasses, LimitRanges, ResourceQuotas) and the Namespaces they live in carry
``kubetrain.io/delivery-step: prerequisites`` (:mod:`.lifecycle`):

* Flux: a ``<name>-prerequisites`` Kustomization applies ``rendered/<env>`` with a patch that
  drops everything else (it waits until they are ready); the main Kustomization ``dependsOn`` it
  and drops them. Flux dry-runs every object of a step before it applies any: a Pod whose
  ServiceAccount comes in the same step is refused at its dry-run, and nothing of the step is
  ever applied (fluxcd/flux2#2772).
* Argo CD: sync wave ``-1`` (its dry-run is client-side, and within a wave it applies kinds in
  its own order, ServiceAccounts before Pods; but PriorityClasses after them).

Both engines prune what leaves the folder, but CRDs, Namespaces and claims (see :mod:`.lifecycle`);
Argo CD also undoes changes made in the cluster, and syncs only what is out of sync
(``ApplyOutOfSyncOnly=true``: the objects it replaces on an edit, Pods and Jobs, would otherwise
be re-created, and their runs restarted, by every sync of the Application).

Settings a platform team needs (``kubetrain:gitops``):

* ``flux.secretRef``: credentials of a private repository (GitRepository ``spec.secretRef``);
  ``flux.sourceRef``: an existing Flux source to read instead (no GitRepository is written);
  ``flux.dependsOn``: Kustomizations to wait for (External Secrets, Volcano, the operators).
* ``argocd.project``, ``argocd.retry`` (``syncPolicy.retry``; 5 retries from 10 s when unset: a
  Pod replaced by ``Force=true`` is created by the retry that follows its graceful deletion),
  ``argocd.finalizer`` (the ``resources-finalizer.argocd.argoproj.io`` finalizer: deleting the
  Application deletes what it deployed) and ``argocd.createNamespace`` (``CreateNamespace=true``
  for the stack's namespace, with its Pod Security labels). Argo CD reads a private
  repository's credentials from its own repository Secrets, not from the Application.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..models.stack import GitOps
from .lifecycle import CRD, DELIVERY_STEP, PREREQUISITES
from .meta import app_labels, canonical, manifest, object_meta

#: Folder of a rendered tree that holds its CustomResourceDefinitions, with a kustomization of
#: its own (a name no namespace can have, so objects of a namespace never land in it).
CRDS_DIR = "_crds"

__all__ = [
    "ARGOCD_FINALIZER",
    "ARGOCD_NAMESPACE",
    "CRDS_DIR",
    "FLUX_NAMESPACE",
    "IN_CLUSTER",
    "delivery_name",
    "delivery_objects",
    "engine_of",
    "rendered_path",
]

FLUX_NAMESPACE = "flux-system"
ARGOCD_NAMESPACE = "argocd"
#: Argo CD's name for the cluster it runs in.
IN_CLUSTER = "https://kubernetes.default.svc"
#: Deleting an Application with this finalizer deletes the objects it deployed first.
ARGOCD_FINALIZER = "resources-finalizer.argocd.argoproj.io"
#: What Argo CD's comparison must leave out of Pods: the tolerations the DefaultTolerationSeconds
#: admission plugin appends to a pod that lists tolerations of its own. The list is atomic, so
#: Argo CD's client-side diff would see every such pod out of sync, and applying kubetrain's list
#: (removing tolerations, which the server refuses) would make Force=true re-create it (and
#: restart its run) on every sync.
ARGOCD_IGNORED = (
    {
        "group": "",
        "kind": "Pod",
        "jqPathExpressions": [
            '.spec.tolerations[] | select(.key == "node.kubernetes.io/not-ready" '
            'or .key == "node.kubernetes.io/unreachable")'
        ],
    },
)

_DROP_CRDS = (
    "$patch: delete\n"
    "apiVersion: apiextensions.k8s.io/v1\n"
    "kind: CustomResourceDefinition\n"
    "metadata:\n"
    "  name: applied-by-the-crds-kustomization\n"
)
#: A delete patch for the objects a target selects (kustomize applies it to each, whatever its
#: kind: the kind and name written here are placeholders).
_DROP = (
    "$patch: delete\n"
    "apiVersion: v1\n"
    "kind: Object\n"
    "metadata:\n"
    "  name: applied-by-another-kustomization\n"
)
#: Argo CD's retry of a failed sync when the stack sets none: a Pod that Force=true replaces is
#: deleted gracefully, and kubectl's delete-and-create gives up at once when it is not gone yet
#: (``Patcher.deleteAndCreate`` with Argo CD's zero timeout); the retry creates it.
DEFAULT_RETRY = {
    "limit": 5,
    "backoff": {"duration": "10s", "factor": 2, "maxDuration": "3m"},
}


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


def _flux_source(
    gitops: GitOps, name: str, ns: str, labels: Mapping[str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``sourceRef`` of the Kustomizations, and the GitRepository to write (none when an
    existing source is reused)."""
    existing = gitops.flux.source_ref
    if existing is not None:
        ref = {"kind": existing.kind, "name": existing.name, "namespace": existing.namespace}
        return ref, []
    spec: dict[str, Any] = {
        "interval": gitops.interval,
        "url": gitops.repo_url,
        "ref": {"branch": gitops.branch},
    }
    if gitops.flux.secret_ref:
        spec["secretRef"] = {"name": gitops.flux.secret_ref}
    source = manifest(
        "source.toolkit.fluxcd.io/v1", "GitRepository", object_meta(name, ns, labels), spec=spec
    )
    return {"kind": "GitRepository", "name": name}, [source]


def _flux(
    gitops: GitOps, env: str, has_crds: bool, has_prerequisites: bool
) -> list[dict[str, Any]]:
    name = delivery_name(env)
    ns = gitops.namespace or FLUX_NAMESPACE
    labels = app_labels("gitops", name, "flux")
    source, out = _flux_source(gitops, name, ns, labels)
    main: dict[str, Any] = {
        "interval": gitops.interval,
        "path": "./" + rendered_path(gitops, env),
        "prune": True,
        "sourceRef": source,
    }
    depends_on = [{"name": d.name, "namespace": d.namespace} for d in gitops.flux.depends_on]
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
        depends_on.insert(0, {"name": f"{name}-crds"})
        main["patches"] = [
            {
                "patch": _DROP_CRDS,
                "target": {"group": CRD[0], "kind": CRD[1]},
            }
        ]
    if has_prerequisites:
        step = f"{DELIVERY_STEP}={PREREQUISITES}"
        out.append(
            manifest(
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                object_meta(f"{name}-{PREREQUISITES}", ns, labels),
                spec={
                    "interval": gitops.interval,
                    "path": "./" + rendered_path(gitops, env),
                    "prune": True,
                    "sourceRef": source,
                    "wait": True,
                    "patches": [
                        {
                            "patch": _DROP,
                            "target": {"annotationSelector": f"{DELIVERY_STEP}!={PREREQUISITES}"},
                        }
                    ],
                },
            )
        )
        depends_on.insert(1 if has_crds else 0, {"name": f"{name}-{PREREQUISITES}"})
        main.setdefault("patches", []).append(
            {"patch": _DROP, "target": {"annotationSelector": step}}
        )
    if depends_on:
        main["dependsOn"] = depends_on
    out.append(
        manifest(
            "kustomize.toolkit.fluxcd.io/v1",
            "Kustomization",
            object_meta(name, ns, labels),
            spec=main,
        )
    )
    return out


def _argocd(
    gitops: GitOps, env: str, namespace: str, namespace_labels: Mapping[str, str]
) -> dict[str, Any]:
    name = delivery_name(env)
    settings = gitops.argocd
    options = ["ApplyOutOfSyncOnly=true"]
    # allowEmpty: retiring an environment renders no objects; without it automated sync
    # refuses to prune them all (appcontroller.go autoSync, "auto-sync will wipe out all
    # resources"). kubetrain never renders an empty folder by accident: a broken stack fails.
    policy: dict[str, Any] = {"automated": {"allowEmpty": True, "prune": True, "selfHeal": True}}
    destination = {"server": IN_CLUSTER}
    if settings.create_namespace:
        options.append("CreateNamespace=true")
        destination["namespace"] = namespace
        if namespace_labels:
            policy["managedNamespaceMetadata"] = {"labels": dict(namespace_labels)}
    policy["syncOptions"] = options
    if settings.retry is not None:
        backoff = settings.retry.backoff
        policy["retry"] = {
            "limit": settings.retry.limit,
            "backoff": {
                "duration": backoff.duration,
                "factor": backoff.factor,
                "maxDuration": backoff.max_duration,
            },
        }
    else:
        policy["retry"] = copy.deepcopy(DEFAULT_RETRY)
    meta = object_meta(
        name, gitops.namespace or ARGOCD_NAMESPACE, app_labels("gitops", name, "argocd")
    )
    if settings.finalizer:
        meta["finalizers"] = [ARGOCD_FINALIZER]
    return manifest(
        "argoproj.io/v1alpha1",
        "Application",
        meta,
        spec={
            "project": settings.project,
            "ignoreDifferences": [dict(rule) for rule in ARGOCD_IGNORED],
            "source": {
                "repoURL": gitops.repo_url,
                "targetRevision": gitops.branch,
                "path": rendered_path(gitops, env),
            },
            "destination": destination,
            "syncPolicy": policy,
        },
    )


def delivery_objects(
    gitops: GitOps,
    env: str,
    has_crds: bool,
    *,
    has_prerequisites: bool = False,
    namespace: str = "default",
    namespace_labels: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The delivery objects of environment ``env`` (see the module docstring). ``namespace``
    and ``namespace_labels``: the stack's namespace and its labels, for Argo CD's
    ``CreateNamespace``."""
    out: list[dict[str, Any]] = []
    if "flux" in gitops.engines:
        out += _flux(gitops, env, has_crds, has_prerequisites)
    if "argocd" in gitops.engines:
        out.append(_argocd(gitops, env, namespace, namespace_labels or {}))
    return [canonical(obj) for obj in out]
