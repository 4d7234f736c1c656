"""``kubetrain plan``: per environment, what applying the stacks now changes against rendered/
(add, change in place, replace naming the immutable field, delete) and the totals before and
after; always exit 0 (diff is the drift gate)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kubetrain.models import load_stack
from kubetrain.models.kubeflow import KubeflowJob

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


def test_scaling_a_tfjob_replaces_its_jobset(repo_copy: Path, run) -> None:
    """The issue's case: prod's resnet50 PS from 4 to 5 rewrites TF_CONFIG in all 14 pods. prod
    runs each Kubeflow job as a JobSet, whose replicatedJobs cannot change in place: the JobSet
    is replaced (its run restarts), and the new PS gets its Service."""
    edit(repo_copy, "prod", "            replicas: 4\n", "            replicas: 5\n")
    env = plan_json(run, repo_copy, "--stack", "prod")["prod"]
    by_action: dict[str, list[str]] = {}
    for change in env["changes"]:
        by_action.setdefault(change["action"], []).append(f"{change['kind']} {change['name']}")
    assert sorted(by_action["add"]) == ["Service resnet50-ps-4"]
    (replaced,) = [c for c in env["changes"] if c["action"] == "replace"]
    assert (replaced["kind"], replaced["name"]) == ("JobSet", "resnet50")
    assert replaced["fields"] == ["spec.replicatedJobs"] and replaced["restarts"]
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
        "  -/+ JobSet ml-prod/resnet50: spec.replicatedJobs cannot change in place  "
        "[TFJob ml-prod/resnet50]"
    ) in text.stdout
    assert "job TFJob ml-prod/resnet50: pods 14 -> 15; cpu 102 -> 110; memory 408Gi -> 440Gi" in (
        text.stdout
    )
    assert run("diff", "--stack", "prod", cwd=repo_copy).exit_code == 1


def test_scaling_a_tfjob_of_bare_pods_replaces_every_pod_whose_tf_config_changes(
    repo_copy: Path, run
) -> None:
    """The same under nativeWorkload pod: every Pod whose TF_CONFIG changes is replaced."""
    edit(
        repo_copy,
        "prod",
        "  kubetrain:nativeWorkload: jobset\n",
        "  kubetrain:nativeWorkload: pod\n",
    )
    assert run("render", "--stack", "prod", cwd=repo_copy).exit_code == 0
    edit(repo_copy, "prod", "            replicas: 4\n", "            replicas: 5\n")
    env = plan_json(run, repo_copy, "--stack", "prod")["prod"]
    added = sorted(f"{c['kind']} {c['name']}" for c in env["changes"] if c["action"] == "add")
    assert added == ["Pod resnet50-ps-4", "Service resnet50-ps-4"]
    replaced = [c for c in env["changes"] if c["action"] == "replace"]
    assert len(replaced) == 14
    assert all(
        c["kind"] == "Pod"
        and c["fields"] == ["spec.containers[tensorflow].env[TF_CONFIG].value"]
        and c["restarts"]
        for c in replaced
    )


def test_the_default_workload_replaces_bare_pods_with_jobs(repo_copy: Path, run) -> None:
    """A tree rendered when Kubeflow jobs were bare Pods (nativeWorkload pod, the objects of
    kubetrain before the setting): the default, a Job per replica, deletes every Pod and adds
    a Job of the same name; every such job's run restarts, its totals are unchanged."""
    edit(
        repo_copy,
        "dev",
        "  kubetrain:namespace: ml-dev\n",
        "  kubetrain:namespace: ml-dev\n  kubetrain:nativeWorkload: pod\n",
    )
    assert run("render", "--stack", "dev", cwd=repo_copy).exit_code == 0
    edit(repo_copy, "dev", "  kubetrain:nativeWorkload: pod\n", "")
    env = plan_json(run, repo_copy, "--stack", "dev")["dev"]
    deleted = {c["name"] for c in env["changes"] if c["action"] == "delete"}
    added = {c["name"] for c in env["changes"] if c["action"] == "add"}
    assert {c["kind"] for c in env["changes"] if c["action"] == "delete"} == {"Pod"}
    assert {c["kind"] for c in env["changes"] if c["action"] == "add"} == {"Job"}
    # Every replica of the stack's Kubeflow jobs (in native mode), counted from the stack.
    stack = load_stack(repo_copy / "stacks" / "Pulumi.dev.yaml")
    replicas = sum(
        j.job.total_replicas()
        for j in stack.jobs
        if isinstance(j.job, KubeflowJob) and j.mode == "native"
    )
    assert deleted == added and len(deleted) == replicas > 0
    assert sorted(env["restartedJobs"]) == sorted(
        {c["job"] for c in env["changes"] if c["action"] == "add"}
    )
    assert env["totals"]["before"] == env["totals"]["after"]


