"""Bounds, strict types, names and paths, and messages: what a hostile or mistaken input gets
instead of a crash, a hang, a silent coercion or a read outside the project."""

from __future__ import annotations

import json
import re
import socket
import threading
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
import yaml

from kubetrain.models import InputError, load_job

from conftest import REPO

WORKER: dict[str, Any] = {
    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf"}]}}
}


def tfjob(replicas: Any, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "big"},
        "spec": {"tfReplicaSpecs": {"Worker": {**WORKER, "replicas": replicas}}, **spec},
    }


def render_stack(project: Path, run, config: dict[str, Any] | str):
    text = config if isinstance(config, str) else yaml.safe_dump({"config": config})
    (project / "stacks" / "Pulumi.dev.yaml").write_text(text)
    return run("render", cwd=project)


# --- bounds ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "expected"),
    [
        # An integer to go-yaml (a uint64), beyond what Kubernetes reads.
        (2**63, "Worker.replicas: an integer beyond int64: Kubernetes cannot read it"),
        # A float to go-yaml, as to kubectl: past uint64 its ParseUint fails.
        (2**64, "Worker.replicas: Input should be a valid integer, got 1.8446744073709552e+19"),
        (2**31, "Worker.replicas: must be <= 10000, got 2147483648"),
        (10001, "Worker.replicas: must be <= 10000, got 10001"),
        # Within the replica bound, but TF_CONFIG lists every pod in every pod: 5000 pods are
        # over a GiB of YAML, past the stack's budget.
        (5000, "Worker.replicas: the stack would render 10,002 objects, about"),
    ],
)
def test_replica_counts_are_bounded_at_load_time(
    project: Path, run, replicas: int, expected: str
) -> None:
    result = render_stack(project, run, {"kubetrain:jobs": [tfjob(replicas)]})
    assert result.exit_code == 2, result.stderr
    assert expected in result.stderr
    assert not (project / "rendered").exists()


def test_many_small_jobs_share_the_budget(project: Path, run) -> None:
    jobs = [dict(tfjob(4000), metadata={"name": f"j{i}"}) for i in range(2)]
    result = render_stack(project, run, {"kubetrain:jobs": jobs})
    assert result.exit_code == 2
    assert "the largest part is this TFJob" in result.stderr
    assert (
        "renders at most 200,000 objects and 512.0 MiB per stack (docs/limits.md)" in result.stderr
    )


@pytest.mark.parametrize(
    ("job", "expected"),
    [
        (
            tfjob(2, runPolicy={"backoffLimit": 2**31}),
            "spec.runPolicy.backoffLimit: must be <= 2147483647",
        ),
        (
            tfjob(2, runPolicy={"schedulingPolicy": {"minAvailable": 2**40}}),
            "spec.runPolicy.schedulingPolicy.minAvailable: must be <= 2147483647",
        ),
        (
            {
                "apiVersion": "kubetrain.io/v1alpha1",
                "kind": "Learner",
                "metadata": {"name": "l"},
                "spec": {
                    "trainingId": "t",
                    "learners": 20000,
                    "framework": {"name": "tensorflow", "version": "1.15", "command": "x"},
                },
            },
            "spec.learners: must be <= 10000",
        ),
    ],
    ids=["int32", "int32-nested", "learners"],
)
def test_kubernetes_int32_fields_are_int32(project: Path, run, job: dict, expected: str) -> None:
    result = render_stack(project, run, {"kubetrain:jobs": [job]})
    assert result.exit_code == 2
    assert expected in result.stderr


