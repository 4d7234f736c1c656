"""PyTorchJob job documents: Kubeflow ``kubeflow.org/v1``.

Fidelity target: Kubeflow training-operator v1.9.0, ``pkg/apis/kubeflow.org/v1/pytorch_types.go``
(the API), ``pytorch_defaults.go`` (``SetDefaults_PyTorchJob``: restart policy OnFailure, port
``pytorchjob-port`` 23456 on the ``pytorch`` container, ``setElasticPolicy``,
``setDefaultNprocPerNode``) and ``pkg/webhooks/pytorch/pytorchjob_webhook.go``
(``validatePyTorchJob``, ``validateSpec``, ``validatePyTorchReplicaSpecs``: the types Master
and Worker as written, a single Master with ``replicas: 1``). Everything a Kubeflow replica job
shares is in :mod:`.kubeflow`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, field_validator

from . import webhooks as rules
from .base import Int32, K8sType, Mode, Replicas, Strict, upstream
from .kinds import declare
from .kubeflow import (
    KubeflowJob,
    PodTemplateSpec,
    ReplicaSpec,
    RestartPolicy,
    RunPolicy,
    replica_specs_field,
    restart_policy_field,
    template_field,
)

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "DEFAULT_CONTAINER",
    "DEFAULT_NPROC_PER_NODE",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "REPLICA_TYPES",
    "ElasticPolicy",
    "PyTorchJob",
    "PyTorchJobSpec",
    "PyTorchReplicaSpec",
    "RDZVConf",
]

#: The container the operator gives the env vars and whose named ports the services expose.
DEFAULT_CONTAINER = "pytorch"
#: The port of the master's rendezvous (MASTER_PORT), added to the container when missing.
DEFAULT_PORT_NAME = "pytorchjob-port"
DEFAULT_PORT = 23456
#: spec.nprocPerNode when neither it nor elasticPolicy.nProcPerNode is given.
DEFAULT_NPROC_PER_NODE = "auto"
REPLICA_TYPES = ("Master", "Worker")
#: What torchrun's --nproc-per-node accepts.
_NPROC = re.compile(r"^(auto|cpu|gpu|[1-9][0-9]*)$")

Problems = list[tuple[tuple[str | int, ...], str]]
MetricSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.autoscaling.v2.MetricSpec", "A metric the autoscaler scales workers by"),
]


class PyTorchReplicaSpec(ReplicaSpec):
    """One replica type of a PyTorchJob."""

    DEFAULT_CONTAINER: ClassVar[str] = DEFAULT_CONTAINER
    DEFAULT_PORT_NAME: ClassVar[str] = DEFAULT_PORT_NAME
    DEFAULT_PORT: ClassVar[int] = DEFAULT_PORT

    template: PodTemplateSpec = template_field(DEFAULT_CONTAINER)
    restart_policy: RestartPolicy = restart_policy_field("OnFailure")


class RDZVConf(Strict):
    """One extra rendezvous setting (``elasticPolicy.rdzvConf``)."""

    key: str = Field(default="", description="Setting name.")
    value: str = Field(default="", description="Setting value.")


class ElasticPolicy(Strict):
    """Elastic training with torchrun (``spec.elasticPolicy``)."""

    min_replicas: Replicas | None = Field(
        default=None,
        alias="minReplicas",
        ge=1,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Fewest workers the job runs with (PET_NNODES min). Default: maxReplicas, "
        "else the Worker replicas.",
    )
    max_replicas: Replicas | None = Field(
        default=None,
        alias="maxReplicas",
        ge=1,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Most workers the job scales to (PET_NNODES max). Default: minReplicas, else "
        "the Worker replicas.",
    )
    rdzv_backend: str | None = Field(
        default=None,
        alias="rdzvBackend",
        description="Rendezvous backend: c10d, etcd or etcd-v2 (PET_RDZV_BACKEND). Default: c10d.",
    )
    rdzv_port: int | None = Field(
        default=None,
        alias="rdzvPort",
        ge=1,
        le=65535,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Rendezvous port. Default: the Worker's pytorchjob-port.",
    )
    rdzv_host: str | None = Field(
        default=None, alias="rdzvHost", description="Rendezvous host. Default: <job>-worker-0."
    )
    rdzv_id: str | None = Field(
        default=None, alias="rdzvId", description="Rendezvous id (PET_RDZV_ID). Default: none."
    )
    rdzv_conf: list[RDZVConf] | None = Field(
        default=None,
        alias="rdzvConf",
        # An empty list would make the operator's generateEnvRDZVConf slice past its start.
        min_length=1,
        json_schema_extra=upstream(minItems=None),
        description="Extra rendezvous settings, joined as key=value,... (PET_RDZV_CONF).",
    )
    standalone: bool | None = Field(
        default=None,
        description="Run a local standalone rendezvous (PET_STANDALONE). Default: false.",
    )
    n_proc_per_node: Int32 | None = Field(
        default=None,
        alias="nProcPerNode",
        ge=1,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Deprecated: use spec.nprocPerNode. Processes per node (PET_NPROC_PER_NODE).",
    )
    max_restarts: Int32 | None = Field(
        default=None,
        alias="maxRestarts",
        ge=0,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Worker-group restarts before the job fails (PET_MAX_RESTARTS).",
    )
    metrics: list[MetricSpec] | None = Field(
        default=None,
        description="Metrics of the autoscaler the operator creates (operator mode only).",
    )


class PyTorchJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v1`` PyTorchJob."""

    run_policy: RunPolicy = Field(
        default_factory=RunPolicy, alias="runPolicy", description="Run-time policies."
    )
    elastic_policy: ElasticPolicy | None = Field(
        default=None,
        alias="elasticPolicy",
        description="Elastic training with torchrun (needs a Worker). Default: none.",
    )
    pytorch_replica_specs: dict[Literal["Master", "Worker"], PyTorchReplicaSpec] = (
        replica_specs_field("pytorchReplicaSpecs", REPLICA_TYPES)
    )
    nproc_per_node: str | None = Field(
        default=None,
        alias="nprocPerNode",
        description="Processes per node: auto, cpu, gpu or a number, as a string "
        "(PET_NPROC_PER_NODE; a number also multiplies WORLD_SIZE). Default: auto.",
    )

    @field_validator("nproc_per_node")
    @classmethod
    def _nproc(cls, value: str | None) -> str | None:
        # Stricter than the operator, which passes any string on: torchrun refuses the rest.
        if value is not None and not _NPROC.fullmatch(value):
            raise ValueError(f"must be auto, cpu, gpu or a positive number, got {value!r}")
        return value


