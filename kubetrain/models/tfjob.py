"""TFJob job documents: Kubeflow ``kubeflow.org/v1`` and the original ``kubeflow.org/v1alpha1``.

Fidelity target: the Kubeflow training-operator v1.9 API and defaulting. A v1alpha1 document is
converted to v1 by :meth:`TFJobV1Alpha1.normalized` and is then expanded like any v1 TFJob.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from . import webhooks as rules
from .base import DerivedName, Int32, JobDocument, Replicas, Strict, plain_copy, upstream
from .kinds import declare
from .kubeflow import (
    KubeflowJob,
    PodTemplateSpec,
    ReplicaSpec,
    RestartPolicy,
    RunPolicy,
    SchedulingPolicy,
    canonical_replica_types,
    replica_specs_field,
    restart_policy_field,
    template_field,
)

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "DEFAULT_CONTAINER",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "REPLICA_TYPES",
    "RunPolicy",
    "SchedulingPolicy",
    "TFJob",
    "TFJobSpec",
    "TFJobV1Alpha1",
    "TFReplicaSpec",
]

#: The container the operator configures (TF_CONFIG) and whose named ports the services expose.
DEFAULT_CONTAINER = "tensorflow"
#: The container port that carries TensorFlow's gRPC traffic, added when missing.
DEFAULT_PORT_NAME = "tfjob-port"
DEFAULT_PORT = 2222
#: Replica types in the operator's canonical spelling; keys are matched case-insensitively.
REPLICA_TYPES = ("Chief", "Master", "PS", "Worker", "Evaluator")
_CANONICAL = {t.lower(): t for t in REPLICA_TYPES}

ReplicaType = Literal["Chief", "Master", "PS", "Worker", "Evaluator"]


class TFReplicaSpec(ReplicaSpec):
    """One replica type of a TFJob."""

    DEFAULT_CONTAINER: ClassVar[str] = DEFAULT_CONTAINER
    DEFAULT_PORT_NAME: ClassVar[str] = DEFAULT_PORT_NAME
    DEFAULT_PORT: ClassVar[int] = DEFAULT_PORT

    template: PodTemplateSpec = template_field(DEFAULT_CONTAINER)
    restart_policy: RestartPolicy = restart_policy_field("Never")


class TFJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v1`` TFJob."""

    tf_replica_specs: dict[ReplicaType, TFReplicaSpec] = replica_specs_field(
        "tfReplicaSpecs", REPLICA_TYPES, any_case=True
    )
    run_policy: RunPolicy = Field(
        default_factory=RunPolicy, alias="runPolicy", description="Run-time policies."
    )
    success_policy: Literal["", "AllWorkers"] | None = Field(
        default=None,
        alias="successPolicy",
        description='When the job succeeds: "" (chief, master or worker 0) or AllWorkers.',
        json_schema_extra=upstream(enum=None),
    )
    enable_dynamic_worker: bool = Field(
        default=False,
        alias="enableDynamicWorker",
        description="Give each worker a sparse TF_CONFIG cluster (itself and the PS only).",
    )

    @field_validator(
        "tf_replica_specs", mode="before", json_schema_input_type=dict[str, TFReplicaSpec]
    )
    @classmethod
    def _canonical_types(cls, value: Any) -> Any:
        """Replica-type keys are case-insensitive, as the operator's setTypeNamesToCamelCase."""
        return canonical_replica_types(value, _CANONICAL)


@declare("Kubeflow TFJob (training-operator v1.9): distributed TensorFlow, TF_CONFIG per pod")
class TFJob(KubeflowJob):
    """A Kubeflow TFJob (``kubeflow.org/v1``)."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1"
    KIND: ClassVar[str] = "TFJob"
    REPLICA_TYPES: ClassVar[tuple[str, ...]] = REPLICA_TYPES
    REPLICA_SPECS_KEY: ClassVar[str] = "tfReplicaSpecs"
    ANY_CASE_TYPES: ClassVar[bool] = True
    HOST_NAME_USE: ClassVar[str] = "TF_CONFIG host name"

    api_version: Literal["kubeflow.org/v1"] = Field(alias="apiVersion")
    kind: Literal["TFJob"]
    spec: TFJobSpec

    def defaulted_spec_update(self) -> dict[str, Any]:
        """What SetDefaults_TFJob sets besides the common fields: successPolicy ""."""
        return {**super().defaulted_spec_update(), "success_policy": self.spec.success_policy or ""}

    def cluster_env_bytes(self, settings: StackSettings) -> int:
        """``TF_CONFIG`` lists every pod's host, ``<job>-<type>-<index>.<namespace>.svc
        [.<domain>]:<port>``, JSON-quoted and escaped again in YAML: each pod's grows with the
        job, and the job's output with its square."""
        if not self.is_distributed():
            return 0
        domain = len(settings.cluster_domain or "") + 1
        return 120 + sum(
            s.replicas * (len(self.name) + len(t) + len(self.namespace) + domain + 30)
            for t, s in self.replica_specs.items()
        )

    def kind_problems(self, settings: StackSettings) -> list[tuple[tuple[str | int, ...], str]]:
        """validateTFReplicaSpecs: at most one Chief or Master role
        (:func:`.webhooks.chief_or_master`); and kubetrain's own rule that the leader is one pod
        (the operator would run every pod of it as chief)."""
        problems: list[tuple[tuple[str | int, ...], str]] = []
        specs = self.spec.tf_replica_specs
        leaders = [t for t in ("Chief", "Master") if t in specs]
        base: tuple[str | int, ...] = ("spec", "tfReplicaSpecs")
        for refusal in rules.chief_or_master(base, specs):
            problems.append((refusal.path, "give either Chief or Master, not both"))
        for leader in leaders:
            if specs[leader].replicas != 1:
                problems.append(
                    (
                        (*base, leader, "replicas"),
                        f"{leader} must have exactly 1 replica, got {specs[leader].replicas}",
                    )
                )
        return problems