@pytest.mark.parametrize(
    ("cpus", "expected"),
    [(".inf", "infinity (.inf) is not a number"), (".nan", "NaN (.nan) is not a number")],
)
def test_non_finite_numbers_never_reach_a_builder(
    project: Path, run, cpus: str, expected: str
) -> None:
    text = (
        "config:\n  kubetrain:learnerRegistry: r.example.com\n  kubetrain:jobs:\n"
        "  - apiVersion: kubetrain.io/v1alpha1\n    kind: Learner\n    metadata: {name: l}\n"
        "    spec:\n      trainingId: t\n      framework: {name: tensorflow, version: '1.15', command: x}\n"
        f"      resources: {{cpus: {cpus}}}\n"
    )
    result = render_stack(project, run, text)
    assert result.exit_code == 2
    assert (
        f"stacks/Pulumi.dev.yaml:10: config.kubetrain:jobs[0].spec.resources.cpus: {expected}"
        in result.stderr
    )


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 2**70])
def test_pulumi_arguments_obey_the_same_value_rules(value: float) -> None:
    job = tfjob(2)
    job["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = value
    with pytest.raises(InputError, match=r"component: spec\.tfReplicaSpecs\.Worker\.replicas: "):
        load_job(job, file="component")


# --- no lax coercion -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "got"),
    [
        ("yes", "true"),
        ("on", "true"),
        ('"3_0"', "'3_0'"),
        ('" 3 "', "' 3 '"),
        ("1.0", "1.0"),
        ('"3"', "'3'"),
    ],
)
def test_a_wrong_type_is_reported_never_coerced(
    project: Path, run, replicas: str, got: str
) -> None:
    text = (
        "config:\n  kubetrain:jobs:\n  - apiVersion: kubeflow.org/v1\n    kind: TFJob\n"
        "    metadata: {name: m}\n    spec:\n      tfReplicaSpecs:\n        Worker:\n"
        f"          replicas: {replicas}\n"
        "          template: {spec: {containers: [{name: tensorflow, image: tf}]}}\n"
    )
    result = render_stack(project, run, text)
    assert result.exit_code == 2
    assert result.stderr == (
        "stacks/Pulumi.dev.yaml:9: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.replicas: "
        f"Input should be a valid integer, got {got}\n"
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("fault_tolerant", '"true"'), ("port", '"7164"'), ("passes", "2.0")],
)
def test_strictness_holds_for_every_kind(project: Path, run, field: str, value: str) -> None:
    text = (
        "config:\n  kubetrain:jobs:\n  - apiVersion: paddlepaddle.org/v1\n    kind: TrainingJob\n"
        "    metadata: {name: p}\n    spec:\n"
        "      trainer: {entrypoint: python t.py, workspace: /w, min-instance: 1, max-instance: 1}\n"
        "      pserver: {min-instance: 1, max-instance: 1}\n"
        f"      {field}: {value}\n"
    )
    result = render_stack(project, run, text)
    assert result.exit_code == 2
    assert (
        f"stacks/Pulumi.dev.yaml:9: config.kubetrain:jobs[0].spec.{field}: Input should be"
        in result.stderr
    )


# --- names and paths -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [".", "..", ".hidden", "prød", "a b"])
def test_stack_names_outside_the_allowed_set_are_reported(project: Path, run, name: str) -> None:
    (project / "stacks" / "Pulumi.ok.yaml").write_text("config: {}\n")
    (project / "stacks" / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert (
        f"stacks/Pulumi.{name}.yaml: the stack name {name!r} is not one kubetrain can render"
        in result.stderr
    )
    assert not (project / "rendered").exists()


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("/etc/*.conf", "'/etc/*.conf' reaches outside the project"),
        ("../*.yaml", "'../*.yaml' reaches outside the project"),
        ("stacks/../../*.yaml", "'stacks/../../*.yaml' reaches outside the project"),
        ("stacks/jobs/*.yaml", "'stacks/jobs/out.yaml' is a symbolic link to"),
    ],
)
def test_job_files_stay_inside_the_project(
    project: Path, run, tmp_path_factory: pytest.TempPathFactory, pattern: str, expected: str
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "outside.yaml"
    outside.write_text(yaml.safe_dump(tfjob(1)))
    (project / "stacks" / "jobs").mkdir()
    (project / "stacks" / "jobs" / "out.yaml").symlink_to(outside)
    result = render_stack(project, run, {"kubetrain:jobFiles": [pattern]})
    assert result.exit_code == 2
    assert f"config.kubetrain:jobFiles[0]: {expected}" in result.stderr


def test_schema_locations_never_take_a_kind_that_names_another_file(tmp_path: Path, run) -> None:
    (tmp_path / "schemas").mkdir()
    # A schema anyone could reach with kind "../loose": it accepts anything.
    (tmp_path / "loose.json").write_text("{}")
    obj = {"apiVersion": "v1", "kind": "../loose", "metadata": {"name": "x"}}
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(obj))
    location = str(tmp_path / "schemas") + "/{{.ResourceKind}}.json"
    result = run("validate", "a.yaml", "--schema-location", location, cwd=tmp_path)
    assert result.exit_code == 1
    assert "kind (lower-cased): '../loose' is not a valid DNS-1035 label" in result.stdout


