"""Unified diff between a rendered tree on disk and what the stacks produce now.

Only files kubetrain generated are shown line by line. Anything else in the tree is drift
render would refuse (a file without kubetrain's header, an empty or binary file, a symbolic
link, a FIFO, an empty folder) and is reported on one line without its content: such a file
may hold a Secret, and a diff ends up in CI logs. A generated file that holds a Secret (a hand
edit: render writes ExternalSecrets, never Secrets), or a changed one that holds what render
refuses as credential material (a planted password), is not shown either.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..models.errors import InputError, printable
from ..models.secrets import (
    configmap_credential_problems,
    credential_problems,
    external_secret_template_problems,
)
from ..models.source import file_kind, load_all
from .tree import Entry, entries, foreign_reason, read_file

__all__ = ["SUMMARY_THRESHOLD", "TreeDiff", "diff_tree"]

# A "kind: Secret" line, in block or flow style.
_SECRET = re.compile(r"""(?m)^\s*(?:-\s+)?["']?kind["']?\s*:\s*["']?Secret["']?\s*,?\s*$""")


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


def _credential_reason(text: str, shown: str) -> str | None:
    """Why a changed generated file is not shown: it holds what render refuses as credential
    material (a hand edit planting a password in an env value, an ExternalSecret template, a
    ConfigMap key), or it cannot be read to tell."""
    try:
        docs = load_all(text, shown)
    except InputError:
        return "it is not YAML kubetrain can read, so it may hold anything"
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        found = credential_problems(doc) + external_secret_template_problems(doc)
        if doc.get("kind") == "ConfigMap":
            found += configmap_credential_problems(doc)
        if found:
            return "it holds what looks like a credential, which render never writes"
    return None


def diff_tree(
    folder: Path, files: Mapping[str, str], label: str, *, summarise_deleted: bool = False
) -> TreeDiff:
    """``git diff``-style text turning ``folder`` into ``files`` (empty when they match).

    With ``summarise_deleted``, when the files deleted whole hold more than
    :data:`SUMMARY_THRESHOLD` lines (a deleted stack of thousands of jobs), each is one line
    (``deleted file <path> (N lines)``) instead of every line of it; the counts still cover
    every line. What render would refuse is one line, ``Files a/... and b/... differ (not
    shown: ...)``, never its content.
    """
    shown_label = printable(label)
    try:
        mode: int | None = os.lstat(folder).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISDIR(mode):
        line = (
            f"Files a/{shown_label} and b/{shown_label} differ "
            f"(not shown: is {file_kind(mode)}, which render never makes)\n"
        )
        return TreeDiff(line, [(shown_label, 0, 0)])
    existing: dict[str, str] = {}
    hidden: dict[str, str] = {}
    for path, entry in entries(folder):
        text, why = _read(folder, path, entry)
        if why is None:
            existing[path] = text
        else:
            hidden[path] = why
    out: list[str] = []
    changed: list[tuple[str, int, int]] = []
    gone = sum(text.count("\n") for path, text in existing.items() if path not in files)
    summarise = summarise_deleted and gone > SUMMARY_THRESHOLD
    for path in sorted(set(existing) | set(hidden) | set(files)):
        old, new = existing.get(path), files.get(path)
        shown = printable(f"{label}/{path}")
        if path in hidden:
            target = f"b/{shown}" if new is not None else "/dev/null"
            out.append(f"Files a/{shown} and {target} differ (not shown: {hidden[path]})\n")
            changed.append((shown, 0, 0))
            continue
        if old == new:
            continue
        if old is not None and (why := _credential_reason(old, shown)) is not None:
            target = f"b/{shown}" if new is not None else "/dev/null"
            out.append(f"Files a/{shown} and {target} differ (not shown: {why})\n")
            changed.append((shown, 0, 0))
            continue
        before, after = _lines(old or ""), _lines(new or "")
        if new is None and summarise:
            out.append(f"deleted file {shown} ({len(before)} lines)\n")
            changed.append((shown, 0, len(before)))
            continue
        hunks = list(
            difflib.unified_diff(
                before,
                after,
                fromfile=f"a/{shown}" if old is not None else "/dev/null",
                tofile=f"b/{shown}" if new is not None else "/dev/null",
            )
        )
        body = [line for line in hunks[2:] if not line.startswith("@@")]
        added = sum(line.startswith("+") for line in body)
        removed = sum(line.startswith("-") for line in body)
        out.extend(hunks)
        changed.append((shown, added, removed))
    return TreeDiff("".join(out), changed)
