"""The v1 jobs of a stack converted together with the stack's patches that target them, and the
converted stack: the stack's settings and manifests with the TrainJobs and TrainingRuntimes
instead of the v1 jobs, loaded with every rule of a stack (so what ``kubetrain convert`` writes
is what ``kubetrain render`` accepts).

A patch of ``kubetrain:patches`` that targets a converted job is converted by what it does:
the job is converted as the patches up to it leave it, and as the patches before it leave it,
and the patch becomes the JSON patch (RFC 6902) between the two TrainJobs (and the two
TrainingRuntimes) it makes. A job that some patch makes need a TrainingRuntime gets one in
every state, so that each patch's change has a runtime to land in. A patch with which the job
is refused cannot be converted, and says why.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.base import Mode
from ..models.errors import InputError, Problem
from ..models.limits import MAX_PATCH_OPERATIONS
from ..models.load import LoadedJob, Stack, load_job_document, load_stack_data
from ..models.patches import PatchSource, apply_patches, targets
from ..models.runtimes import UPSTREAM, upstream_spec
from ..models.source import Document
from ..models.stack import CONFIG_NAMESPACE
from ..models.trainjob import TRAINING_RUNTIME
from .trainjob import Conversion, Refused, convert_job, is_v1_job

__all__ = [
    "ConvertedPatch",
    "JobOutcome",
    "StackConversion",
    "convert_stack",
    "converted_stack",
    "json_patch",
]

Doc = dict[str, Any]


def _escape(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def json_patch(before: Any, after: Any, path: str = "") -> list[Doc]:
    """The JSON patch (RFC 6902) that makes ``before`` ``after``, as a person writes one: a key
    added, removed or replaced where it changes, items appended to a list that grows at its
    end, a list replaced whole otherwise."""
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[Doc] = [
            {"op": "remove", "path": f"{path}/{_escape(k)}"} for k in before if k not in after
        ]
        for key, value in after.items():
            here = f"{path}/{_escape(key)}"
            if key not in before:
                ops.append({"op": "add", "path": here, "value": copy.deepcopy(value)})
            else:
                ops += json_patch(before[key], value, here)
        return ops
    if isinstance(before, list) and isinstance(after, list):
        if len(before) == len(after):
            return [
                op
                for i, (a, b) in enumerate(zip(before, after, strict=True))
                for op in json_patch(a, b, f"{path}/{i}")
            ]
        if len(after) > len(before) and after[: len(before)] == before:
            return [
                {"op": "add", "path": f"{path}/-", "value": copy.deepcopy(v)}
                for v in after[len(before) :]
            ]
    if before == after and type(before) is type(after):
        return []
    return [{"op": "replace", "path": path, "value": copy.deepcopy(after)}]


@dataclass
class ConvertedPatch:
    """One entry of ``kubetrain:patches`` that targets converted jobs: the entries that take
    its place (JSON patches of the TrainJobs and TrainingRuntimes), whether the original stays
    too (it targets documents not converted), and why it could not be converted."""

    index: int
    entry: Document
    entries: list[Doc] = field(default_factory=list)
    keep: bool = False
    problems: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)


@dataclass
class JobOutcome:
    """A v1 job of the stack: its conversion, or why it is refused (at the v1 field)."""

    job: LoadedJob
    conversion: Conversion | None = None
    refused: Refused | None = None

    @property
    def problem(self) -> Problem | None:
        if self.refused is None:
            return None
        return self.job.source.problem(
            self.refused.path,
            f"{self.job.title} cannot be converted to a TrainJob: {self.refused.reason}",
        )


@dataclass
class StackConversion:
    """What converting a stack's v1 jobs gave."""

    stack: Stack
    jobs: list[JobOutcome]
    patches: list[ConvertedPatch]

    @property
    def converted(self) -> list[Conversion]:
        return [o.conversion for o in self.jobs if o.conversion is not None]

    @property
    def refused(self) -> list[JobOutcome]:
        return [o for o in self.jobs if o.refused is not None]


