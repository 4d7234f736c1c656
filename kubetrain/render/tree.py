"""The ``rendered/<env>/`` tree: file layout, headers, kustomization, and safe replacement.

Layout: one object per file, ``<namespace>/<kind>-<name>.yaml`` (cluster-scoped objects under
``_cluster/``, CRDs under ``_crds/``), each headed by a comment naming its source and the
Kubernetes version, and a ``kustomization.yaml`` listing every file in install order. Render
owns the folder: it replaces it as a whole, drops files of objects that are gone, and refuses to
touch a folder holding anything it did not make: a file without its header (or rendered from
another stack), a symbolic link, a FIFO, a device, a socket, an empty folder. The check looks
at each entry's type before opening anything, reads only the first line of regular files, and
stops at the first foreign entry.

Writers lock the folder they write into (:class:`OutputLock`), so two renders never interleave;
the lock also clears what a killed render left (staging folders next to the trees).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from ..builders.delivery import CRDS_DIR
from ..kube import catalog
from ..models.errors import InputError, OwnershipError, Problem
from ..models.limits import MAX_FILE_BYTES
from ..models.source import GENERATED_MARK, display_path, file_kind
from ..parallel import ChunkMapper, Forked, background, interrupts_held, serial
from .yamlout import dump

__all__ = [
    "CRDS_DIR",
    "GENERATED_MARK",
    "KUSTOMIZATION",
    "Entry",
    "OutputLock",
    "PendingTree",
    "TreeChange",
    "check_ownership",
    "entries",
    "file_header",
    "generated_for",
    "iter_files",
    "object_file",
    "object_path",
    "plan_files",
    "plan_grouped_files",
    "read_file",
    "read_tree",
    "remove_tree",
    "write_tree",
]

CLUSTER_SCOPED_DIR = "_cluster"
#: Objects worth a process of their own when files are written as YAML on several cores (an
#: object takes about 15 microseconds), and files worth a writing process (a file takes about
#: 10 microseconds to write, far more on a slow disk).
OBJECTS_PER_PROCESS = 2000
FILES_PER_PROCESS = 500
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
    objects, and ``_crds/<kind>-<name>.yaml`` for CRDs (applied first, see ``plan_files``).
    ``<kind>`` is the row's :attr:`kubetrain.kube.catalog.Kind.file_stem`: a kind named as one
    of Kubernetes' own in another group (Volcano's Job) is qualified by its group."""
    meta = obj["metadata"]
    folder = CRDS_DIR if is_crd(obj) else meta.get("namespace") or CLUSTER_SCOPED_DIR
    return f"{folder}/{catalog.of(obj).file_stem}-{meta['name']}.yaml"


def object_file(
    obj: Mapping[str, Any], what: str, stack_source: str, version: str
) -> tuple[str, str]:
    """The file of one object as :func:`iter_files` first lays it out: its path (before a
    clash of two kinds' names is resolved) and its text."""
    return object_path(obj), file_header(stack_source, what, version) + dump(obj)


def _kustomization(resources: list[str], stack_source: str, version: str) -> str:
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": resources,
    }
    return file_header(stack_source, "kustomization", version) + dump(kustomization)


