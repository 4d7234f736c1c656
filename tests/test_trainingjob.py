"""TrainingJob (PaddlePaddle EDL) expansion against the EDL v0.2.0 controller, with its bugs fixed.

Expected values are written out by hand from the controller's parsers (see the module docstring
of kubetrain/builders/trainingjob.py), never taken from kubetrain's own output.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml

from kubetrain.builders.crd import kubeconform_schema
from kubetrain.models import InputError
from kubetrain.validate import Located, Validator

from conftest import REPO
from helpers import container, env, objects, pick, stack_from

ALPHA = "alpha.kubernetes.io/nvidia-gpu"
GPU = "nvidia.com/gpu"
#: The seed's job-1 example and EDL's own example (passes moved to spec), as published.
JOB_1, EXAMPLE = yaml.safe_load_all(
    (REPO / "tests/cases/trainingjob/edl-examples.yaml").read_text()
)


def tj(name: str = "paddle", **spec: Any) -> dict[str, Any]:
    """A minimal TrainingJob: 2 trainers and 1 pserver, not fault-tolerant."""
    body: dict[str, Any] = {
        "trainer": {
            "entrypoint": "python train.py",
            "workspace": "/workspace",
            "min-instance": 2,
            "max-instance": 2,
        },
        "pserver": {"min-instance": 1, "max-instance": 1},
    }
    for key, value in spec.items():
        if key in ("trainer", "pserver", "master"):
            body[key] = {**body.get(key, {}), **value}
        else:
            body[key] = value
    return {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name},
        "spec": body,
    }


def build(tmp_path: Path, *jobs: dict[str, Any], **config: Any) -> list[dict[str, Any]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    settings = {f"kubetrain:{k}": v for k, v in config.items()}
    settings.setdefault("kubetrain:namespace", "ml")
    return objects(stack_from(tmp_path, {**settings, "kubetrain:jobs": list(jobs)}))


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    return obj["spec"]["template"]["spec"]


def names(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objs]


def env_list(c: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(e["name"], e.get("value", e.get("valueFrom"))) for e in c["env"]]


def field_ref(path: str) -> dict[str, Any]:
    return {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}


def app(instance: str, component: str | None = None) -> dict[str, str]:
    labels = {
        "app.kubernetes.io/name": "trainingjob",
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/managed-by": "kubetrain",
    }
    if component:
        labels["app.kubernetes.io/component"] = component
    return labels


# --- the two published examples ----------------------------------------------------------------


def test_seed_job_1_renders_the_controllers_objects(tmp_path: Path) -> None:
    objs = build(tmp_path, JOB_1)
    assert names(objs) == [
        ("ServiceAccount", "job-1-edl"),
        ("Role", "job-1-edl"),
        ("RoleBinding", "job-1-edl"),
        ("ReplicaSet", "job-1-master"),
        ("ReplicaSet", "job-1-pserver"),
        ("Job", "job-1-trainer"),
    ]
    master, pserver, trainer = objs[3:]
    assert master["spec"]["replicas"] == 1
    assert pserver["spec"]["replicas"] == 3
    assert trainer["spec"]["parallelism"] == 3
    assert "completions" not in trainer["spec"]
    assert pod_spec(trainer)["restartPolicy"] == "Never"
    # hostNetwork: true and the single pull secret of the seed's example, on every pod.
    for obj in (master, pserver, trainer):
        spec = pod_spec(obj)
        assert spec["hostNetwork"] is True
        assert spec["dnsPolicy"] == "ClusterFirstWithHostNet"
        assert spec["imagePullSecrets"] == [{"name": "myregistrykey"}]
        assert spec["serviceAccountName"] == "job-1-edl"
    # The alpha GPU limit is read (the controller: from requests, so 0) and written under
    # nvidia.com/gpu with requests equal to limits.
    resources = container(trainer, "trainer")["resources"]
    assert resources == {
        "limits": {"cpu": "800m", "memory": "1Gi", GPU: "1"},
        "requests": {"cpu": "500m", "memory": "600Mi", GPU: "1"},
    }
    trainer_env = env(container(trainer, "trainer"))
    assert trainer_env["PADDLE_INIT_TRAINER_COUNT"] == "1"
    assert trainer_env["PADDLE_INIT_USE_GPU"] == "1"
    # spec.master.resources is used (the controller ignored it).
    assert container(master, "master")["resources"] == JOB_1["spec"]["master"]["resources"]


def test_edl_example_env_block_is_the_controllers_in_order(tmp_path: Path) -> None:
    objs = build(tmp_path, EXAMPLE)
    assert names(objs)[3:] == [
        ("ReplicaSet", "example-master"),
        ("ReplicaSet", "example-pserver"),
        ("Job", "example-trainer"),
    ]
    expected = [
        ("PADDLE_JOB_NAME", "example"),
        ("TRAINERS", "2"),
        ("PSERVERS", "2"),
        ("ENTRY", "python /workspace/train_ft.py"),
        ("TOPOLOGY", "python /workspace/train_ft.py"),
        ("TRAINER_PACKAGE", "/workspace"),
        ("PADDLE_INIT_PORT", "7164"),
        ("PADDLE_INIT_TRAINER_COUNT", "1"),  # 200m rounded up
        ("PADDLE_INIT_PORTS_NUM", "1"),
        ("PADDLE_INIT_PORTS_NUM_FOR_SPARSE", "1"),
        ("PADDLE_INIT_NUM_GRADIENT_SERVERS", "2"),
        ("PADDLE_INIT_NUM_PASSES", "50"),
        ("PADDLE_INIT_USE_GPU", "0"),
        ("LD_LIBRARY_PATH", "/usr/local/cuda/lib64"),
        ("NAMESPACE", field_ref("metadata.namespace")),
        ("POD_IP", field_ref("status.podIP")),
    ]
    master, pserver, trainer = objs[3:]
    assert env_list(container(pserver, "pserver")) == expected
    assert env_list(container(trainer, "trainer")) == expected
    assert env_list(container(master, "etcd")) == expected
    assert "env" not in container(master, "master")  # as with the controller


def test_edl_example_verbatim_is_rejected_naming_where_passes_belongs(tmp_path: Path) -> None:
    verbatim = copy.deepcopy(EXAMPLE)
    verbatim["spec"]["trainer"]["passes"] = verbatim["spec"].pop("passes")
    with pytest.raises(
        InputError,
        match=r"spec\.trainer\.passes: unknown field 'passes'; it belongs at spec\.passes, "
        r"not under spec\.trainer: check its indentation$",
    ):
        build(tmp_path, verbatim)


def test_labels_selectors_and_names(tmp_path: Path) -> None:
    objs = build(tmp_path, EXAMPLE)
    for name, role, label in [
        ("example-master", "master", "paddle-job-master"),
        ("example-pserver", "pserver", "paddle-job-pserver"),
        ("example-trainer", "trainer", "paddle-job"),
    ]:
        obj = next(o for o in objs if o["metadata"]["name"] == name)
        expected = {**app("example", role), label: "example"}
        assert obj["metadata"]["labels"] == expected
        assert obj["metadata"]["namespace"] == "ml"
        assert obj["spec"]["template"]["metadata"]["labels"] == expected
        if obj["kind"] == "ReplicaSet":
            # Fix: apps/v1 with kind and apiVersion the right way round, and a selector.
            assert obj["apiVersion"] == "apps/v1"
            assert obj["spec"]["selector"] == {"matchLabels": {label: "example"}}
        else:
            assert obj["apiVersion"] == "batch/v1"
            assert "selector" not in obj["spec"]  # generated by the Job controller


def test_ports(tmp_path: Path) -> None:
    objs = build(tmp_path, tj(port=9000, ports_num=2, ports_num_for_sparse=3, fault_tolerant=True))
    expected = [{"name": f"jobport-{p}", "containerPort": p} for p in range(9000, 9005)]
    assert container(pick(objs, "ReplicaSet", "paddle-pserver"), "pserver")["ports"] == expected
    assert container(pick(objs, "Job", "paddle-trainer"), "trainer")["ports"] == expected
    master = pick(objs, "ReplicaSet", "paddle-master")
    assert container(master, "master")["ports"] == [{"name": "master-port", "containerPort": 8080}]
    assert container(master, "etcd")["ports"] == [{"name": "etcd-port", "containerPort": 2379}]


def test_defaults_are_the_controllers(tmp_path: Path) -> None:
    objs = build(tmp_path, tj())
    trainer = container(pick(objs, "Job", "paddle-trainer"), "trainer")
    assert trainer["image"] == "paddlepaddle/paddlecloud-job"
    assert [p["containerPort"] for p in trainer["ports"]] == [7164, 7165]
    values = env(trainer)
    assert (values["PADDLE_INIT_PORT"], values["PADDLE_INIT_NUM_PASSES"]) == ("7164", "1")
    assert (values["PADDLE_INIT_PORTS_NUM"], values["PADDLE_INIT_PORTS_NUM_FOR_SPARSE"]) == (
        "1",
        "1",
    )


@pytest.mark.parametrize(
    ("fault_tolerant", "objects_", "pserver_cmd", "trainer_cmd"),
    [
        pytest.param(
            True,
            ["paddle-master", "paddle-pserver", "paddle-trainer"],
            ["paddle_k8s", "start_new_pserver"],
            ["paddle_k8s", "start_new_trainer"],
            id="fault-tolerant",
        ),
        pytest.param(
            False,
            ["paddle-pserver", "paddle-trainer"],
            ["paddle_k8s", "start_pserver"],
            ["paddle_k8s", "start_trainer", "v2"],
            id="not-fault-tolerant",
        ),
    ],
)
def test_fault_tolerance_decides_master_and_commands(
    tmp_path: Path,
    fault_tolerant: bool,
    objects_: list[str],
    pserver_cmd: list[str],
    trainer_cmd: list[str],
) -> None:
    objs = build(tmp_path, tj(fault_tolerant=fault_tolerant))
    workloads = [o["metadata"]["name"] for o in objs if o["kind"] in ("ReplicaSet", "Job")]
    assert workloads == objects_
    assert (
        container(pick(objs, "ReplicaSet", "paddle-pserver"), "pserver")["command"] == pserver_cmd
    )
    assert container(pick(objs, "Job", "paddle-trainer"), "trainer")["command"] == trainer_cmd


@pytest.mark.parametrize(
    "endpoint", [None, "http://etcd.infra:2379"], ids=["no-endpoint", "endpoint"]
)
def test_etcd_is_always_the_masters_sidecar(tmp_path: Path, endpoint: str | None) -> None:
    """EDL v0.2.0's parser (pkg/jobparser.go ParseToMaster) always added the etcd sidecar and
    never read etcd-endpoint, and paddle_k8s only talks to that sidecar (127.0.0.1:2379 on the
    master, $MASTER_IP:2379 elsewhere): an endpoint changes nothing, no ETCD_ENDPOINT appears."""
    master = {"etcd-endpoint": endpoint} if endpoint else {}
    objs = build(tmp_path, tj(fault_tolerant=True, master=master))
    master_rs = pick(objs, "ReplicaSet", "paddle-master")
    assert [c["name"] for c in pod_spec(master_rs)["containers"]] == ["master", "etcd"]
    for obj in objs:
        for c in pod_spec(obj)["containers"] if obj["kind"] in ("ReplicaSet", "Job") else []:
            assert "ETCD_ENDPOINT" not in env(c), (obj["metadata"]["name"], c["name"])
    assert len(env_list(container(pick(objs, "ReplicaSet", "paddle-pserver"), "pserver"))) == 16
    etcd = container(master_rs, "etcd")
    assert etcd["image"] == "quay.io/coreos/etcd:v3.2.1"
    assert etcd["command"][:3] == ["etcd", "-name", "etcd0"]
    assert "http://$(POD_IP):2379,http://$(POD_IP):4001" in etcd["command"]


@pytest.mark.parametrize(
    ("resources", "gpu_resource", "count", "use_gpu", "written"),
    [
        pytest.param({"requests": {"cpu": "200m"}}, GPU, "1", "0", None, id="cpu-200m-rounds-up"),
        pytest.param({"requests": {"cpu": "1500m"}}, GPU, "2", "0", None, id="cpu-1500m"),
        pytest.param({"requests": {"cpu": 4}}, GPU, "4", "0", None, id="cpu-number"),
        # Fix: the controller read requests only (0 here); the API server defaults requests to limits.
        pytest.param({"limits": {"cpu": "3"}}, GPU, "3", "0", None, id="cpu-limits-only"),
        pytest.param({}, GPU, "1", "0", None, id="no-cpu"),
        # Fix: GPUs in limits (the controller read requests: 0) under either name.
        pytest.param({"limits": {ALPHA: 2}}, GPU, "2", "1", {GPU: "2"}, id="alpha-in-limits"),
        pytest.param({"limits": {GPU: 4}}, GPU, "4", "1", {GPU: "4"}, id="nvidia-in-limits"),
        pytest.param(
            {"limits": {GPU: 1}, "requests": {"cpu": "8"}},
            GPU,
            "1",
            "1",
            {GPU: "1"},
            id="gpu-wins-over-cpu",
        ),
        pytest.param({"requests": {GPU: 2}}, GPU, "2", "1", {GPU: "2"}, id="gpu-in-requests-only"),
        pytest.param({"limits": {GPU: 3}}, ALPHA, "3", "1", {ALPHA: "3"}, id="written-under-alpha"),
    ],
)
def test_trainer_count_and_gpus(
    tmp_path: Path,
    resources: dict,
    gpu_resource: str,
    count: str,
    use_gpu: str,
    written: dict | None,
) -> None:
    objs = build(tmp_path, tj(trainer={"resources": resources}), gpuResource=gpu_resource)
    trainer = container(pick(objs, "Job", "paddle-trainer"), "trainer")
    assert env(trainer)["PADDLE_INIT_TRAINER_COUNT"] == count
    assert env(trainer)["PADDLE_INIT_USE_GPU"] == use_gpu
    # The pservers carry the same job-wide values.
    pserver = container(pick(objs, "ReplicaSet", "paddle-pserver"), "pserver")
    assert env(pserver)["PADDLE_INIT_TRAINER_COUNT"] == count
    if written is None:
        assert not any(
            k in (trainer.get("resources") or {}).get("limits", {}) for k in (GPU, ALPHA)
        )
    else:
        gpus = {k: v for k, v in trainer["resources"]["limits"].items() if k in (GPU, ALPHA)}
        assert gpus == written
        assert {
            k: v for k, v in trainer["resources"]["requests"].items() if k in (GPU, ALPHA)
        } == written


@pytest.mark.parametrize(
    "spelling", ["hostNetwork", "HostNetwork", "host_network"], ids=lambda s: s
)
def test_host_network_spellings(tmp_path: Path, spelling: str) -> None:
    objs = build(tmp_path, tj(fault_tolerant=True, **{spelling: True}))
    for obj in objs:
        if obj["kind"] in ("ReplicaSet", "Job"):
            assert pod_spec(obj)["hostNetwork"] is True
            assert pod_spec(obj)["dnsPolicy"] == "ClusterFirstWithHostNet"
    (cr,) = [
        o
        for o in build(tmp_path / "op", tj(**{spelling: True}), mode="operator")
        if o["kind"] == "TrainingJob"
    ]
    assert cr["spec"]["hostNetwork"] is True and "HostNetwork" not in cr["spec"]


def test_without_host_network_pods_use_the_cluster_network(tmp_path: Path) -> None:
    for obj in build(tmp_path, tj(fault_tolerant=True)):
        if obj["kind"] in ("ReplicaSet", "Job"):
            assert "hostNetwork" not in pod_spec(obj) and "dnsPolicy" not in pod_spec(obj)


def test_volumes_mounts_node_selector_and_pull_secrets(tmp_path: Path) -> None:
    volumes = [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
        {"name": "scratch", "emptyDir": {}},
    ]
    mounts = [{"name": "data", "mountPath": "/data", "readOnly": True}]
    objs = build(
        tmp_path,
        tj(
            fault_tolerant=True,
            volumes=volumes,
            volumeMounts=mounts,
            nodeSelector={"pool": "gpu"},
            imagePullSecrets=[{"name": "a"}, {"name": "b"}],
        ),
    )
    for obj in objs:
        if obj["kind"] not in ("ReplicaSet", "Job"):
            continue
        spec = pod_spec(obj)
        assert spec["volumes"] == volumes
        assert spec["nodeSelector"] == {"pool": "gpu"}
        assert spec["imagePullSecrets"] == [{"name": "a"}, {"name": "b"}]
        for c in spec["containers"]:
            # Mounted in master, pserver (fix: the controller attached but never mounted) and
            # trainer; never in the etcd sidecar.
            assert c.get("volumeMounts") == (None if c["name"] == "etcd" else mounts), c["name"]


def test_peer_discovery_rbac(tmp_path: Path) -> None:
    objs = build(tmp_path, tj())
    sa, role, binding = objs[:3]
    assert sa == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            # Admission checks it exists when a pod names it: delivered before the pods.
            "annotations": {
                "argocd.argoproj.io/sync-wave": "-1",
                "kubetrain.io/delivery-step": "prerequisites",
            },
            "name": "paddle-edl",
            "namespace": "ml",
            "labels": app("paddle"),
        },
    }
    assert role["apiVersion"] == "rbac.authorization.k8s.io/v1"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "paddle-edl",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "paddle-edl", "namespace": "ml"}
    ]
    assert all(pod_spec(o)["serviceAccountName"] == "paddle-edl" for o in objs[3:])


@pytest.mark.parametrize(
    ("master", "expected"),
    [
        pytest.param(
            {},
            {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "500Mi"}},
            id="controller-fixed-values",
        ),
        pytest.param(
            {"resources": {"limits": {"cpu": "1", "memory": "2Gi"}}},
            {"limits": {"cpu": "1", "memory": "2Gi"}},
            id="spec-master-resources",
        ),
    ],
)
def test_master_resources(tmp_path: Path, master: dict, expected: dict) -> None:
    objs = build(tmp_path, tj(fault_tolerant=True, master=master))
    assert container(pick(objs, "ReplicaSet", "paddle-master"), "master")["resources"] == expected


def test_every_native_object_is_valid_for_kubernetes(tmp_path: Path) -> None:
    objs = build(tmp_path, JOB_1, EXAMPLE, kubernetesVersion="1.31")
    report = Validator((1, 31)).validate([Located(o, f"{i}.yaml") for i, o in enumerate(objs)])
    assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]


# --- the seed's methods ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "elastic", "gpu", "need_gpu"),
    [
        pytest.param(
            {"fault_tolerant": True, "trainer": {"max-instance": 5}}, True, 0, False, id="elastic"
        ),
        pytest.param({}, False, 0, False, id="fixed"),
        pytest.param(
            {"trainer": {"resources": {"limits": {ALPHA: 2}}}}, False, 2, True, id="alpha-gpu"
        ),
        pytest.param(
            {"trainer": {"resources": {"limits": {GPU: 1}}}}, False, 1, True, id="nvidia-gpu"
        ),
        pytest.param(
            {"pserver": {"resources": {"limits": {GPU: 1}}}}, False, 0, False, id="pserver-gpu-only"
        ),
    ],
)
def test_elastic_gpu_need_gpu(
    tmp_path: Path, spec: dict, elastic: bool, gpu: int, need_gpu: bool
) -> None:
    (loaded,) = stack_from(tmp_path, {"kubetrain:jobs": [tj(**spec)]}).jobs
    job: Any = loaded.job
    assert (job.elastic(), job.gpu(), job.need_gpu()) == (elastic, gpu, need_gpu)


def test_string_is_indented_json_of_the_document(tmp_path: Path) -> None:
    (loaded,) = stack_from(tmp_path, {"kubetrain:namespace": "ns", "kubetrain:jobs": [JOB_1]}).jobs
    text = str(loaded.job)
    assert text.startswith('{\n   "apiVersion": "paddlepaddle.org/v1"')
    data = json.loads(text)
    assert data["metadata"] == {"name": "job-1", "namespace": "ns", "labels": {}, "annotations": {}}
    assert data["spec"]["imagePullSecrets"] == [{"name": "myregistrykey"}]
    assert data["spec"]["trainer"]["min-instance"] == 3


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"pserver": {"min-instance": 3, "max-instance": 2}},
            r"spec\.pserver\.min-instance: min-instance 3 is more than max-instance 2",
            id="min-over-max",
        ),
        pytest.param(
            {"trainer": {"max-instance": 4}},
            r"spec\.trainer\.max-instance: max-instance 4 must equal min-instance 2 unless fault_tolerant is true",
            id="elastic-without-fault-tolerance",
        ),
        pytest.param(
            {"port": 65535},
            r"spec\.port: port 65535 with 2 ports \(ports_num \+ ports_num_for_sparse\) runs to 65536, past 65535",
            id="ports-past-65535",
        ),
        pytest.param(
            {
                "volumes": [{"name": "a", "emptyDir": {}}],
                "VolumeMounts": [{"name": "b", "mountPath": "/b"}],
            },
            r"spec\.VolumeMounts\[0\]\.name: no volume named 'b' in spec\.volumes \(volumes: 'a'\)",
            id="mount-of-unknown-volume",
        ),
        pytest.param(
            {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]},
            r"spec\.volumes\[1\]\.name: volume 'a' is already spec\.volumes\[0\]",
            id="volume-twice",
        ),
        pytest.param(
            {"trainer": {"resources": {"requests": {"cpu": "lots"}}}},
            r"spec\.trainer\.resources\.requests\.cpu: 'lots' is not a quantity",
            id="bad-quantity",
        ),
        pytest.param(
            {"trainer": {"resources": {"limits": {GPU: "0.5"}}}},
            r"spec\.trainer\.resources\.limits\[\"nvidia\.com/gpu\"\]: GPUs are whole devices, got '0\.5'",
            id="gpu-fraction",
        ),
        pytest.param(
            {"hostNetwork": True, "HostNetwork": True},
            r"spec: hostNetwork is given 2 times \(as 'hostNetwork' and 'HostNetwork'\); give it once",
            id="host-network-twice",
        ),
        pytest.param(
            {"trainer": {"min-instance": 0, "max-instance": 0}},
            r"spec\.trainer\.min-instance: must be >= 1, got 0",
            id="zero-trainers",
        ),
        pytest.param(
            {"imagePullSecrets": [{}]},
            r"spec\.imagePullSecrets\[0\]\.name: needs the name of a Secret",
            id="pull-secret-without-name",
        ),
        pytest.param(
            {"volumes": [{"name": "a", "emptyDir": {}, "hostpath": {}}]},
            r"spec\.volumes\[0\]\.hostpath: unknown field 'hostpath'; did you mean 'hostPath'\?",
            id="volume-schema",
        ),
        pytest.param(
            {"NodeSelector": {"pool": "a b"}},
            r"spec\.NodeSelector: node selector 'pool': 'a b' is not a valid label value",
            id="node-selector-value",
        ),
        pytest.param(
            {"master": {"etcd-endpoint": "etcd:2379"}},
            r"spec\.master\.etcd-endpoint: 'etcd:2379' is not a list of etcd client URLs",
            id="etcd-endpoint-not-a-url",
        ),
    ],
)
def test_bad_specs(tmp_path: Path, spec: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        build(tmp_path, tj(**spec))


@pytest.mark.parametrize(("length", "ok"), [(55, True), (56, False)])
def test_name_budget_is_the_trainer_job_name(tmp_path: Path, length: int, ok: bool) -> None:
    name = "j" * length
    if ok:
        assert ("Job", f"{name}-trainer") in names(build(tmp_path, tj(name)))
    else:
        with pytest.raises(
            InputError,
            match=rf"derived trainer Job name '{name}-trainer' is 64 characters.*shorten metadata\.name by at least 1 characters",
        ):
            build(tmp_path, tj(name))


# --- operator mode -----------------------------------------------------------------------------


def crd_validator(crd: dict[str, Any]) -> jsonschema_rs.Validator:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return jsonschema_rs.validator_for(kubeconform_schema(schema))


def test_operator_mode_emits_the_crd_and_the_defaulted_custom_resource(tmp_path: Path) -> None:
    objs = build(tmp_path, tj(), mode="operator")
    assert names(objs) == [
        ("CustomResourceDefinition", "trainingjobs.paddlepaddle.org"),
        ("TrainingJob", "paddle"),
    ]
    crd, cr = objs
    assert cr["metadata"] == {"name": "paddle", "namespace": "ml", "labels": app("paddle")}
    assert cr["spec"] == {
        "image": "paddlepaddle/paddlecloud-job",
        "port": 7164,
        "ports_num": 1,
        "ports_num_for_sparse": 1,
        "fault_tolerant": False,
        "passes": 1,
        "hostNetwork": False,
        "trainer": {
            "entrypoint": "python train.py",
            "workspace": "/workspace",
            "min-instance": 2,
            "max-instance": 2,
        },
        "pserver": {"min-instance": 1, "max-instance": 1},
    }
    assert crd_validator(crd).is_valid(cr)


@pytest.mark.parametrize("job", [JOB_1, EXAMPLE], ids=["seed-job-1", "edl-example"])
def test_published_examples_in_operator_mode_validate_against_the_generated_crd(
    tmp_path: Path, job: dict
) -> None:
    crd, cr = build(tmp_path, job, mode="operator")
    errors = [e.message for e in crd_validator(crd).iter_errors(cr)]
    assert errors == []
    report = Validator((1, 33)).validate([Located(crd, "crd.yaml"), Located(cr, "cr.yaml")])
    assert report.ok, [r.findings for r in report.results]
    # A CR the CRD must reject: the same with passes under trainer.
    bad = copy.deepcopy(cr)
    bad["spec"]["trainer"]["passes"] = 50
    assert [e.message for e in crd_validator(crd).iter_errors(bad)] == [
        "Additional properties are not allowed ('passes' was unexpected)"
    ]


def test_operator_mode_normalises_gpus_and_quantities(tmp_path: Path) -> None:
    job = tj(trainer={"resources": {"limits": {ALPHA: 2, "cpu": 0.5}}})
    (_, cr) = build(tmp_path, job, mode="operator", gpuResource=ALPHA)
    # requests = limits under gpuResource: what lets the EDL controller (which reads the alpha
    # name from requests) count the GPUs; 0.5 becomes "0.5" (CRD quantities are int-or-string).
    assert cr["spec"]["trainer"]["resources"] == {
        "limits": {ALPHA: 2, "cpu": "0.5"},
        "requests": {ALPHA: 2},
    }


def test_mode_annotation_and_crd_shared_by_jobs(tmp_path: Path) -> None:
    operated = tj("a")
    operated["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    other = tj("b")
    other["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    objs = build(tmp_path, operated, other, tj("c"))
    kinds = [k for k, _ in names(objs)]
    assert kinds.count("CustomResourceDefinition") == 1
    assert [n for k, n in names(objs) if k == "TrainingJob"] == ["a", "b"]
    assert ("Job", "c-trainer") in names(objs) and ("Job", "a-trainer") not in names(objs)
    cr = pick(objs, "TrainingJob", "a")
    assert cr["metadata"]["annotations"] == {"kubetrain.io/mode": "operator"}


def test_golden_cases_share_one_copy_of_the_published_examples() -> None:
    native = (REPO / "tests/cases/trainingjob/edl-examples.yaml").read_text()
    assert (REPO / "tests/cases/trainingjob-operator/edl-examples.yaml").read_text() == native
