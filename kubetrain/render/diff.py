"""Unified diff between a rendered tree on disk and what the stacks produce now."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .tree import read_tree

__all__ = ["SUMMARY_THRESHOLD", "TreeDiff", "diff_tree"]


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


@dataclass(frozen=True)
class TreeDiff:
    """The diff of one folder: its text, and (label, lines added, lines removed) per file."""

    text: str
    files: list[tuple[str, int, int]] = field(default_factory=list)


#: Deleted lines of one folder beyond which ``diff_tree(summarise_deleted=True)`` prints one
#: line per deleted file instead of each line.
SUMMARY_THRESHOLD = 2000


def diff_tree(
    folder: Path, files: Mapping[str, str], label: str, *, summarise_deleted: bool = False
) -> TreeDiff:
    """``git diff``-style text turning ``folder`` into ``files`` (empty when they match).

    With ``summarise_deleted``, when the files deleted whole hold more than
    :data:`SUMMARY_THRESHOLD` lines (a deleted stack of thousands of jobs), each is one line
    (``deleted file <path> (N lines)``) instead of every line of it; the counts still cover
    every line.
    """
    existing = read_tree(folder)
    out: list[str] = []
    changed: list[tuple[str, int, int]] = []
    gone = sum(text.count("\n") for path, text in existing.items() if path not in files)
    summarise = summarise_deleted and gone > SUMMARY_THRESHOLD
    for path in sorted(set(existing) | set(files)):
        old, new = existing.get(path), files.get(path)
        if old == new:
            continue
        before, after = _lines(old or ""), _lines(new or "")
        if new is None and summarise:
            out.append(f"deleted file {label}/{path} ({len(before)} lines)\n")
            changed.append((f"{label}/{path}", 0, len(before)))
            continue
        hunks = list(
            difflib.unified_diff(
                before,
                after,
                fromfile=f"a/{label}/{path}" if old is not None else "/dev/null",
                tofile=f"b/{label}/{path}" if new is not None else "/dev/null",
            )
        )
        body = [line for line in hunks[2:] if not line.startswith("@@")]
        added = sum(line.startswith("+") for line in body)
        removed = sum(line.startswith("-") for line in body)
        out.extend(hunks)
        changed.append((f"{label}/{path}", added, removed))
    return TreeDiff("".join(out), changed)
