"""Custom resources checked as the API server checks them, against the CRD that defines them.

Where a custom resource's CRD comes from, first found wins:

1. a CRD given with ``kubetrain validate --crd FILE|DIR`` (the CRDs the cluster really runs);
2. a CRD among the objects validated together (render's ``_crds/``, or any tree holding CRDs):
   its custom resources in the same run are checked against it;
3. kubetrain's own: the CRD kubetrain generates for a kind it owns (TrainingJob, Learner), or,
   for a third-party kind kubetrain emits (PodGroup, ExternalSecret, Flux and Argo CD objects,
   TFJob), a structural schema generated from its ``@resource_kind`` model, every embedded
   Kubernetes type described in full. Those models follow the real CRDs (tested against
   ``../shared/crds``): no stricter, and refusing what they refuse.

``--schema-location`` JSON schemas are kubeconform's way and stay as they are: a kind they
provide and no CRD defines is checked against them. Every CRD object is itself checked as the
API server checks it (:func:`~kubetrain.kube.apiextensions.validate_crd`). Schemas and CEL
programs are compiled once per process.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from ..builders.crd import custom_resource_definition, model_schema, owned_crds
from ..kube import catalog
from ..kube import schemas as k8s
from ..kube.apiextensions import CRDVersion, crd_versions, validate_crd, validate_custom_resource
from ..kube.apiextensions.definition import is_crd
from ..kube.crds import DerivedCRD, derived_crd
from ..models.base import resource_kinds
from ..models.errors import InputError, Problem
from ..models.source import display_path, expand_lists, list_items, list_problem, load_documents

__all__ = ["CustomResources", "builtin_version", "custom_resource_issues"]

Key = tuple[str, str]  # (apiVersion, kind)


class _Everything(frozenset[str]):
    """Every Kubernetes definition is described in full (see ``builders.crd``)."""

    def __contains__(self, item: object) -> bool:
        return True


_ALL_DEFINITIONS = _Everything()


@cache
def builtin_version(api_version: str, kind: str, version: tuple[int, int]) -> CRDVersion | None:
    """kubetrain's own CRD version of a kind it emits beyond Kubernetes', or ``None``. A
    third-party kind's embedded Kubernetes types are those its real CRD was generated with
    (its catalogue row's ``crd_kubernetes``: ``k8s.io/api`` in the operator's ``go.mod`` at the
    release kubetrain follows; a field Kubernetes added later is unknown to the CRD, and the
    API server refuses it), not the cluster's."""
    for info in owned_crds():
        if (info.model.API_VERSION, info.kind) == (api_version, kind):
            return crd_versions(custom_resource_definition(info.model, version), "kubetrain")[0]
    real = derived_crd(api_version, kind)
    if real is not None and not catalog.lookup((catalog.group_of(api_version), kind)).model_schema:
        return _derived_version(real, api_version)
    return model_version(api_version, kind, version)


def model_version(api_version: str, kind: str, version: tuple[int, int]) -> CRDVersion | None:
    """The structural schema generated from a third-party kind's ``@resource_kind`` model (what
    validates a kind without a real CRD; tests compare it with the real CRDs), or ``None``."""
    model = resource_kinds().get((api_version, kind))
    if model is None:
        return None
    group, ver = k8s.split_api_version(api_version)
    row = catalog.lookup((group, kind))
    embedded = row.crd_kubernetes or version
    schema = model_schema(model, embedded, _ALL_DEFINITIONS, kind, embedded_meta=True)
    plural = row.plural or kind.lower() + "s"
    namespaced = row.namespaced is not False
    return CRDVersion(group, ver, kind, plural, namespaced, schema, "kubetrain")


@cache
def _derived_version(real: DerivedCRD, api_version: str) -> CRDVersion:
    """One version of a real CRD (every Kubernetes version of a cluster runs the same CRD)."""
    found = [
        v for v in crd_versions(real.definition(), real.source) if v.api_version == api_version
    ]
    return found[0]


def custom_resource_issues(
    crd: CRDVersion, obj: Any, version: tuple[int, int]
) -> list[k8s.SchemaIssue]:
    """What the API server would refuse in ``obj`` under ``crd``."""
    return validate_custom_resource(
        crd.node,
        obj,
        namespaced=crd.namespaced,
        version=version,
        scale_replicas=crd.scale_replicas,
        status=crd.status,
    )


def _is_list_kind(data: Any) -> bool:
    """Whether ``data`` says it is a list object (``kind: List``, ``CustomResourceDefinitionList``)
    whatever its items hold."""
    return isinstance(data, dict) and str(data.get("kind", "")).endswith("List")


class CustomResources:
    """The CRDs given by the user (``--crd``) and those found among the objects validated."""

    def __init__(
        self,
        crd_files: Sequence[tuple[str, Sequence[tuple[str, str]]]] = (),
        version: tuple[int, int] | None = None,
    ) -> None:
        """``crd_files``: each ``--crd`` argument and its YAML files (path, path as shown);
        ``version``: the Kubernetes version whose API server judges the CRDs."""
        self.version = version
        self.given: dict[Key, CRDVersion] = {}
        self.found: dict[Key, CRDVersion] = {}
        self._load(crd_files)

    def _load(self, crd_files: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> None:
        problems: list[Problem] = []
        for raw, files in crd_files:
            count, before = 0, len(problems)
            for path, shown in files:
                tops = load_documents(path)
                for top in tops:
                    if (too_many := list_problem(top.data)) is not None:
                        problems.append(top.problem((), too_many))
                    elif _is_list_kind(top.data) and list_items(top.data) is None:
                        problems.append(
                            top.problem(("items",), "a List's items must be a list of objects")
                        )
                if len(problems) > before:
                    continue
                # A List of CRDs (what `kubectl get crd -o yaml` prints) is its items.
                for doc in (d for top in tops for d in expand_lists(top)):
                    if not is_crd(doc.data):
                        continue
                    count += 1
                    issues = validate_crd(doc.data, self.version)
                    problems += [
                        doc.problem(i.path, f"not a CRD the API server accepts: {i.message}")
                        for i in issues
                    ]
                    if not issues:
                        for v in crd_versions(doc.data, shown):
                            self.given.setdefault((v.api_version, v.kind), v)
            if not count and len(problems) == before:
                problems.append(
                    Problem(display_path(raw), None, (), "no CustomResourceDefinition found")
                )
        if problems:
            raise InputError(problems)

    def add_found(self, objects: Iterable[tuple[Any, str]]) -> None:
        """Register the valid CRDs among ``objects`` ((object, file) pairs)."""
        for obj, file in objects:
            if is_crd(obj) and not validate_crd(obj, self.version):
                for v in crd_versions(obj, file):
                    self.found.setdefault((v.api_version, v.kind), v)

    def lookup(self, api_version: str, kind: str) -> CRDVersion | None:
        key = (api_version, kind)
        return self.given.get(key) or self.found.get(key)
