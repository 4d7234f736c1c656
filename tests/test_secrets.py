"""Shared secret handling: ExternalSecrets in render mode, credential markers for Pulumi, and no
secret material anywhere under rendered/."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.builders import BuildContext
from kubetrain.builders.registry import BuildProblem
from kubetrain.builders.secrets import (
    CREDENTIAL_MARKER,
    CredentialRef,
    SecretSpec,
    credential_marker,
    marker_ref,
    pull_secret_spec,
    secret_manifests,
)
from kubetrain.models.secrets import ExternalSecret, looks_like_credential
from kubetrain.models.stack import StackSettings
from kubetrain.validate import Located, Validator

from conftest import REPO, UPSTREAM_LOCATION, needs_upstream_schemas

STORE = StackSettings.model_validate({"secretStore": {"kind": "SecretStore", "name": "vault"}})
DATA = {
    "user": CredentialRef("db", "username"),
    "access-key": CredentialRef("cos", "access-key"),
    ".dockerconfigjson": CredentialRef("reg", "dockerconfigjson"),
    "secret-key": CredentialRef("cos", "secret-key"),
}


def spec(data: dict[str, CredentialRef] = DATA, **kw: Any) -> SecretSpec:
    return SecretSpec(
        name=kw.get("name", "creds"),
        namespace="ml",
        type=kw.get("type", "Opaque"),
        labels=kw.get("labels", {"app.kubernetes.io/managed-by": "kubetrain"}),
        data=data,
        field=("spec", "x"),
    )


def test_render_target_is_an_external_secret_creating_the_secret() -> None:
    (es,) = secret_manifests(spec(type="ibm/ibmc-s3fs"), BuildContext(STORE, "render"))
    assert es == {
        "apiVersion": "external-secrets.io/v1",
        "kind": "ExternalSecret",
        "metadata": {
            "name": "creds",
            "namespace": "ml",
            "labels": {"app.kubernetes.io/managed-by": "kubetrain"},
        },
        "spec": {
            "secretStoreRef": {"kind": "SecretStore", "name": "vault"},
            "target": {
                "name": "creds",
                "creationPolicy": "Owner",
                "template": {
                    "type": "ibm/ibmc-s3fs",
                    "metadata": {"labels": {"app.kubernetes.io/managed-by": "kubetrain"}},
                },
            },
            "data": [
                {
                    "secretKey": ".dockerconfigjson",
                    "remoteRef": {"key": "reg", "property": "dockerconfigjson"},
                },
                {"secretKey": "access-key", "remoteRef": {"key": "cos", "property": "access-key"}},
                {"secretKey": "secret-key", "remoteRef": {"key": "cos", "property": "secret-key"}},
                {"secretKey": "user", "remoteRef": {"key": "db", "property": "username"}},
            ],
        },
    }


def test_remote_refs_do_not_depend_on_the_order_keys_were_given() -> None:
    ctx = BuildContext(STORE, "render")
    outputs = {
        repr(secret_manifests(spec(dict(order)), ctx))
        for order in itertools.permutations(DATA.items())
    }
    assert len(outputs) == 1
    pulumi = {
        repr(secret_manifests(spec(dict(order)), BuildContext(STORE, "pulumi")))
        for order in itertools.permutations(DATA.items())
    }
    assert len(pulumi) == 1


def test_pulumi_target_is_a_secret_with_markers() -> None:
    (secret,) = secret_manifests(spec(type="ibm/ibmc-s3fs"), BuildContext(STORE, "pulumi"))
    assert secret["apiVersion"] == "v1" and secret["kind"] == "Secret"
    assert secret["type"] == "ibm/ibmc-s3fs"
    assert "data" not in secret
    assert secret["stringData"]["access-key"] == {
        CREDENTIAL_MARKER: {"name": "cos", "key": "access-key"}
    }
    assert {marker_ref(v) for v in secret["stringData"].values()} == set(DATA.values())


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (credential_marker(CredentialRef("a", "b")), CredentialRef("a", "b")),
        ("plain", None),
        ({CREDENTIAL_MARKER: {"name": "a"}}, None),
        ({CREDENTIAL_MARKER: {"name": "a", "key": "b"}, "x": 1}, None),
    ],
    ids=["marker", "string", "incomplete", "extra-key"],
)
def test_marker_ref(value: Any, expected: CredentialRef | None) -> None:
    assert marker_ref(value) == expected


def test_render_without_a_secret_store_is_an_input_error() -> None:
    with pytest.raises(BuildProblem, match=r"needs Secret ml/creds, .* kubetrain:secretStore") as e:
        secret_manifests(spec(), BuildContext(StackSettings(), "render"))
    assert e.value.path == ("spec", "x")


def test_pull_secret_spec() -> None:
    pull = pull_secret_spec("regcred", "ml", "registry-creds")
    assert pull.type == "kubernetes.io/dockerconfigjson"
    assert dict(pull.data) == {
        ".dockerconfigjson": CredentialRef("registry-creds", "dockerconfigjson")
    }
    assert "app.kubernetes.io/instance" not in pull.labels  # shareable by several jobs


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("accessKey", True),
        ("secret-key", True),
        ("apiKey", True),
        ("password", True),
        ("accessToken", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("COS_APIKEY", True),
        ("RESULT_STORE_USERNAME", True),
        ("HF_TOKEN", True),
        ("credentials", False),
        ("bucket", False),
        ("MODEL_DIR", False),
        ("keyPrefix", False),
    ],
)
def test_looks_like_credential(name: str, expected: bool) -> None:
    assert looks_like_credential(name) is expected


# --- validation ------------------------------------------------------------------------------


def rendered_external_secrets() -> list[dict]:
    out = []
    for path in sorted((REPO / "rendered").rglob("*.yaml")):
        out += [
            d
            for d in yaml.safe_load_all(path.read_text())
            if d and d.get("kind") == "ExternalSecret"
        ]
    return out


@needs_upstream_schemas
def test_rendered_external_secrets_validate_against_the_upstream_schema(run) -> None:
    assert rendered_external_secrets(), "the repository stacks render no ExternalSecret"
    files = [
        str(p.relative_to(REPO)) for p in sorted((REPO / "rendered").rglob("externalsecret-*.yaml"))
    ]
    result = run("validate", *files, "--schema-location", UPSTREAM_LOCATION, "--output", "json")
    assert result.exit_code == 0, result.stdout
    assert '"statusValid"' in result.stdout and '"statusInvalid"' not in result.stdout
    # The schema used was the upstream CRD's, not kubetrain's own model.
    validator = Validator((1, 33), [UPSTREAM_LOCATION])
    _, origin = validator.catalog((1, 33)).lookup("external-secrets.io/v1", "ExternalSecret")
    assert origin.endswith("external-secrets.io/externalsecret_v1.json")


@needs_upstream_schemas
def test_kubetrain_validates_external_secrets_without_extra_locations(tmp_path: Path, run) -> None:
    good = rendered_external_secrets()[0]
    bad = yaml.safe_load(yaml.safe_dump(good))
    bad["metadata"]["name"] = "bad"
    bad["spec"]["data"][0]["remoteRef"]["proprety"] = "typo"
    (tmp_path / "es.yaml").write_text(yaml.safe_dump_all([good, bad]))
    result = run("validate", "es.yaml", cwd=tmp_path)
    assert result.exit_code == 1, result.stdout
    assert "1 valid, 1 invalid" in result.stdout
    assert "proprety" in result.stdout
    # The same object is rejected by the upstream schema too: the two agree.
    upstream = run("validate", "es.yaml", "--schema-location", UPSTREAM_LOCATION, cwd=tmp_path)
    assert upstream.exit_code == 1 and "1 valid, 1 invalid" in upstream.stdout


def test_external_secret_model_round_trips_rendered_objects() -> None:
    for obj in rendered_external_secrets():
        model = ExternalSecret.model_validate(obj)
        assert model.model_dump(by_alias=True, exclude_none=True) == obj


@needs_upstream_schemas
def test_generated_external_secrets_validate_upstream_for_each_secret_type() -> None:
    upstream = Validator((1, 33), [UPSTREAM_LOCATION])
    ctx = BuildContext(STORE, "render")
    objs = [
        *secret_manifests(spec(type="ibm/ibmc-s3fs"), ctx),
        *secret_manifests(pull_secret_spec("regcred", "ml", "regcred"), ctx),
        *secret_manifests(spec(labels={}, name="unlabelled"), ctx),
    ]
    report = upstream.validate(Located(o, "es.yaml") for o in objs)
    assert report.ok, [r.findings for r in report.results]
    assert all(r.status == "valid" for r in report.results)


# --- no secret material under rendered/ ----------------------------------------------------------


def secrets_with_values(folder: Path) -> list[str]:
    """Files under ``folder`` holding a Secret with ``data`` or ``stringData``."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in (".yaml", ".yml", ".json"):
            for doc in yaml.safe_load_all(path.read_text()):
                if (
                    isinstance(doc, dict)
                    and doc.get("kind") == "Secret"
                    and (doc.get("data") or doc.get("stringData"))
                ):
                    found.append(str(path.relative_to(folder)))
    return found


