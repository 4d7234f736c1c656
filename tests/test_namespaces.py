"""What a stack brings besides its jobs' objects: the Namespaces it creates (Pod Security
labels), the CRDs it leaves to another environment, and the annotations that tell Flux, Argo CD
and Pulumi how to treat each object over its life."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubetrain.builders import build_stack
from kubetrain.builders.namespaces import namespaces_created
from kubetrain.models import load_stack

from conftest import REPO
from helpers import objects, pick, stack_from


def tfjob(name: str, namespace: str | None = None, replicas: int = 2) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    template = {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": meta,
        "spec": {"tfReplicaSpecs": {"Worker": {"replicas": replicas, "template": template}}},
    }


def trainingjob(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "annotations": {"kubetrain.io/mode": "operator"}},
        "spec": {
            "trainer": {"entrypoint": "p", "workspace": "/w", "min-instance": 1}
            | {"max-instance": 1},
            "pserver": {"min-instance": 1, "max-instance": 1},
        },
    }


def test_every_namespace_the_jobs_use_is_created_with_pod_security_labels(tmp_path: Path) -> None:
    stack = stack_from(
        tmp_path,
        {
            "kubetrain:namespace": "ml",
            "kubetrain:kubernetesVersion": "1.32",
            "kubetrain:podSecurity": "restricted",
            "kubetrain:jobs": [tfjob("a"), tfjob("b", "research"), tfjob("c", "default")],
        },
    )
    objs = objects(stack, namespaces=True)
    namespaces = [o for o in objs if o["kind"] == "Namespace"]
    # Before anything else; not default, which every cluster has.
    assert objs[: len(namespaces)] == namespaces
    assert [n["metadata"]["name"] for n in namespaces] == ["ml", "research"]
    labels = namespaces[0]["metadata"]["labels"]
    assert labels == {
        "app.kubernetes.io/managed-by": "kubetrain",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "v1.32",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "v1.32",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "v1.32",
    }
    # No engine deletes a namespace: everything in it would go, objects of others included
    # (Pulumi: a Patch resource retained on delete, whose values win over an earlier manager's).
    # It is delivered with the other prerequisites of admission, before the pods.
    assert namespaces[0]["metadata"]["annotations"] == {
        "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
        "argocd.argoproj.io/sync-wave": "-1",
        "kubetrain.io/delivery-step": "prerequisites",
        "kustomize.toolkit.fluxcd.io/prune": "disabled",
        "pulumi.com/patchForce": "true",
    }


def test_external_namespaces_and_crds_are_left_out(tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "kubetrain:namespace": "ml",
        "kubetrain:jobs": [trainingjob("a"), tfjob("b", "research")],
    }

    def stack_level(folder: Path) -> list[tuple[str, str]]:
        folder.mkdir(exist_ok=True)
        objs = objects(stack_from(folder, config), namespaces=True)
        return [
            (o["kind"], o["metadata"]["name"])
            for o in objs
            if o["kind"] in ("Namespace", "CustomResourceDefinition")
        ]

    assert stack_level(tmp_path / "a") == [
        ("Namespace", "ml"),
        ("Namespace", "research"),
        ("CustomResourceDefinition", "trainingjobs.paddlepaddle.org"),
    ]
    # Another environment on the cluster installs the CRD; the platform made "research".
    config["kubetrain:external"] = {
        "namespaces": ["research"],
        "customResourceDefinitions": ["trainingjobs.paddlepaddle.org"],
    }
    assert stack_level(tmp_path / "b") == [("Namespace", "ml")]


def test_a_namespace_the_stack_declares_wins_over_the_generated_one(tmp_path: Path) -> None:
    """The single place that decides, for declared objects too (plain manifests)."""
    stack = stack_from(tmp_path, {"kubetrain:namespace": "ml", "kubetrain:jobs": [tfjob("a")]})
    objs = objects(stack)
    assert namespaces_created(objs, stack.settings) == ["ml"]
    declared = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    assert namespaces_created([*objs, declared], stack.settings) == []


def test_shared_objects_belong_to_the_stack_even_with_one_job(tmp_path: Path) -> None:
    stack = stack_from(
        tmp_path, {"kubetrain:namespace": "ml", "kubetrain:jobs": [trainingjob("a")]}
    )
    built = {(b.obj["kind"], b.obj["metadata"]["name"]): b for b in build_stack(stack)}
    crd = built["CustomResourceDefinition", "trainingjobs.paddlepaddle.org"]
    assert crd.job is None and [j.title for j in crd.builders] == ["TrainingJob ml/a"]
    assert built["TrainingJob", "a"].job is not None


@pytest.mark.parametrize(
    ("kind", "name", "annotations"),
    [
        pytest.param(
            "JobSet",
            "resnet50",
            {
                "kustomize.toolkit.fluxcd.io/force": "enabled",
                # Replaced only when the server refuses the update: never Replace=true, with
                # which Argo CD re-creates the object whatever changed.
                "argocd.argoproj.io/sync-options": "Force=true,ServerSideApply=false",
            },
            id="jobset",
        ),
        pytest.param("Service", "resnet50-worker-0", None, id="service"),
    ],
)
def test_objects_edits_cannot_change_in_place_are_replaced_by_the_engines(
    kind: str, name: str, annotations: dict | None
) -> None:
    objs = objects(load_stack(REPO / "stacks" / "Pulumi.prod.yaml"))
    found = pick(objs, kind, name)["metadata"].get("annotations") or {}
    for key in ("kustomize.toolkit.fluxcd.io/force", "argocd.argoproj.io/sync-options"):
        assert found.get(key) == (annotations or {}).get(key)


AWAITED = {
    "kubetrain:namespace": "ml",
    "kubetrain:gangScheduler": "volcano",
    "kubetrain:nativeWorkload": "pod",  # a Job or JobSet is never awaited (test below)
    "kubetrain:jobs": [tfjob("gang", replicas=3), tfjob("solo", replicas=1), trainingjob("op")],
}


@pytest.mark.parametrize(
    ("settings", "gang", "solo"),
    [
        pytest.param({}, {"pulumi.com/waitFor": "jsonpath={.metadata.name}"}, {}, id="auto"),
        pytest.param({"podAwait": "ready"}, {}, {}, id="ready"),
        pytest.param(
            {"podAwait": "skip"},
            {"pulumi.com/waitFor": "jsonpath={.metadata.name}"},
            {"pulumi.com/waitFor": "jsonpath={.metadata.name}"},
            id="skip",
        ),
        pytest.param(
            {"podAwaitTimeoutSeconds": 1800},
            {"pulumi.com/waitFor": "jsonpath={.metadata.name}"},
            {"pulumi.com/timeoutSeconds": "1800"},
            id="auto-timeout",
        ),
        pytest.param(
            {"podAwait": "ready", "podAwaitTimeoutSeconds": 60},
            {"pulumi.com/timeoutSeconds": "60"},
            {"pulumi.com/timeoutSeconds": "60"},
            id="ready-timeout",
        ),
    ],
)
def test_how_pulumi_awaits_pods(tmp_path: Path, settings: dict, gang: dict, solo: dict) -> None:
    """By default a gang's pods are not awaited one by one: they start only together, and
    Pulumi creates (and awaits) a few at a time. A pod that is not awaited says so with a
    waitFor met at once, never skipAwait: skipAwait would also skip awaiting its delete, and its
    replacement (same name) would fail with AlreadyExists."""
    config = {**AWAITED, **{f"kubetrain:{k}": v for k, v in settings.items()}}
    objs = objects(stack_from(tmp_path, config))

    def pulumi_annotations(name: str) -> dict[str, str]:
        found = pick(objs, "Pod", name)["metadata"].get("annotations") or {}
        return {k: v for k, v in found.items() if k.startswith("pulumi.com/")}

    assert all(pulumi_annotations(f"gang-worker-{i}") == gang for i in range(3))
    assert pulumi_annotations("solo-worker-0") == solo
    # Objects that run no pods are never annotated.
    assert "annotations" not in pick(objs, "Service", "solo-worker-0")["metadata"]
    assert "pulumi.com/skipAwait" not in (
        pick(objs, "TrainingJob", "op")["metadata"].get("annotations") or {}
    )


@pytest.mark.parametrize("workload", ["job", "jobset"])
@pytest.mark.parametrize("await_setting", ["auto", "ready"])
def test_a_kubeflow_job_under_a_job_or_jobset_is_never_awaited(
    tmp_path: Path, workload: str, await_setting: str
) -> None:
    """Its Jobs (and JobSet) run until the training ends, as a trainer Job does."""
    config = {
        **AWAITED,
        "kubetrain:nativeWorkload": workload,
        "kubetrain:podAwait": await_setting,
        "kubetrain:podAwaitTimeoutSeconds": 60,
    }
    runners = [o for o in objects(stack_from(tmp_path, config)) if o["kind"] in ("Job", "JobSet")]
    assert len(runners) == (4 if workload == "job" else 2)
    for obj in runners:
        annotations = obj["metadata"]["annotations"]
        assert annotations["pulumi.com/skipAwait"] == "true"
        assert "pulumi.com/timeoutSeconds" not in annotations
        # A Job is deleted in the background, so that its replacement can be created at once
        # (skipAwait skips the wait for a Job's delete); a JobSet's delete is awaited anyway.
        propagation = annotations.get("pulumi.com/deletionPropagationPolicy")
        assert propagation == ("background" if obj["kind"] == "Job" else None)


@pytest.mark.parametrize(("setting", "awaited"), [("ready", True), ("auto", False)])
def test_ready_waits_for_replica_sets_which_the_provider_has_no_awaiter_for(
    tmp_path: Path, setting: str, awaited: bool
) -> None:
    """pulumi-kubernetes awaits no ReplicaSet (no entry in await/awaiters.go): under ready,
    a waitFor on its ready replicas stands in."""
    job = trainingjob("paddle")
    job["metadata"].pop("annotations")
    job["spec"]["fault_tolerant"] = True
    config = {"kubetrain:podAwait": setting, "kubetrain:jobs": [job]}
    sets = [o for o in objects(stack_from(tmp_path, config)) if o["kind"] == "ReplicaSet"]
    assert len(sets) == 2
    for rs in sets:
        wait = (rs["metadata"].get("annotations") or {}).get("pulumi.com/waitFor")
        expected = f"jsonpath={{.status.readyReplicas}}={rs['spec']['replicas']}"
        assert wait == (expected if awaited else None), rs["metadata"]["name"]


def test_the_trainer_job_is_never_awaited(tmp_path: Path) -> None:
    """A trainer Job runs until the training ends: ready or not, Pulumi must not wait for it."""
    job = trainingjob("paddle")
    job["metadata"].pop("annotations")
    config = {
        "kubetrain:podAwait": "ready",
        "kubetrain:podAwaitTimeoutSeconds": 60,
        "kubetrain:jobs": [job],
    }
    trainer = pick(objects(stack_from(tmp_path, config)), "Job", "paddle-trainer")
    annotations = trainer["metadata"]["annotations"]
    assert annotations["pulumi.com/skipAwait"] == "true"
    assert annotations["pulumi.com/deletionPropagationPolicy"] == "background"
    assert "pulumi.com/timeoutSeconds" not in annotations


def test_a_namespace_shipped_as_a_manifest_wins_and_manifests_are_in_stored_form(
    tmp_path: Path,
) -> None:
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "ml", "labels": {"team": "vision"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "probe", "namespace": "ml"},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}
            ]
        },
    }
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:manifests": [namespace, pod],
        "kubetrain:jobs": [tfjob("a")],
    }
    objs = objects(stack_from(tmp_path, config), namespaces=True)
    (ml,) = [o for o in objs if o["kind"] == "Namespace"]
    assert ml["metadata"]["labels"] == {"team": "vision"}  # the stack's own, as declared
    limits = pick(objs, "Pod", "probe")["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": "1"}
