"""Sequences of stack edits through ``pulumi up``: the stack program runs under the SDK's mocks
for each state of the stack, and :mod:`pulumi_engine` plays what the Pulumi engine and
pulumi-kubernetes do with every registered resource and its options against one cluster. Every
step must succeed (no AlreadyExists, no update the API server refuses) and leave the cluster as
the stack says; objects no engine deletes stay."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pulumi_engine import Cluster, Engine, PulumiFailure, Resource

from components import deploy_stack

from helpers import stack_from
from pulumi_harness import Run, run_pulumi

Config = dict[str, Any]


def tfjob(name: str, workers: int = 2, image: str = "tf:2.15", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, **meta},
        "spec": {
            "tfReplicaSpecs": {
                "PS": {
                    "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": image}]}},
                },
                "Worker": {
                    "replicas": workers,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": image}]}},
                },
            }
        },
    }


def trainingjob(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "paddlepaddle.org/v1",
        "kind": "TrainingJob",
        "metadata": {"name": name, "annotations": {"kubetrain.io/mode": "operator"}},
        "spec": {
            "trainer": {"entrypoint": "python t.py", "workspace": "/w"}
            | {"min-instance": 1, "max-instance": 1},
            "pserver": {"min-instance": 1, "max-instance": 1},
        },
    }


CLAIM = {
    "apiVersion": "v1",
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
}


def base(**settings: Any) -> Config:
    return {"kubetrain:namespace": "ml", **{f"kubetrain:{k}": v for k, v in settings.items()}}


class Deployer:
    """Runs the program for successive stack configs into one engine."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.engine = Engine()
        self.runs = 0

    def program(self, config: Config) -> Run:
        self.runs += 1
        folder = self.tmp_path / f"state-{self.runs}"
        folder.mkdir()
        stack = stack_from(folder, config)
        return run_pulumi(lambda: deploy_stack(stack) and None)

    def up(self, config: Config) -> Run:
        run = self.program(config)
        self.engine.up(run)
        self.engine.assert_converged()
        return run


def with_jobs(config: Config, *jobs: dict[str, Any]) -> Config:
    return {**config, "kubetrain:jobs": list(jobs)}


def edit_job(job: dict[str, Any], fn: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    out = copy.deepcopy(job)
    fn(out)
    return out


def worker_env(job: dict[str, Any]) -> None:
    container = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": "LR", "value": "0.1"}]


def tolerate(job: dict[str, Any]) -> None:
    spec = job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]
    spec["tolerations"] = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]


