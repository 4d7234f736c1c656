"""What every job component does first: validate its arguments into the spec the render path
uses, and expand them with the same builder.

A component's ``args`` go through :func:`kubetrain.models.load_job` (every rule of a stack file:
schema, embedded Kubernetes types, semantic rules, name limits, the mode annotation), then
:func:`kubetrain.builders.build_job` with a ``pulumi`` build context. Nothing here knows a job kind.
"""

import dataclasses
import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi

from kubetrain.builders import BuildContext, build_job
from kubetrain.builders.context import Target
from kubetrain.models import InputError, JobDocument, LoadedJob, Problem, StackSettings, load_job
from kubetrain.models.base import Mode
from kubetrain.models.errors import PathPart
from kubetrain.models.load import runtime_from_args
from kubetrain.models.runtimes import Runtime, RuntimeKey
from kubetrain.models.runtimes import key_of as runtime_key
from kubetrain.models.trainjob import TrainJob

from ._args import SettingsArgs
from ._resources import Identity, identity, register

__all__ = ["Expansion", "expand", "job_args", "report_warnings", "settings_args"]

Manifest = dict[str, Any]


@dataclass(frozen=True)
class Expansion:
    """A validated job and the canonical manifests its builder returns in Pulumi mode."""

    loaded: LoadedJob
    settings: StackSettings
    manifests: tuple[Manifest, ...]
    #: What the builder rewrote or did not use, as ``kubetrain render`` prints it.
    warnings: tuple[str, ...] = ()
    #: The runtime a TrainJob runs on (its ``runtime`` argument).
    runtimes: Mapping[RuntimeKey, Runtime] = dataclasses.field(default_factory=dict)
    #: The cluster's PriorityClasses (its ``priority_classes`` argument).
    priorities: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def ctx(self) -> BuildContext:
        return BuildContext(
            self.settings, Target.PULUMI, runtimes=self.runtimes, priorities=self.priorities
        )

    @property
    def mode(self) -> Mode:
        """``native`` or ``operator``, after the job's ``kubetrain.io/mode`` annotation."""
        return self.loaded.mode


# Expansions are pure functions of (kind, arguments); a TFJob and its TFReplicaSets expand the
# same arguments, so the second expansion is a lookup. Only successes are kept.
_CACHE: dict[tuple[str, str], Expansion] = {}
_CACHE_SIZE = 256


def expand(kind: type[JobDocument], args: Mapping[str, Any], where: str) -> Expansion:
    """Validate ``args`` (``metadata``, the kind's body such as ``spec``, optional ``settings``)
    as a ``kind`` job document and build it for Pulumi. ``where`` names the component in
    problems (``TFJob ml-dev/mnist: spec.tfReplicaSpecs...``)."""
    if not isinstance(args, Mapping):
        raise InputError([Problem(where, None, (), "the arguments must be a mapping")])
    plain = _plain(dict(args), (), where)
    for part in ("settings", "runtime"):
        if plain.get(part) is not None and not isinstance(plain[part], dict):
            raise InputError([Problem(where, None, (part,), "must be a mapping")])
    key = (f"{kind.API_VERSION} {kind.KIND}", json.dumps(plain, sort_keys=True))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    settings = plain.pop("settings", None) or {}
    runtime_args = plain.pop("runtime", None) if kind is TrainJob else None
    ordered = kind.GANG_READS_PRIORITIES
    priorities = _priorities(plain.pop(PRIORITY_CLASSES, None), where) if ordered else {}
    document = {"apiVersion": kind.API_VERSION, "kind": kind.KIND, **plain}
    loaded, stack_settings = load_job(document, settings=settings, file=where)
    runtimes: dict[RuntimeKey, Runtime] = {}
    job = loaded.document
    if isinstance(job, TrainJob):
        runtime = runtime_from_args(runtime_args or {}, job, stack_settings, where)
        runtimes[runtime_key(job)] = runtime
    found: list[Problem] = []
    ctx = BuildContext(stack_settings, Target.PULUMI, runtimes=runtimes, priorities=priorities)
    manifests = tuple(build_job(loaded, ctx, found))
    # Named by ``where`` (the component), which already says what the builder's title says.
    title = f"{loaded.title}: "
    warnings = tuple(
        str(dataclasses.replace(w, message=w.message.removeprefix(title))) for w in sorted(found)
    )
    expansion = Expansion(loaded, stack_settings, manifests, warnings, runtimes, priorities)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = expansion
    return expansion


