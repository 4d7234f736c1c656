"""TrainJob (Kubeflow Trainer v2.3.0): the custom resource (operator mode), or the JobSet and its
companions the trainer's controller builds from the TrainJob and its runtime (native mode).

Fidelity target: kubeflow/trainer v2.3.0, read at the tag:

* ``pkg/runtime/core/trainingruntime.go``: ``newRuntimeInfo`` (labels and annotations of the
  runtime's template and of the patches, ``mergeRuntimePatches``: each patch a strategic merge
  of the JobSet spec, replicated jobs then put back in the runtime's order; one PodSet per
  replicated job, its count the Job's parallelism, or ``mlPolicy.numNodes`` for the trainer step,
  ``resourcesPerNode`` merged into the node container by ``MergeResourceRequirements``);
* the plugins' ``EnforceMLPolicy`` (``torch``, ``mpi``, ``jax``, ``xgboost``, ``plainml``),
  ``EnforcePodGroupPolicy`` (``coscheduling``, ``volcano``), the JobSet plugin's
  ``IdentifyPodNetwork``, ``SyncParallelCount`` and ``Build`` with its ``Builder``
  (``Initializer``, ``Trainer``, ``PodLabels``, ``PodAnnotations``, ``Suspend``), and the MPI,
  coscheduling and volcano plugins' ``Build`` (hostfile ConfigMap, SSH Secret, PodGroups);
* ``pkg/apply``: ``UpsertEnvVars`` (by name), ``UpsertPort`` (by port, or by name, two unnamed
  ports being the same), ``UpsertVolumes`` (by name), ``UpsertVolumeMounts`` (by mount path),
  ``EnvVars`` (a trainer env's ``valueFrom`` keeps fieldRef's path, resourceFieldRef,
  configMapKeyRef and secretKeyRef only).

Where kubetrain differs, deliberately:

* The plugins run in the order of a Go map, so when two write env to one container the order is
  the controller's luck: only PlainML and XGBoost both do (PlainML does not step aside for
  XGBoost). kubetrain writes the trainer's env first, then DMLC_*.
* The SSH key pair of an MPI runtime is not generated: the ``<job>-mpi-ssh-auth`` Secret comes
  from the stack's secret store (the credential ``kubetrain.io/ssh-credential`` names, default
  ``<job>-ssh``, keys ``ssh-privatekey`` and ``ssh-publickey``), as for an MPIJob.
* No owner references (no TrainJob exists in native mode); ``activeDeadlineSeconds``, which the
  trainer's controller enforces, is not enforced (a warning).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..kube import schemas as k8s
from ..kube.podresources import add_resources, pod_requests
from ..kube.podsecurity import pod_security_problems
from ..kube.quantity import Quantity, format_quantity, parse_quantity
from ..models.base import Mode
from ..models.errors import format_path
from ..models.fields import FieldNode
from ..models.mpijob import SSH_CREDENTIAL_ANNOTATION
from ..models.resources import gpu_findings, quantity_refusals
from ..models.runtimes import (
    ANCESTOR_LABEL,
    DATASET_INITIALIZER,
    LAUNCHER,
    MODEL_INITIALIZER,
    NODE,
    TORCHTUNE_ENTRYPOINT,
    TORCHTUNE_IMMUTABLE,
    TRAINER,
    Runtime,
    gpus_of,
    key_of,
    torchtune_model,
    torchtune_recipe,
)
from ..models.trainjob import (
    CLUSTER_TRAINING_RUNTIME,
    TRAINER_GROUP,
    TRAINJOB_CONTROLLER,
    TrainJob,
)
from . import names
from .context import BuildContext
from .kueue import kueue_labels
from .lifecycle import annotations_of
from .meta import canonical
from .registry import BuildProblem, builder
from .secrets import CredentialRef, SecretSpec, secret_manifests
from .security import apply_pod_security

__all__ = ["RUNS_ANNOTATION", "build_trainjob", "jobset_of"]

Manifest = dict[str, Any]
#: What a TrainJob runs, on its custom resource in operator mode, for ``kubetrain plan``:
#: ``[{"job": replicated job, "pods": count, "requests": {resource: quantity}}]`` per pod, a
#: limit standing in for a missing request (as the API server defaults the pods' requests, so
#: GPUs given as limits only count).
RUNS_ANNOTATION = "kubetrain.io/runs"
TRAINER_PORT = 29500
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
SSH_VOLUME = "mpi-ssh-auth"
HOSTFILE_VOLUME = "mpi-hostfile"
HOSTFILE_DIR = "/etc/mpi"
HOSTFILE = "hostfile"
SSH_AUTH_TYPE = "kubernetes.io/ssh-auth"
PODGROUP_LABEL = "scheduling.x-k8s.io/pod-group"
VOLCANO_GROUP = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"


# --- apply helpers (pkg/apply) ----------------------------------------------------------------


def _upsert(items: list[Any], item: Any, same: Callable[[Any, Any], bool]) -> None:
    for i, existing in enumerate(items):
        if same(existing, item):
            items[i] = item
            return
    items.append(item)


def upsert_env(env: list[Any], *items: Mapping[str, Any]) -> None:
    for item in items:
        _upsert(env, dict(item), lambda a, b: a.get("name") == b.get("name"))


def upsert_ports(ports: list[Any], *items: Mapping[str, Any]) -> None:
    """``byContainerPortOrName``: the same port, or the same name (two unnamed ports count as
    the same, as ``ptr.Equal`` of two nil names is true)."""
    for item in items:
        _upsert(
            ports,
            dict(item),
            lambda a, b: (
                a.get("containerPort") == b.get("containerPort") or a.get("name") == b.get("name")
            ),
        )


def upsert_volumes(volumes: list[Any], *items: Mapping[str, Any]) -> None:
    for item in items:
        _upsert(volumes, copy.deepcopy(dict(item)), lambda a, b: a.get("name") == b.get("name"))


def upsert_mounts(mounts: list[Any], *items: Mapping[str, Any]) -> None:
    for item in items:
        _upsert(mounts, dict(item), lambda a, b: a.get("mountPath") == b.get("mountPath"))


def env_var(env: Mapping[str, Any]) -> dict[str, Any]:
    """``apply.EnvVar``: a TrainJob's env var as the trainer writes it."""
    out: dict[str, Any] = {"name": env.get("name")}
    source = env.get("valueFrom")
    if isinstance(source, Mapping):
        kept: dict[str, Any] = {}
        if isinstance(ref := source.get("fieldRef"), Mapping):
            kept["fieldRef"] = {"fieldPath": ref.get("fieldPath")}
        if isinstance(ref := source.get("resourceFieldRef"), Mapping):
            kept["resourceFieldRef"] = {
                k: ref[k] for k in ("containerName", "resource", "divisor") if k in ref
            }
        for key in ("configMapKeyRef", "secretKeyRef"):
            if isinstance(ref := source.get(key), Mapping):
                kept[key] = {k: ref[k] for k in ("key", "name", "optional") if k in ref}
        out["valueFrom"] = kept
    else:
        out["value"] = env.get("value", "")
    return out


