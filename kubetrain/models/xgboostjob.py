"""XGBoostJob job documents: Kubeflow ``kubeflow.org/v1``.

Fidelity target: Kubeflow training-operator v1.9.0, ``pkg/apis/kubeflow.org/v1/xgboost_types.go``
(the API: container ``xgboost``, port ``xgboostjob-port`` 9999, restart policy Never, replica
types Master and Worker), ``xgboost_defaults.go`` (``SetDefaults_XGBoostJob``) and
``pkg/webhooks/xgboost/xgboostjob_webhook.go`` (``validateXGBReplicaSpecs``: the types as
written, a Master present, given with ``replicas: 1``). Everything a Kubeflow replica job shares
is in :mod:`.kubeflow`.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .base import Strict
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
from .stack import StackSettings

__all__ = ["REPLICA_TYPES", "XGBoostJob", "XGBoostJobSpec", "XGBoostReplicaSpec"]

REPLICA_TYPES = ("Master", "Worker")


class XGBoostReplicaSpec(ReplicaSpec):
    """One replica type of an XGBoostJob."""

    DEFAULT_CONTAINER: ClassVar[str] = "xgboost"
    DEFAULT_PORT_NAME: ClassVar[str] = "xgboostjob-port"
    DEFAULT_PORT: ClassVar[int] = 9999

    template: PodTemplateSpec = template_field("xgboost")
    restart_policy: RestartPolicy = restart_policy_field("Never")


class XGBoostJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v1`` XGBoostJob."""

    run_policy: RunPolicy = run_policy_field()
    xgb_replica_specs: dict[Literal["Master", "Worker"], XGBoostReplicaSpec] = replica_specs_field(
        "xgbReplicaSpecs", REPLICA_TYPES
    )


@declare("Kubeflow XGBoostJob (training-operator v1.9): distributed XGBoost and LightGBM")
class XGBoostJob(KubeflowJob):
    """A Kubeflow XGBoostJob (``kubeflow.org/v1``): a Master (the rabit tracker or LightGBM's
    master) and Workers."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1"
    KIND: ClassVar[str] = "XGBoostJob"
    REPLICA_TYPES: ClassVar[tuple[str, ...]] = REPLICA_TYPES
    REPLICA_SPECS_KEY: ClassVar[str] = "xgbReplicaSpecs"
    SINGLE_TYPES: ClassVar[tuple[str, ...]] = ("Master",)
    REQUIRED_TYPES: ClassVar[tuple[str, ...]] = ("Master",)
    HOST_NAME_USE: ClassVar[str] = "MASTER_ADDR host name"

    api_version: Literal["kubeflow.org/v1"] = Field(alias="apiVersion")
    kind: Literal["XGBoostJob"]
    spec: XGBoostJobSpec

    def cluster_env_bytes(self, settings: StackSettings) -> int:
        """``WORKER_ADDRS`` (LightGBM's, which the operator's SetPodEnv writes into every
        container of every pod once there is more than one replica) lists every worker,
        ``<job>-worker-<i>``, comma-separated: each pod's grows with the job, and the job's
        output with its square, as a TFJob's ``TF_CONFIG`` does."""
        total = self.total_replicas()
        if total <= 1:
            return 0
        containers = max(
            len((s.template.get("spec") or {}).get("containers") or [None])
            for s in self.replica_specs.values()
        )
        per_worker = len(self.name) + len("-worker-") + len(str(total)) + 1
        return containers * (200 + total * per_worker)
