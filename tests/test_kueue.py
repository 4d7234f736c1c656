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


def pytorchjob(**meta: Any) -> dict[str, Any]:
    template = {"spec": {"containers": [{"name": "pytorch", "image": "pt:2"}]}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert", "labels": dict(QUEUE), **meta},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": 2, "template": template},
            }
        },
    }


def build(tmp_path: Path, doc: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    cfg = {"kubetrain:namespace": "ml", "kubetrain:jobs": [doc]}
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
    (tmp_path / "p" / "stacks" / "Pulumi.t.yaml").write_text(
        yaml.safe_dump({"config": {"kubetrain:jobs": [pytorchjob()]}})
    )
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
