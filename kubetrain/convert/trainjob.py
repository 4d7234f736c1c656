"""v1 training-operator jobs -> Kubeflow Trainer v2.3.0 TrainJobs: what ``kubetrain convert``
writes.

A job of the training operator (v1.9: PyTorchJob, XGBoostJob, JAXJob; TFJob of one replica)
or of the MPI Operator (v0.8: MPIJob v2beta1, OpenMPI) becomes a ``TrainJob`` on a runtime:

* one of Kubeflow's v2.3.0 ClusterTrainingRuntimes (``torch-distributed``, ``jax-distributed``,
  ``xgboost-distributed``) when the job's templates say nothing a TrainJob's ``spec.trainer``
  cannot (image, command, args, env, resources), so the TrainJob alone says it all;
* else a ``TrainingRuntime`` named after the job, written beside it, holding what the
  templates said beyond that: volumes and mounts, tolerations, node selectors, affinity,
  sidecars and init containers, the service account, security contexts, pull policies and
  secrets, pod labels and annotations, the restart policy and backoff limit, gang scheduling
  (``podGroupPolicy``) and the Volcano queue.

The TrainJob's ``spec.trainer`` always carries what the trainer step's container runs (the
torch plugin injects its ``PET_*`` env only into a TrainJob that has one: ``Torch.EnforceMLPolicy``
at v2.3.0 finds the trainer container only when ``spec.trainer`` is set).

What cannot be converted is refused with what is missing (:class:`Refused`): a framework
Trainer v2.3.0 has no runtime or policy for (TensorFlow with more than one replica, whose
``TF_CONFIG`` nothing would write; PaddlePaddle), elastic PyTorch (a TrainJob's ``numNodes``
is one number), replica types whose templates differ (a TrainJob's nodes all run one
template), Intel MPI and MPICH (the MPI policy is OpenMPI's). What converts with a difference
worth saying is a :class:`Note` at the v1 field.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..builders.gang import gang_scheduler
from ..builders.workloads import exit_code_failure_policy
from ..models.base import MODE_ANNOTATION, NATIVE_WORKLOAD_ANNOTATION, JobDocument, Mode
from ..models.jaxjob import JAXJob
from ..models.kubeflow import KubeflowJob, ReplicaSpec
from ..models.load import LoadedJob
from ..models.mpijob import MPIJob
from ..models.paddlejob import PaddleJob
from ..models.pytorchjob import PyTorchJob
from ..models.resources import normalize_gpus
from ..models.runtimes import ANCESTOR_LABEL, LAUNCHER, NODE, RESERVED_ENV, TRAINER, gpus_of
from ..models.stack import StackSettings
from ..models.tfjob import TFJob
from ..models.trainjob import CLUSTER_TRAINING_RUNTIME, TRAINER_API_VERSION, TRAINING_RUNTIME
from ..models.xgboostjob import XGBoostJob

__all__ = [
    "CONVERTIBLE_KINDS",
    "Conversion",
    "Note",
    "Pair",
    "Refused",
    "convert_job",
    "is_v1_job",
]

Path = tuple[str | int, ...]
Doc = dict[str, Any]

#: The label Kubeflow's runtimes carry (``trainer.kubeflow.org/framework``), read by its SDK.
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
#: The port the trainer's torch, JAX and XGBoost plugins put on the node container.
TRAINER_PORT = 29500
#: What a TrainJob's trainer says of its container; everything else needs a runtime.
_TRAINER_FIELDS = ("name", "image", "command", "args", "env", "resources")
#: Kubeflow's v2.3.0 runtimes, their policy, and which v1 kind each stands for.
KUBEFLOW_RUNTIMES = {
    "torch": "torch-distributed",
    "jax": "jax-distributed",
    "xgboost": "xgboost-distributed",
}
#: What the kinds kubetrain converts are, by v1 kind, for the docs and messages.
CONVERTIBLE_KINDS = ("PyTorchJob", "XGBoostJob", "JAXJob", "MPIJob", "TFJob")


@dataclass(frozen=True)
class Note:
    """What converts with a difference worth saying: at ``path`` of the v1 document."""

    path: Path
    message: str


class Refused(Exception):
    """The job cannot become a TrainJob: why, at ``path`` of the v1 document."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class Pair:
    """A v1 pod (replica type, index) and the pod of the TrainJob's JobSet that takes its
    place (replicated job, job index, pod index)."""

    v1_type: str
    v1_index: int
    job: str
    pod: int
    job_index: int = 0

    @property
    def v1(self) -> str:
        return f"{self.v1_type}-{self.v1_index}"

    @property
    def v2(self) -> str:
        return f"{self.job}-{self.job_index}-{self.pod}"


@dataclass
class Conversion:
    """A v1 job converted: the TrainJob and, when one is needed, the TrainingRuntime written
    beside it, each with comments for the file (by field path), and what differs."""

    job: LoadedJob
    trainjob: Doc
    runtime: Doc | None
    #: (kind, name) of the runtime the TrainJob names.
    runtime_ref: tuple[str, str]
    policy: str | None
    pairs: list[Pair]
    trainjob_comments: dict[Path, str] = field(default_factory=dict)
    runtime_comments: dict[Path, str] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.trainjob["metadata"]["name"])

    @property
    def kubeflow_runtime(self) -> str | None:
        """The Kubeflow ClusterTrainingRuntime the TrainJob names, if any."""
        kind, name = self.runtime_ref
        return name if kind == CLUSTER_TRAINING_RUNTIME else None


def is_v1_job(job: JobDocument) -> bool:
    """Whether ``job`` is a job of the training operator v1 or the MPI Operator: what
    ``kubetrain convert`` takes."""
    return isinstance(job, KubeflowJob | MPIJob)


