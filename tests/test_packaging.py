"""Release-ready packaging: one version (kubetrain.__version__) that the package metadata, the CI
workflow users copy and the pre-commit snippet they paste all name; metadata that builds without
warnings (an SPDX license expression, a setuptools that reads it)."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version as installed_version

from packaging.licenses import canonicalize_license_expression
from packaging.specifiers import SpecifierSet

import kubetrain

from conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
#: The newest release: the first ``## v<version>`` of CHANGELOG.md.
RELEASES = re.findall(r"^## (v\d+\.\d+\.\d+)\s*$", (REPO / "CHANGELOG.md").read_text(), re.M)
TAG = RELEASES[0]


def test_the_version_comes_from_the_release_tag() -> None:
    """setuptools-scm reads the version from the git tag at build time; kubetrain.__version__
    is what was installed (tests/test_release.py builds a release from a tag)."""
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert "setuptools_scm" in PYPROJECT["tool"]
    assert "dynamic" not in PYPROJECT["tool"]["setuptools"]  # no second source of the version
    requires = [r.split(">")[0] for r in PYPROJECT["build-system"]["requires"]]
    assert "setuptools-scm" in requires
    assert installed_version("kubetrain") == kubetrain.__version__  # what pip installed


def test_the_changelog_lists_releases_newest_first() -> None:
    versions = [tuple(int(n) for n in tag[1:].split(".")) for tag in RELEASES]
    assert len(versions) >= 2 and versions == sorted(versions, reverse=True)


def test_ci_workflow_and_pre_commit_snippets_pin_this_version() -> None:
    """Every place that tells users which kubetrain to install names the newest release's tag
    (CHANGELOG.md's first entry), so a release is one tag on the commit that adds its entry."""
    pins = []
    for path in [
        REPO / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "ci").rglob("*.yml")),
    ]:
        text = path.read_text()
        pins += [(path.name, m) for m in re.findall(r"kubetrain(?:\.git)?@(v[\w.]+)", text)]
        pins += [(path.name, m) for m in re.findall(r"^\s*rev:\s*(\S+)", text, re.M)]
    assert pins and [p for p in pins if p[1] != TAG] == []


def test_the_ci_workflow_users_copy_is_the_one_init_writes() -> None:
    """One workflow: it installs the project's requirements.txt (which pins kubetrain), so it
    names no tag of its own that could be missing."""
    from kubetrain.app import _WORKFLOW

    template = (REPO / "ci" / "github-actions" / "kubetrain.yml").read_text()
    assert template.splitlines()[2:] == _WORKFLOW.splitlines()[2:]
    assert "pip install --no-deps -r requirements.txt" in template
    assert "pip install --require-hashes --no-deps -r requirements.lock" in template
    assert (REPO / "docs" / "releasing.md").is_file()


def test_license_is_an_spdx_expression_setuptools_reads() -> None:
    license_ = PYPROJECT["project"]["license"]
    assert isinstance(license_, str)  # not the deprecated {text = ...} table
    assert canonicalize_license_expression(license_) == license_
    (setuptools,) = [
        r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools>")
    ]
    # PEP 639 license expressions are read from setuptools 77 on; older ones warn or fail.
    assert not SpecifierSet(setuptools.removeprefix("setuptools")).contains("76.9")