def test_an_image_changes_a_pod_in_place_and_replaces_a_job(repo_copy: Path, run) -> None:
    edit(repo_copy, "dev", "tf-dist-mnist-test:1.0", "tf-dist-mnist-test:1.1")
    (change,) = plan_json(run, repo_copy, "--stack", "dev")["dev"]["changes"]
    assert (change["action"], change["kind"], change["name"]) == (
        "replace",
        "Job",
        "mnist-smoke-worker-0",
    )
    assert change["fields"] == ["spec.template"]  # a Job's template is immutable
    edit(
        repo_copy,
        "dev",
        "  kubetrain:namespace: ml-dev\n",
        "  kubetrain:namespace: ml-dev\n  kubetrain:nativeWorkload: pod\n",
    )
    edit(repo_copy, "dev", "tf-dist-mnist-test:1.1", "tf-dist-mnist-test:1.0")
    assert run("render", "--stack", "dev", cwd=repo_copy).exit_code == 0
    edit(repo_copy, "dev", "tf-dist-mnist-test:1.0", "tf-dist-mnist-test:1.1")
    (change,) = plan_json(run, repo_copy, "--stack", "dev")["dev"]["changes"]
    assert change["name"] == "mnist-smoke-worker-0" and change["restarts"]
    # The server takes a Pod's new image in place (the kubelet restarts the container): so do
    # Flux and Argo CD. Pulumi's provider replaces a Pod on its image.
    engines = {e: (o["action"], o["restarts"]) for e, o in change["engines"].items()}
    assert engines == {
        "flux": ("change", True),
        "argocd": ("change", True),
        "pulumi": ("replace", True),
        "kubectl": ("change", True),
    }
    assert change["action"] == "replace"
    assert change["engines"]["pulumi"]["field"] == "spec.containers[0].image"
    text = run("plan", "--stack", "dev", cwd=repo_copy).stdout
    assert (
        "      Flux, Argo CD, kubectl: in place, the run restarts; "
        "Pulumi: replaced (spec.containers[0].image), the run restarts\n"
    ) in text