def convert_job(
    loaded: LoadedJob,
    settings: StackSettings,
    *,
    own_runtime: bool = False,
) -> Conversion:
    """The TrainJob (and TrainingRuntime) for one v1 job, as loaded (``loaded.document``; its
    raw document for what was written, such as a namespace left to the stack). With
    ``own_runtime``, a TrainingRuntime is written even when a Kubeflow runtime would do (a
    patch of the stack needs one). Raises :class:`Refused`."""
    job = loaded.job
    written = loaded.source.document.data if isinstance(loaded.source.document.data, dict) else {}
    if isinstance(job, MPIJob):
        return _MPI(loaded, job, written, settings).convert()
    if isinstance(job, TFJob):
        if job.is_distributed():
            raise Refused(
                ("spec", job.REPLICA_SPECS_KEY),
                "Kubeflow Trainer v2.3.0 has no TensorFlow runtime or ML policy (its policies "
                "are torch, mpi, jax, xgboost and flux): nothing would write the TF_CONFIG the "
                f"training operator writes into each of its {job.total_replicas()} pods. A "
                "TFJob of one replica (no TF_CONFIG) converts; for a distributed one, move the "
                "training to a torch or JAX runtime",
            )
        return _Replicas(loaded, job, written, settings, None, own_runtime).convert()
    if isinstance(job, PaddleJob):
        raise Refused(
            ("kind",),
            "Kubeflow Trainer v2.3.0 has no PaddlePaddle runtime or ML policy (its policies "
            "are torch, mpi, jax, xgboost and flux): nothing would write the PADDLE_MASTER, "
            "PADDLE_NNODES and PADDLE_JOB_ID the training operator writes into every pod",
        )
    if isinstance(job, PyTorchJob):
        if job.spec.elastic_policy is not None:
            raise Refused(
                ("spec", "elasticPolicy"),
                "Kubeflow Trainer v2.3.0 has no elastic training: a TrainJob's numNodes is one "
                "number and the torch plugin writes PET_NNODES as that number, with no "
                "PET_RDZV_* rendezvous; give the job a fixed size (remove elasticPolicy) to "
                "convert it",
            )
        return _Replicas(loaded, job, written, settings, "torch", own_runtime).convert()
    if isinstance(job, JAXJob):
        return _Replicas(loaded, job, written, settings, "jax", own_runtime).convert()
    if isinstance(job, XGBoostJob):
        return _Replicas(loaded, job, written, settings, "xgboost", own_runtime).convert()
    raise Refused(
        ("kind",),
        f"{job.KIND} is not a job of the training operator or the MPI Operator: kubetrain "
        f"converts {', '.join(CONVERTIBLE_KINDS)}",
    )


# --- pieces shared by the kinds ------------------------------------------------------------------


