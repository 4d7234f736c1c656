"""The stored form (kubetrain/kube/stored.py) held against what a real kube-apiserver v1.36 stored
for every rendered object it was given (apiserver-corpus/roundtrip.jsonl): rendered fields equal
their stored values, and the only fields the server adds are the defaults kubetrain leaves to it.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from kubetrain.builders import build_stack
from kubetrain.kube.paths import leaves
from kubetrain.kube.stored import left_to_server, stored_form
from kubetrain.models import load_stack

from conftest import REPO, needs_apiserver_corpus
from helpers import CORPORA, corpus_records, stack_from

Key = tuple[str, str, str]


def key_of(obj: dict[str, Any]) -> Key:
    return (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def generic(path: str) -> str:
    return re.sub(r"\[[^\]]*\]", "[]", path)


@needs_apiserver_corpus
# apiserver-corpus-r4's roundtrip records name what the server added, changed and dropped but
# hold no stored object.
@pytest.mark.parametrize("corpus", [c for c in CORPORA if c != "apiserver-corpus-r4"])
def test_stored_form_of_every_roundtrip_record(corpus: str) -> None:
    """The normalisation alone, on each object exactly as it was sent (every environment of the
    corpus, Pulumi-mode Secrets included)."""
    records = corpus_records("roundtrip", corpus)
    assert len(records) >= 170
    problems = []
    for record in records:
        ours = dict(leaves(stored_form(copy.deepcopy(record["object"]))))
        stored = dict(leaves(record["stored"]))
        for path, value in ours.items():
            if path not in stored:
                problems.append(f"{record['base']}: {path} is dropped by the server")
            elif stored[path] != value:
                problems.append(f"{record['base']}: {path}: {value!r}, stored {stored[path]!r}")
        for path in record["added"]:
            if path not in ours and left_to_server(path) is None:
                problems.append(f"{record['base']}: {path} is added by the server, not a default")
    assert not problems, "\n".join(problems)


@needs_apiserver_corpus
def test_the_allowances_are_all_used() -> None:
    """Every pattern of LEFT_TO_SERVER matches a field the server added (none is dead weight that
    could hide a field kubetrain must write), and fieldRef.apiVersion is not left to it."""
    added = {
        generic(p)
        for corpus in CORPORA
        for r in corpus_records("roundtrip", corpus)
        for p in r["added"]
    }
    reasons = {left_to_server(p) for p in added} - {None}
    from kubetrain.kube.stored import LEFT_TO_SERVER

    assert reasons == set(LEFT_TO_SERVER.values())
    assert left_to_server("spec.containers[x].env[Y].valueFrom.fieldRef.apiVersion") is None


# --- the renderer itself ------------------------------------------------------------------------

#: The corpus' extra environments (operator mode, Volcano, scheduler-plugins) were rendered from
#: the three jobs whose operator-mode custom resources it holds: rebuilt here from them.
EXTRA_ENVS = {
    "xop": {"kubetrain:mode": "operator"},
    "xsp": {"kubetrain:gangScheduler": "scheduler-plugins", "kubetrain:nativeWorkload": "pod"},
    "xvol": {"kubetrain:gangScheduler": "volcano", "kubetrain:nativeWorkload": "pod"},
}
OWN_LABELS = (
    "app.kubernetes.io/instance",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/name",
)


def extra_jobs() -> list[dict[str, Any]]:
    bases = {r["base"]: r["object"] for r in corpus_records("bases")}
    jobs = []
    for name in ("tfjob-tfx", "trainingjob-ctrx", "learner-lrn"):
        job = copy.deepcopy(bases[f"extra/xop/ml-xop/{name}.yaml"])
        del job["metadata"]["namespace"]
        labels = {k: v for k, v in job["metadata"].pop("labels").items() if k not in OWN_LABELS}
        if labels:
            job["metadata"]["labels"] = labels
        jobs.append(job)
    return jobs


def rendered_now(tmp_path: Path) -> dict[str, dict[Key, dict[str, Any]]]:
    """env -> the objects kubetrain renders for it today. The corpus was recorded when Kubeflow
    jobs rendered bare Pods: they are rendered so again (kubetrain:nativeWorkload pod), where a
    job's annotation does not ask otherwise."""
    out = {}
    for env in ("dev", "staging", "prod"):
        stack = load_stack(REPO / "stacks" / f"Pulumi.{env}.yaml")
        pods = stack.settings.model_copy(update={"native_workload": "pod"})
        stack = dataclasses.replace(stack, settings=pods)
        out[env] = {key_of(b.obj): b.obj for b in build_stack(stack, "render")}
    jobs = extra_jobs()
    for env, settings in EXTRA_ENVS.items():
        config = {
            "kubetrain:namespace": f"ml-{env}",
            "kubetrain:kubernetesVersion": "1.34",
            "kubetrain:clusterDomain": "cluster.local",
            "kubetrain:secretStore": {"kind": "ClusterSecretStore", "name": "vault"},
            "kubetrain:gpuTypeNodeLabel": "ibm-cloud.kubernetes.io/gpu-type",
            "kubetrain:jobs": jobs,
            **settings,
        }
        stack = stack_from(tmp_path, config, env)
        out[env] = {key_of(b.obj): b.obj for b in build_stack(stack, "render")}
    return out


