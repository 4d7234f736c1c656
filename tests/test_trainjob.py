"""TrainJob (Kubeflow Trainer v2.3.0): the JobSet the trainer's controller builds from a TrainJob
and its runtime, field by field, with expectations written from the plugins' source
(``pkg/runtime/framework/plugins/*`` at v2.3.0), on the runtimes Kubeflow publishes (read in
place from ../shared/upstream/trainer-v2.3.0-runtimes); the trainer's webhooks' refusals; the
custom resource of operator mode; Kueue's queue."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.builders.trainjob import RUNS_ANNOTATION, pod_requests
from kubetrain.models import InputError, load_stack

from conftest import REPO, UPSTREAM_RUNTIMES, needs_upstream_runtimes
from helpers import objects, stack_from

EXAMPLES = REPO / "stacks" / "trainer-examples"
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def trainjob(name: str, runtime: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": runtime}, **spec},
    }


def project(tmp_path: Path, jobs: list[dict[str, Any]], runtimes: list[str], **config: Any) -> Path:
    """A project whose stack delivers ``runtimes`` (upstream files, copied at test time)."""
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    (tmp_path / "stacks" / "runtimes").mkdir(parents=True)
    for name in runtimes:
        shutil.copy(UPSTREAM_RUNTIMES / f"{name}.yaml", tmp_path / "stacks" / "runtimes")
    stack = {
        "kubetrain:namespace": "ml",
        "kubetrain:secretStore": {"kind": "ClusterSecretStore", "name": "vault"},
        "kubetrain:jobs": jobs,
        **{f"kubetrain:{k}": v for k, v in config.items()},
    }
    if runtimes:
        stack["kubetrain:manifestFiles"] = ["stacks/runtimes/*.yaml"]
    (tmp_path / "stacks" / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": stack}))
    return tmp_path


def build(
    tmp_path: Path, jobs: list[dict[str, Any]], runtimes: list[str], **config: Any
) -> list[dict[str, Any]]:
    path = project(tmp_path, jobs, runtimes, **config)
    return objects(load_stack(path / "stacks" / "Pulumi.t.yaml"))


def native(job: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(job)
    out["metadata"].setdefault("annotations", {})["kubetrain.io/mode"] = "native"
    return out


def pick(objs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def rjob(jobset: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name]
    return found


def container(r: dict[str, Any], name: str = "node") -> dict[str, Any]:
    (found,) = [
        c for c in r["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == name
    ]
    return found


def env(c: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(e["name"], e.get("value", e.get("valueFrom"))) for e in c.get("env") or []]


INDEX = {"fieldRef": {"fieldPath": COMPLETION_INDEX}}


# --- torch ------------------------------------------------------------------------------------


@needs_upstream_runtimes
def test_torch_writes_the_pet_env_after_the_trainers_and_a_port(tmp_path: Path) -> None:
    """torch.go EnforceMLPolicy: the trainer's env, then PET_NNODES (numNodes),
    PET_NPROC_PER_NODE (auto with GPUs, else the CPUs per node), PET_NODE_RANK (the completion
    index), PET_MASTER_ADDR (<job>-node-0-0.<job>) and PET_MASTER_PORT (29500); port 29500; the
    trainer step's parallelism and completions are numNodes, its replicas 1."""
    job = native(
        trainjob(
            "bert",
            "torch-distributed",
            trainer={
                "numNodes": 3,
                "image": "registry.example.com/bert:1",
                "command": ["torchrun", "train.py"],
                "args": ["--epochs", "2"],
                "env": [{"name": "LR", "value": "0.1"}],
                "resourcesPerNode": {"requests": {"cpu": "500m", "memory": "2Gi"}},
            },
        )
    )
    jobset = pick(build(tmp_path, [job], ["torch_distributed"]), "JobSet", "bert")
    node = rjob(jobset, "node")
    assert node["replicas"] == 1
    assert (node["template"]["spec"]["parallelism"], node["template"]["spec"]["completions"]) == (
        3,
        3,
    )
    c = container(node)
    assert env(c) == [
        ("LR", "0.1"),
        ("PET_NNODES", "3"),
        ("PET_NPROC_PER_NODE", "1"),  # 500m CPUs, rounded up, no GPU
        ("PET_NODE_RANK", INDEX),
        ("PET_MASTER_ADDR", "bert-node-0-0.bert"),
        ("PET_MASTER_PORT", "29500"),
    ]
    assert c["ports"] == [{"containerPort": 29500}]
    assert (c["image"], c["command"], c["args"]) == (
        "registry.example.com/bert:1",
        ["torchrun", "train.py"],
        ["--epochs", "2"],
    )
    assert c["resources"] == {"requests": {"cpu": "500m", "memory": "2Gi"}}
    # The JobSet is the TrainJob's name and namespace, with the runtime's template labels.
    assert jobset["metadata"]["name"] == "bert" and jobset["metadata"]["namespace"] == "ml"
    assert "labels" not in jobset["metadata"]


