"""What an edit of an operator-mode job does to its running training, for ``kubetrain plan``,
and what Kueue owns of a queued job.

Every engine applies an edit of a custom resource in place (:mod:`kubetrain.delivery.engines`);
what follows is the operator's (and Kueue's) doing, read from their sources:

* **an image or any other pod template field**: training-operator v1.9.0
  (``pkg/controller.v1/common/pod.go``, ``ReconcilePods``: ``createNewPod`` for an index with
  no pod, nothing for one that has its pod) and mpi-operator v0.8.0
  (``pkg/controller/mpi_job_controller.go``, ``getOrCreateWorker``: a worker is created when
  it is not found) never update or re-create a running pod: the edit reaches only the pods they
  create from then on (a restarted replica, a new one), so replicas of one training run
  different templates;
* **replicas of a job that is not elastic**: the operator creates (or deletes) pods up to the new
  count, and writes the cluster layout (``WORLD_SIZE``, ``TF_CONFIG``, the MPI hostfile) into
  the new pods only: the running ones keep the old world size, and the training does not
  resize (a PyTorchJob with ``elasticPolicy`` is resized by torchrun's rendezvous);
* **a queued job** (``kueue.x-k8s.io/queue-name``): Kueue v0.19.2
  (``pkg/controller/jobframework/reconciler.go``, ``ensureOneWorkload``: "job with no matching
  workload, suspending") suspends a running job whose pod sets (counts, templates) no longer
  match its admitted Workload, deletes the Workload and queues the job again: the pods stop and
  the job waits for quota at its new shape.

Kueue also owns ``suspend`` of a job it queues (``jobframework/defaults.go``,
``ApplyDefaultForSuspend``: its webhook creates the job suspended; admission resumes it), so
kubetrain does not write it (:func:`kubetrain.builders.kueue.leave_suspend_to_kueue`): an engine
putting back the value in Git would undo an admission, or resume a job Kueue holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .kube import catalog

__all__ = ["operator_edit_notes", "queued_jobs_note"]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PYTORCHJOB = ("kubeflow.org", "PyTorchJob")

Manifest = Mapping[str, Any]


def _replicas(obj: Manifest, key: str) -> dict[str, int]:
    specs = (obj.get("spec") or {}).get(key) or {}
    return {str(t): int((s or {}).get("replicas", 1)) for t, s in specs.items()}


def operator_edit_notes(
    before: Manifest, after: Manifest, fields: Sequence[str], job: str
) -> list[str]:
    """What an in-place edit of an operator-mode job (``fields``, as :func:`kubetrain.kube.
    paths.differences` names them) does to its running training (see the module docstring);
    nothing for other objects."""
    row = catalog.of(after)
    # Kubeflow's custom resources, whose operator creates the pods of their replica specs.
    pods = row.pods
    if row.group != "kubeflow.org" or pods is None or pods.each != "map":
        return []
    key = pods.items[-1]
    notes = []
    templates = sorted(
        {m[1] for f in fields if (m := re.match(rf"spec\.{key}\.([^.\[]+)\.template\.", f))}
    )
    if templates:
        notes.append(
            f"{job}: the {row.operator} does not update running pods: the new pod template of "
            f"{', '.join(templates)} reaches only pods it creates from now on, so a running "
            "training mixes old and new pods; to run it everywhere, remove the job in one change "
            "and add it back in the next"
        )
    old, new = _replicas(before, key), _replicas(after, key)
    resized = sorted(t for t in set(old) | set(new) if old.get(t) != new.get(t))
    elastic = row.key == PYTORCHJOB and (after.get("spec") or {}).get("elasticPolicy")
    if resized and not elastic:
        sizes = ", ".join(f"{t} {old.get(t, 0)} -> {new.get(t, 0)}" for t in resized)
        notes.append(
            f"{job}: resized ({sizes}) while it may run: the operator adds or deletes pods, and "
            "only the new pods get the new world size (WORLD_SIZE, TF_CONFIG, the hostfile), "
            "so a running training does not resize (an elastic PyTorchJob does); remove the job "
            "and add it back to restart it at the new size"
        )
    labels = (after.get("metadata") or {}).get("labels") or {}
    if QUEUE_LABEL in labels and (templates or resized):
        notes.append(
            f"{job}: Kueue suspends it if it is admitted (its pods stop: the job no longer "
            "matches its Workload) and queues it again at its new shape"
        )
    return notes


def _suspended_by_kueue(obj: Manifest) -> bool:
    """Whether Kueue queues ``obj``'s kind by suspending it (its row's Kueue integration)."""
    kueue = catalog.of(obj).kueue
    return kueue is not None and kueue.at is not None


def queued_jobs_note(objects: Iterable[tuple[Manifest, str]]) -> str | None:
    """One note naming the jobs whose ``suspend`` kubetrain leaves to Kueue, if any."""
    jobs = sorted(
        {
            f"{job} ({catalog.of(obj).kueue.suspend_path})"  # type: ignore[union-attr]
            for obj, job in objects
            if _suspended_by_kueue(obj)
            and QUEUE_LABEL in ((obj.get("metadata") or {}).get("labels") or {})
        }
    )
    if not jobs:
        return None
    return (
        f"Kueue queues {', '.join(jobs)}: it creates them suspended and resumes them when "
        "admitted, so kubetrain does not write suspend (Flux, Argo CD and Pulumi leave Kueue's "
        "value alone); hold a queue with its LocalQueue's stopPolicy instead"
    )
