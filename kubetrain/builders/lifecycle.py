"""How each delivery engine treats an object over its life: the annotations Flux, Argo CD and
pulumi-kubernetes read, written by the builders so ``rendered/`` and ``pulumi up`` agree.

* **Never deleted by an engine** (:func:`is_retained`): kubetrain's CustomResourceDefinitions and
  the Namespaces it creates. Deleting a CRD deletes every custom resource of its kind in the
  cluster, whichever environment made them; deleting a Namespace deletes everything in it,
  objects kubetrain does not manage included (the Secrets a stack declares external...). Flux:
  ``kustomize.toolkit.fluxcd.io/prune: disabled`` (kept when they leave the folder and when the
  Kustomization is deleted); Argo CD: ``argocd.argoproj.io/sync-options: Prune=false,Delete=false``
  (kept when they leave the folder and when the Application is deleted with its finalizer);
  Pulumi: ``retain_on_delete`` (set by the components, from this same predicate).
* **Replaced when an edit hits an immutable field** (:data:`REPLACED_KINDS`): Pods (every field a
  stack edit changes but the image is immutable: scaling a TFJob rewrites ``TF_CONFIG`` in every
  pod), Jobs (the template is immutable), JobSets (their replicatedJobs are, by the JobSet
  webhook) and StatefulSets (selector, serviceName and podManagementPolicy are; a Learner's
  trainingId and gang scheduling change them). Flux:
  ``kustomize.toolkit.fluxcd.io/force: enabled`` (deletes and re-creates the object only when the
  server refuses the update as immutable); Argo CD: ``Force=true,Replace=true`` (deletes and
  re-creates the object whenever it is out of sync, which is why the Application kubetrain writes
  syncs only out-of-sync objects: ``ApplyOutOfSyncOnly=true``); Pulumi replaces such objects by
  itself. Either way an edit of a job restarts its run (see docs/lifecycle.md).
* **How ``pulumi up`` waits** (:func:`await_annotations`, the stack's ``kubetrain:podAwait``):
  ``pulumi.com/skipAwait`` and ``pulumi.com/timeoutSeconds`` on the objects that run pods.
* **CRDs first under Argo CD**: the sync wave ``-1`` (Flux applies ``_crds/`` through its own
  Kustomization, see :mod:`.delivery`).
"""

from __future__ import annotations

from typing import Any

from ..models.stack import StackSettings
from .gang import is_gang_member, pod_templates

__all__ = [
    "ARGOCD_SYNC_OPTIONS",
    "FLUX_FORCE",
    "FLUX_PRUNE",
    "REPLACED_KINDS",
    "RETAINED_KINDS",
    "SKIP_AWAIT",
    "SYNC_WAVE_ANNOTATION",
    "TIMEOUT_SECONDS",
    "await_annotations",
    "group_kind",
    "is_retained",
    "lifecycle_annotations",
]

SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
#: Sync wave of CRDs: before everything else (wave 0).
CRD_WAVE = "-1"
FLUX_PRUNE = "kustomize.toolkit.fluxcd.io/prune"
FLUX_FORCE = "kustomize.toolkit.fluxcd.io/force"
ARGOCD_SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
#: pulumi-kubernetes: do not wait for the object to become ready (a Job: to complete).
SKIP_AWAIT = "pulumi.com/skipAwait"
#: pulumi-kubernetes: how long to wait for the object to become ready, in seconds.
TIMEOUT_SECONDS = "pulumi.com/timeoutSeconds"

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
NAMESPACE = ("", "Namespace")
#: Objects no engine deletes: see the module docstring.
RETAINED_KINDS = frozenset({CRD, NAMESPACE})
#: Objects an engine deletes and re-creates when an edit cannot be made in place.
REPLACED_KINDS = frozenset(
    {("", "Pod"), ("batch", "Job"), ("apps", "StatefulSet"), ("jobset.x-k8s.io", "JobSet")}
)


def group_kind(obj: dict[str, Any]) -> tuple[str, str]:
    """``(group, kind)`` of a manifest (group ``""`` for the core API)."""
    return str(obj.get("apiVersion", "")).rpartition("/")[0], str(obj.get("kind", ""))


def is_retained(obj: dict[str, Any]) -> bool:
    """Whether no engine may delete ``obj`` (a kubetrain CRD or Namespace)."""
    return group_kind(obj) in RETAINED_KINDS


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    annotations: dict[str, str] = meta.setdefault("annotations", {})
    return annotations


def lifecycle_annotations(obj: dict[str, Any]) -> dict[str, Any]:
    """Write the Flux and Argo CD annotations of ``obj``'s kind (in place; values the object
    already has are kept) and return it."""
    kind = group_kind(obj)
    if kind in RETAINED_KINDS:
        annotations = _annotations(obj)
        annotations.setdefault(FLUX_PRUNE, "disabled")
        annotations.setdefault(ARGOCD_SYNC_OPTIONS, "Prune=false,Delete=false")
        if kind == CRD:
            annotations.setdefault(SYNC_WAVE_ANNOTATION, CRD_WAVE)
    elif kind in REPLACED_KINDS:
        annotations = _annotations(obj)
        annotations.setdefault(FLUX_FORCE, "enabled")
        annotations.setdefault(ARGOCD_SYNC_OPTIONS, "Force=true,Replace=true")
    return obj


def await_annotations(obj: dict[str, Any], settings: StackSettings) -> dict[str, Any]:
    """How ``pulumi up`` waits for an object that runs pods (in place), after the stack's
    ``kubetrain:podAwait``:

    * ``auto`` (default): not at all for gang-scheduled pods, which start only together (Pulumi
      creates and waits for them a few at a time, up to ``--parallel``: a gang larger than that
      never starts and ``pulumi up`` times out); the others as the provider waits for them.
    * ``ready``: every object as the provider waits for it.
    * ``skip``: none at all.

    ``kubetrain:podAwaitTimeoutSeconds`` bounds the wait of the objects that are awaited. An
    object that says ``pulumi.com/skipAwait`` itself (the trainer Job of a TrainingJob, which
    runs until the training ends) keeps it.
    """
    templates = list(pod_templates(obj))
    if not templates:
        return obj
    mode = settings.pod_await
    skip = mode == "skip" or (
        mode == "auto" and any(is_gang_member(template) for template, _ in templates)
    )
    if skip:
        _annotations(obj).setdefault(SKIP_AWAIT, "true")
    skipped = (obj["metadata"].get("annotations") or {}).get(SKIP_AWAIT) == "true"
    if not skipped and settings.pod_await_timeout_seconds is not None:
        _annotations(obj).setdefault(TIMEOUT_SECONDS, str(settings.pod_await_timeout_seconds))
    return obj
