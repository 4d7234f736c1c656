"""Object metadata, labels, annotations and label selectors, as the API server checks them for
every object (upstream ``k8s.io/apimachinery/pkg/api/validation/objectmeta.go`` and
``k8s.io/apimachinery/pkg/apis/meta/v1/validation``)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

from ..names import (
    DNS1035_LABEL,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    LABEL_VALUE,
    check_label_key,
    check_path_segment,
)
from .field import Errors, Path
from .values import as_int, as_list, as_map, as_str

__all__ = [
    "NameRule",
    "dns1035_label",
    "dns_label",
    "dns_subdomain",
    "path_segment",
    "selector_matches",
    "validate_annotations",
    "validate_label_selector",
    "validate_labels",
    "validate_meta_times",
    "validate_object_meta",
]

#: A name rule: ``(name, is_prefix)`` -> a message, or ``None`` when the name is valid. With
#: ``is_prefix`` the name is a ``generateName`` that gets a random suffix, so it may end in '-'
#: (upstream ``ValidateNameFunc``).
NameRule = Callable[[str, bool], str | None]

#: Upstream ``TotalAnnotationSizeLimitB``.
ANNOTATIONS_SIZE_LIMIT = 256 * 1024
#: Finalizers Kubernetes itself knows without a domain prefix (upstream ``standardFinalizers``).
_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
_SELECTOR_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def _masked(name: str, prefix: bool) -> str:
    # Upstream maskTrailingDash: a generateName may end in '-' before its random suffix.
    return name[:-1] + "a" if prefix and len(name) > 1 and name.endswith("-") else name


def dns_subdomain(name: str, prefix: bool = False) -> str | None:
    """Upstream ``NameIsDNSSubdomain``: most objects' names."""
    return DNS1123_SUBDOMAIN.check(_masked(name, prefix))


def dns_label(name: str, prefix: bool = False) -> str | None:
    """Upstream ``NameIsDNSLabel``: namespaces, and StatefulSets from Kubernetes 1.27."""
    return DNS1123_LABEL.check(_masked(name, prefix))


def dns1035_label(name: str, prefix: bool = False) -> str | None:
    """Upstream ``NameIsDNS1035Label``: Services."""
    return DNS1035_LABEL.check(_masked(name, prefix))


def path_segment(name: str, prefix: bool = False) -> str | None:
    """Upstream ``path.IsValidPathSegmentName``: RBAC objects, and the least every object name
    meets (kubectl and the REST layer refuse others before validation)."""
    return check_path_segment(name)


def validate_labels(errs: Errors, labels: Any, path: Path) -> None:
    """Upstream ``ValidateLabels``: qualified-name keys, label values (errors at the map)."""
    for key, value in as_map(labels).items():
        if problem := check_label_key(str(key)):
            errs.add(path, f"label {problem}")
        if isinstance(value, str) and (problem := LABEL_VALUE.check(value)):
            errs.add(path, f"label {key!r}: {problem}")


def validate_annotations(errs: Errors, annotations: Any, path: Path, size: bool = True) -> None:
    """Upstream ``ValidateAnnotations``: qualified-name keys in any case, 256 KiB in all
    (``size=False``: the keys only)."""
    total = 0
    for key, value in as_map(annotations).items():
        key = str(key)
        if problem := check_label_key(key.lower()):
            errs.add(path, f"annotation {problem}")
        total += len(key.encode()) + len(as_str(value).encode())
    if size and total > ANNOTATIONS_SIZE_LIMIT:
        errs.too_long(path, ANNOTATIONS_SIZE_LIMIT)


def _validate_finalizers(errs: Errors, finalizers: Any, path: Path, core: bool) -> None:
    # Upstream ValidateFinalizers, and validateKubeFinalizerName for the core API groups.
    names = [f for f in as_list(finalizers) if isinstance(f, str)]
    for name in names:
        if problem := check_label_key(name):
            errs.add(path, f"finalizer {problem}")
        elif core and "/" not in name and name not in _STANDARD_FINALIZERS:
            errs.invalid(
                path, name, "is neither a standard finalizer name nor a domain-qualified one"
            )
    if "orphan" in names and "foregroundDeletion" in names:
        errs.invalid(path, names, "finalizers orphan and foregroundDeletion cannot both be set")


def _validate_owner_references(errs: Errors, refs: Any, path: Path) -> None:
    # Upstream ValidateOwnerReferences.
    controller = ""
    for ref in as_list(refs):
        ref = as_map(ref)
        version = as_str(ref.get("apiVersion")).rpartition("/")[2]
        if not version:
            errs.invalid((*path, "apiVersion"), ref.get("apiVersion"), "version must not be empty")
        for key in ("kind", "name", "uid"):
            if not as_str(ref.get(key)):
                errs.invalid((*path, key), ref.get(key, ""), "must not be empty")
        if ref.get("apiVersion") == "v1" and ref.get("kind") == "Event":
            errs.invalid(path, ref, "an Event may not be an owner")
        if ref.get("controller") is True:
            this = f"{ref.get('kind')}/{ref.get('name')}"
            if controller:
                errs.invalid(
                    path, this, f"only one reference may be a controller; {controller} is too"
                )
            else:
                controller = this


