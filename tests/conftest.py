"""Shared fixtures: the repository, throwaway projects, and running the CLI in-process."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from kubetrain.cli import main

REPO = Path(__file__).resolve().parent.parent

# A test runner started in the background by a shell without job control (`make test &`, a CI
# step's `nohup`) inherits Ctrl-C ignored, and so would every command the tests start: the
# tests of interruptions would then wait for an interruption that never comes. Ctrl-C is put
# back as a terminal's shell gives it (exec'd children then get the default action too).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Property tests judge results, never speed: no per-example deadline (hypothesis' default of
# 200 ms fails an example that a loaded machine ran slowly) and no health check of how long
# generating data took. Loaded here, before any test module builds its own settings on it.
settings.register_profile("kubetrain", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kubetrain")
#: Upstream files the project is given beside the repository (never copied into it): JSON
#: schemas of third-party kinds, real CRDs and the API-server corpus. Always there in CI.
SHARED = REPO.parent / "shared"
UPSTREAM_SCHEMAS = SHARED / "schemas"
UPSTREAM_CRDS = SHARED / "crds"
#: Objects labelled by a real kube-apiserver (README inside): the oracle of the API's rules.
APISERVER_CORPUS = SHARED / "apiserver-corpus"
#: kubeconform-style location of the upstream CRD schemas.
UPSTREAM_LOCATION = (
    str(UPSTREAM_SCHEMAS) + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
)
#: Marks a test that reads ../shared/schemas (skipped, saying why, when it is absent).
needs_upstream_schemas = pytest.mark.skipif(
    not UPSTREAM_SCHEMAS.is_dir(),
    reason="../shared/schemas (upstream JSON schemas of third-party kinds) is absent; it sits "
    "beside the repository in CI",
)
#: Marks a test that reads ../shared/crds.
needs_upstream_crds = pytest.mark.skipif(
    not UPSTREAM_CRDS.is_dir(),
    reason="../shared/crds (real upstream CRDs) is absent; it sits beside the repository in CI",
)
UPSTREAM_RUNTIMES = SHARED / "upstream" / "trainer-v2.3.0-runtimes"
#: Marks a test that reads ../shared/upstream/trainer-v2.3.0-runtimes.
needs_upstream_runtimes = pytest.mark.skipif(
    not UPSTREAM_RUNTIMES.is_dir(),
    reason="../shared/upstream/trainer-v2.3.0-runtimes (Kubeflow's runtimes) is absent; it sits "
    "beside the repository in CI",
)
#: Marks a test that reads ../shared/apiserver-corpus.
needs_apiserver_corpus = pytest.mark.skipif(
    not APISERVER_CORPUS.is_dir(),
    reason="../shared/apiserver-corpus (objects labelled by a real kube-apiserver) is absent; it "
    "sits beside the repository in CI",
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
    """Run ``kubetrain ARGS`` in-process from a folder (default: the repository), with ``input``
    on standard input."""

    def invoke(*args: str, cwd: Path = REPO, input: str | None = None) -> Result:
        monkeypatch.chdir(cwd)
        result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
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


# --- the agreement table of tests/test_apiserver_corpus.py, printed once at the end ------------

_AGREEMENT: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # user_properties travel from xdist workers to the controller with each report.
    if report.when == "call":
        _AGREEMENT.extend(str(v) for k, v in report.user_properties if k == "agreement")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for table in _AGREEMENT:
        terminalreporter.write_sep("-", "kubetrain validate against kube-apiserver")
        terminalreporter.write_line(table)


@pytest.fixture(scope="session")
def monkeypatch_session() -> Iterator[pytest.MonkeyPatch]:
    """A monkeypatch for hypothesis tests (function-scoped fixtures are not reset between the
    examples of one test): use ``with monkeypatch_session.context() as patch``."""
    with pytest.MonkeyPatch.context() as patch:
        yield patch
