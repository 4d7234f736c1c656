"""Compute resources: resource names and quantities, requests against limits (upstream
``validateResourceRequirements`` and the ``pkg/apis/core/helper`` resource-name helpers)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..names import check_label_key
from ..quantity import Quantity, format_quantity, parse_quantity
from .field import Errors, Path, memoized
from .values import as_list, as_map, as_str

__all__ = [
    "aggregate_container_requests",
    "is_extended_resource",
    "is_hugepages",
    "is_native_resource",
    "overcommit_allowed",
    "quantity_at",
    "resource_name",
    "validate_container_resource_requirements",
    "validate_pod_resource_consistency",
    "validate_pod_resource_requirements",
    "validate_resource_quantity",
]

#: Upstream ``standardContainerResources``.
_CONTAINER_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
#: Upstream ``standardResources`` (names valid without a domain prefix).
_STANDARD_RESOURCES = {
    "cpu", "memory", "ephemeral-storage",
    "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "quotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims",
    "configmaps", "services.nodeports", "services.loadbalancers", "storage", "requests.storage",
}  # fmt: skip
#: Upstream ``integerResources``: counted resources that have no fractions.
_INTEGER_RESOURCES = {
    "pods", "quotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
}  # fmt: skip


def is_hugepages(name: str) -> bool:
    """Upstream ``IsHugePageResourceName``."""
    return name.startswith("hugepages-")


def is_native_resource(name: str) -> bool:
    """Upstream ``IsNativeResource``: no domain, or a ``kubernetes.io/`` one."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource(name: str) -> bool:
    """Upstream ``IsExtendedResourceName``: ``example.com/foo``, not native, usable in quotas."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    return check_label_key("requests." + name) is None


def overcommit_allowed(name: str) -> bool:
    """Upstream ``IsOvercommitAllowed``: requests may be below limits."""
    return is_native_resource(name) and not is_hugepages(name)


def _standard_resource(name: str) -> bool:
    # Upstream IsStandardResourceName (with IsQuotaHugePageResourceName).
    return (
        name in _STANDARD_RESOURCES
        or name.startswith("hugepages-")
        or name.startswith("requests.hugepages-")
    )


def resource_name(errs: Errors, name: str, path: Path) -> bool:
    """Upstream ``validateResourceName``: a qualified name, and standard when it has no
    domain; whether it is both."""
    if problem := check_label_key(name):
        errs.add(path, f"resource name {problem}")
        return False
    if "/" not in name and not _standard_resource(name):
        errs.invalid(path, name, "must be a standard resource type or fully qualified")
        return False
    return True


def container_resource_name(errs: Errors, name: str, path: Path) -> None:
    """Upstream ``validateContainerResourceName``."""
    ok = resource_name(errs, name, path)
    if "/" not in name:
        if name not in _CONTAINER_RESOURCES and not is_hugepages(name):
            errs.invalid(
                path,
                name,
                "must be a standard resource for containers (cpu, memory, "
                "ephemeral-storage, hugepages-<size>) or fully qualified",
            )
    elif ok and not is_native_resource(name) and not is_extended_resource(name):
        errs.invalid(path, name, "does not follow the extended resource name standard")


def pod_resource_name(errs: Errors, name: str, path: Path) -> None:
    """Upstream ``validatePodResourceName`` (pod-level resources)."""
    if resource_name(errs, name, path) and not (name in ("cpu", "memory") or is_hugepages(name)):
        errs.not_supported(path, name, ["cpu", "memory", "hugepages-<size>"])


def quantity_at(errs: Errors, value: Any, path: Path) -> Quantity | None:
    """The quantity at ``path``, or ``None`` after reporting that it is not one (the server
    refuses such an object while decoding it, before validation)."""
    if value is None or isinstance(value, bool):
        return None  # the schema reports the type
    if isinstance(value, str):
        # Upstream Quantity.UnmarshalJSON trims the spaces around it (" 1" is 1).
        value = value.strip()
    try:
        return parse_quantity(value)
    except ValueError as exc:
        errs.add(path, str(exc))
        return None


def validate_resource_quantity(errs: Errors, name: str, q: Quantity, path: Path) -> None:
    """Upstream ``ValidateResourceQuantityValue``: not negative; whole for counted and extended
    resources (``MilliValue() % 1000``, the milli-value rounded up)."""
    if q.value < 0:
        errs.invalid(path, format_quantity(q), "must be greater than or equal to 0")
    if (name in _INTEGER_RESOURCES or is_extended_resource(name)) and math.ceil(
        q.value * 1000
    ) % 1000:
        errs.invalid(path, format_quantity(q), "must be an integer")


def _hugepage_problem(name: str, q: Quantity) -> str | None:
    # Upstream validateResourceQuantityHugePageValue / IsHugePageResourceValueDivisible.
    try:
        page = parse_quantity(name.removeprefix("hugepages-"))
    except ValueError:
        page = None
    if page is None or page.value <= 0 or math.ceil(q.value) % math.ceil(page.value):
        return f"{format_quantity(q)} is not a positive integer multiple of {name}"
    return None


def _validate_requirements(
    errs: Errors,
    resources: Any,
    path: Path,
    name_check: Callable[[Errors, str, Path], None],
    claims: set[str] | None,
) -> None:
    # Upstream validateResourceRequirements.
    resources = as_map(resources)
    limits, requests = as_map(resources.get("limits")), as_map(resources.get("requests"))
    parsed: dict[str, dict[str, Quantity]] = {"limits": {}, "requests": {}}
    hugepages = cpu_or_memory = False
    for part, values in (("limits", limits), ("requests", requests)):
        for name, raw in values.items():
            rpath = (*path, part, name)
            name_check(errs, name, rpath)
            q = quantity_at(errs, raw, rpath)
            if q is None:
                continue
            parsed[part][name] = q
            validate_resource_quantity(errs, name, q, rpath)
            if is_hugepages(name):
                hugepages = True
                if problem := _hugepage_problem(name, q):
                    errs.invalid(rpath, format_quantity(q), problem)
            if name in ("cpu", "memory"):
                cpu_or_memory = True
    for name, request in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None:
            if request.value != limit.value and not overcommit_allowed(name):
                errs.invalid(
                    (*path, "requests"),
                    format_quantity(request),
                    f"must be equal to {name} limit of {format_quantity(limit)}",
                )
            elif request.value > limit.value:
                errs.invalid(
                    (*path, "requests"),
                    format_quantity(request),
                    f"must be less than or equal to {name} limit of {format_quantity(limit)}",
                )
        elif name not in limits and not overcommit_allowed(name):
            errs.required(
                (*path, "limits"),
                f"a limit must be set for {name}, which cannot be overcommitted",
            )
    if hugepages and not cpu_or_memory:
        errs.forbidden(path, "HugePages require cpu or memory")
    if claims is not None:
        _validate_claim_names(errs, resources.get("claims"), claims, (*path, "claims"))


def _validate_claim_names(errs: Errors, items: Any, pod_claims: set[str], path: Path) -> None:
    # Upstream validateResourceClaimNames.
    seen: set[str] = set()
    for i, claim in enumerate(as_list(items)):
        claim = as_map(claim)
        name, request = as_str(claim.get("name")), as_str(claim.get("request"))
        if not name:
            errs.required((*path, i))
            continue
        key = f"{name}/{request}" if request else name
        if name in seen or key in seen:
            errs.duplicate((*path, i), key)
        seen.update((name, key))
        if name not in pod_claims:
            known = ", ".join(sorted(pod_claims)) or "(none)"
            errs.not_found((*path, i), name, f"must be one of spec.resourceClaims: {known}")


def _container_requirements(errs: Errors, resources: Any, path: Path) -> None:
    _validate_requirements(errs, resources, path, container_resource_name, None)


_container_requirements_memo = memoized(_container_requirements)


def validate_container_resource_requirements(
    errs: Errors, resources: Any, path: Path, claims: set[str] | None = None
) -> None:
    """Upstream ``ValidateContainerResourceRequirements`` (claims checked against the pod's
    ``claims`` when given)."""
    if claims is not None and as_map(resources).get("claims") is not None:
        _validate_requirements(errs, resources, path, container_resource_name, claims)
    else:
        _container_requirements_memo(errs, resources, path)


def validate_pod_resource_requirements(errs: Errors, resources: Any, path: Path) -> None:
    """Upstream ``validatePodResourceRequirements`` (pod-level ``spec.resources``)."""
    resources = as_map(resources)
    if resources.get("claims"):
        errs.forbidden((*path, "claims"), "claims cannot be set for Resources at pod-level")
    _validate_requirements(errs, resources, path, pod_resource_name, None)


def _quantities(values: Any) -> dict[str, Quantity]:
    out = {}
    for name, raw in as_map(values).items():
        try:
            out[str(name)] = parse_quantity(raw)
        except ValueError:
            continue  # reported where the quantity is checked
    return out


def _container_requests(container: Any) -> dict[str, Quantity]:
    # SetDefaults_Pod: a container's request defaults to its limit.
    resources = as_map(as_map(container).get("resources"))
    return {**_quantities(resources.get("limits")), **_quantities(resources.get("requests"))}


def _add(into: dict[str, Quantity], values: dict[str, Quantity]) -> None:
    for name, q in values.items():
        into[name] = into[name] + q if name in into else q


def _at_least(into: dict[str, Quantity], values: dict[str, Quantity]) -> None:
    for name, q in values.items():
        if name not in into or q.value > into[name].value:
            into[name] = q


def aggregate_container_requests(spec: dict[str, Any]) -> dict[str, Quantity]:
    """Upstream ``resourcehelper.AggregateContainerRequests`` without overhead: the containers'
    requests summed, sidecars (init containers with ``restartPolicy: Always``) included, and at
    least what any init container needs beside the sidecars started before it."""
    total: dict[str, Quantity] = {}
    for container in as_list(spec.get("containers")):
        _add(total, _container_requests(container))
    sidecars: dict[str, Quantity] = {}
    init: dict[str, Quantity] = {}
    for container in as_list(spec.get("initContainers")):
        requests = _container_requests(container)
        if as_map(container).get("restartPolicy") == "Always":
            _add(total, requests)
            _add(sidecars, requests)
            running = dict(sidecars)
        else:
            running = dict(requests)
            _add(running, sidecars)
        _at_least(init, running)
    _at_least(total, init)
    return total


def validate_pod_resource_consistency(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    """Upstream ``validatePodResourceConsistency``: pod-level requests at least the containers'
    aggregate requests, no container's limit above the pod-level limit.

    Deviation: a resource the pod level does not request is not checked. Upstream compares it as
    zero after defaulting, and which pod-level requests defaulting fills in (from the pod-level
    limits or the containers' requests) changed between versions; kubetrain refuses only what
    every version refuses."""
    resources = as_map(spec.get("resources"))
    pod_requests = _quantities(resources.get("requests"))
    for name, aggregate in aggregate_container_requests(spec).items():
        request = pod_requests.get(name)
        if request is not None and aggregate.value > request.value:
            errs.invalid(
                (*path, "requests", name),
                format_quantity(request),
                "must be greater than or equal to aggregate container requests of "
                f"{format_quantity(aggregate)}",
            )
    pod_limits = _quantities(resources.get("limits"))
    if not pod_limits:
        return
    for i, container in enumerate(as_list(spec.get("containers"))):
        limits = _quantities(as_map(as_map(container).get("resources")).get("limits"))
        for name, limit in limits.items():
            pod_limit = pod_limits.get(name)
            if pod_limit is not None and limit.value > pod_limit.value:
                # Upstream's path: <resources>.containers[i][<name>].limits.
                errs.invalid(
                    (*path, "containers", i, name, "limits"),
                    format_quantity(limit),
                    f"must be less than or equal to pod limits of {format_quantity(pod_limit)}",
                )