def env_vars(env: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    return [env_var(e) for e in env or []]


# --- strategic merge (mergeRuntimePatches, MergeResourceRequirements) -------------------------


def _strategic(original: Any, patch: Any, node: FieldNode | None) -> Any:
    """``strategicpatch.StrategicMergePatch`` of JSON values: maps merged key by key (``null``
    deletes), lists of objects merged by the schema's merge key, other lists replaced."""
    if isinstance(patch, Mapping) and isinstance(original, Mapping):
        out = dict(original)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
                continue
            child = node.child(key) if node is not None else None
            out[key] = _strategic(original.get(key), value, child)
        return out
    if isinstance(patch, list) and isinstance(original, list) and node is not None:
        key = node.merge_key
        if key is not None and all(isinstance(item, Mapping) for item in patch):
            out_list = list(original)
            item_node = node.child(0)
            for item in patch:
                found = next(
                    (
                        i
                        for i, o in enumerate(out_list)
                        if isinstance(o, Mapping) and o.get(key) == item.get(key)
                    ),
                    None,
                )
                if found is None:
                    out_list.append(_without_nulls(item))
                else:
                    out_list[found] = _strategic(out_list[found], item, item_node)
            return _merge_order(out_list, patch, original, key)
    return _without_nulls(patch)


def _merge_order(merged: list[Any], patch: list[Any], original: list[Any], key: str) -> list[Any]:
    """The order ``mergeSlice`` leaves a merged list in (k8s.io/apimachinery v0.36.2, the
    trainer's pin: ``partitionMapsByPresentInList``, ``normalizeElementOrder``,
    ``mergeSortedSlice``): the items the patch names, in the patch's order, and the original's
    others, in theirs, interleaved where the original orders both; a new item goes first."""

    def key_of(item: Any) -> Any:
        return item.get(key) if isinstance(item, Mapping) else None

    named = [key_of(item) for item in patch]
    server = [key_of(item) for item in original]
    patched = sorted(
        (m for m in merged if key_of(m) in named), key=lambda m: named.index(key_of(m))
    )
    server_only = [m for m in merged if key_of(m) not in named]
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patched):
        if j >= len(patched):
            out.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            out.append(patched[j])
            j += 1
        else:
            left, right = key_of(server_only[i]), key_of(patched[j])
            if left in server and right in server and server.index(left) < server.index(right):
                out.append(server_only[i])
                i += 1
            else:
                out.append(patched[j])
                j += 1
    return out


