"""The stack file: ``stacks/Pulumi.<env>.yaml``, a real Pulumi stack settings file.

kubetrain reads the ``kubetrain:*`` keys of its ``config`` block; keys of other namespaces
(``kubernetes:context``, ``pulumi:tags``, ...) belong to other Pulumi packages and are left alone.
Keys whose feature arrives in a later release are accepted now, so stack files written against
the documented contract keep loading; their descriptions say which.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PlainSerializer,
    PlainValidator,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..kube.names import LABEL_VALUE, check_label_key
from ..kube.regex import go_regex
from ..kube.schemas import parse_version
from .base import DNSLabel, DNSSubdomain, Mode, Strict, reject_unquoted_number
from .limits import MAX_CLUSTERS, MAX_NODE_SELECTOR

__all__ = [
    "CLUSTER_PREFIX",
    "CONFIG_NAMESPACE",
    "NATIVE_WORKLOADS",
    "ArgoRetry",
    "ArgoSettings",
    "ClusterTarget",
    "External",
    "FluxDependency",
    "FluxSettings",
    "FluxSourceRef",
    "GitOps",
    "KubeConfigRef",
    "MultiKueue",
    "MultiKueueWorker",
    "NativeWorkload",
    "Patch",
    "PatchTarget",
    "RetryBackoff",
    "SecretStoreRef",
    "SecureValue",
    "StackFile",
    "StackSettings",
    "delivered_to",
    "go_duration",
    "repo_url_problem",
]

#: The Pulumi config namespace of kubetrain's keys (``kubetrain:namespace`` ...).
CONFIG_NAMESPACE = "kubetrain"

#: What runs each replica index of a Kubeflow job in native mode (docs/native-workloads.md): a
#: bare Pod as the training operator creates, one batch/v1 Job, or one JobSet for the whole job.
NativeWorkload = Literal["pod", "job", "jobset"]
NATIVE_WORKLOADS: tuple[str, ...] = ("pod", "job", "jobset")


class SecretStoreRef(Strict):
    """The External Secrets Operator store render mode points its ExternalSecrets at."""

    kind: Literal["SecretStore", "ClusterSecretStore"] = Field(
        default="ClusterSecretStore", description="Kind of the store. Default: ClusterSecretStore."
    )
    name: str = Field(description="Name of the store.")


class SecureValue(Strict):
    """A value encrypted by ``pulumi config set --secret``; kubetrain never decrypts it itself."""

    secure: str = Field(description="Ciphertext written by the Pulumi CLI.")

    @model_validator(mode="before")
    @classmethod
    def _not_plaintext(cls, value: Any) -> Any:
        if isinstance(value, str | int | float):
            raise ValueError(
                "a plaintext credential is not allowed in a stack file: set it with "
                "`pulumi config set --secret --path 'kubetrain:credentials.<name>.<key>' VALUE`"
            )
        return value


#: A kind as ``<Kind>.<group>`` (``Widget.example.com``).
KindKey = Annotated[str, Field(pattern=r"^[A-Z][A-Za-z0-9]*\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")]


class DeclaredRuntime(Strict):
    """A Kubeflow Trainer runtime that exists in the cluster (not delivered by the stack)."""

    kind: Literal["ClusterTrainingRuntime", "TrainingRuntime"] = Field(
        default="ClusterTrainingRuntime",
        description="ClusterTrainingRuntime or TrainingRuntime. Default: ClusterTrainingRuntime.",
    )
    name: DNSSubdomain = Field(
        description="Name of the runtime, as TrainJobs' runtimeRef names it."
    )
    namespace: DNSLabel | None = Field(
        default=None,
        description="Namespace of a TrainingRuntime. Default: kubetrain:namespace.",
    )
    file: str | None = Field(
        default=None,
        description="A YAML file of the project holding the runtime (its spec is what kubetrain "
        "checks TrainJobs against and builds them from; the file is not delivered).",
    )
    spec: dict[str, Any] | None = Field(
        default=None, description="The runtime's spec, inline (instead of file)."
    )


class External(Strict):
    """Objects the rendered output may reference without rendering them (checked by validate)."""

    secrets: list[str] = Field(default_factory=list, description="Secret names, or namespace/name.")
    config_maps: list[str] = Field(
        default_factory=list, alias="configMaps", description="ConfigMap names, or namespace/name."
    )
    service_accounts: list[str] = Field(
        default_factory=list,
        alias="serviceAccounts",
        description="ServiceAccount names, or namespace/name.",
    )
    persistent_volume_claims: list[str] = Field(
        default_factory=list,
        alias="persistentVolumeClaims",
        description="PersistentVolumeClaim names, or namespace/name.",
    )
    namespaces: list[DNSLabel] = Field(
        default_factory=list,
        description="Namespaces that exist already (made by the platform team or another "
        "environment): kubetrain does not create them. default and the kube-* namespaces always "
        "count as existing.",
    )
    custom_resource_definitions: list[DNSSubdomain] = Field(
        default_factory=list,
        alias="customResourceDefinitions",
        description="kubetrain CRDs another environment on the same cluster installs, by name "
        "(e.g. trainingjobs.paddlepaddle.org): this stack does not render or deploy them.",
    )
    namespaced_kinds: list[KindKey] = Field(
        default_factory=list,
        alias="namespacedKinds",
        description="Custom kinds whose objects are namespaced, as <Kind>.<group> "
        "(Widget.example.com): a plain manifest of one without a namespace goes to "
        "kubetrain:namespace. Kinds kubetrain knows, and those whose CRD the stack holds, "
        "need no entry.",
    )
    cluster_scoped_kinds: list[KindKey] = Field(
        default_factory=list,
        alias="clusterScopedKinds",
        description="Custom kinds whose objects are cluster-scoped, as <Kind>.<group>.",
    )
    training_runtimes: list[DeclaredRuntime] = Field(
        default_factory=list,
        alias="trainingRuntimes",
        description="Kubeflow Trainer runtimes that exist in the cluster, which TrainJobs may "
        "name: {kind, name, namespace} with file: or spec:, or by name alone for those "
        "Kubeflow publishes with Trainer v2.3.0 (torch-distributed...; operator mode).",
    )
    local_queues: list[str] = Field(
        default_factory=list,
        alias="localQueues",
        description="Kueue LocalQueues that exist in the cluster, by name (in kubetrain:namespace) "
        "or namespace/name: jobs may name them in kueue.x-k8s.io/queue-name.",
    )
    workload_priority_classes: list[DNSSubdomain] = Field(
        default_factory=list,
        alias="workloadPriorityClasses",
        description="Kueue WorkloadPriorityClasses that exist in the cluster, by name: jobs may "
        "name them in kueue.x-k8s.io/priority-class.",
    )


def go_duration(value: str) -> str:
    """``value`` if it is a Go duration such as ``5m`` or ``1h30m`` (what Flux and Argo CD
    parse), else a ValueError quoting it."""
    if not re.fullmatch(r"([0-9]+(\.[0-9]+)?(ms|s|m|h))+", value):
        raise ValueError(f"must be a Go duration such as 5m or 1h30m, got {value!r}")
    return value


class FluxSourceRef(Strict):
    """An existing Flux source the Kustomizations read instead of a GitRepository of their own."""

    kind: Literal["GitRepository", "OCIRepository", "Bucket"] = Field(
        default="GitRepository", description="Kind of the source. Default: GitRepository."
    )
    name: DNSSubdomain = Field(description="Name of the source.")
    namespace: DNSLabel | None = Field(
        default=None, description="Namespace of the source. Default: the Kustomizations' own."
    )


class FluxDependency(Strict):
    """A Flux Kustomization that must be ready before rendered/<env> is applied."""

    name: DNSSubdomain = Field(description="Name of the Kustomization, e.g. volcano.")
    namespace: DNSLabel | None = Field(
        default=None, description="Its namespace. Default: the Kustomizations' own."
    )


class FluxSettings(Strict):
    """Flux-only settings of the delivery objects."""

    secret_ref: DNSSubdomain | None = Field(
        default=None,
        alias="secretRef",
        description="Secret (in the Flux namespace) with the credentials of a private "
        "repository, as GitRepository spec.secretRef. Default: none (a public repository).",
    )
    source_ref: FluxSourceRef | None = Field(
        default=None,
        alias="sourceRef",
        description="Reuse this existing source (e.g. the cluster's flux-system GitRepository) "
        "instead of writing a GitRepository; repoURL, branch and secretRef are then not used. "
        "Default: a GitRepository of the environment's own.",
    )
    depends_on: list[FluxDependency] = Field(
        default_factory=list,
        alias="dependsOn",
        description="Kustomizations that must be ready first (those installing External "
        "Secrets, Volcano or the training operator). Default: none.",
    )


class RetryBackoff(Strict):
    """How long Argo CD waits between sync retries."""

    duration: str = Field(default="5s", description="First wait, a Go duration. Default: 5s.")
    factor: int = Field(default=2, ge=1, description="Multiplier per retry. Default: 2.")
    max_duration: str = Field(
        default="3m", alias="maxDuration", description="Longest wait. Default: 3m."
    )

    @field_validator("duration", "max_duration")
    @classmethod
    def _duration(cls, value: str) -> str:
        return go_duration(value)


class ArgoRetry(Strict):
    """Argo CD's retry of a failed sync."""

    limit: int = Field(ge=0, description="Retries of a failed sync (0: none).")
    backoff: RetryBackoff = Field(
        default_factory=RetryBackoff, description="Waits between retries."
    )


