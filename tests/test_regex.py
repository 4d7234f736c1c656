"""Go regular expressions (kubetrain/kube/regex.py) held to Go's own verdicts: every pattern of
tests/oracles/go-regexp/patterns.jsonl (made by Go 1.26's regexp, see make_fixture.py there) is
refused exactly when Go refuses it, and otherwise matches the same texts; and no text at all
ends in anything but a compiled pattern or a ValueError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.kube.regex import go_regex

ORACLE = Path(__file__).parent / "oracles" / "go-regexp" / "patterns.jsonl"
CASES = [json.loads(line) for line in ORACLE.read_text().splitlines()]


def test_the_oracle_holds_refusals_and_matches() -> None:
    assert len(CASES) > 300
    assert sum("error" in c for c in CASES) > 100
    assert any(c["pattern"] == "\\C" and "invalid escape sequence" in c["error"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[repr(c["pattern"][:40]) for c in CASES])
def test_go_regex_agrees_with_go(case: dict) -> None:
    pattern = case["pattern"]
    if "error" in case:
        with pytest.raises(ValueError) as caught:
            go_regex(pattern)
        assert str(caught.value).startswith("error parsing regexp: ")
        return
    compiled = go_regex(pattern)
    assert [compiled.search(t) for t in case["texts"]] == case["matches"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab()[]{}|*+?^$\\.:<>=!-PCQEdwpLz0123456789,", max_size=40))
def test_no_pattern_is_anything_but_compiled_or_refused(pattern: str) -> None:
    try:
        compiled = go_regex(pattern)
    except ValueError as exc:
        assert str(exc).startswith(("error parsing regexp: ", "a pattern of"))
        return
    assert compiled.search("ab") in (True, False)