@needs_apiserver_corpus
def test_the_renderer_writes_what_the_server_stores(tmp_path: Path) -> None:
    """For every record of an object kubetrain still renders: a field it writes as it did when
    the corpus was made must be what the server stored, a field the server dropped must be gone,
    and a field the server added must be written unless it is left to the server. (A field whose
    source changed since, or that is new, says nothing about the corpus and is skipped.)"""
    now = rendered_now(tmp_path)
    problems: list[str] = []
    verified: set[str] = set()
    compared = 0
    for record in corpus_records("roundtrip"):
        if record["base"].startswith(("synthetic/", "rendered/clusters/")):
            continue  # Pulumi-mode Secrets and GitOps objects: see the other tests
        obj = now[record["env"]].get(key_of(record["object"]))
        if obj is None:
            continue
        compared += 1
        sent = dict(leaves(record["object"]))
        stored = dict(leaves(record["stored"]))
        ours = dict(leaves(obj))
        touched = {*record["changed"], *record["dropped"]} | {
            p for p in record["added"] if left_to_server(p) is None
        }
        for path, value in ours.items():
            if path in stored and value != stored[path] and value == sent.get(path):
                problems.append(
                    f"{record['base']}: {path}: writes {value!r}, stored {stored[path]!r}"
                )
            elif path not in stored and path in sent and value == sent[path]:
                problems.append(
                    f"{record['base']}: {path}: writes {value!r}, dropped by the server"
                )
            elif path in touched:
                verified.add(generic(path))
        for path in touched - set(ours):
            if path in record["added"]:
                problems.append(f"{record['base']}: {path}: not written, added by the server")
            else:
                verified.add(generic(path))  # dropped by the server, and by kubetrain now
    assert compared >= 150
    assert not problems, "\n".join(problems)
    # Every kind of difference the corpus found was met and is now written as stored.
    expected = {
        generic(p)
        for r in corpus_records("roundtrip")
        if not r["base"].startswith("synthetic/")
        for p in (
            *r["changed"],
            *r["dropped"],
            *(a for a in r["added"] if left_to_server(a) is None),
        )
    }
    assert expected and expected <= verified, sorted(expected - verified)


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        pytest.param(
            {"nvidia.com/gpu": 1, "cpu": 0.5, "memory": "1024Mi"},
            {"nvidia.com/gpu": "1", "cpu": "500m", "memory": "1Gi"},
            id="quantities",
        ),
        pytest.param({"cpu": "lots"}, {"cpu": "lots"}, id="not-a-quantity-is-left-for-validation"),
    ],
)
def test_quantities_are_canonical_strings(value: dict[str, Any], stored: dict[str, Any]) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": dict(value)}}]},
    }
    assert stored_form(pod)["spec"]["containers"][0]["resources"]["limits"] == stored


def test_custom_resources_and_crds_are_left_as_sent() -> None:
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "t"},
        "spec": {"x": {"resources": {"limits": {"nvidia.com/gpu": 1}}}},
    }
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "c"},
        "spec": {"fieldRef": {"properties": {}}},
    }
    assert stored_form(copy.deepcopy(tfjob)) == tfjob
    assert stored_form(copy.deepcopy(crd)) == crd


def test_a_cluster_queues_quotas_are_stored_as_kueues_webhook_stores_them() -> None:
    # Kueue v0.19.2's defaulting webhook re-encodes the ClusterQueue: a quota sent as 16 is
    # stored as "16" (seen in e2e/test_lifecycle.py, where Flux re-applied it at every reconcile).
    from kubetrain.kube.stored import stored_form

    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "f",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 16, "borrowingLimit": 0.5},
                                {"name": "memory", "nominalQuota": "1024Mi"},
                            ],
                        }
                    ],
                }
            ]
        },
    }
    expected = [
        {"name": "cpu", "nominalQuota": "16", "borrowingLimit": "500m"},
        {"name": "memory", "nominalQuota": "1Gi"},
    ]
    # What every built manifest goes through (builders.registry.finish) stores them so too.
    from kubetrain.kube.stored import canonical_stored_form

    once = canonical_stored_form(copy.deepcopy(queue))
    assert once["spec"]["resourceGroups"][0]["flavors"][0]["resources"] == [
        dict(sorted(r.items())) for r in expected
    ]
    resources = stored_form(queue)["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert resources == expected


# --- the one-pass form every builder's manifest goes through -----------------------------------


_KEYS = st.sampled_from(
    ["spec", "metadata", "containers", "volumeMounts", "readOnly", "hostNetwork", "stdin",
     "resources", "limits", "requests", "fieldRef", "fieldPath", "resourceFieldRef", "divisor",
     "emptyDir", "sizeLimit", "overhead", "cpu", "flexVolume", "template", "x", "name"]
)  # fmt: skip
_LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5000), st.sampled_from(["1", "500m", "1024Mi", "x"])
)
_TREES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(
    api_version=st.sampled_from(
        ["v1", "apps/v1", "batch/v1", "jobset.x-k8s.io/v1alpha2", "kueue.x-k8s.io/v1beta2"]
    ),
    kind=st.sampled_from(["Pod", "Job", "CustomResourceDefinition", "JobSet", "ClusterQueue"]),
    body=st.dictionaries(_KEYS, _TREES, max_size=4),
)
def test_the_one_pass_form_is_canonical_then_stored(
    api_version: str, kind: str, body: dict
) -> None:
    """``canonical_stored_form`` (what ``builders.registry.finish`` applies) gives exactly
    ``stored_form(canonical(obj))``, key order included."""
    import copy
    import json

    from kubetrain.builders.meta import canonical
    from kubetrain.kube.stored import canonical_stored_form, stored_form

    obj = {"apiVersion": api_version, "kind": kind, **body}
    expected = stored_form(canonical(copy.deepcopy(obj)))
    got = canonical_stored_form(copy.deepcopy(obj))
    assert json.dumps(got) == json.dumps(expected)
