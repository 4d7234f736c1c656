"""The documentation stays true: the README is short and indexes every page, links resolve, the
rules table is generated from ``RULES``, and every command the docs show is run (kubetrain's
own in a copy of this project; other tools' commands are checked for what can be checked here).
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kubetrain.validate import RULES

from conftest import REPO, Result

DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
MARKDOWN = [REPO / "README.md", REPO / "AGENTS.md", *PAGES]
RULES_BEGIN = re.compile(r"<!-- rules-table:[^\n]*-->\n")
RULES_END = "<!-- /rules-table -->"
#: Commands of tools that cannot run on a test machine (no Pulumi CLI, no Flux CLI, no
#: kubeconform binary, no cluster) -> the subcommands the docs may show.
EXTERNAL = {
    "pulumi": {
        "login",
        "stack select",
        "stack output",
        "up",
        "preview",
        "config set",
        "package add",
        "install",
    },
    "flux": {"create kustomization"},
    "kubeconform": {""},
}


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def shell_commands(path: Path) -> list[str]:
    """Every command line of the ``sh`` blocks of a Markdown file (continuations joined,
    comments dropped)."""
    out = []
    text = path.read_text(encoding="utf-8")
    for block in re.findall(r"^```(?:sh|bash|console)\n(.*?)^```", text, re.S | re.M):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


COMMANDS = [(page, cmd) for page in MARKDOWN for cmd in shell_commands(page)]


def test_readme_is_short_and_ends_in_a_docs_index() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make render" in readme and "make test" in readme
    last_section = readme.rsplit("\n## ", 1)[1]
    assert last_section.startswith("Documentation")
    assert PAGES, "docs/ holds pages"
    linked = {(REPO / link).resolve() for link in re.findall(r"\]\(([^)#]+)\)", last_section)}
    missing = [_relative(page) for page in PAGES if page.resolve() not in linked]
    assert not missing, f"pages the README's index does not list: {missing}"


def _section(text: str, title: str) -> str:
    parts = [part for part in text.split("\n## ") if part.startswith(title + "\n")]
    assert len(parts) == 1, f"one section {title!r}"
    return parts[0]


def test_readme_limits_section_states_the_bounds_the_code_checks() -> None:
    from kubetrain.models.limits import (
        MAX_OBJECT_BYTES,
        MAX_OBJECTS,
        MAX_OUTPUT_BYTES,
        MAX_REPLICAS,
    )

    limits = _section((REPO / "README.md").read_text(encoding="utf-8"), "Limits")
    stated = {
        f"{MAX_REPLICAS:,} replicas",
        f"{MAX_OBJECTS:,} objects",
        f"{MAX_OUTPUT_BYTES // 2**20} MiB of YAML",
        f"{MAX_OBJECT_BYTES / 2**20:g} MiB per object",
    }
    assert {phrase for phrase in stated if phrase in " ".join(limits.split())} == stated
    assert "docs/limits.md" in limits


def test_readme_security_section_links_the_security_page() -> None:
    security = _section((REPO / "README.md").read_text(encoding="utf-8"), "Security")
    assert "credential" in security and "docs/security.md" in security


@pytest.mark.parametrize("page", MARKDOWN, ids=_relative)
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    links = [
        link
        for link in re.findall(r"\]\(([^)\s]+)\)", text)
        if not re.match(r"[a-z]+:", link) and not link.startswith("#")
    ]
    broken = [link for link in links if not (page.parent / link.split("#")[0]).exists()]
    assert not broken, f"{_relative(page)} links to missing files: {broken}"


def rules_table() -> str:
    rows = [f"| `{rule}` | {text} |" for rule, text in RULES.items()]
    return "\n".join(["| rule | what it checks |", "|---|---|", *rows]) + "\n"


def test_rules_table_is_generated_from_rules(update_golden: bool) -> None:
    page = DOCS / "validation.md"
    text = page.read_text(encoding="utf-8")
    begin = RULES_BEGIN.search(text)
    assert begin and RULES_END in text, "docs/validation.md marks its rules table"
    end = text.index(RULES_END, begin.end())
    expected = text[: begin.end()] + rules_table() + text[end:]
    if update_golden:
        page.write_text(expected, encoding="utf-8")
    assert text == expected, "docs/validation.md's rules table is stale: --update-golden"
    assert all(f"| `{rule}` |" in text for rule in RULES)


def test_docs_show_commands() -> None:
    tools = {shlex.split(cmd)[0] for _, cmd in COMMANDS}
    assert {"kubetrain", "make", "pulumi"} <= tools


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """This project's stacks, job files, schemas and rendered tree, to run commands against."""
    for name in ("stacks", "rendered", "schemas"):
        shutil.copytree(REPO / name, tmp_path / name)
    shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    return tmp_path


