"""One environment's life through one engine, compared with `kubetrain plan` at every step.

A step: plan (what kubetrain says the change will do, per engine), render and commit, snapshot
the objects of the tree before and after (UIDs and resourceVersions) and the pods of every
job, let the engine deliver, wait for the controllers to settle, and compare per object and
per job. Every difference is a row of the step's table; the test fails on any.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .cluster import ControlPlane
from .engines import Outcome, commit
from .observe import (
    ENGINE_MANAGERS,
    Key,
    key_of,
    observed,
    restarted,
    settle,
    show,
    snapshot,
    stopped,
)
from .project import Project

#: API groups of the custom resources a training operator runs (operator mode).
OPERATOR_GROUPS = {"trainer.kubeflow.org", "kubeflow.org", "paddlepaddle.org", "kubetrain.io"}
#: What an engine's plan action looks like on the cluster.
_SEEN = {"change": "change", "replace": "replace", "refused": "unchanged"}


@dataclass
class Row:
    step: str
    env: str
    what: str
    planned: str
    did: str

    @property
    def ok(self) -> bool:
        return self.planned == self.did


@dataclass
class StepResult:
    step: str
    rows: list[Row] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)

    @property
    def mismatches(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]


def planned_action(change: dict[str, Any], engine: str) -> str:
    action = change["action"]
    if action == "add":
        return "add"
    if action == "delete":
        reason = change.get("reason") or ""
        return "kept" if reason.startswith("left in the cluster") else "delete"
    outcome = change["engines"].get(engine)
    if outcome is None:
        return action
    return _SEEN[outcome["action"]]


def _brief(detail: str) -> str:
    """An engine's report, its start and its end (where Pulumi and kubectl print the error)."""
    return detail if len(detail) <= 2000 else f"{detail[:500]} [...] {detail[-1500:]}"


def _job(entry: str) -> tuple[str, str]:
    """'TFJob ml-dev/mnist-smoke' -> ('ml-dev', 'mnist-smoke')."""
    _, _, where = entry.partition(" ")
    ns, _, name = where.partition("/")
    return ns, name


def namespaces_of(objects: Iterable[dict[str, Any]]) -> set[str]:
    out = set()
    for obj in objects:
        ns = (obj.get("metadata") or {}).get("namespace")
        if ns:
            out.add(ns)
        if obj.get("kind") == "Namespace":
            out.add(obj["metadata"]["name"])
    return out


