"""The XGBoostJob, PaddleJob and JAXJob components under Pulumi mocks: each registers exactly
what its builder builds (both spellings of the arguments), its outputs, operator mode and a bad
argument. The shared behaviour (registration, outputs, exports) is KubeflowJobComponent's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from components import JAXJob, PaddleJob, XGBoostJob
from kubetrain.builders import BuildContext, build_job
from kubetrain.models import InputError, load_job

from pulumi_harness import by_identity, expected_identity, nothing_but_the_stack, run_pulumi


def template(container: str) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": container, "image": f"{container}:1"}]}}


#: kind -> (component, replica-spec key in Python and in manifests, spec, kind's own output)
KINDS: dict[str, tuple[Callable[..., Any], str, str, dict[str, Any], tuple[str, Any]]] = {
    "XGBoostJob": (
        XGBoostJob,
        "xgb_replica_specs",
        "xgbReplicaSpecs",
        {
            "Master": {"replicas": 1, "template": template("xgboost")},
            "Worker": {"replicas": 2, "template": template("xgboost")},
        },
        ("master_addr", "iris-master-0"),
    ),
    "PaddleJob": (
        PaddleJob,
        "paddle_replica_specs",
        "paddleReplicaSpecs",
        {"Worker": {"replicas": 2, "template": template("paddle")}},
        ("master_endpoint", "iris-worker-0:36543"),
    ),
    "JAXJob": (
        JAXJob,
        "jax_replica_specs",
        "jaxReplicaSpecs",
        {"Worker": {"replicas": 3, "template": template("jax")}},
        ("coordinator_address", "iris-worker-0"),
    ),
}


def args(kind: str, spelling: str, **settings: Any) -> dict[str, Any]:
    _, python_key, manifest_key, specs, _ = KINDS[kind]
    key = python_key if spelling == "python" else manifest_key
    out: dict[str, Any] = {"metadata": {"name": "iris", "namespace": "ml"}, "spec": {key: specs}}
    if settings:
        out["settings"] = settings
    return out


def expected(kind: str, component_args: dict[str, Any]) -> list[dict[str, Any]]:
    document = {"apiVersion": "kubeflow.org/v1", "kind": kind, **component_args}
    loaded, settings = load_job(document, settings=document.pop("settings", None), file="t")
    return build_job(loaded, BuildContext(settings, "pulumi"))


@pytest.mark.parametrize("spelling", ["python", "manifest"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_registers_what_the_builder_builds(kind: str, spelling: str) -> None:
    component_class = KINDS[kind][0]
    component_args = args(kind, spelling)
    run = run_pulumi(lambda: component_class("ml/iris", component_args).mode)
    objects = run.kubernetes_objects()
    assert by_identity(objects) == expected_identity(expected(kind, component_args))
    assert {o.plain["kind"] for o in objects} == {"Job", "Service"}  # the default workload
    component = run.one(f"kubetrain:index:{kind}", "ml/iris")
    assert all(run.parent_of(o) is component for o in objects)
    assert run.result == "native"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_outputs_and_exports(kind: str) -> None:
    component_class, _, _, specs, (attribute, value) = KINDS[kind]

    def program() -> Any:
        job = component_class("ml/iris", args(kind, "python"))
        return {
            "selector": job.label_selector,
            "hosts": job.service_hosts,
            "own": getattr(job, attribute),
            "exports": job.exports(),
        }

    run = run_pulumi(program)
    assert run.result["own"] == value
    assert run.result["selector"].startswith("training.kubeflow.org/job-name=iris,")
    pods = sum(s["replicas"] for s in specs.values())
    assert len(run.result["hosts"]) == pods
    assert all(h.endswith(".ml.svc") for h in run.result["hosts"])
    assert run.result["exports"]["kind"] == kind
    component = run.one(f"kubetrain:index:{kind}", "ml/iris")
    camel = attribute.split("_")[0] + "".join(w.capitalize() for w in attribute.split("_")[1:])
    assert run.outputs[component.urn][camel] == value


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_operator_mode_registers_the_custom_resource(kind: str) -> None:
    component_class = KINDS[kind][0]
    run = run_pulumi(lambda: component_class("ml/iris", args(kind, "python", mode="operator")).mode)
    (reg,) = run.kubernetes_objects()
    assert reg.type == f"kubernetes:kubeflow.org/v1:{kind}"
    assert run.result == "operator"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bad_arguments_fail_before_anything_is_registered(kind: str) -> None:
    component_class, python_key, _, specs, _ = KINDS[kind]
    bad = args(kind, "python")
    bad["spec"][python_key] = {"worker": next(iter(specs.values()))}
    with pytest.raises(
        InputError, match=rf"{kind} ml/iris: spec\.\w+\.worker: Input should be"
    ) as e:
        run_pulumi(lambda: component_class("ml/iris", bad).mode)
    assert nothing_but_the_stack(e.value)
