"""``kubetrain schema``: kubeconform-layout schemas of kubetrain's CRDs (used by
``kubetrain validate --schema-location``) and the editor schemas of the stack file and job
documents, and the committed copies under schemas/."""

from __future__ import annotations

import glob
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml

from kubetrain.app import schema_files
from kubetrain.models.source import load_all
from kubetrain.validate import Located, Validator

from conftest import REPO

LAYOUT = "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
JOB = {
    "apiVersion": "paddlepaddle.org/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "tj"},
    "spec": {
        "trainer": {
            "entrypoint": "python t.py",
            "workspace": "/w",
            "min-instance": 1,
            "max-instance": 1,
        },
        "pserver": {"min-instance": 1, "max-instance": 1},
    },
}


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return schema_files((1, 33))


def test_writes_the_editor_schemas_and_one_schema_per_crd(project: Path, run) -> None:
    result = run("schema", cwd=project)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "schemas/kubetrain-stack.schema.json: written",
        "schemas/kubetrain-job.schema.json: written",
        "schemas/kubetrain.io/learner_v1alpha1.json: written",
        "schemas/paddlepaddle.org/trainingjob_v1.json: written",
    ]
    again = run("schema", cwd=project)
    assert again.stdout.splitlines()[0] == "schemas/kubetrain-stack.schema.json: unchanged"
    other = run("schema", "--out", "elsewhere", "--kubernetes-version", "1.30", cwd=project)
    assert (
        other.exit_code == 0
        and (project / "elsewhere/paddlepaddle.org/trainingjob_v1.json").is_file()
    )
    assert (
        "Kubernetes 1.30 types" in (project / "elsewhere/kubetrain-stack.schema.json").read_text()
    )


def test_committed_schemas_are_up_to_date(files: dict[str, str]) -> None:
    committed = {
        p.relative_to(REPO / "schemas").as_posix(): p.read_text()
        for p in sorted((REPO / "schemas").rglob("*"))
        if p.is_file()
    }
    assert sorted(committed) == sorted(files), "run `kubetrain schema` and commit schemas/"
    for path, text in files.items():
        assert committed[path] == text, f"schemas/{path} is stale: run `kubetrain schema`"


def test_validate_uses_the_written_crd_schema(project: Path, run, tmp_path: Path) -> None:
    assert run("schema", "--out", str(tmp_path / "out"), cwd=project).exit_code == 0
    location = str(tmp_path / "out") + "/" + LAYOUT
    source = (
        Validator((1, 33), [location])
        .catalog((1, 33))
        .lookup("paddlepaddle.org/v1", "TrainingJob")[1]
    )
    assert source == str(tmp_path / "out/paddlepaddle.org/trainingjob_v1.json")
    # An operator-mode render validates against it...
    stack = {
        "config": {
            "kubetrain:mode": "operator",
            "kubetrain:namespace": "ml",
            "kubetrain:jobs": [JOB],
        }
    }
    (project / "stacks/Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    assert run("render", cwd=project).exit_code == 0
    ok = run("validate", "rendered/dev", "--schema-location", location, cwd=project)
    assert ok.exit_code == 0, ok.stdout
    # The CR, the CRD and the namespace; both kustomizations (top and _crds/) are skipped.
    assert "5 objects: 3 valid, 0 invalid, 0 errors, 2 skipped" in ok.stdout
    # ... and the strict schema rejects an unknown field.
    cr_file = project / "rendered/dev/ml/trainingjob-tj.yaml"
    (cr,) = load_all(cr_file.read_text(), str(cr_file))
    cr["spec"]["trainer"]["passes"] = 3
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cr))
    bad = run("validate", str(tmp_path / "bad.yaml"), "--schema-location", location, cwd=project)
    assert bad.exit_code == 1
    assert "spec.trainer.passes: unknown field 'passes'" in bad.stdout


def test_crd_schema_is_strict_where_the_crd_is_closed(files: dict[str, str]) -> None:
    schema = json.loads(files["paddlepaddle.org/trainingjob_v1.json"])
    assert schema["additionalProperties"] is False
    spec = schema["properties"]["spec"]
    assert spec["additionalProperties"] is False
    assert "additionalProperties" not in spec["properties"]["volumes"]["items"]  # open
    validator = jsonschema_rs.validator_for(schema)
    cr = {**JOB, "spec": {**JOB["spec"], "volumes": [{"name": "v", "anything": {}}]}}
    assert validator.is_valid(cr)
    assert not validator.is_valid({**JOB, "spec": {**JOB["spec"], "passes": "many"}})


