"""Native mode against the real operators (issue 26, "fidelity as a differential test").

For one stack, kubetrain renders every job twice: in operator mode (the custom resource) and in
native mode (the objects kubetrain says the operator creates: bare Pods for the Kubeflow replica
kinds, as the training operator creates them). The custom resources are applied and the real
operator reconciles them; what it created is read back. kubetrain's native objects are sent to
the same server with server-side dry-run, so both sides carry the server's defaults (and the
same admission: ServiceAccount tokens, the JobSet and Job defaults). Then both are normalised,
only for what is per run (`normalise`), and compared field by field (`compare`).

What kubetrain does differently on purpose is a `Tolerance`: named, with its reason (the same
as in docs/fidelity.md, "Tolerated differences of the differential test"), applied to both
sides before comparing; each records whether it changed anything, and the test fails on a
tolerance that no case needed (a stale entry pins nothing).
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import permutations
from pathlib import Path
from typing import Any

import yaml

from kubetrain.builders.gang import GROUP_NAME_ANNOTATION
from kubetrain.kube.quantity import parse_quantity

from .cluster import ControlPlane
from .observe import Key, discovery, key_of, show

#: The kinds an operator creates for a job, and kubetrain's native mode with it.
COMPARED: set[tuple[str, str]] = {
    ("", "Pod"),
    ("", "Service"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("batch", "Job"),
    ("jobset.x-k8s.io", "JobSet"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("scheduling.volcano.sh", "PodGroup"),
    ("scheduling.x-k8s.io", "PodGroup"),
}
#: The kinds of the custom resources the operators reconcile.
CUSTOM = {
    ("kubeflow.org", "PyTorchJob"),
    ("kubeflow.org", "TFJob"),
    ("kubeflow.org", "XGBoostJob"),
    ("kubeflow.org", "PaddleJob"),
    ("kubeflow.org", "JAXJob"),
    ("kubeflow.org", "MPIJob"),
    ("trainer.kubeflow.org", "TrainJob"),
    ("batch.volcano.sh", "Job"),
}
#: Server-filled, per-run metadata: never compared.
PER_RUN_META = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "ownerReferences",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
#: Labels and annotations the Job controller writes from the Job's UID (per run).
UID_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


def gk(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))


# -- tolerances -------------------------------------------------------------------------------
@dataclass
class Tolerance:
    """A difference kubetrain makes on purpose: `apply(obj, side)` rewrites one normalised object
    of side "native" or "operator" in place. It is used (pinned) by a comparison that finds
    more differences without it than with every tolerance."""

    name: str
    reason: str
    apply: Callable[[dict[str, Any], str], Any]
    used: set[str] = field(default_factory=set)  # the job kinds whose objects needed it
    #: A difference that shows or not from run to run (an operator's random order): pinned by
    #: this record being met instead (a comparison may not need it this run).
    met: set[tuple[str, str]] | None = None

    @property
    def pinned(self) -> bool:
        return bool(self.met) if self.met is not None else bool(self.used)


def compared(
    native: Mapping[str, Any], operator: Mapping[str, Any], tolerances: Iterable[Tolerance]
) -> list[tuple[str, Any, Any]]:
    """The differences of two objects, normalised and with `tolerances` applied."""
    a, b = normalise(native), normalise(operator)
    for tol in tolerances:
        tol.apply(a, "native")
        tol.apply(b, "operator")
    return compare(a, b)


_OWN_PREFIXES = (
    "app.kubernetes.io/",
    "kubetrain.io/",
    "argocd.argoproj.io/",
    "kustomize.toolkit.fluxcd.io/",
    "pulumi.com/",
)


def _own_metadata(obj: dict[str, Any], side: str) -> bool:
    """kubetrain's own keys, on its objects and on what an operator copies from the custom
    resource kubetrain rendered (the PodGroup gets the job's annotations, SyncPodGroup)."""
    changed = False
    for meta in _metas(obj):
        for key in ("labels", "annotations"):
            values = meta.get(key) or {}
            mine = [k for k in values if k.startswith(_OWN_PREFIXES)]
            for k in mine:
                del values[k]
                changed = True
            if key in meta and not values:
                del meta[key]
    return changed


def _metas(obj: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """The object's metadata and every pod template's and job template's under it."""
    yield obj.setdefault("metadata", {})
    for template in _templates(obj):
        yield template.setdefault("metadata", {})


def _templates(obj: dict[str, Any]) -> Iterable[dict[str, Any]]:
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Job":
        yield spec.get("template") or {}
    if kind == "JobSet":
        for rj in spec.get("replicatedJobs") or []:
            job = rj.get("template") or {}
            yield job
            yield (job.get("spec") or {}).get("template") or {}


QUEUE_LABELS = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/pod-group-name",
                "kueue.x-k8s.io/pod-group-total-count")  # fmt: skip


def _queue_labels(obj: dict[str, Any], side: str) -> bool:
    if side != "native":
        return False
    changed = False
    for meta in _metas(obj):
        for key in ("labels", "annotations"):
            changed |= _drop(meta, key, QUEUE_LABELS)
    return changed


def _drop(meta: dict[str, Any], key: str, names: Iterable[str]) -> bool:
    """Remove ``names`` from ``meta[key]`` (labels or annotations), and the mapping when it is
    left empty; whether anything was removed."""
    values = meta.get(key) or {}
    changed = False
    for k in names:
        if k in values:
            del values[k]
            changed = True
    if key in meta and not values:
        del meta[key]
    return changed


def _suspend_false(obj: dict[str, Any], side: str) -> bool:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "JobSet" and spec.get("suspend") is False:
        del spec["suspend"]
        return True
    return False


def _cluster_domain(obj: dict[str, Any], side: str) -> bool:
    """Host names ending in .svc.cluster.local (kubetrain:clusterDomain) in a ConfigMap's data
    (the MPI hostfile) and the containers' env (TF_CONFIG) become .svc on kubetrain's side, as
    the operators here write them (started without a cluster domain)."""
    if side != "native":
        return False
    places: list[tuple[dict[str, Any], str]] = []
    if obj.get("kind") == "ConfigMap":
        places += [(obj["data"], k) for k in obj.get("data") or {}]
    for pod_spec in _pod_specs(obj):
        for c in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or []):
            places += [(e, "value") for e in c.get("env") or [] if "value" in e]
    changed = False
    for holder, key in places:
        value = holder[key]
        if isinstance(value, str) and ".svc.cluster.local" in value:
            holder[key] = value.replace(".svc.cluster.local", ".svc")
            changed = True
    return changed


