"""The catalogue of kinds: one row per (API group, kind) holding what every layer knows of it.

A row (:class:`Kind`) says, for one kind: its versions, scope and plural (generated: built-in
kinds from the bundled schemas, third-party kinds from their CRDs, :mod:`._generated`, by
``make catalog``), and the hand columns, which sit per API group in this package
(:mod:`.core`, :mod:`.apps`, :mod:`.batch`, :mod:`.kubeflow`...): install rank, lifecycle
class, where its pod templates are, the API server's name rule and checks, its update
refusals, what Pulumi must replace, Kueue's integration, the Kubernetes version its CRD
embeds. Layers above ``kube`` attach what they own to the row (a declared job kind's document
class, its operator's admission webhook), as :mod:`kubetrain.models.kinds` does; a second
declaration of one (group, kind) is an error.

Every per-kind question is a lookup here (:func:`of`, :func:`lookup`): a kind is never known
by its name alone, so a ``Job`` of another group is nothing like ``batch/v1`` Job
(``tests/test_catalog.py``).
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache, cached_property, lru_cache
from typing import Any, NamedTuple

__all__ = [
    "BATCH_JOB",
    "JOB_SET",
    "POD",
    "ApiChecks",
    "GroupKind",
    "Kind",
    "Kueue",
    "Life",
    "PodTemplate",
    "Pods",
    "Scope",
    "attach",
    "group_of",
    "lookup",
    "named",
    "of",
    "pod_templates",
    "rows",
]


class GroupKind(NamedTuple):
    """A kind's identity: its API group (``""`` for the core group) and kind."""

    group: str
    kind: str

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> GroupKind:
        """The (group, kind) of an object (``apiVersion`` without its version)."""
        return cls(group_of(str(obj.get("apiVersion") or "")), str(obj.get("kind") or ""))

    @classmethod
    def parse(cls, api_version: str, kind: str) -> GroupKind:
        return cls(group_of(api_version), kind)

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind


#: The kinds several layers ask about by identity (a builder picking its own Jobs out of what it
#: built, Kueue's batch/job integration): keys, never names alone.
POD = GroupKind("", "Pod")
BATCH_JOB = GroupKind("batch", "Job")
JOB_SET = GroupKind("jobset.x-k8s.io", "JobSet")


def group_of(api_version: str) -> str:
    """``apps/v1`` -> ``apps``; ``v1`` -> ``""``."""
    return api_version.rpartition("/")[0]


class Scope(enum.Enum):
    NAMESPACED = "Namespaced"
    CLUSTER = "Cluster"


class Life(enum.Flag):
    """How delivery engines treat a kind's objects over their life (:mod:`kubetrain.builders.
    lifecycle` writes the annotations)."""

    NONE = 0
    #: Never deleted by an engine, whatever the stack says (CRDs, Namespaces).
    RETAINED = enum.auto()
    #: Holds data: never deleted unless ``kubetrain:pruneData`` (claims, volumes).
    DATA = enum.auto()
    #: Deleted and re-created when an edit cannot be made in place: what runs a training
    #: natively, and the operator-mode custom resources whose CRDs make fields immutable (a
    #: TrainJob's trainer or runtimeRef, a PyTorchJob's queue): an edit of those starts a new
    #: run under every engine instead of failing the whole delivery (Flux dry-runs every object
    #: of a step first, and one refusal stops the step).
    REPLACED = enum.auto()
    #: Delivered in the prerequisites step: what admission checks or uses when it admits a pod
    #: (the ServiceAccount, Priority, RuntimeClass, LimitRanger and ResourceQuota plugins), the
    #: Namespaces they live in, and what a webhook looks up when it admits a job (a TrainJob's
    #: runtime).
    PREREQUISITE = enum.auto()
    #: Replaced by Argo CD on any change (``Force=true,Replace=true``: ``kubectl replace
    #: --force``, delete then create), not only when an edit cannot be made in place: see the
    #: TrainJob's row (:mod:`.trainer`).
    REPLACED_ON_ANY_CHANGE = enum.auto()
    #: Deleted in the background by every engine: its operator keeps re-creating what it
    #: owns while it is being deleted, so a foreground delete (pulumi-kubernetes' default)
    #: never ends: see the TrainJob's row (:mod:`.trainer`).
    DELETED_IN_BACKGROUND = enum.auto()


Path = tuple[str | int, ...]


