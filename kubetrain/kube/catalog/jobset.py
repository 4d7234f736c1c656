"""JobSet (``jobset.x-k8s.io``, v0.9.1): hand columns of its row."""

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
            # kubernetes-sigs/jobset v0.9.1: k8s.io/api v0.33.4
            crd_kubernetes=(1, 33),
        ),
    ),
)
