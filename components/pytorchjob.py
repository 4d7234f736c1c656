"""The PyTorchJob component: a Kubeflow PyTorchJob deployed as the objects kubetrain render writes
for it.

Native mode: the pods and headless services the training operator would create (and the
PodGroup when gang scheduling applies), all children of the component. Operator mode: the
``kubeflow.org/v1`` PyTorchJob custom resource, for a cluster that runs the training operator.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

import pulumi

from kubetrain.builders.meta import to_selector
from kubetrain.builders.pytorchjob import PyTorchTrainingJob
from kubetrain.models.kinds import attach_component
from kubetrain.models.pytorchjob import PyTorchJob as PyTorchJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._job import expand, report_warnings
from ._kubeflow_args import RunPolicyArgs
from ._resources import Identity, identity, register

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


class PyTorchJob(pulumi.ComponentResource):
    """A Kubeflow PyTorchJob: the pods and services its operator would create, or its resource."""

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
        self,
        name: str,
        args: PyTorchJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects (apiVersion, kind, namespace, name) registered elsewhere; the
        stack program passes the objects several jobs share and registers them once."""
        expansion = expand(PyTorchJobDocument, args, f"PyTorchJob {name}")
        super().__init__(TYPE, name, None, opts)
        if warn:
            report_warnings(self, expansion)
        register(
            self,
            [m for m in expansion.manifests if identity(m) not in exclude],
            where=f"PyTorchJob {name}",
            depends_on=opts.depends_on if opts is not None else None,
        )
        document = expansion.loaded.job
        assert isinstance(document, PyTorchJobDocument)
        training = PyTorchTrainingJob(document, expansion.ctx)
        hosts = [
            training.service_host(rs.pod_name(i))
            for rs in training.replicas
            for i in range(rs.spec.replicas)
        ]
        self.label_selector = pulumi.Output.from_input(to_selector(training.labels()))
        self.master_addr = pulumi.Output.from_input(
            training.master_addr() if document.has_master() else ""
        )
        self.world_size = pulumi.Output.from_input(training.world_size())
        self.service_hosts = pulumi.Output.from_input(hosts)
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.register_outputs(
            {
                "labelSelector": self.label_selector,
                "masterAddr": self.master_addr,
                "worldSize": self.world_size,
                "serviceHosts": self.service_hosts,
                "mode": self.mode,
            }
        )

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": "PyTorchJob",
            "mode": self.mode,
            "labelSelector": self.label_selector,
            "masterAddr": self.master_addr,
        }


attach_component(PyTorchJobDocument, PyTorchJob)
