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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..models.stack import ClusterTarget, GitOps
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
    "ClusterBuild",
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
    # What the Trainer's webhook (each runtime patch's `time`) and Kueue (its own manager's
    # entry) add to a TrainJob's runtimePatches: out of sync for ever otherwise, and, as the
    # TrainJob is replaced on any change (its catalogue row: Life.REPLACED_ON_ANY_CHANGE), re-run
    # on every sync. Seen in e2e/test_lifecycle.py.
    {
        "group": "trainer.kubeflow.org",
        "kind": "TrainJob",
        "jqPathExpressions": [
            ".spec.runtimePatches[]?.time",
            '.spec.runtimePatches[]? | select(.manager == "kueue.x-k8s.io/manager")',
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


@dataclass(frozen=True)
class ClusterBuild:
    """One cluster an environment delivers to, and what its tree holds: the cluster of
    ``kubetrain:clusters`` (``None``: the environment's own cluster, Flux and Argo CD in it),
    its folder under ``rendered/<env>`` (``""``: the tree is ``rendered/<env>`` itself; a fleet's
    cluster ``<name>``), and what the delivery objects need to know of its objects."""

    target: ClusterTarget | None = None
    folder: str = ""
    has_crds: bool = False
    has_prerequisites: bool = False
    #: (group, kind, namespaced) of every object of the tree: what an AppProject must permit.
    kinds: frozenset[tuple[str, str, bool]] = frozenset()
    #: The namespaces its objects are in.
    namespaces: frozenset[str] = frozenset()


def _flux(gitops: GitOps, env: str, clusters: Sequence[ClusterBuild]) -> list[dict[str, Any]]:
    base = delivery_name(env)
    ns = gitops.namespace or FLUX_NAMESPACE
    labels = app_labels("gitops", base, "flux")
    source, out = _flux_source(gitops, base, ns, labels)
    for cluster in clusters:
        name = f"{base}-{cluster.folder}" if cluster.folder else base
        out += _flux_steps(gitops, env, name, ns, labels, source, cluster)
    return out


def _flux_steps(
    gitops: GitOps,
    env: str,
    name: str,
    ns: str,
    labels: Mapping[str, str],
    source: dict[str, Any],
    cluster: ClusterBuild,
) -> list[dict[str, Any]]:
    """The Kustomizations of one cluster's tree: its CRDs, its prerequisites and the rest. A
    cluster with a ``kubeConfig`` is a remote one: each applies there with the kubeconfig of
    that Secret, read in the Kustomizations' namespace (kustomize-controller v1.9.4,
    ``internal/controller/kustomization_controller.go``, ``reconcile``:
    ``runtimeClient.WithKubeConfig(obj.Spec.KubeConfig, ..., obj.GetNamespace(), ...)``)."""
    out: list[dict[str, Any]] = []
    remote: dict[str, Any] = {}
    if cluster.target is not None and cluster.target.kube_config is not None:
        ref = cluster.target.kube_config.secret_ref
        remote["kubeConfig"] = {"secretRef": {"name": ref.name, "key": ref.key}}
    tree = cluster.folder
    main: dict[str, Any] = {
        "interval": gitops.interval,
        "path": "./" + rendered_path(gitops, env, tree),
        "prune": True,
        "sourceRef": source,
        **remote,
    }
    depends_on = [{"name": d.name, "namespace": d.namespace} for d in gitops.flux.depends_on]
    if cluster.has_crds:
        out.append(
            manifest(
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                object_meta(f"{name}-crds", ns, labels),
                spec={
                    "interval": gitops.interval,
                    "path": "./"
                    + rendered_path(gitops, env, "/".join(filter(None, (tree, CRDS_DIR)))),
                    "prune": True,
                    "sourceRef": source,
                    "wait": True,
                    **remote,
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
    if cluster.has_prerequisites:
        step = f"{DELIVERY_STEP}={PREREQUISITES}"
        out.append(
            manifest(
                "kustomize.toolkit.fluxcd.io/v1",
                "Kustomization",
                object_meta(f"{name}-{PREREQUISITES}", ns, labels),
                spec={
                    "interval": gitops.interval,
                    "path": "./" + rendered_path(gitops, env, tree),
                    "prune": True,
                    "sourceRef": source,
                    "wait": True,
                    "patches": [
                        {
                            "patch": _DROP,
                            "target": {"annotationSelector": f"{DELIVERY_STEP}!={PREREQUISITES}"},
                        }
                    ],
                    **remote,
                },
            )
        )
        depends_on.insert(1 if cluster.has_crds else 0, {"name": f"{name}-{PREREQUISITES}"})
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


def _destination(target: ClusterTarget | None, namespace: str) -> dict[str, str]:
    """An Argo CD destination: the cluster by its server URL when given, else by the name
    Argo CD knows it by; the environment's own cluster is Argo CD's (``in-cluster``)."""
    if target is None:
        return {"server": IN_CLUSTER}
    if target.server is not None:
        return {"server": target.server, "namespace": namespace}
    return {"name": target.name, "namespace": namespace}


def _argocd(
    gitops: GitOps,
    env: str,
    namespace: str,
    namespace_labels: Mapping[str, str],
    clusters: Sequence[ClusterBuild] = (ClusterBuild(),),
) -> list[dict[str, Any]]:
    """The Application of an environment (of its one cluster), or for a fleet an
    ApplicationSet making one per cluster; with ``argocd.appProject``, the AppProject they
    are in first."""
    name = delivery_name(env)
    settings = gitops.argocd
    # Prune in the background, as Flux's kustomize-controller and kubectl delete: Argo CD's
    # default (foreground) never ends for a TrainJob, because Trainer v2.3.0's
    # TrainJobReconciler.Reconcile applies the JobSet again whatever the TrainJob's
    # deletionTimestamp, and the garbage collector deletes it again (seen in
    # e2e/test_lifecycle.py: the sync waited for the deletion for good).
    options = ["ApplyOutOfSyncOnly=true", "PrunePropagationPolicy=background"]
    # allowEmpty: retiring an environment renders no objects; without it automated sync
    # refuses to prune them all (appcontroller.go autoSync, "auto-sync will wipe out all
    # resources"). kubetrain never renders an empty folder by accident: a broken stack fails.
    policy: dict[str, Any] = {"automated": {"allowEmpty": True, "prune": True, "selfHeal": True}}
    destination = _destination(clusters[0].target, namespace)
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
    home = gitops.namespace or ARGOCD_NAMESPACE
    labels = app_labels("gitops", name, "argocd")
    meta = object_meta(name, home, labels)
    if settings.finalizer:
        meta["finalizers"] = [ARGOCD_FINALIZER]
    out: list[dict[str, Any]] = []
    project = settings.project
    if settings.app_project:
        project = name
        out.append(_app_project(gitops, name, home, labels, namespace, clusters))
    spec: dict[str, Any] = {
        "project": project,
        "ignoreDifferences": [dict(rule) for rule in ARGOCD_IGNORED],
        "source": {
            "repoURL": gitops.repo_url,
            "targetRevision": gitops.branch,
            "path": rendered_path(gitops, env, clusters[0].folder),
        },
        "destination": destination,
        "syncPolicy": policy,
    }
    if len(clusters) == 1:
        out.append(manifest("argoproj.io/v1alpha1", "Application", meta, spec=spec))
        return out
    # A fleet: one Application per cluster, from a list generator (Argo CD v3.5.1,
    # applicationset/generators/list.go: each element is one parameter set; with goTemplate
    # the template reads them as {{.key}}, and missingkey=error refuses an unknown one).
    by_server = clusters[0].target is not None and clusters[0].target.server is not None
    key = "server" if by_server else "name"
    spec["source"]["path"] = rendered_path(gitops, env, "{{.cluster}}")
    spec["destination"] = {**destination, key: "{{.destination}}"}
    elements = [
        {
            "cluster": c.folder,
            "destination": (c.target.server or "") if by_server and c.target else c.folder,
        }
        for c in clusters
    ]
    template_meta = {k: v for k, v in meta.items() if k != "name"}
    template_meta["name"] = f"{name}-{{{{.cluster}}}}"
    out.append(
        manifest(
            "argoproj.io/v1alpha1",
            "ApplicationSet",
            object_meta(name, home, labels),
            spec={
                "goTemplate": True,
                "goTemplateOptions": ["missingkey=error"],
                "generators": [{"list": {"elements": elements}}],
                "template": {"metadata": template_meta, "spec": spec},
            },
        )
    )
    return out


def _app_project(
    gitops: GitOps,
    name: str,
    home: str,
    labels: Mapping[str, str],
    namespace: str,
    clusters: Sequence[ClusterBuild],
) -> dict[str, Any]:
    """An AppProject permitting exactly what the environment's objects need, as Argo CD v3.5.1
    judges it (``pkg/apis/application/v1alpha1/app_project_types.go``): the repository
    (``IsSourcePermitted``); the Application's destination and every namespace an object is
    in, on each cluster (``IsDestinationPermitted``, called by ``IsResourcePermitted`` for a
    namespaced object only); each cluster-scoped kind (``IsGroupKindNamePermitted``: an empty
    cluster whitelist permits none) and each namespaced kind (a whitelist that is set permits
    only what it lists). Sync wave -1: it exists before the Applications that name it."""
    namespaces = sorted({namespace, *(n for c in clusters for n in c.namespaces)})
    destinations = []
    for c in clusters:
        where = _destination(c.target, namespace)
        where.pop("namespace", None)
        destinations += [{**where, "namespace": n} for n in namespaces]
    kinds = {k for c in clusters for k in c.kinds}
    if gitops.argocd.create_namespace:
        kinds.add(("", "Namespace", False))
    spec: dict[str, Any] = {
        "description": f"kubetrain: what rendered/{name.removeprefix('kubetrain-')} deploys",
        "sourceRepos": [gitops.repo_url],
        "destinations": destinations,
        "namespaceResourceWhitelist": [
            {"group": g, "kind": k} for g, k, namespaced in sorted(kinds) if namespaced
        ],
    }
    cluster_kinds = [
        {"group": g, "kind": k} for g, k, namespaced in sorted(kinds) if not namespaced
    ]
    if cluster_kinds:
        spec["clusterResourceWhitelist"] = cluster_kinds
    return manifest(
        "argoproj.io/v1alpha1",
        "AppProject",
        object_meta(name, home, labels, {"argocd.argoproj.io/sync-wave": "-1"}),
        spec=spec,
    )


def delivery_objects(
    gitops: GitOps,
    env: str,
    has_crds: bool,
    *,
    has_prerequisites: bool = False,
    namespace: str = "default",
    namespace_labels: Mapping[str, str] | None = None,
    clusters: Sequence[ClusterBuild] = (),
) -> list[dict[str, Any]]:
    """The delivery objects of environment ``env`` (see the module docstring). ``namespace``
    and ``namespace_labels``: the stack's namespace and its labels, for Argo CD's
    ``CreateNamespace``. ``clusters``: the clusters of ``kubetrain:clusters`` with what each
    one's tree holds (without them, the environment is its own cluster and ``has_crds`` and
    ``has_prerequisites`` describe its tree)."""
    if not clusters:
        clusters = (ClusterBuild(has_crds=has_crds, has_prerequisites=has_prerequisites),)
    out: list[dict[str, Any]] = []
    if "flux" in gitops.engines:
        out += _flux(gitops, env, clusters)
    if "argocd" in gitops.engines:
        out += _argocd(gitops, env, namespace, namespace_labels or {}, clusters)
    return [canonical(obj) for obj in out]
