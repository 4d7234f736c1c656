"""The coscheduling plugin of kubernetes-sigs/scheduler-plugins (``scheduling.x-k8s.io``)."""

from __future__ import annotations

from . import group, hand

GROUPS = (group("scheduling.x-k8s.io", hand("PodGroup", rank=16)),)
