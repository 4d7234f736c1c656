"""A team's own repository, end to end, as a new user makes it: ``kubetrain init``, Kubeflow's
published PyTorchJob, TFJob and MPIJob, a Kueue queue, a second environment added with
``kubetrain init --stack prod --from dev``, two clusters per environment (a fleet each, behind
Flux on a hub and an Argo CD ApplicationSet); then the CI workflow and the pre-commit hooks
``kubetrain init`` wrote are executed in that git repository: they pass, and fail on drift."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

TOOLS = Path(sys.executable).parent
EXAMPLES = REPO / "stacks"
CLUSTERS = """\
  kubetrain:manifestFiles: [stacks/kueue/*.yaml]
  kubetrain:gitops:
    repoURL: https://git.example.com/team/ml.git
    engines: [flux, argocd]
    argocd: {appProject: true}
  kubetrain:clusters:
    - name: dev-east
      server: https://dev-east.example.com:6443
      kubeConfig: {secretRef: {name: dev-east-kubeconfig}}
    - name: dev-west
      server: https://dev-west.example.com:6443
      kubeConfig: {secretRef: {name: dev-west-kubeconfig}}
      nodeSelector: {topology.kubernetes.io/region: us-west-2}
  kubetrain:patches:
    # Kubeflow's simple PyTorchJob runs in the team's namespace (not Kubeflow's, which the
    # example names), and waits in the team's Kueue queue.
    - target: {kind: PyTorchJob, name: pytorch-simple}
      patch:
        - {op: remove, path: /metadata/namespace}
        - {op: add, path: /metadata/labels, value: {kueue.x-k8s.io/queue-name: training-queue}}
"""


def shell(command: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{TOOLS}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(home / "pre-commit"),
        "GIT_AUTHOR_NAME": "team",
        "GIT_AUTHOR_EMAIL": "team@example.com",
        "GIT_COMMITTER_NAME": "team",
        "GIT_COMMITTER_EMAIL": "team@example.com",
        "HOME": str(home),
    }
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.fixture
def team(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    done = shell("kubetrain init team", tmp_path, home)
    assert done.returncode == 0, done.stderr
    repo = tmp_path / "team"
    jobs = repo / "stacks" / "jobs"
    for example in (
        "kubeflow-examples/pytorch-simple.yaml",
        "kubeflow-examples/dist-mnist.yaml",
        "mpi-operator-examples/pi-intel.yaml",
    ):
        shutil.copy(EXAMPLES / example, jobs)
    (repo / "stacks" / "kueue").mkdir()
    shutil.copy(EXAMPLES / "trainer-examples" / "kueue" / "queues.yaml", repo / "stacks" / "kueue")
    dev = repo / "stacks" / "Pulumi.dev.yaml"
    text = dev.read_text().replace(
        "kubetrain:namespace: ml\n", "kubetrain:namespace: ml\n  kubetrain:mode: operator\n"
    )
    dev.write_text(text.replace("config:\n", "config:\n" + CLUSTERS, 1))
    added = shell("kubetrain init --stack prod --from dev --namespace ml-prod", repo, home)
    assert added.returncode == 0, added.stderr
    prod = repo / "stacks" / "Pulumi.prod.yaml"
    prod.write_text(
        prod.read_text().replace("dev-east", "prod-east").replace("dev-west", "prod-west")
    )
    for command in (
        "git init -q -b main",
        "kubetrain render",
        "git add -A",
        "git commit -q -m start",
    ):
        done = shell(command, repo, home)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    return repo


def workflow_runs(repo: Path) -> list[str]:
    steps = yaml.safe_load((repo / ".github" / "workflows" / "kubetrain.yml").read_text())["jobs"][
        "kubetrain"
    ]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    # The install step needs the package index: the environment these tests run in is the one
    # it installs (tests/test_release.py holds the lock to it); every other step runs here.
    assert runs[0].startswith("pip install --require-hashes --no-deps -r requirements.lock")
    return runs[1:]


def test_the_repository_is_two_environments_of_two_clusters(team: Path) -> None:
    rendered = team / "rendered"
    assert sorted(p.name for p in rendered.iterdir()) == ["clusters", "dev", "prod"]
    for env, namespace in (("dev", "ml"), ("prod", "ml-prod")):
        assert sorted(p.name for p in (rendered / env).iterdir()) == [f"{env}-east", f"{env}-west"]
        tree = rendered / env / f"{env}-west"
        job = yaml.safe_load((tree / namespace / "pytorchjob-pytorch-simple.yaml").read_text())
        assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "training-queue"
        assert "suspend" not in job["spec"].get("runPolicy", {})  # Kueue's
        assert (tree / namespace / "localqueue-training-queue.yaml").is_file()
        assert (tree / "_cluster" / "clusterqueue-cluster-queue.yaml").is_file()
        assert not (tree / "_cluster" / "namespace-kubeflow.yaml").exists()
        delivery = {p.name for p in (rendered / "clusters" / env).rglob("*.yaml")}
        assert f"applicationset-kubetrain-{env}.yaml" in delivery
        assert f"kustomization-kubetrain-{env}-{env}-east.yaml" in delivery


def test_its_generated_ci_passes_and_fails_on_drift(team: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    runs = workflow_runs(team)
    assert runs[:2] == ["kubetrain diff", "kubetrain validate"]
    for command in runs:
        done = shell(command, team, home)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert (team / "kubetrain-validate.xml").read_text().startswith("<?xml")
    stack = team / "stacks" / "Pulumi.prod.yaml"
    stack.write_text(stack.read_text().replace("us-west-2", "us-west-1"))
    drift = shell("kubetrain diff", team, home)
    assert drift.returncode == 1 and "us-west-1" in drift.stdout


def test_its_generated_pre_commit_hooks_pass_and_stop_a_stale_commit(
    team: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    assert shell("pre-commit validate-config .pre-commit-config.yaml", team, home).returncode == 0
    hooks = shell("pre-commit run --all-files", team, home)
    assert hooks.returncode == 0, hooks.stdout + hooks.stderr
    assert hooks.stdout.count("Passed") == 2, hooks.stdout
    # A stack edited without rendering: the render hook rewrites rendered/ and stops the
    # commit; once the new rendered/ is added, the hooks pass.
    stack = team / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(stack.read_text().replace("us-west-2", "us-west-1"))
    assert shell("git add -A", team, home).returncode == 0
    stale = shell("pre-commit run", team, home)
    assert stale.returncode == 1 and "files were modified by this hook" in stale.stdout, (
        stale.stdout
    )
    assert (
        "us-west-1"
        in (
            team / "rendered" / "dev" / "dev-west" / "ml" / "pytorchjob-pytorch-simple.yaml"
        ).read_text()
    )
    assert shell("git add -A", team, home).returncode == 0
    again = shell("pre-commit run", team, home)
    assert again.returncode == 0, again.stdout + again.stderr
