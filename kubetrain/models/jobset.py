"""The JobSet kubetrain emits for a Kubeflow job under ``kubetrain:nativeWorkload: jobset``,
and for a TrainJob in native mode (the JobSet the trainer builds from its runtime).

``jobset.x-k8s.io/v1alpha2`` JobSet, from kubernetes-sigs/jobset v0.12.0, the version Kubeflow
Trainer v2.3.0's go.mod pins (``api/jobset/v1alpha2/jobset_types.go``; its CRD is
``config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml``). What v0.12.0 has beyond v0.9.1:
``volumeClaimPolicies`` (v0.11.0; the torchtune runtimes' shared claim), a failure rule's
``onJobFailureMessagePatterns`` and its ``RestartJob`` actions, the ``InPlaceRestart``
strategy. A JobSet kubetrain emits without those runs on v0.9.1 too (docs/native-workloads.md,
"JobSet versions"). The
models describe the CRD's fields, required, typed and bounded as it does, with its list-map keys
and CEL rules (tests/test_apiserver_corpus_custom.py compares them); ``validate`` checks emitted
JobSets against their structural schema, and tests/test_native_workloads.py checks every emitted
JobSet against the CRD and the webhook's rules.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from pydantic.config import JsonDict

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


#: ``self == oldSelf`` (the CRD's immutable fields; checked on updates only).
IMMUTABLE: JsonDict = {
    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "Value is immutable"}]
}
#: An integer the CRD types ``format: int32``: the API server refuses what does not fit.
INT32: JsonDict = {"format": "int32"}
#: A list whose items are keyed by ``name``: two with one name are refused.
BY_NAME: JsonDict = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}


class DependsOn(Strict):
    """A replicated job that must reach a status before this one starts."""

    name: str = Field(description="The replicated job.")
    status: Literal["Ready", "Complete"] = Field(description="Ready or Complete.")


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
    replicas: int = Field(
        default=1,
        description="Jobs made from the template. Default: 1.",
        json_schema_extra=INT32,
    )
    depends_on: list[DependsOn] | None = Field(
        default=None,
        alias="dependsOn",
        max_length=5,
        description="Replicated jobs to wait for (Ready or Complete) before starting.",
        json_schema_extra={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "Value is immutable"}
            ],
        },
    )
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


class FailurePolicyRule(Strict):
    """What a failed Job matching the rule does (``spec.failurePolicy.rules[]``)."""

    name: str = Field(description="Name of the rule.")
    action: Literal[
        "FailJobSet",
        "RestartJobSet",
        "RestartJobSetAndIgnoreMaxRestarts",
        "RestartJob",
        "RestartJobAndIgnoreMaxRestarts",
    ] = Field(
        description="FailJobSet, RestartJobSet, RestartJobSetAndIgnoreMaxRestarts, or (v0.12) "
        "RestartJob or RestartJobAndIgnoreMaxRestarts."
    )
    on_job_failure_reasons: list[str] | None = Field(
        default=None,
        alias="onJobFailureReasons",
        description="Job failure reasons the rule matches. Default: any.",
    )
    on_job_failure_message_patterns: list[str] | None = Field(
        default=None,
        alias="onJobFailureMessagePatterns",
        description="Regular expressions (RE2), one of which the Job's failure message must "
        "match (JobSet v0.12). Default: any.",
    )
    target_replicated_jobs: list[str] | None = Field(
        default=None,
        alias="targetReplicatedJobs",
        description="Replicated jobs the rule applies to. Default: all.",
        json_schema_extra={"x-kubernetes-list-type": "atomic"},
    )


class FailurePolicy(Strict):
    """What a failed Job does to the JobSet (``spec.failurePolicy``)."""

    rules: list[FailurePolicyRule] | None = Field(
        default=None, description="Rules tried in order; the first that matches acts."
    )
    max_restarts: int | None = Field(
        default=None,
        alias="maxRestarts",
        json_schema_extra=INT32,
        description="Times the whole JobSet is re-created before it fails (0: never).",
    )
    restart_strategy: Literal["Recreate", "BlockingRecreate", "InPlaceRestart"] = Field(
        default="Recreate",
        alias="restartStrategy",
        description="How a restart re-creates the Jobs (InPlaceRestart: JobSet v0.12). "
        "Default: Recreate.",
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
    subdomain: str | None = Field(
        default=None, description="Subdomain of the pods' hostnames. Default: the JobSet's name."
    )


class Coordinator(Strict):
    """The pod whose address every pod is told (``spec.coordinator``)."""

    replicated_job: str = Field(alias="replicatedJob", description="Its replicated job.")
    job_index: int | None = Field(default=None, alias="jobIndex", description="Its Job. Default 0.")
    pod_index: int | None = Field(default=None, alias="podIndex", description="Its pod. Default 0.")


PersistentVolumeClaim = Annotated[
    dict[str, object],
    K8sType("io.k8s.api.core.v1.PersistentVolumeClaim", "A claim the JobSet controller makes"),
]


class VolumeRetentionPolicy(Strict):
    """What happens to the claims when the JobSet is deleted (``retentionPolicy``)."""

    when_deleted: Literal["Delete", "Retain"] = Field(
        default="Delete",
        alias="whenDeleted",
        description="Delete (the claims go with the JobSet) or Retain. Default: Delete.",
    )


class VolumeClaimPolicy(Strict):
    """Claims the JobSet controller makes, shared by the replicatedJobs that mount them
    (``spec.volumeClaimPolicies[]``, JobSet v0.11+: ``<claim>-<jobset>``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.templates.all(t, !has(t.metadata.namespace) || "
                    "size(t.metadata.namespace) == 0)",
                    "message": "namespace cannot be set for VolumeClaimPolicies templates",
                }
            ]
        }
    )

    templates: list[PersistentVolumeClaim] | None = Field(
        default=None,
        max_length=50,
        description="The claims, each mounted by name in some replicatedJob.",
        json_schema_extra={"x-kubernetes-list-type": "atomic"},
    )
    retention_policy: VolumeRetentionPolicy | None = Field(
        default=None, alias="retentionPolicy", description="Whether the claims outlive the JobSet."
    )


