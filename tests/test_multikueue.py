"""Kueue's MultiKueue (``kubetrain:multiKueue``): the AdmissionCheck, MultiKueueConfig and
MultiKueueClusters rendered on the manager, the named ClusterQueue checked by it, each job
queued there managed by MultiKueue (``managedBy``), and ``plan`` saying which quota a job draws
on. The ClusterQueue is validated against Kueue's CRD in ../shared/crds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_gitops import crd_issues

from conftest import REPO, needs_upstream_crds

MULTIKUEUE = """\
  kubetrain:multiKueue:
    clusterQueues: [cluster-queue]
    workers:
      - {name: gpu-east, kubeConfigSecret: gpu-east-kubeconfig}
      - {name: gpu-west, kubeConfigSecret: gpu-west-kubeconfig}
"""


def write(project: Path, multikueue: str = MULTIKUEUE, **config: Any) -> None:
    (project / "stacks" / "kueue").mkdir(parents=True, exist_ok=True)
    shutil.copy(
        REPO / "stacks" / "trainer-examples" / "kueue" / "queues.yaml", project / "stacks" / "kueue"
    )
    template = {
        "spec": {
            "containers": [
                {
                    "name": "pytorch",
                    "image": "r.example.com/pt:1",
                    "resources": {"requests": {"cpu": "1"}},
                }
            ]
        }
    }
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert", "labels": {"kueue.x-k8s.io/queue-name": "training-queue"}},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": 2, "template": template},
            }
        },
    }
    native = json.loads(json.dumps(job))
    native["metadata"]["name"] = "gpt"
    native["metadata"]["annotations"] = {"kubetrain.io/mode": "native"}
    stack = {
        "kubetrain:namespace": "ml",
        "kubetrain:mode": "operator",
        "kubetrain:nativeWorkload": "jobset",
        "kubetrain:kubernetesVersion": "1.33",
        "kubetrain:jobs": [job, native],
        "kubetrain:manifestFiles": ["stacks/kueue/*.yaml"],
        **{f"kubetrain:{k}": v for k, v in config.items()},
    }
    text = yaml.safe_dump({"config": stack})
    (project / "stacks" / "Pulumi.hub.yaml").write_text(text + multikueue)


def load(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        p.relative_to(folder).as_posix(): yaml.safe_load(p.read_text())
        for p in sorted(folder.rglob("*.yaml"))
    }


@needs_upstream_crds
def test_multikueue_objects_and_managed_jobs(project: Path, run) -> None:
    write(project)
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    tree = load(project / "rendered" / "hub")
    check = tree["_cluster/admissioncheck-kubetrain-multikueue.yaml"]
    assert check["spec"] == {
        "controllerName": "kueue.x-k8s.io/multikueue",
        "parameters": {
            "apiGroup": "kueue.x-k8s.io",
            "kind": "MultiKueueConfig",
            "name": "kubetrain-multikueue",
        },
    }
    assert tree["_cluster/multikueueconfig-kubetrain-multikueue.yaml"]["spec"] == {
        "clusters": ["gpu-east", "gpu-west"]
    }
    east = tree["_cluster/multikueuecluster-gpu-east.yaml"]
    assert east["spec"] == {
        "clusterSource": {
            "kubeConfig": {"location": "gpu-east-kubeconfig", "locationType": "Secret"}
        }
    }
    queue = tree["_cluster/clusterqueue-cluster-queue.yaml"]
    assert queue["spec"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "kubetrain-multikueue"}]
    }
    assert crd_issues(queue) == []
    assert (
        tree["ml/pytorchjob-bert.yaml"]["spec"]["runPolicy"]["managedBy"]
        == "kueue.x-k8s.io/multikueue"
    )
    assert tree["ml/jobset-gpt.yaml"]["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert "kustomization.yaml" in tree
    assert run("validate", cwd=project).exit_code == 0
    plan = run("plan", cwd=project)
    assert (
        "MultiKueue: each job is admitted here, then runs on one of gpu-east, gpu-west"
        in plan.stdout
    )
    (env,) = json.loads(run("plan", "--output", "json", cwd=project).stdout)["environments"]
    (use,) = env["queues"]["flavors"]
    assert use["multiKueueWorkers"] == ["gpu-east", "gpu-west"]
    assert sorted(use["jobs"]) == ["PyTorchJob ml/bert", "PyTorchJob ml/gpt"]


def test_without_multikueue_no_job_is_managed_by_it(project: Path, run) -> None:
    write(project, multikueue="")
    assert run("render", cwd=project).exit_code == 0
    tree = load(project / "rendered" / "hub")
    assert not any("multikueue" in name for name in tree)
    assert "managedBy" not in tree["ml/pytorchjob-bert.yaml"]["spec"].get("runPolicy", {})


@pytest.mark.parametrize(
    ("multikueue", "message"),
    [
        (MULTIKUEUE.replace("[cluster-queue]", "[nope]"), "stacks/Pulumi.hub.yaml:"),
        (
            MULTIKUEUE.replace("gpu-west", "gpu-east"),
            "config.kubetrain:multiKueue.workers: a worker is listed twice",
        ),
        (
            "  kubetrain:multiKueue:\n    clusterQueues: [cluster-queue]\n    workers: ["
            + ", ".join(f"{{name: w{i}, kubeConfigSecret: s}}" for i in range(21))
            + "]\n",
            "config.kubetrain:multiKueue.workers: List should have at most 20 items",
        ),
    ],
    ids=["unknown-queue", "twice", "too-many"],
)
def test_bad_multikueue_settings_name_their_field(
    project: Path, run, multikueue: str, message: str
) -> None:
    write(project, multikueue=multikueue)
    result = run("render", cwd=project)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr
    if "nope" in multikueue:
        assert (
            "config.kubetrain:multiKueue.clusterQueues[0]: no ClusterQueue 'nope' among the stack's manifests"
            in result.stderr
        )
    assert not (project / "rendered").exists()
