"""Environments mapped to clusters (``kubetrain:clusters``): each environment is a cluster of its
own unless its stack names one, so duplicates are checked per cluster; a fleet renders a tree
per cluster with that cluster's overrides, delivered by a Flux Kustomization per cluster (remote
ones through ``kubeConfig.secretRef``) and an Argo CD ApplicationSet, in an AppProject granting
what the objects need; ``plan`` plans each cluster."""

from __future__ import annotations

import fnmatch
import json
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from fleet_project import JOB, QUEUE, expand_template
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_gitops import crd_issues

from kubetrain.app import Project, render
from kubetrain.models import InputError

from conftest import needs_upstream_crds

STACK = """\
config:
  kubetrain:namespace: ml
  kubetrain:nativeWorkload: jobset
  kubetrain:jobFiles: [stacks/jobs/*.yaml]
  kubetrain:manifestFiles: [stacks/queue.yaml]
  kubetrain:gitops:
    repoURL: https://git.example.com/team.git
    engines: [flux, argocd]
    argocd: {{appProject: true}}
{clusters}"""
FLEET = """\
  kubetrain:clusters:
    - name: {env}-east
      server: https://{env}-east.example.com:6443
      kubeConfig: {{secretRef: {{name: {env}-east-kubeconfig, key: config}}}}
      nodeSelector: {{topology.kubernetes.io/region: us-east-1}}
    - name: {env}-west
      server: https://{env}-west.example.com:6443
      kubeConfig: {{secretRef: {{name: {env}-west-kubeconfig}}}}
      gpuResource: amd.com/gpu
      patches:
        - target: {{kind: ClusterQueue, name: team}}
          patch:
            - {{op: replace, path: /spec/resourceGroups/0/flavors/0/resources/0/nominalQuota, value: 8}}
"""


def write_project(project: Path, stacks: dict[str, str]) -> None:
    (project / "stacks" / "jobs").mkdir(parents=True, exist_ok=True)
    (project / "stacks" / "jobs" / "bert.yaml").write_text(JOB)
    (project / "stacks" / "queue.yaml").write_text(QUEUE)
    for env, clusters in stacks.items():
        (project / "stacks" / f"Pulumi.{env}.yaml").write_text(STACK.format(clusters=clusters))


def load(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        p.relative_to(folder).as_posix(): yaml.safe_load(p.read_text())
        for p in sorted(folder.rglob("*.yaml"))
    }


def test_two_environments_of_one_namespace_and_one_queue_are_two_clusters(
    project: Path, run
) -> None:
    """The same ClusterQueue, ResourceFlavor, Namespace and job in dev and prod: each
    environment is its own cluster, so nothing is a duplicate (validate of all of rendered/,
    as the CI workflow runs it)."""
    write_project(project, {"dev": "", "prod": ""})
    assert run("render", cwd=project).exit_code == 0
    for env in ("dev", "prod"):
        assert (project / "rendered" / env / "_cluster" / "clusterqueue-team.yaml").is_file()
    result = run("validate", cwd=project)
    assert result.exit_code == 0, result.stdout
    assert "duplicate" not in result.stdout


def test_environments_naming_one_cluster_are_checked_together(project: Path, run) -> None:
    shared = "  kubetrain:clusters: [{name: shared-gpu}]\n"
    write_project(project, {"dev": "", "prod": ""})
    assert run("render", cwd=project).exit_code == 0
    # Both now deliver to one cluster: validate of what was rendered flags every object the
    # two trees have in common, at the later one, naming the cluster...
    for env in ("dev", "prod"):
        (project / "stacks" / f"Pulumi.{env}.yaml").write_text(STACK.format(clusters=shared))
    result = run("validate", cwd=project)
    assert result.exit_code == 1
    flagged = [line for line in result.stdout.splitlines() if "duplicate" in line]
    assert flagged and all("rendered/prod/" in line for line in flagged)
    assert any("ClusterQueue team" in line and "cluster shared-gpu" in line for line in flagged)
    # ...and render refuses to write such a pair (exit 1, nothing written).
    before = load(project / "rendered")
    result = run("render", cwd=project)
    assert result.exit_code == 1
    assert "is also delivered by" in result.stdout + result.stderr
    assert load(project / "rendered") == before


