"""Objects to put to the API server: kubetrain's own renders, mutated by hypothesis.

Bases (`bases()`): every object kubetrain renders from the repository's example stacks for
Kubernetes 1.36, in native mode (each `nativeWorkload`: pod, job, jobset), operator mode (the
custom resources of every job kind), with Volcano and scheduler-plugins gang scheduling, and the
committed `rendered/` tree; plus `SEEDS`, one object of each kind kubetrain validates that no
example stack renders (PriorityClass, ResourceQuota, LimitRange, RuntimeClass, Deployment,
DaemonSet, CronJob, a Kueue Cohort...), written here.

Mutations (`mutation()`): a hypothesis strategy of `Case`s. A case picks a kind (uniformly, so
each kind is sent about as often), a base of that kind, a place in it (an existing field, or a
field its schema has and the base lacks), and a change there: a value of the field's type at
its bounds (int32 and int64 edges, enum members and near misses, name-like strings at
Kubernetes' length limits), a value of another type, `null`, the field removed, an unknown
field added, a list item repeated (list-map keys), or an empty value. Where the place is in a
schema (a real CRD's, via kubetrain's derived copy; Kubernetes' own JSON schemas for built-in
kinds), the values come from what the schema says of it (its type, enum, bounds, format), so
fields no base sets are reached too.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from . import tools

VERSION = (1, 36)
PathPart = str | int


@dataclass(frozen=True)
class Base:
    obj: dict[str, Any]
    origin: str

    @property
    def kind(self) -> str:
        return f"{self.obj['apiVersion'].rpartition('/')[0] or 'core'}/{self.obj['kind']}"


@dataclass(frozen=True)
class Case:
    """One object to send, and what was changed to make it."""

    kind: str
    obj: dict[str, Any]
    variant: str
    origin: str
    base: dict[str, Any]


# --- bases ---------------------------------------------------------------------------------

#: Stack variants rendered for bases: (name, config overrides).
VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("native-job", {}),
    ("native-pod", {"kubetrain:nativeWorkload": "pod"}),
    # A TrainJob under nativeWorkload jobset is built from its runtime's spec, which the dev
    # stack names only (Kubeflow's own runtimes): the trainer examples stay out.
    ("native-jobset", {"kubetrain:nativeWorkload": "jobset", "-jobFiles": "trainer-examples"}),
    ("operator", {"kubetrain:mode": "operator"}),
    ("volcano", {"kubetrain:gangScheduler": "volcano", "kubetrain:nativeWorkload": "pod"}),
    ("scheduler-plugins", {"kubetrain:gangScheduler": "scheduler-plugins"}),
)
#: Keys of the dev stack a variant drops (they need a cluster-specific setting or would make
#: the variant refuse to render).
_DROPPED = ("kubetrain:clusters",)

SEEDS: tuple[dict[str, Any], ...] = (
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
     "metadata": {"name": "gen-high"}, "value": 1000, "globalDefault": False,
     "preemptionPolicy": "PreemptLowerPriority", "description": "generated"},
    {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gen-quota",
     "namespace": "ml-gen"}, "spec": {"hard": {"requests.cpu": "10", "limits.memory": "20Gi",
     "requests.nvidia.com/gpu": "4", "pods": "20"}, "scopeSelector": {"matchExpressions": [
         {"scopeName": "PriorityClass", "operator": "In", "values": ["gen-high"]}]}}},
    {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gen-counts",
     "namespace": "ml-gen"}, "spec": {"hard": {"pods": "10", "count/jobs.batch": "5"},
                                      "scopes": ["NotTerminating"]}},
    {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "gen-limits",
     "namespace": "ml-gen"}, "spec": {"limits": [
         {"type": "Container", "default": {"cpu": "1", "memory": "1Gi"},
          "defaultRequest": {"cpu": "500m", "memory": "512Mi"},
          "max": {"cpu": "4", "memory": "8Gi"}, "min": {"cpu": "100m", "memory": "64Mi"},
          "maxLimitRequestRatio": {"cpu": "4"}},
         {"type": "PersistentVolumeClaim", "max": {"storage": "100Gi"},
          "min": {"storage": "1Gi"}}]}},
    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "gen-nvidia"},
     "handler": "nvidia", "overhead": {"podFixed": {"cpu": "100m", "memory": "64Mi"}},
     "scheduling": {"nodeSelector": {"gpu": "true"}, "tolerations": [
         {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "gen-deploy",
     "namespace": "ml-gen"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "g"}},
     "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1,
                                                             "maxUnavailable": "25%"}},
     "template": {"metadata": {"labels": {"app": "g"}}, "spec": {"containers": [
         {"name": "main", "image": "registry.example.com/g:1", "ports": [
             {"name": "http", "containerPort": 8080}]}]}}}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "gen-ds",
     "namespace": "ml-gen"}, "spec": {"selector": {"matchLabels": {"app": "d"}},
     "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
         {"name": "main", "image": "registry.example.com/d:1"}]}}}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "gen-cron",
     "namespace": "ml-gen"}, "spec": {"schedule": "0 3 * * *", "timeZone": "Etc/UTC",
     "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": {"template": {"spec": {
         "restartPolicy": "Never", "containers": [
             {"name": "main", "image": "registry.example.com/c:1"}]}}}}}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "gen-claim",
     "namespace": "ml-gen"}, "spec": {"accessModes": ["ReadWriteOnce"],
     "resources": {"requests": {"storage": "10Gi"}}}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "gen-secret",
     "namespace": "ml-gen"}, "type": "Opaque", "data": {"token": "dG9rZW4="}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
     "metadata": {"name": "gen-reader"}, "rules": [
         {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "gen-co"},
     "spec": {}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
     "metadata": {"name": "gen-topology"}, "spec": {"levels": [
         {"nodeLabel": "topology.kubernetes.io/zone"}, {"nodeLabel": "kubernetes.io/hostname"}]}},
    {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
     "metadata": {"name": "gen-wpc"}, "value": 100, "description": "generated"},
    {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "OCIRepository",
     "metadata": {"name": "gen-oci", "namespace": "flux-system"},
     "spec": {"interval": "5m", "url": "oci://registry.example.com/manifests",
              "ref": {"tag": "v1"}}},
)  # fmt: skip


def _project(tmp: Path) -> Path:
    """A copy of the repository's stacks in a project of its own (a variant's stack file is
    written beside them)."""
    project = tmp / "project"
    if not project.exists():
        shutil.copytree(tools.REPO / "stacks", project / "stacks",
                        ignore=shutil.ignore_patterns("__pycache__", "*.py"))  # fmt: skip
        shutil.copy(tools.REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    return project


def _rendered(project: Path, name: str, overrides: Mapping[str, Any]) -> list[dict[str, Any]]:
    from kubetrain.builders import build_stack
    from kubetrain.models import load_stack

    config = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    for key in _DROPPED:
        config.pop(key, None)
    config["kubetrain:kubernetesVersion"] = "1.36"
    for key, value in overrides.items():
        if key == "-jobFiles":
            config["kubetrain:jobFiles"] = [
                f for f in config["kubetrain:jobFiles"] if value not in f
            ]
        else:
            config[key] = value
    path = project / "stacks" / f"Pulumi.gen-{name}.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    try:
        return [b.obj for b in build_stack(load_stack(path), "render")]
    finally:
        path.unlink()


def _committed() -> Iterator[tuple[dict[str, Any], str]]:
    for file in sorted((tools.REPO / "rendered").rglob("*.yaml")):
        if file.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(file.read_text()):
            if isinstance(doc, dict) and doc.get("kind"):
                yield doc, file.relative_to(tools.REPO).as_posix()


def bases(tmp: Path) -> list[Base]:
    """Every base object, once per distinct object (the first origin kept)."""
    seen: set[str] = set()
    out: list[Base] = []

    def add(obj: dict[str, Any], origin: str) -> None:
        key = json.dumps(obj, sort_keys=True)
        if key not in seen and obj.get("kind") not in ("Namespace", "CustomResourceDefinition"):
            seen.add(key)
            out.append(Base(obj, origin))

    project = _project(tmp)
    for name, overrides in VARIANTS:
        for obj in _rendered(project, name, overrides):
            add(obj, f"dev stack, {name}")
    for obj, origin in _committed():
        add(obj, origin)
    for obj in SEEDS:
        add(copy.deepcopy(obj), "e2e/harness/generator.py SEEDS")
    return out


def by_kind(all_bases: list[Base]) -> dict[str, list[Base]]:
    out: dict[str, list[Base]] = {}
    for b in all_bases:
        out.setdefault(b.kind, []).append(b)
    return dict(sorted(out.items()))


# --- what a schema says of a place ---------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """What is known of the value at one place: JSON type, enum, bounds, format, properties
    (name -> Shape getter), items."""

    type: str = ""
    enum: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    min_length: int | None = None
    format: str = ""
    properties: tuple[str, ...] = ()
    int_or_string: bool = False


class Schemas:
    """Walks a kind's schema: a real CRD's (kubetrain's derived copy, compiled) for custom
    resources, Kubernetes' JSON schemas for built-in kinds."""

    def __init__(self) -> None:
        from kubetrain.kube import schemas as k8s

        self.k8s = k8s
        self.defs = k8s.definitions(VERSION)["$defs"]

    def root(self, obj: Mapping[str, Any]) -> Any:
        from kubetrain.validate.customresources import builtin_version

        name = self.k8s.builtin_definition(VERSION, obj["apiVersion"], obj["kind"])
        if name is not None:
            return ("json", self.defs.get(name, {}))
        crd = builtin_version(obj["apiVersion"], obj["kind"], VERSION)
        return ("node", crd.node) if crd is not None else None

    def _json(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        for _ in range(16):
            ref = node.get("$ref")
            if isinstance(ref, str):
                node = self.defs.get(ref.rsplit("/", 1)[-1], {})
                continue
            options = [
                o for o in node.get("anyOf", node.get("oneOf", ())) if o.get("type") != "null"
            ]
            if len(options) == 1:
                node = options[0]
                continue
            break
        return node

    def child(self, where: Any, part: PathPart) -> Any:
        if where is None:
            return None
        tag, node = where
        if tag == "node":
            if isinstance(part, int):
                return ("node", node.items) if node.items is not None else None
            found = node.properties.get(part) or node.additional
            return ("node", found) if found is not None else None
        node = self._json(node)
        if isinstance(part, int):
            items = node.get("items")
            return ("json", items) if isinstance(items, Mapping) else None
        props = node.get("properties") or {}
        if part in props:
            return ("json", props[part])
        extra = node.get("additionalProperties")
        return ("json", extra) if isinstance(extra, Mapping) else None

    def at(self, obj: Mapping[str, Any], path: tuple[PathPart, ...]) -> Any:
        where = self.root(obj)
        for part in path:
            where = self.child(where, part)
        return where

    def shape(self, where: Any) -> Shape:
        if where is None:
            return Shape()
        tag, node = where
        if tag == "node":
            return Shape(node.type, tuple(node.enum or ()), node.minimum, node.maximum,
                         node.max_length, node.min_length, node.format,
                         tuple(node.properties), node.int_or_string)  # fmt: skip
        node = self._json(node)
        kind = node.get("type", "")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "")
        ios = node.get("format") == "int-or-string" or "x-kubernetes-int-or-string" in node
        return Shape(str(kind), tuple(node.get("enum") or ()), node.get("minimum"),
                     node.get("maximum"), node.get("maxLength"), node.get("minLength"),
                     str(node.get("format") or ""), tuple(node.get("properties") or ()),
                     ios)  # fmt: skip


# --- values --------------------------------------------------------------------------------

NAMES = ("", "a", "A", "a" * 63, "a" * 64, "a" * 253, "a" * 254, "-a", "a-", "1a", "a.b", "a_b",
         "Ab", "a/b", "a..b", "a b", "ä", "a:b", "a" * 16 + "." + "b" * 47, "kubernetes.io/x",
         "example.com/x_y")  # fmt: skip
INTS = (-(2**63), -(2**31) - 1, -(2**31), -1, 0, 1, 2, 100, 2**31 - 1, 2**31, 2**32 + 2,
        2**53, 2**63 - 1, 2**63, 2**64)  # fmt: skip
OTHERS = (None, True, "true", 1.5, -0.5, [], {}, "1", "x", "1Gi", "-1", "500m", "25%", "150%",
          "0%", "1e3", "0x10")  # fmt: skip


def values(shape: Shape, current: Any) -> list[Any]:
    """Candidate values for a place, most telling first: its schema's own edges, then other
    types."""
    out: list[Any] = []
    if shape.enum:
        out += list(shape.enum)
        first = next((e for e in shape.enum if isinstance(e, str)), None)
        if first:
            out += [first.lower(), first.upper(), first + "x"]
    if shape.int_or_string:
        out += [0, 1, -1, "0", "1", "25%", "0%", "100%", "150%", "-5%", "x%", "1.5%", 2**31]
    if shape.type == "integer" or (isinstance(current, int) and not isinstance(current, bool)):
        out += list(INTS)
        for bound in (shape.minimum, shape.maximum):
            if bound is not None:
                out += [int(bound) - 1, int(bound), int(bound) + 1]
    elif shape.type == "number":
        out += [0, -1, 0.5, 1e300]
    if shape.type == "string" or isinstance(current, str):
        out += list(NAMES)
        for bound in (shape.max_length, shape.min_length):
            if bound is not None:
                out += ["a" * max(bound - 1, 0), "a" * bound, "a" * (bound + 1)]
        if shape.format == "date-time":
            out += ["2024-01-01T00:00:00Z", "yesterday", "2024-13-01T00:00:00Z"]
        elif shape.format in ("duration",):
            out += ["5m", "1h30m", "5 minutes", "-1s"]
        elif shape.format:
            out += ["x", "http://example.com", "1.2.3.4", "::1"]
        if isinstance(current, str):
            out += [current.upper(), current + "-", current * 5, " " + current]
    if shape.type == "boolean" or isinstance(current, bool):
        out += [True, False]
    if shape.type == "array" or isinstance(current, list):
        out += [[], [None], ["a"], [1], [{}]]
    if shape.type == "object" or isinstance(current, dict):
        out += [{}, {"a": "b"}, {"a": 1}]
    out += list(OTHERS)
    unique: list[Any] = []
    seen: set[str] = set()
    for v in out:
        key = json.dumps(v, sort_keys=True)
        if key not in seen and v != current:
            seen.add(key)
            unique.append(v)
    return unique


def _places(value: Any, path: tuple[PathPart, ...] = ()) -> Iterator[tuple[PathPart, ...]]:
    """Every place in an object below its identity (apiVersion, kind, metadata.name and
    .namespace name the object and its URL: changing them is another object)."""
    if path in (("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "namespace"),
                ("metadata", "generateName")):  # fmt: skip
        return
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _places(item, (*path, i))


def get(value: Any, path: tuple[PathPart, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _parent(obj: Any, path: tuple[PathPart, ...]) -> tuple[Any, PathPart]:
    return get(obj, path[:-1]), path[-1]


def _seed(shape: Shape) -> Any:
    """A plain value of a shape (for a field no base sets)."""
    if shape.enum:
        return shape.enum[0]
    return {"integer": 1, "number": 1, "string": "a", "boolean": True, "array": [],
            "object": {}}.get(shape.type, "a")  # fmt: skip


@st.composite
def mutation(draw: st.DrawFn, kinds: dict[str, list[Base]], schemas: Schemas) -> Case:
    kind = draw(st.sampled_from(sorted(kinds)), label="kind")
    base = draw(st.sampled_from(kinds[kind]), label="base")
    obj = copy.deepcopy(base.obj)
    places = list(_places(obj))
    how = draw(st.sampled_from(("set", "set", "set", "add-field", "remove", "unknown",
                                "duplicate", "empty")), label="how")  # fmt: skip
    if how == "add-field":
        # A field the schema has at an object place of the base, absent from it.
        objects = [()] + [p for p in places if isinstance(get(obj, p), dict)]
        where = draw(st.sampled_from(objects), label="where")
        shape = schemas.shape(schemas.at(obj, where))
        absent = [p for p in shape.properties if p not in get(obj, where) and p != "status"]
        if absent:
            name = draw(st.sampled_from(sorted(absent)), label="field")
            path = (*where, name)
            field_shape = schemas.shape(schemas.at(obj, path))
            candidates = [_seed(field_shape), *values(field_shape, None)[:24]]
            value = draw(st.sampled_from(candidates), label="value")
            get(obj, where)[name] = value
            return Case(kind, obj, f"add {_show(path)} = {_short(value)}", base.origin, base.obj)
        how = "set"
    if how == "duplicate":
        lists = [p for p in places if isinstance(get(obj, p), list) and get(obj, p)]
        if lists:
            path = draw(st.sampled_from(lists), label="where")
            items = get(obj, path)
            i = draw(st.integers(0, len(items) - 1), label="item")
            items.append(copy.deepcopy(items[i]))
            return Case(kind, obj, f"duplicate {_show((*path, i))}", base.origin, base.obj)
        how = "set"
    if how == "unknown":
        objects = [()] + [p for p in places if isinstance(get(obj, p), dict)]
        where = draw(st.sampled_from(objects), label="where")
        name = draw(st.sampled_from(("bogus", "Name", "x-extra", "spec")), label="field")
        if name in get(obj, where):
            name = "bogus"
        get(obj, where)[name] = "x"
        return Case(kind, obj, f"add unknown {_show((*where, name))}", base.origin, base.obj)
    if not places:
        return Case(kind, obj, "unchanged", base.origin, base.obj)
    path = draw(st.sampled_from(places), label="where")
    parent, last = _parent(obj, path)
    if how == "remove":
        if isinstance(parent, list):
            parent.pop(last)  # type: ignore[arg-type]
        else:
            del parent[last]
        return Case(kind, obj, f"remove {_show(path)}", base.origin, base.obj)
    current = parent[last]
    if how == "empty":
        value: Any = {} if isinstance(current, dict) else [] if isinstance(current, list) else ""
    else:
        shape = schemas.shape(schemas.at(obj, path))
        candidates = values(shape, current)
        value = draw(st.sampled_from(candidates), label="value")
    parent[last] = value
    return Case(kind, obj, f"set {_show(path)} = {_short(value)}", base.origin, base.obj)


def _show(path: tuple[PathPart, ...]) -> str:
    from kubetrain.models.errors import format_path

    return format_path(path)


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."
