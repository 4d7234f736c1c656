"""What the commands do, as functions: load -> build -> validate -> write or compare.

The CLI is a thin shell over these; tests and other tools can call them directly.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import os
import re
import stat
import tempfile
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .builders import Built, Target, build_stack
from .builders.crd import kubeconform_schema, openapi_schema, owned_crds
from .builders.delivery import ClusterBuild, delivery_name, delivery_objects, engine_of
from .builders.lifecycle import is_prerequisite
from .builders.namespaces import pod_security_labels
from .builders.registry import document_path
from .kube.names import DNS1123_LABEL, DNS1123_SUBDOMAIN
from .kube.schemas import builtin_kinds, split_api_version
from .models import CheckFailed, InputError, Problem, Stack, discover_stacks, load_stack
from .models.base import Mode, job_kinds
from .models.editor import job_schema, stack_schema
from .models.errors import did_you_mean, printable
from .models.fields import FieldNode, kind_node
from .models.kubeflow import REPLICA_TYPES_KEY
from .models.load import find_project_root, stack_name, stack_name_problem
from .models.load.kueue_rules import (
    PRIORITY_CLASS_LABEL,
    unknown_priority_class,
    workload_priority_classes,
)
from .models.orphans import removal_causes
from .models.source import display_path, file_kind, load_documents, watching_inputs
from .models.stack import CONFIG_NAMESPACE, StackSettings, delivered_to
from .parallel import ChunkMapper, alongside_mapped, forking
from .plan import DELIVERY_OF, EnvironmentPlan, Totals, plan_environment, read_rendered
from .quota import QUEUE_LABEL, plan_queues
from .render import (
    OutputLock,
    PendingTree,
    TreeChange,
    diff_tree,
    iter_files,
    object_file,
    plan_grouped_files,
    remove_tree,
    write_tree,
)
from .render.tree import (
    check_ownership,
    entries,
    generated_for,
    is_crd,
    object_path,
    read_file,
)
from .render.yamlout import is_plain, read_generated
from .validate import (
    DEFAULT_VERSION,
    RULES,
    CheckSettings,
    Located,
    Report,
    Validator,
    add_findings,
    add_lines,
    flag_shared_duplicates,
    format_report,
    read_objects,
    semantic_findings,
    warning_lines,
)
from .validate.kubeconform import find_kubeconform, merge_results, run_kubeconform

if TYPE_CHECKING:  # imported where used: no render or validate needs kubetrain convert
    from .convert.run import ConvertResult
    from .convert.run import Mode as ConvertMode

__all__ = [
    "JOB_SCHEMA_FILE",
    "SCHEMA_MARK",
    "STACK_SCHEMA_FILE",
    "Engine",
    "Planned",
    "Progress",
    "Project",
    "add_stack",
    "convert",
    "diff",
    "explain",
    "init_project",
    "lock_text",
    "plan",
    "prepare",
    "render",
    "render_stream",
    "render_stream_documents",
    "schema_files",
    "validate_paths",
    "write_schemas",
]

#: Validation engines: kubetrain's own schemas, or kubeconform when it is on PATH.
Engine = Literal["builtin", "kubeconform"]
#: Folder under rendered/ that holds GitOps delivery objects, so no stack may be named so.
CLUSTERS_DIR = "clusters"
RESERVED_STACK_NAMES = {CLUSTERS_DIR}


class Progress(Protocol):
    """Where long commands report how far they are (the CLI draws it on a terminal)."""

    def phase(self, what: str, total: int | None = None) -> None:
        """A new step (``building dev``), of ``total`` items when known."""

    def advance(self, n: int = 1) -> None:
        """``n`` more items of the current step are done."""


class _Silent:
    """No progress shown (the default)."""

    def phase(self, what: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass


SILENT: Progress = _Silent()


@dataclass(frozen=True)
class Project:
    """A kubetrain project: the folder holding ``Pulumi.yaml`` and where its stacks live."""

    root: Path

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        return cls(find_project_root(start or Path.cwd()))

    @property
    def pulumi_yaml(self) -> Path | None:
        """The project file, when there is one."""
        for name in ("Pulumi.yaml", "Pulumi.yml"):
            if (self.root / name).is_file():
                return self.root / name
        return None

    @property
    def configured_stacks_dir(self) -> Path | None:
        """``stackConfigDir`` of ``Pulumi.yaml``, when it sets one."""
        path = self.pulumi_yaml
        if path is None:
            return None
        # Pulumi's file: kubetrain reads stackConfigDir only, and judges nothing else.
        docs = load_documents(path, skip=lambda p: p != ("stackConfigDir",))
        data = docs[0].data if docs else None
        configured = data.get("stackConfigDir") if isinstance(data, dict) else None
        return self.root / configured if isinstance(configured, str) else None

    @property
    def stacks_dir(self) -> Path:
        """``stackConfigDir`` of ``Pulumi.yaml``; without one, where users keep stacks: the
        project root (Pulumi's default), else its ``stacks/`` folder when that has them."""
        configured = self.configured_stacks_dir
        if configured is not None:
            return configured
        if not _has_stack_files(self.root) and _has_stack_files(self.root / "stacks"):
            return self.root / "stacks"
        return self.root

    @property
    def rendered_dir(self) -> Path:
        return self.root / "rendered"

    def delivery_dir(self, env: str) -> Path:
        """``rendered/clusters/<env>``: the GitOps delivery objects of one environment."""
        return self.rendered_dir / CLUSTERS_DIR / env

    def stack_files(self, names: Sequence[str] = (), *, retiring: bool = False) -> list[Path]:
        """The stack files (all, or ``names``). With ``retiring`` (render and plan of every
        stack), a project whose last stack file was deleted has none, when ``rendered/`` still
        holds an environment to remove (docs/lifecycle.md, Retiring an environment)."""
        folder = self.stacks_dir
        if retiring and not names and not _has_stack_files(folder) and self._rendered_envs():
            return []
        if not names and self.configured_stacks_dir is None and not _has_stack_files(folder):
            shown = display_path(self.root)
            where = (
                f"{shown} has a Pulumi.yaml without stackConfigDir"
                if self.pulumi_yaml is not None
                else f"{shown} is not in a kubetrain project (no Pulumi.yaml here or above)"
            )
            raise InputError.single(
                shown,
                f"no stack files (Pulumi.<env>.yaml) here or in stacks/: {where}. Run "
                "`kubetrain init` to create a project, cd into yours, or give a stack file "
                "with --config",
            )
        return discover_stacks(folder, names)

    def _rendered_envs(self) -> bool:
        base = self.rendered_dir
        if not base.is_dir() or base.is_symlink():
            return False
        with os.scandir(base) as it:
            return any(e.is_dir(follow_symlinks=False) and not e.name.startswith(".") for e in it)


def _has_stack_files(folder: Path) -> bool:
    return folder.is_dir() and any(p.name.count(".") >= 2 for p in folder.glob("Pulumi.*.y*ml"))


@dataclass
class Planned:
    """A stack rendered in memory: its objects, files and their validation report, and the
    GitOps delivery files for ``rendered/clusters/<env>`` (``delivery_dir`` is ``None`` when
    the stack is rendered elsewhere with ``--out``; ``delivery_files`` is empty without
    ``kubetrain:gitops``)."""

    stack: Stack
    built: list[Built]
    out_dir: Path
    report: Report
    delivery_dir: Path | None = None
    delivery_files: dict[str, str] = field(default_factory=dict)
    #: The GitOps delivery objects (what ``delivery_files`` holds).
    delivery: list[dict[str, Any]] = field(default_factory=list)
    #: What the builders rewrote or did not use, located in the job documents.
    warnings: list[Problem] = field(default_factory=list)

    @property
    def fleet_member(self) -> bool:
        """One cluster of a fleet: its files are ``<cluster>/...`` of the environment's tree."""
        return self.stack.cluster is not None and self.stack.settings.fleet

    @property
    def tree_dir(self) -> Path:
        """The folder render owns for this plan's objects: ``out_dir``, or for one cluster of a
        fleet the environment's folder above it (one tree, every cluster's files in it)."""
        return self.out_dir.parent if self.fleet_member else self.out_dir

    @property
    def cluster(self) -> str:
        """The cluster its objects go to, as reports name it (:func:`delivered_to`)."""
        target = self.stack.cluster
        return delivered_to(
            self.stack.name, self.stack.settings, target.name if target is not None else None
        )

    @property
    def trees(self) -> list[tuple[Path, dict[str, str]]]:
        """Every folder this plan owns and what it must hold (an empty delivery folder: none)."""
        out = [(self.out_dir, self.files)]
        if self.delivery_dir is not None:
            out.append((self.delivery_dir, self.delivery_files))
        return out

    def iter_files(
        self, laid_out: Sequence[tuple[str, str]] | None = None, *, kustomizations: bool = True
    ) -> Iterator[tuple[str, str]]:
        """The rendered files, laid out lazily (each object written as YAML on every core:
        :data:`_CHUNKS`), or from each built object's file already written (``laid_out``);
        not ``kustomizations``: the objects' files only (a stream's)."""
        return iter_files(
            ((b.obj, b.source) for b in self.built),
            self.stack.source_name,
            self.stack.settings.kubernetes_version,
            _CHUNKS,
            laid_out,
            kustomizations=kustomizations,
        )

    @cached_property
    def files(self) -> dict[str, str]:
        """Relative path -> content of every rendered file (laid out by :func:`_check`)."""
        return dict(self.iter_files())


def load_stacks(
    files: Sequence[Path], project: Project, *, jobs: bool = True, partial: bool = False
) -> list[Stack]:
    """Load every stack, reporting the problems of all of them together (``jobs=False``: the
    settings only). With ``partial``, the problems of stacks whose settings loaded do not
    raise: each such stack holds the jobs that loaded and its problems
    (:attr:`~kubetrain.models.load.Stack.problems`), so their build can be checked too."""
    failed: InputError | None = None
    with watching_inputs() as watch:
        try:
            stacks = _load_stacks(files, project, jobs, partial)
        except InputError as exc:
            failed = exc  # unless the project changed meanwhile, which explains it first
    if changed := watch.changed():
        # What was read may mix two states of the project (a git checkout while it was read):
        # act on none of it.
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        raise InputError.single(
            display_path(files[0]) if len(files) == 1 else "kubetrain",
            f"the project changed while kubetrain read it ({shown}); nothing was done: run the "
            "command again once the change (a git checkout, an editor saving) is complete",
        )
    if failed is not None:
        raise failed
    return stacks


def _load_stacks(
    files: Sequence[Path], project: Project, jobs: bool, partial: bool = False
) -> list[Stack]:
    stacks, problems = [], []
    for file in files:
        try:
            if stack_name(file) in RESERVED_STACK_NAMES:
                raise InputError.single(
                    display_path(file),
                    f"the stack name {stack_name(file)!r} is reserved "
                    "(rendered/clusters/ holds GitOps objects)",
                )
            stack = load_stack(file, project_root=project.root, jobs=False, chunks=_CHUNKS)
            # A fleet: the stack once per cluster, with that cluster's overrides.
            clusters: list[str | None] = (
                [c.name for c in stack.settings.clusters] if stack.settings.fleet else [None]
            )
            variants = []
            for cluster in clusters if jobs else []:
                variants.append(
                    load_stack(
                        file,
                        project_root=project.root,
                        chunks=_CHUNKS,
                        cluster=cluster,
                        partial=partial,
                    )
                )
                if variants[-1].problems:
                    break  # the other clusters would say the same of the same documents
            if not jobs:
                variants = [stack]
        except InputError as exc:
            problems += exc.problems
            continue
        stacks += variants
        if not partial:
            problems += [p for v in variants for p in v.problems]
        for i, rule in enumerate(stack.settings.skip_checks):
            if rule not in RULES:
                problems.append(
                    stack.problem(
                        ("config", "kubetrain:skipChecks", i),
                        f"unknown check {rule!r}; the checks are {', '.join(sorted(RULES))}",
                    )
                )
    if problems:
        raise InputError(problems)
    return stacks


def _delivery(variants: Sequence[tuple[Stack, list[Built]]]) -> list[dict[str, Any]]:
    """The GitOps delivery objects of one environment, from what each of its clusters (one,
    or each of a fleet) builds."""
    stack = variants[0][0]
    gitops = stack.settings.gitops
    if gitops is None:
        return []
    if problem := DNS1123_SUBDOMAIN.check(delivery_name(stack.name)):
        raise InputError.single(
            stack.source_name,
            f"the stack name {stack.name!r} cannot name GitOps objects: {problem}",
            path=("config", "kubetrain:gitops"),
        )
    clusters = [
        ClusterBuild(
            target=s.cluster,
            folder=s.cluster.name if s.cluster is not None and s.settings.fleet else "",
            has_crds=any(is_crd(b.obj) for b in built),
            has_prerequisites=any(is_prerequisite(b.obj) for b in built),
            kinds=frozenset(_group_kinds(b.obj for b in built)),
            namespaces=frozenset(
                str(b.obj["metadata"]["namespace"])
                for b in built
                if b.obj["metadata"].get("namespace")
            ),
        )
        for s, built in variants
    ]
    return delivery_objects(
        gitops,
        stack.name,
        clusters[0].has_crds,
        has_prerequisites=clusters[0].has_prerequisites,
        namespace=stack.settings.namespace,
        namespace_labels=pod_security_labels(stack.settings),
        clusters=clusters if stack.settings.clusters else (),
    )


def _group_kinds(objects: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, str, bool]]:
    """(group, kind, namespaced) of each object."""
    for obj in objects:
        yield (
            str(obj["apiVersion"]).rpartition("/")[0],
            str(obj["kind"]),
            bool(obj["metadata"].get("namespace")),
        )


