"""GitOps delivery objects kubetrain emits under ``rendered/clusters/<env>/``: Flux's
``GitRepository`` and ``Kustomization`` and Argo CD's ``Application``, ``ApplicationSet`` (a
fleet) and ``AppProject``.

The models describe the fields kubetrain writes (see :mod:`kubetrain.builders.delivery`), with
what the real CRDs require and bound of them (no more: ``tests/test_apiserver_corpus_custom.py``
compares them with ``../shared/crds``), so ``validate`` checks delivery objects without extra
schema locations or ``--crd``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..models.base import Strict, resource_kind
from ..models.scheduling import ObjectMeta

__all__ = [
    "ArgoAppProject",
    "ArgoApplication",
    "ArgoApplicationSet",
    "FluxGitRepository",
    "FluxKustomization",
]

_DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"


class GitRef(Strict):
    branch: str | None = Field(default=None, description="Branch to follow. Default: master.")


class LocalObjectReference(Strict):
    name: str = Field(description="Name of the object.")


class GitRepositorySpec(Strict):
    interval: str = Field(pattern=_DURATION, description="How often Flux fetches the branch.")
    url: str = Field(
        pattern=r"^(http|https|ssh)://.*$",
        description="Git URL of the repository (http, https or ssh; not git@host:path).",
    )
    ref: GitRef | None = Field(default=None, description="What to check out.")
    secret_ref: LocalObjectReference | None = Field(
        default=None, alias="secretRef", description="Credentials of a private repository."
    )


@resource_kind("source.toolkit.fluxcd.io/v1", "GitRepository")
class FluxGitRepository(Strict):
    """The Git repository holding ``rendered/``, as a Flux source."""

    api_version: Literal["source.toolkit.fluxcd.io/v1"] = Field(alias="apiVersion")
    kind: Literal["GitRepository"]
    metadata: ObjectMeta
    spec: GitRepositorySpec | None = None


class SourceRef(Strict):
    kind: Literal["OCIRepository", "GitRepository", "Bucket", "ExternalArtifact"] = Field(
        description="Kind of the source."
    )
    name: str = Field(description="Name of the source.")
    namespace: str | None = Field(
        default=None, description="Namespace of the source. Default: the Kustomization's."
    )


class DependsOn(Strict):
    name: str = Field(description="A Kustomization that must be ready first.")
    namespace: str | None = Field(
        default=None, description="Its namespace. Default: the Kustomization's."
    )


class PatchTarget(Strict):
    group: str | None = None
    kind: str | None = None
    annotation_selector: str | None = Field(
        default=None,
        alias="annotationSelector",
        description="Objects whose annotations match this selector (key=value, key!=value).",
    )


class Patch(Strict):
    patch: str = Field(description="Inline strategic-merge patch.")
    target: PatchTarget | None = Field(
        default=None, description="Objects the patch applies to. Default: every object."
    )


class SecretKeyReference(Strict):
    name: str = Field(description="Name of the Secret.")
    key: str | None = Field(default=None, description="Key in the Secret. Default: value.")


class KubeConfig(Strict):
    secret_ref: SecretKeyReference | None = Field(
        default=None,
        alias="secretRef",
        description="Secret holding the remote cluster's kubeconfig.",
    )


class KustomizationSpec(Strict):
    interval: str = Field(pattern=_DURATION, description="How often Flux reconciles.")
    kube_config: KubeConfig | None = Field(
        default=None,
        alias="kubeConfig",
        description="Apply to a remote cluster with this kubeconfig (Flux on a hub cluster).",
    )
    path: str | None = Field(
        default=None,
        description="Folder of the kustomization.yaml, from the repository root. Default: root.",
    )
    prune: bool = Field(description="Delete objects that left the folder.")
    source_ref: SourceRef = Field(alias="sourceRef", description="The GitRepository.")
    depends_on: list[DependsOn] | None = Field(
        default=None, alias="dependsOn", description="Kustomizations to wait for."
    )
    wait: bool | None = Field(default=None, description="Wait until every object is ready.")
    patches: list[Patch] | None = Field(default=None, description="Patches applied by Flux.")


@resource_kind("kustomize.toolkit.fluxcd.io/v1", "Kustomization")
class FluxKustomization(Strict):
    """A Flux Kustomization applying one folder of ``rendered/``."""

    api_version: Literal["kustomize.toolkit.fluxcd.io/v1"] = Field(alias="apiVersion")
    kind: Literal["Kustomization"]
    metadata: ObjectMeta
    spec: KustomizationSpec | None = None


class ApplicationSource(Strict):
    repo_url: str = Field(alias="repoURL", description="Git URL of the repository.")
    target_revision: str | None = Field(
        default=None, alias="targetRevision", description="Branch to follow. Default: HEAD."
    )
    path: str | None = Field(
        default=None, description="Folder of the kustomization.yaml, from the repository root."
    )


class ApplicationDestination(Strict):
    server: str | None = Field(default=None, description="API server of the target cluster.")
    name: str | None = Field(
        default=None, description="Name of the target cluster as Argo CD knows it."
    )
    namespace: str | None = Field(
        default=None, description="Namespace of objects without one; what CreateNamespace creates."
    )


class Automated(Strict):
    allow_empty: bool | None = Field(
        default=None,
        alias="allowEmpty",
        description="Sync a folder with no objects (prune everything). Default: false.",
    )
    prune: bool | None = Field(
        default=None, description="Delete objects that left the folder. Default: false."
    )
    self_heal: bool | None = Field(
        default=None, alias="selfHeal", description="Undo changes made in the cluster."
    )


class Backoff(Strict):
    duration: str | None = Field(default=None, description="First wait between retries.")
    factor: int | None = Field(default=None, description="Multiplier per retry.")
    max_duration: str | None = Field(default=None, alias="maxDuration", description="Longest wait.")


class Retry(Strict):
    limit: int | None = Field(default=None, description="Retries of a failed sync.")
    backoff: Backoff | None = Field(default=None, description="Waits between retries.")


class ManagedNamespaceMetadata(Strict):
    labels: dict[str, str] | None = Field(default=None, description="Labels of the namespace.")


class SyncPolicy(Strict):
    automated: Automated | None = Field(
        default=None, description="Sync on every change of the branch."
    )
    sync_options: list[str] | None = Field(
        default=None, alias="syncOptions", description="Options of every sync."
    )
    retry: Retry | None = Field(default=None, description="Retry of a failed sync.")
    managed_namespace_metadata: ManagedNamespaceMetadata | None = Field(
        default=None,
        alias="managedNamespaceMetadata",
        description="Metadata of the namespace CreateNamespace creates.",
    )


class IgnoreDifferences(Strict):
    group: str | None = Field(default=None, description="API group of the objects.")
    kind: str = Field(description="Kind of the objects.")
    jq_path_expressions: list[str] | None = Field(
        default=None, alias="jqPathExpressions", description="Parts the comparison leaves out."
    )


class ApplicationSpec(Strict):
    project: str = Field(description="Argo CD project.")
    ignore_differences: list[IgnoreDifferences] | None = Field(
        default=None, alias="ignoreDifferences", description="What the comparison leaves out."
    )
    source: ApplicationSource | None = Field(default=None, description="Where the manifests are.")
    destination: ApplicationDestination = Field(description="Where they go.")
    sync_policy: SyncPolicy | None = Field(
        default=None, alias="syncPolicy", description="When and how to sync."
    )


@resource_kind("argoproj.io/v1alpha1", "Application")
class ArgoApplication(Strict):
    """An Argo CD Application syncing one folder of ``rendered/``."""

    api_version: Literal["argoproj.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Application"]
    metadata: ObjectMeta
    spec: ApplicationSpec


class ApplicationSetTemplateMeta(Strict):
    name: str | None = Field(default=None, description="Name of each Application.")
    namespace: str | None = Field(default=None, description="Namespace of each Application.")
    labels: dict[str, str] | None = Field(default=None, description="Labels of each Application.")
    finalizers: list[str] | None = Field(default=None, description="Finalizers of each.")


class ApplicationSetTemplate(Strict):
    metadata: ApplicationSetTemplateMeta = Field(description="Metadata of each Application.")
    spec: ApplicationSpec = Field(description="Spec of each Application.")


class ListGenerator(Strict):
    elements: list[dict[str, str]] = Field(
        description="One parameter set per Application (a cluster of the fleet)."
    )


class ApplicationSetGenerator(Strict):
    list: ListGenerator | None = Field(default=None, description="Applications of a list.")


class ApplicationSetSyncPolicy(Strict):
    preserve_resources_on_deletion: bool | None = Field(
        default=None,
        alias="preserveResourcesOnDeletion",
        description="Keep what an Application deployed when the ApplicationSet deletes it.",
    )


class ApplicationSetSpec(Strict):
    go_template: bool | None = Field(
        default=None, alias="goTemplate", description="Templates are Go templates."
    )
    go_template_options: list[str] | None = Field(
        default=None, alias="goTemplateOptions", description="Options of the Go templates."
    )
    generators: list[ApplicationSetGenerator] = Field(description="Where parameters come from.")
    template: ApplicationSetTemplate = Field(description="The Application of each parameter set.")
    sync_policy: ApplicationSetSyncPolicy | None = Field(
        default=None, alias="syncPolicy", description="What deleting the set deletes."
    )


@resource_kind("argoproj.io/v1alpha1", "ApplicationSet")
class ArgoApplicationSet(Strict):
    """An Argo CD ApplicationSet: one Application per cluster of a fleet (Argo CD v3.5.1,
    ``pkg/apis/application/v1alpha1/applicationset_types.go``)."""

    api_version: Literal["argoproj.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["ApplicationSet"]
    metadata: ObjectMeta
    spec: ApplicationSetSpec


class GroupKind(Strict):
    group: str = Field(description="API group ('' for the core group).")
    kind: str = Field(description="Kind.")


class ProjectDestination(Strict):
    server: str | None = Field(default=None, description="API server of a permitted cluster.")
    name: str | None = Field(default=None, description="Name of a permitted cluster.")
    namespace: str | None = Field(default=None, description="A permitted namespace.")


class AppProjectSpec(Strict):
    description: str | None = Field(
        default=None, max_length=255, description="What the project is for."
    )
    source_repos: list[str] | None = Field(
        default=None, alias="sourceRepos", description="Repositories its Applications read."
    )
    destinations: list[ProjectDestination] | None = Field(
        default=None, description="Clusters and namespaces its Applications may deploy to."
    )
    cluster_resource_whitelist: list[GroupKind] | None = Field(
        default=None,
        alias="clusterResourceWhitelist",
        description="Cluster-scoped kinds its Applications may deploy (none when empty).",
    )
    namespace_resource_whitelist: list[GroupKind] | None = Field(
        default=None,
        alias="namespaceResourceWhitelist",
        description="Namespaced kinds its Applications may deploy (all when unset).",
    )


@resource_kind("argoproj.io/v1alpha1", "AppProject")
class ArgoAppProject(Strict):
    """An Argo CD AppProject granting an environment's Applications what its objects need."""

    api_version: Literal["argoproj.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["AppProject"]
    metadata: ObjectMeta
    spec: AppProjectSpec
