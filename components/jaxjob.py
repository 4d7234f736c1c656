"""The JAXJob component: a Kubeflow JAXJob deployed as the objects kubetrain render writes for
it (native mode: the pods and headless services of the training operator; operator mode: the
``kubeflow.org/v1`` JAXJob custom resource).

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from typing import Any, ClassVar, NotRequired, TypedDict

import pulumi

from kubetrain.builders.jaxjob import JAXTrainingJob
from kubetrain.builders.kubeflow import ReplicaJob
from kubetrain.models.jaxjob import JAXJob as JAXJobDocument
from kubetrain.models.kinds import attach_component
from kubetrain.models.kubeflow import KubeflowJob

from ._args import JobMetadataArgs, SettingsArgs
from ._kubeflow import KubeflowJobComponent, ReplicaSpecArgs
from ._kubeflow_args import RunPolicyArgs

__all__ = ["JAXJob", "JAXJobArgs", "JAXJobSpecArgs"]


class JAXJobSpecArgs(TypedDict):
    """The spec of a kubeflow.org/v1 JAXJob."""

    jax_replica_specs: dict[str, ReplicaSpecArgs]
    """Replica type (Worker) -> its spec."""
    run_policy: NotRequired[RunPolicyArgs]
    """Run-time policies. Default: none."""


class JAXJobArgs(TypedDict):
    """A Kubeflow JAXJob (kubeflow.org/v1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the job."""
    spec: JAXJobSpecArgs
    """The JAXJob's spec, as in a kubeflow.org/v1 JAXJob manifest."""
    settings: NotRequired[SettingsArgs]
    """Stack-level settings (namespace default, GPU resource name, mode...). Default: none."""


class JAXJob(KubeflowJobComponent):
    """A Kubeflow JAXJob: the pods and services its operator would create, or its resource."""

    _TYPE: ClassVar[str] = "kubetrain:index:JAXJob"
    _DOCUMENT: ClassVar[type[KubeflowJob]] = JAXJobDocument
    _EXPANSION: ClassVar[type[ReplicaJob[Any]]] = JAXTrainingJob

    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job, e.g. for kubectl get pods -l."""
    coordinator_address: pulumi.Output[str]
    """COORDINATOR_ADDRESS of the pods: <job>-worker-0."""
    service_hosts: pulumi.Output[list[str]]
    """DNS name of every replica's headless service, the Workers by index."""
    mode: pulumi.Output[str]
    """How the job is deployed: native (its pods and services) or operator (its JAXJob)."""

    def __init__(
        self, name: str, args: JAXJobArgs, opts: pulumi.ResourceOptions | None = None, **kw: Any
    ) -> None:
        super().__init__(name, args, opts, **kw)

    def kind_outputs(self, training: JAXTrainingJob) -> dict[str, Any]:
        return {"coordinator_address": training.coordinator()}

    def kind_exports(self) -> dict[str, Any]:
        return {"coordinatorAddress": self.coordinator_address}


attach_component(JAXJobDocument, JAXJob)
