"""Finding the files: stack files by name (``Pulumi.<env>.yaml``), the project root, and the job
and manifest documents a stack names inline or by glob pattern."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from ...parallel import ChunkMapper, serial
from ..errors import InputError, Problem
from ..source import (
    Document,
    display_path,
    expand_lists,
    leaves_project,
    list_problem,
    load_documents,
    note_glob,
)
from ..stack import CONFIG_NAMESPACE

# Pulumi's stack names: letters, digits, '-', '_' and '.'. kubetrain also refuses a leading
# '.': the name is a folder under rendered/, and ".", ".." or a hidden folder cannot be one.
_STACK_FILE = re.compile(r"^Pulumi\.(?P<name>.+)\.ya?ml$")
_STACK_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*")


def stack_name(path: Path) -> str:
    """``stacks/Pulumi.dev.yaml`` -> ``dev``."""
    m = _STACK_FILE.match(path.name)
    if not m:
        raise InputError.single(
            display_path(path), "a stack file must be named Pulumi.<stack>.yaml"
        )
    problem = stack_name_problem(m["name"])
    if problem:
        raise InputError.single(display_path(path), problem)
    return m["name"]


def stack_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a stack kubetrain renders, or ``None`` (the value is quoted with
    its control characters escaped)."""
    if not _STACK_NAME.fullmatch(name) or len(name) > 100:
        return (
            f"the stack name {name!r} is not one kubetrain can render: letters, digits, "
            "'-', '_' and '.' (not first), at most 100 characters, as Pulumi allows; it names "
            "the folder rendered/<stack>"
        )
    return None


def find_project_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding ``Pulumi.yaml``, else ``start`` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "Pulumi.yaml").is_file() or (folder / "Pulumi.yml").is_file():
            return folder
    return start


def discover_stacks(stacks_dir: Path, names: Sequence[str] = ()) -> list[Path]:
    """Stack files in ``stacks_dir``, all of them or the ``names`` asked for, sorted by name."""
    found: dict[str, Path] = {}
    problems: list[Problem] = []
    for p in sorted(stacks_dir.glob("Pulumi.*.y*ml")):
        if not _STACK_FILE.match(p.name):
            continue
        try:
            found[stack_name(p)] = p
        except InputError as exc:  # said, not skipped: a stack nobody renders is a surprise
            problems += exc.problems
    if problems:
        raise InputError(problems)
    if not names:
        if not found:
            raise InputError.single(
                display_path(stacks_dir), "no stack files (Pulumi.<env>.yaml) here"
            )
        return [found[n] for n in sorted(found)]
    missing = [n for n in names if n not in found]
    if missing:
        known = ", ".join(sorted(found)) or "none"
        raise InputError.single(
            display_path(stacks_dir),
            f"no stack file for {', '.join(missing)} (stacks here: {known})",
        )
    return [found[n] for n in dict.fromkeys(names)]


def stack_documents(
    stack_doc: Document,
    inline: tuple[str, int],
    files: tuple[str, Sequence[str]],
    root: Path,
    problems: list[Problem],
    chunks: ChunkMapper = serial,
) -> Iterator[Document]:
    """The documents of an inline list key (``kubetrain:jobs``) and of the files its glob key
    (``kubetrain:jobFiles``) matches, each file once."""
    key, count = inline
    for i in range(count):
        # A list object (kind: List) is its items, as kubectl and kustomize read it.
        yield from _expanded(stack_doc.sub(("config", f"{CONFIG_NAMESPACE}:{key}", i)), problems)
    files_key, patterns = files
    seen: set[Path] = set()
    inside = root.resolve()
    for i, pattern in enumerate(patterns):
        where = ("config", f"{CONFIG_NAMESPACE}:{files_key}", i)
        if leaves_project(pattern):
            problems.append(
                stack_doc.problem(
                    where,
                    f"{pattern!r} reaches outside the project: patterns are relative to "
                    f"{display_path(root)}, without '..' parts",
                )
            )
            continue
        matches = sorted(glob.glob(pattern, root_dir=root, recursive=True))
        note_glob(root, pattern, matches)
        if not matches:
            problems.append(
                stack_doc.problem(
                    where,
                    f"{pattern!r} matches no file (patterns are relative to {display_path(root)})",
                )
            )
        for match in matches:
            try:
                file = (root / match).resolve(strict=True)
            except (OSError, RuntimeError):  # a dangling link or a loop: reading says which
                file = root / match
            if file in seen or os.path.isdir(file):
                continue
            seen.add(file)
            if not file.is_relative_to(inside):
                problems.append(
                    stack_doc.problem(
                        where,
                        f"{match!r} is a symbolic link to {file}, outside the project: the "
                        "files a stack reads must be inside it",
                    )
                )
                continue
            try:
                for found in load_documents(file, chunks=chunks):
                    yield from _expanded(found, problems)
            except InputError as exc:
                problems += exc.problems


def _expanded(doc: Document, problems: list[Problem]) -> Iterator[Document]:
    """A document, or the items of a list object (kind: List), as kubectl and kustomize read
    it; a list past the bound is a problem, never expanded."""
    if (message := list_problem(doc.data)) is not None:
        problems.append(doc.problem(("items",), message))
        return
    yield from expand_lists(doc)
