"""Which builder expands which job kind, and the expansion of a whole stack."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..kube.stored import canonical_stored_form
from ..models.base import JobDocument, Mode
from ..models.errors import InputError, PathPart, Problem
from ..models.kinds import attach_builder, declaration
from ..models.load import JobSource, LoadedJob, LoadedManifest, Stack
from ..parallel import ChunkMapper, serial
from .clusters import with_node_selector
from .context import BuildContext, Target
from .gang import priority_classes
from .kueue import leave_suspend_to_kueue
from .lifecycle import await_annotations, lifecycle_annotations
from .meta import is_shared, plain_copy
from .multikueue import dispatch, multikueue_objects
from .namespaces import namespace_manifest, namespaces_created
from .order import sort_key

__all__ = [
    "MANIFEST_SOURCE",
    "BuildProblem",
    "Builder",
    "Built",
    "build_job",
    "build_stack",
    "builder",
    "document_path",
    "locator",
]

Manifest = dict[str, Any]
#: A builder: (normalised job document, mode, context) -> manifests.
Builder = Callable[[Any, Mode, BuildContext], list[Manifest]]
F = TypeVar("F", bound=Builder)
L = TypeVar("L", bound=Callable[..., Any])


class BuildProblem(InputError):
    """A builder cannot expand a job under the stack's settings (e.g. render mode needs a secret
    store the stack does not name). ``path`` is relative to the job document; :func:`build_job`
    locates the problem at the job's file and line and names the job."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        self.path = tuple(path)
        self.message = message
        super().__init__([Problem("(job document)", None, self.path, message)])


def builder(kind: type[JobDocument]) -> Callable[[F], F]:
    """Attach the builder of a (normalised) job kind to its declaration
    (:mod:`kubetrain.models.kinds`); a kind has one builder."""

    def register(fn: F) -> F:
        attach_builder(kind, fn)
        return fn

    return register


#: What the header of a file rendered from ``kubetrain:manifests`` says it came from.
MANIFEST_SOURCE = "manifest"


@dataclass(frozen=True)
class Built:
    """One manifest and the job it came from (``None`` for an object of the stack: one that jobs
    may share, see :func:`kubetrain.builders.meta.is_shared`, or the stack makes itself), or the
    plain manifest of the stack it is. ``builders`` are the jobs that built it (for a shared
    object, all of them)."""

    obj: Manifest
    job: LoadedJob | None
    manifest: LoadedManifest | None = None
    builders: tuple[LoadedJob, ...] = ()

    @property
    def source(self) -> str:
        if self.manifest is not None:
            return MANIFEST_SOURCE
        return self.job.title if self.job else "shared by the stack's jobs"

    @property
    def origin(self) -> JobSource | None:
        """Where the object was written: its job document, or the manifest itself."""
        if self.manifest is not None:
            return self.manifest.source
        return self.job.source if self.job is not None else None


def finish(obj: Manifest, ctx: BuildContext) -> Manifest:
    """The last steps every manifest goes through: the delivery engines' annotations (see
    :mod:`.lifecycle`), canonical key order, and the form the API server stores (see
    :mod:`kubetrain.kube.stored`)."""
    settings = ctx.settings
    return canonical_stored_form(await_annotations(lifecycle_annotations(obj, settings), settings))


def build_job(
    loaded: LoadedJob, ctx: BuildContext, warnings: list[Problem] | None = None
) -> list[Manifest]:
    """Canonical manifests of one loaded job. What the builder rewrote or did not use is added
    to ``warnings``, located at the job document's field."""
    job = loaded.job
    fn = declaration(type(job)).builder
    if fn is None:
        raise RuntimeError(f"no builder registered for {type(job).__name__}")
    start = len(ctx.warnings)
    try:
        built = fn(job, loaded.mode, ctx)
    except BuildProblem as exc:
        raise InputError(
            [loaded.source.problem(exc.path, f"{loaded.title} {exc.message}")]
        ) from None
    finally:
        reported = ctx.warnings[start:]
        del ctx.warnings[start:]
    if warnings is not None:
        for path, message in reported:
            problem = loaded.source.problem(path, f"{loaded.title}: {message}")
            warnings.append(dataclasses.replace(problem, severity="warning"))
    return [
        finish(leave_suspend_to_kueue(with_node_selector(obj, ctx.node_selector)), ctx)
        for obj in built
    ]


#: (path of a pod spec in a built object, path of the pod spec in the job document it came from)
Origins = list[tuple[tuple[PathPart, ...], tuple[PathPart, ...]]]
_LOCATORS: dict[type[JobDocument], Callable[[Any, Manifest], Origins]] = {}


def locator(kind: type[JobDocument]) -> Callable[[L], L]:
    """Register how the objects a kind builds map back to its document (for every subclass of
    ``kind`` that registers none of its own): where each pod spec of an object came from."""

    def register(fn: L) -> L:
        _LOCATORS[kind] = fn
        return fn

    return register


def document_path(
    job: JobDocument, obj: Manifest, path: Sequence[PathPart]
) -> tuple[PathPart, ...] | None:
    """The field of ``job``'s document that ``path`` of ``obj`` (an object its builder made)
    came from, where the object copies it from a pod template the document wrote; ``None``
    when nothing maps it (a field kubetrain wrote itself, an object with no pod)."""
    fn = next((_LOCATORS[c] for c in type(job).__mro__ if c in _LOCATORS), None)
    if fn is None:
        return None
    best: tuple[tuple[PathPart, ...], tuple[PathPart, ...]] | None = None
    for prefix, doc_prefix in fn(job, obj):
        if tuple(path[: len(prefix)]) == prefix and (best is None or len(prefix) > len(best[0])):
            best = (prefix, doc_prefix)
    if best is None:
        return None
    return (*best[1], *path[len(best[0]) :])


