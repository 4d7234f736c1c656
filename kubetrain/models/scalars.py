"""Plain YAML scalars read as ``kubectl`` reads them.

kubectl turns a manifest into JSON with ``sigs.k8s.io/yaml``, whose decoder is go-yaml v2
(v2.4.0, forked as ``sigs.k8s.io/yaml/goyaml.v2``). What an unquoted scalar becomes is decided
there by ``resolve()`` in ``resolve.go``, which :func:`resolve_plain` mirrors step by step. It is
YAML 1.1 in spirit, but not PyYAML's YAML 1.1, and the differences decide whether an object is
valid:

=================  =====================  ==========================
text               go-yaml v2 (kubectl)   PyYAML
=================  =====================  ==========================
``y``, ``N``       boolean                string
``1:20``           string                 60-base integer (80)
``=``              string                 a ``!!value`` (an error)
``0o17``, ``0X1F``   integer                string
``1e3``, ``-.5``     float                  string
``08``, ``0_8``      float (8.0)            string
``1e999``          string (out of range)  float infinity
=================  =====================  ==========================

Quoted scalars are always strings, in both. Pulumi reads stack files with go-yaml v2 as well
(``sdk/go/common/encoding``), so a stack file means the same to ``pulumi up`` as to render.
``tests/oracles/goyaml-v2/scalars.jsonl`` holds what go-yaml v2.4.0 itself made of over 1,200
scalars (long ones too), and the suite holds this module to it.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final

__all__ = ["BOOL", "FLOAT", "INT", "MERGE", "NULL", "STR", "plain_value", "resolve_plain"]

STR: Final = "tag:yaml.org,2002:str"
INT: Final = "tag:yaml.org,2002:int"
FLOAT: Final = "tag:yaml.org,2002:float"
BOOL: Final = "tag:yaml.org,2002:bool"
NULL: Final = "tag:yaml.org,2002:null"
MERGE: Final = "tag:yaml.org,2002:merge"

# resolve.go's resolveMap: whole words, compared as written (case variants listed one by one).
_WORDS: Final[dict[str, tuple[str, Any]]] = {
    **{w: (BOOL, True) for w in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE")},
    **{w: (BOOL, True) for w in ("on", "On", "ON")},
    **{w: (BOOL, False) for w in ("n", "N", "no", "No", "NO", "false", "False", "FALSE")},
    **{w: (BOOL, False) for w in ("off", "Off", "OFF")},
    **{w: (NULL, None) for w in ("", "~", "null", "Null", "NULL")},
    **{w: (FLOAT, math.nan) for w in (".nan", ".NaN", ".NAN")},
    **{w: (FLOAT, math.inf) for w in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{w: (FLOAT, -math.inf) for w in ("-.inf", "-.Inf", "-.INF")},
}
# resolve.go's resolveTable: the first character's hint ("" is the empty scalar's).
_HINTS: Final = {
    **dict.fromkeys("+-", "S"),
    **dict.fromkeys("0123456789", "D"),
    **dict.fromkeys("yYnNtTfFoO~", "M"),
    ".": ".",
    "": "N",
}
# strconv.ParseInt(s, 0, 64)'s syntax (Go integer literals, underscores already removed).
_GO_INT: Final = re.compile(
    r"([-+]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|(0[0-7]*)|([1-9][0-9]*))"
)
# resolve.go's yamlStyleFloat, which the text must match before strconv.ParseFloat is tried.
_YAML_STYLE_FLOAT: Final = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
# strconv.ParseFloat of a text starting with ".": digits, an exponent, and "_" only between two
# digits (strconv's underscoreOK).
_DOT_FLOAT: Final = re.compile(r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?")
_BINARY: Final = re.compile(r"[-+]?[01]+")
_UINT64_MAX: Final = 2**64 - 1
_INT64: Final = range(-(2**63), 2**63)


def _go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``, else ``strconv.ParseUint(text, 0, 64)``: the value, or
    ``None`` for a syntax or range error."""
    m = _GO_INT.fullmatch(text)
    if m is None:
        return None
    sign, hexa, octal, binary, zero_octal, decimal = m.groups()
    digits = hexa or octal or binary or zero_octal or decimal
    if len(digits.lstrip("0")) > 64:  # past 64 bits in any base (and past int()'s digit limit)
        return None
    if hexa is not None:
        value = int(hexa, 16)
    elif octal is not None:
        value = int(octal, 8)
    elif binary is not None:
        value = int(binary, 2)
    elif zero_octal is not None:
        value = int(zero_octal, 8)
    else:
        value = int(decimal)
    if sign == "-":
        value = -value
    if value in _INT64:
        return value
    if sign == "" and value <= _UINT64_MAX:  # ParseUint takes no sign
        return value
    return None


def _go_float(text: str) -> float | None:
    """``strconv.ParseFloat(text, 64)`` of a text of the shapes resolve() tries it on: the value,
    or ``None`` when out of range (Go then reports ErrRange and go-yaml keeps the string)."""
    value = float(text.replace("_", ""))
    return None if math.isinf(value) else value


def plain_value(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v2 gives the plain (unquoted) scalar ``text``: its
    ``resolve("", text)`` in resolve.go, step by step. Timestamps stay strings, as go-yaml v2
    leaves them when decoding into an untyped value (kubectl's case)."""
    hint = _HINTS.get(text[:1])
    if hint is None:
        return STR, text
    word = _WORDS.get(text)
    if word is not None:
        return word
    if hint == ".":
        if _DOT_FLOAT.fullmatch(text) is not None and (f := _go_float(text)) is not None:
            return FLOAT, f
    elif hint in "DS":
        plain = text.replace("_", "")
        if (i := _go_int(plain)) is not None:
            return INT, i
        if _YAML_STYLE_FLOAT.fullmatch(plain) is not None and (f := _go_float(plain)) is not None:
            return FLOAT, f
        # Base 2 with the prefix stripped, where strconv takes a sign again ("0b-1" is -1).
        if plain.startswith("0b") and _BINARY.fullmatch(plain[2:]) is not None:
            value = int(plain[2:], 2) if len(plain) < 100 else _UINT64_MAX + 1
            if value in _INT64 or (plain[2] in "01" and value <= _UINT64_MAX):  # ParseUint
                return INT, value
        elif plain.startswith("-0b") and _BINARY.fullmatch("-" + plain[3:]) is not None:
            value = int("-" + plain[3:], 2) if len(plain) < 100 else -_UINT64_MAX
            if value in _INT64:
                return INT, value
    return STR, text


def resolve_plain(text: str) -> str:
    """The tag of the plain scalar ``text`` (see :func:`plain_value`); a ``<<`` key is YAML's
    merge, which go-yaml recognises by its text."""
    if text == "<<":
        return MERGE
    return plain_value(text)[0]
