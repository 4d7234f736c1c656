"""The layering of AGENTS.md, enforced: kube | parallel <- models | quota | operators <- delivery <- builders
<- render | validate <- convert <- plan <- app <- cli <- console, the core never imports pulumi, and
components use only kube, models, delivery and builders (.importlinter)."""

from __future__ import annotations

import configparser

from importlinter.cli import lint_imports

from kubetrain.models import declarations

from conftest import REPO


def test_import_contracts_are_kept(monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    assert lint_imports(config_filename=str(REPO / ".importlinter"), no_cache=True) == 0


def _contract_modules(name: str) -> set[str]:
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter")
    return set(parser[f"importlinter:contract:{name}"]["modules"].split())


def test_every_kinds_modules_are_kept_independent() -> None:
    """The independence contracts list every declared kind's model, builder and component, so
    a new kind cannot come to lean on another's."""
    documents = [d.document for d in declarations() if d.expanded_as is None]
    assert len(documents) >= 9
    models, builders, parts = (
        _contract_modules(n) for n in ("kind-models", "kind-builders", "kind-components")
    )
    for d in declarations():
        if d.expanded_as is not None:
            continue  # converted first (v1alpha1 TFJob): its module is its expanded kind's
        stem = d.document.__module__.rpartition(".")[2]
        assert d.document.__module__ in models, d.key
        # Its builder and component modules are named as its model's.
        assert (REPO / "kubetrain" / "builders" / f"{stem}.py").is_file(), d.key
        assert f"kubetrain.builders.{stem}" in builders, d.key
        assert (REPO / "components" / f"{stem}.py").is_file(), d.key
        assert f"components.{stem}" in parts, d.key


def test_every_module_of_kubetrain_sits_in_a_layer() -> None:
    """A module or package directly under kubetrain/ is in the layers contract (a new one, as
    quota.py was, would otherwise import what it likes)."""
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter")
    layered = {
        name.strip()
        for line in parser["importlinter:contract:layers"]["layers"].split("\n")
        for name in line.split("|")
        if name.strip()
    }
    root = REPO / "kubetrain"
    found = {
        f"kubetrain.{p.stem}"
        for p in root.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    assert found - layered == set()
