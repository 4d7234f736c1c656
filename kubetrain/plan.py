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

Each change says what each engine does with it where they differ (:mod:`kubetrain.delivery.engines`:
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

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .builders.gang import pod_requests
from .builders.lifecycle import is_retained
from .builders.registry import MANIFEST_SOURCE
from .builders.secrets import PULUMI_SECRET
from .builders.trainjob import runs_of
from .delivery.engines import ENGINE_TITLES, ENGINES, Engine, Outcome, outcomes
from .kube import catalog
from .kube.catalog import Life
from .kube.paths import differences
from .kube.quantity import Quantity, display_quantity, format_quantity, parse_quantity
from .models.base import Mode
from .models.errors import format_path
from .models.secrets import ExternalSecret
from .models.source import display_path, load_all
from .operators import operator_edit_notes, queued_jobs_note
from .quota import QueuePlan, plan_queues
from .render.tree import generated_for, read_tree
from .render.yamlout import read_generated
from .validate.engine import DEFAULT_VERSION, Located, Validator
from .validate.semantic import pod_templates

__all__ = [
    "Change",
    "EnvironmentPlan",
    "Migration",
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
#: What render writes for a Secret of credentials (group, kind).
_EXTERNAL_SECRET = (ExternalSecret.API_VERSION.rpartition("/")[0], ExternalSecret.KIND)
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


def _runs_pods(obj: Mapping[str, Any], job: str = "") -> bool:
    """Whether ``obj`` runs pods: its own templates, (a TrainJob) its runtime's, or it is the
    custom resource of the job it belongs to (operator mode: its operator runs it)."""
    return bool(pod_templates(obj)) or bool(runs_of(obj)) or _is_job_document(obj, job)


def _is_job_document(obj: Mapping[str, Any], job: str) -> bool:
    """Whether ``obj`` is the document of ``job`` (``Kind namespace/name``) itself."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    title = f"{obj.get('kind')} {meta.get('namespace') or ''}/{meta.get('name')}"
    return bool(job) and title == job


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object's metadata, or nothing where a hand edit left something else there."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _key(obj: Mapping[str, Any]) -> Key:
    meta = _meta(obj)
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
    #: change and replace: what each engine does (:func:`kubetrain.delivery.engines.outcomes`).
    engines: Mapping[Engine, Outcome] = field(default_factory=dict)
    #: The object's API group ("" for the core group).
    group: str = ""
    #: delete: the object stays in the cluster (no engine deletes it).
    kept: bool = False

    @property
    def delivered_as(self) -> dict[Engine, tuple[str, str]]:
        """The engines that deliver another kind in place of this object, and that kind (group,
        kind): an ExternalSecret a job needs is, under Pulumi, the Secret it stands for, its
        values the stack's secret config (:func:`kubetrain.builders.secrets.secret_manifests`;
        a manifest of the stack is applied as written)."""
        if (self.group, self.kind) == _EXTERNAL_SECRET and self.job != MANIFEST_SOURCE:
            return {"pulumi": PULUMI_SECRET}
        return {}

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
            count = run.get("pods", 0)
            if type(count) is not int or count < 0:
                continue  # a hand edit: runs_of's annotation says what the builder wrote
            self.pods += count
            requests = run.get("requests")
            for name, value in (requests if isinstance(requests, dict) else {}).items():
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
            namespace = str(_meta(obj).get("namespace") or "")
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


TRAINJOB_KEY = ("trainer.kubeflow.org", "TrainJob")
TRAINJOB = TRAINJOB_KEY[1]
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


@dataclass
class Migration:
    """A v1 job that becomes a TrainJob of the same namespace and name (``kubetrain convert``):
    its run stops and a new one starts; for a while both run, as every engine creates the new
    objects before it deletes the old ones."""

    #: ``namespace/name``
    name: str
    #: The job titles before and after (``PyTorchJob ml/bert``, ``TrainJob ml/bert``).
    before_job: str
    after_job: str
    before: Usage
    after: Usage
    #: Kueue queue of each (``None``: none).
    queues: tuple[str | None, str | None] = (None, None)
    #: What each engine does, for people.
    engines: dict[Engine, str] = field(default_factory=dict)
    #: What the engines' order makes unsafe for this job.
    notes: list[str] = field(default_factory=list)

    @property
    def peak(self) -> Usage:
        """What runs at once while the engine switches: both runs."""
        total = Usage(self.before.pods + self.after.pods, dict(self.before.resources))
        for name, q in self.after.resources.items():
            total.resources[name] = total.resources[name] + q if name in total.resources else q
        return total

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "from": self.before_job,
            "to": self.after_job,
            "before": self.before.as_json(),
            "after": self.after.as_json(),
            "peak": self.peak.as_json(),
            "queues": {"before": self.queues[0], "after": self.queues[1]},
            "engines": dict(self.engines),
            "notes": self.notes,
        }


def _title_kind(title: str) -> tuple[str, str]:
    """``PyTorchJob ml/bert`` -> (``PyTorchJob``, ``ml/bert``)."""
    kind, _, name = title.partition(" ")
    return kind, name


#: How each engine makes the switch (kubetrain.delivery.engines; docs/lifecycle.md).
_SWITCH: dict[Engine, str] = {
    "flux": (
        "applies the TrainJob, then prunes the {v1} objects (garbage collection after the "
        "apply, in the same reconcile)"
    ),
    "argocd": (
        "prunes the {v1} objects, then syncs the TrainJob (within a sync wave gitops-engine "
        "v3.6.1's runTasks prunes first)"
    ),
    "pulumi": "creates the TrainJob, then deletes the {v1} objects (deletes come last)",
    "kubectl": (
        "the deletions of `plan --output kubectl` remove the {v1} objects, then the apply "
        "creates the TrainJob"
    ),
}


def _migrations(
    changes: Sequence[Change],
    old: Mapping[Key, Sourced],
    new: Mapping[Key, Sourced],
    before: Totals,
    after: Totals,
) -> list[Migration]:
    """The v1 jobs that leave while a TrainJob of the same namespace and name arrives."""
    old_jobs = {job for _, job in old.values()}
    new_jobs = {job for _, job in new.values()}
    arriving = {_title_kind(j)[1]: j for j in new_jobs - old_jobs if _title_kind(j)[0] == TRAINJOB}
    out = []
    for job in sorted(old_jobs - new_jobs):
        kind, name = _title_kind(job)
        # Kinds of the training operator v1 and the MPI Operator: their jobs move to TrainJobs.
        moves = any(row.successor == TRAINJOB_KEY for row in catalog.named(kind))
        if not moves or name not in arriving:
            continue
        target = arriving[name]
        migration = Migration(
            name,
            job,
            target,
            before.jobs.get(job, Usage()),
            after.jobs.get(target, Usage()),
            (_queue(old, job), _queue(new, target)),
        )
        v1 = (
            Mode.OPERATOR
            if any(o.get("kind") == kind for o, j in old.values() if j == job)
            else Mode.NATIVE
        )
        what = f"{kind}" if v1 == Mode.OPERATOR else f"{kind}'s"
        for engine, text in _SWITCH.items():
            migration.engines[engine] = text.format(v1=what)
        if v1 == Mode.OPERATOR:
            migration.notes.append(
                f"the training operator deletes the {kind}'s pods once the {kind} is deleted"
            )
        namespace, _, short = name.partition("/")
        clash = any(
            key[1] == "JobSet" and key[2] == namespace and key[3] == short and j == job
            for key, (_, j) in old.items()
        ) and not any(key[1] == "JobSet" and key[2] == namespace and key[3] == short for key in new)
        if clash:
            migration.notes.append(
                f"the trainer names the TrainJob's JobSet {short}, as the {kind}'s JobSet is "
                "named: it cannot create it until the engine has deleted the old one, so the "
                "new run starts after the old one is gone"
            )
        queue_before, queue_after = migration.queues
        if queue_after is not None and queue_before == queue_after:
            migration.notes.append(
                f"both runs ask Kueue's queue {queue_after}: the new one is admitted once the "
                "quota the old one holds is free, or beside it if the quota allows both"
            )
        out.append(migration)
    return out


def _queue(objects: Mapping[Key, Sourced], job: str) -> str | None:
    for obj, j in objects.values():
        if j != job:
            continue
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if QUEUE_LABEL in labels:
            return str(labels[QUEUE_LABEL])
    return None


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
    #: v1 jobs becoming TrainJobs of the same name.
    migrations: list[Migration] = field(default_factory=list)
    #: Jobs Kueue could never admit before the change (they ran no pods).
    queued_before: list[str] = field(default_factory=list)

    def migrated(self) -> set[str]:
        """The job titles (before and after) of every migration."""
        return {j for m in self.migrations for j in (m.before_job, m.after_job)}

    def count(self, action: Action) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def stopped_jobs(self) -> list[str]:
        """Jobs that ran pods and run none after the change: they leave the stack (a v1 job
        that becomes a TrainJob is a migration instead), or they stay but Kueue can never
        admit them now (a queue whose ClusterQueue lacks a resource they request: Kueue
        suspends the job for ever, seen in e2e/test_lifecycle.py)."""
        ran = (set(self.before.jobs) | self._documents("delete")) - set(self.queued_before)
        gone = ran - set(self.after.jobs) - self._documents("add") - self.migrated()
        return sorted(gone | (ran & set(self.queues.never)))

    def _documents(self, action: str) -> set[str]:
        """Jobs whose own custom resource (operator mode) is added or deleted."""
        return {
            c.job
            for c in self.changes
            if c.action == action and c.job == f"{c.kind} {c.namespace}/{c.name}"
        }

    def restarted_by(self, engine: Engine) -> list[str]:
        """Jobs whose running training restarts under ``engine``: an object of theirs that runs
        pods is replaced or deleted (the job staying), a Pod gets a new image, or a workload
        that rolls its pods a new pod template."""
        stopped = set(self.stopped_jobs) | self.migrated() | set(self.queued_before)
        staying = (
            set(self.after.jobs)
            | self._documents("add")
            | {c.job for c in self.changes if c.action != "delete"}
        )
        out = set()
        for c in self.changes:
            if c.job in stopped or c.job not in staying:
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
        group, kind, namespace, obj_name = key
        if key not in old:
            obj, job = new[key]
            changes.append(Change("add", kind, namespace, obj_name, job, group=group))
            continue
        if key not in new:
            obj, job = old[key]
            runs = _runs_pods(obj, job)
            reason = ""
            if catalog.of(obj).life & Life.DATA:
                reason = (_kept_data if is_retained(obj) else _lost_data)(kind, namespace, obj_name)
            elif is_retained(obj):
                reason = KEPT
            changes.append(
                Change(
                    "delete",
                    kind,
                    namespace,
                    obj_name,
                    job,
                    reason=reason,
                    restarts=runs,
                    group=group,
                    kept=is_retained(obj),
                )
            )
            continue
        (before_obj, _), (after_obj, job) = old[key], new[key]
        if before_obj == after_obj:
            unchanged += 1
            continue
        runs = _runs_pods(after_obj, job) or _runs_pods(before_obj, job)
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
                    group,
                )
            )
            continue
        reason = f"{refused[0].field} cannot change in place" if refused else ""
        changes.append(
            Change(
                "change", kind, namespace, obj_name, job, fields, reason, restarts, engines, group
            )
        )
    plan = EnvironmentPlan(name, folders, changes, unchanged, Totals.of(before), Totals.of(after))
    plan.migrations = _migrations(changes, old, new, plan.before, plan.after)
    plan.notes = (
        _notes(changes, old, new, plan.migrated())
        + operator_notes(changes, old, new, after)
        + _flux_blocked(changes)
        + _argocd_held(changes)
        + _pulumi_secrets(changes)
    )
    plan.queues = plan_queues(
        after, {job: usage.resources for job, usage in plan.after.jobs.items()}
    )
    plan.queued_before = plan_queues(
        before, {job: usage.resources for job, usage in plan.before.jobs.items()}
    ).never
    return plan


def operator_notes(
    changes: Sequence[Change],
    old: Mapping[Key, Sourced],
    new: Mapping[Key, Sourced],
    after: Sequence[Sourced],
) -> list[str]:
    """What operator-mode edits do to running trainings (:func:`kubetrain.operators.
    operator_edit_notes`), and the jobs whose ``suspend`` is Kueue's."""
    notes = []
    for c in changes:
        # An edit some engine makes in place (Argo CD replaces a queued job on any change).
        if c.action == "change" or any(o.action == "change" for o in c.engines.values()):
            key = _key_of(c, new)
            before, after_obj = old[key][0], new[key][0]
            fields = c.fields if c.action == "change" else tuple(differences(before, after_obj))
            notes += operator_edit_notes(before, after_obj, fields, c.job)
    if queued := queued_jobs_note(after):
        notes.append(queued)
    return notes


def _notes(
    changes: Sequence[Change],
    old: Mapping[Key, Sourced],
    new: Mapping[Key, Sourced],
    migrated: set[str] = frozenset(),  # type: ignore[assignment]
) -> list[str]:
    """What the engines' order makes unsafe: mode switches and claims changing namespace
    (a migration says its own)."""
    notes = []
    gone: dict[str, set[str]] = {}
    coming: dict[str, set[str]] = {}
    for c in changes:
        if c.job in migrated:
            continue
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
            f"{which} from {before} to {after} objects. Flux and Pulumi create the new "
            "objects before they delete the old ones, so for a while the old pods and the new "
            "ones (the same hostnames) run side by side; Argo CD and kubectl (plan --output "
            "kubectl) delete the old ones first. To avoid it under every engine, remove the job "
            "in one change and add it back in the next."
        )
    claims = {
        (c.kind, c.name): c
        for c in changes
        if c.action == "delete" and catalog.of(old[_key_of(c, old)][0]).life & Life.DATA
    }
    for c in changes:
        moved = claims.get((c.kind, c.name))
        if c.action == "add" and moved is not None and moved.namespace != c.namespace:
            notes.append(
                f"{c.title} is a new, empty claim: the data stays in {moved.title}; copy it "
                "over before the jobs that mount the claim start."
            )
    return notes


