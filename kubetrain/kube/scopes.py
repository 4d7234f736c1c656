"""Whether a kind that is not Kubernetes' own is namespaced: the scope of its CRD.

A plain manifest (``kubetrain:manifests``) without ``metadata.namespace`` goes to the stack's
namespace if its kind is namespaced and stays cluster-wide otherwise. For Kubernetes' own kinds
the schemas tell (:data:`kubetrain.kube.schemas.CLUSTER_SCOPED_KINDS`); for a custom kind,
:func:`namespaced` asks, in this order, the CRDs the stack itself holds, the stack's declared
lists (``kubetrain:external.namespacedKinds`` / ``clusterScopedKinds``), and :data:`KNOWN`:
the ``spec.scope`` of the CRDs of the projects kubetrain works with, as those projects publish
them (``tests/test_scopes.py`` holds the table to ``../shared/crds``). A kind none of them knows
has no answer, and the loader says so rather than guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["KNOWN", "kind_key", "namespaced"]

#: (API group, kind) -> namespaced, from each project's CRD ``spec.scope``.
KNOWN: Mapping[tuple[str, str], bool] = {
    ("argoproj.io", "Application"): True,
    ("argoproj.io", "AppProject"): True,
    ("external-secrets.io", "ClusterSecretStore"): False,
    ("external-secrets.io", "ExternalSecret"): True,
    ("external-secrets.io", "SecretStore"): True,
    ("external-secrets.io", "ClusterExternalSecret"): False,
    ("bitnami.com", "SealedSecret"): True,
    ("jobset.x-k8s.io", "JobSet"): True,
    ("kubeflow.org", "JAXJob"): True,
    ("kubeflow.org", "MPIJob"): True,
    ("kubeflow.org", "PaddleJob"): True,
    ("kubeflow.org", "PyTorchJob"): True,
    ("kubeflow.org", "TFJob"): True,
    ("kubeflow.org", "XGBoostJob"): True,
    ("kueue.x-k8s.io", "ClusterQueue"): False,
    ("kueue.x-k8s.io", "Cohort"): False,
    ("kueue.x-k8s.io", "LocalQueue"): True,
    ("kueue.x-k8s.io", "ResourceFlavor"): False,
    ("kueue.x-k8s.io", "Topology"): False,
    ("kueue.x-k8s.io", "WorkloadPriorityClass"): False,
    ("kustomize.toolkit.fluxcd.io", "Kustomization"): True,
    ("source.toolkit.fluxcd.io", "GitRepository"): True,
    ("source.toolkit.fluxcd.io", "OCIRepository"): True,
    ("scheduling.volcano.sh", "PodGroup"): True,
    ("scheduling.volcano.sh", "Queue"): False,
    ("scheduling.x-k8s.io", "PodGroup"): True,
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): False,
    ("trainer.kubeflow.org", "TrainingRuntime"): True,
    ("trainer.kubeflow.org", "TrainJob"): True,
    ("paddlepaddle.org", "TrainingJob"): True,
    ("kubetrain.io", "Learner"): True,
}


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
    the stack's own CRDs), the declared lists, then :data:`KNOWN`; ``None`` if nothing says."""
    group = api_version.rpartition("/")[0]
    if (group, kind) in crds:
        return crds[(group, kind)]
    key = kind_key(api_version, kind)
    if key in set(declared_namespaced):
        return True
    if key in set(declared_cluster):
        return False
    return KNOWN.get((group, kind))