def test_no_rendered_file_holds_a_secret_with_values() -> None:
    files = [p for p in (REPO / "rendered").rglob("*") if p.is_file()]
    assert len(files) > 10
    assert secrets_with_values(REPO / "rendered") == []


def test_the_scan_finds_a_secret_with_values(tmp_path: Path) -> None:
    (tmp_path / "ns").mkdir()
    (tmp_path / "ns" / "secret-x.yaml").write_text(
        "# header\napiVersion: v1\nkind: Secret\nmetadata: {name: x}\nstringData: {k: v}\n"
    )
    (tmp_path / "ns" / "secret-empty.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: e}\ntype: Opaque\n"
    )
    assert secrets_with_values(tmp_path) == ["ns/secret-x.yaml"]


CREDENTIAL_FIXTURES = sorted((REPO / "tests" / "bad").glob("learner-credential*.yaml"))
#: Secret-looking values written in those fixtures; none may reach the output.
FIXTURE_VALUES = (
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI",
    "0viPHOY7LbLNa9eLftrtHPpTjoGv6hbLD1QalRXikliJ",
)


@pytest.mark.parametrize("case", CREDENTIAL_FIXTURES, ids=[c.stem for c in CREDENTIAL_FIXTURES])
def test_credential_values_in_job_documents_are_never_echoed(
    case: Path, project: Path, run
) -> None:
    text = case.read_text()
    assert any(v in text for v in FIXTURE_VALUES)
    (project / "stacks" / "Pulumi.bad.yaml").write_text(text)
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "a credential value is not allowed" in result.stderr
    assert not any(v in result.stderr + result.stdout for v in FIXTURE_VALUES)