def validate_object_meta(
    errs: Errors,
    meta: Any,
    name_rule: NameRule,
    path: Path = ("metadata",),
    *,
    namespaced: bool = True,
    core: bool = True,
) -> None:
    """Upstream ``ValidateObjectMeta`` on create.

    A namespace is checked when given: offline, the namespace kubectl would add is unknown. On
    a cluster-scoped object the server clears a given namespace (``rest.BeforeCreate``), so it
    is not an error here either. ``core=False``: a custom resource's metadata, whose presence
    of a name and annotation size :mod:`kubetrain.kube.apiextensions` checks with the rest of
    its CRD's rules; here the formats (``ValidateObjectMetaAccessor`` from
    ``customResourceStrategy.Validate``), and any finalizer names.
    """
    meta = as_map(meta)
    generate = as_str(meta.get("generateName"))
    if generate and (problem := name_rule(generate, True)):
        errs.add((*path, "generateName"), problem)
    name = as_str(meta.get("name"))
    if not name:
        if not generate and core:
            errs.required((*path, "name"), "name or generateName is required")
    elif problem := check_path_segment(name) or name_rule(name, False):
        errs.add((*path, "name"), problem)
    namespace = as_str(meta.get("namespace"))
    if namespaced and namespace:
        errs.problem((*path, "namespace"), dns_label(namespace))
    generation = as_int(meta.get("generation"))
    if generation is not None and generation < 0:
        errs.invalid((*path, "generation"), generation, "must be greater than or equal to 0")
    _decodable(errs, meta, path, core)
    validate_labels(errs, meta.get("labels"), (*path, "labels"))
    validate_annotations(errs, meta.get("annotations"), (*path, "annotations"), size=core)
    _validate_owner_references(errs, meta.get("ownerReferences"), (*path, "ownerReferences"))
    _validate_finalizers(errs, meta.get("finalizers"), (*path, "finalizers"), core)


#: Go's time.RFC3339, as ``metav1.Time.UnmarshalJSON`` reads it.
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def _rfc3339(text: str) -> bool:
    m = _RFC3339.fullmatch(text)
    if m is None:
        return False
    try:
        datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return int(m[4]) < 24 and int(m[5]) < 60 and int(m[6]) < 60


def _decodable(errs: Errors, meta: dict[str, Any], path: Path, core: bool) -> None:
    """What the server refuses in metadata before validation, whatever the kind: a ``uid``
    (a precondition of the apply: ``uid mismatch``), a ``managedFields`` in an apply request
    (``metadata.managedFields must be nil``: apimachinery v0.36.2 ``fieldmanager``'s apply
    patcher), a ``resourceVersion`` that is not
    an unsigned integer (the storage layer's ``strconv.ParseUint``); and for a built-in kind a
    creation or deletion time that is not RFC 3339 (the conversion to its Go type fails)."""
    if meta.get("managedFields") is not None:
        errs.forbidden(
            (*path, "managedFields"), "must be nil: server-side apply sets it, a manifest may not"
        )
    if as_str(meta.get("uid")):
        errs.forbidden(
            (*path, "uid"),
            "a manifest may not set it: server-side apply takes it as a precondition, and no "
            "object of that uid exists yet (a live object's uid is immutable)",
        )
    version = meta.get("resourceVersion")
    if isinstance(version, str) and version and not re.fullmatch("[0-9]+", version):
        errs.invalid((*path, "resourceVersion"), version, "must be an unsigned integer")
    if core:
        validate_meta_times(errs, meta, path)


def validate_meta_times(errs: Errors, meta: dict[str, Any], path: Path) -> None:
    """A creation or deletion time that is not RFC 3339: a built-in object's ObjectMeta, its
    own or a template's, cannot be converted to its Go type (``metav1.Time``)."""
    for key in ("creationTimestamp", "deletionTimestamp"):
        value = meta.get(key)
        if isinstance(value, str) and not _rfc3339(value):
            errs.invalid(
                (*path, key), value, "not an RFC 3339 time: the server cannot decode the object"
            )


def validate_label_selector(errs: Errors, selector: Any, path: Path) -> bool:
    """Upstream ``ValidateLabelSelector``; returns whether the selector is also one the server
    can turn into a selector (``LabelSelectorAsSelector``)."""
    selector = as_map(selector)
    ok = True
    before = len(errs.issues)
    validate_labels(errs, selector.get("matchLabels"), (*path, "matchLabels"))
    for i, expr in enumerate(as_list(selector.get("matchExpressions"))):
        expr = as_map(expr)
        epath = (*path, "matchExpressions", i)
        operator, values = expr.get("operator"), as_list(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                errs.required(
                    (*epath, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.forbidden(
                    (*epath, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
        else:
            errs.invalid(
                (*epath, "operator"),
                operator,
                f"not a valid selector operator ({', '.join(sorted(_SELECTOR_OPERATORS))})",
            )
        errs.problem((*epath, "key"), check_label_key(as_str(expr.get("key"))))
        for j, value in enumerate(values):
            if isinstance(value, str):
                errs.problem((*epath, "values", j), LABEL_VALUE.check(value))
    if len(errs.issues) > before:
        ok = False
    return ok


def selector_matches(selector: Any, labels: Any) -> bool:
    """Whether a (valid) label selector selects ``labels``; an absent selector selects nothing,
    an empty one everything (upstream ``LabelSelectorAsSelector``)."""
    if selector is None:
        return False
    selector, labels = as_map(selector), as_map(labels)
    for key, value in as_map(selector.get("matchLabels")).items():
        if labels.get(key) != value:
            return False
    for expr in as_list(selector.get("matchExpressions")):
        expr = as_map(expr)
        label, operator = expr.get("key"), expr.get("operator")
        values = as_list(expr.get("values"))
        present = label in labels
        if operator == "In" and not (present and labels[label] in values):
            return False
        if operator == "NotIn" and present and labels[label] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def selector_is_empty(selector: Any) -> bool:
    selector = as_map(selector)
    return not as_map(selector.get("matchLabels")) and not as_list(selector.get("matchExpressions"))
