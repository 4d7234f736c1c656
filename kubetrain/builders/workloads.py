"""What runs one replica of a Kubeflow job in native mode, under a controller Kubernetes (or the
JobSet controller) already runs: the training operator's per-replica semantics mapped onto a
``batch/v1`` Job, and one ``jobset.x-k8s.io/v1alpha2`` JobSet holding a job's Jobs.

The operator (training-operator v1.9, ``pkg/controller.v1/common/pod.go`` ``ReconcilePods`` and
``job.go`` ``ReconcileJobs``) recreates a failed pod under restart policy OnFailure, Always and
ExitCode (ExitCode only for exit codes of 128 and above: ``IsRetryableExitCode``), fails the job
on the first failed pod under Never or on a non-retryable exit code, and fails it when restarts
pass ``runPolicy.backoffLimit`` or the job outlives ``activeDeadlineSeconds``. A Job per replica
index does each of these for its own index:

* restart policy OnFailure: the pod's (the kubelet restarts the container in place; the Job
  controller replaces a pod that is evicted or lost); Always: OnFailure, the closest a Job
  allows (a Job's pods may not restart after succeeding); Never and ExitCode: Never;
* ExitCode: a ``podFailurePolicy`` failing the Job when the default container exits with 1-127
  and retrying any other failure (the operator reads that container's exit code only);
* ``backoffLimit``: ``runPolicy.backoffLimit`` for the restart policies the operator retries
  (none given: no limit, as the operator, written as the Job API's largest value), 0 under Never
  (the operator never retries a Never pod);
* ``activeDeadlineSeconds``: the Job's, counted from the Job's start and covering every retry;
* ``suspend``: the Job's (a JobSet's in jobset mode); ``ttlSecondsAfterFinished``: the Job's in
  Pulumi mode (render mode refuses it: GitOps would re-create a deleted Job, re-running it);
* ``podReplacementPolicy: Failed`` where the cluster serves it: a replacement pod starts only
  once the old one has stopped, as the operator, which can create a pod of the same name only
  then (one pod per replica index at a time; with podFailurePolicy the API server demands it).

Fields are written only from the Kubernetes minor version whose default feature gates serve them
(:mod:`kubetrain.kube.features`). Everything the JobSet webhook and CRD would default is written
out (render output is validated before any webhook sees it): see :func:`job_set`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..kube.features import enabled_by_default, rule_requires_pod_conditions
from ..models.jobset import JOBSET_API_VERSION
from ..models.workload import Workload
from .lifecycle import SKIP_AWAIT
from .meta import manifest, object_meta

__all__ = [
    "JOBSET_API_VERSION",
    "NON_RETRYABLE_EXIT_CODES",
    "NO_BACKOFF_LIMIT",
    "IndexRun",
    "exit_code_failure_policy",
    "index_job",
    "job_set",
    "pod_restart_policy",
]

#: The Job API's largest backoffLimit (int32): the operator's "no limit" (backoffLimit unset).
NO_BACKOFF_LIMIT = 2_147_483_647
#: Exit codes the operator does not retry under ExitCode (train.IsRetryableExitCode: >= 128 is
#: retryable; 0 is success).
NON_RETRYABLE_EXIT_CODES: tuple[int, ...] = tuple(range(1, 128))

Version = tuple[int, int]
Manifest = dict[str, Any]


@dataclass(frozen=True)
class IndexRun:
    """How the training operator runs one replica index, in the terms of its run policy."""

    #: The replica's restart policy as the job gives it: Always, OnFailure, Never or ExitCode.
    restart_policy: str
    #: The container whose exit code ExitCode reads (the kind's default container).
    container: str
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
    suspend: bool = False
    #: Written only in Pulumi mode (see the module docstring).
    ttl_seconds_after_finished: int | None = None


def pod_restart_policy(restart_policy: str, workload: Workload) -> str:
    """The pod's restart policy for the operator's: ExitCode is Never (the operator or the Job's
    podFailurePolicy decides on a retry, setRestartPolicy); under a Job, Always is OnFailure,
    since a Job's pods may only be OnFailure or Never."""
    if restart_policy == "ExitCode":
        return "Never"
    if restart_policy == "Always" and workload.in_jobs:
        return "OnFailure"
    return restart_policy


def exit_code_failure_policy(container: str, version: Version) -> dict[str, Any]:
    """The podFailurePolicy of ExitCode: a pod the cluster disrupted (preempted, evicted, its
    node drained: condition ``DisruptionTarget``) is replaced without counting against
    backoffLimit, as the operator never counts a replaced pod (``core.PastBackoffLimit`` sums
    the restart counts of running pods only); otherwise fail the Job when ``container`` exits
    with a code the operator does not retry, and retry every other failure against
    backoffLimit. The Job API allows a podFailurePolicy only under restartPolicy Never, which
    ExitCode is on the pod."""
    disrupted = {
        "action": "Ignore",
        "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}],
    }
    rule: dict[str, Any] = {
        "action": "FailJob",
        "onExitCodes": {
            "containerName": container,
            "operator": "In",
            "values": list(NON_RETRYABLE_EXIT_CODES),
        },
    }
    if rule_requires_pod_conditions(version):
        rule["onPodConditions"] = []
    return {"rules": [disrupted, rule]}


