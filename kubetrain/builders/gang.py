"""Gang scheduling for any job kind: a PodGroup named after the job, and pods that join it.

Fidelity target: the training-operator v1.9 gang-scheduling code (``SyncPodGroup`` and
``DecoratePodTemplateSpec``), which kubetrain applies to every multi-pod job kind, not only TFJob.
A builder hands its finished manifests to :func:`with_gang_scheduling`::

    return with_gang_scheduling(objs, GangJob(job.name, job.namespace, labels), ctx.settings)

and gets them back with the pods (or pod templates) decorated and the PodGroup appended, or
unchanged when gang scheduling does not apply. It applies when the stack sets
``kubetrain:gangScheduler`` and the job has more than one pod, or when the job asks for it itself
(a TFJob's ``runPolicy.schedulingPolicy``: Volcano unless the stack names another scheduler).

* ``volcano``: ``scheduling.volcano.sh/v1beta1`` PodGroup (minMember, queue ``default`` unless
  given, priorityClassName, minResources); pods get ``schedulerName: volcano`` and the
  ``scheduling.k8s.io/group-name`` and ``volcano.sh/task-spec`` annotations.
* ``scheduler-plugins``: ``scheduling.x-k8s.io/v1alpha1`` PodGroup (minMember, minResources,
  scheduleTimeoutSeconds); pods get ``schedulerName: scheduler-plugins-scheduler`` and the
  ``scheduling.x-k8s.io/pod-group`` label.

A pod template that already names a scheduler keeps it, as with the operator (``validate``'s
``gang-scheduling`` rule then reports the pod, since it would never join its gang).

``minResources`` (when not given) sums the requests of the pods the gang needs, as each operator
picks them. The training operator (``CalcPGMinResources``) takes the first ``minMember`` pods of
its replica types ordered by priority, but its reconcilers hand it the lister of an informer
they never start (v1.9.3 ``NewReconciler``), so every type's priority is 0 and the order is Go's
map order, at random: kubetrain keeps the job's own order (for TFJob: Chief, Master, PS, Worker,
Evaluator). The MPI Operator (``calPGMinResource``) takes the launcher and ``minMember - 1``
workers, the type of lower PriorityClass value being the one cut, and Volcano's job controller
its tasks of higher value first (:mod:`.volcanojob`); kubetrain's own gangs take the first
``minMember`` pods in output order. A PriorityClass's value is known when the stack delivers it
(``kubetrain:manifests``) or the API server makes it (``system-cluster-critical``,
``system-node-critical``); any other name counts as 0, as the operators count a class their
lister does not find. For the training operator's kinds a container's limits count only when
it gives no requests at all (its ``AddResourceList``); for the MPI Operator's and kubetrain's own
gangs each resource falls back to the container's limit when it has no request (what the API
server's defaulting gives the scheduler). The MPI Operator gives Volcano pods no
``volcano.sh/task-spec``, and its PodGroup the launcher's PriorityClass (else the workers')
when the job's schedulingPolicy names none (``calculatePriorityClassName``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..kube import catalog
from ..kube.apiserver.policy import SYSTEM_PRIORITY_CLASSES
from ..kube.catalog import PodTemplate
from ..kube.quantity import Quantity, canonical_quantity, format_quantity, parse_quantity
from ..models.stack import StackSettings
from .meta import manifest, object_meta

__all__ = [
    "GROUP_NAME_ANNOTATION",
    "POD_GROUP_API_VERSIONS",
    "POD_GROUP_LABEL",
    "SCHEDULER_NAMES",
    "TASK_SPEC_ANNOTATION",
    "GangJob",
    "GangPolicy",
    "GangScheduler",
    "ReplicaPods",
    "gang_scheduler",
    "is_gang_member",
    "mpi_min_resources",
    "pod_count",
    "pod_group",
    "pod_requests",
    "pod_templates",
    "priority_classes",
    "priority_of",
    "with_gang_scheduling",
]

GangScheduler = Literal["volcano", "scheduler-plugins"]

#: The scheduler the pods of a gang ask for.
SCHEDULER_NAMES: dict[GangScheduler, str] = {
    "volcano": "volcano",
    "scheduler-plugins": "scheduler-plugins-scheduler",
}
#: apiVersion of each scheduler's PodGroup.
POD_GROUP_API_VERSIONS: dict[GangScheduler, str] = {
    "volcano": "scheduling.volcano.sh/v1beta1",
    "scheduler-plugins": "scheduling.x-k8s.io/v1alpha1",
}
#: The (group, kind) of each scheduler's PodGroup.
POD_GROUP_KEYS = frozenset(
    catalog.GroupKind.parse(api_version, "PodGroup")
    for api_version in POD_GROUP_API_VERSIONS.values()
)
#: Volcano: the PodGroup a pod belongs to, and the task (replica type) it runs.
GROUP_NAME_ANNOTATION = "scheduling.k8s.io/group-name"
TASK_SPEC_ANNOTATION = "volcano.sh/task-spec"
#: scheduler-plugins: the PodGroup a pod belongs to.
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
#: Volcano queue used when the job names none (the operator's default).
DEFAULT_QUEUE = "default"
#: The label whose value names a pod's task (replica type); else the object's name is used.
TASK_LABEL = "app.kubernetes.io/component"
STATEFUL_SET = ("apps", "StatefulSet")
PRIORITY_CLASS = catalog.GroupKind("scheduling.k8s.io", "PriorityClass")


def priority_classes(manifests: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The value of each PriorityClass among ``manifests``, by name (one of the wrong shape,
    which validate refuses, counts as none): with the API server's own
    (:data:`SYSTEM_PRIORITY_CLASSES`), what the operators' PriorityClass listers see."""
    out: dict[str, int] = {}
    for obj in manifests:
        if catalog.GroupKind.of(obj) != PRIORITY_CLASS:
            continue
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        value = obj.get("value")
        if isinstance(name, str) and type(value) is int:
            out.setdefault(name, value)
    return out