class ArgoSettings(Strict):
    """Argo CD-only settings of the Application."""

    project: DNSSubdomain = Field(
        default="default", description="Argo CD project. Default: default."
    )
    retry: ArgoRetry | None = Field(
        default=None, description="Retry failed syncs. Default: no retry."
    )
    finalizer: bool = Field(
        default=False,
        description="Deleting the Application deletes what it deployed (its "
        "resources-finalizer; CRDs and Namespaces are kept). Default: false.",
    )
    create_namespace: bool = Field(
        default=False,
        alias="createNamespace",
        description="Argo CD creates the stack's namespace (CreateNamespace=true) with the Pod "
        "Security labels, e.g. when kubetrain:external.namespaces lists it. Default: false.",
    )
    app_project: bool = Field(
        default=False,
        alias="appProject",
        description="Write an AppProject kubetrain-<env> granting exactly what the rendered "
        "objects need (the repository, the clusters and namespaces they go to, their "
        "cluster-scoped and namespaced kinds), and put the Application in it. Default: false.",
    )

    @model_validator(mode="after")
    def _one_project(self) -> ArgoSettings:
        if self.app_project and self.project != "default":
            raise ValueError(
                "give either project (an AppProject that exists) or appProject: true (the "
                "environment's own, kubetrain-<env>), not both"
            )
        return self