@needs_upstream_runtimes
@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        pytest.param({"limits": {"nvidia.com/gpu": 4}}, "auto", id="gpus-auto"),
        pytest.param({"requests": {"cpu": "8"}}, "8", id="cpus"),
        pytest.param({}, "1", id="nothing"),
    ],
)
def test_torch_procs_per_node(tmp_path: Path, resources: dict, expected: str) -> None:
    trainer: dict[str, Any] = {"numNodes": 2}
    if resources:
        trainer["resourcesPerNode"] = resources
    jobset = pick(
        build(
            tmp_path,
            [native(trainjob("j", "torch-distributed", trainer=trainer))],
            ["torch_distributed"],
        ),
        "JobSet",
        "j",
    )
    assert dict(env(container(rjob(jobset, "node"))))["PET_NPROC_PER_NODE"] == expected


@needs_upstream_runtimes
def test_a_trainjob_without_trainer_gets_no_pet_env(tmp_path: Path) -> None:
    """The torch plugin writes env only when the TrainJob has a trainer."""
    jobset = pick(
        build(tmp_path, [native(trainjob("j", "torch-distributed"))], ["torch_distributed"]),
        "JobSet",
        "j",
    )
    c = container(rjob(jobset, "node"))
    assert "env" not in c and "ports" not in c
    assert rjob(jobset, "node")["template"]["spec"]["parallelism"] == 1  # the runtime's numNodes


# --- mpi --------------------------------------------------------------------------------------


@needs_upstream_runtimes
def test_mpi_launcher_as_node(tmp_path: Path) -> None:
    """mpi.go: with runLauncherAsNode the node job runs numNodes - 1 pods and the launcher is a
    node too (in the hostfile); slots are the GPUs per node when the runtime says 1; the launcher
    gets the hostfile and OpenMPI's env; every node the SSH keys at sshAuthMountPath."""
    job = native(
        trainjob(
            "ds",
            "deepspeed-distributed",
            trainer={
                "numNodes": 3,
                "env": [{"name": "WANDB_MODE", "value": "offline"}],
                "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}},
            },
        )
    )
    objs = build(tmp_path, [job], ["deepspeed_distributed"])
    jobset = pick(objs, "JobSet", "ds")
    node, launcher = rjob(jobset, "node"), rjob(jobset, "launcher")
    assert node["template"]["spec"]["parallelism"] == 2
    assert launcher["template"]["spec"]["parallelism"] == 1
    assert pick(objs, "ConfigMap", "ds-mpi-hostfile")["data"]["hostfile"] == (
        "ds-node-0-0.ds slots=2\nds-node-0-1.ds slots=2\nds-launcher-0-0.ds slots=2\n"
    )
    launcher_env = env(container(launcher))
    assert launcher_env == [
        ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
        ("OMPI_MCA_orte_set_default_slots", "2"),
        ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
        ("WANDB_MODE", "offline"),
    ]
    # The trainer's env reaches the node job too (runLauncherAsNode), and both get the GPUs.
    assert env(container(node)) == [("WANDB_MODE", "offline")]
    for r in (node, launcher):
        assert container(r)["resources"] == {"limits": {"nvidia.com/gpu": 2}}
        mounts = {m["name"]: m["mountPath"] for m in container(r)["volumeMounts"]}
        assert mounts["mpi-ssh-auth"] == "/home/mpiuser/.ssh"
        volumes = {v["name"]: v for v in r["template"]["spec"]["template"]["spec"]["volumes"]}
        assert volumes["mpi-ssh-auth"]["secret"]["secretName"] == "ds-mpi-ssh-auth"
        assert [i["path"] for i in volumes["mpi-ssh-auth"]["secret"]["items"]] == [
            "id_rsa",
            "id_rsa.pub",
            "authorized_keys",
        ]
    assert {m["name"] for m in container(launcher)["volumeMounts"]} == {
        "mpi-ssh-auth",
        "mpi-hostfile",
    }
    # The runtime's own JobSet fields stay: the launcher waits for the nodes, and is the success.
    assert launcher["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert jobset["spec"]["successPolicy"] == {
        "operator": "All",
        "targetReplicatedJobs": ["launcher"],
    }
    # The key pair comes from the secret store, never generated.
    secret = pick(objs, "ExternalSecret", "ds-mpi-ssh-auth")
    assert secret["spec"]["target"]["template"]["type"] == "kubernetes.io/ssh-auth"


