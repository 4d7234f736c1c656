"""A kubetrain project in a temporary folder: the repository's stacks, edited step by step.

Each step changes stack files the way a person would (one job's image, a replica count, a
namespace...), then `kubetrain plan` says what the change will do and `kubetrain render`
writes the new tree, which an engine then applies.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from . import tools

KUBETRAIN = str(Path(sys.executable).parent / "kubetrain")


class Project:
    def __init__(self, folder: Path, source: Path = tools.REPO):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("Pulumi.yaml", "stacks"):
            src = source / name
            if src.is_dir():
                shutil.copytree(src, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(src, folder / name)

    # -- files ------------------------------------------------------------------------------
    def stack_file(self, env: str) -> Path:
        return self.folder / "stacks" / f"Pulumi.{env}.yaml"

    def read_stack(self, env: str) -> dict[str, Any]:
        return yaml.safe_load(self.stack_file(env).read_text())

    def write_stack(self, env: str, data: dict[str, Any]) -> None:
        self.stack_file(env).write_text(yaml.safe_dump(data, sort_keys=False))

    def config(self, env: str) -> dict[str, Any]:
        return self.read_stack(env)["config"]

    def set(self, env: str, key: str, value: Any) -> None:
        """Set `kubetrain:<key>` (None removes it)."""
        data = self.read_stack(env)
        if value is None:
            data["config"].pop(f"kubetrain:{key}", None)
        else:
            data["config"][f"kubetrain:{key}"] = value
        self.write_stack(env, data)

    def clone_stack(self, env: str, new: str, **settings: Any) -> None:
        """A new stack file `new` copied from `env`, with `settings` (kubetrain:KEY) changed."""
        data = self.read_stack(env)
        for key, value in settings.items():
            data["config"][f"kubetrain:{key}"] = value
        self.write_stack(new, data)

    def remove_stack(self, env: str) -> None:
        self.stack_file(env).unlink()

    def job_files(self, env: str) -> list[Path]:
        out: list[Path] = []
        for pattern in self.config(env).get("kubetrain:jobFiles", []):
            out.extend(sorted(self.folder.glob(pattern)))
        return out

    def jobs(self, env: str) -> Iterator[tuple[Path | None, dict[str, Any]]]:
        """Every job document of `env`: (file or None for kubetrain:jobs, document)."""
        for doc in self.config(env).get("kubetrain:jobs", []):
            yield None, doc
        for file in self.job_files(env):
            for doc in yaml.safe_load_all(file.read_text()):
                if isinstance(doc, dict):
                    yield file, doc

    def edit_job(self, env: str, name: str, change: Callable[[dict[str, Any]], Any]) -> None:
        """Apply `change` to the job document named `name` (in the stack or its job file);
        `change` may return a list of documents to replace it (or [] to remove it)."""
        data = self.read_stack(env)
        inline = data["config"].get("kubetrain:jobs", [])
        for i, doc in enumerate(inline):
            if doc["metadata"]["name"] == name:
                new = change(doc)
                if isinstance(new, list):
                    inline[i : i + 1] = new
                self.write_stack(env, data)
                return
        for file in self.job_files(env):
            docs = [d for d in yaml.safe_load_all(file.read_text()) if isinstance(d, dict)]
            for i, doc in enumerate(docs):
                if doc.get("metadata", {}).get("name") == name:
                    new = change(doc)
                    if isinstance(new, list):
                        docs[i : i + 1] = new
                    file.write_text(yaml.safe_dump_all(docs, sort_keys=False))
                    return
        raise KeyError(f"no job {name} in stack {env}")

    def add_job(self, env: str, doc: dict[str, Any]) -> None:
        data = self.read_stack(env)
        data["config"].setdefault("kubetrain:jobs", []).append(doc)
        self.write_stack(env, data)

    # -- commands ---------------------------------------------------------------------------
    def kubetrain(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [KUBETRAIN, *args], cwd=self.folder, capture_output=True, text=True, timeout=600
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"kubetrain {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stdout}\n{result.stderr}"
            )
        return result

    def render(self, *envs: str) -> None:
        args = [a for env in envs for a in ("--stack", env)]
        self.kubetrain("render", *args)

    def plan(self, *envs: str) -> dict[str, dict[str, Any]]:
        """`kubetrain plan --output json`, by environment."""
        args = [a for env in envs for a in ("--stack", env)]
        out = json.loads(self.kubetrain("plan", "--output", "json", *args).stdout)
        return {e["name"]: e for e in out["environments"]}

    def stdout(self, env: str) -> str:
        return self.kubetrain("render", "--stack", env, "--stdout").stdout

    def rendered(self, env: str) -> list[dict[str, Any]]:
        """Every object of rendered/<env> (kustomize's own files excluded)."""
        out = []
        for file in sorted((self.folder / "rendered" / env).rglob("*.yaml")):
            if file.name == "kustomization.yaml":
                continue
            out.extend(d for d in yaml.safe_load_all(file.read_text()) if isinstance(d, dict))
        return out
