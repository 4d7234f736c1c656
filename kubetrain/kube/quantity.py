"""Kubernetes resource quantities (``500m``, ``1.5Gi``, ``2e3``), exact.

A :class:`Quantity` holds its value as a :class:`~fractions.Fraction`, so sums are exact, and
remembers the format it was written in, as Kubernetes does: ``DecimalSI`` (``m``, ``k``, ``M``...),
``BinarySI`` (``Ki``, ``Mi``...) or ``DecimalExponent`` (``e3``). A sum keeps the format of its
first term, like ``resource.Quantity.Add``.

:func:`format_quantity` writes the canonical form Kubernetes itself would write (what
``kubectl get -o yaml`` shows after a round trip): the largest suffix that keeps an integer
mantissa, binary only for whole values of at least 1024, otherwise decimal. Like Kubernetes,
values finer than one nano-unit are rounded up to the next nano-unit.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

from .limits import MAX_QUANTITY

__all__ = [
    "QUANTITY_PATTERN",
    "Quantity",
    "QuantityFormat",
    "canonical_quantity",
    "cpu_cores_ceil",
    "display_quantity",
    "format_quantity",
    "parse_quantity",
    "sum_quantities",
]

QuantityFormat = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

_NUMBER = r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
_SUFFIX = r"([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
_SHAPE = re.compile(_NUMBER + _SUFFIX)
#: The pattern of a quantity string, as in Kubernetes' OpenAPI schemas (integer exponents only).
QUANTITY_PATTERN = f"^{_NUMBER}{_SUFFIX}$"
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
_NANO = 10**9


@dataclass(frozen=True)
class Quantity:
    """An exact quantity and the format it is written in."""

    value: Fraction
    format: QuantityFormat = "DecimalSI"

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __str__(self) -> str:
        return format_quantity(self)


def parse_quantity(text: str | int | float) -> Quantity:
    """``"1.5Gi"`` -> ``Quantity(Fraction(1610612736), "BinarySI")``.

    Integers (``cpu: 4`` in YAML) are DecimalSI. Raises ``ValueError`` quoting the value.
    """
    if type(text) in (str, int):
        return _parse_cached(text)
    return _parse(text)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str | int) -> Quantity:
    # The same few quantities repeat across thousands of containers; a Quantity is immutable.
    return _parse(text)


def _parse(text: str | int | float) -> Quantity:
    quantity = _parse_unbounded(text)
    if abs(quantity.value) > MAX_QUANTITY:
        raise ValueError(
            f"{_quoted(text)} is out of range: kubetrain reads quantities of at most 2^63-1 "
            "(about 9.2E, or 8Ei), as Kubernetes counts them in 64 bits (docs/limits.md)"
        )
    return quantity


def _quoted(text: object) -> str:
    """``text`` quoted for a message, cut to 40 characters (a quantity may be a long number)."""
    shown = repr(text) if not isinstance(text, int) or abs(text) < 10**40 else "a number"
    return shown if len(shown) <= 40 else shown[:36] + "...'"


def _parse_unbounded(text: str | int | float) -> Quantity:
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a quantity")
    if isinstance(text, int):
        return Quantity(Fraction(text))
    if isinstance(text, float):
        if not math.isfinite(text):
            raise ValueError(f"{text!r} is not a quantity")
        return Quantity(Fraction(Decimal(repr(text))))
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a quantity")
    m = _SHAPE.fullmatch(text)
    if m is None:
        raise ValueError(
            f"{_quoted(text)} is not a quantity (e.g. 500m, 2, 1.5Gi, 100M, 1e3; "
            "suffixes n u m k M G T P E, Ki Mi Gi Ti Pi Ei)"
        )
    try:
        number = Fraction(Decimal(m[1]))
    except InvalidOperation:  # pragma: no cover - the pattern only lets numbers through
        raise ValueError(f"{text!r} is not a quantity") from None
    suffix = m[2] or ""
    if suffix in _BINARY:
        return Quantity(number * 1024 ** _BINARY[suffix], "BinarySI")
    if suffix in _DECIMAL:
        return Quantity(number * Fraction(10) ** _DECIMAL[suffix], "DecimalSI")
    exponent = int(suffix[1:])
    if abs(exponent) > 10_000:
        raise ValueError(f"{_quoted(text)}: exponent out of range")
    return Quantity(number * Fraction(10) ** exponent, "DecimalExponent")


def _nano_units(value: Fraction) -> int:
    """``value`` in nano-units, rounded up (towards +infinity) as Kubernetes rounds."""
    return math.ceil(value * _NANO)


def format_quantity(q: Quantity) -> str:
    """The canonical text of ``q`` (see the module docstring)."""
    nanos = _nano_units(q.value)
    if nanos == 0:
        return "0"
    fmt = q.format
    if fmt == "BinarySI":
        if nanos % _NANO or abs(nanos) < 1024 * _NANO:
            fmt = "DecimalSI"  # Kubernetes shows fractions and small values in decimal
        else:
            whole, power = nanos // _NANO, 0
            while whole % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
                whole //= 1024
                power += 1
            return f"{whole}{_BINARY_SUFFIX[power]}"
    mantissa, exponent = nanos, -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def canonical_quantity(text: str | int | float) -> str:
    """``text`` in canonical form (``"1.5Gi"`` -> ``"1536Mi"``, ``"1000"`` -> ``"1k"``)."""
    return format_quantity(parse_quantity(text))


def sum_quantities(values: Iterable[Quantity]) -> Quantity | None:
    """The exact sum, in the format of the first term; ``None`` for no terms."""
    total: Quantity | None = None
    for value in values:
        total = value if total is None else total + value
    return total


def cpu_cores_ceil(value: object) -> int | None:
    """CPU cores rounded up to a whole number, as the API's ``Quantity.Value()`` rounds
    (``200m`` -> 1, ``1500m`` -> 2); ``None`` when ``value`` is not a quantity."""
    try:
        return math.ceil(parse_quantity(value).value)  # type: ignore[arg-type]
    except ValueError:
        return None


def display_quantity(name: str, q: Quantity) -> str:
    """``q`` of resource ``name`` as people write it, for reports (``kubetrain plan``): CPU in
    cores (``4000``, ``2.5``) or millicores below one core (``500m``); memory and storage in
    the largest binary unit that divides them (``64Gi``); counts (GPUs) as whole numbers. The
    canonical form (:func:`format_quantity`) says ``4k`` cores, which reads like a memory
    size."""
    value = q.value
    if name == "cpu" or name.endswith("/cpu"):
        if value < 1 and value * 1000 == int(value * 1000):
            return f"{int(value * 1000)}m"
        if value == int(value):
            return str(int(value))
        return f"{float(value):g}"
    if name in ("memory", "ephemeral-storage", "storage") or name.startswith("hugepages-"):
        if value == int(value) and value >= 1024:
            whole, power = int(value), 0
            while whole % 1024 == 0 and power < len(_BINARY_SUFFIX) - 1:
                whole //= 1024
                power += 1
            if power:
                return f"{whole}{_BINARY_SUFFIX[power]}"
        return format_quantity(q)
    if value == int(value):
        return str(int(value))
    return format_quantity(q)