# --- jax and xgboost ----------------------------------------------------------------------------


@needs_upstream_runtimes
def test_jax_env_then_the_trainers(tmp_path: Path) -> None:
    """jax.go: JAX_NUM_PROCESSES, JAX_PROCESS_ID, JAX_COORDINATOR_ADDRESS; the trainer's env is
    upserted after them by the JobSet builder (Trainer)."""
    job = native(
        trainjob(
            "jx", "jax-distributed", trainer={"numNodes": 2, "env": [{"name": "X", "value": "1"}]}
        )
    )
    c = container(rjob(pick(build(tmp_path, [job], ["jax_distributed"]), "JobSet", "jx"), "node"))
    assert env(c) == [
        ("JAX_NUM_PROCESSES", "2"),
        ("JAX_PROCESS_ID", INDEX),
        ("JAX_COORDINATOR_ADDRESS", "jx-node-0-0.jx:29500"),
        ("X", "1"),
    ]
    assert c["ports"] == [{"containerPort": 29500}]


@needs_upstream_runtimes
def test_xgboost_env_counts_a_worker_per_gpu(tmp_path: Path) -> None:
    """xgboost.go: DMLC_TRACKER_URI and _PORT, DMLC_TASK_ID, DMLC_NUM_WORKER = nodes x GPUs
    per node (one per node without GPUs); the trainer's env first (PlainML; see the builder)."""
    job = native(
        trainjob(
            "xg",
            "xgboost-distributed",
            trainer={
                "numNodes": 3,
                "env": [{"name": "X", "value": "1"}],
                "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}},
            },
        )
    )
    c = container(
        rjob(pick(build(tmp_path, [job], ["xgboost_distributed"]), "JobSet", "xg"), "node")
    )
    assert env(c) == [
        ("X", "1"),
        ("DMLC_TRACKER_URI", "xg-node-0-0.xg"),
        ("DMLC_TRACKER_PORT", "29500"),
        ("DMLC_TASK_ID", INDEX),
        ("DMLC_NUM_WORKER", "6"),
    ]


# --- initializers and torchtune ---------------------------------------------------------------


