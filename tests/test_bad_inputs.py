"""Bad input exits 2 with ``FILE:LINE: path: message``, no traceback, nothing written.

Each file in tests/bad/ is a stack file with one mistake; its first line says the error line
expected on stderr. Where the message lists what kubetrain generates (its kinds, say), `` ... ``
stands for any text, so adding a kind changes no fixture.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

BAD = sorted((REPO / "tests" / "bad").glob("*.yaml"))


def expected(case: Path) -> str:
    first = case.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{case.name}: first line must be '# expect: ...'"
    return first.removeprefix("# expect: ")


def says(stderr: str, expect: str) -> bool:
    """Whether one line of ``stderr`` holds ``expect``, each `` ... `` in it matching any text."""
    pattern = ".*".join(re.escape(part) for part in expect.split(" ... "))
    return any(re.search(pattern, line) for line in stderr.splitlines())


def test_the_wildcard_matches_within_one_line_only() -> None:
    assert says("a: x b c\n", "a: ... c")
    assert not says("a: x\nb c\n", "a: ... c")


@pytest.mark.parametrize("case", BAD, ids=[c.stem for c in BAD])
def test_bad_stack_exits_2_naming_file_line_and_field(case: Path, project: Path, run) -> None:
    (project / "stacks" / "Pulumi.bad.yaml").write_text(case.read_text())
    result = run("render", cwd=project)
    assert result.exit_code == 2, result.stderr
    assert says(result.stderr, expected(case)), result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / "rendered").exists()


def test_every_bad_case_is_distinct() -> None:
    messages = [expected(c) for c in BAD]
    assert len(set(messages)) == len(messages)


def test_error_in_a_job_file_names_that_file(project: Path, run) -> None:
    (project / "stacks" / "jobs").mkdir()
    (project / "stacks" / "jobs" / "a.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: ok}\n"
        "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}}}\n"
        "---\n"
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: bad}\n"
        "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas: many\n"
    )
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        "config:\n  kubetrain:jobFiles: ['stacks/jobs/*.yaml']\n"
    )
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert (
        "stacks/jobs/a.yaml:12: spec.tfReplicaSpecs.Worker.replicas: "
        "Input should be a valid integer, got 'many'"
    ) in result.stderr


def test_all_problems_of_all_stacks_are_reported_together(project: Path, run) -> None:
    (project / "stacks" / "Pulumi.a.yaml").write_text("config:\n  kubetrain:mode: x\n")
    (project / "stacks" / "Pulumi.b.yaml").write_text("config:\n  kubetrain:gangScheduler: x\n")
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "stacks/Pulumi.a.yaml:2: config.kubetrain:mode" in result.stderr
    assert "stacks/Pulumi.b.yaml:2: config.kubetrain:gangScheduler" in result.stderr


def test_reserved_stack_name(project: Path, run) -> None:
    (project / "stacks" / "Pulumi.clusters.yaml").write_text("config: {}\n")
    result = run("render", cwd=project)
    assert result.exit_code == 2
    assert "the stack name 'clusters' is reserved" in result.stderr
