"""Registration: every manifest a builder returns becomes the matching typed ``pulumi_kubernetes``
resource, a child of the component that asked for it.

- Kinds Kubernetes serves itself map to their typed class (``core.v1.Pod``, ``apps.v1.StatefulSet``
  ...); everything else (ExternalSecret, PodGroup, TFJob, TrainingJob) is an
  ``apiextensions.CustomResource``.
- The manifest's top-level fields are passed as the class's arguments. The typed classes do not
  rename the keys of dict arguments, so the engine receives the manifest field for field
  (tests/test_pulumi_program.py compares every registered object with ``kubetrain render``).
- ``metadata.name`` is always set by the builders, so nothing is auto-named; the Pulumi name is
  ``<namespace>/<name>`` (``<name>`` for cluster-scoped kinds), as pulumi_kubernetes' YAML
  support names objects, and the type token carries the group, version and kind.
- ``parent`` is the component, so the component's provider(s), ``protect`` and transforms reach
  every object (Pulumi applies a parent's transforms to its children). A component's
  ``depends_on`` is passed to every object too, and an object depends on the prerequisites
  (ServiceAccounts, Secrets, Roles, CRDs..., see :func:`is_prerequisite`) registered with it.
- Credential markers become secret outputs (:mod:`components._secrets`).
- Objects no engine may delete (kubetrain's CRDs and Namespaces, and claims unless
  ``kubetrain:pruneData``: :func:`kubetrain.builders.lifecycle.is_retained`) are
  ``retain_on_delete`` Patch resources (``NamespacePatch``, ``CustomResourceDefinitionPatch``,
  ``PersistentVolumeClaimPatch``...): removing them from the stack, or destroying it, leaves them
  in the cluster, and creating them again (the job of a namespace added back, a ``pulumi up``
  after ``pulumi destroy``, a stack upgraded from a kubetrain that did not manage namespaces, a
  CRD another environment delivers too) takes over the object that is there instead of failing
  with AlreadyExists: a Patch resource's create is a server-side apply
  (``await.go`` ``Creation``), where pulumi-kubernetes >= 4.29 sends every other create as a
  plain create. Their ``pulumi.com/patchForce`` annotation lets the values kubetrain declares win
  over an earlier field manager's. Each answers to the URN of the typed resource an older
  kubetrain registered it as (an alias), so the upgrade updates it rather than deleting it; and
  every other object to the URN of its Patch variant (a claim under ``kubetrain:pruneData``
  was kept before).
  The other choices were the provider's ``upsertExistingObjects``, which would also let a
  rename quietly adopt and then delete a Job, and ``pulumi import``, a manual step per object.
- Every object is ``delete_before_replace`` (kubetrain names every object, so its replacement
  has the same name: created first, it would fail with AlreadyExists; the provider asks for it
  only for replacements its own diff decides, not for those ``replace_on_changes`` adds), and
  ``replace_on_changes`` lists what the API server refuses to change in place that the
  provider's diff would update in place (:func:`kubetrain.delivery.engines.replace_on_changes`:
  a Pod's spec, a JobSet's replicatedJobs...).
- Identities stay: an object under a component also answers to the URN it had under the stack
  (an alias), for an object several jobs built identically moves between the two when one of
  them goes; :func:`register` takes further aliases per object.
"""

import importlib
import inspect
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kubetrain.builders.lifecycle import is_retained
from kubetrain.builders.meta import plain_copy
from kubetrain.builders.order import installs_before, sort_key
from kubetrain.delivery.engines import replace_on_changes
from kubetrain.kube import catalog

from ._secrets import Credentials, find_markers

__all__ = [
    "Identity",
    "identity",
    "is_prerequisite",
    "prerequisites_of",
    "pulumi_name",
    "register",
    "resource_class",
]

Manifest = dict[str, Any]
Identity = tuple[str, str, str, str]
SERVICE = ("", "Service")


def is_prerequisite(obj: Manifest) -> bool:
    """Whether other objects need ``obj`` to exist first (every kind the install order puts
    before Service): a Pod is rejected while its ServiceAccount is missing, a custom resource
    while its CRD is."""
    return installs_before(obj, SERVICE)


