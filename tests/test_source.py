"""Strict YAML reading with line numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.models import InputError
from kubetrain.models.source import load_all, parse_documents

from helpers import KubectlDumper


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
    text = "base: &b {x: 1, w: 1}\nd:\n  <<: *b\n  x: 2\n"
    assert load_all(text, "f")[0]["d"] == {"x": 2, "w": 1}
    (doc,) = parse_documents(text, "f")
    assert doc.data == load_all(text, "f")[0]
    # The key given again is where the value comes from.
    assert doc.line_of(("d", "x")) == 4
    assert doc.line_of(("d", "w")) == 1


def test_empty_documents_are_skipped_in_both_loaders() -> None:
    text = "---\n---\na: 1\n---\n"
    assert [d.data for d in parse_documents(text, "f")] == load_all(text, "f") == [{"a": 1}]


# --- locating: document starts noted while loading, field lines composed on demand ---------

REPO = Path(__file__).resolve().parents[1]
TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)

#: Texts whose line tables are easy to get wrong: merges (a merged key given again, merges of
#: merges, a merge list), aliases, empty and null documents, flow and block styles, comments.
LINE_CASES = [
    "a: 1\nb:\n  c: [1, 2]\n  d:\n    - x: 1\n",
    "base: &b {x: 1, w: 1}\nd:\n  <<: *b\n  x: 2\n",
    "one: &o {a: 1}\ntwo: &t\n  <<: *o\n  b: 2\nthree:\n  <<: [*t, *o]\n  a: 3\n",
    "---\n---\na: 1\n---\n",
    "--- ~\n---\n# a comment\nx: &v [1, {w: 2}]\nz: *v\n--- !!null\n--- null\n...\n",
    "- 1\n- [2, 3]\n- {k: v}\n",
    "plain\n---\n|\n  block\n---\nk: >\n  folded\n  text\n",
    "\n\n\nlate: start\n",
]


def _texts() -> list[tuple[str, str]]:
    files = sorted(REPO.glob("stacks/**/*.yaml")) + sorted(REPO.glob("tests/cases/*/**/*.yaml"))
    assert len(files) > 20
    return [(f"case {i}", t) for i, t in enumerate(LINE_CASES)] + [
        (str(f.relative_to(REPO)), f.read_text(encoding="utf-8")) for f in files
    ]


@pytest.mark.parametrize(("name", "text"), _texts())
def test_composed_line_tables_are_the_parsed_ones(name: str, text: str) -> None:
    """The tables composed on demand (no values built) are exactly parse_documents', and the
    start noted while loading is each table's line of the document itself."""
    from kubetrain.models.source import _line_tables, _load

    parsed = parse_documents(text, name)
    values, starts = _load(text, name)
    assert values == [d.data for d in parsed]
    assert _line_tables(text) == [d.lines for d in parsed]
    assert starts == [d.lines[()] for d in parsed]


@settings(max_examples=40, deadline=None)
@given(st.lists(JSONISH, min_size=1, max_size=3), st.booleans())
def test_composed_line_tables_hold_for_any_document(values: list[Any], shared: bool) -> None:
    """PyYAML writes a value reached twice as an anchor and an alias: tables of such texts too."""
    from kubetrain.models.source import _line_tables, _load

    if shared:
        values = [{"first": v, "again": v, "merged": {"<<": {"m": v}, "m": 1}} for v in values]
    text = yaml.dump_all(values, Dumper=KubectlDumper, default_flow_style=None)
    parsed = parse_documents(text, "f")
    assert _line_tables(text) == [d.lines for d in parsed]
    assert _load(text, "f")[1] == [d.lines[()] for d in parsed]


def test_a_document_start_is_found_without_composing_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a job (and all built from it) is located is noted while loading; only a field's
    line composes the file again, once."""
    from kubetrain.models import source

    path = tmp_path / "jobs.yaml"
    path.write_text("a: 1\n---\n\nb:\n  c: 2\n")
    calls: list[str] = []
    real = source._line_tables
    monkeypatch.setattr(source, "_line_tables", lambda text: calls.append(text) or real(text))
    first, second = source.load_documents(path)
    assert (first.line_of(()), second.line_of(())) == (1, 4)
    assert calls == []
    assert second.line_of(("b", "c")) == 5
    assert first.line_of(("a",)) == 1
    assert len(calls) == 1
