"""``kubetrain init`` makes a repository that runs end to end, in a fresh folder: it renders and
validates, its Pulumi program deploys the same objects (under mocks), its requirements install
this kubetrain, its CI workflow and pre-commit hooks use them; and it writes through no
symbolic link, all files or none."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

import kubetrain
from kubetrain.app import Project, init_project, kubetrain_requirement, write_schemas
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
        assert folder.resolve() == Path(kubetrain.__file__).resolve().parent.parent
    elif "==" in requirement:
        assert requirement.endswith(f"=={kubetrain.__version__}")
    assert (project / "stacks" / "requirements.txt").read_text().splitlines()[-2:] == [
        "-c ../requirements.lock",
        "-r ../requirements.txt",
    ]


def test_ci_and_hooks_use_the_requirements(project: Path) -> None:
    workflow = yaml.safe_load((project / ".github/workflows/kubetrain.yml").read_text())
    runs = [s.get("run") for s in workflow["jobs"]["kubetrain"]["steps"] if s.get("run")]
    assert runs[0].splitlines()[:2] == [
        "pip install --require-hashes --no-deps -r requirements.lock",
        "pip install --no-deps -r requirements.txt",
    ]
    assert runs[1:3] == ["kubetrain diff", "kubetrain validate"]
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


def test_init_in_a_project_adds_an_environment(project: Path, run) -> None:
    """`kubetrain init --stack prod` in a project writes its stack file only; `--from dev`
    copies dev's (with `--namespace`, its namespace replaced); both render and validate."""
    before = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    result = run("init", "--stack", "prod", "--from", "dev", "--namespace", "ml-prod", cwd=project)
    assert result.exit_code == 0, result.stderr
    after = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert sorted(set(after) - set(before)) == ["stacks/Pulumi.prod.yaml"]
    prod = (project / "stacks" / "Pulumi.prod.yaml").read_text()
    dev = (project / "stacks" / "Pulumi.dev.yaml").read_text()
    assert '# Stack "prod": `kubetrain render --stack prod` writes rendered/prod/.' in prod
    assert "kubetrain:namespace: ml-prod" in prod
    assert prod.replace("prod", "dev").replace("ml-dev", "ml") == dev
    assert run("init", "--stack", "qa", cwd=project).exit_code == 0
    assert "kubetrain:namespace: ml\n" in (project / "stacks" / "Pulumi.qa.yaml").read_text()
    assert run("render", cwd=project).exit_code == 0
    assert sorted(p.name for p in (project / "rendered").iterdir()) == ["dev", "prod", "qa"]
    assert run("validate", cwd=project).exit_code == 0
    # An environment that exists is never overwritten; --from must name one.
    again = run("init", "--stack", "prod", cwd=project)
    assert again.exit_code == 2 and "stacks/Pulumi.prod.yaml: exists" in again.stderr
    missing = run("init", "--stack", "stage", "--from", "nope", cwd=project)
    assert missing.exit_code == 2 and "no stack file for nope" in missing.stderr
    assert not (project / "stacks" / "Pulumi.stage.yaml").exists()


def test_the_editor_schemas_of_an_init_project_are_found_by_its_modelines(project: Path) -> None:
    checked = 0
    for file in (
        project / "stacks" / "Pulumi.dev.yaml",
        project / "stacks" / "jobs" / "mnist.yaml",
    ):
        first = file.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=")
        schema = (file.parent / first.split("$schema=", 1)[1]).resolve()
        assert json.loads(schema.read_text())["$comment"].startswith("Generated by kubetrain")
        checked += 1
    assert checked == 2
    # `kubetrain schema` rewrites them (they carry its mark): an upgrade keeps them current.
    written = write_schemas(Project(project))
    assert {p.name for p, _ in written} >= {
        "kubetrain-stack.schema.json",
        "kubetrain-job.schema.json",
    }