# --- kubeflow.org/v1alpha1 -------------------------------------------------------------------

_V1ALPHA1_TYPES: dict[str, ReplicaType] = {"MASTER": "Master", "PS": "PS", "WORKER": "Worker"}


class ChiefPolicy(Strict):
    replica_name: Literal["MASTER", "PS", "WORKER"] = Field(default="MASTER", alias="replicaName")
    replica_index: Int32 = Field(default=0, alias="replicaIndex", ge=0)


class TerminationPolicy(Strict):
    chief: ChiefPolicy | None = None


class ReplicaSpecV1Alpha1(Strict):
    """One entry of ``spec.replicaSpecs`` in a v1alpha1 TFJob."""

    replicas: Replicas = Field(
        default=1, ge=1, description="Number of pods (at most 10000). Default: 1."
    )
    template: PodTemplateSpec = Field(description="Pod template with a container named tensorflow.")
    tf_port: int = Field(
        default=DEFAULT_PORT,
        alias="tfPort",
        ge=1,
        le=65535,
        description="TensorFlow port. Default: 2222.",
    )
    tf_replica_type: Literal["MASTER", "PS", "WORKER"] = Field(
        default="MASTER",
        alias="tfReplicaType",
        description="MASTER, PS or WORKER. Default: MASTER.",
    )


class TFJobSpecV1Alpha1(Strict):
    """``spec`` of a ``kubeflow.org/v1alpha1`` TFJob."""

    replica_specs: list[ReplicaSpecV1Alpha1] = Field(alias="replicaSpecs", min_length=1)
    termination_policy: TerminationPolicy | None = Field(default=None, alias="terminationPolicy")
    runtime_id: str | None = Field(default=None, alias="RuntimeId")
    tf_image: str | None = Field(default=None, alias="tfImage")
    scheduler_name: str | None = Field(default=None, alias="schedulerName")


@declare(
    "the original Kubeflow TFJob (kubeflow.org/v1alpha1), converted to v1 and expanded like it",
    expanded_as=TFJob,
)
class TFJobV1Alpha1(JobDocument):
    """A TFJob in the original ``kubeflow.org/v1alpha1`` form, converted to v1 for expansion."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1alpha1"
    KIND: ClassVar[str] = "TFJob"

    api_version: Literal["kubeflow.org/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["TFJob"]
    spec: TFJobSpecV1Alpha1

    def semantic_problems(self, settings: StackSettings) -> list[tuple[tuple[str | int, ...], str]]:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        seen: dict[str, int] = {}
        for i, spec in enumerate(self.spec.replica_specs):
            path: tuple[str | int, ...] = ("spec", "replicaSpecs", i, "tfReplicaType")
            if spec.tf_replica_type in seen:
                problems.append(
                    (
                        path,
                        f"{spec.tf_replica_type} is already given by "
                        f"replicaSpecs[{seen[spec.tf_replica_type]}]",
                    )
                )
            seen.setdefault(spec.tf_replica_type, i)
        chief = self.spec.termination_policy.chief if self.spec.termination_policy else None
        if chief is not None and (chief.replica_name, chief.replica_index) != ("MASTER", 0):
            problems.append(
                (
                    ("spec", "terminationPolicy", "chief"),
                    "only the default chief (MASTER, index 0) has a kubeflow.org/v1 equivalent, "
                    f"got {chief.replica_name} {chief.replica_index}",
                )
            )
        if not problems:
            index: dict[str, int] = {
                _V1ALPHA1_TYPES[s.tf_replica_type]: i for i, s in enumerate(self.spec.replica_specs)
            }
            for path, message in self.normalized().semantic_problems(settings):
                if path[:2] == ("spec", "tfReplicaSpecs") and len(path) > 2:
                    path = ("spec", "replicaSpecs", index[str(path[2])], *path[3:])
                problems.append((path, message))
        return problems

    def normalized(self) -> TFJob:
        """The equivalent v1 TFJob: MASTER/PS/WORKER become Master/PS/Worker, ``tfPort`` becomes
        the ``tfjob-port`` of the ``tensorflow`` container, and the template's restart policy
        becomes the replica's (v1alpha1 kept it in the pod template)."""
        specs: dict[str, Any] = {}
        for spec in self.spec.replica_specs:
            template = plain_copy(spec.template)
            pod_spec = template["spec"] = template.get("spec") or {}
            for c in pod_spec.get("containers") or []:
                # Kubernetes' schemas let a list item be null: skip what is not a container.
                if isinstance(c, dict) and c.get("name") == DEFAULT_CONTAINER:
                    ports = c["ports"] = c.get("ports") or []
                    if not any(
                        isinstance(p, dict) and p.get("name") == DEFAULT_PORT_NAME for p in ports
                    ):
                        ports.append({"name": DEFAULT_PORT_NAME, "containerPort": spec.tf_port})
            replica: dict[str, Any] = {"replicas": spec.replicas, "template": template}
            if restart := pod_spec.pop("restartPolicy", None):
                replica["restartPolicy"] = restart
            specs[_V1ALPHA1_TYPES[spec.tf_replica_type]] = replica
        return TFJob.model_validate(
            {
                "apiVersion": TFJob.API_VERSION,
                "kind": TFJob.KIND,
                "metadata": self.metadata.model_dump(by_alias=True, exclude_none=True),
                "spec": {"tfReplicaSpecs": specs},
            }
        )

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        return self.normalized().derived_names(settings)
