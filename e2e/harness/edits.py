"""The edit sequence of the lifecycle tests: what a team does to its stacks over weeks, in
batches of independent edits (each to a different job, so each object's fate has one cause).

Step "edits" (dev and staging): an image, a replica count up, GPUs, an env var, a job added,
a job deleted, a job renamed, a Kueue queue added to a running job, a TrainJob edited, a claim
grown. Step "moves": a replica count down, a job moved to another namespace, a job's native
workload switched.
"""

from __future__ import annotations

import copy
from typing import Any

from .project import Project

Doc = dict[str, Any]


def _containers(spec: Doc, replica: str, key: str) -> list[Doc]:
    return spec[key][replica]["template"]["spec"]["containers"]


def image(doc: Doc) -> None:
    for c in _containers(doc["spec"], "worker", "tfReplicaSpecs"):
        c["image"] = c["image"].replace(":1.0", ":1.1")


def scale_up(doc: Doc) -> None:
    doc["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] += 1


def scale_down(doc: Doc) -> None:
    doc["spec"]["tfReplicaSpecs"]["PS"]["replicas"] -= 1


def gpus(doc: Doc) -> None:
    for c in _containers(doc["spec"], "Worker", "tfReplicaSpecs"):
        limits = c.setdefault("resources", {}).setdefault("limits", {})
        limits["nvidia.com/gpu"] = int(limits.get("nvidia.com/gpu", 1)) + 1


def env_var(doc: Doc) -> None:
    for replica in doc["spec"]["pytorchReplicaSpecs"].values():
        for c in replica["template"]["spec"]["containers"]:
            c.setdefault("env", []).append({"name": "E2E_EDIT", "value": "1"})


def rename(doc: Doc) -> list[Doc]:
    new = copy.deepcopy(doc)
    new["metadata"]["name"] = doc["metadata"]["name"] + "-v2"
    return [new]


def remove(doc: Doc) -> list[Doc]:
    return []


def move_namespace(doc: Doc) -> None:
    doc["metadata"].pop("namespace", None)  # into the stack's namespace


def queue(doc: Doc) -> None:
    doc["metadata"].setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "training-queue"


def trainjob_nodes(doc: Doc) -> None:
    doc["spec"]["trainer"]["numNodes"] += 1


ADDED_JOB: Doc = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "e2e-added"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "restartPolicy": "OnFailure",
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
                                "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                            }
                        ]
                    }
                },
            }
        }
    },
}


def edits_step(project: Project) -> None:
    """The first batch of edits, on dev and staging."""
    project.edit_job("dev", "mnist-smoke", image)
    project.edit_job("dev", "dist-mnist-for-e2e-test", scale_up)
    project.edit_job("dev", "multi-worker", gpus)
    project.edit_job("dev", "torchrun-cpu", env_var)
    project.add_job("dev", copy.deepcopy(ADDED_JOB))
    project.edit_job("dev", "lightgbm-dist-train-test", remove)
    project.edit_job("dev", "jaxjob-simple", rename)
    project.edit_job("dev", "pytorch-deepspeed-demo", queue)
    project.edit_job("dev", "multi-node-example", trainjob_nodes)
    grow_claim(project, "staging", "strategy-volume")


def moves_step(project: Project) -> None:
    project.edit_job("dev", "dist-mnist-for-e2e-test", scale_down)
    project.edit_job("dev", "paddle-simple-cpu", move_namespace)
    project.edit_job("dev", "xgboost-dist-iris-test-train", switch_workload)


def switch_workload(doc: Doc) -> None:
    annotations = doc["metadata"].setdefault("annotations", {})
    current = annotations.get("kubetrain.io/native-workload")
    annotations["kubetrain.io/native-workload"] = "pod" if current != "pod" else "job"


def grow_claim(project: Project, env: str, name: str) -> None:
    for file in sorted((project.folder / "stacks" / env).glob("*.yaml")):
        text = file.read_text()
        if f"name: {name}" in text:
            import yaml

            docs = list(yaml.safe_load_all(text))
            for doc in docs:
                if doc and doc.get("kind") == "PersistentVolumeClaim":
                    req = doc["spec"]["resources"]["requests"]
                    req["storage"] = "600Gi"
            file.write_text(yaml.safe_dump_all(docs, sort_keys=False))
            return
    raise KeyError(f"no claim {name} in stacks/{env}")
