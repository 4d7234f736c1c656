"""The cluster policy kinds a training platform creates beside its jobs: PriorityClass
(``pkg/apis/scheduling/validation``), RuntimeClass (``pkg/apis/node/validation``), and the
core/v1 ResourceQuota and LimitRange (``pkg/apis/core/validation``), all at kubernetes v1.36.2.

Each function names the upstream function it follows. Paths are the server's, keys of a
resource map as their own part (``spec.hard[requests.cpu]`` is ``("spec", "hard",
"requests.cpu")``), and where the server names a list without an index (a scope selector's
``matchExpressions.operator``) so does kubetrain.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..names import check_label_key
from ..quantity import Quantity, format_quantity, parse_quantity
from .field import Errors, Path
from .meta import dns_label, validate_labels
from .pods import validate_tolerations
from .resources import (
    container_resource_name,
    overcommit_allowed,
    quantity_at,
    resource_name,
    validate_container_resource_requirements,
    validate_resource_quantity,
)
from .values import among, as_int, as_list, as_map, as_str

__all__ = [
    "validate_limit_range",
    "validate_priority_class",
    "validate_resource_quota",
    "validate_runtime_class",
]

# --- scheduling.k8s.io/v1 PriorityClass ---------------------------------------------------------

#: Upstream ``scheduling.HighestUserDefinablePriority``.
HIGHEST_USER_PRIORITY = 1_000_000_000
#: Upstream ``scheduling.SystemPriorityClasses()``: name -> value (globalDefault false).
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}


def _known_system_class(name: str, value: Any, global_default: Any) -> str | None:
    # Upstream scheduling.IsKnownSystemPriorityClass: the reason it is not one, or None.
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if value != SYSTEM_PRIORITY_CLASSES[name]:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default is True:
        return f"globalDefault of {name} PriorityClass must be false"
    return None


def validate_priority_class(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidatePriorityClass``: a ``system-`` name only for the two system classes;
    any other class's value at most 1,000,000,000; a preemption policy of the two."""
    name = as_str(as_map(obj.get("metadata")).get("name"))
    value = as_int(obj.get("value")) or 0  # a missing value is 0 (int32, not a pointer)
    if name.startswith("system-"):
        if reason := _known_system_class(name, value, obj.get("globalDefault")):
            errs.forbidden(
                ("metadata", "name"),
                "priority class names with 'system-' prefix are reserved for system use only. "
                f"error: {reason}",
            )
    elif value > HIGHEST_USER_PRIORITY:
        errs.forbidden(
            ("value",),
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}",
        )
    policy = obj.get("preemptionPolicy")
    if policy is not None and policy not in ("PreemptLowerPriority", "Never"):
        # Upstream ValidatePreemptionPolicy.
        errs.not_supported(("preemptionPolicy",), policy, ["Never", "PreemptLowerPriority"])


# --- node.k8s.io/v1 RuntimeClass ------------------------------------------------------------------