#: (name, settings, stack states in order): each state a list of jobs (plain manifests by
#: the "manifests" key).
SEQUENCES: list[tuple[str, Config, list[list[dict[str, Any]]]]] = [
    # Scaling rewrites TF_CONFIG in every template: every Job replaced (same names).
    ("scale-jobs", base(), [[tfjob("a", 2)], [tfjob("a", 3)], [tfjob("a", 1)]]),
    ("scale-pods", base(nativeWorkload="pod"), [[tfjob("a", 2)], [tfjob("a", 3)]]),
    ("scale-jobset", base(nativeWorkload="jobset"), [[tfjob("a", 2)], [tfjob("a", 3)]]),
    # A gang's pods are not awaited on create; their delete still is.
    (
        "scale-gang-pods",
        base(nativeWorkload="pod", gangScheduler="volcano"),
        [[tfjob("a", 2)], [tfjob("a", 4)], [tfjob("a", 4, image="tf:2.16")]],
    ),
    (
        "skip-await-pods",
        base(nativeWorkload="pod", podAwait="skip"),
        [[tfjob("a")], [tfjob("a", 3)]],
    ),
    ("image", base(nativeWorkload="pod"), [[tfjob("a")], [tfjob("a", image="tf:2.16")]]),
    ("image-jobs", base(), [[tfjob("a")], [tfjob("a", image="tf:2.16")]]),
    (
        "env-jobset",
        base(nativeWorkload="jobset"),
        [[tfjob("a")], [edit_job(tfjob("a"), worker_env)]],
    ),
    # A toleration added: in place for the server, but a JobSet's replicatedJobs and a Pod's
    # spec are replaced by kubetrain's options (the provider would update them in place).
    (
        "toleration-pods",
        base(nativeWorkload="pod"),
        [[edit_job(tfjob("a"), tolerate)], [tfjob("a")]],
    ),
    (
        "toleration-jobset",
        base(nativeWorkload="jobset"),
        [[tfjob("a")], [edit_job(tfjob("a"), tolerate)], [tfjob("a")]],
    ),
    ("add-remove", base(), [[tfjob("a")], [tfjob("a"), tfjob("b")], [tfjob("b")], []]),
    ("rename", base(), [[tfjob("a")], [tfjob("renamed")]]),
    (
        "mode-switch",
        base(),
        [[tfjob("a")], [tfjob("a", annotations={"kubetrain.io/native-workload": "pod"})]],
    ),
    (
        "mode-switch-back",
        base(nativeWorkload="pod"),
        [
            [tfjob("a")],
            [tfjob("a", annotations={"kubetrain.io/native-workload": "job"})],
            [tfjob("a")],
        ],
    ),
    # The last job of a namespace leaves (its Namespace stays in the cluster) and comes back.
    (
        "namespace-emptied-and-refilled",
        base(),
        [
            [tfjob("a"), tfjob("b", namespace="research")],
            [tfjob("a")],
            [tfjob("a"), tfjob("b", namespace="research")],
        ],
    ),
    # The CRD of operator mode: kept when its last job leaves, taken over when one comes back.
    ("crd-kept-and-taken-over", base(), [[trainingjob("t")], [], [trainingjob("t")]]),
]


@pytest.mark.parametrize(
    ("settings", "states"),
    [pytest.param(settings, states, id=name) for name, settings, states in SEQUENCES],
)
def test_every_edit_goes_through_pulumi_up(
    tmp_path: Path, settings: Config, states: list[list[dict[str, Any]]]
) -> None:
    deployer = Deployer(tmp_path)
    for jobs in states:
        deployer.up(with_jobs(settings, *jobs))
    assert deployer.runs == len(states) > 1


def test_a_namespace_change_moves_everything_and_keeps_the_claim(tmp_path: Path) -> None:
    """Every object moves (a new name for Pulumi: the new one created, the old one deleted);
    the old Namespace and the claim with its data stay in the cluster."""
    deployer = Deployer(tmp_path)
    first = {**with_jobs(base(), tfjob("a")), "kubetrain:manifests": [CLAIM]}
    deployer.up(first)
    deployer.up({**first, "kubetrain:namespace": "ml2"})
    live = deployer.engine.cluster.objects
    assert ("", "PersistentVolumeClaim", "ml", "data") in live
    assert ("", "PersistentVolumeClaim", "ml2", "data") in live
    assert ("", "Namespace", "", "ml") in live and ("", "Namespace", "", "ml2") in live
    assert not [k for k in live if k[2] == "ml" and k[1] not in ("PersistentVolumeClaim",)]


def test_a_claim_that_leaves_and_comes_back_is_taken_over(tmp_path: Path) -> None:
    deployer = Deployer(tmp_path)
    with_claim = {**with_jobs(base(), tfjob("a")), "kubetrain:manifests": [CLAIM]}
    deployer.up(with_claim)
    deployer.up(with_jobs(base(), tfjob("a")))
    assert ("", "PersistentVolumeClaim", "ml", "data") in deployer.engine.cluster.objects
    deployer.up(with_claim)
    # With pruneData the claim is an ordinary object: deleted when it leaves.
    deployer.up({**with_claim, "kubetrain:pruneData": True})
    deployer.up(with_jobs(base(pruneData=True), tfjob("a")))
    assert ("", "PersistentVolumeClaim", "ml", "data") not in deployer.engine.cluster.objects


