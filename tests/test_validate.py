"""``kubetrain validate``: strict schemas per Kubernetes version, kubeconform schema locations,
missing schemas, duplicates, line numbers and the three report formats."""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml

from kubetrain.validate.schemas import location_path

from conftest import REPO, UPSTREAM_LOCATION, UPSTREAM_SCHEMAS, needs_upstream_schemas

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "i:1"}]},
}


def write(path: Path, *docs: dict, header: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + yaml.safe_dump_all(docs, sort_keys=False))
    return path


def test_valid_objects_pass(tmp_path: Path, run) -> None:
    write(tmp_path / "pod.yaml", POD)
    result = run("validate", str(tmp_path), cwd=tmp_path)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.strip() == "Summary: 1 object: 1 valid, 0 invalid, 0 errors, 0 skipped"


def test_unknown_field_is_invalid_with_file_line_and_path(tmp_path: Path, run) -> None:
    bad = json.loads(json.dumps(POD))
    bad["metadata"]["name"] = "q"
    bad["spec"]["containers"][0]["imagePullPolicy"] = 7
    bad["spec"]["containers"][0]["extra"] = 1
    lines = write(tmp_path / "a.yaml", POD, bad).read_text().splitlines()
    result = run("validate", "a.yaml", cwd=tmp_path)
    assert result.exit_code == 1
    found = re.search(
        r"^a\.yaml:(\d+): spec\.containers\[0\]\.extra: unknown field 'extra' \(schema\) "
        r"\[Pod ns/q\]$",
        result.stdout,
        re.M,
    )
    assert found, result.stdout
    # The unknown key's own line, in the second document.
    assert lines[int(found[1]) - 1].strip() == "extra: 1" and int(found[1]) > 10
    policy = re.search(
        r"^a\.yaml:(\d+): spec\.containers\[0\]\.imagePullPolicy: ", result.stdout, re.M
    )
    assert policy and lines[int(policy[1]) - 1].strip() == "imagePullPolicy: 7"
    assert "Summary: 2 objects: 1 valid, 1 invalid" in result.stdout


def test_version_comes_from_the_header_or_the_flag(tmp_path: Path, run) -> None:
    # Pod-level resources exist from Kubernetes 1.32 on.
    pod = json.loads(json.dumps(POD))
    pod["spec"]["resources"] = {"limits": {"cpu": "1"}}
    write(tmp_path / "new.yaml", pod, header="# kubernetes-version: 1.33\n")
    write(tmp_path / "old" / "pod.yaml", pod, header="# kubernetes-version: 1.31\n")
    assert run("validate", "new.yaml", cwd=tmp_path).exit_code == 0
    old = run("validate", "old", cwd=tmp_path)
    assert old.exit_code == 1 and "spec.resources: unknown field 'resources'" in old.stdout
    assert run("validate", "old", "--kubernetes-version", "1.33", cwd=tmp_path).exit_code == 0
    assert run("validate", "new.yaml", "--kubernetes-version", "1.31", cwd=tmp_path).exit_code == 1
    bad = run("validate", "new.yaml", "--kubernetes-version", "2.0", cwd=tmp_path)
    assert bad.exit_code == 2 and "Kubernetes 2.0 has no bundled schemas" in bad.stderr


TFJOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "t", "namespace": "ns"},
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i:1"}]}},
            }
        }
    },
}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}


def test_missing_schema_is_an_error_unless_ignored(tmp_path: Path, run) -> None:
    write(tmp_path / "w.yaml", WIDGET)
    result = run("validate", "w.yaml", cwd=tmp_path)
    assert result.exit_code == 1
    assert (
        "no schema for example.com/v1 Widget" in result.stdout
        and "(schema-missing)" in result.stdout
    )
    ignored = run("validate", "w.yaml", "--ignore-missing-schemas", cwd=tmp_path)
    assert ignored.exit_code == 0 and "1 skipped" in ignored.stdout


@needs_upstream_schemas
def test_schema_location_template_finds_upstream_crd_schemas(tmp_path: Path, run) -> None:
    bad = json.loads(json.dumps(TFJOB))
    bad["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = 7
    write(tmp_path / "tf.yaml", TFJOB)
    write(tmp_path / "bad.yaml", bad)
    assert (
        run("validate", "tf.yaml", "--schema-location", UPSTREAM_LOCATION, cwd=tmp_path).exit_code
        == 0
    )
    result = run("validate", "bad.yaml", "--schema-location", UPSTREAM_LOCATION, cwd=tmp_path)
    assert result.exit_code == 1
    assert 'spec.tfReplicaSpecs.Worker.restartPolicy: 7 is not of type "string"' in result.stdout


def test_kubeconform_directory_layout_and_default_keyword(tmp_path: Path, run) -> None:
    folder = tmp_path / "schemas" / "v1.33.0-standalone-strict"
    folder.mkdir(parents=True)
    (folder / "widget-example-v1.json").write_text(
        json.dumps({"type": "object", "required": ["spec"]})
    )
    write(tmp_path / "w.yaml", WIDGET, POD)
    result = run(
        "validate",
        "w.yaml",
        "--schema-location",
        "default",
        "--schema-location",
        str(tmp_path / "schemas"),
        cwd=tmp_path,
    )
    assert result.exit_code == 1
    assert '"spec" is a required property' in result.stdout
    assert "1 valid, 1 invalid" in result.stdout


def test_location_template_variables_follow_kubeconform() -> None:
    tpl = "{{ .NormalizedKubernetesVersion }}{{ .StrictSuffix }}/{{ .Group }}/{{ .ResourceKind }}{{ .KindSuffix }}_{{.ResourceAPIVersion}}"
    assert (
        location_path(tpl, "apps/v1", "Deployment", (1, 33))
        == "v1.33.0-strict/apps/deployment-apps-v1_v1"
    )
    assert location_path(tpl, "v1", "Pod", (1, 30)) == "v1.30.0-strict/v1/pod-v1_v1"
    assert (
        location_path(tpl, "kubeflow.org/v1", "TFJob", (1, 33))
        == "v1.33.0-strict/kubeflow.org/tfjob-kubeflow-v1_v1"
    )


def test_bad_template_is_a_usage_error(tmp_path: Path, run) -> None:
    write(tmp_path / "p.yaml", POD)
    result = run("validate", "p.yaml", "--schema-location", "x/{{ .Nope }}.json", cwd=tmp_path)
    assert result.exit_code == 2 and "unknown template variable Nope" in result.stderr


@needs_upstream_schemas
def test_http_schema_location(tmp_path: Path, run) -> None:
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(UPSTREAM_SCHEMAS)
    )
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{{{{.Group}}}}/{{{{.ResourceKind}}}}_{{{{.ResourceAPIVersion}}}}.json"
        write(tmp_path / "tf.yaml", TFJOB, WIDGET)
        result = run(
            "validate",
            "tf.yaml",
            "--schema-location",
            url,
            "--ignore-missing-schemas",
            cwd=tmp_path,
        )
        assert result.exit_code == 0, result.stdout
        assert "1 valid, 0 invalid, 0 errors, 1 skipped" in result.stdout
    finally:
        server.shutdown()
        server.server_close()


