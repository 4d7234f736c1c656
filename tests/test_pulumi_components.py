"""The components and the registration machinery under Pulumi mocks: arguments, validation,
typed resources, options reaching children, outputs, the provider's construct path."""

from __future__ import annotations

import copy
import json
import re
import runpy
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

import components
import kubetrain
from components import TFJob, TFReplicaSet, deploy_stack
from components._job import _CACHE, job_args
from components._resources import register
from kubetrain.builders import BuildContext, build_job
from kubetrain.kube import catalog
from kubetrain.models import InputError, StackSettings, declaration, load_job
from kubetrain.models.tfjob import TFJob as TFJobDocument

from conftest import REPO
from helpers import stack_from
from pulumi_harness import (
    by_identity,
    expected_identity,
    nothing_but_the_stack,
    run_pulumi,
    same,
    wire,
)

WORKER_TEMPLATE = {
    "spec": {"containers": [{"name": "tensorflow", "image": "kubeflow/tf-dist-mnist-test:1.0"}]}
}


def tfjob_args(**settings: Any) -> dict[str, Any]:
    """A two-PS, three-worker TFJob in the Python (snake_case) spelling of the TypedDicts."""
    args: dict[str, Any] = {
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "tf_replica_specs": {
                "PS": {"replicas": 2, "template": copy.deepcopy(WORKER_TEMPLATE)},
                "Worker": {
                    "replicas": 3,
                    "restart_policy": "OnFailure",
                    "template": copy.deepcopy(WORKER_TEMPLATE),
                },
            },
            "run_policy": {"clean_pod_policy": "Running"},
        },
    }
    if settings:
        args["settings"] = settings
    return args


def tfjob_document(**settings: Any) -> tuple[list[dict[str, Any]], StackSettings]:
    """What the render path builds for the same job written as a document (camelCase)."""
    document = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "tfReplicaSpecs": {
                "PS": {"replicas": 2, "template": WORKER_TEMPLATE},
                "Worker": {
                    "replicas": 3,
                    "restartPolicy": "OnFailure",
                    "template": WORKER_TEMPLATE,
                },
            },
            "runPolicy": {"cleanPodPolicy": "Running"},
        },
    }
    loaded, stack_settings = load_job(document, settings=settings, file="test")
    return build_job(loaded, BuildContext(stack_settings, "pulumi")), stack_settings


# --- arguments and validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({}, id="defaults"),
        pytest.param(
            {"cluster_domain": "cluster.local", "gpu_resource": "amd.com/gpu"}, id="snake-settings"
        ),
        pytest.param(
            {"clusterDomain": "cluster.local", "kubernetesVersion": "1.31"}, id="camel-settings"
        ),
    ],
)
def test_tfjob_registers_what_the_builder_builds(settings: dict[str, Any]) -> None:
    run = run_pulumi(lambda: TFJob("ml/mnist", tfjob_args(**settings)).cluster_spec)
    expected, stack_settings = tfjob_document(**settings)
    assert by_identity(run.kubernetes_objects()) == expected_identity(expected)
    domain = f".{stack_settings.cluster_domain}" if stack_settings.cluster_domain else ""
    assert run.result == {
        "ps": [f"mnist-ps-{i}.ml.svc{domain}:2222" for i in range(2)],
        "worker": [f"mnist-worker-{i}.ml.svc{domain}:2222" for i in range(3)],
    }


