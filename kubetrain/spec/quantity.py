"""Kubernetes resource quantities (``500m``, ``1Gi``, ``2``, ``1e3``) as exact decimals.

The Kubernetes JSON schema only says "string or number", so a quantity such as ``"lots"`` passes
it; kubetrain parses quantities where it computes with them (a trainer's CPU count) and reports the
ones that are not quantities at all.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

__all__ = ["QUANTITY_PATTERN", "cpu_cores_ceil", "parse_quantity", "quantity_problem"]

#: A quantity as the API server accepts it: a signed decimal number and an optional binary-SI,
#: decimal-SI or exponent suffix. Also used as the ``pattern`` of quantities in generated CRDs
#: (RE2 and ECMAScript compatible).
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY = re.compile(QUANTITY_PATTERN)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def parse_quantity(value: object) -> Decimal | None:
    """The exact value of a quantity (``"500m"`` -> ``0.5``), or ``None`` if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None
    if not isinstance(value, str) or not _QUANTITY.fullmatch(value):
        return None
    number = re.match(r"^[+-]?(\d+(\.\d*)?|\.\d+)", value)
    assert number is not None  # the full pattern matched
    suffix = value[number.end() :]
    try:
        base = Decimal(number[0])
        if suffix in _BINARY:
            return base * (Decimal(1024) ** _BINARY[suffix])
        if suffix in _DECIMAL:
            return base.scaleb(_DECIMAL[suffix])
        return base.scaleb(int(Decimal(suffix[1:])))
    except (InvalidOperation, ValueError, OverflowError):
        return None


def quantity_problem(value: object) -> str | None:
    """A message quoting ``value`` if it is not a Kubernetes quantity."""
    if parse_quantity(value) is None:
        return f"{value!r} is not a Kubernetes quantity (e.g. 500m, 2, 1.5, 1Gi)"
    return None


def cpu_cores_ceil(value: object) -> int | None:
    """CPU cores rounded up to a whole number, as the API's ``Quantity.Value()`` rounds
    (``200m`` -> 1, ``1500m`` -> 2); ``None`` when ``value`` is not a quantity."""
    parsed = parse_quantity(value)
    if parsed is None:
        return None
    return math.ceil(parsed)
