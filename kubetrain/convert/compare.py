"""What the pods get before and after a conversion: the v1 job's pods as its operator creates
them, and the pods of the JobSet Kubeflow Trainer v2.3.0 builds for the TrainJob, side by side
per replica.

Both sides come from kubetrain's builders, which build each as its controller does: the v1 job
natively with bare pods, as the training operator (v1.9 ``ReconcilePods``) and the MPI Operator
create them; the TrainJob natively, the JobSet the trainer's controller builds
(:mod:`kubetrain.builders.trainjob`), expanded into its pods as the JobSet controller (v0.12)
and the Job controller create them: Job ``<jobset>-<replicatedJob>-<jobIndex>``, Indexed, one
pod per completion index ``<job>-<index>-<random>`` with hostname ``<job>-<index>`` in the
JobSet's subdomain, and ``JOB_COMPLETION_INDEX`` on every container (Kubernetes'
``addCompletionIndexEnvVariables``); the JobSet webhook's defaults (``jobSetWebhook.Default``:
restart policy OnFailure, success policy All).

Per replica: the pod and its name, each container's env (kept, changed, gone, new, renamed),
ports, resources and GPUs, volumes, init containers and sidecars; per job: the rendezvous
address, restart and failure semantics, the success condition, gang scheduling and the queue;
and warnings. :func:`to_json` is what ``kubetrain convert --compare --output json`` prints.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..builders import BuildContext, build_job
from ..builders.context import Target
from ..builders.gang import pod_requests
from ..builders.jaxjob import JAXTrainingJob
from ..builders.kubeflow import JOB_ROLE_LABEL, REPLICA_INDEX_LABEL, REPLICA_TYPE_LABEL, ReplicaJob
from ..builders.pytorchjob import PyTorchTrainingJob
from ..builders.tfjob import TFTrainingJob
from ..builders.xgboostjob import XGBoostTrainingJob
from ..kube import catalog
from ..kube.quantity import format_quantity, parse_quantity
from ..kube.stored import stored_form
from ..models.base import MODE_ANNOTATION, NATIVE_WORKLOAD_ANNOTATION, Mode
from ..models.jaxjob import JAXJob
from ..models.kubeflow import KubeflowJob
from ..models.load import LoadedJob, Stack
from ..models.mpijob import MPIJob
from ..models.pytorchjob import PyTorchJob
from ..models.runtimes import NODE
from ..models.tfjob import TFJob
from ..models.xgboostjob import XGBoostJob
from .trainjob import QUEUE_LABEL, Conversion, Note

__all__ = ["Comparison", "PodView", "compare", "format_comparison", "to_json"]

Manifest = dict[str, Any]
#: Where a pod of an Indexed Job reads its index: the annotation (what the trainer's env
#: refers to) and the label the Job controller also writes, which is what it points its own
#: ``JOB_COMPLETION_INDEX`` at (Kubernetes v1.36.2 pkg/controller/job/indexed_job_utils.go
#: ``addCompletionIndexEnvVariable``; the PodIndexLabel feature, on by default since 1.28;
#: found by make e2e, which compares with the Job controller's pods).
COMPLETION_INDEX_PATH = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
COMPLETION_INDEX_LABEL_PATH = "metadata.labels['batch.kubernetes.io/job-completion-index']"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
#: Variables of the same meaning under another name in Trainer v2.3.0's runtime of the
#: framework (v1 name -> v2 name).
RENAMES: dict[str, dict[str, str]] = {
    "torch": {"MASTER_ADDR": "PET_MASTER_ADDR", "MASTER_PORT": "PET_MASTER_PORT"},
    "jax": {
        "COORDINATOR_ADDRESS": "JAX_COORDINATOR_ADDRESS",
        "NUM_PROCESSES": "JAX_NUM_PROCESSES",
        "PROCESS_ID": "JAX_PROCESS_ID",
    },
    "xgboost": {
        "MASTER_ADDR": "DMLC_TRACKER_URI",
        "MASTER_PORT": "DMLC_TRACKER_PORT",
        "RANK": "DMLC_TASK_ID",
        "WORLD_SIZE": "DMLC_NUM_WORKER",
    },
}
#: (address variable, port variable) of the rendezvous each side's pods are told.
RENDEZVOUS: dict[str, tuple[tuple[str, str | None], tuple[str, str | None]]] = {
    "torch": (("MASTER_ADDR", "MASTER_PORT"), ("PET_MASTER_ADDR", "PET_MASTER_PORT")),
    "jax": (("COORDINATOR_ADDRESS", "COORDINATOR_PORT"), ("JAX_COORDINATOR_ADDRESS", None)),
    "xgboost": (("MASTER_ADDR", "MASTER_PORT"), ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT")),
}


#: The expansion of each Kubeflow kind (its ``UpdateJobStatus``: when the job has succeeded).
_EXPANSIONS: dict[type[KubeflowJob], type[ReplicaJob[Any]]] = {
    PyTorchJob: PyTorchTrainingJob,
    XGBoostJob: XGBoostTrainingJob,
    JAXJob: JAXTrainingJob,
    TFJob: TFTrainingJob,
}


# --- pod views ------------------------------------------------------------------------------------


def _resolve(entry: Mapping[str, Any], pod: PodView) -> str:
    """What a container sees of one env entry: its value, or where it comes from."""
    if "valueFrom" not in entry:
        return str(entry.get("value", ""))
    source = entry.get("valueFrom") or {}
    ref = source.get("fieldRef")
    if isinstance(ref, Mapping):
        path = ref.get("fieldPath")
        if path in (COMPLETION_INDEX_PATH, COMPLETION_INDEX_LABEL_PATH) and pod.index is not None:
            return str(pod.index)
        if path == "metadata.name":
            return pod.name
        return f"<{path}>"
    for key in ("secretKeyRef", "configMapKeyRef"):
        ref = source.get(key)
        if isinstance(ref, Mapping):
            return f"<{key[: -len('KeyRef')]} {ref.get('name')}/{ref.get('key')}>"
    if isinstance(source.get("resourceFieldRef"), Mapping):
        return f"<{source['resourceFieldRef'].get('resource')}>"
    return "<valueFrom>"


def spec_fields(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a pod spec a pod view shows, besides its host name and containers."""
    return {
        "restartPolicy": spec.get("restartPolicy"),
        "serviceAccountName": spec.get("serviceAccountName"),
        "schedulerName": spec.get("schedulerName"),
        "priorityClassName": spec.get("priorityClassName"),
        "nodeSelector": spec.get("nodeSelector") or {},
        "tolerations": spec.get("tolerations") or [],
        "affinity": spec.get("affinity"),
        "volumes": spec.get("volumes") or [],
    }


