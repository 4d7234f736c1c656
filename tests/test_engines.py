"""What each engine does with an edit (kubetrain.delivery.engines): the provider's forceNew diff as
pulumi-kubernetes v4.32.0 computes it, the options kubetrain adds so that ``pulumi up`` replaces
every object whose edit the API server refuses in place, and the Flux and Argo CD outcomes."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubetrain.delivery.engines import (
    _force_new_matches,
    outcomes,
    pulumi_changes,
    pulumi_replacement,
    replace_on_changes,
)
from kubetrain.kube.immutable import update_refusals

from conftest import REPO

Obj = dict[str, Any]


def rendered(path: str) -> Obj:
    text = (REPO / "rendered" / path).read_text()
    obj: Obj = yaml.safe_load(text)
    return obj


POD = "dev/ml-dev/pod-tensorflow-mnist-worker-0.yaml"
JOB = "dev/ml-dev/job-xgboost-dist-iris-test-train-worker-1.yaml"
JOBSET = "prod/ml-prod/jobset-resnet50.yaml"
STATEFULSET = "dev/ml-dev/statefulset-mnist-learner.yaml"


def edited(path: str, edit: Callable[[Obj], Any]) -> tuple[Obj, Obj]:
    before = rendered(path)
    after = copy.deepcopy(before)
    edit(after)
    return before, after


def pod_spec(obj: Obj) -> Obj:
    if obj["kind"] == "Pod":
        return obj["spec"]
    if obj["kind"] == "JobSet":
        return obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return obj["spec"]["template"]["spec"]


def test_the_diff_is_the_providers_leaf_by_leaf() -> None:
    """``convertPatchToDiff``: maps key by key, lists element by element, an added element
    whole, a removed one as null; numbers compare as numbers."""
    old = {"spec": {"a": 1, "b": [1, 2], "c": {"d": "x"}, "e": [{"n": 1}]}}
    new = {"spec": {"a": 1.0, "b": [1], "c": {"d": "y"}, "e": [{"n": 1}, {"n": 2}], "f": True}}
    assert list(pulumi_changes(old, new)) == [
        (("spec", "b", 1), None),
        (("spec", "c", "d"), "y"),
        (("spec", "e", 1), {"n": 2}),
        (("spec", "f"), True),
    ]


@pytest.mark.parametrize(
    ("pattern", "path", "value", "matches"),
    [
        ("spec.containers[*].image", ("spec", "containers", 0, "image"), "x", True),
        ("spec.containers[*].env", ("spec", "containers", 0, "env", 2, "value"), "x", True),
        # An added container carries an image: the jsonpath finds it in the new element.
        ("spec.containers[*].image", ("spec", "containers", 1), {"image": "x"}, True),
        # A removed one is null: nothing to find (the provider updates it in place).
        ("spec.containers[*].image", ("spec", "containers", 1), None, False),
        ("spec.affinity", ("spec", "affinity"), None, True),
        ("spec.template", ("spec", "template", "spec", "containers", 0, "env"), [], True),
        ("spec.template", ("spec", "backoffLimit"), 3, False),
        ("spec.containers[*].image", ("spec", "containers", "x", "image"), "x", False),
    ],
)
def test_force_new_matches_as_patch_properties_changed(
    pattern: str, path: tuple, value: Any, matches: bool
) -> None:
    assert _force_new_matches(pattern, path, value) is matches


def add_toleration(obj: Obj) -> None:
    pod_spec(obj).setdefault("tolerations", []).append({"key": "k", "operator": "Exists"})


def set_env(obj: Obj) -> None:
    pod_spec(obj)["containers"][0].setdefault("env", []).append({"name": "NEW", "value": "1"})


def set_image(obj: Obj) -> None:
    pod_spec(obj)["containers"][0]["image"] = "registry.example.com/other:1"


@pytest.mark.parametrize(
    ("path", "edit", "expected"),
    [
        # A Pod's image: the server takes it in place (the kubelet restarts the container);
        # the provider replaces on it.
        pytest.param(
            POD,
            set_image,
            {"flux": "change", "argocd": "change", "pulumi": "replace", "kubectl": "change"},
            id="pod-image",
        ),
        # An added toleration: in place for the server; kubetrain replaces a Pod on any spec
        # change under Pulumi (removing one is refused in place, and the provider would try).
        pytest.param(
            POD,
            add_toleration,
            {"flux": "change", "argocd": "change", "pulumi": "replace", "kubectl": "change"},
            id="pod-toleration",
        ),
        pytest.param(
            POD,
            set_env,
            {"flux": "replace", "argocd": "replace", "pulumi": "replace", "kubectl": "replace"},
            id="pod-env",
        ),
        pytest.param(
            JOB,
            lambda o: o["spec"].__setitem__("backoffLimit", 7),
            {"flux": "change", "argocd": "change", "pulumi": "change", "kubectl": "change"},
            id="job-backoff",
        ),
        pytest.param(
            JOB,
            lambda o: o["spec"].__setitem__("suspend", True),
            {"flux": "change", "argocd": "change", "pulumi": "change", "kubectl": "change"},
            id="job-suspend",
        ),
        pytest.param(
            JOB,
            set_env,
            {"flux": "replace", "argocd": "replace", "pulumi": "replace", "kubectl": "replace"},
            id="job-env",
        ),
        # The provider's list lacks it: kubetrain's replace_on_changes adds it.
        pytest.param(
            JOB,
            lambda o: o["spec"]["podFailurePolicy"]["rules"].pop(),
            {"flux": "replace", "argocd": "replace", "pulumi": "replace", "kubectl": "replace"},
            id="job-pod-failure-policy",
        ),
        # No custom resource is on the provider's list: the JobSet webhook's rules are added.
        pytest.param(
            JOBSET,
            set_env,
            {"flux": "replace", "argocd": "replace", "pulumi": "replace", "kubectl": "replace"},
            id="jobset-env",
        ),
        pytest.param(
            STATEFULSET,
            lambda o: o["spec"].__setitem__("replicas", 3),
            {"flux": "change", "argocd": "change", "pulumi": "change", "kubectl": "change"},
            id="statefulset-replicas",
        ),
        pytest.param(
            STATEFULSET,
            lambda o: o["spec"].__setitem__("serviceName", "other"),
            {"flux": "replace", "argocd": "replace", "pulumi": "replace", "kubectl": "replace"},
            id="statefulset-service-name",
        ),
    ],
)
def test_what_each_engine_does_with_an_edit(
    path: str, edit: Callable[[Obj], Any], expected: dict[str, str]
) -> None:
    before, after = edited(path, edit)
    found = outcomes(before, after, ["spec"], runs_pods=True)
    assert {engine: o.action for engine, o in found.items()} == expected


def test_argo_cd_replaces_whatever_changed_while_the_live_object_says_replace() -> None:
    """The live object's sync options count as the target's (``applyObject``): upgrading from
    Force=true,Replace=true replaces each running object once, even for an edit in place."""
    before, after = edited(JOB, lambda o: o["spec"].__setitem__("backoffLimit", 7))
    before["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] = "Force=true,Replace=true"
    found = outcomes(before, after, ["spec.backoffLimit"], runs_pods=True)
    assert found["argocd"].action == "replace" and found["argocd"].restarts
    assert found["flux"].action == "change" and not found["flux"].restarts


def test_an_edit_without_force_is_refused_by_flux_and_argo_cd() -> None:
    before, after = edited(JOB, set_env)
    for obj in (before, after):
        annotations = obj["metadata"]["annotations"]
        del annotations["kustomize.toolkit.fluxcd.io/force"]
        del annotations["argocd.argoproj.io/sync-options"]
    found = outcomes(before, after, ["spec.template"], runs_pods=True)
    assert (found["flux"].action, found["argocd"].action) == ("refused", "refused")


def claim(**spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": "data",
            "namespace": "ml",
            "annotations": {"kustomize.toolkit.fluxcd.io/prune": "disabled"},
        },
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "10Gi"}},
            **spec,
        },
    }


def test_a_kept_claim_is_never_replaced_by_pulumi() -> None:
    """A Patch resource: replaced on a new name or namespace only. Growing it is an update;
    a new storage class is refused (replacing would delete the data), by every engine."""
    grown = outcomes(
        claim(), claim(resources={"requests": {"storage": "20Gi"}}), ["spec"], runs_pods=False
    )
    assert {o.action for o in grown.values()} == {"change"}
    assert replace_on_changes(claim()) == []
    moved = outcomes(claim(), claim(storageClassName="fast"), ["spec"], runs_pods=False)
    assert {o.action for o in moved.values()} == {"refused"}


# --- the property: Pulumi replaces whatever the server refuses in place ---------------------


def _edits() -> dict[str, Callable[[Obj], Any]]:
    def containers(o: Obj) -> list[Obj]:
        return list(pod_spec(o)["containers"])

    return {
        "image": set_image,
        "env": set_env,
        "add-toleration": add_toleration,
        "drop-tolerations": lambda o: pod_spec(o).pop("tolerations", None),
        "spread": lambda o: pod_spec(o).__setitem__(
            "topologySpreadConstraints",
            [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}],
        ),
        "gate": lambda o: pod_spec(o).__setitem__("schedulingGates", [{"name": "wait"}]),
        "add-container": lambda o: pod_spec(o).__setitem__(
            "containers", [*containers(o), {"name": "side", "image": "busybox:1"}]
        ),
        "drop-container": lambda o: pod_spec(o).__setitem__(
            "containers", containers(o)[:1] if len(containers(o)) > 1 else containers(o)
        ),
        "env-from": lambda o: pod_spec(o)["containers"][0].__setitem__(
            "envFrom", [{"configMapRef": {"name": "cfg"}}]
        ),
        "startup-probe": lambda o: pod_spec(o)["containers"][0].__setitem__(
            "startupProbe", {"exec": {"command": ["true"]}}
        ),
        "deadline": lambda o: pod_spec(o).__setitem__("activeDeadlineSeconds", 600),
        "node-selector": lambda o: pod_spec(o).__setitem__("nodeSelector", {"pool": "gpu"}),
        "label": lambda o: o["metadata"].setdefault("labels", {}).__setitem__("team", "x"),
        "backoff": lambda o: (
            o["spec"].__setitem__("backoffLimit", 9) if o["kind"] == "Job" else None
        ),
        "completion-mode": lambda o: (
            o["spec"].__setitem__("completionMode", "Indexed") if o["kind"] == "Job" else None
        ),
        "suspend": lambda o: (
            o["spec"].__setitem__("suspend", True) if o["kind"] in ("Job", "JobSet") else None
        ),
        "replicas": lambda o: (
            o["spec"].__setitem__("replicas", 5) if o["kind"] == "StatefulSet" else None
        ),
        "service-name": lambda o: (
            o["spec"].__setitem__("serviceName", "other") if o["kind"] == "StatefulSet" else None
        ),
        "pod-management": lambda o: (
            o["spec"].__setitem__("podManagementPolicy", "Parallel")
            if o["kind"] == "StatefulSet"
            else None
        ),
    }


EDITS = _edits()
SAMPLES = [POD, JOB, JOBSET, STATEFULSET]
checked: list[str] = []


@settings(max_examples=120, deadline=None)
@given(
    sample=st.sampled_from(SAMPLES),
    names=st.lists(st.sampled_from(sorted(EDITS)), min_size=1, max_size=4, unique=True),
)
def test_pulumi_replaces_every_edit_the_server_refuses_in_place(
    sample: str, names: list[str]
) -> None:
    before = rendered(sample)
    after = copy.deepcopy(before)
    for name in names:
        EDITS[name](after)
    refused = [r for r in update_refusals(before, after) if r.replaceable]
    replaced = pulumi_replacement(before, after)
    if refused:
        checked.append(sample)
        assert replaced is not None, (sample, names, refused)
    if replaced is None:
        assert not update_refusals(before, after), (sample, names)


def test_the_property_saw_refused_edits_of_every_kind() -> None:
    test_pulumi_replaces_every_edit_the_server_refuses_in_place()
    assert set(checked) == set(SAMPLES)


def test_samples_are_what_their_names_say() -> None:
    kinds = [rendered(path)["kind"] for path in SAMPLES]
    assert kinds == ["Pod", "Job", "JobSet", "StatefulSet"]
    assert rendered(JOB)["spec"]["podFailurePolicy"]["rules"]


TRAINJOB = "dev/ml-dev/trainjob-multi-node-example.yaml"


def test_a_trainjob_edit_of_an_immutable_field_is_a_new_run_under_every_engine() -> None:
    # The Trainer CRD refuses spec.trainer edits (e2e: the real server, and Flux then stopped
    # applying the whole environment while the TrainJob was said to change in place).
    before, after = edited(TRAINJOB, lambda o: o["spec"]["trainer"].update(numNodes=5))
    found = outcomes(before, after, ["spec.trainer.numNodes"], runs_pods=True)
    assert {e: (o.action, o.restarts) for e, o in found.items()} == {
        "flux": ("replace", True),
        "argocd": ("replace", True),
        "pulumi": ("replace", True),
        "kubectl": ("replace", True),
    }


def test_a_running_jobs_new_queue_is_a_replacement_but_under_argo_cd() -> None:
    """Kueue's webhook denies the queue change (403 Forbidden): Flux, Pulumi and the kubectl
    path re-create the Job; Argo CD's kubectl --force re-creates only on a conflict or an
    invalid object, so the Job stays as it was (e2e/test_lifecycle.py under Argo CD)."""

    def queue(obj: Obj) -> None:
        obj["metadata"].setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "q"

    before, after = edited(JOB, queue)
    assert "Force=true" in after["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]
    found = outcomes(before, after, ["metadata.labels"], runs_pods=True)
    assert {e: o.action for e, o in found.items()} == {
        "flux": "replace",
        "argocd": "refused",
        "pulumi": "replace",
        "kubectl": "replace",
    }
    assert 'metadata.labels["kueue.x-k8s.io/queue-name"]' in replace_on_changes(after)
    assert pulumi_replacement(before, after) == "metadata.labels.kueue.x-k8s.io/queue-name"


@pytest.mark.parametrize("path", [JOB, JOBSET])
def test_a_queued_job_is_replaced_under_argo_cd_too(path: str) -> None:
    """So kubetrain writes Argo CD's Replace=true on a job that names a queue: adding the queue,
    and taking it away (Argo CD reads Replace=true from the live object too), re-create the
    job under every engine, and no sync fails on Kueue's Forbidden."""
    from kubetrain.builders.lifecycle import lifecycle_annotations
    from kubetrain.models.stack import StackSettings

    settings_ = StackSettings()
    options = "argocd.argoproj.io/sync-options"

    def annotate(obj: Obj, queue: str | None) -> Obj:
        obj["metadata"]["annotations"].pop(options)
        labels = obj["metadata"].setdefault("labels", {})
        labels.pop("kueue.x-k8s.io/queue-name", None)
        if queue:
            labels["kueue.x-k8s.io/queue-name"] = queue
        return lifecycle_annotations(obj, settings_)

    plain = annotate(rendered(path), None)
    queued = annotate(rendered(path), "q")
    assert plain["metadata"]["annotations"][options] == "Force=true,ServerSideApply=false"
    assert queued["metadata"]["annotations"][options] == "Force=true,Replace=true"
    for before, after in ((plain, queued), (queued, plain)):
        found = outcomes(before, after, ["metadata.labels"], runs_pods=True)
        assert {e: o.action for e, o in found.items()} == dict.fromkeys(
            ("flux", "argocd", "pulumi", "kubectl"), "replace"
        ), (before["metadata"].get("labels"), after["metadata"].get("labels"))


def test_every_claim_is_awaited_only_until_it_exists() -> None:
    """pulumi-kubernetes' claim awaiter wants a WaitForFirstConsumer claim Pending, so a bound
    claim's later update (a larger request) timed out `pulumi up` (e2e/test_lifecycle.py):
    every claim the stacks render says pulumi.com/waitFor on its name instead."""
    claims = [
        yaml.safe_load(path.read_text())
        for path in sorted((REPO / "rendered").rglob("persistentvolumeclaim-*.yaml"))
    ]
    assert claims, "the example stacks render no claim"
    for claim in claims:
        assert claim["metadata"]["annotations"]["pulumi.com/waitFor"] == (
            "jsonpath={.metadata.name}"
        ), claim["metadata"]["name"]
