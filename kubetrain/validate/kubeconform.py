"""kubeconform as a validation engine: ``kubetrain validate --engine kubeconform``.

kubetrain reads the files itself (duplicates, semantic checks, line numbers) and hands the schema
part to kubeconform, run once per Kubernetes version found in the files' headers (or given with
``--kubernetes-version``)::

    kubeconform -strict -summary -output json -verbose -kubernetes-version 1.33.0 \\
        -schema-location LOC... -schema-location default \\
        -schema-location <tmp>/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json FILE...

The user's ``--schema-location`` values come first, then kubeconform's ``default`` registry
(it downloads Kubernetes schemas, so it needs the network or a mirror given as a location), then
the JSON schemas of the kinds kubetrain emits beyond Kubernetes (PodGroups, Flux and Argo CD
objects, kubetrain's CRDs), written by :func:`write_kubeconform_schemas` in the layout of the
CRDs-catalog, which is also what ``kubetrain schema --out`` can write. kubeconform's JSON report
(``resources[]`` with ``filename``, ``kind``, ``name``, ``version``, ``status``, ``msg`` and
``validationErrors[]`` of ``{path, msg}``; ``summary``) is merged into kubetrain's report, so the
report formats and exit codes are the same for both engines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..kube import schemas as k8s
from ..models.base import resource_kinds
from ..models.errors import InputError, PathPart
from .engine import Finding, ObjectResult, Report, Status
from .schemas import DEFAULT_LOCATION, model_schema

__all__ = [
    "EXECUTABLE",
    "LAYOUT",
    "KubeconformResult",
    "build_command",
    "find_kubeconform",
    "kubeconform_schemas",
    "merge_results",
    "parse_output",
    "run_kubeconform",
    "standalone_schema",
    "write_kubeconform_schemas",
]

EXECUTABLE = "kubeconform"
#: File layout of generated schemas, in kubeconform's template syntax (the CRDs-catalog layout).
LAYOUT = "{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json"
_STATUS: dict[str, Status] = {
    "statusValid": "valid",
    "statusInvalid": "invalid",
    "statusError": "error",
    "statusSkipped": "skipped",
    # kubeconform before 0.4.8 wrote the statuses in capitals.
    "VALID": "valid",
    "INVALID": "invalid",
    "ERROR": "error",
    "SKIPPED": "skipped",
}


# --- schemas of kubetrain's own kinds ---------------------------------------------------------


def _local(value: Any) -> Any:
    """Refs into Kubernetes' shared definitions, made local to the schema."""
    if isinstance(value, dict):
        out = {k: _local(v) for k, v in value.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(f"{k8s.DEFINITIONS_URI}#"):
            out["$ref"] = ref.removeprefix(k8s.DEFINITIONS_URI)
        return out
    if isinstance(value, list):
        return [_local(v) for v in value]
    return value


def standalone_schema(api_version: str, kind: str, version: tuple[int, int]) -> dict[str, Any]:
    """The JSON schema of a kind kubetrain emits, with every Kubernetes definition it uses
    copied in, so a tool that only reads files (kubeconform) can use it offline."""
    schema = model_schema(api_version, kind)
    if schema is None:
        raise KeyError(f"{api_version} {kind} is not a kind kubetrain emits")
    wanted = k8s.definition_refs(schema, f"{k8s.DEFINITIONS_URI}#/$defs/")
    out = _local(schema)
    defs = dict(out.get("$defs", {}))
    defs.update(k8s.definition_closure(wanted, version))
    out["$defs"] = defs
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **out}


def schema_file(api_version: str, kind: str) -> str:
    """Where :data:`LAYOUT` puts the schema of a kind: ``kubeflow.org/tfjob_v1.json``."""
    group, _, version = api_version.rpartition("/")
    return f"{group or 'v1'}/{kind.lower()}_{version}.json"


@cache
def kubeconform_schemas(version: tuple[int, int]) -> dict[str, str]:
    """Relative path (:data:`LAYOUT`) -> JSON text, for every kind kubetrain emits beyond
    Kubernetes' own, against Kubernetes ``version``."""
    return {
        schema_file(api_version, kind): json.dumps(
            standalone_schema(api_version, kind, version), indent=2, sort_keys=True
        )
        + "\n"
        for api_version, kind in sorted(resource_kinds())
    }


def write_kubeconform_schemas(folder: Path, version: tuple[int, int]) -> str:
    """Write :func:`kubeconform_schemas` under ``folder``; returns the ``-schema-location``
    template that finds them."""
    for rel, text in kubeconform_schemas(version).items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return f"{folder.as_posix()}/{LAYOUT}"


# --- the command --------------------------------------------------------------------------------


def find_kubeconform() -> str:
    """The kubeconform executable on PATH; an input error (exit 2) saying how to get it."""
    found = shutil.which(EXECUTABLE)
    if found is None:
        raise InputError.single(
            "--engine",
            "kubeconform is not on PATH: install it (e.g. `go install "
            "github.com/yannh/kubeconform/cmd/kubeconform@latest`, or a release binary) "
            "or use --engine builtin",
        )
    return found


