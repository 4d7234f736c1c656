"""Kubeflow Trainer v2 documents: the ``TrainJob`` job kind and the runtimes it names
(``TrainingRuntime``, ``ClusterTrainingRuntime``), ``trainer.kubeflow.org/v1alpha1``.

Fidelity target: kubeflow/trainer v2.3.0, ``pkg/apis/trainer/v1alpha1/trainjob_types.go`` and
``trainingruntime_types.go`` (the API and its kubebuilder markers: the CRDs' defaults and
validations), read at the tag. What the trainer controller builds from a TrainJob and its
runtime is :mod:`kubetrain.builders.trainjob`; what its webhooks refuse is
:mod:`kubetrain.models.runtimes` (they need the runtime).

A TrainJob runs in operator mode by default (Trainer v2 is how the clusters that use it run):
the custom resource. ``kubetrain.io/mode: native``, or a JobSet as the stack's (or the job's)
native workload, renders the JobSet the controller would build instead, for clusters that run
JobSet without the trainer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from ..kube.names import DNS1035_LABEL, LABEL_VALUE
from .base import (
    MODE_ANNOTATION,
    NATIVE_WORKLOAD_ANNOTATION,
    DerivedName,
    JobDocument,
    K8sType,
    Mode,
    OutputEstimate,
    Strict,
    resource_kind,
    upstream,
)
from .kinds import declare
from .scheduling import ObjectMeta

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "CLUSTER_TRAINING_RUNTIME",
    "TRAINER_API_VERSION",
    "TRAINING_RUNTIME",
    "ClusterTrainingRuntime",
    "MLPolicy",
    "PodGroupPolicy",
    "RuntimeRef",
    "TrainJob",
    "TrainJobSpec",
    "Trainer",
    "TrainingRuntime",
    "TrainingRuntimeSpec",
]

Problems = list[tuple[tuple[str | int, ...], str]]
TRAINER_API_VERSION = "trainer.kubeflow.org/v1alpha1"
TRAINING_RUNTIME = "TrainingRuntime"
CLUSTER_TRAINING_RUNTIME = "ClusterTrainingRuntime"
TRAINER_GROUP = "trainer.kubeflow.org"
#: managedBy values the CRD admits; the first is its default.
TRAINJOB_CONTROLLER = "trainer.kubeflow.org/trainjob-controller"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"

EnvVar = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.EnvVar", "An environment variable")]
ResourceRequirements = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.core.v1.ResourceRequirements", "Compute resources of each node"),
]
LocalObjectReference = Annotated[
    dict[str, Any], K8sType("io.k8s.api.core.v1.LocalObjectReference", "A Secret's name")
]
Volume = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Volume", "A pod volume")]
VolumeMount = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.VolumeMount", "A mount")]
PodSecurityContext = Annotated[
    dict[str, Any], K8sType("io.k8s.api.core.v1.PodSecurityContext", "Pod security context")
]
SecurityContext = Annotated[
    dict[str, Any], K8sType("io.k8s.api.core.v1.SecurityContext", "Container security context")
]
Affinity = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Affinity", "Pod affinity")]
Toleration = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Toleration", "A toleration")]
SchedulingGate = Annotated[
    dict[str, Any], K8sType("io.k8s.api.core.v1.PodSchedulingGate", "A scheduling gate")
]
JobTemplateSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.batch.v1.JobTemplateSpec", "Template of the replicated Jobs"),
]
Arg = Annotated[str, Field(max_length=1048576)]
#: ``storageUri``'s CEL rule (trainjob_types.go): empty, or scheme://...
STORAGE_URI = r"^$|^[A-Za-z][A-Za-z0-9+.-]*://.+$"


# --- TrainJob -----------------------------------------------------------------------------------


class RuntimeRef(Strict):
    """The runtime a TrainJob runs on (``spec.runtimeRef``)."""

    name: str = Field(
        min_length=1,
        max_length=253,
        description="Name of the TrainingRuntime or ClusterTrainingRuntime.",
    )
    api_group: Literal["trainer.kubeflow.org"] | None = Field(
        default=None,
        alias="apiGroup",
        description="API group of the runtime. Default: trainer.kubeflow.org.",
        json_schema_extra=upstream(enum=None, maxLength=253),
    )
    kind: Literal["TrainingRuntime", "ClusterTrainingRuntime"] | None = Field(
        default=None,
        description="TrainingRuntime (in the TrainJob's namespace) or ClusterTrainingRuntime. "
        "Default: ClusterTrainingRuntime.",
        json_schema_extra=upstream(enum=None, maxLength=253),
    )

    @property
    def runtime_kind(self) -> str:
        return self.kind or CLUSTER_TRAINING_RUNTIME


class InitializerStep(Strict):
    """A dataset or model initializer (``spec.initializer.dataset`` / ``.model``)."""

    storage_uri: str | None = Field(
        default=None,
        alias="storageUri",
        max_length=2048,
        pattern=STORAGE_URI,
        description="Where to fetch from (hf://..., s3://...): the initializer's STORAGE_URI.",
        json_schema_extra=upstream(pattern=None),
    )
    env: list[EnvVar] | None = Field(
        default=None, max_length=128, description="Environment of the initializer container."
    )
    secret_ref: LocalObjectReference | None = Field(
        default=None,
        alias="secretRef",
        description="A Secret whose keys become the initializer's environment (envFrom).",
    )


class Initializer(Strict):
    """Steps that run before the trainer (``spec.initializer``)."""

    dataset: InitializerStep | None = Field(default=None, description="Dataset initializer.")
    model: InitializerStep | None = Field(default=None, description="Model initializer.")


class Trainer(Strict):
    """The training itself (``spec.trainer``): overrides of the runtime's trainer step."""

    image: str | None = Field(
        default=None,
        max_length=500,
        description="Image of the node container. Default: the runtime's.",
    )
    command: list[Arg] | None = Field(
        default=None, max_length=128, description="Command of the node container."
    )
    args: list[Arg] | None = Field(
        default=None, max_length=128, description="Arguments of the node container."
    )
    env: list[EnvVar] | None = Field(
        default=None,
        max_length=128,
        description="Environment of the node container (names the runtime's policy sets are "
        "refused: PET_* for torch, DMLC_* for XGBoost, OMPI_MCA_* for MPI).",
    )
    num_nodes: int | None = Field(
        default=None,
        alias="numNodes",
        ge=1,
        description="Training nodes (pods of the trainer step). Default: the runtime's "
        "mlPolicy.numNodes.",
        json_schema_extra=upstream(minimum=None),
    )
    resources_per_node: ResourceRequirements | None = Field(
        default=None,
        alias="resourcesPerNode",
        description="Resources of each node's node container, merged over the runtime's.",
    )
    num_proc_per_node: int | None = Field(
        default=None,
        alias="numProcPerNode",
        ge=1,
        description="Processes per node (torch: PET_NPROC_PER_NODE; MPI: slots). Default: "
        "torch auto (one per GPU, else per CPU), MPI the runtime's.",
        json_schema_extra=upstream(minimum=None),
    )


