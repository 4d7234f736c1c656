"""The ``rendered/<env>/`` tree: file layout, headers, kustomization, and safe replacement.

Layout: one object per file, ``<namespace>/<kind>-<name>.yaml`` (cluster-scoped objects under
``_cluster/``, CRDs under ``_crds/``), each headed by a comment naming its source and the
Kubernetes version, and a ``kustomization.yaml`` listing every file in install order. Render
owns the folder: it replaces it as a whole, drops files of objects that are gone, and refuses to
touch a folder holding a file it did not generate.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..builders.delivery import CRDS_DIR
from ..models.errors import OwnershipError, Problem
from ..models.source import GENERATED_MARK, display_path
from .yamlout import dump

__all__ = [
    "CRDS_DIR",
    "GENERATED_MARK",
    "KUSTOMIZATION",
    "PendingTree",
    "TreeChange",
    "file_header",
    "generated_for",
    "iter_files",
    "object_path",
    "plan_files",
    "plan_grouped_files",
    "read_tree",
    "remove_tree",
    "write_tree",
]

CLUSTER_SCOPED_DIR = "_cluster"
KUSTOMIZATION = "kustomization.yaml"


def file_header(stack_source: str, what: str, version: str) -> str:
    """The comment heading a generated file: where it came from, that it is generated, and the
    Kubernetes version it targets (read back by ``validate``)."""
    return (
        f"{GENERATED_MARK} from {stack_source} ({what}). Do not edit: change the stack and run "
        f"`kubetrain render`.\n# kubernetes-version: {version}\n"
    )


def is_crd(obj: Mapping[str, Any]) -> bool:
    return obj.get("kind") == "CustomResourceDefinition" and str(
        obj.get("apiVersion", "")
    ).startswith("apiextensions.k8s.io/")


def object_path(obj: Mapping[str, Any]) -> str:
    """``<namespace>/<kind>-<name>.yaml``, ``_cluster/<kind>-<name>.yaml`` for cluster-scoped
    objects, and ``_crds/<kind>-<name>.yaml`` for CRDs (applied first, see ``plan_files``)."""
    meta = obj["metadata"]
    folder = CRDS_DIR if is_crd(obj) else meta.get("namespace") or CLUSTER_SCOPED_DIR
    return f"{folder}/{obj['kind'].lower()}-{meta['name']}.yaml"


def _kustomization(resources: list[str], stack_source: str, version: str) -> str:
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }
    return file_header(stack_source, "kustomization", version) + dump(kustomization)


def iter_files(
    objects: Iterable[tuple[Mapping[str, Any], str]], stack_source: str, version: str
) -> Iterator[tuple[str, str]]:
    """(file path, content) for ``objects`` (each with a description of its source), in the
    order given, then the kustomizations listing them. Lazy, so writing can start before the
    last object is emitted.

    CRDs go to ``_crds/`` with a kustomization of their own, which the top kustomization lists
    first: ``kubectl kustomize`` of the folder builds everything, and GitOps engines can apply
    ``_crds/`` on its own before the rest (see :mod:`kubetrain.builders.delivery`).
    """
    paths: dict[str, None] = {}
    for obj, what in objects:
        path = object_path(obj)
        if path in paths:
            # Two kinds of one name from different API groups: qualify the later one.
            group = obj["apiVersion"].rpartition("/")[0]
            path = path.replace(f"/{obj['kind'].lower()}-", f"/{obj['kind'].lower()}.{group}-", 1)
        paths[path] = None
        yield path, file_header(stack_source, what, version) + dump(obj)
    crds = [p.removeprefix(f"{CRDS_DIR}/") for p in paths if p.startswith(f"{CRDS_DIR}/")]
    others = [p for p in paths if not p.startswith(f"{CRDS_DIR}/")]
    if crds:
        yield f"{CRDS_DIR}/{KUSTOMIZATION}", _kustomization(crds, stack_source, version)
    yield (
        KUSTOMIZATION,
        _kustomization([CRDS_DIR, *others] if crds else others, stack_source, version),
    )


def plan_files(
    objects: Iterable[tuple[Mapping[str, Any], str]], stack_source: str, version: str
) -> dict[str, str]:
    """File path -> content (see :func:`iter_files`)."""
    return dict(iter_files(objects, stack_source, version))


def plan_grouped_files(
    groups: Mapping[str, Iterable[tuple[Mapping[str, Any], str]]], stack_source: str, version: str
) -> dict[str, str]:
    """Objects in one folder per group, ``<group>/<kind>-<name>.yaml``, each folder with its own
    kustomization and the top one listing the folders (the GitOps delivery tree: one folder per
    engine, so a cluster applies only its engine's kinds)."""
    files: dict[str, str] = {}
    for group, objects in sorted(groups.items()):
        paths = []
        for obj, what in objects:
            path = f"{obj['kind'].lower()}-{obj['metadata']['name']}.yaml"
            files[f"{group}/{path}"] = file_header(stack_source, what, version) + dump(obj)
            paths.append(path)
        files[f"{group}/{KUSTOMIZATION}"] = _kustomization(paths, stack_source, version)
    files[KUSTOMIZATION] = _kustomization(sorted(groups), stack_source, version)
    return files


def read_tree(folder: Path) -> dict[str, str]:
    """Relative path -> content of every file under ``folder`` (empty if it does not exist)."""
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    top = str(folder)
    for root, dirs, files in os.walk(top):
        dirs.sort()
        prefix = os.path.relpath(root, top).replace(os.sep, "/")
        prefix = "" if prefix == "." else prefix + "/"
        for name in sorted(files):
            with open(os.path.join(root, name), "rb") as f:
                raw = f.read()
            try:
                out[prefix + name] = raw.decode("utf-8")
            except UnicodeDecodeError:
                out[prefix + name] = ""  # binary: certainly not generated
    return out


def generated_from(text: str) -> str | None:
    """The stack file a generated file names in its header, or ``None`` if kubetrain did not
    generate it."""
    if not text.startswith(GENERATED_MARK + " from "):
        return None
    first = text.partition("\n")[0].removeprefix(GENERATED_MARK + " from ")
    return first.rpartition(" (")[0] or None


def generated_for(text: str) -> str | None:
    """What a generated file says it holds (``TFJob ml/mnist``, ``shared by the stack's jobs``:
    the ``what`` of :func:`file_header`), or ``None`` if kubetrain did not generate it."""
    if generated_from(text) is None:
        return None
    first = text.partition("\n")[0]
    what = first.rpartition(" (")[2].rpartition("). Do not edit")[0]
    return what or None


def foreign_files(existing: Mapping[str, str], source: str | None = None) -> dict[str, str | None]:
    """Files render must never delete, and the stack file each was generated from: ``None``
    when kubetrain did not generate it, another stack file than ``source`` (when given)
    otherwise."""
    out: dict[str, str | None] = {}
    for path, text in sorted(existing.items()):
        origin = generated_from(text)
        if origin is None or (source is not None and origin != source):
            out[path] = origin
    return out


#: Files not generated by kubetrain that are named one by one in an ownership error.
_NAMED_FOREIGN = 5


def _ownership_problems(
    folder: Path, foreign: Mapping[str, str | None], source: str | None
) -> list[Problem]:
    """One problem per stack file the folder was rendered from (a moved or renamed stack file
    gives one message, not one per file) and per file kubetrain did not generate (the first
    few by name, then a count)."""
    shown = display_path(folder)
    problems: list[Problem] = []
    by_origin: dict[str, list[str]] = {}
    for path, origin in foreign.items():
        if origin is not None:
            by_origin.setdefault(origin, []).append(path)
    for origin, paths in sorted(by_origin.items()):
        count = f"{len(paths)} file{'s' if len(paths) != 1 else ''}"
        problems.append(
            Problem(
                shown,
                None,
                (),
                f"holds {count} generated from {origin}, not from {source}; render will not "
                f"replace them. If the stack file was moved or renamed, delete {shown} and "
                "render again; if another stack renders here, give this one another --out",
            )
        )
    ours = [path for path, origin in foreign.items() if origin is None]
    for path in ours[:_NAMED_FOREIGN]:
        problems.append(
            Problem(
                display_path(folder / path),
                None,
                (),
                f"not generated by kubetrain (no '{GENERATED_MARK}' header); render will not "
                f"replace {shown} while it holds this file: move it elsewhere",
            )
        )
    if len(ours) > _NAMED_FOREIGN:
        problems.append(
            Problem(
                shown,
                None,
                (),
                f"and {len(ours) - _NAMED_FOREIGN} more files not generated by kubetrain",
            )
        )
    return problems


@dataclass
class TreeChange:
    """What writing a tree changed."""

    folder: Path
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.changed or self.removed)


