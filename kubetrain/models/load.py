"""Loading a stack: stack file -> settings -> job documents -> validated, located models.

All problems found in one pass are reported together, each as ``FILE:LINE: path: message``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import glob
import json
import os
import re
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from ..kube import apiserver, catalog, scopes
from ..kube import schemas as k8s
from ..kube.catalog import group_of
from ..kube.quantity import parse_quantity
from ..parallel import ChunkMapper, serial
from .base import (
    MODE_ANNOTATION,
    NATIVE_WORKLOAD_ANNOTATION,
    DerivedName,
    JobDocument,
    K8sType,
    OutputEstimate,
    job_kinds,
    plain_copy,
    resource_kinds,
)
from .errors import InputError, PathPart, Problem, format_path
from .limits import MAX_OBJECT_BYTES, MAX_OBJECTS, MAX_OUTPUT_BYTES
from .patches import apply_patches, patch_sources
from .resources import as_built
from .runtimes import (
    UPSTREAM,
    Runtime,
    RuntimeKey,
    is_runtime_manifest,
    runtime_key,
    runtime_problems,
    shape_of,
    trainjob_problems,
)
from .runtimes import key_of as runtime_key_of
from .scheduling import ObjectMeta
from .secrets import (
    configmap_credential_problems,
    credential_problems,
    credential_value_message,
    external_secret_template_problems,
    looks_like_credential,
)
from .source import (
    Document,
    display_path,
    expand_lists,
    foreign_config,
    leaves_project,
    list_problem,
    load_documents,
    note_glob,
    project_file,
    value_problems,
)
from .stack import CONFIG_NAMESPACE, NATIVE_WORKLOADS, ClusterTarget, StackFile, StackSettings
from .trainjob import (
    CLUSTER_TRAINING_RUNTIME,
    TRAINER_API_VERSION,
    TRAINING_RUNTIME,
    ClusterTrainingRuntime,
    TrainingRuntime,
    TrainingRuntimeSpec,
    TrainJob,
)

__all__ = [
    "MODE_ANNOTATION",
    "NATIVE_WORKLOAD_ANNOTATION",
    "JobSource",
    "LoadedJob",
    "LoadedManifest",
    "Stack",
    "config_keys",
    "discover_stacks",
    "document_keys",
    "find_project_root",
    "load_job",
    "load_job_document",
    "load_stack",
    "load_stack_config",
    "load_stack_data",
    "runtime_from_args",
    "stack_name",
    "stack_name_problem",
]

# Pulumi's stack names: letters, digits, '-', '_' and '.'. kubetrain also refuses a leading
# '.': the name is a folder under rendered/, and ".", ".." or a hidden folder cannot be one.
_STACK_FILE = re.compile(r"^Pulumi\.(?P<name>.+)\.ya?ml$")
_STACK_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")
Mode = Literal["native", "operator"]
#: Job documents worth a process of their own when a stack is loaded on several cores (a
#: document takes about a quarter of a millisecond to validate).
JOBS_PER_PROCESS = 100


@dataclass(frozen=True)
class JobSource:
    """Where a job document was written (its line is looked up only when a message needs it)."""

    document: Document = field(repr=False, compare=False)

    @property
    def file(self) -> str:
        return self.document.file

    @property
    def path(self) -> tuple[PathPart, ...]:
        return self.document.prefix

    @property
    def line(self) -> int | None:
        return self.document.line_of(())

    def problem(self, path: Sequence[PathPart], message: str) -> Problem:
        """A :class:`Problem` at ``path`` relative to the job document."""
        return self.document.problem(path, message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass(frozen=True)
class LoadedJob:
    """A validated job document, its namespace resolved, and where it came from."""

    document: JobDocument
    source: JobSource
    mode: Mode

    @property
    def job(self) -> JobDocument:
        """The document in the form builders expand (v1alpha1 converted to v1)."""
        return self.document.normalized()

    @cached_property
    def title(self) -> str:
        """``TFJob ml/mnist`` (named in messages and in the header of every file built from the
        job: computed once)."""
        return f"{self.document.KIND} {self.document.namespace}/{self.document.name}"


@dataclass(frozen=True)
class LoadedManifest:
    """A plain Kubernetes object of ``kubetrain:manifests`` / ``kubetrain:manifestFiles``,
    validated (built-in kinds against their schema), its namespace resolved, and where it came
    from."""

    obj: dict[str, Any]
    source: JobSource

    @property
    def title(self) -> str:
        meta = self.obj["metadata"]
        namespace = meta.get("namespace")
        return f"{self.obj['kind']} {namespace + '/' if namespace else ''}{meta['name']}"


@dataclass(frozen=True)
class Stack:
    """A loaded stack: its name, settings, jobs and plain manifests."""

    name: str
    file: Path
    project_root: Path
    settings: StackSettings
    jobs: tuple[LoadedJob, ...]
    #: The stack file's document, to locate settings found wrong after loading.
    document: Document | None = field(default=None, repr=False, compare=False)
    manifests: tuple[LoadedManifest, ...] = ()
    #: The Kubeflow Trainer runtimes its TrainJobs may name (:mod:`.runtimes`).
    runtimes: Mapping[RuntimeKey, Runtime] = field(default_factory=dict)
    #: The cluster of ``kubetrain:clusters`` this stack was loaded for, its overrides applied
    #: (``None``: the stack names no cluster).
    cluster: ClusterTarget | None = None
    #: What was wrong with it, when it was loaded ``partial``: its other jobs and manifests
    #: are here (to find the problems their build has in the same run).
    problems: tuple[Problem, ...] = ()

    @property
    def tree_name(self) -> str:
        """Where the stack renders under ``rendered/``: ``<env>``, or ``<env>/<cluster>`` for
        one cluster of a fleet."""
        if self.cluster is not None and self.settings.fleet:
            return f"{self.name}/{self.cluster.name}"
        return self.name

    def problem(self, path: Sequence[PathPart], message: str) -> Problem:
        """A :class:`Problem` at ``path`` of the stack file (e.g. ``("config", "kubetrain:x")``)."""
        if self.document is None:
            return Problem(display_path(self.file), None, tuple(path), message)
        return self.document.problem(path, message)

    @property
    def source_name(self) -> str:
        """The stack file relative to the project root, with '/' separators (stable everywhere)."""
        try:
            return self.file.resolve().relative_to(self.project_root.resolve()).as_posix()
        except ValueError:
            return self.file.name


def stack_name(path: Path) -> str:
    """``stacks/Pulumi.dev.yaml`` -> ``dev``."""
    m = _STACK_FILE.match(path.name)
    if not m:
        raise InputError.single(
            display_path(path), "a stack file must be named Pulumi.<stack>.yaml"
        )
    problem = stack_name_problem(m["name"])
    if problem:
        raise InputError.single(display_path(path), problem)
    return m["name"]


def stack_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a stack kubetrain renders, or ``None`` (the value is quoted with
    its control characters escaped)."""
    if not _STACK_NAME.fullmatch(name) or len(name) > 100:
        return (
            f"the stack name {name!r} is not one kubetrain can render: letters, digits, "
            "'-', '_' and '.' (not first), at most 100 characters, as Pulumi allows; it names "
            "the folder rendered/<stack>"
        )
    return None


