"""Kueue's queue and priority labels reach the object Kueue admits, under every workload and mode
(Kueue v0.19.2: the batch/job, pod-group, JobSet and Kubeflow integrations read the
``kueue.x-k8s.io/queue-name`` label of the object they admit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import objects, stack_from

QUEUE = {"kueue.x-k8s.io/queue-name": "team-a", "kueue.x-k8s.io/priority-class": "high"}


def pytorchjob(name: str = "bert", **meta: Any) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "pytorch", "image": "pt:2"}]}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "labels": dict(QUEUE), **meta},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": 2, "template": template},
            }
        },
    }


def build(tmp_path: Path, doc: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    cfg: dict[str, Any] = {
        "kubetrain:namespace": "ml",
        "kubetrain:jobs": [doc],
        # The queue exists in the cluster (a job naming an unknown one is refused: see below).
        "kubetrain:external": {"localQueues": ["team-a"], "workloadPriorityClasses": ["high"]},
    }
    cfg.update({f"kubetrain:{k}": v for k, v in config.items()})
    return objects(stack_from(tmp_path, cfg))


def labelled(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted(
        (o["kind"], o["metadata"]["name"])
        for o in objs
        if (o["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name") == "team-a"
    )


def test_pods_are_one_kueue_pod_group(tmp_path: Path) -> None:
    objs = build(tmp_path, pytorchjob(), nativeWorkload="pod")
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert labelled(objs) == sorted(("Pod", p["metadata"]["name"]) for p in pods)
    assert len(pods) == 3
    for pod in pods:
        assert pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] == "bert"
        assert pod["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "high"
        assert pod["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-total-count"] == "3"


def test_each_job_is_labelled_and_the_piecemeal_admission_said(tmp_path: Path, run) -> None:
    objs = build(tmp_path, pytorchjob(), nativeWorkload="job")
    assert labelled(objs) == [
        ("Job", "bert-master-0"),
        ("Job", "bert-worker-0"),
        ("Job", "bert-worker-1"),
    ]
    (tmp_path / "p" / "stacks").mkdir(parents=True)
    (tmp_path / "p" / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    config: dict[str, Any] = {"kubetrain:jobs": [pytorchjob()]}
    (tmp_path / "p" / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    # A queue neither delivered nor declared: Kueue would hold the job for ever.
    refused = run("render", "--stdout", cwd=tmp_path / "p")
    assert refused.exit_code == 2
    assert (
        'metadata.labels["kueue.x-k8s.io/queue-name"]: LocalQueue default/team-a is neither '
        "among the stack's manifests nor declared in kubetrain:external.localQueues"
    ) in refused.stderr
    config["kubetrain:external"] = {
        "localQueues": ["default/team-a"],
        "workloadPriorityClasses": ["high"],
    }
    (tmp_path / "p" / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("render", "--stdout", cwd=tmp_path / "p")
    assert result.exit_code == 0, result.stderr
    assert 'metadata.labels["kueue.x-k8s.io/queue-name"]: warning:' in result.stderr
    assert "Kueue admits each replica's Job on its own" in result.stderr


@pytest.mark.parametrize(
    ("config", "kind"),
    [({"nativeWorkload": "jobset"}, "JobSet"), ({"mode": "operator"}, "PyTorchJob")],
)
def test_one_object_carries_the_queue(tmp_path: Path, config: dict[str, str], kind: str) -> None:
    objs = build(tmp_path, pytorchjob(), **config)
    assert labelled(objs) == [(kind, "bert")]


def test_a_job_without_a_queue_gets_no_kueue_label(tmp_path: Path) -> None:
    doc = pytorchjob()
    doc["metadata"]["labels"] = {"kueue.x-k8s.io/priority-class": "high"}
    objs = build(tmp_path, doc, nativeWorkload="pod")
    assert not any("kueue.x-k8s.io/pod-group-name" in o["metadata"].get("labels", {}) for o in objs)
    assert not any(
        "kueue.x-k8s.io/priority-class" in o["metadata"].get("labels", {})
        for o in objs
        if o["kind"] == "Pod"
    )


def test_an_mpijob_launcher_and_workers_both_carry_it(tmp_path: Path) -> None:
    doc = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "labels": dict(QUEUE)},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "l", "image": "m"}]}},
                },
                "Worker": {
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "w", "image": "m"}]}},
                },
            }
        },
    }
    objs = build(tmp_path, doc, secretStore={"name": "vault"})
    assert labelled(objs) == [
        ("Job", "pi-launcher"),
        ("Pod", "pi-worker-0"),
        ("Pod", "pi-worker-1"),
    ]


def test_a_localqueue_among_the_manifests_is_a_queue_jobs_may_name(tmp_path: Path) -> None:
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a"},
        "spec": {"clusterQueue": "gpus"},
    }
    priority = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
    }
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:jobs": [pytorchjob()],
        "kubetrain:manifests": [queue, priority],
    }
    objs = objects(stack_from(tmp_path, config))
    assert ("PyTorchJob", "bert") not in labelled(objs)  # native: a Job per replica
    assert labelled(objs)


def test_plan_counts_quota_and_warns_of_jobs_kueue_cannot_admit_whole(tmp_path: Path, run) -> None:
    """Per ClusterQueue and flavor, the queued jobs' requests of nominal quota; a job asking
    more than the queue can ever give (no cohort to borrow from) never runs; a Job per replica
    is admitted piecemeal."""
    cq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "gpus"},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 64},
                                {"name": "memory", "nominalQuota": "256Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 8},
                            ],
                        }
                    ],
                }
            ],
        },
    }
    lq = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "team-a"},
        "spec": {"clusterQueue": "gpus"},
    }
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "a100"},
    }
    small = pytorchjob()
    huge = pytorchjob(name="huge")
    huge["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 9
    for doc in (small, huge):
        for spec in doc["spec"]["pytorchReplicaSpecs"].values():
            spec["template"] = {
                "spec": {
                    "containers": [
                        {
                            "name": "pytorch",
                            "image": "pt:2",
                            "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "2"}},
                        }
                    ]
                }
            }
    project = tmp_path / "p"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:jobs": [small, huge],
        "kubetrain:manifests": [flavor, cq, lq],
        "kubetrain:external": {"workloadPriorityClasses": ["high"]},
    }
    (project / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("plan", "--output", "json", cwd=project)
    assert result.exit_code == 0, result.stderr
    (env,) = __import__("json").loads(result.stdout)["environments"]
    (use,) = env["queues"]["flavors"]
    assert (use["clusterQueue"], use["flavor"]) == ("gpus", "a100")
    assert use["requested"] == {"cpu": "6", "memory": "0", "nvidia.com/gpu": "3"}
    assert use["jobs"] == ["PyTorchJob ml/bert"]
    warnings = env["queues"]["warnings"]
    assert any(
        w.startswith(
            "PyTorchJob ml/huge can never be admitted by ClusterQueue gpus: it requests "
            "nvidia.com/gpu 10 (the most it can ever get is 8)"
        )
        for w in warnings
    ), warnings
    assert any(w.startswith("PyTorchJob ml/bert: Kueue admits it as 3 workloads") for w in warnings)
    text = run("plan", cwd=project).stdout
    assert (
        "ClusterQueue gpus, flavor a100: cpu 6 of 64; memory 0 of 256Gi; nvidia.com/gpu 3 of 8"
        in text
    )


def test_every_kind_carries_its_queue_or_says_what_it_cannot(tmp_path: Path, run) -> None:
    """A Learner's StatefulSet carries the queue (Kueue's StatefulSet integration); a
    TrainingJob's trainer Job does (the batch/job integration) and the warning says its
    ReplicaSets are not queued (Kueue integrates none)."""
    learner = {
        "apiVersion": "kubetrain.io/v1alpha1",
        "kind": "Learner",
        "metadata": {"name": "lrn", "labels": dict(QUEUE)},
        "spec": {
            "trainingId": "t",
            "framework": {"name": "tensorflow", "version": "1.15", "command": "python3 t.py"},
            "image": {"registry": "us.icr.io", "namespace": "ml-images"},
        },
    }
    trainingjob = {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": "tj", "labels": dict(QUEUE)},
        "spec": {
            "image": "paddle:1",
            "trainer": {"entrypoint": "python t.py", "workspace": "/w"}
            | {"min-instance": 1, "max-instance": 1},
            "pserver": {"min-instance": 1, "max-instance": 1},
        },
    }
    objs = build(tmp_path, learner, secretStore={"kind": "ClusterSecretStore", "name": "vault"})
    assert labelled(objs) == [("StatefulSet", "lrn")]
    (tmp_path / "b").mkdir()
    objs = build(tmp_path / "b", trainingjob)
    assert labelled(objs) == [("Job", "tj-trainer")]
    project = tmp_path / "p"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    config = {
        "kubetrain:jobs": [trainingjob],
        "kubetrain:external": {"localQueues": ["team-a"], "workloadPriorityClasses": ["high"]},
    }
    (project / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    result = run("render", "--stdout", cwd=project)
    assert result.exit_code == 0, result.stderr
    assert "Kueue admits the trainer Job only: it integrates no ReplicaSet" in result.stderr


def _gate_project(tmp_path: Path, gpus: int, cluster_queue: str) -> Path:
    """A job of ``gpus`` one-GPU pods on a queue of 8 GPUs, its LocalQueue naming
    ``cluster_queue``; the job is written as a file so its label has a line of its own."""
    project = tmp_path / "p"
    (project / "stacks" / "jobs").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    job = pytorchjob()
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = gpus - 1
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    (project / "stacks" / "jobs" / "bert.yaml").write_text(yaml.safe_dump(job, sort_keys=False))
    queue = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "a100"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "gpus"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "a100",
                                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "team-a"},
            "spec": {"clusterQueue": cluster_queue},
        },
    ]
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:nativeWorkload": "jobset",
        "kubetrain:jobFiles": ["stacks/jobs/*.yaml"],
        "kubetrain:manifests": queue,
        "kubetrain:external": {"workloadPriorityClasses": ["high"]},
    }
    (project / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": config}))
    return project


@pytest.mark.parametrize(
    ("gpus", "cluster_queue", "message"),
    [
        (
            9,
            "gpus",
            "PyTorchJob ml/bert can never be admitted by ClusterQueue gpus: it requests nvidia.com/gpu 9 (the most it can ever get is 8)",
        ),
        (2, "gpu", "LocalQueue ml/team-a names ClusterQueue gpu, which the stack does not deliver"),
    ],
    ids=["never-admitted", "cluster-queue-missing"],
)
def test_jobs_kueue_holds_for_ever_are_warnings_and_errors_under_strict(
    tmp_path: Path, run, gpus: int, cluster_queue: str, message: str
) -> None:
    project = _gate_project(tmp_path, gpus, cluster_queue)
    label_line = next(
        n
        for n, line in enumerate((project / "stacks/jobs/bert.yaml").read_text().splitlines(), 1)
        if "kueue.x-k8s.io/queue-name" in line
    )
    at = f'stacks/jobs/bert.yaml:{label_line}: metadata.labels["kueue.x-k8s.io/queue-name"]:'
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    (line,) = [w for w in result.stderr.splitlines() if message in w]
    assert line.startswith(f"{at} warning: "), line
    result = run("render", "--strict", cwd=project)
    assert result.exit_code == 2
    (line,) = [w for w in result.stderr.splitlines() if message in w]
    assert line.startswith(at) and "warning" not in line, line
    # A job the queue admits passes --strict.
    ok = _gate_project(tmp_path / "ok", 8, "gpus")
    assert run("render", "--strict", cwd=ok).exit_code == 0
