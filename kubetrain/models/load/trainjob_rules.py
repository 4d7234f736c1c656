"""Kubeflow Trainer at load time: the stack's runtimes (delivered or declared), each TrainJob's
runtime found and the trainer's webhooks admitting the job on it, what native mode needs of it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..base import Mode
from ..errors import InputError, PathPart, Problem
from ..limits import MAX_OBJECT_BYTES
from ..runtimes import (
    UPSTREAM,
    Runtime,
    RuntimeKey,
    is_runtime_manifest,
    runtime_key,
    runtime_problems,
    shape_of,
    trainjob_problems,
)
from ..runtimes import key_of as runtime_key_of
from ..scheduling import ObjectMeta
from ..source import (
    Document,
    load_documents,
    project_file,
)
from ..stack import CONFIG_NAMESPACE, StackSettings
from ..trainjob import (
    CLUSTER_TRAINING_RUNTIME,
    TRAINER_API_VERSION,
    TRAINING_RUNTIME,
    ClusterTrainingRuntime,
    TrainingRuntime,
    TrainingRuntimeSpec,
    TrainJob,
)
from .embedded import embedded_problems, embedded_value
from .jobs import mib
from .loaded import LoadedJob, LoadedManifest
from .messages import validated


def stack_runtimes(
    stack_doc: Document,
    settings: StackSettings,
    manifests: Sequence[LoadedManifest],
    root: Path,
    problems: list[Problem],
) -> dict[RuntimeKey, Runtime]:
    """The Kubeflow Trainer runtimes of the stack: those among its manifests (checked as the
    trainer's runtime webhook checks them) and those it declares as existing (see
    :mod:`.runtimes`)."""
    found: dict[RuntimeKey, Runtime] = {}
    for manifest in manifests:
        obj = manifest.obj
        if not is_runtime_manifest(obj):
            continue
        model_cls: type[TrainingRuntime] | type[ClusterTrainingRuntime] = (
            TrainingRuntime if obj["kind"] == TRAINING_RUNTIME else ClusterTrainingRuntime
        )
        before = len(problems)
        runtime = validated(model_cls, manifest.source.document, problems, data=obj)
        if runtime is None:
            continue
        # The embedded Kubernetes types (metadata, the Job templates), then the trainer's
        # runtime webhook: each reads values of the types the one before it admitted.
        for path, message in embedded_problems(runtime, settings):
            problems.append(manifest.source.problem(path, message))
        if len(problems) > before:
            continue
        for path, message in runtime_problems(obj):
            problems.append(manifest.source.problem(path, message))
        if len(problems) > before:
            continue
        meta = obj["metadata"]
        key = runtime_key(obj["kind"], meta["name"], meta.get("namespace") or "")
        spec = runtime.spec or TrainingRuntimeSpec()
        found[key] = Runtime(
            key,
            shape_of(spec, obj.get("spec") or {}),
            obj.get("spec") or {},
            spec,
            f"the stack's manifest at {manifest.source}",
            delivered=True,
            labels=dict(meta.get("labels") or {}),
        )
    external = ("config", f"{CONFIG_NAMESPACE}:external", "trainingRuntimes")
    for i, declared in enumerate(settings.external.training_runtimes):
        where = (*external, i)
        namespace = declared.namespace or settings.namespace
        key = runtime_key(declared.kind, declared.name, namespace)
        if key in found:
            problems.append(
                stack_doc.problem(
                    where,
                    f"{found[key].title} is among the stack's manifests already: declare only "
                    "runtimes the stack does not deliver",
                )
            )
            continue
        if declared.file is not None and declared.spec is not None:
            problems.append(stack_doc.problem(where, "give its spec in file or in spec, not both"))
            continue
        spec_doc: Document | None = None
        labels: dict[str, str] = {}
        origin = "declared in kubetrain:external.trainingRuntimes"
        if declared.spec is not None:
            spec_doc = stack_doc.sub((*where, "spec"))
        elif declared.file is not None:
            read = _declared_runtime_file(
                stack_doc, where, declared, namespace, root, problems, settings
            )
            if read is None:
                continue
            spec_doc, labels = read
            origin = f"{declared.file}"
        if spec_doc is None:
            shape = (
                UPSTREAM.get(declared.name) if declared.kind == CLUSTER_TRAINING_RUNTIME else None
            )
            if shape is None:
                known = ", ".join(sorted(UPSTREAM))
                problems.append(
                    stack_doc.problem(
                        where,
                        f"kubetrain knows no runtime {declared.name!r} by name (it knows the "
                        f"ClusterTrainingRuntimes Kubeflow publishes with Trainer v2.3.0: "
                        f"{known}): give its spec with file: or spec:",
                    )
                )
                continue
            found[key] = Runtime(key, shape, origin=origin + " (by name: Kubeflow's v2.3.0)")
            continue
        declared_spec = validated(TrainingRuntimeSpec, spec_doc, problems)
        if declared_spec is None:
            continue
        spec = declared_spec
        before = len(problems)
        for path, message in embedded_problems(spec, settings):
            problems.append(spec_doc.problem(path, message))
        wrapped = {"spec": spec_doc.data}
        for path, message in runtime_problems(wrapped):
            problems.append(spec_doc.problem(path[1:], message))
        if len(problems) > before:
            continue
        found[key] = Runtime(
            key, shape_of(spec, spec_doc.data), spec_doc.data, spec, origin, labels=labels
        )
    return found


def runtime_from_args(
    data: Mapping[str, Any], job: TrainJob, settings: StackSettings, file: str
) -> Runtime:
    """The runtime a TrainJob component runs on, from its ``runtime`` argument
    (``{kind, name, namespace, spec}``: the spec, or a runtime Kubeflow publishes with Trainer
    v2.3.0 by name), checked as the trainer's webhooks check the job on it. Problems name
    ``file`` and ``runtime.*`` or the job's field."""
    problems: list[Problem] = []
    doc = Document(file, 0, {"runtime": dict(data)}).sub(("runtime",))
    ref = job.spec.runtime_ref
    kind = str(data.get("kind") or ref.runtime_kind)
    name = str(data.get("name") or ref.name)
    namespace = str(data.get("namespace") or job.namespace)
    key = runtime_key(kind, name, namespace)
    if key != runtime_key_of(job):
        problems.append(
            doc.problem(
                (),
                f"is {kind} {name}, but the job's runtimeRef names {ref.runtime_kind} {ref.name}",
            )
        )
        raise InputError(problems)
    runtime: Runtime | None = None
    if data.get("spec") is not None:
        spec = validated(TrainingRuntimeSpec, doc.sub(("spec",)), problems)
        if spec is not None:
            for path, message in embedded_problems(spec, settings):
                problems.append(doc.problem(("spec", *path), message))
            for path, message in runtime_problems({"spec": data["spec"]}):
                problems.append(doc.problem(path, message))
            runtime = Runtime(key, shape_of(spec, data["spec"]), data["spec"], spec, file)
    elif kind == CLUSTER_TRAINING_RUNTIME and name in UPSTREAM:
        runtime = Runtime(key, UPSTREAM[name], origin=f"{file} (by name: Kubeflow's v2.3.0)")
    else:
        problems.append(
            doc.problem(
                ("spec",),
                f"kubetrain knows no runtime {name!r} by name: give the runtime's spec",
            )
        )
    if runtime is not None:
        problems += [Problem(file, None, p, m) for p, m in trainjob_problems(job, runtime)]
    if problems:
        raise InputError(problems)
    assert runtime is not None
    return runtime


