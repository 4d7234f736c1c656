"""``kubetrain plan``: what applying the stacks as they are now would do to what ``rendered/``
holds, per environment, before anything is rendered or deployed.

The objects of ``rendered/<env>/`` and ``rendered/clusters/<env>/`` (what Flux and Argo CD apply,
and what ``pulumi up`` applied last, for both are built from one builder output) are compared
with what the stack builds now, object by object (apiVersion group, kind, namespace, name):

* **add**: an object that is new;
* **change**: an object that changes in place (the fields that change are named);
* **replace**: an object whose change the API server refuses in place, naming the immutable
  field that forces deleting and re-creating it (:mod:`kubetrain.kube.immutable`); Flux,
  Argo CD and Pulumi do that themselves for kubetrain's objects (see
  :mod:`kubetrain.builders.lifecycle`), and the job's run restarts;
* **delete**: an object that is gone (CRDs and Namespaces are left in the cluster; see
  :mod:`kubetrain.builders.lifecycle`).

Totals before and after are counted per environment, per namespace and per job: pods (what each
object that runs pods makes at once: a Pod 1, a workload its replicas or parallelism, a custom
resource its replica templates) and their requests per resource (a limit stands in for a missing
request, as the API server defaults it): CPU, memory and every extended resource, GPUs per
resource name. Quantities are exact (:mod:`kubetrain.kube.quantity`). Kinds are not listed here:
whatever :func:`kubetrain.validate.semantic.pod_templates` knows runs pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .builders.gang import pod_requests
from .builders.lifecycle import is_retained
from .kube.immutable import update_refusals
from .kube.paths import differences
from .kube.quantity import Quantity, display_quantity, format_quantity
from .models.source import display_path, load_all
from .render.tree import generated_for, read_tree
from .render.yamlout import read_generated
from .validate.semantic import pod_templates

__all__ = [
    "Change",
    "EnvironmentPlan",
    "Totals",
    "Usage",
    "format_text",
    "plan_environment",
    "read_rendered",
    "to_json",
]

Action = Literal["add", "change", "replace", "delete"]
Manifest = dict[str, Any]
#: An object and the job it belongs to (what its file header names).
Sourced = tuple[Manifest, str]
Key = tuple[str, str, str, str]
_SYMBOL: dict[str, str] = {"add": "+", "change": "~", "replace": "-/+", "delete": "-"}
_VERBS: tuple[tuple[Action, str], ...] = (
    ("add", "add"),
    ("change", "change in place"),
    ("replace", "replace"),
    ("delete", "delete"),
)
#: Why a deleted CRD or Namespace stays (see kubetrain.builders.lifecycle).
KEPT = "left in the cluster: no engine deletes kubetrain's CRDs and Namespaces; delete it by hand"
#: Workloads that roll their pods when their pod template changes in place.
_ROLLING = frozenset({"StatefulSet", "Deployment", "DaemonSet"})


def _key(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")).rpartition("/")[0],
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
    )


@dataclass(frozen=True)
class Change:
    """What happens to one object."""

    action: Action
    kind: str
    namespace: str
    name: str
    job: str
    #: change: the fields that change; replace: the immutable field that forces it.
    fields: tuple[str, ...] = ()
    #: replace: why that field cannot change in place; change: what the server would refuse in
    #: an update that no replacement helps with either, if anything; delete: why the object
    #: stays in the cluster, if it does.
    reason: str = ""
    #: Whether the change restarts the job's pods.
    restarts: bool = False

    @property
    def title(self) -> str:
        return (
            f"{self.kind} {self.namespace}/{self.name}"
            if self.namespace
            else (f"{self.kind} {self.name}")
        )


@dataclass
class Usage:
    """Pods and their requests (exact quantities, per resource name)."""

    pods: int = 0
    resources: dict[str, Quantity] = field(default_factory=dict)

    def add(self, obj: Mapping[str, Any]) -> None:
        for template in pod_templates(obj):
            self.pods += template.count
            try:
                requests = pod_requests(template.spec)
            except ValueError:  # not a quantity: validate reports it
                continue
            for name, q in requests.items():
                scaled = Quantity(q.value * template.count, q.format)
                self.resources[name] = (
                    self.resources[name] + scaled if name in self.resources else scaled
                )

    def as_json(self) -> dict[str, Any]:
        return {
            "pods": self.pods,
            "resources": {k: format_quantity(v) for k, v in sorted(self.resources.items())},
        }


@dataclass
class Totals:
    """Usage of the whole environment, per namespace and per job."""

    all: Usage = field(default_factory=Usage)
    namespaces: dict[str, Usage] = field(default_factory=dict)
    jobs: dict[str, Usage] = field(default_factory=dict)

    @classmethod
    def of(cls, objects: Iterable[Sourced]) -> Totals:
        totals = cls()
        for obj, job in objects:
            if not pod_templates(obj):
                continue
            namespace = str((obj.get("metadata") or {}).get("namespace") or "")
            for usage in (
                totals.all,
                totals.namespaces.setdefault(namespace, Usage()),
                totals.jobs.setdefault(job, Usage()),
            ):
                usage.add(obj)
        return totals

    def as_json(self) -> dict[str, Any]:
        return {
            "all": self.all.as_json(),
            "namespaces": {k: v.as_json() for k, v in sorted(self.namespaces.items())},
            "jobs": {k: v.as_json() for k, v in sorted(self.jobs.items())},
        }


@dataclass
class EnvironmentPlan:
    """The plan of one environment."""

    name: str
    folders: list[str]
    changes: list[Change]
    unchanged: int
    before: Totals
    after: Totals
    #: Why a job or manifest leaves, by its title, where kubetrain can tell (its file no longer
    #: matches the stack's patterns: :mod:`kubetrain.models.orphans`).
    causes: dict[str, str] = field(default_factory=dict)

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def restarted_jobs(self) -> list[str]:
        """Jobs whose pods are re-created: an object of theirs that runs pods is replaced or
        deleted, or a workload that rolls its pods has a new pod template."""
        return sorted({c.job for c in self.changes if c.restarts})


def _restarts(action: Action, kind: str, runs_pods: bool, fields: Sequence[str]) -> bool:
    if not runs_pods or action == "add":
        return False
    if action in ("replace", "delete"):
        return True
    if kind == "Pod":  # a new image restarts its container
        return any(f.endswith(".image") for f in fields)
    return kind in _ROLLING and any(f.startswith("spec.template") for f in fields)


def plan_environment(
    name: str, folders: list[str], before: list[Sourced], after: list[Sourced]
) -> EnvironmentPlan:
    """Compare what the environment's folders hold (``before``) with what its stack builds now
    (``after``)."""
    old = {_key(obj): (obj, job) for obj, job in before}
    new = {_key(obj): (obj, job) for obj, job in after}
    changes: list[Change] = []
    unchanged = 0
    for key in sorted(set(old) | set(new), key=lambda k: (k[2], k[1], k[3], k[0])):
        _, kind, namespace, obj_name = key
        if key not in old:
            obj, job = new[key]
            changes.append(Change("add", kind, namespace, obj_name, job))
            continue
        if key not in new:
            obj, job = old[key]
            runs = bool(pod_templates(obj))
            kept = KEPT if is_retained(obj) else ""
            changes.append(
                Change(
                    "delete",
                    kind,
                    namespace,
                    obj_name,
                    job,
                    reason=kept,
                    restarts=_restarts("delete", kind, runs, ()),
                )
            )
            continue
        (before_obj, _), (after_obj, job) = old[key], new[key]
        if before_obj == after_obj:
            unchanged += 1
            continue
        runs = bool(pod_templates(after_obj)) or bool(pod_templates(before_obj))
        refusals = update_refusals(before_obj, after_obj)
        replace = next((r for r in refusals if r.replaceable), None)
        if replace is not None:
            changes.append(
                Change(
                    "replace",
                    kind,
                    namespace,
                    obj_name,
                    job,
                    (replace.path,),
                    replace.message,
                    _restarts("replace", kind, runs, ()),
                )
            )
            continue
        fields = tuple(differences(before_obj, after_obj))
        refused = "; ".join(str(r) for r in refusals)
        changes.append(
            Change(
                "change",
                kind,
                namespace,
                obj_name,
                job,
                fields,
                refused,
                _restarts("change", kind, runs, fields),
            )
        )
    return EnvironmentPlan(name, folders, changes, unchanged, Totals.of(before), Totals.of(after))


def read_rendered(folder: Path) -> list[Sourced]:
    """Every object kubetrain rendered into ``folder`` (nothing when it does not exist), with
    the job its header names. Kustomize's own files and files kubetrain did not write are not
    objects of the environment."""
    out: list[Sourced] = []
    for path, text in read_tree(folder).items():
        job = generated_for(text)
        if job is None or not path.endswith((".yaml", ".yml")):
            continue
        # As every input is read (models/source.py): a hand-edited file cannot crash the plan.
        for obj in load_all(text, display_path(folder / path), fast=read_generated):
            if isinstance(obj, dict) and not str(obj.get("apiVersion", "")).startswith(
                "kustomize.config.k8s.io/"
            ):
                out.append((obj, job))
    return out


# --- output -----------------------------------------------------------------------------------


def _usage_line(before: Usage | None, after: Usage | None) -> str:
    b, a = before or Usage(), after or Usage()
    parts = [f"pods {_arrow(str(b.pods), str(a.pods))}"]
    names = sorted(
        set(b.resources) | set(a.resources), key=lambda n: (n not in ("cpu", "memory"), n)
    )
    for name in names:
        old = display_quantity(name, b.resources[name]) if name in b.resources else "0"
        new = display_quantity(name, a.resources[name]) if name in a.resources else "0"
        parts.append(f"{name} {_arrow(old, new)}")
    return "; ".join(parts)


def _arrow(old: str, new: str) -> str:
    return old if old == new else f"{old} -> {new}"


def _change_line(change: Change) -> str:
    symbol = _SYMBOL[change.action]
    text = f"  {symbol} {change.title}"
    if change.action == "replace":
        text += f": {change.fields[0]} cannot change in place"
    elif change.action == "change":
        shown = ", ".join(change.fields[:4])
        more = f" and {len(change.fields) - 4} more" if len(change.fields) > 4 else ""
        text += f": {shown}{more}"
        if change.reason:
            text += f" (the API server refuses this edit: {change.reason})"
    elif change.action == "delete" and change.reason:
        text += f": {change.reason}"
    return f"{text}  [{change.job}]"


def format_text(plans: Sequence[EnvironmentPlan]) -> str:
    """The plans for people: one block per environment."""
    out: list[str] = []
    for plan in plans:
        counts = ", ".join(f"{plan.count(action)} to {verb}" for action, verb in _VERBS)
        out.append(f"{plan.name} ({', '.join(plan.folders)}): {counts}, {plan.unchanged} unchanged")
        out += [_change_line(c) for c in plan.changes]
        for title, cause in sorted(plan.causes.items()):
            out.append(f"  ! {title} leaves the stack: {cause}")
        if plan.restarted_jobs:
            out.append(f"  runs restarted: {', '.join(plan.restarted_jobs)}")
        out.append("  totals (before -> after):")
        out.append(f"    all: {_usage_line(plan.before.all, plan.after.all)}")
        for scope, label in (("namespaces", "namespace"), ("jobs", "job")):
            old: dict[str, Usage] = getattr(plan.before, scope)
            new: dict[str, Usage] = getattr(plan.after, scope)
            for name in sorted(set(old) | set(new)):
                out.append(f"    {label} {name}: {_usage_line(old.get(name), new.get(name))}")
    return "".join(f"{line}\n" for line in out)


def to_json(plans: Sequence[EnvironmentPlan]) -> dict[str, Any]:
    """The plans for programs (``--output json``)."""
    return {
        "environments": [
            {
                "name": plan.name,
                "folders": plan.folders,
                "summary": {
                    "add": plan.count("add"),
                    "change": plan.count("change"),
                    "replace": plan.count("replace"),
                    "delete": plan.count("delete"),
                    "unchanged": plan.unchanged,
                },
                "changes": [
                    {
                        "action": c.action,
                        "kind": c.kind,
                        "namespace": c.namespace or None,
                        "name": c.name,
                        "job": c.job,
                        "fields": list(c.fields),
                        "reason": c.reason or None,
                        "restarts": c.restarts,
                    }
                    for c in plan.changes
                ],
                "restartedJobs": plan.restarted_jobs,
                "removalCauses": dict(sorted(plan.causes.items())),
                "totals": {"before": plan.before.as_json(), "after": plan.after.as_json()},
            }
            for plan in plans
        ]
    }
