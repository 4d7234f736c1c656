"""The catalogue of kinds (kubetrain.kube.catalog): its generated columns are what ``make
catalog`` writes, it is the only per-kind table of the code, and a kind is known by its group
and kind, never by its name alone (a Volcano ``Job`` changes nothing of ``batch/v1`` Job)."""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.builders.lifecycle import lifecycle_annotations
from kubetrain.builders.order import sort_key
from kubetrain.kube import catalog
from kubetrain.kube.catalog import generate
from kubetrain.models import StackSettings
from kubetrain.render.tree import object_path

from conftest import REPO, UPSTREAM_CRDS, needs_upstream_crds

BATCH_JOB = catalog.GroupKind("batch", "Job")
VOLCANO_JOB = catalog.GroupKind("batch.volcano.sh", "Job")

#: The production code: every module whose tables the rule below holds to.
PRODUCTION = ("kubetrain", "components", "stacks", "provider")

#: The modules that may hold a per-kind table: the catalogue itself, and (with why) the few
#: whose table is a rule of their own about a closed set of kinds rather than a fact of a kind.
TABLES_ALLOWED = {
    "kubetrain/kube/catalog/": "the catalogue: one row per (group, kind)",
    "kubetrain/kube/apiserver/policy.py": (
        "the types ValidateLimitRange allows in a limit's type (a field's values, not rows)"
    ),
    "kubetrain/kube/apiserver/rbac.py": (
        "the values ValidateRoleBinding allows in roleRef.kind (a field's values, not rows)"
    ),
    "kubetrain/convert/trainjob.py": (
        "CONVERTIBLE_KINDS: the v1 kinds whose conversion to a TrainJob convert implements "
        "(an order for its messages; every one's row names TrainJob as its successor)"
    ),
}

#: Comparisons of an object's kind with a name several groups use, and why the group does not
#: matter there: (module, kind name).
AMBIGUOUS_ALLOWED = {
    ("kubetrain/validate/semantic.py", "PodGroup"): (
        "every scheduler's PodGroup, keyed by its group on the next line"
    ),
    (
        "kubetrain/kube/apiserver/meta.py",
        "Event",
    ): "the core Event: its apiVersion v1 is compared too",
    ("kubetrain/convert/compare.py", "PodGroup"): (
        "the PodGroup of a job's own objects, whichever scheduler's it is"
    ),
}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for root in PRODUCTION:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def _kind_names() -> frozenset[str]:
    import kubetrain.models  # noqa: F401 - declares every job kind (rows of their own)

    return frozenset(row.kind for row in catalog.rows())


