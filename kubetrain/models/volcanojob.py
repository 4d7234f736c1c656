"""Volcano's ``batch.volcano.sh/v1alpha1`` Job: tasks of pods gang-scheduled as one PodGroup.

Fidelity target: volcano-sh/volcano v1.15.1 (its newest release), the job controller
(``pkg/controllers/job``: ``job_controller_actions.go`` syncJob and createOrUpdatePodGroup,
``job_controller_util.go`` createJobPod and calcPGMinResources, the ``svc``, ``env`` and ``ssh``
plugins) and the admission of a Job: the mutating webhook's defaults
(``pkg/webhooks/admission/jobs/mutate/mutate_job.go`` createPatch), its validating webhook
(``validate/admit_job.go`` validateJobCreate, ``validate/util.go`` validatePolicies) and the
checks v1.15 moved into a ValidatingAdmissionPolicy
(``installer/helm/chart/volcano/policy/jobs-validating.yaml``). The types are
``volcano.sh/apis`` ``pkg/apis/batch/v1alpha1/job.go``.

This is not Kubernetes' ``batch/v1`` Job: its catalogue row is its own
(:mod:`kubetrain.kube.catalog.volcano`).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from ..kube.names import DNS1123_LABEL, DNS1123_SUBDOMAIN
from .base import (
    DerivedName,
    Int32,
    JobDocument,
    K8sType,
    Mode,
    OutputEstimate,
    Replicas,
    Strict,
    plain_copy,
    upstream,
)
from .kinds import declare
from .resources import gpu_problems

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "DEFAULT_QUEUE",
    "NATIVE_PLUGINS",
    "PLUGINS",
    "VolcanoJob",
    "VolcanoJobSpec",
    "VolcanoTask",
]

Problems = list[tuple[tuple[str | int, ...], str]]

#: The job controller's plugins (pkg/controllers/job/plugins/factory.go, v1.15.1).
PLUGINS = ("env", "svc", "ssh", "tensorflow", "mpi", "pytorch", "ray", "hcclrank")
#: The plugins native mode runs as the controller does (the others need the controller).
NATIVE_PLUGINS = ("env", "svc", "ssh")
#: mutate_job.go: DefaultQueue, the scheduler name, DefaultMaxRetry and a task's default.
DEFAULT_QUEUE = "default"
DEFAULT_SCHEDULER = "volcano"
DEFAULT_MAX_RETRY = 3
#: batch v1alpha1 DefaultTaskSpec: an unnamed task is ``default<index>``.
DEFAULT_TASK_PREFIX = "default"
#: validate/util.go policyEventMap and policyActionMap: what a policy may say.
POLICY_EVENTS = (
    "*",
    "PodFailed",
    "PodEvicted",
    "PodPending",
    "Unknown",
    "TaskCompleted",
    "TaskFailed",
    "JobUpdated",
)
POLICY_ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")

PodTemplateSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.core.v1.PodTemplateSpec", "Pod template of every pod of this task"),
]
PersistentVolumeClaimSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "Claim the controller creates"),
]


class LifecyclePolicy(Strict):
    """What the controller does on an event or exit code (``policies[]``)."""

    action: str | None = Field(
        default=None, description="AbortJob, RestartJob, RestartTask, RestartPod, ..."
    )
    event: str | None = Field(default=None, description="One event (PodFailed, PodEvicted, ...).")
    events: list[str] | None = Field(default=None, description="Several events.")
    exit_code: Int32 | None = Field(
        default=None, alias="exitCode", description="An exit code of a container (not 0)."
    )
    timeout: str | None = Field(
        default=None,
        pattern=_DURATION.pattern,
        description="Delay before the action (a Go duration: 30s, 5m).",
    )


class DependsOn(Strict):
    """Tasks whose pods must be ready before this task's pods are created."""

    name: list[str] = Field(description="The tasks depended on.")
    iteration: Literal["any", "all"] | None = Field(
        default=None, description="any or all of them. Default: all."
    )


