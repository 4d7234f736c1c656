"""A release a team can pin: a tag of this repository builds a wheel and an sdist of that
version (setuptools-scm), both pass ``twine check``; the sdist builds again without git; the
wheel carries the lock ``kubetrain init`` copies, which pins every package kubetrain[pulumi]
installs at constraints.txt's versions, closed under their requirements; this repository's
``.pre-commit-hooks.yaml`` is a manifest pre-commit accepts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib.metadata import distribution
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from kubetrain.app import lock_text

from conftest import REPO

TOOLS = Path(sys.executable).parent


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{TOOLS}{os.pathsep}{os.environ['PATH']}"}
    env.pop("SETUPTOOLS_SCM_PRETEND_VERSION", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)


def locked() -> dict[str, str]:
    return {
        canonicalize_name(m[1]): m[2]
        for m in re.finditer(
            r"^([A-Za-z0-9_.-]+)==(\S+) \\\n    --hash=sha256:[0-9a-f]{64}$", lock_text(), re.M
        )
    }


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_tag_builds_a_checked_wheel_and_sdist_of_its_version(tmp_path: Path) -> None:
    source = tmp_path / "kubetrain"
    assert (
        run(
            "git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(source), cwd=tmp_path
        ).returncode
        == 0
    )
    assert (
        run(
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "tag",
            "-a",
            "v9.8.7",
            "-m",
            "r",
            cwd=source,
        ).returncode
        == 0
    )
    dist = tmp_path / "dist"
    built = run(
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--sdist",
        "--wheel",
        "--outdir",
        str(dist),
        cwd=source,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    names = sorted(p.name for p in dist.iterdir())
    assert names == ["kubetrain-9.8.7-py3-none-any.whl", "kubetrain-9.8.7.tar.gz"], names
    checked = run(
        sys.executable,
        "-m",
        "twine",
        "check",
        "--strict",
        *(str(p) for p in dist.iterdir()),
        cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2
    with zipfile.ZipFile(dist / "kubetrain-9.8.7-py3-none-any.whl") as wheel:
        files = set(wheel.namelist())
        assert "kubetrain/lock/requirements.lock" in files and "kubetrain/py.typed" in files
        assert wheel.read("kubetrain/lock/requirements.lock").decode() == lock_text()
        assert not any(f.startswith(("tests/", "rendered/", "e2e/")) for f in files)
    with tarfile.open(dist / "kubetrain-9.8.7.tar.gz") as sdist:
        members = sdist.getnames()
        assert "kubetrain-9.8.7/CHANGELOG.md" in members
        assert not any(
            m.startswith(("kubetrain-9.8.7/rendered/", "kubetrain-9.8.7/e2e/")) for m in members
        )
        sdist.extractall(tmp_path / "unpacked", filter="data")
    # The sdist carries its version (PKG-INFO): it builds again where there is no git.
    again = run(
        sys.executable,
        "-m",
        "build",
        "--no-isolation",
        "--wheel",
        "--outdir",
        str(tmp_path / "again"),
        cwd=tmp_path / "unpacked" / "kubetrain-9.8.7",
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert [p.name for p in (tmp_path / "again").iterdir()] == ["kubetrain-9.8.7-py3-none-any.whl"]


def test_the_lock_pins_what_kubetrain_installs_at_the_constraints() -> None:
    lock = locked()
    pins = {
        canonicalize_name(line.partition("==")[0]): line.partition("==")[2]
        for line in (REPO / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    assert len(lock) >= 30 and lock_text().count("--hash=sha256:") == len(lock)
    assert {name: version for name, version in lock.items() if pins.get(name) != version} == {}
    # Closed: kubetrain[pulumi]'s requirements, and theirs, are all in the lock, at versions
    # they admit (markers as on the CI's Linux and Python 3.11).
    environment = {
        **default_environment(),
        "sys_platform": "linux",
        "platform_system": "Linux",
        "python_version": "3.11",
    }
    todo, seen = [("kubetrain", {"pulumi"})], set()
    checked = 0
    while todo:
        name, extras = todo.pop()
        if (name, frozenset(extras)) in seen:
            continue
        seen.add((name, frozenset(extras)))
        for text in distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker and not any(
                requirement.marker.evaluate({**environment, "extra": e}) for e in extras or {""}
            ):
                continue
            dep = canonicalize_name(requirement.name)
            assert dep in lock, f"{name} needs {requirement}, which the lock lacks"
            assert requirement.specifier.contains(lock[dep], prereleases=True), (
                name,
                requirement,
                lock[dep],
            )
            todo.append((dep, set(requirement.extras)))
            checked += 1
    assert checked >= len(lock)


def test_the_pre_commit_hooks_manifest_is_one_pre_commit_reads() -> None:
    result = run(
        sys.executable,
        "-m",
        "pre_commit",
        "validate-manifest",
        str(REPO / ".pre-commit-hooks.yaml"),
        cwd=REPO,
    )
    assert result.returncode == 0, result.stdout + result.stderr