@pytest.mark.parametrize(
    ("page", "command"),
    [c for c in COMMANDS if c[1].startswith("kubetrain ")],
    ids=lambda v: _relative(v) if isinstance(v, Path) else str(v),
)
def test_kubetrain_commands_in_the_docs_run(
    page: Path, command: str, project_copy: Path, run: Callable[..., Result]
) -> None:
    """Each command exits 0; a pipeline of kubetrain commands (``render --stdout | validate -``)
    runs each with the previous one's output on standard input, and ``> file`` writes the last
    one's output to that file."""
    stdin = None
    command, _, target = command.partition(" > ")
    for part in command.split(" | "):
        tool, *args = shlex.split(part)
        assert tool == "kubetrain", f"{_relative(page)}: `{command}` pipes into {tool}"
        result = run(*args, cwd=project_copy, input=stdin)
        assert result.exit_code == 0, f"{_relative(page)}: `{part}` -> {result.stderr}"
        stdin = result.stdout
    if target:
        (project_copy / target.strip()).write_text(stdin or "")
        assert (project_copy / target.strip()).stat().st_size > 0


def test_make_targets_in_the_docs_exist() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    shown = [cmd for _, cmd in COMMANDS if cmd.startswith("make ")]
    assert shown
    for cmd in shown:
        assert set(shlex.split(cmd)[1:]) <= targets, cmd


def test_other_tools_commands_are_known_subcommands() -> None:
    """Pulumi, Flux and kubeconform cannot run here: the docs may only show their subcommands
    listed in EXTERNAL, and every ``pulumi config set --path`` of a credential names one that
    the example stacks' jobs read."""
    checked = 0
    for page, cmd in COMMANDS:
        tool, *rest = shlex.split(cmd)
        if tool not in EXTERNAL:
            continue
        words = [w for w in rest if not w.startswith("-")]
        assert any(" ".join(words[: len(sub.split())]) == sub for sub in EXTERNAL[tool]), (
            f"{_relative(page)}: `{cmd}` is not a known {tool} command"
        )
        checked += 1
    assert checked


def _credential_markers(value: object) -> list[tuple[str, str]]:
    """(credential, key) of every credential marker in a Pulumi-mode manifest."""
    if isinstance(value, dict):
        if (marker := value.get("$kubetrainCredential")) is not None:
            return [(marker["name"], marker["key"])]
        return [m for v in value.values() for m in _credential_markers(v)]
    if isinstance(value, list):
        return [m for v in value for m in _credential_markers(v)]
    return []


def test_credential_commands_name_credentials_the_stacks_read() -> None:
    from kubetrain.app import Project, load_stacks
    from kubetrain.builders import build_stack

    project = Project(REPO)
    needed = {
        marker
        for stack in load_stacks(project.stack_files(), project)
        for built in build_stack(stack, "pulumi")
        for marker in _credential_markers(built.obj)
    }
    shown = set()
    for _, cmd in COMMANDS:
        if match := re.search(r"kubetrain:credentials\.([\w/-]+)\.([\w.-]+)'", cmd):
            shown.add((match.group(1), match.group(2)))
    assert shown, "the docs show how to set credentials"
    assert shown <= needed, f"credentials the example stacks do not read: {shown - needed}"


def test_the_readme_stack_example_renders_without_warnings(
    project_copy: Path, run: Callable[..., Result]
) -> None:
    """The stack file the README shows is a real one: it renders, and its inline job draws no
    warning (the job files it names are the repository's own examples)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(config:\n.*?)^```", readme, re.S | re.M)
    assert len(blocks) == 1
    (project_copy / "stacks" / "Pulumi.readme.yaml").write_text(blocks[0], encoding="utf-8")
    result = run(
        "render", "--config", "stacks/Pulumi.readme.yaml", "--out", "out", cwd=project_copy
    )
    assert result.exit_code == 0, result.stderr
    assert (project_copy / "out" / "ml-dev" / "service-mnist-ps-0.yaml").is_file()
    assert "config.kubetrain:jobs[0]" not in result.stderr
