"""Strict YAML reading that remembers where every value came from.

Every input (stack files, job files, the files ``kubetrain validate`` checks) is read the way
``kubectl`` reads it: parsed by libyaml (``CSafeLoader``), each unquoted scalar resolved as
kubectl's go-yaml v2 resolves it (:mod:`.scalars`: ``yes`` and ``y`` are true, ``010`` is 8,
``1:20`` is a string), into plain JSON data. On top of that reading, kubetrain refuses what
kubectl would turn into something else or choke on, each with ``FILE:LINE: path: message``:

* a key given twice in one mapping (PyYAML silently keeps the last one; a key a YAML merge
  ``<<`` brings in may be overridden, as YAML says);
* a mapping key that is not a string (``yes:``, ``1:``, ``~:``): JSON has no such keys;
* ``!!binary``, ``!!timestamp``, ``!!set``, ``!!omap`` and ``!!pairs`` values, and the numbers
  JSON cannot hold (``.nan``, ``.inf``, integers beyond int64), where kubetrain reads them
  (another Pulumi package's config is its own business);
* strings kustomize cannot read back (DEL, C1 controls, U+FFFE/U+FFFF; see :data:`UNREADABLE`);
* recursive aliases, aliases expanding past :data:`~.limits.MAX_ALIAS_VALUES` values (the
  "billion laughs"), nesting deeper than :data:`~.limits.MAX_DEPTH`.

Timestamps stay strings, as they do for Pulumi and for kubectl (go-yaml keeps them as strings
when decoding into untyped values). Files are read only when they are regular files of at most
:data:`~.limits.MAX_FILE_BYTES`: a FIFO, a device or a symbolic-link loop is an input error
rather than a hang.

Values are loaded fast (no line table); a file with a problem is parsed again, tracking lines,
so that the message can say where.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import glob
import itertools
import math
import os
import re
import stat
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import yaml
from yaml import _yaml

from ..parallel import ChunkMapper, serial
from .errors import InputError, PathPart, Problem
from .limits import (
    INT64_MAX,
    INT64_MIN,
    MAX_ALIAS_VALUES,
    MAX_DEPTH,
    MAX_DOCUMENT_NODES,
    MAX_FILE_BYTES,
    MAX_FILE_NODES,
    MAX_OBJECTS,
)
from .scalars import BOOL, FLOAT, INT, MERGE, NULL, plain_value, resolve_plain

__all__ = [
    "GENERATED_MARK",
    "UNREADABLE",
    "Document",
    "InputWatch",
    "decode_utf8",
    "display_path",
    "expand_list_values",
    "expand_lists",
    "file_kind",
    "foreign_config",
    "is_plain_data",
    "leaves_project",
    "list_items",
    "list_problem",
    "load_all",
    "load_documents",
    "located_documents",
    "note_glob",
    "os_message",
    "parse_documents",
    "project_file",
    "read_text",
    "too_big",
    "value_problems",
    "watching_inputs",
]

Path_ = tuple[PathPart, ...]
#: A reader that may load a text faster than PyYAML and prove it got the same values: the
#: documents, or ``None`` to let PyYAML read the text.
FastReader = Callable[[str], list[Any] | None]
#: Where a document holds values kubetrain does not read (see :func:`value_problems`).
Skip = Callable[[Path_], bool]

#: Characters kustomize (go-yaml v3) cannot read back once written, even escaped: DEL, the C1
#: controls but NEL, the surrogates and the noncharacters U+FFFE and U+FFFF. ``kubectl
#: kustomize`` of a file holding one fails (the test suite checks this set against kubectl).
UNREADABLE = re.compile("[\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")

# What PyYAML builds for the YAML types JSON has no counterpart for, and what to write instead.
_NOT_JSON: dict[type, str] = {
    bytes: "a !!binary value is not JSON: write the base64 text as a string",
    datetime.date: "a !!timestamp value is not JSON: write the time as a string",
    datetime.datetime: "a !!timestamp value is not JSON: write the time as a string",
    set: "a !!set is not JSON: write a list",
    tuple: "an !!omap or !!pairs entry is not JSON: write a mapping",
}


class _DuplicateKey(yaml.constructor.ConstructorError):
    """A key given twice in one mapping (the mapping node is kept to find its path)."""

    def __init__(self, mapping: yaml.MappingNode, key: yaml.Node, first: yaml.Node) -> None:
        super().__init__(None, None, f"found duplicate key {key.value!r}", key.start_mark)
        self.mapping = mapping
        self.key = key
        self.first = first


class _Loader(yaml.CSafeLoader):
    """libyaml parser, safe constructors, no implicit timestamps, no duplicate keys, no types
    JSON cannot hold."""

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """PyYAML's merge (``<<``), after refusing keys given twice, and keeping one entry per
        key: the one that wins (a key given in the mapping beats a merged one, an earlier merge
        a later one). One entry per key also keeps merges of merges from growing exponentially
        (a "merge bomb")."""
        seen: dict[tuple[str, str], yaml.Node] = {}
        merges = False
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merges = True
            elif isinstance(key_node, yaml.ScalarNode):
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise _DuplicateKey(node, key_node, seen[key])
                seen[key] = key_node
        super().flatten_mapping(node)
        if not merges:  # every key once already
            return
        where: dict[Any, int] = {}
        pairs: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            ident = (
                (key_node.tag, key_node.value)
                if isinstance(key_node, yaml.ScalarNode)
                else id(key_node)
            )
            if ident in where:
                pairs[where[ident]] = (key_node, value_node)  # the later entry wins, in place
            else:
                where[ident] = len(pairs)
                pairs.append((key_node, value_node))
        node.value = pairs

    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        """A plain scalar's tag as kubectl's go-yaml v2 resolves it (:mod:`.scalars`); quoted
        scalars, sequences and mappings as PyYAML does (strings, lists, mappings)."""
        if kind is yaml.ScalarNode and implicit[0]:
            return resolve_plain(value)
        return str(super().resolve(kind, value, implicit))  # type: ignore[no-untyped-call]


_NAMES = {BOOL: "bool", INT: "int", FLOAT: "float", NULL: "null"}


def _construct_scalar(tag: str) -> Callable[[yaml.SafeLoader, yaml.ScalarNode], Any]:
    """The constructor of ``tag`` (bool, int, float, null): go-yaml v2's value of the text, an
    explicit ``!!int 0o17`` included; a text that is not of the tag is an error, as there."""

    def construct(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        text = loader.construct_scalar(node)
        found, value = plain_value(text)
        if found == INT and tag == FLOAT:  # as go-yaml: !!float 1 is 1.0
            return float(value)
        if found != tag:  # the text is not quoted: it may be anything, a credential too
            raise yaml.constructor.ConstructorError(
                None, None, f"the value tagged !!{_NAMES[tag]} is not one", node.start_mark
            )
        return value

    return construct


for _tag in (BOOL, INT, FLOAT, NULL):
    _Loader.add_constructor(_tag, _construct_scalar(_tag))


def _timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """PyYAML's ``!!timestamp`` (refused later as no JSON value, at its line), whose text PyYAML
    itself does not check: ``!!timestamp hello`` would raise an AttributeError."""
    try:
        return loader.construct_yaml_timestamp(node)
    except (AttributeError, ValueError, OverflowError):
        raise yaml.constructor.ConstructorError(
            None, None, "the value tagged !!timestamp is not one", node.start_mark
        ) from None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def _merge_value(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    """A ``<<`` that is a value, not a key: the string ``<<`` to go-yaml."""
    return str(loader.construct_scalar(node))


_Loader.add_constructor(MERGE, _merge_value)


class _Lines:
    """The line tables of one file's documents, computed on first use.

    Loading uses libyaml's fast path and notes only the line where each document starts (where
    a job, and everything built from it, is located); a file with a field to point at is
    composed again to find the lines of its fields (:func:`_line_tables`), so large job files
    load quickly.
    """

    def __init__(
        self,
        text: str,
        file: str,
        tables: list[dict[Path_, int]] | None = None,
        *,
        starts: list[int] | None = None,
    ) -> None:
        self.text = text
        self.file = file
        self._tables = tables
        self._starts = starts

    def table(self, index: int) -> dict[Path_, int]:
        if self._tables is None:
            self._tables = _line_tables(self.text)
        return self._tables[index] if index < len(self._tables) else {}

    def start(self, index: int) -> int | None:
        """The line where document ``index`` starts (the line of its path ``()``)."""
        if self._tables is None and self._starts is not None:
            return self._starts[index] if index < len(self._starts) else None
        return self.table(index).get(())


@dataclass
class Document:
    """One YAML document: its value, and the line of every field path in it (on demand)."""

    file: str
    index: int
    data: Any
    source: _Lines | None = field(default=None, repr=False)
    # Where this value sits inside the file's document (a job inside the stack file's config)...
    base: Path_ = ()
    # ...and how that place is shown in messages.
    prefix: Path_ = ()

    @classmethod
    def with_lines(cls, file: str, data: Any, lines: dict[Path_, int]) -> Document:
        """A document whose line table is already known (values not read from a YAML file)."""
        return cls(file, 0, data, _Lines("", file, [lines]))

    @property
    def lines(self) -> dict[Path_, int]:
        """Field path (relative to this document) -> line."""
        if self.source is None:
            return {}
        table = self.source.table(self.index)
        n = len(self.base)
        if not n:
            return table
        return {k[n:]: v for k, v in table.items() if k[:n] == self.base}

    def line_of(self, path: Sequence[PathPart]) -> int | None:
        """Line of ``path``, or of its nearest ancestor that has one."""
        if self.source is None:
            return None
        full = self.base + tuple(path)
        if not full:
            return self.source.start(self.index)
        table = self.source.table(self.index)
        while True:
            line = table.get(full)
            if line is not None or len(full) <= len(self.base):
                return line
            full = full[:-1]

    def as_written(self, path: Sequence[PathPart]) -> tuple[PathPart, ...]:
        """``path`` with each key spelled as in the document.

        Models normalise some keys (TFJob replica types are case-insensitive); messages should
        show what the user wrote.
        """
        out: list[PathPart] = []
        current: Any = self.data
        for part in path:
            if isinstance(current, dict) and part not in current and isinstance(part, str):
                wanted = part.lower()
                part = next(
                    (k for k in current if isinstance(k, str) and k.lower() == wanted), part
                )
            out.append(part)
            try:
                current = current[part]
            except (KeyError, IndexError, TypeError):
                current = None
        return tuple(out)

    def problem(self, path: Sequence[PathPart], message: str) -> Problem:
        """A :class:`Problem` at ``path`` (relative to this document)."""
        path = self.as_written(path)
        return Problem(self.file, self.line_of(path), self.prefix + path, message)

    def sub(self, path: Sequence[PathPart]) -> Document:
        """The value at ``path`` as a document of its own, keeping file and lines."""
        path = tuple(path)
        value: Any = self.data
        for part in path:
            value = value[part]
        return Document(
            self.file, self.index, value, self.source, self.base + path, self.prefix + path
        )


def display_path(path: str | os.PathLike[str]) -> str:
    """A path as users should read it: relative to the working directory when below it. The
    path is named as given, never resolved: a symbolic link is shown as the link (and a loop
    of links cannot make this fail)."""
    try:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, os.getcwd())
    except (ValueError, OSError):
        return os.fspath(path)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return absolute if os.path.isabs(path) else os.path.normpath(os.fspath(path))
    return relative


#: First words of every file kubetrain writes. Such a file is kubetrain's to replace, and its
#: YAML is a dialect-neutral subset (see kubetrain/render/yamlout.py).
GENERATED_MARK = "# Generated by kubetrain"


# --- files -----------------------------------------------------------------------------------


_FILE_KINDS = (
    (stat.S_ISREG, "a regular file"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, for messages (``a named pipe (FIFO)``)."""
    return next((text for test, text in _FILE_KINDS if test(mode)), "not a regular file")