def _first_difference(a: Any, b: Any, path: Path = ()) -> Path | None:
    """The first path at which two JSON values differ, or ``None``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return (*path, key)
            found = _first_difference(a[key], b[key], (*path, key))
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, (*path, i))
            if found is not None:
                return found
        return None if len(a) == len(b) else (*path, min(len(a), len(b)))
    return None if a == b else path


def _dotted(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def _metadata(
    written: Mapping[str, Any],
    job: JobDocument,
    notes: list[Note],
    settings: StackSettings,
    comments: dict[Path, str],
) -> Doc:
    """The TrainJob's metadata: the v1 job's name, its namespace as written (left to the stack
    when it was), its labels (Kueue's queue among them) and annotations; kubetrain's own mode
    annotations stay behind (a TrainJob runs under the trainer)."""
    meta = written.get("metadata") if isinstance(written.get("metadata"), dict) else {}
    out: Doc = {"name": job.name}
    if isinstance(meta, dict) and meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    if job.metadata.labels:
        out["labels"] = dict(job.metadata.labels)
    annotations = {}
    for key, value in job.metadata.annotations.items():
        if key in (MODE_ANNOTATION, NATIVE_WORKLOAD_ANNOTATION):
            notes.append(
                Note(
                    ("metadata", "annotations", key),
                    "is not carried to the TrainJob: Kubeflow Trainer runs it (a TrainJob is "
                    "rendered as its custom resource; kubetrain.io/mode: native on it renders "
                    "the JobSet the trainer would build instead)",
                )
            )
            continue
        annotations[key] = value
    if settings.native_workload == "jobset":
        # A TrainJob of a stack whose native workload is a JobSet would be rendered natively
        # (the JobSet the trainer builds, TrainJob.mode): the migration's point is the trainer.
        annotations[MODE_ANNOTATION] = Mode.OPERATOR.value
        comments[("metadata", "annotations", MODE_ANNOTATION)] = (
            "Kubeflow Trainer runs it: without this, the stack's kubetrain:nativeWorkload jobset "
            "would render the JobSet the trainer builds instead"
        )
    if annotations:
        out["annotations"] = annotations
    return out


def _restart(
    policy: str, where: Path, notes: list[Note], container: str, version: tuple[int, int]
) -> tuple[str | None, dict[str, Any] | None]:
    """A v1 replica's restart policy as the runtime's pod restartPolicy (``None``: the JobSet
    default, OnFailure) and, for ExitCode, the Job's podFailurePolicy that does what the
    operator did (fail on exit codes 1-127, retry 128 and above; kubetrain's native Jobs do the
    same, :func:`kubetrain.builders.workloads.exit_code_failure_policy`)."""
    if policy == "OnFailure":
        return None, None
    if policy == "Always":
        notes.append(
            Note(
                where,
                "Always becomes OnFailure (the JobSet's Jobs may not restart a pod that "
                "succeeded): a node that exits 0 completes",
            )
        )
        return None, None
    if policy == "ExitCode":
        return "Never", exit_code_failure_policy(container, version)
    return policy, None


@dataclass(frozen=True)
class _Gang:
    """Gang scheduling as the runtime's podGroupPolicy, and where the Volcano queue goes."""

    policy: dict[str, Any]
    annotations: dict[str, str]
    priority_class: str | None


def _gang(
    scheduler: str | None, scheduling: Any, pods: int, notes: list[Note], where: Path
) -> _Gang | None:
    """The v1 job's gang (the stack's gang scheduler, or Volcano when only its
    schedulingPolicy asks, as :meth:`kubetrain.builders.kubeflow.ReplicaJob.gang_scheduler`
    decides) as the runtime's podGroupPolicy: Trainer v2.3.0's coscheduling and volcano plugins
    (``CoScheduling.Build``, ``Volcano.Build``) gang every pod of the JobSet."""
    if scheduler is None:
        return None
    annotations: dict[str, str] = {}
    priority = None
    if scheduling is not None:
        if scheduling.min_available is not None and scheduling.min_available != pods:
            notes.append(
                Note(
                    (*where, "minAvailable"),
                    f"{scheduling.min_available} cannot be said: Trainer v2.3.0's PodGroup "
                    f"gangs every pod of the JobSet (minMember {pods})",
                )
            )
        if scheduling.min_resources is not None:
            notes.append(
                Note(
                    (*where, "minResources"),
                    "cannot be said: Trainer v2.3.0's PodGroup sums the pods' requests",
                )
            )
        priority = scheduling.priority_class
    if scheduler == "volcano":
        if scheduling is not None and scheduling.queue:
            annotations[VOLCANO_QUEUE] = scheduling.queue
        return _Gang({"volcano": {}}, annotations, priority)
    timeout = (
        scheduling.schedule_timeout_seconds
        if scheduling is not None and scheduling.schedule_timeout_seconds is not None
        else None
    )
    if scheduling is not None and scheduling.queue:
        notes.append(
            Note(
                (*where, "queue"),
                "is a Volcano queue; the coscheduling PodGroup of Trainer v2.3.0 has none",
            )
        )
    policy: dict[str, Any] = {"coscheduling": {}}
    if timeout is not None:
        policy["coscheduling"]["scheduleTimeoutSeconds"] = timeout
    return _Gang(policy, annotations, priority)


def _gang_scheduler(job: KubeflowJob | MPIJob, settings: StackSettings, pods: int) -> str | None:
    """Which gang scheduler the v1 job is placed by: the stack's for a job of two pods or more,
    Volcano when only its schedulingPolicy asks (``builders.gang.gang_scheduler``)."""
    requested = job.spec.run_policy.scheduling_policy is not None
    scheduler = gang_scheduler(settings, requested)
    if scheduler is not None and not requested and pods < 2:
        return None
    return scheduler


def _run_policy(
    job: KubeflowJob | MPIJob, spec: Doc, notes: list[Note], comments: dict[Path, str]
) -> None:
    """runPolicy's fields a TrainJob has: suspend, activeDeadlineSeconds, managedBy; notes for
    those it has not (cleanPodPolicy, ttlSecondsAfterFinished)."""
    policy = job.spec.run_policy
    if policy.suspend is not None:
        spec["suspend"] = policy.suspend
        comments[("spec", "suspend")] = "runPolicy.suspend"
    if policy.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = policy.active_deadline_seconds
        comments[("spec", "activeDeadlineSeconds")] = (
            "runPolicy.activeDeadlineSeconds: the trainer fails the TrainJob after it"
        )
    if policy.managed_by == "kueue.x-k8s.io/multikueue":
        spec["managedBy"] = policy.managed_by
        comments[("spec", "managedBy")] = "runPolicy.managedBy: Kueue's MultiKueue runs it"
    if policy.clean_pod_policy is not None and policy.clean_pod_policy != "Running":
        notes.append(
            Note(
                ("spec", "runPolicy", "cleanPodPolicy"),
                f"{policy.clean_pod_policy} has no TrainJob field: a JobSet that finishes "
                "deletes its Jobs still running and keeps the finished ones (what Running did)",
            )
        )
    if policy.ttl_seconds_after_finished is not None:
        notes.append(
            Note(
                ("spec", "runPolicy", "ttlSecondsAfterFinished"),
                "is dropped: a TrainJob has no such field, and nothing deletes it when it "
                "finishes (remove it from the stack once its run is done)",
            )
        )


def _env(container: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [dict(e) for e in container.get("env") or [] if isinstance(e, Mapping)]


def _reserved_env(env: Sequence[Mapping[str, Any]], policy: str | None, where: Path) -> None:
    """The env names a runtime's policy writes are refused in spec.trainer.env by the trainer's
    TrainJob webhook (``Torch.Validate``, ``XGBoost.Validate``, ``MPI.Validate``)."""
    reserved = set(RESERVED_ENV.get(policy or "", ()))
    for i, entry in enumerate(env):
        if entry.get("name") in reserved:
            raise Refused(
                (*where, i, "name"),
                f"{entry.get('name')} is written by Trainer v2.3.0's {policy} plugin, and its "
                "TrainJob webhook refuses it in spec.trainer.env: remove it from the container "
                "(the plugin sets it)",
            )


#: What the training operator set on every pod (v1.9 ``setPodEnv`` of each kind) that the
#: Trainer v2.3.0 runtime of the same framework does not, and what that runtime sets instead
#: (``Torch``, ``Jax`` and ``XGBoost`` ``EnforceMLPolicy``).
V1_ONLY_ENV: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "torch": (
        ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"),
        ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"),
    ),
    "jax": (
        ("COORDINATOR_ADDRESS", "COORDINATOR_PORT", "NUM_PROCESSES", "PROCESS_ID"),
        ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"),
    ),
    "xgboost": (
        ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "WORKER_ADDRS", "WORKER_PORT"),
        ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"),
    ),
}
#: Launchers that read torchrun's PET_* flags and set MASTER_ADDR, WORLD_SIZE, RANK... for the
#: processes they start (torch.distributed.run's ``get_args_parser``: every flag also from
#: ``PET_<FLAG>``); ``tune run`` is rewritten by the trainer with its rendezvous.
_LAUNCHERS = re.compile(
    r"(?:^|[\s/;&|(])(?:torchrun|torch\.distributed\.run|torch\.distributed\.launch|"
    r"accelerate\s+launch|tune\s+run)(?=$|[\s;&|)])"
)


