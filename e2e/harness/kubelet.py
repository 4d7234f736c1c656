"""A stand-in for the scheduler and the kubelet: pods are bound and their status set by hand.

There is no container runtime here. Where a test needs a pod to run or to end, this module
does through the API what the scheduler and a kubelet would: binds the pod to a node
(`pods/binding`), then writes its status (`pods/status`): Running and Ready with running
containers, or Succeeded / Failed with each container terminated with an exit code, and the
conditions a kubelet sets (PodScheduled, Initialized, ContainersReady, Ready,
PodReadyToStartContainers). The Job, StatefulSet and ReplicaSet controllers, the operators and
Pulumi's awaiters then see what they would see on a real cluster.

`Kubelet.start()` runs a loop that does this for every new pod a scheduler would place: pods
of the default scheduler (a gang scheduler's pods wait for their PodGroup; a test runs them
with `run()` when it means to); `auto=False` leaves every pod Pending until a test says. The
loop also provisions a volume for every claim of the default StorageClass, as its CSI driver
would.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from .cluster import ControlPlane
from .loop import Loop

NODE = "kubetrain-e2e-node"
#: The default StorageClass's provisioner (harness.cluster creates the class).
PROVISIONER = "kubetrain.io/e2e-none"
MERGE = "application/merge-patch+json"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(kind: str, status: bool, reason: str | None = None) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": kind, "status": "True" if status else "False"}
    cond["lastTransitionTime"] = now()
    cond["lastProbeTime"] = None
    if reason:
        cond["reason"] = reason
    return cond


class Kubelet:
    def __init__(self, cluster: ControlPlane, auto: bool = True, schedulers=("default-scheduler",)):
        self.cluster = cluster
        self.auto = auto
        self.schedulers = set(schedulers)
        self._loop = Loop(self.tick, "kubelet")
        self._seen: set[str] = set()
        self._ip = 0
        self.errors = self._loop.errors

    # -- the node ---------------------------------------------------------------------------
    def register_node(self) -> None:
        cp = self.cluster
        capacity = {
            "cpu": "1000",
            "memory": "4Ti",
            "pods": "10000",
            "ephemeral-storage": "100Ti",
            "nvidia.com/gpu": "1000",
            "amd.com/gpu": "1000",
        }
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": NODE,
                "labels": {"kubernetes.io/hostname": NODE, "kubernetes.io/os": "linux"},
            },
        }
        status, body = cp.request("POST", "/api/v1/nodes", node)
        if status not in (201, 409):
            raise RuntimeError(f"creating node: {status} {body}")
        patch = {
            "status": {
                "capacity": capacity,
                "allocatable": capacity,
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "lastHeartbeatTime": now(),
                        "lastTransitionTime": now(),
                    }
                ],
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                "nodeInfo": {
                    "architecture": "amd64",
                    "operatingSystem": "linux",
                    "kubeletVersion": "v1.36.2",
                    "containerRuntimeVersion": "none://0",
                    "kernelVersion": "",
                    "osImage": "",
                    "bootID": "",
                    "machineID": "",
                    "systemUUID": "",
                    "kubeProxyVersion": "",
                },
            }
        }
        status, body = cp.request("PATCH", f"/api/v1/nodes/{NODE}/status", patch, MERGE)
        if status != 200:
            raise RuntimeError(f"node status: {status} {body}")

    # -- one pod ----------------------------------------------------------------------------
    def bind(self, pod: dict[str, Any]) -> None:
        if pod["spec"].get("nodeName"):
            return
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": NODE},
        }
        status, body = self.cluster.request(
            "POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding", binding
        )
        if status not in (201, 409):
            raise RuntimeError(f"binding {ns}/{name}: {status} {body}")

    def _patch_status(self, pod: dict[str, Any], status_body: dict[str, Any]) -> dict[str, Any]:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        code, body = self.cluster.request(
            "PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status", {"status": status_body}, MERGE
        )
        if code != 200:
            raise RuntimeError(f"status of {ns}/{name}: {code} {body}")
        return body

    def _next_ip(self) -> str:
        self._ip += 1
        return f"10.244.{self._ip // 250}.{self._ip % 250 + 1}"

    def run(self, pod: dict[str, Any], ready: bool = True) -> dict[str, Any]:
        """Bind `pod` and mark it Running (and Ready, unless ready=False)."""
        self.bind(pod)
        started = now()
        statuses = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": ready,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
            }
            for c in pod["spec"]["containers"]
        ]
        init = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": started,
                        "finishedAt": started,
                    }
                },
            }
            for c in pod["spec"].get("initContainers", [])
        ]
        ip = self._next_ip()
        body = {
            "phase": "Running",
            "hostIP": "127.0.0.1",
            "hostIPs": [{"ip": "127.0.0.1"}],
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": started,
            "conditions": [
                _condition("PodReadyToStartContainers", True),
                _condition("Initialized", True),
                _condition("Ready", ready),
                _condition("ContainersReady", ready),
                _condition("PodScheduled", True),
            ],
            "containerStatuses": statuses,
        }
        if init:
            body["initContainerStatuses"] = init
        return self._patch_status(pod, body)

    def finish(self, pod: dict[str, Any], exit_code: int = 0, reason: str | None = None):
        """End `pod`: Succeeded when exit_code is 0, else Failed; each container terminated."""
        pod = self.get(pod)
        if pod["status"].get("phase") not in ("Running",):
            pod = self.run(pod)
        finished = now()
        terminated = {
            "exitCode": exit_code,
            "reason": reason or ("Completed" if exit_code == 0 else "Error"),
            "startedAt": pod["status"].get("startTime", finished),
            "finishedAt": finished,
        }
        statuses = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"terminated": terminated},
            }
            for c in pod["spec"]["containers"]
        ]
        body = {
            "phase": "Succeeded" if exit_code == 0 else "Failed",
            "conditions": [
                _condition("PodReadyToStartContainers", False),
                _condition("Initialized", True),
                _condition("Ready", False, "PodCompleted" if exit_code == 0 else "PodFailed"),
                _condition(
                    "ContainersReady", False, "PodCompleted" if exit_code == 0 else "PodFailed"
                ),
                _condition("PodScheduled", True),
            ],
            "containerStatuses": statuses,
        }
        return self._patch_status(pod, body)

    def terminate(self, pod: dict[str, Any]) -> None:
        """What a kubelet does with a pod being deleted: stop it, then remove it for good."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        body = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            "preconditions": {"uid": pod["metadata"]["uid"]},
        }
        status, answer = self.cluster.request(
            "DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", body
        )
        if status not in (200, 202, 404, 409):
            raise RuntimeError(f"removing {ns}/{name}: {status} {answer}")

    def get(self, pod: dict[str, Any]) -> dict[str, Any]:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        found = self.cluster.get(f"/api/v1/namespaces/{ns}/pods/{name}")
        if found is None:
            raise LookupError(f"pod {ns}/{name} is gone")
        return found

    def pods(self, namespace: str | None = None, selector: str = "") -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
        return self.cluster.get(path, query=f"labelSelector={selector}" if selector else "")[
            "items"
        ]

    # -- the loop ---------------------------------------------------------------------------
    def start(self) -> Kubelet:
        self.register_node()
        if self.auto:
            self._loop.start()
        return self

    def stop(self) -> None:
        self._loop.stop()

    def provision(self) -> None:
        """What a CSI provisioner does for a claim of the default StorageClass: a volume of its
        size, pre-bound to it (the persistent volume controller then binds them)."""
        claims = self.cluster.get("/api/v1/persistentvolumeclaims")["items"]
        for claim in claims:
            meta, spec = claim["metadata"], claim["spec"]
            if spec.get("volumeName") or meta.get("deletionTimestamp"):
                continue
            if spec.get("storageClassName") != "standard":
                continue
            uid = meta["uid"]
            if uid in self._seen:
                continue
            self._seen.add(uid)
            volume = {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {
                    "name": f"pvc-{uid}",
                    "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
                },
                "spec": {
                    "capacity": {"storage": spec["resources"]["requests"]["storage"]},
                    "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Delete",
                    "storageClassName": "standard",
                    "volumeMode": spec.get("volumeMode", "Filesystem"),
                    "hostPath": {"path": f"/var/lib/kubetrain-e2e/{uid}"},
                    "claimRef": {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "namespace": meta["namespace"],
                        "name": meta["name"],
                        "uid": uid,
                    },
                },
            }
            status, body = self.cluster.request("POST", "/api/v1/persistentvolumes", volume)
            if status not in (201, 409):
                raise RuntimeError(f"provisioning {meta['namespace']}/{meta['name']}: {body}")

    def tick(self) -> None:
        """Place and start every new pod of a default-scheduler; provision new claims."""
        self.provision()
        for pod in self.pods():
            uid = pod["metadata"]["uid"]
            if pod["metadata"].get("deletionTimestamp"):
                self.terminate(pod)
                continue
            if uid in self._seen:
                continue
            if pod["spec"].get("schedulerName", "default-scheduler") not in self.schedulers:
                continue
            if pod["status"].get("phase") not in (None, "Pending"):
                self._seen.add(uid)
                continue
            if pod["spec"].get("schedulingGates"):
                continue
            self._seen.add(uid)
            try:
                self.run(pod)
            except RuntimeError as exc:
                if "NotFound" not in str(exc) and " 404 " not in str(exc):
                    raise

    def wait_idle(self, seconds: float = 1.0) -> None:
        """Let the loop place what was just created."""
        time.sleep(seconds)