def test_a_fleet_renders_a_tree_per_cluster_with_its_overrides(project: Path, run) -> None:
    write_project(project, {"dev": FLEET.format(env="dev")})
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    dev = project / "rendered" / "dev"
    assert sorted(p.name for p in dev.iterdir()) == ["dev-east", "dev-west"]
    east, west = load(dev / "dev-east"), load(dev / "dev-west")
    jobset = "ml/jobset-bert.yaml"
    pods = [
        rj["template"]["spec"]["template"]["spec"] for rj in east[jobset]["spec"]["replicatedJobs"]
    ]
    assert len(pods) == 3  # Master 1 + Worker 2, a replicated Job each
    for pod in pods:
        assert pod["nodeSelector"] == {"topology.kubernetes.io/region": "us-east-1"}
        assert "nvidia.com/gpu" in pod["containers"][0]["resources"]["limits"]
    for rj in west[jobset]["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]["spec"]
        assert "nodeSelector" not in pod
        assert "amd.com/gpu" in pod["containers"][0]["resources"]["limits"]

    def cpu_quota(tree: dict[str, dict[str, Any]]) -> str:
        flavor = tree["_cluster/clusterqueue-team.yaml"]["spec"]["resourceGroups"][0]["flavors"][0]
        return str(flavor["resources"][0]["nominalQuota"])

    assert (cpu_quota(east), cpu_quota(west)) == ("16", "8")  # west's patch only
    # Each cluster's tree builds alone with kubectl kustomize's input (its own kustomization).
    for tree in (east, west):
        assert jobset in tree["kustomization.yaml"]["resources"]
    # Diff is clean, validate passes, and plan plans each cluster.
    assert run("diff", cwd=project).exit_code == 0
    assert run("validate", cwd=project).exit_code == 0
    planned = json.loads(run("plan", "--output", "json", cwd=project).stdout)
    names = [e["name"] for e in planned["environments"]]
    assert names == ["dev/dev-east", "dev/dev-west"]


def test_a_fleet_is_delivered_per_cluster(project: Path, run) -> None:
    write_project(project, {"dev": FLEET.format(env="dev")})
    assert run("render", cwd=project).exit_code == 0
    delivery = load(project / "rendered" / "clusters" / "dev")
    flux = {
        o["metadata"]["name"]: o["spec"]
        for p, o in delivery.items()
        if p.startswith("flux/") and o["apiVersion"].startswith("kustomize.toolkit")
    }
    assert set(flux) == {
        "kubetrain-dev-dev-east",
        "kubetrain-dev-dev-east-prerequisites",
        "kubetrain-dev-dev-west",
        "kubetrain-dev-dev-west-prerequisites",
    }
    assert flux["kubetrain-dev-dev-east"]["path"] == "./rendered/dev/dev-east"
    assert flux["kubetrain-dev-dev-east"]["kubeConfig"] == {
        "secretRef": {"name": "dev-east-kubeconfig", "key": "config"}
    }
    assert flux["kubetrain-dev-dev-west-prerequisites"]["kubeConfig"] == {
        "secretRef": {"name": "dev-west-kubeconfig"}
    }
    assert flux["kubetrain-dev-dev-west"]["dependsOn"] == [
        {"name": "kubetrain-dev-dev-west-prerequisites"}
    ]
    appset = delivery["argocd/applicationset-kubetrain-dev.yaml"]
    (generator,) = appset["spec"]["generators"]
    assert generator["list"]["elements"] == [
        {"cluster": "dev-east", "destination": "https://dev-east.example.com:6443"},
        {"cluster": "dev-west", "destination": "https://dev-west.example.com:6443"},
    ]
    for element in generator["list"]["elements"]:
        app = expand_template(appset["spec"]["template"], element)
        assert app["spec"]["source"]["path"] == f"rendered/dev/{element['cluster']}"
        assert app["spec"]["destination"] == {"server": element["destination"], "namespace": "ml"}
        assert app["spec"]["project"] == "kubetrain-dev"


def is_permitted(project: dict[str, Any], obj: dict[str, Any], cluster: dict[str, str]) -> bool:
    """Argo CD v3.5.1's ``AppProject.IsResourcePermitted`` (app_project_types.go): the kind
    permitted by the whitelists (``IsGroupKindNamePermitted``: an unset namespaced whitelist
    permits all, an empty cluster one none), then for a namespaced object the destination
    (``isDestinationMatched``: server or name, and namespace, matched as globs)."""
    spec = project["spec"]
    group = obj["apiVersion"].rpartition("/")[0]
    namespace = obj["metadata"].get("namespace", "")
    listed = spec.get("namespaceResourceWhitelist") if namespace else None
    if namespace:
        if listed is not None and not any(
            fnmatch.fnmatchcase(group, w["group"]) and fnmatch.fnmatchcase(obj["kind"], w["kind"])
            for w in listed
        ):
            return False
    elif not any(
        fnmatch.fnmatchcase(group, w["group"]) and fnmatch.fnmatchcase(obj["kind"], w["kind"])
        for w in spec.get("clusterResourceWhitelist") or []
    ):
        return False
    if not namespace:
        return True
    return any(
        (
            ("server" in cluster and fnmatch.fnmatchcase(cluster["server"], d.get("server", "")))
            or ("name" in cluster and fnmatch.fnmatchcase(cluster["name"], d.get("name", "")))
        )
        and fnmatch.fnmatchcase(namespace, d.get("namespace", ""))
        for d in spec["destinations"]
    )


@pytest.mark.parametrize("fleet", [False, True], ids=["one-cluster", "fleet"])
def test_the_app_project_permits_what_is_rendered_and_nothing_else(
    project: Path, run, fleet: bool
) -> None:
    clusters = (
        FLEET.format(env="dev")
        if fleet
        else "  kubetrain:clusters: [{name: gpu-1, server: https://gpu-1.example.com}]\n"
    )
    write_project(project, {"dev": clusters})
    assert run("render", cwd=project).exit_code == 0
    delivery = load(project / "rendered" / "clusters" / "dev")
    app_project = delivery["argocd/appproject-kubetrain-dev.yaml"]
    servers = (
        ["https://dev-east.example.com:6443", "https://dev-west.example.com:6443"]
        if fleet
        else ["https://gpu-1.example.com"]
    )
    checked = 0
    trees = (
        [project / "rendered" / "dev" / n for n in ("dev-east", "dev-west")]
        if fleet
        else [project / "rendered" / "dev"]
    )
    for tree, server in zip(trees, servers, strict=True):
        for rel, obj in load(tree).items():
            if rel.endswith("kustomization.yaml"):
                continue
            assert is_permitted(app_project, obj, {"server": server}), rel
            checked += 1
    assert checked >= 8
    stranger = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}
    assert not is_permitted(
        app_project, {**stranger, "metadata": {"name": "x"}}, {"server": servers[0]}
    )
    other_ns = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "x", "namespace": "kube-system"},
    }
    assert not is_permitted(app_project, other_ns, {"server": servers[0]})
    if not fleet:
        app = delivery["argocd/application-kubetrain-dev.yaml"]
        assert app["spec"]["destination"] == {"server": servers[0], "namespace": "ml"}
        assert app["spec"]["project"] == "kubetrain-dev"


