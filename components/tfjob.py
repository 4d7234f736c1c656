"""The TFJob component: a Kubeflow TFJob deployed as the objects kubetrain render writes for it.

Native mode: one :class:`~components.tfreplicaset.TFReplicaSet` child per replica type, owning
that type's pods and headless services (objects of the job that belong to no replica type are
registered under the TFJob itself). Operator mode: the ``kubeflow.org/v1`` TFJob custom
resource, for a cluster that runs the training operator.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import Any

import pulumi

from kubetrain.builders.kubeflow import REPLICA_TYPE_LABEL, to_selector
from kubetrain.builders.tfjob import TFTrainingJob
from kubetrain.models.base import Mode
from kubetrain.models.kinds import attach_component
from kubetrain.models.tfjob import TFJob as TFJobDocument

from ._job import expand, report_warnings
from ._resources import Identity, identity, prerequisites_of, register
from ._tfjob_args import (
    RunPolicyArgs,
    SchedulingPolicyArgs,
    TFJobArgs,
    TFJobSpecArgs,
    TFReplicaSpecArgs,
)
from .tfreplicaset import TFReplicaSet, TFReplicaSetArgs

__all__ = [
    "RunPolicyArgs",
    "SchedulingPolicyArgs",
    "TFJob",
    "TFJobArgs",
    "TFJobSpecArgs",
    "TFReplicaSpecArgs",
]

TYPE = "kubetrain:index:TFJob"


class TFJob(pulumi.ComponentResource):
    """A Kubeflow TFJob: the pods and services its operator would create, or its custom resource."""

    cluster_spec: pulumi.Output[dict[str, list[str]]]
    (
        "Lower-case replica type -> host:port of each replica, in index order: the cluster part "
        "of every pod's TF_CONFIG."
    )
    service_hosts: pulumi.Output[list[str]]
    (
        "DNS name of every replica's headless service, <pod>.<namespace>.svc[.<clusterDomain>], "
        "by replica type (Chief, Master, PS, Worker, Evaluator) and index."
    )
    label_selector: pulumi.Output[str]
    """Label selector of every pod of the job, e.g. for kubectl get pods -l."""
    mode: pulumi.Output[str]
    """How the job is deployed: native (its pods and services) or operator (its TFJob)."""

    def __init__(
        self,
        name: str,
        args: TFJobArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
        warn: bool = True,
    ) -> None:
        """``exclude``: objects (apiVersion, kind, namespace, name) registered elsewhere; the
        stack program passes the objects several jobs share and registers them once."""
        expansion = expand(TFJobDocument, args, f"TFJob {name}")
        super().__init__(TYPE, name, None, opts)
        if warn:
            report_warnings(self, expansion)
        where = f"TFJob {name}"
        depends_on = opts.depends_on if opts is not None else None
        document = expansion.loaded.job
        assert isinstance(document, TFJobDocument)
        training = TFTrainingJob(document, expansion.ctx)
        manifests = [m for m in expansion.manifests if identity(m) not in exclude]
        self._replica_sets: dict[str, TFReplicaSet] = {}
        if expansion.mode == Mode.OPERATOR:
            register(self, manifests, where=where, depends_on=depends_on)
        else:
            own = [m for m in manifests if REPLICA_TYPE_LABEL not in _labels(m)]
            registered = register(self, own, where=where, depends_on=depends_on)
            child_opts = pulumi.ResourceOptions(
                parent=self, depends_on=list(prerequisites_of(registered))
            )
            if depends_on is not None:
                child_opts = pulumi.ResourceOptions.merge(
                    child_opts, pulumi.ResourceOptions(depends_on=depends_on)
                )
            for rs in training.replicas:
                child_args: TFReplicaSetArgs = {"job": args, "replica_type": rs.rtype}
                self._replica_sets[rs.rtype] = TFReplicaSet(
                    f"{name}-{rs.type_label}", child_args, child_opts, exclude=exclude
                )
        hosts = [
            training.service_host(rs.rtype, i)
            for rs in training.replicas
            for i in range(rs.spec.replicas)
        ]
        self.cluster_spec = pulumi.Output.from_input(training.cluster_spec())
        self.service_hosts = pulumi.Output.from_input(hosts)
        self.label_selector = pulumi.Output.from_input(to_selector(training.labels()))
        self.mode = pulumi.Output.from_input(expansion.mode)
        self.register_outputs(
            {
                "clusterSpec": self.cluster_spec,
                "serviceHosts": self.service_hosts,
                "labelSelector": self.label_selector,
                "mode": self.mode,
            }
        )

    @property
    def replica_sets(self) -> dict[str, TFReplicaSet]:
        """The TFReplicaSet of each replica type (Chief, PS, Worker...); empty in operator
        mode, where the training operator creates the pods."""
        return dict(self._replica_sets)

    def exports(self) -> dict[str, Any]:
        """What the stack program exports for this job."""
        return {
            "kind": "TFJob",
            "mode": self.mode,
            "labelSelector": self.label_selector,
            "clusterSpec": self.cluster_spec,
        }


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = obj["metadata"].get("labels") or {}
    return labels


attach_component(TFJobDocument, TFJob, children=(TFReplicaSet,))
