"""The semantic checks: every rule has a passing and a failing fixture in tests/checks/, and the
checks run where they must (render refuses, validate finds each env's stack).

A fixture is a multi-document YAML file named ``<rule>.pass.yaml`` or ``<rule>[.<case>].fail.yaml``;
its ``# settings: {...}`` line gives stack settings (``kubetrain:`` keys without the prefix) and
each ``# expect: <path>: <message> (<rule>)`` line one finding, all of them and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubetrain.models import StackSettings
from kubetrain.models.errors import format_path
from kubetrain.validate import RULES, CheckSettings, Located, Validator, check_objects, read_objects

from conftest import REPO, UPSTREAM_LOCATION, needs_upstream_schemas
from helpers import objects, stack_from

FIXTURES = sorted((REPO / "tests" / "checks").glob("*.yaml"))


def header(path: Path, key: str) -> list[str]:
    prefix = f"# {key}: "
    return [
        line.removeprefix(prefix)
        for line in path.read_text().splitlines()
        if line.startswith(prefix)
    ]


def findings(path: Path) -> list[str]:
    settings_lines = header(path, "settings")
    settings = (
        StackSettings.model_validate(json.loads(settings_lines[0])) if settings_lines else None
    )
    items, early, _, _ = read_objects([str(path)])
    assert not early
    report = Validator((1, 33), [UPSTREAM_LOCATION]).validate(items)
    check_objects(items, report.results, CheckSettings.from_stack(settings))
    return [
        f"{format_path(f.path)}: {f.message} ({f.rule})" for r in report.results for f in r.findings
    ]


@needs_upstream_schemas
@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name.removesuffix(".yaml") for f in FIXTURES])
def test_fixture(fixture: Path) -> None:
    got = findings(fixture)
    expected = header(fixture, "expect")
    if fixture.name.endswith(".pass.yaml"):
        assert not expected, "a passing fixture expects nothing"
        assert got == []
    else:
        assert expected, "a failing fixture says what it expects"
        assert sorted(got) == sorted(expected)
        rule = fixture.name.split(".")[0]
        assert {line.rsplit("(", 1)[1].rstrip(")") for line in got} == {rule}


@needs_upstream_schemas
def test_a_gang_member_on_another_scheduler_is_a_warning_the_rest_errors() -> None:
    """Issue 26: Kubeflow Trainer runs its published Volcano example, whose pods keep the
    default scheduler: a warning (an error under --strict); a gang that never starts is not."""
    path = REPO / "tests" / "checks" / "gang-scheduling.fail.yaml"
    items, _, _, _ = read_objects([str(path)])
    report = Validator((1, 33), [UPSTREAM_LOCATION]).validate(items)
    check_objects(items, report.results, CheckSettings.from_stack(None))
    severity = {format_path(f.path): f.severity for r in report.results for f in r.findings}
    assert severity == {
        "spec.minMember": "error",
        "spec.schedulerName": "warning",
        'metadata.labels["scheduling.x-k8s.io/pod-group"]': "error",
    }


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_has_a_passing_and_a_failing_fixture(rule: str) -> None:
    names = {f.name for f in FIXTURES}
    assert f"{rule}.pass.yaml" in names
    assert any(n.startswith(f"{rule}.") and n.endswith(".fail.yaml") for n in names)


def test_skipped_rules_report_nothing(tmp_path: Path) -> None:
    items, _, _, _ = read_objects([str(REPO / "tests" / "checks" / "duplicate-env.fail.yaml")])
    # The rule alone (kubetrain's TFJob CRD makes env a keyed list: its schema finding would
    # remain).
    report = Validator((1, 33), schemas=False).validate(items)
    check_objects(items, report.results, CheckSettings(skip=frozenset({"duplicate-env"})))
    assert report.ok and not report.results[0].findings


JOB = """
config:
  kubetrain:namespace: ml
  kubetrain:podSecurity: %s
  kubetrain:jobs:
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {name: mnist}
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: 2
            template:
              spec:
                containers:
                  - name: tensorflow
                    image: tf:2
                    env: [{name: MODE, value: a}%s]
