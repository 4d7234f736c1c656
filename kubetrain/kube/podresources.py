"""What one pod asks for, as Kubernetes sums it: k8s.io/component-helpers v0.36
``resource/helpers.go`` PodRequests and PodLimits (no options): the containers' values summed;
init containers by the largest (a sidecar, ``restartPolicy: Always``, adds to both); the pod's
overhead added. Values that are no quantity (a hand-edited file) count for nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from .quantity import Quantity, parse_quantity

__all__ = ["add_resources", "pod_requests", "pod_resources"]


def _of(container: Any, part: str) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    resources = container.get("resources") if isinstance(container, Mapping) else None
    values = resources.get(part) if isinstance(resources, Mapping) else None
    for name, value in (values or {}).items() if isinstance(values, Mapping) else ():
        try:
            out[str(name)] = parse_quantity(value)
        except ValueError:
            continue
    return out


def add_resources(total: dict[str, Quantity], more: Mapping[str, Quantity]) -> None:
    """``total`` += ``more``, per resource (quota's ``Add``: the format of the first term)."""
    for name, q in more.items():
        total[name] = total[name] + q if name in total else q


def pod_resources(
    spec: Mapping[str, Any], part: Literal["requests", "limits"] = "requests"
) -> dict[str, Quantity]:
    """PodRequests (``part="requests"``) or PodLimits (``"limits"``) of one pod spec. A limit
    never stands in for a missing request here (that is the API server's defaulting)."""
    total: dict[str, Quantity] = {}
    for c in spec.get("containers") or []:
        add_resources(total, _of(c, part))
    sidecars: dict[str, Quantity] = {}
    init_max: dict[str, Quantity] = {}
    for c in spec.get("initContainers") or []:
        values = _of(c, part)
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
            add_resources(total, values)
            add_resources(sidecars, values)
            current = dict(sidecars)
        else:
            current = dict(values)
            add_resources(current, sidecars)
        for name, q in current.items():
            if name not in init_max or q.value > init_max[name].value:
                init_max[name] = q
    for name, q in init_max.items():
        if name not in total or q.value > total[name].value:
            total[name] = q
    overhead = spec.get("overhead")
    for name, value in overhead.items() if isinstance(overhead, Mapping) else ():
        try:
            add_resources(total, {str(name): parse_quantity(value)})
        except ValueError:
            continue
    return total


def pod_requests(spec: Mapping[str, Any]) -> dict[str, Quantity]:
    """PodRequests of one pod spec."""
    return pod_resources(spec, "requests")