@needs_upstream_runtimes
def test_initializers_and_torchtune(tmp_path: Path) -> None:
    """builder.go Initializer: STORAGE_URI, the step's env and its secretRef (envFrom) on the
    initializer container, one replica; torchtune.go rewrites `tune run` with the recipe and
    config of the model and the runtime's immutable overrides."""
    job = native(
        trainjob(
            "tune",
            "torchtune-llama3.2-1b",
            initializer={
                "dataset": {"storageUri": "hf://tatsu-lab/alpaca", "secretRef": {"name": "hf"}},
                "model": {"storageUri": "hf://meta-llama/Llama-3.2-1B-Instruct"},
            },
            trainer={
                "command": ["tune", "run"],
                "resourcesPerNode": {"limits": {"nvidia.com/gpu": 2}},
            },
        )
    )
    jobset = pick(build(tmp_path, [job], ["torchtune_llama3_2_llama3_2_1B"]), "JobSet", "tune")
    dataset = container(rjob(jobset, "dataset-initializer"), "dataset-initializer")
    assert ("STORAGE_URI", "hf://tatsu-lab/alpaca") in env(dataset)
    assert dataset["envFrom"] == [{"secretRef": {"name": "hf"}}]
    assert rjob(jobset, "dataset-initializer")["replicas"] == 1
    model = container(rjob(jobset, "model-initializer"), "model-initializer")
    assert ("STORAGE_URI", "hf://meta-llama/Llama-3.2-1B-Instruct") in env(model)
    command = container(rjob(jobset, "node"))["command"]
    # Two GPUs on one node: distributed full fine-tuning, with a rendezvous endpoint.
    assert command[:5] == [
        "tune",
        "run",
        "--rdzv_endpoint=tune-node-0-0.tune:29500",
        "full_finetune_distributed",
        "--config",
    ]
    assert command[5] == "llama3_2/1B_full"
    assert all(
        arg.split("=")[0]
        in ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file")
        for arg in command[6:]
    )
    assert command[6:]


# --- patches and pod groups -------------------------------------------------------------------


