"""Kinds of projects kubetrain knows only a little of, without their CRDs in ../shared/crds:
each project's CRD ``spec.scope`` and plural as published, and what Kueue does with them."""

from __future__ import annotations

from . import Kueue, Scope, group, hand

GROUPS = (
    # KubeRay: Kueue admits a RayJob as one workload (Kueue v0.19.2 pkg/controller/jobs/rayjob).
    group(
        "ray.io", hand("RayJob", scope=Scope.NAMESPACED, plural="rayjobs", kueue=Kueue(("spec",)))
    ),
    group("bitnami.com", hand("SealedSecret", scope=Scope.NAMESPACED, plural="sealedsecrets")),
)
