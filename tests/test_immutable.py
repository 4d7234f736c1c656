"""Which edits the API server refuses in place (kubetrain/kube/immutable.py), held against every
update a real kube-apiserver v1.36 labelled (update.jsonl of each apiserver-corpus*), and the rules the
corpus does not sample, case by case after the upstream update validation."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubetrain.kube.immutable import API_SERVER, replacement_field, update_refusals
from kubetrain.validate import Located, Validator

from conftest import needs_apiserver_corpus
from helpers import CORPORA, corpus_records


def _refused_alone(obj: dict[str, Any]) -> bool:
    """Whether kubetrain validate refuses ``obj`` as an object (schema, CRD or server checks)."""
    result = Validator((1, 36)).check(Located(obj, "after.json"))
    return any(f.rule in ("schema", "api", "structure", "crd") for f in result.findings)


@needs_apiserver_corpus
@pytest.mark.parametrize("corpus", CORPORA)
def test_every_update_of_the_corpus_gets_the_servers_verdict(
    capsys: pytest.CaptureFixture[str], corpus: str
) -> None:
    records = corpus_records("update", corpus)
    assert len(records) >= 80
    rows, disagreements, webhooks, alone = [], [], [], []
    for record in records:
        refusals = update_refusals(record["before"], record["after"])
        # The server ran no webhook: what only a webhook refuses is counted apart.
        servers = [r for r in refusals if r.origin == API_SERVER]
        if record["verdict"] == "accepted" and refusals and not servers:
            webhooks.append(f"{record['id']} {'; '.join(map(str, refusals))}")
            continue
        refusals = servers
        if record["verdict"] == "rejected" and not refusals and _refused_alone(record["after"]):
            # Not an edit the server refuses: the new object itself is invalid (a ClusterQueue
            # with a borrowingLimit and no cohort), which kubetrain validate refuses.
            alone.append(record["id"])
            continue
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
            f"{len(webhooks)} refused by a webhook only, {len(alone)} invalid as objects\n"
            + "\n".join(rows + webhooks)
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
        found = update_refusals(record["before"], record["after"])
        if not found and _refused_alone(record["after"]):
            continue  # the new object is invalid itself (see above)
        first = found[0]
        # One error, or several as "\n* path: ..." lines: the first the server names.
        text = record["message"].split(" is invalid: ", 1)[1].lstrip("\n* ")
        server_path = text.split(":", 1)[0]
        if server_path == "spec" and record["kind"] == "Pod":
            assert first.path.startswith("spec."), record["id"]
        elif server_path == "spec.clusterIPs[0]":
            assert first.path == "spec.clusterIP", record["id"]
        elif server_path.startswith(first.path + ".") and record["kind"] == "Job":
            pass  # a suspended Job's template: kubetrain names the template, the server its spec
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
        # SetDefaults_Secret: an empty type is Opaque (found by e2e/test_validation_oracle.py).
        pytest.param({"type": "Opaque"}, {"type": ""}, None, id="empty-type-is-opaque"),
        pytest.param({"type": "Opaque"}, {"type": "kubernetes.io/tls"}, "type", id="type"),
    ],
)
def test_secret_rules(before: dict, after: dict, refused: str | None) -> None:
    def secret(body: dict) -> dict:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, **body}

    refusal = next(iter(update_refusals(secret(before), secret(after))), None)
    assert (refusal.path if refusal else None) == refused


def _trainjob(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec},
    }


def _pytorchjob(queue: str | None) -> dict[str, Any]:
    run_policy: dict[str, Any] = {}
    if queue is not None:
        run_policy = {"schedulingPolicy": {"queue": queue}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"runPolicy": run_policy, "pytorchReplicaSpecs": {}},
    }


# The CRDs' self == oldSelf rules are transition rules: the API server evaluates one only where
# the field is set in both objects (the corpus holds a PyTorchJob whose queue was set on an
# update, accepted; e2e/test_lifecycle.py edits a TrainJob's numNodes on a real server, refused).
@pytest.mark.parametrize(
    ("before", "after", "refused"),
    [
        (_trainjob(trainer={"numNodes": 2}), _trainjob(trainer={"numNodes": 3}), "spec.trainer"),
        (_trainjob(), _trainjob(trainer={"numNodes": 3}), None),
        (_trainjob(trainer={"numNodes": 2}), _trainjob(), None),
        (_trainjob(suspend=False), _trainjob(suspend=True), None),
        (
            _trainjob(activeDeadlineSeconds=60),
            _trainjob(activeDeadlineSeconds=120),
            "spec.activeDeadlineSeconds",
        ),
        (_pytorchjob(None), _pytorchjob("a"), None),
        (_pytorchjob("a"), _pytorchjob("b"), "spec.runPolicy.schedulingPolicy.queue"),
        (_pytorchjob("a"), _pytorchjob(None), None),
    ],
)
def test_crd_transition_rules(before: dict, after: dict, refused: str | None) -> None:
    found = replacement_field(before, after)
    assert (found.path if found else None) == refused


def _flavor(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": "a100"}, "spec": spec}  # fmt: skip


# The transition rules of a third-party kind's real CRD (kubetrain/kube/crds), evaluated with
# oldSelf where both objects hold the field (Kueue v0.19.2's ResourceFlavor and Topology; the
# r4 corpus's update cases r4u0134, r4u0136 and r4u0140 are the server's verdicts).
@pytest.mark.parametrize(
    ("before", "after", "refused"),
    [
        (_flavor(nodeLabels={"gpu": "a100"}, topologyName="dc"),
         _flavor(nodeLabels={"gpu": "h100"}, topologyName="dc"), "spec"),
        (_flavor(nodeLabels={"gpu": "a100"}), _flavor(nodeLabels={"gpu": "h100"}), None),
        (_flavor(nodeLabels={"gpu": "a100"}, topologyName="dc"),
         _flavor(nodeLabels={"gpu": "a100"}, topologyName="dc2"), "spec"),
        (_flavor(nodeLabels={"gpu": "a100"}, topologyName="dc"),
         _flavor(nodeLabels={"gpu": "a100"}, topologyName="dc"), None),
    ],
)  # fmt: skip
def test_a_real_crds_transition_rules(before: dict, after: dict, refused: str | None) -> None:
    found = [r for r in update_refusals(before, after) if r.origin == API_SERVER]
    assert [r.path for r in found][:1] == ([refused] if refused else [])


def test_a_statefulset_switched_to_on_delete_keeps_its_defaulted_rolling_update() -> None:
    # The live object's rollingUpdate came from the server's defaults, owned by no manager:
    # server-side apply keeps it under OnDelete, which the server refuses (r4u0033). Written in
    # the manifest before, it goes with it (r4u0020, accepted).
    def sts(strategy: dict[str, Any] | None) -> dict[str, Any]:
        spec: dict[str, Any] = {"serviceName": "s", "selector": {"matchLabels": {"a": "b"}}}
        if strategy is not None:
            spec["updateStrategy"] = strategy
        return {"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "s", "namespace": "ns"}, "spec": spec}  # fmt: skip

    on_delete = sts({"type": "OnDelete"})
    assert [r.path for r in update_refusals(sts(None), on_delete)] == [
        "spec.updateStrategy.rollingUpdate"
    ]
    explicit = sts({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    assert update_refusals(explicit, on_delete) == []
    assert update_refusals(on_delete, on_delete) == []


def test_a_runtime_patch_keeps_its_containers_once_applied() -> None:
    def patched(image: str) -> dict[str, Any]:
        pod = {"containers": [{"name": "node", "image": image}]}
        job = {"name": "node", "template": {"spec": {"template": {"spec": pod}}}}
        patch = {"manager": "me", "trainingRuntimeSpec": {"template": {"spec": {
            "replicatedJobs": [job]}}}}  # fmt: skip
        return _trainjob(runtimePatches=[patch])

    refusals = update_refusals(patched("a:1"), patched("a:2"))
    assert [r.path for r in refusals] == [
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
        ".template.spec.template.spec.containers"
    ]
    assert update_refusals(patched("a:1"), patched("a:1")) == []


def _queued_job(queue: str | None, suspend: bool | None = None) -> dict[str, Any]:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    spec: dict[str, Any] = {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}
    if suspend is not None:
        spec["suspend"] = suspend
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns", "labels": labels},
        "spec": spec,
    }


# Kueue v0.19.2's validateUpdateForQueueName, seen on the real webhook by e2e/test_lifecycle.py:
# a running Job given a queue is refused, and Flux's force then re-creates it.
@pytest.mark.parametrize(
    ("before", "after", "refused"),
    [
        (_queued_job(None), _queued_job("q"), True),
        (_queued_job("a"), _queued_job("b"), True),
        (_queued_job(None, suspend=True), _queued_job("q", suspend=True), False),
        (_queued_job("q"), _queued_job("q"), False),
        (_queued_job("q"), _queued_job(None), True),  # out of its queue while it runs
        (_queued_job("q", suspend=True), _queued_job(None, suspend=True), False),
        (_queued_job(None), _queued_job(None), False),  # no queue: no Kueue assumed
    ],
)
def test_kueue_refuses_a_new_queue_for_a_running_job(
    before: dict, after: dict, refused: bool
) -> None:
    from kubetrain.kube.immutable import KUEUE_WEBHOOK

    found = [r for r in update_refusals(before, after) if r.origin == KUEUE_WEBHOOK]
    assert bool(found) == refused
    if refused:
        assert found[0].path == "metadata.labels[kueue.x-k8s.io/queue-name]"
        assert found[0].replaceable


@pytest.mark.parametrize("kind", ["PersistentVolumeClaim", "Pod", "StatefulSet"])
def test_an_edit_to_a_spec_of_the_wrong_type_is_no_crash(kind: str) -> None:
    # Found by e2e/test_validation_oracle.py: a PersistentVolumeClaim's spec set to 1.5 crashed
    # the update rules (the schema reports the type).
    api = "apps/v1" if kind == "StatefulSet" else "v1"
    before = {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ns"},
              "spec": {"accessModes": ["ReadWriteOnce"]}}  # fmt: skip
    after = {**before, "spec": 1.5}
    assert isinstance(update_refusals(before, after), list)
    assert isinstance(update_refusals(after, before), list)
