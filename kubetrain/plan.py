"""``kubetrain plan``: what applying the stacks as they are now would do to what ``rendered/``
holds, per environment, before anything is rendered or deployed.

The objects of ``rendered/<env>/`` and ``rendered/clusters/<env>/`` (what Flux and Argo CD apply,
and what ``pulumi up`` applied last, for both are built from one builder output) are compared
with what the stack builds now, object by object (apiVersion group, kind, namespace, name):

* **add**: an object that is new;
* **change**: an object that changes in place (the fields that change are named);
* **replace**: an object that an engine deletes and re-creates, naming the field that decides
  it: the API server refuses the edit in place (:mod:`kubetrain.kube.immutable`), or Pulumi's
  provider replaces on it; the job's run restarts;
* **delete**: an object that is gone (CRDs, Namespaces and, unless ``kubetrain:pruneData``,
  claims are left in the cluster; see :mod:`kubetrain.builders.lifecycle`).

Each change says what each engine does with it where they differ (:mod:`kubetrain.kube.engines`:
Flux, Argo CD and Pulumi do not replace the same edits), and whether the running training
restarts under it. Runs restarted are listed per engine; jobs that leave are runs stopped.
Notes name what an engine's order makes unsafe: a job whose pods change kind (a mode switch:
every engine creates the new objects before it deletes the old ones) and a claim that moves to
another namespace (a new, empty claim).

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
from .builders.lifecycle import DATA_KINDS, group_kind, is_retained
from .builders.trainjob import runs_of
from .kube.engines import ENGINE_TITLES, ENGINES, Engine, Outcome, outcomes
from .kube.paths import differences
from .kube.quantity import Quantity, display_quantity, format_quantity, parse_quantity
from .models.source import display_path, load_all
from .quota import QueuePlan, plan_queues
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
#: What an engine's action is called in the text.
_DOING = {"change": "in place", "replace": "replaced", "refused": "refused"}


def _kept_data(kind: str, namespace: str, name: str) -> str:
    where = f" -n {namespace}" if namespace else ""
    return (
        "left in the cluster with its data (kubetrain:pruneData is off, so no engine deletes "
        f"it); once the data is no longer needed: kubectl delete {kind.lower()}{where} {name}"
    )


def _lost_data(kind: str, namespace: str, name: str) -> str:
    where = f" -n {namespace}" if namespace else ""
    return (
        "DATA LOSS: every engine deletes it and its data (kubetrain:pruneData is on). To keep "
        f"it, before this change reaches the cluster: kubectl annotate {kind.lower()}{where} "
        f"{name} kustomize.toolkit.fluxcd.io/prune=disabled "
        "argocd.argoproj.io/sync-options=Prune=false (Flux and Argo CD read the live object's "
        "annotations before they prune); Pulumi: pulumi state delete its URN"
    )


def _runs_pods(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` runs pods: its own templates, or (a TrainJob) its runtime's."""
    return bool(pod_templates(obj)) or bool(runs_of(obj))


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
    #: Whether the change restarts the job's pods (under any engine; see ``engines``).
    restarts: bool = False
    #: change and replace: what each engine does (:func:`kubetrain.kube.engines.outcomes`).
    engines: Mapping[Engine, Outcome] = field(default_factory=dict)

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
        for run in runs_of(obj):  # a TrainJob: what its JobSet will run
            count = int(run.get("pods", 0))
            self.pods += count
            for name, value in (run.get("requests") or {}).items():
                try:
                    q = parse_quantity(value)
                except ValueError:
                    continue
                scaled = Quantity(q.value * count, q.format)
                self.resources[name] = (
                    self.resources[name] + scaled if name in self.resources else scaled
                )
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
            if not pod_templates(obj) and not runs_of(obj):
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
    #: What an engine's order makes unsafe (see the module docstring).
    notes: list[str] = field(default_factory=list)
    #: Kueue quota: requests per ClusterQueue and flavor, and jobs it cannot admit whole.
    queues: QueuePlan = field(default_factory=QueuePlan)

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def stopped_jobs(self) -> list[str]:
        """Jobs that ran pods and run none after the change (they leave the stack)."""
        return sorted(set(self.before.jobs) - set(self.after.jobs))

    def restarted_by(self, engine: Engine) -> list[str]:
        """Jobs whose running training restarts under ``engine``: an object of theirs that runs
        pods is replaced or deleted (the job staying), a Pod gets a new image, or a workload
        that rolls its pods a new pod template."""
        stopped = set(self.stopped_jobs)
        out = set()
        for c in self.changes:
            if c.job in stopped:
                continue
            if (c.action == "delete" and c.restarts) or (
                engine in c.engines and c.engines[engine].restarts
            ):
                out.add(c.job)
        return sorted(out)

    @property
    def restarted_jobs(self) -> list[str]:
        """Jobs whose running training restarts under some engine."""
        return sorted({job for engine in ENGINES for job in self.restarted_by(engine)})


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
            runs = _runs_pods(obj)
            reason = ""
            if group_kind(obj) in DATA_KINDS:
                reason = (_kept_data if is_retained(obj) else _lost_data)(kind, namespace, obj_name)
            elif is_retained(obj):
                reason = KEPT
            changes.append(
                Change("delete", kind, namespace, obj_name, job, reason=reason, restarts=runs)
            )
            continue
        (before_obj, _), (after_obj, job) = old[key], new[key]
        if before_obj == after_obj:
            unchanged += 1
            continue
        runs = _runs_pods(after_obj) or _runs_pods(before_obj)
        fields = tuple(differences(before_obj, after_obj))
        engines = outcomes(before_obj, after_obj, fields, runs_pods=runs)
        replaced = [o for o in engines.values() if o.action == "replace"]
        refused = [o for o in engines.values() if o.action == "refused"]
        restarts = any(o.restarts for o in engines.values())
        if replaced:
            # The server's immutable field where there is one, else what Pulumi replaces on.
            first = next((o for o in engines.values() if o.action != "change"), replaced[0])
            changes.append(
                Change(
                    "replace",
                    kind,
                    namespace,
                    obj_name,
                    job,
                    (first.field,),
                    "",
                    restarts,
                    engines,
                )
            )
            continue
        reason = f"{refused[0].field} cannot change in place" if refused else ""
        changes.append(
            Change("change", kind, namespace, obj_name, job, fields, reason, restarts, engines)
        )
    plan = EnvironmentPlan(name, folders, changes, unchanged, Totals.of(before), Totals.of(after))
    plan.notes = _notes(changes, old, new)
    plan.queues = plan_queues(
        after, {job: usage.resources for job, usage in plan.after.jobs.items()}
    )
    return plan


