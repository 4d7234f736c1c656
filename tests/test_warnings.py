"""Warnings: every field the builders rewrite or do not use, and every check finding that is a
fact rather than a mistake (host-port), printed as ``FILE:LINE: path: warning: message``;
``--strict`` makes them errors (exit 2 for the input's, exit 1 for the checks')."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.builders import build_stack
from kubetrain.models import Problem
from kubetrain.models.source import parse_documents

from conftest import REPO
from helpers import stack_from

CONTAINER = {"name": "tensorflow", "image": "tf:2"}


def tfjob(worker: dict[str, Any], run_policy: dict[str, Any] | None = None, **meta: Any) -> Any:
    spec: dict[str, Any] = {
        "tfReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [CONTAINER]}}, **worker}}
    }
    if run_policy:
        spec["runPolicy"] = run_policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", **meta},
        "spec": spec,
    }


def learner(gpu_type: bool = True) -> dict[str, Any]:
    doc = next(yaml.safe_load_all((REPO / "stacks" / "ffdl" / "mnist-learner.yaml").read_text()))
    if not gpu_type:
        doc["spec"]["resources"].pop("gpuType")
    return doc


def job_1(mode: str | None = None) -> dict[str, Any]:
    doc = yaml.safe_load((REPO / "stacks" / "paddle-examples" / "job-1.yaml").read_text())
    doc["metadata"].pop("annotations")
    if mode:
        doc["metadata"]["annotations"] = {"kubetrain.io/mode": mode}
    return doc


def paddlejob_with_metrics(mode: str) -> dict[str, Any]:
    """A PaddleJob scaled by metrics, which training-operator v1.9.3 runs (issue 26)."""
    worker = {"replicas": 2, "template": {"spec": {"containers": [{"name": "paddle",
              "image": "paddle:2"}]}}}  # fmt: skip
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {
              "type": "Utilization", "averageUtilization": 80}}}  # fmt: skip
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "paddle", "annotations": {"kubetrain.io/mode": mode}},
        "spec": {"paddleReplicaSpecs": {"Worker": worker}, "elasticPolicy": {"metrics": [metric]}},
    }


def xgboost_zero_workers() -> dict[str, Any]:
    """An XGBoostJob of a Master alone, which the webhooks of training-operator v1.9.3 admit."""

    def replica(n: int) -> dict[str, Any]:
        return {"replicas": n, "template": {"spec": {"containers": [{"name": "xgboost",
                "image": "xgb:1"}]}}}  # fmt: skip

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": "xgb"},
        "spec": {"xgbReplicaSpecs": {"Master": replica(1), "Worker": replica(0)}},
    }


LEARNER_SETTINGS = {
    "kubetrain:secretStore": {"name": "vault"},
    "kubetrain:learnerRegistry": "docker.io/ffdl",
}
OPERATOR = {"kubetrain.io/mode": "operator"}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(
            {
                "kubetrain:jobs": [
                    tfjob(
                        {
                            "restartPolicy": "Never",
                            "template": {
                                "spec": {"containers": [CONTAINER], "restartPolicy": "OnFailure"}
                            },
                        }
                    )
                ]
            },
            [
                (
                    ("spec", "tfReplicaSpecs", "Worker", "template", "spec", "restartPolicy"),
                    "restartPolicy OnFailure of the pod template is replaced by the replica's, "
                    "Never",
                )
            ],
            id="pod-restart-policy-rewritten",
        ),
        pytest.param(
            {
                "kubetrain:nativeWorkload": "pod",
                "kubetrain:jobs": [tfjob({"restartPolicy": "ExitCode"})],
            },
            [
                (
                    ("spec", "tfReplicaSpecs", "Worker", "restartPolicy"),
                    "ExitCode needs the training operator",
                )
            ],
            id="exit-code-on-bare-pods",
        ),
        pytest.param(
            {"kubetrain:jobs": [tfjob({"restartPolicy": "ExitCode"})]},
            [],
            id="exit-code-under-a-job",
        ),
        pytest.param(
            {
                "kubetrain:nativeWorkload": "pod",
                "kubetrain:jobs": [
                    tfjob(
                        {},
                        {
                            "cleanPodPolicy": "All",
                            "backoffLimit": 3,
                            "ttlSecondsAfterFinished": 60,
                            "activeDeadlineSeconds": 600,
                        },
                    )
                ],
            },
            [
                (("spec", "runPolicy", "cleanPodPolicy"), "has no effect on bare pods"),
                (("spec", "runPolicy", "backoffLimit"), "has no effect on bare pods"),
                (("spec", "runPolicy", "ttlSecondsAfterFinished"), "has no effect on bare pods"),
                (("spec", "runPolicy", "activeDeadlineSeconds"), "applies to each bare pod"),
            ],
            id="run-policy-on-bare-pods",
        ),
        pytest.param(
            {
                "kubetrain:jobs": [
                    tfjob(
                        {"restartPolicy": "Always"},
                        {"cleanPodPolicy": "All", "backoffLimit": 3, "activeDeadlineSeconds": 600},
                    )
                ]
            },
            [
                (("spec", "runPolicy", "cleanPodPolicy"), "no Job knows when the whole job ends"),
                (("spec", "tfReplicaSpecs", "Worker", "restartPolicy"), "runs as OnFailure"),
            ],
            id="run-policy-under-a-job",
        ),
        pytest.param(
            {
                "kubetrain:jobs": [
                    tfjob({"restartPolicy": "ExitCode"}, {"backoffLimit": 3}, annotations=OPERATOR)
                ]
            },
            [],
            id="operator-mode-keeps-them",
        ),
        pytest.param(
            {
                "kubetrain:jobs": [
                    tfjob({}, annotations={**OPERATOR, "kubetrain.io/native-workload": "jobset"})
                ]
            },
            [
                (
                    ("metadata", "annotations", "kubetrain.io/native-workload"),
                    "has no effect in operator mode",
                )
            ],
            id="native-workload-in-operator-mode",
        ),
        pytest.param(
            {**LEARNER_SETTINGS, "kubetrain:jobs": [learner()]},
            [(("spec", "resources", "gpuType"), "gpuType 'nvidia-tesla-v100' is not used")],
            id="learner-gpu-type-dropped",
        ),
        pytest.param(
            {
                **LEARNER_SETTINGS,
                "kubetrain:gpuTypeNodeLabel": "gpu-type",
                "kubetrain:jobs": [learner()],
            },
            [],
            id="learner-gpu-type-used",
        ),
        pytest.param(
            {"kubetrain:podSecurity": "privileged", "kubetrain:jobs": [job_1()]},
            [
                (("spec", "trainer", "max-instance"), "native mode runs min-instance (3) trainers"),
                (
                    ("spec", "trainer", "resources", "limits", "alpha.kubernetes.io/nvidia-gpu"),
                    "GPUs given as alpha.kubernetes.io/nvidia-gpu are written as nvidia.com/gpu",
                ),
            ],
            id="trainingjob-elastic-and-gpu-alias",
        ),
        pytest.param(
            {"kubetrain:jobs": [job_1("operator")]},
            [
                (
                    ("spec", "trainer", "resources", "limits", "alpha.kubernetes.io/nvidia-gpu"),
                    "are written as nvidia.com/gpu",
                )
            ],
            id="trainingjob-operator-gpu-alias",
        ),
        pytest.param(
            {"kubetrain:jobs": [xgboost_zero_workers()]},
            [
                (
                    ("spec", "xgbReplicaSpecs", "Worker", "replicas"),
                    "is 0: training-operator v1.9.3 creates Worker 0 (a pod and its Service) and deletes it",
                )
            ],
            id="xgboost-zero-workers",
        ),
        *(
            pytest.param(
                {"kubetrain:jobs": [paddlejob_with_metrics(mode)]},
                [
                    (
                        ("spec", "elasticPolicy", "metrics"),
                        "has no effect: no controller of PaddleJob reads them",
                    )
                ],
                id=f"paddlejob-metrics-{mode}",
            )
            for mode in ("native", "operator")
        ),
    ],
)
def test_builders_warn_of_what_they_rewrite_or_drop(
    tmp_path: Path, config: dict[str, Any], expected: list[tuple[tuple[Any, ...], str]]
) -> None:
    stack = stack_from(tmp_path, config)
    warnings: list[Problem] = []
    build_stack(stack, "render", warnings=warnings)
    assert [p.severity for p in warnings] == ["warning"] * len(warnings)
    got = sorted((p.path[3:], p.message) for p in warnings)  # without config.kubetrain:jobs[0]
    assert len(got) == len(expected), got
    lines = parse_documents(stack.file.read_text(), "f").pop().lines
    for (path, message), problem in zip(
        sorted(expected), sorted(warnings, key=lambda p: p.path), strict=True
    ):
        assert problem.path[3:] == path
        assert message in problem.message
        # The line of the field itself, in the stack file.
        assert problem.line == lines[problem.path]
        assert f": warning: {problem.message}" in str(problem)


def stack_file(project: Path, config: dict[str, Any]) -> None:
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:external": {"secrets": ["myregistrykey"]},  # job-1's pull secret
        **config,
    }
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        yaml.safe_dump({"config": config}, sort_keys=False)
    )


def test_edl_job_1_renders_natively_with_host_port_warnings(project: Path, run) -> None:
    """EDL's own job-1: pservers and trainers on the host network claim the same ports, so the
    scheduler never puts two of them on one node. A fact to know, not a mistake."""
    stack_file(project, {"kubetrain:podSecurity": "privileged", "kubetrain:jobs": [job_1()]})
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    host_port = [line for line in result.stderr.splitlines() if "(host-port)" in line]
    assert host_port and all(": warning: " in line for line in host_port)
    text = (project / "stacks" / "Pulumi.dev.yaml").read_text()
    job_line = parse_documents(text, "f")[0].lines[("config", "kubetrain:jobs", 0)]
    assert host_port[0].startswith(f"stacks/Pulumi.dev.yaml:{job_line}: ")  # the job's line
    assert (project / "rendered" / "dev" / "ml" / "job-job-1-trainer.yaml").is_file()
    # validate reports them as warnings too, and passes...
    checked = run("validate", cwd=project)
    assert checked.exit_code == 0, checked.stdout
    assert ": warning: " in checked.stdout and "warnings" in checked.stdout.splitlines()[-1]
    data = json.loads(run("validate", "--output", "json", cwd=project).stdout)
    assert data["summary"]["warnings"] > 0 and data["summary"]["invalid"] == 0
    # ... unless --strict.
    assert run("validate", "--strict", cwd=project).exit_code == 1


def test_strict_render_fails_on_warnings_and_writes_nothing(project: Path, run) -> None:
    stack_file(
        project,
        {
            "kubetrain:nativeWorkload": "pod",
            "kubetrain:jobs": [tfjob({"restartPolicy": "ExitCode"})],
        },
    )
    warned = run("render", "--stdout", cwd=project)
    assert warned.exit_code == 0
    assert ": warning: TFJob ml/mnist: ExitCode needs the training operator" in warned.stderr
    strict = run("render", "--strict", cwd=project)
    assert strict.exit_code == 2  # a field of the input rewritten: bad input
    assert "ExitCode needs the training operator" in strict.stderr
    assert "warning:" not in strict.stderr
    assert not (project / "rendered").exists()

    stack_file(project, {"kubetrain:podSecurity": "privileged", "kubetrain:jobs": [job_1()]})
    strict = run("render", "--strict", cwd=project)
    assert strict.exit_code == 2  # job-1's max-instance: the builders' warnings come first
    stack_file(
        project,
        {"kubetrain:podSecurity": "privileged", "kubetrain:jobs": [_without_builder_warnings()]},
    )
    assert run("render", cwd=project).exit_code == 0
    strict = run("render", "--strict", "--stack", "dev", cwd=project)
    assert strict.exit_code == 1  # only host-port left: a check's warning fails as a check
    assert "(host-port)" in strict.stderr and "warning:" not in strict.stderr


def _without_builder_warnings() -> dict[str, Any]:
    doc = job_1()
    trainer = doc["spec"]["trainer"]
    trainer["max-instance"] = trainer["min-instance"]
    limits = trainer["resources"]["limits"]
    limits["nvidia.com/gpu"] = limits.pop("alpha.kubernetes.io/nvidia-gpu")
    return doc


def test_a_replica_type_of_no_pods_writes_none(tmp_path: Path) -> None:
    """training-operator v1.9.3 creates Pod and Service <job>-<type>-0 of a replica type of
    replicas 0 and deletes them on the next reconcile, over and over (make e2e's fidelity test
    pins the flap, zero-replica-flap): native mode writes none of the type, and the rest."""
    stack = stack_from(tmp_path, {"kubetrain:namespace": "ml",
                                  "kubetrain:nativeWorkload": "pod",
                                  "kubetrain:jobs": [xgboost_zero_workers()]})  # fmt: skip
    built = build_stack(stack, "render", warnings=[])
    names = sorted((b.obj["kind"], b.obj["metadata"]["name"]) for b in built)
    assert ("Pod", "xgb-master-0") in names, names
    assert [n for n in names if "worker" in n[1]] == [], names


@pytest.mark.parametrize("workload", ["pod", "jobset"])
def test_env_the_operator_sets_again_is_a_warning_and_left_out(
    project: Path, run, workload: str
) -> None:
    """A template setting MASTER_ADDR itself: the training operator appends its own after it
    (setPodEnv), and the last definition wins; natively that name twice could not be
    server-side applied, so the template's is left out, with a warning (--strict: an error)."""
    replica = {
        "replicas": 1,
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "pytorch",
                        "image": "r.example.com/p:1",
                        "env": [
                            {"name": "MASTER_ADDR", "value": "mine"},
                            {"name": "MY_OWN", "value": "x"},
                        ],
                    }
                ]
            }
        },
    }
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "own"},
        "spec": {"pytorchReplicaSpecs": {"Master": replica, "Worker": replica}},
    }
    stack_file(project, {"kubetrain:nativeWorkload": workload, "kubetrain:jobs": [job]})
    result = run("render", "--stdout", cwd=project)
    assert result.exit_code == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "MASTER_ADDR is set by" in line]
    assert len(warned) == 2  # the Master's template and the Worker's, each at its line
    assert all(": warning: " in line for line in warned)
    envs = [
        c["env"]
        for doc in yaml.safe_load_all(result.stdout)
        if doc
        for t in pod_templates_of(doc)
        for c in t["spec"]["containers"]
    ]
    assert len(envs) == 2
    for env in envs:
        names = [e["name"] for e in env]
        assert names.count("MASTER_ADDR") == 1 and names[0] == "MY_OWN"
        assert {e["name"]: e.get("value") for e in env}["MASTER_ADDR"] == "own-master-0"
    assert run("render", "--strict", "--stdout", cwd=project).exit_code == 2


def pod_templates_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if doc["kind"] == "Pod":
        return [doc]
    if doc["kind"] == "JobSet":
        return [r["template"]["spec"]["template"] for r in doc["spec"]["replicatedJobs"]]
    return []
