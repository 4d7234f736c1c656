"""The runtimes a stack's TrainJobs name, and what the trainer's webhooks refuse of a TrainJob
on its runtime (kubeflow/trainer v2.3.0, read at the tag).

A TrainJob's runtime is found, in this order:

1. a ``TrainingRuntime`` (in the TrainJob's namespace) or ``ClusterTrainingRuntime`` among the
   stack's plain manifests (``kubetrain:manifests`` / ``manifestFiles``): delivered with it;
2. one the stack declares as existing in the cluster, ``kubetrain:external.trainingRuntimes``:
   ``{kind, name, namespace}`` with its spec given (``file:``, a YAML file of the project holding
   the runtime; or ``spec:``), or by name alone. A name alone is enough for the runtimes
   Kubeflow publishes with v2.3.0 (:data:`UPSTREAM`: kubetrain knows the facts the webhooks
   check of them), in operator mode; native mode needs the spec.

A TrainJob whose runtime is none of these is refused at its ``spec.runtimeRef``, as the trainer
refuses it ("specified trainingRuntime must be created before the TrainJob is created").

The checks, each beside the upstream function it mirrors: ``TrainingRuntimeValidator``
(``validateReplicatedJobs``, on the runtimes of the stack), the ``Validate`` of the JobSet,
Torch (and ``validateTorchTune``), MPI and XGBoost plugins, run on the TrainJob and its runtime
as ``TrainingRuntime.ValidateObjects`` runs them (the runtime patched by the TrainJob's patches).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .trainjob import (
    CLUSTER_TRAINING_RUNTIME,
    TRAINER_API_VERSION,
    TRAINING_RUNTIME,
    TrainingRuntimeSpec,
    TrainJob,
)

__all__ = [
    "ANCESTOR_LABEL",
    "UPSTREAM",
    "UPSTREAM_NODE_IMAGES",
    "Runtime",
    "RuntimeKey",
    "RuntimeShape",
    "runtime_problems",
    "trainjob_problems",
    "upstream_spec",
]

Problems = list[tuple[tuple[str | int, ...], str]]
#: (kind, namespace ("" for a ClusterTrainingRuntime), name)
RuntimeKey = tuple[str, str, str]

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER = "trainer"
NODE = "node"
LAUNCHER = "launcher"
DATASET_INITIALIZER = "dataset-initializer"
MODEL_INITIALIZER = "model-initializer"
INITIALIZER_VOLUME = "initializer"
#: ``expectedContainerNames`` of the runtime webhook: the container an ancestor's job must have.
ANCESTOR_CONTAINERS = {
    TRAINER: NODE,
    DATASET_INITIALIZER: DATASET_INITIALIZER,
    MODEL_INITIALIZER: MODEL_INITIALIZER,
}
#: Env names each policy's plugin writes and refuses in spec.trainer.env (constants.go).
RESERVED_ENV = {
    "torch": (
        "PET_NNODES",
        "PET_NPROC_PER_NODE",
        "PET_NODE_RANK",
        "PET_MASTER_ADDR",
        "PET_MASTER_PORT",
    ),
    "xgboost": ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"),
    "mpi": (
        "OMPI_MCA_orte_default_hostfile",
        "OMPI_MCA_plm_rsh_args",
        "OMPI_MCA_orte_keep_fqdn_hostnames",
        "OMPI_MCA_orte_set_default_slots",
    ),
}
TORCHTUNE_ENTRYPOINT = ["tune", "run"]
TORCHTUNE_MODELS = ("llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B")
TORCHTUNE_IMMUTABLE = (
    "output_dir",
    "tokenizer.path",
    "checkpointer.checkpoint_dir",
    "tokenizer.merges_file",
)


@dataclass(frozen=True)
class JobShape:
    """A replicated job of a runtime, as the webhooks see it."""

    name: str
    ancestor: str | None
    #: container name -> its volume mount names
    containers: Mapping[str, tuple[str, ...]]
    init_containers: tuple[str, ...] = ()
    replicas: int = 1


@dataclass(frozen=True)
class RuntimeShape:
    """What the webhooks check of a runtime: its ML policy and its replicated jobs."""

    policy: str | None
    jobs: tuple[JobShape, ...]
    num_nodes: int | None = 1
    run_launcher_as_node: bool = False
    env_injection: tuple[tuple[str, str], ...] = ()

    def job(self, name: str) -> JobShape | None:
        return next((j for j in self.jobs if j.name == name), None)


def _node_only(policy: str) -> RuntimeShape:
    return RuntimeShape(policy, (JobShape(NODE, TRAINER, {NODE: ()}),))


def _initialized(policy: str) -> RuntimeShape:
    mounted = (INITIALIZER_VOLUME,)
    return RuntimeShape(
        policy,
        (
            JobShape(DATASET_INITIALIZER, DATASET_INITIALIZER, {DATASET_INITIALIZER: mounted}),
            JobShape(MODEL_INITIALIZER, MODEL_INITIALIZER, {MODEL_INITIALIZER: mounted}),
            JobShape(NODE, TRAINER, {NODE: mounted}),
        ),
    )


def _mpi_launcher_as_node() -> RuntimeShape:
    return RuntimeShape(
        "mpi",
        (JobShape(NODE, None, {NODE: ()}), JobShape(LAUNCHER, TRAINER, {NODE: ()})),
        run_launcher_as_node=True,
    )


#: The ClusterTrainingRuntimes Kubeflow publishes with Trainer v2.3.0
#: (``manifests/base/runtimes/``), as facts the webhooks check: their policy and replicated
#: jobs. A stack may name one of these in ``kubetrain:external.trainingRuntimes`` without its
#: spec (operator mode).
UPSTREAM: dict[str, RuntimeShape] = {
    "torch-distributed": _node_only("torch"),
    "jax-distributed": _node_only("jax"),
    "xgboost-distributed": _node_only("xgboost"),
    "deepspeed-distributed": _mpi_launcher_as_node(),
    "mlx-distributed": _mpi_launcher_as_node(),
    "torch-distributed-with-cache": RuntimeShape(
        "torch",
        (
            JobShape(DATASET_INITIALIZER, DATASET_INITIALIZER, {DATASET_INITIALIZER: ()}),
            JobShape(NODE, TRAINER, {NODE: ()}),
        ),
    ),
    "torchtune-llama3.2-1b": _initialized("torch"),
    "torchtune-llama3.2-3b": _initialized("torch"),
    "torchtune-qwen2.5-1.5b": _initialized("torch"),
}


#: The node image of each of Kubeflow's single-job v2.3.0 runtimes (torch, JAX, XGBoost:
#: one ``node`` job, the trainer step, one ``node`` container), the one fact of their spec
#: besides their shape (``manifests/base/runtimes/*.yaml`` at v2.3.0).
UPSTREAM_NODE_IMAGES = {
    "torch-distributed": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
    "jax-distributed": "nvcr.io/nvidia/jax:25.10-py3",
    "xgboost-distributed": "ghcr.io/kubeflow/trainer/xgboost-runtime",
}


def upstream_spec(name: str) -> dict[str, Any] | None:
    """The spec of one of Kubeflow's single-job v2.3.0 ClusterTrainingRuntimes
    (:data:`UPSTREAM_NODE_IMAGES`), for building natively what a TrainJob on it runs
    (``kubetrain convert --compare``); ``None`` for the others (give their spec)."""
    image = UPSTREAM_NODE_IMAGES.get(name)
    shape = UPSTREAM.get(name)
    if image is None or shape is None or shape.policy is None:
        return None
    return {
        "mlPolicy": {"numNodes": 1, shape.policy: {}},
        "template": {
            "spec": {
                "replicatedJobs": [
                    {
                        "name": NODE,
                        "template": {
                            "metadata": {"labels": {ANCESTOR_LABEL: TRAINER}},
                            "spec": {
                                "template": {
                                    "spec": {"containers": [{"name": NODE, "image": image}]}
                                }
                            },
                        },
                    }
                ]
            }
        },
    }


def _labels(meta: Any) -> Mapping[str, Any]:
    labels = _map(meta).get("labels")
    return labels if isinstance(labels, Mapping) else {}


def _map(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one: the webhooks' facts are read of what
    the schema admitted, and of nothing else (a wrong type is the schema's finding)."""
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _at(value: Any, *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = _map(value).get(key)
    return _map(value)


def _container_names(pod: Mapping[str, Any], field: str) -> list[str]:
    return [str(c.get("name")) for c in _list(pod.get(field)) if isinstance(c, Mapping)]


def shape_of(spec: TrainingRuntimeSpec, raw: Mapping[str, Any]) -> RuntimeShape:
    """The shape of a runtime whose spec is known (``raw``: the spec as written)."""
    policy = spec.ml_policy.policies()[0] if spec.ml_policy and spec.ml_policy.policies() else None
    jobs = []
    for rjob in _list(_at(raw, "template", "spec").get("replicatedJobs")):
        if not isinstance(rjob, Mapping):
            continue
        template = _map(rjob.get("template"))
        pod = _at(template, "spec", "template", "spec")
        containers = {
            str(c.get("name")): tuple(
                str(m.get("name")) for m in _list(c.get("volumeMounts")) if isinstance(m, Mapping)
            )
            for c in _list(pod.get("containers"))
            if isinstance(c, Mapping)
        }
        inits = tuple(_container_names(pod, "initContainers"))
        ancestor = _labels(template.get("metadata")).get(ANCESTOR_LABEL)
        replicas = rjob.get("replicas", 1)
        jobs.append(
            JobShape(
                str(rjob.get("name")),
                str(ancestor) if ancestor is not None else None,
                containers,
                inits,
                replicas if type(replicas) is int else 1,
            )
        )
    ml = spec.ml_policy
    injection: list[tuple[str, str]] = []
    if ml and ml.torch and ml.torch.env_injection:
        for target in ml.torch.env_injection.targets or []:
            injection += [(target.job_name, c) for c in target.container_names]
    return RuntimeShape(
        policy,
        tuple(jobs),
        ml.num_nodes if ml else None,
        bool(ml and ml.mpi and ml.mpi.run_launcher_as_node),
        tuple(injection),
    )


@dataclass(frozen=True)
class Runtime:
    """A runtime a TrainJob may name: its key, its spec when known, and its shape."""

    key: RuntimeKey
    shape: RuntimeShape
    #: The spec as written (``None``: declared by name only).
    spec_data: Mapping[str, Any] | None = None
    spec: TrainingRuntimeSpec | None = None
    #: Where it comes from, for messages: "the stack's manifests", a file...
    origin: str = ""
    #: Whether the stack delivers it (a manifest) rather than finding it in the cluster.
    delivered: bool = False
    #: Labels of its metadata (what Kueue and the trainer read of a runtime).
    labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        kind, namespace, name = self.key
        return f"{kind} {namespace + '/' if namespace else ''}{name}"


def runtime_key(kind: str, name: str, namespace: str) -> RuntimeKey:
    return (kind, namespace if kind == TRAINING_RUNTIME else "", name)


def key_of(job: TrainJob) -> RuntimeKey:
    ref = job.spec.runtime_ref
    return runtime_key(ref.runtime_kind, ref.name, job.namespace)


# --- the runtime webhook ---------------------------------------------------------------------


def runtime_problems(raw: Mapping[str, Any]) -> Problems:
    """``validateReplicatedJobs`` (trainingruntime_webhook.go; the ClusterTrainingRuntime
    webhook runs it too): a replicated job of the trainer or an initializer has one replica
    and the container its step needs. Paths are relative to the runtime object."""
    problems: Problems = []
    rjobs = _list(_at(raw, "spec", "template", "spec").get("replicatedJobs"))
    for i, rjob in enumerate(rjobs):
        if not isinstance(rjob, Mapping):
            continue
        template = _map(rjob.get("template"))
        ancestor = _labels(template.get("metadata")).get(ANCESTOR_LABEL)
        if not isinstance(ancestor, str) or ancestor not in ANCESTOR_CONTAINERS:
            continue
        base: tuple[str | int, ...] = ("spec", "template", "spec", "replicatedJobs", i)
        if rjob.get("replicas", 1) != 1:
            problems.append(
                (
                    (*base, "replicas"),
                    f"must be 1 for the {ancestor} step (the trainer's runtime webhook)",
                )
            )
        pod = _at(template, "spec", "template", "spec")
        if ANCESTOR_CONTAINERS[ancestor] not in _container_names(pod, "containers"):
            problems.append(
                (
                    (*base, "template", "spec", "template", "spec", "containers"),
                    f"must have a container named {ANCESTOR_CONTAINERS[ancestor]!r} for the "
                    f"{ancestor} step (the trainer's runtime webhook)",
                )
            )
    return problems


# --- the TrainJob webhook --------------------------------------------------------------------

#: ``validation.IsDomainPrefixedPath``: a DNS-1123 subdomain, a slash, a path.
_DOMAIN_PREFIXED = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$"
)


