"""The TrainingJob and LearnerStatefulSet components under Pulumi mocks: every spelling of their
arguments, what they register and under which parent, their outputs, operator mode, credentials
as secret outputs, bad arguments, options reaching every object, objects shared by jobs."""

from __future__ import annotations

import copy
import json
import typing
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

import components
from components import LearnerStatefulSet, TrainingJob, deploy_stack
from kubetrain.builders import BuildContext, build_job
from kubetrain.models import InputError, load_job
from kubetrain.models import jaxjob as jaxjob_spec
from kubetrain.models import kubeflow as kubeflow_spec
from kubetrain.models import learner as learner_spec
from kubetrain.models import mpijob as mpijob_spec
from kubetrain.models import paddlejob as paddlejob_spec
from kubetrain.models import pytorchjob as pytorchjob_spec
from kubetrain.models import tfjob as tfjob_spec
from kubetrain.models import trainingjob as trainingjob_spec
from kubetrain.models import trainjob as trainjob_spec
from kubetrain.models import xgboostjob as xgboostjob_spec
from kubetrain.models.learner import Learner as LearnerDocument
from kubetrain.models.trainingjob import TrainingJob as TrainingJobDocument

from helpers import stack_from
from pulumi_harness import (
    Run,
    by_identity,
    expected_identity,
    is_secret,
    nothing_but_the_stack,
    run_pulumi,
    walk_plain,
    wire,
    with_values,
)

# --- the arguments mirror the spec ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "models"),
    [
        pytest.param(
            components.TrainingJobSpecArgs,
            [trainingjob_spec.TrainingJobSpec],
            id="TrainingJobSpecArgs",
        ),
        pytest.param(
            components.TrainerSpecArgs, [trainingjob_spec.TrainerSpec], id="TrainerSpecArgs"
        ),
        pytest.param(
            components.PserverSpecArgs, [trainingjob_spec.PserverSpec], id="PserverSpecArgs"
        ),
        pytest.param(components.MasterSpecArgs, [trainingjob_spec.MasterSpec], id="MasterSpecArgs"),
        pytest.param(components.LearnerSpecArgs, [learner_spec.LearnerSpec], id="LearnerSpecArgs"),
        pytest.param(components.FrameworkArgs, [learner_spec.Framework], id="FrameworkArgs"),
        pytest.param(components.LearnerImageArgs, [learner_spec.Image], id="LearnerImageArgs"),
        pytest.param(
            components.LearnerResourcesArgs, [learner_spec.Resources], id="LearnerResourcesArgs"
        ),
        pytest.param(components.DataStoresArgs, [learner_spec.DataStores], id="DataStoresArgs"),
        pytest.param(
            components.DataStoreArgs,
            [learner_spec.CosStore, learner_spec.HostMountStore],
            id="DataStoreArgs",
        ),
        pytest.param(components.RunPolicyArgs, [kubeflow_spec.RunPolicy], id="RunPolicyArgs"),
        pytest.param(
            components.SchedulingPolicyArgs,
            [kubeflow_spec.SchedulingPolicy],
            id="SchedulingPolicyArgs",
        ),
        pytest.param(components.TFJobSpecArgs, [tfjob_spec.TFJobSpec], id="TFJobSpecArgs"),
        pytest.param(
            components.TFReplicaSpecArgs, [tfjob_spec.TFReplicaSpec], id="TFReplicaSpecArgs"
        ),
        pytest.param(
            components.PyTorchJobSpecArgs, [pytorchjob_spec.PyTorchJobSpec], id="PyTorchJobSpecArgs"
        ),
        pytest.param(
            components.PyTorchReplicaSpecArgs,
            [pytorchjob_spec.PyTorchReplicaSpec],
            id="PyTorchReplicaSpecArgs",
        ),
        pytest.param(
            components.ElasticPolicyArgs, [pytorchjob_spec.ElasticPolicy], id="ElasticPolicyArgs"
        ),
        pytest.param(components.RDZVConfArgs, [pytorchjob_spec.RDZVConf], id="RDZVConfArgs"),
        pytest.param(
            components.ReplicaSpecArgs,
            [xgboostjob_spec.XGBoostReplicaSpec, paddlejob_spec.PaddleReplicaSpec],
            id="ReplicaSpecArgs",
        ),
        pytest.param(
            components.XGBoostJobSpecArgs, [xgboostjob_spec.XGBoostJobSpec], id="XGBoostJobSpecArgs"
        ),
        pytest.param(
            components.PaddleJobSpecArgs, [paddlejob_spec.PaddleJobSpec], id="PaddleJobSpecArgs"
        ),
        pytest.param(
            components.PaddleElasticPolicyArgs,
            [paddlejob_spec.PaddleElasticPolicy],
            id="PaddleElasticPolicyArgs",
        ),
        pytest.param(components.JAXJobSpecArgs, [jaxjob_spec.JAXJobSpec], id="JAXJobSpecArgs"),
        pytest.param(components.MPIJobSpecArgs, [mpijob_spec.MPIJobSpec], id="MPIJobSpecArgs"),
        pytest.param(
            components.MPIReplicaSpecArgs, [mpijob_spec.MPIReplicaSpec], id="MPIReplicaSpecArgs"
        ),
        pytest.param(
            components.TrainJobSpecArgs, [trainjob_spec.TrainJobSpec], id="TrainJobSpecArgs"
        ),
        pytest.param(components.RuntimeRefArgs, [trainjob_spec.RuntimeRef], id="RuntimeRefArgs"),
        pytest.param(components.TrainerArgs, [trainjob_spec.Trainer], id="TrainerArgs"),
        pytest.param(components.InitializerArgs, [trainjob_spec.Initializer], id="InitializerArgs"),
        pytest.param(
            components.InitializerStepArgs,
            [trainjob_spec.InitializerStep],
            id="InitializerStepArgs",
        ),
        pytest.param(
            components.RuntimePatchArgs, [trainjob_spec.RuntimePatch], id="RuntimePatchArgs"
        ),
    ],
)
def test_arguments_mirror_the_spec_field_by_field(args: type, models: list[Any]) -> None:
    """Every field of the pydantic model(s) is an argument under its attribute name, and an
    argument is required exactly when every model requires it (a data store is either kind)."""
    fields = {name for model in models for name in model.model_fields}
    assert set(typing.get_type_hints(args)) == fields
    required = {
        name
        for name in fields
        if all(name in m.model_fields and m.model_fields[name].is_required() for m in models)
    }
    assert set(args.__required_keys__) == required  # type: ignore[attr-defined]


