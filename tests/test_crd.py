"""CRDs generated from kubetrain's models: structural schemas, names, printer columns, and the
rules the generator and its checker enforce."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import jsonschema_rs
import pytest
from pydantic import BaseModel, Field

from kubetrain.builders.crd import (
    CRDError,
    crd_info,
    custom_resource_definition,
    kubeconform_schema,
    model_schema,
    owned_crds,
    structural_problems,
)
from kubetrain.kube.quantity import QUANTITY_PATTERN
from kubetrain.models.base import K8sType, Strict
from kubetrain.models.trainingjob import TrainingJob
from kubetrain.validate import Located, Validator

DESCRIBED = frozenset({"io.k8s.api.core.v1.ResourceRequirements"})
INT_OR_STRING = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    return model_schema(model, (1, 33), DESCRIBED, model.__name__)


def walk(node: Any):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


# --- the TrainingJob CRD -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def crd() -> dict[str, Any]:
    return custom_resource_definition(TrainingJob, (1, 33))


def test_trainingjob_crd_names_scope_and_subresources(crd: dict[str, Any]) -> None:
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["metadata"]["name"] == "trainingjobs.paddlepaddle.org"
    spec = crd["spec"]
    assert spec["group"] == "paddlepaddle.org"
    assert spec["scope"] == "Namespaced"
    assert spec["names"] == {
        "kind": "TrainingJob",
        "listKind": "TrainingJobList",
        "plural": "trainingjobs",
        "singular": "trainingjob",
        "shortNames": ["tj"],
    }
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)
    assert version["subresources"] == {"status": {}}
    columns = {c["name"]: (c["type"], c["jsonPath"]) for c in version["additionalPrinterColumns"]}
    assert columns["State"] == ("string", ".status.state")
    assert columns["Trainers"] == ("integer", ".spec.trainer.min-instance")
    assert columns["Pservers"] == ("integer", ".spec.pserver.min-instance")


def test_printer_columns_point_at_fields_of_the_schema(crd: dict[str, Any]) -> None:
    (version,) = crd["spec"]["versions"]
    schema = version["schema"]["openAPIV3Schema"]
    for column in version["additionalPrinterColumns"]:
        if column["jsonPath"].startswith(".metadata."):
            continue
        node = schema
        for part in column["jsonPath"].lstrip(".").split("."):
            node = node["properties"][part]
        expected = {"integer": "integer", "string": "string"}[column["type"]]
        assert node["type"] == expected, column


def test_trainingjob_crd_is_structural_and_valid_for_kubernetes(crd: dict[str, Any]) -> None:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert structural_problems(schema) == []
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and "x-kubetrain" not in text
    assert '"title"' not in text and '"null"' not in text and '"const"' not in text
    for version in ((1, 28), (1, 33)):
        built = custom_resource_definition(TrainingJob, version)
        report = Validator(version).validate([Located(built, "crd.yaml")])
        assert report.ok, report.results[0].findings


def test_trainingjob_status_and_spec_schema(crd: dict[str, Any]) -> None:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    status = schema["properties"]["status"]["properties"]
    assert status["state"]["enum"] == ["Created", "Running", "Failed", "Succeed"]
    assert status["message"]["type"] == "string"
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["trainer", "pserver"]
    assert spec["properties"]["port"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 65535,
        "default": 7164,
        "description": spec["properties"]["port"]["description"],
    }
    # Volumes keep unknown fields; resources are described with quantities as int-or-string.
    assert spec["properties"]["volumes"]["items"]["x-kubernetes-preserve-unknown-fields"] is True
    limits = spec["properties"]["trainer"]["properties"]["resources"]["properties"]["limits"]
    assert limits["additionalProperties"] == {**INT_OR_STRING, "pattern": QUANTITY_PATTERN}
    mounts = spec["properties"]["VolumeMounts"]["items"]
    assert mounts["required"] == ["name", "mountPath"] and "readOnly" in mounts["properties"]


def test_owned_crds_are_registered_once() -> None:
    assert [info.name for info in owned_crds()].count("trainingjobs.paddlepaddle.org") == 1
    assert crd_info(TrainingJob).plural == "trainingjobs"


# --- the generic generator ---------------------------------------------------------------------


class Inner(Strict):
    """An inner model."""

    value: int = Field(default=3, description="A value.")


class Toy(Strict):
    optional_int: int | None = Field(default=None, description="Optional.")
    int_or_string: int | str = 1
    literal: Literal["a", "b"] = "a"
    single: Literal["only"] = "only"
    inner: Inner = Field(default_factory=Inner)
    inners: list[Inner] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    anything: Any = None
    volume: Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Volume", "A volume")] = Field(
        default_factory=dict
    )
    resources: Annotated[
        dict[str, Any], K8sType("io.k8s.api.core.v1.ResourceRequirements", "Resources")
    ] = Field(default_factory=dict)


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        pytest.param(
            "optional_int",
            {"type": "integer", "description": "Optional."},
            id="optional-without-null",
        ),
        pytest.param("int_or_string", {**INT_OR_STRING, "default": 1}, id="int-or-string"),
        pytest.param(
            "literal", {"type": "string", "enum": ["a", "b"], "default": "a"}, id="literal"
        ),
        pytest.param(
            "single", {"type": "string", "enum": ["only"], "default": "only"}, id="const-as-enum"
        ),
        pytest.param(
            "inner",
            {
                "type": "object",
                "description": "An inner model.",
                "properties": {
                    "value": {"type": "integer", "default": 3, "description": "A value."}
                },
            },
            id="model-inlined",
        ),
        pytest.param(
            "labels", {"type": "object", "additionalProperties": {"type": "string"}}, id="map"
        ),
        pytest.param("anything", {"x-kubernetes-preserve-unknown-fields": True}, id="any"),
        pytest.param(
            "volume",
            {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "description": "A volume (Kubernetes Volume)",
            },
            id="k8s-type-kept-open",
        ),
    ],
)
def test_generator_nodes(field: str, expected: dict[str, Any]) -> None:
    assert schema_of(Toy)["properties"][field] == expected


def test_generator_output_is_structural_and_self_contained() -> None:
    schema = schema_of(Toy)
    assert structural_problems({"type": "object", "properties": {"spec": schema}}) == []
    assert schema["properties"]["inners"]["items"]["properties"]["value"]["type"] == "integer"
    described = schema["properties"]["resources"]
    assert described["description"] == "Resources (Kubernetes ResourceRequirements)"
    assert set(described["properties"]) == {"claims", "limits", "requests"}
    for node in walk(schema):
        assert not {"$ref", "$defs", "title", "x-kubetrain-k8s-definition"} & node.keys()


class Recursive(BaseModel):
    child: Recursive | None = None


class MixedUnion(BaseModel):
    value: int | list[int] = 0


class WithSet(BaseModel):
    tags: set[str] = Field(default_factory=set)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        pytest.param(Recursive, r"Recursive is recursive", id="recursive"),
        pytest.param(
            MixedUnion, r"MixedUnion\.value: a union of \['array', 'integer'\]", id="union"
        ),
        pytest.param(WithSet, r"WithSet\.tags: uniqueItems", id="set"),
    ],
)
def test_generator_refuses_what_has_no_structural_schema(
    model: type[BaseModel], message: str
) -> None:
    with pytest.raises(CRDError, match=message):
        schema_of(model)


# --- the structural checker --------------------------------------------------------------------


def root(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        pytest.param({"properties": {}}, "(root): must be of type object", id="root-type"),
        pytest.param(root(a={"description": "x"}), "(root).a: has no type", id="untyped"),
        pytest.param(
            root(a={"$ref": "#/x"}),
            "(root).a: '$ref' is not allowed in a structural schema",
            id="ref",
        ),
        pytest.param(
            root(a={"type": "object", "const": 1}),
            "(root).a: 'const' is not allowed in a CRD schema",
            id="unknown-key",
        ),
        pytest.param(
            root(a={"type": "object", "properties": {}, "additionalProperties": False}),
            "(root).a: additionalProperties must not be false (unknown fields are pruned)",
            id="additional-false",
        ),
        pytest.param(
            root(
                a={"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}
            ),
            "(root).a: properties and additionalProperties are mutually exclusive",
            id="both",
        ),
        pytest.param(
            root(a={"type": "string", "x-kubernetes-int-or-string": True}),
            "(root).a: an int-or-string node must not have a type",
            id="int-or-string-typed",
        ),
        pytest.param(
            root(a={"type": "integer", "default": "x"}),
            '(root).a: default "x" does not match the schema (value: Invalid value: "string": must be of type integer)',
            id="bad-default",
        ),
        pytest.param(
            root(a={"type": "string", "anyOf": [{"type": "string", "description": "d"}]}),
            "(root).a.anyOf[0]: 'description' must not be set inside allOf/anyOf/oneOf/not",
            id="junctor-description",
        ),
        pytest.param(
            root(
                a={
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                }
            ),
            "(root).a: list map key 'name' must be required or have a default",
            id="list-map-key",
        ),
        pytest.param(
            root(metadata={"type": "object", "properties": {"labels": {"type": "object"}}}),
            "metadata: only restrictions of name and generateName are allowed",
            id="metadata",
        ),
        pytest.param(
            root(a={"type": "string", "enum": [1]}),
            "(root).a: enum values are not of type string",
            id="enum-type",
        ),
        pytest.param(
            root(a={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
            "(root).a: x-kubernetes-preserve-unknown-fields must be true or absent",
            id="preserve-false",
        ),
    ],
)
def test_structural_checker_finds(schema: dict[str, Any], problem: str) -> None:
    assert problem in structural_problems(schema)


# --- CRD schema -> kubeconform ------------------------------------------------------------------


def test_kubeconform_schema_closes_objects_unless_they_keep_unknown_fields() -> None:
    schema = root(
        closed={"type": "object", "properties": {"a": {"type": "string"}}},
        open={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        count={**INT_OR_STRING},
        maybe={"type": "string", "nullable": True},
        bounded={"type": "integer", "minimum": 0, "exclusiveMinimum": True},
    )
    strict = kubeconform_schema(schema)
    assert strict["additionalProperties"] is False
    assert strict["properties"]["closed"]["additionalProperties"] is False
    assert "additionalProperties" not in strict["properties"]["open"]
    assert strict["properties"]["maybe"]["type"] == ["string", "null"]
    assert strict["properties"]["bounded"] == {"type": "integer", "exclusiveMinimum": 0}
    validator = jsonschema_rs.validator_for(strict)
    good = {"closed": {"a": "x"}, "open": {"z": 1}, "count": "2", "maybe": None, "bounded": 1}
    assert validator.is_valid(good)
    for bad in ({"closed": {"b": 1}}, {"count": 1.5}, {"bounded": 0}, {"extra": 1}):
        assert not validator.is_valid(bad), bad
    assert "additionalProperties" not in kubeconform_schema(schema, strict=False)