def _discover_hosts(obj: dict[str, Any], side: str) -> bool:
    data = obj.get("data") if obj.get("kind") == "ConfigMap" else None
    if not data or "discover_hosts.sh" not in data:
        return False
    data["discover_hosts.sh"] = "#!/bin/sh\n<hosts>\n"
    return side == "native"


KUEUE_POD_ANNOTATIONS = ("kueue.x-k8s.io/pod-index-offset",)


def _kueue_pod_annotations(obj: dict[str, Any], side: str) -> bool:
    if side != "operator" or obj.get("kind") != "Pod":
        return False
    notes = obj["metadata"].get("annotations") or {}
    found = [k for k in KUEUE_POD_ANNOTATIONS if k in notes]
    for k in found:
        del notes[k]
    if "annotations" in obj["metadata"] and not notes:
        del obj["metadata"]["annotations"]
    return bool(found)


def _immutable_secret(obj: dict[str, Any], side: str) -> bool:
    if obj.get("kind") == "Secret" and side == "operator" and obj.get("immutable") is True:
        del obj["immutable"]
        return True
    return False


KUEUE_ADMISSION_LABELS = ("kueue.x-k8s.io/cluster-queue-name", "kueue.x-k8s.io/local-queue-name",
                          "kueue.x-k8s.io/podset")  # fmt: skip


def _kueue_admitted(obj: dict[str, Any], side: str) -> bool:
    """Kueue admitted the operator's job here (its ClusterQueue has quota): the trainer
    unsuspended the JobSet and copied Kueue's admission into its pod templates. kubetrain's
    queued JobSet is suspended for Kueue, which writes the same once it admits it."""
    if obj.get("kind") != "JobSet":
        return False
    changed = False
    queued = "kueue.x-k8s.io/queue-name" in (obj["metadata"].get("labels") or {})
    if side == "native" and queued and (obj.get("spec") or {}).get("suspend") is True:
        del obj["spec"]["suspend"]
        changed = True
    if side == "operator":
        for meta in _metas(obj):
            for key, names in (("labels", KUEUE_ADMISSION_LABELS),
                               ("annotations", ("kueue.x-k8s.io/workload",))):  # fmt: skip
                changed |= _drop(meta, key, names)
    return changed


def _kueue_suspends(obj: dict[str, Any], side: str) -> bool:
    """The trainer writes a queued TrainJob's JobSet suspended (Kueue suspended the TrainJob);
    kubetrain leaves a queued JobSet's suspend to Kueue, whose webhook suspends every job that
    names a queue when it is created (jobframework's ApplyDefaultForSuspend, v0.19.2)."""
    if side != "operator" or obj.get("kind") != "JobSet":
        return False
    # The trainer's JobSet carries no queue label: its TrainJob's does (same name).
    queued = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"]) in QUEUED_TRAINJOBS
    if queued and (obj.get("spec") or {}).get("suspend") is True:
        del obj["spec"]["suspend"]
        return True
    return False


#: PodGroups (namespace, name) of training-operator jobs smaller than their job (minMember below
#: its pod count), each with every minResources the operator may write for it (gang_sums),
#: filled by run_stack from the custom resources it applies and the cluster's PriorityClasses.
PARTIAL_GANGS: dict[tuple[str, str], list[dict[str, Fraction]]] = {}
#: The partial gangs compared whose orders give more than one sum, the operator's among them:
#: what pins min-resources-of-a-partial-gang, whose difference shows only when the operator's
#: random order is not kubetrain's.
UNORDERED_GANGS_MET: set[tuple[str, str]] = set()


def _partial_gang(obj: dict[str, Any], side: str) -> bool:
    """A partial gang's minResources, when it is one of the sums the operator's orders of its
    replica types give (PARTIAL_GANGS), as that set: any other value stays, and differs."""
    if obj.get("kind") != "PodGroup":
        return False
    meta = obj.get("metadata") or {}
    key = (meta.get("namespace", ""), meta.get("name", ""))
    sums = PARTIAL_GANGS.get(key)
    spec = obj.get("spec") or {}
    if sums is None or _resource_values(spec.get("minResources")) not in sums:
        return False
    spec["minResources"] = f"one of the {len(sums)} sums of the operator's orders"
    if side == "operator" and len(sums) > 1:
        UNORDERED_GANGS_MET.add(key)
    return True


def _deadline_per_pod(obj: dict[str, Any], side: str) -> bool:
    if side == "native" and obj.get("kind") == "Pod":
        return obj["spec"].pop("activeDeadlineSeconds", None) is not None
    return False


#: What Volcano's job controller names a Job's PodGroup: ``<job>-<the Job's UID>``
#: (generateRelatedPodGroupName).
_VOLCANO_POD_GROUP = re.compile(r"^(?P<job>.+)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                                r"[0-9a-f]{12}$")  # fmt: skip
VOLCANO_JOB_LABEL = "volcano.sh/job-name"


def volcano_pod_group_key(key: Key, obj: Mapping[str, Any]) -> Key:
    """The key of what Volcano's job controller named ``<job>-<uid>``, as ``<job>``."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    owned = any(r.get("apiVersion") == "batch.volcano.sh/v1alpha1" for r in refs)
    m = _VOLCANO_POD_GROUP.match(key[3]) if obj.get("kind") == "PodGroup" and owned else None
    return (*key[:3], m.group("job")) if m else key


def _volcano_pod_group(obj: dict[str, Any], side: str) -> bool:
    """The PodGroup's name, and each pod's scheduling.k8s.io/group-name, without the UID."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") == "PodGroup" and (m := _VOLCANO_POD_GROUP.match(meta.get("name", ""))):
        meta["name"] = m.group("job")
        return True
    annotations = meta.get("annotations") or {}
    group = annotations.get(GROUP_NAME_ANNOTATION, "")
    is_pod = obj.get("kind") == "Pod" and VOLCANO_JOB_LABEL in (meta.get("labels") or {})
    if is_pod and (m := _VOLCANO_POD_GROUP.match(group)):
        annotations[GROUP_NAME_ANNOTATION] = m.group("job")
        return True
    return False