def test_duplicate_objects_are_errors(tmp_path: Path, run) -> None:
    write(tmp_path / "a.yaml", POD)
    write(tmp_path / "b.yaml", POD)
    result = run("validate", str(tmp_path), cwd=tmp_path)
    assert result.exit_code == 1
    assert (
        "b.yaml:4: metadata.name: Pod ns/p is also defined in a.yaml (duplicate)" in result.stdout
    )


def test_documents_that_are_not_objects(tmp_path: Path, run) -> None:
    (tmp_path / "x.yaml").write_text(
        "- 1\n---\nkind: Pod\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\nmetadata: {name: b}\n"
    )
    result = run("validate", "x.yaml", cwd=tmp_path)
    assert result.exit_code == 1
    assert "duplicate key 'metadata'" in result.stdout


def test_missing_path_is_a_usage_error(tmp_path: Path, run) -> None:
    result = run("validate", "nope", cwd=tmp_path)
    assert result.exit_code == 2 and "nope: no such file or folder" in result.stderr


def test_json_output_has_kubeconforms_shape(tmp_path: Path, run) -> None:
    bad = json.loads(json.dumps(POD))
    bad["metadata"]["name"] = "q"
    bad["spec"]["containers"][0]["extra"] = 1
    write(tmp_path / "a.yaml", POD, bad)
    result = run("validate", "a.yaml", "--output", "json", cwd=tmp_path)
    data = json.loads(result.stdout)
    assert data["summary"] == {"valid": 1, "invalid": 1, "error": 0, "skipped": 0, "warnings": 0}
    statuses = [r["status"] for r in data["resources"]]
    assert statuses == ["statusValid", "statusInvalid"]
    assert data["resources"][1]["validationErrors"][0]["path"] == "spec.containers[0].extra"


def test_junit_output(tmp_path: Path, run) -> None:
    write(tmp_path / "a.yaml", POD, WIDGET)
    result = run("validate", "a.yaml", "--output", "junit", cwd=tmp_path)
    assert result.exit_code == 1
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("errors") == "1"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["Pod ns/p", "Widget w"]
    assert cases[1].find("error") is not None


def test_kustomization_files_are_skipped(tmp_path: Path, run) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    write(tmp_path / "pod.yaml", POD)
    result = run("validate", str(tmp_path), cwd=tmp_path)
    assert result.exit_code == 0 and "1 valid, 0 invalid, 0 errors, 1 skipped" in result.stdout


RENDERED = sorted(
    p.relative_to(REPO / "rendered").as_posix()
    for p in [*(REPO / "rendered").iterdir(), *(REPO / "rendered" / "clusters").iterdir()]
    if p.is_dir() and p.name != "clusters"
)


def test_the_rendered_trees_include_gitops_delivery() -> None:
    assert {"dev", "staging", "prod", "clusters/dev", "clusters/prod"} <= set(RENDERED)


@needs_upstream_schemas
@pytest.mark.parametrize("env_name", RENDERED)
def test_every_rendered_env_validates_against_upstream_schemas(env_name: str, run) -> None:
    result = run(
        "validate", f"rendered/{env_name}", "--schema-location", UPSTREAM_LOCATION, cwd=REPO
    )
    assert result.exit_code == 0, result.stdout
    assert " 0 invalid, 0 errors" in result.stdout


def test_reports_never_repeat_secret_values(tmp_path: Path, run) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "stringData": {"key": 12345},
    }
    pod = json.loads(json.dumps(POD))
    pod["metadata"]["name"] = "q"
    pod["spec"]["containers"][0]["env"] = [{"name": "TOKEN", "value": 987654}]
    write(tmp_path / "a.yaml", secret, pod)
    result = run("validate", "a.yaml", "--skip-check", "secret-data", cwd=tmp_path)
    assert result.exit_code == 1
    assert (
        "stringData.key: the value given (a number, not shown) is not of type null or string"
        in result.stdout
    )
    assert (
        "env[0].value: the value given (a number, not shown) is not of type null or string"
        in result.stdout
    )
    assert "12345" not in result.stdout and "987654" not in result.stdout