def _reads(text: str, names: Sequence[str]) -> list[str]:
    """The names of ``names`` a command's text mentions as whole words ($RANK, ${RANK},
    $(RANK), os.environ['RANK']), not inside longer names (LOCAL_RANK, NODE_RANK)."""
    return [n for n in names if re.search(rf"(?<![A-Za-z0-9_]){n}(?![A-Za-z0-9_])", text)]


def launcher_notes(
    policy: str | None, container: Mapping[str, Any], where: Path, kind: str
) -> list[Note]:
    """Where the container's command relies on what the training operator set and Trainer
    v2.3.0's runtime does not: a torch program started without a launcher that reads
    torchrun's PET_* (the operator's MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK are what
    ``torch.distributed``'s env:// rendezvous reads), and the operator's variables named in
    the command itself."""
    if policy not in V1_ONLY_ENV:
        return []
    gone, given = V1_ONLY_ENV[policy]
    words = [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]
    text = " ".join(words)
    notes = []
    if policy == "torch":
        if not container.get("command"):
            notes.append(
                Note(
                    where,
                    "runs the image's entrypoint (no command"
                    + (f", args {text}" if text else "")
                    + "): unless it starts torchrun (or "
                    "python -m torch.distributed.run, accelerate launch), its processes will "
                    "not rendezvous: the training operator gave every pod MASTER_ADDR, "
                    "MASTER_PORT, WORLD_SIZE and RANK, which torch.distributed's env:// "
                    "rendezvous reads; Trainer v2.3.0's torch runtime gives only PET_*, which "
                    "only torchrun reads",
                )
            )
        elif _LAUNCHERS.search(text) is None:
            suggested = " ".join(words[1:]) if words[0].startswith("python") else text
            notes.append(
                Note(
                    (*where, "command") if container.get("command") else (*where, "args"),
                    f"runs {words[0]} without torchrun (or python -m torch.distributed.run, "
                    "accelerate launch): the training operator gave every pod MASTER_ADDR, "
                    "MASTER_PORT, WORLD_SIZE and RANK, which torch.distributed's env:// "
                    "rendezvous reads; Trainer v2.3.0's torch runtime gives only PET_*, which "
                    "only torchrun reads, so the processes would not find each other: start "
                    f"it as torchrun {suggested}",
                )
            )
    read = _reads(text, gone)
    if read:
        notes.append(
            Note(
                (*where, "command") if container.get("command") else (*where, "args"),
                f"names {', '.join(read)}, which the training operator set and Trainer "
                f"v2.3.0's {policy} runtime does not (it sets {', '.join(given)})"
                + (
                    "; torchrun sets them only for the processes it starts"
                    if policy == "torch"
                    else ""
                ),
            )
        )
    if policy != "torch" and not read:
        notes.append(
            Note(
                where,
                f"the training operator gave the {kind}'s pods {', '.join(gone)}; Trainer "
                f"v2.3.0's {policy} runtime gives {', '.join(given)} instead: a program that "
                "reads the old names must read the new ones",
            )
        )
    return notes


# --- Kubeflow replica jobs: PyTorchJob, XGBoostJob, JAXJob, TFJob (one replica) -----------------


#: What each policy's Kubeflow runtime sets and what the v1 operator set, for comments.
_OPERATOR_SETS_UNBUFFERED = (PyTorchJob, XGBoostJob, JAXJob)


