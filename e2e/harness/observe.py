"""What an engine did, read back from the cluster: which objects were created, changed in
place, re-created (a new UID), deleted or left behind, and which jobs' pods were re-created
(their training restarted). Compared with what `kubetrain plan --output json` said.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .cluster import ControlPlane

Key = tuple[str, str, str, str]  # group, kind, namespace, name


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")).rpartition("/")[0],
        str(obj["kind"]),
        str(meta.get("namespace") or ""),
        str(meta["name"]),
    )


def show(key: Key) -> str:
    group, kind, ns, name = key
    gk = f"{kind}.{group}" if group else kind
    return f"{gk} {ns}/{name}" if ns else f"{gk} {name}"


@dataclass(frozen=True)
class Resource:
    path: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    namespaced: bool


class Discovery:
    def __init__(self, cluster: ControlPlane):
        self.cluster = cluster
        self._map: dict[tuple[str, str], Resource] = {}

    def refresh(self) -> None:
        found: dict[tuple[str, str], Resource] = {}
        core = self.cluster.get("/api/v1")
        for r in core["resources"]:
            if "/" not in r["name"]:
                found[("", r["kind"])] = Resource("/api/v1", r["name"], r["namespaced"])
        groups = self.cluster.get("/apis")["groups"]
        for g in groups:
            version = g["preferredVersion"]["groupVersion"]
            body = self.cluster.get(f"/apis/{version}")
            if not body:
                continue
            for r in body["resources"]:
                if "/" not in r["name"]:
                    found[(g["name"], r["kind"])] = Resource(
                        f"/apis/{version}", r["name"], r["namespaced"]
                    )
        self._map = found

    def resource(self, group: str, kind: str) -> Resource | None:
        if (group, kind) not in self._map:
            self.refresh()
        return self._map.get((group, kind))

    def url(self, key: Key) -> str | None:
        group, kind, ns, name = key
        res = self.resource(group, kind)
        if res is None:
            return None
        if res.namespaced:
            return f"{res.path}/namespaces/{ns}/{res.plural}/{name}"
        return f"{res.path}/{res.plural}/{name}"


@cache
def discovery(cluster: ControlPlane) -> Discovery:
    return Discovery(cluster)


@dataclass
class Snapshot:
    objects: dict[Key, dict[str, Any]]  # key -> uid, resourceVersion, deleting
    pods: dict[tuple[str, str], set[str]]  # (namespace, job instance) -> pod uids
    taken: float = field(default_factory=time.time)


#: The field managers each engine writes with: an object "changes" under an engine when the
#: engine's own managedFields entries change (its apply or update wrote something); what the
#: controllers write (status, their labels) is theirs.
ENGINE_MANAGERS: dict[str, tuple[str, ...]] = {
    "kubectl": ("kubetrain",),
    "flux": ("kustomize-controller",),
    "argocd": ("argocd-controller", "kubectl"),
    "pulumi": ("pulumi-kubernetes",),
}


def _written_by(meta: dict[str, Any], managers: tuple[str, ...] | None) -> Any:
    if managers is None:
        return meta["resourceVersion"]
    return sorted(
        (m.get("manager", ""), m.get("operation", ""), m.get("time", ""), json.dumps(
            m.get("fieldsV1"), sort_keys=True))
        for m in meta.get("managedFields") or []
        if m.get("subresource") != "status" and m.get("manager", "").startswith(managers)
    )  # fmt: skip


def snapshot(
    cluster: ControlPlane,
    keys: Iterable[Key],
    namespaces: Iterable[str],
    managers: tuple[str, ...] | None = None,
) -> Snapshot:
    """UIDs and what `managers` wrote of `keys` (one list request per kind and namespace; every
    write when no managers are given), and the pods of every job in `namespaces`."""
    disc = discovery(cluster)
    wanted = set(keys)
    by_list: dict[str, set[Key]] = {}
    for key in wanted:
        group, kind, ns, _ = key
        res = disc.resource(group, kind)
        if res is None:
            continue
        url = (
            f"{res.path}/namespaces/{ns}/{res.plural}"
            if res.namespaced
            else (f"{res.path}/{res.plural}")
        )
        by_list.setdefault(url, set()).add(key)
    objects: dict[Key, dict[str, Any]] = {}
    for url, members in sorted(by_list.items()):
        listing = cluster.get(url) or {}
        sample = next(iter(members))
        for obj in listing.get("items", []):
            meta = obj["metadata"]
            key = (sample[0], sample[1], meta.get("namespace", ""), meta["name"])
            if key in members:
                objects[key] = {
                    "uid": meta["uid"],
                    "written": _written_by(meta, managers),
                    "deleting": bool(meta.get("deletionTimestamp")),
                }
    pods: dict[tuple[str, str], set[str]] = {}
    for ns in sorted(set(namespaces)):
        listing = cluster.get(f"/api/v1/namespaces/{ns}/pods")
        for pod in (listing or {}).get("items", []):
            labels = pod["metadata"].get("labels") or {}
            job = labels.get("app.kubernetes.io/instance") or labels.get(
                "training.kubeflow.org/job-name", ""
            )
            if job and not pod["metadata"].get("deletionTimestamp"):
                pods.setdefault((ns, job), set()).add(pod["metadata"]["uid"])
    return Snapshot(objects, pods)


def observed(before: Snapshot, after: Snapshot, key: Key) -> str:
    """add, delete, change (same UID, written anew by the engine), replace (new UID),
    unchanged, or absent (neither before nor after)."""
    b, a = before.objects.get(key), after.objects.get(key)
    if a is not None and a["deleting"]:
        a = None
    if b is None and a is None:
        return "absent"
    if b is None:
        return "add"
    if a is None:
        return "delete"
    if b["uid"] != a["uid"]:
        return "replace"
    return "unchanged" if b["written"] == a["written"] else "change"


def restarted(before: Snapshot, after: Snapshot) -> set[tuple[str, str]]:
    """Jobs (namespace, name) whose pods were re-created: a pod before is gone and the job has
    pods after."""
    out = set()
    for job, pods in before.pods.items():
        now = after.pods.get(job, set())
        if pods - now and now:
            out.add(job)
    return out


def stopped(before: Snapshot, after: Snapshot) -> set[tuple[str, str]]:
    return {job for job, pods in before.pods.items() if pods and not after.pods.get(job)}


def settle(cluster: ControlPlane, namespaces: Iterable[str], timeout: float = 120) -> None:
    """Wait until the controllers are done with what was applied: no pod terminating, no pod
    whose Job is gone, every running Job with its pods, and nothing changing for a second."""
    namespaces = sorted(set(namespaces))
    deadline = time.monotonic() + timeout
    last: Any = None
    stable_since = time.monotonic()
    reasons: list[str] = []
    churn: dict[str, int] = {}  # what kept changing: a diagnosis when nothing else is busy
    while time.monotonic() < deadline:
        state = []
        busy = False
        reasons = []
        for ns in namespaces:
            pods = (cluster.get(f"/api/v1/namespaces/{ns}/pods") or {}).get("items", [])
            jobs = (cluster.get(f"/apis/batch/v1/namespaces/{ns}/jobs") or {}).get("items", [])
            job_uids = {
                j["metadata"]["uid"] for j in jobs if not j["metadata"].get("deletionTimestamp")
            }
            for pod in pods:
                meta = pod["metadata"]
                state.append((f"pod {ns}/{meta['name']}", meta["uid"], meta["resourceVersion"]))
                if meta.get("deletionTimestamp"):
                    busy = True
                    reasons.append(f"pod {ns}/{meta['name']} terminating")
                for ref in meta.get("ownerReferences") or []:
                    if ref["kind"] == "Job" and ref["uid"] not in job_uids:
                        busy = True
                        reasons.append(f"pod {ns}/{meta['name']} of a deleted Job")
            for job in jobs:
                meta = job["metadata"]
                state.append((f"job {ns}/{meta['name']}", meta["uid"], meta["resourceVersion"]))
                if meta.get("deletionTimestamp"):
                    busy = True
                    reasons.append(f"job {ns}/{meta['name']} deleting")
                    continue
                spec, status = job["spec"], job.get("status") or {}
                done = any(
                    c["type"] in ("Complete", "Failed") and c["status"] == "True"
                    for c in status.get("conditions", [])
                )
                if spec.get("suspend") or done:
                    continue
                want = spec.get("parallelism", 1)
                if want and not status.get("active"):
                    busy = True
                    reasons.append(f"job {ns}/{meta['name']} has no active pod")
        if state != last:
            for entry in set(state).symmetric_difference(last) if last is not None else ():
                churn[entry[0]] = churn.get(entry[0], 0) + 1
            last, stable_since = state, time.monotonic()
        elif not busy and time.monotonic() - stable_since >= 1.0:
            return
        time.sleep(0.3)
    events = []
    for ns in namespaces:
        listing = cluster.get(f"/api/v1/namespaces/{ns}/events") or {}
        for e in listing.get("items", []):
            if e.get("type") == "Warning":
                obj = e.get("involvedObject", {})
                events.append(f"{obj.get('kind')} {ns}/{obj.get('name')}: {e.get('message')}")
    raise TimeoutError(
        f"the cluster did not settle in {timeout:.0f} s (namespaces {namespaces}): "
        + "; ".join(reasons[:20])
        + "\nchanged most often: "
        + ", ".join(f"{what} ({n})" for what, n in sorted(churn.items(), key=lambda i: -i[1])[:15])
        + "\nwarning events:\n"
        + "\n".join(events[-30:])
    )
