"""``kubetrain plan`` knows a migration: a v1 job leaving while a TrainJob of the same namespace
and name arrives is one migration (the run stops, a new one starts; pods and GPUs before, after
and both at once while the engines switch, for each engine), not an unrelated deletion and
addition; GPUs given as limits only count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubetrain.builders import build_stack
from kubetrain.models.load import load_stack_data
from kubetrain.plan import format_text, plan_environment

from conftest import REPO


def _plans(run, cwd: Path, *args: str) -> dict[str, Any]:
    result = run("plan", "--output", "json", *args, cwd=cwd)
    assert result.exit_code == 0, result.stderr
    return {env["name"]: env for env in json.loads(result.stdout)["environments"]}


def test_a_converted_job_is_one_migration_with_its_gpus(repo_copy: Path, run) -> None:
    job = repo_copy / "stacks/kubeflow-examples/pytorch-deepspeed-demo.yaml"
    converted = run("convert", str(job.relative_to(repo_copy)), "--in-place", cwd=repo_copy)
    assert converted.exit_code == 0, converted.stderr
    env = _plans(run, repo_copy, "--stack", "dev")["dev"]
    [migration] = env["migrations"]
    assert migration["from"] == "PyTorchJob ml-dev/pytorch-deepspeed-demo"
    assert migration["to"] == "TrainJob ml-dev/pytorch-deepspeed-demo"
    # A Master and a Worker of one GPU each (limits only in the example), on both sides.
    gpus = {"nvidia.com/gpu": "2"}
    assert migration["before"] == {"pods": 2, "resources": gpus}
    assert migration["after"] == {"pods": 2, "resources": gpus}
    assert migration["peak"] == {"pods": 4, "resources": {"nvidia.com/gpu": "4"}}
    assert set(migration["engines"]) == {"flux", "argocd", "pulumi", "kubectl"}
    assert "prunes the PyTorchJob's objects" in migration["engines"]["flux"]
    assert "deletes come last" in migration["engines"]["pulumi"]
    # Not a run stopped, nor restarted: migrated.
    assert env["stoppedJobs"] == [] and env["restartedJobs"] == []
    actions = sorted((c["action"], c["kind"]) for c in env["changes"])
    assert actions == [
        ("add", "TrainJob"),
        ("delete", "Job"),
        ("delete", "Job"),
        ("delete", "Service"),
        ("delete", "Service"),
    ]
    text = run("plan", "--stack", "dev", cwd=repo_copy).stdout
    block = text.split(">> migration ", 1)[1]
    assert block.startswith(
        "PyTorchJob ml-dev/pytorch-deepspeed-demo -> TrainJob ml-dev/pytorch-deepspeed-demo: "
        "the run stops, a new one starts"
    )
    assert "both at once, while the engine switches: pods 4; nvidia.com/gpu 4" in block
    # The objects are listed under the migration, not on their own.
    head = text.split(">> migration ", 1)[0]
    assert "pytorch-deepspeed-demo" not in head
    assert "runs migrated (stopped, and started as TrainJobs): PyTorchJob" in text


def _stack(jobs: list[dict[str, Any]], **config: Any):
    data = {
        "config": {
            "kubetrain:namespace": "ml",
            "kubetrain:jobs": jobs,
            "kubetrain:external": {
                "trainingRuntimes": [{"name": "torch-distributed"}],
                "localQueues": ["team-a"],
            },
            **{f"kubetrain:{k}": v for k, v in config.items()},
        }
    }
    return load_stack_data(
        data, name="dev", file=REPO / "Pulumi.dev.yaml", project_root=REPO, label="test"
    )


def _objects(stack) -> list[tuple[dict[str, Any], str]]:
    return [(b.obj, b.source) for b in build_stack(stack)]


PYTORCH = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "bert", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "pytorch", "image": "b:1"}]}},
            },
            "Worker": {
                "replicas": 2,
                "template": {"spec": {"containers": [{"name": "pytorch", "image": "b:1"}]}},
            },
        }
    },
}
TRAINJOB = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "metadata": {"name": "bert", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
    "spec": {
        "runtimeRef": {"name": "torch-distributed"},
        "trainer": {"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}}},
    },
}


def test_limits_only_gpus_of_a_trainjob_count() -> None:
    """The TrainJob's pods get their requests from their limits (the API server's defaulting):
    3 nodes of 2 GPUs are 6 GPUs, in plan's totals and in the migration."""
    plan = plan_environment(
        "dev",
        ["rendered/dev"],
        _objects(_stack([PYTORCH], nativeWorkload="jobset")),
        _objects(_stack([TRAINJOB])),
    )
    assert plan.after.jobs["TrainJob ml/bert"].as_json() == {
        "pods": 3,
        "resources": {"nvidia.com/gpu": "6"},
    }
    [migration] = plan.migrations
    assert migration.peak.as_json() == {"pods": 6, "resources": {"nvidia.com/gpu": "6"}}
    assert migration.queues == ("team-a", "team-a")
    notes = " ".join(migration.notes)
    # The v1 job ran as a JobSet named bert: the trainer's JobSet for the TrainJob has that name.
    assert "cannot create it until the engine has deleted the old one" in notes
    assert "both runs ask Kueue's queue team-a" in notes
    assert plan.stopped_jobs == []
    # The only note: Kueue owns the queued TrainJob's suspend (kubetrain.operators).
    assert [n for n in plan.notes if not n.startswith("Kueue queues TrainJob ml/bert")] == []
    text = format_text([plan])
    assert "  >> migration PyTorchJob ml/bert -> TrainJob ml/bert" in text


def test_a_v1_job_leaving_without_a_trainjob_is_a_run_stopped() -> None:
    renamed = {**TRAINJOB, "metadata": {"name": "other"}}
    plan = plan_environment(
        "dev", ["rendered/dev"], _objects(_stack([PYTORCH])), _objects(_stack([renamed]))
    )
    assert plan.migrations == []
    assert plan.stopped_jobs == ["PyTorchJob ml/bert"]
