"""``--engine kubeconform``: the command line kubetrain builds, kubeconform's JSON report (from
fixtures in its documented format), the merge into kubetrain's report, the schemas kubetrain
hands it, and what happens when it is missing."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from kubetrain.validate import ObjectResult, Report
from kubetrain.validate.kubeconform import (
    KubeconformResult,
    build_command,
    kubeconform_schemas,
    merge_results,
    parse_output,
    standalone_schema,
)

from conftest import REPO

FIXTURES = REPO / "tests" / "kubeconform"


def test_command_line() -> None:
    cmd = build_command(
        ["rendered/dev/ml/pod-a.yaml", "rendered/dev/ml/pod-b.yaml"],
        version=(1, 31),
        locations=["schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"],
        kubetrain_location="/tmp/k/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
        ignore_missing_schemas=True,
        executable="/usr/bin/kubeconform",
    )
    assert cmd == [
        "/usr/bin/kubeconform",
        "-strict",
        "-summary",
        "-output",
        "json",
        "-verbose",
        "-kubernetes-version",
        "1.31.0",
        "-schema-location",
        "schemas/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
        "-schema-location",
        "default",
        "-schema-location",
        "/tmp/k/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
        "-ignore-missing-schemas",
        "rendered/dev/ml/pod-a.yaml",
        "rendered/dev/ml/pod-b.yaml",
    ]


def test_an_explicit_default_location_keeps_its_place() -> None:
    cmd = build_command(["a.yaml"], version=(1, 33), locations=["default", "mirror/"])
    locations = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == "-schema-location"]
    assert locations == ["default", "mirror/"]
    assert "-ignore-missing-schemas" not in cmd and cmd[-1] == "a.yaml"


def test_parse_current_output() -> None:
    results = parse_output((FIXTURES / "verbose-summary.json").read_text())
    assert [(r.filename, r.status) for r in results] == [
        ("rendered/dev/ml/pod-a.yaml", "valid"),
        ("rendered/dev/ml/pod-b.yaml", "invalid"),
        ("rendered/dev/ml/widget-w.yaml", "error"),
        ("rendered/dev/ml/gadget-g.yaml", "skipped"),
    ]
    assert results[1].errors == (
        ("/spec/containers/0", "additionalProperties 'imagePullPolicyy' not allowed"),
        ("/metadata/labels/app.kubernetes.io~1name", "expected string, but got number"),
    )
    assert results[1].name == "b" and results[1].version == "v1"


def test_parse_the_older_output_of_the_readme() -> None:
    (result,) = parse_output((FIXTURES / "readme-0.4.json").read_text())
    assert result == KubeconformResult(
        "fixtures/invalid.yaml",
        "ReplicationController",
        "",
        "v1",
        "invalid",
        "Additional property templates is not allowed - Invalid type. Expected: [integer,null], given: string",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("Summary: 1 resource found", "did not print JSON", id="text-output"),
        pytest.param('{"summary": {}}', "no resources list", id="no-resources"),
        pytest.param(
            '{"resources": [{"status": "statusOdd"}]}', "unknown kubeconform status", id="status"
        ),
    ],
)
def test_parse_rejects_what_is_not_a_report(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_output(text)


def result(file: str, kind: str, name: str, version: str = "v1") -> ObjectResult:
    return ObjectResult(file, 0, version, kind, "ml", name, "valid")


def test_merge_into_kubetrains_report() -> None:
    report = Report(
        [
            result("rendered/dev/ml/pod-a.yaml", "Pod", "a"),
            result("rendered/dev/ml/pod-b.yaml", "Pod", "b"),
            result("rendered/dev/ml/widget-w.yaml", "Widget", "w", "example.com/v1"),
            result("rendered/dev/ml/gadget-g.yaml", "Gadget", "g", "example.com/v1"),
        ]
    )
    merge_results(report, parse_output((FIXTURES / "verbose-summary.json").read_text()))
    a, b, w, g = report.results
    assert (a.status, a.findings) == ("valid", [])
    assert b.status == "invalid"
    assert [(f.rule, f.path, f.message) for f in b.findings] == [
        (
            "kubeconform",
            ("spec", "containers", 0),
            "additionalProperties 'imagePullPolicyy' not allowed",
        ),
        (
            "kubeconform",
            ("metadata", "labels", "app.kubernetes.io/name"),
            "expected string, but got number",
        ),
    ]
    assert w.status == "error" and w.findings[0].message == "could not find schema for Widget"
    assert g.status == "skipped"
    assert report.counts() == {"valid": 1, "invalid": 1, "error": 1, "skipped": 1}


def test_a_result_kubetrain_did_not_see_is_added() -> None:
    report = Report()
    merge_results(report, parse_output((FIXTURES / "readme-0.4.json").read_text()))
    (added,) = report.results
    assert (added.file, added.kind, added.status) == (
        "fixtures/invalid.yaml",
        "ReplicationController",
        "invalid",
    )


PODGROUP = {
    "apiVersion": "scheduling.volcano.sh/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "mnist", "namespace": "ml", "labels": {"a": "b"}},
    "spec": {"minMember": 2, "queue": "default", "minResources": {"cpu": "1500m"}},
}


def test_generated_schemas_are_standalone_and_strict() -> None:
    files = kubeconform_schemas((1, 33))
    assert "scheduling.volcano.sh/podgroup_v1beta1.json" in files
    assert "scheduling.x-k8s.io/podgroup_v1alpha1.json" in files
    assert "kubeflow.org/tfjob_v1.json" in files
    schema = json.loads(files["scheduling.volcano.sh/podgroup_v1beta1.json"])
    assert "https://kubernetes.io/api" not in json.dumps(schema)  # no ref to fetch
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(PODGROUP)
    bad = json.loads(json.dumps(PODGROUP))
    bad["metadata"]["labels"]["a"] = 1  # ObjectMeta is Kubernetes' own, strict definition
    bad["spec"]["minResources"]["cpu"] = "lots"
    messages = sorted(e.message for e in validator.iter_errors(bad))
    assert any("1 is not of type 'string'" in m for m in messages), messages
    assert any("'lots'" in m for m in messages), messages
    tfjob = standalone_schema("kubeflow.org/v1", "TFJob", (1, 33))
    job = yaml.safe_load((REPO / "stacks" / "kubeflow-examples" / "dist-mnist.yaml").read_text())
    job["metadata"]["namespace"] = "ml"
    jsonschema.Draft202012Validator(tfjob).validate(job)
    job["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = (
        "x"
    )
    assert not jsonschema.Draft202012Validator(tfjob).is_valid(job)


def fake_kubeconform(folder: Path, report: str) -> Path:
    """A stand-in kubeconform that records its arguments and the schema files it was given,
    then prints ``report``."""
    script = folder / "kubeconform"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        "args = sys.argv[1:]\n"
        "locations = [args[i + 1] for i, a in enumerate(args) if a == '-schema-location']\n"
        "ours = pathlib.Path(locations[-1].split('{{')[0])\n"
        "files = sorted(p.relative_to(ours).as_posix() for p in ours.rglob('*.json'))\n"
        f"log = pathlib.Path({str(folder / 'calls.jsonl')!r})\n"
        "with log.open('a') as f:\n"
        "    f.write(json.dumps({'args': args, 'schemas': files}) + '\\n')\n"
        f"print(open({str(folder / 'report.json')!r}).read())\n"
        "sys.exit(1)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (folder / "report.json").write_text(report)
    return script


def test_validate_with_kubeconform_merges_its_report(
    tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    work = tmp_path / "work"
    (work / "new").mkdir(parents=True)
    (work / "old").mkdir()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "b", "namespace": "ml"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    (work / "new" / "pod-b.yaml").write_text("# kubernetes-version: 1.33\n" + yaml.safe_dump(pod))
    other = {**pod, "metadata": {"name": "c", "namespace": "ml"}}
    (work / "old" / "pod-c.yaml").write_text("# kubernetes-version: 1.31\n" + yaml.safe_dump(other))
    report = {
        "resources": [
            {
                "filename": "new/pod-b.yaml",
                "kind": "Pod",
                "name": "b",
                "version": "v1",
                "status": "statusInvalid",
                "msg": "m",
                "validationErrors": [{"path": "/spec/containers/0/image", "msg": "bad image"}],
            },
        ],
        "summary": {"valid": 0, "invalid": 1, "errors": 0, "skipped": 0},
    }
    fake_kubeconform(bin_dir, json.dumps(report))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = run(
        "validate", "new", "old", "--engine", "kubeconform", "--schema-location", "mine/", cwd=work
    )
    assert result.exit_code == 1
    assert (
        "new/pod-b.yaml:9: spec.containers[0].image: bad image (kubeconform) [Pod ml/b]"
        in result.stdout
    )
    assert "Summary: 2 objects: 1 valid, 1 invalid, 0 errors, 0 skipped" in result.stdout
    calls = [json.loads(line) for line in (bin_dir / "calls.jsonl").read_text().splitlines()]
    # One run per Kubernetes version, each with its files.
    assert [
        (c["args"][c["args"].index("-kubernetes-version") + 1], c["args"][-1]) for c in calls
    ] == [
        ("1.31.0", "old/pod-c.yaml"),
        ("1.33.0", "new/pod-b.yaml"),
    ]
    assert calls[0]["args"][:6] == [
        "-strict",
        "-summary",
        "-output",
        "json",
        "-verbose",
        "-kubernetes-version",
    ]
    locations = [
        calls[0]["args"][i + 1] for i, a in enumerate(calls[0]["args"]) if a == "-schema-location"
    ]
    assert locations[:2] == ["mine/", "default"]
    assert locations[2].endswith("/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json")
    assert "scheduling.volcano.sh/podgroup_v1beta1.json" in calls[0]["schemas"]
    # Semantic checks still run with the kubeconform engine.
    assert "(schema)" not in result.stdout


def test_a_failing_kubeconform_is_an_error_in_the_report(
    tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubeconform"
    script.write_text("#!/bin/sh\necho 'failed initialising schema cache' >&2\nexit 3\n")
    script.chmod(0o755)
    (tmp_path / "p.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})
    )
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = run("validate", "p.yaml", "--engine", "kubeconform", cwd=tmp_path)
    assert result.exit_code == 1
    assert (
        "kubeconform failed (exit 3): failed initialising schema cache (kubeconform)"
        in result.stdout
    )


def test_missing_kubeconform_is_a_usage_error(
    tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    (tmp_path / "p.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = run("validate", "p.yaml", "--engine", "kubeconform", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr.startswith("--engine: kubeconform is not on PATH: install it")
    assert "or use --engine builtin" in result.stderr