@declare("Kubeflow PyTorchJob (training-operator v1.9): distributed and elastic PyTorch")
class PyTorchJob(KubeflowJob):
    """A Kubeflow PyTorchJob (``kubeflow.org/v1``)."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1"
    KIND: ClassVar[str] = "PyTorchJob"
    REPLICA_TYPES: ClassVar[tuple[str, ...]] = REPLICA_TYPES
    REPLICA_SPECS_KEY: ClassVar[str] = "pytorchReplicaSpecs"
    SINGLE_TYPES: ClassVar[tuple[str, ...]] = ("Master",)
    HOST_NAME_USE: ClassVar[str] = "MASTER_ADDR host name"

    api_version: Literal["kubeflow.org/v1"] = Field(alias="apiVersion")
    kind: Literal["PyTorchJob"]
    spec: PyTorchJobSpec

    def has_master(self) -> bool:
        return "Master" in self.spec.pytorch_replica_specs

    def defaulted_spec_update(self) -> dict[str, Any]:
        """What SetDefaults_PyTorchJob sets: elasticPolicy min and max replicas
        (setElasticPolicy) and nprocPerNode (setDefaultNprocPerNode) besides the common ones."""
        update = super().defaulted_spec_update()
        elastic = self.spec.elastic_policy
        if elastic is not None:
            low, high = elastic.min_replicas, elastic.max_replicas
            if low is None and high is None:
                worker = self.spec.pytorch_replica_specs.get("Worker")
                low = high = worker.replicas if worker else None
            update["elastic_policy"] = elastic.model_copy(
                update={"min_replicas": low or high, "max_replicas": high or low}
            )
        if self.spec.nproc_per_node is None and (
            elastic is None or elastic.n_proc_per_node is None
        ):
            update["nproc_per_node"] = DEFAULT_NPROC_PER_NODE
        return update

    def kind_problems(self, settings: StackSettings) -> Problems:
        """validateSpec's elastic rules (:func:`.webhooks.elastic_worker`,
        :func:`.webhooks.elastic_nproc`), and what native mode cannot do of them; its replica
        count rule (validatePyTorchReplicaSpecs, v1.9.3, :func:`.webhooks.replica_count`): a
        replica type other than the Master has at least 1 replica."""
        problems: Problems = [
            (refusal.path, "must be at least 1")
            for rtype, spec in self.spec.pytorch_replica_specs.items()
            if rtype not in self.SINGLE_TYPES
            for refusal in rules.replica_count(
                ("spec", "pytorchReplicaSpecs", rtype), spec.replicas
            )
        ]
        return problems + self._elastic_problems(settings)

    def _elastic_problems(self, settings: StackSettings) -> Problems:
        elastic = self.spec.elastic_policy
        if elastic is None:
            return []
        problems: Problems = []
        path: tuple[str | int, ...] = ("spec", "elasticPolicy")
        specs: tuple[str | int, ...] = ("spec", "pytorchReplicaSpecs")
        for _ in rules.elastic_worker(specs, self.spec.pytorch_replica_specs):
            problems.append((specs, "a Worker is required with elasticPolicy"))
        for refusal in rules.elastic_nproc(elastic.n_proc_per_node, self.spec.nproc_per_node):
            problems.append(
                (
                    refusal.path,
                    "must not be used with nprocPerNode (it is deprecated: give nprocPerNode only)",
                )
            )
        low, high = elastic.min_replicas, elastic.max_replicas
        if low is not None and high is not None and low > high:
            # Not checked by the operator; torchrun refuses PET_NNODES min:max with min > max.
            problems.append(
                ((*path, "minReplicas"), f"must be at most maxReplicas ({high}), got {low}")
            )
        if elastic.metrics and self.mode(settings) == Mode.NATIVE:
            problems.append(
                (
                    (*path, "metrics"),
                    "the training operator scales the PyTorchJob by these metrics (a "
                    "HorizontalPodAutoscaler on its scale subresource); native mode has no "
                    "PyTorchJob to scale: use operator mode, or leave metrics out",
                )
            )
        return problems