def _multikueue(
    seen: dict[tuple[str, str, str, str], Built], stack: Stack, ctx: BuildContext
) -> list[Problem]:
    """MultiKueue's objects added to the stack's, its ClusterQueues checked by it and their jobs
    managed by it (:mod:`.multikueue`)."""
    settings = stack.settings.multi_kueue
    assert settings is not None
    keys = list(seen)
    objects, problems = dispatch([seen[k].obj for k in keys], settings, stack.problem)
    for key, obj in zip(keys, objects, strict=True):
        if obj is not seen[key].obj:
            seen[key] = dataclasses.replace(seen[key], obj=finish(obj, ctx))
    for obj in multikueue_objects(settings):
        seen[identity(obj)] = Built(finish(obj, ctx), None)
    return problems


def identity(obj: Manifest) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (
        obj["apiVersion"].rpartition("/")[0],
        obj["kind"],
        meta.get("namespace", ""),
        meta["name"],
    )


#: Jobs worth a process of their own when the stack is built on several cores (a job of a
#: dozen objects takes about half a millisecond).
JOBS_PER_PROCESS = 100
#: What building one job gave: its manifests, its warnings, and the problems that stopped it.
_JobOutput = tuple[list[Manifest], list[Problem], list[Problem]]


def _build_jobs(jobs: Sequence[LoadedJob], ctx: BuildContext, warn: bool) -> list[_JobOutput]:
    out: list[_JobOutput] = []
    for loaded in jobs:
        found: list[Problem] = []
        try:
            out.append((build_job(loaded, ctx, found if warn else None), found, []))
        except InputError as exc:
            out.append(([], found, exc.problems))
    return out


def build_stack(
    stack: Stack,
    target: Target = Target.RENDER,
    *,
    warnings: list[Problem] | None = None,
    progress: Callable[[int], None] | None = None,
    chunks: ChunkMapper = serial,
) -> list[Built]:
    """Every manifest of ``stack`` (its jobs' and its plain manifests), in install order.

    An object jobs may share (:func:`~kubetrain.builders.meta.is_shared`), or that several jobs
    build identically, is kept once, as the stack's; two different objects with one identity
    are an input error naming both jobs (or the job and the manifest). CRDs the stack declares
    external are left out, and the Namespaces it creates are added (:mod:`.namespaces`; a
    Namespace among its manifests wins). ``warnings`` receives the builders' warnings;
    ``progress(n)`` is called as ``n`` more jobs are built. The jobs are built independently of
    each other, by ``chunks`` (:mod:`kubetrain.parallel`: on several cores when it forks); what
    they built is then put together here, in the jobs' order.
    """
    ctx = BuildContext(
        stack.settings,
        target,
        runtimes=stack.runtimes,
        node_selector=stack.cluster.node_selector if stack.cluster is not None else {},
        priorities=priority_classes(m.obj for m in stack.manifests),
    )
    external_crds = set(stack.settings.external.custom_resource_definitions)
    seen: dict[tuple[str, str, str, str], Built] = {}
    problems: list[Problem] = []
    for manifest in stack.manifests:
        obj = finish(plain_copy(manifest.obj), ctx)
        seen[identity(obj)] = Built(obj, None, manifest)
    warn = warnings is not None
    outputs = chunks(
        lambda jobs: _build_jobs(jobs, ctx, warn),
        stack.jobs,
        progress,
        per_process=JOBS_PER_PROCESS,
    )
    for loaded, (objs, found, stopped) in zip(stack.jobs, outputs, strict=True):
        if warnings is not None:
            warnings += found
        if stopped:
            problems += stopped
            continue
        for obj in objs:
            key = identity(obj)
            if key[1] == "CustomResourceDefinition" and key[3] in external_crds:
                continue
            first = seen.get(key)
            if first is None:
                shared = is_shared(obj)
                seen[key] = Built(obj, None if shared else loaded, builders=(loaded,))
            elif first.obj == obj:
                if first.manifest is None:  # identical to a declared manifest: that one stays
                    seen[key] = Built(obj, None, builders=(*first.builders, loaded))
            else:
                where = f"{key[2]}/{key[3]}" if key[2] else key[3]
                first_job = first.job or (first.builders[0] if first.builders else None)
                other = (
                    f"kubetrain:manifests also declares at {first.manifest.source}"
                    if first.manifest is not None
                    else f"{first_job.title if first_job else first.source} also creates "
                    "differently"
                )
                problems.append(
                    Problem(
                        loaded.source.file,
                        loaded.source.line,
                        (*loaded.source.path, "metadata", "name"),
                        f"{loaded.title} creates {key[1]} {where}, which {other}",
                    )
                )
    if stack.settings.multi_kueue is not None:
        problems += _multikueue(seen, stack, ctx)
    if problems:
        raise InputError(problems)
    for name in namespaces_created((b.obj for b in seen.values()), stack.settings):
        obj = finish(namespace_manifest(name, stack.settings), ctx)
        seen[identity(obj)] = Built(obj, None)
    return sorted(seen.values(), key=lambda b: sort_key(b.obj))