@dataclass(frozen=True)
class PodTemplate:
    """A pod, or a pod template, inside an object: where, the mapping itself (callers may change
    it in place), and how many pods it makes at once."""

    path: Path
    template: dict[str, Any]
    count: int

    # Read by every rule of validate: found once.
    @cached_property
    def meta(self) -> Mapping[str, Any]:
        return _mapping(self.template.get("metadata"))

    @cached_property
    def spec(self) -> Mapping[str, Any]:
        return _mapping(self.template.get("spec"))

    @cached_property
    def labels(self) -> Mapping[str, Any]:
        return _mapping(self.meta.get("labels"))


def _mapping(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # the common case, without the ABC check
        return value
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class Pods:
    """Where a kind's objects hold their pods: ``items`` leads from the object to one item (the
    object itself when empty), a list of items (``each="list"``) or a map of them
    (``each="map"``); ``template`` leads from an item to its pod template (the item itself when
    empty); the pods per template are the product of the integers at ``counts`` (each 1 when
    absent)."""

    items: tuple[str, ...] = ()
    each: str | None = None
    template: tuple[str, ...] = ()
    counts: tuple[tuple[str, ...], ...] = ()

    def find(self, obj: Mapping[str, Any]) -> Iterator[PodTemplate]:
        node = _at(obj, self.items)
        entries: list[tuple[Path, Any]]
        if self.each is None:
            entries = [(self.items, node)]
        elif self.each == "list":
            entries = [((*self.items, i), v) for i, v in enumerate(node)] if _is_list(node) else []
        else:
            entries = [((*self.items, k), v) for k, v in node.items()] if _is_map(node) else []
        for where, item in entries:
            template = _at(item, self.template)
            if not _is_map(template):
                continue
            count = 1
            for path in self.counts:
                value = _at(item, path)
                count *= value if isinstance(value, int) and not isinstance(value, bool) else 1
            yield PodTemplate((*where, *self.template), template, count)


def _is_map(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _at(node: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not _is_map(node):
            return None
        node = node.get(key)
    return node


@dataclass(frozen=True)
class ApiChecks:
    """What the API server checks of a kind on create beyond its schema, mirrored in
    :mod:`kubetrain.kube.apiserver`: the rule its name follows (``None``: one that depends on
    the version, ``name_rule_since``) and the kind's own checks."""

    name_rule: Callable[[str, bool], str | None] | None
    validate: Callable[..., None] | None = None
    #: For a name rule that changed: (minor version, rule from then on, rule before).
    name_rule_since: (
        tuple[tuple[int, int], Callable[[str, bool], str | None], Callable[[str, bool], str | None]]
        | None
    ) = None

    def name_rule_at(self, version: tuple[int, int]) -> Callable[[str, bool], str | None]:
        if self.name_rule is not None:
            return self.name_rule
        assert self.name_rule_since is not None
        since, new, old = self.name_rule_since
        return new if version >= since else old


@dataclass(frozen=True)
class Kueue:
    """How Kueue admits a kind (v0.19.2's ``jobframework`` integrations): where the object keeps
    ``suspend`` and ``managedBy`` (``at``; ``None``: its pods are gated, never suspended),
    whether an object is one workload Kueue admits, and whether MultiKueue dispatches it."""

    at: tuple[str, ...] | None
    workload: bool = True
    multikueue: bool = False

    @property
    def suspend_path(self) -> str:
        """The dotted path of ``suspend`` (``""`` when the kind has none)."""
        return ".".join((*self.at, "suspend")) if self.at is not None else ""


@dataclass
class Kind:
    """One row of the catalogue. Defaults describe a kind kubetrain knows nothing of."""

    group: str
    kind: str
    #: Generated: the versions served (built-in: under any supported Kubernetes version; a
    #: custom resource: its CRD's served versions), newest first as their CRD or schemas list them.
    versions: tuple[str, ...] = ()
    #: Generated: where its objects live (``None``: nothing says).
    scope: Scope | None = None
    #: Generated for custom resources (their CRD's ``spec.names.plural``); for built-in kinds
    #: the resource name the API serves them under.
    plural: str = ""
    #: Whether Kubernetes serves the kind itself (generated from the bundled schemas).
    builtin: bool = False
    #: Install order (lower first, after Helm's); ``None``: after every ranked kind.
    rank: int | None = None
    life: Life = Life.NONE
    #: Objects jobs may share, built once per stack whichever jobs build them (CRDs, Namespaces).
    shared: bool = False
    #: Where its objects hold pods (``None``: they hold none).
    pods: Pods | None = None
    #: Whether kubetrain's gang scheduling counts and decorates its pods, and Pulumi's awaiting
    #: applies to them: the objects that run pods without an operator.
    gang: bool = False
    #: Whether an edit of its pod template in place rolls its pods.
    rolls: bool = False
    #: The API server's checks on create (``None``: its metadata and keyed lists only).
    api: ApiChecks | None = None
    #: The API server's (or its webhook's) refusals of an update in place: (before, after) ->
    #: refusals (:mod:`kubetrain.kube.immutable`).
    update_rules: Callable[[Any, Any], list[Any]] | None = None
    #: pulumi-kubernetes' ``forceNew`` fields (``provider/pkg/provider/diff.go``).
    pulumi_force_new: tuple[str, ...] = ()
    #: What kubetrain adds to ``replaceOnChanges`` (:mod:`kubetrain.delivery.engines`).
    pulumi_replace_on_changes: tuple[str, ...] = ()
    #: The provider awaits its create and ``skipAwait`` also skips its delete
    #: (``allowsSkipAwaitWithDelete``).
    pulumi_fixed_name: bool = False
    kueue: Kueue | None = None
    #: The Kubernetes minor whose types its CRD embeds (``k8s.io/api`` of the operator's go.mod).
    crd_kubernetes: tuple[int, int] | None = None
    #: Validated by the schema of its ``@resource_kind`` model, not by the CRD of
    #: ``../shared/crds`` (which holds an older release than the clusters kubetrain targets run).
    model_schema: bool = False
    #: Quantities the operator's mutating webhook re-encodes (paths, ``[]`` for every item).
    webhook_quantities: tuple[tuple[str, ...], ...] = ()
    #: The in-cluster program that reconciles the kind's objects, for messages ("training
    #: operator"): what kubetrain's native mode stands in for.
    operator: str = ""
    #: The kind whose jobs replace this kind's (the training operator v1's by Trainer v2's
    #: TrainJob, as ``kubetrain convert`` maps them).
    successor: tuple[str, str] | None = None
    #: The key of the stack's ``kubetrain:external`` that lists objects of this kind the cluster
    #: has without the stack (what pods and bindings reference by name), ``""`` for none.
    external: str = ""
    #: Where the row's hand columns come from (a module of this package), for messages.
    source: str = ""
    #: Attached by the layers above (see :func:`attach`): ``declared`` (a job kind's
    #: :class:`kubetrain.models.kinds.KindDeclaration`), ``webhook`` ((origin, check)).
    attached: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> GroupKind:
        return GroupKind(self.group, self.kind)

    @property
    def known(self) -> bool:
        return bool(self.versions or self.source or self.attached)

    @property
    def namespaced(self) -> bool | None:
        return None if self.scope is None else self.scope is Scope.NAMESPACED

    @property
    def file_stem(self) -> str:
        """The ``<stem>-<name>.yaml`` of its files in ``rendered/``: the kind in lower case, or,
        for a kind of another group named as one of Kubernetes' stable kinds (Volcano's
        ``Job``), the kind qualified by its group, so that it never takes or renames a
        built-in's file. (Kubernetes' ``PodGroup`` is beta: the schedulers' keep theirs.)"""
        if not self.builtin and self.kind in _stable_builtin_names():
            return f"{self.kind.lower()}.{self.group}"
        return self.kind.lower()

    def pod_templates(self, obj: Mapping[str, Any]) -> list[PodTemplate]:
        return list(self.pods.find(obj)) if self.pods is not None else []


#: The modules of this package holding hand columns, one per API group (or family of groups).
_HAND_MODULES = (
    "core",
    "apps",
    "batch",
    "rbac",
    "kubernetes",
    "jobset",
    "kubeflow",
    "trainer",
    "kueue",
    "volcano",
    "scheduler_plugins",
    "external_secrets",
    "kubetrain_io",
    "others",
)


@dataclass(frozen=True)
class Hand:
    """The hand columns of one row (see :class:`Kind`); what is not given stays as generated."""

    kind: str
    columns: dict[str, Any]


def hand(kind: str, **columns: Any) -> Hand:
    return Hand(kind, columns)


def group(name: str, *rows: Hand) -> tuple[str, tuple[Hand, ...]]:
    """One API group's hand rows, as a module of this package lists them in ``GROUPS``."""
    return name, rows


_ROWS: dict[GroupKind, Kind] = {}
_LOADED: list[bool] = []


def _load() -> dict[GroupKind, Kind]:
    if _LOADED:
        return _ROWS
    from . import _generated

    rows: dict[GroupKind, Kind] = {}
    builtin_versions: Mapping[tuple[str, str], tuple[str, ...]] = _generated.BUILTIN
    for (grp, kind), versions in builtin_versions.items():
        rows[GroupKind(grp, kind)] = Kind(
            grp, kind, versions=versions, builtin=True, plural=_guess_plural(kind)
        )
    for (grp, kind), (plural, namespaced, versions) in _generated.THIRD_PARTY.items():
        scope = Scope.NAMESPACED if namespaced else Scope.CLUSTER
        rows[GroupKind(grp, kind)] = Kind(grp, kind, versions=versions, scope=scope, plural=plural)
    for module in _HAND_MODULES:
        mod = importlib.import_module(f"{__name__}.{module}")
        for grp, hands in mod.GROUPS:
            for h in hands:
                key = GroupKind(grp, h.kind)
                row = rows.get(key) or Kind(grp, h.kind)
                if row.source:
                    raise RuntimeError(f"{key}: hand columns in {row.source} and {module}")
                rows[key] = replace(row, source=module, **h.columns)
    # Kubernetes' own kinds are namespaced unless their group's module says otherwise.
    for key, row in rows.items():
        if row.builtin and row.scope is None:
            rows[key] = replace(row, scope=Scope.NAMESPACED)
    _ROWS.update(rows)
    _LOADED.append(True)
    return _ROWS


def rows() -> list[Kind]:
    """Every row, sorted by (group, kind)."""
    table = _load()
    return [table[k] for k in sorted(table)]


def lookup(key: tuple[str, str]) -> Kind:
    """The row of (group, kind); for a kind the catalogue does not know, a row with every
    column empty (:attr:`Kind.known` is false)."""
    found = (_ROWS if _LOADED else _load()).get(key)  # type: ignore[call-overload]
    return found if found is not None else _unknown(*key)


@lru_cache(maxsize=1024)
def _unknown(group: str, kind: str) -> Kind:
    return Kind(group, kind)


def named(kind: str) -> list[Kind]:
    """Every row of a kind of that name, in any group, by group (a job's title names its kind
    only: ``PyTorchJob ml/bert``)."""
    return [row for row in rows() if row.kind == kind]


def of(obj: Mapping[str, Any]) -> Kind:
    """The row of an object's kind."""
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if type(api_version) is str and type(kind) is str:
        # Asked about a dozen times per object by render's steps: found once per apiVersion.
        found = _OF.get((api_version, kind))
        if found is None:
            found = lookup((api_version.rpartition("/")[0], kind))
            if len(_OF) < OF_REMEMBERED:  # hand-written input may name any number of kinds
                _OF[api_version, kind] = found
        return found
    group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    return lookup((group, kind if isinstance(kind, str) else ""))


#: (apiVersion, kind) -> its row, as :func:`of` found it (emptied by :func:`attach`, which can
#: give a kind the catalogue did not know a row of its own), for at most OF_REMEMBERED pairs.
_OF: dict[tuple[str, str], Kind] = {}
OF_REMEMBERED = 4096


def pod_templates(obj: Any) -> list[PodTemplate]:
    """The pods and pod templates of one object, however its kind holds them (none for kinds
    without pods, and for anything that is not an object)."""
    if not _is_map(obj):
        return []
    return of(obj).pod_templates(obj)


def attach(key: tuple[str, str], column: str, value: Any) -> Kind:
    """Attach what a layer above ``kube`` owns of a kind to its row: a column of :class:`Kind`
    the row leaves empty (a declared kind's ``pods``), or anything else under
    :attr:`Kind.attached` (``declared``, ``webhook``); the row is created for a kind the
    catalogue has none of. A second, different value for the same column is an error."""
    table = _load()
    gk = GroupKind(*key)
    row = table.get(gk)
    if row is None:
        row = table[gk] = Kind(*gk)
        _OF.clear()
    if column in _COLUMNS:
        current = getattr(row, column)
        if current not in (None, (), "", False) and current != value:
            raise RuntimeError(f"{gk}: {column} given twice")
        setattr(row, column, value)
        return row
    if column in row.attached and row.attached[column] is not value:
        raise RuntimeError(f"{gk}: {column} attached twice")
    row.attached[column] = value
    return row


_COLUMNS = frozenset(f.name for f in fields(Kind)) - {"group", "kind", "attached"}


@cache
def _stable_builtin_names() -> frozenset[str]:
    """Kinds Kubernetes serves at a GA version (``v1``, ``v2``)."""
    return frozenset(
        row.kind
        for row in _load().values()
        if row.builtin and any(v[1:].isdigit() for v in row.versions)
    )


def _guess_plural(kind: str) -> str:
    """apimachinery's ``meta.UnsafeGuessKindToResource`` (``k8s.io/apimachinery/pkg/api/meta/
    restmapper.go``): the resource name of a built-in kind."""
    lower = kind.lower()
    if lower.endswith("endpoints"):  # unpluralizedSuffixes
        return lower
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"