def test_runtime_patches_merge_into_the_jobset(tmp_path: Path) -> None:
    """trainingruntime.go newRuntimeInfo: the patch's template labels and annotations become
    the JobSet's; its pod fields merge into the named replicated job (strategic merge)."""
    runtime = yaml.safe_load((EXAMPLES / "runtimes" / "torch-distributed-volcano.yaml").read_text())
    runtime["metadata"]["name"] = "plain-torch"
    del runtime["spec"]["podGroupPolicy"]
    runtime["spec"]["template"]["metadata"] = {"labels": {"from-runtime": "yes"}}
    job = yaml.safe_load((EXAMPLES / "02-runtime-patches.yaml").read_text())
    job["spec"]["runtimeRef"]["name"] = "plain-torch"
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "native"}
    objs = objects(
        load_stack(
            _stack(
                tmp_path,
                {
                    "kubetrain:namespace": "ml",
                    "kubetrain:jobs": [job],
                    "kubetrain:manifests": [runtime],
                },
            )
        )
    )
    jobset = pick(objs, "JobSet", "runtime-patches-example")
    assert jobset["metadata"]["labels"] == {
        "cost-center": "research",
        "from-runtime": "yes",
        "team": "ml-platform",
    }
    assert jobset["metadata"]["annotations"]["prometheus.io/port"] == "8080"
    pod = rjob(jobset, "node")["template"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "training-sa"
    assert pod["nodeSelector"] == {"node-type": "training"}
    assert pod["tolerations"][0]["key"] == "training-workload"
    assert [c["name"] for c in pod["containers"]] == ["node"]


def test_volcano_pod_group_counts_requests_not_limits(tmp_path: Path) -> None:
    """volcano.go Build: minMember is every pod, minResources the pods' requests
    (resourcehelpers.PodRequests: requests only); each pod names its group."""
    runtime = yaml.safe_load((EXAMPLES / "runtimes" / "torch-distributed-volcano.yaml").read_text())
    job = yaml.safe_load((EXAMPLES / "04-volcano-integration.yaml").read_text())
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "native"}
    objs = objects(
        load_stack(
            _stack(
                tmp_path,
                {
                    "kubetrain:namespace": "ml",
                    "kubetrain:jobs": [job],
                    "kubetrain:manifests": [runtime],
                },
            )
        )
    )
    group = pick(objs, "PodGroup", "volcano-example")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert group["spec"] == {"minMember": 4, "minResources": {"cpu": "4", "memory": "8Gi"}}
    pod = rjob(pick(objs, "JobSet", "volcano-example"), "node")["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "volcano-example"


def test_pod_requests_as_component_helpers() -> None:
    spec = {
        "containers": [
            {"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "4", "memory": "1Gi"}}}
        ],
        "initContainers": [
            {"resources": {"requests": {"cpu": "3"}}},
            {"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        ],
    }
    assert {k: str(v) for k, v in pod_requests(spec).items()} == {"cpu": "3"}


def _stack(tmp_path: Path, config: dict[str, Any]) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    (tmp_path / "stacks").mkdir(exist_ok=True)
    path = tmp_path / "stacks" / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


# --- operator mode ----------------------------------------------------------------------------


def test_operator_mode_writes_the_resource_with_its_crd_defaults_and_what_it_runs(
    tmp_path: Path,
) -> None:
    job = yaml.safe_load((EXAMPLES / "03-kueue-integration.yaml").read_text())
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:jobs": [job],
        "kubetrain:external": {
            "trainingRuntimes": [{"name": "torch-distributed"}],
            "localQueues": ["training-queue"],
        },
    }
    (obj,) = objects(load_stack(_stack(tmp_path, config)))
    assert obj["kind"] == "TrainJob" and obj["metadata"]["labels"] == {
        "kueue.x-k8s.io/queue-name": "training-queue"
    }
    assert obj["spec"]["runtimeRef"] == {
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
        "name": "torch-distributed",
    }
    assert obj["spec"]["managedBy"] == "trainer.kubeflow.org/trainjob-controller"
    # suspend: true as published, but Kueue owns it for a queued job: not written.
    assert "suspend" not in obj["spec"]
    runs = json.loads(obj["metadata"]["annotations"][RUNS_ANNOTATION])
    assert runs == [{"job": "node", "pods": 3, "requests": {"cpu": "2", "memory": "4Gi"}}]


# --- the webhooks ---------------------------------------------------------------------------------


def refused(tmp_path: Path, job: dict[str, Any], **config: Any) -> str:
    stack = {
        "kubetrain:namespace": "ml",
        "kubetrain:jobs": [job],
        "kubetrain:external": {
            "trainingRuntimes": [
                {"name": "torch-distributed"},
                {"name": "deepspeed-distributed"},
                {"name": "xgboost-distributed"},
                {"name": "torchtune-llama3.2-1b"},
            ]
        },
        **config,
    }
    with pytest.raises(InputError) as caught:
        load_stack(_stack(tmp_path, stack))
    return "\n".join(str(p) for p in caught.value.problems)


@pytest.mark.parametrize(
    ("runtime", "trainer", "message"),
    [
        pytest.param(
            "torch-distributed",
            {"env": [{"name": "PET_NNODES", "value": "2"}]},
            "spec.trainer.env: must not have reserved envs, invalid envs configured: ['PET_NNODES']",
            id="torch-reserved",
        ),
        pytest.param(
            "xgboost-distributed",
            {"env": [{"name": "X", "value": "1"}, {"name": "DMLC_TASK_ID", "value": "0"}]},
            "spec.trainer.env[1]: DMLC_TASK_ID is reserved for the XGBoost runtime",
            id="xgboost-reserved",
        ),
        pytest.param(
            "deepspeed-distributed",
            {"env": [{"name": "OMPI_MCA_plm_rsh_args", "value": "x"}]},
            "spec.trainer.env: must not have reserved envs, invalid envs configured: "
            "['OMPI_MCA_plm_rsh_args']",
            id="mpi-reserved",
        ),
        pytest.param(
            "torchtune-llama3.2-1b",
            {"command": ["tune", "run"], "numNodes": 2},
            "spec.trainer.numNodes: must be 1 for llama3_2/1B model",
            id="torchtune-nodes",
        ),
    ],
)
def test_what_the_plugins_refuse(tmp_path: Path, runtime: str, trainer: dict, message: str) -> None:
    assert message in refused(tmp_path, trainjob("j", runtime, trainer=trainer))


def test_a_patch_naming_what_the_runtime_lacks(tmp_path: Path) -> None:
    job = trainjob(
        "j",
        "torch-distributed",
        runtimePatches=[
            {
                "manager": "example.io/team",
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {"name": "nodes"},
                                {
                                    "name": "node",
                                    "template": {
                                        "spec": {
                                            "template": {
                                                "spec": {
                                                    "containers": [
                                                        {
                                                            "name": "nod",
                                                            "env": [{"name": "A", "value": "1"}],
                                                        },
                                                        {
                                                            "name": "node",
                                                            "env": [{"name": "B", "value": "1"}],
                                                        },
                                                    ]
                                                }
                                            }
                                        }
                                    },
                                },
                            ]
                        }
                    }
                },
            },
            {"manager": "not a path"},
        ],
    )
    text = refused(tmp_path, job)
    assert (
        "replicatedJobs[0].name: must not have replicated job that doesn't exist in the runtime job template (ClusterTrainingRuntime torch-distributed has node;"
        in text
    )
    assert (
        "containers[0].name: must not have container that doesn't exist in the runtime job node (it has node;"
        in text
    )
    assert (
        "containers[1].env: must not have envs for the dataset-initializer, model-initializer, node containers"
        in text
    )
    assert "spec.runtimePatches[1].manager: must be a domain-prefixed path" in text


