"""Argument types of the TFJob and TFReplicaSet components: a ``kubeflow.org/v1`` TFJob.

The run policy is every Kubeflow job's (:mod:`components._kubeflow_args`). The fields mirror
:mod:`kubetrain.models.tfjob` (snake_case here, camelCase in the schema and in
job documents), so a TFJob manifest's ``metadata`` and ``spec`` can be passed as they are.
Validation is the spec's, not these types': they only shape the schema. They live in a module
of their own because both components need them. Docstrings reach the schema verbatim (see
:mod:`components._args`).
"""

from typing import Any, NotRequired, TypedDict

from ._args import JobMetadataArgs, SettingsArgs
from ._kubeflow_args import RunPolicyArgs, SchedulingPolicyArgs

__all__ = [
    "RunPolicyArgs",
    "SchedulingPolicyArgs",
    "TFJobArgs",
    "TFJobSpecArgs",
    "TFReplicaSpecArgs",
]


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