def os_message(exc: OSError) -> str:
    """What went wrong reading a path, for messages (``cannot read: ...``)."""
    if exc.errno == errno.ELOOP:
        return "cannot read: a loop of symbolic links"
    return f"cannot read: {exc.strerror or exc}"


# --- inputs that change while they are read ------------------------------------------------


class InputWatch:
    """The files read, and the globs matched, while a command loads its stacks: what they
    were then, to tell whether they changed before the command acts on what it read (a render
    during a ``git checkout`` would otherwise mix two commits)."""

    def __init__(self) -> None:
        self.files: dict[str, tuple[int, int, int, int]] = {}
        self.globs: dict[tuple[str, str], tuple[str, ...]] = {}

    def changed(self) -> list[str]:
        """The inputs that are no longer what was read, named (empty: none)."""
        out = []
        for path, seen in self.files.items():
            try:
                info = os.stat(path)
            except OSError:
                out.append(f"{display_path(path)} (gone)")
                continue
            if _identity(info) != seen:
                out.append(display_path(path))
        for (root, pattern), matches in self.globs.items():
            if tuple(sorted(glob.glob(pattern, root_dir=root, recursive=True))) != matches:
                out.append(f"the files {pattern!r} matches")
        return out


_WATCHES: list[InputWatch] = []


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _note_read(path: str | os.PathLike[str], info: os.stat_result) -> None:
    for watch in _WATCHES:
        watch.files.setdefault(os.fspath(path), _identity(info))


