"""kubetrain's components from another Pulumi language, for real (docs/pulumi.md, "From another
Pulumi language"): Pulumi YAML's language host, built from pulumi-yaml's Go module, runs the
program of provider/examples/yaml, whose `kubetrain:index:TFJob` the package in provider/
constructs.

Pulumi starts a package of `runtime: python` (provider/PulumiPlugin.yaml) through its Python
language host, which cannot be built here (e2e/harness/pulumistack.py says why). What stands in
is what that host runs: provider/__main__.py with the engine's address, by the test
environment's Python, as the plugin `pulumi-resource-kubetrain`, installed from a local path
with `pulumi plugin install --file` (so the program names no `packages:` path). Everything else
is Pulumi's own: the CLI, the YAML runtime reading the package's schema from the plugin, the
engine, pulumi-kubernetes.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import yaml

from harness import tools
from harness.cluster import ControlPlane
from harness.pulumistack import Pulumi

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "provider" / "examples" / "yaml" / "Pulumi.yaml"
NAMESPACE = "kubetrain-yaml"


def _plugin(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    plugin = folder / "pulumi-resource-kubetrain"
    plugin.write_text(
        "#!/bin/sh\n"
        f"export PYTHONPATH='{REPO}'\n"
        f"exec '{sys.executable}' '{REPO / 'provider' / '__main__.py'}' \"$@\"\n"
    )
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    return folder


def _program(folder: Path) -> dict:
    program = yaml.safe_load(EXAMPLE.read_text())
    program.pop("packages")  # the installed plugin instead (see the module docstring)
    program["resources"]["dist-mnist"]["properties"]["metadata"]["namespace"] = NAMESPACE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    return program


def _objects(cluster: ControlPlane, kind: str) -> list[str]:
    listing = cluster.kubectl(
        "get", kind, "-n", NAMESPACE, "-l", "training.kubeflow.org/job-name=dist-mnist",
        "-o", "json",
    )  # fmt: skip
    return sorted(o["metadata"]["name"] for o in json.loads(listing.stdout)["items"])


def test_a_yaml_program_builds_a_tfjob_through_the_package(cluster, kubelet, tmp_path):
    program = _program(tmp_path / "program")
    specs = program["resources"]["dist-mnist"]["properties"]["spec"]["tfReplicaSpecs"]
    expected = sorted(
        f"dist-mnist-{kind.lower()}-{i}" for kind, s in specs.items() for i in range(s["replicas"])
    )
    assert len(expected) == 6
    cluster.kubectl("create", "namespace", NAMESPACE)
    yaml_host = str(tools.path("pulumi-yaml"))
    pulumi = Pulumi(tmp_path / "program", cluster.kubeconfig, tmp_path / "pulumi", (yaml_host,))

    def cli(*args: str) -> str:
        done = pulumi.cli(*args, timeout=600)
        assert done.returncode == 0, (
            f"pulumi {' '.join(args)}:\n{done.stdout[-4000:]}{done.stderr[-3000:]}"
        )
        return done.stdout

    plugin = _plugin(tmp_path / "plugins") / "pulumi-resource-kubetrain"
    cli("plugin", "install", "resource", "kubetrain", "0.0.0-e2e", "--file", str(plugin))
    assert "kubetrain" in cli("plugin", "ls")
    cli("stack", "init", "dev")
    cli("up", "--yes", "--skip-preview", "--stack", "dev")
    # The component built the native TFJob: a Job and a Service per replica, as render does.
    assert _objects(cluster, "jobs") == expected
    assert _objects(cluster, "services") == expected
    outputs = json.loads(cli("stack", "output", "--json", "--stack", "dev"))
    assert outputs["clusterSpec"]["ps"] == [
        f"dist-mnist-ps-{i}.{NAMESPACE}.svc.cluster.local:2222" for i in range(2)
    ]
    state = json.loads(cli("stack", "export", "--stack", "dev"))
    types = {r["type"] for r in state["deployment"]["resources"]}
    assert "kubetrain:index:TFJob" in types and "kubernetes:batch/v1:Job" in types
    # A second up changes nothing; destroy takes it all away.
    again = cli("preview", "--expect-no-changes", "--stack", "dev")
    assert "dist-mnist" in again
    cli("destroy", "--yes", "--stack", "dev")
    assert _objects(cluster, "jobs") == [] and _objects(cluster, "services") == []