def test_a_schema_url_that_never_answers_costs_one_short_wait(
    tmp_path: Path, run, monkeypatch
) -> None:
    from kubetrain.validate import schemas

    monkeypatch.setattr(schemas, "FETCH_TIMEOUT", 0.5)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])  # and never answer
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    docs = [
        {"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": "x"}}
        for kind in ("Alpha", "Beta", "Gamma")
    ]
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all(docs))
    url = f"http://127.0.0.1:{port}/" + "{{.ResourceKind}}.json"
    try:
        result = run("validate", "a.yaml", "--schema-location", url, cwd=tmp_path)
    finally:
        server.close()
        for conn in accepted:
            conn.close()
    assert result.exit_code == 1
    assert (
        f"cannot fetch schema http://127.0.0.1:{port}/alpha.json: no answer within 0.5 s"
        in result.stdout
    )
    assert f"cannot fetch schema http://127.0.0.1:{port}/gamma.json" in result.stdout
    assert len(accepted) == 1  # the host is not asked again


# --- messages -----------------------------------------------------------------------------------


def test_an_unsupported_header_version_names_the_bundled_ones(tmp_path: Path, run) -> None:
    text = (REPO / "rendered" / "dev" / "kustomization.yaml").read_text()
    pod = next(
        p for p in (REPO / "rendered" / "dev").rglob("*.yaml") if p.name != "kustomization.yaml"
    ).read_text()
    (tmp_path / "pod.yaml").write_text(
        pod.replace("# kubernetes-version: 1.", "# kubernetes-version: 9.")
    )
    assert text
    result = run("validate", "pod.yaml", cwd=tmp_path)
    assert result.exit_code == 1
    assert "pod.yaml:2: (object): the header's kubernetes-version: Kubernetes 9." in result.stdout
    assert "has no bundled schemas; supported: 1.25 to" in result.stdout
    assert "site-packages" not in result.stdout


@pytest.mark.parametrize("output", ["text", "junit"])
def test_control_characters_never_reach_the_terminal_or_break_junit(
    tmp_path: Path, run, output: str
) -> None:
    obj = {"apiVersion": "v1", "kind": "Pod\x1b[2J", "metadata": {"name": "p\x07\u202e"}}
    (tmp_path / "a.yaml").write_text(json.dumps(obj))
    result = run("validate", "a.yaml", "--output", output, cwd=tmp_path)
    assert result.exit_code == 1
    assert (
        "\x1b" not in result.stdout
        and "\x07" not in result.stdout
        and "\u202e" not in result.stdout
    )
    if output == "junit":
        suites = ET.fromstring(result.stdout)
        assert suites.find("testsuite/testcase").get("name") == "Pod\\x1b[2J p\\x07\\u202e"
    else:
        assert "Pod\\x1b[2J p\\x07\\u202e" in result.stdout


def test_a_key_with_control_characters_is_escaped_in_input_errors(project: Path, run) -> None:
    result = render_stack(project, run, 'config:\n  "kubetrain:\\e[2Jx": 1\n')
    assert result.exit_code == 2
    assert "\x1b" not in result.stderr
    assert (
        'config["kubetrain:\\x1b[2Jx"]' in result.stderr or "kubetrain:\\x1b[2Jx" in result.stderr
    )


@pytest.mark.parametrize("value", ["../../x", "", "latest", "1.33; rm -rf /", "1"])
def test_a_header_version_that_is_no_version_is_said_not_ignored(
    tmp_path: Path, run, value: str
) -> None:
    """A rendered file's ``# kubernetes-version:`` edited into something that is no version:
    a finding at the header (it was read as no header, and the file checked against the
    default version)."""
    pod = next(
        p for p in (REPO / "rendered" / "dev").rglob("*.yaml") if p.name != "kustomization.yaml"
    ).read_text()
    edited = re.sub(r"(?m)^# kubernetes-version: .*$", f"# kubernetes-version: {value}", pod)
    assert edited != pod
    (tmp_path / "pod.yaml").write_text(edited)
    result = run("validate", "pod.yaml", cwd=tmp_path)
    assert result.exit_code == 1
    assert "pod.yaml:2: (object): the header's kubernetes-version: " in result.stdout
    assert "is not a Kubernetes version" in result.stdout
