"""TFJob expansion: the pods, headless services and ``TF_CONFIG`` of Kubeflow's training-operator.

Fidelity target: training-operator v1.9 (``kubeflow.org/v1``). For each replica type a
:class:`TFReplicaSet`; for each index a Pod and a same-named headless Service
``<job>-<type>-<index>``. Where kubetrain differs on purpose it says so below.
"""

from __future__ import annotations

import json
from typing import Any

from ..models.tfjob import DEFAULT_CONTAINER, ReplicaSpec, TFJob
from .context import BuildContext
from .gang import (
    SCHEDULER_NAMES,
    GangJob,
    GangPolicy,
    GangScheduler,
    gang_scheduler,
    with_gang_scheduling,
)
from .meta import app_labels, manifest, merge, normalize_pod_gpus, object_meta, plain_copy
from .registry import builder
from .security import apply_pod_security

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
    "to_selector",
]

OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"
OPERATOR_NAME = "tfjob-controller"
TF_CONFIG = "TF_CONFIG"

ClusterSpec = dict[str, list[str]]


def to_selector(labels: dict[str, str]) -> str:
    """A label selector string matching exactly ``labels`` (the seed's ``ToSelector``)."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


class TFTrainingJob:
    """One TFJob being expanded (the seed's ``TrainingJob``): defaulted spec, replica sets and the
    cluster spec they share."""

    def __init__(self, job: TFJob, ctx: BuildContext) -> None:
        self.job = job.defaulted()
        self.ctx = ctx
        self.name = job.name
        self.namespace = job.namespace
        specs = self.job.replica_specs
        self.has_leader = "Chief" in specs or "Master" in specs
        self.replicas = [TFReplicaSet(self, rtype, spec) for rtype, spec in specs.items()]
        self._cluster_spec: ClusterSpec | None = None

    def labels(self) -> dict[str, str]:
        """Labels shared by every pod of the job (the operator's GenLabels)."""
        return {OPERATOR_NAME_LABEL: OPERATOR_NAME, JOB_NAME_LABEL: self.name}

    def service_host(self, service: str) -> str:
        """DNS name of one of the job's headless services: ``<service>.<namespace>.svc``, plus
        ``.<clusterDomain>`` when the stack sets one."""
        domain = self.ctx.settings.cluster_domain
        return f"{service}.{self.namespace}.svc" + (f".{domain}" if domain else "")

    def cluster_spec(self) -> ClusterSpec:
        """Lower-case replica type -> ``<pod>.<namespace>.svc[.<clusterDomain>]:<port>`` per index,
        Evaluator included, as the operator's genClusterSpec."""
        if self._cluster_spec is None:
            self._cluster_spec = {
                rs.type_label: [
                    f"{self.service_host(rs.pod_name(i))}:{rs.spec.port()}"
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
            doc = {"cluster": self.cluster_spec(), "task": task, "environment": "cloud"}
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)

    def gang_policy(self) -> GangPolicy | None:
        """``runPolicy.schedulingPolicy`` as the shared gang-scheduling code takes it."""
        policy = self.job.spec.run_policy.scheduling_policy
        if policy is None:
            return None
        return GangPolicy(
            min_available=policy.min_available,
            queue=policy.queue,
            priority_class=policy.priority_class,
            min_resources=policy.min_resources,
            schedule_timeout_seconds=policy.schedule_timeout_seconds,
        )

    def gang_scheduler(self) -> GangScheduler | None:
        """The gang scheduler of this job: the stack's when it has more than one pod, Volcano
        when only its schedulingPolicy asks for one, else none (see :mod:`.gang`)."""
        requested = self.gang_policy() is not None
        scheduler = gang_scheduler(self.ctx.settings, requested)
        if scheduler is not None and not requested and self.job.total_replicas() < 2:
            return None
        return scheduler

    def scheduler_name(self) -> str | None:
        """The scheduler the pods ask for (the seed's ``SchedulerName``): the gang scheduler's
        when gang scheduling applies; a pod template naming its own scheduler keeps it."""
        scheduler = self.gang_scheduler()
        return SCHEDULER_NAMES[scheduler] if scheduler else None

    def is_master(self, rtype: str, index: int) -> bool:
        """Chief and Master pods lead; without them, worker 0 does (the operator's IsMasterRole)."""
        if self.has_leader:
            return rtype in ("Chief", "Master")
        return rtype == "Worker" and index == 0

    def build(self) -> list[dict[str, Any]]:
        objs = [obj for rs in self.replicas for obj in rs.build()]
        # The operator's SyncPodGroup gives the PodGroup the job's annotations.
        gang = GangJob(
            self.name,
            self.namespace,
            app_labels("tfjob", self.name),
            self.job.metadata.annotations,
        )
        return with_gang_scheduling(objs, gang, self.ctx.settings, self.gang_policy())


class TFReplicaSet:
    """The pods and services of one replica type (the seed's ``TFReplicaSet``)."""

    def __init__(self, job: TFTrainingJob, rtype: str, spec: ReplicaSpec) -> None:
        self.job = job
        self.rtype = rtype
        self.type_label = rtype.lower()
        self.spec = spec

    def pod_name(self, index: int) -> str:
        """``<job>-<type>-<index>``, the name of the pod and of its service (GenGeneralName)."""
        return f"{self.job.name}-{self.type_label}-{index}"

    def labels(self) -> dict[str, str]:
        """Labels shared by every pod of this replica type."""
        return {**self.job.labels(), REPLICA_TYPE_LABEL: self.type_label}

    def labels_by_index(self, index: int) -> dict[str, str]:
        """Labels of the pod with ``index``; also the selector of its service."""
        return {**self.labels(), REPLICA_INDEX_LABEL: str(index)}

    def _app_labels(self) -> dict[str, str]:
        return app_labels("tfjob", self.job.name, self.type_label)

    def create_pod_with_index(self, index: int) -> dict[str, Any]:
        template = self.spec.template
        template_meta = template.get("metadata") or {}
        labels = merge(self._app_labels(), template_meta.get("labels"), self.labels_by_index(index))
        if self.job.is_master(self.rtype, index):
            labels[JOB_ROLE_LABEL] = "master"
        settings = self.job.ctx.settings
        spec = normalize_pod_gpus(plain_copy(template.get("spec") or {}), settings.gpu_resource)
        apply_pod_security(spec, settings.pod_security)
        # ExitCode is the operator's own policy (retry on exit codes >= 128); the pod never
        # restarts itself under it.
        restart = self.spec.restart_policy
        spec["restartPolicy"] = "Never" if restart == "ExitCode" else restart
        deadline = self.job.job.spec.run_policy.active_deadline_seconds
        if deadline is not None:
            # The operator fails the whole job after the deadline; without it, each pod gets it.
            spec.setdefault("activeDeadlineSeconds", deadline)
        if self.job.job.is_distributed():
            for container in spec.get("containers") or []:
                if container.get("name") == DEFAULT_CONTAINER:
                    env = container["env"] = container.get("env") or []
                    env.append(
                        {"name": TF_CONFIG, "value": self.job.tf_config(self.type_label, index)}
                    )
                    break
        meta = object_meta(
            self.pod_name(index), self.job.namespace, labels, template_meta.get("annotations")
        )
        return manifest("v1", "Pod", meta, spec=spec)

    def create_service_with_index(self, index: int) -> dict[str, Any]:
        labels = self.labels_by_index(index)
        # The operator's port map iterates in random order; kubetrain sorts by name.
        ports = [
            {"name": name, "port": port} for name, port in sorted(self.spec.named_ports().items())
        ]
        meta = object_meta(
            self.pod_name(index), self.job.namespace, merge(self._app_labels(), labels)
        )
        return manifest(
            "v1", "Service", meta, spec={"clusterIP": "None", "selector": labels, "ports": ports}
        )

    def build(self) -> list[dict[str, Any]]:
        out = []
        for index in range(self.spec.replicas):
            out.append(self.create_pod_with_index(index))
            out.append(self.create_service_with_index(index))
        return out


def custom_resource(job: TFJob, ctx: BuildContext) -> dict[str, Any]:
    """The defaulted TFJob custom resource, for clusters that run the training operator (GPUs
    normalised as in native mode)."""
    defaulted = job.defaulted()
    spec = defaulted.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for replica in spec["tfReplicaSpecs"].values():
        pod_spec = replica["template"]["spec"] = replica["template"].get("spec") or {}
        normalize_pod_gpus(pod_spec, ctx.settings.gpu_resource)
        apply_pod_security(pod_spec, ctx.settings.pod_security)
    labels = merge(app_labels("tfjob", job.name), job.metadata.labels)
    meta = object_meta(job.name, job.namespace, labels, job.metadata.annotations)
    return manifest(TFJob.API_VERSION, TFJob.KIND, meta, spec=spec)


@builder(TFJob)
def build_tfjob(job: TFJob, mode: str, ctx: BuildContext) -> list[dict[str, Any]]:
    """Native mode: the operator's pods and services. Operator mode: the TFJob custom resource
    (the training operator owns its CRD)."""
    if mode == "operator":
        return [custom_resource(job, ctx)]
    return TFTrainingJob(job, ctx).build()