def _volcano_plugin_order(obj: dict[str, Any], side: str) -> bool:
    """A Volcano Job's pod with its env, volumes and mounts in name order."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") != "Pod" or VOLCANO_JOB_LABEL not in (meta.get("labels") or {}):
        return False
    spec = obj.get("spec") or {}
    changed = False

    def by_name(holder: dict[str, Any], key: str) -> None:
        nonlocal changed
        items = holder.get(key)
        if isinstance(items, list):
            ordered = sorted(items, key=lambda i: (str(i.get("name")), str(i.get("mountPath"))))
            changed |= ordered != items
            holder[key] = ordered

    by_name(spec, "volumes")
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        by_name(c, "env")
        by_name(c, "volumeMounts")
    return changed


TOLERANCES: list[Tolerance] = [
    Tolerance(
        "own-metadata",
        "kubetrain's own labels and annotations (app.kubernetes.io/*, kubetrain.io/*, the "
        "GitOps engines' sync options) are on its objects besides the operator's, and on what "
        "an operator copies from the custom resource (a PodGroup takes the job's annotations)",
        _own_metadata,
    ),
    Tolerance(
        "min-resources-of-a-partial-gang",
        "a gang smaller than its job sums the requests of its first minMember pods; "
        "training-operator v1.9.3 orders replica types by their PriorityClass's value and "
        "types of equal priority as Go iterates a map, at random (CalcPGMinResources), so "
        "which pods it sums differs from run to run; kubetrain orders them by priority too, "
        "types of equal priority in the job's order. "
        "Both values must be among the sums of the orders the operator may take (gang_sums); "
        "pinned by a gang whose orders give more than one sum, compared",
        _partial_gang,
        met=UNORDERED_GANGS_MET,
    ),
    Tolerance(
        "kueue-admitted",
        "Kueue admits the operator's job in this world (its ClusterQueue has quota) and writes "
        "its admission (labels, the workload annotation, suspend lifted) into what runs; "
        "kubetrain's queued JobSet waits suspended for Kueue, which writes the same",
        _kueue_admitted,
    ),
    Tolerance(
        "kueue-suspends-at-create",
        "the trainer writes a queued TrainJob's JobSet suspended; kubetrain leaves a queued "
        "JobSet's suspend to Kueue, whose webhook suspends it when it is created",
        _kueue_suspends,
    ),
    Tolerance(
        "queue-label-on-workload",
        "a job Kueue queues carries kueue.x-k8s.io/queue-name on what runs it natively (the "
        "JobSet, Jobs or pods Kueue's own integrations admit); in operator mode the custom "
        "resource carries it and Kueue admits that",
        _queue_labels,
    ),
    Tolerance(
        "deadline-per-pod",
        "with bare pods runPolicy.activeDeadlineSeconds becomes each pod's deadline; the "
        "training operator fails the whole job at the deadline instead",
        _deadline_per_pod,
    ),
    Tolerance(
        "jobset-suspend-false",
        "a running JobSet's spec.suspend: false and no suspend are the same to the JobSet "
        "controller; the trainer writes false for a new TrainJob and drops it on resume, "
        "kubetrain the other way round",
        _suspend_false,
    ),
    Tolerance(
        "cluster-domain",
        "kubetrain:clusterDomain ends host names in .svc.<domain>, as an operator started with "
        "that cluster domain does (the operators here run without one)",
        _cluster_domain,
    ),
    Tolerance(
        "discover-hosts-every-worker",
        "the MPI launcher's discover_hosts.sh lists every worker in native mode; the MPI "
        "Operator rewrites it with the workers running at the moment (none without a kubelet)",
        _discover_hosts,
    ),
    Tolerance(
        "kueue-pod-index-offset",
        "Kueue's MPIJob integration annotates an MPIJob's pods with "
        "kueue.x-k8s.io/pod-index-offset (runLauncherAsWorker); native pods belong to no MPIJob",
        _kueue_pod_annotations,
    ),
    Tolerance(
        "volcano-pod-group-of-the-jobs-uid",
        "Volcano's job controller names a Job's PodGroup <job>-<the Job's UID> "
        "(generateRelatedPodGroupName), which exists only once the Job does; native mode names "
        "it <job>, and each pod's scheduling.k8s.io/group-name says so",
        _volcano_pod_group,
    ),
    Tolerance(
        "volcano-plugin-order",
        "Volcano's job controller runs a Job's plugins (env, svc) in Go map order "
        "(pluginOnPodCreate ranges over spec.plugins), so the order of the env vars, volumes "
        "and mounts they append changes from pod to pod; kubetrain runs them by name",
        _volcano_plugin_order,
    ),
    Tolerance(
        "ssh-secret-mutable",
        "the trainer creates the MPI SSH key Secret immutable (it generated the key); kubetrain's "
        "comes from the stack's secret store through an ExternalSecret, which must stay "
        "writable for the store's rotation",
        _immutable_secret,
    ),
]


#: (namespace, name) of every TrainJob that names a Kueue queue in the stacks compared
#: (filled by run_stack from the custom resources it applies).
QUEUED_TRAINJOBS: set[tuple[str, str]] = set()

#: (namespace, job name, replica type) of every replica type written with replicas 0 in the
#: stacks compared (filled by run_stack from the custom resources it applies).
ZERO_REPLICA_TYPES: set[tuple[str, str, str]] = set()

#: The names (namespace, name) of the Pods and Services of ZERO_REPLICA_TYPES the operator was
#: seen, in its events, both to create and to delete (filled by run_stack): what pins
#: zero-replica-flap, since a listing may or may not catch the object between the two.
FLAPPED: set[tuple[str, str]] = set()


def _of_a_zero_replica_type(obj: Mapping[str, Any]) -> bool:
    if obj.get("kind") not in ("Pod", "Service"):
        return False
    labels = obj["metadata"].get("labels") or {}
    key = (
        obj["metadata"].get("namespace", ""),
        labels.get("training.kubeflow.org/job-name", ""),
        labels.get("training.kubeflow.org/replica-type", ""),
    )
    return labels.get("training.kubeflow.org/replica-index") == "0" and key in ZERO_REPLICA_TYPES


@dataclass
class Ignored:
    """An object the operator creates that native mode has no use for: `match(obj)`."""

    name: str
    reason: str
    match: Callable[[Mapping[str, Any]], bool]
    used: set[str] = field(default_factory=set)
    #: met or not by a listing (the operator creates and deletes it); pinned by FLAPPED instead
    transient: bool = False


IGNORED: list[Ignored] = [
    Ignored(
        "zero-replica-flap",
        "for a replica type of replicas 0 training-operator v1.9.3 creates Pod and Service "
        "<job>-<type>-0 and deletes them on its next reconcile, over and over (ReconcilePods and "
        "ReconcileServices: pkg/core CalculatePodSliceSize is at least 1, and index 0 is out of "
        "range of replicas 0); native mode writes none of the type",
        _of_a_zero_replica_type,
        transient=True,
    ),
    Ignored(
        "trainer-runtime-snapshot",
        "the trainer keeps a TrainJob's runtime as it was at creation in a ConfigMap "
        "<trainjob>-runtime-snapshot (pkg/runtime/core/snapshot.go), its own bookkeeping for "
        "later reconciles; kubetrain builds the JobSet from the runtime once, at render time",
        lambda o: (
            o.get("kind") == "ConfigMap"
            and o["metadata"]["name"].endswith("-runtime-snapshot")
            and any(r.get("kind") == "TrainJob" for r in o["metadata"].get("ownerReferences") or [])
        ),
    ),
]


# -- normalising -----------------------------------------------------------------------------
_TOKEN_VOLUME = re.compile(r"^kube-api-access-[a-z0-9]{5}$")


def normalise(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj` without what is per run: uids, generated names, owner references, timestamps,
    status, Secrets' values, the Job controller's UID labels and selector, the ServiceAccount
    token volume's random suffix, allocated cluster IPs."""
    out = copy.deepcopy(dict(obj))
    out.pop("status", None)
    meta = out.setdefault("metadata", {})
    for key in PER_RUN_META:
        meta.pop(key, None)
    meta.pop("generateName", None)
    meta.pop("finalizers", None)
    for m in _metas(out):
        for key in ("labels", "annotations"):
            values = m.get(key)
            if values:
                for k in UID_LABELS:
                    values.pop(k, None)
                if not values:
                    del m[key]
        m.pop("creationTimestamp", None)
        m.pop("ownerReferences", None)
    kind = out.get("kind")
    spec = out.get("spec") or {}
    if kind == "Secret":
        out["data"] = sorted((out.get("data") or {}) | (out.pop("stringData", None) or {}))
    if kind == "Job":
        selector = spec.get("selector") or {}
        for k in UID_LABELS:
            (selector.get("matchLabels") or {}).pop(k, None)
        if selector.get("matchLabels") == {}:
            selector.pop("matchLabels")
        if selector == {}:
            spec.pop("selector", None)
    if kind == "Service" and spec.get("clusterIP") not in (None, "None"):
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    for pod_spec in _pod_specs(out):
        for volume in pod_spec.get("volumes") or []:
            if _TOKEN_VOLUME.match(volume.get("name", "")):
                volume["name"] = "kube-api-access"
        for c in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or []):
            for mount in c.get("volumeMounts") or []:
                if _TOKEN_VOLUME.match(mount.get("name", "")):
                    mount["name"] = "kube-api-access"
    return out


