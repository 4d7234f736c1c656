"""GitOps delivery: rendered/clusters/<env>/ with Flux and Argo CD objects, owned like
rendered/<env>, covered by diff, valid against the upstream CRD schemas, and CRDs applied first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubetrain.builders.delivery import delivery_objects
from kubetrain.builders.lifecycle import lifecycle_annotations
from kubetrain.kube.apiextensions import crd_versions, validate_custom_resource
from kubetrain.models.stack import GitOps, StackSettings
from kubetrain.render import plan_files, write_tree

from conftest import REPO, UPSTREAM_CRDS, needs_upstream_crds

STACK = """
config:
  kubetrain:namespace: ml
%s
  kubetrain:jobs:
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {name: mnist}
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: 2
            template: {spec: {containers: [{name: tensorflow, image: tf:2}]}}
"""
GITOPS = """  kubetrain:gitops:
    repoURL: https://git.example.com/ml.git
    branch: release
    engines: [flux, argocd]
    interval: 2m
    projectDir: deploy/training
"""


def crd_issues(obj: dict) -> list[Any]:
    """What the API server would refuse in ``obj``, validated as a custom resource of its kind
    and version in its upstream CRD (../shared/crds): patterns (a GitRepository's url), enums,
    unknown fields, CEL rules (kubetrain.kube.apiextensions, as the apiextensions server)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    for path in sorted((UPSTREAM_CRDS / group).glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if crd and crd["spec"]["names"]["kind"] == obj["kind"]:
                (found,) = [v for v in crd_versions(crd, str(path)) if v.version == version]
                return validate_custom_resource(found.node, obj, namespaced=found.namespaced)
    raise AssertionError(f"no upstream CRD for {obj['apiVersion']} {obj['kind']}")


def load(folder: Path) -> dict[str, dict]:
    return {
        p.relative_to(folder).as_posix(): yaml.safe_load(p.read_text())
        for p in sorted(folder.rglob("*.yaml"))
    }


@needs_upstream_crds
def test_render_writes_flux_and_argocd_objects(project: Path, run) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text(STACK % GITOPS)
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    assert "rendered/clusters/dev: 6 added, 0 changed, 0 removed" in result.stdout
    objs = load(project / "rendered" / "clusters" / "dev")
    # One folder per engine, each with its own kustomization: a cluster applies only its own,
    # and no kustomization lists both (a Flux cluster pointed at it would apply an Application).
    assert sorted(objs) == [
        "argocd/application-kubetrain-dev.yaml",
        "argocd/kustomization.yaml",
        "flux/gitrepository-kubetrain-dev.yaml",
        "flux/kustomization-kubetrain-dev-prerequisites.yaml",
        "flux/kustomization-kubetrain-dev.yaml",
        "flux/kustomization.yaml",
    ]
    source = objs["flux/gitrepository-kubetrain-dev.yaml"]
    assert source["spec"] == {
        "interval": "2m",
        "ref": {"branch": "release"},
        "url": "https://git.example.com/ml.git",
    }
    flux = objs["flux/kustomization-kubetrain-dev.yaml"]
    step = "kubetrain.io/delivery-step"
    prerequisites = objs["flux/kustomization-kubetrain-dev-prerequisites.yaml"]
    for kustomization in (flux, prerequisites):
        # A delete patch per selected object (what it builds: test_the_flux_steps_...).
        (patch,) = kustomization["spec"]["patches"]
        assert patch["patch"].startswith("$patch: delete\n")
    assert {**flux["spec"], "patches": [{"target": flux["spec"]["patches"][0]["target"]}]} == {
        "dependsOn": [{"name": "kubetrain-dev-prerequisites"}],
        "interval": "2m",
        "path": "./deploy/training/rendered/dev",
        "patches": [{"target": {"annotationSelector": f"{step}=prerequisites"}}],
        "prune": True,
        "sourceRef": {"kind": "GitRepository", "name": "kubetrain-dev"},
    }
    # The namespace (and any ServiceAccount...) first, in a Kustomization of its own.
    assert {
        **prerequisites["spec"],
        "patches": [{"target": prerequisites["spec"]["patches"][0]["target"]}],
    } == {
        "interval": "2m",
        "path": "./deploy/training/rendered/dev",
        "patches": [{"target": {"annotationSelector": f"{step}!=prerequisites"}}],
        "prune": True,
        "sourceRef": {"kind": "GitRepository", "name": "kubetrain-dev"},
        "wait": True,
    }
    app = objs["argocd/application-kubetrain-dev.yaml"]
    assert app["metadata"]["namespace"] == "argocd"
    assert app["spec"]["source"] == {
        "path": "deploy/training/rendered/dev",
        "repoURL": "https://git.example.com/ml.git",
        "targetRevision": "release",
    }
    # allowEmpty: retiring the environment (no objects left) must still prune; a retry by
    # default: a Pod re-created by Force=true is created by the retry after its deletion.
    assert app["spec"]["syncPolicy"] == {
        "automated": {"allowEmpty": True, "prune": True, "selfHeal": True},
        "retry": {"backoff": {"duration": "10s", "factor": 2, "maxDuration": "3m"}, "limit": 5},
        "syncOptions": ["ApplyOutOfSyncOnly=true", "PrunePropagationPolicy=background"],
    }
    for name, obj in objs.items():
        if not name.endswith("kustomization.yaml"):  # kustomize's own files
            assert not crd_issues(obj), obj["metadata"]["name"]
    text = (project / "rendered/clusters/dev/flux/kustomization-kubetrain-dev.yaml").read_text()
    assert text.startswith(
        "# Generated by kubetrain from stacks/Pulumi.dev.yaml (GitOps delivery of rendered/dev)."
    )


def test_diff_covers_delivery_and_render_removes_it_with_gitops(project: Path, run) -> None:
    stack = project / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(STACK % GITOPS)
    assert run("render", cwd=project).exit_code == 0
    assert run("diff", cwd=project).exit_code == 0
    stack.write_text(STACK % GITOPS.replace("branch: release", "branch: main"))
    drift = run("diff", cwd=project)
    assert drift.exit_code == 1
    assert "+++ b/rendered/clusters/dev/argocd/application-kubetrain-dev.yaml" in drift.stdout
    assert "+    targetRevision: main" in drift.stdout
    stack.write_text(STACK % "")
    gone = run("diff", cwd=project)
    assert gone.exit_code == 1 and "+++ /dev/null" in gone.stdout
    result = run("render", cwd=project)
    assert "rendered/clusters/dev: 0 added, 0 changed, 6 removed" in result.stdout
    assert not (project / "rendered" / "clusters" / "dev").exists()
    assert run("diff", cwd=project).exit_code == 0


def test_a_foreign_file_in_the_delivery_folder_stops_every_write(project: Path, run) -> None:
    stack = project / "stacks" / "Pulumi.dev.yaml"
    stack.write_text(STACK % GITOPS)
    assert run("render", cwd=project).exit_code == 0
    notes = project / "rendered" / "clusters" / "dev" / "NOTES.md"
    notes.write_text("mine\n")
    stack.write_text((STACK % GITOPS).replace("replicas: 2", "replicas: 3"))
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "rendered/clusters/dev/NOTES.md: not generated by kubetrain" in result.stderr
    assert not (project / "rendered/dev/ml/pod-mnist-worker-2.yaml").exists()
    assert notes.exists()


def test_out_renders_the_env_tree_only(project: Path, run, tmp_path: Path) -> None:
    (project / "stacks" / "Pulumi.dev.yaml").write_text(STACK % GITOPS)
    result = run("render", "--stack", "dev", "--out", str(tmp_path / "out"), cwd=project)
    assert result.exit_code == 0, result.stderr
    assert not (project / "rendered").exists()
    assert (tmp_path / "out" / "kustomization.yaml").exists()


def test_a_stack_name_that_cannot_name_objects(project: Path, run) -> None:
    (project / "stacks" / "Pulumi.Dev_1.yaml").write_text(STACK % GITOPS)
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert (
        "stacks/Pulumi.Dev_1.yaml: config.kubetrain:gitops: the stack name 'Dev_1' cannot name GitOps objects"
        in result.stderr
    )


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "trainingjobs.paddlepaddle.org"},
    "spec": {
        "group": "paddlepaddle.org",
        "names": {"kind": "TrainingJob", "plural": "trainingjobs"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object"}},
            }
        ],
    },
}
CR = {
    "apiVersion": "paddlepaddle.org/v1",
    "kind": "TrainingJob",
    "metadata": {"name": "job-1", "namespace": "ml"},
    "spec": {},
}


