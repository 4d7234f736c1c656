"""Environments mapped to clusters, for real (issue 27, `kubetrain:clusters`): a hub running
Flux's controllers, and two more clusters it delivers to, each its own etcd and kube-apiserver
on loopback.

The project has two environments: `prod` names no cluster (Flux on the hub applies it there,
as a one-cluster environment), `dev` is a fleet of two clusters, `east` and `west`, reached
through `kubeConfig.secretRef` (a Secret on the hub holding each cluster's kubeconfig), with
per-cluster overrides (a node selector on east; the GPU resource name and a patched quota on
west). The real kustomize-controller applies each tree where kubetrain says it goes: each
cluster ends up with exactly the objects of its `rendered/<env>/<cluster>` (their fields as
rendered), the hub with prod's and none of dev's, and the two clusters with different objects
where the overrides say so. Retiring dev (deleting its Kustomizations) removes what Flux
applied from both clusters and leaves prod's.

On the same three control planes, Kueue v0.19.2 runs on each for MultiKueue
(`kubetrain:multiKueue`): a third environment, `mk`, on the hub as the manager, dispatches its
queued JobSet to the two clusters as workers; only east has quota for it, so the job runs
there, as `kubetrain plan` says it may (on one of the workers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from conftest import start_cluster
from harness import operators, tools
from harness.cluster import ControlPlane
from harness.engines import Flux, commit
from harness.gitserver import GitServer
from harness.observe import discovery, key_of, show
from harness.project import Project

sys.path.insert(0, str(tools.REPO / "tests"))
from fleet_project import JOB, QUEUE, expand_template

CLUSTERS = ("east", "west")


def _stack(git_url: str, clusters: list[dict[str, Any]] | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "kubetrain:namespace": "ml",
        "kubetrain:nativeWorkload": "jobset",
        "kubetrain:jobFiles": ["stacks/jobs/*.yaml"],
        "kubetrain:manifestFiles": ["stacks/queue.yaml"],
        "kubetrain:gitops": {"repoURL": git_url, "branch": "main", "engines": ["flux", "argocd"]},
    }
    if clusters:
        config["kubetrain:clusters"] = clusters
    return {"config": config}


def _fleet(spokes: dict[str, ControlPlane]) -> list[dict[str, Any]]:
    east, west = spokes["east"], spokes["west"]
    return [
        {
            "name": "east",
            "server": east.server,
            "kubeConfig": {"secretRef": {"name": "east-kubeconfig", "key": "config"}},
            "nodeSelector": {"topology.kubernetes.io/region": "us-east-1"},
        },
        {
            "name": "west",
            "server": west.server,
            "kubeConfig": {"secretRef": {"name": "west-kubeconfig", "key": "config"}},
            "gpuResource": "amd.com/gpu",
            "patches": [{
                "target": {"kind": "ClusterQueue", "name": "team"},
                "patch": [{"op": "replace", "value": 4,
                           "path": "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota"}],
            }],
        },
    ]  # fmt: skip


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("fleet")
    started: list[ControlPlane] = []
    git: GitServer | None = None
    flux: Flux | None = None
    try:
        for name in ("hub", *CLUSTERS):
            started.append(start_cluster(f"fleet-{name}", tmp, own_crds=False))
        hub, spokes = started[0], dict(zip(CLUSTERS, started[1:], strict=True))
        source = tmp / "source"
        (source / "stacks" / "jobs").mkdir(parents=True)
        (source / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
        (source / "stacks" / "jobs" / "bert.yaml").write_text(JOB)
        (source / "stacks" / "queue.yaml").write_text(QUEUE)
        repos = tmp / "repos"
        git = GitServer(repos).start()
        project = Project(repos / "project", source=source)
        project.write_stack("prod", _stack(git.url("project"), None))
        project.write_stack("dev", _stack(git.url("project"), _fleet(spokes)))
        project.render("dev", "prod")
        revision = commit(project, "two environments: prod on the hub, dev on a fleet of two")
        flux = Flux(hub, project, git.url("project"), tmp / "flux").start()
        for name, spoke in spokes.items():
            hub.kubectl("create", "secret", "generic", f"{name}-kubeconfig", "-n", flux.namespace,
                        f"--from-file=config={spoke.kubeconfig}")  # fmt: skip
        yield {"hub": hub, "spokes": spokes, "project": project, "flux": flux,
               "revision": revision}  # fmt: skip
    finally:
        if flux is not None:
            flux.stop()
        if git is not None:
            git.stop()
        for cluster in reversed(started):
            cluster.stop()


def _tree(project: Project, *parts: str) -> list[dict[str, Any]]:
    folder = project.folder.joinpath("rendered", *parts)
    out = []
    for file in sorted(folder.rglob("*.yaml")):
        if file.name != "kustomization.yaml":
            out += [d for d in yaml.safe_load_all(file.read_text()) if isinstance(d, dict)]
    return out


def _live(cluster: ControlPlane, obj: dict[str, Any]) -> dict[str, Any] | None:
    url = discovery(cluster).url(key_of(obj))
    return cluster.get(url) if url else None


def _missing(rendered: Any, live: Any, path: str = "") -> list[str]:
    """Where a live object lacks a field of the rendered one, or holds another value (what
    the server adds, defaults and Flux's labels, is no difference)."""
    if isinstance(rendered, dict):
        if not isinstance(live, dict):
            return [f"{path}: {json.dumps(rendered)[:80]} != {json.dumps(live)[:80]}"]
        out = []
        for key, value in rendered.items():
            out += _missing(value, live.get(key), f"{path}.{key}" if path else key)
        return out
    if isinstance(rendered, list):
        if not isinstance(live, list) or len(live) != len(rendered):
            return [f"{path}: {json.dumps(rendered)[:80]} != {json.dumps(live)[:80]}"]
        return [m for i, (r, lv) in enumerate(zip(rendered, live, strict=True))
                for m in _missing(r, lv, f"{path}[{i}]")]  # fmt: skip
    if rendered != live and str(rendered) != str(live):
        return [f"{path}: {rendered!r} != {live!r}"]
    return []


def test_each_cluster_gets_its_own_tree_and_retiring_a_fleet_empties_it(fleet) -> None:
    hub, spokes, project, flux = fleet["hub"], fleet["spokes"], fleet["project"], fleet["flux"]
    for env in ("prod", "dev"):
        outcome = flux.deliver(env, fleet["revision"])
        assert outcome.ok, f"{env}: {outcome.detail}"
    trees = {name: _tree(project, "dev", name) for name in CLUSTERS}
    trees["hub"] = _tree(project, "prod")
    targets = {"hub": hub, **spokes}
    assert all(trees.values()), {k: len(v) for k, v in trees.items()}
    problems = []
    for name, objects in trees.items():
        for obj in objects:
            live = _live(targets[name], obj)
            if live is None:
                problems.append(f"{name}: {show(key_of(obj))} not applied")
                continue
            problems += [f"{name}: {show(key_of(obj))}: {m}" for m in _missing(obj, live)]
    # What one cluster of the fleet gets is nowhere else: the trees differ by their overrides,
    # and the hub holds none of dev's namespaced objects (it runs only prod's, in `ml` too).
    east, west = ({key_of(o): o for o in trees[n]} for n in CLUSTERS)
    assert set(east) == set(west)
    differing = sorted(show(k) for k in east if east[k] != west[k])
    assert any("ClusterQueue" in k for k in differing), differing
    assert any("JobSet" in k for k in differing), differing
    for key, obj in west.items():
        live = _live(spokes["east"], obj)
        if east[key] != obj and live is not None:
            assert _missing(obj, live), f"east holds west's {show(key)}"
    assert not problems, "\n".join(problems)

    # Retiring the fleet: deleting dev's Kustomizations prunes both clusters, not the hub.
    assert flux.retire("dev").ok
    for name in CLUSTERS:
        left = [show(key_of(o)) for o in trees[name]
                if o["kind"] not in ("Namespace", "CustomResourceDefinition")
                and _live(spokes[name], o) is not None]  # fmt: skip
        assert not left, f"{name} after retiring dev: {left}"
    still = [show(key_of(o)) for o in trees["hub"] if _live(hub, o) is None]
    assert not still, f"retiring dev removed prod's {still}"


def test_a_field_the_cluster_lacks_or_holds_otherwise_is_found() -> None:
    rendered = {"spec": {"a": 1, "b": [{"c": "x"}], "q": 16}}
    live = {"spec": {"a": 1, "b": [{"c": "x", "d": "default"}], "q": "16", "extra": True}}
    assert _missing(rendered, live) == []
    assert _missing(rendered, {"spec": {"a": 2, "b": [], "q": 16}}) == [
        "spec.a: 1 != 2",
        'spec.b: [{"c": "x"}] != []',
    ]


# -- MultiKueue ----------------------------------------------------------------------------
def _mk_job() -> str:
    """The fleet's PyTorchJob as `gpt`, queued to `dispatch`, a Master and a Worker of one CPU."""
    job = yaml.safe_load(JOB)
    job["metadata"] = {"name": "gpt", "labels": {"kueue.x-k8s.io/queue-name": "dispatch"}}
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        replica["replicas"] = 1
        for container in replica["template"]["spec"]["containers"]:
            container["resources"] = {"requests": {"cpu": "1"}}
    return yaml.safe_dump(job, sort_keys=False)


def _mk_queues(cpu: int) -> list[dict[str, Any]]:
    """The queues of the MultiKueue environment: a flavor, a ClusterQueue `dispatch` of `cpu`
    CPUs and `cpu` GiB of memory (a PyTorchJob's workers ask for the init container's memory),
    a LocalQueue `dispatch` in namespace mk."""
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
         "metadata": {"name": "mk-flavor"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
         "metadata": {"name": "dispatch"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{
             "coveredResources": ["cpu", "memory"],
             "flavors": [{"name": "mk-flavor",
                          "resources": [{"name": "cpu", "nominalQuota": cpu},
                                        {"name": "memory", "nominalQuota": f"{cpu}Gi"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
         "metadata": {"name": "dispatch", "namespace": "mk"},
         "spec": {"clusterQueue": "dispatch"}},
    ]  # fmt: skip


def _jobsets(cluster: ControlPlane) -> list[dict[str, Any]]:
    body = cluster.get("/apis/jobset.x-k8s.io/v1alpha2/namespaces/mk/jobsets") or {}
    return body.get("items", [])


def test_multikueue_runs_a_queued_job_on_the_worker_with_quota(fleet, tmp_path) -> None:
    hub, spokes, project = fleet["hub"], fleet["spokes"], fleet["project"]
    started: list[operators.Operator] = []
    try:
        for name, cluster in (("hub", hub), *spokes.items()):
            started += operators.start_all(cluster, tmp_path / name, ("kueue",))
        # The workers, as their platform team sets them up: the same queues, quota on east only.
        for name, cpu in (("east", 16), ("west", 0)):
            spokes[name].kubectl("create", "namespace", "mk")
            objects = _mk_queues(cpu)
            spokes[name].kubectl("apply", "--server-side", "-f", "-",
                                 input=yaml.safe_dump_all(objects))  # fmt: skip
            hub.kubectl("create", "secret", "generic", f"mk-{name}", "-n", "kueue-system",
                        f"--from-file=kubeconfig={spokes[name].kubeconfig}")  # fmt: skip
        (project.folder / "stacks" / "mk").mkdir(exist_ok=True)
        (project.folder / "stacks" / "mk" / "gpt.yaml").write_text(_mk_job())
        queues = yaml.safe_dump_all(_mk_queues(8))
        (project.folder / "stacks" / "mk" / "queues.yaml").write_text(queues)
        stack = {"config": {
            "kubetrain:namespace": "mk",
            "kubetrain:mode": "native",
            "kubetrain:nativeWorkload": "jobset",
            "kubetrain:jobFiles": ["stacks/mk/gpt.yaml"],
            "kubetrain:manifestFiles": ["stacks/mk/queues.yaml"],
            "kubetrain:multiKueue": {"clusterQueues": ["dispatch"], "workers": [
                {"name": "east", "kubeConfigSecret": "mk-east"},
                {"name": "west", "kubeConfigSecret": "mk-west"}]},
        }}  # fmt: skip
        project.write_stack("mk", stack)
        project.render("mk")
        (env,) = project.plan("mk").values()
        (use,) = env["queues"]["flavors"]
        assert use["multiKueueWorkers"] == ["east", "west"], use
        rendered = project.rendered("mk")
        (jobset,) = [o for o in rendered if o["kind"] == "JobSet"]
        assert jobset["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
        hub.kubectl("apply", "--server-side", "-k", str(project.folder / "rendered" / "mk"))

        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if _jobsets(spokes["east"]):
                break
            time.sleep(1)
        east, west = _jobsets(spokes["east"]), _jobsets(spokes["west"])
        kinds = "workloads,admissionchecks,multikueueclusters"
        state = hub.kubectl("get", kinds, "-A", "-o", "yaml", check=False).stdout
        assert [j["metadata"]["name"] for j in east] == ["gpt"], (
            f"MultiKueue did not run the job on east:\n{state[-4000:]}"
        )
        assert west == [], "west has no quota for the job, yet holds it"

        # The copy on the worker is the manager's JobSet, and the manager's own stays there,
        # managed by MultiKueue (no JobSet controller on the hub would run it anyway).
        def images(js: dict[str, Any]) -> list[tuple[str, int, list[str]]]:
            return [(r["name"], r.get("replicas", 1),
                     [c["image"] for c in r["template"]["spec"]["template"]["spec"]["containers"]])
                    for r in js["spec"]["replicatedJobs"]]  # fmt: skip

        assert images(east[0]) == images(jobset)
        (manager,) = _jobsets(hub)
        assert manager["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    finally:
        operators.stop_all(started)


# -- Argo CD -------------------------------------------------------------------------------
def test_each_application_of_the_application_set_syncs_its_cluster(fleet, tmp_path) -> None:
    """dev's ApplicationSet, expanded as its list generator does (tests/fleet_project.py: no
    ApplicationSet controller runs here), is an Application per cluster whose destination is
    that cluster; Argo CD's sync engine (cmd/argocd-sync) syncs each into its own cluster's
    API server, which then holds exactly that cluster's tree."""
    spokes, project = fleet["spokes"], fleet["project"]
    folder = project.folder / "rendered" / "clusters" / "dev" / "argocd"
    (appset,) = [d for f in sorted(folder.glob("applicationset-*.yaml"))
                 for d in yaml.safe_load_all(f.read_text()) if d]  # fmt: skip
    (generator,) = appset["spec"]["generators"]
    elements = generator["list"]["elements"]
    assert [e["cluster"] for e in elements] == list(CLUSTERS)
    for element in elements:
        name = element["cluster"]
        app = expand_template(appset["spec"]["template"], element)
        assert app["spec"]["destination"]["server"] == spokes[name].server
        app = {"apiVersion": appset["apiVersion"], "kind": "Application", **app}
        file = tmp_path / f"application-{name}.yaml"
        file.write_text(yaml.safe_dump(app))
        result = subprocess.run(
            [
                str(tools.path("argocd") / "argocd-sync"),
                "--kubeconfig", str(spokes[name].kubeconfig),
                "--app", str(file),
                "--repo", str(project.folder),
                "--revision", fleet["revision"],
                "--state", str(tmp_path / f"{name}.state.json"),
                "--backoff-scale", "0.1",
                "--timeout", "300s",
            ],
            capture_output=True, text=True, timeout=360,
        )  # fmt: skip
        assert result.returncode == 0 and result.stdout.strip(), result.stderr[-3000:]
        report = json.loads(result.stdout)
        assert report["phase"] == "Succeeded", json.dumps(report, indent=1)[:3000]
        tree = _tree(project, "dev", name)
        assert tree
        problems = []
        for obj in tree:
            live = _live(spokes[name], obj)
            if live is None:
                problems.append(f"{name}: {show(key_of(obj))} not synced")
            else:
                problems += [f"{name}: {show(key_of(obj))}: {m}" for m in _missing(obj, live)]
        assert not problems, "\n".join(problems)
