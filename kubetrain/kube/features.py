"""Which Job API features a Kubernetes minor version serves by default.

A field behind a feature gate that is off is dropped by the API server on create (the object is
stored without it) and the Job controller ignores it, so kubetrain writes a field only from the
minor version whose default gates serve it. Stages are those of Kubernetes' feature-gate table
(``pkg/features/kube_features.go``) and the KEPs named below; alpha gates are off by default,
beta and GA gates on. :data:`JOB_FEATURES` is the table docs/native-workloads.md shows.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["JOB_FEATURES", "Feature", "enabled_by_default", "rule_requires_pod_conditions", "stage"]

Version = tuple[int, int]


@dataclass(frozen=True)
class Feature:
    """A feature gate's stages: the minor version it became alpha, beta and GA in."""

    gate: str
    field: str
    alpha: Version
    beta: Version | None
    ga: Version | None
    kep: str


#: Job fields that arrived behind feature gates, by gate name.
JOB_FEATURES: dict[str, Feature] = {
    f.gate: f
    for f in (
        Feature("JobPodFailurePolicy", "podFailurePolicy", (1, 25), (1, 26), (1, 31), "KEP-3329"),
        Feature(
            "JobBackoffLimitPerIndex", "backoffLimitPerIndex", (1, 28), (1, 29), (1, 33), "KEP-3850"
        ),
        Feature(
            "JobPodReplacementPolicy", "podReplacementPolicy", (1, 28), (1, 29), (1, 34), "KEP-3939"
        ),
        Feature("JobSuccessPolicy", "successPolicy", (1, 30), (1, 31), (1, 33), "KEP-3998"),
        Feature("JobManagedBy", "managedBy", (1, 30), (1, 32), (1, 35), "KEP-4368"),
    )
}


def stage(gate: str, version: Version) -> str:
    """``"-"`` (not served), ``"alpha"``, ``"beta"`` or ``"GA"`` for ``gate`` at ``version``."""
    feature = JOB_FEATURES[gate]
    if feature.ga is not None and version >= feature.ga:
        return "GA"
    if feature.beta is not None and version >= feature.beta:
        return "beta"
    if version >= feature.alpha:
        return "alpha"
    return "-"


def enabled_by_default(gate: str, version: Version) -> bool:
    """Whether a cluster of ``version`` with default feature gates serves the gate's field."""
    return stage(gate, version) in ("beta", "GA")


def rule_requires_pod_conditions(version: Version) -> bool:
    """Whether a Job's ``podFailurePolicy`` rule must carry ``onPodConditions`` (an empty list in
    a rule that matches exit codes): the batch/v1 API declares it required up to 1.28 and
    optional from 1.29 (the bundled schemas agree; tests/test_native_workloads.py checks)."""
    return version < (1, 29)