def iter_files(
    objects: Iterable[tuple[Mapping[str, Any], str]],
    stack_source: str,
    version: str,
    chunks: ChunkMapper = serial,
    laid_out: Sequence[tuple[str, str]] | None = None,
    *,
    kustomizations: bool = True,
) -> Iterator[tuple[str, str]]:
    """(file path, content) for ``objects`` (each with a description of its source), in the
    order given, then the kustomizations listing them (not ``kustomizations``: the objects'
    files only, as one stream of them holds). The objects are written as YAML
    independently of each other, by ``chunks`` (:mod:`kubetrain.parallel`), unless
    ``laid_out`` gives each one's :func:`object_file` already.

    CRDs go to ``_crds/`` with a kustomization of their own, which the top kustomization lists
    first: ``kubectl kustomize`` of the folder builds everything, and GitOps engines can apply
    ``_crds/`` on its own before the rest (see :mod:`kubetrain.builders.delivery`).
    """
    pairs = list(objects)
    files = (
        chunks(
            lambda part: [object_file(obj, what, stack_source, version) for obj, what in part],
            pairs,
            per_process=OBJECTS_PER_PROCESS,
        )
        if laid_out is None
        else laid_out
    )
    paths: dict[str, None] = {}
    for (obj, _), (path, text) in zip(pairs, files, strict=True):
        if path in paths:
            # Two kinds of one name from different API groups: qualify the later one.
            group = obj["apiVersion"].rpartition("/")[0]
            stem = catalog.of(obj).file_stem
            path = path.replace(f"/{stem}-", f"/{obj['kind'].lower()}.{group}-", 1)
        paths[path] = None
        yield path, text
    if not kustomizations:
        return
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
    kustomization (the GitOps delivery tree: one folder per engine, each usable alone, so a
    cluster pointed at its engine's folder applies only that engine's kinds). No kustomization
    lists the folders together: a Flux-only cluster pointed at one would apply an Argo CD
    Application too."""
    files: dict[str, str] = {}
    for group, objects in sorted(groups.items()):
        paths = []
        for obj, what in objects:
            path = f"{obj['kind'].lower()}-{obj['metadata']['name']}.yaml"
            files[f"{group}/{path}"] = file_header(stack_source, what, version) + dump(obj)
            paths.append(path)
        files[f"{group}/{KUSTOMIZATION}"] = _kustomization(paths, stack_source, version)
    return files


# --- what a folder holds ------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One entry under a folder: a regular file (``kind == "file"``) and its size, or anything
    else, described for messages (``a symbolic link``, ``a named pipe (FIFO)``, ``an empty
    folder``)."""

    kind: str
    size: int = 0

    @property
    def is_file(self) -> bool:
        return self.kind == "file"


def entries(folder: Path) -> Iterator[tuple[str, Entry]]:
    """Every entry under ``folder`` (``/``-separated relative path, :class:`Entry`), sorted per
    folder, without following symbolic links or opening anything. A folder holding entries is
    not listed itself; an empty one is. Nothing when ``folder`` does not exist."""
    todo: list[tuple[str, str]] = [(str(folder), "")]
    while todo:
        path, prefix = todo.pop()
        try:
            with os.scandir(path) as it:
                found = sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            if not prefix:
                return
            raise
        except OSError as exc:
            raise _named(exc, path) from None
        if not found and prefix:
            yield prefix.rstrip("/"), Entry("an empty folder")
        folders = []
        for e in found:
            rel = prefix + e.name
            try:
                if e.is_symlink():
                    yield rel, Entry("a symbolic link")
                elif e.is_dir(follow_symlinks=False):
                    folders.append((e.path, rel + "/"))
                else:
                    info = e.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode):
                        yield rel, Entry("file", info.st_size)
                    else:
                        yield rel, Entry(file_kind(info.st_mode))
            except OSError as exc:
                raise _named(exc, e.path) from None
        todo += reversed(folders)


def _named(exc: OSError, path: str | os.PathLike[str]) -> OSError:
    """``exc`` naming ``path`` when it names nothing (ENOSPC from a write, shutil's refusals)."""
    if exc.filename is None:
        exc.filename = os.fspath(path)
    return exc


