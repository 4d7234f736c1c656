"""JAXJob job documents: Kubeflow ``kubeflow.org/v1``.

Fidelity target: Kubeflow training-operator v1.9.0, ``pkg/apis/kubeflow.org/v1/jax_types.go``
(the API: container ``jax``, port ``jaxjob-port`` 6666, restart policy Never, the replica type
Worker), ``jax_defaults.go`` (``SetDefaults_JAXJob``) and ``pkg/webhooks/jax/jaxjob_webhook.go``
(``validateJAXReplicaSpecs``: Worker as written). Everything a Kubeflow replica job shares is
in :mod:`.kubeflow`.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from .base import Strict
from .kinds import declare
from .kubeflow import (
    KubeflowJob,
    PodTemplateSpec,
    ReplicaSpec,
    RestartPolicy,
    RunPolicy,
    replica_specs_field,
    restart_policy_field,
    run_policy_field,
    template_field,
)

__all__ = ["REPLICA_TYPES", "JAXJob", "JAXJobSpec", "JAXReplicaSpec"]

REPLICA_TYPES = ("Worker",)


class JAXReplicaSpec(ReplicaSpec):
    """The Workers of a JAXJob."""

    DEFAULT_CONTAINER: ClassVar[str] = "jax"
    DEFAULT_PORT_NAME: ClassVar[str] = "jaxjob-port"
    DEFAULT_PORT: ClassVar[int] = 6666

    template: PodTemplateSpec = template_field("jax")
    restart_policy: RestartPolicy = restart_policy_field("Never")


class JAXJobSpec(Strict):
    """``spec`` of a ``kubeflow.org/v1`` JAXJob."""

    run_policy: RunPolicy = run_policy_field()
    jax_replica_specs: dict[Literal["Worker"], JAXReplicaSpec] = replica_specs_field(
        "jaxReplicaSpecs", REPLICA_TYPES
    )


@declare("Kubeflow JAXJob (training-operator v1.9): multi-process JAX, coordinator on worker 0")
class JAXJob(KubeflowJob):
    """A Kubeflow JAXJob (``kubeflow.org/v1``): Workers, the first one coordinating."""

    API_VERSION: ClassVar[str] = "kubeflow.org/v1"
    KIND: ClassVar[str] = "JAXJob"
    REPLICA_TYPES: ClassVar[tuple[str, ...]] = REPLICA_TYPES
    REPLICA_SPECS_KEY: ClassVar[str] = "jaxReplicaSpecs"
    HOST_NAME_USE: ClassVar[str] = "COORDINATOR_ADDRESS host name"

    api_version: Literal["kubeflow.org/v1"] = Field(alias="apiVersion")
    kind: Literal["JAXJob"]
    spec: JAXJobSpec
