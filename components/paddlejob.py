"""The PaddleJob component: a Kubeflow PaddleJob deployed as the objects kubetrain render writes
for it (native mode: the pods and headless services of the training operator; operator mode:
the ``kubeflow.org/v1`` PaddleJob custom resource).

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from typing import Any, ClassVar, NotRequired, TypedDict

import pulumi

from kubetrain.builders.kubeflow import ReplicaJob
from kubetrain.builders.paddlejob import PaddleTrainingJob
from kubetrain.models.kinds import attach_component
from kubetrain.models.kubeflow import KubeflowJob
from kubetrain.models.paddlejob import PaddleJob as PaddleJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._kubeflow import KubeflowJobComponent, ReplicaSpecArgs
from ._kubeflow_args import RunPolicyArgs

__all__ = ["PaddleElasticPolicyArgs", "PaddleJob", "PaddleJobArgs", "PaddleJobSpecArgs"]


class PaddleElasticPolicyArgs(TypedDict, total=False):
    """Elastic training of a PaddleJob (spec.elasticPolicy): its autoscaler's bounds."""

    min_replicas: int
    """Fewest workers. Default: maxReplicas, else the Worker replicas."""
    max_replicas: int
    """Most workers. Default: minReplicas, else the Worker replicas."""
    max_restarts: int
    """Restarts of pods in elastic mode. Default: none."""
    metrics: list[dict[str, Any]]
    """Metrics (Kubernetes MetricSpecs) the operator's autoscaler uses; operator mode only."""


class PaddleJobSpecArgs(TypedDict):
    """The spec of a kubeflow.org/v1 PaddleJob."""

    paddle_replica_specs: dict[str, ReplicaSpecArgs]
    """Replica type (Master for parameter-server mode, Worker) -> its spec."""
    run_policy: NotRequired[RunPolicyArgs]
    """Run-time policies. Default: none."""
    elastic_policy: NotRequired[PaddleElasticPolicyArgs]
    """Elastic training (operator mode). Default: none."""


class PaddleJobArgs(TypedDict):
    """A Kubeflow PaddleJob (kubeflow.org/v1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the job."""
    spec: PaddleJobSpecArgs
    """The PaddleJob's spec, as in a kubeflow.org/v1 PaddleJob manifest."""
    settings: NotRequired[SettingsArgs]
    """Stack-level settings (namespace default, GPU resource name, mode...). Default: none."""


class PaddleJob(KubeflowJobComponent):
    """A Kubeflow PaddleJob: the pods and services its operator would create, or its resource."""

    _TYPE: ClassVar[str] = "kubetrain:index:PaddleJob"
    _DOCUMENT: ClassVar[type[KubeflowJob]] = PaddleJobDocument
    _EXPANSION: ClassVar[type[ReplicaJob[Any]]] = PaddleTrainingJob

    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job, e.g. for kubectl get pods -l."""
    master_endpoint: pulumi.Output[str]
    """PADDLE_MASTER of the pods other than the rendezvous: <job>-master-0 or -worker-0, port."""
    service_hosts: pulumi.Output[list[str]]
    """DNS name of every replica's headless service, the Master first, then the Workers."""
    mode: pulumi.Output[str]
    """How the job is deployed: native (its pods and services) or operator (its PaddleJob)."""

    def __init__(
        self, name: str, args: PaddleJobArgs, opts: pulumi.ResourceOptions | None = None, **kw: Any
    ) -> None:
        super().__init__(name, args, opts, **kw)

    def kind_outputs(self, training: PaddleTrainingJob) -> dict[str, Any]:
        _, host, port = training.rendezvous()
        return {"master_endpoint": f"{host}:{port}"}

    def kind_exports(self) -> dict[str, Any]:
        return {"masterEndpoint": self.master_endpoint}


attach_component(PaddleJobDocument, PaddleJob)