def _flux_blocked(changes: Sequence[Change]) -> list[str]:
    """A refusal under Flux stops the whole step: kustomize-controller v1.9.6 applies a
    Kustomization's objects with fluxcd/pkg/ssa's ApplyAllStaged, which dry-runs them all
    first and applies none when one fails (seen in e2e/test_lifecycle.py)."""
    refused = [c for c in changes if "flux" in c.engines and c.engines["flux"].action == "refused"]
    if not refused:
        return []
    names = ", ".join(c.title for c in refused)
    return [
        f"Flux: {names} cannot be updated in place and is not re-created; kustomize-controller "
        "dry-runs every object of a Kustomization before it applies any, so none of this "
        "environment's other changes in the same Kustomization is applied until the edit is "
        "reverted or the object deleted by hand."
    ]


def _argocd_held(changes: Sequence[Change]) -> list[str]:
    """A refusal under Argo CD holds the sync operation: gitops-engine v3.6.1's
    ``syncContext.Sync`` waits for every running task of a sync of several waves to be healthy
    before it reports a failed one, and a training Job is healthy only once it has ended (seen
    in e2e/test_lifecycle.py); Argo CD starts no other sync of the Application meanwhile."""
    refused = [
        c for c in changes if "argocd" in c.engines and c.engines["argocd"].action == "refused"
    ]
    if not refused:
        return []
    names = ", ".join(c.title for c in refused)
    return [
        f"Argo CD: {names} cannot be updated in place; the sync applies the rest, then waits for "
        "the training Jobs it touched to end before it reports the failure, and no later commit "
        "is synced meanwhile: end the operation with `argocd app terminate-op`, then revert the "
        "edit or delete the object by hand."
    ]