class ContainerPatch(Strict):
    """What a runtime patch may change of one container of the runtime."""

    name: str = Field(min_length=1, max_length=253, description="The runtime's container.")
    env: list[EnvVar] | None = Field(
        default=None,
        max_length=128,
        description="Environment (not for the node, dataset-initializer and model-initializer "
        "containers: use spec.trainer.env and spec.initializer).",
    )
    volume_mounts: list[VolumeMount] | None = Field(
        default=None, alias="volumeMounts", max_length=128, description="Volume mounts."
    )
    security_context: SecurityContext | None = Field(
        default=None, alias="securityContext", description="Security context."
    )


class PodSpecPatch(Strict):
    """The pod fields a runtime patch may change (``PodSpecPatch``)."""

    service_account_name: str | None = Field(
        default=None, alias="serviceAccountName", max_length=253, description="ServiceAccount."
    )
    volumes: list[Volume] | None = Field(default=None, max_length=128, description="Volumes.")
    init_containers: list[ContainerPatch] | None = Field(
        default=None, alias="initContainers", max_length=64, description="Init containers."
    )
    containers: list[ContainerPatch] | None = Field(
        default=None, max_length=64, description="Containers (by name, from the runtime)."
    )
    image_pull_secrets: list[LocalObjectReference] | None = Field(
        default=None, alias="imagePullSecrets", max_length=64, description="Pull Secrets."
    )
    security_context: PodSecurityContext | None = Field(
        default=None, alias="securityContext", description="Pod security context."
    )
    node_selector: dict[str, str] | None = Field(
        default=None, alias="nodeSelector", description="Node selector."
    )
    affinity: Affinity | None = Field(default=None, description="Affinity.")
    tolerations: list[Toleration] | None = Field(
        default=None, max_length=128, description="Tolerations."
    )
    scheduling_gates: list[SchedulingGate] | None = Field(
        default=None, alias="schedulingGates", max_length=16, description="Scheduling gates."
    )
    termination_grace_period_seconds: int | None = Field(
        default=None,
        alias="terminationGracePeriodSeconds",
        ge=0,
        description="Grace period of a terminating pod, in seconds.",
    )