def check_ownership(folder: Path, source: str | None = None) -> dict[str, str]:
    """The current content of ``folder``; an :class:`OwnershipError` if anything in it is not
    kubetrain's to replace (with ``source``: not rendered from that stack file)."""
    if folder.exists() and not folder.is_dir():
        raise OwnershipError.single(
            display_path(folder), "is a file, not a folder kubetrain renders into: move it"
        )
    existing = read_tree(folder)
    foreign = foreign_files(existing, source)
    if foreign:
        raise OwnershipError(_ownership_problems(folder, foreign, source))
    return existing


def remove_tree(folder: Path, source: str | None = None) -> TreeChange:
    """Delete ``folder``, which must hold only files kubetrain generated (from ``source``, when
    given); a folder that does not exist is left alone."""
    change = TreeChange(folder)
    if not folder.exists():
        return change
    change.removed = sorted(check_ownership(folder, source))
    retired = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
    os.rmdir(retired)
    os.replace(folder, retired)
    shutil.rmtree(retired)
    return change


class PendingTree:
    """A new tree for ``folder``, being written next to it; :meth:`commit` swaps it in,
    :meth:`abort` throws it away.

    Into an empty or new folder the files are written in the background from the moment the
    tree is created, so a caller can validate the same objects meanwhile (render does) and the
    file system's work overlaps its own. For a folder with files, the new tree is first compared
    with them: an unchanged tree is never touched, and a changed one is written on commit.
    Either way the swap is two renames, so a reader (or a crash) sees the old tree or the new
    one, never half of each.
    """

    def __init__(
        self,
        folder: Path,
        files: Mapping[str, str] | Iterable[tuple[str, str]],
        source: str | None = None,
    ) -> None:
        self.folder = folder
        self.change = TreeChange(folder)
        self._existing = check_ownership(folder, source)
        pairs = files.items() if isinstance(files, Mapping) else files
        self._pairs: Iterable[tuple[str, str]] | None = None
        self._staging: Path | None = None
        self._thread: threading.Thread | None = None
        self._written: list[str] = []
        self._failure: list[BaseException] = []
        self._made: list[Path] = []
        if self._existing:
            produced = dict(pairs)
            existing = self._existing
            self.change.added = sorted(p for p in produced if p not in existing)
            self.change.changed = sorted(
                p for p in produced if p in existing and existing[p] != produced[p]
            )
            self.change.removed = sorted(p for p in existing if p not in produced)
            self._pairs = produced.items()
            return
        self._start(pairs)

    def _start(self, pairs: Iterable[tuple[str, str]]) -> None:
        parent = self.folder.parent
        self._made = [p for p in (parent, *parent.parents) if not p.exists()][::-1]
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{self.folder.name}.tmp-", dir=self.folder.parent))
        self._staging = staging

        def run() -> None:
            try:
                self._written = _write_files(str(staging), pairs)
            except Exception as exc:  # re-raised in the caller's thread by _finish
                self._failure.append(exc)

        self._thread = threading.Thread(target=run, name="kubetrain-tree", daemon=True)
        self._thread.start()

    def _finish(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._failure:
            raise self._failure[0]

    def commit(self) -> TreeChange:
        """Swap the new tree in (nothing happens for an unchanged tree)."""
        if self._existing and self.change.unchanged:
            return self.change
        if self._staging is None:
            assert self._pairs is not None
            self._start(self._pairs)
        staging = self._staging
        assert staging is not None
        try:
            self._finish()
            if not self._existing:
                self.change.added = sorted(self._written)
            os.chmod(staging, 0o755)
            folder = self.folder
            if folder.exists():
                retired = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
                os.rmdir(retired)
                os.replace(folder, retired)
                try:
                    os.replace(staging, folder)
                except OSError:
                    os.replace(retired, folder)
                    raise
                shutil.rmtree(retired)
            else:
                os.replace(staging, folder)
        finally:
            self._discard()
        self._made = []
        return self.change

    def abort(self) -> None:
        """Throw the new tree away; ``folder`` stays as it was."""
        try:
            self._finish()
        except Exception:  # discarded: the caller is already failing for a reason of its own
            pass
        finally:
            self._discard()
            # Folders made only to hold the staging tree go too: a failed render leaves nothing.
            for made in reversed(self._made):
                with contextlib.suppress(OSError):
                    made.rmdir()
            self._made = []

    def _discard(self) -> None:
        if self._staging is not None and self._staging.exists():
            shutil.rmtree(self._staging)
        self._staging = None


def write_tree(
    folder: Path, files: Mapping[str, str] | Iterable[tuple[str, str]], source: str | None = None
) -> TreeChange:
    """Replace ``folder`` with exactly ``files`` (a mapping, or lazily produced pairs); see
    :class:`PendingTree`."""
    return PendingTree(folder, files, source).commit()


_BATCH = 256


def _write_files(root: str, pairs: Iterable[tuple[str, str]]) -> list[str]:
    """Write every (relative path, text) below ``root``; returns the paths.

    Render writes one file per object, so this is on the hot path: the calling thread encodes
    batches of files and a writer thread does the system calls (which release the GIL)."""
    batches: queue.Queue[list[tuple[str, bytes]] | None] = queue.Queue(maxsize=8)
    failure: list[BaseException] = []

    def writer() -> None:
        made = {""}
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        while (batch := batches.get()) is not None:
            if failure:
                continue
            try:
                for rel, data in batch:
                    parent = rel.rpartition("/")[0]
                    if parent not in made:
                        os.makedirs(os.path.join(root, parent), exist_ok=True)
                        made.add(parent)
                    fd = os.open(os.path.join(root, rel), flags, 0o644)
                    try:
                        view = memoryview(data)
                        while view:
                            view = view[os.write(fd, view) :]
                    finally:
                        os.close(fd)
            except OSError as exc:
                failure.append(exc)

    thread = threading.Thread(target=writer, name="kubetrain-writer", daemon=True)
    thread.start()
    names: list[str] = []
    batch: list[tuple[str, bytes]] = []
    try:
        for rel, text in pairs:
            names.append(rel)
            batch.append((rel, text.encode("utf-8")))
            if len(batch) >= _BATCH:
                batches.put(batch)
                batch = []
        if batch:
            batches.put(batch)
    finally:
        batches.put(None)
        thread.join()
    if failure:
        raise failure[0]
    return names
