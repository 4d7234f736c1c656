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
from functools import cache
from typing import Any

from .. import catalog
from .. import schemas as k8s
from ..catalog import Scope
from .field import Errors, Issue, Path
from .lists import check_keyed_lists
from .meta import (
    dns_subdomain,
    path_segment,
    validate_annotations,
    validate_labels,
    validate_object_meta,
)
from .pods import validate_pod_template_spec
from .resources import validate_container_resource_requirements
from .values import as_map, as_str
from .volumes import validate_volume_mounts, validate_volumes

__all__ = ["Issue", "Path", "embedded_issues", "handled_kinds", "object_issues"]


@cache
def handled_kinds() -> frozenset[str]:
    """The built-in kinds checked in full (their row's :attr:`kubetrain.kube.catalog.Kind.api`),
    as ``apiVersion/kind`` (other objects get the checks of their metadata and keyed lists)."""
    return frozenset(
        f"{row.group + '/' if row.group else ''}v1/{row.kind}"
        for row in catalog.rows()
        if row.api is not None
    )


def object_issues(obj: Any, version: tuple[int, int]) -> list[Issue]:
    """Everything kube-apiserver ``version`` would refuse in ``obj`` on create beyond its
    schema. Built-in kinds of :func:`handled_kinds` get every check; other built-in kinds
    their metadata and keyed lists; custom resources the formats in their metadata (upstream
    ``customResourceStrategy.Validate``: a DNS-subdomain name; the rest of their CRD's checks
    are :mod:`kubetrain.kube.apiextensions`')."""
    errs = Errors(version)
    if not isinstance(obj, dict):
        return errs.issues
    api_version, kind = as_str(obj.get("apiVersion")), as_str(obj.get("kind"))
    group, _, ver = api_version.rpartition("/")
    definition = k8s.builtin_definition(version, api_version, kind)
    row = catalog.lookup((group, kind))
    checks = row.api if ver == "v1" else None
    meta = obj.get("metadata")
    if checks is not None:
        namespaced = row.scope is not Scope.CLUSTER
        validate_object_meta(errs, meta, checks.name_rule_at(version), namespaced=namespaced)
        if definition is not None:
            check_keyed_lists(errs, definition, obj, template_times=True)
        if checks.validate is not None:
            checks.validate(errs, obj)
    elif definition is not None:
        validate_object_meta(errs, meta, path_segment, namespaced=True)
        check_keyed_lists(errs, definition, obj, template_times=True)
    elif isinstance(meta, dict):
        validate_object_meta(errs, meta, dns_subdomain, namespaced=True, core=False)
    return errs.issues


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
