"""Deterministic YAML output: the writer, the ``rendered/`` tree it owns, and diffs against it."""

from .diff import TreeDiff, diff_tree
from .tree import (
    CRDS_DIR,
    GENERATED_MARK,
    KUSTOMIZATION,
    OutputLock,
    PendingTree,
    TreeChange,
    file_header,
    iter_files,
    object_file,
    object_path,
    plan_files,
    plan_grouped_files,
    remove_tree,
    write_tree,
)
from .yamlout import dump

__all__ = [
    "CRDS_DIR",
    "GENERATED_MARK",
    "KUSTOMIZATION",
    "OutputLock",
    "PendingTree",
    "TreeChange",
    "TreeDiff",
    "diff_tree",
    "dump",
    "file_header",
    "iter_files",
    "object_file",
    "object_path",
    "plan_files",
    "plan_grouped_files",
    "remove_tree",
    "write_tree",
]
