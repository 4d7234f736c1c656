"""Learner expansion against IBM FfDL's learner package (lcm/service/lcm/learner)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubetrain.builders.learner import (
    CAPABILITY_DROPS,
    LearnerImage,
    cos_options,
    get_learner_image_for_framework,
    go_path_join,
    learner_command,
    populate_learner_env_variables,
)
from kubetrain.builders.registry import BuildProblem
from kubetrain.models import InputError
from kubetrain.models.learner import Learner
from kubetrain.validate import Located, Validator

from conftest import REPO
from helpers import objects, pick, stack_from

ENDPOINT = "https://s3.us.cloud-object-storage.appdomain.cloud"

#: The issue's example, exactly as written there (comments included).
EXAMPLE = """\
apiVersion: kubetrain.io/v1alpha1
kind: Learner
metadata:
  name: mnist-learner
spec:
  trainingId: training-3fy2bq        # label value and id of the run
  userId: alice                      # optional
  learners: 2                        # number of learner pods, >= 1
  framework:
    name: tensorflow
    version: "1.15"
    imageTag: latest                 # optional
    command: python3 mnist.py --data_dir $DATA_DIR --result_dir $RESULT_DIR
  image:                             # optional private registry
    registry: us.icr.io
    namespace: ml-images
  resources:
    cpus: 2
    memory: 4Gi
    gpus: 1
    gpuType: nvidia-tesla-v100       # optional
  dataStores:
    trainingData: {type: mount_cos, bucket: mnist-data, endpoint: "https://s3.us.cloud-object-storage.appdomain.cloud", region: us-standard, path: mnist, credentials: cos-hmac}
    results: {type: mount_cos, bucket: mnist-results, endpoint: "https://s3.us.cloud-object-storage.appdomain.cloud", credentials: cos-hmac}
  env:
    MODEL_DIR: model
  imagePullSecret: regcred           # optional, default regcred
