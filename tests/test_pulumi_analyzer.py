"""The schema other Pulumi languages see: the SDK's analyzer infers it from the components
without error, and every description is the docstring written next to the field."""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import typing
from typing import Any

import pytest
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.experimental.util import camel_case

import components

PACKAGE = "kubetrain"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = Analyzer(PACKAGE).analyze(list(components.ALL_COMPONENTS))
    generated = generate_schema(
        PACKAGE,
        "0.1.0",
        None,
        result["component_definitions"],
        result["type_definitions"],
        sorted(result["dependencies"], key=lambda d: d.name),
    )
    return json.loads(json.dumps(generated.to_json()))


def written_docstrings(cls: type) -> dict[str, str]:
    """Field -> the string written right after the field in ``cls``'s source (read here with
    ``ast``, independently of the analyzer)."""
    tree = ast.parse(inspect.getsource(cls))
    body = tree.body[0].body  # type: ignore[attr-defined]
    out: dict[str, str] = {}
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            out[node.target.id] = after.value.value
    return out


def nested_types() -> dict[str, type]:
    """Every TypedDict used inside the components' ``args``, by name: the schema's types (an
    ``args`` class itself is a type only when another component's args nest it)."""
    found: dict[str, type] = {}

    def visit(tp: Any) -> None:
        for arg in typing.get_args(tp):
            visit(arg)
        if typing.is_typeddict(tp) and tp.__name__ not in found:
            found[tp.__name__] = tp
            for hint in typing.get_type_hints(tp).values():
                visit(hint)

    for component in components.ALL_COMPONENTS:
        args = inspect.get_annotations(component.__init__)["args"]
        for hint in typing.get_type_hints(args).values():
            visit(hint)
    return found


def test_every_component_is_in_the_schema(schema: dict[str, Any]) -> None:
    assert sorted(schema["resources"]) == sorted(
        f"{PACKAGE}:index:{c.__name__}" for c in components.ALL_COMPONENTS
    )
    for component in components.ALL_COMPONENTS:
        resource = schema["resources"][f"{PACKAGE}:index:{component.__name__}"]
        assert resource["isComponent"] is True
        assert resource["description"] == component.__doc__


@pytest.mark.parametrize("component", components.ALL_COMPONENTS, ids=lambda c: c.__name__)
def test_component_descriptions_come_from_docstrings(
    schema: dict[str, Any], component: type
) -> None:
    resource = schema["resources"][f"{PACKAGE}:index:{component.__name__}"]
    args = inspect.get_annotations(component.__init__)["args"]
    inputs = written_docstrings(args)
    outputs = written_docstrings(component)
    assert inputs and outputs
    assert {k: v["description"] for k, v in resource["inputProperties"].items()} == {
        camel_case(k): v for k, v in inputs.items()
    }
    assert {k: v["description"] for k, v in resource["properties"].items()} == {
        camel_case(k): v for k, v in outputs.items()
    }
    assert sorted(resource["requiredInputs"]) == sorted(
        camel_case(k) for k in args.__required_keys__
    )


def test_type_descriptions_come_from_docstrings(schema: dict[str, Any]) -> None:
    types = nested_types()
    assert {
        "TFJobArgs",
        "TFJobSpecArgs",
        "TFReplicaSpecArgs",
        "SettingsArgs",
        "TrainingJobSpecArgs",
        "TrainerSpecArgs",
        "PserverSpecArgs",
        "MasterSpecArgs",
        "LearnerSpecArgs",
        "FrameworkArgs",
        "LearnerImageArgs",
        "LearnerResourcesArgs",
        "DataStoresArgs",
        "DataStoreArgs",
        "PyTorchJobSpecArgs",
        "PyTorchReplicaSpecArgs",
        "ElasticPolicyArgs",
        "RDZVConfArgs",
        "RunPolicyArgs",
        "SchedulingPolicyArgs",
    } <= set(types)
    assert sorted(schema["types"]) == sorted(f"{PACKAGE}:index:{n}" for n in types)
    for name, cls in types.items():
        entry = schema["types"][f"{PACKAGE}:index:{name}"]
        assert entry["description"] == cls.__doc__
        written = written_docstrings(cls)
        assert set(written) == set(typing.get_type_hints(cls)), f"{name}: undocumented fields"
        assert {k: v["description"] for k, v in entry["properties"].items()} == {
            camel_case(k): v for k, v in written.items()
        }


