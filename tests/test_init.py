"""``kubetrain init`` makes a repository that runs end to end, in a fresh folder: it renders and
validates, its Pulumi program deploys the same objects (under mocks), its requirements install
this kubetrain, its CI workflow and pre-commit hooks use them; and it writes through no
symbolic link, all files or none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

import kubetrain
from kubetrain.app import init_project, kubetrain_requirement
from kubetrain.models import InputError

from pulumi_harness import run_program, stack_file_config


@pytest.fixture
def project(tmp_path: Path, run) -> Path:
    result = run("init", "team", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    return tmp_path / "team"


def test_the_project_renders_validates_and_deploys_the_same_objects(
    project: Path, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run("render", cwd=project).exit_code == 0
    assert run("validate", cwd=project).exit_code == 0
    rendered = {
        p.name
        for p in (project / "rendered" / "dev").rglob("*.yaml")
        if p.name != "kustomization.yaml"
    }
    assert len(rendered) >= 6
    pulumi_yaml = yaml.safe_load((project / "Pulumi.yaml").read_text())
    assert (pulumi_yaml["main"], pulumi_yaml["stackConfigDir"]) == ("stacks/", "stacks")
    assert pulumi_yaml["runtime"]["options"]["toolchain"] == "pip"
    # Pulumi runs the program from its folder with the stack's config.
    monkeypatch.chdir(project / "stacks")
    config = stack_file_config(project / "stacks" / "Pulumi.dev.yaml")
    run_ = run_program("dev", config, program=project / "stacks" / "__main__.py")
    registered = {
        f"{r.plain['kind'].lower()}-{r.plain['metadata']['name']}.yaml"
        for r in run_.kubernetes_objects()
    }
    assert registered == rendered


def test_requirements_install_this_kubetrain(project: Path) -> None:
    lines = [
        line
        for line in (project / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines == [kubetrain_requirement()]
    requirement = lines[0]
    assert requirement.startswith("kubetrain[pulumi]")
    if "@ file://" in requirement:  # an install from a source folder: the folder is this one
        folder = Path(requirement.split("@ file://", 1)[1])
        assert (folder / "kubetrain" / "__init__.py").read_text().count(kubetrain.__version__)
    elif "==" in requirement:
        assert requirement.endswith(f"=={kubetrain.__version__}")
    assert (project / "stacks" / "requirements.txt").read_text().splitlines()[-1] == (
        "-r ../requirements.txt"
    )


def test_ci_and_hooks_use_the_requirements(project: Path) -> None:
    workflow = yaml.safe_load((project / ".github/workflows/kubetrain.yml").read_text())
    runs = [s.get("run") for s in workflow["jobs"]["kubetrain"]["steps"] if s.get("run")]
    assert runs[:3] == ["pip install -r requirements.txt", "kubetrain diff", "kubetrain validate"]
    text = (project / ".github/workflows/kubetrain.yml").read_text()
    assert "@v" not in text.replace("actions/checkout@v4", "").replace(
        "actions/setup-python@v5", ""
    ).replace("actions/upload-artifact@v4", "")  # no kubetrain tag that may not exist
    hooks = yaml.safe_load((project / ".pre-commit-config.yaml").read_text())
    (repo,) = hooks["repos"]
    assert repo["repo"] == "local"
    assert {h["entry"] for h in repo["hooks"]} == {"kubetrain render", "kubetrain validate"}
    assert "venv/" in (project / ".gitignore").read_text().splitlines()


def test_init_writes_through_no_symbolic_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "p"
    project.mkdir()
    os.symlink(outside, project / "stacks")
    with pytest.raises(InputError, match="is a symbolic link"):
        init_project(project)
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in project.iterdir()) == ["stacks"]


def test_init_writes_every_file_or_none(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".github").mkdir(parents=True)
    (project / ".github" / "workflows").write_text("a file where a folder goes")
    with pytest.raises(InputError):
        init_project(project)
    assert sorted(p.name for p in project.iterdir()) == [".github"]


@pytest.mark.parametrize(
    ("stack", "words"),
    [("x" * 101, "at most 100 characters"), ("a\x1bb", "'a\\x1bb'"), ("clusters", "reserved")],
    ids=["too-long", "control-character", "reserved"],
)
def test_init_takes_the_stack_names_render_takes(
    tmp_path: Path, run, stack: str, words: str
) -> None:
    result = run("init", "p", "--stack", stack, cwd=tmp_path)
    assert result.exit_code == 2
    assert words in result.stderr and "\x1b" not in result.stderr
    assert not (tmp_path / "p").exists() or not any((tmp_path / "p").iterdir())
