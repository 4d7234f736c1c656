"""Which edits the API server refuses in place (kubetrain/kube/immutable.py), held against every
update a real kube-apiserver v1.36 labelled (apiserver-corpus/update.jsonl), and the rules the
corpus does not sample, case by case after the upstream update validation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetrain.kube.immutable import API_SERVER, replacement_field, update_refusals

from conftest import needs_apiserver_corpus
from helpers import CORPORA, corpus_records


@needs_apiserver_corpus
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_update_of_the_corpus_gets_the_servers_verdict(
    capsys: pytest.CaptureFixture[str], corpus: str
) -> None:
    records = corpus_records("update", corpus)
    assert len(records) >= 80
    rows, disagreements, webhooks = [], [], []
    for record in records:
        refusals = update_refusals(record["before"], record["after"])
        # The server ran no webhook: what only a webhook refuses is counted apart.
        servers = [r for r in refusals if r.origin == API_SERVER]
        if record["verdict"] == "accepted" and refusals and not servers:
            webhooks.append(f"{record['id']} {'; '.join(map(str, refusals))}")
            continue
        refusals = servers
        ours = "rejected" if refusals else "accepted"
        rows.append(
            f"{record['id']:16} {record['kind']:15} server={record['verdict']:8} "
            f"kubetrain={ours:8} {'; '.join(map(str, refusals))[:100]}"
        )
        if ours != record["verdict"]:
            disagreements.append(f"{rows[-1]}\n    {record['variant']}: {record['message'][:300]}")
    with capsys.disabled():
        print(
            f"\n{corpus}: {len(records)} updates, {len(disagreements)} disagreements, "
            f"{len(webhooks)} refused by a webhook only\n" + "\n".join(rows + webhooks)
        )
    assert not disagreements, "\n".join(disagreements)
    if corpus == "apiserver-corpus-r3":
        # The JobSet webhook's: replicatedJobs and managedBy edited in place.
        assert len(webhooks) == 4 and all("(JobSet webhook)" in w for w in webhooks), webhooks


@needs_apiserver_corpus
@pytest.mark.parametrize("corpus", CORPORA)
def test_the_refusal_names_the_field_the_server_names(corpus: str) -> None:
    """Where the server names a single field, kubetrain names it too (the pod rule names the
    field inside the spec, more than the server's ``spec``)."""
    checked = 0
    for record in corpus_records("update", corpus):
        if record["verdict"] != "rejected":
            continue
        first = update_refusals(record["before"], record["after"])[0]
        # One error, or several as "\n* path: ..." lines: the first the server names.
        text = record["message"].split(" is invalid: ", 1)[1].lstrip("\n* ")
        server_path = text.split(":", 1)[0]
        if server_path == "spec" and record["kind"] == "Pod":
            assert first.path.startswith("spec."), record["id"]
        elif server_path == "spec.clusterIPs[0]":
            assert first.path == "spec.clusterIP", record["id"]
        elif server_path != "spec":  # StatefulSet: the server says spec, kubetrain the field
            assert first.path == server_path, (record["id"], first.path, server_path)
        checked += 1
    assert checked >= 25


POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {
        "activeDeadlineSeconds": 600,
        "containers": [{"name": "c", "image": "i:1", "resources": {"limits": {"cpu": 1}}}],
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "schedulingGates": [{"name": "g"}],
        "terminationGracePeriodSeconds": -1,
    },
}
JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j", "namespace": "ns"},
    "spec": {
        "parallelism": 2,
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]},
        },
    },
}


