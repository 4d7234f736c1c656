"""The TrainingJob component: a PaddlePaddle EDL TrainingJob deployed as the objects kubetrain
render writes for it.

Native mode: the ServiceAccount, Role and RoleBinding the pods list their peers with, the master
ReplicaSet (fault-tolerant jobs), the pserver ReplicaSet and the trainer Job, all children of
the component. Operator mode: the ``paddlepaddle.org/v1`` TrainingJob CRD and custom resource,
for a cluster that runs the EDL controller.

The arguments mirror :mod:`kubetrain.models.trainingjob` under its attribute names. The seed's
irregular JSON keys are spelled like every other field here: ``min-instance`` is
``min_instance`` (``minInstance`` in Pulumi YAML), ``VolumeMounts`` is ``volume_mounts``,
``NodeSelector`` is ``node_selector``, ``etcd-endpoint`` is ``etcd_endpoint``; ``load_job`` maps
them back to the document keys, and a Python caller may also pass a manifest's own keys.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, NotRequired, TypedDict

import pulumi

from kubetrain.builders.meta import to_selector
from kubetrain.models.kinds import attach_component
from kubetrain.models.trainingjob import MASTER_LABEL, PSERVER_LABEL, TRAINER_LABEL
from kubetrain.models.trainingjob import TrainingJob as TrainingJobDocument

from ._args import JobMetadataArgs, SettingsArgs
from ._job import expand, register_expansion
from ._resources import Identity

__all__ = [
    "MasterSpecArgs",
    "PserverSpecArgs",
    "TrainerSpecArgs",
    "TrainingJob",
    "TrainingJobArgs",
    "TrainingJobSpecArgs",
]

TYPE = "kubetrain:index:TrainingJob"


class TrainerSpecArgs(TypedDict):
    """The trainers of a TrainingJob: a batch Job of min-instance pods (spec.trainer)."""

    entrypoint: str
    """Command line of the training program, e.g. python train.py (env ENTRY)."""
    workspace: str
    """Folder holding the training program in the image (env TRAINER_PACKAGE)."""
    min_instance: int
    (
        "Trainers started (Job parallelism, env TRAINERS), at least 1; min-instance in a "
        "TrainingJob manifest."
    )
    max_instance: int
    (
        "Trainers an elastic job may scale up to; equals minInstance unless faultTolerant; "
        "max-instance in a TrainingJob manifest."
    )
    resources: NotRequired[dict[str, Any]]
    (
        "Resources of each trainer (a Kubernetes ResourceRequirements); GPUs in limits under "
        "nvidia.com/gpu or alpha.kubernetes.io/nvidia-gpu. Default: none."
    )


class PserverSpecArgs(TypedDict):
    """The parameter servers of a TrainingJob: a ReplicaSet of min-instance pods (spec.pserver)."""

    min_instance: int
    """Parameter servers started (env PSERVERS), at least 1; min-instance in a manifest."""
    max_instance: int
    """Upper bound (EDL never scales pservers); max-instance in a manifest."""
    resources: NotRequired[dict[str, Any]]
    """Resources of each parameter server (a Kubernetes ResourceRequirements). Default: none."""


class MasterSpecArgs(TypedDict, total=False):
    """The master of a fault-tolerant TrainingJob (spec.master); unused otherwise."""

    etcd_endpoint: str
    (
        "Client URLs of an etcd, comma-separated, e.g. http://etcd.infra:2379; etcd-endpoint in "
        "a manifest. Kept in the custom resource; EDL v0.2.0 and native mode never use it (the "
        "pods use the master pod's etcd sidecar)."
    )
    resources: dict[str, Any]
    (
        "Resources of the master container (a Kubernetes ResourceRequirements). Default: "
        "requests cpu 1, memory 500Mi; limits cpu 2, memory 1Gi."
    )


class TrainingJobSpecArgs(TypedDict):
    """The spec of a paddlepaddle.org/v1 TrainingJob: image, ports, passes, volumes, roles."""

    image: NotRequired[str]
    """Image of the master, pservers and trainers. Default: paddlepaddle/paddlecloud-job."""
    port: NotRequired[int]
    """First of the job's consecutive ports (PADDLE_INIT_PORT), 1-65535. Default: 7164."""
    ports_num: NotRequired[int]
    """Ports for dense parameter updates. Default: 1."""
    ports_num_for_sparse: NotRequired[int]
    """Ports for sparse parameter updates. Default: 1."""
    fault_tolerant: NotRequired[bool]
    (
        "Run a master (with etcd) so trainers may fail and the job may scale between the "
        "trainers' minInstance and maxInstance. Default: false."
    )
    passes: NotRequired[int]
    """Passes over the training data (PADDLE_INIT_NUM_PASSES). Default: 1."""
    volumes: NotRequired[list[dict[str, Any]]]
    """Volumes of every pod of the job (Kubernetes Volumes). Default: none."""
    volume_mounts: NotRequired[list[dict[str, Any]]]
    (
        "Mounts of volumes in the master, pserver and trainer containers (Kubernetes "
        "VolumeMounts); VolumeMounts in a manifest. Default: none."
    )
    image_pull_secrets: NotRequired[list[dict[str, Any]]]
    """Secrets for pulling the image, each {name: ...}. Default: none."""
    host_network: NotRequired[bool]
    """Run every pod in the node's network namespace. Default: false."""
    node_selector: NotRequired[dict[str, str]]
    """Node labels every pod of the job requires; NodeSelector in a manifest. Default: none."""
    trainer: TrainerSpecArgs
    """The trainers."""
    pserver: PserverSpecArgs
    """The parameter servers."""
    master: NotRequired[MasterSpecArgs]
    """The master (fault-tolerant jobs only). Default: an etcd sidecar and fixed resources."""