"""

STACK = {
    "kubetrain:namespace": "ml",
    "kubetrain:learnerRegistry": "docker.io/ffdl",
    "kubetrain:secretStore": {"kind": "ClusterSecretStore", "name": "vault"},
}


def example() -> dict[str, Any]:
    return yaml.safe_load(EXAMPLE)


def build(tmp_path: Path, *jobs: dict, target: str = "render", **config: Any) -> list[dict]:
    return objects(stack_from(tmp_path, {**STACK, **config, "kubetrain:jobs": list(jobs)}), target)


def learner_container(sts: dict) -> dict:
    (c,) = sts["spec"]["template"]["spec"]["containers"]
    assert c["name"] == "learner"
    return c


def env_of(sts: dict) -> list[tuple[str, Any]]:
    return [(e["name"], e.get("value", e.get("valueFrom"))) for e in learner_container(sts)["env"]]


@pytest.fixture
def example_objects(tmp_path: Path) -> list[dict]:
    return build(tmp_path, example(), **{"kubetrain:gpuTypeNodeLabel": "gpu-type"})


# --- the issue's example ---------------------------------------------------------------------


def test_example_expands_to_service_statefulset_and_external_secrets(example_objects) -> None:
    assert sorted((o["kind"], o["metadata"]["name"]) for o in example_objects) == [
        ("ExternalSecret", "cossecretdata-mnist-learner"),
        ("ExternalSecret", "cossecretresults-mnist-learner"),
        ("ExternalSecret", "regcred"),
        ("Service", "mnist-learner"),
        ("StatefulSet", "mnist-learner"),
    ]
    assert all(o["metadata"]["namespace"] == "ml" for o in example_objects)


def test_governing_service_is_headless_with_ssh_and_tf_ports(example_objects) -> None:
    service = pick(example_objects, "Service", "mnist-learner")
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": {
            "app.kubernetes.io/instance": "mnist-learner",
            "training_id": "training-3fy2bq",
        },
        "ports": [
            {"name": "ssh", "port": 22, "protocol": "TCP"},
            {"name": "tf-distributed", "port": 2222, "protocol": "TCP"},
        ],
    }


def test_statefulset_shape_labels_and_selector(example_objects) -> None:
    sts = pick(example_objects, "StatefulSet", "mnist-learner")
    assert sts["apiVersion"] == "apps/v1"
    spec = sts["spec"]
    assert spec["serviceName"] == "mnist-learner"
    assert spec["replicas"] == 2
    assert spec["revisionHistoryLimit"] == 0
    assert "podManagementPolicy" not in spec  # OrderedReady, as FfDL left it
    pod_labels = spec["template"]["metadata"]["labels"]
    assert pod_labels == {
        "training_id": "training-3fy2bq",
        "user_id": "alice",
        "app.kubernetes.io/name": "learner",
        "app.kubernetes.io/instance": "mnist-learner",
        "app.kubernetes.io/component": "learner",
        "app.kubernetes.io/managed-by": "kubetrain",
    }
    assert sts["metadata"]["labels"] == pod_labels
    selector = spec["selector"]["matchLabels"]
    assert set(selector.items()) <= set(pod_labels.items())
    # The governing service selects the same pods.
    service = pick(example_objects, "Service", "mnist-learner")
    assert set(service["spec"]["selector"].items()) <= set(pod_labels.items())


def test_pod_spec_security_scheduling_and_pull_secret(example_objects) -> None:
    pod = pick(example_objects, "StatefulSet", "mnist-learner")["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    assert pod["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "gpu-task", "effect": "NoSchedule"}
    ]
    assert pod["nodeSelector"] == {"gpu-type": "nvidia-tesla-v100"}
    c = learner_container(pick(example_objects, "StatefulSet", "mnist-learner"))
    assert c["securityContext"] == {"capabilities": {"drop": list(CAPABILITY_DROPS)}}
    assert CAPABILITY_DROPS == (
        "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETPCAP", "NET_RAW", "MKNOD", "SETFCAP",
    )  # fmt: skip
    assert c["ports"] == [
        {"name": "ssh", "containerPort": 22, "protocol": "TCP"},
        {"name": "tf-distributed", "containerPort": 2222, "protocol": "TCP"},
    ]


def test_container_image_resources_and_command(example_objects) -> None:
    c = learner_container(pick(example_objects, "StatefulSet", "mnist-learner"))
    # Private image: <registry>/<namespace>/<framework>:<version> (imageTag is not used).
    assert c["image"] == "us.icr.io/ml-images/tensorflow:1.15"
    # Quantities as the API server stores them: canonical strings (GPUs included).
    limits = {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert c["resources"] == {"limits": limits, "requests": limits}
    assert c["command"] == [
        "bash",
        "-c",
        "export LEARNER_ID=$((${DOWNWARD_API_POD_NAME##*-} + 1))\n"
        'mkdir -p "$RESULT_DIR/learner-$LEARNER_ID" "$CHECKPOINT_DIR"\n'
        "python3 mnist.py --data_dir $DATA_DIR --result_dir $RESULT_DIR",
    ]


def test_env_follows_populate_learner_env_variables(example_objects) -> None:
    sts = pick(example_objects, "StatefulSet", "mnist-learner")
    assert env_of(sts) == [
        ("DATA_DIR", "/mnt/data/mnist-data/mnist"),
        ("MODEL_DIR", "/job/model"),
        ("RESULT_DIR", "/mnt/results/mnist-results/training-3fy2bq"),
        # apiVersion v1, as the server stores the (atomic) fieldRef.
        ("DOWNWARD_API_POD_NAME", {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}),
        (
            "DOWNWARD_API_POD_NAMESPACE",
            {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}},
        ),
        ("LEARNER_NAME_PREFIX", "mnist-learner"),
        ("TRAINING_ID", "training-3fy2bq"),
        ("NUM_LEARNERS", "2"),
        ("JOB_STATE_DIR", "/job"),
        # FfDL: checkpoints at the bucket's root, RESULT_BUCKET_DIR the bucket's mount.
        ("CHECKPOINT_DIR", "/mnt/results/mnist-results/_wml_checkpoints"),
        ("RESULT_BUCKET_DIR", "/mnt/results/mnist-results"),
    ]


def test_cos_volumes_mounts_and_flex_options(example_objects) -> None:
    sts = pick(example_objects, "StatefulSet", "mnist-learner")
    volumes = {v["name"]: v for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert list(volumes) == [
        "cosinputmount-mnist-learner",
        "cosoutputmount-mnist-learner",
        "jobdata",
    ]
    data = volumes["cosinputmount-mnist-learner"]["flexVolume"]
    assert data == {
        "driver": "ibm/ibmc-s3fs",
        "secretRef": {"name": "cossecretdata-mnist-learner"},
        "readOnly": True,
        "options": {
            "bucket": "mnist-data",
            "endpoint": ENDPOINT,
            "region": "us-standard",
            "cache-size-gb": "6",
            "chunk-size-mb": "52",
            "parallel-count": "5",
            "ensure-disk-free": "2048",
            "tls-cipher-suite": "DEFAULT",
            "multireq-max": "20",
            "stat-cache-size": "100000",
            "kernel-cache": "true",
            "debug-level": "warn",
            "curl-debug": "false",
            "s3fs-fuse-retry-count": "30",
        },
    }
    results = volumes["cosoutputmount-mnist-learner"]["flexVolume"]
    # Writable: readOnly false is not written (the server drops it: omitempty).
    assert "readOnly" not in results
    assert results["secretRef"] == {"name": "cossecretresults-mnist-learner"}
    assert {k: results["options"][k] for k in ("bucket", "cache-size-gb", "parallel-count",
            "ensure-disk-free", "kernel-cache", "s3fs-fuse-retry-count")} == {
        "bucket": "mnist-results", "cache-size-gb": "0", "parallel-count": "2",
        "ensure-disk-free": "2048", "kernel-cache": "false", "s3fs-fuse-retry-count": "30",
    }  # fmt: skip
    assert all(isinstance(v, str) for v in {**data["options"], **results["options"]}.values())
    assert volumes["jobdata"] == {"name": "jobdata", "emptyDir": {}}
    assert learner_container(sts)["volumeMounts"] == [
        {
            "name": "cosinputmount-mnist-learner",
            "mountPath": "/mnt/data/mnist-data",
            "readOnly": True,
        },
        # The whole bucket (FfDL's RESULT_BUCKET_DIR); the run writes into <trainingId>.
        {"name": "cosoutputmount-mnist-learner", "mountPath": "/mnt/results/mnist-results"},
        {"name": "jobdata", "mountPath": "/job"},
    ]


def test_cos_credentials_become_external_secrets_of_type_s3fs(example_objects) -> None:
    for name in ("cossecretdata-mnist-learner", "cossecretresults-mnist-learner"):
        es = pick(example_objects, "ExternalSecret", name)
        assert es["apiVersion"] == "external-secrets.io/v1"
        assert es["spec"]["secretStoreRef"] == {"kind": "ClusterSecretStore", "name": "vault"}
        assert es["spec"]["target"]["name"] == name
        assert es["spec"]["target"]["creationPolicy"] == "Owner"
        assert es["spec"]["target"]["template"]["type"] == "ibm/ibmc-s3fs"
        assert es["spec"]["target"]["template"]["metadata"]["labels"]["training_id"] == (
            "training-3fy2bq"
        )
        assert es["spec"]["data"] == [
            {"secretKey": "access-key", "remoteRef": {"key": "cos-hmac", "property": "access-key"}},
            {"secretKey": "secret-key", "remoteRef": {"key": "cos-hmac", "property": "secret-key"}},
        ]


def test_private_image_pull_secret_is_an_external_dockerconfigjson(example_objects) -> None:
    es = pick(example_objects, "ExternalSecret", "regcred")
    assert es["spec"]["target"]["template"]["type"] == "kubernetes.io/dockerconfigjson"
    assert es["spec"]["data"] == [
        {
            "secretKey": ".dockerconfigjson",
            "remoteRef": {"key": "regcred", "property": "dockerconfigjson"},
        }
    ]


def test_example_output_is_schema_valid_for_every_supported_version(example_objects) -> None:
    for version in ((1, 25), (1, 28), (1, 33)):
        report = Validator(version).validate(Located(o, "x.yaml") for o in example_objects)
        assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]


# --- variants --------------------------------------------------------------------------------


def variant(**changes: Any) -> dict:
    """The example with ``spec`` keys replaced (``None`` removes a key)."""
    doc = example()
    for key, value in changes.items():
        if value is None:
            doc["spec"].pop(key, None)
        else:
            doc["spec"][key] = value
    return doc


def test_one_learner_still_gets_its_governing_service(tmp_path: Path) -> None:
    objs = build(tmp_path, variant(learners=1))
    assert pick(objs, "StatefulSet", "mnist-learner")["spec"]["replicas"] == 1
    assert pick(objs, "Service", "mnist-learner")["spec"]["clusterIP"] == "None"
    assert ("NUM_LEARNERS", "1") in env_of(pick(objs, "StatefulSet", "mnist-learner"))


def test_learners_default_to_one(tmp_path: Path) -> None:
    objs = build(tmp_path, variant(learners=None))
    assert pick(objs, "StatefulSet", "mnist-learner")["spec"]["replicas"] == 1


def test_host_mount_stores_are_host_paths_with_ffdl_sub_paths_and_no_secrets(
    tmp_path: Path,
) -> None:
    stores = {
        "trainingData": {"type": "host_mount", "hostPath": "/cosdata", "bucket": "mnist-data"},
        "results": {"type": "host_mount", "hostPath": "/cosresults", "bucket": "mnist-results"},
    }
    objs = build(tmp_path, variant(dataStores=stores, image=None))
    assert {o["kind"] for o in objs} == {"Service", "StatefulSet"}  # nothing secret to fetch
    sts = pick(objs, "StatefulSet", "mnist-learner")
    assert sts["spec"]["template"]["spec"]["volumes"][:2] == [
        {"name": "inputmount-mnist-learner", "hostPath": {"path": "/cosdata"}},
        {"name": "outputmount-mnist-learner", "hostPath": {"path": "/cosresults"}},
    ]
    assert learner_container(sts)["volumeMounts"][:2] == [
        {
            "name": "inputmount-mnist-learner",
            "mountPath": "/mnt/data/mnist-data",
            "subPath": "mnist-data",
            "readOnly": True,
        },
        {
            "name": "outputmount-mnist-learner",
            "mountPath": "/mnt/results/mnist-results",
            "subPath": "mnist-results",
        },
    ]
    env = dict(env_of(sts))
    assert env["DATA_DIR"] == "/mnt/data/mnist-data"
    assert env["RESULT_DIR"] == "/mnt/results/mnist-results/training-3fy2bq"


def test_no_gpus_means_no_gpu_resource_toleration_node_selector_or_cache(tmp_path: Path) -> None:
    objs = build(
        tmp_path,
        variant(resources={"cpus": 0.5, "memory": "512Mi"}),
        **{"kubetrain:gpuTypeNodeLabel": "gpu-type"},
    )
    sts = pick(objs, "StatefulSet", "mnist-learner")
    pod = sts["spec"]["template"]["spec"]
    assert "tolerations" not in pod and "nodeSelector" not in pod
    limits = {"cpu": "500m", "memory": "512Mi"}
    assert learner_container(sts)["resources"] == {"limits": limits, "requests": limits}
    options = pod["volumes"][0]["flexVolume"]["options"]
    assert (options["cache-size-gb"], options["ensure-disk-free"]) == ("0", "0")


def test_registry_image_from_stack_learner_registry(tmp_path: Path) -> None:
    objs = build(tmp_path, variant(image=None))
    sts = pick(objs, "StatefulSet", "mnist-learner")
    assert learner_container(sts)["image"] == "docker.io/ffdl/tensorflow_gpu_1.15:latest"
    # No private image: the pull secret is referenced (FfDL's platform default), not created.
    assert sts["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "regcred"}]
    assert not [o for o in objs if o["metadata"]["name"] == "regcred"]


def test_gpu_type_needs_the_stack_node_label(tmp_path: Path) -> None:
    objs = build(tmp_path, example())
    assert (
        "nodeSelector" not in pick(objs, "StatefulSet", "mnist-learner")["spec"]["template"]["spec"]
    )


def test_gpus_go_under_the_stack_gpu_resource(tmp_path: Path) -> None:
    objs = build(tmp_path, example(), **{"kubetrain:gpuResource": "amd.com/gpu"})
    resources = learner_container(pick(objs, "StatefulSet", "mnist-learner"))["resources"]
    assert resources["limits"]["amd.com/gpu"] == "1" == resources["requests"]["amd.com/gpu"]
    assert "nvidia.com/gpu" not in resources["limits"]


def test_without_stores_only_the_job_volume_and_no_dir_rewrites(tmp_path: Path) -> None:
    doc = variant(dataStores=None, image=None, env={"DATA_DIR": "data", "LOG_DIR": "/logs"})
    objs = build(tmp_path, doc)
    sts = pick(objs, "StatefulSet", "mnist-learner")
    assert sts["spec"]["template"]["spec"]["volumes"] == [{"name": "jobdata", "emptyDir": {}}]
    env = dict(env_of(sts))
    # Not mounted: every *_DIR is under /job (Go's path.Join keeps the prefix of /logs too).
    assert (env["DATA_DIR"], env["LOG_DIR"]) == ("/job/data", "/job/logs")
    assert "CHECKPOINT_DIR" not in env and "RESULT_DIR" not in env
    assert "mkdir" not in learner_container(sts)["command"][2]


def test_two_learners_share_one_pull_secret(tmp_path: Path) -> None:
    second = example()
    second["metadata"]["name"] = "other"
    second["spec"]["trainingId"] = "training-other"
    stack = stack_from(tmp_path, {**STACK, "kubetrain:jobs": [example(), second]})
    from kubetrain.builders import build_stack

    built = build_stack(stack)
    pulls = [b for b in built if b.obj["metadata"]["name"] == "regcred"]
    assert len(pulls) == 1 and pulls[0].source == "shared by the stack's jobs"


def test_pulumi_target_gives_secrets_holding_markers_not_values(tmp_path: Path) -> None:
    objs = build(tmp_path, example(), target="pulumi")
    assert not [o for o in objs if o["kind"] == "ExternalSecret"]
    secret = pick(objs, "Secret", "cossecretdata-mnist-learner")
    assert secret["type"] == "ibm/ibmc-s3fs"
    assert "data" not in secret
    assert secret["stringData"] == {
        "access-key": {"$kubetrainCredential": {"name": "cos-hmac", "key": "access-key"}},
        "secret-key": {"$kubetrainCredential": {"name": "cos-hmac", "key": "secret-key"}},
    }
    pull = pick(objs, "Secret", "regcred")
    assert pull["type"] == "kubernetes.io/dockerconfigjson"
    assert pull["stringData"] == {
        ".dockerconfigjson": {
            "$kubetrainCredential": {"name": "regcred", "key": "dockerconfigjson"}
        }
    }
    # The workloads are the same for both back ends.
    (tmp_path / "r").mkdir()
    render = build(tmp_path / "r", example())
    assert pick(objs, "StatefulSet", "mnist-learner") == pick(
        render, "StatefulSet", "mnist-learner"
    )


def test_no_credential_in_any_env_var(example_objects) -> None:
    env = dict(env_of(pick(example_objects, "StatefulSet", "mnist-learner")))
    assert not any("KEY" in n or "SECRET" in n or "PASSWORD" in n for n in env)
    assert not any("cos-hmac" in str(v) for v in env.values())


def test_operator_mode_emits_kubetrains_crd_and_the_custom_resource(tmp_path: Path) -> None:
    from kubetrain.builders.crd import kubeconform_schema
    from kubetrain.validate import Located, Validator

    doc = example()
    doc["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    crd, cr = build(tmp_path, doc)
    assert (crd["kind"], crd["metadata"]["name"]) == (
        "CustomResourceDefinition",
        "learners.kubetrain.io",
    )
    assert (cr["apiVersion"], cr["kind"], cr["metadata"]["name"]) == (
        "kubetrain.io/v1alpha1",
        "Learner",
        "mnist-learner",
    )
    # Defaults filled in, credentials named and never held.
    assert cr["spec"]["imagePullSecret"] == "regcred"
    assert cr["spec"]["dataStores"]["results"]["credentials"] == "cos-hmac"
    schema = kubeconform_schema(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    validator = jsonschema_rs.validator_for(schema)
    assert [e.message for e in validator.iter_errors(cr)] == []
    # The store union becomes one structural object; an unknown store field is still rejected.
    bad = json.loads(json.dumps(cr))
    bad["spec"]["dataStores"]["results"]["accessKey"] = "x"
    assert not validator.is_valid(bad)
    report = Validator((1, 33)).validate([Located(crd, "crd.yaml"), Located(cr, "cr.yaml")])
    assert report.ok, [r.findings for r in report.results]


# --- the seed's functions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "registry", "expected"),
    [
        pytest.param(
            LearnerImage("tensorflow", "1.15", "latest"),
            "docker.io/ffdl",
            "docker.io/ffdl/tensorflow_gpu_1.15:latest",
            id="learner-registry",
        ),
        pytest.param(
            LearnerImage("pytorch", "1.0", "v2"),
            "registry.example.com/ffdl/",
            "registry.example.com/ffdl/pytorch_gpu_1.0:v2",
            id="trailing-slash",
        ),
        pytest.param(
            LearnerImage("tensorflow", "1.15", "latest", "us.icr.io", "ml-images"),
            None,
            "us.icr.io/ml-images/tensorflow:1.15",
            id="private-version-is-tag",
        ),
        pytest.param(
            LearnerImage("caffe", "1.0", "t", "localhost:5000", "a/b"),
            "docker.io/ffdl",
            "localhost:5000/a/b/caffe:1.0",
            id="private-wins-over-registry",
        ),
    ],
)
def test_get_learner_image_for_framework(image, registry, expected) -> None:
    assert get_learner_image_for_framework(image, registry) == expected


def test_learner_image_without_registry_is_an_input_error() -> None:
    with pytest.raises(BuildProblem, match="needs kubetrain:learnerRegistry"):
        get_learner_image_for_framework(LearnerImage("tensorflow", "1.15", "latest"), None)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        (("/job", "model"), "/job/model"),
        (("/job", "/abs/dir"), "/job/abs/dir"),
        (("/mnt/data", "bucket/"), "/mnt/data/bucket"),
        (("/job", "a//b/./c"), "/job/a/b/c"),
        (("/job", ""), "/job"),
        (("/job", "a/../b"), "/job/b"),
    ],
    ids=["relative", "absolute-kept-under-prefix", "trailing-slash", "cleaned", "empty", "dotdot"],
)
def test_go_path_join(parts, expected) -> None:
    assert go_path_join(*parts) == expected


@pytest.mark.parametrize(
    ("gpus", "cache", "disk_free"),
    [(0, "0", "0"), (1, "6", "2048"), (2, "12", "4096"), (4, "24", "8192"), (5, "30", "10000")],
    ids=["cpu", "1-gpu", "2-gpus", "4-gpus", "disk-free-capped"],
)
def test_training_data_cache_grows_with_gpus(gpus: int, cache: str, disk_free: str) -> None:
    options = dict(cos_options("b", ENDPOINT, "", results=False, gpus=gpus))
    assert (options["cache-size-gb"], options["ensure-disk-free"]) == (cache, disk_free)
    assert options["region"] == "us-standard"
    results = dict(cos_options("b", ENDPOINT, "eu", results=True, gpus=gpus))
    assert (results["cache-size-gb"], results["ensure-disk-free"], results["region"]) == (
        "0",
        "2048",
        "eu",
    )


@pytest.mark.parametrize(
    ("data", "results", "expected"),
    [
        (
            True,
            True,
            {
                "DATA_DIR": "/mnt/data/d",
                "RESULT_DIR": "/mnt/results/r/t",
                "MODEL_DIR": "/job/m",
                "CHECKPOINT_DIR": "/mnt/results/r/_wml_checkpoints",
                "RESULT_BUCKET_DIR": "/mnt/results/r",
            },
        ),
        (False, False, {"DATA_DIR": "/job/d", "RESULT_DIR": "/job/r", "MODEL_DIR": "/job/m"}),
        (
            True,
            False,
            {"DATA_DIR": "/mnt/data/d", "RESULT_DIR": "/job/r", "MODEL_DIR": "/job/m"},
        ),
    ],
    ids=["both-mounted", "none-mounted", "data-only"],
)
def test_populate_env_rewrites_dirs_and_drops_what_is_not_whitelisted(
    data: bool, results: bool, expected: dict[str, str]
) -> None:
    existing = [
        {"name": "DATA_DIR", "value": "d"},
        {"name": "RESULT_DIR", "value": "r"},
        {"name": "MODEL_DIR", "value": "m"},
        {"name": "DATA_STORE_APIKEY", "value": "never passed"},
        {"name": "DLAAS_JOB_ID", "value": "t"},
    ]
    env = populate_learner_env_variables(existing, "t", 3, "sts", data, results)
    got = {e["name"]: e.get("value") for e in env}
    assert "DATA_STORE_APIKEY" not in got and "DLAAS_JOB_ID" not in got
    for name, value in expected.items():
        assert got[name] == value
    assert ("CHECKPOINT_DIR" in got) == ("RESULT_BUCKET_DIR" in got) == results
    assert got["JOB_STATE_DIR"] == "/job"
    assert (got["NUM_LEARNERS"], got["TRAINING_ID"], got["LEARNER_NAME_PREFIX"]) == (
        "3",
        "t",
        "sts",
    )


def test_learner_command_numbers_learners_from_one() -> None:
    script = learner_command("run", mount_results=False)
    assert script.splitlines() == ["export LEARNER_ID=$((${DOWNWARD_API_POD_NAME##*-} + 1))", "run"]


# --- input errors ------------------------------------------------------------------------------


def error_lines(tmp_path: Path, doc: dict, **config: Any) -> str:
    with pytest.raises(InputError) as info:
        build(tmp_path, doc, **config)
    return str(info.value)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        pytest.param(
            lambda d: d["spec"]["dataStores"]["results"].update(secretKey="x"),
            r"spec\.dataStores\.results\.secretKey: a credential value is not allowed here",
            id="secret-key-in-store",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"]["trainingData"].update(
                credentials={"access-key": "AKIA", "secret-key": "s3cr3t"}
            ),
            r"trainingData\.credentials: a credential value is not allowed in a job document.*"
            r"not a mapping",
            id="credentials-mapping",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"]["trainingData"].update(credentials="abc+/def=="),
            r"trainingData\.credentials: must name a credential of the secret store",
            id="credentials-not-a-name",
        ),
        pytest.param(
            lambda d: d["spec"]["image"].update(password="hunter2"),
            r"spec\.image\.password: a credential value is not allowed here",
            id="password-in-image",
        ),
        pytest.param(
            lambda d: d["spec"]["env"].update(COS_APIKEY="abc"),
            r"spec\.env\.COS_APIKEY: a credential value is not allowed in env",
            id="credential-env",
        ),
        pytest.param(
            lambda d: d["spec"]["env"].update(FOO="bar"),
            r"spec\.env\.FOO: 'FOO' would never reach the learner: FfDL passes only MODEL_DIR, "
            r"LOG_DIR, TRAINING_JOB, TRAINING_COMMAND, GPU_COUNT$",
            id="env-not-whitelisted",
        ),
        pytest.param(
            lambda d: d["spec"]["env"].update(DATA_DIR="x"),
            r"spec\.env\.DATA_DIR: DATA_DIR is set by kubetrain \(from spec\.dataStores\.trainingData\)",
            id="env-data-dir-with-store",
        ),
        pytest.param(
            lambda d: d["spec"]["env"].update(LEARNER_ID="1"),
            r"spec\.env\.LEARNER_ID: LEARNER_ID is set by kubetrain \(from the pod ordinal \+ 1\)",
            id="env-learner-id",
        ),
        pytest.param(
            lambda d: d["spec"]["resources"].update(gpus=0),
            r"spec\.resources\.gpuType: gpuType 'nvidia-tesla-v100' needs gpus >= 1, got gpus 0",
            id="gpu-type-without-gpus",
        ),
        pytest.param(
            lambda d: d["spec"]["resources"].update(gpus=0.5),
            r"spec\.resources\.gpus: Input should be a valid integer",
            id="fractional-gpus",
        ),
        pytest.param(
            lambda d: d["spec"]["resources"].update(cpus=0.0005),
            r"spec\.resources\.cpus: CPUs are counted in whole milli-cores \(0\.001\), got 0\.0005",
            id="sub-milli-cpus",
        ),
        pytest.param(
            lambda d: d["spec"]["resources"].update(memory="lots"),
            r"spec\.resources\.memory: must be a positive Kubernetes quantity such as 4Gi or "
            r"512Mi, got 'lots'",
            id="bad-memory",
        ),
        pytest.param(
            lambda d: d["spec"].update(learners=0),
            r"spec\.learners: must be >= 1, got 0",
            id="zero-learners",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"]["results"].update(path="x"),
            r"spec\.dataStores\.results\.path: results go to <bucket>/<trainingId>",
            id="results-path",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"]["trainingData"].update(path="../etc"),
            r"trainingData\.path: must be a relative path .* got '\.\./etc'",
            id="data-path-escapes",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"].update(
                trainingData={"type": "host_mount", "hostPath": "data", "bucket": "b"}
            ),
            r"trainingData\.hostPath: String should match pattern '\^/', got 'data'",
            id="host-path-relative",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"].update(
                trainingData={
                    "type": "host_mount",
                    "hostPath": "/d",
                    "bucket": "b",
                    "endpoint": "x",
                }
            ),
            r"trainingData\.endpoint: unknown field 'endpoint'",
            id="host-mount-with-endpoint",
        ),
        pytest.param(
            lambda d: d["spec"]["dataStores"]["results"].pop("type"),
            r"spec\.dataStores\.results: type is missing: mount_cos \(a bucket mounted with s3fs\) "
            r"or host_mount",
            id="store-without-type",
        ),
        pytest.param(
            lambda d: d["spec"]["framework"].update(version=1.15),
            r"spec\.framework\.version: quote the version, e\.g\. \"1\.30\": YAML reads it as the number 1\.15",
            id="version-number",
        ),
        pytest.param(
            lambda d: d["spec"].update(trainingId="Not a label!"),
            r"spec\.trainingId: 'Not a label!' is not a valid label value",
            id="training-id-label",
        ),
        pytest.param(
            lambda d: d["spec"]["image"].pop("namespace"),
            r"spec\.image\.namespace: required field is missing",
            id="image-without-namespace",
        ),
        pytest.param(
            lambda d: d["metadata"].update(name="l" + "x" * 52),
            r"metadata\.name: derived controller-revision-hash label value 'lx+-0000000000' is 64 "
            r"characters, over the 63-character limit of a label value; shorten metadata\.name by "
            r"at least 1 characters",
            id="name-over-52",
        ),
    ],
)
def test_bad_learners_are_input_errors_naming_the_field(tmp_path: Path, mutate, expected) -> None:
    doc = example()
    mutate(doc)
    with pytest.raises(InputError, match=expected):
        build(tmp_path, doc)


@pytest.mark.parametrize(
    ("stores", "longest"),
    [({}, 52), (None, 48)],
    ids=["no-stores-52", "cos-volume-names-48"],
)
def test_longest_name_that_fits(tmp_path: Path, stores: dict | None, longest: int) -> None:
    doc = example() if stores is None else variant(dataStores=stores)
    doc["metadata"]["name"] = "l" * longest
    assert pick(build(tmp_path, doc), "StatefulSet", "l" * longest)
    doc["metadata"]["name"] = "l" * (longest + 1)
    with pytest.raises(InputError, match=r"shorten metadata\.name by at least 1 characters"):
        build(tmp_path, doc)


def test_credential_values_are_never_repeated_in_messages(tmp_path: Path) -> None:
    doc = example()
    doc["spec"]["dataStores"]["trainingData"]["credentials"] = {"access-key": "AKIASECRETVALUE"}
    doc["spec"]["dataStores"]["results"]["credentials"] = "wJalr+XUtnFEMI/K7MDENG=="
    doc["spec"]["image"]["accessToken"] = "TOKENVALUE"
    message = error_lines(tmp_path, doc)
    assert message.count("\n") == 2  # three problems, all reported
    env_doc = example()
    env_doc["spec"]["env"]["AWS_SECRET_ACCESS_KEY"] = "ENVSECRETVALUE"
    message += error_lines(tmp_path, env_doc)
    assert "AWS_SECRET_ACCESS_KEY" in message
    for value in ("AKIASECRETVALUE", "wJalr", "ENVSECRETVALUE", "TOKENVALUE"):
        assert value not in message


def test_missing_learner_registry_is_reported_at_load(tmp_path: Path) -> None:
    doc = variant(image=None)
    with pytest.raises(InputError, match=r"spec\.framework: the learner image comes from "
                       r"kubetrain:learnerRegistry, which this stack does not set"):  # fmt: skip
        stack_from(tmp_path, {"kubetrain:jobs": [doc]})


def test_missing_secret_store_names_the_job_and_the_key(tmp_path: Path) -> None:
    stack = stack_from(
        tmp_path, {"kubetrain:learnerRegistry": "r", "kubetrain:jobs": [variant(image=None)]}
    )
    with pytest.raises(
        InputError,
        match=r"stacks/Pulumi\.test\.yaml:\d+: config\.kubetrain:jobs\[0\]\.spec\.dataStores\."
        r"trainingData\.credentials: Learner default/mnist-learner needs Secret "
        r"default/cossecretdata-mnist-learner, which render mode writes as an ExternalSecret, "
        r"but the stack does not set kubetrain:secretStore",
    ):
        objects(stack)
    # Pulumi mode reads credentials from stack config and needs no store.
    assert pick(objects(stack, "pulumi"), "Secret", "cossecretdata-mnist-learner")


def test_model_accepts_the_example_as_written() -> None:
    job = Learner.model_validate(example())
    assert job.spec.framework.image_tag == "latest"
    assert job.spec.image_pull_secret == "regcred"
    assert job.spec.resources.cpu_quantity() == "2"


def test_every_field_is_described_with_its_default() -> None:
    from pydantic import BaseModel

    from kubetrain.models import learner

    models = [
        m
        for m in vars(learner).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == learner.__name__
    ]
    assert len(models) >= 8
    for model in models:
        for name, field in model.model_fields.items():
            if name in ("api_version", "kind", "metadata", "spec"):
                continue
            text = field.description or ""
            assert "Default" in text or "Required" in text, f"{model.__name__}.{name}: {text!r}"


# --- property: every valid learner renders to schema-valid output ---------------------------------

_store = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("mount_cos"),
            "bucket": st.sampled_from(["data", "my.bucket-1"]),
            "endpoint": st.just(ENDPOINT),
            "credentials": st.sampled_from(["cos", "team/cos_hmac"]),
        },
        optional={"region": st.sampled_from(["eu-de", "us-south"])},
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("host_mount"),
            "hostPath": st.sampled_from(["/cos", "/mnt/local data"]),
            "bucket": st.just("bkt"),
        }
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    learners=st.integers(1, 8),
    gpus=st.integers(0, 8),
    cpus=st.sampled_from([0.1, 1, 2.5, 16]),
    memory=st.sampled_from(["512Mi", "4Gi", "1000000000", "1.5G"]),
    data=st.one_of(st.none(), _store),
    results=st.one_of(st.none(), _store),
    private=st.booleans(),
    user=st.one_of(st.none(), st.sampled_from(["alice", "b.o_b-1"])),
)
def test_every_valid_learner_renders_schema_valid(
    tmp_path: Path, learners, gpus, cpus, memory, data, results, private, user
) -> None:
    doc = copy.deepcopy(example())
    spec = doc["spec"]
    spec.update(learners=learners, resources={"cpus": cpus, "memory": memory, "gpus": gpus})
    spec["dataStores"] = {k: v for k, v in (("trainingData", data), ("results", results)) if v}
    if not private:
        del spec["image"]
    if user is None:
        del spec["userId"]
    else:
        spec["userId"] = user
    objs = build(tmp_path, doc)
    report = Validator((1, 33)).validate(Located(o, "x.yaml") for o in objs)
    assert report.ok, [(r.title, r.findings) for r in report.results if r.findings]
    sts = pick(objs, "StatefulSet", "mnist-learner")
    assert sts["spec"]["replicas"] == learners
    assert ("tolerations" in sts["spec"]["template"]["spec"]) == (gpus > 0)


def test_the_repository_stacks_use_a_learner() -> None:
    texts = [p.read_text() for p in (REPO / "stacks").rglob("*.yaml")]
    assert any("kind: Learner" in t for t in texts)


def test_build_problems_of_every_job_are_reported_together(tmp_path: Path) -> None:
    second = variant(image=None)
    second["metadata"]["name"] = "second"
    stack = stack_from(
        tmp_path,
        {"kubetrain:learnerRegistry": "r", "kubetrain:jobs": [variant(image=None), second]},
    )
    with pytest.raises(InputError) as info:
        objects(stack)
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert (
        "jobs[0].spec.dataStores.trainingData.credentials: Learner default/mnist-learner"
        in lines[0]
    )
    assert "jobs[1].spec.dataStores.trainingData.credentials: Learner default/second" in lines[1]


def test_service_selects_only_its_own_learners_even_with_a_shared_training_id(
    tmp_path: Path,
) -> None:
    first, second = example(), example()
    second["metadata"]["name"] = "other-learner"
    objs = build(tmp_path, first, second)
    services = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Service"}
    sets = {o["metadata"]["name"]: o for o in objs if o["kind"] == "StatefulSet"}
    for name, service in services.items():
        selector = service["spec"]["selector"].items()
        matching = [
            other
            for other, sts in sets.items()
            if selector <= sts["spec"]["template"]["metadata"]["labels"].items()
        ]
        assert matching == [name]


@pytest.mark.parametrize(("learners", "policy"), [(1, None), (3, "Parallel")])
def test_gang_scheduled_learners_start_in_parallel(tmp_path: Path, learners: int, policy) -> None:
    doc = example()
    doc["spec"]["learners"] = learners
    objs = build(tmp_path, doc, **{"kubetrain:gangScheduler": "volcano"})
    (sts,) = [o for o in objs if o["kind"] == "StatefulSet"]
    assert sts["spec"].get("podManagementPolicy") == policy
    assert [o["kind"] for o in objs].count("PodGroup") == (1 if policy else 0)
