"""Why a job or manifest the last render held is gone: its file fell out of the stack's patterns.

A job file renamed from ``x.yaml`` to ``x.yml`` matches ``stacks/*.yaml`` no more: its jobs
vanish from the next render, and a GitOps engine with pruning deletes them from the cluster,
with no error anywhere. :func:`removal_causes` looks, for the jobs and manifests leaving an
environment, for a file of the project that still holds them but no pattern of
``kubetrain:jobFiles`` / ``kubetrain:manifestFiles`` matches; ``render`` and ``plan`` say so.

Bounded: only the folders the patterns name are looked in (not below them unless a pattern has
``**``), at most :data:`MAX_FILES` files of YAML or JSON, each read as every input is
(:func:`kubetrain.models.source.load_documents`: size and shape limits); a file that cannot be
read is skipped, since it is not part of the stack.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable
from pathlib import Path

from .errors import InputError
from .source import display_path, load_documents

__all__ = ["MAX_FILES", "removal_causes"]

#: Files looked at, at most, when something leaves an environment.
MAX_FILES = 500
_SUFFIXES = (".yaml", ".yml", ".json")


def _folders(patterns: Iterable[str]) -> list[tuple[str, bool]]:
    """(folder relative to the root, recursive) of each pattern: its leading parts without
    glob characters; recursive when anything but the file name has one."""
    out = []
    for pattern in patterns:
        parts = pattern.split("/")[:-1]
        head: list[str] = []
        for part in parts:
            if glob.has_magic(part):
                break
            head.append(part)
        out.append(("/".join(head), len(head) < len(parts)))
    return out


def removal_causes(
    root: Path,
    patterns: dict[str, Iterable[str]],
    loaded_files: set[str],
    gone: set[str],
    default_namespace: str,
) -> dict[str, str]:
    """For each title in ``gone`` (``TFJob ml/mnist``) whose document sits in a file of the
    project that no pattern loads: why it is gone. ``patterns`` maps each stack key
    (``jobFiles``, ``manifestFiles``) to its patterns; ``loaded_files`` holds the display paths
    of the files the stack read."""
    if not gone:
        return {}
    causes: dict[str, str] = {}
    looked = 0
    for key, key_patterns in patterns.items():
        key_patterns = list(key_patterns)
        shown = ", ".join(repr(p) for p in key_patterns)
        for folder, recursive in _folders(key_patterns):
            base = root / folder
            if not base.is_dir():
                continue
            found = sorted(base.rglob("*") if recursive else base.iterdir())
            for path in found:
                if looked >= MAX_FILES or len(causes) == len(gone):
                    return causes
                if path.suffix not in _SUFFIXES or not path.is_file() or path.is_symlink():
                    continue
                shown_path = display_path(path)
                if shown_path in loaded_files:
                    continue
                looked += 1
                try:
                    docs = load_documents(path)
                except (InputError, OSError, UnicodeDecodeError):
                    continue
                for doc in docs:
                    title = _title(doc.data, default_namespace)
                    if title in gone and title not in causes:
                        causes[title] = (
                            f"its document is in {shown_path}, which no pattern of "
                            f"kubetrain:{key} ({shown}) matches"
                        )
    return causes


def _title(data: object, default_namespace: str) -> str | None:
    if not isinstance(data, dict):
        return None
    meta = data.get("metadata")
    kind = data.get("kind")
    if not isinstance(meta, dict) or not isinstance(kind, str):
        return None
    name, namespace = meta.get("name"), meta.get("namespace") or default_namespace
    if not isinstance(name, str) or not isinstance(namespace, str):
        return None
    return f"{kind} {namespace}/{name}"