def _declared_runtime_file(
    stack_doc: Document,
    where: tuple[PathPart, ...],
    declared: Any,
    namespace: str,
    root: Path,
    problems: list[Problem],
    settings: StackSettings,
) -> tuple[Document, dict[str, str]] | None:
    """The spec document of a runtime declared with ``file:``: a file of the project (as
    jobFiles are), holding the runtime of the declared kind and name."""
    file_where = (*where, "file")
    resolved = project_file(stack_doc, file_where, declared.file, root)
    if isinstance(resolved, Problem):
        problems.append(resolved)
        return None
    try:
        docs = list(load_documents(resolved))
    except InputError as exc:
        problems.extend(exc.problems)
        return None
    for doc in docs:
        data = doc.data
        if not (
            isinstance(data, dict)
            and is_runtime_manifest(data)
            and data.get("kind") == declared.kind
            and isinstance(data.get("metadata"), dict)
            and data["metadata"].get("name") == declared.name
        ):
            continue
        if not isinstance(data.get("spec"), dict):
            problems.append(doc.problem(("spec",), "required field is missing"))
            return None
        # Its metadata as the API server reads it (labels a map of strings...): the trainer
        # and Kueue read the runtime's labels.
        before = len(problems)
        meta = doc.sub(("metadata",))
        for path, message in embedded_value(meta.data, ObjectMeta, None, (), settings):
            problems.append(meta.problem(path, message))
        if len(problems) > before:
            return None
        labels = data["metadata"].get("labels") or {}
        return doc.sub(("spec",)), {str(k): str(v) for k, v in labels.items()}
    problems.append(
        stack_doc.problem(
            file_where,
            f"{declared.file!r} holds no {declared.kind} named {declared.name!r} "
            f"({TRAINER_API_VERSION})",
        )
    )
    return None


