"""`kubetrain convert --compare` against the real controllers (issue 28, "proof by execution").

For a converted job, `kubetrain convert --compare --output json` prints what the pods get on
each side: the v1 job's pods (as the training operator or the MPI Operator creates them) and
the pods of the TrainJob's JobSet (as Kubeflow Trainer v2.3.0, the JobSet controller and the
Job controller create them), each as a *pod view* (`kubetrain.convert.compare.PodView.as_json`:
name, owner, hostname, the pod fields a migration changes, each container's env as written and
as resolved). It also prints the documents each side applies: the v1 job, and the TrainJob
with its TrainingRuntime, as the stack's patches leave them.

Here the real controllers run those documents, one side after the other in the same
namespaces: the v1 job first (read back, deleted, gone), then the TrainJob. Each real pod is
found by its name (the v1 operator's fixed names, a JobSet pod's hostname; a Job's pod by its
name up to the Job controller's random suffix) and projected onto the same view. kubetrain's
printed view is sent to the same server as a Pod with server-side dry-run, so both sides carry
the server's defaults and admission (the ServiceAccount token volume, default tolerations,
port protocols, canonical quantities); then the views are compared field by field, and the
resolved env, names and owners on their own. What is per run (the Job controller's random pod
suffix, the token volume's suffix) is normalised; nothing else is tolerated.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetrain.builders.gang import pod_requests
from kubetrain.convert.compare import container_fields, spec_fields
from kubetrain.kube.quantity import format_quantity

from .cluster import ControlPlane
from .fidelity import compare, dry_run

#: The pod fields of a view that are a pod spec's own (sent to the server as they are).
SPEC_FIELDS = (*spec_fields({}), "hostname", "subdomain")
RANDOM = "<random>"
#: The Job controller names a pod <job>-<index>-<5 random characters> (an Indexed Job) or
#: <job>-<5 random characters> (k8s.io/apiserver names.SimpleNameGenerator).
_SUFFIX = re.compile(r"-[a-z0-9]{5}$")
_TOKEN_VOLUME = re.compile(r"^kube-api-access-[a-z0-9]{5}$")
_ANNOTATION = re.compile(r"^metadata\.(annotations|labels)\['([^']+)'\]$")


def spec_view(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The view's pod-spec part of a pod spec, with the token volume's suffix normalised."""
    out: dict[str, Any] = {
        **spec_fields(spec),
        "hostname": spec.get("hostname"),
        "subdomain": spec.get("subdomain"),
        "containers": [container_fields(c) for c in spec.get("containers") or []],
        "initContainers": [container_fields(c) for c in spec.get("initContainers") or []],
    }
    out = copy.deepcopy(out)
    for volume in out["volumes"]:
        if _TOKEN_VOLUME.match(str(volume.get("name", ""))):
            volume["name"] = "kube-api-access"
    for c in out["containers"] + out["initContainers"]:
        for mount in c["volumeMounts"]:
            if _TOKEN_VOLUME.match(str(mount.get("name", ""))):
                mount["name"] = "kube-api-access"
    return out


def printed_spec(view: Mapping[str, Any]) -> dict[str, Any]:
    """The pod spec a printed view describes (the fields it has, and nothing else)."""
    spec: dict[str, Any] = {k: copy.deepcopy(view[k]) for k in SPEC_FIELDS if view.get(k)}
    for key in ("containers", "initContainers"):
        items = []
        for c in view.get(key) or []:
            items.append({k: copy.deepcopy(c[k]) for k in container_fields(c) if c.get(k)})
        if items:
            spec[key] = items
    return spec


