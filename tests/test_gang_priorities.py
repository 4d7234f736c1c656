"""Which pods a gang smaller than its job sums, by the value of their PriorityClasses: the
training operator's CalcPGMinResources, the MPI Operator's calPGMinResource and Volcano's
calcPGMinResources (each mirrored in :mod:`kubetrain.builders.gang`; ``make e2e`` holds them to
the real controllers with e2e/fidelity/Pulumi.gang-priorities.yaml), the PriorityClass values
taken from the stack's manifests, in render and in the Pulumi components alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kubetrain.builders import build_stack
from kubetrain.builders.gang import ReplicaPods, mpi_min_resources, priority_classes
from kubetrain.models import InputError

from helpers import pick, stack_from
from pulumi_harness import run_pulumi

NAMESPACE = "ml"


def priority_class(name: str, value: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def pod_template(cpu: int, priority: str | None = None, name: str = "main") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": name,
                "image": "registry.example.com/app:1",
                "resources": {"requests": {"cpu": str(cpu)}},
            }
        ]
    }
    if priority is not None:
        spec["priorityClassName"] = priority
    return {"spec": spec}


def pod_group(tmp_path: Path, job: dict[str, Any], classes: list[dict[str, Any]]) -> dict:
    stack = stack_from(
        tmp_path,
        {
            "kubetrain:namespace": NAMESPACE,
            "kubetrain:nativeWorkload": "pod",
            "kubetrain:secretStore": {"kind": "ClusterSecretStore", "name": "vault"},
            "kubetrain:manifests": classes,
            "kubetrain:jobs": [job],
        },
    )
    return pick([b.obj for b in build_stack(stack)], "PodGroup", job["metadata"]["name"])


# --- training-operator v1.9.3 CalcPGMinResources ----------------------------------------------


def ranked_tfjob() -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "ranked"},
        "spec": {
            "runPolicy": {"schedulingPolicy": {"minAvailable": 4}},
            "tfReplicaSpecs": {
                "Chief": {"replicas": 1, "template": pod_template(2, name="tensorflow")},
                "PS": {"replicas": 2, "template": pod_template(1, "low", "tensorflow")},
                "Worker": {"replicas": 3, "template": pod_template(4, "high", "tensorflow")},
            },
        },
    }


def test_a_tfjob_gang_sums_its_pods_in_the_jobs_order_whatever_their_classes(
    tmp_path: Path,
) -> None:
    """The training operator's CalcPGMinResources would sort replica types by priority, but the
    lister its reconcilers hand it is never started (v1.9.3 ``NewReconciler``): every class
    counts 0 (make e2e's tf-ranked shows it). The first four pods are the chief's, both
    parameter servers' and a worker's, in the job's order, the workers' class notwithstanding."""
    job = ranked_tfjob()
    classes = [priority_class("high", 1000), priority_class("low", 10)]
    expected = {"cpu": str(2 + 2 * 1 + 4)}
    assert pod_group(tmp_path, job, classes)["spec"]["minResources"] == expected
    assert pod_group(tmp_path, job, [])["spec"]["minResources"] == expected


RTYPES = ("Chief", "PS", "Worker", "Evaluator")  # kubetrain's order of a TFJob's types
CLASSES = (None, "high", "low", "absent", "system-node-critical")
SYSTEM = {"system-node-critical": 2_000_001_000}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    types=st.lists(
        st.tuples(st.integers(0, 3), st.integers(1, 9), st.sampled_from(CLASSES)),
        min_size=len(RTYPES),
        max_size=len(RTYPES),
    ),
    high=st.integers(-5, 2000),
    low=st.integers(-5, 2000),
    cut=st.integers(1, 12),
)
def test_a_tfjob_gang_takes_the_first_pods_of_the_jobs_order(
    tmp_path: Path, types: list[tuple[int, int, str | None]], high: int, low: int, cut: int
) -> None:
    """Any TFJob (at most one Chief), any classes: the sum is of the first minMember pods in
    the job's order (what the operator does when Go's map gives it that order)."""
    # At most one Chief, and a Chief given is one pod (kubetrain's rule).
    specs = {
        rtype: {
            "replicas": 1 if rtype == "Chief" else n,
            "template": pod_template(cpu, cls, "tensorflow"),
        }
        for rtype, (n, cpu, cls) in zip(RTYPES, types, strict=True)
        if n or rtype != "Chief"
    }
    total = sum(s["replicas"] for s in specs.values())
    assume(total >= 2)  # no gang of one pod
    members = min(cut, total)
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "any"},
        "spec": {
            "runPolicy": {"schedulingPolicy": {"minAvailable": members}},
            "tfReplicaSpecs": specs,
        },
    }
    # The job's order, whatever the classes (the operator's lister never holds one).
    ordered = [
        (specs[r]["replicas"], cpu)
        for r, (_, cpu, _) in zip(RTYPES, types, strict=True)
        if r in specs
    ]
    left, expected = members, 0
    for pods, cpu in ordered:
        take = min(pods, left)
        expected += take * cpu
        left -= take
    classes = [priority_class("high", high), priority_class("low", low)]
    group = pod_group(tmp_path, job, classes)
    assert group["spec"]["minMember"] == members
    assert group["spec"]["minResources"] == {"cpu": str(expected)}


# --- MPI Operator v0.8.2 calPGMinResource ----------------------------------------------------


def mpijob(
    members: int, workers: int, launcher: str | None = None, worker: str | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "pi"},
        "spec": {
            "runPolicy": {"schedulingPolicy": {"minAvailable": members}},
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": pod_template(1, launcher)},
                "Worker": {"replicas": workers, "template": pod_template(4, worker)},
            },
        },
    }


@pytest.mark.parametrize(
    ("job", "cpu"),
    [
        # Equal priorities: the launcher and minMember - 1 workers (not the first two pods,
        # which would be two workers).
        pytest.param(mpijob(2, 3), 1 + 1 * 4, id="equal"),
        pytest.param(mpijob(4, 3), 1 + 3 * 4, id="whole"),
        # The launcher first: the workers, of lower priority, are cut to minMember - 1.
        pytest.param(mpijob(3, 4, "high", "low"), 1 + 2 * 4, id="launcher-first"),
        # The workers first: the launcher is the lower type, counted minMember - 1 times.
        pytest.param(mpijob(3, 3, "low", "high"), 3 * 4 + 2 * 1, id="workers-first"),
        pytest.param(mpijob(3, 3, "low", "system-cluster-critical"), 3 * 4 + 2, id="system"),
    ],
)
def test_an_mpijob_gang_sums_as_the_mpi_operator(
    tmp_path: Path, job: dict[str, Any], cpu: int
) -> None:
    classes = [priority_class("high", 1000), priority_class("low", 10)]
    assert pod_group(tmp_path, job, classes)["spec"]["minResources"] == {"cpu": str(cpu)}


def test_mpi_sums_name_a_type_counted_no_times_and_none_for_no_pods() -> None:
    launcher = ReplicaPods("Launcher", pod_template(1)["spec"], 1)
    gpus = {"resources": {"limits": {"nvidia.com/gpu": 1}}}
    worker = ReplicaPods("Worker", {"containers": [{"name": "w", "image": "i", **gpus}]}, 2)
    # minMember 1: the workers count 0 times, and still name their GPUs (Quantity.Mul(0)).
    assert mpi_min_resources([launcher, worker], 1, {}) == {"cpu": "1", "nvidia.com/gpu": "0"}
    assert mpi_min_resources([launcher, worker], 0, {}) is None
    assert mpi_min_resources([launcher], 1, {}) == {"cpu": "1"}


# --- Volcano v1.14.1 calcPGMinResources ------------------------------------------------------


def ranked_volcano_job() -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "ranked"},
        "spec": {
            "minAvailable": 3,
            "tasks": [
                {"name": "reader", "replicas": 2, "template": pod_template(1)},
                {"name": "trainer", "replicas": 2, "template": pod_template(3, "high")},
            ],
        },
    }


def test_a_volcano_job_sums_its_higher_priority_tasks_first(tmp_path: Path) -> None:
    job = ranked_volcano_job()
    group = pod_group(tmp_path, job, [priority_class("high", 1000)])
    # Below the tasks' minimums (CalcFirstCountResources): both trainers, then one reader.
    assert group["spec"]["minResources"]["cpu"] == str(2 * 3 + 1)
    assert pod_group(tmp_path, job, [])["spec"]["minResources"]["cpu"] == str(2 * 1 + 3)


def test_an_mpijobs_pod_group_takes_the_launchers_priority_class(tmp_path: Path) -> None:
    """calculatePriorityClassName: the schedulingPolicy's class, else the launcher's pods',
    else the workers'."""
    classes = [priority_class("high", 1000), priority_class("low", 10)]
    group = pod_group(tmp_path, mpijob(3, 3, "low", "high"), classes)
    assert group["spec"]["priorityClassName"] == "low"
    assert (
        pod_group(tmp_path, mpijob(3, 3, None, "high"), classes)["spec"]["priorityClassName"]
        == "high"
    )
    given = mpijob(3, 3, "low", "high")
    given["spec"]["runPolicy"]["schedulingPolicy"]["priorityClass"] = "high"
    assert pod_group(tmp_path, given, classes)["spec"]["priorityClassName"] == "high"
    assert "priorityClassName" not in pod_group(tmp_path, mpijob(3, 3), classes)["spec"]