def _pulumi_secrets(changes: Sequence[Change]) -> list[str]:
    """Which ExternalSecrets Pulumi delivers as Secrets (seen in e2e/test_lifecycle.py)."""
    names = [c.title for c in changes if "pulumi" in c.delivered_as]
    if not names:
        return []
    one = len(names) == 1
    return [
        f"Pulumi: under `pulumi up`, {', '.join(names)} {'is a Secret' if one else 'are Secrets'}"
        f" of the same name, read from the stack's kubetrain:credentials (docs/pulumi.md); Flux "
        f"and Argo CD apply {'it' if one else 'them'} as written."
    ]


def _key_of(change: Change, objects: Mapping[Key, Sourced]) -> Key:
    """The key of ``change``'s object among ``objects`` (its group from there)."""
    for key in objects:
        if key[1:] == (change.kind, change.namespace, change.name):
            return key
    raise KeyError(change.title)


def read_rendered(folder: Path, unreadable: list[str] | None = None) -> list[Sourced]:
    """Every object kubetrain rendered into ``folder`` (nothing when it does not exist), with
    the job its header names. Kustomize's own files and files kubetrain did not write are not
    objects of the environment.

    A hand-edited file cannot crash the plan: it is read as every input is
    (models/source.py), and an object its schema refuses (metadata that is not a mapping,
    annotations or containers of the wrong type) cannot be what was applied, so it is left out,
    with a line in ``unreadable`` saying where and what (the stack's object then shows as
    added)."""
    out: list[Sourced] = []
    checker = Validator(ignore_missing_schemas=True)
    for path, text in read_tree(folder).items():
        job = generated_for(text)
        if job is None or not path.endswith((".yaml", ".yml")):
            continue
        shown = display_path(folder / path)
        version = _header_version(text)
        for i, obj in enumerate(load_all(text, shown, fast=read_generated)):
            if not isinstance(obj, dict) or str(obj.get("apiVersion", "")).startswith(
                "kustomize.config.k8s.io/"
            ):
                continue
            result = checker.shape(Located(obj, shown, i), version)
            refused = [f for f in result.findings if f.severity == "error"]
            if refused:
                if unreadable is not None:
                    first = refused[0]
                    where = f" {format_path(first.path)}:" if first.path else ""
                    unreadable.append(
                        f"{shown}:{where} {first.message}: not what kubetrain wrote (edited by "
                        "hand?); left out of the plan, as it cannot be what was applied"
                    )
                continue
            out.append((obj, job))
    return out