def build_command(
    files: Sequence[str],
    *,
    version: tuple[int, int],
    locations: Sequence[str] = (),
    kubetrain_location: str | None = None,
    ignore_missing_schemas: bool = False,
    executable: str = EXECUTABLE,
) -> list[str]:
    """The kubeconform command line for ``files`` (see the module docstring)."""
    cmd = [executable, "-strict", "-summary", "-output", "json", "-verbose"]
    cmd += ["-kubernetes-version", f"{version[0]}.{version[1]}.0"]
    ordered = list(dict.fromkeys(locations))
    if DEFAULT_LOCATION not in ordered:
        ordered.append(DEFAULT_LOCATION)
    if kubetrain_location:
        ordered.append(kubetrain_location)
    for location in ordered:
        cmd += ["-schema-location", location]
    if ignore_missing_schemas:
        cmd.append("-ignore-missing-schemas")
    return [*cmd, *files]


@dataclass(frozen=True)
class KubeconformResult:
    """One entry of kubeconform's ``resources`` list."""

    filename: str
    kind: str
    name: str
    version: str
    status: Status
    msg: str = ""
    errors: tuple[tuple[str, str], ...] = field(default_factory=tuple)


def parse_output(text: str) -> list[KubeconformResult]:
    """kubeconform's ``-output json`` report; ``ValueError`` if it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"kubeconform did not print JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("resources"), list):
        raise ValueError("kubeconform's JSON has no resources list")
    out = []
    for entry in data["resources"]:
        if not isinstance(entry, dict):
            raise ValueError(f"unexpected resource entry {entry!r}")
        status = _STATUS.get(str(entry.get("status")))
        if status is None:
            raise ValueError(f"unknown kubeconform status {entry.get('status')!r}")
        errors = tuple(
            (str(e.get("path", "")), str(e.get("msg", "")))
            for e in entry.get("validationErrors") or ()
            if isinstance(e, dict)
        )
        out.append(
            KubeconformResult(
                filename=str(entry.get("filename", "")),
                kind=str(entry.get("kind", "")),
                name=str(entry.get("name", "")),
                version=str(entry.get("version", "")),
                status=status,
                msg=str(entry.get("msg", "")),
                errors=errors,
            )
        )
    return out


def _pointer(path: str) -> tuple[PathPart, ...]:
    """``/spec/containers/0/image`` -> ``("spec", "containers", 0, "image")``."""
    out: list[PathPart] = []
    for raw in path.split("/")[1:] if path.startswith("/") else ([path] if path else []):
        part = raw.replace("~1", "/").replace("~0", "~")
        out.append(int(part) if part.isdigit() else part)
    return tuple(out)


def _findings(result: KubeconformResult) -> list[Finding]:
    if result.errors:
        return [Finding("kubeconform", _pointer(path), msg) for path, msg in result.errors]
    return [Finding("kubeconform", (), result.msg or f"kubeconform: {result.status}")]


def merge_results(report: Report, results: Iterable[KubeconformResult]) -> None:
    """Fold kubeconform's verdicts into ``report``: each result lands on the object of the same
    file, kind, name and apiVersion (in document order); others are added as they are."""
    pending: dict[tuple[str, str, str, str], list[ObjectResult]] = {}
    for r in report.results:
        pending.setdefault((r.file, r.kind, r.name, r.api_version), []).append(r)
    for kc in results:
        matches = pending.get((kc.filename, kc.kind, kc.name, kc.version))
        target = matches.pop(0) if matches else None
        if target is None:
            if kc.status == "valid":
                continue
            target = ObjectResult(kc.filename, 0, kc.version, kc.kind, "", kc.name, "valid")
            report.results.append(target)
        if kc.status in ("invalid", "error"):
            target.findings.extend(_findings(kc))
            if target.status != "error":
                target.status = kc.status
        elif kc.status == "skipped" and target.status == "valid" and not target.findings:
            target.status = "skipped"


def run_kubeconform(
    files: Sequence[str],
    *,
    version: tuple[int, int],
    locations: Sequence[str] = (),
    ignore_missing_schemas: bool = False,
    executable: str | None = None,
    env: Mapping[str, str] | None = None,
) -> list[KubeconformResult]:
    """Run kubeconform over ``files`` and return its verdicts. A kubeconform that fails without
    a report gives one ``error`` result naming the exit code and what it printed."""
    exe = executable or find_kubeconform()
    with tempfile.TemporaryDirectory(prefix="kubetrain-schemas-") as tmp:
        kubetrain_location = write_kubeconform_schemas(Path(tmp), version)
        cmd = build_command(
            files,
            version=version,
            locations=locations,
            kubetrain_location=kubetrain_location,
            ignore_missing_schemas=ignore_missing_schemas,
            executable=exe,
        )
        done = subprocess.run(
            cmd, capture_output=True, text=True, env=dict(env or os.environ), check=False
        )
    try:
        return parse_output(done.stdout)
    except ValueError as exc:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [str(exc)]
        return [
            KubeconformResult(
                files[0] if len(files) == 1 else "kubeconform",
                "",
                "",
                "",
                "error",
                f"kubeconform failed (exit {done.returncode}): {detail[0]}",
            )
        ]
