"""The numeric keywords of a CRD schema (``minLength``... ``multipleOf``) as kube-apiserver
decodes and enforces them: the int64 fields refuse what ``strconv.ParseInt`` cannot read of
what kubectl sends, the float64 fields what ``strconv.ParseFloat`` cannot; a bound an integer
node cannot hold refuses every value. The tables are what kube-apiserver v1.36.2 answered
(``kubectl create --dry-run=server`` of each CRD, then of objects under the CRDs it took)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.kube.apiextensions import compile_schema, validate_crd, validate_custom_resource
from kubetrain.kube.apiextensions.decoding import FLOAT64_KEYWORDS, INT64_KEYWORDS, go_json_number
from kubetrain.models.scalars import plain_value

X = ("spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties", "x")
TYPE_OF = {
    "minLength": "string",
    "maxLength": "string",
    "minItems": "array",
    "maxItems": "array",
    "minProperties": "object",
    "maxProperties": "object",
    "minimum": "number",
    "maximum": "number",
    "multipleOf": "number",
}
ATTR = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_items",
    "maxItems": "max_items",
    "minProperties": "min_properties",
    "maxProperties": "max_properties",
    "minimum": "minimum",
    "maximum": "maximum",
    "multipleOf": "multiple_of",
}
REFUSED = object()


def schema(x: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"x": x}}},
    }


def crd(x: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema(x)},
                }
            ],
        },
    }


def node_with(key: str, value: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"type": TYPE_OF[key], key: value}
    if node["type"] == "array":
        node["items"] = {"type": "string"}
    return node


def yaml_value(text: str) -> Any:
    """What kubetrain (and kubectl's go-yaml) reads of a plain or double-quoted scalar."""
    return text[1:-1] if text.startswith('"') else plain_value(text)[1]


BIG = "1" + "0" * 400
# YAML text -> what the API server stored in the int64 field (REFUSED: the CRD was refused).
INT64_ANSWERS = {
    "5": 5,
    "5.0": 5,
    "5.5": REFUSED,
    '"5"': REFUSED,
    "1e2": 100,
    "1.5e1": 15,
    "1e20": REFUSED,
    "1e21": REFUSED,
    "1" + "0" * 30: REFUSED,
    "18446744073709551616": REFUSED,
    "9223372036854775807": 9223372036854775807,
    "9223372036854775808": REFUSED,
    "18446744073709551615": REFUSED,
    "-9223372036854775808": -9223372036854775808,
    "9.223372036854775807e18": REFUSED,
    "-1": -1,
    "1e308": REFUSED,
    "0.5": REFUSED,
    "true": REFUSED,
    "null": None,
    BIG: REFUSED,
    "1e400": REFUSED,
    "-0.0": 0,
    # kubectl sends a float's shortest digits: 2^55 arrives as 36028797018963970, -2^63 as
    # -9223372036854776000 (beyond int64), and so does -9223372036854775809 (a float to go-yaml).
    "36028797018963968.0": 36028797018963970,
    "3.6028797018963968e16": 36028797018963970,
    "-9.223372036854775808e18": REFUSED,
    "-9223372036854775809": REFUSED,
    "9.223372036854775e18": 9223372036854775000,
}
# The same texts for the float64 fields.
FLOAT64_ANSWERS = {
    "5": 5.0,
    "5.0": 5.0,
    "5.5": 5.5,
    '"5"': REFUSED,
    "1e2": 100.0,
    "1.5e1": 15.0,
    "1e20": 1e20,
    "1e21": 1e21,
    "1" + "0" * 30: 1e30,
    "18446744073709551616": 1.8446744073709552e19,
    "9223372036854775807": 9.223372036854776e18,
    "9223372036854775808": 9.223372036854776e18,
    "18446744073709551615": 1.8446744073709552e19,
    "-9223372036854775808": -9.223372036854776e18,
    "9.223372036854775807e18": 9.223372036854776e18,
    "-1": -1.0,
    "1e308": 1e308,
    "0.5": 0.5,
    "true": REFUSED,
    "null": None,
    BIG: REFUSED,  # go-yaml keeps a number beyond float64 as a string
    "1e400": REFUSED,
    "-0.0": 0.0,
    "36028797018963968.0": 3.602879701896397e16,
    "3.6028797018963968e16": 3.602879701896397e16,
    "-9.223372036854775808e18": -9.223372036854776e18,
    "-9223372036854775809": -9.223372036854776e18,
    "9.223372036854775e18": 9.223372036854775e18,
}
CASES = [
    pytest.param(key, text, answer, id=f"{key}={text[:24]}")
    for keys, answers in ((INT64_KEYWORDS, INT64_ANSWERS), (FLOAT64_KEYWORDS, FLOAT64_ANSWERS))
    for key in keys
    for text, answer in answers.items()
]


@pytest.mark.parametrize(("key", "text", "answer"), CASES)
def test_keyword_decoding_matches_the_api_server(key: str, text: str, answer: Any) -> None:
    value = yaml_value(text)
    issues = validate_crd(crd(node_with(key, value)))
    if answer is REFUSED:
        assert [i.path for i in issues] == [(*X, key)], issues
        assert "as the API server decodes " + key in issues[0].message
        return
    assert issues == []
    decoded = getattr(
        compile_schema(schema(node_with(key, value))).properties["spec"].properties["x"], ATTR[key]
    )
    assert decoded == answer
    assert type(decoded) is type(answer)


def test_refusals_name_the_value_and_the_go_type() -> None:
    def message(key: str, value: Any) -> str:
        (issue,) = validate_crd(crd(node_with(key, value)))
        return issue.message

    assert message("minLength", 5.5) == (
        "Invalid value: 5.5: must be an integer within int64, as the API server decodes "
        "minLength (json: cannot unmarshal number 5.5 into Go struct field "
        "JSONSchemaProps.minLength of type int64)"
    )
    assert "Invalid value: 100000000000000000000: " in message("minItems", 1e20)
    assert "cannot unmarshal number 1e+308 into" in message("maxLength", 1e308)
    assert 'Invalid value: "5": must be an integer, as' in message("minLength", "5")
    assert "cannot unmarshal bool into" in message("maxProperties", True)
    assert "cannot unmarshal array into" in message("minItems", [1])
    big = message("minimum", yaml_value(BIG))
    assert "must be a number, as the API server decodes minimum" in big
    assert "a number beyond float64 range is a string to kubectl's YAML reader" in big
    assert "an integer of more than 300 digits" in message("minimum", 10**4000)
    assert "of type float64" in message("multipleOf", 10**400)


def test_a_nested_keyword_is_refused_at_its_path() -> None:
    x = {
        "type": "object",
        "properties": {
            "list": {"type": "array", "items": {"type": "string", "maxLength": 2.5}},
            "map": {"type": "object", "additionalProperties": {"type": "integer", "minimum": "0"}},
            "any": {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer", "minimum": "1"}, {"type": "string"}],
            },
        },
    }
    paths = sorted(".".join(map(str, i.path[len(X) :])) for i in validate_crd(crd(x)))
    assert paths == [
        "properties.any.anyOf.0.minimum",
        "properties.list.items.maxLength",
        "properties.map.additionalProperties.minimum",
    ]


# What objects under CRDs the server took answered (kubectl create --dry-run=server).
ENFORCED = [
    (
        {"type": "string", "minLength": 5.0},
        "abc",
        ['spec.x: Invalid value: "abc": should be at least 5 chars long'],
    ),
    ({"type": "string", "minLength": 5.0}, "abcde", []),
    (
        {"type": "array", "minItems": 3.0, "items": {"type": "string"}},
        ["a"],
        ["spec.x: Invalid value: 1: should have at least 3 items"],
    ),
    (
        {"type": "object", "maxProperties": 0.0, "additionalProperties": {"type": "integer"}},
        {"a": 1},
        ["spec.x: Too many: 1: must have at most 0 items"],
    ),
    (
        {"type": "integer", "minimum": 0.5},
        3,
        [
            'spec.x: Invalid value: "": Minimum boundary value must be of type integer (default format) in spec.x'
        ],
    ),
    (
        {"type": "integer", "minimum": 0.5},
        0,
        [
            'spec.x: Invalid value: "": Minimum boundary value must be of type integer (default format) in spec.x',
            "spec.x: Invalid value: 0: should be greater than or equal to 0.5",
        ],
    ),
    (
        {"type": "integer", "maximum": 1e20},
        3,
        [
            'spec.x: Invalid value: "": Maximum boundary value must be of type integer (default format) in spec.x'
        ],
    ),
    (
        {"type": "integer", "multipleOf": 0.5},
        3,
        [
            'spec.x: Invalid value: "": MultipleOf value must be of type integer (default format) in spec.x'
        ],
    ),
    (
        {"type": "integer", "format": "int32", "minimum": 2147483648},
        3,
        [
            'spec.x: Invalid value: "": Minimum boundary value must be of type integer with format int32 in spec.x',
            "spec.x: Invalid value: 3: should be greater than or equal to 2.147483648e+09",
        ],
    ),
    (
        {"type": "number", "minimum": 1000000},
        3.5,
        ["spec.x: Invalid value: 3.5: should be greater than or equal to 1e+06"],
    ),
    (
        {"type": "number", "minimum": 1000000},
        3,
        ["spec.x: Invalid value: 3: should be greater than or equal to 1000000"],
    ),
    (
        {"type": "number", "multipleOf": 1000000},
        3.5,
        ["spec.x: Invalid value: 3.5: should be a multiple of 1e+06"],
    ),
    (
        {"type": "number", "multipleOf": 1000000},
        3,
        ["spec.x: Invalid value: 3: should be a multiple of 1000000"],
    ),
    (
        {"type": "integer", "minimum": 1e6},
        3,
        ["spec.x: Invalid value: 3: should be greater than or equal to 1000000"],
    ),
    (
        {"type": "number", "format": "float", "minimum": 1e39},
        3.5,
        [
            'spec.x: Invalid value: "": Minimum boundary value must be of type number with format float in spec.x',
            "spec.x: Invalid value: 3.5: should be greater than or equal to 1e+39",
        ],
    ),
    (
        {"type": "integer", "minimum": 9223372036854775807},
        3,
        [
            'spec.x: Invalid value: "": Minimum boundary value must be of type integer (default format) in spec.x',
            "spec.x: Invalid value: 3: should be greater than or equal to 9.223372036854776e+18",
        ],
    ),
    (
        {"type": "number", "maximum": 1e21},
        1e22,
        ["spec.x: Invalid value: 1e+22: should be less than or equal to 1e+21"],
    ),
    (
        {"type": "integer", "multipleOf": 1e20},
        3,
        [
            'spec.x: Invalid value: "": MultipleOf value must be of type integer (default format) in spec.x',
            "spec.x: Invalid value: 3: should be a multiple of 1e+20",
        ],
    ),
]


def widget(x: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"x": x},
    }