#: The argument naming the cluster's PriorityClasses, declared by the kinds whose gang orders
#: its pods by priority (``JobDocument.GANG_READS_PRIORITIES``: not the training operator's,
#: whose lister of PriorityClasses is never started); :func:`job_args` gives it from a stack's
#: manifests.
PRIORITY_CLASSES = "priority_classes"
#: A PriorityClass's value is an int32 (scheduling.k8s.io/v1).
_INT32 = range(-(2**31), 2**31)


def _priorities(value: Any, where: str) -> dict[str, int]:
    """The ``priority_classes`` argument: PriorityClass names to int32 values."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError([Problem(where, None, (PRIORITY_CLASSES,), "must be a mapping")])
    problems = [
        Problem(where, None, (PRIORITY_CLASSES, name), "must be an integer (an int32)")
        for name, v in value.items()
        if type(v) is not int or v not in _INT32
    ]
    if problems:
        raise InputError(problems)
    return dict(value)


def _plain(value: Any, path: tuple[PathPart, ...], where: str) -> Any:
    """``value`` as plain data. Integral floats become ints: Pulumi sends every number as a
    float, and Kubernetes integers (ports, replicas) must stay integers. Outputs are refused:
    the builder needs every value before anything is registered."""
    if isinstance(value, pulumi.Output) or hasattr(value, "__await__"):
        raise InputError(
            [
                Problem(
                    where,
                    None,
                    path,
                    "needs a plain value, got an Output: kubetrain expands jobs before "
                    "registering anything, so inputs cannot depend on other resources' outputs",
                )
            ]
        )
    if isinstance(value, dict):
        return {str(k): _plain(v, (*path, str(k)), where) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, (*path, i), where) for i, v in enumerate(value)]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def settings_args(settings: StackSettings) -> SettingsArgs:
    """The component ``settings`` argument holding a stack's settings (unset ones left out)."""
    out: dict[str, Any] = {}
    for key in SettingsArgs.__annotations__:
        value = getattr(settings, key)
        if isinstance(value, Mode):
            value = value.value  # arguments are plain data
        if value is not None:
            out[key] = value
    return out  # type: ignore[return-value]


def job_args(
    loaded: LoadedJob,
    settings: StackSettings,
    runtimes: Mapping[RuntimeKey, Runtime] | None = None,
    priorities: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Component arguments for a job loaded from a stack: its metadata (namespace resolved), its
    body in the form builders use (a v1alpha1 TFJob converted to v1) and the stack's settings;
    a TrainJob's runtime from ``runtimes``; the stack's PriorityClasses (``priorities``) for
    the kinds whose gang orders its pods by them."""
    job = loaded.job
    body = job.model_dump(exclude_none=True, exclude={"api_version", "kind", "metadata"})
    out = {
        "metadata": job.metadata.model_dump(exclude_none=True),
        **body,
        "settings": settings_args(settings),
    }
    if isinstance(job, TrainJob):
        runtime = (runtimes or {}).get(runtime_key(job))
        if runtime is not None:
            kind, namespace, name = runtime.key
            out["runtime"] = {"kind": kind, "name": name}
            if namespace:
                out["runtime"]["namespace"] = namespace
            if runtime.spec_data is not None:
                out["runtime"]["spec"] = dict(runtime.spec_data)
    if priorities and job.GANG_READS_PRIORITIES:
        out[PRIORITY_CLASSES] = dict(sorted(priorities.items()))
    return out


def register_expansion(
    component: pulumi.Resource,
    expansion: Expansion,
    *,
    where: str,
    opts: pulumi.ResourceOptions | None,
    exclude: Collection[Identity] = (),
    warn: bool = True,
) -> None:
    """What every job component does with its expansion: log its warnings (unless the stack
    program logs them, ``warn=False``) and register its objects, but those registered
    elsewhere (``exclude``), with the component's ``depends_on``."""
    if warn:
        report_warnings(component, expansion)
    register(
        component,
        [m for m in expansion.manifests if identity(m) not in exclude],
        where=where,
        depends_on=opts.depends_on if opts is not None else None,
    )


def report_warnings(component: pulumi.Resource, expansion: Expansion) -> None:
    """Log the expansion's warnings on ``component``, as ``kubetrain render`` prints them. A job
    component does so unless the stack program created it, which logs the whole stack's."""
    for text in expansion.warnings:
        pulumi.log.warn(text, resource=component)
