"""Validate a custom resource against its CRD version's structural schema, as on create.

Mirrors what kube-apiserver does with a custom resource sent by ``kubectl apply --server-side
--validate=strict`` (``k8s.io/apiextensions-apiserver``):

1. defaults of the schema are applied (``pkg/apiserver/schema/defaulting`` ``Default``),
   including in place of ``null`` where the field is not nullable;
2. unknown fields are refused, as server-side field validation ``Strict`` does where pruning
   would drop them (``pkg/apiserver/schema/pruning``): everywhere except below
   ``x-kubernetes-preserve-unknown-fields``; ``apiVersion``, ``kind`` and ``metadata`` are known
   at the root and in ``x-kubernetes-embedded-resource`` objects;
3. value validation (``pkg/apiserver/validation`` ``ValidateCustomResource``, kube-openapi's
   validator): types with int-or-string, nullable, enum, formats, patterns, bounds, lengths,
   ``required``, ``allOf``/``anyOf``/``oneOf``/``not``;
4. ``x-kubernetes-list-type`` set and map uniqueness (``pkg/apiserver/schema/listtype``
   ``ValidateListSetsAndMaps``);
5. metadata: the root's and embedded resources' ``metadata`` typed as ``ObjectMeta``, a name
   (or generateName), the namespace as the CRD's scope wants it, the CRD's own restrictions of
   ``metadata.name``/``generateName``, annotations within 256 KiB, and embedded resources'
   ``apiVersion``/``kind`` (``pkg/apiserver/schema/objectmeta`` ``Validate``);
6. ``x-kubernetes-validations`` CEL rules (:mod:`.cel`), unless an earlier problem is a missing
   value or a wrong type, which the server treats as blocking (``hasBlockingErr``).

The formats of ``metadata.name``, label keys and values, annotation keys and finalizers of the
root object are :mod:`kubetrain.kube.apiserver`'s (its ``api`` findings in ``kubetrain validate``).
"""

from __future__ import annotations

import base64
import ipaddress
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from .. import schemas as k8s
from ..names import LABEL_VALUE, check_label_key
from .cel import RESERVED, RuleFailure, escape_property, evaluate
from .celdemand import ALL, EACH, PRESENT, Demand, below, cut
from .decoding import sent_as_int64
from .schema import INT_RANGES, MISSING, Node

__all__ = ["FORMATS", "apply_defaults", "validate_custom_resource", "validate_value"]

Path = tuple[str | int, ...]
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_ROOT_KNOWN = frozenset({"apiVersion", "kind", "metadata"})
#: ``TotalAnnotationSizeLimitB`` of ``apimachinery/pkg/api/validation``.
_ANNOTATIONS_LIMIT = 256 * 1024


def _copy(value: Any) -> Any:
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


def apply_defaults(node: Node, value: Any) -> None:
    """Fill in the schema's defaults in ``value`` (in place), as ``structuraldefaulting.Default``:
    a default takes the place of an absent field, or of ``null`` where the field is not
    nullable."""
    if not node.subtree_defaults:
        return
    if isinstance(value, dict):
        for key, prop in node.properties.items():
            if prop.default is not MISSING and (
                key not in value or (value[key] is None and not prop.nullable)
            ):
                value[key] = _copy(prop.default)
        for key, item in value.items():
            child = node.properties.get(key, node.additional)
            if child is None:
                continue
            if item is None and child.default is not MISSING and not child.nullable:
                value[key] = item = _copy(child.default)
            apply_defaults(child, item)
    elif isinstance(value, list) and node.items is not None:
        items = node.items
        for i, item in enumerate(value):
            if item is None and items.default is not MISSING and not items.nullable:
                value[i] = item = _copy(items.default)
            apply_defaults(items, item)


def _defaulted(node: Node, value: Any) -> Any:
    """``value`` with the schema's defaults filled in (:func:`apply_defaults`), as a new value
    that shares every subtree without a default to apply (which nothing mutates)."""
    if not node.subtree_defaults:
        return value
    if type(value) is dict:
        out = dict(value)
        for key, prop in node.properties.items():
            if prop.default is not MISSING and (
                key not in out or (out[key] is None and not prop.nullable)
            ):
                out[key] = _copy(prop.default)
        for key, item in out.items():
            child = node.properties.get(key, node.additional)
            if child is None:
                continue
            if item is None and child.default is not MISSING and not child.nullable:
                item = _copy(child.default)
            out[key] = _defaulted(child, item)
        return out
    if type(value) is list and node.items is not None:
        items = node.items
        return [
            _defaulted(
                items,
                _copy(items.default)
                if item is None and items.default is not MISSING and not items.nullable
                else item,
            )
            for item in value
        ]
    if isinstance(value, dict | list):  # a Mapping or a list subclass: as apply_defaults
        copied = _copy(value)
        apply_defaults(node, copied)
        return copied
    return value