class PodTemplatePatch(Strict):
    metadata: ObjectMeta | None = Field(default=None, description="Labels and annotations.")
    spec: PodSpecPatch | None = Field(default=None, description="Pod fields.")


class JobSpecPatch(Strict):
    template: PodTemplatePatch | None = Field(default=None, description="The pod template.")


class JobTemplatePatch(Strict):
    metadata: ObjectMeta | None = Field(default=None, description="Labels and annotations.")
    spec: JobSpecPatch | None = Field(default=None, description="The Job.")


class ReplicatedJobPatch(Strict):
    name: str = Field(
        min_length=1, max_length=253, description="The runtime's replicated job to patch."
    )
    template: JobTemplatePatch | None = Field(default=None, description="Its Job template.")


class JobSetSpecPatch(Strict):
    replicated_jobs: list[ReplicatedJobPatch] | None = Field(
        default=None, alias="replicatedJobs", max_length=100, description="By name."
    )


class JobSetTemplatePatch(Strict):
    metadata: ObjectMeta | None = Field(
        default=None, description="Labels and annotations of the JobSet."
    )
    spec: JobSetSpecPatch | None = Field(default=None, description="The JobSet's spec.")


class TrainingRuntimeSpecPatch(Strict):
    template: JobSetTemplatePatch | None = Field(default=None, description="The JobSet template.")


class RuntimePatch(Strict):
    """One manager's changes to the runtime (``spec.runtimePatches[]``)."""

    manager: str = Field(
        min_length=1,
        max_length=253,
        description="Who owns this patch: a domain-prefixed path (example.io/platform-team).",
    )
    time: str | None = Field(
        default=None, description="Set by the trainer's defaulting webhook; leave it out."
    )
    training_runtime_spec: TrainingRuntimeSpecPatch | None = Field(
        default=None, alias="trainingRuntimeSpec", description="What it changes."
    )


class TrainJobSpec(Strict):
    """``spec`` of a TrainJob."""

    runtime_ref: RuntimeRef = Field(alias="runtimeRef", description="The runtime it runs on.")
    initializer: Initializer | None = Field(
        default=None, description="Dataset and model initializers."
    )
    trainer: Trainer | None = Field(default=None, description="The trainer step.")
    runtime_patches: list[RuntimePatch] | None = Field(
        default=None,
        alias="runtimePatches",
        max_length=16,
        description="Changes to the runtime, one entry per manager.",
    )
    suspend: bool | None = Field(
        default=None, description="Create it suspended (Kueue resumes it). Default: false."
    )
    active_deadline_seconds: int | None = Field(
        default=None,
        alias="activeDeadlineSeconds",
        ge=1,
        description="Seconds the TrainJob may run before the trainer fails it (operator mode).",
    )
    managed_by: (
        Literal["trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue"] | None
    ) = Field(
        default=None,
        alias="managedBy",
        description="trainer.kubeflow.org/trainjob-controller, or kueue.x-k8s.io/multikueue "
        "(operator mode). Default: the trainer.",
        json_schema_extra=upstream(enum=None, maxLength=253),
    )