def _convert(loaded: LoadedJob, stack: Stack, own_runtime: bool) -> Conversion:
    return convert_job(loaded, stack.settings, own_runtime=own_runtime)


def convert_stack(
    raw: Stack,
    selected: Sequence[LoadedJob],
    sources: Sequence[tuple[int, PatchSource]],
) -> StackConversion:
    """Convert ``selected`` (v1 jobs of ``raw``, the stack loaded without its patches) and the
    patches of ``sources`` (each with the index of its ``kubetrain:patches`` entry) that target
    them."""
    namespace = raw.settings.namespace
    version = raw.settings.version
    outcomes: list[JobOutcome] = []
    by_entry: dict[int, ConvertedPatch] = {}
    converted_docs = {id(j.source.document) for j in selected}
    for loaded in selected:
        doc = loaded.source.document
        mine = [(i, s) for i, s in sources if targets(s, doc, namespace)]
        # Each state of the job its patches leave it in, in order.
        states: list[tuple[int | None, LoadedJob | None, str | None]] = [(None, loaded, None)]
        current = doc
        for i, source in mine:
            problems: list[Problem] = []
            current = apply_patches(
                [current], [source], default_namespace=namespace, version=version, problems=problems
            )[0]
            try:
                state = load_job_document(current, raw.settings) if not problems else None
            except InputError as exc:
                problems += exc.problems
                state = None
            states.append((i, state, "; ".join(p.message for p in problems) or None))
        try:
            first = _convert(loaded, raw, False)
        except Refused as exc:
            outcomes.append(JobOutcome(loaded, refused=exc))
            continue
        conversions: list[Conversion | Refused | str] = [first]
        for _, state, problem in states[1:]:
            if state is None:
                conversions.append(problem or "the patched job does not load")
                continue
            try:
                conversions.append(_convert(state, raw, False))
            except Refused as exc:
                conversions.append(exc)
        if (
            any(
                isinstance(c, Conversion) and c.runtime_ref[0] == TRAINING_RUNTIME
                for c in conversions
            )
            and first.runtime_ref[0] != TRAINING_RUNTIME
        ):
            # A patch needs a runtime: every state gets one, for each patch to land in.
            first = _convert(loaded, raw, True)
            conversions = [first] + [
                _convert(state, raw, True) if isinstance(c, Conversion) and state else c
                for (_, state, _), c in zip(states[1:], conversions[1:], strict=True)
            ]
        outcomes.append(JobOutcome(loaded, conversion=first))
        previous: Conversion = first
        for (index, _, _), result in zip(states[1:], conversions[1:], strict=True):
            assert index is not None
            entry = by_entry.setdefault(index, ConvertedPatch(index, _entry_doc(raw, index)))
            entry.jobs.append(loaded.title)
            if isinstance(result, Refused):
                entry.problems.append(
                    f"with it {loaded.title} cannot be converted ({result.reason})"
                )
                continue
            if isinstance(result, str):
                entry.problems.append(f"it cannot be applied to {loaded.title}: {result}")
                continue
            assert isinstance(result, Conversion)
            entries = _entries(previous, result, sources, index)
            longest = max((len(e["patch"]) for e in entries), default=0)
            if longest > MAX_PATCH_OPERATIONS:
                entry.problems.append(
                    f"its conversion for {loaded.title} would be a JSON patch of {longest} "
                    f"operations, more than the {MAX_PATCH_OPERATIONS} a patch may have: split "
                    "it, or convert the patched job document itself"
                )
                continue
            entry.entries += entries
            previous = result
    for i, source in sources:
        if i in by_entry and _targets_other(source, raw, converted_docs):
            by_entry[i].keep = True
    return StackConversion(raw, outcomes, [by_entry[i] for i in sorted(by_entry)])


def _entry_doc(stack: Stack, index: int) -> Document:
    return (
        stack.document.sub(("config", f"{CONFIG_NAMESPACE}:patches", index))
        if stack.document is not None
        else Document(str(stack.file), 0, {})
    )