def _pod_specs(obj: dict[str, Any]) -> Iterable[dict[str, Any]]:
    if obj.get("kind") == "Pod":
        yield obj.setdefault("spec", {})
    for template in _templates(obj):
        if "containers" in (template.get("spec") or {}):
            yield template["spec"]


# -- comparing -------------------------------------------------------------------------------
def compare(native: Any, operator: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every leaf where the two differ: (path, native value, operator value); lists compared
    by position (order is meaningful in a pod: env expansion, init containers)."""
    if isinstance(native, dict) and isinstance(operator, dict):
        out = []
        for key in sorted(set(native) | set(operator)):
            sub = f"{path}.{key}" if path else key
            if key not in native:
                out.append((sub, "<absent>", operator[key]))
            elif key not in operator:
                out.append((sub, native[key], "<absent>"))
            else:
                out.extend(compare(native[key], operator[key], sub))
        return out
    if isinstance(native, list) and isinstance(operator, list):
        out = []
        for i in range(max(len(native), len(operator))):
            sub = f"{path}[{i}]"
            if i >= len(native):
                out.append((sub, "<absent>", operator[i]))
            elif i >= len(operator):
                out.append((sub, native[i], "<absent>"))
            else:
                out.extend(compare(native[i], operator[i], sub))
        return out
    return [] if native == operator else [(path, native, operator)]


def leaves(value: Any) -> int:
    """How many leaf fields `value` has (the count of fields a comparison looked at)."""
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values()) or 1
    if isinstance(value, list):
        return sum(leaves(v) for v in value) or 1
    return 1


# -- the cluster side ------------------------------------------------------------------------
def collection(
    cluster: ControlPlane, group: str, kind: str, namespace: str, api_version: str = ""
) -> str:
    """The collection URL of `kind` (at `api_version` when given: discovery knows only each
    group's preferred version, and the MPI Operator's MPIJob is kubeflow.org/v2beta1)."""
    if api_version and "/" in api_version:
        body = _group_version(cluster, api_version)
        for r in body.get("resources", []):
            if r.get("kind") == kind and "/" not in r["name"]:
                base = f"/apis/{api_version}"
                if r["namespaced"]:
                    return f"{base}/namespaces/{namespace}/{r['name']}"
                return f"{base}/{r['name']}"
    res = discovery(cluster).resource(group, kind)
    if res is None:
        raise RuntimeError(f"the server does not serve {kind}.{group}")
    if res.namespaced:
        return f"{res.path}/namespaces/{namespace}/{res.plural}"
    return f"{res.path}/{res.plural}"


_GROUP_VERSIONS: dict[tuple[int, str], dict[str, Any]] = {}


def _group_version(cluster: ControlPlane, api_version: str) -> dict[str, Any]:
    key = (id(cluster), api_version)
    if key not in _GROUP_VERSIONS:
        _GROUP_VERSIONS[key] = cluster.get(f"/apis/{api_version}") or {}
    return _GROUP_VERSIONS[key]


def _url(cluster: ControlPlane, obj: Mapping[str, Any]) -> str:
    group, kind = gk(obj)
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace", "default")
    return collection(cluster, group, kind, ns, str(obj.get("apiVersion", "")))


def dry_run(cluster: ControlPlane, obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj` as the server would store it (create, server-side dry-run, field manager
    kubetrain): defaults, admission, webhooks; raises with the server's message."""
    status, body = cluster.request(
        "POST",
        _url(cluster, obj),
        dict(obj),
        query="dryRun=All&fieldManager=kubetrain",
    )
    if status not in (200, 201):
        raise RuntimeError(f"dry-run of {show(key_of(obj))}: {status} {body}")
    return body


def apply(cluster: ControlPlane, objs: Iterable[Mapping[str, Any]]) -> None:
    """Server-side apply, field manager kubetrain, in order (each error raised)."""
    for obj in objs:
        url = f"{_url(cluster, obj)}/{obj['metadata']['name']}"
        status, body = cluster.request(
            "PATCH",
            url,
            json.dumps(obj).encode(),
            content_type="application/apply-patch+yaml",
            query="fieldManager=kubetrain&force=true",
        )
        if status not in (200, 201):
            raise RuntimeError(f"applying {show(key_of(obj))}: {status} {body}")


def listing(cluster: ControlPlane, namespaces: Iterable[str]) -> dict[Key, dict[str, Any]]:
    """Every object of the COMPARED kinds in `namespaces`."""
    out: dict[Key, dict[str, Any]] = {}
    for ns in sorted(set(namespaces)):
        for group, kind in sorted(COMPARED):
            if discovery(cluster).resource(group, kind) is None:
                continue
            body = cluster.get(collection(cluster, group, kind, ns)) or {}
            version = body.get("apiVersion", "v1")
            for item in body.get("items", []):
                item.setdefault("kind", kind)
                item.setdefault("apiVersion", f"{group}/{version.rpartition('/')[2]}"
                                if group else "v1")  # fmt: skip
                out[key_of(item)] = item
    return out


def delete(cluster: ControlPlane, objs: Iterable[Mapping[str, Any]]) -> None:
    for obj in objs:
        url = f"{_url(cluster, obj)}/{obj['metadata']['name']}"
        cluster.request("DELETE", url, {"propagationPolicy": "Background"})


def wait_gone(cluster: ControlPlane, keys: Iterable[Key], timeout: float = 120) -> None:
    keys = set(keys)
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for key in keys:
            url = discovery(cluster).url(key)
            if url and cluster.get(url) is not None:
                left.append(key)
        if not left:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"still there after {timeout:.0f} s: "
                               + ", ".join(show(k) for k in sorted(left)))  # fmt: skip
        time.sleep(0.5)