# --- one TrainingJob in three spellings ----------------------------------------------------------

#: A fault-tolerant TrainingJob using every field whose key the seed spells oddly, as a manifest
#: writes it (the render path's input).
TRAININGJOB_MANIFEST_SPEC: dict[str, Any] = {
    "image": "registry.example.com/ads/ctr:1.8",
    "port": 7200,
    "ports_num": 2,
    "ports_num_for_sparse": 1,
    "fault_tolerant": True,
    "passes": 3,
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
    "VolumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
    "imagePullSecrets": [{"name": "pull"}],
    "hostNetwork": True,
    "NodeSelector": {"node-pool": "gpu"},
    "trainer": {
        "entrypoint": "python train.py",
        "workspace": "/workspace",
        "min-instance": 2,
        "max-instance": 4,
        "resources": {"limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1}},
    },
    "pserver": {
        "min-instance": 3,
        "max-instance": 3,
        "resources": {"requests": {"cpu": "500m"}},
    },
    "master": {"etcd-endpoint": "http://etcd.infra:2379"},
}


def trainingjob_args(**settings: Any) -> dict[str, Any]:
    """The same job in the Python spelling of the TypedDicts (attribute names)."""
    spec = copy.deepcopy(TRAININGJOB_MANIFEST_SPEC)
    renamed = {
        "VolumeMounts": "volume_mounts",
        "imagePullSecrets": "image_pull_secrets",
        "hostNetwork": "host_network",
        "NodeSelector": "node_selector",
    }
    spec = {renamed.get(k, k): v for k, v in spec.items()}
    for role in ("trainer", "pserver"):
        spec[role]["min_instance"] = spec[role].pop("min-instance")
        spec[role]["max_instance"] = spec[role].pop("max-instance")
    spec["master"] = {"etcd_endpoint": spec["master"]["etcd-endpoint"]}
    args: dict[str, Any] = {"metadata": {"name": "ctr", "namespace": "ml"}, "spec": spec}
    if settings:
        args["settings"] = settings
    return args


#: The same job as Pulumi YAML (or any SDK going through the provider) writes it: the schema's
#: camelCase names.
TRAININGJOB_SCHEMA_SPEC: dict[str, Any] = {
    "image": "registry.example.com/ads/ctr:1.8",
    "port": 7200,
    "portsNum": 2,
    "portsNumForSparse": 1,
    "faultTolerant": True,
    "passes": 3,
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
    "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
    "imagePullSecrets": [{"name": "pull"}],
    "hostNetwork": True,
    "nodeSelector": {"node-pool": "gpu"},
    "trainer": {
        "entrypoint": "python train.py",
        "workspace": "/workspace",
        "minInstance": 2,
        "maxInstance": 4,
        "resources": {"limits": {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": 1}},
    },
    "pserver": {"minInstance": 3, "maxInstance": 3, "resources": {"requests": {"cpu": "500m"}}},
    "master": {"etcdEndpoint": "http://etcd.infra:2379"},
}


def rendered(
    kind: type[Any], metadata: dict[str, Any], spec: dict[str, Any], settings: dict[str, Any]
) -> list[dict[str, Any]]:
    """What the render path builds (for Pulumi) from the job written as a document."""
    document = {"apiVersion": kind.API_VERSION, "kind": kind.KIND, "metadata": metadata}
    loaded, stack_settings = load_job({**document, "spec": spec}, settings=settings, file="t")
    return build_job(loaded, BuildContext(stack_settings, "pulumi"))


def construct(type_token: str, name: str, properties: dict[str, Any]) -> Any:
    """Create a component through the provider's construct path (camelCase names, numbers as
    floats), as `pulumi up` of a program in another language does."""
    from pulumi.provider.experimental.component import ComponentProvider

    provider = ComponentProvider(list(components.ALL_COMPONENTS), "kubetrain")
    return provider.construct(name, type_token, wire(properties), pulumi.ResourceOptions()).state


def make_trainingjob(spelling: str, settings: dict[str, Any]) -> Callable[[], Any]:
    metadata = {"name": "ctr", "namespace": "ml"}
    if spelling == "python":
        return lambda: TrainingJob("ml/ctr", trainingjob_args(**settings)).mode  # type: ignore[arg-type]
    if spelling == "manifest":
        args = {"metadata": metadata, "spec": copy.deepcopy(TRAININGJOB_MANIFEST_SPEC)}
        return lambda: TrainingJob("ml/ctr", {**args, "settings": settings}).mode  # type: ignore[typeddict-item]
    properties = {"metadata": metadata, "spec": TRAININGJOB_SCHEMA_SPEC, "settings": settings}
    return lambda: construct("kubetrain:index:TrainingJob", "ml/ctr", properties)["mode"]


SPELLINGS = [
    pytest.param("python", id="python-attribute-names"),
    pytest.param("manifest", id="manifest-keys"),
    pytest.param("provider", id="provider-camel-case"),
]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({}, id="defaults"),
        pytest.param({"gpuResource": "alpha.kubernetes.io/nvidia-gpu"}, id="alpha-gpus"),
    ],
)
def test_trainingjob_registers_what_the_builder_builds(
    spelling: str, settings: dict[str, Any]
) -> None:
    run = run_pulumi(make_trainingjob(spelling, settings))
    assert run.result == "native"
    expected = rendered(
        TrainingJobDocument, {"name": "ctr", "namespace": "ml"}, TRAININGJOB_MANIFEST_SPEC, settings
    )
    assert by_identity(run.kubernetes_objects()) == expected_identity(expected)
    # Every odd key reached the objects (a key the mapping lost would change them).
    trainer = next(r.plain for r in run.kubernetes_objects() if r.plain["kind"] == "Job")
    pod = trainer["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node-pool": "gpu"} and pod["hostNetwork"] is True
    (container,) = pod["containers"]
    assert container["volumeMounts"] == [{"mountPath": "/data", "name": "data", "readOnly": True}]
    assert len(container["ports"]) == 3
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert "ETCD_ENDPOINT" not in env and env["TRAINERS"] == "2"


def parents(run: Run, component: str) -> set[str]:
    """(type) of the parent of every Kubernetes object."""
    out = set()
    for reg in run.kubernetes_objects():
        parent = run.parent_of(reg)
        assert parent is not None, reg.name
        out.add(f"{parent.type}::{parent.name}")
    return out


@pytest.mark.parametrize(
    ("fault_tolerant", "kinds", "selectors"),
    [
        pytest.param(
            True,
            ["Job", "ReplicaSet", "ReplicaSet", "Role", "RoleBinding", "ServiceAccount"],
            {
                "master": "paddle-job-master=ctr",
                "pserver": "paddle-job-pserver=ctr",
                "trainer": "paddle-job=ctr",
            },
            id="fault-tolerant",
        ),
        pytest.param(
            False,
            ["Job", "ReplicaSet", "Role", "RoleBinding", "ServiceAccount"],
            {"pserver": "paddle-job-pserver=ctr", "trainer": "paddle-job=ctr"},
            id="no-master",
        ),
    ],
)
def test_trainingjob_children_and_outputs(
    fault_tolerant: bool, kinds: list[str], selectors: dict[str, str]
) -> None:
    args = trainingjob_args()
    args["spec"]["fault_tolerant"] = fault_tolerant
    args["spec"]["trainer"]["max_instance"] = 4 if fault_tolerant else 2

    def program() -> Any:
        job = TrainingJob("ml/ctr", args)  # type: ignore[arg-type]
        return {
            "selector": job.label_selector,
            "selectors": job.label_selectors,
            "mode": job.mode,
            "counts": [job.trainers, job.max_trainers, job.pservers],
        }

    run = run_pulumi(program)
    job = run.one("kubetrain:index:TrainingJob", "ml/ctr")
    assert sorted(r.plain["kind"] for r in run.kubernetes_objects()) == kinds
    assert all(run.parent_of(r) is job for r in run.kubernetes_objects())
    assert run.result == {
        "selector": "paddle-job=ctr",
        "selectors": selectors,
        "mode": "native",
        "counts": [2, 4 if fault_tolerant else 2, 3],
    }
    assert run.outputs[job.urn]["labelSelectors"] == selectors
    # Each selector selects its role's pods, and only them.
    templates = {
        r.plain["metadata"]["name"].removeprefix("ctr-"): r.plain["spec"]["template"]["metadata"][
            "labels"
        ]
        for r in run.kubernetes_objects()
        if r.plain["kind"] in ("Job", "ReplicaSet")
    }
    assert sorted(templates) == sorted(selectors)
    for role, selector in selectors.items():
        key, value = selector.split("=")
        assert [r for r, labels in templates.items() if labels.get(key) == value] == [role]
    # The objects wait for the ServiceAccount and Role the pods use.
    account = run.one("kubernetes:core/v1:ServiceAccount", "ml/ctr-edl")
    trainer = run.one("kubernetes:batch/v1:Job", "ml/ctr-trainer")
    assert account.urn in trainer.dependencies


@pytest.mark.parametrize(
    "how",
    [
        pytest.param({"mode": "operator"}, id="settings"),
        pytest.param("annotation", id="annotation"),
    ],
)
def test_trainingjob_operator_mode_registers_the_crd_and_the_custom_resource(how: Any) -> None:
    args = trainingjob_args(**how) if isinstance(how, dict) else trainingjob_args()
    if how == "annotation":
        args["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}

    def program() -> Any:
        job = TrainingJob("ml/ctr", args)  # type: ignore[arg-type]
        return [job.mode, job.label_selectors]

    run = run_pulumi(program)
    mode, selectors = run.result
    assert mode == "operator"
    # The EDL controller labels its pods like kubetrain's native pods: the selectors hold.
    assert selectors["trainer"] == "paddle-job=ctr" and "master" in selectors
    crd = run.one(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
        "trainingjobs.paddlepaddle.org",
    )
    resource = run.one("kubernetes:paddlepaddle.org/v1:TrainingJob", "ml/ctr")
    assert len(run.kubernetes_objects()) == 2
    job = run.one("kubetrain:index:TrainingJob", "ml/ctr")
    assert run.parent_of(crd) is job and run.parent_of(resource) is job
    assert crd.urn in resource.dependencies
    document = {"apiVersion": "paddlepaddle.org/v1", "kind": "TrainingJob", **args}
    loaded, settings = load_job(document, settings=document.pop("settings", None), file="t")
    expected = build_job(loaded, BuildContext(settings, "pulumi"))
    assert by_identity(run.kubernetes_objects()) == expected_identity(expected)
    # The custom resource holds the seed's keys, whatever spelling the arguments used.
    spec = resource.plain["spec"]
    assert spec["trainer"]["min-instance"] == 2 and spec["VolumeMounts"]
    assert spec["master"]["etcd-endpoint"] == "http://etcd.infra:2379"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda s: s["pserver"].update(min_instance=4),
            "TrainingJob ml/ctr: spec.pserver.min-instance: min-instance 4 is more than "
            "max-instance 3",
            id="pserver-min-over-max",
        ),
        pytest.param(
            lambda s: s.update(fault_tolerant=False),
            "TrainingJob ml/ctr: spec.trainer.max-instance: max-instance 4 must equal "
            "min-instance 2 unless fault_tolerant is true (only a fault-tolerant job is elastic)",
            id="elastic-without-fault-tolerance",
        ),
        pytest.param(
            lambda s: s["master"].update(etcd_endpoint="etcd:2379"),
            "TrainingJob ml/ctr: spec.master.etcd-endpoint: 'etcd:2379' is not a list of etcd "
            "client URLs, e.g. http://etcd.infra:2379 or https://a:2379,https://b:2379",
            id="bad-etcd-endpoint",
        ),
        pytest.param(
            lambda s: s["trainer"].update(passes=50),
            "TrainingJob ml/ctr: spec.trainer.passes: unknown field 'passes'; it belongs at "
            "spec.passes, not under spec.trainer: check its indentation",
            id="misplaced-field",
        ),
        pytest.param(
            lambda s: s.update(volume_mounts=[{"name": "data", "mountPath": 1}]),
            'TrainingJob ml/ctr: spec.VolumeMounts[0].mountPath: 1 is not of type "string"',
            id="embedded-kubernetes-type",
        ),
    ],
)
def test_trainingjob_bad_arguments_fail_before_anything_is_registered(
    change: Callable[[dict[str, Any]], Any], message: str
) -> None:
    args = trainingjob_args()
    change(args["spec"])
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: TrainingJob("ml/ctr", args))  # type: ignore[arg-type]
    assert str(raised.value) == message
    assert nothing_but_the_stack(raised.value)


