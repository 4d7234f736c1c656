"""Shared fixtures: the repository, throwaway projects, and running the CLI in-process."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubetrain.cli import main

REPO = Path(__file__).resolve().parent.parent
_SHARED = REPO.parent / "shared" / "schemas"
UPSTREAM_SCHEMAS = _SHARED if _SHARED.is_dir() else REPO / "tests" / "upstream-schemas"
#: Objects labelled by a real kube-apiserver (README inside): the oracle of the API's rules.
APISERVER_CORPUS = REPO.parent / "shared" / "apiserver-corpus"
#: Upstream CRDs of the kinds kubetrain emits or embeds (Flux, Argo CD, Kubeflow, Volcano...).
UPSTREAM_CRDS = REPO.parent / "shared" / "crds"
#: kubeconform-style location of the upstream CRD schemas kept for the tests.
UPSTREAM_LOCATION = (
    str(UPSTREAM_SCHEMAS) + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="Rewrite the golden files under tests/cases/*/expected from the current output.",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Run ``kubetrain ARGS`` in-process from a folder (default: the repository)."""

    def invoke(*args: str, cwd: Path = REPO) -> Result:
        monkeypatch.chdir(cwd)
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return invoke


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty kubetrain project (Pulumi.yaml with stackConfigDir: stacks)."""
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text(
        "name: kubetrain\nruntime: python\nmain: stacks/\nstackConfigDir: stacks\n"
    )
    return tmp_path


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A copy of the repository's project files (stacks, Pulumi.yaml, rendered)."""
    dest = tmp_path / "repo"
    dest.mkdir()
    shutil.copy(REPO / "Pulumi.yaml", dest)
    shutil.copytree(REPO / "stacks", dest / "stacks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rendered", dest / "rendered")
    return dest
