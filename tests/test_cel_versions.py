"""CEL rules of a CRD judged per Kubernetes version, held to kube-apiserver's own environment:
tests/oracles/cel-kubernetes/rules.jsonl (made by k8s.io/apiserver v0.36.2 with cel-go
v0.26.0, see make_fixture.py there) gives, per rule and minor version, the error the server's
environment for new CRD rules gives, or none; kubetrain refuses the CRD for that version exactly
when the server does (kubetrain/kube/apiextensions/cellibs.py), with its words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubetrain.kube.apiextensions import validate_crd

ORACLE = Path(__file__).parent / "oracles" / "cel-kubernetes" / "rules.jsonl"
CASES = [json.loads(line) for line in ORACLE.read_text().splitlines()]
VERSIONS = [(1, minor) for minor in range(25, 38)]


def crd(rule: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                    "x-kubernetes-validations": [{"rule": rule}],
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


def test_the_oracle_holds_verdicts_that_depend_on_the_version() -> None:
    varying = [c for c in CASES if len({bool(e) for e in c["errors"].values()}) > 1]
    assert len(varying) >= 15, "every library introduced since 1.28 is in the corpus"
    assert any(all(c["errors"].values()) for c in CASES), "and what no version accepts"


@pytest.mark.parametrize("case", CASES, ids=[c["rule"][:50] for c in CASES])
def test_a_crds_rule_is_refused_for_exactly_the_versions_the_server_refuses_it(
    case: dict[str, Any],
) -> None:
    ours = {}
    for version in VERSIONS:
        issues = validate_crd(crd(case["rule"]), version)
        ours[f"{version[0]}.{version[1]}"] = "; ".join(i.message for i in issues)
    for name, theirs in case["errors"].items():
        assert bool(ours[name]) == bool(theirs), (name, ours[name], theirs)
        if theirs:
            # The server's words: cel-go's first line, where the error is and what.
            assert theirs.split("\n")[0] in ours[name], (name, ours[name], theirs)


def test_sets_rules_are_evaluated(tmp_path: Path, run) -> None:
    """The sets extension is evaluated (kubetrain implements it over the runtime), so a rule
    using it refuses what it refuses; a two-variable comprehension is kept, not evaluated."""
    import yaml

    definition = crd("sets.contains(['a', 'b', 'c'], self.tags)")
    schema = definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]
    spec.pop("x-kubernetes-preserve-unknown-fields")
    spec["properties"] = {
        "tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 8}}
    }
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(definition))
    verdicts = []
    for tags in (["a", "c"], ["a", "z"]):
        widget = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "d"},
            "spec": {"tags": tags},
        }
        (tmp_path / "w.yaml").write_text(yaml.safe_dump(widget))
        done = run(
            "validate", "--crd", "crd.yaml", "w.yaml", "--kubernetes-version", "1.33", cwd=tmp_path
        )
        verdicts.append(done.exit_code)
    assert verdicts == [0, 1]
    done = run(
        "validate", "--crd", "crd.yaml", "w.yaml", "--kubernetes-version", "1.29", cwd=tmp_path
    )
    assert done.exit_code == 2
    assert "undeclared reference to 'sets'" in done.stderr


def test_a_list_of_crds_is_its_crds(tmp_path: Path, run) -> None:
    """``--crd`` given what ``kubectl get crd -o yaml`` prints: a ``kind: List`` of CRDs (here
    nested in another List), each CRD read from it."""
    import yaml

    definition = crd("self.size > 0")
    schema = definition["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"] = {
        "type": "object",
        "properties": {"size": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.size > 0"}],
    }
    inner = {"apiVersion": "v1", "kind": "List", "items": [definition]}
    (tmp_path / "crds.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [inner]})
    )
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "d"},
        "spec": {"size": 0},
    }
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(widget))
    done = run("validate", "--crd", "crds.yaml", "w.yaml", cwd=tmp_path)
    assert done.exit_code == 1, done.stdout + done.stderr
    assert "failed rule: self.size > 0" in done.stdout


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ("{a: 1}", "crds.yaml:3: items: a List's items must be a list of objects"),
        ("5", "crds.yaml:3: items: a List's items must be a list of objects"),
        ("null", "crds.yaml:3: items: a List's items must be a list of objects"),
        (
            "[" + ",".join(["{}"] * 200_001) + "]",
            "crds.yaml:1: a list object of 200,001 items: kubetrain reads at most 200,000 "
            "objects from one list (docs/limits.md)",
        ),
    ],
)
def test_a_list_given_as_crds_says_what_is_wrong_with_it(
    tmp_path: Path, run, items: str, message: str
) -> None:
    (tmp_path / "crds.yaml").write_text(f"apiVersion: v1\nkind: List\nitems: {items}\n")
    (tmp_path / "w.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\n")
    done = run("validate", "--crd", "crds.yaml", "w.yaml", cwd=tmp_path)
    assert done.exit_code == 2
    assert done.stderr.splitlines() == [message]
