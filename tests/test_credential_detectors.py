"""The credential detectors of kubetrain/models/secrets.py on what an audit found getting
through: credentials in URLs (a query's ``key=``, a fragment, ``pass=``, percent-encoded
separators and userinfo, webhook URLs, an access key id as user), a connection string printed
in a pattern's message, and env vars whose name or value is a credential. Each is refused by
render and by ``kubetrain validate`` without being shown; names and values that only look
like credentials stay allowed; property tests cover generated inputs, and the detectors stay
linear in the length of what they read."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.models.secrets import (
    credential_problems,
    has_url_password,
    is_credential_entry,
    secret_value_kind,
)
from kubetrain.validate.engine import credential_words

RUNTIME: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "ClusterTrainingRuntime",
    "metadata": {"name": "rt", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": step,
                        "template": {
                            "metadata": {
                                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": label}
                            },
                            "spec": {
                                "template": {
                                    "spec": {
                                        "containers": [{"name": step, "image": "i:1", **more}],
                                        **volumes,
                                    }
                                }
                            },
                        },
                    }
                    for step, label, more, volumes in (
                        (
                            "dataset-initializer",
                            "dataset-initializer",
                            {"volumeMounts": [{"name": "initializer", "mountPath": "/workspace"}]},
                            {"volumes": [{"name": "initializer", "emptyDir": {}}]},
                        ),
                        ("node", "trainer", {}, {}),
                    )
                ]
            }
        },
    },
}
TRAINJOB: dict[str, Any] = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "tj"},
    "spec": {
        "runtimeRef": {"name": "rt"},
        "trainer": {"numNodes": 2, "image": "pytorch/pytorch:2", "command": ["torchrun", "t.py"]},
    },
}


def trainjob(storage_uri: str) -> dict[str, Any]:
    job = copy.deepcopy(TRAINJOB)
    job["spec"]["initializer"] = {"dataset": {"storageUri": storage_uri}}
    return job


def tfjob(env: list[dict[str, Any]]) -> dict[str, Any]:
    container = {"name": "tensorflow", "image": "tf", "env": env}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            }
        },
    }


def pod(env: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i:1", "env": env}]},
    }


def render(project: Path, run, jobs: list[Any], manifests: tuple[Any, ...] = ()):
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:external": {"secrets": ["db"]},
        "kubetrain:manifests": list(manifests),
        "kubetrain:jobs": jobs,
    }
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
    return run("render", cwd=project)


def validate(tmp_path: Path, run, doc: Any, output: str = "text", *more: str):
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(doc))
    return run("validate", "a.yaml", "--output", output, *more, cwd=tmp_path)


# --- A: credentials in URLs ---------------------------------------------------------------------

#: (URL, the part of it that must never be shown).
AUDIT_URLS = [
    pytest.param(
        "https://www.googleapis.com/storage/v1/b/x/o?key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
        "AIzaSyDaGmWKa4JsXZ",
        id="query-key-google-api-key",
    ),
    pytest.param(
        "https://example.com/cb#access_token=ya29.a0AfH6SMBx3Jk2Lq9ZpQwErTyUiOpAsDfGhJkL"
        "&token_type=Bearer",
        "a0AfH6SMBx3Jk2Lq9",
        id="fragment-access-token",
    ),
    pytest.param(
        "https://host/data?credential=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMIK7",
        id="query-credential",
    ),
    pytest.param("https://host/x?pass=hunter2hunter2", "hunter2hunter2", id="query-pass"),
    pytest.param(
        "https://host/x?token%3Dghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "16C7e42F292c6912E",
        id="percent-encoded-separator",
    ),
    pytest.param(
        "https://ghp%5F16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r.git",
        "16C7e42F292c6912E",
        id="percent-encoded-token-user",
    ),
    pytest.param(
        "https://hooks.slack.com/services/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",
        "q8Wz3xLmN4pR7sT1",
        id="slack-webhook",
    ),
    pytest.param("s3://AKIAIOSFODNN7EXAMPLE:@bucket/x", "AKIAIOSFODNN7EXAMPLE", id="key-id-user"),
    pytest.param(
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&se=2030-01-01&sp=r"
        "&SIG=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA%3D%3D",
        "Zm9vYmFyYmF6cXV4",
        id="azure-sas-sig-any-case",
    ),
    pytest.param(
        "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20300101"
        "&X-Amz-Signature=9f3c2a1b7e6d5c4b3a29f3c2a1b7e6d5",
        "9f3c2a1b7e6d5c4b",
        id="aws-presigned",
    ),
    pytest.param(
        "https://storage.googleapis.com/b/o?X-Goog-Credential=sa%40p.iam&x-goog-signature=abc123",
        "abc123",
        id="gcs-signed",
    ),
    pytest.param("https://api.example.com/v1?API_KEY=Q7xLm2Rt9VbK", "Q7xLm2Rt9VbK", id="api-key"),
    pytest.param("https://api.example.com/v1?client_secret=Q7xLm2Rt9", "Q7xLm2Rt9", id="client"),
    pytest.param("hf:datasets/x?token=Zq9S3CR3Tv4lue", "Zq9S3CR3Tv4lue", id="no-double-slash"),
]


@pytest.mark.parametrize(("url", "secret"), AUDIT_URLS)
def test_a_url_carrying_a_credential_is_detected(url: str, secret: str) -> None:
    assert secret_value_kind(url) is not None
    found = credential_problems(trainjob(url))
    assert [path for path, _ in found] == [("spec", "initializer", "dataset", "storageUri")]
    assert all(secret not in message for _, message in found)


@pytest.mark.parametrize(("url", "secret"), AUDIT_URLS)
def test_a_url_carrying_a_credential_never_reaches_rendered(
    project: Path, run, url: str, secret: str
) -> None:
    result = render(project, run, [trainjob(url)], (RUNTIME,))
    assert result.exit_code == 2, result.stderr
    assert "spec.initializer.dataset.storageUri: a credential value is not allowed" in (
        result.stderr
    )
    assert secret not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    assert not (project / "rendered").exists()


@pytest.mark.parametrize(
    "url",
    [
        "https://www.googleapis.com/storage/v1/b/x/o?key=data/train.csv",  # key= of an object
        "https://huggingface.co/datasets/x?revision=main&key=v2",
        "hf://datasets/org/x",
        "s3://bucket/prefix/data.parquet",
        "https://git@github.com/o/r.git",
        "https://github.com/o/r.git#main",
        "https://example.com/search?q=password+reset&page=2",
        "https://example.com/cb#section-2",
        "https://host/x?token=$(HF_TOKEN)",
        "https://host/x?password=",
        "https://hooks.example.com/services/T0A1B2C3D",
        "https://slack.com/services/x",
    ],
)
def test_a_url_without_a_credential_is_accepted(url: str) -> None:
    assert not has_url_password(url)
    assert secret_value_kind(url) is None
    assert credential_problems(trainjob(url)) == []


# Names that carry a credential as a URL parameter, in their usual spelling.
CREDENTIAL_PARAMETERS = [
    "password", "passwd", "pwd", "pass", "token", "access_token", "id_token", "api_key", "apikey",
    "access_key", "secret", "client_secret", "key", "sig", "signature", "X-Amz-Signature",
    "X-Amz-Credential", "X-Goog-Signature", "X-Goog-Credential", "credential", "AccountKey",
    "passphrase", "jwt", "auth",
]  # fmt: skip
_TOKEN_VALUE = st.text("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=4)


def _case(draw: st.DrawFn, text: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c.lower() for c in text)


def _encode(draw: st.DrawFn, text: str, keep: str = "") -> str:
    """``text`` with any of its characters (but those of ``keep``) percent-encoded."""
    return "".join(
        f"%{ord(c):02X}" if c not in keep and c.isascii() and draw(st.booleans()) else c
        for c in text
    )


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_credential_parameter_in_any_case_and_encoding_is_refused(data: st.DataObject) -> None:
    draw = data.draw
    name = _case(draw, draw(st.sampled_from(CREDENTIAL_PARAMETERS)))
    # A random-looking value (key= needs one: ``key=`` also names objects) with a digit.
    value = draw(_TOKEN_VALUE.map(lambda v: f"{v}7x{v.upper()}9Q"))
    where = draw(st.sampled_from(["?", "&", "#", ";"]))
    pair = f"{name}={value}"
    if draw(st.booleans()):
        pair = _encode(draw, pair)  # the separator and the name's letters may be escaped too
    url = f"https://host.example.com/p/x{'?a=1' if where == '&' else ''}{where}{pair}"
    assert has_url_password(url), url
    assert credential_problems(trainjob(url)), url


@st.composite
def ordinary_urls(draw: st.DrawFn) -> str:
    """URLs without a credential: any scheme and host, path words, parameters whose names
    name no credential, with short plain values."""
    word = st.text("abcdefghijklmnopqrstuvwxyz0123456789-._~", min_size=1, max_size=10)
    scheme = draw(st.sampled_from(["https", "http", "s3", "gs", "hf", "file", "az"]))
    host = draw(st.sampled_from(["bucket", "example.com", "db.example.com:5432", "[::1]:80"]))
    path = "".join("/" + draw(word) for _ in range(draw(st.integers(0, 3))))
    names = st.sampled_from(
        ["page", "prefix", "revision", "alt", "limit", "region", "versionId", "q", "ref",
         "generation", "format", "split", "part"]
    )  # fmt: skip
    values = st.text("abcdefghijklmnopqrstuvwxyz0123456789-._", max_size=7)
    params = [f"{draw(names)}={draw(values)}" for _ in range(draw(st.integers(0, 3)))]
    query = ("?" + "&".join(params)) if params else ""
    fragment = ("#" + draw(word)) if draw(st.booleans()) else ""
    user = (draw(st.sampled_from(["git", "deploy", "user"])) + "@") if draw(st.booleans()) else ""
    return f"{scheme}://{user}{host}{path}{query}{fragment}"


@settings(max_examples=300, deadline=None)
@given(url=ordinary_urls())
def test_any_ordinary_url_is_accepted(url: str) -> None:
    assert not has_url_password(url), url
    assert secret_value_kind(url) is None, url


# --- B: a value flagged as a credential is never printed ---------------------------------------

CONNECTION_STRING = "Server=host;Database=db;User Id=u;Password=Zq9S3CR3Tv4lue;"


def test_a_connection_string_that_fails_the_fields_pattern_is_not_printed(
    project: Path, run
) -> None:
    """storageUri's pattern refuses the string: the message says so without quoting it, and
    the credential rule names what it holds."""
    result = render(project, run, [trainjob(CONNECTION_STRING)], (RUNTIME,))
    assert result.exit_code == 2
    assert "Zq9S3CR3Tv4lue" not in result.stderr + result.stdout
    assert "Server=" not in result.stderr
    assert "storageUri: String should match pattern" in result.stderr
    assert "(not shown)" in result.stderr
    assert "a credential in a name=value pair" in result.stderr


@pytest.mark.parametrize("output", ["text", "json", "junit"])
def test_validate_never_prints_the_connection_string(tmp_path: Path, run, output: str) -> None:
    result = validate(tmp_path, run, trainjob(CONNECTION_STRING), output)
    assert result.exit_code == 1
    assert "Zq9S3CR3Tv4lue" not in result.stdout + result.stderr


@pytest.mark.parametrize("output", ["text", "json", "junit"])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("restartPolicy", "password=Zq9S3CR3Tv4lueX"),
        ("imagePullPolicy", "hf_Zq9S3CR3Tv4lueXabcdefghijklmnopq"),
        ("dnsPolicy", "https://ghp_Zq9S3CR3Tv4lueXabcdefghijklmnop@github.com/o/r"),
    ],
)
def test_an_api_finding_at_a_field_holding_a_credential_never_quotes_it(
    tmp_path: Path, run, output: str, field: str, value: str
) -> None:
    """A credential given where the API server refuses the value (a password as a pod's
    ``restartPolicy``): the API's finding names the field and what is wrong, not the value."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]},
    }
    target = pod["spec"]["containers"][0] if field == "imagePullPolicy" else pod["spec"]
    target[field] = value
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump(pod))
    result = run("validate", "pod.yaml", "--output", output, cwd=tmp_path)
    assert result.exit_code == 1
    assert "Zq9S3CR3Tv4lue" not in result.stdout + result.stderr
    assert field in result.stdout