def repo_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be the Git URL of the GitOps objects (see ``GitOps.repo_url``);
    ``None`` when it can. Never quotes the URL."""
    try:
        parts = urllib.parse.urlsplit(url)
        _ = parts.port  # raises ValueError for a port that is not one
    except ValueError:
        return "is not a URL (the value is not shown: it may hold a credential)"
    if parts.scheme not in ("https", "http", "ssh") or not url.startswith(f"{parts.scheme}://"):
        return (
            "must be an https://, http:// or ssh:// URL, as Flux's GitRepository requires "
            "(the value is not shown: it may hold a credential)"
        )
    if not parts.hostname or any(c.isspace() or not c.isprintable() for c in url):
        return "must name a host, without spaces or control characters (the value is not shown)"
    if parts.password is not None or (parts.username is not None and parts.scheme != "ssh"):
        return (
            "must not hold credentials (user:token@): the URL is written in plain text into the "
            "Flux and Argo CD objects; give the repository's credentials to Flux (secretRef) or "
            "Argo CD (a repository Secret) instead"
        )
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        # Git never reads a query or fragment of a remote URL; a token put there
        # (?private_token=, #access_token=) would be written into the delivery objects.
        return (
            "must not have a query (?...) or a fragment (#...): Git does not use them, and a "
            "token in them is written in plain text into the Flux and Argo CD objects (the "
            "value is not shown); give the repository's credentials to Flux (secretRef) or "
            "Argo CD (a repository Secret) instead"
        )
    return None


class GitOps(Strict):
    """Where Flux and Argo CD find ``rendered/<env>`` (delivery objects under rendered/clusters)."""

    repo_url: str = Field(
        alias="repoURL", description="Git URL of the repository holding rendered/."
    )
    branch: str = Field(default="main", description="Branch to follow. Default: main.")
    engines: list[Literal["flux", "argocd"]] = Field(
        default_factory=lambda: ["flux"],  # type: ignore[arg-type]
        min_length=1,
        description="Delivery engines. Default: [flux].",
    )
    interval: str = Field(default="5m", description="Flux reconcile interval. Default: 5m.")
    namespace: DNSLabel | None = Field(
        default=None,
        description="Namespace of the delivery objects. Default: flux-system / argocd per engine.",
    )
    flux: FluxSettings = Field(
        default_factory=FluxSettings, description="Flux-only settings (secretRef, sourceRef...)."
    )
    argocd: ArgoSettings = Field(
        default_factory=ArgoSettings,
        description="Argo CD-only settings (project, retry, finalizer, createNamespace).",
    )
    project_dir: str = Field(
        default="",
        alias="projectDir",
        description="Folder of the kubetrain project (Pulumi.yaml) inside the Git repository, "
        "with '/' separators. Default: the repository root.",
    )

    @field_validator("repo_url")
    @classmethod
    def _repo_url(cls, value: str) -> str:
        """What Flux's GitRepository accepts (its CRD's pattern ``^(http|https|ssh)://.*$``),
        without credentials: no user or token in an http(s) URL, no password in an ssh one
        (``ssh://git@host/...`` names a user only). The value is never quoted: it may hold a
        token."""
        if problem := repo_url_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("project_dir")
    @classmethod
    def _project_dir(cls, value: str) -> str:
        parts = value.strip("/").split("/") if value.strip("/") else []
        if value.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise ValueError(
                f"must be a relative folder inside the repository, e.g. deploy/ml, got {value!r}"
            )
        return "/".join(parts)

    @field_validator("interval")
    @classmethod
    def _interval(cls, value: str) -> str:
        return go_duration(value)


class PatchTarget(Strict):
    """Which documents a patch changes, as Kustomize's ``patches[].target`` selects them: every
    field given must match, each a regular expression matching the whole value, as in
    Kustomize."""

    group: str | None = Field(
        default=None,
        description="API group, e.g. kubeflow.org (a regular expression; '' for the core group).",
    )
    version: str | None = Field(
        default=None, description="API version, e.g. v1 (a regular expression)."
    )
    kind: str | None = Field(default=None, description="Kind, e.g. TFJob (a regular expression).")
    name: str | None = Field(default=None, description="metadata.name (a regular expression).")
    namespace: str | None = Field(
        default=None,
        description="Namespace (a regular expression); a job without one is in "
        "kubetrain:namespace.",
    )

    @field_validator("group", "version", "kind", "name", "namespace")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                go_regex(value)  # Kustomize compiles it with Go's regexp: RE2's language
            except ValueError as exc:
                raise ValueError(f"not a regular expression ({exc}), got {value!r}") from None
        return value


class Patch(Strict):
    """A Kustomize-style patch applied to job documents (and manifests) before they are
    expanded: a strategic merge patch (a mapping) or a JSON patch (RFC 6902, a list of
    operations), given inline (``patch``) or in a file (``path``)."""

    target: PatchTarget | None = Field(
        default=None,
        description="Documents to patch. Default for a strategic merge patch: the document "
        "its own apiVersion, kind, metadata.name and metadata.namespace name.",
    )
    patch: Any = Field(
        default=None,
        description="The patch: a mapping (strategic merge), a list of operations (JSON "
        "patch), or either written as a YAML string, as in kustomization.yaml.",
    )
    path: str | None = Field(
        default=None,
        description="A file holding the patch, relative to the project root (one or more "
        "YAML documents, each a patch).",
    )
    adds: bool = Field(
        default=False,
        description="The patch may add a container, init container, volume or replica type "
        "the document does not have (without it, such an addition is an error: most are a "
        "misspelt name). Default: false.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Patch:
        if (self.patch is None) == (self.path is None):
            raise ValueError("give exactly one of patch (inline) or path (a file)")
        return self


class SecretKeyRef(Strict):
    """A key of a Secret in the namespace of the Flux Kustomizations (Flux's
    ``meta.SecretKeyReference``)."""

    name: DNSSubdomain = Field(description="Name of the Secret.")
    key: str | None = Field(
        default=None,
        pattern=r"^[-._a-zA-Z0-9]+$",
        max_length=253,
        description="Key holding the kubeconfig. Default: Flux's (value, else value.yaml).",
    )


class KubeConfigRef(Strict):
    """Where Flux on a hub cluster finds the kubeconfig of a remote cluster (a Kustomization's
    ``spec.kubeConfig``)."""

    secret_ref: SecretKeyRef = Field(
        alias="secretRef", description="The Secret holding the remote cluster's kubeconfig."
    )


class ClusterTarget(Strict):
    """A cluster an environment delivers to (``kubetrain:clusters``): where Argo CD and Flux
    send ``rendered/<env>``, and what changes for that cluster (its GPU resource name, node
    selectors, patches such as its Kueue quota)."""

    name: DNSLabel = Field(
        description="Name of the cluster: two environments naming the same cluster deliver "
        "to one cluster (validate checks their objects together); in a fleet, the folder "
        "rendered/<env>/<name>; Argo CD's cluster name unless server is given."
    )
    server: str | None = Field(
        default=None,
        description="Argo CD destination.server: the URL of the cluster's API server as Argo "
        "CD knows it (https://kubernetes.default.svc: Argo CD's own cluster). Default: "
        "destination.name is the cluster's name.",
    )
    kube_config: KubeConfigRef | None = Field(
        default=None,
        alias="kubeConfig",
        description="Flux running on a hub cluster applies to this cluster with the kubeconfig "
        "in this Secret (Kustomization spec.kubeConfig.secretRef). Default: none (Flux runs "
        "in the cluster itself).",
    )
    gpu_resource: str | None = Field(
        default=None,
        alias="gpuResource",
        description="This cluster's extended resource name for GPUs (amd.com/gpu...), instead "
        "of kubetrain:gpuResource.",
    )
    node_selector: dict[str, str] = Field(
        default_factory=dict,
        alias="nodeSelector",
        max_length=MAX_NODE_SELECTOR,
        description="Node labels added to the nodeSelector of every pod template of this "
        "cluster's jobs (a value here wins over the job's own for the same key). Default: none.",
    )
    patches: list[Patch] = Field(
        default_factory=list,
        description="Patches applied after kubetrain:patches for this cluster only (its Kueue "
        "quota, images of its registry...), as kubetrain:patches.",
    )

    @field_validator("server")
    @classmethod
    def _server(cls, value: str | None) -> str | None:
        if value is not None and (problem := repo_url_problem(value)):
            raise ValueError(problem.replace("Flux's GitRepository", "Argo CD"))
        if value is not None and not value.startswith("https://"):
            raise ValueError("must be an https:// URL of the cluster's API server")
        return value

    @field_validator("gpu_resource")
    @classmethod
    def _gpu(cls, value: str | None) -> str | None:
        return None if value is None else gpu_resource_name(value)

    @field_validator("node_selector")
    @classmethod
    def _selector(cls, value: dict[str, str]) -> dict[str, str]:
        for key, label in value.items():
            if problem := check_label_key(key):
                raise ValueError(f"node label key {key!r}: {problem}")
            if problem := LABEL_VALUE.check(label):
                raise ValueError(f"node label {key}={label!r}: {problem}")
        return value


class MultiKueueWorker(Strict):
    """A worker cluster of ``kubetrain:multiKueue``: a MultiKueueCluster of that name."""

    name: DNSLabel = Field(
        description="Name of the worker cluster (its MultiKueueCluster), e.g. the name of "
        "the environment's cluster there."
    )
    kube_config_secret: DNSSubdomain = Field(
        alias="kubeConfigSecret",
        description="Secret in Kueue's namespace (kueue-system) whose key kubeconfig reaches "
        "the worker (MultiKueueCluster spec.clusterSource.kubeConfig).",
    )


class MultiKueue(Strict):
    """Kueue's MultiKueue: jobs queued to these ClusterQueues run on one of the workers."""

    cluster_queues: list[DNSSubdomain] = Field(
        alias="clusterQueues",
        min_length=1,
        max_length=MAX_CLUSTERS,
        description="ClusterQueues of the stack's manifests that dispatch their workloads "
        "(each gets the MultiKueue AdmissionCheck).",
    )
    workers: list[MultiKueueWorker] = Field(
        min_length=1,
        max_length=20,
        description="Worker clusters, at most 20 (MultiKueueConfig's bound).",
    )

    @field_validator("workers")
    @classmethod
    def _unique(cls, value: list[MultiKueueWorker]) -> list[MultiKueueWorker]:
        names = [w.name for w in value]
        if len(set(names)) != len(names):
            raise ValueError(f"a worker is listed twice: {', '.join(names)}")
        return value


def gpu_resource_name(value: str) -> str:
    """``value`` if it is an extended resource name (``<domain>/<name>``), else a ValueError."""
    problem = check_label_key(value) if "/" in value else "it has no domain prefix"
    if problem:
        raise ValueError(
            f"{value!r} is not an extended resource name such as nvidia.com/gpu: {problem}"
        )
    return value


def _mode(value: Any) -> Mode:
    """``kubetrain:mode`` as a :class:`~.base.Mode`, refused as a ``Literal`` of its strings
    is (the same error, so the same message)."""
    found = Mode.parse(value) if isinstance(value, str) else None
    if found is None:
        expected = " or ".join(repr(m.value) for m in Mode)
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )
    return found


