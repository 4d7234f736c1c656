"""The MPIJob component: an MPI Operator MPIJob (``kubeflow.org/v2beta1``) deployed as the objects
kubetrain render writes for it.

Native mode: the launcher Job, the worker Pods, the job's headless Service, the hostfile
ConfigMap and the SSH key Secret (its values from ``kubetrain:credentials``, as secret outputs),
all children of the component. Operator mode: the MPIJob custom resource, for a cluster that
runs the MPI Operator.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

import pulumi

from kubetrain.builders.meta import to_selector
from kubetrain.builders.mpijob import MPIExpansion
from kubetrain.models.kinds import attach_component
from kubetrain.models.mpijob import MPIJob as MPIJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._job import expand, register_expansion
from ._kubeflow_args import RunPolicyArgs
from ._resources import Identity

__all__ = ["MPIJob", "MPIJobArgs", "MPIJobSpecArgs", "MPIReplicaSpecArgs"]

TYPE = "kubetrain:index:MPIJob"


class MPIReplicaSpecArgs(TypedDict):
    """The Launcher or the Workers of an MPIJob."""

    replicas: NotRequired[int]
    """Number of pods: 1 for the Launcher, at least 1 for Workers. Default: Launcher 1."""
    template: dict[str, Any]
    """Pod template (a Kubernetes PodTemplateSpec); its first container runs MPI."""
    restart_policy: NotRequired[str]
    """Never or OnFailure. Default: OnFailure for the Launcher, Never for Workers."""


class MPIJobSpecArgs(TypedDict):
    """The spec of a kubeflow.org/v2beta1 MPIJob."""

    mpi_replica_specs: dict[str, MPIReplicaSpecArgs]
    """Launcher (required) and Worker -> spec."""
    slots_per_worker: NotRequired[int]
    """MPI slots (processes) per worker, written into the hostfile. Default: 1."""
    run_launcher_as_worker: NotRequired[bool]
    """The launcher also runs MPI processes. Default: false."""
    run_policy: NotRequired[RunPolicyArgs]
    """Run-time policies (managedBy: kubeflow.org/mpi-operator or MultiKueue). Default: none."""
    ssh_auth_mount_path: NotRequired[str]
    """Where the SSH key pair is mounted. Default: /root/.ssh."""
    launcher_creation_policy: NotRequired[str]
    """AtStartup, or WaitForWorkersReady (operator mode). Default: AtStartup."""
    mpi_implementation: NotRequired[str]
    """OpenMPI, Intel or MPICH. Default: OpenMPI."""


class MPIJobArgs(TypedDict):
    """An MPIJob (kubeflow.org/v2beta1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations (kubetrain.io/ssh-credential names the key pair)."""
    spec: MPIJobSpecArgs
    """The MPIJob's spec, as in a kubeflow.org/v2beta1 MPIJob manifest."""
    settings: NotRequired[SettingsArgs]
    """Stack-level settings (namespace default, GPU resource name, mode...). Default: none."""
    priority_classes: NotRequired[dict[str, int]]
    (
        "Value of each PriorityClass the cluster holds, by name: a gang smaller than the job "
        "sums the pods of higher-priority replica types first, as the operator does (the "
        "API server's own classes are known). Default: none."
    )


class MPIJob(pulumi.ComponentResource):
    """An MPIJob: the launcher, workers, Service, hostfile and SSH Secret its operator creates."""

    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job (launcher and workers)."""
    launcher: pulumi.Output[str]
    """Name of the launcher Job: <job>-launcher."""
    hosts: pulumi.Output[list[str]]
    """The hosts of the hostfile, in its order."""
    mode: pulumi.Output[str]
    """How the job is deployed: native (its objects) or operator (its MPIJob)."""

    def __init__(
        self,
        name: str,
        args: MPIJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects registered elsewhere (see the other job components)."""
        expansion = expand(MPIJobDocument, args, f"MPIJob {name}")
        super().__init__(TYPE, name, None, opts)
        register_expansion(
            self, expansion, where=f"MPIJob {name}", opts=opts, exclude=exclude, warn=warn
        )
        document = expansion.loaded.job
        assert isinstance(document, MPIJobDocument)
        mpi = MPIExpansion(document, expansion.ctx)
        self.label_selector = pulumi.Output.from_input(to_selector(mpi.selector()))
        self.launcher = pulumi.Output.from_input(mpi.launcher_name)
        self.hosts = pulumi.Output.from_input(mpi.hosts())
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.register_outputs(
            {
                "labelSelector": self.label_selector,
                "launcher": self.launcher,
                "hosts": self.hosts,
                "mode": self.mode,
            }
        )

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": "MPIJob",
            "mode": self.mode,
            "labelSelector": self.label_selector,
            "launcher": self.launcher,
        }


attach_component(MPIJobDocument, MPIJob)