# --- C: env vars whose name or value is a credential --------------------------------------------

RANDOM = "Q7xLm2Rt9VbK4pWz8NcY"

#: Names looks_like_credential misses (their rule is _named_credential's docstring).
CREDENTIAL_NAMES = [
    "DB_PASS", "MYSQL_PWD", "GITHUB_PAT", "KAGGLE_KEY", "CREDENTIALS", "SIGNING_KEY",
    "ENCRYPTION_KEY", "PASSPHRASE", "NPM_AUTH", "JWT", "GPG_PASSPHRASE", "AWS_CREDS",
    "SMTP_PASS", "ADO_PAT", "AZURE_STORAGE_KEY", "LICENSE_KEY", "PASS", "PAT", "HMAC_KEY",
]  # fmt: skip

#: Values that are credentials whatever the env var's name.
CREDENTIAL_VALUES = [
    pytest.param(
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x9Zq9S3CR3T\n"
        "-----END RSA PRIVATE KEY-----\n",
        id="pem-rsa",
    ),
    pytest.param(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEZq9S3CR3T\n", id="pem-openssh"
    ),
    pytest.param(
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zq9S3CR3TZm9vYmFyYmF6=="
        ";EndpointSuffix=core.windows.net",
        id="azure-connection-string",
    ),
    pytest.param("host=db user=u password=Zq9S3CR3T dbname=x", id="libpq-dsn"),
    pytest.param("host=db user=u password='Zq9S3CR3T x' dbname=x", id="libpq-dsn-quoted"),
    pytest.param("Server=h;Database=d;Uid=u;Pwd=Zq9S3CR3T;", id="odbc-pwd"),
    pytest.param("Bearer Zq9S3CR3TxLm2Rt9VbK4pWz8NcY", id="bearer"),
    pytest.param("Authorization: Basic dXNlcjpaceZq9S3CR3T=", id="basic"),
    pytest.param("hf_Zq9S3CR3TabcdefghijklmnopqrstuvwxyzAB", id="hugging-face"),
    pytest.param("ghp_Zq9S3CR3T16C7e42F292c6912E7710c838347", id="github"),
    pytest.param("xoxb-1234567890-Zq9S3CR3Tabc", id="slack-token"),
    pytest.param("sk-proj-Zq9S3CR3TxLm2Rt9VbK4pWz8NcYabcdef", id="openai"),
    pytest.param(
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.Zq9S3CR3TxLm2Rt9VbK4pWz8NcY", id="jwt-value"
    ),
    pytest.param(
        json.dumps(
            {
                "type": "service_account",
                "private_key_id": "abc",
                "private_key": "MIIEvZq9S3CR3T",
                "client_email": "x@p.iam.gserviceaccount.com",
            }
        ),
        id="service-account-json",
    ),
    pytest.param("AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYZq9S3CR3T", id="aws-key-pair"),
    pytest.param("--data https%3A%2F%2Fu%3AZq9S3CR3T%40db%2Fx", id="encoded-url-in-a-value"),
]


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_a_credential_name_with_a_literal_is_refused_by_render_and_validate(
    project: Path, tmp_path: Path, run, name: str
) -> None:
    env = [{"name": name, "value": RANDOM}]
    rendered = render(project, run, [tfjob(env)])
    assert rendered.exit_code == 2, rendered.stderr
    assert "env[0].value: a credential value is not allowed in env" in rendered.stderr
    assert RANDOM not in rendered.stderr + rendered.stdout
    validated = validate(tmp_path, run, pod(env))
    assert validated.exit_code == 1, validated.stdout
    assert "spec.containers[0].env[0].value: a credential value" in validated.stdout
    assert RANDOM not in validated.stdout + validated.stderr