class Lifecycle:
    def __init__(
        self,
        cluster: ControlPlane,
        project: Project,
        engine: Any,
        envs: list[str],
    ):
        self.cluster = cluster
        self.project = project
        self.engine = engine
        self.envs = envs
        self.results: list[StepResult] = []

    def step(self, name: str, edit: Callable[[Project], None] | None = None) -> StepResult:
        project = self.project
        before_objects = {env: project.rendered(env) for env in self.envs}
        if edit:
            edit(project)
        plans = project.plan(*self.envs)
        if hasattr(self.engine, "before_render"):
            self.engine.before_render(self.envs)
        project.render(*self.envs)
        revision = commit(project, name)
        after_objects = {env: project.rendered(env) for env in self.envs}
        delivered = {env: self._delivered(plans.get(env)) for env in self.envs}
        keys: dict[str, set[Key]] = {
            env: {
                delivered[env].get(k, k)
                for k in map(key_of, before_objects[env] + after_objects[env])
            }
            for env in self.envs
        }
        namespaces = set()
        for env in self.envs:
            namespaces |= namespaces_of(before_objects[env] + after_objects[env])
        all_keys = set().union(*keys.values())
        managers = ENGINE_MANAGERS.get(self.engine.name)
        before = snapshot(self.cluster, all_keys, namespaces, managers)
        result = StepResult(name)
        for env in self.envs:
            result.outcomes[env] = self.engine.deliver(env, revision)
        settle(self.cluster, namespaces)
        after = snapshot(self.cluster, all_keys, namespaces, managers)
        for env in self.envs:
            self._compare(result, env, plans.get(env), keys[env], before, after)
        self.results.append(result)
        return result

    def _delivered(self, plan: dict[str, Any] | None) -> dict[Key, Key]:
        """The objects the engine delivers in place of those the plan names, by the plan's
        ``deliveredAs`` (under Pulumi, a job's ExternalSecret is the Secret it stands for)."""
        out = {}
        for c in (plan or {}).get("changes", []):
            other = c["deliveredAs"].get(self.engine.name)
            if other:
                ns = c["namespace"] or ""
                out[(c["group"], c["kind"], ns, c["name"])] = (
                    other["group"], other["kind"], ns, c["name"],
                )  # fmt: skip
        return out

    def _compare(self, result, env, plan, keys, before, after) -> None:
        engine = self.engine.name
        changes = {}
        delivered = self._delivered(plan)
        for c in (plan or {}).get("changes", []):
            key = (c["group"], c["kind"], c["namespace"] or "", c["name"])
            changes[delivered.get(key, key)] = c
        refused = False
        for key in sorted(keys):
            entry = changes.get(key)
            planned = planned_action(entry, engine) if entry else "unchanged"
            if entry and entry["engines"].get(engine, {}).get("action") == "refused":
                refused = True
            did = observed(before, after, key)
            if did == "absent" and planned in ("delete", "unchanged"):
                did = planned
            if planned == "kept" and did in ("change", "unchanged"):
                did = "kept"  # left in the cluster: the same object (its UID), whatever its
                # engine's labels or field managers now say
            result.rows.append(Row(result.step, env, show(key), planned, did))
        outcome = result.outcomes[env]
        expected_ok = not refused
        result.rows.append(
            Row(
                result.step,
                env,
                f"{engine} reports",
                "success" if expected_ok else "failure",
                "success" if outcome.ok else f"failure: {_brief(outcome.detail)}",
            )
        )
        if plan:
            planned_restarts = {_job(j) for j in plan["restartedJobsByEngine"].get(engine, [])}
            planned_stops = {_job(j) for j in plan["stoppedJobs"]}
        else:
            planned_restarts, planned_stops = set(), set()
        env_namespaces = {k[2] for k in keys}
        seen_restarts = {j for j in restarted(before, after) if j[0] in env_namespaces}
        seen_stops = {j for j in stopped(before, after) if j[0] in env_namespaces}
        # A custom resource's run (operator mode) is its object: re-created, it runs again.
        for key in keys:
            job = (key[2], key[3])
            if key[0] in OPERATOR_GROUPS and job not in before.pods:
                did = observed(before, after, key)
                if did == "replace":
                    seen_restarts.add(job)
                elif did == "delete":
                    seen_stops.add(job)
        for job in sorted(planned_restarts | seen_restarts):
            result.rows.append(Row(
                result.step, env, f"run of {job[0]}/{job[1]}",
                "restarts" if job in planned_restarts else "keeps running",
                "restarts" if job in seen_restarts else "keeps running",
            ))  # fmt: skip
        for job in sorted(planned_stops | seen_stops):
            result.rows.append(Row(
                result.step, env, f"run of {job[0]}/{job[1]}",
                "stops" if job in planned_stops else "keeps running",
                "stops" if job in seen_stops else "keeps running",
            ))  # fmt: skip

    def table(self) -> str:
        lines = [f"{'step':<10} {'env':<9} {'object':<60} {'plan':<14} engine did"]
        for result in self.results:
            for row in result.rows:
                if row.ok and row.planned == "unchanged":
                    continue
                mark = " " if row.ok else "!"
                lines.append(
                    f"{mark}{row.step:<9} {row.env:<9} {row.what:<60} {row.planned:<14} {row.did}"
                )
        return "\n".join(lines)

    def mismatches(self) -> list[Row]:
        return [r for res in self.results for r in res.mismatches]