def refused_runtimes(
    manifest_docs: Sequence[Document], settings: StackSettings, runtimes: Mapping[RuntimeKey, Any]
) -> set[RuntimeKey]:
    """The runtimes among the stack's manifests that were refused (their problems are said):
    a job naming one is not told its runtime does not exist. A manifest without a name names
    no runtime."""
    out: set[RuntimeKey] = set()
    for d in manifest_docs:
        obj = d.data
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if not (isinstance(obj, dict) and is_runtime_manifest(obj) and isinstance(meta, dict)):
            continue
        name, namespace = meta.get("name"), meta.get("namespace")
        if isinstance(name, str):
            namespace = namespace if isinstance(namespace, str) else settings.namespace
            key = runtime_key(str(obj["kind"]), name, namespace)
            if key not in runtimes:
                out.add(key)
    return out


def trainjob_stack_problems(
    jobs: Sequence[LoadedJob],
    runtimes: Mapping[RuntimeKey, Runtime],
    settings: StackSettings,
    refused: Collection[RuntimeKey] = (),
) -> tuple[list[Problem], list[LoadedJob]]:
    """Each TrainJob's runtime exists, and the trainer's webhooks admit the job on it; and the
    jobs without such a problem (a partial load builds only those: a job refused here, its
    hostfile past what Kubernetes stores, must never reach a builder). A job whose runtime is
    among the ``refused`` manifests is not built, and nothing more is said of it."""
    problems: list[Problem] = []
    kept: list[LoadedJob] = []
    for loaded in jobs:
        job = loaded.document
        if isinstance(job, TrainJob) and runtime_key_of(job) in refused:
            continue
        found = _trainjob_problems_of(loaded, runtimes)
        problems += found
        if not found:
            kept.append(loaded)
    return problems, kept


def _trainjob_problems_of(
    loaded: LoadedJob, runtimes: Mapping[RuntimeKey, Runtime]
) -> list[Problem]:
    problems: list[Problem] = []
    job = loaded.document
    if isinstance(job, TrainJob):
        key = runtime_key_of(job)
        runtime = runtimes.get(key)
        ref = ("spec", "runtimeRef", "name")
        if runtime is None:
            kind, namespace, name = key
            where = f" in namespace {namespace}" if namespace else ""
            problems.append(
                loaded.source.problem(
                    ref,
                    f"{kind} {name!r}{where} is neither among the stack's manifests nor declared "
                    f"in {CONFIG_NAMESPACE}:external.trainingRuntimes: the trainer refuses a "
                    "TrainJob whose runtime does not exist (add the runtime, or declare it)",
                )
            )
            return problems
        for path, message in trainjob_problems(job, runtime):
            problems.append(loaded.source.problem(path, message))
        if loaded.mode is Mode.NATIVE:
            if runtime.spec is None:
                problems.append(
                    loaded.source.problem(
                        ref,
                        f"native mode builds the JobSet from the runtime's spec, and "
                        f"{runtime.title} is declared by name only: give its spec (file: or "
                        f"spec: in {CONFIG_NAMESPACE}:external.trainingRuntimes), or use "
                        "operator mode",
                    )
                )
            elif runtime.shape.policy == "flux":
                problems.append(
                    loaded.source.problem(
                        ref,
                        f"{runtime.title} runs Flux Framework, which kubetrain does not build "
                        "natively: use operator mode",
                    )
                )
            elif runtime.shape.policy == "mpi" and (found := _hostfile_problem(job, runtime)):
                problems.append(loaded.source.problem(("spec", "trainer", "numNodes"), found))
    return problems


def _hostfile_problem(job: TrainJob, runtime: Runtime) -> str | None:
    """The MPI plugin's hostfile (one ConfigMap, native mode) lists every pod of the node job
    (and of the launcher, run as a node), each of its replicas: its size is known from the
    runtime before anything is built, and past what Kubernetes stores it is refused here, as
    a TFJob past the output budget is, instead of being built in memory."""
    shape = runtime.shape
    trainer = job.spec.trainer
    nodes = (trainer.num_nodes if trainer else None) or shape.num_nodes or 1
    lines = 0
    for rjob in shape.jobs:
        if rjob.name == "node":
            count = max(nodes - 1, 1) if shape.run_launcher_as_node else nodes
        elif rjob.name == "launcher" and shape.run_launcher_as_node:
            count = 1
        else:
            continue
        lines += rjob.replicas * count
    size = lines * (2 * len(job.name) + 48)
    if size <= MAX_OBJECT_BYTES:
        return None
    return (
        f"the MPI hostfile of this TrainJob would list {lines:,} pods, about {mib(size)} in one "
        f"ConfigMap; Kubernetes stores objects of at most {mib(MAX_OBJECT_BYTES)} (etcd's "
        "request limit), so it could never be created: use fewer nodes or node replicas"
    )
