"""Volcano (``scheduling.volcano.sh``): hand columns of its rows."""

from __future__ import annotations

from . import Scope, group, hand

GROUPS = (
    group(
        "scheduling.volcano.sh",
        hand("PodGroup", rank=16),
        # config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml (v1.15.1).
        hand("Queue", scope=Scope.CLUSTER, plural="queues"),
    ),
)
