"""Loading a stack: stack file -> settings -> job documents -> validated, located models.

All problems found in one pass are reported together, each as ``FILE:LINE: path: message``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...parallel import ChunkMapper, serial
from ..errors import InputError, PathPart, Problem
from ..patches import apply_patches, patch_sources
from ..source import (
    Document,
    display_path,
    foreign_config,
    load_documents,
    value_problems,
)
from ..stack import CONFIG_NAMESPACE, ClusterTarget, StackFile, StackSettings
from .config import decode_config_value, lines_of_same_values, our_config, prefixed
from .discovery import find_project_root, stack_documents, stack_name
from .jobs import duplicate_jobs, job_outcome, output_budget
from .kueue_rules import queue_problems
from .loaded import JobSource, LoadedJob, Stack
from .manifests import crd_scopes, duplicate_manifests, load_manifest
from .messages import validated
from .trainjob_rules import refused_runtimes, stack_runtimes, trainjob_stack_problems

#: Job documents worth a process of their own when a stack is loaded on several cores (a
#: document takes about a quarter of a millisecond to validate).
JOBS_PER_PROCESS = 100


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
    return load_stack_document(
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
        f"{CONFIG_NAMESPACE}:{key}": decode_config_value(key, raw)
        for key, raw in config.items()
        if key != "credentials"
    }
    shown = display_path(path)
    problems = [Problem(shown, None, p, m) for p, m in value_problems({"config": ours})]
    if problems:
        raise InputError(problems)
    doc = Document.with_lines(shown, {"config": ours}, lines_of_same_values(file, ours))
    return load_stack_document(doc, name, path, project_root)


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
    return load_stack_document(doc, name, file, project_root, extra=(jobs, manifests))


def load_stack_document(
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
    file_model = validated(StackFile, doc, problems)
    if file_model is None:
        raise InputError(problems)
    if "config" not in doc.data:  # a stack with no config (yet): every default
        doc = dataclasses.replace(doc, data={**doc.data, "config": {}})
    ours, other_problems = our_config(doc)
    problems += other_problems
    settings = validated(StackSettings, doc.sub(("config",)), problems, data=ours, keymap=prefixed)
    if settings is None:
        raise InputError(problems)
    target, at = _cluster_target(settings, cluster, doc)
    if target is not None and target.gpu_resource is not None:
        settings = settings.model_copy(update={"gpu_resource": target.gpu_resource})
    if not jobs:
        return Stack(name, path, root, settings, (), doc, cluster=target)
    read_before = len(problems)
    job_docs = list(
        stack_documents(
            doc,
            ("jobs", len(settings.jobs)),
            ("jobFiles", settings.job_files),
            root,
            problems,
            chunks,
        )
    )
    manifest_docs = list(
        stack_documents(
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
        lambda docs: [job_outcome(d, settings) for d in docs],
        job_docs,
        per_process=JOBS_PER_PROCESS,
    )
    for job_doc, (job, mode, found) in zip(job_docs, outcomes, strict=True):
        problems += found
        if job is not None:
            loaded_jobs.append(LoadedJob(job, JobSource(job_doc), mode))
    problems += duplicate_jobs(loaded_jobs)
    over_budget: list[Problem] = []
    if not problems:
        over_budget = output_budget(loaded_jobs, settings)
        problems += over_budget
    crds = crd_scopes(manifest_docs)
    manifests = [m for d in manifest_docs if (m := load_manifest(d, settings, problems, crds))]
    problems += duplicate_manifests(manifests)
    runtimes = stack_runtimes(doc, settings, manifests, root, problems)
    refused = refused_runtimes(manifest_docs, settings, runtimes)
    found, buildable = trainjob_stack_problems(loaded_jobs, runtimes, settings, refused)
    problems += found
    # A partial load's stack is built for the problems its other jobs have; never one past
    # the output bounds (its output is what the bounds keep from memory).
    loaded_jobs = [] if over_budget else buildable
    problems += queue_problems(loaded_jobs, manifests, settings)
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
