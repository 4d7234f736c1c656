"""Credentials in Pulumi mode: a value from ``pulumi config set --secret`` reaches Kubernetes
objects only as a secret output, never in plain text.

Builders mark credentials in Secret manifests (``{"$kubetrainCredential": {"name", "key"}}``);
these tests use synthetic manifests following that contract.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.runtime.sync_await import _sync_await

from components._resources import register
from components._secrets import Credentials
from kubetrain.models import InputError

from conftest import REPO
from pulumi_harness import is_secret, run_program, run_pulumi, stack_file_config, walk_plain

CREDENTIALS = {"minio": {"accessKey": "AKIA-NOT-REAL", "secretKey": "s3cr3t-Value", "port": 9000}}
PLAINTEXT = {"AKIA-NOT-REAL", "s3cr3t-Value"}


def marker(name: str, key: str) -> dict[str, Any]:
    return {"$kubetrainCredential": {"name": name, "key": key}}


SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "job-store", "namespace": "ml"},
    "type": "Opaque",
    "stringData": {
        "AWS_ACCESS_KEY_ID": marker("minio", "accessKey"),
        "AWS_SECRET_ACCESS_KEY": marker("minio", "secretKey"),
        "PORT": marker("minio", "port"),
        "BUCKET": "training-data",
    },
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "learner-0", "namespace": "ml"},
    "spec": {
        "containers": [
            {
                "name": "learner",
                "image": "i",
                "env": [
                    {
                        "name": "AWS_SECRET_ACCESS_KEY",
                        "valueFrom": {
                            "secretKeyRef": {"name": "job-store", "key": "AWS_SECRET_ACCESS_KEY"}
                        },
                    }
                ],
            }
        ]
    },
}


PULL = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "regcred", "namespace": "ml"},
    "type": "kubernetes.io/dockerconfigjson",
    "stringData": {".dockerconfigjson": marker("regcred", "dockerconfigjson")},
}


class Holder(pulumi.ComponentResource):
    def __init__(self, name: str, manifests: list[dict[str, Any]]) -> None:
        super().__init__("test:index:Holder", name, None, None)
        register(self, manifests, where=f"Holder {name}")
        self.register_outputs({})


def secret_config(value: Any = CREDENTIALS, *, secret: bool = True) -> dict[str, Any]:
    return {
        "config": {"kubetrain:credentials": json.dumps(value)},
        "secret_keys": ["kubetrain:credentials"] if secret else [],
    }


def test_credentials_reach_the_secret_only_as_secret_outputs() -> None:
    run = run_pulumi(lambda: Holder("h", [SECRET, POD]) and None, **secret_config())
    secret = run.one("kubernetes:core/v1:Secret", "ml/job-store")
    assert is_secret(secret.inputs["stringData"])
    assert secret.plain["stringData"] == {
        "AWS_ACCESS_KEY_ID": "AKIA-NOT-REAL",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t-Value",
        "PORT": "9000",  # --path stores numbers typed; Secret data is text
        "BUCKET": "training-data",
    }
    # Nowhere in plain text: not in any input outside secret wrappers, not in any output.
    for reg in run.registrations:
        for path, value in walk_plain(reg.inputs):
            assert value not in PLAINTEXT, (reg.type, reg.name, path)
    for urn, outputs in run.outputs.items():
        assert not any(v in PLAINTEXT for _, v in walk_plain(outputs)), urn
    # The pod refers to the Secret, and waits for it.
    pod = run.one("kubernetes:core/v1:Pod", "ml/learner-0")
    assert secret.urn in pod.dependencies


def test_a_credential_is_a_secret_output() -> None:
    box: dict[str, pulumi.Output[str]] = {}

    def program() -> None:
        box["value"] = Credentials("test").value("minio", "secretKey")

    run_pulumi(program, **secret_config())
    assert _sync_await(box["value"].is_secret()) is True
    assert _sync_await(box["value"].future()) == "s3cr3t-Value"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        pytest.param(
            {},
            "Holder h: kubetrain:credentials: is not set; set it with "
            "`pulumi config set --secret --path 'kubetrain:credentials.minio.accessKey' VALUE`",
            id="no-credentials",
        ),
        pytest.param(
            secret_config(secret=False),
            "Holder h: kubetrain:credentials: holds no secret value: set credentials with "
            "`pulumi config set --secret --path`, never in plain text",
            id="not-secret",
        ),
        pytest.param(
            secret_config({"minio": {"accessKey": "a"}, "s3": {}}),
            "Holder h: kubetrain:credentials.minio.port: is not set; set it with "
            "`pulumi config set --secret --path 'kubetrain:credentials.minio.port' VALUE`\n"
            "Holder h: kubetrain:credentials.minio.secretKey: is not set; set it with "
            "`pulumi config set --secret --path 'kubetrain:credentials.minio.secretKey' VALUE`",
            id="missing-keys",
        ),
        pytest.param(
            secret_config(["a"]),
            "Holder h: kubetrain:credentials: must be a mapping: credential name -> key -> value",
            id="not-a-mapping",
        ),
    ],
)
def test_missing_credentials_fail_before_anything_is_registered(
    setup: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: Holder("h", [SECRET, POD]) and None, **setup)
    assert str(raised.value) == message
    run = raised.value.pulumi_run  # type: ignore[attr-defined]
    assert run.kubernetes_objects() == []


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        ("hunter2-not-json", False),
        ('["hunter2"]', False),
        ('{"hunter2": 1}', False),
        ({"auths": {"r.example.com": {"auth": "aHVudGVyMg=="}}}, True),
        ('{"auths": {"r.example.com": {"auth": "aHVudGVyMg=="}}}', True),
    ],
)
def test_a_pull_secret_must_hold_a_docker_config(value: Any, accepted: bool) -> None:
    """The API server refuses a kubernetes.io/dockerconfigjson Secret whose value is no JSON
    object (found at a real server's first `pulumi up`): said before anything is registered,
    without the value."""
    config = secret_config({**CREDENTIALS, "regcred": {"dockerconfigjson": value}})
    if accepted:
        run = run_pulumi(lambda: Holder("h", [PULL]) and None, **config)
        assert run.one("kubernetes:core/v1:Secret", "ml/regcred")
        return
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: Holder("h", [PULL]) and None, **config)
    assert str(raised.value) == (
        "Holder h: kubetrain:credentials.regcred.dockerconfigjson: is not a docker config: "
        'a JSON object such as {"auths": {"REGISTRY": {"auth": "BASE64(user:password)"}}} '
        "(e.g. the content of ~/.docker/config.json)"
    )
    assert "hunter2" not in str(raised.value)
    assert raised.value.pulumi_run.kubernetes_objects() == []  # type: ignore[attr-defined]


def test_a_malformed_marker_is_a_bug() -> None:
    bad = {**SECRET, "stringData": {"X": {"$kubetrainCredential": {"name": "minio"}}}}
    with pytest.raises(ValueError, match="malformed credential marker"):
        run_pulumi(lambda: Holder("h", [bad]) and None, **secret_config())


#: Every credential the dev stack's Learners name: the COS HMAC keys of their stores and the
#: docker config of the private image's pull Secret.
DEV_CREDENTIALS = {
    "cos-hmac": {"access-key": "AKIA-NOT-REAL", "secret-key": "s3cr3t-Value"},
    "regcred": {"dockerconfigjson": '{"auths": {"us.icr.io": {"auth": "cHVsbC1zM2NyM3Q="}}}'},
    **{
        f"{job}-ssh": {
            "ssh-privatekey": f"-----BEGIN EC PRIVATE KEY----- NOT-REAL-{job}",
            "ssh-publickey": f"ecdsa-sha2-nistp521 NOT-REAL-{job}",
        }
        for job in ("pi", "tensorflow-benchmarks", "tensorflow-mnist")
    },
}
DEV_PLAINTEXT = {v for keys in DEV_CREDENTIALS.values() for v in keys.values()}


def test_program_keeps_credentials_out_of_plain_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials set for the stack never reach the settings or any plain value."""
    monkeypatch.chdir(REPO / "stacks")
    config = {
        **stack_file_config(REPO / "stacks" / "Pulumi.dev.yaml"),
        "kubetrain:credentials": json.dumps(DEV_CREDENTIALS),
    }
    run = run_program("dev", config, ["kubetrain:credentials"])
    secrets = run.of_type("kubernetes:core/v1:Secret")
    # Every Secret render writes as an ExternalSecret (rendered/dev is what Pulumi applies).
    rendered = [
        yaml.safe_load(p.read_text()) for p in (REPO / "rendered" / "dev").rglob("externalsecret-*")
    ]
    assert len(rendered) >= 4
    assert sorted(r.name for r in secrets) == sorted(
        f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in rendered
    )
    for reg in secrets:
        assert is_secret(reg.inputs["stringData"]), reg.name
        assert set(reg.plain["stringData"].values()) <= DEV_PLAINTEXT, reg.name
    for reg in run.registrations:
        assert not any(v in DEV_PLAINTEXT for _, v in walk_plain(reg.inputs)), reg.name
    for outputs in run.outputs.values():
        assert not any(v in DEV_PLAINTEXT for _, v in walk_plain(outputs))
        text = json.dumps(outputs, default=str)
        assert not any(v in text for v in ("AKIA-NOT-REAL", "s3cr3t-Value", "cHVsbC1zM2NyM3Q"))