def test_more_trainers_replace_the_trainer_job_and_gpus_are_counted(repo_copy: Path, run) -> None:
    edit(
        repo_copy,
        "staging",
        '          min-instance: 2\n          max-instance: 2\n          resources:\n            requests: {cpu: "4"',
        '          min-instance: 3\n          max-instance: 3\n          resources:\n            requests: {cpu: "4"',
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
    assert {c["kind"] for c in prod["changes"]} >= {"JobSet", "Kustomization", "GitRepository"}


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
    deleted = {(c["kind"], c["name"]) for c in env["changes"] if c["action"] == "delete"}
    assert ("JobSet", "dist-mnist") in deleted  # staging runs dist-mnist as a JobSet
    assert "TFJob ml-staging/dist-mnist" in env["restartedJobs"]
    jobs = env["totals"]["after"]["jobs"]
    assert jobs["TFJob ml-staging/dist-mnist"]["pods"] == 6


def test_a_job_that_leaves_is_a_run_stopped_not_restarted(repo_copy: Path, run) -> None:
    """Deleting a job stops its run; only the jobs that stay restart."""
    (repo_copy / "stacks" / "Pulumi.staging.yaml").write_text(
        (repo_copy / "stacks" / "Pulumi.staging.yaml")
        .read_text()
        .replace(
            "  kubetrain:jobFiles:\n    - stacks/kubeflow-examples/multi-worker-gpu.yaml\n", ""
        )
    )
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    deleted = {c["job"] for c in env["changes"] if c["action"] == "delete"}
    assert len(deleted) == 1
    (job,) = deleted
    assert env["stoppedJobs"] == [job]
    assert job not in env["restartedJobs"]
    assert all(job not in jobs for jobs in env["restartedJobsByEngine"].values())
    text = run("plan", "--stack", "staging", cwd=repo_copy).stdout
    assert f"  runs stopped: {job}\n" in text and "runs restarted" not in text


def test_a_mode_switch_says_old_and_new_pods_run_together(repo_copy: Path, run) -> None:
    """Every engine creates before it deletes: the plan says so, and how to avoid it."""
    edit(
        repo_copy,
        "dev",
        "  kubetrain:namespace: ml-dev\n",
        "  kubetrain:namespace: ml-dev\n  kubetrain:nativeWorkload: pod\n",
    )
    env = plan_json(run, repo_copy, "--stack", "dev")["dev"]
    switched = {c["job"] for c in env["changes"] if c["action"] == "add" and c["kind"] == "Pod"}
    assert switched
    (note,) = [n for n in env["notes"] if "run side by side" in n]
    assert note.startswith(f"{len(switched)} jobs move their pods ({', '.join(sorted(switched))})")
    assert "from Job to Pod objects" in note and "remove the job in one change" in note
    # gitops-engine v3.6.1 prunes first within a sync wave (runTasks); kubectl's deletions run
    # before its apply.
    assert "Argo CD and kubectl (plan --output kubectl) delete the old ones first" in note


def test_a_claim_is_kept_with_its_data_unless_the_stack_prunes_data(repo_copy: Path, run) -> None:
    """PVCs are never pruned by default: the plan says so and how to delete one; with
    kubetrain:pruneData it marks the loss and how to keep the claim. A claim that moves to
    another namespace is a new, empty claim."""
    (repo_copy / "stacks" / "staging" / "strategy-volume.yaml").unlink()
    edit(repo_copy, "staging", "    - stacks/staging/*.yaml\n", "    []\n")
    edit(repo_copy, "staging", "  kubetrain:manifestFiles:\n    []\n", "")
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    (claim,) = [c for c in env["changes"] if c["kind"] == "PersistentVolumeClaim"]
    assert claim["action"] == "delete"
    assert claim["reason"].startswith("left in the cluster with its data")
    assert "kubectl delete persistentvolumeclaim -n ml-staging strategy-volume" in claim["reason"]


def test_a_claim_in_a_pruning_stack_is_marked_as_data_loss(repo_copy: Path, run) -> None:
    edit(
        repo_copy,
        "staging",
        "  kubetrain:namespace: ml-staging\n",
        "  kubetrain:namespace: ml-staging\n  kubetrain:pruneData: true\n",
    )
    assert run("render", "--stack", "staging", cwd=repo_copy).exit_code == 0
    edit(
        repo_copy,
        "staging",
        "  kubetrain:namespace: ml-staging\n",
        "  kubetrain:namespace: ml-research\n",
    )
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    claims = {c["action"]: c for c in env["changes"] if c["kind"] == "PersistentVolumeClaim"}
    assert sorted(claims) == ["add", "delete"]
    assert claims["delete"]["reason"].startswith("DATA LOSS")
    assert (
        "kubectl annotate persistentvolumeclaim -n ml-staging strategy-volume"
        in (claims["delete"]["reason"])
    )
    (note,) = [n for n in env["notes"] if "empty claim" in n]
    assert note.startswith("PersistentVolumeClaim ml-research/strategy-volume is a new, empty")
    assert "the data stays in PersistentVolumeClaim ml-staging/strategy-volume" in note


def kubectl_script(run, cwd: Path, *args: str) -> list[str]:
    result = run("plan", "--output", "kubectl", *args, cwd=cwd)
    assert result.exit_code == 0, result.stderr
    return result.stdout.splitlines()


def test_the_kubectl_view_deletes_what_leaves_and_what_kubectl_cannot_update(
    repo_copy: Path, run
) -> None:
    """`plan --output kubectl`: server-side apply neither prunes nor replaces; the commands
    delete first what leaves and what the server refuses in place (e2e/test_lifecycle.py runs
    them on a real server), never a namespace, claim or CRD."""
    assert [line for line in kubectl_script(run, repo_copy) if not line.startswith("#")] == [
        "set -e"
    ]
    edit(repo_copy, "dev", "tf-dist-mnist-test:1.0", "tf-dist-mnist-test:1.1")
    lines = kubectl_script(run, repo_copy, "--stack", "dev")
    env = plan_json(run, repo_copy, "--stack", "dev")["dev"]
    replaced = [c for c in env["changes"] if c["engines"]["kubectl"]["action"] == "replace"]
    assert replaced and all(c["kind"] == "Job" for c in replaced)
    deletes = [line for line in lines if line.startswith("kubectl delete")]
    assert deletes == [
        f"kubectl delete --ignore-not-found --wait=true --namespace {c['namespace']} "
        f"job.batch/{c['name']}"
        for c in replaced
    ]
    # A deleted stack: everything goes but what no engine deletes; no Flux object of its own.
    (repo_copy / "stacks" / "Pulumi.staging.yaml").unlink()
    staging = plan_json(run, repo_copy)["staging"]
    lines = kubectl_script(run, repo_copy)
    start = lines.index('# environment "staging"')
    mine = lines[start + 1 :]
    deleted = [c for c in staging["changes"] if not c["job"].startswith("GitOps delivery")]
    kept = [line for line in mine if line.startswith("# kept")]
    assert len([line for line in mine if line.startswith("kubectl delete")]) + len(kept) == len(
        deleted
    )
    assert any('"namespace/ml-staging"' in line for line in kept)
    assert not any("kustomize.toolkit.fluxcd.io" in line for line in mine)


def test_the_kubectl_view_quotes_every_name() -> None:
    from kubetrain.delivery.engines import Outcome
    from kubetrain.plan import Change, EnvironmentPlan, Totals, format_kubectl

    hostile = "a'b;$(rm -rf x)\n# c"
    changes = [
        Change("delete", "Pod", hostile, hostile, "Pod x/y"),
        Change("delete", "Namespace", "", hostile, "Pod x/y", kept=True),
        Change(
            "change",
            "PersistentVolumeClaim",
            "ns",
            hostile,
            "Pod x/y",
            engines={"kubectl": Outcome("refused", hostile, False)},
        ),
    ]
    quoted = "a'b;$(rm -rf x) `c`"
    changes.append(Change("delete", "Pod", quoted, quoted, "Pod x/y"))
    plan = EnvironmentPlan(hostile, [], changes, 0, Totals(), Totals())
    lines = format_kubectl([plan]).splitlines()
    # Every line is a comment or a command whose words are the ones given; a name no object
    # can have (a line break) is a comment.
    import shlex

    commands = [line for line in lines if not line.startswith("#")]
    assert commands[0] == "set -e" and len(commands) == 2
    assert shlex.split(commands[1])[-3:] == ["--namespace", quoted, f"pod/{quoted}"]
    assert len(lines) == 4 + 1 + 4


def test_a_refused_edit_under_flux_says_it_stops_the_rest_of_the_step(repo_copy: Path, run) -> None:
    """A claim's access modes cannot change in place and kubetrain never re-creates a claim:
    under Flux the dry-run of the whole Kustomization fails, so nothing else of it applies."""
    claim = repo_copy / "stacks" / "staging" / "strategy-volume.yaml"
    claim.write_text(claim.read_text().replace("[ReadOnlyMany]", "[ReadWriteOnce]"))
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    (change,) = [c for c in env["changes"] if c["kind"] == "PersistentVolumeClaim"]
    assert change["engines"]["flux"]["action"] == "refused"
    (note,) = [n for n in env["notes"] if n.startswith("Flux: ")]
    assert "PersistentVolumeClaim ml-staging/strategy-volume" in note
    assert "none of this environment's other changes" in note
    # Argo CD applies the rest, and its operation waits for the running Jobs (a note too).
    assert change["engines"]["argocd"]["action"] == "refused"
    (held,) = [n for n in env["notes"] if n.startswith("Argo CD: ")]
    assert "PersistentVolumeClaim ml-staging/strategy-volume" in held
    assert "argocd app terminate-op" in held
    # Nothing refused, no such note.
    claim.write_text(claim.read_text().replace("[ReadWriteOnce]", "[ReadOnlyMany]"))
    env = plan_json(run, repo_copy, "--stack", "staging")["staging"]
    assert env["changes"] == [] and not [
        n for n in env["notes"] if n.startswith(("Flux: ", "Argo CD: "))
    ]


def test_the_last_environment_can_be_retired(repo_copy: Path, run) -> None:
    """Every stack file deleted: plan shows each environment's deletion and render removes
    their trees (a project with no stack file and nothing rendered stays an error)."""
    for path in (repo_copy / "stacks").glob("Pulumi.*.yaml"):
        path.unlink()
    plans = plan_json(run, repo_copy)
    assert sorted(plans) == ["dev", "prod", "staging"]
    assert all({c["action"] for c in p["changes"]} == {"delete"} for p in plans.values())
    assert run("render", cwd=repo_copy).exit_code == 0
    assert not [p for p in (repo_copy / "rendered").rglob("*") if p.is_file()]
    assert plan_json(run, repo_copy) == {}
    shutil.rmtree(repo_copy / "rendered")
    result = run("plan", cwd=repo_copy)
    assert result.exit_code == 2 and "no stack files" in result.stderr


def test_a_jobs_externalsecret_is_a_secret_under_pulumi(repo_copy: Path, run) -> None:
    """The Pulumi components build the Secret a job's ExternalSecret stands for (its values the
    stack's kubetrain:credentials, docs/pulumi.md): the plan says so per change, so that the
    lifecycle test reads the Secret under Pulumi (e2e/test_lifecycle.py). An ExternalSecret
    the stack lists as a plain manifest is applied as written by every engine."""
    edit(
        repo_copy,
        "dev",
        "  kubetrain:namespace: ml-dev\n",
        "  kubetrain:namespace: ml-dev\n"
        "  kubetrain:manifests:\n"
        "    - apiVersion: external-secrets.io/v1\n"
        "      kind: ExternalSecret\n"
        "      metadata: {name: team-token}\n"
        "      spec:\n"
        "        secretStoreRef: {kind: ClusterSecretStore, name: vault}\n"
        "        target: {name: team-token}\n"
        "        data: [{secretKey: token, remoteRef: {key: team, property: token}}]\n",
    )
    shutil.rmtree(repo_copy / "rendered" / "dev")
    dev = plan_json(run, repo_copy, "--stack", "dev")["dev"]
    secrets = [c for c in dev["changes"] if c["kind"] == "ExternalSecret"]
    by_name = {c["name"]: c for c in secrets}
    assert {"pi-ssh", "regcred", "cossecretdata-mnist-learner", "team-token"} <= set(by_name)
    assert by_name["team-token"]["deliveredAs"] == {}
    from_jobs = [c for c in secrets if c["name"] != "team-token"]
    assert len(from_jobs) >= 3
    for change in from_jobs:
        assert change["group"] == "external-secrets.io"
        assert change["deliveredAs"] == {"pulumi": {"group": "", "kind": "Secret"}}, change
    others = [c for c in dev["changes"] if c["kind"] != "ExternalSecret"]
    assert others and all(c["deliveredAs"] == {} for c in others)
    (note,) = [n for n in dev["notes"] if n.startswith("Pulumi: under `pulumi up`")]
    assert "ExternalSecret ml-dev/pi-ssh" in note and "team-token" not in note