def _env_names(env: Iterable[Mapping[str, Any]] | None) -> list[str]:
    return [str(e.get("name")) for e in env or [] if isinstance(e, Mapping)]


def _patched_shape(shape: RuntimeShape, job: TrainJob) -> RuntimeShape:
    """The runtime as the TrainJob's patches leave it for the checks below
    (``mergeRuntimePatches`` runs before them): volume mounts a patch adds to a container the
    runtime has count (an initializer's ``initializer`` mount may come from a patch)."""
    mounts: dict[tuple[str, str], list[str]] = {}
    for patch in job.spec.runtime_patches or []:
        spec = patch.training_runtime_spec
        template = spec.template if spec else None
        for rpatch in (template.spec.replicated_jobs if template and template.spec else None) or []:
            pod = (
                rpatch.template.spec.template.spec
                if rpatch.template and rpatch.template.spec and rpatch.template.spec.template
                else None
            )
            for container in (pod.containers or []) if pod else []:
                names = [str(m.get("name")) for m in container.volume_mounts or []]
                mounts.setdefault((rpatch.name, container.name), []).extend(names)
    if not mounts:
        return shape
    jobs = []
    for rjob in shape.jobs:
        containers = {
            name: (*volumes, *mounts.get((rjob.name, name), ()))
            for name, volumes in rjob.containers.items()
        }
        jobs.append(
            JobShape(rjob.name, rjob.ancestor, containers, rjob.init_containers, rjob.replicas)
        )
    return RuntimeShape(
        shape.policy, tuple(jobs), shape.num_nodes, shape.run_launcher_as_node, shape.env_injection
    )


