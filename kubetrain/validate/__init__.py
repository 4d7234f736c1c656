"""Validation of Kubernetes objects: strict JSON schemas (built-in, generated, or from schema
locations in kubeconform's syntax; or kubeconform itself), duplicates, the semantic checks that
schemas cannot make, and reports."""

from .engine import (
    DEFAULT_VERSION,
    STDIN,
    Finding,
    Located,
    ObjectResult,
    Report,
    Validator,
    add_lines,
    flag_shared_duplicates,
    read_objects,
)
from .report import Format, finding_line, format_report, warning_lines
from .semantic import (
    RULES,
    WARNING_RULES,
    CheckSettings,
    add_findings,
    check_objects,
    semantic_findings,
)

__all__ = [
    "DEFAULT_VERSION",
    "RULES",
    "STDIN",
    "WARNING_RULES",
    "CheckSettings",
    "Finding",
    "Format",
    "Located",
    "ObjectResult",
    "Report",
    "Validator",
    "add_findings",
    "add_lines",
    "check_objects",
    "finding_line",
    "flag_shared_duplicates",
    "format_report",
    "read_objects",
    "semantic_findings",
    "warning_lines",
]
