"""Pulumi identities: every resource keeps its URN when other jobs are added to or removed from
a stack (the stack program run for several stack states under the SDK's mocks, URNs compared as
the engine computes them), shared objects answer to their former URNs, and the objects no engine
may delete are retained."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components import deploy_stack
from kubetrain.builders import build_stack

from helpers import stack_from
from pulumi_harness import Run, engine_urn, run_pulumi, same

TRAININGJOB: dict[str, Any] = {
    "apiVersion": "paddlepaddle.org/v1",
    "kind": "TrainingJob",
    "spec": {
        "trainer": {"entrypoint": "python t.py", "workspace": "/w", "min-instance": 1}
        | {"max-instance": 1},
        "pserver": {"min-instance": 1, "max-instance": 1},
    },
}
LEARNER: dict[str, Any] = {
    "apiVersion": "kubetrain.io/v1alpha1",
    "kind": "Learner",
    "spec": {
        "trainingId": "t",
        "framework": {"name": "tensorflow", "version": "1.15", "command": "python3 t.py"},
        "image": {"registry": "us.icr.io", "namespace": "ml-images"},
    },
}
TFJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "replicas": 2,
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}},
            }
        }
    },
}
OPERATOR = {"annotations": {"kubetrain.io/mode": "operator"}}
#: Operator-mode TrainingJobs a and b share the CRD, Learners c and d the pull Secret.
JOBS = {
    "a": {**TRAININGJOB, "metadata": {"name": "a", **OPERATOR}},
    "b": {**TRAININGJOB, "metadata": {"name": "b", **OPERATOR}},
    "c": {**LEARNER, "metadata": {"name": "c"}},
    "d": {**LEARNER, "metadata": {"name": "d"}},
    "e": {**TFJOB, "metadata": {"name": "e"}},
}
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch"


def deploy(tmp_path: Path, names: str) -> Run:
    folder = tmp_path / names
    folder.mkdir()
    jobs = [JOBS[n] for n in names]
    stack = stack_from(folder, {"kubetrain:namespace": "ml", "kubetrain:jobs": jobs})
    return run_pulumi(
        lambda: deploy_stack(stack) and None,
        config={
            "kubetrain:credentials": json.dumps({"regcred": {"dockerconfigjson": '{"auths": {}}'}})
        },
        secret_keys=["kubetrain:credentials"],
    )


def urns(run: Run) -> dict[tuple[str, str], str]:
    """(type, name) -> engine URN of every resource but the stack."""
    return {
        (r.type, r.name): run.engine_urn(r)
        for r in run.registrations
        if r.type != "pulumi:pulumi:Stack"
    }


CRD = (CRD_TYPE, "trainingjobs.paddlepaddle.org")
PULL = ("kubernetes:core/v1:Secret", "ml/regcred")


@pytest.mark.parametrize(
    ("before", "after", "shared"),
    [
        pytest.param("abcde", "ace", {CRD, PULL}, id="second-sharers-removed"),
        pytest.param("abcde", "bde", {CRD, PULL}, id="first-sharers-removed"),
        pytest.param("ac", "bd", {CRD, PULL}, id="sharers-swapped"),
        pytest.param("ae", "abcde", {CRD}, id="sharers-added"),
        pytest.param("abcde", "e", set(), id="all-but-one-removed"),
    ],
)
def test_urns_survive_jobs_coming_and_going(
    tmp_path: Path, before: str, after: str, shared: set[tuple[str, str]]
) -> None:
    old = urns(deploy(tmp_path, before))
    new = urns(deploy(tmp_path, after))
    common = set(old) & set(new)
    assert shared <= common and ("kubernetes:core/v1:NamespacePatch", "ml") in common
    moved = {key: (old[key], new[key]) for key in common if old[key] != new[key]}
    assert not moved


def test_shared_objects_answer_to_the_urn_they_had_under_a_job(tmp_path: Path) -> None:
    """Before, an object only one job built was that job's component's child: its old URN is an
    alias, so an existing stack keeps the live CRD (no delete and re-create)."""
    run = deploy(tmp_path, "ace")
    crd = run.one(CRD_TYPE, "trainingjobs.paddlepaddle.org")
    pull = run.one("kubernetes:core/v1:Secret", "ml/regcred")
    stack = run.engine_urn(crd).split("::")[0].removeprefix("urn:pulumi:")
    for obj, component in (
        (crd, "kubetrain:index:TrainingJob::ml/a"),
        (pull, "kubetrain:index:LearnerStatefulSet::ml/c"),
    ):
        component_urn = f"urn:pulumi:{stack}::kubetrain::{component}"
        assert engine_urn(stack, component_urn, obj.type, obj.name) in run.alias_urns(obj)
    # A job's own object also answers to the URN it had when two jobs built it (the stack's).
    job = run.one("kubernetes:batch/v1:Job", "ml/e-worker-0")
    assert engine_urn(stack, "", job.type, job.name) in run.alias_urns(job)


def test_crds_and_namespaces_are_retained_on_delete(tmp_path: Path) -> None:
    """Patch resources, retained: creating one again takes over the object left in the cluster
    (a plain create would fail with AlreadyExists), and each answers to the URN of the typed
    resource older kubetrains registered, so an upgraded stack updates it, not delete and add."""
    run = deploy(tmp_path, "ace")
    retained = [r for r in run.kubernetes_objects() if r.retain_on_delete]
    assert sorted((r.type, r.name) for r in retained) == [
        (CRD_TYPE, "trainingjobs.paddlepaddle.org"),
        ("kubernetes:core/v1:NamespacePatch", "ml"),
    ]
    stack = run.engine_urn(retained[0]).split("::")[0].removeprefix("urn:pulumi:")
    for reg in retained:
        typed = reg.type.removesuffix("Patch")
        assert engine_urn(stack, "", typed, reg.name) in run.alias_urns(reg)
    assert not [
        r for r in run.kubernetes_objects() if r.type.endswith("Patch") and r not in retained
    ]


def test_the_program_registers_what_the_stack_builds_with_every_new_setting(tmp_path: Path) -> None:
    """Settings the components must see as the stack does: podAwait, its timeout, CRDs left to
    another environment, and bare pods (which podAwait applies to)."""
    config = {
        "kubetrain:namespace": "ml",
        "kubetrain:nativeWorkload": "pod",
        "kubetrain:gangScheduler": "volcano",
        "kubetrain:podAwait": "ready",
        "kubetrain:podAwaitTimeoutSeconds": 120,
        "kubetrain:external": {"customResourceDefinitions": ["trainingjobs.paddlepaddle.org"]},
        "kubetrain:jobs": [JOBS["a"], JOBS["e"]],
    }
    stack = stack_from(tmp_path, config)
    run = run_pulumi(lambda: deploy_stack(stack) and None)
    registered = sorted(same(r.plain) for r in run.kubernetes_objects())
    built = sorted(same(b.obj) for b in build_stack(stack, "pulumi"))
    assert registered == built
    assert not run.of_type(CRD_TYPE)
    pod = run.one("kubernetes:core/v1:Pod", "ml/e-worker-0")
    assert pod.plain["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == "120"