# --- passwords inside URLs ----------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kubetrain.models.secrets import credential_problems, has_url_password  # noqa: E402

_WORD = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_.~", min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(
    scheme=st.sampled_from(["postgresql", "mysql", "https", "redis", "amqp", "s3+http"]),
    user=_WORD,
    password=_WORD.map(lambda w: f"Pw{w}!9"),
    host=_WORD,
    where=st.sampled_from(["env", "args", "command-line"]),
)
def test_a_url_with_a_password_is_refused_wherever_a_pod_reads_it(
    scheme: str, user: str, password: str, host: str, where: str
) -> None:
    url = f"{scheme}://{user}:{password}@{host}/db"
    container: dict = {"name": "main", "image": "app:1"}
    if where == "env":
        container["env"] = [{"name": "DATABASE_URL", "value": url}]
    elif where == "args":
        container["args"] = ["--db", url]
    else:
        container["command"] = ["sh", "-c", f"connect {url}"]
    found = credential_problems({"spec": {"template": {"spec": {"containers": [container]}}}})
    assert found, url
    assert all(password not in message for _, message in found)
    assert all("scheme://user:password@host" in message for _, message in found)


@pytest.mark.parametrize(
    ("value", "refused"),
    [
        ("postgresql://u:pw@db:5432/app", True),
        ("postgresql://u:$(DB_PASSWORD)@db/app", False),
        ("postgresql://u@db/app", False),
        ("https://example.com/a:b@c", False),
        ("http://[::1]:8080/x", False),
        ("not a url: user:pw@host", False),
    ],
)
def test_url_passwords(value: str, refused: bool) -> None:
    assert has_url_password(value) is refused