#: Why kubetrain refuses a patch naming what the runtime lacks, which the trainer's webhook
#: admits (it checks the runtime after the strategic merge has added the unknown entry).
_NEVER_RUNS = (
    "the trainer's webhook checks the runtime after merging the patch, which adds it, and the "
    "JobSet built from it then lacks what the API server requires: the TrainJob would never run"
)


def trainjob_problems(job: TrainJob, runtime: Runtime) -> Problems:
    """What ``TrainingRuntime.ValidateObjects`` refuses of ``job`` on ``runtime`` (paths in
    the TrainJob document)."""
    shape = _patched_shape(runtime.shape, job)
    problems: Problems = []
    ref: tuple[str | int, ...] = ("spec", "runtimeRef")
    patches: tuple[str | int, ...] = ("spec", "runtimePatches")
    # JobSet plugin (jobset.go Validate): the initializers' jobs, containers and mounts.
    initializer = job.spec.initializer
    for step, given in (
        (DATASET_INITIALIZER, initializer.dataset if initializer else None),
        (MODEL_INITIALIZER, initializer.model if initializer else None),
    ):
        if given is None:
            continue
        rjob = shape.job(step)
        what = "datasetConfig" if step == DATASET_INITIALIZER else "modelConfig"
        if rjob is None:
            problems.append(
                (
                    ref,
                    f"must have {step} job when trainJob is configured with input {what} "
                    f"({runtime.title} has none; the trainer's TrainJob webhook)",
                )
            )
        elif step not in rjob.containers:
            problems.append(
                (
                    ref,
                    f"must have container with name - {step} in the {step} job "
                    f"({runtime.title}; the trainer's TrainJob webhook)",
                )
            )
        elif INITIALIZER_VOLUME not in rjob.containers[step]:
            problems.append(
                (
                    ref,
                    f"must have volumeMount with name - {INITIALIZER_VOLUME} in container {step} "
                    f"of the {step} job ({runtime.title} mounts none: the trainer's TrainJob "
                    "webhook refuses the job, so the initializer would have nowhere to put "
                    "what it fetches)",
                )
            )
    for i, patch in enumerate(job.spec.runtime_patches or []):
        if not _DOMAIN_PREFIXED.match(patch.manager):
            problems.append(
                (
                    (*patches, i, "manager"),
                    "must be a domain-prefixed path (such as example.io/platform-team)",
                )
            )
        spec = patch.training_runtime_spec
        template = spec.template if spec else None
        for j, rpatch in enumerate(
            (template.spec.replicated_jobs if template and template.spec else None) or []
        ):
            here: tuple[str | int, ...] = (
                *patches,
                i,
                "trainingRuntimeSpec",
                "template",
                "spec",
                "replicatedJobs",
                j,
            )
            rjob = shape.job(rpatch.name)
            if rjob is None:
                names = ", ".join(r.name for r in shape.jobs) or "none"
                problems.append(
                    (
                        (*here, "name"),
                        f"must not have replicated job that doesn't exist in the runtime job "
                        f"template ({runtime.title} has {names}; {_NEVER_RUNS})",
                    )
                )
                continue
            pod = (
                rpatch.template.spec.template.spec
                if rpatch.template and rpatch.template.spec and rpatch.template.spec.template
                else None
            )
            if pod is None:
                continue
            known = set(rjob.containers) | set(rjob.init_containers)
            pod_path = (*here, "template", "spec", "template", "spec")
            for k, container in enumerate(pod.init_containers or []):
                if container.name not in known:
                    problems.append(
                        (
                            (*pod_path, "initContainers", k, "name"),
                            "must not have initContainer that doesn't exist in the runtime "
                            f"job {rpatch.name} ({_names(known)}; {_NEVER_RUNS})",
                        )
                    )
            for k, container in enumerate(pod.containers or []):
                if container.name not in known:
                    problems.append(
                        (
                            (*pod_path, "containers", k, "name"),
                            "must not have container that doesn't exist in the runtime job "
                            f"{rpatch.name} ({_names(known)}; {_NEVER_RUNS})",
                        )
                    )
                elif container.env and container.name in (
                    DATASET_INITIALIZER,
                    MODEL_INITIALIZER,
                    NODE,
                ):
                    problems.append(
                        (
                            (*pod_path, "containers", k, "env"),
                            f"must not have envs for the {DATASET_INITIALIZER}, "
                            f"{MODEL_INITIALIZER}, {NODE} containers (give the node's in "
                            "spec.trainer.env, an initializer's in spec.initializer)",
                        )
                    )
    trainer = job.spec.trainer
    env = _env_names(trainer.env if trainer else None)
    env_path: tuple[str | int, ...] = ("spec", "trainer", "env")
    if shape.policy == "torch":
        # Torch plugin Validate: envInjection targets, reserved envs, torchtune.
        for job_name, target in shape.env_injection:
            rjob = shape.job(job_name)
            if rjob is None or (
                target not in rjob.containers and target not in rjob.init_containers
            ):
                problems.append(
                    (
                        ref,
                        f"envInjection target podSet {job_name!r} container {target!r} not "
                        f"found in runtime template ({runtime.title})",
                    )
                )
        reserved = sorted(set(env) & set(RESERVED_ENV["torch"]))
        if reserved:
            problems.append(
                (
                    env_path,
                    f"must not have reserved envs, invalid envs configured: {reserved} "
                    "(the torch plugin writes them)",
                )
            )
        if trainer is not None and trainer.command == TORCHTUNE_ENTRYPOINT:
            problems += torchtune_problems(job, runtime)
    elif shape.policy == "mpi":
        # MPI plugin Validate: a launcher-as-node runtime with 2+ nodes has both jobs.
        nodes = trainer.num_nodes if trainer and trainer.num_nodes is not None else 1
        if (
            nodes >= 2
            and shape.run_launcher_as_node
            and (shape.job(LAUNCHER) is None or shape.job(NODE) is None)
        ):
            problems.append(
                (
                    ("spec", "trainer", "numNodes"),
                    "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does "
                    f"not have either launcher and node ({runtime.title})",
                )
            )
        reserved = sorted(set(env) & set(RESERVED_ENV["mpi"]))
        if reserved:
            problems.append(
                (
                    env_path,
                    f"must not have reserved envs, invalid envs configured: {reserved} "
                    "(the MPI plugin writes them)",
                )
            )
    elif shape.policy == "xgboost":
        for i, name in enumerate(env):
            if name in RESERVED_ENV["xgboost"]:
                problems.append(((*env_path, i), f"{name} is reserved for the XGBoost runtime"))
    return problems