def _header_version(text: str) -> tuple[int, int]:
    """The Kubernetes version a rendered file's header names (its objects were validated for
    it), else kubetrain's default."""
    for line in text.splitlines()[:3]:
        if line.startswith(_VERSION_HEADER):
            major, _, minor = line.removeprefix(_VERSION_HEADER).strip().partition(".")
            if major.isdigit() and minor.isdigit() and len(major + minor) < 6:
                return int(major), int(minor)
    return DEFAULT_VERSION


_VERSION_HEADER = "# kubernetes-version:"


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


def _migration_lines(plan: EnvironmentPlan) -> list[str]:
    out = []
    for m in plan.migrations:
        out.append(
            f"  >> migration {m.before_job} -> {m.after_job}: the run stops, a new one starts"
        )
        for c in plan.changes:
            if c.job in (m.before_job, m.after_job):
                out.append(f"  {_change_line(c)}")
        out.append(f"      before: {_usage_line(m.before, m.before)}")
        out.append(f"      after:  {_usage_line(m.after, m.after)}")
        out.append(f"      both at once, while the engine switches: {_usage_line(m.peak, m.peak)}")
        queues = m.queues
        if queues != (None, None):
            out.append(f"      Kueue queue: {_arrow(queues[0] or 'none', queues[1] or 'none')}")
        for engine in ENGINES:
            out.append(f"      {ENGINE_TITLES[engine]}: {m.engines[engine]}")
        out += [f"      ! {note}" for note in m.notes]
    return out


