"""MPIJob job documents: ``kubeflow.org/v2beta1``, the MPI Operator's.

Fidelity target: kubeflow/mpi-operator v0.8.0, ``pkg/apis/kubeflow/v2beta1/types.go`` (the API),
``default.go`` (``SetDefaults_MPIJob``: slotsPerWorker 1, sshAuthMountPath ``/root/.ssh``,
mpiImplementation OpenMPI, launcherCreationPolicy AtStartup, cleanPodPolicy None; a Launcher
defaults to one replica and restart policy OnFailure, a Worker to zero replicas and Never) and
``pkg/apis/kubeflow/validation/validation.go`` (``ValidateMPIJob``). The operator validates the
job after defaulting it, in its controller (``syncHandler``): an invalid job is created, then
never runs, with a ValidationError event. kubetrain refuses it at load time instead.

training-operator's own ``kubeflow.org/v1`` MPIJob is deprecated and not accepted: users run this
one, with the MPI Operator (operator mode) or as the objects the MPI Operator creates (native
mode, :mod:`kubetrain.builders.mpijob`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from ..kube.names import DNS1035_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE
from .base import DerivedName, Int32, JobDocument, Mode, OutputEstimate, Replicas, Strict, upstream
from .kinds import declare
from .kubeflow import PodTemplateSpec, RunPolicy
from .scheduling import min_available_problems
from .secrets import credential_name_problem

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "MPI_OPERATOR",
    "SSH_CREDENTIAL_ANNOTATION",
    "MPIJob",
    "MPIJobSpec",
    "MPIReplicaSpec",
    "MPIRunPolicy",
]

Problems = list[tuple[tuple[str | int, ...], str]]

#: runPolicy.managedBy values ValidateMPIJob admits (validManagedBy).
MPI_OPERATOR = "kubeflow.org/mpi-operator"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
#: Annotation naming the credential that holds the job's SSH key pair in native mode (the MPI
#: Operator generates the pair itself; kubetrain never does: see builders/mpijob.py).
SSH_CREDENTIAL_ANNOTATION = "kubetrain.io/ssh-credential"


class MPIRunPolicy(RunPolicy):
    """Run-time policies of an MPIJob (``spec.runPolicy``, the v2beta1 RunPolicy): the launcher
    Job's TTL, deadline and backoff limit, the gang, suspension."""

    managed_by: Literal["kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"] | None = Field(  # type: ignore[assignment]
        default=None,
        alias="managedBy",
        description="Controller that reconciles the job: kubeflow.org/mpi-operator, or "
        "kueue.x-k8s.io/multikueue (operator mode only). Default: the MPI Operator.",
        json_schema_extra=upstream(enum=None),
    )


class MPIReplicaSpec(Strict):
    """The Launcher or the Workers of an MPIJob."""

    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    replicas: Replicas | None = Field(
        default=None,
        ge=0,
        description="Number of pods (a Launcher: 1; Workers: at least 1). Default: a Launcher "
        "1, Workers 0, which the MPI Operator refuses.",
        json_schema_extra=upstream(minimum=None, maximum=None),
    )
    template: PodTemplateSpec = Field(
        description="Pod template; its first container runs MPI (the launcher's mpirun, the "
        "workers' sshd unless it has a command or args)."
    )
    restart_policy: Literal["Never", "OnFailure"] | None = Field(
        default=None,
        alias="restartPolicy",
        description="Pod restart policy: Never or OnFailure. Default: OnFailure for the "
        "Launcher, Never for Workers.",
        json_schema_extra=upstream(enum=None),
    )

    def containers(self) -> list[dict[str, Any]]:
        containers = (self.template.get("spec") or {}).get("containers") or []
        return [c for c in containers if isinstance(c, dict)]


class MPIJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v2beta1`` MPIJob."""

    slots_per_worker: Int32 | None = Field(
        default=None,
        alias="slotsPerWorker",
        ge=0,
        description="MPI slots (processes) per worker, written into the hostfile. Default: 1.",
        json_schema_extra=upstream(minimum=None, maximum=None),
    )
    run_launcher_as_worker: bool | None = Field(
        default=None,
        alias="runLauncherAsWorker",
        description="The launcher also runs MPI processes (it is listed in the hostfile and "
        "keeps its GPUs). Default: false.",
    )
    run_policy: MPIRunPolicy = Field(
        default_factory=MPIRunPolicy, alias="runPolicy", description="Run-time policies."
    )
    mpi_replica_specs: dict[Literal["Launcher", "Worker"], MPIReplicaSpec] = Field(
        alias="mpiReplicaSpecs", description="Launcher (required) and Worker -> spec."
    )
    ssh_auth_mount_path: str | None = Field(
        default=None,
        alias="sshAuthMountPath",
        min_length=1,
        description="Where the SSH key pair is mounted. Default: /root/.ssh.",
        json_schema_extra=upstream(minLength=None),
    )
    launcher_creation_policy: Literal["AtStartup", "WaitForWorkersReady"] | None = Field(
        default=None,
        alias="launcherCreationPolicy",
        description="When the launcher starts: AtStartup, or WaitForWorkersReady (operator mode). "
        "Default: AtStartup.",
        json_schema_extra=upstream(enum=None),
    )
    mpi_implementation: Literal["OpenMPI", "Intel", "MPICH"] | None = Field(
        default=None,
        alias="mpiImplementation",
        description="OpenMPI, Intel or MPICH: the hostfile's format and the launcher's env. "
        "Default: OpenMPI.",
    )


@declare("MPI Operator MPIJob (kubeflow.org/v2beta1, mpi-operator v0.8): MPI over SSH")
class MPIJob(JobDocument):
    """An MPIJob (``kubeflow.org/v2beta1``): a launcher Job that runs ``mpirun`` over SSH into
    worker pods, which a hostfile lists."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v2beta1"
    KIND: ClassVar[str] = "MPIJob"
    REPLICA_SPECS_KEY: ClassVar[str] = "mpiReplicaSpecs"
    GANG_READS_PRIORITIES: ClassVar[bool] = True  # calPGMinResource
    model_config = ConfigDict(json_schema_extra=upstream(required=None))

    api_version: Literal["kubeflow.org/v2beta1"] = Field(alias="apiVersion")
    kind: Literal["MPIJob"]
    spec: MPIJobSpec

    # --- the defaults SetDefaults_MPIJob gives -------------------------------------------------

    @property
    def slots(self) -> int:
        return 1 if self.spec.slots_per_worker is None else self.spec.slots_per_worker

    @property
    def launcher_as_worker(self) -> bool:
        return bool(self.spec.run_launcher_as_worker)

    @property
    def ssh_mount_path(self) -> str:
        return self.spec.ssh_auth_mount_path or "/root/.ssh"

    @property
    def implementation(self) -> str:
        return self.spec.mpi_implementation or "OpenMPI"

    @property
    def launcher(self) -> MPIReplicaSpec:
        return self.spec.mpi_replica_specs["Launcher"]

    @property
    def worker(self) -> MPIReplicaSpec | None:
        return self.spec.mpi_replica_specs.get("Worker")

    def worker_replicas(self) -> int:
        """The workers (workerReplicas: a missing Worker or count is 0)."""
        worker = self.worker
        return worker.replicas or 0 if worker is not None else 0

    def restart_policy(self, rtype: str) -> str:
        """The replica's restart policy, defaulted (setDefaultsTypeLauncher / ...Worker)."""
        spec = self.spec.mpi_replica_specs[rtype]  # type: ignore[index]
        return spec.restart_policy or ("OnFailure" if rtype == "Launcher" else "Never")

    def defaulted_document(self) -> dict[str, Any]:
        """The document as SetDefaults_MPIJob leaves it, for operator mode."""
        doc = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        spec = doc["spec"]
        spec.setdefault("slotsPerWorker", 1)
        spec.setdefault("sshAuthMountPath", "/root/.ssh")
        spec.setdefault("mpiImplementation", "OpenMPI")
        spec.setdefault("launcherCreationPolicy", "AtStartup")
        spec.setdefault("runPolicy", {}).setdefault("cleanPodPolicy", "None")
        for rtype, replicas in (("Launcher", 1), ("Worker", 0)):
            if rtype in spec["mpiReplicaSpecs"]:
                replica = spec["mpiReplicaSpecs"][rtype]
                replica.setdefault("replicas", replicas)
                replica.setdefault("restartPolicy", self.restart_policy(rtype))
        return doc

    # --- the checks ---------------------------------------------------------------------------

    def semantic_problems(self, settings: StackSettings) -> Problems:
        """ValidateMPIJob, after SetDefaults_MPIJob (as the operator's syncHandler runs them),
        and what native mode cannot do."""
        problems: Problems = []
        base: tuple[str | int, ...] = ("spec", "mpiReplicaSpecs")
        specs = self.spec.mpi_replica_specs
        if "Launcher" not in specs:
            problems.append(
                (
                    base,
                    "a Launcher is required (the MPI Operator's ValidateMPIJob refuses a job "
                    "without one)",
                )
            )
        else:
            replicas = self.launcher.replicas
            if replicas is not None and replicas != 1:
                problems.append(((*base, "Launcher", "replicas"), f"must be 1, got {replicas}"))
        worker = self.worker
        if worker is not None and (worker.replicas or 0) < 1:
            problems.append(
                (
                    (*base, "Worker", "replicas"),
                    "must be greater than or equal to 1 (the MPI Operator defaults a missing "
                    f"count to 0), got {worker.replicas or 0}",
                )
            )
        for rtype, spec in specs.items():
            if not spec.containers():
                problems.append(
                    ((*base, rtype, "template", "spec", "containers"), "must define a container")
                )
            for i, container in enumerate(spec.containers()):
                if not container.get("image"):
                    path = (*base, rtype, "template", "spec", "containers", i, "image")
                    problems.append((path, "every container needs an image"))
        credential = self.metadata.annotations.get(SSH_CREDENTIAL_ANNOTATION)
        if credential is not None and (problem := credential_name_problem(credential)):
            problems.append((("metadata", "annotations", SSH_CREDENTIAL_ANNOTATION), problem))
        problems += self._native_problems(settings)
        scheduling = self.spec.run_policy.scheduling_policy
        if scheduling is not None:
            problems += min_available_problems(
                scheduling.min_available,
                1 + self.worker_replicas(),
                ("spec", "runPolicy", "schedulingPolicy", "minAvailable"),
            )
        return problems

    def _native_problems(self, settings: StackSettings) -> Problems:
        if self.mode(settings) != Mode.NATIVE:
            return []
        problems: Problems = []
        if self.spec.run_policy.managed_by == MULTIKUEUE:
            problems.append(
                (
                    ("spec", "runPolicy", "managedBy"),
                    f"{MULTIKUEUE} hands the job to Kueue's MultiKueue, which runs it on another "
                    "cluster; native mode would create its pods here: use operator mode",
                )
            )
        return problems

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        """validateMPIJobName: the last worker's hostname is a DNS-1035 label; and the names of
        the launcher, the ConfigMap, the Secret and the hosts of the hostfile."""
        last = max(self.worker_replicas(), 1) - 1
        domain = f".{settings.cluster_domain}" if settings.cluster_domain else ""
        return [
            DerivedName(self.name, "MPIJob name and Service name", DNS1035_LABEL),
            DerivedName(self.name, "job-name label value", LABEL_VALUE),
            DerivedName(f"{self.name}-worker-{last}", "worker pod hostname", DNS1035_LABEL),
            DerivedName(f"{self.name}-launcher", "launcher Job name", DNS1035_LABEL),
            DerivedName(f"{self.name}-config", "ConfigMap name", DNS1123_SUBDOMAIN),
            DerivedName(
                f"{self.name}-worker-{last}.{self.name}.{self.namespace}.svc{domain}",
                "hostfile host name",
                DNS1123_SUBDOMAIN,
            ),
        ]

    def output_estimate(self, settings: StackSettings, mode: Mode) -> OutputEstimate:
        """A Pod per worker, the launcher Job, a Service, a ConfigMap whose hostfile lists every
        worker, the SSH Secret; operator mode the custom resource only."""
        templates = len(json.dumps(self.launcher.template)) + len(
            json.dumps(self.worker.template if self.worker else {})
        )
        workers = self.worker_replicas()
        path: tuple[str | int, ...] = ("spec", "mpiReplicaSpecs", "Worker", "replicas")
        if mode == Mode.OPERATOR:
            size = 2048 + templates
            return OutputEstimate(1, size, size, path)
        hostfile = workers * (2 * len(self.name) + len(self.namespace) + 40)
        pod = 3000 + 2 * templates
        total = (workers + 1) * pod + 2 * hostfile + 4096
        return OutputEstimate(workers + 5, total, max(pod, 2 * hostfile + 1024), path)
