"""XGBoostJob, PaddleJob and JAXJob against training-operator v1.9.0, read at the tag, on
Kubeflow's own examples of that release (stacks/kubeflow-examples/): each pod's env in the
order the kind's setPodEnv writes it (pkg/controller.v1/xgboost/xgboost.go SetPodEnv,
pkg/controller.v1/paddlepaddle/envvar.go setPodEnv, pkg/controller.v1/jax/envvar.go
setPodEnv), the job-role label (each controller's IsMasterRole), ports and Services (the
defaulting's setDefaultPort, GetPortFromJob), success (UpdateJobStatus), and the operator-mode
custom resource against the real CRD."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import REPO, needs_upstream_crds
from helpers import objects, pick, replica_pods, stack_from

EXAMPLES = REPO / "stacks" / "kubeflow-examples"
CRDS = REPO.parent / "shared" / "crds" / "kubeflow.org"
ROLE = "training.kubeflow.org/job-role"


def build(tmp_path: Path, docs: list[dict[str, Any]], **config: Any) -> list[dict[str, Any]]:
    cfg = {"kubetrain:namespace": "ml", "kubetrain:jobs": docs}
    cfg.update({f"kubetrain:{k}": v for k, v in config.items()})
    return objects(stack_from(tmp_path, cfg))


def example(name: str) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / f"{name}.yaml").read_text()) if d]
    return doc


def env_of(pod: dict[str, Any], container: str) -> list[tuple[str, Any]]:
    (c,) = [c for c in pod["spec"]["containers"] if c["name"] == container]
    return [(e["name"], e.get("value", e.get("valueFrom"))) for e in c.get("env", [])]


def podsof(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return replica_pods(objs)


# --- XGBoostJob --------------------------------------------------------------------------------


def test_xgboost_env_ranks_and_lightgbm_addresses(tmp_path: Path) -> None:
    """SetPodEnv: MASTER_PORT (the Master's xgboostjob-port), MASTER_ADDR, WORLD_SIZE (all
    replicas), RANK (workers after the Master), PYTHONUNBUFFERED; with more than one replica
    WORKER_PORT and WORKER_ADDRS, the latter naming workers 0 .. total-2."""
    pods = podsof(build(tmp_path, [example("xgboost-iris-train")], nativeWorkload="pod"))
    job = "xgboost-dist-iris-test-train"
    assert sorted(pods) == [f"{job}-master-0", f"{job}-worker-0", f"{job}-worker-1"]
    common = [
        ("MASTER_PORT", "9991"),
        ("MASTER_ADDR", f"{job}-master-0"),
        ("WORLD_SIZE", "3"),
    ]
    tail = [
        ("PYTHONUNBUFFERED", "1"),
        ("WORKER_PORT", "9991"),
        ("WORKER_ADDRS", f"{job}-worker-0,{job}-worker-1"),
    ]
    for name, rank in ((f"{job}-master-0", 0), (f"{job}-worker-0", 1), (f"{job}-worker-1", 2)):
        assert env_of(pods[name], "xgboost") == [*common, ("RANK", str(rank)), *tail], name
    assert pods[f"{job}-master-0"]["metadata"]["labels"][ROLE] == "master"
    assert ROLE not in pods[f"{job}-worker-0"]["metadata"]["labels"]
    # Master Never (the kind's default and the example's); ExitCode is Never on the pod.
    assert {p["spec"]["restartPolicy"] for p in pods.values()} == {"Never"}


def test_xgboost_default_port_and_services(tmp_path: Path) -> None:
    """setXGBoostJobDefaultPort adds xgboostjob-port 9999 when the container has none; each
    replica's Service exposes the named ports of the xgboost container."""
    doc = example("xgboost-iris-train")
    for spec in doc["spec"]["xgbReplicaSpecs"].values():
        del spec["template"]["spec"]["containers"][0]["ports"]
    objs = build(tmp_path, [doc], nativeWorkload="pod")
    pod = pick(objs, "Pod", "xgboost-dist-iris-test-train-worker-1")
    (c,) = pod["spec"]["containers"]
    assert c["ports"] == [{"name": "xgboostjob-port", "containerPort": 9999}]
    assert dict(env_of(pod, "xgboost"))["MASTER_PORT"] == "9999"
    service = pick(objs, "Service", "xgboost-dist-iris-test-train-master-0")
    assert service["spec"]["ports"] == [{"name": "xgboostjob-port", "port": 9999}]


