"""One job document: its kind, credential rule, schema, embedded Kubernetes types, annotations,
semantic rules and derived names; and the stack's jobs together (duplicates, output budget)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...kube import schemas as k8s
from ..base import (
    MODE_ANNOTATION,
    NATIVE_WORKLOAD_ANNOTATION,
    DerivedName,
    JobDocument,
    Mode,
    OutputEstimate,
    job_kinds,
    resource_kinds,
)
from ..errors import InputError, PathPart, Problem
from ..limits import MAX_OBJECT_BYTES, MAX_OBJECTS, MAX_OUTPUT_BYTES
from ..secrets import (
    credential_problems,
)
from ..source import (
    Document,
    value_problems,
)
from ..stack import CONFIG_NAMESPACE, NATIVE_WORKLOADS, StackSettings
from .config import document_keys
from .embedded import embedded_problems
from .loaded import JobSource, LoadedJob
from .messages import kind_of, validated


def load_job(
    document: Mapping[str, Any],
    *,
    settings: Mapping[str, Any] | None = None,
    file: str,
) -> tuple[LoadedJob, StackSettings]:
    """Validate one job document outside a stack file, e.g. the arguments of a Pulumi component.

    The same rules as :func:`load_stack` apply to the document (schema, embedded Kubernetes
    types against ``settings``' Kubernetes version, semantic rules, derived-name limits, the mode
    annotation) and to ``settings`` (the stack-level ``kubetrain:*`` keys a job's expansion
    depends on). Fields may be spelled as in a job document (``tfReplicaSpecs``) or as model
    attribute names (``tf_replica_specs``), which is how Pulumi SDKs send component inputs.
    Problems name ``file`` and the field path (``settings.*`` for settings).
    """
    problems: list[Problem] = []
    for path, value in (((), document), (("settings",), settings or {})):
        if not isinstance(value, Mapping):
            problems.append(Problem(file, None, path, f"must be a mapping, got {kind_of(value)}"))
    if problems:
        raise InputError(problems)
    problems = [
        Problem(file, None, path, message)
        for path, message in (
            *value_problems(dict(document)),
            *(((("settings", *p), m) for p, m in value_problems(dict(settings or {})))),
        )
    ]
    if problems:  # not plain data: nothing below could read it
        raise InputError(problems)
    given = dict(settings or {})
    for key in (
        "jobs",
        "job_files",
        "jobFiles",
        "credentials",
        "patches",
        "manifests",
        "manifest_files",
        "manifestFiles",
    ):
        if key in given:
            problems.append(
                Problem(file, None, ("settings", key), "not a job setting: give it to the stack")
            )
            given.pop(key)
    settings_doc = Document(file, 0, {"settings": document_keys(StackSettings, given)}).sub(
        ("settings",)
    )
    stack_settings = validated(StackSettings, settings_doc, problems)
    if stack_settings is None or problems:
        raise InputError(problems)
    api_version, kind = document.get("apiVersion"), document.get("kind")
    kind_cls = (
        job_kinds().get((api_version, kind))
        if isinstance(api_version, str) and isinstance(kind, str)
        else None
    )
    data = document_keys(kind_cls, dict(document)) if kind_cls is not None else dict(document)
    loaded = _load_job(Document(file, 0, data), stack_settings, problems)
    if loaded is not None and not problems:
        problems += output_budget([loaded], stack_settings)
    if loaded is None or problems:
        raise InputError(problems)
    return loaded, stack_settings


def load_job_document(doc: Document, settings: StackSettings) -> LoadedJob:
    """Validate one job document of a stack (a file's, or one patched: ``kubetrain convert``
    loads each state of a job its patches give) with the stack's ``settings``: every rule of
    :func:`load_stack` for a job. Raises :class:`InputError`."""
    problems: list[Problem] = []
    loaded = _load_job(doc, settings, problems)
    if loaded is None or problems:
        raise InputError(problems)
    return loaded


def job_outcome(
    doc: Document, settings: StackSettings
) -> tuple[JobDocument | None, Mode, list[Problem]]:
    """:func:`_load_job` as plain values (the validated document, its mode, the problems
    found), which a process can hand to another (see :mod:`kubetrain.parallel`)."""
    problems: list[Problem] = []
    loaded = _load_job(doc, settings, problems)
    if loaded is None:
        return None, Mode.NATIVE, problems
    return loaded.document, loaded.mode, problems


def _load_job(doc: Document, settings: StackSettings, problems: list[Problem]) -> LoadedJob | None:
    data = doc.data
    if not isinstance(data, dict):
        problems.append(
            doc.problem((), "a job document must be a mapping with apiVersion and kind")
        )
        return None
    kinds = job_kinds()
    api_version, kind = data.get("apiVersion"), data.get("kind")
    cls = (
        kinds.get((api_version, kind))
        if isinstance(api_version, str) and isinstance(kind, str)
        else None
    )
    if cls is None:
        if (
            isinstance(api_version, str)
            and isinstance(kind, str)
            and _is_plain_object(api_version, kind, settings)
        ):
            problems.append(
                doc.problem(
                    ("kind",),
                    f"{kind} is a plain Kubernetes object, not a job: list it under "
                    f"{CONFIG_NAMESPACE}:manifests (or in a file of "
                    f"{CONFIG_NAMESPACE}:manifestFiles)",
                )
            )
            return None
        accepted = ", ".join(f"{a} {k}" for a, k in sorted(kinds))
        field = (
            "kind" if "kind" not in data or api_version in [a for a, _ in kinds] else "apiVersion"
        )
        problems.append(
            doc.problem(
                (field,), f"unknown job kind {api_version!r} {kind!r}; accepted kinds: {accepted}"
            )
        )
        return None
    found = credential_problems(data)
    problems += [doc.problem(path, message) for path, message in found]
    job = validated(cls, doc, problems, secrets=[path for path, _ in found])
    if job is None or found:
        return None
    if job.metadata.namespace is None:
        meta = job.metadata.model_copy(update={"namespace": settings.namespace})
        job = job.model_copy(update={"metadata": meta})
    before = len(problems)
    for path, message in embedded_problems(job, settings):
        problems.append(doc.problem(path, message))
    if len(problems) > before:
        return None
    # The annotations that choose how the job is built, before any rule reads them.
    written = job.metadata.annotations.get(MODE_ANNOTATION)
    if written is not None and Mode.parse(written) is None:
        problems.append(
            doc.problem(
                ("metadata", "annotations", MODE_ANNOTATION),
                f"must be native or operator, got {written!r}",
            )
        )
        return None
    for path, message in _native_workload_problems(job, settings):
        problems.append(doc.problem(path, message))
    if len(problems) > before:
        return None
    for path, message in job.semantic_problems(settings):
        problems.append(doc.problem(path, message))
    if len(problems) > before:
        return None
    for problem in _name_budget(job, settings, doc):
        problems.append(problem)
    source = JobSource(doc)
    return LoadedJob(job, source, job.mode(settings))


def _native_workload_problems(
    job: JobDocument, settings: StackSettings
) -> list[tuple[tuple[PathPart, ...], str]]:
    """The ``kubetrain.io/native-workload`` annotation names a workload its kind has (checked
    like ``kubetrain.io/mode``, before the kind's own rules read it; in operator mode it is
    unused, which the builder says as a warning)."""
    value = job.metadata.annotations.get(NATIVE_WORKLOAD_ANNOTATION)
    if value is None:
        return []
    path: tuple[PathPart, ...] = ("metadata", "annotations", NATIVE_WORKLOAD_ANNOTATION)
    if value not in NATIVE_WORKLOADS:
        return [(path, f"must be pod, job or jobset, got {value!r}")]
    if not job.normalized().NATIVE_WORKLOADS:
        kinds = sorted({k for (_, k), c in job_kinds().items() if c.NATIVE_WORKLOADS})
        return [
            (
                path,
                f"only Kubeflow replica jobs ({', '.join(kinds)}) choose what runs their "
                f"replicas; the native objects of {job.KIND} jobs are fixed: remove the annotation",
            )
        ]
    supported = job.normalized().NATIVE_WORKLOADS
    if value not in supported:
        # A TrainJob runs natively only as its JobSet: "pod" would leave it in operator mode.
        return [(path, f"a {job.KIND} runs natively as {' or '.join(supported)}, got {value!r}")]
    return []


def _is_plain_object(api_version: str, kind: str, settings: StackSettings) -> bool:
    """Whether ``kind`` is Kubernetes' own (or another kind that is no job kubetrain expands,
    such as an ExternalSecret): what ``kubetrain:manifests`` holds."""
    return k8s.builtin_definition(settings.version, api_version, kind) is not None or (
        (api_version, kind) in resource_kinds() and (api_version, kind) not in job_kinds()
    )


def duplicate_jobs(jobs: Iterable[LoadedJob]) -> list[Problem]:
    first: dict[tuple[str, str, str], LoadedJob] = {}
    problems = []
    for job in jobs:
        key = (job.document.KIND, job.document.namespace, job.document.name)
        if key in first:
            problems.append(
                Problem(
                    job.source.file,
                    job.source.line,
                    (*job.source.path, "metadata", "name"),
                    f"{job.title} is already defined at {first[key].source}",
                )
            )
        else:
            first[key] = job
    return problems


#: Bytes each object adds to its kustomization.yaml (a resources line).
_KUSTOMIZATION_LINE = 80


def output_budget(jobs: Sequence[LoadedJob], settings: StackSettings) -> list[Problem]:
    """The stack's output within the bounds of docs/limits.md: each object small enough for
    Kubernetes to store, and all of them within kubetrain's budget of objects and bytes (a
    TFJob's output grows with the square of its replicas). Checked before anything is built."""
    problems: list[Problem] = []
    objects = size = 0
    biggest: tuple[int, LoadedJob, OutputEstimate] | None = None
    for job in jobs:
        estimate = job.job.output_estimate(settings, job.mode)
        if estimate.largest > MAX_OBJECT_BYTES:
            problems.append(
                job.source.problem(
                    estimate.path,
                    f"one object of this job would be about {mib(estimate.largest)}; Kubernetes "
                    f"stores objects of at most {mib(MAX_OBJECT_BYTES)} (etcd's request limit), "
                    "so it could never be created: use fewer replicas",
                )
            )
        objects += estimate.objects
        size += estimate.bytes + _KUSTOMIZATION_LINE * estimate.objects
        if biggest is None or estimate.bytes > biggest[0]:
            biggest = (estimate.bytes, job, estimate)
    # A fleet renders every object once per cluster.
    copies = len(settings.clusters) if settings.fleet else 1
    objects, size = objects * copies, size * copies
    if biggest is not None and (objects > MAX_OBJECTS or size > MAX_OUTPUT_BYTES):
        _, job, estimate = biggest
        clusters = f" in its {copies} clusters" if copies > 1 else ""
        problems.append(
            job.source.problem(
                estimate.path,
                f"the stack would render {objects:,} objects{clusters}, about {mib(size)}; "
                f"kubetrain renders at most {MAX_OBJECTS:,} objects and "
                f"{mib(MAX_OUTPUT_BYTES)} per stack (docs/limits.md); the largest part is "
                f"this {job.document.KIND}: "
                f"{estimate.objects:,} objects, about {mib(estimate.bytes)}",
            )
        )
    return problems


def mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


def _name_budget(job: JobDocument, settings: StackSettings, doc: Document) -> list[Problem]:
    """Every derived name and label value within Kubernetes limits; name the longest offender."""
    failing: dict[str, tuple[DerivedName, str]] = {}
    for derived in job.derived_names(settings):
        problem = derived.rule.check(derived.value)
        current = failing.get(derived.rule.title)
        if problem and (current is None or len(derived.value) > len(current[0].value)):
            failing[derived.rule.title] = (derived, problem)
    out = []
    for derived, problem in failing.values():
        message = f"derived {derived.what} {problem}"
        excess = len(derived.value) - derived.rule.max_length
        if excess > 0:
            message += f"; shorten metadata.name by at least {excess} characters"
        out.append(doc.problem(("metadata", "name"), message))
    return out
