"""The JobSet kubetrain emits for a Kubeflow job under ``kubetrain:nativeWorkload: jobset``.

``jobset.x-k8s.io/v1alpha2`` JobSet, from kubernetes-sigs/jobset v0.9 (``api/jobset/v1alpha2/
jobset_types.go``; its CRD is ``config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml``). The
models describe the fields kubetrain writes, required, typed and bounded as the upstream CRD does
(tests/test_apiserver_corpus_custom.py compares them); ``validate`` checks emitted JobSets against
their JSON schema, and tests/test_native_workloads.py checks every emitted JobSet against the CRD
and the webhook's rules.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import DNS1035Label, K8sType, Strict, resource_kind
from .scheduling import ObjectMeta

__all__ = ["JOBSET_API_VERSION", "JobSet", "JobSetSpec", "ReplicatedJob"]

JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"

#: A replicatedJob's name: the JobSet webhook wants the Job names made from it DNS-1035 labels.
ReplicatedJobName = DNS1035Label
JobTemplateSpec = Annotated[
    dict[str, object],
    K8sType("io.k8s.api.batch.v1.JobTemplateSpec", "Template of the replicated Jobs"),
]


class ReplicatedJob(Strict):
    """A group of identical Jobs (``spec.replicatedJobs[]``)."""

    name: ReplicatedJobName = Field(
        description="Name of the group; its Jobs are <jobset>-<name>-<index>."
    )
    group_name: str = Field(
        default="default",
        alias="groupName",
        description="Group the replicated Jobs belong to. Default: default.",
    )
    replicas: int = Field(default=1, description="Jobs made from the template. Default: 1.")
    template: JobTemplateSpec


class SuccessPolicy(Strict):
    """When the JobSet has succeeded (``spec.successPolicy``)."""

    operator: Literal["All", "Any"] = Field(
        description="All: every Job of the target replicatedJobs succeeded; Any: one of them."
    )
    target_replicated_jobs: list[ReplicatedJobName] = Field(
        default_factory=list,
        alias="targetReplicatedJobs",
        description="replicatedJobs the operator applies to. Default: all.",
    )


class FailurePolicy(Strict):
    """What a failed Job does to the JobSet (``spec.failurePolicy``)."""

    max_restarts: int | None = Field(
        default=None,
        alias="maxRestarts",
        description="Times the whole JobSet is re-created before it fails (0: never).",
    )
    restart_strategy: Literal["Recreate", "BlockingRecreate"] = Field(
        default="Recreate",
        alias="restartStrategy",
        description="How a restart re-creates the Jobs. Default: Recreate.",
    )


class Network(Strict):
    """Pod DNS (``spec.network``)."""

    enable_dns_hostnames: bool | None = Field(
        default=None,
        alias="enableDNSHostnames",
        description="Give pods the JobSet's hostnames and subdomain (needs Indexed Jobs).",
    )
    publish_not_ready_addresses: bool | None = Field(
        default=None,
        alias="publishNotReadyAddresses",
        description="Whether the JobSet's headless Service lists pods that are not ready.",
    )


class StartupPolicy(Strict):
    """Order in which the replicatedJobs start (``spec.startupPolicy``)."""

    startup_policy_order: Literal["AnyOrder", "InOrder"] = Field(
        alias="startupPolicyOrder", description="AnyOrder or InOrder."
    )


class JobSetSpec(Strict):
    """``spec`` of a JobSet (the fields kubetrain writes)."""

    replicated_jobs: list[ReplicatedJob] | None = Field(
        default=None, alias="replicatedJobs", description="Groups of identical Jobs."
    )
    success_policy: SuccessPolicy | None = Field(
        default=None, alias="successPolicy", description="When the JobSet has succeeded."
    )
    failure_policy: FailurePolicy | None = Field(
        default=None, alias="failurePolicy", description="What a failed Job does to the JobSet."
    )
    network: Network | None = Field(default=None, description="Pod DNS.")
    startup_policy: StartupPolicy | None = Field(
        default=None, alias="startupPolicy", description="Order the replicatedJobs start in."
    )
    suspend: bool | None = Field(default=None, description="Create the Jobs suspended.")
    ttl_seconds_after_finished: int | None = Field(
        default=None,
        alias="ttlSecondsAfterFinished",
        ge=0,
        description="Seconds after finishing before the JobSet is deleted.",
    )


@resource_kind(JOBSET_API_VERSION, "JobSet")
class JobSet(Strict):
    """A JobSet (kubernetes-sigs/jobset)."""

    api_version: Literal["jobset.x-k8s.io/v1alpha2"] = Field(alias="apiVersion")
    kind: Literal["JobSet"]
    metadata: ObjectMeta
    spec: JobSetSpec | None = Field(default=None, description="What the JobSet runs.")