class _Replicas:
    """One Kubeflow replica job being converted: its replica types become the nodes of the
    trainer step, in rank order (a Master first)."""

    def __init__(
        self,
        loaded: LoadedJob,
        job: KubeflowJob,
        written: Mapping[str, Any],
        settings: StackSettings,
        policy: str | None,
        own_runtime: bool,
    ) -> None:
        self.loaded = loaded
        self.job = job
        self.written = written
        self.settings = settings
        self.policy = policy
        self.own_runtime = own_runtime
        self.notes: list[Note] = []
        self.tj_comments: dict[Path, str] = {}
        self.rt_comments: dict[Path, str] = {}
        self.key = job.REPLICA_SPECS_KEY

    def order(self) -> list[tuple[str, ReplicaSpec]]:
        """Replica types in rank order (the kinds' type order: a Master, rank 0, first)."""
        return list(self.job.replica_specs.items())

    def first_of_each(self) -> list[tuple[str, ReplicaSpec]]:
        return self.order()

    def template(self) -> tuple[str, ReplicaSpec]:
        """The one template every node runs: refused when the replica types' differ."""
        types = self.first_of_each()
        first_type, first = types[0]
        for rtype, spec in types[1:]:
            found = _first_difference(first.template, spec.template)
            if found is not None:
                raise Refused(
                    ("spec", self.key, rtype, "template", *found),
                    f"differs from {self.key}.{first_type}.template.{_dotted(found)}: a "
                    "TrainJob runs every node from one template (node 0 in the Master's "
                    f"place), so {first_type} and {rtype} must run the same pods",
                )
            if spec.restart_policy != first.restart_policy:
                raise Refused(
                    ("spec", self.key, rtype, "restartPolicy"),
                    f"{spec.restart_policy} differs from {first_type}'s {first.restart_policy}: "
                    "a TrainJob's nodes share one restart policy",
                )
        return first_type, first

    def pairs(self) -> list[Pair]:
        out = []
        rank = 0
        for rtype, spec in self.order():
            for i in range(spec.replicas):
                out.append(Pair(rtype, i, NODE, rank))
                rank += 1
        return out

    def convert(self) -> Conversion:
        job, key = self.job, self.key
        first_type, spec = self.template()
        main_name = spec.DEFAULT_CONTAINER
        template = copy.deepcopy(spec.template)
        pod = dict(template.get("spec") or {})
        containers = [dict(c) for c in pod.get("containers") or []]
        main = next(c for c in containers if c.get("name") == main_name)
        where: Path = ("spec", key, first_type, "template", "spec", "containers")
        index = containers.index(main)
        main_path: Path = (*where, index)
        env = _env(main)
        _reserved_env(env, self.policy, (*main_path, "env"))
        self.notes += launcher_notes(self.policy, main, main_path, job.KIND)
        nodes = job.total_replicas()
        trainer: Doc = {"numNodes": nodes}
        types = " + ".join(f"{t} ({s.replicas})" for t, s in self.first_of_each())
        self.tj_comments[("spec", "trainer", "numNodes")] = (
            f"{types}: node 0 takes the Master's place"
            if "Master" in job.replica_specs and nodes > 1
            else types
        )
        self.num_proc(trainer, spec)
        for name in ("image", "command", "args"):
            if main.get(name) is not None:
                trainer[name] = copy.deepcopy(main[name])
        self.tj_comments[("spec", "trainer")] = (
            f"{key}.{first_type}.template.spec.containers[{index}] ({main_name}), on every node"
        )
        if isinstance(job, _OPERATOR_SETS_UNBUFFERED) and not any(
            e.get("name") == "PYTHONUNBUFFERED" for e in env
        ):
            env.append({"name": "PYTHONUNBUFFERED", "value": "1"})
            self.tj_comments[("spec", "trainer", "env", len(env) - 1)] = (
                "the training operator set it on every container; Trainer v2 does not"
            )
        if env:
            trainer["env"] = env
        resources = normalize_gpus(main.get("resources"), self.settings.gpu_resource)
        if resources:
            trainer["resourcesPerNode"] = resources
            self.tj_comments[("spec", "trainer", "resourcesPerNode")] = (
                f"the {main_name} container's resources (GPUs under "
                f"{self.settings.gpu_resource}, requests equal to limits, as the v1 pods had them)"
            )
        # What the runtime must hold: everything of the template but the trainer's fields.
        rest = {k: v for k, v in main.items() if k not in _TRAINER_FIELDS}
        ports = [p for p in rest.get("ports") or [] if p.get("name") != spec.DEFAULT_PORT_NAME]
        if len(ports) != len(rest.get("ports") or []) and self.loaded.document is job:
            self.notes.append(
                Note(
                    (*main_path, "ports"),
                    f"{spec.DEFAULT_PORT_NAME} is the port the training operator rendezvoused on; "
                    f"Trainer v2.3.0's {self.policy or 'runtime'} plugin puts {TRAINER_PORT} on "
                    "the node container"
                    if self.policy
                    else f"{spec.DEFAULT_PORT_NAME} is the training operator's; it is not kept",
                )
            )
        if ports:
            rest["ports"] = ports
        else:
            rest.pop("ports", None)
        node_container = {"name": NODE, **rest}
        others = [c for c in containers if c is not main]
        pod_rest = {k: v for k, v in pod.items() if k not in ("containers", "restartPolicy")}
        restart, failure = _restart(
            spec.restart_policy,
            ("spec", key, first_type, "restartPolicy"),
            self.notes,
            NODE,
            self.settings.version,
        )
        pods = nodes
        gang = _gang(
            _gang_scheduler(job, self.settings, pods),
            job.run_policy.scheduling_policy,
            pods,
            self.notes,
            ("spec", "runPolicy", "schedulingPolicy"),
        )
        backoff = job.run_policy.backoff_limit
        needs_runtime = (
            self.own_runtime
            or self.policy is None
            or len(node_container) > 1
            or bool(others)
            or bool(pod_rest)
            or bool(template.get("metadata"))
            or restart is not None
            or backoff is not None
            or gang is not None
        )
        spec_out: Doc = {}
        meta = _metadata(self.written, job, self.notes, self.settings, self.tj_comments)
        if needs_runtime:
            runtime_ref = (TRAINING_RUNTIME, job.name)
            spec_out["runtimeRef"] = {"kind": TRAINING_RUNTIME, "name": job.name}
            self.tj_comments[("spec", "runtimeRef")] = (
                f"the TrainingRuntime written beside this TrainJob: it holds what the {job.KIND}'s "
                "templates say beyond spec.trainer"
            )
        else:
            runtime_ref = (CLUSTER_TRAINING_RUNTIME, KUBEFLOW_RUNTIMES[self.policy or ""])
            spec_out["runtimeRef"] = {"kind": CLUSTER_TRAINING_RUNTIME, "name": runtime_ref[1]}
            self.tj_comments[("spec", "runtimeRef")] = (
                f"Kubeflow's {runtime_ref[1]} ClusterTrainingRuntime (Trainer v2.3.0): the "
                f"{job.KIND}'s templates say nothing a TrainJob's trainer cannot"
            )
        spec_out["trainer"] = trainer
        _run_policy(job, spec_out, self.notes, self.tj_comments)
        self.labels_comment(meta)
        trainjob: Doc = {
            "apiVersion": TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": meta,
            "spec": spec_out,
        }
        self.tj_comments[()] = self.header()
        runtime = None
        if needs_runtime:
            pod_spec: Doc = {**pod_rest}
            pod_spec["containers"] = [node_container if c is main else c for c in containers]
            if restart is not None:
                pod_spec["restartPolicy"] = restart
            if gang is not None and gang.priority_class and "priorityClassName" not in pod_spec:
                pod_spec["priorityClassName"] = gang.priority_class
            runtime = self.runtime(meta, template, pod_spec, failure, backoff, gang, nodes)
        return Conversion(
            self.loaded,
            trainjob,
            runtime,
            runtime_ref,
            self.policy,
            self.pairs(),
            self.tj_comments,
            self.rt_comments,
            self.notes,
        )

    def header(self) -> str:
        src = self.loaded.source
        return (
            f"{self.job.KIND} {self.job.name} of {src} as a Kubeflow Trainer v2.3.0 TrainJob, "
            "written by `kubetrain convert`.\n"
            "Review what its pods get before and after: kubetrain convert --compare"
        )

    def labels_comment(self, meta: Doc) -> None:
        if QUEUE_LABEL in (meta.get("labels") or {}):
            self.tj_comments[("metadata", "labels", QUEUE_LABEL)] = (
                "Kueue admits the TrainJob (its TrainJob integration), as it admitted the "
                f"{self.job.KIND}"
            )

    def num_proc(self, trainer: Doc, spec: ReplicaSpec) -> None:
        """PyTorch's ``nprocPerNode`` as ``numProcPerNode`` (an int32 in Trainer v2.3.0,
        default auto: the GPUs per node, else the CPUs requested, ``Torch.EnforceMLPolicy``)."""
        if not isinstance(self.job, PyTorchJob):
            return
        written = self.job.spec.nproc_per_node
        path: Path = ("spec", "nprocPerNode")
        elastic = self.job.spec.elastic_policy
        if written is None and elastic is not None and elastic.n_proc_per_node is not None:
            written, path = str(elastic.n_proc_per_node), ("spec", "elasticPolicy", "nProcPerNode")
        main = spec.default_container() or {}
        resources = normalize_gpus(main.get("resources"), self.settings.gpu_resource) or {}
        gpus = gpus_of(resources)
        if written is not None and written.isdigit():
            trainer["numProcPerNode"] = int(written)
            self.tj_comments[("spec", "trainer", "numProcPerNode")] = "nprocPerNode"
            return
        if written == "gpu" and gpus == 0:
            self.notes.append(
                Note(
                    path,
                    "gpu cannot be said without GPUs in the container's resources: Trainer "
                    "v2.3.0's auto is the CPUs requested there (give GPUs, or a number)",
                )
            )
        elif written in ("cpu", "auto", None) and gpus == 0:
            shown = "auto (the default)" if written in ("auto", None) else written
            self.notes.append(
                Note(
                    path,
                    f"{shown} is torchrun's, which starts os.cpu_count() processes on a CPU "
                    "node (every core of the machine, not the pod's share); Trainer v2.3.0 "
                    "writes PET_NPROC_PER_NODE as the CPUs the node container requests "
                    "(rounded up, at least 1): numProcPerNode cannot say os.cpu_count(); give "
                    "nprocPerNode as a number to keep one count",
                )
            )
        elif written == "cpu":
            self.notes.append(
                Note(
                    path,
                    "cpu (one process per core of the machine) cannot be said: with GPUs in "
                    "the container's resources Trainer v2.3.0 writes PET_NPROC_PER_NODE auto "
                    "(one per GPU); give a number to keep one count",
                )
            )

    def runtime(
        self,
        meta: Doc,
        template: Doc,
        pod_spec: Doc,
        failure: dict[str, Any] | None,
        backoff: int | None,
        gang: _Gang | None,
        nodes: int,
    ) -> Doc:
        job, key = self.job, self.key
        labels = {FRAMEWORK_LABEL: self.policy or "tensorflow"}
        rt_meta: Doc = {"name": job.name}
        if "namespace" in meta:
            rt_meta["namespace"] = meta["namespace"]
        rt_meta["labels"] = labels
        ml: Doc = {"numNodes": nodes}
        if self.policy is not None:
            ml[self.policy] = {}
            self.rt_comments[("spec", "mlPolicy")] = (
                f"Trainer's {self.policy} plugin: the env and port of the node container"
            )
        else:
            self.rt_comments[("spec", "mlPolicy")] = (
                "no framework policy (Trainer's PlainML): the single TensorFlow replica got no "
                "TF_CONFIG from the training operator either"
            )
        rspec: Doc = {"mlPolicy": ml}
        if gang is not None:
            rspec["podGroupPolicy"] = gang.policy
            self.rt_comments[("spec", "podGroupPolicy")] = (
                f"gang scheduling, as the {job.KIND}'s PodGroup (runPolicy.schedulingPolicy, "
                "kubetrain:gangScheduler): every pod of the JobSet at once"
            )
        job_template: Doc = {"metadata": {"labels": {ANCESTOR_LABEL: TRAINER}}}
        job_spec: Doc = {}
        if backoff is not None:
            job_spec["backoffLimit"] = backoff
        if failure is not None:
            job_spec["podFailurePolicy"] = failure
        pod_template: Doc = {}
        if template.get("metadata"):
            pod_template["metadata"] = copy.deepcopy(template["metadata"])
        pod_template["spec"] = pod_spec
        job_spec["template"] = pod_template
        job_template["spec"] = job_spec
        jobset: Doc = {}
        if gang is not None and gang.annotations:
            jobset["metadata"] = {"annotations": dict(gang.annotations)}
        jobset["spec"] = {"replicatedJobs": [{"name": NODE, "template": job_template}]}
        rspec["template"] = jobset
        first_type = self.first_of_each()[0][0]
        base: Path = ("spec", "template", "spec", "replicatedJobs", 0, "template")
        self.rt_comments[()] = (
            f"What the {job.KIND} {job.name}'s templates say beyond a TrainJob's spec.trainer "
            f"({self.loaded.source}), written by `kubetrain convert`.\n"
            "Deliver it with the TrainJob (kubetrain:manifestFiles)."
        )
        self.rt_comments[(*base, "spec", "template")] = (
            f"{key}.{first_type}.template: image, command, args, env and resources are the "
            "TrainJob's spec.trainer"
        )
        if backoff is not None:
            self.rt_comments[(*base, "spec", "backoffLimit")] = (
                "runPolicy.backoffLimit: the node Job fails after as many retries"
            )
        if failure is not None:
            self.rt_comments[(*base, "spec", "podFailurePolicy")] = (
                "restartPolicy ExitCode: exit codes 1-127 fail the job, others are retried"
            )
        if gang is not None and gang.annotations:
            self.rt_comments[("spec", "template", "metadata")] = (
                "runPolicy.schedulingPolicy.queue: the Volcano queue of the PodGroup"
            )
        return {
            "apiVersion": TRAINER_API_VERSION,
            "kind": TRAINING_RUNTIME,
            "metadata": rt_meta,
            "spec": rspec,
        }


