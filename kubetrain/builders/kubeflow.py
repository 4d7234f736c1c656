"""Expansion of every Kubeflow replica job (the kubeflow.org/v1 kinds): the training operator's
common job controller, with per-kind hooks.

Fidelity target: training-operator v1.9 ``pkg/controller.v1/common`` (``ReconcileJobs``,
``ReconcilePods`` / ``createNewPod``, ``ReconcileServices`` / ``CreateNewService``,
``SyncPodGroup``) and the labels of ``GenLabels``. For each replica type a :class:`ReplicaType`
expansion; for each index the object wrapping that replica's pod (:func:`index_workload`) and a
same-named headless Service ``<job>-<type>-<index>``. A kind subclasses :class:`ReplicaJob`
with its operator name and the hooks the operator calls per kind: :meth:`ReplicaJob.is_master`
(``IsMasterRole``), :meth:`ReplicaJob.set_cluster_spec` (``SetClusterSpec``: env vars, init
containers) and :meth:`ReplicaJob.success` (which pods' success is the job's, after its
``UpdateJobStatus``). The default container and port are the replica spec's
(:class:`kubetrain.models.kubeflow.ReplicaSpec`).

What wraps each replica's pod is the job's native workload (``kubetrain:nativeWorkload``, the
``kubetrain.io/native-workload`` annotation; docs/native-workloads.md): ``pod``, a bare Pod as
the operator creates, which nothing recreates; ``job``, a ``batch/v1`` Job per index that maps
the operator's restart, backoff, deadline and suspend semantics (:mod:`.workloads`); ``jobset``,
those Jobs in one JobSet that succeeds and fails as the operator's job does. The pod itself, its
env (TF_CONFIG, MASTER_ADDR, RANK...), hostname and Service are the same in all three.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from ..kube import catalog
from ..models.base import NATIVE_WORKLOAD_ANNOTATION, Mode
from ..models.kubeflow import KubeflowJob, ReplicaSpec
from ..models.workload import JOB, POD, Workload
from .context import BuildContext, Target
from .gang import (
    SCHEDULER_NAMES,
    GangJob,
    GangPolicy,
    GangScheduler,
    gang_scheduler,
    with_gang_scheduling,
)
from .kueue import QUEUE_LABEL, kueue_labels, label_jobs, label_pod_group
from .meta import (
    app_labels,
    manifest,
    merge,
    normalize_pod_gpus,
    object_meta,
    plain_copy,
    pod_gpu_alias_warnings,
    to_selector,
)
from .names import ReplicaNames
from .registry import BuildProblem, Origins, locator
from .security import apply_pod_security
from .workloads import IndexRun, index_job, job_set, pod_restart_policy

__all__ = [
    "JOB_NAME_LABEL",
    "JOB_ROLE_LABEL",
    "OPERATOR_NAME_LABEL",
    "REPLICA_INDEX_LABEL",
    "REPLICA_TYPE_LABEL",
    "ReplicaJob",
    "ReplicaType",
    "custom_resource",
    "index_workload",
    "replica_job_builder",
    "to_selector",
]

OPERATOR_NAME_LABEL = "training.kubeflow.org/operator-name"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
JOB_ROLE_LABEL = "training.kubeflow.org/job-role"

Manifest = dict[str, Any]


def index_workload(
    name: str,
    namespace: str,
    template: dict[str, Any],
    workload: Workload,
    run: IndexRun,
    version: tuple[int, int],
) -> Manifest:
    """The object that runs the pod of one replica index, from its pod ``template``
    (``metadata`` and ``spec``): under workload ``pod`` a bare Pod, as the operator creates;
    under ``job`` and ``jobset`` the Job that runs it as ``run`` says (a JobSet then holds the
    job's Jobs, :meth:`ReplicaJob.build`). The one place that decides what wraps a replica's
    pod."""
    meta = template.get("metadata") or {}
    if not workload.in_jobs:
        return manifest(
            "v1",
            "Pod",
            object_meta(name, namespace, meta.get("labels"), meta.get("annotations")),
            spec=template["spec"],
        )
    return index_job(name, namespace, meta.get("labels") or {}, template, run, version)


J = TypeVar("J", bound=KubeflowJob)


class ReplicaJob(Generic[J]):
    """One Kubeflow replica job being expanded (the seed's ``TrainingJob``): the defaulted job, its
    replica types and the hooks of its kind."""

    #: ``training.kubeflow.org/operator-name`` of the kind's controller.
    OPERATOR_NAME: ClassVar[str]

    def __init__(self, job: J, ctx: BuildContext) -> None:
        self.job: J = job.defaulted()
        self.written: J = job  # as the document gives it, for warnings about fields it sets
        self.ctx = ctx
        self.name = job.name
        self.namespace = job.namespace
        self.app_name = job.KIND.lower()
        #: Every pod, Service and host name of the job (:mod:`.names`).
        self.names = ReplicaNames(job.name, job.namespace, ctx.settings.cluster_domain)
        # In operator mode (where the expansion only names things, for the Pulumi outputs) the
        # operator's own bare pods run the replicas.
        self.workload: Workload = job.workload(ctx.settings) or POD
        self.replicas = [
            self.replica_type(rtype, spec) for rtype, spec in self.job.replica_specs.items()
        ]

    def replica_type(self, rtype: str, spec: ReplicaSpec) -> ReplicaType:
        """The expansion of one replica type (a kind may return its own subclass)."""
        return ReplicaType(self, rtype, spec)

    # --- the kind's hooks -------------------------------------------------------------------

    def is_master(self, rtype: str, index: int) -> bool:
        """Whether the pod gets ``job-role: master`` (the kind's ``IsMasterRole``)."""
        raise NotImplementedError

    #: Whether the kind's cluster spec is :meth:`pod_env` appended to every container (the
    #: default :meth:`set_cluster_spec`; TFJob writes TF_CONFIG instead).
    ENV_ON_EVERY_CONTAINER: ClassVar[bool] = True

    def pod_env(self, rtype: str, index: int) -> list[dict[str, Any]]:
        """The env the kind's ``setPodEnv`` appends to every container of one pod of replica
        type ``rtype`` (lower case), in its order."""
        raise NotImplementedError

    def set_cluster_spec(self, pod_spec: dict[str, Any], rtype: str, index: int) -> None:
        """Configure one pod of replica type ``rtype`` (lower case) for the cluster, in place
        (the kind's ``SetClusterSpec``): by default, as most kinds' ``setPodEnv`` does,
        :meth:`pod_env` appended to every container."""
        env = self.pod_env(rtype, index)
        ours = {e["name"] for e in env}
        for container in pod_spec.get("containers") or []:
            # The operator appends its own after the template's (training-operator v1.9.3
            # pkg/controller.v1/pytorch/envvar.go setPodEnv, and the other kinds' alike): the
            # pod then holds a name twice, and the last definition wins (the kubelet's
            # makeEnvironmentVariables).
            # Native mode leaves the hidden one out (warn_rewrites says so): a list with a
            # name twice cannot be server-side applied, as the GitOps engines and Pulumi do.
            kept = [e for e in container.get("env") or [] if e.get("name") not in ours]
            container["env"] = [*kept, *copy.deepcopy(env)]

    #: Replica types whose pods' success is the job's when the job has one (the kind's
    #: ``UpdateJobStatus``: "when master is succeed, the job is finished").
    LEADER_TYPES: ClassVar[tuple[str, ...]] = ("Master",)

    def success(self) -> tuple[str, list[tuple[str, int]]]:
        """When the job has succeeded, as a JobSet's successPolicy: ``All`` or ``Any`` of the
        (replica type, index) pods listed (the kind's ``UpdateJobStatus``). By default every pod
        of the :attr:`LEADER_TYPES` the job has, else every Worker (else every pod)."""
        for rtype in self.LEADER_TYPES:
            for rs in self.replicas:
                if rs.rtype == rtype:
                    return "All", [(rtype, i) for i in range(rs.spec.replicas)]
        workers = [
            (rs.rtype, i)
            for rs in self.replicas
            if rs.rtype == "Worker"
            for i in range(rs.spec.replicas)
        ]
        every = [(rs.rtype, i) for rs in self.replicas for i in range(rs.spec.replicas)]
        return "All", workers or every

    # --- shared -----------------------------------------------------------------------------

    def labels(self) -> dict[str, str]:
        """Labels shared by every pod of the job (the operator's GenLabels)."""
        return {OPERATOR_NAME_LABEL: self.OPERATOR_NAME, JOB_NAME_LABEL: self.name}

    def service_host(self, rtype: str, index: int) -> str:
        """DNS name of one replica's headless service: ``<service>.<namespace>.svc``, plus
        ``.<clusterDomain>`` when the stack sets one (:meth:`.names.ReplicaNames.fqdn`)."""
        return self.names.fqdn(rtype, index)

    def gang_policy(self) -> GangPolicy | None:
        """``runPolicy.schedulingPolicy`` as the shared gang-scheduling code takes it."""
        policy = self.job.run_policy.scheduling_policy
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

    def workload_warnings(self) -> list[tuple[tuple[str | int, ...], str]]:
        """(field path, message) for what the job asks that its native workload cannot do, where
        it matters (docs/native-workloads.md has the whole table)."""
        workload, policy = self.workload, self.written.run_policy
        if not workload.in_jobs:
            return []
        out: list[tuple[tuple[str | int, ...], str]] = []
        key = self.job.REPLICA_SPECS_KEY
        for rs in self.replicas:
            if rs.spec.restart_policy == "Always":
                out.append(
                    (
                        ("spec", key, rs.rtype, "restartPolicy"),
                        f"Always runs as OnFailure under a {workload} (a Job's pods may not "
                        "restart after succeeding): a replica that exits 0 completes",
                    )
                )
            for path, entry in _env_entries(rs.spec.template):
                field_ref = (entry.get("valueFrom") or {}).get("fieldRef") or {}
                if field_ref.get("fieldPath") == "metadata.name":
                    out.append(
                        (
                            ("spec", key, rs.rtype, "template", *path),
                            f"under a {workload} the pod is named after its Job plus a random "
                            "suffix, not <job>-<type>-<index> as the operator names it; its "
                            "hostname is still that name (read HOSTNAME instead)",
                        )
                    )
        if workload is JOB:
            if policy.clean_pod_policy in ("Running", "All"):
                out.append(
                    (
                        ("spec", "runPolicy", "cleanPodPolicy"),
                        "has no effect under nativeWorkload job: no Job knows when the whole job "
                        "ends; use nativeWorkload jobset, which stops the Jobs still running",
                    )
                )
            if policy.active_deadline_seconds is None and any(
                rs.type_label == "ps" for rs in self.replicas
            ):
                out.append(
                    (
                        ("spec", key, "PS"),
                        "parameter servers never exit, and under nativeWorkload job nothing "
                        "stops their Jobs when the training ends (the operator's cleanPodPolicy, "
                        "a JobSet): set runPolicy.activeDeadlineSeconds, or use nativeWorkload "
                        "jobset",
                    )
                )
        elif policy.clean_pod_policy in ("None", "All"):
            out.append(
                (
                    ("spec", "runPolicy", "cleanPodPolicy"),
                    f"{policy.clean_pod_policy} is not what a JobSet does: when it finishes it "
                    "deletes the Jobs still running and keeps finished ones (cleanPodPolicy "
                    "Running)",
                )
            )
        return out

    def index_run(self, spec: ReplicaSpec) -> IndexRun:
        """How the operator runs each index of a replica type (its run policy), for the Job
        that runs it in job and jobset mode."""
        policy = self.job.run_policy
        ttl = policy.ttl_seconds_after_finished
        if ttl is not None and self.workload.in_jobs and self.ctx.target == Target.RENDER:
            raise BuildProblem(
                ("spec", "runPolicy", "ttlSecondsAfterFinished"),
                f"cannot be rendered for GitOps under nativeWorkload {self.workload}: Flux or "
                f"Argo CD re-creates the {self.workload.noun} "
                "the TTL deletes, which runs the training again; leave it out (delete finished "
                "jobs by removing them from the stack) or deploy with Pulumi",
            )
        return IndexRun(
            restart_policy=spec.restart_policy,
            container=spec.DEFAULT_CONTAINER,
            backoff_limit=policy.backoff_limit,
            active_deadline_seconds=policy.active_deadline_seconds,
            suspend=bool(policy.suspend),
            ttl_seconds_after_finished=ttl,
        )

    def job_set(self, objs: list[Manifest]) -> list[Manifest]:
        """``objs`` with the index Jobs folded into one JobSet named after the job, one
        replicatedJob ``<type>-<index>`` each; success as :meth:`success` says."""
        jobs = {o["metadata"]["name"]: o for o in objs if catalog.of(o).key == catalog.BATCH_JOB}
        rjobs = [
            (self.names.replicated_job(rs.rtype, i), jobs[rs.pod_name(i)])
            for rs in self.replicas
            for i in range(rs.spec.replicas)
        ]
        operator, leaders = self.success()
        success = [self.names.replicated_job(rtype, i) for rtype, i in leaders]
        labels = merge(app_labels(self.app_name, self.name), self.job.metadata.labels)
        policy = self.job.run_policy
        jobset = job_set(
            self.name,
            self.namespace,
            labels,
            self.job.metadata.annotations,
            rjobs,
            success,
            success_operator=operator,
            suspend=bool(policy.suspend),
            ttl_seconds_after_finished=policy.ttl_seconds_after_finished,
        )
        return [*(o for o in objs if catalog.of(o).key != catalog.BATCH_JOB), jobset]

    def queue(self, objs: list[Manifest]) -> None:
        """Carry the job's Kueue queue to what Kueue admits under this workload (:mod:`.kueue`;
        a JobSet carries the job's labels already)."""
        labels = kueue_labels(self.job.metadata.labels)
        if not labels:
            return
        if not self.workload.in_jobs:
            label_pod_group(
                [o for o in objs if catalog.of(o).key == catalog.POD], self.name, labels
            )
        elif not self.workload.in_job_set:
            label_jobs(objs, labels)
            if self.job.total_replicas() > 1:
                self.ctx.warn(
                    ("metadata", "labels", QUEUE_LABEL),
                    "Kueue admits each replica's Job on its own under nativeWorkload job, so "
                    "part of the job may run while the rest waits for quota: use nativeWorkload "
                    "jobset or pod (one Workload for the whole job), or operator mode",
                )

    def warn_hidden_env(self) -> None:
        """Env a template sets that the operator's ``setPodEnv`` sets again on the same
        container (``MASTER_ADDR`` for one): the operator's comes last and wins."""
        if not self.ENV_ON_EVERY_CONTAINER:
            return
        base = ("spec", self.job.REPLICA_SPECS_KEY)
        for rs in self.replicas:
            ours = {e["name"] for e in self.pod_env(rs.rtype.lower(), 0)}
            containers = (rs.spec.template.get("spec") or {}).get("containers") or []
            for i, container in enumerate(containers):
                for j, entry in enumerate(container.get("env") or []):
                    if isinstance(entry, dict) and entry.get("name") in ours:
                        self.ctx.warn(
                            (*base, rs.rtype, "template", "spec", "containers", i, "env", j),
                            f"{entry['name']} is set by the training operator too, after the "
                            "template's, and the last definition wins: the operator's value "
                            "is what the pod reads; native mode leaves this one out",
                        )

    def warn_rewrites(self) -> None:
        """Say what native mode does not do as the document asks: a pod template's restart
        policy replaced by the replica's (setRestartPolicy), GPUs renamed to the stack's
        gpuResource; with bare pods ExitCode and the run policies only the operator carries out;
        under a Job or JobSet what :meth:`workload_warnings` names."""
        ctx, base = self.ctx, ("spec", self.job.REPLICA_SPECS_KEY)
        pods = not self.workload.in_jobs
        for rs in self.replicas:
            restart = rs.spec.restart_policy
            pod = pod_restart_policy(restart, self.workload)
            written = (rs.spec.template.get("spec") or {}).get("restartPolicy")
            if written is not None and written != pod:
                ctx.warn(
                    (*base, rs.rtype, "template", "spec", "restartPolicy"),
                    f"restartPolicy {written} of the pod template is replaced by the replica's, "
                    f"{pod} (as the training operator does): set "
                    f"spec.{base[1]}.{rs.rtype}.restartPolicy instead",
                )
            if restart == "ExitCode" and pods:
                ctx.warn(
                    (*base, rs.rtype, "restartPolicy"),
                    "ExitCode needs the training operator, which recreates pods that exit with a "
                    "retryable code (128 or more); bare pods get restartPolicy Never "
                    "(kubetrain:nativeWorkload job or jobset retry them)",
                )
        _warn_gpu_aliases(self.job, ctx)
        self.warn_hidden_env()
        run = self.written.run_policy
        if pods:
            for key, value in (
                ("cleanPodPolicy", run.clean_pod_policy),
                ("ttlSecondsAfterFinished", run.ttl_seconds_after_finished),
                ("backoffLimit", run.backoff_limit),
            ):
                if value is not None:
                    ctx.warn(
                        ("spec", "runPolicy", key),
                        f"{key} has no effect on bare pods: only the training operator (or a "
                        "Job, kubetrain:nativeWorkload job or jobset) cleans up, deletes or "
                        "retries a job's pods",
                    )
            if run.active_deadline_seconds is not None:
                ctx.warn(
                    ("spec", "runPolicy", "activeDeadlineSeconds"),
                    "applies to each bare pod (activeDeadlineSeconds of the pod); only the "
                    "training operator (or a Job) counts it from the job's start over every "
                    "retry",
                )
        for path, message in self.workload_warnings():
            ctx.warn(path, message)

    def build(self) -> list[Manifest]:
        self.warn_rewrites()
        objs = [obj for rs in self.replicas for obj in rs.build()]
        if missing := self.names.unrendered(objs):
            # Names come from one place (.names): a host no Service answers is a bug here.
            raise RuntimeError(
                f"{self.job.KIND} {self.name}: env names hosts {missing} "
                "that are no Service it renders"
            )
        self.queue(objs)
        if self.workload.in_job_set:
            objs = self.job_set(objs)
        # The operator's SyncPodGroup gives the PodGroup the job's annotations.
        gang = GangJob(
            self.name,
            self.namespace,
            app_labels(self.app_name, self.name),
            self.job.metadata.annotations,
            code="training-operator",
        )
        return with_gang_scheduling(objs, gang, self.ctx.settings, self.gang_policy())


class ReplicaType:
    """The pods and services of one replica type (the seed's ``TFReplicaSet``)."""

    def __init__(self, job: ReplicaJob[Any], rtype: str, spec: ReplicaSpec) -> None:
        self.job = job
        self.rtype = rtype
        self.type_label = rtype.lower()
        self.spec = spec
        # What every index of the type shares, made once (a copy of it per index).
        self._base_spec: dict[str, Any] | None = None
        self._shared_labels: dict[str, str] | None = None
        self._ports: list[tuple[str, int]] | None = None

    def pod_name(self, index: int) -> str:
        """``<job>-<type>-<index>``, the name of the pod and of its service
        (:meth:`.names.ReplicaNames.pod`)."""
        return self.job.names.pod(self.rtype, index)

    def labels(self) -> dict[str, str]:
        """Labels shared by every pod of this replica type."""
        if self._shared_labels is None:
            self._shared_labels = {**self.job.labels(), REPLICA_TYPE_LABEL: self.type_label}
        return dict(self._shared_labels)

    def labels_by_index(self, index: int) -> dict[str, str]:
        """Labels of the pod with ``index``; also the selector of its service."""
        return {**self.labels(), REPLICA_INDEX_LABEL: str(index)}

    def _app_labels(self) -> dict[str, str]:
        return app_labels(self.job.app_name, self.job.name, self.type_label)

    def pod_template(self, index: int) -> dict[str, Any]:
        """The pod of one index as a template (``metadata`` and ``spec``), as createNewPod
        makes it from the replica's template."""
        template = self.spec.template
        template_meta = template.get("metadata") or {}
        labels = merge(self._app_labels(), template_meta.get("labels"), self.labels_by_index(index))
        if self.job.is_master(self.rtype, index):
            labels[JOB_ROLE_LABEL] = "master"
        settings = self.job.ctx.settings
        if self._base_spec is None:
            self._base_spec = normalize_pod_gpus(
                plain_copy(template.get("spec") or {}), settings.gpu_resource
            )
        spec = plain_copy(self._base_spec)
        self.job.set_cluster_spec(spec, self.type_label, index)
        apply_pod_security(spec, settings.pod_security)
        workload = self.job.workload
        spec["restartPolicy"] = pod_restart_policy(self.spec.restart_policy, workload)
        deadline = self.job.job.run_policy.active_deadline_seconds
        if deadline is not None and not workload.in_jobs:
            # The operator fails the whole job after the deadline; bare pods get it each (a
            # Job holds it for all its pods, see .workloads).
            spec.setdefault("activeDeadlineSeconds", deadline)
        meta: dict[str, Any] = {"labels": labels}
        if template_meta.get("annotations"):
            meta["annotations"] = template_meta["annotations"]
        return {"metadata": meta, "spec": spec}

    def create_pod_with_index(self, index: int) -> Manifest:
        return index_workload(
            self.pod_name(index),
            self.job.namespace,
            self.pod_template(index),
            self.job.workload,
            self.job.index_run(self.spec),
            self.job.ctx.settings.version,
        )

    def create_service_with_index(self, index: int) -> Manifest:
        labels = self.labels_by_index(index)
        # The operator's port map iterates in random order; kubetrain sorts by name.
        if self._ports is None:
            self._ports = sorted(self.spec.named_ports().items())
        ports = [{"name": name, "port": port} for name, port in self._ports]
        meta = object_meta(
            self.job.names.service(self.rtype, index),
            self.job.namespace,
            merge(self._app_labels(), labels),
        )
        return manifest(
            "v1", "Service", meta, spec={"clusterIP": "None", "selector": labels, "ports": ports}
        )

    def build(self) -> list[Manifest]:
        out = []
        # A replica type of replicas 0 gets nothing: the operator's pod 0 and Service 0 of it
        # come and go (training-operator v1.9.3 pkg/controller.v1/common ReconcilePods and
        # ReconcileServices: the slices of pkg/core CalculatePodSliceSize and
        # CalculateServiceSliceSize are at least one long, so a reconcile finding none creates
        # index 0, and the next finds it out of range and deletes it; seen by make e2e).
        for index in range(self.spec.replicas):
            out.append(self.create_pod_with_index(index))
            out.append(self.create_service_with_index(index))
        return out


def _env_entries(template: dict[str, Any]) -> list[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """(path in the template, entry) of every env entry of every container of a pod template."""
    spec = template.get("spec") or {}
    return [
        (("spec", field, i, "env", j), entry)
        for field in ("initContainers", "containers")
        for i, container in enumerate(spec.get(field) or ())
        for j, entry in enumerate(container.get("env") or ())
    ]


def _warn_gpu_aliases(job: KubeflowJob, ctx: BuildContext) -> None:
    """GPUs written under another name than the stack's gpuResource are renamed (both modes)."""
    for rtype, replica in job.replica_specs.items():
        for path, message in pod_gpu_alias_warnings(
            replica.template.get("spec"), ctx.settings.gpu_resource
        ):
            ctx.warn(("spec", job.REPLICA_SPECS_KEY, rtype, "template", "spec", *path), message)


def custom_resource(job: KubeflowJob, ctx: BuildContext) -> Manifest:
    """The defaulted custom resource, for clusters that run the training operator (GPUs
    normalised and Pod Security applied as in native mode)."""
    _warn_gpu_aliases(job, ctx)
    if job.run_policy.ttl_seconds_after_finished is not None and ctx.target == Target.RENDER:
        # training-operator v1.9.0 pkg/controller.v1/common/job.go, CleanupJob: once the TTL
        # after completion passes, DeleteJob deletes the custom resource itself, which Git
        # still declares: Flux re-creates it at its next reconcile, Argo CD at once (selfHeal),
        # and the operator runs the training again.
        raise BuildProblem(
            ("spec", "runPolicy", "ttlSecondsAfterFinished"),
            f"cannot be rendered for GitOps in operator mode: the training operator deletes the "
            f"finished {job.KIND} after the TTL and Flux or Argo CD re-creates it from Git, "
            "which runs the training again; leave it out (delete finished jobs by removing "
            "them from the stack) or deploy with Pulumi",
        )
    defaulted = job.defaulted()
    spec = defaulted.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    for replica in spec[job.REPLICA_SPECS_KEY].values():
        pod_spec = replica["template"]["spec"] = replica["template"].get("spec") or {}
        normalize_pod_gpus(pod_spec, ctx.settings.gpu_resource)
        apply_pod_security(pod_spec, ctx.settings.pod_security)
    labels = merge(app_labels(job.KIND.lower(), job.name), job.metadata.labels)
    meta = object_meta(job.name, job.namespace, labels, job.metadata.annotations)
    return manifest(job.API_VERSION, job.KIND, meta, spec=spec)


def replica_job_builder(
    expansion: Callable[[Any, BuildContext], ReplicaJob[Any]],
) -> Callable[[Any, Mode, BuildContext], list[Manifest]]:
    """The builder of a replica-job kind: native mode, the operator's pods and services (and
    PodGroup); operator mode, the custom resource (the training operator owns its CRD)."""

    def build(job: KubeflowJob, mode: Mode, ctx: BuildContext) -> list[Manifest]:
        for rtype, spec in job.replica_specs.items():
            if spec.replicas == 0:
                # training-operator v1.9.3 creates and deletes pod 0 of the type over and over
                # (see ReplicaType.build).
                ctx.warn(
                    ("spec", job.REPLICA_SPECS_KEY, rtype, "replicas"),
                    f"is 0: training-operator v1.9.3 creates {rtype} 0 (a pod and its Service) "
                    "and deletes it on its next reconcile, over and over; kubetrain writes none "
                    f"of it: remove the {rtype} or give it replicas",
                )
        if mode == Mode.OPERATOR:
            if NATIVE_WORKLOAD_ANNOTATION in job.metadata.annotations:
                ctx.warn(
                    ("metadata", "annotations", NATIVE_WORKLOAD_ANNOTATION),
                    "has no effect in operator mode, where the training operator creates the pods",
                )
            return [custom_resource(job, ctx)]
        return expansion(job, ctx).build()

    return build


@locator(KubeflowJob)
def pod_spec_origins(job: KubeflowJob, obj: Manifest) -> Origins:
    """Where each pod spec of an object a replica job built came from: the template of the
    replica type its labels name (a Pod's spec, a Job's template, each replicatedJob's)."""

    def origin(labels: Any) -> tuple[str | int, ...] | None:
        rtype = (labels or {}).get(REPLICA_TYPE_LABEL) if isinstance(labels, dict) else None
        for written in job.replica_specs:
            if written.lower() == rtype:
                return ("spec", job.REPLICA_SPECS_KEY, written, "template", "spec")
        return None

    out: Origins = []
    kind, spec = catalog.of(obj).key, obj.get("spec") or {}
    if kind == catalog.POD and (doc := origin(obj["metadata"].get("labels"))):
        out.append((("spec",), doc))
    elif kind == catalog.BATCH_JOB and (
        doc := origin((spec["template"].get("metadata") or {}).get("labels"))
    ):
        out.append((("spec", "template", "spec"), doc))
    elif kind == catalog.JOB_SET:
        for i, rjob in enumerate(spec.get("replicatedJobs") or ()):
            template = rjob["template"]["spec"]["template"]
            if doc := origin((template.get("metadata") or {}).get("labels")):
                out.append(
                    (("spec", "replicatedJobs", i, "template", "spec", "template", "spec"), doc)
                )
    return out