def test_tfjob_children_and_outputs() -> None:
    def program() -> Any:
        job = TFJob("ml/mnist", tfjob_args())
        worker = job.replica_sets["Worker"]
        return {
            "hosts": job.service_hosts,
            "selector": job.label_selector,
            "mode": job.mode,
            "worker": [worker.replica_type, worker.pod_names, worker.hosts, worker.label_selector],
        }

    run = run_pulumi(program)
    job = run.one("kubetrain:index:TFJob", "ml/mnist")
    sets = run.of_type("kubetrain:index:TFReplicaSet")
    assert sorted(r.name for r in sets) == ["ml/mnist-ps", "ml/mnist-worker"]
    assert all(run.parent_of(r) is job for r in sets)
    for reg in run.kubernetes_objects():
        rtype = reg.plain["metadata"]["labels"]["training.kubeflow.org/replica-type"]
        assert run.parent_of(reg).name == f"ml/mnist-{rtype}"  # type: ignore[union-attr]
    assert run.result == {
        "hosts": [f"mnist-ps-{i}.ml.svc" for i in range(2)]
        + [f"mnist-worker-{i}.ml.svc" for i in range(3)],
        "selector": "training.kubeflow.org/job-name=mnist,training.kubeflow.org/operator-name=tfjob-controller",
        "mode": "native",
        "worker": [
            "Worker",
            ["mnist-worker-0", "mnist-worker-1", "mnist-worker-2"],
            [f"mnist-worker-{i}.ml.svc:2222" for i in range(3)],
            "training.kubeflow.org/job-name=mnist,training.kubeflow.org/operator-name=tfjob-controller,"
            "training.kubeflow.org/replica-type=worker",
        ],
    }
    assert run.outputs[job.urn]["labelSelector"] == run.result["selector"]


@pytest.mark.parametrize(
    "how",
    [
        pytest.param({"mode": "operator"}, id="settings"),
        pytest.param("annotation", id="annotation"),
    ],
)
def test_operator_mode_registers_the_custom_resource(how: Any) -> None:
    args = tfjob_args(**how) if isinstance(how, dict) else tfjob_args()
    if how == "annotation":
        args["metadata"]["annotations"] = {"kubetrain.io/mode": "operator"}
    run = run_pulumi(lambda: TFJob("ml/mnist", args).mode)
    assert run.result == "operator"
    assert run.of_type("kubetrain:index:TFReplicaSet") == []
    (reg,) = run.kubernetes_objects()
    assert reg.type == "kubernetes:kubeflow.org/v1:TFJob"
    assert run.parent_of(reg).type == "kubetrain:index:TFJob"  # type: ignore[union-attr]
    document = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", **args}
    loaded, settings = load_job(document, settings=document.pop("settings", None), file="t")
    assert same(reg.plain) == same(build_job(loaded, BuildContext(settings, "pulumi"))[0])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda a: a["spec"]["tf_replica_specs"]["Worker"].update(replicas=-1),
            "TFJob ml/mnist: spec.tfReplicaSpecs.Worker.replicas: must be >= 0, got -1",
            id="negative-replicas",
        ),
        pytest.param(
            lambda a: a["spec"].update(run_policy={"clean_pod_policy": "Some"}),
            "TFJob ml/mnist: spec.runPolicy.cleanPodPolicy: Input should be 'All', 'Running' or 'None', got 'Some'",
            id="bad-clean-pod-policy",
        ),
        pytest.param(
            lambda a: a["spec"].update(tf_replica_spec={}),
            "TFJob ml/mnist: spec.tf_replica_spec: unknown field 'tf_replica_spec'; did you mean 'tfReplicaSpecs'?",
            id="misspelled-field",
        ),
        pytest.param(
            lambda a: a["spec"]["tf_replica_specs"]["PS"]["template"]["spec"]["containers"][
                0
            ].update(ports=[{"containerPort": "x"}]),
            'TFJob ml/mnist: spec.tfReplicaSpecs.PS.template.spec.containers[0].ports[0].containerPort: "x" is not of type "integer"',
            id="pod-template-schema",
        ),
        pytest.param(
            lambda a: a.update(settings={"mode": "hybrid"}),
            "TFJob ml/mnist: settings.mode: Input should be 'native' or 'operator', got 'hybrid'",
            id="bad-settings",
        ),
        pytest.param(
            lambda a: a.update(settings={"credentials": {"x": {"y": "z"}}}),
            "TFJob ml/mnist: settings.credentials: not a job setting: give it to the stack",
            id="credentials-as-setting",
        ),
        pytest.param(
            lambda a: a["metadata"].update(name="m" * 60),
            "TFJob ml/mnist: metadata.name: derived Pod and Service name "
            f"{'m' * 60 + '-worker-2'!r} is 69 characters, over the 63-character limit of a DNS-1035 label; "
            "shorten metadata.name by at least 6 characters",
            id="name-too-long",
        ),
        pytest.param(
            lambda a: a["spec"]["tf_replica_specs"]["PS"].update(
                replicas=pulumi.Output.from_input(2)
            ),
            "TFJob ml/mnist: spec.tf_replica_specs.PS.replicas: needs a plain value, got an Output: "
            "kubetrain expands jobs before registering anything, so inputs cannot depend on other resources' outputs",
            id="output-input",
        ),
    ],
)
def test_bad_arguments_fail_before_anything_is_registered(change: Any, message: str) -> None:
    args = tfjob_args()
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: change(args) or TFJob("ml/mnist", args))  # type: ignore[func-returns-value]
    assert str(raised.value) == message
    assert nothing_but_the_stack(raised.value)


