"""GPUs (and any resource) counted as Kubernetes counts them: a resource given only as a limit
requests its limit (``SetDefaults_ResourceRequirements``, pkg/apis/core/v1/defaults.go), in a
TrainJob's ``resourcesPerNode``, in ``kubetrain plan``'s totals and in the Kueue quota plan; so
moving a PyTorchJob to a TrainJob with the same GPUs plans the same GPUs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import UPSTREAM_RUNTIMES, needs_upstream_runtimes

QUEUE: list[dict[str, Any]] = [
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "a100"},
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "team"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 256},
                                {"name": "memory", "nominalQuota": "1Ti"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 64},
                            ],
                        }
                    ],
                }
            ],
        },
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team"},
        "spec": {"clusterQueue": "team"},
    },
]
LIMITS = {"limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": 2}}


def pytorchjob() -> dict[str, Any]:
    pod = {"containers": [{"name": "pytorch", "image": "r.example.com/t:1", "resources": LIMITS}]}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "llm", "labels": {"kueue.x-k8s.io/queue-name": "team"}},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": {"spec": pod}},
                "Worker": {"replicas": 14, "template": {"spec": pod}},
            }
        },
    }


def trainjob(runtime: str) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "llm", "labels": {"kueue.x-k8s.io/queue-name": "team"}},
        "spec": {
            "runtimeRef": {"name": runtime},
            "trainer": {"numNodes": 15, "resourcesPerNode": LIMITS},
        },
    }


def write(project: Path, job: dict[str, Any], declared: dict[str, Any] | None = None) -> None:
    config: dict[str, Any] = {
        "kubetrain:namespace": "ml",
        "kubetrain:mode": "operator",
        "kubetrain:jobs": [job],
        "kubetrain:manifests": QUEUE,
    }
    if declared is not None:
        config["kubetrain:external"] = {"trainingRuntimes": [declared]}
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))


def gpus(plan: dict[str, Any]) -> tuple[str, str]:
    (env,) = plan["environments"]
    totals = env["totals"]
    return (
        totals["before"]["all"]["resources"].get("nvidia.com/gpu", "0"),
        totals["after"]["all"]["resources"].get("nvidia.com/gpu", "0"),
    )


@needs_upstream_runtimes
@pytest.mark.parametrize("runtime", ["by-name", "with-spec"])
def test_moving_a_pytorchjob_to_a_trainjob_plans_the_same_gpus(
    project: Path, run, runtime: str
) -> None:
    write(project, pytorchjob())
    assert run("render", cwd=project).exit_code == 0
    if runtime == "by-name":
        write(project, trainjob("torch-distributed"), {"name": "torch-distributed"})
    else:
        (project / "stacks" / "runtimes").mkdir()
        shutil.copy(UPSTREAM_RUNTIMES / "torch_distributed.yaml", project / "stacks" / "runtimes")
        write(
            project,
            trainjob("torch-distributed"),
            {"name": "torch-distributed", "file": "stacks/runtimes/torch_distributed.yaml"},
        )
    result = run("plan", "--output", "json", cwd=project)
    assert result.exit_code == 0, result.stderr
    plan = json.loads(result.stdout)
    assert gpus(plan) == ("30", "30")  # 15 pods of 2 GPUs, before and after
    (env,) = plan["environments"]
    (use,) = env["queues"]["flavors"]
    assert use["requested"]["nvidia.com/gpu"] == "30"
    assert use["jobs"] == ["TrainJob ml/llm"]
    # The rendered TrainJob says what it runs, requests defaulted from limits.
    rendered = yaml.safe_load_all(
        (project / "rendered" / "dev" / "ml" / "pytorchjob-llm.yaml").read_text()
    )
    assert next(iter(rendered))["kind"] == "PyTorchJob"


def test_a_limit_only_gpu_is_counted_in_plan_totals_and_quota(project: Path, run) -> None:
    write(project, pytorchjob())
    result = run("plan", "--output", "json", cwd=project)
    plan = json.loads(result.stdout)
    assert gpus(plan) == ("0", "30")
    (env,) = plan["environments"]
    assert env["queues"]["flavors"][0]["requested"]["nvidia.com/gpu"] == "30"