def _names_a_kind(node: ast.AST, names: frozenset[str]) -> bool:
    """A kind's name, or a (group or apiVersion, kind) tuple."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in names
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        return all(isinstance(e, ast.Constant) for e in node.elts) and _names_a_kind(
            node.elts[1], names
        )
    return False


def _skipped(tree: ast.Module) -> set[int]:
    """Nodes that are not tables: annotations (``Literal["SecretStore", ...]`` is the type of a
    field's value) and ``__all__``."""
    out: set[int] = set()
    for node in ast.walk(tree):
        roots: list[ast.AST] = []
        if isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots += [
                a.annotation for a in (*node.args.args, *node.args.kwonlyargs) if a.annotation
            ]
            roots += [node.returns] if node.returns else []
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            roots.append(node.value)
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("Literal"):
            roots.append(node.slice)
        for root in roots:
            out.update(id(n) for n in ast.walk(root))
    return out


def per_kind_tables(tree: ast.Module, names: frozenset[str]) -> list[tuple[int, str]]:
    """(line, source) of every table keyed by kinds in a module: a dict with a kind (or a
    (group, kind)) as a key, or a set, list or tuple of two kinds or more."""
    skipped = _skipped(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Dict):
            hit = any(k is not None and _names_a_kind(k, names) for k in node.keys)
        elif isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            hit = sum(_names_a_kind(e, names) for e in node.elts) >= 2
        else:
            continue
        if hit:
            found.append((node.lineno, ast.unparse(node)[:80]))
    return found


def _is_object_kind(node: ast.AST) -> bool:
    """``obj["kind"]``, ``obj.get("kind")`` or a variable ``kind``."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        first = node.args[0] if node.args else None
        return node.func.attr == "get" and isinstance(first, ast.Constant) and first.value == "kind"
    return isinstance(node, ast.Name) and node.id == "kind"


def kind_name_comparisons(tree: ast.Module, ambiguous: frozenset[str]) -> list[tuple[int, str]]:
    """(line, kind name) of every comparison of an object's kind alone with a name that more
    than one group gives a kind."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if not any(_is_object_kind(o) for o in operands):
            continue
        for o in operands:
            elts = o.elts if isinstance(o, (ast.Tuple, ast.Set, ast.List)) else [o]
            for e in elts:
                if isinstance(e, ast.Constant) and e.value in ambiguous:
                    found.append((node.lineno, e.value))
    return found


def test_the_scan_finds_tables_and_comparisons() -> None:
    """The rules below can fail: the tables the catalogue replaced, written again, are found."""
    names = frozenset({"Job", "Pod", "StatefulSet"})
    source = (
        'KIND_ORDER = ("Pod", "Job")\n'
        'FINDERS = {("batch", "Job"): 1}\n'
        'SCOPES = frozenset({"Pod", "StatefulSet"})\n'
        'def f(obj, kind: Literal["Pod", "Job"]):\n'
        '    return obj["kind"] == "Job" or obj.get("kind") in ("Job",) or kind == "Pod"\n'
        'OBJ = {"kind": "Job", "apiVersion": "batch/v1"}\n'
        '__all__ = ["Pod", "Job"]\n'
    )
    tree = ast.parse(source)
    assert [line for line, _ in per_kind_tables(tree, names)] == [1, 2, 3]
    assert kind_name_comparisons(tree, frozenset({"Job"})) == [(5, "Job"), (5, "Job")]


def test_no_per_kind_table_outside_the_catalogue() -> None:
    names = _kind_names()
    found = {}
    scanned = 0
    for rel, tree in _modules():
        scanned += 1
        if any(rel.startswith(allowed) for allowed in TABLES_ALLOWED):
            continue
        if tables := per_kind_tables(tree, names):
            found[rel] = tables
    assert scanned > 100  # the production code was read
    assert found == {}, "per-kind tables outside kubetrain/kube/catalog: make them rows"


def test_the_allowed_tables_are_still_there() -> None:
    """An allowance without a table is stale: it is removed, not kept."""
    names = _kind_names()
    modules = dict(_modules())
    for allowed in TABLES_ALLOWED:
        held = [t for rel, tree in modules.items() if rel.startswith(allowed) for t in [tree]]
        assert held and any(per_kind_tables(t, names) for t in held), allowed


def test_kind_names_several_groups_use_are_never_compared_alone() -> None:
    groups: dict[str, set[str]] = {}
    for row in catalog.rows():
        groups.setdefault(row.kind, set()).add(row.group)
    ambiguous = frozenset(kind for kind, gs in groups.items() if len(gs) > 1)
    assert {"Job", "PodGroup"} <= ambiguous  # Volcano's Job, every scheduler's PodGroup
    found = []
    for rel, tree in _modules():
        for line, name in kind_name_comparisons(tree, ambiguous):
            if (rel, name) not in AMBIGUOUS_ALLOWED:
                found.append(f"{rel}:{line}: {name}")
    assert found == [], "compare (group, kind): catalog.of(obj).key or catalog.GroupKind.of(obj)"


@needs_upstream_crds
def test_the_generated_columns_are_what_make_catalog_writes() -> None:
    written = (REPO / "kubetrain" / "kube" / "catalog" / "_generated.py").read_text("utf-8")
    assert written == generate.generated_text(UPSTREAM_CRDS), "stale: run make catalog"


@needs_upstream_crds
def test_every_crd_of_shared_crds_has_its_row() -> None:
    crds = generate.third_party_rows(UPSTREAM_CRDS)
    assert len(crds) >= 20
    for (group, kind), (plural, namespaced, versions) in crds.items():
        row = catalog.lookup((group, kind))
        assert (row.plural, row.namespaced, row.versions) == (plural, namespaced, versions)


def test_a_row_is_given_once() -> None:
    with pytest.raises(RuntimeError, match=r"Job.batch: pods given twice"):
        catalog.attach(BATCH_JOB, "pods", catalog.Pods(template=("spec",)))


# --- a Job of another group ----------------------------------------------------------------------


def _columns(row: catalog.Kind) -> dict[str, Any]:
    return {f.name: getattr(row, f.name) for f in fields(row) if f.name != "attached"}


def _job(api_version: str, name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
    }


BATCH = _job("batch/v1", "train", parallelism=2, template={"spec": {"containers": []}})
VOLCANO = _job(
    "batch.volcano.sh/v1alpha1",
    "train",
    tasks=[
        {"name": "ps", "replicas": 1, "template": {"spec": {"containers": []}}},
        {"name": "worker", "replicas": 3, "template": {"spec": {"containers": []}}},
    ],
)


@pytest.fixture
def own_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the catalogue this test may add rows to."""
    monkeypatch.setattr(catalog, "_ROWS", copy.deepcopy(catalog._load()))
    monkeypatch.setattr(catalog, "_OF", {})  # rows found by catalog.of, of this copy only


def test_declaring_a_job_of_another_group_changes_nothing_of_batch_job(own_catalogue) -> None:
    before = _columns(catalog.lookup(BATCH_JOB))
    pods = catalog.Pods(items=("spec", "steps"), each="list", template=("pod",))
    row = catalog.attach(("example.com", "Job"), "pods", pods)
    catalog.attach(("example.com", "Job"), "declared", object())
    assert row.key == ("example.com", "Job") and row.pods is pods
    assert _columns(catalog.lookup(BATCH_JOB)) == before
    assert "declared" not in catalog.lookup(BATCH_JOB).attached
    # batch/v1 Job's pods are still found by its own rule, the other Job's by its own.
    assert [t.count for t in catalog.pod_templates(BATCH)] == [2]
    other = _job("example.com/v1", "x", steps=[{"pod": {"spec": {}}}, {"pod": {"spec": {}}}])
    assert [t.path for t in catalog.pod_templates(other)] == [
        ("spec", "steps", 0, "pod"),
        ("spec", "steps", 1, "pod"),
    ]


def test_a_volcano_job_is_its_own_kind() -> None:
    batch, volcano = catalog.of(BATCH), catalog.of(VOLCANO)
    assert (batch.key, volcano.key) == (BATCH_JOB, VOLCANO_JOB)
    assert volcano.known and volcano.namespaced and volcano.plural == "jobs"
    # Nothing of the built-in's applies to it.
    assert batch.rank is not None and volcano.rank is None
    assert batch.api is not None and volcano.api is None
    assert batch.kueue is not None and volcano.kueue is None
    assert batch.pulumi_force_new and not volcano.pulumi_force_new
    # What it has is its own row's: Volcano's admission refuses edits but for the counts.
    assert volcano.source == "volcano" and volcano.update_rules is not batch.update_rules
    assert volcano.pulumi_replace_on_changes != batch.pulumi_replace_on_changes
    # Its pods: each task's replicas.
    found = catalog.pod_templates(VOLCANO)
    assert [(t.path, t.count) for t in found] == [
        (("spec", "tasks", 0, "template"), 1),
        (("spec", "tasks", 1, "template"), 3),
    ]


def test_a_volcano_job_neither_takes_nor_renames_a_batch_jobs_file() -> None:
    assert object_path(BATCH) == "ml/job-train.yaml"
    assert object_path(VOLCANO) == "ml/job.batch.volcano.sh-train.yaml"


def test_a_volcano_job_sorts_and_lives_as_itself() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}}
    ordered = sorted([VOLCANO, BATCH, pod], key=sort_key)
    # A batch Job installs after Pods (its rank), a Volcano Job after every ranked kind.
    assert [o["apiVersion"] for o in ordered] == ["v1", "batch/v1", "batch.volcano.sh/v1alpha1"]
    # Both are replaced when an edit their admission refuses comes (Flux's force): the
    # built-in by its own row (an immutable template), the Volcano Job by Volcano's row.
    settings = StackSettings()
    batch = lifecycle_annotations(copy.deepcopy(BATCH), settings)["metadata"]
    volcano = lifecycle_annotations(copy.deepcopy(VOLCANO), settings)["metadata"]
    assert batch["annotations"]["kustomize.toolkit.fluxcd.io/force"] == "enabled"
    assert volcano["annotations"]["kustomize.toolkit.fluxcd.io/force"] == "enabled"


def test_of_finds_a_row_attached_after_it_was_asked(own_catalogue) -> None:
    # catalog.of remembers each (apiVersion, kind)'s row: a kind unknown when first asked
    # about, then given a row by attach, is found with that row afterwards.
    obj = _job("late.example.com/v1", "x", steps=[])
    assert not catalog.of(obj).known
    pods = catalog.Pods(items=("spec", "steps"), each="list", template=("pod",))
    row = catalog.attach(("late.example.com", "Job"), "pods", pods)
    assert catalog.of(obj) is row and catalog.of(obj).pods is pods


@settings(max_examples=30, deadline=None)
@given(kinds=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=40))
def test_catalog_of_remembers_a_bounded_number_of_kinds(kinds: list[str]) -> None:
    """catalog.of remembers at most OF_REMEMBERED (apiVersion, kind) pairs, whatever input
    names, and gives the row lookup gives, remembered or not."""
    saved = dict(catalog._OF)
    try:
        catalog._OF.clear()
        catalog._OF.update({("x/v1", f"filler{i}"): catalog.lookup(("x", "y"))
                            for i in range(catalog.OF_REMEMBERED - 5)})  # fmt: skip
        for kind in kinds:
            obj = {"apiVersion": "example.com/v1", "kind": kind}
            assert catalog.of(obj) is catalog.lookup(("example.com", kind))
            assert catalog.of(obj) is catalog.lookup(("example.com", kind))  # remembered
            assert len(catalog._OF) <= catalog.OF_REMEMBERED
    finally:
        catalog._OF.clear()
        catalog._OF.update(saved)