# -- kubetrain's side ------------------------------------------------------------------------
def stream(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def with_mode(doc: dict[str, Any], mode: str, workload: str = "pod") -> dict[str, Any]:
    """`doc` (a job document) rendered in `mode`: its kubetrain.io/mode annotation set, and in
    native mode its kubetrain.io/native-workload (bare Pods: what the training operator
    creates)."""
    doc = copy.deepcopy(doc)
    if gk(doc) not in CUSTOM:
        return doc  # a kind no operator here runs keeps its mode
    meta = doc.setdefault("metadata", {})
    notes = meta.setdefault("annotations", {}) or {}
    meta["annotations"] = notes
    notes["kubetrain.io/mode"] = mode
    if mode == "native" and doc.get("apiVersion") in ("kubeflow.org/v1", "kubeflow.org/v1alpha1"):
        notes["kubetrain.io/native-workload"] = workload
    else:
        notes.pop("kubetrain.io/native-workload", None)
    return doc


def job_documents(stack_file: Path, folder: Path) -> list[tuple[str, dict[str, Any]]]:
    """Every job document of a stack file: ("inline", doc) or (job file, doc)."""
    config = yaml.safe_load(stack_file.read_text())["config"]
    out: list[tuple[str, dict[str, Any]]] = []
    for doc in config.get("kubetrain:jobs") or []:
        out.append(("inline", doc))
    for pattern in config.get("kubetrain:jobFiles") or []:
        for file in sorted(folder.glob(pattern)):
            for doc in yaml.safe_load_all(file.read_text()):
                if isinstance(doc, dict):
                    out.append((str(file.relative_to(folder)), doc))
    return out


def mode_stack(stack_file: Path, folder: Path, mode: str, name: str) -> Path:
    """A copy of `stack_file` as Pulumi.<name>.yaml whose every job is rendered in `mode`
    (job files inlined, in order)."""
    data = yaml.safe_load(stack_file.read_text())
    config = data["config"]
    docs = [with_mode(doc, mode) for _, doc in job_documents(stack_file, folder)]
    config.pop("kubetrain:jobFiles", None)
    config["kubetrain:jobs"] = docs
    out = folder / f"Pulumi.{name}.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


# -- one stack through both ------------------------------------------------------------------
@dataclass
class Difference:
    key: Key
    path: str
    native: Any
    operator: Any

    def __str__(self) -> str:
        return f"{show(self.key)} {self.path}: kubetrain {_short(self.native)}, operator " \
               f"{_short(self.operator)}"  # fmt: skip


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 300 else text[:300] + "..."


@dataclass
class Outcome:
    """What one stack's comparison found."""

    stack: str
    fields: dict[str, int] = field(default_factory=dict)  # job kind -> leaves compared
    objects: dict[str, int] = field(default_factory=dict)  # job kind -> objects compared
    differences: list[Difference] = field(default_factory=list)
    missing: list[Key] = field(default_factory=list)  # kubetrain renders, the operator did not
    extra: list[Key] = field(default_factory=list)  # the operator created, kubetrain does not
    jobs: list[Key] = field(default_factory=list)  # the custom resources applied
    compared_jobs: set[tuple[str, str]] = field(default_factory=set)  # with an object compared

    def problems(self) -> list[str]:
        return (
            [f"not created by the operator: {show(k)}" for k in self.missing]
            + [f"created by the operator, not by kubetrain: {show(k)}" for k in self.extra]
            + [str(d) for d in self.differences]
        )


JOB_NAME_LABELS = (
    "training.kubeflow.org/job-name",
    "app.kubernetes.io/instance",
    "jobset.sigs.k8s.io/jobset-name",
    "trainer.kubeflow.org/trainjob-name",
    "volcano.sh/job-name",
)


def job_of(obj: Mapping[str, Any], jobs: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The job (namespace, name) an object belongs to: by its job-name labels, else the
    longest job name its own name starts with."""
    jobs = set(jobs)
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    ns = meta.get("namespace", "")
    for key in JOB_NAME_LABELS:
        if (ns, labels.get(key, "")) in jobs:
            return (ns, labels[key])
    name = meta.get("name", "")
    best = None
    for job_ns, job in jobs:
        mine = job_ns == ns and (name == job or name.startswith(job + "-"))
        if mine and (best is None or len(job) > len(best[1])):
            best = (job_ns, job)
    return best


def job_kind_of(obj: Mapping[str, Any], by_name: Mapping[tuple[str, str], str]) -> str:
    """The job kind an object belongs to."""
    job = job_of(obj, by_name)
    return by_name[job] if job else "?"


def _external(config: Mapping[str, Any], default_ns: str) -> list[dict[str, Any]]:
    """What a stack declares in kubetrain:external, made as the platform team would."""
    kinds = {
        "serviceAccounts": ("v1", "ServiceAccount"),
        "secrets": ("v1", "Secret"),
        "configMaps": ("v1", "ConfigMap"),
        "persistentVolumeClaims": ("v1", "PersistentVolumeClaim"),
    }
    external = config.get("kubetrain:external") or {}
    docs: list[dict[str, Any]] = []
    for ns in external.get("namespaces", []):
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for key, (api, kind) in kinds.items():
        for ref in external.get(key, []):
            ns, _, name = str(ref).rpartition("/")
            meta = {"name": name, "namespace": ns or default_ns}
            obj: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": meta}
            if kind == "PersistentVolumeClaim":
                obj["spec"] = {"accessModes": ["ReadWriteOnce"],
                               "resources": {"requests": {"storage": "1Gi"}}}  # fmt: skip
            docs.append(obj)
    return docs


def wait_default_sa(cluster: ControlPlane, namespaces: Iterable[str], timeout: float = 60) -> None:
    for ns in sorted(set(namespaces)):
        deadline = time.monotonic() + timeout
        while cluster.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default") is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no default ServiceAccount in {ns}")
            time.sleep(0.3)


def wait_created(
    cluster: ControlPlane,
    namespaces: Iterable[str],
    before: set[Key],
    expected: set[Key],
    timeout: float = 60,
    quiet: float = 3.0,
) -> dict[Key, dict[str, Any]]:
    """What appeared in `namespaces` since `before`, once every `expected` key is there (or
    `timeout` passed) and nothing new appeared for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last: set[Key] = set()
    since = time.monotonic()
    while True:
        now = listing(cluster, namespaces)
        new = {k: v for k, v in now.items() if k not in before}
        keys = {volcano_pod_group_key(k, v) for k, v in new.items()}
        if keys != last:
            last, since = keys, time.monotonic()
        done = expected <= keys and time.monotonic() - since >= quiet
        if done or time.monotonic() > deadline:
            return new
        time.sleep(0.5)


def run_stack(
    cluster: ControlPlane,
    name: str,
    config: Mapping[str, Any],
    operator_objs: list[dict[str, Any]],
    native_objs: list[dict[str, Any]],
    jobs: set[tuple[str, str]],
    tolerances: list[Tolerance] = TOLERANCES,
    resumed: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
) -> Outcome:
    """Apply the operator-mode render of `jobs` (namespace, name), let the operators
    reconcile, compare what they created with the native render (dry-run on the same server);
    with `resumed` (both renders of the same jobs, resumed), apply its custom resources over
    the first and compare again; clean up after."""
    outcome = Outcome(name)
    default_ns = str(config.get("kubetrain:namespace", "default"))

    def job_key(o: Mapping[str, Any]) -> tuple[str, str]:
        return (o["metadata"].get("namespace", default_ns), o["metadata"]["name"])

    every = [o for o in operator_objs if gk(o) in CUSTOM]
    all_jobs = {job_key(o) for o in every}
    QUEUED_TRAINJOBS.update(
        job_key(o)
        for o in every
        if o.get("kind") == "TrainJob"
        and "kueue.x-k8s.io/queue-name" in (o["metadata"].get("labels") or {})
    )
    for o in every:
        for key, specs in (o.get("spec") or {}).items():
            if key.endswith("ReplicaSpecs") and isinstance(specs, dict):
                ZERO_REPLICA_TYPES.update(
                    (*job_key(o), rtype.lower())
                    for rtype, spec in specs.items()
                    if isinstance(spec, dict) and spec.get("replicas") == 0
                )
    op_keys = {key_of(o) for o in operator_objs}

    def ours(op_objs: list[dict[str, Any]], nat_objs: list[dict[str, Any]]):
        custom = [o for o in op_objs if gk(o) in CUSTOM and job_key(o) in jobs]
        made = [o for o in nat_objs if gk(o) in COMPARED and key_of(o) not in op_keys
                and job_of(o, all_jobs) in jobs]  # fmt: skip
        secrets = [secret_shape(o) for o in nat_objs
                   if gk(o) == ("external-secrets.io", "ExternalSecret")
                   and key_of(o) not in op_keys and job_of(o, all_jobs) in jobs]  # fmt: skip
        return custom, made, secrets

    custom, made, secrets = ours(operator_objs, native_objs)
    support = _external(config, default_ns) + [o for o in operator_objs if gk(o) not in CUSTOM]
    # A kind by its name, or by name and group where the name is several groups' (a Volcano Job).
    by_name = {job_key(o): o["kind"] if gk(o)[0].endswith("kubeflow.org")
               else f"{o['kind']}.{gk(o)[0]}" for o in custom}  # fmt: skip
    outcome.jobs = [key_of(o) for o in custom]
    namespaces = {o["metadata"]["name"] for o in support if o["kind"] == "Namespace"}
    namespaces |= {k[2] for k in op_keys if k[2]} | {key_of(o)[2] for o in made if key_of(o)[2]}
    for ns in sorted(namespaces):
        apply(cluster, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}])
    wait_default_sa(cluster, namespaces)
    rest = [o for o in support if o["kind"] != "Namespace"]
    apply(cluster, [o for o in rest if o["kind"] == "CustomResourceDefinition"])
    apply(cluster, [o for o in rest if o["kind"] != "CustomResourceDefinition"])
    PARTIAL_GANGS.update(_partial_gangs(custom, default_ns))
    # Dry-run first: once the operator made an object, a dry-run create of its name fails.
    native = {key_of(o): dry_run(cluster, o) for o in made} | {key_of(o): o for o in secrets}
    later: tuple[list[dict[str, Any]], dict[Key, dict[str, Any]]] | None = None
    if resumed is not None:
        r_custom, r_made, r_secrets = ours(*resumed)
        later = (r_custom, {key_of(o): dry_run(cluster, o) for o in r_made}
                 | {key_of(o): o for o in r_secrets})  # fmt: skip
    before = set(listing(cluster, namespaces))
    try:
        apply(cluster, custom)
        created = wait_created(cluster, namespaces, before, set(native))
        _compare_into(outcome, native, created, by_name, tolerances)
        _note_flaps(cluster, namespaces)
        if later is not None:
            r_custom, r_native = later
            apply(cluster, r_custom)
            created = wait_created(cluster, namespaces, before, set(r_native))
            _compare_into(outcome, r_native, created, by_name, tolerances, "resumed: ")
    finally:
        delete(cluster, custom)
        # Namespaced support goes (the next stack may shape it otherwise); cluster-scoped
        # objects stay (a ClusterTrainingRuntime the trainer installed, a ClusterQueue).
        delete(cluster, [o for o in rest if (o.get("metadata") or {}).get("namespace")])
        gone = set(listing(cluster, namespaces)) - before
        wait_gone(cluster, gone | {key_of(o) for o in custom})
    return outcome


