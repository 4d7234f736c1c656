"""Unified diff between a rendered tree on disk and what the stacks produce now."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

from .tree import read_tree

__all__ = ["diff_tree"]


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def diff_tree(folder: Path, files: Mapping[str, str], label: str) -> str:
    """``git diff``-style text turning ``folder`` into ``files`` (empty when they match)."""
    existing = read_tree(folder)
    out: list[str] = []
    for path in sorted(set(existing) | set(files)):
        old, new = existing.get(path), files.get(path)
        if old == new:
            continue
        out.extend(
            difflib.unified_diff(
                _lines(old or ""),
                _lines(new or ""),
                fromfile=f"a/{label}/{path}" if old is not None else "/dev/null",
                tofile=f"b/{label}/{path}" if new is not None else "/dev/null",
            )
        )
    return "".join(out)
