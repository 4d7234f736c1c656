"""The Pulumi program (stacks/__main__.py) under mocks: for every example stack, ``pulumi up``
registers exactly the objects ``kubetrain render`` writes, under the right components."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components import COMPONENTS, component_name
from components._secrets import find_markers
from kubetrain.builders import Built, build_stack
from kubetrain.builders.lifecycle import is_retained
from kubetrain.builders.tfjob import REPLICA_TYPE_LABEL
from kubetrain.delivery.engines import replace_on_changes
from kubetrain.models import Stack, discover_stacks, load_stack

from conftest import REPO
from pulumi_harness import (
    PROJECT,
    Registration,
    Run,
    is_secret,
    run_program,
    same,
    stack_file_config,
    with_values,
)

STACKS = REPO / "stacks"
STACK_FILES = discover_stacks(STACKS)
STACK_TYPE = "pulumi:pulumi:Stack"


def ident(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])


def rendered_objects(env: str) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """Every object ``kubetrain render`` wrote for ``env`` (the committed rendered/ tree)."""
    out = {}
    for path in sorted((REPO / "rendered" / env).rglob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc is not None:
                out[ident(doc)] = doc
    return out


def fake_credentials(built: list[Built]) -> dict[str, dict[str, str]]:
    """A made-up value for every credential the stack's Secrets name."""
    creds: dict[str, dict[str, str]] = {}
    for b in built:
        for name, key in find_markers(b.obj):
            value = f"not-so-secret-{name}-{key}"
            if key == "dockerconfigjson":  # the API server wants a docker config JSON object
                auth = base64.b64encode(value.encode()).decode()
                value = json.dumps({"auths": {"registry.example": {"auth": auth}}})
            creds.setdefault(name, {})[key] = value
    return creds


def expected_parent(b: Built, stack: Stack) -> tuple[str, str]:
    """(type, name) of the component an object must be registered under."""
    if b.job is None:
        return (STACK_TYPE, f"{PROJECT}-{stack.name}")
    component = COMPONENTS[type(b.job.job)].__name__
    name = component_name(b.job)
    labels = b.obj["metadata"].get("labels") or {}
    if component == "TFJob" and b.job.mode == "native" and REPLICA_TYPE_LABEL in labels:
        return ("kubetrain:index:TFReplicaSet", f"{name}-{labels[REPLICA_TYPE_LABEL]}")
    return (f"kubetrain:index:{component}", name)


def run_stack(env: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Run, Stack, list]:
    stack = load_stack(path)
    built = build_stack(stack, "pulumi")
    config = stack_file_config(path)
    secret_keys = []
    creds = fake_credentials(built)
    if creds:
        config["kubetrain:credentials"] = json.dumps(creds)
        secret_keys.append("kubetrain:credentials")
    monkeypatch.chdir(STACKS)  # Pulumi runs the program from `main`
    return run_program(env, config, secret_keys), stack, built


