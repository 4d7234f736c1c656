"""Volcano (``scheduling.volcano.sh``, ``batch.volcano.sh``; v1.15.1): hand columns of its rows.

Volcano's ``Job`` is not Kubernetes' ``batch/v1`` Job: its row is its own, so nothing of the
built-in's (install rank, lifecycle, pods, API-server checks, Pulumi's fields, Kueue) applies
to it, and its files in ``rendered/`` are ``job.batch.volcano.sh-<name>.yaml``
(:attr:`kubetrain.kube.catalog.Kind.file_stem`).
"""

from __future__ import annotations

from .. import immutable as im
from . import Life, Pods, Scope, group, hand

GROUPS = (
    group(
        "scheduling.volcano.sh",
        hand("PodGroup", rank=16),
        # config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml (v1.15.1).
        hand("Queue", scope=Scope.CLUSTER, plural="queues"),
    ),
    group(
        "batch.volcano.sh",
        # config/crd/volcano/bases/batch.volcano.sh_jobs.yaml (v1.15.1; not in ../shared/crds,
        # so its versions, scope and plural are written here).
        hand(
            "Job",
            versions=("v1alpha1",),
            scope=Scope.NAMESPACED,
            plural="jobs",
            # pkg/controllers/job/job_controller_actions.go syncJob (v1.15.1): each task's
            # ``replicas`` pods of its ``template`` (named by helpers.MakePodName).
            pods=Pods(
                items=("spec", "tasks"),
                each="list",
                template=("template",),
                counts=(("replicas",),),
            ),
            operator="Volcano job controller",
            # A running Job's pods are the controller's: an edit its admission refuses is
            # applied by deleting and re-creating the Job (a new run), as for the Kubeflow kinds.
            life=Life.REPLACED,
            update_rules=im._volcano_job,
            # What its admission refuses to change (.immutable): all but the counts.
            pulumi_replace_on_changes=(
                *(
                    f"spec.tasks[*].{f}"
                    for f in (
                        "name",
                        "template",
                        "policies",
                        "maxRetry",
                        "topologyPolicy",
                        "dependsOn",
                        "partitionPolicy",
                    )
                ),
                *(
                    f"spec.{f}"
                    for f in (
                        "plugins",
                        "queue",
                        "schedulerName",
                        "policies",
                        "volumes",
                        "maxRetry",
                        "ttlSecondsAfterFinished",
                        "minSuccess",
                        "networkTopology",
                        "runningEstimate",
                    )
                ),
            ),
            # volcano v1.15.1 go.mod: k8s.io/api v0.35.3
            crd_kubernetes=(1, 35),
        ),
    ),
)