@declare(
    "Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1, Trainer v2.3): a job on a runtime"
)
class TrainJob(JobDocument):
    """A TrainJob: a job that names a TrainingRuntime or ClusterTrainingRuntime, from which the
    trainer builds a JobSet."""

    API_VERSION: ClassVar[str] = TRAINER_API_VERSION
    KIND: ClassVar[str] = "TrainJob"
    NATIVE_WORKLOADS: ClassVar[tuple[str, ...]] = ("jobset",)
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["TrainJob"]
    spec: TrainJobSpec

    def mode(self, settings: StackSettings) -> Mode:
        """``operator`` unless the job or the stack asks for the JobSet: ``kubetrain.io/mode:
        native``, or a JobSet as native workload (``kubetrain.io/native-workload`` or the
        stack's ``kubetrain:nativeWorkload: jobset``); ``kubetrain:mode`` does not switch it,
        for the trainer is how a TrainJob runs."""
        annotations = self.metadata.annotations
        if MODE_ANNOTATION in annotations:
            return Mode(annotations[MODE_ANNOTATION])
        workload = annotations.get(NATIVE_WORKLOAD_ANNOTATION, settings.native_workload)
        return Mode.NATIVE if workload == "jobset" else Mode.OPERATOR

    def native_workload(self, settings: StackSettings) -> str:
        return "jobset"

    def num_nodes(self) -> int | None:
        return self.spec.trainer.num_nodes if self.spec.trainer else None

    def semantic_problems(self, settings: StackSettings) -> Problems:
        """What the CRD and the trainer refuse without the runtime (the rest:
        :func:`kubetrain.models.runtimes.trainjob_problems`)."""
        problems: Problems = []
        if self.mode(settings) == Mode.NATIVE and self.spec.managed_by == MULTIKUEUE:
            problems.append(
                (
                    ("spec", "managedBy"),
                    f"{MULTIKUEUE} hands the TrainJob to Kueue's MultiKueue, which runs it on "
                    "another cluster; native mode would create its JobSet here: use operator mode",
                )
            )
        managers: dict[str, int] = {}
        for i, patch in enumerate(self.spec.runtime_patches or []):
            if patch.manager in managers:
                problems.append(
                    (
                        ("spec", "runtimePatches", i, "manager"),
                        f"duplicate manager {patch.manager!r} (entry {managers[patch.manager]} "
                        "has it): runtimePatches is a map keyed by manager",
                    )
                )
            managers.setdefault(patch.manager, i)
            if patch.time is not None:
                problems.append(
                    (
                        ("spec", "runtimePatches", i, "time"),
                        "is set by the trainer's defaulting webhook when the patch changes; a "
                        "time in Git makes every engine see drift: leave it out",
                    )
                )
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        """The TrainJob's name is a DNS-1035 label (its CRD's rule: it names the JobSet, the
        subdomain and the pods' hostnames)."""
        return [
            DerivedName(self.name, "TrainJob name (RFC 1035 label, its CRD's rule)", DNS1035_LABEL),
            DerivedName(self.name, "jobset-name label value", LABEL_VALUE),
        ]

    def output_estimate(self, settings: StackSettings, mode: Mode) -> OutputEstimate:
        """Operator mode: the TrainJob alone, whatever its ``numNodes`` (the trainer builds
        the rest in the cluster). Native mode: a JobSet (and a ConfigMap, Secret, PodGroup) of
        the runtime's size, which ``numNodes`` does not grow (it is each Job's parallelism);
        the hostfile of an MPI runtime, which lists every node, is estimated once the runtime
        is known (``models.load.trainjob_rules``, before anything is built)."""
        size = len(self.model_dump_json(by_alias=True))
        path: tuple[str | int, ...] = ("spec", "trainer", "numNodes")
        if mode == Mode.OPERATOR:
            return OutputEstimate(1, size + 4096, size + 4096, path)
        size += 16384
        return OutputEstimate(5, 4 * size, 2 * size, path)