def format_text(plans: Sequence[EnvironmentPlan]) -> str:
    """The plans for people: one block per environment."""
    out: list[str] = []
    for plan in plans:
        counts = ", ".join(f"{plan.count(action)} to {verb}" for action, verb in _VERBS)
        out.append(f"{plan.name} ({', '.join(plan.folders)}): {counts}, {plan.unchanged} unchanged")
        migrated = plan.migrated()
        for c in plan.changes:
            if c.job in migrated:
                continue
            out.append(_change_line(c))
            if (engines := _engines_line(c)) is not None:
                out.append(engines)
        out += _migration_lines(plan)
        for title, cause in sorted(plan.causes.items()):
            out.append(f"  ! {title} leaves the stack: {cause}")
        out += [f"  ! {note}" for note in plan.notes]
        if (restarted := _restarted_line(plan)) is not None:
            out.append(restarted)
        if plan.stopped_jobs:
            out.append(f"  runs stopped: {', '.join(plan.stopped_jobs)}")
        if plan.migrations:
            out.append(
                "  runs migrated (stopped, and started as TrainJobs): "
                + ", ".join(m.before_job for m in plan.migrations)
            )
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


#: The "job" of the engine's own objects (rendered/clusters/<env>): kubectl never applies them.
DELIVERY_OF = "GitOps delivery of "


