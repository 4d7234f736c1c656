"""How each delivery engine treats an object over its life: the annotations Flux, Argo CD and
pulumi-kubernetes read, written by the builders so ``rendered/`` and ``pulumi up`` agree. What
each engine then does with an edit is :mod:`kubetrain.delivery.engines`; docs/lifecycle.md tells
it per engine.

* **Never deleted by an engine** (:func:`is_retained`): kubetrain's CustomResourceDefinitions,
  the Namespaces it creates, and (unless the stack says ``kubetrain:pruneData: true``)
  PersistentVolumeClaims and PersistentVolumes. Deleting a CRD deletes every custom resource of
  its kind in the cluster; deleting a Namespace deletes everything in it, objects kubetrain
  does not manage included; deleting a claim deletes its data. Flux:
  ``kustomize.toolkit.fluxcd.io/prune: disabled``; Argo CD:
  ``argocd.argoproj.io/sync-options: Prune=false,Delete=false`` (kept when they leave the
  folder and when the Application is deleted with its finalizer); Pulumi: the components
  register them as Patch resources with ``retain_on_delete`` (creating one that exists, left
  behind by an earlier removal or made by someone else, takes it over instead of failing) and
  ``pulumi.com/patchForce`` (the values kubetrain declares win over an earlier field manager's).
  A user may write the Flux annotation on any object of ``kubetrain:manifests`` to the same
  effect under all three engines.
* **Replaced when an edit hits an immutable field** (the catalogue's ``Life.REPLACED`` rows):
  Pods, Jobs, JobSets and StatefulSets, whose edits mostly cannot be made in place (scaling a TFJob
  rewrites ``TF_CONFIG`` in every pod). Flux: ``kustomize.toolkit.fluxcd.io/force: enabled``;
  Argo CD: ``Force=true,ServerSideApply=false``: both delete and re-create the object only when
  the API server refuses the update as invalid, so an edit the server takes in place (a Pod's
  image, a toleration added, a Job's ``backoffLimit`` or ``suspend``) is applied in place by
  both (client-side apply, where Argo CD's ``Force`` means kubectl's ``--force``; with
  server-side apply it would only force field conflicts). Pulumi replaces what its provider's
  diff and kubetrain's ``replace_on_changes`` say (:mod:`kubetrain.delivery.engines`). A job of a
  kind Kueue manages that names a queue (``kueue.x-k8s.io/queue-name``) says Argo CD's
  ``Force=true,Replace=true`` instead: Kueue's webhook denies a running job's queue change as
  403 Forbidden, which kubectl's ``--force`` never answers with a delete and create, so adding
  a queue would fail every sync; replaced, the job is queued anew, as Flux and Pulumi do. A
  StatefulSet whose claims its deletion would delete
  (``persistentVolumeClaimRetentionPolicy.whenDeleted: Delete``) is never forced: Flux's docs
  warn of that data loss; its immutable edits are refused and ``plan`` says so.
* **Prerequisites first** (the catalogue's ``Life.PREREQUISITE`` rows: what the API server
  checks when it admits a pod, and their Namespaces): ``kubetrain.io/delivery-step:
  prerequisites``. Flux applies them through a Kustomization of their own that the main one
  ``dependsOn`` (:mod:`.delivery`): Flux dry-runs every object of a step before it applies
  any, and a Pod's dry-run is refused while its ServiceAccount is missing (fluxcd/flux2#2772).
  Argo CD: sync wave ``-1``, as CRDs.
* **How ``pulumi up`` waits** (:func:`await_annotations`, the stack's ``kubetrain:podAwait``):
  see there; every wait that is skipped still lets ``pulumi up`` wait for a replaced object's
  deletion, so the replacement (same name) can be created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..delivery.engines import ARGOCD_SYNC_OPTIONS, FLUX_FORCE, FLUX_PRUNE, group_kind
from ..kube import catalog
from ..kube.catalog import Life
from ..kube.immutable import queue_name
from ..models.stack import StackSettings
from .gang import is_gang_member, pod_templates

__all__ = [
    "ARGOCD_REPLACE",
    "ARGOCD_SYNC_OPTIONS",
    "DELETION_PROPAGATION",
    "DELIVERY_STEP",
    "FLUX_FORCE",
    "FLUX_PRUNE",
    "PATCH_FORCE",
    "PREREQUISITES",
    "SKIP_AWAIT",
    "SYNC_WAVE_ANNOTATION",
    "TIMEOUT_SECONDS",
    "WAIT_FOR",
    "annotations_of",
    "await_annotations",
    "group_kind",
    "is_prerequisite",
    "is_retained",
    "lifecycle_annotations",
]

SYNC_WAVE_ANNOTATION = "argocd.argoproj.io/sync-wave"
#: Argo CD's options for the rows whose life is ``Life.REPLACED`` (see the module docstring).
ARGOCD_FORCE = "Force=true,ServerSideApply=false"
#: Argo CD's delete-then-create (``kubectl replace --force``) on any change, for the rows whose
#: life is :attr:`~kubetrain.kube.catalog.Life.REPLACED_ON_ANY_CHANGE` (a TrainJob).
ARGOCD_REPLACE = "Force=true,Replace=true"
#: Sync wave of CRDs and prerequisites: before everything else (wave 0).
EARLY_WAVE = "-1"
#: pulumi-kubernetes: do not wait for the object to become ready (a Job: to complete).
SKIP_AWAIT = "pulumi.com/skipAwait"
#: pulumi-kubernetes: what to wait for instead of the built-in readiness (JSONPath).
WAIT_FOR = "pulumi.com/waitFor"
#: pulumi-kubernetes: how long to wait for the object to become ready, in seconds.
TIMEOUT_SECONDS = "pulumi.com/timeoutSeconds"
#: pulumi-kubernetes: the propagation policy of its delete (Foreground by default).
DELETION_PROPAGATION = "pulumi.com/deletionPropagationPolicy"
#: pulumi-kubernetes: a Patch resource takes over fields another field manager holds.
PATCH_FORCE = "pulumi.com/patchForce"
#: kubetrain: the delivery step an object belongs to (see :mod:`.delivery`).
DELIVERY_STEP = "kubetrain.io/delivery-step"
PREREQUISITES = "prerequisites"
#: The waitFor that is met as soon as the object exists: the create is not awaited, but a
#: delete is (``DeletedCondition`` skips it only under ``skipAwait``).
EXISTS = "jsonpath={.metadata.name}"

CRD = ("apiextensions.k8s.io", "CustomResourceDefinition")
STATEFUL_SET = ("apps", "StatefulSet")
REPLICA_SET = ("apps", "ReplicaSet")
JOB = ("batch", "Job")
CLAIM = ("", "PersistentVolumeClaim")


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj``'s annotations, or none where something else stands there (a file of
    ``rendered/`` edited by hand, which ``kubetrain plan`` reads)."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
    return annotations if isinstance(annotations, Mapping) else {}


def is_retained(obj: Mapping[str, Any]) -> bool:
    """Whether no engine may delete ``obj`` (it says ``kustomize.toolkit.fluxcd.io/prune:
    disabled``, which :func:`lifecycle_annotations` writes on every kind kubetrain keeps)."""
    return annotations_of(obj).get(FLUX_PRUNE) == "disabled"


def is_prerequisite(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is delivered in the prerequisites step (see :mod:`.delivery`)."""
    return annotations_of(obj).get(DELIVERY_STEP) == PREREQUISITES


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    annotations: dict[str, str] = meta.setdefault("annotations", {})
    return annotations


