"""The lines of the fields a finding names, read from the parser's events
(:func:`kubetrain.models.source.located_documents`): the same lines as composing the file again
(:func:`kubetrain.models.source._line_tables`), in memory that does not grow with the file."""

from __future__ import annotations

import tracemalloc
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.models.source import _line_tables, located_documents

KEYS = st.sampled_from(["a", "b", "name", "spec", "1", "x y", "- z", "true"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8), st.just(""))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=25,
)


def every_path(value: Any, base: tuple = ()) -> list[tuple]:
    out = [base]
    if isinstance(value, dict):
        for k, v in value.items():
            out += every_path(v, (*base, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += every_path(v, (*base, i))
    return out


@settings(max_examples=200, deadline=None)
@given(
    docs=st.lists(st.one_of(VALUES, st.dictionaries(KEYS, VALUES, min_size=1)), max_size=4),
    flow=st.sampled_from([False, True, None]),
    data=st.data(),
)
def test_the_lines_of_wanted_paths_are_those_composing_finds(
    docs: list[Any], flow: bool | None, data: st.DataObject
) -> None:
    text = yaml.safe_dump_all(docs, default_flow_style=flow, sort_keys=False)
    tables = _line_tables(text)
    # Paths as composing names them (keys as written: every key here is a string).
    wanted = {
        i: data.draw(st.lists(st.sampled_from(sorted(table, key=repr)), max_size=6))
        for i, table in enumerate(tables)
        if table
    }
    found = located_documents(text, "f.yaml", wanted)
    assert found is not None
    assert len(found) == len(tables)
    checked = 0
    for i, paths in wanted.items():
        for path in paths:
            for n in range(len(path) + 1):  # the path and each of its ancestors
                assert found[i].line_of(path[:n]) == tables[i][path[:n]]
                checked += 1
    assert checked >= sum(len(p) for p in wanted.values())
    # A path the document does not hold: its nearest ancestor's line, as Document.line_of.
    for i in wanted:
        assert found[i].line_of(("no such key", 3)) == tables[i][()]


def test_anchors_aliases_merges_and_complex_keys_are_left_to_composing() -> None:
    for text in (
        "a: &x 1\nb: *x\n",
        "base: &b {c: 1}\nd:\n  <<: *b\n",
        "? [1, 2]\n: v\n",
        "a: !!str &y 2\n",
    ):
        assert located_documents(text, "f.yaml", {0: [("a",)]}) is None, text


def test_empty_documents_are_skipped_as_loading_skips_them() -> None:
    text = "---\n---\nnull\n---\n~\n---\na: 1\n---\n!!null ''\n---\nb:\n  - 2\n"
    tables = _line_tables(text)
    found = located_documents(text, "f.yaml", {0: [("a",)], 1: [("b", 0)]})
    assert found is not None and len(found) == len(tables) == 2
    assert found[0].line_of(("a",)) == tables[0][("a",)] == 7
    assert found[1].line_of(("b", 0)) == tables[1][("b", 0)] == 12


def test_a_dense_document_costs_the_memory_of_its_wanted_paths() -> None:
    """100,000 empty mappings in one list: composing them keeps every node (tens of MB of
    Python objects); the events keep the current node's nesting."""
    text = "kind: ConfigMap\nx: [" + ",".join(["{}"] * 100_000) + "]\nz: 1\n"
    tracemalloc.start()
    try:
        found = located_documents(text, "f.yaml", {0: [("z",), ("x", 99_999)]})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found is not None
    assert found[0].line_of(("z",)) == 3
    assert found[0].line_of(("x", 99_999)) == 2
    assert peak < 2 * 2**20, peak