#: The training operator's job kinds (their gangs' minResources is CalcPGMinResources').
TRAINING_OPERATOR_KINDS = frozenset({"TFJob", "PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob"})


@dataclass
class GangType:
    """One replica type of a gang: its pods, each pod's containers and its priority."""

    pods: int
    containers: list[Mapping[str, Any]]
    priority: int = 0


def _resource_values(resources: Any) -> dict[str, Fraction] | None:
    """A ResourceList by resource name and exact value, or None if it is not one."""
    if not isinstance(resources, Mapping):
        return None
    try:
        return {str(k): parse_quantity(v).value for k, v in resources.items()}
    except (TypeError, ValueError):
        return None


def _pod_resources(containers: list[Mapping[str, Any]]) -> dict[str, Fraction]:
    """One pod's share of a gang: each container's requests, or its limits if it gives no
    requests at all (training-operator v1.9.3 pkg/controller.v1/common/util.go
    AddResourceList: `if req != nil`)."""
    total: dict[str, Fraction] = {}
    for c in containers:
        resources = c.get("resources") or {}
        requests = resources.get("requests")
        chosen = requests if requests is not None else resources.get("limits") or {}
        for name, value in (_resource_values(chosen) or {}).items():
            total[name] = total.get(name, Fraction(0)) + value
    return total


