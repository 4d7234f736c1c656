"""The training operator's validating webhooks, one function per rule, each over the plain values
the webhook reads (training-operator v1.9.3, ``pkg/webhooks/<kind>/*_webhook.go`` and
``pkg/common/util/webhooks.go``).

Both sides call the same rule: ``validate`` reports its :class:`Refusal` in the webhook's own
words, as the operator's webhook refuses a created object (``kubetrain.validate.webhooks``,
rule ``webhook``), and loading a job document words it for the stack file, at the field's line
(the ``semantic_problems`` of :class:`~.kubeflow.KubeflowJob` and its kinds). Rules the schema
of a job document already holds at load time (the replica types, a pod template's containers,
``runPolicy.managedBy``) and the name's (derived names) run in ``validate`` only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..kube.names import DNS1035_LABEL

__all__ = [
    "JOB_CONTROLLERS",
    "Refusal",
    "chief_or_master",
    "container_images",
    "containers_specified",
    "default_container",
    "elastic_nproc",
    "elastic_worker",
    "managed_by",
    "name_label",
    "replica_count",
    "replica_type",
    "required_types",
    "single_replica",
]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Refusal:
    """One refusal: the field the webhook names, its message (``field.Error`` without the
    path), and what it found, for a wording of its own (a count, the containers' names)."""

    path: Path
    message: str
    found: Any = None


def name_label(name: str) -> Iterator[Refusal]:
    """``validate<Kind>``: ``NameIsDNS1035Label`` of ``metadata.name``."""
    if problem := DNS1035_LABEL.check(name):
        yield Refusal(("metadata", "name"), f"should match: {problem}")


#: ``runPolicy.managedBy`` values ``util.ValidateRunPolicy`` admits.
JOB_CONTROLLERS = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


def managed_by(manager: Any) -> Iterator[Refusal]:
    """``util.ValidateRunPolicy`` (every kind's but JAXJob's): a known controller."""
    if manager is not None and manager not in JOB_CONTROLLERS:
        supported = ", ".join(f'"{c}"' for c in JOB_CONTROLLERS)
        message = f'Unsupported value: "{manager}": supported values: {supported}'
        yield Refusal(("spec", "runPolicy", "managedBy"), message)


def elastic_worker(path: Path, rtypes: Collection[str]) -> Iterator[Refusal]:
    """PyTorchJob's ``validateSpec``: an elastic policy needs a Worker (``path``: the replica
    specs)."""
    if "Worker" not in rtypes:
        message = "Required value: must be configured if elastic policy is used"
        yield Refusal((*path, "Worker"), message)


def elastic_nproc(elastic_nproc_per_node: Any, nproc_per_node: Any) -> Iterator[Refusal]:
    """PyTorchJob's ``validateSpec``: the elastic policy's deprecated ``nProcPerNode`` is not
    given with ``spec.nprocPerNode``."""
    if elastic_nproc_per_node is not None and nproc_per_node is not None:
        yield Refusal(
            ("spec", "elasticPolicy", "nProcPerNode"),
            "Forbidden: must not be used with spec.nprocPerNode",
        )


def replica_type(path: Path, rtype: str, types: Sequence[str]) -> Iterator[Refusal]:
    """``validate<Kind>ReplicaSpecs``: the replica type is one of the kind's."""
    if rtype not in types:
        supported = ", ".join(f'"{t}"' for t in types)
        yield Refusal(path, f'Unsupported value: "{rtype}": supported values: {supported}')


def containers_specified(path: Path, containers: Sequence[Any]) -> Iterator[Refusal]:
    """``validate<Kind>ReplicaSpecs``: the pod template has containers (``path`` is theirs)."""
    if not containers:
        yield Refusal(path, "Required value: must be specified")


def container_images(path: Path, containers: Sequence[Any]) -> Iterator[Refusal]:
    """``validate<Kind>ReplicaSpecs``: every container has an image (``path``: the
    containers')."""
    for i, container in enumerate(containers):
        if not isinstance(container, Mapping) or not container.get("image"):
            yield Refusal((*path, i, "image"), "Required value: must be required")


def default_container(
    path: Path, containers: Sequence[Any], name: str, *, quoted: bool = False
) -> Iterator[Refusal]:
    """``validate<Kind>ReplicaSpecs``: a container has the kind's default name (PaddleJob's
    webhook quotes it); ``found`` holds the containers' names."""
    names = [c.get("name") if isinstance(c, Mapping) else None for c in containers]
    if name not in names:
        shown = f'"{name}"' if quoted else name
        message = f"Required value: must have at least one container with name {shown}"
        yield Refusal(path, message, names)


def single_replica(path: Path, replicas: Any) -> Iterator[Refusal]:
    """``validate<Kind>ReplicaSpecs``: a Master (PyTorchJob's, XGBoostJob's) has ``replicas:
    1`` written, the object being checked before the controller defaults it; ``found`` is the
    count written (``None``: none)."""
    if replicas != 1:
        yield Refusal((*path, "replicas"), "Forbidden: must be 1", replicas)


def replica_count(path: Path, replicas: Any) -> Iterator[Refusal]:
    """``validatePyTorchReplicaSpecs``: a replica type other than the Master, its count written,
    has at least 1 replica."""
    if isinstance(replicas, int) and replicas < 1:
        yield Refusal((*path, "replicas"), "Forbidden: must be at least 1", replicas)


def chief_or_master(path: Path, rtypes: Collection[str]) -> Iterator[Refusal]:
    """``validateTFReplicaSpecs``: at most one of Chief and Master (``path``: the replica
    specs)."""
    if sum(t in ("Chief", "Master") for t in rtypes) > 1:
        yield Refusal(path, "Forbidden: must not have more than 1 Chief or Master role")


def required_types(
    path: Path, rtypes: Collection[str], required: Sequence[str]
) -> Iterator[Refusal]:
    """``validateXGBReplicaSpecs``: each required replica type (the Master) is given; ``found``
    is the type."""
    for rtype in required:
        if rtype not in rtypes:
            yield Refusal((*path, rtype), "Required value: must be present", rtype)
