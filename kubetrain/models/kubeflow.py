"""What every Kubeflow replica job (``kubeflow.org/v1`` TFJob, PyTorchJob, XGBoostJob, PaddleJob,
JAXJob) shares: the run and scheduling policies, the replica spec, replica-type normalisation and
the rules the training operator's defaulting and webhooks apply to every kind.

Fidelity target: Kubeflow training-operator v1.9.0, ``pkg/apis/kubeflow.org/v1/common_types.go``
(``RunPolicy``, ``SchedulingPolicy``, ``ReplicaSpec``), ``defaulting_utils.go``
(``setTypeNameToCamelCase``, ``setDefaultPort``, ``setDefaultReplicas``,
``setDefaultRestartPolicy``), the per-kind webhooks ``pkg/webhooks/<kind>/*_webhook.go``
(``validate<Kind>ReplicaSpecs``: the replica types, an image on every container, the default
container, a single Master) and ``pkg/common/util/webhooks.go`` (``ValidateRunPolicy``).

A kind is its facts, declared once on its classes: the replica types in expansion order, which
of them the webhook wants exactly once (:attr:`KubeflowJob.SINGLE_TYPES`) or at all
(:attr:`KubeflowJob.REQUIRED_TYPES`), whether the webhook reads replica-type keys in any case
(:attr:`KubeflowJob.ANY_CASE_TYPES`), and its default container, port and restart policy
(class variables and field defaults of its :class:`ReplicaSpec`).

The operator's validating webhooks see the object as written, before its controller defaults it
(v1.9.0 registers no defaulting webhook: ``scheme.Default`` runs in each ``Reconcile``). So a
Master without ``replicas`` is refused by the PyTorchJob and XGBoostJob webhooks ("must be 1"),
and a replica type spelled in another case is refused by every webhook but TFJob's, which checks
no type names (its controller then normalises them).
"""

from __future__ import annotations

import json
import typing
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

from pydantic import ConfigDict, Field, field_validator

from ..kube.features import enabled_by_default
from ..kube.names import DNS1035_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE
from . import webhooks as rules
from .base import (
    DerivedName,
    Int32,
    JobDocument,
    K8sType,
    Mode,
    OutputEstimate,
    Replicas,
    Strict,
    plain_copy,
    upstream,
)
from .resources import pod_gpu_problems
from .scheduling import check_resource_list, min_available_problems
from .stack import NATIVE_WORKLOADS
from .workload import JOBSET, POD, WORKLOADS, Workload

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "MULTIKUEUE",
    "REPLICA_TYPES_KEY",
    "TRAINING_OPERATOR",
    "KubeflowJob",
    "PodTemplateSpec",
    "ReplicaSpec",
    "RestartPolicy",
    "RunPolicy",
    "SchedulingPolicy",
    "canonical_replica_types",
    "replica_specs_field",
    "restart_policy_field",
    "run_policy_field",
    "template_field",
]

#: runPolicy.managedBy values ValidateRunPolicyCreate admits: the training operator's own, and
#: Kueue's MultiKueue, which the operator leaves alone (MultiKueue runs the job on another
#: cluster).
TRAINING_OPERATOR = "kubeflow.org/training-operator"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"

RestartPolicy = Literal["Always", "OnFailure", "Never", "ExitCode"]
Problems = list[tuple[tuple[str | int, ...], str]]

PodTemplateSpec = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.core.v1.PodTemplateSpec", "Pod template of every replica of this type"),
]


