"""TFJob expansion against the training-operator v1.9 behaviour."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubetrain.builders import BuildContext
from kubetrain.builders.tfjob import TFTrainingJob, to_selector
from kubetrain.validate import Located, Validator

from conftest import needs_upstream_schemas
from helpers import container, env, objects, pick, pod_stack

TF = "tensorflow"


def tfjob(name: str = "mnist", **replicas: dict) -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name},
        "spec": {"tfReplicaSpecs": replicas},
    }


def replica(n: int = 1, image: str = "tf:2", **extra) -> dict:
    spec = {"replicas": n, "template": {"spec": {"containers": [{"name": TF, "image": image}]}}}
    spec.update(extra)
    return spec


@pytest.fixture
def full_job(tmp_path: Path) -> list[dict]:
    """Chief, 2 PS on port 2223, 3 Workers and an Evaluator, in namespace ml."""
    ps = replica(2)
    ps["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "tfjob-port", "containerPort": 2223}
    ]
    job = tfjob(Chief=replica(1), PS=ps, Worker=replica(3), Evaluator=replica(1))
    return objects(pod_stack(tmp_path, {"kubetrain:namespace": "ml", "kubetrain:jobs": [job]}))


def test_tf_config_of_a_full_job_is_exactly_the_operators(full_job: list[dict]) -> None:
    tf_config = env(container(pick(full_job, "Pod", "mnist-worker-1")))["TF_CONFIG"]
    # Written out by hand from genTFConfigJSONStr: compact JSON, cluster keys sorted, every type
    # (the evaluator too) with its own port, task type lower-case, environment "cloud".
    assert tf_config == (
        '{"cluster":{'
        '"chief":["mnist-chief-0.ml.svc:2222"],'
        '"evaluator":["mnist-evaluator-0.ml.svc:2222"],'
        '"ps":["mnist-ps-0.ml.svc:2223","mnist-ps-1.ml.svc:2223"],'
        '"worker":["mnist-worker-0.ml.svc:2222","mnist-worker-1.ml.svc:2222","mnist-worker-2.ml.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )
    ps1 = json.loads(env(container(pick(full_job, "Pod", "mnist-ps-1")))["TF_CONFIG"])
    assert ps1["task"] == {"type": "ps", "index": 1}
    evaluator = json.loads(env(container(pick(full_job, "Pod", "mnist-evaluator-0")))["TF_CONFIG"])
    assert evaluator["task"] == {"type": "evaluator", "index": 0}


def test_one_pod_and_one_headless_service_per_index(full_job: list[dict]) -> None:
    names = sorted((o["kind"], o["metadata"]["name"]) for o in full_job)
    expected_pods = [
        "mnist-chief-0",
        "mnist-evaluator-0",
        "mnist-ps-0",
        "mnist-ps-1",
        "mnist-worker-0",
        "mnist-worker-1",
        "mnist-worker-2",
    ]
    assert names == sorted(
        [("Pod", n) for n in expected_pods] + [("Service", n) for n in expected_pods]
    )
    assert all(o["metadata"]["namespace"] == "ml" for o in full_job)


def test_labels_selectors_and_ports(full_job: list[dict]) -> None:
    pod = pick(full_job, "Pod", "mnist-ps-1")
    operator_labels = {
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/job-name": "mnist",
        "training.kubeflow.org/replica-type": "ps",
        "training.kubeflow.org/replica-index": "1",
    }
    assert pod["metadata"]["labels"] == {
        **operator_labels,
        "app.kubernetes.io/name": "tfjob",
        "app.kubernetes.io/instance": "mnist",
        "app.kubernetes.io/component": "ps",
        "app.kubernetes.io/managed-by": "kubetrain",
    }
    service = pick(full_job, "Service", "mnist-ps-1")
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": operator_labels,
        "ports": [{"name": "tfjob-port", "port": 2223}],
    }
    # The selector picks exactly the pod of the same index.
    assert set(service["spec"]["selector"].items()) <= set(pod["metadata"]["labels"].items())


def test_job_role_master_goes_to_the_chief_only(full_job: list[dict]) -> None:
    roles = {
        o["metadata"]["name"]: o["metadata"]["labels"].get("training.kubeflow.org/job-role")
        for o in full_job
        if o["kind"] == "Pod"
    }
    assert {n for n, r in roles.items() if r == "master"} == {"mnist-chief-0"}
    assert not any(
        "training.kubeflow.org/job-role" in o["metadata"]["labels"]
        for o in full_job
        if o["kind"] == "Service"
    )


def test_without_chief_or_master_worker_0_is_master(tmp_path: Path) -> None:
    objs = objects(
        pod_stack(tmp_path, {"kubetrain:jobs": [tfjob(PS=replica(1), Worker=replica(2))]})
    )
    masters = [
        o["metadata"]["name"]
        for o in objs
        if o["metadata"]["labels"].get("training.kubeflow.org/job-role") == "master"
    ]
    assert masters == ["mnist-worker-0"]


def test_default_port_is_added_and_services_expose_named_ports(tmp_path: Path) -> None:
    worker = replica(2)
    worker["template"]["spec"]["containers"][0]["ports"] = [
        {"name": "metrics", "containerPort": 9090},
        {"containerPort": 7000},
    ]
    worker["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "s", "ports": [{"name": "side", "containerPort": 1}]}
    )
    objs = objects(pod_stack(tmp_path, {"kubetrain:jobs": [tfjob(Worker=worker)]}))
    ports = container(pick(objs, "Pod", "mnist-worker-0"))["ports"]
    assert {"name": "tfjob-port", "containerPort": 2222} in ports
    assert pick(objs, "Service", "mnist-worker-0")["spec"]["ports"] == [
        {"name": "metrics", "port": 9090},
        {"name": "tfjob-port", "port": 2222},
    ]


def test_tf_config_only_on_tensorflow_and_only_when_distributed(tmp_path: Path) -> None:
    single = replica(1)
    single["template"]["spec"]["containers"].append({"name": "sidecar", "image": "s"})
    objs = objects(
        pod_stack(
            tmp_path,
            {"kubetrain:jobs": [tfjob("solo", Worker=single), tfjob("duo", Worker=replica(2))]},
        )
    )
    assert "TF_CONFIG" not in env(container(pick(objs, "Pod", "solo-worker-0")))
    duo = pick(objs, "Pod", "duo-worker-0")
    assert "TF_CONFIG" in env(container(duo))
    assert all("TF_CONFIG" not in env(c) for c in duo["spec"]["containers"] if c["name"] != TF)


def test_existing_env_is_kept_and_tf_config_appended(tmp_path: Path) -> None:
    worker = replica(2)
    worker["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    objs = objects(pod_stack(tmp_path, {"kubetrain:jobs": [tfjob(Worker=worker)]}))
    assert [e["name"] for e in container(pick(objs, "Pod", "mnist-worker-1"))["env"]] == [
        "A",
        "TF_CONFIG",
    ]


@pytest.mark.parametrize(
    ("policy", "pod_policy"),
    [("Always", "Always"), ("OnFailure", "OnFailure"), ("Never", "Never"), ("ExitCode", "Never")],
)
def test_restart_policy_comes_from_the_replica_spec(
    tmp_path: Path, policy: str, pod_policy: str
) -> None:
    worker = replica(1, restartPolicy=policy)
    worker["template"]["spec"]["restartPolicy"] = "Always"  # overwritten, as by the operator
    objs = objects(pod_stack(tmp_path, {"kubetrain:jobs": [tfjob(Worker=worker)]}))
    assert pick(objs, "Pod", "mnist-worker-0")["spec"]["restartPolicy"] == pod_policy


def test_template_labels_and_annotations_are_kept_operator_labels_win(tmp_path: Path) -> None:
    worker = replica(1)
    worker["template"]["metadata"] = {
        "labels": {"team": "a", "training.kubeflow.org/job-name": "spoof"},
        "annotations": {"note": "x"},
    }
    pod = pick(
        objects(pod_stack(tmp_path, {"kubetrain:jobs": [tfjob(Worker=worker)]})),
        "Pod",
        "mnist-worker-0",
    )
    assert pod["metadata"]["labels"]["team"] == "a"
    assert pod["metadata"]["labels"]["training.kubeflow.org/job-name"] == "mnist"
    assert pod["metadata"]["annotations"]["note"] == "x"


def test_cluster_domain_is_appended_to_hosts(tmp_path: Path) -> None:
    stack = pod_stack(
        tmp_path,
        {
            "kubetrain:clusterDomain": "cluster.local",
            "kubetrain:namespace": "ns",
            "kubetrain:jobs": [tfjob(Worker=replica(2))],
        },
    )
    job = TFTrainingJob(stack.jobs[0].job, BuildContext(stack.settings))  # type: ignore[arg-type]
    assert job.cluster_spec() == {
        "worker": [
            "mnist-worker-0.ns.svc.cluster.local:2222",
            "mnist-worker-1.ns.svc.cluster.local:2222",
        ]
    }


def test_replica_type_keys_are_case_insensitive(tmp_path: Path) -> None:
    objs = objects(
        pod_stack(
            tmp_path,
            {
                "kubetrain:jobs": [
                    tfjob(ps=replica(1), WORKER=replica(1), chief=replica(1), evaluator=replica(1))
                ]
            },
        )
    )
    assert {o["metadata"]["name"] for o in objs} == {
        "mnist-ps-0",
        "mnist-worker-0",
        "mnist-chief-0",
        "mnist-evaluator-0",
    }


def test_dynamic_worker_gets_the_sparse_cluster(tmp_path: Path) -> None:
    job = tfjob(PS=replica(1), Worker=replica(2))
    job["spec"]["enableDynamicWorker"] = True
    objs = objects(pod_stack(tmp_path, {"kubetrain:namespace": "ns", "kubetrain:jobs": [job]}))
    assert env(container(pick(objs, "Pod", "mnist-worker-1")))["TF_CONFIG"] == (
        '{"cluster":{"worker":{"1":"mnist-worker-1.ns.svc:2222"},"ps":["mnist-ps-0.ns.svc:2222"]},'
        '"task":{"type":"worker","index":1}}'
    )


def test_to_selector() -> None:
    assert to_selector({"b": "2", "a": "1"}) == "a=1,b=2"


def test_labels_and_labels_by_index(tmp_path: Path) -> None:
    stack = pod_stack(tmp_path, {"kubetrain:jobs": [tfjob(Worker=replica(2))]})
    (rs,) = TFTrainingJob(stack.jobs[0].job, BuildContext(stack.settings)).replicas  # type: ignore[arg-type]
    assert rs.labels() == {
        "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/job-name": "mnist",
        "training.kubeflow.org/replica-type": "worker",
    }
    assert rs.labels_by_index(1) == {**rs.labels(), "training.kubeflow.org/replica-index": "1"}


# --- v1alpha1 ------------------------------------------------------------------------------


def test_v1alpha1_is_converted_to_v1_and_expanded_with_v1_naming(tmp_path: Path) -> None:
    job = {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "TFJob",
        "metadata": {"name": "example-job"},
        "spec": {
            "replicaSpecs": [
                {
                    "replicas": 1,
                    "tfReplicaType": "MASTER",
                    "template": {
                        "spec": {
                            "containers": [{"name": TF, "image": "tf"}],
                            "restartPolicy": "OnFailure",
                        }
                    },
                },
                {
                    "replicas": 2,
                    "tfReplicaType": "WORKER",
                    "template": {
                        "spec": {
                            "containers": [{"name": TF, "image": "tf"}],
                            "restartPolicy": "OnFailure",
                        }
                    },
                },
                {
                    "replicas": 1,
                    "tfReplicaType": "PS",
                    "tfPort": 3333,
                    "template": {"spec": {"containers": [{"name": TF, "image": "tf"}]}},
                },
            ]
        },
    }
    objs = objects(pod_stack(tmp_path, {"kubetrain:namespace": "ns", "kubetrain:jobs": [job]}))
    master = pick(objs, "Pod", "example-job-master-0")
    assert master["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"
    assert master["spec"]["restartPolicy"] == "OnFailure"
    assert pick(objs, "Pod", "example-job-ps-0")["spec"]["restartPolicy"] == "Never"
    cluster = json.loads(env(container(master))["TF_CONFIG"])["cluster"]
    assert cluster == {
        "master": ["example-job-master-0.ns.svc:2222"],
        "ps": ["example-job-ps-0.ns.svc:3333"],
        "worker": ["example-job-worker-0.ns.svc:2222", "example-job-worker-1.ns.svc:2222"],
    }


# --- operator mode -------------------------------------------------------------------------


@needs_upstream_schemas
def test_operator_mode_emits_the_defaulted_custom_resource_valid_upstream(tmp_path: Path) -> None:
    from conftest import UPSTREAM_LOCATION

    job = tfjob(worker=replica(2))
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    (cr,) = objects(pod_stack(tmp_path, {"kubetrain:namespace": "ns", "kubetrain:jobs": [job]}))
    assert cr["apiVersion"] == "kubeflow.org/v1" and cr["kind"] == "TFJob"
    assert cr["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] == "Never"
    assert cr["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}
    assert cr["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 2222, "name": "tfjob-port"}
    ]
    # Valid against the training operator's own CRD schema (and kubetrain's generated one).
    upstream = Validator((1, 33), [UPSTREAM_LOCATION]).validate([Located(cr, "cr.yaml")])
    assert upstream.ok, upstream.results[0].findings
    assert upstream.results[0].status == "valid"
    assert Validator((1, 33)).validate([Located(cr, "cr.yaml")]).ok


def test_published_examples_render_like_the_operator(tmp_path: Path) -> None:
    """Kubeflow's dist-mnist example dropped into a new stack file."""
    from conftest import REPO

    example = yaml.safe_load((REPO / "stacks/kubeflow-examples/dist-mnist.yaml").read_text())
    objs = objects(
        pod_stack(tmp_path, {"kubetrain:namespace": "kubeflow", "kubetrain:jobs": [example]})
    )
    name = "dist-mnist-for-e2e-test"
    pods = sorted(o["metadata"]["name"] for o in objs if o["kind"] == "Pod")
    assert pods == [f"{name}-ps-0", f"{name}-ps-1"] + [f"{name}-worker-{i}" for i in range(4)]
    tf_config = json.loads(env(container(pick(objs, "Pod", f"{name}-worker-3")))["TF_CONFIG"])
    assert tf_config == {
        "cluster": {
            "ps": [f"{name}-ps-{i}.kubeflow.svc:2222" for i in range(2)],
            "worker": [f"{name}-worker-{i}.kubeflow.svc:2222" for i in range(4)],
        },
        "task": {"type": "worker", "index": 3},
        "environment": "cloud",
    }


def test_active_deadline_reaches_every_pod_in_native_mode(tmp_path: Path) -> None:
    job = tfjob(Worker=replica(2), PS=replica(1))
    job["spec"]["runPolicy"] = {"activeDeadlineSeconds": 3600}
    job["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["activeDeadlineSeconds"] = 60
    objs = objects(pod_stack(tmp_path, {"kubetrain:jobs": [job]}))
    deadlines = {
        o["metadata"]["name"]: o["spec"].get("activeDeadlineSeconds")
        for o in objs
        if o["kind"] == "Pod"
    }
    # The template's own deadline wins.
    assert deadlines == {"mnist-worker-0": 3600, "mnist-worker-1": 3600, "mnist-ps-0": 60}


def test_suspend_is_kept_in_operator_mode(tmp_path: Path) -> None:
    job = tfjob(Worker=replica(1))
    job["spec"]["runPolicy"] = {"suspend": True}
    job["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    (cr,) = objects(pod_stack(tmp_path, {"kubetrain:jobs": [job]}))
    assert cr["spec"]["runPolicy"]["suspend"] is True