def _without_nulls(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


class _JobSetSpecNode(FieldNode):
    """The JobSet spec's schema for the merge: ``replicatedJobs`` merged by name
    (jobset_types.go), each one's ``template`` a batch JobTemplateSpec."""

    def __init__(self, version: tuple[int, int]) -> None:
        defs = k8s.definitions(version)["$defs"]
        raw = {
            "type": "object",
            "properties": {
                "replicatedJobs": {
                    "type": "array",
                    "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "name",
                    "items": {
                        "type": "object",
                        "properties": {
                            "template": {"$ref": "#/$defs/io.k8s.api.batch.v1.JobTemplateSpec"}
                        },
                    },
                }
            },
        }
        super().__init__(raw, defs)


def merge_resources(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``MergeResourceRequirements``: limits and requests merged key by key, claims by name."""
    out = copy.deepcopy(dict(base))
    for key in ("limits", "requests"):
        if override.get(key):
            out[key] = {**(out.get(key) or {}), **override[key]}
    if override.get("claims"):
        claims = list(out.get("claims") or [])
        for claim in override["claims"]:
            _upsert(claims, dict(claim), lambda a, b: a.get("name") == b.get("name"))
        out["claims"] = claims
    return out


# --- PodSets (runtime.Info) -----------------------------------------------------------------


@dataclass
class Container:
    name: str
    image: str
    command: list[str]
    env: list[dict[str, Any]]
    ports: list[dict[str, Any]]
    mounts: list[dict[str, Any]]


def _container(c: Mapping[str, Any]) -> Container:
    return Container(
        str(c.get("name", "")),
        str(c.get("image", "")),
        list(c.get("command") or []),
        [dict(e) for e in c.get("env") or []],
        [dict(p) for p in c.get("ports") or []],
        [dict(m) for m in c.get("volumeMounts") or []],
    )


@dataclass
class PodSet:
    name: str
    ancestor: str | None
    count: int
    containers: list[Container]
    init_containers: list[Container]
    volumes: list[dict[str, Any]]
    #: ``resourcehelpers.PodRequests`` of one pod.
    requests: dict[str, Quantity]
    #: What one pod requests once the API server has defaulted its containers' requests from
    #: their limits (what the scheduler and quota count: ``kubetrain.io/runs``).
    defaulted: dict[str, Quantity] = field(default_factory=dict)

    def container(self, name: str) -> Container | None:
        return next((c for c in self.containers if c.name == name), None)

    def any_container(self, name: str) -> Container | None:
        """``FindContainerByPodSetName``: containers first, then init containers."""
        return self.container(name) or next(
            (c for c in self.init_containers if c.name == name), None
        )


def defaulted_requests(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A pod spec with each container's requests defaulted from its limits, as the API server
    defaults a pod (``SetDefaults_ResourceRequirements`` via ``SetDefaults_Pod``: a limit
    without a request is the request too)."""
    out = dict(spec)
    for key in ("initContainers", "containers"):
        containers = []
        for c in spec.get(key) or []:
            resources = (c.get("resources") or {}) if isinstance(c, Mapping) else {}
            limits = resources.get("limits") or {}
            requests = dict(resources.get("requests") or {})
            missing = {k: v for k, v in limits.items() if k not in requests}
            if missing:
                c = {**c, "resources": {**resources, "requests": {**missing, **requests}}}
            containers.append(c)
        if key in spec:
            out[key] = containers
    return out


def _pod_spec(rjob: dict[str, Any]) -> dict[str, Any]:
    template = rjob.setdefault("template", {})
    job_spec = template.setdefault("spec", {})
    pod = job_spec.setdefault("template", {})
    return pod.setdefault("spec", {})  # type: ignore[no-any-return]


def _ancestor(rjob: Mapping[str, Any]) -> str | None:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    value = labels.get(ANCESTOR_LABEL)
    return str(value) if value is not None else None


# --- the controller -------------------------------------------------------------------------


@dataclass
class _Info:
    """``runtime.Info``: what the plugins read and write."""

    labels: dict[str, str]
    annotations: dict[str, str]
    ml: Mapping[str, Any]
    pod_groups: Mapping[str, Any]
    spec: dict[str, Any]
    podsets: list[PodSet]
    pod_labels: dict[str, str] = field(default_factory=dict)
    pod_annotations: dict[str, str] = field(default_factory=dict)

    def by_ancestor(self, ancestor: str) -> PodSet | None:
        return next((p for p in self.podsets if p.ancestor == ancestor), None)

    def by_name(self, name: str) -> PodSet | None:
        return next((p for p in self.podsets if p.name == name), None)

    def runtime_resources(self) -> dict[str, Any] | None:
        """``ExtractResourcePerNodeFromRuntime``: the node container's resources of the node
        job or the trainer step (as merged with resourcesPerNode)."""
        for rjob in self.spec.get("replicatedJobs") or []:
            if rjob.get("name") == NODE or _ancestor(rjob) == TRAINER:
                for c in _pod_spec(rjob).get("containers") or []:
                    if c.get("name") == NODE and c.get("resources") is not None:
                        return dict(c["resources"])
        return None


def _info(job: TrainJob, runtime: Runtime, version: tuple[int, int]) -> _Info:
    """``newRuntimeInfo``."""
    raw = copy.deepcopy(dict(runtime.spec_data or {}))
    template = raw.get("template") or {}
    meta = template.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    annotations = dict(meta.get("annotations") or {})
    spec = dict(template.get("spec") or {})
    patches = job.spec.runtime_patches or []
    for patch in patches:
        tmpl = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        if tmpl is not None and tmpl.metadata is not None:
            labels.update(tmpl.metadata.get("labels") or {})
            annotations.update(tmpl.metadata.get("annotations") or {})
    order = {rjob.get("name"): i for i, rjob in enumerate(spec.get("replicatedJobs") or [])}
    node = _JobSetSpecNode(version)
    for patch in patches:
        tmpl = patch.training_runtime_spec.template if patch.training_runtime_spec else None
        if tmpl is None or tmpl.spec is None:
            continue
        spec = _strategic(
            spec, tmpl.spec.model_dump(mode="json", by_alias=True, exclude_none=True), node
        )
    spec["replicatedJobs"] = sorted(
        spec.get("replicatedJobs") or [], key=lambda r: order.get(r.get("name"), 0)
    )
    ml = (runtime.spec_data or {}).get("mlPolicy")
    trainer = job.spec.trainer
    podsets = []
    for rjob in spec["replicatedJobs"]:
        pod = _pod_spec(rjob)
        ancestor = _ancestor(rjob)
        count = int(((rjob.get("template") or {}).get("spec") or {}).get("parallelism", 1))
        if ancestor == TRAINER and ml is not None:
            count = int(ml.get("numNodes") or 1)
        mpi = (ml or {}).get("mpi")
        launcher_as_node = bool(mpi and mpi.get("runLauncherAsNode")) and rjob.get("name") == NODE
        if (
            trainer is not None
            and trainer.resources_per_node is not None
            and ((ancestor == TRAINER and ml is not None) or launcher_as_node)
        ):
            for c in pod.get("containers") or []:
                if c.get("name") == NODE:
                    c["resources"] = merge_resources(
                        c.get("resources") or {}, trainer.resources_per_node
                    )
                    break
        podsets.append(
            PodSet(
                str(rjob.get("name")),
                ancestor,
                max(count, 1),
                [_container(c) for c in pod.get("containers") or []],
                [_container(c) for c in pod.get("initContainers") or []],
                [dict(v) for v in pod.get("volumes") or []],
                pod_requests(pod),
                defaulted=pod_requests(defaulted_requests(pod)),
            )
        )
    return _Info(
        labels,
        annotations,
        ml or {},
        (runtime.spec_data or {}).get("podGroupPolicy") or {},
        spec,
        podsets,
    )


def _resources_per_node(info: _Info, job: TrainJob) -> dict[str, Any]:
    if job.spec.trainer is not None and job.spec.trainer.resources_per_node is not None:
        return dict(job.spec.trainer.resources_per_node)
    return info.runtime_resources() or {}


def _cpus(resources: Mapping[str, Any]) -> int:
    """``getNumCPUPerNode``: requested CPUs (else the limit), rounded up."""

    def value(values: Any) -> Fraction | None:
        raw = (values or {}).get("cpu")
        if raw is None:
            return None
        try:
            return parse_quantity(raw).value
        except ValueError:
            return None

    requested = value(resources.get("requests"))
    if requested is None or requested == 0:
        limit = value(resources.get("limits"))
        return math.ceil(limit) if limit is not None else 0
    return math.ceil(requested)


def _node_0(name: str) -> str:
    """The host of the trainer's first node, which every node reaches (the master, the
    rendezvous, the coordinator or the tracker): ``<job>-node-0-0.<job>``."""
    return names.jobset_pod_host(name, NODE, 0, 0, name)


def _master_env(name: str) -> list[dict[str, Any]]:
    return [
        {"name": "PET_MASTER_ADDR", "value": _node_0(name)},
        {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)},
    ]


def _torch(info: _Info, job: TrainJob) -> list[str] | None:
    """The Torch plugin's ``EnforceMLPolicy``; returns the trainer's command as torchtune
    rewrites it (``None``: unchanged)."""
    trainer_ps = info.by_ancestor(TRAINER)
    trainer = job.spec.trainer
    if trainer_ps is not None and trainer is not None and trainer.num_nodes is not None:
        trainer_ps.count = trainer.num_nodes
    num_proc: str | int = (
        "auto"
        if trainer is None or trainer.num_proc_per_node is None
        else trainer.num_proc_per_node
    )
    resources = _resources_per_node(info, job)
    gpus = gpus_of(resources)
    if num_proc == "auto" and gpus == 0:
        num_proc = max(1, _cpus(resources))
    container = (
        trainer_ps.container(NODE) if trainer_ps is not None and trainer is not None else None
    )
    if container is not None and trainer is not None:
        upsert_env(container.env, *env_vars(trainer.env))
    nodes = trainer_ps.count if trainer_ps is not None else 1
    pet: list[dict[str, Any]] = [
        {"name": "PET_NNODES", "value": str(nodes)},
        {"name": "PET_NPROC_PER_NODE", "value": str(num_proc)},
        {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
    ]
    command = None
    if container is not None and trainer is not None:
        upsert_env(container.env, *pet)
        if trainer.command != TORCHTUNE_ENTRYPOINT:
            upsert_env(container.env, *_master_env(job.name))
        else:
            extra = []
            if (
                nodes > 1
                or (isinstance(num_proc, int) and num_proc > 1)
                or (num_proc == "auto" and gpus > 1)
            ):
                extra.append(f"--rdzv_endpoint={_node_0(job.name)}:{TRAINER_PORT}")
            model = torchtune_model(job.spec.runtime_ref.name)
            recipe, config = torchtune_recipe(
                nodes,
                num_proc if isinstance(num_proc, int) else None,
                gpus,
                model,
                trainer.args or [],
            )
            extra += [recipe, "--config", config, *_torchtune_overrides(info)]
            command = [*trainer.command, *extra]
        upsert_ports(container.ports, {"containerPort": TRAINER_PORT})
    torch = info.ml.get("torch") or {}
    for target in (torch.get("envInjection") or {}).get("targets") or []:
        for name in target.get("containerNames") or []:
            ps = info.by_name(str(target.get("jobName")))
            found = ps.any_container(str(name)) if ps is not None else None
            if found is not None:
                upsert_env(found.env, *pet)
                upsert_env(found.env, *_master_env(job.name))
    return command


def _torchtune_overrides(info: _Info) -> list[str]:
    """``extractOverridesFromRuntime``: the immutable configs the runtime's node command sets."""
    out = []
    for rjob in info.spec.get("replicatedJobs") or []:
        if _ancestor(rjob) != TRAINER:
            continue
        for c in _pod_spec(rjob).get("containers") or []:
            if c.get("name") == NODE:
                out += [
                    a for a in c.get("command") or [] if str(a).split("=")[0] in TORCHTUNE_IMMUTABLE
                ]
    return out


def _mpi(info: _Info, job: TrainJob) -> int:
    """The MPI plugin's ``EnforceMLPolicy``; returns the slots per node."""
    mpi = info.ml.get("mpi") or {}
    launcher_as_node = bool(mpi.get("runLauncherAsNode"))
    trainer = job.spec.trainer
    if trainer is not None and trainer.num_nodes is not None:
        node = info.by_name(NODE)
        if node is not None:
            node.count = max(trainer.num_nodes - 1, 1) if launcher_as_node else trainer.num_nodes
    slots = int(mpi.get("numProcPerNode", 1))
    if trainer is not None and trainer.num_proc_per_node is not None:
        slots = trainer.num_proc_per_node
    elif slots == 1:
        gpus = gpus_of(_resources_per_node(info, job))
        if gpus > 1:
            slots = gpus
    mount_path = mpi.get("sshAuthMountPath") or "/root/.ssh"
    for ps in info.podsets:
        if ps.name not in (NODE, LAUNCHER):
            continue
        upsert_volumes(
            ps.volumes,
            {
                "name": SSH_VOLUME,
                "secret": {
                    "secretName": f"{job.name}-mpi-ssh-auth",
                    "defaultMode": 0o400,
                    "items": [
                        {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
                        {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
                        {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644},
                    ],
                },
            },
        )
        if ps.name == LAUNCHER:
            upsert_volumes(
                ps.volumes,
                {
                    "name": HOSTFILE_VOLUME,
                    "configMap": {
                        "name": f"{job.name}-mpi-hostfile",
                        "items": [{"key": HOSTFILE, "path": HOSTFILE, "mode": 0o444}],
                    },
                },
            )
        for container in ps.containers:
            if container.name != NODE:
                continue
            upsert_mounts(container.mounts, {"name": SSH_VOLUME, "mountPath": mount_path})
            if ps.name == LAUNCHER:
                upsert_mounts(
                    container.mounts, {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}
                )
                upsert_env(
                    container.env,
                    {
                        "name": "OMPI_MCA_orte_default_hostfile",
                        "value": f"{HOSTFILE_DIR}/{HOSTFILE}",
                    },
                    {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                    {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
                    {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
                )
    return slots


def _jax(info: _Info, job: TrainJob) -> None:
    """The JAX plugin's ``EnforceMLPolicy``."""
    trainer_ps = info.by_ancestor(TRAINER)
    trainer = job.spec.trainer
    if trainer_ps is not None and trainer is not None and trainer.num_nodes is not None:
        trainer_ps.count = trainer.num_nodes
    container = (
        trainer_ps.container(NODE) if trainer_ps is not None and trainer is not None else None
    )
    if container is None or trainer_ps is None:
        return
    upsert_env(
        container.env,
        {"name": "JAX_NUM_PROCESSES", "value": str(trainer_ps.count)},
        {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
        {
            "name": "JAX_COORDINATOR_ADDRESS",
            "value": f"{_node_0(job.name)}:{TRAINER_PORT}",
        },
    )
    upsert_ports(container.ports, {"containerPort": TRAINER_PORT})


def _xgboost(info: _Info, job: TrainJob) -> None:
    """The XGBoost plugin's ``EnforceMLPolicy``."""
    trainer_ps = info.by_ancestor(TRAINER)
    if trainer_ps is None:
        return
    trainer = job.spec.trainer
    if trainer is not None and trainer.num_nodes is not None:
        trainer_ps.count = trainer.num_nodes
    container = trainer_ps.container(NODE) if trainer is not None else None
    if container is None:
        return
    workers = gpus_of(_resources_per_node(info, job)) or 1
    upsert_env(
        container.env,
        {"name": "DMLC_TRACKER_URI", "value": _node_0(job.name)},
        {"name": "DMLC_TRACKER_PORT", "value": str(TRAINER_PORT)},
        {"name": "DMLC_TASK_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
        {"name": "DMLC_NUM_WORKER", "value": str(trainer_ps.count * workers)},
    )
    upsert_ports(container.ports, {"containerPort": TRAINER_PORT})


def _plain(info: _Info, job: TrainJob) -> None:
    """The PlainML plugin's ``EnforceMLPolicy`` (any runtime but torch, MPI and JAX)."""
    trainer = job.spec.trainer
    if trainer is None:
        return
    trainer_ps = info.by_ancestor(TRAINER)
    if trainer_ps is not None and trainer.num_nodes is not None:
        trainer_ps.count = trainer.num_nodes
    container = trainer_ps.container(NODE) if trainer_ps is not None else None
    if container is not None:
        upsert_env(container.env, *env_vars(trainer.env))


def _endpoints(info: _Info, job: TrainJob, ps: PodSet) -> Iterator[str]:
    """The JobSet plugin's ``IdentifyPodNetwork`` for one pod set, produced as read: only the
    MPI hostfile lists them, and the loader bounds its size (``models.load.trainjob_rules``)
    before this runs."""
    subdomain = (info.spec.get("network") or {}).get("subdomain") or job.name
    for rjob, other in zip(info.spec.get("replicatedJobs") or [], info.podsets, strict=False):
        if other is ps:
            replicas = int(rjob.get("replicas", 1))
            for r in range(replicas):
                for p in range(ps.count):
                    yield names.jobset_pod_host(job.name, str(rjob.get("name")), r, p, subdomain)


def _jobset_build(info: _Info, job: TrainJob, command: list[str] | None) -> Manifest:
    """``SyncParallelCount``, then the JobSet plugin's ``Build`` and its ``Builder``."""
    spec = info.spec
    rjobs = spec.get("replicatedJobs") or []
    for ps in info.podsets:
        for rjob in rjobs:
            if rjob.get("name") == ps.name:
                job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
                job_spec["parallelism"] = ps.count
                job_spec["completions"] = ps.count
                break
    for rjob, ps in zip(rjobs, info.podsets, strict=False):
        pod = _pod_spec(rjob)
        volumes = pod.setdefault("volumes", [])
        upsert_volumes(volumes, *ps.volumes)
        if not volumes:
            del pod["volumes"]
        for kind, snapshot in (
            ("containers", ps.containers),
            ("initContainers", ps.init_containers),
        ):
            written = pod.setdefault(kind, [])
            for i, c in enumerate(snapshot):
                if i >= len(written):
                    written.append({"name": c.name})
                target = written[i]
                if c.command:
                    target["command"] = list(c.command)
                if c.image:
                    target["image"] = c.image
                for key, items, upsert in (
                    ("env", c.env, upsert_env),
                    ("ports", c.ports, upsert_ports),
                    ("volumeMounts", c.mounts, upsert_mounts),
                ):
                    current = target.setdefault(key, [])
                    upsert(current, *items)
                    if not current:
                        del target[key]
            if not written:
                del pod[kind]
    trainer = job.spec.trainer
    initializer = job.spec.initializer
    mpi = info.ml.get("mpi") or {}
    for rjob in rjobs:
        ancestor = _ancestor(rjob)
        pod = _pod_spec(rjob)
        for step, given in (
            (DATASET_INITIALIZER, initializer.dataset if initializer else None),
            (MODEL_INITIALIZER, initializer.model if initializer else None),
        ):
            if ancestor != step:
                continue
            rjob["replicas"] = 1
            for c in pod.get("containers") or []:
                if c.get("name") != step or given is None:
                    continue
                env = c.setdefault("env", [])
                if given.storage_uri is not None:
                    upsert_env(env, {"name": "STORAGE_URI", "value": given.storage_uri})
                upsert_env(env, *env_vars(given.env))
                if not env:
                    del c["env"]
                if given.secret_ref is not None:
                    c.setdefault("envFrom", []).append(
                        {"secretRef": {"name": given.secret_ref.get("name", "")}}
                    )
        if ancestor == TRAINER:
            rjob["replicas"] = 1
            for c in pod.get("containers") or []:
                if c.get("name") == NODE and trainer is not None:
                    if trainer.image is not None:
                        c["image"] = trainer.image
                    if (command or trainer.command) is not None:
                        c["command"] = list(command or trainer.command or [])
                    if trainer.args is not None:
                        c["args"] = list(trainer.args)
        if ancestor == TRAINER or (mpi.get("runLauncherAsNode") and rjob.get("name") == NODE):
            for c in pod.get("containers") or []:
                if c.get("name") == NODE and trainer is not None and trainer.env:
                    upsert_env(c.setdefault("env", []), *env_vars(trainer.env))
        pod_meta = rjob["template"]["spec"]["template"].setdefault("metadata", {})
        if info.pod_labels:
            pod_meta["labels"] = {**(pod_meta.get("labels") or {}), **info.pod_labels}
        if info.pod_annotations:
            pod_meta["annotations"] = {
                **(pod_meta.get("annotations") or {}),
                **info.pod_annotations,
            }
        if not pod_meta:
            del rjob["template"]["spec"]["template"]["metadata"]
    if job.spec.suspend is not None:
        spec["suspend"] = job.spec.suspend
    metadata: dict[str, Any] = {"name": job.name, "namespace": job.namespace}
    if info.labels:
        metadata["labels"] = dict(info.labels)
    if info.annotations:
        metadata["annotations"] = dict(info.annotations)
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": metadata,
        "spec": spec,
    }


def _total(info: _Info) -> tuple[int, dict[str, str]]:
    members = 0
    total: dict[str, Quantity] = {}
    for ps in info.podsets:
        members += ps.count
        add_resources(
            total, {k: Quantity(q.value * ps.count, q.format) for k, q in ps.requests.items()}
        )
    return members, {k: format_quantity(q) for k, q in sorted(total.items())}


def _pod_groups(info: _Info, job: TrainJob) -> list[Manifest]:
    """The coscheduling and volcano plugins' ``Build``."""
    out = []
    members, resources = _total(info)
    coscheduling = info.pod_groups.get("coscheduling")
    if coscheduling is not None:
        spec: dict[str, Any] = {"minMember": members, "minResources": resources}
        spec["scheduleTimeoutSeconds"] = int(coscheduling.get("scheduleTimeoutSeconds", 60))
        out.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": job.name, "namespace": job.namespace},
                "spec": spec,
            }
        )
    volcano = info.pod_groups.get("volcano")
    if volcano is not None:
        vspec: dict[str, Any] = {"minMember": members, "minResources": resources}
        if VOLCANO_QUEUE in info.annotations:
            vspec["queue"] = info.annotations[VOLCANO_QUEUE]
        for rjob in info.spec.get("replicatedJobs") or []:
            if (name := _pod_spec(rjob).get("priorityClassName")) is not None:
                vspec["priorityClassName"] = name
        topology = volcano.get("networkTopology")
        if topology is not None:
            vspec["networkTopology"] = {
                "mode": topology.get("mode", "hard"),
                "highestTierAllowed": topology.get("highestTierAllowed", 1),
            }
        out.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": job.name, "namespace": job.namespace},
                "spec": vspec,
            }
        )
    return out


def _mpi_objects(info: _Info, job: TrainJob, slots: int, ctx: BuildContext) -> list[Manifest]:
    """The MPI plugin's ``Build``: the hostfile ConfigMap, and the SSH Secret (from the secret
    store, see the module docstring)."""
    launcher_as_node = bool((info.ml.get("mpi") or {}).get("runLauncherAsNode"))
    lines = [
        f"{endpoint} slots={slots}\n"
        for ps in info.podsets
        if ps.name == NODE or (launcher_as_node and ps.name == LAUNCHER)
        for endpoint in _endpoints(info, job, ps)
    ]
    hostfile = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{job.name}-mpi-hostfile", "namespace": job.namespace},
        "data": {HOSTFILE: "".join(lines)},
    }
    credential = job.metadata.annotations.get(SSH_CREDENTIAL_ANNOTATION, f"{job.name}-ssh")
    secret = SecretSpec(
        name=f"{job.name}-mpi-ssh-auth",
        namespace=job.namespace,
        type=SSH_AUTH_TYPE,
        labels={},
        data={key: CredentialRef(credential, key) for key in ("ssh-privatekey", "ssh-publickey")},
        field=("metadata", "annotations", SSH_CREDENTIAL_ANNOTATION),
    )
    return [*secret_manifests(secret, ctx), hostfile]


@dataclass(frozen=True)
class Built:
    """What the trainer builds for a TrainJob."""

    jobset: Manifest
    companions: list[Manifest]
    #: ``[{"job", "pods", "requests"}]`` per replicated job (see :data:`RUNS_ANNOTATION`).
    runs: list[dict[str, Any]]


def jobset_of(
    job: TrainJob, runtime: Runtime, ctx: BuildContext, *, companions: bool = True
) -> Built:
    """The objects the trainer's controller builds for ``job`` on ``runtime`` (its spec known);
    without ``companions``, the JobSet and what it runs only (operator mode's ``runs``, which
    needs no MPI Secret from the stack's secret store)."""
    info = _info(job, runtime, ctx.settings.version)
    policy = info.ml
    command = None
    slots = 1
    if "torch" in policy:
        command = _torch(info, job)
    elif "mpi" in policy:
        slots = _mpi(info, job)
    elif "jax" in policy:
        _jax(info, job)
    else:
        _plain(info, job)
        if "xgboost" in policy:
            _xgboost(info, job)
    if "coscheduling" in info.pod_groups:
        info.pod_labels[PODGROUP_LABEL] = job.name
    if "volcano" in info.pod_groups:
        info.pod_annotations[VOLCANO_GROUP] = job.name
    jobset = _jobset_build(info, job, command)
    others: list[Manifest] = []
    if companions and "mpi" in policy:
        others += _mpi_objects(info, job, slots, ctx)
    if companions:
        others += _pod_groups(info, job)
    runs = [
        {
            "job": ps.name,
            "pods": ps.count * int(rjob.get("replicas", 1)),
            "requests": {k: format_quantity(q) for k, q in sorted(ps.defaulted.items())},
        }
        for ps, rjob in zip(info.podsets, jobset["spec"].get("replicatedJobs") or [], strict=False)
    ]
    return Built(jobset, others, runs)


def _shape_runs(job: TrainJob, runtime: Runtime) -> list[dict[str, Any]]:
    """What a runtime declared by name only runs: one pod per initializer, the nodes of the
    trainer step, the TrainJob's resourcesPerNode per node (the runtime's own unknown)."""
    shape = runtime.shape
    trainer = job.spec.trainer
    nodes = (trainer.num_nodes if trainer else None) or shape.num_nodes or 1
    per_node = trainer.resources_per_node if trainer else None
    # A limit without a request is the request too, as the API server defaults the pods.
    given = {
        **((per_node or {}).get("limits") or {}),
        **((per_node or {}).get("requests") or {}),
    }
    requests = {str(k): format_quantity(parse_quantity(v)) for k, v in sorted(given.items())}
    out = []
    for rjob in shape.jobs:
        pods = 1
        if rjob.ancestor == TRAINER:
            # The MPI plugin leaves the trainer step (its launcher) at the runtime's count.
            pods = (shape.num_nodes or 1) if shape.policy == "mpi" else nodes
        if shape.policy == "mpi" and rjob.name == NODE:
            pods = max(nodes - 1, 1) if shape.run_launcher_as_node else nodes
        node_job = rjob.ancestor == TRAINER or (shape.run_launcher_as_node and rjob.name == NODE)
        out.append({"job": rjob.name, "pods": pods, "requests": requests if node_job else {}})
    return out


def _operator(job: TrainJob, runtime: Runtime, ctx: BuildContext) -> Manifest:
    """The TrainJob as written, with the defaults its CRD gives, and what it will run
    (:data:`RUNS_ANNOTATION`)."""
    doc = job.model_dump(mode="json", by_alias=True, exclude_none=True)
    spec = doc["spec"]
    ref = spec["runtimeRef"]
    ref.setdefault("apiGroup", TRAINER_GROUP)
    ref.setdefault("kind", CLUSTER_TRAINING_RUNTIME)
    spec.setdefault("managedBy", TRAINJOB_CONTROLLER)
    spec.setdefault("suspend", False)
    if runtime.spec_data is not None:
        built = jobset_of(job, runtime, ctx, companions=False)
        _operator_resources(job, runtime, built, ctx)
        _operator_pod_security(job, runtime, built, ctx)
        runs = built.runs
    else:
        runs = _shape_runs(job, runtime)
    meta = doc["metadata"]
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not k.startswith("kubetrain.io/")
    }
    annotations[RUNS_ANNOTATION] = json.dumps(runs, separators=(",", ":"), sort_keys=True)
    meta["annotations"] = annotations
    if not meta.get("labels"):
        meta.pop("labels", None)
    return doc


def _pod_security_of(jobset: Manifest, level: str) -> list[tuple[str, tuple[str | int, ...], str]]:
    """(replicated job, field path in its pod template, message) of everything Pod Security's
    ``level`` refuses in the pods of ``jobset``."""
    found = []
    for rjob in jobset["spec"].get("replicatedJobs") or []:
        template = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        for path, message in pod_security_problems(
            level, (), template.get("metadata") or {}, template.get("spec") or {}
        ):
            found.append((str(rjob.get("name")), path, message))
    return found


def _operator_pod_security(
    job: TrainJob, runtime: Runtime, built: Built, ctx: BuildContext
) -> None:
    """In operator mode the trainer builds the JobSet in the cluster, from the runtime and the
    TrainJob's runtime patches, so nothing kubetrain writes holds its pods: they are judged
    here, as the namespace's Pod Security admission will judge them (the stack's
    ``kubetrain:podSecurity``). A refusal names the patches when they bring it, else the
    runtime."""
    level = ctx.settings.pod_security
    found = _pod_security_of(built.jobset, level)
    if not found:
        return
    path: tuple[str | int, ...] = ("spec", "runtimeRef", "name")
    origin = runtime.title
    if job.spec.runtime_patches:
        unpatched = job.model_copy(
            update={"spec": job.spec.model_copy(update={"runtime_patches": None})}
        )
        jobset = jobset_of(unpatched, runtime, ctx, companions=False).jobset
        before = set(_pod_security_of(jobset, level))
        brought = [f for f in found if f not in before]
        if brought:
            found = brought
            path, origin = ("spec", "runtimePatches"), f"{runtime.title} and these patches"
    shown = "; ".join(
        f"replicatedJob {name}: {format_path(('template', 'spec', 'template', *where))}: {message}"
        for name, where, message in found[:3]
    )
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    raise BuildProblem(
        path,
        f"would run pods that Pod Security ({level}) refuses (the trainer builds them from "
        f"{origin}): {shown}{more}; the namespace's admission would refuse them, so the "
        "TrainJob would never run (kubetrain:podSecurity)",
    )


def _resource_refusals(
    resources: Any, gpu_resource: str
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path below ``resources``, message) of what render refuses in the pods it writes: a
    request or limit the API server refuses (rule ``resource-quantity``) and a GPU count that is
    no whole number (``gpu-requests``)."""
    yield from quantity_refusals(resources)
    for code, path, message in gpu_findings(resources, gpu_resource):
        if code == "count":
            yield path, message


def _operator_resources(job: TrainJob, runtime: Runtime, built: Built, ctx: BuildContext) -> None:
    """In operator mode the trainer builds the pods, from the runtime and the job's
    ``resourcesPerNode``: their requests and limits are judged here as render judges the pods
    it writes (a GPU count that is no whole number, a quantity past 64 bits or negative), which
    the API server would refuse when the JobSet controller makes the pods."""
    gpu = ctx.settings.gpu_resource
    trainer = job.spec.trainer
    given = trainer.resources_per_node if trainer is not None else None
    if given is not None:
        for where, message in _resource_refusals(given, gpu):
            raise BuildProblem(
                ("spec", "trainer", "resourcesPerNode", *where),
                f"would give each node resources the API server refuses: {message}",
            )
    found = []
    for rjob in built.jobset["spec"].get("replicatedJobs") or []:
        template = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        spec = template.get("spec") or {}
        for kind in ("initContainers", "containers"):
            for i, c in enumerate(spec.get(kind) or []):
                for where, message in _resource_refusals(c.get("resources"), gpu):
                    at = ("template", "spec", "template", "spec", kind, i, "resources", *where)
                    found.append(f"replicatedJob {rjob.get('name')}: {format_path(at)}: {message}")
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise BuildProblem(
            ("spec", "runtimeRef", "name"),
            f"would run pods whose resources the API server refuses (the trainer builds them "
            f"from {runtime.title}): {'; '.join(found[:3])}{more}",
        )


def runs_of(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a rendered TrainJob says it runs (:data:`RUNS_ANNOTATION`), or nothing."""
    text = annotations_of(obj).get(RUNS_ANNOTATION)
    if not isinstance(text, str):
        return []
    try:
        runs = json.loads(text)
    except (ValueError, RecursionError):  # a hand-edited file: nested past what Python reads
        return []
    return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


@builder(TrainJob)
def build_trainjob(job: TrainJob, mode: Mode, ctx: BuildContext) -> list[Manifest]:
    runtime = ctx.runtimes.get(key_of(job))
    if runtime is None:  # the loader refuses the job first; a standalone component may not
        raise BuildProblem(
            ("spec", "runtimeRef", "name"),
            f"{job.spec.runtime_ref.runtime_kind} {job.spec.runtime_ref.name!r} is not known: "
            "declare it in kubetrain:external.trainingRuntimes",
        )
    if mode == Mode.OPERATOR:
        return [canonical(_operator(job, runtime, ctx))]
    if runtime.spec_data is None:
        raise BuildProblem(
            ("spec", "runtimeRef", "name"),
            f"native mode builds the JobSet from the runtime's spec, and {runtime.title} is "
            "declared by name only",
        )
    if job.spec.active_deadline_seconds is not None:
        ctx.warn(
            ("spec", "activeDeadlineSeconds"),
            "is enforced by the trainer's controller, which native mode does not run: no "
            "deadline applies to the JobSet",
        )
    built = jobset_of(job, runtime, ctx)
    for rjob in built.jobset["spec"].get("replicatedJobs") or []:
        apply_pod_security(_pod_spec(rjob), ctx.settings.pod_security)
    # Kueue admits a JobSet by its own labels; the trainer's JobSet has the runtime's, so the
    # TrainJob's queue is carried to it (Kueue's TrainJob integration reads the TrainJob's).
    queue = kueue_labels(job.metadata.labels)
    if queue:
        meta = built.jobset["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), **queue}
    return [canonical(o) for o in (built.jobset, *built.companions)]