class TrainingJobArgs(TypedDict):
    """A PaddlePaddle EDL TrainingJob (paddlepaddle.org/v1) and the settings it is expanded with."""

    metadata: JobMetadataArgs
    """Name, namespace, labels and annotations of the job."""
    spec: TrainingJobSpecArgs
    """The TrainingJob's spec, as in a paddlepaddle.org/v1 TrainingJob manifest."""
    settings: NotRequired[SettingsArgs]
    (
        "Stack-level settings (namespace default, GPU resource name, mode...). "
        "Default: the defaults of a stack file."
    )


#: The pod label of each role, set by kubetrain in native mode and by the EDL controller in
#: operator mode (its teardown deletes pods by them).
ROLE_LABELS = {"master": MASTER_LABEL, "pserver": PSERVER_LABEL, "trainer": TRAINER_LABEL}


class TrainingJob(pulumi.ComponentResource):
    """A PaddlePaddle EDL TrainingJob: the objects its controller would create, or its resource."""

    label_selector: pulumi.Output[str]
    (
        "Label selector of the trainer pods, paddle-job=<name> (the EDL controller's label, "
        "also set in operator mode), e.g. for kubectl logs -l."
    )
    label_selectors: pulumi.Output[dict[str, str]]
    (
        "Role (master, pserver, trainer) -> label selector of its pods; master only for a "
        "fault-tolerant job."
    )
    mode: pulumi.Output[str]
    """How the job is deployed: native (its ReplicaSets and Job) or operator (its TrainingJob)."""
    trainers: pulumi.Output[int]
    """Trainers the job starts with (spec.trainer.min-instance)."""
    max_trainers: pulumi.Output[int]
    """Trainers an elastic job may scale up to (spec.trainer.max-instance)."""
    pservers: pulumi.Output[int]
    """Parameter servers (spec.pserver.min-instance)."""

    def __init__(
        self,
        name: str,
        args: TrainingJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects (apiVersion, kind, namespace, name) registered elsewhere; the
        stack program passes the objects several jobs share (the CRD) and registers them once."""
        expansion = expand(TrainingJobDocument, args, f"TrainingJob {name}")
        super().__init__(TYPE, name, None, opts)
        register_expansion(
            self, expansion, where=f"TrainingJob {name}", opts=opts, exclude=exclude, warn=warn
        )
        document = expansion.loaded.job
        assert isinstance(document, TrainingJobDocument)
        spec = document.spec
        roles = [r for r in ROLE_LABELS if r != "master" or spec.fault_tolerant]
        selectors = {r: to_selector({ROLE_LABELS[r]: document.name}) for r in roles}
        self.label_selector = pulumi.Output.from_input(selectors["trainer"])
        self.label_selectors = pulumi.Output.from_input(selectors)
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.trainers = pulumi.Output.from_input(spec.trainer.min_instance)
        self.max_trainers = pulumi.Output.from_input(spec.trainer.max_instance)
        self.pservers = pulumi.Output.from_input(spec.pserver.min_instance)
        self.register_outputs(
            {
                "labelSelector": self.label_selector,
                "labelSelectors": self.label_selectors,
                "mode": self.mode,
                "trainers": self.trainers,
                "maxTrainers": self.max_trainers,
                "pservers": self.pservers,
            }
        )

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": "TrainingJob",
            "mode": self.mode,
            "labelSelector": self.label_selector,
            "labelSelectors": self.label_selectors,
        }


attach_component(TrainingJobDocument, TrainingJob)
