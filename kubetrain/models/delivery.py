"""GitOps delivery objects kubetrain emits under ``rendered/clusters/<env>/``: Flux's
``GitRepository`` and ``Kustomization`` and Argo CD's ``Application``.

The models describe the fields kubetrain writes (see :mod:`kubetrain.builders.delivery`), strictly,
so ``validate`` checks delivery objects without extra schema locations; the tests also check them
against the upstream CRD schemas.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Strict, resource_kind
from .scheduling import ObjectMeta

__all__ = ["ArgoApplication", "FluxGitRepository", "FluxKustomization"]

_DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"


class GitRef(Strict):
    branch: str = Field(description="Branch to follow.")


class LocalObjectReference(Strict):
    name: str = Field(description="Name of the object.")


class GitRepositorySpec(Strict):
    interval: str = Field(pattern=_DURATION, description="How often Flux fetches the branch.")
    url: str = Field(description="Git URL of the repository.")
    ref: GitRef = Field(description="What to check out.")
    secret_ref: LocalObjectReference | None = Field(
        default=None, alias="secretRef", description="Credentials of a private repository."
    )


@resource_kind("source.toolkit.fluxcd.io/v1", "GitRepository")
class FluxGitRepository(Strict):
    """The Git repository holding ``rendered/``, as a Flux source."""

    api_version: Literal["source.toolkit.fluxcd.io/v1"] = Field(alias="apiVersion")
    kind: Literal["GitRepository"]
    metadata: ObjectMeta
    spec: GitRepositorySpec


class SourceRef(Strict):
    kind: Literal["GitRepository", "OCIRepository", "Bucket"] = Field(
        description="Kind of the source."
    )
    name: str = Field(description="Name of the source.")
    namespace: str | None = Field(default=None, description="Namespace of the source.")


class DependsOn(Strict):
    name: str = Field(description="A Kustomization that must be ready first.")
    namespace: str | None = Field(default=None, description="Its namespace.")


class PatchTarget(Strict):
    group: str | None = None
    kind: str | None = None


class Patch(Strict):
    patch: str = Field(description="Inline strategic-merge patch.")
    target: PatchTarget = Field(description="Objects the patch applies to.")


class KustomizationSpec(Strict):
    interval: str = Field(pattern=_DURATION, description="How often Flux reconciles.")
    path: str = Field(description="Folder of the kustomization.yaml, from the repository root.")
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
    spec: KustomizationSpec


class ApplicationSource(Strict):
    repo_url: str = Field(alias="repoURL", description="Git URL of the repository.")
    target_revision: str = Field(alias="targetRevision", description="Branch to follow.")
    path: str = Field(description="Folder of the kustomization.yaml, from the repository root.")


class ApplicationDestination(Strict):
    server: str = Field(description="API server of the target cluster.")
    namespace: str | None = Field(default=None, description="Namespace CreateNamespace creates.")


class Automated(Strict):
    prune: bool = Field(description="Delete objects that left the folder.")
    self_heal: bool = Field(alias="selfHeal", description="Undo changes made in the cluster.")


class Backoff(Strict):
    duration: str = Field(description="First wait between retries.")
    factor: int = Field(description="Multiplier per retry.")
    max_duration: str = Field(alias="maxDuration", description="Longest wait.")


class Retry(Strict):
    limit: int = Field(description="Retries of a failed sync.")
    backoff: Backoff = Field(description="Waits between retries.")


class ManagedNamespaceMetadata(Strict):
    labels: dict[str, str] | None = Field(default=None, description="Labels of the namespace.")


class SyncPolicy(Strict):
    automated: Automated = Field(description="Sync on every change of the branch.")
    sync_options: list[str] | None = Field(
        default=None, alias="syncOptions", description="Options of every sync."
    )
    retry: Retry | None = Field(default=None, description="Retry of a failed sync.")
    managed_namespace_metadata: ManagedNamespaceMetadata | None = Field(
        default=None,
        alias="managedNamespaceMetadata",
        description="Metadata of the namespace CreateNamespace creates.",
    )


class ApplicationSpec(Strict):
    project: str = Field(description="Argo CD project.")
    source: ApplicationSource = Field(description="Where the manifests are.")
    destination: ApplicationDestination = Field(description="Where they go.")
    sync_policy: SyncPolicy = Field(alias="syncPolicy", description="When and how to sync.")


@resource_kind("argoproj.io/v1alpha1", "Application")
class ArgoApplication(Strict):
    """An Argo CD Application syncing one folder of ``rendered/``."""

    api_version: Literal["argoproj.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Application"]
    metadata: ObjectMeta
    spec: ApplicationSpec