def container_fields(c: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a container a pod view shows (its env as written)."""
    return {
        "name": c.get("name"),
        "image": c.get("image"),
        "command": c.get("command"),
        "args": c.get("args"),
        "env": c.get("env") or [],
        "ports": c.get("ports") or [],
        "resources": c.get("resources") or {},
        "volumeMounts": c.get("volumeMounts") or [],
    }


@dataclass
class PodView:
    """One pod as its controller creates it."""

    replica: str
    name: str
    #: What creates it: "the training operator", "Job x (the JobSet's)".
    owner: str
    spec: Manifest
    hostname: str | None = None
    subdomain: str | None = None
    #: The Job completion index of a JobSet's pod.
    index: int | None = None

    def containers(self, field_: str = "containers") -> list[Manifest]:
        return [c for c in self.spec.get(field_) or [] if isinstance(c, dict)]

    def container(self, name: str) -> Manifest | None:
        return next((c for c in self.containers() if c.get("name") == name), None)

    def env(self, container: Mapping[str, Any]) -> dict[str, str]:
        return {str(e.get("name")): _resolve(e, self) for e in container.get("env") or []}

    def requests(self) -> dict[str, str]:
        try:
            found = pod_requests(self.spec)
        except ValueError:
            return {}
        return {k: format_quantity(v) for k, v in sorted(found.items())}

    def as_json(self) -> dict[str, Any]:
        def container(c: Mapping[str, Any]) -> dict[str, Any]:
            return {**container_fields(c), "envResolved": self.env(c)}

        spec = self.spec
        return {
            "replica": self.replica,
            "name": self.name,
            "owner": self.owner,
            "hostname": self.hostname,
            "subdomain": self.subdomain,
            **spec_fields(spec),
            "containers": [container(c) for c in self.containers()],
            "initContainers": [container(c) for c in self.containers("initContainers")],
            "requests": self.requests(),
        }


def _job_spec_pod(obj: Manifest) -> Manifest:
    return copy.deepcopy(((obj.get("spec") or {}).get("template") or {}).get("spec") or {})


#: The back end both sides are built for. Only two things differ by target, neither of which
#: shapes a pod: a job's Secrets (render mode takes them from the stack's secret store, which
#: a published MPIJob's stack need not name: its operator generates the SSH key) and
#: render mode's refusal of ``ttlSecondsAfterFinished`` (which deletes a finished run).
COMPARISON_TARGET: Final = Target.PULUMI


def v1_objects(loaded: LoadedJob, stack: Stack) -> list[Manifest]:
    """What the v1 job's operator creates: the job built natively with bare pods (as the
    training operator creates them; the MPI Operator's launcher Job and worker Pods)."""
    job = loaded.document
    annotations = {
        k: v
        for k, v in job.metadata.annotations.items()
        if k not in (MODE_ANNOTATION, NATIVE_WORKLOAD_ANNOTATION)
    }
    meta = job.metadata.model_copy(update={"annotations": annotations})
    doc = job.model_copy(update={"metadata": meta})
    settings = stack.settings.model_copy(update={"native_workload": "pod", "mode": Mode.NATIVE})
    ctx = BuildContext(settings, COMPARISON_TARGET, runtimes=stack.runtimes)
    return build_job(LoadedJob(doc, loaded.source, Mode.NATIVE), ctx, [])


def v2_objects(loaded: LoadedJob, stack: Stack) -> list[Manifest]:
    """What the trainer builds for the TrainJob (``loaded`` in native mode): its JobSet and
    companions."""
    ctx = BuildContext(stack.settings, COMPARISON_TARGET, runtimes=stack.runtimes)
    return build_job(loaded, ctx, [])


def v1_pods(conversion: Conversion, objs: Sequence[Manifest]) -> dict[str, PodView]:
    """The v1 pods by replica (``Master-0``)."""
    job = conversion.job.job
    out: dict[str, PodView] = {}
    types = {p.v1_type.lower(): p.v1_type for p in conversion.pairs}
    for obj in objs:
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        if obj.get("kind") == "Pod":
            if isinstance(job, MPIJob):
                rtype = "Worker" if labels.get(JOB_ROLE_LABEL) == "worker" else "Launcher"
            else:
                rtype = types.get(str(labels.get(REPLICA_TYPE_LABEL)), "")
            index = int(labels.get(REPLICA_INDEX_LABEL, 0))
            spec = copy.deepcopy(obj.get("spec") or {})
            out[f"{rtype}-{index}"] = PodView(
                f"{rtype}-{index}",
                str(meta.get("name")),
                "the MPI Operator" if isinstance(job, MPIJob) else "the training operator",
                spec,
                spec.get("hostname"),
                spec.get("subdomain"),
            )
        elif catalog.of(obj).key == catalog.BATCH_JOB and isinstance(job, MPIJob):
            spec = _job_spec_pod(obj)
            name = str(meta.get("name"))
            out["Launcher-0"] = PodView(
                "Launcher-0",
                f"{name}-<random>",
                f"Job {name} (the MPI Operator's)",
                spec,
                spec.get("hostname"),
                spec.get("subdomain"),
            )
    return out


def v2_pods(objs: Sequence[Manifest]) -> dict[str, PodView]:
    """The pods of the TrainJob's JobSet by replicated job, job index and pod index
    (``node-0-1``), as the JobSet and Job controllers create them."""
    out: dict[str, PodView] = {}
    jobset = next((o for o in objs if o.get("kind") == "JobSet"), None)
    if jobset is None:
        return out
    name = str(jobset["metadata"]["name"])
    spec = jobset.get("spec") or {}
    network = spec.get("network") or {}
    subdomain = network.get("subdomain") or name
    for rjob in spec.get("replicatedJobs") or []:
        template = (rjob.get("template") or {}).get("spec") or {}
        pod_spec = (template.get("template") or {}).get("spec") or {}
        pods = int(template.get("parallelism", 1))
        for j in range(int(rjob.get("replicas", 1))):
            job_name = f"{name}-{rjob.get('name')}-{j}"
            for p in range(pods):
                pod = copy.deepcopy(pod_spec)
                pod.setdefault("restartPolicy", "OnFailure")  # jobSetWebhook.Default
                for key in ("initContainers", "containers"):
                    for c in pod.get(key) or []:
                        env = c.setdefault("env", [])
                        if not any(e.get("name") == COMPLETION_INDEX_ENV for e in env):
                            env.append(
                                {
                                    "name": COMPLETION_INDEX_ENV,
                                    "valueFrom": {
                                        "fieldRef": {
                                            "apiVersion": "v1",
                                            "fieldPath": COMPLETION_INDEX_LABEL_PATH,
                                        }
                                    },
                                }
                            )
                # As the API server stores the pod (canonical quantities, fieldRef apiVersion).
                pod = stored_form({"apiVersion": "v1", "kind": "Pod", "spec": pod})["spec"]
                key = f"{rjob.get('name')}-{j}-{p}"
                out[key] = PodView(
                    key,
                    f"{job_name}-{p}-<random>",
                    f"Job {job_name} (the JobSet's)",
                    pod,
                    f"{job_name}-{p}",
                    subdomain,
                    p,
                )
    return out


# --- the comparison -------------------------------------------------------------------------------


@dataclass
class EnvDiff:
    """One container's env, v1 against v2 (resolved values)."""

    same: dict[str, str] = field(default_factory=dict)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    gone: dict[str, str] = field(default_factory=dict)
    new: dict[str, str] = field(default_factory=dict)
    #: v1 name -> (v2 name, v1 value, v2 value)
    renamed: dict[str, tuple[str, str, str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "same": self.same,
            "changed": {k: {"v1": a, "v2": b} for k, (a, b) in self.changed.items()},
            "gone": self.gone,
            "new": self.new,
            "renamed": {k: {"to": n, "v1": a, "v2": b} for k, (n, a, b) in self.renamed.items()},
        }


def env_diff(v1: Mapping[str, str], v2: Mapping[str, str], renames: Mapping[str, str]) -> EnvDiff:
    out = EnvDiff()
    for name, value in v1.items():
        if name in v2:
            if v2[name] == value:
                out.same[name] = value
            else:
                out.changed[name] = (value, v2[name])
        elif name in renames and renames[name] in v2 and renames[name] not in v1:
            out.renamed[name] = (renames[name], value, v2[renames[name]])
        else:
            out.gone[name] = value
    taken = {n for n, _, _ in out.renamed.values()}
    for name, value in v2.items():
        if name not in v1 and name not in taken:
            out.new[name] = value
    return out


@dataclass
class ContainerDiff:
    v1: str | None
    v2: str | None
    env: EnvDiff
    ports: tuple[list[Any], list[Any]]
    resources: tuple[Any, Any]
    mounts: tuple[list[str], list[str]]

    def as_json(self) -> dict[str, Any]:
        return {
            "v1": self.v1,
            "v2": self.v2,
            "env": self.env.as_json(),
            "ports": {"v1": self.ports[0], "v2": self.ports[1]},
            "resources": {"v1": self.resources[0], "v2": self.resources[1]},
            "volumeMounts": {"v1": self.mounts[0], "v2": self.mounts[1]},
        }


@dataclass
class PairDiff:
    """A v1 pod and the TrainJob's pod in its place."""

    v1: PodView
    v2: PodView | None
    containers: list[ContainerDiff]
    init_gone: list[str]
    init_new: list[str]
    volumes: tuple[list[str], list[str]]
    requests: tuple[dict[str, str], dict[str, str]]
    restart: tuple[str | None, str | None]

    def as_json(self) -> dict[str, Any]:
        return {
            "v1": self.v1.replica,
            "v2": self.v2.replica if self.v2 else None,
            "containers": [c.as_json() for c in self.containers],
            "initContainers": {"gone": self.init_gone, "new": self.init_new},
            "volumes": {"v1": self.volumes[0], "v2": self.volumes[1]},
            "requests": {"v1": self.requests[0], "v2": self.requests[1]},
            "restartPolicy": {"v1": self.restart[0], "v2": self.restart[1]},
        }


@dataclass
class Comparison:
    """A v1 job and its TrainJob: their pods, pair by pair, and the job as a whole."""

    conversion: Conversion
    v1_title: str
    v2_title: str
    runtime: str
    v1: dict[str, PodView]
    v2: dict[str, PodView]
    pairs: list[PairDiff]
    #: aspect -> (v1, v2): rendezvous, services, restarts, failure, success, gang, queue
    job: dict[str, tuple[str, str]]
    warnings: list[Note]
    #: What to create in a cluster to run each side, as the stacks give them (patches applied):
    #: the v1 job's custom resource, the TrainJob and its TrainingRuntime (``None`` when it
    #: runs on Kubeflow's).
    documents: dict[str, Manifest | None] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        c = self.conversion
        return {
            "v1": {
                "title": self.v1_title,
                "source": str(c.job.source),
                "document": self.documents.get("v1"),
                "pods": [p.as_json() for p in self.v1.values()],
            },
            "v2": {
                "title": self.v2_title,
                "runtime": self.runtime,
                "document": self.documents.get("trainJob"),
                "runtimeDocument": self.documents.get("trainingRuntime"),
                "pods": [p.as_json() for p in self.v2.values()],
            },
            "pairs": [
                {"v1": p.v1, "v2": p.v2, "diff": d.as_json()}
                for p, d in zip(
                    (pair for pair in c.pairs if pair.v1 in self.v1), self.pairs, strict=False
                )
            ],
            "job": {k: {"v1": a, "v2": b} for k, (a, b) in self.job.items()},
            "warnings": [{"path": _dotted(w.path), "message": w.message} for w in self.warnings],
        }


def _dotted(path: Sequence[str | int]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _names(items: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(i.get("name")) for i in items]


def _resources(container: Mapping[str, Any] | None) -> dict[str, dict[str, str]]:
    """A container's resources with canonical quantities (as the API server stores them)."""
    out: dict[str, dict[str, str]] = {}
    for part, values in ((container or {}).get("resources") or {}).items():
        if isinstance(values, Mapping):
            out[str(part)] = {str(k): _quantity(v) for k, v in sorted(values.items())}
    return out


def _quantity(value: Any) -> str:
    try:
        return format_quantity(parse_quantity(value))
    except ValueError:
        return str(value)


def _ports(container: Mapping[str, Any] | None) -> list[Any]:
    return list((container or {}).get("ports") or [])


def _main_v1(conversion: Conversion, pod: PodView) -> str | None:
    job = conversion.job.job
    if isinstance(job, KubeflowJob):
        return next(iter(job.replica_specs.values())).DEFAULT_CONTAINER
    containers = pod.containers()
    return str(containers[0].get("name")) if containers else None


def _pair(conversion: Conversion, v1: PodView, v2: PodView | None) -> PairDiff:
    renames = RENAMES.get(conversion.policy or "", {})
    main = _main_v1(conversion, v1)
    diffs = []
    v2_names = [str(c.get("name")) for c in (v2.containers() if v2 else [])]
    for c in v1.containers():
        name = str(c.get("name"))
        other_name = NODE if name == main else name
        other = v2.container(other_name) if v2 else None
        diffs.append(
            ContainerDiff(
                name,
                other_name if other is not None else None,
                env_diff(v1.env(c), v2.env(other) if v2 and other else {}, renames),
                (_ports(c), _ports(other)),
                (_resources(c), _resources(other)),
                (
                    [str(m.get("mountPath")) for m in c.get("volumeMounts") or []],
                    [str(m.get("mountPath")) for m in (other or {}).get("volumeMounts") or []],
                ),
            )
        )
    taken = {d.v2 for d in diffs}
    for name in v2_names:
        if name not in taken and v2 is not None:
            other = v2.container(name) or {}
            diffs.append(
                ContainerDiff(
                    None,
                    name,
                    env_diff({}, v2.env(other), {}),
                    ([], _ports(other)),
                    ({}, _resources(other)),
                    ([], [str(m.get("mountPath")) for m in other.get("volumeMounts") or []]),
                )
            )
    v1_init = _names(v1.containers("initContainers"))
    v2_init = _names(v2.containers("initContainers")) if v2 else []
    return PairDiff(
        v1,
        v2,
        diffs,
        [n for n in v1_init if n not in v2_init],
        [n for n in v2_init if n not in v1_init],
        (
            _names(v1.spec.get("volumes") or []),
            _names((v2.spec if v2 else {}).get("volumes") or []),
        ),
        (v1.requests(), v2.requests() if v2 else {}),
        (v1.spec.get("restartPolicy"), v2.spec.get("restartPolicy") if v2 else None),
    )


def _address(pod: PodView | None, container: str | None, names: tuple[str, str | None]) -> str:
    if pod is None or container is None:
        return "none"
    c = pod.container(container)
    env = pod.env(c) if c else {}
    host, port = names
    if host not in env:
        return "none"
    return f"{env[host]}:{env[port]}" if port and port in env else env[host]


def _v1_success(loaded: LoadedJob, stack: Stack) -> tuple[str, list[str]]:
    """When the v1 job has succeeded: ``All`` or ``Any`` of which pods (the kind's
    ``UpdateJobStatus``: :meth:`kubetrain.builders.kubeflow.ReplicaJob.success`; the MPI
    Operator's: the launcher)."""
    job = loaded.job
    if isinstance(job, MPIJob):
        return "All", ["Launcher-0"]
    expansion = _EXPANSIONS.get(type(job)) if isinstance(job, KubeflowJob) else None
    if expansion is None:
        return "All", []
    operator, pods = expansion(job, BuildContext(stack.settings)).success()
    return operator, [f"{t}-{i}" for t, i in pods]


def _v2_success(jobset: Manifest | None, pods: Mapping[str, PodView]) -> tuple[str, list[str]]:
    """When the JobSet has succeeded (its successPolicy, by default All of every replicated
    job): ``All`` or ``Any`` of which pods."""
    spec = (jobset or {}).get("spec") or {}
    policy = spec.get("successPolicy") or {}
    targets = policy.get("targetReplicatedJobs") or [
        r.get("name") for r in spec.get("replicatedJobs") or []
    ]
    chosen = [k for k in pods if k.rsplit("-", 2)[0] in targets]
    return str(policy.get("operator", "All")), chosen


def _success_text(operator: str, pods: Sequence[str]) -> str:
    if not pods:
        return "?"
    if len(pods) == 1:
        return f"{pods[0]} succeeds"
    return f"{'every one' if operator == 'All' else 'any one'} of {', '.join(pods)} succeeds"


def _v1_restarts(loaded: LoadedJob) -> tuple[str, str]:
    job = loaded.job
    if isinstance(job, KubeflowJob):
        run = job.run_policy
        policies = ", ".join(f"{t} {s.restart_policy}" for t, s in job.replica_specs.items())
    else:
        assert isinstance(job, MPIJob)
        run = job.spec.run_policy
        policies = ", ".join(f"{t} {job.restart_policy(t)}" for t in job.spec.mpi_replica_specs)
    limit = (
        f"the job fails after {run.backoff_limit} restarts (runPolicy.backoffLimit)"
        if run.backoff_limit is not None
        else "no backoff limit: the operator restarts failed pods without end"
    )
    deadline = (
        f"; it fails after {run.active_deadline_seconds}s (activeDeadlineSeconds)"
        if run.active_deadline_seconds is not None
        else ""
    )
    return f"pods: {policies}", f"{limit}{deadline}"


def _v2_restarts(jobset: Manifest | None, trainjob: Any) -> tuple[str, str]:
    if jobset is None:
        return "?", "?"
    spec = jobset.get("spec") or {}
    policies = []
    limits = []
    for rjob in spec.get("replicatedJobs") or []:
        template = (rjob.get("template") or {}).get("spec") or {}
        pod = (template.get("template") or {}).get("spec") or {}
        restart = pod.get("restartPolicy", "OnFailure")
        extra = " with podFailurePolicy" if template.get("podFailurePolicy") else ""
        policies.append(f"{rjob.get('name')} {restart}{extra}")
        limit = template.get("backoffLimit")
        limits.append(
            f"{rjob.get('name')} Job backoffLimit "
            + (str(limit) if limit is not None else "6 (Kubernetes' default)")
        )
    failure = spec.get("failurePolicy")
    whole = (
        f"the JobSet restarts up to {failure.get('maxRestarts', 0)} times"
        if failure
        else "a failed Job fails the JobSet (no failurePolicy)"
    )
    deadline = trainjob.spec.active_deadline_seconds
    tail = f"; the trainer fails it after {deadline}s" if deadline is not None else ""
    return f"pods: {', '.join(policies)}", f"{'; '.join(limits)}; {whole}{tail}"


def _gang(objs: Sequence[Manifest]) -> str:
    groups = [o for o in objs if o.get("kind") == "PodGroup"]
    if not groups:
        return "none"
    g = groups[0]
    spec = g.get("spec") or {}
    group = str(g.get("apiVersion", "")).split("/")[0]
    queue = f", queue {spec['queue']}" if spec.get("queue") else ""
    return f"PodGroup {g['metadata']['name']} ({group}): minMember {spec.get('minMember')}{queue}"


def _services(objs: Sequence[Manifest], jobset: Manifest | None) -> str:
    if jobset is not None:
        return f"{jobset['metadata']['name']} (the JobSet's headless Service)"
    names = [o["metadata"]["name"] for o in objs if o.get("kind") == "Service"]
    return ", ".join(names) or "none"


def _hostfile(objs: Sequence[Manifest]) -> str | None:
    for o in objs:
        data = o.get("data") or {}
        if o.get("kind") == "ConfigMap" and "hostfile" in data:
            return " ".join(line for line in str(data["hostfile"]).splitlines() if line)
    return None


def compare(
    conversion: Conversion,
    v1: LoadedJob,
    v1_stack: Stack,
    v2: LoadedJob,
    v2_stack: Stack,
) -> Comparison:
    """Compare the v1 job (``v1``, as its stack loads it) with its TrainJob (``v2``, in native
    mode, as the converted stack loads it)."""
    v1_objs = v1_objects(v1, v1_stack)
    v2_objs = v2_objects(v2, v2_stack)
    before = v1_pods(conversion, v1_objs)
    after = v2_pods(v2_objs)
    pairs = [
        _pair(conversion, before[p.v1], after.get(p.v2)) for p in conversion.pairs if p.v1 in before
    ]
    jobset = next((o for o in v2_objs if o.get("kind") == "JobSet"), None)
    policy = conversion.policy or ""
    main = _main_v1(conversion, next(iter(before.values()))) if before else None
    first_v1 = before.get(conversion.pairs[0].v1) if conversion.pairs else None
    first_v2 = after.get(conversion.pairs[0].v2) if conversion.pairs else None
    job: dict[str, tuple[str, str]] = {}
    if policy in RENDEZVOUS:
        names_v1, names_v2 = RENDEZVOUS[policy]
        job["rendezvous"] = (
            _address(first_v1, main, names_v1),
            _address(first_v2, NODE, names_v2),
        )
    elif policy == "mpi":
        job["rendezvous"] = (
            f"hostfile: {_hostfile(v1_objs) or 'none'}",
            f"hostfile: {_hostfile(v2_objs) or 'none'}",
        )
    job["services"] = (_services(v1_objs, None), _services(v2_objs, jobset))
    restarts_v1, failure_v1 = _v1_restarts(v1)
    restarts_v2, failure_v2 = _v2_restarts(jobset, v2.document)
    job["restarts"] = (restarts_v1, restarts_v2)
    job["failure"] = (failure_v1, failure_v2)
    success_v1 = _v1_success(v1, v1_stack)
    success_v2 = _v2_success(jobset, after)
    job["success"] = (_success_text(*success_v1), _success_text(*success_v2))
    job["gang"] = (_gang(v1_objs), _gang(v2_objs))
    job["queue"] = (
        v1.document.metadata.labels.get(QUEUE_LABEL, "none"),
        v2.document.metadata.labels.get(QUEUE_LABEL, "none"),
    )
    warnings = list(conversion.notes)
    warnings += _warnings(conversion, pairs, main)
    mapped = {p.v1: p.v2 for p in conversion.pairs}
    same = success_v1[0] == success_v2[0] or len(success_v2[1]) == 1
    if not same or sorted(mapped.get(p, p) for p in success_v1[1]) != sorted(success_v2[1]):
        warnings.append(
            Note(
                ("spec",),
                f"the success condition changes: the {conversion.job.document.KIND} succeeded "
                f"when {_success_text(*success_v1)}; the TrainJob succeeds when "
                f"{_success_text(*success_v2)} (the JobSet's successPolicy), so pods still "
                "running when the first would have ended now keep the job running",
            )
        )
    ref_kind, ref_name = conversion.runtime_ref
    return Comparison(
        conversion,
        v1.title,
        v2.title,
        f"{ref_kind} {ref_name}",
        before,
        after,
        pairs,
        job,
        warnings,
        _documents(conversion, v1, v2, v2_stack),
    )


def _document(job: Any) -> Manifest:
    """A job document as its stack gives it (patches applied), without kubetrain's own
    annotations: what to apply to a cluster that runs its operator."""
    doc: Manifest = job.model_dump(mode="json", by_alias=True, exclude_none=True)
    meta = doc.get("metadata") or {}
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not k.startswith("kubetrain.io/")
    }
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return doc


def _documents(
    conversion: Conversion, v1: LoadedJob, v2: LoadedJob, stack: Stack
) -> dict[str, Manifest | None]:
    kind, name = conversion.runtime_ref
    runtime = next(
        (
            copy.deepcopy(m.obj)
            for m in stack.manifests
            if m.obj.get("kind") == kind
            and m.obj["metadata"]["name"] == name
            and m.obj["metadata"].get("namespace", v2.document.namespace) == v2.document.namespace
        ),
        None,
    )
    return {
        "v1": _document(v1.job),  # as operator mode renders it (a v1alpha1 TFJob as v1)
        "trainJob": _document(v2.document),
        "trainingRuntime": runtime,
    }


def _warnings(conversion: Conversion, pairs: Sequence[PairDiff], main: str | None) -> list[Note]:
    """What the pair diffs show that a program may rely on: sidecars that lose the env the v1
    operator set on every container."""
    out: list[Note] = []
    key = getattr(conversion.job.job, "REPLICA_SPECS_KEY", "mpiReplicaSpecs")
    sidecars: dict[str, list[str]] = {}
    for pair in pairs:
        for c in pair.containers:
            if c.v1 is not None and c.v1 != main and c.env.gone:
                gone = sidecars.setdefault(c.v1, [])
                gone += [n for n in c.env.gone if n not in gone]
    for name, gone in sidecars.items():
        out.append(
            Note(
                ("spec", key),
                f"the {name} container got {', '.join(gone)} from the v1 operator, which sets "
                "its env on every container; Trainer v2.3.0 sets env on the node container only "
                "(a torch runtime's envInjection adds PET_* to others)",
            )
        )
    return out


# --- text -----------------------------------------------------------------------------------------


def _kv(items: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in items.items())


def format_comparison(comparisons: Sequence[Comparison], warning: Any = None) -> str:
    """The comparisons for people: per job, per replica, the differences; then the job."""
    lines: list[str] = []
    for c in comparisons:
        lines.append(f"{c.v1_title} -> {c.v2_title} on {c.runtime}")
        lines.append(f"  pods: {len(c.v1)} -> {len(c.v2)}")
        for pair in c.pairs:
            v2 = pair.v2
            lines.append(f"  {pair.v1.replica} -> {v2.replica if v2 else 'no pod'}")
            lines.append(f"    pod: {pair.v1.name} ({pair.v1.owner})")
            if v2 is not None:
                lines.append(
                    f"      -> {v2.name} ({v2.owner}), hostname {v2.hostname}.{v2.subdomain}"
                )
            for d in pair.containers:
                lines.append(f"    container {d.v1 or '(none)'} -> {d.v2 or '(none)'}")
                e = d.env
                if e.gone:
                    lines.append(f"      env gone: {_kv(e.gone)}")
                for old, (new, a, b) in e.renamed.items():
                    lines.append(f"      env renamed: {old}={a} -> {new}={b}")
                for name, (a, b) in e.changed.items():
                    lines.append(f"      env changed: {name}: {a} -> {b}")
                if e.new:
                    lines.append(f"      env new: {_kv(e.new)}")
                if e.same:
                    lines.append(f"      env kept: {', '.join(e.same)}")
                if d.ports[0] != d.ports[1]:
                    ports = (_port_text(d.ports[0]), _port_text(d.ports[1]))
                    lines.append(f"      ports: {_arrow(*ports)}")
                if d.resources[0] != d.resources[1]:
                    lines.append(f"      resources: {_arrow(*d.resources)}")
                if d.mounts[0] != d.mounts[1]:
                    lines.append(f"      mounts: {_arrow(*d.mounts)}")
            if pair.init_gone or pair.init_new:
                lines.append(
                    f"    init containers: {', '.join(pair.init_gone) or 'none'} gone; "
                    f"{', '.join(pair.init_new) or 'none'} new"
                )
            if pair.volumes[0] != pair.volumes[1]:
                lines.append(f"    volumes: {_arrow(*pair.volumes)}")
            requests = (_kv(pair.requests[0]), _kv(pair.requests[1]))
            lines.append(f"    requests: {_arrow(*requests)}")
            if pair.restart[0] != pair.restart[1]:
                lines.append(f"    restartPolicy: {pair.restart[0]} -> {pair.restart[1]}")
        for aspect, (a, b) in c.job.items():
            lines.append(f"  {aspect}: {a}")
            lines.append(f"    -> {b}")
        for w in c.warnings:
            lines.append(f"  ! {warning(c, w) if warning else w.message}")
    return "".join(f"{line}\n" for line in lines)


def _arrow(a: Any, b: Any) -> str:
    return f"{a or 'none'} -> {b or 'none'}"


def _port_text(ports: Sequence[Mapping[str, Any]]) -> str:
    if not ports:
        return "none"
    return ", ".join(
        f"{str(p['name']) + ' ' if p.get('name') else ''}{p.get('containerPort')}" for p in ports
    )


def to_json(comparisons: Sequence[Comparison]) -> dict[str, Any]:
    return {"jobs": [c.as_json() for c in comparisons]}