def test_an_unknown_runtime_and_a_name_only_runtime_in_native_mode(tmp_path: Path) -> None:
    text = refused(tmp_path, trainjob("j", "torch-distributed-typo"))
    assert (
        "spec.runtimeRef.name: ClusterTrainingRuntime 'torch-distributed-typo' is neither among the stack's manifests nor declared"
        in text
    )
    text = refused(
        tmp_path / "b" if (tmp_path / "b").mkdir() is None else tmp_path,
        native(trainjob("j", "torch-distributed")),
    )
    assert "native mode builds the JobSet from the runtime's spec" in text


@pytest.mark.parametrize("mode", ["operator", "native"])
def test_the_multi_step_example_is_refused_as_published(tmp_path: Path, mode: str) -> None:
    """Its runtime's dataset initializer mounts no `initializer` volume: the JobSet plugin's
    Validate refuses a TrainJob configuring a dataset on it, in either mode."""
    runtime = yaml.safe_load((EXAMPLES / "runtimes" / "torch-with-dataset-init.yaml").read_text())
    job = yaml.safe_load((EXAMPLES / "05-multi-step.yaml").read_text())
    job["metadata"]["annotations"] = {"kubetrain.io/mode": mode}
    with pytest.raises(InputError) as caught:
        load_stack(
            _stack(
                tmp_path,
                {
                    "kubetrain:namespace": "ml",
                    "kubetrain:jobs": [job],
                    "kubetrain:manifests": [runtime],
                },
            )
        )
    (problem,) = caught.value.problems
    assert str(problem.path) and problem.path == (
        "config",
        "kubetrain:jobs",
        0,
        "spec",
        "runtimeRef",
    )
    assert (
        "must have volumeMount with name - initializer in container dataset-initializer of the dataset-initializer job"
        in problem.message
    )


def test_the_runtime_webhook_checks_a_delivered_runtime(tmp_path: Path) -> None:
    runtime = yaml.safe_load((EXAMPLES / "runtimes" / "torch-with-dataset-init.yaml").read_text())
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    runtime["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"][
        "spec"
    ]["containers"][0]["name"] = "trainer"
    with pytest.raises(InputError) as caught:
        load_stack(
            _stack(tmp_path, {"kubetrain:namespace": "ml", "kubetrain:manifests": [runtime]})
        )
    text = "\n".join(str(p) for p in caught.value.problems)
    assert "replicatedJobs[0].replicas: must be 1 for the dataset-initializer step" in text
    assert (
        "replicatedJobs[1].template.spec.template.spec.containers: must have a container named 'node' for the trainer step"
        in text
    )


# --- every upstream runtime -------------------------------------------------------------------