def note_glob(root: Path, pattern: str, matches: Sequence[str]) -> None:
    """Record what a stack's glob matched, for :meth:`InputWatch.changed`."""
    for watch in _WATCHES:
        watch.globs.setdefault((os.fspath(root), pattern), tuple(sorted(matches)))


@contextlib.contextmanager
def watching_inputs() -> Iterator[InputWatch]:
    """Record every file read and glob matched inside the block."""
    watch = InputWatch()
    _WATCHES.append(watch)
    try:
        yield watch
    finally:
        _WATCHES.remove(watch)


def read_text(path: str | os.PathLike[str], what: str = "a YAML file") -> str:
    """The UTF-8 text of the regular file ``path``. Anything else (a folder, a FIFO, a device,
    a symbolic-link loop, a file over :data:`~.limits.MAX_FILE_BYTES`, bytes that are not UTF-8)
    is an :class:`InputError` naming the path. Opening never blocks: a FIFO is opened
    non-blocking and refused by its type, so no reader waits for a writer that never comes."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError.single(display_path(path), "file not found") from None
    except OSError as exc:
        raise InputError.single(display_path(path), os_message(exc)) from None
    try:
        info = os.fstat(fd)
        _note_read(path, info)
        if not stat.S_ISREG(info.st_mode):
            raise InputError.single(
                display_path(path), f"is {file_kind(info.st_mode)}, expected {what}"
            )
        if info.st_size > MAX_FILE_BYTES:
            raise InputError.single(display_path(path), too_big(info.st_size))
        chunks, size = [], 0
        # Read to the end, but never more than the limit (a file may grow, and files under
        # /proc say they are empty).
        while chunk := os.read(fd, min(1 << 20, MAX_FILE_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise InputError.single(display_path(path), too_big(size))
    except OSError as exc:
        raise InputError.single(display_path(path), os_message(exc)) from None
    finally:
        os.close(fd)
    return decode_utf8(b"".join(chunks), display_path(path))


def decode_utf8(data: bytes, shown: str) -> str:
    """``data`` as UTF-8 text; bytes that are not are an :class:`InputError` naming ``shown``."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError.single(shown, f"not UTF-8 text ({exc.reason})") from None


def too_big(size: int, *, cut: bool = False) -> str:
    """The message for input over :data:`~.limits.MAX_FILE_BYTES` (``cut``: a stream read up to
    the limit, whose full size is unknown)."""
    limit = MAX_FILE_BYTES // 2**20
    size_text = f"more than {limit} MiB" if cut else f"{size / 2**20:.0f} MiB"
    return f"is {size_text}; kubetrain reads files of at most {limit} MiB (docs/limits.md)"


# --- what a value may hold -------------------------------------------------------------------