# --- editor schemas ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stack_validator(files: dict[str, str]) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(json.loads(files["kubetrain-stack.schema.json"]))


@pytest.fixture(scope="module")
def job_validator(files: dict[str, str]) -> jsonschema_rs.Validator:
    return jsonschema_rs.validator_for(json.loads(files["kubetrain-job.schema.json"]))


STACKS = sorted([*REPO.glob("stacks/Pulumi.*.yaml"), *REPO.glob("tests/cases/*/Pulumi.*.yaml")])
# Every file a stack lists in kubetrain:jobFiles (files of kubetrain:manifestFiles hold plain
# Kubernetes objects, not job documents).
JOB_FILES = sorted(
    {
        REPO / match
        for stack in STACKS
        for pattern in yaml.safe_load(stack.read_text())["config"].get("kubetrain:jobFiles", [])
        for match in glob.glob(pattern, root_dir=REPO)
    }
)


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.relative_to(REPO).as_posix())
def test_editor_schema_accepts_every_stack(path: Path, stack_validator) -> None:
    data = yaml.safe_load(path.read_text())
    assert [e.message for e in stack_validator.iter_errors(data)] == []


@pytest.mark.parametrize("path", JOB_FILES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_editor_schema_accepts_every_job_file(path: Path, job_validator) -> None:
    for doc in yaml.safe_load_all(path.read_text()):
        assert [e.message for e in job_validator.iter_errors(doc)] == []


def config(**keys: Any) -> dict[str, Any]:
    return {"config": keys}


@pytest.mark.parametrize(
    ("data", "valid"),
    [
        pytest.param(config(**{"aws:region": "eu-west-1"}), True, id="other-namespace"),
        pytest.param(config(**{"kubetrain:namespce": "x"}), False, id="misspelled-kubetrain-key"),
        pytest.param(config(**{"kubetrain:kubernetesVersion": 1.33}), False, id="unquoted-version"),
        pytest.param(config(**{"kubetrain:jobs": [JOB]}), True, id="trainingjob"),
        pytest.param(
            config(
                **{
                    "kubetrain:jobs": [
                        {**JOB, "spec": {**JOB["spec"], "imagePullSecrets": {"name": "k"}}}
                    ]
                }
            ),
            True,
            id="pull-secret-mapping",
        ),
        pytest.param(
            config(
                **{
                    "kubetrain:jobs": [
                        {
                            **JOB,
                            "spec": {
                                **JOB["spec"],
                                "trainer": {**JOB["spec"]["trainer"], "passes": 2},
                            },
                        }
                    ]
                }
            ),
            False,
            id="passes-under-trainer",
        ),
        pytest.param(
            config(
                **{
                    "kubetrain:jobs": [
                        {
                            **JOB,
                            "spec": {
                                **JOB["spec"],
                                "volumes": [{"name": "v", "emptyDir": {}, "x": 1}],
                            },
                        }
                    ]
                }
            ),
            False,
            id="volume-checked-against-kubernetes",
        ),
        pytest.param(
            config(**{"kubetrain:jobs": [{**JOB, "kind": "Learnr"}]}), False, id="unknown-kind"
        ),
    ],
)
def test_editor_schema_decisions(data: dict[str, Any], valid: bool, stack_validator) -> None:
    assert stack_validator.is_valid(data) is valid


def test_editor_schema_is_offline_and_has_no_pydantic_titles(files: dict[str, str]) -> None:
    for name in ("kubetrain-stack.schema.json", "kubetrain-job.schema.json"):
        schema = json.loads(files[name])
        refs = {m for m in _refs(schema)}
        assert all(ref.startswith("#/$defs/") for ref in refs), name
        assert {ref.removeprefix("#/$defs/") for ref in refs} <= set(schema["$defs"])
        assert "x-kubetrain-k8s-definition" not in files[name]
    assert '"title": "Hostnetwork"' not in files["kubetrain-stack.schema.json"]


def _refs(node: Any):
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_a_kubetrain_validate_of_rendered_objects_still_needs_no_location(tmp_path: Path) -> None:
    # Without --schema-location, the CR is checked against kubetrain's own model schema.
    report = Validator((1, 33)).validate(
        [Located({**JOB, "metadata": {"name": "tj", "namespace": "x"}}, "a.yaml")]
    )
    assert report.ok