def _resource(change: Change) -> str:
    kind = change.kind.lower()
    return f"{kind}.{change.group}/{change.name}" if change.group else f"{kind}/{change.name}"


def format_kubectl(plans: Sequence[EnvironmentPlan]) -> str:
    """``--output kubectl``: what ``kubectl apply --server-side`` cannot do itself, as the
    ``kubectl delete`` commands to run before it: the objects that leave (but those no engine
    deletes), and those kubectl's view replaces (an update the server refuses in place).
    Every value is shell-quoted; comments hold JSON strings (no line break can end one)."""
    lines = [
        "# kubetrain plan --output kubectl: run before `kubetrain render` and",
        "# `kubetrain render --stack ENV --stdout | kubectl apply --server-side -f -`",
        "# (docs/lifecycle.md, Without an engine).",
        "set -e",
    ]
    for plan in plans:
        lines.append(f"# environment {json.dumps(plan.name)}")
        for c in plan.changes:
            if c.job.startswith(DELIVERY_OF):
                continue
            if c.action == "delete" and c.kept:
                lines.append(f"# kept (no engine deletes it): {json.dumps(_resource(c))}")
                continue
            kubectl = c.engines.get("kubectl")
            if not all(part.isprintable() for part in (c.namespace, _resource(c))):
                # Hand-edited: no object of the cluster has such a name; nothing to delete.
                lines.append(f"# not a Kubernetes name: {json.dumps(_resource(c))}")
                continue
            if c.action == "delete" or (kubectl is not None and kubectl.action == "replace"):
                where = f" --namespace {shlex.quote(c.namespace)}" if c.namespace else ""
                lines.append(
                    f"kubectl delete --ignore-not-found --wait=true{where} "
                    + shlex.quote(_resource(c))
                )
            elif kubectl is not None and kubectl.action == "refused":
                lines.append(
                    f"# refused, kubectl apply will fail: {json.dumps(_resource(c))} "
                    f"{json.dumps(kubectl.field)} cannot change in place"
                )
    return "\n".join(lines) + "\n"


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
                        "group": c.group,
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
                        "deliveredAs": {
                            engine: {"group": group, "kind": kind}
                            for engine, (group, kind) in sorted(c.delivered_as.items())
                        },
                    }
                    for c in plan.changes
                ],
                "restartedJobs": plan.restarted_jobs,
                "restartedJobsByEngine": {e: plan.restarted_by(e) for e in ENGINES},
                "stoppedJobs": plan.stopped_jobs,
                "migrations": [m.as_json() for m in plan.migrations],
                "notes": plan.notes,
                "queues": plan.queues.as_json(),
                "removalCauses": dict(sorted(plan.causes.items())),
                "totals": {"before": plan.before.as_json(), "after": plan.after.as_json()},
            }
            for plan in plans
        ]
    }
