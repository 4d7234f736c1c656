"""The form kube-apiserver stores a built-in object in, so what kubetrain renders round-trips.

Applied and read back (``kubectl apply --server-side`` then ``kubectl get -o json``), an object
differs from what was sent in two ways, recorded for every rendered object in
``apiserver-corpus/roundtrip.jsonl``:

1. **The server normalises a value kubetrain wrote.** These are written the way the server
   stores them (:func:`stored_form`), because otherwise the value in the cluster never equals the
   value in Git: another field manager (Flux, Argo CD, a person with ``kubectl apply``) sees a
   difference on every comparison and server-side apply may report conflicts.

   - Quantities (``resources.limits`` and ``requests``, ``emptyDir.sizeLimit``,
     ``resourceFieldRef.divisor``, ``overhead``) are strings in canonical form
     (``nvidia.com/gpu: 1`` is stored as ``"1"``, ``cpu: 0.5`` as ``"500m"``, ``1024Mi`` as
     ``"1Gi"``): ``resource.Quantity`` marshals itself that way.
   - A ``fieldRef`` (``ObjectFieldSelector``) carries ``apiVersion: v1``. The server defaults it
     (``SetDefaults_ObjectFieldSelector``), but the struct is atomic for server-side apply, so a
     manager that sends it without ``apiVersion`` and one that sends it with it own different
     values of one atomic field.
   - ``false`` in a boolean that Go marshals with ``omitempty`` (``flexVolume.readOnly``,
     ``volumeMounts[].readOnly``, ``hostNetwork``...) is dropped: the server never stores it.

2. **The server adds a field kubetrain left out.** Defaults (``imagePullPolicy``,
   ``protocol: TCP``, ``terminationMessagePath``, a Service's ``type`` and ``sessionAffinity``),
   values an admission plugin adds (the ``kube-api-access`` volume, default tolerations,
   ``priority``), and values the server allocates (``clusterIPs``, a Job's ``controller-uid``
   selector). These are left to the server (:data:`LEFT_TO_SERVER` lists each, with why): a field
   kubetrain does not send is a field it does not own, so it never conflicts, and writing a
   default would pin today's default into every object.

Kubernetes' own kinds are normalised, and the custom resources whose operator's defaulting
webhook decodes and re-encodes them into Go types (their row's ``webhook_quantities`` in the
catalogue): Kueue's ClusterQueue quotas are stored as quantity strings, so a quota written
``16`` differed from the live ``"16"`` on every comparison and Flux re-applied the ClusterQueue
at every reconcile (found by e2e/test_lifecycle.py with Kueue v0.19.2's webhook). Any other
custom resource is stored as it was sent (apart from its CRD's schema defaults, which are case
2), and a CRD's
``openAPIV3Schema`` describes fields rather than holding them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from typing import Any

from . import catalog
from .quantity import canonical_quantity

__all__ = [
    "LEFT_TO_SERVER",
    "canonical_stored_form",
    "is_builtin_api",
    "left_to_server",
    "stored_form",
]

#: Fields the server adds that kubetrain leaves to it: a pattern over the field path (list
#: items written ``[]``, pod specs of every workload matched by ``<pod>``) -> why.
LEFT_TO_SERVER: dict[str, str] = {
    r"<pod>\.(containers|initContainers)\[\]\.imagePullPolicy": "defaulted from the image tag",
    r"<pod>\.(containers|initContainers)\[\]\.ports\[\]\.protocol": "defaulted to TCP",
    r"<pod>\.(containers|initContainers)\[\]\.terminationMessage(Path|Policy)": "defaulted",
    r"<pod>\.(containers|initContainers)\[\]\.(readiness|liveness|startup)Probe\."
    r"(failureThreshold|successThreshold|timeoutSeconds|periodSeconds)": "probe defaults",
    r"<pod>\.(containers|initContainers)\[\]\.resources": "an empty struct, marshalled as {}",
    r"<pod>\.(containers|initContainers)\[\]\.resources\.requests\.[^.]+(\..+)?": (
        "requests defaulted from limits (kubetrain writes GPU requests itself)"
    ),
    r"<pod>\.(containers|initContainers)\[\]\.volumeMounts\[\]\.(mountPath|name|readOnly)": (
        "the kube-api-access mount added by the ServiceAccount admission plugin"
    ),
    r"<pod>\.volumes\[\]\..*": (
        "the kube-api-access volume added by the ServiceAccount admission plugin, and volume "
        "source defaults (hostPath.type)"
    ),
    r"<pod>\.tolerations\[\]\..*": "not-ready/unreachable tolerations of DefaultTolerationSeconds",
    r"<pod>\.(dnsPolicy|enableServiceLinks|restartPolicy|schedulerName|securityContext"
    r"|terminationGracePeriodSeconds)": "pod spec defaults",
    r"<pod>\.(priority|preemptionPolicy)": "set by the Priority admission plugin",
    r"<pod>\.serviceAccount(Name)?": (
        "the default ServiceAccount, and the deprecated serviceAccount alias of serviceAccountName"
    ),
    r"spec\.(backoffLimit|completionMode|manualSelector|podReplacementPolicy|suspend)": (
        "Job defaults"
    ),
    r"spec\.selector\.matchLabels\.batch\.kubernetes\.io/controller-uid": (
        "the Job's selector, generated from its uid"
    ),
    r"spec\.template\.metadata\.labels\.(batch\.kubernetes\.io/)?(controller-uid|job-name)": (
        "the Job's pod labels, generated from its uid and name"
    ),
    r"spec\.(clusterIPs|ipFamilies)\[\]": "allocated by the server",
    r"spec\.(internalTrafficPolicy|ipFamilyPolicy|sessionAffinity|type)": "Service defaults",
    r"spec\.ports\[\]\.(protocol|targetPort)": "Service port defaults (targetPort: the port)",
    r"spec\.(persistentVolumeClaimRetentionPolicy|updateStrategy)\..+": "StatefulSet defaults",
    r"spec\.podManagementPolicy": "StatefulSet default (OrderedReady)",
    r"spec\.conversion\.strategy": "CRD default (None)",
    r"spec\.(refreshInterval|target\.deletionPolicy|target\.template\.(engineVersion"
    r"|mergePolicy))": "ExternalSecret defaults of the External Secrets CRD",
    r"spec\.(timeout|force)": "GitRepository and Kustomization defaults of the Flux CRDs",
    r"spec\.dataStores\.[^.]+\.region": "Learner default of kubetrain's own CRD",
    r"spec\.runPolicy\.suspend": "TFJob default of the training-operator CRD",
    r"metadata\.labels\.kubernetes\.io/metadata\.name": (
        "a Namespace's name label, set by the server (namespace strategy, "
        "NamespaceDefaultLabelName)"
    ),
    r"spec\.finalizers\[\]": "a Namespace's kubernetes finalizer, set by the server",
    r"metadata\.finalizers\[\]": (
        "a PersistentVolumeClaim's kubernetes.io/pvc-protection finalizer, set by the "
        "StorageObjectInUseProtection admission plugin"
    ),
    r"spec\.volumeMode": "PersistentVolumeClaim default (Filesystem)",
    r"preemptionPolicy": "PriorityClass default (PreemptLowerPriority)",
}

# Where a pod spec sits: a Pod, a workload's template, a CronJob's, a TFJob's or PyTorchJob's
# replica templates, a JobSet's Job templates (their CRDs default a port's protocol too).
_POD = (
    r"(spec|spec\.template\.spec|spec\.jobTemplate\.spec\.template\.spec"
    r"|spec\.(tf|pytorch)ReplicaSpecs\.[^.]+\.template\.spec"
    r"|spec\.replicatedJobs\[\]\.template\.spec\.template\.spec)"
)
_LEFT = [
    (re.compile(pattern.replace("<pod>", _POD) + "$"), reason)
    for pattern, reason in LEFT_TO_SERVER.items()
]


def left_to_server(path: str) -> str | None:
    """Why kubetrain leaves the server-added field ``path`` to the server (``None``: it must
    write it). ``path`` may name list items (``containers[trainer]``) or not (``containers[]``)."""
    generic = re.sub(r"\[[^\]]*\]", "[]", path)
    for pattern, reason in _LEFT:
        if pattern.match(generic):
            return reason
    return None


def is_builtin_api(api_version: str) -> bool:
    """Whether ``api_version`` belongs to Kubernetes itself (``v1``, ``apps/v1``,
    ``rbac.authorization.k8s.io/v1``), not to a CRD (``scheduling.x-k8s.io`` is a CRD group)."""
    group = api_version.rpartition("/")[0]
    if not group or "." not in group:
        return True
    return group.endswith(".k8s.io") and not group.endswith(".x-k8s.io")


#: Objects holding a ``readOnly`` that Go marshals with omitempty (a plain ``bool``); the CSI
#: and azureDisk sources have a pointer, whose ``false`` is stored.
_READ_ONLY_OMITEMPTY = frozenset(
    {
        "volumeMounts", "flexVolume", "persistentVolumeClaim", "nfs", "iscsi", "rbd", "cephfs",
        "cinder", "fc", "awsElasticBlockStore", "gcePersistentDisk", "azureFile", "quobyte",
        "portworxVolume", "scaleIO", "storageos", "glusterfs",
    }
)  # fmt: skip
#: Plain omitempty booleans by the key of the object holding them (a pod spec, a container).
_FALSE_OMITTED = {
    "spec": ("hostNetwork", "hostPID", "hostIPC"),
    "containers": ("stdin", "stdinOnce", "tty"),
    "initContainers": ("stdin", "stdinOnce", "tty"),
}


#: Canonical forms already computed, by (type, value): quantities repeat across thousands of
#: objects, and parsing one is exact (fractions), hence slow. Bounded: cleared when full.
_CANONICAL: dict[tuple[type, Any], str] = {}
_CANONICAL_SIZE = 4096


def _canonical_key(obj: dict[str, Any], key: str) -> None:
    """``obj[key]`` as a canonical quantity string; a value that is no quantity is left for
    validation to report."""
    if key not in obj:
        return
    value = obj[key]
    if type(value) not in (str, int, float):  # no quantity: left as written
        return
    cache_key = (type(value), value)
    found = _CANONICAL.get(cache_key)
    if found is None:
        with contextlib.suppress(ValueError):
            found = canonical_quantity(value)
            if len(_CANONICAL) >= _CANONICAL_SIZE:
                _CANONICAL.clear()
            _CANONICAL[cache_key] = found
    if found is not None:
        obj[key] = found


def _canonical_map(values: Any) -> None:
    if isinstance(values, dict):
        for name in values:
            _canonical_key(values, name)


def _walk(node: Any, parent: str) -> None:
    if type(node) is list:
        for item in node:
            if type(item) is dict:
                _walk(item, parent)
        return
    if type(node) is not dict:
        return
    if parent in _READ_ONLY_OMITEMPTY and node.get("readOnly") is False:
        del node["readOnly"]
    for key in _FALSE_OMITTED.get(parent, ()):
        if node.get(key) is False:
            del node[key]
    for key, value in node.items():
        if type(value) is not dict and type(value) is not list:
            continue
        if key == "resources" and type(value) is dict:
            _canonical_map(value.get("limits"))
            _canonical_map(value.get("requests"))
        elif key == "fieldRef" and type(value) is dict and "apiVersion" not in value:
            # First, where canonical (sorted) key order puts it.
            node[key] = value = {"apiVersion": "v1", **value}
        elif key == "resourceFieldRef" and type(value) is dict:
            _canonical_key(value, "divisor")
        elif key == "emptyDir" and type(value) is dict:
            _canonical_key(value, "sizeLimit")
        elif key == "overhead":
            _canonical_map(value)
        _walk(value, key)


def _quantities_at(node: Any, path: tuple[str, ...]) -> None:
    if not path or not isinstance(node, dict | list):
        return
    head, rest = path[0], path[1:]
    if head == "[]":
        if isinstance(node, list):
            for item in node:
                _quantities_at(item, rest)
        return
    if not isinstance(node, dict) or head not in node:
        return
    if not rest:
        value = node[head]
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            with contextlib.suppress(ValueError):
                node[head] = canonical_quantity(value)
        return
    _quantities_at(node[head], rest)


def stored_form(obj: dict[str, Any]) -> dict[str, Any]:
    """Rewrite ``obj`` in place into the form the API server stores (see the module docstring)
    and return it. Custom resources (but those whose catalogue row has ``webhook_quantities``)
    and CRDs are returned unchanged."""
    if not isinstance(obj, Mapping):
        return obj
    api_version = str(obj.get("apiVersion", ""))
    paths = catalog.of(obj).webhook_quantities
    if paths:
        for path in paths:
            _quantities_at(obj, path)
        return obj
    if not is_builtin_api(api_version) or obj.get("kind") == "CustomResourceDefinition":
        return obj
    for key, value in obj.items():
        if key != "metadata":
            _walk(value, key)
    return obj


def canonical_stored_form(obj: dict[str, Any]) -> dict[str, Any]:
    """``stored_form(canonical(obj))`` in one pass, as a new object: mapping keys sorted,
    ``None`` values dropped, and a built-in object in the form the API server stores (every
    manifest a builder makes goes through it once: one walk instead of two)."""
    api_version = str(obj.get("apiVersion", ""))
    if catalog.of(obj).webhook_quantities:
        return stored_form(_plain(obj))
    rules = is_builtin_api(api_version) and obj.get("kind") != "CustomResourceDefinition"
    out: dict[str, Any] = {}
    for key in sorted(obj):
        value = obj[key]
        if value is None:
            continue
        kind = type(value)
        if kind is dict:
            out[key] = _stored_map(value, key) if rules and key != "metadata" else _plain(value)
        elif kind is list:
            out[key] = _stored_list(value, key) if rules and key != "metadata" else _plain(value)
        else:
            out[key] = value
    return out


def _plain(value: Any) -> Any:
    """Keys sorted and ``None`` values dropped (``builders.meta.canonical``)."""
    kind = type(value)
    if kind is dict:
        return {k: _plain(value[k]) for k in sorted(value) if value[k] is not None}
    if kind is list:
        return [_plain(v) if type(v) is dict or type(v) is list else v for v in value]
    return value


def _stored_list(value: list[Any], parent: str) -> list[Any]:
    return [
        _stored_map(item, parent)
        if type(item) is dict
        else _plain(item)
        if type(item) is list
        else item
        for item in value
    ]


def _stored_map(node: dict[str, Any], parent: str) -> dict[str, Any]:
    """:func:`_walk` of one mapping below ``parent``'s key, on a sorted copy."""
    omitted = _FALSE_OMITTED.get(parent, ())
    read_only = parent in _READ_ONLY_OMITEMPTY
    out: dict[str, Any] = {}
    for key in sorted(node):
        value = node[key]
        if value is None:
            continue
        kind = type(value)
        if kind is dict:
            child = _stored_map(value, key)
            if key == "resources":
                _canonical_map(child.get("limits"))
                _canonical_map(child.get("requests"))
            elif key == "fieldRef" and "apiVersion" not in child:
                child = {"apiVersion": "v1", **child}
            elif key == "resourceFieldRef":
                _canonical_key(child, "divisor")
            elif key == "emptyDir":
                _canonical_key(child, "sizeLimit")
            elif key == "overhead":
                _canonical_map(child)
            out[key] = child
        elif kind is list:
            out[key] = _stored_list(value, key)
        elif value is False and (key in omitted or (read_only and key == "readOnly")):
            continue
        else:
            out[key] = value
    return out
