"""The numeric keywords of a CRD schema as the API server decodes them.

kube-apiserver decodes a CRD into the typed ``JSONSchemaProps`` of
``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1`` (``types_jsonschema.go``):
``maxLength``, ``minLength``, ``maxItems``, ``minItems``, ``maxProperties`` and ``minProperties``
are ``*int64``; ``maximum``, ``minimum`` and ``multipleOf`` are ``*float64``. The decoder is
``sigs.k8s.io/json`` (``k8s.io/apimachinery/pkg/runtime/serializer/json`` ``Serializer.unmarshal``;
the schemas under ``items`` and ``additionalProperties`` through their own ``UnmarshalJSON`` in
``marshal.go``, which calls ``k8s.io/apimachinery/pkg/util/json.Unmarshal``, the same decoder).
Its ``decodeState.literalStore`` puts a JSON number into an int64 with
``strconv.ParseInt(text, 10, 64)`` and into a float64 with ``strconv.ParseFloat(text, 64)``: an
int64 field takes only a number written as a decimal integer within int64 (``5.0`` and ``1e2``
are refused), a float64 field any number within float64 range (``1e400`` is refused); a string,
a boolean, an array or an object is refused by both, and ``null`` leaves the field unset. Any
refusal and the whole CRD "cannot be handled as a CustomResourceDefinition".

What reaches the server is not the file but what kubectl makes of it: the YAML (or JSON) read
into untyped values, numbers becoming an int64 when they parse as one and a float64 otherwise
(``k8s.io/apimachinery/pkg/util/json`` ``convertNumber``), re-encoded by ``encoding/json``, which
writes a float64 between 1e-6 and 1e21 without an exponent and a whole one without a fraction.
So ``minLength: 5.0`` and ``minLength: 1e2`` arrive as ``5`` and ``100`` and are taken, while
``1e20`` arrives as ``100000000000000000000`` and is refused (and a whole float past 2^53 arrives
as its shortest digits, ``36028797018963970`` for 2^55); an integer beyond int64 (go-yaml's
uint64, or a JSON file's) travels as a float64: refused by an int64 field, taken by a float64 one
unless it overflows it. kubetrain reads numbers where go-yaml does
(:mod:`kubetrain.models.scalars`), so :func:`int64_keyword` and :func:`float64_keyword` give the
value the server ends up with, from the value kubetrain read. Checked against kube-apiserver
v1.36.2, through kubectl and with raw JSON bodies.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

__all__ = [
    "FLOAT64_KEYWORDS",
    "INT64_KEYWORDS",
    "Undecodable",
    "float64_keyword",
    "int64_keyword",
    "keyword_problems",
    "sent_as_int64",
]

#: The ``*int64`` fields of ``JSONSchemaProps``.
INT64_KEYWORDS = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
)
#: The ``*float64`` fields of ``JSONSchemaProps``.
FLOAT64_KEYWORDS = ("maximum", "minimum", "multipleOf")

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
#: Integers longer than this are shown by their length (and past Python's digit limit for str).
_SHOWN_BITS = 1000


class Undecodable(ValueError):
    """A keyword value the API server cannot decode into its field; ``what`` is how
    ``encoding/json``'s ``UnmarshalTypeError`` names the JSON value (``number 5.5``, ``string``)."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def int64_keyword(value: Any) -> int | None:
    """The int64 the API server decodes the keyword ``value`` into (``None``: ``null``, unset).

    Raises :class:`Undecodable` for what ``literalStore`` refuses: anything not a number, and a
    number kubectl does not send as a decimal integer within int64."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Undecodable(_json_kind(value))
    if isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            return value
        # convertNumber: past int64 it is a float64 (an error past float64), written back as
        # the float's digits, which ParseInt refuses.
        number = _float_or_none(value)
        if number is None:
            raise Undecodable(f"number {_shown(value)}")
        value = number
    whole = sent_as_int64(value)
    if whole is None:
        raise Undecodable(f"number {go_json_number(value)}")
    return whole


def sent_as_int64(value: float) -> int | None:
    """The int64 a float64 becomes on its way through kubectl, or ``None`` when it stays a
    float: ``encoding/json`` writes its shortest digits (:func:`go_json_number`), which
    ``convertNumber`` and ``ParseInt`` read as an int64 when they are an integer within int64.
    Past 2^53 the digits are not the float's value: 2^55 (36028797018963968) is written
    ``36028797018963970``, and -2^63 is written ``-9223372036854776000``, beyond int64."""
    if not math.isfinite(value) or not value.is_integer() or abs(value) >= 1e21:
        return None  # a fraction, or an exponent ("1e+21")
    whole = int(go_json_number(value))
    return whole if _INT64_MIN <= whole <= _INT64_MAX else None


def float64_keyword(value: Any) -> float | None:
    """The float64 the API server decodes the keyword ``value`` into (``None``: ``null``,
    unset). Raises :class:`Undecodable` for anything not a number, and for a number beyond
    float64 (``strconv.ParseFloat``'s range error; an infinity or NaN JSON cannot carry)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Undecodable(_json_kind(value))
    number = _float_or_none(value) if isinstance(value, int) else value
    if number is None or not math.isfinite(number):
        raise Undecodable(f"number {_shown(value)}")
    return number


def _float_or_none(value: int) -> float | None:
    """``strconv.ParseFloat`` of an integer's digits: the nearest float64, ``None`` past the
    largest (Python rounds an int to float as Go does, to nearest even, and overflows alike)."""
    try:
        return float(value)
    except OverflowError:
        return None


def _json_kind(value: Any) -> str:
    """How ``UnmarshalTypeError`` names a JSON value that is not a number."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def go_json_number(value: float) -> str:
    """A float64 as ``encoding/json`` writes it (``floatEncoder``): the shortest digits, in
    ``'f'`` form unless below 1e-6 or from 1e21 on, where it is ``'e'`` form with a one-digit
    negative exponent kept short (``1e-7``, ``1e+21``)."""
    if not math.isfinite(value):
        return "+Inf" if value > 0 else ("-Inf" if value < 0 else "NaN")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if 1e-6 <= abs(value) < 1e21:
        text = format(Decimal(repr(value)), "f")
        return text.removesuffix(".0") if text.endswith(".0") else text
    mantissa, _, exponent = repr(value).partition("e")
    sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
    return f"{mantissa}e{sign}{digits.zfill(2) if sign == '+' else digits}"


def _shown(value: Any) -> str:
    """A keyword value in a message: JSON, a long integer by its length."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > _SHOWN_BITS:
            return "an integer of more than 300 digits"
        text = str(value)
        return text if len(text) <= 40 else f"{text[:12]}...({len(text.lstrip('-'))} digits)"
    if isinstance(value, float):
        return go_json_number(value)
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = _json_kind(value)
    return text if len(text) <= 40 else text[:37] + "..."


#: Each kind of numeric keyword, the decoding of its JSONSchemaProps field, and its Go type.
_DECODERS: tuple[tuple[tuple[str, ...], Callable[[Any], Any], str], ...] = (
    (INT64_KEYWORDS, int64_keyword, "int64"),
    (FLOAT64_KEYWORDS, float64_keyword, "float64"),
)


def keyword_problems(schema: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path below ``schema``, message) of every numeric keyword in ``schema`` and the schemas
    below it that the API server cannot decode into its ``JSONSchemaProps`` field."""
    for path, node in _nodes(schema, ()):
        for keys, decode, go_type in _DECODERS:
            for key in keys:
                if key in node:
                    try:
                        decode(node[key])
                    except Undecodable as exc:
                        yield (*path, key), _message(node[key], key, go_type, exc.what)


def _message(value: Any, key: str, go_type: str, what: str) -> str:
    if go_type == "int64":
        need = "an integer within int64" if what.startswith("number") else "an integer"
    else:
        need = "a number within float64 range" if what.startswith("number") else "a number"
    message = (
        f"Invalid value: {_shown(value)}: must be {need}, as the API server decodes {key} "
        f"(json: cannot unmarshal {what} into Go struct field JSONSchemaProps.{key} of type "
        f"{go_type})"
    )
    if isinstance(value, str) and _YAML_NUMBER.fullmatch(value):
        message += "; unquoted, a number beyond float64 range is a string to kubectl's YAML reader"
    return message


_YAML_NUMBER = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_OR_BOOL = ("additionalProperties", "additionalItems", "not")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def _nodes(
    node: Mapping[str, Any], path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    """Every schema node at and below ``node`` (a ``JSONSchemaProps`` the decoder reads), with
    its path."""
    yield path, node
    for key in _SCHEMA_MAPS:
        children = node.get(key)
        if isinstance(children, Mapping):
            for name, child in children.items():
                if isinstance(child, Mapping):
                    yield from _nodes(child, (*path, key, name))
    for key in _SCHEMA_OR_BOOL:
        child = node.get(key)
        if isinstance(child, Mapping):
            yield from _nodes(child, (*path, key))
    items = node.get("items")
    if isinstance(items, Mapping):
        yield from _nodes(items, (*path, "items"))
    elif isinstance(items, list):
        for i, child in enumerate(items):
            if isinstance(child, Mapping):
                yield from _nodes(child, (*path, "items", i))
    for key in _SCHEMA_LISTS:
        children = node.get(key)
        if isinstance(children, list):
            for i, child in enumerate(children):
                if isinstance(child, Mapping):
                    yield from _nodes(child, (*path, key, i))