def test_xgboost_jobset_succeeds_with_the_master(tmp_path: Path) -> None:
    objs = build(tmp_path, [example("lightgbm-dist")], nativeWorkload="jobset")
    jobset = pick(objs, "JobSet", "lightgbm-dist-train-test")
    assert jobset["spec"]["successPolicy"] == {
        "operator": "All",
        "targetReplicatedJobs": ["master-0"],
    }


# --- PaddleJob ---------------------------------------------------------------------------------


def test_paddle_collective_mode_rendezvous_at_worker_0(tmp_path: Path) -> None:
    """Without a Master: PADDLE_MASTER is worker 0's own IP (through POD_IP_DUMMY from
    status.podIP) on worker 0 and ``<job>-worker-0:<port>`` elsewhere; no server or trainer
    counts; no pod has job-role master (IsMasterRole names the Master only)."""
    pods = podsof(build(tmp_path, [example("paddle-simple-cpu")], nativeWorkload="pod"))
    job = "paddle-simple-cpu"
    head = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", job), ("PADDLE_NNODES", "2")]
    assert env_of(pods[f"{job}-worker-0"], "paddle") == [
        *head,
        ("POD_IP_DUMMY", {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}),
        ("PADDLE_MASTER", "$(POD_IP_DUMMY):37777"),
    ]
    assert env_of(pods[f"{job}-worker-1"], "paddle") == [
        *head,
        ("PADDLE_MASTER", f"{job}-worker-0:37777"),
    ]
    assert not any(ROLE in p["metadata"]["labels"] for p in pods.values())


def test_paddle_parameter_server_mode(tmp_path: Path) -> None:
    """With a Master: the rendezvous is the Master on its ``master`` port (36543 by default),
    the Master gets PADDLE_SERVER_NUM 1 and the Workers PADDLE_TRAINER_NUM 1."""
    template = {"spec": {"containers": [{"name": "paddle", "image": "paddle:2.4"}]}}
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": "ps"},
        "spec": {
            "paddleReplicaSpecs": {
                "Master": {"replicas": 1, "template": template},
                "Worker": {"replicas": 2, "template": template},
            }
        },
    }
    objs = build(tmp_path, [doc], nativeWorkload="pod")
    pods = podsof(objs)
    head = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", "ps"), ("PADDLE_NNODES", "3")]
    assert env_of(pods["ps-master-0"], "paddle") == [
        *head,
        ("POD_IP_DUMMY", {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}),
        ("PADDLE_MASTER", "$(POD_IP_DUMMY):36543"),
        ("PADDLE_SERVER_NUM", "1"),
    ]
    assert env_of(pods["ps-worker-0"], "paddle") == [
        *head,
        ("PADDLE_MASTER", "ps-master-0:36543"),
        ("PADDLE_TRAINER_NUM", "1"),
    ]
    assert pods["ps-master-0"]["metadata"]["labels"][ROLE] == "master"
    # OnFailure is the kind's default restart policy.
    assert {p["spec"]["restartPolicy"] for p in pods.values()} == {"OnFailure"}


@pytest.mark.parametrize(
    ("name", "targets"),
    [("paddle-simple-gpu", ["worker-0", "worker-1"])],
)
def test_paddle_jobset_succeeds_with_every_worker(
    tmp_path: Path, name: str, targets: list[str]
) -> None:
    objs = build(tmp_path, [example(name)], nativeWorkload="jobset")
    jobset = pick(objs, "JobSet", name)
    assert jobset["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": targets}


# --- JAXJob ------------------------------------------------------------------------------------