@dataclass(frozen=True)
class GangPolicy:
    """What a job says about its gang (a TFJob's ``runPolicy.schedulingPolicy``)."""

    min_available: int | None = None
    queue: str | None = None
    priority_class: str | None = None
    min_resources: Mapping[str, int | str] | None = None
    schedule_timeout_seconds: int | None = None


#: Whose gang code a job's gang follows: the training operator's (v1.9.3
#: ``pkg/controller.v1/control`` ``VolcanoControl.DecoratePodTemplateSpec`` and
#: ``pkg/controller.v1/common`` ``CalcPGMinResources``), the MPI Operator's (v0.8.2
#: ``pkg/controller/podgroup.go`` ``VolcanoCtrl.decoratePodTemplateSpec`` and
#: ``calPGMinResource``), or kubetrain's own for kinds whose operator had no gangs.
GangCode = Literal["kubetrain", "training-operator", "mpi-operator"]


@dataclass(frozen=True)
class GangJob:
    """The job a PodGroup is named after, and whose gang code it follows."""

    name: str
    namespace: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    code: GangCode = "kubetrain"
    #: A Volcano PodGroup's PriorityClass where the job's policy names none (the MPI Operator's
    #: ``calculatePriorityClassName``: the launcher's pods', else the workers').
    priority_class: str | None = None
    #: The job's own minResources for a gang of ``minMember`` pods, where its operator does not
    #: sum the first pods (the MPI Operator: :func:`mpi_min_resources`); ``None`` from it: the
    #: PodGroup has no minResources.
    min_resources_of: Callable[[int], dict[str, str] | None] | None = field(
        default=None, compare=False, hash=False
    )

    @property
    def task_spec(self) -> bool:
        """Whether Volcano pods get the ``volcano.sh/task-spec`` annotation (the MPI Operator
        writes only the group name)."""
        return self.code != "mpi-operator"

    @property
    def limits_per_container(self) -> bool:
        """Whether a limit counts only for a container that gives no requests at all (the
        training operator's ``AddResourceList``), rather than per resource."""
        return self.code == "training-operator"

    @property
    def empty_min_resources(self) -> bool:
        """Whether a Volcano PodGroup says ``minResources: {}`` when nothing is requested (both
        operators set a pointer to an empty list; kubetrain's own gangs leave it out)."""
        return self.code != "kubetrain"


def gang_scheduler(settings: StackSettings, requested: bool = False) -> GangScheduler | None:
    """The gang scheduler of a job: the stack's, or Volcano when only the job asks for one."""
    if settings.gang_scheduler != "none":
        return settings.gang_scheduler
    return "volcano" if requested else None