class StartupPolicy(Strict):
    """Order in which the replicatedJobs start (``spec.startupPolicy``)."""

    startup_policy_order: Literal["AnyOrder", "InOrder"] = Field(
        alias="startupPolicyOrder", description="AnyOrder or InOrder."
    )


class JobSetSpec(Strict):
    """``spec`` of a JobSet."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder "
                    "== 'InOrder' && self.replicatedJobs.exists(x, has(x.dependsOn)))",
                    "message": "StartupPolicy and DependsOn APIs are mutually exclusive",
                }
            ]
        }
    )

    replicated_jobs: list[ReplicatedJob] | None = Field(
        default=None,
        alias="replicatedJobs",
        description="Groups of identical Jobs.",
        json_schema_extra=BY_NAME,
    )
    success_policy: SuccessPolicy | None = Field(
        default=None,
        alias="successPolicy",
        description="When the JobSet has succeeded.",
        json_schema_extra=IMMUTABLE,
    )
    failure_policy: FailurePolicy | None = Field(
        default=None,
        alias="failurePolicy",
        description="What a failed Job does to the JobSet.",
        json_schema_extra=IMMUTABLE,
    )
    network: Network | None = Field(
        default=None, description="Pod DNS.", json_schema_extra=IMMUTABLE
    )
    startup_policy: StartupPolicy | None = Field(
        default=None,
        alias="startupPolicy",
        description="Order the replicatedJobs start in.",
        json_schema_extra=IMMUTABLE,
    )
    coordinator: Coordinator | None = Field(
        default=None, description="The pod every pod is told the address of."
    )
    managed_by: str | None = Field(
        default=None, alias="managedBy", description="Controller that reconciles the JobSet."
    )
    suspend: bool | None = Field(default=None, description="Create the Jobs suspended.")
    ttl_seconds_after_finished: int | None = Field(
        default=None,
        alias="ttlSecondsAfterFinished",
        json_schema_extra=INT32,
        ge=0,
        description="Seconds after finishing before the JobSet is deleted.",
    )
    volume_claim_policies: list[VolumeClaimPolicy] | None = Field(
        default=None,
        alias="volumeClaimPolicies",
        max_length=50,
        description="Claims the JobSet controller makes for its pods (JobSet v0.11+).",
        json_schema_extra={"x-kubernetes-list-type": "atomic", **IMMUTABLE},
    )


@resource_kind(JOBSET_API_VERSION, "JobSet")
class JobSet(Strict):
    """A JobSet (kubernetes-sigs/jobset)."""

    api_version: Literal["jobset.x-k8s.io/v1alpha2"] = Field(alias="apiVersion")
    kind: Literal["JobSet"]
    metadata: ObjectMeta
    spec: JobSetSpec | None = Field(default=None, description="What the JobSet runs.")