def kubectl_kustomize(folder: Path) -> list[dict]:
    kubectl = Path(sys.executable).parent / "kubectl"
    done = subprocess.run(
        [str(kubectl) if kubectl.exists() else "kubectl", "kustomize", str(folder)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


@needs_upstream_crds
def test_crds_are_applied_before_what_needs_them(tmp_path: Path) -> None:
    settings = StackSettings()
    crd = lifecycle_annotations(json.loads(json.dumps(CRD)), settings)
    assert crd["metadata"]["annotations"] == {
        "argocd.argoproj.io/sync-wave": "-1",
        # Never deleted by an engine: every TrainingJob of the cluster would go with it.
        "argocd.argoproj.io/sync-options": "Prune=false,Delete=false",
        "kustomize.toolkit.fluxcd.io/prune": "disabled",
        "pulumi.com/patchForce": "true",
    }
    assert lifecycle_annotations(dict(CR), settings) == CR  # only CRDs
    env = tmp_path / "repo" / "rendered" / "dev"
    write_tree(
        env,
        plan_files(
            [(crd, "TrainingJob CRD"), (CR, "TrainingJob ml/job-1")],
            "stacks/Pulumi.dev.yaml",
            "1.33",
        ),
    )
    top = yaml.safe_load((env / "kustomization.yaml").read_text())
    assert top["resources"] == ["_crds", "ml/trainingjob-job-1.yaml"]
    assert yaml.safe_load((env / "_crds" / "kustomization.yaml").read_text())["resources"] == [
        "customresourcedefinition-trainingjobs.paddlepaddle.org.yaml"
    ]
    # kubectl (and Argo CD, sync waves aside) builds the whole folder ...
    assert [o["kind"] for o in kubectl_kustomize(env)] == [
        "CustomResourceDefinition",
        "TrainingJob",
    ]
    # ... and the CRDs folder alone.
    assert [o["kind"] for o in kubectl_kustomize(env / "_crds")] == ["CustomResourceDefinition"]
    gitops = GitOps.model_validate({"repoURL": "https://git.example.com/ml.git"})
    objs = {o["metadata"]["name"]: o for o in delivery_objects(gitops, "dev", has_crds=True)}
    crds, main = objs["kubetrain-dev-crds"], objs["kubetrain-dev"]
    assert crds["spec"]["path"] == "./rendered/dev/_crds" and crds["spec"]["wait"] is True
    assert main["spec"]["dependsOn"] == [{"name": "kubetrain-dev-crds"}]
    for obj in objs.values():
        assert not crd_issues(obj), obj["metadata"]["name"]
    # What Flux builds for the main Kustomization: the folder with its patches, without CRDs.
    overlay = tmp_path / "repo" / "flux-main"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": ["../rendered/dev"], "patches": main["spec"]["patches"]})
    )
    assert [o["kind"] for o in kubectl_kustomize(overlay)] == ["TrainingJob"]


def engine_steps(env: str) -> dict[str, list[tuple[str, str, str]]]:
    """What each Flux Kustomization of a committed environment builds: its folder with its
    patches, as kustomize-controller builds it (kubectl's kustomize stands in)."""
    folder = REPO / "rendered" / "clusters" / env / "flux"
    out: dict[str, list[tuple[str, str, str]]] = {}
    for path in sorted(folder.glob("kustomization-*.yaml")):
        spec = yaml.safe_load(path.read_text())["spec"]
        built = kubectl_kustomize_text(REPO / spec["path"], spec.get("patches", []))
        out[path.stem.removeprefix("kustomization-")] = sorted(
            (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in built
        )
    return out


def kubectl_kustomize_text(folder: Path, patches: list[dict]) -> list[dict]:
    """``folder`` built with ``patches``, as a Kustomization's spec.patches apply them."""
    with tempfile.TemporaryDirectory() as tmp:
        resource = os.path.relpath(folder.resolve(), tmp)
        overlay = {"resources": [resource], "patches": patches}
        (Path(tmp) / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
        return kubectl_kustomize(Path(tmp))


#: Kinds the API server checks when it admits a pod, and their namespaces; the runtimes the
#: Trainer's and Kueue's webhooks look up when they admit a TrainJob (e2e/test_lifecycle.py).
ADMISSION_PREREQUISITES = {
    "Namespace",
    "ServiceAccount",
    "PriorityClass",
    "LimitRange",
    "ClusterTrainingRuntime",
    "TrainingRuntime",
}


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_the_flux_steps_apply_every_object_once_prerequisites_first(env: str) -> None:
    """Flux dry-runs a whole step before it applies any of it: a Pod whose ServiceAccount comes
    in the same step is refused, and the step never applies (fluxcd/flux2#2772). So the
    admission prerequisites are a step of their own, which the main one depends on, and each
    object belongs to exactly one step."""
    steps = engine_steps(env)
    main, prerequisites = steps[f"kubetrain-{env}"], steps[f"kubetrain-{env}-prerequisites"]
    everything = sorted(
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"])
        for o in kubectl_kustomize(REPO / "rendered" / env)
    )
    assert sorted(o for step in steps.values() for o in step) == everything  # each object once
    assert prerequisites and {k for k, _, _ in prerequisites} <= ADMISSION_PREREQUISITES
    assert not {k for k, _, _ in main} & ADMISSION_PREREQUISITES
    assert {"Job", "Pod", "JobSet"} & {k for k, _, _ in main}
    spec = yaml.safe_load(
        (
            REPO / "rendered" / "clusters" / env / "flux" / f"kustomization-kubetrain-{env}.yaml"
        ).read_text()
    )["spec"]
    assert {"name": f"kubetrain-{env}-prerequisites"} in spec["dependsOn"]


def test_without_crds_there_is_one_kustomization() -> None:
    gitops = GitOps.model_validate(
        {"repoURL": "https://git.example.com/ml.git", "engines": ["flux"]}
    )
    kinds = [
        (o["kind"], o["metadata"]["name"]) for o in delivery_objects(gitops, "prod", has_crds=False)
    ]
    assert kinds == [("GitRepository", "kubetrain-prod"), ("Kustomization", "kubetrain-prod")]
    argo = GitOps.model_validate(
        {"repoURL": "https://git.example.com/ml.git", "engines": ["argocd"], "namespace": "gitops"}
    )
    (app,) = delivery_objects(argo, "prod", has_crds=True)
    assert app["kind"] == "Application" and app["metadata"]["namespace"] == "gitops"


@needs_upstream_crds
@pytest.mark.parametrize("env_name", ["dev", "prod"])
def test_committed_delivery_objects_validate_against_upstream_schemas(env_name: str) -> None:
    folder = REPO / "rendered" / "clusters" / env_name
    objs = load(folder)
    assert len(objs) >= 3
    for name, obj in objs.items():
        if not name.endswith("kustomization.yaml"):  # kustomize's own files
            assert not crd_issues(obj), obj["metadata"]["name"]
    paths = {
        objs[f"flux/kustomization-kubetrain-{env_name}.yaml"]["spec"]["path"],
        *(o["spec"]["source"]["path"] for o in objs.values() if o.get("kind") == "Application"),
    }
    assert {p.removeprefix("./") for p in paths} == {f"rendered/{env_name}"}


@needs_upstream_crds
def test_the_crd_check_refuses_unknown_fields_and_urls_flux_cannot_fetch() -> None:
    """A misspelled field or a url outside the GitRepository's pattern is refused (so the checks
    above can fail)."""
    gitops = GitOps.model_validate({"repoURL": "https://git.example.com/ml.git"})
    source, kustomization = delivery_objects(gitops, "dev", has_crds=False)
    assert not crd_issues(source)
    bad_url = json.loads(json.dumps(source))
    bad_url["spec"]["url"] = "ftp://git.example.com/ml.git"
    assert crd_issues(bad_url)
    misspelled = json.loads(json.dumps(kustomization))
    misspelled["spec"]["dependOn"] = [{"name": "volcano"}]
    assert crd_issues(misspelled)


PLATFORM = {
    "repoURL": "ssh://git@git.example.com/platform/ml.git",
    "engines": ["flux", "argocd"],
    "flux": {
        "secretRef": "ml-deploy-key",
        "dependsOn": [{"name": "external-secrets"}, {"name": "volcano", "namespace": "infra"}],
    },
    "argocd": {
        "project": "ml-platform",
        "retry": {"limit": 5, "backoff": {"duration": "10s", "factor": 3, "maxDuration": "5m"}},
        "finalizer": True,
        "createNamespace": True,
    },
}


@needs_upstream_crds
def test_platform_settings_reach_the_delivery_objects() -> None:
    gitops = GitOps.model_validate(PLATFORM)
    labels = {"pod-security.kubernetes.io/enforce": "restricted"}
    objs = {
        (o["kind"], o["metadata"]["name"]): o
        for o in delivery_objects(
            gitops, "prod", has_crds=True, namespace="ml-prod", namespace_labels=labels
        )
    }
    source = objs["GitRepository", "kubetrain-prod"]
    assert source["spec"]["secretRef"] == {"name": "ml-deploy-key"}
    main = objs["Kustomization", "kubetrain-prod"]
    # The CRDs first, then what the platform installs.
    assert main["spec"]["dependsOn"] == [
        {"name": "kubetrain-prod-crds"},
        {"name": "external-secrets"},
        {"name": "volcano", "namespace": "infra"},
    ]
    assert "dependsOn" not in objs["Kustomization", "kubetrain-prod-crds"]["spec"]
    app = objs["Application", "kubetrain-prod"]
    # Pods are compared without the tolerations admission appends (else out of sync forever,
    # and, the server refusing to remove a toleration, re-created by Force=true on every sync).
    # A TrainJob without the Trainer's and Kueue's additions to its runtimePatches (e2e).
    ignored, trainjob = app["spec"]["ignoreDifferences"]
    assert (ignored["group"], ignored["kind"]) == ("", "Pod")
    assert "node.kubernetes.io/unreachable" in ignored["jqPathExpressions"][0]
    assert (trainjob["group"], trainjob["kind"]) == ("trainer.kubeflow.org", "TrainJob")
    assert trainjob["jqPathExpressions"][0] == ".spec.runtimePatches[]?.time"
    assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
    assert app["spec"]["project"] == "ml-platform"
    assert app["spec"]["destination"] == {
        "namespace": "ml-prod",
        "server": "https://kubernetes.default.svc",
    }
    assert app["spec"]["syncPolicy"] == {
        "automated": {"allowEmpty": True, "prune": True, "selfHeal": True},
        "managedNamespaceMetadata": {"labels": labels},
        "retry": {"backoff": {"duration": "10s", "factor": 3, "maxDuration": "5m"}, "limit": 5},
        "syncOptions": [
            "ApplyOutOfSyncOnly=true",
            "PrunePropagationPolicy=background",
            "CreateNamespace=true",
        ],
    }
    for obj in objs.values():
        assert not crd_issues(obj), obj["metadata"]["name"]


@needs_upstream_crds
def test_an_existing_flux_source_is_reused() -> None:
    gitops = GitOps.model_validate(
        {
            "repoURL": "https://git.example.com/ml.git",
            "flux": {"sourceRef": {"name": "flux-system", "namespace": "flux-system"}},
        }
    )
    objs = delivery_objects(gitops, "dev", has_crds=True)
    assert [o["kind"] for o in objs] == ["Kustomization", "Kustomization"]
    ref = {"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}
    assert all(o["spec"]["sourceRef"] == ref for o in objs)
    for obj in objs:
        assert not crd_issues(obj), obj["metadata"]["name"]


def test_render_writes_the_platform_settings_and_validate_accepts_them(project: Path, run) -> None:
    settings = "  kubetrain:gitops: " + json.dumps(PLATFORM) + "\n"
    (project / "stacks" / "Pulumi.dev.yaml").write_text(STACK % settings)
    result = run("render", cwd=project)
    assert result.exit_code == 0, result.stderr
    app = load(project / "rendered" / "clusters" / "dev")["argocd/application-kubetrain-dev.yaml"]
    assert app["spec"]["destination"]["namespace"] == "ml"
    assert app["spec"]["syncPolicy"]["managedNamespaceMetadata"]["labels"] == {
        f"pod-security.kubernetes.io/{mode}{suffix}": value
        for mode in ("enforce", "audit", "warn")
        for suffix, value in (("", "baseline"), ("-version", "v1.33"))
    }
    checked = run("validate", "rendered/clusters/dev", cwd=project)
    assert checked.exit_code == 0, checked.stdout