@pytest.mark.parametrize("value", CREDENTIAL_VALUES)
def test_a_credential_value_is_refused_whatever_the_name(
    project: Path, tmp_path: Path, run, value: str
) -> None:
    env = [{"name": "SETTING", "value": value}]
    rendered = render(project, run, [tfjob(env)])
    assert rendered.exit_code == 2, rendered.stderr
    assert "env[0].value: a credential value is not allowed in env" in rendered.stderr
    assert "Zq9S3CR3T" not in rendered.stderr + rendered.stdout
    validated = validate(tmp_path, run, pod(env))
    assert validated.exit_code == 1, validated.stdout
    assert "Zq9S3CR3T" not in validated.stdout + validated.stderr
    # The same value anywhere else (an annotation, an argument) is refused too.
    assert secret_value_kind(value) is not None


#: Names that only look like credentials, with the values they hold.
NOT_CREDENTIALS = [
    ("PARTITION_KEY", "user_id"), ("CACHE_KEY", "deps-v1-3f2a9c"), ("SORT_KEY", "timestamp"),
    ("S3_KEY", "data/train-00001.parquet"), ("MONKEY", "banana"), ("KEYBOARD", "us"),
    ("PASSES", "3"), ("BYPASS_CACHE", "true"), ("AUTHOR", "Ada Lovelace"),
    ("COMPASS", "north"), ("PWD", "/workspace"), ("NUM_PASS", "2"), ("ENABLE_AUTH", "true"),
    ("KUBE_AUTH", "oidc"), ("USE_JWT", "false"), ("GITHUB_PAT_FILE", "/run/secrets/pat"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "/var/secrets/google/key.json"),
    ("CREDENTIALS", "team/cos-hmac"), ("SSH_KEY", "/root/.ssh/id_ed25519"),
    ("TOKENIZER", "bert-base-uncased"), ("MODEL", "resnet50"), ("PATH", "/usr/bin:/bin"),
    ("HF_HUB_ENABLE_HF_TRANSFER", "1"), ("NOTE", "use a Bearer token from the Secret"),
]  # fmt: skip