def as_stored(cluster: ControlPlane, namespace: str, view: Mapping[str, Any]) -> dict[str, Any]:
    """A printed view's pod spec as the server stores it (create, server-side dry-run)."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "kubetrain-printed-view", "namespace": namespace},
        "spec": printed_spec(view),
    }
    return spec_view(dry_run(cluster, pod).get("spec") or {})


def real_name(pod: Mapping[str, Any]) -> str:
    """A pod's name, with the Job controller's random suffix as kubetrain prints it."""
    meta = pod.get("metadata") or {}
    name = str(meta.get("name", ""))
    owners = {r.get("kind") for r in meta.get("ownerReferences") or []}
    if "Job" in owners:
        return _SUFFIX.sub(f"-{RANDOM}", name)
    return name


def resolve(pod: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """What the container of the real pod reads for one env entry: a value, a field of the
    pod (its annotations, labels, name, namespace), or where it comes from."""
    if "valueFrom" not in entry:
        return str(entry.get("value", ""))
    source = entry.get("valueFrom") or {}
    meta = pod.get("metadata") or {}
    ref = source.get("fieldRef")
    if isinstance(ref, Mapping):
        path = str(ref.get("fieldPath", ""))
        m = _ANNOTATION.match(path)
        if m:
            return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
        if path == "metadata.name":
            return real_name(pod)
        if path == "metadata.namespace":
            return str(meta.get("namespace", ""))
        return f"<{path}>"
    for key in ("secretKeyRef", "configMapKeyRef"):
        ref = source.get(key)
        if isinstance(ref, Mapping):
            return f"<{key[: -len('KeyRef')]} {ref.get('name')}/{ref.get('key')}>"
    if isinstance(source.get("resourceFieldRef"), Mapping):
        return f"<{source['resourceFieldRef'].get('resource')}>"
    return "<valueFrom>"


def owner_of(pod: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, name) of the pod's controller."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("kind")), str(ref.get("name"))
    return "", ""


@dataclass
class Side:
    """One side of one comparison: the printed views, and the real pods they were found as."""

    label: str  # "v1" or "v2"
    printed: list[dict[str, Any]]
    found: dict[str, dict[str, Any]] = field(default_factory=dict)  # view name -> real pod


def find(printed: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Each printed view's real pod: by its exact name, else (a Job's pod, named with
    `<random>`) by the hostname the view gives or by the name up to the random suffix."""
    pods = list(pods)
    out: dict[str, Any] = {}
    for view in printed:
        name = str(view["name"])
        match = [p for p in pods if p["metadata"]["name"] == name]
        if not match and name.endswith(RANDOM):
            match = [p for p in pods if real_name(p) == name]
            if view.get("hostname"):
                match = [p for p in match if p["spec"].get("hostname") == view["hostname"]]
        if len(match) == 1:
            out[name] = match[0]
    return out


def differences(
    cluster: ControlPlane,
    namespace: str,
    view: Mapping[str, Any],
    pod: Mapping[str, Any],
    job_kind: str,
) -> list[tuple[str, Any, Any]]:
    """Where a printed view and the real pod of a job of `job_kind` differ: (field, printed,
    real). A view whose owner is not a Job ("the training operator") is the job's own pod."""
    out: list[tuple[str, Any, Any]] = []
    stored = as_stored(cluster, namespace, view)
    real = spec_view(pod.get("spec") or {})
    out += compare(stored, real)
    if real_name(pod) != view["name"]:
        out.append(("name", view["name"], real_name(pod)))
    by_name = {c["name"]: c for c in (pod.get("spec") or {}).get("containers") or []}
    by_name |= {c["name"]: c for c in (pod.get("spec") or {}).get("initContainers") or []}
    for key in ("containers", "initContainers"):
        for c in view.get(key) or []:
            got = by_name.get(c["name"])
            if got is None:
                continue  # already a difference of the spec's containers
            resolved = {str(e.get("name")): resolve(pod, e) for e in got.get("env") or []}
            out += compare(c.get("envResolved") or {}, resolved, f"{key}[{c['name']}].envResolved")
    kind, owner = owner_of(pod)
    printed_owner = str(view.get("owner", ""))
    job = re.match(r"^Job (\S+) ", printed_owner)
    if job:
        if (kind, owner) != ("Job", job.group(1)):
            out.append(("owner", printed_owner, f"{kind} {owner}"))
    elif kind != job_kind:
        out.append(("owner", printed_owner, f"{kind} {owner}"))
    summed = pod_requests(pod.get("spec") or {})
    requests = {k: format_quantity(v) for k, v in sorted(summed.items())}
    out += compare(view.get("requests") or {}, requests, "requests")
    return out