def _names(names: Iterable[str]) -> str:
    found = sorted(names)
    return "it has " + ", ".join(found) if found else "it has no container"


def torchtune_model(runtime_name: str) -> str:
    """``getModelFromRuntimeRef``: ``torchtune-llama3.2-1b`` -> ``llama3_2/1B``."""
    fields = runtime_name.split("-")
    if len(fields) != 3:
        return ""
    return f"{fields[1].replace('.', '_')}/{fields[2].upper()}"


def _bool_arg(args: Sequence[str], item: str) -> bool:
    """``isBoolArgEnabled``."""
    for arg in args:
        name, sep, value = arg.partition("=")
        if sep and item in name and value.strip().lower() == "true":
            return True
    return False


def uses_qlora(args: Sequence[str]) -> bool:
    """``isUseQLoraFinetune``: quantize_base on, DoRA off."""
    return not _bool_arg(args, "model.use_dora") and _bool_arg(args, "model.quantize_base")


def uses_lora(args: Sequence[str]) -> bool:
    """``isLoraConfigEnabled``."""
    return any("model.lora_attn_modules" in arg for arg in args)


def torchtune_recipe(
    num_nodes: int, num_proc: int | None, gpus: int, model: str, args: Sequence[str]
) -> tuple[str, str]:
    """``getRecipeAndConfig`` (``num_proc`` None: auto)."""
    recipe, suffix = "full_finetune_distributed", "_full"
    single = num_nodes == 1 and (num_proc == 1 or gpus == 1)
    if single and uses_qlora(args):
        recipe, suffix = "lora_finetune_single_device", "_qlora_single_device"
    elif single and uses_lora(args):
        recipe, suffix = "lora_finetune_single_device", "_lora_single_device"
    elif single:
        recipe, suffix = "full_finetune_single_device", "_full_single_device"
    elif num_nodes == 1 and uses_qlora(args):
        recipe, suffix = "lora_finetune_distributed", "_qlora"
    elif num_nodes == 1 and uses_lora(args):
        recipe, suffix = "lora_finetune_distributed", "_lora"
    elif num_nodes > 1:
        suffix = "_full_multinode"
    return recipe, f"{model}{suffix}"


