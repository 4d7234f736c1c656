"""Kueue at load time: the queues and priority classes jobs name exist, ClusterQueue quotas are
quantities Kueue can count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...kube.quantity import parse_quantity
from ..errors import Problem
from ..stack import CONFIG_NAMESPACE, StackSettings
from .loaded import LoadedJob, LoadedManifest

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"


def workload_priority_classes(
    manifests: Sequence[LoadedManifest], settings: StackSettings
) -> set[str]:
    """The WorkloadPriorityClasses a job may name: the stack's, and those it declares
    (``kubetrain:external.workloadPriorityClasses``)."""
    return {
        str(m.obj["metadata"]["name"])
        for m in manifests
        if m.obj.get("kind") == "WorkloadPriorityClass"
        and str(m.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    } | set(settings.external.workload_priority_classes)


def unknown_priority_class(name: str, what: str) -> str:
    """Why naming WorkloadPriorityClass ``name`` that does not exist stops ``what``: Kueue's
    jobframework (v0.19.2 ``ExtractPriority``) gives a job its Workload only once
    ``GetPriorityFromWorkloadPriorityClass`` finds the class; until then ``prepareWorkload``
    fails and no Workload exists, so the job is never admitted."""
    return (
        f"WorkloadPriorityClass {name} is neither among the stack's manifests nor declared in "
        f"{CONFIG_NAMESPACE}:external.workloadPriorityClasses: Kueue creates no Workload for "
        f"{what} until it exists, so the job would wait for ever (add the "
        "WorkloadPriorityClass, or declare it)"
    )


def queue_problems(
    jobs: Sequence[LoadedJob], manifests: Sequence[LoadedManifest], settings: StackSettings
) -> list[Problem]:
    """A job naming a Kueue queue names one the stack delivers (a LocalQueue among its
    manifests) or declares (``kubetrain:external.localQueues``): Kueue never admits a job
    whose LocalQueue does not exist, so it would wait for ever."""
    queues = {
        (str(m.obj["metadata"].get("namespace") or ""), str(m.obj["metadata"]["name"]))
        for m in manifests
        if m.obj.get("kind") == "LocalQueue"
        and str(m.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    }
    for entry in settings.external.local_queues:
        namespace, _, name = entry.rpartition("/")
        queues.add((namespace or settings.namespace, name))
    priorities = workload_priority_classes(manifests, settings)
    problems = []
    for loaded in jobs:
        job = loaded.document
        priority = job.metadata.labels.get(PRIORITY_CLASS_LABEL)
        if priority is not None and priority not in priorities:
            problems.append(
                loaded.source.problem(
                    ("metadata", "labels", PRIORITY_CLASS_LABEL),
                    unknown_priority_class(priority, "the job"),
                )
            )
        queue = job.metadata.labels.get(QUEUE_LABEL)
        if queue is None or (job.namespace, queue) in queues:
            continue
        problems.append(
            loaded.source.problem(
                ("metadata", "labels", QUEUE_LABEL),
                f"LocalQueue {job.namespace}/{queue} is neither among the stack's manifests nor "
                f"declared in {CONFIG_NAMESPACE}:external.localQueues: Kueue would hold the job "
                "for ever (add the LocalQueue, or declare it)",
            )
        )
    problems += _quota_problems(manifests)
    return problems


#: The quantities of a ClusterQueue's resource groups (``spec.resourceGroups[].flavors[]
#: .resources[]``) that Kueue counts.
_QUOTA_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _quota_problems(manifests: Sequence[LoadedManifest]) -> list[Problem]:
    """Every quota of a delivered ClusterQueue passes :func:`cluster_queue_quota_problems`."""
    problems = []
    for m in manifests:
        if m.obj.get("kind") != "ClusterQueue" or not str(m.obj.get("apiVersion", "")).startswith(
            "kueue.x-k8s.io/"
        ):
            continue
        problems += [
            m.source.problem(path, msg) for path, msg in cluster_queue_quota_problems(m.obj)
        ]
    return problems


def cluster_queue_quota_problems(obj: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """(field path, message) of each quota of a ClusterQueue (``spec.resourceGroups[].flavors[]
    .resources[]``) that is no quantity within kubetrain's bound (docs/limits.md: Kueue counts
    quota in int64 milli-units, so ``1e5000`` is no quota it can give, and ``kubetrain plan``
    would count it as none), or that is negative, which Kueue's ClusterQueue webhook refuses
    (v0.19.2 ``pkg/webhooks/clusterqueue_webhook.go``, ``validateResourceQuantity``). A value
    of the wrong type is the schema's to refuse."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    spec = obj.get("spec")
    groups = spec.get("resourceGroups") if isinstance(spec, dict) else None
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        flavors = group.get("flavors") if isinstance(group, dict) else None
        for f, flavor in enumerate(flavors if isinstance(flavors, list) else []):
            resources = flavor.get("resources") if isinstance(flavor, dict) else None
            for r, resource in enumerate(resources if isinstance(resources, list) else []):
                for key in _QUOTA_FIELDS:
                    value = resource.get(key) if isinstance(resource, dict) else None
                    if value is None or isinstance(value, bool):
                        continue
                    path = ("spec", "resourceGroups", g, "flavors", f, "resources", r, key)
                    try:
                        quantity = parse_quantity(value)
                    except ValueError as exc:
                        problems.append((path, str(exc)))
                        continue
                    if quantity.value < 0:
                        problems.append(
                            (
                                path,
                                f"Invalid value: {str(value)!r}: must be greater than or "
                                "equal to 0",
                            )
                        )
    return problems