def _deletes_claims(obj: dict[str, Any]) -> bool:
    """Whether deleting a StatefulSet deletes the claims of its volumeClaimTemplates."""
    spec = obj.get("spec") or {}
    policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    return bool(spec.get("volumeClaimTemplates")) and policy.get("whenDeleted") == "Delete"


_RETAINED = Life.RETAINED.value
_DATA = Life.DATA.value
_PREREQUISITE = Life.PREREQUISITE.value
_REPLACED = Life.REPLACED.value
_REPLACED_ON_ANY_CHANGE = Life.REPLACED_ON_ANY_CHANGE.value
_DELETED_IN_BACKGROUND = Life.DELETED_IN_BACKGROUND.value


def lifecycle_annotations(obj: dict[str, Any], settings: StackSettings) -> dict[str, Any]:
    """Write the Flux and Argo CD annotations of ``obj``'s kind (in place; values the object
    already has are kept) and return it. What the kind is (retained, data, replaced,
    prerequisite) is its row's :attr:`kubetrain.kube.catalog.Kind.life`."""
    row = catalog.of(obj)
    # The flags as an int: ``Flag.__and__`` makes a new member each time (a microsecond, six
    # times per object).
    life = row.life.value
    key = row.key
    if life & _RETAINED or (life & _DATA and not settings.prune_data):
        annotations = _annotations(obj)
        annotations.setdefault(FLUX_PRUNE, "disabled")
        annotations.setdefault(ARGOCD_SYNC_OPTIONS, "Prune=false,Delete=false")
    if is_retained(obj):
        _annotations(obj).setdefault(PATCH_FORCE, "true")
    if key == CRD or life & _PREREQUISITE:
        _annotations(obj).setdefault(SYNC_WAVE_ANNOTATION, EARLY_WAVE)
    if life & _PREREQUISITE:
        _annotations(obj).setdefault(DELIVERY_STEP, PREREQUISITES)
    if life & _REPLACED and not (key == STATEFUL_SET and _deletes_claims(obj)):
        annotations = _annotations(obj)
        annotations.setdefault(FLUX_FORCE, "enabled")
        queued = row.kueue is not None and bool(queue_name(obj))
        argocd = ARGOCD_REPLACE if life & _REPLACED_ON_ANY_CHANGE or queued else ARGOCD_FORCE
        annotations.setdefault(ARGOCD_SYNC_OPTIONS, argocd)
    if key == CLAIM:
        # pulumi-kubernetes' claim awaiter (4.25.0, provider/pkg/await/awaiters.go
        # untilCoreV1PersistentVolumeClaimReady) takes a claim of a WaitForFirstConsumer
        # class as ready only while it is Pending: once a pod bound it, every later update of
        # it waits 5 minutes and fails `pulumi up` (seen in e2e/test_lifecycle.py on a grown
        # request). Met once it exists, as for a Pod not awaited; pods that mount it wait for
        # it anyway.
        _annotations(obj).setdefault(WAIT_FOR, EXISTS)
    if life & _DELETED_IN_BACKGROUND:
        # pulumi-kubernetes deletes in the foreground unless told (provider/pkg/metadata/
        # overrides.go DeletionPropagation); Argo CD's Application prunes in the background
        # for every kind (kubetrain.builders.delivery).
        _annotations(obj).setdefault(DELETION_PROPAGATION, "background")
    return obj


