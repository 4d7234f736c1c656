"""Argument types of the TFJob and TFReplicaSet components: a ``kubeflow.org/v1`` TFJob.

The fields mirror :mod:`kubetrain.models.tfjob` (snake_case here, camelCase in the schema and in
job documents), so a TFJob manifest's ``metadata`` and ``spec`` can be passed as they are.
Validation is the spec's, not these types': they only shape the schema. They live in a module
of their own because both components need them. Docstrings reach the schema verbatim (see
:mod:`components._args`).
"""

from typing import Any, NotRequired, TypedDict

from ._args import JobMetadataArgs, SettingsArgs

__all__ = [
    "RunPolicyArgs",
    "SchedulingPolicyArgs",
    "TFJobArgs",
    "TFJobSpecArgs",
    "TFReplicaSpecArgs",
]


class SchedulingPolicyArgs(TypedDict, total=False):
    """Gang-scheduling settings of a TFJob (runPolicy.schedulingPolicy)."""

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
    """Run-time policies of a TFJob (spec.runPolicy)."""

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
    """Controller that reconciles the job. Default: the training operator."""


class TFReplicaSpecArgs(TypedDict):
    """One replica type of a TFJob."""

    replicas: NotRequired[int]
    """Number of pods of this type. Default: 1."""
    template: dict[str, Any]
    """Pod template (a Kubernetes PodTemplateSpec) with a container named tensorflow."""
    restart_policy: NotRequired[str]
    (
        "Restart policy of the pods: Always, OnFailure, Never, or ExitCode (Never on the pod, "
        "retried by exit code). Default: Never."
    )


class TFJobSpecArgs(TypedDict):
    """The spec of a kubeflow.org/v1 TFJob."""

    tf_replica_specs: dict[str, TFReplicaSpecArgs]
    """Replica type (Chief, Master, PS, Worker or Evaluator, any case) -> its spec."""
    run_policy: NotRequired[RunPolicyArgs]
    """Run-time policies. Default: none."""
    success_policy: NotRequired[str]
    (
        'When the job succeeds: "" (when the chief, master or worker 0 does) or AllWorkers. '
        'Default: "".'
    )
    enable_dynamic_worker: NotRequired[bool]
    """Give each worker a sparse TF_CONFIG (itself and the parameter servers). Default: false."""


class TFJobArgs(TypedDict):
    """A Kubeflow TFJob (kubeflow.org/v1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the job."""
    spec: TFJobSpecArgs
    """The TFJob's spec, as in a kubeflow.org/v1 TFJob manifest."""
    settings: NotRequired[SettingsArgs]
    (
        "Stack-level settings (namespace default, GPU resource name, cluster domain, mode...). "
        "Default: the defaults of a stack file."
    )
