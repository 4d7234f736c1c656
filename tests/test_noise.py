"""Less noise, all at once: the errors of loading and of building are reported in one run; a
warning of one job document is said once however many environments render it; the example
stacks render without a warning; a published example's namespace is not taken over silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from conftest import REPO

JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {name}
{namespace}spec:
  runPolicy: {{ttlSecondsAfterFinished: {ttl}}}
  pytorchReplicaSpecs:
    Master:
      replicas: {replicas}
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/pt:{tag}
"""


def job(
    name: str, *, replicas: int = 1, ttl: str = "null", tag: str = "1", namespace: str = ""
) -> str:
    ns = f"  namespace: {namespace}\n" if namespace else ""
    return JOB.format(name=name, replicas=replicas, ttl=ttl, tag=tag, namespace=ns)


def stack(project: Path, env: str, files: list[str], **config: object) -> None:
    data = {"config": {"kubetrain:namespace": f"ml-{env}", "kubetrain:jobFiles": files}}
    data["config"].update({f"kubetrain:{k}": v for k, v in config.items()})
    (project / "stacks" / f"Pulumi.{env}.yaml").write_text(yaml.safe_dump(data))


def test_load_and_build_errors_are_reported_in_one_run(project: Path, run) -> None:
    """dev: one job refused by its schema (load) and one its builder refuses (a TTL in operator
    mode); prod: a builder refusal only. One run names all three, exit 2, nothing written."""
    (project / "stacks" / "jobs").mkdir()
    (project / "stacks" / "jobs" / "bad.yaml").write_text(job("bad", replicas=0))
    (project / "stacks" / "jobs" / "ttl.yaml").write_text(job("ttl", ttl="60"))
    stack(project, "dev", ["stacks/jobs/*.yaml"], mode="operator")
    stack(project, "prod", ["stacks/jobs/ttl.yaml"], mode="operator")
    for command in (["render"], ["diff"], ["plan"], ["render", "--stdout"]):
        result = run(*command, cwd=project)
        assert result.exit_code == 2, command
        lines = result.stderr.strip().splitlines()
        assert any(
            line.startswith(
                "stacks/jobs/bad.yaml:9: spec.pytorchReplicaSpecs.Master.replicas: Master must have "
                "exactly 1 replica, got 0"
            )
            for line in lines
        ), lines
        ttl = [
            line
            for line in lines
            if line.startswith("stacks/jobs/ttl.yaml:6: spec.runPolicy.ttlSecondsAfterFinished:")
        ]
        # The same job document refused in both environments: said once, naming both.
        assert (
            len(ttl) == 1 and "PyTorchJob ml-dev/ttl, ml-prod/ttl cannot be rendered" in ttl[0]
        ), lines
    assert not (project / "rendered").exists()


def test_a_warning_of_a_shared_job_file_is_said_once(project: Path, run) -> None:
    (project / "stacks" / "jobs").mkdir()
    doc = job("pt", tag="latest").replace(
        "runPolicy: {ttlSecondsAfterFinished: null}", "runPolicy: {cleanPodPolicy: All}"
    )
    (project / "stacks" / "jobs" / "pt.yaml").write_text(doc)
    for env in ("dev", "staging", "prod"):
        stack(project, env, ["stacks/jobs/*.yaml"], nativeWorkload="pod")
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if ": warning: " in line]
    clean = [w for w in warnings if "cleanPodPolicy" in w and w.startswith("stacks/jobs/pt.yaml:")]
    assert len(clean) == 1, warnings
    assert "PyTorchJob ml-dev/pt, ml-prod/pt, ml-staging/pt:" in clean[0]
    latest = [w for w in warnings if "is tagged latest" in w]
    assert len(latest) == 1, warnings
    assert latest[0].endswith(
        "[3 objects: Pod ml-dev/pt-master-0, Pod ml-prod/pt-master-0, Pod ml-staging/pt-master-0]"
    ), latest


def test_the_example_stacks_render_without_warnings(repo_copy: Path, run) -> None:
    shutil.rmtree(repo_copy / "rendered")
    result = run("render", cwd=repo_copy)
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr, result.stderr
    assert run("render", "--strict", cwd=repo_copy).exit_code == 0
    rendered = sorted(p.name for p in (repo_copy / "rendered").iterdir())
    assert rendered == sorted(
        [*(p.name.split(".")[1] for p in (REPO / "stacks").glob("Pulumi.*.yaml")), "clusters"]
    )


@pytest.mark.parametrize(
    ("config", "warned", "namespace_rendered"),
    [
        ({}, True, True),
        ({"external": {"namespaces": ["kubeflow"]}}, False, False),
        (
            {
                "manifests": [
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}}
                ]
            },
            False,
            True,
        ),
    ],
    ids=["undeclared", "external", "declared"],
)
def test_a_published_examples_namespace_is_not_taken_over_silently(
    project: Path, run, config: dict[str, object], warned: bool, namespace_rendered: bool
) -> None:
    (project / "stacks" / "jobs").mkdir()
    (project / "stacks" / "jobs" / "simple.yaml").write_text(
        job("pytorch-simple", namespace="kubeflow")
    )
    stack(project, "dev", ["stacks/jobs/*.yaml"], **config)
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    lines = [
        line
        for line in result.stderr.splitlines()
        if "namespace kubeflow is not the stack's" in line
    ]
    if warned:
        (line,) = lines
        assert line.startswith(
            "stacks/jobs/simple.yaml:5: metadata.namespace: warning: PyTorchJob kubeflow/pytorch-simple:"
        )
        assert "kubetrain:external.namespaces" in line
        strict = run("render", "--strict", cwd=project)
        assert (
            strict.exit_code == 2
            and "stacks/jobs/simple.yaml:5: metadata.namespace: PyTorchJob" in strict.stderr
        )
    else:
        assert lines == []
    assert (
        project / "rendered" / "dev" / "_cluster" / "namespace-kubeflow.yaml"
    ).is_file() == namespace_rendered


def test_the_docs_example_of_a_secret_env_var_renders_and_a_literal_is_pointed_there(
    project: Path, run
) -> None:
    """docs/secrets.md's PyTorchJob reads its token from an ExternalSecret's Secret; the same
    env with a literal value is refused with a message naming what a PyTorchJob has (no
    `credentials:` field)."""
    import re

    block = (
        (REPO / "docs" / "secrets.md")
        .read_text()
        .split("## A credential in a Kubeflow job's env")[1]
    )
    example = re.search(r"```yaml\n(.*?)```", block, re.S)
    assert example
    text = example[1].replace("config:\n", "config:\n  kubetrain:namespace: ml\n", 1)
    (project / "stacks" / "Pulumi.dev.yaml").write_text(text)
    assert run("render", cwd=project).exit_code == 0
    assert run("validate", cwd=project).exit_code == 0
    literal = text.replace(
        "valueFrom: {secretKeyRef: {name: hf-token, key: token}}", "value: hf_abcdefabcdefabcdef"
    )
    assert literal != text
    (project / "stacks" / "Pulumi.dev.yaml").write_text(literal)
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert (
        ".env[0].value: a credential value is not allowed in env: give it with valueFrom.secretKeyRef"
        in result.stderr
    )
    assert "credentials: <name>" not in result.stderr and "hf_abcdef" not in result.stderr