def job_spec(template: Mapping[str, Any], run: IndexRun, version: Version) -> dict[str, Any]:
    """The spec of the Job that runs one replica index with pod ``template`` (whose restart
    policy :func:`pod_restart_policy` has set)."""
    never = run.restart_policy == "Never"
    spec: dict[str, Any] = {
        "completionMode": "NonIndexed",
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 0 if never else _backoff_limit(run),
        "activeDeadlineSeconds": run.active_deadline_seconds,
        "template": dict(template),
    }
    if run.restart_policy == "ExitCode":
        spec["podFailurePolicy"] = exit_code_failure_policy(run.container, version)
    if enabled_by_default("JobPodReplacementPolicy", version):
        spec["podReplacementPolicy"] = "Failed"
    return spec


def _backoff_limit(run: IndexRun) -> int:
    return NO_BACKOFF_LIMIT if run.backoff_limit is None else run.backoff_limit


def index_job(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    template: Mapping[str, Any],
    run: IndexRun,
    version: Version,
) -> Manifest:
    """The ``batch/v1`` Job running one replica index: named as the operator's pod, labelled as
    it, its pod given the operator's pod name as hostname (the pod's own name gets a random
    suffix; the replica's DNS name, its headless Service, is unchanged)."""
    template = {**template, "spec": {**template["spec"], "hostname": name}}
    spec = job_spec(template, run, version)
    spec["suspend"] = True if run.suspend else None
    spec["ttlSecondsAfterFinished"] = run.ttl_seconds_after_finished
    # A training Job runs until the training ends: Pulumi would otherwise wait for it to
    # complete before `pulumi up` returns (render writes it too, so both agree).
    meta = object_meta(name, namespace, labels, {SKIP_AWAIT: "true"})
    return manifest("batch/v1", "Job", meta, spec=spec)


def job_set(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    jobs: Sequence[tuple[str, Manifest]],
    success: Sequence[str],
    success_operator: str = "All",
    suspend: bool = False,
    ttl_seconds_after_finished: int | None = None,
) -> Manifest:
    """One JobSet holding ``jobs`` (replicatedJob name, the index's Job from :func:`index_job`),
    one replicatedJob each, so every pod keeps its Job's hostname and labels.

    * success: when every replicatedJob in ``success`` has completed (the operator's leader);
    * failure: the first Job that fails (its own retries spent) fails the JobSet
      (``maxRestarts: 0``: the operator fails a job, never restarts it whole), and the JobSet
      controller then deletes the Jobs still running, as it does once it has succeeded;
    * DNS: ``enableDNSHostnames: false``: the JobSet controller's hostnames
      (``<jobset>-<replicatedJob>-<jobIndex>-<podIndex>.<subdomain>``) need Indexed Jobs, whose
      controller overwrites the pod's hostname, and would change every host in TF_CONFIG,
      MASTER_ADDR and torch's rendezvous; the per-index headless Services keep them;
    * defaults written out, as the JobSet webhook (``pkg/webhooks/jobset_webhook.go``
      ``Default``, v0.9) and the CRD would set them: ``startupPolicy`` AnyOrder, ``network``
      ``publishNotReadyAddresses: true``, ``failurePolicy.restartStrategy`` Recreate, each
      replicatedJob's ``groupName`` default and ``replicas`` 1; completion mode and the pod's
      restart policy are the Jobs' own.
    """
    replicated = []
    for rjob, job in jobs:
        # The JobSet controller gives every child Job the JobSet's suspend (constructJob).
        job_spec = {
            k: v for k, v in job["spec"].items() if k not in ("suspend", "ttlSecondsAfterFinished")
        }
        labels_of_job = dict(job["metadata"].get("labels") or {})
        replicated.append(
            {
                "name": rjob,
                "groupName": "default",
                "replicas": 1,
                "template": {"metadata": {"labels": labels_of_job}, "spec": job_spec},
            }
        )
    spec: dict[str, Any] = {
        "replicatedJobs": replicated,
        "successPolicy": {"operator": success_operator, "targetReplicatedJobs": list(success)},
        "failurePolicy": {"maxRestarts": 0, "restartStrategy": "Recreate"},
        "network": {"enableDNSHostnames": False, "publishNotReadyAddresses": True},
        "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
        "suspend": True if suspend else None,
        "ttlSecondsAfterFinished": ttl_seconds_after_finished,
    }
    # Like its Jobs, the JobSet runs until the training ends: no await setting makes Pulumi wait
    # for that.
    meta = object_meta(name, namespace, labels, {**annotations, SKIP_AWAIT: "true"})
    return manifest(JOBSET_API_VERSION, "JobSet", meta, spec=spec)
