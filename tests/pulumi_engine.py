"""A model of ``pulumi up`` with pulumi-kubernetes against a cluster, fed with what a program
registered under the SDK's mocks (every resource option captured by :mod:`pulumi_harness`).

No Pulumi engine or Kubernetes API server runs here, so each step follows the source that
decides it (pulumi-kubernetes v4.32.0 unless said otherwise; the engine is pulumi/pulumi's
``resource/deploy`` step generator as its resource options are documented):

- **Identity**: a registration is the resource of the last state whose URN it has, or whose URN
  is one of its aliases (the engine's alias resolution).
- **Diff** (``provider.go`` ``Diff``): the provider replaces when a changed field matches its
  ``forceNew`` list (``diff.go``; the mirror is kubetrain.delivery.engines, held to it by
  tests/test_engines.py), only ``metadata.name``/``namespace`` for a Patch resource; the engine
  adds the resource's ``replaceOnChanges`` (a path contains the changed field). The provider asks
  to delete before replacing when it replaces a named object in place
  (``DeleteBeforeReplace``: same name and namespace); the option asks it always.
- **Create** (``await.go`` ``Creation``): a Patch resource is a server-side apply (an existing
  object is taken over; the server still refuses immutable edits); any other create is a plain
  create, refused with AlreadyExists when the object exists (terminating included).
- **Update** (``await.go`` ``Update``): a server-side apply of the new inputs; the API server
  refuses what :func:`kubetrain.kube.immutable.update_refusals` says.
- **Delete** (``await.go`` ``Deletion``): skipped for ``retainOnDelete`` (the engine); a Patch
  resource relinquishes its fields (the object stays); otherwise a delete with
  ``pulumi.com/deletionPropagationPolicy`` (Foreground by default), awaited unless the object
  says ``pulumi.com/skipAwait`` and is a kind whose delete that skips
  (``overrides.go`` ``allowsSkipAwaitWithDelete``). A delete not awaited leaves the object in
  the cluster while it terminates: a Pod always (graceful termination), any object deleted in
  the foreground (until its dependents are gone). A background delete removes a Job at once.
- **Order**: registrations in program order (creates, updates, delete-then-create replaces),
  create-then-delete replaces and the deletes of resources no longer registered last.

The cluster is a map of objects; between two ``pulumi up`` runs terminating objects finish.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubetrain.delivery.engines import (
    _METADATA_FORCE_NEW,
    _contains,
    _display,
    _force_new_matches,
    pulumi_changes,
)
from kubetrain.kube import catalog
from kubetrain.kube.immutable import update_refusals

from pulumi_harness import Registration, Run

Key = tuple[str, str, str, str]
#: ``allowsSkipAwaitWithDelete``: kinds whose delete ``pulumi.com/skipAwait`` skips.
LEGACY_SKIP_DELETE = frozenset(
    {
        ("", "Namespace"),
        ("", "Pod"),
        ("", "ReplicationController"),
        ("apps", "DaemonSet"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("batch", "Job"),
    }
)


def key_of(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (
        str(obj["apiVersion"]).rpartition("/")[0],
        str(obj["kind"]),
        str(meta.get("namespace") or ""),
        str(meta["name"]),
    )


class PulumiFailure(AssertionError):
    """A step of ``pulumi up`` that would fail on a real cluster."""


@dataclass
class Resource:
    """One resource of a Pulumi state."""

    urn: str
    type: str
    inputs: dict[str, Any]
    retain_on_delete: bool
    delete_before_replace: bool
    replace_on_changes: tuple[str, ...]
    aliases: tuple[str, ...] = ()

    @property
    def patch(self) -> bool:
        return self.type.endswith("Patch")

    @property
    def key(self) -> Key:
        return key_of(self.inputs)

    @classmethod
    def of(cls, reg: Registration, run: Run) -> Resource:
        return cls(
            urn=run.engine_urn(reg),
            type=reg.type,
            inputs=copy.deepcopy(reg.plain),
            retain_on_delete=reg.retain_on_delete,
            delete_before_replace=reg.delete_before_replace,
            replace_on_changes=reg.replace_on_changes,
            aliases=tuple(run.alias_urns(reg)),
        )


@dataclass
class Cluster:
    """What the API server holds: live objects, and those deleted but not gone yet."""

    objects: dict[Key, dict[str, Any]] = field(default_factory=dict)
    terminating: set[Key] = field(default_factory=set)
    log: list[str] = field(default_factory=list)

    def settle(self) -> None:
        """Time passes: terminating objects finish."""
        for key in self.terminating:
            self.objects.pop(key, None)
        self.terminating.clear()


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def provider_replacement(old: Resource, new: Resource) -> str | None:
    """The field the provider's diff replaces on (``None``: no replacement it asks for)."""
    kind = (str(new.inputs["apiVersion"]).rpartition("/")[0], str(new.inputs["kind"]))
    force_new = _METADATA_FORCE_NEW + (() if new.patch else catalog.lookup(kind).pulumi_force_new)
    for path, value in pulumi_changes(old.inputs, new.inputs):
        if any(_force_new_matches(p, path, value) for p in force_new):
            return _display(path)
    return None


