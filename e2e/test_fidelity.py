"""Fidelity as a differential test (issue 26): kubetrain's native mode against what the real
operators create from kubetrain's operator-mode render of the same job documents.

Every stack with jobs an operator reconciles is rendered in both modes (harness/fidelity.py):
the golden cases (tests/cases), the example stacks (stacks/Pulumi.*.yaml) and the tier's own
stacks (e2e/fidelity/: every Kubeflow Trainer v2.3.0 ClusterTrainingRuntime, suspend and
resume, MPI variants, gang scheduling, Kueue). Each job goes to the world that runs it as
kubetrain means it: gang-scheduled jobs (a PodGroup in kubetrain's native render) to operators
started with that gang scheduler, the rest to the operators without one. Every difference
fails the test, except the tolerances of harness/fidelity.py (docs/fidelity.md, "The
differential test"), each of which must be needed by some job (test_every_tolerance_is_pinned).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import start_cluster
from harness import fidelity, migration, operators
from harness.observe import Key, key_of
from harness.project import KUBETRAIN
from harness.tools import REPO

E2E = Path(__file__).resolve().parent
UPSTREAM_RUNTIMES = REPO.parent / "shared" / "upstream" / "trainer-v2.3.0-runtimes"
#: Golden cases whose jobs no operator here runs (EDL's TrainingJob, FfDL's Learner).
NO_OPERATOR = {"trainingjob", "trainingjob-operator", "learner", "gang-kinds"}

#: What kubetrain refuses in native mode although the operator runs it, each with its reason
#: (docs/fidelity.md): the job is compared in neither mode. Each must be met by some stack.
REFUSED_NATIVELY: dict[str, str] = {
    "native mode has no PyTorchJob to scale": "the training operator scales a PyTorchJob with "
    "elasticPolicy.metrics by a HorizontalPodAutoscaler on the PyTorchJob's scale subresource; "
    "natively there is no PyTorchJob to scale",
    "a suspended job needs a controller to resume it": "bare pods (nativeWorkload pod, what "
    "the training operator creates) cannot be suspended; a suspended job runs natively as "
    "suspended Jobs or a JobSet (nativeWorkload job or jobset), which no operator creates",
    "needs Volcano's job controller": "a Volcano Job's framework plugins (mpi, tensorflow, "
    "pytorch, ...), volumes, dependsOn and partitionPolicy are the controller's work while the "
    "job runs, which no rendered object can do",
    "cannot be rendered for GitOps in native mode": "runPolicy.ttlSecondsAfterFinished: the "
    "operator deletes a finished job's objects, which Flux or Argo CD would re-create, running "
    "the training again (Pulumi mode renders it)",
}

#: The worlds: the gang scheduler the training and MPI operators are started with (a PodGroup
#: per job). Every world runs every operator on one control plane; going to the next world
#: restarts only those two with its scheduler (the other operators keep running).
WORLDS: dict[str, str] = {
    "plain": "",
    "volcano": "volcano",
    "scheduler-plugins": "scheduler-plugins-scheduler",
}
POD_GROUP_WORLD = {"scheduling.volcano.sh": "volcano", "scheduling.x-k8s.io": "scheduler-plugins"}
assert set(POD_GROUP_WORLD.values()) == set(WORLDS) - {"plain"}


# -- the stacks ------------------------------------------------------------------------------
def _sources() -> list[tuple[str, Path, str]]:
    """(name, stack file, kind of project): golden cases, example stacks, the tier's own."""
    out = []
    for case in sorted((REPO / "tests" / "cases").iterdir()):
        if case.is_dir() and case.name not in NO_OPERATOR:
            out.append((f"case-{case.name}", case / f"Pulumi.{case.name}.yaml", "case"))
    for env in ("dev", "staging", "prod"):
        out.append((f"stack-{env}", REPO / "stacks" / f"Pulumi.{env}.yaml", "repo"))
    for file in sorted((E2E / "fidelity").glob("Pulumi.*.yaml")):
        out.append((f"e2e-{file.name.split('.')[1]}", file, "case"))
    return out