# --- one Learner in three spellings ---------------------------------------------------------------

#: A three-learner run with a private image, a host_mount training-data store and a mount_cos
#: results store, as a Learner document writes it (its keys are camelCase, like the schema's).
LEARNER_DOCUMENT_SPEC: dict[str, Any] = {
    "trainingId": "training-abc",
    "userId": "alice",
    "learners": 3,
    "framework": {
        "name": "tensorflow",
        "version": "1.15",
        "imageTag": "py3",
        "command": "python3 train.py",
    },
    "image": {"registry": "us.icr.io", "namespace": "ml-images"},
    "resources": {"cpus": 0.5, "memory": "2Gi", "gpus": 1, "gpuType": "nvidia-tesla-v100"},
    "dataStores": {
        "trainingData": {
            "type": "host_mount",
            "hostPath": "/mnt/nfs",
            "bucket": "mnist-data",
            "path": "mnist",
        },
        "results": {
            "type": "mount_cos",
            "bucket": "mnist-results",
            "endpoint": "https://s3.example.org",
            "region": "eu-de",
            "credentials": "cos-hmac",
        },
    },
    "env": {"MODEL_DIR": "model"},
    "imagePullSecret": "ml-pull",
}
LEARNER_SETTINGS = {
    "learnerRegistry": "docker.io/ffdl",
    "gpuTypeNodeLabel": "ibm-cloud.kubernetes.io/gpu-type",
}


