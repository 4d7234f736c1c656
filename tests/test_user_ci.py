"""The CI pieces users copy: the GitHub Actions workflow and the pre-commit hooks run
``kubetrain diff`` and ``kubetrain validate`` in the user's repository, pass on a current
rendered/ and fail on drift."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from conftest import REPO

WORKFLOW = REPO / "ci" / "github-actions" / "kubetrain.yml"
HOOKS = REPO / ".pre-commit-hooks.yaml"


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", command], cwd=cwd, env=env, capture_output=True, text=True
    )


def workflow_commands() -> list[str]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow["jobs"]["kubetrain"]["steps"]
    installs = [s for s in steps if str(s.get("run", "")).startswith("pip install")]
    assert len(installs) == 1
    assert installs[0]["run"].splitlines() == [
        "pip install --require-hashes --no-deps -r requirements.lock",
        "pip install --no-deps -r requirements.txt",
        "pip check",
    ]
    return [s["run"] for s in steps if "run" in s and s not in installs]


def drift(repo: Path) -> None:
    stack = repo / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(
        stack.read_text().replace(
            'args: ["--train_steps", "100"]', 'args: ["--train_steps", "200"]'
        )
    )


def test_workflow_runs_diff_and_validate(repo_copy: Path) -> None:
    commands = workflow_commands()
    assert "kubetrain diff" in commands and "kubetrain validate" in commands
    for command in commands:
        done = shell(command, repo_copy)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert (repo_copy / "kubetrain-validate.xml").read_text().startswith("<?xml")
    drift(repo_copy)
    assert shell("kubetrain diff", repo_copy).returncode == 1


def test_workflow_triggers() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]


def test_pre_commit_hooks(repo_copy: Path) -> None:
    hooks = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text())}
    assert set(hooks) == {"kubetrain-render", "kubetrain-diff", "kubetrain-validate"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert re.search(hook["files"], "stacks/Pulumi.dev.yaml")
        assert shell(hook["entry"], repo_copy).returncode == 0, hook["id"]
    drift(repo_copy)
    assert shell(hooks["kubetrain-diff"]["entry"], repo_copy).returncode == 1
    assert shell(hooks["kubetrain-render"]["entry"], repo_copy).returncode == 0
    assert shell(hooks["kubetrain-diff"]["entry"], repo_copy).returncode == 0


def test_docs_snippet_names_real_hooks() -> None:
    page = (REPO / "docs" / "gitops.md").read_text()
    snippet = re.search(r"```yaml\n(repos:\n.*?)```", page, re.S)
    assert snippet, "docs/gitops.md shows a .pre-commit-config.yaml"
    config = yaml.safe_load(snippet[1])
    ids = {h["id"] for repo in config["repos"] for h in repo["hooks"]}
    known = {h["id"] for h in yaml.safe_load(HOOKS.read_text())}
    assert ids and ids <= known
