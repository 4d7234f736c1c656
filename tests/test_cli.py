"""The command line contract: exit codes, usage errors, and messages without tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO


def test_version_and_help(run) -> None:
    assert run("--version").stdout.startswith("kubetrain, version ")
    result = run("--help")
    assert result.exit_code == 0
    for command in ("render", "validate", "diff"):
        assert command in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["nope"], id="unknown-command"),
        pytest.param(["validate", "--output", "xml"], id="bad-choice"),
        pytest.param(["render", "--bogus"], id="unknown-option"),
        pytest.param(["validate", "--kubernetes-version", "one"], id="bad-version"),
    ],
)
def test_usage_errors_exit_2(run, args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_render_without_stacks_is_an_input_error(tmp_path: Path, run) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: x\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    result = run("render", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr.strip() == "stacks: no stack files (Pulumi.<env>.yaml) here"


def test_console_script_runs_as_a_process() -> None:
    """The installed entry point, not just the click object, honours the exit codes."""
    exe = Path(sys.executable).parent / "kubetrain"
    done = subprocess.run(
        [str(exe), "validate", "does-not-exist"], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "does-not-exist: no such file or folder"


def test_validate_defaults_to_the_rendered_folder(run) -> None:
    result = run("validate", cwd=REPO)
    assert result.exit_code == 0, result.stdout
    assert "Summary:" in result.stdout and " 0 invalid, 0 errors" in result.stdout