def _deliver(plans: Sequence[Planned], delivery_dir: Callable[[str], Path]) -> None:
    """Give the first plan of each environment its GitOps delivery objects and files (in
    ``delivery_dir(env)``), made from every plan of the environment (each cluster of a
    fleet)."""
    by_env: dict[str, list[Planned]] = {}
    for p in plans:
        by_env.setdefault(p.stack.name, []).append(p)
    for env, variants in by_env.items():
        first = variants[0]
        first.delivery_dir = delivery_dir(env)
        first.delivery = _delivery([(p.stack, p.built) for p in variants])
        what = f"{DELIVERY_OF}rendered/{env}"
        groups: dict[str, list[tuple[dict[str, Any], str]]] = {}
        for o in first.delivery:
            groups.setdefault(engine_of(o), []).append((o, what))
        version = first.stack.settings.kubernetes_version
        first.delivery_files = (
            plan_grouped_files(groups, first.stack.source_name, version) if groups else {}
        )


#: How render and validate map their independent parts (loading and building each job,
#: checking and writing each object, reading each file): on every core the machine lends
#: this process (:mod:`kubetrain.parallel`).
_CHUNKS: ChunkMapper = forking
#: Objects for which the rules over all objects run in a process of their own.
OBJECTS_ALONGSIDE = 1000


def prepare(
    stack: Stack,
    out_dir: Path,
    delivery_dir: Path | None = None,
    progress: Progress = SILENT,
) -> Planned:
    """Build and validate one stack, and lay out its files (nothing is written). With
    ``delivery_dir``, also the GitOps delivery objects of ``kubetrain:gitops``."""
    planned = _build(stack, out_dir, None, progress)
    if delivery_dir is not None:
        _deliver([planned], lambda _: delivery_dir)
    _check(planned, progress)
    return planned


def _build(
    stack: Stack, out_dir: Path, delivery_dir: Path | None, progress: Progress = SILENT
) -> Planned:
    progress.phase(f"building {stack.name}", len(stack.jobs))
    warnings: list[Problem] = []
    built = build_stack(
        stack,
        Target.RENDER,
        warnings=warnings,
        progress=progress.advance,
        chunks=_CHUNKS,
    )
    if problems := _workload_priority_problems(stack, built):
        raise InputError(problems)
    warnings += _queue_gates(stack, built)
    warnings += _foreign_namespaces(stack, built)
    planned = Planned(stack, built, out_dir, Report(), warnings=warnings)
    if delivery_dir is not None:
        _deliver([planned], lambda _: delivery_dir)
    return planned


def _foreign_namespaces(stack: Stack, built: Sequence[Built]) -> list[Problem]:
    """A job in a namespace that is not the stack's and that the stack neither declares (a
    Namespace manifest) nor lists as existing (``kubetrain:external.namespaces``): kubetrain
    would create that Namespace with Pod Security labels, and so take over one that exists (a
    published example's ``namespace: kubeflow``, Kubeflow's own). A warning at the job's
    ``metadata.namespace``, an error under --strict."""
    generated = {
        b.obj["metadata"]["name"]
        for b in built
        if b.obj["kind"] == "Namespace" and b.job is None and b.manifest is None
    }
    generated.discard(stack.settings.namespace)
    out = []
    for job in stack.jobs:
        namespace = job.document.namespace
        if namespace in generated:
            found = job.source.problem(
                ("metadata", "namespace"),
                f"{job.title}: namespace {namespace} is not the stack's "
                f"({stack.settings.namespace}), and kubetrain would create it with Pod Security "
                "labels, taking it over if it exists; list it in kubetrain:external.namespaces "
                "if it does, declare a Namespace in kubetrain:manifests to own it, or remove "
                "metadata.namespace (a patch) to use the stack's",
            )
            out.append(dataclasses.replace(found, severity="warning"))
    return out