def gpus_of(resources: Mapping[str, Any] | None) -> int:
    """``GetNumGPUPerNode``: the first resource whose name contains "gpu", requests before
    limits (a whole count)."""
    from ..kube.quantity import parse_quantity

    def first(values: Any) -> int:
        for name, value in (values or {}).items():
            if "gpu" in str(name).lower():
                try:
                    return math.ceil(parse_quantity(str(value)).value)
                except ValueError:
                    return 0
        return 0

    if not resources:
        return 0
    requested = first(resources.get("requests"))
    return requested or first(resources.get("limits"))


def torchtune_problems(job: TrainJob, runtime: Runtime) -> Problems:
    """``validateTorchTune``."""
    problems: Problems = []
    trainer = job.spec.trainer
    assert trainer is not None
    model = torchtune_model(job.spec.runtime_ref.name)
    name_path: tuple[str | int, ...] = ("spec", "runtimeRef", "name")
    if model not in TORCHTUNE_MODELS:
        problems.append(
            (
                name_path,
                f"must have a supported pretrained model, invalid model configured: {model}",
            )
        )
    nodes = trainer.num_nodes or 1
    if nodes > 1 and model != "llama3_3/70B":
        problems.append((("spec", "trainer", "numNodes"), f"must be 1 for {model} model"))
    args = trainer.args or []
    gpus = gpus_of(trainer.resources_per_node) if trainer.resources_per_node else 0
    _, config = torchtune_recipe(nodes, trainer.num_proc_per_node, gpus, model, args)
    if "_qlora" in config:
        if model == "qwen2_5/1.5B":
            problems.append((name_path, f"QLoRA is not supported for {model} model"))
        if "_qlora_single_device" not in config and model in ("llama3_2/1B", "llama3_2/3B"):
            problems.append(
                (
                    ("spec", "trainer", "numProcPerNode"),
                    f"must be auto or 1 for {model} model when using QLoRA",
                )
            )
            problems.append(
                (
                    ("spec", "trainer", "resourcesPerNode"),
                    f"must have gpu resource with value 1 for {model} model when using QLoRA",
                )
            )
    if nodes > 1 and (uses_lora(args) or uses_qlora(args)):
        problems.append(
            (
                ("spec", "trainer", "numNodes"),
                "LoRA fine-tuning is not supported for multi-node training in TorchTune",
            )
        )
    for i, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in TORCHTUNE_IMMUTABLE:
            problems.append(
                (
                    ("spec", "trainer", "args", i),
                    f"must not set immutable config {key!r} in trainer args; it is managed by "
                    "the runtime",
                )
            )
    return problems


def is_runtime_manifest(obj: Mapping[str, Any]) -> bool:
    return obj.get("apiVersion") == TRAINER_API_VERSION and obj.get("kind") in (
        TRAINING_RUNTIME,
        CLUSTER_TRAINING_RUNTIME,
    )