"""


def test_render_refuses_output_that_fails_a_check(project: Path, run) -> None:
    # A Secret the pods read that is neither rendered nor declared external: no single object
    # is wrong (the API server takes each), the rule sees the whole output.
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        JOB
        % ("baseline", ", {name: TOKEN, valueFrom: {secretKeyRef: {name: missing, key: token}}}")
    )
    result = run("render", cwd=project)
    assert result.exit_code == 1, result.stderr
    # FILE:LINE and field of the job document the objects copy the field from (where the user
    # can act), once for the job with the objects counted; never a file render did not write.
    assert (
        "stacks/Pulumi.dev.yaml:18: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.template"
        ".spec.containers[0].env[1].valueFrom.secretKeyRef.name: Secret ml/missing" in result.stderr
    )
    assert "(reference) [2 objects: Job ml/mnist-worker-0, Job ml/mnist-worker-1]" in (
        result.stderr
    )
    assert result.stderr.count("(reference)") == 1
    assert "rendered/" not in result.stderr
    assert not (project / "rendered").exists()


def test_render_refuses_at_load_time_what_the_api_server_would(project: Path, run) -> None:
    # A duplicate env var in a TFJob's template: refused with the stack file's line before
    # anything is built, as the API server would refuse the pods.
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        JOB % ("baseline", ", {name: MODE, value: b}")
    )
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert result.stderr == (
        "stacks/Pulumi.dev.yaml:18: config.kubetrain:jobs[0].spec.tfReplicaSpecs.Worker.template"
        ".spec.containers[0].env: duplicate entries for key name='MODE': items 0 and 1\n"
    )
    assert not (project / "rendered").exists()


def test_validate_uses_the_stack_of_each_rendered_env(project: Path, run) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text(JOB % ("restricted", ""))
    assert run("render", cwd=project).exit_code == 0
    pod = project / "rendered" / "dev" / "ml" / "job-mnist-worker-0.yaml"
    assert "runAsNonRoot: true" in pod.read_text()
    assert run("validate", cwd=project).exit_code == 0
    # A hand edit that drops what restricted needs fails against dev's stack...
    lines = pod.read_text().splitlines(keepends=True)
    pod.write_text("".join(x for x in lines if "allowPrivilegeEscalation" not in x))
    result = run("validate", cwd=project)
    assert result.exit_code == 1
    assert "allowPrivilegeEscalation must be false (pod-security)" in result.stdout
    # ... but not outside rendered/<env>, where the defaults (baseline) apply,
    elsewhere = project / "copy.yaml"
    elsewhere.write_text(pod.read_text())
    assert run("validate", "copy.yaml", cwd=project).exit_code == 0
    # unless a stack is named, and a rule can be skipped.
    assert run("validate", "copy.yaml", "--stack", "dev", cwd=project).exit_code == 1
    skipped = run("validate", "--skip-check", "pod-security", cwd=project)
    assert skipped.exit_code == 0, skipped.stdout
    unknown = run("validate", "--skip-check", "pod-securty", cwd=project)
    assert unknown.exit_code == 2 and "unknown rule 'pod-securty'" in unknown.stderr


@needs_upstream_schemas
def test_restricted_reaches_the_templates_of_an_operator_mode_tfjob(tmp_path: Path) -> None:
    job = yaml.safe_load((JOB % ("restricted", "")).split("kubetrain:jobs:\n", 1)[1])[0]
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    stack = stack_from(tmp_path, {"kubetrain:podSecurity": "restricted", "kubetrain:jobs": [job]})
    (tfjob,) = objects(stack)
    pod_spec = tfjob["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    assert pod_spec["securityContext"] == {
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    items = [Located(tfjob, "tfjob.yaml")]
    report = Validator((1, 33), [UPSTREAM_LOCATION]).validate(items)
    check_objects(items, report.results, CheckSettings.from_stack(stack.settings))
    assert report.ok, report.results[0].findings
    del pod_spec["containers"][0]["securityContext"]
    check_objects(items, report.results, CheckSettings.from_stack(stack.settings))
    assert {f.rule for f in report.results[0].findings} == {"pod-security"}


def test_a_finding_from_a_patched_field_points_into_the_patch(project: Path, run) -> None:
    """The reference a patch wrote is reported at the patch's line and field, naming the job it
    patched, once for all the objects built from it."""
    stack = JOB % ("baseline", "") + (
        "  kubetrain:patches:\n"
        "    - target: {kind: TFJob, name: mnist}\n"
        "      patch:\n"
        "        spec:\n"
        "          tfReplicaSpecs:\n"
        "            Worker:\n"
        "              template:\n"
        "                spec:\n"
        "                  volumes: [{name: data, persistentVolumeClaim: {claimName: nowhere}}]\n"
        "      adds: true\n"
    )
    (project / "stacks" / "Pulumi.dev.yaml").write_text(stack)
    result = run("render", cwd=project)
    assert result.exit_code == 1, result.stderr
    (line,) = [x for x in result.stderr.splitlines() if "(reference)" in x]
    assert line.startswith("stacks/Pulumi.dev.yaml:27: config.kubetrain:patches[0].patch.spec")
    assert "PersistentVolumeClaim ml/nowhere" in line
    assert line.endswith("[2 objects: Job ml/mnist-worker-0, Job ml/mnist-worker-1]")
