"""Argument types every Kubeflow replica-job component shares (every kubeflow.org/v1 kind): the
run and scheduling policies of :mod:`kubetrain.models.kubeflow`, under their attribute names.

Docstrings reach the schema verbatim (see :mod:`components._args`); no ``from __future__ import
annotations`` (the analyzer reads the annotations).
"""

from typing import TypedDict

__all__ = ["RunPolicyArgs", "SchedulingPolicyArgs"]


class SchedulingPolicyArgs(TypedDict, total=False):
    """Gang-scheduling settings of a Kubeflow job (runPolicy.schedulingPolicy)."""

    min_available: int
    """Pods that must be schedulable together. Default: every pod of the job."""
    queue: str
    """Scheduler queue of the PodGroup. Default: the scheduler's default queue."""
    min_resources: dict[str, str]
    (
        'Resources the PodGroup needs, as Kubernetes quantities ("8", "32Gi"). '
        "Default: the sum of the pods' requests."
    )
    priority_class: str
    """PriorityClass of the PodGroup. Default: none."""
    schedule_timeout_seconds: int
    """Seconds the scheduler waits for the gang (scheduler-plugins only). Default: its own."""


class RunPolicyArgs(TypedDict, total=False):
    """Run-time policies of a Kubeflow job (spec.runPolicy)."""

    clean_pod_policy: str
    """Pods the operator deletes when the job ends: All, Running or None. Default: None."""
    ttl_seconds_after_finished: int
    """Seconds to keep a finished job. Default: forever."""
    active_deadline_seconds: int
    """Deadline of the job in seconds. Default: none."""
    backoff_limit: int
    """Retries before the job fails. Default: the operator's."""
    scheduling_policy: SchedulingPolicyArgs
    """Gang-scheduling settings. Default: none."""
    suspend: bool
    """Create the job suspended. Default: false."""
    managed_by: str
    (
        "Controller that reconciles the job: kubeflow.org/training-operator, or "
        "kueue.x-k8s.io/multikueue (operator mode only). Default: the training operator."
    )
