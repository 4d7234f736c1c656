"""TFJob job documents: Kubeflow ``kubeflow.org/v1`` and the original ``kubeflow.org/v1alpha1``.

Fidelity target: the Kubeflow training-operator v1.9 API and defaulting. A v1alpha1 document is
converted to v1 by :meth:`TFJobV1Alpha1.normalized` and is then expanded like any v1 TFJob.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator

from ..kube.names import DNS1035_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE
from .base import DerivedName, JobDocument, K8sType, Strict, job_kind, plain_copy, upstream
from .resources import pod_gpu_problems
from .scheduling import check_resource_list, min_available_problems

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "DEFAULT_CONTAINER",
    "DEFAULT_PORT",
    "DEFAULT_PORT_NAME",
    "REPLICA_TYPES",
    "ReplicaSpec",
    "RunPolicy",
    "SchedulingPolicy",
    "TFJob",
    "TFJobSpec",
    "TFJobV1Alpha1",
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
RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]

PodTemplateSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.core.v1.PodTemplateSpec", "Pod template of every replica of this type"),
]


class SchedulingPolicy(Strict):
    """Gang-scheduling settings (``runPolicy.schedulingPolicy``)."""

    min_available: int | None = Field(
        default=None,
        alias="minAvailable",
        ge=1,
        description="Pods that must be schedulable together. Default: every pod of the job.",
        json_schema_extra=upstream(minimum=None),
    )
    queue: str | None = Field(default=None, description="Scheduler queue of the PodGroup.")
    min_resources: dict[str, int | str] | None = Field(
        default=None,
        alias="minResources",
        description="Resources the PodGroup needs. Default: the sum of the pods' requests.",
        json_schema_extra=upstream(additionalProperties={"x-kubetrain-quantity": True}),
    )
    priority_class: str | None = Field(
        default=None, alias="priorityClass", description="PriorityClass of the PodGroup."
    )
    schedule_timeout_seconds: int | None = Field(
        default=None,
        alias="scheduleTimeoutSeconds",
        ge=0,
        description="Seconds the scheduler waits for the gang (scheduler-plugins only).",
        json_schema_extra=upstream(minimum=None),
    )

    @field_validator("min_resources")
    @classmethod
    def _quantities(cls, value: dict[str, int | str] | None) -> dict[str, int | str] | None:
        return check_resource_list(value)


class RunPolicy(Strict):
    """Run-time policies of the job (``spec.runPolicy``)."""

    clean_pod_policy: Literal["All", "Running", "None"] | None = Field(
        default=None,
        alias="cleanPodPolicy",
        description="Which pods the operator deletes when the job ends. Default: None.",
        json_schema_extra=upstream(enum=None),
    )
    ttl_seconds_after_finished: int | None = Field(
        default=None,
        alias="ttlSecondsAfterFinished",
        ge=0,
        description="Seconds to keep a finished job.",
        json_schema_extra=upstream(minimum=None),
    )
    active_deadline_seconds: int | None = Field(
        default=None,
        alias="activeDeadlineSeconds",
        ge=1,
        description="Deadline of the job in seconds.",
        json_schema_extra=upstream(minimum=None),
    )
    backoff_limit: int | None = Field(
        default=None,
        alias="backoffLimit",
        ge=0,
        description="Retries before the job fails.",
        json_schema_extra=upstream(minimum=None),
    )
    scheduling_policy: SchedulingPolicy | None = Field(
        default=None, alias="schedulingPolicy", description="Gang-scheduling settings."
    )
    suspend: bool | None = Field(default=None, description="Create the job suspended.")
    managed_by: str | None = Field(
        default=None, alias="managedBy", description="Controller that reconciles the job."
    )


class ReplicaSpec(Strict):
    """One replica type of a TFJob."""

    # The training-operator v1.9 CRD requires nothing of a replica spec and bounds no field:
    # kubetrain's rules below are its own (it builds the pods), checked at load time only.
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    replicas: int = Field(
        default=1,
        ge=1,
        description="Number of pods of this type. Default: 1.",
        json_schema_extra=upstream(minimum=None),
    )
    template: PodTemplateSpec = Field(
        description="Pod template; needs a container named tensorflow."
    )
    restart_policy: RestartPolicy = Field(
        default="Never",
        alias="restartPolicy",
        description="Pod restart policy (ExitCode: Never on the pod). Default: Never.",
        json_schema_extra=upstream(enum=None),
    )

    def containers(self) -> list[dict[str, Any]]:
        containers = (self.template.get("spec") or {}).get("containers") or []
        return [c for c in containers if isinstance(c, dict)]

    def default_container(self) -> dict[str, Any] | None:
        return next((c for c in self.containers() if c.get("name") == DEFAULT_CONTAINER), None)

    def port(self) -> int:
        """The ``tfjob-port`` of the ``tensorflow`` container (GetPortFromTFJob)."""
        container = self.default_container() or {}
        for port in container.get("ports") or []:
            if port.get("name") == DEFAULT_PORT_NAME:
                return int(port["containerPort"])
        return DEFAULT_PORT

    def named_ports(self) -> dict[str, int]:
        """Named container ports of the ``tensorflow`` container (GetPortsFromJob)."""
        container = self.default_container() or {}
        return {
            p["name"]: int(p["containerPort"])
            for p in (container.get("ports") or [])
            if p.get("name")
        }

    def defaulted(self) -> ReplicaSpec:
        """The spec with the operator's defaults: a ``tfjob-port`` 2222 on ``tensorflow``."""
        container = self.default_container()
        if container is None or any(
            p.get("name") == DEFAULT_PORT_NAME for p in (container.get("ports") or [])
        ):
            return self
        template = plain_copy(self.template)
        for c in template["spec"]["containers"]:
            if c.get("name") == DEFAULT_CONTAINER:
                c["ports"] = c.get("ports") or []
                c["ports"].append({"name": DEFAULT_PORT_NAME, "containerPort": DEFAULT_PORT})
                break
        return self.model_copy(update={"template": template})


class TFJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v1`` TFJob."""

    tf_replica_specs: dict[ReplicaType, ReplicaSpec] = Field(
        alias="tfReplicaSpecs",
        min_length=1,
        description="Replica types (Chief, Master, PS, Worker, Evaluator; any case) -> spec.",
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
        "tf_replica_specs", mode="before", json_schema_input_type=dict[str, ReplicaSpec]
    )
    @classmethod
    def _canonical_types(cls, value: Any) -> Any:
        """Replica-type keys are case-insensitive, as the operator's setTypeNamesToCamelCase."""
        if not isinstance(value, dict):
            return value
        out: dict[Any, Any] = {}
        for key, spec in value.items():
            canonical = _CANONICAL.get(key.lower(), key) if isinstance(key, str) else key
            if canonical in out:
                raise ValueError(f"replica type {canonical} is given twice (as {key!r})")
            out[canonical] = spec
        return out


@job_kind
class TFJob(JobDocument):
    """A Kubeflow TFJob (``kubeflow.org/v1``)."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1"
    KIND: ClassVar[str] = "TFJob"
    # A job document needs a spec; the TFJob CRD requires nothing at its root.
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    api_version: Literal["kubeflow.org/v1"] = Field(alias="apiVersion")
    kind: Literal["TFJob"]
    spec: TFJobSpec

    @property
    def replica_specs(self) -> dict[str, ReplicaSpec]:
        """Replica specs in the canonical type order (Chief, Master, PS, Worker, Evaluator)."""
        specs = self.spec.tf_replica_specs
        return {t: specs[t] for t in REPLICA_TYPES if t in specs}

    def total_replicas(self) -> int:
        return sum(s.replicas for s in self.spec.tf_replica_specs.values())

    def is_distributed(self) -> bool:
        """More than one replica in total (the operator's isDistributed)."""
        return self.total_replicas() != 1

    def defaulted(self) -> TFJob:
        """The job as the operator's defaulting webhook leaves it."""
        specs = {t: s.defaulted() for t, s in self.replica_specs.items()}
        run_policy = self.spec.run_policy
        if run_policy.clean_pod_policy is None:
            run_policy = run_policy.model_copy(update={"clean_pod_policy": "None"})
        spec = self.spec.model_copy(
            update={
                "tf_replica_specs": specs,
                "run_policy": run_policy,
                "success_policy": self.spec.success_policy or "",
            }
        )
        return self.model_copy(update={"spec": spec})

    def semantic_problems(self, settings: StackSettings) -> list[tuple[tuple[str | int, ...], str]]:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        specs = self.spec.tf_replica_specs
        leaders = [t for t in ("Chief", "Master") if t in specs]
        base: tuple[str | int, ...] = ("spec", "tfReplicaSpecs")
        if len(leaders) > 1:
            problems.append((base, "give either Chief or Master, not both"))
        for leader in leaders:
            if specs[leader].replicas != 1:
                problems.append(
                    (
                        (*base, leader, "replicas"),
                        f"{leader} must have exactly 1 replica, got {specs[leader].replicas}",
                    )
                )
        for t, spec in specs.items():
            for i, container in enumerate(spec.containers()):
                if not container.get("image"):
                    path = (*base, t, "template", "spec", "containers", i, "image")
                    problems.append((path, "every container needs an image"))
            for path, message in pod_gpu_problems(spec.template.get("spec"), settings.gpu_resource):
                problems.append(((*base, t, "template", "spec", *path), message))
            names = [c.get("name") for c in spec.containers()]
            if DEFAULT_CONTAINER not in names:
                found = ", ".join(repr(n) for n in names) or "none"
                problems.append(
                    (
                        (*base, t, "template", "spec", "containers"),
                        f"needs a container named {DEFAULT_CONTAINER!r} (found: {found}); the "
                        "operator configures and watches that container",
                    )
                )
        if self.spec.run_policy.suspend and self.mode(settings) == "native":
            problems.append(
                (
                    ("spec", "runPolicy", "suspend"),
                    "a suspended job needs the training operator to resume it; native mode "
                    "creates the pods at once: use operator mode, or leave the job out",
                )
            )
        policy = self.spec.run_policy.scheduling_policy
        if policy is not None:
            problems += min_available_problems(
                policy.min_available,
                self.total_replicas(),
                ("spec", "runPolicy", "schedulingPolicy", "minAvailable"),
            )
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        names = [
            DerivedName(self.name, "TFJob name", DNS1035_LABEL),
            DerivedName(self.name, "job-name label value", LABEL_VALUE),
            DerivedName(self.name, "PodGroup name", DNS1123_SUBDOMAIN),
        ]
        domain = f".{settings.cluster_domain}" if settings.cluster_domain else ""
        for rtype, spec in self.replica_specs.items():
            last = f"{self.name}-{rtype.lower()}-{spec.replicas - 1}"
            names.append(DerivedName(last, "Pod and Service name", DNS1035_LABEL))
            names.append(
                DerivedName(
                    f"{last}.{self.namespace}.svc{domain}", "TF_CONFIG host name", DNS1123_SUBDOMAIN
                )
            )
        return names


# --- kubeflow.org/v1alpha1 -------------------------------------------------------------------

_V1ALPHA1_TYPES: dict[str, ReplicaType] = {"MASTER": "Master", "PS": "PS", "WORKER": "Worker"}


class ChiefPolicy(Strict):
    replica_name: Literal["MASTER", "PS", "WORKER"] = Field(default="MASTER", alias="replicaName")
    replica_index: int = Field(default=0, alias="replicaIndex", ge=0)


class TerminationPolicy(Strict):
    chief: ChiefPolicy | None = None


class ReplicaSpecV1Alpha1(Strict):
    """One entry of ``spec.replicaSpecs`` in a v1alpha1 TFJob."""

    replicas: int = Field(default=1, ge=1, description="Number of pods. Default: 1.")
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


@job_kind
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
                if c.get("name") == DEFAULT_CONTAINER:
                    ports = c["ports"] = c.get("ports") or []
                    if not any(p.get("name") == DEFAULT_PORT_NAME for p in ports):
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
