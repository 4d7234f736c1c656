"""Kubeflow's training operator (``kubeflow.org``, v1.9.0) and MPI Operator (v0.8.0): hand
columns of their rows. Where their pod templates are comes from the kinds' declarations
(:mod:`kubetrain.models.kinds`: ``REPLICA_SPECS_KEY``)."""

from __future__ import annotations

from .. import immutable as im
from . import Kueue, Life, group, hand

# kubeflow/training-operator v1.9.0: k8s.io/api v0.31.3
_TRAINING_OPERATOR = (1, 31)
_OPERATOR = "training operator"
_QUEUED = Kueue(("spec", "runPolicy"), multikueue=True)
#: Kubeflow Trainer v2 supersedes the training operator v1 and the MPI Operator.
_TRAINJOB = ("trainer.kubeflow.org", "TrainJob")

GROUPS = (
    group(
        "kubeflow.org",
        hand(
            "TFJob",
            operator=_OPERATOR,
            kueue=_QUEUED,
            crd_kubernetes=_TRAINING_OPERATOR,
            successor=_TRAINJOB,
        ),
        hand(
            "PyTorchJob",
            operator=_OPERATOR,
            # The CRD's self == oldSelf rule on the queue (see .immutable).
            life=Life.REPLACED,
            update_rules=im._pytorchjob,
            pulumi_replace_on_changes=("spec.runPolicy.schedulingPolicy.queue",),
            kueue=_QUEUED,
            crd_kubernetes=_TRAINING_OPERATOR,
            successor=_TRAINJOB,
        ),
        hand(
            "XGBoostJob",
            operator=_OPERATOR,
            kueue=_QUEUED,
            crd_kubernetes=_TRAINING_OPERATOR,
            successor=_TRAINJOB,
        ),
        hand(
            "PaddleJob",
            operator=_OPERATOR,
            kueue=_QUEUED,
            crd_kubernetes=_TRAINING_OPERATOR,
            successor=_TRAINJOB,
        ),
        hand(
            "JAXJob",
            operator=_OPERATOR,
            kueue=_QUEUED,
            crd_kubernetes=_TRAINING_OPERATOR,
            successor=_TRAINJOB,
        ),
        # kubeflow/mpi-operator v0.8.0: k8s.io/api v0.35.1
        hand(
            "MPIJob",
            operator="mpi-operator",
            kueue=_QUEUED,
            crd_kubernetes=(1, 35),
            successor=_TRAINJOB,
        ),
    ),
)
