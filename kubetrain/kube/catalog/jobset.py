"""JobSet (``jobset.x-k8s.io``, v0.12.0, the release Kubeflow Trainer v2.3.0 pins): hand columns
of its row."""

from __future__ import annotations

from .. import immutable as im
from . import Kueue, Life, Pods, group, hand

GROUPS = (
    group(
        "jobset.x-k8s.io",
        hand(
            "JobSet",
            life=Life.REPLACED,
            # Each replicatedJob's ``replicas`` Jobs of ``parallelism`` pods.
            pods=Pods(
                items=("spec", "replicatedJobs"),
                each="list",
                template=("template", "spec", "template"),
                counts=(("replicas",), ("template", "spec", "parallelism")),
            ),
            gang=True,
            update_rules=im._jobset,
            # Its webhook's and CRD's immutable fields (.immutable).
            pulumi_replace_on_changes=(
                "spec.replicatedJobs",
                "spec.managedBy",
                "spec.successPolicy",
                "spec.failurePolicy",
                "spec.network",
                "spec.startupPolicy",
            ),
            kueue=Kueue(("spec",), multikueue=True),
            # The pod templates are typed as v0.9.1's CRD embeds them (k8s.io/api v0.33.4), the
            # CRD the shared corpora were labelled with; v0.12.0 embeds v0.36.0's, so a pod field
            # of 1.34 to 1.36 in a JobSet is refused where a v0.12.0 cluster would take it.
            crd_kubernetes=(1, 33),
            # ../shared/crds holds v0.9.1's CRD, which refuses what v0.12.0 added and native
            # mode writes (volumeClaimPolicies of the torchtune runtimes, found by make e2e):
            # the v0.12.0 model's schema validates (e2e compares it with v0.12.0's own CRD).
            model_schema=True,
        ),
    ),
)