def learner_args(**settings: Any) -> dict[str, Any]:
    """The same learner in the Python spelling of the TypedDicts (attribute names)."""
    spec = copy.deepcopy(LEARNER_DOCUMENT_SPEC)
    return {
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "training_id": spec["trainingId"],
            "user_id": spec["userId"],
            "learners": 3,
            "framework": {
                "name": "tensorflow",
                "version": "1.15",
                "image_tag": "py3",
                "command": "python3 train.py",
            },
            "image": spec["image"],
            "resources": {"cpus": 0.5, "memory": "2Gi", "gpus": 1, "gpu_type": "nvidia-tesla-v100"},
            "data_stores": {
                "training_data": {
                    "type": "host_mount",
                    "host_path": "/mnt/nfs",
                    "bucket": "mnist-data",
                    "path": "mnist",
                },
                "results": spec["dataStores"]["results"],
            },
            "env": spec["env"],
            "image_pull_secret": "ml-pull",
        },
        "settings": {
            "learner_registry": "docker.io/ffdl",
            "gpu_type_node_label": "ibm-cloud.kubernetes.io/gpu-type",
            **settings,
        },
    }


#: Values made up for the credentials the learner names; none may ever be plain.
CREDENTIALS = {
    "cos-hmac": {"access-key": "AKIA-NOT-REAL", "secret-key": "s3cr3t-Value"},
    "ml-pull": {"dockerconfigjson": '{"auths": {"us.icr.io": {"auth": "cHVsbC1zM2NyM3Q="}}}'},
}
PLAINTEXT = {v for keys in CREDENTIALS.values() for v in keys.values()}


