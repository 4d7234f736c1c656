"""Loading outside stack files: a stack from Pulumi config (the program's entry point) and one
job from a component's arguments, with the validation of load_stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.builders import build_stack
from kubetrain.models import InputError, discover_stacks, load_job, load_stack, load_stack_config
from kubetrain.models.load import config_keys, document_keys
from kubetrain.models.stack import StackSettings
from kubetrain.models.tfjob import TFJob

from conftest import REPO

STACK_FILES = discover_stacks(REPO / "stacks")
TEMPLATE = {"spec": {"containers": [{"name": "tensorflow", "image": "img:1"}]}}
JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "mnist"},
    "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": TEMPLATE}}},
}


def as_pulumi_config(path: Path) -> dict[str, str]:
    """The kubetrain keys of a stack file as pulumi.Config("kubetrain").get returns them."""
    config = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
    return {
        key.removeprefix("kubetrain:"): value if isinstance(value, str) else json.dumps(value)
        for key, value in config.items()
        if key.startswith("kubetrain:")
    }


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_config_loads_as_the_stack_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO / "stacks")  # where Pulumi runs the program; jobFiles must not care
    from_file = load_stack(path)
    env = from_file.name
    from_config = load_stack_config(as_pulumi_config(path), name=env, project_root=REPO, file=path)
    assert from_config.settings == from_file.settings
    assert [j.document for j in from_config.jobs] == [j.document for j in from_file.jobs]
    assert [b.obj for b in build_stack(from_config)] == [b.obj for b in build_stack(from_file)]


def write_project(tmp_path: Path, config: dict[str, Any]) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    path = tmp_path / "stacks" / "Pulumi.dev.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def test_values_as_written_get_their_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {**JOB, "spec": {"tfReplicaSpecs": {"Worker": {"replicas": -1, "template": TEMPLATE}}}}
    path = write_project(tmp_path, {"kubetrain:namespace": "ml", "kubetrain:jobs": [bad]})
    monkeypatch.chdir(tmp_path)
    raw = {"namespace": "ml", "jobs": json.dumps([bad])}
    with pytest.raises(InputError) as raised:
        load_stack_config(raw, name="dev", project_root=tmp_path, file=path)
    line = next(
        i for i, text in enumerate(path.read_text().splitlines(), 1) if "replicas: -1" in text
    )
    assert str(raised.value) == (
        f"stacks/Pulumi.dev.yaml:{line}: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.replicas: "
        "must be >= 0, got -1"
    )
    # The same value set elsewhere (an ESC environment, `pulumi config set` not saved): no line.
    raw["namespace"] = "other"
    elsewhere = [{**bad, "metadata": {"name": "other"}}]
    raw["jobs"] = json.dumps(elsewhere)
    with pytest.raises(InputError) as raised:
        load_stack_config(raw, name="dev", project_root=tmp_path, file=path)
    assert str(raised.value) == (
        "stacks/Pulumi.dev.yaml: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.replicas: "
        "must be >= 0, got -1"
    )


def test_a_stack_without_config_has_the_defaults(tmp_path: Path) -> None:
    """A fresh stack file (`pulumi stack init` writes no config) loads instead of crashing."""
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("secretsprovider: passphrase\n")
    stack = load_stack(path)
    assert stack.jobs == () and stack.settings == StackSettings()


def test_credentials_never_reach_the_settings(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    raw = {
        "credentials": json.dumps({"minio": {"secretKey": "decrypted"}}),
        "jobs": json.dumps([JOB]),
    }
    stack = load_stack_config(raw, name="dev", project_root=tmp_path)
    assert stack.settings.credentials == {}
    assert "decrypted" not in repr(stack)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {"jobs": "not json"},
            "Pulumi.dev.yaml: config.kubetrain:jobs: Input should be a valid list, got 'not json'",
            id="not-json",
        ),
        pytest.param(
            {"gangScheduler": "slurm"},
            "Pulumi.dev.yaml: config.kubetrain:gangScheduler: Input should be 'none', 'volcano' or "
            "'scheduler-plugins', got 'slurm'",
            id="bad-literal",
        ),
        pytest.param(
            {"kubernetesVersion": "latest"},
            "Pulumi.dev.yaml: config.kubetrain:kubernetesVersion: 'latest' is not a Kubernetes "
            'version; write it as MAJOR.MINOR, e.g. "1.33"',
            id="bad-version",
        ),
        pytest.param(
            {"jobFiles": json.dumps(["jobs/*.yaml"])},
            "Pulumi.dev.yaml: config.kubetrain:jobFiles[0]: 'jobs/*.yaml' matches no file "
            "(patterns are relative to {root})",
            id="job-files-relative-to-root",
        ),
    ],
)
def test_config_problems(
    raw: dict[str, str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as raised:
        load_stack_config(raw, name="dev", project_root=tmp_path)
    assert str(raised.value) == message.format(root=".")


def test_config_keys_say_which_values_are_text() -> None:
    keys = config_keys()
    assert set(keys) == {f.alias or n for n, f in StackSettings.model_fields.items()}
    assert (
        keys["namespace"] and keys["kubernetesVersion"] and keys["mode"] and keys["clusterDomain"]
    )
    assert not keys["jobs"] and not keys["jobFiles"] and not keys["secretStore"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            {
                "tf_replica_specs": {
                    "worker": {"restart_policy": "Never", "template": {"restart_policy": 1}}
                }
            },
            {
                "tfReplicaSpecs": {
                    "worker": {"restartPolicy": "Never", "template": {"restart_policy": 1}}
                }
            },
            id="nested-models-not-embedded-types",
        ),
        pytest.param(
            {
                "run_policy": {"scheduling_policy": {"min_available": 2}},
                "enableDynamicWorker": True,
            },
            {"runPolicy": {"schedulingPolicy": {"minAvailable": 2}}, "enableDynamicWorker": True},
            id="optional-models-and-aliases",
        ),
        pytest.param(
            {"tf_replica_specs": {}, "tfReplicaSpecs": {}, "bogus_key": 1},
            {"tf_replica_specs": {}, "tfReplicaSpecs": {}, "bogus_key": 1},
            id="both-spellings-and-unknown-kept",
        ),
    ],
)
def test_document_keys(data: dict[str, Any], expected: dict[str, Any]) -> None:
    from kubetrain.models.tfjob import TFJobSpec

    assert document_keys(TFJobSpec, data) == expected


@pytest.mark.parametrize(
    ("store", "expected"),
    [
        pytest.param(
            {"type": "host_mount", "host_path": "/data", "bucket": "abc"},
            {"type": "host_mount", "hostPath": "/data", "bucket": "abc"},
            id="second-member",
        ),
        pytest.param(
            {"type": "mount_cos", "bucket": "abc", "credentials": "cos"},
            {"type": "mount_cos", "bucket": "abc", "credentials": "cos"},
            id="first-member",
        ),
    ],
)
def test_document_keys_follow_every_model_of_a_union(
    store: dict[str, Any], expected: dict[str, Any]
) -> None:
    """A Learner's data store is a mount_cos or a host_mount store: the keys of both are renamed."""
    from kubetrain.models.learner import LearnerSpec

    data = {"data_stores": {"training_data": store, "results": store}, "training_id": "t"}
    assert document_keys(LearnerSpec, data) == {
        "dataStores": {"trainingData": expected, "results": expected},
        "trainingId": "t",
    }