@pytest.mark.parametrize("path", STACK_FILES, ids=[p.stem.split(".", 1)[1] for p in STACK_FILES])
def test_program_registers_what_render_writes(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = path.stem.split(".", 1)[1]
    run, stack, built = run_stack(env, path, monkeypatch)
    creds = fake_credentials(built)

    # The rendered tree and the Pulumi build are the same objects, except that render writes an
    # ExternalSecret where Pulumi creates the Secret itself.
    rendered = rendered_objects(env)
    pulumi_objects = {ident(b.obj): b for b in built}
    assert len(rendered) == len(pulumi_objects) > 0
    for key, obj in rendered.items():
        if obj["kind"] == "ExternalSecret":
            assert ("v1", "Secret", key[2], key[3]) in pulumi_objects, key
        else:
            assert same(pulumi_objects[key].obj) == same(obj), key

    # Every object is registered exactly once, as the typed resource (its Patch variant when no
    # engine may delete it), field for field, with the options that make the provider replace
    # it when the API server refuses the edit in place (kubetrain.delivery.engines).
    registered: dict[tuple[str, str, str, str], Registration] = {}
    for reg in run.kubernetes_objects():
        key = ident(reg.plain)
        assert key not in registered, f"{key} registered twice"
        registered[key] = reg
    assert sorted(registered) == sorted(pulumi_objects)
    for key, b in pulumi_objects.items():
        reg = registered[key]
        api = b.obj["apiVersion"]
        retained = is_retained(b.obj)
        suffix = "Patch" if retained else ""
        assert reg.type == (
            f"kubernetes:{api if '/' in api else 'core/' + api}:{b.obj['kind']}{suffix}"
        )
        assert reg.retain_on_delete is retained, key
        assert reg.delete_before_replace, key
        assert list(reg.replace_on_changes) == replace_on_changes(b.obj), key
        ns = b.obj["metadata"].get("namespace")
        assert reg.name == (
            f"{ns}/{b.obj['metadata']['name']}" if ns else b.obj["metadata"]["name"]
        )
        assert same(reg.plain) == same(with_values(b.obj, creds)), key
        if b.obj["kind"] == "Secret" and "stringData" in b.obj:
            assert is_secret(reg.inputs["stringData"]), key
        # ... under the right component.
        parent = run.parent_of(reg)
        assert parent is not None and (parent.type, parent.name) == expected_parent(b, stack), key

    # The components: one per job (its parent the stack), one TFReplicaSet per replica type of
    # a native TFJob (its parent the TFJob), and nothing else.
    expected: set[tuple[str, str, str]] = set()
    for job in stack.jobs:
        component = COMPONENTS[type(job.job)].__name__
        name = component_name(job)
        expected.add((f"kubetrain:index:{component}", name, f"{STACK_TYPE}/{PROJECT}-{env}"))
        if component == "TFJob" and job.mode == "native":
            for rtype in job.job.spec.tf_replica_specs:  # type: ignore[attr-defined]
                expected.add(
                    (
                        "kubetrain:index:TFReplicaSet",
                        f"{name}-{rtype.lower()}",
                        f"kubetrain:index:TFJob/{name}",
                    )
                )
    found = set()
    for reg in run.registrations:
        if reg.type.startswith("kubetrain:"):
            parent = run.parent_of(reg)
            assert parent is not None
            found.add((reg.type, reg.name, f"{parent.type}/{parent.name}"))
    assert found == expected


def test_program_exports_each_job(monkeypatch: pytest.MonkeyPatch) -> None:
    path = STACKS / "Pulumi.prod.yaml"
    run, stack, _ = run_stack("prod", path, monkeypatch)
    stack_reg = run.one(STACK_TYPE, f"{PROJECT}-prod")
    jobs = run.outputs[stack_reg.urn]["jobs"]
    assert sorted(jobs) == sorted(component_name(j) for j in stack.jobs)
    resnet = jobs["ml-prod/resnet50"]
    assert resnet["kind"] == "TFJob" and resnet["mode"] == "native"
    assert resnet["labelSelector"] == (
        "training.kubeflow.org/job-name=resnet50,training.kubeflow.org/operator-name=tfjob-controller"
    )
    assert resnet["clusterSpec"]["ps"] == [
        f"resnet50-ps-{i}.ml-prod.svc.cluster.local:2223" for i in range(4)
    ]


def test_program_exports_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dev stack's PaddlePaddle jobs (native and operator mode) and FfDL learners."""
    run, stack, _ = run_stack("dev", STACKS / "Pulumi.dev.yaml", monkeypatch)
    jobs = run.outputs[run.one(STACK_TYPE, f"{PROJECT}-dev").urn]["jobs"]
    assert sorted(jobs) == sorted(component_name(j) for j in stack.jobs)
    assert jobs["ml-dev/example"] == {
        "kind": "TrainingJob",
        "mode": "native",
        "labelSelector": "paddle-job=example",
        "labelSelectors": {
            "master": "paddle-job-master=example",
            "pserver": "paddle-job-pserver=example",
            "trainer": "paddle-job=example",
        },
    }
    assert jobs["ml-dev/job-1"]["mode"] == "operator"
    assert jobs["ml-dev/mnist-learner"] == {
        "kind": "Learner",
        "mode": "native",
        "labelSelector": "app.kubernetes.io/instance=mnist-learner,training_id=training-3fy2bq",
        "serviceHosts": [f"mnist-learner-{i}.mnist-learner.ml-dev.svc" for i in range(2)],
    }


def config_of(env: str) -> dict[str, str]:
    return stack_file_config(STACKS / f"Pulumi.{env}.yaml")


@pytest.mark.parametrize(
    ("change", "secret_keys", "message"),
    [
        pytest.param(
            {"kubetrain:namspace": "ml-dev"},
            [],
            "Pulumi.dev.yaml: config.kubetrain:namspace: unknown field 'namspace'; did you mean 'namespace'?",
            id="misspelled-key",
        ),
        pytest.param(
            {"kubetrain:mode": "hybrid"},
            [],
            "Pulumi.dev.yaml: config.kubetrain:mode: Input should be 'native' or 'operator', got 'hybrid'",
            id="bad-mode",
        ),
        pytest.param(
            {"kubetrain:jobFiles": "stacks/*.yml"},
            [],
            "Pulumi.dev.yaml: config.kubetrain:jobFiles: Input should be a valid list, got 'stacks/*.yml'",
            id="job-files-not-json",
        ),
        pytest.param(
            {"kubetrain:namespace": "ml-dev"},
            ["kubetrain:namespace"],
            "kubetrain:namespace is a secret, but only kubetrain:credentials may hold secrets: "
            "other settings end up in plain text in Kubernetes objects",
            id="secret-setting",
        ),
    ],
)
def test_program_reports_bad_config(
    change: dict[str, str], secret_keys: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(STACKS)
    with pytest.raises(pulumi.RunError) as raised:
        run_program("dev", {**config_of("dev"), **change}, secret_keys)
    assert str(raised.value) == message


def test_program_reports_bad_job_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """The components' validation is the stack file's: same messages, same field paths."""
    monkeypatch.chdir(STACKS)
    config = config_of("staging")
    jobs = json.loads(config["kubetrain:jobs"])
    jobs[0]["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = -1
    config["kubetrain:jobs"] = json.dumps(jobs)
    with pytest.raises(pulumi.RunError) as raised:
        run_program("staging", config)
    # The value differs from the file, so no line (tests/test_load_config.py covers lines).
    assert str(raised.value) == (
        "Pulumi.staging.yaml: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.replicas: "
        "must be >= 0, got -1"
    )


def test_program_needs_a_component_for_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kind without a component stops the program, naming the job."""
    import components._program as program

    monkeypatch.setattr(program, "COMPONENTS", {})
    monkeypatch.chdir(STACKS)
    with pytest.raises(
        pulumi.RunError, match=r"TFJob ml-prod/resnet50: kind TFJob has no Pulumi component yet"
    ):
        run_program("prod", config_of("prod"))


def test_program_logs_the_builders_warnings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`pulumi up` shows what `kubetrain render` prints on stderr: fields rewritten or not used
    (the example stacks render without warnings: staging's native TrainingJob asks for more
    trainers than native mode runs here)."""
    logged: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *a, **k: logged.append(message))
    text = (STACKS / "Pulumi.staging.yaml").read_text()
    marker = '          min-instance: 2\n          max-instance: 2\n          resources:\n            requests: {cpu: "4"'
    assert text.count(marker) == 1
    # The project copied (the program reads the same job files from the repository).
    shutil.copy(STACKS.parent / "Pulumi.yaml", tmp_path)
    shutil.copytree(STACKS, tmp_path / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "stacks" / "Pulumi.staging.yaml"
    path.write_text(text.replace(marker, marker.replace("max-instance: 2", "max-instance: 8")))
    run_stack("staging", path, monkeypatch)
    expected: list[Any] = []
    build_stack(load_stack(path), "pulumi", warnings=expected)

    # The program names the stack file of its own project (no line: it differs from this copy).
    def at_field(line: str) -> str:
        return line[line.index(" config.") :]

    assert expected and [at_field(m) for m in logged] == [
        at_field(str(w)) for w in sorted(expected)
    ]
    assert all(": warning: " in line for line in logged)