def _entries(
    before: Conversion, after: Conversion, sources: Sequence[tuple[int, PatchSource]], index: int
) -> list[Doc]:
    """The patch entries for the TrainJob and the TrainingRuntime between two states."""
    adds = any(s.adds for i, s in sources if i == index)
    out = []
    for kind, old, new in (
        ("TrainJob", before.trainjob, after.trainjob),
        (TRAINING_RUNTIME, before.runtime, after.runtime),
    ):
        if old is None or new is None:
            continue
        ops = json_patch(old, new)
        if not ops:
            continue
        target: Doc = {"kind": kind, "name": str(new["metadata"]["name"])}
        if "namespace" in new["metadata"]:
            target["namespace"] = new["metadata"]["namespace"]
        entry: Doc = {"target": target, "patch": ops}
        if adds:
            entry["adds"] = True
        out.append(entry)
    return out


def _targets_other(source: PatchSource, stack: Stack, converted: set[int]) -> bool:
    """Whether a patch also targets a document of the stack that is not converted."""
    namespace = stack.settings.namespace
    docs = [j.source.document for j in stack.jobs] + [m.source.document for m in stack.manifests]
    return any(targets(source, d, namespace) for d in docs if id(d) not in converted)


# --- the converted stack ----------------------------------------------------------------------


def converted_stack(
    result: StackConversion,
    jobs: Sequence[Document],
    runtimes: Sequence[Document],
    *,
    label: str,
    native: bool = False,
) -> Stack:
    """The stack with the converted jobs (``jobs``: the TrainJob documents as written, and
    ``runtimes``: the TrainingRuntimes) in place of the stack's jobs, its converted patches in
    place of its patches, its manifests and settings otherwise. With ``native``, every TrainJob
    in native mode (the JobSet the trainer would build) and Kubeflow's runtimes declared with
    their spec (:func:`kubetrain.models.runtimes.upstream_spec`), as ``--compare`` builds them."""
    stack = result.stack
    assert stack.document is not None
    config = dict(stack.document.data.get("config") or {})
    for key in ("jobs", "jobFiles", "patches"):
        config.pop(f"{CONFIG_NAMESPACE}:{key}", None)
    patches = [e for p in result.patches for e in p.entries]
    if patches:
        config[f"{CONFIG_NAMESPACE}:patches"] = patches
    external = dict(config.get(f"{CONFIG_NAMESPACE}:external") or {})
    declared = [
        dict(d) if isinstance(d, Mapping) else {"name": d}
        for d in external.get("trainingRuntimes") or []
    ]
    used = sorted({c.kubeflow_runtime for c in result.converted if c.kubeflow_runtime})
    for name in used:
        if not any(
            d.get("name") == name and d.get("kind") in (None, "ClusterTrainingRuntime")
            for d in declared
        ):
            declared.append({"name": name})
    if native:
        for d in declared:
            if d.get("kind") in (None, "ClusterTrainingRuntime") and d.get("name") in UPSTREAM:
                spec = upstream_spec(str(d["name"]))
                if spec is not None and "file" not in d and "spec" not in d:
                    d["spec"] = spec
    if declared:
        external["trainingRuntimes"] = declared
        config[f"{CONFIG_NAMESPACE}:external"] = external
    if native:
        jobs = [_native(d) for d in jobs]
    data = {**stack.document.data, "config": config}
    return load_stack_data(
        data,
        name=stack.name,
        file=stack.file,
        project_root=stack.project_root,
        label=label,
        jobs=jobs,
        manifests=runtimes,
    )


def _native(doc: Document) -> Document:
    data = copy.deepcopy(doc.data)
    meta = data.setdefault("metadata", {})
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        "kubetrain.io/mode": Mode.NATIVE.value,
    }
    return Document(doc.file, doc.index, data, doc.source, doc.base, doc.prefix)


def v1_jobs(stack: Stack) -> list[LoadedJob]:
    """The stack's jobs kubetrain convert takes (training operator and MPI Operator jobs)."""
    return [j for j in stack.jobs if is_v1_job(j.job)]
