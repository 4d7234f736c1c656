"""What the commands do, as functions: load -> build -> validate -> write or compare.

The CLI is a thin shell over these; tests and other tools can call them directly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml

from .builders import Built, build_stack
from .builders.crd import kubeconform_schema, openapi_schema, owned_crds
from .builders.delivery import delivery_name, delivery_objects, engine_of
from .builders.namespaces import pod_security_labels
from .kube.names import DNS1123_SUBDOMAIN
from .models import CheckFailed, InputError, Stack, discover_stacks, load_stack
from .models.editor import job_schema, stack_schema
from .models.load import find_project_root, stack_name
from .models.source import display_path
from .models.stack import StackSettings
from .plan import EnvironmentPlan, plan_environment, read_rendered
from .render import (
    PendingTree,
    TreeChange,
    diff_tree,
    dump,
    file_header,
    iter_files,
    object_path,
    plan_grouped_files,
    remove_tree,
    write_tree,
)
from .render.tree import check_ownership, is_crd
from .validate import (
    DEFAULT_VERSION,
    RULES,
    CheckSettings,
    Located,
    Report,
    Validator,
    add_lines,
    check_objects,
    format_report,
    read_objects,
)
from .validate.kubeconform import find_kubeconform, merge_results, run_kubeconform

__all__ = [
    "JOB_SCHEMA_FILE",
    "STACK_SCHEMA_FILE",
    "Engine",
    "Planned",
    "Project",
    "diff",
    "plan",
    "prepare",
    "render",
    "schema_files",
    "validate_paths",
    "write_schemas",
]

#: Validation engines: kubetrain's own schemas, or kubeconform when it is on PATH.
Engine = Literal["builtin", "kubeconform"]
#: Folder under rendered/ that holds GitOps delivery objects, so no stack may be named so.
CLUSTERS_DIR = "clusters"
RESERVED_STACK_NAMES = {CLUSTERS_DIR}


@dataclass(frozen=True)
class Project:
    """A kubetrain project: the folder holding ``Pulumi.yaml`` and where its stacks live."""

    root: Path

    @classmethod
    def find(cls, start: Path | None = None) -> Project:
        return cls(find_project_root(start or Path.cwd()))

    @property
    def stacks_dir(self) -> Path:
        """``stackConfigDir`` of ``Pulumi.yaml`` (default: the project root)."""
        for name in ("Pulumi.yaml", "Pulumi.yml"):
            path = self.root / name
            if path.is_file():
                try:
                    data = (
                        yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) or {}
                    )
                except yaml.YAMLError as exc:
                    raise InputError.single(display_path(path), f"invalid YAML: {exc}") from None
                configured = data.get("stackConfigDir") if isinstance(data, dict) else None
                return self.root / configured if isinstance(configured, str) else self.root
        return self.root

    @property
    def rendered_dir(self) -> Path:
        return self.root / "rendered"

    def delivery_dir(self, env: str) -> Path:
        """``rendered/clusters/<env>``: the GitOps delivery objects of one environment."""
        return self.rendered_dir / CLUSTERS_DIR / env

    def stack_files(self, names: Sequence[str] = ()) -> list[Path]:
        return discover_stacks(self.stacks_dir, names)


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

    @property
    def trees(self) -> list[tuple[Path, dict[str, str]]]:
        """Every folder this plan owns and what it must hold (an empty delivery folder: none)."""
        out = [(self.out_dir, self.files)]
        if self.delivery_dir is not None:
            out.append((self.delivery_dir, self.delivery_files))
        return out

    def iter_files(self) -> Iterator[tuple[str, str]]:
        """The rendered files, emitted one by one."""
        return iter_files(
            ((b.obj, b.source) for b in self.built),
            self.stack.source_name,
            self.stack.settings.kubernetes_version,
        )

    @cached_property
    def files(self) -> dict[str, str]:
        """Relative path -> content of every rendered file."""
        return dict(self.iter_files())


def load_stacks(files: Sequence[Path], project: Project, *, jobs: bool = True) -> list[Stack]:
    """Load every stack, reporting the problems of all of them together (``jobs=False``: the
    settings only)."""
    stacks, problems = [], []
    for file in files:
        try:
            if stack_name(file) in RESERVED_STACK_NAMES:
                raise InputError.single(
                    display_path(file),
                    f"the stack name {stack_name(file)!r} is reserved "
                    "(rendered/clusters/ holds GitOps objects)",
                )
            stack = load_stack(file, project_root=project.root, jobs=jobs)
        except InputError as exc:
            problems += exc.problems
            continue
        stacks.append(stack)
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


def _delivery(stack: Stack, built: list[Built]) -> list[dict[str, Any]]:
    gitops = stack.settings.gitops
    if gitops is None:
        return []
    if problem := DNS1123_SUBDOMAIN.check(delivery_name(stack.name)):
        raise InputError.single(
            stack.source_name,
            f"the stack name {stack.name!r} cannot name GitOps objects: {problem}",
            path=("config", "kubetrain:gitops"),
        )
    return delivery_objects(
        gitops,
        stack.name,
        any(is_crd(b.obj) for b in built),
        namespace=stack.settings.namespace,
        namespace_labels=pod_security_labels(stack.settings),
    )


def prepare(stack: Stack, out_dir: Path, delivery_dir: Path | None = None) -> Planned:
    """Build and validate one stack, and lay out its files (nothing is written). With
    ``delivery_dir``, also the GitOps delivery objects of ``kubetrain:gitops``."""
    planned = _build(stack, out_dir, delivery_dir)
    _check(planned)
    return planned


def _build(stack: Stack, out_dir: Path, delivery_dir: Path | None) -> Planned:
    built = build_stack(stack, "render")
    delivery = _delivery(stack, built) if delivery_dir is not None else []
    what = f"GitOps delivery of rendered/{stack.name}"
    version = stack.settings.kubernetes_version
    groups: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for o in delivery:
        groups.setdefault(engine_of(o), []).append((o, what))
    delivery_files = plan_grouped_files(groups, stack.source_name, version) if delivery else {}
    return Planned(stack, built, out_dir, Report(), delivery_dir, delivery_files, delivery)


def _check(planned: Planned) -> None:
    """Schema validation and semantic checks of every object of a plan (fills its report)."""
    stack, out_dir = planned.stack, planned.out_dir
    shown = display_path(out_dir)
    items = [
        Located(b.obj, f"{shown}/{object_path(b.obj)}", source=b.source) for b in planned.built
    ]
    if planned.delivery_dir is not None:
        what = f"GitOps delivery of rendered/{stack.name}"
        shown = display_path(planned.delivery_dir)
        items += [
            Located(o, f"{shown}/{engine_of(o)}/{object_path(o).rpartition('/')[2]}", source=what)
            for o in planned.delivery
        ]
    report = Validator(stack.settings.version).validate(items)
    check_objects(items, report.results, CheckSettings.from_stack(stack.settings))
    if not report.ok:
        # Lines in the files as they would be written, so every finding reads FILE:LINE.
        failing = {r.file for r in report.results if r.findings}
        version = stack.settings.kubernetes_version
        add_lines(
            report,
            {
                item.file: file_header(stack.source_name, item.source, version) + dump(item.obj)
                for item in items
                if item.file in failing
            },
        )
    planned.report = report


def _selected(project: Project, names: Sequence[str], config: Path | None) -> list[Path]:
    if config is not None:
        if names:
            raise InputError.single("--config", "give either --config or --stack, not both")
        return [config]
    return project.stack_files(names)


def render(
    project: Project,
    names: Sequence[str] = (),
    config: Path | None = None,
    out: Path | None = None,
) -> list[TreeChange]:
    """Render stacks into their folders; nothing is written unless every stack is valid."""
    files = _selected(project, names, config)
    if out is not None and len(files) != 1:
        raise InputError.single(
            "--out", "--out needs exactly one stack (--config FILE or one --stack)"
        )
    stacks = load_stacks(files, project)
    plans = [
        _build(s, out, None)
        if out is not None
        else _build(s, project.rendered_dir / s.name, project.delivery_dir(s.name))
        for s in stacks
    ]
    # Environments whose stack file is gone: their output goes too (when all of it is ours).
    stale = _stale_folders(project, stacks) if not names and config is None else []
    for p in plans:  # refuse before anything is written
        for folder in (p.out_dir, p.delivery_dir):
            if folder is not None:
                check_ownership(folder, p.stack.source_name)
    for folder in stale:
        check_ownership(folder)
    # The trees are written to staging folders while the objects are validated: the file
    # system's work overlaps the checks. Nothing is swapped in unless every stack is valid.
    pending = [PendingTree(p.out_dir, p.iter_files(), p.stack.source_name) for p in plans]
    try:
        for p in plans:
            _check(p)
        failed = [p for p in plans if not p.report.ok]
        if failed:
            raise CheckFailed("".join(format_report(p.report) for p in failed))
        changes = []
        for p, tree in zip(plans, pending, strict=True):
            changes.append(tree.commit())
            if p.delivery_dir is not None:
                source = p.stack.source_name
                if p.delivery_files:
                    changes.append(write_tree(p.delivery_dir, p.delivery_files, source))
                elif p.delivery_dir.exists():
                    changes.append(remove_tree(p.delivery_dir, source))
        changes += [remove_tree(folder) for folder in stale]
    finally:
        for tree in pending:
            tree.abort()  # a no-op for a committed tree
    return changes


def diff(project: Project, names: Sequence[str] = ()) -> str:
    """Unified diff of ``rendered/`` against what the stacks produce now (empty: no drift).
    Without ``names``, the output of environments whose stack file is gone counts as drift."""
    stacks = load_stacks(project.stack_files(names), project)
    out = []
    for stack in stacks:
        planned = prepare(
            stack, project.rendered_dir / stack.name, project.delivery_dir(stack.name)
        )
        if not planned.report.ok:
            raise CheckFailed(format_report(planned.report))
        for folder, files in planned.trees:
            out.append(diff_tree(folder, files, display_path(folder)))
    if not names:
        out += [
            diff_tree(folder, {}, display_path(folder))
            for folder in _stale_folders(project, stacks)
        ]
    return "".join(out)


def plan(project: Project, names: Sequence[str] = ()) -> list[EnvironmentPlan]:
    """What rendering and applying the stacks now would change, per environment, against what
    ``rendered/`` holds (see :mod:`kubetrain.plan`). Nothing is written or validated. Without
    ``names``, environments whose stack file is gone are planned for deletion."""
    stacks = load_stacks(project.stack_files(names), project)
    out = []
    for stack in stacks:
        env_dir, delivery_dir = project.rendered_dir / stack.name, project.delivery_dir(stack.name)
        built = _build(stack, env_dir, delivery_dir)
        what = f"GitOps delivery of rendered/{stack.name}"
        after = [(b.obj, b.source) for b in built.built] + [(o, what) for o in built.delivery]
        out.append(_plan_folders(stack.name, [env_dir, delivery_dir], after))
    if not names:
        stale: dict[str, list[Path]] = {}
        for folder in _stale_folders(project, stacks):
            stale.setdefault(folder.name, []).append(folder)
        out += [_plan_folders(env, folders, []) for env, folders in sorted(stale.items())]
    return out


def _plan_folders(
    name: str, folders: list[Path], after: list[tuple[dict[str, Any], str]]
) -> EnvironmentPlan:
    before = [item for folder in folders for item in read_rendered(folder)]
    shown = [display_path(f) for f in folders if f.is_dir() or after]
    return plan_environment(name, shown, before, after)


def _stale_folders(project: Project, stacks: Sequence[Stack]) -> list[Path]:
    """``rendered/<env>`` and ``rendered/clusters/<env>`` folders with no stack file for
    ``<env>`` (its output would otherwise stay deployed by GitOps after the stack is deleted)."""
    current = {s.name for s in stacks} | RESERVED_STACK_NAMES
    out = []
    for base in (project.rendered_dir, project.rendered_dir / CLUSTERS_DIR):
        if base.is_dir():
            out += [
                child
                for child in sorted(base.iterdir())
                if child.is_dir() and not child.name.startswith(".") and child.name not in current
            ]
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
) -> Report:
    """Validate YAML files and folders: schemas (kubetrain's own engine, or kubeconform), then
    the semantic checks with the settings of the stack each file was rendered from. Files
    rendered by kubetrain name their Kubernetes version in their header; ``version`` overrides
    it. ``crds`` are CRD files or folders whose definitions custom resources are checked
    against first (see :mod:`kubetrain.validate.customresources`)."""
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
    items, early, versions, texts = read_objects(paths)
    report = validator.validate(items, {} if version else versions)
    for settings, indexes in _check_groups(project, items, stack).values():
        check_objects(
            [items[i] for i in indexes],
            [report.results[i] for i in indexes],
            CheckSettings.from_stack(settings, skip_checks),
        )
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
    add_lines(report, texts)
    return report


# --- kubetrain schema ------------------------------------------------------------------------

#: File names of the editor schemas (stack file and job document) ``kubetrain schema`` writes.
STACK_SCHEMA_FILE = "kubetrain-stack.schema.json"
JOB_SCHEMA_FILE = "kubetrain-job.schema.json"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_files(version: tuple[int, int] = DEFAULT_VERSION) -> dict[str, str]:
    """Relative path -> content of every schema ``kubetrain schema`` writes: the editor schemas
    of the stack file and of a job document, and a kubeconform-layout schema
    (``<group>/<kind>_<version>.json``, strict) for each CRD kubetrain owns."""
    files = {
        STACK_SCHEMA_FILE: _json(stack_schema(version)),
        JOB_SCHEMA_FILE: _json(job_schema(version)),
    }
    for info in owned_crds():
        path = f"{info.group}/{info.kind.lower()}_{info.version}.json"
        files[path] = _json(kubeconform_schema(openapi_schema(info, version)))
    return files


def write_schemas(
    project: Project, out: Path | None = None, version: tuple[int, int] = DEFAULT_VERSION
) -> list[tuple[Path, bool]]:
    """Write :func:`schema_files` under ``out`` (default ``schemas/`` in the project root);
    returns each file and whether it changed."""
    folder = out if out is not None else project.root / "schemas"
    if folder.exists() and not folder.is_dir():
        raise InputError.single(display_path(folder), "is a file, expected a folder")
    written = []
    for rel, text in schema_files(version).items():
        path = folder / rel
        changed = not path.is_file() or path.read_text(encoding="utf-8") != text
        if changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        written.append((path, changed))
    return written
