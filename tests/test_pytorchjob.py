"""PyTorchJob expansion against training-operator v1.9.0, read at the tag (pkg/controller.v1/pytorch:
envvar.go setPodEnv, master.go MasterEnvVarGenerator.Generate, elastic.go
ElasticEnvVarGenerator.Generate, initcontainer.go, pytorchjob_controller.go IsMasterRole and
UpdateJobStatus; pkg/apis/kubeflow.org/v1/pytorch_defaults.go; pkg/webhooks/pytorch) and its
custom resource against the operator's own CRD. Expected env lists are written from those
functions, in their order."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kubetrain.builders import BuildContext
from kubetrain.builders.pytorchjob import PyTorchTrainingJob
from kubetrain.models import InputError

from conftest import REPO, needs_upstream_crds
from helpers import container, objects, pick, pod_stack

PT = "pytorch"
CRD = REPO.parent / "shared" / "crds" / "kubeflow.org" / "kubeflow.org_pytorchjobs.yaml"


def pytorchjob(name: str = "mnist", **replicas: dict) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name},
        "spec": {"pytorchReplicaSpecs": replicas},
    }


def replica(n: int = 1, **extra: Any) -> dict:
    spec = {"replicas": n, "template": {"spec": {"containers": [{"name": PT, "image": "pt:2"}]}}}
    spec.update(extra)
    return spec


def build(tmp_path: Path, job: dict, **config: Any) -> list[dict]:
    cfg = {"kubetrain:namespace": "ml", "kubetrain:jobs": [job]}
    cfg.update({f"kubetrain:{k}": v for k, v in config.items()})
    return objects(pod_stack(tmp_path, cfg))


def env_list(c: dict) -> list[tuple[str, str]]:
    return [(e["name"], e["value"]) for e in c.get("env", [])]


def test_master_and_worker_env_are_set_pod_env(tmp_path: Path) -> None:
    """setPodEnv (v1.9.0) appends, in this order: PYTHONUNBUFFERED "1"; with a Master,
    MasterEnvVarGenerator's MASTER_PORT, PET_MASTER_PORT, MASTER_ADDR, PET_MASTER_ADDR, then
    WORLD_SIZE, RANK (workers from 1), PET_NODE_RANK; PET_NPROC_PER_NODE (nprocPerNode, which
    setDefaultNprocPerNode sets to auto); PET_NNODES. On every container."""
    worker = replica(2)
    worker["template"]["spec"]["containers"].append({"name": "side", "image": "s"})
    objs = build(tmp_path, pytorchjob(Master=replica(1), Worker=worker))
    master_env = [
        ("PYTHONUNBUFFERED", "1"),
        ("MASTER_PORT", "23456"),
        ("PET_MASTER_PORT", "23456"),
        ("MASTER_ADDR", "mnist-master-0"),
        ("PET_MASTER_ADDR", "mnist-master-0"),
        ("WORLD_SIZE", "3"),
    ]
    master = pick(objs, "Pod", "mnist-master-0")
    assert env_list(container(master, PT)) == [
        *master_env,
        ("RANK", "0"),
        ("PET_NODE_RANK", "0"),
        ("PET_NPROC_PER_NODE", "auto"),
        ("PET_NNODES", "3"),
    ]
    worker1 = pick(objs, "Pod", "mnist-worker-1")
    expected = [
        *master_env,
        ("RANK", "2"),
        ("PET_NODE_RANK", "2"),
        ("PET_NPROC_PER_NODE", "auto"),
        ("PET_NNODES", "3"),
    ]
    assert env_list(container(worker1, PT)) == expected
    assert env_list(container(worker1, "side")) == expected  # every container, as setPodEnv
    assert master["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert "training.kubeflow.org/job-role" not in worker1["metadata"]["labels"]


def test_a_worker_only_job_gets_nproc_per_node_and_worker_0_leads(tmp_path: Path) -> None:
    """Without a Master there is no master env, but PET_NPROC_PER_NODE is still written
    (nprocPerNode set), and IsMasterRole names worker 0 (the fix for kubeflow/trainer#1961)."""
    job = pytorchjob(Worker=replica(2))
    job["spec"]["nprocPerNode"] = "4"
    objs = build(tmp_path, job)
    worker0, worker1 = pick(objs, "Pod", "mnist-worker-0"), pick(objs, "Pod", "mnist-worker-1")
    assert env_list(container(worker0, PT)) == [
        ("PYTHONUNBUFFERED", "1"),
        ("PET_NPROC_PER_NODE", "4"),
        ("PET_NNODES", "2"),
    ]
    assert worker0["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert "training.kubeflow.org/job-role" not in worker1["metadata"]["labels"]


@pytest.mark.parametrize(("nproc", "world"), [("4", "12"), ("gpu", "3"), ("auto", "3")])
def test_world_size_multiplies_a_numeric_nproc_per_node(
    tmp_path: Path, nproc: str, world: str
) -> None:
    job = pytorchjob(Master=replica(1), Worker=replica(2))
    job["spec"]["nprocPerNode"] = nproc
    env = dict(env_list(container(pick(build(tmp_path, job), "Pod", "mnist-worker-0"), PT)))
    assert (env["WORLD_SIZE"], env["PET_NPROC_PER_NODE"]) == (world, nproc)


def test_workers_wait_for_the_master_in_an_init_container(tmp_path: Path) -> None:
    """initcontainer.go's default template (alpine:3.10, 100 tries), workers only, after the
    template's own init containers."""
    worker = replica(1)
    worker["template"]["spec"]["initContainers"] = [{"name": "own", "image": "busybox"}]
    objs = build(tmp_path, pytorchjob(Master=replica(1), Worker=worker))
    inits = pick(objs, "Pod", "mnist-worker-0")["spec"]["initContainers"]
    assert [c["name"] for c in inits] == ["own", "init-pytorch"]
    assert inits[1] == {
        "name": "init-pytorch",
        "image": "alpine:3.10",
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "limits": {"cpu": "100m", "memory": "20Mi"},
            "requests": {"cpu": "50m", "memory": "10Mi"},
        },
        "command": [
            "sh",
            "-c",
            "err=1;for i in $(seq 100); do if nslookup mnist-master-0; then err=0 && break; fi;"
            "echo waiting for master; sleep 2; done; exit $err",
        ],
    }
    assert "initContainers" not in pick(objs, "Pod", "mnist-master-0")["spec"]


def test_elastic_workers_get_the_rendezvous_env_and_no_master(tmp_path: Path) -> None:
    """Kubeflow's elastic echo example: PYTHONUNBUFFERED, PET_NPROC_PER_NODE (defaulted to auto),
    then ElasticEnvVarGenerator's variables: min and max replicas as PET_NNODES, the rendezvous
    on worker 0's pytorchjob-port; no init container."""
    example = yaml.safe_load(
        (REPO / "stacks/kubeflow-examples/pytorch-elastic-echo.yaml").read_text()
    )
    objs = build(tmp_path, example)
    pod = pick(objs, "Pod", "elastic-example-echo-worker-1")
    assert env_list(container(pod, PT)) == [
        ("LOGLEVEL", "DEBUG"),
        ("PYTHONUNBUFFERED", "1"),
        ("PET_NPROC_PER_NODE", "auto"),
        ("PET_RDZV_ENDPOINT", "elastic-example-echo-worker-0:23456"),
        ("PET_RDZV_BACKEND", "c10d"),
        ("PET_NNODES", "1:2"),
        ("PET_MAX_RESTARTS", "100"),
    ]
    assert "initContainers" not in pod["spec"]
    assert pod["spec"]["restartPolicy"] == "OnFailure"  # PytorchJobDefaultRestartPolicy


def test_every_elastic_setting(tmp_path: Path) -> None:
    job = pytorchjob(Worker=replica(3))
    job["spec"]["elasticPolicy"] = {
        "minReplicas": 2,
        "rdzvHost": "etcd.infra",
        "rdzvPort": 2379,
        "rdzvId": "run-7",
        "rdzvConf": [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}],
        "standalone": True,
        "nProcPerNode": 8,
        "maxRestarts": 3,
    }
    env = env_list(container(pick(build(tmp_path, job), "Pod", "mnist-worker-2"), PT))
    assert env == [
        ("PYTHONUNBUFFERED", "1"),
        ("PET_RDZV_ENDPOINT", "etcd.infra:2379"),
        ("PET_RDZV_BACKEND", "c10d"),
        ("PET_NNODES", "2:2"),  # setElasticPolicy: maxReplicas from minReplicas
        ("PET_MAX_RESTARTS", "3"),
        ("PET_NPROC_PER_NODE", "8"),
        ("PET_RDZV_ID", "run-7"),
        ("PET_RDZV_CONF", "a=1,b=2"),
        ("PET_STANDALONE", ""),
    ]