def test_jax_coordinator_and_process_ids(tmp_path: Path) -> None:
    """setPodEnv: PYTHONUNBUFFERED, COORDINATOR_PORT (worker 0's jaxjob-port, 6666 added by
    setJAXDefaultPort), COORDINATOR_ADDRESS, NUM_PROCESSES, PROCESS_ID; worker 0 has job-role
    master (IsMasterRole: index 0)."""
    objs = build(tmp_path, [example("jax-cpu-demo")], nativeWorkload="pod")
    pods = podsof(objs)
    job = "jaxjob-simple"
    for index in (0, 1):
        assert env_of(pods[f"{job}-worker-{index}"], "jax") == [
            ("PYTHONUNBUFFERED", "1"),
            ("COORDINATOR_PORT", "6666"),
            ("COORDINATOR_ADDRESS", f"{job}-worker-0"),
            ("NUM_PROCESSES", "2"),
            ("PROCESS_ID", str(index)),
        ]
    assert pods[f"{job}-worker-0"]["metadata"]["labels"][ROLE] == "master"
    assert ROLE not in pods[f"{job}-worker-1"]["metadata"]["labels"]
    (c,) = pods[f"{job}-worker-1"]["spec"]["containers"]
    assert c["ports"] == [{"name": "jaxjob-port", "containerPort": 6666}]
    assert pick(objs, "Service", f"{job}-worker-0")["spec"]["ports"] == [
        {"name": "jaxjob-port", "port": 6666}
    ]


def test_jax_jobset_succeeds_with_every_worker(tmp_path: Path) -> None:
    objs = build(tmp_path, [example("jax-spmd-mnist")], nativeWorkload="jobset")
    jobset = pick(objs, "JobSet", "jaxjob-mnist")
    assert jobset["spec"]["successPolicy"] == {
        "operator": "All",
        "targetReplicatedJobs": ["worker-0", "worker-1"],
    }


# --- every kind, every native workload --------------------------------------------------------

KINDS = ("xgboost-iris-train", "lightgbm-dist", "paddle-simple-gpu", "jax-spmd-mnist")


@pytest.mark.parametrize("workload", ["pod", "job", "jobset"])
@pytest.mark.parametrize("name", KINDS)
def test_the_pods_are_the_same_under_every_workload(
    tmp_path: Path, name: str, workload: str
) -> None:
    """What runs a replica changes, the pod's env and labels do not (docs/native-workloads.md)."""
    pods = podsof(build(tmp_path, [example(name)], nativeWorkload=workload))
    (tmp_path / "ref").mkdir()
    reference = podsof(build(tmp_path / "ref", [example(name)], nativeWorkload="pod"))
    assert sorted(pods) == sorted(reference)
    for pod_name, pod in pods.items():
        ref = reference[pod_name]
        for c, r in zip(pod["spec"]["containers"], ref["spec"]["containers"], strict=True):
            assert c.get("env") == r.get("env"), pod_name
        assert pod["metadata"]["labels"] == ref["metadata"]["labels"]


# --- operator mode -----------------------------------------------------------------------------


def strict(schema: Any) -> Any:
    """An openAPIV3Schema as a JSON schema refusing unknown fields (kubeconform -strict)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if schema.get("x-kubernetes-int-or-string"):
        out = {k: v for k, v in out.items() if k != "type"}
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def crd_validator(plural: str) -> jsonschema.Draft7Validator:
    crd = yaml.safe_load((CRDS / f"kubeflow.org_{plural}.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return jsonschema.Draft7Validator(strict(version["schema"]["openAPIV3Schema"]))


@needs_upstream_crds
@pytest.mark.parametrize(
    ("name", "plural", "key"),
    [
        ("xgboost-iris-train", "xgboostjobs", "xgbReplicaSpecs"),
        ("lightgbm-dist", "xgboostjobs", "xgbReplicaSpecs"),
        ("paddle-simple-gpu", "paddlejobs", "paddleReplicaSpecs"),
        ("jax-cpu-demo", "jaxjobs", "jaxReplicaSpecs"),
    ],
)
def test_operator_mode_custom_resources_are_valid_against_the_real_crds(
    tmp_path: Path, name: str, plural: str, key: str
) -> None:
    (cr,) = build(tmp_path, [example(name)], mode="operator")
    validator = crd_validator(plural)
    assert sorted(e.message for e in validator.iter_errors(cr)) == []
    assert cr["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}  # the controller's default
    for spec in cr["spec"][key].values():
        assert "restartPolicy" in spec and "replicas" in spec
    broken = copy.deepcopy(cr)
    next(iter(broken["spec"][key].values()))["restartPolicies"] = "Never"
    assert not validator.is_valid(broken)
