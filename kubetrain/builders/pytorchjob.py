"""PyTorchJob expansion: the env vars and init container of Kubeflow's training operator.

Fidelity target: training-operator v1.9.0 ``pkg/controller.v1/pytorch``: the PyTorchJob hooks of
the common replica-job expansion in :mod:`.kubeflow`. ``SetClusterSpec`` is ``setPodEnv``
(``envvar.go``, with ``MasterEnvVarGenerator`` of ``master.go`` and ``ElasticEnvVarGenerator`` of
``elastic.go``) then ``setInitContainer`` (``initcontainer.go``); ``IsMasterRole`` is the Master
replica type, else worker 0 (``pytorchjob_controller.go``); the job succeeds with its Master,
else with every Worker, or any Worker of an elastic job (``UpdateJobStatus``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..models.pytorchjob import PyTorchJob
from .kubeflow import ReplicaJob, replica_job_builder
from .registry import builder

__all__ = [
    "INIT_CONTAINER_IMAGE",
    "INIT_CONTAINER_MAX_TRIES",
    "OPERATOR_NAME",
    "PyTorchTrainingJob",
    "build_pytorchjob",
    "init_container",
]

OPERATOR_NAME = "pytorchjob-controller"
#: The operator's defaults for the workers' init container (--pytorch-init-container-image and
#: --pytorch-init-container-max-tries).
INIT_CONTAINER_IMAGE = "alpine:3.10"
INIT_CONTAINER_MAX_TRIES = 100


def init_container(master_addr: str) -> dict[str, Any]:
    """The container the operator's default init-container template gives every worker: it waits
    until the master's service name resolves (``getInitContainerGenerator``)."""
    wait = (
        f"err=1;for i in $(seq {INIT_CONTAINER_MAX_TRIES}); do if nslookup {master_addr}; "
        "then err=0 && break; fi;echo waiting for master; sleep 2; done; exit $err"
    )
    return {
        "name": "init-pytorch",
        "image": INIT_CONTAINER_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "limits": {"cpu": "100m", "memory": "20Mi"},
            "requests": {"cpu": "50m", "memory": "10Mi"},
        },
        "command": ["sh", "-c", wait],
    }


