"""Strict YAML reading that remembers where every value came from.

Stack files and job documents are parsed with libyaml (``CSafeLoader``) into plain Python values
plus a table from field path to line number, so every later error can be printed as
``FILE:LINE: path.to.field: message``. A key given twice in one mapping is an error (PyYAML
silently keeps the last one). Timestamps stay strings, as they do for Pulumi and Kubernetes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
import yaml_rs

from .errors import InputError, PathPart, Problem

__all__ = [
    "GENERATED_MARK",
    "Document",
    "display_path",
    "load_all",
    "load_documents",
    "parse_documents",
]

Path_ = tuple[PathPart, ...]


class _Loader(yaml.CSafeLoader):
    """libyaml parser, safe constructors, no implicit timestamps, no duplicate keys."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[tuple[str, str], yaml.Node] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        f"while constructing a mapping (line {seen[key].start_mark.line + 1})",
                        node.start_mark,
                        f"found duplicate key {key_node.value!r}",
                        key_node.start_mark,
                    )
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _Lines:
    """The line tables of one file's documents, computed on first use.

    Loading uses libyaml's fast path; only a file with a problem to report is walked again to
    find lines, so large job files load quickly.
    """

    def __init__(self, text: str, file: str, tables: list[dict[Path_, int]] | None = None) -> None:
        self.text = text
        self.file = file
        self._tables = tables

    def table(self, index: int) -> dict[Path_, int]:
        if self._tables is None:
            self._tables = [d.lines for d in parse_documents(self.text, self.file)]
        return self._tables[index] if index < len(self._tables) else {}


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
        table = self.source.table(self.index)
        full = self.base + tuple(path)
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
    """A path as users should read it: relative to the working directory when below it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


#: First words of every file kubetrain writes. Such a file is kubetrain's to replace, and its
#: YAML is a dialect-neutral subset (see kubetrain/render/yamlout.py).
GENERATED_MARK = "# Generated by kubetrain"


def load_all(text: str) -> list[Any]:
    """Every non-empty document of ``text``, fast (no line table); same rules as
    :func:`parse_documents`. Raises ``yaml.YAMLError``."""
    if text.startswith(GENERATED_MARK):
        # kubetrain's own output quotes every scalar YAML 1.1 and 1.2 could read differently,
        # so a YAML 1.2 parser reads it exactly as PyYAML would, about six times faster.
        try:
            value = yaml_rs.loads(text, parse_datetime=False)
        except yaml_rs.YAMLDecodeError:
            pass  # not what kubetrain wrote after all: let PyYAML say what is wrong
        else:
            if isinstance(value, dict):
                return [value]
    return [doc for doc in yaml.load_all(text, Loader=_Loader) if doc is not None]


def load_documents(path: str | os.PathLike[str]) -> list[Document]:
    """Read every YAML document of ``path`` (a missing or unreadable file is an input error)."""
    shown = display_path(path)
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise InputError.single(shown, "file not found") from None
    except IsADirectoryError:
        raise InputError.single(shown, "is a directory, expected a YAML file") from None
    except UnicodeDecodeError as exc:
        raise InputError.single(shown, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InputError.single(shown, f"cannot read: {exc.strerror}") from None
    try:
        values = load_all(text)
    except (yaml.YAMLError, RecursionError, TypeError):
        # The slow, line-tracking parser says exactly what and where.
        return parse_documents(text, shown)
    lines = _Lines(text, shown)
    return [Document(shown, i, value, lines) for i, value in enumerate(values)]


def parse_documents(text: str, file: str) -> list[Document]:
    """Parse ``text`` (named ``file`` in messages) into documents; empty documents are skipped."""
    loader = _Loader(text)
    docs: list[Document] = []
    tables: list[dict[Path_, int]] = []
    source = _Lines(text, file, tables)
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            lines: dict[tuple[PathPart, ...], int] = {}
            data = _construct(loader, node, (), lines, file)
            if data is None:  # an empty document
                continue
            tables.append(lines)
            docs.append(Document(file, index, data, source))
            index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        message = _tab_message(text, line) or "invalid YAML: " + " ".join(
            part for part in (exc.context, exc.problem) if part
        )
        raise InputError.single(file, message, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError.single(file, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InputError.single(
            file, "invalid YAML: nesting too deep (or a recursive alias)"
        ) from None
    finally:
        loader.dispose()
    return docs


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


def _construct(
    loader: _Loader,
    node: yaml.Node,
    path: tuple[PathPart, ...],
    lines: dict[tuple[PathPart, ...], int],
    file: str,
) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError.single(
                    file,
                    "a mapping key must be a scalar",
                    line=key_node.start_mark.line + 1,
                    path=path,
                )
            key = loader.construct_object(key_node)
            if key in result:
                raise InputError.single(
                    file,
                    f"duplicate key {key!r} (first given on line {lines[(*path, key)]})",
                    line=key_node.start_mark.line + 1,
                    path=(*path, key),
                )
            lines[(*path, key)] = key_node.start_mark.line + 1
            result[key] = _construct(loader, value_node, (*path, key), lines, file)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _construct(loader, item, (*path, i), lines, file) for i, item in enumerate(node.value)
        ]
    return loader.construct_object(node)