class SchedulingPolicy(Strict):
    """Gang-scheduling settings (``runPolicy.schedulingPolicy``)."""

    min_available: Int32 | None = Field(
        default=None,
        alias="minAvailable",
        ge=1,
        description="Pods that must be schedulable together. Default: every pod of the job.",
        json_schema_extra=upstream(minimum=None, maximum=None),
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
    schedule_timeout_seconds: Int32 | None = Field(
        default=None,
        alias="scheduleTimeoutSeconds",
        ge=0,
        description="Seconds the scheduler waits for the gang (scheduler-plugins only).",
        json_schema_extra=upstream(minimum=None, maximum=None),
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
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None,
        alias="ttlSecondsAfterFinished",
        ge=0,
        description="Seconds to keep a finished job.",
        json_schema_extra=upstream(minimum=None, maximum=None),
    )
    active_deadline_seconds: int | None = Field(
        default=None,
        alias="activeDeadlineSeconds",
        ge=1,
        description="Deadline of the job in seconds.",
        json_schema_extra=upstream(minimum=None),
    )
    backoff_limit: Int32 | None = Field(
        default=None,
        alias="backoffLimit",
        ge=0,
        description="Retries before the job fails.",
        json_schema_extra=upstream(minimum=None, maximum=None),
    )
    scheduling_policy: SchedulingPolicy | None = Field(
        default=None, alias="schedulingPolicy", description="Gang-scheduling settings."
    )
    suspend: bool | None = Field(default=None, description="Create the job suspended.")
    managed_by: Literal["kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"] | None = (
        Field(
            default=None,
            alias="managedBy",
            description="Controller that reconciles the job: kubeflow.org/training-operator, or "
            "kueue.x-k8s.io/multikueue (operator mode only). Default: the training operator.",
            json_schema_extra=upstream(enum=None),
        )
    )


def template_field(container: str) -> Any:
    """The ``template`` field of a kind's replica spec: its pod template must hold the kind's
    default ``container``."""
    return Field(description=f"Pod template; needs a container named {container}.")


def restart_policy_field(default: str) -> Any:
    """The ``restartPolicy`` field of a kind's replica spec, with the kind's default (the
    operator's ``<Kind>DefaultRestartPolicy``, set by ``setDefaultRestartPolicy``)."""
    return Field(
        default=default,
        alias="restartPolicy",
        description=f"Pod restart policy (ExitCode: Never on the pod). Default: {default}.",
        json_schema_extra=upstream(enum=None),
    )


def run_policy_field() -> Any:
    """The ``runPolicy`` field every kind's spec has (optional in every CRD)."""
    return Field(default_factory=RunPolicy, alias="runPolicy", description="Run-time policies.")


#: JSON-schema key naming the replica types a map of any-case keys takes (``kubetrain explain``
#: checks a key against it; editors ignore it, and accept any spelling).
REPLICA_TYPES_KEY = "x-kubetrain-replica-types"


def replica_specs_field(key: str, types: tuple[str, ...], any_case: bool = False) -> Any:
    """The replica-spec map of a kind's spec, under its document ``key``."""
    case = "; any case" if any_case else ""
    return Field(
        alias=key,
        min_length=1,
        description=f"Replica types ({', '.join(types)}{case}) -> spec.",
        json_schema_extra={REPLICA_TYPES_KEY: list(types)} if any_case else None,
    )


class ReplicaSpec(Strict):
    """One replica type of a Kubeflow job. A kind subclasses it with its default container and
    port (the operator's per-kind ``GetDefaultContainerName`` / ``GetDefaultContainerPortName``
    and ``<Kind>DefaultPort``) and, with :func:`restart_policy_field`, its default restart
    policy."""

    DEFAULT_CONTAINER: ClassVar[str]
    DEFAULT_PORT_NAME: ClassVar[str]
    DEFAULT_PORT: ClassVar[int]
    # The training-operator v1.9 CRDs require nothing of a replica spec and bound no field:
    # kubetrain's rules below are its own (it builds the pods), checked at load time only.
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    replicas: Replicas = Field(
        default=1,
        ge=0,
        description="Number of pods of this type (at most 10000; 0: none of this type, which "
        "the training operator runs, as the job has other pods). Default: 1.",
        json_schema_extra=upstream(minimum=None, maximum=None),
    )
    template: PodTemplateSpec = Field(description="Pod template of the replicas.")
    restart_policy: RestartPolicy = Field(
        alias="restartPolicy",
        description="Pod restart policy (ExitCode: Never on the pod).",
        json_schema_extra=upstream(enum=None),
    )

    def containers(self) -> list[dict[str, Any]]:
        containers = (self.template.get("spec") or {}).get("containers") or []
        return [c for c in containers if isinstance(c, dict)]

    def default_container(self) -> dict[str, Any] | None:
        return next((c for c in self.containers() if c.get("name") == self.DEFAULT_CONTAINER), None)

    def port(self) -> int:
        """The default port of the default container (the operator's GetPortFromJob)."""
        container = self.default_container() or {}
        for port in container.get("ports") or []:
            if port.get("name") == self.DEFAULT_PORT_NAME:
                return int(port["containerPort"])
        return self.DEFAULT_PORT

    def named_ports(self) -> dict[str, int]:
        """Named container ports of the default container (GetPortsFromJob)."""
        container = self.default_container() or {}
        return {
            p["name"]: int(p["containerPort"])
            for p in (container.get("ports") or [])
            if p.get("name")
        }

    def defaulted(self) -> Self:
        """The spec with the operator's defaults: the default port on the default container
        (setDefaultPort)."""
        container = self.default_container()
        if container is None or any(
            p.get("name") == self.DEFAULT_PORT_NAME for p in (container.get("ports") or [])
        ):
            return self
        template = plain_copy(self.template)
        for c in template["spec"]["containers"]:
            if c.get("name") == self.DEFAULT_CONTAINER:
                c["ports"] = c.get("ports") or []
                c["ports"].append(
                    {"name": self.DEFAULT_PORT_NAME, "containerPort": self.DEFAULT_PORT}
                )
                break
        return self.model_copy(update={"template": template})


def canonical_replica_types(value: Any, canonical: dict[str, str]) -> Any:
    """Replica-type keys in the operator's spelling (``setTypeNameToCamelCase``: any case is
    accepted); a type given twice under two spellings is an error."""
    if not isinstance(value, dict):
        return value
    out: dict[Any, Any] = {}
    for key, spec in value.items():
        name = canonical.get(key.lower(), key) if isinstance(key, str) else key
        if name in out:
            raise ValueError(f"replica type {name} is given twice (as {key!r})")
        out[name] = spec
    return out


class KubeflowJob(JobDocument):
    """A ``kubeflow.org/v1`` replica job. A kind sets its replica types (in the order kubetrain
    expands them), the key of its replica-spec map, and the webhook's rules on types."""

    REPLICA_TYPES: ClassVar[tuple[str, ...]]
    NATIVE_WORKLOADS: ClassVar[tuple[str, ...]] = NATIVE_WORKLOADS
    #: The key of the replica-spec map in the document (``tfReplicaSpecs``); the attribute of
    #: ``spec`` holding it is derived from the spec model.
    REPLICA_SPECS_KEY: ClassVar[str]
    #: Replica types the kind's webhook wants with ``replicas: 1`` given (a Master).
    SINGLE_TYPES: ClassVar[tuple[str, ...]] = ()
    #: Replica types the kind's webhook requires (XGBoostJob's Master).
    REQUIRED_TYPES: ClassVar[tuple[str, ...]] = ()
    #: Whether replica-type keys may be written in any case (only TFJob's webhook checks no type
    #: names; its controller's setTypeNamesToCamelCase then normalises them).
    ANY_CASE_TYPES: ClassVar[bool] = False
    #: What the derived ``<pod>.<namespace>.svc`` names are used as (for error messages).
    HOST_NAME_USE: ClassVar[str] = "replica host name"
    # A job document needs a spec; the Kubeflow CRDs require nothing at their root.
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    spec: Any

    @classmethod
    def replica_specs_field(cls) -> str:
        """The attribute of the kind's spec model holding the replica specs."""
        spec_model = cls.model_fields["spec"].annotation
        assert isinstance(spec_model, type) and issubclass(spec_model, Strict)
        for name, info in spec_model.model_fields.items():
            if info.alias == cls.REPLICA_SPECS_KEY:
                return name
        raise LookupError(f"{cls.__name__}: no field {cls.REPLICA_SPECS_KEY} in its spec")

    @classmethod
    def replica_spec_model(cls) -> type[ReplicaSpec]:
        """The kind's ReplicaSpec model (its default container and port)."""
        spec_model = cls.model_fields["spec"].annotation
        assert isinstance(spec_model, type) and issubclass(spec_model, Strict)
        found = typing.get_args(spec_model.model_fields[cls.replica_specs_field()].annotation)
        assert len(found) == 2 and issubclass(found[1], ReplicaSpec), cls
        model: type[ReplicaSpec] = found[1]
        return model

    @property
    def replica_specs(self) -> dict[str, ReplicaSpec]:
        """Replica specs in the kind's canonical type order."""
        specs: dict[str, ReplicaSpec] = getattr(self.spec, self.replica_specs_field())
        return {t: specs[t] for t in self.REPLICA_TYPES if t in specs}

    @property
    def run_policy(self) -> RunPolicy:
        policy: RunPolicy = self.spec.run_policy
        return policy

    def total_replicas(self) -> int:
        return sum(s.replicas for s in self.replica_specs.values())

    def workload(self, settings: StackSettings) -> Workload | None:
        """What runs the replica indexes in native mode (:mod:`.workload`); ``None`` in operator
        mode, where the training operator creates the pods."""
        if self.mode(settings) != Mode.NATIVE:
            return None
        return WORKLOADS[self.native_workload(settings)]

    def cluster_env_bytes(self, settings: StackSettings) -> int:
        """Bytes of env each pod carries about the job's other pods (a TFJob's ``TF_CONFIG``
        lists them all); none unless a kind says so (see :meth:`output_estimate`)."""
        return 0

    def output_estimate(self, settings: StackSettings, mode: Mode) -> OutputEstimate:
        """Per replica index a workload (a Pod, or a Job) and a Service, each pod carrying
        :meth:`cluster_env_bytes`; a JobSet holds every index's Job in one object; operator
        mode writes the custom resource only. Upper estimates."""
        specs = self.replica_specs
        templates = {t: len(json.dumps(s.template)) for t, s in specs.items()}
        largest_type = max(specs, key=lambda t: specs[t].replicas)
        path: tuple[str | int, ...] = ("spec", self.REPLICA_SPECS_KEY, largest_type, "replicas")
        if mode == Mode.OPERATOR:
            size = 2048 + sum(templates.values())
            return OutputEstimate(1, size, size, path)
        cluster = self.cluster_env_bytes(settings)
        pods = {t: 3000 + 2 * templates[t] + cluster for t in specs}
        total = sum(s.replicas * (pods[t] + 1000) for t, s in specs.items())
        largest = max(pods.values())
        if WORKLOADS[self.native_workload(settings)].in_job_set:
            largest = total
        return OutputEstimate(2 * self.total_replicas() + 2, total, largest, path)

    def is_distributed(self) -> bool:
        """More than one replica in total (the operator's isDistributed)."""
        return self.total_replicas() != 1

    def defaulted_spec_update(self) -> dict[str, Any]:
        """The spec fields the operator's defaulting sets for every kind: the default port of
        each replica type and cleanPodPolicy None."""
        run_policy = self.run_policy
        if run_policy.clean_pod_policy is None:
            run_policy = run_policy.model_copy(update={"clean_pod_policy": "None"})
        specs = {t: s.defaulted() for t, s in self.replica_specs.items()}
        return {self.replica_specs_field(): specs, "run_policy": run_policy}

    def defaulted(self) -> Self:
        """The job as the operator's controller defaults it (``SetDefaults_<Kind>``); a kind
        adds its own fields in :meth:`defaulted_spec_update`."""
        spec = self.spec.model_copy(update=self.defaulted_spec_update())
        return self.model_copy(update={"spec": spec})

    def semantic_problems(self, settings: StackSettings) -> Problems:
        """The kind's webhook (``validate<Kind>ReplicaSpecs``: required and single replica types,
        images, the default container), :meth:`kind_problems`, and what native mode cannot
        do."""
        return (
            self.replica_type_problems()
            + self.kind_problems(settings)
            + self.replica_problems(settings)
            + self.run_policy_problems(settings)
        )

    def kind_problems(self, settings: StackSettings) -> Problems:
        """The kind's own rules (its webhook's, beyond the replica specs); none by default."""
        return []

    def replica_type_problems(self) -> Problems:
        """The webhook's rules on replica types: each of :attr:`REQUIRED_TYPES` is given
        (:func:`.webhooks.required_types`), and each of :attr:`SINGLE_TYPES` has ``replicas: 1``
        written (:func:`.webhooks.single_replica`: the webhook sees the object before
        defaulting, so a Master without replicas is refused)."""
        problems: Problems = []
        base: tuple[str | int, ...] = ("spec", self.REPLICA_SPECS_KEY)
        specs = self.replica_specs
        for refusal in rules.required_types(base, specs, self.REQUIRED_TYPES):
            problems.append(
                (
                    base,
                    f"a {refusal.found} is required (the {self.KIND} webhook refuses a job "
                    "without one)",
                )
            )
        if specs and self.total_replicas() == 0:
            # The webhooks of v1.9.3 admit it (only PyTorchJob's counts non-Master replicas),
            # but a job without a single pod cannot run: refused.
            problems.append(
                (
                    (*base, next(iter(specs)), "replicas"),
                    "the job has no pod: at least one replica type needs replicas of 1 or more",
                )
            )
        for rtype in self.SINGLE_TYPES:
            spec = specs.get(rtype)
            if spec is None:
                continue
            written = spec.replicas if "replicas" in spec.model_fields_set else None
            for refusal in rules.single_replica((*base, rtype), written):
                if refusal.found is None:
                    problems.append(
                        (
                            (*base, rtype),
                            f"{rtype} needs replicas: 1 written out (the {self.KIND} webhook "
                            "checks the job before the operator defaults it, and refuses a "
                            "missing count)",
                        )
                    )
                else:
                    message = f"{rtype} must have exactly 1 replica, got {refusal.found}"
                    problems.append((refusal.path, message))
        return problems

    def replica_problems(self, settings: StackSettings) -> Problems:
        """validate<Kind>ReplicaSpecs (:func:`.webhooks.container_images`,
        :func:`.webhooks.default_container`): every container has an image and the default
        container is there; plus kubetrain's GPU rules for every pod template."""
        problems: Problems = []
        base: tuple[str | int, ...] = ("spec", self.REPLICA_SPECS_KEY)
        for t, spec in self.replica_specs.items():
            containers = spec.containers()
            at: tuple[str | int, ...] = (*base, t, "template", "spec", "containers")
            for refusal in rules.container_images(at, containers):
                problems.append((refusal.path, "every container needs an image"))
            for path, message in pod_gpu_problems(spec.template.get("spec"), settings.gpu_resource):
                problems.append(((*base, t, "template", "spec", *path), message))
            for refusal in rules.default_container(at, containers, spec.DEFAULT_CONTAINER):
                found = ", ".join(repr(n) for n in refusal.found) or "none"
                problems.append(
                    (
                        refusal.path,
                        f"needs a container named {spec.DEFAULT_CONTAINER!r} (found: {found}); "
                        "the operator configures and watches that container",
                    )
                )
        return problems

    def run_policy_problems(self, settings: StackSettings) -> Problems:
        """What native mode (with its workload) cannot do of the run policy and the restart
        policies, and the gang's minAvailable."""
        problems: Problems = []
        policy = self.run_policy
        workload = self.workload(settings)
        if policy.suspend and workload is POD:
            problems.append(
                (
                    ("spec", "runPolicy", "suspend"),
                    "a suspended job needs a controller to resume it; bare pods "
                    "(kubetrain:nativeWorkload pod) start at once: use nativeWorkload job or "
                    "jobset (resume by setting suspend: false), operator mode, or leave the job "
                    "out",
                )
            )
        if (
            workload is not None
            and workload.in_jobs
            and not enabled_by_default("JobPodFailurePolicy", settings.version)
        ):
            for rtype, spec in self.replica_specs.items():
                if spec.restart_policy == "ExitCode":
                    problems.append(
                        (
                            ("spec", self.REPLICA_SPECS_KEY, rtype, "restartPolicy"),
                            f"ExitCode under a {workload} needs the Job API's podFailurePolicy, "
                            f"which Kubernetes {settings.kubernetes_version} does not serve by "
                            "default (beta from 1.26): use kubetrain:kubernetesVersion 1.26 or "
                            "later, or kubetrain:nativeWorkload pod",
                        )
                    )
        if policy.managed_by == MULTIKUEUE and workload is not None:
            problems.append(
                (
                    ("spec", "runPolicy", "managedBy"),
                    f"{MULTIKUEUE} hands the job to Kueue's MultiKueue, which runs it on another "
                    "cluster (the training operator leaves it alone); native mode would create its "
                    "pods here: use operator mode",
                )
            )
        if policy.scheduling_policy is not None:
            problems += min_available_problems(
                policy.scheduling_policy.min_available,
                self.total_replicas(),
                ("spec", "runPolicy", "schedulingPolicy", "minAvailable"),
            )
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        names = [
            DerivedName(self.name, f"{self.KIND} name", DNS1035_LABEL),
            DerivedName(self.name, "job-name label value", LABEL_VALUE),
            DerivedName(self.name, "PodGroup name", DNS1123_SUBDOMAIN),
        ]
        domain = f".{settings.cluster_domain}" if settings.cluster_domain else ""
        jobset = self.workload(settings) is JOBSET
        for rtype, spec in self.replica_specs.items():
            last = f"{self.name}-{rtype.lower()}-{spec.replicas - 1}"
            names.append(DerivedName(last, "Pod and Service name", DNS1035_LABEL))
            if jobset:
                # The JobSet controller names its child Jobs <jobset>-<replicatedJob>-<jobIndex>
                # (placement.GenJobName), and its webhook wants them DNS-1035 labels.
                names.append(DerivedName(f"{last}-0", "JobSet child Job name", DNS1035_LABEL))
            names.append(
                DerivedName(
                    f"{last}.{self.namespace}.svc{domain}", self.HOST_NAME_USE, DNS1123_SUBDOMAIN
                )
            )
        return names
