"""Golden files: each tests/cases/<case>/ holds a stack (Pulumi.<case>.yaml, job files beside it)
and the tree kubetrain must render for it under expected/, compared byte for byte. A case may
also read the repository's example job files, as ``stacks/<source>-examples/*.yaml``.

Run ``pytest tests/test_golden.py --update-golden`` after an intended change, and review the diff.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO

CASES = sorted(p for p in (REPO / "tests" / "cases").iterdir() if p.is_dir())


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def golden_project(case: Path, tmp_path: Path) -> Path:
    """A project under ``tmp_path`` holding ``case``'s stack and the repository's examples."""
    work = tmp_path / case.name
    shutil.copytree(case, work, ignore=shutil.ignore_patterns("expected"))
    for examples in sorted((REPO / "stacks").glob("*-examples")):
        shutil.copytree(examples, work / "stacks" / examples.name)
    (work / "Pulumi.yaml").write_text("name: kubetrain\nruntime: python\n")
    return work


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case: Path, tmp_path: Path, run, update_golden: bool) -> None:
    work = golden_project(case, tmp_path)
    result = run("render", "--config", f"Pulumi.{case.name}.yaml", "--out", "out", cwd=work)
    assert result.exit_code == 0, result.stderr
    got = tree(work / "out")
    expected_dir = case / "expected"
    if update_golden:
        shutil.rmtree(expected_dir, ignore_errors=True)
        shutil.copytree(work / "out", expected_dir)
    assert expected_dir.is_dir(), f"no golden files for {case.name}: run with --update-golden"
    expected = tree(expected_dir)
    assert sorted(got) == sorted(expected)
    for path in expected:
        assert got[path].decode() == expected[path].decode(), path