def _notes(
    changes: Sequence[Change], old: Mapping[Key, Sourced], new: Mapping[Key, Sourced]
) -> list[str]:
    """What the engines' order makes unsafe: mode switches and claims changing namespace."""
    notes = []
    gone: dict[str, set[str]] = {}
    coming: dict[str, set[str]] = {}
    for c in changes:
        if c.action == "delete" and pod_templates(old[_key_of(c, old)][0]):
            gone.setdefault(c.job, set()).add(c.kind)
        elif c.action == "add" and pod_templates(new[_key_of(c, new)][0]):
            coming.setdefault(c.job, set()).add(c.kind)
    moves: dict[tuple[str, str], list[str]] = {}
    for job in sorted(set(gone) & set(coming)):
        if gone[job] != coming[job]:
            move = (" and ".join(sorted(gone[job])), " and ".join(sorted(coming[job])))
            moves.setdefault(move, []).append(job)
    for (before, after), jobs in sorted(moves.items()):
        which = (
            f"{jobs[0]}: its pods move"
            if len(jobs) == 1
            else (f"{len(jobs)} jobs move their pods ({', '.join(jobs)})")
        )
        notes.append(
            f"{which} from {before} to {after} objects. Flux, Argo CD and Pulumi create the new "
            "objects before they delete the old ones, so for a while the old pods and the new "
            "ones (the same hostnames) run side by side. To avoid it, remove the job in one "
            "change and add it back in the next."
        )
    claims = {(c.kind, c.name): c for c in changes if c.action == "delete" and c.kind in _DATA}
    for c in changes:
        moved = claims.get((c.kind, c.name))
        if c.action == "add" and moved is not None and moved.namespace != c.namespace:
            notes.append(
                f"{c.title} is a new, empty claim: the data stays in {moved.title}; copy it "
                "over before the jobs that mount the claim start."
            )
    return notes


