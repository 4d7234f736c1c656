"""The delivery engines, for real, on one control plane: Flux's controllers, Argo CD's sync
engine, Pulumi, and kubectl as docs/lifecycle.md says to run it.

Each engine has `deliver(env, revision)` (apply what rendered/ holds now, the way the engine
does after a commit) and `retire(env)` (take the environment away, as docs/lifecycle.md says);
both return an `Outcome` saying whether the engine reported success.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from . import tools
from .cluster import ControlPlane, Process, free_port, wait_for
from .crds import documents, install
from .gitserver import commit_all
from .project import Project


@dataclass
class Outcome:
    ok: bool
    detail: str = ""
    report: Any = None


# -- kubectl ------------------------------------------------------------------------------------
class Kubectl:
    """docs/lifecycle.md's path without an engine: before rendering, run the `kubectl delete`
    commands of `kubetrain plan --output kubectl` (what leaves, and what the server refuses in
    place); then `kubetrain render --stack ENV --stdout | kubectl apply --server-side -f -`
    (twice where a stream holds CRDs and their custom resources). Retiring is the same with
    the stack file removed."""

    name = "kubectl"

    def __init__(self, cluster: ControlPlane, project: Project):
        self.cluster = cluster
        self.project = project
        self.scripts: dict[str, str] = {}

    def before_render(self, envs: list[str]) -> None:
        for env in envs:
            self.scripts[env] = self.project.kubetrain(
                "plan", "--stack", env, "--output", "kubectl"
            ).stdout

    def _run(self, script: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, KUBECONFIG=str(self.cluster.kubeconfig))
        env["PATH"] = f"{Path(tools.kubectl()).parent}{os.pathsep}{env.get('PATH', '')}"
        return subprocess.run(
            ["sh", "-c", script], capture_output=True, text=True, env=env, timeout=600
        )

    def deliver(self, env: str, revision: str = "") -> Outcome:
        deleted = self._run(self.scripts.pop(env, ""))
        if deleted.returncode != 0:
            return Outcome(False, deleted.stdout + deleted.stderr)
        stream = self.project.stdout(env)
        first = self.cluster.kubectl(
            "apply", "--server-side", "--field-manager", "kubetrain", "-f", "-",
            input=stream, check=False,
        )  # fmt: skip
        if first.returncode == 0:
            return Outcome(True, first.stdout)
        self.cluster.kubectl(
            "wait", "--for", "condition=Established", "--timeout", "60s", "crd",
            "-l", "app.kubernetes.io/managed-by=kubetrain", check=False,
        )  # fmt: skip
        second = self.cluster.kubectl(
            "apply", "--server-side", "--field-manager", "kubetrain", "-f", "-",
            input=stream, check=False,
        )  # fmt: skip
        return Outcome(second.returncode == 0, second.stdout + second.stderr)

    def retire(self, env: str) -> Outcome:
        (self.project.folder / "stacks" / f"Pulumi.{env}.yaml").unlink()
        script = self.project.kubetrain("plan", "--output", "kubectl").stdout
        deleted = self._run(script)
        self.project.kubetrain("render")
        return Outcome(deleted.returncode == 0, deleted.stdout + deleted.stderr)


# -- Flux ----------------------------------------------------------------------------------------
class Flux:
    """source-controller and kustomize-controller reconciling the Flux objects kubetrain renders
    (rendered/clusters/<env>/flux) from the project's git repository served on loopback."""

    name = "flux"
    namespace = "flux-system"

    def __init__(self, cluster: ControlPlane, project: Project, git_url: str, folder: Path):
        self.cluster = cluster
        self.project = project
        self.git_url = git_url
        self.folder = folder
        self.processes: list[Process] = []

    def start(self) -> Flux:
        source = tools.path("flux-source-controller")
        kustomize = tools.path("flux-kustomize-controller")
        install(self.cluster, documents(source / "crds") + documents(kustomize / "crds"))
        self.cluster.kubectl("create", "namespace", self.namespace, check=False)
        env = {
            **os.environ,
            "KUBECONFIG": str(self.cluster.kubeconfig),
            "RUNTIME_NAMESPACE": self.namespace,
        }
        storage = free_port()
        (self.folder / "storage").mkdir(parents=True, exist_ok=True)
        self.processes.append(Process(
            "source-controller",
            [
                str(source / "source-controller"),
                f"--storage-path={self.folder / 'storage'}",
                f"--storage-addr=127.0.0.1:{storage}",
                f"--storage-adv-addr=127.0.0.1:{storage}",
                f"--metrics-addr=127.0.0.1:{free_port()}",
                f"--health-addr=127.0.0.1:{free_port()}",
                "--enable-leader-election=false", "--watch-all-namespaces=true",
                "--requeue-dependency=2s", "--log-level=info",
            ],
            self.folder / "source-controller.log", env,
        ))  # fmt: skip
        self.processes.append(Process(
            "kustomize-controller",
            [
                str(kustomize / "kustomize-controller"),
                f"--metrics-addr=127.0.0.1:{free_port()}",
                f"--health-addr=127.0.0.1:{free_port()}",
                "--enable-leader-election=false", "--watch-all-namespaces=true",
                "--requeue-dependency=2s", "--no-remote-bases=true", "--log-level=info",
            ],
            self.folder / "kustomize-controller.log", env,
        ))  # fmt: skip
        return self

    def stop(self) -> None:
        for p in self.processes:
            p.stop()

    def _objects(self, env: str) -> list[dict[str, Any]]:
        folder = self.project.folder / "rendered" / "clusters" / env / "flux"
        out = []
        for file in sorted(folder.glob("*.yaml")):
            if file.name == "kustomization.yaml":
                continue
            out.extend(d for d in yaml.safe_load_all(file.read_text()) if d)
        return out

    def deliver(self, env: str, revision: str, timeout: float = 240) -> Outcome:
        """Apply the environment's Flux objects, ask each for a reconcile now, and wait until
        every Kustomization has attempted `revision`."""
        objects = self._objects(env)
        stream = yaml.safe_dump_all(objects)
        self.cluster.kubectl("apply", "--server-side", "-f", "-", input=stream)
        now = datetime.now(UTC).isoformat()
        for obj in objects:
            kind = obj["kind"].lower()
            self.cluster.kubectl(
                "annotate", "-n", self.namespace, "--overwrite", f"{kind}.{_group(obj)}",
                obj["metadata"]["name"], f"reconcile.fluxcd.io/requestedAt={now}",
            )  # fmt: skip
        kustomizations = [o["metadata"]["name"] for o in objects if o["kind"] == "Kustomization"]

        def attempted() -> dict[str, Any] | None:
            states = {}
            for name in kustomizations:
                k = self.cluster.get(
                    f"/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/{self.namespace}"
                    f"/kustomizations/{name}"
                )
                status = (k or {}).get("status") or {}
                ready = _condition(status, "Ready")
                if not status.get("lastAttemptedRevision", "").endswith(revision):
                    if ready and ready.get("reason") == "DependencyNotReady":
                        states[name] = {
                            "ready": False,
                            "reason": "DependencyNotReady",
                            "message": ready.get("message", ""),
                        }
                        continue
                    return None
                if ready is None or ready["status"] == "Unknown":
                    return None
                states[name] = {
                    "ready": ready["status"] == "True",
                    "reason": ready.get("reason", ""),
                    "message": ready.get("message", ""),
                    "lastAppliedRevision": status.get("lastAppliedRevision", ""),
                }
            # A Kustomization waiting for a dependency is done only when a dependency failed.
            waiting = any(s["reason"] == "DependencyNotReady" for s in states.values())
            failed = any(
                not s["ready"] and s["reason"] != "DependencyNotReady" for s in states.values()
            )
            if waiting and not failed:
                return None
            return states

        try:
            for proc in self.processes:
                if not proc.alive():
                    raise RuntimeError(f"{proc.name} exited:\n{proc.tail()}")
            states = wait_for(
                f"Flux reconciling {revision[:8]}", attempted, timeout, self.processes[1], every=0.5
            )
        except TimeoutError as exc:
            return Outcome(False, str(exc))
        ok = all(s["ready"] for s in states.values())
        return Outcome(ok, json.dumps(states, indent=1), states)

    def retire(self, env: str, timeout: float = 180) -> Outcome:
        """Remove the environment from the cluster's bootstrap: delete its Flux objects;
        kustomize-controller garbage-collects what each Kustomization applied."""
        objects = self._objects(env)
        for obj in objects:
            if obj["kind"] == "Kustomization":
                self.cluster.kubectl(
                    "delete", "-n", self.namespace, "kustomization.kustomize.toolkit.fluxcd.io",
                    obj["metadata"]["name"], "--wait=true", "--timeout=180s",
                )  # fmt: skip
        for obj in objects:
            if obj["kind"] != "Kustomization":
                self.cluster.kubectl(
                    "delete", "-n", self.namespace, f"{obj['kind'].lower()}.{_group(obj)}",
                    obj["metadata"]["name"], "--ignore-not-found",
                )  # fmt: skip
        return Outcome(True)