@needs_upstream_crds
def test_delivery_objects_of_clusters_validate_against_the_upstream_crds(
    project: Path, run
) -> None:
    """AppProject, Application (a named destination) and Kustomizations with kubeConfig against
    ../shared/crds; an ApplicationSet's template spec is an Application's spec, so each
    Application it generates is validated as one (the ApplicationSet CRD itself is not among
    ../shared/crds)."""
    write_project(
        project,
        {"dev": FLEET.format(env="dev"), "prod": "  kubetrain:clusters: [{name: prod-gpu}]\n"},
    )
    assert run("render", cwd=project).exit_code == 0
    kinds = set()
    for env in ("dev", "prod"):
        for rel, obj in load(project / "rendered" / "clusters" / env).items():
            if rel.endswith("kustomization.yaml"):
                continue
            if obj["kind"] == "ApplicationSet":
                for element in obj["spec"]["generators"][0]["list"]["elements"]:
                    template = expand_template(obj["spec"]["template"], element)
                    app = {
                        "apiVersion": obj["apiVersion"],
                        "kind": "Application",
                        **template,
                    }
                    assert crd_issues(app) == [], element
                    kinds.add("Application (generated)")
                continue
            assert crd_issues(obj) == [], rel
            kinds.add(obj["kind"])
    assert kinds >= {
        "AppProject",
        "Application",
        "Application (generated)",
        "Kustomization",
        "GitRepository",
    }
    app = load(project / "rendered" / "clusters" / "prod")["argocd/application-kubetrain-prod.yaml"]
    assert app["spec"]["destination"] == {"name": "prod-gpu", "namespace": "ml"}


