"""Checks that JSON schemas cannot make: rules over one object and across the objects of a tree.

``kubetrain validate`` (and so ``render``, which validates before it writes) runs every rule in
:data:`RULES` over the objects validated together, with the settings of the stack they were
rendered from (:class:`CheckSettings`). Each finding names its rule id, the object and the field
path, in the same report as schema findings. Rules over several objects see only the objects
validated together: validate a whole ``rendered/<env>`` folder, not single files.

Pod specs are found where each kind's row in the catalogue says its pods are
(:attr:`kubetrain.kube.catalog.Kind.pods`): Pods, the pod templates of workloads (ReplicaSet,
Deployment, StatefulSet, DaemonSet, Job, CronJob, ReplicationController, PodTemplate), a
JobSet's Jobs, and the replica templates of every declared kind that has them, such as a
TFJob's; a kind with pods there gets every pod rule.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..builders.security import CONTAINER_FIELDS
from ..kube import catalog
from ..kube.apiserver import handled_kinds
from ..kube.apiserver.volumes import pvc_dropped_fields
from ..kube.catalog import PodTemplate
from ..kube.images import parse_image
from ..kube.names import DNS1123_LABEL, LABEL_VALUE, PORT_NAME, check_label_key
from ..kube.podsecurity import pod_security_problems
from ..models.errors import PathPart, Severity, printable
from ..models.resources import gpu_findings, quantity_refusals
from ..models.secrets import (
    configmap_credential_problems,
    credential_problems,
    external_secret_template_problems,
)
from ..models.stack import External, StackSettings
from .engine import Finding, Located, ObjectResult, credential_words

__all__ = [
    "RULES",
    "WARNING_RULES",
    "CheckSettings",
    "PodTemplate",
    "add_findings",
    "check_objects",
    "pod_templates",
    "semantic_findings",
]

#: Rule id -> what it checks, in Markdown (docs/validation.md's table is generated from it).
RULES: dict[str, str] = {
    "gpu-requests": "GPUs are whole devices, given under one name, with requests equal to limits",
    "gpu-limits": "GPUs that are requested are also limited (Kubernetes schedules extended "
    "resources by limits)",
    "service-selector": "every Service selects the labels of at least one pod or pod template "
    "in its namespace",
    "reference": "every Secret, ConfigMap, ServiceAccount and PersistentVolumeClaim used by a pod "
    "(volumes, env, envFrom, pull secrets, flex and CSI secret refs, service account) or by a "
    "RoleBinding is in the output (an ExternalSecret or SealedSecret counts for its Secret) or "
    "declared in `kubetrain:external`",
    "duplicate-env": "no env var name twice in one container of a custom resource's pod "
    "template (in its own kinds the API server refuses it: rule `api`)",
    "duplicate-port-name": "no container port name twice in one pod",
    "resource-quantity": "the requests and limits of the containers of a custom resource's pod "
    "template (a JobSet's, a Trainer runtime's) are quantities Kubernetes can count (at most "
    "2^63-1, docs/limits.md) and not negative (the API server checks them only when the "
    "controller creates the pods; in its own kinds the API server refuses them: rule `api`)",
    "secret-data": "no Secret with `data` or `stringData`, no ExternalSecret template with a "
    "literal value, and no credential written in plain text: a credential-named env value, "
    "annotation, label or flag, a ConfigMap key named like one, a URL holding a password or "
    "token (the rule of job documents, docs/security.md; render output holds no secret "
    "material)",
    "name-format": "label keys and values, container names and port names (IANA service "
    "names) in the pod templates of custom resources (a TFJob's replicas) within Kubernetes' "
    "formats and lengths (the API server checks them only when the operator creates the pods; "
    "everything else named is rule `api`)",
    "host-port": "a warning, not an error: two pods of one job that claim the same port on the "
    "host network or as a hostPort never share a node (pods of one job: the same source in the "
    "file header, else the same `app.kubernetes.io/instance`)",
    "pod-security": "every pod and pod template meets the stack's Pod Security Standards level",
    "gang-scheduling": "pods that join a PodGroup have it in the output and are at least its "
    "`minMember`; a member that does not ask for its scheduler is a warning (its pods start one "
    "by one; Kubeflow Trainer runs such a published example)",
    "image": "every container image is a reference the kubelet can parse "
    "(`[registry/]path[:tag][@digest]`, the path in lower case; otherwise the pod fails with "
    "`InvalidImageName`)",
    "dropped-field": "a warning, not an error: no field the API server drops as it creates the "
    "object (a PersistentVolumeClaim's `dataSource` of a kind other than a claim or a volume "
    "snapshot, a `dataSourceRef` with a namespace): what is stored would differ from what is "
    "applied",
    "image-tag": "a warning, not an error: every container image names a tag other than "
    "`latest`, or a digest (an untagged image is `:latest`, whatever it is when each pod starts)",
}

#: Rules whose findings are facts to know rather than mistakes: reported as warnings, errors
#: only under --strict. Two host-network pods of one job claiming a port simply never share a
#: node (the scheduler's NodePorts filter keeps them apart), which EDL's own job-1 relies on.
WARNING_RULES: frozenset[str] = frozenset({"host-port", "image-tag", "dropped-field"})

Path = tuple[PathPart, ...]


@dataclass(frozen=True)
class CheckSettings:
    """What the rules need to know of the stack the objects came from."""

    pod_security: str = "baseline"
    gpu_resource: str = "nvidia.com/gpu"
    external: External = field(default_factory=External)
    skip: frozenset[str] = frozenset()
    #: The objects were built by kubetrain from documents that passed the credential rule at
    #: load time (render): the rule is not run over them again.
    inputs_checked: bool = False

    @classmethod
    def from_stack(
        cls,
        settings: StackSettings | None,
        skip: Sequence[str] = (),
        *,
        inputs_checked: bool = False,
    ) -> CheckSettings:
        if settings is None:
            return cls(skip=frozenset(skip), inputs_checked=inputs_checked)
        return cls(
            pod_security=settings.pod_security,
            gpu_resource=settings.gpu_resource,
            external=settings.external,
            skip=frozenset(skip) | frozenset(settings.skip_checks),
            inputs_checked=inputs_checked,
        )


# --- finding pod templates ---------------------------------------------------------------------


def pod_templates(obj: Any) -> list[PodTemplate]:
    """The pods and pod templates of one object (none for kinds without pods), as its row in
    the catalogue says where they are (:func:`kubetrain.kube.catalog.pod_templates`)."""
    return catalog.pod_templates(obj)


def _count(value: Any, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _at(obj: Any, path: Path) -> Any:
    for part in path:
        if _is_mapping(obj) and isinstance(part, str):
            obj = obj.get(part)
        elif isinstance(obj, list) and isinstance(part, int) and 0 <= part < len(obj):
            obj = obj[part]
        else:
            return None
    return obj


def _containers(spec: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    for fld in CONTAINER_FIELDS:
        items = spec.get(fld)
        if isinstance(items, list):
            for i, c in enumerate(items):
                if _is_mapping(c):
                    yield (fld, i), c


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # dict: without the ABC check


def _mapping(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # the common case, without the ABC check
        return value
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# --- the run -----------------------------------------------------------------------------------


@dataclass
class _Run:
    items: Sequence[Located]
    settings: CheckSettings
    #: The rules' findings on each item, in the order found.
    findings: list[list[Finding]] = field(default_factory=list)
    templates: list[list[PodTemplate]] = field(default_factory=list)
    #: (index, object) of every item that is an object (a mapping with a kind).
    mapped: list[tuple[int, Mapping[str, Any]]] = field(default_factory=list)

    def add(self, index: int, rule: str, path: Path, message: str, warning: bool = False) -> None:
        """A finding of `rule`; a warning when the rule's findings are (WARNING_RULES) or
        this one is (`warning`: the object works, though not as the stack may mean)."""
        if rule in self.settings.skip:
            return
        severity: Severity = "warning" if warning or rule in WARNING_RULES else "error"
        self.findings[index].append(Finding(rule, path, message, severity=severity))

    def objects(self) -> list[tuple[int, Mapping[str, Any]]]:
        return self.mapped

    def pods(self) -> Iterator[tuple[int, PodTemplate]]:
        for i, templates in enumerate(self.templates):
            for t in templates:
                yield i, t


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(obj.get("metadata"))


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("namespace") or "")


def _title(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    ns = meta.get("namespace")
    return f"{obj.get('kind')} {ns + '/' if ns else ''}{meta.get('name')}"


# --- GPUs ----------------------------------------------------------------------------------------


def _gpus(run: _Run) -> None:
    for i, t in run.pods():
        for cpath, c in _containers(t.spec):
            for code, path, message in gpu_findings(c.get("resources"), run.settings.gpu_resource):
                rule = "gpu-limits" if code == "limits" else "gpu-requests"
                run.add(i, rule, (*t.path, "spec", *cpath, "resources", *path), message)


def _resource_quantities(run: _Run) -> None:
    """The pod templates of custom resources: each container's requests and limits as the API
    server will judge them in the pods a controller makes (:func:`quantity_refusals`)."""
    for i, t in run.pods():
        if _api_checked(run.items[i].obj):
            continue
        for cpath, c in _containers(t.spec):
            for path, message in quantity_refusals(c.get("resources")):
                run.add(
                    i, "resource-quantity", (*t.path, "spec", *cpath, "resources", *path), message
                )


# --- Services select pods ------------------------------------------------------------------------


def _service_selectors(run: _Run) -> None:
    # (namespace, label key, value) -> the pods and pod templates carrying that label, so a
    # selector is matched by intersecting a few sets instead of scanning every pod (render
    # checks thousands of services against thousands of pods).
    carriers: dict[tuple[str, str, Any], set[int]] = {}
    for n, (i, t) in enumerate(run.pods()):
        namespace = _namespace(run.items[i].obj)
        for key, value in t.labels.items():
            if isinstance(value, str):
                carriers.setdefault((namespace, key, value), set()).add(n)
    for i, obj in run.objects():
        if obj.get("kind") != "Service" or obj.get("apiVersion") != "v1":
            continue
        spec = _mapping(obj.get("spec"))
        if spec.get("type") == "ExternalName":
            continue
        selector = _mapping(spec.get("selector"))
        if not selector:
            run.add(
                i,
                "service-selector",
                ("spec", "selector"),
                "has no selector, so it selects no pod (kubetrain emits no manual Endpoints)",
            )
            continue
        namespace = _namespace(obj)
        sets = sorted(
            (
                carriers.get((namespace, k, v), set()) if isinstance(v, str) else set()
                for k, v in selector.items()
            ),
            key=len,
        )
        if not set.intersection(*sets):
            wanted = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
            run.add(
                i,
                "service-selector",
                ("spec", "selector"),
                f"selects no pod or pod template in namespace {_namespace(obj) or '(none)'!r} "
                f"({wanted})",
            )


# --- references ----------------------------------------------------------------------------------

#: The RBAC group, whose bindings' ``subjects`` name ServiceAccounts.
_RBAC = "rbac.authorization.k8s.io"


def _referenced(kind: str) -> catalog.Kind:
    """The row of a core kind pods and bindings reference by name (its ``external`` key)."""
    return catalog.lookup(("", kind))


def _pod_references(t: PodTemplate) -> Iterator[tuple[str, str, Path]]:
    """(kind, name, path) of every object a pod spec needs (optional references left out)."""
    spec, base = t.spec, (*t.path, "spec")
    account = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if isinstance(account, str) and account and account != "default":
        key = "serviceAccountName" if spec.get("serviceAccountName") else "serviceAccount"
        yield "ServiceAccount", account, (*base, key)
    for j, ref in enumerate(_list(spec.get("imagePullSecrets"))):
        if name := _mapping(ref).get("name"):
            yield "Secret", name, (*base, "imagePullSecrets", j, "name")
    for j, volume in enumerate(_list(spec.get("volumes"))):
        volume = _mapping(volume)
        vpath = (*base, "volumes", j)
        secret = _mapping(volume.get("secret"))
        if secret.get("secretName") and not secret.get("optional"):
            yield "Secret", secret["secretName"], (*vpath, "secret", "secretName")
        config = _mapping(volume.get("configMap"))
        if config.get("name") and not config.get("optional"):
            yield "ConfigMap", config["name"], (*vpath, "configMap", "name")
        claim = _mapping(volume.get("persistentVolumeClaim"))
        if claim.get("claimName"):
            yield (
                "PersistentVolumeClaim",
                claim["claimName"],
                (*vpath, "persistentVolumeClaim", "claimName"),
            )
        for k, source in enumerate(_list(_mapping(volume.get("projected")).get("sources"))):
            for kind, key in (("Secret", "secret"), ("ConfigMap", "configMap")):
                ref = _mapping(_mapping(source).get(key))
                if ref.get("name") and not ref.get("optional"):
                    yield kind, ref["name"], (*vpath, "projected", "sources", k, key, "name")
        for source_key, source in volume.items():
            source = _mapping(source)
            for ref_key in ("secretRef", "nodePublishSecretRef"):
                ref = _mapping(source.get(ref_key))
                if ref.get("name"):
                    yield "Secret", ref["name"], (*vpath, source_key, ref_key, "name")
    for cpath, c in _containers(spec):
        for j, var in enumerate(_list(c.get("env"))):
            source = _mapping(_mapping(var).get("valueFrom"))
            for kind, key in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
                ref = _mapping(source.get(key))
                if ref.get("name") and not ref.get("optional"):
                    yield kind, ref["name"], (*base, *cpath, "env", j, "valueFrom", key, "name")
        for j, source in enumerate(_list(c.get("envFrom"))):
            for kind, key in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
                ref = _mapping(_mapping(source).get(key))
                if ref.get("name") and not ref.get("optional"):
                    yield kind, ref["name"], (*base, *cpath, "envFrom", j, key, "name")


def _provided(run: _Run) -> set[tuple[str, str, str]]:
    """(kind, namespace, name) of every referencable object the tree creates."""
    out: set[tuple[str, str, str]] = set()
    for _, obj in run.objects():
        kind, ns, name = obj.get("kind"), _namespace(obj), _meta(obj).get("name")
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if group == "" and isinstance(kind, str) and _referenced(kind).external and name:
            out.add((str(kind), ns, str(name)))
        elif kind == "ExternalSecret" and group == "external-secrets.io":
            target = _mapping(_mapping(obj.get("spec")).get("target")).get("name") or name
            out.add(("Secret", ns, str(target)))
        elif kind == "SealedSecret" and group == "bitnami.com":
            target = _meta(_mapping(_mapping(obj.get("spec")).get("template"))).get("name") or name
            out.add(("Secret", ns, str(target)))
    return out


@cache
def _external_field(key: str) -> str:
    """The field of :class:`External` whose alias is ``key``."""
    return next(n for n, f in External.model_fields.items() if (f.alias or n) == key)


def _declared(external: External, kind: str) -> list[str]:
    """What ``kubetrain:external`` lists of a kind (under its row's ``external`` key)."""
    names: list[str] = getattr(external, _external_field(_referenced(kind).external))
    return names


def _references(run: _Run) -> None:
    provided = _provided(run)

    def check(i: int, kind: str, ns: str, name: str, path: Path) -> None:
        if (kind, ns, name) in provided:
            return
        names = _declared(run.settings.external, kind)
        if name in names or f"{ns}/{name}" in names:
            return
        run.add(
            i,
            "reference",
            path,
            f"{kind} {ns + '/' if ns else ''}{name} is neither in the output nor declared in "
            f"kubetrain:external.{_referenced(kind).external}",
        )

    for i, t in run.pods():
        ns = _namespace(run.items[i].obj)
        for kind, name, path in _pod_references(t):
            check(i, kind, ns, str(name), path)
    for i, obj in run.objects():
        # RoleBinding and ClusterRoleBinding: RBAC's kinds with subjects.
        if catalog.of(obj).group == _RBAC and "subjects" in obj:
            for j, subject in enumerate(_list(obj.get("subjects"))):
                subject = _mapping(subject)
                if subject.get("kind") == "ServiceAccount" and subject.get("name"):
                    ns = str(subject.get("namespace") or _namespace(obj))
                    check(i, "ServiceAccount", ns, str(subject["name"]), ("subjects", j, "name"))


# --- duplicates inside containers and pods -------------------------------------------------------


def _duplicates(run: _Run) -> None:
    for i, t in run.pods():
        port_names: dict[str, str] = {}
        env_checked = _api_checked(run.items[i].obj)  # a keyed-list error of the API server
        for cpath, c in _containers(t.spec):
            base = (*t.path, "spec", *cpath)
            seen: dict[str, int] = {}
            for j, var in enumerate([] if env_checked else _list(c.get("env"))):
                name = _mapping(var).get("name")
                if not isinstance(name, str):
                    continue
                if name in seen:
                    run.add(
                        i,
                        "duplicate-env",
                        (*base, "env", j, "name"),
                        f"env var {name!r} is already set by env[{seen[name]}] of container "
                        f"{c.get('name')!r}; the later one silently wins",
                    )
                else:
                    seen[name] = j
            for j, port in enumerate(_list(c.get("ports"))):
                name = _mapping(port).get("name")
                if not isinstance(name, str) or not name:
                    continue
                where = f"container {c.get('name')!r}"
                if name in port_names:
                    run.add(
                        i,
                        "duplicate-port-name",
                        (*base, "ports", j, "name"),
                        f"port name {name!r} is already used by {port_names[name]}; port names "
                        "are unique within a pod",
                    )
                else:
                    port_names[name] = where


# --- secrets -------------------------------------------------------------------------------------


def _may_hold_credentials(item: Located) -> bool:
    if item.no_credential_words:
        return False
    return credential_words(json.dumps(item.obj, default=str, ensure_ascii=False))


def _secret_data(run: _Run) -> None:
    for i, obj in run.objects():
        for path, message in external_secret_template_problems(obj):
            run.add(i, "secret-data", path, message)
        if not run.settings.inputs_checked and _may_hold_credentials(run.items[i]):
            # A credential planted by hand in a file (rendered/ edited, a manifest of the
            # team's): the one rule of job documents, and a ConfigMap key named like one.
            found = credential_problems(obj)
            if obj.get("kind") == "ConfigMap" and obj.get("apiVersion") == "v1":
                found += configmap_credential_problems(obj)
            for path, message in found:
                run.add(i, "secret-data", path, message)
        if obj.get("kind") != "Secret" or obj.get("apiVersion") != "v1":
            continue
        for key in ("data", "stringData"):
            if obj.get(key):
                run.add(
                    i,
                    "secret-data",
                    (key,),
                    f"a Secret with {key} puts secret material into the repository; render an "
                    "ExternalSecret (kubetrain:secretStore) or declare the Secret in "
                    "kubetrain:external.secrets",
                )


def _dropped_fields(run: _Run) -> None:
    for i, obj in run.objects():
        if obj.get("kind") != "PersistentVolumeClaim" or obj.get("apiVersion") != "v1":
            continue
        for key, why in pvc_dropped_fields(obj.get("spec")):
            run.add(
                i,
                "dropped-field",
                ("spec", key),
                f"the API server drops {key} as it creates the claim ({why}): the claim is "
                "created without it, and a GitOps engine sees the difference for ever",
            )


# --- names ---------------------------------------------------------------------------------------


def _check_labels(run: _Run, i: int, labels: Any, path: Path) -> None:
    for key, value in _mapping(labels).items():
        if problem := check_label_key(str(key)):
            run.add(i, "name-format", (*path, key), f"label {problem}")
        if not isinstance(value, str):
            run.add(i, "name-format", (*path, key), f"label values are strings, got {value!r}")
        elif problem := LABEL_VALUE.check(value):
            run.add(i, "name-format", (*path, key), problem)


def _api_checked(obj: Mapping[str, Any]) -> bool:
    """Whether the API server checks this object's pod templates itself (a Pod, a Job, ...);
    it takes a custom resource's (a TFJob's) as they are, and their pods fail later."""
    return f"{obj.get('apiVersion')}/{obj.get('kind')}" in handled_kinds()


def _names(run: _Run) -> None:
    # The names of objects, and of the pods and containers of built-in kinds, are the API
    # server's checks ('api' findings); this rule checks the pod templates of custom resources.
    for i, t in run.pods():
        if _api_checked(run.items[i].obj):
            continue
        _check_labels(run, i, t.meta.get("labels"), (*t.path, "metadata", "labels"))
        for cpath, c in _containers(t.spec):
            base = (*t.path, "spec", *cpath)
            cname = c.get("name")
            if isinstance(cname, str) and (problem := DNS1123_LABEL.check(cname)):
                run.add(i, "name-format", (*base, "name"), problem)
            for j, port in enumerate(_list(c.get("ports"))):
                pname = _mapping(port).get("name")
                if isinstance(pname, str) and (problem := PORT_NAME.check(pname)):
                    run.add(i, "name-format", (*base, "ports", j, "name"), problem)


# --- images ------------------------------------------------------------------------------------


def _images(run: _Run) -> None:
    for i, t in run.pods():
        for cpath, c in _containers(t.spec):
            image = c.get("image")
            if not isinstance(image, str) or not image:
                continue  # a missing image is the API server's (or the schema's) to refuse
            path = (*t.path, "spec", *cpath, "image")
            parsed = parse_image(image)
            if isinstance(parsed, str):
                run.add(i, "image", path, f"{printable(image)!r}: {parsed}")
            elif not parsed.pinned:
                what = "is tagged latest" if parsed.tag == "latest" else "has no tag or digest"
                run.add(
                    i,
                    "image-tag",
                    path,
                    f"{image} {what}: each pod runs whatever :latest is when it starts, so the "
                    "replicas of one job may run different code; name a tag or a digest",
                )


# --- host ports ----------------------------------------------------------------------------------


def _job_of(run: _Run, i: int) -> tuple[str, ...]:
    """Which job an object belongs to: its source, else its instance label, else itself."""
    item, obj = run.items[i], _mapping(run.items[i].obj)
    if item.source:
        return ("source", item.source)
    instance = _mapping(_meta(obj).get("labels")).get("app.kubernetes.io/instance")
    if instance:
        return ("instance", _namespace(obj), str(instance))
    return ("object", item.file, str(item.document))


def _host_ports(t: PodTemplate) -> Iterator[tuple[int, Path]]:
    host_network = t.spec.get("hostNetwork") is True
    for cpath, c in _containers(t.spec):
        for j, port in enumerate(_list(c.get("ports"))):
            port = _mapping(port)
            base = (*t.path, "spec", *cpath, "ports", j)
            if isinstance(port.get("hostPort"), int) and port["hostPort"]:
                yield port["hostPort"], (*base, "hostPort")
            elif host_network and isinstance(port.get("containerPort"), int):
                yield port["containerPort"], (*base, "containerPort")


def _host_port_conflicts(run: _Run) -> None:
    claimed: dict[tuple[tuple[str, ...], int], str] = {}
    for i, t in run.pods():
        job = _job_of(run, i)
        obj = _mapping(run.items[i].obj)
        what = _title(obj) if not t.path else f"{_title(obj)} ({'.'.join(map(str, t.path))})"
        mine: set[int] = set()
        for port, path in _host_ports(t):
            if port in mine:
                run.add(i, "host-port", path, f"port {port} is claimed twice in one pod")
                continue
            mine.add(port)
            if t.count > 1:
                run.add(
                    i,
                    "host-port",
                    path,
                    f"the {t.count} pods of {what} all claim port {port} on their node, so no "
                    "two of them can share a node",
                )
            key = (job, port)
            if key in claimed:
                run.add(
                    i,
                    "host-port",
                    path,
                    f"port {port} on the node is also claimed by {claimed[key]} of the same job, "
                    "so the two pods can never share a node",
                )
            else:
                claimed[key] = what


# --- Pod Security Standards ---------------------------------------------------------------------


def _pod_security(run: _Run) -> None:
    level = run.settings.pod_security
    if level == "privileged":
        return
    for i, t in run.pods():
        for path, message in pod_security_problems(level, t.path, t.meta, t.spec):
            run.add(i, "pod-security", path, f"Pod Security Standards ({level}): {message}")


# --- gang scheduling ----------------------------------------------------------------------------

_GANG_KEYS = {
    "volcano": ("annotations", "scheduling.k8s.io/group-name", "scheduling.volcano.sh"),
    "scheduler-plugins": ("labels", "scheduling.x-k8s.io/pod-group", "scheduling.x-k8s.io"),
}


def _gang(run: _Run) -> None:
    groups: dict[tuple[str, str, str], tuple[int, Mapping[str, Any]]] = {}
    for i, obj in run.objects():
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        if obj.get("kind") == "PodGroup":
            groups[(group, _namespace(obj), str(_meta(obj).get("name")))] = (i, obj)
    members: dict[tuple[str, str, str], int] = {}
    for i, t in run.pods():
        ns = _namespace(run.items[i].obj)
        for scheduler, (where, key, group) in _GANG_KEYS.items():
            name = _mapping(t.meta.get(where)).get(key)
            if not name:
                continue
            path = (*t.path, "metadata", where, key)
            if (group, ns, name) not in groups:
                run.add(
                    i,
                    "gang-scheduling",
                    path,
                    f"PodGroup {ns}/{name} ({group}) is not in the output",
                )
                continue
            members[(group, ns, name)] = members.get((group, ns, name), 0) + t.count
            scheduler_name = t.spec.get("schedulerName")
            if scheduler == "volcano" and scheduler_name != "volcano":
                run.add(
                    i,
                    "gang-scheduling",
                    (*t.path, "spec", "schedulerName"),
                    f"a member of Volcano PodGroup {name} is scheduled by "
                    f"{scheduler_name or 'the default scheduler'!s}, not volcano: its pods "
                    "start one by one, not as a gang (set schedulerName: volcano)",
                    # Issue 26: Kubeflow Trainer's published Volcano example runs so.
                    warning=True,
                )
            elif scheduler == "scheduler-plugins" and not scheduler_name:
                run.add(
                    i,
                    "gang-scheduling",
                    (*t.path, "spec", "schedulerName"),
                    f"a member of PodGroup {name} needs the scheduler-plugins scheduler's "
                    "schedulerName; the default scheduler ignores PodGroups, so its pods "
                    "start one by one, not as a gang",
                    warning=True,
                )
    for group_key, (i, obj) in groups.items():
        wanted = _mapping(obj.get("spec")).get("minMember")
        have = members.get(group_key, 0)
        if isinstance(wanted, int) and wanted > have:
            run.add(
                i,
                "gang-scheduling",
                ("spec", "minMember"),
                f"minMember is {wanted}, but only {have} pods in the output join PodGroup "
                f"{group_key[2]}: the gang would never start",
            )


_CHECKS: tuple[Callable[[_Run], None], ...] = (
    _gpus,
    _resource_quantities,
    _service_selectors,
    _references,
    _duplicates,
    _secret_data,
    _dropped_fields,
    _names,
    _host_port_conflicts,
    _pod_security,
    _gang,
    _images,
)


def check_objects(
    items: Sequence[Located], results: Sequence[ObjectResult], settings: CheckSettings
) -> None:
    """Run every rule over ``items`` (validated together), adding findings to ``results``
    (``results[i]`` is the verdict on ``items[i]``)."""
    add_findings(results, semantic_findings(items, settings))


def semantic_findings(items: Sequence[Located], settings: CheckSettings) -> list[list[Finding]]:
    """The findings of every rule over ``items`` (validated together), per item. They depend
    on the objects alone, not on their schema checks: render and validate find them while the
    objects are checked one by one (see :func:`add_findings`)."""
    run = _Run(items, settings, [[] for _ in items])
    run.templates = [pod_templates(item.obj) for item in items]
    run.mapped = [
        (i, item.obj)
        for i, item in enumerate(items)
        if _is_mapping(item.obj) and item.obj.get("kind")
    ]
    for check in _CHECKS:
        check(run)
    return run.findings


def add_findings(results: Sequence[ObjectResult], findings: Sequence[list[Finding]]) -> None:
    """Add the rules' ``findings`` (:func:`semantic_findings`) to the checked ``results``: an
    error makes its object invalid, a warning does not; and a rule's finding at or below a field
    the API server already refuses is dropped."""
    if len(findings) != len(results):
        raise ValueError("one result per item")
    for result, found in zip(results, findings, strict=True):
        if not found:  # nothing added, so nothing to drop
            continue
        result.findings += found
        if result.status in ("valid", "skipped") and any(f.severity == "error" for f in found):
            result.status = "invalid"
        _hide_flagged_values(result)
        _drop_restated(result)


#: A value a message quotes: ``'...'`` or ``"..."`` (bounded: messages quote short values).
_QUOTED = re.compile(r"'[^'\n]{0,2000}'|\"[^\"\n]{0,2000}\"")


def _hide_flagged_values(result: ObjectResult) -> None:
    """The API server's, the schema's and a webhook's findings at a field the ``secret-data``
    rule finds credential material in (a password given as a ``restartPolicy``) say what is
    wrong without the value: the rule's own finding never shows it, and is dropped when the
    API server refuses the field (:func:`_drop_restated`)."""
    flagged = [f.path for f in result.findings if f.rule == "secret-data"]
    if not flagged:
        return
    result.findings = [
        dataclasses.replace(f, message=_QUOTED.sub("(the value is not shown)", f.message))
        if f.rule not in RULES
        and any(f.path[: len(p)] == p or p[: len(f.path)] == f.path for p in flagged)
        else f
        for f in result.findings
    ]


def _drop_restated(result: ObjectResult) -> None:
    """Drop the rules' findings at or below a field the API server already refuses: its schema
    or API finding says it (a duplicate env var is a keyed-list error before it is a rule's)."""
    refused = [f.path for f in result.findings if f.rule in ("api", "schema") and f.path]
    if refused:
        result.findings = [
            f
            for f in result.findings
            if f.rule not in RULES or not any(f.path[: len(p)] == p for p in refused)
        ]
