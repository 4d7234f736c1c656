"""Style and types are part of the suite: ruff (lint and format) and mypy on the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "."], id="ruff-check"),
        pytest.param(["ruff", "format", "--check", "."], id="ruff-format"),
        pytest.param(["mypy"], id="mypy"),
        # The Pulumi program and the provider entry point (both named __main__, so apart).
        pytest.param(["mypy", "stacks/__main__.py"], id="mypy-program"),
        pytest.param(["mypy", "provider/__main__.py"], id="mypy-provider"),
    ],
)
def test_tool_is_clean(command: list[str]) -> None:
    done = subprocess.run(
        [str(BIN / command[0]), *command[1:]], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
