"""Which builder expands which job kind, and the expansion of a whole stack."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..kube.stored import stored_form
from ..models.base import JobDocument
from ..models.errors import InputError, Problem
from ..models.kinds import attach_builder, declaration
from ..models.load import LoadedJob, Stack
from .context import BuildContext, Target
from .lifecycle import await_annotations, lifecycle_annotations
from .meta import canonical, is_shared
from .namespaces import namespace_manifest, namespaces_created
from .order import sort_key

__all__ = ["BuildProblem", "Builder", "Built", "build_job", "build_stack", "builder"]

Manifest = dict[str, Any]
#: A builder: (normalised job document, mode, context) -> manifests.
Builder = Callable[[Any, str, BuildContext], list[Manifest]]
F = TypeVar("F", bound=Builder)


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


@dataclass(frozen=True)
class Built:
    """One manifest and the job it came from (``None`` for an object of the stack: one that jobs
    may share, see :func:`kubetrain.builders.meta.is_shared`, or the stack makes itself).
    ``builders`` are the jobs that built it (for a shared object, all of them)."""

    obj: Manifest
    job: LoadedJob | None
    builders: tuple[LoadedJob, ...] = ()

    @property
    def source(self) -> str:
        return self.job.title if self.job else "shared by the stack's jobs"


def finish(obj: Manifest, ctx: BuildContext) -> Manifest:
    """The last steps every manifest goes through: the delivery engines' annotations (see
    :mod:`.lifecycle`), canonical key order, and the form the API server stores (see
    :mod:`kubetrain.kube.stored`)."""
    return stored_form(canonical(await_annotations(lifecycle_annotations(obj), ctx.settings)))


def build_job(loaded: LoadedJob, ctx: BuildContext) -> list[Manifest]:
    """Canonical manifests of one loaded job."""
    job = loaded.job
    fn = declaration(type(job)).builder
    if fn is None:
        raise RuntimeError(f"no builder registered for {type(job).__name__}")
    try:
        built = fn(job, loaded.mode, ctx)
    except BuildProblem as exc:
        raise InputError(
            [loaded.source.problem(exc.path, f"{loaded.title} {exc.message}")]
        ) from None
    return [finish(obj, ctx) for obj in built]


def identity(obj: Manifest) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return (
        obj["apiVersion"].rpartition("/")[0],
        obj["kind"],
        meta.get("namespace", ""),
        meta["name"],
    )


def build_stack(stack: Stack, target: Target = "render") -> list[Built]:
    """Every manifest of ``stack``, in install order.

    An object jobs may share (:func:`~kubetrain.builders.meta.is_shared`), or that several jobs
    build identically, is kept once, as the stack's; two different objects with one identity
    are an input error naming both jobs. CRDs the stack declares external are left out, and the
    Namespaces it creates are added (:mod:`.namespaces`).
    """
    ctx = BuildContext(stack.settings, target)
    external_crds = set(stack.settings.external.custom_resource_definitions)
    seen: dict[tuple[str, str, str, str], Built] = {}
    problems: list[Problem] = []
    for loaded in stack.jobs:
        try:
            objs = build_job(loaded, ctx)
        except InputError as exc:
            problems += exc.problems
            continue
        for obj in objs:
            key = identity(obj)
            if key[1] == "CustomResourceDefinition" and key[3] in external_crds:
                continue
            first = seen.get(key)
            if first is None:
                seen[key] = Built(obj, None if is_shared(obj) else loaded, (loaded,))
            elif first.obj == obj:
                seen[key] = Built(obj, None, (*first.builders, loaded))
            else:
                where = f"{key[2]}/{key[3]}" if key[2] else key[3]
                problems.append(
                    Problem(
                        loaded.source.file,
                        loaded.source.line,
                        (*loaded.source.path, "metadata", "name"),
                        f"{loaded.title} creates {key[1]} {where}, "
                        f"which {first.source if first.job else first.builders[0].title} "
                        "also creates differently",
                    )
                )
    if problems:
        raise InputError(problems)
    for name in namespaces_created((b.obj for b in seen.values()), stack.settings):
        obj = finish(namespace_manifest(name, stack.settings), ctx)
        seen[identity(obj)] = Built(obj, None)
    return sorted(seen.values(), key=lambda b: sort_key(b.obj))
