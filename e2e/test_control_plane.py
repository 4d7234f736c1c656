"""The control plane itself: the versions built, the CRDs installed, controllers and the
kubelet stand-in doing what a cluster does for a Job."""

from __future__ import annotations

from harness import crds
from harness.cluster import wait_for


def test_the_server_is_the_release_the_corpora_were_labelled_with(cluster):
    assert cluster.get("/version")["gitVersion"] == "v1.36.2"


def test_every_shared_and_kubetrain_crd_is_established(cluster):
    expected = {c["metadata"]["name"] for c in crds.shared_crds() + crds.kubetrain_crds()}
    assert len(expected) >= 25
    served = {
        c["metadata"]["name"]
        for c in cluster.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]
    }
    assert expected <= served


def test_a_job_runs_to_completion_through_the_job_controller(cluster, kubelet):
    cluster.kubectl("create", "namespace", "e2e-smoke")
    wait_for(
        "default ServiceAccount",
        lambda: cluster.get("/api/v1/namespaces/e2e-smoke/serviceaccounts/default"),
        60,
    )
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "smoke", "namespace": "e2e-smoke"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36"}],
                }
            },
        },
    }
    status, body = cluster.request("POST", "/apis/batch/v1/namespaces/e2e-smoke/jobs", job)
    assert status == 201, body
    pods = wait_for(
        "the Job's pod running",
        lambda: [
            p
            for p in kubelet.pods("e2e-smoke", "job-name=smoke")
            if p["status"].get("phase") == "Running"
        ],
        60,
    )
    assert len(pods) == 1
    kubelet.finish(pods[0], 0)

    def complete():
        got = cluster.get("/apis/batch/v1/namespaces/e2e-smoke/jobs/smoke")
        return any(
            c["type"] == "Complete" and c["status"] == "True"
            for c in got.get("status", {}).get("conditions", [])
        )

    wait_for("the Job Complete", complete, 60)
    assert not kubelet.errors
