"""``kubetrain convert`` as a function: which jobs, what files it writes and where, the stack
edits it proposes, the converted stack checked, and the comparisons (nothing is written here:
:func:`kubetrain.app.convert` writes).

Files are written beside what they come from and never over a file that exists:

* the TrainJobs of a job file ``<dir>/<name>.yaml`` in ``<dir>/trainjobs/<name>.yaml`` (with
  ``in_place``, in the job file itself, which then holds the TrainJobs only, after the file's
  own leading comments); of the jobs written inline in a stack file ``Pulumi.<env>.yaml``, in
  ``trainjobs/<env>.yaml`` beside it;
* each TrainingRuntime in ``<dir>/trainjobs/runtimes/<job>.yaml`` (a manifest, for
  ``kubetrain:manifestFiles``).

A job file pattern such as ``<dir>/*.yaml`` reads neither folder: the stack loads as before
(its v1 jobs) until its file is changed to deliver the TrainJobs, so more jobs can be converted
and compared first.

The stack file is never edited: what to change in it (job files, manifest files, Kubeflow's
runtimes declared, the converted patches) is said (:attr:`ConvertResult.edits`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from ..builders.context import Target
from ..models.base import Mode as JobMode
from ..models.errors import InputError, Problem
from ..models.load import LoadedJob, Stack, load_stack, load_stack_data
from ..models.patches import PatchSource, patch_sources
from ..models.source import Document, display_path, load_documents, parse_documents, read_text
from ..models.stack import CONFIG_NAMESPACE
from ..render.yamlout import dump, dump_commented
from .compare import Comparison, compare
from .stack import ConvertedPatch, StackConversion, convert_stack, converted_stack, v1_jobs
from .trainjob import CONVERTIBLE_KINDS, Conversion

__all__ = ["ConvertResult", "OutputFile", "convert_json", "plan_conversion"]

Mode = Literal["write", "stdout", "in-place", "compare"]
#: The folder beside the v1 files that the TrainJobs are written to, and the one in it for
#: their TrainingRuntimes: a job file pattern such as ``<dir>/*.yaml`` reads neither, so the
#: stack loads as before until its file says to deliver them.
TRAINJOBS = "trainjobs"
RUNTIMES = "runtimes"


@dataclass(frozen=True)
class OutputFile:
    """A file ``kubetrain convert`` writes: where, what, and what it holds."""

    path: Path
    text: str
    #: "trainjobs" or "runtime"
    holds: str
    #: The file of the v1 jobs it comes from (a job file, or the stack file).
    source: Path | None = None
    #: Whether it replaces ``source`` (``in_place``).
    replaces: bool = False
    #: Whether every document of ``source`` is converted in it.
    whole: bool = True


@dataclass
class ConvertResult:
    """What ``kubetrain convert`` found and would write."""

    conversion: StackConversion
    files: list[OutputFile]
    #: What to change in the stack file, for people (``None`` without a stack).
    edits: list[str] = field(default_factory=list)
    #: The converted patches as stack-file entries, for programs.
    patches: list[ConvertedPatch] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    #: Jobs refused and patches not converted, located.
    problems: list[Problem] = field(default_factory=list)
    #: Notes: what converts with a difference worth saying, located at the v1 field.
    warnings: list[Problem] = field(default_factory=list)


def _sources(stack: Stack) -> list[tuple[int, PatchSource]]:
    if stack.document is None or not stack.settings.patches:
        return []
    problems: list[Problem] = []
    found = patch_sources(stack.document, stack.settings.patches, stack.project_root, problems)
    if problems:
        raise InputError(problems)
    return [(int(s.entry.prefix[2]), s) for s in found]


def _file_stack(root: Path, files: Sequence[Path]) -> Stack:
    """The job files given without a stack, as a stack of kubetrain's default settings (in
    operator mode)."""
    patterns = []
    for file in files:
        try:
            rel = file.resolve().relative_to(root.resolve())
        except ValueError:
            raise InputError.single(
                display_path(file),
                f"is outside the project {display_path(root)}: convert the files of a project",
            ) from None
        patterns.append(glob_escape(rel.as_posix()))
    # Operator mode: the jobs are judged as their operator's webhook judges them, not by what
    # kubetrain's native mode cannot do (an elastic job's metrics).
    data = {
        "config": {
            f"{CONFIG_NAMESPACE}:jobFiles": patterns,
            f"{CONFIG_NAMESPACE}:mode": JobMode.OPERATOR.value,
        }
    }
    return load_stack_data(
        data,
        name="convert",
        file=root / "Pulumi.convert.yaml",
        project_root=root,
        label=", ".join(display_path(f) for f in files),
    )


def glob_escape(path: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", path)


def _select(raw: Stack, files: Sequence[Path], names: Sequence[str], where: str) -> list[LoadedJob]:
    jobs = v1_jobs(raw)
    if files:
        wanted = {f.resolve() for f in files}
        jobs = [j for j in jobs if Path(j.source.file).resolve() in wanted]
    if names:
        known = {j.document.name: j for j in jobs} | {
            f"{j.document.namespace}/{j.document.name}": j for j in jobs
        }
        missing = [n for n in names if n not in known]
        if missing:
            shown = ", ".join(sorted({j.document.name for j in jobs})) or "none"
            raise InputError.single(
                "--job",
                f"no job of the training operator or the MPI Operator named "
                f"{', '.join(missing)} in {where} (its jobs: {shown})",
            )
        jobs = [j for j in jobs if j.document.name in names or j.title.split(" ")[1] in names]
    if not jobs:
        raise InputError.single(
            where,
            "holds no job of the training operator or the MPI Operator to convert "
            f"({', '.join(CONVERTIBLE_KINDS)}, PaddleJob)",
        )
    return jobs


def plan_conversion(
    root: Path,
    stack_file: Path | None,
    files: Sequence[Path] = (),
    names: Sequence[str] = (),
    *,
    mode: Mode = "write",
    skip_refused: bool = False,
) -> ConvertResult:
    """Convert the v1 jobs of ``stack_file`` (all, or those of ``files`` and ``names``), or of
    ``files`` alone with kubetrain's default settings; check the converted stack loads and
    builds; with ``mode == "compare"``, compare each job with its TrainJob. Refused jobs are
    :attr:`ConvertResult.problems`; the caller decides (``skip_refused``) whether the others go
    on without them."""
    if stack_file is not None:
        raw = load_stack(stack_file, project_root=root, patched=False)
        patched = load_stack(stack_file, project_root=root)
        where = display_path(stack_file)
    else:
        if not files:
            raise InputError.single(
                "kubetrain convert", "give job files, or a stack with --stack ENV"
            )
        raw = patched = _file_stack(root, files)
        where = ", ".join(display_path(f) for f in files)
    selected = _select(raw, files, names, where)
    result = convert_stack(raw, selected, _sources(raw))
    problems = [o.problem for o in result.refused if o.problem is not None]
    for p in result.patches:
        for message in p.problems:
            problems.append(p.entry.problem((), f"this patch cannot be converted: {message}"))
    warnings = [_warning(c.job, n.path, n.message) for c in result.converted for n in c.notes]
    out = ConvertResult(result, [], patches=result.patches, problems=problems, warnings=warnings)
    if problems and not skip_refused:
        return out
    if not result.converted:
        return out
    out.files = _files(result, stack_file, mode == "in-place")
    jobs, runtimes = _documents(out.files)
    label = f"{where} as converted"
    converted = converted_stack(result, jobs, runtimes, label=label)
    _build(converted)
    if mode == "compare":
        native = converted_stack(result, jobs, runtimes, label=label, native=True)
        by_title = {j.title: j for j in patched.jobs}
        trainjobs = {(j.document.namespace, j.document.name): j for j in native.jobs}
        for c in result.converted:
            v1 = by_title[c.job.title]
            v2 = trainjobs[(c.job.document.namespace, c.name)]
            out.comparisons.append(compare(c, v1, patched, v2, native))
    if stack_file is not None:
        out.edits = _edits(result, out.files, stack_file, root)
    return out


def _warning(job: LoadedJob, path: Sequence[str | int], message: str) -> Problem:
    problem = job.source.problem(path, f"{job.title}: {message}")
    return Problem(problem.file, problem.line, problem.path, problem.message, severity="warning")


def _build(stack: Stack) -> None:
    from ..builders import build_stack

    build_stack(stack, Target.RENDER)


def _documents(files: Sequence[OutputFile]) -> tuple[list[Document], list[Document]]:
    """The written files as the stack will read them (their lines for messages)."""
    jobs: list[Document] = []
    runtimes: list[Document] = []
    for f in files:
        docs = parse_documents(f.text, display_path(f.path))
        (jobs if f.holds == "trainjobs" else runtimes).extend(docs)
    return jobs, runtimes


def _notes_comment(conversion: Conversion) -> str:
    if not conversion.notes:
        return ""
    lines = ["", "What differs (kubetrain convert's notes):"]
    lines += [f"- {n.message}" for n in conversion.notes]
    return "\n".join(lines)


def _trainjob_text(conversions: Sequence[Conversion]) -> str:
    parts = []
    for c in conversions:
        comments = dict(c.trainjob_comments)
        comments[()] = comments.get((), "") + _notes_comment(c)
        parts.append(dump_commented(c.trainjob, comments))
    return "---\n".join(parts)


def _leading_comments(path: Path) -> str:
    """The comment lines a file starts with (kept at the top when it is converted in place)."""
    out = []
    for line in read_text(path).splitlines():
        if not line.startswith("#"):
            break
        out.append(line)
    return "".join(f"{line}\n" for line in out)


def _files(result: StackConversion, stack_file: Path | None, in_place: bool) -> list[OutputFile]:
    by_source: dict[str, list[Conversion]] = {}
    for c in result.converted:
        by_source.setdefault(c.job.source.file, []).append(c)
    out: list[OutputFile] = []
    stack_shown = display_path(stack_file) if stack_file is not None else None
    stack_file = Path(os.path.abspath(stack_file)) if stack_file is not None else None
    for source, conversions in by_source.items():
        path = Path(os.path.abspath(source))
        inline = source == stack_shown
        folder = (stack_file.parent if inline and stack_file else path.parent) / TRAINJOBS
        if inline:
            target = folder / f"{result.stack.name}.yaml"
        elif in_place:
            target = path
        else:
            target = folder / path.name
        text = _trainjob_text(conversions)
        whole = inline or _whole(path, conversions)
        if in_place and not inline:
            if not whole:
                raise InputError.single(
                    display_path(path),
                    "holds documents that are not converted: --in-place replaces a file only "
                    "when every document of it converts (convert without --in-place to write "
                    "the TrainJobs beside it)",
                )
            text = _leading_comments(path) + text
        out.append(OutputFile(target, text, "trainjobs", path, in_place and not inline, whole))
        for c in conversions:
            if c.runtime is not None:
                out.append(
                    OutputFile(
                        folder / RUNTIMES / f"{c.name}.yaml",
                        dump_commented(c.runtime, c.runtime_comments),
                        "runtime",
                    )
                )
    return out


def _whole(path: Path, conversions: Sequence[Conversion]) -> bool:
    """Whether every document of a job file is converted."""
    return len(load_documents(path)) == len(conversions)


def _matches(pattern: str, rel: str) -> bool:
    """Whether a job-file pattern (a glob relative to the project) matches ``rel``."""
    if "**" in pattern:
        return fnmatch.fnmatchcase(rel, pattern)
    parts, names = pattern.split("/"), rel.split("/")
    return len(parts) == len(names) and all(
        fnmatch.fnmatchcase(n, p) for n, p in zip(names, parts, strict=True)
    )


def _rel(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def _edits(
    result: StackConversion, files: Sequence[OutputFile], stack_file: Path, root: Path
) -> list[str]:
    """What to change in the stack file to deliver the conversion, for people."""
    settings = result.stack.settings
    out: list[str] = []
    shown = display_path(stack_file)
    doc = result.stack.document
    for f in files:
        rel = _rel(f.path, root)
        if f.holds == "runtime":
            if not any(_matches(p, rel) for p in settings.manifest_files):
                out.append(f"kubetrain:manifestFiles: add {rel}")
            continue
        if f.replaces or f.source is None:
            continue
        src = _rel(f.source, root)
        if display_path(f.source) == shown:
            out.append(f"kubetrain:jobFiles: add {rel}")
            continue
        reads_new = any(_matches(p, rel) for p in settings.job_files)
        listed = [p for p in settings.job_files if p == src]
        if (
            not reads_new
            and listed
            and f.whole
            and len([p for p in settings.job_files if _matches(p, src)]) == 1
        ):
            out.append(f"kubetrain:jobFiles: replace {src} with {rel}")
            continue
        if not reads_new:
            out.append(f"kubetrain:jobFiles: add {rel}")
        if f.whole:
            out.append(
                f"{src} holds only the converted v1 jobs: delete it in the same change, or they "
                "run beside their TrainJobs (or convert it with --in-place)"
            )
        else:
            out.append(
                f"{src}: remove the converted jobs from it in the same change, or they run "
                "beside their TrainJobs"
            )
    for i in range(len(settings.jobs)):
        for c in result.converted:
            if c.job.source.file == shown and c.job.source.path[:3] == (
                "config",
                f"{CONFIG_NAMESPACE}:jobs",
                i,
            ):
                line = doc.line_of(("config", f"{CONFIG_NAMESPACE}:jobs", i)) if doc else None
                out.append(
                    f"kubetrain:jobs[{i}] (line {line}): remove {c.job.title} (its TrainJob is in "
                    f"{_rel(stack_file.parent / TRAINJOBS / f'{result.stack.name}.yaml', root)})"
                )
    declared = {d.name for d in settings.external.training_runtimes}
    for name in sorted({c.kubeflow_runtime for c in result.converted if c.kubeflow_runtime}):
        if name not in declared:
            out.append(
                f"kubetrain:external.trainingRuntimes: add {{name: {name}}} (Kubeflow's, which "
                "the Trainer installs)"
            )
    for p in result.patches:
        line = p.entry.line_of(())
        where = f"kubetrain:patches[{p.index}] (line {line})"
        if p.problems:
            out.append(f"{where}: cannot be converted: {'; '.join(p.problems)}")
            continue
        verb = "keep it (it targets other documents too) and add" if p.keep else "replace it with"
        body = (
            dump(cast(Any, p.entries))
            if p.entries
            else "nothing (it changes nothing of the TrainJob)\n"
        )
        out.append(f"{where}: {verb}:\n" + _indent(body))
    return [f"{shown}: {e}" for e in out]


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def _problem_json(p: Problem) -> dict[str, Any]:
    return {"file": p.file, "line": p.line, "path": _path_text(p.path), "message": p.message}


def _path_text(path: Sequence[str | int]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def convert_json(result: ConvertResult, mode: str) -> dict[str, Any]:
    """``kubetrain convert --output json``: the jobs converted (their TrainJob, runtime and
    notes), those refused, the files, the stack edits and converted patches, and with
    ``--compare`` each comparison (:func:`kubetrain.convert.compare.to_json`)."""
    from .compare import to_json

    jobs = []
    for c in result.conversion.converted:
        kind, name = c.runtime_ref
        jobs.append(
            {
                "v1": c.job.title,
                "source": str(c.job.source),
                "trainJob": c.trainjob,
                "runtimeRef": {"kind": kind, "name": name},
                "trainingRuntime": c.runtime,
                "pairs": [{"v1": p.v1, "v2": p.v2} for p in c.pairs],
                "notes": [{"path": _path_text(n.path), "message": n.message} for n in c.notes],
            }
        )
    out: dict[str, Any] = {
        "mode": mode,
        "converted": jobs,
        "refused": [_problem_json(p) for p in result.problems],
        "warnings": [_problem_json(p) for p in result.warnings],
        "files": [
            {
                "path": display_path(f.path),
                "holds": f.holds,
                "replaces": f.replaces,
                **({"text": f.text} if mode != "compare" else {}),
            }
            for f in result.files
        ],
        "stackEdits": result.edits,
        "patches": [
            {
                "index": p.index,
                "entries": p.entries,
                "keep": p.keep,
                "problems": p.problems,
                "jobs": p.jobs,
            }
            for p in result.patches
        ],
    }
    if mode == "compare":
        out["comparisons"] = to_json(result.comparisons)["jobs"]
    return out
