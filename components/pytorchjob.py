"""The PyTorchJob component: a Kubeflow PyTorchJob deployed as the objects kubetrain render writes
for it.

Native mode: the pods and headless services the training operator would create (and the
PodGroup when gang scheduling applies), all children of the component. Operator mode: the
``kubeflow.org/v1`` PyTorchJob custom resource, for a cluster that runs the training operator.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from typing import Any, ClassVar, NotRequired, TypedDict

import pulumi

from kubetrain.builders.kubeflow import ReplicaJob
from kubetrain.builders.pytorchjob import PyTorchTrainingJob
from kubetrain.models.kinds import attach_component
from kubetrain.models.kubeflow import KubeflowJob
from kubetrain.models.pytorchjob import PyTorchJob as PyTorchJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._kubeflow import KubeflowJobComponent
from ._kubeflow_args import RunPolicyArgs

__all__ = [
    "ElasticPolicyArgs",
    "PyTorchJob",
    "PyTorchJobArgs",
    "PyTorchJobSpecArgs",
    "PyTorchReplicaSpecArgs",
    "RDZVConfArgs",
]

TYPE = "kubetrain:index:PyTorchJob"


class PyTorchReplicaSpecArgs(TypedDict):
    """One replica type of a PyTorchJob."""

    # Its own type rather than the shared ReplicaSpecArgs: the provider schema has named it
    # kubetrain:index:PyTorchReplicaSpecArgs since PyTorchJob came, and SDKs generated from it
    # refer to that name.
    replicas: NotRequired[int]
    """Number of pods of this type. Default: 1."""
    template: dict[str, Any]
    """Pod template (a Kubernetes PodTemplateSpec) with a container named pytorch."""
    restart_policy: NotRequired[str]
    (
        "Restart policy of the pods: Always, OnFailure, Never, or ExitCode (Never on the pod, "
        "retried by exit code). Default: OnFailure."
    )


class RDZVConfArgs(TypedDict, total=False):
    """One extra rendezvous setting of an elastic PyTorchJob."""

    key: str
    """Setting name. Default: empty."""
    value: str
    """Setting value. Default: empty."""


class ElasticPolicyArgs(TypedDict, total=False):
    """Elastic training with torchrun (spec.elasticPolicy); needs a Worker replica type."""

    min_replicas: int
    """Fewest workers the job runs with (PET_NNODES min). Default: maxReplicas, else the Workers."""
    max_replicas: int
    """Most workers the job scales to (PET_NNODES max). Default: minReplicas, else the Workers."""
    rdzv_backend: str
    """Rendezvous backend: c10d, etcd or etcd-v2 (PET_RDZV_BACKEND). Default: c10d."""
    rdzv_port: int
    """Rendezvous port. Default: the Worker's pytorchjob-port (23456)."""
    rdzv_host: str
    """Rendezvous host. Default: <job>-worker-0."""
    rdzv_id: str
    """Rendezvous id (PET_RDZV_ID). Default: none."""
    rdzv_conf: list[RDZVConfArgs]
    """Extra rendezvous settings, joined as key=value,... (PET_RDZV_CONF). Default: none."""
    standalone: bool
    """Run a local standalone rendezvous (PET_STANDALONE). Default: false."""
    n_proc_per_node: int
    """Deprecated: use nprocPerNode. Processes per node (PET_NPROC_PER_NODE). Default: none."""
    max_restarts: int
    """Worker-group restarts before the job fails (PET_MAX_RESTARTS). Default: torchrun's."""
    metrics: list[dict[str, Any]]
    """Metrics (Kubernetes MetricSpecs) the operator's autoscaler uses; operator mode only."""


class PyTorchJobSpecArgs(TypedDict):
    """The spec of a kubeflow.org/v1 PyTorchJob."""

    pytorch_replica_specs: dict[str, PyTorchReplicaSpecArgs]
    """Replica type (Master or Worker, any case) -> its spec."""
    run_policy: NotRequired[RunPolicyArgs]
    """Run-time policies. Default: none."""
    elastic_policy: NotRequired[ElasticPolicyArgs]
    """Elastic training with torchrun. Default: none."""
    nproc_per_node: NotRequired[str]
    (
        "Processes per node: auto, cpu, gpu or a number, as a string (PET_NPROC_PER_NODE; a "
        "number also multiplies WORLD_SIZE). Default: auto."
    )


class PyTorchJobArgs(TypedDict):
    """A Kubeflow PyTorchJob (kubeflow.org/v1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the job."""
    spec: PyTorchJobSpecArgs
    """The PyTorchJob's spec, as in a kubeflow.org/v1 PyTorchJob manifest."""
    settings: NotRequired[SettingsArgs]
    (
        "Stack-level settings (namespace default, GPU resource name, gang scheduler, mode...). "
        "Default: the defaults of a stack file."
    )


class PyTorchJob(KubeflowJobComponent):
    """A Kubeflow PyTorchJob: the pods and services its operator would create, or its resource."""

    _TYPE: ClassVar[str] = TYPE
    _DOCUMENT: ClassVar[type[KubeflowJob]] = PyTorchJobDocument
    _EXPANSION: ClassVar[type[ReplicaJob[Any]]] = PyTorchTrainingJob

    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job, e.g. for kubectl get pods -l."""
    master_addr: pulumi.Output[str]
    """MASTER_ADDR of the pods: <job>-master-0, or empty for a job without a Master."""
    world_size: pulumi.Output[int]
    """WORLD_SIZE of the pods: replicas times nprocPerNode when that is a number."""
    service_hosts: pulumi.Output[list[str]]
    (
        "DNS name of every replica's headless service, <pod>.<namespace>.svc[.<clusterDomain>], "
        "Master first, then the Workers by index."
    )
    mode: pulumi.Output[str]
    """How the job is deployed: native (its pods and services) or operator (its PyTorchJob)."""

    def __init__(
        self, name: str, args: PyTorchJobArgs, opts: pulumi.ResourceOptions | None = None, **kw: Any
    ) -> None:
        super().__init__(name, args, opts, **kw)

    def kind_outputs(self, training: PyTorchTrainingJob) -> dict[str, Any]:
        has_master = training.job.has_master()
        return {
            "master_addr": training.master_addr() if has_master else "",
            "world_size": training.world_size(),
        }

    def kind_exports(self) -> dict[str, Any]:
        return {"masterAddr": self.master_addr}


attach_component(PyTorchJobDocument, PyTorchJob)
