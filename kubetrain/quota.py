"""Kueue quota in ``kubetrain plan``: what the stack's jobs request of each ClusterQueue and
flavor, against its nominal quota, and which jobs Kueue can never admit or admits piecemeal.

A job names a LocalQueue (``kueue.x-k8s.io/queue-name``); the LocalQueue names its ClusterQueue;
the ClusterQueue's ``resourceGroups`` give each flavor a ``nominalQuota`` per resource (Kueue
v0.19.2, ``apis/kueue/v1beta2/clusterqueue_types.go``). Kueue admits a workload when its
requests fit what the queue has left, trying the flavors in their order, borrowing from its
cohort within ``borrowingLimit`` (unlimited without one) what the cohort's other queues lend
(``lendingLimit``, all their quota without one). The plan:

* assigns each job, in the stack's order, to the first flavor of each resource group whose
  remaining quota holds every resource of the group the job requests (else to the first flavor,
  where it waits), and prints per ClusterQueue and flavor the requests against nominal quota;
* warns of a job that can never be admitted: it requests a resource the ClusterQueue does not
  cover, or more of one than all its flavors together could ever give it (nominal quota plus
  what it may borrow), so it waits for ever;
* warns of a job Kueue admits piecemeal: its objects are several Kueue workloads (a Job per
  replica, an MPIJob's launcher Job and worker pods), so some replicas may run while the others
  wait, which a gang cannot use.

Requests are counted as ``kubetrain plan`` counts them (:class:`kubetrain.plan.Usage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .kube import catalog
from .kube.quantity import Quantity, display_quantity, parse_quantity

__all__ = ["QUEUE_LABEL", "QueuePlan", "plan_queues"]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
KUEUE_GROUP = "kueue.x-k8s.io"
#: The controller of MultiKueue's AdmissionCheck (Kueue v0.19.2 MultiKueueControllerName).
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
Manifest = Mapping[str, Any]
POD = ("", "Pod")


@dataclass
class FlavorUse:
    """One flavor of one ClusterQueue: its nominal quota and what the jobs request of it."""

    queue: str
    flavor: str
    nominal: dict[str, Quantity]
    requested: dict[str, Fraction] = field(default_factory=dict)
    jobs: list[str] = field(default_factory=list)
    #: The worker clusters MultiKueue dispatches the queue's workloads to (none: they run here).
    workers: list[str] = field(default_factory=list)


@dataclass
class QueuePlan:
    flavors: list[FlavorUse] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Jobs their ClusterQueue can never admit (their pods are never created).
    never: list[str] = field(default_factory=list)
    #: (job, message) of the warnings that say a job will wait for ever (it can never be
    #: admitted, or its ClusterQueue is not in the stack): what render reports at the job's
    #: queue label, an error under --strict.
    gates: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for use in self.flavors:
            parts = []
            for name in sorted(use.nominal):
                q = use.nominal[name]
                asked = Quantity(use.requested.get(name, Fraction(0)), q.format)
                parts.append(
                    f"{name} {display_quantity(name, asked)} of {display_quantity(name, q)}"
                )
            jobs = f"  [{', '.join(use.jobs)}]" if use.jobs else ""
            out.append(
                f"    ClusterQueue {use.queue}, flavor {use.flavor}: {'; '.join(parts)}{jobs}"
            )
            if use.workers:
                out.append(
                    f"      MultiKueue: each job is admitted here, then runs on one of "
                    f"{', '.join(use.workers)}, on the quota of that cluster's ClusterQueue "
                    f"{use.queue}"
                )
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "flavors": [
                {
                    "clusterQueue": u.queue,
                    "flavor": u.flavor,
                    "nominal": {k: str(v) for k, v in sorted(u.nominal.items())},
                    "requested": {
                        k: str(Quantity(u.requested.get(k, Fraction(0)), u.nominal[k].format))
                        for k in sorted(u.nominal)
                    },
                    "jobs": u.jobs,
                    "multiKueueWorkers": u.workers,
                }
                for u in self.flavors
            ],
            "warnings": self.warnings,
        }


def _quantity(value: Any) -> Quantity | None:
    try:
        return parse_quantity(value)
    except ValueError:
        return None


@dataclass
class _Queue:
    name: str
    cohort: str | None
    #: resource groups: [(covered resources, [(flavor, {resource: (nominal, borrowing, lending)})])]
    groups: list[
        tuple[
            list[str],
            list[tuple[str, dict[str, tuple[Quantity, Quantity | None, Quantity | None]]]],
        ]
    ]


def _fields(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else none: the objects here may come from a hand-edited
    ``rendered/`` tree (``kubetrain plan``'s before), where any field may hold anything."""
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Any]:
    """``value`` if it is a list, else no items (see :func:`_fields`)."""
    return value if isinstance(value, list) else []