def credentials_config(value: Any = CREDENTIALS) -> dict[str, Any]:
    return {
        "config": {"kubetrain:credentials": json.dumps(value)},
        "secret_keys": ["kubetrain:credentials"],
    }


def make_learner(spelling: str, settings: dict[str, Any]) -> Callable[[], Any]:
    metadata = {"name": "mnist", "namespace": "ml"}
    camel = {**LEARNER_SETTINGS, **settings}
    if spelling == "python":
        snake = {"cluster_domain": settings["clusterDomain"]} if settings else {}
        return lambda: LearnerStatefulSet("ml/mnist", learner_args(**snake)).mode  # type: ignore[arg-type]
    if spelling == "manifest":
        args = {"metadata": metadata, "spec": copy.deepcopy(LEARNER_DOCUMENT_SPEC)}
        return lambda: LearnerStatefulSet("ml/mnist", {**args, "settings": camel}).mode  # type: ignore[typeddict-item]
    properties = {"metadata": metadata, "spec": LEARNER_DOCUMENT_SPEC, "settings": camel}
    return lambda: construct("kubetrain:index:LearnerStatefulSet", "ml/mnist", properties)["mode"]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize(
    "settings",
    [pytest.param({}, id="defaults"), pytest.param({"clusterDomain": "example.org"}, id="domain")],
)
def test_learner_registers_what_the_builder_builds(spelling: str, settings: dict[str, Any]) -> None:
    run = run_pulumi(make_learner(spelling, settings), **credentials_config())
    assert run.result == "native"
    metadata = {"name": "mnist", "namespace": "ml"}
    expected = rendered(
        LearnerDocument, metadata, LEARNER_DOCUMENT_SPEC, {**LEARNER_SETTINGS, **settings}
    )
    assert by_identity(run.kubernetes_objects()) == expected_identity(
        [with_values(o, CREDENTIALS) for o in expected]
    )
    assert sorted(r.plain["kind"] for r in run.kubernetes_objects()) == [
        "Secret",
        "Secret",
        "Service",
        "StatefulSet",
    ]
    # The host_mount store (hostPath in the document, host_path in Python) reached the pods.
    statefulset = run.one("kubernetes:apps/v1:StatefulSet", "ml/mnist")
    volumes = statefulset.plain["spec"]["template"]["spec"]["volumes"]
    assert {"name": "inputmount-mnist", "hostPath": {"path": "/mnt/nfs"}} in volumes