def test_tfreplicaset_alone_registers_its_type_only() -> None:
    run = run_pulumi(
        lambda: TFReplicaSet("ps", {"job": tfjob_args(), "replica_type": "ps"}).pod_names
    )
    assert run.result == ["mnist-ps-0", "mnist-ps-1"]
    expected, _ = tfjob_document()
    ps = [
        o for o in expected if o["metadata"]["labels"]["training.kubeflow.org/replica-type"] == "ps"
    ]
    assert by_identity(run.kubernetes_objects()) == expected_identity(ps)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"job": tfjob_args(), "replica_type": "Chief"},
            "TFReplicaSet x: replicaType: the job has no 'Chief' replicas (it has PS, Worker)",
            id="unknown-type",
        ),
        pytest.param(
            {"job": tfjob_args(mode="operator"), "replica_type": "PS"},
            "TFReplicaSet x: job: the job is in operator mode: the training operator creates its pods (use the TFJob component)",
            id="operator-mode",
        ),
    ],
)
def test_tfreplicaset_refuses(args: Any, message: str) -> None:
    with pytest.raises(InputError) as raised:
        run_pulumi(lambda: TFReplicaSet("x", args))
    assert str(raised.value) == message


def test_settings_args_are_stack_settings() -> None:
    """Every component setting is a stack setting, so the program can pass its stack's."""
    assert set(components.SettingsArgs.__annotations__) <= set(StackSettings.model_fields)


def test_job_args_round_trip(tmp_path: Any) -> None:
    """A job loaded from a stack file, passed to its component, builds the same objects."""
    stack = stack_from(
        tmp_path,
        {
            "kubetrain:namespace": "team",
            "kubetrain:clusterDomain": "example.org",
            "kubetrain:jobs": [
                {
                    "apiVersion": "kubeflow.org/v1alpha1",
                    "kind": "TFJob",
                    "metadata": {"name": "legacy"},
                    "spec": {
                        "replicaSpecs": [
                            {"tfReplicaType": "MASTER", "template": WORKER_TEMPLATE},
                            {
                                "tfReplicaType": "PS",
                                "replicas": 2,
                                "tfPort": 2230,
                                "template": WORKER_TEMPLATE,
                            },
                        ]
                    },
                }
            ],
        },
    )
    (loaded,) = stack.jobs
    run = run_pulumi(lambda: TFJob("team/legacy", job_args(loaded, stack.settings)).mode)
    expected = build_job(loaded, BuildContext(stack.settings, "pulumi"))
    assert by_identity(run.kubernetes_objects()) == expected_identity(expected)


# --- options reach the children ---------------------------------------------------------------


def test_component_options_reach_every_object() -> None:
    seen: list[str] = []

    def legacy(args: pulumi.ResourceTransformationArgs) -> None:
        seen.append(f"{args.type_}::{args.name}")

    def transform(args: pulumi.ResourceTransformArgs) -> None:
        return None

    def program() -> Any:
        provider = k8s.Provider("cluster", namespace="ignored")
        dependency = k8s.core.v1.Namespace("ml", metadata={"name": "ml"})
        opts = pulumi.ResourceOptions(
            provider=provider,
            protect=True,
            depends_on=[dependency],
            transforms=[transform],
            transformations=[legacy],
        )
        return TFJob("ml/mnist", tfjob_args(), opts).mode

    run = run_pulumi(program)
    provider = run.one("pulumi:providers:kubernetes", "cluster")
    dependency = run.one("kubernetes:core/v1:Namespace", "ml")
    job = run.one("kubetrain:index:TFJob", "ml/mnist")
    assert job.transforms == (transform,)
    objects = [r for r in run.kubernetes_objects() if r is not dependency]
    assert len(objects) == 10
    for reg in objects:
        assert reg.provider == f"{provider.urn}::{provider.urn.split('::')[-1]}-id", reg.name
        assert reg.protect, reg.name
        assert dependency.urn in reg.dependencies, reg.name
        # Transforms run in the engine, on every resource below the one that declares them.
        assert job in run.ancestors(reg), reg.name
    for reg in run.of_type("kubetrain:index:TFReplicaSet"):
        assert reg.protect and dependency.urn in reg.dependencies
    # Legacy transformations run in the SDK: they saw the component and every child.
    assert sorted(seen) == sorted(
        f"{r.type}::{r.name}" for r in run.registrations if r is job or job in run.ancestors(r)
    )