def identity(obj: Manifest) -> Identity:
    """(apiVersion, kind, namespace, name) of a manifest."""
    meta = obj["metadata"]
    return (obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"])


def pulumi_name(obj: Manifest) -> str:
    """The Pulumi resource name of a manifest: ``<namespace>/<name>`` or ``<name>``."""
    meta = obj["metadata"]
    namespace = meta.get("namespace")
    if namespace and catalog.of(obj).scope is not catalog.Scope.CLUSTER:
        return f"{namespace}/{meta['name']}"
    return str(meta["name"])


def resource_class(api_version: str, kind: str) -> type[pulumi.CustomResource]:
    """The pulumi_kubernetes class a manifest is registered as: its typed class for a kind
    Kubernetes serves itself (:attr:`kubetrain.kube.catalog.Kind.builtin`; a plain manifest
    may be any: ``storage.k8s.io/v1 StorageClass`` is ``k8s.storage.v1.StorageClass``), else
    ``apiextensions.CustomResource``."""
    group, _, version = api_version.rpartition("/")
    if catalog.lookup((group, kind)).builtin:
        module = "core" if not group else group.split(".")[0]
        found = getattr(getattr(getattr(k8s, module, None), version, None), kind, None)
        if isinstance(found, type) and issubclass(found, pulumi.CustomResource):
            return found
    return k8s.apiextensions.CustomResource


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


_ARGUMENTS: dict[type[pulumi.CustomResource], frozenset[str]] = {}


def _arguments(cls: type[pulumi.CustomResource]) -> frozenset[str]:
    """The Python argument names a typed class accepts for the object's fields."""
    found = _ARGUMENTS.get(cls)
    if found is None:
        params = inspect.signature(cls._internal_init).parameters  # type: ignore[attr-defined]
        found = frozenset(params) - {"__self__", "self", "resource_name", "opts", "__props__"}
        _ARGUMENTS[cls] = found
    return found


def type_token(api_version: str, kind: str) -> str:
    """The Pulumi type of a typed pulumi_kubernetes resource (or a custom resource) of this
    kind: ``kubernetes:core/v1:Namespace``, ``kubernetes:apps/v1:StatefulSet``."""
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def patch_class(cls: type[pulumi.CustomResource], kind: str) -> type[pulumi.CustomResource]:
    """The Patch variant of a pulumi_kubernetes class (``NamespacePatch`` of ``Namespace``)."""
    if cls is k8s.apiextensions.CustomResource:
        return k8s.apiextensions.CustomResourcePatch
    package = importlib.import_module(cls.__module__.rpartition(".")[0])
    found = getattr(package, f"{kind}Patch", None)
    if not (isinstance(found, type) and issubclass(found, pulumi.CustomResource)):
        raise ValueError(f"pulumi_kubernetes has no {kind}Patch")
    return found


def _create(obj: Manifest, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    api_version, kind = obj["apiVersion"], obj["kind"]
    cls = resource_class(api_version, kind)
    if is_retained(obj):
        cls = patch_class(cls, kind)
    name = pulumi_name(obj)
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    if cls in (k8s.apiextensions.CustomResource, k8s.apiextensions.CustomResourcePatch):
        extra = sorted(set(body) - {"metadata", "spec"})
        if extra:
            raise ValueError(
                f"{kind} {name}: a custom resource is registered with metadata and spec only, "
                f"got {', '.join(extra)}"
            )
        return cls(name, api_version=api_version, kind=kind, opts=opts, **body)
    accepted = _arguments(cls)
    kwargs = {_snake(k): v for k, v in body.items()}
    unknown = sorted(k for k in body if _snake(k) not in accepted)
    if unknown:
        raise ValueError(f"{kind} {name}: {cls.__name__} takes no field {', '.join(unknown)}")
    return cls(name, opts=opts, **kwargs)


def register(
    parent: pulumi.Resource | None,
    manifests: Iterable[Manifest],
    *,
    where: str,
    depends_on: Any = None,
    aliases: Mapping[Identity, Sequence[pulumi.Alias]] | None = None,
) -> dict[Identity, pulumi.CustomResource]:
    """Register ``manifests`` as children of ``parent`` (``None``: the stack), in install order.

    ``where`` names the component in problems (a credential the stack does not set);
    ``depends_on`` (a resource option value) is added to every object's dependencies;
    ``aliases`` gives former identities of objects (see the module docstring).
    """
    objs = sorted((plain_copy(m) for m in manifests), key=sort_key)
    credentials = Credentials(where)
    credentials.check([m for obj in objs for m in find_markers(obj)])
    registered: dict[Identity, pulumi.CustomResource] = {}
    prerequisites: list[pulumi.Resource] = []
    for obj in objs:
        key = identity(obj)
        if key in registered:
            raise ValueError(f"{where}: {obj['kind']} {pulumi_name(obj)} is built twice")
        former = list((aliases or {}).get(key, ()))
        if parent is not None:
            former.append(pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE))
        retained = is_retained(obj)
        # The other variant's URN: kept objects were typed resources in older kubetrains, and
        # a claim turns from one into the other with kubetrain:pruneData.
        typed = type_token(obj["apiVersion"], obj["kind"])
        other = typed if retained else f"{typed}Patch"
        former.append(pulumi.Alias(type_=other))
        if parent is not None and retained:
            former.append(pulumi.Alias(type_=other, parent=pulumi.ROOT_STACK_RESOURCE))
        opts = pulumi.ResourceOptions(
            parent=parent,
            depends_on=list(prerequisites),
            aliases=former or None,
            retain_on_delete=True if retained else None,
            delete_before_replace=True,
            replace_on_changes=replace_on_changes(obj) or None,
        )
        if depends_on is not None:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=depends_on))
        resource = _create(credentials.resolve(obj), opts)
        registered[key] = resource
        if is_prerequisite(obj):
            prerequisites.append(resource)
    return registered


def prerequisites_of(registered: Mapping[Identity, pulumi.Resource]) -> Sequence[pulumi.Resource]:
    """The registered objects other objects must wait for."""
    return [
        r
        for (api_version, kind, _, _), r in registered.items()
        if is_prerequisite({"apiVersion": api_version, "kind": kind})
    ]