# --- runtimes -------------------------------------------------------------------------------------


class TorchEnvInjectionTarget(Strict):
    job_name: str = Field(
        alias="jobName", min_length=1, max_length=253, description="A replicated job."
    )
    container_names: list[Annotated[str, Field(max_length=63)]] = Field(
        alias="containerNames",
        min_length=1,
        max_length=8,
        description="Its containers that get the PET_* env too (never node).",
    )


class TorchEnvInjection(Strict):
    targets: list[TorchEnvInjectionTarget] | None = Field(
        default=None, max_length=16, description="Containers beyond node that get PET_* env."
    )


class TorchPolicy(Strict):
    env_injection: TorchEnvInjection | None = Field(
        default=None, alias="envInjection", description="More containers for the PET_* env."
    )


class MPIPolicy(Strict):
    num_proc_per_node: int | None = Field(
        default=None,
        alias="numProcPerNode",
        description="Slots per node in the hostfile. Default: 1 (then one per GPU).",
    )
    mpi_implementation: Literal["OpenMPI", ""] | None = Field(
        default=None, alias="mpiImplementation", description="OpenMPI. Default: OpenMPI."
    )
    ssh_auth_mount_path: str | None = Field(
        default=None,
        alias="sshAuthMountPath",
        max_length=4096,
        description="Where the SSH keys are mounted. Default: /root/.ssh.",
    )
    run_launcher_as_node: bool | None = Field(
        default=None,
        alias="runLauncherAsNode",
        description="The launcher is also a node (it runs MPI ranks). Default: false.",
    )


class FluxPolicy(Strict):
    num_proc_per_node: int | None = Field(
        default=None,
        alias="numProcPerNode",
        ge=1,
        description="Tasks per node. Default: 1.",
        json_schema_extra=upstream(minimum=None),
    )


class MLPolicy(Strict):
    """How the runtime trains (``spec.mlPolicy``): one framework policy at most."""

    num_nodes: int | None = Field(
        default=None, alias="numNodes", description="Training nodes by default."
    )
    torch: TorchPolicy | None = Field(default=None, description="PyTorch (torchrun): PET_* env.")
    mpi: MPIPolicy | None = Field(default=None, description="MPI: hostfile and SSH keys.")
    jax: dict[str, Any] | None = Field(default=None, description="JAX: JAX_* env.")
    xgboost: dict[str, Any] | None = Field(default=None, description="XGBoost: DMLC_* env.")
    flux: FluxPolicy | None = Field(default=None, description="Flux Framework (not rendered).")

    def policies(self) -> list[str]:
        return [
            k for k in ("torch", "mpi", "jax", "xgboost", "flux") if getattr(self, k) is not None
        ]


class CoschedulingPolicy(Strict):
    schedule_timeout_seconds: int | None = Field(
        default=None,
        alias="scheduleTimeoutSeconds",
        description="Seconds the gang may wait to be placed. Default: 60.",
    )


class VolcanoNetworkTopology(Strict):
    mode: Literal["hard", "soft"] | None = Field(default=None, description="Default: hard.")
    highest_tier_allowed: int | None = Field(
        default=None, alias="highestTierAllowed", description="Default: 1."
    )


class VolcanoPolicy(Strict):
    network_topology: VolcanoNetworkTopology | None = Field(
        default=None, alias="networkTopology", description="Network topology constraints."
    )