def findings(x_schema: dict[str, Any], x: Any) -> list[str]:
    issues = validate_custom_resource(compile_schema(schema(x_schema)), widget(x))
    return [".".join(map(str, i.path)) + ": " + i.message for i in issues]


@pytest.mark.parametrize(("x_schema", "x", "expected"), ENFORCED, ids=lambda v: str(v)[:40])
def test_accepted_keywords_are_enforced_as_the_api_server_enforces_them(
    x_schema: dict[str, Any], x: Any, expected: list[str]
) -> None:
    assert validate_crd(crd(x_schema)) == []
    assert sorted(findings(x_schema, x)) == sorted(expected)


def test_validate_with_crd_refuses_an_undecodable_keyword_and_enforces_a_whole_float(
    tmp_path: Path, run: Callable[..., Any]
) -> None:
    def with_min_length(text: str) -> str:
        definition = yaml.safe_dump(crd({"type": "string", "minLength": 0}), sort_keys=False)
        return definition.replace("minLength: 0", f"minLength: {text}")

    (tmp_path / "w.yaml").write_text(yaml.safe_dump(widget("abc"), sort_keys=False))
    for text in ("5.5", '"5"', "1e20", "18446744073709551616"):
        definition = with_min_length(text)
        line = next(n for n, t in enumerate(definition.splitlines(), 1) if "minLength" in t)
        (tmp_path / "crd.yaml").write_text(definition)
        result = run("validate", "w.yaml", "--crd", "crd.yaml", cwd=tmp_path)
        assert result.exit_code == 2, (text, result.stdout, result.stderr)
        assert (
            f"crd.yaml:{line}: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.x."
            "minLength: not a CRD the API server accepts: Invalid value: "
        ) in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    (tmp_path / "crd.yaml").write_text(with_min_length("5.0"))
    result = run("validate", "w.yaml", "--crd", "crd.yaml", cwd=tmp_path)
    assert result.exit_code == 1
    assert 'spec.x: Invalid value: "abc": should be at least 5 chars long' in result.stdout
    (tmp_path / "crd.yaml").write_text(with_min_length("3.0"))
    assert run("validate", "w.yaml", "--crd", "crd.yaml", cwd=tmp_path).exit_code == 0