def gang_sums(types: Mapping[str, GangType], min_member: int) -> list[dict[str, Fraction]]:
    """Every minResources training-operator v1.9.3's CalcPGMinResources
    (pkg/controller.v1/common/util.go) may give: it ranges over the job's replica types (a Go
    map, in random order), sorts them by their priority, highest first (ReplicasPriority.Less;
    sort.Sort keeps no order among equals), and sums the pods' resources in that order until
    minMember pods are counted. Distinct sums, in a fixed
    order."""
    out: list[dict[str, Fraction]] = []
    for order in permutations(sorted(types)):
        priorities = [types[t].priority for t in order]
        if priorities != sorted(priorities, reverse=True):
            continue  # not an order the sort leaves
        total: dict[str, Fraction] = {}
        counted = 0
        for t in order:
            for _ in range(types[t].pods):
                if counted >= min_member:
                    break
                counted += 1
                for name, value in _pod_resources(types[t].containers).items():
                    total[name] = total.get(name, Fraction(0)) + value
        if total not in out:
            out.append(total)
    return out


def _partial_gangs(
    custom: list[dict[str, Any]], default_ns: str
) -> dict[tuple[str, str], list[dict[str, Fraction]]]:
    """The gangs of the training-operator jobs in `custom` (their PodGroup is named after the
    job) smaller than the job, each with every minResources the operator may give it
    (gang_sums), from the job's replica specs as the operator reads them: replicas default to
    1 (SetDefaults_<Kind>), minMember is schedulingPolicy.minAvailable or every pod. Every type's
    priority is 0 whatever PriorityClasses the cluster holds: v1.9.3's reconcilers hand
    CalcPGMinResources the lister of a SharedInformerFactory they never start
    (pkg/controller.v1/tensorflow/tfjob_controller.go NewReconciler, and each kind's), which
    finds no class (e2e-gang-priorities' tf-ranked shows it)."""
    out = {}
    for job in custom:
        if job.get("kind") not in TRAINING_OPERATOR_KINDS:
            continue
        spec = job.get("spec") or {}
        policy = (spec.get("runPolicy") or {}).get("schedulingPolicy") or {}
        types = {}
        for key, specs in spec.items():
            if not (key.endswith("ReplicaSpecs") and isinstance(specs, dict)):
                continue
            for rtype, rspec in specs.items():
                pod = ((rspec or {}).get("template") or {}).get("spec") or {}
                replicas = (rspec or {}).get("replicas")
                types[rtype] = GangType(1 if replicas is None else int(replicas),
                                        pod.get("containers") or [])  # fmt: skip
        every = sum(t.pods for t in types.values())
        min_member = policy.get("minAvailable")
        if min_member is not None and int(min_member) < every:
            meta = job.get("metadata") or {}
            key = (meta.get("namespace", default_ns), meta["name"])
            out[key] = gang_sums(types, int(min_member))
    return out