def pod_templates(obj: dict[str, Any]) -> list[PodTemplate]:
    """The pods a gang counts and decorates of a manifest: those of a kind whose pods run
    without an operator (its row's :attr:`kubetrain.kube.catalog.Kind.gang`: a Pod, the
    replicated workloads, a Job's ``parallelism`` pods, a JobSet's Jobs), each the mapping
    holding ``metadata`` and ``spec`` of the pod, so callers can change it."""
    row = catalog.of(obj)
    return row.pod_templates(obj) if row.gang else []


def pod_count(objs: list[dict[str, Any]]) -> int:
    """How many pods the manifests make at once."""
    return sum(t.count for obj in objs for t in pod_templates(obj))


def _mapping(parent: Any, key: str) -> Mapping[str, Any]:
    value = parent.get(key) if isinstance(parent, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def pod_requests(
    pod_spec: Mapping[str, Any], limits_per_container: bool = False
) -> dict[str, Quantity]:
    """Requests of one pod's containers, per resource; a limit stands in for a missing request
    (as the API server defaults requests from limits), or with ``limits_per_container`` only
    for a container that gives no requests at all (training-operator v1.9.3
    pkg/controller.v1/common/util.go ``AddResourceList``: ``if req != nil``)."""
    total: dict[str, Quantity] = {}
    containers = pod_spec.get("containers")
    for container in containers if isinstance(containers, list) else ():
        # What is not of its type (a file of rendered/ edited by hand, which plan reads)
        # requests nothing.
        resources = _mapping(container, "resources")
        requests, limits = _mapping(resources, "requests"), _mapping(resources, "limits")
        if limits_per_container and isinstance(resources.get("requests"), Mapping):
            limits = {}
        for name in sorted(set(requests) | set(limits)):
            q = parse_quantity(requests[name] if name in requests else limits[name])
            total[name] = total[name] + q if name in total else q
    return total


def priority_of(pod_spec: Mapping[str, Any], priorities: Mapping[str, int]) -> int:
    """The value of a pod's PriorityClass as the operators' listers give it (``priorities``,
    else the API server's own classes): 0 for none, or for a class the cluster does not hold."""
    name = pod_spec.get("priorityClassName")
    if not isinstance(name, str):
        return 0
    return priorities.get(name, SYSTEM_PRIORITY_CLASSES.get(name, 0))


def min_resources(
    objs: list[dict[str, Any]], members: int, limits_per_container: bool = False
) -> dict[str, str]:
    """Summed requests of the first ``members`` pods in output order, canonical quantities by
    resource name."""
    total: dict[str, Quantity] = {}
    left = members
    for obj in objs:
        for found in pod_templates(obj):
            take = min(found.count, left)
            if take <= 0:
                continue
            left -= take
            spec = found.template.get("spec") or {}
            for name, q in pod_requests(spec, limits_per_container).items():
                scaled = Quantity(q.value * take, q.format)
                total[name] = total[name] + scaled if name in total else scaled
    return {name: format_quantity(q) for name, q in sorted(total.items())}


@dataclass(frozen=True)
class ReplicaPods:
    """One replica type of a job as its operator's gang code reads it."""

    rtype: str
    pod_spec: Mapping[str, Any]
    replicas: int


def mpi_min_resources(
    types: list[ReplicaPods], members: int, priorities: Mapping[str, int]
) -> dict[str, str] | None:
    """An MPIJob's minResources (MPI Operator v0.8.2 ``pkg/controller/podgroup.go``
    ``calPGMinResource``, after ``calculatePGMinResources``): none for a gang of no pods;
    else every pod of the launcher and worker types, highest priority first, except that when
    they outnumber ``members`` the second type (the workers, where the priorities are equal)
    counts ``members - 1`` pods, a type counted 0 times still naming its resources (its
    ``addResources``: each resource a container requests, else its limit)."""
    if members == 0 or not types:
        return None
    order = sorted(types, key=lambda t: -priority_of(t.pod_spec, priorities))
    counts = [t.replicas for t in order]
    if len(order) > 1 and counts[0] + counts[1] > members:
        same = priority_of(order[0].pod_spec, priorities) == priority_of(
            order[1].pod_spec, priorities
        )
        cut = [t.rtype for t in order].index("Worker") if same else 1
        counts[cut] = members - 1
    total: dict[str, Quantity] = {}
    for rtype, count in zip(order, counts, strict=True):
        for name, q in pod_requests(rtype.pod_spec).items():
            scaled = Quantity(q.value * count, q.format)
            total[name] = total[name] + scaled if name in total else scaled
    return {name: format_quantity(q) for name, q in sorted(total.items())}


def pod_group(
    scheduler: GangScheduler,
    job: GangJob,
    objs: list[dict[str, Any]],
    policy: GangPolicy | None = None,
) -> dict[str, Any]:
    """The PodGroup of ``job`` whose pods are in ``objs``."""
    policy = policy or GangPolicy()
    members = policy.min_available or pod_count(objs)
    resources: dict[str, str] | None
    if policy.min_resources is not None:
        resources = {k: canonical_quantity(v) for k, v in sorted(policy.min_resources.items())}
    elif job.min_resources_of is not None:
        resources = job.min_resources_of(members)
    else:
        resources = min_resources(objs, members, job.limits_per_container)
    volcano_empty = scheduler == "volcano" and job.empty_min_resources
    empty: dict[str, str] | None = {} if volcano_empty else None
    spec: dict[str, Any] = {
        "minMember": members,
        "minResources": None if resources is None else resources or empty,
    }
    if scheduler == "volcano":
        spec["queue"] = policy.queue or DEFAULT_QUEUE
        spec["priorityClassName"] = policy.priority_class or job.priority_class or None
    else:
        spec["scheduleTimeoutSeconds"] = policy.schedule_timeout_seconds
    # The operator copies the job's annotations onto the PodGroup.
    meta = object_meta(job.name, job.namespace, job.labels, job.annotations)
    return manifest(POD_GROUP_API_VERSIONS[scheduler], "PodGroup", meta, spec=spec)


def _task(obj: dict[str, Any], template: dict[str, Any]) -> str:
    labels = (template.get("metadata") or {}).get("labels") or {}
    return str(labels.get(TASK_LABEL) or obj["metadata"]["name"])


def is_gang_member(template: dict[str, Any]) -> bool:
    """Whether a pod (or pod template) belongs to a PodGroup (see :func:`join_gang`)."""
    meta = template.get("metadata") or {}
    return GROUP_NAME_ANNOTATION in (meta.get("annotations") or {}) or POD_GROUP_LABEL in (
        meta.get("labels") or {}
    )


def join_gang(
    template: dict[str, Any], scheduler: GangScheduler, group: str, task: str | None
) -> None:
    """Make one pod (or pod template) a member of PodGroup ``group``, in place (Volcano's
    ``volcano.sh/task-spec`` only when ``task`` is given)."""
    spec = template.setdefault("spec", {})
    spec.setdefault("schedulerName", SCHEDULER_NAMES[scheduler])
    meta = template.setdefault("metadata", {})
    if scheduler == "volcano":
        annotations = meta.setdefault("annotations", {})
        annotations[GROUP_NAME_ANNOTATION] = group
        if task is not None:
            annotations[TASK_SPEC_ANNOTATION] = task
    else:
        meta.setdefault("labels", {})[POD_GROUP_LABEL] = group


def with_gang_scheduling(
    objs: list[dict[str, Any]],
    job: GangJob,
    settings: StackSettings,
    policy: GangPolicy | None = None,
) -> list[dict[str, Any]]:
    """``objs`` with their pods in a gang and the PodGroup appended, when gang scheduling applies
    (see the module docstring); ``objs`` unchanged otherwise. Changes the pods in place."""
    scheduler = gang_scheduler(settings, requested=policy is not None)
    if scheduler is None or (policy is None and pod_count(objs) < 2):
        return objs
    for obj in objs:
        for found in pod_templates(obj):
            task = _task(obj, found.template) if job.task_spec else None
            join_gang(found.template, scheduler, job.name, task)
        if catalog.of(obj).key == STATEFUL_SET:
            # OrderedReady (the default) creates pod i+1 only once pod i is ready, but no pod of
            # a gang starts before all of them exist: the gang would wait forever.
            obj["spec"]["podManagementPolicy"] = "Parallel"
    return [*objs, pod_group(scheduler, job, objs, policy)]


def is_pod_group(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is a scheduler's PodGroup (what :func:`with_gang_scheduling` appends)."""
    return catalog.GroupKind.of(obj) in POD_GROUP_KEYS
