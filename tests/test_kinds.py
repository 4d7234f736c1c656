"""The kind registry (kubetrain.models.kinds): one declaration per kind, refusing a second, and
everything a kind needs present for every declared kind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

import components
from kubetrain.kube import catalog
from kubetrain.models import JobDocument, declarations
from kubetrain.models.editor import job_schema
from kubetrain.models.kinds import attach_builder, attach_component, declaration, declare
from kubetrain.models.tfjob import TFJob

from conftest import REPO

DECLARED = declarations()
IDS = [f"{d.key[0]} {d.key[1]}" for d in DECLARED]


def kinds_in(files: Iterator[Path]) -> set[tuple[str, str]]:
    """(apiVersion, kind) of every job document in the YAML files (stack files and job files)."""
    found: set[tuple[str, str]] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("apiVersion"), str) and isinstance(node.get("kind"), str):
                found.add((node["apiVersion"], node["kind"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in files:
        try:
            docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue  # a bad-input fixture that is not YAML on purpose (a tab in indentation)
        for doc in docs:
            walk(doc)
    return found


def golden_inputs() -> Iterator[Path]:
    """The input files of every golden case: its own YAML files, and the repository's example
    files its stack names in kubetrain:jobFiles (``stacks/<source>-examples/...``)."""
    cases = REPO / "tests" / "cases"
    for path in cases.rglob("*.yaml"):
        if "expected" in path.relative_to(cases).parts:
            continue
        yield path
        if path.name.startswith("Pulumi."):
            config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
            for name in config.get("kubetrain:jobFiles") or []:
                if (REPO / name).is_file():
                    yield REPO / name


def test_the_registry_holds_every_kind() -> None:
    assert len(DECLARED) >= 5
    assert {d.key for d in DECLARED} >= {
        ("kubeflow.org/v1", "TFJob"),
        ("kubeflow.org/v1alpha1", "TFJob"),
        ("kubeflow.org/v1", "PyTorchJob"),
        ("paddlepaddle.org/v1", "TrainingJob"),
        ("kubetrain.io/v1alpha1", "Learner"),
    }


@pytest.mark.parametrize("kind", DECLARED, ids=IDS)
def test_every_kind_has_a_builder_and_a_component(kind: Any) -> None:
    expanded = kind.expanded
    assert expanded.builder is not None, f"{IDS[DECLARED.index(kind)]} has no builder"
    assert expanded.component is not None, f"{IDS[DECLARED.index(kind)]} has no Pulumi component"
    assert components.COMPONENTS[expanded.document] is expanded.component
    assert expanded.component in components.ALL_COMPONENTS


def test_components_and_the_providers_list_come_from_the_declarations() -> None:
    attached = {d.component for d in DECLARED if d.component is not None}
    children = {c for d in DECLARED for c in d.child_components}
    assert set(components.ALL_COMPONENTS) == attached | children
    assert len(components.ALL_COMPONENTS) == len(set(components.ALL_COMPONENTS))
    assert dict(components.COMPONENTS) == {
        d.document: d.component for d in DECLARED if d.component is not None
    }


@pytest.mark.parametrize(
    ("where", "files"),
    [
        ("a bad-input fixture in tests/bad", lambda: (REPO / "tests" / "bad").glob("*.yaml")),
        ("a golden case in tests/cases", lambda: golden_inputs()),
        ("an example stack in stacks/", lambda: (REPO / "stacks").rglob("*.yaml")),
    ],
    ids=["bad-input", "golden-case", "example-stack"],
)
def test_every_kind_is_covered(where: str, files: Any) -> None:
    found = kinds_in(files())
    missing = [f"{a} {k}" for a, k in (d.key for d in DECLARED) if (a, k) not in found]
    assert not missing, f"no {where} uses: {', '.join(missing)}"


def test_pod_templates_and_schemas_come_from_the_declarations() -> None:
    with_templates = [d for d in DECLARED if d.replica_specs_key]
    assert {d.document.KIND for d in with_templates} >= {"TFJob", "PyTorchJob"}
    for d in with_templates:
        row = catalog.lookup(catalog.GroupKind.parse(d.document.API_VERSION, d.document.KIND))
        assert row.attached["declared"] is d
        assert row.pods is not None and row.pods.items == ("spec", d.replica_specs_key)
    enum = job_schema((1, 33))["$defs"]["JobDocument"]["properties"]["kind"]["enum"]
    assert set(enum) == {d.document.KIND for d in DECLARED}


def test_a_second_declaration_of_a_kind_is_refused() -> None:
    with pytest.raises(
        RuntimeError, match=r"job kind \('kubeflow.org/v1', 'TFJob'\) declared twice"
    ):

        @declare("again")
        class Again(JobDocument):
            API_VERSION: ClassVar[str] = "kubeflow.org/v1"
            KIND: ClassVar[str] = "TFJob"

    # One row per (group, kind): another version is refused too, unless it is converted into
    # the declared one (kubeflow.org/v1alpha1 TFJob, expanded_as TFJob).
    with pytest.raises(RuntimeError, match=r"job kind TFJob.kubeflow.org declared twice"):

        @declare("again")
        class AgainV2(JobDocument):
            API_VERSION: ClassVar[str] = "kubeflow.org/v2"
            KIND: ClassVar[str] = "TFJob"

    assert declaration(TFJob).document is TFJob


def test_a_second_builder_or_component_is_refused() -> None:
    def other(job: Any, mode: str, ctx: Any) -> list[dict[str, Any]]:
        return []

    with pytest.raises(RuntimeError, match=r"TFJob \(kubeflow.org/v1\) has a builder already"):
        attach_builder(TFJob, other)
    with pytest.raises(RuntimeError, match=r"TFJob \(kubeflow.org/v1\) has a component already"):
        attach_component(TFJob, object)
    assert declaration(TFJob).builder is not other


def test_the_cli_lists_every_declared_kind(run) -> None:
    result = run("--help")
    assert result.exit_code == 0
    for d in DECLARED:
        assert f"{d.document.API_VERSION} {d.document.KIND}: " in result.stdout
