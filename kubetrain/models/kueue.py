"""Kueue's objects as plain manifests of a stack: ``LocalQueue``, ``ClusterQueue``,
``ResourceFlavor``, ``WorkloadPriorityClass``, ``Cohort`` and ``Topology``
(``kueue.x-k8s.io/v1beta2``, and ``v1beta1``, which Kueue v0.19.2 still serves).

Fidelity target: kubernetes-sigs/kueue v0.19.2, ``apis/kueue/v1beta2/*_types.go`` and the CRDs
generated from them (``config/components/crd/bases/``): the models describe their fields,
required, typed and bounded as the CRDs do, with their list-map keys and CEL rules
(tests/test_apiserver_corpus_custom.py compares them with ``../shared/crds``). Fields kubetrain
does not read (preemption, fair sharing...) are kept as the CRD's objects without more checks.

What kubetrain reads of them is :mod:`kubetrain.kueue`: which queue a job names, and the quota
``kubetrain plan`` counts the jobs against.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field
from pydantic.config import JsonDict

from .base import K8sType, Strict, resource_kind
from .scheduling import ObjectMeta, QuantityValue

__all__ = [
    "KUEUE_V1BETA1",
    "KUEUE_V1BETA2",
    "ClusterQueue",
    "ClusterQueueV1Beta1",
    "LocalQueue",
    "LocalQueueV1Beta1",
]

KUEUE_V1BETA2 = "kueue.x-k8s.io/v1beta2"
KUEUE_V1BETA1 = "kueue.x-k8s.io/v1beta1"
#: A Kueue object's name as its CRD checks it (DNS-1123 subdomain).
Name = Annotated[
    str,
    Field(
        max_length=253, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    ),
]
BY_NAME: JsonDict = {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}
ATOMIC: JsonDict = {"x-kubernetes-list-type": "atomic"}

Toleration = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Toleration", "A toleration")]
Taint = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Taint", "A node taint")]
LabelSelector = Annotated[
    dict[str, Any],
    K8sType("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", "A label selector"),
]


class FairSharing(Strict):
    weight: QuantityValue | None = Field(
        default=None, description="Share of unused quota this queue gets. Default: 1."
    )


class ResourceQuota(Strict):
    """The quota of one resource in one flavor."""

    name: str = Field(description="Resource name (cpu, memory, nvidia.com/gpu...).")
    nominal_quota: QuantityValue = Field(
        alias="nominalQuota", description="Quota of the queue for this resource and flavor."
    )
    borrowing_limit: QuantityValue | None = Field(
        default=None,
        alias="borrowingLimit",
        description="Most the queue may borrow from its cohort. Default: unlimited.",
    )
    lending_limit: QuantityValue | None = Field(
        default=None,
        alias="lendingLimit",
        description="Most of its unused quota the queue lends. Default: all of it.",
    )


class FlavorQuotas(Strict):
    """The quotas of one ResourceFlavor."""

    name: Name = Field(description="The ResourceFlavor.")
    resources: list[ResourceQuota] = Field(
        min_length=1,
        max_length=64,
        description="One quota per covered resource.",
        json_schema_extra=BY_NAME,
    )


class ResourceGroup(Strict):
    """Resources that are quota'd together, by flavor."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
                    "message": "flavors must have the same number of resources as the "
                    "coveredResources",
                }
            ]
        }
    )

    covered_resources: list[str] = Field(
        alias="coveredResources",
        min_length=1,
        max_length=64,
        description="The resources of the group.",
        json_schema_extra=ATOMIC,
    )
    flavors: list[FlavorQuotas] = Field(
        min_length=1,
        max_length=64,
        description="Flavors in the order Kueue tries them.",
        json_schema_extra=BY_NAME,
    )