def test_a_minimum_beyond_int64_is_refused_when_the_file_is_read(
    tmp_path: Path, run: Callable[..., Any]
) -> None:
    """A difference from the API server, pinned (docs/limits.md, Numbers in CRD schemas): kubectl
    sends ``minimum: 9223372036854775808`` as a float64, which the server's float64 field takes
    (it then refuses 3 as below 9.223372036854776e+18); kubetrain's reader refuses every integer
    literal from 2^63 on when it reads a file, before it knows the field is a float64 one."""
    text = yaml.safe_dump(crd({"type": "number", "minimum": 0}), sort_keys=False)
    (tmp_path / "crd.yaml").write_text(text.replace("minimum: 0", "minimum: 9223372036854775808"))
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(widget(3), sort_keys=False))
    result = run("validate", "w.yaml", "--crd", "crd.yaml", cwd=tmp_path)
    assert result.exit_code == 2
    assert "minimum: an integer beyond int64: Kubernetes cannot read it" in result.stderr


# -- the decoding rule, over generated values ---------------------------------------------------


def sent_by_kubectl(value: int | float) -> str | None:
    """The JSON number kubectl sends for ``value`` (``None``: it cannot send it): an int64 as its
    digits, any other number as the float64 ``encoding/json`` writes (``convertNumber``)."""
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return str(value)
    try:
        number = float(value)
    except OverflowError:
        return None
    return go_json_number(number) if math.isfinite(number) else None


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``."""
    body = text.removeprefix("-")
    if not body.isdigit() or not body.isascii():
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


def parse_float64(text: str) -> float | None:
    """``strconv.ParseFloat(text, 64)`` of a JSON number."""
    number = float(text)
    return number if math.isfinite(number) else None


NUMBERS = st.one_of(
    st.integers(min_value=-(2**64), max_value=2**64),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from(
        [
            2**63 - 1,
            2**63,
            -(2**63),
            -(2**63) - 1,
            -(2**63) - 513,
            2**64,
            2**1024 - 2**970,
            2**1024 - 2**971 - 1,
        ]
    ),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**80), max_value=2**80).map(float),
    st.sampled_from(
        [5.0, -0.0, 1e20, 1e21, 9.223372036854775807e18, -9.223372036854775808e18, 0.5]
    ),
)
KEYWORD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    NUMBERS,
    st.text(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(INT64_KEYWORDS + FLOAT64_KEYWORDS), value=KEYWORD_VALUES)
def test_the_verdict_follows_the_decoding_rule(key: str, value: Any) -> None:
    if value is None:
        expected: Any = None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        expected = REFUSED
    else:
        sent = sent_by_kubectl(value)
        parse = parse_int64 if key in INT64_KEYWORDS else parse_float64
        decoded = parse(sent) if sent is not None else None
        expected = REFUSED if decoded is None else decoded
    issues = validate_crd(crd(node_with(key, value)))
    if expected is REFUSED:
        assert [i.path for i in issues] == [(*X, key)], (value, issues)
        return
    assert issues == [], (value, issues)
    node = compile_schema(schema(node_with(key, value))).properties["spec"].properties["x"]
    assert getattr(node, ATTR[key]) == expected
    if key == "minLength":  # enforced with the decoded value
        assert (findings(node_with(key, value), "abc") == []) == (expected is None or expected <= 3)
    if key == "minItems":
        assert (findings(node_with(key, value), ["a"]) == []) == (expected is None or expected <= 1)
