"""Gang scheduling: the PodGroup kinds kubetrain emits, and the input rule every job kind shares.

kubetrain writes the PodGroup of Volcano (``scheduling.volcano.sh/v1beta1``) or of the Kubernetes
scheduler-plugins coscheduling plugin (``scheduling.x-k8s.io/v1alpha1``) next to the pods of a
gang-scheduled job (see :mod:`kubetrain.builders.gang`). The models below describe the fields
kubetrain writes; ``validate`` checks emitted PodGroups against their JSON schema, and the tests
check them against Volcano's own CRD schema too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, field_validator

from ..kube.quantity import QUANTITY_PATTERN, parse_quantity
from .base import K8sType, Strict, resource_kind

__all__ = [
    "ObjectMeta",
    "QuantityValue",
    "ResourceList",
    "SchedulerPluginsPodGroup",
    "VolcanoPodGroup",
    "check_resource_list",
    "min_available_problems",
]

#: Kubernetes ``ObjectMeta``, checked against the Kubernetes schema of the target version.
ObjectMeta = Annotated[
    dict[str, Any], K8sType("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "Object metadata")
]


def _quantity_in_range(value: str | int) -> str | int:
    """A quantity past kubetrain's bound (``1e5000``: docs/limits.md) is refused where it is
    read, not counted as nothing where it is summed (``kubetrain plan``, Kueue quota)."""
    parse_quantity(value)
    return value


#: A quantity as Kubernetes serialises it: a string such as ``500m`` or ``1536Mi``, or a number,
#: within kubetrain's bound on quantities (2^63-1).
QuantityValue = Annotated[
    Annotated[str, StringConstraints(pattern=QUANTITY_PATTERN)] | int,
    AfterValidator(_quantity_in_range),
]
ResourceList = dict[str, QuantityValue]

Path = tuple[str | int, ...]


def check_resource_list(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Every value of a resource list must be a quantity (the message quotes the bad one)."""
    for name, quantity in (value or {}).items():
        try:
            parse_quantity(quantity)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    return value


def min_available_problems(
    min_available: int | None, pods: int, path: Path
) -> list[tuple[Path, str]]:
    """The rule every gang-scheduled kind shares: the gang cannot need more pods than the job has.

    ``path`` is the field path of ``minAvailable`` (or its counterpart) in the job document.
    """
    if min_available is not None and min_available > pods:
        return [(path, f"minAvailable is {min_available}, more than the {pods} pods of the job")]
    return []


#: What Volcano's CRD requires of a queue name (a DNS-1123 subdomain).
_VOLCANO_QUEUE = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


class VolcanoPodGroupSpec(Strict):
    """``spec`` of a Volcano PodGroup (the fields kubetrain writes), bounded as Volcano's CRD
    bounds them (``scheduling.volcano.sh_podgroups.yaml``)."""

    min_member: int | None = Field(
        default=None,
        alias="minMember",
        ge=0,
        description="Pods that must be schedulable together.",
    )
    min_task_member: dict[str, int] | None = Field(
        default=None, alias="minTaskMember", description="Minimum pods per task (replica type)."
    )
    queue: str | None = Field(
        default=None,
        max_length=253,
        pattern=_VOLCANO_QUEUE,
        description="Volcano queue. Default: default.",
    )
    priority_class_name: str | None = Field(
        default=None,
        alias="priorityClassName",
        max_length=253,
        description="PriorityClass of the group.",
    )
    min_resources: ResourceList | None = Field(
        default=None,
        alias="minResources",
        description="Resources the gang needs at once (sum of the first minMember pods' requests).",
    )

    @field_validator("min_resources")
    @classmethod
    def _quantities(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_resource_list(value)


@resource_kind("scheduling.volcano.sh/v1beta1", "PodGroup")
class VolcanoPodGroup(Strict):
    """A Volcano PodGroup, named after its job."""

    api_version: Literal["scheduling.volcano.sh/v1beta1"] = Field(alias="apiVersion")
    kind: Literal["PodGroup"]
    metadata: ObjectMeta
    spec: VolcanoPodGroupSpec | None = None


class SchedulerPluginsPodGroupSpec(Strict):
    """``spec`` of a scheduler-plugins (coscheduling) PodGroup, bounded as its CRD bounds it
    (``scheduling.x-k8s.io_podgroups.yaml``)."""

    min_member: int | None = Field(
        default=None,
        alias="minMember",
        ge=1,
        description="Pods that must be schedulable together.",
    )
    min_resources: ResourceList | None = Field(
        default=None,
        alias="minResources",
        description="Resources the gang needs at once (sum of the first minMember pods' requests).",
    )
    schedule_timeout_seconds: int | None = Field(
        default=None,
        alias="scheduleTimeoutSeconds",
        description="Seconds the scheduler waits for the whole gang before giving up.",
    )

    @field_validator("min_resources")
    @classmethod
    def _quantities(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_resource_list(value)


@resource_kind("scheduling.x-k8s.io/v1alpha1", "PodGroup")
class SchedulerPluginsPodGroup(Strict):
    """A scheduler-plugins PodGroup, named after its job."""

    api_version: Literal["scheduling.x-k8s.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["PodGroup"]
    metadata: ObjectMeta
    spec: SchedulerPluginsPodGroupSpec | None = None
