"""What kube-apiserver refuses on create beyond its JSON schemas, offline.

The checks mirror the server's own validation (``pkg/apis/*/validation`` and
``k8s.io/apimachinery``'s), organised by API group: :mod:`.meta` (object metadata, labels,
selectors), :mod:`.pods` and :mod:`.volumes` (pods and pod templates), :mod:`.core` (the other
core/v1 kinds), :mod:`.policy` (PriorityClass, RuntimeClass, ResourceQuota, LimitRange),
:mod:`.apps`, :mod:`.batch`, :mod:`.rbac`, and :mod:`.lists` (keyed lists, as
server-side apply reads them). Each function names the upstream function it follows; where the
server's behaviour changed between Kubernetes 1.25 and 1.37, :mod:`.features` says from which
minor version.

:func:`object_issues` judges a whole object (``kubetrain validate``, render);
:func:`embedded_issues` a Kubernetes type embedded in a job document (a TFJob's pod template)
at load time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import schemas as k8s
from . import apps, batch, core, policy, rbac
from .features import since
from .field import Errors, Issue, Path
from .lists import check_keyed_lists
from .meta import (
    NameRule,
    dns1035_label,
    dns_label,
    dns_subdomain,
    path_segment,
    validate_annotations,
    validate_labels,
    validate_meta_times,
    validate_object_meta,
)
from .pods import validate_pod_template_spec
from .resources import validate_container_resource_requirements
from .values import as_map, as_str
from .volumes import validate_volume_mounts, validate_volumes

__all__ = ["HANDLED_KINDS", "Issue", "Path", "embedded_issues", "object_issues"]

Validate = Callable[[Errors, dict[str, Any]], None]


def _versioned_name(kind: str, version: tuple[int, int]) -> NameRule:
    if kind == "Service":
        # Upstream ValidateServiceName (v1.36.2, pkg/apis/core/validation): a DNS label under
        # RelaxedServiceNameValidation ("1abc" is a valid name), a DNS-1035 label before.
        return dns_label if since(version, "RelaxedServiceNameValidation") else dns1035_label
    # Upstream ValidateStatefulSetName: a DNS label from 1.27, a subdomain before.
    return dns_label if since(version, "StatefulSetNameIsLabel") else dns_subdomain


#: (API group, kind) -> (name rule, namespaced, the kind's own checks), for the kinds whose
#: every create-time check is mirrored here.
_KINDS: dict[tuple[str, str], tuple[NameRule | None, bool, Validate | None]] = {
    ("", "Pod"): (dns_subdomain, True, core.validate_pod),
    ("", "PodTemplate"): (dns_subdomain, True, core.validate_pod_template),
    ("", "ReplicationController"): (dns_subdomain, True, core.validate_replication_controller),
    ("", "Service"): (None, True, core.validate_service),
    ("", "ServiceAccount"): (dns_subdomain, True, None),
    ("", "Secret"): (dns_subdomain, True, core.validate_secret),
    ("", "ConfigMap"): (dns_subdomain, True, core.validate_config_map),
    ("", "Namespace"): (dns_label, False, core.validate_namespace),
    ("", "PersistentVolumeClaim"): (dns_subdomain, True, core.validate_pvc),
    ("", "ResourceQuota"): (dns_subdomain, True, policy.validate_resource_quota),
    ("", "LimitRange"): (dns_subdomain, True, policy.validate_limit_range),
    ("scheduling.k8s.io", "PriorityClass"): (dns_subdomain, False, policy.validate_priority_class),
    ("node.k8s.io", "RuntimeClass"): (dns_subdomain, False, policy.validate_runtime_class),
    ("apps", "Deployment"): (dns_subdomain, True, apps.validate_deployment),
    ("apps", "ReplicaSet"): (dns_subdomain, True, apps.validate_replica_set),
    ("apps", "StatefulSet"): (None, True, apps.validate_stateful_set),
    ("apps", "DaemonSet"): (dns_subdomain, True, apps.validate_daemon_set),
    ("batch", "Job"): (dns_subdomain, True, batch.validate_job),
    ("batch", "CronJob"): (dns_subdomain, True, batch.validate_cron_job),
    ("rbac.authorization.k8s.io", "Role"): (path_segment, True, rbac.validate_role),
    ("rbac.authorization.k8s.io", "ClusterRole"): (path_segment, False, rbac.validate_role),
    ("rbac.authorization.k8s.io", "RoleBinding"): (path_segment, True, rbac.validate_binding),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (
        path_segment,
        False,
        rbac.validate_binding,
    ),
}
#: The built-in kinds checked in full, as ``apiVersion/kind`` (other objects get the checks of
#: their metadata and keyed lists).
HANDLED_KINDS = frozenset(f"{group + '/' if group else ''}v1/{kind}" for group, kind in _KINDS)


def object_issues(obj: Any, version: tuple[int, int]) -> list[Issue]:
    """Everything kube-apiserver ``version`` would refuse in ``obj`` on create beyond its
    schema. Built-in kinds of :data:`HANDLED_KINDS` get every check; other built-in kinds
    their metadata and keyed lists; custom resources the formats in their metadata (upstream
    ``customResourceStrategy.Validate``: a DNS-subdomain name; the rest of their CRD's checks
    are :mod:`kubetrain.kube.apiextensions`')."""
    errs = Errors(version)
    if not isinstance(obj, dict):
        return errs.issues
    api_version, kind = as_str(obj.get("apiVersion")), as_str(obj.get("kind"))
    group, _, ver = api_version.rpartition("/")
    definition = k8s.builtin_definition(version, api_version, kind)
    entry = _KINDS.get((group, kind)) if ver == "v1" else None
    meta = obj.get("metadata")
    if entry is not None:
        rule, namespaced, validate = entry
        rule = rule or _versioned_name(kind, version)
        validate_object_meta(errs, meta, rule, namespaced=namespaced)
        if definition is not None:
            check_keyed_lists(errs, definition, obj)
        if validate is not None:
            validate(errs, obj)
    elif definition is not None:
        validate_object_meta(errs, meta, path_segment, namespaced=True)
        check_keyed_lists(errs, definition, obj)
    elif isinstance(meta, dict):
        validate_object_meta(errs, meta, dns_subdomain, namespaced=True, core=False)
    if definition is not None:
        _template_times(errs, obj, ())
    return errs.issues


def _template_times(errs: Errors, value: Any, path: Path) -> None:
    """The times of every ObjectMeta a built-in object embeds (a pod template's, a claim
    template's, a CronJob's job template's): decoded with the object (``validate_meta_times``)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "metadata" and path and isinstance(item, dict):
                validate_meta_times(errs, item, (*path, key))
            elif isinstance(item, dict | list):
                _template_times(errs, item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict | list):
                _template_times(errs, item, (*path, i))


def _volume(errs: Errors, value: Any) -> None:
    issues = Errors(errs.version)
    validate_volumes(issues, [value], ())
    errs.issues += [Issue(i.path[1:], i.message) for i in issues.issues]


def _volume_mount(errs: Errors, value: Any) -> None:
    issues = Errors(errs.version)
    validate_volume_mounts(issues, [value], None, None, True, ())
    errs.issues += [
        Issue(i.path[1:] if i.path[:1] == (0,) else i.path, i.message) for i in issues.issues
    ]


def _template_meta(errs: Errors, value: Any) -> None:
    validate_labels(errs, as_map(value).get("labels"), ("labels",))
    validate_annotations(errs, as_map(value).get("annotations"), ("annotations",))


#: Kubernetes definitions a job document embeds -> the checks the server makes of them where
#: they end up (a TFJob's replica template becomes a Pod's metadata and spec).
_EMBEDDED: dict[str, Callable[[Errors, Any], None]] = {
    "io.k8s.api.core.v1.PodTemplateSpec": lambda errs, value: validate_pod_template_spec(
        errs, value, ()
    ),
    "io.k8s.api.core.v1.ResourceRequirements": lambda errs, value: (
        validate_container_resource_requirements(errs, value, ())
    ),
    "io.k8s.api.core.v1.Volume": _volume,
    "io.k8s.api.core.v1.VolumeMount": _volume_mount,
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": _template_meta,
}


def embedded_issues(definition: str, value: Any, version: tuple[int, int]) -> list[Issue]:
    """What the API server would refuse in ``value``, an instance of the Kubernetes type
    ``definition`` embedded in a job document, once kubetrain builds it into an object
    (paths relative to ``value``)."""
    errs = Errors(version)
    check_keyed_lists(errs, definition, value)
    if check := _EMBEDDED.get(definition):
        check(errs, value)
    return errs.issues