class PyTorchTrainingJob(ReplicaJob[PyTorchJob]):
    """One PyTorchJob being expanded."""

    OPERATOR_NAME: ClassVar[str] = OPERATOR_NAME

    def master_addr(self) -> str:
        """``<job>-master-0``: the master's service, by its short name as the operator writes it
        (the pods resolve it in their own namespace)."""
        return self.names.host("Master", 0)

    def world_size(self) -> int:
        """Replicas times the processes per node when that is a number (getNprocPerNodeInt)."""
        nproc = self.job.spec.nproc_per_node or ""
        return self.job.total_replicas() * (int(nproc) if nproc.isdigit() else 1)

    def pod_env(self, rtype: str, index: int) -> list[dict[str, Any]]:
        """What setPodEnv (``envvar.go``, v1.9.0) appends to every container of one pod, in its
        order: PYTHONUNBUFFERED 1; with a Master, MasterEnvVarGenerator's MASTER_PORT,
        PET_MASTER_PORT, MASTER_ADDR, PET_MASTER_ADDR (``master.go``), then WORLD_SIZE, RANK and
        PET_NODE_RANK; PET_NPROC_PER_NODE whenever nprocPerNode is set (defaulting sets it
        unless the deprecated elasticPolicy.nProcPerNode is given); then the elastic variables,
        or PET_NNODES."""
        job = self.job
        env: list[dict[str, Any]] = [{"name": "PYTHONUNBUFFERED", "value": "1"}]
        if job.has_master():
            port = str(job.replica_specs["Master"].port())
            rank = index + 1 if rtype == "worker" else index
            env += [
                {"name": "MASTER_PORT", "value": port},
                {"name": "PET_MASTER_PORT", "value": port},
                {"name": "MASTER_ADDR", "value": self.master_addr()},
                {"name": "PET_MASTER_ADDR", "value": self.master_addr()},
                {"name": "WORLD_SIZE", "value": str(self.world_size())},
                {"name": "RANK", "value": str(rank)},
                {"name": "PET_NODE_RANK", "value": str(rank)},
            ]
        if job.spec.nproc_per_node is not None:
            env.append({"name": "PET_NPROC_PER_NODE", "value": job.spec.nproc_per_node})
        if job.spec.elastic_policy is not None:
            env += self.elastic_env()
        else:
            env.append({"name": "PET_NNODES", "value": str(job.total_replicas())})
        return env

    def elastic_env(self) -> list[dict[str, Any]]:
        """ElasticEnvVarGenerator.Generate: the torchrun rendezvous and sizing variables."""
        job = self.job
        policy = job.spec.elastic_policy
        assert policy is not None
        host = policy.rdzv_host or self.names.host("Worker", 0)
        port = policy.rdzv_port or job.replica_specs["Worker"].port()
        env: list[dict[str, Any]] = [
            {"name": "PET_RDZV_ENDPOINT", "value": f"{host}:{port}"},
            {"name": "PET_RDZV_BACKEND", "value": policy.rdzv_backend or "c10d"},
            {"name": "PET_NNODES", "value": f"{policy.min_replicas}:{policy.max_replicas}"},
        ]
        if policy.max_restarts is not None:
            env.append({"name": "PET_MAX_RESTARTS", "value": str(policy.max_restarts)})
        if policy.n_proc_per_node is not None:
            env.append({"name": "PET_NPROC_PER_NODE", "value": str(policy.n_proc_per_node)})
        if policy.rdzv_id is not None:
            env.append({"name": "PET_RDZV_ID", "value": policy.rdzv_id})
        if policy.rdzv_conf:
            conf = ",".join(f"{c.key}={c.value}" for c in policy.rdzv_conf)
            env.append({"name": "PET_RDZV_CONF", "value": conf})
        if policy.standalone:
            env.append({"name": "PET_STANDALONE", "value": ""})
        return env

    def is_master(self, rtype: str, index: int) -> bool:
        """The Master pod leads; without a Master, worker 0 does (IsMasterRole in
        ``pytorchjob_controller.go``, v1.9.0)."""
        if self.job.has_master():
            return rtype == "Master"
        return rtype == "Worker" and index == 0

    def success(self) -> tuple[str, list[tuple[str, int]]]:
        """The Master; without one every Worker, or any Worker of an elastic job
        (UpdateJobStatus: "If ElasticPolicy is not nil and any worker has completed")."""
        operator, pods = super().success()
        if not self.job.has_master() and self.job.spec.elastic_policy is not None:
            return "Any", pods
        return operator, pods

    def workload_warnings(self) -> list[tuple[tuple[str | int, ...], str]]:
        """The common ones, and a Worker-only job that torchrun cannot rendezvous."""
        out = super().workload_warnings()
        job = self.job
        if not job.has_master() and job.spec.elastic_policy is None and job.is_distributed():
            out.append(
                (
                    ("spec", "pytorchReplicaSpecs"),
                    "a Worker-only PyTorchJob without elasticPolicy gets no MASTER_ADDR or "
                    "rendezvous endpoint (as the training operator writes none): torchrun on "
                    "each pod would rendezvous at its own 127.0.0.1; add a Master, or an "
                    "elasticPolicy (rendezvous at <job>-worker-0)",
                )
            )
        return out

    def set_cluster_spec(self, pod_spec: dict[str, Any], rtype: str, index: int) -> None:
        """setPodEnv on every container, then setInitContainer: workers of a job with a Master
        wait for its service name to resolve."""
        super().set_cluster_spec(pod_spec, rtype, index)
        if rtype == "worker" and self.job.has_master():
            init = pod_spec.get("initContainers") or []
            pod_spec["initContainers"] = [*init, init_container(self.master_addr())]


build_pytorchjob = builder(PyTorchJob)(replica_job_builder(PyTorchTrainingJob))
