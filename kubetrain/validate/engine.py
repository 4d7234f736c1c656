"""Validation of Kubernetes objects: strict schemas, duplicates, and a report per object.

Objects come either from memory (``render`` validates before it writes) or from YAML files and
folders (``kubetrain validate``). Every problem is a :class:`Finding` with a rule id, the object
and the field path, so the report formats can say exactly what is wrong and where.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from ..spec import k8s
from ..spec.errors import InputError, PathPart
from ..spec.source import display_path, load_all, parse_documents
from .schemas import SchemaCatalog, check_location

__all__ = [
    "DEFAULT_VERSION",
    "Finding",
    "ObjectResult",
    "Report",
    "Validator",
    "read_objects",
    "version_from_header",
]

#: Kubernetes version used when neither the command line nor a rendered file's header gives one.
DEFAULT_VERSION = (1, 33)
_HEADER_VERSION = re.compile(r"^# kubernetes-version: (\d+\.\d+)\s*$", re.MULTILINE)
_KUSTOMIZE_FILES = {"kustomization.yaml", "kustomization.yml", "Kustomization"}
_YAML_SUFFIXES = {".yaml", ".yml", ".json"}

Status = Literal["valid", "invalid", "error", "skipped"]


@dataclass(frozen=True)
class Finding:
    """One problem with one object."""

    rule: str
    path: tuple[PathPart, ...]
    message: str
    line: int | None = None


@dataclass
class ObjectResult:
    """The verdict on one object (or on one document that is not an object)."""

    file: str
    document: int
    api_version: str
    kind: str
    namespace: str
    name: str
    status: Status
    findings: list[Finding] = field(default_factory=list)
    line: int | None = None
    source: str = ""

    @property
    def title(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}".strip()


@dataclass
class Report:
    results: list[ObjectResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.status in ("valid", "skipped") for r in self.results)

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("valid", "invalid", "error", "skipped"), 0)
        for r in self.results:
            counts[r.status] += 1
        return counts


@dataclass(frozen=True)
class Located:
    """An object to validate and where it is."""

    obj: Any
    file: str
    document: int = 0
    line: int | None = None
    source: str = ""


class Validator:
    """Validates objects against one Kubernetes version's schemas plus extra locations."""

    def __init__(
        self,
        version: tuple[int, int] = DEFAULT_VERSION,
        schema_locations: Sequence[str] = (),
        *,
        ignore_missing_schemas: bool = False,
    ) -> None:
        problems = [m for loc in schema_locations if (m := check_location(loc))]
        if problems:
            raise InputError.single("--schema-location", "; ".join(problems))
        self.version = version
        self.locations = list(schema_locations)
        self.ignore_missing = ignore_missing_schemas
        self._catalogs: dict[tuple[int, int], SchemaCatalog] = {}

    def catalog(self, version: tuple[int, int]) -> SchemaCatalog:
        found = self._catalogs.get(version)
        if found is None:
            found = self._catalogs[version] = SchemaCatalog(version, self.locations)
        return found

    def check(self, item: Located, version: tuple[int, int] | None = None) -> ObjectResult:
        """Validate one object."""
        obj = item.obj
        result = ObjectResult(
            item.file, item.document, "", "", "", "", "valid", line=item.line, source=item.source
        )
        if not isinstance(obj, dict):
            result.status = "error"
            result.findings.append(
                Finding("structure", (), "a document must be a mapping (a Kubernetes object)")
            )
            return result
        api_version, kind, meta = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata")
        result.api_version = api_version if isinstance(api_version, str) else ""
        result.kind = kind if isinstance(kind, str) else ""
        if isinstance(meta, dict):
            result.name = str(meta.get("name") or meta.get("generateName") or "")
            result.namespace = str(meta.get("namespace") or "")
        for key, value in (("apiVersion", api_version), ("kind", kind)):
            if not isinstance(value, str) or not value:
                result.status = "error"
                result.findings.append(Finding("structure", (key,), f"{key} is missing"))
        if result.status == "error":
            return result
        try:
            validator, _ = self.catalog(version or self.version).lookup(
                result.api_version, result.kind
            )
        except OSError as exc:
            result.status = "error"
            result.findings.append(Finding("schema-location", (), str(exc)))
            return result
        if validator is None:
            if self.ignore_missing:
                result.status = "skipped"
            else:
                result.status = "error"
                result.findings.append(
                    Finding(
                        "schema-missing",
                        (),
                        f"no schema for {result.api_version} {result.kind} "
                        "(give --schema-location, or --ignore-missing-schemas)",
                    )
                )
            return result
        for issue in k8s.schema_issues(validator, obj):
            result.status = "invalid"
            result.findings.append(Finding("schema", issue.path, issue.message))
        return result

    def validate(
        self, items: Iterable[Located], versions: dict[str, tuple[int, int]] | None = None
    ) -> Report:
        """Validate every object, then flag objects defined twice."""
        report = Report()
        for item in items:
            version = (versions or {}).get(item.file)
            report.results.append(self.check(item, version))
        _flag_duplicates(report)
        return report


