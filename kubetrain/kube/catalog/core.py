"""The core API group (``v1``): hand columns of its rows.

Install ranks follow Helm's install order (``pkg/release/util/kind_sorter.go``): what others
need first. pulumi-kubernetes' ``forceNew`` fields are its ``provider/pkg/provider/diff.go``
(v4.32.0); ``replaceOnChanges`` is what kubetrain adds where the API server refuses an update
the provider would make in place (:mod:`kubetrain.delivery.engines`).
"""

from __future__ import annotations

from .. import immutable as im
from ..apiserver import core as api
from ..apiserver import policy
from ..apiserver.features import first
from ..apiserver.meta import dns1035_label, dns_label, dns_subdomain
from . import ApiChecks, Life, Pods, Scope, group, hand
from ._pulumi import container_fields, selector

GROUPS = (
    group(
        "",
        hand(
            "Namespace",
            scope=Scope.CLUSTER,
            rank=0,
            life=Life.RETAINED | Life.PREREQUISITE,
            shared=True,
            api=ApiChecks(dns_label, api.validate_namespace),
            update_rules=im._namespace,
        ),
        hand(
            "ResourceQuota",
            rank=4,
            life=Life.PREREQUISITE,
            api=ApiChecks(dns_subdomain, policy.validate_resource_quota),
            update_rules=im._resource_quota,
            pulumi_force_new=("spec.scopes",),
        ),
        hand(
            "LimitRange",
            rank=5,
            life=Life.PREREQUISITE,
            api=ApiChecks(dns_subdomain, policy.validate_limit_range),
        ),
        hand(
            "ServiceAccount",
            external="serviceAccounts",
            rank=6,
            life=Life.PREREQUISITE,
            api=ApiChecks(dns_subdomain),
        ),
        hand(
            "Secret",
            external="secrets",
            rank=9,
            api=ApiChecks(dns_subdomain, api.validate_secret),
            update_rules=im._secret,
            # Secrets replace on data too while the provider's enableSecretMutable is off.
            pulumi_force_new=("type", "stringData", "data"),
        ),
        hand(
            "ConfigMap",
            external="configMaps",
            rank=10,
            api=ApiChecks(dns_subdomain, api.validate_config_map),
            update_rules=im._immutable_data,
            # ... and ConfigMaps on data while enableConfigMapMutable is off, its default.
            pulumi_force_new=("binaryData", "data"),
        ),
        hand(
            "PersistentVolumeClaim",
            external="persistentVolumeClaims",
            rank=11,
            life=Life.DATA,
            api=ApiChecks(dns_subdomain, api.validate_pvc),
            update_rules=im._pvc,
            pulumi_force_new=(
                "spec.accessModes",
                "spec.storageClassName",
                "spec.volumeName",
                *selector("spec.selector"),
            ),
            pulumi_replace_on_changes=("spec.volumeMode", "spec.dataSource", "spec.dataSourceRef"),
        ),
        hand("PersistentVolume", scope=Scope.CLUSTER, life=Life.DATA),
        hand(
            "Service",
            rank=17,
            # Upstream ValidateServiceName (v1.36.2, pkg/apis/core/validation): a DNS label under
            # RelaxedServiceNameValidation ("1abc" is a valid name), a DNS-1035 label before.
            api=ApiChecks(
                None,
                api.validate_service,
                name_rule_since=(first("RelaxedServiceNameValidation"), dns_label, dns1035_label),
            ),
            update_rules=im._service,
            pulumi_force_new=("spec.clusterIP",),
            pulumi_replace_on_changes=("spec.clusterIPs",),
        ),
        hand(
            "Pod",
            rank=18,
            life=Life.REPLACED,
            pods=Pods(),
            gang=True,
            api=ApiChecks(dns_subdomain, api.validate_pod),
            update_rules=im._pod,
            pulumi_force_new=(
                "spec.affinity",
                "spec.automountServiceAccountToken",
                "spec.dnsConfig",
                "spec.dnsPolicy",
                "spec.enableServiceLinks",
                "spec.hostAliases",
                "spec.hostIPC",
                "spec.hostNetwork",
                "spec.hostPID",
                "spec.hostname",
                "spec.imagePullSecrets",
                "spec.nodeName",
                "spec.nodeSelector",
                "spec.overhead",
                "spec.preemptionPolicy",
                "spec.priority",
                "spec.priorityClassName",
                "spec.readinessGates",
                "spec.restartPolicy",
                "spec.runtimeClassName",
                "spec.schedulerName",
                "spec.securityContext",
                "spec.serviceAccount",
                "spec.serviceAccountName",
                "spec.shareProcessNamespace",
                "spec.subdomain",
                "spec.terminationGracePeriodSeconds",
                "spec.volumes",
                *container_fields("spec.containers[*]", "spec.initContainers[*]"),
            ),
            # A Pod's whole spec: the server lets only images, activeDeadlineSeconds, added
            # tolerations and removed scheduling gates change, and the provider replaces on
            # images already, but updates removed tolerations, topology spread, scheduling
            # gates, envFrom, startup probes, a removed container... in place, which the
            # server refuses.
            pulumi_replace_on_changes=("spec",),
            pulumi_fixed_name=True,
        ),
        hand(
            "PodTemplate",
            pods=Pods(template=("template",)),
            api=ApiChecks(dns_subdomain, api.validate_pod_template),
        ),
        hand(
            "ReplicationController",
            pods=Pods(template=("spec", "template"), counts=(("spec", "replicas"),)),
            gang=True,
            api=ApiChecks(dns_subdomain, api.validate_replication_controller),
        ),
        hand("Node", scope=Scope.CLUSTER),
        hand("ComponentStatus", scope=Scope.CLUSTER),
    ),
)
