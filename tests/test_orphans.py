"""A job file that falls out of the stack's patterns (renamed to .yml) is named as the cause of
its jobs' removal by render and plan, instead of the jobs silently leaving the tree."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from kubetrain.models.orphans import MAX_FILES, removal_causes

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "mnist"},
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}}
            }
        }
    },
}


def project(tmp_path: Path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    (tmp_path / "stacks" / "jobs").mkdir(parents=True)
    (tmp_path / "stacks" / "jobs" / "mnist.yaml").write_text(yaml.safe_dump(JOB))
    (tmp_path / "stacks" / "jobs" / "other.yaml").write_text(
        yaml.safe_dump({**JOB, "metadata": {"name": "other"}})
    )
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(
        "config:\n  kubetrain:namespace: ml\n  kubetrain:jobFiles: ['stacks/jobs/*.yaml']\n"
    )
    return tmp_path


def test_render_and_plan_name_the_renamed_file(tmp_path: Path, run) -> None:
    root = project(tmp_path)
    assert run("render", cwd=root).exit_code == 0
    (root / "stacks/jobs/mnist.yaml").rename(root / "stacks/jobs/mnist.yml")
    planned = run("plan", "--output", "json", cwd=root)
    assert planned.exit_code == 0, planned.stderr
    (env,) = json.loads(planned.stdout)["environments"]
    assert env["removalCauses"] == {
        "TFJob ml/mnist": "its document is in stacks/jobs/mnist.yml, which no pattern of "
        "kubetrain:jobFiles ('stacks/jobs/*.yaml') matches"
    }
    text = run("plan", cwd=root).stdout
    assert "! TFJob ml/mnist leaves the stack: its document is in stacks/jobs/mnist.yml" in text
    rendered = run("render", cwd=root)
    assert rendered.exit_code == 0
    assert (
        "rendered/dev: warning: the objects of TFJob ml/mnist are removed: its document is in "
        "stacks/jobs/mnist.yml" in rendered.stderr
    )
    assert "other" not in rendered.stderr  # only what leaves is explained


def test_an_ordinary_removal_has_no_cause(tmp_path: Path, run) -> None:
    root = project(tmp_path)
    assert run("render", cwd=root).exit_code == 0
    (root / "stacks/jobs/mnist.yaml").unlink()
    (env,) = json.loads(run("plan", "--output", "json", cwd=root).stdout)["environments"]
    assert env["removalCauses"] == {}
    assert any(c["action"] == "delete" for c in env["changes"])
    rendered = run("render", cwd=root)
    assert rendered.exit_code == 0 and "removed:" not in rendered.stderr


def test_the_search_is_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    folder.mkdir()
    for i in range(MAX_FILES + 50):
        (folder / f"f{i:04d}.yml").write_text("kind: TFJob\nmetadata: {name: x}\n")
    (folder / "zzzz.yml").write_text(yaml.safe_dump(JOB))
    # Past MAX_FILES files the search stops: the last file (sorted) is never read.
    causes = removal_causes(
        tmp_path, {"jobFiles": ["jobs/*.yaml"]}, set(), {"TFJob ml/mnist"}, "ml"
    )
    assert causes == {}
    found = removal_causes(tmp_path, {"jobFiles": ["jobs/*.yaml"]}, set(), {"TFJob ml/x"}, "ml")
    assert "TFJob ml/x" in found