def test_providers_map_reaches_every_object() -> None:
    def program() -> Any:
        provider = k8s.Provider("other")
        return TFJob(
            "ml/mnist", tfjob_args(), pulumi.ResourceOptions(providers={"kubernetes": provider})
        ).mode

    run = run_pulumi(program)
    provider = run.one("pulumi:providers:kubernetes", "other")
    assert {r.provider for r in run.kubernetes_objects()} == {f"{provider.urn}::other-id"}


# --- registration -------------------------------------------------------------------------------

#: One manifest per kind the registration knows, with the top-level fields each kind has.
SAMPLES: list[dict[str, Any]] = list(
    yaml.safe_load_all((REPO / "tests/pulumi/kinds.yaml").read_text(encoding="utf-8"))
)


class Holder(pulumi.ComponentResource):
    def __init__(self, name: str, manifests: list[dict[str, Any]]) -> None:
        super().__init__("test:index:Holder", name, None, None)
        self.registered = register(self, manifests, where=f"Holder {name}")
        self.register_outputs({})


def test_the_built_in_kinds_builders_emit_are_covered_by_the_samples() -> None:
    """Every built-in kind the example stacks render is registered (as its typed class) in
    the samples below."""
    rendered = {
        (doc["apiVersion"], doc["kind"])
        for path in (REPO / "rendered").rglob("*.yaml")
        if path.name != "kustomization.yaml"
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and "apiVersion" in doc
    }
    built_in = {
        key for key in rendered if catalog.lookup((key[0].rpartition("/")[0], key[1])).builtin
    }
    assert ("v1", "Pod") in built_in and ("batch/v1", "Job") in built_in
    assert built_in <= {(m["apiVersion"], m["kind"]) for m in SAMPLES}


def test_every_kind_registers_field_for_field() -> None:
    run = run_pulumi(lambda: Holder("h", SAMPLES) and None)
    holder = run.one("test:index:Holder", "h")
    regs = run.kubernetes_objects()
    assert len(regs) == len(SAMPLES)
    for sample in SAMPLES:
        api, kind = sample["apiVersion"], sample["kind"]
        ns = sample["metadata"].get("namespace")
        name = f"{ns}/{sample['metadata']['name']}" if ns else sample["metadata"]["name"]
        reg = run.one(f"kubernetes:{api if '/' in api else 'core/' + api}:{kind}", name)
        assert same(reg.plain) == same(sample), kind
        assert run.parent_of(reg) is holder
    # Objects wait for the prerequisites registered with them (a Pod for its ServiceAccount).
    pod = run.one("kubernetes:core/v1:Pod", "ml/pod")
    sa = run.one("kubernetes:core/v1:ServiceAccount", "ml/sa")
    crd = run.one(
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
        "trainingjobs.paddlepaddle.org",
    )
    job = run.one("kubernetes:paddlepaddle.org/v1:TrainingJob", "ml/tj")
    assert sa.urn in pod.dependencies and crd.urn in job.dependencies
    assert pod.urn not in run.one("kubernetes:core/v1:Service", "ml/svc").dependencies


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(
            {
                "apiVersion": "example.org/v1",
                "kind": "Thing",
                "metadata": {"name": "t"},
                "data": {},
            },
            "Thing t: a custom resource is registered with metadata and spec only, got data",
            id="custom-resource-extra-field",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {},
                "statos": {},
            },
            "Pod p: Pod takes no field statos",
            id="typed-unknown-field",
        ),
    ],
)
def test_registration_refuses_what_it_cannot_pass(manifest: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        run_pulumi(lambda: Holder("h", [manifest]) and None)
    assert str(raised.value) == message


# --- objects several jobs share -----------------------------------------------------------------

SHARED_CRD = next(m for m in SAMPLES if m["kind"] == "CustomResourceDefinition")


def two_tfjobs_stack(tmp_path: Any) -> Any:
    """A stack in namespace ml with two one-worker TFJobs, a and b."""
    jobs = [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "TFJob",
            "metadata": {"name": n},
            "spec": {"tfReplicaSpecs": {"Worker": {"template": WORKER_TEMPLATE}}},
        }
        for n in ("a", "b")
    ]
    return stack_from(tmp_path, {"kubetrain:namespace": "ml", "kubetrain:jobs": jobs})


