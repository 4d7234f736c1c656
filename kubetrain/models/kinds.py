"""The one place a job kind is declared, and everything looked up from that declaration.

After lightkube's ``resource_registry.register``
(``gtsystem/lightkube:src/lightkube/core/resource_registry.py``): a kind is registered once under
its (group, kind) in the catalogue of kinds (:mod:`kubetrain.kube.catalog`), and a second
declaration of that key is an error, unless it is an older version converted into the declared
one (``expanded_as``: ``kubeflow.org/v1alpha1`` TFJob). The declaration is the row's
``declared`` column, and a kind with replica specs gives the row its ``pods`` (where
``validate``, gang scheduling and ``plan`` find its pod templates). A kind module declares its
document class with :func:`declare`; the other layers attach what they own to that declaration
instead of keeping lists of their own:

* the builder (``kubetrain.builders.registry.builder``) and the Pulumi component
  (``components._program.component``) are attached to the declaration of the document class the
  builders expand (:attr:`KindDeclaration.expanded_as`: a ``kubeflow.org/v1alpha1`` TFJob is
  expanded as a v1 TFJob);
* the editor schemas and ``kubetrain schema`` read :func:`declarations`;
* ``tests/test_kinds.py`` fails when a declared kind lacks a builder, a component, a bad-input
  fixture, a golden case or an example stack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..kube import catalog
from ..kube.catalog import GroupKind, Pods
from .base import JobDocument, job_kind

__all__ = [
    "KindDeclaration",
    "attach_builder",
    "attach_component",
    "declaration",
    "declarations",
    "declare",
]

J = TypeVar("J", bound=type[JobDocument])


@dataclass
class KindDeclaration:
    """What kubetrain knows of one accepted job kind."""

    document: type[JobDocument]
    #: One line saying what the kind is, for lists of kinds (CLI help, docs).
    summary: str
    #: The key of the custom resource's replica-spec map whose values hold a pod ``template``
    #: and a ``replicas`` count (``tfReplicaSpecs``); ``None`` for kinds without pod templates.
    replica_specs_key: str | None = None
    #: The document class builders expand (``document`` itself unless it is converted first).
    expanded_as: type[JobDocument] | None = None
    builder: Callable[..., Any] | None = field(default=None, repr=False)
    #: The Pulumi component of the kind, and the components it creates as children.
    component: type | None = field(default=None, repr=False)
    child_components: tuple[type, ...] = field(default=(), repr=False)

    @property
    def key(self) -> tuple[str, str]:
        return (self.document.API_VERSION, self.document.KIND)

    @property
    def expanded(self) -> KindDeclaration:
        """The declaration of the class the builders expand."""
        return declaration(self.expanded_as or self.document)


_DECLARATIONS: dict[tuple[str, str], KindDeclaration] = {}


def declare(
    summary: str,
    *,
    replica_specs_key: str | None = None,
    expanded_as: type[JobDocument] | None = None,
) -> Callable[[J], J]:
    """Class decorator declaring a job kind under its ``API_VERSION`` and ``KIND`` (and
    registering its document model, see :func:`kubetrain.models.base.job_kind`). A replica job's
    ``replica_specs_key`` is its class's ``REPLICA_SPECS_KEY`` unless given."""

    def register(cls: J) -> J:
        key = (cls.API_VERSION, cls.KIND)
        group_kind = GroupKind.parse(cls.API_VERSION, cls.KIND)
        if key in _DECLARATIONS:
            raise RuntimeError(f"job kind {key} declared twice")
        if expanded_as is None and "declared" in catalog.lookup(group_kind).attached:
            raise RuntimeError(f"job kind {group_kind} declared twice")
        job_kind(cls)
        specs_key = replica_specs_key or getattr(cls, "REPLICA_SPECS_KEY", None)
        found = _DECLARATIONS[key] = KindDeclaration(cls, summary, specs_key, expanded_as)
        if expanded_as is None:
            catalog.attach(group_kind, "declared", found)
            if specs_key is not None:
                # Each replica type's pod ``template``, ``replicas`` pods of it.
                pods = Pods(("spec", specs_key), "map", ("template",), (("replicas",),))
                catalog.attach(group_kind, "pods", pods)
        return cls

    return register


def declarations() -> list[KindDeclaration]:
    """Every declared kind, sorted by (apiVersion, kind)."""
    return [_DECLARATIONS[k] for k in sorted(_DECLARATIONS)]


def declaration(document: type[JobDocument]) -> KindDeclaration:
    """The declaration of a document class."""
    found = _DECLARATIONS.get((document.API_VERSION, document.KIND))
    if found is None or found.document is not document:
        raise LookupError(f"{document.__name__} is not a declared job kind")
    return found


def attach_builder(document: type[JobDocument], fn: Callable[..., Any]) -> None:
    """Attach the builder of a (expanded) document class; a second one is an error."""
    target = declaration(document)
    if target.builder is not None and target.builder is not fn:
        raise RuntimeError(f"{document.KIND} ({document.API_VERSION}) has a builder already")
    target.builder = fn


def attach_component(
    document: type[JobDocument], component: type, children: tuple[type, ...] = ()
) -> None:
    """Attach the Pulumi component of a (expanded) document class; a second one is an error."""
    target = declaration(document)
    if target.component is not None and target.component is not component:
        raise RuntimeError(f"{document.KIND} ({document.API_VERSION}) has a component already")
    target.component = component
    target.child_components = children
