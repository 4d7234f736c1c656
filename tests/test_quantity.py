"""Kubernetes quantities: exact parsing, Kubernetes' canonical form, exact sums."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubetrain.kube.quantity import (
    Quantity,
    canonical_quantity,
    display_quantity,
    format_quantity,
    parse_quantity,
    sum_quantities,
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("1.5Gi", "1536Mi", id="binary-fraction-moves-down-a-suffix"),
        pytest.param("1024Ki", "1Mi", id="binary-moves-up"),
        pytest.param("0.5Ki", "512", id="binary-below-1024-is-decimal"),
        pytest.param("1000", "1k", id="decimal-moves-up"),
        pytest.param("1024", "1024", id="decimal-stays-decimal"),
        pytest.param("0.1", "100m", id="fraction-to-milli"),
        pytest.param("2000m", "2", id="milli-to-unit"),
        pytest.param("1500m", "1500m", id="milli-stays"),
        pytest.param(".5", "500m", id="leading-dot"),
        pytest.param("1.", "1", id="trailing-dot"),
        pytest.param("1e3", "1e3", id="exponent-keeps-its-format"),
        pytest.param("1500", "1500", id="no-suffix"),
        pytest.param("2e-3", "2e-3", id="negative-exponent"),
        pytest.param("1E", "1E", id="exa-not-exponent"),
        pytest.param("0.1n", "1n", id="below-nano-rounds-up"),
        pytest.param("-1", "-1", id="negative"),
        pytest.param("0Gi", "0", id="zero"),
        pytest.param(4, "4", id="yaml-int"),
        pytest.param(0.5, "500m", id="yaml-float"),
    ],
)
def test_canonical_form_is_kubernetes(text: str | int | float, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


@pytest.mark.parametrize("text", ["", "1.5.5", "Gi", "1 Gi", "1gi", "1e1.5", "0x10", "1Ki2", True])
def test_not_a_quantity(text: object) -> None:
    with pytest.raises(ValueError, match="is not a quantity"):
        parse_quantity(text)  # type: ignore[arg-type]


def test_sum_is_exact_and_keeps_the_first_format() -> None:
    total = sum_quantities(parse_quantity(t) for t in ["1Gi", "500M"])
    assert total == Quantity(Fraction(1073741824 + 500000000), "BinarySI")
    assert format_quantity(total) == "1573741824"  # whole but not a multiple of 1024
    assert str(sum_quantities([parse_quantity("100m")] * 3)) == "300m"  # not 0.30000000000000004
    assert str(sum_quantities([parse_quantity("1M"), parse_quantity("1Mi")])) == "2048576"
    assert sum_quantities([]) is None


formats = st.sampled_from(["DecimalSI", "BinarySI", "DecimalExponent"])
# Within kubetrain's bound on quantities, 2^63-1 (docs/limits.md).
values = st.fractions(min_value=-(9 * 10**18), max_value=9 * 10**18, max_denominator=10**12)
nano_values = st.integers(min_value=-(9 * 10**27), max_value=9 * 10**27).map(
    lambda n: Fraction(n, 10**9)
)


@given(
    value=st.integers(min_value=2**63, max_value=10**4000)
    | st.integers(min_value=-(10**4000), max_value=-(2**63)),
    fmt=formats,
)
def test_a_quantity_past_the_bound_is_refused_in_every_format(value: int, fmt: str) -> None:
    """Past 2^63-1 in magnitude, a quantity is refused however it is written (exact text,
    exponent form, a binary suffix), with a message that quotes no long number."""
    digits = str(abs(value))
    rounded_up = int(digits[:4]) + 1  # an exponent form no smaller than the value
    sign = "-" if value < 0 else ""
    texts = [str(value), f"{sign}{rounded_up // 1000}.{rounded_up % 1000:03d}e{len(digits) - 1}"]
    if fmt == "BinarySI":
        texts.append(f"{max(abs(value) // 2**60, 8)}Ei")
    for text in texts:
        with pytest.raises(ValueError, match="out of range") as caught:
            parse_quantity(text)
        assert len(str(caught.value)) < 300


@given(value=nano_values, fmt=formats)
def test_round_trip_is_exact_for_nano_multiples(value: Fraction, fmt: str) -> None:
    q = Quantity(value, fmt)  # type: ignore[arg-type]
    assert parse_quantity(format_quantity(q)).value == value


@given(value=values, fmt=formats)
def test_canonical_text_is_stable(value: Fraction, fmt: str) -> None:
    text = format_quantity(Quantity(value, fmt))  # type: ignore[arg-type]
    back = parse_quantity(text).value
    assert value <= back < value + Fraction(1, 10**9)  # rounded up to the next nano-unit
    once = canonical_quantity(text)
    assert parse_quantity(once).value == back and canonical_quantity(once) == once
    if fmt != "BinarySI" or text[-1] == "i":
        assert once == text  # a fixed point, but for the case below


def test_a_bare_binary_integer_reads_back_as_decimal() -> None:
    """As in Kubernetes: a BinarySI value that is no multiple of 1024 is written without a
    suffix, and that text is DecimalSI when read back."""
    text = format_quantity(Quantity(Fraction(1_000_000), "BinarySI"))
    assert text == "1000000"
    assert canonical_quantity(text) == "1M"


@given(a=nano_values, b=nano_values, fmt=formats)
def test_sum_is_commutative_in_value(a: Fraction, b: Fraction, fmt: str) -> None:
    qa, qb = Quantity(a, fmt), Quantity(b, "DecimalSI")  # type: ignore[arg-type]
    assert (qa + qb).value == (qb + qa).value == a + b
    assert (qa + qb).format == fmt


@pytest.mark.parametrize(
    ("name", "text", "shown"),
    [
        ("cpu", "4000", "4000"),  # canonical: 4k, which reads like a size
        ("cpu", "0.5", "500m"),
        ("cpu", "2500m", "2.5"),
        ("cpu", "16", "16"),
        ("memory", "64Gi", "64Gi"),
        ("memory", "1.5Gi", "1536Mi"),
        ("memory", "100M", "100M"),
        ("ephemeral-storage", "2048Mi", "2Gi"),
        ("nvidia.com/gpu", "8", "8"),
    ],
)
def test_quantities_as_people_write_them(name: str, text: str, shown: str) -> None:
    assert display_quantity(name, parse_quantity(text)) == shown