def test_destroy_then_up(tmp_path: Path) -> None:
    deployer = Deployer(tmp_path)
    config = with_jobs(base(), tfjob("a"), trainingjob("t"))
    deployer.up(config)
    deployer.engine.destroy()
    kept = sorted(k[1] for k in deployer.engine.cluster.objects)
    assert kept == ["CustomResourceDefinition", "Namespace"]
    deployer.up(config)


def test_an_existing_namespace_is_taken_over(tmp_path: Path) -> None:
    """A stack from a kubetrain that did not manage namespaces: the namespace exists in the
    cluster, not in the state."""
    cluster = Cluster(
        objects={
            ("", "Namespace", "", "ml"): {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "ml"},
            }
        }
    )
    deployer = Deployer(tmp_path)
    deployer.engine = Engine(cluster)
    deployer.up(with_jobs(base(), tfjob("a")))
    labels = cluster.objects["", "Namespace", "", "ml"]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"


def test_an_older_layout_is_updated_in_place(tmp_path: Path) -> None:
    """A state written by a kubetrain that registered typed Namespaces and CRDs: the Patch
    resources answer to those URNs, so the upgrade is an update, never a delete."""
    deployer = Deployer(tmp_path)
    config = with_jobs(base(), tfjob("a"), trainingjob("t"))
    run = deployer.program(config)
    old = []
    for reg in run.kubernetes_objects():
        res = Resource.of(reg, run)
        if res.patch:
            typed = res.type.removesuffix("Patch")
            res = replace(res, type=typed, urn=res.urn.replace(res.type, typed), aliases=())
        old.append(res)
    deployer.engine.apply(old)
    assert {r.type for r in deployer.engine.state.values()} >= {"kubernetes:core/v1:Namespace"}
    deployer.engine.cluster.log.clear()
    deployer.up(config)
    assert not [
        line
        for line in deployer.engine.cluster.log
        if line.startswith(("delete", "retain", "create"))
    ]


def strip_options(run: Run) -> list[Resource]:
    """What the program registered with none of kubetrain's lifecycle options: the test of the
    model itself (without them, the same edits must fail)."""
    out = []
    for reg in run.kubernetes_objects():
        res = Resource.of(reg, run)
        out.append(replace(res, delete_before_replace=False, replace_on_changes=()))
    return out


@pytest.mark.parametrize(
    ("settings", "before", "after", "failure"),
    [
        pytest.param(
            base(nativeWorkload="jobset"),
            tfjob("a"),
            tfjob("a", 3),
            "refuses the update",
            id="jobset-in-place",
        ),
        pytest.param(
            base(nativeWorkload="pod"),
            edit_job(tfjob("a"), tolerate),
            tfjob("a"),
            "refuses",
            id="pod-toleration",
        ),
    ],
)
def test_without_the_options_the_same_edits_fail(
    tmp_path: Path, settings: Config, before: dict, after: dict, failure: str
) -> None:
    deployer = Deployer(tmp_path)
    deployer.engine.apply(strip_options(deployer.program(with_jobs(settings, before))))
    with pytest.raises(PulumiFailure, match=failure):
        deployer.engine.apply(strip_options(deployer.program(with_jobs(settings, after))))


def test_skip_await_on_a_replaced_pod_would_fail_with_already_exists(tmp_path: Path) -> None:
    """Why pods are not skipAwait: the delete of a replaced pod would not be awaited."""
    deployer = Deployer(tmp_path)
    settings = base(nativeWorkload="pod", gangScheduler="volcano")

    def skip_await(run: Run) -> list[Resource]:
        out = []
        for res in (Resource.of(r, run) for r in run.kubernetes_objects()):
            annotations = res.inputs["metadata"].get("annotations") or {}
            if annotations.pop("pulumi.com/waitFor", None):
                annotations["pulumi.com/skipAwait"] = "true"
            out.append(res)
        return out

    deployer.engine.apply(skip_await(deployer.program(with_jobs(settings, tfjob("a")))))
    with pytest.raises(PulumiFailure, match="AlreadyExists"):
        deployer.engine.apply(skip_await(deployer.program(with_jobs(settings, tfjob("a", 3)))))
    assert json.dumps(settings)