def _has_queue_label(obj: Any) -> bool:
    """Whether an object carries Kueue's queue label (a manifest of the wrong shape, which
    validate refuses, carries none)."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return isinstance(labels, dict) and QUEUE_LABEL in labels


def _workload_priority_problems(stack: Stack, built: Sequence[Built]) -> list[Problem]:
    """What Kueue would queue (an object with its queue label) whose own
    ``kueue.x-k8s.io/priority-class`` names a WorkloadPriorityClass the stack neither delivers
    nor declares: Kueue reads the label from the object it admits (a pod of its pod integration
    has its template's labels), and makes no Workload for it. A job's own label is refused at
    load, and not said again here."""
    queued = [b for b in built if _has_queue_label(b.obj)]
    if not queued:
        return []
    known = workload_priority_classes(stack.manifests, stack.settings)
    jobs = {j.title: j for j in stack.jobs}
    out: dict[tuple[str, str], Problem] = {}
    for b in queued:
        meta = b.obj["metadata"]
        name = meta["labels"].get(PRIORITY_CLASS_LABEL)
        job = jobs.get(b.source)
        if not isinstance(name, str) or name in known or job is None:
            continue
        if job.document.metadata.labels.get(PRIORITY_CLASS_LABEL) == name:
            continue  # the job's own label, refused at load
        what = f"{b.obj.get('kind')} {meta.get('namespace', '')}/{meta.get('name')}"
        message = (
            f"{job.title}: {what} has {PRIORITY_CLASS_LABEL}: {name} (from a pod template's "
            f"labels); {unknown_priority_class(name, what)}"
        )
        out.setdefault((b.source, name), job.source.problem((), message))
    return list(out.values())


def _queue_gates(stack: Stack, built: Sequence[Built]) -> list[Problem]:
    """Jobs Kueue would hold for ever (:attr:`kubetrain.quota.QueuePlan.gates`: one its
    ClusterQueue can never admit, one whose LocalQueue names a ClusterQueue the stack does not
    deliver), as warnings at the job's queue label (errors under --strict)."""
    objects = [(b.obj, b.source) for b in built]
    if not any(_has_queue_label(o) for o, _ in objects):
        return []
    totals = Totals.of(objects)
    queues = plan_queues(objects, {job: usage.resources for job, usage in totals.jobs.items()})
    jobs = {j.title: j for j in stack.jobs}
    out = []
    for title, message in queues.gates:
        job = jobs.get(title)
        if job is not None:
            found = job.source.problem(("metadata", "labels", QUEUE_LABEL), message)
            out.append(dataclasses.replace(found, severity="warning"))
    return out


def _located(stack: Stack, built: Built, cluster: str = "") -> Located:
    """An object to check, located where the user wrote what it came from: its job document or
    manifest (file and line), else the stack file. Render's findings never name a file that
    was not written (the object itself is named in the report)."""
    origin = built.origin
    if origin is not None:
        return Located(
            built.obj, origin.file, line=origin.line, source=built.source, cluster=cluster
        )
    return Located(built.obj, display_path(stack.file), source=built.source, cluster=cluster)


def _check(
    planned: Planned,
    progress: Progress = SILENT,
    then: Callable[[Planned], None] | None = None,
    *,
    kustomizations: bool = True,
) -> None:
    """Check every object of a plan (fills its report) and lay out its files (``files``):
    the checks of each object on every core, while the rules over all objects together run in
    the first process forked for them, before it takes its share of the checks
    (:func:`kubetrain.parallel.alongside_mapped`). With ``then``, the files are
    not laid out here: ``then(planned)`` is called first (render starts a process that lays the
    files out and writes them, beside the checks). Not ``kustomizations``: the objects' files
    only (a stream holds no kustomization)."""
    items = _items(planned)
    # Built from documents the credential rule passed at load: not walked for it again.
    settings = CheckSettings.from_stack(planned.stack.settings, inputs_checked=True)

    def each(chunks: ChunkMapper) -> None:
        progress.phase(f"checking {planned.stack.name}", len(items))
        validator = Validator(planned.stack.settings.version)
        if then is not None:
            then(planned)
            planned.report = validator.validate(items, progress=progress.advance, chunks=chunks)
            return
        # Each object is written as YAML by the process that checks it, in the same pass: one
        # set of processes forked for both, each object's pages touched by one of them
        # (:func:`kubetrain.render.tree.object_file`; the built objects are the first items).
        source, version = planned.stack.source_name, planned.stack.settings.kubernetes_version
        planned.report, laid_out = validator.validate_with(
            items,
            lambda item: object_file(item.obj, item.source, source, version),
            len(planned.built),
            progress=progress.advance,
            chunks=chunks,
        )
        planned.files = dict(planned.iter_files(laid_out, kustomizations=kustomizations))

    findings, _ = alongside_mapped(
        lambda: semantic_findings(items, settings), each, fork=len(items) >= OBJECTS_ALONGSIDE
    )
    add_findings(planned.report.results, findings)
    _relocate(planned)


def _relocate(planned: Planned) -> None:
    """Locate each finding on an object built from a job at the field of the job document (or
    of the patch) the user wrote it in, where the object copies it from a pod template; and
    each finding on a plain manifest at its own field (the object is the manifest: its paths
    are the document's)."""
    for result, built in zip(planned.report.results, planned.built, strict=False):
        loaded = built.job
        if not result.findings or (loaded is None and built.manifest is None):
            continue
        # An object that is its document (a plain manifest, an operator-mode custom resource
        # of the document's own apiVersion and kind): a finding's path is the document's.
        source = built.manifest.source if built.manifest is not None else None
        if loaded is not None and loaded.mode == Mode.OPERATOR:
            doc = loaded.document
            if (built.obj.get("apiVersion"), built.obj.get("kind")) == (doc.API_VERSION, doc.KIND):
                source = loaded.source
        moved = []
        for finding in result.findings:
            path = document_path(loaded.job, built.obj, finding.path) if loaded else None
            where = loaded.source if loaded is not None else None
            if path is None and source is not None and finding.path:
                path, where = tuple(finding.path), source
            if path is None or where is None:
                moved.append(finding)
                continue
            at = where.problem(path, "")
            moved.append(dataclasses.replace(finding, path=at.path, line=at.line, file=at.file))
        result.findings = moved


def _items(planned: Planned) -> list[Located]:
    """The objects of a plan to check, each located where it was written."""
    stack = planned.stack
    items = [_located(stack, b, planned.cluster) for b in planned.built]
    if planned.delivery_dir is not None:
        what = f"{DELIVERY_OF}rendered/{stack.name}"
        gitops = stack.problem(("config", "kubetrain:gitops"), "")
        items += [Located(o, gitops.file, line=gitops.line, source=what) for o in planned.delivery]
    return items


def _selected(project: Project, names: Sequence[str], config: Path | None) -> list[Path]:
    if config is not None:
        if names:
            raise InputError.single("--config", "give either --config or --stack, not both")
        return [config]
    return project.stack_files(names, retiring=True)


def _warned(plans: Sequence[Planned], strict: bool, warnings: list[str] | None) -> None:
    """The builders' warnings of every plan: errors under ``strict`` (exit 2, bad input),
    else added to ``warnings``."""
    found = sorted({w for p in plans for w in p.warnings})
    if strict and found:
        raise InputError(w.as_error() for w in _once_per_job(found))
    if warnings is not None:
        warnings += [str(w) for w in _once_per_job(found)]


#: A builder warning's message: ``<Kind> <namespace>/<name>: <what>`` (build_job's form).
_TITLED = re.compile(
    r"^(?P<kind>[A-Za-z0-9]+) (?P<where>[^ :]+/[^ :]+)(?P<sep>:? )(?P<rest>.*)$", re.S
)


def _once_per_job(found: Sequence[Problem]) -> list[Problem]:
    """The builders' warnings with those of one job document said once: the same warning at
    the same field of one file, made by several environments (the job in each stack's
    namespace), is one line naming each (``TFJob ml-dev/x, ml-prod/x: ...``)."""
    groups: dict[tuple[Any, ...], list[tuple[Problem, str]]] = {}
    for w in found:
        m = _TITLED.match(w.message)
        key = (w.file, w.line, w.path, w.severity, m["kind"], m["sep"], m["rest"]) if m else (w,)
        groups.setdefault(key, []).append((w, m["where"] if m else ""))
    out = []
    for members in groups.values():
        first, _ = members[0]
        if len(members) == 1:
            out.append(first)
            continue
        m = _TITLED.match(first.message)
        assert m is not None
        where = ", ".join(dict.fromkeys(w for _, w in members))
        message = f"{m['kind']} {where}{m['sep']}{m['rest']}"
        out.append(dataclasses.replace(first, message=message))
    return sorted(out)


#: A check's warning line: what it says, then `` [<objects>]``.
_OBJECTS = re.compile(r"^(?P<line>.*?) \[(?P<objects>[^\[\]]*)\]$")


def _merged_lines(lines: Iterable[str]) -> list[str]:
    """The checks' warning lines of several environments with a finding at one line of one
    file said once, its objects listed together (``[Pod ml-dev/a, Pod ml-prod/a]``)."""
    merged: dict[str, list[str]] = {}
    for line in lines:
        m = _OBJECTS.match(line)
        text, objects = (m["line"], m["objects"]) if m else (line, "")
        merged.setdefault(text, [])
        if objects:
            merged[text].append(objects)
    out = []
    for text, parts in merged.items():
        if not parts:
            out.append(text)
            continue
        count, names = 0, list[str]()
        for part in parts:
            m = _COUNTED.match(part)
            if m is None:
                count, names = count + 1, [*names, part]
                continue
            count += int(m["count"])
            names += m["names"].split(", ")
        if count == 1:
            out.append(f"{text} [{names[0]}]")
            continue
        more = f" and {count - _SHOWN} more" if count > _SHOWN else ""
        out.append(f"{text} [{count} objects: {', '.join(names[:_SHOWN])}{more}]")
    return out


#: ``3 objects: Job ml/a-0, Job ml/a-1 and 1 more`` (what validate's report groups).
_COUNTED = re.compile(r"^(?P<count>\d+) objects: (?P<names>.*?)(?: and \d+ more)?$")
#: Objects a merged line names (as the report names them).
_SHOWN = 3


def _checked(plans: Sequence[Planned], strict: bool, warnings: list[str] | None) -> None:
    """Raise :class:`CheckFailed` unless every plan passed its checks (warnings count under
    ``strict``); otherwise the checks' warnings are added to ``warnings``."""
    for p in plans:
        if strict:
            p.report.make_strict()
    failed = [p for p in plans if not p.report.ok]
    if failed:
        raise CheckFailed("".join(format_report(p.report) for p in failed))
    if warnings is not None:
        warnings += _merged_lines(line for p in plans for line in warning_lines(p.report))


def render(
    project: Project,
    names: Sequence[str] = (),
    config: Path | None = None,
    out: Path | None = None,
    *,
    strict: bool = False,
    warnings: list[str] | None = None,
    progress: Progress = SILENT,
) -> list[TreeChange]:
    """Render stacks into their folders; nothing is written unless every stack is valid.

    Warnings (fields the builders rewrote or did not use, findings that are facts) are added to
    ``warnings``; with ``strict`` they are errors: the builders' exit as bad input
    (:class:`InputError`), the checks' as a validation failure (:class:`CheckFailed`)."""
    files = _selected(project, names, config)
    if out is not None and len(files) != 1:
        raise InputError.single(
            "--out", "--out needs exactly one stack (--config FILE or one --stack)"
        )
    progress.phase(f"loading {len(files)} stack file{'s' if len(files) != 1 else ''}")
    stacks = load_stacks(files, project, partial=True)
    plans = _plans(project, stacks, out, progress)
    _warned(plans, strict, warnings)
    # Environments whose stack file is gone: their output goes too (when all of it is ours).
    stale = _stale_folders(project, stacks) if not names and config is None else []
    trees = list(dict.fromkeys(f for p in plans for f in (p.tree_dir, p.delivery_dir) if f))
    with OutputLock([*trees, *stale]):
        return _write(plans, stale, strict, warnings, progress)


def _plans(
    project: Project, stacks: Sequence[Stack], out: Path | None, progress: Progress
) -> list[Planned]:
    """Every stack built (not checked) into its folder: ``rendered/<env>`` (a fleet's cluster
    ``rendered/<env>/<cluster>``), or ``out`` (a fleet's cluster ``out/<cluster>``), with the
    GitOps delivery of each environment unless ``out`` is given."""
    plans = []
    problems = [p for s in stacks for p in s.problems]
    for s in stacks:
        folder = project.rendered_dir / s.name if out is None else out
        if s.cluster is not None and s.settings.fleet:
            folder = folder / s.cluster.name
        try:
            plans.append(_build(s, folder, None, progress))
        except InputError as exc:  # said with the load problems of every stack
            problems += exc.problems
    if problems:
        raise InputError(_once_per_job(sorted(set(problems))))
    if out is None:
        _deliver(plans, project.delivery_dir)
    return plans


def _trees(plans: Sequence[Planned]) -> dict[Path, list[Planned]]:
    """The plans of each tree render owns, in order: one per plan, or one for all the clusters
    of a fleet (``rendered/<env>``)."""
    out: dict[Path, list[Planned]] = {}
    for p in plans:
        out.setdefault(p.tree_dir, []).append(p)
    return out


def _tree_files(members: Sequence[Planned]) -> Iterator[tuple[str, str]]:
    """The files of one tree: a plan's own, or each cluster's of a fleet under its name."""
    for p in members:
        prefix = p.out_dir.name + "/" if p.fleet_member else ""
        yield from ((prefix + rel, text) for rel, text in p.files.items())


def _gone_titles(out_dir: Path, built: Sequence[Built]) -> set[str]:
    """The jobs and manifests (``TFJob ml/mnist``) whose files in ``out_dir`` the build no longer
    makes: only the files of objects the build does not produce are read."""
    produced = {object_path(b.obj) for b in built}
    titles = {b.source for b in built}
    gone: set[str] = set()
    for rel, entry in entries(out_dir) if out_dir.is_dir() else ():
        if not entry.is_file or rel in produced or not rel.endswith((".yaml", ".yml")):
            continue
        data = read_file(out_dir / rel, limit=4096)
        title = generated_for(data.decode("utf-8", "replace")) if data is not None else None
        if title is not None and title not in titles:
            gone.add(title)
    return gone


def removal_causes_of(stack: Stack, gone: set[str]) -> dict[str, str]:
    """Why each of ``gone`` left the stack, where its document still sits in an unread file."""
    settings = stack.settings
    loaded = {j.source.file for j in stack.jobs} | {m.source.file for m in stack.manifests}
    return removal_causes(
        stack.project_root,
        {"jobFiles": settings.job_files, "manifestFiles": settings.manifest_files},
        loaded,
        gone,
        settings.namespace,
    )


def _warn_removals(planned: Planned, warnings: list[str] | None) -> None:
    """Say which jobs leave the tree because their file fell out of the stack's patterns."""
    if warnings is None:
        return
    gone = _gone_titles(planned.out_dir, planned.built)
    for title, cause in sorted(removal_causes_of(planned.stack, gone).items()):
        warnings.append(
            f"{display_path(planned.out_dir)}: warning: the objects of {title} are removed: {cause}"
        )


def _write(
    plans: Sequence[Planned],
    stale: Sequence[Path],
    strict: bool,
    warnings: list[str] | None,
    progress: Progress,
) -> list[TreeChange]:
    """Write the plans' trees and remove ``stale`` folders (the output folders locked), once
    every plan's objects pass validation; nothing is written otherwise."""
    for p in plans:  # refuse before anything is written
        for folder in (p.tree_dir, p.delivery_dir):
            if folder is not None:
                check_ownership(folder, p.stack.source_name)
    for p in plans:  # the trees are kubetrain's: what leaves them, and why
        _warn_removals(p, warnings)
    for folder in stale:
        check_ownership(folder)
    # Each tree is written to a staging folder, by a process of its own, from the moment its
    # files are laid out, while its objects are checked: the file system's work overlaps the
    # checks. Nothing is swapped in unless every stack is valid.
    pending: dict[Path, PendingTree] = {}

    def write(p: Planned) -> None:
        pending[p.tree_dir] = PendingTree(p.out_dir, p.iter_files(), p.stack.source_name)
        pending[p.tree_dir].start(len(p.built))

    trees = _trees(plans)
    try:
        for p in plans:
            # A fleet's tree is written once every cluster's files are laid out.
            _check(p, progress, then=None if p.fleet_member else write)
        flag_shared_duplicates([p.report for p in plans])
        _checked(plans, strict, warnings)
        for folder, members in trees.items():
            if folder not in pending:
                source = members[0].stack.source_name
                pending[folder] = PendingTree(folder, _tree_files(members), source).start()
        progress.phase("writing")
        changes = []
        for folder, members in trees.items():
            changes.append(pending[folder].commit())
            for p in members:
                if p.delivery_dir is None:
                    continue
                source = p.stack.source_name
                if p.delivery_files:
                    changes.append(write_tree(p.delivery_dir, p.delivery_files, source))
                elif os.path.lexists(p.delivery_dir):
                    changes.append(remove_tree(p.delivery_dir, source))
        changes += [remove_tree(folder) for folder in stale]
    finally:
        for tree in pending.values():
            tree.abort()  # a no-op for a committed tree
    return changes


def render_stream(
    project: Project,
    names: Sequence[str] = (),
    config: Path | None = None,
    *,
    strict: bool = False,
    warnings: list[str] | None = None,
    progress: Progress = SILENT,
) -> str:
    """``render --stdout``: every object of the stacks as one multi-document YAML stream, each
    document headed by its file's comment, in the order of the rendered files (nothing is
    written; GitOps delivery objects and kustomizations are left out)."""
    documents = render_stream_documents(
        project, names, config, strict=strict, warnings=warnings, progress=progress
    )
    return "".join(f"---\n{text}" for text in documents)


def render_stream_documents(
    project: Project,
    names: Sequence[str] = (),
    config: Path | None = None,
    *,
    strict: bool = False,
    warnings: list[str] | None = None,
    progress: Progress = SILENT,
) -> list[str]:
    """:func:`render_stream`'s documents (each without its ``---`` line), every check passed:
    the texts the files were laid out as, not copied into one string (the CLI writes them one
    by one, so the stream of 60,000 objects is never held twice, or encoded as a whole)."""
    files = _selected(project, names, config)
    progress.phase(f"loading {len(files)} stack file{'s' if len(files) != 1 else ''}")
    stacks = load_stacks(files, project, partial=True)
    plans = _plans(project, stacks, None, progress)
    _warned(plans, strict, warnings)
    for p in plans:
        _check(p, progress, kustomizations=False)  # a stream holds the objects' files only
    flag_shared_duplicates([p.report for p in plans])
    _checked(plans, strict, warnings)
    return _stream_documents(plans)


def _stream_documents(plans: Sequence[Planned]) -> list[str]:
    """Every rendered file's text (laid out without kustomizations), in the order of the
    files; each plan's files are let go once listed (the built objects stay for nothing
    else)."""
    documents: list[str] = []
    for p in plans:
        documents += p.files.values()
        p.files = {}
    return documents


@dataclass(frozen=True)
class Drift:
    """What ``diff`` found: the unified diff, and per changed file (label, lines added, lines
    removed) for ``--stat`` and the summary line."""

    text: str
    files: list[tuple[str, int, int]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files)

    @property
    def summary(self) -> str:
        """``git diff --stat``'s last line: ``N files changed, X insertions(+), Y deletions(-)``."""
        n = len(self.files)
        added = sum(f[1] for f in self.files)
        removed = sum(f[2] for f in self.files)
        return (
            f"{n} file{'s' if n != 1 else ''} changed, {added} insertion{'s' if added != 1 else ''}"
            f"(+), {removed} deletion{'s' if removed != 1 else ''}(-)"
        )

    def stat(self) -> str:
        """``git diff --stat``: one line per file with its count of changed lines, then the
        summary line."""
        width = max((len(f[0]) for f in self.files), default=0)
        lines = [
            f" {label:<{width}} | {a + r:>5} {'+' * min(a, 30)}{'-' * min(r, 30)}"
            for label, a, r in self.files
        ]
        return "\n".join([*lines, f" {self.summary}"]) + "\n"


def diff(
    project: Project,
    names: Sequence[str] = (),
    *,
    full: bool = False,
    progress: Progress = SILENT,
    warnings: list[str] | None = None,
) -> Drift:
    """Unified diff of ``rendered/`` against what the stacks produce now (empty: no drift).
    Without ``names``, the output of environments whose stack file is gone counts as drift:
    such a folder is summarised in one line per file unless ``full``."""
    stacks = load_stacks(project.stack_files(names), project, partial=True)
    out = []
    changed: list[tuple[str, int, int]] = []
    plans = _plans(project, stacks, None, progress)
    for planned in plans:
        _check(planned, progress)
    flag_shared_duplicates([p.report for p in plans])
    _warned(plans, False, warnings)
    _checked(plans, False, warnings)
    for tree, members in _trees(plans).items():
        trees = [(tree, dict(_tree_files(members)))]
        trees += [(p.delivery_dir, p.delivery_files) for p in members if p.delivery_dir]
        for folder, files in trees:
            part = diff_tree(folder, files, display_path(folder))
            out.append(part.text)
            changed += part.files
    if not names:
        for folder in _stale_folders(project, stacks):
            part = diff_tree(folder, {}, display_path(folder), summarise_deleted=not full)
            out.append(part.text)
            changed += part.files
    return Drift("".join(out), changed)


def plan(
    project: Project, names: Sequence[str] = (), progress: Progress = SILENT
) -> list[EnvironmentPlan]:
    """What rendering and applying the stacks now would change, per environment, against what
    ``rendered/`` holds (see :mod:`kubetrain.plan`). Nothing is written or validated. Without
    ``names``, environments whose stack file is gone are planned for deletion."""
    files = project.stack_files(names, retiring=True)
    progress.phase(f"loading {len(files)} stack file{'s' if len(files) != 1 else ''}")
    stacks = load_stacks(files, project, partial=True)
    out = []
    for built in _plans(project, stacks, None, progress):
        stack = built.stack
        progress.phase(f"comparing {stack.tree_name} with rendered/{stack.tree_name}")
        what = f"{DELIVERY_OF}rendered/{stack.name}"
        after = [(b.obj, b.source) for b in built.built] + [(o, what) for o in built.delivery]
        folders = [built.out_dir]
        delivery_dir = built.delivery_dir
        if delivery_dir is not None and (built.delivery or delivery_dir.is_dir()):
            folders.append(delivery_dir)
        environment = _plan_folders(stack.tree_name, folders, after)
        gone = {c.job for c in environment.changes if c.action == "delete"}
        environment.causes = removal_causes_of(stack, gone)
        out.append(environment)
    if not names:
        stale: dict[str, list[Path]] = {}
        for folder in _stale_folders(project, stacks):
            stale.setdefault(folder.name, []).append(folder)
        out += [_plan_folders(env, folders, []) for env, folders in sorted(stale.items())]
    return out


def _plan_folders(
    name: str, folders: list[Path], after: list[tuple[dict[str, Any], str]]
) -> EnvironmentPlan:
    unreadable: list[str] = []
    before = [item for folder in folders for item in read_rendered(folder, unreadable)]
    plan = plan_environment(name, [display_path(f) for f in folders], before, after)
    plan.notes[:0] = unreadable
    return plan


def _stale_folders(project: Project, stacks: Sequence[Stack]) -> list[Path]:
    """``rendered/<env>`` and ``rendered/clusters/<env>`` folders with no stack file for
    ``<env>`` (its output would otherwise stay deployed by GitOps after the stack is deleted),
    and whatever else there render must refuse to work next to: a symbolic link, a FIFO, a
    device or a socket, and a ``rendered/clusters`` that is not a plain folder. Regular files
    directly in ``rendered/`` (a README) are left alone."""
    current = {s.name for s in stacks} | RESERVED_STACK_NAMES
    out = []
    clusters = project.rendered_dir / CLUSTERS_DIR
    if os.path.lexists(clusters) and not stat.S_ISDIR(os.lstat(clusters).st_mode):
        out.append(clusters)
    for base in (project.rendered_dir, clusters):
        if not base.is_dir() or base.is_symlink():
            continue
        with os.scandir(base) as it:
            children = sorted(it, key=lambda e: e.name)
        for child in children:
            if child.name.startswith("."):
                continue
            if child.is_dir(follow_symlinks=False):
                if child.name not in current:
                    out.append(Path(child.path))
            elif not child.is_file(follow_symlinks=False):
                out.append(Path(child.path))
    return out


def _env_of(project: Project, file: str) -> str | None:
    """The environment a file was rendered for: ``rendered/<env>/...`` and
    ``rendered/clusters/<env>/...`` belong to ``<env>``; other files to none."""
    try:
        rel = Path(file).resolve().relative_to(project.rendered_dir.resolve())
    except ValueError:
        return None
    parts = rel.parts
    if parts and parts[0] in RESERVED_STACK_NAMES:
        parts = parts[1:]
    return parts[0] if len(parts) >= 2 else None


def _check_groups(
    project: Project | None, items: Sequence[Located], stack: str | None
) -> dict[str | None, tuple[StackSettings | None, list[int]]]:
    """Objects grouped by the stack whose settings the semantic checks use.

    ``--stack ENV`` puts every object under that stack. Otherwise a file under
    ``rendered/<env>/`` (or ``rendered/clusters/<env>/``) uses ``stacks/Pulumi.<env>.yaml`` when
    it exists; any other file uses the defaults (podSecurity baseline, nothing external).
    """
    envs: list[str | None] = [stack] * len(items)
    if stack is None and project is not None:
        known = {stack_name(p) for p in project.stack_files()} if _has_stacks(project) else set()
        by_folder: dict[str, str | None] = {}  # thousands of files share a few folders
        for n, item in enumerate(items):
            folder = os.path.dirname(item.file)
            if folder not in by_folder:
                env = _env_of(project, os.path.join(folder, "_"))
                by_folder[folder] = env if env in known else None
            envs[n] = by_folder[folder]
    wanted = sorted({e for e in envs if e is not None})
    settings: dict[str, StackSettings] = {}
    if wanted:
        if project is None:
            project = Project.find()
        for loaded in load_stacks(project.stack_files(wanted), project, jobs=False):
            settings[loaded.name] = loaded.settings
    groups: dict[str | None, tuple[StackSettings | None, list[int]]] = {}
    for index, env in enumerate(envs):
        groups.setdefault(env, (settings.get(env) if env else None, []))[1].append(index)
    return groups


def _on_clusters(
    project: Project | None,
    items: list[Located],
    groups: Mapping[str | None, tuple[StackSettings | None, list[int]]],
) -> list[Located]:
    """Each object with the cluster it is delivered to (:func:`delivered_to`), so that objects
    of one identity in two environments are duplicates only when both go to one cluster. A
    fleet's file ``rendered/<env>/<cluster>/...`` is that cluster's."""
    out = list(items)
    for env, (settings, indexes) in groups.items():
        if env is None:
            continue
        fleet = settings is not None and settings.fleet
        for i in indexes:
            cluster = None
            if fleet and project is not None:
                cluster = _fleet_cluster_of(project, env, out[i].file)
            out[i] = dataclasses.replace(out[i], cluster=delivered_to(env, settings, cluster))
    return out


def _fleet_cluster_of(project: Project, env: str, file: str) -> str | None:
    """``<cluster>`` of ``rendered/<env>/<cluster>/...``, else ``None``."""
    try:
        rel = Path(file).resolve().relative_to((project.rendered_dir / env).resolve())
    except ValueError:
        return None
    return rel.parts[0] if len(rel.parts) >= 2 else None


def _has_stacks(project: Project) -> bool:
    try:
        project.stack_files()
    except InputError:
        return False
    return True


def validate_paths(
    paths: Sequence[str],
    *,
    version: tuple[int, int] | None = None,
    schema_locations: Sequence[str] = (),
    ignore_missing_schemas: bool = False,
    project: Project | None = None,
    stack: str | None = None,
    skip_checks: Sequence[str] = (),
    engine: Engine = "builtin",
    crds: Sequence[str] = (),
    skip_kinds: Sequence[str] = (),
    reject_kinds: Sequence[str] = (),
    strict: bool = False,
    progress: Progress = SILENT,
) -> Report:
    """Validate YAML files and folders (``-``: standard input): schemas (kubetrain's own engine,
    or kubeconform), then the semantic checks with the settings of the stack each file was
    rendered from. Files rendered by kubetrain name their Kubernetes version in their header;
    ``version`` overrides it. ``crds`` are CRD files or folders whose definitions custom
    resources are checked against first (see :mod:`kubetrain.validate.customresources`).
    ``skip_kinds`` and ``reject_kinds`` follow kubeconform's ``-skip`` and ``-reject``;
    ``strict`` makes warnings errors."""
    unknown = [rule for rule in skip_checks if rule not in RULES]
    if unknown:
        raise InputError.single(
            "--skip-check",
            f"unknown rule {', '.join(map(repr, unknown))}; rules: {', '.join(RULES)}",
        )
    executable = find_kubeconform() if engine == "kubeconform" else None
    validator = Validator(
        version or DEFAULT_VERSION,
        schema_locations,
        ignore_missing_schemas=ignore_missing_schemas,
        schemas=engine == "builtin",
        crds=crds,
    )
    progress.phase("reading")
    items, early, versions, texts = read_objects(paths, fast=read_generated, chunks=_CHUNKS)
    progress.phase("validating", len(items))
    by_stack = _check_groups(project, items, stack)
    items = _on_clusters(project, items, by_stack)
    groups = [
        ([items[i] for i in indexes], indexes, CheckSettings.from_stack(settings, skip_checks))
        for settings, indexes in by_stack.values()
    ]
    # Each object is checked on every core, while the rules over the objects of each group
    # together run in the first process forked for the checks, before its share of them.
    findings, report = alongside_mapped(
        lambda: [semantic_findings(group, settings) for group, _, settings in groups],
        lambda chunks: validator.validate(
            items, {} if version else versions, progress.advance, chunks
        ),
        fork=len(items) >= OBJECTS_ALONGSIDE,
    )
    for (_, indexes, _), found in zip(groups, findings, strict=True):
        add_findings([report.results[i] for i in indexes], found)
    if executable is not None:
        by_version: dict[tuple[int, int], list[str]] = {}
        for item in items:
            v = version or versions.get(item.file, DEFAULT_VERSION)
            files = by_version.setdefault(v, [])
            if item.file not in files:
                files.append(item.file)
        for v, files in sorted(by_version.items()):
            merge_results(
                report,
                run_kubeconform(
                    files,
                    version=v,
                    locations=schema_locations,
                    ignore_missing_schemas=ignore_missing_schemas,
                    executable=executable,
                ),
            )
    report.results = sorted(early + report.results, key=lambda r: (r.file, r.document))
    report.filter_kinds(skip_kinds, reject_kinds)
    if strict:
        report.make_strict()
    add_lines(report, texts)
    return report


# --- kubetrain convert -----------------------------------------------------------------------


def convert(
    project: Project,
    files: Sequence[Path] = (),
    stack: str | None = None,
    jobs: Sequence[str] = (),
    *,
    mode: ConvertMode = "write",
    skip_refused: bool = False,
) -> ConvertResult:
    """``kubetrain convert``: the v1 jobs of a stack (``stack``; those of ``files`` and ``jobs``
    among them) or of job ``files`` as TrainJobs (:mod:`kubetrain.convert`). A job refused is an
    input error, and nothing is written, unless ``skip_refused`` (the others go on). Mode
    ``write`` writes the files beside their sources, ``in-place`` replaces the job files, and
    neither ever writes over a file that exists; ``stdout`` and ``compare`` write nothing."""
    stack_file = project.stack_files([stack])[0] if stack is not None else None
    from .convert.run import plan_conversion

    result = plan_conversion(
        project.root, stack_file, files, jobs, mode=mode, skip_refused=skip_refused
    )
    if result.problems and not skip_refused:
        raise InputError(result.problems)
    if mode in ("write", "in-place") and result.files:
        _write_converted(project, result)
    return result


def _write_converted(project: Project, result: ConvertResult) -> None:
    """Write the converted files, all or none; never over a file that exists (but the job file
    ``in-place`` replaces)."""
    existing = [f.path for f in result.files if not f.replaces and os.path.lexists(f.path)]
    if existing:
        raise InputError(
            Problem(
                display_path(p),
                None,
                (),
                "exists; kubetrain convert never overwrites a file: remove it, or print the "
                "conversion with --stdout",
            )
            for p in existing
        )
    _refuse_links(project.root, {f.path: f.text for f in result.files})
    written: list[tuple[Path, bytes | None]] = []
    try:
        for f in result.files:
            before = read_file(f.path) if f.replaces else None
            _replace_file(f.path, f.text.encode("utf-8"))
            written.append((f.path, before))
    except OSError:
        for path, before in reversed(written):  # all or nothing: put back what was there
            if before is None:
                path.unlink(missing_ok=True)
            else:
                _replace_file(path, before)
        raise


# --- kubetrain schema ------------------------------------------------------------------------

#: File names of the editor schemas (stack file and job document) ``kubetrain schema`` writes.
STACK_SCHEMA_FILE = "kubetrain-stack.schema.json"
JOB_SCHEMA_FILE = "kubetrain-job.schema.json"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


#: The ``$comment`` of every schema ``kubetrain schema`` writes: how it knows a file it may
#: replace from a user's file of the same name.
SCHEMA_MARK = "Generated by kubetrain. Do not edit: run `kubetrain schema`."


def schema_files(version: tuple[int, int] = DEFAULT_VERSION) -> dict[str, str]:
    """Relative path -> content of every schema ``kubetrain schema`` writes: the editor schemas
    of the stack file and of a job document, and a kubeconform-layout schema
    (``<group>/<kind>_<version>.json``, strict) for each CRD kubetrain owns. Each carries
    :data:`SCHEMA_MARK` as its ``$comment``."""
    schemas = {
        STACK_SCHEMA_FILE: stack_schema(version),
        JOB_SCHEMA_FILE: job_schema(version),
    }
    for info in owned_crds():
        path = f"{info.group}/{info.kind.lower()}_{info.version}.json"
        schemas[path] = kubeconform_schema(openapi_schema(info, version))
    return {path: _json({"$comment": SCHEMA_MARK, **schema}) for path, schema in schemas.items()}


def write_schemas(
    project: Project, out: Path | None = None, version: tuple[int, int] = DEFAULT_VERSION
) -> list[tuple[Path, bool]]:
    """Write :func:`schema_files` under ``out`` (default ``schemas/`` in the project root);
    returns each file and whether it changed. A file of the same name that kubetrain did not
    write (no :data:`SCHEMA_MARK`), or anything but a regular file there, is an input error,
    and then nothing is written."""
    folder = out if out is not None else project.root / "schemas"
    if os.path.lexists(folder) and not folder.is_dir():
        raise InputError.single(display_path(folder), "is a file, expected a folder")
    files = schema_files(version)
    current: dict[str, bytes | None] = {}
    problems = []
    for rel in files:
        path = folder / rel
        current[rel] = None
        if not os.path.lexists(path):
            continue
        mode = os.lstat(path).st_mode
        data = read_file(path) if stat.S_ISREG(mode) else None
        why = f"is {file_kind(mode)}" if data is None else _not_a_schema_of_ours(data)
        if why:
            problems.append(
                Problem(
                    display_path(path), None, (), f"{why}; kubetrain schema will not replace it"
                )
            )
        current[rel] = data
    if problems:
        raise InputError(problems)
    written = []
    for rel, text in files.items():
        path = folder / rel
        data = text.encode("utf-8")
        changed = current[rel] != data
        if changed:
            _replace_file(path, data)
        written.append((path, changed))
    return written


def _not_a_schema_of_ours(data: bytes) -> str | None:
    try:
        schema = json.loads(data)
    except (ValueError, RecursionError):
        return "is not JSON"
    if not isinstance(schema, dict) or schema.get("$comment") != SCHEMA_MARK:
        # Schemas written before kubetrain marked them have no $comment either: those are
        # deleted once by hand, since nothing tells them from a user's file.
        return (
            "was not written by kubetrain schema (its $comment is not kubetrain's; a schema "
            "from a kubetrain that did not mark them yet can be deleted)"
        )
    return None


def _replace_file(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a new file renamed over the old one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, staging = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        exc.filename = exc.filename or str(path)
        raise
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(staging, 0o644)
        os.replace(staging, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        if isinstance(exc, OSError):
            exc.filename = exc.filename or str(path)
        raise


# --- kubetrain init ---------------------------------------------------------------------------

_PULUMI_PROJECT = """\
# A kubetrain project (created by `kubetrain init`): the stacks in stacks/ are Pulumi stack
# settings files, read by `kubetrain render` and by `pulumi up -s <stack>` (whose program,
# stacks/__main__.py, deploys what `kubetrain render` writes).
name: {name}
description: Distributed training jobs rendered by kubetrain
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: venv
main: stacks/
stackConfigDir: stacks
"""

_PROGRAM = """\
\"\"\"The Pulumi program: `pulumi up -s <stack>` deploys what `kubetrain render --stack <stack>`
writes, one kubetrain component per job (created by `kubetrain init`).\"\"\"

from pathlib import Path

from components.program import main

if __name__ == "__main__":
    main(Path(__file__).resolve().parent)
"""

_REQUIREMENTS = """\
# What this project runs: kubetrain (its Pulumi extra for `pulumi up`), pinned; every package it
# installs is pinned with its hash in requirements.lock. Install both (as CI does):
#   pip install --require-hashes --no-deps -r requirements.lock
#   pip install --no-deps -r requirements.txt && pip check
{requirement}
"""

_PROGRAM_REQUIREMENTS = """\
# Pulumi installs the program's dependencies from the program's folder: the project's, at the
# versions of its lock.
-c ../requirements.lock
-r ../requirements.txt
"""

_GITIGNORE = """\
# Created by `kubetrain init`.
venv/
.venv/
__pycache__/
*.pyc
kubetrain-validate.xml
"""

_PRE_COMMIT = """\
# pre-commit hooks (https://pre-commit.com), created by `kubetrain init`: they run the kubetrain
# of requirements.txt, installed in the environment you commit from (pip install -r
# requirements.txt), so commits, CI and `pulumi up` use one version.
repos:
  - repo: local
    hooks:
      - id: kubetrain-render
        name: kubetrain render (rewrite rendered/ from the stacks)
        entry: kubetrain render
        language: system
        pass_filenames: false
        files: ^(stacks/|rendered/|Pulumi\\.ya?ml$)
      - id: kubetrain-validate
        name: kubetrain validate (schemas and semantic checks)
        entry: kubetrain validate
        language: system
        pass_filenames: false
        files: ^(stacks/|rendered/)
"""

_WORKFLOW = """\
# kubetrain in CI (created by `kubetrain init`): a pull request fails when rendered/ is not what
# the stacks render, or when the rendered objects fail kubetrain's schemas or checks.
name: kubetrain
on:
  pull_request:
  push:
    branches: [main]
permissions:
  contents: read
jobs:
  kubetrain:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install kubetrain (requirements.txt) and what it needs (requirements.lock, hashed)
        run: |
          pip install --require-hashes --no-deps -r requirements.lock
          pip install --no-deps -r requirements.txt
          pip check
      - name: rendered/ is up to date
        run: kubetrain diff
      - name: rendered/ is valid
        run: kubetrain validate
      - name: Validation report for the CI's test view
        if: always()
        run: kubetrain validate --output junit > kubetrain-validate.xml || true
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: kubetrain-validate
          path: kubetrain-validate.xml
"""


def lock_text() -> str:
    """The lock of every package ``kubetrain[pulumi]`` installs, pinned with its hash (shipped
    in the package, written by ``ci/lock.py``), as ``kubetrain init`` writes it."""
    from importlib.resources import files

    return (files("kubetrain") / "lock" / "requirements.lock").read_text(encoding="utf-8")


def kubetrain_requirement() -> str:
    """The requirement that installs this kubetrain (with its Pulumi extra): from where it was
    installed when pip recorded a URL (PEP 610 ``direct_url.json``: a git commit, an archive, or
    a folder of its source), else the release of :data:`kubetrain.__version__`."""
    import importlib.metadata as metadata

    from . import __version__

    for dist in metadata.distributions(name="kubetrain"):
        text = dist.read_text("direct_url.json")
        if not text:
            continue
        try:
            direct = json.loads(text)
        except ValueError:
            continue
        url = direct.get("url")
        if not isinstance(url, str):
            continue
        vcs = direct.get("vcs_info") or {}
        if vcs.get("vcs") == "git" and vcs.get("commit_id"):
            return f"kubetrain[pulumi] @ git+{url}@{vcs['commit_id']}"
        return f"kubetrain[pulumi] @ {url}"
    return f"kubetrain[pulumi]=={__version__}"


_STACK = """\
# yaml-language-server: $schema=../schemas/kubetrain-stack.schema.json
# Stack "{stack}": `kubetrain render --stack {stack}` writes rendered/{stack}/.
config:
  kubetrain:namespace: {namespace}
  kubetrain:kubernetesVersion: "{version}"
  # Job documents ({kinds}), one or more per file.
  kubetrain:jobFiles:
    - stacks/jobs/*.yaml
  # Per-environment changes to those jobs, as Kustomize patches (docs/stack-file.md):
  # kubetrain:patches:
  #   - target: {{kind: TFJob, name: mnist}}
  #     patch:
  #       spec: {{tfReplicaSpecs: {{Worker: {{replicas: 4}}}}}}
  # Plain Kubernetes objects rendered beside the jobs (ConfigMaps, PersistentVolumeClaims...):
  # kubetrain:manifests:
  #   - apiVersion: v1
  #     kind: ConfigMap
  #     metadata: {{name: mnist-settings}}
  #     data: {{steps: "1000"}}
  # The cluster(s) this environment delivers to (docs/gitops.md). Without it the environment is
  # a cluster of its own; two environments naming one cluster are validated together; several
  # clusters are a fleet, rendered/{stack}/<cluster>/ each, with per-cluster overrides:
  # kubetrain:clusters:
  #   - name: gpu-east
  #     server: https://gpu-east.example.com:6443      # Argo CD destination (else its name)
  #     kubeConfig: {{secretRef: {{name: gpu-east-kubeconfig}}}}   # Flux on a hub cluster
  #     nodeSelector: {{topology.kubernetes.io/region: us-east-1}}
"""

_JOB = """\
# yaml-language-server: $schema=../../schemas/kubetrain-job.schema.json
# A distributed TFJob: one parameter server and two workers (Kubeflow's dist-mnist example).
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist
spec:
  runPolicy:
    # A parameter server never exits: stop the job a day after it starts.
    activeDeadlineSeconds: 86400
  tfReplicaSpecs:
    PS:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: tensorflow
              image: kubeflow/tf-dist-mnist-test:1.0
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: tensorflow
              image: kubeflow/tf-dist-mnist-test:1.0
              resources:
                requests: {cpu: "1", memory: 2Gi}
                limits: {cpu: "1", memory: 2Gi}
"""


def _stack_text(stack: str, namespace: str) -> str:
    return _STACK.format(
        stack=stack,
        # A name YAML would read as something else (0, yes, null) is quoted.
        namespace=namespace if is_plain(namespace) else f'"{namespace}"',
        version=f"{DEFAULT_VERSION[0]}.{DEFAULT_VERSION[1]}",
        kinds=", ".join(sorted({kind for _, kind in job_kinds()})),
    )


def _init_problems(stack: str, namespace: str | None) -> None:
    problems = []
    if problem := stack_name_problem(stack):
        problems.append(f"--stack: {problem}")
    elif stack in RESERVED_STACK_NAMES:
        problems.append(f"--stack: the stack name {stack!r} is reserved (rendered/clusters/)")
    if namespace is not None and (problem := DNS1123_LABEL.check(namespace)):
        problems.append(f"--namespace: {printable(problem)}")
    if problems:
        raise InputError.single("kubetrain init", "; ".join(problems))


def add_stack(
    project: Project, stack: str, namespace: str | None = None, copy_of: str | None = None
) -> Path:
    """Add environment ``stack`` to an existing project: ``Pulumi.<stack>.yaml`` in its stacks
    folder, a copy of environment ``copy_of``'s stack file (its header line renamed; its
    namespace replaced when ``namespace`` is given), else a new stack reading the project's
    job files. Refuses to overwrite a stack file; writes nothing else."""
    _init_problems(stack, namespace)
    folder = project.stacks_dir
    target = folder / f"Pulumi.{stack}.yaml"
    if os.path.lexists(target) or os.path.lexists(folder / f"Pulumi.{stack}.yml"):
        raise InputError.single(
            display_path(target), "exists; kubetrain init never overwrites a file"
        )
    if copy_of is None:
        text = _stack_text(stack, namespace or "ml")
    else:
        (source,) = project.stack_files([copy_of])
        text = source.read_text(encoding="utf-8")
        text = re.sub(
            rf'^# Stack "{re.escape(copy_of)}"(.*)$',
            lambda m: f'# Stack "{stack}"' + m[1].replace(copy_of, stack),
            text,
            count=1,
            flags=re.M,
        )
        if namespace is not None:
            text, found = re.subn(
                r"^(\s*kubetrain:namespace:\s*)\S+",
                lambda m: m[1] + (namespace if is_plain(namespace) else f'"{namespace}"'),
                text,
                count=1,
                flags=re.M,
            )
            if not found:
                raise InputError.single(
                    display_path(source),
                    "--namespace: the stack file sets no kubetrain:namespace to replace; "
                    "copy it without --namespace and set the namespace yourself",
                )
    _refuse_links(folder, {target: text})
    try:
        _replace_file(target, text.encode("utf-8"))
    except OSError as exc:
        raise InputError.single(
            display_path(exc.filename or target), f"cannot be written: {exc.strerror}"
        ) from None
    return target


def init_project(folder: Path, stack: str = "dev", namespace: str = "ml") -> list[Path]:
    """Create a project in ``folder`` that runs end to end: ``Pulumi.yaml`` and its program
    (``stacks/__main__.py``), ``requirements.txt`` pinning this kubetrain, a stack
    (``stacks/Pulumi.<stack>.yaml``) with a TFJob in ``stacks/jobs/``, the editor schemas of
    both (``schemas/``), the CI workflow, the pre-commit hooks and a ``.gitignore``. Nothing is
    written when any of them exists."""
    _init_problems(stack, namespace)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-.") or "kubetrain"
    editor = schema_files()
    files = {
        folder / "Pulumi.yaml": _PULUMI_PROJECT.format(name=name),
        folder / "requirements.txt": _REQUIREMENTS.format(requirement=kubetrain_requirement()),
        folder / "requirements.lock": lock_text(),
        folder / ".gitignore": _GITIGNORE,
        folder / ".pre-commit-config.yaml": _PRE_COMMIT,
        folder / ".github" / "workflows" / "kubetrain.yml": _WORKFLOW,
        folder / "stacks" / "__main__.py": _PROGRAM,
        folder / "stacks" / "requirements.txt": _PROGRAM_REQUIREMENTS,
        folder / "stacks" / f"Pulumi.{stack}.yaml": _stack_text(stack, namespace),
        folder / "stacks" / "jobs" / "mnist.yaml": _JOB,
        # Completion and checks in editors (the modelines of the stack and job files): what
        # `kubetrain schema` rewrites after an upgrade.
        folder / "schemas" / STACK_SCHEMA_FILE: editor[STACK_SCHEMA_FILE],
        folder / "schemas" / JOB_SCHEMA_FILE: editor[JOB_SCHEMA_FILE],
    }
    # lexists: a dangling symbolic link is a file there too (writing would follow it).
    existing = [p for p in files if os.path.lexists(p)]
    if os.path.lexists(folder / "Pulumi.yml"):
        existing.append(folder / "Pulumi.yml")
    if existing:
        raise InputError(
            Problem(display_path(p), None, (), "exists; kubetrain init never overwrites a file")
            for p in existing
        )
    _refuse_links(folder, files)
    written: list[Path] = []
    made: list[Path] = []
    try:
        for path, text in files.items():
            for parent in reversed(path.relative_to(folder).parents):
                if not (folder / parent).exists():
                    (folder / parent).mkdir()
                    made.append(folder / parent)
            _replace_file(path, text.encode("utf-8"))
            written.append(path)
    except OSError as exc:
        # All or nothing: what was written is removed again (newest first).
        for path in reversed(written):
            path.unlink(missing_ok=True)
        for directory in reversed(made):
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise InputError.single(
            display_path(exc.filename or folder), f"cannot be written: {exc.strerror}"
        ) from None
    return list(files)


def _refuse_links(folder: Path, files: Mapping[Path, str]) -> None:
    """Refuse to write through a symbolic link: the project folder and every folder init
    writes into must be plain folders (a link could send a file anywhere)."""
    problems = []
    checked: set[Path] = set()
    for path in files:
        for parent in [folder, *(folder / p for p in path.relative_to(folder).parents)]:
            if parent in checked:
                continue
            checked.add(parent)
            if parent.is_symlink():
                problems.append(
                    Problem(
                        display_path(parent),
                        None,
                        (),
                        "is a symbolic link; kubetrain init writes into plain folders only",
                    )
                )
            elif parent.exists() and not parent.is_dir():
                problems.append(Problem(display_path(parent), None, (), "exists and is no folder"))
    if problems:
        raise InputError(problems)


# --- kubetrain explain ------------------------------------------------------------------------

_WRAP = 76


def _version_rank(api_version: str) -> tuple[int, int, int]:
    """kubectl's preference among versions of one kind: GA before beta before alpha, higher
    numbers first (``k8s.io/apimachinery/pkg/version.CompareKubeAwareVersionStrings``)."""
    m = re.search(r"v(\d+)(?:(alpha|beta)(\d+))?$", api_version)
    if not m:
        return (0, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[m[2]]
    return (stage, int(m[1]), int(m[3] or 0))


def _explained_kinds(version: tuple[int, int]) -> dict[str, dict[str, str]]:
    """Lower-case kind -> {apiVersion: kind} of every job kind and built-in kind."""
    out: dict[str, dict[str, str]] = {}
    for kind, api_versions in builtin_kinds(version).items():
        for api in api_versions:
            out.setdefault(kind.lower(), {})[api] = kind
    for api, kind in job_kinds():
        out.setdefault(kind.lower(), {})[api] = kind
    return out


def explain(
    target: str, api_version: str | None = None, version: tuple[int, int] = DEFAULT_VERSION
) -> str:
    """``kubetrain explain KIND[.field.path]``: the documentation of a kind or field, in
    ``kubectl explain``'s layout (list items and map values are stepped through); and of a
    stack-file key, ``kubetrain explain kubetrain:KEY[.field.path]``."""
    if target.startswith(f"{CONFIG_NAMESPACE}:"):
        return _explain_stack_key(target, version)
    name, *path = target.split(".")
    kinds = _explained_kinds(version)
    found = kinds.get(name.lower())
    if not found:
        close = difflib.get_close_matches(name.lower(), list(kinds), n=1)
        hint = f"; did you mean {found_kind(kinds, close[0])!r}?" if close else ""
        jobs = ", ".join(sorted({k for _, k in job_kinds()}))
        raise InputError.single(
            target,
            f"unknown kind {name!r}{hint} (job kinds: {jobs}, or any Kubernetes kind; a "
            f"stack-file key: {CONFIG_NAMESPACE}:KEY)",
        )
    if api_version is not None and api_version not in found:
        raise InputError.single(
            "--api-version",
            f"{found_kind(kinds, name.lower())} is served as {', '.join(sorted(found))}, "
            f"not {api_version}",
        )
    chosen = api_version or max(found, key=_version_rank)
    kind = found[chosen]
    node = kind_node(chosen, kind, version)
    assert node is not None
    node, field_name = _walk(node, path, kind, target)
    return _explanation(chosen, kind, field_name, node)


def _walk(node: Any, path: Sequence[str], where: str, target: str) -> tuple[Any, str]:
    """The node at ``path`` below ``node`` (list items and map values stepped through; a map
    key given by name must be one the map takes), with a did-you-mean when a step is none."""
    field_name = ""
    walked: list[str] = []
    for part in path:
        element = _element(node)
        child = element.child(part) if element is not None else None
        if child is None and element is not node:
            keys, any_case = _map_keys(node)
            taken = {k.lower() for k in keys} if any_case else set(keys)
            if keys and (part.lower() if any_case else part) not in taken:
                hint = did_you_mean(part, keys)
                raise InputError.single(
                    target,
                    f"{'.'.join([where, *walked])} has no key {part!r}{hint} (keys: "
                    f"{', '.join(keys)})",
                )
            child = node.child(part)  # a map key given by name (tfReplicaSpecs.Worker)
        if child is None:
            fields = [k for k, _, _ in (element or node).fields()]
            hint = did_you_mean(part, fields)
            raise InputError.single(
                target,
                f"{'.'.join([where, *walked])} has no field {part!r}{hint} (fields: "
                f"{', '.join(fields) or 'none'})",
            )
        node, field_name = child, part
        walked.append(part)
    return node, field_name


def _map_keys(node: Any) -> tuple[list[str], bool]:
    """The keys a map takes when they are a closed set (a kind's replica types; empty when any
    key goes), and whether they may be written in any case (TFJob's)."""
    schema = node.schema
    names = schema.get("propertyNames")
    if isinstance(names, dict) and isinstance(names.get("enum"), list):
        return [str(k) for k in names["enum"]], False
    keys = schema.get(REPLICA_TYPES_KEY)
    return ([str(k) for k in keys], True) if isinstance(keys, list) else ([], False)


def _explain_stack_key(target: str, version: tuple[int, int]) -> str:
    """``kubetrain explain kubetrain:gitops.argocd.retry``: a stack-file key or a field in it."""
    key, *path = target.split(".")
    schema = stack_schema(version)
    config = schema["properties"]["config"]["properties"]
    if key not in config:
        hint = did_you_mean(key, config)
        raise InputError.single(
            target, f"unknown stack-file key {key!r}{hint} (keys: {', '.join(sorted(config))})"
        )
    node, field_name = _walk(FieldNode(config[key], schema["$defs"]), path, key, target)
    lines = [f"STACK KEY:  {key}", ""]
    if field_name:
        lines += [f"FIELD: {field_name} <{node.type_name}>", ""]
    return "\n".join(lines) + "\n" + _field_text(node)


def _element(node: Any) -> Any:
    """What ``explain`` lists the fields of: a list's items, a map's values, else the node."""
    schema = node.schema
    if "items" in schema:
        return node.child(0)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and extra and not schema.get("properties"):
        return node.child("*")
    return node


def found_kind(kinds: dict[str, dict[str, str]], lower: str) -> str:
    return next(iter(kinds[lower].values()))


def _wrapped(text: str, indent: str) -> list[str]:
    out: list[str] = []
    for paragraph in text.strip().split("\n"):
        width = _WRAP - len(indent)
        out += textwrap.wrap(paragraph, width, break_on_hyphens=False, break_long_words=False)
        out += [] if paragraph.strip() else [""]
    return [f"{indent}{line}".rstrip() for line in out]


def _explanation(api_version: str, kind: str, field_name: str, node: Any) -> str:
    group, ver = split_api_version(api_version)
    lines = [f"GROUP:      {group}"] if group else []
    lines += [f"KIND:       {kind}", f"VERSION:    {ver}", ""]
    if field_name:
        lines += [f"FIELD: {field_name} <{node.type_name}>", ""]
    return "\n".join(lines) + "\n" + _field_text(node)


def _field_text(node: Any) -> str:
    """A node's description, enum and fields, as ``kubectl explain`` lays them out."""
    lines = ["DESCRIPTION:", *_wrapped(node.description or "(no description)", "    ")]
    if node.enum:
        lines += ["", "ENUM:", *(f"    {value}" for value in node.enum)]
    body = _element(node)
    fields = list(body.fields()) if body is not None else []
    if fields:
        lines += ["", "FIELDS:"]
        for key, child, required in fields:
            marker = " -required-" if required else ""
            lines.append(f"  {key}\t<{child.type_name}>{marker}")
            lines += _wrapped(child.description, "    ") if child.description else []
            lines.append("")
        lines.pop()
    return "\n".join(lines) + "\n"
