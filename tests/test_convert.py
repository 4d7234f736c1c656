"""kubetrain convert: v1 jobs as Trainer v2.3.0 TrainJobs.

Oracles: what each side's controller gives its pods is read from the upstream sources at their
tags (training-operator v1.9.0 ``setPodEnv`` of each kind, already held by the builders' own
tests; Trainer v2.3.0 ``Torch``/``Jax``/``XGBoost``/``MPI.EnforceMLPolicy``,
``newRuntimeInfo``, the JobSet webhook's ``Default`` at v0.12.0, Kubernetes'
``addCompletionIndexEnvVariables``) and Kubeflow's v2.3.0 runtimes read in place from
``../shared/upstream``; the expected values below are those functions' outputs for these jobs.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain import app
from kubetrain.builders import build_stack
from kubetrain.convert import Refused, convert_job
from kubetrain.convert.run import _documents, plan_conversion
from kubetrain.convert.stack import converted_stack, json_patch
from kubetrain.models import InputError, load_job
from kubetrain.models.load import load_stack_data
from kubetrain.models.runtimes import UPSTREAM_NODE_IMAGES, upstream_spec

from conftest import REPO, Result

UPSTREAM_RUNTIMES = REPO.parent / "shared" / "upstream" / "trainer-v2.3.0-runtimes"
PROJECT = app.Project(REPO)


def _file(name: str) -> Path:
    return REPO / "stacks" / name


def _convert(
    *files: str, stack: str | None = None, jobs: tuple[str, ...] = (), mode: Any = "stdout"
):
    return plan_conversion(
        REPO,
        REPO / "stacks" / f"Pulumi.{stack}.yaml" if stack else None,
        [_file(f) for f in files],
        jobs,
        mode=mode,
        skip_refused=True,
    )


def _job(doc: dict[str, Any], **settings: Any):
    loaded, stack_settings = load_job(doc, settings=settings, file="job.yaml")
    return loaded, stack_settings


# --- every example of the repository: converted or refused, with the reason ------------------

#: Each v1 example file of the repository -> per job: the runtime of its TrainJob, or a part of
#: the refusal. Named one by one (no glob): a new example adds its own line.
EXAMPLES: dict[str, dict[str, str]] = {
    "kubeflow-examples/pytorch-simple.yaml": {"pytorch-simple": "TrainingRuntime"},
    "kubeflow-examples/pytorch-cpu-demo.yaml": {"torchrun-cpu": "torch-distributed"},
    "kubeflow-examples/pytorch-deepspeed-demo.yaml": {
        "pytorch-deepspeed-demo": "torch-distributed"
    },
    "kubeflow-examples/pytorch-mnist-nccl.yaml": {"pytorch-dist-mnist-nccl": "TrainingRuntime"},
    "kubeflow-examples/pytorch-elastic-echo.yaml": {
        "elastic-example-echo": "refused: Kubeflow Trainer v2.3.0 has no elastic training"
    },
    "kubeflow-examples/jax-cpu-demo.yaml": {"jaxjob-simple": "TrainingRuntime"},
    "kubeflow-examples/jax-spmd-mnist.yaml": {"jaxjob-mnist": "TrainingRuntime"},
    "kubeflow-examples/xgboost-iris-train.yaml": {
        "xgboost-dist-iris-test-train": "refused: a TrainJob runs every node from one template"
    },
    "kubeflow-examples/lightgbm-dist.yaml": {
        "lightgbm-dist-train-test": "refused: a TrainJob's nodes share one restart policy"
    },
    "kubeflow-examples/dist-mnist.yaml": {
        "dist-mnist-for-e2e-test": "refused: no TensorFlow runtime or ML policy"
    },
    "kubeflow-examples/multi-worker-gpu.yaml": {
        "multi-worker": "refused: nothing would write the TF_CONFIG"
    },
    "kubeflow-examples/v1alpha1-gpu.yaml": {
        "tf-smoke-gpu": "TrainingRuntime",
        "example-job-defaults": "TrainingRuntime",
    },
    "kubeflow-examples/paddle-simple-cpu.yaml": {
        "paddle-simple-cpu": "refused: no PaddlePaddle runtime or ML policy"
    },
    "kubeflow-examples/paddle-simple-gpu.yaml": {
        "paddle-simple-gpu": "refused: no PaddlePaddle runtime or ML policy"
    },
    "mpi-operator-examples/pi.yaml": {"pi": "TrainingRuntime"},
    "mpi-operator-examples/pi-intel.yaml": {"pi": "refused: MPI policy supports OpenMPI only"},
    "mpi-operator-examples/pi-mpich.yaml": {"pi": "refused: MPI policy supports OpenMPI only"},
    "mpi-operator-examples/tensorflow-benchmarks.yaml": {
        "tensorflow-benchmarks": "TrainingRuntime"
    },
    "mpi-operator-examples/horovod-tensorflow-mnist.yaml": {"tensorflow-mnist": "TrainingRuntime"},
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_example_converts_or_is_refused_with_the_reason(name: str) -> None:
    result = _convert(name)
    expected = EXAMPLES[name]
    outcomes: dict[str, str] = {}
    for c in result.conversion.converted:
        kind, runtime = c.runtime_ref
        outcomes[c.name] = runtime if kind == "ClusterTrainingRuntime" else kind
    for problem in result.problems:
        job = next(j for j in expected if f"/{j} cannot be converted" in problem.message)
        assert problem.file.endswith(name) and problem.line is not None
        outcomes[job] = "refused: " + problem.message
    assert set(outcomes) == set(expected)
    for job, want in expected.items():
        if want.startswith("refused: "):
            assert outcomes[job].startswith("refused: ") and want[9:] in outcomes[job], job
        else:
            assert outcomes[job] == want, job


@pytest.mark.parametrize(
    ("stack", "job", "outcome"),
    [
        ("dev", "mnist-smoke", "TrainingRuntime"),
        ("prod", "resnet50", "no TensorFlow runtime"),
        ("staging", "dist-mnist", "no TensorFlow runtime"),
    ],
)
def test_the_stacks_inline_v1_jobs(stack: str, job: str, outcome: str) -> None:
    result = _convert(stack=stack, jobs=(job,))
    if outcome == "TrainingRuntime":
        [c] = result.conversion.converted
        assert c.runtime_ref == ("TrainingRuntime", job)
        [trainjobs] = [f for f in result.files if f.holds == "trainjobs"]
        assert trainjobs.path == REPO / "stacks" / "trainjobs" / f"{stack}.yaml"
    else:
        [problem] = result.problems
        assert outcome in problem.message and problem.file == f"stacks/Pulumi.{stack}.yaml"


#: The examples that convert; the NCCL one through the dev stack, whose patch names the image
#: the team built (Kubeflow's names a placeholder, which the image rule refuses either way).
CONVERTIBLE = [
    name
    for name, jobs in sorted(EXAMPLES.items())
    if any(not v.startswith("refused") for v in jobs.values())
    and "nccl" not in name
    and "mpi-operator" not in name
] + [
    "dev:pytorch-dist-mnist-nccl",
    # An MPI job's SSH Secret comes from the stack's secret store, which the dev stack names.
    "dev:tensorflow-mnist",
    "dev:tensorflow-benchmarks",
]


@pytest.mark.parametrize("name", CONVERTIBLE)
@pytest.mark.parametrize("native", [False, True], ids=["operator", "native"])
def test_converted_stacks_render_and_validate(name: str, native: bool, tmp_path: Path) -> None:
    """What convert writes loads as a stack and renders in operator mode (the TrainJob) and in
    native mode (the JobSet the trainer builds), every object valid."""
    in_dev = name.startswith("dev:")
    result = _convert(stack="dev", jobs=(name[4:],)) if in_dev else _convert(name)
    jobs, runtimes = _documents(result.files)
    stack = converted_stack(result.conversion, jobs, runtimes, label="converted", native=native)
    planned = app.prepare(stack, tmp_path / "out")
    assert planned.report.ok, [f for r in planned.report.results for f in r.findings]
    kinds = [b.obj["kind"] for b in planned.built]
    trainjobs = len(result.conversion.converted)
    assert trainjobs > 0
    if native:
        assert kinds.count("JobSet") == trainjobs and "TrainJob" not in kinds
    else:
        assert kinds.count("TrainJob") == trainjobs and "JobSet" not in kinds


# --- what the TrainJob says -------------------------------------------------------------------


def test_a_job_the_runtime_matches_names_kubeflows_runtime_and_says_it_all() -> None:
    result = _convert("kubeflow-examples/pytorch-cpu-demo.yaml")
    [c] = result.conversion.converted
    assert c.runtime is None
    assert c.trainjob["spec"] == {
        "runtimeRef": {"kind": "ClusterTrainingRuntime", "name": "torch-distributed"},
        "trainer": {
            "numNodes": 2,
            "numProcPerNode": 2,
            "image": "pytorch-cpu:py3.8",
            "command": ["torchrun", "demo.py"],
            "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
        },
    }
    [f] = result.files
    text = f.text
    assert text.startswith("# PyTorchJob torchrun-cpu of stacks/kubeflow-examples/")
    assert "# Kubeflow's torch-distributed ClusterTrainingRuntime (Trainer v2.3.0)" in text
    assert "# Master (1) + Worker (1): node 0 takes the Master's place" in text
    assert yaml.safe_load(text) == c.trainjob


def test_a_template_saying_more_gets_a_training_runtime_holding_it() -> None:
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}},
        "spec": {
            "nprocPerNode": "4",
            "runPolicy": {"backoffLimit": 3, "suspend": True, "activeDeadlineSeconds": 600},
            "pytorchReplicaSpecs": {
                r: {
                    "replicas": n,
                    "restartPolicy": "ExitCode",
                    "template": {
                        "metadata": {"annotations": {"sidecar.istio.io/inject": "false"}},
                        "spec": {
                            "serviceAccountName": "trainer",
                            "nodeSelector": {"pool": "gpu"},
                            "tolerations": [{"key": "gpu", "operator": "Exists"}],
                            "volumes": [{"name": "data", "emptyDir": {}}],
                            "containers": [
                                {
                                    "name": "pytorch",
                                    "image": "bert:1",
                                    "command": ["torchrun", "train.py"],
                                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                                    "resources": {"limits": {"nvidia.com/gpu": 4}},
                                },
                                {"name": "logger", "image": "fluent-bit:3"},
                            ],
                        },
                    },
                }
                for r, n in (("Master", 1), ("Worker", 3))
            },
        },
    }
    loaded, settings = _job(doc, namespace="ml")
    c = convert_job(loaded, settings)
    assert c.runtime_ref == ("TrainingRuntime", "bert")
    spec = c.trainjob["spec"]
    assert spec["trainer"]["numNodes"] == 4 and spec["trainer"]["numProcPerNode"] == 4
    assert spec["trainer"]["resourcesPerNode"] == {
        "limits": {"nvidia.com/gpu": 4},
        "requests": {"nvidia.com/gpu": 4},
    }
    assert (spec["suspend"], spec["activeDeadlineSeconds"]) == (True, 600)
    assert c.trainjob["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
    assert c.runtime is not None
    rjob = c.runtime["spec"]["template"]["spec"]["replicatedJobs"][0]
    job_spec = rjob["template"]["spec"]
    assert job_spec["backoffLimit"] == 3
    # ExitCode: Never on the pod and the podFailurePolicy kubetrain's native Jobs use.
    assert job_spec["podFailurePolicy"]["rules"][1]["onExitCodes"]["containerName"] == "node"
    pod = job_spec["template"]
    assert pod["metadata"] == {"annotations": {"sidecar.istio.io/inject": "false"}}
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["serviceAccountName"] == "trainer"
    assert [c["name"] for c in pod["spec"]["containers"]] == ["node", "logger"]
    assert pod["spec"]["containers"][0] == {
        "name": "node",
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
    assert c.runtime["spec"]["mlPolicy"] == {"numNodes": 4, "torch": {}}


def test_gang_scheduling_becomes_the_runtimes_pod_group_policy() -> None:
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "bert"},
        "spec": {
            "runPolicy": {
                "schedulingPolicy": {"queue": "vision", "minAvailable": 2, "priorityClass": "hi"}
            },
            "pytorchReplicaSpecs": {
                r: {
                    "replicas": n,
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "pytorch", "image": "b:1", "command": ["torchrun", "t.py"]}
                            ]
                        }
                    },
                }
                for r, n in (("Master", 1), ("Worker", 2))
            },
        },
    }
    loaded, settings = _job(doc)
    c = convert_job(loaded, settings)
    assert c.runtime is not None
    assert c.runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
    template = c.runtime["spec"]["template"]
    assert template["metadata"] == {"annotations": {"scheduling.volcano.sh/queue-name": "vision"}}
    pod = template["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "hi"
    [note] = [n for n in c.notes if n.path[-1] == "minAvailable"]
    assert "gangs every pod of the JobSet (minMember 3)" in note.message
    loaded, settings = _job(
        doc | {"spec": doc["spec"] | {"runPolicy": {}}}, gangScheduler="scheduler-plugins"
    )
    assert convert_job(loaded, settings).runtime["spec"]["podGroupPolicy"] == {"coscheduling": {}}


def _pytorch(nproc: str | None, resources: dict[str, Any] | None = None, **container: Any):
    spec: dict[str, Any] = {
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "t:1",
                                **({"resources": resources} if resources else {}),
                                **container,
                            }
                        ]
                    }
                },
            }
        }
    }
    if nproc is not None:
        spec["nprocPerNode"] = nproc
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "t"},
        "spec": spec,
    }


GPU = {"limits": {"nvidia.com/gpu": 2}}


@pytest.mark.parametrize(
    ("nproc", "resources", "written", "note"),
    [
        ("4", None, 4, None),
        ("auto", GPU, None, None),
        ("gpu", GPU, None, None),
        (None, None, None, "os.cpu_count()"),
        ("auto", None, None, "os.cpu_count()"),
        ("cpu", None, None, "os.cpu_count()"),
        ("cpu", GPU, None, "cpu (one process per core of the machine) cannot be said"),
        ("gpu", None, None, "gpu cannot be said without GPUs"),
    ],
)
def test_num_proc_per_node_says_what_it_can(nproc, resources, written, note) -> None:
    loaded, settings = _job(_pytorch(nproc, resources, command=["torchrun", "t.py"]))
    c = convert_job(loaded, settings)
    assert c.trainjob["spec"]["trainer"].get("numProcPerNode") == written
    found = [n.message for n in c.notes if n.path[-1] == "nprocPerNode"]
    if note is None:
        assert not found
    else:
        assert len(found) == 1 and note in found[0]


@pytest.mark.parametrize(
    ("container", "warned"),
    [
        ({"command": ["torchrun", "train.py"]}, None),
        ({"command": ["python", "-m", "torch.distributed.run", "train.py"]}, None),
        ({"command": ["accelerate", "launch", "train.py"]}, None),
        ({"command": ["sh", "-c", "cd /w && torchrun train.py"]}, None),
        ({"command": ["python3", "train.py"]}, "runs python3 without torchrun"),
        ({"args": ["--epochs", "1"]}, "runs the image's entrypoint"),
        (
            {"command": ["torchrun", "--master_addr=$(MASTER_ADDR)", "train.py"]},
            "names MASTER_ADDR, which the training operator set",
        ),
        ({"command": ["torchrun", "--node_rank=$(PET_NODE_RANK)", "t.py"]}, None),
    ],
)
def test_a_command_relying_on_what_v1_set_is_warned(container, warned) -> None:
    loaded, settings = _job(_pytorch("1", None, **container))
    notes = [n.message for n in convert_job(loaded, settings).notes]
    if warned is None:
        assert not any("torchrun" in n or "MASTER_ADDR" in n for n in notes), notes
    else:
        assert any(warned in n for n in notes), notes


# --- refusals -----------------------------------------------------------------------------------


def _refusal(doc: dict[str, Any]) -> Refused:
    loaded, settings = _job(doc)
    with pytest.raises(Refused) as info:
        convert_job(loaded, settings)
    return info.value


def test_refusals_name_the_field_and_what_is_missing() -> None:
    doc = _pytorch(
        "1", None, command=["torchrun", "t.py"], env=[{"name": "PET_NNODES", "value": "2"}]
    )
    refused = _refusal(doc)
    assert refused.path[-3:] == ("env", 0, "name")
    assert "TrainJob webhook refuses it in spec.trainer.env" in refused.reason
    worker = json.loads(json.dumps(doc["spec"]["pytorchReplicaSpecs"]["Master"]))
    worker["replicas"] = 2
    worker["template"]["spec"]["containers"][0]["env"] = []
    worker["template"]["spec"]["containers"][0]["image"] = "t:2"
    doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0].pop("env")
    doc["spec"]["pytorchReplicaSpecs"]["Worker"] = worker
    refused = _refusal(doc)
    assert refused.path == (
        "spec",
        "pytorchReplicaSpecs",
        "Worker",
        "template",
        "spec",
        "containers",
        0,
        "image",
    )
    mpi = yaml.safe_load(_file("mpi-operator-examples/pi-mpich.yaml").read_text())
    assert "OpenMPI only" in _refusal(mpi).reason and _refusal(mpi).path == (
        "spec",
        "mpiImplementation",
    )


# --- the comparison -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_comparisons():
    result = _convert(stack="dev", mode="compare")
    return {c.v1_title: c for c in result.comparisons}


def test_comparison_of_a_python_script_that_read_master_addr(dev_comparisons) -> None:
    c = dev_comparisons["PyTorchJob kubeflow/pytorch-simple"]
    assert list(c.v1) == ["Master-0", "Worker-0"] and list(c.v2) == ["node-0-0", "node-0-1"]
    worker = c.pairs[1]
    assert worker.v1.name == "pytorch-simple-worker-0"
    assert worker.v2 is not None and worker.v2.name == "pytorch-simple-node-0-1-<random>"
    assert (
        worker.v2.hostname == "pytorch-simple-node-0-1" and worker.v2.subdomain == "pytorch-simple"
    )
    [main] = [d for d in worker.containers if d.v1 == "pytorch"]
    assert main.v2 == "node"
    # training-operator v1.9.0 setPodEnv and MasterEnvVarGenerator, for the Worker of index 0.
    assert main.env.gone == {
        "MASTER_PORT": "23456",
        "MASTER_ADDR": "pytorch-simple-master-0",
        "WORLD_SIZE": "2",
        "RANK": "1",
    }
    # Trainer v2.3.0 Torch.EnforceMLPolicy: node 0-0 in the JobSet's subdomain, port 29500;
    # PET_NPROC_PER_NODE the CPUs requested (none: at least 1).
    assert main.env.changed == {
        "PET_MASTER_PORT": ("23456", "29500"),
        "PET_MASTER_ADDR": ("pytorch-simple-master-0", "pytorch-simple-node-0-0.pytorch-simple"),
        "PET_NPROC_PER_NODE": ("auto", "1"),
    }
    # The same rank, now the Job's completion index; JOB_COMPLETION_INDEX from the Job controller.
    assert main.env.same["PET_NODE_RANK"] == "1" and main.env.same["PET_NNODES"] == "2"
    assert main.env.new == {"JOB_COMPLETION_INDEX": "1"}
    assert main.ports == (
        [{"containerPort": 23456, "name": "pytorchjob-port"}],
        [{"containerPort": 29500}],
    )
    assert worker.init_gone == ["init-pytorch"] and worker.init_new == []
    assert c.job["rendezvous"] == (
        "pytorch-simple-master-0:23456",
        "pytorch-simple-node-0-0.pytorch-simple:29500",
    )
    assert c.job["success"] == ("Master-0 succeeds", "every one of node-0-0, node-0-1 succeeds")
    warnings = [w.message for w in c.warnings]
    assert any(w.startswith("runs python3 without torchrun") for w in warnings)
    assert any(w.startswith("the success condition changes") for w in warnings)


def test_comparison_of_renamed_variables_and_gpus(dev_comparisons) -> None:
    jax = dev_comparisons["JAXJob kubeflow/jaxjob-simple"]
    [main] = [d for d in jax.pairs[1].containers if d.v1 == "jax"]
    # training-operator v1.9.0 jax setPodEnv -> Trainer v2.3.0 Jax.EnforceMLPolicy
    assert main.env.renamed == {
        "COORDINATOR_ADDRESS": (
            "JAX_COORDINATOR_ADDRESS",
            "jaxjob-simple-worker-0",
            "jaxjob-simple-node-0-0.jaxjob-simple:29500",
        ),
        "NUM_PROCESSES": ("JAX_NUM_PROCESSES", "2", "2"),
        "PROCESS_ID": ("JAX_PROCESS_ID", "1", "1"),
    }
    assert main.env.gone == {"COORDINATOR_PORT": "6666"}
    deepspeed = dev_comparisons["PyTorchJob ml-dev/pytorch-deepspeed-demo"]
    for pair in deepspeed.pairs:
        assert pair.requests == ({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})
    assert len(deepspeed.pairs) == 2


def test_comparison_of_an_mpijob(dev_comparisons) -> None:
    c = dev_comparisons["MPIJob ml-dev/tensorflow-mnist"]
    assert [p.v1.replica for p in c.pairs] == ["Launcher-0", "Worker-0", "Worker-1"]
    assert [p.v2.replica for p in c.pairs if p.v2] == ["launcher-0-0", "node-0-0", "node-0-1"]
    # One launcher (mlPolicy.numNodes 1, newRuntimeInfo) and the two workers as node pods.
    assert len(c.v2) == 3
    v1, v2 = c.job["rendezvous"]
    assert "tensorflow-mnist-worker-0.tensorflow-mnist.ml-dev.svc slots=1" in v1
    assert v2 == (
        "hostfile: tensorflow-mnist-node-0-0.tensorflow-mnist slots=1 "
        "tensorflow-mnist-node-0-1.tensorflow-mnist slots=1"
    )
    assert c.job["success"] == ("Launcher-0 succeeds", "launcher-0-0 succeeds")
    launcher = c.pairs[0]
    [main] = [d for d in launcher.containers if d.v1 == "mpi-launcher"]
    assert main.env.gone["K_MPI_JOB_ROLE"] == "launcher"
    assert main.env.same["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"


def test_compare_json_is_what_an_e2e_test_reads(run: Callable[..., Result]) -> None:
    result = run(
        "convert", "--stack", "dev", "--job", "torchrun-cpu", "--compare", "--output", "json"
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    [job] = data["comparisons"]
    assert job["v1"]["title"] == "PyTorchJob ml-dev/torchrun-cpu"
    assert [p["name"] for p in job["v1"]["pods"]] == [
        "torchrun-cpu-master-0",
        "torchrun-cpu-worker-0",
    ]
    node = job["v2"]["pods"][1]
    assert node["hostname"] == "torchrun-cpu-node-0-1"
    env = {e["name"]: e for e in node["containers"][0]["env"]}
    # The trainer's env reads the index annotation; the Job controller's own variable the
    # index label (addCompletionIndexEnvVariable, as make e2e found it at Kubernetes 1.36).
    assert env["PET_NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    )
    assert env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        "metadata.labels['batch.kubernetes.io/job-completion-index']"
    )
    assert node["containers"][0]["envResolved"]["JOB_COMPLETION_INDEX"] == "1"
    assert node["containers"][0]["envResolved"]["PET_NPROC_PER_NODE"] == "2"
    assert [p["v1"] + ">" + p["v2"] for p in job["pairs"]] == [
        "Master-0>node-0-0",
        "Worker-0>node-0-1",
    ]
    assert (
        data["refused"] == [] and data["converted"][0]["runtimeRef"]["name"] == "torch-distributed"
    )


def test_a_published_mpijob_file_compares_without_a_secret_store_or_gitops(
    run: Callable[..., Result],
) -> None:
    """The MPI Operator's pi example, given as a file: no stack names a secret store (its
    operator generates the SSH key) and it sets ttlSecondsAfterFinished, which render mode
    refuses natively; neither shapes a pod, so the comparison is made (found by make e2e)."""
    result = run("convert", "stacks/mpi-operator-examples/pi.yaml", "--compare", "--output", "json")
    assert result.exit_code == 0, result.stderr
    [job] = json.loads(result.stdout)["comparisons"]
    assert job["v1"]["document"]["spec"]["runPolicy"]["ttlSecondsAfterFinished"] == 60
    assert [p["name"] for p in job["v1"]["pods"]] == [
        "pi-worker-0",
        "pi-worker-1",
        "pi-launcher-<random>",
    ]
    ssh = [v for v in job["v2"]["pods"][0]["volumes"] if v["name"] == "mpi-ssh-auth"]
    assert ssh and ssh[0]["secret"]["secretName"] == "pi-mpi-ssh-auth"


def test_a_v1alpha1_tfjob_is_compared_as_the_v1_job_operator_mode_applies(
    run: Callable[..., Result],
) -> None:
    """The server serves no kubeflow.org/v1alpha1: the document the comparison says the v1 side
    applies is the v1 TFJob operator mode renders (found by make e2e)."""
    result = run(
        "convert", "--stack", "dev", "--job", "tf-smoke-gpu", "--compare", "--output", "json"
    )
    assert result.exit_code == 0, result.stderr
    [job] = json.loads(result.stdout)["comparisons"]
    doc = job["v1"]["document"]
    assert (doc["apiVersion"], doc["kind"]) == ("kubeflow.org/v1", "TFJob")
    assert list(doc["spec"]["tfReplicaSpecs"]) == ["Master"]
    assert doc["spec"]["tfReplicaSpecs"]["Master"]["restartPolicy"] == "OnFailure"


# --- patches -------------------------------------------------------------------------------------


def test_the_stacks_patch_of_a_converted_job_is_converted() -> None:
    result = _convert(stack="dev", jobs=("pytorch-dist-mnist-nccl",), mode="compare")
    [patch] = result.patches
    assert patch.index == 0 and not patch.problems and not patch.keep
    assert patch.entries == [
        {
            "target": {"kind": "TrainJob", "name": "pytorch-dist-mnist-nccl"},
            "patch": [
                {
                    "op": "replace",
                    "path": "/spec/trainer/image",
                    "value": "registry.example.com/ml/pytorch-dist-mnist:1.0",
                }
            ],
        }
    ]
    [c] = result.comparisons
    for pair in c.pairs:
        assert pair.v2 is not None
        assert (
            pair.v2.container("node")["image"] == "registry.example.com/ml/pytorch-dist-mnist:1.0"
        )
        assert pair.v1.container("pytorch")["image"] == pair.v2.container("node")["image"]
    lines = (REPO / "stacks" / "Pulumi.dev.yaml").read_text().splitlines()
    first = lines.index("  kubetrain:patches:") + 2  # the line of its first entry
    assert any(f"kubetrain:patches[0] (line {first}): replace it with:" in e for e in result.edits)


PATCHED = """\
config:
  kubetrain:namespace: ml
  kubetrain:jobFiles: [jobs/cpu.yaml]
  kubetrain:external:
    trainingRuntimes: [{name: torch-distributed}]
  kubetrain:patches:
    - target: {kind: PyTorchJob, name: torchrun-cpu}
      patch:
        spec:
          pytorchReplicaSpecs:
            Master:
              template: {spec: {nodeSelector: {pool: cpu}}}
            Worker:
              template: {spec: {nodeSelector: {pool: cpu}}}
    - target: {kind: PyTorchJob, name: torchrun-cpu}
      patch:
        - {op: add, path: /spec/elasticPolicy, value: {maxReplicas: 3}}
