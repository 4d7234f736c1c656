"""The versions kubetrain declares agree: every pin of constraints.txt lies in pyproject.toml's
range for it, and the Pulumi program and provider install kubetrain with those pins."""

from __future__ import annotations

import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import REPO


def test_pins_lie_in_the_declared_ranges() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = [
        Requirement(r)
        for r in (*project["dependencies"], *project["optional-dependencies"]["pulumi"])
    ]
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[canonicalize_name(name)] = version
    checked = 0
    for requirement in declared:
        pin = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(pin), f"{requirement} does not admit the pin {pin}"
        checked += 1
    assert checked == len(declared) >= 8
    # The floors the provider and the stable identities of shared objects need (issue 11).
    floors = {canonicalize_name(r.name): str(r.specifier) for r in declared}
    assert ">=3.237" in floors["pulumi"] and ">=4.29" in floors["pulumi-kubernetes"]


def test_the_program_and_the_provider_install_kubetrain_at_the_pins() -> None:
    for folder in ("stacks", "provider"):
        lines = [
            line
            for line in (REPO / folder / "requirements.txt").read_text().splitlines()
            if line and not line.startswith("#")
        ]
        assert lines == ["-c ../constraints.txt", "-e ..[pulumi]"], folder
