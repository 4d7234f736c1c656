"""Mode and target are typed values (``models.base.Mode``, ``builders.context.Target``): the
stack file, annotations and Pulumi config hold their strings, code compares the members, and a
misspelt one is an error rather than a comparison that is silently false."""

from __future__ import annotations

import ast

import pytest

from kubetrain.builders import BuildContext, Target
from kubetrain.models import StackSettings
from kubetrain.models.base import Mode
from kubetrain.models.load import JobSource, LoadedJob

from conftest import REPO

#: The strings of the members, which only the enums (and what parses or writes them) spell.
SPELLINGS = {m.value for m in Mode} | {t.value for t in Target}


def _named(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def test_no_mode_or_target_is_compared_with_a_string() -> None:
    found = []
    for path in sorted([*REPO.glob("kubetrain/**/*.py"), *REPO.glob("components/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            strings = [s for s in sides if isinstance(s, ast.Constant) and s.value in SPELLINGS]
            named = [s for s in sides if any(w in _named(s).lower() for w in ("mode", "target"))]
            if strings and named:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_settings_read_and_describe_the_strings() -> None:
    assert StackSettings().mode is Mode.NATIVE
    assert StackSettings.model_validate({"mode": "operator"}).mode is Mode.OPERATOR
    schema = StackSettings.model_json_schema()["properties"]["mode"]
    assert (schema["enum"], schema["type"], schema["default"]) == (
        ["native", "operator"],
        "string",
        "native",
    )
    with pytest.raises(ValueError, match="Input should be 'native' or 'operator'"):
        StackSettings.model_validate({"mode": "nativ"})


def test_a_misspelt_mode_or_target_is_refused_where_it_is_made() -> None:
    assert Mode.parse("operator") is Mode.OPERATOR
    assert Mode.parse("Operator") is None
    with pytest.raises(ValueError):
        LoadedJob(None, JobSource(None), "nativ")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        BuildContext(StackSettings(), "pulumii")  # type: ignore[arg-type]
    assert BuildContext(StackSettings(), "pulumi").target is Target.PULUMI  # type: ignore[arg-type]