class PartitionPolicy(Strict):
    """How a task's pods split into gangs of their own (v1.15)."""

    total_partitions: Int32 = Field(alias="totalPartitions", ge=1, description="Partitions.")
    partition_size: Int32 = Field(alias="partitionSize", ge=1, description="Pods a partition.")
    min_partitions: Int32 | None = Field(
        default=None, alias="minPartitions", ge=0, description="Partitions that must run."
    )
    network_topology: dict[str, Any] | None = Field(
        default=None, alias="networkTopology", description="Topology of one partition."
    )


class VolcanoTask(Strict):
    """One task: ``replicas`` pods of one template (``spec.tasks[]``)."""

    # The CRD requires nothing of a task (the webhook wants its template's containers).
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    name: str | None = Field(
        default=None,
        description="Task name, a DNS-1123 label; its pods are <job>-<task>-<index>. Default: "
        "default<index in tasks>.",
    )
    replicas: Replicas = Field(default=0, ge=0, description="Pods of this task. Default: 0.")
    min_available: Int32 | None = Field(
        default=None,
        alias="minAvailable",
        ge=0,
        description="Pods of this task the gang needs (the PodGroup's minTaskMember). "
        "Default: replicas.",
    )
    template: PodTemplateSpec = Field(description="Pod template of the task's pods.")
    policies: list[LifecyclePolicy] = Field(
        default_factory=list, description="The task's lifecycle policies (operator mode)."
    )
    topology_policy: Literal["none", "best-effort", "restricted", "single-numa-node"] | None = (
        Field(
            default=None,
            alias="topologyPolicy",
            description="NUMA topology policy, written on each pod as volcano.sh/numa-topology-"
            "policy.",
        )
    )
    max_retry: Int32 | None = Field(
        default=None, alias="maxRetry", ge=0, description="Retries of the task. Default: 3."
    )
    depends_on: DependsOn | None = Field(
        default=None, alias="dependsOn", description="Tasks to wait for (operator mode)."
    )
    partition_policy: PartitionPolicy | None = Field(
        default=None, alias="partitionPolicy", description="Partitions (operator mode)."
    )

    def containers(self) -> list[dict[str, Any]]:
        containers = (self.template.get("spec") or {}).get("containers") or []
        return [c for c in containers if isinstance(c, dict)]


class VolumeSpec(Strict):
    """A claim mounted in every container (``spec.volumes[]``)."""

    mount_path: str = Field(alias="mountPath", description="Where every container mounts it.")
    volume_claim_name: str | None = Field(
        default=None, alias="volumeClaimName", description="An existing claim."
    )
    volume_claim: PersistentVolumeClaimSpec | None = Field(
        default=None, alias="volumeClaim", description="A claim the controller creates."
    )


class VolcanoJobSpec(Strict):
    """``spec`` of a ``batch.volcano.sh/v1alpha1`` Job."""

    # The CRD requires no task (the webhook refuses a Job without one).
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    scheduler_name: str | None = Field(
        default=None, alias="schedulerName", description="Scheduler of the pods. Default: volcano."
    )
    min_available: Int32 | None = Field(
        default=None,
        alias="minAvailable",
        ge=0,
        description="Pods the gang needs to start (the PodGroup's minMember). Default: the sum "
        "of the tasks' minAvailable.",
    )
    volumes: list[VolumeSpec] = Field(
        default_factory=list, description="Claims every container mounts (operator mode)."
    )
    tasks: list[VolcanoTask] = Field(
        min_length=1,
        description="The tasks (at least one).",
        json_schema_extra=upstream(minItems=None),
    )
    policies: list[LifecyclePolicy] = Field(
        default_factory=list, description="The job's lifecycle policies (operator mode)."
    )
    plugins: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Job plugins and their arguments: env, svc and ssh (native and operator "
        "mode); tensorflow, mpi, pytorch, ray, hcclrank (operator mode).",
    )
    running_estimate: str | None = Field(
        default=None,
        alias="runningEstimate",
        pattern=_DURATION.pattern,
        description="How long the job is expected to run (a Go duration).",
    )
    queue: str | None = Field(default=None, description="Volcano queue. Default: default.")
    max_retry: Int32 | None = Field(
        default=None, alias="maxRetry", ge=0, description="Retries of the job. Default: 3."
    )
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None,
        alias="ttlSecondsAfterFinished",
        ge=0,
        description="Seconds before a finished job is deleted (operator mode).",
    )
    priority_class_name: str | None = Field(
        default=None, alias="priorityClassName", description="PriorityClass of the job's pods."
    )
    min_success: Int32 | None = Field(
        default=None,
        alias="minSuccess",
        ge=1,
        description="Pods that must succeed for the job to (operator mode).",
    )
    network_topology: dict[str, Any] | None = Field(
        default=None,
        alias="networkTopology",
        description="Network topology constraints of the gang (operator mode).",
    )