def _project(kind: str, stack: Path, folder: Path) -> Path:
    """A project holding `stack` (as Pulumi.<name>.yaml at its top) and the repository's
    example job files, as the golden test makes one."""
    shutil.rmtree(folder, ignore_errors=True)
    if kind == "case":
        shutil.copytree(stack.parent, folder, ignore=shutil.ignore_patterns("expected"))
        for examples in sorted((REPO / "stacks").glob("*-examples")):
            shutil.copytree(examples, folder / "stacks" / examples.name, dirs_exist_ok=True)
    else:
        folder.mkdir(parents=True)
        shutil.copytree(REPO / "stacks", folder / "stacks",
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        shutil.copyfile(stack, folder / stack.name)
    (folder / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    return folder / stack.name


_MISSING_SA = re.compile(r"ServiceAccount (\S+)/(\S+) is neither in the output nor declared")
_ERROR = re.compile(r"^\S+?:\d+: config\.kubetrain:jobs\[(\d+)\][^:]*: (?!warning:)(.*)$")


def _render(stack: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBETRAIN, "render", "--config", stack.name, "--stdout"],
        cwd=stack.parent, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _runtimes_by_spec(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Kubeflow's runtimes declared by name only (the trainer installs them) get their spec
    from Kubeflow's v2.3.0 files (read in place), which native mode builds from; those
    runtimes, for the cluster (the release installs all but torch-distributed-with-cache)."""
    external = config.get("kubetrain:external") or {}
    upstream = {}
    for file in sorted(UPSTREAM_RUNTIMES.glob("*.yaml")):
        doc = yaml.safe_load(file.read_text())
        upstream[doc["metadata"]["name"]] = doc
    out = []
    for runtime in external.get("trainingRuntimes") or []:
        if set(runtime) <= {"name", "kind"} and runtime["name"] in upstream:
            runtime["spec"] = upstream[runtime["name"]]["spec"]
            out.append(upstream[runtime["name"]])
    return out


@dataclass
class Prepared:
    name: str
    config: dict[str, Any]
    operator: list[dict[str, Any]]
    native: list[dict[str, Any]]
    refused: list[tuple[str, str]] = field(default_factory=list)  # (job, message)
    routes: dict[tuple[str, str], str] = field(default_factory=dict)  # job -> world
    #: Both renders with every job resumed (suspend: false), for a stack Pulumi.suspend-*.
    resumed: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None


def _resume(job: dict[str, Any]) -> dict[str, Any]:
    """`job` with suspend: false (a TrainJob's spec.suspend, else runPolicy.suspend)."""
    job = yaml.safe_load(yaml.safe_dump(job))
    spec = job["spec"]
    (spec if job["kind"] == "TrainJob" else spec.setdefault("runPolicy", {}))["suspend"] = False
    return job


def _resumed(name: str, folder: Path, stack: Path) -> tuple[list[dict[str, Any]], ...]:
    out = []
    for mode in ("operator", "native"):
        data = yaml.safe_load(stack.read_text())
        jobs = data["config"]["kubetrain:jobs"]
        data["config"]["kubetrain:jobs"] = [fidelity.with_mode(_resume(j), mode) for j in jobs]
        file = folder / f"Pulumi.{name}-{mode}-resumed.yaml"
        file.write_text(yaml.safe_dump(data, sort_keys=False))
        result = _render(file)
        assert result.returncode == 0, f"{name} resumed, {mode} mode: {result.stderr}"
        out.append(fidelity.stream(result.stdout))
    return out[0], out[1]


def prepare(name: str, stack: Path, kind: str, tmp: Path) -> Prepared:
    """Both renders of one stack, kubetrain's native refusals taken out, and each job's world."""
    file = _project(kind, stack, tmp / name)
    folder = file.parent
    op_file = fidelity.mode_stack(file, folder, "operator", f"{name}-operator")
    op = _render(op_file)
    assert op.returncode == 0, f"{name}: operator mode: {op.stderr}"
    data = yaml.safe_load(fidelity.mode_stack(file, folder, "native", f"{name}-native").read_text())
    config = data["config"]
    runtimes = _runtimes_by_spec(config)
    # Native mode takes the MPI key pair from a secret store (an operator generates it).
    config.setdefault("kubetrain:secretStore", {"kind": "ClusterSecretStore", "name": "vault"})
    refused: list[tuple[str, str]] = []
    for _ in range(10):
        nat_file = folder / f"Pulumi.{name}-native.yaml"
        nat_file.write_text(yaml.safe_dump(data, sort_keys=False))
        nat = _render(nat_file)
        if nat.returncode == 0:
            break
        bad: dict[int, str] = {}
        # A ServiceAccount a runtime patch names (the operator-mode render cannot check it):
        # declared, and made for both sides as the platform team would.
        accounts = set(_MISSING_SA.findall(nat.stderr))
        if accounts:
            external = config.setdefault("kubetrain:external", {})
            have = external.setdefault("serviceAccounts", [])
            have += sorted(f"{ns}/{sa}" for ns, sa in accounts if f"{ns}/{sa}" not in have)
            continue
        for line in nat.stderr.splitlines():
            m = _ERROR.match(line)
            if m:
                bad.setdefault(int(m.group(1)), m.group(2))
        assert bad, f"{name}: native mode: {nat.stderr}"
        jobs = config["kubetrain:jobs"]
        for index in sorted(bad, reverse=True):
            job = jobs.pop(index)
            refused.append((f"{job['kind']} {job['metadata']['name']}", bad[index]))
    else:
        raise AssertionError(f"{name}: native mode never rendered")
    native = fidelity.stream(nat.stdout)
    operator = fidelity.stream(op.stdout)
    kept = {(j["kind"], j["metadata"]["name"]) for j in config["kubetrain:jobs"]}
    operator = runtimes + [o for o in operator if fidelity.gk(o) not in fidelity.CUSTOM
                           or (o["kind"], o["metadata"]["name"]) in kept]  # fmt: skip
    prepared = Prepared(name, config, operator, native, refused)
    if stack.name.startswith("Pulumi.suspend-"):
        op_resumed, nat_resumed = _resumed(name, folder, nat_file)
        prepared.resumed = (runtimes + op_resumed, nat_resumed)
    default_ns = str(config.get("kubetrain:namespace", "default"))
    jobs = {(o["metadata"].get("namespace", default_ns), o["metadata"]["name"]): o["kind"]
            for o in operator if fidelity.gk(o) in fidelity.CUSTOM}  # fmt: skip
    for job in jobs:
        prepared.routes[job] = "plain"
    for obj in native:
        group, kind = fidelity.gk(obj)
        if kind == "PodGroup" and group in POD_GROUP_WORLD:
            job = fidelity.job_of(obj, jobs)
            if job and jobs[job] != "TrainJob":
                prepared.routes[job] = POD_GROUP_WORLD[group]
    return prepared


@pytest.fixture(scope="session")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> list[Prepared]:
    tmp = tmp_path_factory.mktemp("fidelity-projects")
    return [prepare(name, file, kind, tmp) for name, file, kind in _sources()]


# -- the worlds ------------------------------------------------------------------------------
OUTCOMES: dict[str, list[fidelity.Outcome]] = {}


class Worlds:
    """The worlds of this module on one control plane and its operators (stopped by PID at
    the end): asking for another world restarts the gang-scheduling operators with its
    scheduler."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.name = ""
        self.cluster: Any = None
        self.ops: list[operators.Operator] = []
        self.volcano: operators.VolcanoEnqueue | None = None

    def get(self, name: str) -> Any:
        gang = WORLDS[name]
        if self.cluster is None:
            cluster = start_cluster("fidelity", self.tmp, own_crds=False)
            try:
                every = tuple(operators.ALL)
                folder = self.tmp / f"operators-{name}"
                self.ops = operators.start_all(cluster, folder, every, gang_scheduler=gang)
            except BaseException:
                cluster.stop()
                raise
            self.name, self.cluster = name, cluster
        elif name != self.name:
            restarted = [op for op in self.ops if op.name in operators.GANG]
            operators.stop_all(restarted)
            self.ops = [op for op in self.ops if op not in restarted]
            self.name = ""
            self.ops += operators.start_all(self.cluster, self.tmp / f"operators-{name}",
                                            operators.GANG, gang_scheduler=gang)  # fmt: skip
            self.name = name
        if name == "volcano" and self.volcano is None:
            self.volcano = operators.VolcanoEnqueue(self.cluster).start()
        return self.cluster

    def stop(self) -> None:
        if self.volcano is not None:
            self.volcano.stop()
            assert not self.volcano.errors, self.volcano.errors
        operators.stop_all(self.ops)
        if self.cluster is not None:
            self.cluster.stop()
        self.name, self.cluster, self.ops, self.volcano = "", None, [], None


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worlds]:
    started = Worlds(tmp_path_factory.mktemp("worlds"))
    try:
        yield started
    finally:
        started.stop()


# -- kubetrain convert --compare against the controllers (issue 28) ---------------------------
#: What is converted: every v1 job of the dev stack (which holds every example of the
#: repository but pi.yaml), and the MPI Operator's pi example as a file.
CONVERTED: dict[str, list[str]] = {
    "stack dev": ["--stack", "dev"],
    "pi.yaml": ["stacks/mpi-operator-examples/pi.yaml"],
}
#: The workload kinds of a stack that are no part of a converted job's support (they would run
#: pods of their own beside it).
WORKLOADS = {"Pod", "Job", "JobSet", "StatefulSet", "Deployment", "DaemonSet", "ReplicaSet",
             "CronJob", "PodGroup"}  # fmt: skip


def _pods(cluster: Any, namespaces: set[str]) -> list[dict[str, Any]]:
    out = []
    for ns in sorted(namespaces):
        out += (cluster.get(f"/api/v1/namespaces/{ns}/pods") or {}).get("items", [])
    return out


def _await_pods(cluster: Any, namespaces: set[str], printed: list[dict[str, Any]],
                timeout: float = 120) -> dict[str, Any]:  # fmt: skip
    """The real pod of each printed view, once all are there (or `timeout` passed)."""
    deadline = time.monotonic() + timeout
    while True:
        found = migration.find(printed, _pods(cluster, namespaces))
        if len(found) == len(printed) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def _side_names(cluster: Any, ns: str, kind: str) -> dict[str, dict[str, Any]]:
    path = {"Service": "services", "ConfigMap": "configmaps"}[kind]
    items = (cluster.get(f"/api/v1/namespaces/{ns}/{path}") or {}).get("items", [])
    return {i["metadata"]["name"]: i for i in items}


def _job_checks(cluster: Any, comparison: dict[str, Any], side: str) -> list[str]:
    """The Services and the MPI hostfile convert printed for one side, against the cluster."""
    problems = []
    doc = comparison[side]["document"]
    ns, name = doc["metadata"].get("namespace", "default"), doc["metadata"]["name"]
    services = comparison["job"]["services"][side]
    printed = [] if services == "none" else [s.split(" (")[0] for s in services.split(", ")]
    have = _side_names(cluster, ns, "Service")
    problems += [f"{side} Service {ns}/{s} printed, not created" for s in printed
                 if s not in have]  # fmt: skip
    rendezvous = comparison["job"].get("rendezvous", {}).get(side, "")
    if str(rendezvous).startswith("hostfile: ") and rendezvous != "hostfile: none":
        files = []
        for cm_name, cm in sorted(_side_names(cluster, ns, "ConfigMap").items()):
            text = (cm.get("data") or {}).get("hostfile")
            if text is not None and cm_name.startswith(name):
                files.append(" ".join(x for x in str(text).splitlines() if x))
        if [f"hostfile: {f}" for f in files] != [rendezvous]:
            problems.append(f"{side} hostfile printed {rendezvous!r}, created {files}")
    return problems


def _convert(folder: Path, args: list[str]) -> dict[str, Any]:
    result = subprocess.run(
        [KUBETRAIN, "convert", *args, "--compare", "--output", "json", "--skip-refused"],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, f"kubetrain convert {' '.join(args)}: {result.stderr}"
    return json.loads(result.stdout)


def test_convert_compare_prints_what_the_controllers_create(
    stacks: list[Prepared], worlds: Worlds, tmp_path: Path
) -> None:
    """For every converted example, the real training operator or MPI Operator runs the v1
    job and the real trainer (with the JobSet and Job controllers) the TrainJob, in turn; the
    pods each created are what `kubetrain convert --compare` printed, per replica (harness/
    migration.py), with the Services and hostfiles it printed."""
    cluster = worlds.get("plain")
    dev = {s.name: s for s in stacks}["stack-dev"]
    folder = _project("repo", REPO / "stacks" / "Pulumi.dev.yaml", tmp_path / "convert").parent
    comparisons = [c for args in CONVERTED.values() for c in _convert(folder, args)["comparisons"]]
    kinds = {c["v1"]["document"]["kind"] for c in comparisons}
    assert {"PyTorchJob", "JAXJob", "TFJob", "MPIJob"} <= kinds, kinds
    default_ns = str(dev.config.get("kubetrain:namespace", "default"))
    support = fidelity._external(dev.config, default_ns) + [
        o for o in dev.operator if fidelity.gk(o) not in fidelity.CUSTOM
        and o.get("kind") not in WORKLOADS]  # fmt: skip
    docs = {side: [c[side]["document"] for c in comparisons] for side in ("v1", "v2")}
    runtimes = [c["v2"]["runtimeDocument"] for c in comparisons if c["v2"].get("runtimeDocument")]
    namespaces = {d["metadata"].get("namespace", "default") for d in docs["v1"] + docs["v2"]}
    namespaces |= {o["metadata"]["name"] for o in support if o["kind"] == "Namespace"}
    fidelity.apply(cluster, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                             for ns in sorted(namespaces)])  # fmt: skip
    fidelity.wait_default_sa(cluster, namespaces)
    rest = [o for o in support if o["kind"] != "Namespace"]
    fidelity.apply(cluster, [o for o in rest if o["kind"] == "CustomResourceDefinition"])
    fidelity.apply(cluster, [o for o in rest if o["kind"] != "CustomResourceDefinition"])
    before = set(fidelity.listing(cluster, namespaces))
    problems: list[str] = []
    compared = 0
    try:
        for side, applied in (("v1", docs["v1"]), ("v2", runtimes + docs["v2"])):
            fidelity.apply(cluster, applied)
            printed = [v for c in comparisons for v in c[side]["pods"]]
            found = _await_pods(cluster, namespaces, printed)
            for c in comparisons:
                title = c[side]["title"]
                ns = c[side]["document"]["metadata"].get("namespace", "default")
                for view in c[side]["pods"]:
                    pod = found.get(view["name"])
                    if pod is None:
                        problems.append(f"{title}: {view['replica']}: no pod {view['name']}")
                        continue
                    compared += 1
                    kind = c[side]["document"]["kind"]
                    for path, mine, real in migration.differences(cluster, ns, view, pod, kind):
                        problems.append(
                            f"{title}: {view['replica']}: {path}: printed "
                            f"{fidelity._short(mine)}, created {fidelity._short(real)}"
                        )
                problems += [f"{title}: {p}" for p in _job_checks(cluster, c, side)]
            fidelity.delete(cluster, applied)
            gone = set(fidelity.listing(cluster, namespaces)) - before
            fidelity.wait_gone(cluster, gone | {key_of(d) for d in applied})
    finally:
        fidelity.delete(cluster, docs["v1"] + docs["v2"] + runtimes)
        fidelity.delete(cluster, [o for o in rest if (o.get("metadata") or {}).get("namespace")])
    views = sum(len(c[side]["pods"]) for c in comparisons for side in ("v1", "v2"))
    print(f"\nconvert --compare: {len(comparisons)} jobs, {compared} of {views} pods compared")
    assert compared, "no pod compared"
    assert not problems, "convert --compare and the controllers differ:\n" + "\n".join(problems)


@pytest.mark.parametrize("world", list(WORLDS))
def test_native_mode_creates_what_the_operators_create(
    world: str, stacks: list[Prepared], worlds: Worlds
) -> None:
    """One world (a control plane and its operators), every job routed to it."""
    cluster = worlds.get(world)
    outcomes = OUTCOMES.setdefault(world, [])
    sent: list[Key] = []
    for stack in stacks:
        jobs = {job for job, route in stack.routes.items() if route == world}
        if not jobs:
            continue
        outcome = fidelity.run_stack(cluster, stack.name, stack.config, stack.operator,
                                     stack.native, jobs, resumed=stack.resumed)  # fmt: skip
        outcomes.append(outcome)
        sent += outcome.jobs
        # Every job sent was compared: its operator created something kubetrain renders.
        assert jobs <= outcome.compared_jobs, (
            f"{stack.name}: jobs with nothing compared: {jobs - outcome.compared_jobs}"
        )
    assert sent, f"no job runs in world {world}"
    problems = [f"{o.stack}: {p}" for o in outcomes for p in o.problems()]
    print(f"\n{world}: {len(sent)} jobs; " + summary(outcomes))
    if os.environ.get("KUBETRAIN_E2E_REPORT"):  # the figures of a closing note
        report = Path(os.environ["KUBETRAIN_E2E_REPORT"])
        report.mkdir(parents=True, exist_ok=True)
        (report / f"fidelity-{world}.txt").write_text(
            f"{len(sent)} jobs; {summary(outcomes)}\n" + "\n".join(problems) + "\n"
        )
    assert not problems, f"{world}: native mode and the operators differ:\n" + "\n".join(problems)


def summary(outcomes: list[fidelity.Outcome]) -> str:
    fields: dict[str, int] = {}
    objects: dict[str, int] = {}
    for o in outcomes:
        for kind, n in o.fields.items():
            fields[kind] = fields.get(kind, 0) + n
        for kind, n in o.objects.items():
            objects[kind] = objects.get(kind, 0) + n
    return ", ".join(f"{k}: {objects[k]} objects, {fields[k]} fields" for k in sorted(fields))


def test_every_refusal_is_listed(stacks: list[Prepared]) -> None:
    """kubetrain's native refusals of jobs the operators run: each known, each met."""
    met = set()
    refusals = [(s.name, job, msg) for s in stacks for job, msg in s.refused]
    assert refusals, "no stack has a job native mode refuses: REFUSED_NATIVELY pins nothing"
    for stack, job, message in refusals:
        known = [k for k in REFUSED_NATIVELY if k in message]
        assert known, f"{stack}: {job} refused natively for an unlisted reason: {message}"
        met.update(known)
    assert met == set(REFUSED_NATIVELY), f"never met: {set(REFUSED_NATIVELY) - met}"


def test_every_tolerance_is_pinned() -> None:
    """Runs after the worlds' tests (file order): every tolerated difference was needed by a
    comparison (without it, more differences), and every ignored object was met."""
    assert set(OUTCOMES) == set(WORLDS), f"worlds not run: {set(WORLDS) - set(OUTCOMES)}"
    unused = [t.name for t in fidelity.TOLERANCES if not t.pinned]
    assert not unused, f"tolerances no comparison needed (stale, or a lost case): {unused}"
    unmet = [i.name for i in fidelity.IGNORED if not i.used and not i.transient]
    assert not unmet, f"ignored objects never met: {unmet}"
    # zero-replica-flap: the operator was seen to create and delete every such object.
    assert fidelity.ZERO_REPLICA_TYPES, "no stack has a replica type of replicas 0"
    flapping = {(ns, f"{job}-{rtype}-0") for ns, job, rtype in fidelity.ZERO_REPLICA_TYPES}
    assert flapping == fidelity.FLAPPED, (
        f"never seen created and deleted: {flapping - fidelity.FLAPPED}"
    )
    docs = (REPO / "docs" / "fidelity.md").read_text()
    for name in [t.name for t in fidelity.TOLERANCES] + [i.name for i in fidelity.IGNORED]:
        assert f"`{name}`" in docs, f"docs/fidelity.md does not list {name}"


def test_a_partial_gangs_sums_are_those_of_every_order_the_operator_may_take() -> None:
    """gang_sums, the mirror the random tolerance stands on, against sums worked out by hand:
    equal priorities give a sum per type left out, a higher priority fixes the order, and a
    container without requests counts its limits (AddResourceList)."""
    cpu = lambda n: {"resources": {"requests": {"cpu": str(n)}}}  # noqa: E731
    only_limits = {"resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}
    types = {
        "chief": fidelity.GangType(1, [cpu(4)]),
        "worker": fidelity.GangType(2, [cpu(2)]),
        "evaluator": fidelity.GangType(1, [only_limits]),
    }
    sums = fidelity.gang_sums(types, 3)
    half, gib = Fraction(1, 2), Fraction(2**30)

    def as_set(found: list[dict[str, Fraction]]) -> set[frozenset[tuple[str, Fraction]]]:
        assert len(found) == len({frozenset(s.items()) for s in found}), "a sum given twice"
        return {frozenset(s.items()) for s in found}

    assert as_set(sums) == as_set([
        {"cpu": 4 + 2 + half, "memory": gib},  # a worker left out
        {"cpu": Fraction(4 + 2 + 2)},  # the evaluator left out
        {"cpu": 2 + 2 + half, "memory": gib},  # the chief left out
    ])  # fmt: skip
    types["evaluator"].priority = 10  # first, then the chief and the workers in either order
    assert as_set(fidelity.gang_sums(types, 3)) == as_set([
        {"cpu": 4 + 2 + half, "memory": gib}, {"cpu": 2 + 2 + half, "memory": gib}
    ])  # fmt: skip
    types["chief"].priority = 20
    assert fidelity.gang_sums(types, 3) == [{"cpu": 4 + half + 2, "memory": gib}]
    # Requests given as {} are given (a Go map decoded from {} is not nil): no limits count.
    empty = {"resources": {"requests": {}, "limits": {"cpu": "1"}}}
    assert fidelity.gang_sums({"a": fidelity.GangType(2, [empty, cpu(1)])}, 1) == [{"cpu": 1}]
    # The tolerance rewrites a value among the sums, and leaves any other to differ.
    fidelity.PARTIAL_GANGS[("ns", "g")] = sums
    met_before = set(fidelity.UNORDERED_GANGS_MET)
    try:
        group = {"kind": "PodGroup", "metadata": {"namespace": "ns", "name": "g"}}
        among = {**group, "spec": {"minResources": {"cpu": "4500m", "memory": "1Gi"}}}
        other = {**group, "spec": {"minResources": {"cpu": "5", "memory": "1Gi"}}}
        assert fidelity._partial_gang(among, "operator")
        assert isinstance(among["spec"]["minResources"], str)
        assert ("ns", "g") in fidelity.UNORDERED_GANGS_MET
        assert not fidelity._partial_gang(other, "operator")
        assert other["spec"]["minResources"] == {"cpu": "5", "memory": "1Gi"}
    finally:
        del fidelity.PARTIAL_GANGS[("ns", "g")]
        fidelity.UNORDERED_GANGS_MET.intersection_update(met_before)


def _paths(node: Any, path: str = "") -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if not isinstance(node, dict):
        return out
    for key, sub in (node.get("properties") or {}).items():
        out[f"{path}.{key}"] = sub
        out |= _paths(sub, f"{path}.{key}")
    if isinstance(node.get("items"), dict):
        out |= _paths(node["items"], f"{path}[]")
    return out


def _inline(node: Any, root: dict[str, Any]) -> Any:
    """A pydantic schema with its local $refs inlined and optional anyOfs reduced."""
    if isinstance(node, list):
        return [_inline(n, root) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/"):
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _inline({**root["$defs"][ref.rsplit("/", 1)[1]], **rest}, root)
    options = [o for o in node.get("anyOf", ()) if o != {"type": "null"}]
    if len(options) == 1:
        return _inline({**options[0], **{k: v for k, v in node.items() if k != "anyOf"}}, root)
    return {k: _inline(v, root) for k, v in node.items()}


def test_the_jobset_model_is_a_part_of_the_jobset_the_trainer_pins() -> None:
    """Every field of kubetrain's JobSet model is one of the JobSet CRD of the version Kubeflow
    Trainer v2.3.0 pins (v0.12.0, the CRD beside the JobSet controller built from the trainer's
    module), with its enums and defaults (tests/ compares it with ../shared's v0.9.1)."""
    from kubetrain.validate.schemas import model_schema

    from harness import tools

    (crd,) = [d for d in yaml.safe_load_all(
        (tools.path("trainer") / "jobset-crds" / "jobset.x-k8s.io_jobsets.yaml").read_text())
        if d]  # fmt: skip
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    upstream = _paths(version["schema"]["openAPIV3Schema"])
    model = model_schema("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert model is not None
    mine = _paths(_inline(model, model))
    assert ".spec.volumeClaimPolicies" in mine and len(mine) > 15
    for path, node in mine.items():
        assert path in upstream, path
        for key in ("enum", "default"):
            if key in node:
                assert node[key] == upstream[path].get(key), (path, key)


def test_a_difference_fails_the_comparison() -> None:
    """The comparison sees a changed env value, a missing field and list order."""
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
           "spec": {"containers": [{"name": "c", "env": env}]}}  # fmt: skip
    other = yaml.safe_load(yaml.safe_dump(pod))
    other["spec"]["containers"][0]["env"].reverse()
    other["spec"]["hostname"] = "h"
    found = fidelity.compared(pod, other, fidelity.TOLERANCES)
    assert [p for p, _, _ in found] == [
        "spec.containers[0].env[0].name",
        "spec.containers[0].env[0].value",
        "spec.containers[0].env[1].name",
        "spec.containers[0].env[1].value",
        "spec.hostname",
    ]
    assert key_of(pod) == ("", "Pod", "n", "p")


def test_a_printed_pod_is_found_and_read_as_the_controllers_made_it() -> None:
    """The migration harness's own reading (no cluster): a Job's pod is found by its name up
    to the random suffix and its hostname, not by another index's; its env is resolved from
    the real pod's annotations and name; a printed view's spec keeps what it says."""
    job_pod = {
        "metadata": {"name": "j-node-0-1-x7k2q", "namespace": "n",
                     "annotations": {"batch.kubernetes.io/job-completion-index": "1"},
                     "ownerReferences": [{"kind": "Job", "name": "j-node-0", "controller": True}]},
        "spec": {"hostname": "j-node-0-1", "containers": [{"name": "node"}]},
    }  # fmt: skip
    other = yaml.safe_load(yaml.safe_dump(job_pod))
    other["metadata"]["name"] = "j-node-0-0-a1b2c"
    other["spec"]["hostname"] = "j-node-0-0"
    operator_pod = {"metadata": {"name": "j-master-0"}, "spec": {}}
    printed = [
        {"name": "j-node-0-1-<random>", "hostname": "j-node-0-1"},
        {"name": "j-master-0", "hostname": None},
        {"name": "j-worker-0", "hostname": None},
    ]
    found = migration.find(printed, [other, job_pod, operator_pod])
    assert found == {"j-node-0-1-<random>": job_pod, "j-master-0": operator_pod}
    path = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    index = {"fieldRef": {"fieldPath": path}}
    assert migration.resolve(job_pod, {"name": "I", "valueFrom": index}) == "1"
    name = {"fieldRef": {"fieldPath": "metadata.name"}}
    assert migration.resolve(job_pod, {"name": "N", "valueFrom": name}) == "j-node-0-1-<random>"
    assert migration.resolve(operator_pod, {"name": "N", "valueFrom": name}) == "j-master-0"
    assert migration.owner_of(job_pod) == ("Job", "j-node-0")
    view = {"restartPolicy": "Never", "hostname": None, "volumes": [],
            "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}],
                            "envResolved": {"A": "1"}, "ports": []}]}  # fmt: skip
    assert migration.printed_spec(view) == {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}],
    }