def validate_runtime_class(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateRuntimeClass``: the handler a DNS label; the overhead's ``podFixed``
    as a container's limits (``validateOverhead``: at ``overhead.limits``); the scheduling's
    node selector as labels and its tolerations as a pod's, without repeats
    (``validateScheduling``, ``validateTolerations``)."""
    handler = obj.get("handler")
    if not as_str(handler):
        errs.required(("handler",))
    else:
        errs.problem(("handler",), dns_label(as_str(handler)))
    overhead = obj.get("overhead")
    if overhead is not None:
        fixed = as_map(overhead).get("podFixed")
        validate_container_resource_requirements(errs, {"limits": fixed}, ("overhead",))
    scheduling = obj.get("scheduling")
    if scheduling is not None:
        scheduling = as_map(scheduling)
        path: Path = ("scheduling",)
        validate_labels(errs, scheduling.get("nodeSelector"), (*path, "nodeSelector"))
        tolerations = as_list(scheduling.get("tolerations"))
        validate_tolerations(errs, tolerations, (*path, "tolerations"))
        seen: set[tuple[str, str, str, str]] = set()
        for i, toleration in enumerate(map(as_map, tolerations)):
            key = tuple(as_str(toleration.get(k)) for k in ("key", "operator", "value", "effect"))
            if key in seen:
                errs.duplicate((*path, "tolerations", i), toleration)
            seen.add(key)  # type: ignore[arg-type]


# --- core/v1 ResourceQuota ----------------------------------------------------------------------

#: Upstream ``standardQuotaResources`` (with ``IsQuotaHugePageResourceName``).
_QUOTA_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage",
    "requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage",
    "pods", "quotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims",
    "configmaps", "services.nodeports", "services.loadbalancers",
})  # fmt: skip
#: Upstream ``podComputeQuotaResources`` and ``podObjectCountQuotaResources``.
_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu",
                          "requests.memory"})  # fmt: skip
_POD_COUNT = frozenset({"pods"})
#: Upstream ``pvcObjectCountQuotaResources`` and ``pvcStorageQuotaResources``.
_PVC = frozenset({"persistentvolumeclaims", "requests.storage"})
_POD_SCOPES = ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass",
               "CrossNamespacePodAffinity")  # fmt: skip
#: Upstream ``invalidScopePairs``.
_CONFLICTING = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


def _quota_resource(name: str) -> bool:
    # Upstream IsStandardQuotaResourceName.
    return (
        name in _QUOTA_RESOURCES
        or name.startswith("hugepages-")
        or name.startswith("requests.hugepages-")
    )


def _standard_scope(version: tuple[int, int], scope: Any) -> bool:
    # Upstream IsStandardResourceQuotaScope (VolumeAttributesClass: GA in 1.34).
    scopes = {"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
              "CrossNamespacePodAffinity"}  # fmt: skip
    if version >= (1, 34):
        scopes.add("VolumeAttributesClass")
    return among(scope, scopes)


def _scope_fits(scope: Any, resource: str) -> bool:
    # Upstream IsResourceQuotaScopeValidForResource.
    if among(scope, _POD_SCOPES):
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    if scope == "BestEffort":
        return resource in _POD_COUNT
    if scope == "VolumeAttributesClass":
        return resource in _PVC
    return True


def _unfitting(scope: Any, hard: dict[str, Any]) -> int:
    """How many of the standard quota resources of ``hard`` the scope does not apply to."""
    return sum(1 for k in sorted(hard) if _quota_resource(k) and not _scope_fits(scope, k))


def validate_resource_quota(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateResourceQuotaSpec``: each hard limit's name
    (``ValidateResourceQuotaResourceName``) and value (``ValidateResourceQuantityValue``), the
    scopes (``validateResourceQuotaScopes``) and the scope selector
    (``validateScopedResourceSelectorRequirement``)."""
    spec = as_map(obj.get("spec"))
    hard = as_map(spec.get("hard"))
    for name in sorted(hard):
        path: Path = ("spec", "hard", name)
        resource_name(errs, name, path)
        if "/" not in name and not _quota_resource(name):
            errs.invalid(path, name, "must be a standard resource for quota")
        q = quantity_at(errs, hard[name], path)
        if q is not None:
            validate_resource_quantity(errs, name, q, path)
    scopes = as_list(spec.get("scopes"))
    spath: Path = ("spec", "scopes")
    for scope in scopes:
        if not _standard_scope(errs.version, scope):
            errs.invalid(spath, scopes, "unsupported scope")
        for _ in range(_unfitting(scope, hard)):
            errs.invalid(spath, scopes, "unsupported scope applied to resource")
    for pair in _CONFLICTING:
        if all(s in scopes for s in pair):
            errs.invalid(spath, scopes, "conflicting scopes")
    selector = spec.get("scopeSelector")
    if selector is None:
        return
    mpath: Path = ("spec", "scopeSelector", "matchExpressions")
    names = []
    for req in map(as_map, as_list(as_map(selector).get("matchExpressions"))):
        scope, operator = req.get("scopeName"), req.get("operator")
        values = as_list(req.get("values"))
        if not _standard_scope(errs.version, scope):
            errs.invalid((*mpath, "scopeName"), scope, "unsupported scope")
        for _ in range(_unfitting(scope, hard)):
            errs.invalid(mpath, selector, "unsupported scope applied to resource")
        if scope in ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating",
                     "CrossNamespacePodAffinity") and operator != "Exists":  # fmt: skip
            errs.invalid(
                (*mpath, "operator"),
                operator,
                "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            )
        if operator in ("In", "NotIn"):
            if not values:
                errs.required(
                    (*mpath, "values"),
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope "
                    "selector",
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.invalid(
                    (*mpath, "values"),
                    values,
                    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope "
                    "selector",
                )
        else:
            errs.invalid((*mpath, "operator"), operator, "not a valid selector operator")
        names.append(scope)
    for pair in _CONFLICTING:
        if all(s in names for s in pair):
            errs.invalid(mpath, scopes, "conflicting scopes")


# --- core/v1 LimitRange -------------------------------------------------------------------------

_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def _limit_type(errs: Errors, value: str, path: Path) -> None:
    # Upstream validateLimitRangeTypeName.
    if problem := check_label_key(value):
        errs.add(path, f"limit type {problem}")
    elif "/" not in value and value not in _LIMIT_TYPES:
        errs.invalid(path, value, "must be a standard limit type or fully qualified")


def _limit_resource(errs: Errors, kind: str, name: str, path: Path) -> None:
    # Upstream validateLimitRangeResourceName.
    if kind in ("Pod", "Container"):
        container_resource_name(errs, name, path)
    else:
        resource_name(errs, name, path)


def _show(q: Quantity) -> str:
    return format_quantity(q)


ZERO = parse_quantity(0)


def validate_limit_range(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateLimitRange``: per limit, its type (once each), its resources' names,
    no default for a Pod, a storage bound for a PersistentVolumeClaim, and per resource
    min <= defaultRequest <= default <= max, a ratio of at least 1 and at most max/min, and
    default = defaultRequest for a resource that cannot be overcommitted (GPUs, hugepages)."""
    types: set[str] = set()
    for i, limit in enumerate(as_list(as_map(obj.get("spec")).get("limits"))):
        limit, ipath = as_map(limit), ("spec", "limits", i)
        kind = as_str(limit.get("type"))
        _limit_type(errs, kind, (*ipath, "type"))
        if kind in types:
            errs.duplicate((*ipath, "type"), kind)
        types.add(kind)
        found: dict[str, dict[str, Quantity]] = {}
        keys: list[str] = []
        fields = ["max", "min"]
        if kind == "Pod":
            for key in ("default", "defaultRequest"):
                if as_map(limit.get(key)):
                    errs.forbidden((*ipath, key), "may not be specified when `type` is 'Pod'")
        else:
            fields += ["default", "defaultRequest"]
        fields.append("maxLimitRequestRatio")
        for key in fields:
            found[key] = {}
            for name, raw in sorted(as_map(limit.get(key)).items()):
                _limit_resource(errs, kind, name, (*ipath, key, name))
                # A null value decodes as Go's zero Quantity, 0, which the bounds compare.
                q = ZERO if raw is None else quantity_at(errs, raw, (*ipath, key, name))
                if name not in keys:
                    keys.append(name)
                if q is not None:
                    found[key][name] = q
        if kind == "PersistentVolumeClaim" and not (
            "storage" in as_map(limit.get("min")) or "storage" in as_map(limit.get("max"))
        ):
            errs.required(
                (*ipath, "limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            )
        for name in keys:
            _limit_bounds(errs, ipath, name, {k: v.get(name) for k, v in found.items()})


def _limit_bounds(errs: Errors, ipath: Path, name: str, q: dict[str, Quantity | None]) -> None:
    low, high, ratio = q.get("min"), q.get("max"), q.get("maxLimitRequestRatio")
    default, request = q.get("default"), q.get("defaultRequest")

    def bad(key: str, shown: Quantity, detail: str) -> None:
        errs.invalid((*ipath, key, name), _show(shown), detail)

    if low and high and low.value > high.value:
        bad("min", low, f"min value {_show(low)} is greater than max value {_show(high)}")
    if request and low and low.value > request.value:
        bad("defaultRequest", request,
            f"min value {_show(low)} is greater than default request value "
            f"{_show(request)}")  # fmt: skip
    if request and high and request.value > high.value:
        bad("defaultRequest", request,
            f"default request value {_show(request)} is greater than max value "
            f"{_show(high)}")  # fmt: skip
    if request and default and request.value > default.value:
        bad("defaultRequest", request,
            f"default request value {_show(request)} is greater than default limit value "
            f"{_show(default)}")  # fmt: skip
    if default and low and low.value > default.value:
        bad(
            "default", low, f"min value {_show(low)} is greater than default value {_show(default)}"
        )
    if default and high and default.value > high.value:
        bad(
            "default",
            high,
            f"default value {_show(default)} is greater than max value {_show(high)}",
        )
    if ratio and ratio.value < 1:
        bad("maxLimitRequestRatio", ratio, f"ratio {_show(ratio)} is less than 1")
    if ratio and low and high and low.value != 0:
        # Upstream compares milli-values as floats; exact fractions agree but at the last digit.
        limit = Fraction(high.value) / Fraction(low.value)
        if ratio.value > limit:
            bad("maxLimitRequestRatio", ratio,
                f"ratio {_show(ratio)} is greater than max/min = {float(limit):f}")  # fmt: skip
    if not overcommit_allowed(name) and default and request and default.value != request.value:
        bad("defaultRequest", request,
            f"default value {_show(default)} must equal to defaultRequest value {_show(request)} "
            f"in {name}")  # fmt: skip