def _flag_duplicates(report: Report) -> None:
    first: dict[tuple[str, str, str, str], ObjectResult] = {}
    for r in report.results:
        if not r.kind or not r.name:
            continue
        key = (r.api_version.rpartition("/")[0], r.kind, r.namespace, r.name)
        if key in first:
            other = first[key]
            r.status = "invalid"
            r.findings.append(
                Finding(
                    "duplicate",
                    ("metadata", "name"),
                    f"{r.title} is also defined in {other.file}"
                    + (f" (document {other.document + 1})" if other.document else ""),
                )
            )
        else:
            first[key] = r


# --- reading files ---------------------------------------------------------------------------


def version_from_header(text: str) -> tuple[int, int] | None:
    """The Kubernetes version a rendered file declares in its header comment."""
    m = _HEADER_VERSION.search(text, 0, 512)
    if not m:
        return None
    major, minor = m[1].split(".")
    return int(major), int(minor)


def _files(paths: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(path on disk, path as shown) of every YAML file under ``paths``, sorted per folder."""
    for raw in paths:
        if os.path.isdir(raw):
            shown_root = display_path(raw)
            for root, dirs, files in os.walk(raw):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                shown = os.path.normpath(os.path.join(shown_root, os.path.relpath(root, raw)))
                prefix = "" if shown == "." else shown + os.sep
                for name in sorted(files):
                    if not name.startswith(".") and os.path.splitext(name)[1] in _YAML_SUFFIXES:
                        yield os.path.join(root, name), prefix + name
        elif os.path.isfile(raw):
            yield raw, display_path(raw)
        else:
            raise InputError.single(display_path(raw), "no such file or folder")


def read_objects(
    paths: Sequence[str],
) -> tuple[list[Located], list[ObjectResult], dict[str, tuple[int, int]], dict[str, str]]:
    """Every object in ``paths``; results for documents that cannot be objects; the version each
    rendered file declares; and the text of each file (for line numbers on demand)."""
    items: list[Located] = []
    early: list[ObjectResult] = []
    versions: dict[str, tuple[int, int]] = {}
    texts: dict[str, str] = {}
    for path, shown in _files(paths):
        if os.path.basename(path) in _KUSTOMIZE_FILES:
            early.append(
                ObjectResult(
                    shown, 0, "kustomize.config.k8s.io/v1beta1", "Kustomization", "", "", "skipped"
                )
            )
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            docs = load_all(text)
        except (OSError, UnicodeDecodeError) as exc:
            early.append(
                ObjectResult(
                    shown, 0, "", "", "", "", "error", [Finding("yaml", (), f"cannot read: {exc}")]
                )
            )
            continue
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            early.append(
                ObjectResult(
                    shown,
                    0,
                    "",
                    "",
                    "",
                    "",
                    "error",
                    [
                        Finding(
                            "yaml",
                            (),
                            f"invalid YAML: {getattr(exc, 'problem', exc)}",
                            mark.line + 1 if mark else None,
                        )
                    ],
                )
            )
            continue
        texts[shown] = text
        if (version := version_from_header(text)) is not None:
            versions[shown] = version
        items.extend(Located(doc, shown, index) for index, doc in enumerate(docs))
    return items, early, versions, texts


def add_lines(report: Report, texts: dict[str, str]) -> None:
    """Fill in line numbers of findings in files (parsed again only for files with findings)."""
    by_file: dict[str, list[ObjectResult]] = {}
    for r in report.results:
        if r.findings and r.file in texts:
            by_file.setdefault(r.file, []).append(r)
    for file, results in by_file.items():
        try:
            docs = parse_documents(texts[file], file)
        except InputError:
            continue
        for r in results:
            if r.document < len(docs):
                doc = docs[r.document]
                r.line = doc.line_of(())
                r.findings = [
                    Finding(f.rule, f.path, f.message, f.line or doc.line_of(f.path))
                    for f in r.findings
                ]
