"""Unified diff between a rendered tree on disk and what the stacks produce now.

Only files kubetrain generated are shown line by line. Anything else in the tree is drift
render would refuse (a file without kubetrain's header, an empty or binary file, a symbolic
link, a FIFO, an empty folder) and is reported on one line without its content: such a file
may hold a Secret, and a diff ends up in CI logs. A generated file that holds a Secret (a hand
edit: render writes ExternalSecrets, never Secrets) is not shown either.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from ..models.errors import printable
from ..models.source import file_kind
from .tree import Entry, entries, foreign_reason, read_file

__all__ = ["diff_tree"]

# A "kind: Secret" line, in block or flow style.
_SECRET = re.compile(r"""(?m)^\s*(?:-\s+)?["']?kind["']?\s*:\s*["']?Secret["']?\s*,?\s*$""")


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def _read(folder: Path, path: str, entry: Entry) -> tuple[str, str | None]:
    """The text of the file ``path`` of ``folder``, or why it is not shown."""
    why = foreign_reason(folder, path, entry, None)
    if why is not None:
        return "", why
    data = read_file(folder / path)
    if data is None or len(data) != entry.size:
        return "", "it cannot be read whole"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "", "it is not UTF-8 text"
    return text, "it holds a Secret" if _SECRET.search(text) else None


def diff_tree(folder: Path, files: Mapping[str, str], label: str) -> str:
    """``git diff``-style text turning ``folder`` into ``files`` (empty when they match)."""
    try:
        mode: int | None = os.lstat(folder).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISDIR(mode):
        return (
            f"Files a/{printable(label)} and b/{printable(label)} differ "
            f"(not shown: is {file_kind(mode)}, which render never makes)\n"
        )
    existing = dict(entries(folder))
    out: list[str] = []
    for path in sorted(set(existing) | set(files)):
        entry, new = existing.get(path), files.get(path)
        shown = printable(f"{label}/{path}")
        old: str | None = None
        if entry is not None:
            old, why = _read(folder, path, entry)
            if why is not None:
                target = f"b/{shown}" if new is not None else "/dev/null"
                out.append(f"Files a/{shown} and {target} differ (not shown: {why})\n")
                continue
        if old == new:
            continue
        out.extend(
            difflib.unified_diff(
                _lines(old or ""),
                _lines(new or ""),
                fromfile=f"a/{shown}" if old is not None else "/dev/null",
                tofile=f"b/{shown}" if new is not None else "/dev/null",
            )
        )
    return "".join(out)
