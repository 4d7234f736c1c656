"""Custom resources under a CRD's structural schema, as kube-apiserver checks them on create;
CRDs themselves; ``kubetrain validate --crd`` and CRDs found in the validated tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.builders.crd import custom_resource_definition, owned_crds
from kubetrain.kube.apiextensions import compile_schema, validate_crd, validate_custom_resource

from conftest import UPSTREAM_CRDS, needs_upstream_crds


def crd(schema: dict[str, Any], scope: str = "Namespaced") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "listKind": "WidgetList"},
            "scope": scope,
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def root(**spec: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": spec}}}


def widget(spec: Any, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", **meta},
        "spec": spec,
    }


def problems(schema: dict[str, Any], obj: dict[str, Any], **kw: Any) -> list[str]:
    issues = validate_custom_resource(compile_schema(schema), obj, **kw)
    return [".".join(map(str, i.path)) + ": " + i.message for i in issues]


INT_OR_STRING = {
    "x-kubernetes-int-or-string": True,
    "anyOf": [{"type": "integer"}, {"type": "string"}],
}


@pytest.mark.parametrize(
    ("schema", "spec", "expected"),
    [
        pytest.param(root(a={"type": "string"}), {"a": "x"}, [], id="valid"),
        pytest.param(
            root(a={"type": "string"}),
            {"b": 1},
            [
                "spec.b: unknown field: the CRD's schema does not declare it (strict field validation)"
            ],
            id="unknown-field",
        ),
        pytest.param(
            root(a={"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
            {"a": {"anything": [1, {"b": 2}]}},
            [],
            id="preserve-unknown-fields",
        ),
        pytest.param(root(a=INT_OR_STRING), {"a": 3}, [], id="int-or-string-int"),
        pytest.param(root(a=INT_OR_STRING), {"a": "3%"}, [], id="int-or-string-string"),
        pytest.param(
            root(a=INT_OR_STRING),
            {"a": 0.5},
            ['spec.a: Invalid value: "number": must be of type integer,string'],
            id="int-or-string-float",
        ),
        pytest.param(
            root(a={"type": "string", "enum": ["A", "B"]}),
            {"a": "C"},
            ['spec.a: Unsupported value: "C": supported values: "A", "B"'],
            id="enum",
        ),
        pytest.param(
            root(a={"type": "string", "format": "ipv4"}),
            {"a": "300.1.1.1"},
            ['spec.a: Invalid value: "300.1.1.1": must be of type ipv4'],
            id="format",
        ),
        pytest.param(
            root(a={"type": "string", "format": "no-such-format"}),
            {"a": "x"},
            [],
            id="unknown-format",
        ),
        pytest.param(
            root(a={"type": "integer", "format": "int32"}),
            {"a": 2147483648},
            ["spec.a: Invalid value: 2147483648: must be of type integer with format int32"],
            id="int32-over",
        ),
        pytest.param(
            root(a={"type": "integer", "format": "int32"}),
            {"a": -(2**31)},
            [],
            id="int32-lowest-fits",
        ),
        pytest.param(
            root(a={"type": "integer", "format": "int64"}),
            {"a": 2**63},
            [f"spec.a: Invalid value: {2**63}: must be of type integer with format int64"],
            id="int64-over",
        ),
        pytest.param(
            root(a={"type": "string"}),
            {"a": None},
            ['spec.a: Invalid value: "null": must be of type string'],
            id="null",
        ),
        pytest.param(root(a={"type": "string", "nullable": True}), {"a": None}, [], id="nullable"),
        pytest.param(
            root(a={"type": "integer", "default": 3, "minimum": 5}),
            {},
            ["spec.a: Invalid value: 3: should be greater than or equal to 5"],
            id="default-applied-before-validation",
        ),
        pytest.param(
            root(a={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
            {"a": ["x", "x"]},
            ['spec.a.1: Duplicate value: "x"'],
            id="list-set",
        ),
        pytest.param(
            root(
                a={
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}, "v": {"type": "integer"}},
                    },
                }
            ),
            {"a": [{"name": "x", "v": 1}, {"name": "x", "v": 2}]},
            ['spec.a.1: Duplicate value: {"name": "x"}'],
            id="list-map",
        ),
        pytest.param(
            root(
                a={
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                }
            ),
            {"a": {"metadata": {"labels": {"a b": "x"}}}},
            [
                "spec.a.metadata.labels.a b: Invalid value: \"a b\": label key 'a b': 'a b' is not a valid label key name: letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
                "spec.a.apiVersion: Required value: must not be empty",
                "spec.a.kind: Required value: must not be empty",
            ],
            id="embedded-resource",
        ),
    ],
)
def test_custom_resource_semantics(schema: dict[str, Any], spec: Any, expected: list[str]) -> None:
    assert problems(schema, widget(spec)) == expected


def test_cel_rules_self_message_expression_field_path_and_old_self() -> None:
    schema = root(
        a={"type": "integer"},
        b={"type": "integer"},
        c={"type": "string"},
    )
    schema["properties"]["spec"]["x-kubernetes-validations"] = [
        {
            "rule": "self.a <= self.b",
            "messageExpression": "'a is ' + string(self.a)",
            "fieldPath": ".a",
        },
        {"rule": "self.c.startsWith('x')", "reason": "FieldValueForbidden"},
        {"rule": "self == oldSelf", "message": "immutable"},  # transition rule: not on create
        {"rule": "!has(oldSelf.a) || oldSelf.a == self.a", "optionalOldSelf": True},
    ]
    assert problems(schema, widget({"a": 2, "b": 3, "c": "xy"})) == []
    assert problems(schema, widget({"a": 4, "b": 3, "c": "y"})) == [
        'spec.a: Invalid value: "object": a is 4',
        "spec: Forbidden: failed rule: self.c.startsWith('x')",
    ]


def test_cel_rules_do_not_run_after_a_blocking_error() -> None:
    schema = root(a={"type": "integer"})
    schema["properties"]["spec"]["required"] = ["a"]
    schema["properties"]["spec"]["x-kubernetes-validations"] = [{"rule": "self.a > 1"}]
    assert problems(schema, widget({})) == ["spec.a: Required value"]


def test_metadata_of_a_custom_resource() -> None:
    schema = {
        "type": "object",
        "properties": {
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 5}},
            },
            "spec": {"type": "object"},
        },
    }
    obj = widget({}, namespace="ns", annotations={"a": 1})
    obj["metadata"]["name"] = "toolong"
    found = problems(schema, obj, namespaced=False)
    assert "metadata.name: Too long: may not be more than 5 bytes" in found
    assert "metadata.namespace: Forbidden: not allowed on this type" in found
    assert any(p.startswith("metadata.annotations.a:") for p in found)


@pytest.mark.parametrize("info", owned_crds(), ids=lambda i: i.name)
def test_kubetrains_own_crds_are_accepted(info: Any) -> None:
    assert validate_crd(custom_resource_definition(info.model, (1, 33))) == []


@needs_upstream_crds
def test_the_real_crds_are_accepted() -> None:
    files = sorted(UPSTREAM_CRDS.rglob("*.yaml"))
    assert len(files) >= 10
    for file in files:
        for doc in yaml.load_all(file.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if doc:
                assert validate_crd(doc) == [], file


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c["metadata"].update(name="wrong.example.com"), "metadata.name"),
        (lambda c: c["spec"].update(group="example"), "spec.group"),
        (lambda c: c["spec"]["names"].update(listKind="Widget"), "spec.names.listKind"),
        (lambda c: c["spec"].update(scope="Global"), "spec.scope"),
        (lambda c: c["spec"]["versions"][0].update(storage=False), "spec.versions"),
        (
            lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"].update(
                x={"type": "object", "additionalProperties": False}
            ),
            "spec.versions.0.schema.openAPIV3Schema.x",
        ),
        (
            lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"].update(
                x={"$ref": "#/definitions/a"}
            ),
            "spec.versions.0.schema.openAPIV3Schema.x",
        ),
        (
            lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(
                {"x-kubernetes-validations": [{"rule": "self.a +"}]}
            ),
            "spec.versions.0.schema.openAPIV3Schema",
        ),
    ],
    ids=["name", "group", "list-kind", "scope", "storage", "additional-false", "ref", "cel"],
)
def test_crds_the_api_server_refuses(change: Any, expected: str) -> None:
    definition = crd(root(a={"type": "string"}))
    assert validate_crd(definition) == []
    change(definition)
    paths = [".".join(map(str, i.path)) for i in validate_crd(definition)]
    assert any(p.startswith(expected) for p in paths), paths


def test_validate_with_crd_option_and_crds_in_the_tree(tmp_path: Path, run) -> None:
    definition = crd(root(size={"type": "integer", "maximum": 3}))
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "widget-crd.yaml").write_text(yaml.safe_dump(definition))
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(widget({"size": 4})))
    missing = run("validate", "w.yaml", cwd=tmp_path)
    assert missing.exit_code == 1 and "no schema for example.com/v1 Widget" in missing.stdout
    given = run("validate", "w.yaml", "--crd", "crds", cwd=tmp_path)
    assert given.exit_code == 1
    assert (
        "w.yaml:6: spec.size: Invalid value: 4: should be less than or equal to 3" in given.stdout
    )
    # The CRD in the same tree: its custom resources are checked against it.
    (tmp_path / "crds" / "w.yaml").write_text(yaml.safe_dump(widget({"size": 2})))
    assert run("validate", "crds", cwd=tmp_path).exit_code == 0
    # A --crd that is no CRD, or one the server refuses, is bad input.
    bad = json.loads(json.dumps(definition))
    bad["spec"]["scope"] = "Global"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    refused = run("validate", "w.yaml", "--crd", "bad.yaml", cwd=tmp_path)
    assert refused.exit_code == 2 and "spec.scope" in refused.stderr
    assert run("validate", "w.yaml", "--crd", "w.yaml", cwd=tmp_path).exit_code == 2


def test_a_given_crd_wins_over_the_built_in_schema(tmp_path: Path, run) -> None:
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"minMember": 2, "extra": True},
    }
    (tmp_path / "pg.yaml").write_text(yaml.safe_dump(group))
    builtin = run("validate", "pg.yaml", "--skip-check", "gang-scheduling", cwd=tmp_path)
    assert builtin.exit_code == 1 and "spec.extra: unknown field" in builtin.stdout
    mine = crd(root(minMember={"type": "integer"}, extra={"type": "boolean"}))
    mine["metadata"]["name"] = "podgroups.scheduling.volcano.sh"
    mine["spec"].update(group="scheduling.volcano.sh")
    mine["spec"]["names"] = {"kind": "PodGroup", "plural": "podgroups"}
    mine["spec"]["versions"][0]["name"] = "v1beta1"
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(mine))
    given = run(
        "validate", "pg.yaml", "--crd", "crd.yaml", "--skip-check", "gang-scheduling", cwd=tmp_path
    )
    assert given.exit_code == 0, given.stdout
