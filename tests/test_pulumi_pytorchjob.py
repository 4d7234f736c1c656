"""The PyTorchJob component under Pulumi mocks: both spellings of its arguments register exactly
what the builder builds, its outputs, operator mode, bad arguments, options."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components import PyTorchJob
from kubetrain.builders import BuildContext, build_job
from kubetrain.models import InputError, load_job

from pulumi_harness import by_identity, expected_identity, nothing_but_the_stack, run_pulumi, same

TEMPLATE = {"spec": {"containers": [{"name": "pytorch", "image": "pytorch/pytorch:2.3.0"}]}}

#: A Master and two Workers with 2 processes each, elastic from 1 to 2 workers, as a PyTorchJob
#: manifest writes it (the render path's input).
MANIFEST_SPEC: dict[str, Any] = {
    "nprocPerNode": "2",
    "runPolicy": {"cleanPodPolicy": "All", "schedulingPolicy": {"minAvailable": 3}},
    "elasticPolicy": {"minReplicas": 1, "maxReplicas": 2, "rdzvId": "r1"},
    "pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": TEMPLATE},
        "Worker": {"replicas": 2, "restartPolicy": "Never", "template": TEMPLATE},
    },
}


def python_args(**settings: Any) -> dict[str, Any]:
    """The same job in the Python (snake_case) spelling of the TypedDicts."""
    spec = {
        "nproc_per_node": "2",
        "run_policy": {"clean_pod_policy": "All", "scheduling_policy": {"min_available": 3}},
        "elastic_policy": {"min_replicas": 1, "max_replicas": 2, "rdzv_id": "r1"},
        "pytorch_replica_specs": {
            "Master": {"replicas": 1, "template": TEMPLATE},
            "Worker": {"replicas": 2, "restart_policy": "Never", "template": TEMPLATE},
        },
    }
    args: dict[str, Any] = {"metadata": {"name": "bert", "namespace": "ml"}, "spec": spec}
    if settings:
        args["settings"] = settings
    return args


def expected(args: dict[str, Any]) -> list[dict[str, Any]]:
    document = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", **args}
    loaded, settings = load_job(document, settings=document.pop("settings", None), file="t")
    return build_job(loaded, BuildContext(settings, "pulumi"))


@pytest.mark.parametrize(
    "spelling",
    ["python", "manifest"],
)
@pytest.mark.parametrize("settings", [{}, {"gang_scheduler": "volcano"}], ids=["plain", "gang"])
def test_pytorchjob_registers_what_the_builder_builds(
    spelling: str, settings: dict[str, Any]
) -> None:
    if spelling == "python":
        args = python_args(**settings)
    else:
        args = {"metadata": {"name": "bert", "namespace": "ml"}, "spec": MANIFEST_SPEC}
        if settings:
            args["settings"] = settings
    run = run_pulumi(lambda: PyTorchJob("ml/bert", args).mode)
    objects = run.kubernetes_objects()
    assert by_identity(objects) == expected_identity(expected(args))
    assert {o.plain["kind"] for o in objects} >= {"Job", "Service", "PodGroup"}  # default: job
    component = run.one("kubetrain:index:PyTorchJob", "ml/bert")
    assert all(run.parent_of(o) is component for o in objects)
    assert run.result == "native"


def test_pytorchjob_outputs() -> None:
    def program() -> Any:
        job = PyTorchJob("ml/bert", python_args(cluster_domain="cluster.local"))
        return {
            "selector": job.label_selector,
            "master": job.master_addr,
            "world": job.world_size,
            "hosts": job.service_hosts,
            "exports": job.exports(),
        }

    run = run_pulumi(program)
    assert run.result["selector"] == (
        "training.kubeflow.org/job-name=bert,"
        "training.kubeflow.org/operator-name=pytorchjob-controller"
    )
    assert (run.result["master"], run.result["world"]) == ("bert-master-0", 6)
    assert run.result["hosts"] == [
        "bert-master-0.ml.svc.cluster.local",
        "bert-worker-0.ml.svc.cluster.local",
        "bert-worker-1.ml.svc.cluster.local",
    ]
    assert run.result["exports"]["kind"] == "PyTorchJob"
    component = run.one("kubetrain:index:PyTorchJob", "ml/bert")
    assert run.outputs[component.urn]["worldSize"] == 6


def test_pytorchjob_operator_mode_registers_the_custom_resource() -> None:
    args = python_args(mode="operator")
    run = run_pulumi(lambda: PyTorchJob("ml/bert", args).master_addr)
    (reg,) = run.kubernetes_objects()
    assert reg.type == "kubernetes:kubeflow.org/v1:PyTorchJob"
    assert run.parent_of(reg).type == "kubetrain:index:PyTorchJob"  # type: ignore[union-attr]
    assert same(reg.plain) == same(expected(args)[0])
    assert run.result == "bert-master-0"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda a: a["spec"]["pytorch_replica_specs"]["Master"].update(replicas=2),
            "PyTorchJob ml/bert: spec.pytorchReplicaSpecs.Master.replicas: Master must have "
            "exactly 1 replica, got 2",
            id="two-masters",
        ),
        pytest.param(
            lambda a: a["spec"].update(nproc_per_node="lots"),
            "PyTorchJob ml/bert: spec.nprocPerNode: must be auto, cpu, gpu or a positive number, "
            "got 'lots'",
            id="bad-nproc",
        ),
        pytest.param(
            lambda a: a["spec"]["run_policy"].update(managed_by="kueue.x-k8s.io/multikueue"),
            "PyTorchJob ml/bert: spec.runPolicy.managedBy: kueue.x-k8s.io/multikueue hands the "
            "job to Kueue's MultiKueue, which runs it on another cluster (the training operator "
            "leaves it alone); native mode would create its pods here: use operator mode",
            id="multikueue-native",
        ),
    ],
)
def test_pytorchjob_bad_arguments_fail_before_anything_is_registered(
    change: Any, message: str
) -> None:
    args = python_args()
    change(args)
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: PyTorchJob("ml/bert", args).mode)
    assert str(raised.value) == message
    assert nothing_but_the_stack(raised.value)


def test_pytorchjob_options_reach_every_object() -> None:
    def program() -> Any:
        opts = pulumi.ResourceOptions(protect=True)
        return PyTorchJob("ml/bert", python_args(), opts).mode

    run = run_pulumi(program)
    objects = run.kubernetes_objects()
    assert objects and all(o.protect for o in objects)