@pytest.mark.parametrize(
    ("clusters", "message"),
    [
        ("[{name: a}, {name: a}]", "config.kubetrain:clusters: the cluster 'a' is listed twice"),
        ("[{name: A}]", "config.kubetrain:clusters[0].name:"),
        (
            "[{name: a, server: http://a.example.com}]",
            "config.kubetrain:clusters[0].server: must be an https:// URL",
        ),
        (
            "[{name: a, server: 'https://u:p@a.example.com'}]",
            "config.kubetrain:clusters[0].server: must not hold credentials",
        ),
        (
            "[{name: a, nodeSelector: {'bad key!': x}}]",
            "config.kubetrain:clusters[0].nodeSelector: node label key 'bad key!'",
        ),
        (
            "[{name: a, gpuResource: gpu}]",
            "config.kubetrain:clusters[0].gpuResource: 'gpu' is not an extended resource name",
        ),
        (
            "[{name: a, server: 'https://a.example.com'}, {name: b}]",
            "give server to every cluster or to none",
        ),
        (
            "[{name: a, kubeConfig: {secretRef: {}}}]",
            "config.kubetrain:clusters[0].kubeConfig.secretRef.name:",
        ),
        (
            "[{name: a, patches: [{target: {kind: Nope}, patch: {spec: {}}}]}]",
            "config.kubetrain:clusters[0].patches[0].target:",
        ),
    ],
    ids=[
        "twice",
        "name",
        "http",
        "credentials",
        "label-key",
        "gpu",
        "mixed-servers",
        "secret",
        "patch-target",
    ],
)
def test_bad_cluster_settings_name_their_field(
    project: Path, run, clusters: str, message: str
) -> None:
    write_project(project, {"dev": f"  kubetrain:clusters: {clusters}\n"})
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert "stacks/Pulumi.dev.yaml:" in result.stderr and message in result.stderr, result.stderr
    assert not (project / "rendered").exists()


def test_a_fleet_counts_every_cluster_against_the_output_budget(project: Path, run) -> None:
    write_project(project, {})
    clusters = ", ".join(f"{{name: c{i}}}" for i in range(50))
    big = JOB.replace("replicas: 2", "replicas: 4000")
    (project / "stacks" / "jobs" / "bert.yaml").write_text(big)
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        STACK.format(clusters=f"  kubetrain:clusters: [{clusters}]\n").replace(
            "kubetrain:nativeWorkload: jobset", "kubetrain:nativeWorkload: job"
        )
    )
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "objects in its 50 clusters" in result.stderr
    many = ", ".join(f"{{name: c{i}}}" for i in range(51))
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        STACK.format(clusters=f"  kubetrain:clusters: [{many}]\n")
    )
    result = run("render", cwd=project)
    assert result.exit_code == 2 and "at most 50" in result.stderr


_LABEL = st.text(string.ascii_lowercase + string.digits + "-._", min_size=0, max_size=70)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(
        st.text(string.ascii_lowercase + string.digits + "-", min_size=1, max_size=70),
        min_size=1,
        max_size=4,
    ),
    selector=st.dictionaries(
        st.one_of(_LABEL, st.builds(lambda a, b: f"{a}/{b}", _LABEL, _LABEL)), _LABEL, max_size=3
    ),
)
def test_any_cluster_settings_load_or_are_refused_at_their_field(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], selector: dict[str, str]
) -> None:
    """Generated cluster names and node selectors: either an input error at
    config.kubetrain:clusters (never a traceback), or every pod template of every cluster's
    tree carries the selector."""
    root = tmp_path_factory.mktemp("fleet")
    (root / "stacks").mkdir()
    (root / "Pulumi.yaml").write_text(
        "name: p\nruntime: python\nmain: stacks/\nstackConfigDir: stacks\n"
    )
    write_project(root, {})
    clusters = [{"name": n, "nodeSelector": selector} for n in names]
    stack = yaml.safe_load(STACK.format(clusters=""))
    stack["config"]["kubetrain:clusters"] = clusters
    del stack["config"]["kubetrain:gitops"]
    (root / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    try:
        render(Project(root))
    except InputError as exc:
        assert exc.problems
        assert all(p.path[:2] == ("config", "kubetrain:clusters") for p in exc.problems), exc
        return
    fleet = len(names) > 1
    trees = [root / "rendered" / "dev" / n for n in names] if fleet else [root / "rendered" / "dev"]
    seen = 0
    for tree in trees:
        jobset = load(tree)["ml/jobset-bert.yaml"]
        for rj in jobset["spec"]["replicatedJobs"]:
            pod = rj["template"]["spec"]["template"]["spec"]
            assert pod.get("nodeSelector", {}) == selector
            seen += 1
    assert seen == 3 * len(trees)