"""


def test_a_patch_that_needs_a_runtime_gives_the_job_one_and_a_refused_one_says_why(
    project: Path,
) -> None:
    (project / "jobs").mkdir()
    shutil.copy(_file("kubeflow-examples/pytorch-cpu-demo.yaml"), project / "jobs" / "cpu.yaml")
    (project / "stacks" / "Pulumi.dev.yaml").write_text(PATCHED)
    result = plan_conversion(
        project, project / "stacks" / "Pulumi.dev.yaml", mode="stdout", skip_refused=True
    )
    [c] = result.conversion.converted
    # The unpatched job would run on torch-distributed; the first patch needs a runtime.
    assert c.runtime_ref == ("TrainingRuntime", "torchrun-cpu")
    first, second = result.patches
    pod = "/spec/template/spec/replicatedJobs/0/template/spec/template/spec"
    assert first.entries == [
        {
            "target": {"kind": "TrainingRuntime", "name": "torchrun-cpu"},
            "patch": [{"op": "add", "path": f"{pod}/nodeSelector", "value": {"pool": "cpu"}}],
        }
    ]
    assert second.entries == [] and "elastic training" in second.problems[0]
    [problem] = result.problems
    assert problem.path == ("config", "kubetrain:patches", 1)
    assert "this patch cannot be converted" in problem.message


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(json_values, json_values)
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_json_patch_makes_the_one_value_the_other(before: Any, after: Any) -> None:
    ops = json_patch({"v": before}, {"v": after})
    assert jsonpatch.apply_patch({"v": before}, ops) == {"v": after}
    assert (ops == []) == (json.dumps(before) == json.dumps(after))


# --- files ----------------------------------------------------------------------------------------


def test_convert_writes_beside_never_over_and_all_or_nothing(
    repo_copy: Path, run: Callable[..., Result]
) -> None:
    args = ("convert", "--stack", "dev", "--job", "pytorch-simple")
    result = run(*args, cwd=repo_copy)
    assert result.exit_code == 0, result.stderr
    written = [
        repo_copy / "stacks/kubeflow-examples/trainjobs/pytorch-simple.yaml",
        repo_copy / "stacks/kubeflow-examples/trainjobs/runtimes/pytorch-simple.yaml",
    ]
    for path in written:
        assert path.is_file()
    edits = result.stdout
    runtime = "stacks/kubeflow-examples/trainjobs/runtimes/pytorch-simple.yaml"
    assert f"kubetrain:manifestFiles: add {runtime}" in edits
    assert "kubetrain:jobFiles: add stacks/kubeflow-examples/trainjobs/pytorch-simple.yaml" in edits
    # The stack reads neither file yet: it renders as before, and converts on.
    assert run("diff", "--stack", "dev", cwd=repo_copy).exit_code == 0
    before = written[0].read_text()
    again = run("convert", "stacks/kubeflow-examples/pytorch-simple.yaml", cwd=repo_copy)
    assert again.exit_code == 2 and "never overwrites a file" in again.stderr
    assert written[0].read_text() == before
    refused = run("convert", "--stack", "dev", "--job", "elastic-example-echo", cwd=repo_copy)
    assert refused.exit_code == 2 and "cannot be converted to a TrainJob" in refused.stderr
    assert not (repo_copy / "stacks/kubeflow-examples/trainjobs/pytorch-elastic-echo.yaml").exists()


def test_in_place_replaces_a_job_file_only_when_all_of_it_converts(
    repo_copy: Path, run: Callable[..., Result]
) -> None:
    path = repo_copy / "stacks/kubeflow-examples/pytorch-cpu-demo.yaml"
    comment = path.read_text().splitlines()[0]
    result = run("convert", str(path.relative_to(repo_copy)), "--in-place", cwd=repo_copy)
    assert result.exit_code == 0, result.stderr
    docs = list(yaml.safe_load_all(path.read_text()))
    assert [d["kind"] for d in docs] == ["TrainJob"]
    assert path.read_text().startswith(comment + "\n")
    # The dev stack reads the replaced file: it loads and renders (torch-distributed declared).
    assert run("render", "--stack", "dev", cwd=repo_copy).exit_code == 0
    mixed = repo_copy / "stacks/kubeflow-examples/mixed.yaml"
    mixed.write_text(
        _file("kubeflow-examples/pytorch-cpu-demo.yaml").read_text()
        + "---\n"
        + _file("kubeflow-examples/pytorch-elastic-echo.yaml").read_text()
    )
    result = run(
        "convert",
        "stacks/kubeflow-examples/mixed.yaml",
        "--in-place",
        "--skip-refused",
        cwd=repo_copy,
    )
    assert result.exit_code == 2 and "holds documents that are not converted" in result.stderr
    assert "elasticPolicy" in mixed.read_text()


def test_no_v1_job_and_bad_selections_are_input_errors(run: Callable[..., Result]) -> None:
    result = run("convert", "stacks/paddle-examples/examplejob.yaml")
    assert result.exit_code == 2 and "holds no job of the training operator" in result.stderr
    result = run("convert", "--stack", "dev", "--job", "nope")
    assert (
        result.exit_code == 2
        and "--job: no job" in result.stderr
        and "pytorch-simple" in result.stderr
    )
    result = run("convert")
    assert result.exit_code == 2 and "give job files, or a stack" in result.stderr
    result = run("convert", "--stack", "dev", "--stdout", "--compare")
    assert result.exit_code == 2 and "give one of --stdout, --in-place, --compare" in result.stderr


def test_kubeflows_runtimes_as_kubetrain_knows_them_are_the_published_ones() -> None:
    files = {
        "torch-distributed": "torch_distributed.yaml",
        "jax-distributed": "jax_distributed.yaml",
        "xgboost-distributed": "xgboost_distributed.yaml",
    }
    assert set(files) == set(UPSTREAM_NODE_IMAGES)
    for name, file in files.items():
        published = yaml.safe_load((UPSTREAM_RUNTIMES / file).read_text())
        assert published["metadata"]["name"] == name
        assert upstream_spec(name) == published["spec"]


# --- never a traceback ----------------------------------------------------------------------------

_CONTAINER = st.fixed_dictionaries(
    {"name": st.just("pytorch"), "image": st.sampled_from(["t:1", "t:2"])},
    optional={
        "command": st.lists(st.sampled_from(["torchrun", "python", "t.py", "$(RANK)"]), max_size=3),
        "env": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["A", "B", "MASTER_ADDR"]), "value": st.just("1")}
            ),
            max_size=2,
            unique_by=lambda e: e["name"],
        ),
        "resources": st.sampled_from(
            [{"limits": {"nvidia.com/gpu": 1}}, {"requests": {"cpu": "2"}}]
        ),
        "imagePullPolicy": st.just("Always"),
    },
)


@st.composite
def pytorch_jobs(draw: st.DrawFn) -> dict[str, Any]:
    specs = {"Master": {"replicas": 1}} if draw(st.booleans()) else {}
    if draw(st.booleans()) or not specs:
        specs["Worker"] = {"replicas": draw(st.integers(1, 3))}
    for spec in specs.values():
        spec["template"] = {"spec": {"containers": [draw(_CONTAINER)]}}
        spec["restartPolicy"] = draw(st.sampled_from(["OnFailure", "Never", "ExitCode", "Always"]))
    spec: dict[str, Any] = {"pytorchReplicaSpecs": specs}
    if draw(st.booleans()):
        spec["nprocPerNode"] = draw(st.sampled_from(["auto", "cpu", "gpu", "2"]))
    if draw(st.booleans()):
        spec["runPolicy"] = {"backoffLimit": draw(st.integers(0, 3))}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "p"},
        "spec": spec,
    }


@given(pytorch_jobs())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_pytorchjob_converts_to_a_trainjob_that_loads_or_is_refused(
    doc: dict[str, Any],
) -> None:
    try:
        loaded, settings_ = _job(doc, namespace="ml")
    except InputError:
        return  # the job itself is refused at load: not convert's to say
    try:
        c = convert_job(loaded, settings_)
    except Refused as refused:
        assert refused.reason and refused.path[0] in ("spec", "kind")
        return
    trainjob = json.loads(json.dumps(c.trainjob))
    trainjob["metadata"]["annotations"] = {"kubetrain.io/mode": "native"}
    config: dict[str, Any] = {"kubetrain:namespace": "ml", "kubetrain:jobs": [trainjob]}
    if c.runtime is not None:
        config["kubetrain:manifests"] = [c.runtime]
    else:
        spec = upstream_spec("torch-distributed")
        config["kubetrain:external"] = {
            "trainingRuntimes": [{"name": "torch-distributed", "spec": spec}]
        }
    stack = load_stack_data(
        {"config": config},
        name="p",
        file=Path("Pulumi.p.yaml"),
        project_root=Path("."),
        label="converted",
    )
    [jobset] = [b.obj for b in build_stack(stack) if b.obj["kind"] == "JobSet"]
    [node] = [r for r in jobset["spec"]["replicatedJobs"] if r["name"] == "node"]
    assert node["template"]["spec"]["parallelism"] == loaded.job.total_replicas()


BOUND = """\
config:
  kubetrain:namespace: ml
  kubetrain:jobFiles: [jobs/cpu.yaml]
  kubetrain:patches:
    - target: {kind: PyTorchJob, name: torchrun-cpu}
      path: jobs/labels.yaml