def test_load_job_accepts_both_spellings() -> None:
    snake = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {"tf_replica_specs": {"Worker": {"replicas": 2, "template": TEMPLATE}}},
    }
    a, settings_a = load_job(snake, settings={"gpu_resource": "amd.com/gpu"}, file="x")
    b, settings_b = load_job(
        {**JOB, "metadata": {"name": "mnist", "namespace": "ml"}},
        settings={"gpuResource": "amd.com/gpu"},
        file="x",
    )
    assert a.document == b.document and isinstance(a.document, TFJob)
    assert settings_a == settings_b and settings_a.gpu_resource == "amd.com/gpu"


def test_load_job_defaults_namespace_and_mode() -> None:
    loaded, _ = load_job(JOB, settings={"namespace": "team", "mode": "operator"}, file="x")
    assert loaded.document.namespace == "team" and loaded.mode == "operator"
    annotated = {**JOB, "metadata": {"name": "m", "annotations": {"kubetrain.io/mode": "native"}}}
    loaded, _ = load_job(annotated, settings={"mode": "operator"}, file="x")
    assert loaded.mode == "native"


@pytest.mark.parametrize("key", ["jobs", "jobFiles", "job_files", "credentials"])
def test_load_job_refuses_stack_only_settings(key: str) -> None:
    with pytest.raises(InputError) as raised:
        load_job(JOB, settings={key: []}, file="TFJob x")
    assert str(raised.value) == f"TFJob x: settings.{key}: not a job setting: give it to the stack"