def test_names_and_values_that_only_look_like_credentials_stay_allowed(
    project: Path, tmp_path: Path, run
) -> None:
    env = [{"name": name, "value": value} for name, value in NOT_CREDENTIALS]
    # References hold nothing themselves, whatever the name.
    env += [
        {"name": "DB_PASS", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
        {"name": "GITHUB_PAT", "value": "$(GH_TOKEN)"},
        {"name": "KAGGLE_KEY", "value": ""},
        {"name": "JWT", "value": "${JWT_FROM_FILE}"},
        {"name": "DSN", "value": "host=db user=u password=$(DB_PASS)"},
        {"name": "AUTH_HEADER", "value": "Bearer $(API_TOKEN)"},
    ]
    assert credential_problems(pod(env)) == []
    rendered = render(project, run, [tfjob(env)])
    assert rendered.exit_code == 0, rendered.stderr
    # (The Secret db is no file's: the reference check is not what this is about.)
    validated = validate(tmp_path, run, pod(env), "text", "--skip-check", "reference")
    assert validated.exit_code == 0, validated.stdout


def test_a_name_that_only_looks_like_one_can_still_be_listed(project: Path, run) -> None:
    job = tfjob([{"name": "DB_PASS", "value": "first-pass"}])
    job["metadata"]["annotations"] = {"kubetrain.io/not-credentials": "DB_PASS"}
    assert render(project, run, [job]).exit_code == 0


def test_the_new_names_are_refused_as_annotations_and_flags_too() -> None:
    doc = pod([])
    doc["metadata"]["annotations"] = {"example.com/signing-key": RANDOM}
    doc["spec"]["containers"][0]["args"] = ["--db-pass", RANDOM, f"--github-pat={RANDOM}"]
    found = [path for path, _ in credential_problems(doc)]
    assert found == [
        ("metadata", "annotations", "example.com/signing-key"),
        ("spec", "containers", 0, "args", 0),
        ("spec", "containers", 0, "args", 2),
    ]


# Words after which KEY, PASS, PAT... make a credential's name, and the value shapes.
_PREFIX = st.sampled_from(["DB", "MYSQL", "GITHUB", "APP", "X", "TEAM_A"])
_RANDOM_VALUES = st.text("abcdefghijkmnpqrstuvwxyz", min_size=2, max_size=6).map(
    lambda w: f"{w}4{w.upper()}7{w}2Q"
)


@settings(max_examples=200, deadline=None)
@given(
    prefix=_PREFIX,
    last=st.sampled_from(["PASS", "PWD", "PAT", "JWT", "PASSPHRASE", "SIGNING_KEY", "KAGGLE_KEY"]),
    separator=st.sampled_from(["_", "-", "."]),
    value=_RANDOM_VALUES,
    lower=st.booleans(),
)
def test_any_credential_name_with_a_random_value_is_refused(
    prefix: str, last: str, separator: str, value: str, lower: bool
) -> None:
    name = f"{prefix}{separator}{last}".replace("_", separator)
    name = name.lower() if lower else name
    assert is_credential_entry(name, value, frozenset())
    assert not is_credential_entry(name, value, frozenset({name}))  # listed: allowed
    for reference in ("", "$(DB_PASSWORD)", "${X}"):
        assert not is_credential_entry(name, reference, frozenset())


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.sampled_from(["PARTITION", "CACHE", "SORT", "S3", "OBJECT", "PRIMARY", "ROW"]),
    last=st.sampled_from(["KEY", "KEYS", "PASSES", "AUTHOR", "KEYBOARD", "BYPASS", "PATH"]),
    value=st.one_of(
        st.sampled_from(["user_id", "timestamp", "true", "3", "/data/x", "s3://b/k"]),
        st.from_regex(r"[a-z]{1,12}(-[a-z]{1,8}){0,3}", fullmatch=True),
    ),
)
def test_names_that_only_look_like_credentials_with_ordinary_values_are_allowed(
    prefix: str, last: str, value: str
) -> None:
    name = f"{prefix}_{last}"
    assert not is_credential_entry(name, value, frozenset())
    assert secret_value_kind(value) is None


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.sampled_from(["hf_", "ghp_", "gho_", "github_pat_", "glpat-", "sk-", "ya29."]),
    body=st.text("abcdefghijkmnpqrstuvwxyz", min_size=8, max_size=12).map(
        lambda w: f"{w}4{w.upper()}7{w}2Q{w}"
    ),
    before=st.sampled_from(["", "token: ", "x ", "=", "'", '"', "\t", "(", "hf "]),
    after=st.sampled_from(["", " ", "\n", "'", '"', ";", "&x=1", ")"]),
)
def test_any_token_in_a_service_form_is_refused_wherever_it_is(
    prefix: str, body: str, before: str, after: str
) -> None:
    value = f"{before}{prefix}{body}{after}"
    assert secret_value_kind(value) is not None, value
    doc = pod([{"name": "X", "value": value}])
    doc["metadata"]["annotations"] = {"example.com/note": value}
    doc["spec"]["containers"][0]["args"] = [value]
    assert len(credential_problems(doc)) == 3


