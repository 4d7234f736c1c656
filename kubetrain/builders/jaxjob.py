"""JAXJob expansion: the env of Kubeflow's training operator.

Fidelity target: training-operator v1.9.0 ``pkg/controller.v1/jax``: ``SetClusterSpec`` is
``setPodEnv`` (``envvar.go``), on every container, for ``jax.distributed.initialize``;
``IsMasterRole`` is index 0 (``jaxjob_controller.go``); the job succeeds when every Worker has
(``UpdateJobStatus``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..models.jaxjob import JAXJob
from .kubeflow import ReplicaJob, replica_job_builder
from .registry import builder

__all__ = ["OPERATOR_NAME", "JAXTrainingJob", "build_jaxjob"]

OPERATOR_NAME = "jaxjob-controller"


class JAXTrainingJob(ReplicaJob[JAXJob]):
    """One JAXJob being expanded."""

    OPERATOR_NAME: ClassVar[str] = OPERATOR_NAME

    def coordinator(self) -> str:
        """``<job>-worker-0``: the coordinator the processes connect to (replicaName)."""
        return self.names.host("Worker", 0)

    def pod_env(self, rtype: str, index: int) -> list[dict[str, Any]]:
        """What setPodEnv appends to every container, in its order: PYTHONUNBUFFERED,
        COORDINATOR_PORT (worker 0's jaxjob-port), COORDINATOR_ADDRESS, NUM_PROCESSES (every
        replica) and PROCESS_ID (the index)."""
        port = self.job.replica_specs["Worker"].port()
        return [
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "COORDINATOR_PORT", "value": str(port)},
            {"name": "COORDINATOR_ADDRESS", "value": self.coordinator()},
            {"name": "NUM_PROCESSES", "value": str(self.job.total_replicas())},
            {"name": "PROCESS_ID", "value": str(index)},
        ]

    def is_master(self, rtype: str, index: int) -> bool:
        """Index 0 leads (IsMasterRole: ``index == 0``)."""
        return index == 0


build_jaxjob = builder(JAXJob)(replica_job_builder(JAXTrainingJob))