@pytest.mark.parametrize(
    ("settings", "hosts"),
    [
        pytest.param({}, [f"mnist-{i}.mnist.ml.svc" for i in range(3)], id="no-domain"),
        pytest.param(
            {"cluster_domain": "cluster.local"},
            [f"mnist-{i}.mnist.ml.svc.cluster.local" for i in range(3)],
            id="cluster-domain",
        ),
    ],
)
def test_learner_children_and_outputs(settings: dict[str, Any], hosts: list[str]) -> None:
    def program() -> Any:
        learner = LearnerStatefulSet("ml/mnist", learner_args(**settings))  # type: ignore[arg-type]
        return [learner.label_selector, learner.service_hosts, learner.mode]

    run = run_pulumi(program, **credentials_config())
    component = run.one("kubetrain:index:LearnerStatefulSet", "ml/mnist")
    assert all(run.parent_of(r) is component for r in run.kubernetes_objects())
    selector, service_hosts, mode = run.result
    assert selector == "app.kubernetes.io/instance=mnist,training_id=training-abc"
    assert service_hosts == hosts and mode == "native"
    assert run.outputs[component.urn] == {
        "labelSelector": selector,
        "serviceHosts": hosts,
        "mode": "native",
    }
    # The selector is the StatefulSet's, and the pods are named after the governing Service.
    statefulset = run.one("kubernetes:apps/v1:StatefulSet", "ml/mnist").plain
    match = statefulset["spec"]["selector"]["matchLabels"]
    assert selector == ",".join(f"{k}={match[k]}" for k in sorted(match))
    service = run.one("kubernetes:core/v1:Service", "ml/mnist").plain
    assert statefulset["spec"]["serviceName"] == service["metadata"]["name"] == "mnist"
    assert service["spec"]["clusterIP"] == "None"
    assert [h.split(".")[0] for h in hosts] == [
        f"mnist-{i}" for i in range(int(statefulset["spec"]["replicas"]))
    ]


def test_learner_credentials_are_secret_outputs_only() -> None:
    """The COS HMAC keys and the pull Secret's docker config reach the Secrets as secret outputs
    and are plain nowhere: no input outside a secret, no output of any resource."""
    run = run_pulumi(
        lambda: LearnerStatefulSet("ml/mnist", learner_args()).mode,  # type: ignore[arg-type]
        **credentials_config(),
    )
    secrets = {r.name: r for r in run.of_type("kubernetes:core/v1:Secret")}
    assert sorted(secrets) == ["ml/cossecretresults-mnist", "ml/ml-pull"]
    for reg in secrets.values():
        assert is_secret(reg.inputs["stringData"]), reg.name
    assert secrets["ml/cossecretresults-mnist"].plain["stringData"] == CREDENTIALS["cos-hmac"]
    assert secrets["ml/ml-pull"].plain["stringData"] == {
        ".dockerconfigjson": CREDENTIALS["ml-pull"]["dockerconfigjson"]
    }
    for reg in run.registrations:
        for path, value in walk_plain(reg.inputs):
            assert value not in PLAINTEXT, (reg.type, reg.name, path)
    for urn, outputs in run.outputs.items():
        assert not any(v in PLAINTEXT for _, v in walk_plain(outputs)), urn
        text = json.dumps(outputs, default=str)
        assert not any(s in text for s in ("AKIA-NOT-REAL", "s3cr3t-Value", "cHVsbC1zM2NyM3Q")), urn
    # The StatefulSet waits for the Secrets its pods mount and pull with.
    statefulset = run.one("kubernetes:apps/v1:StatefulSet", "ml/mnist")
    assert {r.urn for r in secrets.values()} <= set(statefulset.dependencies)


