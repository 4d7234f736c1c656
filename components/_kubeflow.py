"""What every Kubeflow replica-job component (PyTorchJob, XGBoostJob, PaddleJob, JAXJob) shares:
its arguments' replica spec, its ``__init__``, its outputs and its exports.

A kind's component is its facts: the type token, the document class, the expansion class of
:mod:`kubetrain.builders` and any outputs of its own (:meth:`KubeflowJobComponent.kind_outputs`).
Its class still declares every output it has, shared ones included, each with its docstring: the
SDK's analyzer reads output docstrings from the component class's own source only
(``Analyzer.get_docstring``), so an output declared on this base alone would reach the schema
other languages see without its description. Each kind also writes a one-line ``__init__``
naming its args TypedDict, which is where the analyzer reads the argument types from.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any, ClassVar, NotRequired, TypedDict

import pulumi

from kubetrain.builders.kubeflow import ReplicaJob
from kubetrain.builders.meta import to_selector
from kubetrain.models.kubeflow import KubeflowJob

from ._job import expand, register_expansion
from ._resources import Identity

__all__ = ["KubeflowJobComponent", "ReplicaSpecArgs"]


class ReplicaSpecArgs(TypedDict):
    """One replica type of a Kubeflow job (PyTorchJob, XGBoostJob, PaddleJob, JAXJob)."""

    replicas: NotRequired[int]
    """Number of pods of this type. Default: 1 (a Master must give 1)."""
    template: dict[str, Any]
    """Pod template (a Kubernetes PodTemplateSpec) with the kind's default container."""
    restart_policy: NotRequired[str]
    (
        "Restart policy of the pods: Always, OnFailure, Never, or ExitCode (Never on the pod, "
        "retried by exit code). Default: the kind's (OnFailure for PyTorchJob and PaddleJob, "
        "Never for XGBoostJob and JAXJob)."
    )


class KubeflowJobComponent(pulumi.ComponentResource):
    """A Kubeflow replica job: the pods and services its operator would create, or its custom
    resource in operator mode."""

    #: The kind's type token, document class and expansion (set by each kind).
    _TYPE: ClassVar[str]
    _DOCUMENT: ClassVar[type[KubeflowJob]]
    _EXPANSION: ClassVar[type[ReplicaJob[Any]]]

    label_selector: pulumi.Output[str]
    service_hosts: pulumi.Output[list[str]]
    mode: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: Any,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects (apiVersion, kind, namespace, name) registered elsewhere; the
        stack program passes the objects several jobs share and registers them once."""
        kind = self._DOCUMENT.KIND
        expansion = expand(self._DOCUMENT, args, f"{kind} {name}")
        super().__init__(self._TYPE, name, None, opts)
        register_expansion(
            self, expansion, where=f"{kind} {name}", opts=opts, exclude=exclude, warn=warn
        )
        document = expansion.loaded.job
        assert isinstance(document, self._DOCUMENT)
        training = self._EXPANSION(document, expansion.ctx)
        hosts = [
            training.service_host(rs.rtype, i)
            for rs in training.replicas
            for i in range(rs.spec.replicas)
        ]
        outputs: dict[str, Any] = {
            "label_selector": to_selector(training.labels()),
            "service_hosts": hosts,
            "mode": expansion.mode,
            **self.kind_outputs(training),
        }
        for attribute, value in outputs.items():
            setattr(self, attribute, pulumi.Output.from_input(value))
        self.register_outputs(
            {pulumi_name(a): getattr(self, a) for a in outputs},
        )

    def kind_outputs(self, training: Any) -> dict[str, Any]:
        """The kind's own outputs by attribute name (the expansion gives their values)."""
        return {}

    def kind_exports(self) -> dict[str, Any]:
        """What the stack program exports of this kind beyond its kind, mode and selector."""
        return {}

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": self._DOCUMENT.KIND,
            "mode": self.mode,
            "labelSelector": self.label_selector,
            **self.kind_exports(),
        }


def pulumi_name(attribute: str) -> str:
    """An output's name as the schema spells it (``label_selector`` -> ``labelSelector``)."""
    head, *rest = attribute.split("_")
    return head + "".join(word.capitalize() for word in rest)
