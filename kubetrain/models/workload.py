"""What runs a Kubeflow job's replicas in native mode: one typed value, decided once.

``kubetrain:nativeWorkload`` (and the ``kubetrain.io/native-workload`` annotation of one job)
names one of three workloads (docs/native-workloads.md). Everything that varies with it asks the
:class:`Workload` value :meth:`kubetrain.models.kubeflow.KubeflowJob.workload` returns, instead
of comparing the setting's name: whether a ``batch/v1`` Job wraps each replica's pod, whether one
JobSet holds the whole job, and what the objects are called in messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["JOB", "JOBSET", "POD", "WORKLOADS", "Workload", "WorkloadName"]

WorkloadName = Literal["pod", "job", "jobset"]


@dataclass(frozen=True)
class Workload:
    """One native workload and what it means for the objects a replica job renders."""

    name: WorkloadName
    #: A ``batch/v1`` Job runs each replica index's pod (its restart, backoff, deadline and
    #: suspend semantics replace the operator's); ``False``: a bare Pod as the operator creates.
    in_jobs: bool
    #: One JobSet holds every index's Job (the job succeeds and fails as one).
    in_job_set: bool
    #: What the rendered objects that run the replicas are called, for messages.
    noun: str

    @property
    def recreates_pods(self) -> bool:
        """A controller replaces a replica's pod that fails or disappears."""
        return self.in_jobs

    def __str__(self) -> str:
        return self.name


POD = Workload("pod", in_jobs=False, in_job_set=False, noun="bare Pods")
JOB = Workload("job", in_jobs=True, in_job_set=False, noun="Jobs")
JOBSET = Workload("jobset", in_jobs=True, in_job_set=True, noun="JobSet")

#: Every workload by the name the stack file and the annotation give.
WORKLOADS: dict[str, Workload] = {w.name: w for w in (POD, JOB, JOBSET)}
