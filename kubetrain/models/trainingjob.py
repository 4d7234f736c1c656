"""PaddlePaddle EDL ``TrainingJob`` documents (``paddlepaddle.org/v1``).

The JSON keys are the seed's (``pkg/resource`` of PaddlePaddle EDL), including its irregular
spellings: ``ports_num``, ``fault_tolerant``, ``min-instance``, ``etcd-endpoint`` and the
capitalised ``VolumeMounts`` and ``NodeSelector``. Defaults and the one validation rule are the EDL
controller's; kubetrain adds the checks it left as TODOs (min <= max, port range, volume mounts
naming volumes, GPUs, quantities).

Spellings accepted besides the seed's key (EDL's Go decoder matched JSON keys
case-insensitively, so manifests written for it use these); the custom resource kubetrain emits
always uses the seed's key:

* ``hostNetwork``: also ``HostNetwork`` (the seed's struct tag is misspelled ``josn:``, so Go
  used the field name) and ``host_network`` (the key of EDL's later v1 types);
* ``VolumeMounts``: also ``volumeMounts``;
* ``NodeSelector``: also ``nodeSelector``;
* ``imagePullSecrets``: a list of ``{name: ...}`` as in the Go type; a single ``{name: ...}``
  mapping, as the seed's ``job-1`` example writes it, is read as a one-item list.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import AliasChoices, BeforeValidator, Field, field_validator, model_validator

from ..kube.names import DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE
from ..kube.quantity import cpu_cores_ceil
from .base import DerivedName, Int32, JobDocument, K8sType, Replicas, Strict, _check_map_keys
from .kinds import declare
from .resources import gpu_count, gpu_problems

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_PASSES",
    "DEFAULT_PORT",
    "DEFAULT_PORTS_NUM",
    "DEFAULT_PORTS_NUM_FOR_SPARSE",
    "MASTER_LABEL",
    "PLURAL",
    "PSERVER_LABEL",
    "ROLES",
    "TRAINER_LABEL",
    "MasterSpec",
    "PserverSpec",
    "TrainerSpec",
    "TrainingJob",
    "TrainingJobSpec",
    "TrainingJobState",
    "TrainingJobStatus",
]

# The EDL controller's defaults, applied when a value is left out.
DEFAULT_IMAGE = "paddlepaddle/paddlecloud-job"
DEFAULT_PORT = 7164
DEFAULT_PORTS_NUM = 1
DEFAULT_PORTS_NUM_FOR_SPARSE = 1
DEFAULT_PASSES = 1

#: Resource name of the kind (the seed's ``TrainingJobs`` registration constant).
PLURAL = "trainingjobs"
#: Pod labels the controller selected each role's pods by; the pod runtime lists peers by them.
MASTER_LABEL = "paddle-job-master"
PSERVER_LABEL = "paddle-job-pserver"
TRAINER_LABEL = "paddle-job"
ROLES = ("master", "pserver", "trainer")

ResourceRequirements = Annotated[
    dict[str, Any],
    K8sType("io.k8s.api.core.v1.ResourceRequirements", "Compute resources of each instance"),
]
Volume = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Volume", "A pod volume")]
VolumeMount = Annotated[
    dict[str, Any], K8sType("io.k8s.api.core.v1.VolumeMount", "A mount of one of spec.volumes")
]
LocalObjectReference = Annotated[
    dict[str, Any], K8sType("io.k8s.api.core.v1.LocalObjectReference", "A Secret in the namespace")
]


def _one_or_list(value: Any) -> Any:
    """A single ``{name: ...}`` mapping (the seed's job-1 example) is a one-item list."""
    return [value] if isinstance(value, dict) else value


PullSecrets = Annotated[
    list[LocalObjectReference],
    BeforeValidator(
        _one_or_list, json_schema_input_type=list[LocalObjectReference] | LocalObjectReference
    ),
]

#: Field name -> the spellings documented above (the first is the canonical key). The field name
#: itself is accepted too, as for every kubetrain model.
_SPELLINGS = {
    "host_network": ("hostNetwork", "HostNetwork", "host_network"),
    "volume_mounts": ("VolumeMounts", "volumeMounts"),
    "node_selector": ("NodeSelector", "nodeSelector"),
    "image_pull_secrets": ("imagePullSecrets",),
}

_ETCD_ENDPOINTS = re.compile(r"^https?://[^\s,]+(,https?://[^\s,]+)*$")

TrainingJobState = Literal["Created", "Running", "Failed", "Succeed"]


class TrainerSpec(Strict):
    """The trainers: a batch Job of ``min-instance`` pods (``spec.trainer``)."""

    entrypoint: str = Field(
        min_length=1,
        description="Command line of the training program, e.g. `python train.py` (env ENTRY).",
    )
    workspace: str = Field(
        description="Folder holding the training program in the image (env TRAINER_PACKAGE)."
    )
    min_instance: Replicas = Field(
        alias="min-instance",
        ge=1,
        description="Trainers started (Job parallelism, env TRAINERS; at most 10000).",
    )
    max_instance: Replicas = Field(
        alias="max-instance",
        ge=1,
        description="Trainers an elastic job may scale up to; equals min-instance unless "
        "fault_tolerant.",
    )
    resources: ResourceRequirements = Field(
        default_factory=dict,
        description="Resources of each trainer; GPUs in limits under nvidia.com/gpu or "
        "alpha.kubernetes.io/nvidia-gpu. Default: none.",
    )


class PserverSpec(Strict):
    """The parameter servers: a ReplicaSet of ``min-instance`` pods (``spec.pserver``)."""

    min_instance: Replicas = Field(
        alias="min-instance",
        ge=1,
        description="Parameter servers started (env PSERVERS; at most 10000).",
    )
    max_instance: Replicas = Field(
        alias="max-instance", ge=1, description="Upper bound; EDL never scales pservers."
    )
    resources: ResourceRequirements = Field(
        default_factory=dict, description="Resources of each parameter server. Default: none."
    )


class MasterSpec(Strict):
    """The master of a fault-tolerant job (``spec.master``); unused otherwise."""

    etcd_endpoint: str | None = Field(
        default=None,
        alias="etcd-endpoint",
        json_schema_extra={"pattern": _ETCD_ENDPOINTS.pattern},
        description="Client URLs of an etcd, comma-separated, e.g. http://etcd.infra:2379. "
        "Kept in the custom resource; EDL v0.2.0 never used it (its pods always use the etcd "
        "sidecar of the master pod), and neither does native mode.",
    )

    @field_validator("etcd_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not _ETCD_ENDPOINTS.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a list of etcd client URLs, e.g. http://etcd.infra:2379 or "
                "https://a:2379,https://b:2379"
            )
        return value

    resources: ResourceRequirements = Field(
        default_factory=dict,
        description="Resources of the master container. Default: requests cpu 1, memory 500Mi; "
        "limits cpu 2, memory 1Gi (the fixed values of EDL's later updater).",
    )


class TrainingJobSpec(Strict):
    """Desired state of a TrainingJob: image, ports, passes, volumes and its three roles (the
    seed's ``TrainingJobSpec``)."""

    image: str = Field(
        default=DEFAULT_IMAGE,
        min_length=1,
        description=f"Image of the master, pservers and trainers. Default: {DEFAULT_IMAGE}.",
    )
    port: int = Field(
        default=DEFAULT_PORT,
        ge=1,
        le=65535,
        description=f"First of the job's consecutive ports (PADDLE_INIT_PORT). "
        f"Default: {DEFAULT_PORT}.",
    )
    ports_num: int = Field(
        default=DEFAULT_PORTS_NUM,
        ge=1,
        le=65535,
        description="Ports for dense parameter updates. Default: 1.",
    )
    ports_num_for_sparse: int = Field(
        default=DEFAULT_PORTS_NUM_FOR_SPARSE,
        ge=1,
        le=65535,
        description="Ports for sparse parameter updates. Default: 1.",
    )
    fault_tolerant: bool = Field(
        default=False,
        description="Run a master (with etcd) so trainers may fail and the job may scale "
        "between min-instance and max-instance. Default: false.",
    )
    passes: Int32 = Field(
        default=DEFAULT_PASSES,
        ge=1,
        description="Passes over the training data (PADDLE_INIT_NUM_PASSES). Default: 1.",
    )
    volumes: list[Volume] = Field(
        default_factory=list, description="Volumes of every pod of the job. Default: none."
    )
    volume_mounts: list[VolumeMount] = Field(
        default_factory=list,
        alias="VolumeMounts",
        validation_alias=AliasChoices(*_SPELLINGS["volume_mounts"]),
        description="Mounts of spec.volumes in the master, pserver and trainer containers "
        "(capital V, as the seed spells it). Default: none.",
    )
    image_pull_secrets: PullSecrets = Field(
        default_factory=list,
        alias="imagePullSecrets",
        description="Secrets for pulling the image (a single {name: ...} is accepted). "
        "Default: none.",
    )
    host_network: bool = Field(
        default=False,
        alias="hostNetwork",
        validation_alias=AliasChoices(*_SPELLINGS["host_network"]),
        description="Run every pod in the node's network namespace (also spelled HostNetwork "
        "or host_network). Default: false.",
    )
    node_selector: dict[str, str] = Field(
        default_factory=dict,
        alias="NodeSelector",
        validation_alias=AliasChoices(*_SPELLINGS["node_selector"]),
        description="Node labels every pod of the job requires. Default: none.",
    )
    trainer: TrainerSpec = Field(description="The trainers.")
    pserver: PserverSpec = Field(description="The parameter servers.")
    master: MasterSpec = Field(
        default_factory=MasterSpec, description="The master (fault-tolerant jobs only)."
    )

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for field, spellings in _SPELLINGS.items():
                given = [s for s in dict.fromkeys((*spellings, field)) if s in value]
                if len(given) > 1:
                    both = " and ".join(repr(s) for s in given)
                    raise ValueError(
                        f"{spellings[0]} is given {len(given)} times (as {both}); give it once"
                    )
        return value

    @field_validator("node_selector")
    @classmethod
    def _node_selector(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_map_keys(value, "node selector", LABEL_VALUE)

    def ports(self) -> list[int]:
        """The job's ports: ``ports_num + ports_num_for_sparse`` of them from ``port`` on."""
        return list(range(self.port, self.port + self.ports_num + self.ports_num_for_sparse))


class TrainingJobStatus(Strict):
    """Observed state of a TrainingJob, written by the EDL controller (never by kubetrain)."""

    state: TrainingJobState | None = Field(
        default=None, description="Created, Running, Failed or Succeed."
    )
    message: str | None = Field(default=None, description="Why the job is in its state.")


@declare(
    "PaddlePaddle EDL TrainingJob (EDL v0.2.0): pserver ReplicaSet, trainer Job, fault-tolerant "
    "master with etcd"
)
class TrainingJob(JobDocument):
    """A PaddlePaddle EDL training job: parameter servers, trainers and, when fault-tolerant, a
    master with etcd."""

    API_VERSION: ClassVar[str] = "paddlepaddle.org/v1"
    KIND: ClassVar[str] = "TrainingJob"

    api_version: Literal["paddlepaddle.org/v1"] = Field(alias="apiVersion")
    kind: Literal["TrainingJob"]
    spec: TrainingJobSpec

    # --- the seed's methods -----------------------------------------------------------------

    def elastic(self) -> bool:
        """The trainers may scale beyond min-instance (the seed's ``Elastic``)."""
        return self.spec.trainer.min_instance < self.spec.trainer.max_instance

    def gpu(self, gpu_resource: str = "nvidia.com/gpu") -> int:
        """GPUs of each trainer (the seed's ``GPU``): read from limits under ``nvidia.com/gpu``,
        ``alpha.kubernetes.io/nvidia-gpu`` or ``gpu_resource`` (EDL knew only the alpha name)."""
        return gpu_count(self.spec.trainer.resources, gpu_resource)

    def need_gpu(self, gpu_resource: str = "nvidia.com/gpu") -> bool:
        """The trainers need GPUs (the seed's ``NeedGPU``)."""
        return self.gpu(gpu_resource) > 0

    def __str__(self) -> str:
        """The document as indented JSON (the seed's ``String``)."""
        return json.dumps(self.model_dump(mode="json", by_alias=True, exclude_none=True), indent=3)

    # --- derived values ---------------------------------------------------------------------

    def role_name(self, role: str) -> str:
        """``<job>-master``, ``<job>-pserver``, ``<job>-trainer``: the controller's names."""
        return f"{self.name}-{role}"

    def service_account_name(self) -> str:
        """The ServiceAccount (and Role, RoleBinding) that lets the pods list their peers."""
        return f"{self.name}-edl"

    def trainer_count(self, gpu_resource: str = "nvidia.com/gpu") -> int:
        """``PADDLE_INIT_TRAINER_COUNT``: the trainer's GPUs, else its CPU cores rounded up.

        The controller read GPUs from requests (0 when, as usual, they are only in limits) and
        CPUs from requests only (0 when only limits are given). kubetrain reads GPUs from limits,
        and CPUs from requests, else limits (what the API server defaults requests to), else 1.
        """
        if self.need_gpu(gpu_resource):
            return self.gpu(gpu_resource)
        resources = self.spec.trainer.resources
        for part in ("requests", "limits"):
            cpu = (resources.get(part) or {}).get("cpu")
            if cpu is not None and (cores := cpu_cores_ceil(cpu)) is not None:
                return cores
        return 1

    def semantic_problems(self, settings: StackSettings) -> list[tuple[tuple[str | int, ...], str]]:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        spec = self.spec
        for role in ("trainer", "pserver"):
            part: TrainerSpec | PserverSpec = getattr(spec, role)
            if part.min_instance > part.max_instance:
                problems.append(
                    (
                        ("spec", role, "min-instance"),
                        f"min-instance {part.min_instance} is more than max-instance "
                        f"{part.max_instance}",
                    )
                )
        trainer = spec.trainer
        if not spec.fault_tolerant and trainer.min_instance < trainer.max_instance:
            # The controller's own rule: only a fault-tolerant job can change its trainer count.
            problems.append(
                (
                    ("spec", "trainer", "max-instance"),
                    f"max-instance {trainer.max_instance} must equal min-instance "
                    f"{trainer.min_instance} unless fault_tolerant is true (only a "
                    "fault-tolerant job is elastic)",
                )
            )
        ports = spec.ports()
        if ports[-1] > 65535:
            problems.append(
                (
                    ("spec", "port"),
                    f"port {spec.port} with {len(ports)} ports (ports_num + ports_num_for_sparse) "
                    f"runs to {ports[-1]}, past 65535",
                )
            )
        for role in ROLES:
            resources = getattr(spec, role).resources
            base: tuple[str | int, ...] = ("spec", role, "resources")
            # Quantities, resource names and requests against limits are the API server's
            # checks of the embedded ResourceRequirements (load.py, kube/apiserver).
            for path, message in gpu_problems(resources, settings.gpu_resource):
                problems.append(((*base, *path), message))
        volumes: dict[Any, int] = {}
        for i, volume in enumerate(spec.volumes):
            name = volume.get("name")
            if name in volumes:
                problems.append(
                    (
                        ("spec", "volumes", i, "name"),
                        f"volume {name!r} is already spec.volumes[{volumes[name]}]",
                    )
                )
            volumes.setdefault(name, i)
        for i, mount in enumerate(spec.volume_mounts):
            name = mount.get("name")
            if name not in volumes:
                known = ", ".join(repr(v) for v in volumes) or "none"
                problems.append(
                    (
                        ("spec", "VolumeMounts", i, "name"),
                        f"no volume named {name!r} in spec.volumes (volumes: {known})",
                    )
                )
        for i, secret in enumerate(spec.image_pull_secrets):
            if not secret.get("name"):
                problems.append(
                    (("spec", "imagePullSecrets", i, "name"), "needs the name of a Secret")
                )
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        name = self.name
        return [
            # The Job controller labels its pods job-name=<Job name>: 63 characters at most.
            DerivedName(self.role_name("trainer"), "trainer Job name", DNS1123_LABEL),
            DerivedName(self.role_name("pserver"), "pserver ReplicaSet name", DNS1123_SUBDOMAIN),
            DerivedName(self.role_name("master"), "master ReplicaSet name", DNS1123_SUBDOMAIN),
            DerivedName(
                self.service_account_name(),
                "ServiceAccount, Role and RoleBinding name",
                DNS1123_SUBDOMAIN,
            ),
            DerivedName(name, "paddle-job label value", LABEL_VALUE),
        ]