# -- Argo CD ------------------------------------------------------------------------------------
class ArgoCD:
    """Argo CD v3.6.1's sync engine (gitops-engine) running the Application kubetrain renders
    (rendered/clusters/<env>/argocd), as its controller's automated sync does
    (e2e/tools/argocd/cmd/argocd-sync)."""

    name = "argocd"

    def __init__(self, cluster: ControlPlane, project: Project, folder: Path, backoff_scale=0.1):
        self.cluster = cluster
        self.project = project
        self.folder = folder
        self.backoff_scale = backoff_scale
        folder.mkdir(parents=True, exist_ok=True)

    def app_file(self, env: str) -> Path:
        folder = self.project.folder / "rendered" / "clusters" / env / "argocd"
        return next(p for p in sorted(folder.glob("application-*.yaml")))

    def deliver(self, env: str, revision: str, timeout: float = 600) -> Outcome:
        # The engine's log as it runs (a hung sync is read there, KUBETRAIN_E2E_KEEP keeps it).
        log = (self.folder / f"{env}.log").open("a")
        log.write(f"--- argocd-sync {env} {revision}\n")
        log.flush()
        result = subprocess.run(
            [
                str(tools.path("argocd") / "argocd-sync"),
                "--kubeconfig", str(self.cluster.kubeconfig),
                "--app", str(self.app_file(env)),
                "--repo", str(self.project.folder),
                "--revision", revision,
                "--state", str(self.folder / f"{env}.state.json"),
                "--backoff-scale", str(self.backoff_scale),
                "--timeout", f"{int(timeout)}s",
            ],
            stdout=subprocess.PIPE, stderr=log, text=True, timeout=timeout + 60,
        )  # fmt: skip
        log.close()
        if result.returncode == 2 or not result.stdout.strip():
            text = (self.folder / f"{env}.log").read_text()
            return Outcome(False, text[-3000:])
        report = json.loads(result.stdout)
        ok = report["action"] != "synced" or report["phase"] == "Succeeded"
        return Outcome(ok, json.dumps(report, indent=1)[:6000], report)

    def retire(self, env: str) -> Outcome:
        """docs/lifecycle.md, retiring step 2: an Application without its finalizer (kubetrain's
        default) deletes nothing when it goes, so its resources are deleted first, by the
        `kubectl delete` commands `kubetrain plan --output kubectl` prints once the stack file
        is gone (the kubectl path's retirement); then the Application goes (this driver
        registers none in the cluster)."""
        return Kubectl(self.cluster, self.project).retire(env)