def _quote(value: Any, path: Path) -> str:
    if k8s.sensitive_path(path) or k8s.holds_sensitive(value, path):
        # Never what may be a credential (env values, Secret data), whatever its type.
        return f"the value given ({k8s.value_shape(value)}, not shown)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_type(kind: str, value: Any) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        # JSON has one number type: 2.0 decodes as an integer where one is expected.
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return True


# --- formats (kube-openapi strfmt, as apiextensions' supported formats) --------------------------

_HOSTNAME = re.compile(r"(?=.{1,255}$)[^\W_]([\w-]{0,61}[^\W_])?(\.[^\W_]([\w-]{0,61}[^\W_])?)*\.?")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")
_RGBCOLOR = re.compile(
    r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])"
    r"\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$"
)
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$")
_BSON = re.compile(r"^[0-9a-fA-F]{24}$")
_UUID = {
    "uuid": re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I),
    "uuid3": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I
    ),
    "uuid4": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I
    ),
    "uuid5": re.compile(
        r"^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I
    ),
}
_DURATION = re.compile(
    r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h|d|w))+$"
    r"|^\d+\s*(?:ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|"
    r"minutes?|hours?|days?|weeks?|sec|min|hr)$"
)
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$"
)


def _ip(kind: type[ipaddress.IPv4Address] | type[ipaddress.IPv6Address]) -> Callable[[str], bool]:
    def check(text: str) -> bool:
        try:
            kind(text)
        except ValueError:
            return False
        return True

    return check


def _cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def _byte(text: str) -> bool:
    try:
        base64.b64decode(text, validate=True)
    except ValueError:
        return False
    return True


