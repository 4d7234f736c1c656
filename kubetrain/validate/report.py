"""Validation reports as text (for people), JSON (kubeconform's shape) and JUnit XML (for CI)."""

from __future__ import annotations

import json
from typing import Literal
from xml.etree import ElementTree as ET

from ..models.errors import format_path, printable
from .engine import Finding, ObjectResult, Report

__all__ = ["Format", "finding_line", "format_report", "warning_lines"]

Format = Literal["text", "json", "junit"]


def _where(result: ObjectResult, finding: Finding) -> str:
    line = finding.line or result.line
    file = finding.file or result.file
    return printable(f"{file}:{line}" if line else file)


def _path(finding: Finding) -> str:
    return format_path(finding.path) if finding.path else "(object)"


def finding_line(result: ObjectResult, finding: Finding) -> str:
    """``FILE:LINE: path: [warning: ]message (rule) [Kind namespace/name]``, every part from
    the input escaped (:func:`~kubetrain.models.errors.printable`)."""
    subject = f" [{printable(result.title)}]" if result.kind else ""
    severity = "warning: " if finding.severity == "warning" else ""
    rule = finding.who if finding.rule == "webhook" else finding.rule
    message = f"{severity}{printable(finding.message)} ({rule}){subject}"
    if finding.rule in _TEXT_RULES and not finding.path:
        # About the file's text at that line, not a field of an object: FILE:LINE: message.
        return f"{_where(result, finding)}: {message}"
    return f"{_where(result, finding)}: {_path(finding)}: {message}"


#: Findings about a file's text (a YAML error, a control character): they have a line, and no
#: field of an object to name.
_TEXT_RULES = frozenset({"yaml"})


#: Objects a grouped line names before it counts the rest.
_NAMED = 3


def grouped_lines(report: Report, severity: str | None = None) -> list[str]:
    """One line per finding, except that findings at one place with one message (a job's field
    that every object built from the job repeats) are one line naming how many objects have it:
    ``... (rule) [3 objects: Job ml/a-0, Job ml/a-1, Job ml/a-2]``."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for r in report.results:
        for f in r.findings:
            if severity is not None and f.severity != severity:
                continue
            text = finding_line(r, f)
            subject = f" [{printable(r.title)}]" if r.kind else ""
            head = text.removesuffix(subject) if subject else text
            groups.setdefault((head, _where(r, f), _path(f), f.rule), []).append(
                printable(r.title) if r.kind else ""
            )
    lines = []
    for (head, *_), subjects in groups.items():
        named = list(dict.fromkeys(s for s in subjects if s))
        if len(named) <= 1:
            lines.append(head + (f" [{named[0]}]" if named else ""))
            continue
        shown = ", ".join(named[:_NAMED])
        more = f" and {len(named) - _NAMED} more" if len(named) > _NAMED else ""
        lines.append(f"{head} [{len(named)} objects: {shown}{more}]")
    return lines


def warning_lines(report: Report) -> list[str]:
    """Every warning of ``report`` (render prints them on stderr), grouped as
    :func:`grouped_lines` does."""
    return grouped_lines(report, "warning")


def _text(report: Report) -> str:
    lines = grouped_lines(report)
    c = report.counts()
    total = sum(c.values())
    warnings = report.warnings
    lines.append(
        f"Summary: {total} object{'s' if total != 1 else ''}: {c['valid']} valid, "
        f"{c['invalid']} invalid, {c['error']} errors, {c['skipped']} skipped"
        + (f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else "")
    )
    return "\n".join(lines) + "\n"


_STATUS = {
    "valid": "statusValid",
    "invalid": "statusInvalid",
    "error": "statusError",
    "skipped": "statusSkipped",
}


def _json(report: Report) -> str:
    resources = []
    for r in report.results:
        entry: dict[str, object] = {
            "filename": r.file,
            "kind": r.kind,
            "name": r.name,
            "namespace": r.namespace,
            "version": r.api_version,
            "status": _STATUS[r.status],
            "msg": "; ".join(f.message for f in r.findings if f.severity == "error"),
        }
        for key, severity in (("validationErrors", "error"), ("warnings", "warning")):
            found = [
                {
                    "rule": f.rule,
                    "origin": f.who,
                    "path": format_path(f.path) if f.path else "",
                    "msg": f.message,
                    "line": f.line,
                }
                for f in r.findings
                if f.severity == severity
            ]
            if found:
                entry[key] = found
        resources.append(entry)
    summary = {**report.counts(), "warnings": report.warnings}
    return json.dumps({"resources": resources, "summary": summary}, indent=2) + "\n"


def _junit(report: Report) -> str:
    c = report.counts()
    suites = ET.Element("testsuites", name="kubetrain validate")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="kubetrain validate",
        tests=str(len(report.results)),
        failures=str(c["invalid"]),
        errors=str(c["error"]),
        skipped=str(c["skipped"]),
    )
    # XML 1.0 cannot hold most control characters at all: every text from the input (file
    # names, kinds, names, messages quoting values) is escaped first.
    for r in report.results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=printable(r.file),
            name=printable(r.title) or f"document {r.document + 1}",
        )
        if r.status == "skipped":
            ET.SubElement(case, "skipped")
        elif r.status in ("invalid", "error"):
            tag = "failure" if r.status == "invalid" else "error"
            errors = [f for f in r.findings if f.severity == "error"] or r.findings
            body = "\n".join(
                f"{_where(r, f)}: {_path(f)}: {printable(f.message)} ({f.rule})" for f in r.findings
            )
            element = ET.SubElement(
                case, tag, message=printable(errors[0].message), type=errors[0].rule
            )
            element.text = body
        if r.status == "valid" and r.findings:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join(finding_line(r, f) for f in r.findings)
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def format_report(report: Report, fmt: Format = "text") -> str:
    return {"text": _text, "json": _json, "junit": _junit}[fmt](report)
