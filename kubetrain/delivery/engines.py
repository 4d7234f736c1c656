"""What each delivery engine does with an edit of one object: Flux, Argo CD and Pulumi.

The API server's side is :mod:`kubetrain.kube.immutable` (which edits it refuses in place).
The engines' side, as their sources read at the versions kubetrain supports:

* **Flux** (kustomize-controller v1.9, ``fluxcd/pkg/ssa``): a server-side apply. An update the
  server refuses as invalid is re-tried as a delete and a create when the object (as applied)
  says ``kustomize.toolkit.fluxcd.io/force: enabled``; otherwise the reconcile fails.
* **Argo CD** (v3.5, ``gitops-engine/pkg/sync/sync_context.go`` ``applyObject``): an object
  whose target *or live* copy says ``Replace=true`` is replaced (``kubectl replace``, with
  ``Force=true`` a delete and a create) whenever it is out of sync, whatever changed. Otherwise
  it is applied (``kubectl apply``); with ``Force=true`` and client-side apply, kubectl's
  ``Patcher.Patch`` deletes and re-creates it when the patch is refused as invalid
  (``deleteAndCreate``), as Flux does.
* **Pulumi** (pulumi-kubernetes v4.32.0): the provider's ``Diff`` (``provider/pkg/provider/
  provider.go``) replaces an object when a changed field matches its ``forceNew`` list
  (``provider/pkg/provider/diff.go``: each kind's ``pulumi_force_new`` in the catalogue, plus
  ``metadata.name`` and ``metadata.namespace`` for every kind; matched as
  ``openapi.PatchPropertiesChanged`` does) or one of the resource's ``replaceOnChanges`` paths
  (the engine's ``PropertyPath.Contains``); everything else is updated in place, and an update the
  server refuses fails. Patch resources (``NamespacePatch``...: what kubetrain registers for
  objects it never deletes) are replaced on a new name or namespace only.

:func:`replace_on_changes` is what kubetrain adds to the provider's list for each kind, so that
``pulumi up`` replaces every object whose edit the API server refuses in place (each kind's
``pulumi_replace_on_changes`` in the catalogue), and :func:`outcomes` says per engine what an
edit does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..kube import catalog
from ..kube.immutable import KUEUE_QUEUE_LABEL, KUEUE_WEBHOOK, update_refusals

__all__ = [
    "ENGINES",
    "ENGINE_TITLES",
    "Engine",
    "Outcome",
    "annotation_options",
    "outcomes",
    "pulumi_changes",
    "pulumi_replacement",
    "replace_on_changes",
    "restarts_pods",
]

Obj = Mapping[str, Any]
POD = ("", "Pod")
Engine = Literal["flux", "argocd", "pulumi", "kubectl"]
#: kubectl: `kubectl apply --server-side` of `render --stdout`, after the deletions
#: `kubetrain plan --output kubectl` lists (docs/lifecycle.md, "Without an engine").
ENGINES: tuple[Engine, ...] = ("flux", "argocd", "pulumi", "kubectl")
ENGINE_TITLES: dict[Engine, str] = {
    "flux": "Flux",
    "argocd": "Argo CD",
    "pulumi": "Pulumi",
    "kubectl": "kubectl",
}

FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"
ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"


_METADATA_FORCE_NEW = ("metadata.name", "metadata.namespace")


def group_kind(obj: Obj) -> tuple[str, str]:
    return str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))


def _annotations(obj: Obj) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def annotation_options(obj: Obj, key: str = ARGOCD_SYNC_OPTIONS) -> frozenset[str]:
    """The comma-separated options of an annotation (Argo CD's sync options by default)."""
    value = _annotations(obj).get(key)
    if not isinstance(value, str):
        return frozenset()
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def is_patch_resource(obj: Obj) -> bool:
    """Whether the Pulumi components register ``obj`` as a Patch resource: every object no
    engine deletes (``kustomize.toolkit.fluxcd.io/prune: disabled``), so that creating it again
    after it was left in the cluster, or adopting one that exists, takes it over (see
    components/_resources.py)."""
    return _annotations(obj).get(FLUX_PRUNE) == "disabled"


#: Kueue refuses a running job's new queue (``.immutable.kueue_refusals``): a job of a kind Kueue
#: manages is replaced when its queue label changes (suspended or not: a suspended job has not
#: started, so its replacement loses nothing).
KUEUE_QUEUE_PATH = f'metadata.labels["{KUEUE_QUEUE_LABEL}"]'


def replace_on_changes(obj: Obj) -> list[str]:
    """The ``replace_on_changes`` resource option of ``obj`` (none for a Patch resource: one
    whose replacement would delete nothing, see :func:`is_patch_resource`)."""
    if is_patch_resource(obj):
        return []
    row = catalog.of(obj)
    out = list(row.pulumi_replace_on_changes)
    if row.kueue is not None:
        out.append(KUEUE_QUEUE_PATH)
    return out


# --- the provider's diff ------------------------------------------------------------------------

Path = tuple[str | int, ...]
_MISSING = object()


def _equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` or ``equalNumbers`` on JSON values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)


def pulumi_changes(old: Any, new: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """The provider's detailed diff of two sets of inputs: ``(path, new value)`` per changed
    leaf, the value ``None`` for a deletion (``convertPatchToDiff``: maps compared key by key,
    lists element by element, an added or removed element as a whole)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            yield from pulumi_changes(old.get(key, _MISSING), new.get(key, _MISSING), (*path, key))
        return
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            yield from pulumi_changes(
                old[i] if i < len(old) else _MISSING,
                new[i] if i < len(new) else _MISSING,
                (*path, i),
            )
        return
    if new is _MISSING:
        if old is not _MISSING:
            yield path, None
        return
    if old is _MISSING or not _equal(old, new):
        yield path, new


def _pattern(text: str) -> list[str]:
    """``spec.containers[*].image`` -> ``["spec", "containers", "*", "image"]``; a quoted key
    (``metadata.labels["kueue.x-k8s.io/queue-name"]``, the engine's ``PropertyPath`` syntax for
    keys with dots) is one part."""
    parts: list[str] = []
    for piece in re.split(r'(\["[^"]*"\])', text):
        if piece.startswith('["') and piece.endswith('"]'):
            parts.append(piece[2:-2])
        else:
            parts.extend(p for p in piece.replace("[", ".").replace("]", "").split(".") if p)
    return parts


def _found(value: Any, rest: Sequence[str]) -> bool:
    """Whether a JSONPath ``rest`` selects something in ``value`` (a missing key is not)."""
    if not rest:
        return True
    head, tail = rest[0], rest[1:]
    if head == "*":
        return isinstance(value, list) and any(_found(v, tail) for v in value)
    return isinstance(value, Mapping) and head in value and _found(value[head], tail)


def _force_new_matches(pattern: str, path: Path, value: Any) -> bool:
    """``openapi.PatchPropertiesChanged`` on the patch slice of one change: the JSONPath selects
    something in ``{path: value}``."""
    parts = _pattern(pattern)
    for i, part in enumerate(parts):
        if i == len(path):
            return _found(value, parts[i:])
        step = path[i]
        if part == "*":
            if not isinstance(step, int):
                return False
        elif step != part:
            return False
    return True


def _contains(pattern: str, path: Path) -> bool:
    """The engine's ``PropertyPath.Contains``: ``pattern`` is ``path`` or a prefix of it."""
    parts = _pattern(pattern)
    if len(parts) > len(path):
        return False
    for part, step in zip(parts, path, strict=False):
        if part == "*":
            continue
        if str(step) != part:
            return False
    return True


def _display(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def pulumi_replacement(before: Obj, after: Obj) -> str | None:
    """The first changed field for which ``pulumi up`` replaces ``before`` to make it ``after``
    (``None``: an update in place), with the options kubetrain registers it with."""
    if is_patch_resource(after):
        force_new: tuple[str, ...] = _METADATA_FORCE_NEW
        extra: list[str] = []
    else:
        force_new = _METADATA_FORCE_NEW + catalog.of(after).pulumi_force_new
        extra = replace_on_changes(after)
    for path, value in pulumi_changes(before, after):
        if any(_force_new_matches(p, path, value) for p in force_new) or any(
            _contains(p, path) for p in extra
        ):
            return _display(path)
    return None


# --- outcomes -----------------------------------------------------------------------------------

Action = Literal["change", "replace", "refused"]


@dataclass(frozen=True)
class Outcome:
    """What one engine does with an edit: ``change`` (in place), ``replace`` (delete, then
    create) or ``refused`` (the edit fails: the server refuses it and the engine does not
    replace the object), the field that decides it, and whether pods restart."""

    action: Action
    field: str = ""
    restarts: bool = False


def restarts_pods(action: str, obj: Obj, fields: Sequence[str], runs_pods: bool) -> bool:
    """Whether an edit re-creates or restarts the pods of ``obj`` (an object that runs pods): a
    replacement does; in place, a Pod's new image restarts its container and a rolling
    workload's new template rolls its pods."""
    if not runs_pods or action not in ("change", "replace"):
        return False
    if action == "replace":
        return True
    row = catalog.of(obj)
    if row.key == POD:
        return any(f.endswith(".image") or f.endswith("].image") for f in fields)
    return row.rolls and any(f.startswith("spec.template") for f in fields)


def _forbidden(refusals: Sequence[Any]) -> bool:
    """Whether a refusal comes back as 403 Forbidden, which kubectl's ``Patcher.Patch`` does not
    answer with ``deleteAndCreate`` (only a conflict or an invalid object): Kueue's job
    webhook denies a queue change as controller-runtime's ``admission.Denied`` does (seen in
    e2e/test_lifecycle.py under Argo CD: the Jobs were left as they were)."""
    return any(r.origin == KUEUE_WEBHOOK for r in refusals)


def outcomes(
    before: Obj, after: Obj, fields: Sequence[str], *, runs_pods: bool
) -> dict[Engine, Outcome]:
    """What each engine does to make ``before`` (what it applied last) ``after``. ``fields``
    are the changed fields (for :func:`restarts_pods`)."""
    refusals = update_refusals(before, after)
    replaceable = bool(refusals) and all(r.replaceable for r in refusals)
    first = str(refusals[0].path) if refusals else ""

    def result(action: Action, field: str = "") -> Outcome:
        return Outcome(action, field, restarts_pods(action, after, fields, runs_pods))

    out: dict[Engine, Outcome] = {}
    # Flux: force on the object as applied.
    if not refusals:
        out["flux"] = result("change")
    elif replaceable and _annotations(after).get(FLUX_FORCE) == "enabled":
        out["flux"] = result("replace", first)
    else:
        out["flux"] = result("refused", first)
    # Argo CD: Replace=true on the target or the live object replaces whatever changed.
    target, live = annotation_options(after), annotation_options(before)
    if "Replace=true" in target | live and "Replace=false" not in target:
        out["argocd"] = result("replace", first or "(Replace=true)")
    elif not refusals:
        out["argocd"] = result("change")
    elif replaceable and "Force=true" in target | live and not _forbidden(refusals):
        out["argocd"] = result("replace", first)
    else:
        out["argocd"] = result("refused", first)
    # Pulumi: the provider's diff with kubetrain's options.
    replaced = pulumi_replacement(before, after)
    if replaced is not None and not is_patch_resource(after):
        out["pulumi"] = result("replace", replaced)
    elif refusals:
        out["pulumi"] = result("refused", first)
    else:
        out["pulumi"] = result("change")
    # kubectl: server-side apply never replaces; `kubetrain plan --output kubectl` deletes
    # first what the server refuses in place, for the kinds kubetrain re-creates (those it
    # forces under Flux: a claim is not re-created, its data would go).
    if not refusals:
        out["kubectl"] = result("change")
    elif replaceable and _annotations(after).get(FLUX_FORCE) == "enabled":
        out["kubectl"] = result("replace", first)
    else:
        out["kubectl"] = result("refused", first)
    return out