def _replicas(obj: dict[str, Any]) -> int:
    value = (obj.get("spec") or {}).get("replicas", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def await_annotations(obj: dict[str, Any], settings: StackSettings) -> dict[str, Any]:
    """How ``pulumi up`` waits for an object that runs pods (in place), after the stack's
    ``kubetrain:podAwait``:

    * ``auto`` (default): not at all for gang-scheduled pods, which start only together (Pulumi
      creates and waits for them a few at a time, up to ``--parallel``: a gang larger than that
      never starts and ``pulumi up`` times out); the others as the provider waits for them.
    * ``ready``: every object as the provider waits for it; a ReplicaSet, for which the provider
      has no awaiter, until all its replicas are ready (``pulumi.com/waitFor``).
    * ``skip``: none at all.

    Not waiting is written so that deletes are still awaited (``DeletedCondition``,
    provider/pkg/metadata/overrides.go: ``skipAwait`` skips the delete of Pods, StatefulSets and
    Jobs too, and a replacement with the same name would then find the old object still there,
    and fail with AlreadyExists): a Pod or StatefulSet gets ``pulumi.com/waitFor`` on its name,
    met at once; a Job keeps ``pulumi.com/skipAwait`` (a refresh must not call a running
    training unhealthy) and is deleted in the background
    (``pulumi.com/deletionPropagationPolicy: background``: the Job object goes at once, its pods
    terminate after it, and the new Job's pods, named afresh, start beside them). Jobs and JobSets
    are never awaited (they run until the training ends); a JobSet's delete is awaited
    whatever it says, as for every custom resource.

    ``kubetrain:podAwaitTimeoutSeconds`` bounds the wait of the objects that are awaited.
    """
    row = catalog.of(obj)
    templates = pod_templates(obj)
    if not templates:
        return obj
    kind = row.key
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    mode = settings.pod_await
    skip = mode == "skip" or (mode == "auto" and any(is_gang_member(t.template) for t in templates))
    if kind == JOB and annotations.get(SKIP_AWAIT) == "true":
        _annotations(obj).setdefault(DELETION_PROPAGATION, "background")
        return obj
    if skip and row.pulumi_fixed_name and SKIP_AWAIT not in annotations:
        _annotations(obj).setdefault(WAIT_FOR, EXISTS)
        return obj
    if skip:
        _annotations(obj).setdefault(SKIP_AWAIT, "true")
        if kind == JOB:
            _annotations(obj).setdefault(DELETION_PROPAGATION, "background")
        return obj
    if annotations.get(SKIP_AWAIT) == "true":
        return obj
    if mode == "ready" and kind == REPLICA_SET and _replicas(obj) > 0:
        _annotations(obj).setdefault(
            WAIT_FOR, f"jsonpath={{.status.readyReplicas}}={_replicas(obj)}"
        )
    if settings.pod_await_timeout_seconds is not None:
        _annotations(obj).setdefault(TIMEOUT_SECONDS, str(settings.pod_await_timeout_seconds))
    return obj