def read_file(path: Path, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """Up to ``limit`` bytes of the regular file ``path`` (``None`` if it is anything else, now:
    a symbolic link or a FIFO put there meanwhile is never followed or waited on)."""
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_NONBLOCK", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size < limit and (chunk := os.read(fd, min(1 << 20, limit - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_tree(folder: Path) -> dict[str, str]:
    """Relative path -> text of every regular file under ``folder`` (empty if it does not
    exist), read as :func:`entries` finds them: no link followed, no FIFO or device opened, a
    binary file read as ``""`` (certainly not generated), each file at most
    :data:`~kubetrain.models.limits.MAX_FILE_BYTES`."""
    out: dict[str, str] = {}
    for rel, entry in entries(folder):
        data = read_file(folder / rel) if entry.is_file else None
        if data is not None:
            out[rel] = data.decode("utf-8", errors="replace") if _is_utf8(data) else ""
    return out


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def generated_from(text: str) -> str | None:
    """The stack file a generated file names in its header, or ``None`` if kubetrain did not
    generate it."""
    if not text.startswith(GENERATED_MARK + " from "):
        return None
    first = text.partition("\n")[0].removeprefix(GENERATED_MARK + " from ")
    return first.rpartition(" (")[0] or None


def foreign_reason(folder: Path, rel: str, entry: Entry, source: str | None) -> str | None:
    """Why render must not replace the entry ``rel`` of ``folder`` (``None``: it is kubetrain's):
    not a regular file, not generated by kubetrain, or (with ``source``) generated from another
    stack file. Only the first line of a file is read."""
    why, origin = _judge(folder, rel, entry)
    if why is None and source is not None and origin != source:
        return f"generated from {origin}, not from {source}"
    return why


def _judge(folder: Path, rel: str, entry: Entry) -> tuple[str | None, str | None]:
    """(why the entry is not kubetrain's at all, or ``None``; the stack file a generated file
    names), from the entry's type and the first line of a regular file."""
    if not entry.is_file:
        return f"is {entry.kind}, which render never makes", None
    head = read_file(folder / rel, 1024)
    if head is None:
        return "cannot be read as a regular file", None
    origin = generated_from(head.decode("utf-8", errors="replace"))
    if origin is None:
        return f"not generated by kubetrain (no '{GENERATED_MARK}' header)", None
    return None, origin


def generated_for(text: str) -> str | None:
    """What a generated file says it holds (``TFJob ml/mnist``, ``shared by the stack's jobs``:
    the ``what`` of :func:`file_header`), or ``None`` if kubetrain did not generate it."""
    if generated_from(text) is None:
        return None
    first = text.partition("\n")[0]
    what = first.rpartition(" (")[2].rpartition("). Do not edit")[0]
    return what or None


def _elsewhere_problems(
    folder: Path, elsewhere: Mapping[str, str], source: str | None
) -> list[Problem]:
    """One problem per stack file the folder's files were rendered from instead of ``source``
    (a moved or renamed stack file gives one message, not one per file)."""
    shown = display_path(folder)
    by_origin: dict[str, list[str]] = {}
    for path, origin in elsewhere.items():
        by_origin.setdefault(origin, []).append(path)
    problems = []
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


def check_ownership(folder: Path, source: str | None = None) -> dict[str, int]:
    """The files of ``folder`` and their sizes; an :class:`OwnershipError` at the first entry
    that is not kubetrain's to replace (see :func:`foreign_reason`), or if ``folder`` itself is
    not a plain folder."""
    shown = display_path(folder)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _named(exc, folder) from None
    if not stat.S_ISDIR(mode):
        what = "a file" if stat.S_ISREG(mode) else file_kind(mode)
        raise OwnershipError.single(
            shown, f"is {what}, not a folder kubetrain renders into: move it"
        )
    sizes: dict[str, int] = {}
    elsewhere: dict[str, str] = {}
    for rel, entry in entries(folder):
        why, origin = _judge(folder, rel, entry)
        if why is not None:  # the first entry render did not make ends the scan
            this = "this file" if entry.is_file else "this"
            message = (
                f"{why}; render will not replace {shown} while it holds {this}: move it elsewhere"
            )
            raise OwnershipError([Problem(display_path(folder / rel), None, (), message)])
        if source is not None and origin is not None and origin != source:
            elsewhere[rel] = origin
        sizes[rel] = entry.size
    if elsewhere:
        raise OwnershipError(_elsewhere_problems(folder, elsewhere, source))
    return sizes


def remove_tree(folder: Path, source: str | None = None) -> TreeChange:
    """Delete ``folder``, which must hold only files kubetrain generated (from ``source``, when
    given); a folder that does not exist is left alone."""
    change = TreeChange(folder)
    if not os.path.lexists(folder):
        return change
    change.removed = sorted(check_ownership(folder, source))
    with _naming(folder):
        retired = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent))
        os.rmdir(retired)
        os.replace(folder, retired)
        shutil.rmtree(retired)
    return change


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """OS errors inside name ``path`` when they name nothing themselves."""
    try:
        yield
    except OSError as exc:
        raise _named(exc, path) from None


# --- the lock, and what killed renders left ------------------------------------------------------

# mkdtemp's names: ".<folder>.tmp-<8 characters>" (staging) and ".<folder>.old-<...>" (retired).
_LEFTOVER = re.compile(r"^\.(?P<folder>.+)\.(?P<what>tmp|old)-[a-z0-9_]{8}$")