# -- Pulumi ---------------------------------------------------------------------------------------
@dataclass
class PulumiEngine:
    cluster: ControlPlane
    project: Project
    folder: Path
    name: str = "pulumi"
    pulumi: Any = field(init=False)
    canaries: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        from .pulumistack import Pulumi

        self.pulumi = Pulumi(self.project.folder, self.cluster.kubeconfig, self.folder)

    def prepare(self, envs: list[str]) -> None:
        """Each stack's credentials set as the platform team would (`pulumi config set --secret
        --path`), with canary values the state must never hold in plain text: the ones the
        program asks for (its error names the command; it lists every missing key once the
        mapping exists, so two rounds are enough)."""
        wanted = re.compile(r"pulumi config set --secret --path '([^']+)' VALUE")
        for env in envs:
            for _ in range(3):
                result = self.pulumi.run("preview", env)
                paths = list(dict.fromkeys(wanted.findall(result.stdout + result.stderr)))
                if not paths:
                    break
                for path in paths:
                    canary = f"kubetrain-canary-{secrets.token_hex(8)}"
                    self.canaries.add(canary)
                    value = canary
                    if "dockerconfigjson" in path:
                        auth = base64.b64encode(f"robot:{canary}".encode()).decode()
                        value = json.dumps({"auths": {"registry.example.com": {"auth": auth}}})
                        self.canaries.add(auth)
                    self.pulumi.cli("config", "set", "--secret", "--path", path, value,
                                    "--stack", env)  # fmt: skip
            commit(self.project, f"pulumi credentials of {env}")

    def plaintext_canaries(self) -> list[str]:
        """Canaries found in plain text in Pulumi's state (every file of the backend)."""
        found = []
        for path in self.pulumi.state_files():
            text = path.read_text(errors="replace")
            found += [f"{path.name}: {c}" for c in sorted(self.canaries) if c in text]
        return found

    def refresh_changes(self, env: str) -> Outcome:
        """`pulumi refresh --expect-no-changes`: after an up, the state is what the cluster has."""
        result = self.pulumi.run("refresh", env, "--expect-no-changes")
        return Outcome(result.ok, result.stdout[-6000:] + result.stderr[-3000:], result)

    def deliver(self, env: str, revision: str = "") -> Outcome:
        result = self.pulumi.run("up", env)
        return Outcome(result.ok, result.stdout[-6000:] + result.stderr[-3000:], result)

    def retire(self, env: str) -> Outcome:
        result = self.pulumi.run("destroy", env)
        return Outcome(result.ok, result.stdout[-6000:] + result.stderr[-3000:], result)


def _group(obj: dict[str, Any]) -> str:
    return obj["apiVersion"].rpartition("/")[0]


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for c in status.get("conditions") or []:
        if c.get("type") == kind:
            return c
    return None


def commit(project: Project, message: str) -> str:
    return commit_all(project.folder, message)


def wait(seconds: float) -> None:
    time.sleep(seconds)
