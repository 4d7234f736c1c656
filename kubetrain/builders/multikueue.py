"""Kueue's MultiKueue (``kubetrain:multiKueue``): the environment's cluster is the manager, its
jobs queued to the named ClusterQueues run on one of the worker clusters.

What Kueue v0.19.2 needs on the manager (``apis/kueue/v1beta2/admissioncheck_types.go``,
``multikueue_types.go``; ``pkg/controller/admissionchecks/multikueue``):

* an ``AdmissionCheck`` whose ``controllerName`` is ``kueue.x-k8s.io/multikueue``
  (``MultiKueueControllerName``), its ``parameters`` naming a ``MultiKueueConfig``;
* the ``MultiKueueConfig`` listing the ``MultiKueueCluster`` objects (at most 20);
* a ``MultiKueueCluster`` per worker, reaching it with the kubeconfig in a Secret of Kueue's
  namespace under the key ``kubeconfig`` (``MultiKueueConfigSecretKey``,
  ``clusterSource.kubeConfig`` with ``locationType: Secret``);
* the ClusterQueue naming the check (``admissionChecksStrategy.admissionChecks``);
* the job managed by MultiKueue (``managedBy: kueue.x-k8s.io/multikueue``), so that the job's own
  controller leaves it to Kueue on the manager, which creates it on the worker that admits it.
  Kueue's webhook defaults it (``jobframework/defaults.go``, ``ApplyDefaultForManagedBy``), and
  kubetrain writes it: the stored object is then what Git says (``managedBy`` is immutable).

The workers hold the same namespaces, LocalQueues and ClusterQueues (their own quota): another
environment of the project whose cluster they are.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping, Sequence
from typing import Any

from ..kube import catalog
from ..models.errors import Problem
from ..models.stack import MultiKueue
from .kueue import QUEUE_LABEL
from .meta import app_labels, canonical, manifest, object_meta

__all__ = ["ADMISSION_CHECK", "MULTIKUEUE", "dispatch", "multikueue_objects"]

#: The controller of MultiKueue's admission check, and what ``managedBy`` says.
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
#: Name of the AdmissionCheck and MultiKueueConfig kubetrain writes.
ADMISSION_CHECK = "kubetrain-multikueue"
KUEUE = "kueue.x-k8s.io/v1beta2"
Manifest = dict[str, Any]


def multikueue_objects(settings: MultiKueue) -> list[Manifest]:
    """The AdmissionCheck, MultiKueueConfig and MultiKueueClusters of ``settings``."""
    labels = app_labels("multikueue", ADMISSION_CHECK)
    out = [
        manifest(
            KUEUE,
            "AdmissionCheck",
            object_meta(ADMISSION_CHECK, labels=labels),
            spec={
                "controllerName": MULTIKUEUE,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": ADMISSION_CHECK,
                },
            },
        ),
        manifest(
            KUEUE,
            "MultiKueueConfig",
            object_meta(ADMISSION_CHECK, labels=labels),
            spec={"clusters": [w.name for w in settings.workers]},
        ),
    ]
    for worker in settings.workers:
        out.append(
            manifest(
                KUEUE,
                "MultiKueueCluster",
                object_meta(worker.name, labels=labels),
                spec={
                    "clusterSource": {
                        "kubeConfig": {
                            "location": worker.kube_config_secret,
                            "locationType": "Secret",
                        }
                    }
                },
            )
        )
    return [canonical(o) for o in out]


def _at(obj: MutableMapping[str, Any], path: Sequence[str]) -> MutableMapping[str, Any]:
    node = obj
    for key in path:
        node = node.setdefault(key, {})
    return node


def dispatch(
    objects: Sequence[Manifest], settings: MultiKueue, problem: Any
) -> tuple[list[Manifest], list[Problem]]:
    """``objects`` with the named ClusterQueues checked by MultiKueue and the jobs queued to
    them managed by it; the problems (a named ClusterQueue the stack does not deliver), made by
    ``problem(path, message)``."""
    queues = {o["metadata"]["name"]: o for o in objects if _is(o, "ClusterQueue")}
    problems = [
        problem(
            ("config", "kubetrain:multiKueue", "clusterQueues", i),
            f"no ClusterQueue {name!r} among the stack's manifests: MultiKueue's admission "
            "check is added to a ClusterQueue the stack delivers",
        )
        for i, name in enumerate(settings.cluster_queues)
        if name not in queues
    ]
    dispatched = set(settings.cluster_queues)
    local = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in objects
        if _is(o, "LocalQueue") and (o.get("spec") or {}).get("clusterQueue") in dispatched
    }
    out = []
    for obj in objects:
        if _is(obj, "ClusterQueue") and obj["metadata"]["name"] in dispatched:
            obj = copy.deepcopy(obj)  # the manifest as loaded stays as it is
            checks = _at(obj, ("spec", "admissionChecksStrategy")).setdefault("admissionChecks", [])
            if all(c.get("name") != ADMISSION_CHECK for c in checks):
                checks.append({"name": ADMISSION_CHECK})
            obj = canonical(obj)
        else:
            # Where the kind keeps managedBy, if MultiKueue dispatches it (its catalogue row).
            kueue = catalog.of(obj).kueue
            at = kueue.at if kueue is not None and kueue.multikueue else None
            meta = obj.get("metadata") or {}
            queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
            if at is not None and (meta.get("namespace", ""), queue) in local:
                obj = copy.deepcopy(obj)
                _at(obj, at)["managedBy"] = MULTIKUEUE
                obj = canonical(obj)
        out.append(obj)
    return out, problems


def _is(obj: Manifest, kind: str) -> bool:
    return bool(
        str(obj.get("apiVersion", "")).startswith("kueue.x-k8s.io/") and obj["kind"] == kind
    )
