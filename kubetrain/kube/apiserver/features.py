"""Where kube-apiserver's checks changed between Kubernetes 1.25 and 1.37: the first minor
version with each behaviour (a feature gate's first release enabled by default, or the release
that changed a check). Checks consult :func:`since` with the version being validated against.
"""

from __future__ import annotations

import functools

__all__ = ["first", "since"]

_SINCE: dict[str, tuple[int, int]] = {
    # StatefulSet names are DNS labels (kubernetes#114172), no longer DNS subdomains.
    "StatefulSetNameIsLabel": (1, 27),
    # Init containers with restartPolicy Always: sidecars (SidecarContainers, beta on).
    "SidecarContainers": (1, 29),
    # status.hostIPs in the downward API (PodHostIPs, beta on).
    "PodHostIPs": (1, 29),
    # procMount Unmasked needs hostUsers false (ProcMountType, beta on).
    "ProcMountType": (1, 31),
    # Env var names: any printable ASCII but '=' (RelaxedEnvironmentVariableValidation, beta).
    "RelaxedEnvironmentVariableValidation": (1, 32),
    # A lifecycle sleep of 0 seconds (PodLifecycleSleepActionAllowZero, beta on).
    "PodLifecycleSleepActionAllowZero": (1, 32),
    # DNS search domains may hold '_' and be '.' (RelaxedDNSSearchValidation, beta on).
    "RelaxedDNSSearchValidation": (1, 33),
    # StatefulSet spec.serviceName must be a DNS label (kubernetes#130233).
    "StatefulSetServiceNameValidation": (1, 33),
    # matchLabelKeys and mismatchLabelKeys in pod (anti-)affinity terms, merged into a Pod's
    # selector (MatchLabelKeysInPodAffinity, beta on; dropped before).
    "MatchLabelKeysInPodAffinity": (1, 31),
    # A topology spread constraint's matchLabelKeys merged into a Pod's selector and checked
    # like affinity's (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta on).
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": (1, 34),
    # Pod-level resources, spec.resources (PodLevelResources, beta on).
    "PodLevelResources": (1, 34),
    # StatefulSet pod templates and volume claim templates are validated like a Pod's
    # (kubernetes#131790, kubernetes#132212); before, only their labels and annotations were.
    "StatefulSetTemplateValidation": (1, 34),
    # Service trafficDistribution PreferSameZone and PreferSameNode (PreferSameTrafficDistribution).
    "PreferSameTrafficDistribution": (1, 34),
    # env valueFrom.fileKeyRef (EnvFiles).
    "EnvFiles": (1, 34),
    # restartPolicy on regular containers (ContainerRestartRules, beta on).
    "ContainerRestartRules": (1, 35),
    # A StatefulSet's rollingUpdate.maxUnavailable is kept and checked (MaxUnavailableStatefulSet).
    # Off by default in every release kubetrain knows: kube-apiserver v1.36.2 drops the field
    # (dropStatefulSetDisabledFields) and accepts 0, "150%" or "half" there.
    "MaxUnavailableStatefulSet": (1, 38),
    # A Service's name is a DNS label, a leading digit allowed, no longer a DNS-1035 label
    # (RelaxedServiceNameValidation, beta on from 1.36).
    "RelaxedServiceNameValidation": (1, 36),
}


@functools.cache
def since(version: tuple[int, int], feature: str) -> bool:
    """Whether ``feature`` (a key of the table above) holds in Kubernetes ``version``."""
    return version >= _SINCE[feature]


def first(feature: str) -> tuple[int, int]:
    """The first minor version in which ``feature`` holds."""
    return _SINCE[feature]
