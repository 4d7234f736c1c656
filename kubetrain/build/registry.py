"""Which builder expands which job kind, and the expansion of a whole stack."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..spec.base import JobDocument
from ..spec.errors import InputError, Problem
from ..spec.load import LoadedJob, Stack
from .context import BuildContext, Target
from .meta import canonical
from .order import sort_key

__all__ = ["Builder", "Built", "build_job", "build_stack", "builder"]

Manifest = dict[str, Any]
#: A builder: (normalised job document, mode, context) -> manifests.
Builder = Callable[[Any, str, BuildContext], list[Manifest]]
_BUILDERS: dict[type[JobDocument], Builder] = {}
F = TypeVar("F", bound=Builder)


def builder(kind: type[JobDocument]) -> Callable[[F], F]:
    """Register the builder of a (normalised) job kind."""

    def register(fn: F) -> F:
        _BUILDERS[kind] = fn
        return fn

    return register


@dataclass(frozen=True)
class Built:
    """One manifest and the job it came from (``None`` for objects shared by several jobs)."""

    obj: Manifest
    job: LoadedJob | None

    @property
    def source(self) -> str:
        return self.job.title if self.job else "shared by the stack's jobs"


def build_job(loaded: LoadedJob, ctx: BuildContext) -> list[Manifest]:
    """Canonical manifests of one loaded job."""
    job = loaded.job
    fn = _BUILDERS.get(type(job))
    if fn is None:
        raise RuntimeError(f"no builder registered for {type(job).__name__}")
    return [canonical(obj) for obj in fn(job, loaded.mode, ctx)]


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

    An object built identically by several jobs (a CRD) is kept once; two different objects
    with one identity are an input error naming both jobs.
    """
    ctx = BuildContext(stack.settings, target)
    seen: dict[tuple[str, str, str, str], Built] = {}
    problems: list[Problem] = []
    for loaded in stack.jobs:
        for obj in build_job(loaded, ctx):
            key = identity(obj)
            first = seen.get(key)
            if first is None:
                seen[key] = Built(obj, loaded)
            elif first.obj == obj:
                seen[key] = Built(obj, None)
            else:
                problems.append(
                    Problem(
                        loaded.source.file,
                        loaded.source.line,
                        (*loaded.source.path, "metadata", "name"),
                        f"{loaded.title} creates {key[1]} "
                        f"{key[2] + '/' if key[2] else ''}{key[3]}, "
                        f"which {first.source} also creates differently",
                    )
                )
    if problems:
        raise InputError(problems)
    return sorted(seen.values(), key=lambda b: sort_key(b.obj))
