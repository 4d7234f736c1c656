"""PaddleJob job documents: Kubeflow ``kubeflow.org/v1``, the successor of EDL's TrainingJob.

Fidelity target: Kubeflow training-operator v1.9.0,
``pkg/apis/kubeflow.org/v1/paddlepaddle_types.go`` (the API: container ``paddle``, port
``master`` 36543, restart policy OnFailure, replica types Master and Worker, the elastic policy),
``paddlepaddle_defautls.go`` (sic: ``SetDefaults_PaddleJob``, ``setPaddleElasticPolicy``) and
``pkg/webhooks/paddlepaddle/paddlepaddle_webhook.go`` (``validateSpec``: the types as written).
Everything a Kubeflow replica job shares is in :mod:`.kubeflow`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field

from .base import Int32, K8sType, Replicas, Strict, upstream
from .kinds import declare
from .kubeflow import (
    KubeflowJob,
    PodTemplateSpec,
    ReplicaSpec,
    RestartPolicy,
    RunPolicy,
    replica_specs_field,
    restart_policy_field,
    run_policy_field,
    template_field,
)

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "REPLICA_TYPES",
    "PaddleElasticPolicy",
    "PaddleJob",
    "PaddleJobSpec",
    "PaddleReplicaSpec",
]

REPLICA_TYPES = ("Master", "Worker")
Problems = list[tuple[tuple[str | int, ...], str]]
MetricSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.autoscaling.v2.MetricSpec", "A metric the autoscaler scales workers by"),
]


class PaddleReplicaSpec(ReplicaSpec):
    """One replica type of a PaddleJob."""

    DEFAULT_CONTAINER: ClassVar[str] = "paddle"
    DEFAULT_PORT_NAME: ClassVar[str] = "master"
    DEFAULT_PORT: ClassVar[int] = 36543

    template: PodTemplateSpec = template_field("paddle")
    restart_policy: RestartPolicy = restart_policy_field("OnFailure")


class PaddleElasticPolicy(Strict):
    """Elastic training (``spec.elasticPolicy``): the bounds of the autoscaler the operator
    creates (PaddleElasticPolicy)."""

    min_replicas: Replicas | None = Field(
        default=None,
        alias="minReplicas",
        ge=1,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Fewest workers. Default: maxReplicas, else the Worker replicas.",
    )
    max_replicas: Replicas | None = Field(
        default=None,
        alias="maxReplicas",
        ge=1,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Most workers. Default: minReplicas, else the Worker replicas.",
    )
    max_restarts: Int32 | None = Field(
        default=None,
        alias="maxRestarts",
        ge=0,
        json_schema_extra=upstream(minimum=None, maximum=None),
        description="Restarts of pods in elastic mode. Default: none.",
    )
    metrics: list[MetricSpec] | None = Field(
        default=None,
        description="Metrics of the autoscaler the operator creates (operator mode only).",
    )


class PaddleJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v1`` PaddleJob."""

    run_policy: RunPolicy = run_policy_field()
    elastic_policy: PaddleElasticPolicy | None = Field(
        default=None,
        alias="elasticPolicy",
        description="Elastic training: the autoscaler's bounds (operator mode). Default: none.",
    )
    paddle_replica_specs: dict[Literal["Master", "Worker"], PaddleReplicaSpec] = (
        replica_specs_field("paddleReplicaSpecs", REPLICA_TYPES)
    )


@declare("Kubeflow PaddleJob (training-operator v1.9): PaddlePaddle collective or parameter-server")
class PaddleJob(KubeflowJob):
    """A Kubeflow PaddleJob (``kubeflow.org/v1``): Workers only (collective mode) or a Master and
    Workers (parameter-server mode)."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1"
    KIND: ClassVar[str] = "PaddleJob"
    REPLICA_TYPES: ClassVar[tuple[str, ...]] = REPLICA_TYPES
    REPLICA_SPECS_KEY: ClassVar[str] = "paddleReplicaSpecs"
    HOST_NAME_USE: ClassVar[str] = "PADDLE_MASTER host name"

    api_version: Literal["kubeflow.org/v1"] = Field(alias="apiVersion")
    kind: Literal["PaddleJob"]
    spec: PaddleJobSpec

    def has_master(self) -> bool:
        return "Master" in self.spec.paddle_replica_specs

    def defaulted_spec_update(self) -> dict[str, Any]:
        """What SetDefaults_PaddleJob sets besides the common fields: the elastic policy's min
        and max replicas (setPaddleElasticPolicy)."""
        update = super().defaulted_spec_update()
        elastic = self.spec.elastic_policy
        if elastic is not None:
            low, high = elastic.min_replicas, elastic.max_replicas
            if low is None and high is None:
                worker = self.spec.paddle_replica_specs.get("Worker")
                low = high = worker.replicas if worker else None
            update["elastic_policy"] = elastic.model_copy(
                update={"min_replicas": low or high, "max_replicas": high or low}
            )
        return update

    def kind_problems(self, settings: StackSettings) -> Problems:
        """What the elastic policy needs: the operator's setPaddleElasticPolicy reads the
        Worker's replicas (a nil pointer without a Worker). Its metrics are not refused: no
        controller of PaddleJob reads them (the builder warns)."""
        elastic = self.spec.elastic_policy
        if elastic is None:
            return []
        problems: Problems = []
        path: tuple[str | int, ...] = ("spec", "elasticPolicy")
        if "Worker" not in self.spec.paddle_replica_specs:
            problems.append(
                (("spec", "paddleReplicaSpecs"), "a Worker is required with elasticPolicy")
            )
        low, high = elastic.min_replicas, elastic.max_replicas
        if low is not None and high is not None and low > high:
            problems.append(
                ((*path, "minReplicas"), f"must be at most maxReplicas ({high}), got {low}")
            )
        return problems
