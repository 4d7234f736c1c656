"""Shared model machinery: strict models, object metadata, the job-kind registry.

Every job kind is a :class:`JobDocument` subclass registered with :func:`job_kind`. Embedded
Kubernetes types (a pod template, volumes, resource requirements) are kept as plain dicts typed
with :class:`K8sType`, and checked against the Kubernetes JSON schema of the stack's version when
the stack is loaded, so they are as strict as the API server without being modelled twice.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    field_validator,
)

from ..kube.limits import INT32_MAX
from ..kube.names import (
    DNS1035_LABEL,
    DNS1123_LABEL,
    DNS1123_SUBDOMAIN,
    LABEL_VALUE,
    NameRule,
    check_label_key,
)
from .limits import MAX_REPLICAS

if TYPE_CHECKING:
    from .stack import StackSettings

__all__ = [
    "K8S_DEFINITION_KEY",
    "MODE_ANNOTATION",
    "NATIVE_WORKLOAD_ANNOTATION",
    "UPSTREAM_KEY",
    "DNS1035Label",
    "DNSLabel",
    "DNSSubdomain",
    "DerivedName",
    "Int32",
    "JobDocument",
    "JobMeta",
    "K8sType",
    "LabelValue",
    "Mode",
    "OutputEstimate",
    "Replicas",
    "Strict",
    "job_kind",
    "job_kinds",
    "plain_copy",
    "reject_unquoted_number",
    "resource_kind",
    "resource_kinds",
    "upstream",
]

#: Annotation that switches one job to operator (or native) mode.
MODE_ANNOTATION = "kubetrain.io/mode"


class Mode(enum.StrEnum):
    """How a job is delivered: ``native``, the objects its operator would create, or
    ``operator``, its custom resource for a cluster running the operator. The stack file,
    annotations, Pulumi config and outputs hold the strings; code compares the members (a
    misspelt member is an error, a misspelt string would compare unequal without a word)."""

    NATIVE = "native"
    OPERATOR = "operator"

    @classmethod
    def parse(cls, value: str) -> Mode | None:
        """The member spelled ``value``, or ``None`` (what a message then quotes)."""
        return next((m for m in cls if m.value == value), None)


#: Annotation that picks, for one Kubeflow job in native mode, what runs each replica index
#: (pod, job or jobset), over the stack's ``kubetrain:nativeWorkload``.
NATIVE_WORKLOAD_ANNOTATION = "kubetrain.io/native-workload"

#: JSON-schema key naming the Kubernetes definition of an embedded type.
K8S_DEFINITION_KEY = "x-kubetrain-k8s-definition"
#: JSON-schema key holding what a third-party kind's real CRD says of a field where kubetrain's
#: input model is deliberately stricter (see :func:`upstream`).
UPSTREAM_KEY = "x-kubetrain-upstream"


def upstream(**schema: Any) -> dict[str, Any]:
    """``json_schema_extra`` of a field whose upstream CRD differs from kubetrain's input rule:
    the schema keywords the CRD has instead (``None``: it has none). kubetrain refuses such a
    value in a stack file, where it could not build what was meant (a TFJob with
    ``replicas: -1``), but ``kubetrain validate`` checks a custom resource of that kind as the
    API server does, under the upstream CRD."""
    return {UPSTREAM_KEY: schema}


class Strict(BaseModel):
    """Base of every input model: unknown keys are errors, values are immutable, and types are
    strict (``replicas: yes``, ``"3"`` and ``1.0`` are not integers; a float field takes an
    integer)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, strict=True, defer_build=True
    )


#: An ``int32`` of Kubernetes' API (seconds, counts, ports): at most 2**31 - 1 (every such field
#: also sets its own lower bound).
Int32 = Annotated[int, Field(le=INT32_MAX)]
#: A replica count (an ``int32`` to Kubernetes), capped at :data:`~.limits.MAX_REPLICAS`.
Replicas = Annotated[int, Field(le=MAX_REPLICAS)]


@dataclass(frozen=True)
class OutputEstimate:
    """What one job will render, estimated at load time so a stack past the output budget
    (docs/limits.md) is refused before anything is built: objects, bytes of YAML, the bytes of
    its largest object, and the field that drives the size (for messages)."""

    objects: int
    bytes: int
    largest: int
    path: tuple[str | int, ...] = ()