@declare("Volcano Job (batch.volcano.sh/v1alpha1, Volcano v1.15): tasks gang-scheduled as one")
class VolcanoJob(JobDocument):
    """A Volcano Job: its tasks' pods, one PodGroup, and what its plugins add."""

    API_VERSION: ClassVar[str] = "batch.volcano.sh/v1alpha1"
    KIND: ClassVar[str] = "Job"
    #: Whose admission :meth:`admission_problems` is (``kubetrain validate`` reports its
    #: refusals of a rendered Job as ``webhook:volcano``).
    WEBHOOK: ClassVar[str] = "volcano"
    GANG_READS_PRIORITIES: ClassVar[bool] = True  # calcPGMinResources

    api_version: Literal["batch.volcano.sh/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["Job"]
    spec: VolcanoJobSpec

    # --- the webhook's defaults (mutate_job.go createPatch) ---------------------------------

    def task_names(self) -> list[str]:
        """mutateSpec: each task's name, ``default<index>`` when it has none."""
        return [t.name or f"{DEFAULT_TASK_PREFIX}{i}" for i, t in enumerate(self.spec.tasks)]

    def min_task_member(self, task: VolcanoTask) -> int:
        """getMinTaskMember (and mutateSpec): minAvailable, else the partitions', else replicas."""
        if task.min_available is not None:
            return task.min_available
        policy = task.partition_policy
        if policy is not None and policy.min_partitions:
            return policy.min_partitions * policy.partition_size
        return task.replicas

    def min_available(self) -> int:
        """patchDefaultMinAvailable: the job's minAvailable, else the tasks' minimums summed
        (a minAvailable of 0 is defaulted too)."""
        if self.spec.min_available:
            return self.spec.min_available
        return sum(self.min_task_member(t) for t in self.spec.tasks)

    def queue(self) -> str:
        return self.spec.queue or DEFAULT_QUEUE

    def scheduler_name(self) -> str:
        return self.spec.scheduler_name or DEFAULT_SCHEDULER

    def plugins(self) -> dict[str, list[str]]:
        """patchDefaultPlugins: the frameworks' plugins bring svc, mpi brings ssh."""
        plugins = {k: list(v) for k, v in self.spec.plugins.items()}
        if plugins.keys() & {"tensorflow", "mpi", "pytorch", "ray"}:
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
        return plugins

    def defaulted_document(self) -> dict[str, Any]:
        """The Job as the mutating webhook stores it (createPatch)."""
        spec: dict[str, Any] = self.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
        spec["queue"] = self.queue()
        spec["schedulerName"] = self.scheduler_name()
        spec["maxRetry"] = self.spec.max_retry or DEFAULT_MAX_RETRY
        for i, (task, name) in enumerate(zip(self.spec.tasks, self.task_names(), strict=True)):
            out = spec["tasks"][i]
            out["name"] = name
            out["template"] = plain_copy(task.template)
            pod = out["template"].get("spec")
            if isinstance(pod, dict) and pod.get("hostNetwork") and not pod.get("dnsPolicy"):
                pod["dnsPolicy"] = "ClusterFirstWithHostNet"
            out["minAvailable"] = self.min_task_member(task)
            out["maxRetry"] = task.max_retry or DEFAULT_MAX_RETRY
            if not out.get("policies"):
                out.pop("policies", None)
        spec["minAvailable"] = self.min_available()
        if self.spec.plugins:
            spec["plugins"] = self.plugins()
        else:
            spec.pop("plugins", None)
        for key in ("volumes", "policies"):
            if not spec.get(key):
                spec.pop(key, None)
        return {"apiVersion": self.API_VERSION, "kind": self.KIND, "spec": spec}

    # --- admission (validateJobCreate, the jobs-validating policy) --------------------------

    def semantic_problems(self, settings: StackSettings) -> Problems:
        """Volcano's admission (:meth:`admission_problems`), and kubetrain's GPU rules."""
        problems = self.admission_problems()
        for i, task in enumerate(self.spec.tasks):
            for c, container in enumerate(task.containers()):
                where = ("spec", "tasks", i, "template", "spec", "containers", c, "resources")
                for path, message in gpu_problems(
                    container.get("resources"), settings.gpu_resource
                ):
                    problems.append(((*where, *path), message))
        return problems

    def admission_problems(self) -> Problems:
        """What Volcano refuses of a new Job: its validating webhook (validateJobCreate) and its
        jobs-validating ValidatingAdmissionPolicy; load time words them for the stack file,
        ``kubetrain validate`` reports them as the webhook's (validate/webhooks.py)."""
        problems: Problems = []
        spec = self.spec
        seen: dict[str, int] = {}
        total = 0
        for i, (task, name) in enumerate(zip(spec.tasks, self.task_names(), strict=True)):
            base: tuple[str | int, ...] = ("spec", "tasks", i)
            total += task.replicas
            if task.name is not None and (bad := DNS1123_LABEL.check(task.name)):
                problems.append(((*base, "name"), bad))
            if name in seen:
                problems.append(
                    ((*base, "name"), f"duplicated task name {name!r} (tasks[{seen[name]}])")
                )
            seen.setdefault(name, i)
            if task.min_available is not None and task.min_available > task.replicas:
                problems.append(
                    (
                        (*base, "minAvailable"),
                        f"'minAvailable' {task.min_available} is greater than 'replicas' "
                        f"{task.replicas} in task {name}",
                    )
                )
            problems += policy_problems(task.policies, (*base, "policies"))
            if not task.containers():
                problems.append(((*base, "template", "spec", "containers"), "needs a container"))
        if spec.min_available is not None and spec.min_available > total:
            problems.append(
                (
                    ("spec", "minAvailable"),
                    f"job 'minAvailable' {spec.min_available} should not be greater than total "
                    f"replicas in tasks ({total})",
                )
            )
        if total == 0:
            problems.append((("spec", "tasks"), "the job has no pod: every task has replicas 0"))
        problems += policy_problems(spec.policies, ("spec", "policies"))
        for name in spec.plugins:
            if name not in PLUGINS:
                problems.append(
                    (
                        ("spec", "plugins", name),
                        f"unable to find job plugin {name!r} (Volcano's are {', '.join(PLUGINS)})",
                    )
                )
        mount_paths: dict[str, int] = {}
        for i, volume in enumerate(spec.volumes):
            at: tuple[str | int, ...] = ("spec", "volumes", i)
            if volume.mount_path in mount_paths:
                problems.append(
                    (
                        (*at, "mountPath"),
                        f"duplicated mountPath {volume.mount_path} (volumes["
                        f"{mount_paths[volume.mount_path]}])",
                    )
                )
            mount_paths.setdefault(volume.mount_path, i)
            if (volume.volume_claim is None) == (volume.volume_claim_name is None):
                problems.append(
                    (at, "either volumeClaim or volumeClaimName must be specified, not both")
                )
        problems += self._dependency_problems()
        return problems

    def _dependency_problems(self) -> Problems:
        """validateJobCreate's topoSort: the tasks' dependsOn form a DAG of known tasks."""
        names = self.task_names()
        graph: dict[str, list[str]] = {n: [] for n in names}
        problems: Problems = []
        for i, task in enumerate(self.spec.tasks):
            if task.depends_on is None:
                continue
            for j, dep in enumerate(task.depends_on.name):
                if dep not in graph:
                    problems.append(
                        (("spec", "tasks", i, "dependsOn", "name", j), f"no task named {dep!r}")
                    )
                else:
                    graph[names[i]].append(dep)
        state: dict[str, int] = {}

        def cyclic(node: str) -> bool:
            state[node] = 1
            for dep in graph[node]:
                if state.get(dep) == 1 or (dep not in state and cyclic(dep)):
                    return True
            state[node] = 2
            return False

        if not problems and any(n not in state and cyclic(n) for n in names):
            problems.append(
                (
                    ("spec", "tasks"),
                    "job has dependencies between tasks, but doesn't form a directed acyclic "
                    "graph (DAG)",
                )
            )
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        # validateK8sPodNameLength: every pod name is a DNS-1123 label (the svc plugin makes
        # it the pod's hostname); the PodGroup, Service, ConfigMap and NetworkPolicy are
        # named after the job.
        out = [DerivedName(self.name, "Service and PodGroup name", DNS1123_LABEL)]
        for task, name in zip(self.spec.tasks, self.task_names(), strict=True):
            if task.replicas:
                last = f"{self.name}-{name}-{task.replicas - 1}"
                out.append(DerivedName(last, "pod name and hostname", DNS1123_LABEL))
        out.append(DerivedName(f"{self.name}-svc", "hosts ConfigMap name", DNS1123_SUBDOMAIN))
        return out

    def output_estimate(self, settings: StackSettings, mode: Mode) -> OutputEstimate:
        """A pod per replica (with the plugins' env and volumes), the hosts ConfigMap listing
        every pod's host twice, the ssh config once more; operator mode writes the Job only."""
        templates = [len(json.dumps(t.template)) for t in self.spec.tasks]
        largest_task = max(range(len(self.spec.tasks)), key=lambda i: self.spec.tasks[i].replicas)
        path: tuple[str | int, ...] = ("spec", "tasks", largest_task, "replicas")
        if mode == Mode.OPERATOR:
            size = 2048 + sum(templates)
            return OutputEstimate(1, size, size, path)
        replicas = sum(t.replicas for t in self.spec.tasks)
        # svc.GenerateHosts: each task's hosts twice (a line each, indented in YAML; and
        # comma-separated), <job>-<task>-<index>.<subdomain> at their longest.
        hosts = 1000
        for task, name in zip(self.spec.tasks, self.task_names(), strict=True):
            pod = task.template.get("spec") or {}
            written = pod.get("subdomain")
            sub = written if isinstance(written, str) and written else self.name
            host = len(self.name) + len(name) + len(str(task.replicas)) + 3 + len(sub)
            hosts += 200 + 2 * task.replicas * (host + 6)
        pods = [3000 + 2 * size + 200 * len(self.spec.tasks) for size in templates]
        total = sum(t.replicas * pods[i] for i, t in enumerate(self.spec.tasks)) + 2 * hosts
        return OutputEstimate(replicas + 5, total, max([*pods, hosts]), path)


def policy_problems(policies: list[LifecyclePolicy], base: tuple[str | int, ...]) -> Problems:
    """validatePolicies (validate/util.go): an event or an exit code, never both; known events
    and actions; no event twice and no exit code twice; ``*`` alone."""
    problems: Problems = []
    events: set[str] = set()
    codes: set[int] = set()
    for i, policy in enumerate(policies):
        where = (*base, i)
        listed = [e for e in dict.fromkeys([*(policy.events or []), policy.event]) if e]
        if listed and policy.exit_code is not None:
            problems.append((where, "must not specify event and exitCode simultaneously"))
            continue
        if not listed and policy.exit_code is None:
            problems.append((where, "either event or exitCode should be specified"))
            continue
        for event in listed:
            if event not in POLICY_EVENTS:
                problems.append(
                    (
                        (*where, "events" if policy.events else "event"),
                        f"invalid policy event {event!r}; valid events are "
                        f"{', '.join(POLICY_EVENTS)}",
                    )
                )
            elif event in events:
                problems.append((where, f"duplicate event {event} across different policies"))
            events.add(event)
        if listed and policy.action not in POLICY_ACTIONS:
            problems.append(
                (
                    (*where, "action"),
                    f"invalid policy action {policy.action!r}; valid actions are "
                    f"{', '.join(POLICY_ACTIONS)}",
                )
            )
        if policy.exit_code is not None:
            if policy.exit_code == 0:
                problems.append(((*where, "exitCode"), "0 is not a valid error code"))
            elif policy.exit_code in codes:
                problems.append(((*where, "exitCode"), f"duplicate exitCode {policy.exit_code}"))
            codes.add(policy.exit_code)
    if "*" in events and len(events) > 1:
        problems.append((base, "if there's * here, no other policy event should be here"))
    return problems
