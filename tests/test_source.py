"""Strict YAML reading with line numbers."""

from __future__ import annotations

import pytest

from kubetrain.models import InputError
from kubetrain.models.source import load_all, parse_documents


def test_lines_point_at_keys() -> None:
    (doc,) = parse_documents("a: 1\nb:\n  c: [1, 2]\n  d:\n    - x: 1\n", "f.yaml")
    assert doc.data == {"a": 1, "b": {"c": [1, 2], "d": [{"x": 1}]}}
    assert doc.line_of(("b",)) == 2
    assert doc.line_of(("b", "d", 0, "x")) == 5
    # A path below a known one falls back to its nearest ancestor.
    assert doc.line_of(("b", "c", 7)) == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "a: 1\nb: 2\na: 3\n",
            r"f\.yaml:3: a: duplicate key 'a' \(first given on line 1\)",
            id="duplicate-key",
        ),
        pytest.param("a: [1\nb: 2\n", r"f\.yaml:2: invalid YAML", id="syntax"),
        pytest.param("a: &x [*x]\n", r"f\.yaml:1: a\[0\]: a recursive alias", id="recursive-alias"),
        pytest.param(
            "? [1, 2]\n: x\n", r"f\.yaml:1: invalid YAML: .*unhashable key", id="complex-key"
        ),
    ],
)
def test_bad_yaml_is_an_input_error(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_documents(text, "f.yaml")


def test_timestamps_stay_strings() -> None:
    (doc,) = parse_documents("when: 2024-01-01\n", "f.yaml")
    assert doc.data == {"when": "2024-01-01"}
    assert load_all("when: 2024-01-01\n", "f.yaml") == [{"when": "2024-01-01"}]


def test_fast_loader_rejects_duplicates_but_allows_merge_overrides() -> None:
    with pytest.raises(InputError, match=r"f:2: a: duplicate key 'a' \(first given on line 1\)"):
        load_all("a: 1\na: 2\n", "f")
    text = "base: &b {x: 1, y: 1}\nd:\n  <<: *b\n  x: 2\n"
    assert load_all(text, "f")[0]["d"] == {"x": 2, "y": 1}
    (doc,) = parse_documents(text, "f")
    assert doc.data == load_all(text, "f")[0]
    # The key given again is where the value comes from.
    assert doc.line_of(("d", "x")) == 4
    assert doc.line_of(("d", "y")) == 1


def test_empty_documents_are_skipped_in_both_loaders() -> None:
    text = "---\n---\na: 1\n---\n"
    assert [d.data for d in parse_documents(text, "f")] == load_all(text, "f") == [{"a": 1}]