def _queues(objects: Iterable[Manifest]) -> tuple[dict[tuple[str, str], str], dict[str, _Queue]]:
    local: dict[tuple[str, str], str] = {}
    cluster: dict[str, _Queue] = {}
    for obj in objects:
        if not str(obj.get("apiVersion", "")).startswith(KUEUE_GROUP + "/"):
            continue
        meta = _fields(obj.get("metadata"))
        spec = _fields(obj.get("spec"))
        if obj.get("kind") == "LocalQueue" and spec.get("clusterQueue"):
            local[(str(meta.get("namespace") or ""), str(meta.get("name")))] = str(
                spec["clusterQueue"]
            )
        elif obj.get("kind") == "ClusterQueue":
            groups = []
            for group in map(_fields, _items(spec.get("resourceGroups"))):
                flavors = []
                for flavor in map(_fields, _items(group.get("flavors"))):
                    quotas = {}
                    for r in map(_fields, _items(flavor.get("resources"))):
                        nominal = _quantity(r.get("nominalQuota"))
                        if nominal is None:
                            continue
                        quotas[str(r.get("name"))] = (
                            nominal,
                            _quantity(r["borrowingLimit"]) if "borrowingLimit" in r else None,
                            _quantity(r["lendingLimit"]) if "lendingLimit" in r else None,
                        )
                    flavors.append((str(flavor.get("name")), quotas))
                covered = [str(c) for c in _items(group.get("coveredResources"))]
                groups.append((covered, flavors))
            cohort = spec.get("cohortName") or spec.get("cohort")
            cohort = str(cohort) if cohort else None
            cluster[str(meta.get("name"))] = _Queue(str(meta.get("name")), cohort, groups)
    return local, cluster


def _multikueue_workers(objects: Iterable[Manifest]) -> dict[str, list[str]]:
    """ClusterQueue -> the clusters MultiKueue dispatches its workloads to: its admission
    checks (``admissionChecksStrategy``, v1beta1 ``admissionChecks``) whose AdmissionCheck's
    controller is ``kueue.x-k8s.io/multikueue``, through the MultiKueueConfig it names."""
    objs = [o for o in objects if str(o.get("apiVersion", "")).startswith(KUEUE_GROUP + "/")]

    def name(o: Manifest) -> str:
        return str(_fields(o.get("metadata")).get("name"))

    configs = {
        name(o): [str(c) for c in _items(_fields(o.get("spec")).get("clusters"))]
        for o in objs
        if o.get("kind") == "MultiKueueConfig"
    }
    checks = {}
    for o in objs:
        spec = _fields(o.get("spec"))
        parameters = _fields(spec.get("parameters"))
        if o.get("kind") == "AdmissionCheck" and spec.get("controllerName") == MULTIKUEUE:
            checks[name(o)] = configs.get(str(parameters.get("name")), [])
    out: dict[str, list[str]] = {}
    for o in objs:
        if o.get("kind") != "ClusterQueue":
            continue
        spec = _fields(o.get("spec"))
        strategy = _fields(spec.get("admissionChecksStrategy"))
        named = [str(_fields(c).get("name")) for c in _items(strategy.get("admissionChecks"))]
        named += [str(c) for c in _items(spec.get("admissionChecks"))]
        found = [w for check in named for w in checks.get(check, [])]
        if found:
            out[name(o)] = found
    return out


def _lendable(queue: _Queue, queues: Mapping[str, _Queue], flavor: str, resource: str) -> Fraction:
    """What the other queues of ``queue``'s cohort lend of ``resource`` in ``flavor``."""
    if queue.cohort is None:
        return Fraction(0)
    total = Fraction(0)
    for other in queues.values():
        if other is queue or other.cohort != queue.cohort:
            continue
        for _, flavors in other.groups:
            for name, quotas in flavors:
                if name == flavor and resource in quotas:
                    nominal, _, lending = quotas[resource]
                    total += (lending or nominal).value
    return total