class LocalQueueSpec(Strict):
    cluster_queue: Name | None = Field(
        default=None,
        alias="clusterQueue",
        max_length=253,
        description="The ClusterQueue the queue's workloads are admitted to.",
        json_schema_extra={
            "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "field is immutable"}
            ]
        },
    )
    fair_sharing: FairSharing | None = Field(
        default=None, alias="fairSharing", description="Fair sharing weight."
    )
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] | None = Field(
        default=None, alias="stopPolicy", description="None, Hold or HoldAndDrain."
    )


@resource_kind(KUEUE_V1BETA2, "LocalQueue")
class LocalQueue(Strict):
    """A namespace's queue: jobs name it in ``kueue.x-k8s.io/queue-name``."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["LocalQueue"]
    metadata: ObjectMeta
    spec: LocalQueueSpec | None = Field(default=None, description="The queue.")


@resource_kind(KUEUE_V1BETA1, "LocalQueue")
class LocalQueueV1Beta1(LocalQueue):
    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")  # type: ignore[assignment]


_CLUSTER_QUEUE_RULES: JsonDict = {
    "x-kubernetes-validations": [
        {
            "rule": "!has(self.cohortName) && has(self.resourceGroups) ? "
            "self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, "
            "!has(r.borrowingLimit)))) : true",
            "message": "borrowingLimit must be nil when cohort is empty",
        }
    ]
}


class _ClusterQueueCommon(Strict):
    admission_checks_strategy: dict[str, Any] | None = Field(
        default=None, alias="admissionChecksStrategy", description="Admission checks."
    )
    admission_scope: dict[str, Any] | None = Field(
        default=None, alias="admissionScope", description="Admission fair sharing."
    )
    fair_sharing: FairSharing | None = Field(
        default=None, alias="fairSharing", description="Fair sharing weight."
    )
    flavor_fungibility: dict[str, Any] | None = Field(
        default=None, alias="flavorFungibility", description="When to try the next flavor."
    )
    namespace_selector: LabelSelector | None = Field(
        default=None,
        alias="namespaceSelector",
        description="Namespaces whose LocalQueues may point here. Default: none.",
    )
    preemption: dict[str, Any] | None = Field(default=None, description="Preemption policy.")
    queueing_strategy: Literal["StrictFIFO", "BestEffortFIFO"] | None = Field(
        default=None, alias="queueingStrategy", description="StrictFIFO or BestEffortFIFO."
    )
    resource_groups: list[ResourceGroup] | None = Field(
        default=None,
        alias="resourceGroups",
        max_length=16,
        description="Quotas by resource group and flavor.",
        json_schema_extra=ATOMIC,
    )
    stop_policy: Literal["None", "Hold", "HoldAndDrain"] | None = Field(
        default=None, alias="stopPolicy", description="None, Hold or HoldAndDrain."
    )

    def cohort(self) -> str | None:
        return None


class ClusterQueueSpec(_ClusterQueueCommon):
    model_config = ConfigDict(json_schema_extra=_CLUSTER_QUEUE_RULES)

    cohort_name: Name | None = Field(
        default=None,
        alias="cohortName",
        max_length=253,
        description="Cohort whose queues lend and borrow unused quota.",
    )
    concurrent_admission_policy: dict[str, Any] | None = Field(
        default=None, alias="concurrentAdmissionPolicy", description="Concurrent admission."
    )

    def cohort(self) -> str | None:
        return self.cohort_name


class ClusterQueueSpecV1Beta1(_ClusterQueueCommon):
    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.cohort) && has(self.resourceGroups) ? "
                    "self.resourceGroups.all(rg, rg.flavors.all(f, f.resources.all(r, "
                    "!has(r.borrowingLimit)))) : true",
                    "message": "borrowingLimit must be nil when cohort is empty",
                }
            ]
        }
    )

    cohort_: Name | None = Field(
        default=None, alias="cohort", max_length=253, description="Cohort (v1beta1)."
    )
    admission_checks: list[Annotated[str, Field(max_length=316)]] | None = Field(
        default=None, alias="admissionChecks", description="Admission checks (v1beta1)."
    )

    def cohort(self) -> str | None:
        return self.cohort_


@resource_kind(KUEUE_V1BETA2, "ClusterQueue")
class ClusterQueue(Strict):
    """A pool of quota that LocalQueues admit workloads to."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["ClusterQueue"]
    metadata: ObjectMeta
    spec: ClusterQueueSpec | None = Field(default=None, description="Quotas and policies.")


