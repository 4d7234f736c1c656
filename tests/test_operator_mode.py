"""Operator mode that does not fight GitOps or Kueue: a TTL the training operator would act on by
deleting the resource Git declares is refused; ``suspend`` of a queued job is Kueue's, so it is
not written (and plan says so); plan says what an operator-mode edit does to a running training;
findings on operator-mode jobs and plain manifests point at the field's line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.builders import build_stack
from kubetrain.models import load_stack

QUEUE = [
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "team"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": 64}]}],
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


def pytorchjob(
    workers: int = 2, image: str = "r.example.com/pt:1", **run_policy: Any
) -> dict[str, Any]:
    pod = {
        "spec": {
            "containers": [
                {"name": "pytorch", "image": image, "resources": {"requests": {"cpu": "1"}}}
            ]
        }
    }
    spec: dict[str, Any] = {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": copy.deepcopy(pod)},
            "Worker": {"replicas": workers, "template": copy.deepcopy(pod)},
        }
    }
    if run_policy:
        spec["runPolicy"] = run_policy
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert"},
        "spec": spec,
    }


def write(project: Path, jobs: list[dict[str, Any]], **config: Any) -> Path:
    (project / "stacks" / "jobs").mkdir(parents=True, exist_ok=True)
    (project / "stacks" / "jobs" / "jobs.yaml").write_text(
        "".join("---\n" + yaml.safe_dump(j, sort_keys=False) for j in jobs)
    )
    stack = {
        "kubetrain:namespace": "ml",
        "kubetrain:mode": "operator",
        "kubetrain:jobFiles": ["stacks/jobs/*.yaml"],
        "kubetrain:manifests": QUEUE,
        **{f"kubetrain:{k}": v for k, v in config.items()},
    }
    path = project / "stacks" / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": stack}))
    return path


def line_of(file: Path, text: str) -> int:
    return next(n for n, line in enumerate(file.read_text().splitlines(), 1) if text in line)


def test_a_ttl_the_operator_acts_on_is_refused_for_gitops(project: Path, run) -> None:
    """training-operator v1.9.0 CleanupJob deletes the PyTorchJob after the TTL; Git still
    declares it, so Flux or Argo CD would create it again and the training would run again."""
    stack = write(project, [pytorchjob(ttlSecondsAfterFinished=600)])
    result = run("render", cwd=project)
    assert result.exit_code == 2
    jobs = project / "stacks" / "jobs" / "jobs.yaml"
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(
        f"stacks/jobs/jobs.yaml:{line_of(jobs, 'ttlSecondsAfterFinished')}: "
        "spec.runPolicy.ttlSecondsAfterFinished: PyTorchJob ml/bert cannot be rendered for "
        "GitOps in operator mode: the training operator deletes the finished PyTorchJob"
    ), line
    assert not (project / "rendered").exists()
    # Pulumi deploys it once and is not asked to keep it: the TTL is written there.
    (obj,) = [
        b.obj for b in build_stack(load_stack(stack), "pulumi") if b.obj["kind"] == "PyTorchJob"
    ]
    assert obj["spec"]["runPolicy"]["ttlSecondsAfterFinished"] == 600


@pytest.mark.parametrize(
    ("mode", "workload", "kind", "field"),
    [
        ("operator", "job", "PyTorchJob", ("spec", "runPolicy")),
        ("native", "jobset", "JobSet", ("spec",)),
        ("native", "job", "Job", ("spec",)),
    ],
    ids=["operator", "jobset", "job"],
)
def test_suspend_of_a_queued_job_is_left_to_kueue(
    project: Path, run, mode: str, workload: str, kind: str, field: tuple[str, ...]
) -> None:
    queued = pytorchjob(suspend=True)
    queued["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team"}
    free = pytorchjob(suspend=True)
    free["metadata"]["name"] = "free"
    write(project, [queued, free], mode=mode, nativeWorkload=workload)
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    checked = 0
    for path in sorted((project / "rendered" / "dev" / "ml").glob(f"{kind.lower()}-*.yaml")):
        obj = yaml.safe_load(path.read_text())
        node = obj
        for key in field:
            node = node[key]
        if obj["metadata"]["name"].startswith("bert"):
            assert "suspend" not in node, path.name
        else:  # not queued: the document's suspend stands
            assert node["suspend"] is True, path.name
        checked += 1
    assert checked >= 2
    plan = json.loads(run("plan", "--output", "json", cwd=project).stdout)
    (env,) = plan["environments"]
    (note,) = [n for n in env["notes"] if n.startswith("Kueue queues")]
    assert "PyTorchJob ml/bert" in note and "PyTorchJob ml/free" not in note


def plan_after(project: Path, run, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    write(project, [before])
    assert run("render", cwd=project).exit_code == 0
    write(project, [after])
    result = run("plan", "--output", "json", cwd=project)
    assert result.exit_code == 0, result.stderr
    (env,) = json.loads(result.stdout)["environments"]
    return env["notes"]


def test_plan_says_the_operator_does_not_update_running_pods(project: Path, run) -> None:
    notes = plan_after(project, run, pytorchjob(), pytorchjob(image="r.example.com/pt:2"))
    (note,) = notes
    assert note.startswith(
        "PyTorchJob ml/bert: the training operator does not update running pods: the new pod "
        "template of Master, Worker reaches only pods it creates from now on"
    )


def test_plan_says_a_non_elastic_job_does_not_resize(project: Path, run) -> None:
    notes = plan_after(project, run, pytorchjob(workers=2), pytorchjob(workers=4))
    (note,) = notes
    assert note.startswith("PyTorchJob ml/bert: resized (Worker 2 -> 4) while it may run")
    elastic_before, elastic_after = pytorchjob(workers=2), pytorchjob(workers=4)
    for doc in (elastic_before, elastic_after):
        doc["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 8, "rdzvBackend": "c10d"}
    assert plan_after(project, run, elastic_before, elastic_after) == []


def test_plan_says_kueue_requeues_a_reshaped_admitted_job(project: Path, run) -> None:
    before, after = pytorchjob(workers=2), pytorchjob(workers=3)
    for doc in (before, after):
        doc["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team"}
    notes = plan_after(project, run, before, after)
    assert any(
        n.startswith("PyTorchJob ml/bert: Kueue suspends it if it is admitted") for n in notes
    )
    assert any(n.startswith("PyTorchJob ml/bert: resized") for n in notes)
    assert any(n.startswith("Kueue queues PyTorchJob ml/bert") for n in notes)


def test_findings_on_operator_jobs_and_manifests_are_at_the_field(project: Path, run) -> None:
    job = pytorchjob(image="r.example.com/pt:latest")
    job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "a", "containerPort": 80, "hostPort": 80}
    ]
    write(project, [job])
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "busybox:latest"}]},
            },
        },
    }
    (project / "stacks" / "ds.yaml").write_text(yaml.safe_dump(daemonset, sort_keys=False))
    stack = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())
    stack["config"]["kubetrain:manifestFiles"] = ["stacks/ds.yaml"]
    (project / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    result = run("render", cwd=project)
    assert result.exit_code == 1
    jobs, ds = project / "stacks" / "jobs" / "jobs.yaml", project / "stacks" / "ds.yaml"
    expected = [
        f"stacks/jobs/jobs.yaml:{line_of(jobs, 'hostPort')}: spec.pytorchReplicaSpecs.Master.template.spec.containers[0].ports[0].hostPort:",
        f"stacks/jobs/jobs.yaml:{line_of(jobs, 'pt:latest')}: spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image: warning:",
        f"stacks/ds.yaml:{line_of(ds, 'busybox:latest')}: spec.template.spec.containers[0].image: warning:",
    ]
    out = result.stdout + result.stderr
    for start in expected:
        assert any(line.startswith(start) for line in out.splitlines()), (start, out)