# --- validate's prefilter misses none of them ---------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from([*CREDENTIAL_NAMES, "SETTING", "db.pass", "x-pat"]),
    value=st.sampled_from(
        [RANDOM, *(p.values[0] for p in CREDENTIAL_VALUES), *(p.values[0] for p in AUDIT_URLS)]
    ),
    encode=st.booleans(),
    style=st.sampled_from(["yaml", "json", "flow", "continued"]),
    data=st.data(),
)
def test_the_prefilter_misses_no_new_credential(
    name: str, value: str, encode: bool, style: str, data: st.DataObject
) -> None:
    """validate walks an object only when credential_words finds a hint in its file's text:
    every name, value and URL the new rules refuse leaves one, whether written plainly,
    percent-encoded or cut by a YAML line continuation."""
    if encode and "://" in value:
        value = _encode(data.draw, value, keep=":/")
    obj = pod([{"name": name, "value": value}])
    if not credential_problems(obj):
        return
    if style == "json":
        text = json.dumps(obj)
    elif style == "continued":
        cut = data.draw(st.integers(1, max(1, len(value) - 1)))
        spelt = json.dumps(value)[1:-1]
        spelt = spelt[:cut] + "\\\n  " + spelt[cut:] if "\\" not in spelt[cut - 1 : cut] else spelt
        text = yaml.safe_dump(pod([{"name": name, "value": "PLACEHOLDER"}])).replace(
            "PLACEHOLDER", '"' + spelt + '"'
        )
        if yaml.safe_load(text) != obj:
            return
    else:
        text = yaml.safe_dump(obj, default_flow_style=style == "flow")
    assert credential_words(text), text


