"""The ``apps`` API group: hand columns of its rows (see :mod:`.core` for their sources)."""

from __future__ import annotations

from .. import immutable as im
from ..apiserver import apps as api
from ..apiserver.meta import dns_label, dns_subdomain
from . import ApiChecks, Kueue, Life, Pods, group, hand
from ._pulumi import selector

_TEMPLATE = ("spec", "template")
_REPLICAS = (("spec", "replicas"),)

GROUPS = (
    group(
        "apps",
        hand(
            "ReplicaSet",
            rank=19,
            pods=Pods(template=_TEMPLATE, counts=_REPLICAS),
            gang=True,
            api=ApiChecks(dns_subdomain, api.validate_replica_set),
            update_rules=im._selector,
            pulumi_replace_on_changes=("spec.selector",),
        ),
        hand(
            "Deployment",
            rank=20,
            pods=Pods(template=_TEMPLATE, counts=_REPLICAS),
            gang=True,
            rolls=True,
            api=ApiChecks(dns_subdomain, api.validate_deployment),
            update_rules=im._selector,
            pulumi_force_new=selector("spec.selector"),
        ),
        hand(
            "StatefulSet",
            rank=21,
            life=Life.REPLACED,
            pods=Pods(template=_TEMPLATE, counts=_REPLICAS),
            gang=True,
            rolls=True,
            # Upstream ValidateStatefulSetName: a DNS label from 1.27, a subdomain before.
            api=ApiChecks(
                None, api.validate_stateful_set, name_rule_since=((1, 27), dns_label, dns_subdomain)
            ),
            update_rules=im._statefulset,
            pulumi_force_new=(
                "spec.podManagementPolicy",
                "spec.revisionHistoryLimit",
                "spec.serviceName",
                "spec.volumeClaimTemplates",
                *selector("spec.selector"),
            ),
            pulumi_fixed_name=True,
            # A StatefulSet's pods are gated, never suspended: the queue label is always
            # immutable; Kueue admits its pods as a pod group.
            kueue=Kueue(None, workload=False),
        ),
        hand(
            "DaemonSet",
            pods=Pods(template=_TEMPLATE),
            rolls=True,
            api=ApiChecks(dns_subdomain, api.validate_daemon_set),
            pulumi_force_new=selector("spec.selector"),
        ),
    ),
)