def engine_replacement(old: Resource, new: Resource) -> str | None:
    """A field in the resource's ``replaceOnChanges`` that changed."""
    for path, _ in pulumi_changes(old.inputs, new.inputs):
        if any(_contains(p, path) for p in new.replace_on_changes):
            return _display(path)
    return None


class Engine:
    """``pulumi up`` runs against one cluster, keeping the state between them."""

    def __init__(self, cluster: Cluster | None = None) -> None:
        self.cluster = cluster or Cluster()
        self.state: dict[str, Resource] = {}

    # --- the provider's operations ---------------------------------------------------------

    def _create(self, res: Resource) -> None:
        live = self.cluster.objects
        if res.patch:
            current = live.get(res.key)
            if res.key in self.cluster.terminating:
                raise PulumiFailure(f"{res.urn}: server-side apply to an object being deleted")
            if current is not None and (refused := update_refusals(current, res.inputs)):
                raise PulumiFailure(f"{res.urn}: apply refused: {refused[0]}")
            live[res.key] = copy.deepcopy(res.inputs)
            self.cluster.log.append(f"apply {res.key}")
            return
        if res.key in live:
            raise PulumiFailure(f"{res.urn}: AlreadyExists ({res.key})")
        live[res.key] = copy.deepcopy(res.inputs)
        self.cluster.log.append(f"create {res.key}")

    def _update(self, old: Resource, new: Resource) -> None:
        current = self.cluster.objects.get(new.key)
        if current is None:
            raise PulumiFailure(f"{new.urn}: NotFound on update")
        refused = update_refusals(current, new.inputs)
        if refused:
            raise PulumiFailure(f"{new.urn}: the API server refuses the update: {refused[0]}")
        self.cluster.objects[new.key] = copy.deepcopy(new.inputs)
        self.cluster.log.append(f"update {new.key}")

    def _delete(self, res: Resource) -> None:
        if res.retain_on_delete:
            self.cluster.log.append(f"retain {res.key}")
            return
        if res.patch:
            self.cluster.log.append(f"relinquish {res.key}")
            return
        if res.key not in self.cluster.objects:
            return
        annotations = _annotations(res.inputs)
        policy = annotations.get("pulumi.com/deletionPropagationPolicy", "foreground")
        kind = res.key[:2]
        awaited = not (
            annotations.get("pulumi.com/skipAwait") == "true" and kind in LEGACY_SKIP_DELETE
        )
        lingers = not awaited and (kind == ("", "Pod") or policy == "foreground")
        if lingers:
            self.cluster.terminating.add(res.key)
            self.cluster.log.append(f"delete (not awaited) {res.key}")
        else:
            del self.cluster.objects[res.key]
            self.cluster.log.append(f"delete {res.key}")

    # --- the engine --------------------------------------------------------------------------

    def up(self, run: Run) -> None:
        """One ``pulumi up`` of what ``run`` registered; raises :class:`PulumiFailure`."""
        self.apply([Resource.of(r, run) for r in run.kubernetes_objects()])

    def apply(self, resources: Iterable[Resource]) -> None:
        old_state = dict(self.state)
        new_state: dict[str, Resource] = {}
        deferred: list[Resource] = []
        for res in resources:
            former = next((u for u in (res.urn, *res.aliases) if u in old_state), None)
            if former is None:
                self._create(res)
            else:
                old = old_state.pop(former)
                provider = provider_replacement(old, res)
                engine = engine_replacement(old, res)
                if provider is None and engine is None:
                    self._update(old, res)
                else:
                    provider_dbr = provider is not None and old.key == res.key
                    if provider_dbr or res.delete_before_replace:
                        self._delete(old)
                        self._create(res)
                    else:
                        self._create(res)
                        deferred.append(old)
            new_state[res.urn] = res
        for old in deferred:
            self._delete(old)
        for old in old_state.values():
            self._delete(old)
        self.state = new_state
        self.cluster.settle()

    def destroy(self) -> None:
        for res in reversed(list(self.state.values())):
            self._delete(res)
        self.state = {}
        self.cluster.settle()

    def assert_converged(self) -> None:
        """The cluster holds every object of the state as registered."""
        for res in self.state.values():
            live = self.cluster.objects.get(res.key)
            assert live == res.inputs, f"{res.urn} is not as registered"