_DATA = frozenset(kind for _, kind in DATA_KINDS)


def _key_of(change: Change, objects: Mapping[Key, Sourced]) -> Key:
    """The key of ``change``'s object among ``objects`` (its group from there)."""
    for key in objects:
        if key[1:] == (change.kind, change.namespace, change.name):
            return key
    raise KeyError(change.title)


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


def _engines_line(change: Change) -> str | None:
    """What the engines do, when they do not all do what the change's line says."""
    usual = "replace" if change.action == "replace" else "change"
    if all(o.action == usual for o in change.engines.values()):
        return None
    groups: dict[tuple[str, str, bool], list[str]] = {}
    for engine in ENGINES:
        outcome = change.engines[engine]
        shown = outcome.field if outcome.action != "change" else ""
        groups.setdefault((outcome.action, shown, outcome.restarts), []).append(
            ENGINE_TITLES[engine]
        )
    parts = []
    for (action, shown, restarts), names in groups.items():
        text = f"{', '.join(names)}: {_DOING[action]}"
        if shown:
            text += f" ({shown})"
        if action == "refused":
            text += ", the edit fails"
        elif restarts:
            text += ", the run restarts"
        parts.append(text)
    return "      " + "; ".join(parts)


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


def _restarted_line(plan: EnvironmentPlan) -> str | None:
    by_engine = {engine: plan.restarted_by(engine) for engine in ENGINES}
    every = sorted(set.intersection(*(set(v) for v in by_engine.values())))
    parts = list(every)
    for job in plan.restarted_jobs:
        if job in every:
            continue
        engines = [ENGINE_TITLES[e] for e in ENGINES if job in by_engine[e]]
        parts.append(f"{job} ({', '.join(engines)} only)")
    return f"  runs restarted: {', '.join(parts)}" if parts else None


def format_text(plans: Sequence[EnvironmentPlan]) -> str:
    """The plans for people: one block per environment."""
    out: list[str] = []
    for plan in plans:
        counts = ", ".join(f"{plan.count(action)} to {verb}" for action, verb in _VERBS)
        out.append(f"{plan.name} ({', '.join(plan.folders)}): {counts}, {plan.unchanged} unchanged")
        for c in plan.changes:
            out.append(_change_line(c))
            if (engines := _engines_line(c)) is not None:
                out.append(engines)
        for title, cause in sorted(plan.causes.items()):
            out.append(f"  ! {title} leaves the stack: {cause}")
        out += [f"  ! {note}" for note in plan.notes]
        if (restarted := _restarted_line(plan)) is not None:
            out.append(restarted)
        if plan.stopped_jobs:
            out.append(f"  runs stopped: {', '.join(plan.stopped_jobs)}")
        if plan.queues.flavors:
            out.append("  Kueue quota (the stack's jobs' requests of nominal quota):")
            out += plan.queues.lines()
        out += [f"  ! {warning}" for warning in plan.queues.warnings]
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
                        "engines": {
                            engine: {
                                "action": o.action,
                                "field": o.field or None,
                                "restarts": o.restarts,
                            }
                            for engine, o in c.engines.items()
                        },
                    }
                    for c in plan.changes
                ],
                "restartedJobs": plan.restarted_jobs,
                "restartedJobsByEngine": {e: plan.restarted_by(e) for e in ENGINES},
                "stoppedJobs": plan.stopped_jobs,
                "notes": plan.notes,
                "queues": plan.queues.as_json(),
                "removalCauses": dict(sorted(plan.causes.items())),
                "totals": {"before": plan.before.as_json(), "after": plan.after.as_json()},
            }
            for plan in plans
        ]
    }
