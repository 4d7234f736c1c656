"""Gang scheduling: PodGroups and pod wiring for Volcano and scheduler-plugins, for TFJob and for
any kind whose builder hands its manifests to ``with_gang_scheduling``."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema_rs
import pytest

from kubetrain.builders import BuildContext
from kubetrain.builders.gang import GangJob, GangPolicy, with_gang_scheduling
from kubetrain.builders.tfjob import TFTrainingJob
from kubetrain.models import StackSettings

from conftest import UPSTREAM_SCHEMAS, needs_upstream_schemas
from helpers import objects, pick, pod_stack

VOLCANO_SCHEMA = UPSTREAM_SCHEMAS / "scheduling.volcano.sh" / "podgroup_v1beta1.json"


def container(**resources: dict) -> dict:
    c: dict = {"name": "tensorflow", "image": "tf:2"}
    if resources:
        c["resources"] = resources
    return c


def tfjob(name: str = "mnist", policy: dict | None = None, **replicas: int) -> dict:
    spec: dict = {
        "tfReplicaSpecs": {
            rtype: {
                "replicas": n,
                "template": {
                    "spec": {
                        "containers": [
                            container(
                                requests={"cpu": "500m", "memory": "1Gi"},
                                limits={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 1},
                            )
                        ]
                    }
                },
            }
            for rtype, n in replicas.items()
        }
    }
    if policy is not None:
        spec["runPolicy"] = {"schedulingPolicy": policy}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": spec,
    }


def build(tmp_path: Path, job: dict, gang: str = "none", **config: object) -> list[dict]:
    cfg = {"kubetrain:namespace": "ml", "kubetrain:gangScheduler": gang, "kubetrain:jobs": [job]}
    cfg.update({f"kubetrain:{k}": v for k, v in config.items()})
    return objects(pod_stack(tmp_path, cfg))


def pods(objs: list[dict]) -> list[dict]:
    return [o for o in objs if o["kind"] == "Pod"]


@needs_upstream_schemas
def test_volcano_for_a_multi_pod_job_when_the_stack_turns_it_on(tmp_path: Path) -> None:
    objs = build(tmp_path, tfjob(PS=1, Worker=2), gang="volcano")
    group = pick(objs, "PodGroup", "mnist")
    assert group["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    # Every pod, requests summed; GPUs come from the (normalised) requests.
    assert group["spec"] == {
        "minMember": 3,
        "minResources": {"cpu": "1500m", "memory": "3Gi", "nvidia.com/gpu": "3"},
        "queue": "default",
    }
    worker = pick(objs, "Pod", "mnist-worker-1")
    assert worker["spec"]["schedulerName"] == "volcano"
    annotations = worker["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if "volcano" in k or "scheduling" in k} == {
        "scheduling.k8s.io/group-name": "mnist",
        "volcano.sh/task-spec": "worker",
    }
    # Pulumi does not wait for a gang's pods one by one (they only start together): a waitFor
    # met at once, not skipAwait, which would also skip the wait for a replaced pod's delete.
    assert annotations["pulumi.com/waitFor"] == "jsonpath={.metadata.name}"
    assert "pulumi.com/skipAwait" not in annotations
    assert (
        pick(objs, "Pod", "mnist-ps-0")["metadata"]["annotations"]["volcano.sh/task-spec"] == "ps"
    )
    # Services are not pods: untouched.
    assert "annotations" not in pick(objs, "Service", "mnist-worker-1")["metadata"]
    jsonschema_rs.validator_for(json.loads(VOLCANO_SCHEMA.read_text())).validate(group)


def test_a_single_pod_job_is_not_gang_scheduled_by_the_stack_alone(tmp_path: Path) -> None:
    objs = build(tmp_path, tfjob(Worker=1), gang="volcano")
    assert [o for o in objs if o["kind"] == "PodGroup"] == []
    assert "schedulerName" not in pick(objs, "Pod", "mnist-worker-0")["spec"]


@needs_upstream_schemas
def test_scheduling_policy_alone_means_volcano(tmp_path: Path) -> None:
    policy = {"minAvailable": 2, "queue": "vision", "priorityClass": "high"}
    objs = build(tmp_path, tfjob(policy=policy, PS=1, Worker=2))
    group = pick(objs, "PodGroup", "mnist")
    # minResources: the first two pods in output order (the PS, then worker 0).
    assert group["spec"] == {
        "minMember": 2,
        "minResources": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "2"},
        "priorityClassName": "high",
        "queue": "vision",
    }
    assert all(p["spec"]["schedulerName"] == "volcano" for p in pods(objs))
    jsonschema_rs.validator_for(json.loads(VOLCANO_SCHEMA.read_text())).validate(group)


def test_scheduler_plugins_podgroup_and_label(tmp_path: Path) -> None:
    policy = {"scheduleTimeoutSeconds": 120, "queue": "ignored-by-coscheduling"}
    objs = build(tmp_path, tfjob(policy=policy, Worker=2), gang="scheduler-plugins")
    group = pick(objs, "PodGroup", "mnist")
    assert group["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert group["spec"] == {
        "minMember": 2,
        "minResources": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "2"},
        "scheduleTimeoutSeconds": 120,
    }
    for pod in pods(objs):
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "mnist"
        assert not any("volcano" in k for k in pod["metadata"]["annotations"])
        assert pod["metadata"]["annotations"]["pulumi.com/waitFor"] == "jsonpath={.metadata.name}"


def test_limits_stand_in_for_missing_requests_and_given_min_resources_win(tmp_path: Path) -> None:
    job = tfjob(policy={}, Worker=2)
    template = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]
    template["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1.5", "memory": "1.5Gi"}}
    template["spec"]["containers"].append(
        {"name": "sidecar", "image": "s", "resources": {"requests": {"cpu": "100m"}}}
    )
    group = pick(build(tmp_path, job), "PodGroup", "mnist")
    assert group["spec"]["minResources"] == {"cpu": "3200m", "memory": "3Gi"}
    job["spec"]["runPolicy"]["schedulingPolicy"] = {"minResources": {"cpu": 4, "memory": "4096Mi"}}
    (tmp_path / "b").mkdir()
    group = pick(build(tmp_path / "b", job), "PodGroup", "mnist")
    assert group["spec"]["minResources"] == {"cpu": "4", "memory": "4Gi"}


def test_a_template_naming_its_own_scheduler_keeps_it(tmp_path: Path) -> None:
    job = tfjob(Worker=2)
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] = "custom"
    objs = build(tmp_path, job, gang="volcano")
    assert pick(objs, "Pod", "mnist-worker-0")["spec"]["schedulerName"] == "custom"


@pytest.mark.parametrize(
    ("gang", "policy", "replicas", "expected"),
    [
        pytest.param("none", None, 2, None, id="off"),
        pytest.param("volcano", None, 2, "volcano", id="stack-volcano"),
        pytest.param("volcano", None, 1, None, id="stack-volcano-one-pod"),
        pytest.param("none", {}, 1, "volcano", id="policy-alone"),
        pytest.param(
            "scheduler-plugins", {}, 1, "scheduler-plugins-scheduler", id="policy-plugins"
        ),
    ],
)
def test_scheduler_name_matches_what_the_pods_get(
    tmp_path: Path, gang: str, policy: dict | None, replicas: int, expected: str | None
) -> None:
    stack = pod_stack(
        tmp_path,
        {
            "kubetrain:gangScheduler": gang,
            "kubetrain:jobs": [tfjob(policy=policy, Worker=replicas)],
        },
    )
    loaded = stack.jobs[0]
    assert TFTrainingJob(loaded.job, BuildContext(stack.settings)).scheduler_name() == expected
    names = {p["spec"].get("schedulerName") for p in pods(objects(stack))}
    assert names == {expected}


def test_operator_mode_leaves_gang_scheduling_to_the_operator(tmp_path: Path) -> None:
    job = tfjob(policy={"minAvailable": 1}, Worker=2)
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    objs = build(tmp_path, job, gang="volcano")
    assert [o["kind"] for o in objs] == ["TFJob"]


def test_generic_workloads_count_replicas_and_parallelism() -> None:
    """What a TrainingJob or Learner builder gets from the one-line call."""
    template = {
        "metadata": {"labels": {"app.kubernetes.io/component": "pserver"}},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]
        },
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "j-pserver"},
        "spec": {"replicas": 2, "template": template},
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j-trainer"},
        "spec": {
            "parallelism": 3,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "t", "image": "i", "resources": {"limits": {"cpu": "2"}}}
                    ]
                }
            },
        },
    }
    settings = StackSettings.model_validate({"gangScheduler": "volcano"})
    out = with_gang_scheduling(
        [rs, job], GangJob("j", "ml", {"team": "a"}, {"note": "x"}), settings
    )
    group = out[-1]
    assert group["metadata"] == {
        "name": "j",
        "namespace": "ml",
        "labels": {"team": "a"},
        "annotations": {"note": "x"},
    }
    assert group["spec"]["minMember"] == 5
    assert group["spec"]["minResources"] == {"cpu": "8"}
    assert rs["spec"]["template"]["metadata"]["annotations"]["volcano.sh/task-spec"] == "pserver"
    assert job["spec"]["template"]["metadata"]["annotations"]["volcano.sh/task-spec"] == "j-trainer"
    assert job["spec"]["template"]["spec"]["schedulerName"] == "volcano"
    policy = GangPolicy(min_available=3)
    out = with_gang_scheduling([rs, job], GangJob("j", "ml"), settings, policy)
    assert out[-1]["spec"]["minMember"] == 3
    assert out[-1]["spec"]["minResources"] == {"cpu": "4"}  # two pservers, one trainer


@pytest.mark.parametrize("gang", ["volcano", "scheduler-plugins"])
def test_the_pod_group_carries_the_jobs_annotations(tmp_path: Path, gang: str) -> None:
    """The operator's SyncPodGroup sets the job's annotations on the PodGroup it creates."""
    job = tfjob(PS=1, Worker=2)
    job["metadata"]["annotations"] = {"team": "vision", "cost-center": "42"}
    objs = build(tmp_path, job, gang=gang)
    assert pick(objs, "PodGroup", "mnist")["metadata"]["annotations"] == {
        "team": "vision",
        "cost-center": "42",
    }


@pytest.mark.parametrize(
    ("code", "resources", "task_spec"),
    [
        # A container giving requests has its limits ignored (AddResourceList, v1.9.3).
        ("training-operator", {"cpu": "2"}, True),
        # Each resource falls back to the limit (mpi-operator v0.8.2 addResources); no task-spec.
        ("mpi-operator", {"cpu": "2", "memory": "2Gi"}, False),
        ("kubetrain", {"cpu": "2", "memory": "2Gi"}, True),
    ],
)
def test_each_operators_gang_code_is_followed(
    code: str, resources: dict[str, str], task_spec: bool
) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "j-worker-0", "namespace": "ml"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi"}},
                }
            ]
        },
    }
    other = json.loads(json.dumps(pod))
    other["metadata"]["name"] = "j-worker-1"
    settings = StackSettings.model_validate({"gangScheduler": "volcano"})
    out = with_gang_scheduling([pod, other], GangJob("j", "ml", code=code), settings)
    assert out[-1]["spec"]["minResources"] == resources
    annotations = pod["metadata"]["annotations"]
    assert annotations["scheduling.k8s.io/group-name"] == "j"
    assert ("volcano.sh/task-spec" in annotations) is task_spec
    # Nothing requested: both operators write minResources: {} (a pointer to an empty list).
    bare = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}  # fmt: skip
    twin = json.loads(json.dumps(bare))
    twin["metadata"]["name"] = "q"
    group = with_gang_scheduling([bare, twin], GangJob("j", "ml", code=code), settings)[-1]
    assert group["spec"].get("minResources") == ({} if code != "kubetrain" else None)
