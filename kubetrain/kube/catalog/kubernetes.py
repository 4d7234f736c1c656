"""Kubernetes' other API groups: hand columns of their rows (see :mod:`.core` for the sources
of ranks and Pulumi's fields). Scopes are ``kubectl api-resources --namespaced=false``'s."""

from __future__ import annotations

from .. import immutable as im
from ..apiserver import networking, policy
from ..apiserver.meta import dns_subdomain
from . import ApiChecks, Life, Scope, group, hand

_CLUSTER = Scope.CLUSTER

GROUPS = (
    group(
        "apiextensions.k8s.io",
        hand(
            "CustomResourceDefinition",
            scope=_CLUSTER,
            rank=1,
            life=Life.RETAINED,
            shared=True,
            update_rules=im._crd,
        ),
    ),
    group(
        "scheduling.k8s.io",
        hand(
            "PriorityClass",
            scope=_CLUSTER,
            rank=2,
            life=Life.PREREQUISITE,
            api=ApiChecks(dns_subdomain, policy.validate_priority_class),
        ),
        # Kubernetes' own gang (1.35+), installed where the schedulers' PodGroups are.
        hand("PodGroup", rank=16),
    ),
    group(
        "node.k8s.io",
        hand(
            "RuntimeClass",
            scope=_CLUSTER,
            rank=3,
            life=Life.PREREQUISITE,
            api=ApiChecks(dns_subdomain, policy.validate_runtime_class),
        ),
    ),
    group("policy", hand("PodDisruptionBudget", pulumi_force_new=("spec",))),
    group(
        "storage.k8s.io",
        hand("StorageClass", scope=_CLUSTER, pulumi_force_new=("parameters", "provisioner")),
        hand("CSIDriver", scope=_CLUSTER),
        hand("CSINode", scope=_CLUSTER),
        hand("VolumeAttachment", scope=_CLUSTER),
        hand("VolumeAttributesClass", scope=_CLUSTER),
    ),
    group("apiregistration.k8s.io", hand("APIService", scope=_CLUSTER)),
    group(
        "certificates.k8s.io",
        hand("CertificateSigningRequest", scope=_CLUSTER),
        hand("ClusterTrustBundle", scope=_CLUSTER),
    ),
    group(
        "admissionregistration.k8s.io",
        hand("MutatingAdmissionPolicy", scope=_CLUSTER),
        hand("MutatingAdmissionPolicyBinding", scope=_CLUSTER),
        hand("MutatingWebhookConfiguration", scope=_CLUSTER),
        hand("ValidatingAdmissionPolicy", scope=_CLUSTER),
        hand("ValidatingAdmissionPolicyBinding", scope=_CLUSTER),
        hand("ValidatingWebhookConfiguration", scope=_CLUSTER),
    ),
    group(
        "flowcontrol.apiserver.k8s.io",
        hand("FlowSchema", scope=_CLUSTER),
        hand("PriorityLevelConfiguration", scope=_CLUSTER),
    ),
    group(
        "networking.k8s.io",
        hand("NetworkPolicy", api=ApiChecks(dns_subdomain, networking.validate_network_policy)),
        hand("ClusterCIDR", scope=_CLUSTER),
        hand("IngressClass", scope=_CLUSTER),
        hand("IPAddress", scope=_CLUSTER),
        hand("ServiceCIDR", scope=_CLUSTER),
    ),
    group(
        "resource.k8s.io",
        hand("DeviceClass", scope=_CLUSTER),
        hand("DeviceTaintRule", scope=_CLUSTER),
        hand("ResourceClass", scope=_CLUSTER),
        hand("ResourceSlice", scope=_CLUSTER),
    ),
    group(
        "authorization.k8s.io",
        hand("SelfSubjectAccessReview", scope=_CLUSTER),
        hand("SelfSubjectRulesReview", scope=_CLUSTER),
        hand("SubjectAccessReview", scope=_CLUSTER),
    ),
    group(
        "authentication.k8s.io",
        hand("SelfSubjectReview", scope=_CLUSTER),
        hand("TokenReview", scope=_CLUSTER),
    ),
    group("internal.apiserver.k8s.io", hand("StorageVersion", scope=_CLUSTER)),
    group("storagemigration.k8s.io", hand("StorageVersionMigration", scope=_CLUSTER)),
)