def plan_queues(
    objects: Sequence[tuple[Manifest, str]],
    requests: Mapping[str, Mapping[str, Quantity]],
) -> QueuePlan:
    """The quota plan of an environment: ``objects`` are its objects (with their jobs),
    ``requests`` each job's total requests (``kubetrain plan``'s per-job totals)."""
    plan = QueuePlan()
    local, cluster = _queues(o for o, _ in objects)
    # Which queue each job names, and how many Kueue workloads its objects make.
    named: dict[str, tuple[str, str]] = {}
    workloads: dict[str, set[str]] = {}
    for obj, job in objects:
        meta = _fields(obj.get("metadata"))
        labels = _fields(meta.get("labels"))
        queue = labels.get(QUEUE_LABEL)
        if queue is None:
            continue
        named.setdefault(job, (str(meta.get("namespace") or ""), str(queue)))
        row = catalog.of(obj)
        if row.key == POD:
            workloads.setdefault(job, set()).add(
                f"pod group {labels.get(POD_GROUP_LABEL, meta.get('name'))}"
            )
        elif row.kueue is not None and row.kueue.workload:
            # Kinds Kueue admits as one workload each when they carry the queue label.
            workloads.setdefault(job, set()).add(f"{obj.get('kind')} {meta.get('name')}")
    uses: dict[tuple[str, str], FlavorUse] = {}
    workers = _multikueue_workers(o for o, _ in objects)
    for queue in cluster.values():
        for _, flavors in queue.groups:
            for name, quotas in flavors:
                uses[(queue.name, name)] = FlavorUse(
                    queue.name,
                    name,
                    {r: q[0] for r, q in quotas.items()},
                    workers=workers.get(queue.name, []),
                )
    for job, (namespace, queue_name) in named.items():
        if len(workloads.get(job, ())) > 1:
            plan.warnings.append(
                f"{job}: Kueue admits it as {len(workloads[job])} workloads "
                f"({', '.join(sorted(workloads[job]))}), one at a time: some of its pods may run "
                "while the others wait, which a distributed job cannot use (run it as one "
                "workload: kubetrain:nativeWorkload jobset or pod, or operator mode)"
            )
        cq_name = local.get((namespace, queue_name))
        if cq_name is None or cq_name not in cluster:
            if cq_name is not None:
                plan.warnings.append(
                    f"{job}: ClusterQueue {cq_name} (of LocalQueue {namespace}/{queue_name}) is "
                    "not in the stack: its quota is unknown here"
                )
                plan.gates.append(
                    (
                        job,
                        f"LocalQueue {namespace}/{queue_name} names ClusterQueue {cq_name}, "
                        "which the stack does not deliver: Kueue holds the job until a "
                        "ClusterQueue of that name exists (deliver it, or check the name)",
                    )
                )
            continue
        queue = cluster[cq_name]
        asked = {k: v.value for k, v in (requests.get(job) or {}).items() if v.value > 0}
        covered = {r for resources, _ in queue.groups for r in resources}
        missing = sorted(set(asked) - covered)
        if missing:
            plan.warnings.append(
                f"{job} can never be admitted by ClusterQueue {cq_name}: it requests "
                f"{', '.join(missing)}, which the queue covers in none of its resource groups"
            )
            plan.never.append(job)
            plan.gates.append((job, plan.warnings[-1]))
            continue
        never = []
        for resources, flavors in queue.groups:
            for resource in resources:
                if resource not in asked:
                    continue
                most = Fraction(0)
                for name, quotas in flavors:
                    if resource not in quotas:
                        continue
                    nominal, borrowing, _ = quotas[resource]
                    lend = _lendable(queue, cluster, name, resource)
                    most += nominal.value + (
                        min(borrowing.value, lend) if borrowing is not None else lend
                    )
                if asked[resource] > most:
                    never.append(
                        f"{resource} {display_quantity(resource, Quantity(asked[resource]))} "
                        f"(the most it can ever get is "
                        f"{display_quantity(resource, Quantity(most))})"
                    )
        if never:
            plan.warnings.append(
                f"{job} can never be admitted by ClusterQueue {cq_name}: it requests "
                f"{'; '.join(never)}; it would wait for ever"
            )
            plan.never.append(job)
            plan.gates.append((job, plan.warnings[-1]))
            continue
        for resources, flavors in queue.groups:
            group_asked = {r: asked[r] for r in resources if r in asked}
            if not group_asked:
                continue
            chosen = flavors[0][0]
            for name, quotas in flavors:
                use = uses[(cq_name, name)]
                if all(
                    r in quotas and use.requested.get(r, Fraction(0)) + v <= quotas[r][0].value
                    for r, v in group_asked.items()
                ):
                    chosen = name
                    break
            use = uses[(cq_name, chosen)]
            for r, v in group_asked.items():
                use.requested[r] = use.requested.get(r, Fraction(0)) + v
            if job not in use.jobs:
                use.jobs.append(job)
    for use in uses.values():
        over = [
            r for r, v in use.requested.items() if r in use.nominal and v > use.nominal[r].value
        ]
        if over:
            plan.warnings.append(
                f"ClusterQueue {use.queue}, flavor {use.flavor}: the stack's jobs request more "
                f"{', '.join(sorted(over))} than its nominal quota: some wait for others to "
                "finish (or borrow from the cohort)"
            )
    plan.flavors = [u for u in uses.values() if u.jobs]
    return plan