def _note_flaps(cluster: ControlPlane, namespaces: Iterable[str], timeout: float = 30) -> None:
    """Into FLAPPED: each Pod or Service of a zero-replica type whose creation and deletion
    the operator's events both record (training-operator v1.9.3 pkg/controller.v1/control
    RealPodControl.createPods and DeletePod: "Created pod: <name>", "Deleted pod: <name>";
    RealServiceControl.createServices and DeleteService the same for services; matched by
    suffix, since client-go's event aggregator may prefix a combined event),
    waiting up to `timeout` for both."""
    ns_set = set(namespaces)
    wanted = {(ns, f"{job}-{rtype}-0") for ns, job, rtype in ZERO_REPLICA_TYPES if ns in ns_set}
    wanted -= FLAPPED
    deadline = time.monotonic() + timeout
    while wanted and time.monotonic() < deadline:
        for ns, name in sorted(wanted):
            items = (cluster.get(f"/api/v1/namespaces/{ns}/events") or {}).get("items", [])
            messages = [str(e.get("message", "")) for e in items]
            if any(
                all(any(m.endswith(f"{verb} {what}: {name}") for m in messages)
                    for verb in ("Created", "Deleted"))
                for what in ("pod", "service")
            ):  # fmt: skip
                FLAPPED.add((ns, name))
        wanted -= FLAPPED
        if wanted:
            time.sleep(0.5)


def _compare_into(
    outcome: Outcome,
    native: Mapping[Key, dict[str, Any]],
    created: Mapping[Key, dict[str, Any]],
    by_name: Mapping[tuple[str, str], str],
    tolerances: list[Tolerance],
    step: str = "",
) -> None:
    """Compare kubetrain's objects with what the operators created, into `outcome`."""
    created = {volcano_pod_group_key(k, v): v for k, v in created.items()
               if not _made_by_a_job(v)}  # fmt: skip
    for key, obj in list(created.items()):
        for ignored in IGNORED:
            if key not in native and ignored.match(obj):
                ignored.used.add(job_kind_of(obj, by_name))
                del created[key]
                break
    for key in sorted(set(native) | set(created)):
        if key not in created:
            outcome.missing.append(key)
            continue
        if key not in native:
            outcome.extra.append(key)
            continue
        kind = job_kind_of(created[key], by_name)
        owner = job_of(created[key], by_name)
        if owner:
            outcome.compared_jobs.add(owner)
        found = compared(native[key], created[key], tolerances)
        for tol in tolerances:
            others = [t for t in tolerances if t is not tol]
            if len(compared(native[key], created[key], others)) > len(found):
                tol.used.add(kind)
        outcome.fields[kind] = outcome.fields.get(kind, 0) + leaves(normalise(created[key]))
        outcome.objects[kind] = outcome.objects.get(kind, 0) + 1
        outcome.differences.extend(Difference(key, step + p, x, y) for p, x, y in found)


def _made_by_a_job(obj: Mapping[str, Any]) -> bool:
    """What the Job controller made (a launcher Job's pods) or the JobSet controller (a JobSet's
    Jobs and Service): Kubernetes' and JobSet's own work from the object compared, the same
    on both sides (the native JobSet is only dry-run)."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    owners = {(str(r.get("apiVersion", "")).rpartition("/")[0], r.get("kind")) for r in refs}
    # By group and kind: a Volcano Job (batch.volcano.sh) is the operator compared.
    made_by_job = obj.get("kind") == "Pod" and ("batch", "Job") in owners
    return made_by_job or ("jobset.x-k8s.io", "JobSet") in owners


def secret_shape(external: Mapping[str, Any]) -> dict[str, Any]:
    """The Secret an ExternalSecret makes, in the shape compared (type, keys, labels): kubetrain
    takes key material from the stack's secret store, an operator generates it."""
    spec = external.get("spec") or {}
    target = spec.get("target") or {}
    template = target.get("template") or {}
    meta = template.get("metadata") or {}
    keys = sorted({d.get("secretKey") for d in spec.get("data") or []}
                  | set(template.get("data") or {}))  # fmt: skip
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": target.get("name") or external["metadata"]["name"],
            "namespace": external["metadata"].get("namespace"),
        },
        "type": template.get("type", "Opaque"),
        "data": {k: "" for k in keys if k},
    }
    for key in ("labels", "annotations"):
        if meta.get(key):
            secret["metadata"][key] = meta[key]
    return secret