def find_project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding ``Pulumi.yaml``, else ``start`` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "Pulumi.yaml").is_file() or (folder / "Pulumi.yml").is_file():
            return folder
    return start


def discover_stacks(stacks_dir: Path, names: Sequence[str] = ()) -> list[Path]:
    """Stack files in ``stacks_dir``, all of them or the ``names`` asked for, sorted by name."""
    found: dict[str, Path] = {}
    problems: list[Problem] = []
    for p in sorted(stacks_dir.glob("Pulumi.*.y*ml")):
        if not _STACK_FILE.match(p.name):
            continue
        try:
            found[stack_name(p)] = p
        except InputError as exc:  # said, not skipped: a stack nobody renders is a surprise
            problems += exc.problems
    if problems:
        raise InputError(problems)
    if not names:
        if not found:
            raise InputError.single(
                display_path(stacks_dir), "no stack files (Pulumi.<env>.yaml) here"
            )
        return [found[n] for n in sorted(found)]
    missing = [n for n in names if n not in found]
    if missing:
        known = ", ".join(sorted(found)) or "none"
        raise InputError.single(
            display_path(stacks_dir),
            f"no stack file for {', '.join(missing)} (stacks here: {known})",
        )
    return [found[n] for n in dict.fromkeys(names)]


def load_stack(
    path: str | Path,
    *,
    project_root: Path | None = None,
    jobs: bool = True,
    chunks: ChunkMapper = serial,
    patched: bool = True,
    cluster: str | None = None,
    partial: bool = False,
) -> Stack:
    """Load and validate the stack file at ``path`` and every job document it names (with
    ``jobs=False``, the settings only: the job list of the result is empty). The job documents
    are validated independently of each other, by ``chunks`` (:mod:`kubetrain.parallel`). With
    ``patched=False``, the documents as their files hold them, ``kubetrain:patches`` not
    applied (what ``kubetrain convert`` converts). ``cluster`` names one of
    ``kubetrain:clusters``: its overrides (GPU resource name, patches) are applied, and the
    result says which it is (:attr:`Stack.cluster`). With ``partial``, problems of its jobs and
    manifests do not raise: the result holds what loaded and says what did not
    (:attr:`Stack.problems`)."""
    path = Path(path)
    name = stack_name(path)
    root = project_root or find_project_root(path.parent)
    docs = load_documents(path, skip=foreign_config)
    if len(docs) != 1:
        raise InputError.single(
            display_path(path), f"a stack file holds exactly one YAML document, found {len(docs)}"
        )
    return _load_stack_document(
        docs[0],
        name,
        path,
        root,
        jobs=jobs,
        chunks=chunks,
        patched=patched,
        cluster=cluster,
        partial=partial,
    )


def load_stack_config(
    config: Mapping[str, str],
    *,
    name: str,
    project_root: Path,
    file: Path | None = None,
) -> Stack:
    """Load a stack from its Pulumi configuration instead of its stack file.

    This is what the Pulumi program (``stacks/__main__.py``) calls: ``config`` holds the stack's
    ``kubetrain:*`` values as a Pulumi program receives them, keys without the ``kubetrain:``
    prefix and values as strings (objects and lists JSON-encoded, as ``pulumi.Config.get``
    returns them). Every rule of :func:`load_stack` applies; ``jobFiles`` are resolved against
    ``project_root`` (the folder holding ``Pulumi.yaml``, not the program's working directory).

    ``credentials`` is left out on purpose: through Pulumi config its values arrive decrypted,
    and they must only ever exist as secret outputs (the components read them themselves).

    ``file`` is the stack file the values came from, when there is one: problems name it, with
    the line of the offending value when the file has that value at the same path.
    """
    path = file or project_root / f"Pulumi.{name}.yaml"
    ours = {
        f"{CONFIG_NAMESPACE}:{key}": _decode_config_value(key, raw)
        for key, raw in config.items()
        if key != "credentials"
    }
    shown = display_path(path)
    problems = [Problem(shown, None, p, m) for p, m in value_problems({"config": ours})]
    if problems:
        raise InputError(problems)
    doc = Document.with_lines(shown, {"config": ours}, _lines_of_same_values(file, ours))
    return _load_stack_document(doc, name, path, project_root)


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
            problems.append(Problem(file, None, path, f"must be a mapping, got {_kind_of(value)}"))
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
    stack_settings = _validate(StackSettings, settings_doc, problems)
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
        problems += _output_budget([loaded], stack_settings)
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


def load_stack_data(
    data: Mapping[str, Any],
    *,
    name: str,
    file: Path,
    project_root: Path,
    label: str,
    jobs: Sequence[Document] = (),
    manifests: Sequence[Document] = (),
) -> Stack:
    """Load a stack from the data of a stack file made in memory, with more job documents and
    manifests than it names (``kubetrain convert``'s converted stack: the stack's settings and
    manifests, the converted jobs and runtimes as read from the files written), every rule of
    :func:`load_stack` applied; problems in ``data`` name ``label``."""
    problems = [Problem(label, None, p, m) for p, m in value_problems(dict(data))]
    if problems:
        raise InputError(problems)
    doc = Document(label, 0, dict(data))
    return _load_stack_document(doc, name, file, project_root, extra=(jobs, manifests))