# --- the classes a stack delivers -----------------------------------------------------------


def test_priority_classes_are_the_stacks_well_formed_ones() -> None:
    manifests = [
        priority_class("a", 5),
        priority_class("b", True),  # not an int: validate refuses it, and it counts as none
        priority_class("c", "7"),
        {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PriorityClass",
            "metadata": {"name": "d"},
            "value": 3,
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}, "value": 1},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": "x"},
    ]
    # scheduling.k8s.io/v1beta1 is the same group's class (the API server serves both).
    assert priority_classes(manifests) == {"a": 5, "d": 3}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["apiVersion", "kind", "metadata", "value"]),
            st.one_of(
                st.none(),
                st.integers(),
                st.text(max_size=20),
                st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
            ),
        ),
        max_size=6,
    )
)
def test_priority_classes_of_any_manifests_are_names_to_ints(manifests: list[dict]) -> None:
    found = priority_classes(manifests)
    assert all(type(k) is str and type(v) is int for k, v in found.items())
    assert len(found) <= len(manifests)


# --- the Pulumi components --------------------------------------------------------------------


def test_the_pulumi_program_sums_as_render(tmp_path: Path) -> None:
    """deploy_stack hands the stack's PriorityClasses to each job's component."""
    from components import deploy_stack

    config = {
        "kubetrain:namespace": NAMESPACE,
        "kubetrain:manifests": [priority_class("high", 1000)],
        "kubetrain:jobs": [ranked_volcano_job()],
    }
    stack = stack_from(tmp_path, config)
    rendered = pick([b.obj for b in build_stack(stack)], "PodGroup", "ranked")
    run = run_pulumi(lambda: deploy_stack(stack) and None)
    (registered,) = [r.plain for r in run.kubernetes_objects() if r.plain.get("kind") == "PodGroup"]
    assert registered["spec"]["minResources"] == rendered["spec"]["minResources"]
    assert rendered["spec"]["minResources"]["cpu"] == str(2 * 3 + 1)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"high": "1000"}, "priority_classes.high: must be an integer (an int32)"),
        ({"high": 2**31}, "priority_classes.high: must be an integer (an int32)"),
        ({"high": True}, "priority_classes.high: must be an integer (an int32)"),
        (["high"], "priority_classes: must be a mapping"),
    ],
)
def test_a_component_refuses_priority_classes_of_the_wrong_shape(value: Any, message: str) -> None:
    from components import MPIJob

    args = {
        "metadata": {"name": "pi", "namespace": NAMESPACE},
        "spec": {"mpi_replica_specs": mpijob(2, 2)["spec"]["mpiReplicaSpecs"]},
        "priority_classes": value,
    }
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: MPIJob("pi", args))
    assert str(raised.value) == f"MPIJob pi: {message}"


def test_a_component_whose_gang_ignores_priorities_refuses_them() -> None:
    """The kinds whose gang reads no PriorityClass (the training operator's, kubetrain's own:
    the seeds' kinds) declare no priority_classes: given one, the job document refuses it."""
    from components import TFJob, TrainingJob

    edl = {
        "metadata": {"name": "edl", "namespace": NAMESPACE},
        "spec": {"image": "paddle:1", "trainer": {"min_instance": 1, "max_instance": 2}},
        "priority_classes": {"high": 1},
    }
    tf = {
        "metadata": {"name": "tf", "namespace": NAMESPACE},
        "spec": {"tf_replica_specs": ranked_tfjob()["spec"]["tfReplicaSpecs"]},
        "priority_classes": {"high": 1},
    }
    refused = 0
    for component, args in ((TrainingJob, edl), (TFJob, tf)):
        with pytest.raises(InputError) as raised:
            run_pulumi(lambda c=component, a=args: c("x", a))
        assert "priority_classes" in str(raised.value)
        refused += 1
    assert refused == 2
