"""XGBoostJob expansion: the env of Kubeflow's training operator.

Fidelity target: training-operator v1.9.0 ``pkg/controller.v1/xgboost``: ``SetClusterSpec`` is
``SetPodEnv`` (``xgboost.go``), the rabit tracker's and LightGBM's variables on every container;
``IsMasterRole`` is the Master replica type, and the job succeeds with its Master
(``UpdateJobStatus`` in ``xgboostjob_controller.go``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..models.xgboostjob import XGBoostJob
from .kubeflow import ReplicaJob, replica_job_builder
from .registry import builder

__all__ = ["OPERATOR_NAME", "XGBoostTrainingJob", "build_xgboostjob"]

OPERATOR_NAME = "xgboostjob-controller"


class XGBoostTrainingJob(ReplicaJob[XGBoostJob]):
    """One XGBoostJob being expanded."""

    OPERATOR_NAME: ClassVar[str] = OPERATOR_NAME

    def master_addr(self) -> str:
        """``<job>-master-0`` (replicaName)."""
        return self.names.host("Master", 0)

    def pod_env(self, rtype: str, index: int) -> list[dict[str, Any]]:
        """What SetPodEnv appends to every container, in its order: MASTER_PORT (the Master's
        xgboostjob-port), MASTER_ADDR, WORLD_SIZE (every replica), RANK (workers after the
        Master), PYTHONUNBUFFERED; with more than one replica LightGBM's WORKER_PORT (the
        Worker's port) and WORKER_ADDRS (``<job>-worker-<i>`` for i below the total replicas
        minus one, as SetPodEnv counts them)."""
        specs = self.job.replica_specs
        total = self.job.total_replicas()
        rank = index + (specs["Master"].replicas if rtype == "worker" else 0)
        env: list[dict[str, Any]] = [
            {"name": "MASTER_PORT", "value": str(specs["Master"].port())},
            {"name": "MASTER_ADDR", "value": self.master_addr()},
            {"name": "WORLD_SIZE", "value": str(total)},
            {"name": "RANK", "value": str(rank)},
            {"name": "PYTHONUNBUFFERED", "value": "1"},
        ]
        if total > 1:
            workers = ",".join(self.names.host("Worker", i) for i in range(total - 1))
            env += [
                {"name": "WORKER_PORT", "value": str(specs["Worker"].port())},
                {"name": "WORKER_ADDRS", "value": workers},
            ]
        return env

    def is_master(self, rtype: str, index: int) -> bool:
        """The Master leads (IsMasterRole)."""
        return rtype == "Master"


build_xgboostjob = builder(XGBoostJob)(replica_job_builder(XGBoostTrainingJob))