def plain_copy(value: Any) -> Any:
    """Deep copy of plain data (dicts, lists, scalars); several times faster than ``deepcopy``."""
    if type(value) is dict:
        return {k: plain_copy(v) for k, v in value.items()}
    if type(value) is list:
        return [plain_copy(v) for v in value]
    return value


@dataclass(frozen=True)
class K8sType:
    """Marks a ``dict`` field as the Kubernetes type ``definition`` (checked at load time).

    Its JSON schema says what it is and keeps unknown fields, so a CRD generated from the model
    stays structural without copying the Kubernetes schema into it; ``validate`` swaps the full
    strict schema in (see :data:`K8S_DEFINITION_KEY`).
    """

    definition: str
    description: str = ""

    def __get_pydantic_json_schema__(
        self, core_schema: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        short = self.definition.rsplit(".", 1)[-1]
        text = f"{self.description} (Kubernetes {short})" if self.description else short
        return {
            "type": "object",
            "description": text,
            "x-kubernetes-preserve-unknown-fields": True,
            K8S_DEFINITION_KEY: self.definition,
        }


def _by_rule(rule: NameRule, note: str = "") -> AfterValidator:
    def check(value: str) -> str:
        if problem := rule.check(value):
            raise ValueError(f"{problem}{note}")
        return value

    return AfterValidator(check)


#: Strings that must be a Kubernetes name of a given format; the error quotes the value.
DNSLabel = Annotated[str, _by_rule(DNS1123_LABEL)]
DNSSubdomain = Annotated[str, _by_rule(DNS1123_SUBDOMAIN)]
DNS1035Label = Annotated[str, _by_rule(DNS1035_LABEL)]
#: A string that becomes a label value (the error says so).
LabelValue = Annotated[str, _by_rule(LABEL_VALUE, " (it becomes a label value)")]


def reject_unquoted_number(value: Any) -> Any:
    """A ``mode="before"`` check for versions written unquoted: YAML reads ``1.30`` as the
    number 1.3, so the value the user meant is already lost."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        raise ValueError(
            f'quote the version, e.g. "1.30": YAML reads it as the number {value} (and 1.30 as 1.3)'
        )
    return value


def _check_map_keys(value: dict[str, str], what: str, values: NameRule | None) -> dict[str, str]:
    for key, item in value.items():
        if problem := check_label_key(key):
            raise ValueError(f"{what} {problem}")
        if values is not None and (problem := values.check(item)):
            raise ValueError(f"{what} {key!r}: {problem}")
    return value


class JobMeta(Strict):
    """The part of ``metadata`` a job document may carry."""

    name: DNSSubdomain = Field(
        description="Name of the job; every derived object name starts with it."
    )
    namespace: DNSLabel | None = Field(
        default=None,
        description="Namespace of the job and its objects. Default: kubetrain:namespace.",
    )
    labels: dict[str, str] = Field(
        default_factory=dict, description="Labels of the job document (custom resource only)."
    )
    annotations: dict[str, str] = Field(
        default_factory=dict,
        description="Annotations; `kubetrain.io/mode: operator` puts this job in operator mode, "
        "`kubetrain.io/native-workload` (pod, job or jobset) picks what runs a Kubeflow job's "
        "replicas in native mode.",
    )

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_map_keys(value, "label", LABEL_VALUE)

    @field_validator("annotations")
    @classmethod
    def _annotations(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_map_keys(value, "annotation", None)


@dataclass(frozen=True)
class DerivedName:
    """A name or label value kubetrain derives from a job, and the rule it must satisfy."""

    value: str
    what: str
    rule: NameRule


class JobDocument(Strict):
    """A Kubernetes-shaped job document: ``apiVersion``, ``kind``, ``metadata``, ``spec``."""

    API_VERSION: ClassVar[str]
    KIND: ClassVar[str]
    #: What may run the kind's replica indexes in native mode (``kubetrain:nativeWorkload``);
    #: empty for kinds whose native objects are fixed.
    NATIVE_WORKLOADS: ClassVar[tuple[str, ...]] = ()
    #: The operator whose admission :meth:`admission_problems` states, for kinds whose model
    #: holds it (``volcano``): ``kubetrain validate`` then reports it as ``webhook:<name>``.
    WEBHOOK: ClassVar[str] = ""
    #: Whether the kind's gang sums higher-priority pods first, so its Pulumi component takes
    #: the cluster's PriorityClasses (``priority_classes``): the MPI Operator's and Volcano's.
    GANG_READS_PRIORITIES: ClassVar[bool] = False

    api_version: str = Field(alias="apiVersion")
    kind: str
    metadata: JobMeta

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """The job's namespace; the loader always resolves it from the stack's default."""
        if self.metadata.namespace is None:
            raise RuntimeError(f"{self.KIND} {self.name}: namespace not resolved")
        return self.metadata.namespace

    def normalized(self) -> JobDocument:
        """The document in the form builders use (e.g. v1alpha1 converted to v1)."""
        return self

    def mode(self, settings: StackSettings) -> Mode:
        """``native`` or ``operator``: the job's ``kubetrain.io/mode`` annotation, else the
        stack's ``kubetrain:mode`` (the loader refuses another value of the annotation before
        any rule asks)."""
        written = self.metadata.annotations.get(MODE_ANNOTATION)
        return settings.mode if written is None else Mode(written)

    def native_workload(self, settings: StackSettings) -> str:
        """``pod``, ``job`` or ``jobset``: the job's ``kubetrain.io/native-workload``
        annotation, else the stack's ``kubetrain:nativeWorkload`` (meaningful for kinds with
        :attr:`NATIVE_WORKLOADS`, in native mode)."""
        return self.metadata.annotations.get(NATIVE_WORKLOAD_ANNOTATION, settings.native_workload)

    def derived_names(self, settings: StackSettings) -> list[DerivedName]:
        """Every object name and label value the builders will derive from this job."""
        return []

    def semantic_problems(self, settings: StackSettings) -> list[tuple[tuple[str | int, ...], str]]:
        """Rules a schema cannot express, as (field path, message) pairs."""
        return []

    def admission_problems(self) -> list[tuple[tuple[str | int, ...], str]]:
        """What the :attr:`WEBHOOK` operator's admission refuses of a new object (none unless
        the kind states it)."""
        return []

    def output_estimate(self, settings: StackSettings, mode: Mode) -> OutputEstimate:
        """What the job renders in ``mode`` (see :class:`OutputEstimate`). This default suits a
        kind rendering a few objects whatever its counts; a kind rendering objects per replica
        (a Pod per replica, an env listing every pod) overrides it."""
        size = 4096 + len(self.model_dump_json(by_alias=True))
        return OutputEstimate(8, 8 * size, size)


J = TypeVar("J", bound=type[JobDocument])
R = TypeVar("R", bound=type[BaseModel])
_KINDS: dict[tuple[str, str], type[JobDocument]] = {}
_RESOURCES: dict[tuple[str, str], type[BaseModel]] = {}


def resource_kind(api_version: str, kind: str) -> Callable[[R], R]:
    """Class decorator registering the model of a resource kind kubetrain emits.

    The model's JSON schema is what ``validate`` checks that kind against when no other schema
    location has it; the emitted objects also validate against the upstream schemas in tests.
    """

    def register(cls: R) -> R:
        key = (api_version, kind)
        if key in _RESOURCES:
            raise RuntimeError(f"resource kind {key} registered twice")
        _RESOURCES[key] = cls
        return cls

    return register


def job_kind(cls: J) -> J:
    """Class decorator registering a job kind under its ``API_VERSION`` and ``KIND``."""
    key = (cls.API_VERSION, cls.KIND)
    if key in _KINDS:
        raise RuntimeError(f"job kind {key} registered twice")
    _KINDS[key] = cls
    return resource_kind(cls.API_VERSION, cls.KIND)(cls)


def job_kinds() -> dict[tuple[str, str], type[JobDocument]]:
    """Registered job kinds by (apiVersion, kind)."""
    return dict(_KINDS)


def resource_kinds() -> dict[tuple[str, str], type[BaseModel]]:
    """Models of every kind kubetrain emits beyond Kubernetes' own, by (apiVersion, kind)."""
    return dict(_RESOURCES)