class OutputLock:
    """Exclusive use of the folders render writes ``trees`` into (``rendered/``, the parent of
    an ``--out``), for one render at a time.

    Entering creates missing folders (remembered, and removed again on exit if still empty, so
    a failed first render leaves no empty ``rendered/``), takes an advisory lock on each (a
    second render fails at once rather than mixing its files into the first's, bypassing the
    ownership check), then clears what a killed render left of these trees: their staging
    folders are removed, and a tree retired by a render killed in the middle of its swap is put
    back. Nothing else in those folders is touched.
    """

    def __init__(self, trees: Iterable[Path]) -> None:
        self.trees = sorted({Path(t) for t in trees})
        self._fds: list[int] = []
        self._made: list[Path] = []

    def __enter__(self) -> OutputLock:
        try:
            parents: dict[Path, set[str]] = {}
            for tree in self.trees:
                parents.setdefault(tree.parent, set()).add(tree.name)
            for folder, names in sorted(parents.items()):
                missing = [p for p in (folder, *folder.parents) if not os.path.lexists(p)]
                _must_be_folder(next(p for p in (folder, *folder.parents) if p not in missing))
                self._made += missing[::-1]
                with _naming(folder):
                    folder.mkdir(parents=True, exist_ok=True)
                    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                self._fds.append(fd)
                if not _lock(fd):
                    raise InputError.single(
                        display_path(folder),
                        "another kubetrain render is writing here; run again when it is done",
                    )
                _clear_leftovers(folder, names)
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release(failed=kind is not None)

    def _release(self, *, failed: bool = False) -> None:
        if failed and self._fds:
            # Still holding every lock: a staging folder an interruption left unregistered (its
            # writer never started, or has stopped) goes too.
            for tree in self.trees:
                with contextlib.suppress(OSError):
                    _clear_leftovers(tree.parent, {tree.name})
        for fd in self._fds:
            os.close(fd)  # closing the descriptor releases its lock
        self._fds = []
        for made in sorted(set(self._made), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                made.rmdir()  # only when still empty
        self._made = []


def _must_be_folder(path: Path) -> None:
    """An input error unless ``path`` (an existing ancestor of an output folder) is a folder."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise _named(exc, path) from None
    if not stat.S_ISDIR(mode):
        raise InputError.single(
            display_path(path), f"is {file_kind(mode)}, not a folder to render into"
        )


def _lock(fd: int) -> bool:
    """An exclusive advisory lock on ``fd`` without waiting (``False``: someone holds it)."""
    if sys.platform == "win32":  # pragma: no cover - no flock; renders are not locked there
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _clear_leftovers(parent: Path, trees: set[str]) -> None:
    """Remove the staging folders a killed render left in ``parent`` for the folders ``trees``;
    put back a tree a render killed between the two renames of its swap had retired (its
    folder is missing then)."""
    try:
        with os.scandir(parent) as it:
            found = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
    except OSError as exc:
        raise _named(exc, parent) from None
    for name, is_dir in found:
        m = _LEFTOVER.fullmatch(name)
        if m is None or not is_dir or m["folder"] not in trees:
            continue
        path = parent / name
        target = parent / m["folder"]
        with _naming(path):
            if m["what"] == "old" and not os.path.lexists(target):
                os.replace(path, target)
            else:
                shutil.rmtree(path)


# --- writing ------------------------------------------------------------------------------------


class PendingTree:
    """A new tree for ``folder``, being written next to it; :meth:`commit` swaps it in,
    :meth:`abort` throws it away.

    Into an empty or new folder the files are written in the background from the moment the
    tree is started, so a caller can validate the same objects meanwhile (render does) and the
    file system's work overlaps its own: by a forked process where :mod:`kubetrain.parallel`
    can fork (a thread would wait for the interpreter lock between its system calls while the
    caller computes), else by a thread. Should the process fail or die, the tree is written
    again here, so an error is raised as it would be without it. For a folder with files, the
    new tree is first compared with them (reading only files whose size matches): an unchanged
    tree is never touched, and a changed one is written on commit. Either way the swap is two
    renames, so a reader (or a crash) sees the old tree or the new one, never half of each. The
    staging folder is removed only once the writer has stopped, even when the render is
    interrupted.
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
        self._done = threading.Event()
        self._process: Forked[list[str]] | None = None
        self._cancel = threading.Event()
        self._written: list[str] = []
        self._failure: list[BaseException] = []
        self._made: list[Path] = []
        if not self._existing:
            self._pairs = pairs
            return
        produced = dict(pairs)
        existing = self._existing
        self.change.added = sorted(p for p in produced if p not in existing)
        self.change.changed = sorted(
            p for p in produced if p in existing and not self._same(p, produced[p])
        )
        self.change.removed = sorted(p for p in existing if p not in produced)
        self._pairs = produced.items()

    def start(self, expected: int | None = None) -> PendingTree:
        """Start writing an empty or new folder's tree in the background (a folder with files is
        written on :meth:`commit`). Separate from creating the tree, so a caller can keep the
        tree where its ``finally`` will :meth:`abort` it before any writer exists. Files given
        lazily are laid out by the writer (``expected``: about how many there are)."""
        if not self._existing and self._staging is None:
            assert self._pairs is not None
            self._start(self._pairs, expected)
        return self

    def _same(self, rel: str, text: str) -> bool:
        data = text.encode("utf-8")
        if self._existing[rel] != len(data):
            return False
        return read_file(self.folder / rel, len(data) + 1) == data

    def _start(self, pairs: Iterable[tuple[str, str]], expected: int | None = None) -> None:
        parent = self.folder.parent
        self._made = [p for p in (parent, *parent.parents) if not p.exists()][::-1]
        with _naming(parent):
            parent.mkdir(parents=True, exist_ok=True)
            self._staging = staging = Path(
                tempfile.mkdtemp(prefix=f".{self.folder.name}.tmp-", dir=parent)
            )
        cancel = self._cancel
        count = len(pairs) if isinstance(pairs, Sized) else expected
        with interrupts_held():
            if count is not None and count >= FILES_PER_PROCESS:
                # Lazily given files are laid out by the writing process too; here they stay
                # unread, for writing the tree again should that process fail.
                self._process = background(lambda: _write_files(str(staging), pairs))
        if self._process is not None:
            return

        done = self._done = threading.Event()

        def run() -> None:
            try:
                with interrupts_held():  # Ctrl-C goes to the main thread, which stops this one
                    self._written = _write_files(str(staging), pairs, cancel)
            except Exception as exc:  # re-raised in the caller's thread by _finish
                self._failure.append(exc)
            finally:
                done.set()

        self._thread = threading.Thread(target=run, name="kubetrain-tree", daemon=True)
        self._thread.start()

    def _wait_process(self) -> None:
        """Wait for the writing process; should it have failed, write the tree again here (into
        an emptied staging folder), raising what writing raises."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            ok, written = process.result()
        finally:
            process.close(kill=True)  # interrupted while waiting: the writer stops too
        if ok and written is not None:
            self._written = written
            return
        staging = self._staging
        assert staging is not None and self._pairs is not None
        try:
            with _naming(staging):
                shutil.rmtree(staging)
                staging.mkdir(mode=0o700)
            self._written = _write_files(str(staging), self._pairs, self._cancel)
        except OSError as exc:
            raise self._as_final(exc) from None

    def _join(self) -> None:
        """Wait for the writer, however often the wait is interrupted (Ctrl-C): nothing may
        remove the staging folder while it still writes. An interruption stops the writer and
        is raised again once it has stopped."""
        if self._process is not None:
            if self._cancel.is_set():
                self._process.close(kill=True)
                self._process = None
            else:
                self._wait_process()
        if self._thread is not None:
            interrupted = wait_for(self._done, self._cancel)
            self._thread = None
            if interrupted is not None:
                raise interrupted

    def _finish(self) -> None:
        try:
            self._join()
            if self._failure:
                raise self._failure[0]
        except OSError as exc:
            raise self._as_final(exc) from None

    def _as_final(self, exc: OSError) -> OSError:
        """``exc`` naming the path it concerns in ``folder`` rather than in the staging folder
        (``rendered/dev/ml/x.yaml``, not ``rendered/.dev.tmp-1a2b3c4d/ml/x.yaml``): the staging
        folder is gone once the error is shown."""
        staging = os.fspath(self._staging) if self._staging is not None else None
        for attribute in ("filename", "filename2"):
            name = getattr(exc, attribute, None)
            if staging is None or not isinstance(name, str):
                continue
            if name == staging or name.startswith(staging + os.sep):
                setattr(exc, attribute, os.fspath(self.folder) + name[len(staging) :])
        return exc

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
            folder = self.folder
            # The swap, and the removal of the tree it retires, Ctrl-C held: every folder holds
            # its old tree or its new one, and nothing set aside is left behind.
            with interrupts_held(), _naming(folder), self._final_names():
                os.chmod(staging, 0o755)
                if os.path.lexists(folder):
                    retired = Path(
                        tempfile.mkdtemp(prefix=f".{folder.name}.old-", dir=folder.parent)
                    )
                    os.rmdir(retired)
                    os.replace(folder, retired)
                    try:
                        os.replace(staging, folder)
                    except BaseException:
                        os.replace(retired, folder)
                        raise
                    shutil.rmtree(retired)
                else:
                    os.replace(staging, folder)
        finally:
            self._discard()
        self._made = []
        return self.change

    @contextlib.contextmanager
    def _final_names(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            raise self._as_final(exc) from None

    def abort(self) -> None:
        """Throw the new tree away; ``folder`` stays as it was."""
        self._cancel.set()
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
        self._cancel.set()
        try:
            self._join()
        finally:
            # Nothing writes into the staging folder any more: removed whole, Ctrl-C held
            # until it is gone (a second Ctrl-C must not leave half of it behind).
            if self._staging is not None and os.path.lexists(self._staging):
                with interrupts_held(), _naming(self._staging):
                    shutil.rmtree(self._staging)
            self._staging = None


def wait_for(done: threading.Event, stop: threading.Event) -> BaseException | None:
    """Wait until a thread says it is ``done``, however often Ctrl-C interrupts the wait; each
    interruption sets ``stop`` (the thread stops early) and the first is returned, for the
    caller to raise once nothing writes any more. Never ``Thread.join()``: on CPython 3.11 a
    join interrupted by KeyboardInterrupt can mark the thread as stopped while it still runs
    (``_wait_for_tstate_lock`` releases the lock the running thread holds), so the next join
    returns at once and the staging folder would be removed under a writer."""
    interrupted: BaseException | None = None
    while True:
        try:
            done.wait()
            return interrupted
        except BaseException as exc:  # KeyboardInterrupt: stop the thread, keep waiting
            stop.set()
            interrupted = interrupted or exc


def write_tree(
    folder: Path, files: Mapping[str, str] | Iterable[tuple[str, str]], source: str | None = None
) -> TreeChange:
    """Replace ``folder`` with exactly ``files`` (a mapping, or lazily produced pairs); see
    :class:`PendingTree`."""
    tree = PendingTree(folder, files, source)
    try:
        return tree.start().commit()
    finally:
        tree.abort()


_BATCH = 256


def _write_files(
    root: str, pairs: Iterable[tuple[str, str]], cancel: threading.Event | None = None
) -> list[str]:
    """Write every (relative path, text) below ``root``; returns the paths. Stops early once
    ``cancel`` is set.

    Render writes one file per object, so this is on the hot path: the calling thread encodes
    batches of files and a writer thread does the system calls (which release the GIL)."""
    batches: queue.Queue[list[tuple[str, bytes]] | None] = queue.Queue(maxsize=8)
    failure: list[BaseException] = []
    stop = cancel or threading.Event()
    done = threading.Event()

    def writer() -> None:
        try:
            with interrupts_held():  # Ctrl-C goes to the main thread, which stops this one
                write()
        finally:
            done.set()

    def write() -> None:
        made = {""}
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        while (batch := batches.get()) is not None:
            if failure or stop.is_set():
                continue
            rel = ""
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
                failure.append(_named(exc, os.path.join(root, rel)))

    thread = threading.Thread(target=writer, name="kubetrain-writer", daemon=True)
    thread.start()
    names: list[str] = []
    batch: list[tuple[str, bytes]] = []
    interrupted: BaseException | None = None
    try:
        for rel, text in pairs:
            if stop.is_set() or failure:
                break
            names.append(rel)
            batch.append((rel, text.encode("utf-8")))
            if len(batch) >= _BATCH:
                batches.put(batch)
                batch = []
        if batch:
            batches.put(batch)
    except BaseException as exc:  # Ctrl-C (or a failing producer): the writer stops first
        stop.set()
        interrupted = exc
    # The end of the batches, however often Ctrl-C comes: the writer skips what is left.
    while True:
        try:
            batches.put(None)
            break
        except BaseException as exc:
            stop.set()
            interrupted = interrupted or exc
    later = wait_for(done, stop)
    interrupted = interrupted or later
    if interrupted is not None:
        raise interrupted
    if failure:
        raise failure[0]
    return names
