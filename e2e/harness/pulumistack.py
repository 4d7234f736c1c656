"""`pulumi preview / up / refresh / destroy` of a kubetrain project, for real.

The Pulumi CLI and pulumi-kubernetes' provider are the binaries e2e/build.py built from their
Go modules; the provider is found on PATH (Pulumi's "ambient" plugins), so nothing is
downloaded. State lives in a local backend (`file://`), secrets are encrypted with a
passphrase, PULUMI_HOME is fresh per session.

The program is the project's own (`components.program.main` on the project's `stacks/`, what
`stacks/__main__.py` runs). Pulumi's Python language host (`pulumi-language-python`, a Go
module of its own inside pulumi/pulumi) is not served by the Go module proxy at any version,
so it cannot be built here. What stands in for it is the Python SDK's own language runtime
server, the one Pulumi's Automation API starts for an inline program: the CLI is given
`--client` and runs the program through it, in a fresh Python process per operation (each
operation here is one subprocess, as each `pulumi up` is one process).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import tools

RUNNER = Path(__file__).resolve().parent / "pulumi_run.py"


@dataclass
class PulumiResult:
    op: str
    returncode: int
    summary: dict[str, Any]
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def changes(self) -> dict[str, int]:
        return dict(self.summary.get("resource_changes") or {})


class Pulumi:
    """Pulumi for one project folder against one cluster (its kubeconfig)."""

    def __init__(
        self, project: Path, kubeconfig: Path, home: Path, tools_path: tuple[str, ...] = ()
    ):
        self.project = project
        self.tools_path = tools_path  # more plugins or language hosts, found first
        self.kubeconfig = kubeconfig
        self.home = home
        self.state = home / "state"
        self.state.mkdir(parents=True, exist_ok=True)
        self.passphrase = secrets.token_hex(12)

    def env(self) -> dict[str, str]:
        path = [*self.tools_path, str(tools.path("pulumi")), str(tools.path("pulumi-kubernetes"))]
        env = dict(os.environ)
        env.update(
            {
                "PATH": os.pathsep.join([*path, str(Path(sys.executable).parent), env["PATH"]]),
                "PULUMI_HOME": str(self.home / "home"),
                "PULUMI_BACKEND_URL": f"file://{self.state}",
                "PULUMI_CONFIG_PASSPHRASE": self.passphrase,
                "PULUMI_SKIP_UPDATE_CHECK": "true",
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
                "PULUMI_DIY_BACKEND_NO_LEGACY_WARNING": "true",
                "KUBECONFIG": str(self.kubeconfig),
            }
        )
        return env

    def run(self, op: str, stack: str, *args: str, timeout: float = 900) -> PulumiResult:
        cmd = [sys.executable, str(RUNNER), op, "--project", str(self.project), "--stack", stack]
        result = subprocess.run(
            [*cmd, *args], capture_output=True, text=True, env=self.env(), timeout=timeout
        )
        summary: dict[str, Any] = {}
        for line in result.stdout.splitlines():
            if line.startswith("KUBETRAIN-E2E-RESULT "):
                summary = json.loads(line.removeprefix("KUBETRAIN-E2E-RESULT "))
        return PulumiResult(op, result.returncode, summary, result.stdout, result.stderr)

    def cli(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """The Pulumi CLI itself, in the project folder (`pulumi stack`, `pulumi config`...)."""
        return subprocess.run(
            [str(tools.path("pulumi") / "pulumi"), *args],
            cwd=self.project,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
        )

    def state_files(self) -> list[Path]:
        return sorted(p for p in self.state.rglob("*") if p.is_file())
