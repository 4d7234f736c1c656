"""PaddleJob expansion: the env of Kubeflow's training operator.

Fidelity target: training-operator v1.9.0 ``pkg/controller.v1/paddlepaddle``: ``SetClusterSpec``
is ``setPodEnv`` (``envvar.go``), on every container; ``IsMasterRole`` is the Master replica
type; the job succeeds with its Master, else with every Worker (``UpdateJobStatus`` in
``paddlepaddle_controller.go``). Without a Master the job runs in collective mode, worker 0
being the rendezvous; with one, in parameter-server mode around ``<job>-master-0``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..models.base import Mode
from ..models.paddlejob import PaddleJob
from .context import BuildContext
from .kubeflow import Manifest, ReplicaJob, replica_job_builder
from .registry import builder

__all__ = ["OPERATOR_NAME", "PaddleTrainingJob", "build_paddlejob"]

OPERATOR_NAME = "paddlejob-controller"
#: The variable setPodEnv reads the rendezvous pod's own IP into.
POD_IP = "POD_IP_DUMMY"


class PaddleTrainingJob(ReplicaJob[PaddleJob]):
    """One PaddleJob being expanded."""

    OPERATOR_NAME: ClassVar[str] = OPERATOR_NAME

    def rendezvous(self) -> tuple[str, str, int]:
        """(replica type, ``<job>-<type>-0``, port): the Master in parameter-server mode, else
        worker 0, on the default container's ``master`` port (getPortFromPaddleJob)."""
        rtype = "Master" if self.job.has_master() else "Worker"
        port = self.job.replica_specs[rtype].port()
        return rtype, self.names.host(rtype, 0), port

    def pod_env(self, rtype: str, index: int) -> list[dict[str, Any]]:
        """What setPodEnv appends to every container, in its order: PYTHONUNBUFFERED,
        PADDLE_JOB_ID (the job's name), PADDLE_NNODES (every replica); then PADDLE_MASTER: the
        rendezvous pod itself gets ``$(POD_IP_DUMMY):<port>`` with POD_IP_DUMMY read from
        ``status.podIP`` before it, the others ``<rendezvous>:<port>``; in parameter-server
        mode PADDLE_SERVER_NUM 1 on the Master and PADDLE_TRAINER_NUM 1 on the Workers."""
        env: list[dict[str, Any]] = [
            {"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "PADDLE_JOB_ID", "value": self.name},
            {"name": "PADDLE_NNODES", "value": str(self.job.total_replicas())},
        ]
        leader, host, port = self.rendezvous()
        if rtype == leader.lower() and index == 0:
            env += [
                {
                    "name": POD_IP,
                    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
                },
                {"name": "PADDLE_MASTER", "value": f"$({POD_IP}):{port}"},
            ]
        else:
            env.append({"name": "PADDLE_MASTER", "value": f"{host}:{port}"})
        if self.job.has_master():
            count = "PADDLE_SERVER_NUM" if rtype == "master" else "PADDLE_TRAINER_NUM"
            env.append({"name": count, "value": "1"})
        return env

    def is_master(self, rtype: str, index: int) -> bool:
        """The Master leads (IsMasterRole); a collective job has no pod with job-role master."""
        return rtype == "Master"


_build_replicas = replica_job_builder(PaddleTrainingJob)


@builder(PaddleJob)
def build_paddlejob(job: PaddleJob, mode: Mode, ctx: BuildContext) -> list[Manifest]:
    """Either mode; `elasticPolicy.metrics` is a warning in both: training-operator v1.9.3
    creates a HorizontalPodAutoscaler for a PyTorchJob only (pkg/controller.v1/pytorch/hpa.go,
    reconcileHPA); its PaddleJob controller never reads the metrics."""
    elastic = job.spec.elastic_policy
    if elastic is not None and elastic.metrics:
        ctx.warn(
            ("spec", "elasticPolicy", "metrics"),
            "has no effect: no controller of PaddleJob reads them (the training operator "
            "scales only a PyTorchJob by metrics); the job runs with its Worker replicas",
        )
    return _build_replicas(job, mode, ctx)