@needs_upstream_runtimes
def test_every_upstream_runtime_loads_validates_and_runs_the_examples(tmp_path: Path, run) -> None:
    """Kubeflow's v2.3.0 runtimes, delivered by a stack, validate; the examples that name
    torch-distributed render on it in both modes."""
    names = sorted(p.stem for p in UPSTREAM_RUNTIMES.glob("*.yaml"))
    assert len(names) >= 9
    jobs = [
        yaml.safe_load((EXAMPLES / f).read_text())
        for f in ("01-multi-node.yaml", "02-runtime-patches.yaml")
    ]
    both = jobs + [native(j) for j in copy.deepcopy(jobs)]
    for job in both[len(jobs) :]:
        job["metadata"]["name"] += "-native"
    # The platform team's ServiceAccount the patch names exists in the cluster.
    path = project(tmp_path, both, names, external={"serviceAccounts": ["training-sa"]})
    result = run("render", cwd=path)
    assert result.exit_code == 0, result.stderr
    rendered = {p.name for p in (path / "rendered" / "t").rglob("*.yaml")}
    assert {"trainjob-multi-node-example.yaml", "jobset-multi-node-example-native.yaml"} <= rendered
    assert sum(1 for n in rendered if n.startswith("clustertrainingruntime-")) == len(names)
    assert run("validate", cwd=path).exit_code == 0


# --- Kueue ------------------------------------------------------------------------------------


def test_a_native_trainjob_carries_its_queue_to_the_jobset(tmp_path: Path) -> None:
    runtime = yaml.safe_load((EXAMPLES / "runtimes" / "torch-distributed-volcano.yaml").read_text())
    job = yaml.safe_load((EXAMPLES / "03-kueue-integration.yaml").read_text())
    job["spec"]["runtimeRef"]["name"] = "torch-distributed-volcano"
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "native"}
    queues = list(yaml.safe_load_all((EXAMPLES / "kueue" / "queues.yaml").read_text()))
    objs = objects(
        load_stack(
            _stack(
                tmp_path,
                {
                    "kubetrain:namespace": "ml",
                    "kubetrain:jobs": [job],
                    "kubetrain:manifests": [runtime, *queues],
                },
            )
        )
    )
    jobset = pick(objs, "JobSet", "kueue-example")
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training-queue"
    assert "suspend" not in jobset["spec"]  # Kueue's (the job is queued)


@pytest.mark.parametrize(
    ("original", "patch", "merged"),
    [
        # The e2e differential's case against the real trainer (e2e/fidelity/Pulumi.variants).
        (["data", "cache"], ["scratch", "data"], ["scratch", "data", "cache"]),
        (["a", "b", "c"], ["c", "x"], ["a", "b", "c", "x"]),
        (["a", "b", "c"], ["x", "b"], ["x", "a", "b", "c"]),
        (["a", "b"], ["b", "a"], ["b", "a"]),
        ([], ["x", "y"], ["x", "y"]),
    ],
)
def test_runtime_patches_order_lists_as_strategic_merge(
    original: list[str], patch: list[str], merged: list[str]
) -> None:
    """mergeSlice (apimachinery v0.36.2): the patch's items in its order, new ones first, the
    runtime's others where the runtime orders them (issue 26: kubetrain appended new items)."""
    from kubetrain.builders.trainjob import _merge_order

    def items(names: list[str]) -> list[dict[str, str]]:
        return [{"name": n} for n in names]

    appended = items(original) + [i for i in items(patch) if i["name"] not in original]
    got = _merge_order(appended, items(patch), items(original), "name")
    assert [i["name"] for i in got] == merged


# --- each kind's native workloads ------------------------------------------------------------


@settings(max_examples=30)
@given(value=st.one_of(st.sampled_from(["pod", "job", "jobset", "Pod", ""]), st.text(max_size=12)))
def test_a_trainjob_takes_only_its_own_native_workload(value: str) -> None:
    """Whatever ``kubetrain.io/native-workload`` says, a TrainJob is refused at that annotation
    unless it names the JobSet (never quietly left in operator mode)."""
    job = trainjob("bert", "torch-distributed", trainer={"numNodes": 2})
    job["metadata"]["annotations"] = {"kubetrain.io/native-workload": value}
    with tempfile.TemporaryDirectory() as folder:
        try:
            stack_from(Path(folder), {"kubetrain:namespace": "ml", "kubetrain:jobs": [job]})
        except InputError as e:
            refused = [p for p in e.problems if p.path[-1:] == ("kubetrain.io/native-workload",)]
        else:
            refused = []
    assert bool(refused) == (value != "jobset"), (value, refused)
