"""No secret material in rendered/, stdout, stderr or reports: one credential rule for every
kind and mode, messages that never quote a value that may be secret, Git URLs without
credentials, and a diff that never prints a foreign file holding a Secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.models import InputError, load_job

SECRET = "hunter2SECRETvalue"

CONTAINER: dict[str, Any] = {"name": "tensorflow", "image": "tf"}


def tfjob(container: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", **meta},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [container]}}}
            }
        },
    }


def v1alpha1(container: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "TFJob",
        "metadata": {"name": "old"},
        "spec": {
            "replicaSpecs": [
                {"tfReplicaType": "WORKER", "template": {"spec": {"containers": [container]}}}
            ]
        },
    }


def trainingjob(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "paddle"},
        "spec": {
            "trainer": {
                "entrypoint": "python train.py",
                "workspace": "/w",
                "min-instance": 1,
                "max-instance": 1,
            },
            "pserver": {"min-instance": 1, "max-instance": 1},
            **spec,
        },
    }


def learner(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubetrain.io/v1alpha1",
        "kind": "Learner",
        "metadata": {"name": "lrn"},
        "spec": {
            "trainingId": "t-1",
            "framework": {"name": "tensorflow", "version": "1.15", "command": "python m.py"},
            "image": {"registry": "r.example.com", "namespace": "ml"},
            **spec,
        },
    }


def stack(project: Path, job: dict[str, Any], mode: str = "native") -> None:
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:mode": mode,
        "kubetrain:secretStore": {"name": "vault"},
        "kubetrain:external": {"secrets": ["s"]},
        "kubetrain:jobs": [job],
    }
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))


def with_env(name: str, value: Any) -> dict[str, Any]:
    return {**CONTAINER, "env": [{"name": name, "value": value}]}


# The one rule (kubetrain/models/secrets.py), over every place a job document holds a value.
LITERALS = [
    pytest.param(tfjob(with_env("AWS_SECRET_ACCESS_KEY", SECRET)), "env[0].value", id="tfjob-env"),
    pytest.param(tfjob(with_env("DB_PASSWORD", SECRET)), "env[0].value", id="tfjob-env-password"),
    pytest.param(tfjob(with_env("HF_TOKEN", SECRET)), "env[0].value", id="tfjob-env-token"),
    pytest.param(
        tfjob(CONTAINER, annotations={"password": SECRET}),
        "metadata.annotations.password",
        id="tfjob-annotation",
    ),
    pytest.param(
        tfjob({**CONTAINER, "args": ["train", f"--api-key={SECRET}"]}),
        "containers[0].args[1]",
        id="tfjob-args-flag",
    ),
    pytest.param(
        tfjob({**CONTAINER, "args": ["train", "--api-key", SECRET]}),
        "containers[0].args[1]",
        id="tfjob-args-flag-two-words",
    ),
    pytest.param(
        tfjob({**CONTAINER, "command": ["sh", "-c", f"train --password {SECRET} --steps 9"]}),
        "containers[0].command[2]",
        id="tfjob-shell-line-two-words",
    ),
    pytest.param(
        tfjob({**CONTAINER, "command": ["sh", "-c", f"export TOKEN={SECRET} && train"]}),
        "containers[0].command[2]",
        id="tfjob-shell-line",
    ),
    pytest.param(v1alpha1(with_env("API_KEY", SECRET)), "env[0].value", id="v1alpha1-env"),
    pytest.param(
        trainingjob(NodeSelector={"token": SECRET}),
        "spec.NodeSelector.token",
        id="trainingjob-node-selector",
    ),
    pytest.param(learner(env={"COS_APIKEY": SECRET}), "spec.env.COS_APIKEY", id="learner-env"),
]


@pytest.mark.parametrize("mode", ["native", "operator"])
@pytest.mark.parametrize(("job", "where"), LITERALS)
def test_a_literal_credential_is_refused_in_every_kind_and_mode(
    project: Path, run, job: dict[str, Any], where: str, mode: str
) -> None:
    stack(project, job, mode)
    result = run("render", cwd=project)
    assert result.exit_code == 2, result.stderr
    assert where in result.stderr
    assert "a credential value is not allowed" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert not (project / "rendered").exists()


def test_the_trainingjob_entrypoint_is_a_command_line_too(project: Path, run) -> None:
    job = trainingjob()
    job["spec"]["trainer"]["entrypoint"] = f"python train.py --password={SECRET}"
    stack(project, job)
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert (
        "spec.trainer.entrypoint: a credential value is not allowed in entrypoint" in result.stderr
    )
    assert SECRET not in result.stderr


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "d"},
    "spec": {
        "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [CONTAINER]}},
    },
}
CONFIGMAP: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def _deployment(**container: Any) -> dict[str, Any]:
    spec = {**DEPLOYMENT["spec"]["template"]["spec"], "containers": [{**CONTAINER, **container}]}
    template = {**DEPLOYMENT["spec"]["template"], "spec": spec}
    return {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "template": template}}


# Plain manifests (kubetrain:manifests) are rendered too: the same rule, and ConfigMap keys.
MANIFEST_LITERALS = [
    pytest.param(
        _deployment(env=[{"name": "HF_TOKEN", "value": SECRET}]),
        "manifests[0].spec.template.spec.containers[0].env[0].value",
        id="deployment-env",
    ),
    pytest.param(
        _deployment(args=["--password", SECRET]),
        "manifests[0].spec.template.spec.containers[0].args[0]",
        id="deployment-args",
    ),
    pytest.param(
        {**CONFIGMAP, "data": {"DB_PASSWORD": SECRET}},
        "manifests[0].data.DB_PASSWORD",
        id="configmap-data",
    ),
    pytest.param(
        {**CONFIGMAP, "metadata": {"name": "c", "annotations": {"api-token": SECRET}}},
        "manifests[0].metadata.annotations.api-token",
        id="configmap-annotation",
    ),
]


@pytest.mark.parametrize(("manifest", "where"), MANIFEST_LITERALS)
def test_a_literal_credential_in_a_plain_manifest_is_refused(
    project: Path, run, manifest: dict[str, Any], where: str
) -> None:
    config = {"kubetrain:namespace": "ml", "kubetrain:manifests": [manifest]}
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("render", cwd=project)
    assert result.exit_code == 2, result.stderr
    assert where in result.stderr
    assert "a credential value is not allowed" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert not (project / "rendered").exists()


def test_a_configmap_key_that_only_looks_like_a_credential_can_be_listed(
    project: Path, run
) -> None:
    allowed = {
        **CONFIGMAP,
        "metadata": {"name": "c", "annotations": {"kubetrain.io/not-credentials": "TOKEN_PATH"}},
        "data": {"TOKEN_PATH": "/var/run/token", "steps": "10"},
    }
    config = {"kubetrain:namespace": "ml", "kubetrain:manifests": [allowed]}
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    assert (
        "/var/run/token" in (project / "rendered" / "dev" / "ml" / "configmap-c.yaml").read_text()
    )


@pytest.mark.parametrize(("job", "where"), LITERALS)
def test_pulumi_components_obey_the_same_rule(job: dict[str, Any], where: str) -> None:
    with pytest.raises(InputError) as caught:
        load_job(job, settings={"secretStore": {"name": "vault"}}, file="component")
    assert where in str(caught.value)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    "job",
    [
        # valueFrom a Secret, an empty value, a reference to another var: nothing literal.
        tfjob(
            {
                **CONTAINER,
                "env": [
                    {"name": "A_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                    {"name": "B_TOKEN", "value": ""},
                    {"name": "C_PASSWORD", "value": "$(A_TOKEN)"},
                ],
                "args": [
                    "--password=$(C_PASSWORD)",
                    "--token",
                    "$(A_TOKEN)",
                    "--token-file",
                    "/run/token",
                    "--no-password",
                    "--secret",
                    "--steps",
                    "9",
                ],
            }
        ),
        # Names that only look like credentials, listed in the job's annotation.
        tfjob(
            {**CONTAINER, "env": [{"name": "VAULT_TOKEN", "value": "/vault/token"}]},
            annotations={
                "kubetrain.io/not-credentials": "VAULT_TOKEN, vault.hashicorp.com/agent-inject-token",
                "vault.hashicorp.com/agent-inject-token": "true",
            },
        ),
    ],
    ids=["references", "allowed-by-annotation"],
)
def test_values_that_are_not_credentials_render(project: Path, run, job: dict[str, Any]) -> None:
    stack(project, job)
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr


# --- messages never quote what may be secret ----------------------------------------------------

# Values of every type that a string-typed field refuses (so there is a message to read).
SHAPES = [
    pytest.param([SECRET], id="list"),
    pytest.param({"k": SECRET}, id="map"),
    pytest.param([f"AWS_SECRET_ACCESS_KEY={SECRET}"], id="assignments"),
    pytest.param(1.2345678e30, id="float"),
    pytest.param(987654321987, id="int"),
]


@pytest.mark.parametrize("value", SHAPES)
def test_env_values_of_any_type_are_never_quoted(project: Path, run, value: Any) -> None:
    for job in (
        tfjob({**CONTAINER, "env": [{"name": "PLAIN", "value": value}]}),
        tfjob({**CONTAINER, "env": {"AWS_SECRET_ACCESS_KEY": value}}),
        tfjob({**CONTAINER, "env": value}),
        tfjob({**CONTAINER, "args": {"password": value}}),
        learner(env={"MODEL_DIR": value}),
    ):
        stack(project, job)
        result = run("render", cwd=project)
        assert result.exit_code == 2, result.stderr
        shown = result.stderr + result.stdout
        assert SECRET not in shown and str(value) not in shown and "1.2345678" not in shown


@pytest.mark.parametrize("value", SHAPES)
def test_plaintext_credentials_are_never_quoted(project: Path, run, value: Any) -> None:
    for config in (
        {"kubetrain:credentials": value},
        {"kubetrain:credentials": {"db": value}},
        {"kubetrain:credentials": {"db": {"password": value}}},
    ):
        (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
        result = run("render", cwd=project)
        assert result.exit_code == 2, result.stderr
        assert SECRET not in result.stderr and "1.2345678" not in result.stderr
        assert "987654321987" not in result.stderr


@pytest.mark.parametrize("value", [SECRET, 1.2345678e30, [SECRET]])
def test_a_stack_file_that_is_one_scalar_is_never_quoted(project: Path, run, value: Any) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(value))
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert SECRET not in result.stderr and "1.2345678" not in result.stderr


@pytest.mark.parametrize("output", ["text", "json", "junit"])
@pytest.mark.parametrize("value", SHAPES)
def test_validate_reports_never_quote_secret_data(
    tmp_path: Path, run, value: Any, output: str
) -> None:
    docs = [
        {"apiVersion": "v1", "kind": kind, "metadata": {"name": kind.lower()}, field: {"k": value}}
        for kind, field in (("Secret", "data"), ("Secret", "stringData"), ("ConfigMap", "data"))
    ]
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "annotations": {"api-key": value}},
            "spec": {
                "containers": [{"name": "c", "image": "i", "env": [{"name": "X", "value": value}]}]
            },
        }
    )
    for i, doc in enumerate(docs):
        doc["metadata"]["name"] += str(i)
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all(docs))
    result = run(
        "validate", "a.yaml", "--output", output, "--skip-check", "secret-data", cwd=tmp_path
    )
    assert result.exit_code == 1
    if output == "json":
        assert json.loads(result.stdout)["summary"]["invalid"] == 4
    for text in (result.stdout, result.stderr):
        assert SECRET not in text and "1.2345678" not in text and "987654321987" not in text


# --- Git URLs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        f"https://ci:{SECRET}@git.example.com/ml.git",
        f"https://{SECRET}@git.example.com/ml.git",
        f"ssh://git:{SECRET}@git.example.com/ml.git",
        "git@git.example.com:ml.git",
        "file:///srv/git/ml.git",
        "HTTPS://git.example.com/ml.git",
    ],
)
def test_gitops_repo_url_is_what_flux_accepts_without_credentials(
    project: Path, run, url: str
) -> None:
    config = {"kubetrain:gitops": {"repoURL": url}}
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "config.kubetrain:gitops.repoURL: must" in result.stderr
    assert SECRET not in result.stderr
    assert not (project / "rendered").exists()


def test_an_ssh_user_is_not_a_credential(project: Path, run) -> None:
    config = {"kubetrain:gitops": {"repoURL": "ssh://git@git.example.com/ml.git"}}
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    assert run("render", cwd=project).exit_code == 0


# --- diff ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content"),
    [
        (
            "secret.yaml",
            f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\nstringData: {{k: {SECRET}}}\n",
        ),
        ("notes.json", json.dumps({"kind": "Secret", "data": {"k": SECRET}})),
        # A generated file edited by hand to hold a Secret.
        (
            "ml/secret-s.yaml",
            "# Generated by kubetrain from stacks/Pulumi.dev.yaml (x). Do not edit\n"
            f"apiVersion: v1\nkind: Secret\nmetadata: {{name: s}}\nstringData: {{k: {SECRET}}}\n",
        ),
        ("empty.yaml", ""),
        ("blob.bin", b"\xff\xfe\x00\x01".decode("latin-1")),
    ],
    ids=["foreign-secret", "foreign-json", "edited-generated-file", "empty", "binary"],
)
def test_diff_reports_what_render_refuses_without_its_content(
    project: Path, run, name: str, content: str
) -> None:
    stack(project, tfjob(CONTAINER))
    assert run("render", cwd=project).exit_code == 0
    assert run("diff", cwd=project).exit_code == 0
    path = project / "rendered" / "dev" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("latin-1") if name.endswith(".bin") else content.encode())
    result = run("diff", cwd=project)
    assert result.exit_code == 1
    assert f"a/rendered/dev/{name} and /dev/null differ (not shown:" in result.stdout
    assert SECRET not in result.stdout + result.stderr
