"""The layering of DESIGN.md, enforced: kube <- models <- builders <- render | validate <- plan <- app <- cli, the
core never imports pulumi, and components use only kube, models and builders (.importlinter)."""

from __future__ import annotations

from importlinter.cli import lint_imports

from conftest import REPO


def test_import_contracts_are_kept(monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert lint_imports(config_filename=str(REPO / ".importlinter"), no_cache=True) == 0