@pytest.mark.parametrize(
    ("policy", "pod_policy"),
    [(None, "OnFailure"), ("Always", "Always"), ("Never", "Never"), ("ExitCode", "Never")],
)
def test_restart_policy(tmp_path: Path, policy: str | None, pod_policy: str) -> None:
    worker = replica(1, restartPolicy=policy) if policy else replica(1)
    objs = build(tmp_path, pytorchjob(Worker=worker))
    assert pick(objs, "Pod", "mnist-worker-0")["spec"]["restartPolicy"] == pod_policy


def test_services_expose_named_ports(tmp_path: Path) -> None:
    objs = build(tmp_path, pytorchjob(Master=replica(1), Worker=replica(1)))
    assert sorted(o["metadata"]["name"] for o in objs if o["kind"] == "Service") == [
        "mnist-master-0",
        "mnist-worker-0",
    ]
    service = pick(objs, "Service", "mnist-master-0")
    assert service["spec"]["ports"] == [{"name": "pytorchjob-port", "port": 23456}]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"]["training.kubeflow.org/replica-type"] == "master"


@pytest.mark.parametrize(
    ("replicas", "message"),
    [
        ({"worker": replica(1)}, "Input should be 'Master' or 'Worker', got 'worker'"),
        ({"MASTER": replica(1)}, "Input should be 'Master' or 'Worker', got 'MASTER'"),
    ],
)
def test_the_webhook_reads_replica_types_as_written(
    tmp_path: Path, replicas: dict, message: str
) -> None:
    """validatePyTorchReplicaSpecs (v1.9.0) checks the map's keys before any defaulting
    normalises their case: anything but Master and Worker is an unsupported value."""
    with pytest.raises(InputError, match=re.escape(message)):
        pod_stack(tmp_path, {"kubetrain:jobs": [pytorchjob(**replicas)]})