@resource_kind(KUEUE_V1BETA1, "ClusterQueue")
class ClusterQueueV1Beta1(Strict):
    """A ClusterQueue, as Kueue's deprecated v1beta1 has it."""

    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")
    kind: Literal["ClusterQueue"]
    metadata: ObjectMeta
    spec: ClusterQueueSpecV1Beta1 | None = Field(default=None, description="Quotas and policies.")


_FLAVOR_RULES: JsonDict = {
    "x-kubernetes-validations": [
        {
            "rule": "!has(self.topologyName) || self.nodeLabels.size() >= 1",
            "message": "at least one nodeLabel is required when topology is set",
        }
    ]
}


class ResourceFlavorSpec(Strict):
    model_config = ConfigDict(json_schema_extra=_FLAVOR_RULES)

    node_labels: dict[str, str] | None = Field(
        default=None,
        alias="nodeLabels",
        max_length=8,
        description="Labels of the nodes of this flavor (added to the pods' node selector).",
    )
    node_taints: list[Taint] | None = Field(
        default=None, alias="nodeTaints", max_length=8, description="Taints of those nodes."
    )
    tolerations: list[Toleration] | None = Field(
        default=None, max_length=8, description="Tolerations added to the admitted pods."
    )
    topology_name: Name | None = Field(
        default=None, alias="topologyName", max_length=253, description="A Topology."
    )


@resource_kind(KUEUE_V1BETA2, "ResourceFlavor")
class ResourceFlavor(Strict):
    """A kind of node (GPU model, zone...) quotas are counted per."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["ResourceFlavor"]
    metadata: ObjectMeta
    spec: ResourceFlavorSpec | None = Field(default=None, description="The flavor.")


@resource_kind(KUEUE_V1BETA1, "ResourceFlavor")
class ResourceFlavorV1Beta1(ResourceFlavor):
    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")  # type: ignore[assignment]


@resource_kind(KUEUE_V1BETA2, "WorkloadPriorityClass")
class WorkloadPriorityClass(Strict):
    """A priority jobs name in ``kueue.x-k8s.io/priority-class``."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["WorkloadPriorityClass"]
    metadata: ObjectMeta
    value: int = Field(description="The priority of the workloads that name it.")
    description: str | None = Field(default=None, max_length=2048, description="What it is for.")


@resource_kind(KUEUE_V1BETA1, "WorkloadPriorityClass")
class WorkloadPriorityClassV1Beta1(WorkloadPriorityClass):
    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")  # type: ignore[assignment]
    description: str | None = Field(default=None, description="What it is for.")


class CohortSpec(Strict):
    parent_name: Name | None = Field(
        default=None, alias="parentName", max_length=253, description="Parent cohort."
    )
    resource_groups: list[ResourceGroup] | None = Field(
        default=None,
        alias="resourceGroups",
        max_length=16,
        description="Quota the cohort itself holds.",
        json_schema_extra=ATOMIC,
    )
    fair_sharing: FairSharing | None = Field(
        default=None, alias="fairSharing", description="Fair sharing weight."
    )


