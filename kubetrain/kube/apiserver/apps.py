"""apps/v1 workloads (upstream ``pkg/apis/apps/validation``: ``ValidateDeployment``,
``ValidateReplicaSet``, ``ValidateStatefulSet``, ``ValidateDaemonSet``), after the apps/v1
defaults (``pkg/apis/apps/v1/defaults.go``)."""

from __future__ import annotations

import re
from typing import Any

from .core import always_restarts, nonnegative
from .features import since
from .field import Errors, Path
from .meta import (
    dns_label,
    selector_is_empty,
    selector_matches,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from .pods import validate_pod_template_spec
from .values import among, as_int, as_list, as_map, as_str
from .volumes import validate_pvc_spec

__all__ = [
    "validate_daemon_set",
    "validate_deployment",
    "validate_replica_set",
    "validate_stateful_set",
]

_PERCENT = re.compile(r"[0-9]+%")


def _selector(errs: Errors, spec: dict[str, Any], kind: str, required: bool = True) -> bool:
    """The selector checks of ReplicaSet, Deployment and StatefulSet; whether the selector can
    be matched against the template."""
    path = ("spec", "selector")
    selector = spec.get("selector")
    if selector is None:
        if required:
            errs.required(path)
        return True  # an absent selector selects nothing: the template check reports it
    ok = validate_label_selector(errs, selector, path)
    if selector_is_empty(selector):
        errs.invalid(path, selector, f"empty selector is invalid for {kind}")
    if not ok:
        errs.invalid(path, selector, "invalid label selector")
    return ok


def _template_matches(errs: Errors, spec: dict[str, Any], template: Any) -> None:
    labels = as_map(as_map(as_map(template).get("metadata")).get("labels"))
    selector = spec.get("selector")
    if selector is not None and selector_is_empty(selector):
        return  # an empty selector selects everything (upstream: selector.Empty())
    if not selector_matches(selector, labels):
        errs.invalid(
            ("spec", "template", "metadata", "labels"),
            labels,
            "`selector` does not match template `labels`",
        )


def _int_or_percent(errs: Errors, value: Any, path: Path) -> int | None:
    # Upstream ValidatePositiveIntOrPercent and IsNotMoreThan100Percent; the value as a number.
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            errs.invalid(path, value, "must be an integer or percentage (e.g '5%')")
            return None
        percent = int(value[:-1])
        if percent > 100:
            errs.invalid(path, value, "must not be greater than 100%")
        return percent
    number = as_int(value)
    if number is not None and number < 0:
        errs.invalid(path, number, "must be greater than or equal to 0")
    return number


def _replica_set_spec(errs: Errors, spec: dict[str, Any], kind: str) -> None:
    # Upstream ValidateReplicaSetSpec / the shared part of ValidateDeploymentSpec.
    nonnegative(errs, spec, ("replicas", "minReadySeconds"), ("spec",))
    if _selector(errs, spec, kind):
        _template_matches(errs, spec, spec.get("template"))
    validate_pod_template_spec(errs, spec.get("template"), ("spec", "template"))
    always_restarts(errs, spec.get("template"), ("spec", "template"), kind)


def validate_replica_set(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateReplicaSet``."""
    _replica_set_spec(errs, as_map(obj.get("spec")), "ReplicaSet")


def validate_deployment(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateDeployment`` (``SetDefaults_Deployment``: RollingUpdate 25%/25%,
    progressDeadlineSeconds 600)."""
    spec = as_map(obj.get("spec"))
    _replica_set_spec(errs, spec, "Deployment")
    strategy = as_map(spec.get("strategy"))
    kind = strategy.get("type") or "RollingUpdate"
    path = ("spec", "strategy")
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            errs.forbidden(
                (*path, "rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"
            )
    elif kind == "RollingUpdate":
        rolling = as_map(strategy.get("rollingUpdate"))
        rpath = (*path, "rollingUpdate")
        unavailable = _int_or_percent(
            errs, rolling.get("maxUnavailable", "25%"), (*rpath, "maxUnavailable")
        )
        surge = _int_or_percent(errs, rolling.get("maxSurge", "25%"), (*rpath, "maxSurge"))
        if unavailable == 0 and surge == 0:
            errs.invalid((*rpath, "maxUnavailable"), 0, "may not be 0 when `maxSurge` is 0")
    else:
        errs.not_supported(path, kind, ["Recreate", "RollingUpdate"])
    nonnegative(errs, spec, ("revisionHistoryLimit", "progressDeadlineSeconds"), ("spec",))
    deadline = as_int(spec.get("progressDeadlineSeconds"))
    deadline = 600 if spec.get("progressDeadlineSeconds") is None else deadline
    minimum = as_int(spec.get("minReadySeconds")) or 0
    if deadline is not None and deadline <= minimum:
        errs.invalid(
            ("spec", "progressDeadlineSeconds"), deadline, "must be greater than minReadySeconds"
        )


def validate_daemon_set(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateDaemonSet`` (``SetDefaults_DaemonSet``: RollingUpdate with
    maxUnavailable 1, maxSurge 0)."""
    spec = as_map(obj.get("spec"))
    selector = spec.get("selector")
    ok = validate_label_selector(errs, selector, ("spec", "selector"))
    if ok:
        _template_matches(errs, spec, spec.get("template"))
    if selector is not None and selector_is_empty(selector):
        errs.invalid(("spec", "selector"), selector, "empty selector is invalid for daemonset")
    validate_pod_template_spec(errs, spec.get("template"), ("spec", "template"))
    always_restarts(errs, spec.get("template"), ("spec", "template"), "DaemonSet")
    nonnegative(
        errs, spec, ("minReadySeconds", "templateGeneration", "revisionHistoryLimit"), ("spec",)
    )
    strategy = as_map(spec.get("updateStrategy"))
    kind = strategy.get("type") or "RollingUpdate"
    path = ("spec", "updateStrategy")
    if kind == "RollingUpdate":
        rolling = as_map(strategy.get("rollingUpdate"))
        rpath = (*path, "rollingUpdate")
        unavailable = _int_or_percent(
            errs, rolling.get("maxUnavailable", 1), (*rpath, "maxUnavailable")
        )
        surge = _int_or_percent(errs, rolling.get("maxSurge", 0), (*rpath, "maxSurge"))
        if unavailable and surge:
            errs.invalid(
                (*rpath, "maxSurge"),
                rolling.get("maxSurge"),
                "may not be set when maxUnavailable is non-zero",
            )
        elif not unavailable and not surge:
            errs.required((*rpath, "maxUnavailable"), "cannot be 0 when maxSurge is 0")
    elif kind != "OnDelete":
        errs.not_supported(path, kind, ["OnDelete", "RollingUpdate"])


def validate_stateful_set(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateStatefulSet`` (``SetDefaults_StatefulSet``: OrderedReady,
    RollingUpdate with partition 0). From Kubernetes 1.34 the pod template is validated like
    any other, its volume claim templates counting as volumes, and the claim templates like
    claims; before, only the template's labels and annotations were."""
    spec = as_map(obj.get("spec"))
    policy = spec.get("podManagementPolicy") or "OrderedReady"
    if policy not in ("OrderedReady", "Parallel"):
        errs.invalid(
            ("spec", "podManagementPolicy"), policy, "must be 'OrderedReady' or 'Parallel'"
        )
    strategy = as_map(spec.get("updateStrategy"))
    kind = strategy.get("type") or "RollingUpdate"
    path = ("spec", "updateStrategy")
    if kind == "OnDelete":
        if strategy.get("rollingUpdate") is not None:
            errs.invalid(
                (*path, "rollingUpdate"),
                strategy["rollingUpdate"],
                "only allowed for updateStrategy 'RollingUpdate'",
            )
    elif kind == "RollingUpdate":
        rolling = as_map(strategy.get("rollingUpdate"))
        rpath = (*path, "rollingUpdate")
        nonnegative(errs, rolling, ("partition",), rpath)
        if rolling.get("maxUnavailable") is not None and since(
            errs.version, "MaxUnavailableStatefulSet"
        ):
            value = _int_or_percent(errs, rolling["maxUnavailable"], (*rpath, "maxUnavailable"))
            if value == 0:
                errs.invalid((*rpath, "maxUnavailable"), rolling["maxUnavailable"], "cannot be 0")
    else:
        errs.invalid(path, kind, "must be 'RollingUpdate' or 'OnDelete'")
    retention = as_map(spec.get("persistentVolumeClaimRetentionPolicy"))
    for key in ("whenDeleted", "whenScaled"):
        value = retention.get(key)
        if value is not None and value not in ("Retain", "Delete"):
            errs.not_supported(
                ("spec", "persistentVolumeClaimRetentionPolicy", key), value, ["Delete", "Retain"]
            )
    nonnegative(errs, spec, ("replicas", "minReadySeconds"), ("spec",))
    start = as_int(as_map(spec.get("ordinals")).get("start"))
    if start is not None and start < 0:
        errs.invalid(("spec", "ordinals", "start"), start, "must be greater than or equal to 0")
    if _selector(errs, spec, "statefulset"):
        _template_matches(errs, spec, spec.get("template"))
    template = as_map(spec.get("template"))
    meta = as_map(template.get("metadata"))
    claims = as_list(spec.get("volumeClaimTemplates"))
    if since(errs.version, "StatefulSetTemplateValidation"):
        # Upstream ValidateStatefulSetSpec (v1.36.2): the template is validated like a pod's
        # with its volumes as the StatefulSet controller makes them: first a
        # persistentVolumeClaim volume per claim template (a name once), then the template's
        # volumes not named like one (so a claim template named "R4_Data" is refused at
        # spec.template.spec.volumes[0].name, and one named like a pod volume, or twice, is
        # accepted).
        pod = as_map(template.get("spec"))
        volumes: list[Any] = []
        names: set[Any] = set()
        for claim in claims:
            name = as_map(as_map(claim).get("metadata")).get("name")
            if name and among(name, names):
                continue
            if isinstance(name, (dict, list)):
                continue  # a name of the wrong type is the schema's finding
            names.add(name)
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
        volumes += [
            v for v in as_list(pod.get("volumes")) if not among(as_map(v).get("name"), names)
        ]
        if claims:
            template = {**template, "spec": {**pod, "volumes": volumes}}
        validate_pod_template_spec(errs, template, ("spec", "template"))
        for i, claim in enumerate(claims):
            validate_pvc_spec(
                errs, as_map(claim).get("spec"), ("spec", "volumeClaimTemplates", i, "spec")
            )
    else:
        validate_labels(errs, meta.get("labels"), ("spec", "template", "labels"))
        validate_annotations(errs, meta.get("annotations"), ("spec", "template", "annotations"))
    always_restarts(errs, template, ("spec", "template"), "StatefulSet")
    service = as_str(spec.get("serviceName"))
    if service and since(errs.version, "StatefulSetServiceNameValidation"):
        errs.problem(("spec", "serviceName"), dns_label(service))