def test_objects_shared_by_jobs_are_registered_once(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object two jobs build identically is rendered once; the program registers it once,
    under the stack, and every job's objects wait for it."""
    plain = declaration(TFJobDocument).builder
    assert plain is not None

    def with_crd(job: Any, mode: str, ctx: Any) -> list[dict[str, Any]]:
        return [*plain(job, mode, ctx), copy.deepcopy(SHARED_CRD)]

    monkeypatch.setattr(declaration(TFJobDocument), "builder", with_crd)
    monkeypatch.setattr("components._job._CACHE", {})
    stack = two_tfjobs_stack(tmp_path)
    run = run_pulumi(lambda: deploy_stack(stack) and None)
    (crd,) = run.of_type("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch")
    (namespace,) = run.of_type("kubernetes:core/v1:NamespacePatch")
    for shared in (crd, namespace):
        assert run.parent_of(shared).type == "pulumi:pulumi:Stack"  # type: ignore[union-attr]
    objects = [r for r in run.kubernetes_objects() if r not in (crd, namespace)]
    assert sorted(r.name for r in objects) == [
        "ml/a-worker-0",
        "ml/a-worker-0",
        "ml/b-worker-0",
        "ml/b-worker-0",
    ]
    assert all({crd.urn, namespace.urn} <= set(r.dependencies) for r in objects)


def test_missing_credentials_stop_the_stack_before_any_job(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = declaration(TFJobDocument).builder
    assert plain is not None

    def with_secret(job: Any, mode: str, ctx: Any) -> list[dict[str, Any]]:
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{job.name}-store", "namespace": job.namespace},
            "stringData": {"KEY": {"$kubetrainCredential": {"name": job.name, "key": "key"}}},
        }
        return [*plain(job, mode, ctx), secret]

    monkeypatch.setattr(declaration(TFJobDocument), "builder", with_secret)
    monkeypatch.setattr("components._job._CACHE", {})
    stack = two_tfjobs_stack(tmp_path)
    config = {"kubetrain:credentials": json.dumps({"a": {"key": "x"}})}
    with pytest.raises(InputError) as raised:
        run_pulumi(
            lambda: deploy_stack(stack) and None,
            config=config,
            secret_keys=["kubetrain:credentials"],
        )
    assert str(raised.value) == (
        "stack test: kubetrain:credentials.b.key: is not set; set it with "
        "`pulumi config set --secret --path 'kubetrain:credentials.b.key' VALUE`"
    )
    assert nothing_but_the_stack(raised.value)
    # With both set, each job's Secret gets its own credential.
    config = {"kubetrain:credentials": json.dumps({"a": {"key": "x"}, "b": {"key": "y"}})}
    run = run_pulumi(
        lambda: deploy_stack(stack) and None, config=config, secret_keys=["kubetrain:credentials"]
    )
    secrets = {r.name: r.plain["stringData"] for r in run.of_type("kubernetes:core/v1:Secret")}
    assert secrets == {"ml/a-store": {"KEY": "x"}, "ml/b-store": {"KEY": "y"}}


def test_warnings_are_logged_once_on_the_component_or_by_the_stack(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``kubetrain render`` prints as warnings, Pulumi logs: on a component created alone
    (from Python or through the provider), or once for the stack by the program, located in
    the stack file."""
    logged: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        pulumi.log, "warn", lambda text, resource=None, **_: logged.append((text, resource))
    )
    _CACHE.clear()
    run_pulumi(lambda: TFJob("ml/mnist", tfjob_args()).mode)
    texts = [text for text, _ in logged]
    assert texts, "the job has parameter servers without a deadline: a warning"
    assert all(t.startswith("TFJob ml/mnist: spec.") and ": warning: " in t for t in texts)
    assert any("parameter servers never exit" in t for t in texts)
    assert all(isinstance(resource, TFJob) for _, resource in logged)
    assert len(texts) == len(set(texts))  # the TFReplicaSets log nothing again
    # Created by the stack program: each warning once, at the stack file's line.
    logged.clear()
    with_ps = stack_from(
        tmp_path,
        {
            "kubetrain:namespace": "ml",
            "kubetrain:jobs": [
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "TFJob",
                    "metadata": {"name": "a"},
                    "spec": {
                        "tfReplicaSpecs": {
                            "PS": {"template": WORKER_TEMPLATE},
                            "Worker": {"template": WORKER_TEMPLATE},
                        }
                    },
                }
            ],
        },
    )
    run_pulumi(lambda: deploy_stack(with_ps) and None)
    texts = [text for text, _ in logged]
    assert len(texts) == 1 and "parameter servers never exit" in texts[0]
    assert "Pulumi.test.yaml:" in texts[0].split(": ")[0]
    assert logged[0][1] is None  # the stack's, not a component's


def test_expansions_are_cached_per_arguments() -> None:
    _CACHE.clear()
    run_pulumi(lambda: TFJob("ml/mnist", tfjob_args()).mode)
    assert len(_CACHE) == 1  # the TFJob and both TFReplicaSets expanded the job once


# --- the provider -------------------------------------------------------------------------------


def test_provider_constructs_the_yaml_example() -> None:
    """The component provider's construct path (what `pulumi up` of the YAML example runs):
    camelCase properties, numbers as floats, mapped to the TypedDict and built as the render
    path builds the same TFJob document."""
    from pulumi.provider.experimental.component import ComponentProvider

    example = yaml.safe_load(
        (REPO / "provider/examples/yaml/Pulumi.yaml").read_text(encoding="utf-8")
    )
    ((name, resource),) = example["resources"].items()
    assert resource["type"] == "kubetrain:index:TFJob"
    properties = resource["properties"]
    provider = ComponentProvider(list(components.ALL_COMPONENTS), "kubetrain")

    def program() -> Any:
        result = provider.construct(
            name, resource["type"], wire(properties), pulumi.ResourceOptions()
        )
        return {k: result.state[k] for k in ("clusterSpec", "labelSelector", "mode")}

    run = run_pulumi(program)
    document = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": properties["metadata"],
        "spec": properties["spec"],
    }
    loaded, settings = load_job(document, settings=properties["settings"], file="example")
    expected = build_job(loaded, BuildContext(settings, "pulumi"))
    assert by_identity(run.kubernetes_objects()) == expected_identity(expected)
    assert run.result["mode"] == "native"
    assert run.result["clusterSpec"]["ps"] == [
        "dist-mnist-ps-0.ml-dev.svc.cluster.local:2222",
        "dist-mnist-ps-1.ml-dev.svc.cluster.local:2222",
    ]
    assert set(example["outputs"]) <= set(run.result)


def test_provider_main_hosts_every_component(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(
        "pulumi.provider.experimental.component_provider_host", lambda **kw: calls.append(kw)
    )
    runpy.run_path(str(REPO / "provider" / "__main__.py"), run_name="__main__")
    (call,) = calls
    assert call["components"] == list(components.ALL_COMPONENTS) and call["name"] == "kubetrain"
    # kubetrain's version (from its git tag), as the semantic version a Pulumi package has.
    semver = r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
    assert re.match(semver, call["version"]), call["version"]
    assert (
        call["version"].split("-")[0].split("+")[0]
        == kubetrain.__version__.split(".dev")[0].split("+")[0]
    )
    assert {c.__name__ for c in components.ALL_COMPONENTS} >= {
        c.__name__ for c in components.COMPONENTS.values()
    }