def test_a_master_needs_replicas_written(tmp_path: Path) -> None:
    """The webhook refuses a Master whose replicas is nil ("must be 1"): it runs before
    SetDefaults_PyTorchJob sets the count."""
    master = replica(1)
    del master["replicas"]
    with pytest.raises(InputError, match=re.escape("pytorchReplicaSpecs.Master: Master needs")):
        pod_stack(tmp_path, {"kubetrain:jobs": [pytorchjob(Master=master, Worker=replica(1))]})


def test_deprecated_nproc_per_node_with_a_master_is_expanded(tmp_path: Path) -> None:
    """v1.9.0 reads nprocPerNode only when set (getNprocPerNodeInt checks nil): a job with a
    Master and only the deprecated elasticPolicy.nProcPerNode expands, WORLD_SIZE counting one
    process per node and PET_NPROC_PER_NODE coming from ElasticEnvVarGenerator."""
    job = pytorchjob(Master=replica(1), Worker=replica(1))
    job["spec"]["elasticPolicy"] = {"nProcPerNode": 2}
    env = env_list(container(pick(build(tmp_path, job), "Pod", "mnist-worker-0"), PT))
    assert ("WORLD_SIZE", "2") in env
    assert [e for e in env if e[0] == "PET_NPROC_PER_NODE"] == [("PET_NPROC_PER_NODE", "2")]


def test_gang_scheduling_pod_security_and_gpus_as_for_tfjob(tmp_path: Path) -> None:
    worker = replica(2)
    worker["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"alpha.kubernetes.io/nvidia-gpu": 1}
    }
    job = pytorchjob(Master=replica(1), Worker=worker)
    job["metadata"]["annotations"] = {"team": "nlp"}
    objs = build(tmp_path, job, gangScheduler="volcano", podSecurity="restricted")
    group = pick(objs, "PodGroup", "mnist")
    assert group["spec"]["minMember"] == 3
    assert group["metadata"]["annotations"] == {"team": "nlp"}
    pod = pick(objs, "Pod", "mnist-worker-1")
    assert pod["spec"]["schedulerName"] == "volcano"
    assert pod["metadata"]["annotations"]["volcano.sh/task-spec"] == "worker"
    resources = container(pod, PT)["resources"]
    assert resources == {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}
    # Restricted reaches the operator's init container too.
    init = pod["spec"]["initContainers"][0]
    assert init["securityContext"]["allowPrivilegeEscalation"] is False
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_hooks_of_the_expansion(tmp_path: Path) -> None:
    stack = pod_stack(
        tmp_path, {"kubetrain:jobs": [pytorchjob(Master=replica(1), Worker=replica(3))]}
    )
    job = PyTorchTrainingJob(stack.jobs[0].job, BuildContext(stack.settings))  # type: ignore[arg-type]
    assert [rs.rtype for rs in job.replicas] == ["Master", "Worker"]
    assert job.is_master("Master", 0) and not job.is_master("Worker", 0)
    assert (job.master_addr(), job.world_size()) == ("mnist-master-0", 4)
    assert job.success() == ("All", [("Master", 0)])