def test_learner_without_its_credentials_registers_nothing() -> None:
    config = credentials_config({"cos-hmac": {"access-key": "a"}})
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: LearnerStatefulSet("ml/mnist", learner_args()).mode, **config)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "LearnerStatefulSet ml/mnist: kubetrain:credentials.cos-hmac.secret-key: is not set; "
        "set it with `pulumi config set --secret --path "
        "'kubetrain:credentials.cos-hmac.secret-key' VALUE`\n"
        "LearnerStatefulSet ml/mnist: kubetrain:credentials.ml-pull.dockerconfigjson: is not "
        "set; set it with `pulumi config set --secret --path "
        "'kubetrain:credentials.ml-pull.dockerconfigjson' VALUE`"
    )
    assert all(not r.is_kubernetes_object for r in raised.value.pulumi_run.registrations)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "how",
    [
        pytest.param({"mode": "operator"}, id="settings"),
        pytest.param("annotation", id="annotation"),
    ],
)
def test_learner_operator_mode_is_the_render_paths(how: Any) -> None:
    """In operator mode the component does what the render path does with the same document:
    fail with the same problem, registering nothing, or register the objects it builds."""
    args = learner_args(**how) if isinstance(how, dict) else learner_args()
    if how == "annotation":
        args["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    where = "LearnerStatefulSet ml/mnist"
    document = {"apiVersion": LearnerDocument.API_VERSION, "kind": "Learner", **args}
    try:
        loaded, settings = load_job(document, settings=document.pop("settings"), file=where)
        expected = build_job(loaded, BuildContext(settings, "pulumi"))
    except InputError as exc:
        with pytest.raises(InputError) as raised:
            run_pulumi(lambda: LearnerStatefulSet("ml/mnist", args), **credentials_config())  # type: ignore[arg-type]
        assert str(raised.value) == str(exc)
        assert "operator mode" in str(exc)
        assert nothing_but_the_stack(raised.value)
    else:
        run = run_pulumi(
            lambda: LearnerStatefulSet("ml/mnist", args).mode,  # type: ignore[arg-type]
            **credentials_config(),
        )
        assert run.result == "operator"
        assert by_identity(run.kubernetes_objects()) == expected_identity(
            [with_values(o, CREDENTIALS) for o in expected]
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda s: s["data_stores"]["training_data"].update(host_path="nfs"),
            "LearnerStatefulSet ml/mnist: spec.dataStores.trainingData.hostPath: String should "
            "match pattern '^/', got 'nfs'",
            id="relative-host-path",
        ),
        pytest.param(
            lambda s: s["data_stores"]["results"].pop("credentials"),
            "LearnerStatefulSet ml/mnist: spec.dataStores.results.credentials: required field "
            "is missing",
            id="cos-store-without-credentials",
        ),
        pytest.param(
            lambda s: s["data_stores"]["results"].update(type="s3"),
            "LearnerStatefulSet ml/mnist: spec.dataStores.results: type must be "
            "mount_cos or host_mount, got 's3'",
            id="unknown-store-type",
        ),
        pytest.param(
            lambda s: s.update(learners=0),
            "LearnerStatefulSet ml/mnist: spec.learners: must be >= 1, got 0",
            id="no-learners",
        ),
        pytest.param(
            lambda s: s["resources"].update(cpus=0.0005),
            "LearnerStatefulSet ml/mnist: spec.resources.cpus: CPUs are counted in whole "
            "milli-cores (0.001), got 0.0005",
            id="fractional-milli-cpu",
        ),
    ],
)
def test_learner_bad_arguments_fail_before_anything_is_registered(
    change: Callable[[dict[str, Any]], Any], message: str
) -> None:
    args = learner_args()
    change(args["spec"])
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: LearnerStatefulSet("ml/mnist", args), **credentials_config())  # type: ignore[arg-type]
    assert str(raised.value) == message
    assert nothing_but_the_stack(raised.value)