# --- bounds -----------------------------------------------------------------------------------

#: Strings built to make a backtracking detector rescan a run from each of its characters.
HOSTILE_STRINGS = [
    "a" * 200_000 + "://x",
    "://" + "a" * 200_000 + ":b",
    "eyJ" * 70_000,
    "a=;" * 70_000,
    '"a":' * 50_000,
    "?a=" * 70_000,
    "bearer " * 30_000,
    "hf_" * 70_000,
    "AKIAIOSFODNN7EXAMPLE " + "A1b/" * 50_000,
    "%41" * 70_000,
    "-----BEGIN " * 20_000 + "PRIVATE KEY",
    "a://b@" * 35_000,
    "x=" + "'" * 200_000,
    "https://h/?" + "&pass" * 40_000,
]


#: Runs every detector on every hostile string (its index in argv) in a process of its own.
_DETECT = """
import sys
sys.path.insert(0, sys.argv[1])
from test_credential_detectors import HOSTILE_STRINGS
from kubetrain.models.secrets import has_url_password, is_credential_entry, secret_value_kind
from kubetrain.validate.engine import credential_words
for text in HOSTILE_STRINGS:
    secret_value_kind(text)
    has_url_password(text)
    credential_words(text)
    is_credential_entry("DB_PASS", text, frozenset())
print(len(HOSTILE_STRINGS))
"""


def test_the_detectors_are_linear() -> None:
    """Every detector on every 200 KB hostile string, in a child process given ten minutes: a
    linear scan of them all takes about a second, the quadratic one they replace took minutes
    for one string (no wall-clock bound is asserted but that hang guard)."""
    done = subprocess.run(
        [sys.executable, "-c", _DETECT, str(Path(__file__).parent)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(len(HOSTILE_STRINGS))


def test_a_percent_decoded_form_is_read_a_bounded_number_of_times() -> None:
    """Three rounds of decoding: ``%25253D`` (``=`` encoded three times) is still read."""
    nested = "https://h/x?token%25253DZq9S3CR3T"
    assert urllib.parse.unquote(urllib.parse.unquote(urllib.parse.unquote(nested))).endswith(
        "token=Zq9S3CR3T"
    )
    assert has_url_password(nested)