@pytest.mark.parametrize(
    ("elastic", "expected"),
    [
        (None, ("All", [("Worker", 0), ("Worker", 1)])),
        ({}, ("Any", [("Worker", 0), ("Worker", 1)])),
    ],
    ids=["all-workers", "elastic-any-worker"],
)
def test_a_worker_only_job_succeeds_as_update_job_status(
    tmp_path: Path, elastic: dict | None, expected: tuple
) -> None:
    """Without a Master the job succeeds when every Worker has, or, elastic, any Worker."""
    job_doc = pytorchjob(Worker=replica(2))
    if elastic is not None:
        job_doc["spec"]["elasticPolicy"] = elastic
    stack = pod_stack(tmp_path, {"kubetrain:jobs": [job_doc]})
    job = PyTorchTrainingJob(stack.jobs[0].job, BuildContext(stack.settings))  # type: ignore[arg-type]
    assert job.success() == expected


# --- operator mode -----------------------------------------------------------------------------


def strict(schema: Any) -> Any:
    """An openAPIV3Schema as a JSON schema that refuses unknown fields, as kubeconform's strict
    mode does (objects without properties or preserve-unknown-fields stay open)."""
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


def crd_validator() -> jsonschema.Draft7Validator:
    crd = yaml.safe_load(CRD.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return jsonschema.Draft7Validator(strict(version["schema"]["openAPIV3Schema"]))


@needs_upstream_crds
def test_operator_mode_emits_the_defaulted_custom_resource_valid_against_the_crd(
    tmp_path: Path,
) -> None:
    job = pytorchjob(Master=replica(1), Worker=replica(2))
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    job["spec"]["elasticPolicy"] = {"maxRestarts": 3, "rdzvConf": [{"key": "k", "value": "v"}]}
    job["spec"]["runPolicy"] = {"managedBy": "kueue.x-k8s.io/multikueue"}
    (cr,) = build(tmp_path, job)
    assert (cr["apiVersion"], cr["kind"]) == ("kubeflow.org/v1", "PyTorchJob")
    spec = cr["spec"]
    assert spec["nprocPerNode"] == "auto"  # setDefaultNprocPerNode
    assert spec["elasticPolicy"]["minReplicas"] == spec["elasticPolicy"]["maxReplicas"] == 2
    assert spec["runPolicy"] == {
        "cleanPodPolicy": "None",
        "managedBy": "kueue.x-k8s.io/multikueue",
    }
    for rtype in ("Master", "Worker"):
        replica_spec = spec["pytorchReplicaSpecs"][rtype]
        assert replica_spec["restartPolicy"] == "OnFailure"
        assert replica_spec["template"]["spec"]["containers"][0]["ports"] == [
            {"containerPort": 23456, "name": "pytorchjob-port"}
        ]
    validator = crd_validator()
    assert sorted(e.message for e in validator.iter_errors(cr)) == []
    # The check can fail: a field the CRD does not know is refused.
    broken = copy.deepcopy(cr)
    broken["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicies"] = "Never"
    assert not validator.is_valid(broken)


@needs_upstream_crds
def test_the_golden_custom_resource_is_valid_against_the_crd() -> None:
    path = REPO / "tests/cases/pytorchjob/expected/other/pytorchjob-operated.yaml"
    cr = yaml.safe_load(path.read_text())
    assert cr["spec"]["elasticPolicy"]["metrics"]  # operator mode keeps the autoscaler's metrics
    assert sorted(e.message for e in crd_validator().iter_errors(cr)) == []