#: ``kubetrain:mode``: read from its strings and described as them (the schema a ``Literal`` of
#: them has), held as the member, dumped as its string.
ModeSetting = Annotated[
    Mode,
    PlainValidator(_mode),
    PlainSerializer(lambda mode: mode.value, return_type=str),  # dumped as the plain string
    WithJsonSchema({"enum": [m.value for m in Mode], "type": "string"}),
]


class StackSettings(Strict):
    """Every ``kubetrain:*`` key of a stack file (the ``kubetrain:`` prefix removed)."""

    namespace: DNSLabel = Field(
        default="default", description="Namespace of jobs that do not name one. Default: default."
    )
    kubernetes_version: str = Field(
        default="1.33",
        alias="kubernetesVersion",
        description='Kubernetes minor version, quoted ("1.33"): API choice and validation target.',
    )
    mode: ModeSetting = Field(
        default=Mode.NATIVE,
        description="native: the objects the operator would create; operator: the custom "
        "resources (and CRDs kubetrain owns) for a cluster running the operator. Default: native.",
    )
    native_workload: NativeWorkload = Field(
        default="job",
        alias="nativeWorkload",
        description="Native mode, Kubeflow replica jobs (kubeflow.org/v1): what runs each replica "
        "index. pod: a bare Pod, as the training operator creates (nothing recreates it); job: "
        "a batch/v1 Job per index (restart policies, backoffLimit, deadline and suspend mapped "
        "onto the Job controller); jobset: one JobSet per job (needs the JobSet controller; the "
        "job succeeds with its chief and fails with any replica). One job can switch with the "
        "annotation kubetrain.io/native-workload. Default: job.",
    )
    gpu_resource: str = Field(
        default="nvidia.com/gpu",
        alias="gpuResource",
        description="Extended resource name written for GPUs. Default: nvidia.com/gpu.",
    )
    cluster_domain: DNSSubdomain | None = Field(
        default=None,
        alias="clusterDomain",
        description="DNS domain appended to service hosts, e.g. cluster.local. Default: none.",
    )
    gang_scheduler: Literal["none", "volcano", "scheduler-plugins"] = Field(
        default="none",
        alias="gangScheduler",
        description="Gang scheduler for multi-pod jobs (PodGroups). Default: none.",
    )
    secret_store: SecretStoreRef | None = Field(
        default=None,
        alias="secretStore",
        description="External Secrets store used for every Secret in render mode.",
    )
    jobs: list[Any] = Field(
        default_factory=list,
        description="Job documents of the accepted kinds (see the job schema).",
    )
    job_files: list[str] = Field(
        default_factory=list,
        alias="jobFiles",
        description="Globs, relative to the project root, of multi-document YAML job files.",
    )
    patches: list[Patch] = Field(
        default_factory=list,
        description="Kustomize-style patches applied, in order, to the job documents (and "
        "manifests) they target before expansion: one job document, changed per environment.",
    )
    manifests: list[Any] = Field(
        default_factory=list,
        description="Plain Kubernetes objects rendered and deployed beside the jobs "
        "(Namespace, ConfigMap, PersistentVolumeClaim, PriorityClass, ...).",
    )
    manifest_files: list[str] = Field(
        default_factory=list,
        alias="manifestFiles",
        description="Globs, relative to the project root, of multi-document YAML files of "
        "plain Kubernetes objects.",
    )
    pod_security: Literal["privileged", "baseline", "restricted"] = Field(
        default="baseline",
        alias="podSecurity",
        description="Pod Security Standards level every pod template must meet (checked by "
        "validate; restricted also makes the builders write the securityContext it needs; "
        "privileged checks nothing, for jobs on the host network). Default: baseline.",
    )
    skip_checks: list[str] = Field(
        default_factory=list,
        alias="skipChecks",
        description="Rule ids of kubetrain's semantic checks this stack opts out of, with the "
        "reason in a comment (e.g. host-port for hostNetwork jobs). Default: none.",
    )
    external: External = Field(
        default_factory=External, description="Referenced objects that live outside rendered/."
    )
    gitops: GitOps | None = Field(default=None, description="Flux / Argo CD delivery objects.")
    multi_kueue: MultiKueue | None = Field(
        default=None,
        alias="multiKueue",
        description="Kueue's MultiKueue on this environment's cluster (the manager): jobs of "
        "the named ClusterQueues are dispatched to one of the workers. Default: none.",
    )
    clusters: list[ClusterTarget] = Field(
        default_factory=list,
        max_length=MAX_CLUSTERS,
        description="The clusters this environment delivers to: none (default), the "
        "environment is a cluster of its own; one, that cluster (shared with every "
        "environment naming it); several, a fleet: rendered/<env>/<cluster>/ per cluster, "
        "with per-cluster overrides.",
    )
    learner_registry: str | None = Field(
        default=None,
        alias="learnerRegistry",
        description="Registry of FfDL learner images (<registry>/<framework>_gpu_<version>:<tag>).",
    )
    gpu_type_node_label: str | None = Field(
        default=None,
        alias="gpuTypeNodeLabel",
        description="Node label that selects a Learner's gpuType; without it gpuType is not used.",
    )
    pod_await: Literal["auto", "ready", "skip"] = Field(
        default="auto",
        alias="podAwait",
        description="How pulumi up waits for the objects that run pods: auto waits for all but "
        "gang-scheduled ones (which start only together), ready for all, skip for none "
        "(pulumi.com/skipAwait). Default: auto.",
    )
    pod_await_timeout_seconds: int | None = Field(
        default=None,
        alias="podAwaitTimeoutSeconds",
        ge=1,
        description="Seconds pulumi up waits for an awaited object that runs pods "
        "(pulumi.com/timeoutSeconds). Default: the provider's (10 minutes).",
    )
    prune_data: bool = Field(
        default=False,
        alias="pruneData",
        description="Let Flux, Argo CD and Pulumi delete the PersistentVolumeClaims and "
        "PersistentVolumes that leave the stack, and their data with them. Default: false "
        "(they are left in the cluster; `kubetrain plan` says how to delete them).",
    )
    credentials: dict[str, dict[str, SecureValue]] = Field(
        default_factory=dict,
        description="Pulumi mode only: credential name -> key -> value set with "
        "`pulumi config set --secret --path`. Render mode reads them from secretStore instead.",
    )

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        reject_unquoted_number(value)
        if isinstance(value, str):
            parsed = parse_version(value)
            if isinstance(parsed, str):
                raise ValueError(parsed)
            return f"{parsed[0]}.{parsed[1]}"
        return value

    @field_validator("gpu_resource")
    @classmethod
    def _gpu_resource(cls, value: str) -> str:
        """An extended resource name is domain-qualified: ``<domain>/<name>``."""
        return gpu_resource_name(value)

    @field_validator("clusters")
    @classmethod
    def _unique_clusters(cls, value: list[ClusterTarget]) -> list[ClusterTarget]:
        seen: set[str] = set()
        for cluster in value:
            if cluster.name in seen:
                raise ValueError(f"the cluster {cluster.name!r} is listed twice")
            seen.add(cluster.name)
        return value

    @model_validator(mode="after")
    def _fleet_destinations(self) -> StackSettings:
        servers = {c.server is not None for c in self.clusters}
        if len(servers) > 1:
            raise ValueError(
                "kubetrain:clusters: give server to every cluster or to none (Argo CD's "
                "ApplicationSet template names one destination field, server or name, for all)"
            )
        return self

    @property
    def fleet(self) -> bool:
        """Several clusters: each gets a tree of its own, ``rendered/<env>/<cluster>``."""
        return len(self.clusters) > 1

    @property
    def version(self) -> tuple[int, int]:
        major, minor = self.kubernetes_version.split(".")
        return int(major), int(minor)


#: How a cluster a stack names (``kubetrain:clusters``) is called in reports; an environment that
#: names none is a cluster of its own, ``environment <env>``.
CLUSTER_PREFIX = "cluster "


def delivered_to(env: str, settings: StackSettings | None, cluster: str | None = None) -> str:
    """The cluster the objects of environment ``env`` go to, as reports name it: the one its
    stack names (``cluster`` for one of a fleet), else the environment's own. Objects of one
    identity collide only within one cluster."""
    if settings is None or not settings.clusters:
        return f"environment {env}"
    names = [c.name for c in settings.clusters]
    if cluster is None or cluster not in names:
        if settings.fleet:
            return f"environment {env}"  # the fleet's delivery objects, on its hub
        cluster = names[0]
    return f"{CLUSTER_PREFIX}{cluster}"


class StackFile(Strict):
    """The top level of a Pulumi stack settings file."""

    config: dict[str, Any] = Field(default_factory=dict, description="Stack configuration.")
    secretsprovider: str | None = None
    encryptedkey: str | None = None
    encryptionsalt: str | None = None
    environment: Any = Field(default=None, description="Pulumi ESC environments (imports).")
