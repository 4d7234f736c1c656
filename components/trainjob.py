"""The TrainJob component: a Kubeflow Trainer v2 TrainJob (``trainer.kubeflow.org/v1alpha1``).

Operator mode (the default for this kind): the TrainJob custom resource, for a cluster that runs
the trainer. Native mode: the JobSet the trainer's controller would build from the TrainJob and
its runtime (with the MPI hostfile ConfigMap and SSH Secret, and the PodGroup of a gang), for a
cluster that runs JobSet without the trainer. The runtime is given as ``runtime``: its spec, or
the name of a ClusterTrainingRuntime Kubeflow publishes with Trainer v2.3.0 (operator mode).

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

import pulumi

from kubetrain.builders.trainjob import RUNS_ANNOTATION, runs_of
from kubetrain.models.kinds import attach_component
from kubetrain.models.trainjob import TrainJob as TrainJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._job import expand, register_expansion
from ._resources import Identity

__all__ = [
    "InitializerArgs",
    "InitializerStepArgs",
    "RuntimePatchArgs",
    "RuntimeRefArgs",
    "TrainJob",
    "TrainJobArgs",
    "TrainJobRuntimeArgs",
    "TrainJobSpecArgs",
    "TrainerArgs",
]

TYPE = "kubetrain:index:TrainJob"


class RuntimeRefArgs(TypedDict):
    """The runtime a TrainJob runs on."""

    name: str
    """Name of the TrainingRuntime or ClusterTrainingRuntime."""
    api_group: NotRequired[str]
    """API group of the runtime. Default: trainer.kubeflow.org."""
    kind: NotRequired[str]
    """TrainingRuntime or ClusterTrainingRuntime. Default: ClusterTrainingRuntime."""


class InitializerStepArgs(TypedDict):
    """A dataset or model initializer."""

    storage_uri: NotRequired[str]
    """Where to fetch from (hf://..., s3://...): the initializer's STORAGE_URI."""
    env: NotRequired[list[dict[str, Any]]]
    """Environment of the initializer container (Kubernetes EnvVars)."""
    secret_ref: NotRequired[dict[str, Any]]
    """A Secret whose keys become the initializer's environment ({name})."""


class InitializerArgs(TypedDict):
    """Steps that run before the trainer."""

    dataset: NotRequired[InitializerStepArgs]
    """Dataset initializer."""
    model: NotRequired[InitializerStepArgs]
    """Model initializer."""


class TrainerArgs(TypedDict):
    """The trainer step: overrides of the runtime's."""

    image: NotRequired[str]
    """Image of the node container. Default: the runtime's."""
    command: NotRequired[list[str]]
    """Command of the node container."""
    args: NotRequired[list[str]]
    """Arguments of the node container."""
    env: NotRequired[list[dict[str, Any]]]
    """Environment of the node container (the names the runtime's policy sets are refused)."""
    num_nodes: NotRequired[int]
    """Training nodes. Default: the runtime's mlPolicy.numNodes."""
    resources_per_node: NotRequired[dict[str, Any]]
    """Resources of each node's node container (a Kubernetes ResourceRequirements)."""
    num_proc_per_node: NotRequired[int]
    """Processes per node. Default: torch auto, MPI the runtime's."""


class RuntimePatchArgs(TypedDict):
    """One manager's changes to the runtime."""

    manager: str
    """Who owns this patch: a domain-prefixed path (example.io/platform-team)."""
    time: NotRequired[str]
    """Set by the trainer's webhook; leave it out."""
    training_runtime_spec: NotRequired[dict[str, Any]]
    """What it changes: {template: {metadata, spec: {replicatedJobs: [...]}}}."""


class TrainJobSpecArgs(TypedDict):
    """The spec of a trainer.kubeflow.org/v1alpha1 TrainJob."""

    runtime_ref: RuntimeRefArgs
    """The runtime it runs on."""
    initializer: NotRequired[InitializerArgs]
    """Dataset and model initializers."""
    trainer: NotRequired[TrainerArgs]
    """The trainer step."""
    runtime_patches: NotRequired[list[RuntimePatchArgs]]
    """Changes to the runtime, one entry per manager."""
    suspend: NotRequired[bool]
    """Create it suspended (Kueue resumes it). Default: false."""
    active_deadline_seconds: NotRequired[int]
    """Seconds the TrainJob may run before the trainer fails it (operator mode)."""
    managed_by: NotRequired[str]
    """trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue."""


class TrainJobRuntimeArgs(TypedDict):
    """The runtime the TrainJob names, as the cluster has it."""

    kind: NotRequired[str]
    """ClusterTrainingRuntime or TrainingRuntime. Default: the job's runtimeRef kind."""
    name: NotRequired[str]
    """Its name. Default: the job's runtimeRef name."""
    namespace: NotRequired[str]
    """A TrainingRuntime's namespace. Default: the job's."""
    spec: NotRequired[dict[str, Any]]
    """The runtime's spec; without it, a runtime Kubeflow publishes (operator mode only)."""


class TrainJobArgs(TypedDict):
    """A TrainJob (trainer.kubeflow.org/v1alpha1), its runtime and the settings it is expanded
    with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels (kueue.x-k8s.io/queue-name...) and annotations."""
    spec: TrainJobSpecArgs
    """The TrainJob's spec, as in a trainer.kubeflow.org/v1alpha1 TrainJob manifest."""
    runtime: NotRequired[TrainJobRuntimeArgs]
    """The runtime it names: its spec, or the name of one Kubeflow publishes. Default: by name."""
    settings: NotRequired[SettingsArgs]
    """Stack-level settings (namespace default, Kubernetes version, mode...). Default: none."""


class TrainJob(pulumi.ComponentResource):
    """A TrainJob: its custom resource, or the JobSet the trainer would build for it."""

    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job (its JobSet's)."""
    jobset: pulumi.Output[str]
    """Name of the JobSet that runs it (the trainer's, or kubetrain's in native mode)."""
    pods: pulumi.Output[int]
    """Pods the TrainJob runs at once (every replicated job of its JobSet)."""
    mode: pulumi.Output[str]
    """How the job is deployed: operator (its TrainJob) or native (its JobSet)."""

    def __init__(
        self,
        name: str,
        args: TrainJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects registered elsewhere (see the other job components)."""
        expansion = expand(TrainJobDocument, args, f"TrainJob {name}")
        super().__init__(TYPE, name, None, opts)
        register_expansion(
            self, expansion, where=f"TrainJob {name}", opts=opts, exclude=exclude, warn=warn
        )
        document = expansion.loaded.job
        assert isinstance(document, TrainJobDocument)
        pods = sum(int(r.get("pods", 0)) for r in _runs(expansion.manifests, document))
        self.label_selector = pulumi.Output.from_input(
            f"jobset.sigs.k8s.io/jobset-name={document.name}"
        )
        self.jobset = pulumi.Output.from_input(document.name)
        self.pods = pulumi.Output.from_input(pods)
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.register_outputs(
            {
                "labelSelector": self.label_selector,
                "jobset": self.jobset,
                "pods": self.pods,
                "mode": self.mode,
            }
        )

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": "TrainJob",
            "mode": self.mode,
            "labelSelector": self.label_selector,
            "jobset": self.jobset,
        }


def _runs(manifests: tuple[dict[str, Any], ...], job: TrainJobDocument) -> list[dict[str, Any]]:
    """What the expansion runs: the TrainJob's ``kubetrain.io/runs`` (operator mode), or the
    replicated jobs of its JobSet (native mode)."""
    for obj in manifests:
        if obj["kind"] == "TrainJob" and RUNS_ANNOTATION in (
            obj["metadata"].get("annotations") or {}
        ):
            return runs_of(obj)
        if obj["kind"] == "JobSet" and obj["metadata"]["name"] == job.name:
            return [
                {
                    "pods": int(r.get("replicas", 1))
                    * int(r["template"]["spec"].get("parallelism", 1))
                }
                for r in obj["spec"].get("replicatedJobs") or []
            ]
    return []


attach_component(TrainJobDocument, TrainJob)
