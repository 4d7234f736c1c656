"""The hostile trial of the features added after the first one (patches, plain manifests, CEL,
``init``, ``validate -``, ``diff``): each class of break it found, the input that found it, the
bound or rule that closes it, and a property over the class."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.models.limits import MAX_FILE_BYTES, MAX_OBJECTS
from kubetrain.models.source import expand_list_values, list_problem

PROPERTY = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def config_map(name: str, namespace: str = "ml") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"k": "v"},
    }


def write_stack(project: Path, config: dict[str, Any]) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))


# --- standard input: bytes that are not UTF-8, input past the limit -----------------------------


def test_bytes_that_are_not_utf8_on_stdin_are_the_inputs_finding(run) -> None:
    done = run("validate", "-", input=b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \xff}\n")
    assert done.exit_code == 1
    assert "<stdin>: (object): not UTF-8 text (invalid start byte) (yaml)" in done.stdout


def test_stdin_past_the_limit_is_an_input_error_not_a_verdict(run, monkeypatch) -> None:
    # What was read of a cut stream is not the input: no finding, exit 2.
    monkeypatch.setattr("kubetrain.validate.engine.MAX_FILE_BYTES", 64)
    done = run("validate", "-", input=b"apiVersion: v1\n" + b"#" * 100)
    assert done.exit_code == 2, done.stdout
    assert done.stdout == ""
    assert done.stderr.startswith("<stdin>: is more than 128 MiB; kubetrain reads files of at most")


def test_a_given_file_past_the_limit_is_an_input_error(tmp_path: Path, run) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:
        f.write(b"apiVersion: v1\n")
        f.truncate(MAX_FILE_BYTES + 1)  # sparse
    done = run("validate", str(big), cwd=tmp_path)
    assert done.exit_code == 2
    assert "big.yaml: is 128 MiB; kubetrain reads files of at most 128 MiB" in done.stderr


@PROPERTY
@given(st.binary(max_size=200))
def test_any_bytes_on_stdin_end_in_a_verdict_or_an_input_error(run, data: bytes) -> None:
    done = run("validate", "-", input=data)
    assert done.exit_code in (0, 1, 2)
    assert "Traceback" not in done.stdout + done.stderr


# --- list objects (kind: List) ---------------------------------------------------------------------


def test_validate_takes_the_items_of_a_list_with_their_lines(tmp_path: Path, run) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [config_map("a"), config_map("B")]}
    (tmp_path / "list.yaml").write_text(yaml.safe_dump(listed, sort_keys=False))
    done = run("validate", "list.yaml", cwd=tmp_path)
    assert done.exit_code == 1
    # The second item's name, at its own line; the list itself is no object.
    lines = (tmp_path / "list.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "name: B" in text)
    assert f"list.yaml:{line}: metadata.name: 'B' is not a valid DNS-1123 subdomain" in done.stdout
    assert "Summary: 2 objects: 1 valid, 1 invalid" in done.stdout
    assert "List" not in done.stdout.replace("list.yaml", "")


def test_a_stack_renders_the_items_of_a_listed_manifest_and_patches_reach_them(
    project: Path, run
) -> None:
    listed = {"apiVersion": "v1", "kind": "ConfigMapList", "items": [config_map("a")]}
    write_stack(
        project,
        {
            "kubetrain:manifests": [listed],
            "kubetrain:patches": [
                {"target": {"kind": "ConfigMap", "name": "a"}, "patch": {"data": {"k": "w"}}}
            ],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 0, done.stderr
    rendered = list((project / "rendered" / "dev").rglob("configmap-a.yaml"))
    assert len(rendered) == 1
    assert yaml.safe_load(rendered[0].read_text())["data"] == {"k": "w"}


def test_a_list_past_the_bound_is_refused_before_its_items_are_read(
    project: Path, run, monkeypatch
) -> None:
    monkeypatch.setattr("kubetrain.models.source.MAX_OBJECTS", 2)
    listed = {"apiVersion": "v1", "kind": "List", "items": [config_map(f"c{i}") for i in range(3)]}
    write_stack(project, {"kubetrain:manifests": [listed]})
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert (
        "config.kubetrain:manifests[0].items: a list object of 3 items: kubetrain reads at most "
        "2 objects from one list" in done.stderr
    )
    assert not (project / "rendered").exists()


_leaf = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.sampled_from(["ConfigMap", "Secret", "Pod"])}
)
_listed = st.recursive(
    _leaf,
    lambda inner: st.fixed_dictionaries(
        {
            "apiVersion": st.just("v1"),
            "kind": st.sampled_from(["List", "PodList"]),
            "items": st.lists(inner, max_size=4),
        }
    ),
    max_leaves=12,
)


@settings(max_examples=100, deadline=None)
@given(_listed)
def test_a_list_expands_to_its_leaves_each_at_its_path(data: dict[str, Any]) -> None:
    leaves = list(expand_list_values(data))
    for path, item in leaves:
        found: Any = data
        for part in path:
            found = found[part]
        assert found is item
        assert "items" not in item
    assert len(leaves) == json.dumps(data).count('"kind": "ConfigMap"') + json.dumps(data).count(
        '"kind": "Secret"'
    ) + json.dumps(data).count('"kind": "Pod"')
    assert list_problem(data) is None or len(leaves) > MAX_OBJECTS


# --- patch targets: Go's regular expressions, matched in linear time ---------------------------


def test_a_backtracking_target_name_matches_in_linear_time(project: Path, run) -> None:
    # (a+)+b against a long name of a's backtracks for ever in Python's re; RE2 (Go's
    # language) answers at once that nothing matches.
    name = "a" * 60
    write_stack(
        project,
        {
            "kubetrain:manifests": [config_map(name)],
            "kubetrain:patches": [
                {"target": {"kind": "ConfigMap", "name": "(a+)+b"}, "patch": {"data": {"k": "w"}}}
            ],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert "patch target (kind=ConfigMap name=(a+)+b) matches no job or manifest" in done.stderr


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(?=a)", "invalid perl operator: (?="), ("(a)\\1", "invalid escape sequence: \\1")],
)
def test_a_target_go_cannot_compile_is_refused(
    project: Path, run, pattern: str, message: str
) -> None:
    write_stack(
        project,
        {
            "kubetrain:manifests": [config_map("a")],
            "kubetrain:patches": [
                {"target": {"kind": "ConfigMap", "name": pattern}, "patch": {"data": {"k": "w"}}}
            ],
        },
    )
    done = run("render", cwd=project)
    assert done.exit_code == 2
    assert f"target.name: not a regular expression (error parsing regexp: {message})" in done.stderr


_re_atom = st.sampled_from(["a", "b", ".", "[ab]", "[^a]", "\\d", "x"])


def _re(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _re_atom
    inner = _re(depth - 1)
    return st.one_of(
        inner,
        st.tuples(inner, inner).map("".join),
        st.tuples(inner, inner).map(lambda p: f"(?:{p[0]}|{p[1]})"),
        inner.map(lambda r: f"(?:{r})*"),
        inner.map(lambda r: f"(?:{r})+"),
        inner.map(lambda r: f"(?:{r})?"),
        inner.map(lambda r: f"(?:{r}){{1,3}}"),
    )


@settings(max_examples=300, deadline=None)
@given(_re(3), st.text(alphabet="ab1x-", max_size=12))
def test_go_patterns_match_as_python_would_on_the_common_language(pattern: str, name: str) -> None:
    import re

    from kubetrain.kube.regex import go_regex

    assert go_regex(pattern).fullmatch(name) == (re.fullmatch(pattern, name) is not None)