class PodGroupPolicy(Strict):
    """Gang scheduling of the runtime's pods (``spec.podGroupPolicy``)."""

    coscheduling: CoschedulingPolicy | None = Field(
        default=None, description="scheduler-plugins coscheduling PodGroup."
    )
    volcano: VolcanoPolicy | None = Field(default=None, description="Volcano PodGroup.")


class DependsOn(Strict):
    name: str = Field(description="A replicated job that must reach status first.")
    status: Literal["Ready", "Complete"] = Field(description="Ready or Complete.")


class RuntimeReplicatedJob(Strict):
    """A replicated job of a runtime's JobSet template."""

    name: str = Field(description="Name (node, launcher, dataset-initializer...).")
    group_name: str | None = Field(default=None, alias="groupName", description="Group.")
    replicas: int | None = Field(default=None, description="Jobs of this template. Default: 1.")
    depends_on: list[DependsOn] | None = Field(
        default=None, alias="dependsOn", max_length=5, description="Replicated jobs to wait for."
    )
    template: JobTemplateSpec


class RuntimeJobSetSpec(Strict):
    """The JobSet spec of a runtime's template (JobSet v0.12, as Trainer v2.3.0 vendors it)."""

    model_config = ConfigDict(extra="forbid")

    replicated_jobs: list[RuntimeReplicatedJob] | None = Field(
        default=None, alias="replicatedJobs", description="The steps, by name."
    )
    network: dict[str, Any] | None = Field(default=None, description="Pod DNS.")
    success_policy: dict[str, Any] | None = Field(
        default=None, alias="successPolicy", description="When the JobSet has succeeded."
    )
    failure_policy: dict[str, Any] | None = Field(
        default=None, alias="failurePolicy", description="What a failed Job does."
    )
    startup_policy: dict[str, Any] | None = Field(
        default=None, alias="startupPolicy", description="Start order."
    )
    coordinator: dict[str, Any] | None = Field(default=None, description="Coordinator pod.")
    managed_by: str | None = Field(default=None, alias="managedBy", description="Controller.")
    suspend: bool | None = Field(default=None, description="Suspended.")
    ttl_seconds_after_finished: int | None = Field(
        default=None, alias="ttlSecondsAfterFinished", ge=0, description="TTL after finishing."
    )
    volume_claim_policies: list[dict[str, Any]] | None = Field(
        default=None,
        alias="volumeClaimPolicies",
        max_length=50,
        description="Claims the JobSet makes for its pods (JobSet v0.11+).",
    )


class JobSetTemplateSpec(Strict):
    metadata: ObjectMeta | None = Field(default=None, description="Labels and annotations.")
    spec: RuntimeJobSetSpec | None = Field(default=None, description="The JobSet spec.")


class TrainingRuntimeSpec(Strict):
    """``spec`` of a TrainingRuntime or ClusterTrainingRuntime."""

    ml_policy: MLPolicy | None = Field(default=None, alias="mlPolicy", description="How it trains.")
    pod_group_policy: PodGroupPolicy | None = Field(
        default=None, alias="podGroupPolicy", description="Gang scheduling."
    )
    template: JobSetTemplateSpec | None = Field(
        default=None, description="The JobSet its TrainJobs run as."
    )


@resource_kind(TRAINER_API_VERSION, TRAINING_RUNTIME)
class TrainingRuntime(Strict):
    """A TrainingRuntime: a runtime for the TrainJobs of its namespace."""

    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["TrainingRuntime"]
    metadata: ObjectMeta
    spec: TrainingRuntimeSpec | None = Field(default=None, description="The runtime.")


@resource_kind(TRAINER_API_VERSION, CLUSTER_TRAINING_RUNTIME)
class ClusterTrainingRuntime(Strict):
    """A ClusterTrainingRuntime: a runtime for the TrainJobs of every namespace."""

    api_version: Literal["trainer.kubeflow.org/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["ClusterTrainingRuntime"]
    metadata: ObjectMeta
    spec: TrainingRuntimeSpec | None = Field(default=None, description="The runtime.")