def _kind_of(value: Any) -> str:
    """What ``value`` is, for a message that must not quote it (it may be a credential)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "a " + type(value).__name__


def document_keys(model: type[BaseModel], data: Any) -> Any:
    """``data`` with model attribute names (``tf_replica_specs``) renamed to the document keys
    (``tfReplicaSpecs``), following the model's nested models; keys already spelled as in the
    document and unknown keys are kept (validation reports the unknown ones). Embedded
    Kubernetes types are left alone: their keys are Kubernetes' own. A field holding one of
    several models (a Learner's data store: ``mount_cos`` or ``host_mount``) renames the keys
    of every one of them (``host_path`` -> ``hostPath``)."""
    return _document_keys((model,), data)


def _document_keys(models: tuple[type[BaseModel], ...], data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    fields: dict[str, tuple[str, Any]] = {}
    for model in models:
        for n, f in model.model_fields.items():
            fields.setdefault(n, (f.alias or n, f.annotation))
    by_key: dict[str, Any] = {}
    for alias, annotation in fields.values():
        by_key.setdefault(alias, annotation)
    out: dict[Any, Any] = {}
    for key, value in data.items():
        if key in by_key:
            target, annotation = key, by_key[key]
        elif key in fields and fields[key][0] not in data:
            target, annotation = fields[key]
        else:
            out[key] = value
            continue
        found = list(_models_in(annotation))
        if not found:
            out[target] = value
            continue
        inner = tuple(dict.fromkeys(model for model, _ in found))
        keyed = found[0][1]
        if not keyed:
            out[target] = _document_keys(inner, value)
        elif isinstance(value, dict):
            out[target] = {k: _document_keys(inner, v) for k, v in value.items()}
        elif isinstance(value, list):
            out[target] = [_document_keys(inner, v) for v in value]
        else:
            out[target] = value
    return out


def config_keys() -> dict[str, bool]:
    """Every ``kubetrain:*`` key a stack may set (without the prefix), and whether Pulumi passes
    its value to programs as plain text (``True``) rather than JSON."""
    return {
        (field.alias or name): _is_text(field.annotation)
        for name, field in StackSettings.model_fields.items()
    }


def _is_text(annotation: Any) -> bool:
    """Whether a settings field holds a string (``str``, string literals, optional or not)."""
    if annotation is str:
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:  # DNSLabel and the like: a constrained str
        return _is_text(typing.get_args(annotation)[0])
    if origin is Literal:
        return all(isinstance(arg, str) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(_is_text(a) for a in args)
    return False


def _decode_config_value(key: str, raw: str) -> Any:
    """A Pulumi config value as the stack file would hold it: strings stay strings, everything
    else is JSON (kept as text when it is not, so validation quotes what was given)."""
    if config_keys().get(key, False):
        return raw
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


def _lines_of_same_values(
    file: Path | None, config: Mapping[str, Any]
) -> dict[tuple[PathPart, ...], int]:
    """Line numbers from the stack file for the config keys whose value is written there as
    given (a value set elsewhere, e.g. in a Pulumi ESC environment, gets no line)."""
    if file is None or not file.is_file():
        return {}
    try:
        written = load_documents(file)
    except InputError:
        return {}
    if len(written) != 1 or not isinstance(written[0].data, dict):
        return {}
    in_file = written[0].data.get("config")
    if not isinstance(in_file, dict):
        return {}
    same = {key for key, value in config.items() if key in in_file and in_file[key] == value}
    return {
        path: line
        for path, line in written[0].lines.items()
        if len(path) >= 2 and path[0] == "config" and path[1] in same
    }


def _load_stack_document(
    doc: Document,
    name: str,
    path: Path,
    root: Path,
    *,
    jobs: bool = True,
    chunks: ChunkMapper = serial,
    patched: bool = True,
    extra: tuple[Sequence[Document], Sequence[Document]] = ((), ()),
    cluster: str | None = None,
    partial: bool = False,
) -> Stack:
    """Validate a stack document (a stack file, or the same shape built from Pulumi config),
    with the ``extra`` job documents and manifests besides those it names, for one of its
    clusters when ``cluster`` names one (:func:`load_stack`)."""
    problems: list[Problem] = []
    file_model = _validate(StackFile, doc, problems)
    if file_model is None:
        raise InputError(problems)
    if "config" not in doc.data:  # a stack with no config (yet): every default
        doc = dataclasses.replace(doc, data={**doc.data, "config": {}})
    ours, other_problems = _our_config(doc)
    problems += other_problems
    settings = _validate(StackSettings, doc.sub(("config",)), problems, data=ours, keymap=_prefixed)
    if settings is None:
        raise InputError(problems)
    target, at = _cluster_target(settings, cluster, doc)
    if target is not None and target.gpu_resource is not None:
        settings = settings.model_copy(update={"gpu_resource": target.gpu_resource})
    if not jobs:
        return Stack(name, path, root, settings, (), doc, cluster=target)
    read_before = len(problems)
    job_docs = list(
        _documents(
            doc,
            ("jobs", len(settings.jobs)),
            ("jobFiles", settings.job_files),
            root,
            problems,
            chunks,
        )
    )
    manifest_docs = list(
        _documents(
            doc,
            ("manifests", len(settings.manifests)),
            ("manifestFiles", settings.manifest_files),
            root,
            problems,
            chunks,
        )
    )
    job_docs += extra[0]
    manifest_docs += extra[1]
    sources = patch_sources(doc, settings.patches, root, problems) if patched else []
    if target is not None and target.patches and patched:
        sources += patch_sources(doc, target.patches, root, problems, at=at)
    if sources:
        patched_docs = apply_patches(
            job_docs + manifest_docs,
            sources,
            default_namespace=settings.namespace,
            version=settings.version,
            problems=problems,
            # A file that could not be read may hold a patch's target: "matches nothing" would
            # only follow from that error.
            complete=len(problems) == read_before,
        )
        job_docs, manifest_docs = patched_docs[: len(job_docs)], patched_docs[len(job_docs) :]
    loaded_jobs: list[LoadedJob] = []
    outcomes = chunks(
        lambda docs: [_job_outcome(d, settings) for d in docs],
        job_docs,
        per_process=JOBS_PER_PROCESS,
    )
    for job_doc, (job, mode, found) in zip(job_docs, outcomes, strict=True):
        problems += found
        if job is not None:
            loaded_jobs.append(LoadedJob(job, JobSource(job_doc), mode))
    problems += _duplicates(loaded_jobs)
    over_budget: list[Problem] = []
    if not problems:
        over_budget = _output_budget(loaded_jobs, settings)
        problems += over_budget
    crds = _crd_scopes(manifest_docs)
    manifests = [m for d in manifest_docs if (m := _load_manifest(d, settings, problems, crds))]
    problems += _duplicate_manifests(manifests)
    runtimes = _runtimes(doc, settings, manifests, root, problems)
    found, buildable = _trainjob_problems(loaded_jobs, runtimes, settings)
    problems += found
    # A partial load's stack is built for the problems its other jobs have; never one past
    # the output bounds (its output is what the bounds keep from memory).
    loaded_jobs = [] if over_budget else buildable
    problems += _queue_problems(loaded_jobs, manifests, settings)
    if problems and not partial:
        raise InputError(problems)
    return Stack(
        name,
        path,
        root,
        settings,
        tuple(loaded_jobs),
        doc,
        tuple(manifests),
        runtimes,
        target,
        tuple(problems),
    )


def _cluster_target(
    settings: StackSettings, cluster: str | None, doc: Document
) -> tuple[ClusterTarget | None, tuple[PathPart, ...]]:
    """The cluster of ``kubetrain:clusters`` a stack is loaded for, and the path of its
    patches in the stack file: the one named, else the only one (a stack that names one
    cluster always gets its overrides)."""
    names = [c.name for c in settings.clusters]
    if cluster is None and len(names) == 1:
        cluster = names[0]
    if cluster is None:
        return None, ()
    if cluster not in names:
        raise InputError.single(
            doc.file,
            f"no cluster {cluster!r} in kubetrain:clusters "
            f"(clusters: {', '.join(names) or 'none'})",
        )
    i = names.index(cluster)
    return settings.clusters[i], ("config", f"{CONFIG_NAMESPACE}:clusters", i, "patches")


# --- stack-level pieces ----------------------------------------------------------------------


def _prefixed(part: PathPart) -> PathPart:
    """Map a settings field path back to the stack file key (``namespace`` -> ``kubetrain:...``)."""
    return f"{CONFIG_NAMESPACE}:{part}"


def _our_config(doc: Document) -> tuple[dict[str, Any], list[Problem]]:
    """The ``kubetrain:*`` keys without their prefix; other namespaces are someone else's."""
    config = doc.data.get("config") or {}
    ours: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in config.items():
        namespace, colon, rest = str(key).partition(":")
        if not colon:
            problems.append(
                doc.problem(
                    ("config", key),
                    f"config keys are namespaced, e.g. '{CONFIG_NAMESPACE}:{key}' "
                    "(Pulumi stack file)",
                )
            )
        elif namespace == CONFIG_NAMESPACE:
            ours[rest] = value
    return ours, problems


def _documents(
    stack_doc: Document,
    inline: tuple[str, int],
    files: tuple[str, Sequence[str]],
    root: Path,
    problems: list[Problem],
    chunks: ChunkMapper = serial,
) -> Iterator[Document]:
    """The documents of an inline list key (``kubetrain:jobs``) and of the files its glob key
    (``kubetrain:jobFiles``) matches, each file once."""
    key, count = inline
    for i in range(count):
        # A list object (kind: List) is its items, as kubectl and kustomize read it.
        yield from _expanded(stack_doc.sub(("config", f"{CONFIG_NAMESPACE}:{key}", i)), problems)
    files_key, patterns = files
    seen: set[Path] = set()
    inside = root.resolve()
    for i, pattern in enumerate(patterns):
        where = ("config", f"{CONFIG_NAMESPACE}:{files_key}", i)
        if leaves_project(pattern):
            problems.append(
                stack_doc.problem(
                    where,
                    f"{pattern!r} reaches outside the project: patterns are relative to "
                    f"{display_path(root)}, without '..' parts",
                )
            )
            continue
        matches = sorted(glob.glob(pattern, root_dir=root, recursive=True))
        note_glob(root, pattern, matches)
        if not matches:
            problems.append(
                stack_doc.problem(
                    where,
                    f"{pattern!r} matches no file (patterns are relative to {display_path(root)})",
                )
            )
        for match in matches:
            try:
                file = (root / match).resolve(strict=True)
            except (OSError, RuntimeError):  # a dangling link or a loop: reading says which
                file = root / match
            if file in seen or os.path.isdir(file):
                continue
            seen.add(file)
            if not file.is_relative_to(inside):
                problems.append(
                    stack_doc.problem(
                        where,
                        f"{match!r} is a symbolic link to {file}, outside the project: the "
                        "files a stack reads must be inside it",
                    )
                )
                continue
            try:
                for found in load_documents(file, chunks=chunks):
                    yield from _expanded(found, problems)
            except InputError as exc:
                problems += exc.problems


def _expanded(doc: Document, problems: list[Problem]) -> Iterator[Document]:
    """A document, or the items of a list object (kind: List), as kubectl and kustomize read
    it; a list past the bound is a problem, never expanded."""
    if (message := list_problem(doc.data)) is not None:
        problems.append(doc.problem(("items",), message))
        return
    yield from expand_lists(doc)


def _job_outcome(
    doc: Document, settings: StackSettings
) -> tuple[JobDocument | None, Mode, list[Problem]]:
    """:func:`_load_job` as plain values (the validated document, its mode, the problems
    found), which a process can hand to another (see :mod:`kubetrain.parallel`)."""
    problems: list[Problem] = []
    loaded = _load_job(doc, settings, problems)
    if loaded is None:
        return None, "native", problems
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
    job = _validate(cls, doc, problems, secrets=[path for path, _ in found])
    if job is None or found:
        return None
    if job.metadata.namespace is None:
        meta = job.metadata.model_copy(update={"namespace": settings.namespace})
        job = job.model_copy(update={"metadata": meta})
    before = len(problems)
    for path, message in _embedded_problems(job, settings):
        problems.append(doc.problem(path, message))
    if len(problems) > before:
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
    mode = job.mode(settings)
    if mode not in ("native", "operator"):
        problems.append(
            doc.problem(
                ("metadata", "annotations", MODE_ANNOTATION),
                f"must be native or operator, got {mode!r}",
            )
        )
        return None
    source = JobSource(doc)
    return LoadedJob(job, source, mode)  # type: ignore[arg-type]


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


def _crd_scopes(docs: Iterable[Document]) -> dict[tuple[str, str], bool]:
    """(group, kind) -> namespaced, for every CRD among the stack's manifests."""
    out: dict[tuple[str, str], bool] = {}
    for doc in docs:
        data = doc.data
        if not isinstance(data, dict) or data.get("kind") != "CustomResourceDefinition":
            continue
        spec = data.get("spec")
        names = spec.get("names") if isinstance(spec, dict) else None
        if isinstance(names, dict) and isinstance(spec, dict):
            group, kind = spec.get("group"), names.get("kind")
            if isinstance(group, str) and isinstance(kind, str):
                out[(group, kind)] = spec.get("scope") != "Cluster"
    return out


def _load_manifest(
    doc: Document,
    settings: StackSettings,
    problems: list[Problem],
    crds: Mapping[tuple[str, str], bool] = {},
) -> LoadedManifest | None:
    """A plain Kubernetes object: a mapping with apiVersion, kind and metadata.name, no job
    kind, no secret material; a built-in kind is checked against its schema and what the API
    server checks beyond it here (other kinds by ``validate``, which knows their schema
    locations and CRDs), and a namespaced built-in kind
    without a namespace is put in ``kubetrain:namespace``."""
    data = doc.data
    if not isinstance(data, dict):
        problems.append(doc.problem((), "a manifest must be a mapping with apiVersion and kind"))
        return None
    before = len(problems)
    api_version, kind, meta = data.get("apiVersion"), data.get("kind"), data.get("metadata")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            problems.append(doc.problem((key,), "required field is missing"))
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        problems.append(doc.problem(("metadata", "name"), "required field is missing"))
    if len(problems) > before:
        return None
    assert isinstance(api_version, str) and isinstance(kind, str) and isinstance(meta, dict)
    if (api_version, kind) in job_kinds():
        problems.append(
            doc.problem(
                ("kind",),
                f"{kind} is a job kind: list it under {CONFIG_NAMESPACE}:jobs (or in a file of "
                f"{CONFIG_NAMESPACE}:jobFiles), where kubetrain expands it",
            )
        )
        return None
    if kind == "Secret" and api_version == "v1":
        for key in ("data", "stringData"):
            if data.get(key):
                problems.append(
                    doc.problem(
                        (key,),
                        "a Secret with data puts secret material in the repository: give "
                        f"credentials with {CONFIG_NAMESPACE}:credentials and "
                        f"{CONFIG_NAMESPACE}:secretStore, render an ExternalSecret, or create "
                        f"the Secret elsewhere and list it in {CONFIG_NAMESPACE}:external.secrets",
                    )
                )
    # The one credential rule of job documents holds here too (env values, annotations, labels,
    # command lines of pod templates), and a ConfigMap key named like a credential holds one.
    found = credential_problems(data)
    if kind == "ConfigMap" and api_version == "v1":
        found += configmap_credential_problems(data)
    found += external_secret_template_problems(data)
    problems += [doc.problem(path, message) for path, message in found]
    validator = k8s.builtin_validator(settings.version, api_version, kind)
    if validator is not None:
        defs = k8s.definitions(settings.version)["$defs"]
        for issue in k8s.schema_issues(validator, data, defs):
            problems.append(doc.problem(issue.path, issue.message))
    if len(problems) > before:
        return None
    obj = plain_copy(data)
    builtin = k8s.builtin_definition(settings.version, api_version, kind) is not None
    if builtin:
        in_namespace: bool | None = catalog.lookup((group_of(api_version), kind)).namespaced
    else:
        external = settings.external
        in_namespace = scopes.namespaced(
            api_version, kind, crds, external.namespaced_kinds, external.cluster_scoped_kinds
        )
    if not meta.get("namespace"):
        if in_namespace is None:
            problems.append(
                doc.problem(
                    ("metadata", "namespace"),
                    f"cannot tell whether {kind} ({api_version}) is namespaced: give "
                    "metadata.namespace, put its CRD among the stack's manifests, or list "
                    f"{scopes.kind_key(api_version, kind)} in {CONFIG_NAMESPACE}:external."
                    "namespacedKinds or clusterScopedKinds",
                )
            )
            return None
        if in_namespace:
            obj["metadata"]["namespace"] = settings.namespace
    # What the API server refuses beyond the schema, at the manifest's own lines.
    for api_issue in apiserver.object_issues(obj, settings.version):
        problems.append(doc.problem(api_issue.path, api_issue.message))
    if len(problems) > before:
        return None
    return LoadedManifest(obj, JobSource(doc))


def _runtimes(
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
        runtime = _validate(model_cls, manifest.source.document, problems, data=obj)
        if runtime is None:
            continue
        # The embedded Kubernetes types (metadata, the Job templates), then the trainer's
        # runtime webhook: each reads values of the types the one before it admitted.
        for path, message in _embedded_problems(runtime, settings):
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
        declared_spec = _validate(TrainingRuntimeSpec, spec_doc, problems)
        if declared_spec is None:
            continue
        spec = declared_spec
        before = len(problems)
        for path, message in _embedded_problems(spec, settings):
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
        spec = _validate(TrainingRuntimeSpec, doc.sub(("spec",)), problems)
        if spec is not None:
            for path, message in _embedded_problems(spec, settings):
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
        for path, message in _embedded_value(meta.data, ObjectMeta, None, (), settings):
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


def _trainjob_problems(
    jobs: Sequence[LoadedJob], runtimes: Mapping[RuntimeKey, Runtime], settings: StackSettings
) -> tuple[list[Problem], list[LoadedJob]]:
    """Each TrainJob's runtime exists, and the trainer's webhooks admit the job on it; and the
    jobs without such a problem (a partial load builds only those: a job refused here, its
    hostfile past what Kubernetes stores, must never reach a builder)."""
    problems: list[Problem] = []
    kept: list[LoadedJob] = []
    for loaded in jobs:
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
        if loaded.mode == "native":
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
        f"the MPI hostfile of this TrainJob would list {lines:,} pods, about {_mib(size)} in one "
        f"ConfigMap; Kubernetes stores objects of at most {_mib(MAX_OBJECT_BYTES)} (etcd's "
        "request limit), so it could never be created: use fewer nodes or node replicas"
    )


QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"


def _queue_problems(
    jobs: Sequence[LoadedJob], manifests: Sequence[LoadedManifest], settings: StackSettings
) -> list[Problem]:
    """A job naming a Kueue queue names one the stack delivers (a LocalQueue among its
    manifests) or declares (``kubetrain:external.localQueues``): Kueue never admits a job
    whose LocalQueue does not exist, so it would wait for ever."""
    queues = {
        (str(m.obj["metadata"].get("namespace") or ""), str(m.obj["metadata"]["name"]))
        for m in manifests
        if m.obj.get("kind") == "LocalQueue"
        and str(m.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    }
    for entry in settings.external.local_queues:
        namespace, _, name = entry.rpartition("/")
        queues.add((namespace or settings.namespace, name))
    # Kueue's jobframework (v0.19.2 ExtractPriority): a job naming a WorkloadPriorityClass gets
    # its Workload only once GetPriorityFromWorkloadPriorityClass finds it; until then
    # prepareWorkload fails and no Workload exists, so the job is never admitted.
    priorities = {
        str(m.obj["metadata"]["name"])
        for m in manifests
        if m.obj.get("kind") == "WorkloadPriorityClass"
        and str(m.obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/")
    } | set(settings.external.workload_priority_classes)
    problems = []
    for loaded in jobs:
        job = loaded.document
        priority = job.metadata.labels.get(PRIORITY_CLASS_LABEL)
        if priority is not None and priority not in priorities:
            problems.append(
                loaded.source.problem(
                    ("metadata", "labels", PRIORITY_CLASS_LABEL),
                    f"WorkloadPriorityClass {priority} is neither among the stack's manifests "
                    f"nor declared in {CONFIG_NAMESPACE}:external.workloadPriorityClasses: Kueue "
                    "creates no Workload for the job until it exists, so the job would wait for "
                    "ever (add the WorkloadPriorityClass, or declare it)",
                )
            )
        queue = job.metadata.labels.get(QUEUE_LABEL)
        if queue is None or (job.namespace, queue) in queues:
            continue
        problems.append(
            loaded.source.problem(
                ("metadata", "labels", QUEUE_LABEL),
                f"LocalQueue {job.namespace}/{queue} is neither among the stack's manifests nor "
                f"declared in {CONFIG_NAMESPACE}:external.localQueues: Kueue would hold the job "
                "for ever (add the LocalQueue, or declare it)",
            )
        )
    problems += _quota_problems(manifests)
    return problems


#: The quantities of a ClusterQueue's resource groups (``spec.resourceGroups[].flavors[]
#: .resources[]``) that Kueue counts.
_QUOTA_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _quota_problems(manifests: Sequence[LoadedManifest]) -> list[Problem]:
    """Every quota of a ClusterQueue is a quantity within kubetrain's bound (docs/limits.md):
    Kueue counts quota in int64 milli-units, so ``1e5000`` is no quota it can give, and
    ``kubetrain plan`` would count it as none."""
    problems = []
    for m in manifests:
        if m.obj.get("kind") != "ClusterQueue" or not str(m.obj.get("apiVersion", "")).startswith(
            "kueue.x-k8s.io/"
        ):
            continue
        spec = m.obj.get("spec")
        groups = spec.get("resourceGroups") if isinstance(spec, dict) else None
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            flavors = group.get("flavors") if isinstance(group, dict) else None
            for f, flavor in enumerate(flavors if isinstance(flavors, list) else []):
                resources = flavor.get("resources") if isinstance(flavor, dict) else None
                for r, resource in enumerate(resources if isinstance(resources, list) else []):
                    for key in _QUOTA_FIELDS:
                        value = resource.get(key) if isinstance(resource, dict) else None
                        if value is None or isinstance(value, bool):
                            continue
                        try:
                            parse_quantity(value)
                        except ValueError as exc:
                            path = ("spec", "resourceGroups", g, "flavors", f, "resources", r, key)
                            problems.append(m.source.problem(path, str(exc)))
    return problems


def _duplicate_manifests(manifests: Iterable[LoadedManifest]) -> list[Problem]:
    first: dict[tuple[str, str, str, str], LoadedManifest] = {}
    problems = []
    for m in manifests:
        meta = m.obj["metadata"]
        key = (
            m.obj["apiVersion"].rpartition("/")[0],
            m.obj["kind"],
            meta.get("namespace", ""),
            meta["name"],
        )
        if key in first:
            problems.append(
                m.source.problem(
                    ("metadata", "name"), f"{m.title} is already defined at {first[key].source}"
                )
            )
        else:
            first[key] = m
    return problems


def _duplicates(jobs: Iterable[LoadedJob]) -> list[Problem]:
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


def _output_budget(jobs: Sequence[LoadedJob], settings: StackSettings) -> list[Problem]:
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
                    f"one object of this job would be about {_mib(estimate.largest)}; Kubernetes "
                    f"stores objects of at most {_mib(MAX_OBJECT_BYTES)} (etcd's request limit), "
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
                f"the stack would render {objects:,} objects{clusters}, about {_mib(size)}; "
                f"kubetrain renders at most {MAX_OBJECTS:,} objects and "
                f"{_mib(MAX_OUTPUT_BYTES)} per stack (docs/limits.md); the largest part is "
                f"this {job.document.KIND}: "
                f"{estimate.objects:,} objects, about {_mib(estimate.bytes)}",
            )
        )
    return problems


def _mib(size: int) -> str:
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


# --- pydantic and schema errors -> problems --------------------------------------------------

M = typing.TypeVar("M", bound=BaseModel)


def _validate(
    cls: type[M],
    doc: Document,
    problems: list[Problem],
    *,
    data: Any = None,
    keymap: typing.Callable[[PathPart], PathPart] | None = None,
    secrets: Sequence[tuple[PathPart, ...]] = (),
) -> M | None:
    """``cls`` validated from ``doc``; its errors go to ``problems``. A message never quotes a
    value that may be secret: one at a sensitive path, or holding one of ``secrets`` (paths of
    credential material found in the document)."""
    value = doc.data if data is None else data
    try:
        return cls.model_validate(value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        # A map key refused (a replica type that is none): what its value lacks or has too much
        # only follows from that, so it is not reported.
        bad_keys = [e["loc"][:-1] for e in errors if e["loc"][-1:] == ("[key]",)]
        for error in errors:
            raw = error["loc"]
            if any(raw[: len(k)] == k and raw != (*k, "[key]") for k in bad_keys):
                continue
            hint = _misplaced_key(cls, raw[:-1]) if raw[-1:] == ("[key]",) else ""
            loc = _real_path(value, error["loc"])
            secret = k8s.sensitive_path(doc.base + loc) or any(
                p[: len(loc)] == loc for p in secrets
            )
            if keymap is not None and loc:
                loc = (keymap(loc[0]), *loc[1:])
            problems.append(doc.problem(loc, _message(cls, error, quote=not secret) + hint))
        return None


def _misplaced_key(root: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """For a refused map key that is a field of the map's values (``template`` dedented to the
    level of the replica types): the hint that the indentation is the slip."""
    key = loc[-1] if loc else None
    values = _model_at(root, loc)
    if isinstance(key, str) and values is not None and key in _aliases(values):
        holder = _dotted([str(x) for x in loc[:-1]])
        return f"; {key!r} is a field of each entry of {holder}, not an entry: indent it under one"
    return ""


def _real_path(data: Any, loc: Sequence[Any]) -> tuple[PathPart, ...]:
    """pydantic's ``loc`` without the entries that name validators or union members."""
    path: list[PathPart] = []
    current = data
    for i, part in enumerate(loc):
        if isinstance(current, dict) and part not in current and isinstance(part, str):
            # A key the model normalised (replica types); Document.problem restores its spelling.
            part = next(
                (k for k in current if isinstance(k, str) and k.lower() == part.lower()), part
            )
        indexable = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if (isinstance(current, dict) and part in current) or indexable:
            current = current[part]
        elif part == "[key]":
            continue  # pydantic's marker for "the key itself", already in the path
        elif isinstance(current, dict) and i == len(loc) - 1 and isinstance(part, str):
            pass  # a missing or unknown key: keep it, it is the subject of the message
        else:
            continue
        path.append(part)
    return tuple(path)


def _message(root: type[BaseModel], error: Any, *, quote: bool = True) -> str:
    """pydantic's error as kubetrain's message; with ``quote=False`` (a value that may be secret
    material, see :func:`~kubetrain.kube.schemas.sensitive_path`) the value received is never
    shown."""
    kind, msg, value = error["type"], error["msg"], error.get("input")
    if not quote and kind not in ("missing", "extra_forbidden", "value_error"):
        return f"{msg}, got {k8s.value_shape(value)} (not shown)"
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        key = error["loc"][-1]
        if isinstance(key, str) and looks_like_credential(key):
            return credential_value_message()
        return _unknown_field(root, tuple(error["loc"][:-1]), key)
    if kind == "value_error":
        message = str(msg).removeprefix("Value error, ")
        # kubetrain's own checks end with ", got <value>" when they quote one.
        return message if quote else message.rpartition(", got ")[0] or message
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        op = {
            "greater_than_equal": ">=",
            "less_than_equal": "<=",
            "greater_than": ">",
            "less_than": "<",
        }
        bound = next(iter(error["ctx"].values()))
        return f"must be {op[kind]} {bound}, got {_quoted(value)}"
    if isinstance(value, str | int | float | bool) or value is None:
        return f"{msg}, got {_quoted(value)}"
    return f"{msg}, got {k8s.value_shape(value)}"


def _quoted(value: Any) -> str:
    """A value as messages show it: as YAML wrote it, ``true``, ``null``, ``'text'``, ``NaN``."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, float) and value != value:
        return "NaN"
    return repr(value)


def _unknown_field(root: type[BaseModel], parent: tuple[Any, ...], key: Any) -> str:
    here = _model_at(root, parent)
    message = f"unknown field {key!r}"
    if here is not None:
        allowed = sorted(_aliases(here))
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.75)
        if close:
            message += f"; did you mean {close[0]!r}?"
        belongs = [p for p in _where_defined(root, str(key)) if p != tuple(str(x) for x in parent)]
        above = [p for p in belongs if _is_above(p, parent)]
        if above and not close:
            # An indentation slip: the key is written under a sibling of where it belongs.
            p = max(above, key=len)
            where = _dotted((*p, str(key))) if p else "the top level of the document"
            under = _dotted([f"[{x}]" if isinstance(x, int) else str(x) for x in parent])
            message += f"; it belongs at {where}, not under {under}: check its indentation"
        elif belongs and not close:
            where = " or ".join(_dotted((*p, str(key))) for p in belongs[:3])
            message += f"; it belongs at {where}"
        if not close and not belongs:
            message += f"; allowed here: {', '.join(allowed)}"
    return message


def _is_above(path: tuple[str, ...], parent: tuple[Any, ...]) -> bool:
    """Whether ``path`` (with ``<key>`` / ``[*]`` placeholders) is a proper ancestor of the
    concrete ``parent`` path."""
    return len(path) < len(parent) and all(
        part in ("<key>", "[*]") or part == str(given)
        for part, given in zip(path, parent, strict=False)
    )


def _aliases(cls: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or n): f.annotation for n, f in cls.model_fields.items()}


def _models_in(annotation: Any) -> Iterator[tuple[type[BaseModel], str]]:
    """Models reachable from a type annotation, and the key or index that precedes them, as a
    placeholder for messages (``<key>``, ``[*]``; empty when there is none)."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, ""
    elif origin in (list, tuple, dict):
        for arg in typing.get_args(annotation)[-1:]:
            for model, _ in _models_in(arg):
                yield model, "<key>" if origin is dict else "[*]"
    elif origin in (typing.Union, types.UnionType, typing.Annotated):
        for arg in typing.get_args(annotation):
            yield from _models_in(arg)


def _model_at(root: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    current: type[BaseModel] = root
    parts = list(path)
    while parts:
        part = parts.pop(0)
        annotation = _aliases(current).get(part)
        if annotation is None:
            return None
        found = next(iter(_models_in(annotation)), None)
        if found is None:
            return None
        current, keyed = found
        if keyed and parts:
            parts.pop(0)
    return current


def _dotted(path: Sequence[str]) -> str:
    """``("spec", "replicaSpecs", "[*]", "tfPort")`` -> ``spec.replicaSpecs[*].tfPort``."""
    return "".join(p if p.startswith("[") or not i else f".{p}" for i, p in enumerate(path))


def _where_defined(root: type[BaseModel], key: str) -> list[tuple[str, ...]]:
    """Field paths of ``root`` (without map keys or indexes) that define the field ``key``."""
    out: list[tuple[str, ...]] = []
    seen: set[type[BaseModel]] = set()

    def walk(cls: type[BaseModel], path: tuple[str, ...]) -> None:
        if cls in seen:
            return
        seen.add(cls)
        fields = _aliases(cls)
        if key in fields:
            out.append(path)
        for alias, annotation in fields.items():
            for model, keyed in _models_in(annotation):
                walk(model, (*path, alias, keyed) if keyed else (*path, alias))

    walk(root, ())
    return out


def _embedded_problems(
    model: BaseModel, settings: StackSettings
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """Problems of every :class:`K8sType` field against the stack's Kubernetes version: its
    schema, then what the API server would refuse once the field is built into an object."""
    for name, alias, marker, annotation in _embedded_fields(type(model)):
        value = getattr(model, name)
        if value is not None:
            yield from _embedded_value(value, annotation, marker, (alias,), settings)


@functools.cache
def _embedded_fields(cls: type[BaseModel]) -> tuple[tuple[str, str, K8sType | None, Any], ...]:
    """(attribute, key, marker, annotation) of the fields of ``cls`` that may hold an embedded
    Kubernetes type, at any depth (the others, scalars mostly, are not walked)."""
    out = []
    for name, info in cls.model_fields.items():
        marker = next((m for m in info.metadata if isinstance(m, K8sType)), None)
        if marker is not None or _may_embed(info.annotation, set()):
            out.append((name, info.alias or name, marker, info.annotation))
    return tuple(out)


def _may_embed(annotation: Any, seen: set[Any]) -> bool:
    """Whether a value of ``annotation`` may hold a :class:`K8sType` field."""
    if typing.get_origin(annotation) is typing.Annotated and any(
        isinstance(m, K8sType) for m in typing.get_args(annotation)[1:]
    ):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(
            any(isinstance(m, K8sType) for m in info.metadata) or _may_embed(info.annotation, seen)
            for info in annotation.model_fields.values()
        )
    return any(_may_embed(arg, seen) for arg in typing.get_args(annotation))


#: The findings of embedded Kubernetes values already checked, by what decides them (the
#: stack's version and GPU resource, the definition, where the value is and the value itself):
#: the job documents of a stack repeat the same pod templates hundreds of times.
_EMBEDDED: dict[tuple[Any, ...], tuple[tuple[tuple[PathPart, ...], str], ...]] = {}
_EMBEDDED_SIZE = 4096


def _embedded_found(
    value: Any, definition: str, path: tuple[PathPart, ...], settings: StackSettings
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    """The schema's findings of an embedded Kubernetes value, then (only of a value the
    schema accepts: the checks read values of their types) what the API server checks beyond
    it, of the value as it is built into an object; remembered by the value's JSON."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):  # not plain data: checked, never remembered
        text = None
    key = (settings.version, settings.gpu_resource, definition, path, text)
    found = _EMBEDDED.get(key) if text is not None else None
    if found is None:
        version = settings.version
        validator = k8s.embedded_validator(version, definition)
        defs = k8s.definitions(version)["$defs"]
        schema = [
            (issue.path, _placed(definition, defs, issue.path, issue.message, path))
            for issue in k8s.schema_issues(validator, value, defs, base=path)
        ]
        found = tuple(
            schema
            or [
                (issue.path, issue.message)
                for issue in apiserver.embedded_issues(
                    definition, as_built(definition, value, settings.gpu_resource), version
                )
            ]
        )
        if text is not None:
            if len(_EMBEDDED) >= _EMBEDDED_SIZE:
                _EMBEDDED.clear()
            _EMBEDDED[key] = found
    for sub_path, message in found:
        yield (*path, *sub_path), message


def _placed(
    definition: str,
    defs: Mapping[str, Any],
    path: tuple[PathPart, ...],
    message: str,
    base: tuple[PathPart, ...] = (),
) -> str:
    """An unknown field of an embedded Kubernetes type, with where it belongs when an enclosing
    object of the type has it (``volumeMounts`` indented under ``resources`` belongs to the
    container): an indentation slip, not a misspelling."""
    if not message.startswith("unknown field ") or "did you mean" in message or not path:
        return message
    key = path[-1]
    if not isinstance(key, str):
        return message
    from .fields import FieldNode  # the walker over Kubernetes' definitions

    root = FieldNode({"$ref": f"#/$defs/{definition}"}, defs)
    for depth in range(len(path) - 2, -1, -1):
        above = root.at(path[:depth])
        if above is not None and key in (above.schema.get("properties") or {}):
            where = format_path((*base, *path[:depth]))
            under = format_path((*base, *path[:-1]))
            return f"{message}; it belongs under {where}, not under {under}: check its indentation"
    return message


def _embedded_value(
    value: Any,
    annotation: Any,
    marker: K8sType | None,
    path: tuple[PathPart, ...],
    settings: StackSettings,
) -> Iterator[tuple[tuple[PathPart, ...], str]]:
    if value is None:
        return
    if marker is None and typing.get_origin(annotation) is typing.Annotated:
        marker = next((m for m in typing.get_args(annotation)[1:] if isinstance(m, K8sType)), None)
    if marker is not None:
        yield from _embedded_found(value, marker.definition, path, settings)
    elif isinstance(value, BaseModel):
        for sub_path, message in _embedded_problems(value, settings):
            yield (*path, *sub_path), message
    elif isinstance(value, dict | list):
        args = typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            args = tuple(a for a in args if a is not type(None))
            inner = args[0] if len(args) == 1 else None
            yield from _embedded_value(value, inner, None, path, settings)
            return
        item_type = args[-1] if args else None
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            yield from _embedded_value(item, item_type, None, (*path, key), settings)
