"""The TFReplicaSet component: the pods (or the Jobs running them) and headless services of one
replica type of a TFJob; under nativeWorkload jobset the JobSet belongs to the TFJob.

A TFJob creates one per replica type. It takes the whole job, because every pod's TF_CONFIG
names the pods of all replica types, and registers only its own type's objects.

No ``from __future__ import annotations`` here: the Pulumi analyzer reads the annotations.
"""

from collections.abc import Collection
from typing import TypedDict

import pulumi

from kubetrain.builders.kubeflow import REPLICA_TYPE_LABEL, to_selector
from kubetrain.builders.tfjob import TFTrainingJob
from kubetrain.models import InputError, Problem
from kubetrain.models.base import Mode
from kubetrain.models.tfjob import TFJob as TFJobDocument

from ._job import expand
from ._resources import Identity, identity, register
from ._tfjob_args import TFJobArgs

__all__ = ["TFReplicaSet", "TFReplicaSetArgs"]

TYPE = "kubetrain:index:TFReplicaSet"


class TFReplicaSetArgs(TypedDict):
    """One replica type of a TFJob, and the whole job it belongs to."""

    job: TFJobArgs
    """The TFJob: every pod's TF_CONFIG names the pods of all its replica types."""
    replica_type: str
    (
        "The replica type whose pods and services this component owns: Chief, Master, PS, "
        "Worker or Evaluator (any case)."
    )


class TFReplicaSet(pulumi.ComponentResource):
    """The pods and headless services of one replica type of a TFJob (native mode)."""

    replica_type: pulumi.Output[str]
    """The replica type as the training operator spells it: Chief, Master, PS, Worker..."""
    pod_names: pulumi.Output[list[str]]
    (
        "Names of the replicas, <job>-<type>-<index>, in index order: their services' names and "
        "their pods' hostnames (a bare pod's name too; a Job's pod adds a random suffix)."
    )
    hosts: pulumi.Output[list[str]]
    """host:port of each replica, in index order, as in the cluster part of TF_CONFIG."""
    label_selector: pulumi.Output[str]
    """Label selector of the pods of this replica type."""

    def __init__(
        self,
        name: str,
        args: TFReplicaSetArgs,
        opts: pulumi.ResourceOptions | None = None,
        *,
        exclude: Collection[Identity] = (),
    ) -> None:
        """``exclude``: objects (apiVersion, kind, namespace, name) registered elsewhere."""
        where = f"TFReplicaSet {name}"
        expansion = expand(TFJobDocument, args["job"], where)
        document = expansion.loaded.job
        assert isinstance(document, TFJobDocument)
        training = TFTrainingJob(document, expansion.ctx)
        wanted = str(args["replica_type"])
        replica = next((r for r in training.replicas if r.type_label == wanted.lower()), None)
        if replica is None:
            types = ", ".join(r.rtype for r in training.replicas)
            message = f"the job has no {wanted!r} replicas (it has {types})"
            raise InputError([Problem(where, None, ("replicaType",), message)])
        if expansion.mode == Mode.OPERATOR:
            raise InputError(
                [
                    Problem(
                        where,
                        None,
                        ("job",),
                        "the job is in operator mode: the training operator creates its pods "
                        "(use the TFJob component)",
                    )
                ]
            )
        super().__init__(TYPE, name, None, opts)
        own = [
            m
            for m in expansion.manifests
            if (m["metadata"].get("labels") or {}).get(REPLICA_TYPE_LABEL) == replica.type_label
            and identity(m) not in exclude
        ]
        register(self, own, where=where, depends_on=opts.depends_on if opts is not None else None)
        indexes = range(replica.spec.replicas)
        self.replica_type = pulumi.Output.from_input(replica.rtype)
        self.pod_names = pulumi.Output.from_input([replica.pod_name(i) for i in indexes])
        self.hosts = pulumi.Output.from_input(training.cluster_spec()[replica.type_label])
        self.label_selector = pulumi.Output.from_input(to_selector(replica.labels()))
        self.register_outputs(
            {
                "replicaType": self.replica_type,
                "podNames": self.pod_names,
                "hosts": self.hosts,
                "labelSelector": self.label_selector,
            }
        )
