"""What the commands do, as functions: load -> build -> validate -> write or compare.

The CLI is a thin shell over these; tests and other tools can call them directly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from .build import Built, build_stack
from .build.crd import kubeconform_schema, openapi_schema, owned_crds
from .render import TreeChange, diff_tree, iter_files, object_path, write_tree
from .spec import CheckFailed, InputError, Stack, discover_stacks, load_stack
from .spec.editor import job_schema, stack_schema
from .spec.load import find_project_root, stack_name
from .spec.source import display_path
from .validate import (
    DEFAULT_VERSION,
    Located,
    Report,
    Validator,
    add_lines,
    format_report,
    read_objects,
)

__all__ = [
    "JOB_SCHEMA_FILE",
    "STACK_SCHEMA_FILE",
    "Planned",
    "Project",
    "diff",
    "plan",
    "render",
    "schema_files",
    "validate_paths",
    "write_schemas",
]

#: Folder under rendered/ that holds GitOps delivery objects, so no stack may be named so.
RESERVED_STACK_NAMES = {"clusters"}


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

    def stack_files(self, names: Sequence[str] = ()) -> list[Path]:
        return discover_stacks(self.stacks_dir, names)


@dataclass
class Planned:
    """A stack rendered in memory: its objects, files and their validation report."""

    stack: Stack
    built: list[Built]
    out_dir: Path
    report: Report

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


def load_stacks(files: Sequence[Path], project: Project) -> list[Stack]:
    """Load every stack, reporting the problems of all of them together."""
    stacks, problems = [], []
    for file in files:
        try:
            if stack_name(file) in RESERVED_STACK_NAMES:
                raise InputError.single(
                    display_path(file),
                    f"the stack name {stack_name(file)!r} is reserved "
                    "(rendered/clusters/ holds GitOps objects)",
                )
            stacks.append(load_stack(file, project_root=project.root))
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems)
    return stacks


def plan(stack: Stack, out_dir: Path) -> Planned:
    """Build and validate one stack, and lay out its files (nothing is written)."""
    built = build_stack(stack, "render")
    validator = Validator(stack.settings.version)
    shown = display_path(out_dir)
    report = validator.validate(
        Located(b.obj, f"{shown}/{object_path(b.obj)}", source=b.source) for b in built
    )
    return Planned(stack, built, out_dir, report)


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
    plans = [plan(s, out or project.rendered_dir / s.name) for s in stacks]
    failed = [p for p in plans if not p.report.ok]
    if failed:
        raise CheckFailed("".join(format_report(p.report) for p in failed))
    return [write_tree(p.out_dir, p.iter_files()) for p in plans]


def diff(project: Project, names: Sequence[str] = ()) -> str:
    """Unified diff of ``rendered/`` against what the stacks produce now (empty: no drift)."""
    stacks = load_stacks(project.stack_files(names), project)
    out = []
    for stack in stacks:
        planned = plan(stack, project.rendered_dir / stack.name)
        if not planned.report.ok:
            raise CheckFailed(format_report(planned.report))
        label = display_path(planned.out_dir)
        out.append(diff_tree(planned.out_dir, planned.files, label))
    return "".join(out)


def validate_paths(
    paths: Sequence[str],
    *,
    version: tuple[int, int] | None = None,
    schema_locations: Sequence[str] = (),
    ignore_missing_schemas: bool = False,
) -> Report:
    """Validate YAML files and folders. Files rendered by kubetrain name their Kubernetes
    version in their header; ``version`` overrides it."""
    validator = Validator(
        version or DEFAULT_VERSION, schema_locations, ignore_missing_schemas=ignore_missing_schemas
    )
    items, early, versions, texts = read_objects(paths)
    report = validator.validate(items, {} if version else versions)
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
