"""The XGBoostJob component: a Kubeflow XGBoostJob deployed as the objects kubetrain render
writes for it (native mode: the pods and headless services of the training operator; operator
mode: the ``kubeflow.org/v1`` XGBoostJob custom resource).

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from typing import Any, ClassVar, NotRequired, TypedDict

import pulumi

from kubetrain.builders.kubeflow import ReplicaJob
from kubetrain.builders.xgboostjob import XGBoostTrainingJob
from kubetrain.models.kinds import attach_component
from kubetrain.models.kubeflow import KubeflowJob
from kubetrain.models.xgboostjob import XGBoostJob as XGBoostJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._kubeflow import KubeflowJobComponent, ReplicaSpecArgs
from ._kubeflow_args import RunPolicyArgs

__all__ = ["XGBoostJob", "XGBoostJobArgs", "XGBoostJobSpecArgs"]


class XGBoostJobSpecArgs(TypedDict):
    """The spec of a kubeflow.org/v1 XGBoostJob."""

    xgb_replica_specs: dict[str, ReplicaSpecArgs]
    """Replica type (Master, required with replicas 1, and Worker) -> its spec."""
    run_policy: NotRequired[RunPolicyArgs]
    """Run-time policies. Default: none."""


class XGBoostJobArgs(TypedDict):
    """A Kubeflow XGBoostJob (kubeflow.org/v1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the job."""
    spec: XGBoostJobSpecArgs
    """The XGBoostJob's spec, as in a kubeflow.org/v1 XGBoostJob manifest."""
    settings: NotRequired[SettingsArgs]
    """Stack-level settings (namespace default, GPU resource name, mode...). Default: none."""


class XGBoostJob(KubeflowJobComponent):
    """A Kubeflow XGBoostJob: the pods and services its operator would create, or its resource."""

    _TYPE: ClassVar[str] = "kubetrain:index:XGBoostJob"
    _DOCUMENT: ClassVar[type[KubeflowJob]] = XGBoostJobDocument
    _EXPANSION: ClassVar[type[ReplicaJob[Any]]] = XGBoostTrainingJob

    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job, e.g. for kubectl get pods -l."""
    master_addr: pulumi.Output[str]
    """MASTER_ADDR of the pods: <job>-master-0, the rabit tracker (or LightGBM's master)."""
    service_hosts: pulumi.Output[list[str]]
    """DNS name of every replica's headless service, the Master first, then the Workers."""
    mode: pulumi.Output[str]
    """How the job is deployed: native (its pods and services) or operator (its XGBoostJob)."""

    def __init__(
        self, name: str, args: XGBoostJobArgs, opts: pulumi.ResourceOptions | None = None, **kw: Any
    ) -> None:
        super().__init__(name, args, opts, **kw)

    def kind_outputs(self, training: XGBoostTrainingJob) -> dict[str, Any]:
        return {"master_addr": training.master_addr()}

    def kind_exports(self) -> dict[str, Any]:
        return {"masterAddr": self.master_addr}


attach_component(XGBoostJobDocument, XGBoostJob)
