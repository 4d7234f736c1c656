"""``kubetrain plan``: per environment, what applying the stacks now changes against rendered/
(add, change in place, replace naming the immutable field, delete) and the totals before and
after; always exit 0 (diff is the drift gate)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import REPO


def plan_json(run, cwd: Path, *args: str) -> dict[str, dict[str, Any]]:
    result = run("plan", "--output", "json", *args, cwd=cwd)
    assert result.exit_code == 0, result.stderr
    return {env["name"]: env for env in json.loads(result.stdout)["environments"]}


def edit(repo: Path, env: str, old: str, new: str) -> None:
    path = repo / "stacks" / f"Pulumi.{env}.yaml"
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def test_the_committed_tree_is_the_plan_of_the_stacks(run) -> None:
    plans = plan_json(run, REPO)
    assert sorted(plans) == ["dev", "prod", "staging"]
    for env in plans.values():
        assert env["changes"] == [] and env["summary"]["unchanged"] > 20
        assert env["totals"]["before"] == env["totals"]["after"]
    # Counted from the objects: prod runs resnet50's chief, 4 PS, 8 workers and the evaluator
    # (cpu 4 + 4 x 8 + 8 x 8 + 2, memory 16 + 4 x 32 + 8 x 32 + 8 Gi, GPUs 2 + 8 x 2), and
    # dist-mnist's PS and 8 workers as the stack's patches make them (2 cpu, 4Gi each worker).
    totals = plans["prod"]["totals"]["after"]
    assert totals["jobs"]["TFJob ml-prod/resnet50"] == {
        "pods": 14,
        "resources": {"cpu": "102", "memory": "408Gi", "nvidia.com/gpu": "18"},
    }
    assert totals["jobs"]["TFJob ml-prod/dist-mnist-for-e2e-test"] == {
        "pods": 9,
        "resources": {"cpu": "16", "memory": "32Gi"},
    }
    assert totals["all"] == {
        "pods": 23,
        "resources": {"cpu": "118", "memory": "440Gi", "nvidia.com/gpu": "18"},
    }
    assert totals["namespaces"] == {"ml-prod": totals["all"]}


def test_scaling_a_tfjob_replaces_every_pod_whose_tf_config_changes(repo_copy: Path, run) -> None:
    """The issue's case: prod's resnet50 PS from 4 to 5 rewrites TF_CONFIG in all 14 pods."""
    edit(repo_copy, "prod", "            replicas: 4\n", "            replicas: 5\n")
    env = plan_json(run, repo_copy, "--stack", "prod")["prod"]
    by_action: dict[str, list[str]] = {}
    for change in env["changes"]:
        by_action.setdefault(change["action"], []).append(f"{change['kind']} {change['name']}")
    assert sorted(by_action["add"]) == ["Pod resnet50-ps-4", "Service resnet50-ps-4"]
    replaced = [c for c in env["changes"] if c["action"] == "replace"]
    assert len(replaced) == 14
    assert all(
        c["kind"] == "Pod"
        and c["fields"] == ["spec.containers[tensorflow].env[TF_CONFIG].value"]
        and c["restarts"]
        for c in replaced
    )
    assert env["restartedJobs"] == ["TFJob ml-prod/resnet50"]
    before, after = (
        env["totals"][t]["jobs"]["TFJob ml-prod/resnet50"] for t in ("before", "after")
    )
    assert (before["pods"], after["pods"]) == (14, 15)
    assert (before["resources"]["cpu"], after["resources"]["cpu"]) == ("102", "110")
    assert (before["resources"]["memory"], after["resources"]["memory"]) == ("408Gi", "440Gi")
    # ... and the other job of the environment is untouched.
    assert (
        env["totals"]["before"]["jobs"]["TFJob ml-prod/dist-mnist-for-e2e-test"]
        == (env["totals"]["after"]["jobs"]["TFJob ml-prod/dist-mnist-for-e2e-test"])
    )
    # plan only previews: exit 0 and nothing written; diff still reports the drift.
    text = run("plan", "--stack", "prod", cwd=repo_copy)
    assert text.exit_code == 0
    assert (
        "  -/+ Pod ml-prod/resnet50-worker-0: spec.containers[tensorflow].env[TF_CONFIG].value "
        "cannot change in place  [TFJob ml-prod/resnet50]"
    ) in text.stdout
    assert "job TFJob ml-prod/resnet50: pods 14 -> 15; cpu 102 -> 110; memory 408Gi -> 440Gi" in (
        text.stdout
    )
    assert run("diff", "--stack", "prod", cwd=repo_copy).exit_code == 1


def test_an_image_changes_in_place(repo_copy: Path, run) -> None:
    edit(repo_copy, "dev", "tf-dist-mnist-test:1.0", "tf-dist-mnist-test:1.1")
    (change,) = plan_json(run, repo_copy, "--stack", "dev")["dev"]["changes"]
    assert change["action"] == "change" and change["name"] == "mnist-smoke-worker-0"
    assert change["fields"] == ["spec.containers[tensorflow].image"]
    assert change["restarts"]  # the kubelet restarts the container


def test_more_trainers_replace_the_trainer_job_and_gpus_are_counted(repo_copy: Path, run) -> None:
    edit(
        repo_copy,
        "staging",
        "          min-instance: 2\n          max-instance: 8\n",
        "          min-instance: 3\n          max-instance: 8\n",
    )
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    before = env["totals"]["before"]["jobs"]["TrainingJob ml-staging/ctr-gpu"]
    after = env["totals"]["after"]["jobs"]["TrainingJob ml-staging/ctr-gpu"]
    assert (before["pods"], after["pods"]) == (5, 6)
    assert (before["resources"]["nvidia.com/gpu"], after["resources"]["nvidia.com/gpu"]) == (
        "2",
        "3",
    )
    trainer = next(c for c in env["changes"] if c["name"] == "ctr-gpu-trainer")
    # The trainers' env (TRAINERS) is in the Job's template: immutable.
    assert trainer["action"] == "replace" and trainer["fields"] == ["spec.template"]
    pserver = next(c for c in env["changes"] if c["name"] == "ctr-gpu-pserver")
    assert pserver["action"] == "change" and not pserver["restarts"]


def test_a_deleted_stack_plans_the_deletion_of_its_environment(repo_copy: Path, run) -> None:
    (repo_copy / "stacks" / "Pulumi.staging.yaml").unlink()
    plans = plan_json(run, repo_copy)
    staging = plans["staging"]
    assert staging["summary"]["delete"] == len(staging["changes"]) > 20
    assert {c["action"] for c in staging["changes"]} == {"delete"}
    assert staging["totals"]["after"]["all"] == {"pods": 0, "resources": {}}
    assert plans["dev"]["changes"] == []
    # Its namespace is not deleted by any engine: the plan says so.
    (namespace,) = [c for c in staging["changes"] if c["kind"] == "Namespace"]
    assert "no engine deletes" in namespace["reason"]
    # Both of prod's folders are one environment.
    (repo_copy / "stacks" / "Pulumi.prod.yaml").unlink()
    prod = plan_json(run, repo_copy)["prod"]
    assert prod["folders"] == ["rendered/prod", "rendered/clusters/prod"]
    assert {c["kind"] for c in prod["changes"]} >= {"Pod", "Kustomization", "GitRepository"}


def test_a_change_of_mode_shows_what_goes_and_what_comes(repo_copy: Path, run) -> None:
    """Native to operator: the job's pods are deleted (its run restarts) and its custom
    resource added; the operator's pods are counted from the resource's replica templates."""
    edit(
        repo_copy,
        "staging",
        "  kubetrain:namespace: ml-staging\n",
        "  kubetrain:namespace: ml-staging\n  kubetrain:mode: operator\n",
    )
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    added = {(c["kind"], c["name"]) for c in env["changes"] if c["action"] == "add"}
    assert ("TFJob", "dist-mnist") in added
    deleted = {c["name"] for c in env["changes"] if c["action"] == "delete" and c["kind"] == "Pod"}
    assert "dist-mnist-worker-0" in deleted
    assert "TFJob ml-staging/dist-mnist" in env["restartedJobs"]
    jobs = env["totals"]["after"]["jobs"]
    assert jobs["TFJob ml-staging/dist-mnist"]["pods"] == 6