class _Abort(Exception):
    """A structural problem: the walk stops at the first one."""

    def __init__(self, path: Path_, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _unreadable(text: str) -> str | None:
    m = UNREADABLE.search(text)
    if m is None:
        return None
    return (
        f"holds the character U+{ord(m[0]):04X}, which kustomize and kubectl cannot read back "
        "(DEL, C1 controls, surrogates, U+FFFE and U+FFFF are refused)"
    )


class _Walk:
    """One pass over a document: every rule of :func:`value_problems`.

    Containers reached twice (YAML aliases) are checked once; their size counts every time,
    so an alias bomb is caught without being expanded, and a container holding itself is
    a recursive alias.
    """

    def __init__(self, limit: int, skip: Skip | None = None) -> None:
        self.problems: list[tuple[Path_, str]] = []
        self.limit = limit
        self.skip = skip
        self.known: dict[int, tuple[int, int]] = {}  # id -> (values, height)
        self.active: set[int] = set()
        self.unique = 0
        self.total = 0

    def note(self, path: Path_, message: str) -> None:
        if len(self.problems) < self.limit:
            self.problems.append((path, message))

    def visit(self, value: Any, path: Path_, depth: int) -> tuple[int, int]:
        """(values, height) of ``value``: how many values it holds, counting aliases expanded,
        and how deep it nests."""
        kind = type(value)
        if kind is str:
            if (problem := _unreadable(value)) is not None:
                self.note(path, problem)
            return 1, 0
        if kind is dict or kind is list:
            return self._container(value, path, depth)
        if kind is bool or value is None:
            return 1, 0
        if kind is int:
            if not INT64_MIN <= value <= INT64_MAX:
                self.note(path, "an integer beyond int64: Kubernetes cannot read it")
            return 1, 0
        if kind is float:
            if math.isnan(value):
                self.note(path, "NaN (.nan) is not a number JSON, or Kubernetes, can hold")
            elif math.isinf(value):
                self.note(path, "infinity (.inf) is not a number JSON, or Kubernetes, can hold")
            return 1, 0
        self.note(
            path,
            _NOT_JSON.get(kind)
            or f"a {kind.__name__} is not plain data (strings, numbers, booleans, null)",
        )
        return 1, 0

    def _container(self, value: Any, path: Path_, depth: int) -> tuple[int, int]:
        key = id(value)
        if key in self.active:
            raise _Abort(path, "a recursive alias: this value contains itself")
        known = self.known.get(key)
        if known is not None:  # an alias of a value already checked
            size, height = known
            self._count(size, path)
            if depth + height > MAX_DEPTH:
                raise _Abort(path[:8], _too_deep())
            return known
        if depth >= MAX_DEPTH:
            raise _Abort(path[:8], _too_deep())
        self.active.add(key)
        size, height = 1, 0
        if type(value) is dict:
            for k, item in value.items():
                if type(k) is not str:
                    self.note(path, f"a key must be a string, not {_key_text(k)}: quote it")
                    continue
                if self.skip is not None and self.skip((*path, k)):
                    size += self._foreign(item, (*path, k))
                    continue
                if (problem := _unreadable(k)) is not None:
                    self.note(path, f"a key {problem}")
                n, h = self.visit(item, (*path, k), depth + 1)
                size += n
                height = max(height, h + 1)
        else:
            for i, item in enumerate(value):
                n, h = self.visit(item, (*path, i), depth + 1)
                size += n
                height = max(height, h + 1)
        self.active.discard(key)
        self.known[key] = (size, height)
        self.unique += 1
        self._count(1, path)
        return size, height

    def _foreign(self, value: Any, path: Path_) -> int:
        """Someone else's value (another Pulumi package's config): no rule of kubetrain's
        applies, but its aliases are counted all the same (expanded, without recursion), so a
        bomb or a loop there cannot reach a reader either."""
        seen: set[int] = set()
        size = 0
        todo: list[tuple[Any, bool]] = [(value, False)]
        while todo:
            v, aliased = todo.pop()
            size += 1
            if aliased:
                self._count(1, path)
            kind = type(v)
            if kind is not dict and kind is not list:
                continue
            if id(v) in seen:
                aliased = True
            else:
                seen.add(id(v))
            todo += [(item, aliased) for item in (v.values() if kind is dict else v)]
        return size

    def _count(self, values: int, path: Path_) -> None:
        self.total += values
        if self.total - self.unique > MAX_ALIAS_VALUES:
            raise _Abort(
                path,
                f"aliases expand this document to more than {MAX_ALIAS_VALUES:,} values "
                "(an alias bomb, such as the billion laughs)",
            )


def _too_deep() -> str:
    return f"nested more than {MAX_DEPTH} levels deep below here (docs/limits.md)"


def _key_text(key: Any) -> str:
    if key is None:
        return "null (YAML reads an empty key, ~ and null so)"
    if isinstance(key, bool):
        return f"the boolean {str(key).lower()} (YAML 1.1 reads yes, no, on, off, y, n so)"
    if isinstance(key, int | float):
        return f"the number {key!r}"
    return f"a {type(key).__name__}"


def is_plain_data(value: Any, skip: Skip | None = None, depth: int = 0) -> bool:
    """Whether :func:`value_problems` would find nothing, for a value without shared parts
    (no YAML alias) found ``depth`` levels deep: one quick pass, keeping paths only as deep as
    ``skip`` looks (two levels, :func:`foreign_config`)."""
    strings: list[str] = []
    add = strings.append
    todo: list[tuple[Any, int]] = [(value, depth)]
    pop, push = todo.pop, todo.append
    while todo:
        v, depth = pop()
        kind = type(v)
        if kind is str:
            add(v)
        elif kind is dict:
            if depth >= MAX_DEPTH:
                return False
            if skip is not None and depth == 0:
                if not _plain_top(v, skip):
                    return False
                continue
            for k, item in v.items():
                if type(k) is not str:
                    return False
                add(k)
                push((item, depth + 1))
        elif kind is list:
            if depth >= MAX_DEPTH:
                return False
            for item in v:
                push((item, depth + 1))
        elif kind is int:
            if not INT64_MIN <= v <= INT64_MAX:
                return False
        elif kind is float:
            if not math.isfinite(v):
                return False
        elif kind is not bool and v is not None:
            return False
    return UNREADABLE.search("".join(strings)) is None


def _plain_top(value: dict[Any, Any], skip: Skip) -> bool:
    """:func:`is_plain_data` of a document whose top two levels ``skip`` may leave alone."""
    for k, item in value.items():
        if type(k) is not str or UNREADABLE.search(k):
            return False
        if skip((k,)):
            continue
        if type(item) is not dict:
            if not is_plain_data(item, depth=1):
                return False
            continue
        for k2, item2 in item.items():
            if type(k2) is not str or UNREADABLE.search(k2):
                return False
            if not skip((k, k2)) and not is_plain_data(item2, depth=2):
                return False
    return True


def value_problems(
    value: Any, limit: int = 20, *, skip: Skip | None = None
) -> list[tuple[Path_, str]]:
    """Why ``value`` is not plain data kubetrain accepts, as (field path, message) pairs (at
    most ``limit``; empty when it is). The rules are the module's; messages never repeat a value
    (it may be secret material). Below a path where ``skip`` holds, only aliases are checked
    (bombs and loops): the value is someone else's (see :func:`foreign_config`)."""
    walk = _Walk(limit, skip)
    try:
        walk.visit(value, (), 0)
    except _Abort as exc:
        return [(exc.path, exc.message)]
    except RecursionError:  # unreachable within MAX_DEPTH; kept so no input makes a traceback
        return [((), _too_deep())]
    return walk.problems


def foreign_config(path: Path_) -> bool:
    """Whether ``path`` of a Pulumi stack file holds a value another program reads: the config
    of another namespace (``aws:region``), or ESC's ``environment``. kubetrain's value rules do
    not apply there (Pulumi reads YAML 1.2, where ``yes:`` is a string key)."""
    if path == ("environment",):
        return True
    if len(path) != 2 or path[0] != "config" or not isinstance(path[1], str):
        return False
    namespace, colon, _ = path[1].partition(":")
    return bool(colon) and namespace != "kubetrain"


# --- files a stack names -----------------------------------------------------------------------


def leaves_project(pattern: str) -> bool:
    """Whether a path or glob a stack names can reach outside the project: absolute, from a
    home folder, or with a ``..`` part."""
    parts = re.split(r"[/\\]", pattern)
    return os.path.isabs(pattern) or pattern.startswith("~") or ".." in parts


def project_file(doc: Document, where: Path_, path: str, root: Path) -> Path | Problem:
    """The file ``path`` (relative to the project ``root``) a stack's key at ``where`` names,
    resolved (whether it exists is for its reader to say); or the problem: it reaches outside
    the project, or it is a symbolic link leading outside (the files a stack reads are all
    inside it)."""
    if leaves_project(path):
        return doc.problem(
            where,
            f"{path!r} reaches outside the project: it is relative to {display_path(root)}, "
            "without '..' parts",
        )
    try:
        resolved = (root / path).resolve()
    except (OSError, RuntimeError):  # a loop of links: reading it says so
        return root / path
    if not resolved.is_relative_to(root.resolve()):
        return doc.problem(
            where,
            f"{path!r} is a symbolic link to {resolved}, outside the project: the files a "
            "stack reads must be inside it",
        )
    return resolved


# --- lists of objects ------------------------------------------------------------------------


def list_items(data: Any) -> list[Any] | None:
    """The items of a list object, else ``None``. A mapping whose ``kind`` ends in ``List``
    (``List``, ``ConfigMapList``) and whose ``items`` is a list is a list object, as
    apimachinery's unstructured decoder reads it (``UnstructuredJSONScheme.decode``): kubectl
    apply, kustomize and kubeconform take its items as the objects, never the list itself."""
    if not isinstance(data, dict):
        return None
    kind, items = data.get("kind"), data.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        return items
    return None


def list_problem(data: Any) -> str | None:
    """Why a list object is refused: more items than one stack renders objects
    (:data:`~.limits.MAX_OBJECTS`, items of items counted); ``None`` for any other value."""
    count = sum(1 for _ in expand_list_values(data)) if list_items(data) is not None else 0
    if count <= MAX_OBJECTS:
        return None
    return (
        f"a list object of {count:,} items: kubetrain reads at most {MAX_OBJECTS:,} objects "
        "from one list (docs/limits.md)"
    )


def expand_lists(doc: Document) -> Iterator[Document]:
    """``doc``, or each item of it when it is a list object (items of items too), each a
    document of its own at its lines (``items[3]``). Nesting is bounded by the file's depth."""
    items = list_items(doc.data)
    if items is None:
        yield doc
        return
    for i in range(len(items)):
        yield from expand_lists(doc.sub(("items", i)))


def expand_list_values(data: Any, within: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    """:func:`expand_lists` for plain values: (path of the item in the document, item)."""
    items = list_items(data)
    if items is None:
        yield within, data
        return
    for i, item in enumerate(items):
        yield from expand_list_values(item, (*within, "items", i))


# --- reading YAML ----------------------------------------------------------------------------


#: Characters one of which every YAML node but a document's root follows or is announced by
#: (a mapping's ":" or "?", a list's "-", a flow collection's "[", "{" or ",", a line break):
#: twice their number bounds the nodes of a text from above (a flow mapping's entry may be a
#: key and its null value).
_NODE_MARKS = (":", "?", "-", "[", "{", ",", "\n")


def _node_bound(text: str) -> int:
    return 2 * sum(text.count(mark) for mark in _NODE_MARKS) + 2


def node_problem(text: str) -> tuple[int | None, str] | None:
    """(line, message) when a document of ``text`` holds more than
    :data:`~.limits.MAX_DOCUMENT_NODES` nodes or the text more than
    :data:`~.limits.MAX_FILE_NODES`, else ``None``; found before anything is composed, so
    such a file costs no more memory than its text. A cheap upper bound settles almost every
    text; past it, the parser's events are counted (streamed: nothing is kept)."""
    # Within the smaller of the two bounds, the text is within both.
    smaller = min(MAX_DOCUMENT_NODES, MAX_FILE_NODES)
    if 2 * len(text) <= smaller:  # no node takes less than half a character
        return None
    if _node_bound(text) <= smaller:
        return None
    pieces = _pieces(text, PIECE_CHARS) if len(text) >= 2 * PIECE_CHARS else None
    if pieces is not None:
        bounds = [(before, piece, _node_bound(piece)) for before, piece in pieces]
        if sum(b for _, _, b in bounds) <= MAX_FILE_NODES and all(
            b <= MAX_DOCUMENT_NODES for _, _, b in bounds
        ):
            return None
    return _counted_nodes(text)


def _counted_nodes(text: str) -> tuple[int | None, str] | None:
    """:func:`node_problem` by the parser's events (a YAML error is for the reading to report,
    with its line)."""
    total = in_document = 0
    start = 1
    parser = _yaml.CParser(text)
    try:
        while (event := parser.get_event()) is not None:
            kind = type(event)
            if kind is yaml.DocumentStartEvent:
                in_document = 0
                start = _line_of(event)
            elif kind in _NODE_EVENTS:
                in_document += 1
                total += 1
                if in_document > MAX_DOCUMENT_NODES:
                    return start, (
                        f"a document of more than {MAX_DOCUMENT_NODES:,} YAML nodes (scalars, "
                        "mappings and lists) from this line: kubetrain reads at most that many "
                        "per document (docs/limits.md)"
                    )
                if total > MAX_FILE_NODES:
                    return _line_of(event), (
                        f"more than {MAX_FILE_NODES:,} YAML nodes (scalars, mappings and lists) "
                        "by this line: kubetrain reads at most that many per file "
                        "(docs/limits.md)"
                    )
    except yaml.YAMLError:
        return None
    finally:
        parser.dispose()
    return None


_NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)


def _line_of(event: yaml.Event) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 1


def load_all(
    text: str, file: str, *, fast: FastReader | None = None, skip: Skip | None = None
) -> list[Any]:
    """Every non-empty document of ``text`` (named ``file`` in messages), without a line table;
    the same rules and the same values as :func:`parse_documents`, which is asked for the line
    of any problem (so this raises an :class:`InputError` exactly when it does).

    ``fast`` may read the text first (``kubetrain validate`` reads files kubetrain wrote with
    a faster parser, when it can prove the values are PyYAML's); it answers only with documents
    that obey the same rules."""
    return _load(text, file, fast, skip)[0]


def _load(
    text: str,
    file: str,
    fast: FastReader | None = None,
    skip: Skip | None = None,
    chunks: ChunkMapper = serial,
) -> tuple[list[Any], list[int] | None]:
    """:func:`load_all`, and the line where each document starts when it was free to note
    (``None`` otherwise). A large text is read in pieces by ``chunks`` (see :func:`_pieces`)."""
    if (too_many := node_problem(text)) is not None:
        line, message = too_many
        raise InputError.single(file, message, line=line)
    docs = fast(text) if fast is not None else None
    if docs is not None:
        return docs, None
    found = _load_pieces(text, skip, chunks) or _quick_load(text, skip)
    if found is None:  # a problem: found again with its line and path
        return [d.data for d in parse_documents(text, file, skip=skip)], None
    return found


class _Unusual(Exception):
    """A node :func:`_construct` leaves to PyYAML's constructors."""


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_SCALAR_TAGS = frozenset({BOOL, INT, FLOAT, NULL})


def _construct(root: yaml.Node) -> Any:
    """The value of a composed document, as ``_Loader.construct_document`` makes it, for the
    nodes every Kubernetes manifest is made of: strings, go-yaml's booleans, integers, floats
    and nulls, mappings with string keys given once, lists; an alias is the value of its
    anchor (the same object, as PyYAML shares it). Anything else (a merge, another tag, a key
    that is not a string, a key given twice) raises :class:`_Unusual`: PyYAML's constructors,
    and their errors, then read the document. About twice as fast as PyYAML's generic
    constructor."""
    built: dict[int, Any] = {}

    def value(node: yaml.Node) -> Any:
        kind = type(node)
        tag = node.tag
        if kind is yaml.ScalarNode:
            if tag == _STR_TAG:
                return node.value
            if tag not in _SCALAR_TAGS:
                raise _Unusual
            found, scalar = plain_value(node.value)
            if found == INT and tag == FLOAT:
                return float(scalar)
            if found != tag:
                raise _Unusual
            return scalar
        known = built.get(id(node))
        if known is not None:
            return known
        if kind is yaml.MappingNode:
            if tag != _MAP_TAG:
                raise _Unusual
            mapping: dict[str, Any] = {}
            built[id(node)] = mapping
            for key_node, value_node in node.value:
                if type(key_node) is not yaml.ScalarNode or key_node.tag != _STR_TAG:
                    raise _Unusual  # a merge (<<), a key of another type
                key = key_node.value
                if key in mapping:
                    raise _Unusual
                mapping[key] = value(value_node)
            return mapping
        if kind is yaml.SequenceNode:
            if tag != _SEQ_TAG:
                raise _Unusual
            items: list[Any] = []
            built[id(node)] = items
            items.extend(value(item) for item in node.value)
            return items
        raise _Unusual

    try:
        return value(root)
    except RecursionError:
        raise _Unusual from None


def _quick_load(text: str, skip: Skip | None) -> tuple[list[Any], list[int]] | None:
    """The documents of ``text`` and the line where each starts, when it has no problem at all;
    ``None`` otherwise (:func:`parse_documents` then says what and where)."""
    docs: list[Any] = []
    starts: list[int] = []
    loader = _Loader(text)
    try:
        # yaml.load_all, noting where each document starts.
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            try:
                data = _construct(node)
            except _Unusual:
                data = loader.construct_document(node)
            if data is not None:
                docs.append(data)
                starts.append(node.start_mark.line + 1)
    except (yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()
    # Without an alias ("*name") no two values are shared, and one quick pass does.
    quick = "*" not in text
    if not all(
        is_plain_data(d, skip) if quick else not value_problems(d, limit=1, skip=skip) for d in docs
    ):
        return None
    return docs, starts


#: Characters per piece when a large file is read in pieces (see :func:`_pieces`), and the
#: pieces worth a process of their own (a piece takes about 8 ms to read).
PIECE_CHARS = 64 * 1024
PIECES_PER_PROCESS = 4
#: Before a document start (``---`` at the start of a line, then a blank or the end).
_DOCUMENT_START = re.compile(r"\n---(?=[ \t\r\n]|\Z)")


def _pieces(text: str, size: int | None = None) -> list[tuple[int, str]] | None:
    """``text`` cut into pieces of about ``size`` characters (:data:`PIECE_CHARS`) at document
    starts, each with the
    number of lines before it; ``None`` when it is not cut.

    YAML forbids ``---`` followed by a blank at the start of a line anywhere but as a document
    start (no scalar or collection may hold one there: libyaml ends a block or plain scalar
    there, and refuses it inside a quoted scalar or a flow collection), and a document's
    anchors, aliases and merges stay within it. So every piece of a text that reads without a
    problem reads as the documents of that text, alone; a text with a problem may cut
    wrongly, but it is read again whole. Not cut: texts with directives (``%TAG``, ``%YAML``
    apply to the documents after them) or line breaks other than LF and CRLF (lines would be
    counted otherwise than libyaml counts them)."""
    size = size or PIECE_CHARS
    if len(text) < 2 * size or text.startswith("%") or "\n%" in text:
        return None
    if any(c in text for c in "\x85\u2028\u2029") or text.count("\r") != text.count("\r\n"):
        return None
    cuts = [0]
    while (m := _DOCUMENT_START.search(text, cuts[-1] + size)) is not None:
        cuts.append(m.start() + 1)
    if len(cuts) < 2:
        return None
    bounds = [*cuts, len(text)]
    return [(text.count("\n", 0, a), text[a:b]) for a, b in itertools.pairwise(bounds)]


def _load_pieces(
    text: str, skip: Skip | None, chunks: ChunkMapper
) -> tuple[list[Any], list[int]] | None:
    """:func:`_quick_load` of a large text, piece by piece (:func:`_pieces`), the pieces by
    ``chunks`` (on several cores when it forks); ``None`` when the text is not cut, or some
    piece has a problem (the whole text is then read at once)."""
    pieces = _pieces(text)
    if pieces is None:
        return None
    read = chunks(
        lambda part: [_quick_load(piece, skip) for _, piece in part],
        pieces,
        per_process=PIECES_PER_PROCESS,
    )
    docs: list[Any] = []
    starts: list[int] = []
    for (before, _), found in zip(pieces, read, strict=True):
        if found is None:
            return None
        docs += found[0]
        starts += [before + line for line in found[1]]
    return docs, starts


def load_documents(
    path: str | os.PathLike[str], *, skip: Skip | None = None, chunks: ChunkMapper = serial
) -> list[Document]:
    """Read every YAML document of ``path`` (a missing, unreadable or unusual file is an input
    error; see :func:`read_text`). ``skip``: see :func:`value_problems`; a large file is read
    in pieces by ``chunks`` (:mod:`kubetrain.parallel`)."""
    shown = display_path(path)
    text = read_text(path)
    values, starts = _load(text, shown, skip=skip, chunks=chunks)
    lines = _Lines(text, shown, starts=starts)
    return [Document(shown, i, value, lines) for i, value in enumerate(values)]


def yaml_error(exc: yaml.YAMLError, text: str) -> tuple[int | None, str]:
    """The line of a YAML error and its message on one line, ``invalid YAML: ...``."""
    line: int | None = None
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        context = exc.context or ""
        if context and exc.context_mark is not None and exc.problem_mark is not None:
            first = exc.context_mark.line + 1
            if first != line:
                context += f" (from line {first})"
        message = " ".join(part for part in (context, exc.problem or "") if part)
        if tab := _tab_message(text, line):
            return line, tab
    elif isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1 if exc.position <= len(text) else None
        character = (
            f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        )
        message = f"unacceptable character {character}: {exc.reason}"
    else:
        message = str(exc)
    return line, "invalid YAML: " + " ".join(message.split())


def parse_documents(text: str, file: str, *, skip: Skip | None = None) -> list[Document]:
    """Parse ``text`` (named ``file`` in messages) into documents with their line tables; empty
    documents are skipped. Any problem (see the module docstring) is an :class:`InputError`.
    ``skip``: see :func:`value_problems`."""
    if (too_many := node_problem(text)) is not None:
        line, message = too_many
        raise InputError.single(file, message, line=line)
    loader = _Loader(text)
    docs: list[Document] = []
    tables: list[dict[Path_, int]] = []
    source = _Lines(text, file, tables)
    node: yaml.Node | None = None
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            data = loader.construct_document(node)
            if data is None:  # an empty document
                continue
            problems = value_problems(data, skip=skip)
            if problems:
                raise InputError(
                    Problem(file, _line_at(node, path), path, message) for path, message in problems
                )
            lines: dict[Path_, int] = {}
            _record_lines(node, (), lines)
            tables.append(lines)
            docs.append(Document(file, index, data, source))
            index += 1
    except _DuplicateKey as exc:
        path = _path_to(node, exc.mapping) if node is not None else ()
        key = exc.key.value
        raise InputError.single(
            file,
            f"duplicate key {key!r} (first given on line {exc.first.start_mark.line + 1})",
            line=exc.key.start_mark.line + 1,
            path=(*(path or ()), key),
        ) from None
    except yaml.YAMLError as exc:
        line, message = yaml_error(exc, text)
        raise InputError.single(file, message, line=line) from None
    except RecursionError:  # libyaml bounds nesting itself; kept so nothing makes a traceback
        raise InputError.single(file, f"invalid YAML: {_too_deep()}") from None
    finally:
        loader.dispose()
    return docs


def _line_tables(text: str) -> list[dict[Path_, int]]:
    """The line table of every non-empty document of ``text``, a text :func:`load_all` read
    without a problem: composed again, but no value is built and no rule checked again, which
    takes about half of :func:`parse_documents`' time (the tables are the same)."""
    loader = _Loader(text)
    tables: list[dict[Path_, int]] = []
    # Merges are flattened as constructing does (the node's own key beats a merged one).
    flatten = loader.flatten_mapping if "<<" in text else None
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
                continue  # an empty document, which loading skips
            lines: dict[Path_, int] = {}
            _record_lines(node, (), lines, flatten)
            tables.append(lines)
    finally:
        loader.dispose()
    return tables


_NULL = "tag:yaml.org,2002:null"


def located_documents(
    text: str, file: str, wanted: Mapping[int, Collection[Path_]]
) -> list[Document] | None:
    """The documents of ``text`` (without their values) able to say the line of each path of
    ``wanted[i]`` in document ``i`` (:func:`_wanted_lines`), or ``None`` where only composing
    the text again finds them."""
    tables = _wanted_lines(text, wanted)
    if tables is None:
        return None
    source = _Lines(text, file, tables)
    return [Document(file, i, None, source) for i in range(len(tables))]


def _wanted_lines(
    text: str, wanted: Mapping[int, Collection[Path_]]
) -> list[dict[Path_, int]] | None:
    """For each non-empty document ``i`` of ``text`` (a text :func:`load_all` read without a
    problem), the line of each path of ``wanted[i]`` and of each of its ancestors, as
    :func:`_line_tables` gives them, read from the parser's events: nothing is composed, so
    what this keeps is the wanted paths and the nesting of the current node (a document of a
    million nodes, composed, took 700 MB). ``None`` for a text with an anchor, an alias, a
    merge key or a key that is not a scalar, whose paths only composing resolves."""
    if "<<" in text:
        return None
    targets_of = {
        i: {(), *(p[:n] for p in paths for n in range(len(p) + 1))} for i, paths in wanted.items()
    }
    loader = _Loader(text)
    tables: list[dict[Path_, int]] = []
    # Open mappings and sequences: [is a mapping, path, the key read (a mapping) or the next
    # index (a sequence), whether a mapping's next node is a key].
    stack: list[list[Any]] = []
    table: dict[Path_, int] = {}
    targets: set[Path_] = set()
    try:
        while (got := loader.get_event()) is not None:
            kind = type(got)
            if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                stack.pop()
                continue
            if kind is yaml.AliasEvent:
                return None
            if kind not in _NODE_EVENTS:
                continue
            event = cast(yaml.ScalarEvent, got)  # or a collection's start: anchor and tag too
            if event.anchor is not None:
                return None
            line = _line_of(event)
            if not stack:  # a document's root
                if kind is yaml.ScalarEvent and _is_null(loader, event):
                    continue  # an empty document, which loading skips
                table, targets = {}, targets_of.get(len(tables), set())
                tables.append(table)
                path: Path_ = ()
            else:
                frame = stack[-1]
                if frame[0] and frame[3]:  # a mapping's key
                    if kind is not yaml.ScalarEvent:
                        return None
                    frame[2], frame[3] = event.value, False
                    key = (*frame[1], event.value)
                    if key in targets:
                        table[key] = line
                    continue
                if frame[0]:
                    path, frame[3] = (*frame[1], frame[2]), True
                else:
                    path = (*frame[1], frame[2])
                    frame[2] += 1
            if path in targets:
                table.setdefault(path, line)
            if kind is yaml.MappingStartEvent:
                stack.append([True, path, None, True])
            elif kind is yaml.SequenceStartEvent:
                stack.append([False, path, 0, False])
    finally:
        loader.dispose()
    return tables


def _is_null(loader: _Loader, event: yaml.ScalarEvent) -> bool:
    """Whether a scalar event is a null, as composing resolves it."""
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
    return tag == _NULL


def _tab_message(text: str, line: int | None) -> str | None:
    """The message for a tab in the indentation of ``line`` (YAML indents with spaces only;
    PyYAML says "found character that cannot start any token")."""
    lines = text.splitlines()
    if line is None or not 0 < line <= len(lines):
        return None
    current = lines[line - 1]
    indent = current[: len(current) - len(current.lstrip(" \t"))]
    if "\t" not in indent:
        return None
    return (
        f"invalid YAML: a tab in the indentation (column {indent.index(chr(9)) + 1}); YAML "
        "indents with spaces only: replace the tab with spaces"
    )


def _record_lines(
    root: yaml.Node,
    base: Path_,
    lines: dict[Path_, int],
    flatten: Callable[[yaml.MappingNode], None] | None = None,
) -> None:
    """The line of every path under ``root`` (its mappings flattened by construction, or by
    ``flatten`` on the way, so a key merged with ``<<`` and then given again has the line where
    it is given again). Iterative: a value kubetrain does not read may nest as deep as libyaml
    allows."""
    todo: list[tuple[yaml.Node, Path_]] = [(root, base)]
    while todo:
        node, path = todo.pop()
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            if flatten is not None:
                flatten(node)
            for key_node, value_node in node.value:
                key = (*path, key_node.value)
                lines[key] = key_node.start_mark.line + 1
                todo.append((value_node, key))
        elif isinstance(node, yaml.SequenceNode):
            todo += [(item, (*path, i)) for i, item in enumerate(node.value)]


def _line_at(node: yaml.Node, path: Path_) -> int:
    """The line of ``path`` below ``node`` (or of the deepest part of it that exists)."""
    line = node.start_mark.line + 1
    for part in path:
        if isinstance(node, yaml.MappingNode):
            found = [
                (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part
            ]
            if not found:
                break
            key_node, node = found[-1]
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _path_to(root: yaml.Node, target: yaml.Node) -> Path_ | None:
    """The path of ``target`` below ``root`` (each node visited once, aliases included)."""
    seen: set[int] = set()
    todo: list[tuple[yaml.Node, Path_]] = [(root, ())]
    while todo:
        node, path = todo.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            todo += [(v, (*path, k.value)) for k, v in node.value if isinstance(k, yaml.ScalarNode)]
        elif isinstance(node, yaml.SequenceNode):
            todo += [(v, (*path, i)) for i, v in enumerate(node.value)]
    return None