# --- MPIJob (MPI Operator v0.8, v2beta1) ----------------------------------------------------------


class _MPI:
    """An MPIJob as a TrainJob on a TrainingRuntime of Trainer v2.3.0's MPI policy: the launcher
    is the trainer step (``launcher``), the workers the ``node`` job; the launcher's and the
    workers' first container (the one the MPI Operator configures) named ``node``, which the MPI
    plugin mounts the SSH keys into (``MPI.EnforceMLPolicy``)."""

    def __init__(
        self,
        loaded: LoadedJob,
        job: MPIJob,
        written: Mapping[str, Any],
        settings: StackSettings,
    ) -> None:
        self.loaded = loaded
        self.job = job
        self.written = written
        self.settings = settings
        self.notes: list[Note] = []
        self.tj_comments: dict[Path, str] = {}
        self.rt_comments: dict[Path, str] = {}

    def convert(self) -> Conversion:
        job = self.job
        if job.implementation != "OpenMPI":
            raise Refused(
                ("spec", "mpiImplementation"),
                f"{job.implementation}: Trainer v2.3.0's MPI policy supports OpenMPI only "
                "(mpiImplementation OpenMPI; it writes OpenMPI's OMPI_MCA_* env and hostfile)",
            )
        worker = job.worker
        if worker is None or job.worker_replicas() == 0:
            raise Refused(
                ("spec", "mpiReplicaSpecs"),
                "has no Worker: Trainer v2.3.0's MPI runtime runs its ranks on node pods",
            )
        launcher = job.launcher
        workers = job.worker_replicas()
        nodes = workers + (1 if job.launcher_as_worker else 0)
        meta = _metadata(self.written, job, self.notes, self.settings, self.tj_comments)
        launcher_tpl = copy.deepcopy(launcher.template)
        worker_tpl = copy.deepcopy(worker.template)
        l_pod = dict(launcher_tpl.get("spec") or {})
        l_containers = [dict(c) for c in l_pod.get("containers") or []]
        l_main = l_containers[0]
        env = _env(l_main)
        base: Path = ("spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "containers", 0)
        _reserved_env(env, "mpi", (*base, "env"))
        trainer: Doc = {"numNodes": nodes}
        self.tj_comments[("spec", "trainer", "numNodes")] = f"the Worker replicas ({workers})" + (
            " and the launcher (runLauncherAsWorker)" if job.launcher_as_worker else ""
        )
        for name in ("image", "command", "args"):
            if l_main.get(name) is not None:
                trainer[name] = copy.deepcopy(l_main[name])
        if env:
            trainer["env"] = env
        self.tj_comments[("spec", "trainer")] = (
            f"the launcher: mpiReplicaSpecs.Launcher.template.spec.containers[0] "
            f"({l_main.get('name')})"
        )
        spec_out: Doc = {
            "runtimeRef": {"kind": TRAINING_RUNTIME, "name": job.name},
            "trainer": trainer,
        }
        self.tj_comments[("spec", "runtimeRef")] = (
            "the TrainingRuntime written beside this TrainJob: the MPIJob's launcher and "
            "worker templates (Kubeflow's MPI runtimes, deepspeed-distributed and "
            "mlx-distributed, run their own images)"
        )
        _run_policy(job, spec_out, self.notes, self.tj_comments)
        self.tj_comments[()] = (
            f"MPIJob {job.name} of {self.loaded.source} as a Kubeflow Trainer v2.3.0 TrainJob, "
            "written by `kubetrain convert`.\n"
            "Review what its pods get before and after: kubetrain convert --compare"
        )
        if QUEUE_LABEL in (meta.get("labels") or {}):
            self.tj_comments[("metadata", "labels", QUEUE_LABEL)] = (
                "Kueue admits the TrainJob (its TrainJob integration), as it admitted the MPIJob"
            )
        trainjob: Doc = {
            "apiVersion": TRAINER_API_VERSION,
            "kind": "TrainJob",
            "metadata": meta,
            "spec": spec_out,
        }
        # The launcher: its first container is the trainer's (image, command, args, env).
        l_node = {k: v for k, v in l_main.items() if k not in ("image", "command", "args", "env")}
        l_node["name"] = NODE
        l_pod["containers"] = [l_node, *l_containers[1:]]
        w_pod = dict(worker_tpl.get("spec") or {})
        w_containers = [dict(c) for c in w_pod.get("containers") or []]
        w_containers[0]["name"] = NODE
        w_pod["containers"] = w_containers
        pods = workers + 1
        gang = _gang(
            _gang_scheduler(job, self.settings, pods),
            job.spec.run_policy.scheduling_policy,
            pods,
            self.notes,
            ("spec", "runPolicy", "schedulingPolicy"),
        )
        rjobs = []
        for name, rtype, pod_spec, tpl in (
            (NODE, "Worker", w_pod, worker_tpl),
            (LAUNCHER, "Launcher", l_pod, launcher_tpl),
        ):
            pod_spec.pop("restartPolicy", None)
            restart = job.restart_policy(rtype)
            if restart != "OnFailure":
                pod_spec["restartPolicy"] = restart
            if gang is not None and gang.priority_class and "priorityClassName" not in pod_spec:
                pod_spec["priorityClassName"] = gang.priority_class
            pod_template: Doc = {}
            if tpl.get("metadata"):
                pod_template["metadata"] = tpl["metadata"]
            pod_template["spec"] = pod_spec
            job_spec: Doc = {}
            if name == LAUNCHER and job.spec.run_policy.backoff_limit is not None:
                job_spec["backoffLimit"] = job.spec.run_policy.backoff_limit
            job_spec["template"] = pod_template
            rjob: Doc = {"name": name}
            job_template: Doc = {}
            if name == LAUNCHER:
                if job.spec.launcher_creation_policy == "WaitForWorkersReady":
                    rjob["dependsOn"] = [{"name": NODE, "status": "Ready"}]
                job_template["metadata"] = {"labels": {ANCESTOR_LABEL: TRAINER}}
            job_template["spec"] = job_spec
            rjob["template"] = job_template
            rjobs.append(rjob)
        mpi: Doc = {"numProcPerNode": job.slots, "mpiImplementation": "OpenMPI"}
        mpi["sshAuthMountPath"] = job.ssh_mount_path
        if job.launcher_as_worker:
            mpi["runLauncherAsNode"] = True
        # mlPolicy.numNodes is the launcher's count: newRuntimeInfo gives the trainer step (the
        # launcher here) mlPolicy.numNodes pods, and MPI.EnforceMLPolicy sizes only the node
        # job from the TrainJob's numNodes (trainingruntime.go, mpi.go at v2.3.0), so
        # Kubeflow's MPI runtimes say 1.
        rspec: Doc = {"mlPolicy": {"numNodes": 1, "mpi": mpi}}
        if gang is not None:
            rspec["podGroupPolicy"] = gang.policy
        jobset: Doc = {}
        if gang is not None and gang.annotations:
            jobset["metadata"] = {"annotations": dict(gang.annotations)}
        jobset["spec"] = {
            # The JobSet succeeds with its launcher (the workers run sshd until stopped), as the
            # MPIJob did, and as Kubeflow's MPI runtimes say.
            "successPolicy": {"operator": "All", "targetReplicatedJobs": [LAUNCHER]},
            "replicatedJobs": rjobs,
        }
        rspec["template"] = jobset
        rt_meta: Doc = {"name": job.name}
        if "namespace" in meta:
            rt_meta["namespace"] = meta["namespace"]
        rt_meta["labels"] = {FRAMEWORK_LABEL: "mpi"}
        runtime: Doc = {
            "apiVersion": TRAINER_API_VERSION,
            "kind": TRAINING_RUNTIME,
            "metadata": rt_meta,
            "spec": rspec,
        }
        self.rt_comments[()] = (
            f"The MPIJob {job.name}'s launcher and worker templates ({self.loaded.source}), "
            "written by `kubetrain convert`.\n"
            "Deliver it with the TrainJob (kubetrain:manifestFiles)."
        )
        self.rt_comments[("spec", "mlPolicy", "numNodes")] = (
            "one launcher: the TrainJob's numNodes sizes the node job"
        )
        self.rt_comments[("spec", "mlPolicy", "mpi")] = (
            "slotsPerWorker, mpiImplementation, sshAuthMountPath and runLauncherAsWorker"
        )
        self.rt_comments[("spec", "template", "spec", "successPolicy")] = (
            "the job succeeds with its launcher, as the MPIJob did"
        )
        self.rt_comments[("spec", "template", "spec", "replicatedJobs", 0)] = (
            "mpiReplicaSpecs.Worker: its first container is named node, as the MPI plugin wants it"
        )
        self.rt_comments[("spec", "template", "spec", "replicatedJobs", 1)] = (
            "mpiReplicaSpecs.Launcher: image, command, args and env are the TrainJob's spec.trainer"
        )
        pairs = [Pair("Launcher", 0, LAUNCHER, 0)] + [
            Pair("Worker", i, NODE, i) for i in range(workers)
        ]
        return Conversion(
            self.loaded,
            trainjob,
            runtime,
            (TRAINING_RUNTIME, job.name),
            "mpi",
            pairs,
            self.tj_comments,
            self.rt_comments,
            self.notes,
        )