"""


@given(st.integers(1, 30))
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_converted_patch_is_bounded_as_a_json_patch(tmp_path_factory, count: int) -> None:
    """A strategic merge patch has no bound on its changes, the JSON patch it becomes has:
    past MAX_PATCH_OPERATIONS (here lowered to 10) the patch is not converted, and says why."""
    import kubetrain.convert.stack as convert_stack_module

    project = tmp_path_factory.mktemp("p")
    (project / "Pulumi.yaml").write_text("name: p\nruntime: python\nstackConfigDir: stacks\n")
    (project / "stacks").mkdir()
    (project / "jobs").mkdir()
    job = yaml.safe_load(_file("kubeflow-examples/pytorch-cpu-demo.yaml").read_text())
    for spec in job["spec"]["pytorchReplicaSpecs"].values():
        spec["template"]["metadata"] = {"labels": {f"l{i}": "a" for i in range(count)}}
    (project / "jobs" / "cpu.yaml").write_text(yaml.safe_dump(job))
    labels = {f"l{i}": "x" for i in range(count)}
    patch = {
        "spec": {
            "pytorchReplicaSpecs": {
                t: {"template": {"metadata": {"labels": labels}}} for t in ("Master", "Worker")
            }
        }
    }
    (project / "jobs" / "labels.yaml").write_text(yaml.safe_dump(patch))
    (project / "stacks" / "Pulumi.dev.yaml").write_text(BOUND)
    bound = convert_stack_module.MAX_PATCH_OPERATIONS
    convert_stack_module.MAX_PATCH_OPERATIONS = 10
    try:
        result = plan_conversion(
            project, project / "stacks" / "Pulumi.dev.yaml", mode="stdout", skip_refused=True
        )
    finally:
        convert_stack_module.MAX_PATCH_OPERATIONS = bound
    [converted] = result.patches
    if count <= 10:
        [entry] = converted.entries
        assert len(entry["patch"]) == count and not converted.problems
    else:
        assert converted.entries == []
        assert f"a JSON patch of {count} operations, more than the 10" in converted.problems[0]


def test_in_a_jobset_stack_the_trainjob_is_the_trainers() -> None:
    """A stack of kubetrain:nativeWorkload jobset would render a TrainJob natively; the
    converted one says kubetrain.io/mode: operator (the trainer runs it), so Kubeflow's
    runtime by name does."""
    doc = _pytorch("1", None, command=["torchrun", "t.py"])
    loaded, settings = _job(doc, nativeWorkload="jobset")
    c = convert_job(loaded, settings)
    assert c.trainjob["metadata"]["annotations"] == {"kubetrain.io/mode": "operator"}
    assert c.kubeflow_runtime == "torch-distributed"
    assert ("metadata", "annotations", "kubetrain.io/mode") in c.trainjob_comments
    loaded, settings = _job(doc)
    assert "annotations" not in convert_job(loaded, settings).trainjob["metadata"]
