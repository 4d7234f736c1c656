"""What loading gives: a stack's validated jobs and manifests, each with where it was written."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..base import (
    JobDocument,
    Mode,
)
from ..errors import PathPart, Problem
from ..runtimes import (
    Runtime,
    RuntimeKey,
)
from ..source import (
    Document,
    display_path,
)
from ..stack import ClusterTarget, StackSettings


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode(self.mode))  # a misspelt mode is no mode

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
