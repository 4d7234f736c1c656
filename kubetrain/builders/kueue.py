"""Kueue: the queue (and priority) a job names, carried to the objects Kueue admits.

A job asks for a queue with the label ``kueue.x-k8s.io/queue-name`` (and for a
WorkloadPriorityClass with ``kueue.x-k8s.io/priority-class``) on its document, as it would on
the custom resource (Kueue v0.19.2 ``pkg/controller/constants``: ``QueueLabel``,
``WorkloadPriorityClassLabel``). Kueue admits whole objects of the kinds it integrates, and only
when the label is on that object, so each native workload carries it where Kueue looks:

* operator mode and ``jobset``: the custom resource or the JobSet carries every label of the
  job already (one Workload for the whole job);
* ``job``: each replica's ``batch/v1`` Job (the batch/job integration): one Workload per Job, so
  Kueue may admit some replicas and not others (the builder warns);
* a Learner's StatefulSet (the StatefulSet integration); a TrainingJob's trainer Job (its
  ReplicaSets are not queued: Kueue integrates none, and the builder warns);
* ``pod``: each bare Pod, as one pod group (the pod integration,
  ``pkg/controller/jobs/pod/constants``: the ``kueue.x-k8s.io/pod-group-name`` label and the
  ``kueue.x-k8s.io/pod-group-total-count`` annotation, both required by its webhook's
  ``validatePodGroupMetadata``): one Workload for the job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kube import catalog

__all__ = [
    "GROUP_NAME_LABEL",
    "GROUP_TOTAL_COUNT_ANNOTATION",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_LABEL",
    "kueue_labels",
    "label_jobs",
    "label_pod_group",
    "leave_suspend_to_kueue",
]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
GROUP_NAME_LABEL = "kueue.x-k8s.io/pod-group-name"
GROUP_TOTAL_COUNT_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"

Manifest = dict[str, Any]


def kueue_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The Kueue labels among a job's labels (empty when it names no queue)."""
    if QUEUE_LABEL not in labels:
        return {}
    return {k: labels[k] for k in (QUEUE_LABEL, PRIORITY_CLASS_LABEL) if k in labels}


def label_jobs(objs: list[Manifest], labels: Mapping[str, str]) -> None:
    """Put ``labels`` on every ``batch/v1`` Job of ``objs`` (Kueue's batch/job integration)."""
    for obj in objs:
        if labels and catalog.of(obj).key == catalog.BATCH_JOB:
            meta = obj["metadata"]
            meta["labels"] = {**(meta.get("labels") or {}), **labels}


def label_pod_group(pods: list[Manifest], group: str, labels: Mapping[str, str]) -> None:
    """Make ``pods`` one Kueue pod group ``group`` in the queue ``labels`` name."""
    if not labels or not pods:
        return
    for pod in pods:
        meta = pod["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), **labels, GROUP_NAME_LABEL: group}
        meta["annotations"] = {
            **(meta.get("annotations") or {}),
            GROUP_TOTAL_COUNT_ANNOTATION: str(len(pods)),
        }


def leave_suspend_to_kueue(obj: Manifest) -> Manifest:
    """``obj`` without ``suspend`` when Kueue queues it (it carries the queue label): Kueue's
    webhook creates it suspended and admission resumes it (Kueue v0.19.2,
    ``pkg/controller/jobframework/defaults.go``, ``ApplyDefaultForSuspend``;
    ``reconciler.go``, ``startJob``), so a value in Git that Flux, Argo CD (self-heal) or
    Pulumi put back would undo an admission or resume a job Kueue holds. Not written, the
    field is Kueue's alone (no engine owns or compares a field it does not send)."""
    # Where the kind keeps suspend (batch/v1 Job, JobSet, TrainJob: spec; the Kubeflow kinds
    # and MPIJob: spec.runPolicy): its row's Kueue integration.
    kueue = catalog.of(obj).kueue
    at = kueue.at if kueue is not None else None
    if at is None or QUEUE_LABEL not in ((obj.get("metadata") or {}).get("labels") or {}):
        return obj
    node: Any = obj
    for key in at:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop("suspend", None)
    return obj
