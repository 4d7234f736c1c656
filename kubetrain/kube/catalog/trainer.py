"""Kubeflow Trainer (``trainer.kubeflow.org``, v2.3.0): hand columns of its rows."""

from __future__ import annotations

from .. import immutable as im
from . import Kueue, Life, group, hand

# kubeflow/trainer v2.3.0: k8s.io/api v0.36.2
_TRAINER = (1, 36)

GROUPS = (
    group(
        "trainer.kubeflow.org",
        hand(
            "TrainJob",
            # Argo CD replaces it on any change: the Trainer's and Kueue's webhooks add to its
            # spec.runtimePatches (trainer v2.3.0 TrainJobDefaulter.Default stamps each patch's
            # time; Kueue v0.19.2's TrainJob integration adds its manager's entry,
            # getKueueRuntimePatch), client-side apply replaces that list whole (a JSON merge
            # patch), and the Trainer's webhook refuses any change of it while the TrainJob runs
            # (Forbidden, which kubectl's --force does not retry as delete and create). Seen in
            # e2e/test_lifecycle.py: every sync of an edited TrainJob failed. Its other spec
            # fields are immutable anyway (trainer, runtimeRef, initializer), so a replacement
            # on any change costs no run an update would have kept; the Application leaves
            # those entries out of its comparison (kubetrain.builders.delivery.ARGOCD_IGNORED).
            # Deleted in the background: trainer v2.3.0's TrainJobReconciler.Reconcile
            # (pkg/controller/trainjob_controller.go) applies
            # the JobSet again whatever the TrainJob's deletionTimestamp, and the garbage
            # collector of a foreground delete deletes it again, for good (seen in
            # e2e/test_lifecycle.py under Argo CD's and Pulumi's default foreground).
            life=Life.REPLACED | Life.REPLACED_ON_ANY_CHANGE | Life.DELETED_IN_BACKGROUND,
            update_rules=im._trainjob,
            # The CRD's self == oldSelf rules (see .immutable).
            pulumi_replace_on_changes=(
                "spec.runtimeRef",
                "spec.trainer",
                "spec.initializer",
                "spec.managedBy",
                "spec.activeDeadlineSeconds",
                "spec.runtimePatches",
            ),
            kueue=Kueue(("spec",), multikueue=True),
            crd_kubernetes=_TRAINER,
        ),
        # The Trainer's and Kueue's TrainJob webhooks refuse a TrainJob whose runtime does not
        # exist yet (trainer v2.3.0 pkg/webhooks/trainjob_webhook.go ValidateCreate, Kueue
        # v0.19.2's TrainJob webhook): delivered first.
        hand("TrainingRuntime", life=Life.PREREQUISITE, crd_kubernetes=_TRAINER),
        hand("ClusterTrainingRuntime", life=Life.PREREQUISITE, crd_kubernetes=_TRAINER),
    ),
)