@resource_kind(KUEUE_V1BETA2, "Cohort")
class Cohort(Strict):
    """ClusterQueues that lend each other unused quota."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["Cohort"]
    metadata: ObjectMeta
    spec: CohortSpec | None = Field(default=None, description="The cohort.")


@resource_kind(KUEUE_V1BETA1, "Cohort")
class CohortV1Beta1(Cohort):
    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")  # type: ignore[assignment]


class TopologyLevel(Strict):
    node_label: str = Field(
        alias="nodeLabel",
        min_length=1,
        max_length=316,
        pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
        r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        description="The node label of this level (rack, block, hostname...).",
    )


class TopologySpec(Strict):
    levels: list[TopologyLevel] = Field(
        min_length=1,
        max_length=16,
        description="Levels from the widest to the narrowest.",
        json_schema_extra={
            "x-kubernetes-list-type": "atomic",
            "x-kubernetes-validations": [
                {
                    "rule": "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",
                    "message": "must be unique",
                },
                {
                    "rule": "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 "
                    "|| self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'",
                    "message": "the kubernetes.io/hostname label can only be used at the "
                    "lowest level of topology",
                },
            ],
        },
    )


@resource_kind(KUEUE_V1BETA2, "Topology")
class Topology(Strict):
    """Levels of the data center Kueue places gangs within."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["Topology"]
    metadata: ObjectMeta
    spec: TopologySpec | None = Field(default=None, description="The levels.")


@resource_kind(KUEUE_V1BETA1, "Topology")
class TopologyV1Beta1(Topology):
    api_version: Literal["kueue.x-k8s.io/v1beta1"] = Field(alias="apiVersion")  # type: ignore[assignment]


# --- MultiKueue (apis/kueue/v1beta2/admissioncheck_types.go, multikueue_types.go) -------------


class AdmissionCheckParameters(Strict):
    api_group: str = Field(
        alias="apiGroup",
        min_length=1,
        max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        description="Group of the parameters object.",
    )
    kind: str = Field(
        min_length=1,
        max_length=63,
        pattern=r"^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$",
        description="Kind of the parameters object.",
    )
    name: str = Field(
        min_length=1,
        max_length=63,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="Name of the parameters object.",
    )


class AdmissionCheckSpec(Strict):
    controller_name: str = Field(
        alias="controllerName",
        min_length=1,
        max_length=253,
        description="The controller that runs the check (kueue.x-k8s.io/multikueue).",
    )
    parameters: AdmissionCheckParameters | None = Field(
        default=None, description="Its configuration (a MultiKueueConfig)."
    )


@resource_kind(KUEUE_V1BETA2, "AdmissionCheck")
class AdmissionCheck(Strict):
    """A check a workload must pass before a ClusterQueue admits it (MultiKueue's dispatch)."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["AdmissionCheck"]
    metadata: ObjectMeta
    spec: AdmissionCheckSpec


class MultiKueueConfigSpec(Strict):
    clusters: list[Annotated[str, Field(max_length=256)]] = Field(
        min_length=1,
        max_length=20,
        description="MultiKueueClusters a workload may be dispatched to.",
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",
                    "message": "must be unique",
                }
            ]
        },
    )


@resource_kind(KUEUE_V1BETA2, "MultiKueueConfig")
class MultiKueueConfig(Strict):
    """The worker clusters of a MultiKueue admission check."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["MultiKueueConfig"]
    metadata: ObjectMeta
    spec: MultiKueueConfigSpec


class MultiKueueKubeConfig(Strict):
    location: str = Field(
        min_length=1,
        max_length=256,
        description="Name of the Secret (in Kueue's namespace) holding the kubeconfig.",
    )
    location_type: Literal["Secret", "Path"] | None = Field(
        default=None, alias="locationType", description="Secret (default) or Path."
    )


class ClusterSource(Strict):
    kube_config: MultiKueueKubeConfig | None = Field(
        default=None, alias="kubeConfig", description="How Kueue reaches the worker."
    )


class MultiKueueClusterSpec(Strict):
    cluster_source: ClusterSource | None = Field(
        default=None, alias="clusterSource", description="How Kueue reaches the worker."
    )


@resource_kind(KUEUE_V1BETA2, "MultiKueueCluster")
class MultiKueueCluster(Strict):
    """A worker cluster MultiKueue dispatches workloads to."""

    api_version: Literal["kueue.x-k8s.io/v1beta2"] = Field(alias="apiVersion")
    kind: Literal["MultiKueueCluster"]
    metadata: ObjectMeta
    spec: MultiKueueClusterSpec | None = None
