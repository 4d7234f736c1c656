"""TFJob expansion: ``TF_CONFIG`` on the pods of Kubeflow's training operator.

Fidelity target: training-operator v1.9 ``pkg/controller.v1/tensorflow`` (``kubeflow.org/v1``):
the TFJob hooks of the common replica-job expansion in :mod:`.kubeflow` (``SetClusterSpec``
writes ``TF_CONFIG``, ``IsMasterRole``). Where kubetrain differs on purpose it says so below.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ..models.tfjob import DEFAULT_CONTAINER, TFJob
from ..models.workload import JOB, JOBSET
from .context import BuildContext
from .kubeflow import (
    JOB_NAME_LABEL,
    JOB_ROLE_LABEL,
    OPERATOR_NAME_LABEL,
    REPLICA_INDEX_LABEL,
    REPLICA_TYPE_LABEL,
    ReplicaJob,
    ReplicaType,
    custom_resource,
    replica_job_builder,
    to_selector,
)
from .registry import builder

__all__ = [
    "JOB_NAME_LABEL",
    "JOB_ROLE_LABEL",
    "OPERATOR_NAME",
    "OPERATOR_NAME_LABEL",
    "REPLICA_INDEX_LABEL",
    "REPLICA_TYPE_LABEL",
    "TFReplicaSet",
    "TFTrainingJob",
    "build_tfjob",
    "custom_resource",
    "to_selector",
]

OPERATOR_NAME = "tfjob-controller"
TF_CONFIG = "TF_CONFIG"

ClusterSpec = dict[str, list[str]]


def _json(value: Any) -> str:
    """Compact JSON, not ASCII-escaped, keys in the order given: what Go's json.Marshal gives
    of the operator's structs and sorted maps for these host names and replica types."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: The seed's ``TFReplicaSet``: the pods and services of one replica type.
TFReplicaSet = ReplicaType


class TFTrainingJob(ReplicaJob[TFJob]):
    """One TFJob being expanded (the seed's ``TrainingJob``): defaulted spec, replica sets and the
    cluster spec they share."""

    OPERATOR_NAME: ClassVar[str] = OPERATOR_NAME
    LEADER_TYPES: ClassVar[tuple[str, ...]] = ("Chief", "Master")

    def __init__(self, job: TFJob, ctx: BuildContext) -> None:
        super().__init__(job, ctx)
        specs = self.job.replica_specs
        self.has_leader = "Chief" in specs or "Master" in specs
        self._cluster_spec: ClusterSpec | None = None
        self._cluster_json: str | None = None

    def cluster_spec(self) -> ClusterSpec:
        """Lower-case replica type -> ``<pod>.<namespace>.svc[.<clusterDomain>]:<port>`` per index,
        Evaluator included, as the operator's genClusterSpec."""
        if self._cluster_spec is None:
            self._cluster_spec = {
                rs.type_label: [
                    f"{self.service_host(rs.rtype, i)}:{rs.spec.port()}"
                    for i in range(rs.spec.replicas)
                ]
                for rs in sorted(self.replicas, key=lambda r: r.type_label)
            }
        return self._cluster_spec

    def tf_config(self, rtype: str, index: int) -> str:
        """The ``TF_CONFIG`` JSON of one pod, byte-identical to the operator's (Go's json.Marshal:
        compact, map keys sorted, struct fields in declaration order)."""
        task = {"type": rtype, "index": index}
        if self.job.spec.enable_dynamic_worker:
            cluster = self.cluster_spec()
            # The sparse form TensorFlow's dynamic workers use: a worker knows itself and the PS
            # (convertClusterSpecToSparseClusterSpec); SparseTFConfig marshals it under "cluster".
            if rtype == "worker":
                sparse: dict[str, Any] = {
                    "worker": {str(index): cluster["worker"][index]},
                    "ps": cluster.get("ps"),
                }
            elif rtype == "ps":
                sparse = {"worker": {}, "ps": [cluster["ps"][index]]}
            else:
                sparse = {"worker": {}, "ps": []}
            doc: dict[str, Any] = {"cluster": sparse, "task": task}
        else:
            # Every pod's cluster is the job's: encoded once, each pod's task spliced in (the
            # same bytes as the whole document encoded: compact, in this key order).
            if self._cluster_json is None:
                self._cluster_json = _json(self.cluster_spec())
            return f'{{"cluster":{self._cluster_json},"task":{_json(task)},"environment":"cloud"}}'
        return _json(doc)

    def is_master(self, rtype: str, index: int) -> bool:
        """Chief and Master pods lead; without them, worker 0 does (the operator's IsMasterRole)."""
        if self.has_leader:
            return rtype in ("Chief", "Master")
        return rtype == "Worker" and index == 0

    def success(self) -> tuple[str, list[tuple[str, int]]]:
        """The Chief or Master; without one, worker 0, or every worker under successPolicy
        AllWorkers (UpdateJobStatus; a job with neither leader nor workers: every pod)."""
        workers = self.job.replica_specs.get("Worker")
        if self.has_leader or not workers:
            return super().success()
        if self.job.spec.success_policy == "AllWorkers":
            return "All", [("Worker", i) for i in range(workers.replicas)]
        return "All", [("Worker", 0)]

    def workload_warnings(self) -> list[tuple[tuple[str | int, ...], str]]:
        """The common ones, and TFJob's success and dynamic-worker policies."""
        out = super().workload_warnings()
        spec = self.written.spec
        if self.workload is JOB and spec.success_policy == "AllWorkers":
            out.append(
                (
                    ("spec", "successPolicy"),
                    "has no effect under nativeWorkload job: each replica's Job succeeds on its "
                    "own; use nativeWorkload jobset for the job to succeed with all workers",
                )
            )
        if self.workload is JOBSET and spec.enable_dynamic_worker:
            out.append(
                (
                    ("spec", "enableDynamicWorker"),
                    "under nativeWorkload jobset a worker whose Job fails fails the whole "
                    "JobSet; the operator carries on without it (nativeWorkload job does too)",
                )
            )
        return out

    ENV_ON_EVERY_CONTAINER = False

    def set_cluster_spec(self, pod_spec: dict[str, Any], rtype: str, index: int) -> None:
        """``TF_CONFIG`` on the ``tensorflow`` container when the job is distributed."""
        if not self.job.is_distributed():
            return
        for container in pod_spec.get("containers") or []:
            if container.get("name") == DEFAULT_CONTAINER:
                env = container["env"] = container.get("env") or []
                env.append({"name": TF_CONFIG, "value": self.tf_config(rtype, index)})
                break


build_tfjob = builder(TFJob)(replica_job_builder(TFTrainingJob))
