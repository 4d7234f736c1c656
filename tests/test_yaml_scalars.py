"""Unquoted scalars read as kubectl reads them: go-yaml v2's own verdicts on some 1,200 texts
(tests/oracles/goyaml-v2/scalars.jsonl, made by go-yaml v2.4.0 itself, see make_fixture.py
there) against kubetrain's reader and writer."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.models import InputError
from kubetrain.models.limits import INT64_MAX, INT64_MIN
from kubetrain.models.source import load_all
from kubetrain.render import dump
from kubetrain.render.yamlout import is_plain

ORACLE = Path(__file__).parent / "oracles" / "goyaml-v2" / "scalars.jsonl"
RECORDS = [json.loads(line) for line in ORACLE.read_text(encoding="utf-8").splitlines()]


def _expected(record: dict[str, Any]) -> Any:
    """go-yaml's value as Python's: ``repr`` carries integers and non-finite floats exactly."""
    kind = record["type"]
    if kind == "int":
        return int(record["repr"])
    if kind == "float":
        if "repr" in record:
            return {"+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}[record["repr"]]
        return float(record["value"])  # Go's JSON writes 1000.0 as 1000
    return record["value"]


def _same(ours: Any, theirs: Any) -> bool:
    if type(ours) is not type(theirs):
        return False
    if isinstance(theirs, float) and math.isnan(theirs):
        return math.isnan(ours)
    return bool(ours == theirs)


def _json_can_hold(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return INT64_MIN <= value <= INT64_MAX
    return True


def test_the_oracle_covers_every_kind_of_value() -> None:
    kinds = {r["type"] for r in RECORDS}
    assert kinds == {"string", "int", "float", "bool", "<nil>"}
    assert len(RECORDS) > 1000
    # Texts past Python's 4,300-digit int() limit, which go-yaml reads without a fuss.
    assert sum(len(r["text"]) > 4300 for r in RECORDS) >= 4


def test_kubetrain_reads_every_scalar_as_go_yaml_v2_does() -> None:
    """The whole reader (resolver, constructors, then the rules for what JSON cannot hold):
    the value kubectl would send, or an input error exactly where JSON cannot hold it."""
    wrong: list[str] = []
    refused = 0
    for record in RECORDS:
        text, expected = record["text"], _expected(record)
        try:
            (doc,) = load_all(f"v: {text}\n", "v.yaml")
        except InputError as exc:
            refused += 1
            if _json_can_hold(expected):
                wrong.append(f"{text!r}: refused ({exc}), go-yaml reads {expected!r}")
            continue
        if not _same(doc["v"], expected):
            wrong.append(f"{text!r}: read as {doc['v']!r}, go-yaml reads {expected!r}")
    assert not wrong, "\n".join(wrong)
    assert 0 < refused < 100  # .inf, .nan and integers past int64 only


@pytest.mark.parametrize(
    ("text", "kubectl", "pyyaml"),
    [
        ("y", True, "y"),
        ("1:20", "1:20", 80),
        ("0o17", 15, "0o17"),
        ("1e3", 1000.0, "1e3"),
        ("-.5", -0.5, "-.5"),
        ("08", 8.0, "08"),
        ("=", "=", None),  # PyYAML: no constructor for !!value
    ],
)
def test_where_pyyaml_reads_otherwise_kubetrain_reads_as_kubectl(
    text: str, kubectl: Any, pyyaml: Any
) -> None:
    (doc,) = load_all(f"v: {text}\n", "v.yaml")
    assert _same(doc["v"], kubectl)
    if pyyaml is None:
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(f"v: {text}\n")
    else:
        assert yaml.safe_load(f"v: {text}\n")["v"] == pyyaml


def test_the_writer_writes_plain_only_what_go_yaml_reads_back_as_that_string() -> None:
    plain = [r for r in RECORDS if is_plain(r["text"])]
    assert plain, "some oracle texts are plain strings"
    wrong = [r["text"] for r in plain if r["type"] != "string" or r["value"] != r["text"]]
    assert not wrong
    # And every string the oracle holds, however written, reads back as itself.
    strings = [r["value"] for r in RECORDS if r["type"] == "string"]
    assert load_all(dump({"s": strings}), "w.yaml") == [{"s": strings}]


def test_explicit_tags_follow_go_yaml_too() -> None:
    assert load_all("a: !!int 0o17\nb: !!float 1\nc: !!bool y\n", "t.yaml") == [
        {"a": 15, "b": 1.0, "c": True}
    ]
    with pytest.raises(InputError, match=r"t\.yaml:1: .*the value tagged !!int is not one"):
        load_all("a: !!int hunter2\n", "t.yaml")
    # The text is not quoted in the message: it may be a credential.
    try:
        load_all("a: !!int hunter2\n", "t.yaml")
    except InputError as exc:
        assert "hunter2" not in str(exc)


def test_a_merge_key_merges_and_a_merge_value_is_a_string() -> None:
    assert load_all("b: &b {x: 1}\nd: {<<: *b, z: <<}\n", "m.yaml") == [
        {"b": {"x": 1}, "d": {"x": 1, "z": "<<"}}
    ]