# --- options and shared objects, both components ---------------------------------------------------

COMPONENTS = [
    pytest.param(lambda opts: TrainingJob("ml/ctr", trainingjob_args(), opts), 6, id="TrainingJob"),  # type: ignore[arg-type]
    pytest.param(
        lambda opts: LearnerStatefulSet("ml/mnist", learner_args(), opts),  # type: ignore[arg-type]
        4,
        id="LearnerStatefulSet",
    ),
]


@pytest.mark.parametrize(("create", "count"), COMPONENTS)
def test_component_options_reach_every_object(
    create: Callable[[pulumi.ResourceOptions], pulumi.ComponentResource], count: int
) -> None:
    seen: list[str] = []

    def legacy(args: pulumi.ResourceTransformationArgs) -> None:
        seen.append(f"{args.type_}::{args.name}")

    def transform(args: pulumi.ResourceTransformArgs) -> None:
        return None

    def program() -> Any:
        provider = k8s.Provider("cluster")
        dependency = k8s.core.v1.Namespace("ml", metadata={"name": "ml"})
        opts = pulumi.ResourceOptions(
            provider=provider,
            protect=True,
            depends_on=[dependency],
            transforms=[transform],
            transformations=[legacy],
        )
        return create(opts).urn

    run = run_pulumi(program, **credentials_config())
    provider = run.one("pulumi:providers:kubernetes", "cluster")
    dependency = run.one("kubernetes:core/v1:Namespace", "ml")
    (component,) = [r for r in run.registrations if r.type.startswith("kubetrain:")]
    assert component.transforms == (transform,)
    objects = [r for r in run.kubernetes_objects() if r is not dependency]
    assert len(objects) == count
    for reg in objects:
        assert reg.provider == f"{provider.urn}::cluster-id", reg.name
        assert reg.protect, reg.name
        assert dependency.urn in reg.dependencies, reg.name
        assert run.parent_of(reg) is component, reg.name
    assert sorted(seen) == sorted(
        f"{r.type}::{r.name}" for r in run.registrations if r is component or r in objects
    )


def test_objects_several_jobs_share_are_registered_once(tmp_path: Any) -> None:
    """Two operator-mode TrainingJobs share the CRD and two Learners the pull Secret: the stack
    program registers each once, under the stack, and the jobs' objects wait for it."""
    paddle = {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "spec": {
            "trainer": {"entrypoint": "python t.py", "workspace": "/w"}
            | {"min-instance": 1, "max-instance": 1},
            "pserver": {"min-instance": 1, "max-instance": 1},
        },
    }
    learner = {
        "apiVersion": "kubetrain.io/v1alpha1",
        "kind": "Learner",
        "spec": {
            "trainingId": "t",
            "framework": {"name": "tensorflow", "version": "1.15", "command": "python3 t.py"},
            "image": {"registry": "us.icr.io", "namespace": "ml-images"},
        },
    }
    operator = {"annotations": {"kubetrain.io/mode": "operator"}}
    jobs = [
        {**paddle, "metadata": {"name": "a", **operator}},
        {**paddle, "metadata": {"name": "b", **operator}},
        {**learner, "metadata": {"name": "c"}},
        {**learner, "metadata": {"name": "d"}},
    ]
    stack = stack_from(tmp_path, {"kubetrain:namespace": "ml", "kubetrain:jobs": jobs})
    run = run_pulumi(
        lambda: deploy_stack(stack) and None,
        **credentials_config({"regcred": {"dockerconfigjson": '{"auths": {}}'}}),
    )
    crd = run.one(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
        "trainingjobs.paddlepaddle.org",
    )
    pull = run.one("kubernetes:core/v1:Secret", "ml/regcred")
    namespace = run.one("kubernetes:core/v1:NamespacePatch", "ml")
    for shared in (crd, pull, namespace):
        assert run.parent_of(shared).type == "pulumi:pulumi:Stack"  # type: ignore[union-attr]
    by_parent: dict[str, list[str]] = {}
    for reg in run.kubernetes_objects():
        if reg not in (crd, pull, namespace):
            assert {crd.urn, pull.urn, namespace.urn} <= set(reg.dependencies), reg.name
            by_parent.setdefault(run.parent_of(reg).name, []).append(reg.name)  # type: ignore[union-attr]
    assert by_parent == {
        "ml/a": ["ml/a"],
        "ml/b": ["ml/b"],
        "ml/c": ["ml/c", "ml/c"],
        "ml/d": ["ml/d", "ml/d"],
    }
