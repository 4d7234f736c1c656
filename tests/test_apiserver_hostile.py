"""The API server's checks (kubetrain/kube/apiserver) read objects as written, also where the
schema check already found a wrong type (values.py): no object of any kind, whatever sits in
one of its fields, makes them raise. make e2e's validation oracle found two that did
(ResourceQuota spec.scopes and a claim's accessModes holding a mapping); this walks every
field of one accepted object of each kind the corpora hold, and of the Pulumi registration
samples, puts each hostile shape there, and checks it as created and as an update."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from kubetrain.kube import apiserver, catalog
from kubetrain.kube.immutable import update_refusals

from conftest import REPO
from helpers import CORPORA, corpus_records

#: What a field may hold instead of its type: a mapping, a list, lists of those, the scalars
#: of the other types (a list or a mapping is unhashable where a name is looked up in a set).
HOSTILE: tuple[Any, ...] = ({}, [], [{}], [[]], [None], 1.5, -1, True, None, "x" * 300)
#: What the update rules are given (each rule munges or compares the spec as a whole).
UPDATE_VALUES: tuple[Any, ...] = ({}, [{}], 1.5, None)


#: Kinds the API server's checks cover that neither the corpora nor the samples hold.
EXTRA = """
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ml}
spec:
  hard: {pods: "10", requests.cpu: "4"}
  scopes: [NotBestEffort, NotTerminating]
  scopeSelector:
    matchExpressions: [{scopeName: PriorityClass, operator: In, values: [high]}]
---
apiVersion: v1
kind: LimitRange
metadata: {name: l, namespace: ml}
spec:
  limits: [{type: Container, max: {cpu: "2"}, default: {cpu: "1"}, defaultRequest: {cpu: 500m}}]
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
scheduling: {nodeSelector: {sandbox: "true"}, tolerations: [{key: k, effect: NoSchedule}]}
"""


def _bases() -> list[dict[str, Any]]:
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for doc in yaml.safe_load_all(EXTRA):
        found[(doc["apiVersion"], doc["kind"])] = doc
    for doc in yaml.safe_load_all((REPO / "tests/pulumi/kinds.yaml").read_text()):
        found.setdefault((doc["apiVersion"], doc["kind"]), doc)
    for corpus in CORPORA:
        try:
            records = corpus_records("create", corpus)
        except FileNotFoundError:
            continue
        for r in records:
            obj = r.get("object")
            if r.get("expect") == "valid" and isinstance(obj, dict):
                found.setdefault((str(obj.get("apiVersion")), str(obj.get("kind"))), obj)
    return [found[k] for k in sorted(found)]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*path, i))
    if path and path[0] not in ("apiVersion", "kind"):
        yield path


def _put(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


BASES = _bases()


@pytest.mark.parametrize("base", BASES, ids=[f"{b['apiVersion']}-{b['kind']}" for b in BASES])
def test_no_field_of_any_shape_breaks_the_api_servers_checks(base: dict[str, Any]) -> None:
    cases = 0
    builtin = catalog.of(base).builtin
    for path in list(_paths(base)):
        for value in HOSTILE:
            obj = copy.deepcopy(base)
            _put(obj, path, value)
            for version in ((1, 25), (1, 36)):
                list(apiserver.object_issues(obj, version))
                cases += 1
            # An update from the accepted object to it, and back (kube/immutable.py; built-in
            # kinds: a custom resource's update rules are its CRD's, tested with the CRDs).
            if builtin and value in UPDATE_VALUES:
                update_refusals(base, obj)
                update_refusals(obj, base)
                cases += 2
    assert cases >= 2 * len(HOSTILE), "the object has no field to put a value in"


def test_the_bases_cover_the_kinds_the_oracle_found_crashing() -> None:
    kinds = {b["kind"] for b in BASES}
    assert {"PersistentVolumeClaim", "Pod", "Job", "StatefulSet", "ResourceQuota"} <= kinds
