"""rbac.authorization.k8s.io/v1 (upstream ``pkg/apis/rbac/validation``: ``ValidateRole``,
``ValidateClusterRole``, ``ValidateRoleBinding``, ``ValidateClusterRoleBinding``)."""

from __future__ import annotations

from typing import Any

from .field import Errors, Path
from .meta import dns_subdomain, path_segment, validate_label_selector
from .values import as_list, as_map, as_str

__all__ = ["validate_binding", "validate_role"]

GROUP = "rbac.authorization.k8s.io"


def _policy_rule(errs: Errors, rule: Any, namespaced: bool, path: Path) -> None:
    # Upstream ValidatePolicyRule.
    rule = as_map(rule)
    if not as_list(rule.get("verbs")):
        errs.required((*path, "verbs"), "verbs must contain at least one value")
    urls = as_list(rule.get("nonResourceURLs"))
    if urls:
        if namespaced:
            errs.invalid(
                (*path, "nonResourceURLs"),
                urls,
                "namespaced rules cannot apply to non-resource URLs",
            )
        if any(as_list(rule.get(k)) for k in ("apiGroups", "resources", "resourceNames")):
            errs.invalid(
                (*path, "nonResourceURLs"),
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            )
        return
    if not as_list(rule.get("apiGroups")):
        errs.required((*path, "apiGroups"), "resource rules must supply at least one api group")
    if not as_list(rule.get("resources")):
        errs.required((*path, "resources"), "resource rules must supply at least one resource")
    if as_list(rule.get("resourceNames")) and len(as_list(rule.get("resources"))) > 1:
        errs.required((*path, "resourceNames"), "resource names cannot apply to multiple resources")


def validate_role(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateRole`` and ``ValidateClusterRole`` (with its aggregation rule)."""
    namespaced = obj.get("kind") == "Role"
    for i, rule in enumerate(as_list(obj.get("rules"))):
        _policy_rule(errs, rule, namespaced, ("rules", i))
    if namespaced or obj.get("aggregationRule") is None:
        return
    path = ("aggregationRule", "clusterRoleSelectors")
    selectors = as_list(as_map(obj.get("aggregationRule")).get("clusterRoleSelectors"))
    if not selectors:
        errs.required(path, "at least one clusterRoleSelector required if aggregationRule is set")
    for i, selector in enumerate(selectors):
        if not validate_label_selector(errs, selector, (*path, i)):
            errs.invalid((*path, i), selector, "invalid label selector")


def validate_binding(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateRoleBinding`` and ``ValidateClusterRoleBinding``; the roleRef's and
    subjects' ``apiGroup`` defaulted first (``SetDefaults_RoleBinding``,
    ``SetDefaults_ClusterRoleBinding``: an empty or absent roleRef group is
    rbac.authorization.k8s.io; ``SetDefaults_Subject``)."""
    namespaced = obj.get("kind") == "RoleBinding"
    ref = as_map(obj.get("roleRef"))
    if ref.get("apiGroup") not in (GROUP, "", None):
        errs.not_supported(("roleRef", "apiGroup"), ref.get("apiGroup", ""), [GROUP])
    kinds = ["ClusterRole", "Role"] if namespaced else ["ClusterRole"]
    if ref.get("kind") not in kinds:
        errs.not_supported(("roleRef", "kind"), ref.get("kind", ""), kinds)
    name = as_str(ref.get("name"))
    if not name:
        errs.required(("roleRef", "name"))
    else:
        errs.problem(("roleRef", "name"), path_segment(name))
    for i, subject in enumerate(as_list(obj.get("subjects"))):
        subject, spath = as_map(subject), ("subjects", i)
        kind, name = subject.get("kind"), as_str(subject.get("name"))
        group = subject.get("apiGroup")
        if group is None:
            group = "" if kind == "ServiceAccount" else GROUP  # SetDefaults_Subject
        if not name:
            errs.required((*spath, "name"))
        if kind == "ServiceAccount":
            if name:
                errs.problem((*spath, "name"), dns_subdomain(name))
            if group:
                errs.not_supported((*spath, "apiGroup"), group, [""])
            if not namespaced and not as_str(subject.get("namespace")):
                errs.required((*spath, "namespace"))
        elif kind in ("User", "Group"):
            if group != GROUP:
                errs.not_supported((*spath, "apiGroup"), group, [GROUP])
        else:
            errs.not_supported((*spath, "kind"), kind, ["Group", "ServiceAccount", "User"])