def test_descriptions_read_well(schema: dict[str, Any]) -> None:
    """Descriptions are copied verbatim: no source indentation, no empty ones."""

    def descriptions(value: Any) -> list[str]:
        if isinstance(value, dict):
            own = [value["description"]] if "description" in value else []
            return own + [d for v in value.values() for d in descriptions(v)]
        if isinstance(value, list):
            return [d for v in value for d in descriptions(v)]
        return []

    found = descriptions(schema)
    assert len(found) > 50
    for text in found:
        assert text.strip() and "\n" not in text, text


def test_schema_shapes_match_the_spec(schema: dict[str, Any]) -> None:
    """A TFJob's camelCase document keys are the schema's property names."""
    spec = schema["types"][f"{PACKAGE}:index:TFJobSpecArgs"]["properties"]
    assert set(spec) == {"tfReplicaSpecs", "runPolicy", "successPolicy", "enableDynamicWorker"}
    replica = schema["types"][f"{PACKAGE}:index:TFReplicaSpecArgs"]["properties"]
    assert replica["template"]["type"] == "object"
    assert replica["template"]["additionalProperties"]["$ref"] == "pulumi.json#/Any"
    assert set(replica) == {"replicas", "template", "restartPolicy"}


def test_schema_names_the_seed_keys_like_every_other_field(schema: dict[str, Any]) -> None:
    """A TrainingJob's irregular manifest keys (min-instance, VolumeMounts, NodeSelector,
    etcd-endpoint, ports_num) are camelCase in the schema like every other field."""
    types = schema["types"]
    spec = types[f"{PACKAGE}:index:TrainingJobSpecArgs"]
    assert set(spec["properties"]) == {
        "image",
        "port",
        "portsNum",
        "portsNumForSparse",
        "faultTolerant",
        "passes",
        "volumes",
        "volumeMounts",
        "imagePullSecrets",
        "hostNetwork",
        "nodeSelector",
        "trainer",
        "pserver",
        "master",
    }
    assert sorted(spec["required"]) == ["pserver", "trainer"]
    trainer = types[f"{PACKAGE}:index:TrainerSpecArgs"]
    assert set(trainer["properties"]) == {
        "entrypoint",
        "workspace",
        "minInstance",
        "maxInstance",
        "resources",
    }
    assert trainer["properties"]["minInstance"]["type"] == "integer"
    assert set(types[f"{PACKAGE}:index:MasterSpecArgs"]["properties"]) == {
        "etcdEndpoint",
        "resources",
    }


def test_schema_of_a_learner_has_no_unions(schema: dict[str, Any]) -> None:
    """A Learner's data store (mount_cos or host_mount) is one object type with the fields of
    both; a learner's CPUs are a number, its GPUs an integer."""
    types = schema["types"]
    store = types[f"{PACKAGE}:index:DataStoreArgs"]
    assert set(store["properties"]) == {
        "type",
        "bucket",
        "endpoint",
        "region",
        "credentials",
        "hostPath",
        "path",
    }
    assert sorted(store["required"]) == ["bucket", "type"]
    stores = types[f"{PACKAGE}:index:DataStoresArgs"]["properties"]
    assert {p["$ref"] for p in stores.values()} == {f"#/types/{PACKAGE}:index:DataStoreArgs"}
    resources = types[f"{PACKAGE}:index:LearnerResourcesArgs"]["properties"]
    assert resources["cpus"]["type"] == "number" and resources["gpus"]["type"] == "integer"
    learner = schema["resources"][f"{PACKAGE}:index:LearnerStatefulSet"]
    assert learner["properties"]["serviceHosts"]["items"]["type"] == "string"
