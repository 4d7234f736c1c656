"""Every example stack through every engine, for real: first deploy, a second delivery with
nothing changed, two batches of edits, then the environment's retirement (docs/lifecycle.md,
"Retiring an environment"). After every step, what the engine did to each object (its UID and
resourceVersion before and after) and to each job's pods is compared with what
`kubetrain plan` said for that engine; the test fails on any difference, and prints the table.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest

from conftest import start_cluster
from harness import edits, operators
from harness.cluster import ControlPlane
from harness.engines import ArgoCD, Flux, Kubectl, PulumiEngine
from harness.gitserver import GitServer
from harness.kubelet import Kubelet
from harness.lifecycle import Lifecycle
from harness.observe import key_of, show, snapshot
from harness.project import Project

ENVS = ["dev", "staging", "prod"]
#: What no engine deletes (docs/lifecycle.md): left when an environment is retired.
RETAINED = {"Namespace", "CustomResourceDefinition", "PersistentVolumeClaim", "PersistentVolume"}


def make_engine(name: str, cluster: ControlPlane, project: Project, git: GitServer, tmp: Path):
    if name == "kubectl":
        return Kubectl(cluster, project)
    if name == "flux":
        return Flux(cluster, project, git.url("project"), tmp / "flux").start()
    if name == "argocd":
        return ArgoCD(cluster, project, tmp / "argocd")
    return PulumiEngine(cluster, project, tmp / "pulumi")


@pytest.fixture(params=["kubectl", "flux", "argocd", "pulumi"], scope="module")
def world(request, tmp_path_factory):
    name = request.param
    tmp = tmp_path_factory.mktemp(f"lifecycle-{name}")
    cluster = start_cluster(name, tmp, own_crds=False)
    kubelet = Kubelet(cluster).start()
    # What runs a job's pods in each mode: the JobSet controller, the operators, Kueue.
    ops = operators.start_all(cluster, tmp / "operators")
    repos = tmp / "repos"
    project = Project(repos / "project")
    git = GitServer(repos).start()
    for env in ENVS:
        gitops = project.config(env).get("kubetrain:gitops") or {}
        gitops["repoURL"] = git.url("project")
        gitops["engines"] = ["flux", "argocd"]
        project.set(env, "gitops", gitops)
    provide_external(cluster, project)
    engine = make_engine(name, cluster, project, git, tmp)
    if hasattr(engine, "prepare"):
        engine.prepare(ENVS)
    try:
        yield name, cluster, kubelet, project, engine
    finally:
        if hasattr(engine, "stop"):
            engine.stop()
        git.stop()
        operators.stop_all(ops)
        kubelet.stop()
        cluster.stop()


def provide_external(cluster: ControlPlane, project: Project) -> None:
    """What each stack declares in kubetrain:external, made as the platform team would: the
    namespaces, and the claims, ServiceAccounts, Secrets and ConfigMaps the jobs name in them
    (one in a namespace the stack delivers itself would exist only after its first delivery;
    the kubelet stand-in does not wait for a pod's volumes)."""
    kinds = {
        "serviceAccounts": ("v1", "ServiceAccount"),
        "secrets": ("v1", "Secret"),
        "configMaps": ("v1", "ConfigMap"),
        "persistentVolumeClaims": ("v1", "PersistentVolumeClaim"),
    }
    docs = []
    for env in ENVS:
        external = project.config(env).get("kubetrain:external") or {}
        default_ns = project.config(env).get("kubetrain:namespace", "default")
        for ns in external.get("namespaces", []):
            docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for key, (api, kind) in kinds.items():
            for ref in external.get(key, []):
                ns, _, name = ref.rpartition("/")
                obj = {"apiVersion": api, "kind": kind,
                       "metadata": {"name": name, "namespace": ns or default_ns}}  # fmt: skip
                if kind == "PersistentVolumeClaim":
                    obj["spec"] = {"accessModes": ["ReadWriteOnce"],
                                   "resources": {"requests": {"storage": "1Gi"}}}  # fmt: skip
                docs.append(obj)
    made = {d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"}
    docs = [d for d in docs if d["kind"] == "Namespace" or d["metadata"]["namespace"] in made]
    for doc in docs:
        cluster.kubectl("apply", "--server-side", "--field-manager", "platform-team", "-f", "-",
                        input=json.dumps(doc))  # fmt: skip


def stop_runs(project: Project) -> None:
    """docs/lifecycle.md, retiring step 1: no jobs, no job files, no patches of them."""
    for env in ENVS:
        project.set(env, "jobs", [])
        project.set(env, "jobFiles", [])
        project.set(env, "patches", None)


def test_lifecycle_matches_the_plan(world):
    name, cluster, kubelet, project, engine = world
    life = Lifecycle(cluster, project, engine, ENVS)
    ever: dict[str, set] = {env: set() for env in ENVS}

    def track():
        for env in ENVS:
            ever[env] |= {key_of(o) for o in project.rendered(env)}

    life.step("deploy")
    track()
    pulumi_findings = []
    if isinstance(engine, PulumiEngine):
        # Every credential reached the cluster, and the state holds none in plain text.
        assert engine.canaries, "no stack asked for a credential"
        secrets_text = cluster.kubectl("get", "secrets", "-A", "-o", "json").stdout
        values = {
            base64.b64decode(v).decode(errors="replace")
            for item in json.loads(secrets_text)["items"]
            for v in (item.get("data") or {}).values()
        }
        assert any(c in v for c in engine.canaries for v in values)
        pulumi_findings += engine.plaintext_canaries()
        # After an up, a refresh finds the cluster as the state says.
        for env in ENVS:
            outcome = engine.refresh_changes(env)
            if not outcome.ok:
                pulumi_findings.append(f"refresh {env}: {outcome.detail[-2000:]}")
    life.step("again")
    life.step("edits", edits.edits_step)
    track()
    life.step("moves", edits.moves_step)
    track()
    life.step("stop-runs", stop_runs)
    track()
    for env in ENVS:
        outcome = engine.retire(env)
        assert outcome.ok, outcome.detail
    namespaces = {k[2] for env in ENVS for k in ever[env] if k[2]}
    left = snapshot(cluster, set().union(*ever.values()), namespaces)
    leaked = sorted(show(k) for k in left.objects if k[1] not in RETAINED)
    assert len(life.results) == 5 and all(r.rows for r in life.results)
    print(f"\n{name}:\n{life.table()}")
    if os.environ.get("KUBETRAIN_E2E_REPORT"):  # the tables of a closing note
        report = Path(os.environ["KUBETRAIN_E2E_REPORT"])
        report.mkdir(parents=True, exist_ok=True)
        (report / f"lifecycle-{name}.txt").write_text(life.table())
    assert not life.mismatches(), f"{name}: engine and plan disagree:\n{life.table()}"
    if isinstance(engine, PulumiEngine):
        pulumi_findings += engine.plaintext_canaries()
    assert not pulumi_findings, "\n".join(pulumi_findings)
    assert not leaked, f"{name}: objects left behind after retiring: {leaked}"
    assert not kubelet.errors