def _date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _date_time(text: str) -> bool:
    if not _DATE_TIME.match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _matcher(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda text: pattern.match(text) is not None


def _uri(text: str) -> bool:
    # go-openapi's IsURI is Go's url.Parse: it refuses little more than control characters
    # and malformed escapes.
    return not re.search(r"[\x00-\x1f\x7f ]|%(?![0-9A-Fa-f]{2})", text)


#: Formats the API server checks on strings (``apiextensions-apiserver/pkg/apiserver/validation``
#: ``supportedFormats`` over kube-openapi's ``strfmt`` registry). Others are not checked, as
#: upstream. Deviation: ``isbn*`` and ``creditcard`` are not checked.
FORMATS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda s: bool(_BSON.match(s)),
    "uri": _uri,
    "email": lambda s: bool(_EMAIL.match(s)),
    "hostname": lambda s: bool(_HOSTNAME.fullmatch(s)),
    "ipv4": _ip(ipaddress.IPv4Address),
    "ipv6": _ip(ipaddress.IPv6Address),
    "cidr": _cidr,
    "mac": lambda s: bool(_MAC.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "rgbcolor": lambda s: bool(_RGBCOLOR.match(s)),
    "ssn": lambda s: bool(_SSN.match(s)),
    "byte": _byte,
    "date": _date,
    "date-time": _date_time,
    "datetime": _date_time,
    "duration": lambda s: bool(_DURATION.match(s)),
    **{name: _matcher(p) for name, p in _UUID.items()},
}


# --- the walk --------------------------------------------------------------------------------


class _Walk:
    """Problems found in one object, and whether one of them blocks the CEL rules."""

    def __init__(self) -> None:
        self.issues: list[k8s.SchemaIssue] = []
        self.blocking = False

    def add(self, path: Path, message: str, *, blocking: bool = False) -> None:
        self.issues.append(k8s.SchemaIssue(path, message))
        self.blocking = self.blocking or blocking


def _type_error(walk: _Walk, node: Node, value: Any, path: Path) -> bool:
    """Report ``value`` if it is not of the node's type; ``True`` when it is not."""
    if value is None:
        if node.nullable or not (node.type or node.int_or_string):
            return True
        expected = "integer,string" if node.int_or_string else node.type
        walk.add(path, f'Invalid value: "null": must be of type {expected}', blocking=True)
        return True
    if node.int_or_string:
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return False
        walk.add(
            path,
            f'Invalid value: "{k8s.json_type(value)}": must be of type integer,string',
            blocking=True,
        )
        return True
    if node.type and not _is_type(node.type, value):
        walk.add(
            path,
            f'Invalid value: "{k8s.json_type(value)}": must be of type {node.type}',
            blocking=True,
        )
        return True
    return False


def _check(walk: _Walk, node: Node, value: Any, path: Path, *, structural: bool = True) -> None:
    """Validate ``value`` against ``node``. ``structural`` is false inside junctors, whose
    branches only add value validations (no types, no unknown fields)."""
    if _plain(node, value):
        return
    if node.simple:
        # An object (a list) of an object (array) node without enum or junctors: its type is
        # right, and there is nothing to check of it but what is inside.
        kind = type(value)
        if kind is dict and node.type == "object":
            _check_object(walk, node, value, path, structural)
            return
        if kind is list and node.type == "array":
            _check_array(walk, node, value, path, structural)
            return
    if structural:
        if _type_error(walk, node, value, path):
            return
    elif value is None:
        return
    if node.enum is not None and value not in node.enum:
        allowed = ", ".join(json.dumps(v) for v in node.enum)
        walk.add(path, f"Unsupported value: {_quote(value, path)}: supported values: {allowed}")
    if isinstance(value, str):
        _check_string(walk, node, value, path)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(walk, node, value, path)
    elif isinstance(value, dict):
        _check_object(walk, node, value, path, structural)
    elif isinstance(value, list):
        _check_array(walk, node, value, path, structural)
    for branch in node.all_of:
        _check(walk, branch, value, path, structural=False)
    if node.any_of and not any(_passes(b, value, path) for b in node.any_of):
        walk.add(
            path, f"Invalid value: {_quote(value, path)}: must validate at least one schema (anyOf)"
        )
    if node.one_of and sum(_passes(b, value, path) for b in node.one_of) != 1:
        walk.add(
            path,
            f"Invalid value: {_quote(value, path)}: must validate one and only one schema (oneOf)",
        )
    if node.not_ is not None and _passes(node.not_, value, path):
        walk.add(path, f"Invalid value: {_quote(value, path)}: must not validate the schema (not)")


def _plain(node: Node, value: Any) -> bool:
    """Whether ``value`` is of a type ``node`` accepts with nothing else to check
    (:attr:`Node.accepts`: a string, a boolean or a number of a node without value
    validations): no walk finds anything in it, whether or not the walk is structural."""
    accepts = node.accepts
    if not accepts or type(value) not in accepts:
        return False
    bounds = node.int_range
    # Under a format's range, a string (int-or-string's) or an integer within it; a float is
    # walked (inf, nan and fractions are the walk's to judge).
    return (
        bounds is None
        or type(value) is str
        or (type(value) is int and bounds[0] <= value <= bounds[1])
    )


def _passes(node: Node, value: Any, path: Path) -> bool:
    trial = _Walk()
    _check(trial, node, value, path, structural=False)
    return not trial.issues


def _check_string(walk: _Walk, node: Node, value: str, path: Path) -> None:
    if node.max_length is not None and len(value) > node.max_length:
        walk.add(path, f"Too long: may not be more than {node.max_length} bytes")
    if node.min_length is not None and len(value) < node.min_length:
        walk.add(
            path,
            f"Invalid value: {_quote(value, path)}: should be at least {node.min_length} "
            "chars long",
        )
    if node.pattern is not None and not node.pattern.search(value):  # RE2: linear time
        walk.add(path, f"Invalid value: {_quote(value, path)}: should match '{node.pattern_text}'")
    check = FORMATS.get(node.format)
    if check is not None and not check(value):
        walk.add(path, f"Invalid value: {_quote(value, path)}: must be of type {node.format}")


def _check_number(walk: _Walk, node: Node, value: float, path: Path) -> None:
    """kube-openapi's ``numberValidator.Validate`` (the revision Kubernetes v1.36 vendors,
    43fb72c5454a, ``pkg/validation/validate/validator.go``): a bound that fits the node's type
    and format is compared in the value's own Go type (``MultipleOfNativeType``,
    ``MaximumNativeType``, ``MinimumNativeType``: an integer against the bound converted to
    int64, as Go converts it), any other as float64."""
    if (
        node.multiple_of is None
        and node.maximum is None
        and node.minimum is None
        and node.format not in INT_RANGES
    ):
        return  # nothing to check beyond the type (most numbers of a schema)
    shown = _Shown(value, path)
    bounds = INT_RANGES.get(node.format)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        walk.add(path, f"Invalid value: {shown}: must be of type integer with format {node.format}")
    number = _decoded(value)
    if node.multiple_of is not None:
        factor = float(node.multiple_of)
        _check_bound(walk, node, factor, "MultipleOf", path)
        if _native(number, factor, node):
            assert isinstance(number, int)
            whole = _go_int64(factor)
            if whole <= 0:
                walk.add(path, f"Invalid value: {whole}: {_not_positive(path, whole)}")
            elif _go_quotient(number, whole) * whole != number:
                walk.add(path, f"Invalid value: {shown}: should be a multiple of {whole}")
        elif factor <= 0:
            walk.add(path, f"Invalid value: {_go_float(factor)}: {_not_positive(path, factor)}")
        elif not _is_json_integer(
            1 / factor * float(number) if factor < 1 else float(number) / factor
        ):
            walk.add(path, f"Invalid value: {shown}: should be a multiple of {_go_float(factor)}")
    if node.maximum is not None:
        limit = float(node.maximum)
        _check_bound(walk, node, limit, "Maximum boundary", path)
        over = _beyond(number, limit, node, node.exclusive_maximum, maximum=True)
        if over is not None:
            than = "less than" if node.exclusive_maximum else "less than or equal to"
            walk.add(path, f"Invalid value: {shown}: should be {than} {over}")
    if node.minimum is not None:
        limit = float(node.minimum)
        _check_bound(walk, node, limit, "Minimum boundary", path)
        under = _beyond(number, limit, node, node.exclusive_minimum, maximum=False)
        if under is not None:
            than = "greater than" if node.exclusive_minimum else "greater than or equal to"
            walk.add(path, f"Invalid value: {shown}: should be {than} {under}")


class _Shown:
    """A value as a message quotes it (:func:`_quote`), worked out only when a message is made."""

    __slots__ = ("path", "value")

    def __init__(self, value: Any, path: Path) -> None:
        self.value = value
        self.path = path

    def __str__(self) -> str:
        return _quote(self.value, self.path)


def _beyond(
    number: int | float, limit: float, node: Node, exclusive: bool, *, maximum: bool
) -> str | None:
    """The bound as the message shows it when ``number`` is past it, else ``None``
    (``MaximumNativeType`` / ``MinimumNativeType``, then ``Maximum`` / ``Minimum``)."""
    if _native(number, limit, node):
        bound: int | float = _go_int64(limit)
        shown = str(bound)
    else:
        number, bound, shown = float(number), limit, _go_float(limit)  # Go's %v of a float64
    if maximum:
        past = number >= bound if exclusive else number > bound
    else:
        past = number <= bound if exclusive else number < bound
    return shown if past else None


def _decoded(value: int | float) -> int | float:
    """``value`` as the API server decodes it: kubectl sends JSON, in which a whole float below
    1e21 is written without a fraction, in its shortest digits (Go's ``encoding/json``), which
    ``k8s.io/apimachinery/pkg/util/json`` then reads back as an int64 when it is within int64
    (:func:`~.decoding.sent_as_int64`)."""
    if isinstance(value, float):
        whole = sent_as_int64(value)
        return value if whole is None else whole
    return value


def _native(number: int | float, bound: float, node: Node) -> bool:
    """Whether kube-openapi compares ``number`` with ``bound`` in ``number``'s Go type: it is
    an integer, and the bound fits the node's type and format (:func:`_bound_fits`)."""
    return isinstance(number, int) and _bound_fits(bound, node)


def _bound_fits(bound: float, node: Node) -> bool:
    """kube-openapi's ``IsValueValidAgainstRange(bound, type, format)``: the bound, written by
    ``swag.FormatFloat64`` (``strconv.FormatFloat(f, 'f', -1, 64)``), parses as the node's
    type: an integer node's as an integer of its format (int64 unless int32, uint32 or uint64),
    a number node's of format float or float32 as a float32; anything else fits."""
    if node.type == "integer":
        if not bound.is_integer() or abs(bound) >= 1e21:
            return False  # FormatFloat 'f' writes a fraction or more digits than ParseInt reads
        unsigned = _UINT_RANGES.get(node.format)
        if unsigned is not None and math.copysign(1.0, bound) < 0:
            return False  # "-0": ParseUint takes no sign
        low, high = unsigned or INT_RANGES.get(node.format, _INT64)
        return low <= int(bound) <= high
    if node.format in ("float", "float32"):
        return math.isfinite(bound) and abs(bound) < _FLOAT32_OVERFLOW
    return True


def _check_bound(walk: _Walk, node: Node, bound: float, prefix: str, path: Path) -> None:
    """The error ``numberValidator.Validate`` adds when a bound does not fit the node's type
    and format (:func:`_bound_fits`): every value of the node is then refused, whatever it is.
    The API server reports it with no field path (``<nil>``); kubetrain at the value's."""
    if not _bound_fits(bound, node):
        of = f"with format {node.format}" if node.format else "(default format)"
        walk.add(
            path,
            f'Invalid value: "": {prefix} value must be of type {node.type} {of} in '
            f"{_dotted(path)}",
        )


_INT64 = (-(2**63), 2**63 - 1)
_UINT_RANGES = {"uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}
#: Half-way from float32's largest value to 2^128: a float from there on parses (ParseFloat,
#: bitSize 32) as infinity, a range error.
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def _go_int64(value: float) -> int:
    """Go's ``int64(value)`` of a float64 on amd64 (the platform kube-apiserver is built for):
    truncated toward zero; NaN and values out of range give the minimum, -2^63 (CVTTSD2SQ)."""
    if not math.isfinite(value) or not -(2.0**63) <= value < 2.0**63:
        return -(2**63)
    return math.trunc(value)


def _go_quotient(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _is_json_integer(value: float) -> bool:
    """go-openapi/swag v0.23.0 ``IsFloat64AJSONInteger``: within +-(2^53-1), and equal to its
    truncation or within a relative error of 1e-9 of it (a fraction of a positive number
    over 1 only: below 1, or negative, the truncation compared with is 0 or wraps around)."""
    if not math.isfinite(value) or abs(value) > 2.0**53 - 1:
        return False
    truncated = math.trunc(value)
    if value == truncated:
        return True
    if value < 1:
        return False
    return (value - truncated) / (value + truncated) < 1e-9


def _not_positive(path: Path, factor: float) -> str:
    """``errors.MultipleOfMustBePositive``'s message."""
    shown = str(factor) if isinstance(factor, int) else _go_float(factor)
    return f"factor MultipleOf declared for {_dotted(path)} must be positive: {shown}"


def _dotted(path: Path) -> str:
    return ".".join(str(p) for p in path)


def _go_float(value: float) -> str:
    """A float64 as Go's ``%v`` prints it (``strconv.FormatFloat(f, 'g', -1, 64)``: the
    shortest digits, in exponent form when the exponent is below -4 or at least 6: ``1e-300``,
    ``1e+06``, ``0.5``, ``123456``)."""
    if not math.isfinite(value):
        return "+Inf" if value > 0 else ("-Inf" if value < 0 else "NaN")
    if value == 0:
        return "0"
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    assert isinstance(exponent, int)
    exp = len(text) + exponent - 1  # of the first digit
    minus = "-" if value < 0 else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if exponent >= 0:
        return minus + text + "0" * exponent
    point = len(text) + exponent
    if point > 0:
        return f"{minus}{text[:point]}.{text[point:]}"
    return f"{minus}0.{'0' * -point}{text}"


def _check_object(
    walk: _Walk, node: Node, value: dict[str, Any], path: Path, structural: bool
) -> None:
    for key in node.required:
        if key not in value:
            walk.add((*path, key), "Required value", blocking=True)
    if node.max_properties is not None and len(value) > node.max_properties:
        walk.add(path, f"Too many: {len(value)}: must have at most {node.max_properties} items")
    if node.min_properties is not None and len(value) < node.min_properties:
        walk.add(
            path,
            f"Invalid value: {len(value)}: should have at least {node.min_properties} properties",
        )
    root = structural and not path
    for key, item in value.items():
        if root and key == "metadata":
            continue  # checked as ObjectMeta
        child = node.properties.get(key, node.additional)
        if child is not None:
            if not _plain(child, item):
                _check(walk, child, item, (*path, key), structural=structural)
            continue
        here = (*path, key)
        if (root or node.embedded) and key in _ROOT_KNOWN:
            if node.embedded:
                _check_embedded_field(walk, key, item, here)
        elif structural and not node.preserve_unknown:
            walk.add(
                here,
                "unknown field: the CRD's schema does not declare it (strict field validation)",
            )
    if node.embedded and structural:
        for key in ("apiVersion", "kind"):
            if not value.get(key) and key not in node.properties:
                walk.add((*path, key), "Required value: must not be empty", blocking=True)


def _check_array(walk: _Walk, node: Node, value: list[Any], path: Path, structural: bool) -> None:
    if node.max_items is not None and len(value) > node.max_items:
        walk.add(path, f"Too many: {len(value)}: must have at most {node.max_items} items")
    if node.min_items is not None and len(value) < node.min_items:
        walk.add(path, f"Invalid value: {len(value)}: should have at least {node.min_items} items")
    items = node.items
    if items is not None:
        for i, item in enumerate(value):
            if not _plain(items, item):
                _check(walk, items, item, (*path, i), structural=structural)
    if structural:
        _check_list_type(walk, node, value, path)


def _check_list_type(walk: _Walk, node: Node, value: list[Any], path: Path) -> None:
    """``listtype.ValidateListSetsAndMaps``: no item of a set twice, no key tuple of a map
    twice."""
    if node.list_type == "set":
        seen: set[Any] = set()
        for i, item in enumerate(value):
            key: Any = _scalar_key(item)
            if key is None:
                key = json.dumps(item, sort_keys=True)
            if key in seen:
                walk.add((*path, i), f"Duplicate value: {_quote(item, (*path, i))}")
            seen.add(key)
    elif node.list_type == "map" and node.list_map_keys:
        keys_seen: set[Any] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue  # already reported as a wrong type
            key_values = {k: item[k] for k in node.list_map_keys if k in item}
            key = _scalars_key(key_values)
            if key in keys_seen:
                walk.add((*path, i), f"Duplicate value: {json.dumps(key_values, sort_keys=True)}")
            keys_seen.add(key)


#: The types whose values are equal exactly when their JSON texts are (``True == 1`` is told
#: apart by the type's name, which goes into the key).
_JSON_SCALARS = (str, int, bool, type(None))


def _scalar_key(value: Any) -> tuple[str, Any] | None:
    """A key equal for two values exactly when their JSON texts (``json.dumps``, keys sorted)
    are: the value with its type, for a string, an integer, a boolean or null; else ``None``
    (the text is the key then)."""
    kind = type(value)
    return (kind.__name__, value) if kind in _JSON_SCALARS else None


def _scalars_key(values: dict[str, Any]) -> Any:
    """:func:`_scalar_key` of a list map's key fields, together (their JSON text when one is not
    such a scalar)."""
    parts = []
    for name in sorted(values):
        key = _scalar_key(values[name])
        if key is None:
            return json.dumps(values, sort_keys=True)
        parts.append((name, key))
    return tuple(parts)


def _check_embedded_field(walk: _Walk, key: str, value: Any, path: Path) -> None:
    if key == "metadata":
        _check_meta(walk, value, path, None, embedded=True)
    elif not isinstance(value, str):
        walk.add(
            path, f'Invalid value: "{k8s.json_type(value)}": must be of type string', blocking=True
        )


def _check_meta(
    walk: _Walk,
    meta: Any,
    path: Path,
    version: tuple[int, int] | None,
    *,
    embedded: bool = False,
    namespaced: bool = True,
    restrictions: Node | None = None,
) -> None:
    """Metadata of a custom resource (or of an embedded resource): ``ObjectMeta`` types,
    name or generateName, namespace and scope, annotation size, the CRD's name rules
    (``objectmeta.Validate`` and ``ValidateObjectMetaAccessor``)."""
    if meta is None and embedded:
        return
    if not isinstance(meta, dict):
        walk.add(
            path, f'Invalid value: "{k8s.json_type(meta)}": must be of type object', blocking=True
        )
        return
    validator = k8s.embedded_validator(version or k8s.supported_versions()[-1], _OBJECT_META)
    for issue in k8s.schema_issues(validator, meta):
        walk.add((*path, *issue.path), issue.message, blocking=True)
    if not embedded:
        if not meta.get("name") and not meta.get("generateName"):
            walk.add(
                (*path, "name"), "Required value: name or generateName is required", blocking=True
            )
        if not namespaced and meta.get("namespace"):
            walk.add((*path, "namespace"), "Forbidden: not allowed on this type")
    else:
        for key, label in _mapping(meta.get("labels")).items():
            if problem := check_label_key(str(key)):
                walk.add(
                    (*path, "labels", key), f"Invalid value: {json.dumps(key)}: label {problem}"
                )
            if isinstance(label, str) and (problem := LABEL_VALUE.check(label)):
                walk.add((*path, "labels", key), f"Invalid value: {json.dumps(label)}: {problem}")
        for key in _mapping(meta.get("annotations")):
            if problem := check_label_key(str(key)):
                walk.add(
                    (*path, "annotations", key),
                    f"Invalid value: {json.dumps(key)}: annotation {problem}",
                )
    annotations = _mapping(meta.get("annotations"))
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > _ANNOTATIONS_LIMIT:
        walk.add(
            (*path, "annotations"), f"Too long: may not be more than {_ANNOTATIONS_LIMIT} bytes"
        )
    if restrictions is not None:
        for key in ("name", "generateName"):
            rule = restrictions.properties.get(key)
            if rule is not None and isinstance(meta.get(key), str):
                _check(walk, rule, meta[key], (*path, key), structural=False)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


# --- CEL -------------------------------------------------------------------------------------


def _cel_value(node: Node | None, value: Any, need: Demand = ALL) -> Any:
    """``value`` as CEL sees it (object properties under their escaped names), with only what
    ``need`` reads of it (:func:`.celdemand.cut`, on the way; :data:`.celdemand.ALL`: all)."""
    if node is None or not node.subtree_escapes:
        return value if need == ALL else cut(value, need)  # CEL's names are the value's own
    if need == PRESENT:
        return None
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            child = node.properties.get(key)
            if child is not None:
                name = escape_property(key)
                if name is None:
                    continue
                # Kubernetes 1.31+ reads `self.namespace` as __namespace__ too.
                names = (name, key) if key in RESERVED else (name,)
            else:
                child, names = node.additional, (key,)
            for shown in names:
                part = need if need == ALL else below(need, shown)
                if part is not None:
                    out[shown] = _cel_value(child, item, part)
        return out
    if isinstance(value, list):
        each = ALL if need == ALL else need.get(EACH)
        if each is None or (need != ALL and len(need) > 1):
            each = ALL  # a field selected from a list: an error, which the whole list gives
        return [_cel_value(node.items, item, each) for item in value]
    return value


def _masked(node: Node | None, value: Any, char: str, path: Path) -> Any:
    """``value`` (at ``path`` of the object) as CEL sees it with what a message must not show
    replaced: every string (by ``char``, the same length), and under a sensitive path
    (:func:`kubetrain.kube.schemas.sensitive_path`: a credential-named field, ``data``...) every
    number (0 or 1), boolean (false or true) and map key (``x0``, ``x1``...; an object's
    properties keep their names). A messageExpression whose text changes under both masks
    prints one of them, maybe a password or a secret's key, and is not shown
    (:func:`.cel.evaluate`)."""
    flag = char == "y"
    if isinstance(value, str):
        return char * len(value)
    if isinstance(value, bool | int | float):
        if not k8s.sensitive_path(path):
            return value
        return flag if isinstance(value, bool) else type(value)(flag)
    if isinstance(value, list):
        items = node.items if node is not None else None
        return [_masked(items, item, char, (*path, i)) for i, item in enumerate(value)]
    if not isinstance(value, dict):
        return value
    secret_keys = k8s.sensitive_path(path)
    out: dict[str, Any] = {}
    for i, (key, item) in enumerate(value.items()):
        child = node.properties.get(key) if node is not None else None
        here = (*path, key)
        if child is not None:
            name = escape_property(key)
            if name is not None:
                out[name] = _masked(child, item, char, here)
                if key in RESERVED:
                    out[key] = out[name]
            continue
        masked = _masked(node.additional if node is not None else None, item, char, here)
        out[f"{char}{i}" if secret_keys else key] = masked
    return out


def _rule_failures(node: Node, value: Any, path: Path) -> Iterator[RuleFailure]:
    """The rules evaluated on create (``Node.create_rules``) of ``node`` and below that fail."""
    if not node.subtree_create_rules or value is None:
        return
    if node.create_rules:
        need = node.create_demand
        cel_value = _cel_value(node, value, need)
        whole = None
        for rule in node.create_rules:
            failure = evaluate(
                rule, cel_value, value, path, lambda char: _masked(node, value, char, path)
            )
            if failure is not None and need != ALL:
                # Not true of the value cut down to what the rules read: judged on the whole
                # value, so a failure, its message and an error are the whole value's.
                whole = _cel_value(node, value) if whole is None else whole
                failure = evaluate(
                    rule, whole, value, path, lambda char: _masked(node, value, char, path)
                )
            if failure is not None:
                yield failure
    if isinstance(value, dict):
        for key, item in value.items():
            child = node.properties.get(key, node.additional)
            if child is not None:
                yield from _rule_failures(child, item, (*path, key))
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            yield from _rule_failures(node.items, item, (*path, i))


def _list_key(node: Node, item: Any) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    return tuple(json.dumps(item.get(k), sort_keys=True) for k in node.list_map_keys)


def _transition_failures(node: Node, old: Any, new: Any, path: Path) -> Iterator[RuleFailure]:
    """The transition rules (``oldSelf``) of ``node`` and below that fail, where the live
    object ``old`` and the new one ``new`` both hold a value: upstream correlates object
    properties by name and items of ``x-kubernetes-list-type: map`` lists by their keys, no
    other list items (``apiextensions-apiserver`` v0.36.2, ``pkg/apiserver/schema/cel``
    ``Validator.validate`` with ``correlatableOldSelf``)."""
    if not node.subtree_rules or old is None or new is None:
        return
    if node.rules:
        cel_new, cel_old = _cel_value(node, new), _cel_value(node, old)
        for rule in node.rules:
            failure = evaluate(
                rule,
                cel_new,
                new,
                path,
                lambda char: _masked(node, new, char, path),
                old_value=cel_old,
            )
            if failure is not None and not failure.unchecked:
                yield failure
    if isinstance(new, dict) and isinstance(old, dict):
        for key, item in new.items():
            child = node.properties.get(key, node.additional)
            if child is not None and key in old:
                yield from _transition_failures(child, old[key], item, (*path, key))
    elif (
        isinstance(new, list)
        and isinstance(old, list)
        and node.items is not None
        and node.list_type == "map"
        and node.list_map_keys
    ):
        before = {_list_key(node, item): item for item in old}
        for i, item in enumerate(new):
            key = _list_key(node, item)
            if key is not None and key in before:
                yield from _transition_failures(node.items, before[key], item, (*path, i))


def validate_custom_resource_update(
    root: Node, old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[k8s.SchemaIssue]:
    """What the API server refuses updating the live ``old`` to ``new`` under the CRD version
    whose schema ``root`` is, beyond what it refuses creating ``new``
    (:func:`validate_custom_resource`): its transition rules. Both after defaulting, status
    left out (the status subresource's; an update of the main resource keeps the old
    status)."""
    before, after = _copy(dict(old)), _copy(dict(new))
    for value in (before, after):
        value.pop("status", None)
        apply_defaults(root, value)
    return [
        k8s.SchemaIssue(f.path, f.message) for f in _transition_failures(root, before, after, ())
    ]


# --- entry points ----------------------------------------------------------------------------


def validate_value(node: Node, value: Any) -> list[k8s.SchemaIssue]:
    """Problems of one value under one schema node (a default, say), paths relative to it."""
    walk = _Walk()
    _check(walk, node, value, (), structural=True)
    return walk.issues


def _check_shape(walk: _Walk, node: Node, value: Any, path: Path) -> None:
    """Only what server-side apply's typed object checks: types, unknown fields and the keys of
    list maps and sets (``status`` under the status subresource, which a create then drops:
    its value validations never run)."""
    if _type_error(walk, node, value, path):
        return
    if isinstance(value, dict):
        for key, item in value.items():
            child = node.properties.get(key, node.additional)
            if child is not None:
                _check_shape(walk, child, item, (*path, key))
            elif node.embedded and key in _ROOT_KNOWN:
                continue
            elif not node.preserve_unknown:
                walk.add(
                    (*path, key),
                    "unknown field: the CRD's schema does not declare it (strict field validation)",
                )
    elif isinstance(value, list):
        if node.items is not None:
            for i, item in enumerate(value):
                _check_shape(walk, node.items, item, (*path, i))
        _check_list_type(walk, node, value, path)


def _scale_replicas(walk: _Walk, obj: Mapping[str, Any], spec_replicas: str) -> None:
    """``customResourceValidator.ValidateScaleSpec`` (apiextensions-apiserver v0.36.2,
    ``pkg/registry/customresource/validator.go``): the value at the scale subresource's
    ``specReplicasPath``, when there is one, is an integer from 0 to 2^31-1 (the CRD's schema
    may say nothing of it: the Kubeflow CRDs' replicas have no minimum)."""
    parts = tuple(spec_replicas.removeprefix(".").split("."))
    here: Any = obj
    for n, part in enumerate(parts):
        if not isinstance(here, dict):
            walk.add(
                parts[:n],
                f"Invalid value: 0: {spec_replicas} accessor error: {_quote(here, parts[:n])} is "
                f"of the type {k8s.json_type(here)}, expected map[string]interface{{}}",
            )
            return
        if part not in here:
            return
        here = here[part]
    if here is None:
        return
    if not isinstance(here, int) or isinstance(here, bool):
        walk.add(
            parts,
            f"Invalid value: 0: {spec_replicas} accessor error: {_quote(here, parts)} is of the "
            f"type {k8s.json_type(here)}, expected int64",
        )
    elif here < 0:
        walk.add(parts, f"Invalid value: {here}: should be a non-negative integer")
    elif here > 2**31 - 1:
        walk.add(parts, f"Invalid value: {here}: should be less than or equal to {2**31 - 1}")


def validate_custom_resource(
    root: Node,
    obj: Mapping[str, Any],
    *,
    namespaced: bool = True,
    version: tuple[int, int] | None = None,
    scale_replicas: str = "",
    status: bool = False,
) -> list[k8s.SchemaIssue]:
    """Every problem the API server would find creating ``obj`` under the CRD version whose
    schema ``root`` is (``customResourceStrategy.Validate`` after defaulting); empty when it
    would be accepted. ``version`` is the Kubernetes version whose ``ObjectMeta`` applies;
    ``scale_replicas`` the scale subresource's ``specReplicasPath``; ``status`` whether the
    status subresource is on (``PrepareForCreate`` then drops the object's status: only its
    shape is checked, by server-side apply's typed object)."""
    walk = _Walk()
    value = dict(obj)
    if status and "status" in value:
        status_node = root.properties.get("status")
        if status_node is not None:
            _check_shape(walk, status_node, value["status"], ("status",))
        else:
            _check_shape(walk, root, {"status": value["status"]}, ())
        del value["status"]
    value = _defaulted(root, value)
    _check(walk, root, value, ())
    if scale_replicas:
        _scale_replicas(walk, value, scale_replicas)
    # The root's metadata is ObjectMeta whatever the schema says; the schema may only restrict
    # name and generateName.
    _check_meta(
        walk,
        value.get("metadata"),
        ("metadata",),
        version,
        namespaced=namespaced,
        restrictions=root.properties.get("metadata"),
    )
    if not walk.blocking:
        for failure in _rule_failures(root, value, ()):
            if failure.unchecked:
                walk.issues.append(k8s.SchemaIssue(failure.path, failure.message, unchecked=True))
            else:
                walk.add(failure.path, failure.message)
    seen: set[tuple[Path, str]] = set()
    unique = []
    for issue in walk.issues:
        if (issue.path, issue.message) not in seen:
            seen.add((issue.path, issue.message))
            unique.append(issue)
    return unique