def edited(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    *parents, last = path.split(".")
    node = out
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if value is None:
        del node[last]
    else:
        node[last] = value
    return out


@pytest.mark.parametrize(
    ("before", "after", "refused"),
    [
        # ValidatePodUpdate
        pytest.param(
            POD, edited(POD, "spec.activeDeadlineSeconds", 300), None, id="pod-deadline-lowered"
        ),
        pytest.param(
            POD,
            edited(POD, "spec.activeDeadlineSeconds", 900),
            "spec.activeDeadlineSeconds",
            id="pod-deadline-raised",
        ),
        pytest.param(
            POD,
            edited(POD, "spec.activeDeadlineSeconds", None),
            "spec.activeDeadlineSeconds",
            id="pod-deadline-removed",
        ),
        pytest.param(
            POD,
            edited(POD, "spec.tolerations", []),
            "spec.tolerations",
            id="pod-toleration-removed",
        ),
        pytest.param(POD, edited(POD, "spec.schedulingGates", []), None, id="pod-gate-removed"),
        pytest.param(
            POD,
            edited(POD, "spec.schedulingGates", [{"name": "g"}, {"name": "h"}]),
            "spec.schedulingGates[1].name",
            id="pod-gate-added",
        ),
        pytest.param(
            POD,
            edited(POD, "spec.terminationGracePeriodSeconds", 1),
            None,
            id="pod-grace-negative-to-1",
        ),
        pytest.param(
            POD,
            edited(POD, "spec.containers.0.resources.limits.cpu", "1"),
            None,
            id="pod-same-quantity-as-string",
        ),
        pytest.param(
            POD,
            edited(POD, "spec.containers.0.resources.limits.cpu", "1000m"),
            None,
            id="pod-same-quantity-in-milli",
        ),
        pytest.param(
            POD, edited(POD, "spec.containers", []), "spec.containers", id="pod-container-removed"
        ),
        pytest.param(POD, edited(POD, "spec.nodeName", "n1"), "spec.nodeName", id="pod-node-name"),
        # ValidateJobSpecUpdate
        pytest.param(
            JOB,
            edited(JOB, "spec.template.spec.nodeSelector", {"a": "b"}),
            "spec.template",
            id="job-template",
        ),
        pytest.param(
            edited(JOB, "spec.suspend", True),
            edited(
                edited(JOB, "spec.suspend", True), "spec.template.spec.nodeSelector", {"a": "b"}
            ),
            None,
            id="suspended-job-scheduling-directives",
        ),
        pytest.param(
            edited(JOB, "spec.suspend", True),
            edited(edited(JOB, "spec.suspend", True), "spec.template.spec.containers.0.image", "j"),
            "spec.template",
            id="suspended-job-image",
        ),
        pytest.param(
            edited(edited(JOB, "spec.completionMode", "Indexed"), "spec.completions", 2),
            edited(
                edited(edited(JOB, "spec.completionMode", "Indexed"), "spec.completions", 4),
                "spec.parallelism",
                4,
            ),
            None,
            id="elastic-indexed-job",
        ),
        pytest.param(
            JOB,
            edited(JOB, "spec.completionMode", "Indexed"),
            "spec.completionMode",
            id="job-completion-mode",
        ),
        pytest.param(
            JOB,
            edited(JOB, "spec.completionMode", "NonIndexed"),
            None,
            id="job-completion-mode-default",
        ),
    ],
)
def test_update_rules(before: dict[str, Any], after: dict[str, Any], refused: str | None) -> None:
    refusal = replacement_field(before, after)
    assert (refusal.path if refusal else None) == refused


@pytest.mark.parametrize(
    ("kind", "api_version", "before", "after", "refused"),
    [
        pytest.param(
            "StatefulSet",
            "apps/v1",
            {},
            {"podManagementPolicy": "OrderedReady"},
            None,
            id="statefulset-default-written",
        ),
        pytest.param(
            "StatefulSet",
            "apps/v1",
            {},
            {"podManagementPolicy": "Parallel"},
            "spec.podManagementPolicy",
            id="statefulset-gang-on",
        ),
        pytest.param(
            "StatefulSet",
            "apps/v1",
            {"volumeClaimTemplates": []},
            {"volumeClaimTemplates": [{"metadata": {"name": "d"}}]},
            "spec.volumeClaimTemplates",
            id="statefulset-claims",
        ),
        pytest.param(
            "Deployment",
            "apps/v1",
            {"selector": {"matchLabels": {"a": "b"}}},
            {"selector": {"matchLabels": {"a": "c"}}},
            "spec.selector",
            id="deployment-selector",
        ),
        pytest.param(
            "Service",
            "v1",
            {"clusterIP": "None"},
            {"type": "ExternalName", "clusterIP": "", "externalName": "x"},
            None,
            id="service-to-external-name",
        ),
        pytest.param(
            "Service",
            "v1",
            {"clusterIP": "None"},
            {"type": "NodePort", "clusterIP": "None"},
            "spec.clusterIP",
            id="headless-node-port",
        ),
        pytest.param(
            "Service",
            "v1",
            {"type": "LoadBalancer", "loadBalancerClass": "a.io/lb"},
            {"type": "LoadBalancer", "loadBalancerClass": "b.io/lb"},
            "spec.loadBalancerClass",
            id="service-lb-class",
        ),
        pytest.param(
            "Service",
            "v1",
            {"ipFamilies": ["IPv4"]},
            {"ipFamilies": ["IPv6"]},
            "spec.ipFamilies[0]",
            id="service-primary-family",
        ),
        pytest.param(
            "Service",
            "v1",
            {
                "type": "LoadBalancer",
                "externalTrafficPolicy": "Local",
                "healthCheckNodePort": 30100,
            },
            {
                "type": "LoadBalancer",
                "externalTrafficPolicy": "Local",
                "healthCheckNodePort": 30200,
            },
            "spec.healthCheckNodePort",
            id="service-health-check-port",
        ),
        pytest.param(
            "Service",
            "v1",
            {
                "type": "LoadBalancer",
                "externalTrafficPolicy": "Local",
                "healthCheckNodePort": 30100,
            },
            {"type": "LoadBalancer", "externalTrafficPolicy": "Cluster"},
            None,
            id="service-health-check-no-longer-needed",
        ),
        pytest.param(
            "PersistentVolumeClaim",
            "v1",
            {"resources": {"requests": {"storage": "1Gi"}}},
            {"resources": {"requests": {"storage": "2Gi"}}},
            None,
            id="pvc-expansion",
        ),
        pytest.param(
            "PersistentVolumeClaim",
            "v1",
            {"resources": {"requests": {"storage": "2Gi"}}},
            {"resources": {"requests": {"storage": "1536Mi"}}},
            "spec.resources.requests.storage",
            id="pvc-shrink",
        ),
        pytest.param(
            "PersistentVolumeClaim",
            "v1",
            {"storageClassName": "a"},
            {"storageClassName": "b"},
            "spec.storageClassName",
            id="pvc-storage-class",
        ),
        pytest.param(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            {"scope": "Namespaced"},
            {},
            None,
            id="crd-scope-default",
        ),
        pytest.param(
            "CustomResourceDefinition",
            "apiextensions.k8s.io/v1",
            {"scope": "Namespaced"},
            {"scope": "Cluster"},
            "spec.scope",
            id="crd-scope",
        ),
        pytest.param(
            "PodGroup",
            "scheduling.volcano.sh/v1beta1",
            {"minMember": 2},
            {"minMember": 3},
            None,
            id="custom-resource",
        ),
    ],
)
def test_spec_rules(
    kind: str, api_version: str, before: dict, after: dict, refused: str | None
) -> None:
    def obj(spec: dict) -> dict:
        return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec}

    refusal = next(iter(update_refusals(obj(before), obj(after))), None)
    assert (refusal.path if refusal else None) == refused


def test_headless_load_balancer_is_refused_but_not_replaceable() -> None:
    """A replacement would be refused too: ``plan`` must not promise one."""
    before = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"clusterIP": "None"},
    }
    after = edited(before, "spec.type", "LoadBalancer")
    assert [r.replaceable for r in update_refusals(before, after)] == [False]
    assert replacement_field(before, after) is None


@pytest.mark.parametrize(
    ("before", "after", "refused"),
    [
        pytest.param(
            {"immutable": True, "data": {"a": "eA=="}},
            {"immutable": True, "data": {"a": "eQ=="}},
            "data",
            id="immutable-data",
        ),
        pytest.param({"immutable": True}, {}, "immutable", id="immutable-unset"),
        pytest.param({}, {"type": "Opaque"}, None, id="default-type-written"),
    ],
)
def test_secret_rules(before: dict, after: dict, refused: str | None) -> None:
    def secret(body: dict) -> dict:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, **body}

    refusal = next(iter(update_refusals(secret(before), secret(after))), None)
    assert (refusal.path if refusal else None) == refused
